#!/usr/bin/env bash
# Recovery after a crash: a broker holding PARTITIONS partitions with RECORDS records of 1 KB
# (all in active segments, which recovery validates batch by batch) is killed with SIGKILL; copies
# of its log dir are then started with num.recovery.threads.per.data.dir = 1, 2 and 4, and the
# broker's own "recovered N logs in X ms" line is printed for each. The copies are read from the
# page cache (it cannot be dropped here), so the figures are CRC and parsing time, not disk time.
# Run it at least 30 s after deleting many files: ext4 then searches past recently deleted inodes
# whenever it creates one, and recovery creates a checkpoint file per partition.
# Usage: bench/recovery.sh [partitions] [records]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
PARTITIONS=${1:-1000}
RECORDS=${2:-300000}
bench_scratch

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
port=$(free_port)
start_bench_broker "$work" data "$port"
"$OXBOW" topic create -b 127.0.0.1:"$port" recover --partitions "$PARTITIONS" >/dev/null
# Every record to a random partition (librdkafka's sticky partitioner would fill a few only).
"$OXBOW" perf produce -b 127.0.0.1:"$port" --topic recover --num-records "$RECORDS" --record-size 1000 \
  --acks 1 -X sticky.partitioning.linger.ms=0 --json >/dev/null 2>&1
kill -9 "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
echo "$PARTITIONS partitions, $RECORDS records of 1 KB: $(du -sm "$work/data" | cut -f1) MB on disk"

# All copies first: files created right after many were deleted cost ext4 far more (it searches
# past recently deleted inodes), which would measure the copying rather than the recovery.
for threads in 1 2 4; do cp -a "$work/data" "$work/copy$threads"; done
sync
for threads in 1 2 4; do
  port=$(free_port)
  start_bench_broker "$work" "copy$threads" "$port" --override num.recovery.threads.per.data.dir="$threads"
  line=$(grep -o 'recovered [0-9]* logs in [0-9]* ms' "$work/copy$threads.log")
  printf 'num.recovery.threads.per.data.dir=%d: %s\n' "$threads" "$line"
  kill "${pids[-1]}"
  wait "${pids[-1]}" 2>/dev/null || true
done
