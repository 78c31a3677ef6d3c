// `oxbow sql-server`'s small endpoints against a real broker: /ws/query over a WebSocket (node's
// own client, undici's, behind --experimental-websocket in node 20, run in a child process),
// GET /clusterStatus with a persistent query running, and GET /is_valid_property/{p}. Shapes,
// close codes and messages are ksqlDB 0.29's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

import { eventually, startBroker, startSqlServer } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const require = createRequire(import.meta.url);
const { Kafka, logLevel } = require('kafkajs');

// The client, in a child process: every message it receives (parsed), then the Close frame's
// code and reason, as one JSON line on stdout. With `closeAfter`, it closes after that many
// messages itself.
const CLIENT = `
const [url, closeAfter] = process.argv.slice(1);
const ws = new WebSocket(url);
const messages = [];
ws.onmessage = (e) => {
  messages.push(JSON.parse(e.data));
  if (closeAfter && messages.length === Number(closeAfter)) ws.close(1000, 'enough');
};
ws.onclose = (e) => {
  console.log(JSON.stringify({ messages, code: e.code, reason: e.reason }));
  process.exit(0);
};
`;

function wsSession(url, closeAfter = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', '-e', CLIENT, url, closeAfter]);
    let out = '', err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', () => {
      clearTimeout(timer);
      try { resolve(JSON.parse(out)); } catch { reject(new Error(`websocket client: ${out}${err}`)); }
    });
  });
}

const wsUrl = (server, request, extra = '') =>
  `ws://127.0.0.1:${server.port}/ws/query?${new URLSearchParams({ ...extra, ...(request === undefined ? {} : { request: JSON.stringify(request) }) })}`;

