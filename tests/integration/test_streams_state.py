"""oxbow-streams' local state against the real broker: RocksDB stores with checkpoints, so that a
clean restart replays nothing and a crash under exactly-once replays only the changelog's tail;
and the Prometheus metrics on metrics.listener that show it.

Counts are checked against the truth computed here from the input (test_streams_wordcount's
helpers); restoration is read from the metrics and the library's log line
"restored N records into M stores in T ms".
"""

import random
import re
import shutil
import urllib.request

import pytest

from prometheus_client.parser import text_string_to_metric_families

import ck_helpers as ck
from harness import free_port, wait_until
from test_streams_wordcount import App, Output, _lines, _produce, _truth, topics  # noqa: F401

CHANGELOG = "wc-counts-store-changelog"


def _scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples.setdefault(s.name, []).append((s.labels, s.value))
    return samples


def _total(samples, name, **labels):
    return sum(v for l, v in samples.get(name, []) if all(l.get(k) == x for k, x in labels.items()))


def _running(port):
    try:
        return _total(_scrape(port), "oxbow_streams_client_state", state="RUNNING") == 1
    except OSError:
        return False


def _restores(log_path):
    """(records, ms) of every restoration the log reports."""
    return [(int(n), int(ms)) for n, ms in
            re.findall(r"restored (\d+) records into \d+ stores in (\d+) ms", log_path.read_text())]


def test_clean_restart_replays_nothing_and_checkpoints_match_the_changelog(topics, tmp_path):
    b = topics
    rng = random.Random(5)
    first, second = _lines(rng, 6000), _lines(rng, 2000)
    port = free_port()
    extra = ("--metrics-listener", f"127.0.0.1:{port}")
    app = App(b, tmp_path, "r1", state="s", extra=extra).start()
    _produce(b, first)
    out = Output(b)
    out.read_until(_truth(first))
    app.stop()

    # .checkpoint of every task names its changelog partition at the changelog's end.
    for partition in range(3):
        text = (app.state_dir / "wc" / f"1_{partition}" / ".checkpoint").read_text().split("\n")
        assert text[0] == "0" and text[1] == "1", text
        topic, part, offset = text[2].split()
        assert (topic, int(part)) == (CHANGELOG, partition)
        assert int(offset) == ck.watermarks(b.bootstrap, CHANGELOG, partition)[1]

    again = App(b, tmp_path, "r2", state="s", extra=extra).start()
    wait_until(lambda: _running(port), 60, message="the restarted instance RUNNING")
    samples = _scrape(port)
    assert _total(samples, "oxbow_streams_thread_restored_records_total") == 0
    assert [n for n, _ in _restores(again.log_path)] in ([], [0]), again.log_path.read_text()[-2000:]
    assert "is up to date" in again.log_path.read_text()
    # The local stores hold the counts: new input continues them.
    _produce(b, second)
    out.read_until(_truth(first + second))
    words = len(_truth(first + second))
    # RocksDB's estimate counts a key's overwrites still in the memtable: never fewer than the keys.
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_store_entries", store="counts-store") >= words,
               30, message="store entries in the metrics")
    # Task figures are published about once a second.
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_task_process_records_total") >= 2000, 30,
               message="the processed records in the metrics")
    # The thread commits every commit.interval.ms (200 ms here), which may not have come round yet.
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_thread_commit_total") > 0, 30,
               message="a commit in the metrics")
    samples = _scrape(port)
    assert _total(samples, "oxbow_streams_rocksdb_memory_budget_bytes") == 256 << 20
    # Per task as per thread: processing latency, timed for one record in sixteen.
    assert _total(samples, "oxbow_streams_task_process_latency_seconds_count") >= 2000 // 16 - 3
    assert _total(samples, "oxbow_streams_task_process_latency_seconds_sum") > 0
    assert _total(samples, "oxbow_streams_task_process_latency_max_seconds") > 0
    assert samples.get("oxbow_streams_records_lag")
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_records_lag", topic="streams-plaintext-input") == 0,
               30, message="no lag on the input")
    again.stop()
    assert not out.backwards
    out.close()

    # Without the local state the same restart restores every changelog record.
    shutil.rmtree(app.state_dir)
    fresh = App(b, tmp_path, "r3", state="s", extra=extra).start()
    wait_until(lambda: _running(port), 60, message="the instance without state RUNNING")
    restored = sum(n for n, _ in _restores(fresh.log_path))
    assert restored >= words
    assert _total(_scrape(port), "oxbow_streams_thread_restored_records_total") == restored
    fresh.stop()


