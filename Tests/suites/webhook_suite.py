#!/usr/bin/env python3
"""Webhook suite: Ferry's signed completion notices (docs/API.md, "Webhooks"), end to end with real parts.

A `ferry serve` process, the fault origin and a webhook receiver, all on 127.0.0.1. The receiver is an HTTP server
in this process that answers each notice with the next status of a per-path plan (then 200) and records what it got.
Every notice is verified twice: by `verify()` below, written from the Standard Webhooks specification (HMAC-SHA256
with the base64-decoded key after `whsec_`, over "<id>.<timestamp>.<body>", compared with each `v1,` signature of
the header), and by PyPI's `standardwebhooks` library when it is installed (`pip install standardwebhooks`).

Checks:
  - job.finished, job.failed and job.cancelled arrive signed, with the job object as `data`, to the job's `notify`
    and to the global --webhook-url; the secret given by --webhook-secret is the one used;
  - a receiver answering 500 then 200 gets the same webhook-id again (and /metrics counts retried and delivered);
  - a receiver answering 410 gets the notice once, never again (`gone`);
  - a notice pending while its receiver is down survives `kill -9` of Ferry and arrives after the restart;
  - a private notify URL is refused at submit (403 forbidden_destination) without --allow-network, and accepted
    with `--allow-network 127.0.0.1/32`; the generated secret is kept in the spool with mode 0600.

FERRY_WEBHOOK_RETRY_BASE=0.3 (a test-only variable) shortens the first retry from 5 s so the suite takes seconds.
Run: FERRY_BIN=.build/debug/ferry python3 Tests/suites/webhook_suite.py
"""

import base64
import hashlib
import hmac
import json
import os
import stat
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402

try:
    from standardwebhooks.webhooks import Webhook as LibraryWebhook
except ImportError:  # the library is optional: the spec's own verifier always runs
    LibraryWebhook = None

SECRET = "whsec_" + base64.b64encode(b"ferry webhook suite key, 32 byt").decode()


def verify(secret, headers, body, tolerance=300):
    """Standard Webhooks verification, from the specification: True when one `v1,` signature matches."""
    if not secret.startswith("whsec_"):
        return False
    key = base64.b64decode(secret[len("whsec_"):])
    msg_id, timestamp, signatures = headers.get("webhook-id"), headers.get("webhook-timestamp"), headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    expected = base64.b64encode(hmac.new(key, ("%s.%s." % (msg_id, timestamp)).encode() + body, hashlib.sha256).digest())
    for item in signatures.split(" "):
        version, _, value = item.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return True
    return False


class Receiver:
    """Records every POST; answers each path with the next status of its plan, then 200; closes when down."""

    def __init__(self, secret):
        self.secret = secret
        self.lock = threading.Lock()
        self.received = []
        self.plans = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with receiver.lock:
                    plan = receiver.plans.get(self.path, [])
                    status = plan.pop(0) if plan else 200
                    receiver.received.append({"path": self.path, "headers": headers, "body": body, "status": status,
                                              "at": time.time()})
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = None
        self.start()

    def start(self):
        """Serves (again, on the same port after `stop`)."""
        if self.thread is None:
            if self.server is None:
                self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler)
            self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
            self.thread.start()

    def stop(self):
        if self.thread is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
            self.thread = None

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def at(self, path):
        with self.lock:
            return [r for r in self.received if r["path"] == path]


def signed(suite, notice, secret, name):
    own = verify(secret, notice["headers"], notice["body"])
    suite.check(name + ": signature verifies (spec verifier)", own, notice["headers"].get("webhook-signature", ""))
    if LibraryWebhook is not None:
        try:
            LibraryWebhook(secret).verify(notice["body"], notice["headers"])
            library = True
        except Exception as error:  # noqa: BLE001 - the library's verification error
            library = False
            suite.check(name + ": signature verifies (standardwebhooks)", False, repr(error))
        if library:
            suite.check(name + ": signature verifies (standardwebhooks)", True)
    # A wrong key must not verify: the verifier can fail.
    wrong = "whsec_" + base64.b64encode(b"another key entirely, 32 bytes!!").decode()
    suite.check(name + ": a wrong key does not verify", not verify(wrong, notice["headers"], notice["body"]))


