#!/usr/bin/env bash
# Connect benchmark (issue 44), on one fresh broker started here on free ports:
#   pipe        a file of CONNECT_BENCH_LINES lines through `oxbow connect standalone` (a
#               FileStreamSource into a topic of one partition, a FileStreamSink from it into a
#               file): the time from the worker's start until the sink's file holds every line,
#               against bench/connect_pipe.cpp's raw librdkafka pipe of the same file in the same
#               run (a producer thread reading the file line by line, a consumer thread appending
#               each value to a file), once with librdkafka's producer defaults and once with the
#               producer settings Connect's worker fixes (acks=all, one request in flight, linger 0)
#   transforms  the same worker with HoistField$Value, InsertField$Value (a static field) and
#               ExtractField$Value on the source connector (the sink's lines are the input's
#               again), against the run without: the difference per record; and the chain's cost
#               alone in process (connect_pipe chain)
#   failover    two `oxbow connect distributed` workers running a file source and a file sink;
#               the one running the source's task (or, every other time, the sink's) is killed
#               (-9) and GET /connectors/NAME/status on the survivor is polled until each of its
#               tasks is RUNNING there
# Runs alternate (raw, raw with Connect's producer settings, Connect, Connect with transforms) and
# the medians are compared. Prints the machine's load before and after.
# Usage: bash bench/connect.sh   (environment: CONNECT_BENCH_LINES, 2,000,000;
#   CONNECT_BENCH_LINE_BYTES, 100 with the newline; CONNECT_BENCH_RUNS, 3;
#   CONNECT_BENCH_PARTS, "pipe transforms failover"; CONNECT_BENCH_FAILOVERS, 4 (alternately of the source's and the sink's worker);
#   CONNECT_BENCH_FAILOVER_CONFIG="KEY=VALUE ...", laid over the failover workers' settings;
#   CONNECT_BENCH_CONFIG="KEY=VALUE ...", worker settings laid over the defaults below, the
#   producer.* and consumer.* ones given to the raw pipe too; CONNECT_BENCH_SOURCE_BATCH,
#   FileStreamSource's batch.size, 2000 (Kafka's default); CONNECT_BENCH_PROFILE=1 profiles one
#   more Connect run (not measured) with perf and prints its top symbols; CONNECT_BENCH_KEEP=1 keeps
#   the scratch dir; BENCH_COLD=1 skips filling the page cache; OXBOW_BIN; BUILD; BUILD_JOBS;
#   CONNECT_PIPE_BIN, a connect_pipe already built, not rebuilt then)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
BUILD=${BUILD:-build}
N=${CONNECT_BENCH_LINES:-2000000}
SIZE=${CONNECT_BENCH_LINE_BYTES:-100}
RUNS=${CONNECT_BENCH_RUNS:-3}
FAILOVERS=${CONNECT_BENCH_FAILOVERS:-4}
SOURCE_BATCH=${CONNECT_BENCH_SOURCE_BATCH:-2000}
PARTS=" $(tr ',' ' ' <<<"${CONNECT_BENCH_PARTS:-pipe transforms failover}") "
part() { [[ "$PARTS" == *" $1 "* ]]; }
PIPE=${CONNECT_PIPE_BIN:-$BUILD/bench/connect_pipe}
HELPER=bench/connect_bench.py
STRING=org.apache.kafka.connect.storage.StringConverter

# The worker's settings: offsets (and so the sink's file) flushed each second rather than Kafka's
# 60 s, so that the last lines reach the file soon after they are read; the producer lingering
# 5 ms (librdkafka's default; the runtime sets Kafka's 0) into batches of up to 1 MB, which took
# the broker's CPU from 1.6 to 0.3 s and the worker's from 6.7 to 4.8 s per million lines here.
# The raw pipe gets the same producer.* and consumer.* settings.
read -r -a settings <<<"offset.flush.interval.ms=1000 producer.linger.ms=5 producer.batch.size=1000000 ${CONNECT_BENCH_CONFIG:-}"
client_config=()  # the raw pipe's --config flags: the worker's producer.* and consumer.*
for kv in "${settings[@]}"; do
  case $kv in producer.* | consumer.*) client_config+=(--config "$kv") ;; esac
done

