// Connector plugins by class name and alias, as Connect's Plugins.connectorClass resolves them.
#include "oxbow/connect/plugins.h"

#include <set>

#include "oxbow/connect/datagen.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/file_stream.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

#ifndef OXBOW_CONNECT_VERSION
#define OXBOW_CONNECT_VERSION "unknown"
#endif

namespace oxbow::connect {

namespace {

constexpr std::string_view kConnectorSuffix = "Connector";

// Kafka's prunedName: the simple name without its last "Connector", unless that is all of it.
std::string_view prunedName(std::string_view simple) {
  size_t pos = simple.rfind(kConnectorSuffix);
  return pos != std::string_view::npos && pos > 0 ? simple.substr(0, pos) : simple;
}

}  // namespace

std::string_view connectVersion() {
  return OXBOW_CONNECT_VERSION;
}

std::string_view pluginTypeName(PluginType type) {
  return type == PluginType::SOURCE ? "source" : "sink";
}

std::string_view ConnectorPlugin::simpleName() const {
  std::string_view name = className;
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

std::string ConnectorPlugin::toString() const {
  std::string type(pluginTypeName(this->type));
  return "PluginDesc{klass=class " + className + ", name='" + className + "', version='" + version +
         "', encodedVersion=" + version + ", type=" + type + ", typeName='" + type +
         "', location='" + location + "'}";
}

ConnectorPlugins ConnectorPlugins::withBuiltIns() {
  ConnectorPlugins plugins;
  registerFileStreamConnectors(plugins);
  registerDatagenConnector(plugins);
  return plugins;
}

void ConnectorPlugins::add(std::string className, ConnectorFactory create, std::string location) {
  if (plugins_.contains(className)) {
    throw ConnectException("Connector class " + className + " is registered already");
  }
  std::unique_ptr<Connector> sample = create();
  ConnectorPlugin plugin;
  if (dynamic_cast<SourceConnector*>(sample.get()) != nullptr) {
    plugin.type = PluginType::SOURCE;
  } else if (dynamic_cast<SinkConnector*>(sample.get()) != nullptr) {
    plugin.type = PluginType::SINK;
  } else {
    throw ConnectException("Connector class " + className +
                           " is neither a SourceConnector nor a SinkConnector");
  }
  plugin.className = className;
  plugin.version = sample->version();
  plugin.location = std::move(location);
  plugin.create = std::move(create);
  plugins_.emplace(std::move(className), std::move(plugin));
}

const ConnectorPlugin& ConnectorPlugins::connectorPlugin(std::string_view classOrAlias) const {
  if (auto exact = plugins_.find(classOrAlias); exact != plugins_.end()) return exact->second;
  std::vector<const ConnectorPlugin*> matches;
  for (const auto& [name, plugin] : plugins_) {
    std::string_view simple = plugin.simpleName();
    if (simple == classOrAlias ||
        (simple.size() == classOrAlias.size() + kConnectorSuffix.size() &&
         simple.starts_with(classOrAlias) && simple.ends_with(kConnectorSuffix))) {
      matches.push_back(&plugin);
    }
  }
  if (matches.empty()) {
    throw ConnectException(
        "Failed to find any class that implements Connector and which name matches " +
        std::string(classOrAlias) + ", available connectors are: " + availableConnectors());
  }
  if (matches.size() > 1) {
    throw ConnectException("More than one connector matches alias " + std::string(classOrAlias) +
                           ". Please use full package and class name instead. Classes found: " +
                           availableConnectors());
  }
  return *matches.front();
}

std::unique_ptr<Connector> ConnectorPlugins::newConnector(std::string_view classOrAlias) const {
  return connectorPlugin(classOrAlias).create();
}

std::vector<const ConnectorPlugin*> ConnectorPlugins::connectors() const {
  std::vector<const ConnectorPlugin*> all;
  for (const auto& entry : plugins_) all.push_back(&entry.second);
  return all;
}

std::map<std::string, std::string> ConnectorPlugins::aliases() const {
  std::map<std::string, std::set<std::string>> claims;
  for (const auto& [name, plugin] : plugins_) {
    claims[std::string(plugin.simpleName())].insert(name);
    claims[std::string(prunedName(plugin.simpleName()))].insert(name);
  }
  std::map<std::string, std::string> unique;
  for (const auto& [alias, classNames] : claims) {
    if (classNames.size() == 1) unique.emplace(alias, *classNames.begin());
  }
  return unique;
}

std::string ConnectorPlugins::availableConnectors() const {
  std::string text;
  for (const auto& entry : plugins_) {
    if (!text.empty()) text += ", ";
    text += entry.second.toString();
  }
  return text;
}

}  // namespace oxbow::connect
