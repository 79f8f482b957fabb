#!/usr/bin/env python3
"""Ferry's fault origin: a small HTTP/1.1 server on 127.0.0.1 that misbehaves on request.

Started by FerryTestSupport.FaultOrigin; standard library only. The URL scheme is the contract in
/work/CONTRACTS.md ("Fault origin URL scheme"):

  /f/<name>?size=&seed=&etag=&lm=&cd=&ct=&status=&fail_times=&retry_after=&drop_after=&stall_after=
           &stall_secs=&short_by=&ignore_range=1&etag_change_after=&no_length=1&rate=&key=
           &fault_start=&accept_ranges=

  fault_start=<offset>: the faults (status, drop_after, stall_after, short_by, rate) apply only to requests whose
  Range starts at <offset> (a request without Range starts at 0), and fail_times counts only those requests;
  e.g. one segment of a multi-connection download is slow or dropped while the others are served normally.
  accept_ranges=<value>: the Accept-Ranges value sent (default "bytes"; empty: no Accept-Ranges header). Ranges
  are still honoured; combine with ignore_range=1 for an origin that serves none.
  /r/<n>?to=<url>   302 to /r/<n-1>, ..., /r/1 answers 302 to <url> (n redirects in all; /r/0 behaves as /r/1)
  /loop             302 to itself, forever
  /_requests        JSON array of every request received (except /_requests, /_uploads and /_reset)
  /_uploads         JSON array of every upload received (PUT or POST to /u/...), in the order they ended
  /_reset           clears the request log, the upload log and the per-key counters

Uploads (onward delivery targets): PUT or POST to

  /u/<name>?statuses=&retry_after=&reset_after=&stall_after=&stall_secs=&fault_times=&key=

  The body is read whole (Content-Length or chunked; `Expect: 100-continue` is answered), then the request is
  answered with the next status of `statuses` (a comma list, one per request to the same key; 201 once the list is
  used up), with `Retry-After: <retry_after>` on every non-2xx answer when given. The faults apply to the first
  `fault_times` requests of the key (default 1): reset_after=N reads N body bytes and resets the connection (RST);
  stall_after=N stops reading after N body bytes for stall_secs seconds (default 10), then reads on; answer_after=S
  waits S seconds after the whole body before answering. The key
  defaults to the path with the query minus `key`, as for /f/.
  Each upload is recorded (/_uploads): method, path, key, number (1-based per key), headers (lower-cased), body
  length and SHA-256 of the bytes received, complete (false when reset), status answered, times (arrival, body
  read, answered: Unix seconds), a timeline of [seconds since arrival, body bytes] about every 50 ms, and for
  multipart/form-data the parts: name, filename, content type, length, SHA-256 and, for parts of up to 4 KiB, the
  value as text. A PUT body is hashed as it streams; a multipart body is held in memory to be split into parts.

Body content: Fixture.content(size, seed) -- a 65,521-byte block from xorshift32 seeded with
(seed * 2654435761 + 1) & 0xffffffff (1 when that is 0), byte = state & 0xff after each step, repeated.

Threads: one per connection (ThreadingHTTPServer). Shared state (request log, per-key counters, content
blocks) is owned by `State` and guarded by its single lock.
"""

import argparse
import email.utils
import fcntl
import hashlib
import json
import os
import re
import socket
import struct
import sys
import termios
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

BLOCK_SIZE = 65521
DEFAULT_LAST_MODIFIED = 1_700_000_000  # 2023-11-14T22:13:20Z
CHANGED_LAST_MODIFIED_STEP = 3600


def content_block(seed):
    """The 65,521-byte block for `seed` (see the module doc)."""
    state = (seed * 2654435761 + 1) & 0xFFFFFFFF
    if state == 0:
        state = 1
    out = bytearray(BLOCK_SIZE)
    for i in range(BLOCK_SIZE):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out[i] = state & 0xFF
    return bytes(out)


