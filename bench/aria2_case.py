"""The `aria2-rpc` bench case (issue 27): AriaNg's one-second poll against Ferry's /jsonrpc and `aria2c --enable-rpc`,
each holding the same 1,000 downloads in the same run.

Each server gets 200 small files (finished: `tellStopped` has them), then 800 paced downloads of one 128 MiB file
(16 at once, `--max-concurrent 16` / `--max-concurrent-downloads=16`, the rest waiting), each held to 512 KiB/s by
the downloader itself (a job's `maxBytesPerSecond`, aria2's `max-download-limit`) so that they last the whole case
on this machine's disk. A round on one server: 4 s without polling, then 8 client processes each polling for 10 s
as AriaNg does (`getGlobalStat`, `tellActive`, `tellWaiting(0,1000)`, `tellStopped(-1,1000)` with AriaNg's keys, one
keep-alive connection each). Rounds of the two servers are interleaved.

Targets: ≥ 2× aria2c's polls per second, p99 latency of a poll ≤ half of aria2c's, and the 16 downloads' bytes per
second while polled ≥ 0.95× the same server's without the poll (a poll that stalls transfers shows there, which is
aria2's own complaint, aria2#2134 and #1715). The downloads are paced, so this shows stalls, not raw throughput.
"""
import http.client
import json
import multiprocessing
import os
import signal
import subprocess
import time

KEYS = ["gid", "totalLength", "completedLength", "uploadSpeed", "downloadSpeed", "connections", "numSeeders",
        "seeder", "status", "errorCode", "verifiedLength", "verifyIntegrityPending"]
POLL = [("aria2.getGlobalStat", []), ("aria2.tellActive", [KEYS]), ("aria2.tellWaiting", [0, 1000, KEYS]),
        ("aria2.tellStopped", [-1, 1000, KEYS])]
CLIENTS = 8
PACE = 512 * 1024


