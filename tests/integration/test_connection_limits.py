"""Kafka's connection limits: max.connections.per.ip (and its overrides) closes a connection over the
limit at once; max.connections leaves new connections waiting until one closes. Both can be
changed at run time with AlterConfigs, as Kafka's dynamic broker configs."""

import struct

import pytest
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
import kafka_wire as kw
from harness import metric_value, scrape_metrics, wait_until


def api_versions_answered(conn, correlation_id=1):
    conn.send(kw.request_frame(18, 0, correlation_id, b""))
    frame = conn.recv_frame()
    return struct.unpack(">i", frame[:4])[0] == correlation_id


def closed_by_broker(conn):
    """The broker closed the connection without answering an ApiVersions."""
    try:
        conn.send(kw.request_frame(18, 0, 1, b""))
    except OSError:
        return True
    return conn.wait_closed_or_response(10) == "closed"


def no_connections(broker):
    """Waits until the broker holds no connection (the harness's start-up probe has gone)."""
    wait_until(lambda: metric_value(scrape_metrics(broker), "oxbow_active_connections") == 0, 10,
               message="no open connections")


def alter_broker(broker, configs):
    client = ck.admin(broker.bootstrap)
    futures = client.alter_configs([ConfigResource(ConfigResource.Type.BROKER, "0", set_config=configs)])
    list(futures.values())[0].result(10)


def test_connections_over_max_connections_per_ip_are_closed_at_once(make_broker):
    broker = make_broker({"max.connections.per.ip": "2"})
    no_connections(broker)
    first, second = kw.Conn(broker.port), kw.Conn(broker.port)
    assert api_versions_answered(first) and api_versions_answered(second)
    third = kw.Conn(broker.port)
    assert closed_by_broker(third)
    third.close()
    wait_until(lambda: "Rejected connection from 127.0.0.1" in broker.log_text(), 10,
               message="the rejection's log line")
    assert metric_value(scrape_metrics(broker), "oxbow_connections_rejected_total") >= 1
    # A closed connection frees its place.
    first.close()

    def another_is_served():
        conn = kw.Conn(broker.port)
        try:
            return api_versions_answered(conn)
        except (kw.ConnectionClosed, OSError):
            return False
        finally:
            conn.close()
    wait_until(another_is_served, 10, message="a connection after one closed")

    # Raised at run time (with both places free, for the admin client's connections).
    second.close()
    no_connections(broker)
    alter_broker(broker, {"max.connections.per.ip": "3"})
    no_connections(broker)
    three = [kw.Conn(broker.port) for _ in range(3)]
    assert all(api_versions_answered(c) for c in three)
    assert closed_by_broker(kw.Conn(broker.port))
    for c in three:
        c.close()


def test_overrides_give_an_address_its_own_maximum(make_broker):
    broker = make_broker({"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "localhost:2"})
    no_connections(broker)
    conns = [kw.Conn(broker.port) for _ in range(2)]
    assert all(api_versions_answered(c) for c in conns)
    assert closed_by_broker(kw.Conn(broker.port))
    for c in conns:
        c.close()


def test_at_max_connections_new_connections_wait_for_a_free_place(make_broker):
    broker = make_broker({"max.connections": "2"})
    no_connections(broker)
    first, second = kw.Conn(broker.port), kw.Conn(broker.port)
    assert api_versions_answered(first) and api_versions_answered(second)
    # The third connects (the kernel's backlog) but is not served while two are open.
    waiting = kw.Conn(broker.port)
    waiting.send(kw.request_frame(18, 0, 7, b""))
    assert waiting.wait_closed_or_response(1) is None
    first.close()
    waiting.sock.settimeout(10)
    frame = waiting.recv_frame()
    assert struct.unpack(">i", frame[:4])[0] == 7
    waiting.close()
    second.close()


@pytest.mark.parametrize("overrides,message", [
    ({"max.connections.per.ip": "0"},
     "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."),
    ({"max.connections.per.ip.overrides": "10.0.0.1:many"}, "'10.0.0.1:many' is not host:count"),
    ({"max.connections.per.ip.overrides": "no-such-host.invalid:3"}, "is not a valid IP or resolvable host"),
])
def test_bad_connection_limits_stop_the_start(make_broker, overrides, message):
    b = make_broker(overrides, start=False)
    with pytest.raises(pytest.fail.Exception):
        b.start()
    assert message in b.log_text()

