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
  n=$((size == 100 ? N : N / 5))
  ap=() ac=() bp=() bc=()
  for r in $(seq "$RUNS"); do
    read -r a b <<<"$(produce_consume_rates "$kafka_port" "bench-kafka-$size-$r" "$n" "$size")"; ap+=("$a"); ac+=("$b")
    read -r a b <<<"$(produce_consume_rates "$kernel_port" "bench-kernel-$size-$r" "$n" "$size")"; bp+=("$a"); bc+=("$b")
    printf '%4d B run %d: 102400 produce %9.0f consume %9.0f   -1 produce %9.0f consume %9.0f records/s\n' \
      "$size" "$r" "${ap[-1]}" "${ac[-1]}" "${bp[-1]}" "${bc[-1]}"
  done
  printf '%4d B: median produce ratio (-1 / 102400) %.2f, consume ratio %.2f\n' "$size" \
    "$(echo "$(median "${bp[@]}") / $(median "${ap[@]}")" | bc -l)" \
    "$(echo "$(median "${bc[@]}") / $(median "${ac[@]}")" | bc -l)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
