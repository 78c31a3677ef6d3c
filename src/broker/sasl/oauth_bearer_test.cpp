#include "broker/sasl/oauth_bearer.h"

#include <gtest/gtest.h>

namespace oxbow::broker {
namespace {

constexpr int64_t kNowMs = 1'800'000'000'000;

std::string base64url(const std::string& bytes) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : bytes) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) out += alphabet[(bits >> (count -= 6)) & 63];
  }
  if (count > 0) out += alphabet[(bits << (6 - count)) & 63];
  return out;
}

std::string token(const std::string& claims, const std::string& header = R"({"alg":"none"})") {
  return base64url(header) + "." + base64url(claims) + ".";
}

std::vector<uint8_t> client_first(const std::string& token, const std::string& gs2 = "n,,",
                                  const std::string& extensions = "") {
  std::string text = gs2 + "\x01" + "auth=Bearer " + token + "\x01" + extensions + "\x01";
  return {text.begin(), text.end()};
}

OAuthBearerResult check(const std::vector<uint8_t>& bytes, const OAuthBearerOptions& options = {}) {
  return check_oauth_bearer(bytes, options, kNowMs);
}

TEST(OAuthBearer, AnUnsecuredTokenNamesItsPrincipalAndExpiry) {
  auto result = check(client_first(token(R"({"sub":"alice","exp":1800000060,"iat":1799999990})")));
  ASSERT_TRUE(result.principal) << result.error;
  EXPECT_EQ(*result.principal, "alice");
  EXPECT_EQ(result.expires_at_ms, 1'800'000'060'000);
  // Extensions and a matching authorization id are accepted; fractional NumericDates too.
  result = check(
      client_first(token(R"({"sub":"bob","exp":1800000000.5})"), "n,a=bob,", "traceId=42\x01"));
  ASSERT_TRUE(result.principal) << result.error;
  EXPECT_EQ(*result.principal, "bob");
  EXPECT_EQ(result.expires_at_ms, 1'800'000'000'500);
  // An expiry far beyond any clock is held in range rather than overflowing.
  result = check(client_first(token(R"({"sub":"carol","exp":1e300})")));
  ASSERT_TRUE(result.principal) << result.error;
  EXPECT_GT(result.expires_at_ms, kNowMs);
  EXPECT_FALSE(check(client_first(token(R"({"sub":"carol","exp":-1e300})"))).principal);
}

TEST(OAuthBearer, RefusesTokensKafkasUnsecuredValidatorRefuses) {
  const std::pair<std::string, std::string> cases[] = {
      {token(R"({"exp":1800000060})"), "no string claim 'sub'"},
      {token(R"({"sub":"alice"})"), "no numeric claim 'exp'"},
      {token(R"({"sub":"alice","exp":1799999999})"), "expired"},
      {token(R"({"sub":"alice","exp":1800000060,"iat":1800000030})"), "'iat'"},
      {token(R"({"sub":"alice","exp":1800000060})", R"({"alg":"HS256"})"), "alg"},
      {token(R"({"sub":"alice","exp":1800000060})") + "c2lnbmF0dXJl", "unsecured JWS"},
      {"not-a-jwt", "unsecured JWS"},
      {base64url("[]") + "." + base64url("{}") + ".", "JSON objects"},
  };
  for (const auto& [jwt, needle] : cases) {
    auto result = check(client_first(jwt));
    EXPECT_FALSE(result.principal) << jwt;
    EXPECT_NE(result.error.find(needle), std::string::npos) << jwt << ": " << result.error;
  }
}

TEST(OAuthBearer, RefusesMalformedInitialResponses) {
  auto valid = token(R"({"sub":"alice","exp":1800000060})");
  auto text = [](const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); };
  for (const auto& bytes : {text("y,,\x01"
                                 "auth=Bearer " +
                                 valid + "\x01\x01"),
                            text("n,,\x01\x01"),
                            text("n,,\x01"
                                 "auth=Basic " +
                                 valid + "\x01\x01"),
                            text("n,,auth=Bearer " + valid), text(""),
                            client_first(valid, "n,a=mallory,"), client_first(valid, "n,x=y,")}) {
    EXPECT_FALSE(check(bytes).principal) << std::string(bytes.begin(), bytes.end());
  }
}

TEST(OAuthBearer, JaasOptionsChangeTheClaimsAndScopeAsked) {
  auto options = parse_oauth_bearer_jaas(
      "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
      "unsecuredValidatorPrincipalClaimName=\"user\" unsecuredValidatorScopeClaimName=\"scp\" "
      "unsecuredValidatorRequiredScope=\"read write\" "
      "unsecuredValidatorAllowableClockSkewMs=\"5000\";");
  EXPECT_EQ(options.principal_claim, "user");
  EXPECT_EQ(options.scope_claim, "scp");
  EXPECT_EQ(options.required_scope, (std::vector<std::string>{"read", "write"}));
  EXPECT_EQ(options.allowable_clock_skew_ms, 5000);
  // Expired two seconds ago, within the five allowed; the scope as a string or an array.
  for (const char* claims : {R"({"user":"carol","exp":1799999998,"scp":"write read admin"})",
                             R"({"user":"carol","exp":1799999998,"scp":["read","write"]})"}) {
    auto result = check(client_first(token(claims)), options);
    ASSERT_TRUE(result.principal) << claims << ": " << result.error;
    EXPECT_EQ(*result.principal, "carol");
  }
  auto narrow =
      check(client_first(token(R"({"user":"carol","exp":1800000060,"scp":"read"})")), options);
  EXPECT_FALSE(narrow.principal);
  EXPECT_NE(narrow.error.find("'write'"), std::string::npos) << narrow.error;
  EXPECT_FALSE(
      check(client_first(token(R"({"sub":"carol","exp":1800000060})")), options).principal);
}

}  // namespace
}  // namespace oxbow::broker
