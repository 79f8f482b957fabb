#!/usr/bin/env python3
"""Delivery suite: onward delivery (docs/API.md, "Onward delivery") across crashes and at size, with real parts.

A `ferry serve` process and an nginx on 127.0.0.1 that serves the source files and takes the uploads by WebDAV
`PUT /upload/<path>` (nginx keeps a body in its temp path and puts the file in place only once it arrived whole).

Checks:
  - kill -9 during an upload: the target holds no partial file; after the restart the delivery is sent again from
    the first byte (the job's upload progress starts over below where it was killed), without downloading again,
    and the target's file is the source byte for byte (SHA-256); `--kills` times, each later in the upload;
  - a big delivery (1 GiB; 256 MiB with --quick): the `progress` events with `"phase": "delivering"` on
    /api/v1/events never go back, carry `bytesTotal` = the size, and the terminal `job` event says every byte was
    sent; the target's file is the source byte for byte. The delivery phase's throughput is printed as a figure.

Run: FERRY_BIN=.build/debug/ferry python3 Tests/suites/delivery_suite.py [--quick] [--kills N] [--big-mib N]
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402

MiB = 1 << 20


class ProgressRecorder(S.EventRecorder):
    """EventRecorder (job events, reconnecting with Last-Event-ID) that also keeps every `progress` event:
    progress[job id] = [(monotonic time, payload)]. Subscribes with the shortest interval (100 ms)."""

    def __init__(self, port):
        super().__init__(port, interval=100)
        self.progress = {}

    def _dispatch(self, event, data, event_id):
        if event == "progress":
            try:
                payload = json.loads(data)
            except ValueError:
                payload = None
            if isinstance(payload, dict) and "id" in payload:
                with self.lock:
                    self.progress.setdefault(payload["id"], []).append((time.monotonic(), payload))
        super()._dispatch(event, data, event_id)

    def uploads(self, job_id, since=0.0):
        """The job's upload progress payloads (phase delivering) received after `since` (monotonic)."""
        with self.lock:
            return [p for t, p in self.progress.get(job_id, []) if t >= since and p.get("phase") == "delivering"]


def make_source(path, size):
    """`size` random bytes at `path` (head -c /dev/urandom); returns their SHA-256."""
    subprocess.run(["sh", "-c", 'head -c "$1" /dev/urandom > "$2"', "sh", str(size), path], check=True, timeout=600)
    return S.file_sha256(path)


def delivery_of(job):
    return (job or {}).get("delivery") or {}


def kill_during_upload(suite, ferry, nginx, recorder, kills, size):
    """kill -9 while the upload runs, `kills` times at growing fractions of it; then it completes whole."""
    S.log("kill -9 during an upload (%d kill(s), %s, job limit 8 MiB/s)" % (kills, S.fmt_bytes(size)))
    digest = make_source(os.path.join(nginx.root, "crash.bin"), size)
    target = os.path.join(nginx.root, "upload", "crash.bin")
    created = ferry.submit({"url": nginx.url("/crash.bin"), "maxBytesPerSecond": 8 * MiB,
                            "deliver": {"url": nginx.url("/upload/crash.bin")}})
    suite.check("the job with a delivery is created", created.status == 201, repr(created))
    job_id = created.json()["id"]
    for k in range(kills):
        threshold = int(size * (k + 1) / (kills + 1))
        sending = S.wait_until(lambda: (lambda j: j if j and j.get("state") == "delivering"
                                        and delivery_of(j).get("bytesSent", 0) >= threshold else None)(ferry.job(job_id)),
                               60, interval=0.05)
        if not suite.check("kill %d: the upload is past %s" % (k + 1, S.fmt_bytes(threshold)), bool(sending),
                           json.dumps(ferry.job(job_id))[:400]):
            return
        sent_at_kill = delivery_of(sending)["bytesSent"]
        if k == 0:
            downloaded = [e for e in nginx.access_log() if e["method"] == "GET" and e["path"] == "/crash.bin"]
        ferry.kill9()
        time.sleep(0.3)  # nginx notices the closed connection and drops the body it kept
        suite.check("kill %d: the target holds no partial file" % (k + 1), not os.path.exists(target),
                    "%d bytes there" % (os.path.getsize(target) if os.path.exists(target) else 0))
        restarted = time.monotonic()
        ferry.start()
        # Sent again from the first byte: the fresh attempt's progress starts below where the kill struck.
        fresh = S.wait_until(lambda: recorder.uploads(job_id, since=restarted), 30, interval=0.05)
        first = min(p["bytesSent"] for p in fresh) if fresh else None
        suite.check("kill %d: the upload starts again from the first byte" % (k + 1),
                    first is not None and first < sent_at_kill,
                    "first progress after the restart %s, %s at the kill" % (first, sent_at_kill))
    finished = S.wait_until(lambda: (lambda j: j if j and j.get("state") in ("finished", "failed") else None)(
        ferry.job(job_id)), 120)
    suite.check("after the restart(s) the job finishes delivered", (finished or {}).get("state") == "finished"
                and delivery_of(finished).get("state") == "delivered", json.dumps(finished)[:400])
    suite.check("the delivery says every byte was sent", delivery_of(finished).get("bytesSent") == size,
                str(delivery_of(finished).get("bytesSent")))
    got = S.file_sha256(target) if os.path.exists(target) else None
    suite.check("the target's file is the source byte for byte (SHA-256)", got == digest, "%s vs %s" % (got, digest))
    log = nginx.access_log()
    downloads = [e for e in log if e["method"] == "GET" and e["path"] == "/crash.bin"]
    suite.check("no download after a kill (the restart delivered the kept file)",
                0 < len(downloaded) == len(downloads), "%d GETs (some ranged) before, %d in all"
                % (len(downloaded), len(downloads)))
    puts = [e["status"] for e in log if e["method"] == "PUT" and e["path"] == "/upload/crash.bin"]
    suite.check("one PUT per attempt, only the last one complete", len(puts) == kills + 1
                and [s for s in puts if s in (201, 204)] == puts[-1:], str(puts))


