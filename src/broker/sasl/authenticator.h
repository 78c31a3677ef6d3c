#pragma once
// SASL authentication on SASL_PLAINTEXT listeners, as Kafka does it: SaslHandshake picks a
// mechanism, SaslAuthenticate carries its tokens. SCRAM-SHA-256/512 users are the broker's stored
// credentials (scram.h, managed with AlterUserScramCredentials). OAUTHBEARER takes unsecured
// tokens (oauth_bearer.h). PLAIN users come from the listener's JAAS property, Kafka's own format:
//   listener.name.<listener, lower case>.plain.sasl.jaas.config=
//     org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="secret" ...;
// Until a connection has authenticated it may only send ApiVersions, SaslHandshake and
// SaslAuthenticate; with connections.max.reauth.ms its session then lasts that long. A client
// that sent SaslHandshake v0 (before KIP-152, kafka-python 2.0 for one) sends its tokens bare,
// each behind a 4-byte length, and gets the server's the same way; a failure closes the connection.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "broker/config/config.h"
#include "broker/sasl/oauth_bearer.h"
#include "broker/sasl/scram.h"

namespace oxbow::broker {

// What a connection knows about who is on the other end.
struct SecurityState {
  std::string listener;
  std::string security_protocol = "PLAINTEXT";
  std::string mechanism;                 // chosen by SaslHandshake
  std::shared_ptr<ScramExchange> scram;  // a SCRAM exchange under way
  bool raw_sasl_tokens = false;  // after SaslHandshake v0: tokens come bare, length-prefixed
  bool authenticated = false;
  std::string principal = "User:ANONYMOUS";
  std::chrono::steady_clock::time_point session_expiry =
      std::chrono::steady_clock::time_point::max();
  bool close_after_response = false;  // a failed authentication: answer, then hang up

  bool needs_sasl() const {
    return security_protocol == "SASL_PLAINTEXT" || security_protocol == "SASL_SSL";
  }
  // May a request of this API key be served now?
  bool admits(int16_t api_key, std::chrono::steady_clock::time_point now) const;
};

class Authenticator {
 public:
  explicit Authenticator(const BrokerConfig& config);

  // sasl.enabled.mechanisms of the listener: its listener.name.<l>.sasl.enabled.mechanisms, else
  // the broker's.
  const std::vector<std::string>& mechanisms(const std::string& listener) const;
  // connections.max.reauth.ms for a session of `mechanism` on the listener, as Kafka looks it up:
  // listener.name.<l>.<mechanism>.connections.max.reauth.ms, then
  // listener.name.<l>.connections.max.reauth.ms, then the broker's. 0: no limit.
  int64_t reauth_ms(const std::string& listener, const std::string& mechanism) const;
  // Checks a PLAIN token (authzid NUL user NUL password) for the listener; the user on success.
  std::optional<std::string> check_plain(const std::string& listener,
                                         std::span<const uint8_t> token,
                                         std::string& claimed_user) const;
  // The listener's OAUTHBEARER validation options (Kafka's defaults where it sets none).
  const OAuthBearerOptions& oauth_bearer_options(const std::string& listener) const;

 private:
  struct ListenerSasl {
    std::vector<std::string> mechanisms;
    std::map<std::string, int64_t> reauth_ms;  // by mechanism, each enabled one
  };
  std::vector<std::string> mechanisms_;  // the broker's
  int64_t reauth_ms_ = 0;
  std::map<std::string, ListenerSasl> listeners_;  // SASL listeners, by name
  std::map<std::string, std::map<std::string, std::string>>
      plain_users_;                                         // listener -> user -> password
  std::map<std::string, OAuthBearerOptions> oauth_bearer_;  // listener -> options
  OAuthBearerOptions oauth_bearer_defaults_;
};

// The user_<name>="<password>" entries of a JAAS PlainLoginModule configuration.
std::map<std::string, std::string> parse_plain_jaas_users(const std::string& jaas);

}  // namespace oxbow::broker
