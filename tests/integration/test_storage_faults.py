"""Storage faults: what the broker does when the disk fails under it.

An LD_PRELOAD shim (storage_fault_shim.c, compiled here) makes fdatasync fail with EIO, or writes
to segments fail with ENOSPC, while a flag file exists.  The README's "When the broker stops" lists
what the user sees in each case; these tests hold it to that.
"""

import pathlib
import subprocess

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import unique_topic, wait_until

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    out = tmp_path_factory.mktemp("shim") / "storage_fault_shim.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(out), str(HERE / "storage_fault_shim.c"), "-ldl"],
                   check=True)
    return out


def _faulty_broker(make_broker, shim, tmp_path, **overrides):
    flags = tmp_path / "faults"
    flags.mkdir()
    b = make_broker(overrides, env={"LD_PRELOAD": str(shim), "OXBOW_FAULT_DIR": str(flags)})
    return b, flags


def _topic(b):
    t = unique_topic("disk")
    admin = ck.admin(b.bootstrap)
    for f in admin.create_topics([NewTopic(t, 1, 1)]).values():
        f.result(20)
    ck.wait_for_topic(b.bootstrap, t, 1)
    return t


def _records(prefix, n):
    return [{"key": f"{prefix}{i}".encode(), "value": f"{prefix}-value-{i}".encode()} for i in range(n)]


def test_full_disk_fails_the_produce_and_the_broker_keeps_serving(make_broker, shim, tmp_path):
    b, flags = _faulty_broker(make_broker, shim, tmp_path)
    t = _topic(b)
    before = _records("a", 200)
    ck.produce_all(ck.producer(b.bootstrap), before, t, partition=0)

    (flags / "write-enospc").touch()
    p = ck.producer(b.bootstrap, retries=0, message_timeout_ms=10000)
    errors = []
    p.produce(t, b"lost", partition=0, on_delivery=lambda err, msg: errors.append(err))
    assert p.flush(30) == 0
    assert errors and errors[0] is not None, "a produce to a full disk was acknowledged"
    assert errors[0].code() == KafkaError.KAFKA_STORAGE_ERROR, errors[0]
    # Reads go on while the disk is full.
    got = ck.consume_partition(b.bootstrap, t, 0, 0, expected=len(before))
    assert [m.value() for m in got] == [r["value"] for r in before]
    assert "No space left on device" in b.log_text()
    b.assert_alive()

    (flags / "write-enospc").unlink()
    after = _records("b", 50)
    ck.produce_all(ck.producer(b.bootstrap), after, t, partition=0)
    got = ck.consume_partition(b.bootstrap, t, 0, 0, expected=len(before) + len(after))
    # The failed write left nothing behind: offsets stay dense, the refused record is absent.
    assert [m.offset() for m in got] == list(range(len(before) + len(after)))
    assert [m.value() for m in got] == [r["value"] for r in before + after]


def test_failed_fsync_stops_the_broker_with_one_line_and_restart_recovers(make_broker, shim, tmp_path):
    b, flags = _faulty_broker(make_broker, shim, tmp_path, **{"log.flush.interval.messages": "1"})
    t = _topic(b)
    acked = _records("c", 100)
    ck.produce_all(ck.producer(b.bootstrap), acked, t, partition=0)

    (flags / "fsync-eio").touch()
    p = ck.producer(b.bootstrap, retries=0, message_timeout_ms=5000)
    results = []
    p.produce(t, b"never acknowledged", partition=0, on_delivery=lambda err, msg: results.append(err))
    wait_until(lambda: not b.is_alive(), 30, message="broker exit after a failed fsync")
    code = b.proc.returncode
    b.proc = None
    p.flush(10)
    assert code == 1, f"exit code {code}"
    assert all(err is not None for err in results), "a produce whose fsync failed was acknowledged"
    critical = [line for line in b.log_text().splitlines() if "fsync of" in line]
    assert len(critical) == 1, critical
    assert "Input/output error" in critical[0] and "critical" in critical[0]

    (flags / "fsync-eio").unlink()
    b.start()
    got = ck.consume_partition(b.bootstrap, t, 0, 0, expected=len(acked))
    assert [m.value() for m in got][: len(acked)] == [r["value"] for r in acked]
