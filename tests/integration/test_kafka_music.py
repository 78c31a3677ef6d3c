"""Kafka Music (examples/kafka-music), Confluent's interactive-queries example, against a real
broker and schema registry: plays and songs in Avro go in, the charts come out over HTTP.

- The example's own test: its songs, six songs of two genres played 6..1 times, and the punk,
  hip hop and overall charts it expects; the songs endpoint, errors, 100 concurrent clients.
- The driver (build/examples/kafka-music-driver): its songs and random plays, counted.
- Randomized: thousands of plays (short ones, plays of unknown songs), songs that change genre,
  checked against an independent model of what the topology computes (music_app.ChartModel).

- Two instances: either answers for both.

music_app's helpers take the instance to ask, so tests with more instances (failover, scaling)
can be built on them.
"""

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import ck_helpers as ck
from harness import wait_until
from music_app import PLAY_EVENTS, STORES, ChartModel, MusicPlatform, decode_play


@pytest.fixture
def broker(make_broker):
    # No initial rebalance delay: each instance joins its group at once.
    return make_broker(group_initial_rebalance_delay_ms=0)


@pytest.fixture
def platform_factory(broker, tmp_path):
    made = []

    def make(partitions=1):
        made.append(MusicPlatform(broker, tmp_path, partitions))
        return made[-1]
    yield make
    for p in made:
        p.close()


# The example's song list, as its driver loads it (id, album, artist, name, genre).
SONGS = [dict(zip(("id", "album", "artist", "name", "genre"), row)) for row in [
    (1, "Fresh Fruit For Rotting Vegetables", "Dead Kennedys", "Chemical Warfare", "Punk"),
    (2, "We Are the League", "Anti-Nowhere League", "Animal", "Punk"),
    (3, "Live In A Dive", "Subhumans", "All Gone Dead", "Punk"),
    (4, "PSI", "Wheres The Pope?", "Fear Of God", "Punk"),
    (5, "Totally Exploited", "The Exploited", "Punks Not Dead", "Punk"),
    (6, "The Audacity Of Hype", "Jello Biafra And The Guantanamo School Of Medicine", "Three Strikes", "Punk"),
    (7, "Licensed to Ill", "The Beastie Boys", "Fight For Your Right", "Hip Hop"),
    (8, "De La Soul Is Dead", "De La Soul", "Oodles Of O's", "Hip Hop"),
    (9, "Straight Outta Compton", "N.W.A", "Gangsta Gangsta", "Hip Hop"),
    (10, "Fear Of A Black Planet", "Public Enemy", "911 Is A Joke", "Hip Hop"),
    (11, "Curtain Call - The Hits", "Eminem", "Fack", "Hip Hop"),
    (12, "21", "Adele", "Rolling in the Deep", "Pop"),
    (13, "In The Lonely Hour", "Sam Smith", "Stay With Me", "Pop"),
    (14, "The Calling", "Hilltop Hoods", "The Calling", "Hip Hop"),
    (15, "x", "Ed Sheeran", "Thinking Out Loud", "Pop"),
    (16, "V", "Maroon 5", "Sugar", "Pop"),
    (17, "This Is What The Truth Feels Like", "Gwen Stefani", "Red Flag", "Pop"),
    (18, "This Is Acting", "Sia", "Alive", "Pop"),
    (19, "24K Magic", "Bruno Mars", "That's What I Like", "Pop"),
    (20, "Black Sunday", "Cypress Hill", "Insane in the Brain", "Hip Hop"),
    (21, "Aquemini", "Outkast", "Aquemini", "Hip Hop"),
]]


def _row(song_id, plays):
    s = SONGS[song_id - 1]
    return (s["artist"], s["album"], s["name"], plays)


