"""oxbow-streams (and the registry's and the SQL engine's libraries beside it) as installed
packages: `cmake --install` puts headers, the shared library, a CMake package and a pkg-config file
under a prefix; an application outside the tree (tests/install/) builds against each and runs, in
the test driver and against the broker."""

import os
import pathlib
import shutil
import subprocess

from confluent_kafka.admin import NewTopic

import ck_helpers as ck
from harness import OXBOW_BIN

BUILD = pathlib.Path(OXBOW_BIN).parent
SOURCE = pathlib.Path(__file__).resolve().parents[1] / "install"


def _run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _install(prefix):
    _run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)])
    assert (prefix / "include/oxbow/streams/kafka_streams.h").is_file()
    assert (prefix / "lib/pkgconfig/oxbow-streams.pc").is_file()
    assert (prefix / "lib/cmake/OxbowStreams/OxbowStreamsConfig.cmake").is_file()
    # The registry's client library (the serdes Streams applications use) installs beside it.
    assert (prefix / "include/oxbow/registry/serdes.h").is_file()
    assert (prefix / "lib/pkgconfig/oxbow-registry.pc").is_file()
    assert (prefix / "lib/cmake/OxbowRegistry/OxbowRegistryConfig.cmake").is_file()
    # The SQL engine's library, whose package brings oxbow-streams along.
    assert (prefix / "include/oxbow/sql/engine.h").is_file()
    assert (prefix / "lib/pkgconfig/oxbow-sql.pc").is_file()
    assert (prefix / "lib/cmake/OxbowSql/OxbowSqlConfig.cmake").is_file()
    # Nothing of the project's private sources is needed: no header outside the public folders.
    assert {p.parent.relative_to(prefix / "include").as_posix()
            for p in (prefix / "include").rglob("*.h")} <= \
        {"oxbow/streams", "oxbow/streams/detail", "oxbow/registry", "oxbow/connect", "oxbow/sql"}


# What examples/sql-filter prints: each statement's status, then the query's output records.
SQL_FILTER_OUTPUT = (
    "Stream created\n"
    "Created query with ID CSAS_LONG_VIEWS_0\n"
    'bob {"PAGE":"/pricing","DURATION_MS":4200}\n'
    'alice {"PAGE":"/docs","DURATION_MS":1000}\n'
)


def test_sql_package_builds_the_sql_example_that_runs_in_the_driver(tmp_path):
    prefix = tmp_path / "prefix"
    _install(prefix)
    build = tmp_path / "sql-build"
    _run(["cmake", "-S", str(SOURCE), "-B", str(build), "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", str(build), "--target", "sql_filter"])
    assert _run([str(build / "sql_filter")]) == SQL_FILTER_OUTPUT


def test_cmake_package_builds_an_application_that_runs(make_broker, tmp_path):
    prefix = tmp_path / "prefix"
    _install(prefix)
    build = tmp_path / "shout-build"
    _run(["cmake", "-S", str(SOURCE), "-B", str(build), "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", str(build)])
    shout = build / "shout"
    assert _run([str(shout), "--driver"]) == "a=HELLO\nb=STREAMS\n"

    b = make_broker({"group.initial.rebalance.delay.ms": "0"})
    from test_registry import Registry
    registry = Registry(b, tmp_path).start()
    assert _run([str(build / "registry_check"), registry.url]) == '1 {"n":42}\n'
    registry.stop()

    admin = ck.admin(b.bootstrap)
    # A merge of inputs with 1 and 3 partitions has 3 tasks, as in Kafka: task p reads partition p
    # of each input that has one, so more-words' partitions 1 and 2 are processed too.
    topics = [NewTopic("words", 1, 1), NewTopic("more-words", 3, 1), NewTopic("shouts", 1, 1)]
    for f in admin.create_topics(topics).values():
        f.result(20)
    ck.wait_for_topic(b.bootstrap, "more-words", 3)
    producer = ck.producer(b.bootstrap)
    ck.produce_all(producer, [{"key": b"k", "value": w} for w in (b"one", b"two", b"three")], "words")
    ck.produce_all(producer, [{"value": b"four", "partition": 1}, {"value": b"five", "partition": 2}], "more-words")
    assert "processed 5" in _run([str(shout), "--bootstrap-server", b.bootstrap, str(tmp_path / "state"), "5"])
    got = [m.value() for m in ck.consume_partition(b.bootstrap, "shouts", expected=5)]
    assert [v for v in got if v in (b"ONE", b"TWO", b"THREE")] == [b"ONE", b"TWO", b"THREE"]
    assert sorted(got) == sorted([b"ONE", b"TWO", b"THREE", b"FOUR", b"FIVE"])


def test_pkg_config_builds_the_same_application(tmp_path):
    prefix = tmp_path / "prefix"
    _install(prefix)
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    flags = _run(["pkg-config", "--cflags", "--libs", "oxbow-streams"], env=env).split()
    binary = tmp_path / "shout"
    compiler = shutil.which("c++") or "g++"
    _run([compiler, str(SOURCE / "shout.cpp"), *flags, f"-Wl,-rpath,{prefix / 'lib'}", "-o", str(binary)])
    assert _run([str(binary), "--driver"]) == "a=HELLO\nb=STREAMS\n"
    # The registry's client library the same way.
    flags = _run(["pkg-config", "--cflags", "--libs", "oxbow-registry"], env=env).split()
    _run([compiler, str(SOURCE / "registry_check.cpp"), *flags, f"-Wl,-rpath,{prefix / 'lib'}",
          "-o", str(tmp_path / "registry_check")])
    usage = subprocess.run([str(tmp_path / "registry_check")], capture_output=True, text=True)
    assert (usage.returncode, usage.stderr) == (2, "usage: registry_check URL\n")
    # The SQL engine's library: the sql-filter example, with oxbow-streams' flags through Requires.
    flags = _run(["pkg-config", "--cflags", "--libs", "oxbow-sql"], env=env).split()
    _run([compiler, str(SOURCE.parent.parent / "examples/sql-filter/main.cpp"), *flags,
          f"-Wl,-rpath,{prefix / 'lib'}", "-o", str(tmp_path / "sql_filter")])
    assert _run([str(tmp_path / "sql_filter")]) == SQL_FILTER_OUTPUT
