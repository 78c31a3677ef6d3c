"""Transactions: the transaction coordinator, control markers, the last stable offset, read_committed
fetches, fencing, timeouts and recovery after a broker restart.

With confluent-kafka (librdkafka) transactional producers and read_committed / read_uncommitted
consumers, a consume-transform-produce process killed with SIGKILL, raw wire requests for the
coordinator's error codes, and the `oxbow txn` tool.  Control markers are also checked where they
live: in the partition's segment files, as control batches.
"""

import collections
import os
import random
import signal
import struct
import subprocess
import time

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition

import kafka_wire as kw
from ck_helpers import consume_partitions, consumer, create_topic, produce_all
from ck_helpers import producer as plain_producer
from harness import OXBOW_BIN, unique_topic, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"

# Broker settings for every test here: groups form at once, timed-out transactions are looked for
# every 200 ms.
TXN_BROKER = {
    "group.initial.rebalance.delay.ms": "0",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200",
}

# v2 record batch attribute bits and control record types.
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
ABORT, COMMIT = 0, 1

# Error codes.
NONE = 0
COORDINATOR_LOAD_IN_PROGRESS = 14
COORDINATOR_NOT_AVAILABLE = 15
NOT_COORDINATOR = 16
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TRANSACTION_TIMEOUT = 50
CONCURRENT_TRANSACTIONS = 51
PRODUCER_FENCED = 90
TRANSIENT = {COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, CONCURRENT_TRANSACTIONS}


@pytest.fixture
def txn_broker(make_broker):
    return make_broker(TXN_BROKER)


# ---------------------------------------------------------------------------------------------
# Client helpers.


def txn_producer(bootstrap, transactional_id, timeout_ms=30000, **conf):
    """A transactional producer, initialised (InitProducerId through the coordinator)."""
    base = {
        "bootstrap.servers": bootstrap,
        "transactional.id": transactional_id,
        "transaction.timeout.ms": timeout_ms,
        "linger.ms": 5,
    }
    base.update(conf)
    p = Producer(base)
    deadline = time.monotonic() + 60
    while True:
        try:
            p.init_transactions(30)
            return p
        except KafkaException as exc:
            if not exc.args[0].retriable() or time.monotonic() >= deadline:
                raise


def finish(p, commit, timeout=90):
    """commit_transaction or abort_transaction, repeated while the client calls the error retriable."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if commit:
                p.commit_transaction(30)
            else:
                p.abort_transaction(30)
            return
        except KafkaException as exc:
            err = exc.args[0]
            if not err.retriable() or time.monotonic() >= deadline:
                raise


def records(prefix, count, partitions):
    return [{"value": f"{prefix}-{i}", "partition": i % partitions} for i in range(count)]


def by_partition(recs, partitions):
    out = {p: [] for p in range(partitions)}
    for r in recs:
        out[r["partition"]].append(r["value"])
    return out


def read(bootstrap, topic, partitions, isolation, expected=None, timeout=60):
    """{partition: [(offset, value), ...]} of everything readable at `isolation`, up to its end."""
    got = consume_partitions(bootstrap, [(topic, p, 0) for p in range(partitions)], expected, timeout,
                             isolation_level=isolation)
    return {p: [(m.offset(), m.value().decode()) for m in got[(topic, p)]] for p in range(partitions)}


def values_of(read_result):
    return {p: [v for _o, v in msgs] for p, msgs in read_result.items()}


def end_offsets(bootstrap, topic, partitions, isolation):
    """ListOffsets(latest) per partition: the high watermark, or the LSO for read_committed."""
    c = consumer(bootstrap, isolation_level=isolation)
    try:
        return [c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                for p in range(partitions)]
    finally:
        c.close()


def offset_for_time(bootstrap, topic, partition, timestamp, isolation):
    """ListOffsets for a timestamp: the first offset at or after it, -1 if none (at this isolation)."""
    c = consumer(bootstrap, isolation_level=isolation)
    try:
        return c.offsets_for_times([TopicPartition(topic, partition, timestamp)], timeout=10)[0].offset
    finally:
        c.close()


def eventually_equal(fn, expected, timeout, what):
    """Polls fn() until it returns expected; on timeout fails showing the last value."""
    try:
        wait_until(lambda: fn() == expected, timeout, interval=0.1, message=what)
    except AssertionError:
        assert fn() == expected, what


class Reader:
    """A manually assigned consumer kept open across steps of a test."""

    def __init__(self, bootstrap, topic, partition, isolation):
        self.c = consumer(bootstrap, isolation_level=isolation)
        self.c.assign([TopicPartition(topic, partition, 0)])
        self.seen = []  # (offset, value)

    def poll_for(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._take(self.c.consume(num_messages=1000, timeout=0.1))
        return self.seen

    def poll_until(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition(self.seen):
            assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}; read {self.seen}"
            self._take(self.c.consume(num_messages=1000, timeout=0.1))
        return self.seen

    def _take(self, msgs):
        for m in msgs:
            err = m.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF or (m.topic() is None and not err.fatal()):
                    continue
                raise KafkaException(err)
            self.seen.append((m.offset(), m.value().decode()))

    def values(self):
        return [v for _o, v in self.seen]

    def close(self):
        self.c.close()


# ---------------------------------------------------------------------------------------------
# The segment files: control batches (markers) and transactional data batches.


def log_batches(broker, topic, partition):
    batches = []
    for path in sorted(broker.partition_dir(topic, partition).glob("*.log")):
        batches.extend(kw.parse_batches(path.read_bytes()))
    return batches


def batch_producer(batch):
    producer_id, epoch = struct.unpack_from(">qh", batch["raw"], 43)
    return producer_id, epoch


def markers(broker, topic, partition):
    """[(offset, ABORT|COMMIT), ...] for each control batch in the partition's log."""
    out = []
    for b in log_batches(broker, topic, partition):
        if b["attributes"] & CONTROL_BIT:
            assert b["attributes"] & TRANSACTIONAL_BIT, f"control batch at {b['base_offset']} not transactional"
            assert b["count"] == 1, f"control batch at {b['base_offset']} holds {b['count']} records"
            (_offset, _ts, key, _value, _headers), = kw.decode_uncompressed_records(b["raw"])
            version, kind = struct.unpack(">hh", key)
            assert version == 0, f"control record key version {version}"
            out.append((b["base_offset"], kind))
    return out


