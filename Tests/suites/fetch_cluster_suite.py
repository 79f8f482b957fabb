#!/usr/bin/env python3
"""Fetch-through on several nodes (API.md, "Fetch-through", "Several nodes"): two `ferry serve` nodes on one
PostgreSQL and one SeaweedFS (started as cluster_suite does), an nginx origin serving a rate-limited file.

  - a client on one node starts the miss; while the job downloads, a client on the node NOT running it asks for the
    same URL: both get the whole file, and nginx's log shows one GET (one origin transfer across the nodes); the
    second client gets the head at once and the body from the readable copies of the parts as they are stored (5 MiB
    parts here), then the rest from the finished object: its first byte comes seconds before the job's last;
  - once finished, a hit on each node is served without contacting the origin (no request at all in nginx's log),
    with `Ferry-Cache: hit` and the same `Ferry-Job`;
  - a small file fetched through one node is then a hit on both (one of them did not run its job);
  - the node running a fetch is killed once parts are stored: the other node takes over from the stored parts and
    its client, streaming them meanwhile, gets the whole file (the origin sees a ranged GET, not the file again).

    FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_cluster_suite.py

Runs in well under 2 minutes. Every process is started and stopped by pid.
"""

import http.client as httpclient
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster_suite as C  # noqa: E402
import suitelib as S  # noqa: E402
from fetch_tools import LOG_FIELDS, curl_head  # noqa: E402

SLOW_SIZE = 16 << 20  # three parts of 5 MiB and a short one
SLOW_RATE = 1_500_000  # bytes/s per connection: about 11 s for the file, a part every 3.5 s


class FetchNode(C.Node):
    """A cluster node that fetches through from the origin."""

    def __init__(self, name, binary, directory, store, object_store, origin_port):
        for sub in ("spool", "logs"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        super().__init__(name, binary, os.path.join(directory, "spool"), os.path.join(directory, "logs"), store,
                         object_store, max_concurrent=4)
        self.origin_port = origin_port

    def command(self):
        return super().command() + ["--fetch-allow", "127.0.0.1:%d" % self.origin_port]


class Client(threading.Thread):
    """One curl of a URL through a node: its exit code, status, headers and body, and when it began and ended."""

    def __init__(self, node, path):
        super().__init__(daemon=True)
        self.url = "http://127.0.0.1:%d%s" % (node.port, path)
        self.began = self.first_byte = self.ended = None
        self.code, self.status, self.headers, self.body = None, None, {}, b""

    def run(self):
        self.began = time.monotonic()
        self.code, self.status, self.headers, self.body = curl_head(
            ["-H", "Authorization: Bearer " + C.TOKEN, self.url], timeout=120)
        self.ended = time.monotonic()


def first_byte_time(node, path):
    """GET `path` on `node`: status, headers, body, and the seconds from the request to its first body byte."""
    connection = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=120)
    try:
        began = time.monotonic()
        connection.request("GET", path, headers=C.AUTH)
        response = connection.getresponse()
        first = response.read(1)
        at = time.monotonic() - began
        rest = response.read()
        return response.status, dict((k.lower(), v) for k, v in response.getheaders()), first + rest, at
    finally:
        connection.close()


def bucket_keys(seaweed):
    """Every key in the bucket (ListObjectsV2, signed by the curl command)."""
    out = subprocess.run(["curl", "-s", "--max-time", "10", "--noproxy", "*", "--aws-sigv4",
                          "aws:amz:%s:s3" % C.REGION, "-u", "%s:%s" % (C.ACCESS_KEY, C.SECRET_KEY),
                          "http://127.0.0.1:%d/%s?list-type=2" % (seaweed.port, C.BUCKET)],
                         capture_output=True, timeout=15).stdout.decode("utf-8", "replace")
    return re.findall(r"<Key>([^<]*)</Key>", out)


def origin_requests(nginx, name):
    return [entry for entry in nginx.access_log() if entry["path"].rsplit("/", 1)[-1] == name]


