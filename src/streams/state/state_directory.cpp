#include "streams/state/state_directory.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

namespace {

constexpr std::string_view kTopologyMark = "__";

std::optional<int64_t> whole_number(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  int64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > INT32_MAX) return std::nullopt;
  return n;
}

// "<sub-topology>_<partition>"
std::optional<TaskId> parse_plain_task_id(std::string_view text) {
  size_t underscore = text.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  auto sub = whole_number(text.substr(0, underscore));
  auto partition = whole_number(text.substr(underscore + 1));
  if (!sub || !partition) return std::nullopt;
  return TaskId{static_cast<int>(*sub), static_cast<int32_t>(*partition)};
}

// "__<topology>__", a named topology's directory; empty when `name` is not one.
std::string topology_of_directory(std::string_view name) {
  size_t mark = kTopologyMark.size();
  if (name.size() <= 2 * mark || !name.starts_with(kTopologyMark) || !name.ends_with(kTopologyMark))
    return {};
  std::string_view topology = name.substr(mark, name.size() - 2 * mark);
  return valid_topology_name(topology) ? std::string(topology) : std::string();
}

}  // namespace

bool valid_topology_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

// The sub-topology and partition are digits and a single '_', so the last "__" ends the name,
// whatever underscores the name has.
std::optional<TaskId> parse_task_id(std::string_view text) {
  size_t mark = text.rfind(kTopologyMark);
  if (mark == std::string_view::npos) return parse_plain_task_id(text);
  auto id = parse_plain_task_id(text.substr(mark + kTopologyMark.size()));
  std::string_view topology = text.substr(0, mark);
  if (!id || !valid_topology_name(topology)) return std::nullopt;
  id->topology = std::string(topology);
  return id;
}

std::string task_directory(const std::string& app_dir, const TaskId& id) {
  if (id.topology.empty()) return app_dir + "/" + id.toString();
  TaskId plain{id.subtopology, id.partition};
  return app_dir + "/" + std::string(kTopologyMark) + id.topology + std::string(kTopologyMark) +
         "/" + plain.toString();
}

std::vector<std::pair<TaskId, std::string>> task_directories(const std::string& app_dir) {
  std::vector<std::pair<TaskId, std::string>> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(app_dir, ec)) {
    if (!entry.is_directory(ec)) continue;
    std::string name = entry.path().filename().string();
    if (auto id = parse_plain_task_id(name)) {
      out.emplace_back(*id, entry.path().string());
      continue;
    }
    std::string topology = topology_of_directory(name);
    if (topology.empty()) continue;
    std::error_code sub_ec;
    for (const auto& task : std::filesystem::directory_iterator(entry.path(), sub_ec)) {
      auto id = parse_plain_task_id(task.path().filename().string());
      if (!id || !task.is_directory(sub_ec)) continue;
      id->topology = topology;
      out.emplace_back(*id, task.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

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
  if (pending_write_) {
    try {
      write_checkpoint(pending_);
    } catch (const std::exception& e) {
      spdlog::warn("{}", e.what());  // only the offset sums a restart reports are older
    }
  }
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

std::string TaskDirectory::store_path(const std::string& store) const {
  return path_ + "/rocksdb/" + store;
}

void TaskDirectory::checkpoint(const TopicPartitionOffsets& offsets) {
  int64_t moved = 0;
  bool same_partitions = wrote_ && offsets.size() == written_.size();
  for (const auto& [tp, offset] : offsets) {
    auto it = written_.find(tp);
    if (it == written_.end()) {
      same_partitions = false;
      break;
    }
    moved += offset > it->second ? offset - it->second : it->second - offset;
  }
  if (same_partitions && moved < kCheckpointDelta) {
    pending_ = offsets;
    pending_write_ = offsets != written_;
    return;
  }
  write_checkpoint(offsets);
  written_ = offsets;
  wrote_ = true;
  pending_write_ = false;
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
  return read_checkpoint_file(path_);
}

TopicPartitionOffsets read_checkpoint_file(const std::string& task_path) {
  TopicPartitionOffsets out;
  std::ifstream in(task_path + "/.checkpoint");
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

namespace {

std::string random_id() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", rd());
    out += part;
  }
  return out;
}

std::string read_process_id(int fd) {
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(text.size()))) > 0)
    text.append(buffer, static_cast<size_t>(n));
  auto key = text.find("\"processId\"");
  if (key == std::string::npos) return "";
  auto open = text.find('"', text.find(':', key));
  auto close = open == std::string::npos ? open : text.find('"', open + 1);
  if (close == std::string::npos) return "";
  std::string id = text.substr(open + 1, close - open - 1);
  bool hex = !id.empty() && id.size() <= 64 &&
             std::all_of(id.begin(), id.end(), [](char c) { return std::isxdigit(c) || c == '-'; });
  return hex ? id : "";
}

}  // namespace

std::unique_ptr<ProcessIdentity> ProcessIdentity::claim(const std::string& app_dir) {
  std::error_code ec;
  std::filesystem::create_directories(app_dir, ec);
  if (ec) throw StreamsException("cannot create state directory " + app_dir + ": " + ec.message());
  std::string file = app_dir + "/kafka-streams-process-metadata";
  int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw StreamsException("cannot open " + file + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return std::unique_ptr<ProcessIdentity>(new ProcessIdentity(random_id(), -1));
  }
  std::string id = read_process_id(fd);
  if (id.empty()) {
    id = random_id();
    std::string text = "{\"processId\":\"" + id + "\"}\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
        ::fsync(fd) != 0)
      throw StreamsException("cannot write " + file + ": " + std::strerror(errno));
  }
  return std::unique_ptr<ProcessIdentity>(new ProcessIdentity(std::move(id), fd));
}

ProcessIdentity::~ProcessIdentity() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace oxbow::streams::detail
