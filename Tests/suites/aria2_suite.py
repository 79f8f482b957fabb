#!/usr/bin/env python3
"""aria2 suite (issue 27): aria2's clients drive Ferry unmodified over `/jsonrpc` (docs/API.md, "aria2 JSON-RPC").

Started here on 127.0.0.1, in temp directories, every process stopped by pid (suitelib's CLEANUP): nginx as the
origin (`/slow/<name>?rate=N` for downloads that last), `ferry serve --token T --read-token R`, and a real
`aria2c --enable-rpc --rpc-secret T` to compare error answers with.

Checks:
  - aria2p (PyPI) driving Ferry: add, list, pause, resume, remove, purge, per-job and global options, global stat,
    and `listen_to_notifications` over the WebSocket (start, pause, stop, complete);
  - AriaNg's one-second poll as raw JSON (`system.multicall` of getGlobalStat, tellActive, tellWaiting(0,1000),
    tellStopped(-1,1000) with its keys): every number a decimal string, `keys` honoured;
  - error answers (code, message, HTTP status) equal to aria2c's for the same requests, by POST and GET;
  - the read-only token reads only; another site's Origin needs the secret;
  - hostile WebSocket frames close with 1002, 1007 or 1009, and Ferry keeps answering.

Needs: nginx, aria2c (apt `aria2`), PyPI `aria2p` and `websocket-client`.
Run: FERRY_BIN=.build/debug/ferry python3 Tests/suites/aria2_suite.py
"""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402
from aria2_errors import TOKEN, error_cases  # noqa: E402  (TOKEN: the secret aria2c shares)

import aria2p  # noqa: E402
import websocket  # noqa: E402

READ_TOKEN = "R-aria2-suite"
SMALL = 64 << 10
BIG = 4 << 20


