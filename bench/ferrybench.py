#!/usr/bin/env python3
"""Ferry benchmark driver. Started by bench/run.sh, which owns the nginx origin and the temp dir.

Each case starts its own Ferry (fresh spool), runs Ferry and its peers interleaved (a warm-up round,
then RUNS rounds of A B C ...), and records medians with min-max. Ratios are taken between tools of
the same round (paired), so machine-wide noise hits both sides. Every loop and process is bounded
in time; a case that overruns its budget is reported as TIMEOUT and the suite goes on.
"""
import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import cluster_case
import fetch_case
import aria2_case

CLK = os.sysconf("SC_CLK_TCK")
MiB = 1024 * 1024
GiB = 1024 * MiB

SCALES = {
    "full": dict(big=2 * GiB, seg=200_000_000, small_files=2000, wrk_seconds=10, sse_subscribers=10000,
                 sse_markers=10, sse_job_size=128 * MiB, store_jobs=100_000, store_keys=1000, runs=5),
    "small": dict(big=256 * MiB, seg=40_000_000, small_files=500, wrk_seconds=2, sse_subscribers=1000,
                  sse_markers=4, sse_job_size=32 * MiB, store_jobs=5000, store_keys=50, runs=3),
}
ALL_CASES = ["download", "upload", "segmented", "mirrors", "small-files", "api", "serve", "sse", "store", "cluster", "fetch",
             "aria2-rpc"]


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


class CaseTimeout(Exception):
    pass


class Interrupted(BaseException):
    pass


# --- processes ------------------------------------------------------------------------------------

def proc_cpu(pid):
    """User + system CPU seconds of a process (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def proc_status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def reset_peak_rss(pid):
    """Resets VmHWM (Linux >= 4.0) so that the next reading is the peak of what follows."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        out = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as f:
                        data = f.read()
                    if int(data[data.rindex(")") + 2:].split()[1]) == pid:
                        out.append(int(name))
                except (OSError, ValueError):
                    pass
        return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def parse_time_v(path):
    """User+system seconds and max RSS (KiB) from `/usr/bin/time -v -o path`."""
    user = system = 0.0
    rss = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("User time (seconds):"):
                user = float(line.split(":")[1])
            elif line.startswith("System time (seconds):"):
                system = float(line.split(":")[1])
            elif line.startswith("Maximum resident set size (kbytes):"):
                rss = int(line.split(":")[1])
    return user + system, rss


class Bench:
    def __init__(self, args):
        self.args = args
        self.work = args.work
        self.out = args.out
        self.www = os.path.join(self.work, "www")
        self.scratch = os.path.join(self.work, "scratch")
        os.makedirs(self.scratch, exist_ok=True)
        self.scale_name = args.scale
        self.scale = SCALES[args.scale]
        self.runs = int(os.environ.get("RUNS") or self.scale["runs"])
        self.origin = f"http://127.0.0.1:{args.nginx_port}"
        self.nginx_pid = args.nginx_pid
        self.ferry = None
        self.sse_proc = None
        self.results = []   # one dict per case
        self.notes = []
        self.files = {}
        self.ferry_count = 0

    # --- data --------------------------------------------------------------------------------------
    def make_file(self, name, size):
        """Random bytes via head -c /dev/urandom; returns the SHA-256 hex (computed once)."""
        if name in self.files:
            return self.files[name]
        path = os.path.join(self.www, name)
        t = time.monotonic()
        subprocess.run(["sh", "-c", f'head -c {size} /dev/urandom > "$1"', "sh", path], check=True, timeout=300)
        digest = subprocess.run(["sha256sum", path], check=True, capture_output=True, text=True,
                                timeout=300).stdout.split()[0]
        log(f"generated {name} ({size} bytes) in {time.monotonic() - t:.1f} s")
        self.files[name] = digest
        return digest

    # --- timed peers -------------------------------------------------------------------------------
    def timed(self, argv, timeout):
        tv = os.path.join(self.scratch, "time-v.txt")
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", tv] + argv, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
        wall = time.perf_counter() - t0
        cpu, rss = parse_time_v(tv)
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-400:]}")
        return dict(wall=wall, cpu=cpu, rss_kb=rss, stdout=proc.stdout.decode(errors="replace"))

    def timed_download(self, argv, dst, size, timeout):
        """Runs a peer that downloads `size` bytes to `dst`: its throughput (MiB/s), CPU per GB and peak RSS; the file
        must have every byte, and is removed afterwards."""
        try:
            r = self.timed(argv, timeout)
            got = os.path.getsize(dst)
            if got != size:
                raise RuntimeError(f"{argv[0]} wrote {got} bytes")
            return dict(value=size / MiB / r["wall"], cpu_per=r["cpu"] / (size / 1e9), rss_kb=r["rss_kb"], wall=r["wall"])
        finally:
            if os.path.exists(dst):
                os.unlink(dst)

    # --- Ferry ---------------------------------------------------------------------------------------
    def start_ferry(self, label, max_concurrent=16, spool=None, fresh=True, extra=()):
        self.stop_ferry()
        self.ferry_count += 1
        spool = spool or os.path.join(self.work, "spool")
        if fresh and os.path.exists(spool):
            shutil.rmtree(spool)
        f = Ferry(self, label, spool, max_concurrent, extra)
        f.start()
        self.ferry = f
        return f

    def stop_ferry(self):
        if self.ferry:
            self.ferry.stop()
            self.ferry = None

    def nginx_workers(self):
        return children(self.nginx_pid)

    def nginx_cpu(self, workers):
        total = 0.0
        for w in workers:
            try:
                total += proc_cpu(w)
            except OSError:
                pass
        return total

    def sync(self):
        subprocess.run(["sync"], timeout=120)


