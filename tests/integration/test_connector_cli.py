"""`oxbow connector`, the CLI over Kafka Connect's REST API, against the real broker and a real
`oxbow connect standalone`: connectors created from a properties file and from JSON, listed,
described, paused, resumed, restarted, stopped, their offsets read, altered and reset, deleted; the
worker's errors and an absent worker as one line on stderr with exit code 1.
"""

import json
import subprocess

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, unique_topic, wait_until
from test_connect_offsets import _worker as offsets_worker
from test_connect_rest import _append
from test_connect_standalone import _read_values


def _cli(port, *args):
    proc = subprocess.run([OXBOW_BIN, "connector", "--url", f"http://127.0.0.1:{port}", *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def _ok(port, *args):
    code, out, err = _cli(port, *args)
    assert code == 0, f"{args}: exit {code}\n{out}\n{err}"
    return out


def _states(port, name):
    """The state column of each line of `status`: the connector's, then each task's."""
    lines = _ok(port, "status", name).splitlines()[1:]
    return [line.split()[-3] for line in lines if line.startswith(("connector", "task"))]


def _become(port, name, state):
    wait_until(lambda: (s := _states(port, name)) and len(s) > 1 and all(x == state for x in s),
               30, message=f"{name} and its tasks {state}")


def _worker(tmp_path, broker):
    worker, rest = offsets_worker(tmp_path, broker)
    return worker, rest.port


def test_connector_lifecycle(broker, tmp_path):
    worker, port = _worker(tmp_path, broker)
    assert _ok(port, "list") == ""
    topic = ck.create_topic(broker.bootstrap, unique_topic("cli"))
    source_file = tmp_path / "in.txt"
    lines = [f"line {i}" for i in range(5)]
    _append(source_file, lines)

    props = tmp_path / "src.properties"
    props.write_text(f"# a source\nname=src\nconnector.class=FileStreamSource\n"
                     f"file={source_file}\ntopic={topic}\n")
    assert _ok(port, "create", str(props)) == "Created connector src\n"
    sink_json = tmp_path / "sink.json"
    sink_json.write_text(json.dumps({"name": "sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / "out.txt"),
        "tasks.max": 1}}))
    assert _ok(port, "create", str(sink_json)) == "Created connector sink\n"
    assert sorted(_ok(port, "list").split()) == ["sink", "src"]
    _become(port, "src", "RUNNING")
    _become(port, "sink", "RUNNING")
    table = _ok(port, "list", "--status").splitlines()
    assert table[0].split() == ["NAME", "TYPE", "STATE"]
    assert sorted(line.split() for line in table[1:]) == [["sink", "sink", "RUNNING"],
                                                         ["src", "source", "RUNNING"]]
    assert _read_values(broker.bootstrap, topic, 5) == lines

    # update replaces the config (PUT), creating a connector that does not exist yet.
    sink_json.write_text(json.dumps({"name": "sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic, "file": str(tmp_path / "out.txt"),
        "tasks.max": 2}}))
    assert _ok(port, "update", str(sink_json)) == "Updated connector sink\n"
    assert json.loads(_ok(port, "describe", "sink", "--json"))["config"]["tasks.max"] == "2"
    other = tmp_path / "other.properties"
    other.write_text(f"name=other\nconnector.class=FileStreamSink\ntopics={topic}\n"
                     f"file={tmp_path / 'other.txt'}\n")
    assert _ok(port, "update", str(other)) == "Created connector other\n"
    assert _ok(port, "delete", "other") == "Deleted connector other\n"
    bad = tmp_path / "bad.properties"
    bad.write_text("name=bad\nconnector.class=NoSuchConnector\n")
    code, out, err = _cli(port, "update", str(bad))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "NoSuchConnector" in err, err

    described = _ok(port, "describe", "src")
    assert "Type:   source" in described and f"  file = {source_file}" in described

    assert _ok(port, "pause", "src") == "Paused connector src\n"
    _become(port, "src", "PAUSED")
    assert _ok(port, "resume", "src") == "Resumed connector src\n"
    _become(port, "src", "RUNNING")
    assert _ok(port, "restart", "src") == "Restarted connector src\n"
    restarted = _ok(port, "restart", "src", "--include-tasks")
    assert restarted.startswith("Restarted connector src\nConnector src (source)\n")
    _become(port, "src", "RUNNING")

    size = source_file.stat().st_size
    expected = {"offsets": [{"partition": {"filename": str(source_file)},
                             "offset": {"position": size}}]}
    wait_until(lambda: json.loads(_ok(port, "offsets", "src")) == expected, 30,
               message="the source's offsets")
    _ok(port, "stop", "src")
    # A stopped connector has no tasks.
    wait_until(lambda: _states(port, "src") == ["STOPPED"], 30, message="src to stop")
    altered = {"offsets": [{"partition": {"filename": str(source_file)},
                            "offset": {"position": 0}}]}
    assert "altered successfully" in _ok(port, "offsets", "src", "--set", json.dumps(altered))
    assert json.loads(_ok(port, "offsets", "src")) == altered
    assert "reset successfully" in _ok(port, "offsets", "src", "--reset")
    assert json.loads(_ok(port, "offsets", "src")) == {"offsets": []}

    assert _ok(port, "delete", "src") == "Deleted connector src\n"
    assert _ok(port, "delete", "sink") == "Deleted connector sink\n"
    assert _ok(port, "list") == ""
    worker.stop()


