"""`oxbow sql-server` shutting down with its Kafka cluster gone: SIGTERM after the broker was
killed -9 must still end the process (exit code 0) within its bounded close timeout
(ksql.streams.shutdown.timeout.ms), instead of waiting forever on queries that can no longer
commit or leave their groups. The clean path, broker up, is covered by test_sql_server_restart.py.
"""

import http.client
import json
import signal
import time

import pytest

from harness import wait_until
from test_sql_server import SqlServer


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
    server.proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    try:
        code = server.proc.wait(60)
    except Exception:
        server.proc.kill()
        raise AssertionError("the server did not exit within 60 s after SIGTERM:\n" + server.tail())
    push.close()
    assert code == 0, server.tail()
    # The close timeout bounds it, plus the command consumer's and the listener's shutdown.
    assert time.monotonic() - started < 30, server.tail()
    if timeout_ms == "0":
        assert "query CSAS_B_0 did not stop within" in server.tail(), server.tail()
    else:
        assert "oxbow sql-server stopped cleanly" in server.tail(), server.tail()
