#!/usr/bin/env python3
"""Seam suite: a Hypothesis state machine drives jobs with random options through random lifecycles (issue 31).

One `ferry serve`, one nginx (sources, WebDAV `PUT /upload/`, the refusing `/refuse-upload/`, `/slow/`) and the
fault origin, all on 127.0.0.1, shared by every generated sequence; each sequence uses its own URLs and targets.

Rules: create a job (connections 1-4, maxBytesPerSecond none or 1-4 MiB/s, sha256 right/wrong/none, deliver to
nginx's WebDAV, to the 403 target, to a target answering 503 then 201, or nowhere, notify, mirrors (a good copy and a
404), filename, tags, paused, dedupe on/off; origins that are fast, slow, dropping, 503 with Retry-After once, without
a length, or changing their content between requests; or the same URL as an earlier job with other options), pause,
resume, cancel, DELETE, PATCH priority/maxBytesPerSecond/url, PATCH the global settings, SIGTERM + start, kill -9 +
start, let time pass. Files are 64 KiB to 8 MiB.

Invariants, after every step and (after the jobs settle, bounded) at the end of each sequence:
  - actions follow the contract's table ("The job"): allowed ones answer 2xx with the right state, others 409;
    a job in a state it cannot leave by itself (paused, failed, finished, cancelled) stays there, with the same
    sha256, until we act on it (so: a cancelled job never comes back, a delivery_failed job never becomes finished
    by itself, a restart changes no ended job); a deleted job answers 404 and leaves the list;
  - no job stays `downloading` with bytesReceived == bytesExpected for more than 6 s;
  - a finished job's content and `sha256` are the origin's SHA-256; a wrong `sha256` fails with checksum_mismatch
    and never finishes; a job delivering to the 403 target never finishes;
  - a finished job with a delivery was PUT to its target exactly once with a 2xx answer (once more for each kill -9
    that struck while it was delivering), and the target holds the origin's bytes;
  - GET /api/v1/events replayed from the Ferry-Event-Id of the list taken at the sequence's start: ids increase,
    every job created has a `job` event, every deleted one a `removed` event, and each job's last `job` event has
    the state of GET /api/v1/jobs;
  - notices: no job has two `job.finished` notices under different webhook ids, nor a `job.finished` and a
    `job.failed`; a finished job with `notify` gets its `job.finished` notice;
  - an origin that changed its content mid-way yields one version whole, never a splice of two;
  - dedupe keeps intent (issue 30.3): the job answered to a request for a URL already fetched carries that
    request's `deliver`, `sha256`, `filename` and `tags`. `--skip-dedupe-intent` turns this one off.

Needs PyPI `hypothesis` (pip install hypothesis). On failure Hypothesis prints the shrunk sequence as Python
(`state = SeamMachine()`, `state.create_job(...)`, ...): a script to replay against a running suite set-up.
Run: FERRY_BIN=.build/debug/ferry python3 Tests/suites/seam_suite.py [--quick] [--seed N] [--minutes N]
     [--examples N] [--steps N] [--skip-dedupe-intent] [--no-kill9] [--keep]
"""

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
import traceback
import http.client as httpclient

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suitelib as S  # noqa: E402

try:
    import hypothesis
    from hypothesis import HealthCheck, Verbosity, settings, strategies as st
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.stateful import (RuleBasedStateMachine, get_state_machine_test, invariant,
                                     precondition, rule)
except ImportError:
    print("seam_suite needs the Python package `hypothesis` (pip install hypothesis); it is not installed.")
    print("0 passed, 1 failed")
    sys.exit(1)

KiB, MiB = 1 << 10, 1 << 20
SIZES = [64 * KiB, 300 * KiB, 1 * MiB, 3 * MiB, 8 * MiB]
STABLE = ("paused", "failed", "finished", "cancelled")
ACTIVE = ("waiting", "downloading", "delivering")
STUCK_SECONDS = 6.0
SETTLE_SECONDS = 90.0

WORLD = None  # the shared processes and figures, set by main()
OPTIONS = None


class NoticeReceiver:
    """Records every notice POSTed to it (path, webhook-id, type, job id); answers 204."""

    def __init__(self):
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        self.lock = threading.Lock()
        self.received = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    notice = json.loads(body)
                except ValueError:
                    notice = {}
                with receiver.lock:
                    receiver.received.append({"path": self.path, "id": self.headers.get("webhook-id"),
                                              "type": notice.get("type"),
                                              "job": (notice.get("data") or {}).get("id")})
                self.send_response(204)
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        S.CLEANUP.push("stop the notice receiver", self.server.shutdown)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def at(self, path):
        with self.lock:
            return [r for r in self.received if r["path"] == path]


class World:
    """nginx, the fault origin and Ferry, shared by all sequences; counters for the figures."""

    def __init__(self, ferry, nginx, origin, sources):
        self.receiver = NoticeReceiver()
        self.settings = None  # the settings Ferry started with, restored after each sequence
        self.ferry = ferry
        self.nginx = nginx
        self.origin = origin
        self.sources = sources  # index -> (path under nginx root, size, sha256)
        self.sequences = 0
        self.steps = 0
        self.restarts = 0
        self.rules = {}
        self.checked = {}  # what the end-of-sequence checks saw, by kind (the figures show they ran)
        self.token = 0

    def fresh(self):
        self.token += 1
        return self.token

    def saw(self, what):
        self.checked[what] = self.checked.get(what, 0) + 1


