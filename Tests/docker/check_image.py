#!/usr/bin/env python3
"""Checks the Docker image's recipe without a Docker engine (none runs on our machines).

1. The Dockerfile's instructions: a Swift build stage and a slim Debian runtime stage; a non-root
   user; the spool as a volume; FERRY_HOST=0.0.0.0; EXPOSE of FERRY_PORT; a HEALTHCHECK that runs
   `ferry health` (which reads FERRY_HOST and FERRY_PORT as `ferry serve` does: no port written twice)
   with a deadline inside Docker's; no curl and no development packages at run time; the OCI labels;
   STOPSIGNAL SIGTERM; an exec-form ENTRYPOINT (ferry is PID 1 and gets signals itself). Also
   .dockerignore and compose.yaml (the volume; ferry.env optional, so `docker compose up` works
   without it). With a binary, that it has the `health` subcommand the HEALTHCHECK runs.
2. The runtime stage's packages provide every shared library `ldd` lists for the ferry binary:
   each library's Debian package must be in the dependency closure of the packages the runtime stage
   installs plus those of the base image (Essential packages and apt). Libraries of the Swift
   toolchain are linked statically into the image's binary (`--static-swift-stdlib`), so with a
   binary built without that flag they are reported and skipped.
3. The binary needs no file of the repository beside it: SwiftPM embeds the OpenAPI document in it
   (`.embedInCode`), so no `*.resources` bundle may sit beside the binary (the image and `make install`
   copy only the binary and Public/), .dockerignore must keep the document in the build context, and a
   copy of the binary alone, started in an empty directory, serves GET /api/v1/openapi.json with exactly
   the bytes of Sources/FerryService/OpenAPI/openapi.json.

Usage: check_image.py [--binary PATH]   (default: .build/release/ferry, else .build/debug/ferry)
Prints one line per check and a closing 'N passed, N failed'; exits 1 on any failure.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok    " if ok else "FAIL  ") + name + (f": {detail}" if detail else ""))


def instructions(path):
    """(keyword, argument text) pairs, continuation lines joined, comments dropped."""
    lines, current = [], ""
    for raw in open(path, encoding="utf-8"):
        line = raw.rstrip("\n")
        if not current and line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if current.strip():
            keyword, _, rest = current.strip().partition(" ")
            lines.append((keyword.upper(), rest.strip()))
        current = ""
    return lines


def stages(parsed):
    """Lists of instructions, one per FROM, with ARG defaults substituted into FROM."""
    args, out = {}, []
    for keyword, rest in parsed:
        if keyword == "ARG" and not out:
            name, _, default = rest.partition("=")
            args[name] = default
        if keyword == "FROM":
            rest = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), rest)
            out.append([(keyword, rest)])
        elif out:
            out[-1].append((keyword, rest))
    return out


def env_pairs(text):
    pairs = {}
    for token in shlex.split(text):
        if "=" in token:
            key, _, value = token.partition("=")
            pairs[key] = value
    return pairs


def check_dockerfile():
    parsed = instructions(os.path.join(ROOT, "Dockerfile"))
    all_stages = stages(parsed)
    check("multi-stage build", len(all_stages) >= 2, f"{len(all_stages)} stages")
    build, run = all_stages[0], all_stages[-1]
    check("build stage uses the official Swift image", build[0][1].split()[0].startswith("swift:"), build[0][1])
    check("runtime stage is slim Debian", re.match(r"debian:[\w.-]*slim", run[0][1]) is not None, run[0][1])
    build_cmds = " ".join(rest for k, rest in build if k == "RUN")
    check("release build with the Swift standard library linked statically",
          "-c release" in build_cmds and "--static-swift-stdlib" in build_cmds)
    kw = lambda k: [rest for key, rest in run if key == k]
    users = kw("USER")
    check("runs as a non-root user", bool(users) and users[-1] not in ("root", "0"), ", ".join(users))
    volumes = " ".join(kw("VOLUME"))
    check("/var/spool/ferry is a volume", "/var/spool/ferry" in volumes, volumes)
    env = {}
    for text in kw("ENV"):
        env.update(env_pairs(text))
    check("FERRY_HOST=0.0.0.0", env.get("FERRY_HOST") == "0.0.0.0", str(env.get("FERRY_HOST")))
    check("FERRY_SPOOL is the volume", env.get("FERRY_SPOOL") == "/var/spool/ferry", str(env.get("FERRY_SPOOL")))
    port = env.get("FERRY_PORT", "8080")
    exposed = " ".join(kw("EXPOSE")).split()
    check("EXPOSE matches FERRY_PORT", port in [p.split("/")[0] for p in exposed], f"port {port}, EXPOSE {exposed}")
    check_healthcheck(" ".join(kw("HEALTHCHECK")))
    check_labels(run)
    check("STOPSIGNAL SIGTERM", kw("STOPSIGNAL") == ["SIGTERM"], str(kw("STOPSIGNAL")))
    entry = kw("ENTRYPOINT")
    exec_form = False
    if entry:
        try:
            argv = json.loads(entry[-1])
            exec_form = isinstance(argv, list) and argv and not os.path.basename(argv[0]) in ("sh", "bash", "dash")
            exec_form = exec_form and argv[0].endswith("/ferry")
        except ValueError:
            pass
    check("ENTRYPOINT is ferry itself in exec form (signals reach it)", exec_form, str(entry))
    run_cmds = " ".join(rest for k, rest in run if k == "RUN")
    installed = runtime_packages(run_cmds)
    check("runtime stage installs no -dev packages", not any(p.endswith("-dev") for p in installed), " ".join(installed))
    check("runtime stage installs ca-certificates", "ca-certificates" in installed)
    check("runtime stage installs no curl (the health check is ferry's own)", "curl" not in installed,
          " ".join(installed))
    copies = [rest for k, rest in run if k == "COPY"]
    check("runtime stage copies the build stage's output", any("--from=build" in c for c in copies), str(copies))
    return installed


# What `ferry health` waits at most when not given --timeout (Sources/ferry/HealthCommand.swift).
FERRY_HEALTH_DEFAULT_TIMEOUT = 2.0

# The OCI image annotations the runtime stage must carry; those in NON_EMPTY_LABELS need a value even when no
# build argument is given (source and revision may come from the release build's --build-arg).
REQUIRED_LABELS = ["title", "description", "version", "source", "licenses"]
NON_EMPTY_LABELS = ["title", "description", "version", "licenses"]


def seconds(text):
    """Docker's and ferry's durations as used here: '3s', '500ms', '1m', '1m30s'; None for anything else."""
    if not text or not re.fullmatch(r"(\d+(\.\d+)?(ms|s|m|h))+", text):
        return None
    factor = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * factor[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ms|s|m|h)", text))


def check_healthcheck(text):
    """HEALTHCHECK [--option=value ...] CMD ["/usr/local/bin/ferry", "health", ...]."""
    options, _, command = text.partition("CMD")
    argv = None
    try:
        argv = json.loads(command.strip())
    except ValueError:
        pass
    exec_form = isinstance(argv, list) and len(argv) >= 2 and all(isinstance(a, str) for a in argv)
    runs_health = exec_form and argv[0].endswith("/ferry") and argv[1] == "health"
    check("HEALTHCHECK runs `ferry health` in exec form", runs_health, text)
    if not runs_health:
        return
    fixed = [a for a in argv[2:] if a in ("--host", "--port") or a.startswith(("--host=", "--port="))
             or re.search(r":\d+", a)]
    check("HEALTHCHECK names no host or port (ferry health reads FERRY_HOST and FERRY_PORT)", not fixed, str(argv))
    docker = dict(re.findall(r"--([\w-]+)=(\S+)", options))
    probe = FERRY_HEALTH_DEFAULT_TIMEOUT
    if "--timeout" in argv[2:-1]:
        probe = seconds(argv[argv.index("--timeout") + 1])
    limit = seconds(docker.get("timeout", "30s"))
    check("ferry health gives up before Docker's HEALTHCHECK timeout",
          probe is not None and limit is not None and probe < limit, f"ferry {probe} s, Docker {limit} s")


def check_labels(run):
    """The OCI labels of the runtime stage, ${ARG} references resolved to the stage's ARG defaults."""
    args, labels = {}, {}
    for keyword, rest in run:
        if keyword == "ARG":
            name, _, default = rest.partition("=")
            args[name.strip()] = default.strip().strip('"')
        if keyword == "LABEL":
            labels.update(env_pairs(rest))
    resolved = {key: re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), ""), value)
                for key, value in labels.items()}
    for name in REQUIRED_LABELS:
        key = "org.opencontainers.image." + name
        present = key in labels
        ok = present and (name not in NON_EMPTY_LABELS or bool(resolved[key].strip()))
        detail = f"{labels[key]!r} → {resolved[key]!r}" if present else "missing"
        check(f"LABEL {key}", ok, detail)
    version = labels.get("org.opencontainers.image.version", "")
    check("the version label comes from a build argument", "$" in version, version)


