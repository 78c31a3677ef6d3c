"""Log compaction (cleanup.policy=compact): the log cleaner, checked against a model of what was written.

Every test drives the real broker with real clients (confluent-kafka, raw wire requests) and checks
what a consumer reads back, and the segment files and `cleaner-offset-checkpoint` on disk, against a
model built from the delivery reports: for each partition, which (key, value) was written at which
offset.  What compaction must guarantee (Kafka's semantics):

- below the cleaner checkpoint every key appears at most once, and only with the last value it was
  given below the checkpoint; at and after the checkpoint nothing is removed (except by a pass cut
  short by a crash: the checkpoint is written when a pass ends);
- a record keeps the offset it was written at (compaction leaves gaps, never renumbers);
- replaying the log in offset order gives exactly the model's live keys and values;
- tombstones (and markers of transactions with no records left) go with the first pass once
  delete.retention.ms has passed since the pass that first kept them, as in Kafka (KIP-534): so a
  consumer reading from offset 0 that reaches the head within delete.retention.ms sees every delete;
  aborted transactional records go; open transactions (past the last stable offset) are never
  compacted;
- a kill -9 at any moment of a pass leaves a correct log, and the restart leaves no `cleaning` dir.

The cleaner is made quick with log.cleaner.backoff.ms=100 and log.retention.check.interval.ms=100;
a small segment.ms rolls the active segment so that everything written becomes cleanable, and a
pass that cleaned the whole log leaves checkpoint == high watermark.
"""

import bisect
import os
import random
import time
import urllib.request

import pytest
from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
import kafka_wire as kw
from harness import scrape_metrics, unique_topic, wait_until

CLEANER_BROKER = {"log.cleaner.backoff.ms": "100", "log.retention.check.interval.ms": "100"}
CHECKPOINT = "cleaner-offset-checkpoint"
CLEANING_DIR = "cleaning"
PRODUCE = 0
INVALID_RECORD = 87
CONTROL_BIT = 0x20


def compact_config(**extra):
    conf = {"cleanup.policy": "compact", "segment.ms": "1000", "min.cleanable.dirty.ratio": "0.01"}
    conf.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    return conf


# ---------------------------------------------------------------------------------------------
# The model: every write of a partition by offset, as delivery reports told.


class PartitionModel:
    def __init__(self):
        self.writes = {}  # offset -> (key, value)
        self.offsets_of = {}  # key -> sorted offsets it was written at
        self._sorted = True

    def add(self, offset, key, value):
        assert offset not in self.writes, f"offset {offset} delivered twice"
        self.writes[offset] = (key, value)
        self.offsets_of.setdefault(key, []).append(offset)
        self._sorted = False

    def sort(self):
        if not self._sorted:
            for offsets in self.offsets_of.values():
                offsets.sort()
            self._sorted = True

    def latest_below(self, key, end):
        """Offset of the last write of key below `end`, or None."""
        self.sort()
        offsets = self.offsets_of.get(key, [])
        i = bisect.bisect_left(offsets, end)
        return offsets[i - 1] if i else None

    def live(self):
        """{key: value} after applying every write in offset order (a None value deletes)."""
        state = {}
        for offset in sorted(self.writes):
            key, value = self.writes[offset]
            if value is None:
                state.pop(key, None)
            else:
                state[key] = value
        return state

    def tombstoned_keys(self):
        self.sort()
        return {k for k, offs in self.offsets_of.items() if self.writes[offs[-1]][1] is None}


def produce_tracked(p, records, topic, models):
    """Produces records ({key, value, partition}); each delivery is added to models[partition].

    Returns the wall-clock time (ms) right after the last delivery report arrived."""
    errors = []

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            models[msg.partition()].add(msg.offset(), msg.key(), msg.value())

    for r in records:
        while True:
            try:
                p.produce(topic, on_delivery=on_delivery, **r)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    remaining = p.flush(60)
    assert remaining == 0, f"{remaining} records still undelivered after flush"
    assert not errors, f"delivery errors: {errors[:5]} ({len(errors)} in all)"
    return int(time.time() * 1000)


def apply_log(msgs):
    state = {}
    for m in msgs:
        if m.value() is None:
            state.pop(m.key(), None)
        else:
            state[m.key()] = m.value()
    return state


def read_all(bootstrap, topic, partition, **conf):
    return ck.consume_partition(bootstrap, topic, partition, 0, timeout=120, **conf)


# ---------------------------------------------------------------------------------------------
# The broker's side: checkpoint, segment files, metrics.


def checkpoint(broker, topic, partition):
    """The offset the last pass cleaned up to, or None before the first pass."""
    try:
        text = (broker.partition_dir(topic, partition) / CHECKPOINT).read_text()
    except FileNotFoundError:
        return None
    return int(text.strip()) if text.strip() else None


