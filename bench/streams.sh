#!/usr/bin/env bash
# Streams benchmark: oxbow-streams applications (bench/streams_apps.cpp) against a plain librdkafka
# consume-produce pipe with the same client settings (bench/streams_pipe.cpp), on one fresh broker:
#   raw pipe, stateless at least once, word count at least once (Kafka's default 30 s commit
#   interval) and exactly once (exactly_once_v2, 100 ms), and at least once at 100 ms too: the
#   baseline exactly-once is compared with, so that the ratio is the transactions' cost alone;
#   then restoration: a store of STREAMS_BENCH_RESTORE_KEYS keys restored from its changelog after
#   its state directory is deleted, against a plain consumer reading that changelog, and the
#   restart that keeps the state directory (nothing to restore); windowed counts of keyed events
#   with event timestamps, 1 s tumbling and 10 s windows advancing by 1 s (Nexmark q5's shape);
#   a stream-table join of keyed events against a table read into its store first.
# Prints records/s, CPU seconds and records per CPU-second of each run, and the ratios to the raw
# pipe's records/s that issue 41's goals are set on (input records/s; words/s for word count;
# window updates/s for the windowed counts; the events are about the size of the pipe's lines).
# As bench/broker.sh, it fills the page cache first (BENCH_COLD=1 skips that).
# Usage: bench/streams.sh   (environment: STREAMS_BENCH_RECORDS input records, 2,000,000;
#   STREAMS_BENCH_RESTORE_KEYS, 1,000,000; STREAMS_BENCH_CONFIG="KEY=VALUE ...", settings given to
#   every application and to the pipe, e.g. consumer.queued.min.messages=1000000;
#   STREAMS_BENCH_PARTS, the parts to run besides the raw pipe, which always runs, e.g.
#     STREAMS_BENCH_PARTS="windows join": "apps restore windows join" by default (apps: stateless
#     and word count; restore: unique keys, changelog consume, restore and restart; windows:
#     tumbling and hopping counts; join: the stream-table join);
#   STREAMS_BENCH_WINDOW_RECORDS, events per windowed count, 500,000;
#   STREAMS_BENCH_KEYS, distinct keys of the events and rows of the join's table, 100,000;
#   STREAMS_BENCH_EVENTS_PER_MS, events per millisecond of event time, 5 (500,000 events: 100 s);
#   STREAMS_BENCH_JOIN_RECORDS, events joined with the table, 1,000,000;
#   STREAMS_BENCH_KEEP=1 keeps the scratch dir and its logs; BUILD build dir; BUILD_JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
N=${STREAMS_BENCH_RECORDS:-2000000}
R=${STREAMS_BENCH_RESTORE_KEYS:-1000000}
PARTS=" $(tr ',' ' ' <<<"${STREAMS_BENCH_PARTS:-apps restore windows join}") "
W=${STREAMS_BENCH_WINDOW_RECORDS:-500000}
KEYS=${STREAMS_BENCH_KEYS:-100000}
EVENTS_PER_MS=${STREAMS_BENCH_EVENTS_PER_MS:-5}
J=${STREAMS_BENCH_JOIN_RECORDS:-1000000}
part() { [[ "$PARTS" == *" $1 "* ]]; }
for p in $PARTS; do
  case $p in apps | restore | windows | join) ;; *)
    echo "STREAMS_BENCH_PARTS: no part $p (apps, restore, windows, join)" >&2
    exit 2
    ;;
  esac
done
PARTITIONS=3
read -r -a settings <<<"${STREAMS_BENCH_CONFIG:-}"
config=()
for kv in ${settings[@]+"${settings[@]}"}; do config+=(--config "$kv"); done

APPS=$BUILD/bench/streams_apps
PIPE=$BUILD/bench/streams_pipe

bench_scratch
log=  # the log of the step running now, shown if it fails
on_exit() {
  local rc=$?
  if ((rc != 0)) && [ -n "$log" ] && [ -f "$log" ]; then
    echo "--- last lines of $log:" >&2
    tail -n 20 "$log" >&2
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${STREAMS_BENCH_KEEP:-0}" = 1 ]; then echo "scratch dir kept: $work" >&2; else rm -rf "$work"; fi
}
trap on_exit EXIT

# The bench programs are not in the default build; this builds them and whatever of the library
# changed since.
log=$work/build.log
cmake --build "$BUILD" --target streams_apps streams_pipe -j "${BUILD_JOBS:-$(nproc)}" >"$log" 2>&1

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N input records," \
  "$R keys to restore, $W events per windowed count ($KEYS keys, $EVENTS_PER_MS per ms of event" \
  "time), $J events joined with $KEYS table rows; parts:$PARTS(and the raw pipe)" \
  "${settings[*]:+; settings: ${settings[*]}}"
