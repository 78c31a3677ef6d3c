"""`oxbow sql-server`'s pull queries (issue 43): a SELECT without EMIT on /query-stream and /query,
answered from the store of the persistent query that materialises the table, against a real broker.

Randomized records go into a stream; aggregate tables (by a STRING key, by a BIGINT key with
negative values, and per tumbling window) are made by CREATE TABLE ... AS SELECT ... GROUP BY, and
a small model in this file computes what they must hold; so are two tables without GROUP BY (a
filter and projection of a source table, and of an aggregate table). Each test polls until a full scan equals
the model, then checks key lookups, key ranges and their edges, scans with WHERE, projections,
LIMIT, WINDOWSTART bounds, the response shapes, pull queries on streams (a scan of the topic)
and ksqlDB's refusals.
"""

import json
import os
import random
import subprocess
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest

import ck_helpers as ck
from harness import wait_until
from test_sql_server import SqlServer

SEED = int(os.environ.get("PULL_QUERY_SEED", random.randrange(1 << 30)))  # printed by the test
WINDOW_MS = 10_000
BASE_MS = 1_700_000_000_000 - 1_700_000_000_000 % WINDOW_MS

SETUP = """
CREATE STREAM events (user STRING KEY, n INT) WITH (kafka_topic='events', value_format='JSON', partitions=3);
CREATE STREAM nums (id BIGINT KEY, v INT) WITH (kafka_topic='nums', value_format='JSON', partitions=2);
CREATE TABLE users (id STRING PRIMARY KEY, name STRING) WITH (kafka_topic='users', value_format='JSON', partitions=1);
CREATE TABLE totals AS SELECT user, COUNT(*) AS cnt, SUM(n) AS total FROM events GROUP BY user;
CREATE TABLE by_id AS SELECT id, COUNT(*) AS c, MAX(v) AS top FROM nums GROUP BY id HAVING COUNT(*) > 1;
CREATE TABLE per_window AS SELECT user, COUNT(*) AS c FROM events WINDOW TUMBLING (SIZE 10 SECONDS) GROUP BY user;
CREATE TABLE per_session AS SELECT user, COUNT(*) AS c FROM events WINDOW SESSION (20 SECONDS) GROUP BY user;
CREATE TABLE named AS SELECT id, UCASE(name) AS upper FROM users WHERE name <> 'x';
CREATE TABLE busy AS SELECT user, total FROM totals WHERE cnt > 20;
"""


class Model:
    """What the tables must hold, computed from the records produced."""

    def __init__(self, rng):
        self.events = [(f"u{rng.randrange(20):02d}", rng.randrange(-50, 51), BASE_MS + rng.randrange(60_000))
                       for _ in range(400)]
        self.nums = [(rng.randrange(-8, 9), rng.randrange(1000)) for _ in range(200)]
        # A table's updates: names, 'x' (filtered out by NAMED) and deletes (None).
        self.users = [(f"a{rng.randrange(12):02d}", rng.choice(["ann", "bo", "x", None, "cy"]))
                      for _ in range(60)]

    def totals(self):
        out = defaultdict(lambda: [0, 0])
        for user, n, _ in self.events:
            out[user][0] += 1
            out[user][1] += n
        return {user: (c, s) for user, (c, s) in out.items()}

    def by_id(self):
        out = defaultdict(list)
        for key, v in self.nums:
            out[key].append(v)
        return {key: (len(vs), max(vs)) for key, vs in out.items() if len(vs) > 1}

    def named(self):
        table = {}
        for key, name in self.users:
            table[key] = name
        return {key: name.upper() for key, name in table.items() if name is not None and name != "x"}

    def busy(self):
        return {user: s for user, (c, s) in self.totals().items() if c > 20}

    def per_window(self):
        out = defaultdict(int)
        for user, _, ts in self.events:
            out[(user, ts - ts % WINDOW_MS)] += 1
        return dict(out)


@pytest.fixture
def setup(make_broker, tmp_path):
    broker = make_broker({"group.initial.rebalance.delay.ms": "0"})
    server = SqlServer(broker, tmp_path)
    server.broker = broker
    server.ksql(SETUP, **{"ksql.streams.auto.offset.reset": "earliest"})
    model = Model(random.Random(SEED))
    producer = ck.producer(broker.bootstrap)
    for user, n, ts in model.events:
        producer.produce("events", key=user, value=json.dumps({"N": n}), timestamp=ts)
    for key, v in model.nums:
        producer.produce("nums", key=key.to_bytes(8, "big", signed=True), value=json.dumps({"V": v}))
    for key, name in model.users:
        producer.produce("users", key=key, value=None if name is None else json.dumps({"NAME": name}))
    producer.flush(30)
    yield server, model
    if server.proc.poll() is None:
        server.stop()


