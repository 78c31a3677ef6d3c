// The client side of ksqlDB's CLI: each statement is POSTed alone to /ksql, so that its result
// is printed before the next one is sent and the first failure stops a script, as ksqlDB's CLI
// does; RUN SCRIPT is read here, since the file is the client's. The prompt is Debian's libedit.
#include "cli/sql_client.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "cli/client_config.h"
#include "cli/sql_console.h"
#include "cli/sql_entity_text.h"
#include "cli/sql_query_output.h"
#include "cli/sql_statement_text.h"
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

// The terminal's width, or ksqlDB's usual 80 when stdout is no terminal.
int terminal_width() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

// The query streaming now, which Ctrl-C ends (not the CLI).
std::atomic<http::StreamingRequest*> running_query{nullptr};

extern "C" void interrupt_query(int) {
  if (auto* query = running_query.load()) query->cancel();
}

// SIGINT goes to the running query while it lives; the previous handler comes back after.
class InterruptEndsQuery {
 public:
  explicit InterruptEndsQuery(http::StreamingRequest& query) {
    running_query = &query;
    struct sigaction action {};
    action.sa_handler = interrupt_query;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptEndsQuery() {
    sigaction(SIGINT, &previous_, nullptr);
    running_query = nullptr;
  }

 private:
  struct sigaction previous_ {};
};

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
  void set_url(std::string url) { url_ = std::move(url); }
  bool json_output() const { return json_output_; }
  void set_json_output(bool json) { json_output_ = json; }

 private:
  bool run_one(const std::string& typed) {
    // As ksqlDB's CLI: the session's variables are substituted here, before anything reads it.
    const std::string statement = sql::substitute_variables(typed, variables_);
    if (auto path = script_path(statement)) {
      try {
        return run(read_script(*path));
      } catch (const Unreachable&) {
        throw;
      } catch (const std::exception& e) {
        console().error(fmt::format("{}\n", e.what()));
        return false;
      }
    }
    if (is_query(statement)) return run_query(statement);
    if (is_print(statement)) return run_print(statement);
    if (auto set = local_property(statement)) return set_property(*set);
    if (auto variable = variable_statement(statement)) return define(*variable, statement);
    json request = {{"ksql", statement}, {"streamsProperties", properties_}};
    auto response = send("POST", "/ksql", request.dump());
    json body = json::parse(response.body, nullptr, false);
    if (response.status == 200 && body.is_array()) {
      print_entities(body);
    } else if (json_output_ && !body.is_discarded()) {
      console().out(fmt::format("{}\n", body.dump(2)));
    } else {
      console().error(fmt::format("{}\n", error_text(response.body)));
    }
    return response.status == 200;
  }

  void print_entities(const json& entities) {
    if (json_output_) return console().out(fmt::format("{}\n", entities.dump(2)));
    for (const auto& entity : entities) console().out(fmt::format("\n{}", entity_text(entity)));
  }

  // DEFINE, UNDEFINE and SHOW VARIABLES, kept by the CLI as ksqlDB's CLI keeps them.
  bool define(const VariableStatement& variable, const std::string& statement) {
    auto same_name = [&](const auto& entry) { return upper(entry.first) == upper(variable.name); };
    auto it = std::find_if(variables_.begin(), variables_.end(), same_name);
    if (variable.name.empty()) {
      json listed = json::array();
      for (const auto& [name, value] : variables_)
        listed.push_back({{"name", name}, {"value", value}});
      print_entities(json::array({{{"@type", "variables"},
                                   {"statementText", statement},
                                   {"variables", listed},
                                   {"warnings", json::array()}}}));
    } else if (variable.value) {
      if (it != variables_.end()) variables_.erase(it);
      variables_[variable.name] = *variable.value;
    } else if (it == variables_.end()) {
      console().out(
          fmt::format("Cannot undefine variable '{}' which was never defined.\n", variable.name));
    } else {
      variables_.erase(it);
    }
    return true;
  }

  // A push or pull query, as ksqlDB's CLI runs it: rows printed as they come until the server
  // ends the answer (LIMIT, a pull query's last row, an error) or Ctrl-C closes the connection,
  // which ends the query on the server; then "Query terminated".
  bool run_query(const std::string& statement) {
    QueryOutput output(terminal_width(), json_output_);
    bool ended = false;
    JsonArrayElements elements([&](const json& element) {
      if (!ended && !output.print(element)) ended = true;
    });
    if (!stream_query(statement, [&](std::string_view piece) { elements.feed(piece); }))
      return false;
    console().out("Query terminated\n");
    return !output.failed();
  }

