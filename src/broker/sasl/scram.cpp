#include "broker/sasl/scram.h"

#include <nlohmann/json.hpp>

#include "storage/file.h"

namespace oxbow::broker {

using client::attribute;
using client::base64;
using client::hash;
using client::hmac;
using client::unescape_user;

bool ScramCredentialStore::load(std::string& error) {
  std::string text;
  if (!storage::read_whole_file(path_, text)) return true;
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    error = path_ + ": not valid JSON";
    return false;
  }
  std::lock_guard lock(mutex_);
  for (const auto& [user, mechanisms] : doc.items()) {
    for (const auto& [name, c] : mechanisms.items()) {
      auto m = scram_mechanism_from_name(name);
      auto salt = unbase64(c.value("salt", ""));
      auto stored = unbase64(c.value("stored_key", ""));
      auto server = unbase64(c.value("server_key", ""));
      if (m == ScramMechanism::kUnknown || !salt || !stored || !server) continue;
      users_[user][m] = {c.value("iterations", 0), *salt, *stored, *server};
    }
  }
  return true;
}

std::optional<ScramCredential> ScramCredentialStore::find(const std::string& user,
                                                          ScramMechanism m) const {
  std::lock_guard lock(mutex_);
  auto u = users_.find(user);
  if (u == users_.end()) return std::nullopt;
  auto c = u->second.find(m);
  if (c == u->second.end()) return std::nullopt;
  return c->second;
}

bool ScramCredentialStore::contains(const std::string& user, ScramMechanism m) const {
  return find(user, m).has_value();
}

std::map<std::string, std::map<ScramMechanism, ScramCredential>> ScramCredentialStore::all() const {
  std::lock_guard lock(mutex_);
  return users_;
}

bool ScramCredentialStore::update(
    const std::map<std::pair<std::string, ScramMechanism>, std::optional<ScramCredential>>& changes,
    std::string& error) {
  std::lock_guard lock(mutex_);
  auto next = users_;
  for (const auto& [key, credential] : changes) {
    if (credential) {
      next[key.first][key.second] = *credential;
    } else if (auto u = next.find(key.first); u != next.end()) {
      u->second.erase(key.second);
      if (u->second.empty()) next.erase(u);
    }
  }
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [user, mechanisms] : next) {
    for (const auto& [m, c] : mechanisms) {
      doc[user][scram_mechanism_name(m)] = {{"iterations", c.iterations},
                                            {"salt", base64(c.salt)},
                                            {"stored_key", base64(c.stored_key)},
                                            {"server_key", base64(c.server_key)}};
    }
  }
  if (!storage::write_file_atomically(path_, doc.dump(2) + "\n", error)) return false;
  users_ = std::move(next);
  return true;
}

std::optional<std::string> ScramExchange::step(const std::string& client_message,
                                               std::string& user) {
  if (state_ == State::kFirst) {
    state_ = State::kFailed;
    // gs2 header "n,," or "n,a=<authzid>,": no channel binding.
    if (client_message.size() < 3 || client_message[0] != 'n' || client_message[1] != ',')
      return std::nullopt;
    size_t bare = client_message.find(',', 2);
    if (bare == std::string::npos) return std::nullopt;
    client_first_bare_ = client_message.substr(bare + 1);
    auto name = attribute(client_first_bare_, 'n');
    auto client_nonce = attribute(client_first_bare_, 'r');
    if (!name || !client_nonce || client_nonce->empty()) return std::nullopt;
    user_ = user = unescape_user(*name);
    auto credential = store_.find(user_, mechanism_);
    if (!credential) return std::nullopt;
    credential_ = *credential;
    nonce_ = *client_nonce + base64(random_bytes(18));
    server_first_ = "r=" + nonce_ + ",s=" + base64(credential_.salt) +
                    ",i=" + std::to_string(credential_.iterations);
    state_ = State::kFinal;
    return server_first_;
  }
  if (state_ != State::kFinal) return std::nullopt;
  state_ = State::kFailed;
  user = user_;
  auto nonce = attribute(client_message, 'r');
  auto proof_text = attribute(client_message, 'p');
  size_t proof_at = client_message.rfind(",p=");
  // As Kafka does, the nonce need only end with ours: librdkafka sends its own nonce again in
  // front.
  if (!nonce || !nonce->ends_with(nonce_) || !proof_text || proof_at == std::string::npos)
    return std::nullopt;
  auto proof = unbase64(*proof_text);
  std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + client_message.substr(0, proof_at);
  std::string client_signature = hmac(mechanism_, credential_.stored_key, auth_message);
  if (!proof || proof->size() != client_signature.size()) return std::nullopt;
  std::string client_key(proof->size(), '\0');
  for (size_t i = 0; i < client_key.size(); ++i)
    client_key[i] = static_cast<char>((*proof)[i] ^ client_signature[i]);
  if (hash(mechanism_, client_key) != credential_.stored_key) return std::nullopt;
  state_ = State::kComplete;
  return "v=" + base64(hmac(mechanism_, credential_.server_key, auth_message));
}

}  // namespace oxbow::broker
