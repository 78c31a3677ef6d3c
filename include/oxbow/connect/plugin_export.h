#pragma once
// A connector plugin's side of plugin_abi.h, header-only: ordinary Connector and Task classes
// written against the public headers, exported through the C ABI by one macro in one of the
// plugin's source files:
//
//   OXBOW_CONNECT_PLUGIN("my-plugin", "1.0.0",
//                        oxbow::connect::plugin_export::connector<MySourceConnector>(
//                            "com.example.MySourceConnector"),
//                        oxbow::connect::plugin_export::connector<MySinkConnector>(
//                            "com.example.MySinkConnector"),
//                        oxbow::connect::plugin_export::converter<MyConverter>(
//                            "com.example.MyConverter"))
//
// The contexts a connector or task is given are the worker's, reached through the C callbacks;
// exceptions never cross the boundary: each is caught here and handed over as an error code and
// its message, which the worker throws again as Connect's exception of that kind.
// Everything is in an unnamed namespace for the reason plugin_codec.h gives.
#include <algorithm>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oxbow/connect/converter.h"
#include "oxbow/connect/plugin_abi.h"
#include "oxbow/connect/plugin_codec.h"

namespace oxbow::connect::plugin_export {
namespace {

using namespace plugin_codec;  // NOLINT: the codec is this file's vocabulary

// What an out parameter points into: valid until the thread's next call into the plugin.
struct Scratch {
  Arena arena;
  std::string text;
  std::string error;
};
inline Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

template <class F>
int32_t guarded(oxbow_connect_bytes* error, F&& body) {
  return guardedCall(scratch(), error, std::forward<F>(body));
}

// The worker's callbacks, copied so that a shorter table from an older worker reads as NULLs.
class HostCalls {
 public:
  explicit HostCalls(const oxbow_connect_host* host) {
    if (host != nullptr)
      std::memcpy(&host_, host, std::min<size_t>(host->struct_size, sizeof host_));
  }
  const oxbow_connect_host& operator*() const { return host_; }
  const oxbow_connect_host* operator->() const { return &host_; }
  static void check(int32_t code, oxbow_connect_bytes error) {
    if (code != OXBOW_CONNECT_OK) throwError(code, text(error));
  }
  template <class Fn>
  Fn require(Fn fn, const char* what) const {
    if (fn == nullptr) throw ConnectException(std::string("The worker offers no ") + what);
    return fn;
  }

 private:
  oxbow_connect_host host_{};
};

class HostOffsetReader : public OffsetStorageReader {
 public:
  explicit HostOffsetReader(const HostCalls& calls) : calls_(calls) {}
  std::optional<ValueMap> offset(const ValueMap& partition) override {
    auto fn = calls_.require(calls_->offset, "offset storage reader");
    std::string encoded = encodeMap(partition);
    int32_t found = 0;
    oxbow_connect_bytes offset{}, error{};
    HostCalls::check(fn(calls_->host, bytesOf(encoded), &found, &offset, &error), error);
    if (found == 0) return std::nullopt;
    return decodeMap(offset);
  }

 private:
  const HostCalls& calls_;
};

template <class Base>
class HostConnectorContext : public Base {
 public:
  explicit HostConnectorContext(const oxbow_connect_host* host) : calls_(host) {}
  void requestTaskReconfiguration() override {
    calls_.require(calls_->request_task_reconfiguration, "task reconfiguration")(calls_->host);
  }
  void raiseError(std::exception_ptr error) override {
    std::string message;
    errorCode(error, message);
    calls_.require(calls_->raise_error, "raiseError")(calls_->host, bytesOf(message));
  }

 protected:
  HostCalls calls_;
};

class HostSourceConnectorContext : public HostConnectorContext<SourceConnectorContext> {
 public:
  using HostConnectorContext::HostConnectorContext;
  OffsetStorageReader& offsetStorageReader() override { return reader_; }

 private:
  HostOffsetReader reader_{calls_};
};

inline Props hostConfigs(const HostCalls& calls) {
  oxbow_connect_props props{};
  oxbow_connect_bytes error{};
  HostCalls::check(calls.require(calls->configs, "configs")(calls->host, &props, &error), error);
  return decodeProps(props);
}

class HostSourceTaskContext : public SourceTaskContext {
 public:
  explicit HostSourceTaskContext(const oxbow_connect_host* host) : calls_(host) {}
  Props configs() const override { return hostConfigs(calls_); }
  OffsetStorageReader& offsetStorageReader() override { return reader_; }

