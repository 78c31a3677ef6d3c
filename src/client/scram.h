#pragma once
// SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka uses them: the arithmetic both
// sides share (salted passwords, keys, HMACs, base64, the message attributes) and the client's
// side of the exchange. The broker's side and its credential store are in broker/sasl/scram.h.
#include <cstdint>
#include <optional>
#include <string>

#include "common/base64.h"

namespace oxbow::client {

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
std::string hmac(ScramMechanism m, const std::string& key, const std::string& data);
std::string hash(ScramMechanism m, const std::string& data);
using oxbow::base64;
using oxbow::unbase64;
// The value of attribute `name` ("r" in "r=abc") among a message's comma-separated attributes.
std::optional<std::string> attribute(const std::string& message, char name);
// SCRAM user names escape ',' as =2C and '=' as =3D.
std::string escape_user(const std::string& name);
std::string unescape_user(const std::string& name);

// The client side: client-first, then client-final from server-first, then a check of
// server-final. nullopt / false when the server's message is not acceptable.
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

}  // namespace oxbow::client
