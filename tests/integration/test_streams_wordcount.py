"""oxbow-streams against the real broker: the word-count example (build/examples/wordcount).

Input lines are random text; the expected counts are computed here from the lines, independently
of the library. Output is read with confluent-kafka as a Java consumer would (key: UTF-8 word,
value: big-endian int64).
"""

import os
import pathlib
import random
import re
import signal
import struct
import subprocess
import time

import pytest
from confluent_kafka import Consumer, KafkaError
from confluent_kafka.admin import ConfigResource, NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, wait_until

WORDCOUNT = os.environ.get("OXBOW_WORDCOUNT", str(pathlib.Path(OXBOW_BIN).parent / "examples" / "wordcount"))
INPUT, OUTPUT = "streams-plaintext-input", "streams-wordcount-output"
VOCABULARY = ["kafka", "streams", "Oxbow", "state", "TABLE", "join", "window", "commit", "log", "x_1"]


def _lines(rng, n):
    seps = [" ", "  ", ", ", "--", "! ", "\t"]
    return ["".join(rng.choice(VOCABULARY) + rng.choice(seps) for _ in range(rng.randint(0, 8))) for _ in range(n)]


def _truth(lines):
    counts = {}
    for line in lines:
        for w in re.split(r"[^A-Za-z0-9_]+", line.lower()):
            if w:
                counts[w] = counts.get(w, 0) + 1
    return counts


class App:
    def __init__(self, broker, tmp_path, name, app_id="wc", guarantee="at_least_once", state=None, extra=(),
                 commit_interval_ms=200):
        self.log_path = tmp_path / f"{name}.log"
        self.state_dir = tmp_path / f"state-{state or name}"
        commit = ["--commit-interval-ms", str(commit_interval_ms)] if commit_interval_ms else []
        self.cmd = [WORDCOUNT, "--bootstrap-server", broker.bootstrap, "--application-id", app_id,
                    "--state-dir", str(self.state_dir), *commit,
                    "--processing-guarantee", guarantee,
                    # A killed instance's tasks move after 6 s rather than librdkafka's 45 s.
                    "--config", "consumer.session.timeout.ms=6000",
                    "--config", "consumer.heartbeat.interval.ms=1000", *extra]
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        return self

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        assert code == 0, f"wordcount exited {code} after SIGTERM\n{self.log_path.read_text()[-3000:]}"

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Output:
    """Reads the output topic from the start, keeping each word's latest count and its history."""

    def __init__(self, broker, isolation="read_uncommitted"):
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"reader-{time.time()}",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                  "isolation.level": isolation})
        self.consumer.subscribe([OUTPUT])
        self.latest = {}
        self.backwards = []

    def read_until(self, expected, timeout=120, at_least=False):
        def caught_up():
            for m in self.consumer.consume(1000, 0.2):
                if m.error():
                    assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                    continue
                word, (count,) = m.key().decode(), struct.unpack(">q", m.value())
                if count < self.latest.get(word, 0):
                    self.backwards.append((word, self.latest[word], count))
                self.latest[word] = count
            if at_least:
                return all(self.latest.get(w, 0) >= c for w, c in expected.items())
            return self.latest == expected

        try:
            wait_until(caught_up, timeout, interval=0, message="word counts in the output topic")
        except AssertionError as e:
            # Above the truth is a duplicate (exactly-once broken); below it, input not yet counted.
            over = {w: (c, expected.get(w, 0)) for w, c in self.latest.items() if c > expected.get(w, 0)}
            under = {w: (self.latest.get(w, 0), c) for w, c in expected.items()
                     if self.latest.get(w, 0) < c}
            raise AssertionError(f"{e}: {len(over)} words above their count (read, truth), e.g. "
                                 f"{dict(list(over.items())[:5])}; {len(under)} below, e.g. "
                                 f"{dict(list(under.items())[:5])}") from None

    def close(self):
        self.consumer.close()