 private:
  HostCalls calls_;
  HostOffsetReader reader_{calls_};
};

class HostSinkTaskContext : public SinkTaskContext, public ErrantRecordReporter {
 public:
  explicit HostSinkTaskContext(const oxbow_connect_host* host) : calls_(host) {}
  Props configs() const override { return hostConfigs(calls_); }
  void offset(const std::map<TopicPartition, int64_t>& offsets) override {
    for (const auto& [tp, offset] : offsets) this->offset(tp, offset);
  }
  void offset(const TopicPartition& tp, int64_t offset) override {
    calls_.require(calls_->sink_offset, "offset")(calls_->host, {bytesOf(tp.topic), tp.partition},
                                                  offset);
  }
  void timeout(int64_t timeoutMs) override {
    calls_.require(calls_->sink_timeout, "timeout")(calls_->host, timeoutMs);
  }
  std::set<TopicPartition> assignment() const override {
    oxbow_connect_partitions out{};
    calls_.require(calls_->sink_assignment, "assignment")(calls_->host, &out);
    std::vector<TopicPartition> partitions = decodePartitions(out);
    return {partitions.begin(), partitions.end()};
  }
  void pause(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    calls_.require(calls_->sink_pause, "pause")(calls_->host, encodePartitions(partitions, arena));
  }
  void resume(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    calls_.require(calls_->sink_resume, "resume")(calls_->host,
                                                  encodePartitions(partitions, arena));
  }
  void requestCommit() override {
    calls_.require(calls_->sink_request_commit, "requestCommit")(calls_->host);
  }
  ErrantRecordReporter* errantRecordReporter() override {
    return calls_->sink_report_errant != nullptr ? this : nullptr;
  }
  // The worker has written the record when the callback returns, so the future is ready.
  std::future<void> report(const SinkRecord& record, std::exception_ptr error) override {
    Arena arena;
    oxbow_connect_record encoded = encodeSinkRecord(record, arena);
    std::string message;
    errorCode(error, message);
    oxbow_connect_bytes failure{};
    HostCalls::check(calls_->sink_report_errant(calls_->host, &encoded, bytesOf(message), &failure),
                     failure);
    std::promise<void> done;
    done.set_value();
    return done.get_future();
  }

 private:
  HostCalls calls_;
};

// Task classes by name, as connectors named them: how task_new finds the factory.
struct TaskClasses {
  std::mutex mutex;
  std::map<std::string, std::function<std::unique_ptr<Task>()>> byName;
  static TaskClasses& get() {
    static TaskClasses classes;
    return classes;
  }
};

template <class C>
struct ConnectorExport {
  static constexpr bool kSource = std::is_base_of_v<SourceConnector, C>;
  static_assert(kSource || std::is_base_of_v<SinkConnector, C>,
                "a plugin's connector is a SourceConnector or a SinkConnector");
  using Context = std::conditional_t<kSource, HostSourceConnectorContext,
                                     HostConnectorContext<SinkConnectorContext>>;
  using TaskContext = std::conditional_t<kSource, HostSourceTaskContext, HostSinkTaskContext>;
  using TaskType = std::conditional_t<kSource, SourceTask, SinkTask>;

  // The context outlives what it was given to: members are destroyed in reverse order.
  struct Box {
    std::unique_ptr<Context> context;
    C connector;
  };
  struct TaskBox {
    std::unique_ptr<TaskContext> context;
    std::unique_ptr<TaskType> task;
  };
  static C& of(void* p) { return static_cast<Box*>(p)->connector; }
  static TaskType& task(void* p) { return *static_cast<TaskBox*>(p)->task; }