if [ "${BENCH_COLD:-0}" != 1 ]; then fill_page_cache "$work"; fi

# As bench/broker.sh starts its brokers. Every application below is a group that is new or empty
# when it starts, and the broker's default group.initial.rebalance.delay.ms would hold each first
# assignment 3 s; none of the figures is about that wait.
port=$(free_port)
"$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/broker" \
  --override admin.listener=127.0.0.1:0 --override group.initial.rebalance.delay.ms=0 \
  >>"$work/broker.log" 2>&1 &
pids+=($!)
wait_for_port "$port"
BOOTSTRAP=127.0.0.1:$port

for t in input restore-input pipe-output stateless-output wordcount-alos-output \
  wordcount-alos100-output wordcount-eos-output uniquekeys-output events tumbling-output \
  hopping-output join-table join-stream join-output; do
  "$OXBOW" topic create "$t" --partitions "$PARTITIONS" -b "$BOOTSTRAP" >/dev/null
done
log=$work/load.log
"$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic input --records "$N" 2>>"$log"
if part restore; then
  "$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic restore-input --records "$R" --distinct \
    2>>"$log"
fi
if part windows; then
  "$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic events --records "$W" --keys "$KEYS" \
    --events-per-ms "$EVENTS_PER_MS" 2>>"$log"
fi
# The join's events are loaded once its table is in the application's store (below).
if part join; then
  "$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic join-table --records "$KEYS" --keys "$KEYS" \
    --table 2>>"$log"
fi
sed 's/^/  /' "$log"

results=$work/results.jsonl
# Appends the JSON line the bench program of this step printed in $log to the results, under
# LABEL, with the fields of EXTRA-JSON added.
record() {  # label [extra-json]
  local json
  json=$(grep '^{' "$log" | tail -n 1)
  if [ -n "${2:-}" ]; then
    json=$(/usr/bin/python3 -c 'import json, sys; a = json.loads(sys.argv[1])
a.update(json.loads(sys.argv[2])); print(json.dumps(a))' "$json" "$2")
  fi
  echo "{\"label\": \"$1\", \"result\": $json}" >>"$results"
}

log=$work/pipe.log
"$PIPE" pipe --bootstrap-server "$BOOTSTRAP" --input input --output pipe-output --group bench-pipe \
  --records "$N" ${config[@]+"${config[@]}"} >"$log" 2>&1
record "raw pipe"
echo "raw pipe done, load $(cut -d' ' -f1 /proc/loadavg)"

app() {  # label mode guarantee app-id input output records [streams_apps flags...]
  log=$work/$4-$(date +%s%N).log
  "$APPS" "$2" --bootstrap-server "$BOOTSTRAP" --application-id "$4" --state-dir "$work/state" \
    --processing-guarantee "$3" --input "$5" --output "$6" --records "$7" "${@:8}" \
    ${config[@]+"${config[@]}"} >"$log" 2>&1
  record "$1"
  echo "$1 done, load $(cut -d' ' -f1 /proc/loadavg)"
}
if part apps; then
  app "stateless ALOS" stateless at_least_once bench-stateless input stateless-output "$N"
  app "wordcount ALOS" wordcount at_least_once bench-wordcount-alos input wordcount-alos-output "$N"
  app "wordcount EOS" wordcount exactly_once_v2 bench-wordcount-eos input wordcount-eos-output "$N"
  app "wordcount ALOS 100 ms" wordcount at_least_once bench-wordcount-alos100 input \
    wordcount-alos100-output "$N" --config commit.interval.ms=100
fi

# From what the library logs (spdlog's default pattern, millisecond stamps): the time from the last
# task created to "restored N records into M stores" (the restore consumer's start, the reading of
# the changelog and the writes into the stores: the restore rate), and from start() (the first state
# transition) to the last task created (joining the group and opening each task's stores).
restore_figures() {  # log
  /usr/bin/python3 - "$1" <<'EOF'
import datetime, json, re, sys
stamp = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})\]")
def at(line):
    return datetime.datetime.strptime(stamp.match(line).group(1), "%Y-%m-%d %H:%M:%S.%f")
started = last_assigned = None
restored = stores = 0
restore_ms = open_ms = 0.0
found = False
for line in open(sys.argv[1]):
    if not stamp.match(line):
        continue
    if started is None and "State transition from CREATED" in line:
        started = at(line)
    if re.search(r"task \S+ assigned", line):
        last_assigned = at(line)
    m = re.search(r"restored (\d+) records into (\d+) stores", line)
    if m and last_assigned and started:
        found = True
        restored += int(m.group(1))
        stores += int(m.group(2))
        restore_ms += (at(line) - last_assigned).total_seconds() * 1000
        open_ms = (last_assigned - started).total_seconds() * 1000
