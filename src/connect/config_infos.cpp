// Connect's ConfigInfos and its parts as JSON.
#include "connect/config_infos.h"

#include <algorithm>

namespace oxbow::connect {

namespace {

nlohmann::ordered_json textOrNull(const ParsedValue& value) {
  std::optional<std::string> text = convertToString(value);
  return text ? nlohmann::ordered_json(*text) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json configKeyInfo(const ConfigDef::ConfigKey& key) {
  nlohmann::ordered_json info;
  info["name"] = key.name;
  info["type"] = ConfigDef::typeName(key.type);
  info["required"] = !key.hasDefault();
  info["default_value"] = key.hasDefault() ? textOrNull(key.defaultValue.value()) : nullptr;
  info["importance"] = ConfigDef::importanceName(key.importance);
  info["documentation"] = key.documentation;
  info["group"] = key.group ? nlohmann::ordered_json(*key.group) : nlohmann::ordered_json(nullptr);
  info["width"] = ConfigDef::widthName(key.width);
  info["display_name"] = key.displayName;
  info["dependents"] = key.dependents;
  // Jackson writes ConfigKeyInfo's orderInGroup through its getter, named "order".
  info["order"] = key.orderInGroup;
  return info;
}

nlohmann::ordered_json configValueInfo(const ConfigValue& value) {
  nlohmann::ordered_json info;
  info["name"] = value.name;
  info["value"] = textOrNull(value.value);
  nlohmann::ordered_json recommended = nlohmann::ordered_json::array();
  for (const ParsedValue& candidate : value.recommendedValues) {
    recommended.push_back(textOrNull(candidate));
  }
  info["recommended_values"] = std::move(recommended);
  info["errors"] = value.errorMessages;
  info["visible"] = value.visible;
  return info;
}

nlohmann::ordered_json configInfos(std::string_view name, const ConfigDef& definition,
                                   const std::vector<ConfigValue>& values) {
  size_t errorCount = 0;
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (const ConfigValue& value : values) {
    if (definition.find(value.name)) continue;
    errorCount += value.errorMessages.size();
    configs.push_back({{"definition", nullptr}, {"value", configValueInfo(value)}});
  }
  for (const ConfigDef::ConfigKey& key : definition.configKeys()) {
    auto found = std::find_if(values.begin(), values.end(),
                              [&](const ConfigValue& value) { return value.name == key.name; });
    nlohmann::ordered_json config;
    config["definition"] = configKeyInfo(key);
    config["value"] = nullptr;
    if (found != values.end()) {
      config["value"] = configValueInfo(*found);
      errorCount += found->errorMessages.size();
    }
    configs.push_back(std::move(config));
  }
  nlohmann::ordered_json infos;
  infos["name"] = name;
  infos["error_count"] = errorCount;
  infos["groups"] = definition.groups();
  infos["configs"] = std::move(configs);
  return infos;
}

}  // namespace oxbow::connect
