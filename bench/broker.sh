#!/usr/bin/env bash
# Broker benchmark: `oxbow perf` against a broker (and one with fsync before every ack) and against
# librdkafka's in-process mock cluster, alternating in one run, RUNS times. Prints the median of
# each figure and the ratios the broker-performance issue sets targets for.
#
# First the page cache is filled with clean pages (bench/lib.sh: fill_page_cache), as on a server
# that has run for a while; BENCH_COLD=1 skips that and measures a fresh machine's first writes.
# Usage: bench/broker.sh [records_100B] [records_1KB] [runs]   (BENCH_PAIRS: mock comparisons per run, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N_SMALL=${1:-1000000}
N_LARGE=${2:-200000}
RUNS=${3:-7}
PAIRS=${BENCH_PAIRS:-3}  # produce comparisons with the mock per run
N_CONSUME=$((N_SMALL * 5))  # a larger topic, so that client start-up weighs little
bench_scratch

start_broker() {  # data-dir extra-overrides...; sets BOOTSTRAP and BROKER_PID
  local dir=$1 port; shift
  port=$(free_port)
  "$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$dir" \
    --override admin.listener=127.0.0.1:0 "$@" 2>>"$work/broker.log" &
  BROKER_PID=$!
  pids+=("$BROKER_PID")
  wait_for_port "$port"
  BOOTSTRAP=127.0.0.1:$port
}

results=$work/results.jsonl
record() {  # label json
  echo "{\"label\": \"$1\", \"result\": $2}" >>"$results"
}
produce() {  # label target records size acks extra...
  local label=$1 target=$2 n=$3 size=$4 acks=$5; shift 5
  record "$label" "$("$OXBOW" perf produce -b "$target" --topic "bench-$RANDOM$RANDOM" --num-records "$n" \
    --record-size "$size" --acks "$acks" --json "$@" 2>/dev/null)"
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs"
if [ "${BENCH_COLD:-0}" != 1 ]; then fill_page_cache "$work"; fi

start_broker "$work/plain"
plain=$BOOTSTRAP
start_broker "$work/fsync" --override log.flush.interval.messages=1
fsync=$BOOTSTRAP
"$OXBOW" perf produce -b "$plain" --topic bench-consume --num-records "$N_CONSUME" --record-size 100 \
  --acks 1 >/dev/null 2>&1
mock=(-X test.mock.num.brokers=1)
# The two targets against the mock move most from run to run (both sides share the two cores with
# the client), so each run measures PAIRS of them, the order switching from pair to pair.
against_mock() {  # label-size record-bytes records
  local size=$1 bytes=$2 n=$3 pair
  for pair in $(seq "$PAIRS"); do
    if (( (run + pair) % 2 == 0 )); then
      produce "mock cluster $size acks=1" x "$n" "$bytes" 1 "${mock[@]}"
      produce "oxbow $size acks=1" "$plain" "$n" "$bytes" 1
    else
      produce "oxbow $size acks=1" "$plain" "$n" "$bytes" 1
      produce "mock cluster $size acks=1" x "$n" "$bytes" 1 "${mock[@]}"
    fi
  done
}
for run in $(seq "$RUNS"); do
  against_mock 100B 100 "$N_SMALL"
  produce "oxbow 100B acks=-1" "$plain" "$N_SMALL" 100 -1
  # The disk should hold only this broker's writes while its fsyncs are timed, not the write-back
  # of what the runs before left dirty.
  sync
  produce "oxbow fsync 100B acks=-1" "$fsync" "$N_SMALL" 100 -1
  against_mock 1KB 1024 "$N_LARGE"
  produce "oxbow 1KB acks=-1" "$plain" "$N_LARGE" 1024 -1
  sync
  produce "oxbow fsync 1KB acks=-1" "$fsync" "$N_LARGE" 1024 -1
  record "oxbow consume 100B" "$("$OXBOW" perf consume -b "$plain" --topic bench-consume \
    --num-records "$N_CONSUME" --json 2>/dev/null)"
  echo "run $run of $RUNS done, load $(cut -d' ' -f1 /proc/loadavg)"
done
produce "oxbow 10k/s 100B acks=1 (latency)" "$plain" 100000 100 1 --throughput 10000 -X linger.ms=0
for p in "${pids[@]}"; do kill "$p"; wait "$p" || true; done
pids=()

# 10,000 partitions: creation, clean restart time and resident memory.
start_broker "$work/10k"
t0=$(date +%s%N)
"$OXBOW" topic create bench-10k --partitions 10000 -b "$BOOTSTRAP" >/dev/null 2>&1
create_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
"$OXBOW" perf produce -b "$BOOTSTRAP" --topic bench-10k --num-records 100000 --record-size 100 --acks 1 \
  -X partitioner=random -X linger.ms=100 >/dev/null 2>&1
kill "$BROKER_PID"; wait "$BROKER_PID" || true
t0=$(date +%s%N)
start_broker "$work/10k"
start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
rss_idle=$(awk '/VmRSS/ {print $2}' "/proc/$BROKER_PID/status")
"$OXBOW" perf consume -b "$BOOTSTRAP" --topic bench-10k --num-records 100000 >/dev/null 2>&1 || true
rss_read=$(awk '/VmRSS/ {print $2}' "/proc/$BROKER_PID/status")

echo
/usr/bin/python3 bench/broker_table.py "$results"
echo "10,000 partitions: created in ${create_ms} ms; clean start-up ${start_ms} ms;" \
  "RSS $((rss_idle / 1024)) MB idle, $((rss_read / 1024)) MB after reading all partitions"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
