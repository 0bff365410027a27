#!/usr/bin/env bash
# Measures `batchd reconcile` as the separate process it is in production:
# a sandbox process holds the checks, ledgerfill and `batchd submit` create
# them, then reconcile runs RUNS times (default 3) at api.rate 200 under
# /usr/bin/time. Prints elapsed time, its ratio to the paging floor
# ((pages - 1) / 200 s: the first request takes the limiter's one token of
# burst), and peak RSS.
#
#   tools/bench-reconcile.sh            # 100,000 checks (floor 4.995 s)
#   ROWS=1000000 tools/bench-reconcile.sh
#   SERIES=/tmp/rss.txt tools/bench-reconcile.sh   # also log every sample (time, RssAnon kB, RssFile kB)
#   BASE=/tmp/batchd-old tools/bench-reconcile.sh  # each run: that binary, then this tree's, back to back
#   FORMATS='[csv]' tools/bench-reconcile.sh       # report.formats (default: batchd's, csv and xlsx)
#   LOGS=/tmp/logs tools/bench-reconcile.sh        # keep each run's stderr (LOG_LEVEL=debug for the pages)
#
# Creating 1,000,000 checks takes minutes; never part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-100000}
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'kill "${sb:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
key=sk_test_bench_reconcile_0123456789

go build -o "$work/batchd" ./cmd/batchd
go run ./tools/ledgerfill -state "$work/state" -rows "$rows" -batches 10
"$work/batchd" sandbox --listen 127.0.0.1:0 --key "$key" >"$work/sandbox.url" 2>"$work/sandbox.log" &
sb=$!
for _ in $(seq 100); do [ -s "$work/sandbox.url" ] && break; sleep 0.1; done
url=$(head -1 "$work/sandbox.url")
[ -n "$url" ] || { echo "sandbox did not start:" >&2; cat "$work/sandbox.log" >&2; exit 1; }

cat >"$work/submit.yaml" <<YAML
state_dir: $work/state
log: {format: json, level: warn}
api: {base_url: "$url", mode: test, rate: 100000, burst: 1000, concurrency: 64}
YAML
sed -e 's/rate: 100000, burst: 1000, concurrency: 64/rate: 200, burst: 1, concurrency: 8/' \
  -e "s/level: warn/level: ${LOG_LEVEL:-warn}/" "$work/submit.yaml" >"$work/reconcile.yaml"
[ -z "${FORMATS:-}" ] || echo "report: {formats: $FORMATS}" >>"$work/reconcile.yaml"

# The output goes to a file: piping it into head would kill submit with
# SIGPIPE, and pipefail would end the script.
BATCHD_API_KEY=$key "$work/batchd" submit --config "$work/submit.yaml" >"$work/submit.out" || { echo "submit failed" >&2; cat "$work/submit.out" >&2; exit 1; }
head -1 "$work/submit.out"
floor=$(awk -v r="$rows" 'BEGIN { printf "%.3f", (int((r + 99) / 100) - 1) / 200 }')
# sample PID: the peaks of its anonymous and file-backed RSS (kB), polled
# every 50 ms until it exits: the file-backed part is mostly the ledger's
# memory map.
sample() {
  local anon=0 file=0 a f
  while [ -r "/proc/$1/status" ]; do
    a=$(awk '/^RssAnon:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
    f=$(awk '/^RssFile:/ {print $2}' "/proc/$1/status" 2>/dev/null || true)
    [ -n "$a" ] && [ "$a" -gt "$anon" ] && anon=$a
    [ -n "$f" ] && [ "$f" -gt "$file" ] && file=$f
    [ -z "${SERIES:-}" ] || echo "$(date +%s.%N | cut -c1-14) $a $f" >>"$SERIES"
    sleep 0.05
  done
  echo "$anon $file"
}
# measure NAME BINARY RUN: one reconcile under /usr/bin/time.
measure() {
  BATCHD_API_KEY=$key /usr/bin/time -f "%e %M" -o "$work/time" "$2" reconcile --config "$work/reconcile.yaml" >"$work/out" 2>"$work/err" &
  tp=$!
  sleep 0.05
  rp=$(pgrep -P "$tp" || true)
  peaks=$( [ -n "$rp" ] && sample "$rp" || echo "0 0")
  wait "$tp"
  read -r secs kb <"$work/time"
  read -r anon file <<<"$peaks"
  awk -v s="$secs" -v kb="$kb" -v i="$3" -v n="$1" -v f="$floor" -v a="$anon" -v fb="$file" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN { printf "%s: reconcile run %d: %.2f s = %.3fx the %.3f s floor, peak RSS %.0f MB (sampled peaks: anonymous %.0f MB, file-backed %.0f MB), load %s\n", n, i, s, s / f, f, kb / 1024, a / 1024, fb / 1024, l }'
  [ -z "${GODEBUG:-}" ] || grep '^gc ' "$work/err" | tail -3
  [ -z "${LOGS:-}" ] || { mkdir -p "$LOGS"; cp "$work/err" "$LOGS/$1-run$3.log"; }
  return 0
}
for i in $(seq "$runs"); do
  [ -z "${BASE:-}" ] || measure base "$BASE" "$i"
  measure this "$work/batchd" "$i"
done
head -2 "$work/out"
