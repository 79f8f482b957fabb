#!/usr/bin/env python3
"""Fault suite: the fault origin (Tests/Fixtures/fault_origin.py) misbehaves; Ferry ends every job with a
correct file or a clear failure with the right error code, never a corrupt finished file.

Each case runs twice, with and without "connections": 4 (the server may ignore it), all at once against
one fault origin (per-case counters via `key=`). Cases:

  reset_once         connection reset mid-body once (drop_after, fail_times=1)  -> finished, resumed at the cut
  reset_every        every response reset after 400 kB (drop_after)             -> finished after 4 resumes
  stall              4 s stall mid-body (below the 60 s low-speed timeout)      -> finished, no retry needed
  status503_twice    503 twice, then the file                                   -> finished after 3 requests
  status429          429 with Retry-After: 3 once                               -> waits >= 3 s, then finished
  status500          500 forever                                                -> failed http_error 500 (5 attempts)
  status404          404                                                        -> failed http_error 404, no retry
  short_body         every body short of its Content-Length (short_by)         -> failed network_error
  etag_change        reset, then the ETag changes (etag_change_after)           -> finished with the new content
  ignore_range       pause/resume against an origin that ignores Range          -> finished (restarted from zero)
  status416          416                                                        -> failed http_error 416
  status416_resume   416 once; the failed job is resumed                        -> finished
  redirect_loop      /loop                                                      -> failed too_many_redirects
  redirect_chain     3 redirects to the file                                    -> finished, finalUrl is the file
  slow_drip          60 kB/s                                                    -> finished
  no_length          close-delimited body (no Content-Length)                   -> finished
  no_length_reset    close-delimited body reset once mid-way                    -> finished
  reset_at_zero      reset before the first body byte, once                     -> finished
  retry_after_date   503 once with Retry-After as an HTTP-date                  -> not retried before it, finished
  checksum_ok        "sha256" given and right                                   -> finished
  checksum_mismatch  "sha256" given and wrong                                   -> failed checksum_mismatch, no file

A stall beyond the engine's low-speed limit is not played: the limit (1024 B/s for 60 s,
EngineConfiguration.lowSpeedTime) has no command-line option, so it cannot be made fast.

Afterwards every file in spool/files must belong to a finished job and match its SHA-256; failed jobs must
have no file and answer 409 on /content.

Usage: python3 Tests/suites/fault_suite.py [--only NAME[,NAME]] [--no-segmented] [--keep]
       FERRY_BIN=/path/to/ferry (default /tmp/ferry-bin/ferry; copied before use)
Last line: `N passed, N failed`; exit status 1 on any failure.
"""

import argparse
import email.utils
import os
import sys
import time
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as lib  # noqa: E402

MAX_ATTEMPTS = 5


def finished(seed_choices=None):
    return {"state": "finished", "seeds": seed_choices}


def failed(code, status=None):
    return {"state": "failed", "code": code, "httpStatus": status}


