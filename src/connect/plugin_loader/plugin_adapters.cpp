// A plugin's connector and tasks behind the runtime's Connector and Task classes.
#include "connect/plugin_loader/plugin_adapters.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "connect/plugin_loader/plugin_guard.h"
#include "connect/plugin_loader/plugin_host.h"
#include "oxbow/connect/plugin_codec.h"

namespace oxbow::connect::plugin_loader {

using namespace plugin_codec;  // NOLINT: the codec is this file's vocabulary

namespace {

// One plugin object's calls into its C table, each under the crash guard (plugin_guard.h). Once a
// call crashed, the object is never called again, not even to stop or free it: what the plugin
// held is abandoned, as its state can no longer be trusted.
class PluginCalls {
 public:
  PluginCalls(std::shared_ptr<const LoadedLibrary> library, const char* what)
      : library_(std::move(library)), what_(what) {}

  // What fn returns; a crash thrown as a ConnectException.
  template <class F>
  auto value(const char* function, F&& fn) const {
    if (crashed()) throw ConnectException(crash_);
    decltype(fn()) result{};
    auto body = [&] { result = fn(); };
    if (int signal = runGuarded(body); signal != 0) fail(function, signal);
    return result;
  }
  // Runs one call that answers an error code: its error, if any, thrown again here.
  template <class F>
  void operator()(const char* function, F&& fn) const {
    oxbow_connect_bytes error{};
    int32_t code = value(function, [&] { return fn(&error); });
    if (code != OXBOW_CONNECT_OK) throwError(code, text(error));
  }
  // For calls that only tell the plugin something on the way out (stop, commit, close), which
  // the runtime makes as a task winds down, some from librdkafka's callbacks where nothing may be
  // thrown: skipped after a crash.
  template <class F>
  void notify(const char* function, F&& fn) const {
    if (!crashed()) (*this)(function, std::forward<F>(fn));
  }
  // For freeing on the way out, where nothing can be thrown: skipped after a crash, a crash in it
  // only logged.
  template <class F>
  void release(const char* function, F&& fn) const noexcept {
    if (crashed()) return;
    try {
      value(function, [&] {
        fn();
        return 0;
      });
    } catch (const std::exception&) {
      // Logged as the crash happened.
    }
  }
  bool crashed() const { return crashed_.load(std::memory_order_acquire); }

 private:
  [[noreturn]] void fail(const char* function, int signal) const {
    crash_ = "Plugin " + std::string(library_->plugin->name) + " (" + library_->path +
             ") crashed with signal " + signalName(signal) + " in " + function + "; its " + what_ +
             " is stopped and the plugin's objects are abandoned. The worker keeps running but the "
             "plugin may have left shared state corrupted: restart the worker when convenient";
    crashed_.store(true, std::memory_order_release);  // crash_ is read only once this is set
    spdlog::error("connect: {}", crash_);
    throw ConnectException(crash_);
  }

  std::shared_ptr<const LoadedLibrary> library_;
  const char* what_;
  // The runtime may stop a task from another thread than the one its poll() crashed in.
  mutable std::atomic<bool> crashed_{false};
  mutable std::string crash_;
};

std::string copied(oxbow_connect_bytes bytes) {
  return text(bytes);
}

template <class TaskBase>
class PluginTask : public TaskBase {
 public:
  PluginTask(PluginClass pluginClass, const std::string& name)
      : class_(std::move(pluginClass)),
        calls_(class_.library, "task"),
        handle_(calls_.value("task_new", [&] { return class_.table->task_new(name.c_str()); })) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create task " + name);
    }
  }
  ~PluginTask() override {
    calls_.release("task_free", [&] { class_.table->task_free(handle_); });
  }
  PluginTask(const PluginTask&) = delete;
  PluginTask& operator=(const PluginTask&) = delete;

  std::string version() const override {
    oxbow_connect_bytes out{};
    calls_("task_version", [&](auto* e) { return class_.table->task_version(handle_, &out, e); });
    return copied(out);
  }
  void start(const Props& props) override {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    calls_("task_start", [&](auto* e) { return class_.table->task_start(handle_, encoded, e); });
  }
  void stop() override {
    calls_.notify("task_stop", [&](auto* e) { return class_.table->task_stop(handle_, e); });
  }

 protected:
  PluginClass class_;
  PluginCalls calls_;
  void* handle_;
  HostBridge bridge_;
};

