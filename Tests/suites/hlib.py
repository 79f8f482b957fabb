"""Shared helpers for the hostile and load suites (standard library only).

- `Results`: named checks, printed as they happen, closing with the plain line `N passed, N failed[, N skipped]`.
- Process registry: every process a suite starts (`spawn`, `register`) is stopped by pid at exit, on SIGTERM,
  SIGINT and SIGHUP, and from `finally` blocks (`stop_all`): SIGTERM first, SIGKILL after a grace period.
- `isolate_network`: re-executes the suite (same pid: `unshare` execs) in a fresh network namespace that has
  only a loopback interface, so nothing the suite or Ferry does can reach any other address, whatever a
  generated URL says.
- `Ferry`: starts `ferry serve` on 127.0.0.1 with port 0, reads the chosen port from its log, waits for /healthz.
- Small HTTP helpers: `Client` (http.client with the bearer token) and raw-socket exchanges.

Traffic goes to 127.0.0.1 / [::1] only.
"""

import atexit
import fcntl
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_FERRY_BIN = "/tmp/ferry-bin/ferry"
FAULT_ORIGIN = os.path.join(REPO, "Tests", "Fixtures", "fault_origin.py")
NETNS_ENV = "FERRY_SUITE_NETNS"


def log(*parts):
    print(*parts, flush=True)


# --------------------------------------------------------------------------------------------------
# Results


class Results:
    """Counts checks; every check prints one line as it is decided."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.failures = []
        self.lock = threading.Lock()

    def check(self, name, ok, detail=""):
        detail = str(detail)
        if ok and len(detail) > 160:
            detail = detail[:160] + "..."
        elif not ok and len(detail) > 4000:
            detail = detail[:4000] + "..."
        with self.lock:
            if ok:
                self.passed += 1
                log("PASS  %s%s" % (name, ("  -- " + detail) if detail else ""))
            else:
                self.failed += 1
                self.failures.append((name, detail))
                log("FAIL  %s%s" % (name, ("  -- " + detail) if detail else ""))
        return ok

    def skip(self, name, reason):
        with self.lock:
            self.skipped += 1
            log("SKIP  %s  -- %s" % (name, reason))

    def finish(self):
        """Prints the failures again and the closing line; returns the exit code."""
        if self.failures:
            log("")
            log("Failed checks:")
            for name, detail in self.failures:
                log("  - %s%s" % (name, (": " + detail) if detail else ""))
        log("")
        line = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            line += ", %d skipped" % self.skipped
        log(line)
        return 1 if self.failed else 0


# --------------------------------------------------------------------------------------------------
# Processes


_PROCESSES = []  # objects with .pid, registered in start order
_REGISTRY_LOCK = threading.Lock()
_CLEANUP_INSTALLED = False
_MAIN_PID = os.getpid()


def register(process):
    """Registers a started process (Popen or multiprocessing.Process) to be stopped by pid at exit."""
    with _REGISTRY_LOCK:
        _PROCESSES.append(process)
    return process


def unregister(process):
    with _REGISTRY_LOCK:
        if process in _PROCESSES:
            _PROCESSES.remove(process)


def _alive(process):
    if hasattr(process, "poll"):
        return process.poll() is None
    if hasattr(process, "is_alive"):
        try:
            return process.is_alive()
        except AssertionError:  # multiprocessing: not our child (after a fork)
            return False
    return False


def _wait(process, timeout):
    try:
        if hasattr(process, "poll"):
            process.wait(timeout=timeout)
        else:
            process.join(timeout)
    except subprocess.TimeoutExpired:
        pass
    except AssertionError:
        pass
    return not _alive(process)


def stop(process, grace=10.0, sig=signal.SIGTERM):
    """SIGTERM (or `sig`) to this process's pid, wait up to `grace` seconds, then SIGKILL. Returns the exit code."""
    pid = getattr(process, "pid", None)
    if pid is None:
        return None
    if _alive(process):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
        if not _wait(process, grace):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _wait(process, 5)
    unregister(process)
    if hasattr(process, "returncode"):
        return process.returncode
    return getattr(process, "exitcode", None)


def stop_all():
    """Stops every registered process, newest first, each by its own pid."""
    if os.getpid() != _MAIN_PID:
        return
    with _REGISTRY_LOCK:
        processes = list(reversed(_PROCESSES))
    for process in processes:
        try:
            stop(process, grace=8.0)
        except Exception as error:  # keep stopping the others
            log("warning: could not stop pid %s: %s" % (getattr(process, "pid", "?"), error))


