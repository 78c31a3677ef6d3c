// libFuzzer target: arbitrary records of Connect's internal topics (config, status, offsets), which
// anyone allowed to write those topics controls. The input is records, one a line, KEY TAB VALUE
// (no tab: a tombstone). The parsers must never throw, whatever they accept must write back to
// itself, and the config state they add up to must keep its invariants and be rebuilt from the
// records our own writers make of it.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "connect/runtime/distributed/config_records.h"
#include "connect/runtime/distributed/kafka_offset_store.h"
#include "connect/runtime/distributed/status_records.h"

namespace {

using namespace oxbow::connect::runtime::distributed;

void check(bool ok) {
  if (!ok) std::abort();
}

struct Record {
  std::string key;
  std::optional<std::string> value;
};

std::vector<Record> recordsOf(std::string_view input) {
  std::vector<Record> out;
  while (!input.empty()) {
    size_t end = input.find('\n');
    std::string_view line = input.substr(0, end);
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      out.push_back({std::string(line), std::nullopt});
    } else {
      out.push_back({std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
    }
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
  }
  return out;
}

void checkInvariants(const ClusterConfigState& state) {
  for (const auto& [connector, count] : state.taskCounts) {
    check(state.connectorConfigs.contains(connector));
    check(state.inconsistent.contains(connector) || state.taskConfigs.contains(connector));
  }
  for (const auto& [connector, config] : state.connectorConfigs) {
    check(state.targetStates.contains(connector));
  }
  for (const auto& connector : state.inconsistent) check(state.taskCounts.contains(connector));
  for (const auto& [connector, tasks] : state.taskConfigs) {
    check(!state.inconsistent.contains(connector));
    check(static_cast<int>(tasks.size()) == state.taskCount(connector));
  }
}

// What our writers make of a state reads back as that state (its consistent part).
void checkRebuilt(const ClusterConfigState& state) {
  ConfigState rebuilt;
  int64_t offset = 0;
  for (const auto& [connector, target] : state.targetStates) {
    rebuilt.apply(config_records::targetStateKey(connector),
                  config_records::targetStateValue(target), offset++);
  }
  for (const auto& [connector, config] : state.connectorConfigs) {
    rebuilt.apply(config_records::connectorKey(connector),
                  config_records::connectorConfigValue(config), offset++);
  }
  for (const auto& [connector, tasks] : state.taskConfigs) {
    for (size_t task = 0; task < tasks.size(); ++task) {
      rebuilt.apply(config_records::taskKey(connector, static_cast<int>(task)),
                    config_records::taskConfigValue(tasks[task]), offset++);
    }
    rebuilt.apply(config_records::commitKey(connector),
                  config_records::commitValue(static_cast<int>(tasks.size())), offset++);
  }
  ClusterConfigState again = rebuilt.snapshot();
  check(again.offset == (offset == 0 ? -1 : offset));  // -1: nothing written
  check(again.connectorConfigs == state.connectorConfigs);
  check(again.targetStates == state.targetStates);
  check(again.taskConfigs == state.taskConfigs);
  check(again.inconsistent.empty());
}

void checkEventWritesBack(const ConfigEvent& event) {
  ConfigState state;
  if (event.kind == ConfigEvent::Kind::RESTART_REQUESTED) {
    auto again = state.apply(config_records::restartKey(event.connector),
                             config_records::restartValue(event.restart), 0);
    check(again && again->kind == event.kind && again->connector == event.connector);
    check(again->restart.includeTasks == event.restart.includeTasks);
    check(again->restart.onlyFailed == event.restart.onlyFailed);
  } else if (event.kind == ConfigEvent::Kind::LOGGER_LEVEL) {
    auto again = state.apply(config_records::loggerKey(event.connector),
                             config_records::loggerValue(event.level), 0);
    check(again && again->kind == event.kind && again->connector == event.connector);
    check(again->level == event.level);
  }
}

void configTopic(const std::vector<Record>& records) {
  ConfigState state;
  int64_t expectedOffset = -1;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& [key, value] = records[i];
    auto event = state.apply(key, value, static_cast<int64_t>(i));
    ClusterConfigState snapshot = state.snapshot();
    if (snapshot.offset != expectedOffset) {
      check(snapshot.offset == static_cast<int64_t>(i) + 1);
      expectedOffset = snapshot.offset;
    }
    checkInvariants(snapshot);
    if (event) checkEventWritesBack(*event);
  }
  checkRebuilt(state.snapshot());
}

void statusKey(const std::string& key) {
  auto parsed = status_records::parseKey(key);
  if (!parsed) return;
  std::string written;
  switch (parsed->kind) {
    case StatusKey::Kind::CONNECTOR:
      written = status_records::connectorKey(parsed->connector);
      break;
    case StatusKey::Kind::TASK:
      check(parsed->task >= 0);
      written = status_records::taskKey(parsed->connector, parsed->task);
      break;
    case StatusKey::Kind::TOPIC:
      written = status_records::topicKey(parsed->topic, parsed->connector);
      break;
  }
  auto again = status_records::parseKey(written);
  check(again && again->kind == parsed->kind && again->connector == parsed->connector);
  check(again->task == parsed->task && again->topic == parsed->topic);
}

void statusValue(const std::string& value) {
  if (auto status = status_records::parseStatus(value)) {
    check(status_records::parseStatus(status_records::statusValue(*status)) == *status);
  }
  if (auto topic = status_records::parseTopic(value)) {
    check(status_records::parseTopic(status_records::topicValue(*topic)) == *topic);
  }
}

// A key's partition, when the key is ["CONNECTOR",{...}], is what our writer's key for that
// connector and partition reads back as, and those bytes are the key's canonical form.
void offsetKey(const std::string& key) {
  auto json = nlohmann::json::parse(key, nullptr, false);
  if (json.is_discarded() || !json.is_array() || json.size() != 2 || !json[0].is_string()) return;
  std::string connector = json[0].get<std::string>();
  auto partition = offset_records::partitionOf(key, connector);
  if (!partition) return;
  std::string written = offset_records::key(connector, *partition);
  check(offset_records::partitionOf(written, connector) == partition);
  check(offset_records::canonical(key) == written);
}

void offsetRecord(const std::string& key, const std::optional<std::string>& value) {
  if (auto canonical = offset_records::canonical(key)) {
    check(offset_records::canonical(*canonical) == canonical);
  }
  offsetKey(key);
  if (value) {
    if (auto offset = offset_records::offsetOf(*value)) {
      check(offset_records::offsetOf(offset_records::value(*offset)) == offset);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool quiet = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)quiet;
  std::vector<Record> records =
      recordsOf(std::string_view(reinterpret_cast<const char*>(data), size));
  configTopic(records);
  for (const auto& [key, value] : records) {
    statusKey(key);
    if (value) statusValue(*value);
    offsetRecord(key, value);
  }
  return 0;
}
