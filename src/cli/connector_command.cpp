// `oxbow connector`: Kafka Connect's connectors from the command line, over a worker's REST API
// (Kafka's, so it works against Apache Kafka's workers too): list, create from a file, describe,
// status, pause, resume, stop, restart, delete, and read, alter or reset their offsets.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/client_config.h"
#include "cli/commands.h"
#include "cli/rest_call.h"
#include "common/properties.h"

namespace oxbow::cli {

namespace {

// Ordered, so that a connector's config prints as the worker listed it.
using Json = nlohmann::ordered_json;

struct ConnectorOptions {
  std::string url = "http://127.0.0.1:8083";
  std::string name, file, set;
  bool status = false, json = false, include_tasks = false, only_failed = false, reset = false;
};

std::string first_line(const std::string& text) {
  return text.substr(0, text.find_first_of("\r\n"));
}

// A connector's name goes into the path: everything but unreserved characters is escaped.
std::string path_segment(const std::string& text) {
  static constexpr std::string_view kUnreserved = "-_.~";
  std::string out;
  for (unsigned char c : text) {
    bool plain = std::isalnum(c) || kUnreserved.find(static_cast<char>(c)) != std::string::npos;
    out += plain ? std::string(1, static_cast<char>(c)) : fmt::format("%{:02X}", c);
  }
  return out;
}

std::string connector_path(const ConnectorOptions& o, const std::string& rest = "") {
  return "/connectors/" + path_segment(o.name) + rest;
}

// The answer's JSON (null for an empty body); an error fails the command with one line.
Json call(const ConnectorOptions& o, const std::string& method, const std::string& path,
          const Json& body = nullptr) {
  http::Response response = rest_call({o.url, "the Connect worker", "application/json"}, method,
                                      path, body.is_null() ? "" : body.dump());
  if (response.body.empty()) return nullptr;
  Json answer = Json::parse(response.body, nullptr, false);
  if (answer.is_discarded()) fail("the worker's answer is not JSON: " + first_line(response.body));
  return answer;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Connect's configs are strings; a JSON file may hold numbers or booleans for them.
Json string_values(const Json& config) {
  Json out = Json::object();
  for (const auto& [key, value] : config.items())
    out[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return out;
}

// The body of POST /connectors from a JSON file: {"name", "config"} as the API takes it, or a
// flat config map holding its own `name` (as GET /connectors/NAME/config answers).
Json create_body_from_json(const Json& file, const std::string& path) {
  if (!file.is_object()) fail(path + ": expected a JSON object");
  bool wrapped = file.contains("config") && file["config"].is_object();
  Json config = string_values(wrapped ? file["config"] : file);
  std::string name = file.contains("name") && file["name"].is_string()
                         ? file["name"].get<std::string>()
                         : config.value("name", "");
  if (name.empty()) fail(path + ": the connector has no name");
  return Json{{"name", name}, {"config", config}};
}

Json create_body(const std::string& path) {
  std::string text = read_file(path);
  if (!trim(text).empty() && trim(text).front() == '{') {
    Json file = Json::parse(text, nullptr, false);
    if (file.is_discarded()) fail(path + ": not valid JSON");
    return create_body_from_json(file, path);
  }
  Properties properties;
  if (auto error = parse_properties(text, properties)) fail(path + ": " + *error);
  Json config = Json::object();
  for (const auto& [key, value] : properties) config[key] = value;
  return create_body_from_json(config, path);
}

void print_list(const ConnectorOptions& o) {
  if (!o.status) {
    for (const auto& name : call(o, "GET", "/connectors"))
      fmt::print("{}\n", name.get<std::string>());
    return;
  }
  Json all = call(o, "GET", "/connectors?expand=status");
  fmt::print("{:<30} {:<8} {}\n", "NAME", "TYPE", "STATE");
  for (const auto& [name, entry] : all.items()) {
    const Json& status = entry["status"];
    fmt::print("{:<30} {:<8} {}\n", name, status.value("type", ""),
               status["connector"].value("state", ""));
  }
}

void print_description(const Json& info) {
  fmt::print("Name:   {}\nType:   {}\nConfig:\n", info.value("name", ""), info.value("type", ""));
  for (const auto& [key, value] : info["config"].items())
    fmt::print("  {} = {}\n", key, value.is_string() ? value.get<std::string>() : value.dump());
  std::string tasks;
  for (const auto& task : info["tasks"])
    tasks += (tasks.empty() ? "" : ", ") + std::to_string(task.value("task", 0));
  fmt::print("Tasks:  {}\n", tasks.empty() ? "none" : tasks);
}

void print_state_line(const std::string& what, const Json& state) {
  fmt::print("{:<10} {:<12} worker {}\n", what, state.value("state", ""),
             state.value("worker_id", ""));
  std::string trace = state.value("trace", "");
  if (!trace.empty()) fmt::print("           {}\n", first_line(trace));
}

void print_status(const Json& status) {
  fmt::print("Connector {} ({})\n", status.value("name", ""), status.value("type", ""));
  print_state_line("connector", status["connector"]);
  for (const auto& task : status["tasks"])
    print_state_line("task " + std::to_string(task.value("id", 0)), task);
}

void print_json_or(const ConnectorOptions& o, const Json& answer, void (*print)(const Json&)) {
  if (o.json)
    fmt::print("{}\n", answer.dump(2));
  else
    print(answer);
}

std::string restart_query(const ConnectorOptions& o) {
  std::string query;
  if (o.include_tasks) query += "includeTasks=true";
  if (o.only_failed) query += std::string(query.empty() ? "" : "&") + "onlyFailed=true";
  return query.empty() ? "" : "?" + query;
}

void restart(const ConnectorOptions& o) {
  Json answer = call(o, "POST", connector_path(o, "/restart" + restart_query(o)));
  fmt::print("Restarted connector {}\n", o.name);
  // KIP-745's restart answers with the states it left the connector and tasks in.
  if (!answer.is_null()) print_status(answer);
}

void offsets(const ConnectorOptions& o) {
  if (o.reset && !o.set.empty()) fail("--reset and --set exclude each other");
  if (!o.reset && o.set.empty()) {
    fmt::print("{}\n", call(o, "GET", connector_path(o, "/offsets")).dump(2));
    return;
  }
  Json answer;
  if (o.reset) {
    answer = call(o, "DELETE", connector_path(o, "/offsets"));
  } else {
    bool inline_json = trim(o.set).starts_with("{");
    Json body = Json::parse(inline_json ? o.set : read_file(o.set), nullptr, false);
    if (body.is_discarded()) fail("--set: not valid JSON");
    answer = call(o, "PATCH", connector_path(o, "/offsets"), body);
  }
  fmt::print("{}\n", answer.is_object() ? answer.value("message", "") : std::string());
}

CLI::App* named(CLI::App* parent, const char* name, const char* description, ConnectorOptions& o) {
  CLI::App* sub = parent->add_subcommand(name, description);
  sub->add_option("name", o.name, "Connector name")->required();
  return sub;
}

// pause, resume and stop: a PUT and one line saying it was done.
void add_state_command(CLI::App* parent, const std::shared_ptr<ConnectorOptions>& o,
                       const char* action, const char* done, const char* description) {
  named(parent, action, description, *o)->callback([o, action, done] {
    call(*o, "PUT", connector_path(*o, std::string("/") + action));
    fmt::print("{} connector {}\n", done, o->name);
  });
}

void add_read_commands(CLI::App* connector, const std::shared_ptr<ConnectorOptions>& o) {
  auto* list = connector->add_subcommand("list", "List the connectors");
  list->add_flag("-s,--status", o->status, "A table of each connector's type and state");
  list->callback([o] { print_list(*o); });

  auto* describe = named(connector, "describe", "Show a connector's config and tasks", *o);
  describe->add_flag("--json", o->json, "Print the worker's JSON");
  describe->callback(
      [o] { print_json_or(*o, call(*o, "GET", connector_path(*o)), print_description); });

  auto* status = named(connector, "status", "Show the state of a connector and its tasks", *o);
  status->add_flag("--json", o->json, "Print the worker's JSON");
  status->callback(
      [o] { print_json_or(*o, call(*o, "GET", connector_path(*o, "/status")), print_status); });

  auto* offs =
      named(connector, "offsets",
            "Show a connector's offsets, or --reset or --set them (it must be stopped)", *o);
  offs->add_flag("--reset", o->reset, "Delete the connector's offsets");
  offs->add_option("--set", o->set,
                   "Alter offsets: a JSON file or inline JSON of the shape `offsets` prints");
  offs->callback([o] { offsets(*o); });
}

void add_write_commands(CLI::App* connector, const std::shared_ptr<ConnectorOptions>& o) {
  auto* create =
      connector->add_subcommand("create", "Create a connector from a .properties or JSON file");
  create->add_option("file", o->file, "Config file")->required();
  create->callback([o] {
    Json answer = call(*o, "POST", "/connectors", create_body(o->file));
    fmt::print("Created connector {}\n", answer.value("name", ""));
  });

  // PUT /connectors/NAME/config: the worker answers 201 when it created the connector.
  auto* update = connector->add_subcommand(
      "update",
      "Replace a connector's config from a .properties or JSON file (creating it if new)");
  update->add_option("file", o->file, "Config file")->required();
  update->callback([o] {
    Json body = create_body(o->file);
    o->name = body["name"].get<std::string>();
    http::Response response = rest_call({o->url, "the Connect worker", "application/json"}, "PUT",
                                        connector_path(*o, "/config"), body["config"].dump());
    fmt::print("{} connector {}\n", response.status == 201 ? "Created" : "Updated", o->name);
  });

  add_state_command(connector, o, "pause", "Paused", "Pause a connector and its tasks");
  add_state_command(connector, o, "resume", "Resumed", "Resume a paused or stopped connector");
  add_state_command(connector, o, "stop", "Stopped",
                    "Stop a connector and shut its tasks down (before altering offsets)");

  auto* restart_cmd = named(connector, "restart", "Restart a connector", *o);
  restart_cmd->add_flag("--include-tasks", o->include_tasks, "Restart its tasks too");
  restart_cmd->add_flag("--only-failed", o->only_failed, "Only those that failed");
  restart_cmd->callback([o] { restart(*o); });

  named(connector, "delete", "Delete a connector", *o)->callback([o] {
    call(*o, "DELETE", connector_path(*o));
    fmt::print("Deleted connector {}\n", o->name);
  });
}

}  // namespace

void add_connector_command(CLI::App& app) {
  auto o = std::make_shared<ConnectorOptions>();
  auto* connector = app.add_subcommand(
      "connector", "Kafka Connect connectors, over a worker's REST API (Kafka Connect's)");
  connector->add_option("--url", o->url, "The Connect worker's URL")->capture_default_str();
  connector->require_subcommand(1);
  add_read_commands(connector, o);
  add_write_commands(connector, o);
}

}  // namespace oxbow::cli
