"""The admin HTTP API: Prometheus metrics that move by the right amounts, health, JSON views, log levels."""

import json
import os
import time
import urllib.error
import urllib.request

from confluent_kafka import Consumer, TopicPartition

import ck_helpers as ck
from harness import metric_value, port_accepts, scrape_metrics, unique_topic, wait_until


def get(broker, path, method="GET"):
    request = urllib.request.Request(broker.admin_url + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


scrape = scrape_metrics
value = metric_value


def test_metrics_move_with_produce_and_consume(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("metrics"))
    before = scrape(broker)
    n = 5000
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": os.urandom(100)} for _ in range(n)], topic, partition=0)
    ck.consume_partition(broker.bootstrap, topic, 0, 0, expected=n)
    after = scrape(broker)
    assert value(after, "oxbow_topic_records_in_total", topic=topic) - value(before, "oxbow_topic_records_in_total", topic=topic) == n
    # Every byte appended is a byte of the log, and a full read sends all of them.
    log_bytes = value(after, "oxbow_partition_log_size_bytes", topic=topic, partition="0")
    assert log_bytes >= n * 100
    assert value(after, "oxbow_topic_bytes_in_total", topic=topic) == log_bytes
    assert value(after, "oxbow_topic_bytes_out_total", topic=topic) >= log_bytes
    assert value(after, "oxbow_partition_high_watermark", topic=topic, partition="0") == n
    assert value(after, "oxbow_requests_total", api="Produce") > value(before, "oxbow_requests_total", api="Produce")
    assert value(after, "oxbow_request_local_seconds_count", api="Fetch") > 0
    assert value(after, "oxbow_produce_request_bytes_count") > 0
    assert value(after, "oxbow_under_replicated_partitions") == 0
    assert value(after, "oxbow_offline_partitions") == 0
    assert value(after, "oxbow_partitions") >= 1
    assert value(after, "oxbow_ready") == 1


def test_lag_of_a_paused_group_is_what_it_has_not_read(broker):
    topic, group = ck.create_topic(broker.bootstrap, unique_topic("lag")), unique_topic("g")
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"x"} for _ in range(300)], topic, partition=0)
    c = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, 0, 120)], asynchronous=False)
    c.close()
    samples = scrape(broker)
    assert value(samples, "oxbow_consumer_group_lag", group=group, topic=topic, partition="0") == 180
    assert value(samples, "oxbow_groups", state="Empty") >= 1
    status, body = get(broker, "/v1/groups")
    assert status == 200
    (entry,) = [g for g in json.loads(body) if g["group_id"] == group]
    assert entry["offsets"] == [{"topic": topic, "partition": 0, "committed_offset": 120, "end_offset": 300,
                                 "lag": 180}]


def test_fsync_latency_histogram_counts_flushes(make_broker):
    broker = make_broker({"log.flush.interval.messages": "1"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("fsync"))
    ck.produce_all(ck.producer(broker.bootstrap, linger_ms=0), [{"value": b"d"} for _ in range(20)], topic, partition=0)
    assert value(scrape(broker), "oxbow_log_flush_seconds_count") >= 1


def test_json_views_and_health(broker):
    topic = ck.create_topic(broker.bootstrap, unique_topic("views"), partitions=2)
    assert get(broker, "/v1/status/live") == (200, '{"live":true}\n')
    assert get(broker, "/v1/status/ready") == (200, '{"ready":true}\n')
    brokers = json.loads(get(broker, "/v1/brokers")[1])
    assert brokers["brokers"][0]["port"] == broker.port
    topics = {t["name"]: t for t in json.loads(get(broker, "/v1/topics")[1])}
    assert [p["partition"] for p in topics[topic]["partitions"]] == [0, 1]
    assert get(broker, "/v1/nothing")[0] == 404


def test_log_level_changes_at_run_time_and_slow_requests_are_logged(make_broker):
    broker = make_broker({"slow.request.threshold.ms": "0"})
    assert get(broker, "/v1/loggers?level=debug", method="PUT") == (200, '{"level":"debug"}\n')
    assert json.loads(get(broker, "/v1/loggers")[1]) == {"level": "debug"}
    status, body = get(broker, "/v1/loggers?level=shouting", method="PUT")
    assert status == 400 and "unknown log level" in body
    ck.create_topic(broker.bootstrap, unique_topic("slow"))
    wait_until(lambda: "slow request: API key" in broker.log_text(), 10, message="a slow-request log line")


def test_long_polls_are_not_slow_requests(make_broker):
    broker = make_broker({"slow.request.threshold.ms": "400", "group.initial.rebalance.delay.ms": "0"})
    topic = ck.create_topic(broker.bootstrap, unique_topic("longpoll"))
    consumer = ck.consumer(broker.bootstrap, fetch_wait_max_ms=1000, group_id=unique_topic("longpoll-g"),
                           auto_offset_reset="earliest")
    consumer.subscribe([topic])
    deadline = time.time() + 4  # several fetches that each wait out their second on the empty topic
    while time.time() < deadline:
        consumer.poll(0.2)
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"late"}], topic, partition=0)
    got = None
    for _ in range(6):
        got = consumer.poll(5)
        if got is not None and not got.error():
            break
    consumer.close()
    assert got is not None and got.value() == b"late"
    slow = [line for line in broker.log_text().splitlines() if "slow request" in line]
    assert slow == [], slow


def test_ready_only_after_logs_are_loaded(make_broker):
    broker = make_broker()
    topic = ck.create_topic(broker.bootstrap, unique_topic("ready"))
    ck.produce_all(ck.producer(broker.bootstrap), [{"value": b"r"} for _ in range(100)], topic, partition=0)
    broker.kill()
    broker.start(extra_overrides={"test.fault.recovery.delay.ms": "3000"}, wait=False)
    wait_until(lambda: get(broker, "/v1/status/live")[0] == 200, 20, message="admin API up")
    # Live but not ready while the logs load; Kafka clients are not served yet.
    assert get(broker, "/v1/status/ready")[0] == 503
    assert not port_accepts(broker.port)
    wait_until(lambda: get(broker, "/v1/status/ready")[0] == 200, 30, message="ready after recovery")
    assert ck.watermarks(broker.bootstrap, topic) == (0, 100)