def _on_signal(signum, frame):
    if os.getpid() != _MAIN_PID:  # a forked worker: just go
        os._exit(128 + signum)
    log("\nreceived signal %d: stopping every process this suite started" % signum)
    stop_all()
    os._exit(128 + signum)


def install_cleanup():
    """atexit + SIGTERM/SIGINT/SIGHUP handlers that stop every registered process by pid."""
    global _CLEANUP_INSTALLED
    if _CLEANUP_INSTALLED:
        return
    _CLEANUP_INSTALLED = True
    atexit.register(stop_all)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)


def spawn(args, log_path=None, env=None, cwd=None, stdin=subprocess.DEVNULL):
    """Starts a process with output to `log_path` (or inherited), registers it, returns the Popen."""
    out = open(log_path, "ab") if log_path else None
    try:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT if out else None,
                                   stdin=stdin, env=env, cwd=cwd)
    finally:
        if out:
            out.close()
    return register(process)


def raise_nofile(wanted=65536):
    """Raises RLIMIT_NOFILE's soft limit towards `wanted` (up to the hard limit); returns the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --------------------------------------------------------------------------------------------------
# Network isolation


def _loopback_up():
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            request = struct.pack("16sh", b"lo", 0)
            flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
            if not flags & IFF_UP:
                fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))
        return True
    except OSError:
        if shutil.which("ip"):
            return subprocess.run(["ip", "link", "set", "lo", "up"]).returncode == 0
        return False


def _only_loopback_interfaces():
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return False
    return names == ["lo"]


def isolate_network():
    """Makes sure this process runs in a network namespace with nothing but loopback.

    If not yet isolated, re-executes the same command line under `unshare --net` (the pid stays the same:
    unshare execs the interpreter). Returns True when isolated, False when that is impossible here (no
    unshare, or no permission); the caller decides what may still run.
    """
    if os.environ.get(NETNS_ENV) == "1":
        if not _only_loopback_interfaces():
            log("warning: %s=1 but interfaces other than lo are present" % NETNS_ENV)
            return False
        return _loopback_up()
    if os.environ.get(NETNS_ENV) == "0":
        return False
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "--net", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        return False
    sys.stdout.flush()
    sys.stderr.flush()
    env = dict(os.environ)
    env[NETNS_ENV] = "1"
    os.execvpe(unshare, [unshare, "--net", "--", sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)
    return False  # not reached


# --------------------------------------------------------------------------------------------------
# Sockets and HTTP


def free_port(host="127.0.0.1", both_families=False):
    """A TCP port free on `host` (and on ::1 too when both_families)."""
    for _ in range(200):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((host, 0))
        port = s.getsockname()[1]
        s.close()
        if not both_families:
            return port
        try:
            s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            s6.bind(("::1", port))
            s6.close()
            return port
        except OSError:
            continue
    raise RuntimeError("no free port")


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # list of (name, value)
        self.body = body

    def header(self, name):
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None

    def error_code(self):
        data = self.json()
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            return data["error"].get("code")
        return None

    def brief(self, limit=300):
        text = self.body[:limit].decode("utf-8", "replace")
        return "%s %s" % (self.status, text)


class Client:
    """A keep-alive http.client connection to 127.0.0.1:port with an optional bearer token."""

    def __init__(self, port, token=None, host="127.0.0.1", timeout=30):
        self.port = port
        self.token = token
        self.host = host
        self.timeout = timeout
        self.connection = None

    def _connect(self):
        self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def request(self, method, path, body=None, headers=None, json_body=None):
        all_headers = {}
        if self.token:
            all_headers["Authorization"] = "Bearer " + self.token
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        if headers:
            all_headers.update(headers)
        for attempt in range(2):
            if self.connection is None:
                self._connect()
            try:
                self.connection.request(method, path, body=body, headers=all_headers)
                response = self.connection.getresponse()
                data = response.read()
                result = Response(response.status, response.getheaders(), data)
                if response.will_close:
                    self.close()
                return result
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 1:
                    raise
            except BaseException:
                # A timeout (or any other failure) leaves the connection mid-exchange: reused, every later request
                # raised http.client's CannotSendRequest at once (the load suite, after one slow /metrics on a busy
                # machine, read no heap figure again and then failed). The next request starts on a fresh one.
                self.close()
                raise
        raise RuntimeError("unreachable")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, json_body=None, **kw):
        return self.request("POST", path, json_body=json_body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def close(self):
        if self.connection is not None:
            try:
                self.connection.close()
            except OSError:
                pass
            self.connection = None


def raw_exchange(port, data, timeout=5.0, host="127.0.0.1", send_timeout=None, chunks=None):
    """Sends `data` (or each of `chunks`) on a fresh connection and reads until EOF or `timeout`.

    Returns (response bytes, closed_by_peer, error). Send errors after the peer answered and closed are normal
    for requests the server refuses early; they are reported in `error` but the bytes read still count.
    """
    sock = socket.create_connection((host, port), timeout=timeout)
    received = bytearray()
    closed = False
    error = None
    try:
        sock.settimeout(send_timeout or timeout)
        try:
            for piece in (chunks if chunks is not None else [data]):
                sock.sendall(piece)
        except OSError as e:
            error = "send: %s" % e
        sock.settimeout(0.25)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError as e:
                error = (error + "; " if error else "") + "recv: %s" % e
                closed = True
                break
            if not chunk:
                closed = True
                break
            received += chunk
    finally:
        sock.close()
    return bytes(received), closed, error


STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3})")


def status_of(response_bytes):
    match = STATUS_LINE.match(response_bytes)
    return int(match.group(1)) if match else None


def all_statuses(response_bytes):
    """Statuses of the successive responses in `response_bytes` (bodies skipped by Content-Length or chunked)."""
    statuses = []
    data = response_bytes
    while data:
        end = data.find(b"\r\n\r\n")
        match = STATUS_LINE.match(data)
        if end < 0 or not match:
            if match:
                statuses.append(int(match.group(1)))
            break
        statuses.append(int(match.group(1)))
        head = data[:end].decode("latin-1").lower()
        rest = data[end + 4:]
        length = re.search(r"\r\ncontent-length:\s*(\d+)", head)
        if "transfer-encoding: chunked" in head:
            # skip chunks
            while True:
                line_end = rest.find(b"\r\n")
                if line_end < 0:
                    return statuses
                size = int(rest[:line_end].split(b";")[0] or b"0", 16)
                rest = rest[line_end + 2 + size + 2:]
                if size == 0:
                    break
            data = rest
        elif length:
            data = rest[int(length.group(1)):]
        else:
            break
    return statuses


# --------------------------------------------------------------------------------------------------
# Ferry


_BINARY_COPY = None


def ferry_binary(workdir):
    """Copies $FERRY_BIN (default /tmp/ferry-bin/ferry) into `workdir` once, so a refresh mid-run cannot bite."""
    global _BINARY_COPY
    if _BINARY_COPY and os.path.exists(_BINARY_COPY):
        return _BINARY_COPY
    source = os.environ.get("FERRY_BIN", DEFAULT_FERRY_BIN)
    if not os.path.exists(source):
        raise RuntimeError("Ferry binary not found at %s (set FERRY_BIN)" % source)
    os.makedirs(os.path.join(workdir, "bin"), exist_ok=True)
    target = os.path.join(workdir, "bin", "ferry")
    shutil.copy2(source, target)
    os.chmod(target, 0o755)
    _BINARY_COPY = target
    return target


class Ferry:
    """One `ferry serve` process on 127.0.0.1 with its own spool under `workdir/name`."""

    def __init__(self, workdir, name="ferry", token=None, allow_private=False, max_concurrent=None,
                 extra_args=(), log_level=None, extra_env=None):
        self.workdir = workdir
        self.extra_env = dict(extra_env or {})
        self.name = name
        self.root = os.path.join(workdir, name)
        self.spool = os.path.join(self.root, "spool")
        self.log_path = os.path.join(self.root, "ferry.log")
        self.token = token
        self.allow_private = allow_private
        self.max_concurrent = max_concurrent
        self.extra_args = list(extra_args)
        self.log_level = log_level
        self.process = None
        self.port = None

    def start(self, timeout=30):
        os.makedirs(self.root, exist_ok=True)
        binary = ferry_binary(self.workdir)
        args = [binary, "serve", "--host", "127.0.0.1", "--port", "0", "--spool", self.spool,
                "--min-free-space", "0", "--public", os.path.join(REPO, "Public")]
        if self.allow_private:
            args.append("--allow-private-networks")
        if self.token:
            args += ["--token", self.token]
        if self.max_concurrent:
            args += ["--max-concurrent", str(self.max_concurrent)]
        if self.log_level:
            args += ["--log-level", self.log_level]
        args += self.extra_args
        env = {k: v for k, v in os.environ.items() if not k.startswith("FERRY_")}
        for proxy in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env.pop(proxy, None)
        env.update(self.extra_env)
        self.process = spawn(args, log_path=self.log_path, env=env)
        deadline = time.monotonic() + timeout
        pattern = re.compile(r"port=(\d+) .*Ferry listening")
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("ferry exited with %s; log:\n%s" % (self.process.returncode, self.log_tail()))
            try:
                with open(self.log_path, "r", errors="replace") as handle:
                    match = pattern.search(handle.read())
            except FileNotFoundError:
                match = None
            if match:
                self.port = int(match.group(1))
                break
            time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("ferry did not log its port; log:\n%s" % self.log_tail())
        if not wait_for(self.healthy, max(1.0, deadline - time.monotonic()), 0.1):
            raise RuntimeError("ferry /healthz never answered; log:\n%s" % self.log_tail())
        return self

    def healthy(self):
        try:
            c = Client(self.port, timeout=2)
            ok = c.get("/healthz").status == 200
            c.close()
            return ok
        except OSError:
            return False

    @property
    def pid(self):
        return self.process.pid if self.process else None

    def client(self, timeout=30):
        return Client(self.port, self.token, timeout=timeout)

    def stop(self, grace=12.0):
        if self.process is None:
            return None
        code = stop(self.process, grace=grace)
        return code

    def log_tail(self, lines=40):
        try:
            with open(self.log_path, "r", errors="replace") as handle:
                return "".join(handle.readlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def crash_summary(self):
        """The fatal lines of the log (precondition, fatal error, the crashed thread's first frames), or ''."""
        try:
            with open(self.log_path, "r", errors="replace") as handle:
                lines = handle.read().splitlines()
        except FileNotFoundError:
            return ""
        out = []
        for i, line in enumerate(lines):
            if re.search(r"Precondition failed|Fatal error|Assertion failed|Program crashed", line):
                out.append(line.strip())
            elif re.search(r'^Thread \d+ .*crashed:', line):
                out.append(line.strip())
                out.extend(l.strip() for l in lines[i + 1:i + 6] if l.strip())
        return "\n".join(out[:12])

    def rss_kib(self):
        try:
            with open("/proc/%d/status" % self.pid) as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, TypeError):
            return None
        return None


