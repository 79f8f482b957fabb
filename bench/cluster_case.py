"""The `cluster` bench case (issue 12): the cost of the shared store.

- Claims per second: one node on PostgreSQL with `--max-concurrent 1` is given 1,000 jobs (`"dedupe": false`)
  whose origin answers slowly (nginx's `/trickle/` at 4 KiB/s per connection), so none ends meanwhile; once it
  runs one, `PATCH /api/v1/settings` raises its `maxConcurrent` to 1,000, and the figure is 999 / (time from the PATCH
  to `ferry_node_leases` reaching 1,000 on `/metrics`, read every 10 ms). It is Ferry's own claim path:
  `FOR UPDATE SKIP LOCKED` in batches of the free slots, the rows handed to the supervisor and the engine.
- The small-files batch (as the `small-files` case: N × 64 KiB, until every `finished` event) on one node with the
  embedded SQLite store against three nodes on PostgreSQL and SeaweedFS (every file stored as an object before it
  is reported finished), the batch split round-robin over the three; interleaved, a fresh database and object
  prefix per run, ratios paired per round.

PostgreSQL and SeaweedFS come from the cluster suite's fixtures (Tests/suites/cluster_suite.py), on 127.0.0.1, in
temp directories, stopped by pid when the case ends.

Where the three nodes' time goes (not set by default: both slow the batch they watch):
- `BENCH_PG_STATEMENTS=1` loads `pg_stat_statements` and writes each three-node batch's statements (calls per file,
  rows, server time) to `bench/out/logs/cluster-statements-N.txt`;
- `BENCH_PERF=1` runs `perf record -g` on the three nodes during each batch, into `bench/out/logs/cluster-perf-N-I.data`,
  and on the SQLite node, into `cluster-perf-sqlite-N.data`.
"""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests", "suites"))
import cluster_suite as C  # noqa: E402
import suitelib as S  # noqa: E402