@pytest.fixture
def topics(make_broker):
    b = make_broker()
    admin = ck.admin(b.bootstrap)
    for f in admin.create_topics([NewTopic(INPUT, 3, 1), NewTopic(OUTPUT, 3, 1)]).values():
        f.result(20)
    ck.wait_for_topic(b.bootstrap, INPUT, 3)
    return b


def _produce(broker, lines):
    p = ck.producer(broker.bootstrap)
    ck.produce_all(p, [{"value": line.encode()} for line in lines], INPUT)


@pytest.mark.serial  # times each count's arrival
def test_counts_show_within_a_second_with_the_examples_own_settings(topics, tmp_path):
    """The README's walkthrough: with the example's settings (Kafka Streams' 30 s commit interval)
    each line's counts reach the output topic within about a second, as the example turns the
    record cache off (Kafka's WordCountDemo does too) rather than hold counts until a commit.
    Three lines, each awaited in turn: commits 30 s apart could bring at most one in time."""
    app = App(topics, tmp_path, "quick", commit_interval_ms=None).start()
    out = Output(topics)
    _produce(topics, ["warm up"])
    out.read_until({"warm": 1, "up": 1}, at_least=True)  # the application has its tasks
    for word in ("kafka", "streams", "oxbow"):
        started = time.monotonic()
        _produce(topics, [word])
        out.read_until({word: 1}, at_least=True, timeout=5)
        took = time.monotonic() - started
        assert took < 1.5, f"{word}: its count came {took:.2f} s after the line"
    app.stop()
    out.close()


def test_two_instances_then_a_restart_count_exactly(topics, tmp_path):
    rng = random.Random(24)
    b = topics
    first, second = _lines(rng, 20000), _lines(rng, 5000)
    apps = [App(b, tmp_path, "a").start(), App(b, tmp_path, "b").start()]
    _produce(b, first)
    out = Output(b)
    out.read_until(_truth(first))
    for a in apps:
        a.stop()
    _produce(b, second)
    # One instance takes every task back and restores their stores from the changelogs.
    again = App(b, tmp_path, "a").start()
    out.read_until(_truth(first + second))
    again.stop()
    assert not out.backwards, f"counts went backwards: {out.backwards[:5]}"
    # Both instances had tasks: the group split the work.
    assert "assigned" in (tmp_path / "a.log").read_text() and "assigned" in (tmp_path / "b.log").read_text()
    assert re.search(r"restored [1-9]\d* records", (tmp_path / "a.log").read_text())
    out.close()


def test_kill_9_loses_nothing_at_least_once(topics, tmp_path):
    rng = random.Random(9)
    b = topics
    lines = _lines(rng, 15000)
    app = App(b, tmp_path, "k").start()
    _produce(b, lines[:7000])
    out = Output(b)
    out.read_until({"kafka": 1}, at_least=True)  # processing has begun
    time.sleep(rng.random())  # a random point in the processing
    app.kill()
    _produce(b, lines[7000:])
    app = App(b, tmp_path, "k").start()
    # At least once: every word reaches at least its true count (reprocessing may count twice).
    out.read_until(_truth(lines), at_least=True)
    app.stop()
    out.close()


def test_kill_9_repeatedly_exactly_once(topics, tmp_path):
    """exactly_once_v2: killed -9 at random points, the committed output is the true counts, and no
    committed count ever goes backwards (an uncommitted, aborted update is never seen)."""
    rng = random.Random(2)
    b = topics
    lines = _lines(rng, 20000)
    out = Output(b, isolation="read_committed")
    app = App(b, tmp_path, "e", guarantee="exactly_once_v2").start()
    chunks = [lines[i:i + 5000] for i in range(0, len(lines), 5000)]
    for chunk in chunks[:-1]:
        _produce(b, chunk)
        out.read_until({"kafka": 1}, at_least=True)
        time.sleep(rng.random() * 1.5)
        app.kill()
        app = App(b, tmp_path, "e", guarantee="exactly_once_v2").start()
    _produce(b, chunks[-1])
    out.read_until(_truth(lines))
    app.stop()
    assert not out.backwards, f"committed counts went backwards: {out.backwards[:5]}"
    out.close()


