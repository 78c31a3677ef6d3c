#pragma once
#include <chrono>
#include <cstdint>

namespace oxbow {

// Wall-clock milliseconds since the epoch: Kafka's timestamps.
inline int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Milliseconds of the steady clock: for rates and timeouts, which must not jump with the wall
// clock.
inline int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace oxbow
