#!/usr/bin/env bash
# Fuzzes FerryHTTP's request parser (and WebSocket frame parser) with libFuzzer for a given number of seconds.
#   scripts/fuzz-parser.sh [SECONDS] [extra libFuzzer flags...]
# Builds fuzz/bin/parser-fuzzer from fuzz/ParserFuzzer.swift and Sources/FerryHTTP/Parsing with
# -sanitize=fuzzer,address, seeds a working corpus (fuzz/corpus-run, gitignored) from fuzz/corpus,
# runs on one core, and prints libFuzzer's closing statistics. Exits non-zero on a finding; the
# crashing input is left as crash-* in the repository root.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
mkdir -p fuzz/bin fuzz/corpus-run
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name ParserFuzzer \
  fuzz/ParserFuzzer.swift Sources/FerryHTTP/Parsing/*.swift \
  Sources/FerryHTTP/WebSocket/WebSocketFrameParser.swift Sources/FerryHTTP/WebSocket/WebSocketCloseCode.swift \
  -o fuzz/bin/parser-fuzzer
cp -n fuzz/corpus/* fuzz/corpus-run/ 2>/dev/null || true
exec fuzz/bin/parser-fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=30 -rss_limit_mb=2048 \
  -print_final_stats=1 "$@" fuzz/corpus-run