def runtime_packages(run_cmds):
    packages = []
    for match in re.finditer(r"apt-get install ([^&;|]*)", run_cmds):
        packages += [w for w in match.group(1).split() if not w.startswith("-")]
    return packages


def check_side_files():
    ignore = open(os.path.join(ROOT, ".dockerignore")).read().split()
    for entry in (".build", ".git", "spool"):
        check(f".dockerignore leaves out {entry}", entry in ignore)
    compose = open(os.path.join(ROOT, "compose.yaml")).read()
    check("compose.yaml mounts a volume on /var/spool/ferry", re.search(r"-\s*[\w-]+:/var/spool/ferry", compose) is not None)
    check("compose.yaml takes the token from an environment file", "env_file" in compose)
    entries = compose_env_files(compose)
    check_cluster_profile()
    check("compose.yaml's ferry.env is optional (required: false)",
          any(e.get("path") == "ferry.env" for e in entries)
          and all(e.get("required") == "false" for e in entries if e.get("path") == "ferry.env"), str(entries))


def check_cluster_profile():
    """compose.yaml's `cluster` profile: PostgreSQL, an S3 gateway, three nodes sharing the store, the object store
    and ferry.env (token, webhook secret) with a node id and a staging volume each, and one port in front."""
    import yaml  # python3-yaml (installed by .ci/run and scripts/ensure-deps.sh)
    compose = yaml.safe_load(open(os.path.join(ROOT, "compose.yaml")))
    services = compose.get("services", {})
    cluster = {name: s for name, s in services.items() if "cluster" in (s.get("profiles") or [])}
    check("the default `docker compose up` starts only ferry", [n for n, s in services.items() if not s.get("profiles")] == ["ferry"],
          sorted(services))
    check("the cluster profile has PostgreSQL and an S3 gateway", "postgres" in cluster and "seaweedfs" in cluster, sorted(cluster))
    nodes = {name: s for name, s in cluster.items() if "FERRY_NODE_ID" in (s.get("environment") or {})}
    check("the cluster profile runs three Ferry nodes", len(nodes) == 3, sorted(nodes))
    envs = [n["environment"] for n in nodes.values()]
    check("every node has its own node id", len({e["FERRY_NODE_ID"] for e in envs}) == len(envs), [e["FERRY_NODE_ID"] for e in envs])
    for key in ("FERRY_STORE", "FERRY_OBJECT_STORE"):
        values = {e.get(key) for e in envs}
        check(f"every node shares {key}", len(values) == 1 and None not in values, values)
    check("the store is PostgreSQL and the object store S3",
          envs[0]["FERRY_STORE"].startswith("postgres://") and envs[0]["FERRY_OBJECT_STORE"].startswith("s3://"), envs[0])
    check("every node reads ferry.env (the shared token and webhook secret)",
          all(any(e.get("path") == "ferry.env" for e in (n.get("env_file") or [])) for n in nodes.values()))
    spools = [v for n in nodes.values() for v in n.get("volumes", []) if str(v).endswith(":/var/spool/ferry")]
    check("every node stages in a volume of its own", len(set(spools)) == len(nodes), spools)
    gateway = compose.get("configs", {}).get("gateway", {}).get("content", "")
    check("one port in front of the nodes, not buffering event streams",
          all(f"server {n}:8080" in gateway for n in nodes) and "proxy_buffering off" in gateway)