bench_scratch
log=
on_exit() {
  local rc=$?
  if ((rc != 0)) && [ -n "$log" ] && [ -f "$log" ]; then
    echo "--- last lines of $log:" >&2
    tail -n 20 "$log" >&2
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${CONNECT_BENCH_KEEP:-0}" = 1 ]; then echo "scratch dir kept: $work" >&2; else rm -rf "$work"; fi
}
trap on_exit EXIT

# connect_pipe is not in the default build; this builds it and whatever of the library changed
# since, unless CONNECT_PIPE_BIN names one already built.
log=$work/build.log
if [ -z "${CONNECT_PIPE_BIN:-}" ]; then
  cmake --build "$BUILD" --target connect_pipe -j "${BUILD_JOBS:-$(nproc)}" >"$log" 2>&1
fi

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N lines of $SIZE bytes," \
  "$RUNS runs each; parts:$PARTS; worker settings: ${settings[*]}; source batch.size=$SOURCE_BATCH"
if [ "${BENCH_COLD:-0}" != 1 ]; then fill_page_cache "$work"; fi

# Every consumer here is a new group's only member: the broker's default 3 s initial rebalance
# delay would be in every figure. Sessions may be as short as failover's workers want.
port=$(free_port)
log=$work/broker.log
start_bench_broker "$work" broker "$port" --override group.initial.rebalance.delay.ms=0 \
  --override group.min.session.timeout.ms=500
broker_pid=${pids[-1]}
BOOTSTRAP=127.0.0.1:$port

input=$work/input.txt
if part pipe || part transforms; then
  "$PIPE" lines --file "$input" --lines "$N" --size "$SIZE"
  BYTES=$(stat -c %s "$input")
fi

