#include "client/scram.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace oxbow::client {

namespace {

const EVP_MD* digest_of(ScramMechanism m) {
  return m == ScramMechanism::kSha256 ? EVP_sha256() : EVP_sha512();
}

}  // namespace

std::string hmac(ScramMechanism m, const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(digest_of(m), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<char*>(out), length);
}

std::string hash(ScramMechanism m, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, digest_of(m), nullptr);
  return std::string(reinterpret_cast<char*>(out), length);
}

// The value of attribute `name` ("r" in "r=abc") among comma-separated attributes.
std::optional<std::string> attribute(const std::string& message, char name) {
  size_t pos = 0;
  while (pos <= message.size()) {
    size_t end = message.find(',', pos);
    if (end == std::string::npos) end = message.size();
    if (end - pos >= 2 && message[pos] == name && message[pos + 1] == '=')
      return message.substr(pos + 2, end - pos - 2);
    pos = end + 1;
  }
  return std::nullopt;
}

// SCRAM user names escape ',' as =2C and '=' as =3D.
std::string unescape_user(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 3, "=2C") == 0) {
      out += ',';
      i += 2;
    } else if (name.compare(i, 3, "=3D") == 0) {
      out += '=';
      i += 2;
    } else {
      out += name[i];
    }
  }
  return out;
}

std::string escape_user(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

const char* scram_mechanism_name(ScramMechanism m) {
  switch (m) {
    case ScramMechanism::kSha256:
      return "SCRAM-SHA-256";
    case ScramMechanism::kSha512:
      return "SCRAM-SHA-512";
    default:
      return "UNKNOWN";
  }
}

ScramMechanism scram_mechanism_from_name(const std::string& name) {
  if (name == "SCRAM-SHA-256") return ScramMechanism::kSha256;
  if (name == "SCRAM-SHA-512") return ScramMechanism::kSha512;
  return ScramMechanism::kUnknown;
}

std::string scram_salted_password(ScramMechanism m, const std::string& password,
                                  const std::string& salt, int32_t iterations) {
  std::string out(static_cast<size_t>(EVP_MD_get_size(digest_of(m))), '\0');
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()),
                    static_cast<int>(salt.size()), iterations, digest_of(m),
                    static_cast<int>(out.size()), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

ScramCredential derive_scram_credential(ScramMechanism m, const std::string& salt,
                                        const std::string& salted_password, int32_t iterations) {
  ScramCredential c;
  c.iterations = iterations;
  c.salt = salt;
  c.stored_key = hash(m, hmac(m, salted_password, "Client Key"));
  c.server_key = hmac(m, salted_password, "Server Key");
  return c;
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n));
  return out;
}

ScramClientExchange::ScramClientExchange(ScramMechanism mechanism, std::string user,
                                         std::string password)
    : mechanism_(mechanism), user_(std::move(user)), password_(std::move(password)) {}

std::string ScramClientExchange::first() {
  nonce_ = base64(random_bytes(24));
  client_first_bare_ = "n=" + escape_user(user_) + ",r=" + nonce_;
  return "n,," + client_first_bare_;
}

std::optional<std::string> ScramClientExchange::final(const std::string& server_first) {
  auto nonce = attribute(server_first, 'r');
  auto salt_text = attribute(server_first, 's');
  auto iterations_text = attribute(server_first, 'i');
  if (!nonce || !nonce->starts_with(nonce_) || nonce->size() == nonce_.size() || !salt_text ||
      !iterations_text) {
    return std::nullopt;
  }
  auto salt = unbase64(*salt_text);
  // Kafka allows at most 16384 iterations; more would only let a rogue server burn our CPU.
  constexpr int32_t kMaxIterations = 16384;
  int32_t iterations = 0;
  for (char c : *iterations_text) {
    if (c < '0' || c > '9' || iterations > kMaxIterations) return std::nullopt;
    iterations = iterations * 10 + (c - '0');
  }
  if (!salt || iterations < 1 || iterations > kMaxIterations) return std::nullopt;
  std::string salted = scram_salted_password(mechanism_, password_, *salt, iterations);
  std::string client_key = hmac(mechanism_, salted, "Client Key");
  std::string without_proof = "c=biws,r=" + *nonce;
  std::string auth_message = client_first_bare_ + "," + server_first + "," + without_proof;
  std::string signature = hmac(mechanism_, hash(mechanism_, client_key), auth_message);
  std::string proof(client_key.size(), '\0');
  for (size_t i = 0; i < proof.size(); ++i)
    proof[i] = static_cast<char>(client_key[i] ^ signature[i]);
  expected_server_signature_ =
      hmac(mechanism_, hmac(mechanism_, salted, "Server Key"), auth_message);
  return without_proof + ",p=" + base64(proof);
}

bool ScramClientExchange::verify(const std::string& server_final) const {
  auto value = attribute(server_final, 'v');
  if (!value) return false;
  auto signature = unbase64(*value);
  return signature && !expected_server_signature_.empty() &&
         *signature == expected_server_signature_;
}

}  // namespace oxbow::client