class Ferry:
    def __init__(self, bench, label, spool, max_concurrent, extra=()):
        self.bench = bench
        self.label = label
        self.spool = spool
        self.max_concurrent = max_concurrent
        self.extra = list(extra)
        self.port = free_port()
        self.proc = None
        self.token = None  # sent as `Authorization: Bearer` by call() when set
        self.log_path = os.path.join(bench.out, "logs", f"ferry-{bench.ferry_count:02d}-{label}.log")

    def argv(self):
        return [self.bench.args.ferry_bin, "serve", "--host", "127.0.0.1", "--port", str(self.port),
                "--spool", self.spool, "--allow-private-networks", "--min-free-space", "0",
                "--max-concurrent", str(self.max_concurrent),
                # Every download goes to the one origin on 127.0.0.1: the per-host cap (default 6) must not be
                # what limits a case, so it is at least the case's concurrency.
                "--max-per-host", str(max(16, self.max_concurrent))] + self.extra

    def start(self, timeout=30):
        """Starts Ferry; returns seconds from exec to the first 200 on /readyz."""
        logf = open(self.log_path, "ab")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.argv(), stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=self.bench.work)
        logf.close()
        with open(os.path.join(self.bench.work, "ferry.pid"), "w") as f:
            f.write(str(self.proc.pid))
        deadline = t0 + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"ferry exited with {self.proc.returncode} at start (see {self.log_path})")
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/readyz")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    return time.perf_counter() - t0
            except OSError:
                pass
            time.sleep(0.005)
        raise RuntimeError(f"ferry not ready within {timeout} s (see {self.log_path})")

    def stop(self, timeout=15):
        """SIGTERM, then SIGKILL after `timeout`; returns seconds to exit."""
        if not self.proc or self.proc.poll() is not None:
            return 0.0
        t0 = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log(f"ferry ({self.proc.pid}) did not stop within {timeout} s: SIGKILL")
            self.proc.kill()
            self.proc.wait(5)
        try:
            os.unlink(os.path.join(self.bench.work, "ferry.pid"))
        except OSError:
            pass
        return time.perf_counter() - t0

    @property
    def pid(self):
        return self.proc.pid

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def call(self, method, path, body=None, timeout=60, token=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {}
        if token or self.token:
            headers["Authorization"] = f"Bearer {token or self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        raw = r.read()
        c.close()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return r.status, parsed

    def submit(self, body):
        status, job = self.call("POST", "/api/v1/jobs", body)
        if status not in (200, 201):
            raise RuntimeError(f"POST /api/v1/jobs answered {status}: {job}")
        return job

    def wait_finished(self, job_id, timeout, poll=0.01, trace=None):
        """Polls until finished. `trace` (a list) gets (seconds, state, bytesReceived) whenever they change."""
        t0 = time.perf_counter()
        deadline = t0 + timeout
        last = None
        while time.perf_counter() < deadline:
            status, job = self.call("GET", f"/api/v1/jobs/{job_id}")
            if status != 200:
                raise RuntimeError(f"GET job answered {status}: {job}")
            if trace is not None and (job["state"], job.get("bytesReceived")) != last:
                last = (job["state"], job.get("bytesReceived"))
                trace.append((round(time.perf_counter() - t0, 3), job["state"], job.get("bytesReceived")))
            if job["state"] == "finished":
                return job
            if job["state"] in ("failed", "cancelled"):
                raise RuntimeError(f"job {job['state']}: {job.get('error')}")
            time.sleep(poll)
        raise CaseTimeout(f"job {job_id} not finished within {timeout} s")

    def run_job(self, body, size, sha, timeout):
        """Submit → finished, with the server's CPU and peak RSS over that span. Deletes the job after."""
        pid = self.pid
        reset_peak_rss(pid)
        cpu0 = proc_cpu(pid)
        t0 = time.perf_counter()
        job = self.submit(body)
        t_submitted = time.perf_counter() - t0
        trace = []
        job = self.wait_finished(job["id"], timeout, trace=trace)
        wall = time.perf_counter() - t0
        cpu = proc_cpu(pid) - cpu0
        rss = proc_status_kb(pid, "VmHWM")
        # From the first poll that showed every byte to `finished`: digest, fsync, rename, commit (a lower
        # bound: the job's byte count is sampled, so on short runs this reads ~0).
        full = next((t for t, state, got in trace if got == size), None)
        finalize = None if full is None else max(0.0, trace[-1][0] - full)
        if job.get("bytesReceived") != size:
            raise RuntimeError(f"ferry got {job.get('bytesReceived')} bytes, expected {size}")
        # API.md: a job with no checksum asked is `finished` once whole and durable; its `sha256` may follow by a
        # moment (issue 26). Not part of `wall`: how long it followed is reported apart, with the CPU until then.
        digest_wait, cpu_digest = None, None
        if sha and job.get("sha256") is None:
            t1 = time.perf_counter()
            job = self.wait_digest(job["id"], timeout)
            digest_wait = time.perf_counter() - t1
            cpu_digest = proc_cpu(pid) - cpu0
        if sha and job.get("sha256") != sha:
            raise RuntimeError(f"ferry sha256 {job.get('sha256')} != {sha}")
        status, _ = self.call("DELETE", f"/api/v1/jobs/{job['id']}")
        if status != 204:
            raise RuntimeError(f"DELETE answered {status}")
        slow = wall > 0 and len(trace) > 2 and max(b - a for (a, _, _), (b, _, _) in zip(trace, trace[1:])) > 2.0
        if slow:
            log(f"progress stalled for over 2 s in this run; trace (s, state, bytes): {trace[:40]}")
        return dict(wall=wall, cpu=cpu, rss_kb=rss, job=job, submit=t_submitted, finalize=finalize,
                    digest_wait=digest_wait, cpu_digest=cpu_digest if cpu_digest is not None else cpu)

    def wait_digest(self, job_id, timeout, poll=0.01):
        """Polls a finished job until its `sha256` is known."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            status, job = self.call("GET", f"/api/v1/jobs/{job_id}")
            if status != 200:
                raise RuntimeError(f"GET job answered {status}: {job}")
            if job.get("sha256") is not None:
                return job
            time.sleep(poll)
        raise CaseTimeout(f"job {job_id} has no sha256 within {timeout} s of finished")


# --- statistics and the table ---------------------------------------------------------------------

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=None):
    if x is None:
        return "–"
    if digits is None:
        ax = abs(x)
        digits = 0 if ax >= 100 else 1 if ax >= 10 else 2 if ax >= 1 else 3
    return f"{x:,.{digits}f}"


def span(xs, digits=None):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    return f"{fmt(min(xs), digits)}–{fmt(max(xs), digits)}"


class Series:
    """Measurements of one tool in one case."""

    def __init__(self, tool, unit, higher_is_better=True):
        self.tool = tool
        self.unit = unit
        self.higher = higher_is_better
        self.values = []     # the case's main figure per run (throughput, files/s, req/s, ...)
        self.cpu_per = []    # CPU seconds per GB (or per unit of work), per run
        self.rss = []        # peak RSS MiB per run
        self.extra = {}      # name -> list
        self.errors = []

    def add(self, value, cpu_per=None, rss_kb=None, **extra):
        self.values.append(value)
        self.cpu_per.append(cpu_per)
        self.rss.append(None if rss_kb is None else rss_kb / 1024)
        for k, v in extra.items():
            self.extra.setdefault(k, []).append(v)


def paired_ratio(a, b):
    """Median and range of a[i]/b[i] over rounds where both exist."""
    rs = [x / y for x, y in zip(a.values, b.values) if x is not None and y]
    if not rs:
        return None, []
    return statistics.median(rs), rs


class Case:
    def __init__(self, bench, key, title, target, cpu_label="CPU s/GB"):
        self.bench = bench
        self.key = key
        self.title = title
        self.target = target
        self.cpu_label = cpu_label
        self.series = []
        self.measured = "–"
        self.verdict = "MISS"
        self.notes = []
        self.error = None
        self.details = {}

    def tool(self, name, unit, higher=True):
        s = Series(name, unit, higher)
        self.series.append(s)
        return s

    def interleave(self, tools, runs, budget, between=None):
        """tools: list of (Series, fn). fn() returns dict(value, cpu_per, rss_kb, ...). Warm-up round
        first (not recorded), then `runs` rounds A B C ... . Stops at `budget` seconds (then the rounds
        done so far count, and a note says so)."""
        t_end = time.monotonic() + budget
        for rnd in range(runs + 1):
            for series, fn in tools:
                if time.monotonic() > t_end:
                    self.notes.append(f"stopped after {rnd - 1} of {runs} rounds: case budget {budget:.0f} s")
                    return
                try:
                    r = fn()
                except (CaseTimeout, RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
                    log(f"{self.key}: {series.tool}: {e}")
                    series.errors.append(str(e))
                    if rnd > 0:
                        series.add(None)
                    continue
                finally:
                    if between:
                        between()
                if rnd == 0:
                    log(f"{self.key}: warm-up {series.tool}: {fmt(r['value'])} {series.unit}")
                    continue
                series.add(r["value"], r.get("cpu_per"), r.get("rss_kb"),
                           **{k: v for k, v in r.items() if k not in ("value", "cpu_per", "rss_kb")})
                log(f"{self.key}: run {rnd} {series.tool}: {fmt(r['value'])} {series.unit}")


# --- cases ----------------------------------------------------------------------------------------

def case_download(b):
    size = b.scale["big"]
    c = Case(b, "download", f"one {size / GiB:g} GiB file to disk",
             "≥ 1.1× `curl -o` + `sync`, ≥ 1.3× `aria2c`, CPU/GB ≤ 1.2× curl's, default ≥ 0.95× `connections: 1`")
    sha = b.make_file("big.bin", size)
    url = f"{b.origin}/big.bin"
    ferry = b.start_ferry("download", max_concurrent=4)
    dst = os.path.join(b.scratch, "big.out")
    gb = size / 1e9
    per_run = max(60, size / (20 * MiB))

    def fr(connections=None):
        def run():
            body = {"url": url, "dedupe": False}
            if connections:
                body["connections"] = connections
            if os.environ.get("DOWNLOAD_CHECKSUM") == "1":
                body["sha256"] = sha  # verified before `finished`: the digest on the critical path (issue 26)
            r = ferry.run_job(body, size, sha, per_run)
            return dict(value=size / MiB / r["wall"], cpu_per=r["cpu"] / gb, rss_kb=r["rss_kb"], wall=r["wall"],
                        finalize=r["finalize"], digest_wait=r["digest_wait"] or 0.0, cpu_digest_per=r["cpu_digest"] / gb)
        return run

    def peer(argv):
        return lambda: b.timed_download(argv, dst, size, per_run)

    s_f = c.tool("Ferry (submit→finished, fsync + SHA-256)", "MiB/s")
    s_c = c.tool("`curl -o`", "MiB/s")
    s_a = c.tool("`aria2c -x1`", "MiB/s")
    s_cs = c.tool("`curl -o` + `sync FILE` (durable, for reference)", "MiB/s")
    s_f1 = c.tool('Ferry, `"connections": 1` (the default must stay within 5% of it)', "MiB/s")
    c.interleave([
        (s_f, fr()),
        (s_f1, fr(1)),
        (s_c, peer(["curl", "-sS", "-o", dst, url])),
        (s_a, peer(["aria2c", "-q", "-x1", "--allow-overwrite=true", "--auto-file-renaming=false",
                    "--file-allocation=none", "-d", b.scratch, "-o", "big.out", url])),
        (s_cs, peer(["sh", "-c", 'curl -sS -o "$1" "$2" && sync "$1"', "sh", dst, url])),
    ], b.runs, budget=b.budget("download"), between=b.sync)
    lag = [x for x in s_f.extra.get("digest_wait", []) if x is not None]
    if lag:
        c.rows = getattr(c, "rows", []) + [("Ferry: seconds from `finished` to the `sha256` that follows it (issue 26), median",
                            f"{fmt(med(lag), 2)} s ({span(lag, 2)}); CPU/GB with the digest "
                            f"{fmt(med(s_f.extra.get('cpu_digest_per', [])), 2)} s")]
    fin = [x for x in s_f.extra.get("finalize", []) if x is not None]
    if fin:
        c.rows = getattr(c, "rows", []) + [("Ferry: seconds from the job showing every byte to `finished` (fsync, rename, commit), median",
                   f"{fmt(med(fin), 2)} s ({span(fin, 2)}) of {fmt(med(s_f.extra.get('wall', [])), 2)} s in all")]
    r, rs = paired_ratio(s_f, s_c)
    cpu_f, cpu_c = med(s_f.cpu_per), med(s_c.cpu_per)
    r_sync, _ = paired_ratio(s_f, s_cs)
    r_one, _ = paired_ratio(s_f, s_f1)
    r_aria, _ = paired_ratio(s_f, s_a)
    if r is not None:
        c.measured = (f"{r:.2f}× curl ({span(rs, 2)}); CPU/GB {fmt(cpu_f, 2)} vs {fmt(cpu_c, 2)} s"
                      + (f"; {r_sync:.2f}× curl+sync" if r_sync else "")
                      + (f"; {r_aria:.2f}× aria2c" if r_aria else "")
                      + (f"; default {r_one:.2f}× `connections: 1`" if r_one else ""))
        met = (r_sync is not None and r_sync >= 1.1 and r_aria is not None and r_aria >= 1.3
               and cpu_f is not None and cpu_c is not None and cpu_f <= 1.2 * cpu_c and r_one is not None and r_one >= 0.95)
        c.verdict = "PASS" if met else "MISS"
    return c


def case_segmented(b):
    size = b.scale["seg"]
    c = Case(b, "segmented", f"origin capped at 20 MiB/s per connection, {size / 1e6:g} MB, 16 connections",
             "16 connections ≥ 14× one connection")
    sha = b.make_file("seg.bin", size)
    url = f"{b.origin}/limited/seg.bin"
    ferry = b.start_ferry("segmented", max_concurrent=4)
    dst = os.path.join(b.scratch, "seg.out")
    gb = size / 1e9
    per_run = size / (20 * MiB) * 3 + 30

    def fr(connections):
        def run():
            body = {"url": url, "dedupe": False, "connections": connections}
            r = ferry.run_job(body, size, sha, per_run)
            return dict(value=size / MiB / r["wall"], cpu_per=r["cpu"] / gb, rss_kb=r["rss_kb"], wall=r["wall"])
        return run

    def aria():
        return b.timed_download(["aria2c", "-q", "-x16", "-s16", "-k1M", "--allow-overwrite=true", "--auto-file-renaming=false",
                                 "--file-allocation=none", "-d", b.scratch, "-o", "seg.out", url], dst, size, per_run)

    s16 = c.tool('Ferry, `"connections":16`', "MiB/s")
    sa = c.tool("`aria2c -x16 -s16 -k1M`", "MiB/s")
    s1 = c.tool('Ferry, `"connections":1`', "MiB/s")
    c.interleave([(s16, fr(16)), (sa, aria), (s1, fr(1))], b.runs, budget=b.budget("segmented"))
    r, rs = paired_ratio(s16, s1)
    ra, _ = paired_ratio(s16, sa)
    if r is not None:
        c.measured = f"{r:.2f}× one connection ({span(rs, 2)})" + (f"; {ra:.2f}× aria2c" if ra else "")
        c.verdict = "PASS" if r >= 14 else "MISS"
    return c


def case_mirrors(b):
    size = b.scale["seg"]
    c = Case(b, "mirrors", f"two sources capped at 20 MiB/s per connection, {size / 1e6:g} MB, one connection each",
             "url + one mirror ≥ 1.8× the url alone")
    sha = b.make_file("seg.bin", size)
    # Two URLs of the same file (same validators): nginx caps each connection, so a second source is a second lane.
    main, mirror = f"{b.origin}/limited/seg.bin?source=main", f"{b.origin}/limited/seg.bin?source=mirror"
    ferry = b.start_ferry("mirrors", max_concurrent=4)
    dst = os.path.join(b.scratch, "mirror.out")
    gb = size / 1e9
    per_run = size / (20 * MiB) * 3 + 30

    def fr(mirrors):
        def run():
            body = {"url": main, "dedupe": False, "connections": 1}
            if mirrors:
                body["mirrors"] = mirrors
            r = ferry.run_job(body, size, sha, per_run)
            return dict(value=size / MiB / r["wall"], cpu_per=r["cpu"] / gb, rss_kb=r["rss_kb"], wall=r["wall"])
        return run

    def aria():
        return b.timed_download(["aria2c", "-q", "-s2", "-x1", "--allow-overwrite=true", "--auto-file-renaming=false",
                                 "--file-allocation=none", "-d", b.scratch, "-o", "mirror.out", main, mirror], dst, size, per_run)

    s2 = c.tool("Ferry, `url` + one mirror", "MiB/s")
    sa = c.tool("`aria2c -s2 -x1` with both URIs", "MiB/s")
    s1 = c.tool("Ferry, `url` alone", "MiB/s")
    c.interleave([(s2, fr([mirror])), (sa, aria), (s1, fr([]))], b.runs, budget=b.budget("mirrors"))
    r, rs = paired_ratio(s2, s1)
    ra, _ = paired_ratio(s2, sa)
    if r is not None:
        c.measured = f"{r:.2f}× one source ({span(rs, 2)})" + (f"; {ra:.2f}× aria2c" if ra else "")
        c.verdict = "PASS" if r >= 1.8 else "MISS"
    return c


class JobEventStream(threading.Thread):
    """Reads /api/v1/events on its own thread until `deadline` and hands every `job` event to `on_job(job, stamp)`,
    where `stamp` is what `stamp()` returned when its bytes arrived (by default `time.perf_counter()`); `on_job`
    returns True to stop. `ready` is set once the stream answered 200 (or failed: `error` says why)."""

    def __init__(self, port, deadline, timeout=0.5):
        super().__init__(daemon=True)
        self.deadline = deadline
        self.timeout = timeout
        self.ready = threading.Event()
        self.done = threading.Event()
        self.error = None
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())

    def stamp(self):
        return time.perf_counter()

    def on_job(self, job, stamp):
        raise NotImplementedError

    def run(self):
        buf = b""
        try:
            self.sock.settimeout(self.timeout)
            while time.monotonic() < self.deadline:
                try:
                    chunk = self.sock.recv(1 << 20)
                except socket.timeout:
                    continue
                if not chunk:
                    self.error = "event stream closed by the server"
                    break
                stamp = self.stamp()
                buf += chunk
                if not self.ready.is_set():
                    if b"\r\n\r\n" not in buf:
                        continue
                    head, _, buf = buf.partition(b"\r\n\r\n")
                    if b" 200 " not in head.split(b"\r\n")[0]:
                        self.error = f"events answered {head[:60]!r}"
                        break
                    self.ready.set()
                cut = buf.rfind(b"\n\n")
                if cut < 0:
                    continue
                block, buf = buf[:cut], buf[cut + 2:]
                stop = False
                for frame in block.split(b"\n\n"):
                    if b"event: job\n" not in frame:
                        continue
                    data = frame[frame.index(b"data: ") + 6:].split(b"\n", 1)[0]
                    stop = self.on_job(json.loads(data), stamp) or stop
                if stop:
                    break
        except Exception as e:  # noqa: BLE001 - reported to the case
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.ready.set()
            self.done.set()
            self.sock.close()

    def stop(self):
        self.deadline = 0


class EventCounter(JobEventStream):
    """Counts jobs whose `job` event says finished (or failed/cancelled) until `expected` of them ended."""

    def __init__(self, port, expected, deadline):
        super().__init__(port, deadline)
        self.expected = expected
        self.finished = set()
        self.failed = {}
        self.done_at = None

    def on_job(self, job, stamp):
        if job["state"] == "finished":
            self.finished.add(job["id"])
        elif job["state"] in ("failed", "cancelled"):
            self.failed[job["id"]] = job.get("error")
        if len(self.finished) + len(self.failed) >= self.expected:
            self.done_at = time.perf_counter()
            return True
        return False


def case_small_files(b):
    n = b.scale["small_files"]
    c = Case(b, "small-files", f"{n:,} files of 64 KiB, one batch call", "≥ 2× `aria2c -j16`, ≥ 0.5× `curl -Z`",
             cpu_label="CPU ms/file")
    d = os.path.join(b.www, "small")
    if not os.path.isdir(d):
        os.makedirs(d)
        subprocess.run(["sh", "-c", f'head -c {n * 64 * 1024} /dev/urandom | split -b 65536 -a 5 -d - "$1/f"', "sh", d],
                       check=True, timeout=120)
    names = sorted(os.listdir(d))[:n]
    urls = [f"{b.origin}/small/{x}" for x in names]
    outdir = os.path.join(b.scratch, "small")
    listfile = os.path.join(b.scratch, "small.list")
    with open(listfile, "w") as f:
        f.write("\n".join(urls) + "\n")
    curlcfg = os.path.join(b.scratch, "small.curl")
    with open(curlcfg, "w") as f:
        for u, name in zip(urls, names):
            f.write(f'url = "{u}"\noutput = "{outdir}/{name}"\n')
    per_run = 120

    def fresh_dir():
        if os.path.exists(outdir):
            shutil.rmtree(outdir)
        os.makedirs(outdir)

    hooks = WebhookReceiver()

    def fr(notify=False):
        # With `notify`, every job carries a webhook (a receiver in this process answering 204): the cost of
        # committing a notice with each finish and sending it (issue 13: under 10% fewer files/s).
        extra = ["--webhook-secret", "whsec_" + "A" * 43 + "="] if notify else []
        ferry = b.start_ferry("small-files-webhooks" if notify else "small-files", max_concurrent=16, extra=extra)
        hooks.reset()
        counter = EventCounter(ferry.port, n, time.monotonic() + per_run)
        counter.start()
        counter.ready.wait(10)
        if counter.error:
            raise RuntimeError(counter.error)
        pid = ferry.pid
        reset_peak_rss(pid)
        cpu0 = proc_cpu(pid)
        t0 = time.perf_counter()
        items = [{"url": u, "notify": hooks.url} if notify else {"url": u} for u in urls]
        status, items = ferry.call("POST", "/api/v1/jobs", items, timeout=per_run)
        t_post = time.perf_counter() - t0
        if status != 200:
            raise RuntimeError(f"batch POST answered {status}: {str(items)[:200]}")
        errors = [x for x in items if "id" not in x]
        if errors:
            raise RuntimeError(f"{len(errors)} batch items failed, first: {errors[0]}")
        counter.done.wait(max(1, per_run - (time.perf_counter() - t0)))
        if counter.error:
            raise RuntimeError(counter.error)
        if counter.done_at is None:
            raise CaseTimeout(f"only {len(counter.finished)} of {n} finished within {per_run} s")
        wall = counter.done_at - t0
        cpu = proc_cpu(pid) - cpu0
        rss = proc_status_kb(pid, "VmHWM")
        if counter.failed:
            raise RuntimeError(f"{len(counter.failed)} jobs failed, e.g. {next(iter(counter.failed.values()))}")
        files = os.listdir(os.path.join(ferry.spool, "files"))
        if len(files) != n:
            raise RuntimeError(f"{len(files)} files in the spool, expected {n}")
        extra = {}
        if notify:
            if not hooks.wait(n, time.monotonic() + 60):
                raise RuntimeError(f"only {hooks.count()} of {n} webhook notices arrived")
            extra["notices_seconds"] = hooks.last_at - (time.monotonic() - (time.perf_counter() - t0))
            cpu = proc_cpu(pid) - cpu0
        b.stop_ferry()
        return dict(value=n / wall, cpu_per=cpu * 1000 / n, rss_kb=rss, wall=wall, post_seconds=t_post, **extra)

    def peer(argv):
        def run():
            fresh_dir()
            r = b.timed(argv, per_run)
            got = len(os.listdir(outdir))
            if got != n:
                raise RuntimeError(f"{argv[0]} wrote {got} files, expected {n}")
            return dict(value=n / r["wall"], cpu_per=r["cpu"] * 1000 / n, rss_kb=r["rss_kb"], wall=r["wall"])
        return run

    sf = c.tool("Ferry, max-concurrent 16 (until all `finished` events)", "files/s")
    sa = c.tool("`aria2c -j16 -i list`", "files/s")
    sc = c.tool("`curl -Z --parallel-max 16`", "files/s")
    sw = c.tool("Ferry, a webhook notice for every job (until all `finished` events)", "files/s")
    tools = [(sf, fr), (sw, lambda: fr(notify=True))]
    c.interleave(tools + [
        (sa, peer(["aria2c", "-q", "-j16", "--allow-overwrite=true", "--auto-file-renaming=false",
                   "--file-allocation=none", "-d", outdir, "-i", listfile])),
        (sc, peer(["curl", "-sS", "-Z", "--parallel-max", "16", "-K", curlcfg])),
    ], b.runs, budget=b.budget("small-files"), between=b.sync)
    m = med(sf.values)
    if m is not None:
        ra, _ = paired_ratio(sf, sa)
        rc, _ = paired_ratio(sf, sc)
        c.measured = f"{fmt(m, 0)} files/s ({span(sf.values, 0)}); {fmt(ra, 2)}× aria2c, {fmt(rc, 2)}× curl"
        c.verdict = "PASS" if ra is not None and ra >= 2 and rc is not None and rc >= 0.5 else "MISS"
        c.notes.append(f"batch POST answered after {fmt(med(sf.extra.get('post_seconds', [])), 3)} s (median)")
        rw, _ = paired_ratio(sw, sf)
        if rw is not None:
            c.notes.append(f"with a webhook on every job: {fmt(rw, 2)}× the files/s without "
                           f"(target ≥ 0.90: under 10% fewer); every notice received after "
                           f"{fmt(med(sw.extra.get('notices_seconds', [])), 2)} s (median)")
    hooks.close()
    return c


class WebhookReceiver:
    """Counts the webhook notices the small-files case's jobs send (answers 204), in a process of its own on a
    loopback port, so that its threads do not share the GIL with the event counter that times the case."""

    SERVER = r"""
import sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
state = {"n": 0, "last": 0.0}
lock = threading.Lock()
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            state["n"] += 1
            state["last"] = time.monotonic()
        self.send_response(204)
        self.end_headers()
    def do_GET(self):
        with lock:
            if self.path == "/reset":
                state["n"] = 0
            body = ("%d %.6f" % (state["n"], state["last"])).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
"""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", self.SERVER], stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)
        self.port = int(self.proc.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.last_at = None

    def _get(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request("GET", path)
        n, last = c.getresponse().read().decode().split()
        c.close()
        return int(n), float(last)

    def reset(self):
        self._get("/reset")

    def count(self):
        return self._get("/count")[0]

    def wait(self, n, deadline):
        """Waits for `n` notices; `last_at` is then when the last one arrived (time.monotonic, same clock)."""
        while time.monotonic() < deadline:
            got, last = self._get("/count")
            if got >= n:
                self.last_at = last
                return True
            time.sleep(0.02)
        return False

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def parse_wrk(text):
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not m:
        raise RuntimeError(f"no Requests/sec in wrk output: {text[-300:]}")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    errors = re.search(r"Socket errors:(.*)", text)
    lat = re.search(r"Latency\s+([\d.]+)(\w+)", text)
    return float(m.group(1)), int(non2xx.group(1)) if non2xx else 0, errors.group(1).strip() if errors else ""


def case_api(b):
    secs = b.scale["wrk_seconds"]
    c = Case(b, "api", f"GET /api/v1/jobs/{{id}}, `wrk -t2 -c64 -d{secs}s`", "≥ 0.5× nginx (100-byte file)",
             cpu_label="server CPU µs/req")
    with open(os.path.join(b.www, "tiny.bin"), "wb") as f:
        f.write(os.urandom(100))
    ferry = b.start_ferry("api", max_concurrent=4)
    job = ferry.submit({"url": f"{b.origin}/tiny.bin"})
    job = ferry.wait_finished(job["id"], 30)
    ferry_url = ferry.url(f"/api/v1/jobs/{job['id']}")
    nginx_url = f"{b.origin}/tiny.bin"
    status, body = ferry.call("GET", f"/api/v1/jobs/{job['id']}")
    c.details["ferry_body_bytes"] = len(json.dumps(body))

    def run(url, server_pids):
        def go():
            pids = server_pids()
            cpu0 = sum(proc_cpu(p) for p in pids)
            r = b.timed(["wrk", "-t2", "-c64", f"-d{secs}s", "--latency", url], secs + 30)
            cpu = sum(proc_cpu(p) for p in pids) - cpu0
            rps, non2xx, errs = parse_wrk(r["stdout"])
            if non2xx:
                raise RuntimeError(f"{non2xx} non-2xx responses from {url}")
            total = rps * secs
            return dict(value=rps, cpu_per=cpu * 1e6 / total if total else None, rss_kb=None, socket_errors=errs)
        return go

    sf = c.tool("Ferry", "req/s")
    sn = c.tool("nginx, 100-byte file", "req/s")
    c.interleave([(sf, run(ferry_url, lambda: [ferry.pid])), (sn, run(nginx_url, b.nginx_workers))],
                 b.runs, budget=b.budget("api"))
    try:
        sf.rss = [proc_status_kb(ferry.pid, "VmHWM") / 1024] * len(sf.values)
    except OSError:
        pass
    r, rs = paired_ratio(sf, sn)
    if r is not None:
        c.measured = f"{r:.2f}× nginx ({span(rs, 2)})"
        c.verdict = "PASS" if r >= 0.5 else "MISS"
    return c


def case_serve(b):
    size = b.scale["big"]
    c = Case(b, "serve", f"serving a finished {size / GiB:g} GiB file (`curl -o /dev/null`)",
             "≥ 0.9× nginx sendfile", cpu_label="server CPU s/GB")
    sha = b.make_file("big.bin", size)
    ferry = b.start_ferry("serve", max_concurrent=4)
    job = ferry.submit({"url": f"{b.origin}/big.bin"})
    job = ferry.wait_finished(job["id"], max(60, size / (20 * MiB)))
    if job["sha256"] != sha:
        raise RuntimeError("served file digest differs")
    path = os.path.join(ferry.spool, "files", job["filename"])
    link = os.path.join(b.www, "served.bin")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(path, link)   # nginx serves the very file Ferry holds
    b.sync()
    gb = size / 1e9
    per_run = max(60, size / (50 * MiB))

    def run(url, server_pids):
        def go():
            pids = server_pids()
            reset = [reset_peak_rss(p) for p in pids]
            cpu0 = sum(proc_cpu(p) for p in pids)
            r = b.timed(["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{http_code}", url], per_run)
            cpu = sum(proc_cpu(p) for p in pids) - cpu0
            got, code = r["stdout"].split()
            if int(got) != size or code != "200":
                raise RuntimeError(f"got {got} bytes, status {code}")
            rss = max(proc_status_kb(p, "VmHWM") for p in pids) if all(reset) else None
            return dict(value=size / MiB / r["wall"], cpu_per=cpu / gb, rss_kb=rss, client_cpu=r["cpu"])
        return go

    sf = c.tool("Ferry GET content", "MiB/s")
    sn = c.tool("nginx sendfile, same file", "MiB/s")
    c.interleave([(sf, run(ferry.url(f"/api/v1/jobs/{job['id']}/content"), lambda: [ferry.pid])),
                  (sn, run(f"{b.origin}/served.bin", b.nginx_workers))], b.runs, budget=b.budget("serve"))
    os.unlink(link)
    r, rs = paired_ratio(sf, sn)
    if r is not None:
        c.measured = f"{r:.2f}× nginx ({span(rs, 2)})"
        c.verdict = "PASS" if r >= 0.9 else "MISS"
    return c


class JobEventClock(JobEventStream):
    """Notes, for every `job` event, when it arrived and the server's CPU seconds then: seen[(job id, state)] =
    (perf_counter, cpu) of the first such event. Used to time one phase of a job."""

    def __init__(self, port, pid, deadline):
        super().__init__(port, deadline, timeout=0.2)
        self.pid = pid
        self.seen = {}
        self.lock = threading.Lock()

    def stamp(self):
        return time.perf_counter(), proc_cpu(self.pid)

    def on_job(self, job, stamp):
        with self.lock:
            self.seen.setdefault((job["id"], job["state"]), stamp)
        return False

    def at(self, job_id, state):
        with self.lock:
            return self.seen.get((job_id, state))


def case_upload(b):
    size = b.scale["big"]
    c = Case(b, "upload", f"uploading a finished {size / GiB:g} GiB file to nginx WebDAV `PUT`",
             "≥ 0.9× `curl -T` throughput, CPU/GB reported; both read the file from the disk (not cached)")
    sha = b.make_file("big.bin", size)
    source = os.path.join(b.www, "big.bin")
    targets = os.path.join(b.www, "upload")
    ferry = b.start_ferry("upload", max_concurrent=4)
    gb = size / 1e9
    per_run = max(120, size / (10 * MiB))
    checked = set()

    def discard(name):
        path = os.path.join(targets, name)
        if os.path.exists(path):
            os.unlink(path)

    def nginx_seconds(name):
        """nginx's $request_time of the last complete PUT of /upload/<name> (bench/run.sh logs them)."""
        try:
            with open(os.path.join(b.work, "nginx", "logs", "upload.log")) as f:
                lines = [line.split() for line in f if line.startswith(f"/upload/{name} ")]
        except OSError:
            return None
        done = [fields for fields in lines if len(fields) == 4 and fields[1] in ("201", "204")]
        return float(done[-1][2]) if done else None

    def received(name):
        """Checks the uploaded file's size (and, once per tool, its SHA-256), then removes it."""
        path = os.path.join(targets, name)
        try:
            got = os.path.getsize(path)
            if got != size:
                raise RuntimeError(f"the target got {got} bytes, expected {size}")
            if name not in checked:
                digest = subprocess.run(["sha256sum", path], check=True, capture_output=True, text=True,
                                        timeout=300).stdout.split()[0]
                if digest != sha:
                    raise RuntimeError(f"the uploaded file's SHA-256 {digest} differs from the source's {sha}")
                checked.add(name)
        finally:
            if os.path.exists(path):
                os.unlink(path)

    def fr():
        # Download (not timed), then the delivery phase: from the `delivering` job event to the `finished` one,
        # with the server's CPU over the same span.
        discard("ferry.bin")
        clock = JobEventClock(ferry.port, ferry.pid, time.monotonic() + per_run)
        clock.start()
        clock.ready.wait(10)
        try:
            if clock.error:
                raise RuntimeError(clock.error)
            job = ferry.submit({"url": f"{b.origin}/big.bin", "dedupe": False,
                                "deliver": {"url": f"{b.origin}/upload/ferry.bin"}})
            done = ferry.wait_finished(job["id"], per_run, poll=0.2)
            deadline = time.monotonic() + 10
            while clock.at(job["id"], "finished") is None and time.monotonic() < deadline and not clock.error:
                time.sleep(0.01)
            began, ended = clock.at(job["id"], "delivering"), clock.at(job["id"], "finished")
            if began is None or ended is None:
                raise RuntimeError(f"job events not seen (delivering {began}, finished {ended}): {clock.error}")
            delivery = done.get("delivery") or {}
            if delivery.get("state") != "delivered" or delivery.get("bytesSent") != size:
                raise RuntimeError(f"delivery {delivery}")
            wall, cpu = ended[0] - began[0], ended[1] - began[1]
            status, _ = ferry.call("DELETE", f"/api/v1/jobs/{job['id']}")
            if status != 204:
                raise RuntimeError(f"DELETE answered {status}")
            received("ferry.bin")
            return dict(value=size / MiB / wall, cpu_per=cpu / gb, wall=wall, nginx_seconds=nginx_seconds("ferry.bin"))
        finally:
            clock.stop()

    def evict(path):
        """Drops the file's pages from the page cache. Ferry's finished file is written with `O_DIRECT`, so its
        delivery reads it from the disk; `curl -T` reads the origin's copy, which serving the download just cached.
        Evicting that copy first makes both read from the disk (a fair comparison, issue 26)."""
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)

    def curl():
        evict(source)
        try:
            r = b.timed(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-T", source,
                         f"{b.origin}/upload/curl.bin"], per_run)
            if r["stdout"] not in ("201", "204"):
                raise RuntimeError(f"curl -T got {r['stdout']}")
        except BaseException:
            discard("curl.bin")
            raise
        received("curl.bin")
        return dict(value=size / MiB / r["wall"], cpu_per=r["cpu"] / gb, rss_kb=r["rss_kb"], wall=r["wall"],
                    nginx_seconds=nginx_seconds("curl.bin"))

    sf = c.tool("Ferry delivery (`delivering` → `finished` job events)", "MiB/s")
    sc = c.tool("`curl -T`", "MiB/s")
    c.interleave([(sf, fr), (sc, curl)], b.runs, budget=b.budget("upload"), between=b.sync)
    # Cross-check, the same clock for both: the PUT's duration as nginx logged it.
    by_nginx = [c_s / f_s for f_s, c_s in zip(sf.extra.get("nginx_seconds", []), sc.extra.get("nginx_seconds", []))
                if f_s and c_s]
    if by_nginx:
        c.rows = [("Ferry ÷ `curl -T` throughput by nginx's `$request_time` of each PUT (cross-check), median",
                   f"{med(by_nginx):.2f}× ({span(by_nginx, 2)})")]
    r, rs = paired_ratio(sf, sc)
    cpu_f, cpu_c = med(sf.cpu_per), med(sc.cpu_per)
    if r is not None:
        c.measured = (f"{r:.2f}× curl ({span(rs, 2)}), {fmt(med(sf.values))} vs {fmt(med(sc.values))} MiB/s; "
                      f"CPU/GB {fmt(cpu_f, 2)} vs {fmt(cpu_c, 2)} s"
                      + (f"; by nginx's request time {med(by_nginx):.2f}×" if by_nginx else ""))
        c.verdict = "PASS" if r >= 0.9 else "MISS"
    return c


