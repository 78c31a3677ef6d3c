// Connect's REST resources: routing, request bodies and the JSON entities Connect writes
// (ConnectorInfo, ConnectorStateInfo, TaskInfo, PluginInfo, ServerInfo).
#include "connect/runtime/rest_api.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "connect/config_infos.h"
#include "connect/runtime/connector_config_def.h"
#include "oxbow/connect/config_def.h"
#include "oxbow/connect/converter.h"
#include "oxbow/connect/transformation.h"

namespace oxbow::connect::runtime {

namespace {

using Json = nlohmann::ordered_json;

RestResponse json(int status, const Json& body) {
  return RestResponse{status, body.dump()};
}

RestResponse errorBody(int status, const std::string& message) {
  return json(status, Json{{"error_code", status}, {"message", message}});
}

// Jersey's answers for a path no resource has and a method the resource lacks.
RestError notFoundPath() {
  return {404, "HTTP 404 Not Found"};
}
RestError methodNotAllowed() {
  return {405, "HTTP 405 Method Not Allowed"};
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percentDecode(std::string_view text, bool plusIsSpace) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hexDigit(text[i + 1]) >= 0 &&
        hexDigit(text[i + 2]) >= 0) {
      out += static_cast<char>(hexDigit(text[i + 1]) * 16 + hexDigit(text[i + 2]));
      i += 2;
    } else {
      out += plusIsSpace && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

std::vector<std::string> splitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) parts.push_back(percentDecode(path.substr(start, end - start), false));
    start = end + 1;
  }
  return parts;
}

// Every value of a query parameter, in order.
std::vector<std::string> queryValues(std::string_view query, std::string_view name) {
  std::vector<std::string> values;
  size_t start = 0;
  while (start < query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(start, end - start);
    size_t eq = pair.find('=');
    if (percentDecode(pair.substr(0, eq), true) == name) {
      values.push_back(eq == std::string_view::npos ? ""
                                                    : percentDecode(pair.substr(eq + 1), true));
    }
    start = end + 1;
  }
  return values;
}

bool queryFlag(std::string_view query, std::string_view name) {
  std::vector<std::string> values = queryValues(query, name);
  return !values.empty() && values.back() == "true";
}

// The internal task-configs request's body: a list of string maps.
std::vector<Props> taskConfigsFrom(const Json& body) {
  if (!body.is_array()) throw RestError{400, "Task configs must be a JSON array of objects"};
  std::vector<Props> configs;
  for (const Json& task : body) {
    if (!task.is_object()) throw RestError{400, "Task configs must be a JSON array of objects"};
    Props props;
    for (const auto& [key, value] : task.items()) {
      if (!value.is_string()) throw RestError{400, "Task config values must be strings"};
      props[key] = value.get<std::string>();
    }
    configs.push_back(std::move(props));
  }
  return configs;
}

Json parseBody(const std::string& body) {
  try {
    return Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw RestError{400, std::string("Cannot parse the request body as JSON: ") + e.what()};
  }
}

// A JSON object of strings (a connector's config); Connect takes other scalars as their text.
Properties configFrom(const Json& object) {
  if (!object.is_object()) throw RestError{400, "The connector config must be a JSON object"};
  Properties props;
  for (const auto& [key, value] : object.items()) {
    if (value.is_null()) continue;
    props[key] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return props;
}

Json taskIds(const ConnectorInfo& info) {
  Json tasks = Json::array();
  for (size_t i = 0; i < info.taskConfigs.size(); ++i) {
    tasks.push_back(Json{{"connector", info.name}, {"task", i}});
  }
  return tasks;
}

Json connectorInfoJson(const ConnectorInfo& info) {
  return Json{
      {"name", info.name}, {"config", info.config}, {"tasks", taskIds(info)}, {"type", info.type}};
}

Json taskStateJson(const TaskStatus& task, const std::string& workerId) {
  Json state{{"id", task.id},
             {"state", task.state},
             {"worker_id", task.workerId.empty() ? workerId : task.workerId}};
  if (task.state == "FAILED") state["trace"] = task.failure;
  return state;
}

Json statusJson(const ConnectorStatus& status, const std::string& workerId) {
  Json connector{{"state", status.state},
                 {"worker_id", status.workerId.empty() ? workerId : status.workerId}};
  if (status.state == "FAILED") connector["trace"] = status.trace;
  Json tasks = Json::array();
  for (const TaskStatus& task : status.tasks) tasks.push_back(taskStateJson(task, workerId));
  return Json{{"name", status.name},
              {"connector", std::move(connector)},
              {"tasks", std::move(tasks)},
              {"type", status.type}};
}

int taskId(const std::string& text) {
  try {
    size_t used = 0;
    int id = std::stoi(text, &used);
    if (used == text.size()) return id;
  } catch (const std::exception&) {
  }
  throw notFoundPath();
}

}  // namespace