# ---------------------------------------------------------------------------------------------
# a. Committed and aborted transactions, read at both isolation levels.


def test_read_committed_sees_committed_transactions_only(txn_broker):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-basic")
    parts = 2
    create_topic(b, topic, parts)
    txn1, txn2, txn3 = records("t1", 100, parts), records("t2", 60, parts), records("t3", 40, parts)
    p = txn_producer(b, unique_topic("tid"))
    for recs, commit in ((txn1, True), (txn2, False), (txn3, True)):
        p.begin_transaction()
        produce_all(p, recs, topic)
        finish(p, commit)

    committed = read(b, topic, parts, "read_committed", expected=len(txn1) + len(txn3))
    uncommitted = read(b, topic, parts, "read_uncommitted", expected=len(txn1) + len(txn2) + len(txn3))
    n1, n2, n3 = (by_partition(t, parts) for t in (txn1, txn2, txn3))
    for q in range(parts):
        # One marker after each transaction takes an offset of its own.
        first1, first2, first3 = 0, len(n1[q]) + 1, len(n1[q]) + 1 + len(n2[q]) + 1
        offsets1 = list(range(first1, first1 + len(n1[q])))
        offsets2 = list(range(first2, first2 + len(n2[q])))
        offsets3 = list(range(first3, first3 + len(n3[q])))
        assert committed[q] == list(zip(offsets1 + offsets3, n1[q] + n3[q])), f"read_committed partition {q}"
        assert uncommitted[q] == list(zip(offsets1 + offsets2 + offsets3, n1[q] + n2[q] + n3[q])), \
            f"read_uncommitted partition {q}"
        end = first3 + len(n3[q]) + 1
        eventually_equal(lambda: markers(txn_broker, topic, q),
                         [(first2 - 1, COMMIT), (first3 - 1, ABORT), (end - 1, COMMIT)], 15,
                         f"commit, abort, commit markers in partition {q}")
        data = [bt for bt in log_batches(txn_broker, topic, q) if not bt["attributes"] & CONTROL_BIT]
        assert data and all(bt["attributes"] & TRANSACTIONAL_BIT for bt in data), "data batches not transactional"
        control = [bt for bt in log_batches(txn_broker, topic, q) if bt["attributes"] & CONTROL_BIT]
        assert {batch_producer(bt)[0] for bt in data + control} == {batch_producer(data[0])[0]}, \
            "markers written for another producer id"
    assert sum(len(v) for v in committed.values()) == len(txn1) + len(txn3)
    assert sum(len(v) for v in uncommitted.values()) == len(txn1) + len(txn2) + len(txn3)
    # The end offset counts the markers: 100 + 60 + 40 records and 3 markers per partition.
    expected_end = [len(n1[q]) + len(n2[q]) + len(n3[q]) + 3 for q in range(parts)]
    assert end_offsets(b, topic, parts, "read_uncommitted") == expected_end
    assert end_offsets(b, topic, parts, "read_committed") == expected_end  # nothing open: LSO = HW


# ---------------------------------------------------------------------------------------------
# b. An open transaction holds back read_committed readers at its first offset (the LSO).


