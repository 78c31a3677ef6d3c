"""`oxbow sql-server` killed (-9) and started again against the same broker: its statements come
back from the command topic, `_confluent-ksql-<service id>_command_topic`, and its persistent
query resumes where its group committed, under the same query id and application id, in the same
shared runtime.
"""

import json
import subprocess

import pytest
from confluent_kafka.admin import ConfigResource

import ck_helpers as ck
from harness import OXBOW_BIN, track, wait_until
from test_registry import Platform
from test_sql_server import SqlServer

COMMAND_TOPIC = "_confluent-ksql-default__command_topic"
CREATE = ("CREATE STREAM pageviews (viewer STRING KEY, page STRING, secs INT) "
          "WITH (kafka_topic='pageviews', value_format='JSON', partitions=1);")
CSAS = "CREATE STREAM long_views AS SELECT viewer, page FROM pageviews WHERE secs > 10;"
# The query's positions are kept in a group named as ksqlDB's query's application; the server is a
# member of its shared runtime's group.
QUERY_GROUP = "_confluent-ksql-default_query_CSAS_LONG_VIEWS_0"
RUNTIME_GROUP = "_confluent-ksql-default_query_0"


class RestartableServer(SqlServer):
    """The server of test_sql_server.py, started again on the same port, state directory and log,
    with extra settings (`ksql.streams.processing.guarantee`)."""

    def __init__(self, broker, tmp_path, extra):
        super().__init__(broker, tmp_path)
        self.args = self.proc.args + [a for k, v in extra.items() for a in ("-o", f"{k}={v}")]

    def restart(self):
        assert self.proc.poll() is not None
        args = self.args
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL))
        wait_until(lambda: self.proc.poll() is not None or self.request("GET", "/info")[0] == 200, 60,
                   message="the SQL server answering again")
        assert self.proc.poll() is None, self.tail()

    def kill(self):
        self.proc.kill()
        self.proc.wait(30)


def _produce(bootstrap, views):
    producer = ck.producer(bootstrap)
    for viewer, secs in views:
        producer.produce("pageviews", key=viewer, value=json.dumps({"PAGE": "/" + viewer, "SECS": secs}))
    assert producer.flush(30) == 0


def _output(bootstrap):
    """The sink's committed records, as viewers in offset order."""
    got = ck.consume_partition(bootstrap, "LONG_VIEWS", expected=0, timeout=30,
                               **{"isolation.level": "read_committed", "enable.partition.eof": True})
    return [m.key().decode() for m in got]


