"""`oxbow sql-server -o ksql.runtime.feature.shared.enabled=true` against a real broker: its
persistent queries run as named topologies of shared Streams runtimes (docs/sql/server.md,
"Shared runtimes"). Queries share one runtime (one consumer group,
`_confluent-ksql-default_query_0`, not one group per query), also two over one topic: each keeps
its positions in a group of its own (its per-query application id), so one created later reads
the topic from the start. A query over a topic another one joins goes to a second runtime;
outputs equal a model; a pull query reads a CTAS's store by its topology; TERMINATE removes one
query and leaves the others running (also the other reader of its topic), PAUSE and RESUME take
one out and back without losing what came meanwhile; a restart (SIGTERM, start again, the
command topic replays) resumes every query in its runtime with nothing lost or repeated, though
the replay alone would now put the second runtime's query in the first.
"""

import json
import random

import ck_helpers as ck
from harness import wait_until
from test_sql_pull_query import rows_of
from test_sql_server_restart import RestartableServer

SHARED = {"ksql.runtime.feature.shared.enabled": "true",
          "ksql.streams.auto.offset.reset": "earliest"}
RUNTIME_0 = "_confluent-ksql-default_query_0"
RUNTIME_1 = "_confluent-ksql-default_query_1"
SETUP = "".join(
    f"CREATE STREAM s{i} (viewer STRING KEY, secs INT) "
    f"WITH (kafka_topic='t{i}', value_format='JSON', partitions=1);" for i in (1, 2, 3))
USERS = ["alice", "bob", "carol", "dave", "erin"]


class Model:
    def __init__(self):
        self.sent = {1: [], 2: [], 3: []}

    def long_views(self):
        return [v for v, secs in self.sent[1] if secs > 10]

    def short_views(self):
        return [v for v, secs in self.sent[1] if secs <= 10]

    def copies(self):
        return [v for v, _ in self.sent[2]]

    def counts(self):
        out = {}
        for v, _ in self.sent[3]:
            out[v] = out.get(v, 0) + 1
        return out


def _produce(bootstrap, model, rng, n, streams=(1, 2, 3)):
    producer = ck.producer(bootstrap)
    for _ in range(n):
        for i in streams:
            viewer, secs = rng.choice(USERS), rng.randint(0, 20)
            model.sent[i].append((viewer, secs))
            producer.produce(f"t{i}", key=viewer, value=json.dumps({"SECS": secs}))
    assert producer.flush(30) == 0


def _keys(bootstrap, topic):
    got = ck.consume_partition(bootstrap, topic, timeout=30, **{"enable.partition.eof": True})
    return [m.key().decode() for m in got]


def _query_groups(bootstrap):
    """The query groups with members: the runtimes' (a query's own group only holds positions)."""
    groups = ck.admin(bootstrap).list_groups(timeout=10)
    return {g.id: len(g.members) for g in groups
            if g.id.startswith("_confluent-ksql-default_query") and g.members}


def _wait_outputs(server, bootstrap, model, with_long_views=True):
    if with_long_views:
        wait_until(lambda: _keys(bootstrap, "LONG_VIEWS") == model.long_views(), 60,
                   message="LONG_VIEWS equal to the model")
    wait_until(lambda: _keys(bootstrap, "SHORT_VIEWS") == model.short_views(), 60,
               message="SHORT_VIEWS (over LONG_VIEWS' topic) equal to the model")
    wait_until(lambda: _keys(bootstrap, "COPIES") == model.copies(), 60,
               message="COPIES (the second runtime) equal to the model")
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM counts;")} == model.counts(),
               60, interval=0.2, message="the pull query's scan of COUNTS equal to the model")