def body(suite, ferry, origin, receiver):
    # -- finished, failed, cancelled; job notify + global url; retry 500 -> 200 --
    receiver.plans["/retry"] = [500]
    finished = ferry.submit({"url": origin.url("/f/done.bin?size=70000&seed=3"), "notify": receiver.url("/retry")}).json()
    suite.check("notify is shown in the job", finished.get("notify") == receiver.url("/retry"), str(finished.get("notify")))
    failed = ferry.submit({"url": origin.url("/f/gone.bin?status=404"), "notify": receiver.url("/job")}).json()
    paused = ferry.submit({"url": origin.url("/f/never.bin?size=10"), "notify": receiver.url("/job"), "paused": True}).json()
    suite.check("cancel answers 200", ferry.action(paused["id"], "cancel").status == 200)

    def arrived():
        return len(receiver.at("/retry")) >= 2 and len(receiver.at("/job")) >= 2 and len(receiver.at("/global")) >= 3
    S.wait_until(arrived, 30)
    by_type = {}
    for notice in receiver.at("/job") + receiver.at("/global"):
        payload = json.loads(notice["body"])
        by_type.setdefault(payload["type"], []).append((notice, payload))
    for kind, job in (("job.failed", failed), ("job.cancelled", paused)):
        got = [(n, p) for n, p in by_type.get(kind, []) if p["data"]["id"] == job["id"]]
        suite.check(kind + " arrives at the job's notify and at --webhook-url", len(got) == 2, str(len(got)))
        for notice, payload in got[:1]:
            signed(suite, notice, SECRET, kind)
            suite.check(kind + ": data is the job object", payload["data"]["state"] == kind.split(".")[1]
                        and "timestamp" in payload and notice["headers"].get("content-type") == "application/json")
    retried = receiver.at("/retry")
    suite.check("a 500 is retried", len(retried) >= 2 and retried[0]["status"] == 500 and retried[1]["status"] == 200,
                str([r["status"] for r in retried]))
    if len(retried) >= 2:
        suite.check("the retry carries the same webhook-id",
                    retried[0]["headers"]["webhook-id"] == retried[1]["headers"]["webhook-id"])
        payload = json.loads(retried[1]["body"])
        suite.check("job.finished carries the finished job", payload["type"] == "job.finished"
                    and payload["data"]["id"] == finished["id"] and payload["data"]["sha256"] is not None)
        signed(suite, retried[1], SECRET, "job.finished (retried)")
        ids = {r["headers"]["webhook-id"] for r in receiver.received}
        suite.check("each notice has its own webhook-id", len(ids) == len({(r["path"], r["body"]) for r in receiver.received}))
    time.sleep(1.0)
    suite.check("a delivered notice is not sent again", len(receiver.at("/retry")) == 2, str(len(receiver.at("/retry"))))
    metrics = ferry.request("GET", "/metrics").body.decode()
    suite.check("/metrics counts retried notices", 'ferry_webhook_notices_total{result="retried"} 1' in metrics)
    suite.check("/metrics counts delivered notices", 'ferry_webhook_notices_total{result="delivered"}' in metrics
                and 'ferry_webhook_notices_total{result="delivered"} 0' not in metrics)

    # -- 410 stops --
    receiver.plans["/gone"] = [410, 410, 410]
    ferry.submit({"url": origin.url("/f/g.bin?size=100&seed=4"), "notify": receiver.url("/gone")})
    S.wait_until(lambda: len(receiver.at("/gone")) >= 1, 20)
    time.sleep(2.5)  # several retry periods at the suite's base
    suite.check("a 410 stops at once", len(receiver.at("/gone")) == 1, str(len(receiver.at("/gone"))))
    metrics = ferry.request("GET", "/metrics").body.decode()
    suite.check("/metrics counts gone notices", 'ferry_webhook_notices_total{result="gone"} 1' in metrics)

    # -- kill -9 with a notice pending, receiver down; restart; it arrives --
    receiver.stop()
    job = ferry.submit({"url": origin.url("/f/k.bin?size=100&seed=5"), "notify": receiver.url("/after-crash")}).json()
    S.wait_until(lambda: (ferry.job(job["id"]) or {}).get("state") == "finished", 20)
    time.sleep(1.0)  # a few failed tries, each stored with its next due time
    ferry.kill9()
    receiver.start()
    ferry.start()
    S.wait_until(lambda: len(receiver.at("/after-crash")) >= 1, 30)
    crashed = receiver.at("/after-crash")
    suite.check("a notice pending at kill -9 arrives after the restart", len(crashed) >= 1, str(len(crashed)))
    if crashed:
        payload = json.loads(crashed[0]["body"])
        suite.check("it is the finished job's notice", payload["type"] == "job.finished" and payload["data"]["id"] == job["id"])
        signed(suite, crashed[0], SECRET, "notice after restart")


