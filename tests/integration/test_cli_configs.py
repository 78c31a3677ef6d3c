"""The oxbow topic tools for configs and records: alter-config, describe's Configs line, delete-records."""

import re
import subprocess

from harness import OXBOW_BIN, unique_topic


def oxbow(broker, *args, stdin=None, check=True):
    result = subprocess.run([OXBOW_BIN, *args, "-b", broker.bootstrap], input=stdin, capture_output=True,
                            text=True, timeout=60)
    if check:
        assert result.returncode == 0, f"oxbow {' '.join(args)} failed: {result.stderr}"
    return result


def described_configs(broker, topic):
    described = oxbow(broker, "topic", "describe", topic).stdout
    line = next(line for line in described.splitlines() if line.startswith("Configs:"))
    return line.removeprefix("Configs:").strip()


def watermarks(broker, topic, partition):
    described = oxbow(broker, "topic", "describe", topic).stdout
    match = re.search(rf"Partition: {partition}\t.*LowWatermark: (\d+)\tHighWatermark: (\d+)", described)
    assert match, described
    return int(match.group(1)), int(match.group(2))


def assert_fails(result, *fragments):
    assert result.returncode == 1, result
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("oxbow: error: "), result.stderr
    for fragment in fragments:
        assert fragment in errors[0], result.stderr


def test_describe_lists_only_overrides(broker):
    topic, plain = unique_topic("cfg"), unique_topic("cfgplain")
    oxbow(broker, "topic", "create", topic, "--config", "retention.ms=60000", "--config", "cleanup.policy=compact")
    oxbow(broker, "topic", "create", plain)
    assert described_configs(broker, topic) == "cleanup.policy=compact,retention.ms=60000"
    assert described_configs(broker, plain) == ""


def test_alter_config_sets_and_deletes_keeping_other_overrides(broker):
    topic = unique_topic("cfgalter")
    oxbow(broker, "topic", "create", topic, "--config", "retention.ms=60000")

    out = oxbow(broker, "topic", "alter-config", topic, "--set", "cleanup.policy=compact",
                "--set", "max.message.bytes=2000000").stdout
    assert out == f"altered {topic}: cleanup.policy=compact, max.message.bytes=2000000, retention.ms=60000\n"
    assert described_configs(broker, topic) == "cleanup.policy=compact,max.message.bytes=2000000,retention.ms=60000"

    out = oxbow(broker, "topic", "alter-config", topic, "--delete", "retention.ms", "--set",
                "max.message.bytes=3000000").stdout
    assert out == f"altered {topic}: cleanup.policy=compact, max.message.bytes=3000000\n"
    assert described_configs(broker, topic) == "cleanup.policy=compact,max.message.bytes=3000000"

    oxbow(broker, "topic", "alter-config", topic, "--delete", "cleanup.policy", "--delete", "max.message.bytes")
    assert described_configs(broker, topic) == ""


def test_alter_config_rejections_leave_overrides_alone(broker):
    topic = unique_topic("cfgbad")
    oxbow(broker, "topic", "create", topic, "--config", "retention.ms=60000")

    bad_value = oxbow(broker, "topic", "alter-config", topic, "--set", "retention.ms=abc", check=False)
    assert_fails(bad_value, f"error: {topic}: INVALID_CONFIG: ", "retention.ms")
    unknown_key = oxbow(broker, "topic", "alter-config", topic, "--set", "no.such.key=1", check=False)
    assert_fails(unknown_key, f"error: {topic}: INVALID_CONFIG: ", "no.such.key")
    not_overridden = oxbow(broker, "topic", "alter-config", topic, "--delete", "cleanup.policy", check=False)
    assert_fails(not_overridden, topic, "cleanup.policy")
    assert_fails(oxbow(broker, "topic", "alter-config", topic, check=False), "nothing to alter")
    assert described_configs(broker, topic) == "retention.ms=60000"

    missing = oxbow(broker, "topic", "alter-config", unique_topic("cfgmissing"), "--set", "retention.ms=1",
                    check=False)
    assert_fails(missing, "UNKNOWN_TOPIC_OR_PART")