def log_bytes(broker, topic, partition):
    return sum(f.stat().st_size for f in broker.partition_dir(topic, partition).glob("*.log"))


def cleaned_to_end(broker, topic, partitions):
    """True once every partition's checkpoint equals its high watermark (nothing left to clean)."""
    for q in range(partitions):
        cp = checkpoint(broker, topic, q)
        if cp is None or cp != ck.watermarks(broker.bootstrap, topic, q)[1]:
            return False
    return True


def wait_cleaned_to_end(broker, topic, partitions=1, timeout=40):
    wait_until(lambda: cleaned_to_end(broker, topic, partitions), timeout, interval=0.1,
               message=f"the cleaner to clean {topic} up to its high watermark (checkpoints "
                       f"{[checkpoint(broker, topic, q) for q in range(partitions)]})")


def http_get(broker, path):
    with urllib.request.urlopen(broker.admin_url + path, timeout=10) as response:
        return response.status, response.read().decode()


scrape = scrape_metrics


def metric(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def cleaner_runs(broker):
    return metric(scrape(broker), "oxbow_log_cleaner_runs_total") or 0.0


# ---------------------------------------------------------------------------------------------
# Checks of a read against the model.


def check_against_model(model, msgs, cp, where, quiet, pass_interrupted=False, tombstones_kept=False):
    """Invariants of a compacted partition read in full; `cp` was read from disk before the read.

    Always (also while the cleaner runs): every record read is the one written at its offset, and
    below cp each key appears once, with its last write below cp.  When `quiet` (nothing written or
    cleaned during the read): replaying the log gives exactly the model, each key's last write below
    cp is there (a tombstone may be gone, unless `tombstones_kept`), and, unless a pass was cut short
    by a crash (`pass_interrupted`: it may have compacted segments past cp), nothing at or after cp
    was removed."""
    cp = cp or 0
    wrong, superseded, seen_below = [], [], {}
    duplicates = []
    for m in msgs:
        o, key, value = m.offset(), m.key(), m.value()
        if model.writes.get(o) != (key, value):
            wrong.append((o, key, value and value[:20], model.writes.get(o, (None, None))[0]))
            continue
        if o < cp:
            if key in seen_below:
                duplicates.append((key, seen_below[key], o))
            seen_below[key] = o
            latest = model.latest_below(key, cp)
            if latest != o:
                superseded.append((key, o, latest))
    assert not wrong, f"{where}: {len(wrong)} records not as written at their offset " \
                      f"(offset, key, value, key written there): {wrong[:5]}"
    assert not duplicates, f"{where}: {len(duplicates)} keys appear more than once below the checkpoint " \
                           f"{cp} (key, offset, offset): {duplicates[:5]}"
    assert not superseded, f"{where}: {len(superseded)} superseded records kept below the checkpoint {cp} " \
                           f"(key, kept offset, last write below checkpoint): {superseded[:5]}"
    if not quiet:
        return
    read_offsets = {m.offset() for m in msgs}
    if not pass_interrupted:
        missing = sorted(o for o in model.writes if o >= cp and o not in read_offsets)
        assert not missing, f"{where}: {len(missing)} records at/after the checkpoint {cp} were removed: " \
                            f"offsets {missing[:10]}"
    lost = []
    model.sort()
    for key, offsets in model.offsets_of.items():
        # The last write of each key, and (unless a cut-short pass went further) the last below cp.
        candidates = {offsets[-1]} if pass_interrupted else {offsets[-1], model.latest_below(key, cp)}
        for latest in sorted(c for c in candidates if c is not None):
            if latest in read_offsets:
                continue
            if model.writes[latest][1] is not None or tombstones_kept:
                lost.append((key, latest, model.writes[latest][1] is None))
    assert not lost, f"{where}: {len(lost)} last writes lost (key, offset, is tombstone): {lost[:5]}"
    got, expected = apply_log(msgs), model.live()
    assert got == expected, (
        f"{where}: replaying the log does not give the model: {len(got)} keys vs {len(expected)};"
        f" missing {sorted(set(expected) - set(got))[:5]}, resurrected {sorted(set(got) - set(expected))[:5]},"
        f" different {[k for k in expected if k in got and got[k] != expected[k]][:5]}")


# ---------------------------------------------------------------------------------------------
# 1 + 5. The model check, with the cleaner metrics.


def random_records(rng, n, keys, parts, tombstone_share, value_len, prefix):
    recs = []
    for i in range(n):
        k = rng.randrange(keys)
        value = None if rng.random() < tombstone_share else \
            f"{prefix}{i}:".encode() + b"v" * rng.randrange(*value_len)
        recs.append({"key": f"key-{k:05d}".encode(), "value": value, "partition": k % parts})
    return recs


def test_compaction_model_check_and_metrics(make_broker):
    b = make_broker(CLEANER_BROKER)
    topic, parts = unique_topic("compact-model"), 2
    ck.create_topic(b.bootstrap, topic, parts, compact_config(segment_bytes=100 * 1024, delete_retention_ms=2000))
    plain = ck.create_topic(b.bootstrap, unique_topic("not-compacted"))
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    models = [PartitionModel() for _ in range(parts)]
    p = ck.producer(b.bootstrap, linger_ms=5, batch_size=16384)

    # First half, then a read while the cleaner chases the writes: the invariants hold at any time.
    produce_tracked(p, random_records(rng, 100_000, 1000, parts, 0.10, (10, 60), "a"), topic, models)
    wait_until(lambda: all(checkpoint(b, topic, q) for q in range(parts)), 30, interval=0.05,
               message="a first cleaner pass on each partition")
    for q in range(parts):
        cp = checkpoint(b, topic, q)
        check_against_model(models[q], read_all(b.bootstrap, topic, q), cp, f"partition {q} mid-way", False)

    produce_tracked(p, random_records(rng, 100_000, 1000, parts, 0.10, (10, 60), "b"), topic, models)
    samples = scrape(b)
    for q in range(parts):
        ratio = metric(samples, "oxbow_log_cleaner_dirty_ratio", topic=topic, partition=str(q))
        assert ratio is not None and 0 <= ratio <= 1, f"dirty ratio gauge of partition {q}: {ratio}"
    assert metric(samples, "oxbow_log_cleaner_dirty_ratio", topic=plain, partition="0") is None, \
        "a dirty ratio reported for a topic that is not compacted"

    wait_cleaned_to_end(b, topic, parts)
    cleaned_ms = int(time.time() * 1000)  # every tombstone has been through a pass by now
    for q in range(parts):
        cp = checkpoint(b, topic, q)
        assert cp == max(models[q].writes) + 1
        msgs = read_all(b.bootstrap, topic, q)
        check_against_model(models[q], msgs, cp, f"partition {q} cleaned", True)
        keys = [m.key() for m in msgs]
        assert len(keys) == len(set(keys)), f"partition {q}: a key appears twice in a fully cleaned log"

    # 5. Metrics of what the passes did.
    samples = scrape(b)
    runs = metric(samples, "oxbow_log_cleaner_runs_total")
    read_bytes = metric(samples, "oxbow_log_cleaner_bytes_read_total")
    written = metric(samples, "oxbow_log_cleaner_bytes_written_total")
    removed = metric(samples, "oxbow_log_cleaner_records_removed_total")
    produced = sum(len(m.writes) for m in models)
    remaining = sum(len(read_all(b.bootstrap, topic, q)) for q in range(parts))
    print(f"cleaner: {runs} passes, {read_bytes} bytes read, {written} written, {removed} records removed;"
          f" {produced} records written, {remaining} left")
    assert runs and runs >= parts
    assert read_bytes and written is not None and read_bytes > written
    assert removed and removed >= produced - remaining, \
        f"records_removed_total {removed} < {produced - remaining} records the cleaner removed"
    assert (metric(samples, "oxbow_log_cleaner_seconds_count") or 0) >= 1
    for q in range(parts):
        assert metric(samples, "oxbow_log_cleaner_dirty_ratio", topic=topic, partition=str(q)) == 0, \
            f"partition {q} cleaned to its end, yet its dirty ratio is not 0"

    # d. Much smaller than what was appended.
    bytes_in = metric(samples, "oxbow_topic_bytes_in_total", topic=topic)
    size_after = sum(log_bytes(b, topic, q) for q in range(parts))
    print(f"log size: {bytes_in} bytes appended, {size_after} bytes of .log files after cleaning")
    assert bytes_in and size_after * 10 < bytes_in, f"{size_after} bytes left of {bytes_in} appended"

    # c. Once delete.retention.ms has passed since the passes that first kept them, tombstones go
    # with the next pass (new writes make one due).
    deleted = {q: models[q].tombstoned_keys() for q in range(parts)}
    assert all(deleted.values()), "the random writes left no deleted key"
    tombstones_left = sum(1 for q in range(parts) for m in read_all(b.bootstrap, topic, q) if m.value() is None)
    print(f"{sum(len(d) for d in deleted.values())} deleted keys, {tombstones_left} tombstones before the"
          f" retention pass")
    remaining_ms = cleaned_ms + 2000 + 200 - int(time.time() * 1000)
    if remaining_ms > 0:
        time.sleep(remaining_ms / 1000)  # delete.retention.ms must pass: a time, not a condition
    runs_before = cleaner_runs(b)
    produce_tracked(p, [{"key": f"extra-{i}".encode(), "value": f"x{i}".encode() * 10, "partition": i % parts}
                        for i in range(100)], topic, models)
    wait_until(lambda: cleaner_runs(b) > runs_before and cleaned_to_end(b, topic, parts), 40, interval=0.1,
               message="a cleaner pass over the new writes")
    for q in range(parts):
        cp = checkpoint(b, topic, q)
        msgs = read_all(b.bootstrap, topic, q)
        check_against_model(models[q], msgs, cp, f"partition {q} after delete.retention.ms", True)
        tombstones = [(m.offset(), m.key()) for m in msgs if m.value() is None]
        assert not tombstones, f"partition {q}: {len(tombstones)} tombstones older than delete.retention.ms " \
                               f"kept in the cleaned log: {tombstones[:5]}"
        present = {m.key() for m in msgs}
        assert not deleted[q] & present, f"partition {q}: deleted keys present: {sorted(deleted[q] & present)[:5]}"
    b.assert_alive()


# ---------------------------------------------------------------------------------------------
# 2. kill -9 while the cleaner rewrites the log.


def big_segments(pdir, threshold):
    """Sealed segment files still holding about a full segment.bytes of data (not cleaned yet)."""
    sizes = []
    for entry in os.scandir(pdir):
        if entry.name.endswith(".log"):
            try:
                sizes.append((entry.name, entry.stat().st_size))
            except FileNotFoundError:
                pass
    return sum(1 for _n, s in sizes if s >= threshold)


def crash_state(pdir):
    cleaning = pdir / CLEANING_DIR
    files = sorted(os.listdir(cleaning)) if cleaning.exists() else None
    return {"cleaning": files, "checkpoint": (pdir / CHECKPOINT).read_text().strip()
            if (pdir / CHECKPOINT).exists() else None}


def test_kill9_during_cleaning_leaves_a_correct_log(make_broker):
    segment_bytes = 1 << 20
    b = make_broker(dict(CLEANER_BROKER, **{"log.cleaner.enable": "false"}))
    topic = unique_topic("compact-kill9")
    ck.create_topic(b.bootstrap, topic, 1, compact_config(segment_bytes=segment_bytes))
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    rng = random.Random(seed)
    model = PartitionModel()
    p = ck.producer(b.bootstrap, linger_ms=5, batch_size=65536)
    produce_tracked(p, random_records(rng, 300_000, 1000, 1, 0.10, (200, 500), "r"), topic, [model])
    del p  # no client left connected across the crashes
    end = max(model.writes) + 1
    pdir = b.partition_dir(topic, 0)
    b.kill()  # a crash, so that each start loads (and recovers) the log before serving
    assert checkpoint(b, topic, 0) is None, "the cleaner ran although log.cleaner.enable=false"
    big_threshold = segment_bytes // 2
    initial_big = big_segments(pdir, big_threshold)
    assert initial_big >= 50, f"only {initial_big} full segments written"

    def verify(label):
        """Start without the cleaner; the interrupted pass must have been completed or discarded."""
        b.start({"log.cleaner.enable": "false"})
        assert http_get(b, "/v1/status/ready")[0] == 200
        assert not (pdir / CLEANING_DIR).exists(), \
            f"{label}: {pdir / CLEANING_DIR} survived the restart: {os.listdir(pdir / CLEANING_DIR)}"
        assert ck.watermarks(b.bootstrap, topic) == (0, end)
        msgs = read_all(b.bootstrap, topic, 0)
        check_against_model(model, msgs, checkpoint(b, topic, 0), label, True, pass_interrupted=True,
                            tombstones_kept=True)
        b.kill()
        return len(msgs)

    kills = []
    for round_ in range(4):
        b.start({"log.cleaner.enable": "true"})
        remaining_big = big_segments(pdir, big_threshold)
        if round_ == 0:
            # Early: while the pass reads the log to find each key's last offset, or starts writing.
            delay = rng.uniform(0, 0.15)
            time.sleep(delay)
            how = f"{delay:.3f}s after start"
        else:
            # Part-way through rewriting: once a random share of the full segments was replaced.
            target = rng.randrange(1, max(2, remaining_big * 9 // 10))
            wait_until(lambda: big_segments(pdir, big_threshold) <= target, 30, interval=0.002,
                       message=f"the cleaner to rewrite all but {target} of {remaining_big} full segments")
            how = f"at <= {target} of {remaining_big} full segments left"
        b.kill()
        state = crash_state(pdir)
        left = big_segments(pdir, big_threshold)
        kills.append((how, left, state["cleaning"], state["checkpoint"]))
        print(f"kill -9 #{round_ + 1} {how}: {left} full segments left, cleaning dir {state['cleaning']},"
              f" checkpoint {state['checkpoint']}")
        records = verify(f"after kill -9 #{round_ + 1} ({how})")
        print(f"  restart: log correct, {records} records")
    assert any(left > 0 for _how, left, _c, _cp in kills), \
        f"no kill landed in the middle of a pass, the test did not test anything: {kills}"

    # Then let it finish: the log ends up fully compacted and as the model says.
    b.start({"log.cleaner.enable": "true"})
    wait_cleaned_to_end(b, topic, 1, timeout=60)
    msgs = read_all(b.bootstrap, topic, 0)
    check_against_model(model, msgs, checkpoint(b, topic, 0), "after the final pass", True, tombstones_kept=True)
    keys = [m.key() for m in msgs]
    assert len(keys) == len(set(keys))
    assert not (pdir / CLEANING_DIR).exists()
    assert big_segments(pdir, big_threshold) == 0


# ---------------------------------------------------------------------------------------------
# 3. Transactions: aborted records go, open transactions are left alone.


def txn_producer(bootstrap, transactional_id):
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                  "transaction.timeout.ms": 60000, "linger.ms": 5})
    deadline = time.monotonic() + 60
    while True:
        try:
            p.init_transactions(30)
            return p
        except KafkaException as exc:
            if not exc.args[0].retriable() or time.monotonic() >= deadline:
                raise


def end_txn(p, commit):
    deadline = time.monotonic() + 60
    while True:
        try:
            return p.commit_transaction(30) if commit else p.abort_transaction(30)
        except KafkaException as exc:
            if not exc.args[0].retriable() or time.monotonic() >= deadline:
                raise


def in_txn(p, topic, writes, commit):
    p.begin_transaction()
    for key, value in writes:
        p.produce(topic, key=key, value=value, partition=0)
    assert p.flush(30) == 0
    end_txn(p, commit)


def kv(prefix, keys):
    return [(f"k{i:03d}".encode(), f"{prefix}-{i}".encode()) for i in keys]


def on_disk_records(broker, topic):
    """(offset, key, value) of every data record in the segment files, and control batch offsets."""
    data, control = [], []
    for path in sorted(broker.partition_dir(topic, 0).glob("*.log")):
        for bt in kw.parse_batches(path.read_bytes()):
            if bt["attributes"] & CONTROL_BIT:
                control.append(bt["base_offset"])
            else:
                data.extend((o, k, v) for o, _ts, k, v, _h in kw.decode_uncompressed_records(bt["raw"]))
    return data, control


def cleaner_round_done(broker, probe, p, n):
    """Writes to a second compacted topic and waits until the cleaner compacted it: a sign that a
    cleaner round went by after everything done before the call."""
    ck.produce_all(p, [{"key": b"probe", "value": f"{n}".encode()}], probe, partition=0)
    wait_cleaned_to_end(broker, probe, 1, timeout=20)


def test_transactions_on_a_compacted_topic(make_broker):
    b = make_broker(dict(CLEANER_BROKER, **{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}))
    topic = ck.create_topic(b.bootstrap, unique_topic("compact-txn"), 1, compact_config())
    probe = ck.create_topic(b.bootstrap, unique_topic("compact-probe"), 1, compact_config(segment_ms=100))
    p = txn_producer(b.bootstrap, unique_topic("tid"))
    plain = ck.producer(b.bootstrap)

    # Committed k000..k099, an aborted overwrite of k050..k099 (and keys only the abort wrote), then
    # a committed overwrite of k000..k024.
    in_txn(p, topic, kv("c1", range(100)), commit=True)
    in_txn(p, topic, kv("aborted", range(50, 100)) + [(f"only-aborted-{i}".encode(), b"aborted") for i in range(10)],
           commit=False)
    in_txn(p, topic, kv("c3", range(25)), commit=True)
    model = dict(kv("c1", range(100)))
    model.update(kv("c3", range(25)))

    wait_cleaned_to_end(b, topic)
    for isolation in ("read_committed", "read_uncommitted"):
        msgs = read_all(b.bootstrap, topic, 0, isolation_level=isolation)
        aborted_seen = [(m.offset(), m.key()) for m in msgs if b"aborted" in m.value()]
        assert not aborted_seen, f"{isolation}: aborted records read after cleaning: {aborted_seen[:5]}"
        assert apply_log(msgs) == model, f"{isolation}: the cleaned log does not replay to the committed writes"
        keys = [m.key() for m in msgs]
        assert len(keys) == len(set(keys)), f"{isolation}: a key appears twice after cleaning"
    data, control = on_disk_records(b, topic)
    assert not [r for r in data if b"aborted" in r[2]], "aborted records still in the segment files"
    # Markers stay while delete.retention.ms (default one day) has not passed: 100 + 1, 60 + 1, 25 + 1.
    assert control == [100, 161, 187], f"control batches at {control}"

    # An open transaction holds the last stable offset; the cleaner must not compact past it.
    plain_writes = kv("p1", range(10))
    ck.produce_all(plain, [{"key": k, "value": v} for k, v in plain_writes], topic, partition=0)
    model.update(plain_writes)
    first_open = ck.watermarks(b.bootstrap, topic)[1]
    wait_until(lambda: checkpoint(b, topic, 0) == first_open, 20, interval=0.1,
               message="the plain writes to be rolled and cleaned")
    p.begin_transaction()
    for k, v in kv("open", range(20)):
        p.produce(topic, key=k, value=v, partition=0)
    assert p.flush(30) == 0
    later = kv("p2", range(10, 20))
    ck.produce_all(plain, [{"key": k, "value": v} for k, v in later], topic, partition=0)
    visible_before_lso = dict(model)
    model.update(later)
    after_later = ck.watermarks(b.bootstrap, topic)[1]
    # The segment holding the open transaction and the later writes rolls; then cleaner rounds pass.
    wait_until(lambda: any(int(f.name[:20]) >= after_later for f in b.partition_dir(topic, 0).glob("*.log")),
               20, interval=0.1, message="the segment with the open transaction to roll")
    for n in range(3):
        cleaner_round_done(b, probe, plain, n)
    assert checkpoint(b, topic, 0) <= first_open, \
        f"the cleaner compacted past the last stable offset {first_open}: checkpoint {checkpoint(b, topic, 0)}"
    c = ck.consumer(b.bootstrap, isolation_level="read_committed")
    try:
        lso = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10, cached=False)[1]
    finally:
        c.close()
    assert lso == first_open
    before_lso = read_all(b.bootstrap, topic, 0, isolation_level="read_committed")
    assert apply_log(before_lso) == visible_before_lso, "read_committed below the open transaction changed"

    end_txn(p, commit=False)
    wait_cleaned_to_end(b, topic)
    for isolation in ("read_committed", "read_uncommitted"):
        msgs = read_all(b.bootstrap, topic, 0, isolation_level=isolation)
        bad = [(m.offset(), m.key(), m.value()) for m in msgs if m.value().startswith((b"open", b"aborted"))]
        assert not bad, f"{isolation}: aborted records read after cleaning: {bad[:5]}"
        assert apply_log(msgs) == model, f"{isolation}: the log does not replay to the committed writes"
    data, _control = on_disk_records(b, topic)
    assert not [r for r in data if r[2].startswith((b"open", b"aborted"))], "aborted records still on disk"


