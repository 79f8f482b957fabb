#!/usr/bin/env bash
# Runs the browser page test (Tests/browser/test_page.py) in headless Chromium.
#
# Installs what is missing first: Debian's chromium, chromium-driver and nginx (when root), and
# Selenium from PyPI. FERRY_BIN names the ferry executable (default .build/debug/ferry);
# SCREENSHOT_DIR where the screenshots go (default /tmp/ferry-page-shots).
# Prints `N passed, N failed` last and exits non-zero on any failure.
set -euo pipefail

cd "$(dirname "$0")/.."
export FERRY_BIN="${FERRY_BIN:-.build/debug/ferry}"
PYTHON="${PYTHON:-python3}"

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "browser-test: installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        echo "browser-test: missing ${missing[*]} (install them as root: apt-get install ${missing[*]})" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
export PATH="$PATH:/usr/sbin"

if ! "$PYTHON" -c 'import selenium' >/dev/null 2>&1; then
    echo "browser-test: installing selenium"
    "$PYTHON" -m pip install --quiet --disable-pip-version-check -r Tests/browser/requirements.txt \
        || "$PYTHON" -m pip install --quiet --disable-pip-version-check --break-system-packages -r Tests/browser/requirements.txt
fi

# Selenium must not fetch a driver of its own: the Debian chromedriver is used.
export SE_OFFLINE=true
exec "$PYTHON" Tests/browser/test_page.py