def test_the_examples_own_data_gives_its_charts(platform_factory):
    platform = platform_factory(partitions=1)  # as the example's test creates its topics
    music = platform.start_instance()
    assert "21 songs written" in platform.run_driver("--plays", "0")
    platform.wait_consumed()  # the table first, as a play of a song not yet in it does not count
    # The test's plays: songs 1-6 and 7-12 played 6, 5, 4, 3, 2 and 1 times, a minute each.
    plays = [(first + i, 60_000) for first in (1, 7) for i in range(6) for _ in range(6 - i)]
    random.Random(1).shuffle(plays)
    platform.send_plays(plays)

    music.wait_for("punk", [_row(i, 7 - i) for i in range(1, 6)])
    music.wait_for("hip hop", [_row(i, 13 - i) for i in range(7, 12)])
    # Equal plays: the smaller song id first.
    music.wait_for("all", [_row(1, 6), _row(7, 6), _row(2, 5), _row(8, 5), _row(3, 4)])
    music.wait_for("pop", [_row(12, 1)])
    assert music.chart("Hip Hop") == music.chart("hip hop")  # the genre in any case

    status, song = music.get("/song/9")
    assert (status, song) == (200, [("artist", "N.W.A"), ("album", "Straight Outta Compton"),
                                    ("name", "Gangsta Gangsta")])
    assert music.get("/song/99") == (404, [("error_code", 404), ("message", "Song with id [99] was not found")])
    assert music.get("/song/nine")[0] == 404
    status, body = music.chart("jazz")
    assert status == 404 and "top-five-songs-by-genre" in dict(body)["message"], body
    assert music.get("/charts")[0] == 404

    # The instances, as the group's assignment describes them: this one (its application.server)
    # with every store.
    for path in ("/instances", "/instances/top-five-songs", "/instances/all-songs"):
        status, instances = music.get(path)
        assert status == 200, (path, instances)
        assert [[k for k, _ in i] for i in instances] == [["host", "port", "storeNames"]], instances
        assert dict(instances[0]) == {"host": "127.0.0.1", "port": music.port,
                                      "storeNames": sorted(STORES)}, (path, instances)
    assert music.get("/instances/no-such-store") == (200, [])

    # 100 clients at once, each starting when all are ready.
    expected = music.chart()
    barrier = threading.Barrier(100)

    def client(_):
        barrier.wait(30)
        return music.chart()
    with ThreadPoolExecutor(max_workers=100) as pool:
        answers = list(pool.map(client, range(100)))
    assert answers == [expected] * 100


def test_the_drivers_songs_and_plays_are_counted(platform_factory):
    """The driver's data through an application on four partitions: it must place the songs where
    Streams looks for them (Java's murmur2 partitioner, not librdkafka's default), or plays of the
    songs it misplaced would find no song in the join and go uncounted."""
    platform = platform_factory(partitions=4)
    music = platform.start_instance()
    assert "21 songs written" in platform.run_driver("--plays", "0")
    platform.wait_consumed()
    assert "60 plays written" in platform.run_driver("--no-songs", "--plays", "60", "--interval-ms", "0")
    written = [m for p in range(4) for m in ck.consume_partition(platform.broker.bootstrap, PLAY_EVENTS, p)]
    assert len(written) == 60 and {m.key() for m in written} == {b"uk"}
    decoded = [decode_play(m.value()) for m in written]
    assert all(schema_id > 0 and 1 <= song_id <= 21 and duration == 60_000
               for schema_id, song_id, duration in decoded), decoded
    model = ChartModel()
    for s in SONGS:
        model.song(s)
    for _, song_id, duration in decoded:
        model.play(song_id, duration)
    platform.wait_consumed()
    music.wait_for("all", model.chart())
    for genre in model.genres():
        music.wait_for(genre, model.chart(genre))
    for s in SONGS:
        assert dict(music.get(f"/song/{s['id']}")[1])["name"] == s["name"]


def test_either_of_two_instances_answers_for_both(platform_factory):
    """Two instances share four partitions; each chart key and song lives on one of them, and
    both answer every request the same, the other one's keys fetched from it."""
    platform = platform_factory(partitions=4)
    first, second = platform.start_instance(), platform.start_instance()
    platform.run_driver("--plays", "0")
    platform.wait_consumed()
    rng = random.Random(7)
    plays = _random_plays(rng, 600, list(range(1, 22)), [30, 31])
    platform.send_plays(plays)
    model = ChartModel()
    for s in SONGS:
        model.song(s)
    for p in plays:
        model.play(*p)
    platform.wait_consumed()
    for music in (first, second):
        music.wait_for("all", model.chart())
        for genre in model.genres():
            music.wait_for(genre, model.chart(genre))
        for s in SONGS:
            assert dict(music.get(f"/song/{s['id']}")[1])["name"] == s["name"], music.name

    def both_listed():
        answers = [music.get("/instances") for music in (first, second)]
        return all(status == 200 and sorted(dict(i)["port"] for i in body) ==
                   sorted([first.port, second.port]) for status, body in answers)
    wait_until(both_listed, 30, message="both instances in /instances")


