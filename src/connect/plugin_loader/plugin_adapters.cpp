// A plugin's connector and tasks behind the runtime's Connector and Task classes.
#include "connect/plugin_loader/plugin_adapters.h"

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "connect/plugin_loader/plugin_host.h"
#include "oxbow/connect/plugin_codec.h"

namespace oxbow::connect::plugin_loader {

using namespace plugin_codec;  // NOLINT: the codec is this file's vocabulary

namespace {

// Runs one call into the plugin: its error, if any, thrown again here.
template <class F>
void call(F&& fn) {
  oxbow_connect_bytes error{};
  int32_t code = fn(&error);
  if (code != OXBOW_CONNECT_OK) throwError(code, text(error));
}

std::string copied(oxbow_connect_bytes bytes) {
  return text(bytes);
}

template <class TaskBase>
class PluginTask : public TaskBase {
 public:
  PluginTask(PluginClass pluginClass, const std::string& name)
      : class_(std::move(pluginClass)), handle_(class_.table->task_new(name.c_str())) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create task " + name);
    }
  }
  ~PluginTask() override { class_.table->task_free(handle_); }
  PluginTask(const PluginTask&) = delete;
  PluginTask& operator=(const PluginTask&) = delete;

  std::string version() const override {
    oxbow_connect_bytes out{};
    call([&](auto* e) { return class_.table->task_version(handle_, &out, e); });
    return copied(out);
  }
  void start(const Props& props) override {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    call([&](auto* e) { return class_.table->task_start(handle_, encoded, e); });
  }
  void stop() override {
    call([&](auto* e) { return class_.table->task_stop(handle_, e); });
  }

 protected:
  PluginClass class_;
  void* handle_;
  HostBridge bridge_;
};

class PluginSourceTask : public PluginTask<SourceTask> {
 public:
  using PluginTask::PluginTask;
  void initialize(SourceTaskContext& context) override {
    SourceTask::initialize(context);
    const oxbow_connect_host* host = bridge_.forSourceTask(context);
    call([&](auto* e) { return class_.table->task_initialize(handle_, host, e); });
  }
  std::vector<SourceRecord> poll() override {
    oxbow_connect_records out{};
    call([&](auto* e) { return class_.table->source_task_poll(handle_, &out, e); });
    std::vector<SourceRecord> records;
    records.reserve(out.count);
    for (size_t i = 0; i < out.count; ++i) records.push_back(decodeSourceRecord(out.records[i]));
    return records;
  }
  void commit() override {
    call([&](auto* e) { return class_.table->source_task_commit(handle_, e); });
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
    call([&](auto* e) {
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
    call([&](auto* e) { return class_.table->task_initialize(handle_, host, e); });
  }
  void put(const std::vector<SinkRecord>& records) override {
    Arena arena;
    oxbow_connect_records encoded = encodeRecords(records, arena, encodeSinkRecord);
    call([&](auto* e) { return class_.table->sink_task_put(handle_, encoded, e); });
  }
  void flush(const SinkOffsets& currentOffsets) override {
    Arena arena;
    oxbow_connect_sink_offsets encoded = encodeSinkOffsets(currentOffsets, arena);
    call([&](auto* e) { return class_.table->sink_task_flush(handle_, encoded, e); });
  }
  SinkOffsets preCommit(const SinkOffsets& currentOffsets) override {
    Arena arena;
    oxbow_connect_sink_offsets encoded = encodeSinkOffsets(currentOffsets, arena);
    oxbow_connect_sink_offsets out{};
    call([&](auto* e) { return class_.table->sink_task_pre_commit(handle_, encoded, &out, e); });
    return decodeSinkOffsets(out);
  }
  void open(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    oxbow_connect_partitions encoded = encodePartitions(partitions, arena);
    call([&](auto* e) { return class_.table->sink_task_open(handle_, encoded, e); });
  }
  void close(const std::vector<TopicPartition>& partitions) override {
    Arena arena;
    oxbow_connect_partitions encoded = encodePartitions(partitions, arena);
    call([&](auto* e) { return class_.table->sink_task_close(handle_, encoded, e); });
  }
};

// The calls both kinds of connector make the same way.
template <class Base>
class PluginConnectorBase : public Base {
 public:
  explicit PluginConnectorBase(PluginClass pluginClass)
      : class_(std::move(pluginClass)), handle_(class_.table->connector_new()) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create connector " +
                             class_.table->class_name);
    }
  }
  ~PluginConnectorBase() override { class_.table->connector_free(handle_); }
  PluginConnectorBase(const PluginConnectorBase&) = delete;
  PluginConnectorBase& operator=(const PluginConnectorBase&) = delete;

  std::string version() const override { return class_.table->version; }
  void initialize(ConnectorContext& context) override {
    Connector::initialize(context);
    const oxbow_connect_host* host = bridge_.forConnector(context);
    call([&](auto* e) {
      return class_.table->connector_initialize(handle_, host, 0, nullptr, 0, e);
    });
  }
  void initialize(ConnectorContext& context, const std::vector<Props>& taskConfigs) override {
    Connector::initialize(context, taskConfigs);
    const oxbow_connect_host* host = bridge_.forConnector(context);
    Arena arena;
    std::vector<oxbow_connect_props> encoded;
    for (const Props& props : taskConfigs) encoded.push_back(encodeProps(props, arena));
    call([&](auto* e) {
      return class_.table->connector_initialize(handle_, host, 1, encoded.data(), encoded.size(),
                                                e);
    });
  }
  void start(const Props& props) override { withProps(props, class_.table->connector_start); }
  void reconfigure(const Props& props) override {
    withProps(props, class_.table->connector_reconfigure);
  }
  TaskClass taskClass() const override {
    oxbow_connect_bytes out{};
    call([&](auto* e) { return class_.table->connector_task_class(handle_, &out, e); });
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
    call([&](auto* e) {
      return class_.table->connector_task_configs(handle_, maxTasks, &out, &count, e);
    });
    std::vector<Props> configs;
    for (size_t i = 0; i < count; ++i) configs.push_back(decodeProps(out[i]));
    return configs;
  }
  void stop() override {
    call([&](auto* e) { return class_.table->connector_stop(handle_, e); });
  }
  Config validate(const Props& connectorConfigs) const override {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(connectorConfigs, arena);
    oxbow_connect_config_values out{};
    call([&](auto* e) { return class_.table->connector_validate(handle_, encoded, &out, e); });
    return Config(decodeConfigValues(out));
  }
  ConfigDef config() const override {
    oxbow_connect_config_keys out{};
    call([&](auto* e) { return class_.table->connector_config(handle_, &out, e); });
    return decodeConfigDef(out);
  }

 protected:
  using PropsCall = int32_t (*)(void*, oxbow_connect_props, oxbow_connect_bytes*);
  void withProps(const Props& props, PropsCall fn) {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    call([&](auto* e) { return fn(handle_, encoded, e); });
  }
  // An answer of the plugin's as text, for a call taking the connector's config.
  using AnswerCall = int32_t (*)(void*, oxbow_connect_props, oxbow_connect_bytes*,
                                 oxbow_connect_bytes*);
  std::string answer(const Props& props, AnswerCall fn) {
    Arena arena;
    oxbow_connect_props encoded = encodeProps(props, arena);
    oxbow_connect_bytes out{};
    call([&](auto* e) { return fn(handle_, encoded, &out, e); });
    return copied(out);
  }

  PluginClass class_;
  void* handle_;
  HostBridge bridge_;
};

