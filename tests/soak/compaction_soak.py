#!/usr/bin/python3
"""Compaction soak: many rounds of the compaction model check against a real broker.

Each round writes 200,000 keyed records over 1,000 keys (10% tombstones), in bursts, to a new
compacted topic whose segments roll every 200 ms and whose cleaner passes come every 200 ms
(segment.bytes=102400, min.cleanable.dirty.ratio=0.01, delete.retention.ms=500). Meanwhile the
partition is read from offset 0 over and over: by a confluent-kafka consumer, and by readers over
Kafka's protocol that fetch one segment at a time and stop for a while part way, so that passes
come while they are in the middle of the log. Once the cleaner has nothing left to do the log is
read again; then, delete.retention.ms later, new keys are written to make one more pass come, and
the log is read once more. Everything read is checked against a model built from the delivery
reports. What must hold (Kafka's semantics of compaction):

- every record read is the one written at its offset, in offset order;
- a read from offset 0 sees the last write of each key below the end it reached, if a value (no
  pass during the read knew of a later write); if a tombstone, a read that took less than
  delete.retention.ms (less 100 ms of slack: a horizon counts from the start of a pass) saw it or
  nothing of the key, never an older value alone;
- once the cleaner is done, every key below its checkpoint appears once, and each key's last record
  is its last write: a deleted key only as its tombstone; after the pass past delete.retention.ms,
  the tombstones that pass found stamped with a passed horizon are gone.

    /usr/bin/python3 tests/soak/compaction_soak.py --rounds 20     (make soak SOAK_ROUNDS=20)

The broker is $OXBOW_BIN (default build/oxbow), started on a free loopback port with a temporary
data directory. Exit status 0 when every round passed; failures name the round, its seed and keys.
"""

import argparse
import bisect
import pathlib
import random
import shutil
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "integration"))

from confluent_kafka import KafkaError, KafkaException, TopicPartition  # noqa: E402

import ck_helpers as ck  # noqa: E402
import kafka_wire as kw  # noqa: E402
from harness import Broker, metric_value, scrape_metrics, unique_topic, wait_until  # noqa: E402

RETENTION_MS = 500
PASS_MS = 100  # longer than a pass over this log takes
PAUSE_S = 0.25  # how long a protocol reader may stop part way (reads up to 0.4 s are checked)
FETCH = 1
CONTROL_BIT = 0x20
TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "segment.ms": "200",
    "segment.bytes": "102400",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": str(RETENTION_MS),
}
# Housekeeping every second rolls a segment past segment.ms even with no new writes, so the last
# records become cleanable too.
BROKER_CONFIG = {"log.cleaner.backoff.ms": "200", "log.retention.check.interval.ms": "1000"}
CHECKPOINT = "cleaner-offset-checkpoint"
MIN_DIRTY_RATIO = float(TOPIC_CONFIG["min.cleanable.dirty.ratio"])


class Model:
    """Every write of the partition by offset, as the delivery reports told."""

    def __init__(self):
        self.writes = {}  # offset -> (key, value)
        self.offsets_of = {}  # key -> sorted offsets

    def add(self, offset, key, value):
        self.writes[offset] = (key, value)
        self.offsets_of.setdefault(key, []).append(offset)

    def finish(self):
        for offsets in self.offsets_of.values():
            offsets.sort()

    def last_below(self, key, end):
        offsets = self.offsets_of[key]
        i = bisect.bisect_left(offsets, end)
        return offsets[i - 1] if i else None

    def final(self):
        """{key: (offset, value)} of each key's last write."""
        return {k: (offs[-1], self.writes[offs[-1]][1]) for k, offs in self.offsets_of.items()}


class Read:
    """One read of the partition from offset 0 to the end it found, timed."""

    def __init__(self, records, started, ended, end):
        self.records = records  # [(offset, key, value)]
        self.seconds = ended - started
        self.end = end  # the offset after the last one the read covered


