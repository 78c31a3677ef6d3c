#pragma once
// Kafka Connect's REST API over a standalone worker (ConnectorsResource, ConnectorPluginsResource,
// RootResource): paths, JSON bodies, status codes and the error body
// {"error_code": STATUS, "message": ...} as Connect's, without the HTTP server (the command
// serves it). Offsets (KIP-875) and active topics (KIP-558) are in rest_offsets.cpp,
// /admin/loggers in rest_loggers.cpp; distributed mode's endpoints are not served.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "connect/runtime/herder.h"
#include "connect/runtime/loggers.h"

namespace oxbow::connect::runtime {

struct RestRequest {
  std::string method;
  std::string path;   // without the query string
  std::string query;  // after '?', or empty
  std::string body;
};

// An error answered with its status and message.
struct RestError {
  int status;
  std::string message;
};

struct RestResponse {
  int status = 200;
  std::string body;  // JSON, or empty (204, 202)
};

struct RestInfo {
  std::string workerId;  // "host:port", as Connect's statuses name the worker
  std::string commit = "unknown";
  // The Kafka cluster's id for GET /; asked once, when first needed.
  std::function<std::string()> clusterId;
  // Sends a request on to another worker ("http://host:port"); nullopt with `error` set when it
  // could not be sent or answered. Unset: requests are never forwarded.
  std::function<std::optional<RestResponse>(const std::string& url, const RestRequest& request,
                                            std::string& error)>
      forward;
};

class ConnectRestApi {
 public:
  ConnectRestApi(Herder& worker, RestInfo info);
  // Once the server knows the port it answers on.
  void setWorkerId(std::string workerId) { info_.workerId = std::move(workerId); }
  // Never throws: errors become Connect's error bodies.
  RestResponse handle(const RestRequest& request);

 private:
  RestResponse route(const RestRequest& request);
  RestResponse forward(const RestRequest& request, const RedirectException& redirect);
  RestResponse connectors(const RestRequest& request, const std::vector<std::string>& parts);
  RestResponse plugins(const RestRequest& request, const std::vector<std::string>& parts);
  RestResponse listConnectors(const RestRequest& request);
  RestResponse connectorAction(const RestRequest& request, const std::string& name,
                               const std::string& action);
  // /connectors/NAME/offsets and /connectors/NAME/topics[/reset] (rest_offsets.cpp).
  RestResponse offsets(const RestRequest& request, const std::vector<std::string>& parts);
  RestResponse topics(const RestRequest& request, const std::vector<std::string>& parts);
  RestResponse admin(const RestRequest& request, const std::vector<std::string>& parts);
  static void checkName(const std::string& name, Properties& config);
  nlohmann::ordered_json pluginList(bool connectorsOnly) const;
  RestResponse validate(const std::string& pluginName, Properties config);
  RestResponse root();

  Herder& worker_;
  RestInfo info_;
  std::string clusterId_;
  WorkerLoggers loggers_;
};

}  // namespace oxbow::connect::runtime
