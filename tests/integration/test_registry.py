"""`oxbow registry` against the real broker, driven by Confluent's own Python client
(python3-confluent-kafka's SchemaRegistryClient) and by plain HTTP for the literal error texts.

The registry keeps its state in the broker's `_schemas` topic: a restart, or a kill -9 while
clients register, loses nothing it acknowledged.
"""

import json
import os
import random
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError

from harness import OXBOW_BIN, free_port, track, wait_until


class Registry:
    def __init__(self, broker, tmp_path, port=None, overrides=None):
        self.broker = broker
        self.port = port or free_port()
        self.overrides = overrides or {}
        self.log_path = tmp_path / f"registry-{self.port}.log"
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self):
        log = open(self.log_path, "ab")
        self.proc = track(subprocess.Popen(
            [OXBOW_BIN, "registry",
             "--override", f"listeners=http://127.0.0.1:{self.port}",
             "--override", f"kafkastore.bootstrap.servers=PLAINTEXT://{self.broker.bootstrap}",
             *[arg for k, v in self.overrides.items() for arg in ("--override", f"{k}={v}")]],
            stdout=log, stderr=subprocess.STDOUT))
        wait_until(lambda: http("GET", self.url + "/")[0] == 200, 30, message="the registry answering")
        return self

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=20) == 0, self.tail()

    def tail(self):
        return self.log_path.read_text(errors="replace")[-3000:]

    def is_primary(self):
        """Whether this instance's log says it holds the primary role now."""
        text = self.log_path.read_text(errors="replace")
        return text.rfind("is the primary") > text.rfind("no longer the primary")


class Platform:
    """`oxbow platform` on free ports, its broker's data under tmp_path; `overrides` are the
    broker's."""

    def __init__(self, tmp_path, overrides=None):
        self.kafka_port, self.registry_port, self.sql_port = free_port(), free_port(), free_port()
        self.connect_port = free_port()
        self.log_path = tmp_path / "platform.log"
        self.cmd = [OXBOW_BIN, "platform",
                    "--override", f"listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
                    "--override", f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.kafka_port}",
                    "--override", f"log.dirs={tmp_path / 'data'}",
                    "--override", "admin.listener=",
                    *[arg for k, v in (overrides or {}).items() for arg in ("--override", f"{k}={v}")],
                    "--registry-override", f"listeners=http://127.0.0.1:{self.registry_port}",
                    "--sql-override", f"listeners=http://127.0.0.1:{self.sql_port}",
                    "--sql-override", f"ksql.streams.state.dir={tmp_path / 'sql-state'}",
                    "--connect-override", f"listeners=http://127.0.0.1:{self.connect_port}"]
        self.proc = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.registry_port}"

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.kafka_port}"

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT))
        wait_until(lambda: http("GET", self.url + "/")[0] == 200, 60, message="the platform's registry")
        return self

    def stop(self, timeout=30):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=timeout) == 0, self.tail()

    def tail(self):
        return self.log_path.read_text(errors="replace")[-3000:]


