#pragma once
// Connect's plugin interface, the part sources and sinks share
// (org.apache.kafka.connect.connector): a Connector turns its config into task configs and watches
// its system for changes; a Task moves the data. The runtime creates a connector by class name
// (plugins.h), calls initialize(context), start(props), taskConfigs(maxTasks), then creates that
// many tasks with taskClass() and starts each with its config; stop() ends either. source.h and
// sink.h have the two kinds.
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/connect/config_def.h"

namespace oxbow::connect {

// A connector's or task's config as the runtime passes it (Java's Map<String, String>).
using Props = std::map<std::string, std::string>;

// A validated config (Kafka's common.config.Config): one ConfigValue per config, errors included.
class Config {
 public:
  explicit Config(std::vector<ConfigValue> configValues) : configValues_(std::move(configValues)) {}
  const std::vector<ConfigValue>& configValues() const { return configValues_; }

 private:
  std::vector<ConfigValue> configValues_;
};

// What a connector may ask of the runtime. The runtime keeps it alive until after stop().
class ConnectorContext {
 public:
  virtual ~ConnectorContext() = default;
  // Something in the connector's system changed (a table added, a partition gone): the runtime
  // calls taskConfigs() again and restarts the tasks whose configs changed.
  virtual void requestTaskReconfiguration() = 0;
  // An unrecoverable failure: the connector becomes FAILED with this error.
  virtual void raiseError(std::exception_ptr error) = 0;
};

class Task {
 public:
  virtual ~Task() = default;
  // Usually its connector's version.
  virtual std::string version() const = 0;
  virtual void start(const Props& props) = 0;
  // May be called from another thread than the one driving the task, to wake it.
  virtual void stop() = 0;
};

// A connector's kind of task (Java's Class<? extends Task>): the class name the runtime reports
// and how to make one.
struct TaskClass {
  std::string name;
  std::function<std::unique_ptr<Task>()> create;

  template <class T>
  static TaskClass of(std::string name) {
    return TaskClass{std::move(name), [] { return std::unique_ptr<Task>(std::make_unique<T>()); }};
  }
};

class Connector {
 public:
  virtual ~Connector() = default;
  virtual std::string version() const = 0;

  virtual void initialize(ConnectorContext& context) { context_ = &context; }
  // On recovery, with the task configs last generated, so that a connector can keep its
  // assignment stable; ignored by default.
  virtual void initialize(ConnectorContext& context, const std::vector<Props>& /*taskConfigs*/) {
    context_ = &context;
  }
  // Called on a connector just initialized, or stopped.
  virtual void start(const Props& props) = 0;
  virtual void reconfigure(const Props& props) {
    stop();
    start(props);
  }
  virtual TaskClass taskClass() const = 0;
  // At most maxTasks configs, one per task to run.
  virtual std::vector<Props> taskConfigs(int maxTasks) = 0;
  virtual void stop() = 0;

  // Checks a config against config(), every error collected; may be called before start().
  virtual Config validate(const Props& connectorConfigs) const {
    return Config(config().validate(connectorConfigs));
  }
  // The configs this connector takes; what Connect's REST API lists for the plugin.
  virtual ConfigDef config() const = 0;

 protected:
  // Null until initialize().
  ConnectorContext* context() const { return context_; }

 private:
  ConnectorContext* context_ = nullptr;
};

}  // namespace oxbow::connect
