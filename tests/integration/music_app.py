"""Helpers for the Kafka Music tests (test_kafka_music.py): the platform (a broker, a registry and
the example's topics), instances of build/examples/kafka-music, Avro in Confluent's wire format
written here without the library, and an independent model of the charts.

Written for any number of instances: MusicPlatform.start_instance() may be called again for a
second one (each gets its own port and state directory), and every query helper takes the
instance to ask, since any instance must answer any request.
"""

import json
import os
import pathlib
import re
import signal
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, track, wait_until
from test_registry import Registry, http

EXAMPLES = pathlib.Path(OXBOW_BIN).parent / "examples"
MUSIC_BIN = os.environ.get("OXBOW_KAFKA_MUSIC", str(EXAMPLES / "kafka-music"))
DRIVER_BIN = os.environ.get("OXBOW_KAFKA_MUSIC_DRIVER", str(EXAMPLES / "kafka-music-driver"))

APP_ID = "kafka-music-charts"
PLAY_EVENTS, SONG_FEED = "play-events", "song-feed"
STORES = {"all-songs", "song-play-count", "top-five-songs-by-genre", "top-five-songs"}
# What a stream thread logs when it has restored stores (from the changelogs) before processing.
RESTORED = re.compile(r"stream thread \S+: restored (\d+) records into (\d+) stores")
MIN_CHARTABLE_MS = 30_000

NAMESPACE = "io.confluent.examples.streams.avro"
PLAY_EVENT_SCHEMA = {"type": "record", "name": "PlayEvent", "namespace": NAMESPACE, "fields": [
    {"name": "song_id", "type": "long"}, {"name": "duration", "type": "long"}]}
SONG_SCHEMA = {"type": "record", "name": "Song", "namespace": NAMESPACE, "fields": [
    {"name": f, "type": "long" if f == "id" else "string"}
    for f in ("id", "album", "artist", "name", "genre")]}


# ---------------------------------------------------------------------------------------------
# Avro binary in Confluent's framing: magic byte 0, the schema id (4 bytes big-endian), the datum.

def _long(n):
    n = (n << 1) ^ (n >> 63)  # zig-zag
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _string(s):
    data = s.encode()
    return _long(len(data)) + data


def _frame(schema_id, payload):
    return b"\x00" + struct.pack(">i", schema_id) + payload


def read_long(data, at):
    shift = value = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (value >> 1) ^ -(value & 1), at


def decode_play(data):
    """(schema id, song_id, duration) of a PlayEvent in Confluent's framing."""
    assert data[0] == 0, "no magic byte"
    schema_id = struct.unpack(">i", data[1:5])[0]
    song_id, at = read_long(data, 5)
    duration, at = read_long(data, at)
    assert at == len(data)
    return schema_id, song_id, duration


# ---------------------------------------------------------------------------------------------
# The platform and the instances

