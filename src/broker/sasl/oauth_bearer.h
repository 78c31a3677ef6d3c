#pragma once
// SASL/OAUTHBEARER (RFC 7628, KIP-255) with Kafka's default server-side validation: unsecured
// JSON Web Tokens (RFC 7515 with "alg":"none", no signature), meant for development and tests,
// as Kafka's own OAuthBearerUnsecuredValidatorCallbackHandler. Options come from the listener's
// JAAS property, Kafka's format:
//   listener.name.<listener>.oauthbearer.sasl.jaas.config=
//     org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required
//     unsecuredValidatorPrincipalClaimName="sub" unsecuredValidatorRequiredScope="a b" ...;
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace oxbow::broker {

struct OAuthBearerOptions {
  std::string principal_claim = "sub";      // unsecuredValidatorPrincipalClaimName
  std::string scope_claim = "scope";        // unsecuredValidatorScopeClaimName
  std::vector<std::string> required_scope;  // unsecuredValidatorRequiredScope (space-separated)
  int64_t allowable_clock_skew_ms = 0;      // unsecuredValidatorAllowableClockSkewMs
};

// The unsecuredValidator* options of an OAuthBearerLoginModule JAAS configuration.
OAuthBearerOptions parse_oauth_bearer_jaas(const std::string& jaas);

struct OAuthBearerResult {
  std::optional<std::string> principal;  // set when the token is valid
  int64_t expires_at_ms = 0;             // the token's "exp", in milliseconds since the epoch
  std::string error;                     // why not, for the log and the client
};

// Checks a client's initial response: "n,[a=<authzid>]," 0x01 "auth=Bearer <token>" 0x01
// [key=value 0x01]... 0x01, with an unsecured token whose claims hold a principal, an expiry not
// yet passed and, when required, the scope.
OAuthBearerResult check_oauth_bearer(std::span<const uint8_t> client_first,
                                     const OAuthBearerOptions& options, int64_t now_ms);

}  // namespace oxbow::broker
