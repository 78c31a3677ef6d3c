#!/usr/bin/env bash
# SQL server benchmark (issue 43), on one fresh broker and one `oxbow sql-server`:
#   pull   random key lookups on a CREATE TABLE ... GROUP BY of SQL_SERVER_BENCH_KEYS keys from 1,
#          10 and 100 clients (POST /query, a connection per request), against the same count
#          written by hand in the Streams DSL and served by the Streams REST helper (ratio of
#          lookups/s: SQL / hand);
#   push   end-to-end latency of a push query (POST /query) at SQL_SERVER_BENCH_RATE records/s,
#          against a hand-written Streams foreach over the same records at the same time;
#   queries  the server's RSS and CPU with 10 and 100 persistent queries (each a CREATE STREAM
#          ... AS SELECT with its own filter over one source), and the cost per query between them;
#   shared   the RSS and threads of a fresh server with SQL_SERVER_BENCH_SHARED_QUERIES queries,
#          each a CREATE STREAM ... AS SELECT over a topic of its own, with
#          ksql.runtime.feature.shared.enabled false (a KafkaStreams per query) and true (named
#          topologies of one shared runtime).
# The numbers come from bench/sql_server_load.cpp and /proc. Usage: bench/sql_server.sh
#   (environment: SQL_SERVER_BENCH_KEYS, 1,000,000; SQL_SERVER_BENCH_SECONDS per measurement, 10;
#   SQL_SERVER_BENCH_RATE, 10,000; SQL_SERVER_BENCH_QUERIES, "10 100";
#   SQL_SERVER_BENCH_SHARED_QUERIES, "10 100"; BUILD build dir; BUILD_JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
KEYS=${SQL_SERVER_BENCH_KEYS:-1000000}
SECONDS_EACH=${SQL_SERVER_BENCH_SECONDS:-10}
RATE=${SQL_SERVER_BENCH_RATE:-10000}
QUERY_COUNTS=${SQL_SERVER_BENCH_QUERIES:-10 100}
SHARED_COUNTS=${SQL_SERVER_BENCH_SHARED_QUERIES:-10 100}

bench_scratch
cmake --build "$BUILD" --target sql_server_load oxbow -j "${BUILD_JOBS:-$(nproc)}" >"$work/build.log" 2>&1 ||
  { tail -n 20 "$work/build.log"; exit 1; }

port=$(free_port)
start_bench_broker "$work" broker "$port" --override group.initial.rebalance.delay.ms=0 \
  --override num.partitions=4
BOOTSTRAP=127.0.0.1:$port
start_bench_sql_server "$work"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $KEYS keys, $SECONDS_EACH s" \
  "per measurement, push at $RATE records/s"

"$BUILD/bench/sql_server_load" --bootstrap-server "$BOOTSTRAP" --sql-url "$SQL" \
  --state-dir "$work/load-state" --keys "$KEYS" --seconds "$SECONDS_EACH" --rate "$RATE" \
  2>"$work/load.log" | grep '^{' || { tail -n 20 "$work/load.log" "$work/sql-server.log"; exit 1; }

ksql() {
  curl -sf "${2:-$SQL}/ksql" -H 'Content-Type: application/vnd.ksql.v1+json' \
    -d "{\"ksql\": \"$1\", \"streamsProperties\": {}}" >/dev/null
}
rss_kib() { awk '/^VmRSS/ {print $2}' /proc/"${1:-$sql_pid}"/status; }
cpu_ticks() { awk '{print $14 + $15}' /proc/"$sql_pid"/stat; }
ksql "CREATE STREAM many_src (id STRING KEY, v INT) WITH (kafka_topic='many-src', value_format='JSON', partitions=4);"
made=0
for count in $QUERY_COUNTS; do
  start=$(date +%s.%N)
  while [ "$made" -lt "$count" ]; do
    ksql "CREATE STREAM many_$made AS SELECT * FROM many_src WHERE v > $made;"
    made=$((made + 1))
  done
  created=$(echo "$(date +%s.%N) - $start" | bc)
  sleep 10 # settle: every query's group joined and its threads idle
  before=$(cpu_ticks)
  sleep 10
  cpu=$(echo "($(cpu_ticks) - $before) / $(getconf CLK_TCK) / 10" | bc -l)
  printf '{"queries": %d, "rss_mib": %.0f, "idle_cpu_cores": %.2f, "threads": %d, "seconds_to_create_last_batch": %.1f}\n' \
    "$count" "$(echo "$(rss_kib) / 1024" | bc -l)" "$cpu" "$(ls /proc/"$sql_pid"/task | wc -l)" "$created"
done
# The server first, while the broker still answers its queries' last commits.
kill "$sql_pid" && wait "$sql_pid" || true

# N queries over N topics, on a server of its own (service id and state) per setting.
for shared in false true; do
  port_s=$(free_port)
  "$OXBOW" sql-server -o listeners=http://127.0.0.1:"$port_s" -o bootstrap.servers="$BOOTSTRAP" \
    -o ksql.service.id="shared_$shared" -o ksql.streams.state.dir="$work/state-shared-$shared" \
    -o ksql.runtime.feature.shared.enabled="$shared" >"$work/sql-server-shared-$shared.log" 2>&1 &
  pid_s=$!
  pids+=("$pid_s")
  wait_for_port "$port_s"
  url=http://127.0.0.1:$port_s
  made=0
  for count in $SHARED_COUNTS; do
    start=$(date +%s.%N)
    while [ "$made" -lt "$count" ]; do
      ksql "CREATE STREAM own_$made (id STRING KEY, v INT) WITH (kafka_topic='own-$shared-$made', value_format='JSON', partitions=4);" "$url"
      ksql "CREATE STREAM own_out_$made AS SELECT * FROM own_$made WHERE v > 0;" "$url"
      made=$((made + 1))
    done
    created=$(echo "$(date +%s.%N) - $start" | bc)
    sleep 10 # settle, as above
    printf '{"shared_runtimes": %s, "queries": %d, "rss_mib": %.0f, "threads": %d, "seconds_to_create_last_batch": %.1f}\n' \
      "$shared" "$count" "$(echo "$(rss_kib "$pid_s") / 1024" | bc -l)" "$(ls /proc/"$pid_s"/task | wc -l)" "$created"
  done
  kill "$pid_s" && wait "$pid_s" || true
done
