#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "registry/avro/binary.h"
#include "registry/avro/binary_detail.h"

namespace oxbow::registry::avro {

using detail::from_default;
using detail::is_named_kind;
using detail::short_name;

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// ---- Helpers shared by both directions

// The JSON encoding has no NaN or infinities; Java's encoder writes Jackson's non-standard
// tokens, which JSON parsers refuse, so they travel as these strings.
template <class J>
J float_json(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

// A float's shortest decimal form read back as a double, so that 1.1f prints as 1.1 (as Java's
// Float.toString does) rather than as 1.100000023841858.
double widen(float value) {
  if (!std::isfinite(value)) return value;
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  if (ec != std::errc()) return value;
  *end = '\0';
  return std::strtod(text, nullptr);
}

// Bytes as the JSON encoding holds them: one code point (0-255) per byte, in UTF-8.
void append_code_points(std::string& out, std::string_view bytes) {
  for (unsigned char b : bytes) {
    if (b < 0x80) {
      out += static_cast<char>(b);
    } else {
      out += static_cast<char>(0xC0 | (b >> 6));
      out += static_cast<char>(0x80 | (b & 0x3F));
    }
  }
}

// Length of the valid UTF-8 sequence at `s` (RFC 3629: no overlongs, surrogates or code points
// past U+10FFFF), or 0.
size_t utf8_sequence(const unsigned char* s, size_t left) {
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  auto cont = [&](size_t i) { return i < left && (s[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && s[1] < 0xA0) return 0;
    if (c == 0xED && s[1] >= 0xA0) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && s[1] < 0x90) return 0;
    if (c == 0xF4 && s[1] >= 0x90) return 0;
    return 4;
  }
  return 0;
}

std::string sanitized_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  for (size_t i = 0; i < in.size();) {
    const size_t n = utf8_sequence(s + i, in.size() - i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(in.data() + i, n);
      i += n;
    }
  }
  return out;
}

// ---- Decoding

template <class J>
class Decoder {
 public:
  Decoder(std::string_view bytes, const DecodeOptions& options)
      : begin_(bytes.data()), p_(bytes.data()), end_(bytes.data() + bytes.size()), opt_(options) {}

  void finish() const {
    if (p_ != end_ && !opt_.allow_trailing)
      fail(std::to_string(end_ - p_) + " bytes left after the datum");
  }

  J read(const Node& node, int depth) {
    enter(depth);
    switch (node.kind) {
      case Kind::kNull:
        return nullptr;
      case Kind::kBoolean:
        return read_boolean();
      case Kind::kInt:
        return read_int();
      case Kind::kLong:
        return read_long();
      case Kind::kFloat:
        return float_json<J>(widen(read_fixed_width<float>()));
      case Kind::kDouble:
        return float_json<J>(read_fixed_width<double>());
      case Kind::kBytes:
        return bytes_json(read_length_prefixed());
      case Kind::kFixed:
        return bytes_json(take(static_cast<size_t>(node.size)));
      case Kind::kString:
        return J(sanitized_utf8(read_length_prefixed()));
      case Kind::kEnum:
        return J(node.symbols[read_index(node.symbols.size(), "enum symbol")]);
      case Kind::kArray: {
        J out = J::array();
        read_blocks(*node.items, false, [&] { out.push_back(read(*node.items, depth + 1)); });
        return out;
      }
      case Kind::kMap: {
        J out = J::object();
        read_blocks(*node.values, true, [&] {
          std::string key = sanitized_utf8(read_length_prefixed());
          out[key] = read(*node.values, depth + 1);
        });
        return out;
      }
      case Kind::kRecord: {
        J out = J::object();
        for (const auto& field : node.fields) out[field.name] = read(*field.type, depth + 1);
        return out;
      }
      case Kind::kUnion: {
        const Node& branch = *node.branches[read_index(node.branches.size(), "union branch")];
        if (branch.kind == Kind::kNull) return nullptr;
        J out = J::object();
        out[branch_name(branch)] = read(branch, depth + 1);
        return out;
      }
    }
    fail("unknown schema kind");
  }

