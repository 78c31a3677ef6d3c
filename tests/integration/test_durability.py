"""Durability: clean restarts, kill -9 while producing, torn segment tails, on-disk layout."""

import os
import re
import struct
import subprocess
import sys
import threading
import time

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
import kafka_wire
from harness import unique_topic, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
SEGMENT_NAME = re.compile(r"^(\d{20})\.(log|index|timeindex)$")


def _records(prefix, n, base_ts):
    return [{"key": f"{prefix}-k{i}".encode(), "value": f"{prefix}-v{i}-".encode() + b"p" * (i % 200),
             "headers": [("i", str(i).encode())], "timestamp": base_ts + i} for i in range(n)]


def _check_partition(bootstrap, topic, partition, expected):
    msgs = ck.consume_partition(bootstrap, topic, partition, 0, expected=len(expected), timeout=90)
    assert len(msgs) == len(expected), f"{topic}-{partition}: {len(msgs)} records, expected {len(expected)}"
    for i, (m, r) in enumerate(zip(msgs, expected)):
        assert m.offset() == i
        assert (m.key(), m.value(), m.headers(), m.timestamp()) == \
            (r["key"], r["value"], r["headers"], (TIMESTAMP_CREATE_TIME, r["timestamp"])), f"{topic}-{partition} @{i}"


def test_restart_sigterm_keeps_everything(make_broker):
    # Small segments so the data spans many segments and the restart must load all of them.
    b = make_broker({"log.segment.bytes": str(256 * 1024)})
    base_ts = int(time.time() * 1000) - 1000_000
    topics = {unique_topic("restart-a"): 1, unique_topic("restart-b"): 4}
    a = ck.admin(b.bootstrap)
    for t, f in a.create_topics([NewTopic(t, n, 1) for t, n in topics.items()]).items():
        f.result(20)
    expected = {}
    for codec, (t, n) in zip(("none", "zstd"), topics.items()):
        ck.wait_for_topic(b.bootstrap, t, n)
        # Batches of at most 64 KB: one append must fit in one 256 KB segment.
        p = ck.producer(b.bootstrap, compression_type=codec, batch_size=64 * 1024)
        for part in range(n):
            recs = _records(f"{t}-{part}", 6000, base_ts)
            ck.produce_all(p, recs, t, partition=part)
            expected[(t, part)] = recs
    t_none = next(iter(topics))
    assert len([f for f in os.listdir(b.partition_dir(t_none, 0)) if f.endswith(".log")]) > 1, \
        "expected the uncompressed partition to have rolled to several segments"

    for round_ in range(2):
        b.restart()  # SIGTERM, assert exit code 0, start on the same dir and port
        for t, n in topics.items():
            ck.wait_for_topic(b.bootstrap, t, n)
            for part in range(n):
                assert ck.watermarks(b.bootstrap, t, part) == (0, len(expected[(t, part)]))
                _check_partition(b.bootstrap, t, part, expected[(t, part)])
        # New records continue the offsets.
        p = ck.producer(b.bootstrap)
        more = _records(f"after-restart-{round_}", 10, base_ts + 100_000)
        reports = ck.produce_all(p, more, t_none, partition=0)
        start = len(expected[(t_none, 0)])
        assert sorted(o for _p, o in reports) == list(range(start, start + 10))
        expected[(t_none, 0)] = expected[(t_none, 0)] + more
    _check_partition(b.bootstrap, t_none, 0, expected[(t_none, 0)])
    # Both starts after a SIGTERM must have found a clean shutdown marker (no recovery needed).
    for start_log in b.log_text().split("===== test harness: start #")[2:]:
        assert "last shutdown was not clean" not in start_log, "clean shutdown not recognised on restart"


def _read_acked(proc_stdout, acked):
    for line in proc_stdout:  # until EOF, i.e. until the producer process is gone
        line = line.strip()
        if line.isdigit():
            acked.append(int(line))


