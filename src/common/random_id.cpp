#include "common/random_id.h"

#include <random>

namespace oxbow {

std::string random_base64_id() {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id;
  for (int i = 0; i < 22; ++i) id += kAlphabet[rng() % 64];
  return id;
}

}  // namespace oxbow
