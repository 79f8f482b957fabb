#!/usr/bin/env python3
"""Ferry load suite: API clients, active downloads, SSE subscribers and slowloris connections, all at once.

    python3 Tests/suites/load_suite.py [--quick | --duration SECONDS | --soak 60m] [--keep] [sizes, see --help]

For the duration (default 60 s, and on until the replay window has been full for 30 s, at most 120 s in all, so
that a slow debug build is judged after its warm-up as well; --quick 15 s; --soak as given: 60m, 1h, 20m), at the
same time:
- 64 API clients (one asyncio process, raw sockets, keep-alive) loop over GET /api/v1/jobs/{id},
  GET /api/v1/jobs?limit=100 and POST of a small job (4 KiB from nginx);
- 200 downloads stay active: nginx on 127.0.0.1 (own config and pid file) serves a 6 MiB file with limit_rate;
  their URLs use 34 names dN.localhost (libcurl resolves *.localhost to loopback itself, no DNS) because Ferry
  caps transfers per host at 6;
- 1,000 SSE subscribers on /api/v1/events (asyncio, raw sockets): a sample of them subscribes to every job,
  the rest to 5 download ids each (?jobs=); each reconnects with Last-Event-ID if its stream is closed;
- 500 slowloris connections send a request line or headers one byte per second and reconnect when cut off;
- one sampler opens a fresh connection for GET /healthz every second; the main process reads VmRSS of Ferry
  every second.
Then the clients stop, the small jobs are let finish, the downloads are cancelled, the final job list is read and
the subscribers' records are compared with it.

Checks: zero failed API requests; no lost event (every subscriber's job-event ids after a common point are the
same set as the reference subscriber's, each job's last state seen equals the API's final state, every
subscriber's ids strictly increase, no `reset`, filters respected); all 200 downloads active throughout; every
small job finished; RSS growth from 1/3 of the run (or from when the replay window of 16,384 job events is first
full, if later: at this load it fills in about 30 s on the release build, 55–100 s on the debug build, which CI
runs) to the end <= 10% (not with --quick: 15 s is warm-up); /healthz p99 <= 100 ms; slowloris
connections cut off within the header timeout; Ferry exits 0 on SIGTERM.

--soak DURATION runs the same mix that long (the slow file grows so the downloads stay active), samples RSS every
10 s and checks instead that after the first ten minutes (a sixth of a shorter soak) every sample stays within
±10% (--rss-band) of the RSS at that point. Its subscribers keep compact records (a fingerprint of the event
ids after the load began, deleted jobs forgotten and counted) so that the client's own memory stays flat;
--rss-csv FILE writes the samples (VmRSS, RssAnon, RssFile).

Runs in a loopback-only network namespace when `unshare` allows it (same pid; see hlib.isolate_network).
Every process started is stopped by its pid (finally, atexit, SIGTERM/SIGINT/SIGHUP handlers).
Ends with `N passed, N failed`; exit 1 on a failure.
"""

import argparse
import array
import asyncio
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import socket
import statistics
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlib  # noqa: E402
from hlib import Results, log  # noqa: E402

TOKEN = "load-" + uuid.uuid4().hex
SLOW_FILE_SIZE = 6 * 1024 * 1024  # below Ferry's 8 MiB segmentation threshold; "connections": 1 anyway
SMALL_FILE_SIZE = 4096
PER_HOST = 6
SMALL_HOSTS = ["127.0.0.1", "s1.localhost", "s2.localhost", "s3.localhost"]
JOB_ID = re.compile(rb'^\{"id":"([^"]+)"')
JOB_STATE = re.compile(rb'"state":"([a-z]+)"')


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1)))))
    return ordered[k]


def ms(value):
    return "n/a" if value is None else "%.1f ms" % (value * 1000)


# --------------------------------------------------------------------------------------------------
# nginx


