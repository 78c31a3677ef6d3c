"""Listeners as Kafka checks and limits them: distinct names and ports, a start that fails when a
listener cannot listen, and each listener's own connection limits (KIP-402's
listener.name.<name>.max.connections, KIP-612's listener.name.<name>.max.connection.creation.rate),
set in server.properties or at run time for the broker or cluster-wide."""

import socket
import struct

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
import kafka_wire as kw
from harness import free_port, metric_value, scrape_metrics, wait_until
from test_admin_configs import _alter_broker, _broker_configs, _raw_alter_broker
from test_connection_limits import api_versions_answered, no_connections

EXTRA = "EXTRA"
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5


def broker_with_extra_listener(make_broker, overrides=None):
    merged = {"listener.security.protocol.map": f"PLAINTEXT:PLAINTEXT,{EXTRA}:PLAINTEXT"}
    merged.update(overrides or {})
    broker = make_broker(merged, start=False)
    broker.add_listener(EXTRA)
    broker.start()
    no_connections(broker)
    return broker


def waits_unserved(conn, correlation_id=7):
    """The connection was accepted by the kernel, but its request is not answered for a second."""
    conn.send(kw.request_frame(18, 0, correlation_id, b""))
    return conn.wait_closed_or_response(1) is None


def answered_later(conn, correlation_id=7):
    conn.sock.settimeout(10)
    frame = conn.recv_frame()
    return struct.unpack(">i", frame[:4])[0] == correlation_id


@pytest.mark.parametrize("listeners,message", [
    ("PLAINTEXT://127.0.0.1:{p},EXTRA://127.0.0.1:{p}", "Each listener must have a different port"),
    ("PLAINTEXT://127.0.0.1:{p},PLAINTEXT://127.0.0.1:{q}", "Each listener must have a different name"),
])
def test_listeners_sharing_a_port_or_a_name_stop_the_start(make_broker, listeners, message):
    text = listeners.format(p=free_port(), q=free_port())
    broker = make_broker({"listeners": text, "advertised.listeners": text,
                          "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTRA:PLAINTEXT"}, start=False)
    broker.start(wait=False)
    wait_until(lambda: not broker.is_alive(), 20, message="the broker to refuse to start")
    assert broker.proc.returncode != 0
    assert message in broker.log_text()


def test_a_listener_that_cannot_listen_stops_the_start(make_broker):
    """The port is bound at start-up and listened on once the logs are loaded; if another socket
    listens on it meanwhile, the broker says so and exits instead of running without it."""
    port = free_port()
    squatter = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", port))
    try:
        broker = make_broker({"test.fault.recovery.delay.ms": "3000"}, start=False)
        broker.add_listener(EXTRA, port)
        broker.overrides["listener.security.protocol.map"] = f"PLAINTEXT:PLAINTEXT,{EXTRA}:PLAINTEXT"
        broker.start(wait=False)
        wait_until(lambda: "log loading delayed" in broker.log_text(), 20, message="the broker to bind and load")
        squatter.listen(1)
        wait_until(lambda: not broker.is_alive(), 20, message="the broker to give up")
        assert broker.proc.returncode == 1
        assert f"cannot listen on {EXTRA} (127.0.0.1:{port})" in broker.log_text()
    finally:
        squatter.close()


def test_a_listeners_max_connections_holds_that_listener_only(make_broker):
    broker = broker_with_extra_listener(make_broker, {"listener.name.extra.max.connections": "2"})
    port = broker.extra_listeners[EXTRA]
    first, second = kw.Conn(port), kw.Conn(port)
    assert api_versions_answered(first) and api_versions_answered(second)
    waiting = kw.Conn(port)
    assert waits_unserved(waiting)
    # The other listener is not held.
    others = [kw.Conn(broker.port) for _ in range(3)]
    assert all(api_versions_answered(c) for c in others)
    waited_before = metric_value(scrape_metrics(broker), "oxbow_connection_limit_wait_seconds_total")
    first.close()
    assert answered_later(waiting)
    # The wait (at least the second waits_unserved took) is counted once the connection is served.
    waited = metric_value(scrape_metrics(broker), "oxbow_connection_limit_wait_seconds_total")
    assert waited - waited_before >= 0.9
    for c in [second, waiting, *others]:
        c.close()


def test_a_limit_lowered_while_the_listener_waits_holds_the_next_connection(make_broker):
    """The listener has served and gone idle, waiting for the next connection, when its limit
    drops to zero: that next connection is held too, not served by the wait already under way."""
    broker = broker_with_extra_listener(make_broker)
    port = broker.extra_listeners[EXTRA]
    served = kw.Conn(port)
    assert api_versions_answered(served)
    served.close()
    no_connections(broker)
    assert _raw_alter_broker(broker.port, "", {"listener.name.extra.max.connections": "0"}) == 0
    blocked = kw.Conn(port)
    assert waits_unserved(blocked)
    assert _raw_alter_broker(broker.port, "", {}) == 0
    assert answered_later(blocked)
    blocked.close()