class MusicPlatform:
    """A broker, a registry, and the two input topics with `partitions` partitions each."""

    def __init__(self, broker, tmp_path, partitions=1):
        self.broker = broker
        self.tmp_path = tmp_path
        self.registry = Registry(broker, tmp_path).start()
        self.instances = []
        admin = ck.admin(broker.bootstrap)
        for f in admin.create_topics([NewTopic(t, partitions, 1) for t in (PLAY_EVENTS, SONG_FEED)]).values():
            f.result(20)
        for t in (PLAY_EVENTS, SONG_FEED):
            ck.wait_for_topic(broker.bootstrap, t, partitions)
        self.play_schema_id = self._register(f"{PLAY_EVENTS}-value", PLAY_EVENT_SCHEMA)
        self.song_schema_id = self._register(f"{SONG_FEED}-value", SONG_SCHEMA)
        # Keys as Java's default partitioner places them (murmur2), which is where Streams looks
        # for a song when it joins a play with the table.
        self.producer = ck.producer(broker.bootstrap, partitioner="murmur2_random")

    def _register(self, subject, schema):
        status, body = http("POST", f"{self.registry.url}/subjects/{subject}/versions",
                            {"schema": json.dumps(schema)})
        assert status == 200, body
        return json.loads(body)["id"]

    def send_songs(self, songs):
        """songs: dicts with id, album, artist, name, genre, written as new versions."""
        records = [{"key": struct.pack(">q", s["id"]),
                    "value": _frame(self.song_schema_id, _long(s["id"]) + b"".join(
                        _string(s[f]) for f in ("album", "artist", "name", "genre")))}
                   for s in songs]
        ck.produce_all(self.producer, records, SONG_FEED)

    def send_plays(self, plays, region="UK"):
        """plays: (song_id, duration_ms) pairs, in order."""
        records = [{"key": region.encode(),
                    "value": _frame(self.play_schema_id, _long(song_id) + _long(duration))}
                   for song_id, duration in plays]
        ck.produce_all(self.producer, records, PLAY_EVENTS)

    def changelog_end_offsets(self):
        """{topic: [end offset of each partition]} of the application's changelog topics
        ("<application.id>-<store>-changelog"): how many records restoring them from their start
        would read (compaction removes records, never offsets)."""
        names = ck.admin(self.broker.bootstrap).list_topics(timeout=10).topics
        c = Consumer({"bootstrap.servers": self.broker.bootstrap, "group.id": APP_ID + "-test-reader",
                      "enable.auto.commit": False})
        try:
            return {t: [c.get_watermark_offsets(TopicPartition(t, p), timeout=10, cached=False)[1]
                        for p in sorted(names[t].partitions)]
                    for t in sorted(names) if t.startswith(APP_ID + "-") and t.endswith("-changelog")}
        finally:
            c.close()

    def run_driver(self, *args, timeout=60):
        proc = subprocess.run([DRIVER_BIN, "--bootstrap-server", self.broker.bootstrap,
                               "--schema-registry-url", self.registry.url, *args],
                              capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def start_instance(self, name=None, properties=None):
        instance = MusicInstance(self, name or f"music{len(self.instances)}", properties).start()
        self.instances.append(instance)
        return instance

    def _topics_in_processing_order(self):
        """The inputs, then each repartition topic after the ones that feed it."""
        names = ck.admin(self.broker.bootstrap).list_topics(timeout=10).topics
        internal = [t for t in names if t.startswith(APP_ID + "-") and t.endswith("-repartition")]

        def rank(topic):
            return (0 if "KSTREAM-MAP" in topic else 1 if "song-play-count" in topic else 2, topic)
        return [PLAY_EVENTS, SONG_FEED] + sorted(internal, key=rank), names

    def consumed(self):
        """Whether the application's group has committed every record of every topic it reads,
        checked upstream first: a task commits only after what it wrote downstream is acknowledged,
        so a pass that finds every topic consumed in this order leaves nothing in flight."""
        topics, metadata = self._topics_in_processing_order()
        if len(topics) < 5:  # the repartition topics are not there yet
            return False
        c = Consumer({"bootstrap.servers": self.broker.bootstrap, "group.id": APP_ID,
                      "enable.auto.commit": False})
        try:
            for topic in topics:
                partitions = [TopicPartition(topic, p) for p in metadata[topic].partitions]
                committed = {tp.partition: tp.offset for tp in c.committed(partitions, timeout=10)}
                for tp in partitions:
                    low, high = c.get_watermark_offsets(tp, timeout=10, cached=False)
                    if high > 0 and committed[tp.partition] < high:
                        return False
            return True
        finally:
            c.close()

    def wait_consumed(self, timeout=90):
        wait_until(self.consumed, timeout, interval=0.2,
                   message="the application to consume and commit every input and repartition record"
                           + "".join(f"\n--- {i.name} ---\n{i.tail()}" for i in self.instances))

    def close(self):
        for i in self.instances:
            if i.running():
                i.stop()
        self.producer.flush(10)
        self.producer = None  # its client goes now, not after the broker (it would log refusals)
        self.registry.stop()


class MusicInstance:
    """One build/examples/kafka-music process on its own port, as application.server
    127.0.0.1:<port>; stdout and stderr go to one log file."""

    def __init__(self, platform, name, properties=None):
        self.platform = platform
        self.name = name
        self.port = free_port()
        self.log_path = platform.tmp_path / f"{name}.log"
        props = {"commit.interval.ms": "100",
                 # A failed instance's tasks move after 6 s rather than librdkafka's 45 s.
                 "consumer.session.timeout.ms": "6000",
                 "consumer.heartbeat.interval.ms": "500"}
        props.update(properties or {})
        self.cmd = [MUSIC_BIN, "--port", str(self.port), "--host", "127.0.0.1",
                    "--bootstrap-server", platform.broker.bootstrap,
                    "--schema-registry-url", platform.registry.url,
                    "--state-dir", str(platform.tmp_path / f"state-{name}")]
        for k, v in props.items():
            self.cmd += ["--property", f"{k}={v}"]
        self.proc = None

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL))
        wait_until(lambda: self.running() and "STATE REBALANCING -> RUNNING" in self.text(), 60,
                   message=f"{self.name} to reach RUNNING")
        assert self.running(), self.tail()
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def text(self):
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def tail(self, n=3000):
        return self.text()[-n:]

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        assert code == 0, f"{self.name} exited {code}\n{self.tail()}"

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/kafka-music{path}"

    def get(self, path, headers=None, timeout=15):
        """(status, body parsed as JSON keeping field order, or the text) for GET /kafka-music<path>."""
        try:
            with urllib.request.urlopen(urllib.request.Request(self.url(path), headers=headers or {}),
                                        timeout=timeout) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        try:
            return status, json.loads(text, object_pairs_hook=lambda pairs: pairs)
        except ValueError:
            return status, text

    def chart(self, genre=None):
        return self.get(chart_path(genre))

    def local_chart(self, genre=None):
        """The chart as this instance's own stores hold it: a request that says it was forwarded
        already (Via) is never forwarded again, so the owner of the chart's key answers it and
        any other instance answers 404 (503 while its stores cannot be read)."""
        return self.get(chart_path(genre), headers={"Via": "1.1 oxbow-streams"})

    def restored_records(self, since=0):
        """The record counts of the restorations its log reports after character `since`."""
        return [int(n) for n, _ in RESTORED.findall(self.text()[since:])]

    def wait_for(self, path_or_genre, expected, timeout=60, status=200):
        """Polls a chart ("all" for the overall one, else a genre) until it is `expected`
        (a list of (artist, album, name, plays)); fails with the last answer on timeout."""
        last = []

        def matches():
            got = self.chart(None if path_or_genre == "all" else path_or_genre)
            last[:] = [got]
            return got[0] == status and chart_rows(got[1]) == expected
        try:
            wait_until(matches, timeout, interval=0.1, message=f"chart {path_or_genre!r} from {self.name}")
        except AssertionError as e:
            raise AssertionError(f"{e}\nexpected {expected}\nlast answer {last}\n--- log ---\n{self.tail()}")