def pull(server, sql):
    """(header, rows) of a pull query on /query-stream (HTTP/1.1, JSON); fails on an error."""
    status, content_type, text = server.request("POST", "/query-stream", {"sql": sql, "properties": {}},
                                                accept="application/json")
    assert status == 200, (sql, text)
    body = json.loads(text)
    return body[0], body[1:]


def refusal(server, sql, path="/query-stream"):
    key = "sql" if path == "/query-stream" else "ksql"
    status, _, text = server.request("POST", path, {key: sql})
    assert status == 400, (sql, text)
    return json.loads(text)


def rows_of(server, sql):
    return pull(server, sql)[1]


def caught_up(server, model):
    """Polls until every table's scan equals the model (the queries have processed everything)."""
    wait_until(lambda: {r[0]: (r[1], r[2]) for r in rows_of(server, "SELECT * FROM totals;")} == model.totals(),
               60, interval=0.2, message=f"TOTALS equal to the model (seed {SEED})")
    wait_until(lambda: {r[0]: (r[1], r[2]) for r in rows_of(server, "SELECT * FROM by_id;")} == model.by_id(),
               60, interval=0.2, message=f"BY_ID equal to the model (seed {SEED})")
    wait_until(lambda: sum(r[3] for r in rows_of(server, "SELECT * FROM per_session;")) == len(model.events),
               60, interval=0.2, message=f"PER_SESSION counting every event (seed {SEED})")
    wait_until(lambda: {(r[0], r[1]): r[2] for r in rows_of(
        server, "SELECT user, WINDOWSTART AS ws, c FROM per_window;")} == model.per_window(),
               60, interval=0.2, message=f"PER_WINDOW equal to the model (seed {SEED})")


@pytest.fixture
def ready(setup):
    server, model = setup
    caught_up(server, model)
    return server, model


def check_header_and_shapes(server, model):
    header, rows = pull(server, "SELECT * FROM totals WHERE user = 'u03';")
    assert header["queryId"].startswith("query_")
    assert header["columnNames"] == ["USER", "CNT", "TOTAL"]
    assert header["columnTypes"] == ["STRING", "BIGINT", "INTEGER"]
    expected = [["u03", *model.totals()["u03"]]] if "u03" in model.totals() else []
    assert rows == expected

    # ROWTIME, selected as it is (a transient query may), is the row's last update.
    rows = rows_of(server, "SELECT user, ROWTIME FROM totals WHERE user = 'u03';")
    assert all(BASE_MS <= ts < BASE_MS + 60_000 for _, ts in rows), rows

    # /query: the chunked array of header and rows, the schema with its KEY, no finalMessage.
    status, _, text = server.request("POST", "/query", {"ksql": "SELECT * FROM totals WHERE user = 'u03';"})
    assert status == 200, text
    body = json.loads(text)
    assert body[0]["header"]["schema"] == "`USER` STRING KEY, `CNT` BIGINT, `TOTAL` INTEGER"
    assert body[0]["header"]["queryId"].startswith("query_")
    assert [r["row"]["columns"] for r in body[1:]] == expected

    # /query-stream over HTTP/2, delimited: the header line, then a line per row.
    done = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--data",
                           json.dumps({"sql": "SELECT user, cnt FROM totals WHERE user IN ('u01', 'u02');"}),
                           f"http://127.0.0.1:{server.port}/query-stream"], capture_output=True, text=True,
                          timeout=30)
    lines = done.stdout.splitlines()
    assert json.loads(lines[0])["columnNames"] == ["USER", "CNT"], done.stdout
    totals = model.totals()
    assert sorted(json.loads(line) for line in lines[1:]) == sorted(
        [u, totals[u][0]] for u in ("u01", "u02") if u in totals)


def check_key_lookups(server, model):
    totals = model.totals()
    for user in ("u00", "u07", "u19", "nobody"):
        expected = [[user, *totals[user]]] if user in totals else []
        assert rows_of(server, f"SELECT * FROM totals WHERE user = '{user}';") == expected
    rows = rows_of(server, "SELECT * FROM totals WHERE user IN ('u04', 'u11', 'nobody', 'u04');")
    assert sorted(map(tuple, rows)) == sorted((u, *totals[u]) for u in {"u04", "u11"} if u in totals)
    by_id = model.by_id()
    for key in (-8, -1, 0, 3, 8, 42):
        expected = [[key, *by_id[key]]] if key in by_id else []
        assert rows_of(server, f"SELECT * FROM by_id WHERE id = {key};") == expected


