"""`oxbow sql-server`'s push-query endpoints (issue 43): POST /query-stream, POST /query and POST
/close-query against a real broker.

Each push query runs as its own Streams application whose rows reach the client as they come
(docs/sql/server.md): /query's chunked JSON read line by line over HTTP/1.1, /query-stream's
delimited rows over HTTP/2 (curl with prior knowledge), LIMIT, /close-query and a client that
goes away ending a query and freeing its topic and group.
"""

import http.client
import json
import subprocess

import pytest

import ck_helpers as ck
from harness import OXBOW_BIN, wait_until
from test_sql_server import SqlServer

VIEWS = [("alice", "/a", 5), ("bob", "/b", 20), ("carol", "/c", 11), ("dave", "/d", 1), ("erin", "/e", 30)]
STREAM = ("CREATE STREAM pageviews (viewer STRING KEY, page STRING, secs INT) "
          "WITH (kafka_topic='pageviews', value_format='JSON', partitions=1);")


@pytest.fixture
def server(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    s = SqlServer(broker, tmp_path)
    s.broker = broker
    s.ksql(STREAM)
    producer = ck.producer(broker.bootstrap)
    for viewer, page, secs in VIEWS:
        producer.produce("pageviews", key=viewer, value=json.dumps({"PAGE": page, "SECS": secs}))
    producer.flush(30)
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

    # Over HTTP/1.1 the same request streams (until the client leaves).
    conn, r = open_stream(server, "/query", {**select, "streamsProperties": {"auto.offset.reset": "earliest"}})
    assert r.status == 200
    assert r.readline().startswith(b'[{"header":')
    conn.close()


def open_stream(server, path, body, accept="application/json"):
    """An HTTP/1.1 POST whose response is read as it comes: (connection, response)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", path, body=json.dumps(body), headers={"Accept": accept, "Content-Type": "application/json"})
    return conn, conn.getresponse()


def transient_topics(server):
    topics = ck.admin(server.broker.bootstrap).list_topics(timeout=10).topics
    return [t for t in topics if "transient_" in t]  # its rows' and Streams' own


def test_query_streams_chunked_rows_until_its_limit(server):
    conn, r = open_stream(server, "/query", {"ksql": "SELECT * FROM pageviews EMIT CHANGES LIMIT 3;",
                                             "streamsProperties": {"auto.offset.reset": "earliest"}})
    assert r.status == 200
    assert r.getheader("Transfer-Encoding") == "chunked"
    first = r.readline().decode()
    assert first.startswith('[{"header":'), first
    header = json.loads(first[1:].rstrip().rstrip(","))["header"]
    assert header["queryId"].startswith("transient_PAGEVIEWS_")
    assert header["schema"] == "`VIEWER` STRING, `PAGE` STRING, `SECS` INTEGER"
    text = first + r.read().decode()  # ends: the LIMIT ended the response
    conn.close()
    body = json.loads(text)
    assert body[0] == {"header": header}
    assert [row["row"]["columns"] for row in body[1:4]] == [list(v) for v in VIEWS[:3]]
    assert body[4:] == [{"finalMessage": "Limit Reached"}]
    wait_until(lambda: transient_topics(server) == [], 30, message="the query's topic deleted")


def test_query_stream_over_http2_sends_the_delimited_header_and_rows(server):
    done = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-w", "\n%{http_version} %{content_type}",
                           "--data", json.dumps({"sql": "SELECT viewer, secs FROM pageviews WHERE secs > 10 "
                                                        "EMIT CHANGES LIMIT 2;",
                                                 "properties": {"auto.offset.reset": "earliest"}}),
                           f"http://127.0.0.1:{server.port}/query-stream"],
                          capture_output=True, text=True, timeout=60)
    text, _, trailer = done.stdout.rpartition("\n")
    assert trailer == "2 application/vnd.ksqlapi.delimited.v1", done.stdout + done.stderr
    lines = text.rstrip("\n").split("\n")
    header = json.loads(lines[0])
    assert header["queryId"].startswith("transient_PAGEVIEWS_")
    assert (header["columnNames"], header["columnTypes"]) == (["VIEWER", "SECS"], ["STRING", "INTEGER"])
    assert [json.loads(line) for line in lines[1:]] == [["bob", 20], ["carol", 11]]


def test_query_stream_as_one_json_array(server):
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT page FROM pageviews EMIT CHANGES LIMIT 2;",
                                                    "properties": {"auto.offset.reset": "earliest"}})
    assert (r.status, r.getheader("Content-Type")) == (200, "application/json")
    body = json.loads(r.read())
    conn.close()
    assert body[0]["columnNames"] == ["PAGE"]
    assert body[1:] == [["/a"], ["/b"]]


def test_close_query_ends_an_open_query_and_a_gone_client_frees_one(server):
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT * FROM pageviews EMIT CHANGES;",
                                                    "properties": {"auto.offset.reset": "earliest"}},
                          accept="application/vnd.ksqlapi.delimited.v1")
    assert r.status == 200
    header = json.loads(r.readline())
    rows = [json.loads(r.readline()) for _ in VIEWS]
    assert rows == [list(v) for v in VIEWS]
    assert len(transient_topics(server)) >= 1

    status, _, text = server.request("POST", "/close-query", {"queryId": header["queryId"]})
    assert status == 200, text
    assert r.read() == b""  # the response ends
    conn.close()
    wait_until(lambda: transient_topics(server) == [], 30, message="the closed query's topic deleted")
    status, _, _ = server.request("POST", "/close-query", {"queryId": header["queryId"]})
    assert status == 400  # no longer known

    # A client that goes away: its query stops and its topic goes.
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT * FROM pageviews EMIT CHANGES;",
                                                    "properties": {"auto.offset.reset": "earliest"}},
                          accept="application/vnd.ksqlapi.delimited.v1")
    assert json.loads(r.readline())["columnNames"] == ["VIEWER", "PAGE", "SECS"]
    wait_until(lambda: len(transient_topics(server)) >= 1, 30, message="the second query's topic")
    conn.sock.close()
    conn.close()
    wait_until(lambda: transient_topics(server) == [], 30, message="the abandoned query's topic deleted")


def test_close_query_of_an_unknown_id_is_refused(server):
    status, _, text = server.request("POST", "/close-query", {"queryId": "transient_PAGEVIEWS_1"})
    body = json.loads(text)
    assert status == 400, text
    assert body["@type"] == "generic_error" and "transient_PAGEVIEWS_1" in body["message"], body


def test_a_client_that_does_not_read_has_its_query_closed_and_others_go_on(server):
    # Far more than the server's 4 MiB bound plus what the sockets hold.
    producer = ck.producer(server.broker.bootstrap, **{"linger.ms": "20"})
    page = "p" * 1000
    for i in range(40_000):
        producer.produce("pageviews", key=f"v{i}", value=json.dumps({"PAGE": page, "SECS": i}))
        if i % 1000 == 0:
            producer.poll(0)
    producer.flush(60)

    stalled, r = open_stream(server, "/query-stream", {"sql": "SELECT * FROM pageviews EMIT CHANGES;",
                                                       "properties": {"auto.offset.reset": "earliest"}},
                             accept="application/vnd.ksqlapi.delimited.v1")
    assert r.status == 200  # and never read from again
    wait_until(lambda: "reads too slowly" in server.tail(), 60, message="the stalled query closed")
    wait_until(lambda: transient_topics(server) == [], 30, message="its topics deleted")

    # Another query meanwhile is served in full.
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT viewer FROM pageviews EMIT CHANGES LIMIT 2;",
                                                    "properties": {"auto.offset.reset": "earliest"}})
    assert json.loads(r.read())[1:] == [["alice"], ["bob"]]
    conn.close()
    stalled.close()


def test_the_server_stops_its_push_queries_when_it_stops(server):
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT * FROM pageviews EMIT CHANGES;",
                                                    "properties": {"auto.offset.reset": "earliest"}},
                          accept="application/vnd.ksqlapi.delimited.v1")
    r.readline()
    server.stop()  # exits 0 within 60 s
    # The server closes its connections as it stops: the response ends, cut short.
    with pytest.raises(http.client.IncompleteRead):
        r.read()
    conn.close()
    assert transient_topics(server) == []


def test_an_aggregating_push_query_streams_the_tables_changes(server):
    conn, r = open_stream(server, "/query-stream",
                          {"sql": "SELECT viewer, COUNT(*) AS views FROM pageviews GROUP BY viewer EMIT CHANGES LIMIT 5;",
                           "properties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert (body[0]["columnNames"], body[0]["columnTypes"]) == (["VIEWER", "VIEWS"], ["STRING", "BIGINT"])
    assert sorted(body[1:]) == sorted([[viewer, 1] for viewer, _, _ in VIEWS])


def test_a_push_query_writes_no_topic_of_its_rows(server):
    # Its rows go from its topology to the client in memory: the only topic of its own is the
    # Streams application's shutdown-requests topic, deleted with it.
    conn, r = open_stream(server, "/query-stream", {"sql": "SELECT * FROM pageviews EMIT CHANGES;",
                                                    "properties": {"auto.offset.reset": "earliest"}},
                          accept="application/vnd.ksqlapi.delimited.v1")
    header = json.loads(r.readline())
    assert [json.loads(r.readline()) for _ in VIEWS] == [list(v) for v in VIEWS]
    topics = transient_topics(server)
    assert [t for t in topics if t.endswith("-rows")] == [], topics
    assert topics == [f"_confluent-ksql-default_{header['queryId']}-shutdown-requests"], topics
    conn.close()
    wait_until(lambda: transient_topics(server) == [], 30, message="its topics deleted")


USERS = ("CREATE TABLE users (id STRING PRIMARY KEY, name STRING) "
         "WITH (kafka_topic='users', value_format='JSON', partitions=1);")


def test_a_tables_deleted_row_is_a_tombstone_on_query_and_left_out_on_query_stream(server):
    server.ksql(USERS)
    producer = ck.producer(server.broker.bootstrap)
    producer.produce("users", key="u1", value=json.dumps({"NAME": "ann"}))
    producer.produce("users", key="u2", value=json.dumps({"NAME": "bo"}))
    producer.produce("users", key="u1", value=None)  # u1 deleted
    producer.produce("users", key="u3", value=json.dumps({"NAME": "cy"}))
    producer.flush(30)
    select = "SELECT * FROM users EMIT CHANGES LIMIT 4;"
    conn, r = open_stream(server, "/query", {"ksql": select, "streamsProperties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[1:] == [{"row": {"columns": ["u1", "ann"]}}, {"row": {"columns": ["u2", "bo"]}},
                        {"row": {"columns": ["u1", None], "tombstone": True}},
                        {"row": {"columns": ["u3", "cy"]}}, {"finalMessage": "Limit Reached"}]

    # /query-stream leaves tombstones out, as ksqlDB's writers do; they count towards the LIMIT.
    conn, r = open_stream(server, "/query-stream", {"sql": select, "properties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[1:] == [["u1", "ann"], ["u2", "bo"], ["u3", "cy"]]


def test_a_push_query_of_only_a_tables_key_has_a_row_per_update(server):
    # No value column is selected: each update is still a row of its key alone (ksqlDB's rows
    # are not null when empty); only a deletion is a tombstone.
    server.ksql("CREATE TABLE views AS SELECT viewer, COUNT(*) AS n FROM pageviews GROUP BY viewer;",
                **{"auto.offset.reset": "earliest"})
    conn, r = open_stream(server, "/query", {"ksql": "SELECT viewer FROM views EMIT CHANGES LIMIT 5;",
                                             "streamsProperties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[0]["header"]["schema"] == "`VIEWER` STRING", body
    rows = sorted(body[1:6], key=lambda row: row["row"]["columns"])
    assert rows == [{"row": {"columns": [viewer]}} for viewer in sorted(v[0] for v in VIEWS)], body
    assert body[6:] == [{"finalMessage": "Limit Reached"}], body

    server.ksql(USERS)
    producer = ck.producer(server.broker.bootstrap)
    for key, name in [("u1", "ann"), ("u1", "bo"), ("u1", None), ("u2", "cy")]:
        producer.produce("users", key=key, value=None if name is None else json.dumps({"NAME": name}))
    producer.flush(30)
    select = "SELECT id FROM users EMIT CHANGES LIMIT 4;"
    conn, r = open_stream(server, "/query", {"ksql": select, "streamsProperties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[1:] == [{"row": {"columns": ["u1"]}}, {"row": {"columns": ["u1"]}},
                        {"row": {"columns": ["u1"], "tombstone": True}},
                        {"row": {"columns": ["u2"]}}, {"finalMessage": "Limit Reached"}]
    conn, r = open_stream(server, "/query-stream", {"sql": select, "properties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[1:] == [["u1"], ["u1"], ["u2"]]


def test_a_windowed_push_query_has_its_window_bounds(server):
    conn, r = open_stream(server, "/query-stream",
                          {"sql": "SELECT viewer, WINDOWSTART AS ws, WINDOWEND AS we, COUNT(*) AS n FROM pageviews "
                                  "WINDOW TUMBLING (SIZE 1 HOUR) GROUP BY viewer EMIT CHANGES LIMIT 5;",
                           "properties": {"auto.offset.reset": "earliest"}})
    body = json.loads(r.read())
    conn.close()
    assert body[0]["columnNames"] == ["VIEWER", "WS", "WE", "N"], body[0]
    rows = body[1:]
    assert sorted(row[0] for row in rows) == sorted(v[0] for v in VIEWS)
    for _, start, end, n in rows:
        assert (end - start, n) == (3_600_000, 1), rows


def test_push_queries_past_ksql_max_push_queries_are_refused(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    s = SqlServer(broker, tmp_path, extra={"ksql.max.push.queries": "1"})
    try:
        s.ksql(STREAM)
        body = {"sql": "SELECT * FROM pageviews EMIT CHANGES;", "properties": {}}
        conn, r = open_stream(s, "/query-stream", body, accept="application/vnd.ksqlapi.delimited.v1")
        assert r.status == 200
        first = json.loads(r.readline())["queryId"]

        status, _, text = s.request("POST", "/query-stream", body, accept="application/json")
        assert (status, json.loads(text)) == (400, {"@type": "generic_error", "error_code": 40003,
                                                     "message": "Maximum number of push queries exceeded"})
        status, _, text = s.request("POST", "/query", {"ksql": body["sql"], "streamsProperties": {}})
        error = json.loads(text)
        assert status == 400 and error["@type"] == "statement_error" and error["error_code"] == 40001
        assert error["message"].endswith("Current push query count: 1. Configured limit: 1."), error

        # Once the first ends, there is room again.
        assert s.request("POST", "/close-query", {"queryId": first})[0] == 200
        conn.close()
        def accepted():
            again, response = open_stream(s, "/query-stream", body, accept="application/vnd.ksqlapi.delimited.v1")
            again.close()
            return response.status == 200

        wait_until(accepted, 30, interval=0.2, message="a push query accepted again")
    finally:
        s.stop()


def test_a_query_waits_for_the_command_its_request_names(make_broker, tmp_path):
    # ksqlDB's commandSequenceNumber: the query runs once that command is executed here; one
    # never reached is a 503 after ksql.server.command.response.timeout.ms.
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    s = SqlServer(broker, tmp_path, extra={"ksql.server.command.response.timeout.ms": "500"})
    try:
        [created] = s.ksql(STREAM)
        sequence = created["commandSequenceNumber"]
        producer = ck.producer(broker.bootstrap)
        for viewer, page, secs in VIEWS:
            producer.produce("pageviews", key=viewer, value=json.dumps({"PAGE": page, "SECS": secs}))
        producer.flush(30)
        push, pull = "SELECT * FROM pageviews EMIT CHANGES LIMIT 2;", "SELECT * FROM pageviews LIMIT 2;"
        earliest = {"auto.offset.reset": "earliest"}
        requests = [("/query", {"ksql": push, "streamsProperties": earliest}),
                    ("/query", {"ksql": pull}),
                    ("/query-stream", {"sql": push, "properties": earliest}),
                    ("/query-stream", {"sql": pull})]
        for path, body in requests:
            status, _, text = s.request("POST", path, {**body, "commandSequenceNumber": sequence},
                                        accept="application/json")
            assert status == 200, (path, body, text)
            rows = [r["row"]["columns"] if path == "/query" else r for r in json.loads(text)[1:3]]
            assert rows == [list(v) for v in VIEWS[:2]], (path, body, text)

            status, _, text = s.request("POST", path, {**body, "commandSequenceNumber": 10_000},
                                        accept="application/json")
            assert (status, json.loads(text)) == (503, {
                "@type": "generic_error", "error_code": 50301,
                "message": "Timed out while waiting for a previous command to execute. "
                           "command sequence number: 10000"}), (path, body, text)
    finally:
        s.stop()


def test_bad_counts_in_the_settings_stop_the_server_with_one_line(tmp_path):
    done = subprocess.run([OXBOW_BIN, "sql-server", "-o", "ksql.max.push.queries=0"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "ksql.max.push.queries: not a count from 1 up: 0" in done.stderr, done.stderr
