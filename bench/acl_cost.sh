#!/usr/bin/env bash
# Cost of ACL checks: `oxbow perf produce` and `perf consume` against a broker without an
# authorizer and one with StandardAuthorizer holding N ACLs (N-1 for other principals and
# topics, spread over literal and prefixed names, plus the one prefixed ACL that lets the bench
# in), runs alternating. Prints each run and the ratios of the medians.
# Usage: bench/acl_cost.sh [records] [acls] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
OXBOW=${OXBOW_BIN:-build/oxbow}
N=${1:-1000000}
ACLS=${2:-10000}
RUNS=${3:-3}
bench_scratch

mkdir -p "$work/acl"
/usr/bin/python3 - "$work/acl/oxbow-acls.json" "$ACLS" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
acls = [{"resource_type": "TOPIC", "resource_name": "bench-", "pattern_type": "PREFIXED", "principal": "User:ANONYMOUS",
         "host": "*", "operation": "ALL", "permission": "ALLOW"}]
for i in range(n - 1):
    acls.append({"resource_type": "TOPIC", "resource_name": f"team{i % 97}-topic-{i}",
                 "pattern_type": "PREFIXED" if i % 3 == 0 else "LITERAL", "principal": f"User:user{i}",
                 "host": "*", "operation": "READ" if i % 2 else "WRITE", "permission": "ALLOW"})
json.dump({"version": 1, "acls": acls}, open(path, "w"))
PY
open_port=$(free_port)
acl_port=$(free_port)
start_bench_broker "$work" open "$open_port"
start_bench_broker "$work" acl "$acl_port" --override authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $N records of 100 bytes, acks=1, $ACLS ACLs"
compare_brokers "no authorizer" "$open_port" "$ACLS ACLs" "$acl_port" "$N" "$RUNS"
grep -q "ACL authorization on: $ACLS ACLs" "$work/acl.log" || { echo "the ACL broker did not load $ACLS ACLs"; exit 1; }
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
