// JSON Schema, Avro and Protobuf records with schema references between npm's
// @kafkajs/confluent-schema-registry (a client written for Confluent's registry) and
// `oxbow produce/consume --value-format json|avro|protobuf`, through `oxbow broker` and
// `oxbow registry`.
//
// The npm client (3.9.0) writes Protobuf without message indexes (kafkajs/confluent-schema-registry
// issue #248: Confluent's Java serdes cannot read its bytes either) and reads by dropping leading
// zero bytes, always as the schema's first message. So Protobuf crosses one way: oxbow writes (the
// index [0] is the single byte 0), npm decodes; and oxbow's message body is checked to be byte for
// byte the one npm encodes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { OXBOW_BIN, eventually, startBroker, startRegistry } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = (await import('kafkajs')).default;
const { SchemaRegistry, SchemaType } = await import('@kafkajs/confluent-schema-registry');

let broker;
let registry;
let registryUrl;
let dir;

before(async () => {
  broker = await startBroker({}, { prefix: 'oxbow-serde-interop-' });
  registry = await startRegistry(broker, 'oxbow-serde-interop-');
  registryUrl = registry.url;
  dir = registry.dir;
});

after(async () => {
  await registry.stop();
  await broker.stop();
});

function kafka() {
  return new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
}

async function send(topic, values) {
  const producer = kafka().producer();
  await producer.connect();
  await producer.send({ topic, messages: values.map((value) => ({ value })) });
  await producer.disconnect();
}

