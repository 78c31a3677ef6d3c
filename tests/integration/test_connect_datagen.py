"""The built-in datagen source (Confluent's kafka-connect-datagen) on `oxbow connect standalone`:
a quickstart's records written with their Connect schema through JsonConverter, keyed by the
quickstart's key field, read back with confluent-kafka; a restarted worker goes on with the count
its offsets hold; several tasks with our key.space and records.per.second knobs.
"""

import json

import ck_helpers as ck
from harness import port_accepts, unique_topic, wait_until
from test_connect_rest import Rest
from test_connect_standalone import Standalone

DATAGEN = "io.confluent.kafka.connect.datagen.DatagenConnector"
WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
          "offset.flush.interval.ms": 200}


def _read(bootstrap, topic, count, timeout=30):
    """(key, value envelope) of the first `count` records of partition 0."""
    from confluent_kafka import TopicPartition
    consumer = ck.consumer(bootstrap)
    consumer.assign([TopicPartition(topic, 0, 0)])
    out = []

    def enough():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            out.append((msg.key().decode(), json.loads(msg.value())))
        return len(out) >= count

    try:
        wait_until(enough, timeout, interval=0, message=f"{count} records in {topic}")
    finally:
        consumer.close()
    return out


def _datagen(name, topic, **extra):
    return {"name": name, "connector.class": "DatagenConnector", "kafka.topic": topic,
            "max.interval": "0", **extra}


def test_orders_have_the_quickstart_schema_and_a_restart_goes_on_counting(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("orders"))
    connector = _datagen("orders", topic, quickstart="orders", iterations="20", **{"random.seed": "7"})
    run1 = Standalone(tmp_path, broker, [connector], run=1, worker_extra=WORKER)
    first = _read(broker.bootstrap, topic, 20)
    run1.stop()
    key, value = first[0]
    schema = value["schema"]
    assert schema["name"] == "ksql.orders"
    assert [(f["field"], f["type"]) for f in schema["fields"]] == [
        ("ordertime", "int64"), ("orderid", "int32"), ("itemid", "string"),
        ("orderunits", "double"), ("address", "struct")]
    assert [f["field"] for f in schema["fields"][4]["fields"]] == ["city", "state", "zipcode"]
    # Keyed by orderid, which counts the records.
    assert [(k, v["payload"]["orderid"]) for k, v in first] == [(str(i), i) for i in range(20)]
    assert all(v["payload"]["itemid"].startswith("BYOC_Item_") for _, v in first)

    # More iterations, the same offsets file: the count goes on from 20, nothing is written twice.
    connector["iterations"] = "30"
    run2 = Standalone(tmp_path, broker, [connector], run=2, worker_extra=WORKER)
    both = _read(broker.bootstrap, topic, 30)
    assert [v["payload"]["orderid"] for _, v in both] == list(range(30))
    run2.stop()
    assert len(_read(broker.bootstrap, topic, 30)) == 30


def test_tasks_share_the_key_space_at_their_pace(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("users"))
    worker = Standalone(tmp_path, broker, [], run=1, worker_extra=WORKER)
    wait_until(lambda: port_accepts(worker.rest_port), 30, message="the REST API to listen")
    rest = Rest(worker.rest_port)
    config = _datagen("users", topic, quickstart="users", iterations="25", **{
        "tasks.max": "2", "key.space": "5", "records.per.second": "100", "batch.size": "10"})
    code, body = rest.call("POST", "/connectors", {"name": "users", "config": config})
    assert code == 201, body
    records = _read(broker.bootstrap, topic, 50)
    assert {k for k, _ in records} <= {f"User_{i}" for i in range(5)}
    assert all(v["payload"]["userid"] == k for k, v in records)
    assert records[0][1]["schema"]["name"] == "ksql.users"
    code, status = rest.call("GET", "/connectors/users/status")
    assert [t["state"] for t in status["tasks"]] == ["RUNNING", "RUNNING"]
    code, result = rest.call("PUT", "/connector-plugins/Datagen/config/validate",
                             {"connector.class": DATAGEN, "name": "x", "kafka.topic": topic,
                              "quickstart": "nope"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in result["configs"]
              if c["value"]["errors"]}
    assert code == 200 and errors == {"quickstart": [
        "Invalid value nope for configuration quickstart: Quickstart must be one of: users, "
        "pageviews, orders"]}, result
    worker.stop()
