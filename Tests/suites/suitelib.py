"""Shared helpers for Ferry's robustness suites (crash_suite, fault_suite, diskfull_suite).

Standard library only. Everything a suite starts (nginx, the fault origin, Ferry, mounts, temp
directories) is registered with `CLEANUP` and undone in reverse order, by pid, from a `finally`, from
`atexit` and from SIGINT/SIGTERM/SIGHUP handlers. All traffic goes to 127.0.0.1.

Pieces:
  Suite          check(), figures, and the final `N passed, N failed` line + exit status
  Cleanup        LIFO undo stack (CLEANUP is the process-wide one)
  Ferry          one `ferry serve` (copied binary, fixed port and spool; start / kill9 / stop / restart)
  Nginx          nginx on loopback with its own prefix (same config as NginxConfiguration.swift)
  FaultOrigin    Tests/Fixtures/fault_origin.py on a kernel-chosen port
  http()         one HTTP/1.1 request to 127.0.0.1, JSON in and out
  fixture_*      the fault origin's content (content_block(seed) repeated) and its SHA-256
"""

import atexit
import hashlib
import http.client as httpclient
import importlib.util
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

SUITES_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(SUITES_DIR))
FAULT_ORIGIN_SCRIPT = os.path.join(REPO, "Tests", "Fixtures", "fault_origin.py")
PUBLIC_DIR = os.path.join(REPO, "Public")
DEFAULT_FERRY_BIN = "/tmp/ferry-bin/ferry"


def log(message):
    print(message, flush=True)


# -- cleanup -------------------------------------------------------------------------------------------


class Cleanup:
    """A LIFO stack of undo actions; `run()` is idempotent and never raises."""

    def __init__(self):
        self.actions = []
        self.installed = False

    def push(self, description, action):
        self.actions.append((description, action))
        return action

    def remove(self, action):
        self.actions = [(d, a) for d, a in self.actions if a is not action]

    def run(self):
        while self.actions:
            description, action = self.actions.pop()
            try:
                action()
            except Exception as error:  # noqa: BLE001 - cleanup must go on
                sys.stderr.write("cleanup (%s) failed: %r\n" % (description, error))

    def install(self):
        """atexit + signal handlers: a signal raises SystemExit so `finally` blocks (and then atexit) run."""
        if self.installed:
            return
        self.installed = True
        atexit.register(self.run)

        def handler(signum, _frame):
            signal.signal(signum, signal.SIG_IGN)  # a second signal must not interrupt the cleanup
            raise SystemExit(128 + signum)

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, handler)


CLEANUP = Cleanup()


def temp_dir(prefix, keep=False):
    path = tempfile.mkdtemp(prefix=prefix)
    if not keep:
        CLEANUP.push("remove " + path, lambda: shutil.rmtree(path, ignore_errors=True))
    return path


