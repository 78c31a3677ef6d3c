// Task ids with and without a named topology: their text, order and directories, which a
// restarted instance reads back to report the state it has.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "streams/state/state_directory.h"

namespace oxbow::streams::detail {
namespace {

TEST(TaskIds, NamedTopologyTasksPrintAsKafkasAndParseBack) {
  EXPECT_EQ((TaskId{1, 2}).toString(), "1_2");
  EXPECT_EQ((TaskId{1, 2, "CSAS_PAGEVIEWS_3"}).toString(), "CSAS_PAGEVIEWS_3__1_2");
  for (const TaskId& id : {TaskId{0, 0}, TaskId{12, 34}, TaskId{1, 2, "q"}, TaskId{1, 2, "a__b"},
                           TaskId{1, 2, "ends_"}, TaskId{3, 4, "x.y-z"}})
    EXPECT_EQ(parse_task_id(id.toString()), id) << id.toString();
  for (const char* bad : {"", "1", "1_", "_1", "a_1", "1_2_3", "-1_0", "__1_2", "q__1", "q__1_x",
                          "a/b__1_2", "..__1_2", "1_99999999999"})
    EXPECT_FALSE(parse_task_id(bad)) << bad;
}

TEST(TaskIds, ANamedTopologysTasksSortTogetherAndDifferFromUnnamedOnes) {
  EXPECT_NE((TaskId{0, 1}), (TaskId{0, 1, "q"}));
  EXPECT_LT((TaskId{5, 9}), (TaskId{0, 0, "q"}));
  EXPECT_LT((TaskId{5, 9, "a"}), (TaskId{0, 0, "b"}));
  EXPECT_LT((TaskId{0, 9, "a"}), (TaskId{1, 0, "a"}));
}

TEST(TaskIds, TopologyNamesAreTopicNameCharacters) {
  for (const char* good : {"q", "CSAS_X_1", "a.b-c", "_confluent-ksql-default_query_1"})
    EXPECT_TRUE(valid_topology_name(good)) << good;
  for (const char* bad : {"", ".", "..", "a/b", "a b", "é"})
    EXPECT_FALSE(valid_topology_name(bad)) << bad;
}

TEST(TaskIds, NamedTopologyTasksLiveInTheirTopologysDirectory) {
  auto root =
      std::filesystem::temp_directory_path() / ("oxbow-task-dirs-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  std::string app = root.string();
  EXPECT_EQ(task_directory(app, {0, 3}), app + "/0_3");
  EXPECT_EQ(task_directory(app, {1, 2, "q1"}), app + "/__q1__/1_2");
  for (const TaskId& id : {TaskId{0, 3}, TaskId{1, 2, "q1"}, TaskId{0, 0, "q_2"}})
    std::filesystem::create_directories(task_directory(app, id));
  // What is not a task's directory is skipped: the process metadata, stray directories.
  std::filesystem::create_directories(app + "/kafka-streams-process-metadata");
  std::filesystem::create_directories(app + "/__q1__/x_1");
  std::filesystem::create_directories(app + "/__bad/0_0");
  std::vector<std::pair<TaskId, std::string>> expected = {{{0, 3}, app + "/0_3"},
                                                          {{1, 2, "q1"}, app + "/__q1__/1_2"},
                                                          {{0, 0, "q_2"}, app + "/__q_2__/0_0"}};
  EXPECT_EQ(task_directories(app), expected);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace oxbow::streams::detail
