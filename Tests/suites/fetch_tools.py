"""Helpers of the fetch suite (fetch_suite.py): a wheel and its PEP 503 index, curl with its headers, and an nginx
origin that can be killed and come back on its port. Standard library only; every process is stopped by pid."""

import base64
import hashlib
import io
import os
import signal
import subprocess
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402

LOG_FIELDS = ["$http_cookie", "$http_authorization", "$http_x_secret", "$http_if_none_match"]


def sha(data):
    return hashlib.sha256(data).hexdigest()


def make_wheel(directory):
    """A pure-Python wheel (zip with METADATA, WHEEL, RECORD) for `demo-fetch` 1.0; returns (name, bytes)."""
    name = "demo_fetch-1.0-py3-none-any.whl"
    files = {
        "demo_fetch/__init__.py": b"VALUE = 42\n",
        "demo_fetch-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: demo-fetch\nVersion: 1.0\n",
        "demo_fetch-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: fetch_suite\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(data)))
    record.append("demo_fetch-1.0.dist-info/RECORD,,")
    files["demo_fetch-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    data = buffer.getvalue()
    os.makedirs(os.path.join(directory, "packages"), exist_ok=True)
    os.makedirs(os.path.join(directory, "simple", "demo-fetch"), exist_ok=True)
    with open(os.path.join(directory, "packages", name), "wb") as handle:
        handle.write(data)
    with open(os.path.join(directory, "simple", "demo-fetch", "index.html"), "w") as handle:
        handle.write('<!DOCTYPE html><html><body><a href="../../packages/%s#sha256=%s">%s</a></body></html>\n'
                     % (name, sha(data), name))
    return name, data


def run(args, timeout=60):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)


def curl_head(args, timeout=60):
    """curl -sS -D - -o body; returns (exit code, status, headers dict lower-cased, body bytes)."""
    body_path = os.path.join(S.temp_dir("ferry-fetch-curl"), "body")
    result = run(["curl", "-sS", "-D", "-", "-o", body_path] + args, timeout)
    status, headers = None, {}
    for line in result.stdout.decode("latin-1").splitlines():
        if line.startswith("HTTP/"):
            status, headers = int(line.split()[1]), {}
        elif ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    data = open(body_path, "rb").read() if os.path.exists(body_path) else b""
    return result.returncode, status, headers, data


def kill_nginx(nginx):
    """Stops nginx at once, by pid: SIGKILL to the master first (so it cannot start a new worker), then to its
    workers, waiting until each is gone; its transfers end mid-way."""
    workers = S.child_pids(nginx.process.pid)
    S.stop_pid(nginx.process, signal.SIGKILL, 5)
    for pid in workers + S.child_pids(nginx.process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(os.path.exists("/proc/%d" % pid) for pid in workers):
        time.sleep(0.02)


class PortNginx(S.Nginx):
    """nginx on a given port (the origin coming back where it was)."""

    def __init__(self, root, prefix, port):
        super().__init__(root, prefix, extra_log_fields=LOG_FIELDS)
        self.fixed_port = port

    def start(self):
        original = S.free_port
        S.free_port = lambda: self.fixed_port
        try:
            return super().start()
        finally:
            S.free_port = original


def start_nginx(root, name, port=None):
    if port:
        return PortNginx(root, S.temp_dir(name), port).start()
    return S.Nginx(root, S.temp_dir(name), extra_log_fields=LOG_FIELDS).start()
