"""oxbow-streams' interactive queries against the real broker: read-only queries of an instance's
own key-value, window and session stores (KafkaStreams.store with StoreQueryParameters,
ReadOnlyKeyValueStore, ReadOnlyWindowStore, ReadOnlySessionStore).

The application is build/tests/streams_test_app --topology iq --query-stdin: "iq-input" counted
per key into Materialized.as("counts"), answering one query per stdin line with one line
"IQ <command>: <answer>" (tests/streams_app/main.cpp); --topology iq-windows counts
"iq-windows-input" per hopping window and per session as well. Expected answers are computed
here, and the bounds and exceptions are Kafka Streams' (src/streams/IQ-STANDBY-FACTS.md
section 1).
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

    def __init__(self, broker, tmp_path, name="iq", app_id="iq-app", topology="iq", extra=()):
        super().__init__(broker, tmp_path, topology, name, app_id,
                         extra=("--query-stdin", *extra))
        self.lock = threading.Lock()

    def start(self):
        with open(self.log_path, "ab") as log:
            self.proc = track(subprocess.Popen(self.cmd, stdout=log, stderr=log,
                                               stdin=subprocess.PIPE))
        return self

    def answers(self, command):
        # Whole lines only: a long answer reaches the log in several writes (stdio's buffer), and
        # one read between them once saw a window's count cut off after its "=".
        return re.findall(r"^IQ " + re.escape(command) + r": (.*)\n", self.text(), re.M)

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
            "store type [keyValueStore] does not accept the actual store type "
            "[TimestampedKeyValueStore] (its value serde")

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


# ---------------------------------------------------------------------------------------------
# Window and session stores (--topology iq-windows)

SIZE, ADVANCE, GAP = 10_000, 5_000, 3_000  # hopping windows; the session gap
WKEYS = [f"k{i:02d}" for i in range(16)] + ["ab", "abc", "abd", "b"]


def window_starts(t):
    """The starts of the windows holding t (TimeWindows.windowsFor): s <= t < s + SIZE, s >= 0."""
    out, s = [], t - t % ADVANCE
    while s >= 0 and s > t - SIZE:
        out.append(s)
        s -= ADVANCE
    return sorted(out)


def window_reference(sent):
    """{(key, start): (count, latest record time)} of (key, time) records in any order."""
    ref = {}
    for k, t in sent:
        for s in window_starts(t):
            n, latest = ref.get((k, s), (0, -1))
            ref[(k, s)] = (n + 1, max(latest, t))
    return ref


def session_reference(sent):
    """{key: [(start, end, count), ...] earliest first}: a key's records at most the gap apart
    form one session, whatever order they came in."""
    times = collections.defaultdict(list)
    for k, t in sent:
        times[k].append(t)
    out = {}
    for k, ts in times.items():
        ts.sort()
        sessions = [[ts[0], ts[0], 1]]
        for t in ts[1:]:
            if t - sessions[-1][1] <= GAP:
                sessions[-1][1] = t
                sessions[-1][2] += 1
            else:
                sessions.append([t, t, 1])
        out[k] = [tuple(x) for x in sessions]
    return out


def parse_windowed(answer):
    """'k@start@end=v,...' -> [(k, start, end, v), ...]; a value 'n@ts' becomes (n, ts)."""
    assert not answer.startswith("ERROR"), answer
    out = []
    for item in answer.split(",") if answer else []:
        key, value = item.split("=")
        k, start, end = key.split("@")
        v = tuple(int(x) for x in value.split("@"))
        out.append((k, int(start), int(end), v[0] if len(v) == 1 else v))
    return out


def parse_starts(answer):
    """'start=v,...' -> [(start, v), ...]"""
    return [(int(s), n) for s, n in parse(answer)]


# The stores' segment interval: max(retention / 2, 60 s) of their two days' retention. A store is
# read segment by segment (a window's start, a session's end), each segment by key bytes.
SEGMENT = 86_400_000


def window_store_key(k, start):
    """Where a window comes in a store's scan: its segment, then its key's bytes."""
    return start // SEGMENT, k.encode() + start.to_bytes(8, "big") + bytes(4)


def session_store_key(k, start, end):
    return end // SEGMENT, k.encode() + end.to_bytes(8, "big") + start.to_bytes(8, "big")


def sorted_runs(keys, reverse=False):
    """How many sorted runs the sequence is made of (one per local store at most, in scan
    order)."""
    return 1 + sum(1 for a, b in zip(keys, keys[1:]) if (b > a if reverse else b < a))


def burst_records(rng, base):
    """Each key's records in a few bursts over five minutes, shuffled (out of order)."""
    sent = []
    for k in WKEYS:
        for _ in range(rng.randint(1, 6)):
            center = base + rng.randrange(0, 300_000)
            sent += [(k, center + rng.randrange(0, 4_000)) for _ in range(rng.randint(1, 12))]
    rng.shuffle(sent)
    return sent


