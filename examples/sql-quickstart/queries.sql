-- The two queries of the SQL engine's issue, for README.md's quick start:
--   build/oxbow sql http://localhost:8088 -f examples/sql-quickstart/queries.sql
-- Queries started from here on read their sources from the beginning.
SET 'auto.offset.reset' = 'earliest';

-- Cards tried more than three times within five seconds.
CREATE STREAM authorization_attempts (card_number STRING KEY, amount DOUBLE)
  WITH (kafka_topic='authorization_attempts', value_format='json', partitions=2);
CREATE TABLE possible_fraud AS
  SELECT card_number, COUNT(*) AS attempts FROM authorization_attempts
  WINDOW TUMBLING (SIZE 5 SECONDS)
  GROUP BY card_number HAVING COUNT(*) > 3;

-- What the Platinum users click, as they click it.
CREATE STREAM clickstream (userid STRING KEY, page STRING, action STRING)
  WITH (kafka_topic='clickstream', value_format='json', partitions=2);
CREATE TABLE users (userid STRING PRIMARY KEY, level STRING)
  WITH (kafka_topic='users', value_format='json', partitions=2);
CREATE STREAM vip_actions AS
  SELECT c.userid, page, action FROM clickstream c
  LEFT JOIN users u ON c.userid = u.userid
  WHERE u.level = 'Platinum';
