#include "broker/config/config_defs.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "common/properties.h"

namespace oxbow::broker {

namespace {

constexpr const char* kLongMax = "9223372036854775807";
constexpr const char* kGzipLevels = "-1,1,2,3,4,5,6,7,8,9";  // Kafka's: zlib's 0 is refused
using T = ConfigType;

// Defaults follow Apache Kafka 3.3, except log.dirs (./data instead of /tmp/kafka-logs).
constexpr std::array kBrokerDefs = {
    ConfigDef{"node.id", T::kInt, "0", 0, nullptr, nullptr, true, "Id of this broker."},
    ConfigDef{"broker.id", T::kInt, "0", 0, nullptr, nullptr, true, "Alias of node.id."},
    ConfigDef{"broker.rack", T::kString, nullptr, 0, nullptr, nullptr, true,
              "Rack of this broker, given to clients in Metadata and DescribeCluster."},
    ConfigDef{"listeners", T::kList, "PLAINTEXT://127.0.0.1:9092", 0, nullptr, nullptr, true,
              "Listeners to bind: NAME://host:port, comma-separated."},
    ConfigDef{"advertised.listeners", T::kList, nullptr, 0, nullptr, nullptr, true,
              "Addresses given to clients; defaults to listeners."},
    ConfigDef{"listener.security.protocol.map", T::kList,
              "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", 0,
              nullptr, nullptr, true, "Security protocol of each listener name."},
    ConfigDef{"log.dirs", T::kList, nullptr, 0, nullptr, nullptr, true,
              "Directories holding partition logs."},
    ConfigDef{"log.dir", T::kString, "./data", 0, nullptr, nullptr, true,
              "Log directory when log.dirs is unset."},
    ConfigDef{"num.partitions", T::kInt, "1", 1, nullptr, nullptr, false,
              "Default partition count."},
    ConfigDef{"default.replication.factor", T::kInt, "1", 1, nullptr, nullptr, true,
              "Default replication factor."},
    ConfigDef{"auto.create.topics.enable", T::kBoolean, "true", 0, nullptr, nullptr, true,
              "Create a topic when a client asks for its metadata."},
    ConfigDef{"delete.topic.enable", T::kBoolean, "true", 0, nullptr, nullptr, true,
              "Allow topic deletion."},
    ConfigDef{"message.max.bytes", T::kInt, "1048588", 0, nullptr, nullptr, false,
              "Largest record batch."},
    ConfigDef{"socket.request.max.bytes", T::kInt, "104857600", 1, nullptr, nullptr, true,
              "Largest request."},
    ConfigDef{"socket.send.buffer.bytes", T::kInt, "-1", -1, nullptr, nullptr, true,
              "SO_SNDBUF of client connections; -1: the kernel's own sizing."},
    ConfigDef{"socket.receive.buffer.bytes", T::kInt, "-1", -1, nullptr, nullptr, true,
              "SO_RCVBUF of client connections; -1: the kernel's own sizing."},
    ConfigDef{"num.network.threads", T::kInt, "0", 0, nullptr, nullptr, true,
              "I/O threads serving connections; 0 means one per core."},
    ConfigDef{"num.io.threads", T::kInt, "8", 1, nullptr, nullptr, true,
              "Accepted for compatibility."},
    ConfigDef{"log.segment.bytes", T::kInt, "1073741824", 14, nullptr, nullptr, false,
              "Segment size."},
    ConfigDef{"log.roll.ms", T::kLong, nullptr, 1, nullptr, nullptr, false,
              "Segment age before a roll."},
    ConfigDef{"log.roll.hours", T::kInt, "168", 1, nullptr, nullptr, false,
              "Segment age in hours."},
    ConfigDef{"log.roll.jitter.ms", T::kLong, nullptr, 0, nullptr, nullptr, false, "Accepted."},
    ConfigDef{"log.roll.jitter.hours", T::kInt, "0", 0, nullptr, nullptr, false, "Accepted."},
    ConfigDef{"log.segment.delete.delay.ms", T::kLong, "60000", 0, nullptr, nullptr, false,
              "Accepted."},
    ConfigDef{"log.preallocate", T::kBoolean, "false", 0, nullptr, nullptr, false, "Accepted."},
    ConfigDef{"log.index.size.max.bytes", T::kInt, "10485760", 4, nullptr, nullptr, false,
              "Accepted."},
    ConfigDef{
        "log.message.downconversion.enable", T::kBoolean, "true", 0, nullptr, nullptr, false,
        "Convert records to the formats of Fetch v0-v3; false answers those UNSUPPORTED_VERSION."},
    ConfigDef{"unclean.leader.election.enable", T::kBoolean, "false", 0, nullptr, nullptr, false,
              "Accepted."},
    ConfigDef{"log.retention.ms", T::kLong, nullptr, -1, nullptr, nullptr, false,
              "Retention time."},
    ConfigDef{"log.retention.minutes", T::kInt, nullptr, -1, nullptr, nullptr, false,
              "Retention in minutes."},
    ConfigDef{"log.retention.hours", T::kInt, "168", -1, nullptr, nullptr, false,
              "Retention in hours."},
    ConfigDef{"log.retention.bytes", T::kLong, "-1", -1, nullptr, nullptr, false,
              "Retention size per partition."},
    ConfigDef{"log.retention.check.interval.ms", T::kLong, "300000", 1, nullptr, nullptr, true,
              "How often retention runs."},
    ConfigDef{"log.flush.interval.messages", T::kLong, kLongMax, 1, nullptr, nullptr, false,
              "Messages appended before an fsync."},
    ConfigDef{"log.flush.interval.ms", T::kLong, nullptr, 0, nullptr, nullptr, false,
              "Longest time data stays unsynced."},
    ConfigDef{"log.flush.scheduler.interval.ms", T::kLong, kLongMax, 0, nullptr, nullptr, true,
              "Accepted for compatibility."},
    ConfigDef{"log.index.interval.bytes", T::kInt, "4096", 0, nullptr, nullptr, false,
              "Index density."},
    ConfigDef{"log.message.format.version", T::kString, "3.0-IV1", 0, nullptr, nullptr, false,
              "Accepted and ignored, as in Kafka 3."},
    ConfigDef{"log.message.timestamp.type", T::kString, "CreateTime", 0, "CreateTime,LogAppendTime",
              nullptr, false, "Timestamp kept in batches."},
    ConfigDef{"log.message.timestamp.difference.max.ms", T::kLong, kLongMax, 0, nullptr, nullptr,
              false, "Largest gap between a CreateTime record's timestamp and the broker's clock."},
    ConfigDef{"log.cleanup.policy", T::kList, "delete", 0, "delete,compact", nullptr, false,
              "Cleanup policy."},
    ConfigDef{"compression.type", T::kString, "producer", 0,
              "uncompressed,zstd,lz4,snappy,gzip,producer", nullptr, false, "Stored compression."},
    ConfigDef{"compression.gzip.level", T::kInt, "-1", -1, kGzipLevels, nullptr, false,
              "gzip level when compression.type is gzip: 1-9, or -1 for zlib's default."},
    ConfigDef{"compression.lz4.level", T::kInt, "9", 1, nullptr, nullptr, false,
              "lz4 level when compression.type is lz4: 1-17 (9: lz4's fast mode).", 17},
    ConfigDef{"compression.zstd.level", T::kInt, "3", -131072, nullptr, nullptr, false,
              "zstd level when compression.type is zstd: -131072-22.", 22},
    ConfigDef{"min.insync.replicas", T::kInt, "1", 1, nullptr, nullptr, false,
              "In-sync replicas an acks=all produce needs: one node has one."},
    ConfigDef{"offsets.topic.replication.factor", T::kShort, "3", 1, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"transaction.state.log.replication.factor", T::kShort, "3", 1, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"transaction.state.log.min.isr", T::kInt, "2", 1, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"max.incremental.fetch.session.cache.slots", T::kInt, "1000", 0, nullptr, nullptr,
              true, "Incremental fetch sessions (KIP-227) the broker keeps; 0: none."},
    ConfigDef{"group.initial.rebalance.delay.ms", T::kInt, "3000", 0, nullptr, nullptr, true,
              "How long the first rebalance of an empty group waits for more members."},
    ConfigDef{"offsets.retention.minutes", T::kInt, "10080", 1, nullptr, nullptr, true,
              "How long committed offsets of an empty group are kept."},
    ConfigDef{"offsets.topic.num.partitions", T::kInt, "50", 1, nullptr, nullptr, true,
              "Partitions of __consumer_offsets."},
    ConfigDef{"offset.metadata.max.bytes", T::kInt, "4096", 0, nullptr, nullptr, true,
              "Largest metadata string of a committed offset."},
    ConfigDef{"group.min.session.timeout.ms", T::kInt, "6000", 0, nullptr, nullptr, true,
              "Shortest session timeout a member may ask for."},
    ConfigDef{"group.max.session.timeout.ms", T::kInt, "1800000", 0, nullptr, nullptr, true,
              "Longest session timeout a member may ask for."},
    ConfigDef{"group.consumer.session.timeout.ms", T::kInt, "45000", 1, nullptr, nullptr, true,
              "How long a consumer-protocol member (KIP-848) may go without a heartbeat."},
    ConfigDef{"group.consumer.min.session.timeout.ms", T::kInt, "45000", 1, nullptr, nullptr, true,
              "Lower bound of group.consumer.session.timeout.ms."},
    ConfigDef{"group.consumer.max.session.timeout.ms", T::kInt, "60000", 1, nullptr, nullptr, true,
              "Upper bound of group.consumer.session.timeout.ms."},
    ConfigDef{"group.consumer.heartbeat.interval.ms", T::kInt, "5000", 1, nullptr, nullptr, true,
              "How often consumer-protocol members are told to heartbeat."},
    ConfigDef{"group.consumer.min.heartbeat.interval.ms", T::kInt, "5000", 1, nullptr, nullptr,
              true, "Lower bound of group.consumer.heartbeat.interval.ms."},
    ConfigDef{"group.consumer.max.heartbeat.interval.ms", T::kInt, "15000", 1, nullptr, nullptr,
              true, "Upper bound of group.consumer.heartbeat.interval.ms."},
    ConfigDef{"group.consumer.max.size", T::kInt, "2147483647", 1, nullptr, nullptr, true,
              "Most members a consumer-protocol group may have."},
    ConfigDef{"group.consumer.assignors", T::kList, "uniform,range", 0, nullptr, nullptr, true,
              "Server-side assignors members may name; the first is the default."},
    ConfigDef{"transaction.state.log.num.partitions", T::kInt, "50", 1, nullptr, nullptr, true,
              "Partitions of __transaction_state."},
    ConfigDef{"transaction.max.timeout.ms", T::kInt, "900000", 1, nullptr, nullptr, true,
              "Longest transaction timeout a producer may ask for."},
    ConfigDef{"transaction.abort.timed.out.transaction.cleanup.interval.ms", T::kInt, "10000", 1,
              nullptr, nullptr, true,
              "How often transactions past their timeout are looked for and aborted."},
    ConfigDef{"transactional.id.expiration.ms", T::kInt, "604800000", 1, nullptr, nullptr, true,
              "How long an idle transactional id is remembered."},
    ConfigDef{"process.roles", T::kList, "broker,controller", 0, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"controller.quorum.voters", T::kList, "", 0, nullptr, nullptr, true, "Accepted."},
    ConfigDef{"controller.quorum.bootstrap.servers", T::kList, "", 0, nullptr, nullptr, true,
              "Accepted."},
    // Keys of Kafka's own server.properties that one node has no use for.
    ConfigDef{"security.inter.broker.protocol", T::kString, "PLAINTEXT", 0,
              "PLAINTEXT,SSL,SASL_PLAINTEXT,SASL_SSL", nullptr, true,
              "Accepted: one node has no inter-broker traffic."},
    ConfigDef{"replica.lag.time.max.ms", T::kLong, "30000", 0, nullptr, nullptr, true,
              "Accepted: one node has no followers."},
    ConfigDef{"replica.socket.timeout.ms", T::kInt, "30000", 0, nullptr, nullptr, true,
              "Accepted: one node has no followers."},
    ConfigDef{"transaction.partition.verification.enable", T::kBoolean, "true", 0, nullptr, nullptr,
              true,
              "Always true here: a transactional produce to a partition its transaction does not "
              "hold is refused (KIP-890)."},
    ConfigDef{"replica.selector.class", T::kString, nullptr, 0, nullptr, nullptr, true,
              "Accepted: with one node the leader is the only replica to read from."},
    ConfigDef{"offsets.commit.timeout.ms", T::kInt, "5000", 1, nullptr, nullptr, true,
              "Accepted: an offset commit waits for no replica."},
    ConfigDef{"num.recovery.threads.per.data.dir", T::kInt, "1", 1, nullptr, nullptr, true,
              "Threads per log dir that recover its partitions after an unclean shutdown."},
    ConfigDef{"controller.listener.names", T::kList, nullptr, 0, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"inter.broker.listener.name", T::kString, nullptr, 0, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"test.fault.drop.connection.every.produce", T::kLong, "0", 0, nullptr, nullptr, true,
              "Testing only: close the connection of every Nth produce after appending, before "
              "answering."},
    ConfigDef{"test.fault.recovery.delay.ms", T::kLong, "0", 0, nullptr, nullptr, true,
              "Testing only: wait this long before loading the logs, to observe readiness."},
    ConfigDef{"log.cleaner.enable", T::kBoolean, "true", 0, nullptr, nullptr, true,
              "Run the log cleaner for compacted topics."},
    ConfigDef{"log.cleaner.backoff.ms", T::kLong, "15000", 0, nullptr, nullptr, true,
              "Pause of the cleaner when no log needs cleaning."},
    ConfigDef{"log.cleaner.dedupe.buffer.size", T::kLong, "134217728", 0, nullptr, nullptr, true,
              "Memory for a compaction pass's key map; a pass over more keys stops at a segment "
              "and the next goes on."},
    ConfigDef{"log.cleaner.io.buffer.load.factor", T::kDouble, "0.9", 0, nullptr, nullptr, true,
              "Accepted."},
    ConfigDef{"log.cleaner.threads", T::kInt, "1", 0, nullptr, nullptr, true,
              "Cleaner threads (one is used)."},
    ConfigDef{"log.cleaner.delete.retention.ms", T::kLong, "86400000", 0, nullptr, nullptr, false,
              "Default delete.retention.ms."},
    ConfigDef{"log.cleaner.min.cleanable.ratio", T::kDouble, "0.5", 0, nullptr, nullptr, false,
              "Default min.cleanable.dirty.ratio."},
    ConfigDef{"log.cleaner.min.compaction.lag.ms", T::kLong, "0", 0, nullptr, nullptr, false,
              "Default min.compaction.lag.ms."},
    ConfigDef{"log.cleaner.max.compaction.lag.ms", T::kLong, kLongMax, 1, nullptr, nullptr, false,
              "Default max.compaction.lag.ms."},
    ConfigDef{"sasl.enabled.mechanisms", T::kList, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", 0,
              "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER", nullptr, true,
              "SASL mechanisms SASL listeners offer (OAUTHBEARER: unsecured tokens only)."},
    ConfigDef{"sasl.server.max.receive.size", T::kInt, "524288", 1, nullptr, nullptr, true,
              "Largest request a SASL listener reads before the client has authenticated."},
    ConfigDef{"connections.max.idle.ms", T::kLong, "600000", -1, nullptr, nullptr, true,
              "Connections with no request for this long are closed (also one stuck in its TLS "
              "handshake); "
              "0 or less: never."},
    ConfigDef{"connections.max.reauth.ms", T::kLong, "0", 0, nullptr, nullptr, true,
              "Longest an authenticated SASL session lasts before the client must authenticate "
              "again; 0: no limit."},
    ConfigDef{"max.connections.per.ip", T::kInt, "2147483647", 0, nullptr, nullptr, false,
              "Most connections one client address may hold; more are closed at once."},
    ConfigDef{"max.connections.per.ip.overrides", T::kString, "", 0, nullptr, nullptr, false,
              "Per-address exceptions to max.connections.per.ip: host:count,host:count."},
    ConfigDef{"max.connections", T::kInt, "2147483647", 0, nullptr, nullptr, false,
              "Most connections the broker holds; at the limit it stops accepting until one "
              "closes."},
    ConfigDef{"max.connection.creation.rate", T::kInt, "2147483647", 0, nullptr, nullptr, false,
              "New connections per second the broker accepts, over all listeners; faster ones "
              "wait."},
    ConfigDef{"quota.window.num", T::kInt, "11", 1, nullptr, nullptr, true,
              "Samples kept in memory to measure client byte rates against their quotas."},
    ConfigDef{"quota.window.size.seconds", T::kInt, "1", 1, nullptr, nullptr, true,
              "Time span of each client quota sample."},
    ConfigDef{"controller.quota.window.num", T::kInt, "11", 1, nullptr, nullptr, true,
              "Samples of controller_mutation_rate: with the window size, its burst."},
    ConfigDef{"controller.quota.window.size.seconds", T::kInt, "1", 1, nullptr, nullptr, true,
              "Time span of each controller_mutation_rate sample."},
    ConfigDef{"client.quota.callback.class", T::kString, nullptr, 0, nullptr, nullptr, true,
              "A Java quota callback: not supported, the broker refuses to start with one."},
    ConfigDef{"ssl.keystore.type", T::kString, "PEM", 0, "PEM,PKCS12", nullptr, true,
              "Format of the listener's key and certificate: PEM or PKCS12 (JKS is Java's own: "
              "convert it)."},
    ConfigDef{"ssl.keystore.location", T::kString, nullptr, 0, nullptr, nullptr, true,
              "PEM file holding the private key and the certificate chain."},
    ConfigDef{"ssl.keystore.key", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "The private key in PEM, instead of ssl.keystore.location."},
    ConfigDef{"ssl.keystore.certificate.chain", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "The certificate chain in PEM, instead of ssl.keystore.location."},
    ConfigDef{"ssl.key.password", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "Password of an encrypted private key."},
    ConfigDef{"ssl.keystore.password", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "Password of a PKCS12 keystore."},
    ConfigDef{
        "ssl.truststore.type", T::kString, "PEM", 0, "PEM,PKCS12", nullptr, true,
        "Format of the certificates client certificates are verified against: PEM or PKCS12."},
    ConfigDef{"ssl.truststore.location", T::kString, nullptr, 0, nullptr, nullptr, true,
              "PEM file of trusted CA certificates for client certificates."},
    ConfigDef{"ssl.truststore.certificates", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "Trusted CA certificates in PEM, instead of ssl.truststore.location."},
    ConfigDef{"ssl.truststore.password", T::kPassword, nullptr, 0, nullptr, nullptr, true,
              "Password of a PKCS12 truststore."},
    ConfigDef{"ssl.client.auth", T::kString, "none", 0, "required,requested,none", nullptr, true,
              "Client certificates on TLS listeners: required, requested (optional) or none."},
    ConfigDef{"ssl.enabled.protocols", T::kList, "TLSv1.2,TLSv1.3", 0, "TLSv1.2,TLSv1.3", nullptr,
              true, "TLS versions a listener accepts."},
    ConfigDef{"ssl.protocol", T::kString, "TLSv1.3", 0, nullptr, nullptr, true, "Accepted."},
    ConfigDef{"ssl.cipher.suites", T::kList, nullptr, 0, nullptr, nullptr, true,
              "OpenSSL cipher names allowed (TLS 1.2 cipher list and TLS 1.3 suites); default: "
              "OpenSSL's."},
    ConfigDef{"ssl.endpoint.identification.algorithm", T::kString, "https", 0, nullptr, nullptr,
              true, "Accepted (a client setting)."},
    ConfigDef{"ssl.principal.mapping.rules", T::kString, "DEFAULT", 0, nullptr, nullptr, true,
              "Maps a client certificate's subject to a principal name: "
              "RULE:pattern/replacement/[LU], DEFAULT."},
    ConfigDef{"authorizer.class.name", T::kString, "", 0, nullptr, nullptr, true,
              "Enables ACL authorization when set to "
              "org.apache.kafka.metadata.authorizer.StandardAuthorizer "
              "(or kafka.security.authorizer.AclAuthorizer)."},
    ConfigDef{"super.users", T::kString, nullptr, 0, nullptr, nullptr, true,
              "Principals allowed everything, semicolon-separated: User:admin;User:CN=ops."},
    ConfigDef{"allow.everyone.if.no.acl.found", T::kBoolean, "false", 0, nullptr, nullptr, true,
              "Allow a request on a resource no ACL applies to."},
    ConfigDef{"admin.listener", T::kString, "127.0.0.1:9644", 0, nullptr, nullptr, true,
              "host:port of the admin HTTP API (metrics, health); empty disables it."},
    ConfigDef{"slow.request.threshold.ms", T::kLong, "5000", 0, nullptr, nullptr, false,
              "Requests slower than this (receipt to response sent) are logged."},
    ConfigDef{"zookeeper.connect", T::kString, nullptr, 0, nullptr, nullptr, true,
              "Ignored: no ZooKeeper."},
    ConfigDef{"zookeeper.connection.timeout.ms", T::kInt, nullptr, 0, nullptr, nullptr, true,
              "Ignored: no ZooKeeper."},
    ConfigDef{"zookeeper.session.timeout.ms", T::kInt, "18000", 0, nullptr, nullptr, true,
              "Ignored: no ZooKeeper."},
    // Kerberos (GSSAPI) is not offered; its keys are taken, dynamically too as in Kafka, and
    // ignored.
    ConfigDef{"sasl.kerberos.service.name", T::kString, nullptr, 0, nullptr, nullptr, false,
              "Ignored: no GSSAPI."},
    ConfigDef{"sasl.kerberos.kinit.cmd", T::kString, "/usr/bin/kinit", 0, nullptr, nullptr, false,
              "Ignored: no GSSAPI."},
    ConfigDef{"sasl.kerberos.ticket.renew.window.factor", T::kDouble, "0.8", 0, nullptr, nullptr,
              false, "Ignored: no GSSAPI."},
    ConfigDef{"sasl.kerberos.ticket.renew.jitter", T::kDouble, "0.05", 0, nullptr, nullptr, false,
              "Ignored: no GSSAPI."},
    ConfigDef{"sasl.kerberos.min.time.before.relogin", T::kLong, "60000", 0, nullptr, nullptr,
              false, "Ignored: no GSSAPI."},
    ConfigDef{"sasl.kerberos.principal.to.local.rules", T::kList, "DEFAULT", 0, nullptr, nullptr,
              false, "Ignored: no GSSAPI."},
};

constexpr std::array kTopicDefs = {
    ConfigDef{"cleanup.policy", T::kList, "delete", 0, "delete,compact", "log.cleanup.policy",
              false, "delete or compact."},
    ConfigDef{"compression.type", T::kString, "producer", 0,
              "uncompressed,zstd,lz4,snappy,gzip,producer", "compression.type", false,
              "Stored compression."},
    ConfigDef{"compression.gzip.level", T::kInt, "-1", -1, kGzipLevels, "compression.gzip.level",
              false, "gzip level when compression.type is gzip: 1-9, or -1 for zlib's default."},
    ConfigDef{"compression.lz4.level", T::kInt, "9", 1, nullptr, "compression.lz4.level", false,
              "lz4 level when compression.type is lz4: 1-17 (9: lz4's fast mode).", 17},
    ConfigDef{"compression.zstd.level", T::kInt, "3", -131072, nullptr, "compression.zstd.level",
              false, "zstd level when compression.type is zstd: -131072-22.", 22},
    ConfigDef{"delete.retention.ms", T::kLong, "86400000", 0, nullptr,
              "log.cleaner.delete.retention.ms", false,
              "How long tombstones and transaction markers outlive compaction."},
    ConfigDef{"file.delete.delay.ms", T::kLong, "60000", 0, nullptr, "log.segment.delete.delay.ms",
              false, "Accepted."},
    ConfigDef{"flush.messages", T::kLong, kLongMax, 1, nullptr, "log.flush.interval.messages",
              false, "Messages appended before an fsync."},
    ConfigDef{"flush.ms", T::kLong, kLongMax, 0, nullptr, "log.flush.interval.ms", false,
              "Longest time data stays unsynced."},
    ConfigDef{"index.interval.bytes", T::kInt, "4096", 0, nullptr, "log.index.interval.bytes",
              false, "Index density."},
    ConfigDef{"max.compaction.lag.ms", T::kLong, kLongMax, 1, nullptr,
              "log.cleaner.max.compaction.lag.ms", false, "Longest a record stays uncompacted."},
    ConfigDef{"max.message.bytes", T::kInt, "1048588", 0, nullptr, "message.max.bytes", false,
              "Largest record batch."},
    ConfigDef{
        "message.downconversion.enable", T::kBoolean, "true", 0, nullptr,
        "log.message.downconversion.enable", false,
        "Convert records to the formats of Fetch v0-v3; false answers those UNSUPPORTED_VERSION."},
    // Deprecated in Kafka 3.0 and ignored there from inter.broker.protocol.version 3.0: batches are
    // kept as produced, magic 2.
    ConfigDef{"message.format.version", T::kString, "3.0-IV1", 0, nullptr,
              "log.message.format.version", false, "Accepted and ignored, as in Kafka 3."},
    ConfigDef{"message.timestamp.difference.max.ms", T::kLong, kLongMax, 0, nullptr,
              "log.message.timestamp.difference.max.ms", false,
              "Largest gap between a CreateTime record's timestamp and the broker's clock."},
    ConfigDef{"message.timestamp.type", T::kString, "CreateTime", 0, "CreateTime,LogAppendTime",
              "log.message.timestamp.type", false, "Timestamp kept in batches."},
    ConfigDef{"min.cleanable.dirty.ratio", T::kDouble, "0.5", 0, nullptr,
              "log.cleaner.min.cleanable.ratio", false,
              "Share of uncompacted bytes that triggers compaction."},
    ConfigDef{"min.compaction.lag.ms", T::kLong, "0", 0, nullptr,
              "log.cleaner.min.compaction.lag.ms", false, "Shortest a record stays uncompacted."},
    ConfigDef{"min.insync.replicas", T::kInt, "1", 1, nullptr, "min.insync.replicas", false,
              "In-sync replicas an acks=all produce needs: one node has one."},
    ConfigDef{"preallocate", T::kBoolean, "false", 0, nullptr, "log.preallocate", false,
              "Accepted."},
    ConfigDef{"retention.bytes", T::kLong, "-1", -1, nullptr, "log.retention.bytes", false,
              "Retention size per partition."},
    ConfigDef{"retention.ms", T::kLong, "604800000", -1, nullptr, "log.retention.ms", false,
              "Retention time."},
    ConfigDef{"segment.bytes", T::kInt, "1073741824", 14, nullptr, "log.segment.bytes", false,
              "Segment size."},
    ConfigDef{"segment.index.bytes", T::kInt, "10485760", 4, nullptr, "log.index.size.max.bytes",
              false, "Accepted."},
    ConfigDef{"segment.jitter.ms", T::kLong, "0", 0, nullptr, "log.roll.jitter.ms", false,
              "Accepted."},
    ConfigDef{"segment.ms", T::kLong, "604800000", 1, nullptr, "log.roll.ms", false,
              "Segment age before a roll."},
    ConfigDef{"unclean.leader.election.enable", T::kBoolean, "false", 0, nullptr,
              "unclean.leader.election.enable", false, "Accepted."},
    ConfigDef{"leader.replication.throttled.replicas", T::kList, "", 0, nullptr, nullptr, false,
              "Accepted."},
    ConfigDef{"follower.replication.throttled.replicas", T::kList, "", 0, nullptr, nullptr, false,
              "Accepted."},
};

const ConfigDef* find_in(std::span<const ConfigDef> defs, std::string_view name) {
  for (const auto& def : defs) {
    if (name == def.name) return &def;
  }
  return nullptr;
}

}  // namespace

std::span<const ConfigDef> broker_config_defs() {
  return kBrokerDefs;
}
std::span<const ConfigDef> topic_config_defs() {
  return kTopicDefs;
}
const ConfigDef* find_broker_config(std::string_view name) {
  return find_in(kBrokerDefs, name);
}
const ConfigDef* find_topic_config(std::string_view name) {
  return find_in(kTopicDefs, name);
}

namespace {

constexpr std::string_view kListenerPrefix = "listener.name.";

// Where the listener's name ends in a per-listener key, or npos.
size_t listener_name_end(std::string_view name) {
  if (!name.starts_with(kListenerPrefix)) return std::string_view::npos;
  size_t dot = name.find('.', kListenerPrefix.size());
  return dot == kListenerPrefix.size() ? std::string_view::npos : dot;
}

}  // namespace

std::string listener_of_key(std::string_view name) {
  size_t end = listener_name_end(name);
  if (end == std::string_view::npos) return {};
  return std::string(name.substr(kListenerPrefix.size(), end - kListenerPrefix.size()));
}

std::string listener_base_key(std::string_view name) {
  size_t dot = listener_name_end(name);
  if (dot == std::string_view::npos) return {};
  auto base = name.substr(dot + 1);
  for (std::string_view per_mechanism :
       {"sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.login.class",
        "sasl.server.callback.handler.class", "connections.max.reauth.ms"}) {
    if (base.ends_with(per_mechanism)) return std::string(per_mechanism);
  }
  return std::string(base);
}

const ConfigDef* find_listener_config(std::string_view name) {
  auto base = listener_base_key(name);
  if (base != "max.connections" && base != "max.connection.creation.rate" &&
      base != "sasl.enabled.mechanisms" && base != "connections.max.reauth.ms")
    return nullptr;
  return find_broker_config(base);
}

bool is_dynamic_listener_config(std::string_view name) {
  auto base = listener_base_key(name);
  return base == "max.connections" || base == "max.connection.creation.rate";
}

std::optional<std::string> validate_config_value(const ConfigDef& def, std::string_view value,
                                                 std::string_view key) {
  std::string name(key.empty() ? std::string_view(def.name) : key);
  auto invalid = [&](const std::string& why) {
    return "Invalid value " + std::string(value) + " for configuration " + name + ": " + why;
  };
  switch (def.type) {
    case ConfigType::kBoolean:
      if (!parse_bool(value)) return invalid("expected true or false");
      return std::nullopt;
    case ConfigType::kInt:
    case ConfigType::kShort:
    case ConfigType::kLong: {
      auto n = parse_int64(value);
      if (!n) return invalid("not a number");
      if (def.type == ConfigType::kInt && (*n > INT32_MAX || *n < INT32_MIN))
        return invalid("out of range");
      if (*n < def.min_value)
        return invalid("value must be at least " + std::to_string(def.min_value));
      if (*n > def.max_value)
        return invalid("value must be at most " + std::to_string(def.max_value));
      if (def.valid_values) {
        auto choices = split(def.valid_values, ',');
        if (std::find(choices.begin(), choices.end(), std::to_string(*n)) == choices.end())
          return invalid("Value must be one of: " + std::string(def.valid_values));
      }
      return std::nullopt;
    }
    case ConfigType::kDouble: {
      std::string text(value);
      char* end = nullptr;
      std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') return invalid("not a number");
      return std::nullopt;
    }
    case ConfigType::kString:
    case ConfigType::kList:
    case ConfigType::kPassword:
      if (def.valid_values) {
        auto choices = split(def.valid_values, ',');
        auto items = def.type == ConfigType::kList ? split(value, ',')
                                                   : std::vector<std::string>{std::string(value)};
        for (const auto& item : items) {
          bool ok = false;
          for (const auto& c : choices) ok = ok || c == item;
          if (!ok) return invalid("String must be one of: " + std::string(def.valid_values));
        }
      }
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace oxbow::broker