STRING_RANGES = [
    ("user >= 'u05' AND user < 'u10'", lambda u: "u05" <= u < "u10"),
    ("user > 'u05' AND user <= 'u10'", lambda u: "u05" < u <= "u10"),
    ("user < 'u03'", lambda u: u < "u03"),
    ("user >= 'u17'", lambda u: u >= "u17"),
    ("user BETWEEN 'u08' AND 'u08'", lambda u: u == "u08"),
    ("user > 'u10' AND user < 'u05'", lambda u: False),
]
SIGNED_RANGES = [
    ("id BETWEEN -3 AND 4", lambda k: -3 <= k <= 4),
    ("id < 0", lambda k: k < 0),
    ("id >= 0", lambda k: k >= 0),
    ("id > -2 AND id < 2", lambda k: -2 < k < 2),
    ("id > 5", lambda k: k > 5),
]


def check_key_ranges(server, model):
    for where, keep in STRING_RANGES:
        rows = rows_of(server, f"SELECT * FROM totals WHERE {where};")
        assert sorted(map(tuple, rows)) == sorted((u, *v) for u, v in model.totals().items() if keep(u)), where
    for where, keep in SIGNED_RANGES:
        rows = rows_of(server, f"SELECT * FROM by_id WHERE {where};")
        assert sorted(map(tuple, rows)) == sorted((k, *v) for k, v in model.by_id().items() if keep(k)), where


def check_scans_with_where_projection_and_limit(server, model):
    totals = model.totals()
    rows = rows_of(server, "SELECT user, total * 2 AS doubled FROM totals WHERE total > 0 AND cnt >= 2;")
    assert sorted(map(tuple, rows)) == sorted((u, 2 * s) for u, (c, s) in totals.items() if s > 0 and c >= 2)
    rows = rows_of(server, "SELECT * FROM totals LIMIT 3;")
    assert len(rows) == min(3, len(totals))
    assert all(totals[u] == (c, s) for u, c, s in rows)
    assert rows_of(server, "SELECT * FROM totals LIMIT 0;") == []
    # A WHERE the key range does not serve (OR) still filters.
    rows = rows_of(server, "SELECT user FROM totals WHERE user = 'u01' OR user = 'u02';")
    assert sorted(r[0] for r in rows) == sorted(u for u in ("u01", "u02") if u in totals)


def check_windowed_table_with_window_bounds(server, model):
    windows = model.per_window()
    lo, hi = BASE_MS + 2 * WINDOW_MS, BASE_MS + 4 * WINDOW_MS
    # `*` names the window's bounds after the key, as ksqlDB's pull queries do.
    header, rows = pull(server, f"SELECT * FROM per_window "
                                f"WHERE user = 'u05' AND WINDOWSTART >= {lo} AND WINDOWSTART < {hi};")
    assert header["columnNames"] == ["USER", "WINDOWSTART", "WINDOWEND", "C"]
    assert sorted(map(tuple, rows)) == sorted(
        (u, s, s + WINDOW_MS, c) for (u, s), c in windows.items() if u == "u05" and lo <= s < hi)
    rows = rows_of(server, f"SELECT user, WINDOWSTART, c FROM per_window WHERE WINDOWSTART = {lo};")
    assert sorted(map(tuple, rows)) == sorted((u, s, c) for (u, s), c in windows.items() if s == lo)
    rows = rows_of(server, f"SELECT user, WINDOWSTART AS ws, c FROM per_window "
                           f"WHERE user >= 'u10' AND WINDOWEND <= {hi};")
    assert sorted(map(tuple, rows)) == sorted(
        (u, s, c) for (u, s), c in windows.items() if u >= "u10" and s + WINDOW_MS <= hi)


def check_session_windows(server, model):
    """Sessions: every user's sessions add up to its count, lookups and ranges agree with the scan."""
    totals = model.totals()
    scan = rows_of(server, "SELECT * FROM per_session;")
    counts = defaultdict(int)
    for user, start, end, c in scan:
        assert start <= end, scan
        counts[user] += c
    assert dict(counts) == {u: c for u, (c, _) in totals.items()}
    by_user = lambda rows: sorted(map(tuple, rows))  # noqa: E731
    assert by_user(rows_of(server, "SELECT * FROM per_session WHERE user = 'u02';")) == by_user(
        r for r in scan if r[0] == "u02")
    assert by_user(rows_of(server, "SELECT * FROM per_session WHERE user >= 'u10';")) == by_user(
        r for r in scan if r[0] >= "u10")
    first = min(r[1] for r in scan)
    assert by_user(rows_of(server, f"SELECT * FROM per_session WHERE WINDOWSTART > {first};")) == by_user(
        r for r in scan if r[1] > first)


