"""`oxbow sql-server` against a real broker: ksqlDB's REST API driven with plain HTTP
(http.client), its persistent queries fed and read with confluent-kafka.

Bodies are checked field by field against ksqlDB's documented shapes: /info's KsqlServerInfo,
/healthcheck's details, /ksql's entities (currentStatus, streams, sourceDescription, queries) and
its errors (statement_error 40001 with the statement, generic_error 40000, 404).
"""

import http.client
import json
import signal
import subprocess

import pytest

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, wait_until
from test_sql_engine import _records

KSQL_JSON = "application/vnd.ksql.v1+json"


class SqlServer:
    def __init__(self, broker, tmp_path, extra=None):
        self.port = free_port()
        self.log_path = tmp_path / "sql-server.log"
        overrides = {
            "listeners": f"http://127.0.0.1:{self.port}",
            "bootstrap.servers": broker.bootstrap,
            "ksql.streams.state.dir": str(tmp_path / "state"),
            "ksql.streams.commit.interval.ms": "100",
            "ksql.streams.statestore.cache.max.bytes": "0",
            "ksql.some.unknown.setting": "kept",
            **(extra or {}),
        }
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(
                [OXBOW_BIN, "sql-server", *[a for k, v in overrides.items() for a in ("-o", f"{k}={v}")]],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        wait_until(lambda: self.proc.poll() is not None or self.request("GET", "/info")[0] == 200, 30,
                   message="the SQL server answering")
        assert self.proc.poll() is None, self.tail()

    def request(self, method, path, body=None, accept=KSQL_JSON):
        """(status, content type, body text); status 0 when nothing listens."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
            conn.request(method, path, body=data, headers={"Accept": accept, "Content-Type": KSQL_JSON})
            r = conn.getresponse()
            return r.status, r.getheader("Content-Type"), r.read().decode()
        except OSError:
            return 0, None, ""
        finally:
            conn.close()

    def ksql(self, statements, expected_status=200, **properties):
        status, _, text = self.request("POST", "/ksql", {"ksql": statements, "streamsProperties": properties})
        assert status == expected_status, text
        return json.loads(text)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, self.tail()

    def tail(self):
        return self.log_path.read_text(errors="replace")[-3000:]


@pytest.fixture
def server(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    s = SqlServer(broker, tmp_path)
    s.broker = broker
    yield s
    if s.proc.poll() is None:
        s.stop()


def test_info_and_healthcheck_describe_the_server_and_its_cluster(server):
    status, content_type, text = server.request("GET", "/info")
    assert status == 200 and content_type == KSQL_JSON
    info = json.loads(text)["KsqlServerInfo"]
    cluster_id = ck.admin(server.broker.bootstrap).list_topics(timeout=10).cluster_id
    assert info["kafkaClusterId"] == cluster_id and cluster_id
    assert info["ksqlServiceId"] == "default_"
    assert info["serverStatus"] == "RUNNING"
    assert info["version"]

    status, content_type, text = server.request("GET", "/healthcheck", accept="application/json")
    assert status == 200 and content_type == "application/json"
    assert json.loads(text) == {"isHealthy": True, "details": {
        "metastore": {"isHealthy": True}, "kafka": {"isHealthy": True}, "commandRunner": {"isHealthy": True}}}

    # The processing log's stream exists from the start, over its topic.
    [listed] = server.ksql("SHOW STREAMS;")
    assert {"type": "STREAM", "name": "KSQL_PROCESSING_LOG", "topic": "default_ksql_processing_log",
            "keyFormat": "KAFKA", "valueFormat": "JSON", "isWindowed": False} in listed["streams"]
    ck.wait_for_topic(server.broker.bootstrap, "default_ksql_processing_log", 1)


def test_bad_requests_get_ksqldbs_errors_and_the_server_goes_on(server):
    error = server.ksql("CREATE STREAM nowhere AS SELECT * FROM missing;", expected_status=400)
    assert error["@type"] == "statement_error" and error["error_code"] == 40001
    assert error["statementText"] == "CREATE STREAM nowhere AS SELECT * FROM missing;"
    assert "MISSING" in error["message"] and error["entities"] == []

    error = server.ksql("SHOW STREAMS; SELEC 1;", expected_status=400)
    assert error["@type"] == "statement_error" and error["statementText"] == "SELEC 1;"
    assert "Syntax Error" in error["message"]
    assert [e["@type"] for e in error["entities"]] == ["streams"]

    for body in ("{not json", json.dumps({"sql": "SHOW STREAMS;"})):
        status, _, text = server.request("POST", "/ksql", body)
        assert status == 400, text
        error = json.loads(text)
        assert error["@type"] == "generic_error" and error["error_code"] == 40000

    status, _, text = server.request("GET", "/no/such/thing")
    assert status == 404 and json.loads(text)["error_code"] == 40400
    status, _, _ = server.request("GET", "/ksql")
    assert status == 405
    assert server.request("GET", "/info")[0] == 200


def test_a_persistent_query_runs_until_terminated(server):
    bootstrap = server.broker.bootstrap
    [created] = server.ksql("CREATE STREAM pageviews (viewer STRING KEY, page STRING, secs INT) "
                            "WITH (kafka_topic='pageviews', value_format='JSON', partitions=2);")
    assert created["@type"] == "currentStatus"
    assert created["commandId"] == "stream/PAGEVIEWS/create"
    assert created["commandStatus"]["status"] == "SUCCESS"
    assert created["commandStatus"]["message"] == "Stream created"
    assert created["warnings"] == []
    # ksqlDB creates the topic a CREATE names with PARTITIONS.
    ck.wait_for_topic(bootstrap, "pageviews", 2)

    status, _, text = server.request("GET", "/status/stream/PAGEVIEWS/create")
    assert status == 200 and json.loads(text) == {"status": "SUCCESS", "message": "Stream created"}

    # The same over cleartext HTTP/2 (prior knowledge), as ksqlDB's HTTP/2 clients speak it.
    h2 = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-w", "\\n%{http_version} %{http_code}",
                         "-H", "Accept: application/json", "--data", json.dumps({"ksql": "SHOW STREAMS;"}),
                         f"http://127.0.0.1:{server.port}/ksql"], capture_output=True, text=True, timeout=30)
    body, _, version_and_status = h2.stdout.rpartition("\n")
    assert version_and_status == "2 200", h2.stdout + h2.stderr
    assert "PAGEVIEWS" in [s["name"] for s in json.loads(body)[0]["streams"]]

    [described] = server.ksql("DESCRIBE pageviews;")
    source = described["sourceDescription"]
    assert described["@type"] == "sourceDescription"
    assert (source["name"], source["type"], source["topic"]) == ("PAGEVIEWS", "STREAM", "pageviews")
    assert [(f["name"], f["schema"]["type"], f.get("type")) for f in source["fields"]] == \
        [("VIEWER", "STRING", "KEY"), ("PAGE", "STRING", None), ("SECS", "INTEGER", None)]

    # Produced before the query exists: read only because the request asks for `earliest` (the
    # server's default is ksqlDB's `latest`).
    producer = ck.producer(bootstrap)
    views = [("alice", "/a", 5), ("bob", "/b", 20), ("carol", "/c", 11), ("dave", "/d", 1)]
    for viewer, page, secs in views:
        producer.produce("pageviews", key=viewer, value=json.dumps({"PAGE": page, "SECS": secs}))
    producer.flush(30)

    [csas] = server.ksql("CREATE STREAM long_views AS SELECT viewer, page FROM pageviews WHERE secs > 10;",
                         **{"ksql.streams.auto.offset.reset": "earliest"})
    assert csas["commandStatus"]["message"] == "Created query with ID CSAS_LONG_VIEWS_0"
    assert csas["commandSequenceNumber"] > created["commandSequenceNumber"]

    [queries] = server.ksql("SHOW QUERIES;")
    [query] = queries["queries"]
    # It runs as a named topology of the shared runtime 0, whose group has the server as its member;
    # its positions are kept in a group of its own, named as ksqlDB's query's application.
    group = "_confluent-ksql-default_query_CSAS_LONG_VIEWS_0"
    runtime_group = "_confluent-ksql-default_query_0"
    wait_until(lambda: _group_members(bootstrap, runtime_group) == 1, 30, message="the query's runtime in its group")
    assert (query["id"], query["sinks"], query["sinkKafkaTopics"], query["queryType"]) == \
        ("CSAS_LONG_VIEWS_0", ["LONG_VIEWS"], ["LONG_VIEWS"], "PERSISTENT")
    assert (query["state"], query["statusCount"]) == ("RUNNING", {"RUNNING": 1})

    [extended, explained, topics] = server.ksql("DESCRIBE pageviews EXTENDED; EXPLAIN CSAS_LONG_VIEWS_0; "
                                                "SHOW TOPICS;")
    source = extended["sourceDescription"]
    assert source["extended"] and (source["partitions"], source["replication"]) == (2, 1)
    assert [q["id"] for q in source["readQueries"]] == ["CSAS_LONG_VIEWS_0"]
    assert explained["@type"] == "queryDescription"
    description = explained["queryDescription"]
    assert (description["id"], description["sources"], description["sinks"]) == \
        ("CSAS_LONG_VIEWS_0", ["PAGEVIEWS"], ["LONG_VIEWS"])
    assert "KSTREAM-SOURCE" in description["topology"] and description["executionPlan"]
    assert topics["@type"] == "kafka_topics"
    assert {"name": "pageviews", "replicaInfo": [1, 1]} in topics["topics"]

    # And one produced while it runs.
    producer.produce("pageviews", key="erin", value=json.dumps({"PAGE": "/e", "SECS": 30}))
    producer.flush(30)
    got = _records(bootstrap, "LONG_VIEWS", 3)
    assert sorted((m.key().decode(), json.loads(m.value())) for m in got) == \
        [("bob", {"PAGE": "/b"}), ("carol", {"PAGE": "/c"}), ("erin", {"PAGE": "/e"})]
    wait_until(lambda: ck.committed_total(bootstrap, group, "pageviews", 2) == 5, 30,
               message="the query's positions in its own group")

    [terminated] = server.ksql("TERMINATE CSAS_LONG_VIEWS_0;")
    assert terminated["commandStatus"]["message"] == "Query terminated."
    assert terminated["commandId"] == "terminate/CSAS_LONG_VIEWS_0/execute"
    assert server.ksql("SHOW QUERIES;")[0]["queries"] == []
    # Its topology left the runtime, which closed with its last query and left its group, and the
    # query's positions went with it (TERMINATE resets them, as ksqlDB deletes its query's group).
    wait_until(lambda: _group_members(bootstrap, runtime_group) == 0, 30, message="the runtime's group empty")
    wait_until(lambda: _group_gone(bootstrap, group), 30, message="the query's group deleted")

    [dropped] = server.ksql("DROP STREAM long_views DELETE TOPIC;")
    assert dropped["commandStatus"]["message"] == "Source `LONG_VIEWS` (topic: LONG_VIEWS) was dropped."
    wait_until(lambda: "LONG_VIEWS" not in ck.admin(bootstrap).list_topics(timeout=10).topics, 30,
               message="LONG_VIEWS deleted")
    assert "pageviews" in ck.admin(bootstrap).list_topics(timeout=10).topics

    # SIGTERM with a query running: it is closed, the server exits 0.
    server.ksql("CREATE STREAM short_views AS SELECT * FROM pageviews WHERE secs < 10;")
    wait_until(lambda: _group_members(bootstrap, runtime_group) == 1, 30,
               message="the second query's runtime (0 again, the smallest free) in its group")
    server.stop()
    assert "oxbow sql-server stopped cleanly" in server.tail()


def _group_members(bootstrap, group):
    [found] = ck.admin(bootstrap).list_groups(group, timeout=10)
    return len(found.members)


def _group_gone(bootstrap, group):
    return ck.admin(bootstrap).list_groups(group, timeout=10) == []



def test_insert_values_writes_its_record_and_answers_no_entity(server):
    server.ksql("CREATE STREAM visits (id INT KEY, page STRING) "
                "WITH (kafka_topic='visits', value_format='JSON', partitions=1);")
    # ksqlDB answers INSERT VALUES with no entity; the record is in the topic all the same.
    assert server.ksql("INSERT INTO visits (id, page) VALUES (7, '/seven');") == []
    [record] = _records(server.broker.bootstrap, "visits", 1)
    assert (int.from_bytes(record.key(), "big"), json.loads(record.value())) == (7, {"PAGE": "/seven"})