def test_delete_records_moves_the_low_watermark(broker):
    topic = unique_topic("delrec")
    oxbow(broker, "topic", "create", topic, "--partitions", "2")
    oxbow(broker, "produce", topic, "--partition", "0", stdin="".join(f"r{i}\n" for i in range(10)))

    out = oxbow(broker, "topic", "delete-records", topic, "--partition", "0", "--before", "4").stdout
    assert out == f"{topic} [0]: low watermark now 4\n"
    assert watermarks(broker, topic, 0) == (4, 10)
    remaining = oxbow(broker, "consume", topic, "--from-beginning", "--max-messages", "6", "--format", "%s\\n").stdout
    assert remaining.split() == [f"r{i}" for i in range(4, 10)]

    out = oxbow(broker, "topic", "delete-records", topic, "--partition", "0", "--before", "-1").stdout
    assert out == f"{topic} [0]: low watermark now 10\n"
    assert watermarks(broker, topic, 0) == (10, 10)
    assert watermarks(broker, topic, 1) == (0, 0)


def test_delete_records_rejections(broker):
    topic = unique_topic("delrecbad")
    oxbow(broker, "topic", "create", topic)
    oxbow(broker, "produce", topic, stdin="a\nb\n")

    beyond = oxbow(broker, "topic", "delete-records", topic, "--partition", "0", "--before", "3", check=False)
    assert_fails(beyond, f"{topic} [0]: OFFSET_OUT_OF_RANGE")
    no_partition = oxbow(broker, "topic", "delete-records", topic, "--partition", "7", "--before", "1", check=False)
    assert_fails(no_partition, f"{topic}: _NOENT")  # librdkafka finds no leader for it
    assert watermarks(broker, topic, 0) == (0, 2)


def test_get_offsets_prints_topic_partition_offset_at_a_time(broker):
    """As kafka-get-offsets.sh: one topic:partition:offset line per partition with an offset for
    that time or marker, in order."""
    prefix = unique_topic("getoff")
    topic, other = f"{prefix}-a", f"{prefix}-b"
    oxbow(broker, "topic", "create", topic, "--partitions", "3")
    oxbow(broker, "topic", "create", other)
    oxbow(broker, "produce", topic, "--partition", "0", stdin="".join(f"r{i}\n" for i in range(5)))
    oxbow(broker, "produce", topic, "--partition", "1", stdin="x\ny\n")
    oxbow(broker, "topic", "delete-records", topic, "--partition", "0", "--before", "2")

    def offsets(*args):
        return oxbow(broker, "topic", "get-offsets", *args).stdout.splitlines()

    assert offsets(topic) == [f"{topic}:0:5", f"{topic}:1:2", f"{topic}:2:0"]
    for earliest in ("earliest", "-2", "earliest-local", "-4"):
        assert offsets(topic, "--time", earliest) == [f"{topic}:0:2", f"{topic}:1:0", f"{topic}:2:0"]
    assert offsets(topic, "--time", "latest-tiered") == []  # nothing is tiered: no offset
    assert offsets(topic, "--partitions", "0,2") == [f"{topic}:0:5", f"{topic}:2:0"]
    assert offsets(topic, "--partitions", "1-2", "--time", "-1") == [f"{topic}:1:2", f"{topic}:2:0"]
    # Max timestamp and a timestamp: empty partitions have no record to name.
    assert [line.rsplit(":", 1)[0] for line in offsets(topic, "--time", "max-timestamp")] == [
        f"{topic}:0", f"{topic}:1"]
    assert offsets(topic, "--time", "0") == [f"{topic}:0:2", f"{topic}:1:0"]
    assert offsets(topic, "--time", "99999999999999") == []
    # The topic is a regular expression over whole names.
    assert offsets(f"{prefix}-.*", "--partitions", "0") == [f"{topic}:0:5", f"{other}:0:0"]


def test_get_offsets_rejections(broker):
    topic = unique_topic("getoffbad")
    oxbow(broker, "topic", "create", topic)
    for bad_time in ("yesterday", "-6", "1.5"):
        result = oxbow(broker, "topic", "get-offsets", topic, "--time", bad_time, check=False)
        assert_fails(result, f"malformed --time '{bad_time}'")
    for bad_partitions in ("x", "3-1", "-1", "1,,2"):
        result = oxbow(broker, "topic", "get-offsets", topic, "--partitions", bad_partitions, check=False)
        assert_fails(result, f"malformed --partitions '{bad_partitions}'")
    assert_fails(oxbow(broker, "topic", "get-offsets", topic[:-1], check=False),
                 "could not match any topic-partitions")
    assert_fails(oxbow(broker, "topic", "get-offsets", topic, "--partitions", "5", check=False),
                 "could not match any topic-partitions")
    assert_fails(oxbow(broker, "topic", "get-offsets", "(", check=False), "malformed topic pattern '('")
