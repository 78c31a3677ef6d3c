"""oxbow-streams' interactive queries against the real broker: read-only queries of an instance's
own key-value stores (KafkaStreams.store with StoreQueryParameters, ReadOnlyKeyValueStore).

The application is build/tests/streams_test_app --topology iq --query-stdin: "iq-input" counted
per key into Materialized.as("counts"), answering one query per stdin line with one line
"IQ <command>: <answer>" (tests/streams_app/main.cpp). Expected answers are computed here, and
the bounds and exceptions are Kafka Streams' (src/streams/IQ-STANDBY-FACTS.md section 1).
"""

import collections
import random
import re
import subprocess
import threading
import time

import pytest

from harness import track, wait_until
from test_streams_apps import App, _create, _produce, broker  # noqa: F401 (fixture)

PARTITIONS = 4
KEYS = [f"w{i:02d}" for i in range(40)] + ["ab", "abc", "abd", "b"]


class QueryApp(App):
    """The iq topology with a pipe to its stdin for queries."""

    def __init__(self, broker, tmp_path, name="iq", app_id="iq-app"):
        super().__init__(broker, tmp_path, "iq", name, app_id, extra=("--query-stdin",))
        self.lock = threading.Lock()

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log,
                                               stdin=subprocess.PIPE))
        return self

    def answers(self, command):
        return re.findall(r"^IQ " + re.escape(command) + r": (.*)$", self.text(), re.M)

    def query(self, command, timeout=20):
        with self.lock:
            before = len(self.answers(command))
            self.proc.stdin.write((command + "\n").encode())
            self.proc.stdin.flush()
            wait_until(lambda: len(self.answers(command)) > before, timeout,
                       message=f"an answer to {command!r}")
            return self.answers(command)[before]


def parse(answer):
    """'k=v,k=v' -> [(k, v), ...] in the order given."""
    assert not answer.startswith("ERROR"), answer
    if not answer:
        return []
    return [(k, int(v)) for k, v in (kv.split("=") for kv in answer.split(","))]


def as_dict(pairs):
    d = dict(pairs)
    assert len(d) == len(pairs), f"a key answered twice: {pairs}"
    return d


def records(keys):
    return [{"key": k.encode(), "value": b"x"} for k in keys]


def in_store_order_per_partition(pairs, partitions, reverse=False):
    """Each partition's part is sorted by key bytes (the whole need not be): the answer is a
    concatenation of at most `partitions` sorted runs."""
    runs = 1
    for (a, _), (b, _) in zip(pairs, pairs[1:]):
        if (b < a) if not reverse else (b > a):
            runs += 1
    return runs <= partitions


def test_interactive_queries_of_local_key_value_stores(broker, tmp_path):
    _create(broker, {"iq-input": PARTITIONS})
    app = QueryApp(broker, tmp_path).start()
    try:
        wait_until(lambda: app.answers("prestart"), 20, message="the prestart answer")
        assert app.answers("prestart") == [
            "ERROR StreamsNotStartedException: KafkaStreams has not been started, you can retry "
            "after calling start()"]
        app.wait_state("RUNNING", 60)

        rng = random.Random(7)
        sent = [rng.choice(KEYS) for _ in range(3000)]
        _produce(broker, "iq-input", records(sent))
        expected = collections.Counter(sent)
        wait_until(lambda: as_dict(parse(app.query("all"))) == dict(expected), 60,
                   message="all() to equal the reference counts")

        # get: present and absent keys; the timestamped view carries the update's time.
        for k in ("w00", "w17", "abc", "b"):
            assert app.query(f"get {k}") == str(expected[k])
        assert app.query("get nosuchkey") == "null"
        value, ts = app.query("ts w17").split("@")
        assert int(value) == expected["w17"] and int(ts) > 1_600_000_000_000

        # range: both ends included, by key bytes; from > to: nothing.
        got = parse(app.query("range w05 w10"))
        want = {k: n for k, n in expected.items() if "w05" <= k <= "w10"}
        assert as_dict(got) == want and "w05" in want and "w10" in want
        assert in_store_order_per_partition(got, PARTITIONS)
        rgot = parse(app.query("rrange w05 w10"))
        assert as_dict(rgot) == want
        assert in_store_order_per_partition(rgot, PARTITIONS, reverse=True)
        assert app.query("range w10 w05") == ""
        assert app.query("rrange w10 w05") == ""
        rall = parse(app.query("rall"))
        assert as_dict(rall) == dict(expected)
        assert in_store_order_per_partition(rall, PARTITIONS, reverse=True)

        # prefixScan: keys whose bytes start with the prefix ("ab" matches ab, abc, abd; not b).
        assert as_dict(parse(app.query("prefix ab"))) == {k: expected[k] for k in ("ab", "abc", "abd")}
        assert as_dict(parse(app.query("prefix w1"))) == {
            k: n for k, n in expected.items() if k.startswith("w1")}
        assert app.query("prefix zz") == ""
        assert int(app.query("count")) > 0

        # withPartition: each hosted partition's store alone; together they are all().
        union = {}
        for p in range(PARTITIONS):
            part = as_dict(parse(app.query(f"pall {p}")))
            assert not set(part) & set(union), "a key in two partitions"
            union.update(part)
        assert union == dict(expected)
        assert app.query("pall 99") == (
            "ERROR InvalidStateStorePartitionException: The specified partition 99 for store "
            "counts does not exist.")

        # Unknown names and the wrong types.
        assert app.query("bad nosuchstore") == (
            "ERROR UnknownStateStoreException: Cannot get state store nosuchstore because no such "
            "store is registered in the topology.")
        assert app.query("wrongtype").startswith(
            "ERROR InvalidStateStoreException: Cannot get state store counts because the queryable "
            "store type does not accept the actual store type")

        # Queries while records flow: no count ever goes back, and the end is the reference.
        hot = ["w00", "w01", "abc"]
        more = [rng.choice(hot) for _ in range(20000)]
        producer = threading.Thread(
            target=lambda: [_produce(broker, "iq-input", records(more[i:i + 2000]))
                            for i in range(0, len(more), 2000)])
        producer.start()
        seen = collections.defaultdict(int)
        queries = 0
        while producer.is_alive() or queries < 20:
            for k, n in parse(app.query("all")):
                assert n >= seen[k], f"{k} went back from {seen[k]} to {n}"
                seen[k] = n
            for k in hot:
                n = int(app.query(f"get {k}"))
                assert n >= seen[k], f"{k} went back from {seen[k]} to {n}"
                seen[k] = n
            queries += 1
        producer.join()
        expected.update(more)
        wait_until(lambda: as_dict(parse(app.query("all"))) == dict(expected), 60,
                   message="all() to equal the reference counts after the second batch")
        assert queries >= 20

        app.proc.stdin.close()
        app.stop()
        # After close: the instance is NOT_RUNNING and queries throw.
        assert app.answers("afterclose") == [
            "ERROR InvalidStateStoreException: KafkaStreams is not running. State is NOT_RUNNING."]
    finally:
        if app.proc.poll() is None:
            app.proc.kill()