class PluginSourceTask : public PluginTask<SourceTask> {
 public:
  using PluginTask::PluginTask;
  void initialize(SourceTaskContext& context) override {
    SourceTask::initialize(context);
    const oxbow_connect_host* host = bridge_.forSourceTask(context);
    calls_("task_initialize",
           [&](auto* e) { return class_.table->task_initialize(handle_, host, e); });
  }
  std::vector<SourceRecord> poll() override {
    oxbow_connect_records out{};
    calls_("source_task_poll",
           [&](auto* e) { return class_.table->source_task_poll(handle_, &out, e); });
    std::vector<SourceRecord> records;
    records.reserve(out.count);
    for (size_t i = 0; i < out.count; ++i) records.push_back(decodeSourceRecord(out.records[i]));
    return records;
  }
  void commit() override {
    calls_.notify("source_task_commit",
                  [&](auto* e) { return class_.table->source_task_commit(handle_, e); });
  }
  void commitRecord(const SourceRecord& record,
                    const std::optional<RecordMetadata>& metadata) override {
    Arena arena;
    oxbow_connect_record encoded = encodeSourceRecord(record, arena);
    oxbow_connect_record_metadata written{};
    if (metadata) {
      written.topic = bytesOf(metadata->topic);
      written.partition = metadata->partition;
      written.has_offset = metadata->offset.has_value();
      written.offset = metadata->offset.value_or(-1);
      written.has_timestamp = metadata->timestamp.has_value();
      written.timestamp = metadata->timestamp.value_or(-1);
    }
    calls_.notify("source_task_commit_record", [&](auto* e) {
      return class_.table->source_task_commit_record(handle_, &encoded,
                                                     metadata ? &written : nullptr, e);
    });
  }
};

class PluginSinkTask : public PluginTask<SinkTask> {
 public:
  using PluginTask::PluginTask;
  void initialize(SinkTaskContext& context) override {
    SinkTask::initialize(context);
    const oxbow_connect_host* host = bridge_.forSinkTask(context);
    calls_("task_initialize",
           [&](auto* e) { return class_.table->task_initialize(handle_, host, e); });
  }
  void put(const std::vector<SinkRecord>& records) override {
    Arena arena;
    oxbow_connect_records encoded = encodeRecords(records, arena, encodeSinkRecord);
    calls_("sink_task_put",
           [&](auto* e) { return class_.table->sink_task_put(handle_, encoded, e); });
  }
  void flush(const SinkOffsets& currentOffsets) override {
    Arena arena;
    oxbow_connect_sink_offsets encoded = encodeSinkOffsets(currentOffsets, arena);
    calls_("sink_task_flush",
           [&](auto* e) { return class_.table->sink_task_flush(handle_, encoded, e); });
  }
  SinkOffsets preCommit(const SinkOffsets& currentOffsets) override {
    Arena arena;
    oxbow_connect_sink_offsets encoded = encodeSinkOffsets(currentOffsets, arena);
    oxbow_connect_sink_offsets out{};
    calls_("sink_task_pre_commit",
           [&](auto* e) { return class_.table->sink_task_pre_commit(handle_, encoded, &out, e); });
    return decodeSinkOffsets(out);
  }
  void open(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    oxbow_connect_partitions encoded = encodePartitions(partitions, arena);
    calls_("sink_task_open",
           [&](auto* e) { return class_.table->sink_task_open(handle_, encoded, e); });
  }
  void close(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    oxbow_connect_partitions encoded = encodePartitions(partitions, arena);
    calls_.notify("sink_task_close",
                  [&](auto* e) { return class_.table->sink_task_close(handle_, encoded, e); });
  }
};