# ---------------------------------------------------------------------------------------------
# 4. Records without a key cannot be compacted: refused.


def test_record_without_key_is_refused_on_a_compacted_topic(make_broker):
    b = make_broker(CLEANER_BROKER)
    compacted = ck.create_topic(b.bootstrap, unique_topic("compact-nokey"), 1, compact_config())
    both = ck.create_topic(b.bootstrap, unique_topic("compact-delete-nokey"), 1,
                           compact_config(cleanup_policy="compact,delete"))
    plain = ck.create_topic(b.bootstrap, unique_topic("delete-nokey"))

    for topic in (compacted, both):
        reports = []
        p = ck.producer(b.bootstrap, message_timeout_ms=15000)
        p.produce(topic, value=b"no key", partition=0, on_delivery=lambda err, msg: reports.append(err))
        assert p.flush(30) == 0
        (err,) = reports
        assert err is not None and err.code() == INVALID_RECORD, f"{topic}: keyless record got {err}"
        assert ck.watermarks(b.bootstrap, topic) == (0, 0), f"{topic}: something was appended"
        assert ck.produce_all(p, [{"key": b"k", "value": b"keyed"}], topic, partition=0) == [(0, 0)]

        # Raw: one batch with keyed and keyless records is refused whole, and the response names the
        # keyless ones (record_errors, v8+), so that clients fail just those and the rest apart.
        batch = kw.build_record_batch([(b"k1", b"v1", []), (None, b"v2", []), (b"k3", b"v3", []), (None, b"v4", [])])
        with kw.Conn(b.port) as conn:
            (resp,), _ = kw.parse_produce_v8_response(conn.request(PRODUCE, 8, 1, kw.produce_v8_body(topic, 0, batch)))
            assert resp["error"] == INVALID_RECORD, resp
            assert [index for index, _ in resp["record_errors"]] == [1, 3], resp
            assert all("key" in message for _, message in resp["record_errors"]), resp
            assert resp["error_message"] and "2 record" in resp["error_message"], resp
            good = kw.build_record_batch([(b"k1", b"v1", []), (b"k2", None, [])])
            (resp,), _ = kw.parse_produce_v8_response(conn.request(PRODUCE, 8, 2, kw.produce_v8_body(topic, 0, good)))
            assert resp["error"] == 0 and resp["base_offset"] == 1, resp
        msgs = read_all(b.bootstrap, topic, 0)
        assert [(m.offset(), m.key(), m.value()) for m in msgs] == \
            [(0, b"k", b"keyed"), (1, b"k1", b"v1"), (2, b"k2", None)]

    # A topic that is not compacted takes keyless records.
    assert ck.produce_all(ck.producer(b.bootstrap), [{"value": b"no key"}], plain, partition=0) == [(0, 0)]
    ck.assert_broker_healthy(b)


