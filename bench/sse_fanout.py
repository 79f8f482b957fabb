#!/usr/bin/env python3
"""Event-stream fan-out client for the Ferry benchmark (no third-party modules, no C).

Keeps one control connection to Ferry (opened first and kept alive, so it still works when the
server's connection limit is reached), starts the downloads that keep events flowing, opens N raw
sockets to GET /api/v1/events, and while they read:

* every `--marker-interval` seconds creates a paused job whose filename carries a unique token;
  its `job` event must reach every subscriber (API.md: job events are never coalesced). For each
  marker, the arrival time at each subscriber is compared with the first arrival anywhere
  (the fan-out spread) and with the moment the POST was sent;
* on every `--sample-every`-th subscriber, parses the ids of `progress` events and compares each
  id's arrival times across the sampled subscribers that got it;
* samples the Ferry process's RSS (VmRSS) before the subscribers connect, once they are idle, and
  during the measuring window.

Arrival times are the kernel's receive timestamps of the bytes (SO_TIMESTAMPNS on every subscriber
socket, read with recvmsg): when the event reached the subscriber's socket, whatever this one Python
process was busy with at that moment. The "client" figures use the return time of the epoll_wait call
that reported the socket readable instead, which also counts this client's own backlog (it shares the
2 cores with Ferry and handles 10,000 sockets). Everything is bounded in time. Prints one JSON object on
stdout.
"""
import argparse
import json
import os
import random
import re
import resource
import select
import socket
import struct
import sys
import time

PROGRESS_ID = re.compile(rb"id: (\d+)\nevent: progress\n")


SO_TIMESTAMPNS = 35  # Linux; the control message has the same number (SCM_TIMESTAMPNS)
# CLOCK_REALTIME (receive timestamps) minus CLOCK_MONOTONIC (everything else here), taken once.
REALTIME_OFFSET = time.time() - time.monotonic()