@pytest.mark.serial  # its ratio of replayed records depends on throughput between commits
def test_exactly_once_crash_recovers_from_local_state(topics, tmp_path):
    """kill -9 under exactly_once_v2: the stores come back at their last commit from local data
    and replay only the changelog's tail; counts stay exact. Then the same crash without the local
    state, which must replay the whole changelog: both restore figures are printed."""
    b = topics
    rng = random.Random(11)
    # Many distinct words and no cache: every update is a changelog record, so the changelog is
    # long and a full replay is measurably longer than the tail.
    vocabulary = [f"w{i}" for i in range(20000)]
    lines = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 8))) for _ in range(30000)]
    out = Output(b, isolation="read_committed")
    # Exactly-once's default commit interval (the suite's 200 ms doubles what one commit holds).
    eos = dict(guarantee="exactly_once_v2", state="e", commit_interval_ms=100,
               extra=("--config", "statestore.cache.max.bytes=0"))
    app = App(b, tmp_path, "e1", **eos).start()
    _produce(b, lines[:20000])
    # Killed once the first half of its input is committed, many commits in and mid-processing:
    # killed at its first commit instead, it may die before that commit's writes reached its
    # stores, and the whole first interval (the backlog read at start) is replayed.
    out.read_until(_truth(lines[:10000]), at_least=True)
    app.kill()
    app = App(b, tmp_path, "e2", **eos).start()
    _produce(b, lines[20000:])
    out.read_until(_truth(lines))
    local = _restores(app.log_path)
    app.kill()

    changelog = sum(ck.watermarks(b.bootstrap, CHANGELOG, p)[1] for p in range(3))
    shutil.rmtree(app.state_dir)
    app = App(b, tmp_path, "e3", **eos).start()
    wait_until(lambda: _restores(app.log_path), 120, message="the restoration without local state")
    full = _restores(app.log_path)
    out.read_until(_truth(lines))
    app.stop()
    assert not out.backwards, f"committed counts went backwards: {out.backwards[:5]}"
    out.close()

    local_records, full_records = sum(n for n, _ in local), sum(n for n, _ in full)
    print(f"\nexactly-once crash recovery: from local state {local_records} records in "
          f"{sum(ms for _, ms in local)} ms; without it {full_records} records in "
          f"{sum(ms for _, ms in full)} ms (changelog {changelog} offsets)")
    # The full replay reads every committed changelog record; the local recovery only the tail
    # past each task's checkpoint, which is rewritten at a commit once its offsets moved 10,000
    # records (TaskDirectory::kCheckpointDelta, as Kafka Streams' threshold): with three tasks up to
    # 30,000 records, plus the writes of the interval the kill cut, of the ~135,000.
    assert full_records > 50000
    assert local_records * 3 < full_records, (local, full)


def test_restoration_runs_beside_processing_of_ready_tasks(topics, tmp_path):
    """With its state gone, an instance restores its counting tasks from a ~1 M-record changelog;
    meanwhile its stateless tasks (sub-topology 0: split and repartition) already process new
    input: a scrape sees both at once."""
    b = topics
    rng = random.Random(17)
    vocabulary = [f"v{i}" for i in range(50000)]
    lines = [" ".join(rng.choice(vocabulary) for _ in range(10)) for _ in range(100_000)]
    port = free_port()
    extra = ("--metrics-listener", f"127.0.0.1:{port}", "--config", "statestore.cache.max.bytes=0")
    app = App(b, tmp_path, "p1", state="p", extra=extra).start()
    _produce(b, lines)
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_task_process_records_total") >= 1_100_000,
               300, interval=0.5, message="the first run's input processed")
    app.stop()
    shutil.rmtree(app.state_dir)

    more = lines[:20_000]
    app = App(b, tmp_path, "p2", state="p", extra=extra).start()
    _produce(b, more)
    both = []

    def both_or_restored():
        try:
            s = _scrape(port)
        except OSError:
            return False
        remaining = _total(s, "oxbow_streams_restore_remaining_records")
        stateless = sum(v for l, v in s.get("oxbow_streams_task_process_records_total", [])
                        if l["task_id"].startswith("0_"))
        if remaining > 0 and stateless > 0:
            both.append((remaining, stateless))
        return bool(both) or _restores(app.log_path)

    wait_until(both_or_restored, 120, interval=0.1, message="restoration and processing")
    assert both, "the restoration finished before any ready task processed a record"
    wait_until(lambda: _restores(app.log_path), 120, message="the restoration's end")
    assert sum(n for n, _ in _restores(app.log_path)) >= 1_000_000
    app.stop()
