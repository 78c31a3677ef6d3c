#!/usr/bin/env bash
# Schema registry benchmark: one broker and one `oxbow registry` on it, driven by
# bench/registry_load.cpp's C++ clients (one keep-alive connection and thread each):
#   GET / (the HTTP round trip: the baseline the others are divided by), registrations (a new
#   schema each) and uncached lookups by id (GET /schemas/ids/{id}), each at 1 and 50 clients,
#   with requests/s and p50/p99 latency; then the Avro serializer and deserializer per record on an
#   impressions-like record beside compact JSON text, and the client's cached lookup by id.
# Usage: bench/registry.sh   (environment: REGISTRY_BENCH_SECONDS per run, 5;
#   REGISTRY_BENCH_RECORDS for the serde, 1,000,000; BUILD build dir)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
SECONDS_PER_RUN=${REGISTRY_BENCH_SECONDS:-5}
RECORDS=${REGISTRY_BENCH_RECORDS:-1000000}
cmake --build "$BUILD" --target oxbow registry_load >/dev/null
LOAD=$BUILD/bench/registry_load

bench_scratch
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
kafka=$(free_port)
start_bench_broker "$work" broker "$kafka" --override group.initial.rebalance.delay.ms=0
http_port=$(free_port)
"$OXBOW" registry --override listeners=http://127.0.0.1:"$http_port" \
  --override kafkastore.bootstrap.servers=127.0.0.1:"$kafka" >"$work/registry.log" 2>&1 &
pids+=($!)
wait_for_port "$http_port"
url=http://127.0.0.1:$http_port

declare -A rate
for clients in 1 50; do
  for mode in root register lookup; do
    line=$("$LOAD" http "$url" "$clients" "$SECONDS_PER_RUN" "$mode")
    echo "$line"
    rate[$mode-$clients]=$(field requests_per_sec <<<"$line")
  done
  for mode in register lookup; do
    printf '%s at %d clients: %.3f of the HTTP round trip\n' "$mode" "$clients" \
      "$(echo "${rate[$mode-$clients]} / ${rate[root-$clients]}" | bc -l)"
  done
done
line=$("$LOAD" serde "$url" "$RECORDS")
echo "$line"
for op in serialize deserialize; do
  printf 'Avro %s: %.2f x the JSON text %s\n' "$op" \
    "$(echo "$(field avro_${op}_us <<<"$line") / $(field json_${op}_us <<<"$line")" | bc -l)" "$op"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
