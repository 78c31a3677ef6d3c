// `oxbow registry` driven by npm's @kafkajs/confluent-schema-registry, a client written for
// Confluent's registry: it registers Avro schemas, encodes records in Confluent's wire format
// (magic byte, schema id, Avro body), and decodes them by fetching the schema by id; the records
// travel through the broker with kafkajs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { eventually, startBroker, startRegistry } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = (await import('kafkajs')).default;
const { SchemaRegistry, SchemaType } = await import('@kafkajs/confluent-schema-registry');

let broker;
let registry;
let registryUrl;

before(async () => {
  broker = await startBroker({}, { prefix: 'oxbow-registry-' });
  registry = await startRegistry(broker, 'oxbow-registry-');
  registryUrl = registry.url;
});

after(async () => {
  await registry.stop();
  await broker.stop();
});

const orderSchema = {
  type: 'record',
  name: 'Order',
  namespace: 'shop',
  fields: [
    { name: 'id', type: 'long' },
    { name: 'item', type: 'string' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

test('registers, encodes in the wire format and decodes by id', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: JSON.stringify(orderSchema) },
    { subject: 'orders-value' },
  );
  assert.equal(id, 1);
  assert.equal(await registry.getLatestSchemaId('orders-value'), 1);
  assert.equal(await registry.getRegistryId('orders-value', 1), 1);

  const encoded = await registry.encode(id, { id: 7, item: 'tea', note: null });
  assert.equal(encoded[0], 0);                 // magic byte
  assert.equal(encoded.readInt32BE(1), id);    // the schema id, big-endian

  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'orders', messages: [{ key: 'k', value: encoded }] });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: 'registry-test' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  const received = [];
  await consumer.run({ eachMessage: async ({ message }) => { received.push(message.value); } });
  await eventually(() => received.length > 0, 30000, 'the order back');
  await consumer.disconnect();
  // A fresh client, with nothing cached: it fetches the schema by id from the registry.
  const reader = new SchemaRegistry({ host: registryUrl });
  assert.deepEqual({ ...(await reader.decode(received[0])) }, { id: 7, item: 'tea', note: null });
});

test('an incompatible schema is refused with 409 and a compatible one is a new version', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  const breaking = { ...orderSchema, fields: [...orderSchema.fields, { name: 'qty', type: 'int' }] };
  await assert.rejects(
    registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(breaking) }, { subject: 'orders-value' }),
    (err) => err.status === 409 || /incompatible/.test(String(err.message)),
  );
  const evolved = { ...orderSchema, fields: [...orderSchema.fields, { name: 'qty', type: 'int', default: 1 }] };
  const { id } = await registry.register(
    { type: SchemaType.AVRO, schema: JSON.stringify(evolved) },
    { subject: 'orders-value' },
  );
  assert.equal(id, 2);
  // Data written with version 1 is read with the evolved schema's default filled in.
  const old = await registry.encode(1, { id: 1, item: 'cake', note: 'x' });
  assert.deepEqual({ ...(await registry.decode(old, { [SchemaType.AVRO]: { readerSchema: evolved } })) },
    { id: 1, item: 'cake', note: 'x', qty: 1 });
});