def timed(sent):
    return [{"key": k.encode(), "value": b"x", "timestamp": t} for k, t in sent]


def test_interactive_queries_of_window_and_session_stores(broker, tmp_path):
    _create(broker, {"iq-windows-input": PARTITIONS})
    app = QueryApp(broker, tmp_path, name="iqw", app_id="iqw-app", topology="iq-windows").start()
    try:
        app.wait_state("RUNNING", 60)
        rng = random.Random(11)
        now = int(time.time() * 1000)
        base = now - now % SIZE - 600_000  # ten minutes back, on a window boundary
        # Edge cases among the random ones: records exactly the gap apart (one session), one more
        # than the gap (two), one on a window boundary (in windows starting there and before).
        edges = [("e", base + 1_000), ("e", base + 4_000), ("e", base + 7_001),
                 ("e", base + 50_000)]
        sent = burst_records(rng, base) + edges
        _produce(broker, "iq-windows-input", timed(sent))
        wref, sref = window_reference(sent), session_reference(sent)
        assert sref["e"] == [(base + 1_000, base + 4_000, 2), (base + 7_001, base + 7_001, 1),
                             (base + 50_000, base + 50_000, 1)]
        assert wref[("e", base + 50_000)][0] == 1 and wref[("e", base + 45_000)][0] == 1

        def all_windows():
            return {(k, s): v for k, s, e, v in parse_windowed(app.query("wall"))}

        wait_until(lambda: all_windows() == {w: n for w, (n, _) in wref.items()}, 60,
                   message="all() of the window store to equal the reference counts")
        all_sessions = lambda: sorted(parse_windowed(app.query("srange a z")))  # noqa: E731
        wait_until(lambda: all_sessions() == sorted((k, s, e, n) for k, ss in sref.items()
                                                    for s, e, n in ss), 60,
                   message="the session store to equal the reference sessions")

        # all(), backwardAll(): windows of SIZE, each local store's part in scan order.
        rows = parse_windowed(app.query("wall"))
        assert all(e == s + SIZE for _, s, e, _ in rows)
        assert sorted_runs([window_store_key(k, s) for k, s, _, _ in rows]) <= PARTITIONS
        brows = parse_windowed(app.query("wball"))
        assert sorted(brows) == sorted(rows)
        assert sorted_runs([window_store_key(k, s) for k, s, _, _ in brows], True) <= PARTITIONS
        # The timestamped view: each window's latest record time.
        assert {(k, s): v for k, s, _, v in parse_windowed(app.query("wtall"))} == wref

        # fetch(key, time): the window starting exactly then.
        windows = sorted(wref)
        for k, s in rng.sample(windows, 12):
            assert app.query(f"wget {k} {s}") == str(wref[(k, s)][0])
            assert app.query(f"wtget {k} {s}") == "{}@{}".format(*wref[(k, s)])
            assert app.query(f"wget {k} {s + 1}") == "null"
        assert app.query(f"wget nokey {windows[0][1]}") == "null"

        # fetch(key, from, to): starts in [from, to], both included, oldest first.
        for k in ("k03", "abc", "e"):
            starts = sorted(s for kk, s in wref if kk == k)
            for _ in range(4):
                i = rng.randrange(len(starts))
                j = rng.randrange(i, len(starts))
                f, t = starts[i], starts[j]
                want = [(s, wref[(k, s)][0]) for s in starts if f <= s <= t]
                assert parse_starts(app.query(f"wfetch {k} {f} {t}")) == want
                assert parse_starts(app.query(f"wbfetch {k} {f} {t}")) == want[::-1]
                inner = [(s, n) for s, n in want if f < s < t]
                assert parse_starts(app.query(f"wfetch {k} {f + 1} {t - 1}")) == inner
            assert app.query(f"wfetch {k} {starts[-1]} {starts[0] - 1}") == ""
        assert app.query(f"wfetch nokey {base} {base + 600_000}") == ""

        # Key ranges with time ranges; fetchAll: every key.
        for a, b in (("ab", "b"), ("abc", "abd"), ("k05", "k09"), ("b", "ab")):
            f = base + rng.randrange(0, 150_000) // ADVANCE * ADVANCE
            t = f + rng.randrange(0, 150_000) // ADVANCE * ADVANCE
            want = {(k, s): n for (k, s), (n, _) in wref.items()
                    if a.encode() <= k.encode() <= b.encode() and f <= s <= t}
            got = parse_windowed(app.query(f"wrange {a} {b} {f} {t}"))
            assert {(k, s): n for k, s, _, n in got} == want and len(got) == len(want)
            assert sorted_runs([window_store_key(k, s) for k, s, _, _ in got]) <= PARTITIONS
            bgot = parse_windowed(app.query(f"wbrange {a} {b} {f} {t}"))
            assert sorted(bgot) == sorted(got)
            want_all = {(k, s): n for (k, s), (n, _) in wref.items() if f <= s <= t}
            got_all = parse_windowed(app.query(f"wfetchall {f} {t}"))
            assert {(k, s): n for k, s, _, n in got_all} == want_all
            assert sorted(parse_windowed(app.query(f"wbfetchall {f} {t}"))) == sorted(got_all)
        assert app.query("wrange b ab 0 9999999999999") == ""

        # withPartition: each hosted partition's store alone; together they are all().
        union = {}
        for p in range(PARTITIONS):
            part = {(k, s): v for k, s, _, v in parse_windowed(app.query(f"wpall {p}"))}
            assert not set(part) & set(union)
            union.update(part)
        assert union == wref

        # Sessions of one key: earliest first, all or those overlapping [earliest end, latest
        # start] with both bounds included; the exact session only.
        for k in ("e", "k00", "k07", "abd"):
            sessions = [(k, s, e, n) for s, e, n in sref[k]]
            assert parse_windowed(app.query(f"sfetch {k}")) == sessions
            assert parse_windowed(app.query(f"sbfetch {k}")) == sessions[::-1]
            bounds = [x for _, s, e, _ in sessions for x in (s - 1, s, e, e + 1)]
            for _ in range(6):
                earliest_end, latest_start = rng.choice(bounds), rng.choice(bounds)
                want = [x for x in sessions if x[2] >= earliest_end and x[1] <= latest_start]
                assert parse_windowed(app.query(f"sfind {k} {earliest_end} {latest_start}")) == want
                assert parse_windowed(
                    app.query(f"sbfind {k} {earliest_end} {latest_start}")) == want[::-1]
            for _, s, e, n in sessions:
                assert app.query(f"sget {k} {s} {e}") == str(n)
                assert app.query(f"sget {k} {s - 1} {e}") == "null"
                assert app.query(f"sget {k} {s} {e + 1}") == "null"
        assert app.query("sfetch nokey") == ""
        assert app.query(f"sget nokey {base} {base}") == "null"
        assert app.query(f"sfind nokey 0 {base * 2}") == ""

        # Key ranges of sessions: each local store's part in scan order.
        got = parse_windowed(app.query("srange ab b"))
        want = sorted((k, s, e, n) for k, ss in sref.items() if "ab" <= k <= "b" for s, e, n in ss)
        assert sorted(got) == want
        assert sorted_runs([session_store_key(k, s, e) for k, s, e, _ in got]) <= PARTITIONS
        bgot = parse_windowed(app.query("sbrange ab b"))
        assert sorted(bgot) == want
        assert sorted_runs([session_store_key(k, s, e) for k, s, e, _ in bgot], True) <= PARTITIONS
        earliest_end, latest_start = base + 100_000, base + 200_000
        got = parse_windowed(app.query(f"sfindr a z {earliest_end} {latest_start}"))
        assert sorted(got) == sorted((k, s, e, n) for k, ss in sref.items() for s, e, n in ss
                                     if e >= earliest_end and s <= latest_start)

        # A store asked for as another type.
        def refused(name, asked, actual):
            return ("ERROR InvalidStateStoreException: Cannot get state store " + name +
                    " because the queryable store type [" + asked + "] does not accept the "
                    "actual store type [" + actual + "].")
        assert app.query("window") == refused("window-counts", "keyValueStore",
                                              "TimestampedWindowStore")
        assert app.query("kvaswindow") == refused("counts", "windowStore",
                                                  "TimestampedKeyValueStore")
        assert app.query("sessionaswindow") == refused("session-counts", "windowStore",
                                                       "SessionStore")
        assert app.query("windowassession") == refused("window-counts", "sessionStore",
                                                       "TimestampedWindowStore")

        # Late records (older than what the tasks have seen, within the grace) while queries
        # run: no window's count ever goes back, and the end is the reference.
        more = burst_records(rng, base)
        producer = threading.Thread(
            target=lambda: [_produce(broker, "iq-windows-input", timed(more[i:i + 100]))
                            for i in range(0, len(more), 100)])
        producer.start()
        seen = {}
        queries = 0
        while producer.is_alive() or queries < 10:
            for w, n in all_windows().items():
                assert n >= seen.get(w, 0), f"{w} went back from {seen[w]} to {n}"
                seen[w] = n
            queries += 1
        producer.join()
        sent += more
        wref, sref = window_reference(sent), session_reference(sent)
        wait_until(lambda: all_windows() == {w: n for w, (n, _) in wref.items()}, 60,
                   message="the window counts after the late records")
        wait_until(lambda: all_sessions() == sorted((k, s, e, n) for k, ss in sref.items()
                                                    for s, e, n in ss), 60,
                   message="the sessions after the late records")
        assert {(k, s): v for k, s, _, v in parse_windowed(app.query("wtall"))} == wref

        app.proc.stdin.close()
        app.stop()
    finally:
        if app.proc.poll() is None:
            app.proc.kill()


