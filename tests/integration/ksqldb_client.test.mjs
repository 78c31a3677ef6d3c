// `oxbow sql-server` driven only through ksqldb-client (npm), a client written for ksqlDB: it
// speaks cleartext HTTP/2 with prior knowledge, sends /ksql, /query-stream and /close-query
// requests, and parses each DATA frame of a push query as one JSON document. Rows come from a
// kafkajs producer writing to the source's topic; the broker and the server are real processes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

import { eventually, startBroker, startSqlServer } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const require = createRequire(import.meta.url);
const KsqldbClient = require('ksqldb-client');
const { Kafka, logLevel } = require('kafkajs');

describe('ksqldb-client against oxbow sql-server', () => {
  let broker, server, client, producer;

  before(async () => {
    broker = await startBroker({ 'group.initial.rebalance.delay.ms': '0' }, { prefix: 'oxbow-ksqldb-client-broker-' });
    server = await startSqlServer(broker, 'oxbow-ksqldb-client-');
    client = new KsqldbClient({ host: '127.0.0.1', port: server.port });
    await client.connect();
    const kafka = new Kafka({ clientId: 'ksqldb-client-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    producer = kafka.producer();
    await producer.connect();
  });

  after(async () => {
    if (client) await client.disconnect().catch(() => {});
    if (producer) await producer.disconnect().catch(() => {});
    if (server) assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.logTail());
    if (broker) await broker.stop();
  });

  test('CREATE STREAM and a CTAS through executeStatement, then the lists and describeSource', async () => {
    let r = await client.executeStatement(
      "CREATE STREAM pageviews (viewtime BIGINT, userid VARCHAR KEY, pageid VARCHAR) WITH (kafka_topic='pageviews', value_format='JSON', partitions=1);");
    assert.equal(r.status, 200, JSON.stringify(r.error));
    const [created] = r.data.rows;
    assert.equal(created['@type'], 'currentStatus');
    assert.equal(created.commandId, 'stream/PAGEVIEWS/create');
    assert.equal(created.commandStatus.status, 'SUCCESS');
    assert.equal(created.commandStatus.message, 'Stream created');

    r = await client.executeStatement(
      'CREATE TABLE views_per_user AS SELECT userid, COUNT(*) AS views FROM pageviews GROUP BY userid EMIT CHANGES;',
      { streamsProperties: { 'ksql.streams.auto.offset.reset': 'earliest' } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    const ctas = r.data.rows[0];
    assert.match(ctas.commandStatus.queryId, /^CTAS_VIEWS_PER_USER_\d+$/);
    assert.match(ctas.commandStatus.message, /^Created query with ID CTAS_VIEWS_PER_USER_\d+$/);

    const streams = await client.listStreams();
    const pageviews = streams.find((s) => s.name === 'PAGEVIEWS');
    assert.deepEqual(pageviews, { type: 'STREAM', name: 'PAGEVIEWS', topic: 'pageviews', keyFormat: 'KAFKA', valueFormat: 'JSON', isWindowed: false });
    const tables = await client.listTables();
    assert.deepEqual(tables.map((t) => t.name), ['VIEWS_PER_USER']);
    const queries = await client.listQueries();
    const query = queries.find((q) => q.id === ctas.commandStatus.queryId);
    assert.ok(query, JSON.stringify(queries));
    assert.deepEqual(query.sinks, ['VIEWS_PER_USER']);
    assert.equal(query.queryType, 'PERSISTENT');
    const topics = await client.listTopics();
    assert.ok(topics.some((t) => t.name === 'pageviews'), JSON.stringify(topics));

    const described = await client.describeSource('PAGEVIEWS');
    assert.equal(described.name, 'PAGEVIEWS');
    assert.equal(described.topic, 'pageviews');
    assert.deepEqual(described.fields.map((f) => [f.name, f.schema.type, f.type]),
      [['USERID', 'STRING', 'KEY'], ['VIEWTIME', 'BIGINT', undefined], ['PAGEID', 'STRING', undefined]]);
    assert.ok(described.readQueries.some((q) => q.id === query.id));
  });

  test('a push query with LIMIT through streamQuery receives rows a producer writes', async () => {
    const rows = [];
    let metadata;
    const streamed = client.streamQuery(
      'SELECT userid, pageid, viewtime FROM pageviews EMIT CHANGES LIMIT 3;',
      (data) => {
        assert.equal(data.status, 200);
        metadata = data.metadata;
        if (data.rows) rows.push(...data.rows);
      });
    // The query reads from `latest` (ksqlDB's default): produce until its rows arrive.
    let n = 0;
    const producing = (async () => {
      while (rows.length < 3 && n < 200) {
        n += 1;
        await producer.send({ topic: 'pageviews', messages: [{ key: `user${n % 2}`, value: JSON.stringify({ VIEWTIME: n, PAGEID: `page${n}` }) }] });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const result = await streamed;
    await producing;
    assert.equal(result.status, 200);
    assert.deepEqual(result.data.metadata.columnNames, ['USERID', 'PAGEID', 'VIEWTIME']);
    assert.deepEqual(result.data.metadata.columnTypes, ['STRING', 'STRING', 'BIGINT']);
    assert.match(metadata.queryId, /^transient_PAGEVIEWS_/);
    assert.equal(rows.length, 3, JSON.stringify(rows));
    for (const row of rows) {
      assert.match(row.USERID, /^user[01]$/);
      assert.equal(row.PAGEID, `page${row.VIEWTIME}`);
    }
  });

  test('query() with EMIT CHANGES and LIMIT: the header and rows as one JSON array', async () => {
    // From the beginning: the rows the test before produced are there already.
    const { status, data, error } = await client.query('SELECT pageid, viewtime FROM pageviews EMIT CHANGES LIMIT 2;',
      { properties: { 'auto.offset.reset': 'earliest' } });
    assert.equal(status, 200, JSON.stringify(error));
    assert.deepEqual(data.metadata.columnNames, ['PAGEID', 'VIEWTIME']);
    assert.deepEqual(data.rows, [{ PAGEID: 'page1', VIEWTIME: 1 }, { PAGEID: 'page2', VIEWTIME: 2 }]);
  });

  test('terminatePushQuery closes an open push query, which then ends', async () => {
    let metadata;
    const streamed = client.streamQuery('SELECT * FROM pageviews EMIT CHANGES;', (data) => { metadata = data.metadata; });
    await eventually(() => metadata !== undefined, 30000, 'the push query header');
    const closed = await client.terminatePushQuery(metadata.queryId);
    assert.equal(closed.status, 200, JSON.stringify(closed.error));
    assert.equal((await streamed).status, 200);

    const unknown = await client.terminatePushQuery('transient_NOPE_1');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.error.error_code, 50002);
  });

  test('a push query the engine refuses comes back as the error', async () => {
    const result = await client.streamQuery('SELECT * FROM no_such_stream EMIT CHANGES;', () => {});
    assert.equal(result.status, 400);
    assert.equal(result.error['@type'], 'generic_error');
    assert.equal(result.error.error_code, 40001);
    assert.match(result.error.message, /NO_SUCH_STREAM/);
  });

  test('bad statements through executeStatement come back as statement errors', async () => {
    let r = await client.executeStatement('CREATE STREAM broken (a INT) WITH (kafka_topic=);');
    assert.equal(r.status, 400);
    assert.equal(r.error['@type'], 'statement_error');
    assert.equal(r.error.error_code, 40001);
    assert.equal(r.error.statementText, 'CREATE STREAM broken (a INT) WITH (kafka_topic=);');
    assert.ok(r.error.message.length > 0);

    r = await client.executeStatement('DROP STREAM no_such_stream;');
    assert.equal(r.status, 400);
    assert.match(r.error.message, /NO_SUCH_STREAM/);

    r = await client.executeStatement('SELECT * FROM pageviews EMIT CHANGES;');
    assert.equal(r.status, 400);
    assert.match(r.error.message, /\/query/);

    // The client refuses these itself, before sending anything.
    await assert.rejects(client.executeStatement('LIST STREAMS'), /Missing semicolon/);
    await assert.rejects(client.executeStatement('LIST STREAMS; LIST TABLES;'), /one statement at a time/);
    // And it tells apart what the server answered with a list.
    await assert.rejects(client.executeStatement('LIST STREAMS;'), /listStreams/);
  });

  test('sessionVariables substitute ${names} in executeStatement', async () => {
    const r = await client.executeStatement(
      "CREATE STREAM ${name} (id INT KEY, v VARCHAR) WITH (kafka_topic='${topic}', value_format='JSON', partitions=1);",
      { sessionVariables: { name: 'substituted', topic: 'substituted_topic' } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.data.rows[0].commandId, 'stream/SUBSTITUTED/create');
    const described = await client.describeSource('SUBSTITUTED');
    assert.equal(described.topic, 'substituted_topic');
    const dropped = await client.executeStatement('DROP STREAM substituted DELETE TOPIC;');
    assert.equal(dropped.status, 200, JSON.stringify(dropped.error));
  });

  test('streamQuery takes sessionVariables too', async () => {
    let metadata;
    const streamed = client.streamQuery('SELECT ${col} FROM ${source} EMIT CHANGES LIMIT 1;', (data) => { metadata = data.metadata; },
      { sessionVariables: { col: 'pageid', source: 'pageviews' }, properties: { 'auto.offset.reset': 'earliest' } });
    const result = await streamed;
    assert.equal(result.status, 200, JSON.stringify(result.error));
    assert.deepEqual(metadata.columnNames, ['PAGEID']);
  });

  test('DROP of a CTAS table terminates its query, as ksqlDB 0.29 does; DROP IF EXISTS of nothing says so', async () => {
    let r = await client.executeStatement(
      'CREATE TABLE pages AS SELECT pageid, COUNT(*) AS n FROM pageviews GROUP BY pageid EMIT CHANGES;');
    assert.equal(r.status, 200, JSON.stringify(r.error));
    const queryId = r.data.rows[0].commandStatus.queryId;
    r = await client.executeStatement('DROP TABLE pages;');
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.data.rows[0].commandStatus.message, 'Source `PAGES` (topic: PAGES) was dropped.');
    assert.ok(!(await client.listQueries()).some((q) => q.id === queryId));

    r = await client.executeStatement('DROP TABLE IF EXISTS pages;');
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.data.rows[0].commandStatus.message, 'Source `PAGES` does not exist.');
    assert.equal(r.data.rows[0].commandId, 'table/PAGES/drop');
  });

  test('insertInto rows, then pull queries through query() read the table they aggregate into', async () => {
    let r = await client.executeStatement(
      "CREATE STREAM words (word VARCHAR) WITH (kafka_topic='words', value_format='JSON', partitions=1);");
    assert.equal(r.status, 200, JSON.stringify(r.error));
    r = await client.executeStatement('CREATE TABLE word_counts AS SELECT word, COUNT(*) AS n FROM words GROUP BY word EMIT CHANGES;',
      { streamsProperties: { 'auto.offset.reset': 'earliest' } });
    assert.equal(r.status, 200, JSON.stringify(r.error));
    for (const word of ['tree', 'wind', 'tree']) {
      const inserted = await client.insertInto('words', { WORD: word });
      assert.equal(inserted.status, 200, JSON.stringify(inserted.error));
      assert.equal(inserted.data.rows[0].status, 'ok');
    }
    let result;
    await eventually(async () => {
      result = await client.query("SELECT * FROM word_counts WHERE word = 'tree';");
      return result.status === 200 && result.data.rows.length === 1 && result.data.rows[0].N === 2;
    }, 30000, 'the table counting both trees');
    assert.deepEqual(result.data.metadata.columnNames, ['WORD', 'N']);
    assert.match(result.data.metadata.queryId, /^query_\d+$/);
    const all = await client.query('SELECT * FROM ${t};', { sessionVariables: { t: 'word_counts' } });
    assert.equal(all.status, 200, JSON.stringify(all.error));
    assert.deepEqual(all.data.rows.sort((a, b) => a.WORD.localeCompare(b.WORD)), [{ WORD: 'tree', N: 2 }, { WORD: 'wind', N: 1 }]);
    // A scan with WHERE on a value column, as ksqlDB 0.29 allows by default.
    const scanned = await client.query('SELECT word FROM word_counts WHERE n = 1;');
    assert.deepEqual(scanned.data.rows, [{ WORD: 'wind' }]);
    const refused = await client.query('SELECT * FROM no_such_table;');
    assert.equal(refused.status, 400);
    assert.equal(refused.error.error_code, 40001);
    r = await client.executeStatement('DROP TABLE word_counts;');
    assert.equal(r.status, 200, JSON.stringify(r.error));
  });

  test('TERMINATE and DROP through executeStatement', async () => {
    const [query] = (await client.listQueries()).filter((q) => q.sinks.includes('VIEWS_PER_USER'));
    let r = await client.executeStatement(`TERMINATE ${query.id};`);
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.data.rows[0].commandStatus.message, 'Query terminated.');
    assert.equal((await client.listQueries()).filter((q) => q.id === query.id).length, 0);

    r = await client.executeStatement('DROP TABLE views_per_user;');
    assert.equal(r.status, 200, JSON.stringify(r.error));
    assert.equal(r.data.rows[0].commandId, 'table/VIEWS_PER_USER/drop');
    assert.deepEqual(await client.listTables(), []);
  });
});
