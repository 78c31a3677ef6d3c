// plugin.path: shared objects found, dlopen()ed, their ABI version checked and their connector
// classes registered.
#include "connect/plugin_loader/plugin_loader.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <system_error>

#include "connect/plugin_loader/plugin_adapters.h"
#include "oxbow/connect/converter.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugin_abi.h"

namespace oxbow::connect::plugin_loader {

namespace fs = std::filesystem;

namespace {

// The part of version 1's structs a plugin must have: the fields up to the last one this worker
// calls. A plugin built against a later minor revision has more, which is ignored.
constexpr size_t kPluginSize = offsetof(oxbow_connect_plugin, connector_count) + sizeof(size_t);
constexpr size_t kClassSize =
    offsetof(oxbow_connect_connector_class, sink_task_close) + sizeof(void*);
// Converters came later in version 1: a plugin whose descriptor ends before them has none.
constexpr size_t kPluginWithConvertersSize =
    offsetof(oxbow_connect_plugin, converter_count) + sizeof(size_t);
constexpr size_t kConverterSize =
    offsetof(oxbow_connect_converter_class, to_connect_data) + sizeof(void*);

// "libfoo.so" and versioned names such as "libfoo.so.1".
bool sharedObjectName(const fs::path& path) {
  std::string name = path.filename().string();
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

bool isFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool isDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// A directory's entries in name order (symbolic links followed, as Kafka follows them); empty,
// with a log line, when it cannot be listed.
std::vector<fs::path> listing(const fs::path& directory) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) {
    spdlog::error("connect: could not list plugin directory {}: {}", directory.string(),
                  ec.message());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// The shared objects anywhere under a plugin's directory, in name order: Kafka takes every
// archive under a plugin location, however deep.
std::vector<fs::path> sharedObjectsUnder(const fs::path& directory) {
  std::vector<fs::path> found;
  std::error_code ec;
  auto options = fs::directory_options::follow_directory_symlink |
                 fs::directory_options::skip_permission_denied;
  for (fs::recursive_directory_iterator it(directory, options, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (isFile(it->path()) && sharedObjectName(it->path())) found.push_back(it->path());
  }
  if (ec) {
    spdlog::error("connect: could not list plugin directory {}: {}", directory.string(),
                  ec.message());
  }
  std::sort(found.begin(), found.end());
  return found;
}

bool supported(const oxbow_connect_plugin* plugin, const std::string& file) {
  if (plugin->abi_version != OXBOW_CONNECT_ABI_VERSION) {
    spdlog::warn(
        "connect: skipping plugin {}: it was built for Connect plugin ABI version {}, this worker "
        "loads version {}",
        file, plugin->abi_version, OXBOW_CONNECT_ABI_VERSION);
    return false;
  }
  if (plugin->struct_size < kPluginSize) {
    spdlog::warn("connect: skipping plugin {}: its descriptor is shorter than ABI version {}'s",
                 file, OXBOW_CONNECT_ABI_VERSION);
    return false;
  }
  return true;
}

std::vector<std::string> registerClasses(ConnectorPlugins& plugins,
                                         std::shared_ptr<const LoadedLibrary> library) {
  std::vector<std::string> registered;
  const oxbow_connect_plugin* plugin = library->plugin;
  for (size_t i = 0; i < plugin->connector_count; ++i) {
    const oxbow_connect_connector_class* table = &plugin->connectors[i];
    std::string name = table->class_name != nullptr ? table->class_name : "";
    if (table->struct_size < kClassSize || name.empty() ||
        (table->type != OXBOW_CONNECT_SOURCE && table->type != OXBOW_CONNECT_SINK)) {
      spdlog::warn("connect: skipping connector #{} of plugin {}: not a valid ABI version {} class",
                   i, library->path, OXBOW_CONNECT_ABI_VERSION);
      continue;
    }
    try {
      plugins.add(name, pluginConnectorFactory(PluginClass{library, table}), library->path);
      registered.push_back(name);
    } catch (const std::exception& e) {
      spdlog::error("connect: skipping connector {} of plugin {}: {}", name, library->path,
                    e.what());
    }
  }
  return registered;
}

// A converter is refused a name the registry knows already, so that a plugin cannot replace a
// built-in converter (or another plugin's) behind the operator's back.
std::vector<std::string> registerConverters(std::shared_ptr<const LoadedLibrary> library) {
  std::vector<std::string> registered;
  const oxbow_connect_plugin* plugin = library->plugin;
  if (plugin->struct_size < kPluginWithConvertersSize) return registered;
  ConverterRegistry& registry = ConverterRegistry::instance();
  for (size_t i = 0; i < plugin->converter_count; ++i) {
    const oxbow_connect_converter_class* table = &plugin->converters[i];
    std::string name = table->class_name != nullptr ? table->class_name : "";
    if (table->struct_size < kConverterSize || name.empty()) {
      spdlog::warn("connect: skipping converter #{} of plugin {}: not a valid ABI version {} class",
                   i, library->path, OXBOW_CONNECT_ABI_VERSION);
    } else if (registry.contains(name)) {
      spdlog::error("connect: skipping converter {} of plugin {}: a converter of that name exists",
                    name, library->path);
    } else {
      registry.add(name, pluginConverterFactory(PluginConverterClass{library, table}));
      registered.push_back(name);
    }
  }
  return registered;
}

}  // namespace

std::vector<std::string> loadPlugin(ConnectorPlugins& plugins, const std::string& file,
                                    bool dependencyOk) {
  // RTLD_LOCAL: a plugin's symbols stay its own, so two plugins may carry the same library code.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    spdlog::error("connect: skipping plugin {}: it could not be loaded: {}", file,
                  error != nullptr ? error : "unknown error");
    return {};
  }
  auto entry =
      reinterpret_cast<oxbow_connect_plugin_fn>(dlsym(handle, OXBOW_CONNECT_PLUGIN_SYMBOL));
  if (entry == nullptr) {
    if (dependencyOk) {
      spdlog::debug("connect: {} has no {} entry point: a library a plugin uses", file,
                    OXBOW_CONNECT_PLUGIN_SYMBOL);
    } else {
      spdlog::warn("connect: skipping {}: it exports no {} entry point, so it is no Connect plugin",
                   file, OXBOW_CONNECT_PLUGIN_SYMBOL);
    }
    dlclose(handle);
    return {};
  }
  const oxbow_connect_plugin* plugin = entry(OXBOW_CONNECT_ABI_VERSION);
  if (plugin == nullptr) {
    spdlog::error("connect: skipping plugin {}: its entry point failed", file);
    return {};
  }
  if (!supported(plugin, file)) return {};
  auto library = std::make_shared<const LoadedLibrary>(LoadedLibrary{file, handle, plugin});
  std::vector<std::string> registered = registerClasses(plugins, library);
  std::vector<std::string> converters = registerConverters(library);
  spdlog::info("connect: loaded plugin {} {} from {}: {} connector(s), {} converter(s)",
               plugin->name != nullptr ? plugin->name : "?",
               plugin->version != nullptr ? plugin->version : "?", file, registered.size(),
               converters.size());
  return registered;
}

std::vector<std::string> loadPluginPath(ConnectorPlugins& plugins,
                                        const std::vector<std::string>& pluginPath) {
  std::vector<std::string> registered;
  auto add = [&](const std::vector<std::string>& more) {
    registered.insert(registered.end(), more.begin(), more.end());
  };
  for (const std::string& element : pluginPath) {
    // An element naming a shared object is a plugin itself, as Kafka takes an archive there.
    if (isFile(element) && sharedObjectName(element)) {
      add(loadPlugin(plugins, element));
      continue;
    }
    if (!isDirectory(element)) {
      spdlog::error("connect: plugin.path entry {} is not a directory; skipped", element);
      continue;
    }
    for (const fs::path& entry : listing(element)) {
      if (isDirectory(entry)) {
        for (const fs::path& inner : sharedObjectsUnder(entry)) {
          add(loadPlugin(plugins, inner.string(), true));
        }
      } else if (isFile(entry) && sharedObjectName(entry)) {
        add(loadPlugin(plugins, entry.string()));
      }
    }
  }
  return registered;
}

std::vector<std::string> loadPluginPath(ConnectorPlugins& plugins, const Properties& workerProps) {
  std::vector<std::string> directories;
  if (auto found = workerProps.find("plugin.path"); found != workerProps.end()) {
    for (std::string& item : split(found->second, ',')) {
      if (!item.empty()) directories.push_back(std::move(item));
    }
  }
  return loadPluginPath(plugins, directories);
}

}  // namespace oxbow::connect::plugin_loader
