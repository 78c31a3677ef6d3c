#!/usr/bin/env bash
# SQL benchmark: each query of the SQL engine (bench/sql_apps.cpp `sql`) against the same query
# written by hand in the Streams DSL (`hand`), over JSON and DELIMITED values, on one fresh broker
# and the same input topics, beside the raw librdkafka pipe of bench/streams.sh:
#   project   SELECT customer, item, qty * price AS total FROM orders WHERE qty > 1
#   tumbling  SELECT customer, COUNT(*) ... WINDOW TUMBLING (SIZE 1 SECOND) GROUP BY customer
#   join      orders JOIN customers (a table of SQL_BENCH_KEYS rows) ON the key
# Prints input records/s, MB/s, CPU seconds and records per CPU-second of each run, and the ratio
# of the SQL query's records/s to the hand-written one's (issue 42's goal: 0.8 or more).
# Usage: bench/sql.sh   (environment: SQL_BENCH_RECORDS orders per format, 1,000,000;
#   SQL_BENCH_KEYS customers, 10,000; SQL_BENCH_PAD, characters added to each order's item for
#   larger records, 0; SQL_BENCH_QUERIES, "project tumbling join";
#   SQL_BENCH_FORMATS, "json delimited"; BUILD build dir; BUILD_JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
N=${SQL_BENCH_RECORDS:-1000000}
KEYS=${SQL_BENCH_KEYS:-10000}
PAD=${SQL_BENCH_PAD:-0}
QUERIES=${SQL_BENCH_QUERIES:-project tumbling join}
FORMATS=${SQL_BENCH_FORMATS:-json delimited}
APPS=$BUILD/bench/sql_apps
PIPE=$BUILD/bench/streams_pipe

bench_scratch
cmake --build "$BUILD" --target sql_apps streams_pipe -j "${BUILD_JOBS:-$(nproc)}" >"$work/build.log" 2>&1 ||
  { tail -n 20 "$work/build.log"; exit 1; }

port=$(free_port)
start_bench_broker "$work" broker "$port" --override group.initial.rebalance.delay.ms=0
BOOTSTRAP=127.0.0.1:$port
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N orders per format," \
  "$KEYS customers, items padded by $PAD; queries: $QUERIES; formats: $FORMATS"

results=$work/results.jsonl
for format in $FORMATS; do
  for q in $QUERIES; do
    input=orders-$format-$q table=customers-$format-$q
    for t in "$input" "$table" "out-sql-$format-$q" "out-hand-$format-$q"; do
      "$OXBOW" topic create "$t" --partitions 3 -b "$BOOTSTRAP" >/dev/null
    done
    loaded=$("$APPS" load --bootstrap-server "$BOOTSTRAP" --query "$q" --format "$format" \
      --input "$input" --table "$table" --records "$N" --keys "$KEYS" --pad "$PAD" | grep '^{')
    bytes=$(field order_bytes <<<"$loaded")
    for mode in hand sql; do
      line=$("$APPS" "$mode" --bootstrap-server "$BOOTSTRAP" --query "$q" --format "$format" \
        --input "$input" --table "$table" --output "out-$mode-$format-$q" --records "$N" \
        --keys "$KEYS" --state-dir "$work/state-$mode" 2>"$work/$mode-$format-$q.log" | grep '^{') ||
        { tail -n 20 "$work/$mode-$format-$q.log"; exit 1; }
      line=${line%\}}", \"input_bytes\": $bytes}"
      echo "$line" >>"$results"
      echo "$line"
    done
  done
done
if [ -x "$PIPE" ]; then
  "$OXBOW" topic create pipe-out --partitions 3 -b "$BOOTSTRAP" >/dev/null
  pipe=$("$PIPE" pipe --bootstrap-server "$BOOTSTRAP" --input "orders-${FORMATS%% *}-${QUERIES%% *}" \
    --output pipe-out --group bench-pipe --records "$N" 2>"$work/pipe.log" | grep '^{')
  echo "raw pipe: $pipe"
fi

/usr/bin/python3 - "$results" "$N" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runs = {(r["mode"], r["query"], r["format"]): r for r in rows}
print(f"{'query':9} {'format':9} {'hand rec/s':>11} {'sql rec/s':>11} {'ratio':>6} "
      f"{'hand rec/cpu-s':>15} {'sql rec/cpu-s':>14} {'sql MB/s':>9} {'sql MB/cpu-s':>13} "
      f"{'B/record':>9}")
for (mode, q, f), r in runs.items():
    if mode != "sql" or ("hand", q, f) not in runs:
        continue
    h = runs[("hand", q, f)]
    print(f"{q:9} {f:9} {h['records_per_sec']:11.0f} {r['records_per_sec']:11.0f} "
          f"{r['records_per_sec'] / h['records_per_sec']:6.2f} {h['records_per_cpu_sec']:15.0f} "
          f"{r['records_per_cpu_sec']:14.0f} {r['input_bytes'] / r['seconds'] / 1e6:9.1f} "
          f"{r['input_bytes'] / r['cpu_seconds'] / 1e6:13.1f} {r['input_bytes'] / r['records']:9.0f}")
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