def post(port, body, headers=None):
    """(status, parsed JSON) of a raw POST /jsonrpc; `body` bytes are sent as they are, without a Content-Type."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request("http://127.0.0.1:%d/jsonrpc" % port, data=data, headers=headers or {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def get(port, method, id_, params):
    query = "method=%s&id=%s&params=%s" % (method, id_, base64.b64encode(json.dumps(params).encode()).decode())
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open("http://127.0.0.1:%d/jsonrpc?%s" % (port, query), timeout=15) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def call(port, method, *params, secret=TOKEN):
    status, answer = post(port, {"jsonrpc": "2.0", "id": "q", "method": method,
                                 "params": (["token:" + secret] if secret else []) + list(params)})
    return answer


class Aria2c:
    """`aria2c --enable-rpc` on 127.0.0.1 with the same secret, stopped by pid."""

    def __init__(self, workdir):
        self.dir = os.path.join(workdir, "aria2c")
        os.makedirs(self.dir)
        self.port = S.free_port()
        self.process = None

    def start(self):
        executable = shutil.which("aria2c")
        if not executable:
            raise RuntimeError("aria2c is not installed (apt-get install aria2)")
        log = open(os.path.join(self.dir, "aria2c.log"), "wb")
        self.process = subprocess.Popen(
            [executable, "--enable-rpc", "--rpc-listen-port=%d" % self.port, "--rpc-listen-all=false",
             "--dir=" + self.dir, "--rpc-secret=" + TOKEN, "--no-conf", "--quiet"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        S.CLEANUP.push("stop aria2c", self.stop)
        if not S.wait_until(lambda: S.port_accepts(self.port), 15):
            raise RuntimeError("aria2c did not start")
        return self

    def stop(self):
        if self.process is not None:
            S.stop_pid(self.process)


# -- aria2p --------------------------------------------------------------------------------------------

def aria2p_checks(suite, ferry, nginx):
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=ferry.port, secret=TOKEN))
    small = api.add_uris([nginx.url("/small.bin")], options={"out": "small-copy.bin"})
    suite.check("aria2p: addUri answers a gid", len(small.gid) == 16 and all(c in "0123456789abcdef" for c in small.gid))
    rest = ferry.request("GET", "/api/v1/jobs", headers={"Authorization": "Bearer " + TOKEN}).json()["jobs"]
    suite.check("the REST job object carries the same gid", any(job["gid"] == small.gid for job in rest))
    done = S.wait_until(lambda: small.update() or small.status == "complete", 20)
    suite.check("aria2p: the download completes", done, small.status)
    suite.check("aria2p: its status in aria2's terms", small.total_length == SMALL and small.completed_length == SMALL
                and small.files[0].path.name == "small-copy.bin" and small.name == "small-copy.bin",
                "%s %s %s" % (small.total_length, small.completed_length, small.files[0].path))

    slow = api.add_uris([nginx.url("/slow/big.bin?rate=262144")], options={"max-download-limit": "200K"})
    suite.check("aria2p: a slow download is active", S.wait_until(lambda: slow.update() or slow.status == "active", 10),
                slow.status)
    suite.check("aria2p: its option reads back", slow.options.max_download_limit == 200 * 1024,
                str(slow.options.max_download_limit))
    slow.options.max_download_limit = 300 * 1024
    suite.check("aria2p: changeOption changes the job's speed limit",
                rest_job(ferry, ferry_id(ferry, slow.gid)).get("maxBytesPerSecond") == 300 * 1024)
    suite.check("aria2p: pause", api.pause([slow]) == [True] and (slow.update() or slow.status == "paused"), slow.status)
    suite.check("aria2p: resume", api.resume([slow]) == [True] and S.wait_until(
        lambda: slow.update() or slow.status in ("active", "waiting"), 10), slow.status)
    downloads = {d.gid: d.status for d in api.get_downloads()}
    suite.check("aria2p: get_downloads lists both", small.gid in downloads and slow.gid in downloads, str(downloads))

    stats = api.get_stats()
    suite.check("aria2p: global stat", stats.num_active + stats.num_waiting == 1 and stats.num_stopped == 1,
                "%d active %d waiting %d stopped" % (stats.num_active, stats.num_waiting, stats.num_stopped))
    api.set_global_options({"max-concurrent-downloads": "3", "max-overall-download-limit": "0"})
    settings = ferry.request("GET", "/api/v1/settings", headers={"Authorization": "Bearer " + TOKEN}).json()
    suite.check("aria2p: global options are the settings", api.get_global_options().max_concurrent_downloads == 3
                and settings["maxConcurrent"] == 3, str(settings))

    suite.check("aria2p: remove", api.remove([slow]) == [True])
    suite.check("the removed job is cancelled and its result removed, as aria2p asks",
                ferry_id(ferry, slow.gid) is None)
    suite.check("aria2p: purge", api.purge() is True and rest_job(ferry, ferry_id_any(rest, small.gid)) == {})


def rest_job(ferry, job_id):
    response = ferry.request("GET", "/api/v1/jobs/%s" % job_id, headers={"Authorization": "Bearer " + TOKEN})
    return response.json() if response.status == 200 else {}


def ferry_id(ferry, gid):
    jobs = ferry.request("GET", "/api/v1/jobs", headers={"Authorization": "Bearer " + TOKEN}).json()["jobs"]
    return next((job["id"] for job in jobs if job["gid"] == gid), None)


def ferry_id_any(jobs, gid):
    return next((job["id"] for job in jobs if job["gid"] == gid), "none")


def notification_checks(suite, ferry, nginx):
    api = aria2p.API(aria2p.Client(host="http://127.0.0.1", port=ferry.port, secret=TOKEN))
    seen = []
    lock = threading.Lock()

    def recorder(name):
        def record(_api, gid):
            with lock:
                seen.append((name, gid))
        return record

    api.listen_to_notifications(threaded=True, on_download_start=recorder("start"), on_download_pause=recorder("pause"),
                                on_download_stop=recorder("stop"), on_download_complete=recorder("complete"),
                                on_download_error=recorder("error"), timeout=1, handle_signals=False)
    S.CLEANUP.push("stop aria2p's listener", api.stop_listening)
    time.sleep(1.0)
    small = api.add_uris([nginx.url("/small.bin")], options={"out": "notified.bin"})
    slow = api.add_uris([nginx.url("/slow/big.bin?rate=131072")], options={"out": "notified-slow.bin"})
    S.wait_until(lambda: ("complete", small.gid) in seen and ("start", slow.gid) in seen, 20)
    api.pause([slow])
    S.wait_until(lambda: ("pause", slow.gid) in seen, 10)
    api.remove([slow])
    S.wait_until(lambda: ("stop", slow.gid) in seen, 10)
    api.stop_listening()
    with lock:
        mine = [name for name, gid in seen if gid == small.gid]
        slow_events = [name for name, gid in seen if gid == slow.gid]
    suite.check("WebSocket notifications: start then complete", mine == ["start", "complete"], str(mine))
    suite.check("WebSocket notifications: start, pause, stop in order", slow_events == ["start", "pause", "stop"],
                str(slow_events))


# -- AriaNg's poll -------------------------------------------------------------------------------------

ARIANG_KEYS = ["gid", "totalLength", "completedLength", "uploadSpeed", "downloadSpeed", "connections", "numSeeders",
               "seeder", "status", "errorCode", "verifiedLength", "verifyIntegrityPending", "files", "bittorrent",
               "infoHash"]


def ariang_checks(suite, ferry, nginx):
    for name in ("w1", "w2", "w3"):
        call(ferry.port, "aria2.addUri", [nginx.url("/small.bin?" + name)], {"pause": "true", "out": name + ".bin"})
    secret = "token:" + TOKEN
    status, answer = post(ferry.port, {"jsonrpc": "2.0", "id": "poll", "method": "system.multicall", "params": [[
        {"methodName": "aria2.getGlobalStat", "params": [secret]},
        {"methodName": "aria2.tellActive", "params": [secret, ARIANG_KEYS]},
        {"methodName": "aria2.tellWaiting", "params": [secret, 0, 1000, ARIANG_KEYS]},
        {"methodName": "aria2.tellStopped", "params": [secret, -1, 1000, ARIANG_KEYS]}]]})
    results = answer.get("result", [])
    suite.check("AriaNg poll: one answer per call, each in a one-element array",
                status == 200 and len(results) == 4 and all(isinstance(r, list) and len(r) == 1 for r in results),
                json.dumps(answer)[:300])
    stat, active, waiting, stopped = (r[0] for r in results)
    suite.check("AriaNg poll: global stat numbers are decimal strings",
                all(isinstance(v, str) and v.isdigit() for v in stat.values()) and stat["numWaiting"] == "3", str(stat))
    statuses = waiting + stopped + active
    numbers = ["totalLength", "completedLength", "uploadSpeed", "downloadSpeed", "connections"]
    suite.check("AriaNg poll: status objects keep only the keys asked, numbers as strings",
                all(set(s) <= set(ARIANG_KEYS) and all(isinstance(s[k], str) and s[k].isdigit() for k in numbers)
                    for s in statuses) and len(waiting) == 3, json.dumps(waiting[:1]))
    names = [os.path.basename(s["files"][0]["path"]) for s in waiting]
    suite.check("AriaNg poll: the waiting queue in order", names == ["w1.bin", "w2.bin", "w3.bin"], str(names))
    last = call(ferry.port, "aria2.tellWaiting", -1, 2, ["gid"])["result"]
    suite.check("tellWaiting with a negative offset counts from the end, backwards",
                [s["gid"] for s in last] == [waiting[2]["gid"], waiting[1]["gid"]], str(last))
    moved = call(ferry.port, "aria2.changePosition", waiting[2]["gid"], 0, "POS_SET")
    order = [s["gid"] for s in call(ferry.port, "aria2.tellWaiting", 0, 10, ["gid"])["result"]]
    suite.check("changePosition moves a job to the front of the queue",
                moved.get("result") == 0 and order[0] == waiting[2]["gid"], "%s %s" % (moved, order))
    page = call(ferry.port, "aria2.tellStatus", waiting[0]["gid"], ["gid", "status", "dir"])["result"]
    suite.check("the task page's tellStatus with keys", set(page) == {"gid", "status", "dir"} and page["status"] == "paused",
                str(page))
    for name in ("getUris", "getFiles", "getPeers", "getOption"):
        suite.check("the task page's %s answers" % name, "result" in call(ferry.port, "aria2." + name, waiting[0]["gid"]))
    gid = waiting[0]["gid"]
    changed = call(ferry.port, "aria2.changeOption", gid, {"out": "renamed.bin", "split": "2", "dir": "/ignored"})
    options = call(ferry.port, "aria2.getOption", gid).get("result", {})
    suite.check("changeOption before the first start: out and split", changed.get("result") == "OK"
                and options.get("out") == "renamed.bin" and options.get("split") == "2", "%s %s" % (changed, options))
    call(ferry.port, "aria2.unpause", gid)
    finished = S.wait_until(lambda: call(ferry.port, "aria2.tellStatus", gid, ["status"])["result"]["status"] == "complete", 20)
    path = call(ferry.port, "aria2.getFiles", gid)["result"][0]["path"]
    suite.check("the renamed job downloads under its new name", finished and path.endswith("/renamed.bin"), path)
    late = call(ferry.port, "aria2.changeOption", gid, {"out": "again.bin"})
    suite.check("changeOption of out after the start is refused", late.get("error", {}).get("code") == 1, str(late))


# -- Errors compared with aria2c ----------------------------------------------------------------------

def error_checks(suite, ferry, aria2c):
    for name, body in error_cases():
        ours = post(ferry.port, body)
        theirs = post(aria2c.port, body)
        suite.check("same answer as aria2c: " + name, ours == theirs, "ferry %s, aria2c %s" % (ours, theirs))
    for name, method, params in [("GET tellStatus of an unknown gid", "aria2.tellStatus", ["token:" + TOKEN, "2089b05ecca3d829"]),
                                 ("GET without secret", "aria2.getGlobalStat", []),
                                 ("GET listNotifications", "system.listNotifications", [])]:
        ours, theirs = get(ferry.port, method, "g1", params), get(aria2c.port, method, "g1", params)
        suite.check("same answer as aria2c: " + name, ours == theirs, "ferry %s, aria2c %s" % (ours, theirs))
    unsupported = call(ferry.port, "aria2.addTorrent", "eA==")
    suite.check("addTorrent: code 1, not supported", unsupported.get("error", {}).get("code") == 1
                and "not supported" in unsupported["error"]["message"], str(unsupported))


def access_checks(suite, ferry):
    reading = call(ferry.port, "aria2.tellActive", secret=READ_TOKEN)
    writing = call(ferry.port, "aria2.addUri", ["http://127.0.0.1:9/x"], secret=READ_TOKEN)
    suite.check("the read-only token reads", "result" in reading, str(reading))
    suite.check("the read-only token may not add", writing.get("error") == {"code": 1, "message": "Unauthorized"},
                str(writing))
    status, bearer = post(ferry.port, {"jsonrpc": "2.0", "id": 1, "method": "aria2.getGlobalStat"},
                          {"Authorization": "Bearer " + TOKEN})
    suite.check("a bearer token works without the token parameter", "result" in bearer, str(bearer))
    evil = {"Origin": "http://evil.example"}
    status, refused = post(ferry.port, {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellActive"}, evil)
    status2, allowed = post(ferry.port, {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellActive",
                                         "params": ["token:" + TOKEN]}, evil)
    suite.check("another site's page needs the secret", refused.get("error", {}).get("message") == "Unauthorized"
                and "result" in allowed, "%s %s" % (refused, allowed))


# -- WebSocket ------------------------------------------------------------------------------------------

def ws_frame(opcode, payload, fin=True, masked=True, length=None):
    head = bytes([(0x80 if fin else 0) | opcode])
    size = len(payload) if length is None else length
    bit = 0x80 if masked else 0
    if size <= 125:
        head += bytes([bit | size])
    elif size <= 0xFFFF:
        head += bytes([bit | 126]) + struct.pack(">H", size)
    else:
        head += bytes([bit | 127]) + struct.pack(">Q", size)
    if not masked:
        return head + payload
    mask = b"\x11\x22\x33\x44"
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def raw_socket(port):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(("GET /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % port).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        if not chunk:
            break
        head += chunk
    return sock, head


def close_code(sock):
    """The code of the server's close frame (None when the socket closed without one)."""
    data = b""
    try:
        while len(data) < 4:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    if len(data) >= 4 and data[0] == 0x88:
        return struct.unpack(">H", data[2:4])[0]
    return None


