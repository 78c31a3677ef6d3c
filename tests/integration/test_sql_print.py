"""SHOW TOPICS and PRINT end to end: `oxbow sql run` against a real broker, the topics made and fed
with confluent-kafka, the output compared line by line with what ksqlDB prints; and PRINT on the
SQL server's POST /query, its lines streamed in a chunked response.
"""

import http.client
import io
import json
import signal
import struct
import subprocess

import avro.io
import avro.schema
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

import ck_helpers as ck
from harness import OXBOW_BIN, track, wait_until
from test_registry import Registry
from test_sql_server import server  # noqa: F401 - the fixture: a broker and a SQL server

BASE = 1_700_000_000_000  # 2023/11/14 22:13:20.000 Z


class SqlRun:
    def __init__(self, broker, tmp_path, statements, name="sql", args=()):
        self.file = tmp_path / f"{name}.sql"
        self.file.write_text(statements)
        self.log = tmp_path / f"{name}.log"
        cmd = [OXBOW_BIN, "sql", "run", str(self.file), "-b", broker.bootstrap,
               "--state-dir", str(tmp_path / "state"), *args]
        with open(self.log, "ab") as log:
            self.proc = track(subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))

    def text(self):
        return self.log.read_text(errors="replace")

    def wait_for(self, condition, message):
        wait_until(lambda: condition(self.text()) or self.proc.poll() is not None, 60, message=message)
        assert condition(self.text()), self.text()[-3000:]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(60) == 0, self.text()[-3000:]


def tables(text):
    """Each table printed (a header line, a rule, rows, a rule) as rows of cells, header first."""
    out, rows, previous = [], None, None
    for line in text.splitlines():
        if line and set(line) == {"-"}:
            if rows is None:
                rows = [previous]
            else:
                out.append([[cell.strip() for cell in row.split("|")] for row in rows])
                rows = None
        elif rows is not None:
            rows.append(line)
        previous = line
    return out


def test_show_topics_hides_internal_topics_and_counts_consumers(broker, tmp_path):
    for topic, partitions in [("orders", 3), ("_confluent-ksql-default__command_topic", 1),
                              ("_schemas", 1), ("clicks", 1)]:
        ck.create_topic(broker.bootstrap, topic, partitions)
    member = ck.consumer(broker.bootstrap, **{"group.id": "order-readers", "auto.offset.reset": "earliest"})
    member.subscribe(["orders"])
    try:
        def assigned():
            member.poll(0.1)
            return len(member.assignment()) == 3
        wait_until(assigned, 30, message="the group's member assigned orders' partitions")

        run = SqlRun(broker, tmp_path, "SHOW TOPICS;\nLIST ALL TOPICS;\nSHOW TOPICS EXTENDED;\n")
        run.wait_for(lambda t: len(tables(t)) == 3, "three topic tables")
        shown, everything, extended = tables(run.text())
    finally:
        member.close()
    run.stop()
    header = ["Kafka Topic", "Partitions", "Partition Replicas"]
    assert shown == [header, ["clicks", "1", "1"], ["orders", "3", "1"]]
    assert everything == [header, ["_confluent-ksql-default__command_topic", "1", "1"],
                          ["_schemas", "1", "1"], ["clicks", "1", "1"], ["orders", "3", "1"]]
    # One consumer per assigned partition, as ksqlDB counts them.
    assert extended == [header + ["Consumers", "ConsumerGroups"],
                        ["clicks", "1", "1", "0", "0"], ["orders", "3", "1", "3", "1"]]


def _produce_prints(bootstrap):
    ck.create_topic(bootstrap, "prints", 2)
    p = ck.producer(bootstrap)
    for key, value, offset in [(b"1", b'{"a":1}', 0), (b"2", b'{"a":2}', 1), (None, b'{"a":3}', 2)]:
        p.produce("prints", key=key, value=value, partition=0, timestamp=BASE + offset)
    assert p.flush(30) == 0


def _line(key, value, millis):
    return f"rowtime: 2023/11/14 22:13:20.{millis:03d} Z, key: {key}, value: {value}, partition: 0"


def test_print_from_beginning_with_limit_interval_and_to_the_end(broker, tmp_path):
    _produce_prints(broker.bootstrap)
    run = SqlRun(broker, tmp_path, "PRINT 'prints' FROM BEGINNING LIMIT 2;\n"
                                   "PRINT prints FROM BEGINNING INTERVAL 2;\n"
                                   "SHOW TOPICS;\n")
    # The table comes once every statement has run: the PRINT without LIMIT ended at the end
    # of the topic's records (its second partition empty).
    run.wait_for(lambda t: len(tables(t)) == 1, "both PRINTs done and the topic table")
    run.stop()
    formats = ["Key format: JSON or KAFKA_STRING", "Value format: JSON or KAFKA_STRING"]
    printed = [line for line in run.text().splitlines()
               if line.startswith(("Key format", "Value format", "rowtime"))]
    assert printed == (formats + [_line(1, '{"a":1}', 0), _line(2, '{"a":2}', 1)]
                       + formats + [_line(1, '{"a":1}', 0), _line("<null>", '{"a":3}', 2)])


