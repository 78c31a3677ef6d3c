#include "connect/runtime/distributed/connect_protocol.h"

#include <algorithm>
#include <map>
#include <set>

namespace oxbow::connect::runtime::distributed {

namespace {

class Out {
 public:
  void i16(int16_t v) { put(static_cast<uint16_t>(v), 2); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void str(const std::string& s) {
    if (s.size() > 0x7fff)
      throw ProtocolError("a string of " + std::to_string(s.size()) +
                          " bytes does not fit the Connect protocol");
    i16(static_cast<int16_t>(s.size()));
    bytes_ += s;
  }
  void raw(std::string_view s) { bytes_ += s; }
  std::string take() { return std::move(bytes_); }

 private:
  void put(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string bytes_;
};

// Reads fields in order; a field missing at the very end may take its default (Kafka's schemas
// for versions 1 and 2 tolerate missing trailing fields), a field cut in its middle may not.
// The bytes of connector names the task ids of one decode may copy. Each task id holds its own
// copy of its connector's name, so a 32 KB name with a few bytes per task number would make
// a one-megabyte JoinGroup take gigabytes; no real assignment comes near this.
constexpr size_t kMaxTaskIdNameBytes = 64 << 20;

class In {
 public:
  explicit In(std::string_view bytes) : bytes_(bytes) {}
  // Counts `n` more bytes of connector names copied into task ids against kMaxTaskIdNameBytes.
  void copyName(size_t n) {
    copiedNames_ += n;
    if (copiedNames_ > kMaxTaskIdNameBytes)
      fail("the task ids hold more than " + std::to_string(kMaxTaskIdNameBytes) +
           " bytes of connector names");
  }
  bool atEnd() const { return pos_ == bytes_.size(); }
  size_t remaining() const { return bytes_.size() - pos_; }

  int16_t i16(const char* field) { return static_cast<int16_t>(get(2, field)); }
  int32_t i32(const char* field) { return static_cast<int32_t>(get(4, field)); }
  int64_t i64(const char* field) { return static_cast<int64_t>(get(8, field)); }
  std::string str(const char* field) {
    int16_t n = i16(field);
    if (n < 0) fail(std::string("field '") + field + "' has negative length " + std::to_string(n));
    return std::string(take(static_cast<size_t>(n), field));
  }
  // An array's count; nullopt for a null array (any negative count, as Kafka reads it) when
  // `nullable`. `minElement` bytes per element bound the count by what is left.
  std::optional<int32_t> count(const char* field, bool nullable, size_t minElement) {
    int32_t n = i32(field);
    if (n < 0) {
      if (nullable) return std::nullopt;
      fail(std::string("array '") + field + "' has negative size " + std::to_string(n));
    }
    if (static_cast<size_t>(n) * minElement > remaining())
      fail(std::string("array '") + field + "' of " + std::to_string(n) + " elements, only " +
           std::to_string(remaining()) + " bytes left");
    return n;
  }
  std::string_view take(size_t n, const char* field) {
    if (n > remaining())
      fail(std::string("truncated in field '") + field + "': " + std::to_string(n) +
           " bytes wanted, " + std::to_string(remaining()) + " left");
    auto out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw ProtocolError("malformed Connect protocol data at byte " + std::to_string(pos_) + ": " +
                        why);
  }

 private:
  uint64_t get(size_t n, const char* field) {
    auto b = take(n, field);
    uint64_t v = 0;
    for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
    return v;
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  size_t copiedNames_ = 0;
};

int16_t readVersion(In& in) {
  int16_t version = in.i16("version");
  if (version < kEagerVersion)
    throw ProtocolError("unsupported Connect protocol version " + std::to_string(version));
  return version;
}

// One array entry per connector: its task numbers, kConnectorTask first when the connector
// itself is included, in the order the connectors first appear.
void writeConnectorArray(Out& out, const std::vector<std::string>& connectors,
                         const std::vector<ConnectorTaskId>& tasks) {
  std::vector<std::pair<std::string, std::vector<int32_t>>> entries;
  std::map<std::string, size_t> at;
  auto entry = [&](const std::string& connector) -> std::vector<int32_t>& {
    auto [it, fresh] = at.emplace(connector, entries.size());
    if (fresh) entries.push_back({connector, {}});
    return entries[it->second].second;
  };
  std::set<std::string> seen;
  for (const auto& c : connectors)
    if (seen.insert(c).second) entry(c).push_back(kConnectorTask);
  for (const auto& t : tasks) entry(t.connector).push_back(t.task);
  out.i32(static_cast<int32_t>(entries.size()));
  for (const auto& [connector, numbers] : entries) {
    out.str(connector);
    out.i32(static_cast<int32_t>(numbers.size()));
    for (int32_t n : numbers) out.i32(n);
  }
}

void readConnectorArray(In& in, bool nullable, std::vector<std::string>& connectors,
                        std::vector<ConnectorTaskId>& tasks) {
  // An entry is at least a string's length and an array's count.
  auto n = in.count("assignment", nullable, 6);
  if (!n) return;
  for (int32_t i = 0; i < *n; ++i) {
    std::string connector = in.str("connector");
    auto numbers = in.count("tasks", false, 4);
    for (int32_t j = 0; j < *numbers; ++j) {
      int32_t task = in.i32("tasks");
      in.copyName(connector.size());
      if (task == kConnectorTask)
        connectors.push_back(connector);
      else
        tasks.push_back({connector, task});
    }
  }
}

void writeAssignmentBody(Out& out, const WorkerAssignment& a) {
  out.i16(a.error);
  out.str(a.leader);
  out.str(a.leaderUrl);
  out.i64(a.configOffset);
  writeConnectorArray(out, a.connectors, a.tasks);
  if (a.version == kEagerVersion) return;
  writeConnectorArray(out, a.revokedConnectors, a.revokedTasks);
  out.i32(a.delayMs);
}

}  // namespace

int16_t protocolVersion(std::string_view protocolName) {
  if (protocolName == "default") return kEagerVersion;
  if (protocolName == "compatible") return kCompatibleVersion;
  if (protocolName == "sessioned") return kSessionedVersion;
  throw ProtocolError("unknown Connect protocol '" + std::string(protocolName) + "'");
}

std::string protocolName(int16_t version) {
  switch (version) {
    case kEagerVersion:
      return "default";
    case kCompatibleVersion:
      return "compatible";
    case kSessionedVersion:
      return "sessioned";
  }
  throw ProtocolError("unknown Connect protocol version " + std::to_string(version));
}

std::vector<std::string> offeredProtocols(std::string_view name) {
  std::vector<std::string> out;
  for (int16_t v = protocolVersion(name); v >= kEagerVersion; --v) out.push_back(protocolName(v));
  return out;
}

std::string toString(const ConnectorTaskId& id) {
  return id.connector + "-" + std::to_string(id.task);
}

std::string encodeAssignment(const WorkerAssignment& assignment) {
  if (assignment.version < kEagerVersion)
    throw ProtocolError("unsupported Connect protocol version " +
                        std::to_string(assignment.version));
  Out out;
  out.i16(assignment.version);
  writeAssignmentBody(out, assignment);
  return out.take();
}

WorkerAssignment decodeAssignment(std::string_view bytes) {
  In in(bytes);
  WorkerAssignment a;
  a.version = readVersion(in);
  a.error = in.i16("error");
  a.leader = in.str("leader");
  a.leaderUrl = in.str("leader-url");
  a.configOffset = in.i64("config-offset");
  // Kafka reads every version with version 1's schema: the arrays may be null, and the fields
  // after the config offset may be missing altogether.
  if (in.atEnd()) return a;
  readConnectorArray(in, true, a.connectors, a.tasks);
  if (in.atEnd()) return a;
  readConnectorArray(in, true, a.revokedConnectors, a.revokedTasks);
  if (in.atEnd()) return a;
  a.delayMs = in.i32("delay");
  return a;
}

std::string encodeWorkerState(const WorkerState& state, int16_t version) {
  if (version < kEagerVersion || version > kSessionedVersion)
    throw ProtocolError("unsupported Connect protocol version " + std::to_string(version));
  Out out;
  out.i16(version);
  out.str(state.url);
  out.i64(state.configOffset);
  if (version == kEagerVersion) return out.take();
  if (!state.owned) {
    out.i32(-1);  // null allocation
    return out.take();
  }
  WorkerAssignment owned = *state.owned;
  owned.version = version;
  std::string allocation = encodeAssignment(owned);
  out.i32(static_cast<int32_t>(allocation.size()));
  out.raw(allocation);
  return out.take();
}

WorkerState decodeWorkerState(std::string_view bytes) {
  In in(bytes);
  WorkerState state;
  readVersion(in);
  state.url = in.str("url");
  state.configOffset = in.i64("config-offset");
  if (in.atEnd()) return state;  // version 0, or a version 1 without its allocation
  int32_t size = in.i32("allocation");
  if (size < 0) return state;
  state.owned = decodeAssignment(in.take(static_cast<size_t>(size), "allocation"));
  return state;
}

}  // namespace oxbow::connect::runtime::distributed
