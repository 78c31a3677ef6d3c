"""`oxbow sql-server`'s push-query endpoints (issue 43): POST /query-stream, POST /query and POST
/close-query against a real broker.

What the server does today is the requests' part (docs/sql/server.md): bodies read, the SELECT
checked by the engine, ksqlDB's errors, /query refused over HTTP/2. A valid push query is answered
501 until the transient-query runtime exists; the test saying so changes with it.
"""

import json
import subprocess

import pytest

from test_sql_server import SqlServer

STREAM = ("CREATE STREAM pageviews (viewer STRING KEY, page STRING, secs INT) "
          "WITH (kafka_topic='pageviews', value_format='JSON', partitions=1);")


@pytest.fixture
def server(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    s = SqlServer(broker, tmp_path)
    s.broker = broker
    s.ksql(STREAM)
    yield s
    if s.proc.poll() is None:
        s.stop()


def curl_h2(server, path, body):
    """(HTTP version, status, body) of a POST over cleartext HTTP/2 with prior knowledge."""
    done = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-w", "\\n%{http_version} %{http_code}",
                           "-H", "Accept: application/json", "--data", json.dumps(body),
                           f"http://127.0.0.1:{server.port}{path}"], capture_output=True, text=True, timeout=30)
    text, _, version_and_status = done.stdout.rpartition("\n")
    version, _, status = version_and_status.partition(" ")
    return version, int(status or 0), text


def test_a_bad_select_gets_ksqldbs_error_on_both_endpoints(server):
    bad = "SELECT * FROM no_such_stream EMIT CHANGES;"
    status, _, text = server.request("POST", "/query", {"ksql": bad, "streamsProperties": {}})
    body = json.loads(text)
    assert status == 400, text
    assert (body["@type"], body["error_code"], body["statementText"]) == ("statement_error", 40001, bad)
    assert "NO_SUCH_STREAM" in body["message"], body

    status, _, text = server.request("POST", "/query-stream", {"sql": bad, "properties": {}})
    body = json.loads(text)
    assert status == 400, text
    assert (body["@type"], body["error_code"]) == ("generic_error", 40001)
    assert "NO_SUCH_STREAM" in body["message"], body

    version, status, text = curl_h2(server, "/query-stream", {"sql": bad, "properties": {}})
    assert (version, status) == ("2", 400), text
    assert json.loads(text)["error_code"] == 40001

    # A column the stream does not have: the engine's binder, not only its catalog, is asked.
    status, _, text = server.request("POST", "/query-stream",
                                     {"sql": "SELECT nope FROM pageviews EMIT CHANGES;"})
    assert status == 400 and "NOPE" in json.loads(text)["message"], text

    # Not a query at all.
    status, _, text = server.request("POST", "/query-stream", {"sql": "SHOW STREAMS;"})
    assert status == 400 and "SELECT" in json.loads(text)["message"], text


def test_malformed_bodies_get_generic_errors(server):
    for path, body in [("/query-stream", "not json"), ("/query-stream", {"ksql": "SELECT 1;"}),
                       ("/query", {"sql": "SELECT 1;"}), ("/close-query", {"id": "x"})]:
        status, _, text = server.request("POST", path, body)
        assert status == 400, (path, text)
        assert json.loads(text)["@type"] == "generic_error", (path, text)
    # The server goes on.
    assert server.request("GET", "/info")[0] == 200


def test_query_is_refused_over_http2_and_served_over_http1(server):
    select = {"ksql": "SELECT * FROM pageviews EMIT CHANGES;", "streamsProperties": {}}
    version, status, text = curl_h2(server, "/query", select)
    assert (version, status) == ("2", 405), text
    assert json.loads(text)["error_code"] == 40500

    # Over HTTP/1.1 the same request passes the checks (a bad one would be 400, see above).
    status, _, text = server.request("POST", "/query", select)
    assert status != 405 and status != 400, text


def test_a_valid_push_query_is_accepted_but_not_run_yet(server):
    status, _, text = server.request("POST", "/query-stream",
                                     {"sql": "SELECT viewer, page FROM pageviews WHERE secs > 10 EMIT CHANGES;",
                                      "properties": {"auto.offset.reset": "earliest"}})
    assert status == 501, text
    assert "not run by this server yet" in json.loads(text)["message"]


def test_close_query_of_an_unknown_id_is_refused(server):
    status, _, text = server.request("POST", "/close-query", {"queryId": "transient_PAGEVIEWS_1"})
    body = json.loads(text)
    assert status == 400, text
    assert body["@type"] == "generic_error" and "transient_PAGEVIEWS_1" in body["message"], body
