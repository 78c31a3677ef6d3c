#pragma once
// Broker configs changed at run time (AlterConfigs / IncrementalAlterConfigs on a BROKER
// resource), in two layers as in Kafka: for this broker (resource name = its node id) and the
// cluster-wide default (empty resource name); this broker's value wins. Only keys that are not
// read-only in the config table may change. Persisted in `<first log
// dir>/oxbow-broker-configs.json`:
//   {"broker": {"key": "value", ...}, "default": {"key": "value", ...}}
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "broker/config/config.h"

namespace oxbow::broker {

using ConfigMap = std::map<std::string, std::string>;

struct DynamicLayers {
  ConfigMap broker;
  ConfigMap cluster_default;
};

class DynamicConfigs {
 public:
  explicit DynamicConfigs(std::string path) : path_(std::move(path)) {}
  // Reads the file; a missing file is no dynamic config.
  bool load(std::string& error);
  DynamicLayers snapshot() const;
  bool store(const DynamicLayers& layers, std::string& error);

  // The configuration in effect: the static one with both dynamic layers over it. nullopt with
  // `error` when the combination is invalid.
  static std::optional<BrokerConfig> effective(const BrokerConfig& static_config,
                                               const DynamicLayers& layers, std::string& error);

 private:
  std::string path_;
  mutable std::mutex mutex_;
  DynamicLayers layers_;
};

}  // namespace oxbow::broker
