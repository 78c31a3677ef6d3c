#!/usr/bin/env bash
# Transactional produce against plain idempotent produce, 100-byte records in transactions of
# 1,000, one partition, acks=all, in one run. Runs alternate to spread the machine's load:
#   - `oxbow perf produce` (librdkafka) against the broker,
#   - the same client against librdkafka's in-process mock cluster: the client's own ceiling,
#   - kafkajs (bench/txn_kafkajs.mjs) against the broker: a client that registers a transaction's
#     partition at once, where librdkafka 2.0 waits a millisecond on a timer.
# Prints each run, the ratios of the medians, and the broker's own time per transaction (queue,
# handling and send of AddPartitionsToTxn and EndTxn, from its request metrics).
# Usage: bench/txn.sh [records] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
RUNS=${2:-3}
TXN_SIZE=1000
work=$(mktemp -d)
broker_pid=""
cleanup() { [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=$(free_port)
admin=$(free_port)
"$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
  --override admin.listener=127.0.0.1:$admin 2>"$work/broker.log" &
broker_pid=$!
wait_for_port "$port"

perf() {  # bootstrap topic extra...
  local target=$1 topic=$2; shift 2
  "$OXBOW" perf produce -b "$target" --topic "$topic" --num-records "$N" --record-size 100 --acks all --json "$@" \
    2>/dev/null | field records_per_sec
}
mock=(-X test.mock.num.brokers=1)
# Seconds the broker spent on the transaction requests so far: queue + local + send time.
txn_request_seconds() {
  curl -s "http://127.0.0.1:$admin/metrics" | awk '
    /^oxbow_request_(queue|local|send)_seconds_sum\{api="(AddPartitionsToTxn|EndTxn)"\}/ { s += $2 }
    /^oxbow_requests_total\{api="EndTxn"\}/ { n = $2 }
    END { printf "%.9f %d\n", s, n }'
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N records, $TXN_SIZE per transaction"
idem=() txn=() midem=() mtxn=() jidem=() jtxn=()
txn_seconds=0 txn_count=0
for run in $(seq "$RUNS"); do
  idem+=("$(perf 127.0.0.1:$port "idem-$run" -X enable.idempotence=true)")
  read -r s0 n0 < <(txn_request_seconds)
  txn+=("$(perf 127.0.0.1:$port "txn-$run" --transactional-id "bench-$run" --transaction-size $TXN_SIZE)")
  read -r s1 n1 < <(txn_request_seconds)
  txn_seconds=$(echo "$txn_seconds + $s1 - $s0" | bc -l) txn_count=$((txn_count + n1 - n0))
  midem+=("$(perf x "idem-$run" -X enable.idempotence=true "${mock[@]}")")
  mtxn+=("$(perf x "txn-$run" --transactional-id "bench-$run" --transaction-size $TXN_SIZE "${mock[@]}")")
  js=$(node bench/txn_kafkajs.mjs 127.0.0.1:$port "$((N / 4))" $TXN_SIZE)
  jidem+=("$(echo "$js" | head -1 | field records_per_sec)")
  jtxn+=("$(echo "$js" | tail -1 | field records_per_sec)")
  printf 'run %d (records/s, idempotent / transactional): librdkafka->oxbow %.0f / %.0f   librdkafka->mock %.0f / %.0f   kafkajs->oxbow %.0f / %.0f\n' \
    "$run" "${idem[-1]}" "${txn[-1]}" "${midem[-1]}" "${mtxn[-1]}" "${jidem[-1]}" "${jtxn[-1]}"
done
report() {  # client idempotent-median transactional-median [note]
  printf 'transactional / idempotent, %-20s %.2f (medians %.0f / %.0f records/s)%s\n' "$1:" "$(echo "$3 / $2" | bc -l)" \
    "$3" "$2" "${4:-}"
}
report "librdkafka -> oxbow" "$(median "${idem[@]}")" "$(median "${txn[@]}")"
report "librdkafka -> mock" "$(median "${midem[@]}")" "$(median "${mtxn[@]}")"
report "kafkajs -> oxbow" "$(median "${jidem[@]}")" "$(median "${jtxn[@]}")" "  (target >= 0.7)"
echo "broker time per transaction (AddPartitionsToTxn + EndTxn: queue, handling, send):" \
  "$(echo "$txn_seconds $txn_count" | awk '{printf "%.1f us over %d transactions", $1 / $2 * 1e6, $2}')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
