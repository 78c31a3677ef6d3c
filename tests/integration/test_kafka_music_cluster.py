"""Kafka Music (examples/kafka-music) as a cluster of instances: failover to standby replicas
after kill -9, scaling out with warm-up replicas while plays flow, and interactive queries from
100 concurrent clients while plays flow. Built on music_app's helpers and model.
"""

import collections
import http.client
import json
import random
import re
import threading
import time
import urllib.parse

import pytest

from harness import free_port, wait_until
from music_app import APP_ID, ChartModel, PlayFlow, chart_path, chart_rows
from test_kafka_music import SONGS, _random_plays, broker, platform_factory  # noqa: F401 (fixtures)
from test_streams_standby import murmur2_partition
from test_streams_state import _scrape, _total

PARTITIONS = 4
# Keys that spread plays over every partition of play-events (Java's partitioner).
REGIONS = ("US", "UK", "FR", "JP")
assert sorted(murmur2_partition(r.encode(), PARTITIONS) for r in REGIONS) == list(range(PARTITIONS))
SESSION_TIMEOUT_S = 6.0  # MusicInstance's consumer.session.timeout.ms


def _with_metrics(properties):
    return {**properties, "metrics.listener": f"127.0.0.1:{free_port()}"}


def _metrics_port(instance):
    for i, arg in enumerate(instance.cmd):
        if arg == "--property" and instance.cmd[i + 1].startswith("metrics.listener="):
            return int(instance.cmd[i + 1].rsplit(":", 1)[1])
    raise AssertionError(f"{instance.name} has no metrics.listener")


def metrics(instance):
    return _scrape(_metrics_port(instance))


def _loaded_model(plays):
    model = ChartModel()
    for s in SONGS:
        model.song(s)
    for p in plays:
        model.play(*p)
    return model


def _send_random_plays(platform, rng, count):
    """`count` random plays of the 21 songs, long enough to count or just too short, spread over
    the regions; returns them."""
    plays = _random_plays(rng, count, list(range(1, 22)), [30, 31])
    for i, region in enumerate(REGIONS):
        platform.send_plays(plays[i::len(REGIONS)], region=region)
    return plays


