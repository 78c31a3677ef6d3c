// LoggingResource: /admin/loggers and /admin/loggers/NAME over the worker's spdlog loggers.
#include <nlohmann/json.hpp>

#include "common/properties.h"
#include "connect/runtime/rest_api.h"

namespace oxbow::connect::runtime {

namespace {

using Json = nlohmann::ordered_json;

Json levelJson(const LoggerLevel& level) {
  return Json{{"level", level.level},
              {"last_modified", level.lastModified ? Json(*level.lastModified) : Json(nullptr)}};
}

// The "level" of a PUT body; LoggingResource's 400 without it.
std::string requestedLevel(const std::string& body) {
  Json document;
  try {
    document = Json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw RestError{400, std::string("Cannot parse the request body as JSON: ") + e.what()};
  }
  if (!document.is_object()) throw RestError{400, "The request body must be a JSON object"};
  auto level = document.find("level");
  if (level == document.end() || level->is_null()) {
    throw RestError{400, "Desired 'level' parameter was not specified in request."};
  }
  return level->is_string() ? level->get<std::string>() : level->dump();
}

// LoggingResource's `scope`: "cluster" in any case, else the worker (Kafka's default).
bool clusterScope(const std::string& query) {
  for (const std::string& pair : split(query, '&')) {
    if (ascii_lower(pair) == "scope=cluster") return true;
  }
  return false;
}

}  // namespace

RestResponse ConnectRestApi::admin(const RestRequest& request,
                                   const std::vector<std::string>& parts) {
  if (parts.size() < 2 || parts.size() > 3 || parts[1] != "loggers") {
    throw RestError{404, "HTTP 404 Not Found"};
  }
  if (parts.size() == 2) {
    if (request.method != "GET") throw RestError{405, "HTTP 405 Method Not Allowed"};
    Json all = Json::object();
    for (const auto& [name, level] : loggers_.all()) all[name] = levelJson(level);
    return RestResponse{200, all.dump()};
  }
  const std::string& name = parts[2];
  if (request.method == "GET") {
    std::optional<LoggerLevel> level = loggers_.level(name);
    if (!level) throw NotFoundException("Logger " + name + " not found.");
    return RestResponse{200, levelJson(*level).dump()};
  }
  if (request.method != "PUT") throw RestError{405, "HTTP 405 Method Not Allowed"};
  std::string level = requestedLevel(request.body);
  // Kafka answers an unknown level with 404.
  if (!WorkerLoggers::validLevel(level)) {
    throw NotFoundException("invalid log level '" + level + "'.");
  }
  std::vector<std::string> changed = loggers_.setLevel(name, level);
  // A standalone worker is the whole cluster: scope=cluster sets the same loggers, answering 204.
  if (clusterScope(request.query)) return RestResponse{204, ""};
  return RestResponse{200, Json(changed).dump()};
}

}  // namespace oxbow::connect::runtime
