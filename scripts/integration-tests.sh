#!/usr/bin/env bash
# The integration tests as `make integration-test` runs them: pytest in TEST_WORKERS processes
# (pytest-xdist; three per core by default, at most 12) with the node tests beside them.  Most
# tests wait on brokers, sessions and timeouts rather than compute, so more processes than cores
# pay off.  Each test owns its broker, ports (harness.free_port reserves them across processes)
# and directories; a module whose tests share one broker is an xdist_group, run by one worker.
# Tests marked serial (they measure time, memory, CPU or throughput) run afterwards, one at a
# time, with nothing beside them.  On 2 cores: 3.5 min with 6 workers, then 2-3 min of serial tests,
# where all of it in one process took 21-25 min.  The first pytest failure stops pytest; a failure
# of either suite fails the whole.  Usage: integration-tests.sh OXBOW_BIN [PYTHON]
set -uo pipefail
bin="$1"
py="${2:-/usr/bin/python3}"
workers="${TEST_WORKERS:-$(( $(nproc) * 3 > 12 ? 12 : $(nproc) * 3 ))}"
here="$(cd "$(dirname "$0")/.." && pwd)"

node_log="$(mktemp)"
trap 'rm -f "$node_log"' EXIT
# --test-force-exit: a test file whose tests all finished exits even if a client it used left a
# timer or socket behind (@platformatic/kafka's consumer once kept a file's process alive after
# both its tests passed, and CI waited on it); --test-timeout bounds a test that hangs.
(cd "$here/tests/integration" &&
  OXBOW_BIN="$bin" node --test --test-force-exit --test-timeout=300000 >"$node_log" 2>&1) &
node_pid=$!

OXBOW_BIN="$bin" "$py" -m pytest -q -n "$workers" --dist loadgroup --maxfail=1 --durations=30 \
  -m "not serial" "$here/tests/integration"
py_status=$?
if [ "$py_status" -eq 0 ]; then
  # Tests that measure time, memory, CPU or throughput: one at a time, once the rest is done.
  echo "== the tests marked serial, one at a time"
  wait "$node_pid"
  node_status=$?
  OXBOW_BIN="$bin" "$py" -m pytest -q -p no:xdist --maxfail=1 --durations=10 -m serial \
    "$here/tests/integration"
  py_status=$?
  [ "$py_status" -eq 5 ] && py_status=0  # none marked
fi

[ -n "${node_status:-}" ] || { wait "$node_pid"; node_status=$?; }
echo "== node --test in tests/integration (exit $node_status)"
if [ "$node_status" -eq 0 ]; then
  grep -E '^# (tests|pass|fail|cancelled|duration_ms) ' "$node_log"
else
  cat "$node_log"
fi
[ "$py_status" -eq 0 ] && [ "$node_status" -eq 0 ]
