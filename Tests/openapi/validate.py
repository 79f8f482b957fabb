#!/usr/bin/env python3
"""Check Ferry's OpenAPI document against the OpenAPI 3.1 schema and against API.md.

Usage:
    python3 Tests/openapi/validate.py [--swift PATH] [--api PATH | --builtin]

--swift    the Swift file holding the document (default: Sources/FerryService/OpenAPI/OpenAPIDocument.swift
           next to this script's repository root)
--api      the HTTP contract (default: /work/shared/API.md, else docs/API.md in the repository; when neither
           exists, a built-in copy of the endpoint table, error codes and job fields is used)
--builtin  use that built-in copy even when API.md exists

Needs the PyPI package `openapi-spec-validator` (pip install openapi-spec-validator).
Prints one line per check and "N passed, M failed"; exits 1 when any check fails, 2 when it cannot run.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_SWIFT = os.path.join(REPO, "Sources", "FerryService", "OpenAPI", "OpenAPIDocument.swift")
DEFAULT_API = ["/work/shared/API.md", os.path.join(REPO, "docs", "API.md")]

HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
STATES = ["waiting", "downloading", "paused", "finished", "failed", "cancelled"]

# Used when API.md cannot be read (kept in step with API.md v1 by hand).
BUILTIN_ENDPOINTS = [
    ("POST", "/api/v1/jobs"), ("GET", "/api/v1/jobs"), ("GET", "/api/v1/jobs/{id}"),
    ("PATCH", "/api/v1/jobs/{id}"), ("POST", "/api/v1/jobs/{id}/pause"), ("POST", "/api/v1/jobs/{id}/resume"),
    ("POST", "/api/v1/jobs/{id}/cancel"), ("DELETE", "/api/v1/jobs/{id}"), ("GET", "/api/v1/jobs/{id}/content"),
    ("HEAD", "/api/v1/jobs/{id}/content"), ("GET", "/api/v1/events"), ("GET", "/api/v1/jobs/{id}/events"),
    ("POST", "/api/v1/session"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics"),
    ("GET", "/api/v1/openapi.json"), ("GET", "/"),
]
BUILTIN_ERROR_CODES = [
    "invalid_request", "invalid_url", "unsupported_scheme", "forbidden_destination", "unauthorized", "forbidden",
    "not_found", "method_not_allowed", "conflict", "payload_too_large", "unsupported_media_type", "rate_limited",
    "unavailable", "http_error", "network_error", "timeout", "too_many_redirects", "checksum_mismatch",
    "file_too_large", "quota_exceeded", "internal", "disk_full", "retrying",
]
BUILTIN_JOB_FIELDS = [
    "id", "url", "finalUrl", "state", "filename", "bytesReceived", "bytesExpected", "progress", "speed", "eta",
    "contentType", "sha256", "expectedSha256", "error", "attempts", "priority", "createdAt", "startedAt",
    "finishedAt", "contentUrl",
]
# Endpoints named in API.md's prose rather than in the table's first column.
# Operations the contract names in prose or the issues added: logout, and the manual purge of ended jobs
# (issue "spool housekeeping": DELETE /api/v1/jobs?state=finished&olderThan=...).
EXTRA_ENDPOINTS = [("DELETE", "/api/v1/session"), ("DELETE", "/api/v1/jobs")]
# Nullable per API.md ("null when ..." / "hex or null" / "otherwise null") and per the brief.
NULLABLE_JOB_FIELDS = ["bytesExpected", "progress", "eta", "expectedSha256", "error", "sha256", "finalUrl",
                       "filename", "contentType", "startedAt", "finishedAt"]
OPERATION_IDS = [
    "createJobs", "listJobs", "getJob", "updateJob", "deleteJob", "pauseJob", "resumeJob", "cancelJob",
    "getJobContent", "headJobContent", "streamEvents", "streamJobEvents", "createSession", "deleteSession", "purgeJobs",
    "healthz", "readyz", "metrics", "openapi",
]
UNAUTHENTICATED = [("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/"), ("POST", "/api/v1/session")]


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok    {what}")
        else:
            self.failed.append(what)
            print(f"FAIL  {what}" + (f": {detail}" if detail else ""))
        return ok


def extract_json(swift_source):
    """The text of the Swift multi-line raw string literal, minus the closing delimiter's indentation."""
    m = re.search(r'static let json: String = #"""[ \t]*\n(.*?)\n([ \t]*)"""#', swift_source, re.S)
    if not m:
        return None, "no `static let json: String = #\"\"\"` ... `\"\"\"#` literal found"
    body, indent = m.group(1), m.group(2)
    lines = body.split("\n")
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.startswith(indent):
            return None, f"line {number} of the literal is indented less than the closing delimiter"
    text = "\n".join(line[len(indent):] for line in lines)
    if "\\#" in text:
        return None, "the literal contains `\\#`, which Swift would treat as an escape in a #-raw string"
    return text, None


