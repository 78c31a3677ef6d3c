// KIP-875's offsets and KIP-558's active topics endpoints of ConnectorsResource.
#include <nlohmann/json.hpp>

#include "connect/runtime/active_topics.h"
#include "connect/runtime/offsets_api.h"
#include "connect/runtime/rest_api.h"

namespace oxbow::connect::runtime {

namespace {

using Json = nlohmann::ordered_json;

RestResponse jsonResponse(int status, const Json& body) {
  return RestResponse{status, body.dump()};
}

[[noreturn]] void notAllowed() {
  throw RestError{405, "HTTP 405 Method Not Allowed"};
}

}  // namespace

RestResponse ConnectRestApi::offsets(const RestRequest& request,
                                     const std::vector<std::string>& parts) {
  if (parts.size() != 3) throw RestError{404, "HTTP 404 Not Found"};
  const std::string& name = parts[1];
  if (request.method == "GET") return jsonResponse(200, connectorOffsets(worker_, name));
  std::string message;
  if (request.method == "PATCH") {
    message = alterConnectorOffsets(worker_, name, parseOffsetsBody(request.body));
  } else if (request.method == "DELETE") {
    message = resetConnectorOffsets(worker_, name);
  } else {
    notAllowed();
  }
  return jsonResponse(200, Json{{"message", message}});
}

RestResponse ConnectRestApi::topics(const RestRequest& request,
                                    const std::vector<std::string>& parts) {
  bool reset = parts.size() == 4 && parts[3] == "reset";
  if (parts.size() != 3 && !reset) throw RestError{404, "HTTP 404 Not Found"};
  if (request.method != (reset ? "PUT" : "GET")) notAllowed();
  const WorkerConfig& config = worker_.config();
  if (!config.topicTrackingEnable) throw RestError{403, "Topic tracking is disabled."};
  const std::string& name = parts[1];
  // As Connect, an unknown connector has no topics rather than a 404.
  if (!reset) {
    return jsonResponse(200, Json{{name, Json{{"topics", worker_.activeTopics().topics(name)}}}});
  }
  if (!config.topicTrackingAllowReset) throw RestError{403, "Topic tracking reset is disabled."};
  worker_.activeTopics().reset(name);
  return RestResponse{202, ""};
}

}  // namespace oxbow::connect::runtime