  static void* connectorNew() {
    try {
      return new Box{};
    } catch (...) {
      return nullptr;
    }
  }
  static void connectorFree(void* p) { delete static_cast<Box*>(p); }
  static int32_t config(void* p, oxbow_connect_config_keys* out, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) { *out = encodeConfigDef(of(p).config(), s.arena); });
  }
  static int32_t validate(void* p, oxbow_connect_props props, oxbow_connect_config_values* out,
                          oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      *out = encodeConfigValues(of(p).validate(decodeProps(props)).configValues(), s.arena);
    });
  }
  static int32_t initialize(void* p, const oxbow_connect_host* host, int32_t hasTaskConfigs,
                            const oxbow_connect_props* taskConfigs, size_t count,
                            oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      Box& box = *static_cast<Box*>(p);
      box.context = std::make_unique<Context>(host);
      if (hasTaskConfigs == 0) {
        box.connector.initialize(*box.context);
        return;
      }
      std::vector<Props> configs;
      for (size_t i = 0; i < count; ++i) configs.push_back(decodeProps(taskConfigs[i]));
      box.connector.initialize(*box.context, configs);
    });
  }
  static int32_t start(void* p, oxbow_connect_props props, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) { of(p).start(decodeProps(props)); });
  }
  static int32_t reconfigure(void* p, oxbow_connect_props props, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) { of(p).reconfigure(decodeProps(props)); });
  }
  static int32_t taskClass(void* p, oxbow_connect_bytes* out, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      TaskClass taskClass = of(p).taskClass();
      TaskClasses& classes = TaskClasses::get();
      std::lock_guard lock(classes.mutex);
      classes.byName[taskClass.name] = taskClass.create;
      s.text = taskClass.name;
      *out = bytesOf(s.text);
    });
  }
  static int32_t taskConfigs(void* p, int32_t maxTasks, const oxbow_connect_props** out,
                             size_t* count, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      auto configs = std::make_shared<std::vector<Props>>(of(p).taskConfigs(maxTasks));
      std::vector<oxbow_connect_props> encoded;
      for (const Props& props : *configs) encoded.push_back(encodeProps(props, s.arena));
      s.arena.keep(std::vector<std::shared_ptr<std::vector<Props>>>{configs});
      *count = encoded.size();
      *out = s.arena.keep(std::move(encoded));
    });
  }
  static int32_t stop(void* p, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) { of(p).stop(); });
  }
  static int32_t exactlyOnce(void* p, oxbow_connect_props props, oxbow_connect_bytes* out,
                             oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      s.text.clear();
      if constexpr (kSource) {
        auto support = of(p).exactlyOnceSupport(decodeProps(props));
        if (support)
          s.text = *support == ExactlyOnceSupport::SUPPORTED ? "SUPPORTED" : "UNSUPPORTED";
      }
      *out = bytesOf(s.text);
    });
  }
  static int32_t boundaries(void* p, oxbow_connect_props props, oxbow_connect_bytes* out,
                            oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      s.text = "UNSUPPORTED";
      if constexpr (kSource) {
        if (of(p).canDefineTransactionBoundaries(decodeProps(props)) ==
            ConnectorTransactionBoundaries::SUPPORTED) {
          s.text = "SUPPORTED";
        }
      }
      *out = bytesOf(s.text);
    });
  }
  static int32_t sourceAlterOffsets(void* p, oxbow_connect_props props,
                                    oxbow_connect_source_offsets offsets, int32_t* checked,
                                    oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      *checked = 0;
      if constexpr (kSource) {
        SourceOffsets decoded;
        for (size_t i = 0; i < offsets.count; ++i) {
          const oxbow_connect_source_offset& o = offsets.offsets[i];
          std::optional<ValueMap> offset;
          if (o.offset.size != 0) offset = decodeMap(o.offset);
          decoded.emplace_back(decodeMap(o.partition), std::move(offset));
        }
        *checked = of(p).alterOffsets(decodeProps(props), decoded);
      }
    });
  }
  static int32_t sinkAlterOffsets(void* p, oxbow_connect_props props,
                                  oxbow_connect_sink_offsets offsets, int32_t* checked,
                                  oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      *checked = 0;
      if constexpr (!kSource) {
        std::map<TopicPartition, std::optional<int64_t>> decoded;
        for (size_t i = 0; i < offsets.count; ++i) {
          const oxbow_connect_sink_offset& o = offsets.offsets[i];
          decoded[{text(o.partition.topic), o.partition.partition}] =
              o.has_offset ? std::optional<int64_t>(o.offset) : std::nullopt;
        }
        *checked = of(p).alterOffsets(decodeProps(props), decoded);
      }
    });
  }

  static void* taskNew(const char* name) {
    try {
      std::function<std::unique_ptr<Task>()> create;
      {
        TaskClasses& classes = TaskClasses::get();
        std::lock_guard lock(classes.mutex);
        auto found = classes.byName.find(name);
        if (found == classes.byName.end()) return nullptr;
        create = found->second;
      }
      std::unique_ptr<Task> made = create();
      auto* typed = dynamic_cast<TaskType*>(made.get());
      if (typed == nullptr) return nullptr;
      made.release();
      return new TaskBox{nullptr, std::unique_ptr<TaskType>(typed)};
    } catch (...) {
      return nullptr;
    }
  }
  static void taskFree(void* p) { delete static_cast<TaskBox*>(p); }
  static int32_t taskVersion(void* p, oxbow_connect_bytes* out, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      s.text = task(p).version();
      *out = bytesOf(s.text);
    });
  }
  static int32_t taskInitialize(void* p, const oxbow_connect_host* host,
                                oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      TaskBox& box = *static_cast<TaskBox*>(p);
      box.context = std::make_unique<TaskContext>(host);
      box.task->initialize(*box.context);
    });
  }
  static int32_t taskStart(void* p, oxbow_connect_props props, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) { task(p).start(decodeProps(props)); });
  }
  static int32_t taskStop(void* p, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) { task(p).stop(); });
  }
  static int32_t poll(void* p, oxbow_connect_records* out, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      if constexpr (kSource) {
        auto records = std::make_shared<std::vector<SourceRecord>>(task(p).poll());
        s.arena.keep(std::vector<std::shared_ptr<std::vector<SourceRecord>>>{records});
        *out = encodeRecords(*records, s.arena, encodeSourceRecord);
      }
    });
  }
  static int32_t commit(void* p, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (kSource) task(p).commit();
    });
  }
  static int32_t commitRecord(void* p, const oxbow_connect_record* record,
                              const oxbow_connect_record_metadata* metadata,
                              oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (kSource) {
        std::optional<RecordMetadata> written;
        if (metadata != nullptr) {
          written = RecordMetadata{text(metadata->topic), metadata->partition, std::nullopt,
                                   std::nullopt};
          if (metadata->has_offset) written->offset = metadata->offset;
          if (metadata->has_timestamp) written->timestamp = metadata->timestamp;
        }
        task(p).commitRecord(decodeSourceRecord(*record), written);
      }
    });
  }
  static int32_t put(void* p, oxbow_connect_records records, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (!kSource) {
        std::vector<SinkRecord> decoded;
        decoded.reserve(records.count);
        for (size_t i = 0; i < records.count; ++i) {
          decoded.push_back(decodeSinkRecord(records.records[i]));
        }
        task(p).put(decoded);
      }
    });
  }
  static int32_t flush(void* p, oxbow_connect_sink_offsets offsets, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (!kSource) task(p).flush(decodeSinkOffsets(offsets));
    });
  }
  static int32_t preCommit(void* p, oxbow_connect_sink_offsets offsets,
                           oxbow_connect_sink_offsets* out, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      if constexpr (!kSource) {
        auto kept = std::make_shared<SinkOffsets>(task(p).preCommit(decodeSinkOffsets(offsets)));
        s.arena.keep(std::vector<std::shared_ptr<SinkOffsets>>{kept});
        *out = encodeSinkOffsets(*kept, s.arena);
      }
    });
  }
  static int32_t open(void* p, oxbow_connect_partitions partitions, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (!kSource) task(p).open(decodePartitions(partitions));
    });
  }
  static int32_t close(void* p, oxbow_connect_partitions partitions, oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      if constexpr (!kSource) task(p).close(decodePartitions(partitions));
    });
  }

  static oxbow_connect_connector_class table() {
    return oxbow_connect_connector_class{sizeof(oxbow_connect_connector_class),
                                         nullptr,
                                         kSource ? OXBOW_CONNECT_SOURCE : OXBOW_CONNECT_SINK,
                                         nullptr,
                                         connectorNew,
                                         connectorFree,
                                         config,
                                         validate,
                                         initialize,
                                         start,
                                         reconfigure,
                                         taskClass,
                                         taskConfigs,
                                         stop,
                                         exactlyOnce,
                                         boundaries,
                                         sourceAlterOffsets,
                                         sinkAlterOffsets,
                                         taskNew,
                                         taskFree,
                                         taskVersion,
                                         taskInitialize,
                                         taskStart,
                                         taskStop,
                                         poll,
                                         commit,
                                         commitRecord,
                                         put,
                                         flush,
                                         preCommit,
                                         open,
                                         close};
  }
};