def stop_pid(process, sig=signal.SIGTERM, timeout=10.0):
    """Sends `sig` to one child by pid, waits, then SIGKILL. Returns the exit status (or None)."""
    if process.poll() is not None:
        return process.returncode
    try:
        os.kill(process.pid, sig)
    except ProcessLookupError:
        pass
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.kill(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            return process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None


def child_pids(pid):
    """Direct children of `pid` (from /proc), e.g. nginx's workers."""
    children = []
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as handle:
                children += [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return children


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_accepts(port, timeout=0.5):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


# -- results -------------------------------------------------------------------------------------------


class Suite:
    """Counts checks and prints them; `finish()` prints the last line and exits."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failed = 0
        self.failures = []
        self.started = time.monotonic()

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            log("  ok    %s%s" % (name, (" (" + detail + ")") if detail else ""))
        else:
            self.failed += 1
            self.failures.append((name, detail))
            log("  FAIL  %s%s" % (name, (": " + detail) if detail else ""))
        return ok

    def elapsed(self):
        return time.monotonic() - self.started

    def finish(self):
        if self.failures:
            log("failures:")
            for name, detail in self.failures:
                log("  - %s%s" % (name, (": " + detail) if detail else ""))
        log("%d passed, %d failed" % (self.passed, self.failed))
        sys.stdout.flush()
        os._exit(0 if self.failed == 0 and self.passed > 0 else 1)


def run_suite(suite, body):
    """Runs `body(suite)` with cleanup guaranteed, then prints the summary line and exits."""
    CLEANUP.install()
    try:
        body(suite)
    except SystemExit as stop:
        suite.check("suite ran to the end", False, "interrupted (exit %s)" % stop.code)
    except BaseException as error:  # noqa: BLE001 - report, clean up, then summarise
        import traceback
        traceback.print_exc(file=sys.stdout)
        suite.check("suite ran to the end", False, "%s: %s" % (type(error).__name__, error))
    finally:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        except ValueError:
            pass
        CLEANUP.run()
    suite.finish()


# -- HTTP ----------------------------------------------------------------------------------------------


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body.decode("utf-8")) if self.body else None

    def header(self, name):
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def __repr__(self):
        return "<%d %s>" % (self.status, self.body[:300])


def http(port, method, path, body=None, headers=None, timeout=15.0):
    """One request on a fresh connection to 127.0.0.1:port; `body` (not bytes) is sent as JSON."""
    connection = httpclient.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        all_headers = dict(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            all_headers.setdefault("Content-Type", "application/json")
        connection.request(method, path, body=data, headers=all_headers)
        response = connection.getresponse()
        return Response(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def http_stream_sha256(port, path, timeout=60.0):
    """GET path, returning (status, sha256 hex of the body, length)."""
    connection = httpclient.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        digest = hashlib.sha256()
        total = 0
        while True:
            chunk = response.read(1 << 20)
            if not chunk:
                break
            digest.update(chunk)
            total += len(chunk)
        return response.status, digest.hexdigest(), total
    finally:
        connection.close()


# -- content -------------------------------------------------------------------------------------------

_fault_module = None
_blocks = {}


def fault_module():
    global _fault_module
    if _fault_module is None:
        spec = importlib.util.spec_from_file_location("ferry_fault_origin", FAULT_ORIGIN_SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _fault_module = module
    return _fault_module


def fixture_block(seed):
    if seed not in _blocks:
        _blocks[seed] = fault_module().content_block(seed)
    return _blocks[seed]


def fixture_sha256(size, seed):
    """SHA-256 of the fault origin's body for size/seed: content_block(seed) repeated, cut at size."""
    block = fixture_block(seed)
    digest = hashlib.sha256()
    full, rest = divmod(size, len(block))
    for _ in range(full):
        digest.update(block)
    digest.update(block[:rest])
    return digest.hexdigest()


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(1 << 20)
            if not chunk:
                break
            digest.update(chunk)
    return digest.hexdigest()


def write_random_file(path, size, rng):
    """Writes `size` bytes from `rng`; returns their SHA-256."""
    digest = hashlib.sha256()
    with open(path, "wb") as handle:
        left = size
        while left > 0:
            n = min(left, 1 << 20)
            chunk = rng.randbytes(n)
            digest.update(chunk)
            handle.write(chunk)
            left -= n
    return digest.hexdigest()


# -- Ferry ---------------------------------------------------------------------------------------------


def ferry_binary(workdir):
    """Copies $FERRY_BIN (default /tmp/ferry-bin/ferry) into `workdir` so a refresh cannot swap it mid-run."""
    source = os.environ.get("FERRY_BIN") or DEFAULT_FERRY_BIN
    if not os.path.isfile(source):
        raise RuntimeError("Ferry binary not found at %s (set FERRY_BIN)" % source)
    target = os.path.join(workdir, "ferry")
    shutil.copy2(source, target)
    os.chmod(target, 0o755)
    return target


class Ferry:
    """One `ferry serve` on 127.0.0.1:`port` with `spool`; restarts keep the port and the spool."""

    def __init__(self, binary, spool, logdir, port=None, min_free_space="0", max_concurrent=None, extra=()):
        self.binary = binary
        self.spool = spool
        self.logdir = logdir
        self.port = port or free_port()
        self.min_free_space = min_free_space
        self.max_concurrent = max_concurrent
        self.extra = list(extra)
        self.process = None
        self.starts = 0
        self._undo = None

    # process control

    def command(self):
        args = [self.binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--spool", self.spool,
                "--allow-private-networks", "--min-free-space", str(self.min_free_space), "--public", PUBLIC_DIR]
        if self.max_concurrent:
            args += ["--max-concurrent", str(self.max_concurrent)]
        return args + self.extra

    def start(self, timeout=30.0):
        """Starts and waits for /healthz; retries when the process exits early (e.g. the port is briefly
        unavailable). Returns the seconds taken. On failure, no process of ours is left running."""
        self._reap()
        began = time.monotonic()
        deadline = began + timeout
        last_error = "not started"
        while time.monotonic() < deadline:
            self.starts += 1
            logpath = os.path.join(self.logdir, "ferry-%03d.log" % self.starts)
            with open(logpath, "wb") as out:
                self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                                stdin=subprocess.DEVNULL, start_new_session=True)
            if self._undo is None:
                self._undo = CLEANUP.push("stop ferry", self.cleanup)
            while True:
                code = self.process.poll()
                if code is not None:
                    with open(logpath, "rb") as handle:
                        last_error = "exit %s: %s" % (code, handle.read()[-2000:].decode("utf-8", "replace").strip())
                    break
                try:
                    if http(self.port, "GET", "/healthz", timeout=2).status == 200:
                        if self.process.poll() is None:
                            return time.monotonic() - began
                except OSError:
                    pass
                if time.monotonic() >= deadline:
                    if last_error == "not started":
                        last_error = "no answer from /healthz"
                    break
                time.sleep(0.02)
            self._reap()
            time.sleep(0.2)
        self._reap()
        raise RuntimeError("ferry did not become healthy within %.0f s (%d starts): %s"
                           % (timeout, self.starts, last_error))

    def _reap(self):
        """SIGKILL (by pid) a process of ours that is still running, e.g. one that never became healthy."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def spawn_and_kill(self, delay):
        """Starts Ferry and SIGKILLs it `delay` seconds later, healthy or not (a crash during start-up)."""
        self._reap()
        self.starts += 1
        logpath = os.path.join(self.logdir, "ferry-%03d.log" % self.starts)
        with open(logpath, "wb") as out:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        if self._undo is None:
            self._undo = CLEANUP.push("stop ferry", self.cleanup)
        time.sleep(delay)
        self._reap()

    def kill9(self):
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self, timeout=15.0):
        """SIGTERM; returns (exit status, seconds taken). The contract: exit 0 within 10 s."""
        if self.process is None:
            return None, 0.0
        began = time.monotonic()
        status = stop_pid(self.process, signal.SIGTERM, timeout)
        return status, time.monotonic() - began

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def cleanup(self):
        if self.process is not None and self.process.poll() is None:
            stop_pid(self.process, signal.SIGTERM, 12)

    def log_text(self):
        parts = []
        for name in sorted(os.listdir(self.logdir)):
            if name.startswith("ferry-"):
                with open(os.path.join(self.logdir, name), "rb") as handle:
                    parts.append(handle.read().decode("utf-8", "replace"))
        return "".join(parts)

    # API

    def request(self, method, path, body=None, headers=None, timeout=15.0):
        return http(self.port, method, path, body, headers, timeout)

    def submit(self, body, idempotency_key=None, timeout=15.0):
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return self.request("POST", "/api/v1/jobs", body, headers, timeout)

    def job(self, job_id):
        response = self.request("GET", "/api/v1/jobs/" + job_id)
        return response.json() if response.status == 200 else None

    def jobs(self, state=None):
        """Every job, following `next` cursors. Raises on a non-200 answer."""
        jobs = []
        after = None
        while True:
            query = "limit=1000"
            if state:
                query += "&state=" + state
            if after:
                query += "&after=" + after
            response = self.request("GET", "/api/v1/jobs?" + query)
            if response.status != 200:
                raise RuntimeError("GET /api/v1/jobs answered %d: %r" % (response.status, response.body[:300]))
            page = response.json()
            jobs += page["jobs"]
            after = page.get("next")
            if not after:
                return jobs

    def action(self, job_id, name):
        return self.request("POST", "/api/v1/jobs/%s/%s" % (job_id, name))

    def files_dir(self):
        return os.path.join(self.spool, "files")

    def partial_dir(self):
        return os.path.join(self.spool, "partial")


def wait_until(predicate, timeout, interval=0.2):
    """Polls `predicate` until it returns something truthy (returned) or `timeout` passes (returns the last value)."""
    deadline = time.monotonic() + timeout
    value = None
    while True:
        try:
            value = predicate()
        except OSError:
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


# -- nginx ---------------------------------------------------------------------------------------------

NGINX_LOG_FIELDS = ["$request_method", "$uri", "$status", "$http_range", "$http_if_range", "$body_bytes_sent",
                    "$request_uri"]


def nginx_config(prefix, root, port, run_as_root, extra_log_fields=()):
    """The same configuration as Tests/FerryTestSupport/Origins/NginxConfiguration.swift; `extra_log_fields`
    (nginx variables) are logged after the standard ones."""
    def quoted(path):
        return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    fmt = "\\t".join(NGINX_LOG_FIELDS + list(extra_log_fields))
    return """daemon off;
master_process on;
worker_processes 1;
%(user)s
pid %(pid)s;
error_log %(error)s warn;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    types { text/plain txt; text/html html; application/json json; application/octet-stream bin; }
    log_format ferry "%(fmt)s";
    access_log %(access)s ferry;
    sendfile on;
    etag on;
    keepalive_timeout 30s;
    client_body_temp_path %(client_body)s;
    proxy_temp_path %(proxy)s;
    fastcgi_temp_path %(fastcgi)s;
    uwsgi_temp_path %(uwsgi)s;
    scgi_temp_path %(scgi)s;
    map $arg_rate $ferry_rate { default $arg_rate; "" 0; }
    server {
        listen 127.0.0.1:%(port)d;
        server_name localhost;
        root %(root)s;
        location / { }
        # Upload targets for onward delivery: WebDAV PUT into root/upload/, and a target that refuses.
        location /upload/ {
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
        }
        location /refuse-upload/ { return 403; }
        location /slow/ {
            alias %(rootslash)s;
            limit_rate $ferry_rate;
        }
    }
}
""" % dict({
        "user": "user root root;" if run_as_root else "",
        "pid": quoted(prefix + "/nginx.pid"), "error": quoted(prefix + "/error.log"), "fmt": fmt,
        "access": quoted(prefix + "/access.log"), "port": port, "root": quoted(root),
        "rootslash": quoted(root + "/"),
    }, **{name: quoted(prefix + "/temp/" + name) for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")})


class Nginx:
    """nginx serving `root` on 127.0.0.1; `/slow/<name>?rate=N` serves root/<name> at N bytes/s; `PUT /upload/<path>`
    writes root/upload/<path> (WebDAV) and `/refuse-upload/` answers 403."""

    def __init__(self, root, prefix, extra_log_fields=()):
        self.root = root
        self.prefix = prefix
        self.extra_log_fields = list(extra_log_fields)
        self.port = None
        self.process = None

    def start(self):
        executable = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(executable):
            raise RuntimeError("nginx is not installed")
        os.makedirs(os.path.join(self.prefix, "temp"), exist_ok=True)
        for _ in range(5):
            self.port = free_port()
            config = nginx_config(self.prefix, self.root, self.port, os.geteuid() == 0, self.extra_log_fields)
            with open(os.path.join(self.prefix, "nginx.conf"), "w") as handle:
                handle.write(config)
            pidfile = os.path.join(self.prefix, "nginx.pid")
            if os.path.exists(pidfile):
                os.unlink(pidfile)
            out = open(os.path.join(self.prefix, "stdout.log"), "wb")
            self.process = subprocess.Popen(
                [executable, "-p", self.prefix + "/", "-c", self.prefix + "/nginx.conf", "-e",
                 self.prefix + "/error.log"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)
            out.close()
            CLEANUP.push("stop nginx", self.stop)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                if os.path.exists(pidfile) and port_accepts(self.port):
                    return self
                time.sleep(0.02)
            error = self._error_log()
            self.stop()
            if "Address already in use" not in error:
                raise RuntimeError("nginx did not start: " + error[-2000:])
        raise RuntimeError("nginx could not bind a port")

    def _error_log(self):
        try:
            with open(os.path.join(self.prefix, "error.log"), "rb") as handle:
                return handle.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path if path.startswith("/") else "/" + path)

    def stop(self):
        """SIGQUIT (graceful: flushes the access log) to the master by pid, SIGKILL master and workers after 5 s."""
        if self.process is None or self.process.poll() is not None:
            return
        workers = child_pids(self.process.pid)
        stop_pid(self.process, signal.SIGQUIT, 5)
        for pid in workers:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def access_log(self):
        """[{method, path, status, range, if_range, bytes, target, extra}] for every logged request; `extra` maps
        each of `extra_log_fields` to its logged text."""
        entries = []
        try:
            with open(os.path.join(self.prefix, "access.log"), "rb") as handle:
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return entries
        for line in text.splitlines():
            fields = line.split("\t")
            if len(fields) != len(NGINX_LOG_FIELDS) + len(self.extra_log_fields):
                continue
            try:
                entries.append({
                    "method": fields[0], "path": fields[1], "status": int(fields[2]),
                    "range": None if fields[3] == "-" else fields[3],
                    "if_range": None if fields[4] == "-" else fields[4],
                    "bytes": int(fields[5]), "target": fields[6],
                    "extra": dict(zip(self.extra_log_fields, fields[len(NGINX_LOG_FIELDS):])),
                })
            except ValueError:
                continue
        return entries


# -- fault origin --------------------------------------------------------------------------------------


class FaultOrigin:
    """Tests/Fixtures/fault_origin.py on a port the kernel picks."""

    def __init__(self, directory):
        self.directory = directory
        self.port = None
        self.process = None

    def start(self):
        port_file = os.path.join(self.directory, "port")
        out = open(os.path.join(self.directory, "output.log"), "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-u", FAULT_ORIGIN_SCRIPT, "--port", "0", "--port-file", port_file,
             "--pid-file", os.path.join(self.directory, "pid"), "--exit-with-parent"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        CLEANUP.push("stop fault origin", self.stop)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("fault origin exited with %s" % self.process.returncode)
            try:
                with open(port_file) as handle:
                    text = handle.read().strip()
                if text:
                    self.port = int(text)
                    if port_accepts(self.port):
                        return self
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("fault origin did not start")

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def requests(self):
        return http(self.port, "GET", "/_requests").json()

    def uploads(self):
        """Every upload received (PUT or POST to /u/...), in the order they ended."""
        return http(self.port, "GET", "/_uploads").json()

    def stop(self):
        if self.process is not None:
            stop_pid(self.process, signal.SIGTERM, 5)


def new_key():
    return uuid.uuid4().hex


def rng_for(seed):
    return random.Random(seed)


def fmt_bytes(count):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(count) >= size:
            return "%.2f %s" % (count / size, unit)
    return "%d B" % count


# -- events --------------------------------------------------------------------------------------------


def sse_frames(response, keep_going):
    """The events of a Server-Sent Events response as (event, data, id), read line by line while `keep_going()`;
    comments are skipped and an event without data is not dispatched (as EventSource does)."""
    event, data, event_id = None, [], None
    while keep_going():
        line = response.fp.readline()
        if not line:
            return
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line == "":
            if data:
                yield event, "\n".join(data), event_id
            event, data, event_id = None, [], None
        elif line.startswith(":"):
            continue
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                event_id = value


class EventRecorder(threading.Thread):
    """Follows GET /api/v1/events and records every `job` event per job id: [(time, state, error code, job)].

    Reconnects with Last-Event-ID when the stream ends (e.g. after a Ferry restart)."""

    def __init__(self, port, interval=1000):
        super().__init__(daemon=True)
        self.port = port
        self.interval = interval
        self.lock = threading.Lock()
        self.by_job = {}
        self.restarted = {}
        self.last_id = None
        self.stopping = threading.Event()
        self.connection = None
        self.errors = []

    def run(self):
        while not self.stopping.is_set():
            try:
                self._follow()
            except Exception as error:  # noqa: BLE001 - reconnect
                if not self.stopping.is_set():
                    self.errors.append(repr(error))
            if not self.stopping.is_set():
                time.sleep(0.2)

    def _follow(self):
        connection = httpclient.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.connection = connection
        headers = {"Accept": "text/event-stream"}
        if self.last_id is not None:
            headers["Last-Event-ID"] = self.last_id
        connection.request("GET", "/api/v1/events?interval=%d" % self.interval, headers=headers)
        response = connection.getresponse()
        if response.status != 200:
            response.read()
            connection.close()
            raise RuntimeError("events answered %d" % response.status)
        for event, data, event_id in sse_frames(response, lambda: not self.stopping.is_set()):
            self._dispatch(event, data, event_id)
        connection.close()

    def _dispatch(self, event, data, event_id):
        if event_id is not None:
            self.last_id = event_id
        if event != "job":
            return
        try:
            payload = json.loads(data)
        except ValueError:
            return
        job = payload.get("job", payload) if isinstance(payload, dict) else None
        if not isinstance(job, dict) or "id" not in job:
            return
        error = job.get("error") or {}
        with self.lock:
            self.by_job.setdefault(job["id"], []).append((time.monotonic(), job.get("state"), error.get("code"), job))
            if payload.get("restarted"):
                self.restarted[job["id"]] = self.restarted.get(job["id"], 0) + 1

    def history(self, job_id):
        with self.lock:
            return list(self.by_job.get(job_id, []))

    def stop(self):
        self.stopping.set()
        connection = self.connection
        if connection is not None:
            try:
                connection.sock and connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
