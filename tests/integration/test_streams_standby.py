"""oxbow-streams' group membership in Kafka Streams' own protocol, against the real broker:
application.server carried to every instance (metadataForAllStreamsClients, queryMetadataForKey),
standby replicas (num.standby.replicas) kept from the changelogs and taking over after kill -9,
and KIP-441's warm-up replicas when an instance joins (a task moves only once caught up).

Instances are build/tests/streams_test_app --topology iq --query-stdin (test_streams_iq.py):
"iq-input" counted per key into the store "counts". Expected counts are computed here.
"""

import collections
import random
import re
import threading
import time

import pytest

from confluent_kafka import Consumer, Producer, TopicPartition

from harness import free_port, wait_until
from test_streams_state import _scrape, _total
from test_streams_apps import _create, broker  # noqa: F401 (fixture)
from test_streams_iq import QueryApp, as_dict, parse

PARTITIONS = 4
RESTORED = re.compile(r"stream thread \S+: restored (\d+) records into (\d+) stores")


def murmur2_partition(key: bytes, partitions: int) -> int:
    """Kafka's default partitioner: murmur2 of the key bytes, made positive, modulo."""
    m, r = 0x5BD1E995, 24
    h = (0x9747B28C ^ len(key)) & 0xFFFFFFFF
    i = 0
    while i + 4 <= len(key):
        k = int.from_bytes(key[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
        i += 4
    rest = len(key) - i
    if rest == 3:
        h ^= key[i + 2] << 16
    if rest >= 2:
        h ^= key[i + 1] << 8
    if rest >= 1:
        h ^= key[i]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


def instance(broker, tmp_path, name, port, *config, metrics_port=None):
    extra = ["--config", f"application.server=127.0.0.1:{port}"]
    if metrics_port:
        extra += ["--config", f"metrics.listener=127.0.0.1:{metrics_port}"]
    for c in config:
        extra += ["--config", c]
    return QueryApp(broker, tmp_path, name=name, app_id="standby-app", extra=tuple(extra)).start()


def metadata(app):
    """'meta' -> {host:port: (stores, partitions, standby stores, standby partitions)}."""
    out = {}
    answer = app.query("meta")
    assert not answer.startswith("ERROR"), answer
    for entry in filter(None, answer.split(";")):
        host, rest = entry.split("{", 1)
        parts = re.findall(r"\{([^}]*)\}", "{" + rest)
        out[host] = tuple(frozenset(filter(None, p.split(","))) for p in parts)
    return out


def changelog_size(broker, partitions):
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "standby-test-reader"})
    try:
        return sum(c.get_watermark_offsets(TopicPartition("standby-app-counts-changelog", p),
                                           timeout=10)[1] for p in partitions)
    finally:
        c.close()


def counts_of(app):
    return as_dict(parse(app.query("all")))


