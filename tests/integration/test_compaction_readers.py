"""Compaction as a consumer reading from offset 0 sees it while the cleaner runs (Kafka's guarantee):
it reads at least the last write of every key, and, if it reaches the head within
delete.retention.ms, every delete. Kafka (KIP-534) keeps a tombstone through the pass that first
reaches it, stamping its batch with a delete horizon delete.retention.ms away, and only a later pass
drops it; Oxbow dropped a tombstone older than delete.retention.ms in the very pass that removed the
older value it deletes, so a consumer between the two kept the key (a model check found two such
keys in one run of fourteen). The helpers come from test_compaction.py.
"""

import argparse
import importlib.util
import pathlib
import random
import time

import ck_helpers as ck
import kafka_wire as kw
from harness import unique_topic
from test_compaction import CLEANER_BROKER, apply_log, compact_config, on_disk_records, read_all, wait_cleaned_to_end

DELETE_HORIZON_BIT = 0x40


def test_a_reader_from_offset_0_sees_a_delete_even_when_a_pass_comes_between(make_broker):
    """A consumer that read a key's value, then reads on after the pass that removed that value,
    finds the key's tombstone: the pass that first covers a tombstone keeps it whatever its age, and
    stamps its batch with the horizon delete.retention.ms away after which a later pass may drop it
    (before, a tombstone older than delete.retention.ms went in that same pass, and such a
    consumer kept the deleted key for good: a model check found it in one run of fourteen)."""
    b = make_broker(CLEANER_BROKER)
    retention_ms = 60_000
    topic = ck.create_topic(b.bootstrap, unique_topic("compact-reader"), 1,
                            compact_config(segment_ms=200, delete_retention_ms=retention_ms))
    p = ck.producer(b.bootstrap)
    ck.produce_all(p, [{"key": b"k", "value": b"old"}, {"key": b"other", "value": b"x"}], topic, partition=0)
    wait_cleaned_to_end(b, topic)
    before = read_all(b.bootstrap, topic, 0)  # the consumer's first fetches, before the next pass
    assert [(m.offset(), m.key(), m.value()) for m in before] == [(0, b"k", b"old"), (1, b"other", b"x")]

    # The tombstone's own timestamp is long past delete.retention.ms when the pass comes.
    written_ms = int(time.time() * 1000) - 10 * retention_ms
    (_part, tombstone), = ck.produce_all(p, [{"key": b"k", "value": None, "timestamp": written_ms}], topic,
                                         partition=0)
    pass_from_ms = int(time.time() * 1000)
    wait_cleaned_to_end(b, topic)
    data, _control = on_disk_records(b, topic)
    assert data == [(1, b"other", b"x"), (tombstone, b"k", None)], \
        f"the pass that removed the old value must keep its tombstone: the log holds {data}"
    after = read_all(b.bootstrap, topic, 0)
    assert [(m.offset(), m.key(), m.value()) for m in after] == data
    rest = ck.consume_partition(b.bootstrap, topic, 0, before[-1].offset() + 1, timeout=30)
    state = apply_log(before + rest)
    assert b"k" not in state, f"a consumer reading on from offset {before[-1].offset() + 1} kept the deleted key"
    assert rest[-1].timestamp()[1] == written_ms, "the tombstone keeps its timestamp"

    stamped = [bt for path in b.partition_dir(topic, 0).glob("*.log") for bt in kw.parse_batches(path.read_bytes())
               if bt["base_offset"] == tombstone]
    assert len(stamped) == 1 and stamped[0]["attributes"] & DELETE_HORIZON_BIT, stamped
    horizon = stamped[0]["base_timestamp"]
    assert pass_from_ms + retention_ms <= horizon <= int(time.time() * 1000) + retention_ms, \
        f"delete horizon {horizon}: not delete.retention.ms after the pass"


def test_one_round_of_the_compaction_soak(make_broker):
    """One round of tests/soak/compaction_soak.py (`make soak` runs many): 200,000 writes in bursts
    with 10% tombstones, read from offset 0 over and over while the cleaner runs every 200 ms with
    delete.retention.ms=500. With a tombstone's retention counted from its own timestamp, readers
    kept deleted keys in all 14 rounds tried (and in 3 of 5 rounds half this size)."""
    spec = importlib.util.spec_from_file_location(
        "compaction_soak", pathlib.Path(__file__).resolve().parents[1] / "soak" / "compaction_soak.py")
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    b = make_broker(soak.BROKER_CONFIG)
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    args = argparse.Namespace(records=200_000, keys=1000, tombstones=0.10, bursts=10, pause=0.8, readers=4)
    failures, reads, strict, summary = soak.one_round(b, args, seed)
    print(f"{reads} reads ({strict} checked for deletes), {summary}")
    assert not failures, "\n".join(failures[:10])
    assert strict >= 20, f"only {strict} reads short enough to check deletes: the round checked little"