// One connector class of a plugin: its class name, its version (asked of an instance) and its
// table.
struct ExportedConnector {
  std::string className;
  std::string version;
  oxbow_connect_connector_class table;
};

template <class C>
ExportedConnector connector(std::string className) {
  return ExportedConnector{std::move(className), C().version(), ConnectorExport<C>::table()};
}

// A converter class of a plugin: made with its default constructor, configured as the worker
// configures its converters, Connect data crossing as the envelope plugin_abi.h describes.
template <class C>
struct ConverterExport {
  static_assert(std::is_base_of_v<Converter, C>, "a plugin's converter is a Converter");
  static C& of(void* p) { return *static_cast<C*>(p); }
  static void* create() {
    try {
      return new C();
    } catch (...) {
      return nullptr;
    }
  }
  static void destroy(void* p) { delete static_cast<C*>(p); }
  static int32_t configure(void* p, oxbow_connect_props props, int32_t isKey,
                           oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch&) {
      ConfigMap configs;
      for (auto& [key, value] : decodeProps(props)) configs.emplace(key, value);
      of(p).configure(configs, isKey != 0);
    });
  }
  static int32_t fromConnect(void* p, oxbow_connect_bytes topic, oxbow_connect_bytes data,
                             int32_t* isNull, oxbow_connect_bytes* out,
                             oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      SchemaAndValue decoded = decodeData(data);
      *isNull = !of(p).fromConnectData(view(topic), decoded.schema, decoded.value, s.text);
      *out = bytesOf(s.text);
    });
  }
  static int32_t toConnect(void* p, oxbow_connect_bytes topic, int32_t isNull,
                           oxbow_connect_bytes value, oxbow_connect_bytes* out,
                           oxbow_connect_bytes* error) {
    return guarded(error, [&](Scratch& s) {
      std::optional<std::string_view> bytes;
      if (isNull == 0) bytes = view(value);
      SchemaAndValue read = of(p).toConnectData(view(topic), bytes);
      s.text = encodeData(read.schema, read.value);
      *out = bytesOf(s.text);
    });
  }
};