results=$work/results.jsonl
cpu_of() { /usr/bin/python3 -c "import sys; sys.path.insert(0, 'bench'); import connect_bench as c
print(c.cpu_seconds($1))"; }

new_topic() {  # name
  "$OXBOW" topic create "$1" --partitions 1 -b "$BOOTSTRAP" >/dev/null
}

raw_run() {  # label name [--config K=V ...]
  local label=$1 name=$2 before after json
  shift 2
  new_topic "$name"
  log=$work/$name.log
  before=$(cpu_of "$broker_pid")
  json=$("$PIPE" pipe --bootstrap-server "$BOOTSTRAP" --topic "$name" --group "$name" \
    --file "$input" --output "$work/$name-out.txt" "$@" ${client_config[@]+"${client_config[@]}"} \
    2>"$log")
  after=$(cpu_of "$broker_pid")
  [ "$(stat -c %s "$work/$name-out.txt")" = "$BYTES" ] || {
    echo "$label: the output is not the input's size" >&2
    exit 1
  }
  rm -f "$work/$name-out.txt"
  /usr/bin/python3 -c 'import json, sys; r = json.loads(sys.argv[2])
r["broker_cpu_seconds"] = float(sys.argv[3]) - float(sys.argv[4])
print(json.dumps({"label": sys.argv[1], "result": r}))' "$label" "$json" "$after" "$before" \
    >>"$results"
}

connect_run() {  # label name [transforms: connector property lines]
  local label=$1 name=$2 perf=()
  shift 2
  # A profiled run is not measured: perf's sampling slows the worker.
  if [ "$label" = profile ]; then perf=(--perf "$work/connect.perf"); fi
  new_topic "$name"
  local worker=$work/$name-worker.properties out=$work/$name-out.txt
  {
    echo "bootstrap.servers=$BOOTSTRAP"
    echo "key.converter=$STRING"
    echo "value.converter=$STRING"
    echo "offset.storage.file.filename=$work/$name.offsets"
    echo "listeners=http://127.0.0.1:$(free_port)"
    printf '%s\n' "${settings[@]}"
  } >"$worker"
  printf '%s\n' "name=source" "connector.class=FileStreamSource" "file=$input" "topic=$name" \
    "batch.size=$SOURCE_BATCH" "$@" >"$work/$name-source.properties"
  printf '%s\n' "name=sink" "connector.class=FileStreamSink" "topics=$name" "file=$out" \
    >"$work/$name-sink.properties"
  log=$work/$name.log
  json=$(/usr/bin/python3 "$HELPER" standalone --oxbow "$OXBOW" --worker "$worker" \
    --connector "$work/$name-source.properties" --connector "$work/$name-sink.properties" \
    --output "$out" --bytes "$BYTES" --log "$log" --broker-pid "$broker_pid" \
    ${perf[@]+"${perf[@]}"})
  rm -f "$out"
  if [ "$label" != profile ]; then echo "{\"label\": \"$label\", \"result\": $json}" >>"$results"; fi
}

TRANSFORMS=("transforms=hoist,insert,extract"
  'transforms.hoist.type=org.apache.kafka.connect.transforms.HoistField$Value'
  "transforms.hoist.field=line"
  'transforms.insert.type=org.apache.kafka.connect.transforms.InsertField$Value'
  "transforms.insert.static.field=origin" "transforms.insert.static.value=bench"
  'transforms.extract.type=org.apache.kafka.connect.transforms.ExtractField$Value'
  "transforms.extract.field=line")

if part pipe || part transforms; then
  for r in $(seq "$RUNS"); do
    if part pipe; then
      raw_run "raw librdkafka" "raw-$r"
      raw_run "raw, Connect's producer settings" "raw-connect-settings-$r" --config producer.acks=all \
        --config producer.max.in.flight.requests.per.connection=1 --config producer.linger.ms=0
    fi
    connect_run "Connect" "connect-$r"
    if part transforms; then connect_run "Connect, 3 transforms" "transforms-$r" "${TRANSFORMS[@]}"; fi
    echo "run $r done, load $(cut -d' ' -f1 /proc/loadavg)"
  done
fi

if [ "${CONNECT_BENCH_PROFILE:-0}" = 1 ]; then
  connect_run profile profile
  # Samples with their DWARF call stacks: the self time of each symbol, then what each of the
  # tasks' own functions costs with what it calls.
  profile() { perf report -i "$work/connect.perf" "$@" --stdio 2>/dev/null | grep -v '^#' |
    grep -v -e '^$' -e '(inlined)' | cut -c1-150 | sed 's/ *$//'; }
  echo "perf profile of one more Connect run, self time:"
  profile --no-children -g none --sort dso,symbol | head -n 30 || true
  echo "with what they call (the worker's own functions):"
  profile --children -g none --sort symbol --dsos liboxbow-connect.so.0 | head -n 40 || true
fi

chain_ns=
if part transforms; then
  chain_args=()
  for kv in "${TRANSFORMS[@]}"; do chain_args+=(--config "$kv"); done
  none=$("$PIPE" chain --lines 1000000 --size "$SIZE" | field ns_per_record)
  three=$("$PIPE" chain --lines 1000000 --size "$SIZE" "${chain_args[@]}" | field ns_per_record)
  chain_ns="$none $three"
fi

if [ -f "$results" ]; then
  echo
  /usr/bin/python3 - "$results" "$N" "$BYTES" "$chain_ns" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    runs.setdefault(entry["label"], []).append(entry["result"])
n, size = int(sys.argv[2]), int(sys.argv[3])
med = {label: {k: statistics.median(r[k] for r in rs) for k in ("seconds", "cpu_seconds",
                                                                   "broker_cpu_seconds")}
       for label, rs in runs.items()}
print("| run | seconds (median) | records/s | MB/s | process CPU s | broker CPU s | "
      "all runs' seconds |")
print("|---|---|---|---|---|---|---|")
for label, m in med.items():
    print(f"| {label} | {m['seconds']:.2f} | {n / m['seconds']:,.0f} | "
          f"{size / m['seconds'] / 1e6:.1f} | {m['cpu_seconds']:.2f} | "
          f"{m['broker_cpu_seconds']:.2f} | "
          + ", ".join(f"{r['seconds']:.2f}" for r in runs[label]) + " |")
print()
def rate(label):
    return n / med[label]["seconds"]
if "raw librdkafka" in med:
    print(f"Connect / raw librdkafka (records/s): {rate('Connect') / rate('raw librdkafka'):.2f} "
          "(goal >= 0.8)")
    settings = "raw, Connect's producer settings"
    print(f"Connect / raw with Connect's producer settings: "
          f"{rate('Connect') / rate(settings):.2f}")
if "Connect, 3 transforms" in med:
    plain, three = med["Connect"], med["Connect, 3 transforms"]
    print(f"3 transforms: {(three['seconds'] - plain['seconds']) * 1e9 / n:+,.0f} ns per record "
          f"of wall time, {(three['cpu_seconds'] - plain['cpu_seconds']) * 1e9 / n:+,.0f} ns of "
          f"the worker's CPU")
if sys.argv[4]:
    none, three = map(float, sys.argv[4].split())
    print(f"the chain alone, in process: {three - none:,.0f} ns per record "
          f"({three:,.0f} with the record's making, {none:,.0f} without the chain)")
EOF
fi

if part failover; then
  if ! "$OXBOW" connect distributed --help >/dev/null 2>&1; then
    echo
    echo "failover: not measured, this oxbow has no 'connect distributed'"
  else
    echo
    # Sessions of 1 s, heartbeats every 250 ms, a departed worker's work held back 1 s (the broker
    # allows sessions down to 500 ms), unless CONNECT_BENCH_FAILOVER_CONFIG says otherwise. The
    # sink tasks' consumers get 1 s sessions too: with the consumer's default 45 s, a sink task
    # started on the survivor gets no partition until the dead worker's consumer has expired from
    # the sink's group (43 s here).
    read -r -a failover_settings <<<"${CONNECT_BENCH_FAILOVER_CONFIG:-}"
    echo "failover: session.timeout.ms=1000 heartbeat.interval.ms=250" \
      "scheduled.rebalance.max.delay.ms=1000 offset.flush.interval.ms=200" \
      "consumer.session.timeout.ms=1000 consumer.heartbeat.interval.ms=250 ${failover_settings[*]}"
    for f in $(seq "$FAILOVERS"); do
      dir=$work/failover-$f
      mkdir -p "$dir"
      ports=("$(free_port)" "$(free_port)")
      new_topic "failover-$f"
      for i in 0 1; do
        printf '%s\n' "bootstrap.servers=$BOOTSTRAP" "group.id=failover-$f" \
          "listeners=http://127.0.0.1:${ports[$i]}" "key.converter=$STRING" \
          "value.converter=$STRING" "config.storage.topic=failover-$f-configs" \
          "offset.storage.topic=failover-$f-offsets" "status.storage.topic=failover-$f-status" \
          "config.storage.replication.factor=1" "offset.storage.replication.factor=1" \
          "status.storage.replication.factor=1" "offset.flush.interval.ms=200" \
          "session.timeout.ms=1000" "heartbeat.interval.ms=250" \
          "scheduled.rebalance.max.delay.ms=1000" "consumer.session.timeout.ms=1000" \
          "consumer.heartbeat.interval.ms=250" ${failover_settings[@]+"${failover_settings[@]}"} \
          >"$dir/worker-$i.properties"
      done
      : >"$dir/in.txt"
      log=$dir/worker-0.log
      # The first worker to join leads the group and gets the first connector (the source): odd
      # kills take the leader with the source's task, even ones the other worker with the sink's.
      victim=source
      if ((f % 2 == 0)); then victim=sink; fi
      /usr/bin/python3 "$HELPER" failover --oxbow "$OXBOW" --dir "$dir" --ports "${ports[@]}" \
        --input "$dir/in.txt" --output "$dir/out.txt" --topic "failover-$f" --victim-of "$victim" |
        tee -a "$work/failover.jsonl"
    done
    /usr/bin/python3 - "$work/failover.jsonl" <<'EOF'
import json, statistics, sys
every = [json.loads(line) for line in open(sys.argv[1])]
for victim in ("source", "sink"):
    kills = [k for k in every if k["victim_of"] == victim]
    if not kills:
        continue
    moved = [max(k["task_running_elsewhere_seconds"].values()) for k in kills]
    data = [k["first_line_after_kill_seconds"] for k in kills]
    print(f"failover, {len(kills)} kill(s) of the worker running the {victim}'s task: its tasks "
          f"RUNNING on the survivor after {statistics.median(moved):.2f} s (median; "
          f"{', '.join(f'{m:.2f}' for m in moved)}), a line appended after the kill in the "
          f"sink's file after {statistics.median(data):.2f} s (median; "
          f"{', '.join(f'{d:.2f}' for d in data)})")
EOF
  fi
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
