#pragma once
// A task's directory under state.dir, its lock, and its checkpoint file.
//
// Layout: <state.dir>/<application.id>/<task id>/, a named topology's tasks under
// <state.dir>/<application.id>/__<topology>__/<sub-topology>_<partition>/ (Kafka's layout), with
//  - .lock         held (flock, exclusive) while a thread of any process has the task open, so two
//                  instances sharing a state directory cannot both open one task's state;
//  - .checkpoint   Kafka Streams' offset-checkpoint text: a version line "0", a count line, then
//                  one "<topic> <partition> <offset>" line per changelog partition, the next offset
//                  the local stores reflect. Rewritten whole (temporary file, then rename) at a
//                  commit once the offsets moved by kCheckpointDelta records since it was written,
//                  and at close, as Kafka Streams does: at a 100 ms commit interval a file per
//                  task per commit cost more than the commit's own writes. Each RocksDB store also
//                  keeps its own offset inside its database (rocksdb_store.h), which is what
//                  restoration trusts; this file is what the assignor's offset sums (a restarted
//                  instance's tasks) and operators read, and may lag the stores until the close.
//  - rocksdb/<store>/  one RocksDB database per persistent store.
//
// Beside the task directories, <state.dir>/<application.id>/kafka-streams-process-metadata holds
// the instance's process id as JSON, {"processId":"<32 hex digits>"}, as Kafka Streams keeps its
// own there: an instance restarted on the same state keeps its id, so its transactional producers
// keep their ids and fence (abort) what the killed run left open, at once rather than after the
// transaction timeout. The file is locked (flock) while an instance uses it; a second instance on
// the same directory gets a fresh id of its own.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oxbow/streams/detail/user_processor.h"  // TaskId

namespace oxbow::streams::detail {

// A named topology's name goes into task ids and directory names: one or more of a topic name's
// characters (letters, digits, '.', '_', '-'), and neither "." nor "..".
bool valid_topology_name(std::string_view name);
// The id TaskId::toString() printed; nullopt for any other text (so a stray directory is skipped).
std::optional<TaskId> parse_task_id(std::string_view text);
// Where the task keeps its state under <state.dir>/<application.id>.
std::string task_directory(const std::string& app_dir, const TaskId& id);
// The task directories on disk under <state.dir>/<application.id>, those of named topologies
// included, with their paths.
std::vector<std::pair<TaskId, std::string>> task_directories(const std::string& app_dir);

using TopicPartitionOffsets = std::map<std::pair<std::string, int32_t>, int64_t>;

// A task directory's checkpoint, read without its lock (the file is replaced whole, by rename);
// empty when missing or unreadable.
TopicPartitionOffsets read_checkpoint_file(const std::string& task_path);

class TaskDirectory {
 public:
  // Creates the directory and takes its lock; nullptr when another holder has it.
  static std::unique_ptr<TaskDirectory> lock(const std::string& path);
  ~TaskDirectory();
  TaskDirectory(const TaskDirectory&) = delete;
  TaskDirectory& operator=(const TaskDirectory&) = delete;

  const std::string& path() const { return path_; }
  std::string store_path(const std::string& store) const;
  // Records moved since the file was written before a commit rewrites it.
  static constexpr int64_t kCheckpointDelta = 10000;
  // The offsets a commit reached: written now when they name other partitions than the file or
  // moved by kCheckpointDelta since it was written, else when the directory is closed.
  void checkpoint(const TopicPartitionOffsets& offsets);
  void write_checkpoint(const TopicPartitionOffsets& offsets) const;
  // Empty when missing or unreadable (a damaged file only costs a longer restore).
  TopicPartitionOffsets read_checkpoint() const;

 private:
  TaskDirectory(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
  TopicPartitionOffsets written_;  // what this directory's .checkpoint holds, once written
  TopicPartitionOffsets pending_;  // a commit's offsets not written yet
  bool wrote_ = false, pending_write_ = false;
};

// The process id of an instance using <app_dir>, kept for its lifetime.
class ProcessIdentity {
 public:
  static std::unique_ptr<ProcessIdentity> claim(const std::string& app_dir);
  ~ProcessIdentity();
  ProcessIdentity(const ProcessIdentity&) = delete;
  ProcessIdentity& operator=(const ProcessIdentity&) = delete;
  const std::string& id() const { return id_; }

 private:
  ProcessIdentity(std::string id, int fd) : id_(std::move(id)), fd_(fd) {}
  std::string id_;
  int fd_;  // -1 when the file is another instance's
};

}  // namespace oxbow::streams::detail
