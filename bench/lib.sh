# Helpers the bench scripts share (sourced, not run).

# A TCP port nothing listens on right now.
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Makes the scratch dir $work and, on exit, stops the brokers whose pids are in $pids and removes it.
bench_scratch() {
  work=$(mktemp -d)
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# Waits up to 10 s for a listener on 127.0.0.1:PORT.
wait_for_port() {
  for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done
  echo "nothing listens on port $1" >&2
  return 1
}

# Field NAME of the JSON object on stdin (`oxbow perf ... --json`).
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }

# Starts `$OXBOW broker` on 127.0.0.1:PORT with its log dir WORK/NAME (its log WORK/NAME.log) and the
# overrides given, appends its pid to the caller's `pids` and waits for it to listen.
start_bench_broker() {  # work name port [--override key=value ...]
  local work=$1 name=$2 port=$3
  shift 3
  "$OXBOW" broker --override listeners=PLAINTEXT://127.0.0.1:"$port" --override log.dirs="$work/$name" \
    --override admin.listener=127.0.0.1:0 "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  wait_for_port "$port"
}

# Starts `$OXBOW sql-server` against $BOOTSTRAP with its state and log under WORK and the settings
# given; sets sql_pid and SQL (its URL), appends the pid to the caller's `pids`, waits for it.
start_bench_sql_server() {  # work [-o key=value ...]
  local work=$1 port
  shift
  port=$(free_port)
  "$OXBOW" sql-server -o listeners=http://127.0.0.1:"$port" -o bootstrap.servers="$BOOTSTRAP" \
    -o ksql.streams.state.dir="$work/sql-state" "$@" >"$work/sql-server.log" 2>&1 &
  sql_pid=$!
  pids+=("$sql_pid")
  wait_for_port "$port"
  SQL=http://127.0.0.1:$port
}

# "PRODUCE CONSUME": records/s of `oxbow perf produce` (N records of SIZE bytes, 100 unless given,
# acks=1) into TOPIC and of `perf consume` reading them back.
produce_consume_rates() {  # port topic n [size]
  local p c
  p=$("$OXBOW" perf produce -b 127.0.0.1:"$1" --topic "$2" --num-records "$3" --record-size "${4:-100}" --acks 1 \
    --json 2>/dev/null | field records_per_sec)
  c=$("$OXBOW" perf consume -b 127.0.0.1:"$1" --topic "$2" --num-records "$3" --json 2>/dev/null |
    field records_per_sec)
  echo "$p $c"
}

# Alternating runs of produce_consume_rates against broker A (the baseline) and broker B: prints
# each run and the ratios B / A of the medians, for records of SIZE bytes (100 unless given).
compare_brokers() {  # label_a port_a label_b port_b n runs [size]
  local label_a=$1 port_a=$2 label_b=$3 port_b=$4 n=$5 runs=$6 size=${7:-100} r a b
  local ap=() ac=() bp=() bc=()
  for r in $(seq "$runs"); do
    read -r a b <<<"$(produce_consume_rates "$port_a" "bench-$size-$r" "$n" "$size")"; ap+=("$a"); ac+=("$b")
    read -r a b <<<"$(produce_consume_rates "$port_b" "bench-$size-$r" "$n" "$size")"; bp+=("$a"); bc+=("$b")
    printf '%4d B run %d: %s produce %9.0f consume %9.0f   %s produce %9.0f consume %9.0f records/s\n' \
      "$size" "$r" "$label_a" "${ap[-1]}" "${ac[-1]}" "$label_b" "${bp[-1]}" "${bc[-1]}"
  done
  printf '%4d B: median produce ratio (%s / %s) %.2f, consume ratio %.2f\n' "$size" "$label_b" "$label_a" \
    "$(echo "$(median "${bp[@]}") / $(median "${ap[@]}")" | bc -l)" \
    "$(echo "$(median "${bc[@]}") / $(median "${ac[@]}")" | bc -l)"
}

# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Fills the page cache with the clean pages of a sparse file in DIR, so that what a bench writes
# takes memory the kernel reclaims, as on a server whose memory is full of page cache. On a fresh
# VM every page of new memory first costs the hypervisor a fault (about 1 s of CPU per GB here),
# and a freed page goes back to it within seconds: without this the broker's first gigabytes of
# page cache would measure the hypervisor (the mock cluster keeps 5 MB per partition and never
# meets it). The file stays until DIR is removed; reading it writes nothing to disk.
fill_page_cache() {  # dir
  local kb t0
  kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
  t0=$(date +%s%N)
  truncate -s "${kb}K" "$1/page-cache-fill"
  cat "$1/page-cache-fill" >/dev/null
  echo "page cache filled with $((kb / 1024)) MB in $(( ($(date +%s%N) - t0) / 1000000 )) ms;" \
    "free memory now $(awk '/MemFree/ {print int($2 / 1024)}' /proc/meminfo) MB"
}