def test_kill9_during_acks_all_produce_fsync_mode(make_broker):
    b = make_broker({"log.flush.interval.messages": "1"})
    topic = ck.create_topic(b.bootstrap, unique_topic("kill9"))
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "acked_producer.py"), b.bootstrap, topic],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    acked = []
    reader = threading.Thread(target=_read_acked, args=(proc.stdout, acked), daemon=True)
    try:
        reader.start()
        # Produce steadily: wait until a good number of acknowledgements arrived and at least 2 s passed.
        started = time.monotonic()
        wait_until(lambda: proc.poll() is None and len(acked) >= 200 and time.monotonic() - started >= 2.5,
                   30, interval=0.05, message="the producer to get >= 200 acknowledgements")
        b.kill()
    finally:
        # Every value printed so far was acknowledged before the broker died; the reader thread
        # drains the pipe up to EOF once the producer is gone.
        proc.kill()
        proc.wait()
    reader.join(10)
    assert not reader.is_alive()
    stderr = proc.stderr.read()
    acked_values = list(acked)
    assert acked_values == sorted(acked_values), "producer acknowledged out of order?"
    assert len(acked_values) >= 200

    b.start()
    ck.wait_for_topic(b.bootstrap, topic, 1)
    low, high = ck.watermarks(b.bootstrap, topic)
    msgs = ck.consume_partition(b.bootstrap, topic, 0, 0, expected=high, timeout=60)
    values = [int(m.value()) for m in msgs]
    assert [m.offset() for m in msgs] == list(range(len(msgs))), "offsets must be contiguous from 0"
    dupes = len(values) - len(set(values))
    assert dupes == 0, f"{dupes} values appear more than once after recovery"
    assert values == sorted(values), "values must be strictly increasing"
    print(f"kill -9 test: {len(acked_values)} values acknowledged, {len(values)} recovered")
    missing = sorted(set(acked_values) - set(values))
    assert not missing, (f"{len(missing)} acknowledged values lost after kill -9 (of {len(acked_values)} acked,"
                         f" {len(values)} recovered); first missing: {missing[:10]}; producer stderr tail:"
                         f" {stderr[-500:]}")
    # The log may hold more than was acknowledged (acks lost with the crash), but only values that were sent.
    assert values[:len(acked_values)] == acked_values
    # And the recovered broker accepts new writes at the next offset.
    p = ck.producer(b.bootstrap)
    (_, off), = ck.produce_all(p, [{"value": b"999999999"}], topic, partition=0)
    assert off == high