def websocket_checks(suite, ferry):
    sock, head = raw_socket(ferry.port)
    suite.check("handshake: 101 with RFC 6455's accept key", head.startswith(b"HTTP/1.1 101")
                and b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head, head[:200].decode("latin-1"))
    sock.close()
    ws = websocket.create_connection("ws://127.0.0.1:%d/jsonrpc" % ferry.port, timeout=5)
    ws.send(json.dumps({"jsonrpc": "2.0", "id": "v", "method": "aria2.getVersion", "params": ["token:" + TOKEN]}))
    answer = json.loads(ws.recv())
    ws.ping(b"hi")
    suite.check("a call over the WebSocket", answer.get("result", {}).get("version") == "1.37.0", str(answer))
    ws.close()
    hostile = [
        ("unmasked frame", ws_frame(1, b"{}", masked=False), 1002),
        ("reserved opcode", ws_frame(3, b"x"), 1002),
        ("fragmented ping", ws_frame(9, b"x", fin=False), 1002),
        ("ping longer than 125 bytes", ws_frame(9, b"x" * 126), 1002),
        ("continuation without a start", ws_frame(0, b"x"), 1002),
        ("invalid UTF-8 in text", ws_frame(1, b"\xc3\x28"), 1007),
        ("a message over 1 MiB", ws_frame(1, b"", length=2 << 20), 1009),
        ("a 2^63 length", ws_frame(1, b"", length=1 << 63), 1002),
        ("binary message", ws_frame(2, b"\x00\x01"), 1003),
    ]
    for name, frame, expected in hostile:
        sock, _ = raw_socket(ferry.port)
        sock.sendall(frame)
        code = close_code(sock)
        sock.close()
        suite.check("hostile WebSocket frame, %s: closed with %d" % (name, expected), code == expected, str(code))
    sock, _ = raw_socket(ferry.port)
    sock.sendall(ws_frame(8, struct.pack(">H", 1000) + b"bye"))
    suite.check("the close handshake echoes the code", close_code(sock) == 1000)
    sock.close()
    suite.check("Ferry answers after the hostile frames", ferry.request("GET", "/healthz").status == 200)