def read_partition(bootstrap, topic, timeout=60):
    """Reads from offset 0 to the end with a confluent-kafka consumer."""
    started = time.monotonic()
    c = ck.consumer(bootstrap, fetch_wait_max_ms=10)
    records = []
    try:
        c.assign([TopicPartition(topic, 0, 0)])
        deadline = started + timeout
        while True:
            if time.monotonic() > deadline:
                raise AssertionError(f"a read of {topic} did not reach its end within {timeout}s")
            for m in c.consume(num_messages=10000, timeout=0.2):
                err = m.error()
                if err is None:
                    records.append((m.offset(), m.key(), m.value()))
                elif err.code() == KafkaError._PARTITION_EOF:
                    # The end this read covered: the high watermark as of the fetch that found it.
                    end = m.offset()
                    return Read(records, started, time.monotonic(), end)
                elif m.topic() is not None or err.fatal():
                    raise KafkaException(err)
    finally:
        c.close()


def wire_fetch(conn, topic, offset, correlation_id):
    """One Fetch (v4) of partition 0 from `offset`: (error, high watermark, record batches blob)."""
    body = struct.pack(">iiiib", -1, 0, 0, 1 << 20, 0) + struct.pack(">i", 1) + kw.string(topic)
    body += struct.pack(">iiqi", 1, 0, offset, 1 << 20)
    r = kw.Reader(conn.request(FETCH, 4, correlation_id, body))
    r.int32()  # throttle time
    assert r.int32() == 1 and r.string() == topic and r.int32() == 1
    r.int32()  # partition
    error, high_watermark = r.int16(), r.int64()
    r.int64()  # last stable offset
    for _ in range(max(r.int32(), 0)):  # aborted transactions
        r.int64(), r.int64()
    return error, high_watermark, r.bytes_() or b""


def wire_read(port, topic, pause):
    """A read from offset 0 to the end over Kafka's protocol, one fetch at a time (each returns at
    most one segment's worth), sleeping up to `pause` seconds once, part way: that pass of the
    cleaner then has a reader in the middle of the log, as a consumer that reads slowly would."""
    started = time.monotonic()
    records, offset, n = [], 0, 0
    split = None
    with kw.Conn(port) as conn:
        while True:
            n += 1
            error, high_watermark, blob = wire_fetch(conn, topic, offset, n)
            assert error == 0, f"fetch at {offset}: error {error}"
            if split is None:
                split = random.randrange(high_watermark + 1)
            batches = list(kw.parse_batches(blob))
            if not batches:
                if offset >= high_watermark:
                    return Read(records, started, time.monotonic(), offset)
                raise AssertionError(f"a fetch at offset {offset} below the high watermark {high_watermark} "
                                     f"returned nothing")
            for bt in batches:
                assert bt["attributes"] & 0x07 == 0, "a compressed batch"
                if not bt["attributes"] & CONTROL_BIT:
                    records += [(o, k, v) for o, _ts, k, v, _h in kw.decode_uncompressed_records(bt["raw"])
                                if o >= offset]
                offset = bt["last_offset"] + 1
            if pause and offset >= split:
                time.sleep(random.uniform(0, pause))
                pause = 0


def check_read(model, read, label, strict_deletes):
    """Failures of one read against the model (complete by now): see the module's docstring."""
    failures = []
    wrong = [(o, k, v) for o, k, v in read.records if model.writes.get(o) != (k, v)]
    if wrong:
        failures.append(f"{label}: {len(wrong)} records not as written at their offset: {wrong[:3]}")
    offsets = [o for o, _k, _v in read.records]
    if offsets != sorted(set(offsets)):
        failures.append(f"{label}: offsets out of order or repeated")
    seen = {}  # key -> offset of the last record of it the read saw
    for o, k, _v in read.records:
        seen[k] = o
    # The read's end was the high watermark when it ended: no pass during the read knew of a later
    # write of a key than its last one below that end, so none could remove that last write.
    lost, resurrected = [], []
    for key in model.offsets_of:
        last = model.last_below(key, read.end)
        if last is None:
            continue
        if model.writes[last][1] is not None:
            if seen.get(key) != last:
                lost.append((key, last, seen.get(key)))
        elif strict_deletes and key in seen and seen[key] != last:
            resurrected.append((key, seen[key], last))
    if lost:
        failures.append(f"{label}: {len(lost)} last values not read (key, offset, last offset read of "
                        f"the key): {lost[:3]}")
    if resurrected:
        failures.append(f"{label}: {len(resurrected)} deleted keys read without their tombstone (key, "
                        f"value's offset, tombstone's offset), in {read.seconds:.3f}s: {resurrected[:3]}")
    return failures