class State:
    """Process-wide mutable state; every field is guarded by `lock`."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.uploads = []
        self.counters = {}
        self.blocks = {}

    def log(self, entry):
        with self.lock:
            self.requests.append(entry)

    def log_upload(self, record):
        """Adds a finished upload's record (never changed afterwards)."""
        with self.lock:
            self.uploads.append(record)

    def snapshot(self):
        with self.lock:
            return list(self.requests)

    def upload_snapshot(self):
        with self.lock:
            return list(self.uploads)

    def reset(self):
        with self.lock:
            self.requests.clear()
            self.uploads.clear()
            self.counters.clear()

    def count(self, key):
        """Counts one more request for `key`; returns its 1-based number."""
        with self.lock:
            n = self.counters.get(key, 0) + 1
            self.counters[key] = n
            return n

    def doubled_block(self, seed):
        """block + block, so any window of up to BLOCK_SIZE bytes at any phase is one contiguous slice."""
        with self.lock:
            cached = self.blocks.get(seed)
        if cached is not None:
            return cached
        block = content_block(seed)
        doubled = memoryview(block + block)
        with self.lock:
            self.blocks.setdefault(seed, doubled)
            return self.blocks[seed]


STATE = State()


class ConnectionDropped(Exception):
    """Raised after the handler closed the connection on purpose (reset or short body)."""


def parse_range(header, size):
    """Parses a single byte range. Returns (start, end) inclusive, 'unsatisfiable', or None (ignore the header)."""
    if header is None:
        return None
    header = header.strip()
    if not header.startswith("bytes="):
        return None
    spec = header[len("bytes="):].strip()
    if "," in spec or "-" not in spec:
        return None
    first, last = spec.split("-", 1)
    first, last = first.strip(), last.strip()
    try:
        if first == "":
            if not last.isdigit():
                return None
            suffix = int(last)
            if suffix == 0 or size == 0:
                return "unsatisfiable"
            return (max(0, size - suffix), size - 1)
        if not first.isdigit() or (last != "" and not last.isdigit()):
            return None
        start = int(first)
        end = int(last) if last != "" else size - 1
        if last != "" and end < start:
            return None
        if start >= size:
            return "unsatisfiable"
        return (start, min(end, size - 1))
    except ValueError:
        return None


def http_date(unix_time):
    return email.utils.formatdate(unix_time, usegmt=True)


def if_range_matches(if_range, etag, last_modified):
    """RFC 9110 13.1.5: strong comparison of an entity tag, or an HTTP date equal to Last-Modified."""
    value = if_range.strip()
    if value.startswith('"') or value.startswith("W/"):
        return not value.startswith("W/") and not etag.startswith("W/") and value == etag
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return False
    if parsed is None:
        return False
    return int(parsed.timestamp()) == last_modified


def quoted_etag(raw):
    if raw.startswith('"') or raw.startswith("W/"):
        return raw
    return '"' + raw + '"'


def int_param(query, name, default=None):
    value = query.get(name)
    if value is None or value == "":
        return default
    return int(value)