ConnectRestApi::ConnectRestApi(Herder& worker, RestInfo info)
    : worker_(worker), info_(std::move(info)) {}

RestResponse ConnectRestApi::handle(const RestRequest& request) {
  try {
    return route(request);
  } catch (const RestError& e) {
    return errorBody(e.status, e.message);
  } catch (const RedirectException& e) {
    return forward(request, e);
  } catch (const ConflictException& e) {
    return errorBody(409, e.what());
  } catch (const NotFoundException& e) {
    return errorBody(404, e.what());
  } catch (const AlreadyExistsException& e) {
    return errorBody(409, e.what());
  } catch (const BadRequestException& e) {
    return errorBody(400, e.what());
  } catch (const ConfigException& e) {
    return errorBody(400, e.what());
  } catch (const std::exception& e) {
    spdlog::warn("connect: REST {} {} failed: {}", request.method, request.path, e.what());
    return errorBody(500, e.what());
  }
}

// Connect's forwarding: once only (the forwarded request carries forward=false), so that two
// workers that each think the other leads answer 409 instead of passing a request round.
RestResponse ConnectRestApi::forward(const RestRequest& request,
                                     const RedirectException& redirect) {
  const char* conflict =
      "Cannot complete request because of a conflicting operation (e.g. worker rebalance)";
  std::vector<std::string> forwardFlag = queryValues(request.query, "forward");
  if (!info_.forward || (!forwardFlag.empty() && forwardFlag.back() == "false")) {
    return errorBody(409, conflict);
  }
  RestRequest forwarded = request;
  forwarded.query += std::string(forwarded.query.empty() ? "" : "&") + "forward=false";
  std::string error;
  std::optional<RestResponse> answer = info_.forward(redirect.url(), forwarded, error);
  if (answer) return *answer;
  spdlog::warn("connect: forwarding {} {} to {} failed: {}", request.method, request.path,
               redirect.url(), error);
  return errorBody(500, "IO Error trying to forward REST request: " + error);
}

RestResponse ConnectRestApi::route(const RestRequest& request) {
  std::vector<std::string> parts = splitPath(request.path);
  if (parts.empty()) {
    if (request.method != "GET") throw methodNotAllowed();
    return root();
  }
  if (parts[0] == "connectors") return connectors(request, parts);
  if (parts[0] == "connector-plugins") return plugins(request, parts);
  if (parts[0] == "admin") return admin(request, parts);
  throw notFoundPath();
}

RestResponse ConnectRestApi::root() {
  if (clusterId_.empty() && info_.clusterId) clusterId_ = info_.clusterId();
  return json(200,
              Json{{"version", connectVersion()},
                   {"commit", info_.commit},
                   {"kafka_cluster_id", clusterId_.empty() ? Json(nullptr) : Json(clusterId_)}});
}