def check_quiet(model, read, label, cp, tombstones_from):
    """Failures of a read with no pass nor write since `cp` was the cleaner's checkpoint: below it
    every key appears once; each key's last record is its last write, a deleted key's only as its
    tombstone at an offset from `tombstones_from` on, or none."""
    failures = check_read(model, read, label, strict_deletes=True)
    below = [k for o, k, _v in read.records if o < cp]
    if len(below) != len(set(below)):
        failures.append(f"{label}: a key appears twice below the checkpoint {cp}")
    final = model.final()
    got = {k: (o, v) for o, k, v in read.records}
    for key, (offset, value) in final.items():
        if value is not None and got.get(key) != (offset, value):
            failures.append(f"{label}: live key {key} reads {got.get(key)}, last written at {offset}")
        elif value is None and key in got and (got[key] != (offset, None) or offset < tombstones_from):
            failures.append(f"{label}: deleted key {key} reads {got[key]} (tombstone at {offset})")
    extra = set(got) - set(final)
    if extra:
        failures.append(f"{label}: keys never written: {sorted(extra)[:3]}")
    return failures[:20]


def checkpoint(broker, topic):
    try:
        text = (broker.partition_dir(topic, 0) / CHECKPOINT).read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def quiet(broker, topic, end):
    """True once no pass is due any more: all written below `end` was cleaned, or it is all in sealed
    segments but their dirty share is under min.cleanable.dirty.ratio."""
    if checkpoint(broker, topic) == end:
        return True
    if not any(int(f.name[:20]) >= end for f in broker.partition_dir(topic, 0).glob("*.log")):
        return False  # the active segment still holds some: it rolls after segment.ms
    ratio = metric_value(scrape_metrics(broker), "oxbow_log_cleaner_dirty_ratio", topic=topic, partition="0")
    return ratio < MIN_DIRTY_RATIO


def wait_quiet(broker, topic, what):
    end = ck.watermarks(broker.bootstrap, topic)[1]
    wait_until(lambda: quiet(broker, topic, end), 60, interval=0.05,
               message=f"the cleaner to be done with {what} of {topic} (end {end}, checkpoint "
                       f"{checkpoint(broker, topic)})")
    return checkpoint(broker, topic) or 0