def case_sse(b):
    n = b.scale["sse_subscribers"]
    c = Case(b, "sse", f"{n:,} SSE subscribers while 20 jobs download",
             "≤ 8 KiB RSS per subscriber; job event to all within 100 ms p99 (progress p99 reported)", cpu_label="")
    size = b.scale["sse_job_size"]
    b.make_file("sse.bin", size)
    ferry = b.start_ferry("sse", max_concurrent=20)
    argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sse_fanout.py"),
            "--port", str(ferry.port), "--ferry-pid", str(ferry.pid), "--subscribers", str(n),
            "--marker-url", f"{b.origin}/tiny.bin", "--markers", str(b.scale["sse_markers"])]
    for i in range(20):   # all on 127.0.0.1: Ferry runs with --max-per-host 20 here (its max-concurrent)
        argv += ["--job-url", f"{b.origin}/slow/sse.bin?job={i}"]
    with open(os.path.join(b.www, "tiny.bin"), "wb") as f:
        f.write(os.urandom(100))
    cpu0 = proc_cpu(ferry.pid)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    b.sse_proc = proc
    with open(os.path.join(b.work, "sse.pid"), "w") as f:
        f.write(str(proc.pid))
    try:
        out, err = proc.communicate(timeout=b.budget("sse"))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)
        raise CaseTimeout(f"SSE client did not finish within {b.budget('sse'):.0f} s")
    finally:
        b.sse_proc = None
        os.unlink(os.path.join(b.work, "sse.pid"))
    ferry_cpu = proc_cpu(ferry.pid) - cpu0
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"SSE client exited {proc.returncode}: {err.decode(errors='replace')[-600:]}")
    r = json.loads(out)
    r["ferry_cpu_seconds"] = round(ferry_cpu, 2)
    r["elapsed_seconds"] = round(elapsed, 2)
    c.details = r
    s = c.tool("Ferry", "")
    per = r.get("rss_per_subscriber_kb")
    p99 = r["marker_spread_ms"]["p99"]
    pp99 = r["progress_spread_ms"]["p99"]
    ok_all = r["subscribers_streaming"] == n and r["marker_missing"] == 0 and r["closed_by_server"] == 0
    c.rows = [
        ("subscribers streaming / requested", f"{r['subscribers_streaming']:,} / {n:,}"
         + (f" (HTTP {r['http_statuses']})" if set(r["http_statuses"]) != {"200"} else "")
         + f", connected in {r['connect_seconds']} s"),
        ("Ferry RSS: before → subscribed → peak", f"{r['rss_baseline_kb'] / 1024:.1f} → {r['rss_subscribed_kb'] / 1024:.1f} → "
         f"{(r['rss_peak_kb'] or 0) / 1024:.1f} MiB"),
        ("RSS per subscriber (idle; peak while events flow)", f"{fmt(r.get('rss_per_subscriber_idle_kb'), 1)} KiB; {fmt(per, 1)} KiB"),
        (f"job event fan-out, {r['markers']} markers: arrival − first arrival",
         f"p50 {fmt(r['marker_spread_ms']['p50'], 1)} ms, p99 {fmt(p99, 1)} ms, max {fmt(r['marker_spread_ms']['max'], 1)} ms; "
         f"{r['marker_missing']:,} missing"),
        ("job event: arrival − POST sent", f"p50 {fmt(r['marker_from_post_ms']['p50'], 1)} ms, p99 {fmt(r['marker_from_post_ms']['p99'], 1)} ms"),
        ("job event: first / last arrival − POST sent, per marker in order (ms)",
         ", ".join(f"{fmt(a, 0)}/{fmt(z, 0)}" for a, z in zip(r["marker_first_from_post_ms"], r["marker_last_from_post_ms"]))),
        (f"progress events ({r['progress_ids']:,} ids on {r['progress_sampled_subscribers']:,} sampled subscribers)",
         f"p50 {fmt(r['progress_spread_ms']['p50'], 1)} ms, p99 {fmt(pp99, 1)} ms, max {fmt(r['progress_spread_ms']['max'], 1)} ms"),
        ("the same spreads as this client's event loop saw them (epoll return, including its own backlog): job event; progress",
         f"p50 {fmt(r['client_marker_spread_ms']['p50'], 1)} ms, p99 {fmt(r['client_marker_spread_ms']['p99'], 1)} ms; "
         f"p50 {fmt(r['client_progress_spread_ms']['p50'], 1)} ms, p99 {fmt(r['client_progress_spread_ms']['p99'], 1)} ms"),
        ("streams closed by the server during the window", f"{r['closed_by_server']:,}"),
        ("Ferry CPU / client CPU in the window", f"{r['ferry_cpu_seconds']} s / {r['client_cpu_seconds']} s "
         f"(client busy {r['client_busy_fraction'] * 100:.0f}% of {r['measure_seconds']} s)"),
    ]
    if r.get("jobs_downloading_at_start") is not None and r["jobs_downloading_at_start"] < 20:
        c.notes.append(f"only {r['jobs_downloading_at_start']} of 20 downloads were running at the start")
    c.measured = f"{fmt(per, 1)} KiB/subscriber; job event p99 {fmt(p99, 1)} ms, progress p99 {fmt(pp99, 1)} ms"
    c.verdict = "PASS" if ok_all and per is not None and per <= 8 and p99 is not None and p99 <= 100 else "MISS"
    return c


