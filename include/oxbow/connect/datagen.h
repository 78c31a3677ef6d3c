#pragma once
// A generated-data source as Confluent's kafka-connect-datagen
// (io.confluent.kafka.connect.datagen.DatagenConnector), built in: each task writes records of a
// quickstart's schema (users, pageviews, orders) with random field values into `kafka.topic`, a
// record every random [0, max.interval) ms, keyed by the quickstart's key field as a string; its
// source offset holds the next iteration and random state, so that a restarted task goes on with
// its count and its sequence. Ours besides Confluent's configs: records.per.second, key.space and
// batch.size, for benchmarks (docs/connect/datagen.md).
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/source.h"

namespace oxbow::connect {

class DatagenConnector : public SourceConnector {
 public:
  static constexpr std::string_view CLASS_NAME =
      "io.confluent.kafka.connect.datagen.DatagenConnector";
  static constexpr std::string_view KAFKA_TOPIC_CONFIG = "kafka.topic";
  static constexpr std::string_view MAX_INTERVAL_CONFIG = "max.interval";
  static constexpr std::string_view ITERATIONS_CONFIG = "iterations";
  static constexpr std::string_view SCHEMA_FILENAME_CONFIG = "schema.filename";
  static constexpr std::string_view SCHEMA_KEYFIELD_CONFIG = "schema.keyfield";
  static constexpr std::string_view QUICKSTART_CONFIG = "quickstart";
  static constexpr std::string_view RANDOM_SEED_CONFIG = "random.seed";
  // Ours.
  static constexpr std::string_view RECORDS_PER_SECOND_CONFIG = "records.per.second";
  static constexpr std::string_view KEY_SPACE_CONFIG = "key.space";
  static constexpr std::string_view BATCH_SIZE_CONFIG = "batch.size";
  static const ConfigDef& configDef();

  std::string version() const override;
  void start(const Props& props) override;
  TaskClass taskClass() const override;
  // maxTasks configs, each with its task.id (every task generates its own records).
  std::vector<Props> taskConfigs(int maxTasks) override;
  void stop() override {}
  ConfigDef config() const override { return configDef(); }

 private:
  Props props_;
};

class DatagenTask : public SourceTask {
 public:
  static constexpr std::string_view CLASS_NAME = "io.confluent.kafka.connect.datagen.DatagenTask";
  // The source partition's key, the offset's keys and the headers, as Confluent's task names them.
  static constexpr std::string_view TASK_ID = "task.id";
  static constexpr std::string_view TASK_GENERATION = "task.generation";
  static constexpr std::string_view CURRENT_ITERATION = "current.iteration";
  static constexpr std::string_view RANDOM_SEED = "random.seed";

  DatagenTask();
  ~DatagenTask() override;

  std::string version() const override;
  void start(const Props& props) override;
  // The records due: batch.size after a random wait below max.interval, or as many as
  // records.per.second allows by now (up to batch.size); none once `iterations` are written.
  std::vector<SourceRecord> poll() override;
  void stop() override;

  struct State;

 private:
  // Waits that long unless stop() comes first; false when stopped.
  bool sleepFor(int64_t millis);
  std::vector<SourceRecord> generate(int64_t count);

  std::unique_ptr<State> state_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

class ConnectorPlugins;
void registerDatagenConnector(ConnectorPlugins& plugins);

}  // namespace oxbow::connect
