#!/usr/bin/env python3
"""Store-loss suite (issue 12): two `ferry serve` nodes lose their object store, then their database, while
downloads run, and get them back.

Started here, on 127.0.0.1, in temp directories, all stopped by pid (suitelib's CLEANUP), with the cluster
suite's fixtures: PostgreSQL (initdb + postgres), SeaweedFS (`weed server` with its S3 gateway), nginx
(`/slow/<name>?rate=N` caps each connection at N bytes/s), and two nodes on the same store and object store.

Scenario and checks:
  1. Object store lost: SeaweedFS is stopped while rate-limited downloads run and a few small jobs are submitted.
     Both nodes report not ready within 10 s naming the object store; content stored before answers 503 (not a
     hang or a 500); no job fails, none is reported finished (its file is not stored), a downloaded file waiting to
     be stored shows error `retrying` naming the object store, and pausing one (on the other node) is made at once
     (resumed on its node after the store's return, it is stored without fetching again), the downloads keep their bytes; SeaweedFS is started again on its directory and ports: both nodes ready again within 30 s, every job
     finishes, and every job's content is byte-identical from both nodes.
  2. Database lost: PostgreSQL shuts down at once (SIGQUIT, every connection dropped) while rate-limited
     downloads run. Both nodes report not ready within 10 s naming the job store; a new job is refused with
     `503 unavailable`; the nodes stay up, and each stops its downloads two thirds of a lease after its last lease
     renewal (fenced: it cannot show it still holds them), keeping their bytes; PostgreSQL is started again
     on its data and port: both nodes ready again within 30 s, every job finishes once (each listed once, the
     same on both nodes) with the right SHA-256 and none failed, and each download was fetched from the origin once
     (continued from the bytes kept).

Usage: python3 Tests/suites/store_loss_suite.py [--keep]   (about 2 minutes; in `make test`)
Last line: `N passed, N failed`; exit status 1 on any failure.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_suite as C  # noqa: E402
import suitelib as S  # noqa: E402

SLOW_SIZE = 3 << 20
SLOW_RATE = 128 << 10  # per connection: about 24 s per slow job
NAMES = ["loss-a", "loss-b"]


def ready(node):
    """(HTTP status, reasons) of the node's /readyz; (0, []) when it does not answer."""
    try:
        response = S.http(node.port, "GET", "/readyz", timeout=5)
        return response.status, (response.json() or {}).get("reasons", [])
    except (OSError, ValueError):
        return 0, []


def all_ready(nodes, timeout):
    return S.wait_until(lambda: all(ready(n)[0] == 200 for n in nodes), timeout, interval=0.25)


def not_ready_naming(nodes, words, timeout):
    """True once every node answers 503 with a reason containing `words`."""
    def check():
        for node in nodes:
            status, reasons = ready(node)
            if status != 503 or not any(words in r for r in reasons):
                return False
        return True
    return S.wait_until(check, timeout, interval=0.25)


