"""Connector plugins loaded from `plugin.path` (docs/connect/plugins.md), as a third party ships
them: oxbow-connect installed with `cmake --install` into a prefix, the example plugin
(examples/connect-plugin) configured and built against that prefix only, its shared object put in
a plugin directory with files that are no plugin, then `oxbow connect standalone` with
`plugin.path` pointing there. The plugin's source runs and its records are read with
confluent-kafka, its sink writes them, its converter writes values as text, and a task of it that
throws is FAILED with its message while the worker goes on, and so is one that crashes (a
segfault, abort()) while the worker lives; the same plugin built by Clang runs in the GCC-built
worker.
"""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

import ck_helpers as ck
from harness import OXBOW_BIN, port_accepts, unique_topic, wait_until
from test_connect_rest import Rest, _status
from test_connect_standalone import Standalone, _lines, _read_values

BUILD = pathlib.Path(OXBOW_BIN).parent
ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "connect-plugin"
CRASH_PLUGIN = ROOT / "src" / "connect" / "plugin_loader" / "crash_test_plugin.cpp"
JSON = "org.apache.kafka.connect.json.JsonConverter"

# A plugin built for a later ABI: the worker must skip it by its version alone.
FUTURE_PLUGIN_C = """
#include <stdint.h>
#include <stddef.h>
struct header { uint32_t abi_version; uint32_t struct_size; const char* name; const char* version;
                const void* connectors; size_t connector_count; };
static const struct header future = {99, sizeof(struct header), "future", "9.9", NULL, 0};
const struct header* oxbow_connect_plugin_entry(uint32_t host) { (void)host; return &future; }
"""


def _run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """oxbow-connect installed as a third party gets it."""
    prefix = tmp_path_factory.mktemp("prefix")
    _run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)])
    assert (prefix / "include/oxbow/connect/plugin_export.h").is_file()
    return prefix


def _build_example(prefix, build, *cmake_args):
    _run(["cmake", "-S", str(EXAMPLE), "-B", str(build), "-G", "Ninja",
          f"-DCMAKE_PREFIX_PATH={prefix}", *cmake_args])
    _run(["cmake", "--build", str(build)])
    return build / "libsequence-plugin.so"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory, prefix):
    """plugin.path's directory: the example plugin in a sub-directory of its own, a plugin of ABI
    version 99 and a file that only looks like a shared object."""
    root = tmp_path_factory.mktemp("plugins")
    build = root / "build"
    _build_example(prefix, build)
    # pkg-config's oxbow-connect builds it too (a plugin exports only its entry point).
    flags = _pkg_config_flags(prefix)
    by_pkg_config = root / "libsequence-pc.so"
    _run([shutil.which("c++") or "g++", "-shared", "-fPIC", "-fvisibility=hidden",
          str(EXAMPLE / "sequence_plugin.cpp"), *flags, "-o", str(by_pkg_config)])
    exported = _run(["nm", "-D", "--defined-only", str(by_pkg_config)])
    assert [line.split()[-1] for line in exported.splitlines() if " T " in line] == \
        ["oxbow_connect_plugin_entry"]
    plugins = root / "plugin-path"
    (plugins / "sequence").mkdir(parents=True)
    shutil.copy(build / "libsequence-plugin.so", plugins / "sequence")
    (plugins / "future.c").write_text(FUTURE_PLUGIN_C)
    compiler = shutil.which("cc") or "gcc"
    _run([compiler, "-shared", "-fPIC", str(plugins / "future.c"), "-o", str(plugins / "future.so")])
    (plugins / "broken.so").write_text("not a shared object")
    return plugins


def _pkg_config_flags(prefix):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    return _run(["pkg-config", "--cflags", "--libs", "oxbow-connect"], env=env).split()


@pytest.fixture(scope="module")
def crash_plugin(tmp_path_factory, prefix):
    """The plugin whose source task crashes after `crash.at` records (crash_test_plugin.cpp),
    built against the installed prefix as a third party's would be."""
    plugins = tmp_path_factory.mktemp("crash-plugins")
    _run([shutil.which("c++") or "g++", "-shared", "-fPIC", "-fvisibility=hidden",
          str(CRASH_PLUGIN), *_pkg_config_flags(prefix), "-o", str(plugins / "libcrashing.so")])
    return plugins / "libcrashing.so"