async function receive(topic, count) {
  const consumer = kafka().consumer({ groupId: `interop-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = [];
  await consumer.run({ eachMessage: async ({ message }) => { received.push(message.value); } });
  await eventually(() => received.length >= count, 30000, `${count} records of ${topic}`);
  await consumer.disconnect();
  return received;
}

function oxbow(args, input) {
  const result = spawnSync(OXBOW_BIN, [...args, '-b', broker.bootstrap, '--schema-registry-url', registryUrl],
    { input, encoding: 'utf8', timeout: 60000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function oxbowConsume(topic, count, ...extra) {
  return oxbow(['consume', topic, '--from-beginning', '--max-messages', String(count),
    '--timeout-ms', '20000', ...extra]);
}

// ---- JSON Schema: an order whose customer is a $ref to another registered schema ----

const customerJson = {
  $id: 'https://example.com/customer.schema.json',
  title: 'Customer',
  type: 'object',
  properties: { name: { type: 'string' }, email: { type: 'string' } },
  required: ['name'],
};
const orderJson = {
  $id: 'https://example.com/order.schema.json',
  title: 'Order',
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer: { $ref: 'https://example.com/customer.schema.json' },
    items: { type: 'array', items: { type: 'string' } },
  },
  required: ['id', 'customer'],
};
const customerRef = { name: 'https://example.com/customer.schema.json', subject: 'customer-json', version: 1 };

test('JSON Schema with a reference: npm encodes, oxbow consumes and validates', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  await registry.register({ type: SchemaType.JSON, schema: JSON.stringify(customerJson) },
    { subject: 'customer-json' });
  const { id } = await registry.register(
    { type: SchemaType.JSON, schema: JSON.stringify(orderJson), references: [customerRef] },
    { subject: 'orders-json-value' });

  const orders = [
    { id: 1, customer: { name: 'Zoë', email: 'zoe@example.com' }, items: ['tea', 'cake'] },
    { id: 2, customer: { name: 'Ann' } },
  ];
  const encoded = await Promise.all(orders.map((o) => registry.encode(id, o)));
  assert.equal(encoded[0].subarray(5).toString(), JSON.stringify(orders[0]));  // the JSON text
  // npm validates through the reference too.
  await assert.rejects(registry.encode(id, { id: 3, customer: { email: 'x' } }));
  await send('orders-json', encoded);

  // oxbow fetches the writer's schema by id with its reference, and validates when asked to.
  const consumed = oxbowConsume('orders-json', orders.length, '--value-format', 'json',
    '--registry-property', 'json.fail.invalid.schema=true');
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split('\n').map((l) => JSON.parse(l)), orders);

});

test('JSON Schema: oxbow writes with the latest schema and npm decodes through the reference', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  // The topic's subject gets the same schema and reference as orders-json-value.
  const orderId = await registry.getLatestSchemaId('orders-json-value');
  await registry.register(
    { type: SchemaType.JSON, schema: JSON.stringify(orderJson), references: [customerRef] },
    { subject: 'orders-json-3-value' });
  const orders = [{ id: 5, customer: { name: 'Bo' }, items: [] }, { id: 6, customer: { name: 'Cy' } }];
  // oxbow writes with the subject's latest schema (its reference resolved), validating each value.
  const produced = oxbow(['produce', 'orders-json-3', '--value-format', 'json',
    '--registry-property', 'use.latest.version=true', '--registry-property', 'auto.register.schemas=false',
    '--registry-property', 'json.fail.invalid.schema=true'],
  [orders[0], { id: 9, customer: { email: 'no name' } }, orders[1]].map((o) => JSON.stringify(o)).join('\n') + '\n');
  assert.equal(produced.code, 1);
  assert.match(produced.stderr, /stdin line 2 value: Error serializing JSON message: Validation error/);
  assert.match(produced.stderr, /produced 2 records/);
  const received = await receive('orders-json-3', orders.length);
  assert.deepEqual(received.map((b) => b.readInt32BE(1)), [orderId, orderId]);
  const reader = new SchemaRegistry({ host: registryUrl });  // nothing cached
  assert.deepEqual(await Promise.all(received.map((b) => reader.decode(b))), orders);
});

// ---- Avro: a diamond of references (as npm's own specs register it) ----
// FirstLevel references SecondLevelA and SecondLevelB, which both reference ThirdLevel: the
// registry and both serdes resolve ThirdLevel once.

const avroRecord = (name, fields) => JSON.stringify({ type: 'record', name, namespace: 'test', fields });
const avroRef = (name) => ({ name: `test.${name}`, subject: `test.${name}`, version: 1 });
const firstLevel = {
  type: SchemaType.AVRO,
  schema: avroRecord('FirstLevel', [{ name: 'id', type: 'int' },
    { name: 'secondLevelA', type: 'test.SecondLevelA' },
    { name: 'secondLevelB', type: 'test.SecondLevelB' }]),
  references: [avroRef('SecondLevelA'), avroRef('SecondLevelB')],
};

test('Avro with a diamond of references: npm encodes, npm and oxbow decode, oxbow writes', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  await registry.register({ type: SchemaType.AVRO, schema: avroRecord('ThirdLevel', [{ name: 'id', type: 'int' }]) },
    { subject: 'test.ThirdLevel' });
  for (const name of ['SecondLevelA', 'SecondLevelB']) {
    await registry.register({ type: SchemaType.AVRO,
      schema: avroRecord(name, [{ name: 'thirdLevel', type: 'test.ThirdLevel' }]),
      references: [avroRef('ThirdLevel')] }, { subject: `test.${name}` });
  }
  const { id } = await registry.register(firstLevel, { subject: 'test.FirstLevel' });

  const records = [
    { id: 1, secondLevelA: { thirdLevel: { id: 2 } }, secondLevelB: { thirdLevel: { id: 3 } } },
    { id: -4, secondLevelA: { thirdLevel: { id: 5 } }, secondLevelB: { thirdLevel: { id: -6 } } },
  ];
  const encoded = await Promise.all(records.map((r) => registry.encode(id, r)));
  assert.deepEqual([...encoded[0].subarray(5)], [2, 4, 6]);  // zig-zag ints, nothing else
  await send('first-level', encoded);
  const plain = (v) => JSON.parse(JSON.stringify(v));
  const reader = new SchemaRegistry({ host: registryUrl });  // nothing cached
  const received = await receive('first-level', records.length);
  assert.deepEqual(await Promise.all(received.map(async (b) => plain(await reader.decode(b)))), records);

  // oxbow reads them with the writer's schema fetched by id, its references with it.
  const consumed = oxbowConsume('first-level', records.length, '--value-format', 'avro');
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split('\n').map((l) => JSON.parse(l)), records);

  // oxbow writes with the topic subject's latest schema, the same FirstLevel; npm reads it.
  assert.equal((await registry.register(firstLevel, { subject: 'first-level-2-value' })).id, id);
  const produced = oxbow(['produce', 'first-level-2', '--value-format', 'avro',
    '--registry-property', 'use.latest.version=true', '--registry-property', 'auto.register.schemas=false'],
  records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  assert.equal(produced.code, 0, produced.stderr);
  const written = await receive('first-level-2', records.length);
  assert.deepEqual(written, encoded);
  assert.deepEqual(await Promise.all(written.map(async (b) => plain(await reader.decode(b)))), records);
});

// ---- Protobuf: an order importing a registered customer.proto ----

const customerProto = `syntax = "proto3";
package shop;

message Customer {
  string name = 1;
  string email = 2;
}
`;
const orderProto = `syntax = "proto3";
package shop;

import "shop/customer.proto";

message Order {
  int64 id = 1;
  Customer customer = 2;
  repeated string items = 3;
  Status status = 4;
  enum Status {
    NEW = 0;
    PAID = 1;
  }
}
`;

test('Protobuf with a reference: oxbow produces with the imported schema, npm decodes', async () => {
  const registry = new SchemaRegistry({ host: registryUrl });
  // The import is registered under its path, as Confluent's default reference subject name
  // strategy names it.
  await registry.register({ type: SchemaType.PROTOBUF, schema: customerProto },
    { subject: 'shop/customer.proto' });
  const ref = { name: 'shop/customer.proto', subject: 'shop/customer.proto', version: 1 };
  const { id } = await registry.register(
    { type: SchemaType.PROTOBUF, schema: orderProto, references: [ref] },
    { subject: 'orders-proto-value' });

  const orders = [
    { id: '7', customer: { name: 'Zoë', email: 'zoe@example.com' }, items: ['tea', 'cake'], status: 'PAID' },
    { id: '-9007199254740993', customer: { name: 'Ann' } },
  ];
  const protoFile = path.join(dir, 'order.proto');
  fs.writeFileSync(protoFile, orderProto);
  // oxbow looks the import up at subject shop/customer.proto and registers the order with that
  // reference: the schema npm registered, so the same id.
  const produced = oxbow(['produce', 'orders-proto', '--value-format', 'protobuf',
    '--value-schema', `@${protoFile}`, '--value-message', 'shop.Order'],
  orders.map((o) => JSON.stringify(o)).join('\n') + '\n');
  assert.equal(produced.code, 0, produced.stderr);
  const received = await receive('orders-proto', orders.length);
  for (const bytes of received) {
    assert.equal(bytes[0], 0);                // magic byte
    assert.equal(bytes.readInt32BE(1), id);   // npm's registration
    assert.equal(bytes[5], 0);                // message indexes [0]
  }

  // npm decodes (with the referenced schema fetched from the registry).
  const reader = new SchemaRegistry({ host: registryUrl });
  const decoded = await Promise.all(received.map(async (b) => (await reader.decode(b)).toJSON()));
  assert.deepEqual(decoded, [
    orders[0],
    { id: '-9007199254740993', customer: { name: 'Ann' } },
  ]);
  // npm's own encoding of the same values is oxbow's message body, without the indexes. (npm
  // takes protobufjs objects: Longs and enum numbers, made from the JSON by its fromObject.)
  const type = (await registry.getSchema(id)).message;
  for (let i = 0; i < orders.length; i++) {
    const theirs = await registry.encode(id, type.fromObject(orders[i]));
    assert.deepEqual(received[i].subarray(6), theirs.subarray(5));
  }

  // oxbow reads them back too, every field printed.
  const consumed = oxbowConsume('orders-proto', orders.length, '--value-format', 'protobuf');
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.deepEqual(consumed.stdout.trim().split('\n').map((l) => JSON.parse(l)), [
    orders[0],
    { id: '-9007199254740993', customer: { name: 'Ann', email: '' }, items: [], status: 'NEW' },
  ]);
});

test('Protobuf: an import that is not registered is refused before any record', async () => {
  const protoFile = path.join(dir, 'lonely.proto');
  fs.writeFileSync(protoFile, 'syntax = "proto3";\npackage x;\nimport "x/missing.proto";\n'
    + 'message Lonely { Missing m = 1; }\n');
  const produced = oxbow(['produce', 'lonely', '--value-format', 'protobuf',
    '--value-schema', `@${protoFile}`], '{}\n');
  assert.equal(produced.code, 1);
  assert.match(produced.stderr, /import x\/missing\.proto/);
  assert.match(produced.stderr, /register it first/);
});
