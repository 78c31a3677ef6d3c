// The client side of ksqlDB's CLI: each statement is POSTed alone to /ksql, so that its result
// is printed before the next one is sent and the first failure stops a script, as ksqlDB's CLI
// does; RUN SCRIPT is read here, since the file is the client's. The prompt is Debian's libedit.
#include "cli/sql_client.h"

#include <editline/readline.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/client_config.h"
#include "cli/sql_entity_text.h"
#include "common/properties.h"
#include "http/client.h"
#include "sql/engine/variables.h"

namespace oxbow::cli {

namespace {

using nlohmann::json;

// A statement may start queries and create topics before the server answers.
constexpr int kStatementTimeoutMs = 120'000;

// The server could not be asked at all: nothing more can be done.
struct Unreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The quoted path of `RUN SCRIPT '<path>';` ('' for a quote), or nullopt for another statement.
std::optional<std::string> script_path(std::string_view statement) {
  std::string_view rest = trim(statement);
  while (rest.starts_with("--")) {  // the comments before it in a script
    size_t eol = rest.find('\n');
    rest = eol == std::string_view::npos ? "" : trim(rest.substr(eol));
  }
  if (upper(rest.substr(0, 3)) != "RUN") return std::nullopt;
  rest = trim(rest.substr(3));
  if (upper(rest.substr(0, 6)) != "SCRIPT") return std::nullopt;
  rest = trim(rest.substr(6));
  if (rest.empty() || rest.front() != '\'') return std::nullopt;
  std::string path;
  for (size_t i = 1; i < rest.size(); ++i) {
    if (rest[i] != '\'') {
      path += rest[i];
    } else if (i + 1 < rest.size() && rest[i + 1] == '\'') {
      path += '\'';
      ++i;
    } else {
      return path;
    }
  }
  return std::nullopt;
}

std::string read_script(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("Could not read the script " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SqlClient {
 public:
  SqlClient(std::string url, bool json_output) : url_(std::move(url)), json_output_(json_output) {}

  // Every statement of `text` in order; false at the first that fails (its error printed).
  bool run(const std::string& text) {
    for (const auto& piece : sql::split_statements(text)) {
      std::string statement(trim(piece));
      if (statement.empty() || statement == ";") continue;
      if (!run_one(statement)) return false;
    }
    return true;
  }

  // GET /info's KsqlServerInfo; throws Unreachable.
  json info() {
    auto exchange = send("GET", "/info", "");
    json body = json::parse(exchange.body, nullptr, false);
    return body.is_object() ? body.value("KsqlServerInfo", json::object()) : json::object();
  }

  // The names of the server's streams and tables; none when it cannot say.
  std::vector<std::string> source_names() {
    std::vector<std::string> names;
    try {
      json request = {{"ksql", "SHOW STREAMS; SHOW TABLES;"},
                      {"streamsProperties", json::object()}};
      json body = json::parse(send("POST", "/ksql", request.dump()).body, nullptr, false);
      if (!body.is_array()) return names;
      for (const auto& entity : body)
        for (const char* list : {"streams", "tables"})
          for (const auto& source : entity.value(list, json::array()))
            names.push_back(source.value("name", ""));
    } catch (const Unreachable&) {
    }
    return names;
  }

  const std::string& url() const { return url_; }

 private:
  bool run_one(const std::string& statement) {
    if (auto path = script_path(statement)) {
      try {
        return run(read_script(*path));
      } catch (const Unreachable&) {
        throw;
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", e.what());
        return false;
      }
    }
    json request = {{"ksql", statement}, {"streamsProperties", json::object()}};
    auto response = send("POST", "/ksql", request.dump());
    json body = json::parse(response.body, nullptr, false);
    if (json_output_ && !body.is_discarded()) {
      fmt::print("{}\n", body.dump(2));
    } else if (response.status == 200 && body.is_array()) {
      for (const auto& entity : body) fmt::print("\n{}", entity_text(entity));
    } else {
      fmt::print(stderr, "{}\n", error_text(response.body));
    }
    std::fflush(stdout);
    return response.status == 200;
  }

  http::Response send(const std::string& method, const std::string& path, const std::string& body) {
    http::Request request{
        method, path, "", body, "application/vnd.ksql.v1+json", "application/vnd.ksql.v1+json", ""};
    auto exchange = http::send_request(url_, request, kStatementTimeoutMs);
    if (!exchange.response)
      throw Unreachable(
          fmt::format("Could not reach the SQL server at {}: {}", url_, exchange.error));
    return *exchange.response;
  }

  std::string url_;
  bool json_output_;
};

const char* const kKeywords[] = {
    "ALL",        "AND",      "AS",     "BETWEEN",   "BY",        "CASE",    "CHANGES",
    "CREATE",     "DEFINE",   "DELETE", "DESCRIBE",  "DROP",      "EMIT",    "EXISTS",
    "EXPLAIN",    "EXTENDED", "FROM",   "FUNCTIONS", "GROUP",     "HAVING",  "IF",
    "INSERT",     "INTO",     "JOIN",   "KEY",       "LEFT",      "LIMIT",   "LIST",
    "NOT",        "NULL",     "ON",     "OR",        "PARTITION", "PRIMARY", "PRINT",
    "PROPERTIES", "QUERIES",  "RUN",    "SCRIPT",    "SELECT",    "SET",     "SHOW",
    "STREAM",     "STREAMS",  "TABLE",  "TABLES",    "TERMINATE", "TOPIC",   "TOPICS",
    "TYPE",       "UNSET",    "VALUES", "VARIABLES", "WHERE",     "WINDOW",  "WITH",
};

// What Tab completes: the keywords (in the case the word was begun in) and the names of the
// server's streams and tables, asked for when a completion starts.
struct Completions {
  SqlClient* client = nullptr;
  std::vector<std::string> words;
  size_t next = 0;
};
Completions completions;

// libedit's generator protocol: called with state 0 first, then until it answers null.
char* completion_generator(const char* text, int state) {
  std::string wanted = upper(text);
  if (state == 0) {
    completions.words.clear();
    completions.next = 0;
    bool lower = text[0] && std::islower(static_cast<unsigned char>(text[0]));
    for (std::string keyword : kKeywords) {
      if (lower)
        for (char& c : keyword) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      completions.words.push_back(keyword);
    }
    if (completions.client)
      for (auto& name : completions.client->source_names()) completions.words.push_back(name);
  }
  while (completions.next < completions.words.size()) {
    const std::string& word = completions.words[completions.next++];
    if (upper(word).rfind(wanted, 0) == 0) return strdup(word.c_str());
  }
  return nullptr;
}

char** complete_word(const char* text, int, int) {
  return rl_completion_matches(text, completion_generator);
}

// Whether `buffer` ends a statement: its last piece, outside quotes and comments, ends with ';'.
bool statement_complete(const std::string& buffer) {
  auto pieces = sql::split_statements(buffer);
  return !pieces.empty() && trim(pieces.back()).ends_with(";");
}

std::string history_path() {
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.oxbow_sql_history";
}

void print_banner(SqlClient& client) {
  try {
    json info = client.info();
    fmt::print("Oxbow SQL CLI, server {} (ksqlDB {} API) at {}\n",
               info.value("ksqlServiceId", std::string("?")),
               info.value("version", std::string("?")), client.url());
  } catch (const Unreachable& e) {
    fmt::print("{}\n", e.what());
  }
  fmt::print(
      "Statements end with ';'. RUN SCRIPT '<file>'; runs a file. Ctrl-D or exit leaves.\n\n");
  std::fflush(stdout);
}

void interactive(SqlClient& client) {
  print_banner(client);
  const std::string history = history_path();
  using_history();
  read_history(history.c_str());
  completions.client = &client;
  rl_attempted_completion_function = complete_word;
  std::string buffer;
  while (char* line = readline(buffer.empty() ? "ksql> " : "> ")) {
    std::string text(line);
    std::free(line);
    std::string word = upper(trim(text));
    if (buffer.empty() && (word == "EXIT" || word == "QUIT")) return;
    if (buffer.empty() && trim(text).empty()) continue;
    buffer += (buffer.empty() ? "" : "\n") + text;
    if (!statement_complete(buffer)) continue;
    add_history(buffer.c_str());
    write_history(history.c_str());
    try {
      client.run(buffer);
    } catch (const Unreachable& e) {
      fmt::print(stderr, "{}\n", e.what());
    }
    buffer.clear();
  }
  fmt::print("\n");
}

}  // namespace

void run_sql_client(const SqlClientOptions& options) {
  std::string output = upper(options.output);
  if (output != "JSON" && output != "TABULAR")
    fail("--output is JSON or TABULAR, not " + options.output);
  SqlClient client(options.url, output == "JSON");
  if (options.execute.empty() && options.file.empty()) return interactive(client);
  bool ok = false;
  try {
    std::string text = options.file.empty() ? options.execute : read_script(options.file);
    ok = client.run(text);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (!ok) throw CLI::RuntimeError(1);
}

}  // namespace oxbow::cli
