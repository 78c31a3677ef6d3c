"""SHOW STREAMS|QUERIES [EXTENDED] and DESCRIBE [EXTENDED] end to end: `oxbow sql run` against a
real broker, its output compared with what ksqlDB's CLI prints for the same entities.
"""

import ck_helpers as ck
from test_sql_print import SqlRun, tables

STATEMENTS = """
CREATE STREAM clicks (userid STRING KEY, page STRING) WITH (kafka_topic='clicks', value_format='json');
CREATE STREAM home AS SELECT userid, page FROM clicks WHERE page = 'home';
SHOW STREAMS;
SHOW QUERIES;
DESCRIBE clicks;
DESCRIBE clicks EXTENDED;
SHOW QUERIES EXTENDED;
"""


def test_show_and_describe_print_as_ksqldbs_cli(broker, tmp_path):
    ck.create_topic(broker.bootstrap, "clicks", 2)
    run = SqlRun(broker, tmp_path, STATEMENTS)
    run.wait_for(lambda t: "running CSAS_HOME_0" in t, "the query running")
    run.stop()
    text = run.text()
    # The queries' and sources' titles are underlined too: only the tables with cells.
    streams, queries, plain_fields, extended_fields, query_fields = [
        t for t in tables(text) if len(t[0]) > 1]
    assert streams == [["Stream Name", "Kafka Topic", "Key Format", "Value Format", "Windowed"],
                       ["CLICKS", "clicks", "KAFKA", "JSON", "false"],
                       ["HOME", "HOME", "KAFKA", "JSON", "false"],
                       ["KSQL_PROCESSING_LOG", "default_ksql_processing_log", "KAFKA", "JSON",
                        "false"]]
    home = "CREATE STREAM home AS SELECT userid, page FROM clicks WHERE page = 'home';"
    assert queries == [["Query ID", "Query Type", "Status", "Sink Name", "Sink Kafka Topic",
                        "Query String"],
                       ["CSAS_HOME_0", "PERSISTENT", "RUNNING:1", "HOME", "HOME", home]]
    assert "For detailed information on a Query run: EXPLAIN <Query ID>;" in text
    fields = [["Field", "Type"], ["USERID", "VARCHAR(STRING)  (key)"], ["PAGE", "VARCHAR(STRING)"]]
    assert plain_fields == fields and extended_fields == fields and query_fields == fields
    assert ("Name                 : CLICKS\n"
            " Field  | Type                   \n") in text
    assert "For runtime statistics and query details run: DESCRIBE <Stream,Table> EXTENDED;" in text
    # EXTENDED: the topic as the cluster describes it, the statement, the reading query.
    for line in ["Type                 : STREAM",
                 "Timestamp field      : Not set - using <ROWTIME>",
                 "Key format           : KAFKA",
                 "Value format         : JSON",
                 "Kafka topic          : clicks (partitions: 2, replication: 1)",
                 "Statement            : CREATE STREAM clicks (userid STRING KEY, page STRING) "
                 "WITH (kafka_topic='clicks', value_format='json');",
                 "Queries that read from this STREAM",
                 f"CSAS_HOME_0 (RUNNING) : {home}",
                 "Local runtime statistics",
                 "(Statistics of the local KSQL server interaction with the Kafka topic clicks)",
                 # SHOW QUERIES EXTENDED
                 "ID                   : CSAS_HOME_0",
                 "Query Type           : PERSISTENT",
                 f"SQL                  : {home}",
                 "Sources that this query reads from: ",
                 "Sinks that this query writes to: ",
                 "Execution plan      ",
                 "Processing topology "]:
        assert line + "\n" in text, line
