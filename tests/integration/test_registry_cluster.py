"""Several `oxbow registry` instances on one `_schemas` topic: one primary, elected through a
group on the broker, takes every write; the others forward writes to it and answer reads. Kill the
primary and another takes over, with no id issued twice and nothing acknowledged lost.
"""

import json
import random
import threading
import time

import pytest

from harness import wait_until
from test_registry import RECORD, Registry, http

SESSION_MS = 6000  # the broker's smallest session timeout: a dead primary loses the role soonest


@pytest.fixture
def broker(make_broker):
    return make_broker({"group.initial.rebalance.delay.ms": "0"})


def start_instances(broker, tmp_path, count):
    overrides = {"oxbow.election.session.timeout.ms": str(SESSION_MS)}
    instances = [Registry(broker, tmp_path, overrides=overrides).start() for _ in range(count)]
    wait_until(lambda: f"group schema-registry generation {count} stable: {count} members"
               in broker.log_text(), 30, message="every instance in the election's group")
    wait_until(lambda: sum(r.is_primary() for r in instances) == 1, 30,
               message="exactly one primary")
    return instances


def schema(n):
    """A distinct schema per n (a subject of them needs compatibility NONE)."""
    return {**RECORD, "name": f"Order{n}"}


def register(url, subject, body):
    return http("POST", f"{url}/subjects/{subject}/versions", {"schema": json.dumps(body)})


def test_secondaries_forward_writes_and_answer_reads(broker, tmp_path):
    instances = start_instances(broker, tmp_path, 2)
    primary = next(r for r in instances if r.is_primary())
    secondary = next(r for r in instances if not r.is_primary())

    # A write through the secondary is the primary's: ids come from one place.
    assert register(secondary.url, "a-value", schema(1)) == (200, '{"id":1}')
    assert register(primary.url, "b-value", schema(2)) == (200, '{"id":2}')
    assert register(secondary.url, "c-value", schema(1)) == (200, '{"id":1}')
    # The instance a client wrote through answers its next read with the write.
    status, body = http("GET", secondary.url + "/subjects")
    assert status == 200 and sorted(json.loads(body)) == ["a-value", "b-value", "c-value"]
    wait_until(lambda: http("GET", primary.url + "/schemas/ids/2")[0] == 200, 10)

    # The primary's refusals come back through the secondary with their status and code, and the
    # message as Confluent's followers relay it.
    bad = {**RECORD, "name": "Order1", "fields": RECORD["fields"] + [{"name": "x", "type": "int"}]}
    status, body = register(secondary.url, "a-value", bad)
    assert status == 409
    error = json.loads(body)
    assert error["error_code"] == 409
    assert error["message"].startswith("Schema being registered is incompatible")
    assert error["message"].endswith("; error code: 409")

    # Every kind of write goes through: config, mode, deletes.
    assert http("PUT", secondary.url + "/config/a-value", {"compatibility": "NONE"}) == \
        (200, '{"compatibility":"NONE"}')
    assert json.loads(http("GET", primary.url + "/config/a-value")[1]) == \
        {"compatibilityLevel": "NONE"}
    assert http("DELETE", secondary.url + "/subjects/c-value") == (200, "[1]")
    assert http("GET", secondary.url + "/subjects/c-value/versions")[0] == 404
    for r in instances:
        r.stop()


def test_the_primary_killed_under_load_issues_no_id_twice(broker, tmp_path):
    """Clients register through both instances while the primary is killed with -9: the survivor
    takes over, every acknowledged schema keeps its id, and no id names two schemas."""
    instances = start_instances(broker, tmp_path, 2)
    primary = next(r for r in instances if r.is_primary())
    survivor = next(r for r in instances if not r.is_primary())
    assert http("PUT", survivor.url + "/config", {"compatibility": "NONE"})[0] == 200
    acknowledged = {}  # n -> id
    lock = threading.Lock()
    stop = threading.Event()

    def client(seed):
        rng = random.Random(seed)
        n = seed * 100000
        while not stop.is_set():
            n += 1
            target = rng.choice(instances)
            for _ in range(200):  # retried until some instance takes it
                if stop.is_set():
                    return
                status, body = register(target.url, f"s{n % 7}-value", schema(n))
                if status == 200:
                    with lock:
                        acknowledged[n] = json.loads(body)["id"]
                    break
                assert status in (0, 500), (status, body)  # unreachable, or no primary yet
                target = survivor
                time.sleep(0.05)

    threads = [threading.Thread(target=client, args=(seed,)) for seed in range(1, 5)]
    for t in threads:
        t.start()
    wait_until(lambda: len(acknowledged) >= 40, 60, message="registrations before the kill")
    primary.kill()
    before = len(acknowledged)
    wait_until(lambda: survivor.is_primary(), 60, message="the survivor taking over")
    wait_until(lambda: len(acknowledged) >= before + 40, 60, message="registrations after the kill")
    stop.set()
    for t in threads:
        t.join()

    ids = {}
    for n, schema_id in acknowledged.items():
        assert ids.setdefault(schema_id, n) == n, f"id {schema_id} given to two schemas"
        status, body = http("GET", f"{survivor.url}/schemas/ids/{schema_id}")
        assert status == 200, (schema_id, body)
        assert json.loads(json.loads(body)["schema"])["name"] == f"Order{n}"
    # A restarted instance reads the same, and is now the secondary.
    primary.start()
    status, body = http("GET", primary.url + "/schemas?limit=100000")
    assert status == 200
    stored = {json.loads(s["schema"])["name"]: s["id"] for s in json.loads(body)}
    for n, schema_id in acknowledged.items():
        assert stored[f"Order{n}"] == schema_id
    survivor.stop()
    primary.stop()
