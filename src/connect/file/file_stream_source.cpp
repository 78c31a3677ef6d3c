// FileStreamSourceConnector and its task: a file's lines into a topic, resumable from the byte
// position after the last line the runtime committed.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/file_stream.h"
#include "oxbow/connect/plugins.h"
#include "oxbow/connect/schema.h"

namespace oxbow::connect {

namespace {

constexpr size_t kReadChunk = 64 * 1024;

std::optional<std::string> configuredFile(const AbstractConfig& config) {
  std::optional<std::string> file =
      config.getOptionalString(std::string(FileStreamSourceConnector::FILE_CONFIG));
  if (file && file->empty()) return std::nullopt;
  return file;
}

// Whether a read would not block: always for a regular file (a read at its end returns 0), for
// standard input only when something (or the end) is there.
bool readable(int fd) {
  pollfd waiting{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&waiting, 1, 0) > 0 && (waiting.revents & (POLLIN | POLLHUP)) != 0;
}

std::string errnoText() {
  return std::strerror(errno);
}

// The entry of an offset or partition map with a text key; null when it has none.
const Value* entry(const ValueMap& map, std::string_view key) {
  for (const auto& [name, value] : map) {
    if (name.kind() == Value::Kind::String && name.asString() == key) return &value;
  }
  return nullptr;
}

}  // namespace

const ConfigDef& FileStreamSourceConnector::configDef() {
  using Type = ConfigDef::Type;
  using Importance = ConfigDef::Importance;
  static const ConfigDef definition = [] {
    ConfigDef def;
    def.define(std::string(FILE_CONFIG), Type::STRING, nullptr, Importance::HIGH,
               "The file whose lines are read; standard input when unset.")
        .define(std::string(TOPIC_CONFIG), Type::STRING, DefaultValue(), NonEmptyString::create(),
                Importance::HIGH, "The topic the lines are written to.")
        .define(std::string(TASK_BATCH_SIZE_CONFIG), Type::INT, DEFAULT_TASK_BATCH_SIZE,
                Importance::LOW, "At most this many lines are returned by one poll of the task.");
    return def;
  }();
  return definition;
}

std::string FileStreamSourceConnector::version() const {
  return std::string(connectVersion());
}

void FileStreamSourceConnector::start(const Props& props) {
  AbstractConfig config(configDef(), props);  // refuses a config without a topic
  props_ = props;
}

TaskClass FileStreamSourceConnector::taskClass() const {
  return TaskClass::of<FileStreamSourceTask>(std::string(FileStreamSourceTask::CLASS_NAME));
}

std::vector<Props> FileStreamSourceConnector::taskConfigs(int /*maxTasks*/) {
  return {props_};
}

std::optional<ExactlyOnceSupport> FileStreamSourceConnector::exactlyOnceSupport(
    const Props& connectorConfig) {
  return configuredFile(AbstractConfig(configDef(), connectorConfig))
             ? ExactlyOnceSupport::SUPPORTED
             : ExactlyOnceSupport::UNSUPPORTED;
}

bool FileStreamSourceConnector::alterOffsets(const Props& connectorConfig,
                                             const SourceOffsets& offsets) {
  const std::string file(FILE_CONFIG);
  const std::string position(FileStreamSourceTask::POSITION_FIELD);
  const std::string filename(FileStreamSourceTask::FILENAME_FIELD);
  if (!configuredFile(AbstractConfig(configDef(), connectorConfig))) {
    throw ConnectException("Offsets cannot be modified if the '" + file +
                           "' configuration is unspecified. This is because stdin is used for "
                           "input and offsets are not tracked.");
  }
  for (const auto& [partition, offset] : offsets) {
    if (!offset) continue;  // a reset is always allowed, so that stale offsets can be cleared
    const Value* at = entry(*offset, position);
    if (at == nullptr) {
      throw ConnectException("Offset objects should either be null or contain the key '" +
                             position + "'");
    }
    if (at->kind() != Value::Kind::Int64) {
      throw ConnectException("The value for the '" + position +
                             "' key in the offset is expected to be a Long value");
    }
    if (at->asInt64() < 0) {
      throw ConnectException("The value for the '" + position +
                             "' key in the offset should be a non-negative value");
    }
    if (entry(partition, filename) == nullptr) {
      throw ConnectException("Partition objects should contain the key '" + filename + "'");
    }
  }
  return true;
}

struct FileStreamSourceTask::State {
  std::chrono::milliseconds idleWait;
  std::optional<std::string> filename;  // nullopt: standard input
  std::string topic;
  int32_t batchSize = DEFAULT_BATCH;
  int fd = -1;
  bool ownsFd = false;                  // standard input is never closed
  std::optional<int64_t> streamOffset;  // not tracked for standard input
  std::string buffer;
  size_t start = 0;  // where the unread part of buffer begins
  std::mutex mutex;
  std::condition_variable wake;
  bool stopped = false;

