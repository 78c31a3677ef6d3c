#!/usr/bin/env bash
# Produce and consume throughput over SASL_SSL (SCRAM-SHA-512, TLS) against PLAINTEXT, in one run
# on one broker with both listeners: `oxbow perf produce` then `oxbow perf consume` of the same
# records, per listener, runs alternating so the machine's load falls on both. Prints each run
# and the ratios of the medians.
# Usage: bench/security.sh [records] [record-size] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
SIZE=${2:-100}
RUNS=${3:-3}
work=$(mktemp -d)
broker_pid=""
cleanup() { [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

tests/integration/gen_test_certs.sh "$work/certs" >/dev/null
plain=$(free_port)
secure=$(free_port)
listeners="PLAINTEXT://127.0.0.1:$plain,SASL_SSL://127.0.0.1:$secure"
"$OXBOW" broker --override listeners="$listeners" --override log.dirs="$work/data" \
  --override admin.listener=127.0.0.1:0 --override ssl.keystore.location="$work/certs/server-keystore.pem" \
  2>"$work/broker.log" &
broker_pid=$!
wait_for_port "$secure"
"$OXBOW" user create bench --password bench-secret --mechanism SCRAM-SHA-512 -b 127.0.0.1:$plain >/dev/null

plain_args=(-b 127.0.0.1:$plain)
secure_args=(-b 127.0.0.1:$secure -X security.protocol=SASL_SSL -X sasl.mechanism=SCRAM-SHA-512
  -X sasl.username=bench -X sasl.password=bench-secret -X ssl.ca.location="$work/certs/ca.pem")
produce() {  # topic args...
  local topic=$1; shift
  "$OXBOW" perf produce "$@" --topic "$topic" --num-records "$N" --record-size "$SIZE" --acks 1 --json 2>/dev/null |
    field records_per_sec
}
consume() {
  local topic=$1; shift
  "$OXBOW" perf consume "$@" --topic "$topic" --num-records "$N" --json 2>/dev/null | field records_per_sec
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N records of $SIZE bytes, acks=1"
pp=() pc=() sp=() sc=()
for run in $(seq "$RUNS"); do
  pp+=("$(produce "plain-$run" "${plain_args[@]}")")
  pc+=("$(consume "plain-$run" "${plain_args[@]}")")
  sp+=("$(produce "secure-$run" "${secure_args[@]}")")
  sc+=("$(consume "secure-$run" "${secure_args[@]}")")
  printf 'run %d: PLAINTEXT produce %10.0f consume %10.0f   SASL_SSL produce %10.0f consume %10.0f records/s\n' \
    "$run" "${pp[-1]}" "${pc[-1]}" "${sp[-1]}" "${sc[-1]}"
done
mpp=$(median "${pp[@]}") mpc=$(median "${pc[@]}") msp=$(median "${sp[@]}") msc=$(median "${sc[@]}")
printf 'median produce: PLAINTEXT %.0f, SASL_SSL %.0f records/s, ratio %.2f\n' "$mpp" "$msp" "$(echo "$msp / $mpp" | bc -l)"
printf 'median consume: PLAINTEXT %.0f, SASL_SSL %.0f records/s, ratio %.2f\n' "$mpc" "$msc" "$(echo "$msc / $mpc" | bc -l)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
