#pragma once
// For tests: counts the calls of the global operator new a thread makes between start and stop.
// Linking the library (oxbow_allocation_counter) replaces operator new for the whole binary, so
// only test binaries link it.
#include <cstdint>

namespace oxbow::testing {

void start_counting_allocations();
// The allocations since start_counting_allocations(), on this thread.
int64_t stop_counting_allocations();

}  // namespace oxbow::testing
