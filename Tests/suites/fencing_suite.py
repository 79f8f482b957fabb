#!/usr/bin/env python3
"""Fencing suite (issue 23): a node cut off from the database, or stopped past its lease, hands its job over and
writes nothing more for it: the delivery target gets one PUT and the webhook receiver one `job.finished` notice.

Started here, on 127.0.0.1, in temp directories, all stopped by pid (suitelib's CLEANUP), with the cluster
suite's fixtures: PostgreSQL, SeaweedFS (S3), nginx (`/slow/<name>?rate=N` caps a connection at N bytes/s; WebDAV
`PUT /upload/<name>` is the delivery target), a webhook receiver (counts notices by `webhook-id`), and two nodes
with `--lease 5s` and `--webhook-url`. Node A reaches PostgreSQL through a TCP relay this suite can freeze: it
stops passing bytes and keeps every socket open, as a network partition does (nothing answers, nothing closes).

Scenarios and checks:
  1. Partition: a rate-limited download with `deliver` runs on A; the relay freezes. A stops fetching before B
     takes the job over (the two nodes' requests for the file never overlap in nginx's log); B takes it over
     within the lease and a few seconds, finishes and delivers it; the relay heals. The target received one PUT
     (the right bytes), the receiver one `job.finished` notice for the job (one id); A's log says it fenced
     itself; B's `/metrics` counts the handover; A ends showing the job finished as B made it.
  2. Stopped past the lease: the same job shape runs on A, which is stopped (`SIGSTOP`) for twice the lease and
     continued (`SIGCONT`) once B has taken the job over. Again one PUT, one `job.finished` notice, A's view
     finished, and A counts the writes it did not make (`ferry_fenced_writes_total`).

Usage: python3 Tests/suites/fencing_suite.py [--keep]   (about 2 minutes; not in `make test` yet)
Last line: `N passed, N failed`; exit status 1 on any failure.
"""

import argparse
import hashlib
import http.server
import json
import os
import random
import re
import select
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_suite as C  # noqa: E402
import suitelib as S  # noqa: E402

LEASE = 5
SIZE = 6 << 20
RATE = 384 << 10  # about 16 s for the whole file on one connection
NAMES = ["node-a", "node-b"]


class Relay(threading.Thread):
    """A TCP relay from a free port of 127.0.0.1 to `target_port`. `freeze()` stops passing bytes both ways with
    every socket left open (a partition); `heal()` passes them again."""

    def __init__(self, target_port):
        super().__init__(daemon=True)
        self.target_port = target_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.flowing = threading.Event()
        self.flowing.set()
        self.stopped = False
        self.sockets = []
        self.lock = threading.Lock()
        S.CLEANUP.push("stop the relay", self.stop)

    def run(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, one, other):
        peers = {one: other, other: one}
        while not self.stopped:
            if not self.flowing.is_set():
                self.flowing.wait(0.2)  # frozen: nothing read, nothing written, nothing closed
                continue
            try:
                readable, _, _ = select.select([one, other], [], [], 0.2)
            except (OSError, ValueError):
                return
            for sock in readable:
                if not self.flowing.is_set():
                    break
                try:
                    data = sock.recv(65536)
                    if not data:
                        raise OSError("closed")
                    peers[sock].sendall(data)
                except OSError:
                    for s in (one, other):
                        try:
                            s.close()
                        except OSError:
                            pass
                    return

    def freeze(self):
        self.flowing.clear()

    def heal(self):
        self.flowing.set()

    def stop(self):
        self.stopped = True
        self.flowing.set()
        try:
            self.listener.close()
        except OSError:
            pass
        with self.lock:
            for sock in self.sockets:
                try:
                    sock.close()
                except OSError:
                    pass


class Receiver:
    """A webhook receiver on a free port: records every notice (its `webhook-id`, type and job id) and answers 200."""

    def __init__(self):
        self.notices = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                try:
                    payload = json.loads(body)
                except ValueError:
                    payload = {}
                with receiver.lock:
                    receiver.notices.append({"id": self.headers.get("webhook-id"), "type": payload.get("type"),
                                             "job": (payload.get("data") or {}).get("id"), "at": time.time()})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        S.CLEANUP.push("stop the webhook receiver", self.server.shutdown)

    def finished(self, job_id):
        """Ids of the `job.finished` notices received for `job_id` (an id sent again appears again)."""
        with self.lock:
            return [n["id"] for n in self.notices if n["type"] == "job.finished" and n["job"] == job_id]


