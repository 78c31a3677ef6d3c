#include "storage/segment.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/file.h"
#include "storage/test_dir.h"

namespace oxbow::storage {

namespace pr = oxbow::protocol;
using pr::build_batch;

namespace {

// Appends `count` batches of two records each, offsets from the segment's next offset.
std::vector<uint64_t> append_batches(Segment& s, int count, int64_t base_ts = 1000) {
  std::vector<uint64_t> positions;
  for (int i = 0; i < count; ++i) {
    auto batch =
        build_batch({{"k", std::string(100, 'a' + i % 26), 0}, {"k2", "v", 1}}, base_ts + i * 10);
    pr::assign_offsets(batch, s.next_offset(), 0, -1);
    positions.push_back(s.size());
    EXPECT_TRUE(s.append(batch.data(), batch.size(), s.next_offset() + 1, base_ts + i * 10 + 1));
  }
  return positions;
}

uint64_t log_size(const std::string& dir) {
  return std::filesystem::file_size(dir + "/" + Segment::file_name(0, ".log"));
}

}  // namespace

TEST(Segment, FileNamesAreTwentyDigits) {
  EXPECT_EQ(Segment::file_name(42, ".log"), "00000000000000000042.log");
}

TEST(Segment, PositionOfFindsContainingBatch) {
  testing::TempDir dir;
  std::string error;
  auto s = Segment::create(dir.path(), 100, 256, error);
  ASSERT_TRUE(s) << error;
  auto positions = append_batches(*s, 50);
  EXPECT_EQ(s->next_offset(), 200);
  EXPECT_EQ(s->position_of(100), positions[0]);
  EXPECT_EQ(s->position_of(101), positions[0]);
  EXPECT_EQ(s->position_of(102), positions[1]);
  EXPECT_EQ(s->position_of(199), positions[49]);
  EXPECT_EQ(s->position_of(200), s->size());
}

TEST(Segment, LastBoundaryBeforeEndsOnAWholeBatch) {
  testing::TempDir dir;
  std::string error;
  auto s = Segment::create(dir.path(), 0, 256, error);  // index entries every few batches
  ASSERT_TRUE(s) << error;
  auto positions = append_batches(*s, 50);
  positions.push_back(s->size());
  for (size_t from : {size_t{0}, size_t{7}}) {
    for (size_t last = from + 1; last <= 50; last += 3) {
      // Anywhere inside batch `last` (or exactly at its start), the read stops at its start.
      EXPECT_EQ(s->last_boundary_before(positions[from], positions[last] + 5), positions[last])
          << from << " " << last;
      EXPECT_EQ(s->last_boundary_before(positions[from], positions[last]), positions[last]);
    }
    // Not even the first batch fits: the start itself.
    EXPECT_EQ(s->last_boundary_before(positions[from], positions[from] + 10), positions[from]);
  }
  s->seal();  // the same from the sealed index
  EXPECT_EQ(s->last_boundary_before(positions[3], positions[40] - 1), positions[39]);
}

TEST(Segment, ReopenAfterCleanCloseFindsTail) {
  testing::TempDir dir;
  std::string error;
  uint64_t size;
  {
    auto s = Segment::create(dir.path(), 0, 256, error);
    append_batches(*s, 30);
    size = s->size();
    s->seal();  // as a clean shutdown does
  }
  auto s = Segment::existing(dir.path(), 0, log_size(dir.path()), 256);
  ASSERT_TRUE(s);
  s->load_tail();
  EXPECT_EQ(s->next_offset(), 60);
  EXPECT_EQ(s->size(), size);
  EXPECT_EQ(s->max_timestamp(), 1000 + 29 * 10 + 1);
}

TEST(Segment, RecoverTruncatesTornTail) {
  testing::TempDir dir;
  std::string error;
  uint64_t good_size;
  {
    auto s = Segment::create(dir.path(), 0, 256, error);
    append_batches(*s, 10);
    good_size = s->size();
  }
  // A torn write: half a batch at the end.
  {
    auto batch = build_batch({{"k", "partial"}});
    File f = File::open(dir.path() + "/" + Segment::file_name(0, ".log"), false, error);
    f.write_at(batch.data(), batch.size() / 2, good_size);
  }
  auto s = Segment::existing(dir.path(), 0, log_size(dir.path()), 256);
  EXPECT_EQ(s->recover(), build_batch({{"k", "partial"}}).size() / 2);
  EXPECT_EQ(s->size(), good_size);
  EXPECT_EQ(s->next_offset(), 20);
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/" + Segment::file_name(0, ".log")),
            good_size);
}

