#!/usr/bin/env python3
"""Chaos suite (issue 23): three nodes on one PostgreSQL and one S3 store run a mix of jobs while, at random, a
node is killed (`kill -9`) and started again, stopped past its lease (`SIGSTOP`, then `SIGCONT`), cut off from the
database (its relay stops passing bytes, sockets kept open) and healed, the object store is stopped for a while,
and PostgreSQL is restarted.

Started here, on 127.0.0.1, in temp directories, all stopped by pid (suitelib's CLEANUP), with the fencing suite's
fixtures: PostgreSQL, SeaweedFS, nginx (`/slow/<name>?rate=N`; WebDAV `PUT /upload/<name>` as delivery target), a
webhook receiver, a relay per node to PostgreSQL, and three nodes with `--lease 5s` and `--webhook-url`.

Jobs: small files, rate-limited files on one connection, rate-limited files split over two, a third of them with
`deliver`. At the end, every fault healed:
  - every job finished once (listed once on every node) with the right SHA-256;
  - every delivery target received its file whole once (one 2xx PUT; a request cut off by a fenced node may show
    as an unfinished PUT, counted apart);
  - every job got one `job.finished` notice id (an id sent again is counted, never a second id);
  - no orphan object (one object per job) and no unfinished multipart upload;
  - origin bytes fetched at most the files' sizes plus one part per interruption (figures printed).

Usage: python3 Tests/suites/chaos_suite.py [--quick] [--keep] [--seed N]
  --quick: 30 jobs and 90 s of faults (a few minutes); default 200 jobs and 5 minutes of faults.
Last line: `N passed, N failed`; exit status 1 on any failure.
"""

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_suite as C  # noqa: E402
import fencing_suite as F  # noqa: E402
import suitelib as S  # noqa: E402

SMALL = 64 << 10
SLOW = (3 << 20, 256 << 10)   # size, bytes/s per connection: about 12 s
SPLIT = (12 << 20, 512 << 10)  # on two connections: about 12 s
NODE_NAMES = ["node-a", "node-b", "node-c"]


def s3_list(port, query):
    """The body of a signed GET of the bucket with `query` (ListObjectsV2, ListMultipartUploads); '' if none.
    SeaweedFS checks the payload hash header, which curl does not send by itself."""
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    try:
        out = subprocess.run(["curl", "-s", "--max-time", "10", "--noproxy", "*", "--aws-sigv4",
                              "aws:amz:%s:s3" % C.REGION, "-u", "%s:%s" % (C.ACCESS_KEY, C.SECRET_KEY),
                              "-H", "x-amz-content-sha256: " + empty,
                              "http://127.0.0.1:%d/%s?%s" % (port, C.BUCKET, query)], capture_output=True, timeout=15)
        return out.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return ""