def job_state(node, job_id):
    job = node.job(job_id) or {}
    return job.get("state"), job.get("node")


def burst(suite, nodes, nginx, files):
    """8 clients on each node ask for a new URL at the same instant: before either node sees the other's job, both
    may create one; the younger is cancelled at once (FetchClusterDedupe) and every client follows the older."""
    path = "/fetch/http/127.0.0.1:%d/slow/burst.bin?rate=%d" % (nginx.port, 4 * SLOW_RATE)
    clients = [Client(node, path) for _ in range(8) for node in nodes]  # a, b, a, b, ...: the first two together
    for client in clients:
        client.start()
    for client in clients:
        client.join(120)
    whole = sum(client.status == 200 and client.body == files["burst.bin"] for client in clients)
    suite.check("a burst of 16 clients on two nodes: each gets the whole file", whole == 16, "%d of 16" % whole)
    gets = origin_requests(nginx, "burst.bin")
    sent = sum(g["bytes"] for g in gets)
    jobs = [job for job in (nodes[0].request("GET", "/api/v1/jobs?tag=fetch").json() or {}).get("jobs", [])
            if "/burst.bin" in job["url"]]
    answered = set(client.headers.get("ferry-job") for client in clients)
    S.log("  figure: burst: %d jobs (%s), origin GETs sending %s bytes, %s in all for a file of %s"
          % (len(jobs), ", ".join("%s %s" % (j["id"][:6], j["state"]) for j in jobs), [g["bytes"] for g in gets],
             S.fmt_bytes(sent), S.fmt_bytes(len(files["burst.bin"]))))
    suite.check("a burst of 16 clients on two nodes is answered by one job", len(answered) == 1, str(answered))
    # Both nodes may create a job in the same instant; the younger is cancelled as soon as it is seen (what nginx had
    # put in the socket buffers by then counts as sent), so only one GET sends the file.
    suite.check("a burst of 16 clients on two nodes costs one origin transfer (any other GET cut at once)",
                sum(g["bytes"] >= len(files["burst.bin"]) for g in gets) == 1
                and sent < 2 * len(files["burst.bin"]) - (1 << 20), "GETs sending %s" % [g["bytes"] for g in gets])


def handover(suite, nodes, nginx, seaweed, files):
    """The node running a fetch is killed (SIGKILL) once parts are stored: the other node takes the job over from the
    stored parts, and its client, streaming them meanwhile, still gets the whole file, never a spliced one."""
    path = "/fetch/http/127.0.0.1:%d/slow/handover.bin?rate=%d" % (nginx.port, SLOW_RATE)
    opener = Client(nodes[0], path)
    opener.start()
    found = {}

    def running():
        listed = nodes[0].request("GET", "/api/v1/jobs?tag=fetch").json() or {}
        for job in listed.get("jobs", []):
            if "/handover.bin" in job["url"] and job["state"] == "downloading" and job.get("node"):
                found.update(job)
                return True
        return False

    S.wait_until(running, 30, 0.05)
    victim = next((n for n in nodes if n.name == found.get("node")), nodes[0])
    survivor = nodes[1] if victim is nodes[0] else nodes[0]
    result = {}
    reader = threading.Thread(target=lambda: result.update(zip(("status", "headers", "data", "ttfb"),
                                                               first_byte_time(survivor, path))), daemon=True)
    reader.start()
    S.wait_until(lambda: any(".live-part-" in key and found.get("id", "x") in key for key in bucket_keys(seaweed)),
                 30, 0.2)
    time.sleep(0.5)
    victim.kill9()
    S.log("  handover: killed %s running %s; the client of %s waits" % (victim.name, found.get("id"), survivor.name))
    reader.join(90)
    opener.join(30)
    data = result.get("data", b"")
    suite.check("after the running node is killed, the other node's client gets the whole file",
                result.get("status") == 200 and data == files["handover.bin"],
                "status %s, %d bytes" % (result.get("status"), len(data)))
    gets = origin_requests(nginx, "handover.bin")
    suite.check("the node taking over resumed from the stored parts (a ranged GET at the origin)",
                len(gets) >= 2 and any(g["range"] and not g["range"].startswith("bytes=0-") for g in gets[1:]),
                str([(g["status"], g["range"]) for g in gets]))
    victim.start(timeout=60)


