#include "sql/server/ksql_resource.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

#include "common/properties.h"
#include "sql/engine/variables.h"
#include "sql/server/server_status.h"

namespace oxbow::sql::server {

namespace {

using nlohmann::json;

// ksqlDB's words for a push query sent to /ksql.
constexpr const char* kStreamedElsewhere =
    "The following statement types should be issued to the websocket endpoint '/query':\n"
    "\t* PRINT\n\t* SELECT";

struct StatementFailure {
  std::string statement, message;
};

// The request's "streamsProperties" as text, whatever JSON type each value has.
std::map<std::string, std::string> request_properties(const json& request) {
  return text_fields(request, "streamsProperties");
}

// The queries `result` lists, with their status where they run instead of the engine's.
StatementResult with_runtime_status(StatementResult result,
                                    const KsqlResource::QueryStatus& status_of) {
  auto patch = [&](std::vector<RunningQuery>& queries) {
    for (auto& q : queries)
      if (auto status = status_of(q.id); !status.empty()) q.status_count = {{status, 1}};
  };
  patch(result.queries);
  for (auto& s : result.source_descriptions) {
    patch(s.read_queries);
    patch(s.write_queries);
  }
  for (auto& q : result.query_descriptions)
    if (auto status = status_of(q.id); !status.empty()) q.status = status;
  return result;
}

// `text` as a single-quoted SQL string.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A request's sessionVariables, DEFINEd for its statements only: ksqlDB substitutes them as it
// does DEFINEd ones, per request. The engine has one session, so what it had under those names
// before the request comes back afterwards.
class RequestVariables {
 public:
  RequestVariables(Engine& engine, std::map<std::string, std::string> variables)
      : engine_(engine), variables_(std::move(variables)) {
    if (variables_.empty()) return;
    before_ = engine_.execute("SHOW VARIABLES;").front().settings;
    for (const auto& [name, value] : variables_) define(name, value);
  }
  ~RequestVariables() {
    for (const auto& [name, value] : variables_) {
      auto old = std::find_if(before_.begin(), before_.end(),
                              [&](const auto& v) { return same_name(v.first, name); });
      if (old != before_.end())
        define(name, old->second);
      else
        run("UNDEFINE " + identifier(name) + ";");
    }
  }
  RequestVariables(const RequestVariables&) = delete;
  RequestVariables& operator=(const RequestVariables&) = delete;

 private:
  static bool same_name(const std::string& a, const std::string& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
      return std::tolower(static_cast<unsigned char>(x)) ==
             std::tolower(static_cast<unsigned char>(y));
    });
  }
  // Quoted, so that a reserved word (`topic`) is a name too, as ksqlDB takes any.
  static std::string identifier(const std::string& name) {
    std::string out = "`";
    for (char c : name) out += c == '`' ? std::string("``") : std::string(1, c);
    return out + "`";
  }
  void define(const std::string& name, const std::string& value) {
    run("DEFINE " + identifier(name) + " = " + quoted(value) + ";");
  }
  // A name DEFINE cannot take is left out.
  void run(const std::string& statement) {
    try {
      engine_.execute(statement);
    } catch (const std::exception& e) {
      spdlog::debug("sql-server: sessionVariables: {}: {}", statement, e.what());
    }
  }

  Engine& engine_;
  std::map<std::string, std::string> variables_;
  std::vector<std::pair<std::string, std::string>> before_;
};

// What the parser tells of `statement` once the session's variables are substituted, as the
// engine will run it.
StatementInfo info_with_variables(Engine& engine, const std::string& statement) {
  StatementInfo info = statement_info(statement);
  if (info.parsed || statement.find("${") == std::string::npos) return info;
  auto defined = engine.execute("SHOW VARIABLES;").front().settings;
  return statement_info(substitute_variables(statement, {defined.begin(), defined.end()}));
}

RestResponse statement_error(const StatementFailure& failure, const json& entities) {
  json body = {{"@type", "statement_error"},
               {"error_code", kBadStatement},
               {"message", failure.message},
               {"statementText", failure.statement},
               {"entities", entities}};
  return {400, json_text(body)};
}

}  // namespace

RestResponse generic_error(int status, int error_code, const std::string& message) {
  json body = {{"@type", "generic_error"}, {"error_code", error_code}, {"message", message}};
  return {status, json_text(body)};
}

KsqlResource::KsqlResource(Engine& engine, Apply apply, PropertyList server_properties,
                           QueryStatus query_status)
    : engine_(engine),
      apply_(std::move(apply)),
      server_properties_(std::move(server_properties)),
      query_status_(std::move(query_status)) {}

