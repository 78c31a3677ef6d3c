#pragma once
// Connector plugins by class name, as Connect's plugin discovery finds them: by the full class
// name ("org.apache.kafka.connect.file.FileStreamSourceConnector"), by the simple name
// ("FileStreamSourceConnector") or by the simple name without "Connector" ("FileStreamSource")
// when only one plugin answers to it. Built-in plugins are registered here; shared objects from
// plugin.path will be too.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/connector.h"

namespace oxbow::connect {

// The version the built-in plugins report (Kafka's AppInfoParser.getVersion()).
std::string_view connectVersion();

enum class PluginType { SOURCE, SINK };
// "source", "sink", as Connect's REST API writes them.
std::string_view pluginTypeName(PluginType type);

using ConnectorFactory = std::function<std::unique_ptr<Connector>()>;

struct ConnectorPlugin {
  std::string className;
  PluginType type = PluginType::SOURCE;
  std::string version;
  std::string location;  // "classpath" for a built-in one
  ConnectorFactory create;

  // The class name after its package.
  std::string_view simpleName() const;
  // Kafka's PluginDesc.toString, which Connect's messages list.
  std::string toString() const;
};

class ConnectorPlugins {
 public:
  // A registry holding the built-in connectors (FileStreamSource, FileStreamSink, Datagen).
  static ConnectorPlugins withBuiltIns();

  // Registers a connector class; makes one to learn its type and version. ConnectException when
  // the class is registered already or is neither a SourceConnector nor a SinkConnector.
  void add(std::string className, ConnectorFactory create, std::string location = "classpath");

  // The plugin of that class name or alias; ConnectException with Connect's message when none
  // or several answer to it.
  const ConnectorPlugin& connectorPlugin(std::string_view classOrAlias) const;
  std::unique_ptr<Connector> newConnector(std::string_view classOrAlias) const;

  // Every plugin, by class name.
  std::vector<const ConnectorPlugin*> connectors() const;
  // The aliases that name one plugin only, to its class name (Kafka's computeAliases).
  std::map<std::string, std::string> aliases() const;

 private:
  std::string availableConnectors() const;
  std::map<std::string, ConnectorPlugin, std::less<>> plugins_;
};

}  // namespace oxbow::connect
