#include "streams/assignment/protocol_data.h"

#include <stdexcept>

#include "protocol/wire.h"

namespace oxbow::streams::detail {

namespace {

using protocol::Reader;
using protocol::Writer;

// Strings with an int32 length (the generated SubscriptionInfoData's endpoint and tags).
void long_string(Writer& w, const std::string& s) {
  w.i32(static_cast<int32_t>(s.size()));
  w.raw(s.data(), s.size());
}
std::string long_string(Reader& r) {
  int32_t n = r.i32();
  if (n < 0) return {};
  auto span = r.take_span(static_cast<size_t>(n));
  return std::string(span.begin(), span.end());
}

// Java's writeUTF: an uint16 length, then the bytes.
void utf(Writer& w, const std::string& s) {
  if (s.size() > 65535) throw std::invalid_argument("name longer than 65535 bytes: " + s);
  w.u16(static_cast<uint16_t>(s.size()));
  w.raw(s.data(), s.size());
}
std::string utf(Reader& r) {
  auto span = r.take_span(r.u16());
  return std::string(span.begin(), span.end());
}

int32_t count(Reader& r) {
  int32_t n = r.i32();
  // Every element takes at least one byte: a count beyond what is left is a lie.
  if (n < 0 || static_cast<size_t>(n) > r.remaining())
    throw protocol::DecodeError("bad array length");
  return n;
}

// A named topology's name as Java's writeChars puts it: two bytes (UTF-16) per character, the
// first zero for the ASCII a name is made of.
void task_id(Writer& w, const TaskId& id) {
  w.i32(id.subtopology);
  w.i32(id.partition);
  w.i32(static_cast<int32_t>(id.topology.size()));
  for (char c : id.topology) w.u16(static_cast<uint8_t>(c));
}
TaskId task_id(Reader& r) {
  TaskId id{r.i32(), r.i32()};
  for (int32_t i = 0, chars = count(r); i < chars; ++i) {
    uint16_t c = r.u16();
    if (c > 0x7f) throw protocol::DecodeError("named topology with a non-ASCII character");
    id.topology.push_back(static_cast<char>(c));
  }
  return id;
}

// topic -> partitions, in the consumer protocol's grouped form.
std::map<std::string, std::vector<int32_t>> grouped(const PartitionList& list) {
  std::map<std::string, std::vector<int32_t>> out;
  for (const auto& [t, p] : list) out[t].push_back(p);
  return out;
}
void write_partitions(Writer& w, const PartitionList& list) {
  auto by_topic = grouped(list);
  w.i32(static_cast<int32_t>(by_topic.size()));
  for (const auto& [topic, ps] : by_topic) {
    w.string(topic, false);
    w.i32(static_cast<int32_t>(ps.size()));
    for (int32_t p : ps) w.i32(p);
  }
}
PartitionList read_partitions(Reader& r) {
  PartitionList out;
  for (int32_t i = 0, n = count(r); i < n; ++i) {
    std::string topic = r.string(false);
    for (int32_t j = 0, m = count(r); j < m; ++j) out.emplace_back(topic, r.i32());
  }
  return out;
}

void bytes(Writer& w, const std::string& s) {
  w.i32(static_cast<int32_t>(s.size()));
  w.raw(s.data(), s.size());
}

template <class T>
T decoded(std::string_view bytes, const char* what, T (*read)(Reader&)) {
  std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  Reader r(copy);
  try {
    return read(r);
  } catch (const protocol::DecodeError& e) {
    throw std::runtime_error(std::string(what) + ": " + e.what());
  }
}

std::map<Endpoint, PartitionList> host_map(Reader& r, const std::map<int32_t, std::string>& dict) {
  std::map<Endpoint, PartitionList> out;
  for (int32_t i = 0, n = count(r); i < n; ++i) {
    Endpoint e;
    e.host = utf(r);
    e.port = r.i32();
    auto& list = out[e];
    for (int32_t j = 0, m = count(r); j < m; ++j) {
      int32_t index = r.i32();
      auto topic = dict.find(index);
      if (topic == dict.end()) throw protocol::DecodeError("unknown topic index");
      list.emplace_back(topic->second, r.i32());
    }
  }
  return out;
}

}  // namespace

std::string SubscriptionInfo::encode() const {
  Writer w;
  w.i32(version);
  w.i32(latest_supported_version);
  w.raw(process_id.data(), process_id.size());
  long_string(w, endpoint);
  w.i32(static_cast<int32_t>(task_offset_sums.size()));
  for (const auto& [task, sum] : task_offset_sums) {
    w.i32(task.subtopology);
    w.i32(task.partition);
    w.i64(sum);
    w.nullable_string(task.topology.empty() ? std::nullopt : std::optional(task.topology), false);
  }
  w.i8(unique_field);
  w.i32(error_code);
  w.i32(static_cast<int32_t>(client_tags.size()));
  for (const auto& [k, v] : client_tags) {
    long_string(w, k);
    long_string(w, v);
  }
  return w.str();
}

SubscriptionInfo SubscriptionInfo::decode(std::string_view bytes) {
  return decoded<SubscriptionInfo>(bytes, "Streams subscription", [](Reader& r) {
    SubscriptionInfo s;
    s.version = r.i32();
    s.latest_supported_version = r.i32();
    // Older members (Kafka Streams before 3.0) and newer ones that only probe are not members
    // this implementation can assign.
    if (s.version < kVersion)
      throw protocol::DecodeError("subscription version " + std::to_string(s.version) +
                                  " (Oxbow speaks version 11, Kafka Streams 3.0 and later)");
    auto id = r.take_span(16);
    std::copy(id.begin(), id.end(), s.process_id.begin());
    s.endpoint = long_string(r);
    for (int32_t i = 0, n = count(r); i < n; ++i) {
      TaskId task{r.i32(), r.i32()};
      int64_t sum = r.i64();
      task.topology = r.nullable_string(false).value_or(std::string());
      s.task_offset_sums[task] = sum;
    }
    s.unique_field = r.i8();
    s.error_code = r.i32();
    for (int32_t i = 0, n = count(r); i < n; ++i) {
      std::string k = long_string(r);
      s.client_tags[k] = long_string(r);
    }
    return s;
  });
}

std::string AssignmentInfo::encode() const {
  Writer w;
  w.i32(used_version);
  w.i32(common_version);
  w.i32(static_cast<int32_t>(active_tasks.size()));
  for (const auto& t : active_tasks) task_id(w, t);
  w.i32(static_cast<int32_t>(standby_tasks.size()));
  for (const auto& [t, list] : standby_tasks) {
    task_id(w, t);
    w.i32(static_cast<int32_t>(list.size()));
    for (const auto& [topic, p] : list) {
      utf(w, topic);
      w.i32(p);
    }
  }
  std::map<std::string, int32_t> index;
  for (const auto* hosts : {&active_by_host, &standby_by_host})
    for (const auto& [host, list] : *hosts)
      for (const auto& [topic, p] : list) index.emplace(topic, static_cast<int32_t>(index.size()));
  w.i32(static_cast<int32_t>(index.size()));
  for (const auto& [topic, i] : index) {
    w.i32(i);
    utf(w, topic);
  }
  for (const auto* hosts : {&active_by_host, &standby_by_host}) {
    w.i32(static_cast<int32_t>(hosts->size()));
    for (const auto& [host, list] : *hosts) {
      utf(w, host.host);
      w.i32(host.port);
      w.i32(static_cast<int32_t>(list.size()));
      for (const auto& [topic, p] : list) {
        w.i32(index.at(topic));
        w.i32(p);
      }
    }
  }
  w.i32(error_code);
  w.i64(next_rebalance_ms);
  return w.str();
}

AssignmentInfo AssignmentInfo::decode(std::string_view bytes) {
  return decoded<AssignmentInfo>(bytes, "Streams assignment", [](Reader& r) {
    AssignmentInfo a;
    a.used_version = r.i32();
    a.common_version = r.i32();
    if (a.used_version < 7)
      throw protocol::DecodeError("assignment version " + std::to_string(a.used_version));
    for (int32_t i = 0, n = count(r); i < n; ++i) a.active_tasks.push_back(task_id(r));
    for (int32_t i = 0, n = count(r); i < n; ++i) {
      auto& list = a.standby_tasks[task_id(r)];
      for (int32_t j = 0, m = count(r); j < m; ++j) {
        std::string topic = utf(r);
        list.emplace_back(topic, r.i32());
      }
    }
    std::map<int32_t, std::string> dict;
    for (int32_t i = 0, n = count(r); i < n; ++i) {
      int32_t index = r.i32();
      dict[index] = utf(r);
    }
    a.active_by_host = host_map(r, dict);
    a.standby_by_host = host_map(r, dict);
    a.error_code = r.i32();
    a.next_rebalance_ms = r.i64();
    return a;
  });
}

std::string ConsumerSubscription::encode() const {
  Writer w;
  w.i16(1);
  w.i32(static_cast<int32_t>(topics.size()));
  for (const auto& t : topics) w.string(t, false);
  bytes(w, user_data);
  write_partitions(w, owned);
  return w.str();
}

ConsumerSubscription ConsumerSubscription::decode(std::string_view bytes) {
  return decoded<ConsumerSubscription>(bytes, "consumer subscription", [](Reader& r) {
    ConsumerSubscription s;
    int16_t version = r.i16();
    for (int32_t i = 0, n = count(r); i < n; ++i) s.topics.push_back(r.string(false));
    auto data = r.nullable_bytes(false);
    if (data) s.user_data.assign(data->begin(), data->end());
    if (version >= 1) s.owned = read_partitions(r);
    return s;
  });
}

std::string ConsumerAssignment::encode() const {
  Writer w;
  w.i16(1);
  write_partitions(w, partitions);
  bytes(w, user_data);
  return w.str();
}

ConsumerAssignment ConsumerAssignment::decode(std::string_view bytes) {
  return decoded<ConsumerAssignment>(bytes, "consumer assignment", [](Reader& r) {
    ConsumerAssignment a;
    r.i16();
    a.partitions = read_partitions(r);
    auto data = r.nullable_bytes(false);
    if (data) a.user_data.assign(data->begin(), data->end());
    return a;
  });
}

std::string uuid_text(const std::array<uint8_t, 16>& id) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < id.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += hex[id[i] >> 4];
    out += hex[id[i] & 15];
  }
  return out;
}

std::array<uint8_t, 16> uuid_bytes(std::string_view text) {
  std::array<uint8_t, 16> out{};
  size_t n = 0;
  int half = -1;
  for (char c : text) {
    if (c == '-') continue;
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0 || n >= 16) throw std::invalid_argument("not a UUID: " + std::string(text));
    if (half < 0) {
      half = v;
    } else {
      out[n++] = static_cast<uint8_t>(half << 4 | v);
      half = -1;
    }
  }
  if (n != 16 || half >= 0) throw std::invalid_argument("not a UUID: " + std::string(text));
  return out;
}

}  // namespace oxbow::streams::detail