class FencedNode(C.Node):
    """A cluster node with `--lease 5s` and the suite's webhook receiver."""

    def __init__(self, name, binary, spool, logdir, store, object_store, webhook_url):
        super().__init__(name, binary, spool, logdir, store, object_store, max_concurrent=2)
        self.webhook_url = webhook_url

    def command(self):
        args = super().command()
        args[args.index("--lease") + 1] = "%ds" % LEASE
        return args + ["--webhook-url", self.webhook_url]

    def metric(self, name):
        try:
            text = S.http(self.port, "GET", "/metrics", headers=C.AUTH, timeout=5).body.decode()
        except OSError:
            return None
        match = re.search(r"^%s (\d+)" % re.escape(name), text, re.M)
        return int(match.group(1)) if match else None


def body(suite, args):
    log = S.log
    work = S.temp_dir("ferry-fencing-", keep=args.keep)
    os.environ["AWS_ACCESS_KEY_ID"] = C.ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = C.SECRET_KEY
    os.environ["FERRY_OBJECT_PART_SIZE"] = str(C.PART_SIZE)
    source = os.environ.get("FERRY_BIN") or os.path.join(S.REPO, ".build", "debug", "ferry")
    os.environ["FERRY_BIN"] = source
    binary = S.ferry_binary(work)

    rng = random.Random(23)
    root = os.path.join(work, "www")
    os.makedirs(os.path.join(root, "upload"))
    files = ["partition.bin", "stopped.bin"]
    sha = {name: S.write_random_file(os.path.join(root, name), SIZE, rng) for name in files}

    pg = C.Postgres(survives_crash=True).start()
    relay = Relay(pg.port)
    relay.start()
    seaweed = C.Seaweed(S.temp_dir("ferry-fencing-weed")).start()
    nginx = S.Nginx(root, os.path.join(work, "nginx"), extra_log_fields=C.LOG_FIELDS).start()
    receiver = Receiver()
    log("postgres :%d (node A through relay :%d), seaweedfs :%d, nginx :%d, receiver :%d"
        % (pg.port, relay.port, seaweed.port, nginx.port, receiver.port))
    object_store = "s3://%s/jobs?endpoint=http://127.0.0.1:%d&region=%s" % (C.BUCKET, seaweed.port, C.REGION)
    stores = {"node-a": "postgres://ferry@127.0.0.1:%d/postgres" % relay.port, "node-b": pg.url()}
    nodes = {}
    for name in NAMES:
        directory = os.path.join(work, name)
        os.makedirs(os.path.join(directory, "logs"))
        nodes[name] = FencedNode(name, binary, os.path.join(directory, "spool"), os.path.join(directory, "logs"),
                                 stores[name], object_store, "http://127.0.0.1:%d/hook" % receiver.port)
    a, b = nodes["node-a"], nodes["node-b"]

    def job(node, job_id):
        try:
            response = node.request("GET", "/api/v1/jobs/" + job_id, timeout=5)
        except OSError:
            return {}
        return response.json() if response.status == 200 else {}

    def run_on_a(name):
        """Submits `name` on A while B is not running, so that A claims it; returns its id once A downloads it."""
        response = a.request("POST", "/api/v1/jobs", {
            "url": nginx.url("/slow/%s?rate=%d" % (name, RATE)), "filename": name, "connections": 1,
            "dedupe": False, "deliver": {"url": nginx.url("/upload/" + name)}})
        suite.check("job %s accepted on node A" % name, response.status == 201, repr(response))
        job_id = response.json()["id"]
        running = S.wait_until(lambda: job(a, job_id).get("node") == "node-a"
                               and job(a, job_id).get("bytesReceived", 0) > (1 << 20), 30)
        suite.check("node A downloads %s" % name, running, str(job(a, job_id)))
        return job_id

    def gets(name):
        """nginx's GETs of the file: (start, end) of each, by its log time and duration."""
        spans = []
        for entry in nginx.access_log():
            if entry["method"] == "GET" and entry["path"].startswith("/slow/" + name):
                end = float(entry["extra"]["$msec"])
                spans.append((end - float(entry["extra"]["$request_time"]), end, entry["bytes"]))
        return sorted(spans)

    def puts(name):
        return [e["status"] for e in nginx.access_log() if e["method"] == "PUT" and e["path"] == "/upload/" + name]

    def check_once(name, job_id, settle):
        """After `settle` seconds more: one PUT with the right bytes, one job.finished notice, A's view finished."""
        done = S.wait_until(lambda: job(b, job_id).get("state") == "finished", 60)
        suite.check("%s finishes on node B" % name, done, str(job(b, job_id)))
        time.sleep(settle)
        seen = puts(name)
        suite.check("%s: the target received one PUT" % name, len(seen) == 1 and 200 <= seen[0] < 300, str(seen))
        uploaded = os.path.join(root, "upload", name)
        digest = hashlib.sha256(open(uploaded, "rb").read()).hexdigest() if os.path.exists(uploaded) else None
        suite.check("%s: the delivered file is the origin's" % name, digest == sha[name])
        ids = receiver.finished(job_id)
        suite.check("%s: one job.finished notice (one id)" % name, len(set(ids)) == 1, str(ids))
        suite.check("%s: node A shows the job finished as node B made it" % name,
                    S.wait_until(lambda: job(a, job_id).get("state") == "finished", 20), str(job(a, job_id)))
        suite.check("%s: finished with the origin's SHA-256" % name, job(b, job_id).get("sha256") == sha[name])

    # -- 1. partition --------------------------------------------------------------------------------------
    log("1. node A cut off from the database while it downloads")
    a.start(timeout=60)
    job_id = run_on_a("partition.bin")
    b.start(timeout=60)
    cut = time.monotonic()
    relay.freeze()
    taken = S.wait_until(lambda: job(b, job_id).get("node") == "node-b", LEASE + 15, interval=0.2)
    took = time.monotonic() - cut
    suite.check("node B takes the job over within the lease and a few seconds (%.1f s)" % took,
                taken and took < LEASE + 8, str(job(b, job_id)))
    fenced = S.wait_until(lambda: "not renewed in time" in a.log_text(), 5)
    suite.check("node A says it fenced itself", fenced)
    done = S.wait_until(lambda: job(b, job_id).get("state") == "finished", 60)
    relay.heal()
    log("   healed %.1f s after the cut" % (time.monotonic() - cut))
    suite.check("the job finished while node A was cut off", done, str(job(b, job_id)))
    # nginx logs a request when it ends: A's, cut by its fence, must end before B's begins.
    spans = gets("partition.bin")
    suite.check("node A stopped fetching before node B started (the requests never overlap)",
                len(spans) >= 2 and all(spans[i][1] <= spans[i + 1][0] + 0.05 for i in range(len(spans) - 1)),
                str(spans))
    check_once("partition.bin", job_id, settle=2 * LEASE)
    suite.check("node B counts the handover (ferry_handovers_total)", (b.metric("ferry_handovers_total") or 0) >= 1,
                str(b.metric("ferry_handovers_total")))

    # -- 2. stopped past the lease -------------------------------------------------------------------------
    log("2. node A stopped past its lease while it downloads, then continued")
    b.stop()
    job_id = run_on_a("stopped.bin")
    b.start(timeout=60)
    os.kill(a.process.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        taken = S.wait_until(lambda: job(b, job_id).get("node") == "node-b", LEASE + 15, interval=0.2)
        suite.check("node B takes the job of the stopped node over (%.1f s)" % (time.monotonic() - stopped),
                    taken, str(job(b, job_id)))
        time.sleep(max(0.0, 2 * LEASE - (time.monotonic() - stopped)))
    finally:
        os.kill(a.process.pid, signal.SIGCONT)
    log("   continued after %.1f s" % (time.monotonic() - stopped))
    check_once("stopped.bin", job_id, settle=2 * LEASE)
    fenced_writes = a.metric("ferry_fenced_writes_total")
    log("   node A: ferry_fenced_writes_total %s" % fenced_writes)
    suite.check("node A is still up and serving", a.alive() and fenced_writes is not None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    suite = S.Suite("fencing")
    S.run_suite(suite, lambda s: body(s, args))


if __name__ == "__main__":
    main()