def key_list_ms(ferry, tokens, rounds, want, seed=7):
    """`GET /api/v1/jobs?limit=100` with a random key's token, `rounds` times, each followed by the administrator's
    `GET /api/v1/jobs?limit=100&state=paused` (read from the in-memory table, not the store: a control for the
    machine's own noise): each answer's milliseconds, (keys', administrator's). Each key's list must hold only
    that key's jobs, `want` of them."""
    import random
    rng = random.Random(seed)
    keyed, control = [], []
    for _ in range(rounds):
        token = rng.choice(tokens)
        t = time.perf_counter()
        status, body = ferry.call("GET", "/api/v1/jobs?limit=100", token=token)
        keyed.append((time.perf_counter() - t) * 1000)
        if status != 200 or len(body.get("jobs", [])) != want:
            raise RuntimeError(f"a key's list answered {status} with {len((body or {}).get('jobs', []))} jobs, not {want}")
        t = time.perf_counter()
        status, body = ferry.call("GET", "/api/v1/jobs?limit=100&state=paused")
        control.append((time.perf_counter() - t) * 1000)
        if status != 200:
            raise RuntimeError(f"the administrator's list answered {status}")
    return keyed, control


def p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else None


def case_store(b):
    n = b.scale["store_jobs"]
    keys = b.scale["store_keys"]
    c = Case(b, "store", f"{n:,} jobs of {keys:,} API keys in the store",
             "RSS ≤ 150 MB; restart to ready ≤ 2 s; a key's list p99 ≤ 10 ms", cpu_label="")
    with open(os.path.join(b.www, "tiny.bin"), "wb") as f:
        f.write(os.urandom(100))
    admin = "bench-store-admin-token"
    ferry = b.start_ferry("store", max_concurrent=4, extra=("--token", admin))
    ferry.token = admin
    url = f"{b.origin}/tiny.bin"
    t0 = time.perf_counter()
    deadline = t0 + b.budget("store") * 0.6
    tokens = []
    for index in range(keys):
        status, key = ferry.call("POST", "/api/v1/keys", {"name": f"bench-{index}", "scope": "write"})
        if status != 201 or "token" not in (key or {}):
            raise RuntimeError(f"POST /api/v1/keys answered {status}: {str(key)[:200]}")
        tokens.append(key["token"])
    keys_s = time.perf_counter() - t0
    per_key = n // keys
    batch = [{"url": url, "paused": True, "dedupe": False} for _ in range(1000)]
    t0 = time.perf_counter()
    created = 0
    batch_times = []
    for token in tokens:
        left = per_key
        while left > 0:
            if time.perf_counter() > deadline:
                raise CaseTimeout(f"created {created:,} of {n:,} jobs before the time budget ran out")
            k = min(1000, left)
            tb = time.perf_counter()
            status, items = ferry.call("POST", "/api/v1/jobs", batch[:k], timeout=120, token=token)
            batch_times.append(time.perf_counter() - tb)
            if status != 200 or any("id" not in x for x in items):
                raise RuntimeError(f"batch answered {status}: {str(items)[:200]}")
            created += k
            left -= k
    n = created
    create_s = time.perf_counter() - t0
    time.sleep(1)
    rss_created = proc_status_kb(ferry.pid, "VmRSS")
    hwm_created = proc_status_kb(ferry.pid, "VmHWM")
    status, metrics = ferry.call("GET", "/metrics")
    m = re.search(r'ferry_jobs\{state="paused"\}\s+(\d+)', metrics if isinstance(metrics, str) else "")
    paused = int(m.group(1)) if m else None
    want = min(100, per_key)
    listed, control = key_list_ms(ferry, tokens, 400, want)
    db = os.path.join(ferry.spool, "ferry.db")
    db_mb = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p)) / 1e6
    restarts, stops, rss_after, list_ms = [], [], [], []
    t_end = time.monotonic() + b.budget("store") * 0.4
    for i in range(b.runs + 1):
        if time.monotonic() > t_end:
            c.notes.append(f"restart rounds cut to {i} by the time budget")
            break
        stops.append(ferry.stop())
        ready = ferry.start()
        if i > 0:   # the first restart is the warm-up (page cache of the store file)
            restarts.append(ready)
        rss_after.append(proc_status_kb(ferry.pid, "VmRSS"))
        tl = time.perf_counter()
        ferry.call("GET", "/api/v1/jobs?limit=100")
        list_ms.append((time.perf_counter() - tl) * 1000)
    listed_after, control_after = key_list_ms(ferry, tokens, 400, want, seed=8)
    rss_ready = max(rss_after) / 1024 if rss_after else None
    s = c.tool("Ferry restart → /readyz 200", "s", higher=False)
    for r in restarts:
        s.add(r)
    c.rows = [
        (f"{keys:,} API keys made one POST each", f"{keys_s:.1f} s"),
        (f"create via batch POSTs ({per_key:,} jobs a key, paused, dedupe false)",
         f"{create_s:.1f} s ({n / create_s:,.0f} jobs/s; batch median {fmt(med(batch_times) * 1000, 0)} ms, max {fmt(max(batch_times) * 1000, 0)} ms)"),
        ("jobs paused per /metrics", f"{paused:,}" if paused is not None else "–"),
        ("store file (db + wal)", f"{db_mb:.0f} MB"),
        ("RSS after creating (VmRSS; peak VmHWM)", f"{rss_created / 1024:.1f} MiB; {hwm_created / 1024:.1f} MiB"),
        ("RSS once ready after restart (max over restarts)", f"{fmt(rss_ready, 1)} MiB"),
        ("graceful stop (SIGTERM → exit), median", f"{fmt(med(stops), 2)} s"),
        (f"restart → /readyz 200, median of {len(restarts)} (min–max)", f"{fmt(med(restarts), 3)} s ({span(restarts, 3)})"),
        ("first GET /api/v1/jobs?limit=100 after restart (administrator, every key's jobs), median", f"{fmt(med(list_ms), 1)} ms"),
        (f"a random key's GET /api/v1/jobs?limit=100 ({want} jobs), 400 each: before restarts, after",
         f"p50 {fmt(med(listed), 1)} / p99 {fmt(p99(listed), 1)} ms; p50 {fmt(med(listed_after), 1)} / p99 {fmt(p99(listed_after), 1)} ms"),
        ("the administrator's GET /api/v1/jobs?limit=100&state=paused in turn with them (from memory: the machine's noise)",
         f"p50 {fmt(med(control), 1)} / p99 {fmt(p99(control), 1)} ms; p50 {fmt(med(control_after), 1)} / p99 {fmt(p99(control_after), 1)} ms"),
    ]
    peak_mb = max(rss_created, hwm_created, max(rss_after) if rss_after else 0) * 1024 / 1e6
    ready = med(restarts)
    worst_list = max(p99(listed), p99(listed_after))
    c.measured = f"peak RSS {peak_mb:.0f} MB; restart→ready {fmt(ready, 3)} s; a key's list p99 {fmt(worst_list, 1)} ms"
    c.verdict = ("PASS" if peak_mb <= 150 and ready is not None and ready <= 2 and paused == n and worst_list <= 10
                 else "MISS")
    return c


