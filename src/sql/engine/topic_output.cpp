#include "sql/engine/topic_output.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include "sql/execution/value.h"

namespace oxbow::sql {

namespace {

int64_t big_endian(std::string_view bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  if (width == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

// The formats every side tries, in ksqlDB's order (its RecordFormatter.Format).
std::vector<RecordFormatter::Named> base_formats(const RegistryDecoders& registry) {
  std::vector<RecordFormatter::Named> out;
  auto add = [&](const char* name, FormatDecoder decode) {
    if (decode) out.push_back({name, std::move(decode), false});
  };
  add("AVRO", registry.avro);
  add("PROTOBUF", registry.protobuf);
  add("JSON", [](std::string_view b) -> std::optional<std::string> {
    if (b.empty() || !is_java_text(b) || !is_jackson_json(b)) return std::nullopt;
    return std::string(b);
  });
  add("JSON_SR", registry.json_sr);
  add("KAFKA_INT", [](std::string_view b) -> std::optional<std::string> {
    if (b.size() != 4) return std::nullopt;
    return std::to_string(big_endian(b, 0, 4));
  });
  add("KAFKA_BIGINT", [](std::string_view b) -> std::optional<std::string> {
    if (b.size() != 8) return std::nullopt;
    return std::to_string(big_endian(b, 0, 8));
  });
  // Never the first format left: KAFKA_BIGINT reads any 8 bytes (ksqlDB's PRINT neither).
  add("KAFKA_DOUBLE", [](std::string_view b) -> std::optional<std::string> {
    if (b.size() != 8) return std::nullopt;
    return java_double_text(std::bit_cast<double>(static_cast<uint64_t>(big_endian(b, 0, 8))));
  });
  add("KAFKA_STRING", [](std::string_view b) -> std::optional<std::string> {
    if (b.empty() || !is_java_text(b)) return std::nullopt;
    return std::string(b);
  });
  return out;
}

RecordFormatter::Named raw_bytes() {
  return {"UNRECOGNISED_BYTES",
          [](std::string_view b) { return std::optional(java_bytes_text(b)); }, true};
}

// Kafka Streams' windowed keys: the inner key, then the window start (time windows), or the end
// and the start (session windows), each 8 bytes; a window Kafka's Window class refuses fails.
RecordFormatter::Named windowed(const RecordFormatter::Named& inner, const std::string& kind) {
  bool session = kind == "SESSION";
  FormatDecoder decode = [inner = inner.decode,
                          session](std::string_view b) -> std::optional<std::string> {
    size_t trailer = session ? 16 : 8;
    if (b.size() <= trailer) return std::nullopt;
    auto key = inner(b.substr(0, b.size() - trailer));
    if (!key) return std::nullopt;
    int64_t start = big_endian(b, b.size() - 8, 8);
    if (start < 0) return std::nullopt;
    if (!session) {
      // The end is start + 1 ms, truncated to the largest long: equal to the start there.
      if (start == std::numeric_limits<int64_t>::max()) return std::nullopt;
      return "[" + *key + "@" + std::to_string(start) + "/-]";
    }
    int64_t end = big_endian(b, b.size() - 16, 8);
    if (end < start) return std::nullopt;
    return "[" + *key + "@" + std::to_string(start) + "/" + std::to_string(end) + "]";
  };
  return {kind + "(" + inner.name + ")", std::move(decode), false};
}

std::vector<RecordFormatter::Named> key_candidates(const RegistryDecoders& registry) {
  std::vector<RecordFormatter::Named> out;
  for (const auto& f : base_formats(registry)) {
    for (const char* kind : {"SESSION", "HOPPING", "TUMBLING"}) out.push_back(windowed(f, kind));
    out.push_back(f);
  }
  out.push_back(raw_bytes());
  return out;
}

std::vector<RecordFormatter::Named> value_candidates(const RegistryDecoders& registry) {
  auto out = base_formats(registry);
  out.push_back(raw_bytes());
  return out;
}

std::string two_digits(unsigned v) {
  return std::string{char('0' + v / 10), char('0' + v % 10)};
}

}  // namespace

void RecordFormatter::Candidates::narrow(const std::optional<std::string>& bytes) {
  if (!bytes) return;
  seen_data_ = true;
  std::erase_if(formats_, [&](const Named& f) { return !f.decode(*bytes); });
}

std::string RecordFormatter::Candidates::render(const std::optional<std::string>& bytes) const {
  if (!bytes) return "<null>";
  for (const auto& f : formats_)
    if (auto text = f.decode(*bytes)) return *text;
  return "<Failed to deserialize>";
}

std::vector<std::string> RecordFormatter::Candidates::names() const {
  if (!seen_data_) return {"¯\\_(ツ)_/¯ - no data processed"};
  std::vector<std::string> out;
  for (const auto& f : formats_)
    if (!f.fallback) out.push_back(f.name);
  return out;
}

RecordFormatter::RecordFormatter(const RegistryDecoders& registry)
    : keys_(key_candidates(registry)), values_(value_candidates(registry)) {}

std::vector<std::string> RecordFormatter::format(std::span<const TopicRecord> records) {
  for (const auto& r : records) {
    keys_.narrow(r.key);
    values_.narrow(r.value);
  }
  std::vector<std::string> lines;
  for (const auto& r : records)
    lines.push_back("rowtime: " + rowtime_text(r.timestamp) + ", key: " + keys_.render(r.key) +
                    ", value: " + values_.render(r.value) +
                    ", partition: " + std::to_string(r.partition));
  return lines;
}

PrintSession::PrintSession(int64_t interval, std::optional<int64_t> limit,
                           const RegistryDecoders& registry)
    : formatter_(registry),
      interval_(interval),
      limit_(limit),
      // Not a format's name: the first batch always prints the formats.
      shown_keys_{""},
      shown_values_{""} {}

std::vector<std::string> PrintSession::lines(std::span<const TopicRecord> records) {
  std::vector<std::string> out;
  if (records.empty() || done()) return out;
  std::vector<std::string> formatted = formatter_.format(records);
  std::vector<std::string> chosen;
  for (auto& line : formatted) {
    if (polled_++ % interval_ == 0) {
      ++written_;
      chosen.push_back(std::move(line));
    }
    if (done()) break;
  }
  auto announce = [&](std::vector<std::string>& shown, std::vector<std::string> now,
                      const char* prefix) {
    if (now == shown) return;
    std::string joined;
    for (const auto& f : now) joined += (joined.empty() ? "" : " or ") + f;
    out.push_back(prefix + (now.empty() ? " does not match any supported format. It may be a "
                                          "STRING with encoding other than UTF8, or some other "
                                          "format."
                                        : joined));
    shown = std::move(now);
  };
  announce(shown_keys_, formatter_.key_formats(), "Key format: ");
  announce(shown_values_, formatter_.value_formats(), "Value format: ");
  for (auto& line : chosen) out.push_back(std::move(line));
  return out;
}

std::string rowtime_text(int64_t timestamp) {
  if (timestamp == -1) return "N/A";
  using namespace std::chrono;
  sys_time<milliseconds> t{milliseconds(timestamp)};
  sys_days day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss<milliseconds> time{t - day};
  int year = static_cast<int>(ymd.year());
  std::string y = std::to_string(std::abs(year));
  if (y.size() < 4) y.insert(0, 4 - y.size(), '0');
  std::string ms = std::to_string(time.subseconds().count());
  ms.insert(0, 3 - ms.size(), '0');
  return (year < 0 ? "-" : "") + y + "/" + two_digits(unsigned(ymd.month())) + "/" +
         two_digits(unsigned(ymd.day())) + " " + two_digits(time.hours().count()) + ":" +
         two_digits(time.minutes().count()) + ":" + two_digits(time.seconds().count()) + "." + ms +
         " Z";
}

std::string java_bytes_text(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= ' ' && c <= '~' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string topics_table(const std::vector<TopicInfo>& topics, bool extended) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"Kafka Topic", "Partitions", "Partition Replicas"});
  if (extended) {
    rows[0].push_back("Consumers");
    rows[0].push_back("ConsumerGroups");
  }
  for (const auto& t : topics) {
    std::string replicas = t.replicas.empty() ? "0" : std::to_string(t.replicas[0]);
    if (std::adjacent_find(t.replicas.begin(), t.replicas.end(), std::not_equal_to<>()) !=
        t.replicas.end()) {
      replicas.clear();
      for (int r : t.replicas) replicas += (replicas.empty() ? "" : ", ") + std::to_string(r);
    }
    rows.push_back({t.name, std::to_string(t.replicas.size()), replicas});
    if (extended) {
      rows.back().push_back(std::to_string(t.consumers));
      rows.back().push_back(std::to_string(t.consumer_groups));
    }
  }
  return text_table(rows);
}

std::string text_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  size_t separator = 0;
  for (size_t w : widths) separator += w + 3;
  auto line = [&](const std::vector<std::string>& row) {
    std::string text = " ";
    for (size_t i = 0; i < row.size(); ++i)
      text += (i ? " | " : "") + row[i] + std::string(widths[i] - row[i].size(), ' ');
    return text + " \n";
  };
  std::string rule = std::string(separator - 1, '-') + "\n";
  std::string out = line(rows[0]) + rule;
  for (size_t i = 1; i < rows.size(); ++i) out += line(rows[i]);
  return out + rule;
}

}  // namespace oxbow::sql
