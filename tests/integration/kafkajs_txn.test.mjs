// kafkajs transactions against the real oxbow broker (`node --test`): committed and aborted
// transactions read by read-committed and read-uncommitted consumers, and consumer offsets sent
// inside a transaction (committed with it, dropped with an abort).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, startBroker } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = (await import('kafkajs')).default;


const unique = (prefix) => `${prefix}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

// Runs a consumer in its own group until `done(records)` holds; records are {partition, offset, value}.
async function consumeUntil(kafka, topic, { readUncommitted, groupId = unique('kjs-txn-reader') }, done, what) {
  const consumer = kafka.consumer({ groupId, readUncommitted, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
  const seen = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, offset: Number(message.offset), value: message.value.toString() });
      },
    });
    await eventually(() => done(seen), 60000, what);
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

const valuesByPartition = (seen, partitions) => {
  const out = Object.fromEntries(Array.from({ length: partitions }, (_, p) => [p, []]));
  for (const r of [...seen].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) out[r.partition].push(r.value);
  return out;
};

describe('kafkajs transactions against oxbow', () => {
  let broker;
  let kafka;
  let admin;

  before(async () => {
    broker = await startBroker({ 'group.initial.rebalance.delay.ms': '0' });
    kafka = new Kafka({
      clientId: 'oxbow-kafkajs-txn-it',
      brokers: [broker.bootstrap],
      logLevel: logLevel.WARN,
      retry: { retries: 8, initialRetryTime: 100 },
    });
    admin = kafka.admin();
    await admin.connect();
  });

  after(async () => {
    try { if (admin) await admin.disconnect(); } finally {
      const exit = await broker.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, `broker did not shut down cleanly\n${broker.logTail()}`);
    }
  });

  test('committed and aborted transactions: read-committed consumers see only committed records', async () => {
    const topic = unique('kjs-txn');
    const partitions = 2;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    const producer = kafka.producer({
      transactionalId: unique('kjs-tid'), idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false,
    });
    const batches = [['c1', 30, true], ['a1', 20, false], ['c2', 10, true]];
    const expectedAll = Object.fromEntries(Array.from({ length: partitions }, (_, p) => [p, []]));
    const expectedCommitted = Object.fromEntries(Array.from({ length: partitions }, (_, p) => [p, []]));
    await producer.connect();
    try {
      for (const [prefix, count, commit] of batches) {
        const messages = Array.from({ length: count }, (_, i) => ({ key: `${prefix}-${i}`, value: `${prefix}-${i}`, partition: i % partitions }));
        for (const m of messages) {
          expectedAll[m.partition].push(m.value);
          if (commit) expectedCommitted[m.partition].push(m.value);
        }
        const txn = await producer.transaction();
        await txn.send({ topic, messages, acks: -1 });
        if (commit) await txn.commit(); else await txn.abort();
      }
    } finally {
      await producer.disconnect();
    }
    const committedCount = Object.values(expectedCommitted).flat().length;
    const allCount = Object.values(expectedAll).flat().length;

    // Every partition's last committed records come after the aborted ones, so once they are read,
    // an aborted record would already have been delivered.
    const committed = await consumeUntil(kafka, topic, { readUncommitted: false },
      (seen) => seen.length >= committedCount, `${committedCount} committed records`);
    assert.deepEqual(valuesByPartition(committed, partitions), expectedCommitted);
    assert.ok(!committed.some((r) => r.value.startsWith('a1-')), 'an aborted record reached a read-committed consumer');

    const all = await consumeUntil(kafka, topic, { readUncommitted: true },
      (seen) => seen.length >= allCount, `${allCount} records at read-uncommitted`);
    assert.deepEqual(valuesByPartition(all, partitions), expectedAll);

    // One control marker per transaction and partition takes an offset: 15 + 10 + 5 records and 3 markers.
    await eventually(async () => {
      const offsets = await admin.fetchTopicOffsets(topic);
      return offsets.every((o) => Number(o.high) === expectedAll[o.partition].length + batches.length);
    }, 15000, 'high watermarks counting 3 markers per partition');
  });

  test('offsets sent inside a transaction are committed with it and dropped with an abort', async () => {
    const input = unique('kjs-txn-in');
    const output = unique('kjs-txn-out');
    const groupId = unique('kjs-txn-group');
    await admin.createTopics({ topics: [{ topic: input, numPartitions: 2 }, { topic: output, numPartitions: 1 }], waitForLeaders: true });
    const plain = kafka.producer({ allowAutoTopicCreation: false });
    await plain.connect();
    await plain.send({ topic: input, acks: -1, messages: Array.from({ length: 20 }, (_, i) => ({ value: `in-${i}`, partition: i % 2 })) });
    await plain.disconnect();

    const committedOffsets = async () => {
      const [{ partitions }] = await admin.fetchOffsets({ groupId, topics: [input] });
      return Object.fromEntries(partitions.map((p) => [p.partition, p.offset]));
    };
    const producer = kafka.producer({
      transactionalId: unique('kjs-tid'), idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false,
    });
    await producer.connect();
    try {
      const first = await producer.transaction();
      await first.send({ topic: output, acks: -1, messages: [{ value: 'out-committed' }] });
      await first.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: input, partitions: [{ partition: 0, offset: '3' }, { partition: 1, offset: '4' }] }] });
      await first.commit();
      await eventually(async () => JSON.stringify(await committedOffsets()) === JSON.stringify({ 0: '3', 1: '4' }),
        15000, 'offsets 3 and 4 committed by the transaction');

      const second = await producer.transaction();
      await second.send({ topic: output, acks: -1, messages: [{ value: 'out-aborted' }] });
      await second.sendOffsets({ consumerGroupId: groupId, topics: [{ topic: input, partitions: [{ partition: 0, offset: '8' }, { partition: 1, offset: '9' }] }] });
      await second.abort();
    } finally {
      await producer.disconnect();
    }
    // Both markers are in the output partition (2 records + 2 markers): the abort has been carried out.
    await eventually(async () => Number((await admin.fetchTopicOffsets(output))[0].high) === 4, 15000, 'the abort marker');
    assert.deepEqual(await committedOffsets(), { 0: '3', 1: '4' });

    // A member of the group starts at the offsets of the committed transaction.
    const resumed = await consumeUntil(kafka, input, { readUncommitted: false, groupId },
      (seen) => seen.length >= 13, 'the 13 records after the committed offsets');
    const firstOffsets = {};
    for (const r of resumed) if (!(r.partition in firstOffsets)) firstOffsets[r.partition] = r.offset;
    assert.deepEqual(firstOffsets, { 0: 3, 1: 4 });
    assert.equal(resumed.length, 13);

    // A record written after both transactions: reading up to it at read-committed passes the aborted one.
    const sentinel = kafka.producer({ allowAutoTopicCreation: false });
    await sentinel.connect();
    await sentinel.send({ topic: output, acks: -1, messages: [{ value: 'out-after' }] });
    await sentinel.disconnect();
    const out = await consumeUntil(kafka, output, { readUncommitted: false },
      (seen) => seen.some((r) => r.value === 'out-after'), 'the record after both transactions');
    assert.deepEqual(out.map((r) => r.value), ['out-committed', 'out-after']);
  });

  test('consume-transform-produce: offsets sent for the group of a live member are committed', async () => {
    // kafkajs's TxnOffsetCommit (v1) names no member: Kafka takes it however many members the group has.
    const input = unique('kjs-ctp-in');
    const output = unique('kjs-ctp-out');
    const groupId = unique('kjs-ctp-group');
    await admin.createTopics({ topics: [{ topic: input }, { topic: output }], waitForLeaders: true });
    const plain = kafka.producer({ allowAutoTopicCreation: false });
    await plain.connect();
    await plain.send({ topic: input, acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ value: `in-${i}` })) });
    await plain.disconnect();

    const producer = kafka.producer({
      transactionalId: unique('kjs-tid'), idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false,
    });
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
    const errors = [];
    let processed = 0;
    await producer.connect();
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: input, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          const txn = await producer.transaction();
          try {
            await txn.send({ topic: output, acks: -1, messages: [{ value: `out-${message.value}` }] });
            await txn.sendOffsets({
              consumerGroupId: groupId,
              topics: [{ topic, partitions: [{ partition, offset: String(Number(message.offset) + 1) }] }],
            });
            await txn.commit();
            processed += 1;
          } catch (e) {
            errors.push(e.message);
            await txn.abort().catch(() => {});
            throw e;
          }
        },
      });
      await eventually(() => processed === 5 || errors.length > 0, 60000, 'five records through the transform');
      assert.deepEqual(errors, []);
      const [{ partitions }] = await admin.fetchOffsets({ groupId, topics: [input] });
      assert.deepEqual(partitions.map((p) => p.offset), ['5']);
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
    }
    const out = await consumeUntil(kafka, output, { readUncommitted: false }, (seen) => seen.length >= 5, 'five transformed records');
    assert.deepEqual(out.map((r) => r.value), Array.from({ length: 5 }, (_, i) => `out-in-${i}`));
  });
});
