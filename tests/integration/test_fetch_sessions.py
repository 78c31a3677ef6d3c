"""KIP-227 incremental fetch sessions against the real broker, over raw Fetch v12 requests (no
Debian client opens sessions: librdkafka, kafkajs and kafka-python fetch without one). A full
fetch at epoch 0 opens a session; later requests name only what changed and hear only what is
new; stale epochs, unknown sessions and closing behave as Kafka's."""

import threading

import ck_helpers as ck
import kafka_wire as kw
from harness import metric_value, scrape_metrics, unique_topic

FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH = 70, 71
fetch = kw.fetch_v12


def test_a_session_tells_only_what_is_new(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("fs"), partitions=3)
    producer = ck.producer(broker.bootstrap, linger_ms=0)
    ck.produce_all(producer, [{"value": b"a"}, {"value": b"b"}], topic, partition=0)
    with kw.Conn(broker.port) as c:
        error, session, answered = fetch(c, 0, 0, topic, [(0, 0), (1, 0), (2, 0)])
        assert error == 0 and session != 0
        assert answered == {0: (2, 2), 1: (0, 0), 2: (0, 0)}
        held = scrape_metrics(broker)
        assert metric_value(held, "oxbow_fetch_sessions") >= 1
        assert metric_value(held, "oxbow_fetch_session_partitions") >= 3
        # The client moved on partition 0 only; nothing is new anywhere.
        assert fetch(c, session, 1, topic, [(0, 2)], max_wait_ms=100) == (0, session, {})
        # A record on partition 2: it alone is told, though the request named nothing.
        ck.produce_all(producer, [{"value": b"c"}], topic, partition=2)
        assert fetch(c, session, 2, topic) == (0, session, {2: (1, 1)})
        # A request already answered (a stale epoch) and an unknown session are refused whole.
        assert fetch(c, session, 2, topic) == (INVALID_FETCH_SESSION_EPOCH, 0, {})
        assert fetch(c, session + 1, 1, topic) == (FETCH_SESSION_ID_NOT_FOUND, 0, {})
        # Forgotten partitions are no longer read; the session still expects epoch 3.
        ck.produce_all(producer, [{"value": b"d"}], topic, partition=1)
        assert fetch(c, session, 3, topic, [(2, 1)], forgotten=[1]) == (0, session, {})
        # A final fetch closes the session and is answered in full, without one.
        error, closed, answered = fetch(c, session, -1, topic, [(1, 0)])
        assert (error, closed, answered) == (0, 0, {1: (1, 1)})
        assert fetch(c, session, 4, topic)[0] == FETCH_SESSION_ID_NOT_FOUND


def test_an_incremental_long_poll_waits_on_every_partition_of_the_session(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("fs"), partitions=2)
    producer = ck.producer(broker.bootstrap, linger_ms=0)
    with kw.Conn(broker.port) as c:
        _error, session, _ = fetch(c, 0, 0, topic, [(0, 0), (1, 0)])
        timer = threading.Timer(0.3, lambda: ck.produce_all(producer, [{"value": b"x"}], topic, partition=1))
        timer.start()
        try:
            assert fetch(c, session, 1, topic, max_wait_ms=30000, min_bytes=1) == (0, session, {1: (1, 1)})
        finally:
            timer.join()
