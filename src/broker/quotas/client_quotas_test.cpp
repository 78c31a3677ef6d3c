#include "broker/quotas/client_quotas.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace oxbow::broker {
namespace {

namespace fs = std::filesystem;
using Name = std::optional<std::string>;

class ClientQuotasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("oxbow-quotas-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path() const { return (dir_ / "quotas.json").string(); }

  static void set(ClientQuotas& quotas, QuotaEntity entity, const char* key, double value) {
    std::string error;
    ASSERT_TRUE(quotas.alter({{std::move(entity), {{key, value}}}}, error)) << error;
  }

  fs::path dir_;
};

TEST(SampledRateTest, SpreadsAFirstBurstOverTheWholeWindow) {
  SampledRate rate({11, 1000});
  rate.record(10000, 0);
  // Ten full windows are assumed even though only one has begun: 10000 B over 10 s.
  EXPECT_EQ(rate.span_ms(0), 10000);
  EXPECT_DOUBLE_EQ(rate.per_second(0), 1000);
  // 5.5 s in, five whole windows have passed: five more are added to make the ten.
  rate.record(10000, 5500);
  EXPECT_EQ(rate.span_ms(5500), 10500);
  EXPECT_DOUBLE_EQ(rate.per_second(5500), 20000.0 * 1000 / 10500);
}

TEST(SampledRateTest, ForgetsSamplesOlderThanTheWindow) {
  SampledRate rate({3, 1000});
  rate.record(3000, 0);
  rate.record(3000, 1000);
  EXPECT_DOUBLE_EQ(rate.per_second(1000), 3000);  // 6000 B over 2 s
  // At 3500 the sample started at 0 is 3.5 s old and gone; the one from 1000 remains.
  EXPECT_DOUBLE_EQ(rate.per_second(3500), 3000.0 * 1000 / 2500);
  EXPECT_DOUBLE_EQ(rate.per_second(10000), 0);
}

TEST_F(ClientQuotasTest, ThrottlesForTheTimeTheRateNeedsToFallBackToTheQuota) {
  ClientQuotas quotas(path(), {});
  EXPECT_FALSE(quotas.active());
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "ANONYMOUS", "c", 1e9, 0), 0);
  set(quotas, {{kQuotaClientId, Name("c")}}, kProducerByteRate, 1000);
  EXPECT_TRUE(quotas.active());
  // 20000 B over the assumed 10 s is 2000 B/s, twice the quota: another 10 s brings it back.
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "ANONYMOUS", "c", 20000, 0), 10000);
  // Fetches have a quota of their own, and other client ids are not covered.
  EXPECT_EQ(quotas.record(QuotaType::kFetch, "ANONYMOUS", "c", 1e6, 0), 0);
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "ANONYMOUS", "other", 1e6, 0), 0);
  EXPECT_EQ(quotas.max_bytes_per_span(QuotaType::kProduce, "ANONYMOUS", "c"), 10000);
  EXPECT_EQ(quotas.max_bytes_per_span(QuotaType::kFetch, "ANONYMOUS", "c"), std::nullopt);
}

TEST_F(ClientQuotasTest, RequestTimeThrottlesAreAtMostOneSampleWindow) {
  ClientQuotas quotas(path(), {11, 1000});
  set(quotas, {{kQuotaUser, Name("u")}}, kRequestPercentage, 10);
  // 2 percent-seconds over the assumed 10 s is 0.2 %, within 10 %.
  EXPECT_EQ(quotas.record(QuotaType::kRequest, "u", "c", 2, 0), 0);
  // 5000 more is far over: the byte-rate formula would say minutes, the cap is the window.
  EXPECT_EQ(quotas.record(QuotaType::kRequest, "u", "c", 5000, 0), 1000);
}