def body(suite, args):
    log = S.log
    rng = random.Random(args.seed)
    work = S.temp_dir("ferry-chaos-", keep=args.keep)
    os.environ["AWS_ACCESS_KEY_ID"] = C.ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = C.SECRET_KEY
    os.environ["FERRY_OBJECT_PART_SIZE"] = str(C.PART_SIZE)
    source = os.environ.get("FERRY_BIN") or os.path.join(S.REPO, ".build", "debug", "ferry")
    os.environ["FERRY_BIN"] = source
    binary = S.ferry_binary(work)

    count, chaos_seconds = (30, 90) if args.quick else (200, 300)
    root = os.path.join(work, "www")
    os.makedirs(os.path.join(root, "upload"))
    specs = []
    for i in range(count):
        kind = ["small", "slow", "split"][i % 3]
        size = {"small": SMALL, "slow": SLOW[0], "split": SPLIT[0]}[kind]
        specs.append({"name": "%s-%03d.bin" % (kind, i), "kind": kind, "size": size, "deliver": i % 3 == (i // 3) % 3})
    sha = {s["name"]: S.write_random_file(os.path.join(root, s["name"]), s["size"], rng) for s in specs}

    pg = C.Postgres(survives_crash=True).start()
    seaweed = C.Seaweed(S.temp_dir("ferry-chaos-weed")).start()
    nginx = S.Nginx(root, os.path.join(work, "nginx"), extra_log_fields=C.LOG_FIELDS).start()
    receiver = F.Receiver()
    object_store = "s3://%s/jobs?endpoint=http://127.0.0.1:%d&region=%s" % (C.BUCKET, seaweed.port, C.REGION)
    relays, nodes = {}, {}
    for name in NODE_NAMES:
        relay = F.Relay(pg.port)
        relay.start()
        relays[name] = relay
        directory = os.path.join(work, name)
        os.makedirs(os.path.join(directory, "logs"))
        node = F.FencedNode(name, binary, os.path.join(directory, "spool"), os.path.join(directory, "logs"),
                            "postgres://ferry@127.0.0.1:%d/postgres" % relay.port, object_store,
                            "http://127.0.0.1:%d/hook" % receiver.port)
        node.max_concurrent = 4
        node.start(timeout=60)
        nodes[name] = node
    log("postgres :%d, seaweedfs :%d, nginx :%d, receiver :%d, %d jobs, %d s of faults"
        % (pg.port, seaweed.port, nginx.port, receiver.port, count, chaos_seconds))

    ids = {}
    for i, spec in enumerate(specs):
        node = nodes[NODE_NAMES[i % 3]]
        path = "/" + spec["name"]
        request = {"filename": spec["name"], "dedupe": False}
        if spec["kind"] == "slow":
            path, request["connections"] = "/slow/%s?rate=%d" % (spec["name"], SLOW[1]), 1
        elif spec["kind"] == "split":
            path, request["connections"] = "/slow/%s?rate=%d" % (spec["name"], SPLIT[1]), 2
        request["url"] = nginx.url(path)
        if spec["deliver"]:
            request["deliver"] = {"url": nginx.url("/upload/" + spec["name"])}
        response = node.request("POST", "/api/v1/jobs", request)
        if response.status == 201:
            ids[spec["name"]] = response.json()["id"]
    suite.check("every job accepted", len(ids) == count, "%d of %d" % (len(ids), count))

    # -- faults, one at a time, each healed before the next ------------------------------------------------
    interruptions = 0
    faults = {}
    end = time.monotonic() + chaos_seconds
    while time.monotonic() < end:
        time.sleep(rng.uniform(3, 7))
        fault = rng.choice(["kill", "stop", "cut", "objects", "database"])
        faults[fault] = faults.get(fault, 0) + 1
        name = rng.choice(NODE_NAMES)
        node = nodes[name]
        log("   %5.1f s: %s %s" % (chaos_seconds - (end - time.monotonic()), fault,
                                    name if fault in ("kill", "stop", "cut") else ""))
        if fault == "kill":
            node.kill9()
            time.sleep(1)
            node.start(timeout=60)
            interruptions += node.max_concurrent
        elif fault == "stop":
            os.kill(node.process.pid, signal.SIGSTOP)
            try:
                time.sleep(2 * F.LEASE)
            finally:
                os.kill(node.process.pid, signal.SIGCONT)
            interruptions += node.max_concurrent
        elif fault == "cut":
            relays[name].freeze()
            time.sleep(2 * F.LEASE)
            relays[name].heal()
            interruptions += node.max_concurrent
        elif fault == "objects":
            seaweed.stop()
            time.sleep(rng.uniform(3, 8))
            seaweed.restart()
        else:
            pg.crash()
            time.sleep(rng.uniform(1, 4))
            pg.restart()
            interruptions += len(NODE_NAMES) * 4
    log("faults: %s" % faults)

    # -- every job ends ------------------------------------------------------------------------------------
    def states():
        for node in nodes.values():
            try:
                return {j["id"]: j for j in node.jobs()}
            except (RuntimeError, OSError):
                continue
        return {}

    finished = S.wait_until(lambda: all(j.get("state") == "finished" for j in states().values())
                            and len(states()) == count, 240, interval=1)
    seen = states()
    left = {n: seen.get(i, {}).get("state") for n, i in ids.items() if seen.get(i, {}).get("state") != "finished"}
    suite.check("every job finishes", finished, str(left)[:600])
    time.sleep(2 * F.LEASE)  # late writers, if any, have had their chance

    expected = sorted((ids[n], "finished", sha[n]) for n in ids)
    for name, node in nodes.items():
        try:
            listed = sorted((j["id"], j["state"], j.get("sha256")) for j in node.jobs())
        except (RuntimeError, OSError) as error:
            listed = [str(error)]
        suite.check("%s lists every job once, finished with its SHA-256" % name, listed == expected,
                    "%d listed, %d expected" % (len(listed), len(expected)))

    delivered = [s["name"] for s in specs if s["deliver"] and s["name"] in ids]
    puts = {}
    for entry in nginx.access_log():
        if entry["method"] == "PUT" and entry["path"].startswith("/upload/"):
            puts.setdefault(entry["path"][len("/upload/"):], []).append(entry["status"])
    twice = {n: puts.get(n) for n in delivered if len([s for s in puts.get(n, []) if 200 <= s < 300]) != 1}
    suite.check("every delivery target received its file whole once", not twice, str(twice)[:600])
    wrong = [n for n in delivered if not os.path.exists(os.path.join(root, "upload", n))
             or S.file_sha256(os.path.join(root, "upload", n)) != sha[n]]
    suite.check("every delivered file is the origin's", not wrong, str(wrong[:10]))
    cut_puts = sum(len([s for s in v if not 200 <= s < 300]) for v in puts.values())

    notices = {n: receiver.finished(i) for n, i in ids.items()}
    bad = {n: v for n, v in notices.items() if len(set(v)) != 1}
    suite.check("every job got one job.finished notice id", not bad, str(bad)[:600])
    resent = sum(len(v) - len(set(v)) for v in notices.values())

    listing = s3_list(seaweed.port, "list-type=2&max-keys=1000&prefix=jobs%2F")
    pending = s3_list(seaweed.port, "uploads=")
    objects = len(re.findall(r"<Key>", listing))
    uploads = len(re.findall(r"<Upload>", pending))
    suite.check("one object per job, no orphan", "<ListBucketResult" in listing and objects == count,
                "%d objects, %d jobs: %s" % (objects, count, listing[:300]))
    suite.check("no unfinished multipart upload", "<ListMultipartUploadsResult" in pending and uploads == 0,
                "%d left: %s" % (uploads, ", ".join(re.findall(r"<Upload><Key>([^<]*)</Key>", pending)) or pending[:300]))

    fetched = sum(e["bytes"] for e in nginx.access_log() if e["method"] == "GET" and e["status"] in (200, 206))
    sizes = sum(s["size"] for s in specs if s["name"] in ids)
    allowance = sizes + interruptions * C.PART_SIZE
    suite.check("origin bytes fetched at most the sizes plus one part per interruption",
                fetched <= allowance, "%d fetched, %d allowed" % (fetched, allowance))
    # Counters since each node's last start (a killed node starts again from zero).
    handovers = sum(n.metric("ferry_handovers_total") or 0 for n in nodes.values())
    fenced = sum(n.metric("ferry_fenced_writes_total") or 0 for n in nodes.values())
    fenced_logs = sum(n.log_text().count("not renewed in time") for n in nodes.values())
    log("figures: %d jobs, faults %s; fetched %s for %s of files (%.3fx); %d cut PUTs; %d notices sent again "
        "(same id); %d handovers and %d fenced writes counted since the nodes' last starts, %d fences logged; "
        "%d objects, %d unfinished uploads"
        % (count, faults, S.fmt_bytes(fetched), S.fmt_bytes(sizes), fetched / max(1, sizes), cut_puts, resent,
           handovers, fenced, fenced_logs, objects, uploads))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 jobs, 90 s of faults")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    suite = S.Suite("chaos")
    S.run_suite(suite, lambda s: body(s, args))


if __name__ == "__main__":
    main()