def produce(p, topic, records, model):
    """Produces `records`, adding each delivery to `model`."""
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            model.add(msg.offset(), msg.key(), msg.value())

    for key, value in records:
        while True:
            try:
                p.produce(topic, key=key, value=value, partition=0, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    assert p.flush(120) == 0, "records still undelivered after flush"
    assert not errors, f"delivery errors: {errors[:3]}"


class Readers:
    """Threads reading the partition from offset 0 again and again until stopped: a confluent-kafka
    consumer, and `count` readers over the protocol that stop part way for a while (wire_read)."""

    def __init__(self, broker, topic, count):
        self.reads, self.errors = [], []
        self._stop = threading.Event()
        readers = [lambda: read_partition(broker.bootstrap, topic)]
        readers += [lambda: wire_read(broker.port, topic, PAUSE_S)] * count
        self._threads = [threading.Thread(target=self._run, args=(read,), daemon=True) for read in readers]
        for t in self._threads:
            t.start()

    def _run(self, read):
        while not self._stop.is_set():
            try:
                self.reads.append(read())
            except Exception as exc:  # noqa: BLE001 - reported as the round's failure
                self.errors.append(repr(exc))
                return

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(120)
        return self.reads


def one_round(broker, args, seed):
    rng = random.Random(seed)
    topic = ck.create_topic(broker.bootstrap, unique_topic("soak"), 1, TOPIC_CONFIG)
    model = Model()
    writes = []
    for i in range(args.records):
        key = f"key-{rng.randrange(args.keys):05d}".encode()
        value = None if rng.random() < args.tombstones else f"{i}:".encode() + b"v" * rng.randrange(10, 60)
        writes.append((key, value))
    p = ck.producer(broker.bootstrap, linger_ms=5, batch_size=16384)
    p.list_topics(topic, timeout=10)

    readers = Readers(broker, topic, args.readers)
    try:
        # In bursts: the last segment of a burst waits for the next roll, so its tombstones are often
        # older than delete.retention.ms when a pass first reaches them, and a pass may remove a key's
        # older value and find its tombstone expired by its own timestamp (the rule that was wrong).
        size = -(-len(writes) // args.bursts)
        for start in range(0, len(writes), size):
            if start:
                time.sleep(args.pause)
            produce(p, topic, writes[start:start + size], model)
        cp = wait_quiet(broker, topic, "the writes")
        quiet_at = time.monotonic()
        model.finish()
        cleaned = read_partition(broker.bootstrap, topic)
        failures = check_quiet(model, cleaned, "cleaned", cp, 0)
        tombstones = sum(1 for _o, _k, v in cleaned.records if v is None)

        # Once delete.retention.ms has passed since the last pass, a pass over new writes drops the
        # tombstones that pass kept, those it did not reach excepted: the trailer's keys are new, so
        # nothing else changes, and it is large enough to make the dirty share pass the minimum.
        left = RETENTION_MS / 1000 + 0.05 - (time.monotonic() - quiet_at)
        if left > 0:
            time.sleep(left)  # delete.retention.ms must pass: a time, not a condition
        trailer = [(f"trailer-{i}".encode(), b"t" * 100) for i in range(max(200, args.keys // 5))]
        produce(p, topic, trailer, model)
        model.finish()
        after = wait_quiet(broker, topic, "the trailer")
        failures += check_quiet(model, read_partition(broker.bootstrap, topic), "after the retention pass", after,
                                cp)
    finally:
        reads = readers.stop()

    failures += [f"reader: {e}" for e in readers.errors]
    strict = 0
    for n, read in enumerate(reads):
        # A tombstone's horizon counts from the start of the pass that first kept it (as in Kafka),
        # and that pass may remove the key's older value near its end: PASS_MS of slack for that.
        fast = read.seconds * 1000 < RETENTION_MS - PASS_MS
        strict += fast
        failures += check_read(model, read, f"read {n} (to {read.end}, {read.seconds:.3f}s)", fast)
    deleted = sum(1 for _o, v in model.final().values() if v is None)
    return failures, len(reads), strict, f"{deleted} deleted keys ({tombstones} tombstones once cleaned)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--tombstones", type=float, default=0.10)
    parser.add_argument("--bursts", type=int, default=10, help="a round's writes come in this many bursts")
    parser.add_argument("--pause", type=float, default=0.8, help="seconds between bursts")
    parser.add_argument("--readers", type=int, default=4,
                        help="protocol readers (besides one confluent-kafka consumer) reading while the cleaner runs")
    parser.add_argument("--seed", type=int, default=None, help="the first round's seed (then +1 each round)")
    parser.add_argument("--keep", action="store_true", help="keep the broker's directory")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)

    base = tempfile.mkdtemp(prefix="oxbow-compaction-soak-")
    broker = Broker(pathlib.Path(base) / "broker", BROKER_CONFIG)
    broker.start()
    failed = 0
    try:
        for n in range(args.rounds):
            started = time.monotonic()
            try:
                failures, reads, strict, deleted = one_round(broker, args, seed + n)
            except AssertionError as exc:
                failures, reads, strict, deleted = [str(exc)], 0, 0, "?"
            status = "FAIL" if failures else "ok"
            failed += bool(failures)
            print(f"round {n + 1}/{args.rounds} seed {seed + n}: {status} in {time.monotonic() - started:.1f}s;"
                  f" {reads} reads while writing and cleaning ({strict} short enough to check deletes),"
                  f" {deleted}", flush=True)
            for f in failures[:10]:
                print(f"  {f}", flush=True)
            if len(failures) > 10:
                print(f"  ... and {len(failures) - 10} more", flush=True)
            broker.assert_alive()
    finally:
        broker.stop(check=False)
        if args.keep or failed:
            print(f"broker directory: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(f"{args.rounds - failed} of {args.rounds} rounds passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
