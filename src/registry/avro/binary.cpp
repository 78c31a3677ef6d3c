#include "registry/avro/binary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "registry/avro/binary_detail.h"

namespace oxbow::registry::avro {

using detail::from_default;
using detail::is_named_kind;
using detail::short_name;

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// ---- Encoding

void write_long(int64_t value, std::string& out) {
  uint64_t z = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
  while (z >= 0x80) {
    out += static_cast<char>((z & 0x7F) | 0x80);
    z >>= 7;
  }
  out += static_cast<char>(z);
}

template <class T>
void write_little_endian(T value, std::string& out) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) std::reverse(raw, raw + sizeof(T));
  out.append(reinterpret_cast<const char*>(raw), sizeof(T));
}

class Encoder {
 public:
  void encode(const Node& node, const Json& v, std::string& out, int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth));
    switch (node.kind) {
      case Kind::kNull:
        if (!v.is_null()) fail("expected null");
        return;
      case Kind::kBoolean:
        if (!v.is_boolean()) fail("expected a boolean");
        out += v.get<bool>() ? '\1' : '\0';
        return;
      case Kind::kInt: {
        const int64_t n = integer(v, "an int");
        if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max())
          fail("out of an int's range");
        write_long(n, out);
        return;
      }
      case Kind::kLong:
        write_long(integer(v, "a long"), out);
        return;
      case Kind::kFloat:
        write_little_endian(static_cast<float>(floating(v)), out);
        return;
      case Kind::kDouble:
        write_little_endian(floating(v), out);
        return;
      case Kind::kBytes: {
        const std::string bytes = code_points(v);
        write_long(static_cast<int64_t>(bytes.size()), out);
        out += bytes;
        return;
      }
      case Kind::kFixed: {
        const std::string bytes = code_points(v);
        if (static_cast<int64_t>(bytes.size()) != node.size)
          fail("fixed " + node.full_name + " takes " + std::to_string(node.size) + " bytes, not " +
               std::to_string(bytes.size()));
        out += bytes;
        return;
      }
      case Kind::kString: {
        if (!v.is_string()) fail("expected a string");
        const auto& s = v.get_ref<const std::string&>();
        write_long(static_cast<int64_t>(s.size()), out);
        out += s;
        return;
      }
      case Kind::kEnum: {
        if (!v.is_string()) fail("expected a symbol of enum " + node.full_name);
        const auto& s = v.get_ref<const std::string&>();
        for (size_t i = 0; i < node.symbols.size(); ++i)
          if (node.symbols[i] == s) return write_long(static_cast<int64_t>(i), out);
        fail("\"" + s + "\" is not a symbol of enum " + node.full_name);
      }
      case Kind::kArray:
        if (!v.is_array()) fail("expected an array");
        if (!v.empty()) {
          write_long(static_cast<int64_t>(v.size()), out);
          for (size_t i = 0; i < v.size(); ++i) {
            path_.push_back("[" + std::to_string(i) + "]");
            encode(*node.items, v[i], out, depth + 1);
            path_.pop_back();
          }
        }
        out += '\0';
        return;
      case Kind::kMap:
        if (!v.is_object()) fail("expected an object (a map)");
        if (!v.empty()) {
          write_long(static_cast<int64_t>(v.size()), out);
          for (const auto& [key, item] : v.items()) {
            write_long(static_cast<int64_t>(key.size()), out);
            out += key;
            path_.push_back("." + key);
            encode(*node.values, item, out, depth + 1);
            path_.pop_back();
          }
        }
        out += '\0';
        return;
      case Kind::kRecord:
        return encode_record(node, v, out, depth);
      case Kind::kUnion:
        return encode_union(node, v, out, depth);
    }
  }

  [[noreturn]] void fail(const std::string& why) const {
    std::string where = "$";
    for (const auto& p : path_) where += p;
    throw BinaryError(where + ": " + why);
  }

  static constexpr int kMaxDepth = detail::kMaxEncodeDepth;

 private:
  int64_t integer(const Json& v, const char* what) const {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(std::string("out of ") + what + "'s range");
    if (!v.is_number_integer()) fail(std::string("expected ") + what);
    return v.get<int64_t>();
  }

  double floating(const Json& v) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    fail("expected a number");
  }

  std::string code_points(const Json& v) const {
    if (!v.is_string()) fail("expected a string of bytes (code points 0-255)");
    const auto& s = v.get_ref<const std::string&>();
    std::string bytes;
    bytes.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c < 0x80) {
        bytes += static_cast<char>(c);
      } else if ((c == 0xC2 || c == 0xC3) && i + 1 < s.size() &&
                 (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
        bytes += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F));
      } else {
        fail("bytes are written as code points 0-255; this string has others");
      }
    }
    return bytes;
  }

  void encode_record(const Node& node, const Json& v, std::string& out, int depth) {
    if (!v.is_object()) fail("expected an object (record " + node.full_name + ")");
    size_t found = 0;
    for (const auto& field : node.fields) {
      path_.push_back("." + field.name);
      auto it = v.find(field.name);
      if (it != v.end()) {
        ++found;
        encode(*field.type, *it, out, depth + 1);
      } else if (field.default_value) {
        encode(*field.type, from_default<Json>(*field.type, *field.default_value, 0), out,
               depth + 1);
      } else {
        fail("missing, and the field has no default");
      }
      path_.pop_back();
    }
    if (found < v.size()) {
      for (const auto& [key, _] : v.items()) {
        bool known = false;
        for (const auto& field : node.fields) known = known || field.name == key;
        if (!known) fail("record " + node.full_name + " has no field \"" + key + "\"");
      }
    }
  }

  // A branch named by a single-key wrapper object, or -1.
  static int wrapped_branch(const Node& node, const Json& v) {
    if (!v.is_object() || v.size() != 1) return -1;
    const std::string& key = v.begin().key();
    for (size_t i = 0; i < node.branches.size(); ++i)
      if (branch_name(*node.branches[i]) == key) return static_cast<int>(i);
    for (size_t i = 0; i < node.branches.size(); ++i) {
      const Node& b = *node.branches[i];
      if (is_named_kind(b.kind) && short_name(b.full_name) == key) return static_cast<int>(i);
    }
    return -1;
  }

  void encode_union(const Node& node, const Json& v, std::string& out, int depth) {
    int chosen = wrapped_branch(node, v);
    const Json* value = chosen >= 0 ? &v.begin().value() : &v;
    if (chosen < 0) {
      std::string scratch;
      int fitting = 0;
      for (size_t i = 0; i < node.branches.size(); ++i) {
        Encoder trial;
        try {
          scratch.clear();
          trial.encode(*node.branches[i], v, scratch, depth + 1);
        } catch (const BinaryError&) {
          continue;
        }
        if (fitting++ == 0) chosen = static_cast<int>(i);
      }
      if (fitting == 0) fail("fits no branch of the union; wrap it as {\"<type>\": value}");
      if (fitting > 1) fail("fits several branches of the union; wrap it as {\"<type>\": value}");
    }
    write_long(chosen, out);
    path_.push_back("<" + branch_name(*node.branches[static_cast<size_t>(chosen)]) + ">");
    encode(*node.branches[static_cast<size_t>(chosen)], *value, out, depth + 1);
    path_.pop_back();
  }

  std::vector<std::string> path_;
};

}  // namespace