class Nginx:
    def __init__(self, workdir, rate, slow_size=SLOW_FILE_SIZE):
        self.dir = os.path.join(workdir, "nginx")
        self.www = os.path.join(self.dir, "www")
        self.rate = rate
        self.slow_size = slow_size
        self.port = None
        self.process = None

    def start(self):
        os.makedirs(self.www, exist_ok=True)
        os.makedirs(os.path.join(self.dir, "tmp"), exist_ok=True)
        for path in (os.path.dirname(self.dir), self.dir, self.www):
            os.chmod(path, 0o755)
        block = os.urandom(1 << 20)
        with open(os.path.join(self.www, "big.bin"), "wb") as handle:
            for _ in range(self.slow_size // len(block)):
                handle.write(block)
        with open(os.path.join(self.www, "small.bin"), "wb") as handle:
            handle.write(os.urandom(SMALL_FILE_SIZE))
        for name in ("big.bin", "small.bin"):
            os.chmod(os.path.join(self.www, name), 0o644)
        self.port = hlib.free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        tmp = os.path.join(self.dir, "tmp")
        with open(conf, "w") as handle:
            handle.write("""
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 16384;
pid %(dir)s/nginx.pid;
error_log %(dir)s/error.log warn;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path %(tmp)s/body;
    proxy_temp_path %(tmp)s/proxy;
    fastcgi_temp_path %(tmp)s/fastcgi;
    uwsgi_temp_path %(tmp)s/uwsgi;
    scgi_temp_path %(tmp)s/scgi;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:%(port)d backlog=4096;
        server_name _;
        location /slow/ { alias %(www)s/; limit_rate %(rate)d; }
        location /small/ { alias %(www)s/; }
    }
}
""" % {"dir": self.dir, "tmp": tmp, "port": self.port, "www": self.www, "rate": self.rate})
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = hlib.spawn([nginx, "-p", self.dir, "-e", os.path.join(self.dir, "error.log"), "-c", conf],
                                  log_path=os.path.join(self.dir, "stdout.log"))
        ok = hlib.wait_for(self._serving, 15, 0.1)
        if not ok:
            raise RuntimeError("nginx did not start: %s" % open(os.path.join(self.dir, "error.log")).read()[-2000:])
        return self

    def _serving(self):
        if self.process.poll() is not None:
            raise RuntimeError("nginx exited: %s" % open(os.path.join(self.dir, "error.log")).read()[-2000:])
        try:
            c = hlib.Client(self.port, timeout=2)
            r = c.get("/small/small.bin")
            c.close()
            return r.status == 200 and len(r.body) == SMALL_FILE_SIZE
        except OSError:
            return False

    def stop(self):
        if self.process:
            # SIGQUIT: graceful stop of the master, which stops its workers
            hlib.stop(self.process, grace=10, sig=signal.SIGQUIT)


# --------------------------------------------------------------------------------------------------
# A tiny asyncio HTTP/1.1 client on raw sockets


class HTTPError(Exception):
    pass


class FerryDied(Exception):
    """Ferry exited during the load (already reported as a failed check)."""


class AsyncConnection:
    def __init__(self, port, token):
        self.port = port
        self.token = token
        self.reader = None
        self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    def close(self):
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
        self.reader = self.writer = None

    async def request(self, method, path, body=None):
        if self.writer is None:
            await self.open()
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n" % (method, path, self.port, self.token)
        if body is not None:
            head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        data = (head + "\r\n").encode() + (body or b"")
        self.writer.write(data)
        status_line = await self.reader.readline()
        if not status_line:
            self.close()
            raise HTTPError("connection closed before a response")
        parts = status_line.split(b" ", 2)
        status = int(parts[1])
        length = None
        chunked = False
        close = False
        event_id = None
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            value = value.strip()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                chunked = True
            elif name == b"connection" and value.lower() == b"close":
                close = True
            elif name == b"ferry-event-id":
                event_id = int(value)
        if status in (204, 304) or 100 <= status < 200 or method == "HEAD":
            payload = b""
        elif chunked:
            pieces = []
            while True:
                size = int((await self.reader.readline()).split(b";")[0].strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                pieces.append(await self.reader.readexactly(size))
                await self.reader.readexactly(2)
            payload = b"".join(pieces)
        elif length is not None:
            payload = await self.reader.readexactly(length) if length else b""
        else:
            payload = await self.reader.read()
            close = True
        if close:
            self.close()
        return status, payload, event_id


# --------------------------------------------------------------------------------------------------
# Worker: API clients


def api_worker(port, token, clients, known_ids, small_base, stop_event, ready_event, conn, post_every, keep_live, nice):
    try:
        os.nice(nice)
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    result = asyncio.run(_api_main(port, token, clients, known_ids, small_base, stop_event, ready_event, post_every,
                                   keep_live))
    conn.send(result)
    conn.close()


async def _api_main(port, token, clients, known_ids, small_base, stop_event, ready_event, post_every, keep_live):
    kinds = ("get_job", "list", "post", "delete")
    counts = {k: 0 for k in kinds}
    latencies = {k: array.array("d") for k in kinds}
    failures = {k: 0 for k in kinds}
    failure_examples = []
    created = []
    deleted = []
    downloads = list(known_ids)
    stopping = False

    def fail(kind, detail):
        failures[kind] += 1
        if len(failure_examples) < 20:
            failure_examples.append("%s: %s" % (kind, detail))

    async def client(index):
        connection = AsyncConnection(port, token)
        rng = random.Random(index)
        n = 0
        host = SMALL_HOSTS[index % len(SMALL_HOSTS)]
        live = []  # this client's small jobs not yet deleted (oldest first)
        while not stopping:
            n += 1
            # GET /api/v1/jobs/{id}: a download, or one of this client's live small jobs
            job_id = rng.choice(live) if live and rng.random() < 0.5 else rng.choice(downloads)
            t0 = time.perf_counter()
            try:
                status, payload, _ = await asyncio.wait_for(connection.request("GET", "/api/v1/jobs/" + job_id), 30)
                latencies["get_job"].append(time.perf_counter() - t0)
                counts["get_job"] += 1
                if status != 200:
                    fail("get_job", "GET /api/v1/jobs/%s -> %d %s" % (job_id, status, payload[:200]))
                else:
                    job = json.loads(payload)
                    if job.get("id") != job_id:
                        fail("get_job", "GET /api/v1/jobs/%s answered job %s" % (job_id, job.get("id")))
            except Exception as error:
                counts["get_job"] += 1
                fail("get_job", "GET /api/v1/jobs/%s raised %s: %s" % (job_id, type(error).__name__, error))
                connection.close()
            if stopping:
                break
            # GET /api/v1/jobs?limit=100
            t0 = time.perf_counter()
            try:
                status, payload, event_id = await asyncio.wait_for(connection.request("GET", "/api/v1/jobs?limit=100"), 30)
                latencies["list"].append(time.perf_counter() - t0)
                counts["list"] += 1
                if status != 200:
                    fail("list", "GET /api/v1/jobs?limit=100 -> %d %s" % (status, payload[:200]))
                else:
                    body = json.loads(payload)
                    if not isinstance(body.get("jobs"), list) or len(body["jobs"]) > 100 or "next" not in body:
                        fail("list", "GET /api/v1/jobs?limit=100: unexpected body %s" % payload[:200])
                    elif event_id is None:
                        fail("list", "GET /api/v1/jobs?limit=100: no Ferry-Event-Id header")
            except Exception as error:
                counts["list"] += 1
                fail("list", "GET /api/v1/jobs?limit=100 raised %s: %s" % (type(error).__name__, error))
                connection.close()
            if stopping:
                break
            # POST a small job
            if n % post_every == 0:
                url = "http://%s:%d/small/small.bin?c=%d&n=%d&r=%s" % (host, small_base, index, n, uuid.uuid4().hex[:8])
                body = json.dumps({"url": url, "connections": 1}).encode()
                t0 = time.perf_counter()
                try:
                    status, payload, _ = await asyncio.wait_for(connection.request("POST", "/api/v1/jobs", body), 30)
                    latencies["post"].append(time.perf_counter() - t0)
                    counts["post"] += 1
                    if status != 201:
                        fail("post", "POST /api/v1/jobs %s -> %d %s" % (url, status, payload[:200]))
                    else:
                        job = json.loads(payload)
                        created.append(job["id"])
                        live.append(job["id"])
                except Exception as error:
                    counts["post"] += 1
                    fail("post", "POST /api/v1/jobs raised %s: %s" % (type(error).__name__, error))
                    connection.close()
            # DELETE the oldest small job once a client holds more than `keep_live` (bounded job count)
            if len(live) > keep_live and not stopping:
                victim = live.pop(0)
                t0 = time.perf_counter()
                try:
                    status, payload, _ = await asyncio.wait_for(connection.request("DELETE", "/api/v1/jobs/" + victim), 30)
                    latencies["delete"].append(time.perf_counter() - t0)
                    counts["delete"] += 1
                    if status != 204:
                        fail("delete", "DELETE /api/v1/jobs/%s -> %d %s" % (victim, status, payload[:200]))
                    else:
                        deleted.append(victim)
                except Exception as error:
                    counts["delete"] += 1
                    fail("delete", "DELETE /api/v1/jobs/%s raised %s: %s" % (victim, type(error).__name__, error))
                    connection.close()
        connection.close()

    tasks = [asyncio.ensure_future(client(i)) for i in range(clients)]
    ready_event.set()
    started = time.monotonic()
    while not stop_event.is_set():
        await asyncio.sleep(0.1)
    stopping = True
    await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.monotonic() - started
    return {
        "counts": counts, "failures": failures, "failure_examples": failure_examples, "created": created,
        "deleted": deleted,
        "elapsed": elapsed,
        "latency": {k: {"p50": percentile(list(v), 50), "p99": percentile(list(v), 99), "max": max(v) if v else None}
                    for k, v in latencies.items()},
    }


# --------------------------------------------------------------------------------------------------
# Worker: SSE subscribers


class IdFingerprint:
    """A set of event ids, in constant memory: count, sum and a sum of mixed hashes (each mod 2^64).

    Two subscribers whose ids strictly increase (checked separately) received the same set after e0 when
    their fingerprints are equal; a lost or extra id changes all three. Used by --soak, whose hour of events
    would not fit in per-subscriber id lists."""
    __slots__ = ("count", "total", "mixed")
    MASK = (1 << 64) - 1

    def __init__(self):
        self.count = self.total = self.mixed = 0

    def add(self, eid):
        self.count += 1
        self.total = (self.total + eid) & self.MASK
        h = (eid * 0x9E3779B97F4A7C15) & self.MASK
        h ^= h >> 29
        self.mixed = (self.mixed + ((h * 0xBF58476D1CE4E5B9) & self.MASK)) & self.MASK

    def key(self):
        return (self.count, self.total, self.mixed)


class Subscriber:
    __slots__ = ("index", "filter", "last_id", "violations", "violation_examples", "job_eids", "last_state",
                 "per_job_eids", "per_job_only", "count_job", "count_progress", "count_removed", "count_other",
                 "reconnects", "resets", "foreign", "connected", "errors", "raw", "text", "chunk_left", "ended",
                 "connects", "bad_heads", "compact", "after", "fingerprint", "removed_after")

    def __init__(self, index, job_filter, per_job_only, compact=False):
        """per_job_only: the jobs whose event ids are kept one by one (None: none); compact: --soak records
        (a fingerprint of the ids after e0 instead of every id; removed jobs forgotten, counted)."""
        self.index = index
        self.filter = set(job_filter) if job_filter else None
        self.last_id = None
        self.violations = 0
        self.violation_examples = []
        self.job_eids = array.array("q")
        self.last_state = {}
        self.per_job_only = set(per_job_only) if per_job_only is not None else None
        self.per_job_eids = {} if per_job_only is not None else None
        self.compact = compact
        self.after = None  # e0, once known (compact records start there)
        self.fingerprint = IdFingerprint()
        self.removed_after = 0
        self.count_job = self.count_progress = self.count_removed = self.count_other = 0
        self.reconnects = self.resets = self.foreign = 0
        self.connected = False
        self.errors = []
        self.connects = 0
        self.bad_heads = 0
        self.reset_buffers()

    def start_after(self, e0):
        """From now on a compact subscriber keeps only a fingerprint of the ids after e0."""
        self.after = e0
        if self.compact:
            for eid in self.job_eids:
                if eid > e0:
                    self.fingerprint.add(eid)
            self.job_eids = array.array("q")

    def record(self, job_id, eid, state):
        """A job or removed event: its id and the job's last state seen."""
        if self.compact and self.after is not None:
            if eid is not None and eid > self.after:
                self.fingerprint.add(eid)
                if state == "removed":
                    self.removed_after += 1
        else:
            self.job_eids.append(eid if eid is not None else -1)
        if self.compact and state == "removed":
            self.last_state.pop(job_id, None)  # gone for good: an hour of deleted jobs would not fit
        else:
            self.last_state[job_id] = (eid, state)
        if self.per_job_eids is not None and job_id in self.per_job_only:
            self.per_job_eids.setdefault(job_id, []).append(eid)

    def reset_buffers(self):
        self.raw = bytearray()
        self.text = bytearray()
        self.chunk_left = None  # None: expecting a size line; int: bytes of chunk data (+2 CRLF) left
        self.ended = False

    def feed(self, data):
        self.raw += data
        raw = self.raw
        pos = 0
        while True:
            if self.chunk_left is None:
                end = raw.find(b"\r\n", pos)
                if end < 0:
                    break
                size = int(bytes(raw[pos:end]).split(b";")[0].strip() or b"0", 16)
                pos = end + 2
                if size == 0:
                    self.ended = True
                    break
                self.chunk_left = size + 2
            else:
                take = min(self.chunk_left, len(raw) - pos)
                if take <= 0:
                    break
                self.text += raw[pos:pos + take]
                pos += take
                self.chunk_left -= take
                if self.chunk_left == 0:
                    del self.text[-2:]  # the CRLF after the chunk data
                    self.chunk_left = None
        del raw[:pos]
        self.parse_events()

    def parse_events(self):
        text = self.text
        start = 0
        while True:
            end = text.find(b"\n\n", start)
            if end < 0:
                break
            self.event(bytes(text[start:end]))
            start = end + 2
        if start:
            del text[:start]

    def event(self, block):
        eid = None
        etype = None
        data = None
        for line in block.split(b"\n"):
            if line.startswith(b"id:"):
                eid = int(line[3:].strip())
            elif line.startswith(b"event:"):
                etype = line[6:].strip()
            elif line.startswith(b"data:"):
                piece = line[5:]
                if piece.startswith(b" "):
                    piece = piece[1:]
                data = piece if data is None else data + b"\n" + piece
        if eid is None and etype is None and data is None:
            return  # retry: line or comment (": ping")
        if eid is not None:
            if self.last_id is not None and eid <= self.last_id:
                self.violations += 1
                if len(self.violation_examples) < 5:
                    self.violation_examples.append("id %d after %d (%s)" % (eid, self.last_id, etype))
            self.last_id = eid if self.last_id is None else max(eid, self.last_id)
        if etype == b"progress":
            self.count_progress += 1
            if self.filter is not None:
                id_match = JOB_ID.search(data)
                job_id = id_match.group(1).decode() if id_match else json.loads(data).get("id")
                if job_id not in self.filter:
                    self.foreign += 1
            return
        if etype == b"job":
            self.count_job += 1
            id_match = JOB_ID.search(data)
            state_match = JOB_STATE.search(data)
            if id_match and state_match:
                job_id, state = id_match.group(1).decode(), state_match.group(1).decode()
            else:
                job = json.loads(data)
                if "state" not in job and isinstance(job.get("job"), dict):
                    job = job["job"]
                job_id, state = job.get("id"), job.get("state")
            if self.filter is not None and job_id not in self.filter:
                self.foreign += 1
            self.record(job_id, eid, state)
            return
        if etype == b"removed":
            self.count_removed += 1
            job_id = json.loads(data).get("id")
            self.record(job_id, eid, "removed")
            return
        if etype == b"reset":
            self.resets += 1
            return
        self.count_other += 1


def sse_worker(port, token, plan, followed, compact, conn, nice):
    """plan: list of job-id lists (None for all jobs); followed: the jobs filtered subscribers follow (the
    reference keeps their event ids one by one); compact: --soak records. Talks to the main process over `conn`:
    sends {"connected"}, receives ("start", e0), then ("verify", ...) or ("abort",), and sends the report."""
    try:
        os.nice(nice)
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    hlib.raise_nofile()
    result = asyncio.run(_sse_main(port, token, plan, followed, compact, conn))
    conn.send(result)
    conn.close()


async def _sse_main(port, token, plan, followed, compact, conn):
    loop = asyncio.get_running_loop()
    subscribers = [Subscriber(i, job_filter, per_job_only=job_filter if job_filter is not None else
                              (followed if i == 0 else None), compact=compact)
                   for i, job_filter in enumerate(plan)]
    stopping = False

    async def run(sub):
        while not stopping:
            writer = None
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
                sub.connects += 1
                path = "/api/v1/events"
                if sub.filter is not None:
                    path += "?jobs=" + ",".join(sorted(sub.filter))
                head = "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n" % (
                    path, port, token)
                if sub.last_id is not None:
                    head += "Last-Event-ID: %d\r\n" % sub.last_id
                writer.write((head + "\r\n").encode())
                status_line = await reader.readline()
                status = int(status_line.split(b" ")[1]) if status_line.startswith(b"HTTP/1.1 ") else None
                chunked = False
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b""):
                        break
                    if line.lower().startswith(b"transfer-encoding:") and b"chunked" in line.lower():
                        chunked = True
                if status != 200 or not chunked:
                    sub.bad_heads += 1
                    if len(sub.errors) < 5:
                        sub.errors.append("stream answered %r (chunked=%s)" % (status_line[:80], chunked))
                    raise HTTPError("bad stream head")
                sub.reset_buffers()
                while not stopping:
                    data = await reader.read(65536)
                    if not data:
                        break
                    sub.feed(data)
                    sub.connected = True
                    if sub.ended:
                        break
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if len(sub.errors) < 5:
                    sub.errors.append("%s: %s" % (type(error).__name__, error))
            finally:
                if writer is not None:
                    try:
                        writer.close()
                    except Exception:
                        pass
            if stopping:
                break
            sub.reconnects += 1
            await asyncio.sleep(0.2 + random.random() * 0.3)

    tasks = []
    for i, sub in enumerate(subscribers):
        tasks.append(asyncio.ensure_future(run(sub)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    # Wait until every subscriber has its stream open (the preamble `retry:` arrived).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not all(s.connected for s in subscribers):
        await asyncio.sleep(0.1)
    connected = sum(1 for s in subscribers if s.connected)
    conn.send({"connected": connected})

    # Wait for the main process: ("start", e0), then ("verify", e0, final_states, changed_jobs, deleted_jobs)
    # or ("abort",). With compact records, final_states and changed_jobs leave out the deleted jobs.
    message = await loop.run_in_executor(None, conn.recv)
    if message[0] == "start":
        for sub in subscribers:
            sub.start_after(message[1])
        message = await loop.run_in_executor(None, conn.recv)
    report = {"connected": connected}
    if message[0] == "verify":
        _, e0, final_states, changed, deleted = message
        changed = set(changed)
        deadline = time.monotonic() + 45

        def pending():
            waiting = 0
            reference = subscribers[0]
            for sub in subscribers:
                if compact and sub.filter is None and (sub.fingerprint.key() != reference.fingerprint.key()
                                                       or sub.removed_after < len(deleted)):
                    waiting += 1
                    continue
                jobs = sub.filter if sub.filter is not None else changed
                for job_id in jobs:
                    seen = sub.last_state.get(job_id)
                    if seen is None or seen[1] != final_states.get(job_id):
                        waiting += 1
                        break
            return waiting

        while time.monotonic() < deadline and pending():
            await asyncio.sleep(0.5)
        report.update(verify(subscribers, e0, final_states, changed, set(deleted), compact))
    stopping = True
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return report


def verify(subscribers, e0, final_states, changed, deleted, compact):
    """Compact records (--soak): all-job subscribers are compared with the reference by fingerprint, each must
    have seen a `removed` after e0 for every deleted job (counted) and hold no state for one (a removed job
    is forgotten, so a later `job` event of it would show)."""
    reference = subscribers[0]
    ref_eids = [e for e in reference.job_eids if e > e0]
    ref_set = set(ref_eids)
    ref_count = reference.fingerprint.count if compact else len(ref_eids)
    ref_per_job = {job: [e for e in eids if e > e0] for job, eids in reference.per_job_eids.items()}
    problems = []
    lost_subscribers = 0
    state_mismatch_subscribers = 0
    all_count = 0
    for sub in subscribers:
        lost_here = False
        if sub.filter is None and compact:
            all_count += 1
            if sub.fingerprint.key() != reference.fingerprint.key() or sub.removed_after != len(deleted):
                lost_here = True
                if len(problems) < 15:
                    problems.append("subscriber %d (all jobs): %d job/removed events after e0 (%d removed), the "
                                    "reference %d, %d jobs deleted; fingerprints %s, reference %s" % (
                                        sub.index, sub.fingerprint.count, sub.removed_after, ref_count,
                                        len(deleted), sub.fingerprint.key(), reference.fingerprint.key()))
            still = [job for job in deleted if job in sub.last_state]
            if still:
                lost_here = True
                if len(problems) < 15:
                    problems.append("subscriber %d: %d deleted jobs whose last event seen is not `removed`, e.g. %s" % (
                        sub.index, len(still), [(job, sub.last_state[job]) for job in still[:3]]))
            jobs = changed
        elif sub.filter is None:
            all_count += 1
            mine = set(e for e in sub.job_eids if e > e0)
            missing = ref_set - mine
            extra = mine - ref_set
            if missing or extra:
                lost_here = True
                if len(problems) < 15:
                    problems.append("subscriber %d (all jobs): %d job/removed events the reference saw are missing, "
                                    "%d extra (e.g. missing %s, extra %s)" % (
                                        sub.index, len(missing), len(extra), sorted(missing)[:5], sorted(extra)[:5]))
            jobs = changed
        else:
            jobs = sub.filter
            for job in sub.filter:
                mine = [e for e in sub.per_job_eids.get(job, []) if e > e0]
                if mine != ref_per_job.get(job, []):
                    lost_here = True
                    if len(problems) < 15:
                        problems.append("subscriber %d (jobs=%d ids): job %s events %s, reference saw %s" % (
                            sub.index, len(sub.filter), job, mine[-6:], ref_per_job.get(job, [])[-6:]))
        mismatched = []
        for job in jobs:
            seen = sub.last_state.get(job)
            want = final_states.get(job)
            if seen is None or seen[1] != want:
                mismatched.append((job, seen[1] if seen else None, want))
        if mismatched:
            state_mismatch_subscribers += 1
            if len(problems) < 15:
                problems.append("subscriber %d: %d jobs whose last state seen differs from the API's, e.g. %s" % (
                    sub.index, len(mismatched), mismatched[:3]))
        if lost_here:
            lost_subscribers += 1
    totals = {
        "job": sum(s.count_job for s in subscribers),
        "progress": sum(s.count_progress for s in subscribers),
        "removed": sum(s.count_removed for s in subscribers),
        "other": sum(s.count_other for s in subscribers),
    }
    return {
        "subscribers": len(subscribers),
        "all_subscribers": all_count,
        "reference_job_events_after_e0": ref_count,
        "lost_subscribers": lost_subscribers,
        "state_mismatch_subscribers": state_mismatch_subscribers,
        "order_violations": sum(s.violations for s in subscribers),
        "order_examples": [e for s in subscribers for e in s.violation_examples][:5],
        "resets": sum(s.resets for s in subscribers),
        "foreign": sum(s.foreign for s in subscribers),
        "reconnects": sum(s.reconnects for s in subscribers),
        "reconnecting_subscribers": sum(1 for s in subscribers if s.reconnects),
        "bad_heads": sum(s.bad_heads for s in subscribers),
        "errors": [e for s in subscribers for e in s.errors][:10],
        "totals": totals,
        "problems": problems,
    }


# --------------------------------------------------------------------------------------------------
# Worker: slowloris


def slowloris_worker(port, count, header_timeout, stop_event, conn, nice):
    try:
        os.nice(nice)
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    hlib.raise_nofile()
    conn.send(asyncio.run(_slowloris_main(port, count, stop_event)))
    conn.close()


async def _slowloris_main(port, count, stop_event):
    cut_times = array.array("d")
    statuses = {}
    connect_errors = 0
    open_now = 0
    max_open = 0
    stopping = False

    async def one(index):
        nonlocal connect_errors, open_now, max_open
        await asyncio.sleep(random.random() * 2)
        while not stopping:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                connect_errors += 1
                await asyncio.sleep(0.5)
                continue
            open_now += 1
            max_open = max(max_open, open_now)
            if index % 2:
                payload = b"GET /" + b"a" * 4000 + b" HTTP/1.1\r\n"  # a request line, slowly
            else:
                payload = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"b" * 4000  # headers, slowly
            started = time.monotonic()
            outcome = None
            try:
                for i in range(len(payload)):
                    writer.write(payload[i:i + 1])
                    try:
                        data = await asyncio.wait_for(reader.read(4096), 1.0)
                    except asyncio.TimeoutError:
                        if stopping:
                            break
                        continue
                    outcome = data
                    break
            except (ConnectionError, OSError):
                outcome = b""
            finally:
                open_now -= 1
                try:
                    writer.close()
                except Exception:
                    pass
            if outcome is not None:
                cut_times.append(time.monotonic() - started)
                status = hlib.status_of(outcome) if outcome else "closed"
                statuses[status] = statuses.get(status, 0) + 1

    tasks = [asyncio.ensure_future(one(i)) for i in range(count)]
    while not stop_event.is_set():
        await asyncio.sleep(0.1)
    stopping = True
    await asyncio.gather(*tasks, return_exceptions=True)
    times = list(cut_times)
    return {"cut": len(times), "p50": percentile(times, 50), "p99": percentile(times, 99),
            "max": max(times) if times else None, "statuses": {str(k): v for k, v in statuses.items()},
            "connect_errors": connect_errors, "max_open": max_open}


# --------------------------------------------------------------------------------------------------
# Worker: /healthz sampler (blocking sockets; a fresh connection each second)


def healthz_worker(port, stop_event, conn):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(-5)
    except OSError:
        pass
    samples = []
    failures = []
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % port
    next_at = time.monotonic()
    while not stop_event.is_set():
        t0 = time.perf_counter()
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(request)
            received = b""
            while True:
                piece = sock.recv(4096)
                if not piece:
                    break
                received += piece
            sock.close()
            latency = time.perf_counter() - t0
            if hlib.status_of(received) == 200 and received.endswith(b'{"status":"ok"}'):
                samples.append(latency)
            else:
                failures.append("answered %r" % received[:100])
        except OSError as error:
            failures.append("%s after %.3f s" % (error, time.perf_counter() - t0))
        next_at += 1.0
        stop_event.wait(max(0.0, next_at - time.monotonic()))
    conn.send({"samples": samples, "failures": failures})
    conn.close()


# --------------------------------------------------------------------------------------------------
# Main


def parse_duration(text):
    """Seconds in "60m", "1h", "90s" or "600"."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([smh]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError("a duration such as 60m, 1h, 90s: %r" % text)
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def memory_of(pid):
    """(VmRSS, RssAnon, RssFile) of a process in KiB; None where unknown."""
    found = {}
    try:
        with open("/proc/%d/status" % pid) as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in ("VmRSS", "RssAnon", "RssFile"):
                    found[name] = int(value.split()[0])
    except (OSError, ValueError):
        pass
    return found.get("VmRSS"), found.get("RssAnon"), found.get("RssFile")


def heap_figures(client):
    """The allocator's figures and the replay window's size from /metrics ({} when unavailable)."""
    try:
        r = client.get("/metrics")
        text = r.body.decode() if r.status == 200 else ""
    except Exception:
        return {}
    found = {}
    for line in text.splitlines():
        match = re.match(r'^ferry_heap_bytes\{kind="([a-z_]+)"\} (\d+)$', line)
        if match:
            found[match.group(1)] = int(match.group(2))
        elif line.startswith("ferry_event_window_events "):
            found["window"] = int(line.split()[1])
        elif line.startswith("ferry_event_window_capacity "):
            found["window_capacity"] = int(line.split()[1])
        elif line.startswith("ferry_event_streams_reading_log "):
            found["reading_log"] = int(line.split()[1])
        elif line.startswith("ferry_event_held_events "):
            found["held_events"] = int(line.split()[1])
    return found


def describe_heap(figures):
    if "in_use" not in figures:
        return "n/a"
    mapped = figures.get("mapped", 0)
    streams = ""
    if "reading_log" in figures:
        streams = ", %d reading the log, %d held" % (figures["reading_log"], figures.get("held_events", 0))
    return "%.1f+%.0f/%.1f (%s%s)" % ((figures["in_use"] - mapped) / 1048576.0, mapped / 1048576.0,
                                      figures.get("free", 0) / 1048576.0, figures.get("window", "?"), streams)


def soak_band(rss, duration, band):
    """The soak's RSS judgement: the warm-up is the first ten minutes, or the first sixth of a shorter soak; the
    reference is the median of the samples in the 30 s around its end; every later sample must stay within
    `band` (a fraction) of it."""
    warm = min(600.0, duration / 6.0)
    around = [v for t, v in rss if v and abs(t - warm) <= 15] or [v for t, v in rss if v][-1:]
    reference = statistics.median(around)
    after = [v for t, v in rss if v and t > warm] or [reference]
    low, high = min(after) / reference - 1, max(after) / reference - 1
    return {"warm": warm, "reference": int(reference), "min": min(after), "max": max(after), "low": low,
            "high": high, "ok": -band <= low and high <= band}


def list_all_jobs(client):
    jobs = []
    after = None
    while True:
        path = "/api/v1/jobs?limit=1000" + ("&after=" + after if after else "")
        r = client.get(path)
        if r.status != 200:
            raise RuntimeError("listing jobs: %s" % r.brief())
        body = r.json()
        jobs.extend(body["jobs"])
        after = body.get("next")
        if not after:
            return jobs


def event_id_now(client):
    r = client.get("/api/v1/jobs?limit=1")
    return int(r.header("Ferry-Event-Id"))


def main():
    parser = argparse.ArgumentParser(description="Ferry load suite")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true", help="15 s instead of 60 s")
    parser.add_argument("--api-clients", type=int, default=64)
    parser.add_argument("--downloads", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--all-subscribers", type=int, default=50,
                        help="how many of the subscribers take every job's events (the rest: 5 download ids each)")
    parser.add_argument("--slowloris", type=int, default=500)
    parser.add_argument("--post-every", type=int, default=1, help="API clients POST a small job every Nth iteration")
    parser.add_argument("--keep-live", type=int, default=16,
                        help="each API client DELETEs its oldest small job once it has more than this many")
    parser.add_argument("--max-concurrent", type=int, default=None,
                        help="Ferry's --max-concurrent (default: downloads + 24, so small jobs can run beside them)")
    parser.add_argument("--client-nice", type=int, default=5, help="niceness of the load generators (not the sampler)")
    parser.add_argument("--ferry-log-level", default=None)
    parser.add_argument("--soak", type=parse_duration, default=None, metavar="DURATION",
                        help="soak: the same mix for DURATION (60m, 90s, 1h), RSS sampled every 10 s; after the "
                             "first ten minutes (a sixth of a shorter soak) every sample stays within --rss-band of "
                             "the RSS at that point")
    parser.add_argument("--rss-band", type=float, default=0.10)
    parser.add_argument("--rss-csv", default=None, help="write the RSS samples (seconds, VmRSS, RssAnon, RssFile KiB) here")
    parser.add_argument("--rss-growth", type=float, default=0.10)
    parser.add_argument("--judge-after-window", type=float, default=30.0, metavar="SECONDS",
                        help="the full run's load goes on until the replay window has been full this long (its growth is "
                             "judged from then), at most --max-duration")
    parser.add_argument("--max-duration", type=float, default=120.0, metavar="SECONDS")
    parser.add_argument("--healthz-p99", type=float, default=0.100)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    duration = args.soak or (15.0 if args.quick else args.duration)
    # The full run judges RSS growth from when the replay window is first full: on a slow (debug) build it fills late,
    # so the load goes on until it has been full --judge-after-window seconds (at most --max-duration).
    extend = not args.soak and not args.quick and args.judge_after_window > 0
    longest = max(duration, args.max_duration) if extend else duration
    sample_every = 10.0 if args.soak else 1.0

    isolated = hlib.isolate_network()
    hlib.install_cleanup()
    nofile = hlib.raise_nofile(1 << 20)
    multiprocessing.set_start_method("fork")
    results = Results()
    workdir = hlib.make_workdir("ferry-load-")
    binary_source = os.environ.get("FERRY_BIN", hlib.DEFAULT_FERRY_BIN)
    log("work directory %s; loopback-only network namespace: %s; RLIMIT_NOFILE %d; ferry %s" % (
        workdir, isolated, nofile, binary_source))
    if nofile < args.subscribers + args.slowloris + args.api_clients + 500:
        log("warning: RLIMIT_NOFILE %d is low for this many connections" % nofile)

    rate = max(8 * 1024, min(64 * 1024, int(SLOW_FILE_SIZE / (duration + 120))))
    # A soak longer than 6 MiB at the slowest rate lasts: a bigger file, so the downloads stay active throughout
    # ("connections": 1, so its size does not make it segmented).
    slow_size = max(SLOW_FILE_SIZE, ((rate * int(longest + 120)) >> 20) + 1 << 20)
    nginx = ferry = None
    workers = {}
    code = 1
    try:
        nginx = Nginx(workdir, rate, slow_size).start()
        max_concurrent = args.max_concurrent or args.downloads + PER_HOST * len(SMALL_HOSTS)
        ferry = hlib.Ferry(workdir, "ferry", token=TOKEN, allow_private=True, max_concurrent=max_concurrent,
                           log_level=args.ferry_log_level).start()
        log("nginx pid %d port %d (limit_rate %d B/s, %d MiB file); ferry pid %d port %d --max-concurrent %d" % (
            nginx.process.pid, nginx.port, rate, slow_size >> 20, ferry.pid, ferry.port, max_concurrent))
        api = ferry.client(timeout=60)

        # 200 downloads that stay active.
        batch = []
        for i in range(args.downloads):
            host = "d%d.localhost" % (i // PER_HOST)
            batch.append({"url": "http://%s:%d/slow/big.bin?download=%d" % (host, nginx.port, i), "connections": 1})
        r = api.request("POST", "/api/v1/jobs", body=json.dumps(batch).encode(), headers={"Content-Type": "application/json"})
        items = r.json() if r.status == 200 else None
        if not results.check("setup: %d downloads created in one batch" % args.downloads,
                             isinstance(items, list) and all(isinstance(j, dict) and j.get("id") for j in items),
                             r.brief()):
            raise RuntimeError("could not create the downloads")
        download_ids = [j["id"] for j in items]

        def active_downloads():
            jobs = api.get("/api/v1/jobs?state=downloading&limit=1000").json()["jobs"]
            return sum(1 for j in jobs if j["id"] in set(download_ids))

        hlib.wait_for(lambda: active_downloads() >= args.downloads, 60, 0.5)
        active = active_downloads()
        results.check("setup: all %d downloads active before the load starts" % args.downloads,
                      active == args.downloads, "%d downloading" % active)

        # SSE subscribers.
        rng = random.Random(7)
        plan = []
        for i in range(args.subscribers):
            if i < args.all_subscribers:
                plan.append(None)
            else:
                plan.append(rng.sample(download_ids, min(5, len(download_ids))))
        sse_parent, sse_child = multiprocessing.Pipe()
        followed = sorted(set(job for job_filter in plan if job_filter for job in job_filter))
        sse = multiprocessing.Process(target=sse_worker, args=(ferry.port, TOKEN, plan, followed, bool(args.soak),
                                                               sse_child, args.client_nice), name="sse", daemon=True)
        sse.start()
        hlib.register(sse)
        workers["sse"] = sse
        if not sse_parent.poll(90):
            raise RuntimeError("the SSE subscribers did not report")
        connected = sse_parent.recv()["connected"]
        results.check("setup: %d SSE subscribers connected" % args.subscribers, connected == args.subscribers,
                      "%d connected" % connected)
        time.sleep(1.0)
        e0 = event_id_now(api)
        log("event id before the load: %d" % e0)
        sse_parent.send(("start", e0))

        # Load.
        stop_event = multiprocessing.Event()
        api_parent, api_child = multiprocessing.Pipe()
        api_ready = multiprocessing.Event()
        slow_parent, slow_child = multiprocessing.Pipe()
        health_parent, health_child = multiprocessing.Pipe()
        processes = [
            multiprocessing.Process(target=healthz_worker, args=(ferry.port, stop_event, health_child), name="healthz",
                                    daemon=True),
            multiprocessing.Process(target=slowloris_worker, args=(ferry.port, args.slowloris, 10, stop_event, slow_child,
                                                                   args.client_nice), name="slowloris", daemon=True),
            multiprocessing.Process(target=api_worker, args=(ferry.port, TOKEN, args.api_clients, download_ids, nginx.port,
                                                             stop_event, api_ready, api_child, args.post_every,
                                                             args.keep_live, args.client_nice), name="api", daemon=True),
        ]
        for process in processes:
            process.start()
            hlib.register(process)
            workers[process.name] = process
        api_ready.wait(30)
        log("load running for %.0f s: %d API clients, %d downloads, %d SSE subscribers (%d on every job), "
            "%d slowloris connections" % (duration, args.api_clients, args.downloads, args.subscribers,
                                          args.all_subscribers, args.slowloris))
        rss = []
        detail = []  # (seconds, VmRSS, RssAnon, RssFile) in KiB
        heap = []  # (seconds, {figure: bytes}) from /metrics: the allocator's in_use/free/mapped, the event window
        start = time.monotonic()
        next_sample = start
        next_note = start + 60
        min_active = None
        window_full = None  # seconds into the load when the replay window was first seen full

        def loading():
            elapsed = time.monotonic() - start
            if elapsed < duration:
                return True
            return extend and elapsed < longest and (window_full is None or elapsed < window_full + args.judge_after_window)

        while loading():
            value = ferry.rss_kib()
            now = time.monotonic() - start
            rss.append((now, value))
            detail.append((now,) + memory_of(ferry.pid))
            if (len(detail) - 1) % max(1, int(round(10 / sample_every))) == 0:
                heap.append((now, heap_figures(api)))
                figures = heap[-1][1]
                if window_full is None and figures.get("window_capacity") and \
                        figures.get("window", 0) >= figures["window_capacity"]:
                    window_full = now
            if args.soak and time.monotonic() >= next_note:
                next_note += 60
                log("soak %d:%02d: RSS %s KiB (anon %s, file %s); heap %s" % (
                    now // 60, now % 60, *detail[-1][1:], describe_heap(heap[-1][1] if heap else {})))
            if ferry.process.poll() is not None:
                break
            next_sample += sample_every
            time.sleep(max(0.0, next_sample - time.monotonic()))
        if ferry.process.poll() is not None:
            stop_event.set()
            results.check("ferry stays up during the load", False, "exited with %s after %.1f s of load:\n%s" % (
                ferry.process.returncode, time.monotonic() - start, ferry.crash_summary() or ferry.log_tail(20)))
            raise FerryDied()
        results.check("ferry stays up during the load", True)
        if extend:
            log("load ran %.0f s: the replay window was first seen full at %s" % (
                time.monotonic() - start, "%.0f s" % window_full if window_full is not None else "no time (judged from 1/3)"))
        # One look at the downloads while the load still runs.
        try:
            min_active = active_downloads()
        except Exception as error:
            log("could not count active downloads: %s" % error)
        stop_event.set()
        load_elapsed = time.monotonic() - start
        api_result = api_parent.recv() if api_parent.poll(60) else None
        slow_result = slow_parent.recv() if slow_parent.poll(30) else None
        health_result = health_parent.recv() if health_parent.poll(30) else None
        for process in processes:
            process.join(10)
            hlib.stop(process, grace=2)

        # Let the small jobs finish, then cancel the downloads.
        created = api_result["created"] if api_result else []
        deleted_ids = set(api_result["deleted"]) if api_result else set()
        all_small_ids = set(created)
        small_ids = all_small_ids - deleted_ids

        def small_unfinished():
            states = {j["id"]: j["state"] for j in list_all_jobs(api)}
            return [i for i in small_ids if states.get(i) in ("waiting", "downloading")]

        hlib.wait_for(lambda: not small_unfinished(), 90, 1.0)
        jobs_now = {j["id"]: j for j in list_all_jobs(api)}
        small_states = {}
        for job_id in small_ids:
            state = jobs_now.get(job_id, {}).get("state")
            small_states[state] = small_states.get(state, 0) + 1
        bad_small = [(i, jobs_now.get(i, {}).get("state"), jobs_now.get(i, {}).get("error")) for i in small_ids
                     if jobs_now.get(i, {}).get("state") != "finished"]
        download_states = {}
        for job_id in download_ids:
            state = jobs_now.get(job_id, {}).get("state")
            download_states[state] = download_states.get(state, 0) + 1
        cancel_failures = []
        for job_id in download_ids:
            r = api.post("/api/v1/jobs/%s/cancel" % job_id)
            if r.status != 200:
                cancel_failures.append(r.brief())
        time.sleep(1.0)
        final_jobs = list_all_jobs(api)
        final_states = {j["id"]: j["state"] for j in final_jobs}
        for job_id in deleted_ids:
            final_states[job_id] = "removed"
        gone = [i for i in deleted_ids if any(j["id"] == i for j in final_jobs)]
        changed = list(all_small_ids | set(download_ids))
        if args.soak:
            # Compact records: the subscribers forgot the deleted jobs; they are checked by count and fingerprint.
            changed = [i for i in changed if i not in deleted_ids]
            sse_parent.send(("verify", e0, {i: final_states.get(i) for i in changed}, changed, list(deleted_ids)))
        else:
            sse_parent.send(("verify", e0, final_states, changed, []))
        sse_result = sse_parent.recv() if sse_parent.poll(120) else None
        sse.join(15)
        hlib.stop(sse, grace=2)

        # ---- figures
        log("")
        log("==== figures (%.1f s of load, ferry %s) ====" % (load_elapsed, binary_source))
        if api_result:
            counts = api_result["counts"]
            total = sum(counts.values())
            log("API requests: %d in %.1f s = %.0f/s (GET job %d, GET list %d, POST %d); failures %s" % (
                total, api_result["elapsed"], total / max(api_result["elapsed"], 0.001), counts["get_job"], counts["list"],
                counts["post"], api_result["failures"]))
            for kind, lat in api_result["latency"].items():
                log("  %-8s latency p50 %s p99 %s max %s" % (kind, ms(lat["p50"]), ms(lat["p99"]), ms(lat["max"])))
        if sse_result and "totals" in sse_result:
            totals = sse_result["totals"]
            log("SSE: %d subscribers (%d on all jobs); events received: %d job, %d progress, %d removed, %d other; "
                "%d reconnects by %d subscribers; %d resets; reference subscriber saw %d job events after id %d" % (
                    sse_result["subscribers"], sse_result["all_subscribers"], totals["job"], totals["progress"],
                    totals["removed"], totals["other"], sse_result["reconnects"], sse_result["reconnecting_subscribers"],
                    sse_result["resets"], sse_result["reference_job_events_after_e0"], e0))
        if heap:
            log("Ferry heap every 10 s (MiB in use in the arenas + in mmapped chunks / free held by the arenas; replay "
                "window events, private streams reading the log, events held for private streams): %s" % "; ".join(
                "%.0f s %s" % (t, describe_heap(figures)) for t, figures in heap))
        if args.rss_csv:
            with open(args.rss_csv, "w") as handle:
                handle.write("seconds,vmrss_kib,rss_anon_kib,rss_file_kib\n")
                for row in detail:
                    handle.write("%.1f,%s,%s,%s\n" % row)
        values = [v for _, v in rss if v]
        band = None
        if values and args.soak:
            band = soak_band(rss, duration, args.rss_band)
            log("Ferry RSS (KiB, %d samples every %.0f s): first %d, at the end of the warm-up (%.0f s) %d, after it "
                "min %d (%+.1f%%), max %d (%+.1f%%), end %d" % (
                    len(values), sample_every, values[0], band["warm"], band["reference"], band["min"],
                    band["low"] * 100, band["max"], band["high"] * 100, values[-1]))
            log("  RSS every minute (MiB): %s" % ", ".join("%.0f" % (v / 1024.0) for v in values[::6]))
            log("  RssAnon every minute (MiB): %s" % ", ".join(
                "%.0f" % (row[2] / 1024.0) for row in detail[::6] if row[2] is not None))
            growth = None
        elif values:
            # From a third of the run, or from when the replay window (a bounded cache, ~10 MB at this load) was
            # first full if that came later: before it, its filling is counted as growth.
            full = [t for t, figures in heap if figures.get("window_capacity") and
                    figures.get("window", 0) >= figures["window_capacity"]]
            judge_from = max(load_elapsed / 3, full[0] if full else 0)
            if judge_from > load_elapsed * 0.75:
                judge_from = load_elapsed / 3
            third = [v for t, v in rss if v and abs(t - judge_from) <= 2] or values[len(values) // 3:len(values) // 3 + 1]
            end = values[-3:]
            rss_third = statistics.median(third)
            rss_end = statistics.median(end)
            growth = (rss_end - rss_third) / rss_third
            log("Ferry RSS (KiB, %d samples): first %d, at %.0f s (1/3, or the replay window full) %d, end %d, min %d, "
                "max %d; growth from then to the end %.1f%%" % (
                    len(values), values[0], judge_from, rss_third, rss_end, min(values), max(values), growth * 100))
            log("  RSS every 5 s: %s" % ", ".join("%d" % v for v in values[::5]))
        else:
            growth = None
        if health_result:
            samples = health_result["samples"]
            log("/healthz from a fresh client every second: %d samples, p50 %s, p99 %s, max %s, failures %d" % (
                len(samples), ms(percentile(samples, 50)), ms(percentile(samples, 99)),
                ms(max(samples) if samples else None), len(health_result["failures"])))
        if slow_result:
            log("slowloris: %d cut off (p50 %s s, p99 %s s, max %s s after their first byte), statuses %s, "
                "connect errors %d, up to %d open at once" % (
                    slow_result["cut"], "%.1f" % slow_result["p50"] if slow_result["p50"] else "n/a",
                    "%.1f" % slow_result["p99"] if slow_result["p99"] else "n/a",
                    "%.1f" % slow_result["max"] if slow_result["max"] else "n/a", slow_result["statuses"],
                    slow_result["connect_errors"], slow_result["max_open"]))
        log("small jobs: %d created, %d deleted by the clients, the rest's final states %s; downloads before cancel: %s; active downloads at the end of the "
            "load: %s" % (len(all_small_ids), len(deleted_ids), small_states, download_states, min_active))
        log("")

        # ---- checks
        if api_result:
            fails = sum(api_result["failures"].values())
            results.check("API: zero failed requests (%d done)" % sum(api_result["counts"].values()), fails == 0,
                          "%d failed; examples:\n    %s" % (fails, "\n    ".join(api_result["failure_examples"])))
        else:
            results.check("API: the client process reported", False)
        if sse_result and "totals" in sse_result:
            results.check("SSE: every subscriber's event ids strictly increase", sse_result["order_violations"] == 0,
                          "%d violations, e.g. %s" % (sse_result["order_violations"], sse_result["order_examples"]))
            results.check("SSE: no lost job/removed event (each subscriber's set equals the reference's, last "
                          "states equal the API's)", sse_result["lost_subscribers"] == 0 and
                          sse_result["state_mismatch_subscribers"] == 0 and sse_result["reference_job_events_after_e0"] > 0,
                          "%d subscribers missing events, %d with wrong last states:\n    %s" % (
                              sse_result["lost_subscribers"], sse_result["state_mismatch_subscribers"],
                              "\n    ".join(sse_result["problems"])))
            results.check("SSE: no `reset` event", sse_result["resets"] == 0, "%d resets" % sse_result["resets"])
            results.check("SSE: filtered subscribers get only their jobs' events", sse_result["foreign"] == 0,
                          "%d foreign events" % sse_result["foreign"])
            results.check("SSE: every stream opened as 200 text/event-stream (chunked)", sse_result["bad_heads"] == 0,
                          "%d bad; errors %s" % (sse_result["bad_heads"], sse_result["errors"]))
            if sse_result["reconnects"]:
                log("note: %d SSE reconnects (streams closed by Ferry or errors): %s" % (
                    sse_result["reconnects"], sse_result["errors"]))
        else:
            results.check("SSE: the subscriber process reported", False, str(sse_result)[:500])
        results.check("downloads: all %d still active at the end of the load" % args.downloads,
                      min_active == args.downloads, "%s downloading; states before cancel %s" % (min_active, download_states))
        results.check("downloads: cancelled at the end (200 each)", not cancel_failures, "; ".join(cancel_failures[:5]))
        results.check("deleted jobs are gone from the list", not gone, "still listed: %s" % gone[:5])
        results.check("small jobs: every one finished (%d)" % len(small_ids), not bad_small and len(small_ids) > 0,
                      "%d not finished, e.g. %s" % (len(bad_small), bad_small[:5]))
        if args.soak:
            results.check("RSS: after the first %.0f s every sample within %.0f%% of the RSS then" % (
                band["warm"] if band else 0, args.rss_band * 100),
                band is not None and band["ok"], "reference %s KiB, min %s, max %s" % (
                    band and band["reference"], band and band["min"], band and band["max"]))
        elif args.quick:
            # 15 s is still warm-up (the event window and the job table fill for the first minute): flatness is
            # judged by the full run only.
            log("RSS growth not judged in a --quick run (%s); the 60 s run checks it" % (
                "%.1f%%" % (growth * 100) if growth is not None else "unknown"))
        else:
            results.check("RSS: growth from 1/3 of the run (or the replay window full) to the end <= %.0f%%" % (
                args.rss_growth * 100),
                          growth is not None and growth <= args.rss_growth, "growth %s" % (
                              "%.1f%%" % (growth * 100) if growth is not None else "unknown"))
        if health_result:
            samples = health_result["samples"]
            p99 = percentile(samples, 99)
            results.check("/healthz: p99 <= %.0f ms from a fresh client during the load" % (args.healthz_p99 * 1000),
                          samples and not health_result["failures"] and p99 <= args.healthz_p99,
                          "p99 %s, max %s, failures %s" % (ms(p99), ms(max(samples) if samples else None),
                                                            health_result["failures"][:3]))
        else:
            results.check("/healthz: the sampler reported", False)
        if slow_result:
            results.check("slowloris: connections cut off within the 10 s header timeout (max <= 12 s)",
                          slow_result["cut"] > 0 and slow_result["max"] is not None and slow_result["max"] <= 12.0,
                          "%d cut, max %s s" % (slow_result["cut"], slow_result["max"]))
        else:
            results.check("slowloris: the worker reported", False)
        results.check("ferry still serving after the load", ferry.process.poll() is None and ferry.healthy())
        t0 = time.monotonic()
        exit_code = ferry.stop(grace=15)
        stop_time = time.monotonic() - t0
        results.check("ferry exits 0 within 10 s of SIGTERM", exit_code == 0 and stop_time <= 10.5,
                      "exit %s after %.1f s" % (exit_code, stop_time))
    except FerryDied:
        pass
    except Exception as error:
        import traceback
        traceback.print_exc()
        results.check("suite ran to the end", False, "%s: %s" % (type(error).__name__, error))
        if ferry:
            log("ferry log tail:\n" + ferry.log_tail(20))
    finally:
        for process in workers.values():
            hlib.stop(process, grace=3)
        if ferry:
            ferry.stop()
        if nginx:
            nginx.stop()
        hlib.stop_all()
        code = results.finish()
        hlib.remove_workdir(workdir, keep=args.keep or code != 0)
    return code


if __name__ == "__main__":
    sys.exit(main())
