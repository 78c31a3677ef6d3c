"""kcat (librdkafka CLI) against the real broker, group-less consume only."""

import json
import re
import shutil
import subprocess
import time

import pytest

import ck_helpers as ck
from harness import unique_topic

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = pytest.mark.skipif(KCAT is None, reason="kcat is not installed")


def kcat(broker, *args, input=None, timeout=60, check=True):
    cmd = [KCAT, "-b", broker.bootstrap, "-X", "enable.idempotence=false", *args]
    res = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout)
    if check and res.returncode != 0:
        broker.fail(f"{' '.join(cmd)} exited {res.returncode}\nstdout: {res.stdout[-2000:]!r}\n"
                    f"stderr: {res.stderr[-2000:]!r}")
    return res


def test_metadata_listing(broker):
    t1 = ck.create_topic(broker.bootstrap, unique_topic("kcat-l1"), partitions=3)
    t2 = ck.create_topic(broker.bootstrap, unique_topic("kcat-l2"), partitions=1)
    out = kcat(broker, "-L").stdout.decode()
    assert "1 brokers:" in out, out
    assert f"at 127.0.0.1:{broker.port}" in out, out
    assert f'topic "{t1}" with 3 partitions:' in out, out
    assert f'topic "{t2}" with 1 partitions:' in out, out

    js = json.loads(kcat(broker, "-L", "-J").stdout)
    assert [b["name"] for b in js["brokers"]] == [f"127.0.0.1:{broker.port}"]
    topics = {t["topic"]: t for t in js["topics"]}
    assert sorted(p["partition"] for p in topics[t1]["partitions"]) == [0, 1, 2]
    node = js["brokers"][0]["id"]
    for p in topics[t1]["partitions"]:
        assert p["leader"] == node and [r["id"] for r in p["replicas"]] == [node]

    single = json.loads(kcat(broker, "-L", "-J", "-t", t2).stdout)
    assert [t["topic"] for t in single["topics"]] == [t2]


def test_produce_keys_and_consume(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("kcat-pk"), partitions=1)
    lines = [f"key{i}:value number {i}" for i in range(500)]
    kcat(broker, "-P", "-t", topic, "-p", "0", "-K:", input=("\n".join(lines) + "\n").encode())
    out = kcat(broker, "-C", "-t", topic, "-e", "-o", "beginning", "-f", "%p|%o|%k|%s\\n").stdout.decode()
    got = out.splitlines()
    assert got == [f"0|{i}|key{i}|value number {i}" for i in range(500)]

    # Relative offsets from the end, absolute offsets, and counts.
    last2 = kcat(broker, "-C", "-t", topic, "-p", "0", "-e", "-o", "-2", "-f", "%o:%s\\n").stdout.decode()
    assert last2.splitlines() == ["498:value number 498", "499:value number 499"]
    mid = kcat(broker, "-C", "-t", topic, "-p", "0", "-o", "100", "-c", "3", "-f", "%o:%k\\n").stdout.decode()
    assert mid.splitlines() == ["100:key100", "101:key101", "102:key102"]
    end = kcat(broker, "-C", "-t", topic, "-p", "0", "-e", "-o", "end", "-f", "%o\\n").stdout.decode()
    assert end == ""


def test_compressed_produce_and_headers(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("kcat-z"), partitions=2)
    expected = {0: [], 1: []}
    for part, codec in enumerate(("snappy", "zstd")):
        lines = [f"{codec}-{i}" for i in range(300)]
        kcat(broker, "-P", "-t", topic, "-p", str(part), "-z", codec, "-H", "origin=kcat",
             input=("\n".join(lines) + "\n").encode())
        expected[part] = lines
    for part in (0, 1):
        out = kcat(broker, "-C", "-t", topic, "-p", str(part), "-e", "-o", "beginning",
                   "-f", "%s|%h\\n").stdout.decode()
        assert out.splitlines() == [f"{v}|origin=kcat" for v in expected[part]]


def test_json_envelope_and_timestamp_offsets(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("kcat-ts"), partitions=1)
    base = int(time.time() * 1000) - 1_000_000
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "timestamp": base + 1000 * i}
                       for i in range(20)], topic, partition=0)
    out = kcat(broker, "-C", "-t", topic, "-e", "-o", "beginning", "-J").stdout.decode()
    recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["offset"], r["key"], r["payload"], r["ts"]) for r in recs] == \
        [(i, f"k{i}", f"v{i}", base + 1000 * i) for i in range(20)]
    # -o s@<ts>: start at the first record with timestamp >= ts.
    out = kcat(broker, "-C", "-t", topic, "-p", "0", "-e", "-o", f"s@{base + 7500}", "-f", "%o\\n").stdout.decode()
    assert out.splitlines() == [str(i) for i in range(8, 20)]
    # -Q: offset lookup by timestamp.
    q = kcat(broker, "-Q", "-t", f"{topic}:0:{base + 3000}").stdout.decode()
    assert re.search(r"offset\s+3\b", q), q