if not found:
    sys.exit("no state transition, 'task ... assigned' and 'restored N records' lines in "
             + sys.argv[1])
print(json.dumps({"restored": restored, "stores": stores, "restore_ms": restore_ms,
                  "join_and_open_ms": open_ms,
                  "records_per_sec": restored / restore_ms * 1000 if restore_ms > 0 else 0}))
EOF
}
restart() {  # label
  log=$work/restart-$(date +%s%N).log
  "$APPS" uniquekeys --bootstrap-server "$BOOTSTRAP" --application-id bench-uniquekeys \
    --state-dir "$work/state" --input restore-input --output uniquekeys-output --records 0 \
    ${config[@]+"${config[@]}"} >"$log" 2>&1
  local figures
  figures=$(restore_figures "$log")
  record "$1" "$figures"
  echo "$1 done, load $(cut -d' ' -f1 /proc/loadavg)"
}
# Restoration. Word count's changelog holds one record per distinct word, too few to time, so a
# store of R distinct keys is built first; its changelog is then read by a plain consumer, and the
# application is started again on no new input, with its state directory deleted and then kept.
if part restore; then
  app "uniquekeys ALOS" uniquekeys at_least_once bench-uniquekeys restore-input uniquekeys-output "$R"
  log=$work/consume.log
  "$PIPE" consume --bootstrap-server "$BOOTSTRAP" --topic bench-uniquekeys-counts-changelog \
    ${config[@]+"${config[@]}"} >"$log" 2>&1
  record "changelog consume"

  rm -rf "$work/state/bench-uniquekeys"
  restart "restore (state dir deleted)"
  restart "restart (state dir kept)"
fi

# Windowed counts (streams_apps tumbling and hopping): the events' timestamps advance 1 ms every
# EVENTS_PER_MS records, in order within each partition, so windows close (no grace) and their
# segments expire as stream time moves on. Caching as by default: counts reach the output and the
# changelog when the cache evicts them or a commit flushes it.
if part windows; then
  app "tumbling count" tumbling at_least_once bench-tumbling events tumbling-output "$W"
  app "hopping count" hopping at_least_once bench-hopping events hopping-output "$W"
fi

# The stream-table join, in two runs of one application: the first reads the table's rows into its
# store (with nothing yet on the stream's topic, so no event is joined against a half-read table)
# and closes; the events are loaded then, and the second run, its state directory kept (nothing to
# restore), joins them: its rate is the join's.
if part join; then
  app "join table load" join at_least_once bench-join join-stream join-output 0 \
    --table join-table --table-records "$KEYS"
  log=$work/load-join.log
  "$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic join-stream --records "$J" --keys "$KEYS" \
    2>>"$log"
  sed 's/^/  /' "$log"
  app "stream-table join" join at_least_once bench-join join-stream join-output "$J" \
    --table join-table
fi

for p in "${pids[@]}"; do kill "$p"; wait "$p" || true; done
pids=()
log=

echo
/usr/bin/python3 - "$results" "$R" "$W" "$EVENTS_PER_MS" <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    runs[entry["label"]] = entry["result"]
keys = int(sys.argv[2])
window_records, events_per_ms = int(sys.argv[3]), int(sys.argv[4])
# Only the parts that ran have their runs.
def ran(*labels):
    return [label for label in labels if label in runs]

print("| run | records | records/s | seconds | close ms | CPU s | records/CPU-s | max RSS MB |")
print("|---|---|---|---|---|---|---|---|")
for label in ran("raw pipe", "stateless ALOS", "wordcount ALOS", "wordcount EOS",
                 "wordcount ALOS 100 ms", "uniquekeys ALOS", "changelog consume", "tumbling count",
                 "hopping count", "join table load", "stream-table join"):
    r = runs[label]
    print(f"| {label} | {r['records']:,} | {r['records_per_sec']:,.0f} | {r['seconds']:.2f} | "
          f"{r['close_ms']:,.0f} | {r['cpu_seconds']:.2f} | {r['records_per_cpu_sec']:,.0f} | "
          f"{r['max_rss_mb']} |")
for label in ran("restore (state dir deleted)", "restart (state dir kept)"):
    r = runs[label]
    print(f"| {label} | {r['restored']:,} restored | {r['records_per_sec']:,.0f} | "
          f"{r['restore_ms'] / 1000:.2f} restoring | {r['close_ms']:,.0f} | | | |")

raw = runs["raw pipe"]["records_per_sec"]
print()
print("| measure | result | target |")
print("|---|---|---|")
def row(name, value, target):
    print(f"| {name} | {value:.2f} | {target} |")