# ---------------------------------------------------------------------------------------------
# 6. When a pass is due: min.compaction.lag.ms, min.cleanable.dirty.ratio, max.compaction.lag.ms.


def alter_topic(bootstrap, topic, configs):
    """AlterConfigs (it replaces the whole set of overrides)."""
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic, set_config=configs)
    client = ck.admin(bootstrap)  # kept alive until the answer is in
    client.alter_configs([resource])[resource].result(20)


def rolled(broker, topic, end):
    """True once the records below `end` are all in sealed segments (a segment starts at or after it)."""
    return any(int(f.name[:20]) >= end for f in broker.partition_dir(topic, 0).glob("*.log"))


def test_when_a_pass_is_due(make_broker):
    b = make_broker(CLEANER_BROKER)
    probe = ck.create_topic(b.bootstrap, unique_topic("compact-probe"), 1, compact_config(segment_ms=100))
    lagged_conf = compact_config(min_compaction_lag_ms=3_600_000)
    lagged = ck.create_topic(b.bootstrap, unique_topic("compact-lagged"), 1, lagged_conf)
    # The first pass over all-dirty data always reaches a 0.99 ratio; later small overwrites do not,
    # unless their records are older than max.compaction.lag.ms.
    overdue = ck.create_topic(b.bootstrap, unique_topic("compact-overdue"), 1,
                              compact_config(min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1500))
    not_due = ck.create_topic(b.bootstrap, unique_topic("compact-not-due"), 1,
                              compact_config(min_cleanable_dirty_ratio=0.99))
    p = ck.producer(b.bootstrap)
    models = {t: PartitionModel() for t in (lagged, overdue, not_due)}

    produce_tracked(p, [{"key": f"k{i % 10}".encode(), "value": f"v{i}".encode(), "partition": 0}
                        for i in range(500)], lagged, [models[lagged]])
    for t in (overdue, not_due):
        produce_tracked(p, [{"key": f"k{i}".encode(), "value": b"first" * 10, "partition": 0} for i in range(1000)],
                        t, [models[t]])
        wait_cleaned_to_end(b, t)
        produce_tracked(p, [{"key": f"k{i}".encode(), "value": b"second", "partition": 0} for i in range(20)],
                        t, [models[t]])
    for t in (lagged, overdue, not_due):
        end = max(models[t].writes) + 1
        wait_until(lambda: rolled(b, t, end), 20, interval=0.1, message=f"{t} to roll its active segment")

    wait_cleaned_to_end(b, overdue, timeout=30)
    for n in range(3):
        cleaner_round_done(b, probe, p, n)
    # Records younger than min.compaction.lag.ms are left alone; a ratio under the minimum waits.
    assert checkpoint(b, lagged, 0) is None, f"{lagged} compacted within min.compaction.lag.ms"
    check_against_model(models[lagged], read_all(b.bootstrap, lagged, 0), 0, lagged, True)
    assert len(read_all(b.bootstrap, lagged, 0)) == 500
    not_due_end = max(models[not_due].writes) + 1
    assert checkpoint(b, not_due, 0) == not_due_end - 20, \
        f"{not_due} compacted although its dirty ratio is under min.cleanable.dirty.ratio"
    check_against_model(models[not_due], read_all(b.bootstrap, not_due, 0), not_due_end - 20, not_due, True)
    # The overdue one was compacted in spite of its ratio.
    msgs = read_all(b.bootstrap, overdue, 0)
    check_against_model(models[overdue], msgs, checkpoint(b, overdue, 0), overdue, True)
    assert len(msgs) == 1000

    # Once the lag is lowered (configs take effect at once), the lagged topic is compacted.
    alter_topic(b.bootstrap, lagged, dict(lagged_conf, **{"min.compaction.lag.ms": "0"}))
    wait_cleaned_to_end(b, lagged)
    msgs = read_all(b.bootstrap, lagged, 0)
    check_against_model(models[lagged], msgs, checkpoint(b, lagged, 0), lagged, True)
    assert sorted(m.key() for m in msgs) == [f"k{i}".encode() for i in range(10)]


