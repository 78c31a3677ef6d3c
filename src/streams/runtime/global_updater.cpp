#include "streams/runtime/global_updater.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "oxbow/streams/errors.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {

// What a global store's update processor reaches: its store and the record's metadata. It
// cannot forward (a global store has no downstream) or punctuate, as in Kafka.
class GlobalStateUpdater::Context : public UserContext {
 public:
  Context(const GlobalTableSpec& spec, std::shared_ptr<const GraphBuilder> graph,
          GlobalStores& stores, const std::string& application_id)
      : spec_(spec), graph_(std::move(graph)), stores_(stores), application_id_(application_id) {}
  void set_record(const RawRecord& raw) {
    raw_ = &raw;
    stream_time_ = std::max(stream_time_, raw.timestamp);
  }
  void forward(const Record&) override { refuse("forward"); }
  void forward(const Record&, const std::string&) override { refuse("forward"); }
  Cancellable schedule(int64_t, PunctuationType, std::function<void(int64_t)>) override {
    refuse("schedule punctuation");
  }
  void commit() override {}
  std::optional<RecordMetadata> recordMetadata() const override {
    if (!raw_) return std::nullopt;
    return RecordMetadata{std::string(raw_->topic), raw_->partition, raw_->offset};
  }
  Headers headers() const override { return raw_ ? raw_->headers : Headers{}; }
  int64_t timestamp() const override { return raw_ ? raw_->timestamp : 0; }
  int64_t currentStreamTimeMs() const override { return stream_time_; }
  int64_t currentSystemTimeMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  const std::string& applicationId() const override { return application_id_; }
  TaskId taskId() const override { return TaskId{-1, raw_ ? raw_->partition : -1}; }
  KeyValueStore& store(const std::string& name) override {
    if (name != spec_.store)
      throw TopologyException("a global store's update processor reaches only its store " +
                              spec_.store + ", not " + name);
    return stores_.store(name);
  }
  const StoreOptions& store_options(const std::string& name) const override {
    const StoreSpec* spec = graph_->store(name);
    if (!spec) throw TopologyException("no store named " + name);
    return spec->options;
  }

 private:
  [[noreturn]] void refuse(const char* what) const {
    throw StreamsException(std::string("the update processor of global store ") + spec_.store +
                           " cannot " + what);
  }
  const GlobalTableSpec& spec_;
  std::shared_ptr<const GraphBuilder> graph_;
  GlobalStores& stores_;
  const std::string& application_id_;
  const RawRecord* raw_ = nullptr;
  int64_t stream_time_ = -1;
};

GlobalStateUpdater::GlobalStateUpdater(std::shared_ptr<const GraphBuilder> graph,
                                       std::shared_ptr<GlobalStores> stores,
                                       DeserializationPolicy policy, std::string application_id)
    : graph_(std::move(graph)),
      stores_(std::move(stores)),
      policy_(policy),
      application_id_(std::move(application_id)) {}

GlobalStateUpdater::~GlobalStateUpdater() {
  for (auto& [topic, u] : updaters_) u.processor->close();
}

GlobalStateUpdater::Updater& GlobalStateUpdater::updater_of(const GlobalTableSpec& spec) {
  auto [it, fresh] = updaters_.try_emplace(spec.topic);
  if (fresh) {
    it->second.processor = spec.updater();
    it->second.context = std::make_unique<Context>(spec, graph_, *stores_, application_id_);
    it->second.processor->init(*it->second.context);
  }
  return it->second;
}

bool GlobalStateUpdater::decode(const GlobalTableSpec& spec, const RawRecord& raw, Record& out) {
  try {
    if (raw.key) out.key = spec.consumed.key_serde.deserialize(raw.topic, *raw.key);
    if (raw.value) out.value = spec.consumed.value_serde.deserialize(raw.topic, *raw.value);
    return true;
  } catch (const std::exception& e) {
    if (policy_ == DeserializationPolicy::kLogAndFail)
      throw StreamsException(fmt::format(
          "Deserialization exception handler is set to fail upon a deserialization error: "
          "topic {} partition {} offset {}: {}",
          raw.topic, raw.partition, raw.offset, e.what()));
    spdlog::warn(
        "skipping record due to deserialization error: topic {} partition {} offset {}: {}",
        raw.topic, raw.partition, raw.offset, e.what());
    return false;
  }
}

void GlobalStateUpdater::apply(const RawRecord& raw) {
  const GlobalTableSpec* spec = graph_->global_table_of(raw.topic);
  if (!spec) return;
  Record record;
  record.timestamp = raw.timestamp;
  record.headers = raw.headers;
  if (!decode(*spec, raw, record)) return;
  if (spec->updater) {
    Updater& u = updater_of(*spec);
    u.context->set_record(raw);
    u.processor->process(record);
    return;
  }
  if (!raw.key) return;  // a table row needs a key
  std::optional<std::string> stored;
  if (raw.value) stored = with_timestamp(raw.timestamp, *raw.value);
  static const RecordContext kNone;
  stores_->store(spec->store).put(std::string(*raw.key), stored, kNone);
}

}  // namespace oxbow::streams::detail