def test_open_transaction_holds_the_last_stable_offset(txn_broker):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-lso")
    create_topic(b, topic, 1)
    t0 = int(time.time() * 1000) - 60_000
    plain = plain_producer(b)
    produce_all(plain, [{"value": "before", "partition": 0, "timestamp": t0}], topic)  # offset 0
    p = txn_producer(b, unique_topic("tid"))
    p.begin_transaction()
    produce_all(p, [{"value": f"open-{i}", "partition": 0, "timestamp": t0 + 10_000 + i} for i in range(20)],
                topic)  # offsets 1..20
    produce_all(plain, [{"value": "mid", "partition": 0, "timestamp": t0 + 20_000}], topic)  # offset 21
    open_values = [f"open-{i}" for i in range(20)]

    # ListOffsets: read_committed gets the LSO (the open transaction's first offset), read_uncommitted
    # the high watermark.
    assert end_offsets(b, topic, 1, "read_committed") == [1]
    assert end_offsets(b, topic, 1, "read_uncommitted") == [22]

    committed_reader = Reader(b, topic, 0, "read_committed")
    uncommitted_reader = Reader(b, topic, 0, "read_uncommitted")
    try:
        committed_reader.poll_until(lambda seen: seen, 30, "the record written before the transaction")
        committed_reader.poll_for(1.0)  # a negative check: nothing past the LSO comes
        assert committed_reader.seen == [(0, "before")]
        uncommitted_reader.poll_until(lambda seen: len(seen) >= 22, 30, "all 22 records at read_uncommitted")
        assert uncommitted_reader.values() == ["before"] + open_values + ["mid"]
        # A timestamp lookup landing at or past the LSO finds nothing (-1) for read_committed.
        assert offset_for_time(b, topic, 0, t0 + 5_000, "read_uncommitted") == 1
        assert offset_for_time(b, topic, 0, t0 + 5_000, "read_committed") == -1

        finish(p, commit=True)
        committed_reader.poll_until(lambda seen: len(seen) >= 22, 30, "the committed records")
        committed_reader.poll_for(0.3)
        assert committed_reader.seen == list(enumerate(["before"] + open_values + ["mid"]))
    finally:
        committed_reader.close()
        uncommitted_reader.close()
    eventually_equal(lambda: end_offsets(b, topic, 1, "read_committed"), [23], 15, "LSO past the commit marker")
    assert end_offsets(b, topic, 1, "read_uncommitted") == [23]
    assert offset_for_time(b, topic, 0, t0 + 5_000, "read_committed") == 1
    assert markers(txn_broker, topic, 0) == [(22, COMMIT)]


# ---------------------------------------------------------------------------------------------
# c. Consume-transform-produce, exactly once, while the processor is killed with SIGKILL.


class Processor:
    def __init__(self, log_path, *args):
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen([PYTHON, os.path.join(HERE, "txn_processor.py"), *args],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)

    def assert_running(self, log_path):
        if self.proc.poll() is not None:
            tail = "\n".join(open(log_path, errors="replace").read().splitlines()[-30:])
            raise AssertionError(f"processor exited with {self.proc.returncode}\n{tail}")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        self.kill()


