#pragma once
// Connector plugins loaded from the worker's plugin.path, as Kafka Connect's plugin discovery:
// plugin.path lists directories (comma-separated) or plugins themselves; in each directory, a
// shared object (*.so) is a plugin location and so is a sub-directory, whose shared objects at any
// depth are the plugin and the libraries it needs. Each plugin's connectors are registered with
// its file as their location. A file that fails to load, exports no entry point, or speaks
// another ABI version is logged and skipped.
#include <string>
#include <vector>

#include "common/properties.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect::plugin_loader {

// Loads one shared object; the connector classes it registered (none when it was skipped).
// `dependencyOk`: a file without the entry point is a library some plugin needs, worth a debug
// line only (in a plugin's sub-directory).
std::vector<std::string> loadPlugin(ConnectorPlugins& plugins, const std::string& file,
                                    bool dependencyOk = false);

// Every plugin under those directories, in name order; the connector classes registered.
std::vector<std::string> loadPluginPath(ConnectorPlugins& plugins,
                                        const std::vector<std::string>& pluginPath);
// The same for a worker's plugin.path (comma-separated, each entry trimmed, empty ones dropped).
std::vector<std::string> loadPluginPath(ConnectorPlugins& plugins, const Properties& workerProps);

}  // namespace oxbow::connect::plugin_loader
