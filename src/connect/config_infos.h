#pragma once
// Connect's REST entities for config definitions and validation results (ConfigKeyInfo,
// ConfigValueInfo, ConfigInfo, ConfigInfos) as the JSON Connect's REST API writes, field names and
// order as Kafka's Jackson annotations give them.
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "oxbow/connect/config_def.h"

namespace oxbow::connect {

// One config's definition: name, type, required, default_value (null when required),
// importance, documentation, group, width, display_name, dependents, order. What
// GET /connector-plugins/{plugin}/config lists.
nlohmann::ordered_json configKeyInfo(const ConfigDef::ConfigKey& key);

// One config's validation: name, value (as text, null when null), recommended_values, errors,
// visible; a password's value is "[hidden]".
nlohmann::ordered_json configValueInfo(const ConfigValue& value);

// The validate endpoint's answer (AbstractHerder.generateResult): name, error_count (every error
// message counted), groups, and configs: first each value no definition has (definition null),
// then each defined config with its value (null when validate() gave none).
nlohmann::ordered_json configInfos(std::string_view name, const ConfigDef& definition,
                                   const std::vector<ConfigValue>& values);

}  // namespace oxbow::connect
