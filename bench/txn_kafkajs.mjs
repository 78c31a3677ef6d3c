// kafkajs (2.2.4, from tests/integration's node_modules): idempotent produce against produce in
// transactions of --transaction-size records, one partition, acks=all, 100-byte values. Each
// idempotent send carries as many records as a transaction, so the two differ only by the
// transaction's own requests (AddPartitionsToTxn and EndTxn). Each mode runs once unmeasured
// first. Prints one JSON object per mode.
// Usage: node bench/txn_kafkajs.mjs BOOTSTRAP RECORDS TRANSACTION_SIZE
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(fileURLToPath(new URL('../tests/integration/', import.meta.url)));
const { Kafka, logLevel } = require('kafkajs');

const [bootstrap, totalRecords, perTransaction] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const kafka = new Kafka({ brokers: [bootstrap], clientId: 'oxbow-bench', logLevel: logLevel.NOTHING });
const messages = Array.from({ length: perTransaction }, () => ({ value: Buffer.alloc(100, 'x') }));

async function createTopic(topic) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  await admin.disconnect();
}

async function run(mode, records, print = true) {
  const topic = `bench-kafkajs-${mode}-${process.pid}-${Date.now()}`;
  await createTopic(topic);
  const producer = mode === 'transactional'
    ? kafka.producer({ transactionalId: `bench-kafkajs-${process.pid}-${Date.now()}`, idempotent: true, maxInFlightRequests: 1 })
    : kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const started = process.hrtime.bigint();
  for (let sent = 0; sent < records; sent += perTransaction) {
    if (mode === 'transactional') {
      const transaction = await producer.transaction();
      await transaction.send({ topic, acks: -1, messages });
      await transaction.commit();
    } else {
      await producer.send({ topic, acks: -1, messages });
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await producer.disconnect();
  const produced = Math.ceil(records / perTransaction) * perTransaction;
  if (print) console.log(JSON.stringify({ mode, records: produced, records_per_sec: produced / seconds }));
}

// Unmeasured first: V8 compiles the client's hot paths during its first thousands of records.
await run('idempotent', 20 * perTransaction, false);
await run('transactional', 20 * perTransaction, false);
await run('idempotent', totalRecords);
await run('transactional', totalRecords);
