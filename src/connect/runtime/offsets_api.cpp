// Connect's messages are kept word for word: tools match on them.
#include "connect/runtime/offsets_api.h"

#include <spdlog/spdlog.h>

#include "connect/runtime/group_offsets.h"
#include "connect/runtime/offset_store.h"
#include "oxbow/connect/sink.h"
#include "oxbow/connect/source.h"

namespace oxbow::connect::runtime {

namespace {

std::string groupId(const std::string& connector) {
  return "connect-" + connector;
}

// Connect's answer, which says when the connector could not check the offsets itself.
std::string completion(bool checked, bool reset) {
  std::string done = reset ? "reset" : "altered";
  if (checked) return "The offsets for this connector have been " + done + " successfully";
  return "The Connect framework-managed offsets for this connector have been " + done +
         " successfully. However, if this connector manages offsets externally, they will need "
         "to be manually " +
         done + " in the system that the connector uses.";
}

// The admin client's failure as Connect words it: a group with members left means tasks still
// run somewhere (zombies), which a retry may outlive.
[[noreturn]] void groupFailure(const std::string& name, const GroupAdminException& e, bool reset,
                               bool membersLeft) {
  spdlog::error("connect: {} the offsets of sink connector {} failed: {}",
                reset ? "resetting" : "altering", name, e.what());
  std::string verb = reset ? "reset" : "alter";
  if (membersLeft) {
    throw ConnectException(
        "Failed to " + verb + " consumer group offsets for connector " + name +
        " either because its tasks haven't stopped completely yet or the connector was resumed "
        "before the request to " +
        verb +
        " its offsets could be successfully completed. If the connector is in a stopped state, "
        "this operation can be safely retried. If it doesn't eventually succeed, the Connect "
        "cluster may need to be restarted to get rid of the zombie sink tasks.");
  }
  throw ConnectException("Failed to " + verb + " consumer group offsets for " +
                         (reset ? "sink connector " : "connector ") + name);
}

// A fresh instance of the connector, which Connect asks about offsets without starting it.
template <typename Kind>
std::unique_ptr<Kind> connectorAs(const OffsetsTarget& target) {
  std::unique_ptr<Connector> connector = target.plugin->create();
  auto* typed = dynamic_cast<Kind*>(connector.get());
  if (typed == nullptr) throw ConnectException(target.plugin->className + " has an unknown type");
  connector.release();
  return std::unique_ptr<Kind>(typed);
}

void writeGroupOffsets(Herder& worker, const std::string& name,
                       const std::map<TopicPartition, std::optional<int64_t>>& offsets) {
  std::map<TopicPartition, int64_t> altered;
  std::set<TopicPartition> removed;
  for (const auto& [tp, offset] : offsets) {
    if (offset) {
      altered[tp] = *offset;
    } else {
      removed.insert(tp);
    }
  }
  GroupAdmin admin(worker.config());
  try {
    if (!altered.empty()) admin.alter(groupId(name), altered);
    if (!removed.empty()) admin.deleteOffsets(groupId(name), removed);
  } catch (const GroupAdminException& e) {
    bool members = e.code() == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
                   e.code() == RD_KAFKA_RESP_ERR_GROUP_SUBSCRIBED_TO_TOPIC;
    groupFailure(name, e, false, members);
  }
}

void resetGroup(Herder& worker, const OffsetsTarget& target, bool& checked) {
  GroupAdmin admin(worker.config());
  std::map<TopicPartition, std::optional<int64_t>> offsets;
  try {
    for (const auto& [tp, offset] : admin.offsets(groupId(target.name))) offsets[tp] = std::nullopt;
  } catch (const GroupAdminException& e) {
    spdlog::error("connect: listing the offsets of {} failed: {}", target.name, e.what());
    throw ConnectException("Failed to list offsets prior to resetting offsets for sink connector " +
                           target.name);
  }
  checked = connectorAs<SinkConnector>(target)->alterOffsets(target.config, offsets);
  try {
    admin.deleteGroup(groupId(target.name));
  } catch (const GroupAdminException& e) {
    groupFailure(target.name, e, true, e.code() == RD_KAFKA_RESP_ERR_NON_EMPTY_GROUP);
  }
}

}  // namespace

nlohmann::ordered_json connectorOffsets(Herder& worker, const std::string& name) {
  OffsetsTarget target = worker.offsetsTarget(name);
  if (target.plugin->type == PluginType::SOURCE) {
    return offsetsJson(worker.offsetStore().connectorOffsets(name));
  }
  try {
    return sinkOffsetsJson(GroupAdmin(worker.config()).offsets(groupId(name)));
  } catch (const GroupAdminException& e) {
    spdlog::error("connect: reading the offsets of {} failed: {}", name, e.what());
    throw ConnectException("Failed to retrieve consumer group offsets for sink connector " + name);
  }
}

std::string alterConnectorOffsets(Herder& worker, const std::string& name,
                                  const std::vector<OffsetEntry>& entries) {
  bool checked = false;
  worker.modifyOffsets(name, [&](const OffsetsTarget& target) {
    if (target.plugin->type == PluginType::SOURCE) {
      SourceOffsets offsets = sourceOffsets(entries);
      checked = connectorAs<SourceConnector>(target)->alterOffsets(target.config, offsets);
      worker.offsetStore().alter(name, offsets);
      return;
    }
    std::map<TopicPartition, std::optional<int64_t>> offsets = sinkOffsets(entries);
    checked = connectorAs<SinkConnector>(target)->alterOffsets(target.config, offsets);
    writeGroupOffsets(worker, name, offsets);
  });
  return completion(checked, false);
}

std::string resetConnectorOffsets(Herder& worker, const std::string& name) {
  bool checked = false;
  worker.modifyOffsets(name, [&](const OffsetsTarget& target) {
    if (target.plugin->type != PluginType::SOURCE) {
      resetGroup(worker, target, checked);
      return;
    }
    SourceOffsets offsets;
    for (auto& [partition, offset] : worker.offsetStore().connectorOffsets(name)) {
      offsets.emplace_back(std::move(partition), std::nullopt);
    }
    checked = connectorAs<SourceConnector>(target)->alterOffsets(target.config, offsets);
    worker.offsetStore().alter(name, offsets);
  });
  return completion(checked, true);
}

}  // namespace oxbow::connect::runtime