def test_missing_source_topic_is_one_clear_error(make_broker, tmp_path):
    b = make_broker()
    app = App(b, tmp_path, "m").start()
    code = app.proc.wait(60)
    text = (tmp_path / "m.log").read_text()
    assert code == 1, text
    assert "MissingSourceTopicException" in text and INPUT in text, text


def test_same_word_count_in_the_test_driver_and_on_the_broker(topics, tmp_path):
    """With the cache off, the test driver (`wordcount --driver`) and the broker yield the same
    updates: every word's counts 1, 2, ..., n in order, ending at the truth."""
    rng = random.Random(77)
    lines = _lines(rng, 3000)
    truth = _truth(lines)
    expected = {w: list(range(1, n + 1)) for w, n in truth.items()}
    no_cache = ["--config", "statestore.cache.max.bytes=0"]
    done = subprocess.run([WORDCOUNT, "--driver", *no_cache], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    driver = {}
    for row in done.stdout.splitlines():
        word, count = row.rsplit(" ", 1)
        driver.setdefault(word, []).append(int(count))
    assert driver == expected

    app = App(topics, tmp_path, "parity", extra=tuple(no_cache)).start()
    _produce(topics, lines)
    out = Output(topics)
    history = {}
    original = out.consumer.consume

    def recording(n, t):
        messages = original(n, t)
        for m in messages:
            if not m.error():
                history.setdefault(m.key().decode(), []).append(struct.unpack(">q", m.value())[0])
        return messages

    out.consumer = type("Recording", (), {"consume": staticmethod(recording), "close": out.consumer.close})()
    out.read_until(truth)
    app.stop()
    out.close()
    assert history == driver


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_production_exception_handler(topics, tmp_path, guarantee):
    """A record the producer cannot write (here a 200 kB word over producer.message.max.bytes,
    on its way to the repartition topic): the default handler fails the application with one
    clear error; LogAndContinueProductionExceptionHandler skips it, counts it, and every other
    word is counted exactly. Under exactly-once too: the producer refuses the record before it
    joins a transaction."""
    rng = random.Random(3)
    lines = _lines(rng, 2000)
    poison = "z" * 200_000
    _produce(topics, lines[:1000] + [f"kafka {poison} log"] + lines[1000:])
    small = ("--config", "producer.message.max.bytes=100000")
    failing = App(topics, tmp_path, "fail", app_id="wc-fail", guarantee=guarantee, extra=small).start()
    code = failing.proc.wait(120)
    text = failing.log_path.read_text()
    assert code == 1, text[-2000:]
    assert "wc-fail-counts-store-repartition" in text and "too large" in text.lower(), text[-2000:]

    port = free_port()
    skipping = App(topics, tmp_path, "skip", app_id="wc-skip", guarantee=guarantee, extra=small + (
        "--config", "default.production.exception.handler=LogAndContinueProductionExceptionHandler",
        "--metrics-listener", f"127.0.0.1:{port}")).start()
    out = Output(topics, isolation="read_committed")
    out.read_until(_truth(lines + ["kafka log"]))
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    assert re.search(r'oxbow_streams_thread_production_errors_skipped_total\{thread_id="[^"]+"\} 1(\.0)?\n', text), text
    skipping.stop()
    out.close()


def test_production_exception_handler_callback(topics, tmp_path):
    """KafkaStreams::setProductionExceptionHandler: the example's handler is handed the record the
    producer refused (its topic and bytes), answers CONTINUE, and every other word is counted."""
    rng = random.Random(4)
    lines = _lines(rng, 2000)
    poison = "z" * 200_000
    _produce(topics, lines[:1000] + [f"kafka {poison} log"] + lines[1000:])
    port = free_port()
    app = App(topics, tmp_path, "callback", app_id="wc-callback", extra=(
        "--config", "producer.message.max.bytes=100000", "--skip-production-errors",
        "--metrics-listener", f"127.0.0.1:{port}")).start()
    out = Output(topics)
    out.read_until(_truth(lines + ["kafka log"]))
    text = app.log_path.read_text()
    reported = re.findall(
        r"wordcount: skipping a record for (\S+) partition -?\d+ \((\d+)-byte key", text)
    assert reported == [("wc-callback-counts-store-repartition", "200000")], text[-2000:]
    from test_streams_state import _scrape, _total
    assert _total(_scrape(port), "oxbow_streams_thread_production_errors_skipped_total") == 1
    app.stop()
    assert out.latest == _truth(lines + ["kafka log"])
    out.close()


def test_stream_threads_added_and_removed_at_run_time(topics, tmp_path):
    """SIGUSR1/SIGUSR2 make the example call addStreamThread()/removeStreamThread(): the new
    thread takes tasks and processes, the removed one hands them back, counts stay exact."""
    from test_streams_state import _scrape, _total
    rng = random.Random(31)
    lines = _lines(rng, 9000)
    port = free_port()
    app = App(topics, tmp_path, "threads", extra=("--metrics-listener", f"127.0.0.1:{port}")).start()
    out = Output(topics)
    _produce(topics, lines[:3000])
    out.read_until(_truth(lines[:3000]))
    app.proc.send_signal(signal.SIGUSR1)
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_alive_stream_threads") == 2, 60,
               message="two stream threads")
    # The group has given the new thread its tasks (and its restoration is done).
    wait_until(lambda: "wc-StreamThread-2: restored" in app.log_path.read_text(), 60,
               message="the new thread's tasks")
    _produce(topics, lines[3000:6000])
    out.read_until(_truth(lines[:6000]))
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_thread_process_records_total",
                              thread_id="wc-StreamThread-2") > 0, 30, message="the new thread processing")
    app.proc.send_signal(signal.SIGUSR2)
    wait_until(lambda: _total(_scrape(port), "oxbow_streams_alive_stream_threads") == 1, 60,
               message="one stream thread again")
    _produce(topics, lines[6000:])
    out.read_until(_truth(lines))
    app.stop()
    out.close()
    log = app.log_path.read_text()
    assert "added stream thread wc-StreamThread-2" in log and "removed stream thread wc-StreamThread-2" in log