class PluginSourceConnector : public PluginConnectorBase<SourceConnector> {
 public:
  using PluginConnectorBase::PluginConnectorBase;
  std::optional<ExactlyOnceSupport> exactlyOnceSupport(const Props& config) override {
    std::string support = answer(config, class_.table->source_exactly_once_support);
    if (support == "SUPPORTED") return ExactlyOnceSupport::SUPPORTED;
    if (support == "UNSUPPORTED") return ExactlyOnceSupport::UNSUPPORTED;
    return std::nullopt;
  }
  ConnectorTransactionBoundaries canDefineTransactionBoundaries(const Props& config) override {
    return answer(config, class_.table->source_can_define_transaction_boundaries) == "SUPPORTED"
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
    call([&](auto* e) {
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
    call([&](auto* e) {
      return class_.table->sink_alter_offsets(handle_, props, {encoded.data(), encoded.size()},
                                              &checked, e);
    });
    return checked != 0;
  }
};

class PluginConverter : public Converter {
 public:
  explicit PluginConverter(PluginConverterClass converterClass)
      : class_(std::move(converterClass)), handle_(class_.table->converter_new()) {
    if (handle_ == nullptr) {
      throw ConnectException("Plugin " + class_.library->path + " could not create converter " +
                             class_.table->class_name);
    }
  }
  ~PluginConverter() override { class_.table->converter_free(handle_); }
  PluginConverter(const PluginConverter&) = delete;
  PluginConverter& operator=(const PluginConverter&) = delete;

  void configure(const ConfigMap& configs, bool isKey) override {
    Arena arena;
    Props props(configs.begin(), configs.end());
    oxbow_connect_props encoded = encodeProps(props, arena);
    call([&](auto* e) { return class_.table->configure(handle_, encoded, isKey, e); });
  }

 protected:
  bool write(std::string_view topic, const SchemaPtr& schema, const Value& value,
             std::string& out) override {
    std::string data = encodeData(schema, value);
    int32_t isNull = 0;
    oxbow_connect_bytes written{};
    call([&](auto* e) {
      return class_.table->from_connect_data(handle_, bytesOf(topic), bytesOf(data), &isNull,
                                             &written, e);
    });
    if (isNull != 0) return false;
    out.assign(view(written));
    return true;
  }
  SchemaAndValue read(std::string_view topic, std::optional<std::string_view> value) override {
    oxbow_connect_bytes data{};
    call([&](auto* e) {
      return class_.table->to_connect_data(handle_, bytesOf(topic), !value.has_value(),
                                           bytesOf(value.value_or("")), &data, e);
    });
    return decodeData(data);
  }

 private:
  PluginConverterClass class_;
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
