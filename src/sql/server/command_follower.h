#pragma once
// ksqlDB's command runner, the reading half: after the replay at start a server keeps reading its
// command topic, so that what other servers of the same ksql.service.id write there takes effect
// here too, in the topic's order. One thread fetches the records into a queue; whoever applies
// them (the server's applier thread, or a request that waits for its own statement) takes the
// queue under the engine's lock, so that statements are executed in offset order whoever runs
// them (docs/sql/server.md, "Several servers").
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sql/server/command_topic.h"
#include "sql/server/kafka_cluster.h"

struct rd_kafka_s;

namespace oxbow::sql::server {

// A command record could not be read in time (the broker gone, or far behind).
struct CommandWaitTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CommandFollower {
 public:
  // Reads `topic` (partition 0) from its beginning.
  CommandFollower(const ClientConfig& config, std::string topic);
  ~CommandFollower();
  CommandFollower(const CommandFollower&) = delete;
  CommandFollower& operator=(const CommandFollower&) = delete;

  // Starts the fetching thread.
  void start();
  // Starts a thread calling `apply` whenever commands are queued; `apply` takes them.
  void follow(std::function<void()> apply);
  // The offset before the topic's end now (its last committed record or transaction marker; -1:
  // none); throws when the cluster does not say.
  int64_t last_offset();
  // The queued commands (taking them), once every record up to `through` is fetched. Throws
  // CommandWaitTimeout when that takes longer than `timeout`.
  std::vector<Command> take(int64_t through, std::chrono::milliseconds timeout);
  // The queued commands, at once.
  std::vector<Command> take_ready();
  // Ends both threads (the server stopping: nothing is applied afterwards).
  void stop();

 private:
  void fetch();
  void apply_loop(const std::function<void()>& apply);

  std::string topic_;
  rd_kafka_s* consumer_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Command> queue_;
  int64_t fetched_ = -1;  // the offset before the next one to read (a record or a marker)
  bool stopping_ = false;
  std::thread fetcher_, applier_;
};

}  // namespace oxbow::sql::server
