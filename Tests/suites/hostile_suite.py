#!/usr/bin/env python3
"""Ferry hostile suite: SSRF refusals, hostile filenames, malformed HTTP, schemathesis, (optionally) the parser fuzzer.

    python3 Tests/suites/hostile_suite.py [--with-fuzz [SECONDS]] [--max-examples N] [--st-seed N]
                                          [--only GROUPS] [--keep]

Ends with `N passed, N failed[, N skipped]`; exits 1 when a check failed. Ferry is $FERRY_BIN (default
/tmp/ferry-bin/ferry), copied to a temporary directory first.

Isolation: the suite re-executes itself under `unshare --net --mount` (same pid) so that it, Ferry and
schemathesis run in a network namespace whose only interface is loopback; nothing can reach another address
whatever a URL says. In that private mount namespace /etc/hosts gains `loopback.ferry-test` (127.0.0.1, ::1),
a name that is not `localhost` but resolves to loopback, for the connect-time check, and lo gains the
public-range address 93.184.215.14 for a fault origin that plays "a public URL that redirects to a private
one" (inside the namespace that address is loopback too). Without unshare (FERRY_SUITE_NETNS=0 or no
permission) the suite still runs, but schemathesis (which submits arbitrary URLs), the name test and the
public-redirect test are skipped. Every process started is stopped by pid (finally, atexit, signal handlers).

Groups (--only, comma list): ssrf, names, http, slowloris, burst, schemathesis, keys, fuzz. `keys`
(hostile_keys.py): a key guessing another key's ids, guessed tokens, a key revoked mid-stream, maxJobs 0 and
many keys (FERRY_SUITE_KEYS, default 1,000).
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import unicodedata
import uuid
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlib  # noqa: E402
import hostile_keys  # noqa: E402
from hlib import Results, log  # noqa: E402

TOKEN = "hostile-" + uuid.uuid4().hex
TEST_NAME = "loopback.ferry-test"
MOUNTNS_ENV = "FERRY_SUITE_MOUNTNS"


# --------------------------------------------------------------------------------------------------
# Isolation (network + mount namespace for a private /etc/hosts)


def isolate():
    """Returns (net_isolated, hosts_name_available)."""
    if os.environ.get(hlib.NETNS_ENV) != "1" and os.environ.get(hlib.NETNS_ENV) != "0":
        unshare = shutil.which("unshare")
        if unshare and subprocess.run([unshare, "--net", "--mount", "true"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL).returncode == 0:
            sys.stdout.flush()
            env = dict(os.environ)
            env[hlib.NETNS_ENV] = "1"
            env[MOUNTNS_ENV] = "1"
            os.execvpe(unshare, [unshare, "--net", "--mount", "--propagation", "private", "--",
                                 sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)
    net = hlib.isolate_network()
    hosts = False
    if net and os.environ.get(MOUNTNS_ENV) == "1":
        try:
            with open("/etc/hosts") as handle:
                original = handle.read()
            private = os.path.join("/tmp", "ferry-hostile-hosts-%d" % os.getpid())
            with open(private, "w") as handle:
                handle.write(original.rstrip("\n") + "\n127.0.0.1 %s\n::1 %s\n" % (TEST_NAME, TEST_NAME))
            hosts = subprocess.run(["mount", "--bind", private, "/etc/hosts"]).returncode == 0
            os.unlink(private)
            if hosts:
                hosts = socket.gethostbyname(TEST_NAME) == "127.0.0.1"
        except OSError as error:
            log("note: could not add %s to a private /etc/hosts: %s" % (TEST_NAME, error))
            hosts = False
    return net, hosts


# --------------------------------------------------------------------------------------------------
# SSRF


PRIVATE_LITERALS = [
    "http://127.0.0.1/", "http://127.1/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/",
    "http://[::1]/", "http://[::ffff:127.0.0.1]/",
    "http://10.0.0.1/", "http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/", "http://0.0.0.0/", "http://[fc00::1]/", "http://[fe80::1]/",
]

# More spellings of non-public addresses that the WHATWG URL parser turns into a literal address, and more
# non-public ranges ("loopback, private, link-local, CGNAT, multicast and reserved").
PRIVATE_EXTRAS = [
    "https://127.0.0.1:8443/x", "http://127.0.0.1:80/x", "ftp://127.0.0.1/x", "ftps://user:pw@10.0.0.1/x",
    "sftp://127.0.0.1/x", "sftp://[::1]:2222/x", "HTTP://127.0.0.1/", "http://127.0.0.1./",
    "http://127.000.000.001/", "http://0x7f.0.0.1/", "http://0x7f.1/", "http://017700000001/", "http://0/",
    "http://127.255.255.254/", "http://[0:0:0:0:0:0:0:1]/", "http://[::]/", "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/", "http://[::ffff:169.254.169.254]/",
    "http://10.255.255.255/", "http://172.31.255.255/", "http://192.168.0.1:8080/", "http://169.254.0.1/",
    "http://100.127.255.254/", "http://224.0.0.1/", "http://239.255.255.250/", "http://255.255.255.255/",
    "http://240.0.0.1/", "http://[ff02::1]/", "http://[fd12:3456::1]/",
    "http://user:pass@127.0.0.1/", "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/", "http://127\u30020\u30020\u30021/",
    "http://%31%32%37.0.0.1/",
]

# ftp, ftps and sftp are download schemes (their private addresses are in PRIVATE_EXTRAS); scp and tftp are not.
SCHEMES = ["file:///etc/passwd", "scp://127.0.0.1/x", "gopher://127.0.0.1:70/_x", "dict://127.0.0.1:11211/stat",
           "FILE:///etc/passwd", "ldap://127.0.0.1/", "tftp://127.0.0.1/x", "ws://127.0.0.1/x", "telnet://127.0.0.1/"]


def submit(client, url, **fields):
    body = {"url": url, "paused": True, "dedupe": False}
    body.update(fields)
    return client.post("/api/v1/jobs", json_body=body)


def drop_if_created(client, response):
    if response.status in (200, 201):
        job = response.json() or {}
        if isinstance(job, dict) and job.get("id"):
            client.delete("/api/v1/jobs/" + job["id"])


def test_ssrf(results, strict, permissive, origin, hosts_name):
    c = strict.client()
    for group, urls in (("listed", PRIVATE_LITERALS), ("extra", PRIVATE_EXTRAS)):
        for url in urls:
            r = submit(c, url)
            ok = r.status == 403 and r.error_code() == "forbidden_destination"
            results.check("ssrf %s: POST %s -> 403 forbidden_destination" % (group, ascii(url)), ok,
                          "" if ok else "got " + r.brief())
            drop_if_created(c, r)
    # A zone identifier is not valid in a WHATWG URL: refused either way.
    r = submit(c, "http://[fe80::1%25lo]/")
    ok = (r.status == 403 and r.error_code() == "forbidden_destination") or (r.status == 400 and r.error_code() == "invalid_url")
    results.check("ssrf extra: POST http://[fe80::1%25lo]/ -> 403 forbidden_destination or 400 invalid_url", ok, r.brief())
    drop_if_created(c, r)
    # the same refusal for https and a path/port
    for url in ("https://10.0.0.1:8443/a/b?c=d", "https://[::1]:443/x", "https://169.254.169.254/"):
        r = submit(c, url)
        ok = r.status == 403 and r.error_code() == "forbidden_destination"
        results.check("ssrf https: POST %s -> 403" % url, ok, "" if ok else "got " + r.brief())
        drop_if_created(c, r)

    for url in SCHEMES:
        r = submit(c, url)
        ok = r.status == 400 and r.error_code() == "unsupported_scheme"
        results.check("scheme: POST %s -> 400 unsupported_scheme" % url, ok, "" if ok else "got " + r.brief())
        drop_if_created(c, r)

    # A batch: each private item answers its own error, the array answers 200.
    batch = [{"url": u, "paused": True, "dedupe": False} for u in ("http://127.0.0.1/", "http://10.0.0.1/", "gopher://x/")]
    r = c.request("POST", "/api/v1/jobs", body=json.dumps(batch).encode(), headers={"Content-Type": "application/json"})
    items = r.json() if r.status == 200 else None
    codes = [((i or {}).get("error") or {}).get("code") for i in items] if isinstance(items, list) else None
    results.check("ssrf batch: array of private/unsupported items -> 200 with an error per item",
                  codes == ["forbidden_destination", "forbidden_destination", "unsupported_scheme"],
                  "got %s %s" % (r.status, codes if codes is not None else r.brief()))
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and item.get("id"):
                c.delete("/api/v1/jobs/" + item["id"])

    # PATCH url to a private literal on an existing (paused, never started) job.
    r = submit(c, "http://ferry-unused.invalid/file.bin")
    job = r.json() if r.status == 201 else None
    if not results.check("ssrf patch: a paused job for a .invalid name is created (201)", job is not None, r.brief()):
        pass
    else:
        for url in ("http://127.0.0.1/x", "http://[::1]/x", "http://169.254.169.254/", "http://2130706433/"):
            p = c.request("PATCH", "/api/v1/jobs/" + job["id"], json_body={"url": url})
            ok = p.status == 403 and p.error_code() == "forbidden_destination"
            results.check("ssrf patch: PATCH url=%s -> 403 forbidden_destination" % url, ok, "" if ok else p.brief())
        after = c.get("/api/v1/jobs/" + job["id"]).json() or {}
        results.check("ssrf patch: the job still has its original URL and is still paused",
                      after.get("url") == "http://ferry-unused.invalid/file.bin" and after.get("state") == "paused",
                      "url=%s state=%s" % (after.get("url"), after.get("state")))
        c.delete("/api/v1/jobs/" + job["id"])

    # Names that resolve to loopback: refused at submit, or the job fails with forbidden_destination when the
    # connected address is checked. Our own listener on the port must see no connection at all.
    counter = hlib.ConnectionCounter()
    try:
        names = ["localhost", "LOCALHOST", "localhost.", "sub.localhost"]
        if hosts_name:
            names.append(TEST_NAME)
        for name in names:
            url = "http://%s:%d/secret.bin" % (name, counter.port)
            before = counter.count
            r = c.post("/api/v1/jobs", json_body={"url": url, "dedupe": False})
            if r.status == 403 and r.error_code() == "forbidden_destination":
                results.check("ssrf name %s: refused at submit (403 forbidden_destination)" % name, True)
            elif r.status == 201:
                job = r.json()
                final = hlib.wait_job(c, job["id"], ("failed", "finished", "cancelled"), timeout=30)
                error = (final or {}).get("error") or {}
                ok = final is not None and final.get("state") == "failed" and error.get("code") == "forbidden_destination"
                results.check("ssrf name %s: job fails with forbidden_destination (connect-time check)" % name, ok,
                              "state=%s error=%s" % ((final or {}).get("state"), error))
                c.delete("/api/v1/jobs/" + job["id"])
            else:
                results.check("ssrf name %s: refused (403) or accepted for a connect-time check (201)" % name, False,
                              r.brief())
            time.sleep(0.2)
            results.check("ssrf name %s: the loopback listener saw no connection" % name, counter.count == before,
                          "connections: %d from %s" % (counter.count - before, counter.peers[before:]))
        if not hosts_name:
            results.skip("ssrf name %s (connect-time check of a non-localhost name)" % TEST_NAME,
                         "no private /etc/hosts (needs unshare --net --mount)")

        # Redirect chains that start at a loopback name: the chain never starts (first hop refused), and
        # neither hop sees a connection. (A public origin redirecting to a private address: test_public_redirect.)
        if hosts_name:
            target = "http://127.0.0.1:%d/after-redirect" % counter.port
            url = "http://%s:%d/r/1?to=%s" % (TEST_NAME, origin.port, quote(target, safe=""))
            origin_before = len(origin.requests())
            before = counter.count
            r = c.post("/api/v1/jobs", json_body={"url": url, "dedupe": False})
            job = r.json() if r.status == 201 else None
            final = hlib.wait_job(c, job["id"], ("failed", "finished", "cancelled"), timeout=30) if job else None
            error = (final or {}).get("error") or {}
            ok = (r.status == 403 and r.error_code() == "forbidden_destination") or \
                (final is not None and final.get("state") == "failed" and error.get("code") == "forbidden_destination")
            results.check("ssrf redirect chain from %s: forbidden_destination" % TEST_NAME, ok,
                          "submit %s, state=%s error=%s" % (r.status, (final or {}).get("state"), error))
            results.check("ssrf redirect chain: neither the origin nor the redirect target saw a request",
                          len(origin.requests()) == origin_before and counter.count == before,
                          "origin requests +%d, target connections +%d" % (len(origin.requests()) - origin_before,
                                                                          counter.count - before))
            if job:
                c.delete("/api/v1/jobs/" + job["id"])

        # Per-hop scheme check (with private networks allowed, so only the scheme can stop it): an origin that
        # redirects to file://, ftp://, gopher://, dict:// must fail the job; the redirect target sees nothing
        # and no local file is copied into the spool.
        pc = permissive.client()
        for target in ("file:///etc/passwd", "ftp://127.0.0.1:%d/x" % counter.port,
                       "gopher://127.0.0.1:%d/_GET%%20/" % counter.port, "dict://127.0.0.1:%d/stat" % counter.port):
            before = counter.count
            url = origin.url("/r/1?to=" + quote(target, safe=""))
            r = pc.post("/api/v1/jobs", json_body={"url": url, "dedupe": False})
            job = r.json() if r.status == 201 else None
            final = hlib.wait_job(pc, job["id"], ("failed", "finished", "cancelled"), timeout=30) if job else None
            state = (final or {}).get("state")
            results.check("redirect to %s: the job fails (scheme refused on the redirect hop)" % target.split(":")[0],
                          state == "failed", "submit %s, state=%s error=%s" % (r.status, state, (final or {}).get("error")))
            time.sleep(0.2)
            results.check("redirect to %s: the target saw no connection" % target.split(":")[0], counter.count == before,
                          "connections +%d" % (counter.count - before))
            if job:
                pc.delete("/api/v1/jobs/" + job["id"])
        files = os.listdir(os.path.join(permissive.spool, "files"))
        passwd = [f for f in files if "passwd" in f]
        results.check("redirect to file://: no local file copied into the spool", not passwd, "found %s" % passwd)
        pc.close()
    finally:
        counter.close()
    c.close()


# A globally routable address (not special-use in any registry), put on `lo` only inside this suite's own network
# namespace, where nothing can leave: the "public" origin of the redirect-to-private cases.
PUBLIC_LOOKING = "93.184.215.14"


def test_proxy_environment(results, workdir, origin):
    """A `ferry serve` started with every proxy variable pointing at a listener of ours, and `--allow-network
    127.0.0.1/32` instead of `--allow-private-networks`: libcurl must not read the variables (the destination guard
    would then see only the proxy), so the download goes straight to the origin and the listener sees nothing;
    the start-up log names what the narrow flag opened; other private destinations stay refused."""
    counter = hlib.ConnectionCounter()
    proxy = "http://127.0.0.1:%d" % counter.port
    env = {name: proxy for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")}
    ferry = None
    try:
        ferry = hlib.Ferry(workdir, "proxyenv", token=TOKEN, extra_args=["--allow-network", "127.0.0.1/32"],
                           extra_env=env).start()
        c = ferry.client()
        r = submit(c, origin.url("/f/proxyenv.bin?size=200000&seed=5"), paused=False)
        job = r.json() if r.status == 201 else None
        final = hlib.wait_job(c, job["id"], ("failed", "finished", "cancelled"), timeout=30) if job else None
        results.check("proxy variables ignored: the job finishes straight from the origin",
                      (final or {}).get("state") == "finished", "submit %s, final %s" % (r.status, (final or {}).get("error")))
        results.check("proxy variables ignored: the proxy listener saw no connection", counter.count == 0,
                      "connections: %d" % counter.count)
        with open(ferry.log_path, errors="replace") as handle:
            log_text = handle.read()
        warned = any("warning" in line and "127.0.0.1/32" in line for line in log_text.splitlines())
        results.check("--allow-network: the start-up log warns, naming the block", warned, log_text[-400:])
        for url in ("http://10.0.0.1/a", "http://[::1]:%d/a" % origin.port, "http://127.0.0.2:%d/a" % origin.port):
            r = submit(c, url)
            results.check("--allow-network 127.0.0.1/32: POST %s -> 403" % url, r.status == 403, r.brief())
            drop_if_created(c, r)
        c.close()
    finally:
        counter.close()
        if ferry and ferry.process:
            ferry.stop()


def test_public_redirect(results, strict, workdir):
    """A public origin that redirects to a private address: the first hop is fetched, the redirect is refused
    at connect time with forbidden_destination, and the private target sees no connection."""
    if subprocess.run(["ip", "addr", "add", PUBLIC_LOOKING + "/32", "dev", "lo"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        results.skip("ssrf public origin redirecting to a private address", "could not add %s to lo" % PUBLIC_LOOKING)
        return
    public = hlib.FaultOrigin(workdir, "public-origin", host=PUBLIC_LOOKING).start()
    counter = hlib.ConnectionCounter()
    c = strict.client()
    try:
        targets = ["http://127.0.0.1:%d/after-redirect" % counter.port, "http://[::1]:%d/after-redirect" % counter.port,
                   "http://localhost:%d/after-redirect" % counter.port, "http://2130706433:%d/x" % counter.port,
                   "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://192.168.0.1/"]
        for target in targets:
            before_public, before_counter = len(public.requests()), counter.count
            r = c.post("/api/v1/jobs", json_body={"url": public.url("/r/1?to=" + quote(target, safe="")),
                                                 "dedupe": False})
            job = r.json() if r.status == 201 else None
            final = hlib.wait_job(c, job["id"], ("failed", "finished", "cancelled"), timeout=30) if job else None
            error = (final or {}).get("error") or {}
            results.check("ssrf public origin redirecting to %s: the job fails with forbidden_destination" % target,
                          final is not None and final.get("state") == "failed" and error.get("code") == "forbidden_destination",
                          "submit %s, state=%s error=%s" % (r.status, (final or {}).get("state"), error))
            seen = len(public.requests()) - before_public
            time.sleep(0.2)
            results.check("ssrf public origin redirecting to %s: the public origin answered once, the private "
                          "target saw nothing" % target, seen == 1 and counter.count == before_counter,
                          "public origin requests +%d, private target connections +%d" % (
                              seen, counter.count - before_counter))
            if job:
                c.delete("/api/v1/jobs/" + job["id"])
    finally:
        c.close()
        counter.close()
        public.stop()


# --------------------------------------------------------------------------------------------------
# Filenames


BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}


def name_problems(name):
    """Why `name` is not a sanitized spool filename (empty list when it is fine)."""
    problems = []
    if not isinstance(name, str) or not name:
        return ["empty or missing"]
    raw = name.encode("utf-8", "surrogatepass")
    if len(raw) > 255:
        problems.append("%d bytes > 255" % len(raw))
    if "/" in name or "\\" in name:
        problems.append("path separator")
    if name in (".", "..") or name.startswith("."):
        problems.append("leading dot")
    for ch in name:
        cp = ord(ch)
        if cp < 0x20 or 0x7F <= cp <= 0x9F:
            problems.append("control character U+%04X" % cp)
            break
        if cp in BIDI:
            problems.append("bidirectional control U+%04X" % cp)
            break
        if 0xD800 <= cp <= 0xDFFF:
            problems.append("lone surrogate")
            break
    return problems


def spool_files(ferry):
    """Entries of spool/files as raw bytes names -> size."""
    directory = os.path.join(ferry.spool, "files").encode()
    out = {}
    for entry in os.listdir(directory):
        path = os.path.join(directory, entry)
        out[entry] = os.lstat(path).st_size if os.path.lexists(path) else None
    return out


def tree_outside_files(ferry):
    """Every path under the Ferry root that is not under spool/files or a known spool entry."""
    # Ferry's own entries: the tag, the directories, the generated token, the session cookies' secret, the
    # webhook signing secret, the store's ballast (kept free for SQLite on a full disk) and the readiness probe
    # (written and removed by /readyz).
    known_spool = {b"CACHEDIR.TAG", b"files", b"partial", b"token", b"session-secret", b"webhook-secret",
                   b".store-ballast", b".readyz-probe"}
    unexpected = []
    root = ferry.root.encode()
    for entry in os.listdir(root):
        if entry not in (b"spool", b"ferry.log"):
            unexpected.append(os.path.join(root, entry))
    spool = ferry.spool.encode()
    for entry in os.listdir(spool):
        if entry in known_spool or entry.startswith(b"ferry.db"):
            continue
        unexpected.append(os.path.join(spool, entry))
    return unexpected


FILENAME_REQUESTS = [
    ("traversal ../../etc/passwd", "../../etc/passwd"),
    ("traversal ..\\x", "..\\x"),
    ("traversal ..\\..\\windows\\win.ini", "..\\..\\windows\\win.ini"),
    ("absolute /etc/shadow", "/etc/shadow"),
    ("NUL inside", "a\x00b.txt"),
    ("control characters", "a\x01\x07\x1b[31m\x7f\x85b.txt"),
    ("CR LF", "report\r\nSet-Cookie: x=1.txt"),
    ("overlong ASCII 300", "a" * 300 + ".txt"),
    ("overlong 2-byte UTF-8", "\u00e9" * 200 + ".bin"),
    ("overlong 3-byte UTF-8 + combining", "\u20ac" * 120 + "e\u0301" * 30 + ".dat"),
    ("overlong 4-byte UTF-8", "\U0001F600" * 100 + ".txt"),
    ("RTL override", "invoice\u202Etxt.exe"),
    ("bidi isolates", "\u2067abc\u2069.pdf"),
    ("leading dot", ".bashrc"),
    ("leading dots and spaces", " ..  .profile"),
    ("dot-dot with trailing text", "..foo"),
    ("windows device", "CON.txt"),
]

FILENAME_REFUSABLE = [
    ("only dots", ".."),
    ("only a slash", "/"),
    ("only separators and dots", "../..\\./"),
    ("only control characters", "\x00\x01\x02"),
    ("only RTL override", "\u202E"),
    ("empty", ""),
]

CONTENT_DISPOSITIONS = [
    ("cd quoted traversal", 'attachment; filename="../../etc/passwd"'),
    ("cd ext traversal", "attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd"),
    ("cd ext backslash", "attachment; filename*=UTF-8''..%5C..%5Cx.txt"),
    ("cd ext NUL", "attachment; filename*=UTF-8''a%00b.txt"),
    ("cd ext controls", "attachment; filename*=UTF-8''a%01%1B%7F%C2%85b.txt"),
    ("cd ext CRLF", "attachment; filename*=UTF-8''x%0D%0ASet-Cookie%3A%20a.txt"),
    ("cd ext RTL override", "attachment; filename*=UTF-8''invoice%E2%80%AEtxt.exe"),
    ("cd ext overlong 2-byte", "attachment; filename*=UTF-8''" + "%C3%A9" * 200 + ".bin"),
    ("cd ext overlong 4-byte", "attachment; filename*=UTF-8''" + "%F0%9F%98%80" * 100 + ".txt"),
    ("cd ext invalid UTF-8", "attachment; filename*=UTF-8''bad%FF%FE.txt"),
    ("cd quoted leading dot", 'attachment; filename=".htaccess"'),
    ("cd quoted dot-dot only", 'attachment; filename=".."'),
    ("cd both forms, ext preferred", "attachment; filename=\"plain.txt\"; filename*=UTF-8''..%2F.ssh%2Fauthorized_keys"),
    ("cd quoted with escaped quote", 'attachment; filename="a\\"b/../c.txt"'),
    ("cd latin-1 raw control", 'attachment; filename="x\x01y.txt"'),
]

URL_PATHS = [
    ("url encoded traversal", "/f/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd"),
    ("url encoded backslash", "/f/..%5C..%5Cboot.ini"),
    ("url encoded NUL", "/f/a%00b.bin"),
    ("url leading dot", "/f/.env"),
    ("url RTL override", "/f/photo%E2%80%AEgpj.exe"),
    ("url overlong", "/f/" + "%E2%82%AC" * 120 + ".bin"),
]


def run_download(client, body, timeout=30):
    r = client.post("/api/v1/jobs", json_body=body)
    if r.status not in (200, 201):
        return r, None
    job = r.json()
    final = hlib.wait_job(client, job["id"], ("finished", "failed", "cancelled"), timeout=timeout)
    return r, final


def check_landed(results, label, ferry, before, final, expected_size):
    after = spool_files(ferry)
    new = {name: size for name, size in after.items() if name not in before}
    name = (final or {}).get("filename")
    state = (final or {}).get("state")
    if not results.check("filename %s: job finished" % label, state == "finished",
                         "state=%s error=%s" % (state, (final or {}).get("error"))):
        return
    problems = name_problems(name)
    results.check("filename %s: sanitized name %r" % (label, name), not problems, "; ".join(problems))
    encoded = name.encode("utf-8", "surrogatepass") if isinstance(name, str) else None
    ok = list(new.keys()) == [encoded] and new.get(encoded) == expected_size
    results.check("filename %s: exactly that file appeared in spool/files with the right size" % label, ok,
                  "new entries: %s" % {k: v for k, v in new.items()})
    for raw in new:
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            results.check("filename %s: on-disk name is valid UTF-8" % label, False, repr(raw))
            continue
        disk_problems = name_problems(decoded)
        if disk_problems:
            results.check("filename %s: on-disk name %r is sanitized" % (label, raw), False, "; ".join(disk_problems))
        if unicodedata.normalize("NFC", decoded) != decoded:
            results.check("filename %s: on-disk name is NFC" % label, False, repr(decoded))
    stray = tree_outside_files(ferry)
    results.check("filename %s: nothing written outside spool/files" % label, not stray, "stray: %s" % stray)
    check_content_disposition(results, label, ferry, final)


def check_content_disposition(results, label, ferry, job):
    """HEAD .../content: one well-formed `attachment` header whose filename* decodes to the job's filename."""
    c = ferry.client()
    try:
        r = c.request("HEAD", "/api/v1/jobs/%s/content" % job["id"])
    finally:
        c.close()
    values = [v for k, v in r.headers if k.lower() == "content-disposition"]
    problems = []
    if r.status != 200:
        problems.append("status %d" % r.status)
    if len(values) != 1:
        problems.append("%d Content-Disposition fields" % len(values))
    else:
        value = values[0]
        if any(ord(ch) < 0x20 or ord(ch) > 0x7E for ch in value):
            problems.append("raw control or non-ASCII characters in the header")
        if not value.lower().startswith("attachment"):
            problems.append("not attachment")
        match = re.search(r"filename\*=UTF-8''([^;\s]*)", value, re.I)
        if not match:
            problems.append("no filename*=UTF-8'' form")
        else:
            from urllib.parse import unquote
            decoded = unquote(match.group(1), encoding="utf-8", errors="strict")
            if decoded != job.get("filename"):
                problems.append("filename* decodes to %r, the job's filename is %r" % (decoded, job.get("filename")))
        plain = re.search(r'(?:^|;)\s*filename="((?:[^"\\]|\\.)*)"', value)
        if plain and ("/" in plain.group(1) or "\\" in plain.group(1).replace('\\"', "")):
            problems.append("plain filename has a path separator: %r" % plain.group(1))
    results.check("filename %s: GET content has a well-formed Content-Disposition" % label, not problems,
                  "; ".join(problems) + (" -- %r" % values if values else ""))