def test_interactive_queries_of_a_global_table(broker, tmp_path):
    """A GlobalKTable's store answers on every instance for every key, whatever the query's
    partition (Kafka looks for a global store before the tasks' stores); updates and tombstones
    from all partitions of its topic show, compared with a reference map of the last value."""
    _create(broker, {"iq-input": PARTITIONS, "iq-names": 3})
    app = QueryApp(broker, tmp_path, topology="iq-global",
                   extra=("--config", "application.server=127.0.0.1:17090")).start()
    try:
        app.wait_state("RUNNING", 60)
        rng = random.Random(11)
        expected = {}
        batch = []
        for i in range(2000):
            k = f"n{rng.randrange(150):03d}"
            if rng.random() < 0.15:
                batch.append({"key": k.encode(), "value": None})
                expected.pop(k, None)
            else:
                v = f"name{i}"
                batch.append({"key": k.encode(), "value": v.encode()})
                expected[k] = v
        _produce(broker, "iq-names", batch)
        want = ",".join(f"{k}={v}" for k, v in sorted(expected.items()))
        wait_until(lambda: app.query("gall") == want, 60,
                   message="the global store's all() to equal the reference, in key order")
        present = sorted(expected)[:5]
        absent = [k for k in (f"n{i:03d}" for i in range(150)) if k not in expected][:3]
        assert absent, "the reference should have deleted keys"
        for k in present:
            assert app.query(f"gget {k}") == expected[k]
            # A partition the counts store does not have: ignored for a global store.
            assert app.query(f"gpget {k} {PARTITIONS + 5}") == expected[k]
            value, ts = app.query(f"gtget {k}").split("@")
            assert value == expected[k] and int(ts) > 1_600_000_000_000
        for k in absent:
            assert app.query(f"gget {k}") == "null"
        # The metadata names the global store on every instance.
        assert app.query("storemeta names").startswith("127.0.0.1:17090{counts,names}")
    finally:
        app.stop()
