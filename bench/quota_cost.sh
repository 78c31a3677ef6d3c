#!/usr/bin/env bash
# Cost of client quotas: `oxbow perf produce` and `perf consume` against a broker with no quota and
# one whose default user has byte-rate and request-time quotas set far above what the bench can
# reach (so every request resolves and records its quotas, and none is throttled), runs
# alternating. Prints each run and the ratios of the medians.
# Usage: bench/quota_cost.sh [records] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
RUNS=${2:-3}
bench_scratch

open_port=$(free_port)
quota_port=$(free_port)
start_bench_broker "$work" open "$open_port"
start_bench_broker "$work" quota "$quota_port"
"$OXBOW" quota set -b 127.0.0.1:$quota_port --user-default producer_byte_rate=1000000000000 \
  consumer_byte_rate=1000000000000 request_percentage=1000000 >/dev/null

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N records of 100 bytes, acks=1"
compare_brokers "no quotas" "$open_port" "quotas" "$quota_port" "$N" "$RUNS"
admin=$(grep -o 'admin API on http://[0-9.:]*' "$work/quota.log" | head -1 | sed 's/admin API on //')
throttled=$(curl -s "$admin/metrics" | awk '/^oxbow_quota_throttled_total/ {s += $2} END {print s + 0}')
[ "$throttled" = 0 ] || { echo "the quota broker throttled $throttled responses: the quotas were not out of reach"; exit 1; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