def produce(broker, keys):
    """With Java's partitioner (murmur2), which queryMetadataForKey assumes, as Kafka's does."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "partitioner": "murmur2_random",
                         "linger.ms": 5})
    for k in keys:
        while True:
            try:
                producer.produce("iq-input", key=k.encode(), value=b"x")
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(60) == 0


def test_metadata_and_standby_failover(broker, tmp_path):
    _create(broker, {"iq-input": PARTITIONS})
    rng = random.Random(5)
    keys = [f"key{rng.randrange(300)}" for _ in range(4000)]
    metrics_port = free_port()
    a = instance(broker, tmp_path, "a", 17001, "num.standby.replicas=1", metrics_port=metrics_port)
    b = instance(broker, tmp_path, "b", 17002, "num.standby.replicas=1")
    a.wait_state("RUNNING", 60)
    b.wait_state("RUNNING", 60)
    produce(broker, keys)
    expected = collections.Counter(keys)

    # Both instances' stores together hold every count, each partition on one instance.
    def split_counts():
        ca, cb = counts_of(a), counts_of(b)
        return not (ca.keys() & cb.keys()) and {**ca, **cb} == dict(expected)
    wait_until(split_counts, 60, message="the counts split over both instances")

    hosts = {"127.0.0.1:17001", "127.0.0.1:17002"}
    all_partitions = {f"iq-input-{p}" for p in range(PARTITIONS)}

    def agreed_metadata():
        ma, mb = metadata(a), metadata(b)
        if ma != mb or set(ma) != hosts:
            return False
        active = [m[1] for m in ma.values()]
        # Every partition active on exactly one instance, its standby on the other.
        return (set().union(*active) == all_partitions and not (active[0] & active[1]) and
                all(m[3] == all_partitions - m[1] for m in ma.values()) and
                all(m[0] == {"counts"} and m[2] == {"counts"} for m in ma.values()))
    wait_until(agreed_metadata, 60, message="both instances to describe the same assignment")
    meta = metadata(a)
    for key in sorted(set(keys))[:60]:
        partition = murmur2_partition(key.encode(), PARTITIONS)
        owner = next(h for h, m in meta.items() if f"iq-input-{partition}" in m[1])
        other = (hosts - {owner}).pop()
        for app in (a, b):
            assert app.query(f"keymeta counts {key}") == f"{owner} [{other}] {partition}"
        holder = a if owner.endswith("17001") else b
        assert holder.query(f"pget {partition} {key}") == str(expected[key])
    assert a.query("keymeta nosuchstore k") == "null"

    # Each instance's standbys hold the other's partitions: with stale stores allowed, either one
    # answers for every key, and its copies' lags come to nothing.
    for app in (a, b):
        wait_until(lambda: as_dict(parse(app.query("staleall"))) == dict(expected), 30,
                   message="active and standby copies holding every count")
        assert as_dict(parse(app.query("all"))) != dict(expected)  # its own actives alone do not

        def caught_up():
            lags = dict(kv.split("=") for kv in app.query("lags").split(";"))
            assert set(lags) == {f"counts:{p}" for p in range(PARTITIONS)}, lags
            return all(cur == end for cur, end in (v.split("/") for v in lags.values()))
        wait_until(caught_up, 30, message="every local copy at its changelog's end")
    def standby_metrics():
        scrape = _scrape(metrics_port)
        return (_total(scrape, "oxbow_streams_standby_tasks") == 2 and
                _total(scrape, "oxbow_streams_standby_records_total") > 0 and
                len(scrape.get("oxbow_streams_standby_lag_records", [])) == 2)
    wait_until(standby_metrics, 30, message="the standby metrics")

    # kill -9 the instance holding partition 0: the other takes its tasks from its standbys,
    # restoring only what they had not read yet.
    victim = a if "iq-input-0" in meta["127.0.0.1:17001"][1] else b
    survivor = b if victim is a else a
    survivor_host = "127.0.0.1:17002" if survivor is b else "127.0.0.1:17001"
    restored_before = len(RESTORED.findall(survivor.text()))
    standby_lines = survivor.text().count("standby task")
    assert standby_lines >= 2, survivor.tail()
    victim.proc.kill()
    victim.proc.wait()
    killed_at = time.monotonic()
    more = [f"key{rng.randrange(300)}" for _ in range(1000)]
    produce(broker, more)
    expected.update(more)
    wait_until(lambda: counts_of(survivor) == dict(expected), 60,
               message="the survivor to hold every count")
    failover_s = time.monotonic() - killed_at
    wait_until(lambda: set(metadata(survivor)) == {survivor_host}, 30,
               message="the survivor alone in the metadata")
    assert metadata(survivor)[survivor_host][1] == all_partitions
    # Its restoration of the moved tasks read a tail, not the changelogs from their start.
    restores = [int(n) for n, _ in RESTORED.findall(survivor.text())[restored_before:]]
    assert restores, survivor.tail()
    moved = meta[[h for h in meta if h != survivor_host][0]][1]
    changelog_records = changelog_size(broker, [int(p.rsplit("-", 1)[1]) for p in moved])
    assert changelog_records > 100
    assert sum(restores) < changelog_records / 4, (restores, changelog_records, survivor.tail())
    print(f"failover to the standby: counts right {failover_s:.1f} s after kill -9 "
          f"(6 s session timeout), restored {restores} of {changelog_records} changelog records")
    survivor.stop()


@pytest.mark.serial  # times the longest gap in processing
def test_scale_out_warms_up_before_moving_tasks(broker, tmp_path):
    """A second instance joins an instance with state: it first gets warm-up replicas only (the
    tasks stay where their state is), takes tasks over once its copies caught up (within
    acceptable.recovery.lag; it asks for that rebalance itself rather than wait for the probing
    interval), and processing goes on throughout."""
    _create(broker, {"iq-input": PARTITIONS})
    config = ("acceptable.recovery.lag=100", "max.warmup.replicas=4",
              "probing.rebalance.interval.ms=600000")
    a = instance(broker, tmp_path, "a", 17011, *config)
    a.wait_state("RUNNING", 60)
    keys = [f"k{i}" for i in range(30000)]  # distinct keys: changelogs as long as the input
    produce(broker, keys)
    expected = collections.Counter(keys)
    wait_until(lambda: a.query("count") == "30000", 60, message="the first instance's counts")

    ticks = {"sent": 0, "stop": False}

    def ticker():
        producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0,
                             "partitioner": "murmur2_random"})
        while not ticks["stop"]:
            producer.produce("iq-input", key=b"tick", value=b"x")
            producer.flush(10)
            ticks["sent"] += 1
            time.sleep(0.02)
    t = threading.Thread(target=ticker, daemon=True)
    t.start()
    samples = []  # (time, ticks counted)
    try:
        b = instance(broker, tmp_path, "b", 17012, *config)
        warmed_only = False
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            meta = metadata(a)
            mb = meta.get("127.0.0.1:17012")
            if mb and mb[3] and not mb[1]:
                warmed_only = True  # b holds warm-ups and no active task yet
            owner = a.query("keymeta counts tick").split(" ")[0]
            holder = a if owner.endswith("17011") else b
            answer = holder.query("get tick")
            if answer.isdigit():
                samples.append((time.monotonic(), int(answer)))
            if mb and len(mb[1]) == 2 and len(meta["127.0.0.1:17011"][1]) == 2:
                break
            time.sleep(0.1)
        assert warmed_only, a.tail()
        assert mb and len(mb[1]) == 2, (meta, b.tail())
    finally:
        ticks["stop"] = True
        t.join()
    assert "warm-up replicas caught up; rebalancing" in b.text(), b.tail()
    # b's active tasks started from its warm copies: their restoration read a tail (logged once
    # done, which may be after the metadata shows the tasks on b).
    wait_until(lambda: RESTORED.search(b.text()), 30, message="b's restoration of its new tasks")
    restores = [int(n) for n, _ in RESTORED.findall(b.text())]
    assert restores and sum(restores) < 30000 / 4, (restores, b.tail())
    # Processing never stopped for long: the tick count kept rising.
    longest = 0.0
    stall_start = None
    for ts, n in samples:
        if stall_start is None or n > stall_start[1]:
            stall_start = (ts, n)
        longest = max(longest, ts - stall_start[0])
    assert longest < 5.0, f"no tick counted for {longest:.1f} s"
    expected["tick"] = ticks["sent"]
    wait_until(lambda: {**counts_of(a), **counts_of(b)} == dict(expected), 60,
               message="every count right after the scale-out")
    print(f"scale-out: b restored {restores} records after warming up; longest stall of the "
          f"tick count {longest:.2f} s")
    a.stop()
    b.stop()
