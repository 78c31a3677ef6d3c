#include "broker/sasl/oauth_bearer.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "broker/sasl/scram.h"
#include "common/properties.h"

namespace oxbow::broker {

namespace {

using nlohmann::json;

// The value of option `name` ("name=\"value\"") in a JAAS configuration, if given.
std::optional<std::string> jaas_option(const std::string& jaas, const std::string& name) {
  for (size_t pos = jaas.find(name); pos != std::string::npos; pos = jaas.find(name, pos + 1)) {
    bool starts = pos == 0 || std::isspace(static_cast<unsigned char>(jaas[pos - 1]));
    size_t eq = pos + name.size();
    if (!starts || eq + 1 >= jaas.size() || jaas[eq] != '=' || jaas[eq + 1] != '"') continue;
    size_t end = jaas.find('"', eq + 2);
    if (end == std::string::npos) return std::nullopt;
    return jaas.substr(eq + 2, end - eq - 2);
  }
  return std::nullopt;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  for (auto& w : split(text, ' ')) {
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

// Base64url without padding (RFC 7515's encoding of a JWS part), decoded.
std::optional<std::string> unbase64url(std::string text) {
  for (char& c : text) {
    if (c == '+' || c == '/' || c == '=') return std::nullopt;  // not the URL-safe alphabet
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  if (text.size() % 4 == 1) return std::nullopt;
  text.append((4 - text.size() % 4) % 4, '=');
  return unbase64(text);
}

std::optional<json> json_object(const std::string& part) {
  auto text = unbase64url(part);
  if (!text) return std::nullopt;
  auto parsed = json::parse(*text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

// The token of the "auth" key ("Bearer <token>") in a client's initial response.
std::optional<std::string> bearer_token(std::span<const uint8_t> bytes, std::string& authzid,
                                        std::string& error) {
  std::string text(bytes.begin(), bytes.end());
  if (text.rfind("n,", 0) != 0) {
    error = "the initial response does not start with the GS2 header \"n,\"";
    return std::nullopt;
  }
  size_t comma = text.find(',', 2);
  if (comma == std::string::npos) {
    error = "the GS2 header has no closing comma";
    return std::nullopt;
  }
  std::string gs2_authzid = text.substr(2, comma - 2);
  if (!gs2_authzid.empty() && gs2_authzid.rfind("a=", 0) != 0) {
    error = "the GS2 header's authorization id is malformed";
    return std::nullopt;
  }
  authzid = gs2_authzid.empty() ? "" : gs2_authzid.substr(2);
  if (text.size() < comma + 4 || text[comma + 1] != '\x01' || !text.ends_with("\x01\x01")) {
    error = "the key-value pairs are not framed by 0x01 separators";
    return std::nullopt;
  }
  std::optional<std::string> token;
  for (auto& pair : split(text.substr(comma + 2, text.size() - comma - 4), '\x01')) {
    if (pair.rfind("auth=", 0) != 0) continue;  // extensions: accepted and ignored, as Kafka's
    auto value = pair.substr(5);
    size_t space = value.find(' ');
    std::string scheme = value.substr(0, space);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(), ::tolower);
    if (space == std::string::npos || scheme != "bearer") {
      error = "the auth value is not \"Bearer <token>\"";
      return std::nullopt;
    }
    size_t start = value.find_first_not_of(' ', space);
    if (start == std::string::npos) {
      error = "the auth value has no token";
      return std::nullopt;
    }
    token = value.substr(start);
  }
  if (!token) error = "the initial response has no auth key";
  return token;
}

// A NumericDate (seconds since the epoch, possibly fractional) in milliseconds, held within
// +-2^53 ms so that no claim, however large, overflows the arithmetic.
int64_t numeric_date_ms(const json& claim) {
  constexpr double kLimitMs = 9007199254740992.0;
  double ms = claim.get<double>() * 1000;
  return static_cast<int64_t>(std::clamp(ms, -kLimitMs, kLimitMs));
}

bool has_scope(const json& claim, const std::string& wanted) {
  if (claim.is_string()) {
    auto scope = words(claim.get<std::string>());
    return std::find(scope.begin(), scope.end(), wanted) != scope.end();
  }
  if (!claim.is_array()) return false;
  return std::any_of(claim.begin(), claim.end(), [&](const json& s) {
    return s.is_string() && s.get<std::string>() == wanted;
  });
}

// Checks the claims of an unsecured token; the principal and expiry on success.
void check_claims(const json& claims, const OAuthBearerOptions& options, int64_t now_ms,
                  OAuthBearerResult& result) {
  auto principal = claims.find(options.principal_claim);
  if (principal == claims.end() || !principal->is_string() ||
      principal->get<std::string>().empty()) {
    result.error = "the token has no string claim '" + options.principal_claim + "'";
    return;
  }
  auto exp = claims.find("exp");
  if (exp == claims.end() || !exp->is_number()) {
    result.error = "the token has no numeric claim 'exp'";
    return;
  }
  auto expires_ms = numeric_date_ms(*exp);
  if (now_ms - options.allowable_clock_skew_ms >= expires_ms) {
    result.error = "the token expired at " + std::to_string(expires_ms) + " ms";
    return;
  }
  if (auto iat = claims.find("iat"); iat != claims.end()) {
    if (!iat->is_number()) {
      result.error = "the token's claim 'iat' is not a number";
      return;
    }
    auto issued_ms = numeric_date_ms(*iat);
    if (issued_ms > now_ms + options.allowable_clock_skew_ms || issued_ms >= expires_ms) {
      result.error = "the token's claim 'iat' is in the future or not before 'exp'";
      return;
    }
  }
  auto scope = claims.find(options.scope_claim);
  for (const auto& wanted : options.required_scope) {
    if (scope == claims.end() || !has_scope(*scope, wanted)) {
      result.error = "the token's scope lacks '" + wanted + "'";
      return;
    }
  }
  result.principal = principal->get<std::string>();
  result.expires_at_ms = expires_ms;
}

}  // namespace

OAuthBearerOptions parse_oauth_bearer_jaas(const std::string& jaas) {
  OAuthBearerOptions options;
  if (auto v = jaas_option(jaas, "unsecuredValidatorPrincipalClaimName"); v && !v->empty())
    options.principal_claim = *v;
  if (auto v = jaas_option(jaas, "unsecuredValidatorScopeClaimName"); v && !v->empty())
    options.scope_claim = *v;
  if (auto v = jaas_option(jaas, "unsecuredValidatorRequiredScope"))
    options.required_scope = words(*v);
  if (auto v = jaas_option(jaas, "unsecuredValidatorAllowableClockSkewMs"))
    options.allowable_clock_skew_ms = std::max<int64_t>(0, parse_int64(*v).value_or(0));
  return options;
}

OAuthBearerResult check_oauth_bearer(std::span<const uint8_t> client_first,
                                     const OAuthBearerOptions& options, int64_t now_ms) {
  OAuthBearerResult result;
  std::string authzid;
  auto token = bearer_token(client_first, authzid, result.error);
  if (!token) return result;
  auto parts = split(*token, '.');
  if (parts.size() != 3 || !parts[2].empty()) {
    result.error = "the token is not an unsecured JWS (header.claims. with no signature)";
    return result;
  }
  auto header = json_object(parts[0]);
  auto claims = json_object(parts[1]);
  if (!header || !claims) {
    result.error = "the token's header or claims are not base64url-encoded JSON objects";
    return result;
  }
  if (header->value("alg", "") != "none") {
    result.error = "the token's header does not say \"alg\":\"none\"";
    return result;
  }
  check_claims(*claims, options, now_ms, result);
  if (result.principal && !authzid.empty() && authzid != *result.principal) {
    result.principal.reset();
    result.error = "the authorization id '" + authzid + "' is not the token's principal";
  }
  return result;
}

}  // namespace oxbow::broker
