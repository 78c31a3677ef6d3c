#include "broker/config/config.h"

#include <gtest/gtest.h>

#include "broker/config/config_defs.h"

namespace oxbow::broker {

TEST(BrokerConfig, DefaultsAreKafkas) {
  std::string error;
  std::vector<std::string> warnings;
  auto c = make_broker_config({}, error, warnings);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->num_partitions, 1);
  EXPECT_TRUE(c->auto_create_topics);
  EXPECT_EQ(c->log_defaults.segment_bytes, 1073741824);
  EXPECT_EQ(c->log_defaults.retention_ms, 168LL * 3600 * 1000);
  EXPECT_EQ(c->log_defaults.max_message_bytes, 1048588);
  EXPECT_EQ(c->listeners.at(0).port, 9092);
}

TEST(BrokerConfig, ListenersCanBindAndAdvertiseDifferently) {
  std::string error;
  std::vector<std::string> warnings;
  auto c = make_broker_config({{"listeners", "PLAINTEXT://127.0.0.1:19092"},
                               {"advertised.listeners", "PLAINTEXT://localhost:19092"},
                               {"log.retention.minutes", "5"},
                               {"log.flush.interval.messages", "1"}},
                              error, warnings);
  ASSERT_TRUE(c) << error;
  EXPECT_EQ(c->listeners[0].host, "127.0.0.1");
  EXPECT_EQ(c->advertised_listeners[0].host, "localhost");
  EXPECT_EQ(c->log_defaults.retention_ms, 5 * 60 * 1000);
  EXPECT_EQ(c->log_defaults.flush_messages, 1);
}