// The calls both kinds of connector make the same way.
template <class Base>
class PluginConnectorBase : public Base {
 public:
  explicit PluginConnectorBase(PluginClass pluginClass)
      : class_(std::move(pluginClass)),
        calls_(class_.library, "connector"),
        handle_(calls_.value("connector_new", [&] { return class_.table->connector_new(); })) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create connector " +
                             class_.table->class_name);
    }
  }
  ~PluginConnectorBase() override {
    calls_.release("connector_free", [&] { class_.table->connector_free(handle_); });
  }
  PluginConnectorBase(const PluginConnectorBase&) = delete;
  PluginConnectorBase& operator=(const PluginConnectorBase&) = delete;

  std::string version() const override { return class_.table->version; }
  void initialize(ConnectorContext& context) override {
    Connector::initialize(context);
    const oxbow_connect_host* host = bridge_.forConnector(context);
    calls_("connector_initialize", [&](auto* e) {
      return class_.table->connector_initialize(handle_, host, 0, nullptr, 0, e);
    });
  }
  void initialize(ConnectorContext& context, const std::vector<Props>& taskConfigs) override {
    Connector::initialize(context, taskConfigs);
    const oxbow_connect_host* host = bridge_.forConnector(context);
    Arena arena;
    std::vector<oxbow_connect_props> encoded;
    for (const Props& props : taskConfigs) encoded.push_back(encodeProps(props, arena));
    calls_("connector_initialize", [&](auto* e) {
      return class_.table->connector_initialize(handle_, host, 1, encoded.data(), encoded.size(),
                                                e);
    });
  }
  void start(const Props& props) override {
    withProps(props, "connector_start", class_.table->connector_start);
  }
  void reconfigure(const Props& props) override {
    withProps(props, "connector_reconfigure", class_.table->connector_reconfigure);
  }
  TaskClass taskClass() const override {
    oxbow_connect_bytes out{};
    calls_("connector_task_class",
           [&](auto* e) { return class_.table->connector_task_class(handle_, &out, e); });
    std::string name = copied(out);
    PluginClass pluginClass = class_;
    return TaskClass{name, [pluginClass, name]() -> std::unique_ptr<Task> {
                       if (pluginClass.table->type == OXBOW_CONNECT_SOURCE) {
                         return std::make_unique<PluginSourceTask>(pluginClass, name);
                       }
                       return std::make_unique<PluginSinkTask>(pluginClass, name);
                     }};
  }
  std::vector<Props> taskConfigs(int maxTasks) override {
    const oxbow_connect_props* out = nullptr;
    size_t count = 0;
    calls_("connector_task_configs", [&](auto* e) {
      return class_.table->connector_task_configs(handle_, maxTasks, &out, &count, e);
    });
    std::vector<Props> configs;
    for (size_t i = 0; i < count; ++i) configs.push_back(decodeProps(out[i]));
    return configs;
  }
  void stop() override {
    calls_.notify("connector_stop",
                  [&](auto* e) { return class_.table->connector_stop(handle_, e); });
  }
  Config validate(const Props& connectorConfigs) const override {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(connectorConfigs, arena);
    oxbow_connect_config_values out{};
    calls_("connector_validate",
           [&](auto* e) { return class_.table->connector_validate(handle_, encoded, &out, e); });
    return Config(decodeConfigValues(out));
  }
  ConfigDef config() const override {
    oxbow_connect_config_keys out{};
    calls_("connector_config",
           [&](auto* e) { return class_.table->connector_config(handle_, &out, e); });
    return decodeConfigDef(out);
  }

 protected:
  using PropsCall = int32_t (*)(void*, oxbow_connect_props, oxbow_connect_bytes*);
  void withProps(const Props& props, const char* function, PropsCall fn) {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    calls_(function, [&](auto* e) { return fn(handle_, encoded, e); });
  }
  // An answer of the plugin's as text, for a call taking the connector's config.
  using AnswerCall = int32_t (*)(void*, oxbow_connect_props, oxbow_connect_bytes*,
                                 oxbow_connect_bytes*);
  std::string answer(const Props& props, const char* function, AnswerCall fn) {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    oxbow_connect_bytes out{};
    calls_(function, [&](auto* e) { return fn(handle_, encoded, &out, e); });
    return copied(out);
  }

  PluginClass class_;
  PluginCalls calls_;
  void* handle_;
  HostBridge bridge_;
};

