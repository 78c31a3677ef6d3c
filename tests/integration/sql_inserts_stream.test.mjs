// `oxbow sql-server`'s POST /inserts-stream against a real broker: rows streamed in over HTTP/2
// (node's own http2 client) and HTTP/1.1 (a chunked request body), one ack per row once the
// cluster has it, read back from the topic by a real consumer; and ksqlDB 0.29's error acks and
// refusals.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { createRequire } from 'node:module';

import { startBroker, startSqlServer } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const require = createRequire(import.meta.url);
const { Kafka, logLevel } = require('kafkajs');
const KsqldbClient = require('ksqldb-client');

// An /inserts-stream over HTTP/2: send(line) writes one line of the body, end() ends it;
// nextLine() resolves with the response's next line, done with the status and every line.
function h2Inserts(server, accept = 'application/vnd.ksqlapi.delimited.v1') {
  const session = http2.connect(server.url);
  const stream = session.request({ ':method': 'POST', ':path': '/inserts-stream', accept });
  let buffered = '', status = 0;
  const lines = [], waiting = [];
  const flush = () => {
    let end;
    while ((end = buffered.indexOf('\n')) >= 0) {
      lines.push(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
    while (waiting.length && lines.length) waiting.shift()(lines.shift());
  };
  stream.setEncoding('utf8');
  stream.on('response', (headers) => { status = headers[':status']; });
  stream.on('data', (d) => { buffered += d; flush(); });
  const done = new Promise((resolve, reject) => {
    stream.on('end', () => {
      if (buffered) lines.push(buffered);
      session.close();
      resolve({ status, lines: lines.splice(0) });
    });
    stream.on('error', reject);
  });
  return {
    send: (object) => stream.write(`${typeof object === 'string' ? object : JSON.stringify(object)}\n`),
    end: () => stream.end(),
    nextLine: () => new Promise((resolve) => { waiting.push(resolve); flush(); }),
    done,
  };
}

// The same over HTTP/1.1: the whole body sent (chunked), then the whole response read.
function h1Inserts(server, lines, accept = 'application/json') {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}/inserts-stream`, { method: 'POST', headers: { accept } }, (r) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (d) => { text += d; });
      r.on('end', () => resolve({ status: r.statusCode, type: r.headers['content-type'], text }));
    });
    request.on('error', reject);
    for (const line of lines) request.write(`${JSON.stringify(line)}\n`);
    request.end();
  });
}

describe('sql-server: /inserts-stream', () => {
  let broker, server, kafka;

  const ksql = async (statements) => {
    const r = await fetch(`${server.url}/ksql`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.ksql.v1+json' },
      body: JSON.stringify({ ksql: statements, streamsProperties: {} }),
    });
    assert.equal(r.status, 200, await r.text());
  };

  // The records of `topic` (one partition) as [key, value] texts, once `count` are there.
  const readBack = async (topic, count) => {
    const consumer = kafka.consumer({ groupId: `inserts-check-${topic}-${Date.now()}` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const records = [];
    await new Promise((resolve) => {
      consumer.run({
        eachMessage: async ({ message }) => {
          records.push([message.key?.toString() ?? null, message.value?.toString() ?? null]);
          if (records.length >= count) resolve();
        },
      });
    });
    await consumer.disconnect();
    return records;
  };

  before(async () => {
    broker = await startBroker({ 'group.initial.rebalance.delay.ms': '0' }, { prefix: 'oxbow-inserts-broker-' });
    server = await startSqlServer(broker, 'oxbow-inserts-');
    kafka = new Kafka({ clientId: 'inserts-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    await ksql("CREATE STREAM readings (sensor STRING KEY, reading INT, note STRING) WITH (kafka_topic='readings', value_format='JSON', partitions=1);");
    await ksql("CREATE TABLE sensors (sensor STRING PRIMARY KEY, place STRING) WITH (kafka_topic='sensors', value_format='JSON', partitions=1);");
    await ksql("CREATE STREAM bad_rows (sensor STRING KEY, reading INT) WITH (kafka_topic='bad_rows', value_format='JSON', partitions=1);");
  });

  after(async () => {
    if (server) assert.deepEqual(await server.stop(), { code: 0, signal: null }, server.logTail());
    if (broker) await broker.stop();
  });

  test('HTTP/2: each row acked while the request is open, every row in the topic', async () => {
    const inserts = h2Inserts(server);
    inserts.send({ target: 'readings', properties: {} });
    // An ack before the next row is sent: the acks stream while the body does.
    inserts.send({ sensor: 's0', reading: 0, note: 'first' });
    assert.deepEqual(JSON.parse(await inserts.nextLine()), { status: 'ok', seq: 0 });
    const n = 200;
    for (let i = 1; i < n; i++) inserts.send({ SENSOR: `s${i % 7}`, READING: i });
    inserts.end();
    const { status, lines } = await inserts.done;
    assert.equal(status, 200);
    const acks = lines.map((l) => JSON.parse(l));
    assert.equal(acks.length, n - 1);
    assert.ok(acks.every((a) => a.status === 'ok'), JSON.stringify(acks.find((a) => a.status !== 'ok')));
    assert.deepEqual(acks.map((a) => a.seq).sort((a, b) => a - b), Array.from({ length: n - 1 }, (_, i) => i + 1));

    const records = await readBack('readings', n);
    assert.equal(records.length, n);
    assert.deepEqual(records[0], ['s0', '{"READING":0,"NOTE":"first"}']);
    assert.deepEqual(records[n - 1], [`s${(n - 1) % 7}`, `{"READING":${n - 1},"NOTE":null}`]);
  });

  test('HTTP/1.1: a table target, acks as one JSON array', async () => {
    const r = await h1Inserts(server, [{ target: 'SENSORS' }, { sensor: 'a', place: 'roof' }, { sensor: 'b', place: 'cellar' }]);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.type, 'application/json');
    assert.deepEqual(JSON.parse(r.text), [{ status: 'ok', seq: 0 }, { status: 'ok', seq: 1 }]);
    assert.deepEqual(await readBack('sensors', 2), [['a', '{"PLACE":"roof"}'], ['b', '{"PLACE":"cellar"}']]);
  });

  test('a row ksqlDB refuses: the rows before it acked, then its error ends the response', async () => {
    const inserts = h2Inserts(server);
    inserts.send({ target: 'bad_rows' });
    inserts.send({ sensor: 'x', reading: 1 });
    inserts.send({ sensor: 'x', reading: 'two' });
    inserts.send({ sensor: 'x', reading: 3 });
    inserts.end();
    const { status, lines } = await inserts.done;
    assert.equal(status, 200);
    assert.deepEqual(lines.map((l) => JSON.parse(l)), [
      { status: 'ok', seq: 0 },
      { '@type': 'InsertError', error_code: 40000, message: "Can't coerce a field of type class java.lang.String into type INTEGER", status: 'error', seq: 1 },
    ]);
    for (const [row, message] of [
      ['{"sensor": "x", ', 'Invalid JSON in inserts stream'],
      [{ reading: 1 }, 'Key field must be specified: SENSOR'],
    ]) {
      const again = h2Inserts(server);
      again.send({ target: 'bad_rows' });
      again.send(row);
      again.end();
      const result = await again.done;
      assert.deepEqual(result.lines.map((l) => JSON.parse(l)),
        [{ '@type': 'InsertError', error_code: 40000, message, status: 'error', seq: 0 }]);
    }
    assert.deepEqual(await readBack('bad_rows', 1), [['x', '{"READING":1}']]);
  });

  test('ksqldb-client (npm) inserts a row and gets the error of a bad one', async () => {
    const client = new KsqldbClient({ host: '127.0.0.1', port: server.port });
    await client.connect();
    try {
      assert.deepEqual(await client.insertInto('sensors', { sensor: 'c', place: 'attic' }),
        { data: { rows: [{ status: 'ok', seq: 0 }] }, error: undefined, status: 200 });
      const bad = await client.insertInto('sensors', { place: 'nowhere' });
      assert.equal(bad.error.message, 'Key field must be specified: SENSOR');
    } finally {
      await client.disconnect();
    }
  });

  test('a client that leaves mid-stream: the server goes on and stops cleanly', async () => {
    const session = http2.connect(server.url);
    const stream = session.request({ ':method': 'POST', ':path': '/inserts-stream' });
    stream.on('error', () => {});
    stream.write(`${JSON.stringify({ target: 'readings' })}\n${JSON.stringify({ sensor: 'gone', reading: 1 })}\n`);
    await new Promise((resolve) => stream.once('data', resolve));  // its first ack
    session.destroy();
    assert.equal((await fetch(`${server.url}/info`)).status, 200);
  });

  test('refused targets and arguments: 400 with ksqlDB\'s codes, the server goes on', async () => {
    for (const [args, code, message] of [
      [{ target: 'nope' }, 40001, 'Cannot insert values into an unknown stream/table: NOPE'],
      ['not json', 40000, 'Invalid JSON in request'],
      [{ properties: {} }, 40000, 'Invalid JSON in request'],
    ]) {
      const inserts = h2Inserts(server);
      inserts.send(args);
      inserts.send({ sensor: 'x' });
      inserts.end();
      const { status, lines } = await inserts.done;
      assert.equal(status, 400, lines.join('\n'));
      const body = JSON.parse(lines.join('\n'));
      assert.equal(body['@type'], 'generic_error');
      assert.equal(body.error_code, code);
      assert.ok(body.message.startsWith(message), body.message);
    }
    assert.equal((await fetch(`${server.url}/info`)).status, 200);
  });
});