def _worker(tmp_path, broker, *plugin_dirs):
    worker = Standalone(tmp_path, broker, [], run=1, worker_extra={
        "plugin.path": ", ".join([str(tmp_path / "missing"), *map(str, plugin_dirs)]),
        "key.converter": JSON, "value.converter": JSON, "offset.flush.interval.ms": 200})
    wait_until(lambda: port_accepts(worker.rest_port), 30, message="the REST API to listen")
    return worker, Rest(worker.rest_port)


def _create(rest, name, config):
    code, body = rest.call("POST", "/connectors", {"name": name, "config": config})
    assert code == 201, body


def _envelope(value):
    return json.loads(value)


def test_a_plugin_from_plugin_path_is_listed_runs_and_is_read_back(broker, tmp_path, plugin_dir):
    worker, rest = _worker(tmp_path, broker, plugin_dir)
    location = str(plugin_dir / "sequence" / "libsequence-plugin.so")
    code, plugins = rest.call("GET", "/connector-plugins")
    assert code == 200
    assert {"class": "com.example.SequenceSourceConnector", "type": "source",
            "version": "1.0.0"} in plugins
    assert {"class": "com.example.LineSinkConnector", "type": "sink", "version": "1.0.0"} in plugins
    # Connect names a plugin's location in the message that lists the plugins it knows.
    code, body = rest.call("PUT", "/connector-plugins/NoSuchConnector/config/validate",
                           {"connector.class": "NoSuchConnector"})
    assert code == 400
    assert (f"PluginDesc{{klass=class com.example.SequenceSourceConnector, name='com.example."
            f"SequenceSourceConnector', version='1.0.0', encodedVersion=1.0.0, type=source, "
            f"typeName='source', location='{location}'}}") in body["message"]
    # The plugin's own ConfigDef, through the C ABI.
    code, keys = rest.call("GET", "/connector-plugins/SequenceSource/config")
    assert code == 200 and [k["name"] for k in keys] == ["topic", "count", "interval.ms", "fail.at"]

    topic = ck.create_topic(broker.bootstrap, unique_topic("plugin"))
    _create(rest, "numbers", {"connector.class": "SequenceSource", "topic": topic, "count": "25"})
    values = [_envelope(v) for v in _read_values(broker.bootstrap, topic, 25)]
    assert [v["payload"] for v in values] == [{"seq": i, "text": f"number {i}"} for i in range(25)]
    assert values[0]["schema"]["name"] == "com.example.Sequence"
    assert [f["field"] for f in values[0]["schema"]["fields"]] == ["seq", "text"]

    out = tmp_path / "lines.txt"
    _create(rest, "lines", {"connector.class": "com.example.LineSinkConnector", "topics": topic,
                            "file": str(out)})
    wait_until(lambda: len(_lines(out)) >= 25, 30, message="the plugin's sink to write 25 lines")
    assert _lines(out)[:2] == [f"{topic}-0@0 0 Struct{{seq=0,text=number 0}}",
                               f"{topic}-0@1 1 Struct{{seq=1,text=number 1}}"]

    # The plugin's converter, named by a connector as any converter.
    code, everything = rest.call("GET", "/connector-plugins?connectorsOnly=false")
    assert {"class": "com.example.TextConverter", "type": "converter"}.items() <= \
        next(p for p in everything if p["class"] == "com.example.TextConverter").items()
    texts = ck.create_topic(broker.bootstrap, unique_topic("plugin-text"))
    _create(rest, "texts", {"connector.class": "SequenceSource", "topic": texts, "count": "3",
                            "value.converter": "com.example.TextConverter"})
    assert _read_values(broker.bootstrap, texts, 3) == [
        f"Struct{{seq={i},text=number {i}}}" for i in range(3)]

    log = worker.log()
    assert (f"loaded plugin sequence-plugin 1.0.0 from {location}: 2 connector(s), "
            "1 converter(s)") in log
    assert (f"skipping plugin {plugin_dir / 'future.so'}: it was built for Connect plugin ABI "
            "version 99, this worker loads version 1") in log
    assert f"skipping plugin {plugin_dir / 'broken.so'}: it could not be loaded" in log
    assert "is not a directory; skipped" in log
    worker.stop()


