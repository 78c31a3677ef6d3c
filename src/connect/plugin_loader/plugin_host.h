#pragma once
// The contexts the runtime gives a plugin's connector or task, offered to the plugin as
// plugin_abi.h's C callbacks. No exception leaves a callback: a failure becomes an error code the
// plugin throws on its side.
#include "oxbow/connect/connector.h"
#include "oxbow/connect/plugin_abi.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::plugin_loader {

class HostBridge {
 public:
  HostBridge() = default;
  HostBridge(const HostBridge&) = delete;
  HostBridge& operator=(const HostBridge&) = delete;

  // The callbacks over a connector's context (a source connector's offset reader too).
  const oxbow_connect_host* forConnector(ConnectorContext& context);
  const oxbow_connect_host* forSourceTask(SourceTaskContext& context);
  const oxbow_connect_host* forSinkTask(SinkTaskContext& context);

 private:
  static void requestTaskReconfiguration(void* host);
  static void raiseError(void* host, oxbow_connect_bytes message);
  static int32_t offset(void* host, oxbow_connect_bytes partition, int32_t* found,
                        oxbow_connect_bytes* offset, oxbow_connect_bytes* error);
  static int32_t configs(void* host, oxbow_connect_props* out, oxbow_connect_bytes* error);
  static void sinkOffset(void* host, oxbow_connect_topic_partition partition, int64_t offset);
  static void sinkTimeout(void* host, int64_t timeoutMs);
  static void sinkAssignment(void* host, oxbow_connect_partitions* out);
  static void sinkPause(void* host, oxbow_connect_partitions partitions);
  static void sinkResume(void* host, oxbow_connect_partitions partitions);
  static void sinkRequestCommit(void* host);
  static int32_t sinkReportErrant(void* host, const oxbow_connect_record* record,
                                  oxbow_connect_bytes message, oxbow_connect_bytes* error);
  static HostBridge& of(void* host) { return *static_cast<HostBridge*>(host); }

  void reset();
  OffsetStorageReader* reader();
  oxbow_connect_host table_{};
  ConnectorContext* connector_ = nullptr;
  SourceTaskContext* sourceTask_ = nullptr;
  SinkTaskContext* sinkTask_ = nullptr;
};

}  // namespace oxbow::connect::plugin_loader