  // PRINT, as ksqlDB's CLI runs it: the server's lines as they come, but the empty ones it sends
  // to keep a quiet connection alive, until its LIMIT or Ctrl-C; then "Topic printing ceased".
  bool run_print(const std::string& statement) {
    std::string partial;  // a line whose end has not come yet
    auto lines = [&](std::string_view piece) {
      partial += piece;
      size_t start = 0;
      for (size_t end; (end = partial.find('\n', start)) != std::string::npos; start = end + 1)
        if (end > start) console().out(partial.substr(start, end - start + 1));
      partial.erase(0, start);
    };
    if (!stream_query(statement, lines)) return false;
    if (!partial.empty()) console().out(partial + "\n");
    console().out("Topic printing ceased\n");
    return true;
  }

  // POSTs `statement` to /query and hands each piece of a 200 answer to `on_piece` as it comes,
  // until the server ends it or Ctrl-C cancels it; false (the server's error printed) otherwise.
  bool stream_query(const std::string& statement,
                    const std::function<void(std::string_view)>& on_piece) {
    json body = {{"ksql", statement}, {"streamsProperties", properties_}};
    http::Request request{"POST",
                          "/query",
                          "",
                          body.dump(),
                          "application/vnd.ksql.v1+json",
                          "application/vnd.ksql.v1+json",
                          ""};
    http::StreamingRequest query;
    std::string error_body;
    http::Exchange exchange;
    {
      InterruptEndsQuery interrupt(query);
      exchange = query.run(url_, request, kStatementTimeoutMs, [&](std::string_view piece) {
        if (query.status() == 200)
          on_piece(piece);
        else
          error_body += piece;
      });
    }
    if (!exchange.response)
      throw Unreachable(
          fmt::format("Could not reach the SQL server at {}: {}", url_, exchange.error));
    if (exchange.response->status != 200) {
      console().error(fmt::format("{}\n", error_text(error_body)));
      return false;
    }
    return true;
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

  // SET and UNSET, kept by the CLI and sent with every request, as ksqlDB's CLI keeps them.
  bool set_property(const LocalProperty& set) {
    if (!set.value) {
      if (!properties_.contains(set.name)) {
        console().error(fmt::format(
            "Cannot unset local property '{}' which was never set in the first place\n", set.name));
        return false;
      }
      console().out(fmt::format("Successfully unset local property '{}' (value was '{}').\n",
                                set.name, properties_[set.name].get<std::string>()));
      properties_.erase(set.name);
      return true;
    }
    auto check = send("GET", "/is_valid_property/" + set.name, "");
    if (check.status != 200 && check.status != 404) {  // 404: a server that cannot say
      console().error(fmt::format("{}\n", error_text(check.body)));
      return false;
    }
    std::string prior = properties_.value(set.name, std::string());
    properties_[set.name] = *set.value;
    if (prior.empty())
      console().out(fmt::format(
          "Successfully changed local property '{}' to '{}'. Use the UNSET command to revert your "
          "change.\n",
          set.name, *set.value));
    else
      console().out(fmt::format("Successfully changed local property '{}' from '{}' to '{}'.\n",
                                set.name, prior, *set.value));
    return true;
  }

  std::string url_;
  bool json_output_;
  json properties_ = json::object();
  std::map<std::string, std::string> variables_;
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
    console().out(fmt::format("Oxbow SQL CLI, server {} (ksqlDB {} API) at {}\n",
                              info.value("ksqlServiceId", std::string("?")),
                              info.value("version", std::string("?")), client.url()));
  } catch (const Unreachable& e) {
    console().out(fmt::format("{}\n", e.what()));
  }
  console().out(fmt::format(
      "Statements end with ';'. RUN SCRIPT '<file>'; runs a file. Ctrl-D or exit leaves.\n\n"));
}

// The CLI's own commands, ksqlDB's: a line whose first word names one (a ';' after it allowed).
// Each has a help text, the bounds of its argument count and what it does.
struct CliCommand {
  const char* name;
  const char* help;
  size_t min_args, max_args;
  void (*run)(SqlClient& client, const std::vector<std::string>& args);
};

void print_help(SqlClient&, const std::vector<std::string>&);