# ---------------------------------------------------------------------------------------------
# 7. After a clean restart, compacted logs are cleaned without a client touching them.


def test_cleaner_compacts_after_a_clean_restart_without_client_access(make_broker):
    b = make_broker(dict(CLEANER_BROKER, **{"log.cleaner.enable": "false"}))
    topic = ck.create_topic(b.bootstrap, unique_topic("compact-restart"), 1, compact_config())
    model = PartitionModel()
    produce_tracked(ck.producer(b.bootstrap), [{"key": f"k{i % 20}".encode(), "value": f"v{i}".encode(),
                                                "partition": 0} for i in range(2000)], topic, [model])
    wait_until(lambda: rolled(b, topic, 2000), 20, interval=0.1, message="the active segment to roll")
    b.stop()
    b.start({"log.cleaner.enable": "true"})
    assert http_get(b, "/v1/status/ready")[0] == 200
    # No client request, no metrics scrape: only the files are looked at until the pass is done.
    wait_until(lambda: checkpoint(b, topic, 0) == 2000, 20, interval=0.1,
               message=f"the cleaner to compact {topic} after a clean restart, with no client touching it"
                       f" (checkpoint {checkpoint(b, topic, 0)}, .log bytes {log_bytes(b, topic, 0)})")
    msgs = read_all(b.bootstrap, topic, 0)
    check_against_model(model, msgs, 2000, "after the restart", True)
    assert len(msgs) == 20