CASES = [
    # name, path (without key), size, seed, expectation, extra
    ("reset_once", "/f/reset_once.bin?size=3000000&seed=11&drop_after=1000000&fail_times=1", 3000000, 11,
     finished(), {"requests": 2, "ranges": [None, "bytes=1000000-"]}),
    ("reset_every", "/f/reset_every.bin?size=1500000&seed=12&drop_after=400000", 1500000, 12,
     finished(), {"requests": 4, "ranges": [None, "bytes=400000-", "bytes=800000-", "bytes=1200000-"]}),
    ("stall", "/f/stall.bin?size=800000&seed=13&stall_after=300000&stall_secs=4", 800000, 13,
     finished(), {"requests": 1}),
    ("status503_twice", "/f/s503.bin?size=500000&seed=14&status=503&fail_times=2", 500000, 14,
     finished(), {"requests": 3, "waits": "retrying"}),
    ("status429", "/f/s429.bin?size=500000&seed=15&status=429&fail_times=1&retry_after=3", 500000, 15,
     finished(), {"requests": 2, "waits": "retrying", "min_gap": 3.0}),
    ("status500", "/f/s500.bin?size=200000&seed=16&status=500", 200000, 16,
     failed("http_error", 500), {"requests": MAX_ATTEMPTS}),
    ("status404", "/f/s404.bin?size=200000&seed=17&status=404", 200000, 17,
     failed("http_error", 404), {"requests": 1}),
    ("short_body", "/f/short.bin?size=500000&seed=18&short_by=1000", 500000, 18,
     failed("network_error"), {"requests": MAX_ATTEMPTS}),
    ("etag_change", "/f/etag.bin?size=2000000&seed=21&drop_after=700000&fail_times=1&etag_change_after=1",
     2000000, 21, finished([22]), {"requests": 2, "ranges": [None, "bytes=700000-"]}),
    ("ignore_range", "/f/ignore.bin?size=3000000&seed=23&rate=600000&ignore_range=1", 3000000, 23,
     finished(), {"pause_at": 700000, "requests": 2, "restarted": True}),
    ("status416", "/f/s416.bin?size=200000&seed=24&status=416", 200000, 24,
     failed("http_error", 416), {"requests": 1}),
    ("status416_resume", "/f/s416r.bin?size=200000&seed=25&status=416&fail_times=1", 200000, 25,
     finished(), {"resume_failed": failed("http_error", 416), "requests": 2}),
    ("redirect_loop", "/loop", 0, 0, failed("too_many_redirects"), {}),
    ("redirect_chain", "CHAIN", 400000, 26, finished(), {"final_path": "/f/chain.bin"}),
    ("slow_drip", "/f/drip.bin?size=300000&seed=27&rate=60000", 300000, 27, finished(), {"requests": 1}),
    ("no_length", "/f/nolen.bin?size=700000&seed=28&no_length=1", 700000, 28, finished(), {"requests": 1}),
    ("no_length_reset", "/f/nolenreset.bin?size=900000&seed=29&no_length=1&drop_after=300000&fail_times=1", 900000,
     29, finished(), {"requests": 2}),
    ("reset_at_zero", "/f/reset0.bin?size=400000&seed=30&drop_after=0&fail_times=1", 400000, 30,
     finished(), {"requests": 2}),
    ("retry_after_date", "/f/s503date.bin?size=300000&seed=31&status=503&fail_times=1&retry_after=DATE", 300000, 31,
     finished(), {"requests": 2, "waits": "retrying", "not_before": True}),
    ("checksum_ok", "/f/sumok.bin?size=600000&seed=32", 600000, 32, finished(), {"sha256": "right", "requests": 1}),
    ("checksum_mismatch", "/f/sumbad.bin?size=600000&seed=33", 600000, 33, failed("checksum_mismatch"),
     {"sha256": "wrong", "requests": 1}),
]


def parse_args():
    parser = argparse.ArgumentParser(description="Ferry fault suite")
    parser.add_argument("--only", default="", help="comma list of case names")
    parser.add_argument("--no-segmented", action="store_true", help="skip the connections=4 variants")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds for all jobs to settle")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    return parser.parse_args()


def with_key(path, key):
    return path + ("&" if "?" in path else "?") + "key=" + key


def build_jobs(origin, args):
    only = set(filter(None, args.only.split(",")))
    jobs = []
    for name, path, size, seed, expect, extra in CASES:
        if only and name not in only:
            continue
        for connections in ([1] if args.no_segmented else [1, 4]):
            variant = "%s-c%d" % (name, connections)
            if path == "CHAIN":
                target = origin.url(with_key("/f/chain.bin?size=%d&seed=%d" % (size, seed), variant))
                url = origin.url("/r/3?to=" + quote(target, safe=""))
            elif path == "/loop":
                url = origin.url("/loop?variant=" + variant)
            else:
                url = origin.url(with_key(path.replace(".bin?", "-c%d.bin?" % connections), variant))
            not_before = None
            if "retry_after=DATE" in url:
                not_before = int(time.time()) + 4
                url = url.replace("retry_after=DATE", "retry_after=" + quote(
                    email.utils.formatdate(not_before, usegmt=True), safe=""))
            body = {"url": url}
            if extra.get("sha256") == "right":
                body["sha256"] = lib.fixture_sha256(size, seed)
            elif extra.get("sha256") == "wrong":
                body["sha256"] = lib.fixture_sha256(size, seed + 1000)
            if connections > 1:
                body["connections"] = connections
            jobs.append({"case": name, "variant": variant, "connections": connections, "size": size, "seed": seed,
                         "expect": expect, "extra": extra, "body": body, "url": url, "id": None,
                         "not_before": not_before})
    return jobs