def main(suite):
    workdir = S.temp_dir("ferry-aria2-suite")
    binary = S.ferry_binary(workdir)
    root = os.path.join(workdir, "www")
    os.makedirs(os.path.join(root, "upload"))
    with open(os.path.join(root, "small.bin"), "wb") as handle:
        handle.write(os.urandom(SMALL))
    with open(os.path.join(root, "big.bin"), "wb") as handle:
        handle.write(os.urandom(BIG))
    nginx = S.Nginx(root, os.path.join(workdir, "nginx")).start()
    aria2c = Aria2c(workdir).start()
    spool = os.path.join(workdir, "spool")
    logs = os.path.join(workdir, "logs")
    os.makedirs(logs)
    ferry = S.Ferry(binary, spool, logs, extra=["--token", TOKEN, "--read-token", READ_TOKEN])
    S.CLEANUP.push("stop ferry", ferry.cleanup)
    ferry.start()
    error_checks(suite, ferry, aria2c)
    access_checks(suite, ferry)
    aria2p_checks(suite, ferry, nginx)
    notification_checks(suite, ferry, nginx)
    ariang_checks(suite, ferry, nginx)
    websocket_checks(suite, ferry)
    status, took = ferry.stop()
    suite.check("Ferry stops cleanly with sockets used", status == 0, "exit %s after %.1f s" % (status, took))
    S.log("  took %.1f s" % suite.elapsed())


if __name__ == "__main__":
    S.run_suite(S.Suite("aria2"), main)
