#pragma once
// What the record-path tests share: heap allocations per record of a topology in the test driver,
// counted once warm (common's allocation counter replaces operator new in sql_tests).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/allocation_counter.h"
#include "oxbow/streams/test_driver.h"

namespace oxbow::sql {

struct Traffic {
  std::string in, out;
  std::string key, value;  // short enough for std::string's inline buffer: the driver's copies
                           // of them cost nothing, so what is counted is the path's own
};

// Allocations per record once warm: each record piped in and its one result read back.
inline double allocations_per_record(streams::TopologyTestDriver& driver, const Traffic& t,
                                     int records = 2000) {
  auto one = [&](int64_t ts) {
    driver.pipe(t.in, t.key, t.value, ts);
    auto r = driver.read(t.out);
    EXPECT_TRUE(r.has_value());
  };
  for (int i = 0; i < 200; ++i) one(i);
  oxbow::testing::start_counting_allocations();
  for (int i = 0; i < records; ++i) one(1000 + i);
  return static_cast<double>(oxbow::testing::stop_counting_allocations()) / records;
}

}  // namespace oxbow::sql