CASES = {
    "download": case_download,
    "upload": case_upload,
    "segmented": case_segmented,
    "mirrors": case_mirrors,
    "small-files": case_small_files,
    "api": case_api,
    "serve": case_serve,
    "sse": case_sse,
    "store": case_store,
    "cluster": lambda b: cluster_case.run(b, sys.modules[__name__]),
    "fetch": lambda b: fetch_case.run(b, sys.modules[__name__]),
    "aria2-rpc": lambda b: aria2_case.run(b, sys.modules[__name__]),
}


def budget(self, key):
    full = {"download": 900, "upload": 600, "segmented": 600, "mirrors": 300, "small-files": 500, "api": 300, "serve": 300, "sse": 240, "store": 600, "cluster": 600, "fetch": 600, "aria2-rpc": 600}
    small = {"download": 120, "upload": 120, "segmented": 90, "mirrors": 60, "small-files": 90, "api": 60, "serve": 60, "sse": 90, "store": 120, "cluster": 150, "fetch": 120, "aria2-rpc": 150}
    return (full if self.scale_name == "full" else small)[key]


Bench.budget = budget


# --- report ---------------------------------------------------------------------------------------

def report(b, cases, started, machine):
    lines = []
    lines.append(f"### Ferry benchmarks ({b.scale_name} scale, {b.runs} runs after a warm-up, interleaved)")
    lines.append("")
    lines.append(machine)
    lines.append("")
    lines.append("| case | target | measured (ratios paired per round, median and range) | result |")
    lines.append("|---|---|---|---|")
    for c in cases:
        lines.append(f"| {c.title} | {c.target} | {c.measured} | **{c.verdict}** |")
    lines.append("")
    lines.append("| case | run | median | min–max | CPU (median) | peak RSS MiB (median) |")
    lines.append("|---|---|---|---|---|---|")
    for c in cases:
        for s in c.series:
            if not s.values and not s.errors:
                continue
            if c.key in ("sse", "store"):
                continue
            vals = [v for v in s.values if v is not None]
            failed = len(s.values) - len(vals)
            err = f" ({failed} failed)" if failed else ""
            lines.append(f"| {c.title} | {s.tool}{err} | {fmt(med(vals))} {s.unit} | {span(vals)} | "
                         f"{fmt(med(s.cpu_per), 2)} {c.cpu_label} | {fmt(med(s.rss), 1)} |")
        for name, value in getattr(c, "rows", []):
            lines.append(f"| {c.title} | {name} | {value} | | | |")
    notes = []
    for c in cases:
        for n in c.notes:
            notes.append(f"- {c.key}: {n}")
        if c.error:
            notes.append(f"- {c.key}: {c.error}")
        for s in c.series:
            if s.errors:
                notes.append(f"- {c.key}, {s.tool}: {len(s.errors)} failed run(s), first: {s.errors[0][:300]}")
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines.extend(notes)
    lines.append("")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    lines.append(f"Suite time {time.monotonic() - started:.0f} s; load average at the end {load}. Throughput in MiB/s of payload; Ferry's CPU is the "
                 "server process's (/proc/PID/stat deltas), peers' from `/usr/bin/time -v`; Ferry's peak RSS is VmHWM "
                 "after a reset (clear_refs) at the start of each run.")
    return "\n".join(lines) + "\n"