def chart_path(genre=None):
    return "/charts/top-five" if genre is None else "/charts/genre/" + urllib.parse.quote(genre, safe="")


def chart_rows(body):
    """A chart's JSON (fields in order, as pairs) as [(artist, album, name, plays)], checking the
    field names and their order."""
    if not isinstance(body, list):
        return body
    rows = []
    for entry in body:
        assert [k for k, _ in entry] == ["artist", "album", "name", "plays"], entry
        rows.append(tuple(v for _, v in entry))
    return rows


# ---------------------------------------------------------------------------------------------
# The model

class ChartModel:
    """What the example's topology computes, from the input alone.

    The count table is keyed by the whole Song record (the re-grouping's key is the joined Song),
    so a new version of a song (another genre, name or album) starts a count of its own from 1,
    and the old version's count stays in the table unchanged for good, since no play joins the
    old version again. A chart's aggregation takes out a count only when that same row changes
    (subtractor, then adder, of that row's old and new count), and its adder replaces any entry of
    the same song id. Hence:
    - a genre chart is the top five of the rows of that genre; the old version of a song that
      moved to another genre stays in its old genre's chart with its count at the time it moved;
    - the overall chart holds, per song, the count of the row updated last: the new version's
      first play replaces the old version's count, which goes back to 1.
    That replacement is a decrease, and a chart of five drops what falls below its fifth place, so
    in general the overall chart would depend on the order its updates arrive in (partitions,
    caches). It does not when no changed song was in the overall top five at the time of its
    change; check_changes_are_order_free() asserts that of the generated data, and then each chart
    is the exact top five of the values above, whatever the order and batching of the updates.
    This model assumes each song changes at most once, to a genre it never had (so that a genre
    chart never holds two rows of one song).
    """

    def __init__(self):
        self.songs = {}        # id -> the current version (dict)
        self.rows = {}         # version (tuple) -> plays counted for it
        self.latest_row = {}   # id -> the version whose count changed last

    @staticmethod
    def version(song):
        return (song["id"], song["album"], song["artist"], song["name"], song["genre"])

    def song(self, song):
        self.songs[song["id"]] = dict(song)

    def play(self, song_id, duration):
        if duration < MIN_CHARTABLE_MS or song_id not in self.songs:
            return
        v = self.version(self.songs[song_id])
        self.rows[v] = self.rows.get(v, 0) + 1
        self.latest_row[song_id] = v

    @staticmethod
    def _top(pairs):
        return sorted(pairs, key=lambda p: (-p[1], p[0]))[:5]

    def top_ids(self, genre=None):
        """[(song id, plays)] of a chart: None for the overall one, else a lower-case genre."""
        if genre is None:
            return self._top([(i, self.rows[v]) for i, v in self.latest_row.items()])
        return self._top([(v[0], n) for v, n in self.rows.items() if v[4].lower() == genre])

    def genres(self):
        return sorted({v[4].lower() for v in self.rows})

    def chart(self, genre=None):
        """As the REST service answers it: names from the songs' current versions."""
        return [(self.songs[i]["artist"], self.songs[i]["album"], self.songs[i]["name"], n)
                for i, n in self.top_ids(genre)]

    def check_changes_are_order_free(self, changed):
        top = {i for i, _ in self.top_ids()}
        assert not top & {s["id"] for s in changed}, "a changed song is in the overall top five"
        for s in changed:
            old = self.songs.get(s["id"])
            assert old is None or s["genre"].lower() != old["genre"].lower()
            assert not any(v[0] == s["id"] and v[4].lower() == s["genre"].lower() for v in self.rows)


