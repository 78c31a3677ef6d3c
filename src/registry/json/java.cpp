// What Java does that Confluent's results depend on: String order and hashes, HashMap iteration
// order, and BigDecimal remainders.
#include "registry/json/java.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace oxbow::registry::json::detail {

namespace {

std::u16string utf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    uint32_t cp = c;
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (extra) cp = c & (0x3F >> extra);
    for (int k = 1; k <= extra && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    i += 1 + extra;
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (cp >> 10));
      out += static_cast<char16_t>(0xDC00 + (cp & 0x3FF));
    } else {
      out += static_cast<char16_t>(cp);
    }
  }
  return out;
}

size_t table_size_for(size_t c) {
  size_t n = 1;
  while (n < c) n <<= 1;
  return n;
}

// The order Java's HashMap/HashSet iterates `keys` put into it in this order, starting from
// `capacity` buckets: by bucket, and in insertion order within one.
std::vector<std::string> java_order(const std::vector<std::string>& keys, size_t capacity) {
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (const auto& k : keys) {
    if (!seen.insert(k).second) continue;
    unique.push_back(k);
    if (unique.size() > capacity * 3 / 4) capacity *= 2;
  }
  auto bucket = [capacity](const std::string& k) {
    uint32_t h = static_cast<uint32_t>(java_hash(k));
    return (h ^ (h >> 16)) & (capacity - 1);
  };
  std::stable_sort(unique.begin(), unique.end(),
                   [&](const auto& a, const auto& b) { return bucket(a) < bucket(b); });
  return unique;
}

}  // namespace

std::vector<std::string> java_map_order(const std::vector<std::string>& keys) {
  auto built = java_order(keys, 16);
  return java_order(built, table_size_for(static_cast<size_t>(built.size() / 0.75f + 1.0f)));
}

std::vector<std::string> java_union_order(const std::vector<std::string>& a,
                                          const std::vector<std::string>& b) {
  std::vector<std::string> all = a;
  all.insert(all.end(), b.begin(), b.end());
  size_t initial = std::max<size_t>(static_cast<size_t>(a.size() / 0.75f) + 1, 16);
  return java_order(all, table_size_for(initial));
}

namespace {

// multipleOf as Java's BigDecimal of its shortest text: unscaled * 10^-scale.
struct Decimal {
  __int128 unscaled = 0;
  int scale = 0;
  bool ok = false;
};

Decimal decimal(double d) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string text(buf, ec == std::errc() ? end : buf);
  Decimal out;
  bool negative = false;
  size_t i = 0, digits = 0;
  if (i < text.size() && text[i] == '-') negative = true, ++i;
  bool fraction = false;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.');
       ++i) {
    if (text[i] == '.') {
      fraction = true;
      continue;
    }
    if (++digits > 30) return out;
    out.unscaled = out.unscaled * 10 + (text[i] - '0');
    if (fraction) ++out.scale;
  }
  if (i < text.size() && text[i] == 'e') out.scale -= std::atoi(text.c_str() + i + 1);
  if (negative) out.unscaled = -out.unscaled;
  out.ok = digits > 0 && std::abs(out.scale) < 300;
  return out;
}

}  // namespace

bool java_divides(double a, double b) {
  Decimal x = decimal(a), y = decimal(b);
  int scale = std::max(x.scale, y.scale);
  auto widen = [scale](Decimal d, bool* ok) {
    for (int i = d.scale; i < scale; ++i) {
      if (d.unscaled > static_cast<__int128>(1e36) || d.unscaled < -static_cast<__int128>(1e36)) {
        *ok = false;
        return __int128(0);
      }
      d.unscaled *= 10;
    }
    return d.unscaled;
  };
  bool ok = x.ok && y.ok;
  __int128 xa = ok ? widen(x, &ok) : 0, yb = ok ? widen(y, &ok) : 0;
  if (ok && yb != 0) return xa % yb == 0;
  return std::fmod(a, b) == 0;
}

bool java_less(const std::string& a, const std::string& b) {
  return utf16(a) < utf16(b);
}

int32_t java_hash(const std::string& s) {
  uint32_t h = 0;
  for (char16_t c : utf16(s)) h = 31 * h + c;
  return static_cast<int32_t>(h);
}

}  // namespace oxbow::registry::json::detail
