// FileStreamSinkConnector and its task: each record's value as a line of a file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/file_stream.h"
#include "oxbow/connect/plugins.h"

namespace oxbow::connect {

namespace {

// Past this much buffered text put() writes it out, so that a sink never flushed holds no more.
constexpr size_t kMaxBuffered = 1 << 20;

}  // namespace

const ConfigDef& FileStreamSinkConnector::configDef() {
  static const ConfigDef definition = [] {
    ConfigDef def;
    def.define(std::string(FILE_CONFIG), ConfigDef::Type::STRING, nullptr,
               ConfigDef::Importance::HIGH,
               "The file the records' values are appended to; standard output when unset.");
    return def;
  }();
  return definition;
}

std::string FileStreamSinkConnector::version() const {
  return std::string(connectVersion());
}

void FileStreamSinkConnector::start(const Props& props) {
  AbstractConfig config(configDef(), props);
  props_ = props;
}

TaskClass FileStreamSinkConnector::taskClass() const {
  return TaskClass::of<FileStreamSinkTask>(std::string(FileStreamSinkTask::CLASS_NAME));
}

std::vector<Props> FileStreamSinkConnector::taskConfigs(int maxTasks) {
  return std::vector<Props>(static_cast<size_t>(std::max(maxTasks, 0)), props_);
}

FileStreamSinkTask::~FileStreamSinkTask() {
  if (ownsFd_) ::close(fd_);
}

std::string FileStreamSinkTask::version() const {
  return std::string(connectVersion());
}

void FileStreamSinkTask::start(const Props& props) {
  AbstractConfig config(FileStreamSinkConnector::configDef(), props);
  filename_ =
      config.getOptionalString(std::string(FileStreamSinkConnector::FILE_CONFIG)).value_or("");
  buffered_.clear();
  if (filename_.empty()) {
    fd_ = STDOUT_FILENO;
    ownsFd_ = false;
    return;
  }
  fd_ = ::open(filename_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw ConnectException("Couldn't find or create file '" + filename_ +
                           "' for FileStreamSinkTask: " + std::strerror(errno));
  }
  ownsFd_ = true;
}

void FileStreamSinkTask::put(const std::vector<SinkRecord>& records) {
  for (const SinkRecord& record : records) {
    buffered_ += record.value().toString();
    buffered_ += '\n';
  }
  if (buffered_.size() >= kMaxBuffered) writeBuffered();
}

void FileStreamSinkTask::flush(const SinkOffsets& /*currentOffsets*/) {
  writeBuffered();
}

void FileStreamSinkTask::stop() {
  if (fd_ < 0) return;
  writeBuffered();
  if (ownsFd_) ::close(fd_);
  fd_ = -1;
  ownsFd_ = false;
}

void FileStreamSinkTask::writeBuffered() {
  size_t written = 0;
  while (written < buffered_.size()) {
    ssize_t n = ::write(fd_, buffered_.data() + written, buffered_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // Keep what was not written, so that a retried flush writes it.
      buffered_.erase(0, written);
      throw ConnectException("Error writing to " + (filename_.empty() ? "stdout" : filename_) +
                             ": " + std::strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  buffered_.clear();
}

void registerFileStreamConnectors(ConnectorPlugins& plugins) {
  plugins.add(std::string(FileStreamSourceConnector::CLASS_NAME),
              [] { return std::make_unique<FileStreamSourceConnector>(); });
  plugins.add(std::string(FileStreamSinkConnector::CLASS_NAME),
              [] { return std::make_unique<FileStreamSinkConnector>(); });
}

}  // namespace oxbow::connect
