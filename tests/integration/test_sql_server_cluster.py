"""Two `oxbow sql-server` processes of one `ksql.service.id` against one broker: each follows the
shared command topic (what one accepts, the other executes without a restart, with the same query
ids), a request's commandSequenceNumber waits for that statement, the queries' Streams tasks are
spread over both, a pull query asked of either answers for every key (the other's partitions
forwarded), and when one is killed the other takes over all the work and the answers.
"""

import base64
import json
import os
import random
import socket
import struct
import threading
import urllib.parse
import time

import pytest
from confluent_kafka import KafkaException

import ck_helpers as ck
from harness import wait_until
from test_sql_server import SqlServer

SERVICE = "cluster_"
CREATE = ("CREATE STREAM clicks (usr STRING KEY, n INT) "
          "WITH (kafka_topic='clicks', value_format='JSON', partitions=4);")
CTAS = "CREATE TABLE totals AS SELECT usr, COUNT(*) AS c, SUM(n) AS s FROM clicks GROUP BY usr;"
QUERY = "CTAS_TOTALS_0"
SEED = random.randrange(1 << 30)


class ClusterServer(SqlServer):
    """test_sql_server's server in a directory of its own, of service SERVICE."""

    def __init__(self, broker, directory):
        directory.mkdir()
        # A killed server leaves its queries' groups after 6 s instead of 45.
        super().__init__(broker, directory, {"ksql.service.id": SERVICE,
                                             "ksql.streams.session.timeout.ms": "6000"})

    @property
    def endpoint(self):
        return f"127.0.0.1:{self.port}"

    def post(self, statements, expected_status=200, sequence=None, **properties):
        body = {"ksql": statements, "streamsProperties": properties}
        if sequence is not None:
            body["commandSequenceNumber"] = sequence
        status, _, text = self.request("POST", "/ksql", body)
        assert status == expected_status, text
        return json.loads(text)

    def pull(self, sql):
        """The rows of a pull query on /query-stream, or None for an error (a server away)."""
        status, _, text = self.request("POST", "/query-stream", {"sql": sql, "properties": {}},
                                       accept="application/json")
        if status != 200:
            return None
        body = json.loads(text)
        if any(isinstance(r, dict) for r in body[1:]):
            return None  # ended with an error
        return body[1:]

    def ws_pull(self, sql):
        """The messages of a pull query on /ws/query, read by a minimal WebSocket client: the
        columns, the rows, then the last message; None when the upgrade is refused."""
        query = urllib.parse.urlencode({"request": json.dumps({"ksql": sql}), "version": "1"})
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall((f"GET /ws/query?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                          "Sec-WebSocket-Version: 13\r\n\r\n").encode())
            stream = sock.makefile("rb")
            if b" 101 " not in stream.readline():
                return None
            while stream.readline() not in (b"\r\n", b""):
                pass
            messages = []
            while True:
                first, second = stream.read(2)
                size = second & 0x7F
                if size == 126:
                    size = struct.unpack(">H", stream.read(2))[0]
                elif size == 127:
                    size = struct.unpack(">Q", stream.read(8))[0]
                payload = stream.read(size)
                if first & 0x0F == 0x8:  # Close
                    return messages
                messages.append(json.loads(payload))

    def local_rows(self, sql):
        """A pull query marked as forwarded by another server: this server's partitions only."""
        status, _, text = self.request("POST", "/query", {
            "ksql": sql, "requestProperties": {"request.ksql.internal.request": True}})
        assert status == 200, text
        return [r["row"]["columns"] for r in json.loads(text) if "row" in r]

    def kill(self):
        self.proc.kill()
        self.proc.wait(30)


@pytest.fixture
def cluster(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    servers = [ClusterServer(broker, tmp_path / "a"), ClusterServer(broker, tmp_path / "b")]
    for s in servers:
        s.broker = broker
    yield servers
    for s in servers:
        if s.proc.poll() is None:
            s.stop()


def model_of(records):
    totals = {}
    for usr, n in records:
        c, s = totals.get(usr, (0, 0))
        totals[usr] = (c + 1, s + n)
    return totals


def sink(bootstrap):
    """The table's topic: each key's latest (c, s), over its 4 partitions."""
    got = ck.consume_partitions(bootstrap, [("TOTALS", p, 0) for p in range(4)], timeout=30,
                                **{"enable.partition.eof": True})
    latest = {}
    for messages in got.values():
        for m in messages:
            value = json.loads(m.value())
            latest[m.key().decode()] = (value["C"], value["S"])
    return latest


def sum_by_key(rows):
    """A windowed count's rows (key, window start, window end, count) added up per key."""
    out = {}
    for row in rows:
        out[row[0]] = out.get(row[0], 0) + row[-1]
    return out


def parts(server):
    """Per server (host:port) of the cluster status, the query's active partitions."""
    status, _, text = server.request("GET", "/clusterStatus")
    assert status == 200, text
    return {host: sorted((p["topic"], p["partition"])
                         for p in entry["activeStandbyPerQuery"].get(QUERY, {}).get("activePartitions", []))
            for host, entry in json.loads(text)["clusterStatus"].items()}


def answers_all(server, model):
    """Whether the scan and every key's lookup asked of `server` give the model's rows."""
    scan = server.pull("SELECT * FROM totals;")
    if scan is None or {r[0]: (r[1], r[2]) for r in scan} != model:
        return False
    for usr, expected in model.items():
        rows = server.pull(f"SELECT * FROM totals WHERE usr = '{usr}';")
        if rows != [[usr, *expected]]:
            return False
    limited = server.pull("SELECT * FROM totals LIMIT 5;")
    return limited is not None and len(limited) == 5


def test_two_servers_share_statements_work_and_pull_queries(cluster):
    a, b = cluster
    bootstrap = a.broker.bootstrap

    # A statement written on A: B executes it from the command topic, without a restart.
    [created] = a.post(CREATE)
    ck.wait_for_topic(bootstrap, "clicks", 4)
    streams = b.post("SHOW STREAMS;", sequence=created["commandSequenceNumber"])[0]["streams"]
    assert "CLICKS" in [s["name"] for s in streams]
    [ctas] = a.post(CTAS, **{"auto.offset.reset": "earliest"})
    assert ctas["commandStatus"]["queryId"] == QUERY
    # Followed without any sequence number too.
    wait_until(lambda: [q["id"] for q in b.post("SHOW QUERIES;")[0]["queries"]] == [QUERY], 30,
               message="B running A's query")
    # And the other way: B's statement on A, its sequence number after A's.
    [other] = b.post("CREATE STREAM other (id INT KEY) WITH (kafka_topic='other', value_format='JSON', "
                     "partitions=1);")
    assert other["commandSequenceNumber"] > ctas["commandSequenceNumber"]
    tables = a.post("SHOW STREAMS; SHOW TABLES;", sequence=other["commandSequenceNumber"])
    assert "OTHER" in [s["name"] for s in tables[0]["streams"]]
    assert [t["name"] for t in tables[1]["tables"]] == ["TOTALS"]
    # A windowed table too, whose rows carry their window's bounds when forwarded.
    a.post("CREATE TABLE hourly AS SELECT usr, COUNT(*) AS c FROM clicks WINDOW TUMBLING (SIZE 1 HOUR) "
           "GROUP BY usr;", **{"auto.offset.reset": "earliest"})
    # A sequence number not written yet: ksqlDB's 503 after the response timeout.
    late = a.post("SHOW STREAMS;", 503, sequence=10_000)
    assert late["error_code"] == 50301

    # Both run the query: its group spreads the 4 partitions over the two servers.
    def shared():
        p = parts(a)
        return (set(p) == {a.endpoint, b.endpoint} and all(p.values())
                and sorted(sum(p.values(), [])) == [("clicks", i) for i in range(4)])
    wait_until(shared, 60, interval=0.2, message="each server with part of the query's partitions")
    assert set(parts(b)) == {a.endpoint, b.endpoint}

    rng = random.Random(SEED)
    records = [(f"u{rng.randrange(40)}", rng.randrange(100)) for _ in range(400)]
    producer = ck.producer(bootstrap)
    for usr, n in records:
        producer.produce("clicks", key=usr, value=json.dumps({"N": n}))
    assert producer.flush(30) == 0
    model = model_of(records)
    wait_until(lambda: sink(bootstrap) == model, 60, interval=0.5,
               message=f"the sink equal to the model (seed {SEED})")

    # Either server answers for every key: what the other holds is forwarded to it.
    wait_until(lambda: answers_all(a, model), 30, interval=0.2, message=f"A's answers (seed {SEED})")
    wait_until(lambda: answers_all(b, model), 30, interval=0.2, message=f"B's answers (seed {SEED})")
    def hourly(server):
        rows = server.pull("SELECT * FROM hourly;")
        return None if rows is None else sorted(map(tuple, rows))
    counts = {usr: c for usr, (c, _) in model.items()}
    wait_until(lambda: hourly(a) is not None and sum_by_key(hourly(a)) == counts, 30, interval=0.2,
               message="A's scan of the windowed table")
    assert hourly(b) == hourly(a)
    # /ws/query's pull queries are forwarded as well.
    for server in (a, b):
        messages = server.ws_pull("SELECT * FROM totals;")
        rows = [m["row"]["columns"] for m in messages[1:] if "row" in m]
        assert {r[0]: (r[1], r[2]) for r in rows} == model and messages[-1] == {"error": "done"}, messages
    # Each holds only part of the table: without forwarding, neither would have all of it.
    here, there = a.local_rows("SELECT * FROM totals;"), b.local_rows("SELECT * FROM totals;")
    assert here and there and len(here) + len(there) == len(model)
    assert {r[0]: (r[1], r[2]) for r in here + there} == model

    # B killed: once its session ends, A holds every partition and answers alone.
    b.kill()
    wait_until(lambda: parts(a) == {a.endpoint: [("clicks", i) for i in range(4)]}, 90, interval=0.5,
               message="A holding every partition")
    more = [(f"u{rng.randrange(50)}", rng.randrange(100)) for _ in range(100)]
    for usr, n in more:
        producer.produce("clicks", key=usr, value=json.dumps({"N": n}))
    assert producer.flush(30) == 0
    model = model_of(records + more)
    wait_until(lambda: answers_all(a, model), 60, interval=0.5, message=f"A's answers alone (seed {SEED})")
    assert sink(bootstrap) == model


def test_statements_written_at_once_on_both_servers_come_out_the_same_on_each(cluster):
    a, b = cluster
    a.post(CREATE)
    ck.wait_for_topic(a.broker.bootstrap, "clicks", 4)
    answers = {}

    def write(server, names):
        for name in names:
            status, _, text = server.request("POST", "/ksql", {
                "ksql": f"CREATE STREAM {name} AS SELECT * FROM clicks WHERE n > {len(name)};"})
            answers[(server.port, name)] = (status, json.loads(text))

    # Each writes its own and, at the same time, one the other writes too.
    threads = [threading.Thread(target=write, args=(a, ["a0", "a1", "dup", "a2"])),
               threading.Thread(target=write, args=(b, ["b0", "dup", "b1", "b2"]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(answers) == 8
    # A server beginning its transaction fences the other's (ksqlDB's transactional producer): a
    # statement whose write was fenced is refused with 500 and takes effect nowhere. Of the two
    # DUPs, at most one is accepted; the other is refused by the engine (400) or fenced.
    for (_, name), (status, body) in answers.items():
        assert status == 200 or (status == 500 and "command topic" in body["message"]) or (
            name == "dup" and status == 400), answers
    dups = [status for (_, name), (status, _) in answers.items() if name == "dup"]
    assert dups.count(200) <= 1, answers
    accepted = sorted(name.upper() for (_, name), (status, _) in answers.items() if status == 200)
    assert accepted, answers

    def listing(server):
        return sorted((q["id"], tuple(q["sinks"])) for q in server.post("SHOW QUERIES;")[0]["queries"])
    wait_until(lambda: sorted(q[1][0] for q in listing(a)) == accepted and listing(a) == listing(b), 60,
               message="both servers with the accepted queries under the same ids")
    # Each id as its server's answer gave it.
    ids = {q[1][0]: q[0] for q in listing(a)}
    for (_, name), (status, body) in answers.items():
        if status == 200:
            assert ids[name.upper()] == body[0]["commandStatus"]["queryId"]


def test_a_transaction_left_open_is_aborted_by_a_starting_server(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    topic = f"_confluent-ksql-{SERVICE}_command_topic"
    ck.create_topic(broker.bootstrap, topic, 1, {"retention.ms": "-1"})
    # A server killed between writing its statement and committing: its transaction stays open
    # for a minute (the producer's transaction timeout), holding back what comes after it.
    ghost = ck.producer(broker.bootstrap, **{"transactional.id": SERVICE, "enable.idempotence": True})
    ghost.init_transactions(10)
    ghost.begin_transaction()
    ghost.produce(topic, key=json.dumps("stream/`GHOST`/create"), value=json.dumps({
        "statement": "CREATE STREAM ghost (x INT) WITH (kafka_topic='ghost', value_format='JSON', "
                     "partitions=1);", "streamsProperties": {}, "originalProperties": {}}))
    assert ghost.flush(10) == 0
    started = time.monotonic()
    server = ClusterServer(broker, tmp_path / "a")
    try:
        assert time.monotonic() - started < 20
        # Aborted at once by the starting server: its statement never takes effect.
        assert "GHOST" not in [s["name"] for s in server.post("SHOW STREAMS;")[0]["streams"]]
        with pytest.raises(KafkaException):
            ghost.commit_transaction(10)
    finally:
        server.stop()