def expected_digests(job):
    seeds = job["expect"].get("seeds") or [job["seed"]]
    if job["connections"] > 1 and job["expect"].get("seeds"):
        seeds = sorted(set(seeds) | {job["seed"]})  # segmented: either whole version is acceptable
    return {lib.fixture_sha256(job["size"], seed): seed for seed in seeds}


def matches_outcome(job_view, expect):
    if job_view is None:
        return False, "job missing"
    state = job_view.get("state")
    error = job_view.get("error") or {}
    if expect["state"] == "finished":
        return state == "finished", "state %s error %s" % (state, error or None)
    ok = state == "failed" and error.get("code") == expect["code"]
    if expect.get("httpStatus") is not None:
        ok = ok and error.get("httpStatus") == expect["httpStatus"]
    return ok, "state %s error %s" % (state, error or None)


def settled(view):
    return view is not None and view.get("state") in ("finished", "failed", "cancelled")


def main(suite):
    args = parse_args()
    work = lib.temp_dir("ferry-fault-", keep=args.keep)
    if args.keep:
        lib.log("work directory (kept): " + work)
    binary = lib.ferry_binary(work)
    origin_dir = os.path.join(work, "origin")
    os.makedirs(origin_dir)
    origin = lib.FaultOrigin(origin_dir).start()
    logdir = os.path.join(work, "logs")
    os.makedirs(logdir)
    ferry = lib.Ferry(binary, os.path.join(work, "spool"), logdir, max_concurrent=16)
    ferry.start()
    lib.log("fault origin on 127.0.0.1:%d, ferry on 127.0.0.1:%d" % (origin.port, ferry.port))
    recorder = lib.EventRecorder(ferry.port)
    recorder.start()
    lib.CLEANUP.push("stop event recorder", recorder.stop)
    time.sleep(0.2)

    jobs = build_jobs(origin, args)
    # precompute digests before the clock matters
    for job in jobs:
        if job["expect"]["state"] == "finished":
            job["digests"] = expected_digests(job)
    response = ferry.submit([job["body"] for job in jobs])
    if not suite.check("POST an array of %d jobs" % len(jobs), response.status == 200, repr(response)):
        return
    for job, item in zip(jobs, response.json()):
        job["id"] = item.get("id")
        job["submitted_at"] = time.monotonic()
        if job["id"] is None:
            suite.check("%s accepted" % job["variant"], False, repr(item))
    began = time.monotonic()

    # drive: pauses/resumes, resume of failed jobs; wait for everything to settle
    paused = {}
    resumed_failed = {}
    views = {}
    deadline = began + args.timeout
    while time.monotonic() < deadline:
        listing = {view["id"]: view for view in ferry.jobs()}
        for job in jobs:
            if job["id"] is None:
                continue
            view = listing.get(job["id"])
            views[job["id"]] = view
            extra = job["extra"]
            if "pause_at" in extra and job["id"] not in paused and view and view["state"] == "downloading" \
                    and (view.get("bytesReceived") or 0) >= extra["pause_at"]:
                answer = ferry.action(job["id"], "pause")
                paused[job["id"]] = {"pause": answer, "bytes": view.get("bytesReceived")}
                time.sleep(0.5)
                paused[job["id"]]["after_pause"] = ferry.job(job["id"])
                paused[job["id"]]["resume"] = ferry.action(job["id"], "resume")
            if "resume_failed" in extra and job["id"] not in resumed_failed and view and view["state"] == "failed":
                resumed_failed[job["id"]] = {"failed": view, "resume": ferry.action(job["id"], "resume")}
        pending = [job for job in jobs if job["id"] and not (
            settled(views.get(job["id"]))
            and ("resume_failed" not in job["extra"] or job["id"] in resumed_failed)
            and (views[job["id"]]["state"] != "failed" or "resume_failed" not in job["extra"]))]
        if not pending:
            break
        time.sleep(0.1)
    settle_time = time.monotonic() - began
    lib.log("all jobs settled in %.1f s" % settle_time)
    time.sleep(0.3)
    requests = origin.requests()
    recorder.stop()

    # verify each job
    finished_files = {}
    for job in jobs:
        if job["id"] is None:
            continue
        label = job["variant"]
        view = ferry.job(job["id"])
        expect = job["expect"]
        ok, detail = matches_outcome(view, expect)
        outcome = "finished" if expect["state"] == "finished" else "failed %s%s" % (
            expect["code"], " %d" % expect["httpStatus"] if expect.get("httpStatus") else "")
        suite.check("%s: %s" % (label, outcome), ok, detail)
        key_requests = [r for r in requests if r["query"].get("key") == job["variant"]]
        if job["case"] == "redirect_loop":
            key_requests = [r for r in requests if r["query"].get("variant") == job["variant"]]
        extra = job["extra"]
        if view and view.get("state") == "finished":
            digests = job["digests"]
            seed = digests.get(view.get("sha256"))
            suite.check("%s: sha256 is the origin's content" % label, seed is not None,
                        "content of seed %s" % seed if seed is not None else
                        "job sha256 %s matches none of seeds %s" % (view.get("sha256"), list(digests.values())))
            path = os.path.join(ferry.files_dir(), view.get("filename") or "?")
            on_disk = lib.file_sha256(path) if os.path.isfile(path) else None
            suite.check("%s: file in spool/files matches" % label, on_disk == view.get("sha256") and on_disk in digests,
                        "file %s sha %s" % (path, on_disk))
            status, digest, length = lib.http_stream_sha256(ferry.port, "/api/v1/jobs/%s/content" % job["id"])
            suite.check("%s: GET content serves the same bytes" % label, status == 200 and digest == view.get("sha256")
                        and length == job["size"], "status %d, %d bytes" % (status, length))
            suite.check("%s: bytesReceived == size" % label, view.get("bytesReceived") == job["size"],
                        "bytesReceived %s, bytesExpected %s" % (view.get("bytesReceived"), view.get("bytesExpected")))
            finished_files[view.get("filename")] = view.get("sha256")
        elif view and view.get("state") == "failed":
            error = view.get("error") or {}
            suite.check("%s: failure has a message" % label, bool(error.get("message")), repr(error))
            content = ferry.request("GET", "/api/v1/jobs/%s/content" % job["id"])
            suite.check("%s: content of a failed job answers 409" % label, content.status == 409,
                        "status %d" % content.status)
            name = view.get("filename")
            suite.check("%s: no finished file for a failed job" % label,
                        not name or not os.path.exists(os.path.join(ferry.files_dir(), name)), "filename %s" % name)
        # origin-side checks: exact for one connection, reported for four
        strict = job["connections"] == 1
        history = recorder.history(job["id"])
        if "requests" in extra and job["case"] != "redirect_chain":
            count = len(key_requests)
            text = "%d requests to the origin (expected %d)" % (count, extra["requests"])
            if strict:
                suite.check("%s: %s" % (label, text), count == extra["requests"],
                            "ranges %s" % [r["range"] for r in key_requests])
            else:
                lib.log("  info  %s: %s; ranges %s" % (label, text, [r["range"] for r in key_requests][:8]))
        if "ranges" in extra and strict:
            ranges = [r["range"] for r in key_requests]
            suite.check("%s: resumed with Range at the cut" % label, ranges == extra["ranges"],
                        "ranges %s, if-range %s" % (ranges, [r["if_range"] for r in key_requests]))
            if len(key_requests) > 1:
                suite.check("%s: resume carried If-Range" % label,
                            all(r["if_range"] for r in key_requests[1:]), repr([r["if_range"] for r in key_requests]))
        if extra.get("waits"):
            codes = [code for _, state, code, _ in history if state == "waiting"]
            suite.check("%s: waited with error code %s between attempts" % (label, extra["waits"]),
                        extra["waits"] in codes, "waiting codes seen %s" % codes)
        if extra.get("min_gap") and len(key_requests) >= 2:
            gap = key_requests[1]["time"] - key_requests[0]["time"]
            check = suite.check if strict else (lambda n, ok, d="": lib.log("  info  %s: %s" % (n, d)) or ok)
            check("%s: Retry-After honoured (gap >= %.0f s)" % (label, extra["min_gap"]), gap >= extra["min_gap"] - 0.05,
                  "gap %.2f s" % gap)
        if extra.get("not_before") and len(key_requests) >= 2:
            early = job["not_before"] - key_requests[1]["time"]
            check = suite.check if strict else (lambda n, ok, d="": lib.log("  info  %s: %s" % (n, d)) or ok)
            check("%s: Retry-After HTTP-date honoured" % label, early <= 0.05,
                  "second request %.2f s %s the date" % (abs(early), "before" if early > 0 else "after"))
        if "pause_at" in extra:
            record = paused.get(job["id"])
            if suite.check("%s: paused mid-download" % label, record is not None,
                           "at %s bytes" % record["bytes"] if record else
                           "never reached %d bytes while downloading" % extra["pause_at"]):
                suite.check("%s: pause answered paused" % label, record["pause"].status == 200 and
                            record["pause"].json().get("state") == "paused", repr(record["pause"]))
                after = record.get("after_pause") or {}
                suite.check("%s: still paused 0.5 s later, bytes kept" % label, after.get("state") == "paused" and
                            (after.get("bytesReceived") or 0) > 0, "state %s bytes %s" % (after.get("state"),
                                                                                          after.get("bytesReceived")))
                suite.check("%s: resume answered waiting/downloading" % label, record["resume"].status == 200 and
                            record["resume"].json().get("state") in ("waiting", "downloading"), repr(record["resume"]))
                if strict:
                    ranged = [r for r in key_requests[1:] if r["range"]]
                    suite.check("%s: resume asked for a Range (which the origin ignored)" % label, bool(ranged),
                                "ranges %s" % [r["range"] for r in key_requests])
            if extra.get("restarted"):
                restarted = recorder.restarted.get(job["id"], 0)
                suite.check("%s: a job event with restarted: true was sent" % label, restarted > 0,
                            "%d restarted events" % restarted)
        if "resume_failed" in extra:
            record = resumed_failed.get(job["id"])
            if suite.check("%s: failed first (%s)" % (label, extra["resume_failed"]["code"]), record is not None and
                           matches_outcome(record["failed"], extra["resume_failed"])[0],
                           "never failed" if record is None else matches_outcome(record["failed"],
                                                                                 extra["resume_failed"])[1]):
                suite.check("%s: resume of the failed job answered 200" % label, record["resume"].status == 200,
                            repr(record["resume"]))
        if "final_path" in extra and view and view.get("state") == "finished":
            final = view.get("finalUrl") or ""
            suite.check("%s: finalUrl is the file after redirects" % label, extra["final_path"] in final.split("?")[0]
                        or "/f/chain" in final, "finalUrl %s" % final)

    # the spool as a whole: nothing corrupt, nothing unexplained
    present = sorted(os.listdir(ferry.files_dir())) if os.path.isdir(ferry.files_dir()) else []
    bad = []
    for name in present:
        digest = lib.file_sha256(os.path.join(ferry.files_dir(), name))
        if finished_files.get(name) != digest:
            bad.append("%s (sha %s, job says %s)" % (name, digest[:16], (finished_files.get(name) or "no job")[:16]))
    suite.check("spool/files holds only whole files of finished jobs", not bad, "; ".join(bad)[:800])
    suite.check("every finished job's file is in spool/files", set(finished_files) <= set(present),
                ", ".join(sorted(set(finished_files) - set(present))))
    status, seconds = ferry.stop()
    suite.check("SIGTERM: exit 0 within 10 s", status == 0 and seconds <= 10.5, "status %s after %.1f s" % (status, seconds))
    lib.log("figures: %d jobs (%d cases x %s), settled in %.1f s, %d origin requests, suite %.1f s"
            % (len(jobs), len({j["case"] for j in jobs}), "1" if args.no_segmented else "2 variants",
               settle_time, len(requests), suite.elapsed()))


if __name__ == "__main__":
    lib.run_suite(lib.Suite("fault"), main)