@pytest.mark.parametrize("garbage", ["random", "zeros", "partial-batch", "huge-length"])
def test_torn_tail_after_kill9(make_broker, garbage):
    b = make_broker()
    topic = ck.create_topic(b.bootstrap, unique_topic(f"torn-{garbage}"))
    base_ts = int(time.time() * 1000) - 50_000
    recs = _records("torn", 3000, base_ts)
    p = ck.producer(b.bootstrap, linger_ms=5, batch_num_messages=100)
    ck.produce_all(p, recs, topic, partition=0)
    b.kill()

    seg = b.partition_dir(topic, 0) / "00000000000000000000.log"
    assert seg.is_file(), f"missing {seg}; partition dir has {os.listdir(b.partition_dir(topic, 0))}"
    data = seg.read_bytes()
    batches = list(kafka_wire.parse_batches(data))
    valid_end = batches[-1]["position"] + batches[-1]["size"]
    assert batches[-1]["last_offset"] == 2999, "segment should hold all 3000 produced records"
    if garbage == "random":
        tail = os.urandom(777)
    elif garbage == "zeros":
        tail = b"\x00" * 4096
    elif garbage == "partial-batch":
        tail = batches[-1]["raw"][:len(batches[-1]["raw"]) // 2]  # a torn write of a real batch
        tail = struct.pack(">q", 3000) + tail[8:]
    else:
        tail = struct.pack(">qi", 3000, 0x7FFFFFF0) + os.urandom(100)
    with open(seg, "r+b") as f:
        f.seek(valid_end)  # a preallocated file may be longer than its valid data; write right after it
        f.write(tail)

    b.start()
    ck.wait_for_topic(b.bootstrap, topic, 1)
    assert ck.watermarks(b.bootstrap, topic) == (0, 3000)
    _check_partition(b.bootstrap, topic, 0, recs)
    more = _records("after-torn", 500, base_ts + 10_000)
    reports = ck.produce_all(ck.producer(b.bootstrap), more, topic, partition=0)
    assert sorted(o for _p, o in reports) == list(range(3000, 3500))
    _check_partition(b.bootstrap, topic, 0, recs + more)
    # And it survives a clean restart on top.
    b.restart()
    _check_partition(b.bootstrap, topic, 0, recs + more)


def test_data_dir_layout_matches_kafka(make_broker):
    b = make_broker({"log.segment.bytes": str(64 * 1024), "log.index.interval.bytes": "4096"})
    topic = ck.create_topic(b.bootstrap, unique_topic("layout"), partitions=3)
    p = ck.producer(b.bootstrap, linger_ms=5, batch_num_messages=20)
    n = 3000
    for part in range(3):
        ck.produce_all(p, [{"value": f"{part}:{i}".encode() + b"." * 50} for i in range(n)], topic, partition=part)
    b.stop()  # clean shutdown: indexes are final

    assert (b.data_dir / "meta.properties").is_file()
    meta = (b.data_dir / "meta.properties").read_text()
    assert re.search(r"^cluster\.id=\S+$", meta, re.M) and re.search(r"^node\.id=\d+$", meta, re.M), meta

    dirs = sorted(d for d in os.listdir(b.data_dir) if d.startswith(topic))
    assert dirs == [f"{topic}-{i}" for i in range(3)]
    for part in range(3):
        pdir = b.partition_dir(topic, part)
        files = sorted(os.listdir(pdir))
        segs = {}
        for f in files:
            m = SEGMENT_NAME.match(f)
            if m:
                segs.setdefault(int(m.group(1)), set()).add(m.group(2))
        assert 0 in segs, f"{pdir}: no 00000000000000000000.* files: {files}"
        assert len(segs) > 1, f"{pdir}: expected several segments with 64 KiB segment.bytes: {files}"
        for base, kinds in segs.items():
            assert kinds == {"log", "index", "timeindex"}, f"segment {base:020d} has only {kinds}"
        expected_next = 0
        bases = sorted(segs)
        for base in bases:
            data = (pdir / f"{base:020d}.log").read_bytes()
            batches = list(kafka_wire.parse_batches(data))  # verifies every batch CRC-32C
            assert batches, f"empty segment {base:020d}"
            consumed = batches[-1]["position"] + batches[-1]["size"]
            assert data[consumed:].strip(b"\x00") == b"", f"{base:020d}.log has trailing non-batch bytes"
            assert batches[0]["base_offset"] == base, f"segment {base:020d}.log starts at {batches[0]['base_offset']}"
            for bt in batches:
                assert bt["base_offset"] == expected_next
                expected_next = bt["last_offset"] + 1
            positions = {bt["position"]: bt for bt in batches}
            # Offset index: 8-byte entries (relative offset, file position), pointing at batch starts.
            idx = (pdir / f"{base:020d}.index").read_bytes()
            assert len(idx) % 8 == 0, f"{base:020d}.index size {len(idx)} is not a multiple of 8"
            prev = -1
            for k in range(0, len(idx), 8):
                rel, pos = struct.unpack_from(">ii", idx, k)
                if rel == 0 and pos == 0 and k > 0:
                    break  # preallocated tail
                assert rel > prev and pos in positions, f"{base:020d}.index entry {k // 8}: ({rel}, {pos})"
                # Kafka indexes (last offset of the appended batches, position of the first of them).
                assert base + rel >= positions[pos]["base_offset"], f"{base:020d}.index entry {k // 8}"
                prev = rel
            # Time index: 12-byte entries (timestamp, relative offset).
            tidx = (pdir / f"{base:020d}.timeindex").read_bytes()
            assert len(tidx) % 12 == 0, f"{base:020d}.timeindex size {len(tidx)} is not a multiple of 12"
        assert expected_next == n
    b.start()
    assert ck.watermarks(b.bootstrap, topic, 2) == (0, n)


def test_sigterm_under_load_is_clean_and_consistent(make_broker):
    b = make_broker()
    topic = ck.create_topic(b.bootstrap, unique_topic("sigterm-load"))
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "acked_producer.py"), b.bootstrap, topic],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    acked = []
    reader = threading.Thread(target=_read_acked, args=(proc.stdout, acked), daemon=True)
    try:
        reader.start()
        wait_until(lambda: len(acked) >= 2000, 30, message="producer to be in full swing")
        code = b.stop(check=False)  # SIGTERM while the producer keeps sending
        assert code == 0, f"broker exited with {code} on SIGTERM under load"
    finally:
        proc.kill()
        proc.wait()
    reader.join(10)
    acked_values = list(acked)
    b.start()
    assert "last shutdown was not clean" not in b.log_text().split("start #2")[-1]
    _low, high = ck.watermarks(b.bootstrap, topic)
    values = [int(m.value()) for m in ck.consume_partition(b.bootstrap, topic, 0, 0, expected=high)]
    assert values == list(range(1, len(values) + 1)), "log after a clean shutdown is not the exact sent prefix"
    assert len(values) >= len(acked_values), "acknowledged records lost across a clean shutdown"


