#!/usr/bin/env python3
"""Fetch-through with real tools (API.md, "Fetch-through"): curl, wget and pip through the /fetch/ prefix at an nginx
origin on loopback; one origin transfer for 16 concurrent clients (counted in nginx's access log); a revalidation seen
as 304 at the origin; an origin stopped mid-way; the hostile cases (traversal, encoded slashes, userinfo, ports,
schemes, client headers). Every process is started and stopped by pid.

    FERRY_BIN=.build/debug/ferry python3 Tests/suites/fetch_suite.py
"""

import base64
import concurrent.futures
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402
from fetch_tools import LOG_FIELDS, curl_head, kill_nginx, make_wheel, run, start_nginx  # noqa: E402

TOKEN = "fetch-suite-token"
READ_TOKEN = "fetch-suite-read-token"


def job_of(ferry, job_id):
    """The job as the API shows it, {} when there is none."""
    answer = S.http(ferry.port, "GET", "/api/v1/jobs/" + job_id, headers={"Authorization": "Bearer " + TOKEN})
    return answer.json() if answer.status == 200 else {}


def finished(ferry, job_id):
    return S.wait_until(lambda: job_of(ferry, job_id).get("state") == "finished", 10)


def job_of_url(ferry, name):
    """The id of the fetch job whose URL ends with /name."""
    answer = S.http(ferry.port, "GET", "/api/v1/jobs?tag=fetch", headers={"Authorization": "Bearer " + TOKEN})
    for job in (answer.json() or {}).get("jobs", []):
        if job["url"].endswith("/" + name):
            return job["id"]
    return "x"


def origin_gets(nginx, path):
    return [entry for entry in nginx.access_log() if entry["path"] == path]


