#include "broker/config/dynamic_configs.h"

#include <nlohmann/json.hpp>

#include "storage/file.h"

namespace oxbow::broker {

namespace {

nlohmann::json to_json(const ConfigMap& map) {
  auto object = nlohmann::json::object();
  for (const auto& [k, v] : map) object[k] = v;
  return object;
}

ConfigMap from_json(const nlohmann::json& object) {
  ConfigMap map;
  if (!object.is_object()) return map;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) map[k] = v.get<std::string>();
  }
  return map;
}

}  // namespace

bool DynamicConfigs::load(std::string& error) {
  std::string text;
  if (!storage::read_whole_file(path_, text)) return true;
  auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    error = path_ + ": not valid JSON";
    return false;
  }
  std::lock_guard lock(mutex_);
  layers_.broker = from_json(parsed.value("broker", nlohmann::json::object()));
  layers_.cluster_default = from_json(parsed.value("default", nlohmann::json::object()));
  return true;
}

DynamicLayers DynamicConfigs::snapshot() const {
  std::lock_guard lock(mutex_);
  return layers_;
}

bool DynamicConfigs::store(const DynamicLayers& layers, std::string& error) {
  nlohmann::json doc = {{"broker", to_json(layers.broker)},
                        {"default", to_json(layers.cluster_default)}};
  std::lock_guard lock(mutex_);
  if (!storage::write_file_atomically(path_, doc.dump(2) + "\n", error)) return false;
  layers_ = layers;
  return true;
}

std::optional<BrokerConfig> DynamicConfigs::effective(const BrokerConfig& static_config,
                                                      const DynamicLayers& layers,
                                                      std::string& error) {
  Properties merged = static_config.given;
  for (const auto& [k, v] : layers.cluster_default) merged[k] = v;
  for (const auto& [k, v] : layers.broker) merged[k] = v;
  std::vector<std::string> warnings;
  return make_broker_config(merged, error, warnings);
}

}  // namespace oxbow::broker