RestResponse ConnectRestApi::connectors(const RestRequest& request,
                                        const std::vector<std::string>& parts) {
  const std::string& method = request.method;
  if (parts.size() == 1) {
    if (method == "GET") return listConnectors(request);
    if (method != "POST") throw methodNotAllowed();
    Json body = parseBody(request.body);
    if (!body.is_object() || !body.contains("name") || !body["name"].is_string() ||
        body["name"].get<std::string>().empty()) {
      throw RestError{400, "Connector name must be given in the request's \"name\""};
    }
    std::string name = body["name"].get<std::string>();
    if (name.find('/') != std::string::npos) {
      throw RestError{400, "connector name should not contain '/'"};
    }
    Properties config = configFrom(body.value("config", Json::object()));
    checkName(name, config);
    worker_.putConnector(name, config, true);
    return json(201, connectorInfoJson(worker_.connectorInfo(name)));
  }
  const std::string& name = parts[1];
  if (parts.size() == 2) {
    if (method == "GET") return json(200, connectorInfoJson(worker_.connectorInfo(name)));
    if (method != "DELETE") throw methodNotAllowed();
    worker_.deleteConnector(name);
    return RestResponse{204, ""};
  }
  if (parts[2] == "offsets") return offsets(request, parts);
  if (parts[2] == "topics") return topics(request, parts);
  if (parts.size() == 3 && parts[2] == "tasks" && method == "POST") {
    worker_.putTaskConfigs(name, taskConfigsFrom(parseBody(request.body)));
    return RestResponse{204, ""};
  }
  if (parts.size() == 3) return connectorAction(request, name, parts[2]);
  if (parts[2] != "tasks" || parts.size() != 5) throw notFoundPath();
  int task = taskId(parts[3]);
  if (parts[4] == "status") {
    if (method != "GET") throw methodNotAllowed();
    ConnectorStatus status;
    try {
      status = worker_.connectorStatus(name);
    } catch (const NotFoundException&) {
      status.tasks.clear();
    }
    if (task < 0 || static_cast<size_t>(task) >= status.tasks.size()) {
      throw NotFoundException("No status found for task " + name + "-" + parts[3]);
    }
    return json(200, taskStateJson(status.tasks[task], info_.workerId));
  }
  if (parts[4] != "restart") throw notFoundPath();
  if (method != "POST") throw methodNotAllowed();
  worker_.restartTask(name, task);
  return RestResponse{204, ""};
}

RestResponse ConnectRestApi::listConnectors(const RestRequest& request) {
  std::vector<std::string> expand = queryValues(request.query, "expand");
  std::vector<std::string> names = worker_.connectorNames();
  if (expand.empty()) return json(200, Json(names));
  bool status = std::find(expand.begin(), expand.end(), "status") != expand.end();
  bool info = std::find(expand.begin(), expand.end(), "info") != expand.end();
  Json out = Json::object();
  for (const std::string& name : names) {
    Json entry = Json::object();
    // A connector deleted between the list and its details is left out.
    try {
      if (status) entry["status"] = statusJson(worker_.connectorStatus(name), info_.workerId);
      if (info) entry["info"] = connectorInfoJson(worker_.connectorInfo(name));
    } catch (const NotFoundException&) {
      continue;
    }
    out[name] = std::move(entry);
  }
  return json(200, out);
}

RestResponse ConnectRestApi::connectorAction(const RestRequest& request, const std::string& name,
                                             const std::string& action) {
  const std::string& method = request.method;
  auto requireMethod = [&](const char* wanted) {
    if (method != wanted) throw methodNotAllowed();
  };
  if (action == "config") {
    if (method == "GET") return json(200, Json(worker_.connectorInfo(name).config));
    requireMethod("PUT");
    Properties config = configFrom(parseBody(request.body));
    checkName(name, config);
    bool created = worker_.putConnector(name, config, false);
    return json(created ? 201 : 200, connectorInfoJson(worker_.connectorInfo(name)));
  }
  if (action == "status") {
    requireMethod("GET");
    return json(200, statusJson(worker_.connectorStatus(name), info_.workerId));
  }
  if (action == "tasks") {
    requireMethod("GET");
    ConnectorInfo info = worker_.connectorInfo(name);
    Json tasks = Json::array();
    Json ids = taskIds(info);
    for (size_t i = 0; i < info.taskConfigs.size(); ++i) {
      tasks.push_back(Json{{"id", ids[i]}, {"config", info.taskConfigs[i]}});
    }
    return json(200, tasks);
  }
  if (action == "pause" || action == "resume" || action == "stop") {
    requireMethod("PUT");
    worker_.connectorInfo(name);  // 404 first
    TargetState state = action == "pause"    ? TargetState::PAUSED
                        : action == "resume" ? TargetState::STARTED
                                             : TargetState::STOPPED;
    worker_.setTargetState(name, state);
    return RestResponse{action == "stop" ? 204 : 202, ""};
  }
  if (action == "restart") {
    requireMethod("POST");
    bool includeTasks = queryFlag(request.query, "includeTasks");
    bool onlyFailed = queryFlag(request.query, "onlyFailed");
    worker_.restartConnector(name, includeTasks, onlyFailed);
    // Connect answers the plain restart with no body, the KIP-745 one with the states.
    if (!includeTasks && !onlyFailed) return RestResponse{204, ""};
    return json(202, statusJson(worker_.connectorStatus(name), info_.workerId));
  }
  throw notFoundPath();
}

