#pragma once
// How a record of a global topic updates its global store, the same in the global thread and in
// the test driver: a GlobalKTable's row is written as it comes (timestamped, a null value
// deleting), a store added with Topology::addGlobalStore is updated by its processor. Records that
// do not deserialize are skipped or fail, as the deserialization handler says; null keys are
// skipped for tables.
#include <map>
#include <memory>
#include <string>

#include "oxbow/streams/detail/user_processor.h"
#include "streams/runtime/task.h"
#include "streams/state/global_stores.h"
#include "streams/topology/graph_builder.h"

namespace oxbow::streams::detail {

class GlobalStateUpdater {
 public:
  GlobalStateUpdater(std::shared_ptr<const GraphBuilder> graph,
                     std::shared_ptr<GlobalStores> stores, DeserializationPolicy policy,
                     std::string application_id);
  ~GlobalStateUpdater();
  GlobalStateUpdater(const GlobalStateUpdater&) = delete;
  GlobalStateUpdater& operator=(const GlobalStateUpdater&) = delete;

  // Throws StreamsException when the handler says fail, or the update processor fails.
  void apply(const RawRecord& record);

 private:
  class Context;
  struct Updater {
    std::unique_ptr<UserProcessor> processor;
    std::unique_ptr<Context> context;
  };
  Updater& updater_of(const GlobalTableSpec& spec);
  bool decode(const GlobalTableSpec& spec, const RawRecord& raw, Record& out);

  std::shared_ptr<const GraphBuilder> graph_;
  std::shared_ptr<GlobalStores> stores_;
  DeserializationPolicy policy_;
  std::string application_id_;
  std::map<std::string, Updater> updaters_;  // by topic
};

}  // namespace oxbow::streams::detail
