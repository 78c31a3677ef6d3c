// libFuzzer target: an OAUTHBEARER client's initial response, as the broker gets it before any
// authentication. Parsing must never crash or hang, and a token is accepted only when it really
// is an unsecured JWS whose claims name a principal and an expiry still ahead.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "broker/sasl/oauth_bearer.h"

using namespace oxbow::broker;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  OAuthBearerOptions options;
  options.required_scope = {"read"};
  options.allowable_clock_skew_ms = 1000;
  auto result = check_oauth_bearer(std::span(data, size), options, 1'800'000'000'000);
  if (result.principal && (result.principal->empty() || result.expires_at_ms <= 1'799'999'000'000))
    std::abort();
  if (!result.principal && result.error.empty()) std::abort();
  return 0;
}
