#pragma once
// Kafka's FileStream connectors (org.apache.kafka.connect.file), built in: the source reads a
// file's lines (standard input when `file` is unset) into one topic, remembering the byte
// position after each line as its offset; the sink writes each record's value as a line to a
// file (standard output when unset).
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect {

class FileStreamSourceConnector : public SourceConnector {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.file.FileStreamSourceConnector";
  static constexpr std::string_view TOPIC_CONFIG = "topic";
  static constexpr std::string_view FILE_CONFIG = "file";
  static constexpr std::string_view TASK_BATCH_SIZE_CONFIG = "batch.size";
  static constexpr int DEFAULT_TASK_BATCH_SIZE = 2000;
  static const ConfigDef& configDef();

  std::string version() const override;
  void start(const Props& props) override;
  TaskClass taskClass() const override;
  // One config whatever maxTasks: a file has one reader.
  std::vector<Props> taskConfigs(int maxTasks) override;
  void stop() override {}
  ConfigDef config() const override { return configDef(); }
  // Supported for a file (as long as it is only appended to), not for standard input.
  std::optional<ExactlyOnceSupport> exactlyOnceSupport(const Props& connectorConfig) override;
  // Each offset must be reset or hold a non-negative `position`, each partition a `filename`;
  // refused outright when reading standard input, whose position is not tracked.
  bool alterOffsets(const Props& connectorConfig, const SourceOffsets& offsets) override;

 private:
  Props props_;
};

class FileStreamSourceTask : public SourceTask {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.file.FileStreamSourceTask";
  static constexpr std::string_view FILENAME_FIELD = "filename";
  static constexpr std::string_view POSITION_FIELD = "position";

  // idleWait: how long poll() waits when there is nothing new (Kafka's one second).
  explicit FileStreamSourceTask(std::chrono::milliseconds idleWait = std::chrono::seconds(1));
  ~FileStreamSourceTask() override;

  std::string version() const override;
  void start(const Props& props) override;
  // Up to batch.size lines. The file is opened on the first poll, which seeks to the committed
  // position; a missing file is waited for. Lines appended later are read by later polls.
  std::vector<SourceRecord> poll() override;
  void stop() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class FileStreamSinkConnector : public SinkConnector {
 public:
  static constexpr std::string_view CLASS_NAME =
      "org.apache.kafka.connect.file.FileStreamSinkConnector";
  static constexpr std::string_view FILE_CONFIG = "file";
  static const ConfigDef& configDef();

  std::string version() const override;
  void start(const Props& props) override;
  TaskClass taskClass() const override;
  // maxTasks copies of the connector's config.
  std::vector<Props> taskConfigs(int maxTasks) override;
  void stop() override {}
  ConfigDef config() const override { return configDef(); }
  // Nothing to check: the file holds no offsets.
  bool alterOffsets(const Props&,
                    const std::map<TopicPartition, std::optional<int64_t>>&) override {
    return true;
  }

 private:
  Props props_;
};

class FileStreamSinkTask : public SinkTask {
 public:
  static constexpr std::string_view CLASS_NAME = "org.apache.kafka.connect.file.FileStreamSinkTask";
  ~FileStreamSinkTask() override;

  std::string version() const override;
  // Opens the file to append to, creating it; ConnectException when it cannot.
  void start(const Props& props) override;
  // Each record's value as Java's println writes it ("null" for null); buffered until flush().
  void put(const std::vector<SinkRecord>& records) override;
  void flush(const SinkOffsets& currentOffsets) override;
  // Writes what is buffered and closes the file.
  void stop() override;

 private:
  void writeBuffered();
  std::string filename_;
  int fd_ = -1;
  bool ownsFd_ = false;
  std::string buffered_;
};

// Registers both connectors under their class names.
class ConnectorPlugins;
void registerFileStreamConnectors(ConnectorPlugins& plugins);

}  // namespace oxbow::connect