def http(method, url, body=None, content_type="application/vnd.schemaregistry.v1+json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


RECORD = {"type": "record", "name": "Order", "namespace": "shop",
          "fields": [{"name": "id", "type": "long"}, {"name": "item", "type": "string"}]}


def record_with(extra_fields):
    return {**RECORD, "fields": RECORD["fields"] + extra_fields}


@pytest.fixture
def broker(make_broker):
    """The registry elects its primary in a group: without the initial delay it is elected at once."""
    return make_broker({"group.initial.rebalance.delay.ms": "0"})


@pytest.fixture
def registry(broker, tmp_path):
    r = Registry(broker, tmp_path).start()
    yield r
    if r.proc.poll() is None:
        r.stop()


def test_confluents_client_registers_reads_and_checks(registry):
    client = SchemaRegistryClient({"url": registry.url})
    v1 = Schema(json.dumps(RECORD), "AVRO")
    assert client.register_schema("orders-value", v1) == 1
    assert client.register_schema("orders-value", v1) == 1  # the same version again
    assert client.register_schema("other-value", v1) == 1   # the same id elsewhere
    fetched = client.get_schema(1)
    assert json.loads(fetched.schema_str) == RECORD
    latest = client.get_latest_version("orders-value")
    assert (latest.schema_id, latest.version, latest.subject) == (1, 1, "orders-value")
    assert client.lookup_schema("orders-value", v1).version == 1

    # A field with a default is a compatible change; one without is refused with 409.
    v2 = Schema(json.dumps(record_with([{"name": "qty", "type": "int", "default": 1}])), "AVRO")
    bad = Schema(json.dumps(record_with([{"name": "qty", "type": "int"}])), "AVRO")
    assert client.test_compatibility("orders-value", v2) is True
    assert client.test_compatibility("orders-value", bad) is False
    with pytest.raises(SchemaRegistryError) as refused:
        client.register_schema("orders-value", bad)
    assert refused.value.http_status_code == 409
    assert refused.value.error_code == 409
    assert client.register_schema("orders-value", v2) == 2
    assert client.get_versions("orders-value") == [1, 2]
    assert sorted(client.get_subjects()) == ["orders-value", "other-value"]

    assert client.set_compatibility("orders-value", "NONE")["compatibility"] == "NONE"
    assert client.get_compatibility("orders-value") == "NONE"
    assert client.register_schema("orders-value", bad) == 3

    # The client deletes softly, then (permanent) for good.
    assert client.delete_subject("other-value", permanent=True) == [1]
    assert client.get_subjects() == ["orders-value"]
    assert http("GET", registry.url + "/subjects?deleted=true")[1] == '["orders-value"]'
    assert client.get_schema(1).schema_str  # its id still serves orders-value's version 1


def test_errors_are_confluents_literal_json(registry):
    url = registry.url
    assert http("GET", url + "/subjects/nope/versions") == (
        404, '{"error_code":40401,"message":"Subject \'nope\' not found."}')
    assert http("GET", url + "/subjects/nope/versions/0") == (
        422, '{"error_code":42202,"message":"The specified version \'0\' is not a valid version id. '
             'Allowed values are between [1, 2^31-1] and the string \\"latest\\""}')
    assert http("GET", url + "/schemas/ids/42") == (404, '{"error_code":40403,"message":"Schema 42 not found"}')
    status, body = http("POST", url + "/subjects/s/versions", {"schema": '{"type":"record","name":"r"}'})
    assert status == 422 and json.loads(body)["error_code"] == 42201, body
    assert http("POST", url + "/subjects/s/versions", b"{not json")[0] == 400
    assert http("POST", url + "/config", {})[0] == 405
    # Subjects with a slash travel escaped.
    assert http("POST", url + "/subjects/team%2Forders/versions", {"schema": '"string"'}) == (200, '{"id":1}')
    assert http("GET", url + "/subjects") == (200, '["team/orders"]')
    meta = json.loads(http("GET", url + "/v1/metadata/id")[1])
    assert meta["scope"]["clusters"]["kafka-cluster"]  # the broker's cluster id
    assert meta["scope"]["clusters"]["schema-registry-cluster"] == "schema-registry"


def test_state_lives_in_the_topic_across_restarts_and_kill_9(broker, tmp_path):
    registry = Registry(broker, tmp_path).start()
    client = SchemaRegistryClient({"url": registry.url})
    acknowledged = {}
    stop = threading.Event()

    def register():
        i = 0
        while not stop.is_set():
            schema = {"type": "record", "name": f"R{i}", "fields": [{"name": "f", "type": "int"}]}
            try:
                acknowledged[i] = (client.register_schema(f"subject-{i}", Schema(json.dumps(schema), "AVRO")),
                                   schema)
            except Exception:  # noqa: BLE001 - the registry was killed under it
                return
            i += 1

    writer = threading.Thread(target=register, daemon=True)
    writer.start()
    wait_until(lambda: len(acknowledged) >= 20 + random.randint(0, 20), 30, message="registrations")
    registry.kill()
    stop.set()
    writer.join(10)
    assert len(acknowledged) >= 20

    registry = Registry(broker, tmp_path, port=registry.port).start()
    client = SchemaRegistryClient({"url": registry.url})
    for i, (schema_id, schema) in acknowledged.items():
        assert json.loads(client.get_schema(schema_id).schema_str) == schema
        assert client.get_latest_version(f"subject-{i}").schema_id == schema_id
    # Ids go on from the largest the topic holds, never reissued.
    new_id = client.register_schema("after", Schema('"string"', "AVRO"))
    assert new_id > max(schema_id for schema_id, _ in acknowledged.values())
    registry.stop()


def test_platform_runs_the_broker_and_the_registry_in_one_process(tmp_path):
    """`oxbow platform`: Kafka clients and the registry's clients served by one process, whose
    registry finds the broker by itself; SIGTERM stops both cleanly."""
    from confluent_kafka import Consumer, Producer

    platform = Platform(tmp_path).start()
    client = SchemaRegistryClient({"url": platform.url})
    assert client.register_schema("greetings-value", Schema('"string"', "AVRO")) == 1

    bootstrap = platform.bootstrap
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce("greetings", b"hello")
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "g",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(["greetings"])
    def greeting():
        m = consumer.poll(0.5)
        return m if m is not None and not m.error() else None

    got = wait_until(greeting, 30, message="the greeting back")
    assert got.value() == b"hello"
    consumer.close()
    platform.stop()


@pytest.mark.serial  # times the stop
def test_platform_stops_the_registry_then_the_broker_quietly(tmp_path):
    """SIGTERM stops the parts in the reverse order of their start: the registry first, its Kafka
    clients closed while the broker still answers them, then the broker. It exits 0 at once, and
    no client reports the broker gone."""
    platform = Platform(tmp_path).start()
    client = SchemaRegistryClient({"url": platform.url})
    assert client.register_schema("greetings-value", Schema('"string"', "AVRO")) == 1
    before_stop = platform.log_path.stat().st_size
    started = time.monotonic()
    platform.stop(timeout=10)
    took = time.monotonic() - started
    with open(platform.log_path, "rb") as log:
        log.seek(before_stop)
        after = log.read().decode(errors="replace")
    for complaint in ("Connection refused", "Disconnected", "brokers are down", "Connect to"):
        assert complaint not in after, after[-3000:]
    # The registry's clients closed before the broker stopped.
    assert 0 <= after.find("oxbow registry stopped cleanly") < after.find("oxbow broker stopped cleanly"), \
        after[-3000:]
    assert took < 5, f"stopping took {took:.1f} s\n{after[-3000:]}"


def test_the_schema_tool_registers_lists_checks_configures_and_deletes(registry, tmp_path):
    def tool(*args):
        r = subprocess.run([OXBOW_BIN, "schema", "--url", registry.url, *args],
                           capture_output=True, text=True, timeout=30)
        return r.returncode, r.stdout, r.stderr

    v1 = tmp_path / "v1.avsc"
    v1.write_text(json.dumps(RECORD))
    v2 = tmp_path / "v2.avsc"
    v2.write_text(json.dumps(record_with([{"name": "qty", "type": "int", "default": 1}])))
    bad = tmp_path / "bad.avsc"
    bad.write_text(json.dumps(record_with([{"name": "qty", "type": "int"}])))

    assert tool("register", "orders/value", str(v1)) == (0, "1\n", "")
    assert tool("check", "orders/value", str(v2)) == (0, "compatible\n", "")
    code, out, _ = tool("check", "orders/value", str(bad))
    assert code == 1 and out.startswith("incompatible\n")
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in out
    assert tool("register", "orders/value", str(v2)) == (0, "2\n", "")
    assert tool("subjects") == (0, "orders/value\n", "")
    assert tool("versions", "orders/value") == (0, "1\n2\n", "")
    code, out, _ = tool("show", "orders/value")
    assert code == 0 and json.loads(out)["version"] == 2
    code, out, _ = tool("id", "1")
    assert code == 0 and json.loads(out)["versions"] == [{"subject": "orders/value", "version": 1}]
    assert tool("config") == (0, "BACKWARD\n", "")
    assert tool("config", "orders/value", "--set", "full") == (0, "FULL\n", "")
    assert tool("config", "orders/value") == (0, "FULL\n", "")
    assert tool("delete", "orders/value", "--version", "1") == (0, "1\n", "")
    assert tool("versions", "orders/value") == (0, "2\n", "")

    # Errors: one line with the registry's message and code, exit 1.
    code, out, err = tool("show", "nothing-here")
    assert (code, out) == (1, "")
    assert err == "oxbow: error: Subject 'nothing-here' not found. (error code 40401)\n"
    code, _, err = tool("register", "x", str(tmp_path / "missing.avsc"))
    assert code == 1 and err.startswith("oxbow: error: cannot read") and err.count("\n") == 1
    r = subprocess.run([OXBOW_BIN, "schema", "--url", "http://127.0.0.1:1", "subjects"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("oxbow: error: cannot reach the registry")


def test_import_mode_keeps_the_ids_and_versions_it_is_given(registry):
    """As a migration from another registry does it: IMPORT on an empty registry, schemas posted
    with their ids and versions, then READWRITE, with new ids after the largest imported."""
    assert http("PUT", registry.url + "/mode", {"mode": "IMPORT"}) == (200, '{"mode":"IMPORT"}')
    body = {"schema": json.dumps(RECORD), "id": 100, "version": 3}
    assert http("POST", registry.url + "/subjects/orders-value/versions", body) == (200, '{"id":100}')
    status, text = http("GET", registry.url + "/subjects/orders-value/versions/3")
    assert status == 200 and json.loads(text)["id"] == 100
    # Without an id, or with an id another schema holds, IMPORT refuses.
    status, text = http("POST", registry.url + "/subjects/x-value/versions", {"schema": json.dumps(RECORD)})
    assert (status, json.loads(text)["error_code"]) == (422, 42205)
    other = {"schema": json.dumps(record_with([{"name": "q", "type": "int", "default": 0}])), "id": 100}
    assert json.loads(http("POST", registry.url + "/subjects/y-value/versions", other)[1]) == {
        "error_code": 42205, "message": "Overwrite new schema with id 100 in context  is not permitted."}
    # Setting IMPORT again needs force now that subjects exist.
    assert http("PUT", registry.url + "/mode", {"mode": "READWRITE"})[0] == 200
    assert json.loads(http("PUT", registry.url + "/mode", {"mode": "IMPORT"})[1])["error_code"] == 42205
    assert http("PUT", registry.url + "/mode?force=true", {"mode": "IMPORT"})[0] == 200
    assert http("PUT", registry.url + "/mode", {"mode": "READWRITE"})[0] == 200
    # Outside IMPORT an id is refused, and new schemas get ids after the largest.
    status, text = http("POST", registry.url + "/subjects/y-value/versions", other)
    assert json.loads(text) == {"error_code": 42205,
                                "message": "Subject y-value is not in import or forward mode"}
    del other["id"]
    assert http("POST", registry.url + "/subjects/y-value/versions", other) == (200, '{"id":101}')


def test_normalize_by_query_and_by_config(registry):
    """Two schemas that differ only in the order of their custom properties are one schema once
    normalized, asked for per request (?normalize=true) or in the subject's config."""
    a = {**RECORD, "owner": "me", "area": "shop"}
    b = {**RECORD, "area": "shop", "owner": "me"}
    url = registry.url + "/subjects/n-value/versions"
    assert http("POST", url + "?normalize=true", {"schema": json.dumps(a)}) == (200, '{"id":1}')
    assert http("POST", url + "?normalize=true", {"schema": json.dumps(b)}) == (200, '{"id":1}')
    stored = json.loads(http("GET", url + "/1")[1])["schema"]
    assert stored.index('"area"') < stored.index('"owner"')
    assert http("PUT", registry.url + "/config/m-value", {"normalize": True}) == \
        (200, '{"normalize":true}')
    assert json.loads(http("GET", registry.url + "/config/m-value?defaultToGlobal=true")[1]) == \
        {"compatibilityLevel": "BACKWARD", "normalize": True}
    m = registry.url + "/subjects/m-value/versions"
    assert http("POST", m, {"schema": json.dumps(a)}) == (200, '{"id":1}')
    assert http("POST", m, {"schema": json.dumps(b)}) == (200, '{"id":1}')
    assert http("GET", m)[1] == "[1]"
