// libFuzzer target: arbitrary bytes as Connect's group metadata (a worker's state, from any member
// that joins the group) and as an assignment (from the leader). Anything unreadable must be a
// ProtocolError; whatever reads must write again, and what is written must read back to itself:
// the encoding of a decoded value is a fixed point, so no member can make another's view drift.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "connect/runtime/distributed/connect_protocol.h"

namespace {

using namespace oxbow::connect::runtime::distributed;

void check(bool ok) {
  if (!ok) std::abort();
}

std::vector<ConnectorTaskId> sorted(std::vector<ConnectorTaskId> tasks) {
  std::sort(tasks.begin(), tasks.end());
  return tasks;
}

std::set<std::string> setOf(const std::vector<std::string>& names) {
  return {names.begin(), names.end()};
}

// The encoder groups tasks by connector and lists a connector once, so order and duplicate
// connectors may change; the sets of connectors and the multisets of tasks may not.
void checkSameWork(const WorkerAssignment& read, const WorkerAssignment& again) {
  check(again.version == read.version && again.error == read.error);
  check(again.leader == read.leader && again.leaderUrl == read.leaderUrl);
  check(again.configOffset == read.configOffset);
  check(setOf(again.connectors) == setOf(read.connectors));
  check(sorted(again.tasks) == sorted(read.tasks));
  if (read.version == kEagerVersion) {  // version 0 writes no revocations and no delay
    check(again.revokedConnectors.empty() && again.revokedTasks.empty() && again.delayMs == 0);
    return;
  }
  check(setOf(again.revokedConnectors) == setOf(read.revokedConnectors));
  check(sorted(again.revokedTasks) == sorted(read.revokedTasks));
  check(again.delayMs == read.delayMs);
}

void assignmentRoundTrip(std::string_view bytes) {
  WorkerAssignment read;
  try {
    read = decodeAssignment(bytes);
  } catch (const ProtocolError&) {
    return;
  }
  std::string written = encodeAssignment(read);
  WorkerAssignment again = decodeAssignment(written);
  checkSameWork(read, again);
  check(encodeAssignment(again) == written);
  check(decodeAssignment(written) == again);
}

void workerStateRoundTrip(std::string_view bytes) {
  WorkerState read;
  try {
    read = decodeWorkerState(bytes);
  } catch (const ProtocolError&) {
    return;
  }
  for (int16_t version : {kEagerVersion, kCompatibleVersion, kSessionedVersion}) {
    std::string written = encodeWorkerState(read, version);
    WorkerState again = decodeWorkerState(written);
    check(again.url == read.url && again.configOffset == read.configOffset);
    check(again.owned.has_value() == (version != kEagerVersion && read.owned.has_value()));
    if (!again.owned) continue;
    check(again.owned->version == version);
    WorkerAssignment owned = *read.owned;
    owned.version = version;
    checkSameWork(owned, *again.owned);
    check(encodeWorkerState(again, version) == written);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  assignmentRoundTrip(bytes);
  workerStateRoundTrip(bytes);
  return 0;
}