def test_repartition_topic_kept_forever_and_purged_once_committed(topics, tmp_path):
    """As Kafka Streams: repartition topics are created with retention.ms=-1 (nothing ages out
    while the application is down), and what the application has committed is deleted from them
    (DeleteRecords) every repartition.purge.interval.ms."""
    rng = random.Random(31)
    b = topics
    lines = _lines(rng, 3000)
    app = App(b, tmp_path, "a", extra=("--config", "repartition.purge.interval.ms=300")).start()
    _produce(b, lines)
    out = Output(b)
    out.read_until(_truth(lines))
    admin = ck.admin(b.bootstrap)
    repartition = [t for t in admin.list_topics(timeout=10).topics if t.startswith("wc-") and t.endswith("-repartition")]
    assert len(repartition) == 1, repartition
    topic = repartition[0]
    config = list(admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)]).values())[0].result(20)
    assert config["retention.ms"].value == "-1"
    assert config["cleanup.policy"].value == "delete"

    marks = []

    def purged():
        marks[:] = [ck.watermarks(b.bootstrap, topic, p) for p in range(3)]
        # Every word went through the topic (ten words: not every partition gets one); each
        # partition's start moved up to its end.
        return all(low == high for low, high in marks) and sum(high for _, high in marks) > 0

    try:
        wait_until(purged, 30, message=f"{topic} purged up to its end")
    except AssertionError as e:
        raise AssertionError(f"{e}; (low, high) watermarks: {marks}") from None
    app.stop()
    out.close()