def check_concurrent_pull_queries(server, model):
    totals = model.totals()

    def one(i):
        user = f"u{i % 20:02d}"
        return rows_of(server, f"SELECT * FROM totals WHERE user = '{user}';"), user

    with ThreadPoolExecutor(16) as pool:
        for rows, user in pool.map(one, range(200)):
            assert rows == ([[user, *totals[user]]] if user in totals else [])


def check_stream_scans(server, model):
    """A stream's pull query reads its topic to the end it has now, WHERE and projection applied."""
    rows = rows_of(server, "SELECT * FROM events WHERE n > 0;")
    assert sorted(map(tuple, rows)) == sorted((u, n) for u, n, _ in model.events if n > 0)
    mid = BASE_MS + 30_000
    rows = rows_of(server, f"SELECT user, n * 10 AS n10 FROM events WHERE ROWTIME >= {mid};")
    assert sorted(map(tuple, rows)) == sorted((u, 10 * n) for u, n, ts in model.events if ts >= mid)
    assert len(rows_of(server, "SELECT * FROM events LIMIT 7;")) == 7
    rows = rows_of(server, "SELECT id, v FROM nums WHERE id < 0;")
    assert sorted(map(tuple, rows)) == sorted((k, v) for k, v in model.nums if k < 0)


def check_tables_without_group_by(server, model):
    """A table's filter and projection, over a source table and over an aggregate table, serve pull
    queries from the store of their result (ksqlDB serves them through its source's store)."""
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM named;")} == model.named(),
               60, interval=0.2, message=f"NAMED equal to the model (seed {SEED})")
    wait_until(lambda: {r[0]: r[1] for r in rows_of(server, "SELECT * FROM busy;")} == model.busy(),
               60, interval=0.2, message=f"BUSY equal to the model (seed {SEED})")
    named = model.named()
    for key in ("a00", "a05", "a11", "nobody"):
        expected = [[key, named[key]]] if key in named else []
        assert rows_of(server, f"SELECT * FROM named WHERE id = '{key}';") == expected
    rows = rows_of(server, "SELECT upper FROM named WHERE id >= 'a03' AND id < 'a08';")
    assert sorted(r[0] for r in rows) == sorted(v for k, v in named.items() if "a03" <= k < "a08")


def check_ksqldbs_refusals(server, model):
    body = refusal(server, "SELECT * FROM users WHERE id = 'a';")
    assert (body["@type"], body["error_code"]) == ("generic_error", 40001)
    assert body["message"].startswith(
        "The `USERS` table isn't queryable. To derive a queryable table, you can do "
        "'CREATE TABLE QUERYABLE_USERS AS SELECT * FROM USERS'. See https://cnfl.io/queries"), body
    assert body["message"].endswith("Add EMIT CHANGES if you intended to issue a push query."), body

    body = refusal(server, "SELECT user, COUNT(*) FROM events GROUP BY user;", path="/query")
    assert (body["@type"], body["error_code"]) == ("statement_error", 40001)
    assert body["message"].startswith("Pull queries don't support GROUP BY clauses."), body
    assert body["statementText"] == "SELECT user, COUNT(*) FROM events GROUP BY user;"

    assert "ROWOFFSET" in refusal(server, "SELECT * FROM totals WHERE ROWOFFSET > 3;")["message"]
    assert "NOWHERE" in refusal(server, "SELECT * FROM nowhere;")["message"].upper()
    # The server goes on answering.
    assert rows_of(server, "SELECT * FROM totals LIMIT 1;")


def test_pull_queries_answer_from_the_tables_stores(ready):
    """Every form against the model: if one breaks, this fails (a scan equal to the model first)."""
    server, model = ready
    print(f"PULL_QUERY_SEED={SEED}")  # shown when the test fails: rerun with it
    check_header_and_shapes(server, model)
    check_key_lookups(server, model)
    check_key_ranges(server, model)
    check_scans_with_where_projection_and_limit(server, model)
    check_windowed_table_with_window_bounds(server, model)
    check_session_windows(server, model)
    check_concurrent_pull_queries(server, model)
    check_stream_scans(server, model)
    check_tables_without_group_by(server, model)
    check_ksqldbs_refusals(server, model)