def test_consume_transform_produce_is_exactly_once_across_kill_9(txn_broker, tmp_path):
    b = txn_broker.bootstrap
    source, sink = unique_topic("ctp-in"), unique_topic("ctp-out")
    group, transactional_id = unique_topic("ctp-group"), unique_topic("ctp-tid")
    parts, n = 3, 100_000
    create_topic(b, source, parts)
    create_topic(b, sink, parts)
    loader = plain_producer(b, **{"linger.ms": 50, "batch.num.messages": 10000,
                                  "queue.buffering.max.messages": 200000})
    produce_all(loader, ({"key": f"k{i}", "value": f"in-{i}", "partition": i % parts} for i in range(n)), source)
    source_end = end_offsets(b, source, parts, "read_uncommitted")
    assert sum(source_end) == n

    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    log_path = tmp_path / "processor.log"
    # Transactions of up to 2000 records, each held open 30 ms after its records are written.
    args = (b, source, sink, group, transactional_id, "--batch", "2000", "--pause-ms", "30")
    hw_reader = consumer(b, isolation_level="read_uncommitted")
    lso_reader = consumer(b, isolation_level="read_committed")
    group_reader = consumer(b, isolation_level="read_uncommitted", group_id=group)  # OffsetFetch only

    def sink_offsets(c):
        return [c.get_watermark_offsets(TopicPartition(sink, q), timeout=10, cached=False)[1] for q in range(parts)]

    def open_transaction():
        """(high watermarks, whether a transaction was open on the output: some LSO below its HW)."""
        lsos = sink_offsets(lso_reader)  # first: an LSO below a later HW is a transaction open at that time
        hws = sink_offsets(hw_reader)
        return hws, any(lso < hw for lso, hw in zip(lsos, hws))

    kills, kills_mid_transaction = 0, 0
    progress = 0
    proc = None
    try:
        # Kill at random points, each once the output has grown by a random amount and a transaction
        # is open on the output (some partition's LSO below its high watermark); at least 3 times and
        # until one kill has left an open transaction behind for the next instance to fence.
        while kills < 3 or (kills_mid_transaction == 0 and kills < 6):
            proc = Processor(log_path, *args)
            target = progress + rng.randint(3000, 12000)
            deadline = time.monotonic() + 120
            while True:
                proc.assert_running(log_path)
                hws, is_open = open_transaction()
                if sum(hws) >= target and is_open:
                    break
                assert time.monotonic() < deadline, \
                    f"no output progress to {target} (at {sum(hws)}) after kill {kills}, seed {seed}"
                time.sleep(0.02)
            proc.kill()
            kills += 1
            hws, is_open = open_transaction()
            if is_open:
                kills_mid_transaction += 1  # the dead instance cannot end it: the next one must fence it
            progress = sum(hws)

        # The last instance runs until the group's committed offsets reach the input's end.
        proc = Processor(log_path, *args)
        deadline = time.monotonic() + 180
        committed = None
        while committed != source_end:
            proc.assert_running(log_path)
            assert time.monotonic() < deadline, \
                f"group offsets {committed}, not at the input's end {source_end} (seed {seed})"
            time.sleep(0.2)
            try:
                got = group_reader.committed([TopicPartition(source, q) for q in range(parts)], timeout=10)
                committed = [tp.offset for tp in got]
            except KafkaException:
                pass  # e.g. a coordinator not answering yet: ask again
        proc.stop()
        assert proc.proc.returncode == 0, f"processor exit status {proc.proc.returncode}"
    finally:
        if proc is not None:
            proc.kill()
        for c in (hw_reader, lso_reader, group_reader):
            c.close()

    assert kills >= 3 and kills_mid_transaction >= 1, (kills, kills_mid_transaction, seed)
    out = consume_partitions(b, [(sink, q, 0) for q in range(parts)], expected=n, timeout=120,
                             isolation_level="read_committed")
    got = collections.Counter((m.key().decode(), m.value().decode()) for msgs in out.values() for m in msgs)
    want = collections.Counter((f"k{i}", f"out-in-{i}") for i in range(n))
    missing, extra = want - got, got - want
    assert not missing and not extra, (
        f"seed {seed}, {kills} kills ({kills_mid_transaction} mid-transaction): {sum(missing.values())} missing"
        f" e.g. {list(missing)[:5]}, {sum(extra.values())} extra e.g. {list(extra.items())[:5]}")


# ---------------------------------------------------------------------------------------------
# d. A producer that dies mid-transaction: the broker aborts it when it times out.

DOOMED_PRODUCER = r"""
import sys, time
from confluent_kafka import Producer
bootstrap, topic, transactional_id = sys.argv[1:4]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
              "transaction.timeout.ms": 2000, "linger.ms": 0})
p.init_transactions(30)
p.begin_transaction()
for i in range(10):
    p.produce(topic, value=f"doomed-{i}", partition=0)
assert p.flush(30) == 0
print("ready", flush=True)
time.sleep(3600)
"""


