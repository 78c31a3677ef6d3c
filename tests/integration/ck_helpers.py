"""confluent-kafka helpers for the integration tests (no consumer groups: manual assignment only)."""

import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness import unique_topic, wait_until  # noqa: F401  (re-exported)


def admin(bootstrap, **conf):
    # An AdminClient is a producer-type librdkafka handle, and those ask for auto-creation in
    # their Metadata requests by default: metadata probes of missing topics would create them.
    base = {"bootstrap.servers": bootstrap, "allow.auto.create.topics": False}
    base.update({k.replace("_", "."): v for k, v in conf.items()})
    return AdminClient(base)


def producer(bootstrap, **conf):
    base = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": False,
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": 30000,
    }
    base.update({k.replace("_", "."): v for k, v in conf.items()})
    return Producer(base)


def consumer(bootstrap, **conf):
    base = {
        "bootstrap.servers": bootstrap,
        "group.id": "oxbow-it-unused",  # required by librdkafka; never joined nor committed
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "error",
        "fetch.wait.max.ms": 100,
    }
    base.update({k.replace("_", "."): v for k, v in conf.items()})
    return Consumer(base)


def committed_total(bootstrap, group, topic, partitions):
    """The sum over `topic`'s partitions of `group`'s committed offsets (none counts as 0)."""
    c = consumer(bootstrap, **{"group.id": group})
    try:
        tps = c.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return sum(max(tp.offset, 0) for tp in tps)
    finally:
        c.close()


def create_topic(bootstrap, topic, partitions=1, config=None, timeout=20):
    a = admin(bootstrap)
    futures = a.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1,
                                        config=config or {})], operation_timeout=timeout)
    futures[topic].result(timeout)
    wait_for_topic(bootstrap, topic, partitions)
    return topic


def topic_metadata(bootstrap, topic, timeout=5):
    a = admin(bootstrap)
    md = a.list_topics(topic=topic, timeout=timeout)
    return md.topics.get(topic)


def wait_for_topic(bootstrap, topic, partitions, timeout=15):
    def ready():
        t = topic_metadata(bootstrap, topic)
        return (t is not None and t.error is None and len(t.partitions) == partitions
                and all(p.leader >= 0 and p.error is None for p in t.partitions.values()))

    wait_until(ready, timeout, interval=0.1, message=f"topic {topic} with {partitions} partitions in metadata")


def produce_all(p, records, topic, partition=None):
    """records: iterable of dicts with value/key/headers/timestamp.  Returns delivery reports."""
    reports = []
    errors = []
    # Records produced while librdkafka still looks the topic up may be sent in more batches than
    # its linger and batch settings would make (11 of 20 runs of 50 records here); tests that
    # count on how records are batched need the partitions known first.
    p.list_topics(topic, timeout=10)

    def on_delivery(err, msg):
        if err is not None:
            errors.append(err)
        else:
            reports.append((msg.partition(), msg.offset()))

    for r in records:
        kwargs = dict(r)
        if partition is not None and "partition" not in kwargs:
            kwargs["partition"] = partition
        while True:
            try:
                p.produce(topic, on_delivery=on_delivery, **kwargs)
                break
            except BufferError:
                p.poll(0.05)
        p.poll(0)
    remaining = p.flush(60)
    assert remaining == 0, f"{remaining} messages still undelivered after flush"
    assert not errors, f"delivery errors: {errors[:5]} ({len(errors)} total)"
    return reports


def consume_partitions(bootstrap, assignments, expected=None, timeout=60, **conf):
    """Reads from each (topic, partition, start_offset) until end of log on every partition.

    Returns {(topic, partition): [Message, ...]}.  If expected (total count) is given, keeps
    reading until at least that many messages arrived (and all partitions reached EOF).
    """
    c = consumer(bootstrap, **conf)
    try:
        c.assign([TopicPartition(t, p, o) for (t, p, o) in assignments])
        out = {(t, p): [] for (t, p, _o) in assignments}
        at_eof = set()
        total = 0
        deadline = time.monotonic() + timeout
        while True:
            if len(at_eof) == len(out) and (expected is None or total >= expected):
                break
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"consume timed out after {timeout}s: got {total} messages"
                    f" (expected {expected}), partitions at EOF {sorted(at_eof)} of {sorted(out)}")
            msgs = c.consume(num_messages=10000, timeout=0.5)
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        at_eof.add((m.topic(), m.partition()))
                        continue
                    if m.topic() is None and not err.fatal():
                        continue  # client-level transient notice (e.g. coordinator lookups)
                    raise KafkaException(err)
                key = (m.topic(), m.partition())
                out[key].append(m)
                at_eof.discard(key)
                total += 1
        return out
    finally:
        c.close()


def consume_partition(bootstrap, topic, partition=0, offset=0, expected=None, timeout=60, **conf):
    return consume_partitions(bootstrap, [(topic, partition, offset)], expected, timeout, **conf)[(topic, partition)]


def watermarks(bootstrap, topic, partition=0, timeout=10):
    c = consumer(bootstrap)
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout, cached=False)
    finally:
        c.close()


def assert_broker_healthy(broker, topic=None):
    """A fresh normal client can still produce to and consume from the broker."""
    broker.assert_alive()
    topic = topic or unique_topic("health")
    if topic_metadata(broker.bootstrap, topic) is None or topic_metadata(broker.bootstrap, topic).error:
        create_topic(broker.bootstrap, topic)
    marker = f"health-{time.time_ns()}".encode()
    p = producer(broker.bootstrap)
    reports = produce_all(p, [{"key": b"h", "value": marker}], topic, partition=0)
    (_part, offset), = reports
    msgs = consume_partition(broker.bootstrap, topic, 0, offset, expected=1, timeout=20)
    assert msgs and msgs[0].value() == marker, f"health check read back {msgs[:1]}"
    broker.assert_alive()
    return topic