class PluginSourceConnector : public PluginConnectorBase<SourceConnector> {
 public:
  using PluginConnectorBase::PluginConnectorBase;
  std::optional<ExactlyOnceSupport> exactlyOnceSupport(const Props& config) override {
    std::string support =
        answer(config, "source_exactly_once_support", class_.table->source_exactly_once_support);
    if (support == "SUPPORTED") return ExactlyOnceSupport::SUPPORTED;
    if (support == "UNSUPPORTED") return ExactlyOnceSupport::UNSUPPORTED;
    return std::nullopt;
  }
  ConnectorTransactionBoundaries canDefineTransactionBoundaries(const Props& config) override {
    return answer(config, "source_can_define_transaction_boundaries",
                  class_.table->source_can_define_transaction_boundaries) == "SUPPORTED"
               ? ConnectorTransactionBoundaries::SUPPORTED
               : ConnectorTransactionBoundaries::UNSUPPORTED;
  }
  bool alterOffsets(const Props& config, const SourceOffsets& offsets) override {
    Arena arena;
    std::vector<oxbow_connect_source_offset> encoded;
    for (const auto& [partition, offset] : offsets) {
      encoded.push_back({arena.keep(encodeMap(partition)),
                         offset ? arena.keep(encodeMap(*offset)) : oxbow_connect_bytes{}});
    }
    int32_t checked = 0;
    oxbow_connect_props props = encodeProps(config, arena);
    calls_("source_alter_offsets", [&](auto* e) {
      return class_.table->source_alter_offsets(handle_, props, {encoded.data(), encoded.size()},
                                                &checked, e);
    });
    return checked != 0;
  }
};

class PluginSinkConnector : public PluginConnectorBase<SinkConnector> {
 public:
  using PluginConnectorBase::PluginConnectorBase;
  bool alterOffsets(const Props& config,
                    const std::map<TopicPartition, std::optional<int64_t>>& offsets) override {
    Arena arena;
    std::vector<oxbow_connect_sink_offset> encoded;
    for (const auto& [tp, offset] : offsets) {
      encoded.push_back({{bytesOf(tp.topic), tp.partition},
                         offset.has_value(),
                         -1,
                         offset.value_or(0),
                         oxbow_connect_bytes{}});
    }
    int32_t checked = 0;
    oxbow_connect_props props = encodeProps(config, arena);
    calls_("sink_alter_offsets", [&](auto* e) {
      return class_.table->sink_alter_offsets(handle_, props, {encoded.data(), encoded.size()},
                                              &checked, e);
    });
    return checked != 0;
  }
};

class PluginConverter : public Converter {
 public:
  explicit PluginConverter(PluginConverterClass converterClass)
      : class_(std::move(converterClass)),
        calls_(class_.library, "converter"),
        handle_(calls_.value("converter_new", [&] { return class_.table->converter_new(); })) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create converter " +
                             class_.table->class_name);
    }
  }
  ~PluginConverter() override {
    calls_.release("converter_free", [&] { class_.table->converter_free(handle_); });
  }
  PluginConverter(const PluginConverter&) = delete;
  PluginConverter& operator=(const PluginConverter&) = delete;

  void configure(const ConfigMap& configs, bool isKey) override {
    Arena arena;
    Props props(configs.begin(), configs.end());
    oxbow_connect_props encoded = encodeProps(props, arena);
    calls_("configure",
           [&](auto* e) { return class_.table->configure(handle_, encoded, isKey, e); });
  }

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override {
    std::string data = encodeData(schema, value);
    int32_t isNull = 0;
    oxbow_connect_bytes written{};
    calls_("from_connect_data", [&](auto* e) {
      return class_.table->from_connect_data(handle_, bytesOf(topic), bytesOf(data), &isNull,
                                             &written, e);
    });
    if (isNull != 0) return false;
    out.assign(view(written));
    return true;
  }
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override {
    oxbow_connect_bytes data{};
    calls_("to_connect_data", [&](auto* e) {
      return class_.table->to_connect_data(handle_, bytesOf(topic), !value.has_value(),
                                           bytesOf(value.value_or("")), &data, e);
    });
    return decodeData(data);
  }

 private:
  PluginConverterClass class_;
  PluginCalls calls_;
  void* handle_;
};

}  // namespace

ConverterFactory pluginConverterFactory(PluginConverterClass converterClass) {
  return [converterClass]() -> std::unique_ptr<Converter> {
    return std::make_unique<PluginConverter>(converterClass);
  };
}

ConnectorFactory pluginConnectorFactory(PluginClass pluginClass) {
  return [pluginClass]() -> std::unique_ptr<Connector> {
    if (pluginClass.table->type == OXBOW_CONNECT_SOURCE) {
      return std::make_unique<PluginSourceConnector>(pluginClass);
    }
    return std::make_unique<PluginSinkConnector>(pluginClass);
  };
}

}  // namespace oxbow::connect::plugin_loader