TEST_F(ClientQuotasTest, ConnectionRatesApplyPerAddressNamedBeforeDefault) {
  ClientQuotas quotas(path(), {2, 1000});
  set(quotas, {{kQuotaIp, Name()}}, kConnectionCreationRate, 1);
  set(quotas, {{kQuotaIp, Name("localhost")}}, kConnectionCreationRate, 100);
  // The default: one a second for each address. A second at once is 2/s: a second's delay, capped.
  EXPECT_EQ(quotas.record(QuotaType::kConnection, "", "10.0.0.1", 1, 0), 0);
  EXPECT_EQ(quotas.record(QuotaType::kConnection, "", "10.0.0.1", 1, 0), 1000);
  EXPECT_EQ(quotas.record(QuotaType::kConnection, "", "10.0.0.2", 1, 0), 0);
  // localhost was resolved to its address when it was set.
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(quotas.record(QuotaType::kConnection, "", "127.0.0.1", 1, 0), 0);
}

TEST_F(ClientQuotasTest, MutationsDrawOnATokenBucketStrictlyOrPermissively) {
  ClientQuotas quotas(path(), {}, {10, 1000});
  set(quotas, {{kQuotaClientId, Name("admin")}}, kControllerMutationRate, 2);
  // A burst of 2/s x 10 s = 20, full at first: 30 partitions are taken, leaving -10.
  EXPECT_EQ(quotas.charge_mutations("u", "admin", 30, true, 0).accepted, true);
  // Below zero, strict requests are refused with the time to get back to zero: 10 / 2 per s.
  auto refused = quotas.charge_mutations("u", "admin", 1, true, 0);
  EXPECT_FALSE(refused.accepted);
  EXPECT_EQ(refused.throttle_ms, 5000);
  // Permissive ones are taken and throttled.
  auto taken = quotas.charge_mutations("u", "admin", 1, false, 0);
  EXPECT_TRUE(taken.accepted);
  EXPECT_EQ(taken.throttle_ms, 5500);
  // 6 s refill 12 tokens: at +1 a strict request goes through again. Other clients are free.
  EXPECT_TRUE(quotas.charge_mutations("u", "admin", 1, true, 6000).accepted);
  EXPECT_TRUE(quotas.charge_mutations("u", "other", 1000, true, 0).accepted);
}

TEST_F(ClientQuotasTest, ResolvesKafkasPrecedenceAndCountsDefaultsPerClient) {
  ClientQuotas quotas(path(), {});
  set(quotas, {{kQuotaClientId, Name()}}, kProducerByteRate, 100);
  set(quotas, {{kQuotaUser, Name("alice")}}, kProducerByteRate, 1000);
  set(quotas, {{kQuotaUser, Name("alice")}, {kQuotaClientId, Name("special")}}, kProducerByteRate,
      5000);
  auto most = [&](const char* user, const char* client) {
    return quotas.max_bytes_per_span(QuotaType::kProduce, user, client).value_or(-1);
  };
  EXPECT_EQ(most("bob", "a"), 1000);           // clients/<default>
  EXPECT_EQ(most("alice", "a"), 10000);        // users/alice beats clients/<default>
  EXPECT_EQ(most("alice", "special"), 50000);  // users/alice/clients/special beats both
  // The default client-id quota is an allowance for each client id: 1000 B each is at the quota.
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "bob", "a", 1000, 0), 0);
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "bob", "b", 1000, 0), 0);
  // alice's quota is one allowance that all her client ids share.
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "alice", "a", 10000, 0), 0);
  EXPECT_GT(quotas.record(QuotaType::kProduce, "alice", "b", 1000, 0), 0);
  // Taking bytes back (a throttled fetch's) lowers the rate again.
  quotas.unrecord(QuotaType::kProduce, "alice", "b", 1000, 0);
  EXPECT_EQ(quotas.record(QuotaType::kProduce, "alice", "c", 0, 0), 0);
}

