// kafkajs against the real oxbow broker, run with node's built-in test runner (`node --test`).
//
// Records are read back with kcat (-C without -G) and with a kafkajs consumer group.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, CompressionTypes, CompressionCodecs, ConfigResourceTypes, logLevel } = (await import('kafkajs')).default;
// Snappy through a pure-JavaScript codec; kafkajs' lz4 and zstd codecs need native modules.
CompressionCodecs[CompressionTypes.Snappy] = (await import('kafkajs-snappy')).default;

const here = path.dirname(fileURLToPath(import.meta.url));
const OXBOW_BIN = process.env.OXBOW_BIN || path.resolve(here, '../../build/oxbow');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function portAccepts(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => { sock.destroy(); resolve(false); });
  });
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  let lastErr;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (e) { lastErr = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${lastErr}` : ''}`);
    await delay(50);
  }
}

class Broker {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxbow-kafkajs-'));
    this.logPath = path.join(this.dir, 'broker.log');
    this.proc = null;
    this.exit = null;
  }

  get bootstrap() { return `127.0.0.1:${this.port}`; }

  logTail(lines = 40) {
    try { return fs.readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n'); } catch { return '(no log)'; }
  }

  async start() {
    assert.ok(fs.existsSync(OXBOW_BIN), `broker binary ${OXBOW_BIN} does not exist (set OXBOW_BIN)`);
    this.port = await freePort();
    const listener = `PLAINTEXT://127.0.0.1:${this.port}`;
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(OXBOW_BIN, ['broker',
      '--override', `listeners=${listener}`,
      '--override', `advertised.listeners=${listener}`,
      '--override', `log.dirs=${path.join(this.dir, 'data')}`,
      '--override', `admin.listener=127.0.0.1:${await freePort()}`],
    { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => {
      this.exit = { code, signal };
      resolve(this.exit);
    }));
    const deadline = Date.now() + 20000;
    while (!(await portAccepts(this.port))) {
      if (this.exit) throw new Error(`broker exited during start-up (${JSON.stringify(this.exit)})\n${this.logTail()}`);
      if (Date.now() > deadline) {
        this.proc.kill('SIGKILL');
        throw new Error(`broker did not accept connections within 20s\n${this.logTail()}`);
      }
      await delay(50);
    }
  }

  async stop() {
    if (!this.proc || this.exit) return this.exit;
    this.proc.kill('SIGTERM');
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(null), 30000); });
    const result = await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (!result) {
      this.proc.kill('SIGKILL');
      await this.exited;
      throw new Error(`broker did not exit within 30s of SIGTERM\n${this.logTail()}`);
    }
    return result;
  }
}

