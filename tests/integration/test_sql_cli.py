"""`oxbow sql [URL]`, ksqlDB's CLI, against a real broker and `oxbow sql-server`: statements
with -e and -f, RUN SCRIPT, --output JSON, errors, an unreachable server, and the interactive
prompt driven in a pseudo-terminal (a multi-line statement, then Ctrl-D).
"""

import json
import os
import pty
import select
import subprocess
import termios
import time

import ck_helpers as ck
from harness import OXBOW_BIN, free_port, wait_until
from test_sql_server import server  # noqa: F401 - the fixture: a broker and a SQL server

STREAM_HEADER = [" Stream Name", "Kafka Topic", "Key Format", "Value Format", "Windowed"]


def url(server):
    return f"http://127.0.0.1:{server.port}"


def cli(*args, timeout=120):
    return subprocess.run([OXBOW_BIN, "sql", *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def table_rows(text, header_start):
    """The rows of the aligned table whose header starts with `header_start`, as cell lists,
    after checking the rules above and below it are as wide as its lines."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    header, rule = lines[start], lines[start + 1]
    assert set(rule) == {"-"} and len(rule) == len(header), text
    rows = []
    for line in lines[start + 2:]:
        if set(line) == {"-"}:
            assert len(line) == len(header), text
            return [[c.strip() for c in header.split("|")]] + rows
        assert len(line) == len(header), text  # aligned: every line as wide as the header
        rows.append([c.strip() for c in line.split("|")])
    raise AssertionError("no closing rule:\n" + text)


def test_execute_prints_status_and_show_streams_as_ksqldbs_tables(server):
    r = cli(url(server), "-e", "CREATE STREAM clicks (id INT KEY, page STRING) "
            "WITH (kafka_topic='clicks', value_format='JSON', partitions=1); SHOW STREAMS;")
    assert r.returncode == 0, r.stderr
    assert table_rows(r.stdout, " Message") == [["Message"], ["Stream created"]]
    rows = table_rows(r.stdout, " Stream Name")
    assert rows[0] == [c.strip() for c in STREAM_HEADER]
    assert ["CLICKS", "clicks", "KAFKA", "JSON", "false"] in rows[1:]
    assert ["KSQL_PROCESSING_LOG", "default_ksql_processing_log", "KAFKA", "JSON", "false"] in rows[1:]

    r = cli(url(server), "-e", "DESCRIBE clicks;")
    assert r.returncode == 0, r.stderr
    assert "Name                 : CLICKS" in r.stdout
    assert table_rows(r.stdout, " Field") == [["Field", "Type"], ["ID", "INTEGER          (key)"],
                                              ["PAGE", "VARCHAR(STRING)"]]


def test_file_runs_statements_and_run_script_and_queries_show(server, tmp_path):
    inner = tmp_path / "inner.sql"
    inner.write_text("CREATE STREAM views (id INT KEY, n INT)\n"
                     "  WITH (kafka_topic='views', value_format='JSON', partitions=1);\n")
    script = tmp_path / "script.sql"
    script.write_text(f"-- the sources first\nRUN SCRIPT '{inner}';\n"
                      "CREATE STREAM big AS SELECT * FROM views WHERE n > 10;\n"
                      "SHOW QUERIES;\nSHOW TABLES;\n")
    r = cli(url(server), "-f", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(" Message") == 2 and "Stream created" in r.stdout
    assert "Created query with ID CSAS_BIG_" in r.stdout
    rows = table_rows(r.stdout, " Query ID")
    assert rows[0] == ["Query ID", "Query Type", "Status", "Sink Name", "Sink Kafka Topic", "Query String"]
    [query] = rows[1:]
    assert query[0].startswith("CSAS_BIG_") and query[1:5] == ["PERSISTENT", "RUNNING:1", "BIG", "BIG"]
    assert table_rows(r.stdout, " Table Name") == [["Table Name", "Kafka Topic", "Key Format",
                                                    "Value Format", "Windowed"]]


def test_output_json_prints_the_servers_entities(server):
    r = cli(url(server), "--output", "JSON", "-e", "SHOW STREAMS;")
    assert r.returncode == 0, r.stderr
    [entity] = json.loads(r.stdout)
    assert entity["@type"] == "streams" and entity["statementText"] == "SHOW STREAMS;"
    assert "KSQL_PROCESSING_LOG" in [s["name"] for s in entity["streams"]]
    assert " Stream Name" not in r.stdout


def test_an_error_is_one_line_and_stops_the_script(server):
    r = cli(url(server), "-e", "CREATE STREAM bad AS SELECT * FROM missing; SHOW STREAMS;")
    assert r.returncode == 1
    [line] = r.stderr.splitlines()
    assert "MISSING" in line and "does not exist" in line, r.stderr
    assert r.stdout == ""  # SHOW STREAMS never ran

    r = cli(url(server), "-e", "RUN SCRIPT '/no/such/file.sql';")
    assert r.returncode == 1 and "/no/such/file.sql" in r.stderr


def test_unreachable_server_is_one_line_and_exit_code_1():
    port = free_port()
    r = cli(f"http://127.0.0.1:{port}", "-e", "SHOW STREAMS;")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"oxbow: error: Could not reach the SQL server at http://127.0.0.1:{port}: Connection refused"]


def test_sql_run_is_still_the_in_process_engine(tmp_path):
    r = cli("run", str(tmp_path / "missing.sql"), "-b", "127.0.0.1:1")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"oxbow: error: cannot read {tmp_path / 'missing.sql'}"]


class Terminal:
    """A process on a pseudo-terminal: what it wrote, read as it comes."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execve(args[0], args, env)
        self.output = b""
        self.mark = 0  # expect() looks at what came after the last write

    def write(self, text, timeout=30):
        # libedit puts the terminal in its editing mode after the prompt is out; what is typed
        # before may be lost in the switch, as a person typing at once could see too.
        deadline = time.monotonic() + timeout
        while termios.tcgetattr(self.fd)[3] & termios.ICANON:
            assert time.monotonic() < deadline, "the prompt never took the terminal"
            self.read(0.01)
        self.mark = len(self.output)
        os.write(self.fd, text.encode())

    def read(self, timeout):
        if select.select([self.fd], [], [], timeout)[0]:
            try:
                self.output += os.read(self.fd, 4096)
            except OSError:  # the process ended and the terminal closed
                return False
        return True

    def expect(self, wanted, timeout=60):
        deadline = time.monotonic() + timeout
        while wanted.encode() not in self.output[self.mark:]:
            left = deadline - time.monotonic()
            assert left > 0 and self.read(left), \
                f"no {wanted!r} in {self.output[self.mark:].decode(errors='replace')!r}"

    def exit_code(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.read(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        raise AssertionError("still running: " + self.output.decode(errors="replace"))

    def close(self):
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def test_prompt_takes_a_multi_line_statement_completes_keeps_history_and_ends_at_ctrl_d(server, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="dumb")
    term = Terminal([OXBOW_BIN, "sql", url(server)], env)
    try:
        term.expect("ksql> ")
        assert b"Oxbow SQL CLI" in term.output and url(server).encode() in term.output
        term.write("CREATE STREAM visits (id INT KEY, v STRING)\r")
        term.expect("\n> ")  # the continuation prompt: no ';' yet, nothing sent
        assert b"Message" not in term.output[term.mark:]
        term.write("  WITH (kafka_topic='visits', value_format='JSON', partitions=1);\r")
        term.expect("Stream created")
        term.expect("ksql> ")
        term.write("show streams;\r")
        term.expect("VISITS")
        term.expect("ksql> ")
        # Tab completes a keyword, then a stream's name the server has.
        term.write("descr\tvis\t;\r")
        term.expect("Name                 : VISITS")
        term.expect("ksql> ")
        term.write("\x04")  # Ctrl-D on an empty line
        assert term.exit_code() == 0
    finally:
        term.close()

    # The next session has the statements in its history: Ctrl-P recalls the last one.
    term = Terminal([OXBOW_BIN, "sql", url(server)], env)
    try:
        term.expect("ksql> ")
        term.write("\x10\r")
        term.expect("describe VISITS ;")
        term.expect("Name                 : VISITS")
        term.expect("ksql> ")
        term.write("exit\r")
        assert term.exit_code() == 0
    finally:
        term.close()


CLICKS = ("CREATE STREAM clicks (id INT KEY, page STRING, n INT) "
          "WITH (kafka_topic='clicks', value_format='JSON', partitions=1);")


def produce_clicks(server, clicks):
    producer = ck.producer(server.broker.bootstrap)
    for id_, page, n in clicks:
        producer.produce("clicks", key=id_.to_bytes(4, "big"), value=json.dumps({"PAGE": page, "N": n}))
    producer.flush(30)


def test_a_push_query_prints_ksqldbs_table_until_its_limit(server):
    r = cli(url(server), "-e", CLICKS)
    assert r.returncode == 0, r.stderr
    produce_clicks(server, [(1, "/home", 3), (2, "/a-page-name-longer-than-a-cell", 4), (3, "/c", 5)])
    r = cli(url(server), "-e", "SET 'auto.offset.reset' = 'earliest'; "
            "SELECT id, page, n * 2 AS twice FROM clicks EMIT CHANGES LIMIT 2;")
    assert r.returncode == 0, r.stderr
    cell = 80 // 3 - 2  # ksqlDB's CLI shares the width (80 off a terminal) out between the columns
    rule = "+" + ("-" * cell + "+") * 3
    assert r.stdout.splitlines() == [
        "Successfully changed local property 'auto.offset.reset' to 'earliest'. "
        "Use the UNSET command to revert your change.",
        rule,
        "|" + "".join(name.ljust(cell) + "|" for name in ["ID", "PAGE", "TWICE"]),
        rule,
        "|" + "".join(v.ljust(cell) + "|" for v in ["1", "/home", "6"]),
        # A value wider than its cell goes on over further lines, as ksqlDB's CLI wraps it.
        "|" + "".join(v.ljust(cell) + "|" for v in ["2", "/a-page-name-longer-than", "8"]),
        "|" + "".join(v.ljust(cell) + "|" for v in ["", "-a-cell", ""]),
        "Limit Reached",
        "Query terminated",
    ]


def test_a_query_the_server_refuses_is_one_line_and_unset_needs_a_set(server):
    r = cli(url(server), "-e", "SELECT * FROM nowhere EMIT CHANGES;")
    assert r.returncode == 1
    [line] = r.stderr.splitlines()
    assert "NOWHERE" in line and "does not exist" in line, r.stderr
    r = cli(url(server), "-e", "UNSET 'auto.offset.reset';")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "Cannot unset local property 'auto.offset.reset' which was never set in the first place"]


def test_ctrl_c_ends_a_push_query_and_not_the_prompt(server, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="dumb")
    assert cli(url(server), "-e", CLICKS).returncode == 0
    produce_clicks(server, [(7, "/seven", 1)])
    term = Terminal([OXBOW_BIN, "sql", url(server)], env)
    try:
        term.expect("ksql> ")
        term.write("SET 'auto.offset.reset'='earliest';\r")
        term.expect("Successfully changed local property")
        term.expect("ksql> ")
        term.write("SELECT page FROM clicks EMIT CHANGES;\r")
        term.expect("|/seven")
        produce_clicks(server, [(8, "/eight-while-it-runs", 2)])  # rows come as they arrive
        term.expect("|/eight-while-it-runs")
        term.mark = len(term.output)
        os.write(term.fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to the CLI
        term.expect("Query terminated")
        term.expect("ksql> ")
        term.write("show streams;\r")  # the CLI goes on
        term.expect("CLICKS")
        term.expect("ksql> ")
        term.write("exit\r")
        assert term.exit_code() == 0
    finally:
        term.close()


def test_the_clis_own_commands_and_spool(server, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), TERM="dumb")
    spool = tmp_path / "session.txt"
    term = Terminal([OXBOW_BIN, "sql", url(server)], env)
    try:
        term.expect("ksql> ")
        for typed, wanted in [
            ("help", "spool <file>|OFF:"),
            ("output", "Current output format: TABULAR"),
            ("OUTPUT json;", "ksql> "),
            ("output", "Current output format: JSON"),
            ("output xml", "Unknown output format: xml"),
            ("output TABULAR", "ksql> "),
            ("server", url(server)),
            ("version", "Version: "),
            ("spool", "Too few parameters"),
            (f"spool '{spool}'", f"Session will be spooled to {spool}"),
            ("show streams;", "KSQL_PROCESSING_LOG"),
            ("spool off", f"Spool written to {spool}"),
            ("history", "show streams;"),
        ]:
            term.write(typed + "\r")
            term.expect(wanted)
            term.expect("ksql> ")
        term.write("exit\r")
        assert term.exit_code() == 0
    finally:
        term.close()
    spooled = spool.read_text()
    # As ksqlDB's: the spool starts with its own announcement, then the session.
    assert spooled.startswith(f"Session will be spooled to {spool}\nEnter SPOOL OFF to disable\n"
                              "ksql> show streams;\n"), spooled
    assert "KSQL_PROCESSING_LOG" in spooled and "ksql> spool off\n" in spooled
    assert "Spool written" not in spooled  # written after the file was closed


def test_print_streams_the_topics_lines_from_query(server):
    ck.create_topic(server.broker.bootstrap, "words", 1)
    producer = ck.producer(server.broker.bootstrap)
    for offset, key in enumerate([b"k1", b"k2"]):
        producer.produce("words", key=key, value=b'{"a":1}', timestamp=1_700_000_000_000 + offset)
    assert producer.flush(30) == 0
    r = cli(url(server), "-e", "PRINT 'words' FROM BEGINNING LIMIT 2;")
    assert r.returncode == 0, r.stderr
    line = "rowtime: 2023/11/14 22:13:20.00{} Z, key: {}, value: {{\"a\":1}}, partition: 0"
    # The empty lines the server sends while nothing comes are not printed, as in ksqlDB's CLI.
    assert r.stdout.splitlines() == ["Key format: KAFKA_STRING", "Value format: JSON or KAFKA_STRING",
                                     line.format(0, "k1"), line.format(1, "k2"), "Topic printing ceased"]

    r = cli(url(server), "-e", "PRINT nope;")
    assert r.returncode == 1
    assert r.stderr.startswith("Could not find topic 'nope'"), r.stderr


def test_a_pull_query_prints_the_tables_rows_then_ends(server):
    r = cli(url(server), "-e", CLICKS + " SET 'auto.offset.reset'='earliest'; "
            "CREATE TABLE counts AS SELECT id, COUNT(*) AS views FROM clicks GROUP BY id;")
    assert r.returncode == 0, r.stderr
    produce_clicks(server, [(1, "/a", 1), (2, "/b", 1), (1, "/c", 1)])
    cell = 80 // 2 - 2
    wanted = "|" + "".join(v.ljust(cell) + "|" for v in ["1", "2"])

    def answered():
        r = cli(url(server), "-e", "SELECT * FROM counts WHERE id = 1;")
        assert r.returncode == 0, r.stderr
        return r.stdout if wanted in r.stdout else None

    out = wait_until(answered, 60, interval=0.2, message="the pull query seeing both views of id 1")
    rule = "+" + ("-" * cell + "+") * 2
    assert out.splitlines() == [rule, "|" + "".join(n.ljust(cell) + "|" for n in ["ID", "VIEWS"]), rule,
                                wanted, "Query terminated"]


def test_variables_are_the_clis_substituted_before_sending(server):
    r = cli(url(server), "-e", "DEFINE name = 'visits'; DEFINE Parts = '2'; "
            "CREATE STREAM ${name} (id INT KEY, v STRING) "
            "WITH (kafka_topic='${name}_topic', value_format='JSON', partitions=${parts}); "
            "SHOW VARIABLES; UNDEFINE nope; UNDEFINE parts; LIST VARIABLES; SHOW TOPICS;")
    assert r.returncode == 0, r.stderr
    assert table_rows(r.stdout, " Message") == [["Message"], ["Stream created"]]
    listed = r.stdout.split("Variable Name")
    assert len(listed) == 3, r.stdout  # SHOW and LIST VARIABLES
    assert "Parts" in listed[1] and "visits" in listed[1]
    assert "Parts" not in listed[2] and "visits" in listed[2]
    assert "Cannot undefine variable 'nope' which was never defined." in r.stdout
    assert ["visits_topic", "2", "1"] in table_rows(r.stdout, " Kafka Topic")


def test_describe_function_prints_ksqldbs_block(server):
    r = cli(url(server), "-e", "DESCRIBE FUNCTION substring;")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "Name        : SUBSTRING" in lines and "Type        : SCALAR" in lines, r.stdout
    assert "Variations  : " in lines
    variations = [line for line in lines if line.startswith("\tVariation   : SUBSTRING(")]
    assert len(variations) >= 2, r.stdout  # with and without the length
    assert any(line.startswith("\tReturns     : ") for line in lines)
    assert all(len(line.expandtabs(2)) <= 80 for line in lines), r.stdout  # descriptions wrapped


QUICKSTART = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "sql-quickstart")


def test_the_readmes_sql_quick_start(server):
    """README.md's steps: the two queries, the users, the events, then push and pull queries."""
    def run_file(name):
        r = cli(url(server), "-f", os.path.join(QUICKSTART, name))
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = run_file("queries.sql")
    assert "Created query with ID CTAS_POSSIBLE_FRAUD_0" in out and "CSAS_VIP_ACTIONS_1" in out
    run_file("users.sql")
    # The join's table side holds both users before any click comes (its changelog says so).
    changelog = "_confluent-ksql-default_query_CSAS_VIP_ACTIONS_1-KafkaTopic_Right-Reduce-changelog"
    def users_held():
        return sum(ck.watermarks(server.broker.bootstrap, changelog, p)[1] for p in (0, 1)) >= 2

    wait_until(users_held, 60, interval=0.2, message="the users in the join's table")
    run_file("events.sql")

    r = cli(url(server), "-e", "SET 'auto.offset.reset' = 'earliest'; "
            "SELECT * FROM vip_actions EMIT CHANGES LIMIT 1; "
            "SELECT card_number, attempts FROM possible_fraud EMIT CHANGES LIMIT 1;", timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in r.stdout.splitlines()
            if line.startswith("|")]
    assert rows == [["C_USERID", "PAGE", "ACTION"], ["alice", "/checkout", "buy"],
                    ["CARD_NUMBER", "ATTEMPTS"], ["4111", "4"]], r.stdout

    pull = cli(url(server), "-e", "SELECT * FROM possible_fraud WHERE card_number = '4111';")
    assert pull.returncode == 0, pull.stderr
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in pull.stdout.splitlines()
             if line.startswith("|")]
    assert cells == [["CARD_NUMBER", "WINDOWSTART", "WINDOWEND", "ATTEMPTS"],
                     ["4111", "1767225600000", "1767225605000", "4"]], pull.stdout
