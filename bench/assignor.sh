#!/usr/bin/env bash
# The CPU cost of computing KIP-848 target assignments as a group grows (bench/assignor.cpp).
# Usage: bench/assignor.sh [members] [topics] [partitions per topic]
set -euo pipefail
cd "$(dirname "$0")/.."
MEMBERS=${1:-1000}
TOPICS=${2:-4}
PARTITIONS=${3:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++20 -Isrc -o "$work/assignor" bench/assignor.cpp src/group/assignor.cpp
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for assignor in uniform range; do
  "$work/assignor" "$assignor" "$MEMBERS" "$TOPICS" "$PARTITIONS"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