TEST_F(ClientQuotasTest, PersistsAndRemovesQuotas) {
  {
    ClientQuotas quotas(path(), {});
    set(quotas, {{kQuotaUser, Name()}}, kConsumerByteRate, 2048);
    set(quotas, {{kQuotaUser, Name("u")}, {kQuotaClientId, Name()}}, kProducerByteRate, 4096);
  }
  ClientQuotas reloaded(path(), {});
  std::string error;
  ASSERT_TRUE(reloaded.load(error)) << error;
  EXPECT_TRUE(reloaded.active());
  auto all = reloaded.all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(reloaded.max_bytes_per_span(QuotaType::kFetch, "anyone", "x"), 20480);
  ASSERT_TRUE(reloaded.alter(
      {{{{kQuotaUser, Name()}}, {{kConsumerByteRate, std::nullopt}}},
       {{{kQuotaUser, Name("u")}, {kQuotaClientId, Name()}}, {{kProducerByteRate, std::nullopt}}}},
      error));
  EXPECT_TRUE(reloaded.all().empty());
  EXPECT_FALSE(reloaded.active());
}

const QuotaEntity kUserEntity = {{kQuotaUser, Name("u")}};
const QuotaEntity kIpEntity = {{kQuotaIp, Name("127.0.0.1")}};

TEST(QuotaValidationTest, FollowsKafkasRules) {
  EXPECT_EQ(quota_entity_problem({}), "Invalid empty client quota entity");
  EXPECT_EQ(quota_entity_problem({{"group", Name("g")}}),
            "Unhandled client quota entity type: group");
  EXPECT_EQ(quota_entity_problem({{kQuotaUser, Name("")}}), "Empty user not supported");
  EXPECT_NE(quota_entity_problem({{"ip", Name("10.0.0.1")}, {kQuotaUser, Name("u")}}), "");
  EXPECT_EQ(quota_entity_problem({{kQuotaUser, Name()}, {kQuotaClientId, Name("c")}}), "");
  EXPECT_EQ(quota_value_problem(kUserEntity, kProducerByteRate, 1024), "");
  EXPECT_EQ(quota_value_problem(kUserEntity, kProducerByteRate, 0),
            "Quota producer_byte_rate must be greater than 0");
  EXPECT_EQ(quota_value_problem(kUserEntity, kConsumerByteRate, 1.5),
            "consumer_byte_rate cannot be a fractional value.");
  EXPECT_EQ(quota_value_problem(kUserEntity, kConsumerByteRate, 1e19),
            "Proposed value for consumer_byte_rate is too large for a LONG.");
  EXPECT_EQ(quota_value_problem(kUserEntity, "bytes", 1), "Invalid configuration key bytes");
  // request_percentage is a DOUBLE: fractions are fine, as long as it is positive.
  EXPECT_EQ(quota_value_problem(kUserEntity, kRequestPercentage, 0.5), "");
  EXPECT_EQ(quota_value_problem(kUserEntity, kRequestPercentage, -1),
            "Quota request_percentage must be greater than 0");
  EXPECT_EQ(quota_value_problem(kUserEntity, kControllerMutationRate, 0.5), "");
  // IP entities take connection_creation_rate only, an INT, and a name that is an address.
  EXPECT_EQ(quota_entity_problem(kIpEntity), "");
  EXPECT_EQ(quota_entity_problem({{kQuotaIp, Name()}}), "");
  EXPECT_EQ(quota_entity_problem({{kQuotaIp, Name("no-such-host.invalid")}}),
            "no-such-host.invalid is not a valid IP or resolvable host.");
  EXPECT_EQ(quota_value_problem(kIpEntity, kConnectionCreationRate, 10), "");
  EXPECT_EQ(quota_value_problem(kIpEntity, kConnectionCreationRate, 3e9),
            "Proposed value for connection_creation_rate is too large for an INT.");
  EXPECT_EQ(quota_value_problem(kIpEntity, kProducerByteRate, 10),
            "Invalid configuration key producer_byte_rate");
  EXPECT_EQ(quota_value_problem(kUserEntity, kConnectionCreationRate, 10),
            "Invalid configuration key connection_creation_rate");
}

}  // namespace
}  // namespace oxbow::broker