def test_filenames(results, ferry, origin):
    c = ferry.client()
    size = 1000
    seed = 0

    def url(path, **params):
        nonlocal seed
        seed += 1
        query = "size=%d&seed=%d&key=%s" % (size, seed, uuid.uuid4().hex)
        for k, v in params.items():
            query += "&%s=%s" % (k, quote(v, safe=""))
        return origin.url(path + ("&" if "?" in path else "?") + query)

    for label, requested in FILENAME_REQUESTS:
        before = spool_files(ferry)
        r, final = run_download(c, {"url": url("/f/plain.bin"), "filename": requested, "dedupe": False})
        if r.status == 400:
            results.check("filename requested %s: refused 400 invalid_request" % label,
                          r.error_code() == "invalid_request", r.brief())
            results.check("filename requested %s: spool/files unchanged" % label, spool_files(ferry) == before)
            continue
        if not results.check("filename requested %s: accepted (201) or refused (400)" % label, r.status == 201, r.brief()):
            continue
        check_landed(results, "requested " + label, ferry, before, final, size)

    for label, requested in FILENAME_REFUSABLE:
        before = spool_files(ferry)
        r, final = run_download(c, {"url": url("/f/fallback.bin"), "filename": requested, "dedupe": False})
        if r.status == 400:
            results.check("filename requested %s: refused 400 invalid_request" % label,
                          r.error_code() == "invalid_request", r.brief())
            results.check("filename requested %s: spool/files unchanged" % label, spool_files(ferry) == before)
        elif r.status == 201:
            check_landed(results, "requested " + label + " (accepted, fallback name)", ferry, before, final, size)
        else:
            results.check("filename requested %s: 400 or 201" % label, False, r.brief())

    for label, cd in CONTENT_DISPOSITIONS:
        before = spool_files(ferry)
        r, final = run_download(c, {"url": url("/f/fromcd.bin", cd=cd), "dedupe": False})
        if results.check("filename %s: job accepted" % label, r.status == 201, r.brief()):
            check_landed(results, label, ferry, before, final, size)

    for label, path in URL_PATHS:
        before = spool_files(ferry)
        r, final = run_download(c, {"url": url(path), "dedupe": False})
        if results.check("filename %s: job accepted" % label, r.status == 201, r.brief()):
            check_landed(results, label, ferry, before, final, size)

    # Collisions: the same requested name twice, and a CD name equal to an existing file: never overwritten.
    before = spool_files(ferry)
    finals = []
    for i in range(3):
        r, final = run_download(c, {"url": url("/f/same.bin"), "filename": "../same.txt", "dedupe": False})
        finals.append(final or {})
    names = [f.get("filename") for f in finals]
    after = spool_files(ferry)
    new = sorted(k for k in after if k not in before)
    results.check("filename collision: three jobs asking for ../same.txt get three distinct files",
                  len(set(names)) == 3 and len(new) == 3 and all(f.get("state") == "finished" for f in finals),
                  "names=%s new=%s" % (names, new))
    c.close()


