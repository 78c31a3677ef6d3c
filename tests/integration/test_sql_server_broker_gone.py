"""`oxbow sql-server` shutting down with its Kafka cluster gone: SIGTERM after the broker was
killed -9 must still end the process (exit code 0) within its bounded close timeout
(ksql.streams.shutdown.timeout.ms), instead of waiting forever on queries that can no longer
commit or leave their groups. The clean path, broker up, is covered by test_sql_server_restart.py.
"""

import http.client
import json
import signal
import threading
import time

import pytest

from harness import wait_until
from test_sql_server import SqlServer


def terminate(server):
    """SIGTERM, then the exit code and the seconds it took; fails after 60 s."""
    server.proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    try:
        code = server.proc.wait(60)
    except Exception:
        server.proc.kill()
        raise AssertionError("the server did not exit within 60 s after SIGTERM:\n" + server.tail())
    return code, time.monotonic() - started


# 10 s: the query stops within it (its threads' shutdown and the instance's 5 s check of the
# shutdown-request topic are bounded). 0 ms: it has not stopped when the timeout expires, is
# logged and left running, and the process still exits with 0.
@pytest.mark.parametrize("timeout_ms", ["10000", "0"])
def test_sigterm_with_the_broker_gone_exits_within_the_shutdown_timeout(make_broker, tmp_path,
                                                                        timeout_ms):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    server = SqlServer(broker, tmp_path, {"ksql.streams.shutdown.timeout.ms": timeout_ms})
    server.ksql("CREATE STREAM a (id STRING KEY, v INT) WITH (kafka_topic='a', value_format='JSON', "
                "partitions=1); CREATE STREAM b AS SELECT * FROM a;")
    wait_until(lambda: "running query" in server.log_path.read_text(errors="replace"), 30,
               message="the CSAS running")
    # A push query open over HTTP/1.1 as well: its own Streams application must end too.
    push = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    push.request("POST", "/query", body=json.dumps({"ksql": "SELECT * FROM a EMIT CHANGES;",
                                                     "streamsProperties": {}}),
                 headers={"Accept": "application/json", "Content-Type": "application/json"})
    assert push.getresponse().status == 200
    time.sleep(3)  # let the query join its group, as the reported reproduction did
    broker.kill()
    code, took = terminate(server)
    push.close()
    assert code == 0, server.tail()
    # The close timeout bounds it, plus the command consumer's and the listener's shutdown.
    assert took < 30, server.tail()
    if timeout_ms == "0":
        assert "query CSAS_B_0 did not stop within" in server.tail(), server.tail()
    else:
        assert "oxbow sql-server stopped cleanly" in server.tail(), server.tail()


def test_a_statement_with_the_broker_gone_fails_in_bounded_time_then_sigterm_exits(make_broker,
                                                                                    tmp_path):
    """A statement needs a transaction on the command topic: with the broker gone it is answered
    500 once the transaction cannot begin (10 s), and the producer that could not begin it, which
    librdkafka 2.0.2 cannot destroy then, holds neither the request nor the shutdown."""
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    server = SqlServer(broker, tmp_path, {"ksql.streams.shutdown.timeout.ms": "5000"})
    server.ksql("CREATE STREAM a (id STRING KEY, v INT) WITH (kafka_topic='a', value_format='JSON', "
                "partitions=1); CREATE TABLE t AS SELECT id, COUNT(*) AS n FROM a GROUP BY id;")
    wait_until(lambda: "running query" in server.log_path.read_text(errors="replace"), 30,
               message="the CTAS running")
    broker.kill()
    # A pull query meanwhile waits for the engine while the statement holds it: it is answered
    # (whatever its answer) once the statement is, not never.
    pulled = []
    pull = threading.Thread(target=lambda: pulled.append(server.request(
        "POST", "/query-stream", {"sql": "SELECT * FROM t WHERE id='x';"})[0]), daemon=True)
    started = time.monotonic()
    pull.start()
    status, _, text = server.request("POST", "/ksql", {
        "ksql": "CREATE STREAM c (id STRING KEY, v INT) WITH (kafka_topic='c', "
                "value_format='JSON', partitions=1);", "streamsProperties": {}})
    assert time.monotonic() - started < 30, server.tail()
    assert status == 500, text
    body = json.loads(text)
    assert body["@type"] == "generic_error" and body["error_code"] == 50000, text
    assert "command topic" in body["message"], text
    pull.join(60)
    assert pulled and pulled[0] != 0 and time.monotonic() - started < 60, server.tail()
    # The server still answers what needs no cluster, and its engine is not held.
    assert server.request("GET", "/info")[0] == 200
    names = [s["name"] for s in server.ksql("LIST STREAMS;")[0]["streams"]]
    assert "A" in names and "C" not in names, names
    code, took = terminate(server)
    assert code == 0 and took < 30, server.tail()


def test_sigterm_while_a_statement_waits_for_the_gone_broker_exits(make_broker, tmp_path):
    """The shutdown comes while the statement still waits for its transaction: the process waits
    for that request (at most its 10 s) before it destroys the command topic's producers, and
    exits with 0."""
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    server = SqlServer(broker, tmp_path, {"ksql.streams.shutdown.timeout.ms": "5000"})
    server.ksql("CREATE STREAM a (id STRING KEY, v INT) WITH (kafka_topic='a', value_format='JSON', "
                "partitions=1);")
    broker.kill()
    statement = threading.Thread(target=lambda: server.request("POST", "/ksql", {
        "ksql": "CREATE STREAM c (id STRING KEY, v INT) WITH (kafka_topic='c', "
                "value_format='JSON', partitions=1);", "streamsProperties": {}}), daemon=True)
    statement.start()
    time.sleep(2)  # nothing shows the statement waiting (10 s for its transaction): 2 s into it
    code, took = terminate(server)
    assert code == 0 and took < 30, server.tail()