def body(suite):
    os.environ["AWS_ACCESS_KEY_ID"] = C.ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = C.SECRET_KEY
    os.environ["FERRY_OBJECT_PART_SIZE"] = str(C.PART_SIZE)
    workdir = S.temp_dir("ferry-fetch-cluster")
    binary = S.ferry_binary(workdir)
    root = S.temp_dir("ferry-fetch-cluster-origin")
    files = {"slow.bin": os.urandom(SLOW_SIZE), "small.bin": os.urandom(300_000), "handover.bin": os.urandom(SLOW_SIZE),
             "burst.bin": os.urandom(16 << 20)}
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(data)
    nginx = S.Nginx(root, S.temp_dir("ferry-fetch-cluster-nginx"), extra_log_fields=LOG_FIELDS).start()
    S.CLEANUP.push("stop nginx", nginx.stop)
    pg = C.Postgres().start()
    seaweed = C.Seaweed(S.temp_dir("ferry-fetch-cluster-weed")).start()
    object_store = "s3://%s/fetch?endpoint=http://127.0.0.1:%d&region=%s" % (C.BUCKET, seaweed.port, C.REGION)
    nodes = []
    for name in ["node-a", "node-b"]:
        node = FetchNode(name, binary, S.temp_dir("ferry-fetch-cluster-" + name), pg.url(), object_store, nginx.port)
        node.start(timeout=60)
        nodes.append(node)
    a, b = nodes
    S.log("started PostgreSQL, SeaweedFS, nginx and two nodes")

    # A miss on node A; while the job downloads, the same URL on the node not running it.
    slow = "/fetch/http/127.0.0.1:%d/slow/slow.bin?rate=%d" % (nginx.port, SLOW_RATE)
    first = Client(a, slow)
    first.start()
    job_id, running_on = None, None

    def downloading():
        nonlocal job_id, running_on
        listed = a.request("GET", "/api/v1/jobs?tag=fetch").json() or {}
        for job in listed.get("jobs", []):
            if job["url"].endswith("/slow/slow.bin?rate=%d" % SLOW_RATE) and job["state"] == "downloading" \
                    and job.get("node") and job.get("bytesReceived", 0) > 0:
                job_id, running_on = job["id"], job["node"]
                return True
        return False

    suite.check("the miss's job downloads on a node", S.wait_until(downloading, 30, 0.05), "no downloading job")
    other = b if running_on == a.name else a
    S.log("  the job %s runs on %s; the second client asks %s" % (job_id, running_on, other.name))
    seen_copies = set()
    watching = threading.Event()

    def watch_copies():
        while not watching.is_set():
            seen_copies.update(key for key in bucket_keys(seaweed) if ".live-part-" in key)
            time.sleep(0.5)

    watcher = threading.Thread(target=watch_copies, daemon=True)
    watcher.start()
    second_began = time.monotonic()
    status, headers, data, ttfb = first_byte_time(other, slow)
    second_ended = time.monotonic()
    first.join(120)
    watching.set()
    watcher.join(10)
    suite.check("the running node stored readable copies of the parts while downloading", len(seen_copies) >= 2,
                str(sorted(seen_copies)))
    finished_at = None
    S.wait_until(lambda: job_state(other, job_id or "x")[0] == "finished", 30, 0.05)
    job = other.job(job_id or "x") or {}
    if job.get("finishedAt"):
        finished_at = job["finishedAt"]
    suite.check("the first client gets the whole file", first.code == 0 and first.status == 200
                and first.body == files["slow.bin"], "exit %s status %s, %d bytes" % (first.code, first.status,
                                                                                    len(first.body)))
    suite.check("a client of the node not running the job gets the whole file", status == 200
                and data == files["slow.bin"], "status %s, %d bytes" % (status, len(data)))
    suite.check("that client is answered from the same job as a miss", headers.get("ferry-job") == job_id
                and headers.get("ferry-cache") == "miss", str(headers))
    gets = origin_requests(nginx, "slow.bin")
    suite.check("two clients on two nodes cost one origin GET", len(gets) == 1,
                "%d requests: %s" % (len(gets), [(g["status"], g["range"]) for g in gets]))
    # The job's end, as the second client saw it: its last byte against the first client's.
    S.log("  figure: second client (other node): first byte after %.2f s, whole after %.2f s; first client whole "
          "after %.2f s; job finished at %s" % (ttfb, second_ended - second_began, first.ended - first.began,
                                                 finished_at))
    suite.check("the other node streams the stored parts while the job downloads (first byte 1 s or more before the "
                "first client's last)", second_began + ttfb < first.ended - 1.0,
                "first byte %.2f s after asking, first client ended %.2f s after it" % (ttfb, first.ended - second_began))
    suite.check("the other node's client has the whole file within 3 s of the first's", second_ended <= first.ended + 3.0,
                "ended %.2f s after the first client" % (second_ended - first.ended))

    # Hits on both nodes: no request at the origin.
    for node in (a, b):
        code, status, hit_headers, data = curl_head(["-H", "Authorization: Bearer " + C.TOKEN,
                                                     "http://127.0.0.1:%d%s" % (node.port, slow)])
        suite.check("a hit on %s is served from the object store" % node.name, status == 200
                    and data == files["slow.bin"] and hit_headers.get("ferry-cache") == "hit"
                    and hit_headers.get("ferry-job") == job_id, "status %s %s" % (status, hit_headers))
    suite.check("hits on both nodes never contact the origin", len(origin_requests(nginx, "slow.bin")) == 1,
                str(len(origin_requests(nginx, "slow.bin"))))

    # A small file fetched whole on one node is a hit on the other.
    small = "/fetch/http/127.0.0.1:%d/small.bin" % nginx.port
    code, status, miss, data = curl_head(["-H", "Authorization: Bearer " + C.TOKEN,
                                          "http://127.0.0.1:%d%s" % (a.port, small)])
    suite.check("a small miss on node-a", status == 200 and data == files["small.bin"] and miss.get("ferry-cache") == "miss",
                str(miss))
    S.wait_until(lambda: job_state(b, miss.get("ferry-job", "x"))[0] == "finished", 15, 0.05)
    for node in (a, b):  # one of them did not run the job, whichever did
        code, status, hit, data = curl_head(["-H", "Authorization: Bearer " + C.TOKEN,
                                             "http://127.0.0.1:%d%s" % (node.port, small)])
        suite.check("the small file on %s is a hit from the same job" % node.name, status == 200
                    and data == files["small.bin"] and hit.get("ferry-cache") == "hit"
                    and hit.get("ferry-job") == miss.get("ferry-job"), str(hit))
    suite.check("the small file's hits never contact the origin", len(origin_requests(nginx, "small.bin")) == 1,
                str([(e["status"], e["range"]) for e in origin_requests(nginx, "small.bin")]))

    live = lambda: [key for key in bucket_keys(seaweed) if ".live-part-" in key]  # noqa: E731
    S.wait_until(lambda: not live(), 10, 0.2)
    suite.check("the readable copies of the parts are deleted once the job finished", not live()
                and any(key.endswith("/slow.bin") for key in bucket_keys(seaweed)), str(bucket_keys(seaweed)))

    burst(suite, nodes, nginx, files)
    handover(suite, nodes, nginx, seaweed, files)
    for node in nodes:
        node.stop()
    seaweed.stop()
    pg.stop()


if __name__ == "__main__":
    S.run_suite(S.Suite("fetch-cluster"), body)
