"""Kafka's connection limits: max.connections.per.ip (and its overrides) closes a connection over the
limit at once; max.connections leaves new connections waiting until one closes. Both can be
changed at run time with AlterConfigs, as Kafka's dynamic broker configs."""

import re
import struct
import subprocess

import pytest
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
import kafka_wire as kw
from harness import metric_value, scrape_metrics, wait_until
from test_client_quotas import EXACT, SPECIFIED, alter, describe


def api_versions_answered(conn, correlation_id=1):
    conn.send(kw.request_frame(18, 0, correlation_id, b""))
    frame = conn.recv_frame()
    return struct.unpack(">i", frame[:4])[0] == correlation_id


def served(broker):
    """A new connection is answered."""
    conn = kw.Conn(broker.port)
    try:
        return api_versions_answered(conn)
    except (kw.ConnectionClosed, OSError):
        return False
    finally:
        conn.close()


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


def assert_serves_exactly(broker, n):
    """n connections at once are served, and one more is closed at once."""
    conns = [kw.Conn(broker.port) for _ in range(n)]
    assert all(api_versions_answered(c) for c in conns)
    assert closed_by_broker(kw.Conn(broker.port))
    for c in conns:
        c.close()


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

    wait_until(lambda: served(broker), 10, message="a connection after one closed")

    # Raised at run time (with both places free, for the admin client's connections).
    second.close()
    no_connections(broker)
    alter_broker(broker, {"max.connections.per.ip": "3"})
    no_connections(broker)
    assert_serves_exactly(broker, 3)


def test_overrides_give_an_address_its_own_maximum(make_broker):
    broker = make_broker({"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "localhost:2"})
    no_connections(broker)
    assert_serves_exactly(broker, 2)


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



def test_connection_creation_rate_of_an_ip_closes_connections_over_it_unserved(make_broker):
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1"})
    ip = (("ip", "127.0.0.1"),)
    admin = kw.Conn(broker.port)  # opened before the quota, and kept
    assert alter(broker, [(ip, [("connection_creation_rate", 1, False)])], conn=admin)[0][0] == 0
    rate = {ip: {"connection_creation_rate": 1.0}}
    assert describe(broker, [("ip", SPECIFIED, None)], conn=admin)[2] == rate
    assert describe(broker, [("ip", EXACT, "127.0.0.1")], strict=True, conn=admin)[2] == rate
    first = kw.Conn(broker.port)
    assert api_versions_answered(first)
    # A second within the second is over the rate: never served, closed after the throttle time.
    assert closed_by_broker(kw.Conn(broker.port))
    assert metric_value(scrape_metrics(broker), "oxbow_connections_throttled_total") >= 1
    # The throttled one did not count: once the window has moved on, one more is served.
    wait_until(lambda: served(broker), 15, interval=0.5, message="a connection within the rate")
    first.close()
    # Without the quota nothing is throttled.
    assert alter(broker, [(ip, [("connection_creation_rate", 0, True)])], conn=admin)[0][0] == 0
    admin.close()
    conns = [kw.Conn(broker.port) for _ in range(3)]
    assert all(api_versions_answered(c) for c in conns)
    for c in conns:
        c.close()


def test_max_connection_creation_rate_slows_the_listener_down_without_refusing(make_broker):
    broker = make_broker({"quota.window.num": "2", "quota.window.size.seconds": "1",
                          "max.connection.creation.rate": "2"})
    conns = [kw.Conn(broker.port) for _ in range(6)]
    assert all(api_versions_answered(c) for c in conns)
    assert metric_value(scrape_metrics(broker), "oxbow_connection_creation_throttle_seconds_total") > 0
    for c in conns:
        c.close()


def broker_side_buffers(broker):
    """(rb, tb) of the broker's end of each established connection on its port, as `ss -tm` shows
    them: the receive and send buffer sizes the kernel holds (twice what SO_RCVBUF/SO_SNDBUF asked)."""
    out = subprocess.run(["ss", "-tmnH", "state", "established", f"( sport = :{broker.port} )"],
                         capture_output=True, text=True, check=True).stdout
    return [(int(rb), int(tb)) for rb, tb in re.findall(r"skmem:\(r\d+,rb(\d+),t\d+,tb(\d+)", out)]


def test_socket_buffer_sizes_are_set_when_asked(make_broker):
    sized = make_broker({"socket.send.buffer.bytes": "50000", "socket.receive.buffer.bytes": "60000"})
    no_connections(sized)
    with kw.Conn(sized.port) as c:
        assert api_versions_answered(c)
        assert broker_side_buffers(sized) == [(120000, 100000)]
    sized.stop()
    # -1, the default: the kernel's own sizing, which is neither.
    default = make_broker()
    no_connections(default)
    with kw.Conn(default.port) as c:
        assert api_versions_answered(c)
        buffers = broker_side_buffers(default)
        assert len(buffers) == 1 and buffers[0] != (120000, 100000), buffers


def test_bad_socket_buffer_sizes_stop_the_start(make_broker):
    b = make_broker({"socket.send.buffer.bytes": "-2"}, start=False)
    with pytest.raises(pytest.fail.Exception):
        b.start()
    assert "socket.send.buffer.bytes" in b.log_text()