def float_param(query, name, default=None):
    value = query.get(name)
    if value is None or value == "":
        return default
    return float(value)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FerryFaultOrigin/1"

    def log_message(self, format, *args):  # noqa: A002 - BaseHTTPRequestHandler's signature
        pass

    def do_GET(self):
        self.route()

    def do_HEAD(self):
        self.route()

    def do_PUT(self):
        self.route()

    def do_POST(self):
        self.route()

    # -- routing --------------------------------------------------------------------------------

    def route(self):
        split = urlsplit(self.path)
        path = unquote(split.path)
        pairs = parse_qsl(split.query, keep_blank_values=True)
        query = {}
        for name, value in pairs:
            query.setdefault(name, value)
        if path == "/_requests":
            body = json.dumps(STATE.snapshot()).encode()
            self.send_small(200, body, "application/json")
            return
        if path == "/_uploads":
            body = json.dumps(STATE.upload_snapshot()).encode()
            self.send_small(200, body, "application/json")
            return
        if path == "/_reset":
            STATE.reset()
            self.send_small(200, b"reset\n", "text/plain")
            return
        STATE.log({
            "method": self.command,
            "path": path,
            "target": self.path,
            "query": query,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "range": self.headers.get("Range"),
            "if_range": self.headers.get("If-Range"),
            "time": time.time(),
        })
        key = query.get("key")
        if key is None:
            rest = urlencode([(n, v) for n, v in pairs if n != "key"])
            key = path + ("?" + rest if rest else "")
        try:
            if self.command in ("PUT", "POST"):
                if not path.startswith("/u/"):
                    self.close_connection = True  # the body is not read
                    self.send_small(404, b"uploads go to /u/<name>\n", "text/plain")
                    return
                self.receive_upload(path, query, key)
            elif path.startswith("/f/"):
                self.serve_file(query, key)
            elif path.startswith("/r/"):
                self.serve_redirect_chain(path, query)
            elif path == "/loop":
                self.redirect(self.absolute("/loop"))
            else:
                self.send_small(404, b"not found\n", "text/plain")
        except ConnectionDropped:
            self.close_connection = True
        except ValueError as error:
            self.send_small(400, ("bad parameter: %s\n" % error).encode(), "text/plain")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def absolute(self, target):
        host, port = self.server.server_address[:2]
        return "http://%s:%d%s" % (host, port, target)

    def serve_redirect_chain(self, path, query):
        n = int(path[len("/r/"):] or "0")
        to = query.get("to")
        if to is None:
            raise ValueError("to is required")
        if n > 1:
            self.redirect(self.absolute("/r/%d?to=%s" % (n - 1, quote(to, safe=""))))
        else:
            self.redirect(to)

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_small(self, status, body, content_type, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    # -- /f/<name> ------------------------------------------------------------------------------

    def serve_file(self, query, key):
        number = STATE.count(key)
        size = int_param(query, "size", 0)
        seed = int_param(query, "seed", 0)
        last_modified = int_param(query, "lm", DEFAULT_LAST_MODIFIED)
        etag_param = query.get("etag")
        etag = quoted_etag(etag_param) if etag_param else '"s%d-%d"' % (seed, size)
        change_after = int_param(query, "etag_change_after")
        if change_after is not None and number > change_after:
            seed += 1
            last_modified += CHANGED_LAST_MODIFIED_STEP
            etag = etag[:-1] + '-changed"' if etag_param else '"s%d-%d"' % (seed, size)
        fail_times = int_param(query, "fail_times")
        fault_start = int_param(query, "fault_start")
        matched = True
        fault_number = number
        if fault_start is not None:
            asked = parse_range(self.headers.get("Range"), size)
            matched = (asked[0] if isinstance(asked, tuple) else 0) == fault_start
            fault_number = STATE.count(key + "#start=%d" % fault_start) if matched else 0
        failing = matched and (fail_times is None or fault_number <= fail_times)

        status = int_param(query, "status")
        if status is not None and failing:
            extra = []
            if query.get("retry_after"):
                extra.append(("Retry-After", query["retry_after"]))
            body = ("fault origin: status %d (request %d of key %s)\n" % (status, number, key)).encode()
            self.send_small(status, body, "text/plain", extra)
            return

        range_header = self.headers.get("Range")
        if query.get("ignore_range") == "1":
            range_header = None
        if range_header is not None and self.headers.get("If-Range") is not None:
            if not if_range_matches(self.headers["If-Range"], etag, last_modified):
                range_header = None
        parsed = parse_range(range_header, size)
        if parsed == "unsatisfiable":
            self.send_small(416, b"range not satisfiable\n", "text/plain", [
                ("Content-Range", "bytes */%d" % size), ("ETag", etag),
                ("Last-Modified", http_date(last_modified)), ("Accept-Ranges", "bytes")])
            return
        if parsed is None:
            start, length, code = 0, size, 200
        else:
            start, length, code = parsed[0], parsed[1] - parsed[0] + 1, 206

        no_length = query.get("no_length") == "1"
        self.send_response(code)
        self.send_header("Content-Type", query.get("ct") or "application/octet-stream")
        if not no_length:
            self.send_header("Content-Length", str(length))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        if code == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, start + length - 1, size))
        accept_ranges = query.get("accept_ranges", "bytes")
        if accept_ranges:
            self.send_header("Accept-Ranges", accept_ranges)
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", http_date(last_modified))
        if query.get("cd"):
            self.send_header("Content-Disposition", query["cd"])
        self.end_headers()
        if self.command == "HEAD":
            return

        drop_after = int_param(query, "drop_after") if failing else None
        short_by = int_param(query, "short_by", 0) if matched else 0
        to_send = max(0, length - short_by)
        if drop_after is not None:
            to_send = min(to_send, drop_after)
        self.send_body(seed, start, to_send, query, matched)
        if drop_after is not None and drop_after < length:
            self.reset_connection()
        if short_by > 0 or no_length:
            self.finish_connection()

    def send_body(self, seed, start, count, query, matched=True):
        doubled = STATE.doubled_block(seed)
        rate = float_param(query, "rate") if matched else None
        stall_after = int_param(query, "stall_after") if matched else None
        stall_secs = float_param(query, "stall_secs", 10.0)
        sock = self.connection
        sent = 0
        stalled = stall_after is None
        began = time.monotonic()
        while sent < count:
            if not stalled and sent >= stall_after:
                time.sleep(stall_secs)
                began += stall_secs
                stalled = True
            n = min(count - sent, BLOCK_SIZE)
            if not stalled:
                n = min(n, stall_after - sent)
            if rate is not None:
                n = min(n, max(1, int(rate / 20)))
                delay = began + sent / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            phase = (start + sent) % BLOCK_SIZE
            sock.sendall(doubled[phase:phase + n])
            sent += n

    # -- uploads: /u/<name> ---------------------------------------------------------------------

    def receive_upload(self, path, query, key):
        number = STATE.count(key)
        statuses = [int(x) for x in query.get("statuses", "").split(",") if x.strip()]
        status = statuses[number - 1] if number <= len(statuses) else 201
        faulty = number <= int_param(query, "fault_times", 1)
        reset_after = int_param(query, "reset_after") if faulty else None
        stall_after = int_param(query, "stall_after") if faulty else None
        stall_secs = float_param(query, "stall_secs", 10.0)
        content_type = self.headers.get("Content-Type") or ""
        multipart = content_type.lower().startswith("multipart/form-data")
        arrived = time.time()
        record = {
            "method": self.command, "path": path, "key": key, "number": number,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "time": arrived, "complete": False, "status": None, "length": 0, "sha256": None, "timeline": [[0.0, 0]],
        }
        digest = hashlib.sha256()
        kept = bytearray() if multipart else None
        received = 0
        last_sample = arrived
        stalled = stall_after is None
        for chunk in self.body_chunks(lambda: None if reset_after is None else reset_after - received,
                                      lambda: None if stalled else stall_after - received):
            digest.update(chunk)
            if kept is not None:
                kept += chunk
            received += len(chunk)
            now = time.time()
            if now - last_sample >= 0.05:
                record["timeline"].append([round(now - arrived, 4), received])
                last_sample = now
            if not stalled and received >= stall_after:
                time.sleep(stall_secs)
                stalled = True
            if reset_after is not None and received >= reset_after:
                break
        record["timeline"].append([round(time.time() - arrived, 4), received])
        record["length"] = received
        record["sha256"] = digest.hexdigest()
        record["body_read"] = time.time()
        if reset_after is not None and received >= reset_after:
            STATE.log_upload(record)
            self.reset_now()
        record["complete"] = True
        if kept is not None:
            record["parts"] = multipart_parts(bytes(kept), content_type)
        answer_after = float_param(query, "answer_after") if faulty else None
        if answer_after:
            time.sleep(answer_after)
        extra = []
        if not 200 <= status < 300 and query.get("retry_after"):
            extra.append(("Retry-After", query["retry_after"]))
        text = "fault origin: upload %d of key %s answered %d\n" % (number, key, status)
        record["status"] = status
        try:
            self.send_small(status, text.encode(), "text/plain", extra)
        finally:
            record["answered"] = time.time()
            STATE.log_upload(record)

    def body_chunks(self, limit, pause_at):
        """The request body's bytes as they arrive (Content-Length or chunked), at most 64 KiB at a time and never
        past `limit()` or `pause_at()` bytes from here (each None when there is no such mark)."""
        def cap(n):
            for mark in (limit(), pause_at()):
                if mark is not None:
                    n = min(n, max(mark, 1))
            return n

        def exactly(count):
            while count > 0:
                data = self.rfile.read1(cap(min(count, 65536)))
                if not data:
                    raise ConnectionDropped()
                count -= len(data)
                yield data

        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                yield from exactly(size)
                self.rfile.readline()
        else:
            yield from exactly(int(self.headers.get("Content-Length") or 0))

    def reset_now(self):
        """Resets the connection at once (RST), whatever is still unread or unsent."""
        sock = self.connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        raise ConnectionDropped()

    def reset_connection(self):
        """Waits until the peer has acknowledged every byte sent (so exactly those bytes arrive), then RST."""
        sock = self.connection
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            unsent = struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0"))[0]
            if unsent == 0:
                break
            time.sleep(0.005)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        raise ConnectionDropped()

    def finish_connection(self):
        """Closes the connection with a FIN after the body (short or close-delimited)."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.connection.close()
        raise ConnectionDropped()


def multipart_parts(body, content_type):
    """The parts of a multipart/form-data body: [{name, filename, content_type, length, sha256, value?}]."""
    found = re.search(r'boundary="?([^";]+)"?', content_type)
    if not found:
        return []
    delimiter = b"--" + found.group(1).encode()
    parts = []
    for piece in body.split(delimiter)[1:]:
        if piece.startswith(b"--"):
            break
        piece = piece[2:] if piece.startswith(b"\r\n") else piece
        piece = piece[:-2] if piece.endswith(b"\r\n") else piece
        head, _, data = piece.partition(b"\r\n\r\n")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        disposition = headers.get("content-disposition", "")
        name = re.search(r';\s*name="([^"]*)"', disposition)
        filename = re.search(r';\s*filename="([^"]*)"', disposition)
        part = {"name": name.group(1) if name else None, "filename": filename.group(1) if filename else None,
                "content_type": headers.get("content-type"), "length": len(data),
                "sha256": hashlib.sha256(data).hexdigest()}
        if len(data) <= 4096:
            part["value"] = data.decode("utf-8", "replace")
        parts.append(part)
    return parts


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError, ConnectionDropped)):
            return
        super().handle_error(request, client_address)


def write_atomically(path, text):
    temp = path + ".tmp"
    with open(temp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.rename(temp, path)


def watch_parent(parent):
    """Exits when the process that started us is gone (a last resort if it died without stopping us)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (the hostile suite uses a public-range address it put on lo "
                             "inside its own network namespace)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--pid-file")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="exit when the parent process goes away")
    args = parser.parse_args()

    server = Server((args.host, args.port), Handler)
    port = server.server_address[1]
    if args.pid_file:
        write_atomically(args.pid_file, "%d\n" % os.getpid())
    if args.port_file:
        write_atomically(args.port_file, "%d\n" % port)
    if args.exit_with_parent:
        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    print("fault origin listening on %s:%d pid %d" % (args.host, port, os.getpid()), flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