def compose_env_files(text):
    """The env_file entries of compose.yaml as dicts: {"path": ..., "required": ...}; the short form (a bare
    path, or a list of them) is an entry without "required", which Compose treats as required. Reads the one
    key by its indentation (no YAML library needed)."""
    lines = text.splitlines()
    entries = []
    for index, line in enumerate(lines):
        match = re.match(r"^(\s*)env_file:\s*(.*?)\s*(#.*)?$", line)
        if not match:
            continue
        indent, inline = len(match.group(1)), match.group(2)
        if inline:
            for path in inline.strip("[]").split(","):
                entries.append({"path": path.strip().strip("'\"")})
            continue
        for item in lines[index + 1:]:
            if item.strip() and (len(item) - len(item.lstrip())) <= indent:
                break
            body = item.strip()
            if not body or body.startswith("#"):
                continue
            if body.startswith("- "):
                body = body[2:].strip()
                if ":" not in body:
                    entries.append({"path": body.strip("'\"")})
                    continue
                entries.append({})
            key, _, value = body.partition(":")
            if entries:
                entries[-1][key.strip()] = value.split("#")[0].strip().strip("'\"").lower() \
                    if key.strip() == "required" else value.split("#")[0].strip().strip("'\"")
    return entries


def dependency_closure(packages):
    command = ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
               "--no-breaks", "--no-replaces", "--no-enhances", "--no-pre-depends"] + packages
    out = subprocess.run(command, capture_output=True, text=True).stdout
    pre = subprocess.run(command[:-len(packages)] + packages, capture_output=True, text=True).stdout
    names = set(packages)
    for line in (out + pre).splitlines():
        line = line.strip()
        if not line.startswith(("Depends:", "PreDepends:")) and line and not line.startswith(("|", "<")):
            names.add(line.split(":")[0] if line.endswith(":amd64") else line)
        elif line.startswith(("Depends:", "PreDepends:")):
            name = line.split(":", 1)[1].strip().strip("<>")
            names.add(name.split(":")[0])
    return names