TEST(BrokerConfig, UnknownKeysWarnInvalidValuesFail) {
  std::string error;
  std::vector<std::string> warnings;
  EXPECT_TRUE(make_broker_config({{"no.such.key", "1"}}, error, warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no.such.key"), std::string::npos);
  EXPECT_FALSE(make_broker_config({{"num.partitions", "many"}}, error, warnings));
  EXPECT_NE(error.find("num.partitions"), std::string::npos);
  EXPECT_FALSE(make_broker_config({{"listeners", "localhost"}}, error, warnings));
  EXPECT_NE(error.find("listeners"), std::string::npos);
}

TEST(BrokerConfig, ListenersNeedDistinctNamesAndPortsAsInKafka) {
  std::string error;
  std::vector<std::string> warnings;
  auto with_listeners = [&](const std::string& listeners, const std::string& advertised = "") {
    Properties props{{"listeners", listeners},
                     {"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,A:PLAINTEXT"}};
    if (!advertised.empty()) props["advertised.listeners"] = advertised;
    error.clear();
    return make_broker_config(props, error, warnings).has_value();
  };
  EXPECT_FALSE(with_listeners("PLAINTEXT://localhost:9091,SSL://localhost:9091"));
  EXPECT_NE(error.find("Each listener must have a different port"), std::string::npos) << error;
  EXPECT_FALSE(with_listeners("PLAINTEXT://localhost:9091,PLAINTEXT://localhost:9092"));
  EXPECT_NE(error.find("Each listener must have a different name"), std::string::npos) << error;
  // One IPv4 and one IPv6 address may share a port; port 0 (any free port) is never shared.
  EXPECT_TRUE(with_listeners("PLAINTEXT://127.0.0.1:9091,A://[::1]:9091")) << error;
  EXPECT_TRUE(with_listeners("PLAINTEXT://127.0.0.1:0,A://127.0.0.1:0")) << error;
  EXPECT_FALSE(with_listeners("PLAINTEXT://127.0.0.1:9091,A://127.0.0.2:9091"));
  // Advertised listeners may share a port (a load balancer), not a name.
  EXPECT_TRUE(with_listeners("PLAINTEXT://:9091,A://:9092", "PLAINTEXT://lb:9000,A://lb:9000"))
      << error;
  EXPECT_FALSE(with_listeners("PLAINTEXT://:9091,A://:9092", "A://lb:9000,A://lb:9001"));
  EXPECT_NE(error.find("Each listener must have a different name"), std::string::npos) << error;
}

// The keys of Kafka's own config/server.properties (ZooKeeper and KRaft forms): a broker started
// on that file warns of none.
TEST(BrokerConfig, KafkasSampleServerPropertiesAreKnown) {
  std::string error;
  std::vector<std::string> warnings;
  Properties sample;
  for (const char* key : {"broker.id",
                          "node.id",
                          "process.roles",
                          "controller.quorum.voters",
                          "controller.quorum.bootstrap.servers",
                          "controller.listener.names",
                          "inter.broker.listener.name",
                          "listener.security.protocol.map",
                          "listeners",
                          "advertised.listeners",
                          "num.network.threads",
                          "num.io.threads",
                          "socket.send.buffer.bytes",
                          "socket.receive.buffer.bytes",
                          "socket.request.max.bytes",
                          "log.dirs",
                          "num.partitions",
                          "num.recovery.threads.per.data.dir",
                          "offsets.topic.replication.factor",
                          "transaction.state.log.replication.factor",
                          "transaction.state.log.min.isr",
                          "log.retention.hours",
                          "log.segment.bytes",
                          "log.retention.check.interval.ms",
                          "zookeeper.connect",
                          "zookeeper.connection.timeout.ms",
                          "group.initial.rebalance.delay.ms"}) {
    const ConfigDef* def = find_broker_config(key);
    ASSERT_NE(def, nullptr) << key;
    if (def->default_value) sample[key] = def->default_value;
  }
  sample["listeners"] = "PLAINTEXT://127.0.0.1:9092";
  ASSERT_TRUE(make_broker_config(sample, error, warnings)) << error;
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

TEST(BrokerConfig, SocketBufferSizesTakeMinusOneNotLess) {
  std::string error;
  std::vector<std::string> warnings;
  EXPECT_TRUE(make_broker_config({{"socket.send.buffer.bytes", "-1"}}, error, warnings)) << error;
  EXPECT_TRUE(make_broker_config({{"socket.receive.buffer.bytes", "102400"}}, error, warnings));
  EXPECT_FALSE(make_broker_config({{"socket.receive.buffer.bytes", "-2"}}, error, warnings));
  EXPECT_NE(error.find("socket.receive.buffer.bytes"), std::string::npos);
}

TEST(BrokerConfig, TopicOverridesWinOverBrokerDefaults) {
  std::string error;
  std::vector<std::string> warnings;
  auto c = make_broker_config({{"log.segment.bytes", "1000000"}}, error, warnings);
  auto log = resolve_log_config(
      c->log_defaults, {{"retention.ms", "1234"}, {"message.timestamp.type", "LogAppendTime"}});
  EXPECT_EQ(log.segment_bytes, 1000000);
  EXPECT_EQ(log.retention_ms, 1234);
  EXPECT_TRUE(log.log_append_time);
  EXPECT_TRUE(log.delete_policy);
  EXPECT_FALSE(resolve_log_config(c->log_defaults, {{"cleanup.policy", "compact"}}).delete_policy);
  EXPECT_TRUE(
      resolve_log_config(c->log_defaults, {{"cleanup.policy", "compact,delete"}}).delete_policy);
}

TEST(BrokerConfig, CompressionLevelsFollowTheTopicsCodec) {
  std::string error;
  std::vector<std::string> warnings;
  auto c = make_broker_config({{"compression.zstd.level", "7"}}, error, warnings);
  ASSERT_TRUE(c) << error;
  EXPECT_TRUE(warnings.empty());
  auto zstd = resolve_log_config(c->log_defaults, {{"compression.type", "zstd"}});
  EXPECT_EQ(zstd.compression_level(), 7);
  auto gzip = resolve_log_config(c->log_defaults,
                                 {{"compression.type", "gzip"}, {"compression.gzip.level", "2"}});
  EXPECT_EQ(gzip.compression_level(), 2);
  EXPECT_EQ(resolve_log_config(c->log_defaults, {{"compression.type", "lz4"}}).compression_level(),
            9);
  EXPECT_FALSE(make_broker_config({{"compression.lz4.level", "18"}}, error, warnings));
  EXPECT_NE(error.find("compression.lz4.level"), std::string::npos);
}

TEST(BrokerConfig, TransactionVerificationCannotBeTurnedOff) {
  std::string error;
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      make_broker_config({{"transaction.partition.verification.enable", "true"}}, error, warnings));
  EXPECT_TRUE(warnings.empty());
  ASSERT_TRUE(make_broker_config({{"transaction.partition.verification.enable", "false"}}, error,
                                 warnings));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("ignored"), std::string::npos);
}

TEST(ConfigDefs, CompressionLevelsTakeKafkasRanges) {
  auto valid = [](const char* key, const char* value) {
    return !validate_config_value(*find_topic_config(key), value);
  };
  EXPECT_TRUE(valid("compression.gzip.level", "-1"));
  EXPECT_TRUE(valid("compression.gzip.level", "9"));
  EXPECT_FALSE(valid("compression.gzip.level", "0"));
  EXPECT_FALSE(valid("compression.gzip.level", "10"));
  EXPECT_TRUE(valid("compression.lz4.level", "1"));
  EXPECT_FALSE(valid("compression.lz4.level", "0"));
  EXPECT_TRUE(valid("compression.zstd.level", "-131072"));
  EXPECT_TRUE(valid("compression.zstd.level", "22"));
  EXPECT_FALSE(valid("compression.zstd.level", "23"));
}

TEST(ConfigDefs, ValidationNamesTheKey) {
  auto* def = find_topic_config("cleanup.policy");
  ASSERT_TRUE(def);
  EXPECT_FALSE(validate_config_value(*def, "compact,delete"));
  auto bad = validate_config_value(*def, "shred");
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("cleanup.policy"), std::string::npos);
  EXPECT_TRUE(validate_config_value(*find_topic_config("retention.ms"), "-5"));
}

TEST(ConfigDefs, ListenerKeysOverrideTheirBrokerKeys) {
  EXPECT_EQ(listener_base_key("listener.name.ext.max.connections"), "max.connections");
  EXPECT_EQ(listener_base_key("listener.name.ext.scram-sha-256.connections.max.reauth.ms"),
            "connections.max.reauth.ms");
  EXPECT_EQ(listener_base_key("listener.name.ext.plain.sasl.jaas.config"), "sasl.jaas.config");
  EXPECT_EQ(listener_base_key("max.connections"), "");
  EXPECT_NE(find_listener_config("listener.name.ext.sasl.enabled.mechanisms"), nullptr);
  EXPECT_EQ(find_listener_config("listener.name.ext.ssl.keystore.location"), nullptr);
  EXPECT_TRUE(is_dynamic_listener_config("listener.name.ext.max.connection.creation.rate"));
  EXPECT_FALSE(is_dynamic_listener_config("listener.name.ext.sasl.enabled.mechanisms"));
}

}  // namespace oxbow::broker