namespace detail {

template <class J>
J from_default(const Node& node, const OJson& value, int depth) {
  if (depth > kMaxEncodeDepth) throw BinaryError("default nested too deep");
  switch (node.kind) {
    case Kind::kUnion: {
      const Node& first = *node.branches.at(0);
      if (first.kind == Kind::kNull) return nullptr;
      J wrapped = J::object();
      wrapped[branch_name(first)] = from_default<J>(first, value, depth + 1);
      return wrapped;
    }
    case Kind::kRecord: {
      J out = J::object();
      for (const auto& field : node.fields) {
        if (value.is_object() && value.contains(field.name))
          out[field.name] = from_default<J>(*field.type, value[field.name], depth + 1);
        else if (field.default_value)
          out[field.name] = from_default<J>(*field.type, *field.default_value, depth + 1);
        else
          throw BinaryError("the default of record " + node.full_name + " lacks field " +
                            field.name);
      }
      return out;
    }
    case Kind::kArray: {
      J out = J::array();
      if (value.is_array())
        for (const auto& item : value) out.push_back(from_default<J>(*node.items, item, depth + 1));
      return out;
    }
    case Kind::kMap: {
      J out = J::object();
      if (value.is_object())
        for (const auto& [k, item] : value.items())
          out[k] = from_default<J>(*node.values, item, depth + 1);
      return out;
    }
    default:
      return J(value);
  }
}

template Json from_default<Json>(const Node&, const OJson&, int);
template OJson from_default<OJson>(const Node&, const OJson&, int);

}  // namespace detail

std::string branch_name(const Node& node) {
  return is_named_kind(node.kind) ? node.full_name : kind_name(node.kind);
}

void encode(const Node& schema, const Json& datum, std::string& out) {
  Encoder().encode(schema, datum, out, 0);
}

std::string encode(const Schema& schema, const Json& datum) {
  std::string out;
  encode(schema.root(), datum, out);
  return out;
}

}  // namespace oxbow::registry::avro