if ran("wordcount ALOS"):
    alos = runs["wordcount ALOS"]["records_per_sec"]
    row("stateless ALOS / raw pipe", runs["stateless ALOS"]["records_per_sec"] / raw, "≥ 0.9")
    words = runs["wordcount ALOS"]["repartitioned"] / runs["wordcount ALOS"]["seconds"]
    row("wordcount ALOS / raw pipe (words/s)", words / raw, "≥ 0.7")
    row("wordcount EOS / wordcount ALOS, both at 100 ms commits",
        runs["wordcount EOS"]["records_per_sec"]
        / runs["wordcount ALOS 100 ms"]["records_per_sec"], "≥ 0.9")
    row("(wordcount EOS / wordcount ALOS at its default 30 s)",
        runs["wordcount EOS"]["records_per_sec"] / alos, "")
if ran("restore (state dir deleted)"):
    restore = runs["restore (state dir deleted)"]
    changelog = runs["changelog consume"]
    row("restore / raw changelog consume",
        restore["records_per_sec"] / changelog["records_per_sec"], "≥ 0.7")
for label, name, target in [
        ("tumbling count", "tumbling count (1 s windows) / raw pipe (window updates/s)", "≥ 0.25"),
        ("hopping count", "hopping count (10 s, 1 s advance) / raw pipe (window updates/s)",
         "≥ 0.25"),
        ("stream-table join", "stream-table join / raw pipe (input records/s)", "≥ 0.5")]:
    if ran(label):
        r = runs[label]
        rate = r["window_updates"] / r["seconds"] if r.get("window_updates") else r["records_per_sec"]
        row(name, rate / raw, target)
if ran("wordcount ALOS"):
    print()
for label in ran("wordcount ALOS", "wordcount EOS", "wordcount ALOS 100 ms"):
    r = runs[label]
    words = r["repartitioned"] / r["seconds"]
    print(f"{label} also wrote and read {r['repartitioned']:,} words through its repartition "
          f"topic: {words:,.0f}/s, {words / raw:.2f} times the raw pipe's records/s")
print()
print("records per CPU-second: " + ", ".join(
    f"{label} {runs[label]['records_per_cpu_sec']:,.0f}"
    for label in ran("raw pipe", "stateless ALOS", "wordcount ALOS", "wordcount EOS",
                     "wordcount ALOS 100 ms", "uniquekeys ALOS", "tumbling count", "hopping count",
                     "stream-table join")))
for label in ran("restore (state dir deleted)", "restart (state dir kept)"):
    r = runs[label]
    print(f"{label}: RUNNING {r['start_to_running_ms']:,.0f} ms after start(): group joined and "
          f"tasks created (stores opened) after {r['join_and_open_ms']:,.0f} ms, then "
          f"{r['restored']:,} records restored into {r['stores']} stores in "
          f"{r['restore_ms']:,.0f} ms")
if ran("restore (state dir deleted)") and (changelog["records"] != keys
                                           or restore["restored"] != keys):
    print(f"warning: the changelog holds {changelog['records']:,} records and "
          f"{restore['restored']:,} were restored, for {keys:,} keys")
if ran("tumbling count", "hopping count"):
    print()
    span = window_records / events_per_ms / 1000
    for label in ran("tumbling count", "hopping count"):
        r = runs[label]
        print(f"{label}: {r['records']:,} events over {span:,.0f} s of event time, "
              f"{r['window_updates'] // r['records']} window update(s) each, "
              f"{r['window_updates'] / r['seconds']:,.0f} updates/s; per CPU-second of the "
              f"application's process {r['records_per_cpu_sec']:,.0f} events, "
              f"{r['window_updates'] / r['cpu_seconds']:,.0f} window updates")
    print("  for reference only, not a like-for-like comparison: Flink's own published Nexmark "
          "figures, on Flink's hardware and setup, are about 22 K records/s per core for q5 (hot "
          "items, a hopping-window count) and about 146 K records/s per core for q8 (a "
          "tumbling-window join); those above are one application process here, on two cores "
          "shared with the broker")
if ran("stream-table join"):
    print()
    table, join = runs["join table load"], runs["stream-table join"]
    print(f"stream-table join: the first run read the table's {table['records']:,} rows into its "
          f"store at {table['records_per_sec']:,.0f} rows/s (the first row "
          f"{table['start_to_first_row_ms']:,.0f} ms after start()); the second joined "
          f"{join['records']:,} events at {join['records_per_sec']:,.0f}/s, "
          f"{join['records_per_sec'] / raw:.2f} times the raw pipe's records/s")
    print(f"  of its {join['seconds']:.2f} s, {join['paused_ms'] / 1000:.2f} s were pauses of "
          f"100 ms or more between two joined events (the longest {join['longest_pause_ms']:,.0f} "
          f"ms)")
    if join["table_rows_read"]:
        print(f"warning: the join's second run read {join['table_rows_read']:,} more table rows")
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
