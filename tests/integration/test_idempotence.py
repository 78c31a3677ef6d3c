"""Idempotent producers against injected connection drops: no duplicates, no reordering, no gaps."""

from confluent_kafka import Producer

from ck_helpers import consumer
from harness import unique_topic


def read_all(bootstrap, topic, expected):
    from confluent_kafka import TopicPartition
    c = consumer(bootstrap)
    c.assign([TopicPartition(topic, 0, 0)])
    values = []
    try:
        while len(values) < expected + 10:
            m = c.poll(5)
            if m is None:
                break
            if m.error():
                if m.error().code() == -191:  # partition EOF
                    break
                raise AssertionError(m.error())
            values.append(int(m.value()))
    finally:
        c.close()
    return values


def test_retries_after_dropped_connections_write_each_record_once(make_broker):
    # Every 40th produce request is appended but its connection dropped before the answer, so the
    # producer retries a batch the log already has.
    broker = make_broker({"test.fault.drop.connection.every.produce": "40"})
    topic = unique_topic("idem")
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 2,
                  "batch.num.messages": 50, "retry.backoff.ms": 10,
                  "reconnect.backoff.ms": 10, "reconnect.backoff.max.ms": 100})
    failed = []
    n = 20000
    for i in range(n):
        p.produce(topic, value=str(i), partition=0,
                  on_delivery=lambda err, msg: failed.append(err) if err else None)
        if i % 1000 == 0:
            p.poll(0)
    assert p.flush(60) == 0
    assert failed == []
    assert broker.log_text().count("fault injection: dropping") >= 5
    assert read_all(broker.bootstrap, topic, n) == list(range(n))


def test_describe_producers_lists_the_idempotent_producer(broker):
    import struct

    import kafka_wire as kw
    topic = unique_topic("descprod")
    p = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True, "linger.ms": 0})
    for i in range(10):
        p.produce(topic, value=str(i), partition=0)
    assert p.flush(30) == 0
    # DescribeProducers v0 (flexible): topics[name, partition_indexes[0]]
    body = kw.uvarint(2) + kw.uvarint(len(topic) + 1) + topic.encode() + kw.uvarint(2) + struct.pack(">i", 0)
    body += b"\x00" + b"\x00"
    header = struct.pack(">hhi", 61, 0, 3) + kw.string("raw") + b"\x00"
    payload = header + body
    with kw.Conn(broker.port) as c:
        c.send(struct.pack(">i", len(payload)) + payload)
        resp = c.recv_frame()
    pos = 4 + 1 + 4  # correlation id, header tags, throttle
    assert resp[pos] == 2  # one topic
    pos += 1
    name_len = resp[pos] - 1
    assert resp[pos + 1:pos + 1 + name_len].decode() == topic
    pos += 1 + name_len
    assert resp[pos] == 2  # one partition
    pos += 1
    index, error = struct.unpack_from(">ih", resp, pos)
    assert (index, error) == (0, 0)
    pos += 6 + 1  # error message: null
    assert resp[pos] == 2  # one active producer
    producer_id, epoch, last_sequence = struct.unpack_from(">qii", resp, pos + 1)
    assert producer_id >= 0 and epoch == 0 and last_sequence == 9