def test_a_plugin_task_that_throws_is_failed_and_the_worker_goes_on(broker, tmp_path, plugin_dir):
    worker, rest = _worker(tmp_path, broker, plugin_dir)
    topic = ck.create_topic(broker.bootstrap, unique_topic("plugin-fail"))
    _create(rest, "failing", {"connector.class": "SequenceSource", "topic": topic, "fail.at": "5",
                              "interval.ms": "50"})

    def failed():
        tasks = _status(rest, "failing")["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    task = wait_until(failed, 30, message="the plugin's task to fail")
    # The message the plugin threw, as a built-in task's trace shows it.
    assert task["trace"] == "sequence source failed at 5 as fail.at asks", task
    assert _status(rest, "failing")["connector"]["state"] == "RUNNING"
    # The worker is alive and runs the plugin's connectors still, the failed one's records kept.
    assert [_envelope(v)["payload"]["seq"] for v in _read_values(broker.bootstrap, topic, 5)] == \
        list(range(5))
    other = ck.create_topic(broker.bootstrap, unique_topic("plugin-ok"))
    _create(rest, "working", {"connector.class": "SequenceSource", "topic": other, "count": "3"})
    assert len(_read_values(broker.bootstrap, other, 3)) == 3
    assert worker.proc.poll() is None
    worker.stop()


def _failed_task(rest, name):
    def failed():
        tasks = _status(rest, name)["tasks"]
        return tasks and tasks[0]["state"] == "FAILED" and tasks[0]
    return wait_until(failed, 30, message=f"{name}'s task to fail")


def test_a_plugin_task_that_crashes_is_failed_and_the_worker_lives(broker, tmp_path, plugin_dir,
                                                                   crash_plugin):
    worker, rest = _worker(tmp_path, broker, plugin_dir, crash_plugin)
    healthy = ck.create_topic(broker.bootstrap, unique_topic("plugin-healthy"))
    _create(rest, "healthy", {"connector.class": "SequenceSource", "topic": healthy,
                              "interval.ms": "100"})
    crashed = ck.create_topic(broker.bootstrap, unique_topic("plugin-crash"))
    _create(rest, "segfaulting", {"connector.class": "test.CrashingSourceConnector",
                                  "topic": crashed, "crash": "segv", "crash.at": "3"})
    task = _failed_task(rest, "segfaulting")
    assert "crashed with signal SIGSEGV in source_task_poll" in task["trace"], task
    assert f"({crash_plugin})" in task["trace"]
    # The records before the crash were written; the worker lives, the healthy connector runs on.
    assert [_envelope(v)["payload"] for v in _read_values(broker.bootstrap, crashed, 3)] == \
        [0, 1, 2]
    assert worker.proc.poll() is None
    written = ck.watermarks(broker.bootstrap, healthy)[1]
    wait_until(lambda: ck.watermarks(broker.bootstrap, healthy)[1] > written + 10, 30,
               message="the healthy connector to go on producing")
    assert _status(rest, "healthy")["tasks"][0]["state"] == "RUNNING"

    # abort() in a plugin is caught the same way.
    _create(rest, "aborting", {"connector.class": "test.CrashingSourceConnector",
                               "topic": crashed, "crash": "abort"})
    assert "crashed with signal SIGABRT in source_task_poll" in \
        _failed_task(rest, "aborting")["trace"]

    # A restart is answered; the new task crashes again, in a new plugin object.
    crashes = worker.log().count("crashed with signal SIGSEGV")
    code, body = rest.call("POST", "/connectors/segfaulting/restart?includeTasks=true")
    assert code == 202 and body["name"] == "segfaulting", body
    wait_until(lambda: worker.log().count("crashed with signal SIGSEGV") > crashes, 30,
               message="the restarted task to crash again")
    assert "crashed with signal SIGSEGV" in _failed_task(rest, "segfaulting")["trace"]
    assert worker.proc.poll() is None
    code, _ = rest.call("GET", "/connectors")
    assert code == 200
    worker.stop()


@pytest.mark.skipif(shutil.which("clang++") is None, reason="no clang++")
def test_a_plugin_built_by_another_compiler_runs(broker, tmp_path, prefix):
    """The worker is built by GCC; the same plugin built by Clang loads and runs: only C crosses
    the boundary."""
    plugins = tmp_path / "clang-plugins"
    plugins.mkdir()
    built = _build_example(prefix, tmp_path / "clang-build", "-DCMAKE_CXX_COMPILER=clang++")
    shutil.copy(built, plugins)
    worker, rest = _worker(tmp_path, broker, plugins)
    topic = ck.create_topic(broker.bootstrap, unique_topic("clang"))
    _create(rest, "clang-numbers", {"connector.class": "SequenceSource", "topic": topic, "count": "5"})
    assert [_envelope(v)["payload"]["seq"] for v in _read_values(broker.bootstrap, topic, 5)] == \
        list(range(5))
    assert "loaded plugin sequence-plugin 1.0.0 from " + str(plugins / built.name) in worker.log()
    worker.stop()
