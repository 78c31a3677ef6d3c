"""`oxbow sql-server -o ksql.runtime.feature.shared.enabled=true` against a real broker: its
persistent queries run as named topologies of shared Streams runtimes (docs/sql/server.md,
"Shared runtimes"). Queries over different topics share one runtime (one consumer group,
`_confluent-ksql-default_query_0`, not one group per query); a query over a topic another one
reads goes to a second runtime; outputs equal a model; a pull query reads a CTAS's store by its
topology; TERMINATE removes one query and leaves the others running, PAUSE and RESUME
take one out and back without losing what came meanwhile; a restart (SIGTERM, start
again, the command topic replays) resumes every query in its runtime with nothing lost or
repeated, though the replay alone would now put the second runtime's query in the first.
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
    groups = ck.admin(bootstrap).list_groups(timeout=10)
    return {g.id: len(g.members) for g in groups if g.id.startswith("_confluent-ksql-default_query")}


def _wait_outputs(server, bootstrap, model, with_long_views=True):
    if with_long_views:
        wait_until(lambda: _keys(bootstrap, "LONG_VIEWS") == model.long_views(), 60,
                   message="LONG_VIEWS equal to the model")
    wait_until(lambda: _keys(bootstrap, "SHORT_VIEWS") == model.short_views(), 60,
               message="SHORT_VIEWS (the second runtime) equal to the model")
    wait_until(lambda: _keys(bootstrap, "COPIES") == model.copies(), 60,
               message="COPIES equal to the model")
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM counts;")} == model.counts(),
               60, interval=0.2, message="the pull query's scan of COUNTS equal to the model")


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

    server.ksql("CREATE STREAM long_views AS SELECT viewer, secs FROM s1 WHERE secs > 10;")
    server.ksql("CREATE STREAM copies AS SELECT * FROM s2;")
    server.ksql("CREATE TABLE counts AS SELECT viewer, COUNT(*) AS n FROM s3 GROUP BY viewer;")
    # Reads t1 as LONG_VIEWS does: one group holds one position per partition, so another runtime.
    server.ksql("CREATE STREAM short_views AS SELECT viewer, secs FROM s1 WHERE secs <= 10;")
    [queries] = server.ksql("SHOW QUERIES;")
    assert sorted(q["id"] for q in queries["queries"]) == \
        ["CSAS_COPIES_1", "CSAS_LONG_VIEWS_0", "CSAS_SHORT_VIEWS_3", "CTAS_COUNTS_2"]
    assert {q["state"] for q in queries["queries"]} == {"RUNNING"}

    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="two runtime groups of one member each, none per query")
    _wait_outputs(server, bootstrap, model)
    # The CTAS's changelog keeps the name ksqlDB's per-query application gives it.
    topics = ck.admin(bootstrap).list_topics(timeout=10).topics
    assert any(t.startswith("_confluent-ksql-default_query_CTAS_COUNTS_2-") and t.endswith("-changelog")
               for t in topics), sorted(topics)
    [lookup] = rows_of(server, "SELECT * FROM counts WHERE viewer = 'alice';")
    assert lookup == ["alice", model.counts()["alice"]]

    # LONG_VIEWS leaves runtime 0; SHORT_VIEWS, which could now run there, stays in runtime 1.
    [terminated] = server.ksql("TERMINATE CSAS_LONG_VIEWS_0;")
    assert terminated["commandStatus"]["message"] == "Query terminated."
    long_views_done = len(model.long_views())
    _produce(bootstrap, model, rng, 20)
    _wait_outputs(server, bootstrap, model, with_long_views=False)
    assert len(_keys(bootstrap, "LONG_VIEWS")) == long_views_done
    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="both runtimes still running after the TERMINATE")

    # PAUSE takes COPIES out of its runtime keeping its positions; RESUME puts it back, and it
    # reads what came meanwhile.
    server.ksql("PAUSE CSAS_COPIES_1;")
    copies_done = len(model.copies())
    _produce(bootstrap, model, rng, 10)
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM counts;")} == model.counts(),
               60, interval=0.2, message="COUNTS, in COPIES' runtime, going on while it is paused")
    assert len(_keys(bootstrap, "COPIES")) == copies_done
    server.ksql("RESUME CSAS_COPIES_1;")
    _wait_outputs(server, bootstrap, model, with_long_views=False)

    server.stop()
    assert "oxbow sql-server stopped cleanly" in server.tail()
    _produce(bootstrap, model, rng, 20)
    server.restart()
    [queries] = server.ksql("SHOW QUERIES;")
    assert sorted(q["id"] for q in queries["queries"]) == \
        ["CSAS_COPIES_1", "CSAS_SHORT_VIEWS_3", "CTAS_COUNTS_2"]
    _produce(bootstrap, model, rng, 10)
    # Exactly the model: what came while the server was down is read from each query's runtime's
    # committed position, nothing twice. SHORT_VIEWS went back to runtime 1 (the replay alone
    # would have put it in runtime 0, whose group has no position on t1: all of t1 again).
    _wait_outputs(server, bootstrap, model, with_long_views=False)
    wait_until(lambda: _query_groups(bootstrap) == {RUNTIME_0: 1, RUNTIME_1: 1}, 60,
               message="the same two runtimes after the restart")
    server.stop()