def _segments(pdir):
    return sorted(int(f[:20]) for f in os.listdir(pdir) if SEGMENT_NAME.match(f) and f.endswith(".log"))


@pytest.mark.parametrize("damage", ["garbage-tail", "index-garbage", "index-deleted"])
def test_crash_recovery_with_many_segments(make_broker, damage):
    """kill -9, then damage the newest segment's tail or its index files; the broker must rebuild."""
    b = make_broker({"log.segment.bytes": "16384", "log.index.interval.bytes": "1024"})
    topic = ck.create_topic(b.bootstrap, unique_topic(f"multiseg-{damage}"))
    base_ts = int(time.time() * 1000) - 500_000
    recs = [{"key": f"k{i}".encode(), "value": f"v{i}".encode() + b"#" * 60, "timestamp": base_ts + 3 * i,
             "headers": [("n", str(i).encode())]}
            for i in range(4000)]
    ck.produce_all(ck.producer(b.bootstrap, linger_ms=1, batch_num_messages=5), recs, topic, partition=0)
    b.kill()
    pdir = b.partition_dir(topic, 0)
    segs = _segments(pdir)
    assert len(segs) >= 5, segs
    last = pdir / f"{segs[-1]:020d}"
    if damage == "garbage-tail":
        with open(f"{last}.log", "ab") as f:
            f.write(struct.pack(">qi", 4000, 5000) + os.urandom(300))
    else:
        for seg in segs[-2:]:  # the newest sealed segment and the active one
            for ext in ("index", "timeindex"):
                path = pdir / f"{seg:020d}.{ext}"
                if damage == "index-deleted":
                    if path.exists():
                        path.unlink()
                else:
                    path.write_bytes(os.urandom(120))

    b.start()
    assert ck.watermarks(b.bootstrap, topic) == (0, 4000)
    _check_partition(b.bootstrap, topic, 0, recs)
    # Offset seeks and timestamp lookups inside the damaged segments still land exactly.
    c = ck.consumer(b.bootstrap)
    try:
        wrong = []
        for off in range(segs[-2], 4000):
            (tp,) = c.offsets_for_times([TopicPartition(topic, 0, base_ts + 3 * off - 1)], timeout=10)
            if tp.offset != off:
                wrong.append((off, tp.offset))
        assert not wrong, (f"{len(wrong)} wrong timestamp lookups in the last two segments {segs[-2:]},"
                           f" (expected, returned): {wrong[:8]} ... {wrong[-3:]}")
    finally:
        c.close()
    for off in (segs[-2] + 3, segs[-1] + 2):
        msgs = ck.consume_partition(b.bootstrap, topic, 0, off, expected=4000 - off)
        assert msgs[0].offset() == off and msgs[0].value() == recs[off]["value"]
    reports = ck.produce_all(ck.producer(b.bootstrap), [{"value": b"after"}], topic, partition=0)
    assert reports == [(0, 4000)]


