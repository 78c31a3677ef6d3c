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
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start() {  # port, name
  "$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$1 --override log.dirs="$work/$2" \
    --override admin.listener=127.0.0.1:0 >"$work/$2.log" 2>&1 &
  pids+=($!)
  wait_for_port "$1"
}
open_port=$(free_port)
quota_port=$(free_port)
start "$open_port" open
start "$quota_port" quota
"$OXBOW" quota set -b 127.0.0.1:$quota_port --user-default producer_byte_rate=1000000000000 \
  consumer_byte_rate=1000000000000 request_percentage=1000000 >/dev/null

run() {  # port topic
  local p c
  p=$("$OXBOW" perf produce -b 127.0.0.1:$1 --topic "$2" --num-records "$N" --record-size 100 --acks 1 --json 2>/dev/null | field records_per_sec)
  c=$("$OXBOW" perf consume -b 127.0.0.1:$1 --topic "$2" --num-records "$N" --json 2>/dev/null | field records_per_sec)
  echo "$p $c"
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N records of 100 bytes, acks=1"
op=() oc=() qp=() qc=()
for r in $(seq "$RUNS"); do
  read -r a b <<<"$(run "$open_port" "bench-open-$r")"; op+=("$a"); oc+=("$b")
  read -r a b <<<"$(run "$quota_port" "bench-quota-$r")"; qp+=("$a"); qc+=("$b")
  printf 'run %d: no quotas produce %10.0f consume %10.0f   quotas produce %10.0f consume %10.0f records/s\n' \
    "$r" "${op[-1]}" "${oc[-1]}" "${qp[-1]}" "${qc[-1]}"
done
printf 'median produce ratio (quotas / none) %.2f, consume ratio %.2f\n' \
  "$(echo "$(median "${qp[@]}") / $(median "${op[@]}")" | bc -l)" "$(echo "$(median "${qc[@]}") / $(median "${oc[@]}")" | bc -l)"
admin=$(grep -o 'admin API on http://[0-9.:]*' "$work/quota.log" | head -1 | sed 's/admin API on //')
throttled=$(curl -s "$admin/metrics" | awk '/^oxbow_quota_throttled_total/ {s += $2} END {print s + 0}')
[ "$throttled" = 0 ] || { echo "the quota broker throttled $throttled responses: the quotas were not out of reach"; exit 1; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