def body(suite, ferry, nginx, files):
    base = "http://127.0.0.1:%d" % ferry.port
    origin = "127.0.0.1:%d" % nginx.port
    auth = ["-H", "Authorization: Bearer " + TOKEN]

    # A miss, then a hit.
    code, status, headers, data = curl_head(auth + [base + "/fetch/http/%s/one.bin" % origin])
    suite.check("a miss answers 200 with the origin's bytes", code == 0 and status == 200 and data == files["one.bin"],
                "exit %s status %s" % (code, status))
    suite.check("a miss says Ferry-Cache: miss and names its job", headers.get("ferry-cache") == "miss"
                and len(headers.get("ferry-job", "")) == 26, str(headers))
    suite.check("a miss gives Content-Length", headers.get("content-length") == str(len(files["one.bin"])), str(headers))
    job = job_of(ferry, headers.get("ferry-job", "x"))
    suite.check("the miss's job is tagged fetch", "fetch" in job.get("tags", []), str(job)[:300])
    finished(ferry, headers.get("ferry-job", "x"))
    code, status, hit_headers, data = curl_head(auth + [base + "/fetch/http/%s/one.bin" % origin])
    suite.check("a hit answers from the cache", status == 200 and data == files["one.bin"]
                and hit_headers.get("ferry-cache") == "hit" and hit_headers.get("ferry-job") == headers.get("ferry-job"),
                str(hit_headers))
    suite.check("the origin was asked once", len(origin_gets(nginx, "/one.bin")) == 1, str(origin_gets(nginx, "/one.bin")))
    code, status, ranged, data = curl_head(auth + ["-r", "10-19", base + "/fetch/http/%s/one.bin" % origin])
    suite.check("a hit honours Range", status == 206 and data == files["one.bin"][10:20], "status %s" % status)
    etag = hit_headers.get("etag", "")
    code, status, _, _ = curl_head(auth + ["-H", "If-None-Match: " + etag, base + "/fetch/http/%s/one.bin" % origin])
    suite.check("a hit answers If-None-Match with 304", status == 304, "status %s" % status)
    head = S.http(ferry.port, "HEAD", "/fetch/http/%s/one.bin" % origin, headers={"Authorization": "Bearer " + TOKEN})
    suite.check("HEAD is answered from the cache", head.status == 200 and head.header("Ferry-Cache") == "hit", repr(head))

    # wget and curl with the token in the URL's userinfo.
    target = "http://token:%s@127.0.0.1:%d/fetch/http/%s/two.bin" % (TOKEN, ferry.port, origin)
    out = os.path.join(S.temp_dir("ferry-fetch-wget"), "two.bin")
    result = run(["wget", "-q", "-O", out, target])
    suite.check("wget fetches through the prefix with the token as its password",
                result.returncode == 0 and open(out, "rb").read() == files["two.bin"], result.stderr.decode()[-300:])
    finished(ferry, job_of_url(ferry, "two.bin"))
    code, status, headers, data = curl_head([target])
    suite.check("curl with the token in the URL gets a hit", status == 200 and headers.get("ferry-cache") == "hit", str(headers))
    code, status, headers, _ = curl_head(["http://token:wrong@127.0.0.1:%d/fetch/http/%s/two.bin" % (ferry.port, origin)])
    suite.check("a wrong password is 401", status == 401, "status %s" % status)
    code, status, _, _ = curl_head([base + "/fetch/http/%s/two.bin" % origin])
    suite.check("no credentials is 401", status == 401, "status %s" % status)
    read = ["-H", "Authorization: Bearer " + READ_TOKEN]
    code, status, _, _ = curl_head(read + [base + "/fetch/http/%s/two.bin" % origin])
    suite.check("the read-only token may fetch what is cached", status == 200, "status %s" % status)
    code, status, _, _ = curl_head(read + [base + "/fetch/http/%s/three.bin" % origin])
    suite.check("the read-only token may not fetch what is not", status == 403, "status %s" % status)
    api = S.http(ferry.port, "GET", "/api/v1/jobs", headers={"Authorization": "Basic " + base64.b64encode(
        ("token:" + TOKEN).encode()).decode()})
    suite.check("Basic credentials are not taken outside /fetch", api.status == 401, repr(api))

    # Origin errors pass through, nothing cached.
    for attempt in range(2):
        code, status, headers, data = curl_head(auth + [base + "/fetch/http/%s/missing.bin" % origin])
    suite.check("an origin's 404 stays 404 with Ferry's error body and its job",
                status == 404 and b'"error"' in data and headers.get("ferry-job"), "status %s %s" % (status, data[:200]))
    suite.check("an origin error is not cached", len(origin_gets(nginx, "/missing.bin")) == 2,
                str(len(origin_gets(nginx, "/missing.bin"))))

    # Client headers never reach the origin.
    curl_head(auth + ["-H", "Cookie: session=secret", "-H", "X-Secret: 1", "-H", "If-None-Match: \"zzz\"",
                      base + "/fetch/http/%s/three.bin" % origin])
    seen = origin_gets(nginx, "/three.bin")
    suite.check("no client header reaches the origin", len(seen) == 1 and all(
        seen[0]["extra"][field] == "-" for field in LOG_FIELDS), str(seen))

    # Hostile prefixes.
    hostile = [
        ("/fetch/http/%s/a%%2Fb" % origin, 400, "invalid_url", "an encoded slash"),
        ("/fetch/http/%s/a/%%2e%%2e/one.bin" % origin, 400, "invalid_url", "encoded dots"),
        ("/fetch/http/%s/a/../one.bin" % origin, 400, "invalid_url", "a dot-dot segment"),
        ("/fetch/http/user:pw@%s/one.bin" % origin, 400, "invalid_url", "userinfo"),
        ("/fetch/http/127.0.0.1:99999/one.bin", 400, "invalid_url", "a port out of range"),
        ("/fetch/ftp/%s/one.bin" % origin, 400, "unsupported_scheme", "an ftp scheme"),
        ("/fetch/file/etc/passwd", 400, "unsupported_scheme", "a file scheme"),
        ("/fetch/http/127.0.0.2:%d/one.bin" % nginx.port, 403, "forbidden", "an origin not allowed"),
        ("/fetch/http/example.invalid/one.bin", 403, "forbidden", "a name not allowed"),
    ]
    for path, expected, error_code, what in hostile:
        answer = S.http(ferry.port, "GET", path, headers={"Authorization": "Bearer " + TOKEN})
        got = (answer.json() or {}).get("error", {}).get("code") if answer.body.startswith(b"{") else None
        suite.check("%s is refused (%d %s)" % (what, expected, error_code),
                    answer.status == expected and got == error_code, repr(answer))