def test_flat_json_config_and_errors(broker, tmp_path):
    topic = ck.create_topic(broker.bootstrap, unique_topic("cli"))
    worker, port = _worker(tmp_path, broker)
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"name": "flat", "connector.class": "FileStreamSource",
                                "file": str(tmp_path / "none.txt"), "topic": topic}))
    assert _ok(port, "create", str(flat)) == "Created connector flat\n"
    assert _ok(port, "list") == "flat\n"

    not_found = "Connector nope not found"
    for args, message in ((["status", "nope"], "No status found for connector nope"),
                          (["describe", "nope"], not_found), (["pause", "nope"], not_found),
                          (["delete", "nope"], not_found), (["offsets", "nope"], not_found)):
        code, out, err = _cli(port, *args)
        assert (code, out, err) == (1, "", f"oxbow: error: {message} (error code 404)\n"), args
    code, _, err = _cli(port, "create", str(flat))
    assert code == 1 and err.count("\n") == 1 and "already exists" in err
    code, _, err = _cli(port, "offsets", "flat", "--reset")
    assert code == 1 and err.count("\n") == 1 and "STOPPED state" in err
    worker.stop()


def test_no_worker_listening(tmp_path):
    port = free_port()
    code, out, err = _cli(port, "list")
    assert (code, out) == (1, "")
    assert err.startswith(f"oxbow: error: cannot reach the Connect worker at "
                          f"http://127.0.0.1:{port}") and err.count("\n") == 1
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = _cli(port, "create", str(bad))
    assert code == 1 and err == f"oxbow: error: {bad}: not valid JSON\n"


def test_failed_task_status_shows_its_trace_first_line(broker, tmp_path):
    worker, port = _worker(tmp_path, broker)
    topic = ck.create_topic(broker.bootstrap, unique_topic("cli"))
    # JsonConverter cannot read this record: the task fails.
    producer = ck.producer(broker.bootstrap)
    producer.produce(topic, value=b"not json", partition=0)
    producer.flush(10)
    props = tmp_path / "sink.properties"
    props.write_text(f"name=sink\nconnector.class=FileStreamSink\ntopics={topic}\n"
                     f"file={tmp_path / 'out.txt'}\n"
                     "value.converter=org.apache.kafka.connect.json.JsonConverter\n")
    _ok(port, "create", str(props))
    wait_until(lambda: _states(port, "sink") == ["RUNNING", "FAILED"], 30,
               message="the sink task FAILED")
    lines = _ok(port, "status", "sink").splitlines()
    task = lines.index(next(line for line in lines if line.startswith("task 0")))
    # The trace's first line only, indented under the task.
    assert lines[task + 1:] == ["           Tolerance exceeded in error handler"]
    restarted = _ok(port, "restart", "sink", "--include-tasks", "--only-failed")
    assert restarted.startswith("Restarted connector sink\nConnector sink (sink)\n")
    worker.stop()
