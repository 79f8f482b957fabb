#!/usr/bin/env python3
"""Check Ferry's OpenAPI document against the OpenAPI 3.1 schema and against docs/API.md.

Usage:
    python3 Tests/openapi/validate.py [--document PATH] [--api PATH] [--serve PATH] [--url URL]

--document the OpenAPI document (default: Sources/FerryService/OpenAPI/openapi.json, which SwiftPM embeds in the
           binary: Package.swift's `.embedInCode`, served by OpenAPIDocument.swift; both are checked to say so)
--api      the API reference (default: docs/API.md)
--serve    the table of `ferry serve`'s options (default: Sources/FerryService/Configuration/ServeOptions.swift; the
           flags' names are the `ServiceConfiguration.Setting` raw values of ServiceConfiguration+Resolve.swift)
--url      optional: a running Ferry's base URL (e.g. http://127.0.0.1:8080); its GET /api/v1/openapi.json must be
           the document's bytes exactly. FERRY_TOKEN, when set, is sent as the bearer token.
All defaults are files of this repository; nothing outside it is read unless --url is given.

docs/API.md and the OpenAPI document must agree, in both directions: the endpoint table (every method and
path), the error-code table, the job-field table (and which fields may be null), the states table, the events
table, the create, change and list tables of the endpoint sections; the job example's fields are the table's.
The `ferry serve` flag table must list exactly the options ServeOptions.swift describes.

Needs the PyPI package `openapi-spec-validator` (pip install openapi-spec-validator).
Prints one line per check and "N passed, M failed"; exits 1 when any check fails, 2 when it cannot run.
"""

import argparse
import json
import os
import re
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_DOCUMENT = os.path.join(REPO, "Sources", "FerryService", "OpenAPI", "openapi.json")
SWIFT_DOCUMENT = os.path.join(REPO, "Sources", "FerryService", "OpenAPI", "OpenAPIDocument.swift")
PACKAGE = os.path.join(REPO, "Package.swift")
DEFAULT_API = os.path.join(REPO, "docs", "API.md")
DEFAULT_SERVE = os.path.join(REPO, "Sources", "FerryService", "Configuration", "ServeOptions.swift")
SETTINGS = os.path.join(REPO, "Sources", "FerryService", "Configuration", "ServiceConfiguration+Resolve.swift")

HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
OPERATION_IDS = [
    "createJobs", "listJobs", "getJob", "updateJob", "deleteJob", "pauseJob", "resumeJob", "cancelJob",
    "getJobContent", "headJobContent", "streamEvents", "streamJobEvents", "createSession", "getSession", "deleteSession",
    "purgeJobs", "getSettings", "updateSettings",
    "healthz", "readyz", "metrics", "openapi",
]
# AccessGuard.isPublic: /healthz, /readyz, /api/v1/session and everything outside /api/ and /metrics; but
# GET /api/v1/session authenticates the request itself (SessionController.show), so it needs a token.
UNAUTHENTICATED = [("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/"), ("POST", "/api/v1/session"),
                   ("DELETE", "/api/v1/session"),
                   # aria2's RPC: the secret travels inside each call (`"token:<secret>"`), judged per call.
                   ("POST", "/jsonrpc"), ("GET", "/jsonrpc")]
OPERATIONS_CONTROLLER = os.path.join(REPO, "Sources", "FerryService", "API", "OperationsController.swift")


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