const CliCommand kCliCommands[] = {
    {"help", "help:\n\tThis text.", 0, 0, print_help},
    {"output",
     "output:\n\tThe output format.\noutput <format>:\n\tPrint results as JSON or TABULAR.", 0, 1,
     [](SqlClient& client, const std::vector<std::string>& args) {
       if (args.empty())
         return console().out(
             fmt::format("Current output format: {}\n", client.json_output() ? "JSON" : "TABULAR"));
       std::string format = upper(args[0]);
       if (format != "JSON" && format != "TABULAR")
         throw std::runtime_error("Unknown output format: " + args[0] +
                                  " (valid formats: JSON, TABULAR)");
       client.set_json_output(format == "JSON");
     }},
    {"history", "history:\n\tThe lines entered before, numbered.", 0, 0,
     [](SqlClient&, const std::vector<std::string>&) {
       for (int i = 0; i < history_length; ++i)
         if (HIST_ENTRY* entry = history_get(history_base + i))
           console().out(fmt::format("{:4}: {}\n", history_base + i, entry->line));
     }},
    {"version", "version:\n\tThe version of ksqlDB's API the server follows.", 0, 0,
     [](SqlClient& client, const std::vector<std::string>&) {
       console().out(fmt::format("Version: {}\n", client.info().value("version", "?")));
     }},
    {"server", "server:\n\tThe server's URL.\nserver <url>:\n\tTalk to another server from now on.",
     0, 1,
     [](SqlClient& client, const std::vector<std::string>& args) {
       if (args.empty()) return console().out(client.url() + "\n");
       if (!args[0].starts_with("http://"))
         throw std::runtime_error("Server URL must begin with protocol (e.g., http://)");
       client.set_url(args[0]);
       console().out("Server now: " + args[0] + "\n");
       client.info();  // says at once when nothing answers there
     }},
    {"clear", "clear:\n\tClear the terminal.", 0, 0,
     [](SqlClient&, const std::vector<std::string>&) { console().out("\033[H\033[2J"); }},
    {"spool",
     "spool <file>|OFF:\n\tWrite the lines typed (after 'ksql> ') and what is printed into "
     "<file> too,\n\tuntil SPOOL OFF.",
     1, 1,
     [](SqlClient&, const std::vector<std::string>& args) {
       if (upper(args[0]) == "OFF") {
         std::string path = console().spool_off();
         if (!path.empty()) console().out("Spool written to " + path + "\n");
         return;
       }
       std::string_view quoted_path = args[0];
       std::string path =
           args[0].starts_with('\'') ? quoted(quoted_path).value_or(args[0]) : args[0];
       console().spool(path);
       console().out("Session will be spooled to " + std::filesystem::absolute(path).string() +
                     "\nEnter SPOOL OFF to disable\n");
     }},
};

void print_help(SqlClient&, const std::vector<std::string>&) {
  std::string text =
      "\nStatements end with ';' and may span lines; RUN SCRIPT '<file>'; runs a file's.\n"
      "SELECT ... EMIT CHANGES streams rows until its LIMIT or Ctrl-C.\n\n";
  for (const auto& command : kCliCommands) text += std::string(command.help) + "\n\n";
  text += "exit:\n\tLeave (Ctrl-D on an empty line too).\n";
  console().out(text);
}

// Runs `line` when it is one of the CLI's own commands; false when it is not.
bool run_cli_command(SqlClient& client, std::string_view line) {
  std::vector<std::string> words = line_words(line);
  if (words.empty()) return false;
  for (const auto& command : kCliCommands) {
    if (upper(words[0]) != upper(command.name)) continue;
    std::vector<std::string> args(words.begin() + 1, words.end());
    try {
      if (args.size() < command.min_args || args.size() > command.max_args)
        throw std::runtime_error(
            std::string(args.size() < command.min_args ? "Too few" : "Too many") + " parameters\n" +
            command.help);
      command.run(client, args);
    } catch (const std::exception& e) {
      console().error(fmt::format("{}\n", e.what()));
    }
    return true;
  }
  return false;
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
    console().typed(text);
    if (buffer.empty() && run_cli_command(client, text)) {
      add_history(text.c_str());
      write_history(history.c_str());
      continue;
    }
    buffer += (buffer.empty() ? "" : "\n") + text;
    if (!statement_complete(buffer)) continue;
    add_history(buffer.c_str());
    write_history(history.c_str());
    try {
      client.run(buffer);
    } catch (const Unreachable& e) {
      console().error(fmt::format("{}\n", e.what()));
    }
    buffer.clear();
  }
  console().out("\n");
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