def metric(ferry, name):
    """One unlabelled value from the node's /metrics, or None."""
    status, text = ferry.call("GET", "/metrics", timeout=10)
    if status != 200 or not isinstance(text, str):
        return None
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def run(b, fb):
    n = b.scale["small_files"]
    c = fb.Case(b, "cluster", f"three nodes on PostgreSQL + SeaweedFS: {n:,} × 64 KiB, and claims",
                "a ratio to see the shared store's cost (no target)", cpu_label="CPU ms/file")
    d = os.path.join(b.www, "small")
    if not os.path.isdir(d):
        os.makedirs(d)
        subprocess.run(["sh", "-c", f'head -c {n * 64 * 1024} /dev/urandom | split -b 65536 -a 5 -d - "$1/f"', "sh",
                        d], check=True, timeout=120)
    names = sorted(os.listdir(d))[:n]
    urls = [f"{b.origin}/small/{x}" for x in names]
    os.environ["AWS_ACCESS_KEY_ID"] = C.ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = C.SECRET_KEY
    per_run = 180
    try:
        statements = os.environ.get("BENCH_PG_STATEMENTS") == "1"
        pg = C.Postgres(settings=["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.max=2000"]
                        if statements else ()).start()
        seaweed = C.Seaweed(S.temp_dir("ferry-bench-weed")).start()
        fb.log(f"cluster: postgres :{pg.port}, seaweedfs S3 :{seaweed.port}")
        databases = [0]

        def psql(database, sql):
            return subprocess.run(pg.prefix + [os.path.join(pg.bin, "psql"), "-q", "-h", "127.0.0.1", "-p",
                                               str(pg.port), "-U", "ferry", "-d", database, "-At", "-F", "\t",
                                               "-c", sql],
                                  check=True, capture_output=True, timeout=60, text=True).stdout

        def fresh_store():
            databases[0] += 1
            name = f"bench{databases[0]}"
            psql("postgres", f"CREATE DATABASE {name}")
            if statements:
                psql(name, "CREATE EXTENSION pg_stat_statements")
            store = f"postgres://ferry@127.0.0.1:{pg.port}/{name}"
            objects = f"s3://{C.BUCKET}/{name}?endpoint=http://127.0.0.1:{seaweed.port}&region={C.REGION}"
            return store, objects

        def start_nodes(count, max_concurrent):
            store, objects = fresh_store()
            nodes = []
            for i in range(count):
                b.ferry_count += 1
                spool = os.path.join(b.work, f"cluster-node-{i}")
                if os.path.exists(spool):
                    subprocess.run(["rm", "-rf", spool], check=True)
                node = fb.Ferry(b, f"cluster-{i}", spool, max_concurrent,
                                ["--store", store, "--object-store", objects, "--node-id", f"bench-{i}",
                                 "--lease", "10s"])
                node.start(timeout=60)
                nodes.append(node)
            return nodes

        def stop_nodes(nodes):
            for node in nodes:
                node.stop()

        def watch(nodes):
            """The diagnostics asked for (module doc) while a three-node batch runs; returns what ends them."""
            cluster = len(nodes) == 3
            name = f"bench{databases[0]}"
            statements_now = statements and cluster
            if statements_now:
                psql(name, "SELECT pg_stat_statements_reset()")
            perfs = []
            if os.environ.get("BENCH_PERF") == "1":
                for i, node in enumerate(nodes):
                    which = f"{databases[0]}-{i}" if cluster else f"sqlite-{databases[0]}"
                    out = os.path.join(b.out, "logs", f"cluster-perf-{which}.data")
                    perfs.append(subprocess.Popen(["perf", "record", "-g", "-q", "-o", out, "-p", str(node.pid)],
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

            def end():
                for perf in perfs:
                    S.stop_pid(perf, signal.SIGINT, 30)
                if statements_now:
                    rows = psql(name, "SELECT s.calls, s.rows, round(s.total_exec_time::numeric, 1), "
                                      "left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) FROM pg_stat_statements s "
                                      f"JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '{name}' "
                                      "ORDER BY s.calls DESC")
                    lines, total = [], 0
                    for row in rows.splitlines():
                        calls, nrows, ms, query = row.split("\t", 3)
                        total += int(calls)
                        lines.append(f"{int(calls) / n:8.2f} {int(nrows) / n:8.2f} {float(ms) / n:7.3f}  {query}")
                    path = os.path.join(b.out, "logs", f"cluster-statements-{databases[0]}.txt")
                    with open(path, "w") as f:
                        f.write(f"{n} files, {total / n:.2f} statements per file\n"
                                "calls/file rows/file server-ms/file  statement\n" + "\n".join(lines) + "\n")
                    fb.log(f"cluster: {total / n:.2f} statements per file ({path})")
            return end

        def batch(nodes, label):
            counter = fb.EventCounter(nodes[0].port, n, time.monotonic() + per_run)
            counter.start()
            counter.ready.wait(10)
            if counter.error:
                raise RuntimeError(counter.error)
            end_watch = watch(nodes)
            try:
                cpus0 = [fb.proc_cpu(x.pid) for x in nodes]
                cpu0 = sum(cpus0)
                t0 = time.perf_counter()
                for i, node in enumerate(nodes):
                    status, items = node.call("POST", "/api/v1/jobs", [{"url": u} for u in urls[i::len(nodes)]],
                                              timeout=per_run)
                    if status != 200 or any("id" not in x for x in items):
                        raise RuntimeError(f"{label}: batch POST answered {status}: {str(items)[:200]}")
                counter.done.wait(max(1, per_run - (time.perf_counter() - t0)))
                if counter.error:
                    raise RuntimeError(counter.error)
                if counter.done_at is None:
                    raise fb.CaseTimeout(f"{label}: only {len(counter.finished)} of {n} finished within {per_run} s")
                if counter.failed:
                    raise RuntimeError(f"{label}: {len(counter.failed)} jobs failed, e.g. "
                                       f"{next(iter(counter.failed.values()))}")
                wall = counter.done_at - t0
                cpu = sum(fb.proc_cpu(x.pid) for x in nodes) - cpu0
                if len(nodes) > 1:
                    fb.log(f"{label}: CPU ms/file by node: " +
                           ", ".join(f"{(fb.proc_cpu(x.pid) - c0) * 1000 / n:.2f}" for x, c0 in zip(nodes, cpus0)))
                return dict(value=n / wall, cpu_per=cpu * 1000 / n, wall=wall)
            finally:
                end_watch()

        def one_node():
            ferry = b.start_ferry("cluster-sqlite", max_concurrent=16)
            try:
                return batch([ferry], "one node, SQLite")
            finally:
                b.stop_ferry()

        def three_nodes():
            nodes = start_nodes(3, 16)
            try:
                return batch(nodes, "three nodes")
            finally:
                stop_nodes(nodes)

        def claims():
            count = min(n, 1000)
            nodes = start_nodes(1, 1)
            node = nodes[0]
            try:
                items = [{"url": f"{b.origin}/trickle/small/{names[0]}", "dedupe": False}] * count
                status, answer = node.call("POST", "/api/v1/jobs", items, timeout=per_run)
                if status != 200:
                    raise RuntimeError(f"claims: batch POST answered {status}: {str(answer)[:200]}")
                if not S.wait_until(lambda: metric(node, "ferry_node_leases") == 1, 10, interval=0.05):
                    raise RuntimeError("claims: the node did not claim its one slot")
                t0 = time.perf_counter()
                status, answer = node.call("PATCH", "/api/v1/settings", {"maxConcurrent": count})
                if status != 200:
                    raise RuntimeError(f"claims: settings PATCH answered {status}: {str(answer)[:200]}")
                deadline = t0 + 60
                while time.perf_counter() < deadline:
                    if (metric(node, "ferry_node_leases") or 0) >= count:
                        return dict(value=(count - 1) / (time.perf_counter() - t0))
                    time.sleep(0.01)
                raise fb.CaseTimeout(f"claims: {metric(node, 'ferry_node_leases')} of {count} claimed within 60 s")
            finally:
                stop_nodes(nodes)

        s1 = c.tool("one node, SQLite, max-concurrent 16 (until all `finished` events)", "files/s")
        s3 = c.tool("three nodes, PostgreSQL + SeaweedFS, max-concurrent 16 each", "files/s")
        sc = c.tool("claims by one node from PostgreSQL (999 jobs at once)", "jobs/s")
        c.interleave([(s1, one_node), (s3, three_nodes), (sc, claims)], b.runs, budget=b.budget("cluster"),
                     between=b.sync)
        r, _ = fb.paired_ratio(s3, s1)
        if fb.med(s3.values) is not None:
            c.measured = (f"three nodes {fb.fmt(fb.med(s3.values), 0)} files/s ({fb.span(s3.values, 0)}) = "
                          f"{fb.fmt(r, 2)}× one node on SQLite; claims {fb.fmt(fb.med(sc.values), 0)} jobs/s "
                          f"({fb.span(sc.values, 0)})")
            c.verdict = "INFO"
    finally:
        S.CLEANUP.run()
    return c
