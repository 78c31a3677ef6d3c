"""KafkaStreams::close(timeout) with the Kafka cluster gone: a streams_test_app whose broker was
killed -9 answers SIGTERM's close(timeout) within the timeout and exits, as Kafka's close(Duration)
returns. Before, close() waited forever for the instance's monitor thread, stuck in librdkafka
2.0.2's rd_kafka_query_watermark_offsets (which ignores its timeout once the leader is down).
"""

import re
import signal
import time

import pytest

from harness import wait_until
from test_streams_apps import App, _create, assert_valid_sequence


@pytest.fixture
def broker(make_broker):
    return make_broker(group_initial_rebalance_delay_ms=0)


def test_close_with_a_timeout_returns_in_time_after_the_broker_died(broker, tmp_path):
    _create(broker, {"fail-input": 1, "fail-output": 1})
    app = App(broker, tmp_path, "fail", "gone", "broker-gone",
              extra=("--close-timeout-ms", "5000")).start()
    app.wait_state("RUNNING")
    wait_until(lambda: "task 0_0 assigned" in app.text(), 30, message="the task assigned")
    time.sleep(2)  # the monitor has asked the shutdown-request topic's end a few times
    broker.kill()
    app.proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    wait_until(lambda: "CLOSE " in app.text() or app.proc.poll() is not None, 60,
               message="close(5 s) to answer")
    # close(5 s) returns within its timeout (plus a poll's slack), whatever it answers.
    assert time.monotonic() - started < 15, app.tail()
    assert app.wait_exit(60) == 0, app.tail()
    closes = re.findall(r"CLOSE (true|false) ([A-Z_]+)", app.text())
    assert closes and closes[-1] == ("true", "NOT_RUNNING"), app.tail()
    assert_valid_sequence(app.states())
