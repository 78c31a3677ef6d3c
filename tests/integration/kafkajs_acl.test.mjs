// kafkajs against oxbow's ACL authorizer (`node --test`): the PLAINTEXT listener is the admin
// channel (User:ANONYMOUS is a super user), alice authenticates with PLAIN on a SASL_PLAINTEXT
// listener and holds only what kafkajs's admin.createAcls gives her. Checks createAcls,
// describeAcls and deleteAcls, and that her produce is allowed or refused accordingly.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { startBroker } from './node_helpers.mjs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const {
  Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes,
} = (await import('kafkajs')).default;

const unique = (prefix) => `${prefix}-${process.pid}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('kafkajs with ACLs against oxbow', () => {
  let broker;
  const clients = [];
  const track = (c) => { clients.push(c); return c; };
  const kafka = (brokers, sasl) => new Kafka({
    clientId: 'oxbow-kafkajs-acl-it', brokers, sasl, logLevel: logLevel.NOTHING,
    retry: { retries: 2, initialRetryTime: 100 },
  });

  before(async () => {
    broker = await startBroker({
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'super.users': 'User:ANONYMOUS',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";',
    }, { extraListeners: ['SASL_PLAINTEXT'], prefix: 'oxbow-kafkajs-acl-' });
  });

  after(async () => {
    try {
      for (const c of clients) await c.disconnect().catch(() => {});
    } finally {
      const exit = await broker.stop();
      assert.deepEqual(exit, { code: 0, signal: null }, `broker did not shut down cleanly\n${broker.logTail()}`);
    }
  });

  test('createAcls grants, describeAcls lists and deleteAcls revokes', async () => {
    const topic = unique('kjs-acl');
    const admin = track(kafka([broker.bootstrap]).admin());
    await admin.connect();
    await admin.createTopics({ topics: [{ topic }], waitForLeaders: true });
    const acl = {
      resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:alice', host: '*', permissionType: AclPermissionTypes.ALLOW,
    };
    await admin.createAcls({ acl: [{ ...acl, operation: AclOperationTypes.WRITE }] });

    const described = await admin.describeAcls({
      resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:alice', host: '*', operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY,
    });
    assert.deepEqual(described.resources.map((r) => [r.resourceName, r.acls.map((a) => [a.principal, a.operation])]),
      [[topic, [['User:alice', AclOperationTypes.WRITE]]]]);

    const alice = track(kafka([broker.listenerBootstrap('SASL_PLAINTEXT')],
      { mechanism: 'plain', username: 'alice', password: 'alice-secret' }).producer({ allowAutoTopicCreation: false }));
    await alice.connect();
    await alice.send({ topic, acks: -1, messages: [{ value: 'allowed' }] });

    const deleted = await admin.deleteAcls({
      filters: [{ ...acl, principal: 'User:alice', operation: AclOperationTypes.ANY }],
    });
    assert.equal(deleted.filterResponses[0].matchingAcls.length, 1);
    await assert.rejects(alice.send({ topic, acks: -1, messages: [{ value: 'refused' }] }), (err) => {
      assert.ok(/TOPIC_AUTHORIZATION_FAILED|not authorized/i.test(`${err.type} ${err.message} ${err.originalError?.type}`),
        `${err.name}: ${err.message}`);
      return true;
    });
    const offsets = await admin.fetchTopicOffsets(topic);
    assert.equal(offsets[0].high, '1', 'only the allowed record was written');
  });
});