def test_failover_to_standby_after_kill_9(platform_factory):
    """Two instances with a standby of every task each: the one holding the overall chart is
    killed with -9; the other answers the right chart (with plays sent after the kill counted)
    soon after the group gives up on the dead one, having restored only the tail of the
    changelogs its standbys had not read yet."""
    platform = platform_factory(partitions=PARTITIONS)
    # No record cache: every update reaches the changelogs, so that they are thousands of records
    # long and replaying them would show.
    props = {"num.standby.replicas": "1", "statestore.cache.max.bytes": "0"}
    a = platform.start_instance("a", _with_metrics(props))
    b = platform.start_instance("b", _with_metrics(props))
    platform.run_driver("--plays", "0")
    platform.wait_consumed()
    rng = random.Random(11)
    plays = _send_random_plays(platform, rng, 3000)
    model = _loaded_model(plays)
    platform.wait_consumed()
    for music in (a, b):
        music.wait_for("all", model.chart())

    # The owner of the overall chart answers it from its own store; the other one does not hold
    # its key (404) or no partition of its store at all (503).
    owner = a if a.local_chart()[0] == 200 else b
    survivor = b if owner is a else a
    assert chart_rows(owner.local_chart()[1]) == model.chart()
    assert survivor.local_chart()[0] in (404, 503), survivor.local_chart()
    status, holders = survivor.get("/instances/top-five-songs")
    assert status == 200 and owner.port in [dict(i)["port"] for i in holders], holders
    chart_partition = murmur2_partition(b"all", PARTITIONS)

    # Both keep standby tasks, read up to their changelogs' end; the survivor's include the one
    # of the overall chart's partition.
    def standbys_caught_up(music):
        m = metrics(music)
        lags = m.get("oxbow_streams_standby_lag_records", [])
        return (_total(m, "oxbow_streams_standby_tasks") > 0 and
                _total(m, "oxbow_streams_standby_records_total") > 0 and
                lags and all(v == 0 for _, v in lags))
    for music in (a, b):
        wait_until(lambda: standbys_caught_up(music), 30, message=f"{music.name}'s standbys caught up")
        assert "standby task" in music.text(), music.tail()
    standby_stores = {(labels["store"], labels["partition"]) for labels, _ in
                      metrics(survivor)["oxbow_streams_standby_lag_records"]}
    assert ("top-five-songs", str(chart_partition)) in standby_stores, standby_stores

    changelogs = platform.changelog_end_offsets()  # what a restoration from scratch would read
    chart_changelog = changelogs[f"{APP_ID}-top-five-songs-changelog"][chart_partition]
    all_changelogs = sum(sum(ends) for ends in changelogs.values())
    assert chart_changelog > 1000, changelogs
    mark = len(survivor.text())
    restored_before = _total(metrics(survivor), "oxbow_streams_thread_restored_records_total")

    owner.kill()
    killed_at = time.monotonic()
    more = _random_plays(rng, 300, list(range(1, 22)), [30])
    platform.send_plays(more, region="UK")
    for p in more:
        model.play(*p)
    bound = SESSION_TIMEOUT_S + 12
    survivor.wait_for("all", model.chart(), timeout=bound)
    failover_s = time.monotonic() - killed_at
    restored = survivor.restored_records(mark)
    restored_metric = (_total(metrics(survivor), "oxbow_streams_thread_restored_records_total")
                       - restored_before)
    print(f"\nfailover: the right chart from the survivor {failover_s:.1f} s after kill -9 "
          f"(bound {bound:.0f} s, session timeout {SESSION_TIMEOUT_S:.0f} s); restored {restored} "
          f"(metric +{restored_metric:.0f}) records, where the overall chart's changelog partition "
          f"holds {chart_changelog} and all changelogs {all_changelogs}")
    assert failover_s > SESSION_TIMEOUT_S - 1  # it took the group's giving up, as it must
    # It took the dead one's tasks over (a restoration after the kill) from its standbys: a tail
    # at most, not the changelogs from their start.
    assert restored, survivor.tail()
    assert sum(restored) < chart_changelog / 10, (restored, changelogs, survivor.tail())
    assert restored_metric < chart_changelog / 10, (restored_metric, changelogs)

    for genre in model.genres():
        survivor.wait_for(genre, model.chart(genre), timeout=10)
    status, instances = survivor.get("/instances")
    assert status == 200 and [dict(i)["port"] for i in instances] == [survivor.port], instances
    platform.wait_consumed()
    survivor.wait_for("all", model.chart(), timeout=10)


def _song_chooser():
    """A skewed popularity over the example's songs, as _random_plays draws them."""
    ids = [s["id"] for s in SONGS]
    weights = [1.0 / (1 + k) ** 0.7 for k in range(len(ids))]
    return lambda rng: rng.choices(ids, weights)[0]


class ChartSampler:
    """Asks the instances in `instances` (a list that may grow) in turn for the charts in turn
    (the overall one, then each genre's), one request every `interval` seconds, from a thread of
    its own; keeps per chart (time, total plays of its songs, or None when the answer was not a
    chart). Every play of a song in a chart raises its total, so while plays flow each chart's
    total keeps reaching new highs; one that does not for long is a part of the topology that
    stopped (the charts together take in every sub-topology, and the counts of most songs)."""

    def __init__(self, instances, charts, interval=0.05):
        self.instances = instances
        self.charts = charts  # None for the overall chart, else a lower-case genre
        self.interval = interval
        self.samples = {chart: [] for chart in charts}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="chart-sampler", daemon=True)

    def _run(self):
        n = 0
        while not self._stop.is_set():
            music = self.instances[n % len(self.instances)]
            chart = self.charts[n % len(self.charts)]
            n += 1
            try:
                status, body = music.get(chart_path(chart), timeout=5)
                total = sum(dict(e)["plays"] for e in body) if status == 200 else None
            except OSError:
                total = None
            self.samples[chart].append((time.monotonic(), total))
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(30)

    def rises(self):
        """How many times the charts' totals reached a new high, all charts together."""
        n = 0
        for samples in list(self.samples.values()):
            high = -1
            for _, total in list(samples):
                if total is not None and total > high:
                    high, n = total, n + 1
        return n

    def longest_stall(self, start, end):
        """(the longest time within [start, end] a chart's total went without reaching a new
        high, that chart, when that began): a transient lower answer, or none, is no progress."""
        worst = (0.0, None, start)
        for chart, samples in self.samples.items():
            high, since = -1, start
            for ts, total in samples + [(end, None)]:
                if ts >= start and ts - since > worst[0] and (total is None or total > high):
                    if ts <= end:
                        worst = (ts - since, chart, since)
                if total is None:
                    continue
                if ts < start:
                    high = max(high, total)
                elif ts <= end and total > high:
                    high, since = total, ts
        return worst