def test_transaction_of_a_killed_producer_is_aborted_on_timeout(txn_broker):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-timeout")
    create_topic(b, topic, 1)
    proc = subprocess.Popen([PYTHON, "-c", DOOMED_PRODUCER, b, topic, unique_topic("tid")],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "ready", f"transactional producer did not get ready: {line!r}, exit {proc.poll()}"
    finally:
        proc.kill()
        proc.wait()
    produce_all(plain_producer(b), [{"value": "after", "partition": 0}], topic)
    doomed = [f"doomed-{i}" for i in range(10)]

    reader = Reader(b, topic, 0, "read_committed")
    try:
        # Nothing can be read at read_committed until the broker aborts the expired transaction.
        reader.poll_until(lambda seen: seen, 30, "the record after the dead producer's transaction")
        reader.poll_for(0.3)
        assert reader.values() == ["after"]
    finally:
        reader.close()
    uncommitted = values_of(read(b, topic, 1, "read_uncommitted", expected=11))[0]
    assert uncommitted == doomed + ["after"]
    found = markers(txn_broker, topic, 0)
    assert [kind for _o, kind in found] == [ABORT] and found[0][0] >= 10, found
    committed = values_of(read(b, topic, 1, "read_committed", expected=1))[0]
    assert committed == ["after"]


# ---------------------------------------------------------------------------------------------
# e. A broker restart (clean or kill -9) in the middle of a transaction.


@pytest.mark.parametrize("outcome", ["commit", "abort"])
@pytest.mark.parametrize("clean", [True, False], ids=["sigterm", "sigkill"])
def test_transaction_continues_across_a_broker_restart(txn_broker, clean, outcome):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-restart")
    parts = 2
    create_topic(b, topic, parts)
    plain = plain_producer(b)
    produce_all(plain, [{"value": "before", "partition": q} for q in range(parts)], topic)  # offset 0 in each
    p = txn_producer(b, unique_topic("tid"), timeout_ms=60000)
    p.begin_transaction()
    first, second = records("first", 20, parts), records("second", 20, parts)
    produce_all(p, first, topic)

    txn_broker.restart(clean=clean)
    # Recovered with the transaction still open: the LSO stays at its first offset.
    eventually_equal(lambda: end_offsets(b, topic, parts, "read_committed"), [1] * parts, 30,
                     "LSO at the open transaction's first offset after the restart")
    assert end_offsets(b, topic, parts, "read_uncommitted") == [11] * parts

    produce_all(p, second, topic)
    finish(p, commit=outcome == "commit")
    produce_all(plain, [{"value": "after", "partition": q} for q in range(parts)], topic)

    f, s = by_partition(first, parts), by_partition(second, parts)
    if outcome == "commit":
        expected = {q: ["before"] + f[q] + s[q] + ["after"] for q in range(parts)}
    else:
        expected = {q: ["before", "after"] for q in range(parts)}
    committed = values_of(read(b, topic, parts, "read_committed",
                               expected=sum(len(v) for v in expected.values())))
    assert committed == expected
    uncommitted = values_of(read(b, topic, parts, "read_uncommitted", expected=2 * parts + 40))
    assert uncommitted == {q: ["before"] + f[q] + s[q] + ["after"] for q in range(parts)}
    for q in range(parts):
        assert markers(txn_broker, topic, q) == [(21, COMMIT if outcome == "commit" else ABORT)]


# ---------------------------------------------------------------------------------------------
# f. A second producer with the same transactional id fences the first.


def test_new_producer_with_same_transactional_id_fences_the_old_one(txn_broker):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-fence")
    create_topic(b, topic, 1)
    transactional_id = unique_topic("tid")
    zombie = txn_producer(b, transactional_id, timeout_ms=20000)
    zombie.begin_transaction()
    produce_all(zombie, records("zombie", 10, 1), topic)

    successor = txn_producer(b, transactional_id)  # bumps the epoch and aborts the zombie's transaction

    late_errors = []
    try:
        zombie.produce(topic, value="zombie-late", partition=0,
                       on_delivery=lambda err, msg: late_errors.append(err))
        zombie.flush(30)
    except KafkaException as exc:  # the client may already know it is fenced
        late_errors.append(exc.args[0])
    assert len(late_errors) == 1 and late_errors[0] is not None, \
        f"a write with the fenced epoch was accepted: {late_errors}"
    with pytest.raises(KafkaException) as raised:
        zombie.commit_transaction(30)
    err = raised.value.args[0]
    assert err.fatal() or err.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED,
                                         KafkaError.INVALID_PRODUCER_EPOCH), f"commit failed with {err}"

    successor.begin_transaction()
    produce_all(successor, records("successor", 5, 1), topic)
    finish(successor, commit=True)
    committed = values_of(read(b, topic, 1, "read_committed", expected=5))[0]
    assert committed == [f"successor-{i}" for i in range(5)]
    uncommitted = values_of(read(b, topic, 1, "read_uncommitted", expected=15))[0]
    assert uncommitted == [f"zombie-{i}" for i in range(10)] + [f"successor-{i}" for i in range(5)]
    assert [kind for _o, kind in markers(txn_broker, topic, 0)] == [ABORT, COMMIT]


# ---------------------------------------------------------------------------------------------
# g. Offsets sent to a transaction are committed with it, and only if it commits.


def test_offsets_sent_to_a_transaction_count_only_when_it_commits(txn_broker):
    b = txn_broker.bootstrap
    topic, group = unique_topic("txn-offsets"), unique_topic("txn-group")
    parts = 2
    create_topic(b, topic, parts)
    produce_all(plain_producer(b), records("r", 40, parts), topic)
    tps = [TopicPartition(topic, q) for q in range(parts)]

    def committed(isolation):
        c = consumer(b, group_id=group, isolation_level=isolation)
        try:
            return [tp.offset for tp in c.committed(tps, timeout=15)]
        finally:
            c.close()

    metadata_source = consumer(b, group_id=group)  # never joins: generation -1, no member id
    try:
        group_metadata = metadata_source.consumer_group_metadata()
        p = txn_producer(b, unique_topic("tid"))

        p.begin_transaction()
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 5), TopicPartition(topic, 1, 7)],
                                      group_metadata, 30)
        finish(p, commit=True)
        assert committed("read_committed") == [5, 7]
        assert committed("read_uncommitted") == [5, 7]

        p.begin_transaction()
        produce_all(p, records("aborted", 4, parts), topic)
        p.send_offsets_to_transaction([TopicPartition(topic, 0, 9), TopicPartition(topic, 1, 11)],
                                      group_metadata, 30)
        assert committed("read_uncommitted") == [5, 7]  # pending offsets are not committed offsets
        finish(p, commit=False)
        assert committed("read_committed") == [5, 7]
        assert committed("read_uncommitted") == [5, 7]

        # Reloading __consumer_offsets after a restart must skip the aborted transaction's offsets.
        txn_broker.restart()
        assert committed("read_committed") == [5, 7]

        p2 = txn_producer(b, unique_topic("tid"))
        p2.begin_transaction()
        p2.send_offsets_to_transaction([TopicPartition(topic, 0, 12), TopicPartition(topic, 1, 13)],
                                       group_metadata, 30)
        finish(p2, commit=True)
        assert committed("read_committed") == [12, 13]
        txn_broker.restart(clean=False)
        assert committed("read_committed") == [12, 13]
    finally:
        metadata_source.close()


