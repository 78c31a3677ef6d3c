"""Prints bench/broker.sh's table: the median of each figure over the runs, and the ratios the
broker-performance issue sets targets for (of the medians, with the range of the per-run or
per-pair ratios).
Usage: broker_table.py RESULTS.jsonl (one {"label": ..., "result": <perf --json>} per line)"""
import json
import statistics
import sys

runs = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    runs.setdefault(entry["label"], []).append(entry["result"])


def median(label, field):
    return statistics.median(r[field] for r in runs[label])


print(f"{'run (median of n)':<36} {'n':>3} {'records/s':>12} {'MB/s':>8}"
      f" {'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>8}")
for label, results in runs.items():
    row = f"{label:<36} {len(results):>3} {median(label, 'records_per_sec'):>12.0f} {median(label, 'mb_per_sec'):>8.1f}"
    if "p50_ms" in results[0]:
        row += "".join(f" {median(label, f):>8.3f}" for f in ("p50_ms", "p99_ms", "p999_ms"))
    print(row)


def per_run_rates(label, other_count):
    """records/s of each run; where LABEL ran several times per run (the pairs against the mock) and
    the other side of the ratio once, the median of that run's measurements."""
    rates = [r["records_per_sec"] for r in runs[label]]
    group = max(1, len(rates) // other_count) if len(rates) > other_count else 1
    return [statistics.median(rates[i:i + group]) for i in range(0, len(rates), group)]


print()
targets = [
    ("produce 100B acks=1, oxbow / mock", "oxbow 100B acks=1", "mock cluster 100B acks=1", ">= 1"),
    ("produce 1KB acks=1, oxbow / mock", "oxbow 1KB acks=1", "mock cluster 1KB acks=1", ">= 1"),
    ("consume / produce 100B", "oxbow consume 100B", "oxbow 100B acks=1", ">= 1.5"),
    ("fsync 1KB acks=-1 / no fsync 1KB acks=1", "oxbow fsync 1KB acks=-1", "oxbow 1KB acks=1", ">= 0.7"),
]
for name, top, bottom, target in targets:
    ratio = median(top, "records_per_sec") / median(bottom, "records_per_sec")
    per_run = [a / b for a, b in zip(per_run_rates(top, len(runs[bottom])), per_run_rates(bottom, len(runs[top])))]
    print(f"{name + ':':<42} {ratio:5.2f}  (runs {min(per_run):.2f}-{max(per_run):.2f}; target {target})")
latency = runs.get("oxbow 10k/s 100B acks=1 (latency)")
if latency:
    print(f"{'p99 at 10,000 records/s, acks=1:':<42} {latency[0]['p99_ms']:.3f} ms (target < 2 ms)")