def load_json_strict(text):
    """The JSON value of `text`; raises ValueError for a key repeated in one object (json.loads keeps the last)."""
    def no_duplicates(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise ValueError(f"key {key!r} appears twice in one object")
            seen[key] = value
        return seen
    return json.loads(text, object_pairs_hook=no_duplicates)


def embedding_problems(package_source, swift_source):
    """Why the binary would not serve openapi.json as it is: Package.swift must embed it in FerryService and
    OpenAPIDocument.swift must serve the embedded bytes. Empty when both hold."""
    problems = []
    target = re.search(r'\.target\(\s*name:\s*"FerryService".*?\)\s*,\s*\n', package_source, re.S)
    if not target or '.embedInCode("OpenAPI/openapi.json")' not in target.group(0):
        problems.append('Package.swift: the FerryService target does not declare `.embedInCode("OpenAPI/openapi.json")`')
    if not re.search(r"^enum OpenAPIDocument\s*\{", swift_source, re.M):
        problems.append("OpenAPIDocument.swift does not declare `enum OpenAPIDocument`")
    if not re.search(r"static let bytes: \[UInt8\] = PackageResources\.openapi_json\b", swift_source):
        problems.append("OpenAPIDocument.swift does not serve `PackageResources.openapi_json`")
    if '"""' in swift_source:
        problems.append("OpenAPIDocument.swift holds a multi-line string literal (the document belongs in openapi.json)")
    return problems


def served_document(base_url):
    """The bytes a running Ferry serves at /api/v1/openapi.json, or raises OSError."""
    import urllib.request
    request = urllib.request.Request(base_url.rstrip("/") + "/api/v1/openapi.json")
    if os.environ.get("FERRY_TOKEN"):
        request.add_header("Authorization", "Bearer " + os.environ["FERRY_TOKEN"])
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


# MARK: reading docs/API.md

def section(markdown, title, level=2):
    """The text under the heading `## title` (or `### title`) up to the next heading of that level or above."""
    marks = "#" * level
    m = re.search(r"^" + marks + r" " + re.escape(title) + r"\s*$(.*?)(?=^#{1," + str(level) + r"} |\Z)",
                  markdown, re.M | re.S)
    return m.group(1) if m else ""


def first_table(text):
    """The rows (lists of cell texts) of the first Markdown table in `text`, header and rule left out."""
    rows, started = [], False
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(cells)
        elif started:
            break
    body = rows[2:] if len(rows) >= 2 and set(rows[1][0]) <= set("-: ") else rows[1:]
    return body


def ticked(cell):
    """The backticked tokens of a table cell."""
    return re.findall(r"`([^`]+)`", cell)


def first_names(text):
    """The first backticked token of each row's first cell, in the first table of `text`."""
    names = []
    for row in first_table(text):
        tokens = ticked(row[0])
        if tokens:
            names.append(tokens[0])
    return names


def endpoints_from_api(markdown):
    """(METHOD, path) pairs from the first column of the table under `## Endpoints`."""
    found = []
    for row in first_table(section(markdown, "Endpoints")):
        methods, path = [], None
        for token in ticked(row[0]):
            for part in token.split():
                if part in HTTP_METHODS:
                    methods.append(part)
                elif part.startswith("/"):
                    path = part
        if path and methods:
            found.extend((m, path) for m in methods)
    return found


def error_codes_from_api(markdown):
    return first_names(section(markdown, "Errors"))


def job_fields_from_api(markdown):
    """[(field, nullable)] from the table under `## The job` (nullable: its type says `or null`)."""
    fields = []
    for row in first_table(section(markdown, "The job")):
        tokens = ticked(row[0])
        if tokens and len(row) > 1:
            fields.append((tokens[0], "null" in row[1]))
    return fields


def job_example_fields(markdown):
    """The top-level keys of the first JSON example under `## The job`, or None when it is not JSON."""
    m = re.search(r"```json\s*\n(.*?)```", section(markdown, "The job"), re.S)
    if not m:
        return None
    try:
        return list(json.loads(m.group(1)))
    except ValueError:
        return None


def serve_flags_from_swift(options, settings):
    """`--flag` names of the options `ServeOption.all` lists (`ServeOption(.setting, …)`), each the raw value of its
    `ServiceConfiguration.Setting` case (`case host, port` or `case objectStore = "object-store"`)."""
    enum = re.search(r"public enum Setting: String.*?\n    }\n", settings, re.S)
    raw = {}
    for line in (enum.group(0) if enum else "").splitlines():
        m = re.match(r"\s*case (\w+) = \"([^\"]+)\"\s*$", line)
        if m:
            raw[m.group(1)] = m.group(2)
            continue
        m = re.match(r"\s*case ([\w, ]+)$", line)
        if m:
            for name in m.group(1).split(","):
                raw[name.strip()] = name.strip()
    return ["--" + raw.get(name, name) for name in re.findall(r"ServeOption\(\.(\w+),", options)]


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
    parser.add_argument("--document", default=DEFAULT_DOCUMENT)
    parser.add_argument("--api", default=DEFAULT_API)
    parser.add_argument("--serve", default=DEFAULT_SERVE)
    parser.add_argument("--url", default=None)
    args = parser.parse_args()

    try:
        from openapi_spec_validator import validate as validate_spec
    except ImportError:
        print("openapi-spec-validator is not installed: pip install openapi-spec-validator", file=sys.stderr)
        return 2
    sources = {}
    for name, path in (("api", args.api), ("serve", args.serve), ("settings", SETTINGS), ("swift", SWIFT_DOCUMENT), ("package", PACKAGE),
                       ("operations", OPERATIONS_CONTROLLER)):
        try:
            with open(path, encoding="utf-8") as f:
                sources[name] = f.read()
        except OSError as e:
            print(f"cannot read {path}: {e}", file=sys.stderr)
            return 2
    try:
        with open(args.document, "rb") as f:
            document_bytes = f.read()
    except OSError as e:
        print(f"cannot read {args.document}: {e}", file=sys.stderr)
        return 2
    api_text = sources["api"]

    checks = Checks()
    print(f"document: {os.path.relpath(args.document, REPO)}")
    if args.document == DEFAULT_DOCUMENT:
        problems = embedding_problems(sources["package"], sources["swift"])
        checks.check(not problems, "the binary serves openapi.json as it is (embedded at build time)", "; ".join(problems))
    try:
        text = document_bytes.decode("utf-8")
    except UnicodeDecodeError as e:
        checks.check(False, "document is UTF-8", str(e))
        return finish(checks)
    checks.check(not text.startswith("\ufeff"), "document is UTF-8 without a byte-order mark")
    try:
        doc = load_json_strict(text)
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        checks.check(False, "document is JSON with no key repeated in an object", str(e))
        return finish(checks)
    checks.check(True, "document is JSON with no key repeated in an object")
    if args.url:
        try:
            status, content_type, served = served_document(args.url)
            checks.check(status == 200 and content_type.startswith("application/json"),
                         f"{args.url} serves the document as application/json", f"{status} {content_type}")
            checks.check(served == document_bytes, f"{args.url} serves the document's bytes exactly",
                         f"served {len(served)} bytes, the file has {len(document_bytes)}")
        except OSError as e:
            checks.check(False, f"{args.url}/api/v1/openapi.json answers", str(e))
    checks.check(doc.get("openapi") == "3.1.0", "openapi is 3.1.0", repr(doc.get("openapi")))
    try:
        validate_spec(doc)
        checks.check(True, "openapi-spec-validator accepts the document")
    except Exception as e:  # the validator raises several exception types
        checks.check(False, "openapi-spec-validator accepts the document", f"{type(e).__name__}: {e}")
        return finish(checks)

    # What docs/API.md says, table by table.
    print(f"reference: {os.path.relpath(args.api, REPO)}")
    endpoints = endpoints_from_api(api_text)
    codes = error_codes_from_api(api_text)
    job_table = job_fields_from_api(api_text)
    job_fields = [name for name, _ in job_table]
    nullable_fields = [name for name, nullable in job_table if nullable]
    states = first_names(section(api_text, "States and actions"))
    events = first_names(section(api_text, "Events"))
    create_fields = first_names(section(api_text, "Create jobs", level=3))
    patch_fields = first_names(section(api_text, "Change a job", level=3))
    list_parameters = first_names(section(api_text, "List jobs", level=3))
    serve_table = first_table(section(api_text, "ferry serve", level=3))
    checks.check(len(endpoints) >= 15, "endpoint table parsed from docs/API.md", f"only {len(endpoints)} found")
    checks.check(len(codes) >= 20, "error-code table parsed from docs/API.md", f"only {len(codes)} found")
    checks.check(len(job_fields) >= 15, "job-field table parsed from docs/API.md", f"only {len(job_fields)} found")
    checks.check(len(states) >= 6, "states table parsed from docs/API.md", f"only {len(states)} found")
    checks.check(len(events) >= 4, "events table parsed from docs/API.md", f"only {len(events)} found")
    checks.check(len(create_fields) >= 5 and len(patch_fields) >= 3 and len(list_parameters) >= 3,
                 "create, change and list tables parsed from docs/API.md",
                 f"{create_fields} {patch_fields} {list_parameters}")
    checks.check(len(serve_table) >= 10, "`ferry serve` flag table parsed from docs/API.md", f"only {len(serve_table)} rows")
    for what, names in (("endpoints", endpoints), ("error codes", codes), ("job fields", job_fields)):
        repeated = sorted({n for n in names if names.count(n) > 1}, key=str)
        checks.check(not repeated, f"docs/API.md lists no {what} twice", str(repeated))
    example = job_example_fields(api_text)
    checks.check(example is not None and example == job_fields,
                 "the job example in docs/API.md has the job table's fields, in its order",
                 f"example {example}, table {job_fields}")

    # Every endpoint of docs/API.md is described, and nothing more.
    wanted = list(dict.fromkeys(endpoints))
    for method, path in wanted:
        checks.check(operation(doc, method, path) is not None, f"{method} {path} is described")
    described = {(m.upper(), p) for p, item in doc["paths"].items() for m in item
                 if m.upper() in HTTP_METHODS}
    extra = sorted(described - set(wanted))
    checks.check(not extra, "no operation beyond docs/API.md's endpoint table", ", ".join(f"{m} {p}" for m, p in extra))

    # operationIds.
    ids = [op.get("operationId") for item in doc["paths"].values() for m, op in item.items()
           if m.upper() in HTTP_METHODS]
    checks.check(len(ids) == len(set(ids)) and None not in ids, "operationIds present and unique")
    missing_ids = [i for i in OPERATION_IDS if i not in ids]
    checks.check(not missing_ids, "expected operationIds present", ", ".join(missing_ids))

    schemas = doc["components"]["schemas"]
    # Error codes: exactly those of docs/API.md.
    enum = resolve(doc, schemas["ErrorCode"]).get("enum", [])
    checks.check(sorted(enum) == sorted(codes), "ErrorCode enum equals docs/API.md's codes",
                 f"missing in OpenAPI {sorted(set(codes) - set(enum))}, missing in docs {sorted(set(enum) - set(codes))}")
    detail = resolve(doc, resolve(doc, schemas["Error"])["properties"]["error"])
    checks.check(set(detail.get("required", [])) == {"code", "message"} and "httpStatus" in detail["properties"],
                 "Error is {error: {code, message, httpStatus?}}")

    # Job: every field of docs/API.md's job, all required, nullable ones (type "... or null") nullable, no `restarted`.
    job = schemas["Job"]
    props = job.get("properties", {})
    checks.check(sorted(props) == sorted(job_fields), "Job fields equal docs/API.md's job",
                 f"missing in OpenAPI {sorted(set(job_fields) - set(props))}, missing in docs {sorted(set(props) - set(job_fields))}")
    checks.check(sorted(job.get("required", [])) == sorted(job_fields), "every Job field is required",
                 f"not required: {sorted(set(job_fields) - set(job.get('required', [])))}")
    not_nullable = [f for f in nullable_fields if f in props and not allows_null(doc, props[f])]
    checks.check(not not_nullable, "Job fields docs/API.md says may be null allow null", ", ".join(not_nullable))
    nullable = [f for f in props if f not in nullable_fields and allows_null(doc, props[f])]
    checks.check(not nullable, "other Job fields do not allow null", ", ".join(nullable))
    checks.check(resolve(doc, props.get("state", {})).get("enum") == states, "Job state enum is docs/API.md's states",
                 f"OpenAPI {resolve(doc, props.get('state', {})).get('enum')}, docs {states}")
    checks.check("restarted" not in props, "`restarted` is not a Job field (events only)")

    # Events: the event names of the stream.
    event_enum = resolve(doc, schemas["ServerSentEvent"])["properties"]["event"].get("enum", [])
    checks.check(sorted(event_enum) == sorted(events), "ServerSentEvent names equal docs/API.md's events",
                 f"OpenAPI {event_enum}, docs {events}")

    # Requests.
    create = schemas["JobCreate"]
    checks.check(create.get("required") == ["url"], "JobCreate requires only url")
    checks.check(set(create["properties"]) == set(create_fields), "JobCreate fields are docs/API.md's",
                 f"missing in OpenAPI {sorted(set(create_fields) - set(create['properties']))}, "
                 f"missing in docs {sorted(set(create['properties']) - set(create_fields))}")
    connections = create["properties"]["connections"]
    checks.check(connections.get("minimum") == 1 and connections.get("maximum") == 16, "connections is 1-16")
    checks.check(create.get("additionalProperties") is not False, "JobCreate ignores unknown fields")
    patch = schemas["JobPatch"]["properties"]
    checks.check(set(patch) == set(patch_fields), "JobPatch fields are docs/API.md's",
                 f"OpenAPI {sorted(patch)}, docs {sorted(patch_fields)}")
    list_params = {resolve(doc, p)["name"] for p in operation(doc, "GET", "/api/v1/jobs").get("parameters", [])}
    checks.check(list_params == set(list_parameters), "GET /api/v1/jobs parameters are docs/API.md's",
                 f"OpenAPI {sorted(list_params)}, docs {sorted(list_parameters)}")

    # The command line: `ferry serve`'s flags are the table's, and each variable is named in the command.
    declared = serve_flags_from_swift(sources["serve"], sources["settings"])
    documented = [ticked(row[0])[0] for row in serve_table if ticked(row[0])]
    checks.check(len(declared) >= 10, "flags parsed from ServeOptions.swift", f"only {declared}")
    checks.check(sorted(declared) == sorted(documented), "`ferry serve` flags equal docs/API.md's table",
                 f"undocumented {sorted(set(declared) - set(documented))}, not in the command {sorted(set(documented) - set(declared))}")
    variables = [ticked(row[1])[0].split("=")[0] for row in serve_table if len(row) > 1 and ticked(row[1])]
    # `Setting.environmentName`: FERRY_ and the flag's name in capitals, or a name the enum spells out.
    derived = {"FERRY_" + flag[2:].upper().replace("-", "_") for flag in declared}
    unknown = [v for v in variables if v not in derived and not re.search(r'"' + re.escape(v) + r'"', sources["settings"])]
    checks.check(len(variables) == len(serve_table) and not unknown,
                 "every flag's variable in docs/API.md is the one its Setting names", ", ".join(unknown))

    body = resolve(doc, operation(doc, "POST", "/api/v1/jobs")["requestBody"])["content"]["application/json"]
    kinds = {resolve(doc, s).get("type") for s in body["schema"].get("oneOf", [])}
    checks.check(kinds == {"object", "array"}, "POST /api/v1/jobs takes an object or an array (oneOf)")
    job_list = schemas["JobList"]
    checks.check(set(job_list.get("required", [])) == {"jobs", "next"} and allows_null(doc, job_list["properties"]["next"]),
                 "JobList is {jobs, next (nullable)}")

    # Status codes.
    expect_statuses(checks, doc, "POST", "/api/v1/jobs", ["200", "201", "400", "401", "403", "409", "413", "415"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs", ["200", "401"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs/{id}", ["200", "404"])
    expect_statuses(checks, doc, "PATCH", "/api/v1/jobs/{id}", ["200", "400", "404", "409", "413", "415"])
    expect_statuses(checks, doc, "DELETE", "/api/v1/jobs/{id}", ["204", "404"])
    for action in ("pause", "resume", "cancel"):
        expect_statuses(checks, doc, "POST", f"/api/v1/jobs/{{id}}/{action}", ["200", "404", "409"])
    for method in ("GET", "HEAD"):
        expect_statuses(checks, doc, method, "/api/v1/jobs/{id}/content", ["200", "206", "304", "404", "409", "410", "416"])
    expect_statuses(checks, doc, "GET", "/api/v1/events", ["200"])
    expect_statuses(checks, doc, "GET", "/api/v1/jobs/{id}/events", ["200", "204", "404"])
    expect_statuses(checks, doc, "GET", "/readyz", ["200", "503"])
    expect_statuses(checks, doc, "POST", "/api/v1/session", ["204", "400", "401"])
    expect_statuses(checks, doc, "DELETE", "/api/v1/session", ["204", "503"])
    expect_statuses(checks, doc, "GET", "/api/v1/session", ["200", "401"])
    expect_statuses(checks, doc, "GET", "/api/v1/settings", ["200", "401", "403"])
    expect_statuses(checks, doc, "PATCH", "/api/v1/settings", ["200", "400", "401", "403", "413", "415", "503"])
    # 429: docs/API.md lists `rate_limited` as reserved (never sent); then no operation may promise it.
    rate_row = next((row for row in first_table(section(api_text, "Errors")) if ticked(row[0])[:1] == ["rate_limited"]), None)
    with_429 = [f"{m.upper()} {p}" for p, item in doc["paths"].items() for m, op in item.items()
                if m.upper() in HTTP_METHODS and "429" in op.get("responses", {})]
    if rate_row is not None and "never sent" in " ".join(rate_row):
        checks.check(not with_429, "no operation documents 429 (docs/API.md: `rate_limited` is never sent)", ", ".join(with_429))
        checks.check("rate_limited" in schemas["ErrorCode"]["enum"] and "never sent" in schemas["ErrorCode"].get("description", ""),
                     "ErrorCode keeps `rate_limited`, described as never sent")
    else:
        checks.check(bool(with_429), "docs/API.md sends `rate_limited`: some operation documents 429")
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
    expect_header(checks, doc, "DELETE", "/api/v1/session", "204", "Set-Cookie")
    for status in ("200", "201"):
        expect_header(checks, doc, "POST", "/api/v1/jobs", status, "Idempotent-Replayed")
    unauthorized = resolve(doc, doc["components"]["responses"]["Unauthorized"])
    checks.check("WWW-Authenticate" in unauthorized.get("headers", {}), "401 carries WWW-Authenticate")
    not_allowed = resolve(doc, doc["components"]["responses"]["MethodNotAllowed"])
    checks.check("Allow" in not_allowed.get("headers", {}), "405 carries Allow")
    content_get = operation(doc, "GET", "/api/v1/jobs/{id}/content")
    media = resolve(doc, content_get["responses"]["206"]).get("content", {})
    checks.check("multipart/byteranges" in media, "206 offers multipart/byteranges")
    params = {resolve(doc, p)["name"] for p in content_get.get("parameters", [])}
    checks.check({"follow", "Range", "If-Range", "If-None-Match", "If-Modified-Since"} <= params,
                 "content takes follow, Range, If-Range, If-None-Match, If-Modified-Since")
    head_params = {resolve(doc, p)["name"] for p in operation(doc, "HEAD", "/api/v1/jobs/{id}/content").get("parameters", [])}
    checks.check(head_params == params, "HEAD content takes the same parameters as GET", f"{sorted(head_params ^ params)}")
    create_params = {resolve(doc, p)["name"] for p in operation(doc, "POST", "/api/v1/jobs").get("parameters", [])}
    checks.check("Idempotency-Key" in create_params, "POST /api/v1/jobs takes Idempotency-Key")
    event_params = {resolve(doc, p)["name"] for p in operation(doc, "GET", "/api/v1/events").get("parameters", [])}
    checks.check({"jobs", "interval", "Last-Event-ID", "lastEventId"} <= event_params,
                 "GET /api/v1/events takes jobs, interval, Last-Event-ID, lastEventId")
    job_event_params = {resolve(doc, p)["name"] for p in operation(doc, "GET", "/api/v1/jobs/{id}/events").get("parameters", [])}
    checks.check({"interval", "Last-Event-ID", "lastEventId"} <= job_event_params,
                 "GET /api/v1/jobs/{id}/events takes interval, Last-Event-ID, lastEventId")
    # /readyz: the Readiness fields are those OperationsController.ready writes (the nested error's code and message aside).
    ready_source = re.search(r"func ready\(.*?(?=\n    func )", sources["operations"], re.S)
    written = set(re.findall(r'json\.(?:field|key)\("(\w+)"', ready_source.group(0))) - {"code", "message"} if ready_source else set()
    readiness = set(schemas["Readiness"]["properties"])
    checks.check(bool(written) and written == readiness, "Readiness fields are those /readyz writes (OperationsController.swift)",
                 f"written {sorted(written)}, described {sorted(readiness)}")

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
    expect("JobEvent", dict(job, restarted=True, restartReason="the origin ignored the range request"), True,
           "a job event with `restarted: true` and its reason is a JobEvent")
    expect("JobEvent", dict(job, restarted=True), False, "a job event with `restarted` but no `restartReason` is refused")
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
    expect("ProgressEvent", {"id": "a", "phase": "downloading", "bytesReceived": 5, "bytesExpected": None, "progress": None,
                             "speed": 0.0, "eta": None}, True, "a ProgressEvent without a known length is valid")
    # Onward delivery: the upload's progress, the job's delivery object, a failed delivery.
    upload = {"id": "a", "phase": "delivering", "bytesSent": 5, "bytesTotal": 10, "progress": 0.5, "speed": 2.0, "eta": 2.5}
    expect("ProgressEvent", upload, True, "a delivering ProgressEvent (bytesSent, bytesTotal) is valid")
    expect("ProgressEvent", {k: v for k, v in upload.items() if k != "bytesSent"}, False,
           "a delivering ProgressEvent without bytesSent is refused")
    expect("ProgressEvent", dict(upload, phase="uploading"), False, "an unknown phase is refused")
    delivery = dict(doc["components"]["schemas"]["Delivery"]["example"])
    expect("Job", dict(job, state="delivering", delivery=delivery), True, "a delivering job with its delivery is a Job")
    refused = dict(delivery, state="failed", httpStatus=403,
                   error={"code": "delivery_failed", "message": "The target answered 403.", "httpStatus": 403})
    expect("Job", dict(finished, state="failed", delivery=refused, error=refused["error"]), True,
           "a job failed with `delivery_failed` + httpStatus is a Job")
    expect("Job", dict(job, delivery=dict(delivery, state="uploading")), False, "an unknown delivery state is refused")
    # Mirrors: a job's sources, the main URL first; a dropped one carries its error.
    sources = [
        {"url": "https://origin.example/file.zip", "bytesReceived": 3145728, "state": "active", "error": None},
        {"url": "https://***@mirror.example/file.zip", "bytesReceived": 0, "state": "dropped",
         "error": {"code": "source_mismatch", "message": "the mirror's ETag differs"}},
    ]
    expect("Job", dict(finished, sources=sources), True, "a job with mirrors and a dropped source is a Job")
    expect("Job", dict(job, sources=[dict(sources[0], state="paused")]), False, "an unknown source state is refused")
    expect("JobCreate", {"url": "https://e/a", "deliver": {"url": "https://t/a", "method": "POST", "field": "file",
                                                          "fields": {"k": "v"}, "headers": {"Authorization": "x"},
                                                          "deleteAfter": True}}, True, "a JobCreate with a full deliver is valid")
    expect("JobCreate", {"url": "https://e/a", "deliver": {"url": "https://t/a", "method": "PATCH"}}, False,
           "a deliver method other than PUT or POST is refused")
    expect("JobCreate", {"url": "https://e/a", "deliver": {"method": "PUT"}}, False, "a deliver without url is refused")
    ready = {"status": "ok", "reasons": [], "freeBytes": 5_000_000_000, "spoolBytes": 1024, "minFreeSpace": 1 << 30}
    not_ready = dict(ready, status="unavailable", reasons=["the spool /s is not writable"], freeBytes=None,
                     error={"code": "unavailable", "message": "the spool /s is not writable"})
    expect("Readiness", ready, True, "a ready Readiness is valid")
    expect("Readiness", not_ready, True, "a not-ready Readiness with its error (and unknown free space) is valid")
    expect("Readiness", {k: v for k, v in not_ready.items() if k != "error"}, False, "a not-ready Readiness without error is refused")
    expect("Readiness", dict(ready, error=not_ready["error"]), False, "a ready Readiness with an error is refused")
    expect("Readiness", {"status": "unavailable", "reasons": ["x"]}, False, "a Readiness without the spool's numbers is refused")


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