@pytest.mark.parametrize("codec,number", [("gzip", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4)])
def test_cleaned_batches_stay_compressed(make_broker, codec, number):
    """A compressed batch that loses records is rewritten with its own codec, and clients read it."""
    b = make_broker(CLEANER_BROKER)
    topic = ck.create_topic(b.bootstrap, unique_topic(f"compact-{codec}"), 1, compact_config())
    writes = [(f"k{i % 50}".encode(), f"v{i}-{'x' * 200}".encode()) for i in range(3000)]
    ck.produce_all(ck.producer(b.bootstrap, compression_codec=codec, linger_ms=20),
                   [{"key": k, "value": v} for k, v in writes], topic, partition=0)
    before = log_bytes(b, topic, 0)
    wait_until(lambda: rolled(b, topic, len(writes)), 20, interval=0.1, message="the active segment to roll")
    wait_cleaned_to_end(b, topic)

    latest = dict(writes)
    got = {m.key(): m.value() for m in read_all(b.bootstrap, topic, 0)}
    assert got == latest, "the latest value of every key, decompressed by librdkafka"
    codecs = {bt["attributes"] & 0x07 for path in b.partition_dir(topic, 0).glob("*.log")
              for bt in kw.parse_batches(path.read_bytes())}
    assert codecs == {number}, f"cleaned batches keep codec {number}: {codecs}"
    uncompressed = sum(len(k) + len(v) for k, v in latest.items())
    assert log_bytes(b, topic, 0) < min(before, uncompressed), "still compressed after cleaning"


