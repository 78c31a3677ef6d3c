#!/usr/bin/env bash
# socket.send.buffer.bytes and socket.receive.buffer.bytes: `oxbow perf produce` and `perf consume`
# against a broker with Kafka's 102400 and one with -1 (the kernel sizes the buffers itself),
# runs alternating, for N records of 100 B and N/5 of 1 KB. Prints each run and the ratios of the
# medians.
# Usage: [SIZES="100 1000"] bench/socket_buffers.sh [records] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
RUNS=${2:-3}
bench_scratch

kafka_port=$(free_port)
kernel_port=$(free_port)
start_bench_broker "$work" kafka "$kafka_port" --override socket.send.buffer.bytes=102400 \
  --override socket.receive.buffer.bytes=102400
start_bench_broker "$work" kernel "$kernel_port" --override socket.send.buffer.bytes=-1 \
  --override socket.receive.buffer.bytes=-1

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); acks=1"
for size in ${SIZES:-100 1000}; do
  compare_brokers 102400 "$kafka_port" -1 "$kernel_port" "$((size == 100 ? N : N / 5))" "$RUNS" "$size"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