def rpc(port, method, params, timeout=60):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        body = json.dumps({"jsonrpc": "2.0", "id": "b", "method": method, "params": params})
        connection.request("POST", "/jsonrpc", body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = json.loads(response.read())
    finally:
        connection.close()
    if "error" in answer:
        raise RuntimeError(f"{method} answered {answer['error']}")
    return answer["result"]


def quiet_worker():
    """Pool workers take SIGTERM as processes do (the bench's own handler, inherited by fork, is the driver's)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def poller(args):
    """One client: polls until `seconds` pass; returns the latency of each whole poll in seconds."""
    port, seconds = args
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    bodies = [json.dumps({"jsonrpc": "2.0", "id": str(i), "method": m, "params": p}).encode()
              for i, (m, p) in enumerate(POLL)]
    latencies = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        for body in bodies:
            connection.request("POST", "/jsonrpc", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            raw = response.read()
            if response.status != 200 or b'"result"' not in raw[:200]:
                raise RuntimeError(f"poll answered {response.status}: {raw[:200]!r}")
        latencies.append(time.perf_counter() - started)
    connection.close()
    return latencies


def completed(port):
    return sum(int(s["completedLength"]) for s in rpc(port, "aria2.tellActive", [["completedLength"]]))


def fill(port, origin, paced_options, timeout):
    """200 small files (waited for until stopped), then 800 paced downloads."""
    calls = [{"methodName": "aria2.addUri", "params": [[f"{origin}/small.bin?s={i}"], {"out": f"s{i}.bin"}]}
             for i in range(200)]
    rpc(port, "system.multicall", [calls], timeout=300)
    deadline = time.monotonic() + timeout
    while len(rpc(port, "aria2.tellStopped", [0, 1000, ["gid"]])) < 200:
        if time.monotonic() > deadline:
            raise RuntimeError("the 200 small files did not finish")
        time.sleep(0.2)
    calls = [{"methodName": "aria2.addUri",
              "params": [[f"{origin}/paced.bin?n={i}"], dict(paced_options, out=f"p{i}.bin")]} for i in range(800)]
    rpc(port, "system.multicall", [calls], timeout=300)
    while len(rpc(port, "aria2.tellActive", [["gid"]])) < 16:
        if time.monotonic() > deadline:
            raise RuntimeError("16 downloads did not start")
        time.sleep(0.2)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else None


def run(b, fb):
    quiet, polled = (4, 10) if b.scale_name == "full" else (2, 4)
    c = fb.Case(b, "aria2-rpc", "aria2 RPC: AriaNg's poll of 1,000 downloads, 8 clients",
                "≥ 2× aria2c's polls/s; p99 ≤ ½ aria2c's; paced downloads while polled ≥ 0.95× unpolled",
                cpu_label="server CPU s per 1,000 polls")
    b.make_file("small.bin", 64 * 1024)
    b.make_file("paced.bin", 128 * fb.MiB)
    ferry = b.start_ferry("aria2-rpc", max_concurrent=16)
    aria_dir = os.path.join(b.work, "aria2-dl")
    os.makedirs(aria_dir, exist_ok=True)
    aria_port = fb.free_port()
    aria_log = open(os.path.join(b.out, "logs", "aria2c-rpc.log"), "ab")
    aria = subprocess.Popen(["aria2c", "--enable-rpc", f"--rpc-listen-port={aria_port}", "--rpc-listen-all=false",
                             f"--dir={aria_dir}", "--max-concurrent-downloads=16", "--max-download-result=1000",
                             "--file-allocation=none", "--allow-overwrite=true", "--auto-file-renaming=false",
                             "--console-log-level=warn", "--summary-interval=0"],
                            stdout=aria_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    aria_log.close()
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                rpc(aria_port, "aria2.getVersion", [])
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("aria2c did not answer RPC within 20 s")
                time.sleep(0.1)
        fill(ferry.port, b.origin, {"max-download-limit": str(PACE)}, 120)
        fill(aria_port, b.origin, {"max-download-limit": str(PACE)}, 120)

        def round_on(port, pid):
            start = completed(port)
            time.sleep(quiet)
            unpolled = (completed(port) - start) / quiet
            cpu0 = fb.proc_cpu(pid)
            start, t0 = completed(port), time.monotonic()
            pool = multiprocessing.Pool(CLIENTS, initializer=quiet_worker)
            try:
                latencies = [x for xs in pool.map(poller, [(port, polled)] * CLIENTS) for x in xs]
            finally:
                pool.close()
                pool.join()
            seconds = time.monotonic() - t0
            moved = (completed(port) - start) / seconds
            cpu = fb.proc_cpu(pid) - cpu0
            return dict(value=len(latencies) / polled, p99_ms=percentile(latencies, 0.99) * 1000,
                        median_ms=percentile(latencies, 0.5) * 1000, cpu_per=cpu / max(1, len(latencies)) * 1000,
                        polled_share=moved / unpolled if unpolled else None)

        s_ferry = c.tool("Ferry /jsonrpc", "polls/s")
        s_aria = c.tool("`aria2c --enable-rpc`", "polls/s")
        c.interleave([(s_ferry, lambda: round_on(ferry.port, ferry.pid)),
                      (s_aria, lambda: round_on(aria_port, aria.pid))], b.runs, budget=b.budget("aria2-rpc"))
        ratio, ratios = fb.paired_ratio(s_ferry, s_aria)
        p99_f, p99_a = fb.med(s_ferry.extra.get("p99_ms", [])), fb.med(s_aria.extra.get("p99_ms", []))
        share_f, share_a = fb.med(s_ferry.extra.get("polled_share", [])), fb.med(s_aria.extra.get("polled_share", []))
        c.rows = [("poll p99 latency, median of rounds", f"Ferry {fb.fmt(p99_f, 1)} ms "
                   f"({fb.span(s_ferry.extra.get('p99_ms', []), 1)}), aria2c {fb.fmt(p99_a, 1)} ms "
                   f"({fb.span(s_aria.extra.get('p99_ms', []), 1)})"),
                  ("paced downloads' bytes/s while polled ÷ unpolled", f"Ferry {fb.fmt(share_f, 2)} "
                   f"({fb.span(s_ferry.extra.get('polled_share', []), 2)}), aria2c {fb.fmt(share_a, 2)} "
                   f"({fb.span(s_aria.extra.get('polled_share', []), 2)})")]
        if ratio is not None:
            c.measured = (f"{ratio:.2f}× aria2c's polls/s ({fb.span(ratios, 2)}); p99 {fb.fmt(p99_f, 1)} ms vs "
                          f"{fb.fmt(p99_a, 1)} ms; downloads while polled {fb.fmt(share_f, 2)}×")
            met = (ratio >= 2 and p99_f is not None and p99_a is not None and p99_f <= p99_a / 2
                   and share_f is not None and share_f >= 0.95)
            c.verdict = "PASS" if met else "MISS"
    finally:
        if aria.poll() is None:
            aria.terminate()
            try:
                aria.wait(15)
            except subprocess.TimeoutExpired:
                aria.kill()
                aria.wait(5)
        b.stop_ferry()
        subprocess.run(["rm", "-rf", aria_dir])
    return c