def test_print_of_a_missing_topic_fails_with_ksqldbs_suggestion(broker, tmp_path):
    _produce_prints(broker.bootstrap)
    run = SqlRun(broker, tmp_path, "PRINT Prints FROM BEGINNING LIMIT 1;\n")
    assert run.proc.wait(60) == 1, run.text()[-3000:]
    assert ("Could not find topic 'Prints', or the KSQL user does not have permissions to list the "
            "topic. Topic names are case-sensitive.\nDid you mean:\n\tprint prints;") in run.text()


ORDER = {"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"},
                                                       {"name": "item", "type": "string"}]}


def test_print_recognises_avro_through_the_registry(broker, tmp_path):
    registry = Registry(broker, tmp_path).start()
    try:
        schema_id = SchemaRegistryClient({"url": registry.url}).register_schema(
            "orders-value", Schema(json.dumps(ORDER), "AVRO"))
        out = io.BytesIO()
        avro.io.DatumWriter(avro.schema.parse(json.dumps(ORDER))).write(
            {"id": 7, "item": "tea/2"}, avro.io.BinaryEncoder(out))
        ck.create_topic(broker.bootstrap, "orders", 1)
        p = ck.producer(broker.bootstrap)
        p.produce("orders", key=b"k1", value=b"\0" + struct.pack(">I", schema_id) + out.getvalue(),
                  timestamp=BASE)
        assert p.flush(30) == 0
        run = SqlRun(broker, tmp_path, "PRINT orders FROM BEGINNING LIMIT 1;\n",
                     args=("--registry-url", registry.url))
        run.wait_for(lambda t: "rowtime" in t, "the record printed")
        run.stop()
    finally:
        registry.stop()
    printed = [line for line in run.text().splitlines()
               if line.startswith(("Key format", "Value format", "rowtime"))]
    assert printed == ["Key format: KAFKA_STRING", "Value format: AVRO or KAFKA_STRING",
                       _line("k1", '{"id": 7, "item": "tea/2"}', 0)]


def _print_over_query(server, statement):
    """(status, content type, transfer encoding, lines) of `statement` on /query over HTTP/1.1."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", "/query", body=json.dumps({"ksql": statement, "streamsProperties": {}}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    text = r.read().decode()  # the LIMIT ends the response
    conn.close()
    return r.status, r.getheader("Content-Type"), r.getheader("Transfer-Encoding"), text


def test_print_on_the_servers_query_endpoint(server):  # noqa: F811 - the fixture
    ck.create_topic(server.broker.bootstrap, "words", 1)
    p = ck.producer(server.broker.bootstrap)
    for offset, (key, value) in enumerate([(b"k1", b'{"a":1}'), (b"k2", b'{"a":2}'), (None, b'[3]')]):
        p.produce("words", key=key, value=value, partition=0, timestamp=BASE + offset)
    assert p.flush(30) == 0

    status, content_type, encoding, text = _print_over_query(server, "PRINT 'words' FROM BEGINNING LIMIT 3;")
    assert (status, content_type, encoding) == (200, "application/json", "chunked"), text
    # Each line ends with a newline; an empty line now and then keeps a quiet connection alive.
    assert [line for line in text.split("\n") if line] == [
        "Key format: KAFKA_STRING", "Value format: JSON or KAFKA_STRING",
        _line("k1", '{"a":1}', 0), _line("k2", '{"a":2}', 1), _line("<null>", "[3]", 2)], text
    assert text.endswith("\n"), text

    # INTERVAL: every second record.
    _, _, _, text = _print_over_query(server, "PRINT words FROM BEGINNING INTERVAL 2 LIMIT 2;")
    assert [line for line in text.split("\n") if line][2:] == [_line("k1", '{"a":1}', 0),
                                                               _line("<null>", "[3]", 2)], text

    # Without FROM BEGINNING, only what comes after: the response's head comes with the first
    # empty line (a second without records), by which time the reading starts at the topic's end.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", "/query", body=json.dumps({"ksql": "PRINT words LIMIT 1;"}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200
    p.produce("words", key=b"k4", value=b'{"a":4}', partition=0, timestamp=BASE + 3)
    assert p.flush(30) == 0
    text = r.read().decode()
    conn.close()
    assert [line for line in text.split("\n") if line] == [
        "Key format: KAFKA_STRING", "Value format: JSON or KAFKA_STRING", _line("k4", '{"a":4}', 3)], text

    # ksqlDB's refusal, before any line: a 400 generic_error naming the topics of another case.
    status, _, text = server.request("POST", "/query", {"ksql": "PRINT Words FROM BEGINNING;"})
    assert (status, json.loads(text)) == (400, {
        "@type": "generic_error", "error_code": 40000,
        "message": "Could not find topic 'Words', or the KSQL user does not have permissions to list "
                   "the topic. Topic names are case-sensitive.\nDid you mean:\n\tprint words;"}), text

    # A PRINT without LIMIT runs until the client leaves or the server stops, which ends it.
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", "/query", body=json.dumps({"ksql": "PRINT words FROM BEGINNING;"}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.readline().decode().startswith("Key format: "), server.tail()
    server.stop()
    conn.close()