def origin_server_errors(suite, ferry, fault):
    """An origin answering 503 gets 503 here at once, and the job stops: Ferry does not keep retrying for no one."""
    path = "/fetch/http/127.0.0.1:%d/f/down.bin?size=1000&status=503" % fault.port
    answer = S.http(ferry.port, "GET", path, headers={"Authorization": "Bearer " + TOKEN}, timeout=30)
    suite.check("an origin's 503 is answered 503 with Ferry's error body", answer.status == 503
                and b'"error"' in answer.body and answer.header("Ferry-Job"), repr(answer))
    time.sleep(3)
    asked = [r for r in fault.requests() if r.get("path", "").startswith("/f/down.bin")]
    suite.check("the job is stopped, not retried for no one", len(asked) == 1
                and job_of(ferry, answer.header("Ferry-Job") or "x").get("state") in (None, "cancelled"),
                "%d requests at the origin, job %s" % (len(asked), job_of(ferry, answer.header("Ferry-Job") or "x").get("state")))


def concurrent_clients(suite, ferry, nginx, files):
    base = "http://127.0.0.1:%d" % ferry.port
    url = base + "/fetch/http/127.0.0.1:%d/slow/big.bin?rate=2000000" % nginx.port

    def one(_):
        return run(["curl", "-sS", "-H", "Authorization: Bearer " + TOKEN, "-o", "-", url], 120).stdout

    began = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        bodies = list(pool.map(one, range(16)))
    suite.check("16 concurrent clients each get the whole file", all(b == files["big.bin"] for b in bodies),
                "%d of 16 whole" % sum(b == files["big.bin"] for b in bodies))
    gets = origin_gets(nginx, "/slow/big.bin")
    suite.check("16 concurrent clients cost one origin GET", len(gets) == 1,
                "%d GETs in %.1f s" % (len(gets), time.monotonic() - began))


def revalidation(suite, ferry, nginx, files):
    base = "http://127.0.0.1:%d" % ferry.port
    auth = ["-H", "Authorization: Bearer " + TOKEN]
    url = base + "/fetch/http/127.0.0.1:%d/four.bin" % nginx.port
    _, _, first, _ = curl_head(auth + [url])
    finished(ferry, first.get("ferry-job", "x"))
    time.sleep(1.3)
    _, status, headers, data = curl_head(auth + [url])
    suite.check("a stale entry is revalidated", status == 200 and headers.get("ferry-cache") == "revalidated"
                and data == files["four.bin"], str(headers))
    statuses = [entry["status"] for entry in origin_gets(nginx, "/four.bin")]
    suite.check("the revalidation is a 304 at the origin", statuses == [200, 304], str(statuses))
    conditional = [entry["extra"]["$http_if_none_match"] for entry in origin_gets(nginx, "/four.bin")]
    suite.check("the conditional request carries the origin's ETag", conditional[-1] not in ("-", ""), str(conditional))
    # The origin changes the file: the new body replaces the entry.
    with open(os.path.join(nginx.root, "four.bin"), "wb") as handle:
        handle.write(b"new" * 1000)
    time.sleep(1.3)
    _, status, headers, data = curl_head(auth + [url])
    suite.check("a changed file is fetched again", status == 200 and data == b"new" * 1000, str(headers))
    finished(ferry, headers.get("ferry-job", "x"))
    # The new job takes the key once it is finished, and the old entry's job is deleted then (a task polling the new
    # job, so a moment after `finished`: CI's loaded machine asked before it and got a second miss).
    S.wait_until(lambda: not job_of(ferry, first.get("ferry-job", "x")), 10)
    _, status, headers, data = curl_head(auth + [url])
    suite.check("the new body replaces the entry", status == 200 and data == b"new" * 1000
                and headers.get("ferry-cache") == "hit", str(headers))
    # The origin stops: the stale file is served.
    time.sleep(1.3)
    nginx.stop()
    _, status, headers, data = curl_head(auth + [url])
    suite.check("with the origin down a stale entry is served as stale", status == 200
                and headers.get("ferry-cache") == "stale" and data == b"new" * 1000, str(headers))


