// The Parsing Canonical Form and its 64-bit fingerprint, as the Avro specification defines them.
#include <array>
#include <set>

#include "registry/avro/schema.h"

namespace oxbow::registry::avro {

namespace {

void quoted(std::string& out, const std::string& s) {
  out += nlohmann::json(s).dump();
}

void write(const Node& n, std::set<const Node*>& written, std::string& out) {
  switch (n.kind) {
    case Kind::kRecord:
    case Kind::kEnum:
    case Kind::kFixed:
      // A named type is spelled out where it first appears, then referred to by name.
      if (!written.insert(&n).second) return quoted(out, n.full_name);
      out += "{\"name\":";
      quoted(out, n.full_name);
      out += ",\"type\":";
      quoted(out, kind_name(n.kind));
      if (n.kind == Kind::kRecord) {
        out += ",\"fields\":[";
        for (size_t i = 0; i < n.fields.size(); ++i) {
          if (i > 0) out += ',';
          out += "{\"name\":";
          quoted(out, n.fields[i].name);
          out += ",\"type\":";
          write(*n.fields[i].type, written, out);
          out += '}';
        }
        out += ']';
      } else if (n.kind == Kind::kEnum) {
        out += ",\"symbols\":[";
        for (size_t i = 0; i < n.symbols.size(); ++i) {
          if (i > 0) out += ',';
          quoted(out, n.symbols[i]);
        }
        out += ']';
      } else {
        out += ",\"size\":" + std::to_string(n.size);
      }
      out += '}';
      return;
    case Kind::kArray:
      out += "{\"type\":\"array\",\"items\":";
      write(*n.items, written, out);
      out += '}';
      return;
    case Kind::kMap:
      out += "{\"type\":\"map\",\"values\":";
      write(*n.values, written, out);
      out += '}';
      return;
    case Kind::kUnion:
      out += '[';
      for (size_t i = 0; i < n.branches.size(); ++i) {
        if (i > 0) out += ',';
        write(*n.branches[i], written, out);
      }
      out += ']';
      return;
    default:
      quoted(out, kind_name(n.kind));
  }
}

std::array<uint64_t, 256> fingerprint_table() {
  constexpr uint64_t kEmpty = 0xc15d213aa4d7a795ULL;
  std::array<uint64_t, 256> table{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t fp = i;
    for (int j = 0; j < 8; ++j) fp = (fp >> 1) ^ (kEmpty & (0 - (fp & 1)));
    table[i] = fp;
  }
  return table;
}

}  // namespace

std::string parsing_canonical_form(const Schema& schema) {
  std::string out;
  std::set<const Node*> written;
  write(schema.root(), written, out);
  return out;
}

uint64_t fingerprint64(std::string_view text) {
  static const std::array<uint64_t, 256> table = fingerprint_table();
  uint64_t fp = 0xc15d213aa4d7a795ULL;
  for (unsigned char c : text) fp = (fp >> 8) ^ table[(fp ^ c) & 0xff];
  return fp;
}

}  // namespace oxbow::registry::avro