describe('sql-server: /ws/query, /clusterStatus, /is_valid_property', () => {
  let broker, server;

  const ksql = async (statements, streamsProperties = {}) => {
    const r = await fetch(`${server.url}/ksql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.ksql.v1+json' },
      body: JSON.stringify({ ksql: statements, streamsProperties }),
    });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    return body;
  };

  before(async () => {
    broker = await startBroker({ 'group.initial.rebalance.delay.ms': '0' }, { prefix: 'oxbow-ws-query-broker-' });
    server = await startSqlServer(broker, 'oxbow-ws-query-');
    await ksql("CREATE STREAM clicks (id VARCHAR KEY, page VARCHAR, tags ARRAY<VARCHAR>) WITH (kafka_topic='clicks', value_format='JSON', partitions=1);");
    const kafka = new Kafka({ clientId: 'ws-query-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({
      topic: 'clicks',
      messages: [1, 2, 3, 4].map((i) => ({ key: String(i), value: JSON.stringify({ PAGE: `p${i}`, TAGS: [`t${i}`] }) })),
    });
    await producer.disconnect();
  });

  after(async () => {
    if (server) assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.logTail());
    if (broker) await broker.stop();
  });

  test('a push query with LIMIT: the columns, the rows, then {"error":"done"} and 1000 "done"', async () => {
    const session = await wsSession(wsUrl(server, {
      ksql: 'SELECT id, page, tags FROM clicks EMIT CHANGES LIMIT 3;',
      streamsProperties: { 'ksql.streams.auto.offset.reset': 'earliest' },
    }));
    const [schema, ...rest] = session.messages;
    assert.deepEqual(schema, [
      { name: 'ID', schema: { type: 'STRING', fields: null, memberSchema: null } },
      { name: 'PAGE', schema: { type: 'STRING', fields: null, memberSchema: null } },
      { name: 'TAGS', schema: { type: 'ARRAY', fields: null, memberSchema: { type: 'STRING', fields: null, memberSchema: null } } },
    ]);
    assert.deepEqual(rest, [
      { row: { columns: ['1', 'p1', ['t1']] } },
      { row: { columns: ['2', 'p2', ['t2']] } },
      { row: { columns: ['3', 'p3', ['t3']] } },
      { error: 'done' },
    ]);
    assert.equal(session.code, 1000);
    assert.equal(session.reason, 'done');
  });

  test('a client that closes ends its query on the server', async () => {
    const session = await wsSession(wsUrl(server, {
      ksql: 'SELECT * FROM clicks EMIT CHANGES;',
      streamsProperties: { 'auto.offset.reset': 'earliest' },
    }), '3');
    assert.equal(session.messages.length, 3);
    assert.equal(session.code, 1000);
    const started = [...server.logText().matchAll(/push query (transient_CLICKS_\d+) started over \/ws\/query: SELECT \* FROM clicks EMIT CHANGES;/g)];
    assert.equal(started.length, 1, server.logTail());
    const id = started[0][1];
    await eventually(() => server.logText().includes(`push query ${id} ended`), 30000, `the server ending ${id}`);
  });

  test('refusals: a last {"error"} message and close code 1003 with the message', async () => {
    const cases = [
      [wsUrl(server, undefined), 'Error parsing request: missing request parameter'],
      [wsUrl(server, { ksql: '' }), 'Error parsing request: "ksql" field of "request" must be populated'],
      [wsUrl(server, { ksql: 'SELECT * FROM clicks EMIT CHANGES;' }, { version: '7' }), 'Received invalid api version: 7'],
      [wsUrl(server, { ksql: 'SELECT * FROM clicks EMIT CHANGES;', streamsProperties: { 'ksql.service.id': 'x' } }),
        'Error parsing request: One or more properties overrides set locally are prohibited by the KSQL server (use UNSET to reset their default value): [ksql.service.id]'],
    ];
    for (const [url, message] of cases) {
      const session = await wsSession(url);
      assert.deepEqual(session.messages, [{ error: message }], url);
      assert.equal(session.code, 1003, url);
      assert.equal(session.reason, message.length > 123 ? `${message.slice(0, 120)}...` : message, url);
    }
    const pull = await wsSession(wsUrl(server, { ksql: 'SELECT * FROM nowhere;' }));
    assert.equal(pull.code, 1003);
    assert.match(pull.messages[0].error, /NOWHERE/);
    const unknown = await wsSession(wsUrl(server, { ksql: 'SELECT * FROM nowhere EMIT CHANGES;' }));
    assert.equal(unknown.code, 1003);
    assert.equal(unknown.messages.length, 1);
    assert.match(unknown.messages[0].error, /NOWHERE/);
  });

  test('a pull query: the columns with KEY marked, the rows, then done', async () => {
    const session = await wsSession(wsUrl(server, { ksql: "SELECT id, page FROM clicks WHERE page = 'p2';" }));
    assert.deepEqual(session.messages, [
      [{ name: 'ID', schema: { type: 'STRING', fields: null, memberSchema: null }, type: 'KEY' },
        { name: 'PAGE', schema: { type: 'STRING', fields: null, memberSchema: null } }],
      { row: { columns: ['2', 'p2'] } },
      { error: 'done' },
    ]);
    assert.equal(session.code, 1000);
  });

  test('a commandSequenceNumber is waited for: served once executed, else 1013 after the timeout', async () => {
    const [created] = await ksql("CREATE STREAM waited (id VARCHAR KEY, v INT) WITH (kafka_topic='waited', value_format='JSON', partitions=1);");
    const served = await wsSession(wsUrl(server, {
      ksql: 'SELECT * FROM waited;', commandSequenceNumber: created.commandSequenceNumber,
    }));
    assert.deepEqual(served.messages.at(-1), { error: 'done' });
    assert.equal(served.code, 1000);
    const ahead = created.commandSequenceNumber + 1000;
    const late = await wsSession(wsUrl(server, { ksql: 'SELECT * FROM waited;', commandSequenceNumber: ahead }));
    const message = `Timed out while waiting for a previous command to execute. command sequence number: ${ahead}`;
    assert.deepEqual(late.messages, [{ error: message }]);
    assert.equal(late.code, 1013);
    assert.equal(late.reason, message);
  });

  test('PRINT: each line (formats, then records) a JSON string of its own, then done; an unknown topic 1003', async () => {
    const session = await wsSession(wsUrl(server, { ksql: "PRINT 'clicks' FROM BEGINNING LIMIT 2;" }));
    assert.equal(session.messages.length, 5, JSON.stringify(session.messages));
    assert.deepEqual(session.messages.slice(0, 2),
      ['Key format: JSON or KAFKA_STRING', 'Value format: JSON or KAFKA_STRING']);
    session.messages.slice(2, 4).forEach((line, i) => {
      assert.equal(typeof line, 'string');
      assert.match(line, new RegExp(`^rowtime: .* Z, key: ${i + 1}, value: \\{"PAGE":"p${i + 1}","TAGS":\\["t${i + 1}"\\]\\}, partition: 0$`));
    });
    assert.deepEqual(session.messages[4], { error: 'done' });
    assert.equal(session.code, 1000);
    const missing = await wsSession(wsUrl(server, { ksql: "PRINT 'nowhere';" }));
    assert.equal(missing.code, 1003);
    assert.match(missing.messages[0].error, /^Could not find topic 'nowhere'/);
  });

  test('GET /ws/query without an upgrade is a 400; another method a 405', async () => {
    let r = await fetch(`${server.url}/ws/query?request=%7B%7D`);
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error_code, 40000);
    r = await fetch(`${server.url}/ws/query`, { method: 'POST', body: '{}' });
    assert.equal(r.status, 405);
  });

  test('GET /clusterStatus: this server alive, with its persistent query', async () => {
    const [created] = await ksql('CREATE TABLE pages AS SELECT page, COUNT(*) AS n FROM clicks GROUP BY page EMIT CHANGES;',
      { 'auto.offset.reset': 'earliest' });
    const queryId = created.commandStatus.queryId;
    const host = `127.0.0.1:${server.port}`;
    let status;
    await eventually(async () => {
      const r = await fetch(`${server.url}/clusterStatus`);
      assert.equal(r.status, 200);
      status = await r.json();
      return status.clusterStatus[host]?.activeStandbyPerQuery[queryId]?.activePartitions.length > 0;
    }, 30000, 'the query assigned its partitions');
    assert.deepEqual(Object.keys(status.clusterStatus), [host]);
    const entry = status.clusterStatus[host];
    assert.equal(entry.hostAlive, true);
    assert.ok(Math.abs(entry.lastStatusUpdateMs - Date.now()) < 60000, JSON.stringify(entry));
    assert.deepEqual(entry.hostStoreLags, { stateStoreLags: {}, updateTimeMs: 0 });
    const query = entry.activeStandbyPerQuery[queryId];
    assert.ok(query.activePartitions.some((p) => p.topic === 'clicks' && p.partition === 0), JSON.stringify(query));
    assert.ok(query.activeStores.length > 0, JSON.stringify(query));
    assert.deepEqual(query.standByStores, []);
    assert.deepEqual(query.standByPartitions, []);

    // A pull query over /ws/query on the table, read from the query's store.
    let pulled;
    await eventually(async () => {
      pulled = await wsSession(wsUrl(server, { ksql: "SELECT * FROM pages WHERE page = 'p3';" }));
      return pulled.messages.length === 3;
    }, 30000, 'the table holding p3');
    assert.deepEqual(pulled.messages.slice(1), [{ row: { columns: ['p3', 1] } }, { error: 'done' }]);
    assert.deepEqual(pulled.messages[0].map((f) => [f.name, f.type]), [['PAGE', 'KEY'], ['N', undefined]]);
  });

  test('GET /is_valid_property: true, or 400 for a denied property', async () => {
    let r = await fetch(`${server.url}/is_valid_property/auto.offset.reset`);
    assert.equal(r.status, 200);
    assert.equal(await r.json(), true);
    r = await fetch(`${server.url}/is_valid_property/ksql.service.id`);
    assert.equal(r.status, 400);
    assert.deepEqual(await r.json(), {
      '@type': 'generic_error',
      error_code: 40000,
      message: 'One or more properties overrides set locally are prohibited by the KSQL server (use UNSET to reset their default value): [ksql.service.id]',
    });
  });
});