def _own_position(bootstrap, query_id, topic):
    """The committed offset of `topic`'s partition 0 in the query's own group."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"_confluent-ksql-default_query_{query_id}",
                            "enable.auto.commit": False})
    try:
        [tp] = consumer.committed([ck.TopicPartition(topic, 0)], timeout=10)
        return tp.offset
    finally:
        consumer.close()


def test_queries_share_runtimes_by_source_topic(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    bootstrap = broker.bootstrap
    server = RestartableServer(broker, tmp_path, SHARED)
    server.stop()
    server.restart()
    rng, model = random.Random(43), Model()
    server.ksql(SETUP)
    for i in (1, 2, 3):
        ck.wait_for_topic(bootstrap, f"t{i}", 1)
    _produce(bootstrap, model, rng, 30)

    server.ksql("CREATE TABLE counts AS SELECT viewer, COUNT(*) AS n FROM s3 GROUP BY viewer;")
    server.ksql("CREATE STREAM long_views AS SELECT viewer, secs FROM s1 WHERE secs > 10;")
    wait_until(lambda: _keys(bootstrap, "LONG_VIEWS") == model.long_views(), 60,
               message="LONG_VIEWS equal to the model")
    # Joins t2 with COUNTS in one sub-topology: a topic read beside another is not shared...
    server.ksql("CREATE STREAM enriched AS SELECT s2.viewer, s2.secs, counts.n FROM s2 "
                "JOIN counts ON s2.viewer = counts.viewer;")
    # ...so COPIES, over t2, goes to a second runtime,
    server.ksql("CREATE STREAM copies AS SELECT * FROM s2;")
    # while SHORT_VIEWS reads t1 beside LONG_VIEWS in the first, from the start of t1 (its own
    # position), though LONG_VIEWS is at its end.
    server.ksql("CREATE STREAM short_views AS SELECT viewer, secs FROM s1 WHERE secs <= 10;")
    [queries] = server.ksql("SHOW QUERIES;")
    assert sorted(q["id"] for q in queries["queries"]) == \
        ["CSAS_COPIES_3", "CSAS_ENRICHED_2", "CSAS_LONG_VIEWS_1", "CSAS_SHORT_VIEWS_4", "CTAS_COUNTS_0"]
    assert {q["state"] for q in queries["queries"]} == {"RUNNING"}

    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="two runtime groups of one member each, none per query")
    _wait_outputs(server, bootstrap, model)
    # Each query's positions are in its own group, ksqlDB's name for the query's consumer group.
    end = ck.watermarks(bootstrap, "t1", 0)[1]
    for query in ("CSAS_LONG_VIEWS_1", "CSAS_SHORT_VIEWS_4"):
        wait_until(lambda: _own_position(bootstrap, query, "t1") == end, 30, message=f"{query}'s position")
    # The CTAS's changelog keeps the name ksqlDB's per-query application gives it.
    topics = ck.admin(bootstrap).list_topics(timeout=10).topics
    assert any(t.startswith("_confluent-ksql-default_query_CTAS_COUNTS_0-") and t.endswith("-changelog")
               for t in topics), sorted(topics)
    [lookup] = rows_of(server, "SELECT * FROM counts WHERE viewer = 'alice';")
    assert lookup == ["alice", model.counts()["alice"]]

    # LONG_VIEWS leaves runtime 0, SHORT_VIEWS goes on reading t1; ENRICHED leaves too, so COPIES
    # could now run in runtime 0, yet stays in runtime 1 (its positions' group).
    for query in ("CSAS_LONG_VIEWS_1", "CSAS_ENRICHED_2"):
        [terminated] = server.ksql(f"TERMINATE {query};")
        assert terminated["commandStatus"]["message"] == "Query terminated."
    long_views_done = len(model.long_views())
    _produce(bootstrap, model, rng, 20)
    _wait_outputs(server, bootstrap, model, with_long_views=False)
    assert len(_keys(bootstrap, "LONG_VIEWS")) == long_views_done
    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="both runtimes still running after the TERMINATEs")
    # TERMINATE resets the query's positions: its own group is gone.
    assert _own_position(bootstrap, "CSAS_LONG_VIEWS_1", "t1") < 0

    # PAUSE takes SHORT_VIEWS out of its runtime keeping its positions; RESUME puts it back, and
    # it reads what came meanwhile.
    server.ksql("PAUSE CSAS_SHORT_VIEWS_4;")
    short_views_done = len(model.short_views())
    _produce(bootstrap, model, rng, 10)
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM counts;")} == model.counts(),
               60, interval=0.2, message="COUNTS, in SHORT_VIEWS' runtime, going on while it is paused")
    assert len(_keys(bootstrap, "SHORT_VIEWS")) == short_views_done
    server.ksql("RESUME CSAS_SHORT_VIEWS_4;")
    _wait_outputs(server, bootstrap, model, with_long_views=False)

    server.stop()
    assert "oxbow sql-server stopped cleanly" in server.tail()
    _produce(bootstrap, model, rng, 20)
    server.restart()
    [queries] = server.ksql("SHOW QUERIES;")
    assert sorted(q["id"] for q in queries["queries"]) == \
        ["CSAS_COPIES_3", "CSAS_SHORT_VIEWS_4", "CTAS_COUNTS_0"]
    _produce(bootstrap, model, rng, 10)
    # Exactly the model: what came while the server was down is read from each query's committed
    # position, nothing twice. COPIES went back to runtime 1.
    _wait_outputs(server, bootstrap, model, with_long_views=False)
    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="the same two runtimes after the restart")
    server.stop()
