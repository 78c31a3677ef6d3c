"""Bad input to `oxbow registry`, from a plain HTTP client: malformed bodies, invalid schemas,
huge schemas and bodies, versions that are not versions, and subjects with `%2F`, `:` and `.`.
Each gets Confluent's status, error code and message in a JSON body, and the registry goes on
answering (checked after each case)."""

import json
import socket

import pytest

from test_registry import RECORD, Registry, http


from test_registry import broker, registry  # noqa: F401  (fixtures: a broker and a registry per test)


def still_answers(registry):
    assert http("GET", registry.url + "/subjects")[0] == 200


def error_of(response):
    status, body = response
    parsed = json.loads(body)  # always JSON
    return status, parsed["error_code"], parsed["message"]


def versions_url(registry, subject):
    return f"{registry.url}/subjects/{subject}/versions"


@pytest.mark.parametrize("body", [b"{", b"[]", b'"schema"', b"\xff\xfe", b'{"schema":'])
def test_malformed_bodies_are_400_or_422_with_a_json_error(registry, body):
    status, code, message = error_of(http("POST", versions_url(registry, "bad"), body))
    assert (status, code) in ((400, 400), (422, 422)), (status, code, message)
    assert message
    still_answers(registry)


@pytest.mark.parametrize("body,expected", [
    ({"schema": 5}, (422, 42201)),
    ({}, (422, 42201)),
    ({"schema": ""}, (422, 42201)),
    ({"schema": json.dumps(RECORD), "references": "x"}, None),  # ignored, as Jackson would not be
    ({"schema": json.dumps(RECORD), "references": [{"name": 1}]}, (422, 42201)),
    ({"schema": json.dumps(RECORD), "schemaType": "XML"}, (422, 42201)),
])
def test_bodies_of_the_wrong_shape(registry, body, expected):
    response = http("POST", versions_url(registry, "shape"), body)
    if expected is None:
        assert response[0] in (200, 422), response
    else:
        assert error_of(response)[:2] == expected, response
    still_answers(registry)


@pytest.mark.parametrize("schema,details", [
    ('{"type":"nope"}', 'Undefined name: "nope"'),
    ('{"type":"record","name":"r"}', "Record has no fields"),
    ('{"type":"record","name":"1r","fields":[]}', "1r"),
    ('{"type":"enum","name":"e","symbols":["a","a"]}', "Duplicate enum symbol: a"),
    ('[', ""),
    ('{"type":"fixed","name":"f","size":-1}', ""),
    ('{"type":"record","name":"r","fields":[{"name":"a","type":"int","default":"x"}]}',
     "Invalid default for field a"),
])
def test_invalid_avro_schemas_are_42201_with_the_parsers_reason(registry, schema, details):
    status, code, message = error_of(http("POST", versions_url(registry, "avro"), {"schema": schema}))
    assert (status, code) == (422, 42201), message
    assert message.startswith("Invalid schema {subject=avro,"), message
    assert details in message
    still_answers(registry)


def test_a_deeply_nested_schema_is_refused_not_a_crash(registry):
    schema = '"int"'
    for _ in range(5000):
        schema = '{"type":"array","items":' + schema + "}"
    status, code, message = error_of(http("POST", versions_url(registry, "deep"), {"schema": schema}))
    assert (status, code) == (422, 42201)
    assert "nested too deeply" in message
    still_answers(registry)


def test_a_schema_too_large_for_the_log_is_42209(registry):
    fields = [{"name": f"field_{i:06d}_" + "x" * 20, "type": "string"} for i in range(30000)]
    big = {"type": "record", "name": "Big", "fields": fields}
    assert len(json.dumps(big)) > 1_000_000
    assert error_of(http("POST", versions_url(registry, "big"), {"schema": json.dumps(big)})) == \
        (422, 42209, "Register operation failed because schema is too large")
    # Below the limit, a large schema is fine.
    small = {**big, "fields": fields[:10000]}
    assert http("POST", versions_url(registry, "big"), {"schema": json.dumps(small)})[0] == 200
    still_answers(registry)


def test_a_body_beyond_the_http_limit_is_413_with_a_json_error(registry):
    status, code, message = error_of(http("POST", versions_url(registry, "huge"),
                                          b'{"schema":"' + b"x" * (17 << 20) + b'"}'))
    assert (status, code) == (413, 413)
    still_answers(registry)


@pytest.mark.parametrize("version", ["a", "0", "-2", "2147483648", "1.5", "%20", "latestx"])
def test_versions_that_are_not_versions_are_42202(registry, version):
    assert http("POST", versions_url(registry, "v"), {"schema": json.dumps(RECORD)})[0] == 200
    raw = version.replace("%20", " ")
    assert error_of(http("GET", f"{versions_url(registry, 'v')}/{version}")) == (
        422, 42202, f"The specified version '{raw}' is not a valid version id. Allowed values "
        'are between [1, 2^31-1] and the string "latest"')
    assert error_of(http("DELETE", f"{versions_url(registry, 'v')}/{version}"))[1] == 42202
    still_answers(registry)


@pytest.mark.parametrize("encoded,subject", [
    ("a%2Fb", "a/b"), ("a%3Ab", "a:b"), (":.ctx:orders", ":.ctx:orders"), ("a.b", "a.b"),
    ("%2E", "."), ("with%20space", "with space"), ("%E2%9C%93", "\u2713"),
])
def test_subjects_with_reserved_characters_round_trip(registry, encoded, subject):
    status, body = http("POST", versions_url(registry, encoded), {"schema": json.dumps(RECORD)})
    assert status == 200, body
    assert subject in json.loads(http("GET", registry.url + "/subjects")[1])
    status, body = http("GET", f"{versions_url(registry, encoded)}/latest")
    assert status == 200 and json.loads(body)["subject"] == subject
    still_answers(registry)


@pytest.mark.parametrize("path", ["/subjects/..", "/subjects/%", "/subjects/%zz/versions",
                                  "/schemas/ids/abc", "/schemas/ids/99999999999",
                                  "/config/%00", "/" + "x" * 5000])
def test_odd_paths_get_an_error_not_a_crash(registry, path):
    status, body = http("GET", registry.url + path)
    assert 400 <= status < 500, (path, status, body)
    json.loads(body)
    still_answers(registry)


def test_garbage_on_the_socket_is_dropped_and_the_registry_goes_on(registry):
    for junk in (b"\x00" * 100, b"GET / HTTP/9.9\r\n\r\n", b"POST /subjects/x/versions HTTP/1.1\r\n"
                 b"Content-Length: -5\r\n\r\n", b"A" * 100000 + b"\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", registry.port), timeout=5) as s:
            try:  # the registry may close the connection at any point of this
                s.sendall(junk)
                s.shutdown(socket.SHUT_WR)
                s.recv(1000)
            except OSError:
                pass
        still_answers(registry)
