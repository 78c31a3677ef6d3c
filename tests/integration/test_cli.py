"""The oxbow client tools (topic, produce, consume, group) against the real broker."""

import subprocess
import time

from confluent_kafka import Consumer

from harness import OXBOW_BIN, unique_topic, wait_until


def oxbow(broker, *args, stdin=None, check=True):
    result = subprocess.run([OXBOW_BIN, *args, "-b", broker.bootstrap], input=stdin, capture_output=True,
                            text=True, timeout=60)
    if check:
        assert result.returncode == 0, f"oxbow {' '.join(args)} failed: {result.stderr}"
    return result


def test_topic_lifecycle(broker):
    topic = unique_topic("cli")
    oxbow(broker, "topic", "create", topic, "--partitions", "2", "--config", "retention.ms=60000")
    assert topic in oxbow(broker, "topic", "list").stdout.split()
    again = oxbow(broker, "topic", "create", topic, check=False)
    assert again.returncode == 1 and "TOPIC_ALREADY_EXISTS" in again.stderr
    oxbow(broker, "topic", "add-partitions", topic, "--total", "4")
    described = oxbow(broker, "topic", "describe", topic).stdout
    assert described.count("Partition") >= 4 or described.count("partition") >= 4, described
    shrink = oxbow(broker, "topic", "add-partitions", topic, "--total", "1", check=False)
    assert shrink.returncode == 1 and "INVALID_PARTITIONS" in shrink.stderr
    oxbow(broker, "topic", "delete", topic)
    wait_until(lambda: topic not in oxbow(broker, "topic", "list").stdout.split(), 15, message="topic gone")
    bad = oxbow(broker, "topic", "create", "bad name!", check=False)
    assert bad.returncode == 1 and "TOPIC_EXCEPTION" in bad.stderr and "illegal" in bad.stderr  # librdkafka names 17 so


def test_produce_and_consume_with_keys_headers_and_formats(broker):
    topic = unique_topic("clip")
    oxbow(broker, "topic", "create", topic, "--partitions", "1")
    lines = "".join(f"k{i}:v{i}\n" for i in range(50))
    out = oxbow(broker, "produce", topic, "--key-separator", ":", "-H", "source=cli", "--compression", "zstd",
                stdin=lines)
    assert "produced 50 records" in out.stderr
    consumed = oxbow(broker, "consume", topic, "--from-beginning", "--max-messages", "50",
                     "--format", "%o %k=%s %h\\n").stdout.splitlines()
    assert consumed == [f"{i} k{i}=v{i} source=cli" for i in range(50)]
    tail = oxbow(broker, "consume", topic, "--offset", "48", "--max-messages", "2", "--format", "%s\\n").stdout
    assert tail.split() == ["v48", "v49"]


def test_consume_decodes_kafkas_number_serdes(broker):
    """--key-deserializer/--value-deserializer, as Kafka's console consumer reads the word-count
    demo's output: big-endian numbers of Kafka's serdes printed as numbers, a null as "null", and a
    value of the wrong width one clear error naming the record."""
    import struct

    from confluent_kafka import Producer

    topic = unique_topic("clin")
    oxbow(broker, "topic", "create", topic, "--partitions", "1")
    p = Producer({"bootstrap.servers": broker.bootstrap})
    p.produce(topic, key=struct.pack(">i", -7), value=struct.pack(">q", 2**40 + 3))
    p.produce(topic, key=struct.pack(">i", 12), value=None)
    p.produce(topic, key=b"\x00\x01", value=struct.pack(">q", -1))
    assert p.flush(10) == 0
    out = oxbow(broker, "consume", topic, "--from-beginning", "--max-messages", "2", "--format", "%k=%s\\n",
                "--key-deserializer", "org.apache.kafka.common.serialization.IntegerDeserializer",
                "--value-deserializer", "long").stdout
    assert out.splitlines() == [f"-7={2**40 + 3}", "12=null"]
    as_double = oxbow(broker, "consume", topic, "--offset", "0", "--max-messages", "1", "--format", "%s\\n",
                      "--value-deserializer", "DoubleDeserializer").stdout
    assert float(as_double) == struct.unpack(">d", struct.pack(">q", 2**40 + 3))[0]
    bad = oxbow(broker, "consume", topic, "--from-beginning", "--max-messages", "3", "--format", "%k\\n",
                "--key-deserializer", "int", check=False)
    assert bad.returncode == 1 and bad.stdout.splitlines() == ["-7", "12"], (bad.stdout, bad.stderr)
    assert bad.stderr.strip().splitlines() == [
        f"oxbow: error: {topic} [0] offset 2: key is 2 bytes; IntegerDeserializer reads 4"], bad.stderr
    unknown = oxbow(broker, "consume", topic, "--value-deserializer", "uuid", check=False)
    assert unknown.returncode != 0 and "unknown deserializer 'uuid'" in unknown.stderr


def test_group_list_describe_reset_delete(broker):
    topic, group = unique_topic("clig"), unique_topic("g")
    oxbow(broker, "topic", "create", topic, "--partitions", "2")
    oxbow(broker, "produce", topic, stdin="".join(f"r{i}\n" for i in range(20)))
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 30
    while got < 20 and time.monotonic() < deadline:
        m = c.poll(0.2)
        if m and not m.error():
            got += 1
    c.commit(asynchronous=False)
    described = oxbow(broker, "group", "describe", group).stdout
    assert "Stable" in described and topic in described
    c.close()
    assert group in oxbow(broker, "group", "list").stdout
    assert group in oxbow(broker, "group", "list", "--state", "Empty").stdout
    oxbow(broker, "group", "reset-offsets", group, "--topic", topic, "--to-earliest")
    described = oxbow(broker, "group", "describe", group).stdout
    rows = [line.split() for line in described.splitlines() if line.startswith(group)]
    assert rows and all(r[3] == "0" for r in rows), described  # CURRENT-OFFSET back to 0
    oxbow(broker, "group", "delete", group)
    assert group not in oxbow(broker, "group", "list").stdout
