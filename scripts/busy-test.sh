#!/usr/bin/env bash
# `make test` on a busy machine: stress-ng keeps one core busy (`--cpu 1`, Debian's stress-ng) beside the whole test
# run, as a release build or another job would (issue 24). The tests must pass so; CI keeps running `make test` alone.
#   scripts/busy-test.sh            make test beside stress-ng --cpu 1
#   BUSY_CPUS=2 scripts/busy-test.sh   more stressors
#   any arguments are passed to make (e.g. scripts/busy-test.sh SWIFT=/path/to/swift)
# stress-ng is installed with apt-get when missing (as root, or with sudo -n); it is stopped by its pid on exit.
# Prints the wall time and the exit status of make test at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
cpus=${BUSY_CPUS:-1}

if ! command -v stress-ng >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "Installing: stress-ng" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends stress-ng >/dev/null
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    echo "Installing: stress-ng" >&2
    sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends stress-ng >/dev/null
  else
    echo "stress-ng is missing: sudo apt-get install -y stress-ng" >&2
    exit 1
  fi
fi

# The stressor runs until this script ends (no --timeout: the test run's length is not known in advance).
stress-ng --cpu "$cpus" --quiet &
stress_pid=$!
stop_stress() {
  # stress-ng's parent stops its workers when it gets SIGTERM; SIGKILL only if it is still there after 5 s.
  if kill -0 "$stress_pid" 2>/dev/null; then
    kill -TERM "$stress_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$stress_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$stress_pid" 2>/dev/null || true
  fi
  wait "$stress_pid" 2>/dev/null || true
}
trap stop_stress EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "busy-test: stress-ng --cpu $cpus (pid $stress_pid) beside make test on $(nproc) cores" >&2
started=$(date +%s)
status=0
make test "$@" || status=$?
echo "busy-test: make test exited $status after $(( $(date +%s) - started )) s beside stress-ng --cpu $cpus" >&2
exit "$status"
