// Time windows as Kafka's TimeWindows computes them, and windowed keys in the bytes Kafka's
// WindowedSerdes write (worked out here from their definitions: key bytes, then big-endian longs).
#include <gtest/gtest.h>

#include <limits>

#include "oxbow/streams/windows.h"

namespace oxbow::streams {
namespace {

using std::chrono::milliseconds;

TEST(Windows, TumblingWindowsHoldEachTimestampOnce) {
  auto w = TimeWindows::ofSizeWithNoGrace(milliseconds(5000));
  EXPECT_EQ(w.advance(), 5000);
  EXPECT_EQ(w.gracePeriodMs(), 0);
  EXPECT_EQ(w.windowsFor(0), (std::vector<Window>{{0, 5000}}));
  EXPECT_EQ(w.windowsFor(4999), (std::vector<Window>{{0, 5000}}));
  EXPECT_EQ(w.windowsFor(5000), (std::vector<Window>{{5000, 10000}}));
  EXPECT_EQ(w.windowsFor(12345), (std::vector<Window>{{10000, 15000}}));
}

TEST(Windows, HoppingWindowsOverlapAndNoneStartsBeforeZero) {
  auto w =
      TimeWindows::ofSizeAndGrace(milliseconds(10), milliseconds(3)).advanceBy(milliseconds(4));
  EXPECT_EQ(w.gracePeriodMs(), 3);
  EXPECT_EQ(w.windowsFor(21), (std::vector<Window>{{12, 22}, {16, 26}, {20, 30}}));
  EXPECT_EQ(w.windowsFor(24), (std::vector<Window>{{16, 26}, {20, 30}, {24, 34}}));
  EXPECT_EQ(w.windowsFor(5), (std::vector<Window>{{0, 10}, {4, 14}}));
  // Every window holding the timestamp, and only those: against a brute-force reference.
  for (int64_t ts = 0; ts < 200; ++ts) {
    std::vector<Window> expected;
    for (int64_t start = 0; start <= ts; start += 4)
      if (ts < start + 10) expected.push_back({start, start + 10});
    EXPECT_EQ(w.windowsFor(ts), expected) << ts;
  }
}

TEST(Windows, InvalidSizesAdvancesAndGraceAreRefused) {
  EXPECT_THROW(TimeWindows::ofSizeWithNoGrace(milliseconds(0)), std::invalid_argument);
  EXPECT_THROW(TimeWindows::ofSizeAndGrace(milliseconds(10), milliseconds(-1)),
               std::invalid_argument);
  auto w = TimeWindows::ofSizeWithNoGrace(milliseconds(10));
  EXPECT_THROW(w.advanceBy(milliseconds(0)), std::invalid_argument);
  EXPECT_THROW(w.advanceBy(milliseconds(11)), std::invalid_argument);
  EXPECT_NO_THROW(w.advanceBy(milliseconds(10)));
}

TEST(Windows, TimeWindowedKeysInKafkasBytes) {
  auto serde = serdes::TimeWindowed(serdes::String(), 5000);
  Windowed<std::string> key{"ab", {0x0102030405060708, 0x0102030405060708 + 5000}};
  std::string bytes = serde.serialize("t", key);
  EXPECT_EQ(bytes, std::string("ab\x01\x02\x03\x04\x05\x06\x07\x08", 10));
  EXPECT_EQ(serde.deserialize("t", bytes), key);
  // The end is the start plus the size, capped at the largest timestamp as Kafka's reader does.
  auto top = serde.deserialize("t", std::string("k\x7f\xff\xff\xff\xff\xff\xff\x00", 9));
  EXPECT_EQ(top.window.end, std::numeric_limits<int64_t>::max());
  EXPECT_THROW(serde.deserialize("t", "1234567"), SerializationException);
}

TEST(Windows, SessionWindowedKeysInKafkasBytes) {
  auto serde = serdes::SessionWindowed(serdes::Int32());
  Windowed<int32_t> key{7, {1000, 2500}};
  std::string bytes = serde.serialize("t", key);
  std::string expected("\0\0\0\x07", 4);
  expected += std::string("\0\0\0\0\0\0\x09\xc4", 8);  // end 2500
  expected += std::string("\0\0\0\0\0\0\x03\xe8", 8);  // start 1000
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(serde.deserialize("t", bytes), key);
  EXPECT_THROW(serde.deserialize("t", std::string(15, '\0')), SerializationException);
}

}  // namespace
}  // namespace oxbow::streams