function kcatRead(bootstrap, topic, format) {
  const res = spawnSync('kcat', ['-b', bootstrap, '-C', '-t', topic, '-e', '-o', 'beginning', '-f', format],
    { encoding: 'utf8', timeout: 60000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(res.status, 0, `kcat failed: ${res.stderr}`);
  return res.stdout;
}

describe('kafkajs against oxbow', () => {
  const broker = new Broker();
  let kafka;
  let admin;

  // Never leave a broker behind, even if the runner exits abruptly.
  process.on('exit', () => { if (broker.proc && !broker.exit) broker.proc.kill('SIGKILL'); });

  before(async () => {
    await broker.start();
    kafka = new Kafka({
      clientId: 'oxbow-kafkajs-it',
      brokers: [broker.bootstrap],
      logLevel: logLevel.WARN,
      retry: { retries: 3, initialRetryTime: 100 },
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

  test('admin: createTopics, fetchTopicMetadata, fetchTopicOffsets, deleteTopics', async () => {
    const topic = `kjs-admin-${process.pid}-${Date.now()}`;
    assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true }), true);
    // Creating it again reports "not created".
    assert.equal(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] }), false);

    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    assert.equal(md.topics.length, 1);
    assert.equal(md.topics[0].name, topic);
    assert.deepEqual(md.topics[0].partitions.map((p) => p.partitionId).sort(), [0, 1, 2]);
    for (const p of md.topics[0].partitions) {
      assert.equal(p.partitionErrorCode, 0);
      assert.deepEqual(p.replicas, [p.leader]);
      assert.deepEqual(p.isr, [p.leader]);
    }

    const offsets = await admin.fetchTopicOffsets(topic);
    assert.deepEqual(offsets.map((o) => [o.partition, o.low, o.high]).sort(),
      [[0, '0', '0'], [1, '0', '0'], [2, '0', '0']]);

    assert.ok((await admin.listTopics()).includes(topic));
    await admin.deleteTopics({ topics: [topic] });
    await waitUntil(async () => !(await admin.listTopics()).includes(topic), 15000, 'topic deleted');
    await assert.rejects(admin.fetchTopicMetadata({ topics: [topic] }),
      (e) => e.type === 'UNKNOWN_TOPIC_OR_PARTITION' || /does not host this topic-partition/.test(e.message));
  });

  for (const [name, compression] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP],
    ['snappy', CompressionTypes.Snappy]]) {
    test(`producer: 100k messages with keys and headers, compression ${name}`, async () => {
      const topic = `kjs-produce-${name}-${process.pid}-${Date.now()}`;
      const partitions = 4;
      await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
      const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: false });
      await producer.connect();
      const total = 100000;
      const batch = 2000;
      const expected = new Map();
      try {
        for (let start = 0; start < total; start += batch) {
          const messages = [];
          for (let i = start; i < start + batch; i++) {
            const partition = i % partitions;
            messages.push({ key: `key-${i}`, value: `value-${i}-${'q'.repeat(i % 37)}`, partition,
              headers: { seq: String(i), codec: name } });
            if (!expected.has(partition)) expected.set(partition, []);
            expected.get(partition).push(i);
          }
          const res = await producer.send({ topic, messages, acks: -1, compression });
          for (const r of res) assert.equal(r.errorCode, 0);
        }
      } finally {
        await producer.disconnect();
      }

      const offsets = await admin.fetchTopicOffsets(topic);
      assert.equal(offsets.reduce((sum, o) => sum + Number(o.high), 0), total);
      for (const o of offsets) {
        assert.equal(o.low, '0');
        assert.equal(Number(o.high), expected.get(o.partition).length);
      }

      const out = kcatRead(broker.bootstrap, topic, '%p %o %k=%s %h\\n');
      const lines = out.split('\n').filter(Boolean);
      assert.equal(lines.length, total);
      const byPartition = new Map();
      for (const line of lines) {
        const m = line.match(/^(\d+) (\d+) (.*)$/s);
        assert.ok(m, `unexpected kcat output line ${JSON.stringify(line)}`);
        const [p, o, rest] = [Number(m[1]), Number(m[2]), m[3]];
        if (!byPartition.has(p)) byPartition.set(p, []);
        byPartition.get(p).push([o, rest]);
      }
      for (const [p, idxs] of expected) {
        const got = byPartition.get(p) || [];
        assert.deepEqual(got.map(([o]) => o), idxs.map((_, j) => j), `partition ${p} offsets`);
        assert.deepEqual(got.map(([, rest]) => rest),
          idxs.map((i) => `key-${i}=value-${i}-${'q'.repeat(i % 37)} seq=${i},codec=${name}`), `partition ${p} records`);
      }
    });
  }

  test('consumer group: join, consume everything, commit, leave; idempotent producer', async () => {
    const topic = `kjs-group-${process.pid}-${Date.now()}`;
    const groupId = `kjs-group-${process.pid}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    const producer = kafka.producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const total = 3000;
    try {
      for (let start = 0; start < total; start += 500) {
        const messages = [];
        for (let i = start; i < start + 500; i++) messages.push({ key: `k${i}`, value: `v${i}`, partition: i % 3 });
        await producer.send({ topic, messages, acks: -1, compression: CompressionTypes.GZIP });
      }
    } finally {
      await producer.disconnect();
    }

    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 });
    const seen = new Set();
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ autoCommitInterval: 100, eachMessage: async ({ message }) => { seen.add(message.value.toString()); } });
      await waitUntil(() => seen.size === total, 60000, `all ${total} records consumed (have ${seen.size})`);
      const described = await admin.describeGroups([groupId]);
      assert.equal(described.groups[0].state, 'Stable');
      assert.equal(described.groups[0].members.length, 1);
    } finally {
      await consumer.disconnect();  // commits and leaves the group
    }
    for (let i = 0; i < total; i++) assert.ok(seen.has(`v${i}`), `v${i} consumed`);

    const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
    const sum = committed[0].partitions.reduce((acc, p) => acc + Number(p.offset), 0);
    assert.equal(sum, total);
    const after = await admin.describeGroups([groupId]);
    assert.equal(after.groups[0].state, 'Empty');
    await admin.deleteGroups([groupId]);
    assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === groupId));
  });

  test('admin: alter and describe configs, create partitions, delete records, bad values', async () => {
    const topic = `kjs-configs-${process.pid}-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '60000' }] }] });
    const resource = { type: ConfigResourceTypes.TOPIC, name: topic };
    await admin.alterConfigs({ validateOnly: false, resources: [{ ...resource, configEntries: [{ name: 'retention.ms', value: '120000' }, { name: 'cleanup.policy', value: 'compact' }] }] });
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ ...resource, configNames: ['retention.ms', 'cleanup.policy'] }] });
    const entries = Object.fromEntries(described.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
    assert.deepEqual(entries, { 'retention.ms': '120000', 'cleanup.policy': 'compact' });
    await assert.rejects(
      admin.alterConfigs({ validateOnly: false, resources: [{ ...resource, configEntries: [{ name: 'retention.ms', value: 'later' }] }] }),
      (e) => e.type === 'INVALID_CONFIG' || /INVALID_CONFIG|retention\.ms/.test(`${e.message} ${JSON.stringify(e.errors || '')}`));

    await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
    await waitUntil(async () => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length === 3,
      10000, 'three partitions');

    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    // The topic is compacted now: as in Kafka, its records need keys.
    await producer.send({ topic, messages: Array.from({ length: 40 }, (_, i) => ({ key: `k${i}`, value: `r${i}`, partition: 0 })) });
    await producer.disconnect();
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '25' }] });
    const offsets = await admin.fetchTopicOffsets(topic);
    const p0 = offsets.find((o) => o.partition === 0);
    assert.deepEqual([p0.low, p0.high], ['25', '40']);
  });

  test('admin: partition reassignments on one node', async () => {
    const topic = `kjs-reassign-${process.pid}-${Date.now()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    // Onto the broker that already holds it: done at once, and nothing stays in progress.
    await admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [0] }] }] });
    assert.deepEqual(await admin.listPartitionReassignments({}), { topics: [] });
    assert.deepEqual(await admin.listPartitionReassignments({ topics: [{ topic, partitions: [0, 1] }] }), { topics: [] });
    const refusal = async (assignment) => {
      try {
        await admin.alterPartitionReassignments({ topics: [{ topic: assignment.topic ?? topic, partitionAssignment: [assignment] }] });
      } catch (e) {
        return e.errors?.[0]?.type ?? e.type;
      }
      return 'accepted';
    };
    assert.equal(await refusal({ partition: 1, replicas: [7] }), 'INVALID_REPLICA_ASSIGNMENT');
    assert.equal(await refusal({ partition: 1, replicas: [0, 0] }), 'INVALID_REPLICA_ASSIGNMENT');
    assert.equal(await refusal({ partition: 5, replicas: [0] }), 'UNKNOWN_TOPIC_OR_PARTITION');
    assert.equal(await refusal({ topic: `${topic}-missing`, partition: 0, replicas: [0] }), 'UNKNOWN_TOPIC_OR_PARTITION');
  });
});
