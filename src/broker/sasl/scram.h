#pragma once
// SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka uses them: salted credentials per
// user and mechanism, never the password, and the server side of the exchange (the arithmetic
// both sides share is in client/scram.h).
//
// Credentials persist in `<first log dir>/oxbow-scram-credentials.json`:
//   {"<user>": {"SCRAM-SHA-512": {"iterations": 8192, "salt": "<base64>",
//                                 "stored_key": "<base64>", "server_key": "<base64>"}}}
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/scram.h"

namespace oxbow::broker {

using client::derive_scram_credential;
using client::random_bytes;
using client::scram_mechanism_from_name;
using client::scram_mechanism_name;
using client::scram_salted_password;
using client::ScramClientExchange;
using client::ScramCredential;
using client::ScramMechanism;
using client::unbase64;

class ScramCredentialStore {
 public:
  explicit ScramCredentialStore(std::string path) : path_(std::move(path)) {}
  bool load(std::string& error);
  std::optional<ScramCredential> find(const std::string& user, ScramMechanism m) const;
  // user -> mechanism -> credential
  std::map<std::string, std::map<ScramMechanism, ScramCredential>> all() const;
  bool contains(const std::string& user, ScramMechanism m) const;
  // Applies changes and persists them; false with `error` when the file cannot be written.
  bool update(const std::map<std::pair<std::string, ScramMechanism>,
                             std::optional<ScramCredential>>& changes,
              std::string& error);

 private:
  std::string path_;
  mutable std::mutex mutex_;
  std::map<std::string, std::map<ScramMechanism, ScramCredential>> users_;
};

// One connection's SCRAM exchange: client-first -> server-first, client-final -> server-final.
class ScramExchange {
 public:
  ScramExchange(ScramMechanism mechanism, const ScramCredentialStore& store)
      : mechanism_(mechanism), store_(store) {}
  // The server's answer to the client's next message; nullopt when authentication fails
  // (`user` is set as soon as it is known, for the audit line).
  std::optional<std::string> step(const std::string& client_message, std::string& user);
  bool complete() const { return state_ == State::kComplete; }

 private:
  enum class State { kFirst, kFinal, kComplete, kFailed };
  ScramMechanism mechanism_;
  const ScramCredentialStore& store_;
  State state_ = State::kFirst;
  std::string user_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;
  ScramCredential credential_;
};

}  // namespace oxbow::broker
