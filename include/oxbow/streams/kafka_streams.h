#pragma once
// KafkaStreams: runs a topology against Kafka brokers (Oxbow, Apache Kafka, Redpanda), with
// Kafka Streams' configuration names, states and shutdown.
//
// Required: application.id and bootstrap.servers. Also read: num.stream.threads (1),
// processing.guarantee (at_least_once), commit.interval.ms (30000), statestore.cache.max.bytes
// (10485760), state.dir, replication.factor (-1: the broker's default),
// default.deserialization.exception.handler. Properties prefixed consumer., producer. or admin.
// go, without the prefix, to those librdkafka clients; security.protocol, sasl.* and ssl.* go to
// all of them.
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "oxbow/streams/topology.h"

namespace oxbow::streams {

class KafkaStreams {
 public:
  enum class State {
    CREATED,
    REBALANCING,
    RUNNING,
    PENDING_SHUTDOWN,
    NOT_RUNNING,
    PENDING_ERROR,
    ERROR
  };
  using StateListener = std::function<void(State new_state, State old_state)>;
  enum class StreamThreadExceptionResponse {
    REPLACE_THREAD,
    SHUTDOWN_CLIENT,
    SHUTDOWN_APPLICATION
  };
  using UncaughtExceptionHandler =
      std::function<StreamThreadExceptionResponse(const std::exception& error)>;

  // Throws std::invalid_argument for a configuration it cannot run with.
  KafkaStreams(const Topology& topology, std::map<std::string, std::string> config);
  ~KafkaStreams();
  KafkaStreams(const KafkaStreams&) = delete;
  KafkaStreams& operator=(const KafkaStreams&) = delete;

  // Creates the internal topics and starts the stream threads; from CREATED only.
  void start();
  // Commits, flushes and leaves the group; true when every thread stopped within the timeout.
  bool close(std::chrono::milliseconds timeout = std::chrono::milliseconds::max());
  State state() const;
  // Set before start().
  void setStateListener(StateListener listener);
  // What a thread's failure does: SHUTDOWN_CLIENT by default.
  void setUncaughtExceptionHandler(UncaughtExceptionHandler handler);
  // Deletes this application's local state (state.dir/<application.id>); not while running.
  void cleanUp();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

const char* to_string(KafkaStreams::State state);

}  // namespace oxbow::streams
