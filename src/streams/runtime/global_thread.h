#pragma once
// Kafka's GlobalStreamThread: every global table's topic read whole into its store (all
// partitions, no consumer group), first to the end before the stream threads start, then kept up
// to date in a thread of its own. A record that does not deserialize is skipped or stops the
// thread, as the deserialization handler says; a null key is skipped.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "streams/runtime/global_updater.h"
#include "streams/runtime/kafka_clients.h"
#include "streams/runtime/task.h"
#include "streams/state/global_stores.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

class GlobalThread {
 public:
  GlobalThread(std::shared_ptr<const GraphBuilder> graph, Config app, bool read_committed,
               DeserializationPolicy policy, std::shared_ptr<GlobalStores> stores);
  ~GlobalThread();
  // Reads every global topic to its end, then starts the thread. Throws StreamsException.
  void start();
  void stop();
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }

 private:
  void apply(const rd_kafka_message_t* m);
  void run();

  std::shared_ptr<const GraphBuilder> graph_;
  Config app_;
  bool read_committed_;
  DeserializationPolicy policy_;
  std::shared_ptr<GlobalStores> stores_;
  RdKafkaHandle consumer_;
  std::unique_ptr<GlobalStateUpdater> updater_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, failed_{false};
  std::string failure_;
};

}  // namespace oxbow::streams::detail
