#pragma once
// What the internal topics' record formats share: values are JSON as Kafka's JsonConverter writes
// them without schemas, and a value that is not what its key calls for is logged and skipped.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/properties.h"

namespace oxbow::connect::runtime::distributed::record_json {

// The value parsed, or nullopt (logged with `what`) when it is not JSON.
std::optional<nlohmann::json> parse(const std::string& text, const std::string& what);
// The JSON type's name, for the log lines about a value of the wrong type.
std::string typeName(const nlohmann::json& value);
// An object of strings as properties (null values left out); nullopt when it is something else.
std::optional<Properties> stringMap(const nlohmann::json& value);
// "NAME-N" as a connector's name (everything before the last dash, dashes allowed) and a task
// number, as the task keys of the config and status topics end.
std::optional<std::pair<std::string, int>> connectorTask(std::string_view text);
// A JSON integer within int32's range, as Kafka's intValue() reads Integer or Long.
std::optional<int32_t> int32(const nlohmann::json& value);

}  // namespace oxbow::connect::runtime::distributed::record_json