struct ExportedConverter {
  std::string className;
  oxbow_connect_converter_class table;
};

template <class C>
ExportedConverter converter(std::string className) {
  using E = ConverterExport<C>;
  return ExportedConverter{std::move(className),
                           {sizeof(oxbow_connect_converter_class), nullptr, E::create, E::destroy,
                            E::configure, E::fromConnect, E::toConnect}};
}

// The descriptor of the connectors and converters given, in any order.
class Plugin {
 public:
  template <class... Exports>
  Plugin(std::string name, std::string version, Exports... exports)
      : name_(std::move(name)), version_(std::move(version)) {
    (add(std::move(exports)), ...);
    for (ExportedConnector& c : connectors_) {
      c.table.class_name = c.className.c_str();
      c.table.version = c.version.c_str();
      tables_.push_back(c.table);
    }
    for (ExportedConverter& c : converters_) {
      c.table.class_name = c.className.c_str();
      converterTables_.push_back(c.table);
    }
    descriptor_ = oxbow_connect_plugin{OXBOW_CONNECT_ABI_VERSION,
                                       sizeof(oxbow_connect_plugin),
                                       name_.c_str(),
                                       version_.c_str(),
                                       tables_.data(),
                                       tables_.size(),
                                       converterTables_.data(),
                                       converterTables_.size()};
  }
  const oxbow_connect_plugin* descriptor() const { return &descriptor_; }

 private:
  void add(ExportedConnector c) { connectors_.push_back(std::move(c)); }
  void add(ExportedConverter c) { converters_.push_back(std::move(c)); }

  std::string name_;
  std::string version_;
  std::vector<ExportedConnector> connectors_;
  std::vector<ExportedConverter> converters_;
  std::vector<oxbow_connect_connector_class> tables_;
  std::vector<oxbow_connect_converter_class> converterTables_;
  oxbow_connect_plugin descriptor_{};
};

}  // namespace
}  // namespace oxbow::connect::plugin_export

// The plugin's entry point (plugin_abi.h). A constructor that throws while the worker loads the
// plugin makes it answer NULL, which the worker logs and skips.
#define OXBOW_CONNECT_PLUGIN(NAME, VERSION, ...)                                               \
  extern "C" __attribute__((visibility("default"))) const oxbow_connect_plugin*                \
  oxbow_connect_plugin_entry(uint32_t /*host_abi_version*/) {                                  \
    try {                                                                                      \
      static const ::oxbow::connect::plugin_export::Plugin plugin(NAME, VERSION, __VA_ARGS__); \
      return plugin.descriptor();                                                              \
    } catch (...) {                                                                            \
      return nullptr;                                                                          \
    }                                                                                          \
  }