STORE_LINE = re.compile(r"task (\d+)_(\d+): store (\S+) is up to date with (\S+) at offset")
ASSIGNED = re.compile(r"task (\d+_\d+) assigned")
STANDBY_OPENED = re.compile(r"standby task (\d+_\d+) opened")
HANDOVER_BOUND_S = 20  # from the third instance's start until it holds stateful tasks
STALL_BOUND_S = 5  # the longest a chart may stay still while plays flow


@pytest.mark.parametrize("preload", [4000, 40000], ids=["little-state", "much-state"])
def test_scale_out_with_warm_ups_while_plays_flow(platform_factory, preload):
    """Two instances count while plays flow; a third joins. It gets warm-up replicas first (the
    tasks stay where their state is), asks for the hand-over as soon as they caught up (the
    probing interval is ten minutes here, so nothing else would move them within the test), and
    ends up with stateful tasks of its own, restoring only a tail; the charts keep moving
    throughout, and in the end every instance answers the model's charts. With little state
    (changelogs of a few thousand records) a warm-up can copy everything in its first read, with
    much state (tens of thousands) it cannot."""
    platform = platform_factory(partitions=PARTITIONS)
    props = {"statestore.cache.max.bytes": "0", "acceptable.recovery.lag": "100",
             "max.warmup.replicas": "4", "probing.rebalance.interval.ms": "600000"}
    a = platform.start_instance("a", _with_metrics(props))
    b = platform.start_instance("b", _with_metrics(props))
    platform.run_driver("--plays", "0")
    platform.wait_consumed()
    rng = random.Random(12)
    plays = _send_random_plays(platform, rng, preload)
    platform.wait_consumed()

    instances = [a, b]
    flow = PlayFlow(platform, _song_chooser(), REGIONS, interval=0.025, seed=3).start()
    sampler = ChartSampler(instances, [None, "punk", "hip hop", "pop"]).start()
    try:
        flow_started = time.monotonic()
        wait_until(lambda: sampler.rises() >= 20, 30, message="the charts to move with the plays")
        c = platform.start_instance("c", _with_metrics(props))
        joined = time.monotonic()
        instances.append(c)

        def c_holds_state():
            status, body = a.get("/instances")
            return (status == 200 and len(body) == 3 and
                    all(dict(i)["storeNames"] for i in body))  # stores: stateful tasks
        try:
            wait_until(c_holds_state, HANDOVER_BOUND_S, message="the third instance to hold stateful tasks")
        except AssertionError as e:
            lags = metrics(c).get("oxbow_streams_standby_lag_records")
            raise AssertionError(
                f"{e}\nits warm-ups {STANDBY_OPENED.findall(c.text())}, their lags {lags}; "
                f"'warm-up replicas caught up' logged: {'warm-up replicas caught up' in c.text()}"
                f"\n/instances: {a.get('/instances')}") from None
        handed_over = time.monotonic()
        changelogs = platform.changelog_end_offsets()
        rises = sampler.rises()
        wait_until(lambda: sampler.rises() >= rises + 20 and time.monotonic() > handed_over + 3, 30,
                   message="the charts to move on")
    finally:
        sent = flow.stop()
        flow_stopped = time.monotonic()
        sampler.stop()
    longest, stalled, stall_began = sampler.longest_stall(flow_started + 0.5, flow_stopped)

    # The stateful tasks the third one took, their changelog partitions, and what it restored.
    text = c.text()
    stores = {}  # subtopology -> changelog topics
    for music in (a, b, c):
        for sub, _, _, topic in STORE_LINE.findall(music.text()):
            stores.setdefault(sub, set()).add(topic)
    taken = [t for t in ASSIGNED.findall(text) if t.split("_")[0] in stores]
    warmed = STANDBY_OPENED.findall(text)
    # (all-songs is restored from song-feed, no changelog of its own: not counted)
    moved_records = sum(changelogs.get(topic, [0] * PARTITIONS)[int(t.split("_")[1])]
                        for t in taken for topic in stores[t.split("_")[0]])
    restored = c.restored_records()
    print(f"\nscale-out ({preload} plays first): {len(sent)} plays in {flow_stopped - flow_started:.1f} s; "
          f"the third instance held stateful tasks {handed_over - joined:.1f} s after it started "
          f"(bound {HANDOVER_BOUND_S} s): {taken}, warmed up {warmed}; it restored {restored} "
          f"records, their changelogs hold {moved_records}; longest stall of a chart "
          f"{longest:.2f} s ({stalled or 'overall'}, from {stall_began - joined:+.1f} s after the "
          f"third one started; bound {STALL_BOUND_S} s)")
    assert "warm-up replicas caught up; rebalancing" in text, c.tail()
    assert taken and set(taken) <= set(warmed), (taken, warmed)  # each one warmed up first
    for t in taken:
        assert text.index(f"standby task {t} opened") < text.index(f"task {t} assigned"), t
    assert sum(restored) < max(moved_records / 10, 50), (restored, moved_records, changelogs)
    assert longest < STALL_BOUND_S, f"chart {stalled or 'overall'} stood still for {longest:.1f} s"

    model = _loaded_model(plays + sent)
    platform.wait_consumed()
    for music in (a, b, c):
        music.wait_for("all", model.chart(), timeout=20)
        for genre in model.genres():
            music.wait_for(genre, model.chart(genre), timeout=20)
        status, body = music.get("/instances")
        assert status == 200 and sorted(dict(i)["port"] for i in body) == sorted(m.port for m in (a, b, c))