def base_image_packages():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Essential}\n"], capture_output=True, text=True).stdout
    essential = [line.split()[0] for line in out.splitlines() if line.endswith(" yes")]
    return essential + ["apt"]


def swift_toolchain_lib():
    swift = subprocess.run(["bash", "-c", "command -v swift"], capture_output=True, text=True).stdout.strip()
    if not swift:
        return None
    return os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(swift)), "..", "lib"))


def check_libraries(binary, installed):
    if not os.path.exists(binary):
        check(f"binary {binary} exists (build it first)", False)
        return
    health = subprocess.run([binary, "health", "--help"], capture_output=True, text=True)
    check("the binary has the `health` subcommand the HEALTHCHECK runs",
          health.returncode == 0 and "FERRY_PORT" in health.stdout,
          ((health.stdout + health.stderr).strip().splitlines() or [""])[0])
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    toolchain = swift_toolchain_lib()
    provided = dependency_closure(installed + base_image_packages())
    skipped = []
    for line in out.splitlines():
        match = re.search(r"=>\s*(\S+)", line) or re.match(r"\s*(/\S+)", line)
        if not match or match.group(1) == "not":
            if "not found" in line:
                check(f"library resolves: {line.strip()}", False)
            continue
        path = os.path.realpath(match.group(1))
        if toolchain and path.startswith(toolchain):
            skipped.append(os.path.basename(path))
            continue
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if owner.returncode != 0:
            # Merged /usr: dpkg may know the library under /lib rather than /usr/lib.
            alt = path.replace("/usr/lib/", "/lib/", 1)
            owner = subprocess.run(["dpkg", "-S", alt], capture_output=True, text=True)
        package = owner.stdout.split(":")[0].strip() if owner.returncode == 0 else None
        check(f"{os.path.basename(path)} is provided at run time",
              package is not None and package in provided, f"package {package}")
    if skipped:
        print(f"note  {len(skipped)} Swift runtime libraries are linked statically in the image "
              f"(--static-swift-stdlib): {' '.join(sorted(skipped))}")