  static constexpr int32_t DEFAULT_BATCH = FileStreamSourceConnector::DEFAULT_TASK_BATCH_SIZE;

  void closeFile() {
    if (ownsFd) ::close(fd);
    fd = -1;
    ownsFd = false;
  }
  void waitIdle(std::unique_lock<std::mutex>& lock) {
    wake.wait_for(lock, idleWait, [this] { return stopped; });
  }
  ValueMap sourcePartition() const {
    return {{std::string(FILENAME_FIELD), filename ? Value(*filename) : Value()}};
  }
  bool open(std::unique_lock<std::mutex>& lock, OffsetStorageReader* offsets);
  void seekToCommitted(OffsetStorageReader* offsets);
  std::optional<std::string> extractLine();
  bool takeLines(std::vector<SourceRecord>& records);
};

// False when the file is not there yet (after waiting a while for it).
bool FileStreamSourceTask::State::open(std::unique_lock<std::mutex>& lock,
                                       OffsetStorageReader* offsets) {
  fd = ::open(filename->c_str(), O_RDONLY | O_CLOEXEC);
  ownsFd = fd >= 0;
  if (fd < 0) {
    if (errno != ENOENT) {
      throw ConnectException("Error while trying to open file " + *filename + ": " + errnoText());
    }
    waitIdle(lock);
    return false;
  }
  seekToCommitted(offsets);
  return true;
}

void FileStreamSourceTask::State::seekToCommitted(OffsetStorageReader* offsets) {
  streamOffset = 0;
  std::optional<ValueMap> committed;
  if (offsets != nullptr) committed = offsets->offset(sourcePartition());
  if (!committed) return;
  const Value* position = entry(*committed, POSITION_FIELD);
  if (position == nullptr || position->isNull()) return;
  if (position->kind() != Value::Kind::Int64) {
    throw ConnectException("Offset position is the incorrect type");
  }
  int64_t at = position->asInt64();
  if (at > 0 && ::lseek(fd, at, SEEK_SET) < 0) {
    throw ConnectException("Error while trying to seek to previous offset in file " + *filename +
                           ": " + errnoText());
  }
  streamOffset = at;
}

// The next whole line (ended by \n, \r or \r\n), advancing the stream offset past its end; a \r
// last in the buffer waits for the next byte, which may be its \n.
std::optional<std::string> FileStreamSourceTask::State::extractLine() {
  // Two memchr scans: find_first_of calls memchr on its set for each byte of the buffer, which
  // was the worker's largest single cost in bench/connect.sh.
  const char* from = buffer.data() + start;
  size_t rest = buffer.size() - start;
  const void* newline = std::memchr(from, '\n', rest);
  size_t upTo =
      newline != nullptr ? static_cast<size_t>(static_cast<const char*>(newline) - from) : rest;
  const void* ret = std::memchr(from, '\r', upTo);
  const void* first = ret != nullptr ? ret : newline;
  if (first == nullptr) return std::nullopt;
  size_t end = start + static_cast<size_t>(static_cast<const char*>(first) - from);
  size_t next = end + 1;
  if (buffer[end] == '\r') {
    if (next == buffer.size()) return std::nullopt;
    if (buffer[next] == '\n') ++next;
  }
  std::string line = buffer.substr(start, end - start);
  if (streamOffset) *streamOffset += static_cast<int64_t>(next - start);
  start = next;
  return line;
}

// Appends lines until the batch is full (true) or no whole line is left (false). Each record's
// timestamp is when its lines were taken from what was read (Kafka's task reads the clock per
// line: the lines of one read are taken within a few microseconds, and the clock per line cost
// more than the rest of the line's way here); its source partition is made once per call.
bool FileStreamSourceTask::State::takeLines(std::vector<SourceRecord>& records) {
  const SchemaPtr& valueSchema = Schema::STRING_SCHEMA;
  std::optional<ValueMap> partition;
  int64_t now = 0;
  while (std::optional<std::string> line = extractLine()) {
    if (!partition) {
      partition = sourcePartition();
      now = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
    }
    ValueMap offset{{std::string(POSITION_FIELD), streamOffset ? Value(*streamOffset) : Value()}};
    records.emplace_back(*partition, std::move(offset), topic, std::nullopt, nullptr, Value(),
                         valueSchema, Value(std::move(*line)), now);
    if (static_cast<int64_t>(records.size()) >= batchSize) return true;
  }
  buffer.erase(0, start);
  start = 0;
  return false;
}

FileStreamSourceTask::FileStreamSourceTask(std::chrono::milliseconds idleWait)
    : state_(std::make_unique<State>()) {
  state_->idleWait = idleWait;
}

FileStreamSourceTask::~FileStreamSourceTask() {
  state_->closeFile();
}

std::string FileStreamSourceTask::version() const {
  return std::string(connectVersion());
}

void FileStreamSourceTask::start(const Props& props) {
  AbstractConfig config(FileStreamSourceConnector::configDef(), props);
  std::lock_guard lock(state_->mutex);
  state_->closeFile();
  state_->filename = configuredFile(config);
  state_->topic = config.getString(std::string(FileStreamSourceConnector::TOPIC_CONFIG));
  state_->batchSize = config.getInt(std::string(FileStreamSourceConnector::TASK_BATCH_SIZE_CONFIG));
  state_->stopped = false;
  state_->buffer.clear();
  state_->start = 0;
  if (!state_->filename) {
    state_->fd = STDIN_FILENO;
    state_->streamOffset.reset();
  }
}

std::vector<SourceRecord> FileStreamSourceTask::poll() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (s.stopped) return {};
  if (s.fd < 0) {
    OffsetStorageReader* offsets = context() ? &context()->offsetStorageReader() : nullptr;
    if (!s.open(lock, offsets)) return {};
  }
  std::vector<SourceRecord> records;
  // Lines left over when the last poll filled its batch come first.
  if (s.takeLines(records)) return records;
  size_t total = 0;
  char chunk[kReadChunk];
  while (readable(s.fd)) {
    ssize_t nread = ::read(s.fd, chunk, sizeof chunk);
    if (nread < 0 && errno == EINTR) continue;
    if (nread < 0) {
      throw ConnectException("Error while reading " + s.filename.value_or("stdin") + ": " +
                             errnoText());
    }
    if (nread == 0) break;
    total += static_cast<size_t>(nread);
    s.buffer.append(chunk, static_cast<size_t>(nread));
    if (s.takeLines(records)) return records;
  }
  if (total == 0 && records.empty()) s.waitIdle(lock);
  return records;
}

void FileStreamSourceTask::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopped = true;
    state_->closeFile();
  }
  state_->wake.notify_all();
}

}  // namespace oxbow::connect
