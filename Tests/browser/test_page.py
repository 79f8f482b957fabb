#!/usr/bin/env python3
"""Ferry's browser page in a real headless Chromium.

Starts its own nginx origin (generated files, one served slowly with `limit_rate`) and Ferry, both
on 127.0.0.1 with free ports and everything in one temporary directory, then drives Public/ the
way a person would: log in with the token, add downloads (one URL and a pasted batch), watch the
progress bar grow, pause and resume, download the finished file and compare its SHA-256, see a
404 fail with its message, delete a job, filter, survive a server restart without losing or
duplicating rows, log out; log in again with the read-only token (--read-token) and find nothing that
changes state. A second Ferry without a token checks open mode (no login), the settings control
(the speed limit over all downloads and how many run at once), and tags and search (the tag chip
filter, the search box, tags from the add form). Onward delivery, on the second Ferry: the same nginx takes
uploads (WebDAV PUT under /upload/, always 403 under /refuse/, 403 under /gate/ until a file opens it): a job's
upload bar appears under its download bar and reaches 100% with the file byte-identical at the target; a
refusing target shows the failure and a Retry delivery button, which delivers once the target accepts; the add
form's "deliver to" field; a delivered job with deleteAfter loses its Download button (410); and with the
read-only token a failed delivery shows its message but no retry button.

Environment:
  FERRY_BIN        the ferry executable (default: .build/debug/ferry under the repository root)
  SCREENSHOT_DIR   where screenshots go (default: /tmp/ferry-page-shots)
  CHROMIUM_BIN     default /usr/bin/chromium;  CHROMEDRIVER_BIN  default /usr/bin/chromedriver
  KEEP_TMP=1       keep the temporary directory (logs, configs) for a look afterwards
  PUBLIC_DIR       the page's directory (default: Public/ of the repository), e.g. to try an older page

Ends with the line `N passed, N failed` and exits non-zero when anything failed.
Traffic goes only to 127.0.0.1: Chromium resolves no other name.
"""

import atexit
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FERRY_BIN = os.environ.get("FERRY_BIN") or str(REPO / ".build" / "debug" / "ferry")
if not os.path.isabs(FERRY_BIN):
    FERRY_BIN = str(REPO / FERRY_BIN)
PUBLIC = os.environ.get("PUBLIC_DIR") or str(REPO / "Public")
SCREENSHOT_DIR = Path(os.environ.get("SCREENSHOT_DIR") or "/tmp/ferry-page-shots")
CHROMIUM = os.environ.get("CHROMIUM_BIN") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("CHROMEDRIVER_BIN") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
TOKEN = "browser-test-token-" + os.urandom(6).hex()
READ_TOKEN = "browser-read-token-" + os.urandom(6).hex()

STARTED = time.monotonic()
PROCESSES = []  # every Popen we started, stopped by pid at exit
TMP = None
DRIVER = None


def log(message):
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", flush=True)


# MARK: results

class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + (f": {detail}" if detail else ""), flush=True)
        return ok


RESULTS = Results()


class StepFailed(Exception):
    pass


def require(name, ok, detail=""):
    """A check later steps depend on: a failure stops the scenario."""
    if not RESULTS.check(name, ok, detail):
        raise StepFailed(name)


# MARK: processes

def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, log_path, **kwargs):
    out = open(log_path, "ab")
    process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True, **kwargs)
    out.close()
    PROCESSES.append(process)
    return process


def stop(process, sig=signal.SIGTERM, timeout=10):
    """Stops one process we started, by its pid (and its own process group, which it leads)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        return
    except PermissionError:
        process.send_signal(sig)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=5)


def cleanup():
    global DRIVER
    if DRIVER is not None:
        try:
            DRIVER.quit()
        except Exception:
            pass
        DRIVER = None
    while PROCESSES:
        stop(PROCESSES.pop())
    if TMP and os.path.isdir(TMP) and os.environ.get("KEEP_TMP") != "1":
        shutil.rmtree(TMP, ignore_errors=True)


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


atexit.register(cleanup)
signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)


def wait_http(url, timeout=15, process=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as error:
            if error.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


# MARK: the origin (nginx)

class Origin:
    SLOW_RATE = "1200k"     # ~6 MB in about 5 s: progress is visible
    SLOWER_RATE = "400k"    # long enough to pause and resume mid-way

    def __init__(self, root):
        self.root = Path(root) / "origin"
        self.www = self.root / "www"
        for sub in ("www/slow", "www/slower", "logs", "temp"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.files = {
            "/slow/big.bin": os.urandom(6 * 1024 * 1024 + 12345),
            "/slower/big2.bin": os.urandom(6 * 1024 * 1024),
            "/small.txt": b"Ferry browser test: a small file.\n" * 40,
            "/small2.txt": b"Another small file for open mode.\n" * 30,
            "/small3.txt": b"A file whose digest will not match.\n" * 10,
        }
        for path, data in self.files.items():
            (self.www / path.lstrip("/")).write_bytes(data)
        # nginx workers may run as another user: let them read the tree.
        for directory, _, names in os.walk(self.root):
            os.chmod(directory, 0o755)
            for name in names:
                os.chmod(os.path.join(directory, name), 0o644)
        os.chmod(root, 0o755)
        self.port = free_port()
        self.conf = self.root / "nginx.conf"
        user = "user root root;" if os.geteuid() == 0 else ""
        temp = self.root / "temp"
        self.conf.write_text(f"""
{user}
worker_processes 1;
daemon off;
pid {self.root}/nginx.pid;
error_log {self.root}/logs/error.log warn;
events {{ worker_connections 128; }}
http {{
    access_log {self.root}/logs/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    types {{ application/octet-stream bin; text/plain txt; }}
    default_type application/octet-stream;
    sendfile on;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.www};
        location /slow/ {{ limit_rate {self.SLOW_RATE}; }}
        location /slower/ {{ limit_rate {self.SLOWER_RATE}; }}
        # Upload targets for onward delivery (nginx-light's DAV module).
        location /upload/ {{ dav_methods PUT; create_full_put_path on; client_max_body_size 0; }}
        location /refuse/ {{ return 403; }}
        location /gate/ {{
            if (!-f {self.www}/gate-open) {{ return 403; }}
            dav_methods PUT; create_full_put_path on; client_max_body_size 0;
        }}
    }}
}}
""")
        self.process = None

    def start(self):
        self.process = start(["nginx", "-p", str(self.root), "-c", str(self.conf), "-e", str(self.root / "logs" / "error.log")],
                             self.root / "logs" / "stdout.log")
        wait_http(self.url("/small.txt"), process=self.process)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def sha256(self, path):
        return hashlib.sha256(self.files[path]).hexdigest()


# MARK: Ferry

class Ferry:
    def __init__(self, root, name, token, read_token=None):
        self.dir = Path(root) / name
        self.spool = self.dir / "spool"
        self.spool.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / "ferry.log"
        self.token = token
        self.read_token = read_token
        self.port = free_port()
        self.process = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        args = [FERRY_BIN, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--spool", str(self.spool),
                "--allow-private-networks", "--min-free-space", "0", "--public", PUBLIC]
        if self.token:
            args += ["--token", self.token]
        if self.read_token:
            args += ["--read-token", self.read_token]
        self.process = start(args, self.log)
        wait_http(self.base + "/healthz", process=self.process)

    def stop(self):
        if self.process is not None:
            stop(self.process)
            if self.process in PROCESSES:
                PROCESSES.remove(self.process)
            self.process = None

    def api(self, method, path, body=None):
        """(status, parsed JSON or None) with the bearer token."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + "/api/v1" + path, data=data, method=method)
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw) if raw else None
            except ValueError:
                return error.code, None

    def jobs(self):
        status, body = self.api("GET", "/jobs?limit=1000")
        assert status == 200, (status, body)
        return body["jobs"]

    def tail(self, lines=30):
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# MARK: the browser

