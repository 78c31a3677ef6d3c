// kafkajs over SASL/PLAIN against the real oxbow broker (`node --test`): the broker has a PLAINTEXT
// listener and a SASL_PLAINTEXT one whose users come from Kafka's per-listener JAAS property.
// Right credentials produce and consume (in a consumer group); a wrong password or an unknown user
// is refused with an authentication error; a client without SASL gets nothing on the SASL port.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, startBroker } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = (await import('kafkajs')).default;


const USERS = { alice: 'alice-secret', bob: 'bob-secret' };
const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required '
  + Object.entries(USERS).map(([user, password]) => `user_${user}="${password}"`).join(' ') + ';';
const AUTH_FAILED_MESSAGE = 'Authentication failed: Invalid username or password';

// A broker with a PLAINTEXT and a SASL_PLAINTEXT listener whose PLAIN users are USERS.
async function startSaslBroker(overrides) {
  const broker = await startBroker({ 'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS, ...overrides },
    { extraListeners: ['SASL_PLAINTEXT'], prefix: 'oxbow-kafkajs-sasl-' });
  return {
    ...broker,
    plainBootstrap: broker.bootstrap,
    saslBootstrap: broker.listenerBootstrap('SASL_PLAINTEXT'),
    saslPort: broker.ports.SASL_PLAINTEXT,
  };
}

const unique = (prefix) => `${prefix}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

// Broker log lines reporting a failed authentication of `user`.
const auditLines = (broker, user) => broker.logText().split('\n')
  .filter((line) => line.toLowerCase().includes('authentication failed') && line.includes(user));

describe('kafkajs with SASL/PLAIN against oxbow', () => {
  let broker;
  const clients = [];
  const client = (username, password, options = {}) => {
    const kafka = new Kafka({
      clientId: 'oxbow-kafkajs-sasl-it',
      brokers: [broker.saslBootstrap],
      sasl: { mechanism: 'plain', username, password },
      logLevel: logLevel.NOTHING,
      retry: { retries: 8, initialRetryTime: 100 },
      ...options,
    });
    return kafka;
  };
  const track = (c) => { clients.push(c); return c; };

  before(async () => {
    broker = await startSaslBroker({ 'group.initial.rebalance.delay.ms': '0' });
  });

  after(async () => {
    try {
      for (const c of clients) await c.disconnect().catch(() => {});
    } finally {
      const exit = await broker.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, `broker did not shut down cleanly\n${broker.logTail()}`);
    }
  });

  test('produces and consumes in a group over SASL_PLAINTEXT with PLAIN', async () => {
    const topic = unique('kjs-sasl');
    const partitions = 2;
    const admin = track(client('alice', USERS.alice).admin());
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });

    // Metadata over the SASL listener advertises that listener.
    const cluster = await admin.describeCluster();
    assert.deepEqual(cluster.brokers.map(({ host, port }) => ({ host, port })), [{ host: '127.0.0.1', port: broker.saslPort }]);

    const producer = track(client('alice', USERS.alice).producer({ allowAutoTopicCreation: false }));
    await producer.connect();
    const messages = Array.from({ length: 60 }, (_, i) => ({ key: `k${i}`, value: `sasl-${i}`, partition: i % partitions }));
    await producer.send({ topic, acks: -1, messages });

    // Read back as another user, in a consumer group (FindCoordinator through the SASL listener).
    const consumer = track(client('bob', USERS.bob).consumer({ groupId: unique('kjs-sasl-group'), maxWaitTimeInMs: 100 }));
    const seen = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ partition, offset: Number(message.offset), value: message.value.toString() });
      },
    });
    await eventually(() => seen.length >= messages.length, 60000, `${messages.length} records consumed`);
    await consumer.disconnect();

    const byPartition = (records) => {
      const out = Object.fromEntries(Array.from({ length: partitions }, (_, p) => [p, []]));
      for (const r of records) out[r.partition].push(r.value);
      return out;
    };
    const sorted = [...seen].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
    assert.deepEqual(byPartition(sorted), byPartition(messages.map((m) => ({ partition: m.partition, value: m.value }))));
    assert.equal(seen.length, messages.length, 'a record was delivered twice');
    assert.deepEqual(auditLines(broker, 'alice'), []);
    assert.deepEqual(auditLines(broker, 'bob'), []);
  });

  for (const [username, password] of [['alice', 'not-alices-password'], ['nobody', 'nobodys-guess']]) {
    test(`${username} with password ${password} is refused with an authentication error`, async () => {
      const kafka = client(username, password, { retry: { retries: 1, initialRetryTime: 100 } });
      for (const c of [kafka.producer(), kafka.admin(), kafka.consumer({ groupId: unique('kjs-sasl-denied') })]) {
        await assert.rejects(c.connect(), (err) => {
          assert.equal(err.name, 'KafkaJSSASLAuthenticationError', `${err.name}: ${err.message}`);
          assert.ok(err.message.includes(AUTH_FAILED_MESSAGE), `the broker's message should reach the client: ${err.message}`);
          return true;
        });
        await c.disconnect().catch(() => {});
      }
      // The broker wrote an audit line naming the user, the client address and the listener.
      await eventually(() => auditLines(broker, username).length > 0, 10000, `an audit line for ${username}`);
      for (const line of auditLines(broker, username)) {
        assert.ok(line.includes('127.0.0.1') && line.includes('SASL_PLAINTEXT'), `audit line: ${line}`);
        assert.ok(!line.includes(password), `the tried password was logged: ${line}`);
      }
    });
  }

  test('a client without SASL gets nothing from the SASL listener', async () => {
    const kafka = new Kafka({
      clientId: 'oxbow-kafkajs-sasl-it-plain',
      brokers: [broker.saslBootstrap],
      logLevel: logLevel.NOTHING,
      retry: { retries: 1, initialRetryTime: 100 },
      requestTimeout: 5000,
    });
    const admin = kafka.admin();
    // Connecting may succeed (ApiVersions is answered before authentication); metadata must not.
    await assert.rejects((async () => {
      await admin.connect();
      await admin.listTopics();
    })(), (err) => {
      // The broker closes the connection at the Metadata request (kafkajs may wrap that in its retry error).
      const names = ['KafkaJSConnectionClosedError', 'KafkaJSConnectionError', 'KafkaJSNumberOfRetriesExceeded'];
      assert.ok(names.includes(err.name), `${err.name}: ${err.message}`);
      return true;
    });
    await admin.disconnect().catch(() => {});
  });
});
