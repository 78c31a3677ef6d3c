// @platformatic/kafka (npm), the one client on hand that opens KIP-227 incremental fetch
// sessions, consuming through a session while records keep arriving.

import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { OXBOW_BIN, eventually, startBroker, unusedPort } from './node_helpers.mjs';

// The client is written for Node 22, whose Promise.withResolvers Node 20 lacks.
if (!Promise.withResolvers) {
  Promise.withResolvers = () => {
    let resolve;
    let reject;
    const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  };
}
const { Producer, Consumer, stringSerializers, stringDeserializers } = await import('@platformatic/kafka');

let broker;
let adminPort;

beforeEach(async () => {
  adminPort = await unusedPort();
  broker = await startBroker({
    'group.initial.rebalance.delay.ms': '0',
    'admin.listener': `127.0.0.1:${adminPort}`,
  }, { prefix: 'oxbow-platformatic-' });
});

afterEach(async () => {
  if (broker) await broker.stop();
});

async function metric(name) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

function createTopic(topic, partitions) {
  const created = spawnSync(OXBOW_BIN, ['topic', 'create', topic, '--partitions', String(partitions), '-b', broker.bootstrap]);
  assert.equal(created.status, 0, String(created.stderr));
}

async function produce(producer, topic, partitions, from, to) {
  for (let i = from; i < to; i += 100) {
    const messages = [];
    for (let j = i; j < Math.min(i + 100, to); j++) messages.push({ topic, key: `k${j}`, value: `v${j}`, partition: j % partitions });
    await producer.send({ messages });
  }
}

test('a consumer reads everything through one incremental fetch session', async () => {
  const topic = 'sessions';
  createTopic(topic, 3);
  const producer = new Producer({ clientId: 'p', bootstrapBrokers: [broker.bootstrap], serializers: stringSerializers });
  const total = 3000;
  await produce(producer, topic, 3, 0, total / 2);
  const consumer = new Consumer({
    groupId: 'sessions', clientId: 'c', bootstrapBrokers: [broker.bootstrap], deserializers: stringDeserializers, maxWaitTime: 200,
  });
  const stream = await consumer.consume({ autocommit: true, topics: [topic], mode: 'earliest', sessionTimeout: 10000, heartbeatInterval: 500 });
  const seen = new Map();
  stream.on('data', (m) => seen.set(m.value, (seen.get(m.value) || 0) + 1));
  try {
    await eventually(() => seen.size >= total / 2, 30000, 'the first half');
    // The rest arrives while the consumer polls through its session.
    await produce(producer, topic, 3, total / 2, total);
    await eventually(() => seen.size === total, 30000, `all ${total} records (seen ${seen.size})`);
    assert.ok([...seen.values()].every((n) => n === 1), 'a record was delivered twice');
    assert.ok(await metric('oxbow_incremental_fetches_total') > 0, 'no incremental fetch');
    assert.equal(await metric('oxbow_fetch_session_errors_total'), 0);
    assert.equal(await metric('oxbow_fetch_sessions'), 1);
    assert.equal(await metric('oxbow_fetch_session_partitions'), 3);
  } finally {
    await stream.close();
    await consumer.close();
    await producer.close();
  }
});

test('a rebalance shrinks a session: the partitions given away are forgotten', async () => {
  const topic = 'rebalanced';
  createTopic(topic, 4);
  const producer = new Producer({ clientId: 'p', bootstrapBrokers: [broker.bootstrap], serializers: stringSerializers });
  const seen = new Map();
  const members = [];
  const join = async (name) => {
    const consumer = new Consumer({
      groupId: 'rebalanced', clientId: name, bootstrapBrokers: [broker.bootstrap], deserializers: stringDeserializers, maxWaitTime: 200,
    });
    const stream = await consumer.consume({
      autocommit: 100, topics: [topic], mode: 'committed', fallbackMode: 'earliest', sessionTimeout: 10000, heartbeatInterval: 300,
    });
    stream.on('data', (m) => seen.set(m.value, (seen.get(m.value) || 0) + 1));
    members.push([consumer, stream]);
  };
  try {
    await produce(producer, topic, 4, 0, 1000);
    await join('first');
    await eventually(() => seen.size === 1000, 30000, 'the first 1000 records');
    await join('second');
    await produce(producer, topic, 4, 1000, 4000);
    // Redelivery after a rebalance is allowed (at least once); loss is not.
    await eventually(() => seen.size === 4000, 30000, `all 4000 records (seen ${seen.size})`);
    await eventually(async () => await metric('oxbow_fetch_sessions') === 2, 10000, 'a session per member');
    // The sessions hold the four partitions between them, none twice: the first member's no longer
    // holds the partitions it gave away.
    await eventually(async () => await metric('oxbow_fetch_session_partitions') === 4, 10000, 'four partitions in sessions');
    assert.equal(await metric('oxbow_fetch_session_errors_total'), 0);
  } finally {
    for (const [consumer, stream] of members) {
      await stream.close();
      await consumer.close();
    }
    await producer.close();
  }
});
