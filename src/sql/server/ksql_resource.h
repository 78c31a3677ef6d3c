#pragma once
// ksqlDB's `POST /ksql`: a request's statements executed one after the other, each result as
// one of ksqlDB's entities (entities.h), the first failure as a statement_error carrying the
// entities of the statements before it. The engine is used by one request at a time. With a
// command log, a statement that changes state is tried on a copy of the engine first, written to
// the log (ksqlDB's command topic), and only then executed: what the log does not have never
// takes effect, and the log replayed gives back what the engine had.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sql/engine/engine.h"
#include "sql/server/command_follower.h"
#include "sql/server/command_topic.h"
#include "sql/server/entities.h"

namespace oxbow::sql::server {

struct RestResponse {
  int status = 200;
  std::string body;  // JSON
};

// ksqlDB's error codes (io.confluent.ksql.rest.Errors, and its API server's ErrorCodes).
inline constexpr int kBadRequest = 40000;
inline constexpr int kBadStatement = 40001;
inline constexpr int kMaxPushQueriesExceeded = 40003;
inline constexpr int kServerError = 50000;
inline constexpr int kMissingParam = 50001;
inline constexpr int kUnknownQueryId = 50002;
inline constexpr int kCatchUpTimeout = 50301;  // ERROR_CODE_COMMAND_QUEUE_CATCHUP_TIMEOUT, with 503

// ksqlDB's error body: {"@type":"generic_error","error_code":...,"message":...}.
RestResponse generic_error(int status, int error_code, const std::string& message);

// A statement the engine accepted, for its part on the cluster.
struct AcceptedStatement {
  const StatementResult& result;
  const std::map<std::string, std::string>& request_properties;  // its request's
  std::string deleted_topic;  // DROP ... DELETE TOPIC: the dropped source's topic
};

// The command log refused a statement: answered 500, the statement took no effect.
struct CommandLogError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class KsqlResource {
 public:
  // Writes a command and answers its offset; throws when the log does not take it.
  using CommandLog = std::function<int64_t(const Command& command)>;
  // What an accepted statement does to the cluster (topics, records, running queries). An
  // exception fails the statement with its message.
  using Apply = std::function<void(const AcceptedStatement& accepted)>;
  // A query's status where it runs (RUNNING, ERROR), "" to keep the engine's.
  using QueryStatus = std::function<std::string(const std::string& query_id)>;

  KsqlResource(Engine& engine, Apply apply, PropertyList server_properties,
               QueryStatus query_status = {});

  // The response to a request body: 200 with the array of entities, 400 with a statement_error
  // or, for a body that is no JSON object with a "ksql" string, a generic_error.
  RestResponse handle(std::string_view body);

  // ksqlDB's GET /status/<command id>: {"status":"SUCCESS","message":...} of an accepted
  // statement (every statement is done when /ksql answers), 404 for an id never seen; GET
  // /status: {"commandStatuses": {<id>: <status>}}.
  RestResponse command_status(const std::string& command_id);
  RestResponse command_statuses();

  // Properties a request's streamsProperties may not set (server_status.h): such a request is
  // refused whole, 400 generic_error 40000, as ksqlDB refuses it.
  void set_denied_properties(std::vector<std::string> denied) { denied_ = std::move(denied); }
  // From now on, every statement that changes state is written to `log` before it takes effect.
  void set_command_log(CommandLog log);
  // `begin` before a statement that may be written is checked against the log (which it may
  // throw for), `abort` after it when it was not written: ksqlDB's transaction around catching
  // up, validating and writing, which fences other servers writing at the same time.
  void set_command_transaction(std::function<void()> begin, std::function<void()> abort);
  // The commands read from the log (command_follower.h): those queued once it is read through
  // `through` (kLogEnd: its last record now); throws CommandWaitTimeout when that takes too long.
  using CommandFeed = std::function<std::vector<Command>(int64_t through)>;
  static constexpr int64_t kLogEnd = -2;
  // From now on the log is followed: commands other servers wrote are executed in the log's
  // order, and a statement written here is executed once those before it are (so every server
  // gives queries the same ids). A request's commandSequenceNumber waits up to `timeout` for that
  // command to be executed here, as ksqlDB's ksql.server.command.response.timeout.ms.
  void set_command_feed(CommandFeed feed, std::chrono::milliseconds timeout);
  // Executes what the feed has queued now (the server's command-runner thread).
  void apply_fetched();
  // Executes `commands` read back from the log, in order, without writing them again; one the
  // engine refuses is logged and skipped. The cluster's part is the caller's: per query id, the
  // streamsProperties of the command that started it (for the queries it runs afterwards).
  std::map<std::string, std::map<std::string, std::string>> replay(
      const std::vector<Command>& commands);

  // A query request's commandSequenceNumber (its JSON `body`), waited for as /ksql waits for
  // one: none when it has none or its command is executed here, else the 503 to answer.
  std::optional<RestResponse> wait_for_command(std::string_view body);

  // A push query's result columns, as the engine plans the SELECT for EXPLAIN (which changes
  // nothing); throws with ksqlDB's message for a text that is not one SELECT or that the engine
  // refuses.
  std::vector<FieldInfo> push_query_columns(const std::string& statement);
  // Runs `read` with the engine while no statement changes it.
  void read_engine(const std::function<void(const Engine&)>& read) {
    std::lock_guard lock(mutex_);
    read(engine_);
  }

 private:
  // Runs one statement; its entity (null for none), or throws with the engine's message.
  nlohmann::json run(const std::string& statement,
                     const std::map<std::string, std::string>& properties);
  // Tries `statement` on a copy of the engine and writes it to the log; its offset, or -1 for a
  // statement that changes nothing the log keeps. Throws the engine's error or CommandLogError.
  int64_t log_command(const std::string& statement, StatementInfo& info,
                      const std::map<std::string, std::string>& properties);
  // Executes one command read from the log as replay does; with `apply`, does its part on the
  // cluster too. `started`: per query id it started, its streamsProperties.
  void execute_command(const Command& command,
                       std::map<std::string, std::map<std::string, std::string>>* started,
                       bool apply);
  // Executes `commands` not executed yet in order, but for the one at `own` (the request's own,
  // which the caller executes): those after it are returned, for after it.
  std::vector<Command> apply_commands(const std::vector<Command>& commands, int64_t own = -1);
  void mark_applied(int64_t offset);
  // Executes the fed commands through `through` (apply_commands); throws CommandLogError when
  // the feed times out.
  std::vector<Command> catch_up(int64_t through, int64_t own);
  // ksqlDB's wait for a request's commandSequenceNumber: none once it is executed here, else
  // its 503 after the feed's timeout.
  std::optional<RestResponse> wait_for_sequence_number(const nlohmann::json& request,
                                                       std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  Engine& engine_;
  Apply apply_;
  PropertyList server_properties_;
  QueryStatus query_status_;
  CommandLog command_log_;
  std::vector<std::string> denied_;
  int64_t sequence_number_ = 0;  // the commandSequenceNumber of the last accepted statement
  CommandFeed feed_;
  std::function<void()> begin_, abort_;
  std::chrono::milliseconds feed_timeout_{5'000};
  int64_t applied_ = -1;  // the offset of the last command executed from the log
  std::condition_variable applied_changed_;
  std::map<std::string, std::string> command_messages_;  // by command id, the latest
};

}  // namespace oxbow::sql::server