TEST(Segment, RecoverStopsAtCorruptBatch) {
  testing::TempDir dir;
  std::string error;
  std::vector<uint64_t> positions;
  {
    auto s = Segment::create(dir.path(), 0, 256, error);
    positions = append_batches(*s, 10);
  }
  {
    File f = File::open(dir.path() + "/" + Segment::file_name(0, ".log"), false, error);
    uint8_t garbage = 0x5a;
    f.write_at(&garbage, 1, positions[6] + 70);  // inside batch 6's records
  }
  auto s = Segment::existing(dir.path(), 0, log_size(dir.path()), 256);
  s->recover();
  EXPECT_EQ(s->size(), positions[6]);
  EXPECT_EQ(s->next_offset(), 12);
}

TEST(Segment, CorruptIndexIsRebuilt) {
  testing::TempDir dir;
  std::string error;
  std::vector<uint64_t> positions;
  {
    auto s = Segment::create(dir.path(), 0, 256, error);
    positions = append_batches(*s, 40);
    s->seal();
  }
  {
    File f = File::open(dir.path() + "/" + Segment::file_name(0, ".index"), false, error);
    f.truncate(13);  // not a whole number of entries
  }
  auto s = Segment::existing(dir.path(), 0, log_size(dir.path()), 256);
  s->load_tail();
  EXPECT_EQ(s->next_offset(), 80);
  EXPECT_EQ(s->position_of(51), positions[25]);
  s->seal();
  auto rebuilt = std::filesystem::file_size(dir.path() + "/" + Segment::file_name(0, ".index"));
  EXPECT_GT(rebuilt, 13u);
  EXPECT_EQ(rebuilt % 8, 0u);
}

TEST(Segment, OffsetForTimestampFindsRecord) {
  testing::TempDir dir;
  std::string error;
  auto s = Segment::create(dir.path(), 0, 128, error);
  append_batches(*s, 20, 1000);  // batch i: records at 1000+10i and 1000+10i+1
  EXPECT_EQ(s->offset_for_timestamp(0)->offset, 0);
  EXPECT_EQ(s->offset_for_timestamp(1051)->offset, 11);
  EXPECT_EQ(s->offset_for_timestamp(1051)->timestamp, 1051);
  auto next = s->offset_for_timestamp(1052);
  EXPECT_EQ(next->offset, 12);
  EXPECT_EQ(next->timestamp, 1060);  // the found record's own timestamp
  EXPECT_EQ(s->offset_for_timestamp(5000), std::nullopt);
  auto largest = s->largest_timestamp_record();
  ASSERT_TRUE(largest);
  EXPECT_EQ(largest->offset, 39);
  EXPECT_EQ(largest->timestamp, 1000 + 19 * 10 + 1);
}

TEST(Segment, SealedTimeIndexEndsWithLargestTimestamp) {
  testing::TempDir dir;
  std::string error;
  {
    auto s = Segment::create(dir.path(), 0, 100000, error);  // sparse: only the first batch indexed
    append_batches(*s, 10, 1000);
    s->seal();
  }
  auto s = Segment::existing(dir.path(), 0, log_size(dir.path()), 100000);
  EXPECT_EQ(s->max_timestamp(), 1000 + 9 * 10 + 1);
  EXPECT_EQ(s->offset_for_timestamp(1091)->offset, 19);
}

}  // namespace oxbow::storage
