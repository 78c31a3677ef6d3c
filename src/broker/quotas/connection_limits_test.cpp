#include "broker/quotas/connection_limits.h"

#include <gtest/gtest.h>

namespace oxbow::broker {
namespace {

TEST(ConnectionLimitsTest, ListenerLimitsComeFromLowerCaseListenerKeys) {
  auto limits = listener_limits({{"listener.name.external.max.connections", "5"},
                                 {"listener.name.external.max.connection.creation.rate", "7"},
                                 {"listener.name.internal.max.connections", "3"},
                                 {"listener.name.internal.ssl.keystore.location", "/k"},
                                 {"max.connections", "100"}});
  ASSERT_EQ(limits.size(), 2u);
  EXPECT_EQ(limits["external"].max_connections, 5);
  EXPECT_EQ(limits["external"].max_creation_rate, 7);
  EXPECT_EQ(limits["internal"].max_connections, 3);
  EXPECT_EQ(limits["internal"].max_creation_rate, INT32_MAX);
}

TEST(ConnectionLimitsTest, AListenerAtItsMaximumWaitsWhileOthersAccept) {
  ConnectionLimits limits;
  ConnectionLimitConfig config;
  config.listeners["external"].max_connections = 2;
  limits.configure(config);
  int64_t per_ip = 0;
  ASSERT_TRUE(limits.admit("EXTERNAL", "10.0.0.1", per_ip));
  EXPECT_FALSE(limits.at_capacity("EXTERNAL"));
  ASSERT_TRUE(limits.admit("EXTERNAL", "10.0.0.2", per_ip));
  EXPECT_TRUE(limits.at_capacity("EXTERNAL"));
  EXPECT_FALSE(limits.at_capacity("INTERNAL"));
  limits.release("EXTERNAL", "10.0.0.1");
  EXPECT_FALSE(limits.at_capacity("EXTERNAL"));
  // Lowering the limit below the open connections stops accepting; none is closed.
  config.listeners["external"].max_connections = 0;
  limits.configure(config);
  EXPECT_TRUE(limits.at_capacity("EXTERNAL"));
  // Removing the listener's key lifts its limit.
  config.listeners.clear();
  limits.configure(config);
  EXPECT_FALSE(limits.at_capacity("EXTERNAL"));
}

TEST(ConnectionLimitsTest, TheBrokerWideMaximumCountsEveryListener) {
  ConnectionLimits limits;
  ConnectionLimitConfig config;
  config.max_total = 2;
  config.listeners["external"].max_connections = 10;
  limits.configure(config);
  int64_t per_ip = 0;
  ASSERT_TRUE(limits.admit("EXTERNAL", "10.0.0.1", per_ip));
  ASSERT_TRUE(limits.admit("INTERNAL", "10.0.0.1", per_ip));
  EXPECT_TRUE(limits.at_capacity("EXTERNAL"));
  EXPECT_TRUE(limits.at_capacity("INTERNAL"));
}

TEST(ConnectionLimitsTest, AListenerCreationRateDelaysOnlyThatListener) {
  ConnectionLimits limits;
  ConnectionLimitConfig config;
  config.window = {2, 1000};
  config.listeners["external"].max_creation_rate = 1;
  limits.configure(config);
  // Two connections in the first instant: 2 over the rate's 1 s span is twice the rate.
  EXPECT_EQ(limits.record_creation("EXTERNAL", 0), 0);
  EXPECT_GT(limits.record_creation("EXTERNAL", 0), 0);
  EXPECT_LE(limits.record_creation("EXTERNAL", 0), 1000);  // at most one sample window
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limits.record_creation("INTERNAL", 0), 0);
  // With a broker-wide rate too, a listener waits for the longer of the two.
  config.max_creation_rate = 1;
  config.listeners.clear();
  limits.configure(config);
  EXPECT_EQ(limits.record_creation("INTERNAL", 5000), 0);
  EXPECT_GT(limits.record_creation("INTERNAL", 5000), 0);
}

TEST(ConnectionLimitsTest, TheInterBrokerListenerIsExemptFromTheBrokerWideLimits) {
  ConnectionLimits limits;
  ConnectionLimitConfig config;
  config.max_total = 1;
  config.max_creation_rate = 1;
  config.window = {2, 1000};
  config.protected_listener = "internal";
  config.listeners["internal"].max_connections = 3;
  limits.configure(config);
  int64_t per_ip = 0;
  ASSERT_TRUE(limits.admit("EXTERNAL", "10.0.0.1", per_ip));
  EXPECT_TRUE(limits.at_capacity("EXTERNAL"));
  EXPECT_FALSE(limits.at_capacity("INTERNAL"));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(limits.record_creation("INTERNAL", 0), 0);
    ASSERT_TRUE(limits.admit("INTERNAL", "10.0.0.1", per_ip));
  }
  // Its own limit still holds, and its connections count towards everyone else's.
  EXPECT_TRUE(limits.at_capacity("INTERNAL"));
  limits.release("EXTERNAL", "10.0.0.1");
  EXPECT_TRUE(limits.at_capacity("EXTERNAL"));
  // The broker-wide rate was not spent by the protected listener.
  EXPECT_EQ(limits.record_creation("EXTERNAL", 0), 0);
}

TEST(ConnectionLimitsTest, TheProtectedListenerIsTheInterBrokerOneOfSeveral) {
  EXPECT_EQ(protected_listener({"PLAINTEXT", "EXTERNAL"}, std::nullopt, "PLAINTEXT"), "plaintext");
  EXPECT_EQ(protected_listener({"INTERNAL", "EXTERNAL"}, "INTERNAL", "PLAINTEXT"), "internal");
  EXPECT_EQ(protected_listener({"SSL", "SASL_SSL"}, std::nullopt, "SASL_SSL"), "sasl_ssl");
  // A single listener is held by every limit; a missing one protects nothing.
  EXPECT_EQ(protected_listener({"PLAINTEXT"}, std::nullopt, "PLAINTEXT"), "");
  EXPECT_EQ(protected_listener({"A", "B"}, std::nullopt, "PLAINTEXT"), "");
}

}  // namespace
}  // namespace oxbow::broker
