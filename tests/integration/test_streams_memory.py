"""oxbow-streams' one memory budget: 5 million distinct keys counted in RocksDB under
rocksdb.memory.max.bytes = 128 MiB keep the process's peak RSS under the budget plus a fixed
overhead stated here, whatever the number of keys (the data lives on disk, not in memory).

The fixed overhead is what is not state: librdkafka's consumer prefetch queue (capped below at
32 MiB) and producer queues, the record cache (statestore.cache.max.bytes, 10 MiB by default),
the binary, its threads' stacks and the allocator's slack.
"""

import pathlib

import pytest

from harness import free_port, wait_until
import ck_helpers as ck
from test_streams_state import _scrape, _total
from test_streams_wordcount import App, topics  # noqa: F401

KEYS = 5_000_000
WORDS_PER_LINE = 10
BUDGET = 128 << 20
OVERHEAD = 160 << 20


def _rss(pid, field="VmRSS"):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


@pytest.mark.serial  # measures the process's peak RSS
def test_five_million_keys_stay_within_the_memory_budget(topics, tmp_path):
    b = topics
    lines = [" ".join(f"k{i + j:08d}" for j in range(WORDS_PER_LINE)).encode()
             for i in range(0, KEYS, WORDS_PER_LINE)]
    ck.produce_all(ck.producer(b.bootstrap), [{"value": v} for v in lines], "streams-plaintext-input")
    port = free_port()
    app = App(b, tmp_path, "mem", extra=(
        "--metrics-listener", f"127.0.0.1:{port}",
        "--config", f"rocksdb.memory.max.bytes={BUDGET}",
        # The default cache counted in the overhead (the example itself turns it off).
        "--config", "statestore.cache.max.bytes=10485760",
        "--config", "consumer.queued.max.messages.kbytes=32768")).start()
    peak = [0]

    def done():
        peak[0] = max(peak[0], _rss(app.proc.pid))
        try:
            samples = _scrape(port)
        except OSError:
            return False
        return _total(samples, "oxbow_streams_task_process_records_total") >= len(lines) + KEYS

    wait_until(done, 900, interval=0.5, message="5 M keys counted")
    samples = _scrape(port)
    cache = _total(samples, "oxbow_streams_rocksdb_memory_bytes")
    peak[0] = max(peak[0], _rss(app.proc.pid, "VmHWM"))
    app.stop()
    changelog = sum(ck.watermarks(b.bootstrap, "wc-counts-store-changelog", p)[1] for p in range(3))
    print(f"\n{KEYS} keys: peak RSS {peak[0] >> 20} MiB, RocksDB cache {int(cache) >> 20} MiB, "
          f"budget {BUDGET >> 20} MiB + overhead {OVERHEAD >> 20} MiB")
    assert changelog == KEYS  # every key reached its store (and its changelog) once
    assert cache <= BUDGET * 1.05
    assert peak[0] < BUDGET + OVERHEAD, f"peak RSS {peak[0] >> 20} MiB"