def wait_job(client, job_id, states, timeout=30.0, interval=0.1):
    """Polls GET /api/v1/jobs/{id} until its state is in `states`; returns the last job (or None)."""
    deadline = time.monotonic() + timeout
    job = None
    while True:
        response = client.get("/api/v1/jobs/" + job_id)
        if response.status == 200:
            job = response.json()
            if job and job.get("state") in states:
                return job
        if time.monotonic() >= deadline:
            return job
        time.sleep(interval)


class FaultOrigin:
    """Tests/Fixtures/fault_origin.py on 127.0.0.1, or `host` (port chosen by itself, read from its port file)."""

    def __init__(self, workdir, name="origin", host="127.0.0.1"):
        self.dir = os.path.join(workdir, name)
        self.host = host
        self.process = None
        self.port = None

    def start(self, timeout=15):
        os.makedirs(self.dir, exist_ok=True)
        port_file = os.path.join(self.dir, "port")
        self.process = spawn([sys.executable, FAULT_ORIGIN, "--host", self.host, "--port", "0", "--port-file",
                              port_file, "--exit-with-parent"], log_path=os.path.join(self.dir, "origin.log"))
        if not wait_for(lambda: os.path.exists(port_file), timeout):
            raise RuntimeError("fault origin did not start")
        with open(port_file) as handle:
            self.port = int(handle.read().strip())
        return self

    def url(self, path):
        return "http://%s:%d%s" % (self.host, self.port, path)

    def requests(self):
        c = Client(self.port, host=self.host, timeout=5)
        try:
            return c.get("/_requests").json() or []
        finally:
            c.close()

    def stop(self):
        if self.process:
            stop(self.process, grace=3)


class ConnectionCounter:
    """Listens on 127.0.0.1:port and [::1]:port and counts every accepted connection (then closes it)."""

    def __init__(self, port=None):
        self.port = port or free_port(both_families=True)
        self.count = 0
        self.peers = []
        self.lock = threading.Lock()
        self.sockets = []
        self.running = True
        for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            s = socket.socket(family, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s.bind((address, self.port))
            except OSError:
                s.close()
                continue
            s.listen(64)
            s.settimeout(0.2)
            self.sockets.append(s)
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s):
        while self.running:
            try:
                conn, peer = s.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.count += 1
                self.peers.append(peer)
            conn.close()

    def close(self):
        self.running = False
        for s in self.sockets:
            s.close()


def make_workdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def remove_workdir(path, keep=False):
    if keep:
        log("work directory kept: %s" % path)
        return
    shutil.rmtree(path, ignore_errors=True)
