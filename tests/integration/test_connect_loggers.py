"""Connect's /admin/loggers on `oxbow connect standalone`, over HTTP: the root logger's level read
and changed, a new logger created, with Kafka's shapes and errors.
"""

from test_connect_offsets import _worker


def test_root_logger_level_read_and_set(broker, tmp_path):
    worker, rest = _worker(tmp_path, broker)
    code, loggers = rest.call("GET", "/admin/loggers")
    assert code == 200 and loggers["root"] == {"level": "INFO", "last_modified": None}
    assert rest.call("GET", "/admin/loggers/nope") == (
        404, {"error_code": 404, "message": "Logger nope not found."})
    assert rest.call("PUT", "/admin/loggers/root", {"level": "loud"}) == (
        404, {"error_code": 404, "message": "invalid log level 'loud'."})
    assert rest.call("PUT", "/admin/loggers/root", {}) == (
        400, {"error_code": 400,
              "message": "Desired 'level' parameter was not specified in request."})

    code, changed = rest.call("PUT", "/admin/loggers/root", {"level": "DEBUG"})
    assert code == 200 and "root" in changed and changed == sorted(changed)
    root = rest.call("GET", "/admin/loggers/root")[1]
    assert root["level"] == "DEBUG" and isinstance(root["last_modified"], int)
    # A name no logger has is created, and listed from then on.
    assert rest.call("PUT", "/admin/loggers/oxbow.example", {"level": "WARN"}) == (
        200, ["oxbow.example"])
    assert rest.call("GET", "/admin/loggers")[1]["oxbow.example"]["level"] == "WARN"
    # A standalone worker is the whole cluster: scope=cluster sets the same loggers.
    assert rest.call("PUT", "/admin/loggers/root?scope=cluster", {"level": "info"}) == (204, None)
    assert rest.call("GET", "/admin/loggers/root")[1]["level"] == "INFO"
    worker.stop()
