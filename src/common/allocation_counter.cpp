#include "common/allocation_counter.h"

#include <cstdlib>
#include <new>

namespace {

thread_local bool counting = false;
thread_local int64_t allocations = 0;

}  // namespace

// GCC pairs the replacements' malloc and free with the new and delete expressions it inlines them
// into, and warns of a mismatch that is not one.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace oxbow::testing {

void start_counting_allocations() {
  allocations = 0;
  counting = true;
}

int64_t stop_counting_allocations() {
  counting = false;
  return allocations;
}

}  // namespace oxbow::testing
