// Two servers of one service id sharing a command log (a vector here): each executes what the
// other wrote in the log's order, its own statements in their place, so that both give queries
// the same ids; a request's commandSequenceNumber waits for its command.
#include <gtest/gtest.h>

#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct SharedLog {
  std::vector<Command> commands;
};

struct Server {
  explicit Server(SharedLog& shared) : log(shared) {
    resource.set_command_log([this](const Command& c) -> int64_t {
      log.commands.push_back(c);
      log.commands.back().offset = static_cast<int64_t>(log.commands.size()) - 1;
      return log.commands.back().offset;
    });
    // What the follower hands over: every command after the last taken, once the log has
    // `through`.
    resource.set_command_feed(
        [this](int64_t through) {
          const auto size = static_cast<int64_t>(log.commands.size());
          if (through == KsqlResource::kLogEnd) through = size - 1;
          if (through >= size) throw CommandWaitTimeout("not in the log");
          std::vector<Command> out(log.commands.begin() + taken, log.commands.end());
          taken = size;
          return out;
        },
        50ms);
  }
  json post(const std::string& ksql, int expected_status = 200, json extra = json::object()) {
    extra["ksql"] = ksql;
    RestResponse r = resource.handle(extra.dump());
    EXPECT_EQ(r.status, expected_status) << r.body;
    return json::parse(r.body);
  }
  std::vector<std::string> query_ids() {
    std::vector<std::string> ids;
    for (const auto& q : engine.queries()) ids.push_back(q.id);
    return ids;
  }

  SharedLog& log;
  size_t taken = 0;
  Engine engine;
  int applied = 0;
  KsqlResource resource{engine, [this](const AcceptedStatement&) { ++applied; }, {}};
};

constexpr const char* kCreate =
    "CREATE STREAM pageviews (id BIGINT KEY, page STRING) WITH (kafka_topic='views', "
    "value_format='JSON', partitions=1);";

TEST(CommandFollowerTest, EachServerExecutesTheOthersStatementsInTheLogsOrder) {
  SharedLog log;
  Server a(log), b(log);
  a.post(kCreate);
  b.resource.apply_fetched();
  EXPECT_EQ(b.post("SHOW STREAMS;")[0]["streams"].size(), 1u);
  EXPECT_EQ(b.applied, 1) << "its part on the cluster (topics, queries) done on B too";
  b.post("CREATE STREAM big AS SELECT * FROM pageviews WHERE id > 10;");
  // B's next statement is in the log before A writes its own: A executes B's first.
  b.post("CREATE STREAM small AS SELECT * FROM pageviews WHERE id < 10;");
  json other = a.post("CREATE STREAM other AS SELECT * FROM pageviews;")[0];
  EXPECT_EQ(other["commandSequenceNumber"], 3);
  EXPECT_EQ(other["commandStatus"]["queryId"], "CSAS_OTHER_2");
  b.resource.apply_fetched();
  EXPECT_EQ(a.query_ids(), b.query_ids());
  EXPECT_EQ(a.query_ids().size(), 3u);
}

TEST(CommandFollowerTest, AStatementIsValidatedAgainstWhatTheLogHasNow) {
  SharedLog log;
  Server a(log), b(log);
  a.post(kCreate);
  // B has not read A's CREATE yet: it is checked against it all the same, and refused.
  json refused = b.post(
      "CREATE STREAM pageviews (id INT KEY) WITH (kafka_topic='v2', value_format='JSON', "
      "partitions=1);",
      400);
  EXPECT_EQ(refused["@type"], "statement_error");
  EXPECT_EQ(log.commands.size(), 1u) << "nothing written";
}

TEST(CommandFollowerTest, ACommandSequenceNumberWaitsForItsCommand) {
  SharedLog log;
  Server a(log), b(log);
  json created = a.post(kCreate)[0];
  // Asked of B before its runner executed it: the request waits, and here times out.
  json late = b.post("SHOW STREAMS;", 503, {{"commandSequenceNumber", 5}});
  EXPECT_EQ(late["error_code"], 50301);
  EXPECT_EQ(late["message"],
            "Timed out while waiting for a previous command to execute. command sequence "
            "number: 5");
  b.resource.apply_fetched();
  json streams =
      b.post("SHOW STREAMS;", 200, {{"commandSequenceNumber", created["commandSequenceNumber"]}});
  EXPECT_EQ(streams[0]["streams"].size(), 1u);
}

}  // namespace
}  // namespace oxbow::sql::server