def read_api(paths):
    for path in paths:
        if path and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return path, f.read()
    return None, None


def section(markdown, title):
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    return m.group(1) if m else ""


def endpoints_from_api(markdown):
    """(METHOD, path) pairs from the first column of the table under `## Endpoints`."""
    found = []
    for line in section(markdown, "Endpoints").splitlines():
        if not line.startswith("|"):
            continue
        cells = line.split("|")
        if len(cells) < 3:
            continue
        first = cells[1]
        methods, path = [], None
        for token in re.findall(r"`([^`]+)`", first):
            parts = token.split()
            for part in parts:
                if part in HTTP_METHODS:
                    methods.append(part)
                elif part.startswith("/"):
                    path = part
        if path and methods:
            found.extend((m, path) for m in methods)
    return found


def error_codes_from_api(markdown):
    text = section(markdown, "Errors")
    codes = []
    for token in re.findall(r"`([a-z]+(?:_[a-z]+)*)`", text):
        if token not in STATES and token not in codes:
            codes.append(token)
    return codes


def job_fields_from_api(markdown):
    m = re.search(r"```json\s*\n(.*?)```", section(markdown, "The job"), re.S)
    return re.findall(r'"(\w+)"\s*:', m.group(1)) if m else []


def resolve(doc, node):
    seen = 0
    while isinstance(node, dict) and "$ref" in node:
        pointer = node["$ref"]
        if not pointer.startswith("#/"):
            raise ValueError(f"external $ref {pointer}")
        node = doc
        for part in pointer[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        seen += 1
        if seen > 20:
            raise ValueError(f"$ref loop at {pointer}")
    return node


def operation(doc, method, path):
    return doc.get("paths", {}).get(path, {}).get(method.lower())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swift", default=DEFAULT_SWIFT)
    parser.add_argument("--api", default=None)
    parser.add_argument("--builtin", action="store_true", help="use the built-in contract lists, not API.md")
    args = parser.parse_args()

    try:
        from openapi_spec_validator import validate as validate_spec
    except ImportError:
        print("openapi-spec-validator is not installed: pip install openapi-spec-validator", file=sys.stderr)
        return 2
    try:
        with open(args.swift, encoding="utf-8") as f:
            swift_source = f.read()
    except OSError as e:
        print(f"cannot read {args.swift}: {e}", file=sys.stderr)
        return 2

    checks = Checks()
    checks.check(re.search(r"^enum OpenAPIDocument\s*\{", swift_source, re.M) is not None,
                 "Swift file declares `enum OpenAPIDocument`")
    text, problem = extract_json(swift_source)
    if not checks.check(text is not None, "raw string literal found and well-formed", problem or ""):
        return finish(checks)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        checks.check(False, "document is JSON", str(e))
        return finish(checks)
    checks.check(True, "document is JSON")
    checks.check(doc.get("openapi") == "3.1.0", "openapi is 3.1.0", repr(doc.get("openapi")))
    try:
        validate_spec(doc)
        checks.check(True, "openapi-spec-validator accepts the document")
    except Exception as e:  # the validator raises several exception types
        checks.check(False, "openapi-spec-validator accepts the document", f"{type(e).__name__}: {e}")
        return finish(checks)

    api_path = None
    api_text = None
    if args.builtin:
        pass
    elif args.api:
        api_path, api_text = read_api([args.api])
        if api_text is None:
            print(f"cannot read {args.api}", file=sys.stderr)
            return 2
    else:
        api_path, api_text = read_api(DEFAULT_API)
    if api_text is not None:
        print(f"contract: {api_path}")
        endpoints = endpoints_from_api(api_text)
        codes = error_codes_from_api(api_text)
        job_fields = job_fields_from_api(api_text)
        checks.check(len(endpoints) >= 15, "endpoint table parsed from API.md", f"only {len(endpoints)} found")
        checks.check(len(codes) >= 20, "error codes parsed from API.md", f"only {len(codes)} found")
        checks.check(len(job_fields) >= 15, "job fields parsed from API.md", f"only {len(job_fields)} found")
        drift = (set(endpoints) != set(BUILTIN_ENDPOINTS) or set(codes) != set(BUILTIN_ERROR_CODES)
                 or set(job_fields) != set(BUILTIN_JOB_FIELDS))
        if drift:
            print("note: API.md differs from this script's built-in lists; update them", file=sys.stderr)
    else:
        print("contract: API.md not found, using the built-in endpoint list")
        endpoints, codes, job_fields = BUILTIN_ENDPOINTS, BUILTIN_ERROR_CODES, BUILTIN_JOB_FIELDS

    # Every endpoint of the contract is described, and nothing more.
    wanted = list(dict.fromkeys(endpoints + EXTRA_ENDPOINTS))
    for method, path in wanted:
        checks.check(operation(doc, method, path) is not None, f"{method} {path} is described")
    described = {(m.upper(), p) for p, item in doc["paths"].items() for m in item
                 if m.upper() in HTTP_METHODS}
    extra = sorted(described - set(wanted))
    checks.check(not extra, "no operation beyond the contract", ", ".join(f"{m} {p}" for m, p in extra))

    # operationIds.
    ids = [op.get("operationId") for item in doc["paths"].values() for m, op in item.items()
           if m.upper() in HTTP_METHODS]
    checks.check(len(ids) == len(set(ids)) and None not in ids, "operationIds present and unique")
    missing_ids = [i for i in OPERATION_IDS if i not in ids]
    checks.check(not missing_ids, "expected operationIds present", ", ".join(missing_ids))

    schemas = doc["components"]["schemas"]
    # Error codes: exactly those of API.md.
    enum = resolve(doc, schemas["ErrorCode"]).get("enum", [])
    checks.check(sorted(enum) == sorted(codes), "ErrorCode enum equals API.md's codes",
                 f"missing {sorted(set(codes) - set(enum))}, extra {sorted(set(enum) - set(codes))}")
    detail = resolve(doc, resolve(doc, schemas["Error"])["properties"]["error"])
    checks.check(set(detail.get("required", [])) == {"code", "message"} and "httpStatus" in detail["properties"],
                 "Error is {error: {code, message, httpStatus?}}")

    # Job: every field of API.md's job, all required, nullable ones nullable, no `restarted`.
    job = schemas["Job"]
    props = job.get("properties", {})
    checks.check(sorted(props) == sorted(job_fields), "Job fields equal API.md's job",
                 f"missing {sorted(set(job_fields) - set(props))}, extra {sorted(set(props) - set(job_fields))}")
    checks.check(sorted(job.get("required", [])) == sorted(job_fields), "every Job field is required")
    not_nullable = [f for f in NULLABLE_JOB_FIELDS if f in props and not allows_null(doc, props[f])]
    checks.check(not not_nullable, "nullable Job fields allow null", ", ".join(not_nullable))
    nullable = [f for f in props if f not in NULLABLE_JOB_FIELDS and allows_null(doc, props[f])]
    checks.check(not nullable, "other Job fields do not allow null", ", ".join(nullable))
    checks.check(resolve(doc, props.get("state", {})).get("enum") == STATES, "Job state enum is API.md's states")
    checks.check("restarted" not in props, "`restarted` is not a Job field (events only)")

    # Requests.
    create = schemas["JobCreate"]
    checks.check(create.get("required") == ["url"], "JobCreate requires only url")
    expected_create = {"url", "filename", "headers", "sha256", "priority", "maxBytesPerSecond", "connections",
                       "paused", "dedupe"}
    checks.check(set(create["properties"]) == expected_create, "JobCreate fields are API.md's",
                 str(sorted(set(create["properties"]) ^ expected_create)))
    connections = create["properties"]["connections"]
    checks.check(connections.get("minimum") == 1 and connections.get("maximum") == 16, "connections is 1-16")
    checks.check(create.get("additionalProperties") is not False, "JobCreate ignores unknown fields")
    checks.check(set(schemas["JobPatch"]["properties"]) == {"url", "priority", "maxBytesPerSecond"},
                 "JobPatch fields are url, priority, maxBytesPerSecond")
    body = resolve(doc, operation(doc, "POST", "/api/v1/jobs")["requestBody"])["content"]["application/json"]
    kinds = {resolve(doc, s).get("type") for s in body["schema"].get("oneOf", [])}
    checks.check(kinds == {"object", "array"}, "POST /api/v1/jobs takes an object or an array (oneOf)")
    job_list = schemas["JobList"]
    checks.check(set(job_list.get("required", [])) == {"jobs", "next"} and allows_null(doc, job_list["properties"]["next"]),
                 "JobList is {jobs, next (nullable)}")

    # Status codes.
    expect_statuses(checks, doc, "POST", "/api/v1/jobs", ["200", "201", "400", "401", "403", "409", "413", "415", "429"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs", ["200", "401"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs/{id}", ["200", "404"])
    expect_statuses(checks, doc, "PATCH", "/api/v1/jobs/{id}", ["200", "400", "404", "409", "413", "415"])
    expect_statuses(checks, doc, "DELETE", "/api/v1/jobs/{id}", ["204", "404"])
    for action in ("pause", "resume", "cancel"):
        expect_statuses(checks, doc, "POST", f"/api/v1/jobs/{{id}}/{action}", ["200", "404", "409"])
    for method in ("GET", "HEAD"):
        expect_statuses(checks, doc, method, "/api/v1/jobs/{id}/content", ["200", "206", "304", "404", "409", "416"])
    expect_statuses(checks, doc, "GET", "/api/v1/events", ["200"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs/{id}/events", ["200", "204", "404"])
    expect_statuses(checks, doc, "GET", "/readyz", ["200", "503"])
    deletes = resolve(doc, operation(doc, "DELETE", "/api/v1/jobs/{id}")["responses"]["204"])
    checks.check("content" not in deletes, "DELETE job 204 has no body")

    # Headers.
    expect_header(checks, doc, "POST", "/api/v1/jobs", "201", "Location", required=True)
    expect_header(checks, doc, "GET", "/api/v1/jobs", "200", "Ferry-Event-Id", required=True)
    for method in ("GET", "HEAD"):
        for name in ("ETag", "Last-Modified", "Accept-Ranges", "Content-Disposition", "Repr-Digest", "Content-Length"):
            expect_header(checks, doc, method, "/api/v1/jobs/{id}/content", "200", name)
        expect_header(checks, doc, method, "/api/v1/jobs/{id}/content", "206", "Content-Range")
        expect_header(checks, doc, method, "/api/v1/jobs/{id}/content", "416", "Content-Range", required=True)
    expect_header(checks, doc, "POST", "/api/v1/session", "204", "Set-Cookie", required=True)
    unauthorized = resolve(doc, doc["components"]["responses"]["Unauthorized"])
    checks.check("WWW-Authenticate" in unauthorized.get("headers", {}), "401 carries WWW-Authenticate")
    not_allowed = resolve(doc, doc["components"]["responses"]["MethodNotAllowed"])
    checks.check("Allow" in not_allowed.get("headers", {}), "405 carries Allow")
    content_get = operation(doc, "GET", "/api/v1/jobs/{id}/content")
    media = resolve(doc, content_get["responses"]["206"]).get("content", {})
    checks.check("multipart/byteranges" in media, "206 offers multipart/byteranges")
    params = {resolve(doc, p)["name"] for p in content_get.get("parameters", [])}
    checks.check({"follow", "Range", "If-Range", "If-None-Match"} <= params, "content takes follow, Range, If-Range, If-None-Match")
    create_params = {resolve(doc, p)["name"] for p in operation(doc, "POST", "/api/v1/jobs").get("parameters", [])}
    checks.check("Idempotency-Key" in create_params, "POST /api/v1/jobs takes Idempotency-Key")
    list_params = {resolve(doc, p)["name"] for p in operation(doc, "GET", "/api/v1/jobs").get("parameters", [])}
    checks.check(list_params == {"state", "limit", "after"}, "GET /api/v1/jobs takes state, limit, after")
    event_params = {resolve(doc, p)["name"] for p in operation(doc, "GET", "/api/v1/events").get("parameters", [])}
    checks.check({"jobs", "interval", "Last-Event-ID"} <= event_params, "GET /api/v1/events takes jobs, interval, Last-Event-ID")

    # Media types.
    for method, path in (("GET", "/api/v1/events"), ("GET", "/api/v1/jobs/{id}/events")):
        ok = "text/event-stream" in resolve(doc, operation(doc, method, path)["responses"]["200"]).get("content", {})
        checks.check(ok, f"{method} {path} answers text/event-stream")
    metrics = resolve(doc, operation(doc, "GET", "/metrics")["responses"]["200"]).get("content", {})
    checks.check("text/plain; version=0.0.4" in metrics, "/metrics answers text/plain; version=0.0.4")
    page = resolve(doc, operation(doc, "GET", "/")["responses"]["200"]).get("content", {})
    checks.check("text/html" in page, "/ answers text/html")

    # Security: /api/... and /metrics need credentials; /healthz, /readyz, / and the login do not.
    schemes = doc["components"].get("securitySchemes", {})
    checks.check(schemes.get("bearer", {}).get("scheme") == "bearer", "bearer security scheme")
    cookie = schemes.get("cookie", {})
    checks.check(cookie.get("in") == "cookie" and cookie.get("name") == "ferry_session", "cookie scheme `ferry_session`")
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method.upper() not in HTTP_METHODS:
                continue
            security = op.get("security", doc.get("security", []))
            open_ = security == [] or {} in security
            if (method.upper(), path) in UNAUTHENTICATED:
                checks.check(open_, f"{method.upper()} {path} needs no token")
            else:
                checks.check(not open_, f"{method.upper()} {path} needs a token")
                checks.check("401" in op["responses"], f"{method.upper()} {path} documents 401")

    instance_checks(checks, doc)

    # Every $ref resolves (the validator follows them, but this names the broken one).
    broken = [r for r in refs(doc) if not resolves(doc, r)]
    checks.check(not broken, "every $ref resolves", ", ".join(broken))
    return finish(checks)


def instance_checks(checks, doc):
    """Validate sample bodies against the component schemas (JSON Schema 2020-12, as OpenAPI 3.1 uses)."""
    try:
        from jsonschema import Draft202012Validator
    except ImportError:
        checks.check(False, "jsonschema importable (a dependency of openapi-spec-validator)")
        return

    def errors(name, instance):
        root = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
        return [e.message for e in Draft202012Validator(root).iter_errors(instance)]

    def expect(name, instance, valid, what):
        found = errors(name, instance)
        checks.check(not found if valid else bool(found), what, "; ".join(found) if valid else "accepted")

    for name, schema in doc["components"]["schemas"].items():
        if "example" in schema:
            expect(name, schema["example"], True, f"example of {name} is valid")

    job = dict(doc["components"]["schemas"]["Job"]["example"])
    waiting = dict(job, state="waiting", error={"code": "retrying", "message": "Retrying at 04:05:06Z."})
    failed = dict(job, state="failed", error={"code": "http_error", "message": "Origin answered 404.", "httpStatus": 404})
    unknown = dict(job, bytesExpected=None, progress=None, eta=None, finalUrl=None, filename=None)
    finished = dict(job, state="finished", sha256="ab" * 32, finishedAt="2026-11-22T04:05:09.000Z")
    expect("Job", waiting, True, "a waiting job with a `retrying` reason is a Job")
    expect("Job", failed, True, "a failed job with `http_error` + httpStatus is a Job")
    expect("Job", unknown, True, "a job without a known length is a Job")
    expect("Job", finished, True, "a finished job is a Job")
    expect("Job", dict(failed, error={"code": "http_error", "message": "x"}), False,
           "`http_error` without httpStatus is refused")
    expect("Job", dict(job, state="running"), False, "an unknown state is refused")
    expect("Job", {k: v for k, v in job.items() if k != "error"}, False, "a job without `error` is refused")
    expect("JobEvent", dict(job, restarted=True), True, "a job event with `restarted: true` is a JobEvent")
    item_error = {"error": {"code": "invalid_url", "message": "Not a URL."}}
    expect("BatchItem", waiting, True, "a job with an error reason is exactly one BatchItem (a job)")
    expect("BatchItem", job, True, "a job is exactly one BatchItem")
    expect("BatchItem", item_error, True, "an {error} is exactly one BatchItem")
    expect("Error", {"error": {"code": "not_found", "message": "No such job."}}, True, "an API error is an Error")
    expect("Error", {"error": {"code": "no_such_code", "message": "x"}}, False, "an unknown error code is refused")
    expect("JobCreate", {"url": "https://example.com/a", "headers": {"Accept": "*/*"}, "sha256": "AB" * 32,
                         "priority": -3, "maxBytesPerSecond": 1000, "connections": 16, "paused": True,
                         "dedupe": False, "somethingNew": 1}, True, "a full JobCreate (with an unknown field) is valid")
    expect("JobCreate", {"filename": "a"}, False, "a JobCreate without url is refused")
    expect("JobCreate", {"url": "https://e/a", "connections": 17}, False, "connections 17 is refused")
    expect("JobCreate", {"url": "https://e/a", "sha256": "xyz"}, False, "a non-hex sha256 is refused")
    expect("JobCreate", {"url": "https://e/a", "headers": {"X": 1}}, False, "a non-string header value is refused")
    expect("JobPatch", {"maxBytesPerSecond": None}, True, "a JobPatch removing the rate limit is valid")
    expect("JobList", {"jobs": [job], "next": None}, True, "a JobList is valid")
    expect("ProgressEvent", {"id": "a", "bytesReceived": 5, "bytesExpected": None, "progress": None, "speed": 0.0,
                             "eta": None}, True, "a ProgressEvent without a known length is valid")
    expect("Readiness", {"status": "unavailable", "reasons": ["spool not writable"]}, True, "a Readiness is valid")


def allows_null(doc, schema):
    schema = resolve(doc, schema)
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(allows_null(doc, s) for s in schema.get("oneOf", []) + schema.get("anyOf", []))


def expect_statuses(checks, doc, method, path, statuses):
    op = operation(doc, method, path)
    have = set(op["responses"]) if op else set()
    missing = [s for s in statuses if s not in have]
    checks.check(not missing, f"{method} {path} answers {', '.join(statuses)}", f"missing {missing}")


def expect_header(checks, doc, method, path, status, name, required=False):
    op = operation(doc, method, path)
    response = resolve(doc, op["responses"].get(status, {})) if op else {}
    header = response.get("headers", {}).get(name)
    ok = header is not None and (not required or resolve(doc, header).get("required") is True)
    checks.check(ok, f"{method} {path} {status} has {'required ' if required else ''}header {name}")


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def resolves(doc, pointer):
    try:
        resolve(doc, {"$ref": pointer})
        return True
    except (KeyError, TypeError, ValueError):
        return False


def finish(checks):
    print(f"{checks.passed} passed, {len(checks.failed)} failed")
    if checks.failed:
        print("failed: " + "; ".join(checks.failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