class JobModel:
    """What we asked of one job and what we know must hold for it."""

    def __init__(self, job_id, url, sha, size, asked, target, kind="fast", versions=None, patchable=None):
        self.id = job_id
        self.url = url
        self.kind = kind
        # Builds another URL for the same bytes (PATCH url), or None where there is none.
        self.patchable = patchable
        self.origin_sha = sha
        # Every whole version the origin served (one, or two for an origin that changed mid-way).
        self.versions = versions or {sha}
        self.size = size
        self.asked = asked  # the request body
        self.wrong_sha = asked.get("sha256") not in (None, sha)
        self.target = target  # ("ok"|"refuse"|"flaky", path under nginx or the fault origin) or None
        self.notify = asked.get("notify")
        self.stable = None  # a state the job cannot leave without us, with its sha256
        self.stable_sha = None
        self.full_since = None
        self.deleted = False
        # kill -9s that struck while the job was (or may have been) delivering: each may cost one complete upload
        # more (the target took it whole before Ferry stored that it had; docs/API.md, "Several nodes"/crashes).
        self.kills_while_delivering = 0
        # Attempts to send the file onward a target may see: one, plus one per resume and per restart that found the
        # job active (a cut delivery is sent again from its first byte). A failed delivery is never sent again by itself.
        self.sends_allowed = 1
        self.last = None
        self.trail = []  # what we did to it and the states seen, in order (for failure messages)

    def note(self, text):
        if not self.trail or self.trail[-1] != text:
            self.trail.append(text)

    def describe(self):
        return "job %s asked %s; trail: %s" % (self.id, json.dumps(self.asked), " > ".join(self.trail[-30:]))


def with_trail(model, check, *args):
    """Runs `check(*args)`; a failed assertion gets the model's trail appended."""
    try:
        return check(*args)
    except AssertionError as error:
        raise AssertionError("%s\n  %s" % (error, model.describe())) from None


def delivery_of(job):
    return (job or {}).get("delivery") or {}


class SeamMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        WORLD.sequences += 1
        self.seq = WORLD.fresh()
        self.jobs = {}  # id -> JobModel
        self.order = []
        self.handles = []  # one per create request (a dedupe match repeats a model): rules pick from these, so
        #                    which rules can run never depends on Ferry's answers (Hypothesis replays must agree)
        self.notes = []
        if not WORLD.ferry.alive():
            WORLD.ferry.start(timeout=60)
        self.take_base()
        self.restarted = False

    # -- helpers ------------------------------------------------------------------------------------------

    def take_base(self):
        """One list and its Ferry-Event-Id: the view the event replay at the end starts from. Retaken after each
        restart, since a new run answers `reset` to the ids of the previous one (EventIDAllocator)."""
        response = WORLD.ferry.request("GET", "/api/v1/jobs?limit=1000")
        assert response.status == 200, "GET /api/v1/jobs answered %r" % response
        self.base_id = response.header("Ferry-Event-Id")
        self.base_jobs = {j["id"]: j for j in response.json()["jobs"]}

    @property
    def ferry(self):
        return WORLD.ferry

    def step(self):
        WORLD.steps += 1
        name = sys._getframe(1).f_code.co_name
        WORLD.rules[name] = WORLD.rules.get(name, 0) + 1

    def live(self):
        return [m for m in (self.jobs[i] for i in self.order) if not m.deleted]

    def listed(self):
        return {j["id"]: j for j in self.ferry.jobs()}

    def act_on(self, model, what):
        """We are about to act on `model` (`what`): it may leave its stable state."""
        model.note(what)
        model.stable = None
        model.stable_sha = None
        model.full_since = None

    # -- rules --------------------------------------------------------------------------------------------

    @rule(source=st.integers(0, len(SIZES) - 1),
          kind=st.sampled_from(["fast", "fast", "slow", "fault", "nolen", "drop", "busy", "changing"]),
          connections=st.integers(1, 4), rate=st.sampled_from([None, None, 1 * MiB, 2 * MiB, 4 * MiB]),
          sha=st.sampled_from(["none", "right", "wrong"]),
          deliver=st.sampled_from(["none", "none", "ok", "refuse", "flaky"]),
          filename=st.booleans(), tags=st.sampled_from([None, ["a"], ["a", "b"]]), paused=st.booleans(),
          dedupe=st.booleans(), notify=st.booleans(), mirrors=st.booleans())
    def create_job(self, source, kind, connections, rate, sha, deliver, filename, tags, paused, dedupe, notify,
                   mirrors):
        self.step()
        n = WORLD.fresh()
        versions, extra, patchable = None, {}, None
        if kind in ("fast", "slow"):
            path, size, digest = WORLD.sources[source]
            if kind == "fast":
                def patchable(k, path=path):
                    return WORLD.nginx.url("/%s?s=%d&p=%d" % (path, self.seq, k))
                url = WORLD.nginx.url("/%s?s=%d&n=%d" % (path, self.seq, n))
            else:
                def patchable(k, path=path):
                    return WORLD.nginx.url("/slow/%s?rate=%d&s=%d&p=%d" % (path, 6 * MiB, self.seq, k))
                url = WORLD.nginx.url("/slow/%s?rate=%d&s=%d&n=%d" % (path, 6 * MiB, self.seq, n))
            if mirrors:
                extra["mirrors"] = [WORLD.nginx.url("/%s?s=%d&mirror=%d" % (path, self.seq, n)),
                                    WORLD.origin.url("/f/s%dn%d-gone.bin?status=404" % (self.seq, n))]
        else:
            size = SIZES[source]
            seed = source + 1
            digest = S.fixture_sha256(size, seed)
            fault = {"fault": "", "nolen": "&no_length=1",
                     "drop": "&drop_after=%d&fail_times=1" % max(1, size // 3),
                     "busy": "&status=503&retry_after=1&fail_times=1",
                     # The first request is cut; every later one gets the next version (other ETag and bytes).
                     "changing": "&etag_change_after=1&drop_after=%d&fail_times=1" % max(1, size // 2)}[kind]
            url = WORLD.origin.url("/f/s%dn%d.bin?size=%d&seed=%d%s" % (self.seq, n, size, seed, fault))
            if kind == "changing":
                versions = {digest, S.fixture_sha256(size, seed + 1)}
                sha = "none" if sha == "right" else sha  # which version ends whole is the origin's timing
        self._create(url, digest, size, connections, rate, sha, deliver, filename, tags, paused, dedupe,
                     notify=notify, extra=extra, kind=kind, versions=versions, patchable=patchable)

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 1000), connections=st.integers(1, 4), sha=st.sampled_from(["none", "right", "wrong"]),
          deliver=st.sampled_from(["none", "ok", "refuse"]), filename=st.booleans(),
          tags=st.sampled_from([None, ["a"], ["c"]]), paused=st.booleans(), dedupe=st.sampled_from([True, True, False]))
    def same_url_again(self, pick, connections, sha, deliver, filename, tags, paused, dedupe):
        self.step()
        model = self.handles[pick % len(self.handles)]
        if model.kind == "changing" and sha == "right":
            sha = "none"
        self._create(model.url, model.origin_sha, model.size, connections, None, sha, deliver, filename, tags,
                     paused, dedupe, kind=model.kind, versions=model.versions, patchable=model.patchable)

    def _create(self, url, digest, size, connections, rate, sha, deliver, filename, tags, paused, dedupe,
                notify=False, extra=None, kind="fast", versions=None, patchable=None):
        n = WORLD.fresh()
        body = {"url": url, "connections": connections}
        if rate:
            body["maxBytesPerSecond"] = rate
        if sha == "right":
            body["sha256"] = digest
        elif sha == "wrong":
            body["sha256"] = hashlib.sha256(b"not %d" % n).hexdigest()
        target = None
        if deliver == "ok":
            target = ("ok", "/upload/seam/s%d/j%d.bin" % (self.seq, n))
        elif deliver == "refuse":
            target = ("refuse", "/refuse-upload/seam/s%d/j%d.bin" % (self.seq, n))
        elif deliver == "flaky":
            target = ("flaky", "/u/seam-s%d-j%d.bin" % (self.seq, n))
        if target and target[0] == "flaky":
            body["deliver"] = {"url": WORLD.origin.url(target[1] + "?statuses=503,201&retry_after=1")}
        elif target:
            body["deliver"] = {"url": WORLD.nginx.url(target[1])}
        if notify:
            body["notify"] = WORLD.receiver.url("/n/s%d/j%d" % (self.seq, n))
        body.update(extra or {})
        if filename:
            body["filename"] = "seam-%d-%d.bin" % (self.seq, n)
        if tags:
            body["tags"] = tags
        if paused:
            body["paused"] = True
        if not dedupe:
            body["dedupe"] = False
        response = self.ferry.submit(body)
        assert response.status in (200, 201), "POST %s answered %r" % (json.dumps(body), response)
        job = response.json()
        if response.status == 201:
            assert job["id"] not in self.jobs, "201 with a known job id %s" % job["id"]
        else:
            assert dedupe, "dedupe off but 200 (an existing job) for %s" % json.dumps(body)
            known = self.jobs.get(job["id"])
            assert known is not None and known.url == url and not known.deleted, \
                "200 for %s returned job %s, not a live job for that URL" % (url, job["id"])
        lost = self._intent_lost(body, job)
        if lost and not OPTIONS.skip_dedupe_intent:
            raise AssertionError("dedupe lost intent (issue 30.3): asked %s, got %s %s" % (
                json.dumps(body), response.status, json.dumps(job)[:400]))
        if response.status == 200:
            # The same job: its model holds what it does (with --skip-dedupe-intent, what this request asked
            # beyond that is knowingly dropped, issue 30.3).
            self.handles.append(known)
            known.note("matched by a request (200)")
            return
        model = JobModel(job["id"], url, digest, size, body, target, kind=kind, versions=versions,
                         patchable=patchable)
        model.note("created %d as %s" % (response.status, job["state"]))
        self.jobs[job["id"]] = model
        self.order.append(job["id"])
        self.handles.append(model)
        if paused:
            assert job["state"] == "paused", "created paused but %s" % job["state"]

    @staticmethod
    def _intent_lost(body, job):
        lost = []
        if "deliver" in body and delivery_of(job).get("url") != body["deliver"]["url"]:
            lost.append("deliver")
        # A job whose whole file has the digest asked already does what it asks (docs/API.md, "Create jobs"): its
        # `sha256` is known only once the file is whole (finished, or delivering, or paused or failed after that).
        if "sha256" in body and (job.get("expectedSha256") or "").lower() != body["sha256"] \
                and (job.get("sha256") or "").lower() != body["sha256"]:
            lost.append("sha256")
        if "filename" in body and not (job.get("filename") or "").startswith(body["filename"][:-4]):
            lost.append("filename")
        if "tags" in body and not set(body["tags"]) <= set(job.get("tags") or []):
            lost.append("tags")
        return lost

    def _pick(self, pick):
        return self.handles[pick % len(self.handles)]

    def _state_now(self, model):
        job = self.ferry.job(model.id)
        return job["state"] if job else None

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 1000), name=st.sampled_from(["pause", "resume", "cancel"]))
    def action(self, pick, name):
        self.step()
        model = self._pick(pick)
        if model.deleted:
            response = self.ferry.action(model.id, name)
            assert response.status == 404, "%s on deleted job %s answered %r" % (name, model.id, response)
            return
        before = self._state_now(model)
        self.act_on(model, name)
        if name == "resume":
            model.sends_allowed += 1
        response = self.ferry.action(model.id, name)
        after = self._state_now(model)
        got = response.json() if response.status == 200 else None
        where = "%s on a %s job %s answered %r (now %s)" % (name, before, model.id, response, after)
        allowed = {"pause": ("waiting", "downloading", "delivering", "paused"),
                   "resume": ("paused", "failed", "waiting", "downloading"),
                   "cancel": ("waiting", "downloading", "delivering", "paused", "failed", "cancelled")}[name]
        if before in STABLE:  # a state only we can change: the answer is determined
            if before in allowed:
                assert response.status == 200, where
            else:
                assert response.status == 409, where
        else:  # active: it may have moved on (to a state only we can change) between our GET and the action
            assert response.status in (200, 409), where
            if response.status == 409:
                assert before not in allowed or (after in STABLE and after not in allowed), where
        if got is not None:
            if name == "pause":
                assert got["state"] == "paused", where
            elif name == "cancel":
                assert got["state"] == "cancelled", where
            else:
                assert got["state"] not in ("paused", "cancelled"), where
        if name == "cancel" and response.status == 200:
            model.stable = "cancelled"

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 1000), field_value=st.sampled_from([("priority", 0), ("priority", 5), ("priority", -2),
                                                                   ("maxBytesPerSecond", 1 * MiB),
                                                                   ("maxBytesPerSecond", 3 * MiB), ("url", None)]))
    def patch(self, pick, field_value):
        field, value = field_value
        self.step()
        model = self._pick(pick)
        if field == "url":
            return self._patch_url(model)
        if model.deleted:
            response = self.ferry.request("PATCH", "/api/v1/jobs/" + model.id, {field: value})
            assert response.status == 404, "PATCH on deleted job %s answered %r" % (model.id, response)
            return
        before = self._state_now(model)
        self.act_on(model, "PATCH %s=%s" % (field, value))
        response = self.ferry.request("PATCH", "/api/v1/jobs/" + model.id, {field: value})
        where = "PATCH %s=%s on a %s job %s answered %r" % (field, value, before, model.id, response)
        if before in ("finished", "cancelled"):
            assert response.status == 409, where
        elif before in ("paused", "failed"):
            assert response.status == 200 and response.json()["state"] == before, where
        else:
            assert response.status in (200, 409), where
            if response.status == 409:
                assert self._state_now(model) in ("finished", "cancelled"), where

    def _patch_url(self, model):
        """PATCH url to another link to the same bytes (nginx's files; the fault origin's are left alone)."""
        if model.deleted or model.patchable is None:
            return
        new_url = model.patchable(WORLD.fresh())
        before = self._state_now(model)
        self.act_on(model, "PATCH url")
        response = self.ferry.request("PATCH", "/api/v1/jobs/" + model.id, {"url": new_url})
        where = "PATCH url on a %s job %s answered %r" % (before, model.id, response)
        if before in ("finished", "cancelled"):
            assert response.status == 409, where
        elif before in ("paused", "failed", "waiting"):
            assert response.status in (200, 409) if before == "waiting" else response.status == 200, where
        else:
            assert response.status in (200, 409), where
        if response.status == 200:
            job = response.json()
            assert job["url"] == new_url, "%s: url now %s" % (where, job["url"])
            if before in ("paused", "failed"):
                assert job["state"] == before, "%s: state now %s" % (where, job["state"])
            model.url = new_url

    @rule(concurrent=st.sampled_from([1, 2, 4, 8]), rate=st.sampled_from([None, None, 8 * MiB, 32 * MiB]))
    def settings(self, concurrent, rate):
        """PATCH the global settings; they take effect for running transfers (restored after the sequence)."""
        self.step()
        response = self.ferry.request("PATCH", "/api/v1/settings", {"maxConcurrent": concurrent,
                                                                    "maxBytesPerSecond": rate})
        assert response.status == 200, "PATCH settings answered %r" % response
        got = self.ferry.request("GET", "/api/v1/settings").json()
        assert got.get("maxConcurrent") == concurrent and got.get("maxBytesPerSecond") == rate, \
            "settings after PATCH %s/%s: %s" % (concurrent, rate, got)

    @precondition(lambda self: self.handles)
    @rule(pick=st.integers(0, 1000))
    def delete(self, pick):
        self.step()
        model = self._pick(pick)
        if model.deleted:
            response = self.ferry.request("DELETE", "/api/v1/jobs/" + model.id)
            assert response.status == 404, "DELETE of deleted job %s answered %r" % (model.id, response)
            return
        self.act_on(model, "DELETE")
        response = self.ferry.request("DELETE", "/api/v1/jobs/" + model.id)
        assert response.status == 204, "DELETE %s answered %r" % (model.id, response)
        model.deleted = True
        gone = self.ferry.request("GET", "/api/v1/jobs/" + model.id)
        assert gone.status == 404, "GET after DELETE %s answered %r" % (model.id, gone)

    @precondition(lambda self: self.handles)
    @rule(hard=st.booleans())
    def restart(self, hard):
        self.step()
        hard = hard and not OPTIONS.no_kill9
        WORLD.restarts += 1
        self.restarted = True
        before = int(self.ferry.request("GET", "/api/v1/jobs?limit=1").header("Ferry-Event-Id") or 0)
        for model in self.live():
            if (model.last or {}).get("state") in ACTIVE:
                model.sends_allowed += 1
        if hard:
            struck = set()
            for model in self.live():
                if model.last and model.last.get("state") == "delivering":
                    struck.add(model.id)
            listed = self.listed()  # a delivery may start between our last look and the kill
            for model in self.live():
                job = listed.get(model.id) or {}
                if job.get("state") in ACTIVE:
                    struck.add(model.id)
                    model.sends_allowed += 1
                if model.id in struck:
                    model.kills_while_delivering += 1
                model.note("kill -9 (listed just before as %s/delivery %s)" % (
                    job.get("state"), delivery_of(job).get("state")))
            self.ferry.kill9()
        else:
            listed = self.listed()  # a delivery may start between our last look and the stop
            for model in self.live():
                if (listed.get(model.id) or {}).get("state") in ACTIVE:
                    model.sends_allowed += 1
            status, seconds = self.ferry.stop()
            assert status == 0 and seconds <= 10, "SIGTERM: exit %s after %.1f s" % (status, seconds)
        for model in self.jobs.values():
            model.full_since = None
            if not hard:
                model.note("SIGTERM")
        self.ferry.start(timeout=60)
        self.take_base()
        now = int(self.base_id or 0)
        assert now >= before, "Ferry-Event-Id went back across a restart: %d -> %d" % (before, now)

    @rule(seconds=st.sampled_from([0.2, 0.5, 1.0]))
    def wait(self, seconds):
        self.step()
        time.sleep(seconds)

    # -- invariants ---------------------------------------------------------------------------------------

    @invariant()
    def jobs_agree_with_the_model(self):
        if not self.jobs:
            return
        self._observe(self.listed())

    def _observe(self, listed):
        now = time.monotonic()
        for model in (self.jobs[i] for i in self.order):
            with_trail(model, self._observe_one, model, listed.get(model.id), now)

    def _observe_one(self, model, job, now):
        if model.deleted:
            assert job is None, "deleted job %s is listed again: %s" % (model.id, json.dumps(job)[:300])
            return
        assert job is not None, "job %s vanished from the list (last seen %s)" % (
            model.id, json.dumps(model.last)[:300])
        state = job["state"]
        model.last = job
        model.note("%s%s%s" % (state, "/delivery " + delivery_of(job)["state"] if delivery_of(job) else "",
                               "/" + job["error"]["code"] if job.get("error") else ""))
        if model.stable is not None:
            assert state == model.stable, "job %s left %s by itself: now %s (%s)" % (
                model.id, model.stable, state, json.dumps(job)[:400])
            if model.stable_sha is not None:
                assert job.get("sha256") == model.stable_sha, "job %s changed its sha256 %s -> %s" % (
                    model.id, model.stable_sha, job.get("sha256"))
        if state in STABLE:
            model.stable = state
            model.stable_sha = job.get("sha256") or model.stable_sha
        if state == "finished":
            assert not model.wrong_sha, "job %s with a wrong sha256 finished: %s" % (model.id, json.dumps(job)[:400])
            assert not (model.target and model.target[0] == "refuse"), \
                "job %s delivering to a 403 target finished: %s" % (model.id, json.dumps(job)[:400])
            if model.target and model.target[0] == "ok":
                assert delivery_of(job).get("state") == "delivered", \
                    "job %s finished, its delivery %s" % (model.id, json.dumps(delivery_of(job)))
            if job.get("sha256"):
                assert job["sha256"] in model.versions, "job %s finished with sha256 %s, origin %s" % (
                    model.id, job["sha256"], sorted(model.versions))
        if state == "failed":
            code = (job.get("error") or {}).get("code")
            if model.wrong_sha:
                assert code == "checksum_mismatch", "job %s with a wrong sha256 failed with %s" % (model.id, code)
            else:
                assert code != "checksum_mismatch", "job %s with no wrong sha256 failed with %s" % (model.id, code)
                if model.target and model.target[0] == "refuse":
                    assert code == "delivery_failed", "job %s (403 target) failed with %s" % (model.id, code)
        expected, received = job.get("bytesExpected"), job.get("bytesReceived")
        if state == "downloading" and expected is not None and received == expected:
            if model.full_since is None:
                model.full_since = now
            assert now - model.full_since <= STUCK_SECONDS, \
                "job %s downloading with every byte in (%d) for %.1f s: %s" % (
                    model.id, received, now - model.full_since, json.dumps(job)[:400])
        else:
            model.full_since = None

    # -- the end of a sequence ----------------------------------------------------------------------------

    def teardown(self):
        try:
            if self.jobs and self.ferry.alive():
                self._settle_and_check()
        finally:
            self._clean_up()

    def _settle_and_check(self):
        if WORLD.settings is not None:
            restored = self.ferry.request("PATCH", "/api/v1/settings", WORLD.settings)
            assert restored.status == 200, "restoring the settings answered %r" % restored
        deadline = time.monotonic() + SETTLE_SECONDS
        while True:
            listed = self.listed()
            self._observe(listed)
            active = [m.id for m in self.live() if listed[m.id]["state"] in ACTIVE]
            if not active:
                break
            assert time.monotonic() < deadline, "jobs still active after %.0f s: %s" % (
                SETTLE_SECONDS, [json.dumps(listed[i])[:300] for i in active])
            time.sleep(0.25)
        # A finished job's sha256 may follow the state by a moment.
        sha_deadline = time.monotonic() + 10
        while time.monotonic() < sha_deadline and not all(
                listed[m.id].get("sha256") for m in self.live() if listed[m.id]["state"] == "finished"):
            time.sleep(0.2)
            listed = self.listed()
            self._observe(listed)
        log = WORLD.nginx.access_log()
        for model in self.live():
            job = listed[model.id]
            if job["state"] == "finished":
                status, digest, length = S.http_stream_sha256(self.ferry.port, "/api/v1/jobs/%s/content" % model.id)
                assert status == 200 and digest in model.versions and digest == job.get("sha256"), \
                    "job %s content: %s, %d bytes, sha256 %s (job %s, origin %s)" % (
                        model.id, status, length, digest, job.get("sha256"), sorted(model.versions))
                WORLD.saw("finished from a %s origin%s" % (model.kind, " with mirrors" if "mirrors" in model.asked else ""))
            with_trail(model, self._check_delivery, model, job, log)
        self._check_notices(listed)
        self._check_events(listed)

    def _check_delivery(self, model, job, log):
        if not model.target:
            return
        kind, path = model.target
        if kind == "flaky":
            uploads = [u for u in WORLD.origin.uploads() if u.get("path", "").split("?")[0] == path]
            puts = [u.get("status") for u in uploads]
            ok = [u for u in uploads if u.get("complete") and 200 <= (u.get("status") or 0) < 300]
            limit = 1 + model.kills_while_delivering
            assert len(ok) <= limit, "job %s: target %s took %d complete uploads %s" % (model.id, path, len(ok), puts)
            if job["state"] == "finished":
                assert len(ok) >= 1 and all(u.get("sha256") in model.versions for u in ok), \
                    "job %s finished delivered; the 503-then-201 target got %s" % (model.id, json.dumps(uploads)[:600])
                WORLD.saw("delivered after a 503")
            return
        puts = [e["status"] for e in log if e["method"] == "PUT" and e["path"] == path]
        ok = [s for s in puts if 200 <= s < 300]
        if kind == "refuse":
            # Refused (403, not retried): each attempt is one PUT, and only a resume or a restart of an active job
            # makes another (issue 30.2: a restart turned a failed delivery's file into a new attempt by itself).
            assert len(puts) <= model.sends_allowed, "job %s: the refusing target %s got %d PUTs, %d allowed" % (
                model.id, path, len(puts), model.sends_allowed)
            return
        limit = 1 + model.kills_while_delivering
        assert len(ok) <= limit, "job %s: target %s got %d complete PUTs %s (kill -9s while delivering: %d)" % (
            model.id, path, len(ok), puts, model.kills_while_delivering)
        if job["state"] == "finished":
            assert delivery_of(job).get("state") == "delivered", "job %s finished, delivery %s" % (
                model.id, json.dumps(delivery_of(job)))
            assert len(ok) >= 1, "job %s finished delivered but its target %s got no complete PUT: %s" % (
                model.id, path, puts)
            stored = os.path.join(WORLD.nginx.root, path.lstrip("/"))
            got = S.file_sha256(stored) if os.path.exists(stored) else None
            assert got == job.get("sha256") and got in model.versions, \
                "job %s: the target holds sha256 %s, job %s, origin %s" % (
                    model.id, got, job.get("sha256"), sorted(model.versions))

    def _check_notices(self, listed):
        """Each job's notices: one `job.finished` id at most, never beside a `job.failed` id for an ended job; a
        finished job with `notify` gets its notice (at least once, within a few seconds)."""
        deadline = time.monotonic() + 15
        for model in self.live():
            if not model.notify:
                continue
            path = model.notify.split(str(WORLD.receiver.port), 1)[1]
            state = listed[model.id]["state"]
            while True:
                got = WORLD.receiver.at(path)
                finished = {r["id"] for r in got if r["type"] == "job.finished"}
                if state != "finished" or finished or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            where = "job %s (%s): notices %s" % (model.id, state, [(r["type"], r["id"]) for r in got])
            assert len(finished) <= 1, "two job.finished notices under different ids: " + where
            assert all(r["job"] == model.id for r in got), "a notice for another job: " + where
            if state == "finished":
                assert len(finished) == 1, "no job.finished notice: " + where
                WORLD.saw("finished with its notice")

    def _check_events(self, listed):
        """Replay /api/v1/events from the start's Ferry-Event-Id; compare with the list. The replay ends at the list's
        Ferry-Event-Id or when the stream is quiet for 2 s (the last id allocated may be a progress event's, which is
        not replayed); a replay that then disagrees is read once more with 10 s, since a loaded machine can pause a
        stream that long (seen at load 8 on 2 cores), and only that one counts."""
        final = self.ferry.request("GET", "/api/v1/jobs?limit=1")
        end_id = int(final.header("Ferry-Event-Id") or 0)
        try:
            self._check_replay(listed, end_id, self._replay(end_id, quiet=2.0))
        except AssertionError:
            self._check_replay(listed, end_id, self._replay(end_id, quiet=10.0))

    def _replay(self, end_id, quiet):
        connection = httpclient.HTTPConnection("127.0.0.1", self.ferry.port, timeout=quiet)
        frames = []
        try:
            headers = {"Accept": "text/event-stream"}
            if self.base_id is not None:
                headers["Last-Event-ID"] = self.base_id
            connection.request("GET", "/api/v1/events?interval=100", headers=headers)
            response = connection.getresponse()
            assert response.status == 200, "events answered %d" % response.status
            try:
                for event, data, event_id in S.sse_frames(response, lambda: True):
                    frames.append((event, data, event_id))
                    if event_id is not None and event_id.isdigit() and int(event_id) >= end_id:
                        break
            except OSError:
                pass  # nothing more within the timeout
        finally:
            connection.close()
        return frames

    def _check_replay(self, listed, end_id, frames):
        ids = [int(i) for _, _, i in frames if i is not None]
        assert all(a < b for a, b in zip(ids, ids[1:])), "event ids do not increase: %s" % ids[:80]
        if any(event == "reset" for event, _, _ in frames):
            assert False, "events answered `reset` to Last-Event-ID %s (restarts this sequence: %s)" % (
                self.base_id, self.restarted)
        last_job, removed = {}, set()
        for event, data, _ in frames:
            payload = json.loads(data) if data else {}
            if event == "job":
                job = payload.get("job", payload)
                last_job[job.get("id")] = job
            elif event == "removed":
                removed.add(payload.get("id"))
        # The list at base_id, then the events after it: a gapless view (API.md, "Events").
        for model in (self.jobs[i] for i in self.order):
            if model.deleted:
                assert model.id in removed or model.id not in self.base_jobs, \
                    "deleted job %s: listed at event %s and no `removed` event after it" % (model.id, self.base_id)
                continue
            seen = last_job.get(model.id) or self.base_jobs.get(model.id)
            assert seen is not None, "job %s: not listed at event %s and no `job` event after it (to %s)" % (
                model.id, self.base_id, end_id)
            assert seen["state"] == listed[model.id]["state"], \
                "job %s: list at %s + events say %s, the list now %s" % (
                    model.id, self.base_id, seen["state"], listed[model.id]["state"])

    def _clean_up(self):
        """DELETE this sequence's jobs so the next one starts from a quiet Ferry."""
        if not self.ferry.alive():
            try:
                self.ferry.start(timeout=60)
            except RuntimeError as error:
                S.log("  (could not restart Ferry to clean up: %s)" % error)
                return
        for model in self.live():
            try:
                self.ferry.request("DELETE", "/api/v1/jobs/" + model.id)
            except OSError:
                pass


