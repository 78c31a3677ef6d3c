#pragma once
// SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka uses them: salted credentials per
// user and mechanism, never the password, and the server side of the exchange.
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

namespace oxbow::broker {

// Kafka's mechanism numbering in the SCRAM credential APIs.
enum class ScramMechanism : int8_t { kUnknown = 0, kSha256 = 1, kSha512 = 2 };

const char* scram_mechanism_name(ScramMechanism m);
ScramMechanism scram_mechanism_from_name(const std::string& name);

struct ScramCredential {
  int32_t iterations = 0;
  std::string salt;
  std::string stored_key;
  std::string server_key;
};

// Derives the stored credential from a salted password (what AlterUserScramCredentials sends).
ScramCredential derive_scram_credential(ScramMechanism m, const std::string& salt,
                                        const std::string& salted_password, int32_t iterations);
// Hi(password, salt, iterations) of RFC 5802 (PBKDF2 with the mechanism's HMAC).
std::string scram_salted_password(ScramMechanism m, const std::string& password,
                                  const std::string& salt, int32_t iterations);
std::string random_bytes(size_t n);
// Base64 (RFC 4648, padded) decoding; nullopt when malformed.
std::optional<std::string> unbase64(const std::string& text);

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

// The client side, for Oxbow's own tools: client-first, then client-final from server-first, then
// a check of server-final. nullopt / false when the server's message is not acceptable.
class ScramClientExchange {
 public:
  ScramClientExchange(ScramMechanism mechanism, std::string user, std::string password);
  std::string first();
  std::optional<std::string> final(const std::string& server_first);
  bool verify(const std::string& server_final) const;

 private:
  ScramMechanism mechanism_;
  std::string user_;
  std::string password_;
  std::string nonce_;
  std::string client_first_bare_;
  std::string expected_server_signature_;
};

}  // namespace oxbow::broker