// ConnectorsResource's check that a config's own name agrees with the connector's.
void ConnectRestApi::checkName(const std::string& name, Properties& config) {
  auto found = config.find("name");
  if (found != config.end() && found->second != name) {
    throw RestError{400, "Connector name configuration (" + found->second +
                             ") doesn't match connector name in the URL (" + name + ")"};
  }
  config["name"] = name;
}

RestResponse ConnectRestApi::plugins(const RestRequest& request,
                                     const std::vector<std::string>& parts) {
  if (parts.size() == 1) {
    if (request.method != "GET") throw methodNotAllowed();
    std::vector<std::string> only = queryValues(request.query, "connectorsOnly");
    return json(200, pluginList(only.empty() || only.back() != "false"));
  }
  if (parts.size() < 3 || parts.size() > 4 || parts[2] != "config") throw notFoundPath();
  const ConnectorPlugins& registry = worker_.plugins();
  if (parts.size() == 3) {
    if (request.method != "GET") throw methodNotAllowed();
    std::unique_ptr<Connector> connector;
    try {
      connector = registry.newConnector(parts[1]);
    } catch (const ConnectException& e) {
      throw NotFoundException(e.what());
    }
    Json keys = Json::array();
    ConfigDef definition = connector->config();
    for (const ConfigDef::ConfigKey& key : definition.configKeys()) {
      keys.push_back(configKeyInfo(key));
    }
    return json(200, keys);
  }
  if (parts[3] != "validate") throw notFoundPath();
  if (request.method != "PUT") throw methodNotAllowed();
  return validate(parts[1], configFrom(parseBody(request.body)));
}

Json ConnectRestApi::pluginList(bool connectorsOnly) const {
  Json list = Json::array();
  for (const ConnectorPlugin* plugin : worker_.plugins().connectors()) {
    list.push_back(Json{{"class", plugin->className},
                        {"type", pluginTypeName(plugin->type)},
                        {"version", plugin->version}});
  }
  if (connectorsOnly) return list;
  auto add = [&](const std::vector<std::string>& names, const char* type) {
    for (const std::string& name : names) {
      list.push_back(Json{{"class", name}, {"type", type}, {"version", connectVersion()}});
    }
  };
  add(transformationClassNames(), "transformation");
  add(predicateClassNames(), "predicate");
  add(ConverterRegistry::instance().classNames(), "converter");
  add(ConverterRegistry::instance().headerConverterClassNames(), "header_converter");
  return list;
}

RestResponse ConnectRestApi::validate(const std::string& pluginName, Properties config) {
  const ConnectorPlugins& registry = worker_.plugins();
  const ConnectorPlugin* plugin = nullptr;
  try {
    plugin = &registry.connectorPlugin(pluginName);
  } catch (const ConnectException& e) {
    throw BadRequestException(e.what());
  }
  auto included = config.find("connector.class");
  if (included != config.end()) {
    const ConnectorPlugin* other = nullptr;
    try {
      other = &registry.connectorPlugin(included->second);
    } catch (const ConnectException&) {
    }
    if (other != plugin) {
      throw RestError{400, "Included connector type " + included->second +
                               " does not match request type " + pluginName};
    }
  }
  config["connector.class"] = plugin->className;
  std::unique_ptr<Connector> connector = plugin->create();
  ConnectorKind kind =
      plugin->type == PluginType::SINK ? ConnectorKind::SINK : ConnectorKind::SOURCE;
  ConfigDef definition = connectorConfigDef(kind);
  std::vector<ConfigValue> values = definition.validate(config);
  ConfigDef own = connector->config();
  for (const ConfigDef::ConfigKey& key : own.configKeys()) {
    if (definition.find(key.name) == nullptr) definition.define(key);
  }
  Config validated = connector->validate(config);
  for (const ConfigValue& value : validated.configValues()) {
    auto known = std::find_if(values.begin(), values.end(),
                              [&](const ConfigValue& other) { return other.name == value.name; });
    if (known == values.end()) {
      values.push_back(value);
    } else {
      known->errorMessages.insert(known->errorMessages.end(), value.errorMessages.begin(),
                                  value.errorMessages.end());
    }
  }
  if (kind == ConnectorKind::SINK) sinkConfigErrors(config, values);
  return json(200, configInfos(plugin->className, definition, values));
}

}  // namespace oxbow::connect::runtime
