#pragma once
// A distributed worker (Kafka's DistributedHerder): one of a group of workers that share their
// connectors' configs, source offsets and statuses through three compacted topics and divide the
// connectors and tasks among themselves by Connect's incremental cooperative protocol.
//
// One thread, the herder's, does everything that changes what runs here: it takes the group's
// assignments, starts and stops connectors and tasks, applies config changes read from the config
// topic, writes task configs (through the leader) and statuses. REST calls read the stores'
// snapshots, and write configs as the leader (a follower's REST API forwards writes to it).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "connect/runtime/active_topics.h"
#include "connect/runtime/distributed/config_backing_store.h"
#include "connect/runtime/distributed/connect_protocol.h"
#include "connect/runtime/distributed/distributed_config.h"
#include "connect/runtime/distributed/status_topics.h"
#include "connect/runtime/herder.h"
#include "connect/runtime/rest_api.h"

namespace oxbow::connect::runtime::distributed {

class KafkaOffsetBackingStore;
class StatusBackingStore;
struct StatusRecord;
class WorkerGroupMember;
class IncrementalCooperativeAssignor;

class DistributedHerder : public Herder {
 public:
  // Sends a task-configs request to the leader (the REST API's forwarder).
  using Forward = std::function<std::optional<RestResponse>(
      const std::string& url, const RestRequest& request, std::string& error)>;

  // ConnectException for a bad worker config.
  DistributedHerder(const Properties& workerProps, ConnectorPlugins plugins);
  ~DistributedHerder() override;

  // Reads the internal topics (creating them when missing) and joins the group. `workerId` is
  // "host:port" of this worker's REST API, as statuses and the group's metadata name it.
  void start(const std::string& workerId, Forward forward);
  // Stops every task and connector here and leaves the group.
  void stop();

  bool putConnector(const std::string& name, Properties props, bool mustBeNew) override;
  void deleteConnector(const std::string& name) override;
  void setTargetState(const std::string& name, TargetState state) override;
  void restartConnector(const std::string& name, bool includeTasks, bool onlyFailed) override;
  void restartTask(const std::string& name, int task) override;
  std::vector<std::string> connectorNames() const override;
  ConnectorInfo connectorInfo(const std::string& name) const override;
  ConnectorStatus connectorStatus(const std::string& name) const override;
  OffsetsTarget offsetsTarget(const std::string& name) const override;
  void modifyOffsets(const std::string& name,
                     const std::function<void(const OffsetsTarget&)>& modify) override;
  void putTaskConfigs(const std::string& name, const std::vector<Props>& configs) override;
  OffsetBackingStore& offsetStore() override;
  std::vector<TaskMetrics> taskMetrics() const override;
  std::pair<size_t, size_t> runningCounts() const override;
  ActiveTopics& activeTopics() override { return topics_; }
  const WorkerConfig& config() const override { return config_.worker; }
  const ConnectorPlugins& plugins() const override { return plugins_; }

  // Why the worker cannot go on (the group refused it: a session timeout out of the broker's
  // range, another protocol type, authorization); empty while it can.
  std::string fatalError() const;

  // What runs here, for tests and the log: "NAME" and "NAME-N".
  std::vector<std::string> running() const;

 private:
  struct LocalConnector;
  struct LocalTask;
  struct Events;

  void tick();
  void runLoop();
  void takeGroupNews();
  void applyAssignment(int32_t generation, const WorkerAssignment& assignment);
  void applyEvents();
  void reconfigureConnectors();
  void reportStatuses();

  void startConnector(const std::string& name);
  void stopConnector(const std::string& name, const char* why);
  void startTask(const ConnectorTaskId& id);
  void stopTask(const ConnectorTaskId& id);
  void restartOwned(const RestartRequest& request);
  void onConnectorConfig(const std::string& name);
  void onTargetState(const std::string& name);
  void onTaskConfigs(const std::string& name);
  bool writeTaskConfigs(const std::string& name, const std::vector<Props>& configs);
  void putTaskConfigsAsLeader(const std::string& name, const std::vector<Props>& configs);

  // For REST writes: throws RedirectException to the leader, or ConflictException while there
  // is none or the group rebalances.
  void requireLeader() const;
  bool isLeader() const;
  ClusterConfigState snapshot() const;
  void requireConnector(const ClusterConfigState& state, const std::string& name) const;
  WorkerState memberState();
  std::map<std::string, WorkerAssignment> assign(const std::string& leaderId, int16_t version,
                                                 const std::map<std::string, WorkerState>& members);
  // A status of this worker in the current generation.
  StatusRecord statusRecord(const std::string& state, const std::string& trace) const;
  // `safe`: never over a newer generation's status of another worker (giving something up).
  void writeConnectorStatus(const std::string& name, const std::string& state,
                            const std::string& trace, bool safe);
  void writeTaskStatus(const ConnectorTaskId& id, const std::string& state,
                       const std::string& trace, bool safe);
  void wake();
  void queueTaskRestart(const ConnectorTaskId& id);

  DistributedConfig config_;
  ConnectorPlugins plugins_;
  std::string workerId_;
  Forward forward_;
  StatusTopics topics_;
  std::unique_ptr<KafkaOffsetBackingStore> offsets_;
  std::unique_ptr<StatusBackingStore> statuses_;
  std::unique_ptr<ConfigBackingStore> configs_;
  std::unique_ptr<IncrementalCooperativeAssignor> assignor_;  // used while leading
  std::unique_ptr<WorkerGroupMember> member_;
  std::unique_ptr<Events> events_;

  // The group's view, as the last assignment told it (guarded by mutex_).
  mutable std::mutex mutex_;
  std::string leaderId_, leaderUrl_;
  int32_t generation_ = -1;
  int64_t assignedConfigOffset_ = -1;
  std::optional<std::chrono::steady_clock::time_point> rejoinAt_;

  // What this worker owns and runs; touched by the herder's thread only, read under mutex_.
  std::set<std::string> ownedConnectors_;
  std::set<ConnectorTaskId> ownedTasks_;
  std::map<std::string, std::unique_ptr<LocalConnector>> connectors_;
  std::map<ConnectorTaskId, std::unique_ptr<LocalTask>> tasks_;

  std::thread thread_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool started_ = false;
  // Set once start() is done: REST calls before then answer 409 (kStarting) rather than read the
  // stores and the member while start() makes them.
  std::atomic<bool> ready_{false};
};

}  // namespace oxbow::connect::runtime::distributed