CLIENTS = 100
LOAD_S = 10.0
GENRES = {"punk": "Punk", "hip hop": "Hip Hop", "pop": "Pop"}  # the example's, lower-cased


class Client:
    """One HTTP/1.1 client on keep-alive connections (one per instance). A connection the server
    closed between two requests is opened again and the request sent again once, as HTTP clients
    do for idempotent requests; that is counted, not an error."""

    def __init__(self, instances):
        self.conns = {m.port: http.client.HTTPConnection("127.0.0.1", m.port, timeout=15) for m in instances}
        self.reconnects = 0

    def get(self, music, path):
        conn = self.conns[music.port]
        for attempt in (0, 1):
            try:
                conn.request("GET", "/kafka-music" + path)
                response = conn.getresponse()
                return response.status, response.read().decode()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                conn.close()
                if attempt:
                    raise
                self.reconnects += 1

    def close(self):
        for conn in self.conns.values():
            conn.close()


def check_chart(body, genre=None):
    """A chart answer: at most five entries of known songs (of that genre), most plays first, equal
    plays the smaller song id first, each song once."""
    entries = json.loads(body, object_pairs_hook=lambda pairs: pairs)
    assert isinstance(entries, list) and 1 <= len(entries) <= 5, body
    ranked = []
    for entry in entries:
        assert [k for k, _ in entry] == ["artist", "album", "name", "plays"], body
        fields = dict(entry)
        song = SONG_BY_FIELDS.get((fields["artist"], fields["album"], fields["name"]))
        assert song is not None, f"not a known song: {fields}"
        assert genre is None or song["genre"].lower() == genre, (genre, body)
        assert isinstance(fields["plays"], int) and fields["plays"] >= 1, body
        ranked.append((-fields["plays"], song["id"]))
    assert ranked == sorted(ranked) and len({i for _, i in ranked}) == len(ranked), body


SONG_BY_FIELDS = {(s["artist"], s["album"], s["name"]): s for s in SONGS}


