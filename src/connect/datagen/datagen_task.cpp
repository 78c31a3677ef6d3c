// DatagenTask: records of a quickstart, paced by max.interval (or records.per.second), resumed
// from the iteration and random state its last committed offset holds.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "connect/datagen/quickstarts.h"
#include "oxbow/connect/datagen.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect {

namespace {

using Clock = std::chrono::steady_clock;

// An offset's integer, whatever width the offset store read it back as.
std::optional<int64_t> integerEntry(const ValueMap& map, std::string_view key) {
  for (const auto& [name, value] : map) {
    if (name.kind() != Value::Kind::String || name.asString() != key) continue;
    switch (value.kind()) {
      case Value::Kind::Int8:
        return value.asInt8();
      case Value::Kind::Int16:
        return value.asInt16();
      case Value::Kind::Int32:
        return value.asInt32();
      case Value::Kind::Int64:
        return value.asInt64();
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

// The starting random state: random.seed advanced once per lower task id, so that each task of
// a seeded connector draws its own values (as Confluent's tasks do); else from the system.
uint64_t initialSeed(const AbstractConfig& config, int32_t taskId) {
  const std::string name(DatagenConnector::RANDOM_SEED_CONFIG);
  if (config.isNull(name)) return (uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  datagen::Random random(static_cast<uint64_t>(config.getLong(name)));
  for (int32_t i = 0; i < taskId; ++i) random = datagen::Random(random.next());
  return random.state();
}

}  // namespace

struct DatagenTask::State {
  std::string topic;
  int64_t maxIntervalMs = 500;
  int32_t iterations = 0;
  const datagen::Quickstart* quickstart = nullptr;
  std::string keyField;
  double perSecond = 0;
  int64_t keySpace = 0;
  int32_t batchSize = 1;
  int32_t taskId = 0;
  int64_t generation = 0;
  int64_t count = 0;
  datagen::Random random{0};
  // Waits are drawn apart from the data's random, so that the data does not depend on timing.
  std::minstd_rand pauses{std::random_device{}()};
  Clock::time_point paceStart;
  int64_t pacedCount = 0;
  bool doneLogged = false;

  ValueMap partition() const { return {{Value(std::string(TASK_ID)), Value(taskId)}}; }
};

DatagenTask::DatagenTask() : state_(std::make_unique<State>()) {}
DatagenTask::~DatagenTask() = default;

std::string DatagenTask::version() const {
  return std::string(connectVersion());
}

void DatagenTask::start(const Props& props) {
  using C = DatagenConnector;
  AbstractConfig config(C::configDef(), props);
  State& s = *state_;
  s.topic = config.getString(std::string(C::KAFKA_TOPIC_CONFIG));
  s.maxIntervalMs = config.getLong(std::string(C::MAX_INTERVAL_CONFIG));
  s.iterations = config.getInt(std::string(C::ITERATIONS_CONFIG));
  s.quickstart = datagen::findQuickstart(config.getString(std::string(C::QUICKSTART_CONFIG)));
  if (s.quickstart == nullptr) throw ConnectException("datagen needs a quickstart");
  s.keyField = config.getString(std::string(C::SCHEMA_KEYFIELD_CONFIG));
  if (s.keyField.empty()) s.keyField = s.quickstart->keyField;
  if (s.quickstart->schema->field(s.keyField) == nullptr) {
    throw ConfigException(std::string(C::SCHEMA_KEYFIELD_CONFIG), s.keyField,
                          "no such field in quickstart " + std::string(s.quickstart->name));
  }
  s.perSecond = config.getDouble(std::string(C::RECORDS_PER_SECOND_CONFIG));
  s.keySpace = config.getLong(std::string(C::KEY_SPACE_CONFIG));
  s.batchSize = config.getInt(std::string(C::BATCH_SIZE_CONFIG));
  auto id = props.find(std::string(TASK_ID));
  s.taskId = id == props.end() ? 0 : std::stoi(id->second);
  s.random = datagen::Random(initialSeed(config, s.taskId));
  std::optional<ValueMap> offset;
  if (context() != nullptr) offset = context()->offsetStorageReader().offset(s.partition());
  if (offset) {
    // The offset holds the state after the last record written: go on from there.
    s.generation = integerEntry(*offset, TASK_GENERATION).value_or(0);
    s.count = integerEntry(*offset, CURRENT_ITERATION).value_or(0);
    if (auto seed = integerEntry(*offset, RANDOM_SEED)) {
      s.random = datagen::Random(static_cast<uint64_t>(*seed));
    }
  }
  s.paceStart = Clock::now();
  s.pacedCount = 0;
}

bool DatagenTask::sleepFor(int64_t millis) {
  std::unique_lock lock(mutex_);
  return !wake_.wait_for(lock, std::chrono::milliseconds(millis), [this] { return stopping_; });
}

std::vector<SourceRecord> DatagenTask::poll() {
  State& s = *state_;
  int64_t left = s.iterations > 0 ? s.iterations - s.count : INT64_MAX;
  if (left <= 0) {
    if (!s.doneLogged) {
      spdlog::info("connect: datagen task {} generated the configured {} messages", s.taskId,
                   s.iterations);
      s.doneLogged = true;
    }
    sleepFor(1000);
    return {};
  }
  int64_t wanted = s.batchSize;
  if (s.perSecond > 0) {
    double elapsed = std::chrono::duration<double>(Clock::now() - s.paceStart).count();
    int64_t due = static_cast<int64_t>(elapsed * s.perSecond) - s.pacedCount;
    if (due <= 0) {
      // Until the next record is due, at most 100 ms so that a stop is noticed soon anyway.
      double wait = (static_cast<double>(s.pacedCount + 1) / s.perSecond - elapsed) * 1000;
      sleepFor(std::clamp<int64_t>(static_cast<int64_t>(wait) + 1, 1, 100));
      return {};
    }
    wanted = std::min(due, wanted);
  } else if (s.maxIntervalMs > 0) {
    std::uniform_int_distribution<int64_t> pause(0, s.maxIntervalMs - 1);
    if (!sleepFor(pause(s.pauses))) return {};
  }
  std::vector<SourceRecord> records = generate(std::min(wanted, left));
  s.pacedCount += static_cast<int64_t>(records.size());
  return records;
}

std::vector<SourceRecord> DatagenTask::generate(int64_t count) {
  State& s = *state_;
  std::vector<SourceRecord> records;
  records.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    std::shared_ptr<Struct> value = s.quickstart->generate(s.random, s.count);
    if (s.keySpace > 0) {
      datagen::applyKeySpace(*value, s.keyField, s.random.between(0, s.keySpace));
    }
    std::string key = value->get(s.keyField).toString();
    Headers headers;
    headers.add(std::string(TASK_GENERATION), Schema::INT64_SCHEMA, s.generation)
        .add(std::string(TASK_ID), Schema::INT64_SCHEMA, int64_t{s.taskId})
        .add(std::string(CURRENT_ITERATION), Schema::INT64_SCHEMA, s.count);
    // The state the next run starts from once this record is committed.
    ValueMap offset{
        {Value(std::string(TASK_GENERATION)), Value(s.generation + 1)},
        {Value(std::string(CURRENT_ITERATION)), Value(s.count + 1)},
        {Value(std::string(RANDOM_SEED)), Value(static_cast<int64_t>(s.random.state()))}};
    SchemaPtr schema = value->schema();
    records.emplace_back(s.partition(), std::move(offset), s.topic, std::nullopt,
                         Schema::STRING_SCHEMA, Value(std::move(key)), std::move(schema),
                         Value(std::move(value)), std::nullopt, std::move(headers));
    ++s.count;
  }
  return records;
}

void DatagenTask::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

}  // namespace oxbow::connect