RestResponse KsqlResource::handle(std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object())
    return generic_error(400, kBadRequest, "The request body is not a JSON object.");
  auto ksql = request.find("ksql");
  if (ksql == request.end() || !ksql->is_string())
    return generic_error(400, kBadRequest, "The request has no \"ksql\" string.");
  auto properties = request_properties(request);
  if (auto denied = denied_overrides(denied_, properties))
    return generic_error(400, kBadRequest, *denied);
  std::unique_lock lock(mutex_);
  if (auto waited = wait_for_sequence_number(request, lock)) return *waited;
  RequestVariables variables(engine_, text_fields(request, "sessionVariables"));
  json entities = json::array();
  for (const std::string& piece : split_statements(ksql->get<std::string>())) {
    std::string statement(trim(piece));
    if (statement.empty()) continue;
    try {
      json entity = run(statement, properties);
      if (!entity.is_null()) entities.push_back(std::move(entity));
    } catch (const CommandLogError& e) {
      spdlog::error("sql-server: {}", e.what());
      return generic_error(500, 50000, e.what());
    } catch (const std::exception& e) {
      return statement_error({statement, e.what()}, entities);
    }
  }
  return {200, json_text(entities)};
}

RestResponse KsqlResource::command_status(const std::string& command_id) {
  std::lock_guard lock(mutex_);
  auto found = command_messages_.find(command_id);
  if (found == command_messages_.end())
    return generic_error(404, 40400, "Command not found: " + command_id);
  return {200, json_text({{"status", "SUCCESS"}, {"message", found->second}})};
}

RestResponse KsqlResource::command_statuses() {
  std::lock_guard lock(mutex_);
  json statuses = json::object();
  for (const auto& entry : command_messages_) statuses[entry.first] = "SUCCESS";
  return {200, json_text({{"commandStatuses", statuses}})};
}

void KsqlResource::set_command_log(CommandLog log) {
  std::lock_guard lock(mutex_);
  command_log_ = std::move(log);
}

std::map<std::string, std::map<std::string, std::string>> KsqlResource::replay(
    const std::vector<Command>& commands) {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::map<std::string, std::string>> started;
  for (const auto& command : commands) {
    execute_command(command, &started, false);
    mark_applied(command.offset);
  }
  return started;
}

void KsqlResource::execute_command(
    const Command& command, std::map<std::string, std::map<std::string, std::string>>* started,
    bool apply) {
  try {
    std::string deleted_topic;
    if (const DataSource* s =
            engine_.catalog().find_source(statement_info(command.statement).topic_deleted_with))
      deleted_topic = s->topic;
    // The SET properties its query started with, for this statement only.
    for (const auto& [name, value] : command.original_properties)
      engine_.execute("SET " + quoted(name) + "=" + quoted(value) + ";");
    for (const auto& result : engine_.execute(command.statement)) {
      if (!result.query_id.empty() && started)
        (*started)[result.query_id] = command.streams_properties;
      if (auto id = statement_info(result.statement).command_id; !id.empty())
        command_messages_[id] = result.message;
      if (apply && apply_ && !result.message.empty())
        apply_({result, command.streams_properties, deleted_topic});
    }
  } catch (const std::exception& e) {
    spdlog::error("sql-server: command {} at offset {} failed{}, skipped: {}", command.id,
                  command.offset, apply ? "" : " on replay", e.what());
  }
  // Never throws: this runs where a statement's own execution has failed too.
  for (const auto& [name, value] : command.original_properties) {
    try {
      engine_.execute("UNSET " + quoted(name) + ";");
    } catch (const std::exception& e) {
      spdlog::error("sql-server: UNSET {}: {}", name, e.what());
    }
  }
}

void KsqlResource::mark_applied(int64_t offset) {
  applied_ = std::max(applied_, offset);
  sequence_number_ = std::max(sequence_number_, offset);
  applied_changed_.notify_all();
}

std::vector<Command> KsqlResource::apply_commands(const std::vector<Command>& commands,
                                                  int64_t own) {
  std::vector<Command> after;
  for (const auto& command : commands) {
    if (command.offset <= applied_ || command.offset == own) continue;
    if (own >= 0 && command.offset > own) {
      after.push_back(command);
      continue;
    }
    spdlog::info("sql-server: executing command {} at offset {} from the command topic", command.id,
                 command.offset);
    execute_command(command, nullptr, true);
    mark_applied(command.offset);
  }
  return after;
}

void KsqlResource::set_command_transaction(std::function<void()> begin,
                                           std::function<void()> abort) {
  std::lock_guard lock(mutex_);
  begin_ = std::move(begin);
  abort_ = std::move(abort);
}

void KsqlResource::set_command_feed(CommandFeed feed, std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  feed_ = std::move(feed);
  feed_timeout_ = timeout;
}

void KsqlResource::apply_fetched() {
  std::lock_guard lock(mutex_);
  if (feed_) apply_commands(feed_(-1));
}

std::optional<RestResponse> KsqlResource::wait_for_sequence_number(
    const json& request, std::unique_lock<std::mutex>& lock) {
  auto n = request.find("commandSequenceNumber");
  if (!feed_ || n == request.end() || !n->is_number_integer()) return std::nullopt;
  const int64_t wanted = n->get<int64_t>();
  if (applied_changed_.wait_for(lock, feed_timeout_, [&] { return applied_ >= wanted; }))
    return std::nullopt;
  return generic_error(503, kCatchUpTimeout,
                       "Timed out while waiting for a previous command to execute. command "
                       "sequence number: " +
                           std::to_string(wanted));
}

