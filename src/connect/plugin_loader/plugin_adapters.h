#pragma once
// The worker's side of plugin_abi.h: a connector class a plugin exports, presented to the runtime
// as an ordinary Connector whose tasks are ordinary Tasks, each call going through the plugin's C
// table and each error code thrown again as the exception it stands for.
#include <memory>
#include <string>

#include "oxbow/connect/converter.h"
#include "oxbow/connect/plugin_abi.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::plugin_loader {

// A shared object the worker loaded; never unloaded, since a plugin's threads or thread-local
// destructors may still run its code until the process ends (Kafka keeps its plugin class
// loaders for the worker's life too).
struct LoadedLibrary {
  std::string path;
  void* handle = nullptr;
  const oxbow_connect_plugin* plugin = nullptr;
};

// One connector class of a loaded plugin.
struct PluginClass {
  std::shared_ptr<const LoadedLibrary> library;
  const oxbow_connect_connector_class* table = nullptr;
};

// Makes connectors of that class (a SourceConnector or SinkConnector by the table's type).
// ConnectException when the plugin cannot make one.
ConnectorFactory pluginConnectorFactory(PluginClass pluginClass);

// One converter class of a loaded plugin.
struct PluginConverterClass {
  std::shared_ptr<const LoadedLibrary> library;
  const oxbow_connect_converter_class* table = nullptr;
};

// Makes converters of that class; ConnectException when the plugin cannot make one.
ConverterFactory pluginConverterFactory(PluginConverterClass converterClass);

}  // namespace oxbow::connect::plugin_loader
