#!/usr/bin/env bash
# Issue 43's goal: many simple persistent queries on one `oxbow sql-server`. One broker, one
# server with ksql.runtime.feature.shared.enabled=true, one source stream over a topic of
# SQL_THOUSAND_PARTITIONS partitions, and SQL_THOUSAND_QUERIES queries over it, each
# `CREATE STREAM q_<i> AS SELECT * FROM views WHERE v = <i>` (ksqlDB's guidance stops near 100
# queries a server; each of its queries is a Kafka Streams application of its own). At each step
# of SQL_THOUSAND_STEPS it prints the server's RSS and threads and the time the step's CREATEs
# took, then the server's CPU (in cores) over SQL_THOUSAND_IDLE_SECONDS with no input; at the end
# it produces SQL_THOUSAND_RECORDS records (v spread over the queries) and polls
# until every query's output holds exactly its records, then prints the RSS again. For the
# baseline, bench/sql_server.sh's "queries" and "shared" steps give a KafkaStreams per query.
# Usage: bench/sql_thousand.sh (environment: SQL_THOUSAND_QUERIES 1000, SQL_THOUSAND_STEPS
#   "100 250 500 1000", SQL_THOUSAND_PARTITIONS 4, SQL_THOUSAND_RECORDS 20000,
#   SQL_THOUSAND_IDLE_SECONDS 10; BUILD)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
QUERIES=${SQL_THOUSAND_QUERIES:-1000}
STEPS=${SQL_THOUSAND_STEPS:-100 250 500 1000}
PARTITIONS=${SQL_THOUSAND_PARTITIONS:-4}
RECORDS=${SQL_THOUSAND_RECORDS:-20000}
IDLE_SECONDS=${SQL_THOUSAND_IDLE_SECONDS:-10}

bench_scratch
port=$(free_port)
start_bench_broker "$work" broker "$port" --override group.initial.rebalance.delay.ms=0
BOOTSTRAP=127.0.0.1:$port
start_bench_sql_server "$work" -o ksql.runtime.feature.shared.enabled=true \
  -o ksql.streams.auto.offset.reset=earliest
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $QUERIES queries over one" \
  "topic of $PARTITIONS partitions, $RECORDS records"

ksql() {
  curl -sf "$SQL/ksql" -H 'Content-Type: application/vnd.ksql.v1+json' \
    -d "{\"ksql\": \"$1\", \"streamsProperties\": {}}" >/dev/null ||
    { echo "failed: $1" >&2; tail -n 20 "$work/sql-server.log" >&2; exit 1; }
}
rss_mib() { awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' /proc/"$sql_pid"/status; }
threads() { ls /proc/"$sql_pid"/task | wc -l; }
cpu_ticks() { awk '{print $14 + $15}' /proc/"$sql_pid"/stat; }
# The server's CPU over IDLE_SECONDS with its queries running and no input, in cores.
idle_cores() {
  local before after
  before=$(cpu_ticks)
  sleep "$IDLE_SECONDS"
  after=$(cpu_ticks)
  echo "scale=3; ($after - $before) / $(getconf CLK_TCK) / $IDLE_SECONDS" | bc
}

ksql "CREATE STREAM views (id STRING KEY, v INT) WITH (kafka_topic='views', value_format='JSON', partitions=$PARTITIONS);"
made=0
for step in $STEPS; do
  [ "$step" -le "$QUERIES" ] || break
  start=$(date +%s.%N)
  while [ "$made" -lt "$step" ]; do
    ksql "CREATE STREAM q_$made WITH (partitions=1) AS SELECT * FROM views WHERE v = $made;"
    made=$((made + 1))
  done
  created=$(echo "$(date +%s.%N) - $start" | bc)
  printf '{"queries": %d, "rss_mib": %s, "threads": %d, "seconds_to_create_step": %.1f, "idle_cores": %s}\n' \
    "$made" "$(rss_mib)" "$(threads)" "$created" "$(idle_cores)"
done

# Every query's output holds exactly the records with its v.
start=$(date +%s.%N)
/usr/bin/python3 - "$BOOTSTRAP" "$made" "$RECORDS" <<'PY'
import json, sys, time
from confluent_kafka import Consumer, Producer
bootstrap, queries, records = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
for n in range(records):
    p.produce("views", key=f"k{n}", value=json.dumps({"V": n % queries}))
    p.poll(0)
assert p.flush(60) == 0
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "thousand-check", "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "topic.metadata.refresh.interval.ms": 2000})
c.subscribe(["^Q_[0-9]+$"])
got, wrong, deadline = 0, 0, time.monotonic() + 600
while got < records and time.monotonic() < deadline:
    for m in c.consume(10000, 1.0):
        if m.error():
            continue
        got += 1
        if json.loads(m.value())["V"] != int(m.topic()[2:]):
            wrong += 1
print(json.dumps({"outputs_records": got, "expected": records, "in_the_wrong_query": wrong}))
sys.exit(0 if got == records and wrong == 0 else 1)
PY
printf '{"queries": %d, "rss_mib_after_records": %s, "threads": %d, "seconds_to_all_outputs": %.1f, "load": "%s"}\n' \
  "$made" "$(rss_mib)" "$(threads)" "$(echo "$(date +%s.%N) - $start" | bc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
kill "$sql_pid" && wait "$sql_pid" || true
