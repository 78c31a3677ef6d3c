#include "sql/kafka/registry_decoders.h"

#include <memory>

#include "oxbow/registry/client.h"
#include "oxbow/registry/serdes.h"
#include "sql/execution/value.h"

namespace oxbow::sql {

namespace {

// Avro's escapes: JSON's short ones, and \uXXXX for the C0 and C1 controls, DEL and U+2000 to
// U+20FF (UTF-8 in, so those are read back from their bytes).
void append_avro_string(const std::string& s, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto escape = [&](unsigned code) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(code >> shift) & 15];
  };
  out += '"';
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = s[i];
    unsigned char next = i + 1 < s.size() ? s[i + 1] : 0;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          escape(c);
        } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
          escape(next);
          ++i;
        } else if (c == 0xE2 && next >= 0x80 && next <= 0x83 && i + 2 < s.size()) {
          escape(0x2000 | ((next & 0x3F) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3F));
          i += 2;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void append_avro(const nlohmann::ordered_json& v, std::string& out) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      out += first ? "" : ", ";
      first = false;
      append_avro_string(key, out);
      out += ": ";
      append_avro(item, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      out += i ? ", " : "";
      append_avro(v[i], out);
    }
    out += ']';
  } else if (v.is_string()) {
    append_avro_string(v.get<std::string>(), out);
  } else if (v.is_number_float()) {
    out += java_double_text(v.get<double>());
  } else {
    out += v.dump();
  }
}

FormatDecoder decoder(std::shared_ptr<registry::Deserializer> deserializer,
                      std::string (*text)(const nlohmann::ordered_json&)) {
  return [deserializer, text](std::string_view bytes) -> std::optional<std::string> {
    try {
      return text(deserializer->deserialize_ordered("", bytes));
    } catch (const std::exception&) {
      return std::nullopt;  // not this format, or a schema the registry does not have
    }
  };
}

std::string compact(const nlohmann::ordered_json& v) {
  return v.dump();
}

}  // namespace

std::string avro_text(const nlohmann::ordered_json& datum) {
  std::string out;
  append_avro(datum, out);
  return out;
}

RegistryDecoders registry_decoders(const std::string& url) {
  if (url.empty()) return {};
  auto config = registry::SerdeConfig::from_properties({{"schema.registry.url", url}});
  auto client = std::make_shared<registry::SchemaRegistryClient>(config.client);
  auto make = [&](registry::Format format) {
    return std::make_shared<registry::Deserializer>(client, config, format, false);
  };
  return {decoder(make(registry::Format::kAvro), avro_text),
          decoder(make(registry::Format::kProtobuf), compact),
          decoder(make(registry::Format::kJson), compact)};
}

}  // namespace oxbow::sql
