"""Looking a topic up never creates it. Against a broker that creates topics a client asks about
(auto.create.topics.enable=true) with four partitions (num.partitions=4), the registry, `oxbow
platform`, a Streams application and the command-line tools create the topics they need with the
partition counts and settings they choose (Confluent's registry and Kafka Streams' own), and leave
the topics they only asked about absent.

Every topic listing here asks for the metadata of all topics, which creates none.
"""

import random
import subprocess

from confluent_kafka.admin import ConfigResource
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

import ck_helpers as ck
from harness import OXBOW_BIN, wait_until
from test_registry import Platform, Registry
from test_streams_wordcount import INPUT, OUTPUT, App, Output, _lines, _produce, _truth

# The registry elects its primary in a group: without the initial delay it is elected at once.
AUTO_CREATING = {"auto.create.topics.enable": "true", "num.partitions": "4",
                 "group.initial.rebalance.delay.ms": "0"}


def partition_counts(bootstrap):
    """Every topic but the broker's own (__consumer_offsets, ...) and its partition count."""
    md = ck.admin(bootstrap).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in md.topics.items() if not name.startswith("__")}


def topic_config(bootstrap, topic, key):
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    admin = ck.admin(bootstrap)  # kept until the answer: its end would cancel the request
    config = list(admin.describe_configs([resource]).values())[0].result(20)
    return config[key].value


def check_schemas_topic(bootstrap, url):
    assert partition_counts(bootstrap) == {"_schemas": 1}
    assert topic_config(bootstrap, "_schemas", "cleanup.policy") == "compact"
    client = SchemaRegistryClient({"url": url})
    assert client.register_schema("greetings-value", Schema('"string"', "AVRO")) == 1
    assert client.get_latest_version("greetings-value").schema_id == 1


def test_the_registry_creates_its_topic_with_one_partition(make_broker, tmp_path):
    """Confluent's registry describes `_schemas` without creating it, then creates it with one
    partition, compacted; a probe that let the broker create it (with four partitions) made the
    registry refuse to start."""
    broker = make_broker(AUTO_CREATING)
    registry = Registry(broker, tmp_path).start()
    check_schemas_topic(broker.bootstrap, registry.url)
    registry.stop()


def test_the_platform_starts_on_a_broker_with_four_partitions_by_default(tmp_path):
    platform = Platform(tmp_path, {"num.partitions": "4"}).start()
    check_schemas_topic(platform.bootstrap, platform.url)
    platform.stop()


def test_streams_creates_its_internal_topics_with_their_own_partition_counts(make_broker, tmp_path):
    """Kafka Streams' counts, not the broker's default: the repartition topic takes the most
    partitions of its sources (3), the changelog one per task of its subtopology (3), the
    shutdown-request topic one. A missing source topic is reported, not created."""
    broker = make_broker(AUTO_CREATING)
    missing = App(broker, tmp_path, "missing").start()
    assert missing.proc.wait(60) == 1
    assert "MissingSourceTopicException" in missing.log_path.read_text()
    assert partition_counts(broker.bootstrap) == {}

    ck.create_topic(broker.bootstrap, INPUT, 3)
    ck.create_topic(broker.bootstrap, OUTPUT, 3)
    lines = _lines(random.Random(40), 500)
    app = App(broker, tmp_path, "wc").start()
    _produce(broker, lines)
    out = Output(broker)
    out.read_until(_truth(lines))
    app.stop()
    out.close()
    assert partition_counts(broker.bootstrap) == {
        INPUT: 3, OUTPUT: 3, "wc-counts-store-repartition": 3, "wc-counts-store-changelog": 3,
        "wc-shutdown-requests": 1}


def test_the_tools_create_no_topic_they_are_asked_about(make_broker):
    """Describing, consuming, reading offsets of, resetting a group or a Streams application on
    topics that do not exist fails or finds nothing, and leaves them absent."""
    broker = make_broker(AUTO_CREATING)
    commands = [
        ["topic", "describe", "ghost-describe"],
        ["topic", "get-offsets", "ghost-offsets"],
        ["topic", "alter-config", "ghost-config", "--set", "retention.ms=1000"],
        ["consume", "ghost-consume", "--max-messages", "1", "--timeout-ms", "1000"],
        ["perf", "consume", "--topic", "ghost-perf", "--num-records", "1", "--timeout-ms", "1000"],
        ["group", "reset-offsets", "ghost-group", "--topic", "ghost-group-topic", "--to-earliest"],
        ["streams", "reset", "--application-id", "ghost-app", "--input-topics", "ghost-input"],
    ]
    for command in commands:
        done = subprocess.run([OXBOW_BIN, *command, "--bootstrap-server", broker.bootstrap],
                              capture_output=True, text=True, timeout=60)
        # Each ran, and found nothing (a usage error exits otherwise).
        assert done.returncode == 1 and "oxbow: error:" in done.stderr, (command, done.stderr)
    # Creation, had any of them asked for it, would have been done before each answered.
    assert partition_counts(broker.bootstrap) == {}
