"""The hostile suite's API key cases (group `keys`): a key guessing another key's job ids and notice ids (404 as if
absent, with no timing difference worth measuring), guessed tokens (401), a key revoked mid-stream (its stream
closes), `maxJobs` 0 (429), and many keys (each still authenticates at once)."""

import os
import secrets
import socket
import statistics
import time

import hlib  # noqa: F401  (the suite's helpers; imported for the same sys.path)


def make_key(admin, name, **limits):
    response = admin.post("/api/v1/keys", json_body={"name": name, "scope": "write", "limits": limits})
    if response.status != 201:
        raise RuntimeError("making key %s: %s" % (name, response.brief()))
    body = response.json()
    return body["id"], body["token"]


def latency(client, path, rounds=60):
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        client.get(path)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def paired_latency(client, first, second, rounds=80):
    """The median seconds of `first` and of `second`, asked in turn: a slow spell of a loaded machine falls on both
    alike rather than on whichever was being measured then."""
    times = ([], [])
    for index in range(2 * rounds):
        which = index % 2
        started = time.perf_counter()
        client.get((first, second)[which])
        times[which].append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


def stream_closes_on_revocation(ferry, admin, results):
    key_id, token = make_key(admin, "watcher")
    sock = socket.create_connection(("127.0.0.1", ferry.port), timeout=10)
    try:
        sock.sendall(("GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n"
                      % (ferry.port, token)).encode())
        head = sock.recv(4096)
        results.check("keys: a key's event stream opens", head.startswith(b"HTTP/1.1 200"), head[:80])
        revoked = admin.delete("/api/v1/keys/" + key_id)
        results.check("keys: revoking answers 204", revoked.status == 204, revoked.brief())
        # The stream ends: its last chunk (the connection may stay open for the next request) or the socket closes.
        deadline = time.monotonic() + 5
        ended = False
        received = head
        while time.monotonic() < deadline and not ended:
            try:
                data = sock.recv(4096)
            except socket.timeout:
                break
            received += data
            ended = data == b"" or received.endswith(b"\r\n0\r\n\r\n")
        results.check("keys: a revoked key's open stream closes", ended)
    finally:
        sock.close()
    stranger = hlib.Client(ferry.port, token)
    results.check("keys: a revoked key's next request is 401", stranger.get("/api/v1/jobs").status == 401)
    stranger.close()


def test_keys(results, ferry, many=1000):
    admin = ferry.client()
    _, alice_token = make_key(admin, "alice")
    _, bob_token = make_key(admin, "bob")
    alice = hlib.Client(ferry.port, alice_token)
    bob = hlib.Client(ferry.port, bob_token)
    jobs = []
    for index in range(3):
        made = alice.post("/api/v1/jobs", json_body={"url": "http://127.0.0.1:9/k%d.bin" % index, "paused": True})
        if made.status == 201:
            jobs.append(made.json()["id"])
    results.check("keys: alice made her jobs", len(jobs) == 3)

    # Bob guessing alice's ids: 404 on every path, the same answer as for an id that never existed.
    paths = [("GET", "/api/v1/jobs/%s"), ("PATCH", "/api/v1/jobs/%s"), ("DELETE", "/api/v1/jobs/%s"),
             ("POST", "/api/v1/jobs/%s/pause"), ("POST", "/api/v1/jobs/%s/resume"),
             ("POST", "/api/v1/jobs/%s/cancel"), ("GET", "/api/v1/jobs/%s/content"),
             ("GET", "/api/v1/jobs/%s/events"), ("POST", "/api/v1/notices/%s/retry")]
    leaks = []
    for job in jobs:
        for method, path in paths:
            body = {"priority": 1} if method == "PATCH" else None
            answer = bob.request(method, path % job, json_body=body)
            if answer.status != 404 or job in answer.body.decode("utf-8", "replace").replace(
                    "no job with id '%s'" % job, "").replace("no notice with id '%s'" % job, ""):
                leaks.append("%s %s: %s" % (method, path % job, answer.brief(120)))
    results.check("keys: another key's job ids answer 404 on every path", not leaks, "\n".join(leaks[:5]))
    listed = bob.get("/api/v1/jobs").json() or {}
    results.check("keys: another key's jobs are not listed", listed.get("jobs") == [], listed)
    unknown = "z" * 26
    guessed, absent = paired_latency(bob, "/api/v1/jobs/" + jobs[0], "/api/v1/jobs/" + unknown)
    results.check("keys: no timing difference worth measuring between another key's job and no job",
                  abs(guessed - absent) < 0.002, "%.3f ms vs %.3f ms" % (guessed * 1e3, absent * 1e3))

    # Guessed tokens.
    refused = 0
    for _ in range(200):
        stranger = hlib.Client(ferry.port, "fk_" + secrets.token_urlsafe(32))
        refused += stranger.get("/api/v1/jobs").status == 401
        stranger.close()
    results.check("keys: 200 guessed tokens are all 401", refused == 200, refused)

    stream_closes_on_revocation(ferry, admin, results)

    # maxJobs 0: every new job refused, one or a batch.
    _, zero_token = make_key(admin, "zero", maxJobs=0)
    zero = hlib.Client(ferry.port, zero_token)
    single = zero.post("/api/v1/jobs", json_body={"url": "http://127.0.0.1:9/z.bin"})
    results.check("keys: maxJobs 0 refuses a job with 429 rate_limited",
                  single.status == 429 and single.error_code() == "rate_limited", single.brief())
    batch = zero.post("/api/v1/jobs", json_body=[{"url": "http://127.0.0.1:9/z%d.bin" % i} for i in range(3)])
    items = batch.json() if batch.status == 200 else None
    results.check("keys: maxJobs 0 refuses every item of a batch",
                  isinstance(items, list) and all(item.get("error", {}).get("code") == "rate_limited" for item in items),
                  batch.brief())

    # Many keys: each authenticates at once, the list holds them all.
    started = time.monotonic()
    last_token = None
    for index in range(many):
        _, last_token = make_key(admin, "many-%d" % index)
    made_in = time.monotonic() - started
    everyone = admin.get("/api/v1/keys").json() or {}
    results.check("keys: %d keys made and listed" % many, len(everyone.get("keys", [])) >= many,
                  "%d listed; made in %.1f s" % (len(everyone.get("keys", [])), made_in))
    newest = hlib.Client(ferry.port, last_token)
    median = latency(newest, "/api/v1/jobs", rounds=40)
    results.check("keys: with %d keys a key's request is still quick" % many, median < 0.05, "%.1f ms" % (median * 1e3))
    for client in (admin, alice, bob, zero, newest):
        client.close()


def keys_count():
    """How many keys the many-keys case makes: FERRY_SUITE_KEYS, default 1,000 (10,000 for a long run)."""
    return int(os.environ.get("FERRY_SUITE_KEYS", "1000"))
