// @platformatic/kafka (npm), the one client on hand that opens KIP-227 incremental fetch
// sessions, consuming through a session while records keep arriving.

import { after, before, test } from 'node:test';
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

before(async () => {
  adminPort = await unusedPort();
  broker = await startBroker({
    'group.initial.rebalance.delay.ms': '0',
    'admin.listener': `127.0.0.1:${adminPort}`,
  }, { prefix: 'oxbow-platformatic-' });
});

after(async () => {
  if (broker) await broker.stop();
});

async function metric(name) {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

test('a consumer reads everything through one incremental fetch session', async () => {
  const topic = 'sessions';
  const created = spawnSync(OXBOW_BIN, ['topic', 'create', topic, '--partitions', '3', '-b', broker.bootstrap]);
  assert.equal(created.status, 0, String(created.stderr));
  const producer = new Producer({ clientId: 'p', bootstrapBrokers: [broker.bootstrap], serializers: stringSerializers });
  const total = 3000;
  const produce = async (from, to) => {
    for (let i = from; i < to; i += 100) {
      const messages = [];
      for (let j = i; j < Math.min(i + 100, to); j++) messages.push({ topic, key: `k${j}`, value: `v${j}`, partition: j % 3 });
      await producer.send({ messages });
    }
  };
  await produce(0, total / 2);
  const consumer = new Consumer({
    groupId: 'sessions', clientId: 'c', bootstrapBrokers: [broker.bootstrap], deserializers: stringDeserializers, maxWaitTime: 200,
  });
  const stream = await consumer.consume({ autocommit: true, topics: [topic], mode: 'earliest', sessionTimeout: 10000, heartbeatInterval: 500 });
  const seen = new Map();
  stream.on('data', (m) => seen.set(m.value, (seen.get(m.value) || 0) + 1));
  try {
    await eventually(() => seen.size >= total / 2, 30000, 'the first half');
    // The rest arrives while the consumer polls through its session.
    await produce(total / 2, total);
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