std::optional<RestResponse> KsqlResource::wait_for_command(std::string_view body) {
  json request = json::parse(body, nullptr, false);
  if (!request.is_object()) return std::nullopt;  // the query's own checks refuse it
  std::unique_lock lock(mutex_);
  return wait_for_sequence_number(request, lock);
}

std::vector<FieldInfo> KsqlResource::push_query_columns(const std::string& statement) {
  auto pieces = split_statements(statement);
  std::string text(pieces.size() == 1 ? trim(pieces.front()) : "");
  std::string head = text.substr(0, 6);
  for (char& c : head) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // PRINT streams too in ksqlDB, but no push query here runs it.
  if (head != "SELECT")
    throw std::runtime_error("Only a single SELECT statement can be run as a push query: " +
                             std::string(trim(statement)));
  if (!text.ends_with(';')) text += ';';
  std::lock_guard lock(mutex_);
  auto results = engine_.execute("EXPLAIN " + text);
  if (results.empty() || results.back().query_descriptions.empty())
    throw std::runtime_error("The engine could not plan: " + text);
  return results.back().query_descriptions.front().fields;
}

int64_t KsqlResource::log_command(const std::string& statement, StatementInfo& info,
                                  const std::map<std::string, std::string>& properties) {
  if (begin_) {
    try {
      begin_();
    } catch (const std::exception& e) {
      throw CommandLogError(std::string("Could not write to the command topic: ") + e.what());
    }
  }
  // Whatever happens below, no transaction stays open: after a write, there is none to abort.
  struct Abort {
    const std::function<void()>& abort;
    ~Abort() {
      if (abort) abort();
    }
  } abort{abort_};
  // Validated against every statement the log has now, as ksqlDB's distributor catches up first.
  if (feed_) catch_up(kLogEnd, -1);
  Engine sandbox = engine_;
  auto results = sandbox.execute(statement);
  if (results.empty()) return -1;
  // The log keeps the text the engine ran, its variables substituted: a replay has none.
  const StatementResult& last = results.back();
  if (!info.parsed) info = statement_info(last.statement);
  if (info.command_id.empty()) return -1;
  Command command{info.command_id, last.statement, properties, {}};
  if (const PersistentQuery* query = sandbox.query(last.query_id))
    command.original_properties = query->overridden_properties;
  try {
    return command_log_(command);
  } catch (const std::exception& e) {
    throw CommandLogError("Could not write the statement '" + last.statement +
                          "' into the command topic: " + e.what());
  }
}

std::vector<Command> KsqlResource::catch_up(int64_t through, int64_t own) {
  try {
    return apply_commands(feed_(through), own);
  } catch (const CommandWaitTimeout& e) {
    throw CommandLogError(own >= 0 ? "The statement was written at offset " + std::to_string(own) +
                                         " of the command topic and takes effect once read "
                                         "back: " +
                                         e.what()
                                   : std::string(e.what()));
  }
}

json KsqlResource::run(const std::string& statement,
                       const std::map<std::string, std::string>& properties) {
  StatementInfo info = info_with_variables(engine_, statement);
  if (info.streamed) throw std::runtime_error(kStreamedElsewhere);
  // Looked up before the engine forgets the source.
  std::string deleted_topic;
  if (const DataSource* s = engine_.catalog().find_source(info.topic_deleted_with))
    deleted_topic = s->topic;
  int64_t offset = -1;
  if (command_log_ && (!info.parsed || !info.command_id.empty()))
    offset = log_command(statement, info, properties);
  // Written: executed here once what other servers wrote before it is, then what came after.
  std::vector<Command> after;
  if (offset >= 0 && feed_) after = catch_up(offset, offset);
  struct Done {
    KsqlResource& self;
    int64_t offset;
    std::vector<Command>& after;
    ~Done() {
      if (offset < 0) return;
      self.mark_applied(offset);
      self.apply_commands(after);
    }
  } done{*this, offset, after};
  json entity = nullptr;
  for (const auto& result : engine_.execute(statement)) {
    // INSERT VALUES answers no message, as ksqlDB's; its records still go out.
    if ((!result.message.empty() || !result.inserted.empty()) && apply_)
      apply_({result, properties, deleted_topic});
    // With a log, a statement's sequence number is its offset there; without, a count.
    if (offset >= 0)
      sequence_number_ = offset;
    else if (!command_log_ && !result.message.empty())
      ++sequence_number_;
    if (!info.command_id.empty()) command_messages_[info.command_id] = result.message;
    entity = query_status_ ? entity_json(with_runtime_status(result, query_status_), info,
                                         sequence_number_, server_properties_)
                           : entity_json(result, info, sequence_number_, server_properties_);
  }
  return entity;
}

}  // namespace oxbow::sql::server