  // Reads what `w` wrote as a datum of `r`.
  J resolve(const Node& w, const Node& r, int depth) {
    enter(depth);
    if (w.kind == Kind::kUnion)
      return resolve(*w.branches[read_index(w.branches.size(), "union branch")], r, depth + 1);
    if (r.kind == Kind::kUnion) {
      const Node* branch = nullptr;
      for (int pass = 0; pass < 2 && !branch; ++pass)
        for (const Node* b : r.branches)
          if (!branch && (pass == 0 ? same_type(w, *b) : promotable(w.kind, b->kind))) branch = b;
      if (!branch) fail("the writer's " + branch_name(w) + " is no branch of the reader's union");
      if (branch->kind == Kind::kNull) return nullptr;
      J out = J::object();
      out[branch_name(*branch)] = resolve(w, *branch, depth + 1);
      return out;
    }
    if (w.kind == r.kind) {
      switch (w.kind) {
        case Kind::kRecord:
          if (!same_type(w, r)) break;
          return resolve_record(w, r, depth);
        case Kind::kEnum: {
          if (!same_type(w, r)) break;
          const std::string& symbol = w.symbols[read_index(w.symbols.size(), "enum symbol")];
          for (const auto& s : r.symbols)
            if (s == symbol) return J(symbol);
          if (r.enum_default) return J(*r.enum_default);
          fail("symbol " + symbol + " is not in the reader's enum " + r.full_name);
        }
        case Kind::kFixed:
          if (!same_type(w, r) || w.size != r.size) break;
          return read(w, depth);
        case Kind::kArray: {
          J out = J::array();
          read_blocks(*w.items, false,
                      [&] { out.push_back(resolve(*w.items, *r.items, depth + 1)); });
          return out;
        }
        case Kind::kMap: {
          J out = J::object();
          read_blocks(*w.values, true, [&] {
            std::string key = sanitized_utf8(read_length_prefixed());
            out[key] = resolve(*w.values, *r.values, depth + 1);
          });
          return out;
        }
        default:
          return read(w, depth);
      }
    }
    if (promotable(w.kind, r.kind)) {
      if (w.kind == Kind::kString) return bytes_json(read_length_prefixed());
      if (w.kind == Kind::kBytes) return J(sanitized_utf8(read_length_prefixed()));
      if (r.kind == Kind::kLong) return J(static_cast<int64_t>(read_int()));
      double value = w.kind == Kind::kInt    ? static_cast<double>(read_int())
                     : w.kind == Kind::kLong ? static_cast<double>(read_long())
                                             : widen(read_fixed_width<float>());
      if (r.kind == Kind::kFloat) value = widen(static_cast<float>(value));
      return float_json<J>(value);
    }
    fail("the writer's " + branch_name(w) + " does not resolve to the reader's " + branch_name(r));
  }

 private:
  static bool same_type(const Node& w, const Node& r) {
    if (w.kind != r.kind) return false;
    if (!is_named_kind(w.kind)) return true;
    if (short_name(w.full_name) == short_name(r.full_name)) return true;
    for (const auto& alias : r.aliases)
      if (alias == w.full_name) return true;
    return false;
  }

  static bool promotable(Kind w, Kind r) {
    switch (w) {
      case Kind::kInt:
        return r == Kind::kLong || r == Kind::kFloat || r == Kind::kDouble;
      case Kind::kLong:
        return r == Kind::kFloat || r == Kind::kDouble;
      case Kind::kFloat:
        return r == Kind::kDouble;
      case Kind::kString:
        return r == Kind::kBytes;
      case Kind::kBytes:
        return r == Kind::kString;
      default:
        return false;
    }
  }

  J resolve_record(const Node& w, const Node& r, int depth) {
    std::vector<J> values(r.fields.size());
    std::vector<bool> seen(r.fields.size());
    for (const auto& wf : w.fields) {
      size_t match = r.fields.size();
      for (size_t i = 0; i < r.fields.size() && match == r.fields.size(); ++i) {
        const Field& rf = r.fields[i];
        if (rf.name == wf.name) match = i;
        for (const auto& alias : rf.aliases)
          if (alias == wf.name) match = i;
      }
      if (match == r.fields.size()) {
        (void)read(*wf.type, depth + 1);  // skipped
        continue;
      }
      values[match] = resolve(*wf.type, *r.fields[match].type, depth + 1);
      seen[match] = true;
    }
    J out = J::object();
    for (size_t i = 0; i < r.fields.size(); ++i) {
      const Field& rf = r.fields[i];
      if (seen[i]) {
        out[rf.name] = std::move(values[i]);
      } else if (rf.default_value) {
        out[rf.name] = from_default<J>(*rf.type, *rf.default_value, 0);
      } else {
        fail("the reader's field " + r.full_name + "." + rf.name +
             " is not written and has no default");
      }
    }
    return out;
  }

  void enter(int depth) const {
    if (depth > opt_.max_depth)
      fail("the datum nests deeper than " + std::to_string(opt_.max_depth));
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw BinaryError("at byte " + std::to_string(p_ - begin_) + ": " + why);
  }

  size_t left() const { return static_cast<size_t>(end_ - p_); }

  std::string_view take(size_t n) {
    if (n > left())
      fail("wants " + std::to_string(n) + " bytes but " + std::to_string(left()) + " are left");
    std::string_view out(p_, n);
    p_ += n;
    return out;
  }