# ---------------------------------------------------------------------------------------------
# Raw wire requests (non-flexible versions): FindCoordinator v1, InitProducerId v1,
# AddPartitionsToTxn v1/v2, EndTxn v2, Produce v8.


class Wire:
    def __init__(self, port):
        self.conn = kw.Conn(port)
        self.correlation = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.conn.close()

    def call(self, api_key, version, body):
        self.correlation += 1
        return self.conn.request(api_key, version, self.correlation, body)

    def find_coordinator(self, key, key_type):
        r = kw.Reader(self.call(10, 1, kw.string(key) + struct.pack(">b", key_type)))
        r.int32()  # throttle
        error = r.int16()
        r.string()  # error message
        node, host, port = r.int32(), r.string(), r.int32()
        return {"error": error, "node_id": node, "host": host, "port": port}

    def init_producer_id(self, transactional_id, timeout_ms):
        r = kw.Reader(self.call(22, 1, kw.string(transactional_id) + struct.pack(">i", timeout_ms)))
        r.int32()
        return {"error": r.int16(), "producer_id": r.int64(), "epoch": r.int16()}

    def add_partitions(self, transactional_id, producer_id, epoch, topic, partitions, version=2):
        body = kw.string(transactional_id) + struct.pack(">qh", producer_id, epoch)
        body += struct.pack(">i", 1) + kw.string(topic) + struct.pack(">i", len(partitions))
        body += b"".join(struct.pack(">i", q) for q in partitions)
        r = kw.Reader(self.call(24, version, body))
        r.int32()
        out = {}
        for _ in range(r.int32()):
            name = r.string()
            for _ in range(r.int32()):
                q = r.int32()
                out[(name, q)] = r.int16()
        return out

    def end_txn(self, transactional_id, producer_id, epoch, commit, version=2):
        body = kw.string(transactional_id) + struct.pack(">qhb", producer_id, epoch, 1 if commit else 0)
        r = kw.Reader(self.call(26, version, body))
        r.int32()
        return r.int16()

    def produce(self, transactional_id, topic, partition, batch):
        body = kw.string(transactional_id) + struct.pack(">hi", -1, 10000)
        body += struct.pack(">i", 1) + kw.string(topic)
        body += struct.pack(">i", 1) + struct.pack(">i", partition) + struct.pack(">i", len(batch)) + batch
        (result,), _throttle = kw.parse_produce_v8_response(self.call(0, 8, body))
        return result


def settled(call, error_of, timeout=30):
    """call() repeated while its error is a transient coordinator error; returns the last result."""
    box = {}

    def attempt():
        box["result"] = call()
        return error_of(box["result"]) not in TRANSIENT

    try:
        wait_until(attempt, timeout, interval=0.1, message="an answer without a transient coordinator error")
    except AssertionError:
        raise AssertionError(f"still a transient error after {timeout}s: {box.get('result')}") from None
    return box["result"]


def init_pid(w, transactional_id, timeout_ms=60000):
    return settled(lambda: w.init_producer_id(transactional_id, timeout_ms), lambda r: r["error"])


def add_partitions(w, transactional_id, producer_id, epoch, topic, partitions, version=2):
    return settled(lambda: w.add_partitions(transactional_id, producer_id, epoch, topic, partitions, version),
                   lambda r: next((e for e in r.values() if e in TRANSIENT), NONE))


def end_txn(w, transactional_id, producer_id, epoch, commit):
    return settled(lambda: w.end_txn(transactional_id, producer_id, epoch, commit), lambda e: e)


def txn_batch(values, producer_id, epoch, base_sequence):
    """An uncompressed transactional v2 batch (base offset 0, CRC-32C filled in)."""
    ts = int(time.time() * 1000)
    encoded = b"".join(kw.encode_record(i, 0, None, v) for i, v in enumerate(values))
    after_crc = struct.pack(">hiqqqhii", TRANSACTIONAL_BIT, len(values) - 1, ts, ts, producer_id, epoch,
                            base_sequence, len(values)) + encoded
    after_length = struct.pack(">ibI", -1, 2, kw.crc32c(after_crc)) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