def body(suite, args):
    log = S.log
    work = S.temp_dir("ferry-store-loss-", keep=args.keep)
    os.environ["AWS_ACCESS_KEY_ID"] = C.ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = C.SECRET_KEY
    source = os.environ.get("FERRY_BIN") or os.path.join(S.REPO, ".build", "debug", "ferry")
    os.environ["FERRY_BIN"] = source
    binary = S.ferry_binary(work)

    rng = random.Random(12)
    root = os.path.join(work, "www")
    os.makedirs(root)
    specs = {}
    for i in range(8):
        specs["small-%d.bin" % i] = C.SMALL
    for i in range(4):
        specs["slow-%d.bin" % i] = SLOW_SIZE
    sha = {name: S.write_random_file(os.path.join(root, name), size, rng) for name, size in specs.items()}

    # Commits written before they are acknowledged: the crash below must not take back what the nodes were told.
    pg = C.Postgres(survives_crash=True).start()
    seaweed = C.Seaweed(S.temp_dir("ferry-store-loss-weed")).start()
    nginx = S.Nginx(root, os.path.join(work, "nginx"), extra_log_fields=C.LOG_FIELDS).start()
    log("postgres :%d, seaweedfs S3 :%d, nginx :%d" % (pg.port, seaweed.port, nginx.port))
    object_store = "s3://%s/jobs?endpoint=http://127.0.0.1:%d&region=%s" % (C.BUCKET, seaweed.port, C.REGION)
    nodes = []
    for name in NAMES:
        directory = os.path.join(work, name)
        os.makedirs(os.path.join(directory, "logs"))
        node = C.Node(name, binary, os.path.join(directory, "spool"), os.path.join(directory, "logs"), pg.url(),
                      object_store, max_concurrent=4)
        node.start(timeout=60)
        nodes.append(node)
    a, b = nodes
    ids = {}

    def submit(node, name):
        path = ("/slow/%s?rate=%d" % (name, SLOW_RATE)) if name.startswith("slow") else "/" + name
        response = node.request("POST", "/api/v1/jobs", {"url": nginx.url(path), "connections": 1,
                                                          "filename": name})
        if response.status in (200, 201, 202):
            ids[name] = response.json()["id"]
        return response

    def job(name, node=a):
        try:
            response = node.request("GET", "/api/v1/jobs/" + ids[name], timeout=5)
        except OSError:
            return None
        return response.json() if response.status == 200 else None

    def states(names, node=a):
        return {n: (job(n, node) or {}).get("state") for n in names}

    def finished(names, timeout):
        return S.wait_until(lambda: all(s == "finished" for s in states(names).values()), timeout, interval=0.3)

    def fetched(name):
        """Bytes of `name` nginx has sent so far (its access log: one line per finished request; the bodies of 200
        and 206 answers, not the error page of a 416 that confirms a whole partial file is still the origin's)."""
        total = 0
        try:
            with open(os.path.join(work, "nginx", "access.log")) as handle:
                for line in handle:
                    fields = line.split("\t")
                    if len(fields) > 5 and fields[1].endswith("/" + name) and fields[2] in ("200", "206") \
                            and fields[5].isdigit():
                        total += int(fields[5])
        except OSError:
            pass
        return total

    def content_matches(names):
        bad = []
        for name in names:
            for node in nodes:
                status, digest, _, _, _ = C.get_content(node.port, ids[name])
                if status != 200 or digest != sha[name]:
                    bad.append("%s from %s: %s" % (name, node.name, status))
        return bad

    # -- 1. the object store goes away -------------------------------------------------------------------
    log("1. object store lost while downloads run")
    before = ["small-0.bin", "small-1.bin"]
    for name in before:
        submit(a, name)
    suite.check("jobs submitted before the outage finish", finished(before, 30), str(states(before)))
    slow = ["slow-0.bin", "slow-1.bin"]
    for name, node in zip(slow, nodes):
        submit(node, name)
    S.wait_until(lambda: all((job(n) or {}).get("state") == "downloading" for n in slow), 20)
    began = time.monotonic()
    seaweed.stop()
    suite.check("both nodes not ready within 10 s, naming the object store",
                not_ready_naming(nodes, "object store", 10), "%s %s" % (ready(a), ready(b)))
    log("   not ready after %.1f s" % (time.monotonic() - began))
    response = S.http(b.port, "GET", "/api/v1/jobs/%s/content" % ids["small-0.bin"], headers=C.AUTH, timeout=30)
    suite.check("content stored before answers 503 unavailable while the object store is away",
                response.status == 503 and (response.json() or {}).get("error", {}).get("code") == "unavailable",
                "%d %r" % (response.status, response.body[:200]))
    during = ["small-2.bin", "small-3.bin"]
    for name, node in zip(during, nodes):
        response = submit(node, name)
        suite.check("a job submitted while the object store is away is accepted (%s)" % name,
                    response.status in (201, 202), "%d %r" % (response.status, response.body[:200]))
    # Wait until the origin has sent every byte of the slow downloads: their finish waits for the object store.
    S.wait_until(lambda: all(fetched(n) >= SLOW_SIZE for n in slow), 60)
    time.sleep(3)
    seen = states(slow + during)
    suite.check("no job fails or is reported finished while its file cannot be stored",
                all(state in ("waiting", "downloading") for state in seen.values()), str(seen))
    errors = {n: (job(n, node) or {}).get("error") or {} for n, node in zip(slow, nodes)}
    suite.check("a downloaded file waiting for the object store says so (error retrying, naming the object store)",
                all(e.get("code") == "retrying" and "object store" in e.get("message", "") for e in errors.values()),
                str(errors))
    # A pause of a job whose file waits for the object store is made at once (asked on the node not running it:
    # forwarded); resumed on the node that ran it (its bytes are in that node's spool), it is stored from there.
    runner = {n.name: n for n in nodes}.get((job("slow-0.bin") or {}).get("node"), a)
    elsewhere = b if runner is a else a
    began = time.monotonic()
    try:
        response = elsewhere.request("POST", "/api/v1/jobs/%s/pause" % ids["slow-0.bin"], timeout=15)
        paused, detail = (response.json() or {}).get("state") == "paused", "%d %r" % (response.status, response.body[:200])
    except OSError as error:
        paused, detail = False, str(error)
    took = time.monotonic() - began
    suite.check("a job whose file waits for the object store pauses at once (%.1f s)" % took, paused and took < 3, detail)
    began = time.monotonic()
    seaweed.restart()
    log("   seaweedfs back after %.1f s" % (time.monotonic() - began))
    suite.check("both nodes ready again within 30 s of the object store's return", all_ready(nodes, 30),
                "%s %s" % (ready(a), ready(b)))
    response = runner.request("POST", "/api/v1/jobs/%s/resume" % ids["slow-0.bin"])
    suite.check("the paused job resumes", response.status == 200, "%d %r" % (response.status, response.body[:200]))
    phase1 = before + slow + during
    suite.check("every job finishes once the object store is back", finished(phase1, 60), str(states(phase1)))
    bad = content_matches(phase1)
    suite.check("every job's content is byte-identical from both nodes", not bad, "; ".join(bad[:5]))
    suite.check("the downloads kept their bytes: each fetched from the origin once",
                all(fetched(n) == SLOW_SIZE for n in slow), str({n: fetched(n) for n in slow}))

    # -- 2. the database goes away -----------------------------------------------------------------------
    log("2. database lost while downloads run")
    slow2 = ["slow-2.bin", "slow-3.bin"]
    for name, node in zip(slow2, nodes):
        response = submit(node, name)
        suite.check("job %s accepted on %s" % (name, node.name), response.status == 201, repr(response))
    S.wait_until(lambda: all((job(n) or {}).get("state") == "downloading" for n in slow2), 20)
    cut = time.time()
    pg.crash()
    suite.check("both nodes not ready within 10 s, naming the job store", not_ready_naming(nodes, "job store", 10),
                "%s %s" % (ready(a), ready(b)))
    try:
        response = submit(a, "small-4.bin")
        refused = response.status == 503 and (response.json() or {}).get("error", {}).get("code") == "unavailable"
        detail = "%d %r" % (response.status, response.body[:200])
    except OSError as error:
        refused, detail = False, str(error)
    suite.check("a new job is refused with 503 unavailable while the database is away", refused, detail)
    ids.pop("small-4.bin", None)
    # The database stays away for longer than the lease (every lease runs out meanwhile): the nodes fence
    # themselves, stopping the downloads with their bytes kept, and continue them when it is back.
    time.sleep(C.LEASE * 3)
    stopped = [n for n in slow2 if 0 < fetched(n) < SLOW_SIZE]
    suite.check("the downloads stop while no node can renew its leases (fenced), keeping their bytes",
                len(stopped) == len(slow2), str({n: fetched(n) for n in slow2}))
    suite.check("both nodes stay up while the database is away", all(n.alive() for n in nodes))
    began = time.monotonic()
    pg.restart()
    back = time.time()
    log("   postgres back after %.1f s" % (time.monotonic() - began))
    suite.check("both nodes ready again within 30 s of the database's return", all_ready(nodes, 30),
                "%s %s" % (ready(a), ready(b)))
    submit(b, "small-5.bin")
    everything = phase1 + slow2 + ["small-5.bin"]
    suite.check("every job finishes once the database is back", finished(everything, 90), str(states(everything)))
    listed = {}
    for node in nodes:
        try:
            jobs = node.jobs()
        except RuntimeError as error:
            jobs = []
            log("   listing on %s failed: %s" % (node.name, error))
        listed[node.name] = sorted((j["id"], j["state"], j.get("sha256")) for j in jobs)
    expected = sorted((ids[n], "finished", sha[n]) for n in everything)
    suite.check("each job listed once, finished with its SHA-256, the same on both nodes",
                listed[a.name] == expected and listed[b.name] == expected,
                "%d and %d listed, %d expected" % (len(listed[a.name]), len(listed[b.name]), len(expected)))
    bad = content_matches(slow2 + ["small-5.bin"])
    suite.check("the content of jobs that ran through the outage is byte-identical from both nodes", not bad,
                "; ".join(bad[:5]))
    suite.check("the downloads that ran through the outage were each fetched from the origin once",
                all(fetched(n) == SLOW_SIZE for n in slow2),
                "%s (sizes %d)" % ({n: fetched(n) for n in slow2}, SLOW_SIZE))
    log("   outage %.1f s" % (back - cut))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    suite = S.Suite("store-loss")
    S.run_suite(suite, lambda s: body(s, args))


if __name__ == "__main__":
    main()
