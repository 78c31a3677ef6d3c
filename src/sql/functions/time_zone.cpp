#include "sql/functions/time_zone.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "sql/execution/operations.h"

namespace oxbow::sql::functions {

namespace {

constexpr const char* kZoneDir = "/usr/share/zoneinfo/";

int64_t big_endian(const std::string& data, size_t at, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v = (v << 8) | static_cast<unsigned char>(data[at + k]);
  if (bytes == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

// "+05:30", "-8", "+0530", "+05:30:15" after a sign: seconds east, or false.
bool parse_offset(std::string_view s, int64_t& seconds) {
  if (s.empty() || (s[0] != '+' && s[0] != '-')) return false;
  int sign = s[0] == '-' ? -1 : 1;
  std::string digits;
  for (char c : s.substr(1)) {
    if (std::isdigit(static_cast<unsigned char>(c)))
      digits += c;
    else if (c != ':')
      return false;
  }
  if (digits.empty() || digits.size() > 6 || (digits.size() % 2 == 1 && digits.size() != 1))
    return false;
  int h = std::stoi(digits.substr(0, digits.size() == 1 ? 1 : 2));
  int m = digits.size() >= 4 ? std::stoi(digits.substr(2, 2)) : 0;
  int sec = digits.size() >= 6 ? std::stoi(digits.substr(4, 2)) : 0;
  if (h > 18 || m > 59 || sec > 59) return false;
  seconds = sign * (h * 3600 + m * 60 + sec);
  return true;
}

std::string offset_text(int64_t seconds) {
  if (seconds == 0) return "Z";
  std::string out = seconds < 0 ? "-" : "+";
  int64_t a = seconds < 0 ? -seconds : seconds;
  auto two = [](int64_t v) { return std::string(1, char('0' + v / 10)) + char('0' + v % 10); };
  out += two(a / 3600) + ":" + two(a / 60 % 60);
  if (a % 60) out += ":" + two(a % 60);
  return out;
}

bool valid_region_id(std::string_view id) {
  if (id.empty() || !std::isalpha(static_cast<unsigned char>(id[0]))) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("~/._+-").find(c) == std::string_view::npos)
      return false;
  return id.find("..") == std::string_view::npos;
}

// A POSIX TZ rule's reader: names, offsets (west positive, as POSIX writes them), Mm.w.d rules.
struct PosixReader {
  std::string_view s;
  size_t at = 0;

  bool name(std::string& out) {
    size_t start = at;
    if (at < s.size() && s[at] == '<') {
      size_t close = s.find('>', at);
      if (close == std::string_view::npos) return false;
      out = std::string(s.substr(at + 1, close - at - 1));
      at = close + 1;
      return true;
    }
    while (at < s.size() && std::isalpha(static_cast<unsigned char>(s[at]))) ++at;
    out = std::string(s.substr(start, at - start));
    return at - start >= 3;
  }
  // [+-]hh[:mm[:ss]] in seconds.
  bool seconds(int64_t& out) {
    int sign = 1;
    if (at < s.size() && (s[at] == '+' || s[at] == '-')) sign = s[at++] == '-' ? -1 : 1;
    int64_t parts[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && (at >= s.size() || s[at] != ':')) break;
      if (k > 0) ++at;
      size_t start = at;
      while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])))
        parts[k] = parts[k] * 10 + (s[at++] - '0');
      if (start == at) return false;
    }
    out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
    return true;
  }
  bool rule(TimeZone::Rule& r) {
    if (at >= s.size() || s[at] != 'M') return false;  // Jn and n forms: not used by tzdata
    ++at;
    int64_t fields[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      if (k > 0 && (at >= s.size() || s[at++] != '.')) return false;
      size_t start = at;
      while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at])))
        fields[k] = fields[k] * 10 + (s[at++] - '0');
      if (start == at) return false;
    }
    r.month = static_cast<int>(fields[0]), r.week = static_cast<int>(fields[1]);
    r.weekday = static_cast<int>(fields[2]);
    if (at < s.size() && s[at] == '/') return ++at, seconds(r.time_s);
    return true;
  }
};

// The local day (since the epoch) a Mm.w.d rule falls on in `year`.
int64_t rule_day(const TimeZone::Rule& r, int64_t year) {
  int64_t first = ops::days_from_civil(year, r.month, 1);
  int64_t first_weekday = ops::floor_mod(first + 4, 7);  // 1970-01-01 was a Thursday (4)
  int64_t day = 1 + ops::floor_mod(r.weekday - first_weekday, 7) + (r.week - 1) * 7;
  while (day > ops::days_in_month(year, r.month)) day -= 7;
  return first + day - 1;
}

}  // namespace

const TimeZone& TimeZone::utc() {
  static const TimeZone zone = [] {
    TimeZone z;
    z.id_ = "UTC";
    z.types_.push_back({0, false, "UTC"});
    return z;
  }();
  return zone;
}

const TimeZone* TimeZone::find(std::string_view id, std::string& error) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TimeZone>, std::less<>> zones;  // null: unknown
  std::lock_guard lock(mutex);
  auto it = zones.find(id);
  if (it == zones.end()) {
    auto zone = std::make_unique<TimeZone>();
    zone->id_ = std::string(id);
    int64_t offset = 0;
    std::string_view rest = id;
    for (std::string_view prefix : {"UTC", "GMT", "UT"})
      if (id.substr(0, prefix.size()) == prefix) {
        rest = id.substr(prefix.size());
        break;
      }
    if (id == "Z" || rest.empty()) {
      zone->types_.push_back({0, false, id == "Z" ? "Z" : std::string(id)});
    } else if (parse_offset(rest, offset)) {
      zone->types_.push_back({offset, false, offset_text(offset)});
    } else if (!valid_region_id(id) || !zone->read_file(kZoneDir + std::string(id))) {
      zone = nullptr;
    }
    it = zones.emplace(std::string(id), std::move(zone)).first;
  }
  if (!it->second) error = "Unknown time-zone ID: " + std::string(id);
  return it->second.get();
}

