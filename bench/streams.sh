#!/usr/bin/env bash
# Streams benchmark: oxbow-streams applications (bench/streams_apps.cpp) against a plain librdkafka
# consume-produce pipe with the same client settings (bench/streams_pipe.cpp), on one fresh broker:
#   raw pipe, stateless at least once, word count at least once and exactly once (exactly_once_v2),
#   then restoration: a store of STREAMS_BENCH_RESTORE_KEYS keys restored from its changelog after
#   its state directory is deleted, against a plain consumer reading that changelog, and the
#   restart that keeps the state directory (nothing to restore).
# Prints records/s, CPU seconds and records per CPU-second of each run, and the ratios the Streams
# performance targets are set on. As bench/broker.sh, it fills the page cache first (BENCH_COLD=1
# skips that).
# Usage: bench/streams.sh   (environment: STREAMS_BENCH_RECORDS input records, 2,000,000;
#   STREAMS_BENCH_RESTORE_KEYS, 1,000,000; STREAMS_BENCH_CONFIG="KEY=VALUE ...", settings given to
#   every application and to the pipe, e.g. consumer.queued.min.messages=1000000;
#   STREAMS_BENCH_KEEP=1 keeps the scratch dir and its logs; BUILD build dir; BUILD_JOBS)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
N=${STREAMS_BENCH_RECORDS:-2000000}
R=${STREAMS_BENCH_RESTORE_KEYS:-1000000}
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
  "$R keys to restore${settings[*]:+, settings: ${settings[*]}}"
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
  wordcount-eos-output uniquekeys-output; do
  "$OXBOW" topic create "$t" --partitions "$PARTITIONS" -b "$BOOTSTRAP" >/dev/null
done
log=$work/load.log
"$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic input --records "$N" 2>>"$log"
"$PIPE" load --bootstrap-server "$BOOTSTRAP" --topic restore-input --records "$R" --distinct 2>>"$log"
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

app() {  # label mode guarantee app-id input output records
  log=$work/$4-$(date +%s%N).log
  "$APPS" "$2" --bootstrap-server "$BOOTSTRAP" --application-id "$4" --state-dir "$work/state" \
    --processing-guarantee "$3" --input "$5" --output "$6" --records "$7" \
    ${config[@]+"${config[@]}"} >"$log" 2>&1
  record "$1"
  echo "$1 done, load $(cut -d' ' -f1 /proc/loadavg)"
}
app "stateless ALOS" stateless at_least_once bench-stateless input stateless-output "$N"
app "wordcount ALOS" wordcount at_least_once bench-wordcount-alos input wordcount-alos-output "$N"
app "wordcount EOS" wordcount exactly_once_v2 bench-wordcount-eos input wordcount-eos-output "$N"

# Restoration. Word count's changelog holds one record per distinct word, too few to time, so a
# store of R distinct keys is built first; its changelog is then read by a plain consumer, and the
# application is started again on no new input, with its state directory deleted and then kept.
app "uniquekeys ALOS" uniquekeys at_least_once bench-uniquekeys restore-input uniquekeys-output "$R"
log=$work/consume.log
"$PIPE" consume --bootstrap-server "$BOOTSTRAP" --topic bench-uniquekeys-counts-changelog \
  ${config[@]+"${config[@]}"} >"$log" 2>&1
record "changelog consume"

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
rm -rf "$work/state/bench-uniquekeys"
restart "restore (state dir deleted)"
restart "restart (state dir kept)"

for p in "${pids[@]}"; do kill "$p"; wait "$p" || true; done
pids=()
log=

echo
/usr/bin/python3 - "$results" "$R" <<'EOF'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    runs[entry["label"]] = entry["result"]
keys = int(sys.argv[2])

print("| run | records | records/s | seconds | close ms | CPU s | records/CPU-s | max RSS MB |")
print("|---|---|---|---|---|---|---|---|")
for label in ["raw pipe", "stateless ALOS", "wordcount ALOS", "wordcount EOS", "uniquekeys ALOS",
              "changelog consume"]:
    r = runs[label]
    print(f"| {label} | {r['records']:,} | {r['records_per_sec']:,.0f} | {r['seconds']:.2f} | "
          f"{r['close_ms']:,.0f} | {r['cpu_seconds']:.2f} | {r['records_per_cpu_sec']:,.0f} | "
          f"{r['max_rss_mb']} |")
for label in ["restore (state dir deleted)", "restart (state dir kept)"]:
    r = runs[label]
    print(f"| {label} | {r['restored']:,} restored | {r['records_per_sec']:,.0f} | "
          f"{r['restore_ms'] / 1000:.2f} restoring | {r['close_ms']:,.0f} | | | |")

raw = runs["raw pipe"]["records_per_sec"]
alos = runs["wordcount ALOS"]["records_per_sec"]
restore = runs["restore (state dir deleted)"]
changelog = runs["changelog consume"]
print()
print("| measure | result | target |")
print("|---|---|---|")
def row(name, value, target):
    print(f"| {name} | {value:.2f} | {target} |")
row("stateless ALOS / raw pipe", runs["stateless ALOS"]["records_per_sec"] / raw, "≥ 0.9")
row("wordcount ALOS / raw pipe (input records/s)", alos / raw, "≥ 0.5")
row("wordcount EOS / wordcount ALOS", runs["wordcount EOS"]["records_per_sec"] / alos, "≥ 0.8")
row("restore / raw changelog consume", restore["records_per_sec"] / changelog["records_per_sec"],
    "≥ 0.5")
print()
for label in ["wordcount ALOS", "wordcount EOS"]:
    r = runs[label]
    words = r["repartitioned"] / r["seconds"]
    print(f"{label} also wrote and read {r['repartitioned']:,} words through its repartition "
          f"topic: {words:,.0f}/s, {words / raw:.2f} times the raw pipe's records/s")
print()
print("records per CPU-second: " + ", ".join(
    f"{label} {runs[label]['records_per_cpu_sec']:,.0f}"
    for label in ["raw pipe", "stateless ALOS", "wordcount ALOS", "wordcount EOS",
                  "uniquekeys ALOS"]))
for label in ["restore (state dir deleted)", "restart (state dir kept)"]:
    r = runs[label]
    print(f"{label}: RUNNING {r['start_to_running_ms']:,.0f} ms after start(): group joined and "
          f"tasks created (stores opened) after {r['join_and_open_ms']:,.0f} ms, then "
          f"{r['restored']:,} records restored into {r['stores']} stores in "
          f"{r['restore_ms']:,.0f} ms")
if changelog["records"] != keys or restore["restored"] != keys:
    print(f"warning: the changelog holds {changelog['records']:,} records and "
          f"{restore['restored']:,} were restored, for {keys:,} keys")
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
