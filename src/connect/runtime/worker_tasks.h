#pragma once
// What a standalone and a distributed worker share when they run connectors: a connector's config
// checked against its plugin, its context, and a task runner made from a task config.
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "connect/runtime/offset_store.h"
#include "connect/runtime/source_runner.h"
#include "connect/runtime/task_runner.h"
#include "connect/runtime/worker_config.h"
#include "oxbow/connect/plugins.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

class ActiveTopics;

struct CheckedConnector {
  const ConnectorPlugin* plugin = nullptr;
  ConnectorConfig config;
};

// Finds the connector's plugin, parses the runtime's configs and has the connector validate the
// rest, and the worker's connector.client.config.override.policy the client overrides, when
// given. ConnectException with every error (a file's message), or BadRequestException with
// Connect's REST message when `fromRest`.
CheckedConnector checkConnector(const ConnectorPlugins& plugins, const Properties& props,
                                bool fromRest, const WorkerConfig* worker = nullptr);

// A connector's context: its errors and its requests for new task configs go to the worker.
class WorkerConnectorContext : public SourceConnectorContext {
 public:
  WorkerConnectorContext(std::string name, OffsetBackingStore& offsets,
                         std::function<void()> onReconfigure,
                         std::function<void(std::string)> onError);
  void requestTaskReconfiguration() override;
  void raiseError(std::exception_ptr error) override;
  OffsetStorageReader& offsetStorageReader() override { return reader_; }

 private:
  std::string name_;
  StoreOffsetReader reader_;
  std::function<void()> onReconfigure_;
  std::function<void(std::string)> onError_;
};

// A runner for task `id` of the connector (not started); ConnectException when the connector's
// task class is not of its kind. A source task with `transactions` is exactly-once (KIP-618).
std::unique_ptr<TaskRunner> makeTaskRunner(
    const WorkerConfig& worker, const ConnectorConfig& config, const ConnectorPlugin& plugin,
    Connector& connector, int id, Props taskProps, OffsetBackingStore& offsets,
    ActiveTopics* topics, std::optional<SourceTransactions> transactions = std::nullopt);

}  // namespace oxbow::connect::runtime
