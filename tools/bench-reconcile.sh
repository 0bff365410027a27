#!/usr/bin/env bash
# Measures `batchd reconcile` over 100,000 checks as the separate process it
# is in production: a sandbox process holds the checks, ledgerfill and
# `batchd submit` create them, then reconcile runs three times at
# api.rate 200 (floor: 999 pages / 200 = 4.995 s) under /usr/bin/time.
# Prints elapsed time, its ratio to the floor, and peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill "${sb:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
key=sk_test_bench_reconcile_0123456789

go build -o "$work/batchd" ./cmd/batchd
go run ./tools/ledgerfill -state "$work/state" -rows 100000 -batches 10
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
sed -e 's/rate: 100000, burst: 1000, concurrency: 64/rate: 200, burst: 1, concurrency: 8/' "$work/submit.yaml" >"$work/reconcile.yaml"

BATCHD_API_KEY=$key "$work/batchd" submit --config "$work/submit.yaml" | head -1
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "submit failed" >&2; exit 1; }
for i in 1 2 3; do
  BATCHD_API_KEY=$key /usr/bin/time -f "%e %M" -o "$work/time" "$work/batchd" reconcile --config "$work/reconcile.yaml" >"$work/out"
  read -r secs kb <"$work/time"
  awk -v s="$secs" -v kb="$kb" -v i="$i" 'BEGIN { printf "reconcile run %d: %.2f s = %.3fx the 4.995 s floor, peak RSS %.0f MB\n", i, s, s / 4.995, kb / 1024 }'
done
head -2 "$work/out"