def test_a_small_key_map_cleans_in_several_passes(make_broker):
    """log.cleaner.dedupe.buffer.size bounds a pass's key map: more keys than fit take more passes."""
    b = make_broker(dict(CLEANER_BROKER, **{"log.cleaner.dedupe.buffer.size": "20000"}))
    # Cleaning is held off (min.compaction.lag.ms) until every segment is written, then released.
    topic = ck.create_topic(b.bootstrap, unique_topic("compact-smallmap"), 1,
                            compact_config(segment_bytes=20000, min_compaction_lag_ms=3600000))
    writes = [(f"key-{i % 500:04d}".encode(), f"v{i}".encode()) for i in range(5000)]
    # Small batches, so that segments hold a few hundred records each whatever the load.
    ck.produce_all(ck.producer(b.bootstrap, linger_ms=0, batch_num_messages=20),
                   [{"key": k, "value": v} for k, v in writes], topic, partition=0)
    wait_until(lambda: rolled(b, topic, len(writes)), 20, interval=0.1, message="the active segment to roll")
    assert checkpoint(b, topic, 0) is None
    assert len(list(b.partition_dir(topic, 0).glob("*.log"))) > 5
    alter_topic(b.bootstrap, topic, compact_config(segment_bytes=20000))
    wait_cleaned_to_end(b, topic, timeout=60)
    assert "the key map is full" in b.log_text(), "the passes were not bounded by the key map"
    got = {m.key(): m.value() for m in read_all(b.bootstrap, topic, 0)}
    assert got == dict(writes)
    assert metric(scrape(b), "oxbow_log_cleaner_runs_total") > 1