bool TimeZone::read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() < 44 || data.compare(0, 4, "TZif") != 0) return false;
  // Version 1's block (32-bit times) first; version 2 and later repeat it with 64-bit times.
  auto counts = [&](size_t at, int64_t c[6]) {
    for (int k = 0; k < 6; ++k) c[k] = big_endian(data, at + 20 + 4 * k, 4);
  };
  int64_t c[6];  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  counts(0, c);
  size_t at = 44, time_size = 4;
  if (data[4] >= '2') {
    at += c[3] * 5 + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0];
    if (data.size() < at + 44) return false;
    counts(at, c);
    at += 44, time_size = 8;
  }
  size_t needed = c[3] * (time_size + 1) + c[4] * 6 + c[5];
  if (c[4] < 1 || data.size() < at + needed) return false;
  for (int64_t k = 0; k < c[3]; ++k)
    transitions_.push_back(big_endian(data, at + k * time_size, static_cast<int>(time_size)));
  at += c[3] * time_size;
  for (int64_t k = 0; k < c[3]; ++k) transition_types_.push_back(data[at + k]);
  at += c[3];
  size_t names = at + c[4] * 6;
  for (int64_t k = 0; k < c[4]; ++k, at += 6) {
    size_t index = static_cast<unsigned char>(data[at + 5]);
    std::string name = data.substr(names + index);
    types_.push_back({big_endian(data, at, 4), data[at + 4] != 0, name.substr(0, name.find('\0'))});
  }
  for (uint8_t t : transition_types_)
    if (t >= types_.size()) return false;
  at = names + c[5] + c[2] * (time_size + 4) + c[1] + c[0];
  if (time_size == 8 && at < data.size() && data[at] == '\n') {
    size_t end = data.find('\n', at + 1);
    if (end != std::string::npos) read_footer(std::string_view(data).substr(at + 1, end - at - 1));
  }
  return true;
}

bool TimeZone::read_footer(std::string_view footer) {
  PosixReader r{footer};
  int64_t std_west = 0, dst_west = 0;
  if (!r.name(rule_std_.abbreviation) || !r.seconds(std_west)) return false;
  rule_std_.offset_s = -std_west;
  has_rule_ = true;
  if (r.at == footer.size()) return true;
  if (!r.name(rule_dst_type_.abbreviation)) return has_rule_ = false;
  dst_west = std_west - 3600;
  if (r.at < footer.size() && footer[r.at] != ',' && !r.seconds(dst_west)) return has_rule_ = false;
  rule_dst_type_.offset_s = -dst_west;
  rule_dst_type_.dst = true;
  if (r.at >= footer.size() || footer[r.at++] != ',' || !r.rule(dst_start_) ||
      r.at >= footer.size() || footer[r.at++] != ',' || !r.rule(dst_end_))
    return has_rule_ = false;
  rule_dst_ = true;
  return true;
}

const TimeZone::Type& TimeZone::rule_type_at(int64_t utc_s) const {
  if (!rule_dst_) return rule_std_;
  int64_t year = ops::civil_from_days(ops::floor_div(utc_s + rule_std_.offset_s, 86400)).year;
  int64_t start = rule_day(dst_start_, year) * 86400 + dst_start_.time_s - rule_std_.offset_s;
  int64_t end = rule_day(dst_end_, year) * 86400 + dst_end_.time_s - rule_dst_type_.offset_s;
  bool dst = start < end ? utc_s >= start && utc_s < end : utc_s < end || utc_s >= start;
  return dst ? rule_dst_type_ : rule_std_;
}

const TimeZone::Type& TimeZone::type_at(int64_t utc_s) const {
  if (transitions_.empty()) return has_rule_ ? rule_type_at(utc_s) : types_[0];
  if (utc_s >= transitions_.back() && has_rule_) return rule_type_at(utc_s);
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc_s);
  if (it == transitions_.begin()) {
    // Before the first transition: the first standard type, as RFC 8536 says.
    for (const Type& t : types_)
      if (!t.dst) return t;
    return types_[0];
  }
  return types_[transition_types_[it - transitions_.begin() - 1]];
}

int64_t TimeZone::offset_ms(int64_t utc_ms) const {
  return type_at(ops::floor_div(utc_ms, 1000)).offset_s * 1000;
}

int64_t TimeZone::utc_of_local(int64_t local_ms) const {
  constexpr int64_t kDay = 86'400'000;
  int64_t before = offset_ms(local_ms - kDay), after = offset_ms(local_ms + kDay);
  if (offset_ms(local_ms - before) == before) return local_ms - before;  // valid or the earlier
  if (offset_ms(local_ms - after) == after) return local_ms - after;
  return local_ms - before;  // in a gap: later by the gap's length
}

std::string TimeZone::abbreviation(int64_t utc_ms) const {
  const Type& t = type_at(ops::floor_div(utc_ms, 1000));
  return t.abbreviation.empty() ? offset_text(t.offset_s) : t.abbreviation;
}

}  // namespace oxbow::sql::functions