# --------------------------------------------------------------------------------------------------
# Malformed HTTP on a raw socket


def head(lines, body=b""):
    return b"".join(line + b"\r\n" for line in lines) + b"\r\n" + body


def test_malformed_http(results, ferry):
    port = ferry.port
    host = b"Host: 127.0.0.1:%d" % port
    auth = b"Authorization: Bearer " + TOKEN.encode()
    json_ct = b"Content-Type: application/json"
    small_body = b'{"url":"http://ferry-unused.invalid/x","paused":true}'

    def pad_line(total):
        # "GET /healthz?p=<pad> HTTP/1.1" of exactly `total` bytes
        fixed = len(b"GET /healthz?p= HTTP/1.1")
        return b"GET /healthz?p=" + b"a" * (total - fixed) + b" HTTP/1.1"

    cases = [
        # (name, bytes, expected statuses, must close)
        ("request line of 8193 bytes -> 414", head([pad_line(8193), host]), {414}, True),
        ("request line of 9000+ bytes -> 414", head([b"GET /" + b"a" * 9000 + b" HTTP/1.1", host]), {414}, True),
        ("header block over 64 KiB -> 431",
         head([b"GET /healthz HTTP/1.1", host] + [b"X-Pad-%d: %s" % (i, b"a" * 1000) for i in range(70)]), {431}, True),
        ("one header line over 64 KiB -> 431",
         head([b"GET /healthz HTTP/1.1", host, b"X-Big: " + b"a" * (70 * 1024)]), {431}, True),
        ("101 header fields -> 431",
         head([b"GET /healthz HTTP/1.1", host] + [b"X-H%d: v" % i for i in range(100)]), {431}, True),
        ("Content-Length and Transfer-Encoding -> 400",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Content-Length: %d" % len(small_body),
               b"Transfer-Encoding: chunked"], b"%x\r\n%s\r\n0\r\n\r\n" % (len(small_body), small_body)), {400}, True),
        ("obs-fold -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-Folded: a", b" b"]), {400}, True),
        ("obs-fold with tab -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-Folded: a", b"\tb"]), {400}, True),
        ("bare CR in a value -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-A: a\rb"]), {400}, True),
        ("bare CR as line end -> 400", b"GET /healthz HTTP/1.1\r" + host + b"\r\n\r\n", {400}, True),
        ("bare LF line ends -> 400", b"GET /healthz HTTP/1.1\n" + host + b"\n\n", {400}, True),
        ("header name with ( -> 400", head([b"GET /healthz HTTP/1.1", host, b"X(A): b"]), {400}, True),
        ("header name with space -> 400", head([b"GET /healthz HTTP/1.1", host, b"X A: b"]), {400}, True),
        ("space before colon -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-A : b"]), {400}, True),
        ("header name with non-ASCII byte -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-\xc3\xa9: b"]), {400}, True),
        ("NUL in a header value -> 400", head([b"GET /healthz HTTP/1.1", host, b"X-A: a\x00b"]), {400}, True),
        ("unknown transfer coding -> 501",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Transfer-Encoding: foo"], b"x"), {501}, True),
        ("gzip then chunked coding -> 501",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Transfer-Encoding: gzip, chunked"],
              b"0\r\n\r\n"), {501}, True),
        ("missing Host in HTTP/1.1 -> 400", head([b"GET /healthz HTTP/1.1"]), {400}, True),
        ("two Host fields -> 400", head([b"GET /healthz HTTP/1.1", host, host]), {400}, True),
        ("two different Content-Lengths -> 400",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Content-Length: 5", b"Content-Length: 6"],
              b"123456"), {400}, True),
        ("malformed Content-Length -> 400",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Content-Length: 1x"], b"1"), {400}, True),
        ("negative Content-Length -> 400",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Content-Length: -1"]), {400}, True),
        ("Transfer-Encoding in HTTP/1.0 -> 400",
         head([b"POST /api/v1/jobs HTTP/1.0", host, auth, json_ct, b"Transfer-Encoding: chunked"], b"0\r\n\r\n"), {400}, True),
        ("NUL in the request target -> 400", head([b"GET /health\x00z HTTP/1.1", host]), {400}, True),
        ("double space in the request line -> 400", head([b"GET  /healthz HTTP/1.1", host]), {400}, True),
        ("lowercase version -> 400", head([b"GET /healthz http/1.1", host]), {400, 505}, True),
        ("HTTP/2.0 request line -> 505 or 400", head([b"GET /healthz HTTP/2.0", host]), {400, 505}, True),
        ("oversized chunk size -> 400 or 413",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Transfer-Encoding: chunked"],
              b"fffffffffffffffffffff\r\n"), {400, 413}, True),
        ("chunk size with junk -> 400",
         head([b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Transfer-Encoding: chunked"],
              b"zz\r\nabc\r\n0\r\n\r\n"), {400}, True),
    ]
    for name, data, expected, must_close in cases:
        try:
            response, closed, error = hlib.raw_exchange(port, data, timeout=5)
        except OSError as e:
            results.check("http " + name, False, "connect failed: %s" % e)
            continue
        status = hlib.status_of(response)
        statuses = hlib.all_statuses(response)
        ok = status in expected and len(statuses) == 1 and (closed or not must_close)
        results.check("http " + name, ok, "status=%s all=%s closed=%s %s first=%r" % (
            status, statuses, closed, error or "", response[:120]))

    # Boundaries that must be accepted.
    ok_cases = [
        ("request line of exactly 8192 bytes is served", head([pad_line(8192), host, b"Connection: close"])),
        ("100 header fields (Host + 99) are served",
         head([b"GET /healthz HTTP/1.1", host, b"Connection: close"] + [b"X-H%d: v" % i for i in range(98)])),
        ("header block just under 64 KiB is served",
         head([b"GET /healthz HTTP/1.1", host, b"Connection: close"] +
              [b"X-Pad-%d: %s" % (i, b"a" * 1000) for i in range(62)])),
        ("two pipelined requests both answered",
         head([b"GET /healthz HTTP/1.1", host]) + head([b"GET /healthz HTTP/1.1", host, b"Connection: close"])),
    ]
    for name, data in ok_cases:
        response, closed, error = hlib.raw_exchange(port, data, timeout=3)
        statuses = hlib.all_statuses(response)
        want = [200, 200] if "pipelined" in name else [200]
        results.check("http " + name, statuses == want, "statuses=%s first=%r" % (statuses, response[:120]))

    # A method the route does not have: 405 with Allow (API.md, method_not_allowed), on API and page routes.
    for method, path in ((b"PUT", b"/api/v1/jobs"), (b"TRACE", b"/healthz"), (b"PUT", b"/"), (b"TRACE", b"/")):
        response, closed, error = hlib.raw_exchange(
            port, head([method + b" " + path + b" HTTP/1.1", host, auth, b"Connection: close"]), timeout=3)
        status = hlib.status_of(response)
        allow = re.search(rb"\r\nallow: *([^\r]*)", response.lower())
        results.check("http %s %s -> 405 with Allow" % (method.decode(), path.decode()), status == 405 and allow is not None,
                      "status=%s allow=%s" % (status, allow.group(1) if allow else None))

    # Bodies over 1 MiB on POST /api/v1/jobs: 413 (Content-Length known up front, and chunked).
    big = 2 * 1024 * 1024
    for label, lines, chunks in (
        ("Content-Length body over 1 MiB -> 413",
         [b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Content-Length: %d" % big],
         [b"[" + b" " * (big - 2) + b"]"]),
        ("chunked body over 1 MiB -> 413",
         [b"POST /api/v1/jobs HTTP/1.1", host, auth, json_ct, b"Transfer-Encoding: chunked"],
         [b"10000\r\n" + b" " * 0x10000 + b"\r\n"] * 32 + [b"0\r\n\r\n"]),
    ):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        received = bytearray()
        closed = False
        try:
            sock.sendall(head(lines))
            sock.settimeout(0.1)
            pending = list(chunks)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    piece = sock.recv(65536)
                    if not piece:
                        closed = True
                        break
                    received += piece
                except socket.timeout:
                    pass
                except ConnectionResetError:
                    closed = True
                    break
                if pending:
                    try:
                        sock.settimeout(2)
                        sock.sendall(pending.pop(0))
                        sock.settimeout(0.1)
                    except OSError:
                        pending = []
                        sock.settimeout(0.1)
        finally:
            sock.close()
        status = hlib.status_of(bytes(received))
        ok = status == 413 and closed and b'"payload_too_large"' in bytes(received)
        results.check("http " + label, ok, "status=%s closed=%s first=%r" % (status, closed, bytes(received[:200])))

    results.check("http: /healthz still served after the malformed requests", ferry.healthy())


def test_slowloris(results, ferry, slow_clients=8):
    """Clients sending one byte per second are cut off within the 10 s header timeout; others are served."""
    port = ferry.port
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: %s\r\n\r\n" % (port, b"a" * 60)
    outcomes = [None] * slow_clients
    stop = threading.Event()

    def slow(index):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        started = time.monotonic()
        received = bytearray()
        how = "timeout"
        try:
            for i, byte in enumerate(request):
                if i:
                    # wait a second, but notice an early close/answer
                    sock.settimeout(1.0)
                    try:
                        piece = sock.recv(4096)
                        if not piece:
                            how = "closed"
                            break
                        received += piece
                        # drain until close
                        sock.settimeout(3)
                        while True:
                            piece = sock.recv(4096)
                            if not piece:
                                break
                            received += piece
                        how = "answered"
                        break
                    except socket.timeout:
                        pass
                    except ConnectionResetError:
                        how = "reset"
                        break
                try:
                    sock.send(bytes([byte]))
                except OSError:
                    how = "send failed"
                    break
                if time.monotonic() - started > 25:
                    break
        finally:
            sock.close()
        outcomes[index] = (how, time.monotonic() - started, bytes(received))

    latencies = []

    def prompt():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                response, closed, _ = hlib.raw_exchange(
                    port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", timeout=5)
                latencies.append((time.monotonic() - t0, hlib.status_of(response)))
            except OSError:
                latencies.append((None, None))
            stop.wait(0.5)

    threads = [threading.Thread(target=slow, args=(i,)) for i in range(slow_clients)]
    prober = threading.Thread(target=prompt)
    for t in threads:
        t.start()
    prober.start()
    for t in threads:
        t.join(40)
    stop.set()
    prober.join(10)
    for i, outcome in enumerate(outcomes):
        if outcome is None:
            results.check("slowloris client %d: cut off" % i, False, "thread did not finish")
            continue
        how, elapsed, received = outcome
        status = hlib.status_of(received)
        ok = how in ("closed", "answered", "reset") and elapsed <= 12.0 and status in (None, 408)
        results.check("slowloris client %d: cut off within the 10 s header timeout" % i, ok,
                      "%s after %.1f s, status %s" % (how, elapsed, status))
    good = [l for l, s in latencies if l is not None and s == 200]
    worst = max(good) if good else None
    results.check("slowloris: another client gets /healthz promptly meanwhile (every probe 200, < 1 s)",
                  latencies and len(good) == len(latencies) and worst < 1.0,
                  "%d probes, %d ok, worst %.3f s" % (len(latencies), len(good), worst or -1))


# --------------------------------------------------------------------------------------------------
# Burst of concurrent job creation (any API client can do this)


def test_burst(results, ferry, seconds=5.0, threads=16):
    """16 clients POST paused jobs (nothing is fetched) as fast as they can: every answer 201, Ferry stays up."""
    stop = threading.Event()
    statuses = {}
    errors = []
    lock = threading.Lock()

    def worker(k):
        c = ferry.client(timeout=15)
        i = 0
        while not stop.is_set():
            i += 1
            try:
                r = c.post("/api/v1/jobs", json_body={"url": "http://burst.invalid/%d/%d" % (k, i), "paused": True})
                with lock:
                    statuses[r.status] = statuses.get(r.status, 0) + 1
            except Exception as error:  # connection refused/reset: the server went away
                with lock:
                    errors.append("%s: %s" % (type(error).__name__, error))
                stop.wait(0.2)
        c.close()

    pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and ferry.process.poll() is None:
        time.sleep(0.1)
    stop.set()
    for t in pool:
        t.join(20)
    alive = ferry.process.poll() is None
    results.check("burst: %d clients creating jobs concurrently for %.0f s: Ferry stays up" % (threads, seconds), alive,
                  "" if alive else "exited %s; %s" % (ferry.process.returncode, ferry.crash_summary() or ferry.log_tail(10)))
    results.check("burst: every creation answered 201", alive and not errors and set(statuses) == {201},
                  "statuses %s, %d errors %s" % (statuses, len(errors), errors[:2]))


# --------------------------------------------------------------------------------------------------
# schemathesis


def find_schemathesis():
    exe = shutil.which("schemathesis") or shutil.which("st")
    if exe:
        return [exe]
    try:
        import schemathesis  # noqa: F401  (only whether it is installed)
        return [sys.executable, "-m", "schemathesis.cli"]
    except ImportError:
        return None


def test_schemathesis(results, ferry, workdir, max_examples, seed):
    command = find_schemathesis()
    if command is None:
        results.check("schemathesis installed (pip install schemathesis)", False, "not found")
        return
    version = subprocess.run(command + ["--version"], capture_output=True, text=True).stdout.strip()
    report = os.path.join(workdir, "schemathesis.json")
    output_path = os.path.join(workdir, "schemathesis.out")
    base = "http://127.0.0.1:%d" % ferry.port
    args = command + [
        "run", base + "/api/v1/openapi.json",
        "--checks", "not_a_server_error,response_schema_conformance",
        "--max-examples", str(max_examples), "--seed", str(seed),
        "--header", "Authorization: Bearer " + TOKEN,
        "--request-timeout", "10",
        # the all-jobs event stream never ends by design (tested by the load suite instead)
        "--exclude-path", "/api/v1/events",
        # aria2's RPC answers a body that is not JSON with HTTP 500 and -32700, as aria2c does (the aria2 suite checks
        # its answers against aria2c's, and the websocket group its hostile frames)
        "--exclude-path", "/jsonrpc",
        "--report", "json", "--report-json-path", report,
        "--output-truncate", "false", "--no-color",
    ]
    log("running %s (%s) against %s, %d examples per operation, seed %d" % (command[-1], version, base, max_examples, seed))
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    env.pop("SCHEMATHESIS_HOOKS", None)
    open(output_path, "w").close()
    process = hlib.spawn(args, log_path=output_path, env=env, cwd=workdir)
    try:
        process.wait(timeout=420)
    except subprocess.TimeoutExpired:
        hlib.stop(process, grace=5)
    hlib.unregister(process)
    with open(output_path, errors="replace") as handle:
        text = handle.read()
    try:
        with open(report) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        results.check("schemathesis ran and wrote its report", False, "output tail:\n" + text[-3000:])
        return
    cases = data.get("test_cases", {})
    operations = data.get("operations", {})
    results.check("schemathesis: run completed (%s operations tested, %s cases generated)" % (
        operations.get("tested"), cases.get("generated")), data.get("complete") is True and data.get("stop_reason") == "completed",
        "stop_reason=%s" % data.get("stop_reason"))
    failures = data.get("failures", [])
    documented_5xx = ("503", "507")
    failure_lines = []
    for failure in failures:
        title = failure.get("title", "")
        code = failure.get("code")
        failure_lines.append("%s %s x%s on %s" % (code, title, failure.get("count"), ", ".join(failure.get("operations", []))))
    # Print schemathesis' own account of each failure: operation, request (curl), response.
    section = re.search(r"=+ FAILURES =+\n(.*?)(?:\n=+ (?:WARNINGS|SUMMARY|ERRORS) =+)", text, re.S)
    if section:
        log("---- schemathesis failures (operation, request, response) ----")
        log(section.group(1).rstrip())
        log("---- end of schemathesis failures ----")
    errors_section = re.search(r"=+ ERRORS =+\n(.*?)(?:\n=+ (?:FAILURES|WARNINGS|SUMMARY) =+)", text, re.S)
    if errors_section:
        log("---- schemathesis errors ----")
        log(errors_section.group(1).rstrip()[:6000])
        log("---- end of schemathesis errors ----")
    server_errors = [f for f in failures if f.get("code") in ("ST101",) or "server error" in f.get("title", "").lower()]
    others = [f for f in failures if f not in server_errors]
    # A 5xx that the description documents (503 unavailable, 507) is not a server error: schemathesis reports the
    # status in its output; keep only the undocumented ones.
    undocumented_server = []
    for f in server_errors:
        detail = section.group(1) if section else ""
        statuses = set(re.findall(r"\[(5\d\d)\]", detail))
        if statuses and statuses <= set(documented_5xx):
            continue
        undocumented_server.append(f)
    results.check("schemathesis not_a_server_error: no undocumented 5xx",
                  not undocumented_server, "; ".join("%s x%s on %s" % (f.get("title"), f.get("count"), f.get("operations"))
                                                     for f in undocumented_server))
    results.check("schemathesis response_schema_conformance: every response matches the description",
                  not others, "; ".join("%s %s x%s on %s" % (f.get("code"), f.get("title"), f.get("count"),
                                                             ", ".join(f.get("operations", []))) for f in others))
    errors = data.get("errors", [])
    # `GET .../content?follow=true` streams until the job ends and is aborted if the job fails (API.md): on a job
    # that keeps waiting (this Ferry cannot resolve any name) the client's timeout, or the abort, is that contract,
    # not an error. Only errors that all come from such follow streams are let through.
    follow_only = False
    if errors and errors_section:
        blocks = re.split(r"_{5,} (\S+ \S+) _{5,}\n", errors_section.group(1))
        pairs = list(zip(blocks[1::2], blocks[2::2]))
        follow_only = bool(pairs) and all(
            operation.endswith("/api/v1/jobs/{id}/content") and "follow=true" in body for operation, body in pairs)
    results.check("schemathesis: no errors (timeouts, connection failures)", not errors or follow_only,
                  json.dumps(errors)[:1500] + (" (all from ?follow=true streams: allowed)" if follow_only else ""))
    warnings = {k: v for k, v in (data.get("warnings") or {}).items() if v}
    if warnings:
        log("schemathesis warnings (information only): %s" % json.dumps(warnings))
    log("schemathesis output: %s" % output_path)
    results.check("ferry still healthy after schemathesis", ferry.healthy())


# --------------------------------------------------------------------------------------------------
# fuzz


def test_fuzz(results, seconds, workdir):
    script = os.path.join(hlib.REPO, "scripts", "fuzz-parser.sh")
    output_path = os.path.join(workdir, "fuzz.out")
    log("running scripts/fuzz-parser.sh %d (builds with -sanitize=fuzzer first)" % seconds)
    process = hlib.spawn(["bash", script, str(seconds)], log_path=output_path, cwd=hlib.REPO)
    try:
        code = process.wait(timeout=seconds + 1200)
    except subprocess.TimeoutExpired:
        hlib.stop(process, grace=5)
        code = None
    hlib.unregister(process)
    with open(output_path, errors="replace") as handle:
        text = handle.read()
    stats = [line for line in text.splitlines() if line.startswith("stat::") or "Done " in line]
    for line in stats[-8:]:
        log("  fuzz: " + line)
    results.check("parser fuzzer ran %d s without a finding" % seconds, code == 0, "exit %s; tail:\n%s" % (code, text[-2500:]))


def ws_frame(opcode, payload, fin=True, masked=True, length=None, rsv=0):
    """A client WebSocket frame (RFC 6455), masked unless told otherwise; `length` may lie about the payload."""
    size = len(payload) if length is None else length
    bit = 0x80 if masked else 0
    out = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    if size <= 125:
        out += bytes([bit | size])
    elif size <= 0xFFFF:
        out += bytes([bit | 126]) + size.to_bytes(2, "big")
    else:
        out += bytes([bit | 127]) + size.to_bytes(8, "big")
    if not masked:
        return out + payload
    mask = b"\x5a\x13\xc7\x02"
    return out + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def test_websocket(results, ferry):
    """Hostile frames on aria2's WebSocket (`/jsonrpc`): each closes its own socket with the right code (RFC 6455,
    7.4.1) and nothing else; Ferry answers afterwards."""
    port = ferry.port
    handshake = (b"GET /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n" % port)
    text = b'{"jsonrpc":"2.0","id":1,"method":"system.listMethods"}'
    cases = [
        ("unmasked client frame", ws_frame(1, text, masked=False), 1002),
        ("reserved bit set", ws_frame(1, text, rsv=4), 1002),
        ("reserved data opcode 3", ws_frame(3, text), 1002),
        ("reserved control opcode 0xB", ws_frame(0xB, b""), 1002),
        ("fragmented close", ws_frame(8, b"\x03\xe8", fin=False), 1002),
        ("ping of 126 bytes", ws_frame(9, b"p" * 126), 1002),
        ("continuation with nothing to continue", ws_frame(0, text), 1002),
        ("new message inside a fragmented one", ws_frame(1, text[:5], fin=False) + ws_frame(1, text), 1002),
        ("close frame of one byte", ws_frame(8, b"\x03"), 1002),
        ("close code 1005 sent", ws_frame(8, b"\x03\xed"), 1002),
        ("close reason not UTF-8", ws_frame(8, b"\x03\xe8\xff"), 1007),
        ("text not UTF-8", ws_frame(1, b"\xc3\x28"), 1007),
        ("text with a surrogate", ws_frame(1, b"\xed\xa0\x80"), 1007),
        ("text split inside a character, bad end", ws_frame(1, b"\xe2\x82", fin=False) + ws_frame(0, b"A"), 1007),
        ("length 2^63", ws_frame(1, b"", length=1 << 63), 1002),
        ("length 2^62", ws_frame(1, b"", length=1 << 62), 1009),
        ("message of 1 MiB + 1 in one frame", ws_frame(1, b"", length=(1 << 20) + 1), 1009),
        ("message over 1 MiB in fragments",
         ws_frame(1, b"a" * 60000, fin=False) + b"".join(ws_frame(0, b"a" * 60000, fin=False) for _ in range(18)), 1009),
    ]
    for name, frames, expected in cases:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(handshake)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                head += chunk
            sock.sendall(frames)
            data = head.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in head else b""
            while len(data) < 4:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            code = int.from_bytes(data[2:4], "big") if len(data) >= 4 and data[0] == 0x88 else None
            sock.close()
        except OSError as error:
            code = "error %s" % error
        results.check("websocket: %s -> close %d" % (name, expected), code == expected, "got %s" % code)
    results.check("websocket: Ferry answers after the hostile frames", ferry.healthy())


# --------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description="Ferry hostile suite")
    parser.add_argument("--with-fuzz", nargs="?", const=300, type=int, default=None, metavar="SECONDS",
                        help="also run scripts/fuzz-parser.sh SECONDS (default 300)")
    parser.add_argument("--max-examples", type=int, default=50)
    parser.add_argument("--st-seed", type=int, default=20261122)
    parser.add_argument("--only", default="", help="comma list of groups: ssrf,names,http,websocket,slowloris,burst,schemathesis,keys,fuzz")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()

    net_isolated, hosts_name = isolate()
    hlib.install_cleanup()
    hlib.raise_nofile()
    groups = set(g for g in args.only.split(",") if g) or {"ssrf", "names", "http", "websocket", "slowloris", "burst",
                                                            "schemathesis", "keys"}
    if args.with_fuzz is not None:
        groups.add("fuzz")

    results = Results()
    workdir = hlib.make_workdir("ferry-hostile-")
    log("work directory %s; network namespace with only loopback: %s; %s in a private /etc/hosts: %s" % (
        workdir, net_isolated, TEST_NAME, hosts_name))
    strict = permissive = origin = None
    try:
        strict = hlib.Ferry(workdir, "strict", token=TOKEN).start()
        permissive = hlib.Ferry(workdir, "permissive", token=TOKEN, allow_private=True).start()
        origin = hlib.FaultOrigin(workdir).start()
        log("ferry strict pid %d port %d; ferry with --allow-private-networks pid %d port %d; origin port %d" % (
            strict.pid, strict.port, permissive.pid, permissive.port, origin.port))

        if "ssrf" in groups:
            test_ssrf(results, strict, permissive, origin, hosts_name)
            test_proxy_environment(results, workdir, origin)
            if net_isolated:
                test_public_redirect(results, strict, workdir)
            else:
                results.skip("ssrf public origin redirecting to a private address",
                             "needs a loopback-only network namespace to give lo a public-range address")
        if "names" in groups:
            test_filenames(results, permissive, origin)
        if "http" in groups:
            test_malformed_http(results, strict)
        if "websocket" in groups:
            test_websocket(results, strict)
        if "slowloris" in groups:
            test_slowloris(results, strict)
        if "burst" in groups:
            test_burst(results, permissive)
            if permissive.process.poll() is not None:
                log("the permissive Ferry died in the burst; restarting it for the rest of the suite")
                permissive = hlib.Ferry(workdir, "permissive2", token=TOKEN, allow_private=True).start()
        if "schemathesis" in groups:
            if net_isolated:
                test_schemathesis(results, strict, workdir, args.max_examples, args.st_seed)
            else:
                results.skip("schemathesis", "needs a loopback-only network namespace (unshare --net): it submits "
                             "arbitrary URLs that Ferry would try to resolve and fetch")
        if "keys" in groups:
            hostile_keys.test_keys(results, permissive, many=hostile_keys.keys_count())
        if "fuzz" in groups:
            test_fuzz(results, args.with_fuzz or 300, workdir)

        for name, ferry in (("strict", strict), ("permissive", permissive)):
            results.check("ferry (%s) still alive at the end" % name, ferry.process.poll() is None and ferry.healthy())
    except Exception as error:  # an unexpected error is a failed check, never a silent pass
        import traceback
        traceback.print_exc()
        results.check("suite ran to the end", False, "%s: %s" % (type(error).__name__, error))
    finally:
        for ferry in (strict, permissive):
            if ferry and ferry.process:
                code = ferry.stop()
                if code not in (0, None):
                    results.check("ferry (%s) exits 0 on SIGTERM" % ferry.name, False, "exit %s; log tail:\n%s" % (
                        code, ferry.log_tail(15)))
        if origin:
            origin.stop()
        hlib.stop_all()
        code = results.finish()
        hlib.remove_workdir(workdir, keep=args.keep or code != 0)
    return code


if __name__ == "__main__":
    sys.exit(main())
