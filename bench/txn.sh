#!/usr/bin/env bash
# Transactional produce against plain idempotent produce, in one run on one fresh broker:
# `oxbow perf produce` of 100-byte records, idempotent, then in transactions of 1,000 records
# (each commit waits for its records and writes a marker). Runs alternate to spread the
# machine's load over both; prints each run and the ratio of the medians.
# Usage: bench/txn.sh [records] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
RUNS=${2:-3}
work=$(mktemp -d)
broker_pid=""
cleanup() { [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=$(free_port)
"$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
  --override admin.listener=127.0.0.1:0 2>"$work/broker.log" &
broker_pid=$!
wait_for_port "$port"


echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
idem=() txn=()
for run in $(seq "$RUNS"); do
  r=$("$OXBOW" perf produce -b 127.0.0.1:$port --topic "idem-$run" --num-records "$N" --record-size 100 \
      --acks all -X enable.idempotence=true --json 2>/dev/null | field records_per_sec)
  idem+=("$r")
  t=$("$OXBOW" perf produce -b 127.0.0.1:$port --topic "txn-$run" --num-records "$N" --record-size 100 \
      --acks all --transactional-id "bench-$run" --transaction-size 1000 --json 2>/dev/null | field records_per_sec)
  txn+=("$t")
  printf 'run %d: idempotent %12.0f records/s   transactional (1,000/txn) %12.0f records/s\n' "$run" "$r" "$t"
done
mi=$(median "${idem[@]}")
mt=$(median "${txn[@]}")
printf 'median: idempotent %.0f, transactional %.0f records/s, ratio %.2f (target >= 0.7)\n' "$mi" "$mt" \
  "$(echo "$mt / $mi" | bc -l)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