@pytest.mark.parametrize("threads", [1, 4])
def test_many_partitions_survive_kill9(make_broker, threads):
    b = make_broker({"num.recovery.threads.per.data.dir": str(threads)})
    a = ck.admin(b.bootstrap)
    topics = [unique_topic(f"many{i}") for i in range(25)]
    for t, f in a.create_topics([NewTopic(t, 8, 1) for t in topics]).items():
        f.result(30)
    for t in topics:
        ck.wait_for_topic(b.bootstrap, t, 8)
    p = ck.producer(b.bootstrap, linger_ms=5)
    for t in topics:
        for part in range(8):
            for j in range(part + 1):  # partition p holds p+1 records
                p.produce(t, value=f"{t}/{part}/{j}".encode(), partition=part)
        p.poll(0)
    assert p.flush(60) == 0
    for clean in (False, True):
        b.restart(clean=clean)
        if not clean:
            assert f", {threads} threads per log dir" in b.log_text()
        got = ck.consume_partitions(b.bootstrap, [(t, q, 0) for t in topics for q in range(8)],
                                    expected=len(topics) * 36, timeout=120)
        for t in topics:
            for q in range(8):
                assert [m.value() for m in got[(t, q)]] == [f"{t}/{q}/{j}".encode() for j in range(q + 1)], (t, q)


def test_timestamp_lookup_after_restart(make_broker):
    """Every record is found by its timestamp after a clean restart, including the last records
    of sealed segments (whose time index must end with the segment's largest timestamp)."""
    b = make_broker({"log.segment.bytes": "16384", "log.index.interval.bytes": "1024"})
    topic = ck.create_topic(b.bootstrap, unique_topic("ts-restart"))
    base_ts = int(time.time() * 1000) - 500_000
    n = 2000
    ck.produce_all(ck.producer(b.bootstrap, linger_ms=1, batch_num_messages=5),
                   [{"value": f"v{i}".encode() + b"#" * 60, "timestamp": base_ts + 3 * i} for i in range(n)],
                   topic, partition=0)
    b.restart()
    segs = _segments(b.partition_dir(topic, 0))
    assert len(segs) >= 3
    c = ck.consumer(b.bootstrap)
    try:
        wrong = []
        for off in range(n):
            (tp,) = c.offsets_for_times([TopicPartition(topic, 0, base_ts + 3 * off - 1)], timeout=10)
            if tp.offset != off:
                wrong.append((off, tp.offset))
    finally:
        c.close()
    assert not wrong, (f"{len(wrong)} timestamp lookups wrong after restart, (expected, returned): {wrong[:12]};"
                       f" segment bases {segs}")


def test_sealed_segment_time_index_ends_with_max_timestamp(make_broker):
    """Kafka's on-disk contract: a rolled segment's .timeindex ends with (max timestamp, its offset)."""
    b = make_broker({"log.segment.bytes": "16384", "log.index.interval.bytes": "1024"})
    topic = ck.create_topic(b.bootstrap, unique_topic("ts-seal"))
    base_ts = int(time.time() * 1000) - 500_000
    ck.produce_all(ck.producer(b.bootstrap, linger_ms=1, batch_num_messages=5),
                   [{"value": f"v{i}".encode() + b"#" * 60, "timestamp": base_ts + 3 * i} for i in range(2000)],
                   topic, partition=0)
    b.stop()
    pdir = b.partition_dir(topic, 0)
    segs = _segments(pdir)
    assert len(segs) >= 3
    for seg in segs[:-1]:
        batches = list(kafka_wire.parse_batches((pdir / f"{seg:020d}.log").read_bytes()))
        max_ts = max(bt["max_timestamp"] for bt in batches)
        last_offset = batches[-1]["last_offset"]
        tidx = (pdir / f"{seg:020d}.timeindex").read_bytes()
        entries = [struct.unpack_from(">qi", tidx, k) for k in range(0, len(tidx), 12)]
        entries = [e for e in entries if e != (0, 0)]
        assert entries, f"{seg:020d}.timeindex is empty"
        ts, rel = entries[-1]
        assert (ts, seg + rel) == (max_ts, last_offset), \
            (f"{seg:020d}.timeindex ends with (ts base{ts - base_ts:+d}, offset {seg + rel}); the segment's max timestamp is"
             f" base{max_ts - base_ts:+d} at offset {last_offset}")