def test_the_inter_broker_listener_is_exempt_from_max_connections(make_broker):
    """As in Kafka, with more than one listener the inter-broker one (here PLAINTEXT, named by
    security.inter.broker.protocol) is not held by the broker-wide max.connections, so clients
    filling the broker cannot lock operators out; its connections still count for the others."""
    broker = broker_with_extra_listener(make_broker, {"max.connections": "1"})
    port = broker.extra_listeners[EXTRA]
    client = kw.Conn(port)
    assert api_versions_answered(client)
    waiting = kw.Conn(port)
    assert waits_unserved(waiting)
    operators = [kw.Conn(broker.port) for _ in range(2)]
    assert all(api_versions_answered(c) for c in operators)
    client.close()
    assert waits_unserved(waiting, correlation_id=8)
    for c in operators:
        c.close()
    assert answered_later(waiting)
    waiting.close()


def test_a_named_inter_broker_listener_is_the_exempt_one(make_broker):
    broker = broker_with_extra_listener(make_broker, {"max.connections": "1",
                                                      "inter.broker.listener.name": EXTRA})
    port = broker.extra_listeners[EXTRA]
    held = kw.Conn(broker.port)
    assert api_versions_answered(held)
    waiting = kw.Conn(broker.port)
    assert waits_unserved(waiting)
    operators = [kw.Conn(port) for _ in range(2)]
    assert all(api_versions_answered(c) for c in operators)
    for c in [held, waiting, *operators]:
        c.close()


def test_listener_connection_limits_change_at_run_time_and_are_described(make_broker):
    broker = broker_with_extra_listener(make_broker)
    port = broker.extra_listeners[EXTRA]
    _alter_broker(broker.bootstrap, {"listener.name.extra.max.connections": "1"})
    entry = _broker_configs(broker.bootstrap)["listener.name.extra.max.connections"]
    assert (entry.value, entry.source, entry.is_sensitive) == ("1", DYNAMIC_BROKER_CONFIG, False)
    # As Kafka lists it: read-only (its dynamic set names keys without the prefix), and the
    # broker-wide key it overrides as a synonym.
    assert entry.is_read_only
    assert [(s.name, s.source) for s in entry.synonyms.values()] == [
        ("listener.name.extra.max.connections", DYNAMIC_BROKER_CONFIG), ("max.connections", DEFAULT_CONFIG)]
    no_connections(broker)
    held = kw.Conn(port)
    assert api_versions_answered(held)
    waiting = kw.Conn(port)
    assert waits_unserved(waiting)
    held.close()
    assert answered_later(waiting)
    waiting.close()

    # Cluster-wide too (Kafka counts these two among its cluster-level listener configs).
    _alter_broker(broker.bootstrap, {})
    assert _raw_alter_broker(broker.port, "", {"listener.name.extra.max.connections": "0"}) == 0
    entry = _broker_configs(broker.bootstrap)["listener.name.extra.max.connections"]
    assert (entry.value, entry.source) == ("0", DYNAMIC_DEFAULT_BROKER_CONFIG)
    no_connections(broker)
    blocked = kw.Conn(port)
    assert waits_unserved(blocked)
    assert _raw_alter_broker(broker.port, "", {}) == 0
    assert answered_later(blocked)
    blocked.close()

    with pytest.raises(KafkaException) as info:
        _alter_broker(broker.bootstrap, {"listener.name.extra.max.connections": "-1"})
    assert info.value.args[0].code() == 40  # INVALID_CONFIG
    assert "listener.name.extra.max.connections" in str(info.value)
    with pytest.raises(KafkaException) as info:
        _alter_broker(broker.bootstrap, {"listener.name.extra.ssl.keystore.location": "/k"})
    assert "Cannot update these configs dynamically: listener.name.extra.ssl.keystore.location" in str(info.value)


def test_static_listener_keys_are_described_and_secrets_hidden(make_broker):
    broker = broker_with_extra_listener(make_broker, {
        "listener.name.extra.max.connection.creation.rate": "50",
        "listener.name.extra.plain.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
                                                      'required user_alice="secret";'})
    configs = _broker_configs(broker.bootstrap)
    rate = configs["listener.name.extra.max.connection.creation.rate"]
    assert (rate.value, rate.source) == ("50", STATIC_BROKER_CONFIG)
    jaas = configs["listener.name.extra.plain.sasl.jaas.config"]
    assert (jaas.value, jaas.is_sensitive, jaas.source) == (None, True, STATIC_BROKER_CONFIG)


def test_a_bad_listener_limit_stops_the_start(make_broker):
    broker = make_broker({"listener.name.plaintext.max.connections": "-2"}, start=False)
    with pytest.raises(pytest.fail.Exception):
        broker.start()
    assert "Invalid value -2 for configuration listener.name.plaintext.max.connections" in broker.log_text()


def test_a_listeners_creation_rate_slows_that_listener_only(make_broker):
    broker = broker_with_extra_listener(make_broker, {
        "quota.window.num": "2", "quota.window.size.seconds": "1",
        "listener.name.extra.max.connection.creation.rate": "2"})
    port = broker.extra_listeners[EXTRA]
    throttle = "oxbow_connection_creation_throttle_seconds_total"
    others = [kw.Conn(broker.port) for _ in range(6)]
    assert all(api_versions_answered(c) for c in others)
    assert metric_value(scrape_metrics(broker), throttle) == 0
    conns = [kw.Conn(port) for _ in range(6)]
    # Slowed down, never refused.
    assert all(api_versions_answered(c) for c in conns)
    assert metric_value(scrape_metrics(broker), throttle) > 0
    for c in [*others, *conns]:
        c.close()