def _group_members(bootstrap):
    [found] = ck.admin(bootstrap).list_groups(RUNTIME_GROUP, timeout=10)
    return len(found.members)


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_a_killed_server_comes_back_with_its_streams_and_queries(make_broker, tmp_path, guarantee):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    bootstrap = broker.bootstrap
    # The restart passes the guarantee too (the first start's arguments are test_sql_server's).
    # A killed member leaves its group when its session times out: 6 s instead of 45.
    server = RestartableServer(broker, tmp_path, {"ksql.streams.processing.guarantee": guarantee,
                                                  "ksql.streams.session.timeout.ms": "6000"})
    server.kill()
    server.restart()

    [created] = server.ksql(CREATE)
    ck.wait_for_topic(bootstrap, "pageviews", 1)
    [csas] = server.ksql(CSAS, **{"ksql.streams.auto.offset.reset": "earliest"})
    assert csas["commandStatus"]["queryId"] == "CSAS_LONG_VIEWS_0"
    # The sequence numbers are the statements' offsets in the command topic, each written in a
    # transaction of its own, whose commit marker takes the next offset.
    assert (created["commandSequenceNumber"], csas["commandSequenceNumber"]) == (0, 2)
    server.ksql("SET 'auto.offset.reset'='earliest'; SHOW STREAMS; DESCRIBE pageviews;")

    before = [("alice", 20), ("bob", 5), ("carol", 30)]
    _produce(bootstrap, before)
    wait_until(lambda: sorted(_output(bootstrap)) == ["alice", "carol"], 60, message="the first output")
    wait_until(lambda: ck.committed_total(bootstrap, QUERY_GROUP, "pageviews", 1) == 3, 30,
               message="the query's positions in its own group")
    streams_before = server.ksql("SHOW STREAMS;")[0]["streams"]
    queries_before = server.ksql("SHOW QUERIES;")[0]["queries"]

    # What the topic holds: two statements (SET, SHOW and DESCRIBE are not written), keyed by
    # ksqlDB's command ids.
    records = ck.consume_partition(bootstrap, COMMAND_TOPIC, expected=2, timeout=30)
    assert [m.key().decode() for m in records] == ['"stream/`PAGEVIEWS`/create"', '"stream/`LONG_VIEWS`/create"']
    values = [json.loads(m.value()) for m in records]
    assert [v["statement"] for v in values] == [CREATE, CSAS]
    assert values[1]["streamsProperties"] == {"ksql.streams.auto.offset.reset": "earliest"}
    assert values[0]["originalProperties"] == {}
    admin = ck.admin(bootstrap)
    [config] = admin.describe_configs(
        [ConfigResource(ConfigResource.Type.TOPIC, COMMAND_TOPIC)]).values()
    settings = config.result(timeout=10)
    assert settings["retention.ms"].value == "-1" and settings["cleanup.policy"].value == "delete"
    assert len(ck.topic_metadata(bootstrap, COMMAND_TOPIC).partitions) == 1

    server.kill()
    wait_until(lambda: _group_members(bootstrap) == 0, 60, message="the killed query out of its group")
    server.restart()
    assert server.ksql("SHOW STREAMS;")[0]["streams"] == streams_before
    wait_until(lambda: server.ksql("SHOW QUERIES;")[0]["queries"] == queries_before, 30,
               message="the query listed as before")
    wait_until(lambda: _group_members(bootstrap) == 1, 60, message="the replayed query in its group")
    # Replayed, not written again.
    assert ck.watermarks(bootstrap, COMMAND_TOPIC)[1] == 4

    after = [("dave", 40), ("erin", 1), ("frank", 50)]
    _produce(bootstrap, after)
    wanted = ["alice", "carol", "dave", "frank"]
    wait_until(lambda: set(_output(bootstrap)) == set(wanted), 60, message="every input's output")
    if guarantee == "exactly_once_v2":
        assert sorted(_output(bootstrap)) == wanted, "no output twice"

    # The next statement follows the replayed ones in the topic, and TERMINATE of the replayed
    # query stops it.
    [terminated] = server.ksql("TERMINATE CSAS_LONG_VIEWS_0;")
    assert terminated["commandSequenceNumber"] == 4
    wait_until(lambda: _group_members(bootstrap) == 0, 30, message="the runtime's group empty")
    wait_until(lambda: ck.admin(bootstrap).list_groups(QUERY_GROUP, timeout=10) == [], 30,
               message="the terminated query's group deleted")
    server.stop()


def test_a_replayed_statement_that_fails_is_skipped(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    bootstrap = broker.bootstrap
    ck.create_topic(bootstrap, COMMAND_TOPIC, 1, {"retention.ms": "-1"})
    producer = ck.producer(bootstrap)
    for key, statement in [("stream/`A`/create", "CREATE STREAM a (x INT) WITH (kafka_topic='a', "
                            "value_format='JSON', partitions=1);"),
                           ("stream/`B`/create", "CREATE STREAM b AS SELECT * FROM nowhere;"),
                           ("stream/`C`/create", "CREATE STREAM c AS SELECT * FROM a;")]:
        producer.produce(COMMAND_TOPIC, key=json.dumps(key),
                         value=json.dumps({"statement": statement, "streamsProperties": {},
                                           "originalProperties": {}}))
    producer.produce(COMMAND_TOPIC, key='"junk"', value="not json")
    assert producer.flush(30) == 0

    server = RestartableServer(broker, tmp_path, {})
    names = {s["name"] for s in server.ksql("SHOW STREAMS;")[0]["streams"]}
    assert {"A", "C"} <= names and "B" not in names
    [query] = server.ksql("SHOW QUERIES;")[0]["queries"]
    # Ids count the queries made: the failed statement made none.
    assert query["id"] == "CSAS_C_0"
    assert "failed on replay, skipped" in server.tail()
    server.stop()


def test_the_platform_serves_sql_on_its_own_broker_and_registry(tmp_path):
    platform = Platform(tmp_path).start()
    # test_sql_server's client, pointed at the platform's SQL port.
    sql = SqlServer.__new__(SqlServer)
    sql.port = platform.sql_port
    wait_until(lambda: sql.request("GET", "/info")[0] == 200, 60, message="the platform's SQL server")
    [created] = sql.ksql(CREATE)
    assert created["commandStatus"]["message"] == "Stream created"
    ck.wait_for_topic(platform.bootstrap, "pageviews", 1)
    [properties] = sql.ksql("SHOW PROPERTIES;")
    listed = {p["name"]: p["value"] for p in properties["properties"]}
    assert listed["ksql.schema.registry.url"] == platform.url
    platform.stop()
