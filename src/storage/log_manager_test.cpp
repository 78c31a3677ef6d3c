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

TEST(LogManager, OpenLogsRecoversEveryDirsPartitionsOnSeveralThreads) {
  testing::TempDir first;
  testing::TempDir second;
  std::string error;
  LogManagerOptions options{{first.path(), second.path()}};
  options.recovery_threads_per_dir = 3;
  std::vector<LogToOpen> wanted;
  {
    LogManager manager(options);
    ASSERT_TRUE(manager.start(error)) << error;
    for (int32_t p = 0; p < 12; ++p) {
      wanted.push_back({"t", p, LogConfig{}});
      auto log = manager.open_log("t", p, LogConfig{}, error);
      ASSERT_TRUE(log) << error;
      for (int32_t i = 0; i <= p; ++i) {
        auto batch = protocol::build_batch({{"k", "v"}});
        log->append(batch, 0);
      }
      log->flush();
    }
  }
  // A crash: no clean-shutdown markers, and every other partition has a torn tail.
  std::filesystem::remove(first.path() + "/.oxbow_clean_shutdown");
  std::filesystem::remove(second.path() + "/.oxbow_clean_shutdown");
  for (int32_t p = 0; p < 12; p += 2) {
    for (const auto& dir : {first.path(), second.path()}) {
      auto segment = dir + "/t-" + std::to_string(p) + "/00000000000000000000.log";
      if (!std::filesystem::exists(segment)) continue;
      std::FILE* f = std::fopen(segment.c_str(), "ab");
      std::fputs("torn tail", f);
      std::fclose(f);
    }
  }
  LogManager manager(options);
  ASSERT_TRUE(manager.start(error)) << error;
  ASSERT_FALSE(manager.last_shutdown_clean());
  auto logs = manager.open_logs(wanted, error);
  ASSERT_EQ(logs.size(), wanted.size()) << error;
  for (int32_t p = 0; p < 12; ++p) {
    ASSERT_TRUE(logs[p]);
    EXPECT_EQ(logs[p]->log_end_offset(), p + 1) << "partition " << p;
    EXPECT_EQ(manager.get("t", p), logs[p]);
  }
  // Both dirs kept their own partitions.
  size_t in_first = 0;
  for (int32_t p = 0; p < 12; ++p)
    in_first += std::filesystem::exists(first.path() + "/t-" + std::to_string(p));
  EXPECT_EQ(in_first, 6u);
  // Asking again returns the same logs.
  EXPECT_EQ(manager.open_logs({wanted[3]}, error).at(0), logs[3]);
}

TEST(LogManager, OpenLogsFailsWithTheFirstError) {
  testing::TempDir dir;
  std::string error;
  {
    std::FILE* f = std::fopen((dir.path() + "/blocker").c_str(), "w");
    std::fclose(f);
  }
  LogManager manager({{dir.path()}});
  ASSERT_TRUE(manager.start(error));
  // A partition whose directory cannot be created: its path runs through a file.
  auto logs = manager.open_logs({{"ok", 0, LogConfig{}}, {"blocker/t", 0, LogConfig{}}}, error);
  EXPECT_TRUE(logs.empty());
  EXPECT_NE(error.find("blocker"), std::string::npos) << error;
}

}  // namespace oxbow::storage
