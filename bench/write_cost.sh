#!/usr/bin/env bash
# The CPU cost of appending to a file on this machine, the floor under the broker's produce path:
# buffered writes into memory full of page cache (as bench/broker.sh measures the broker), then
# O_DIRECT. Usage: bench/write_cost.sh [megabytes] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
MB=${1:-2048}
RUNS=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++20 -o "$work/write_cost" bench/write_cost.cpp
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); ${MB} MB per run"
fill_page_cache "$work"
for _ in $(seq "$RUNS"); do
  "$work/write_cost" "$work/out" "$MB"
  rm "$work/out"
  "$work/write_cost" "$work/out" "$MB" direct
  rm "$work/out"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