def make_driver(profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
        "--window-size=1280,1000", f"--user-data-dir={profile}",
        "--no-first-run", "--no-default-browser-check", "--disable-default-apps", "--disable-extensions",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
        "--no-pings", "--disable-breakpad", "--password-store=basic", "--use-mock-keychain",
        "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
        "AutofillServerCommunication,CertificateTransparencyComponentUpdater,PasswordLeakDetection",
        # Only loopback: every host name fails to resolve, so nothing leaves the machine.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--proxy-server=direct://", "--proxy-bypass-list=*",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=str(Path(profile).parent / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_script_timeout(30)
    return driver


ROW_INFO_JS = r"""
const url = arguments[0];
for (const li of document.querySelectorAll('#jobs > li')) {
  const name = li.querySelector('.name');
  if (name.title !== url) continue;
  const progress = li.querySelector('progress');
  const shown = (sel) => { const e = li.querySelector(sel); return e && !e.hidden ? e : null; };
  const error = shown('.job-error');
  const link = shown('[data-action=download]');
  return {
    id: li.dataset.id, state: li.dataset.state, visible: !li.hidden,
    badge: li.querySelector('.badge').textContent, name: name.textContent,
    host: li.querySelector('.host').textContent,
    hasValue: progress.hasAttribute('value'), value: progress.hasAttribute('value') ? progress.value : null,
    progressText: progress.textContent,
    bytes: li.querySelector('.bytes').textContent,
    speed: shown('.speed') ? shown('.speed').textContent : '',
    eta: shown('.eta') ? shown('.eta').textContent : '',
    error: error ? error.textContent : null,
    href: link ? link.getAttribute('href') : null,
    pause: !!shown('[data-action=pause]'), resume: !!shown('[data-action=resume]'),
    cancel: !!shown('[data-action=cancel]'), del: !!shown('[data-action=delete]'),
  };
}
return null;
"""

FETCH_SHA_JS = r"""
const [href, done] = arguments;
fetch(href, {credentials: 'same-origin'}).then(async (r) => {
  const buffer = await r.arrayBuffer();
  const digest = await crypto.subtle.digest('SHA-256', buffer);
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
  done({status: r.status, hex, length: buffer.byteLength, disposition: r.headers.get('Content-Disposition')});
}).catch((e) => done({error: String(e)}));
"""

LIST_IDS_JS = "return Array.from(document.querySelectorAll('#jobs > li'), (li) => li.dataset.id);"

# Injected before the page's own script (CDP Page.addScriptToEvaluateOnNewDocument): holds back the page's
# list request (GET /api/v1/jobs?limit=500) until window.__ferryReleaseList() is called, as a slow link would.
HOLD_LIST_JS = r"""
(() => {
  const original = window.fetch.bind(window);
  let release;
  const gate = new Promise((resolve) => { release = resolve; });
  window.__ferryListHeld = 0;
  window.__ferryReleaseList = () => release();
  window.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input.url;
    if (url.includes('/api/v1/jobs?') && url.includes('limit=500')) {
      window.__ferryListHeld++;
      return gate.then(() => original(input, init));
    }
    return original(input, init);
  };
})();
"""


class Page:
    def __init__(self, driver):
        self.d = driver

    def open(self, url):
        self.d.get(url)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def visible(self, element_id):
        return self.js("const e = document.getElementById(arguments[0]); return !!e && !e.hidden && e.offsetParent !== null;",
                       element_id)

    def text(self, element_id):
        return self.js("const e = document.getElementById(arguments[0]); return e ? e.textContent : null;", element_id)

    def row(self, url):
        return self.js(ROW_INFO_JS, url)

    def visible_ids(self):
        return self.js(VISIBLE_IDS_JS)

    def wait(self, what, condition, timeout=20, interval=0.1):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                last = condition()
                if last:
                    return last
            except Exception as error:  # a stale element, a page still loading
                last = error
            time.sleep(interval)
        raise StepFailed(f"timed out after {timeout}s waiting for {what} (last: {last!r})")

    def wait_row(self, url, what, predicate, timeout=20):
        def condition():
            info = self.row(url)
            return info if info and predicate(info) else None
        try:
            return self.wait(what, condition, timeout)
        except StepFailed as error:
            raise StepFailed(f"{error}; row now: {self.row(url)!r}")

    def fill(self, element_id, value):
        from selenium.webdriver.common.by import By
        element = self.d.find_element(By.ID, element_id)
        element.clear()
        element.send_keys(value)
        return element

    def click(self, css):
        from selenium.webdriver.common.by import By
        element = self.d.find_element(By.CSS_SELECTOR, css)
        element.click()
        return element

    def action(self, job_id, action):
        return self.click(f'#jobs > li[data-id="{job_id}"] [data-action="{action}"]')

    def fetch_sha(self, href):
        return self.d.execute_async_script(FETCH_SHA_JS, href)

    def screenshot(self, name, width=None):
        """The whole page (the window grows to the document's height for the shot)."""
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOT_DIR / name
        size = self.d.get_window_size()
        width = width or size["width"]
        self.d.set_window_size(width, 800)
        height = self.js("return Math.ceil(document.documentElement.scrollHeight)")
        self.d.set_window_size(width, min(max(height + 140, 600), 6000))
        time.sleep(0.3)
        self.d.save_screenshot(str(path))
        self.d.set_window_size(size["width"], size["height"])
        print(f"screenshot: {path}", flush=True)
        return path

    def console_errors(self):
        """SEVERE console entries other than failed resource loads (expected 401/404/400 answers)."""
        try:
            entries = self.d.get_log("browser")
        except Exception:
            return []
        return [e["message"] for e in entries
                if e.get("level") == "SEVERE" and "Failed to load resource" not in e.get("message", "")]


# MARK: scenarios

def token_mode(page, origin, ferry):
    big, big2, small, missing = (origin.url("/slow/big.bin"), origin.url("/slower/big2.bin"),
                                 origin.url("/small.txt"), origin.url("/missing.bin"))

    page.open(ferry.base + "/")
    page.wait("the login form", lambda: page.visible("login"))
    require("token mode: login form shown, list hidden", page.visible("login") and not page.visible("app"))
    page.screenshot("ferry-page-login.png")

    page.fill("token", "not-the-token")
    page.click("#login-form button[type=submit]")
    page.wait("the login error", lambda: page.visible("login-error"))
    RESULTS.check("token mode: a wrong token is refused with a message",
                  "not valid" in (page.text("login-error") or ""), page.text("login-error"))

    page.fill("token", ferry.token)
    page.click("#login-form button[type=submit]")
    page.wait("the app after logging in", lambda: page.visible("app"))
    require("token mode: logging in shows the app and a logout button",
            page.visible("app") and page.visible("logout") and not page.visible("login"))
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")
    RESULTS.check("event stream connected (status shows Live)", page.text("connection-text") == "Live", page.text("connection-text"))

    # An API error is shown as the API words it.
    page.fill("url", "this is not a url")
    page.click("#add-form button[type=submit]")
    page.wait("the add error", lambda: page.visible("add-error"))
    status, body = ferry.api("POST", "/jobs", {"url": "this is not a url"})
    RESULTS.check("an invalid URL shows the API's error message",
                  status == 400 and page.text("add-error") == body["error"]["message"],
                  f"page: {page.text('add-error')!r}, api: {status} {body}")

    # One URL through the form; watch the bar grow.
    page.fill("url", big)
    page.click("#add-form button[type=submit]")
    info = page.wait_row(big, "the new row", lambda r: True, timeout=10)
    RESULTS.check("the new job's row appears with the URL's last segment and host",
                  info["name"] == "big.bin" and info["host"] == f"127.0.0.1:{origin.port}", info)
    values, saw_speed, saw_eta, saw_bytes = [], False, False, False
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        info = page.row(big)
        if info["state"] == "downloading" and info["hasValue"]:
            if not values or info["value"] != values[-1]:
                values.append(info["value"])
            saw_speed |= info["speed"].endswith("/s") and not info["speed"].startswith("0 B")
            saw_eta |= info["eta"].endswith("left")
            saw_bytes |= " of " in info["bytes"] and "MiB" in info["bytes"]
        if info["state"] == "finished":
            break
        time.sleep(0.15)
    RESULTS.check("the progress bar value increases while downloading",
                  len([v for v in values if 0 < v < 1]) >= 3 and all(b >= a for a, b in zip(values, values[1:])),
                  f"values seen: {values}")
    RESULTS.check("speed, ETA and bytes received/expected are shown while downloading",
                  saw_speed and saw_eta and saw_bytes, f"speed={saw_speed} eta={saw_eta} bytes={saw_bytes}")
    info = page.wait_row(big, "state finished", lambda r: r["state"] == "finished", timeout=30)
    RESULTS.check("the job reaches finished: badge, full bar, download link",
                  info["badge"] == "Finished" and info["value"] == 1 and info["href"] == f"/api/v1/jobs/{info['id']}/content"
                  and not info["pause"] and not info["resume"], info)

    got = page.fetch_sha(info["href"])
    RESULTS.check("the download link fetches the right bytes (SHA-256)",
                  got.get("status") == 200 and got.get("hex") == origin.sha256("/slow/big.bin"),
                  f"{got} expected {origin.sha256('/slow/big.bin')}")
    RESULTS.check("the download is offered as an attachment", "attachment" in (got.get("disposition") or ""), got)

    # A pasted batch: a slow file, a small one, a 404, and one the API refuses.
    page.click("#batch summary")
    page.fill("batch-urls", "\n".join([big2, small, "", missing, "gopher://127.0.0.1/nope"]))
    page.click("#batch-form button[type=submit]")
    page.wait("the batch's rows", lambda: page.row(big2) and page.row(small) and page.row(missing))
    RESULTS.check("a pasted batch adds one row per accepted URL", True)
    page.wait("the refused line", lambda: page.visible("batch-error"))
    RESULTS.check("a refused batch line is listed with the API's message and kept in the box",
                  "gopher://127.0.0.1/nope" in page.text("batch-error") and "1 of 4" in page.text("batch-error")
                  and page.js("return document.getElementById('batch-urls').value") == "gopher://127.0.0.1/nope",
                  page.text("batch-error"))

    info = page.wait_row(small, "small file finished", lambda r: r["state"] == "finished", timeout=20)
    got = page.fetch_sha(info["href"])
    RESULTS.check("the small file downloads with the right bytes",
                  got.get("hex") == origin.sha256("/small.txt"), got)

    # 404 → failed with its message.
    info = page.wait_row(missing, "the 404 job failed", lambda r: r["state"] == "failed", timeout=30)
    status, job = ferry.api("GET", f"/jobs/{info['id']}")
    api_message = (job.get("error") or {}).get("message", "")
    RESULTS.check("a 404 origin: failed badge and the job's error message on the page",
                  info["badge"] == "Failed" and info["error"] and api_message and api_message in info["error"]
                  and "404" in info["error"] and info["resume"] and info["href"] is None,
                  f"row: {info}, api error: {job.get('error')}")

    # Pause and resume (the resume by keyboard: focus moves from Pause to Resume).
    info = page.wait_row(big2, "big2 downloading with bytes", lambda r: r["state"] == "downloading" and (r["value"] or 0) > 0.02, timeout=20)
    job_id = info["id"]
    page.js("document.querySelector(`#jobs > li[data-id='${arguments[0]}']`).dataset.marker = 'same-row';", job_id)
    page.action(job_id, "pause")
    info = page.wait_row(big2, "the paused badge", lambda r: r["state"] == "paused", timeout=10)
    paused_value = info["value"]
    RESULTS.check("pause: the badge shows Paused and Resume replaces Pause",
                  info["badge"] == "Paused" and info["resume"] and not info["pause"] and info["speed"] == "", info)
    time.sleep(1.2)
    later = page.row(big2)
    RESULTS.check("pause: progress stays put while paused", later["value"] == paused_value and later["state"] == "paused",
                  f"{paused_value} → {later}")
    focused = page.js("const a = document.activeElement; return a && a.dataset ? a.dataset.action || a.tagName : null;")
    RESULTS.check("keyboard: focus moved from Pause to the row's Resume button", focused == "resume", focused)
    from selenium.webdriver.common.keys import Keys
    if focused == "resume":
        page.d.switch_to.active_element.send_keys(Keys.ENTER)
    else:
        page.action(job_id, "resume")
    info = page.wait_row(big2, "state after resume", lambda r: r["state"] in ("waiting", "downloading"), timeout=10)
    RESULTS.check("resume: the badge moves on from Paused", info["badge"] in ("Waiting", "Downloading"), info)
    info = page.wait_row(big2, "progress beyond the paused point",
                         lambda r: r["state"] == "downloading" and (r["value"] or 0) > paused_value + 0.01, timeout=15)
    RESULTS.check("resume: the download continues from where it paused", True)
    status, job = ferry.api("GET", f"/jobs/{job_id}")
    RESULTS.check("rows are updated in place (the same element across pause and resume)",
                  page.js("const li = document.querySelector(`#jobs > li[data-id='${arguments[0]}']`); return li && li.dataset.marker;", job_id) == "same-row")
    RESULTS.check("resume: bytes kept (server restarted nothing from zero)", job["bytesReceived"] >= int(paused_value * job["bytesExpected"]) - 1,
                  f"paused at {paused_value}, now {job['bytesReceived']}/{job['bytesExpected']}")

    # Totals and filter.
    try:
        page.wait("a non-zero overall speed", lambda: page.text("total-speed") != "0 B/s", timeout=5)
    except StepFailed:
        pass
    active = page.text("total-active")
    RESULTS.check("totals show the active count and an overall speed",
                  active == "1" and page.text("total-speed").endswith("/s") and page.text("total-speed") != "0 B/s",
                  f"active={active} speed={page.text('total-speed')} row={page.row(big2)}")
    from selenium.webdriver.support.ui import Select
    from selenium.webdriver.common.by import By
    select = Select(page.d.find_element(By.ID, "filter"))
    select.select_by_value("failed")
    page.wait("the filter", lambda: not page.row(big)["visible"])
    rows = [page.row(u) for u in (big, big2, small, missing)]
    RESULTS.check("the state filter shows only failed jobs", [r["visible"] for r in rows] == [False, False, False, True],
                  [(r["name"], r["state"], r["visible"]) for r in rows])
    select.select_by_value("")
    page.wait("all rows again", lambda: page.row(big)["visible"])

    # Look at it, on a desktop and on a phone.
    page.js("window.scrollTo(0, 0)")
    page.screenshot("ferry-page-desktop.png")
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    page.screenshot("ferry-page-dark.png")
    page.d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    page.d.set_window_size(412, 900)
    time.sleep(0.3)
    overflow = page.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    RESULTS.check("phone width: nothing overflows sideways", overflow <= 0, f"{overflow}px too wide")
    page.screenshot("ferry-page-phone.png", width=412)
    page.d.set_window_size(1280, 1000)

    # Delete: the row goes, the job is gone from the API.
    page.action(job_id, "delete")
    page.wait("the deleted row to go", lambda: page.row(big2) is None, timeout=10)
    status, _ = ferry.api("GET", f"/jobs/{job_id}")
    RESULTS.check("delete: the row goes and the job is gone (404)", status == 404, status)

    # Every server job once, no more.
    def same_ids():
        ids = page.js(LIST_IDS_JS)
        return sorted(ids) == sorted(j["id"] for j in ferry.jobs()) and len(ids) == len(set(ids))
    RESULTS.check("rows match the server's jobs, none duplicated", bool(page.wait("rows to match", same_ids, timeout=5)))

    # Restart Ferry: the page reconnects by itself and neither loses nor duplicates rows.
    ferry.stop()
    page.wait("the page to notice", lambda: page.js("return document.getElementById('connection').dataset.state") != "live", timeout=10)
    ferry.start()
    status, created = ferry.api("POST", "/jobs", {"url": origin.url("/small2.txt")})
    require("restart: a job added by another client after the restart", status == 201, (status, created))
    page.wait_row(origin.url("/small2.txt"), "the other client's job after reconnecting", lambda r: True, timeout=20)
    page.wait("the live status after reconnecting",
              lambda: page.js("return document.getElementById('connection').dataset.state") == "live", timeout=10)
    RESULTS.check("restart: the page reconnects and shows jobs added meanwhile", True)
    RESULTS.check("restart: rows match the server's jobs, none duplicated", bool(page.wait("rows to match", same_ids, timeout=10)))

    # Log out: the login form comes back and the old cookie no longer works.
    page.click("#logout")
    page.wait("the login form after logout", lambda: page.visible("login"))
    status = page.d.execute_async_script(
        "const done = arguments[0]; fetch('/api/v1/jobs').then(r => done(r.status), e => done(String(e)));")
    RESULTS.check("logout: the login form returns and the session no longer works",
                  status == 401 and not page.visible("app") and page.js(LIST_IDS_JS) == [], status)


# Which of a row's controls a person can see (the read-only view hides the actions with CSS).
ROW_CONTROLS_JS = r"""
const li = document.querySelector(`#jobs > li[data-id='${arguments[0]}']`);
if (!li) return null;
const seen = {};
for (const e of li.querySelectorAll('.actions [data-action]')) {
  seen[e.dataset.action] = !e.hidden && getComputedStyle(e).display !== 'none' && e.offsetParent !== null;
}
return seen;
"""


def read_only_mode(page, origin, ferry):
    """Logged in with --read-token: the list, progress and downloads, and nothing that changes state."""
    status, done = ferry.api("POST", "/jobs", {"url": origin.url("/small.txt?read-only=1")})
    require("read-only: a finished job to look at", status == 201, (status, done))
    status, held = ferry.api("POST", "/jobs", {"url": origin.url("/small2.txt?read-only=1"), "paused": True})
    require("read-only: a paused job to look at", status == 201, (status, held))

    page.open(ferry.base + "/")
    page.wait("the login form", lambda: page.visible("login"))
    page.fill("token", ferry.read_token)
    page.click("#login-form button[type=submit]")
    page.wait("the app after logging in with the read token", lambda: page.visible("app"))
    page.wait_row(origin.url("/small.txt?read-only=1"), "the finished job", lambda r: r["state"] == "finished", timeout=20)
    page.wait_row(origin.url("/small2.txt?read-only=1"), "the paused job", lambda r: r["state"] == "paused")
    RESULTS.check("read-only: the page says so and offers logging out", page.visible("read-only") and page.visible("logout"))
    RESULTS.check("read-only: no add form", not page.visible("add") and not page.visible("url"))
    page.wait("the settings", lambda: page.js("return document.getElementById('max-concurrent').value") != "")
    disabled = page.js("return [document.getElementById('max-speed').disabled, document.getElementById('max-concurrent').disabled]")
    RESULTS.check("read-only: the settings are shown but cannot be changed",
                  page.visible("settings") and disabled == [True, True] and not page.visible("settings-save"), disabled)
    paused = page.js(ROW_CONTROLS_JS, held["id"])
    RESULTS.check("read-only: a paused job offers no resume, cancel or delete",
                  paused is not None and not any(paused.values()), paused)
    finished = page.js(ROW_CONTROLS_JS, done["id"])
    RESULTS.check("read-only: a finished job offers its download and nothing else",
                  finished is not None and finished.get("download") and not any(v for k, v in finished.items() if k != "download"),
                  finished)
    info = page.row(origin.url("/small.txt?read-only=1"))
    got = page.fetch_sha(info["href"])
    RESULTS.check("read-only: the download works", got.get("hex") == origin.sha256("/small.txt"), got)
    refused = page.d.execute_async_script(
        "const done = arguments[arguments.length - 1]; fetch('/api/v1/jobs/' + arguments[0] + '/resume', {method: 'POST', "
        "headers: {'X-Requested-With': 'ferry'}}).then(r => done(r.status), e => done(String(e)));", held["id"])
    status, job = ferry.api("GET", f"/jobs/{held['id']}")
    RESULTS.check("read-only: the session's own request to resume is refused (403) and changes nothing",
                  refused == 403 and job["state"] == "paused", (refused, job.get("state")))
    page.js("window.scrollTo(0, 0)")
    page.screenshot("ferry-page-read-only.png")

    page.click("#logout")
    page.wait("the login form after logout", lambda: page.visible("login"))
    RESULTS.check("read-only: logging out clears the read-only mark", not page.visible("read-only"))


def settings_control(page, ferry):
    """The settings card: shows GET /api/v1/settings, saves with PATCH, refuses what it cannot read."""
    page.open(ferry.base + "/")
    page.wait("the settings", lambda: page.visible("settings") and page.js("return document.getElementById('max-concurrent').value") != "")
    status, start = ferry.api("GET", "/settings")
    shown = page.js("return [document.getElementById('max-speed').value, document.getElementById('max-concurrent').value]")
    RESULTS.check("settings: the card shows the server's settings", shown == ["", str(start["maxConcurrent"])], (shown, start))

    page.fill("max-speed", "2MiB")
    page.fill("max-concurrent", "3")
    page.click("#settings-save")
    page.wait("the saved settings", lambda: ferry.api("GET", "/settings")[1] == {"maxBytesPerSecond": 2097152, "maxConcurrent": 3})
    RESULTS.check("settings: saving sends them (2MiB is 2097152 B/s) and says so",
                  "Saved" in (page.text("settings-status") or ""), page.text("settings-status"))

    page.fill("max-speed", "fast")
    page.click("#settings-save")
    page.wait("the speed field's error", lambda: page.visible("settings-error"))
    RESULTS.check("settings: an unreadable speed is caught before sending",
                  ferry.api("GET", "/settings")[1]["maxBytesPerSecond"] == 2097152
                  and page.js("return document.getElementById('max-speed').getAttribute('aria-invalid')") == "true")

    status, _ = ferry.api("PATCH", "/settings", {"maxBytesPerSecond": 1500000, "maxConcurrent": 5})
    require("settings: changed by another client", status == 200, status)
    page.open(ferry.base + "/")
    page.wait("the other client's settings after reloading",
              lambda: page.js("return document.getElementById('max-concurrent').value") == "5")
    RESULTS.check("settings: a reload shows the server's values (1500000 B/s as 1500K)",
                  page.js("return document.getElementById('max-speed').value") == "1500K", page.js("return document.getElementById('max-speed').value"))
    page.fill("max-speed", "")
    page.click("#settings-save")
    page.wait("no limit", lambda: ferry.api("GET", "/settings")[1]["maxBytesPerSecond"] is None)
    RESULTS.check("settings: an empty speed removes the limit", True)


VISIBLE_IDS_JS = "return Array.from(document.querySelectorAll('#jobs > li'), (li) => li).filter((li) => !li.hidden).map((li) => li.dataset.id);"

# Records the API requests the page makes from now on (the page calls the global fetch each time).
RECORD_FETCH_JS = r"""
window.__ferryFetched = [];
if (!window.__ferryFetchWrapped) {
  const original = window.fetch;
  window.fetch = (input, init) => { window.__ferryFetched.push(String(input)); return original(input, init); };
  window.__ferryFetchWrapped = true;
}
"""


def tags_and_search(page, origin, ferry):
    """Tags on each job, the tag chip filter and the search box, both answered by the server (tag=, q=)."""
    from selenium.webdriver.common.keys import Keys

    def create(path, tags):
        status, job = ferry.api("POST", "/jobs", {"url": origin.url(path), "paused": True, "dedupe": False, "tags": tags})
        require(f"tags: a job tagged {tags} is created", status == 201 and job.get("tags") == tags, (status, job))
        return job["id"]

    first = create("/tagged/Season-1.mkv", ["tv", "sci fi"])
    second = create("/tagged/Season-2.mkv", ["tv"])
    notes = create("/tagged/notes.txt", ["docs"])
    page.open(ferry.base + "/")
    page.wait("the tagged rows", lambda: {first, second, notes} <= set(page.visible_ids()), timeout=20)
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")
    total = len(ferry.jobs())
    chips = page.js("return Array.from(document.querySelectorAll(`#jobs > li[data-id='${arguments[0]}'] .tags button`), (b) => b.textContent);", first)
    RESULTS.check("tags: each job shows its tags as chips", chips == ["tv", "sci fi"], chips)
    plain = next(j["id"] for j in ferry.jobs() if j.get("tags") == [])
    RESULTS.check("tags: a job without tags shows no chips",
                  page.js("return document.querySelector(`#jobs > li[data-id='${arguments[0]}'] .tags`).hidden", plain))

    page.js(RECORD_FETCH_JS)
    page.click(f'#jobs > li[data-id="{first}"] .tags button[data-tag="tv"]')
    page.wait("only the tv jobs", lambda: sorted(page.visible_ids()) == sorted([first, second]), timeout=10)
    fetched = page.js("return window.__ferryFetched")
    RESULTS.check("tag chip: clicking 'tv' shows only its jobs, as the server lists them (tag=tv)",
                  any("tag=tv" in url for url in fetched), fetched)
    RESULTS.check("tag chip: the active filter is shown with a way to clear it",
                  page.visible("tag-filter") and page.text("tag-filter-name") == "tv" and page.visible("tag-filter-clear"))
    page.screenshot("ferry-page-tag-filter.png")

    # A job created elsewhere while the filter is on: shown if it carries the tag, not otherwise.
    later = create("/tagged/Season-3.mkv", ["tv"])
    other = create("/tagged/other.bin", ["misc"])
    page.wait("the new tv job", lambda: later in page.visible_ids(), timeout=10)
    RESULTS.check("tag chip: a new job with the tag appears, one without stays hidden",
                  other not in page.visible_ids() and sorted(page.visible_ids()) == sorted([first, second, later]),
                  page.visible_ids())

    page.click("#tag-filter-clear")
    page.wait("every job again", lambda: len(page.visible_ids()) == total + 2, timeout=10)
    RESULTS.check("tag chip: clearing the filter shows every job again", not page.visible("tag-filter"))

    page.js(RECORD_FETCH_JS)
    search = page.fill("search", "SEASON-2")
    page.wait("the search result", lambda: page.visible_ids() == [second], timeout=10)
    fetched = page.js("return window.__ferryFetched")
    RESULTS.check("search box: 'SEASON-2' finds the one job (the server's q, any case)",
                  any("q=SEASON-2" in url for url in fetched), fetched)
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    search.send_keys("notes")
    page.wait("the other search result", lambda: page.visible_ids() == [notes], timeout=10)
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys("nothing like this")
    page.wait("no result", lambda: page.visible_ids() == [] and page.visible("empty"), timeout=10)
    RESULTS.check("search box: no match says so", "match" in (page.text("empty") or ""), page.text("empty"))
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    page.wait("every job after clearing the search", lambda: len(page.visible_ids()) == total + 2, timeout=10)
    RESULTS.check("search box: an empty search shows every job", True)

    # Tags from the add form.
    page.fill("url", origin.url("/tagged/from-the-form.bin"))
    page.fill("tags", "alpha, beta ,")
    page.click("#add-form button[type=submit]")
    page.wait("the job added with tags", lambda: any(j.get("tags") == ["alpha", "beta"] for j in ferry.jobs()), timeout=10)
    RESULTS.check("add form: comma-separated tags are sent as the job's tags", True)
    page.fill("url", origin.url("/tagged/too-many.bin"))
    page.fill("tags", ",".join(f"t{i}" for i in range(17)))
    page.click("#add-form button[type=submit]")
    page.wait("the tags error", lambda: page.visible("add-error"), timeout=10)
    RESULTS.check("add form: 17 tags are refused with the server's message, on the tags field",
                  "16" in (page.text("add-error") or "")
                  and page.js("return document.getElementById('tags').getAttribute('aria-invalid')") == "true",
                  page.text("add-error"))


DELIVERY_INFO_JS = r"""
const li = document.querySelector(`#jobs > li[data-id='${arguments[0]}']`);
if (!li) return null;
const section = li.querySelector('.delivery');
const bar = section.querySelector('progress');
const shown = (sel) => { const e = li.querySelector(sel); return !!e && !e.hidden && getComputedStyle(e).display !== 'none' && e.offsetParent !== null; };
const error = li.querySelector('.job-error');
return {
  state: li.dataset.state, visible: !section.hidden && section.offsetParent !== null,
  host: section.querySelector('.delivery-host').textContent, status: section.querySelector('.delivery-state').textContent,
  deliveryState: section.dataset.state || null,
  value: bar.hasAttribute('value') ? bar.value : null, bytes: section.querySelector('.delivery-bytes').textContent,
  speed: shown('.delivery-speed') ? li.querySelector('.delivery-speed').textContent : '',
  downloadValue: li.querySelector('.job-progress > progress').value,
  error: error.hidden ? null : error.textContent,
  retry: shown('[data-action=retry]'), resume: shown('[data-action=resume]'), download: shown('[data-action=download]'),
};
"""


def onward_delivery(page, origin, ferry):
    """The upload bar, a refusing target with its Retry delivery button, the add form's field, deleteAfter."""
    uploads = origin.www / "upload"
    host = f"127.0.0.1:{origin.port}"
    page.open(ferry.base + "/")
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")

    def create(body):
        status, job = ferry.api("POST", "/jobs", dict(body, dedupe=False))
        require(f"delivery: a job delivering to {body['deliver']['url']} is created", status == 201 and job.get("delivery"),
                (status, job))
        return job

    def delivery(job_id):
        return page.js(DELIVERY_INFO_JS, job_id)

    # A download of ~5 s, then its upload (limited per job, so the bar has time to move).
    job = create({"url": origin.url("/slow/big.bin"), "maxBytesPerSecond": 2_000_000,
                  "deliver": {"url": origin.url("/upload/big.bin")}})
    info = page.wait("the row with its upload bar", lambda: (lambda d: d if d and d["visible"] else None)(delivery(job["id"])))
    RESULTS.check("delivery: the upload bar is shown under the download bar, naming the target's host",
                  info["host"] == host, info)
    RESULTS.check("delivery: before the download ends the upload is pending (empty bar)",
                  info["state"] != "downloading" or (info["deliveryState"] == "pending" and info["value"] in (0, None)), info)
    seen_states, moving = set(), []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        info = delivery(job["id"])
        if info:
            seen_states.add(info["state"])
            if info["state"] == "delivering" and info["value"] is not None and 0 < info["value"] < 1:
                moving.append(info)
            if info["state"] == "finished":
                break
        time.sleep(0.05)
    log(f"delivery: states seen {sorted(seen_states)}, {len(moving)} samples of the upload bar between 0 and 100%"
        + (f", e.g. {moving[len(moving) // 2]['bytes']!r} {moving[len(moving) // 2]['speed']!r}" if moving else ""))
    require("delivery: the job ends finished", info and info["state"] == "finished", info)
    RESULTS.check("delivery: the job went through delivering", "delivering" in seen_states, sorted(seen_states))
    RESULTS.check("delivery: the upload bar reaches 100% and says delivered",
                  info["value"] == 1 and info["deliveryState"] == "delivered" and "delivered" in info["status"]
                  and info["downloadValue"] == 1, info)
    if moving:
        RESULTS.check("delivery: while sending, the bar shows bytes sent of the total and a speed",
                      all(" sent (" in m["bytes"] for m in moving) and any(m["speed"].endswith("/s") for m in moving), moving[:3])
    target = uploads / "big.bin"
    RESULTS.check("delivery: the target holds the file, byte for byte",
                  target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == origin.sha256("/slow/big.bin"))
    page.screenshot("ferry-page-delivered.png")

    # A target that refuses (403): the failure, its message and a Retry delivery button; the retry delivers once
    # the target accepts.
    gate_open = origin.www / "gate-open"
    if gate_open.exists():
        gate_open.unlink()
    refused = create({"url": origin.url("/small.txt?gate=1"), "deliver": {"url": origin.url("/gate/small.txt")}})
    info = page.wait("the refused delivery", lambda: (lambda d: d if d and d["state"] == "failed" else None)(delivery(refused["id"])),
                     timeout=30)
    status, job = ferry.api("GET", f"/jobs/{refused['id']}")
    RESULTS.check("refused delivery: the job failed with delivery_failed and the target's 403",
                  job["error"] and job["error"]["code"] == "delivery_failed" and job["error"].get("httpStatus") == 403, job.get("error"))
    RESULTS.check("refused delivery: the row shows the failure message and the delivery as failed",
                  bool(info["error"]) and "403" in info["error"] and info["deliveryState"] == "failed", info)
    RESULTS.check("refused delivery: a Retry delivery button instead of Resume, no Download",
                  info["retry"] and not info["resume"] and not info["download"], info)
    page.screenshot("ferry-page-delivery-failed.png")
    gate_open.write_bytes(b"open")
    os.chmod(gate_open, 0o644)
    page.click(f'#jobs > li[data-id="{refused["id"]}"] [data-action="retry"]')
    info = page.wait("the retried delivery", lambda: (lambda d: d if d and d["state"] == "finished" else None)(delivery(refused["id"])),
                     timeout=30)
    delivered = origin.www / "gate" / "small.txt"
    RESULTS.check("refused delivery: Retry delivery sends it again and it is delivered (bar at 100%, no retry button)",
                  info["value"] == 1 and info["deliveryState"] == "delivered" and not info["retry"]
                  and delivered.exists() and delivered.read_bytes() == origin.files["/small.txt"], info)
    puts = [line for line in (origin.root / "logs" / "access.log").read_text().splitlines() if '"PUT /gate/small.txt' in line]
    RESULTS.check("refused delivery: the target saw the refused PUT and the accepted one", len(puts) >= 2, puts)

    # The add form's "deliver to" field.
    page.fill("url", origin.url("/small2.txt?form-delivery=1"))
    page.fill("deliver-url", origin.url("/upload/form/small2.txt"))
    page.click("#add-form button[type=submit]")
    made = page.wait("the job added with a delivery",
                     lambda: next((j for j in ferry.jobs() if "form-delivery=1" in j["url"]), None), timeout=10)
    RESULTS.check("add form: deliver to is sent as the job's deliver (PUT by default)",
                  made.get("delivery") and made["delivery"]["url"] == origin.url("/upload/form/small2.txt")
                  and made["delivery"]["method"] == "PUT", made.get("delivery"))
    page.wait("the form's job delivered", lambda: (lambda d: d if d and d["state"] == "finished" else None)(delivery(made["id"])),
              timeout=30)
    RESULTS.check("add form: the file reached the target", (uploads / "form" / "small2.txt").read_bytes() == origin.files["/small2.txt"])
    page.fill("url", origin.url("/small.txt?form-delivery=2"))
    page.fill("deliver-url", "ftp://example.org/x")
    page.click("#add-form button[type=submit]")
    page.wait("the deliver-to error", lambda: page.visible("add-error"))
    RESULTS.check("add form: a deliver-to URL that is not http(s) is caught on its field",
                  page.js("return document.getElementById('deliver-url').getAttribute('aria-invalid')") == "true")
    page.fill("deliver-url", "")

    # deleteAfter: once delivered the local copy is gone (410), and the row offers no download.
    gone = create({"url": origin.url("/small3.txt?delete-after=1"),
                   "deliver": {"url": origin.url("/upload/gone.txt"), "deleteAfter": True}})
    info = page.wait("the delivered job without its copy",
                     lambda: (lambda d: d if d and d["state"] == "finished" and "removed" in d["bytes"] else None)(delivery(gone["id"])),
                     timeout=30)
    RESULTS.check("deleteAfter: the finished row offers no Download and says the local copy was removed",
                  not info["download"], info)


def mirrors(page, origin, ferry):
    """A job whose main URL fails carries on from its mirror: the row lists both sources, the first dropped."""
    page.open(ferry.base + "/")
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")
    status, job = ferry.api("POST", "/jobs", {"url": origin.url("/missing.bin?mirrors=1"), "mirrors": [origin.url("/small.txt?mirror=1")],
                                              "dedupe": False})
    require("mirrors: the job is created with two sources", status == 201 and len(job.get("sources") or []) == 2, (status, job))
    sources_js = """
        const row = document.querySelector(`#jobs > li[data-id="${arguments[0]}"]`);
        if (!row) return null;
        const list = row.querySelector('.sources');
        return {hidden: list.hidden, state: row.querySelector('.badge').dataset.state,
                items: [...list.querySelectorAll('li')].map((li) => ({state: li.dataset.state, text: li.textContent}))};
    """
    info = page.wait("the finished job with its sources", lambda: (lambda d: d if d and d["state"] == "finished" else None)(
        page.js(sources_js, job["id"])), timeout=30)
    items = info["items"]
    RESULTS.check("mirrors: the row lists both sources under the bar", not info["hidden"] and len(items) == 2, info)
    if len(items) == 2:
        RESULTS.check("mirrors: the failing main URL is shown dropped with its 404",
                      items[0]["state"] == "dropped" and "404" in items[0]["text"] and "missing.bin" in items[0]["text"], items[0])
        RESULTS.check("mirrors: the mirror is active and shows the bytes it gave",
                      items[1]["state"] == "active" and "small.txt" in items[1]["text"]
                      and items[1]["text"].endswith(" · 1.33 KiB"), items[1])


def read_only_delivery(page, origin, ferry):
    """With the read-only token: a failed delivery's message is shown, the retry button is not."""
    status, job = ferry.api("POST", "/jobs", {"url": origin.url("/small.txt?read-only-delivery=1"),
                                             "deliver": {"url": origin.url("/refuse/small.txt")}})
    require("read-only delivery: a job delivering to a refusing target", status == 201, (status, job))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and ferry.api("GET", f"/jobs/{job['id']}")[1]["state"] != "failed":
        time.sleep(0.1)
    page.open(ferry.base + "/")
    page.wait("the login form", lambda: page.visible("login"))
    page.fill("token", ferry.read_token)
    page.click("#login-form button[type=submit]")
    page.wait("the app after logging in with the read token", lambda: page.visible("app"))
    info = page.wait("the failed delivery", lambda: (lambda d: d if d and d["state"] == "failed" else None)(page.js(DELIVERY_INFO_JS, job["id"])))
    RESULTS.check("read-only delivery: the failure and its message are shown, with no retry or resume button",
                  info["visible"] and info["error"] and "403" in info["error"] and not info["retry"] and not info["resume"], info)
    page.click("#logout")
    page.wait("the login form after logout", lambda: page.visible("login"))


def keys_panel(page, origin, ferry):
    """The administrator's keys panel: make a key (its token shown once), change its limit, log in with it (only its
    own jobs), revoke it."""
    def as_key(token, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(ferry.base + "/api/v1" + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + token)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            return error.code, None

    page.open(ferry.base + "/")
    page.wait("the login form", lambda: page.visible("login"))
    page.fill("token", ferry.token)
    page.click("#login-form button[type=submit]")
    page.wait("the keys panel", lambda: page.visible("keys"))
    page.fill("key-name", "team")
    page.fill("key-max-active", "2")
    page.click("#key-create")
    page.wait("the new key's token", lambda: page.visible("key-token"))
    token = page.text("key-token-value") or ""
    RESULTS.check("keys: a new key's token is shown once", token.startswith("fk_"), token)
    status, listed = ferry.api("GET", "/keys")
    key = next((k for k in (listed or {}).get("keys", []) if k["name"] == "team"), None)
    require("keys: the key was made with its limit", key is not None and key["limits"]["maxActiveJobs"] == 2, listed)
    page.wait("the key in the list", lambda: page.js("return document.querySelectorAll('#key-list li').length") >= 1)
    page.js(f"document.querySelector('#key-list li[data-id=\"{key['id']}\"] .key-max-active').value = '3'")
    page.click(f"#key-list li[data-id='{key['id']}'] .key-save")
    page.wait("the changed limit", lambda: ferry.api("GET", f"/keys/{key['id']}")[1]["limits"]["maxActiveJobs"] == 3)
    RESULTS.check("keys: the panel changes a key's limit", True)
    page.screenshot("ferry-page-keys.png")

    status, admins = ferry.api("POST", "/jobs", {"url": origin.url("/small.txt?keys=admin"), "paused": True})
    status2, mine = as_key(token, "POST", "/jobs", {"url": origin.url("/small.txt?keys=team"), "paused": True})
    require("keys: a job of the administrator and one of the key", status == 201 and status2 == 201, (status, status2))
    page.click("#logout")
    page.wait("the login form", lambda: page.visible("login"))
    page.fill("token", token)
    page.click("#login-form button[type=submit]")
    page.wait("the app after logging in with the key", lambda: page.visible("app"))
    page.wait_row(origin.url("/small.txt?keys=team"), "the key's job", lambda r: r["state"] == "paused")
    shown = page.js(VISIBLE_IDS_JS)
    RESULTS.check("keys: logged in with a key, the page shows only its jobs and no keys panel",
                  shown == [mine["id"]] and not page.visible("keys"), shown)
    RESULTS.check("keys: a client's key cannot change the settings", not page.visible("settings-save"))
    page.click("#logout")
    page.wait("the login form", lambda: page.visible("login"))
    page.fill("token", ferry.token)
    page.click("#login-form button[type=submit]")
    page.wait("the keys panel", lambda: page.visible("keys") and page.js("return document.querySelectorAll('#key-list li').length") >= 1)
    page.click(f"#key-list li[data-id='{key['id']}'] .key-revoke")
    page.wait("the key gone", lambda: page.js("return document.querySelectorAll('#key-list li').length") == 0)
    RESULTS.check("keys: revoked from the panel, the key is refused at once", as_key(token, "GET", "/jobs")[0] == 401)
    page.click("#logout")
    page.wait("the login form", lambda: page.visible("login"))


def open_mode(page, origin, ferry):
    small = origin.url("/small2.txt")

    # Before its first list arrives the page says it is loading, never "No downloads yet" (a screenshot or a
    # slow link would otherwise show an empty Ferry). The page as served, before any script runs:
    with urllib.request.urlopen(ferry.base + "/", timeout=10) as response:
        html = response.read().decode()
    RESULTS.check("the page as served says it is loading the list, not that there are no downloads",
                  'id="empty"' in html and "Loading downloads" in html and "No downloads yet" not in html)
    # And with the list request held back, as on a slow link:
    held = page.d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_LIST_JS})["identifier"]
    try:
        page.open(ferry.base + "/")
        page.wait("the app in open mode", lambda: page.visible("app"))
        page.wait("the held list request", lambda: page.js("return window.__ferryListHeld") >= 1, timeout=10)
        time.sleep(0.3)  # a frame or two for anything that would draw
        loading_text = page.text("empty")
        RESULTS.check("before the first list arrives: a loading state, not 'No downloads yet'",
                      page.visible("empty") and (loading_text or "").startswith("Loading downloads")
                      and page.js("return document.getElementById('jobs').getAttribute('aria-busy')") == "true",
                      repr(loading_text))
        page.screenshot("ferry-page-loading.png")
        page.js("window.__ferryReleaseList()")
        page.wait("the empty list after the list arrived", lambda: (page.text("empty") or "").startswith("No downloads yet"))
        RESULTS.check("after the first list: 'No downloads yet' on an empty Ferry, no longer busy",
                      page.visible("empty") and page.js("return document.getElementById('jobs').getAttribute('aria-busy')") == "false")
    finally:
        page.d.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": held})
    require("open mode: the page works without logging in (no login form, no logout)",
            page.visible("app") and not page.visible("login") and not page.visible("logout"))
    # The skip link's heading stops below the sticky top bar, not under it (a page tall enough to scroll).
    page.js("document.body.style.minHeight = '400vh'; window.scrollTo(0, document.body.scrollHeight)")
    page.js("document.querySelector('a.skip').click()")
    time.sleep(0.5)
    gap = page.js("return document.getElementById('jobs-heading').getBoundingClientRect().top"
                  " - document.querySelector('.topbar').getBoundingClientRect().bottom")
    scrolled = page.js("return window.scrollY")
    page.js("document.body.style.minHeight = ''; window.scrollTo(0, 0)")
    RESULTS.check("keyboard: 'Skip to downloads' lands the heading below the sticky top bar",
                  gap is not None and gap >= 0 and scrolled > 0, "gap %r px, scrolled to %r" % (gap, scrolled))
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")

    page.fill("url", small)
    page.fill("filename", "renamed.txt")
    page.fill("sha256", origin.sha256("/small2.txt"))
    page.click("#add-form button[type=submit]")
    info = page.wait_row(small, "the renamed file finished", lambda r: r["state"] == "finished", timeout=20)
    RESULTS.check("open mode: a job with a filename and SHA-256 finishes under that name", info["name"] == "renamed.txt", info)
    got = page.fetch_sha(info["href"])
    RESULTS.check("open mode: the download has the right bytes", got.get("hex") == origin.sha256("/small2.txt"), got)

    bad = origin.url("/small3.txt")
    page.fill("url", bad)
    page.fill("sha256", "0" * 64)
    page.click("#add-form button[type=submit]")
    info = page.wait_row(bad, "the checksum failure", lambda r: r["state"] == "failed", timeout=20)
    RESULTS.check("open mode: a wrong SHA-256 fails the job with a message", bool(info["error"]), info)
    status, job = ferry.api("GET", f"/jobs/{info['id']}")
    size = len(origin.files["/small3.txt"])
    log(f"checksum failure as the API reports it: bytesReceived={job.get('bytesReceived')} "
        f"bytesExpected={job.get('bytesExpected')} progress={job.get('progress')} error={job.get('error')}")
    RESULTS.check("a checksum failure row shows the bytes received, not '0 B of ...'",
                  info["bytes"].startswith(f"{size} B received") and not info["bytes"].startswith("0 B"), info["bytes"])

    # Other checksum algorithms: the form's algorithm menu sends `checksum`; the row names the algorithm.
    def choose_algorithm(value):
        page.js("const s = document.getElementById('checksum-algorithm'); s.value = arguments[0];"
                "s.dispatchEvent(new Event('change', {bubbles: true}));", value)
    md5_url = origin.url("/small2.txt?md5=1")
    page.fill("url", md5_url)
    choose_algorithm("md5")
    page.fill("sha256", hashlib.md5(origin.files["/small2.txt"]).hexdigest().upper())
    page.click("#add-form button[type=submit]")
    info = page.wait_row(md5_url, "the MD5-checked job finished", lambda r: r["state"] in ("finished", "failed"), timeout=20)
    status, job = ferry.api("GET", f"/jobs/{info['id']}")
    RESULTS.check("add form: an MD5 is sent as checksum {algorithm, value} and the job finishes",
                  info["state"] == "finished" and job.get("checksum") == {
                      "algorithm": "md5", "value": hashlib.md5(origin.files["/small2.txt"]).hexdigest()}, job)
    choose_algorithm("sha-512")
    page.fill("sha256", "0" * 64)
    page.fill("url", origin.url("/small3.txt?sha512=short"))
    page.click("#add-form button[type=submit]")
    problem = page.wait("the form's complaint about a short SHA-512",
                        lambda: page.js("return document.getElementById('sha256').getAttribute('aria-invalid')") == "true", timeout=5)
    RESULTS.check("add form: a SHA-512 of 64 digits is caught before sending (no job made)",
                  problem and not any("sha512=short" in j["url"] for j in ferry.jobs()))
    sha512_url = origin.url("/small3.txt?sha512=wrong")
    page.fill("url", sha512_url)
    page.fill("sha256", "0" * 128)
    page.click("#add-form button[type=submit]")
    info = page.wait_row(sha512_url, "the SHA-512 failure", lambda r: r["state"] == "failed", timeout=20)
    RESULTS.check("a wrong SHA-512 fails the job and the row names SHA-512",
                  "SHA-512 did not match" in info["bytes"] and bool(info["error"]), info)

    # Hundreds of jobs (created paused by another client) arrive through the event stream.
    count = 600
    status, answers = ferry.api("POST", "/jobs", [{"url": origin.url(f"/small.txt?copy={i}"), "paused": True} for i in range(count)])
    require(f"open mode: a batch of {count} paused jobs is accepted", status == 200 and all("id" in a for a in answers), status)
    started = time.monotonic()
    page.wait(f"{count} more rows", lambda: len(page.js(LIST_IDS_JS)) >= count + 2, timeout=15)
    ids = page.js(LIST_IDS_JS)
    RESULTS.check(f"open mode: {count} jobs from the event stream appear, none duplicated "
                  f"({time.monotonic() - started:.1f}s)", len(ids) == len(set(ids)) == len(ferry.jobs()), len(ids))
    # A reload lists them again, over more than one page (the page asks for 500 at a time).
    page.open(ferry.base + "/")
    page.wait("the list after reloading", lambda: len(page.js(LIST_IDS_JS)) >= count + 2, timeout=15)
    page.wait("the live event stream", lambda: page.js("return document.getElementById('connection').dataset.state") == "live")
    ids = page.js(LIST_IDS_JS)
    RESULTS.check("open mode: a reload lists every job across pages, once each",
                  sorted(ids) == sorted(j["id"] for j in ferry.jobs()) and len(ids) == len(set(ids)), len(ids))
    first, second = answers[0]["id"], answers[1]["id"]
    page.action(first, "cancel")
    page.wait("the cancelled badge", lambda: page.js(
        "const li = document.querySelector(`#jobs > li[data-id='${arguments[0]}']`); return li && li.dataset.state;", first) == "cancelled")
    info = page.row(origin.url("/small.txt?copy=0"))
    RESULTS.check("cancel: the badge shows Cancelled and only Delete is left",
                  info["badge"] == "Cancelled" and not (info["pause"] or info["resume"] or info["cancel"]) and info["del"], info)
    status, _ = ferry.api("DELETE", f"/jobs/{second}")
    page.wait("the row deleted by another client to go", lambda: page.row(origin.url("/small.txt?copy=1")) is None, timeout=10)
    RESULTS.check("a job deleted elsewhere disappears (removed event)", status == 204, status)

    page.fill("url", origin.url("/small.txt"))
    page.fill("sha256", "abc")
    page.click("#add-form button[type=submit]")
    page.wait("the SHA-256 field error", lambda: page.visible("add-error"))
    RESULTS.check("open mode: a malformed SHA-256 is caught before sending",
                  page.js("return document.getElementById('sha256').getAttribute('aria-invalid')") == "true")


