// SaslHandshake and SaslAuthenticate: the connection's authentication, per its listener's
// security protocol. Every failure is logged as an audit line.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/probe.h"
#include "broker/sasl/authenticator.h"
#include "broker/sasl/oauth_bearer.h"
#include "common/clock.h"
#include "protocol/errors.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

void handle_sasl_handshake(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::SaslHandshakeRequest request;
  request.decode(body, v);
  auto& security = *ctx.security;
  pr::SaslHandshakeResponse response;
  const auto& enabled = ctx.broker.authenticator().mechanisms(security.listener);
  if (!security.needs_sasl()) {
    response.error_code = pr::code(ErrorCode::kIllegalSaslState);
  } else if (std::find(enabled.begin(), enabled.end(), request.mechanism) == enabled.end()) {
    response.error_code = pr::code(ErrorCode::kUnsupportedSaslMechanism);
    response.mechanisms = enabled;
    security.close_after_response = true;  // as Kafka: the answer, then the connection ends
    probe().sasl_authentication_failures.add();
    spdlog::warn(
        "authentication failed: client {} on listener {} asked for mechanism '{}', enabled: {}",
        ctx.client_host, security.listener, request.mechanism, fmt::join(enabled, ","));
  } else {
    security.mechanism = request.mechanism;
    // v0 is from before KIP-152: the tokens then come bare, each with only a length in front.
    security.raw_sasl_tokens = v == 0;
    auto scram = scram_mechanism_from_name(request.mechanism);
    security.scram = scram == ScramMechanism::kUnknown
                         ? nullptr
                         : std::make_shared<ScramExchange>(scram, ctx.broker.scram_credentials());
    response.mechanisms = enabled;
  }
  response.encode(out, v);
}

SaslStep authenticate_sasl_token(RequestContext& ctx, std::span<const uint8_t> token) {
  auto& security = *ctx.security;
  auto& authenticator = ctx.broker.authenticator();
  SaslStep step;
  if (!security.needs_sasl() || security.mechanism.empty()) {
    step.error_code = pr::code(ErrorCode::kIllegalSaslState);
    step.error_message = "SaslAuthenticate without a SaslHandshake";
    return step;
  }
  std::string claimed;
  std::optional<std::string> user;
  std::string failure = "Authentication failed: Invalid username or password";
  int64_t credential_lifetime_ms = -1;  // OAUTHBEARER: until the token expires
  if (security.mechanism == "OAUTHBEARER") {
    int64_t now = now_ms();
    auto checked =
        check_oauth_bearer(token, authenticator.oauth_bearer_options(security.listener), now);
    user = checked.principal;
    claimed = checked.principal.value_or("");
    credential_lifetime_ms = checked.expires_at_ms - now;
    // Kafka answers a bad token with an RFC 7628 error challenge and fails the exchange on the
    // client's reply; failing at once tells clients the same, one round trip sooner.
    failure = "Authentication failed: invalid OAUTHBEARER token: " + checked.error;
  } else if (security.scram) {
    std::string message(token.begin(), token.end());
    auto answer = security.scram->step(message, claimed);
    if (answer) step.server_token.assign(answer->begin(), answer->end());
    if (answer && !security.scram->complete()) return step;  // server-first: the exchange goes on
    if (answer) user = claimed;
    failure =
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism " +
        security.mechanism;
  } else {
    user = authenticator.check_plain(security.listener, token, claimed);
  }
  std::string mechanism = security.mechanism;
  security.mechanism.clear();  // a new handshake comes before any re-authentication
  security.scram.reset();
  security.raw_sasl_tokens = false;
  if (!user) {
    step.error_code = pr::code(ErrorCode::kSaslAuthenticationFailed);
    step.error_message = failure;
    step.server_token.clear();
    probe().sasl_authentication_failures.add();
    spdlog::warn("authentication failed: user '{}' from {} on listener {} ({}): {}", claimed,
                 ctx.client_host, security.listener, mechanism,
                 mechanism == "OAUTHBEARER" ? failure : "invalid credentials");
    return step;
  }
  security.authenticated = true;
  security.principal = "User:" + *user;
  auto now = std::chrono::steady_clock::now();
  if (int64_t max_ms = authenticator.reauth_ms(security.listener, mechanism); max_ms > 0) {
    // As Kafka (KIP-368): the session ends with connections.max.reauth.ms or the credential,
    // whichever is sooner; without re-authentication a token's expiry is not enforced.
    int64_t lifetime = max_ms;
    if (credential_lifetime_ms >= 0) lifetime = std::min(lifetime, credential_lifetime_ms);
    security.session_expiry = now + std::chrono::milliseconds(lifetime);
    step.session_lifetime_ms = lifetime;
  }
  spdlog::debug("{} authenticated from {} on listener {}", security.principal, ctx.client_host,
                security.listener);
  return step;
}

void handle_sasl_authenticate(RequestContext& ctx, Reader& body, Writer& out) {
  int16_t v = ctx.header.api_version;
  pr::SaslAuthenticateRequest request;
  request.decode(body, v);
  auto step = authenticate_sasl_token(ctx, request.auth_bytes);
  pr::SaslAuthenticateResponse response;
  response.error_code = step.error_code;
  if (step.error_code != 0) {
    response.error_message = std::move(step.error_message);
    ctx.security->close_after_response = true;
  }
  response.auth_bytes = std::move(step.server_token);
  response.session_lifetime_ms = step.session_lifetime_ms;
  response.encode(out, v);
}

}  // namespace oxbow::broker
