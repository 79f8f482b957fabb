#!/usr/bin/env bash
# Ferry benchmark suite: `make bench` or `bench/run.sh`.
#
# Starts its own nginx origin on 127.0.0.1 (own config, pid file and temp dir), then hands over to
# bench/ferrybench.py, which starts and stops Ferry (release binary) per case and runs Ferry and the
# peers interleaved. Every process it starts is stopped by pid on exit, failure or Ctrl-C.
#
# Environment:
#   FERRY_BIN     Ferry binary (default .build/release/ferry)
#   BENCH_SCALE   full (default) or small (quick smoke run, under ~2 minutes)
#   RUNS          measured runs per tool and case after one warm-up (default 5; 3 when small)
#   CASES         comma list of cases to run (default all): download,upload,segmented,mirrors,small-files,api,serve,sse,store,cluster,fetch,aria2-rpc
#   BENCH_TMP     parent directory of the temp dir (default $TMPDIR or /tmp); needs ~8 GB free at full scale
#
# Output: a Markdown table on stdout, also written to bench/out/results.md (raw numbers in
# bench/out/results.json, server logs in bench/out/logs/).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"

FERRY_BIN=${FERRY_BIN:-.build/release/ferry}
BENCH_SCALE=${BENCH_SCALE:-full}
OUT="$HERE/out"
rm -rf "$OUT/logs"
mkdir -p "$OUT/logs"

log() { printf '[bench] %s\n' "$*" >&2; }

# --- peers and tools -------------------------------------------------------------------------------
missing=()
command -v aria2c >/dev/null 2>&1 || missing+=(aria2)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
[ -x /usr/bin/time ] || missing+=(time)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        log "installing: ${missing[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    elif sudo -n true 2>/dev/null; then
        log "installing with sudo: ${missing[*]}"
        sudo -n apt-get update -qq
        sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    else
        log "missing tools; run: sudo apt-get install ${missing[*]}"
        exit 1
    fi
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

if [ ! -x "$FERRY_BIN" ]; then
    log "no Ferry binary at $FERRY_BIN: build it (swift build -c release --product ferry) or set FERRY_BIN"
    exit 1
fi
FERRY_BIN=$(cd "$(dirname "$FERRY_BIN")" && pwd)/$(basename "$FERRY_BIN")

# 10,000 event-stream subscribers need file descriptors on both ends (children inherit this).
ulimit -Hn 65536 2>/dev/null || true
ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true

# --- temp dir, cleanup -----------------------------------------------------------------------------
WORK=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/ferry-bench.XXXXXX")
NGINX_PID=""
DRIVER_PID=""
stop_pid() {  # stop_pid PID NAME: TERM, wait up to 15 s, then KILL
    local pid=$1 name=$2 i
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    log "$name ($pid) did not stop in 15 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$DRIVER_PID" driver
    # The driver stops Ferry itself; this is the backstop if it died or was killed.
    if [ -f "$WORK/ferry.pid" ]; then stop_pid "$(cat "$WORK/ferry.pid")" ferry; fi
    if [ -f "$WORK/sse.pid" ]; then stop_pid "$(cat "$WORK/sse.pid")" sse-client; fi
    if [ -f "$WORK/nginx/nginx.pid" ]; then stop_pid "$(cat "$WORK/nginx/nginx.pid")" nginx; fi
    stop_pid "$NGINX_PID" nginx
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'log interrupted; exit 130' INT
trap 'log terminated; exit 143' TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# --- nginx origin ----------------------------------------------------------------------------------
NGINX_PORT=$(free_port)
mkdir -p "$WORK/nginx/logs" "$WORK/nginx/tmp" "$WORK/www"
# As root, workers would otherwise run as nobody and could not read the 0700 temp dir.
USER_LINE=""
[ "$(id -u)" = 0 ] && USER_LINE="user root;"
cat > "$WORK/nginx/nginx.conf" <<EOF
$USER_LINE
worker_processes auto;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
worker_rlimit_nofile 65536;
events { worker_connections 16384; }
http {
    access_log off;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 65;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    # The upload case reads each PUT's time as nginx saw it (first byte of the request to the answer sent).
    log_format upload '\$request_uri \$status \$request_time \$request_length';
    server {
        # 127.0.0.1 only (all bench traffic stays there); Ferry runs with --max-per-host at least 16.
        listen 127.0.0.1:$NGINX_PORT reuseport;
        root $WORK/www;
        # 20 MiB/s per connection (the segmented-download case)
        location /limited/ { alias $WORK/www/; limit_rate 20m; }
        # 2 MiB/s per connection (downloads that run while event streams are measured)
        location /slow/ { alias $WORK/www/; limit_rate 2m; }
        # 4 KiB/s per connection (jobs that stay running while the cluster case counts claims)
        location /trickle/ { alias $WORK/www/; limit_rate 4k; }
        # Upload target (the upload case): WebDAV PUT into www/upload/
        location /upload/ {
            dav_methods PUT; create_full_put_path on; client_max_body_size 0;
            access_log $WORK/nginx/logs/upload.log upload;
        }
    }
}
EOF
"$NGINX" -e "$WORK/nginx/logs/error.log" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
NGINX_PID=$!
for i in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && break
    kill -0 "$NGINX_PID" 2>/dev/null || { log "nginx failed to start:"; cat "$WORK/nginx/logs/error.log" >&2; exit 1; }
    sleep 0.05
done
log "nginx origin on 127.0.0.1:$NGINX_PORT (pid $NGINX_PID), temp dir $WORK, scale $BENCH_SCALE"

# --- the suite -------------------------------------------------------------------------------------
python3 "$HERE/ferrybench.py" \
    --work "$WORK" --out "$OUT" --ferry-bin "$FERRY_BIN" \
    --nginx-port "$NGINX_PORT" --nginx-pid "$NGINX_PID" --scale "$BENCH_SCALE" &
DRIVER_PID=$!
set +e
wait "$DRIVER_PID"
rc=$?
set -e
DRIVER_PID=""
exit "$rc"