# ---------------------------------------------------------------------------------------------
# h. Coordinator error codes.


def test_coordinator_answers_and_error_codes(make_broker):
    broker = make_broker({**TXN_BROKER, "transaction.max.timeout.ms": "60000"})
    topic = unique_topic("txn-raw")
    create_topic(broker.bootstrap, topic, 1)
    tid = unique_topic("raw-tid")
    with Wire(broker.port) as w:
        found = settled(lambda: w.find_coordinator(tid, 1), lambda r: r["error"])
        assert found == {"error": NONE, "node_id": 0, "host": "127.0.0.1", "port": broker.port}

        assert init_pid(w, tid, 60001)["error"] == INVALID_TRANSACTION_TIMEOUT
        first = init_pid(w, tid, 60000)
        assert first["error"] == NONE and first["producer_id"] >= 0 and first["epoch"] >= 0, first
        pid, epoch = first["producer_id"], first["epoch"]

        assert end_txn(w, unique_topic("never-initialised"), 1234, 0, True) == INVALID_PRODUCER_ID_MAPPING
        assert end_txn(w, tid, pid, epoch, True) == INVALID_TXN_STATE  # no transaction in progress

        # Initialising again keeps the producer id and bumps the epoch; the old epoch is fenced.
        second = init_pid(w, tid, 60000)
        assert (second["error"], second["producer_id"], second["epoch"]) == (NONE, pid, epoch + 1), second
        new_epoch = second["epoch"]
        assert add_partitions(w, tid, pid, epoch, topic, [0], version=1) == {(topic, 0): INVALID_PRODUCER_EPOCH}
        fenced = add_partitions(w, tid, pid, epoch, topic, [0], version=2)
        assert fenced in ({(topic, 0): PRODUCER_FENCED}, {(topic, 0): INVALID_PRODUCER_EPOCH}), fenced
        assert add_partitions(w, tid, pid + 1, new_epoch, topic, [0]) == {(topic, 0): INVALID_PRODUCER_ID_MAPPING}

        assert add_partitions(w, tid, pid, new_epoch, topic, [0]) == {(topic, 0): NONE}
        assert end_txn(w, tid, pid, epoch, False) in (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH)
        assert end_txn(w, tid, pid, new_epoch, False) == NONE


# ---------------------------------------------------------------------------------------------
# i. A transactional write to a partition that is not in the transaction is refused (KIP-890).


def test_transactional_write_to_a_partition_outside_the_transaction_is_refused(txn_broker):
    b = txn_broker.bootstrap
    topic = unique_topic("txn-verify")
    create_topic(b, topic, 2)
    tid = unique_topic("raw-tid")
    with Wire(txn_broker.port) as w:
        init = init_pid(w, tid)
        assert init["error"] == NONE, init
        pid, epoch = init["producer_id"], init["epoch"]
        assert add_partitions(w, tid, pid, epoch, topic, [0]) == {(topic, 0): NONE}

        stray = w.produce(tid, topic, 1, txn_batch([b"stray-0", b"stray-1"], pid, epoch, 0))
        assert stray["error"] == INVALID_TXN_STATE, stray
        kept = w.produce(tid, topic, 0, txn_batch([b"kept-0", b"kept-1", b"kept-2"], pid, epoch, 0))
        assert (kept["error"], kept["base_offset"]) == (NONE, 0), kept
        assert end_offsets(b, topic, 2, "read_uncommitted") == [3, 0]
        assert end_offsets(b, topic, 2, "read_committed") == [0, 0]

        assert end_txn(w, tid, pid, epoch, True) == NONE
        eventually_equal(lambda: end_offsets(b, topic, 2, "read_committed"), [4, 0], 15, "LSO past the marker")
        # The transaction is over: partition 0 is no longer part of one either.
        late = w.produce(tid, topic, 0, txn_batch([b"late-0"], pid, epoch, 3))
        assert late["error"] == INVALID_TXN_STATE, late
    assert end_offsets(b, topic, 2, "read_uncommitted") == [4, 0]
    assert values_of(read(b, topic, 2, "read_committed", expected=3)) == {0: ["kept-0", "kept-1", "kept-2"], 1: []}
    assert log_batches(txn_broker, topic, 1) == []
    assert markers(txn_broker, topic, 0) == [(3, COMMIT)]


# ---------------------------------------------------------------------------------------------
# j. oxbow txn list / describe (DescribeTransactions, ListTransactions).


def oxbow_txn(broker, *args, check=True):
    result = subprocess.run([OXBOW_BIN, "txn", *args, "--bootstrap-server", broker.bootstrap],
                            capture_output=True, text=True, timeout=60)
    if check:
        assert result.returncode == 0, f"oxbow txn {' '.join(args)} failed: {result.stderr}"
    return result