class PlayFlow:
    """Plays sent without pause from a thread of its own, until stop(): `per_tick` plays every
    `interval` seconds, each of the song `choose(rng)` returns and a minute long, keyed by
    `regions` in turn (pick them so that every partition of play-events gets its share). `sent`
    holds every play sent, acknowledged or not yet, in order (for the model); stop() waits for them
    all to be acknowledged."""

    def __init__(self, platform, choose, regions=("UK",), interval=0.05, per_tick=1, seed=0):
        import random
        self.platform = platform
        self.regions = regions
        self.choose = choose
        self.interval = interval
        self.per_tick = per_tick
        self.rng = random.Random(seed)
        self.sent = []
        self.errors = []
        self._stop = threading.Event()
        self._producer = ck.producer(platform.broker.bootstrap, partitioner="murmur2_random", linger_ms=0)
        self._thread = threading.Thread(target=self._run, name="play-flow", daemon=True)

    def _delivered(self, err, _msg):
        if err is not None:
            self.errors.append(err)

    def _run(self):
        schema_id = self.platform.play_schema_id
        next_at = time.monotonic()
        while not self._stop.is_set():
            for _ in range(self.per_tick):
                song_id = self.choose(self.rng)
                region = self.regions[len(self.sent) % len(self.regions)]
                self._producer.produce(PLAY_EVENTS, key=region.encode(),
                                       value=_frame(schema_id, _long(song_id) + _long(60_000)),
                                       on_delivery=self._delivered)
                self.sent.append((song_id, 60_000))
            self._producer.poll(0)
            next_at += self.interval
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def start(self):
        self._producer.list_topics(PLAY_EVENTS, timeout=10)
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(30)
        assert self._producer.flush(60) == 0, "plays still undelivered"
        assert not self.errors, self.errors[:5]
        self._producer = None
        return self.sent
