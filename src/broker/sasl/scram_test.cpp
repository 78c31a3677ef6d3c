#include "broker/sasl/scram.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "storage/test_dir.h"

namespace oxbow::broker {

namespace {

// The client side of RFC 5802, written from the RFC with OpenSSL, to check the server against.
std::string client_hmac(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string client_hash(const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string b64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string unb64(const std::string& text) {
  std::string out(text.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  out.resize(static_cast<size_t>(n));
  size_t pad =
      (text.size() >= 1 && text.back() == '=') + (text.size() >= 2 && text[text.size() - 2] == '=');
  out.resize(out.size() - pad);
  return out;
}

std::string field(const std::string& message, const std::string& name) {
  auto at = message.find(name + "=");
  auto end = message.find(',', at);
  return message.substr(at + name.size() + 1,
                        end == std::string::npos ? std::string::npos : end - at - name.size() - 1);
}

}  // namespace

TEST(Scram, ServerAcceptsTheRightPasswordOnly) {
  storage::testing::TempDir dir;
  ScramCredentialStore store(dir.path() + "/creds.json");
  std::string salt = "0123456789abcdef";
  auto salted = scram_salted_password(ScramMechanism::kSha256, "pencil", salt, 4096);
  std::string error;
  ASSERT_TRUE(store.update({{{"user", ScramMechanism::kSha256},
                             derive_scram_credential(ScramMechanism::kSha256, salt, salted, 4096)}},
                           error));
  for (std::string password : {"pencil", "pen"}) {
    ScramExchange exchange(ScramMechanism::kSha256, store);
    std::string user;
    std::string client_first_bare = "n=user,r=fyko+d2lbbFgONRv9qkxdawL";
    auto server_first = exchange.step("n,," + client_first_bare, user);
    ASSERT_TRUE(server_first);
    EXPECT_EQ(user, "user");
    std::string nonce = field(*server_first, "r");
    EXPECT_EQ(unb64(field(*server_first, "s")), salt);
    EXPECT_EQ(field(*server_first, "i"), "4096");
    std::string client_salted =
        scram_salted_password(ScramMechanism::kSha256, password, salt, 4096);
    std::string client_key = client_hmac(client_salted, "Client Key");
    std::string without_proof = "c=biws,r=" + nonce;
    std::string auth_message = client_first_bare + "," + *server_first + "," + without_proof;
    std::string signature = client_hmac(client_hash(client_key), auth_message);
    std::string proof(client_key.size(), '\0');
    for (size_t i = 0; i < proof.size(); ++i)
      proof[i] = static_cast<char>(client_key[i] ^ signature[i]);
    auto server_final = exchange.step(without_proof + ",p=" + b64(proof), user);
    if (password == "pencil") {
      ASSERT_TRUE(server_final);
      std::string server_key = client_hmac(client_salted, "Server Key");
      EXPECT_EQ(*server_final, "v=" + b64(client_hmac(server_key, auth_message)));
      EXPECT_TRUE(exchange.complete());
    } else {
      EXPECT_FALSE(server_final);
    }
  }
  ScramExchange unknown(ScramMechanism::kSha256, store);
  std::string user;
  EXPECT_FALSE(unknown.step("n,,n=nobody,r=abc", user));
}

TEST(Scram, ClientSideCompletesAnExchangeWithTheServerAndChecksItsSignature) {
  storage::testing::TempDir dir;
  ScramCredentialStore store(dir.path() + "/creds.json");
  std::string salt = "pepper-and-salt!";
  auto salted = scram_salted_password(ScramMechanism::kSha512, "secret", salt, 4096);
  std::string error;
  ASSERT_TRUE(store.update({{{"a,b=c", ScramMechanism::kSha512},
                             derive_scram_credential(ScramMechanism::kSha512, salt, salted, 4096)}},
                           error));
  for (std::string password : {"secret", "wrong"}) {
    ScramClientExchange client(ScramMechanism::kSha512, "a,b=c", password);
    ScramExchange server(ScramMechanism::kSha512, store);
    std::string user;
    auto server_first = server.step(client.first(), user);
    ASSERT_TRUE(server_first);
    EXPECT_EQ(user, "a,b=c");  // escaped on the wire, the same name on both sides
    auto client_final = client.final(*server_first);
    ASSERT_TRUE(client_final);
    auto server_final = server.step(*client_final, user);
    if (password == "secret") {
      ASSERT_TRUE(server_final);
      EXPECT_TRUE(client.verify(*server_final));
      EXPECT_FALSE(
          client.verify("v=" + b64(std::string(64, 'x'))));  // a server that does not know the key
    } else {
      EXPECT_FALSE(server_final);
    }
  }
  // A server nonce that does not extend the client's is refused.
  ScramClientExchange client(ScramMechanism::kSha512, "u", "p");
  client.first();
  EXPECT_FALSE(client.final("r=someone-elses-nonce,s=" + b64("salt") + ",i=4096"));
}

}  // namespace oxbow::broker