def table(text):
    """Rows of a whitespace-aligned table as dicts keyed by the header's column names, normalised
    (lower case, no '-' or '_'); the last column takes the rest of the line."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert lines, "empty output"
    header = [h.lower().replace("-", "").replace("_", "") for h in lines[0].split()]
    return [dict(zip(header, line.split(None, len(header) - 1))) for line in lines[1:]]


# Column names as kafka-transactions.sh prints them, or shorter as in the `oxbow group` tables.
COLUMNS = {
    "id": ("transactionalid",),
    "state": ("transactionstate", "state"),
    "producer_id": ("producerid",),
    "epoch": ("producerepoch", "epoch"),
    "partitions": ("topicpartitions", "partitions"),
}


def txn_row(text, transactional_id):
    """The row of transactional_id, as {"id", "state", "producer_id", "epoch", "partitions"} (those present)."""
    rows = []
    for raw in table(text):
        row = {key: next((raw[n] for n in names if n in raw), None) for key, names in COLUMNS.items()}
        if row["id"] == transactional_id:
            rows.append(row)
    assert len(rows) == 1, f"{transactional_id} not listed once in:\n{text}"
    return rows[0]


def _list_transactions_v1(port, duration_filter):
    """ListTransactions v1 with no state or producer filter: {transactional id: state}."""
    body = kw.compact_array([]) + kw.compact_array([]) + struct.pack(">q", duration_filter)
    with kw.Conn(port) as c:
        r = kw.flexible_request(c, 66, 1, 5, body)
    r.int32()  # throttle
    assert r.int16() == 0
    assert r.compact_array(r.compact_string) == []  # unknown state filters

    def state():
        entry = (r.compact_string(), r.int64(), r.compact_string())
        r.skip_tags()
        return entry
    return {tid: name for tid, _pid, name in r.compact_array(state)}


def _begin_transaction(w, broker, name, partitions):
    """A new topic of `partitions` partitions and a transaction holding all of them, begun over Wire
    `w`: (topic, transactional id, producer id, epoch)."""
    topic = unique_topic(f"txn-{name}")
    create_topic(broker.bootstrap, topic, partitions)
    tid = unique_topic(f"{name}-tid")
    init = init_pid(w, tid)
    pid, epoch = init["producer_id"], init["epoch"]
    added = add_partitions(w, tid, pid, epoch, topic, list(range(partitions)))
    assert added == {(topic, q): NONE for q in range(partitions)}
    return topic, tid, pid, epoch


def test_list_transactions_v1_duration_filter(txn_broker):
    """KIP-994: with a duration filter only transactions running longer than it are listed."""
    with Wire(txn_broker.port) as w:
        _topic, tid, _pid, _epoch = _begin_transaction(w, txn_broker, "aged", 1)
        assert _list_transactions_v1(txn_broker.port, -1).get(tid) == "Ongoing"
        assert tid not in _list_transactions_v1(txn_broker.port, 3_600_000)
        wait_until(lambda: _list_transactions_v1(txn_broker.port, 50).get(tid) == "Ongoing", 10,
                   message="the transaction listed once older than 50 ms")


def test_cli_lists_and_describes_transactions(txn_broker):
    with Wire(txn_broker.port) as w:
        topic, tid, pid, epoch = _begin_transaction(w, txn_broker, "cli", 2)

        listed = txn_row(oxbow_txn(txn_broker, "list").stdout, tid)
        assert (listed["state"], listed["producer_id"]) == ("Ongoing", str(pid)), listed

        described = txn_row(oxbow_txn(txn_broker, "describe", tid).stdout, tid)
        shown = (described["state"], described["producer_id"], described["epoch"])
        assert shown == ("Ongoing", str(pid), str(epoch)), described
        partitions = {tp.strip() for tp in (described["partitions"] or "").split(",")}
        assert partitions == {f"{topic}-0", f"{topic}-1"}, described

        assert tid in oxbow_txn(txn_broker, "list", "--state", "Ongoing").stdout
        assert tid not in oxbow_txn(txn_broker, "list", "--state", "CompleteCommit").stdout

        assert end_txn(w, tid, pid, epoch, True) == NONE
    wait_until(lambda: txn_row(oxbow_txn(txn_broker, "list").stdout, tid)["state"] == "CompleteCommit",
               15, message="CompleteCommit in oxbow txn list")
    described = txn_row(oxbow_txn(txn_broker, "describe", tid).stdout, tid)
    assert described["state"] == "CompleteCommit", described
    assert tid not in oxbow_txn(txn_broker, "list", "--state", "Ongoing").stdout

    missing = oxbow_txn(txn_broker, "describe", unique_topic("no-such-tid"), check=False)
    assert missing.returncode == 1, missing
    assert "TRANSACTIONAL_ID_NOT_FOUND" in missing.stderr or "not found" in missing.stderr.lower(), missing.stderr
