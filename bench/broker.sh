#!/usr/bin/env bash
# Broker benchmark: `oxbow perf` against a fresh broker (with and without fsync before every ack)
# and against librdkafka's in-process mock cluster, side by side in one run. Prints one table.
# Usage: bench/broker.sh [records_100B] [records_1KB]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N_SMALL=${1:-1000000}
N_LARGE=${2:-200000}
work=$(mktemp -d)
broker_pid=""
cleanup() { [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT


start_broker() {  # extra overrides...
  local port; port=$(free_port)
  rm -rf "$work/data"
  "$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
    --override admin.listener=127.0.0.1:0 "$@" \
    2>"$work/broker.log" &
  broker_pid=$!
  wait_for_port "$port"
  BOOTSTRAP=127.0.0.1:$port
}

stop_broker() { kill "$broker_pid"; wait "$broker_pid" || true; broker_pid=""; }


rows=()
run_produce() {  # label target records size acks extra...
  local label=$1 target=$2 n=$3 size=$4 acks=$5; shift 5
  local out
  out=$("$OXBOW" perf produce -b "$target" --topic "bench-$RANDOM" --num-records "$n" --record-size "$size" \
        --acks "$acks" --json "$@" 2>/dev/null)
  rows+=("$(printf '%-34s %12s %9s %8s %8s %8s' "$label" \
    "$(echo "$out" | field records_per_sec)" "$(echo "$out" | field mb_per_sec)" \
    "$(echo "$out" | field p50_ms)" "$(echo "$out" | field p99_ms)" "$(echo "$out" | field p999_ms)")")
  LAST_RPS=$(echo "$out" | field records_per_sec)
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
mock=(-X test.mock.num.brokers=1)
run_produce "mock cluster 100B acks=1" x "$N_SMALL" 100 1 "${mock[@]}"
m_small=$LAST_RPS
run_produce "mock cluster 1KB acks=1" x "$N_LARGE" 1024 1 "${mock[@]}"
m_large=$LAST_RPS

start_broker
run_produce "oxbow 100B acks=1" "$BOOTSTRAP" "$N_SMALL" 100 1
o_small=$LAST_RPS
run_produce "oxbow 100B acks=-1" "$BOOTSTRAP" "$N_SMALL" 100 -1
run_produce "oxbow 1KB acks=1" "$BOOTSTRAP" "$N_LARGE" 1024 1
o_large=$LAST_RPS
run_produce "oxbow 1KB acks=-1" "$BOOTSTRAP" "$N_LARGE" 1024 -1
# Consume a larger topic so that client start-up weighs little in the figure.
N_CONSUME=$((N_SMALL * 5))
"$OXBOW" perf produce -b "$BOOTSTRAP" --topic bench-consume --num-records "$N_CONSUME" --record-size 100 --acks 1 \
  >/dev/null 2>&1
c_out=$("$OXBOW" perf consume -b "$BOOTSTRAP" --topic bench-consume --num-records "$N_CONSUME" --json 2>/dev/null)
c_small=$(echo "$c_out" | field records_per_sec)
rows+=("$(printf '%-34s %12s %9s' "oxbow consume 100B" "$c_small" "$(echo "$c_out" | field mb_per_sec)")")
run_produce "oxbow 10k/s 100B acks=1 (latency)" "$BOOTSTRAP" 100000 100 1 --throughput 10000 -X linger.ms=0
stop_broker

start_broker --override log.flush.interval.messages=1
run_produce "oxbow fsync 100B acks=-1" "$BOOTSTRAP" "$N_SMALL" 100 -1
run_produce "oxbow fsync 1KB acks=-1" "$BOOTSTRAP" "$N_LARGE" 1024 -1
f_large=$LAST_RPS
stop_broker

# 10,000 partitions: creation, clean restart time and resident memory.
start_broker
t0=$(date +%s%N)
"$OXBOW" topic create bench-10k --partitions 10000 -b "$BOOTSTRAP" >/dev/null 2>&1
create_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
"$OXBOW" perf produce -b "$BOOTSTRAP" --topic bench-10k --num-records 100000 --record-size 100 --acks 1 \
  -X partitioner=random -X linger.ms=100 >/dev/null 2>&1
port=${BOOTSTRAP##*:}
stop_broker
t0=$(date +%s%N)
"$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
  --override admin.listener=127.0.0.1:0 \
  2>"$work/broker.log" &
broker_pid=$!
wait_for_port "$port"
start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rss_idle=$(awk '/VmRSS/ {print $2}' /proc/$broker_pid/status)
"$OXBOW" perf consume -b "$BOOTSTRAP" --topic bench-10k --num-records 100000 >/dev/null 2>&1 || true
rss_read=$(awk '/VmRSS/ {print $2}' /proc/$broker_pid/status)
stop_broker

echo
printf '%-34s %12s %9s %8s %8s %8s\n' "run" "records/s" "MB/s" "p50 ms" "p99 ms" "p99.9 ms"
for r in "${rows[@]}"; do echo "$r"; done
echo
ratio() { /usr/bin/python3 -c "print(f'{float($1)/float($2):.2f}')"; }
echo "produce 100B acks=1, oxbow / mock:   $(ratio "$o_small" "$m_small")"
echo "produce 1KB acks=1, oxbow / mock:    $(ratio "$o_large" "$m_large")"
echo "consume / produce 100B:              $(ratio "$c_small" "$o_small")"
echo "fsync 1KB acks=-1 / no-fsync 1KB acks=1: $(ratio "$f_large" "$o_large")"
echo "10,000 partitions: created in ${create_ms} ms; clean start-up ${start_ms} ms;" \
  "RSS $((rss_idle / 1024)) MB idle, $((rss_read / 1024)) MB after reading all partitions"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
