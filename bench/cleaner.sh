#!/usr/bin/env bash
# Compaction: cleaner throughput on a compacted topic of ~1 GB (1 KB records over 100,000 keys,
# 64 MB segments), and produce latency to another topic while the cleaner runs versus before.
# The topic is written with min.compaction.lag.ms high, so nothing is cleaned while producing;
# lowering it starts the pass. Throughput = bytes the pass read / time of the pass, from /metrics.
# Usage: bench/cleaner.sh [records]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
work=$(mktemp -d)
broker_pid=""
cleanup() { [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

port=$(free_port)
admin=$(free_port)
"$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
  --override admin.listener=127.0.0.1:$admin --override log.cleaner.backoff.ms=100 2>"$work/broker.log" &
broker_pid=$!
wait_for_port "$port"
B=127.0.0.1:$port

metric() { curl -s "http://127.0.0.1:$admin/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
p99() { "$OXBOW" perf produce -b "$B" --topic "$1" --num-records "$2" --record-size 100 --throughput 10000 --acks 1 \
          --json 2>/dev/null | /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print(d['p50_ms'], d['p99_ms'])"; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$OXBOW" topic create -b "$B" compacted --partitions 1 \
  --config cleanup.policy=compact --config segment.bytes=67108864 --config min.cleanable.dirty.ratio=0.1 \
  --config min.compaction.lag.ms=86400000 >/dev/null
# 100,000 keys: the producer cycles through them with a key per record.
/usr/bin/python3 - "$B" "$N" <<'PY'
import sys
from confluent_kafka import Producer
bootstrap, n = sys.argv[1], int(sys.argv[2])
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1000000,
              "queue.buffering.max.messages": 1000000, "compression.type": "none"})
value = b"v" * 1000
for i in range(n):
    while True:
        try:
            p.produce("compacted", key=b"key-%06d" % (i % 100000), value=value)
            break
        except BufferError:
            p.poll(0.05)
    if i % 10000 == 0:
        p.poll(0)
p.flush()
PY
size=$(du -sb "$work/data/compacted-0" | cut -f1)
echo "compacted topic: $N records, $((size / 1048576)) MB on disk"
# Seal the active segment by time so the whole topic is cleanable, then baseline latency.
"$OXBOW" topic alter-config -b "$B" compacted --set segment.ms=1000 >/dev/null
read -r base50 base99 < <(p99 latency-before 30000)
runs_before=$(metric oxbow_log_cleaner_runs_total)
"$OXBOW" topic alter-config -b "$B" compacted --delete min.compaction.lag.ms >/dev/null
read -r during50 during99 < <(p99 latency-during 30000)
for _ in $(seq 600); do
  [ "$(metric oxbow_log_cleaner_runs_total)" != "$runs_before" ] && break
  sleep 0.5
done
read_bytes=$(metric oxbow_log_cleaner_bytes_read_total)
written=$(metric oxbow_log_cleaner_bytes_written_total)
seconds=$(metric oxbow_log_cleaner_seconds_sum)
after=$(du -sb "$work/data/compacted-0" | cut -f1)
printf 'cleaner: read %.0f MB, wrote %.0f MB in %.2f s: %.0f MB/s; topic %d MB -> %d MB\n' \
  "$(echo "$read_bytes / 1048576" | bc -l)" "$(echo "$written / 1048576" | bc -l)" "$seconds" \
  "$(echo "$read_bytes / 1048576 / $seconds" | bc -l)" $((size / 1048576)) $((after / 1048576))
echo "produce 10k records/s of 100 B to another topic: p50/p99 ms before cleaning $base50/$base99, while cleaning $during50/$during99"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
