// kafkajs over TLS against the real oxbow broker (`node --test`): an SSL listener that requires a
// client certificate (mTLS) and a SASL_SSL listener with PLAIN and SCRAM-SHA-512 users. Certificates are made
// fresh by gen_test_certs.sh (openssl). Trusted clients produce and consume; a client without a
// certificate, with a wrong SCRAM password or speaking plaintext to a TLS port is refused.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { OXBOW_BIN, eventually, startBroker } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = (await import('kafkajs')).default;

const here = path.dirname(fileURLToPath(import.meta.url));
const unique = (prefix) => `${prefix}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('kafkajs with TLS against oxbow', () => {
  let broker;
  let certs;
  const clients = [];
  const track = (c) => { clients.push(c); return c; };
  const read = (name) => fs.readFileSync(path.join(certs, name), 'utf8');

  const client = (listener, { cert, sasl, retries = 8 } = {}) => new Kafka({
    clientId: 'oxbow-kafkajs-tls-it',
    brokers: [broker.listenerBootstrap(listener)],
    ssl: { ca: [read('ca.pem')], ...(cert ? { cert: read(`${cert}.pem`), key: read(`${cert}.key`) } : {}) },
    sasl,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    requestTimeout: 10000,
    retry: { retries, initialRetryTime: 100 },
  });

  before(async () => {
    certs = fs.mkdtempSync(path.join(os.tmpdir(), 'oxbow-kafkajs-certs-'));
    execFileSync(path.join(here, 'gen_test_certs.sh'), [certs]);
    broker = await startBroker({
      'ssl.keystore.location': path.join(certs, 'server-keystore.pem'),
      'listener.name.ssl.ssl.client.auth': 'required',
      'listener.name.ssl.ssl.truststore.location': path.join(certs, 'ca.pem'),
      'listener.name.sasl_ssl.plain.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
      'group.initial.rebalance.delay.ms': '0',
    }, { extraListeners: ['SSL', 'SASL_SSL'], prefix: 'oxbow-kafkajs-tls-' });
    execFileSync(OXBOW_BIN, ['user', 'create', 'carol', '--password', 'carol-secret', '--mechanism', 'SCRAM-SHA-512',
      '-b', broker.bootstrap]);
  });

  after(async () => {
    try {
      for (const c of clients) await c.disconnect().catch(() => {});
    } finally {
      const exit = await broker.stop();
      fs.rmSync(certs, { recursive: true, force: true });
      assert.deepEqual(exit, { code: 0, signal: null }, `broker did not shut down cleanly\n${broker.logTail()}`);
    }
  });

  async function roundTrip(kafka, label) {
    const topic = unique(`kjs-${label}`);
    const admin = track(kafka.admin());
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    const producer = track(kafka.producer({ allowAutoTopicCreation: false }));
    await producer.connect();
    const messages = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `${label}-${i}-${'x'.repeat(i * 100)}` }));
    await producer.send({ topic, acks: -1, messages });
    const consumer = track(kafka.consumer({ groupId: unique(`kjs-${label}-group`), maxWaitTimeInMs: 100 }));
    const seen = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value.toString()); } });
    await eventually(() => seen.length >= messages.length, 60000, `${messages.length} records consumed over ${label}`);
    await consumer.disconnect();
    assert.deepEqual(seen, messages.map((m) => m.value));
  }

  test('produces and consumes in a group over SSL with a client certificate', async () => {
    await roundTrip(client('SSL', { cert: 'alice' }), 'mtls');
  });

  test('produces and consumes over SASL_SSL with SCRAM-SHA-512', async () => {
    await roundTrip(client('SASL_SSL', { sasl: { mechanism: 'scram-sha-512', username: 'carol', password: 'carol-secret' } }),
      'sasl-ssl');
  });

  test('produces and consumes over SASL_SSL with PLAIN', async () => {
    await roundTrip(client('SASL_SSL', { sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' } }),
      'sasl-ssl-plain');
  });

  test('a wrong SCRAM password over SASL_SSL is refused with an authentication error', async () => {
    const kafka = client('SASL_SSL', { sasl: { mechanism: 'scram-sha-512', username: 'carol', password: 'wrong' }, retries: 1 });
    const producer = kafka.producer();
    await assert.rejects(producer.connect(), (err) => {
      assert.equal(err.name, 'KafkaJSSASLAuthenticationError', `${err.name}: ${err.message}`);
      return true;
    });
    await producer.disconnect().catch(() => {});
  });

  test('without a client certificate, or without TLS, the SSL listener serves nothing', async () => {
    for (const kafka of [client('SSL', { retries: 1 }), new Kafka({
      clientId: 'oxbow-kafkajs-tls-it-plain',
      brokers: [broker.listenerBootstrap('SSL')],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      requestTimeout: 3000,
      retry: { retries: 1, initialRetryTime: 100 },
    })]) {
      const admin = kafka.admin();
      await assert.rejects((async () => { await admin.connect(); await admin.listTopics(); })());
      await admin.disconnect().catch(() => {});
    }
    const refusals = broker.logText().split('\n').filter((line) => line.includes('authentication failed: TLS handshake'));
    assert.ok(refusals.length >= 2, `audit lines for the refused handshakes:\n${broker.logTail()}`);
  });
});
