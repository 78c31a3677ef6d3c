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