def kernel_arrival(ancdata, fallback):
    """The receive timestamp in a recvmsg's control messages, on the monotonic clock (fallback: none)."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= 16:
            sec, nsec = struct.unpack("qq", data[:16])
            return sec + nsec / 1e9 - REALTIME_OFFSET
    return fallback


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = (len(values) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Control:
    """A keep-alive HTTP/1.1 connection used blocking for setup, then non-blocking for markers."""

    def __init__(self, port):
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""

    def request_bytes(self, method, path, body=None):
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        data = b""
        if body is not None:
            data = json.dumps(body).encode()
            head += "Content-Type: application/json\r\n"
        head += f"Content-Length: {len(data)}\r\n\r\n"
        return head.encode() + data

    def call(self, method, path, body=None):
        """Blocking request; returns (status, parsed JSON or None)."""
        self.sock.sendall(self.request_bytes(method, path, body))
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("control connection closed")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("control connection closed")
            rest += chunk
        return status, (json.loads(rest[:length]) if length else None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ferry-pid", type=int, required=True)
    ap.add_argument("--subscribers", type=int, default=10000)
    ap.add_argument("--job-url", action="append", default=[], help="URL of a download to run meanwhile (repeatable)")
    ap.add_argument("--marker-url", required=True)
    ap.add_argument("--markers", type=int, default=10)
    ap.add_argument("--marker-interval", type=float, default=1.0)
    ap.add_argument("--sample-every", type=int, default=10)
    ap.add_argument("--connect-timeout", type=float, default=60.0)
    ap.add_argument("--grace", type=float, default=15.0, help="seconds after the last marker to wait for stragglers")
    ap.add_argument("--wave", type=int, default=500, help="connections opened at once")
    args = ap.parse_args()

    result = {"subscribers_requested": args.subscribers}
    pid = args.ferry_pid
    ctl = Control(args.port)

    # 1. The downloads that keep progress events flowing.
    job_ids = []
    for url in args.job_url:
        # One connection each: segmented transfers would take the per-host slots and fewer than 20 would run.
        status, job = ctl.call("POST", "/api/v1/jobs", {"url": url, "dedupe": False, "connections": 1})
        if status not in (200, 201):
            raise SystemExit(f"creating a download answered {status}: {job}")
        job_ids.append(job["id"])
    time.sleep(1.0)
    status, listing = ctl.call("GET", "/api/v1/jobs?state=downloading&limit=1000")
    result["jobs_downloading_at_start"] = len(listing["jobs"]) if listing else None
    baseline = [rss_kb(pid)]
    for _ in range(4):
        time.sleep(0.1)
        baseline.append(rss_kb(pid))
    result["rss_baseline_kb"] = max(baseline)

    # 2. Subscribers.
    ep = select.epoll()
    request = (f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    socks = {}          # fd -> socket
    phase = {}          # fd -> 'connecting' | 'head' | 'stream'
    headbuf = {}
    statuses = {}
    closed_by_server = 0
    connect_errors = 0
    n = args.subscribers
    opened = 0
    streaming = 0
    max_fd = 0
    t_connect0 = time.monotonic()
    deadline = t_connect0 + args.connect_timeout

    # Per-fd state for the measuring phase (lists indexed by fd: fast).
    next_marker = None
    tails = None
    sampled = None
    sbuf = None

    def open_one():
        nonlocal opened, max_fd, connect_errors
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", args.port))
        except BlockingIOError:
            pass
        except OSError:
            connect_errors += 1
            s.close()
            opened += 1
            return
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        fd = s.fileno()
        max_fd = max(max_fd, fd)
        socks[fd] = s
        phase[fd] = "connecting"
        ep.register(fd, select.EPOLLOUT)
        opened += 1

    def close_fd(fd):
        try:
            ep.unregister(fd)
        except (OSError, ValueError):
            pass
        s = socks.pop(fd, None)
        if s:
            s.close()
        phase.pop(fd, None)

    def in_flight():
        return sum(1 for p in phase.values() if p != "stream")

    pending = 0
    while (opened < n or pending > 0) and time.monotonic() < deadline:
        pending = in_flight()
        while opened < n and pending < args.wave:
            open_one()
            pending += 1
        for fd, ev in ep.poll(0.5, 20000):
            p = phase.get(fd)
            s = socks.get(fd)
            if s is None:
                continue
            if p == "connecting":
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    connect_errors += 1
                    close_fd(fd)
                    continue
                try:
                    s.send(request)
                except OSError:
                    connect_errors += 1
                    close_fd(fd)
                    continue
                phase[fd] = "head"
                headbuf[fd] = b""
                ep.modify(fd, select.EPOLLIN)
            elif p == "head":
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    closed_by_server += 1
                    close_fd(fd)
                    continue
                buf = headbuf[fd] + chunk
                if b"\r\n\r\n" in buf:
                    head = buf.split(b"\r\n", 1)[0]
                    code = int(head.split()[1])
                    statuses[code] = statuses.get(code, 0) + 1
                    if code == 200:
                        phase[fd] = "stream"
                        streaming += 1
                        headbuf.pop(fd, None)
                    else:
                        close_fd(fd)
                else:
                    headbuf[fd] = buf
            else:
                # Already streaming: drain (nothing to measure yet).
                try:
                    chunk = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    closed_by_server += 1
                    streaming -= 1
                    close_fd(fd)
    t_connected = time.monotonic()
    result["connect_seconds"] = round(t_connected - t_connect0, 3)
    result["subscribers_streaming"] = streaming
    result["http_statuses"] = {str(k): v for k, v in statuses.items()}
    result["connect_errors"] = connect_errors
    for fd in [fd for fd, p in phase.items() if p != "stream"]:
        close_fd(fd)
    time.sleep(0.5)
    idle = []
    for _ in range(5):
        idle.append(rss_kb(pid))
        time.sleep(0.1)
    result["rss_subscribed_kb"] = max(x for x in idle if x is not None)

    # 3. Measure: markers on the control connection, progress ids on sampled subscribers.
    ctl.sock.setblocking(False)
    ctl_fd = ctl.sock.fileno()
    ep.register(ctl_fd, select.EPOLLIN)
    size = max(max_fd, ctl_fd) + 1
    next_marker = [0] * size
    tails = [b""] * size
    sampled = [False] * size
    sbuf = [b""] * size
    stream_fds = sorted(fd for fd, p in phase.items() if p == "stream")
    for i, fd in enumerate(stream_fds):
        if i % args.sample_every == 0:
            sampled[fd] = True
    tag = "%06x" % random.getrandbits(24)
    markers = [f"fbmark{tag}n{k:03d}".encode() for k in range(args.markers)]
    marker_sent = []
    arrivals = [[] for _ in range(args.markers)]          # kernel receive times
    client_arrivals = [[] for _ in range(args.markers)]   # epoll_wait return times
    progress = {}       # event id -> list of arrival times on sampled subscribers (kernel)
    client_progress = {}
    issued = 0
    rss_samples = []
    t_measure0 = time.monotonic()
    next_marker_at = t_measure0 + 0.5
    next_rss_at = t_measure0
    end_at = t_measure0 + 0.5 + args.marker_interval * args.markers + args.grace
    ctl_out = b""
    live = set(stream_fds)
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    busy_time = 0.0

    def all_done():
        return issued == args.markers and all(next_marker[fd] >= issued for fd in live)

    while True:
        now = time.monotonic()
        if now >= end_at:
            break
        if issued == args.markers and now > marker_sent[-1] + 0.2 and all_done():
            break
        if now >= next_rss_at:
            rss_samples.append(rss_kb(pid))
            next_rss_at = now + 0.25
        if issued < args.markers and now >= next_marker_at:
            body = {"url": args.marker_url, "filename": markers[issued].decode() + ".bin",
                    "paused": True, "dedupe": False}
            ctl_out += ctl.request_bytes("POST", "/api/v1/jobs", body)
            issued += 1
            marker_sent.append(time.monotonic())
            next_marker_at += args.marker_interval
        if ctl_out:
            try:
                sent = ctl.sock.send(ctl_out)
                ctl_out = ctl_out[sent:]
            except BlockingIOError:
                pass
        timeout = max(0.0, min(next_marker_at if issued < args.markers else end_at, next_rss_at, end_at) - time.monotonic())
        events = ep.poll(timeout, 20000)
        t = time.monotonic()
        for fd, ev in events:
            if fd == ctl_fd:
                try:
                    ctl.sock.recv(65536)  # POST answers: discarded
                except BlockingIOError:
                    pass
                continue
            s = socks.get(fd)
            if s is None:
                continue
            kt = t
            try:
                chunk, ancdata, _, _ = s.recvmsg(262144, 64)
                kt = kernel_arrival(ancdata, t)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                closed_by_server += 1
                live.discard(fd)
                close_fd(fd)
                continue
            nm = next_marker[fd]
            if nm < issued:
                data = tails[fd] + chunk
                while nm < issued and markers[nm] in data:
                    arrivals[nm].append(kt)
                    client_arrivals[nm].append(t)
                    nm += 1
                next_marker[fd] = nm
            tails[fd] = chunk[-48:]
            if sampled[fd]:
                data = sbuf[fd] + chunk
                cut = data.rfind(b"\n\n")
                if cut >= 0:
                    for m in PROGRESS_ID.finditer(data, 0, cut + 2):
                        progress.setdefault(int(m.group(1)), []).append(kt)
                        client_progress.setdefault(int(m.group(1)), []).append(t)
                    sbuf[fd] = data[cut + 2:]
                else:
                    sbuf[fd] = data
        busy_time += time.monotonic() - t
    t_measure1 = time.monotonic()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)

    # 4. Results.
    spread = []       # arrival - first arrival, every (subscriber, marker)
    from_post = []    # arrival - POST sent
    first_from_post = []
    per_marker_first = []
    missing = 0
    for k in range(issued):
        times = arrivals[k]
        missing += len(live) - len(times) if len(times) < len(live) else 0
        if not times:
            per_marker_first.append(None)
            continue
        first = min(times)
        first_from_post.append(first - marker_sent[k])
        per_marker_first.append(first - marker_sent[k])
        spread.extend(x - first for x in times)
        from_post.extend(x - marker_sent[k] for x in times)
    prog_spread = []
    prog_ids = 0
    n_sampled = sum(1 for fd in live if sampled[fd])
    for pid_, times in progress.items():
        if len(times) < 2:
            continue
        prog_ids += 1
        first = min(times)
        prog_spread.extend(x - first for x in times)

    def ms(x):
        return None if x is None else round(x * 1000, 1)

    def spreads(per_event):
        """Arrival minus first arrival, over every delivery of every event seen twice or more."""
        out = []
        for times in per_event:
            if len(times) >= 2:
                first = min(times)
                out.extend(x - first for x in times)
        return out

    client_spread = spreads(client_arrivals[:issued])
    client_prog_spread = spreads(client_progress.values())

    samples = [x for x in rss_samples if x is not None]
    result.update({
        "subscribers_live_at_end": len(live),
        "closed_by_server": closed_by_server,
        "markers": issued,
        "marker_deliveries": sum(len(a) for a in arrivals),
        "marker_missing": missing,
        "marker_first_from_post_ms": [ms(x) for x in per_marker_first],
        "marker_last_from_post_ms": [ms(max(arrivals[k]) - marker_sent[k]) if arrivals[k] else None for k in range(issued)],
        "marker_spread_ms": {"p50": ms(percentile(spread, 50)), "p99": ms(percentile(spread, 99)),
                             "max": ms(max(spread) if spread else None)},
        "marker_from_post_ms": {"p50": ms(percentile(from_post, 50)), "p99": ms(percentile(from_post, 99)),
                                "max": ms(max(from_post) if from_post else None),
                                "first_p50": ms(percentile(first_from_post, 50))},
        "client_marker_spread_ms": {"p50": ms(percentile(client_spread, 50)), "p99": ms(percentile(client_spread, 99))},
        "client_progress_spread_ms": {"p50": ms(percentile(client_prog_spread, 50)),
                                      "p99": ms(percentile(client_prog_spread, 99))},
        "progress_sampled_subscribers": n_sampled,
        "progress_ids": prog_ids,
        "progress_deliveries": len(prog_spread),
        "progress_spread_ms": {"p50": ms(percentile(prog_spread, 50)), "p99": ms(percentile(prog_spread, 99)),
                               "max": ms(max(prog_spread) if prog_spread else None)},
        "rss_peak_kb": max(samples) if samples else None,
        "measure_seconds": round(t_measure1 - t_measure0, 2),
        "client_cpu_seconds": round((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime), 2),
        "client_busy_fraction": round(busy_time / max(1e-9, t_measure1 - t_measure0), 3),
    })
    peak = result["rss_peak_kb"] or result["rss_subscribed_kb"]
    if streaming:
        result["rss_per_subscriber_kb"] = round((peak - result["rss_baseline_kb"]) / max(1, len(live) or streaming), 2)
        result["rss_per_subscriber_idle_kb"] = round((result["rss_subscribed_kb"] - result["rss_baseline_kb"]) / streaming, 2)
    # Stop the downloads (best effort) so the server is quiet for whatever comes next.
    for fd in list(socks):
        close_fd(fd)
    ctl.sock.close()
    try:
        time.sleep(0.2)
        ctl = Control(args.port)
        for job_id in job_ids:
            ctl.call("POST", f"/api/v1/jobs/{job_id}/cancel")
        ctl.sock.close()
    except Exception as e:  # noqa: BLE001 - best effort
        result["cleanup_error"] = str(e)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