@pytest.mark.serial  # a load whose sessions must hold and whose throughput is checked
def test_interactive_queries_from_100_clients_while_plays_flow(platform_factory):
    """100 clients query both instances (charts, genre charts, songs, unknown songs among them)
    for 10 s while plays flow and the group stays as it is: no answer is an error, every chart
    is well-formed; once the plays are processed both answer the model's charts."""
    platform = platform_factory(partitions=PARTITIONS)
    a, b = platform.start_instance("a"), platform.start_instance("b")
    platform.run_driver("--plays", "0")
    platform.wait_consumed()
    rng = random.Random(13)
    plays = _send_random_plays(platform, rng, 2000)
    platform.wait_consumed()
    model = _loaded_model(plays)
    assert sorted(model.genres()) == sorted(GENRES)  # every genre has its chart before the load
    for music in (a, b):
        music.wait_for("all", model.chart())

    def settled(music):
        status, body = music.get("/instances")
        return (status == 200 and sorted(dict(i)["port"] for i in body) == sorted([a.port, b.port]) and
                all(dict(i)["storeNames"] for i in body) and
                music.text().rsplit("STATE ", 1)[1].startswith("REBALANCING -> RUNNING"))
    wait_until(lambda: settled(a) and settled(b), 30, message="the group to settle")
    rebalances = [m.text().count("RUNNING -> REBALANCING") for m in (a, b)]

    flow = PlayFlow(platform, _song_chooser(), REGIONS, interval=0.02, seed=4).start()
    results = []  # (latency s, status, kind), appended by the clients
    problems = []  # what was wrong, with the request
    reconnects = []
    barrier = threading.Barrier(CLIENTS + 1)

    def client(n):
        crng = random.Random(n)
        http_client = Client((a, b))
        barrier.wait(30)
        until = time.monotonic() + LOAD_S
        try:
            while time.monotonic() < until:
                music = crng.choice((a, b))
                roll = crng.random()
                if roll < 0.35:
                    kind, path, genre = "chart", "/charts/top-five", None
                elif roll < 0.7:
                    genre = crng.choice(sorted(GENRES))
                    kind, path = "genre", "/charts/genre/" + urllib.parse.quote(
                        crng.choice([genre, GENRES[genre], genre.upper()]), safe="")
                else:
                    song_id = crng.randrange(1, 26)  # 22-25 are unknown
                    kind, path = "song", f"/song/{song_id}"
                started = time.monotonic()
                try:
                    status, body = http_client.get(music, path)
                except (OSError, http.client.HTTPException) as e:
                    problems.append(f"{music.name} {path}: {e!r}")
                    http_client.conns[music.port].close()
                    continue
                results.append((time.monotonic() - started, status, kind))
                try:
                    if kind == "song" and song_id > 21:
                        assert status == 404 and json.loads(body) == {
                            "error_code": 404, "message": f"Song with id [{song_id}] was not found"}, body
                    elif kind == "song":
                        s = SONGS[song_id - 1]
                        assert status == 200 and json.loads(body) == {
                            "artist": s["artist"], "album": s["album"], "name": s["name"]}, body
                    else:
                        assert status == 200, body
                        check_chart(body, genre)
                except AssertionError as e:
                    problems.append(f"{music.name} {path} -> {status}: {e}")
        finally:
            reconnects.append(http_client.reconnects)
            http_client.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    try:
        barrier.wait(30)
        load_started = time.monotonic()
        for t in threads:
            t.join(LOAD_S + 60)
        load_s = time.monotonic() - load_started
    finally:
        sent = flow.stop()
    assert not any(t.is_alive() for t in threads), "a client hung"

    latencies = sorted(r[0] for r in results)
    p50, p99 = latencies[len(latencies) // 2], latencies[int(len(latencies) * 0.99)]
    by_kind = collections.Counter((kind, status) for _, status, kind in results)
    print(f"\nIQ under load: {CLIENTS} clients, {len(results)} requests in {load_s:.1f} s = "
          f"{len(results) / load_s:.0f} requests/s, latency p50 {p50 * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms; {dict(by_kind)}; "
          f"{sum(reconnects)} reconnects; {len(sent)} plays meanwhile")
    # The group did not change meanwhile: no answer had a reason to be an error.
    assert [m.text().count("RUNNING -> REBALANCING") for m in (a, b)] == rebalances, "a rebalance"
    assert not problems, f"{len(problems)} bad answers, e.g. {problems[:10]}"
    assert len(results) > 20 * LOAD_S  # the load was a load
    assert by_kind[("song", 404)] > 0 and by_kind[("chart", 200)] > 0 and by_kind[("genre", 200)] > 0

    model = _loaded_model(plays + sent)
    platform.wait_consumed()
    for music in (a, b):
        music.wait_for("all", model.chart(), timeout=20)
        for genre in model.genres():
            music.wait_for(genre, model.chart(genre), timeout=20)
