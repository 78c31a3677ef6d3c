#!/usr/bin/env bash
# Cost of metrics on the produce path: the same broker built with metric updates compiled out
# (-DOXBOW_NO_METRICS=ON, in build-nometrics/) against the normal build, alternating runs in one
# session. Prints, for each, the median produce throughput (which the client bounds) and the
# median CPU time the broker itself spent (user + system, from /proc), and their ratios.
# Usage: bench/metrics_cost.sh [runs] [records]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS=${1:-5}
N=${2:-2000000}
cmake -S . -B build-nometrics -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOXBOW_NO_METRICS=ON >/dev/null
cmake --build build-nometrics --target oxbow >/dev/null
cmake --build build --target oxbow >/dev/null

work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

run_once() {  # binary -> "records/s broker-cpu-seconds"
  local port rps ticks; port=$(free_port)
  rm -rf "$work/data"
  "$1" broker --override listeners=PLAINTEXT://127.0.0.1:$port --override log.dirs="$work/data" \
    --override admin.listener=127.0.0.1:0 2>/dev/null &
  pid=$!
  wait_for_port "$port"
  rps=$(build/oxbow perf produce -b 127.0.0.1:$port --topic cost --num-records "$N" --record-size 100 --acks 1 \
    --json 2>/dev/null | field records_per_sec)
  ticks=$(awk '{print $14 + $15}' /proc/$pid/stat)
  kill "$pid"; wait "$pid" || true; pid=""
  echo "$rps $(/usr/bin/python3 -c "import os; print($ticks / os.sysconf('SC_CLK_TCK'))")"
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
on=(); off=()
# Alternate which goes first, so that neither always inherits the other's page-cache write-back.
for i in $(seq "$RUNS"); do
  if (( i % 2 )); then
    on+=("$(run_once build/oxbow)"); off+=("$(run_once build-nometrics/oxbow)")
  else
    off+=("$(run_once build-nometrics/oxbow)"); on+=("$(run_once build/oxbow)")
  fi
done
/usr/bin/python3 - "$(printf '%s;' "${on[@]}")" "$(printf '%s;' "${off[@]}")" <<'PY'
import statistics, sys
def parse(text):
    runs = [tuple(float(x) for x in r.split()) for r in text.split(";") if r.strip()]
    return [r[0] for r in runs], [r[1] for r in runs]
on_rps, on_cpu = parse(sys.argv[1])
off_rps, off_cpu = parse(sys.argv[2])
for label, rps, cpu in (("metrics on", on_rps, on_cpu), ("metrics compiled out", off_rps, off_cpu)):
    print(f"{label:22s} median {statistics.median(rps):>12,.0f} records/s, broker CPU {statistics.median(cpu):.2f} s"
          f"   runs {[round(x) for x in rps]}")
print(f"throughput on / off: {statistics.median(on_rps) / statistics.median(off_rps):.3f}")
print(f"broker CPU on / off: {statistics.median(on_cpu) / statistics.median(off_cpu):.3f}")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