def main():
    global TMP, DRIVER
    if not os.access(FERRY_BIN, os.X_OK):
        RESULTS.check("setup", False, f"FERRY_BIN {FERRY_BIN} is not an executable (build ferry or set FERRY_BIN)")
        return 1
    TMP = tempfile.mkdtemp(prefix="ferry-browser-")
    log(f"work directory {TMP}; ferry {FERRY_BIN}")
    origin = Origin(TMP)
    origin.start()
    log(f"nginx origin on 127.0.0.1:{origin.port}")
    secured = Ferry(TMP, "ferry-token", TOKEN, READ_TOKEN)
    secured.start()
    log(f"ferry (token) on 127.0.0.1:{secured.port}")
    open_ferry = Ferry(TMP, "ferry-open", None)
    open_ferry.start()
    log(f"ferry (open) on 127.0.0.1:{open_ferry.port}")
    DRIVER = make_driver(os.path.join(TMP, "chromium-profile"))
    page = Page(DRIVER)
    log(f"chromium {DRIVER.capabilities.get('browserVersion')}")

    scenarios = (("token mode", token_mode, secured), ("read-only mode", read_only_mode, secured),
                 ("open mode", open_mode, open_ferry),
                 ("settings", lambda page, _origin, ferry: settings_control(page, ferry), open_ferry),
                 ("tags and search", tags_and_search, open_ferry),
                 ("onward delivery", onward_delivery, open_ferry),
                 ("mirrors", mirrors, open_ferry),
                 ("read-only delivery", read_only_delivery, secured),
                 ("keys panel", keys_panel, secured))
    # PAGE_SCENARIOS="keys panel,open mode" runs only those (while working on one).
    only = [name.strip() for name in os.environ.get("PAGE_SCENARIOS", "").split(",") if name.strip()]
    for name, scenario, ferry in scenarios:
        if only and name not in only:
            continue
        log(f"--- {name}")
        try:
            scenario(page, origin, ferry)
        except Exception as error:
            if not isinstance(error, StepFailed) or "timed out" in str(error):
                RESULTS.check(f"{name}: scenario ran to the end", False,
                              f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=3)}")
            try:
                page.screenshot(f"failure-{name.replace(' ', '-')}.png")
            except Exception:
                pass
            print(f"--- ferry log ({name}), last lines:\n{ferry.tail()}", flush=True)
    errors = page.console_errors()
    RESULTS.check("no JavaScript errors in the console", not errors, "\n".join(errors))
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except Exception as error:
        RESULTS.check("setup", False, f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
    finally:
        cleanup()
    log("done")
    print(f"{RESULTS.passed} passed, {RESULTS.failed} failed")
    sys.exit(1 if RESULTS.failed or code else 0)
