// The runtime's contexts as plugin_abi.h's callbacks.
#include "connect/plugin_loader/plugin_host.h"

#include <spdlog/spdlog.h>

#include <string>

#include "connect/plugin_loader/plugin_guard.h"
#include "oxbow/connect/plugin_codec.h"

namespace oxbow::connect::plugin_loader {

using namespace plugin_codec;  // NOLINT: the codec is this file's vocabulary

namespace {

// What a callback's out parameters point into, until the thread's next callback.
struct HostScratch {
  Arena arena;
  std::string text;
  std::string error;
  std::shared_ptr<void> kept;
};
HostScratch& scratch() {
  thread_local HostScratch s;
  return s;
}

template <class F>
int32_t guarded(oxbow_connect_bytes* error, F&& body) {
  HostCodeScope host;
  return guardedCall(scratch(), error, std::forward<F>(body));
}

// For callbacks that cannot answer an error: the failure is logged, as the plugin cannot be told.
template <class F>
void logged(const char* what, F&& body) {
  HostCodeScope host;
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::warn("connect: a plugin's call to {} failed: {}", what, e.what());
  } catch (...) {
    spdlog::warn("connect: a plugin's call to {} failed", what);
  }
}

ConnectException missing(const char* what) {
  return ConnectException(std::string("No ") + what + " in this context");
}

}  // namespace

const oxbow_connect_host* HostBridge::forConnector(ConnectorContext& context) {
  connector_ = &context;
  reset();
  table_.request_task_reconfiguration = requestTaskReconfiguration;
  table_.raise_error = raiseError;
  if (dynamic_cast<SourceConnectorContext*>(&context) != nullptr) table_.offset = offset;
  return &table_;
}

const oxbow_connect_host* HostBridge::forSourceTask(SourceTaskContext& context) {
  sourceTask_ = &context;
  reset();
  table_.offset = offset;
  table_.configs = configs;
  return &table_;
}

const oxbow_connect_host* HostBridge::forSinkTask(SinkTaskContext& context) {
  sinkTask_ = &context;
  reset();
  table_.configs = configs;
  table_.sink_offset = sinkOffset;
  table_.sink_timeout = sinkTimeout;
  table_.sink_assignment = sinkAssignment;
  table_.sink_pause = sinkPause;
  table_.sink_resume = sinkResume;
  table_.sink_request_commit = sinkRequestCommit;
  if (context.errantRecordReporter() != nullptr) table_.sink_report_errant = sinkReportErrant;
  return &table_;
}

void HostBridge::reset() {
  table_ = oxbow_connect_host{};
  table_.struct_size = sizeof table_;
  table_.host = this;
}

OffsetStorageReader* HostBridge::reader() {
  if (sourceTask_ != nullptr) return &sourceTask_->offsetStorageReader();
  if (auto* source = dynamic_cast<SourceConnectorContext*>(connector_)) {
    return &source->offsetStorageReader();
  }
  return nullptr;
}

void HostBridge::requestTaskReconfiguration(void* host) {
  logged("requestTaskReconfiguration", [&] { of(host).connector_->requestTaskReconfiguration(); });
}

void HostBridge::raiseError(void* host, oxbow_connect_bytes message) {
  logged("raiseError", [&] {
    of(host).connector_->raiseError(std::make_exception_ptr(ConnectException(text(message))));
  });
}

int32_t HostBridge::offset(void* host, oxbow_connect_bytes partition, int32_t* found,
                           oxbow_connect_bytes* offset, oxbow_connect_bytes* error) {
  return guarded(error, [&](HostScratch& s) {
    OffsetStorageReader* reader = of(host).reader();
    if (reader == nullptr) throw missing("offset storage reader");
    std::optional<ValueMap> committed = reader->offset(decodeMap(partition));
    *found = committed.has_value();
    if (committed) *offset = s.arena.keep(encodeMap(*committed));
  });
}

int32_t HostBridge::configs(void* host, oxbow_connect_props* out, oxbow_connect_bytes* error) {
  return guarded(error, [&](HostScratch& s) {
    HostBridge& bridge = of(host);
    auto props =
        std::make_shared<Props>(bridge.sourceTask_ != nullptr ? bridge.sourceTask_->configs()
                                                              : bridge.sinkTask_->configs());
    s.kept = props;
    *out = encodeProps(*props, s.arena);
  });
}

void HostBridge::sinkOffset(void* host, oxbow_connect_topic_partition partition, int64_t offset) {
  logged("offset", [&] {
    of(host).sinkTask_->offset(TopicPartition{text(partition.topic), partition.partition}, offset);
  });
}

void HostBridge::sinkTimeout(void* host, int64_t timeoutMs) {
  logged("timeout", [&] { of(host).sinkTask_->timeout(timeoutMs); });
}

void HostBridge::sinkAssignment(void* host, oxbow_connect_partitions* out) {
  *out = oxbow_connect_partitions{nullptr, 0};
  logged("assignment", [&] {
    HostScratch& s = scratch();
    s.arena.clear();
    std::set<TopicPartition> assigned = of(host).sinkTask_->assignment();
    auto partitions =
        std::make_shared<std::vector<TopicPartition>>(assigned.begin(), assigned.end());
    s.kept = partitions;
    *out = encodePartitions(*partitions, s.arena);
  });
}

void HostBridge::sinkPause(void* host, oxbow_connect_partitions partitions) {
  logged("pause", [&] { of(host).sinkTask_->pause(decodePartitions(partitions)); });
}

void HostBridge::sinkResume(void* host, oxbow_connect_partitions partitions) {
  logged("resume", [&] { of(host).sinkTask_->resume(decodePartitions(partitions)); });
}

void HostBridge::sinkRequestCommit(void* host) {
  logged("requestCommit", [&] { of(host).sinkTask_->requestCommit(); });
}

int32_t HostBridge::sinkReportErrant(void* host, const oxbow_connect_record* record,
                                     oxbow_connect_bytes message, oxbow_connect_bytes* error) {
  return guarded(error, [&](HostScratch&) {
    ErrantRecordReporter* reporter = of(host).sinkTask_->errantRecordReporter();
    if (reporter == nullptr) throw missing("errant record reporter");
    reporter
        ->report(decodeSinkRecord(*record),
                 std::make_exception_ptr(ConnectException(text(message))))
        .get();
  });
}

}  // namespace oxbow::connect::plugin_loader