GENRES = ["Punk", "Hip Hop", "Pop", "Jazz", "Blues", "Rock", "Folk"]


def _random_songs(rng, ids):
    # Genres in mixed cases: the charts are per lower-cased genre.
    return [{"id": i, "album": f"Album {rng.randrange(1000)}", "artist": f"Artist {i}",
             "name": f"Song {i} \u00e9t\u00e9", "genre": rng.choice([str.title, str.upper, str.lower])(
                 rng.choice(GENRES))} for i in ids]


def _random_plays(rng, n, known, unknown):
    """Plays of known songs with a skewed popularity, some of unknown ones; durations around the
    30 s threshold (both sides of it, and exactly on it) and well above."""
    weights = [1.0 / (1 + k) ** 0.7 for k in range(len(known))]
    plays = []
    for _ in range(n):
        song = rng.choice(unknown) if rng.random() < 0.05 else rng.choices(known, weights)[0]
        duration = rng.choice([rng.randrange(0, 30_000), 29_999, 30_000, rng.randrange(30_000, 400_000),
                               rng.randrange(30_000, 400_000)])
        plays.append((song, duration))
    return plays


def test_randomized_plays_and_genre_changes_match_the_model(platform_factory):
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")  # shown with a failure
    rng = random.Random(seed)
    platform = platform_factory(partitions=3)
    music = platform.start_instance()
    model = ChartModel()

    # Phase 1: songs 1-40 (41-45 unknown for now), 2500 plays.
    songs = _random_songs(rng, range(1, 41))
    rng.shuffle(songs)
    platform.send_songs(songs)
    for s in songs:
        model.song(s)
    platform.wait_consumed()
    plays = _random_plays(rng, 2500, list(range(1, 41)), list(range(41, 46)))
    platform.send_plays(plays)
    for p in plays:
        model.play(*p)
    platform.wait_consumed()
    music.wait_for("all", model.chart(), timeout=30)

    # Then new versions: four songs (outside the overall top five) move to a genre they never had,
    # under a new name; songs 41 and 42, played before they were known, appear.
    top = {i for i, _ in model.top_ids()}
    by_id = {s["id"]: s for s in songs}
    in_genre_top = {i for g in model.genres() for i, _ in model.top_ids(g)}
    candidates = sorted(set(by_id) - top, key=lambda i: (i not in in_genre_top, i))
    changed = []
    for i in candidates[:2] + rng.sample(candidates[2:], 2):  # two that leave a genre chart
        old = by_id[i]
        genre = rng.choice([g for g in GENRES if g.lower() != old["genre"].lower()])
        changed.append({**old, "genre": genre, "name": old["name"] + " (remix)"})
    model.check_changes_are_order_free(changed)
    new_songs = _random_songs(rng, [41, 42])
    platform.send_songs(changed + new_songs)
    for s in changed + new_songs:
        model.song(s)
    platform.wait_consumed()

    # Phase 2: 2000 more plays, the changed and new songs among the popular ones.
    favourites = [s["id"] for s in changed + new_songs]
    plays = _random_plays(rng, 2000, favourites + list(range(1, 41)), list(range(43, 46)))
    platform.send_plays(plays)
    for p in plays:
        model.play(*p)
    platform.wait_consumed()

    context = f" (seed {seed})"
    music.wait_for("all", model.chart(), timeout=30)
    for genre in model.genres():
        music.wait_for(genre, model.chart(genre), timeout=30)
    assert len(model.genres()) >= 5, model.genres()
    for genre in {g.lower() for g in GENRES} - set(model.genres()):
        assert music.chart(genre)[0] == 404, genre + context
    # A song that left its genre chart is still in it, under its new name, with its old count.
    stale = [s for s in changed
             if any(v[0] == s["id"] and v[4].lower() != s["genre"].lower() for v in model.rows)]
    assert stale, "no changed song had plays before its change" + context

    for s in changed + new_songs:
        status, body = music.get(f"/song/{s['id']}")
        assert (status, dict(body)) == (200, {"artist": s["artist"], "album": s["album"],
                                              "name": s["name"]}), context
    assert music.get("/song/45")[0] == 404
