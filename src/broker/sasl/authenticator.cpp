#include "broker/sasl/authenticator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "common/properties.h"

namespace oxbow::broker {

namespace {

constexpr int16_t kSaslHandshake = 17;
constexpr int16_t kApiVersions = 18;
constexpr int16_t kSaslAuthenticate = 36;

// Compares without stopping at the first difference, so timing does not reveal a prefix.
bool equal_in_constant_time(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
  return diff == 0;
}

}  // namespace

bool SecurityState::admits(int16_t api_key, std::chrono::steady_clock::time_point now) const {
  if (!needs_sasl()) return true;
  if (api_key == kApiVersions || api_key == kSaslHandshake || api_key == kSaslAuthenticate)
    return true;
  return authenticated && now < session_expiry;
}

std::map<std::string, std::string> parse_plain_jaas_users(const std::string& jaas) {
  std::map<std::string, std::string> users;
  size_t pos = 0;
  while ((pos = jaas.find("user_", pos)) != std::string::npos) {
    // Only at the start of an option, not inside a value.
    if (pos > 0 && !std::isspace(static_cast<unsigned char>(jaas[pos - 1]))) {
      pos += 5;
      continue;
    }
    size_t eq = jaas.find('=', pos);
    if (eq == std::string::npos || eq + 1 >= jaas.size() || jaas[eq + 1] != '"') break;
    std::string name = jaas.substr(pos + 5, eq - pos - 5);
    std::string password;
    size_t i = eq + 2;
    for (; i < jaas.size() && jaas[i] != '"'; ++i) {
      if (jaas[i] == '\\' && i + 1 < jaas.size()) ++i;
      password += jaas[i];
    }
    if (!name.empty()) users[name] = password;
    pos = i;
  }
  return users;
}

namespace {

// The mechanisms `key` lists, or `fallback` when it is not set.
std::vector<std::string> split_mechanisms(const BrokerConfig& config, const std::string& key,
                                          const std::vector<std::string>& fallback) {
  auto value = config.value_of(key);
  if (!value) return fallback;
  std::vector<std::string> out;
  for (auto& m : split(*value, ','))
    if (!m.empty()) out.push_back(m);
  return out;
}

int64_t listener_reauth_ms(const BrokerConfig& config, const std::string& prefix,
                           const std::string& mechanism, int64_t fallback) {
  for (const auto& key : {prefix + "." + ascii_lower(mechanism) + ".connections.max.reauth.ms",
                          prefix + ".connections.max.reauth.ms"}) {
    if (auto it = config.given.find(key); it != config.given.end())
      return parse_int64(it->second).value_or(fallback);
  }
  return fallback;
}

}  // namespace

Authenticator::Authenticator(const BrokerConfig& config) {
  mechanisms_ = split_mechanisms(config, "sasl.enabled.mechanisms", {"PLAIN"});
  reauth_ms_ = parse_int64(config.value_of("connections.max.reauth.ms").value_or("0")).value_or(0);
  bool oauth_bearer = false;
  for (const auto& listener : config.listeners) {
    if (listener.security_protocol != "SASL_PLAINTEXT" && listener.security_protocol != "SASL_SSL")
      continue;
    auto prefix = "listener.name." + ascii_lower(listener.name);
    auto& sasl = listeners_[listener.name];
    sasl.mechanisms = split_mechanisms(config, prefix + ".sasl.enabled.mechanisms", mechanisms_);
    for (const auto& mechanism : sasl.mechanisms) {
      sasl.reauth_ms[mechanism] = listener_reauth_ms(config, prefix, mechanism, reauth_ms_);
    }
    auto enabled = [&](const char* m) {
      return std::find(sasl.mechanisms.begin(), sasl.mechanisms.end(), m) != sasl.mechanisms.end();
    };
    oauth_bearer = oauth_bearer || enabled("OAUTHBEARER");
    if (auto oauth = config.given.find(prefix + ".oauthbearer.sasl.jaas.config");
        oauth != config.given.end()) {
      oauth_bearer_[listener.name] = parse_oauth_bearer_jaas(oauth->second);
    }
    auto key = prefix + ".plain.sasl.jaas.config";
    auto it = config.given.find(key);
    if (it == config.given.end()) {
      if (enabled("PLAIN")) {
        spdlog::warn("listener {}: no {}: PLAIN authentication will refuse everyone", listener.name,
                     key);
      }
      continue;
    }
    plain_users_[listener.name] = parse_plain_jaas_users(it->second);
  }
  if (oauth_bearer) {
    spdlog::warn(
        "OAUTHBEARER takes unsecured tokens (\"alg\":\"none\", no signature), as Kafka's default "
        "validator: for development and tests, not for production");
  }
}

const std::vector<std::string>& Authenticator::mechanisms(const std::string& listener) const {
  auto it = listeners_.find(listener);
  return it == listeners_.end() ? mechanisms_ : it->second.mechanisms;
}

int64_t Authenticator::reauth_ms(const std::string& listener, const std::string& mechanism) const {
  auto it = listeners_.find(listener);
  if (it == listeners_.end()) return reauth_ms_;
  auto found = it->second.reauth_ms.find(mechanism);
  return found == it->second.reauth_ms.end() ? reauth_ms_ : found->second;
}

const OAuthBearerOptions& Authenticator::oauth_bearer_options(const std::string& listener) const {
  auto it = oauth_bearer_.find(listener);
  return it == oauth_bearer_.end() ? oauth_bearer_defaults_ : it->second;
}

std::optional<std::string> Authenticator::check_plain(const std::string& listener,
                                                      std::span<const uint8_t> token,
                                                      std::string& claimed_user) const {
  std::string text(token.begin(), token.end());
  auto first = text.find('\0');
  auto second = first == std::string::npos ? std::string::npos : text.find('\0', first + 1);
  if (second == std::string::npos) return std::nullopt;
  std::string authzid = text.substr(0, first);
  claimed_user = text.substr(first + 1, second - first - 1);
  std::string password = text.substr(second + 1);
  if (!authzid.empty() && authzid != claimed_user) return std::nullopt;
  auto users = plain_users_.find(listener);
  if (users == plain_users_.end()) return std::nullopt;
  auto user = users->second.find(claimed_user);
  if (user == users->second.end()) {
    equal_in_constant_time(password, password);  // as long as a known user's check
    return std::nullopt;
  }
  if (!equal_in_constant_time(password, user->second)) return std::nullopt;
  return claimed_user;
}

}  // namespace oxbow::broker