def machine_line():
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        cpu = "?"
    load = open("/proc/loadavg").read().split()[:3]
    kernel = os.uname().release
    return (f"Machine: {os.cpu_count()} cores ({cpu}), kernel {kernel}, load average at start {' '.join(load)}; "
            f"origin and peers on 127.0.0.1.")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ferry-bin", required=True)
    ap.add_argument("--nginx-port", type=int, required=True)
    ap.add_argument("--nginx-pid", type=int, required=True)
    ap.add_argument("--scale", choices=sorted(SCALES), default="full")
    args = ap.parse_args()
    b = Bench(args)

    def on_signal(signum, frame):
        raise Interrupted(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    wanted = [x.strip() for x in (os.environ.get("CASES") or ",".join(ALL_CASES)).split(",") if x.strip()]
    unknown = [x for x in wanted if x not in CASES]
    if unknown:
        log(f"unknown case(s) {unknown}; known: {ALL_CASES}")
        return 2
    started = time.monotonic()
    machine = machine_line()
    cases = []
    try:
        for key in wanted:
            log(f"=== {key}")
            t = time.monotonic()
            try:
                c = CASES[key](b)
            except (CaseTimeout, RuntimeError, subprocess.TimeoutExpired, OSError, KeyError, ValueError) as e:
                c = Case(b, key, key, "–")
                c.verdict = "ERROR"
                c.error = f"{type(e).__name__}: {e}"
                log(f"{key}: {c.error}")
            finally:
                b.stop_ferry()
            log(f"=== {key}: {c.verdict} in {time.monotonic() - t:.0f} s: {c.measured}")
            cases.append(c)
    except Interrupted as e:
        log(f"interrupted ({e}); stopping")
        b.stop_ferry()
        if b.sse_proc and b.sse_proc.poll() is None:
            b.sse_proc.kill()
        return 130
    finally:
        b.stop_ferry()
    text = report(b, cases, started, machine)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    raw = []
    for c in cases:
        raw.append(dict(case=c.key, title=c.title, target=c.target, measured=c.measured, verdict=c.verdict,
                        error=c.error, notes=c.notes, details=c.details,
                        series=[dict(tool=s.tool, unit=s.unit, values=s.values, cpu=s.cpu_per, rss_mib=s.rss,
                                     extra=s.extra, errors=s.errors) for s in c.series]))
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(dict(scale=b.scale_name, runs=b.runs, machine=machine, cases=raw), f, indent=1, default=str)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