def origin_stops(suite, ferry, nginx, files, root):
    """The origin is killed while a client streams a slow file: the client is never handed a short file as whole; it
    waits while Ferry retries, and gets the whole file (resumed) once the origin is back on its port."""
    url = "http://127.0.0.1:%d/fetch/http/127.0.0.1:%d/slow/big.bin?rate=1000000" % (ferry.port, nginx.port)
    process = subprocess.Popen(["curl", "-sS", "-H", "Authorization: Bearer " + TOKEN, "-o", "-", url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    S.CLEANUP.push("stop curl", lambda: S.stop_pid(process, timeout=2))
    time.sleep(1.0)
    kill_nginx(nginx)
    time.sleep(1.5)
    suite.check("while the origin is down the client is still waiting, not handed a short file",
                process.poll() is None, "curl exited %s" % process.poll())
    back = start_nginx(root, "ferry-fetch-nginx-back", port=nginx.port)
    try:
        out, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        S.stop_pid(process, timeout=2)
        out = b""
    suite.check("when the origin is back the client gets the whole file", process.returncode == 0
                and out == files["big.bin"], "curl exit %s, %d bytes" % (process.returncode, len(out)))
    ranges = [entry["range"] for entry in origin_gets(back, "/slow/big.bin")]
    suite.check("the download resumed where it stopped", any(r and not r.startswith("bytes=0-") for r in ranges), str(ranges))
    back.stop()


def eviction(suite, binary, nginx, files):
    """Under --spool-quota a new file evicts the least recently used fetch entries; API jobs are never evicted."""
    ferry = S.Ferry(binary, S.temp_dir("ferry-fetch-spool-quota"), S.temp_dir("ferry-fetch-logs-quota"),
                    extra=["--fetch-allow", "127.0.0.1:%d" % nginx.port, "--token", TOKEN, "--spool-quota", "1000K"])
    ferry.start()
    bearer = {"Authorization": "Bearer " + TOKEN}
    api = S.http(ferry.port, "POST", "/api/v1/jobs", {"url": nginx.url("/e0.bin")}, headers=bearer)
    api_id = (api.json() or {}).get("id", "x")
    finished(ferry, api_id)
    ids = {}
    for name in ["e1.bin", "e2.bin"]:
        answer = S.http(ferry.port, "GET", "/fetch/http/127.0.0.1:%d/%s" % (nginx.port, name), headers=bearer)
        ids[name] = answer.header("Ferry-Job") or "x"
        finished(ferry, ids[name])
    time.sleep(0.05)
    S.http(ferry.port, "GET", "/fetch/http/127.0.0.1:%d/e1.bin" % nginx.port, headers=bearer)
    third = S.http(ferry.port, "GET", "/fetch/http/127.0.0.1:%d/e3.bin" % nginx.port, headers=bearer, timeout=30)
    suite.check("a file that needs room is served once entries are evicted", third.status == 200
                and third.body == files["e3.bin"], repr(third)[:200])
    gone = S.wait_until(lambda: not job_of(ferry, ids["e2.bin"]), 5)
    suite.check("the least recently used fetch entry was evicted (its job deleted)", gone, str(job_of(ferry, ids["e2.bin"]))[:200])
    suite.check("a more recently used entry stays", job_of(ferry, ids["e1.bin"]).get("state") == "finished")
    suite.check("a job created through the API is never evicted", job_of(ferry, api_id).get("state") == "finished")
    metrics = S.http(ferry.port, "GET", "/metrics", headers=bearer).body.decode()
    suite.check("/metrics counts fetch answers by result", 'ferry_fetch_requests_total{result="hit"} 1' in metrics
                and 'ferry_fetch_requests_total{result="miss"} 3' in metrics,
                "\n".join(line for line in metrics.splitlines() if "fetch" in line))
    suite.check("/metrics counts bytes from the cache and from origins",
                'ferry_fetch_served_bytes_total{source="cache"} %d' % len(files["e1.bin"]) in metrics
                and 'ferry_fetch_served_bytes_total{source="origin"} ' in metrics)
    before = len(origin_gets(nginx, "/e1.bin"))
    ferry.stop()
    ferry.start()
    again = S.http(ferry.port, "GET", "/fetch/http/127.0.0.1:%d/e1.bin" % nginx.port, headers=bearer)
    suite.check("after a restart a fresh entry is still a hit, the origin not asked",
                again.status == 200 and again.header("Ferry-Cache") == "hit" and again.body == files["e1.bin"]
                and len(origin_gets(nginx, "/e1.bin")) == before, "%r %s" % (again, again.header("Ferry-Cache")))
    ferry.stop()


def pip_download(suite, ferry, nginx, wheel):
    name, data = wheel
    index = "http://token:%s@127.0.0.1:%d/fetch/http/127.0.0.1:%d/simple/" % (TOKEN, ferry.port, nginx.port)
    target = S.temp_dir("ferry-fetch-pip")
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    result = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--index-url", index,
                             "--trusted-host", "127.0.0.1", "-d", target, "demo-fetch==1.0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=120)
    got = os.path.join(target, name)
    suite.check("pip download --index-url through Ferry gets the wheel",
                result.returncode == 0 and os.path.exists(got) and open(got, "rb").read() == data,
                result.stdout.decode()[-600:])
    suite.check("pip's requests went through the cache to the origin",
                len(origin_gets(nginx, "/packages/" + name)) == 1 and len(origin_gets(nginx, "/simple/demo-fetch/index.html")) == 1,
                str([e["path"] for e in nginx.access_log()][-5:]))


def main(suite):
    workdir = S.temp_dir("ferry-fetch-suite")
    binary = S.ferry_binary(workdir)
    root = S.temp_dir("ferry-fetch-origin")
    rng = S.rng_for(28)
    files = {}
    for name, size in [("one.bin", 300_000), ("two.bin", 50_000), ("three.bin", 1000), ("four.bin", 20_000),
                       ("big.bin", 4_000_000), ("e0.bin", 200_000), ("e1.bin", 300_000), ("e2.bin", 300_000),
                       ("e3.bin", 300_000)]:
        files[name] = bytes(rng.getrandbits(8) for _ in range(size)) if size < 400_000 else os.urandom(size)
        with open(os.path.join(root, name), "wb") as handle:
            handle.write(files[name])
    wheel = make_wheel(root)
    nginx = start_nginx(root, "ferry-fetch-nginx")

    off = S.Ferry(binary, S.temp_dir("ferry-fetch-spool-off"), S.temp_dir("ferry-fetch-logs-off"))
    off.start()
    answer = S.http(off.port, "GET", "/fetch/http/127.0.0.1:%d/one.bin" % nginx.port)
    suite.check("fetch-through is off (404) without --fetch-allow", answer.status == 404, repr(answer))
    off.stop()

    # The destination guard holds under --fetch-allow '*': loopback is refused without --allow-private-networks.
    guarded = S.Ferry(binary, S.temp_dir("ferry-fetch-spool-guard"), S.temp_dir("ferry-fetch-logs-guard"))
    guarded.command = lambda: [binary, "serve", "--host", "127.0.0.1", "--port", str(guarded.port), "--spool",
                               guarded.spool, "--min-free-space", "0", "--public", S.PUBLIC_DIR, "--fetch-allow", "*"]
    guarded.start()
    for path in ["/fetch/http/127.0.0.1:%d/one.bin" % nginx.port, "/fetch/http/127.1:%d/one.bin" % nginx.port,
                 "/fetch/http/localhost:%d/one.bin" % nginx.port]:
        answer = S.http(guarded.port, "GET", path)
        code = (answer.json() or {}).get("error", {}).get("code") if answer.body.startswith(b"{") else None
        suite.check("a loopback origin is 403 forbidden_destination under --fetch-allow '*' (%s)" % path.split("/")[3],
                    answer.status == 403 and code == "forbidden_destination", repr(answer))
    suite.check("a refused destination never reaches the origin", not origin_gets(nginx, "/one.bin"))
    guarded.stop()

    fault = S.FaultOrigin(S.temp_dir("ferry-fetch-fault")).start()
    S.CLEANUP.push("stop fault origin", fault.stop)
    allow = ["--fetch-allow", "127.0.0.1:%d" % nginx.port, "--fetch-allow", "127.0.0.1:%d" % fault.port, "--token", TOKEN, "--read-token", READ_TOKEN,
             "--fetch-max-age", "1s", "--max-concurrent", "8"]
    ferry = S.Ferry(binary, S.temp_dir("ferry-fetch-spool"), S.temp_dir("ferry-fetch-logs"), extra=allow)
    ferry.start()
    body(suite, ferry, nginx, files)
    pip_download(suite, ferry, nginx, wheel)
    origin_server_errors(suite, ferry, fault)
    concurrent_clients(suite, ferry, nginx, files)
    eviction(suite, binary, nginx, files)
    revalidation(suite, ferry, nginx, files)
    nginx = start_nginx(root, "ferry-fetch-nginx-2")
    allow_second = ["--fetch-allow", "127.0.0.1:%d" % nginx.port, "--token", TOKEN]
    ferry.stop()
    ferry = S.Ferry(binary, S.temp_dir("ferry-fetch-spool-2"), S.temp_dir("ferry-fetch-logs-2"), extra=allow_second)
    ferry.start()
    origin_stops(suite, ferry, nginx, files, root)
    ferry.stop()


if __name__ == "__main__":
    S.run_suite(S.Suite("fetch"), main)