OPENAPI_DOCUMENT = os.path.join("Sources", "FerryService", "OpenAPI", "openapi.json")


def check_self_contained(binary):
    """The binary carries what it serves: no resource bundle beside it, and the OpenAPI document embedded."""
    if not os.path.exists(binary):
        return
    bundles = sorted(n for n in os.listdir(os.path.dirname(os.path.abspath(binary))) if n.endswith(".resources"))
    check("no SwiftPM resource bundle beside the binary (the image and make install copy only the binary and Public/)",
          not bundles, "" if not bundles else "found " + ", ".join(bundles) + ": copy it beside /usr/local/bin/ferry "
          "in the Dockerfile and beside $(PREFIX)/bin/ferry in make install, or embed the resource (.embedInCode)")
    ignore = [e.strip() for e in open(os.path.join(ROOT, ".dockerignore")).read().split()]
    hidden = [e for e in ignore if e in ("Sources", "Sources/FerryService", "*.json", "**/*.json", OPENAPI_DOCUMENT)]
    check(".dockerignore keeps the OpenAPI document in the build context", not hidden, " ".join(hidden))
    with open(os.path.join(ROOT, OPENAPI_DOCUMENT), "rb") as f:
        expected = f.read()
    served, detail = serve_openapi_from_copy(binary)
    check("a copy of the binary alone in an empty directory serves openapi.json byte for byte",
          served == expected, detail or ("" if served == expected else
                                          f"served {len(served or b'')} bytes, the file has {len(expected)}"))


def serve_openapi_from_copy(binary):
    """Copies the binary into an empty directory, runs `ferry serve` there on a free loopback port and returns
    (the bytes of GET /api/v1/openapi.json, None) or (None, why not). The server is stopped by its pid."""
    with tempfile.TemporaryDirectory(prefix="ferry-image-check.") as directory:
        copy = os.path.join(directory, "bin", "ferry")
        os.makedirs(os.path.dirname(copy))
        shutil.copy2(binary, copy)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {"PATH": "/usr/bin:/bin", "HOME": directory}
        log = open(os.path.join(directory, "serve.log"), "wb")
        server = subprocess.Popen([copy, "serve", "--host", "127.0.0.1", "--port", str(port), "--spool",
                                   os.path.join(directory, "spool"), "--min-free-space", "0"],
                                  cwd=directory, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    with opener.open(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=5) as response:
                        return response.read(), None
                except OSError:
                    time.sleep(0.1)
            return None, "ferry serve did not answer: " + open(os.path.join(directory, "serve.log"),
                                                             errors="replace").read()[-500:].strip()
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    args = parser.parse_args()
    binary = args.binary or next((p for p in (os.path.join(ROOT, ".build/release/ferry"),
                                              os.path.join(ROOT, ".build/debug/ferry")) if os.path.exists(p)),
                                 os.path.join(ROOT, ".build/debug/ferry"))
    installed = check_dockerfile()
    check_side_files()
    check_libraries(binary, installed)
    check_self_contained(binary)
    failed = results.count(False)
    print(f"{results.count(True)} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