def big_delivery(suite, ferry, nginx, recorder, size):
    """One big delivery: upload progress events never go back and reach the size; the file arrives whole."""
    S.log("a %s delivery with upload progress events" % S.fmt_bytes(size))
    digest = make_source(os.path.join(nginx.root, "big.bin"), size)
    target = os.path.join(nginx.root, "upload", "big.bin")
    # Paced to take about two seconds each way: an unlimited upload on loopback ends within a few progress
    # intervals (256 MiB in about 0.3 s), too few samples to judge their order.
    created = ferry.submit({"url": nginx.url("/big.bin"), "maxBytesPerSecond": size // 2,
                            "deliver": {"url": nginx.url("/upload/big.bin")}})
    job_id = created.json()["id"]
    finished = S.wait_until(lambda: (lambda j: j if j and j.get("state") in ("finished", "failed") else None)(
        ferry.job(job_id)), max(120, size / (8 * MiB)))
    suite.check("the big job finishes delivered", (finished or {}).get("state") == "finished"
                and delivery_of(finished).get("state") == "delivered", json.dumps(finished)[:400])
    # The terminal job event reaches the stream shortly after the state changed.
    S.wait_until(lambda: any(state == "finished" for _, state, _, _ in recorder.history(job_id)), 10)
    history = recorder.history(job_id)
    terminal = next((job for _, state, _, job in history if state == "finished"), None)
    suite.check("the terminal job event says every byte was sent", delivery_of(terminal).get("bytesSent") == size,
                str(delivery_of(terminal).get("bytesSent")))
    events = recorder.uploads(job_id)
    sent = [p.get("bytesSent") for p in events]
    fractions = [p.get("progress") for p in events]
    suite.check("upload progress events arrive while delivering", len(set(sent)) >= 3, "%d events: %s" % (len(sent), sent[:12]))
    suite.check("upload bytesSent never goes back", all(isinstance(x, int) for x in sent)
                and all(a <= b for a, b in zip(sent, sent[1:])), str(sent[:40]))
    suite.check("upload progress never goes back", all(isinstance(x, (int, float)) for x in fractions)
                and all(a <= b for a, b in zip(fractions, fractions[1:])), str(fractions[:40]))
    suite.check("upload progress stays within the size", all(x <= size for x in sent) and all(x <= 1 for x in fractions))
    suite.check("every upload event carries bytesTotal = the size", all(p.get("bytesTotal") == size for p in events))
    got = S.file_sha256(target) if os.path.exists(target) else None
    suite.check("the big file arrives byte for byte (SHA-256)", got == digest, "%s vs %s" % (got, digest))
    began = next((t for t, state, _, _ in history if state == "delivering"), None)
    ended = next((t for t, state, _, _ in history if state == "finished"), None)
    if began is not None and ended is not None and ended > began:
        S.log("  figure  delivery phase %.2f s: %.0f MiB/s (job events, as the stream saw them)"
              % (ended - began, size / MiB / (ended - began)))
    os.unlink(target)


def main(suite, args):
    workdir = S.temp_dir("ferry-delivery-suite")
    binary = S.ferry_binary(workdir)
    root = S.temp_dir("ferry-delivery-root")
    nginx = S.Nginx(root, S.temp_dir("ferry-delivery-nginx")).start()
    spool = S.temp_dir("ferry-delivery-spool")
    ferry = S.Ferry(binary, spool, S.temp_dir("ferry-delivery-logs"))
    ferry.start()
    recorder = ProgressRecorder(ferry.port)
    recorder.start()
    S.CLEANUP.push("stop event recorder", recorder.stop)
    kill_during_upload(suite, ferry, nginx, recorder, args.kills, args.crash_mib * MiB)
    big_delivery(suite, ferry, nginx, recorder, args.big_mib * MiB)
    status, seconds = ferry.stop()
    suite.check("SIGTERM: exit 0 within 10 s", status == 0 and seconds <= 10, "status %s after %.1f s" % (status, seconds))
    S.log("figures: suite %.1f s, %d Ferry start(s)" % (suite.elapsed(), ferry.starts))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI: one kill, a 256 MiB big delivery")
    parser.add_argument("--kills", type=int, default=None, help="SIGKILLs during one upload (default 3; 1 with --quick)")
    parser.add_argument("--crash-mib", type=int, default=None, help="size of the killed upload (default 48; 24 with --quick)")
    parser.add_argument("--big-mib", type=int, default=None, help="size of the big delivery (default 1024; 256 with --quick)")
    arguments = parser.parse_args()
    arguments.kills = arguments.kills if arguments.kills is not None else (1 if arguments.quick else 3)
    arguments.crash_mib = arguments.crash_mib or (24 if arguments.quick else 48)
    arguments.big_mib = arguments.big_mib or (256 if arguments.quick else 1024)
    S.run_suite(S.Suite("delivery"), lambda suite: main(suite, arguments))
