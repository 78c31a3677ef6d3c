#include "streams/state/state_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

std::unique_ptr<TaskDirectory> TaskDirectory::lock(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw StreamsException("cannot create state directory " + path + ": " + ec.message());
  std::string lock_file = path + "/.lock";
  int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw StreamsException("cannot open " + lock_file + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<TaskDirectory>(new TaskDirectory(path, fd));
}

TaskDirectory::~TaskDirectory() {
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

std::string TaskDirectory::store_path(const std::string& store) const {
  return path_ + "/rocksdb/" + store;
}

void TaskDirectory::write_checkpoint(const TopicPartitionOffsets& offsets) const {
  std::ostringstream text;
  text << "0\n" << offsets.size() << "\n";
  for (const auto& [tp, offset] : offsets)
    text << tp.first << ' ' << tp.second << ' ' << offset << '\n';
  std::string tmp = path_ + "/.checkpoint.tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    if (!out.flush()) throw StreamsException("cannot write " + tmp + ": " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_ + "/.checkpoint", ec);
  if (ec) throw StreamsException("cannot write " + path_ + "/.checkpoint: " + ec.message());
}

TopicPartitionOffsets TaskDirectory::read_checkpoint() const {
  TopicPartitionOffsets out;
  std::ifstream in(path_ + "/.checkpoint");
  int version = -1;
  size_t count = 0;
  if (!(in >> version >> count) || version != 0) return {};
  for (size_t i = 0; i < count; ++i) {
    std::string topic;
    int32_t partition;
    int64_t offset;
    if (!(in >> topic >> partition >> offset)) return {};
    out[{topic, partition}] = offset;
  }
  return out;
}

}  // namespace oxbow::streams::detail