  int64_t read_long() {
    uint64_t z = 0;
    for (int shift = 0;; shift += 7) {
      if (p_ == end_) fail("truncated varint");
      if (shift >= 64) fail("varint longer than 10 bytes");
      const auto b = static_cast<unsigned char>(*p_++);
      z |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }

  int32_t read_int() {
    const int64_t v = read_long();
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      fail("int out of range");
    return static_cast<int32_t>(v);
  }

  bool read_boolean() {
    const auto b = static_cast<unsigned char>(take(1)[0]);
    if (b > 1) fail("boolean byte " + std::to_string(b));
    return b == 1;
  }

  template <class T>
  T read_fixed_width() {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, take(sizeof(T)).data(), sizeof(T));
    if constexpr (std::endian::native == std::endian::big) std::reverse(raw, raw + sizeof(T));
    T value;
    std::memcpy(&value, raw, sizeof(T));
    return value;
  }

  std::string_view read_length_prefixed() {
    const int64_t n = read_long();
    if (n < 0) fail("negative length " + std::to_string(n));
    return take(static_cast<size_t>(n));
  }

  size_t read_index(size_t count, const char* what) {
    const int64_t i = read_long();
    if (i < 0 || static_cast<uint64_t>(i) >= count)
      fail(std::string(what) + " index " + std::to_string(i) + " out of range (" +
           std::to_string(count) + ")");
    return static_cast<size_t>(i);
  }

  static J bytes_json(std::string_view bytes) {
    std::string s;
    s.reserve(bytes.size());
    append_code_points(s, bytes);
    return J(std::move(s));
  }

  // Whether a datum of `node` takes no bytes at all.
  bool empty_encoding(const Node& node) {
    switch (node.kind) {
      case Kind::kNull:
        return true;
      case Kind::kFixed:
        return node.size == 0;
      case Kind::kRecord: {
        auto [it, inserted] = empty_cache_.try_emplace(&node, false);
        if (!inserted) return it->second;  // decided, or being decided (a cycle: not empty)
        bool empty = true;
        for (const auto& f : node.fields) empty = empty && empty_encoding(*f.type);
        empty_cache_[&node] = empty;
        return empty;
      }
      default:
        return false;
    }
  }

  // Arrays and maps come in blocks: a count (negative: followed by the block's byte size), then
  // that many items, until a zero count.
  template <class F>
  void read_blocks(const Node& item, bool keyed, F&& read_one) {
    for (;;) {
      int64_t count = read_long();
      if (count == 0) return;
      if (count < 0) {
        if (count == std::numeric_limits<int64_t>::min()) fail("block count out of range");
        count = -count;
        const int64_t size = read_long();
        if (size < 0 || static_cast<uint64_t>(size) > left())
          fail("block size " + std::to_string(size) + " with " + std::to_string(left()) +
               " bytes left");
      }
      const auto n = static_cast<uint64_t>(count);
      if (!keyed && empty_encoding(item)) {
        if (n > opt_.max_empty_items - empty_items_)
          fail("more than " + std::to_string(opt_.max_empty_items) + " empty items");
        empty_items_ += static_cast<size_t>(n);
      } else if (n > left()) {
        fail("block of " + std::to_string(n) + " items with " + std::to_string(left()) +
             " bytes left");
      }
      for (uint64_t i = 0; i < n; ++i) read_one();
    }
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  const DecodeOptions& opt_;
  size_t empty_items_ = 0;
  std::map<const Node*, bool> empty_cache_;
};

template <class J>
J decode_with(const Schema& writer, const Schema* reader, std::string_view bytes,
              const DecodeOptions& options) {
  Decoder<J> decoder(bytes, options);
  J out =
      reader ? decoder.resolve(writer.root(), reader->root(), 0) : decoder.read(writer.root(), 0);
  decoder.finish();
  return out;
}

}  // namespace

Json decode(const Schema& writer, std::string_view bytes, const DecodeOptions& options) {
  return decode_with<Json>(writer, nullptr, bytes, options);
}

OJson decode_ordered(const Schema& writer, std::string_view bytes, const DecodeOptions& options) {
  return decode_with<OJson>(writer, nullptr, bytes, options);
}

Json decode(const Schema& writer, const Schema& reader, std::string_view bytes,
            const DecodeOptions& options) {
  return decode_with<Json>(writer, &reader, bytes, options);
}

OJson decode_ordered(const Schema& writer, const Schema& reader, std::string_view bytes,
                     const DecodeOptions& options) {
  return decode_with<OJson>(writer, &reader, bytes, options);
}

}  // namespace oxbow::registry::avro
