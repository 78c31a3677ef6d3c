// libFuzzer target: the SCRAM messages a client sends (client-first and client-final, split at
// the first 0xFF byte) against a store holding no user; the exchange must never crash or hang,
// and random bytes must never authenticate. The same bytes also play a server to Oxbow's own
// client side: server-first (after the client's nonce, which the fuzzer cannot guess) and
// server-final, which must never verify.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "broker/sasl/scram.h"

using namespace oxbow::broker;

namespace {

ScramCredentialStore& store() {
  static ScramCredentialStore* instance = [] {
    auto* s = new ScramCredentialStore("/dev/null/none");  // never written: update() is not called
    return s;
  }();
  return *instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  auto split = input.find('\xff');
  std::string first = input.substr(0, split);
  std::string final_message = split == std::string::npos ? "" : input.substr(split + 1);
  for (auto mechanism : {ScramMechanism::kSha256, ScramMechanism::kSha512}) {
    ScramExchange exchange(mechanism, store());
    std::string user;
    if (!exchange.step(first, user)) continue;
    exchange.step(final_message, user);
    if (exchange.complete()) std::abort();  // no user exists: nothing may authenticate
  }
  ScramClientExchange client(ScramMechanism::kSha256, "user", "password");
  std::string client_first = client.first();
  std::string nonce = client_first.substr(client_first.find("r=") + 2);
  if (client.final("r=" + nonce + first) && client.verify(final_message)) std::abort();
  return 0;
}
