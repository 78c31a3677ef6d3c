#include "storage/log_manager.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "protocol/batch_builder.h"
#include "storage/partition_log.h"
#include "storage/test_dir.h"

namespace oxbow::storage {

TEST(LogManager, CleanShutdownMarkerDecidesRecovery) {
  testing::TempDir dir;
  std::string error;
  {
    LogManager manager({{dir.path()}});
    ASSERT_TRUE(manager.start(error)) << error;
    EXPECT_TRUE(manager.last_shutdown_clean());
    auto log = manager.open_log("my-topic", 3, LogConfig{}, error);
    ASSERT_TRUE(log);
    auto batch = protocol::build_batch({{"k", "v"}});
    log->append(batch, 0);
    manager.shutdown();
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/.oxbow_clean_shutdown"));
  {
    LogManager manager({{dir.path()}});
    ASSERT_TRUE(manager.start(error));
    EXPECT_TRUE(manager.last_shutdown_clean());
    auto found = manager.existing_partitions();
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].first, "my-topic");
    EXPECT_EQ(found[0].second, 3);
    auto log = manager.open_log("my-topic", 3, LogConfig{}, error);
    EXPECT_EQ(log->log_end_offset(), 1);
    // No shutdown(): the marker stays absent, as after a crash.
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/.oxbow_clean_shutdown"));
  }
}

TEST(LogManager, DeleteLogRemovesDirectory) {
  testing::TempDir dir;
  std::string error;
  LogManager manager({{dir.path()}});
  ASSERT_TRUE(manager.start(error));
  ASSERT_TRUE(manager.open_log("t", 0, LogConfig{}, error));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/t-0"));
  manager.delete_log("t", 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/t-0"));
  EXPECT_EQ(manager.get("t", 0), nullptr);
}

}  // namespace oxbow::storage