def guard(suite, workdir, binary, receiver):
    """Without --allow-network a private notify URL is refused at submit; the generated secret is kept 0600."""
    spool = S.temp_dir("ferry-webhook-guard")
    logs = S.temp_dir("ferry-webhook-guard-logs")
    ferry = S.Ferry(binary, spool, logs)
    ferry.command = lambda: [binary, "serve", "--host", "127.0.0.1", "--port", str(ferry.port), "--spool", spool,
                             "--min-free-space", "0", "--public", S.PUBLIC_DIR]
    ferry.start()
    refused = ferry.submit({"url": "https://example.com/file.bin", "notify": receiver.url("/private"), "paused": True})
    suite.check("a private notify URL is refused at submit", refused.status == 403
                and (refused.json() or {}).get("error", {}).get("code") == "forbidden_destination", repr(refused))
    bad = ferry.submit({"url": "https://example.com/file.bin", "notify": "ftp://example.com/x", "paused": True})
    suite.check("a notify URL that is not http(s) is refused", bad.status == 400
                and (bad.json() or {}).get("error", {}).get("code") == "unsupported_scheme", repr(bad))
    path = os.path.join(spool, "webhook-secret")
    mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else None
    suite.check("a generated secret is kept in the spool with mode 0600", mode == 0o600, oct(mode or 0))
    with open(path) as handle:
        text = handle.read().strip()
    suite.check("the generated secret is whsec_ + base64 of 32 bytes", text.startswith("whsec_")
                and len(base64.b64decode(text[6:])) == 32)
    suite.check("the generated secret is logged once", ferry.log_text().count(text) == 1)
    ferry.stop()
    ferry.start()
    suite.check("a restart keeps the secret and does not log it again", ferry.log_text().count(text) == 1)
    ferry.stop()


def main(suite):
    os.environ["FERRY_WEBHOOK_RETRY_BASE"] = "0.3"
    workdir = S.temp_dir("ferry-webhook-suite")
    binary = S.ferry_binary(workdir)
    origin_dir = S.temp_dir("ferry-webhook-origin")
    origin = S.FaultOrigin(origin_dir).start()
    receiver = Receiver(SECRET)
    S.CLEANUP.push("stop receiver", receiver.stop)
    spool = S.temp_dir("ferry-webhook-spool")
    logs = S.temp_dir("ferry-webhook-logs")
    ferry = S.Ferry(binary, spool, logs)
    ferry.command = lambda: [binary, "serve", "--host", "127.0.0.1", "--port", str(ferry.port), "--spool", spool,
                             "--allow-network", "127.0.0.1/32", "--min-free-space", "0", "--public", S.PUBLIC_DIR,
                             "--webhook-url", receiver.url("/global"), "--webhook-secret", SECRET]
    ferry.start()
    body(suite, ferry, origin, receiver)
    ferry.stop()
    guard(suite, workdir, binary, receiver)
    if LibraryWebhook is None:
        S.log("  note  standardwebhooks is not installed: only the spec's own verifier ran")


if __name__ == "__main__":
    S.run_suite(S.Suite("webhooks"), main)
