#pragma once
// The bytes distributed Connect workers exchange through the group coordinator: a worker's state
// in its JoinGroup metadata and the leader's assignment in SyncGroup, in Kafka Connect's layouts,
// so that our workers and Kafka's could read each other's group (and tools that decode
// DescribeGroups' metadata see what they expect).
//
// Three protocols share the group ("connect" protocol type), named as Kafka's connect.protocol:
//   "default"    (version 0, eager): url and config offset; a full assignment each round.
//   "compatible" (version 1, incremental cooperative): the worker also reports what it owns, and
//                an assignment names only what is new, what is revoked and a scheduled delay.
//   "sessioned"  (version 2): version 1's layout with the version field 2 (the workers then sign
//                their internal REST requests with a session key).
// Every integer is big-endian; a string is an int16 length and UTF-8 bytes; an array an int32
// count (-1 for null where the field is nullable).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::connect::runtime::distributed {

// Malformed or unsupported group metadata or assignment bytes.
struct ProtocolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline constexpr int16_t kEagerVersion = 0;
inline constexpr int16_t kCompatibleVersion = 1;
inline constexpr int16_t kSessionedVersion = 2;
// The task number that stands for the connector itself in an assignment's per-connector array.
inline constexpr int32_t kConnectorTask = -1;

inline constexpr int16_t kNoError = 0;
inline constexpr int16_t kConfigMismatch = 1;  // the leader is behind the config topic

// "default" -> 0, "compatible" -> 1, "sessioned" -> 2; ProtocolError otherwise.
int16_t protocolVersion(std::string_view protocolName);
std::string protocolName(int16_t version);
// The protocol names a worker configured with connect.protocol = `name` offers, most preferred
// first (sessioned offers all three, compatible two, default itself).
std::vector<std::string> offeredProtocols(std::string_view name);

struct ConnectorTaskId {
  std::string connector;
  int32_t task = 0;

  auto operator<=>(const ConnectorTaskId&) const = default;
  bool operator==(const ConnectorTaskId&) const = default;
};

std::string toString(const ConnectorTaskId& id);  // "NAME-N", as Connect names tasks

struct WorkerAssignment {
  int16_t version = kCompatibleVersion;
  int16_t error = kNoError;
  std::string leader, leaderUrl;
  int64_t configOffset = -1;
  std::vector<std::string> connectors;
  std::vector<ConnectorTaskId> tasks;
  std::vector<std::string> revokedConnectors;
  std::vector<ConnectorTaskId> revokedTasks;
  int32_t delayMs = 0;  // rejoin after this long: a lost member's work is held back until then

  bool operator==(const WorkerAssignment&) const = default;
};

struct WorkerState {
  std::string url;
  int64_t configOffset = -1;
  // What the worker runs now (versions 1 and 2); nullopt before its first assignment.
  std::optional<WorkerAssignment> owned;

  bool operator==(const WorkerState&) const = default;
};

// The JoinGroup metadata for the protocol of `version`. Version 0 carries no owned assignment;
// for 1 and 2 the owned assignment is written with that same version in its header, as Kafka does.
std::string encodeWorkerState(const WorkerState& state, int16_t version);
// Any version's metadata (fields a version lacks take their defaults); ProtocolError on bytes
// that are not a worker state.
WorkerState decodeWorkerState(std::string_view bytes);

// `assignment.version` selects the layout: 0 has no revocations or delay.
std::string encodeAssignment(const WorkerAssignment& assignment);
WorkerAssignment decodeAssignment(std::string_view bytes);

}  // namespace oxbow::connect::runtime::distributed