def make_sources(root, rng):
    sources = []
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    for index, size in enumerate(SIZES):
        path = "src/f%d.bin" % index
        digest = S.write_random_file(os.path.join(root, path), size, rng)
        sources.append((path, size, digest))
    return sources


def first_line(error):
    """The assertion behind `error` (Hypothesis wraps a flaky one in a group), one line."""
    while getattr(error, "exceptions", None):
        error = error.exceptions[0]
    text = str(error).strip().splitlines()
    return ("%s: %s" % (type(error).__name__, text[0] if text else ""))[:400]


def run_once(seed, args, database_dir):
    examples, steps = (25, 20) if args.quick else (args.examples, args.steps)
    config = settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                      suppress_health_check=list(HealthCheck), database=DirectoryBasedExampleDatabase(database_dir),
                      verbosity=Verbosity.normal, print_blob=True, report_multiple_bugs=False)
    test = get_state_machine_test(SeamMachine, settings=config)
    hypothesis.seed(seed)(test)
    test()


def main(suite, args):
    global WORLD
    workdir = S.temp_dir("ferry-seam-suite", keep=args.keep)
    binary = S.ferry_binary(workdir)
    root = os.path.join(workdir, "root")
    os.makedirs(root)
    os.makedirs(os.path.join(workdir, "nginx"))
    nginx = S.Nginx(root, os.path.join(workdir, "nginx")).start()
    origin_dir = os.path.join(workdir, "origin")
    os.makedirs(origin_dir)
    origin = S.FaultOrigin(origin_dir).start()
    logs = os.path.join(workdir, "logs")
    os.makedirs(logs)
    ferry = S.Ferry(binary, os.path.join(workdir, "spool"), logs)
    ferry.start(timeout=60)
    WORLD = World(ferry, nginx, origin, make_sources(root, random.Random(args.seed)))
    WORLD.settings = ferry.request("GET", "/api/v1/settings").json()
    database_dir = tempfile.mkdtemp(prefix="ferry-seam-hypothesis")
    S.CLEANUP.push("remove hypothesis database", lambda: __import__("shutil").rmtree(database_dir, ignore_errors=True))
    S.log("seam: seed %d, %s, Ferry on port %d, work dir %s" % (
        args.seed, "quick" if args.quick else "%.0f min" % args.minutes, ferry.port, workdir))
    ends = time.monotonic() + args.minutes * 60
    seed = args.seed
    rounds = 0
    while True:
        rounds += 1
        before = (WORLD.sequences, WORLD.steps)
        try:
            run_once(seed, args, database_dir)
            failure = None
        except Exception as error:  # noqa: BLE001 - Hypothesis has printed the shrunk sequence
            failure = error
            traceback.print_exc(file=sys.stdout)
        suite.check("seed %d: every invariant held over the generated sequences" % seed, failure is None,
                    "%d sequences, %d steps%s" % (WORLD.sequences - before[0], WORLD.steps - before[1],
                                                  "" if failure is None else ": %s" % first_line(failure)))
        if failure is not None or args.quick or time.monotonic() >= ends:
            break
        seed += 1
    status, seconds = ferry.stop()
    suite.check("SIGTERM at the end: exit 0 within 10 s", status == 0 and seconds <= 10,
                "status %s after %.1f s" % (status, seconds))
    S.log("figures: %d round(s), %d sequences, %d steps, %d restarts, %d Ferry starts, %.0f s" % (
        rounds, WORLD.sequences, WORLD.steps, WORLD.restarts, ferry.starts, suite.elapsed()))
    S.log("figures: steps by rule: %s" % ", ".join("%s %d" % kv for kv in sorted(WORLD.rules.items())))
    S.log("figures: checked at the end: %s" % ", ".join("%s %d" % kv for kv in sorted(WORLD.checked.items())))
    if suite.failed:
        S.log("replay: python3 Tests/suites/seam_suite.py --seed %d %s%s(the failing seed; Hypothesis printed the "
              "shrunk steps above)" % (seed, "--quick " if args.quick else "",
                                       "--skip-dedupe-intent " if args.skip_dedupe_intent else "") + ("--no-kill9 " if args.no_kill9 else ""))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI: one round of 25 sequences of up to 20 steps")
    parser.add_argument("--seed", type=int, default=None, help="the seed (default: random, printed)")
    parser.add_argument("--minutes", type=float, default=60.0, help="long mode: rounds of new seeds until this passes")
    parser.add_argument("--examples", type=int, default=40, help="long mode: sequences per round")
    parser.add_argument("--steps", type=int, default=25, help="long mode: steps per sequence at most")
    parser.add_argument("--skip-dedupe-intent", action="store_true",
                        help="do not check that a dedupe match keeps the request's intent (issue 30.3)")
    parser.add_argument("--no-kill9", action="store_true",
                        help="restart with SIGTERM only (to look past the kill -9 delivery defects found by this suite)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (spool, logs, nginx log)")
    arguments = parser.parse_args()
    if arguments.seed is None:
        arguments.seed = random.randrange(1 << 30)
    OPTIONS = arguments
    S.run_suite(S.Suite("seam"), lambda suite: main(suite, arguments))
