// StringConverter, ByteArrayConverter and the fixed-width converters over Kafka's serializations.
#include <algorithm>
#include <bit>
#include <cstring>

#include "oxbow/connect/converters.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect {
namespace {

std::string lowerAscii(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

// ISO-8859-1 text of UTF-8 text: characters past U+00FF become '?', as Java's encoder writes them.
void latin1Of(std::string_view utf8, std::string& out) {
  for (size_t i = 0; i < utf8.size();) {
    auto lead = static_cast<unsigned char>(utf8[i]);
    size_t length = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    if (length == 2 && i + 1 < utf8.size() && lead <= 0xc3) {
      out.push_back(static_cast<char>(((lead & 0x1f) << 6) |
                                      (static_cast<unsigned char>(utf8[i + 1]) & 0x3f)));
    } else {
      out.push_back(length == 1 ? static_cast<char>(lead) : '?');
    }
    i += length;
  }
}

std::string utf8Of(std::string_view latin1) {
  std::string out;
  out.reserve(latin1.size());
  for (char c : latin1) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) {
      out.push_back(c);
    } else {
      out.push_back(static_cast<char>(0xc0 | (byte >> 6)));
      out.push_back(static_cast<char>(0x80 | (byte & 0x3f)));
    }
  }
  return out;
}

std::string_view deserializerOf(Type type) {
  switch (type) {
    case Type::INT16:
      return "ShortDeserializer";
    case Type::INT32:
      return "IntegerDeserializer";
    case Type::INT64:
      return "LongDeserializer";
    case Type::FLOAT32:
      return "FloatDeserializer";
    case Type::FLOAT64:
      return "DoubleDeserializer";
    default:
      return "BooleanDeserializer";
  }
}

size_t widthOf(Type type) {
  switch (type) {
    case Type::INT16:
      return 2;
    case Type::INT32:
    case Type::FLOAT32:
      return 4;
    case Type::INT64:
    case Type::FLOAT64:
      return 8;
    default:
      return 1;
  }
}

SchemaPtr optionalSchemaOf(Type type) {
  switch (type) {
    case Type::INT16:
      return Schema::OPTIONAL_INT16_SCHEMA;
    case Type::INT32:
      return Schema::OPTIONAL_INT32_SCHEMA;
    case Type::INT64:
      return Schema::OPTIONAL_INT64_SCHEMA;
    case Type::FLOAT32:
      return Schema::OPTIONAL_FLOAT32_SCHEMA;
    case Type::FLOAT64:
      return Schema::OPTIONAL_FLOAT64_SCHEMA;
    default:
      return Schema::OPTIONAL_BOOLEAN_SCHEMA;
  }
}

void appendBigEndian(uint64_t bits, size_t width, std::string& out) {
  for (size_t i = width; i-- > 0;) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

uint64_t readBigEndian(std::string_view bytes) {
  uint64_t bits = 0;
  for (char byte : bytes) bits = (bits << 8) | static_cast<unsigned char>(byte);
  return bits;
}

}  // namespace

void StringConverter::configure(const ConfigMap& configs, bool) {
  auto it = configs.find(ENCODING_CONFIG);
  std::string encoding = it == configs.end() ? "utf-8" : lowerAscii(it->second);
  if (encoding == "utf-8" || encoding == "utf8") {
    latin1_ = false;
  } else if (encoding == "iso-8859-1" || encoding == "iso8859_1" || encoding == "latin1") {
    latin1_ = true;
  } else {
    throw ConnectException("Unsupported encoding for StringConverter: " + it->second);
  }
}

bool StringConverter::write(std::string_view, const SchemaPtr&, const Value& value,
                            std::string& out) {
  if (value.isNull()) return false;
  if (value.kind() == Value::Kind::String) {
    if (latin1_)
      latin1Of(value.asString(), out);
    else
      out = value.asString();
    return true;
  }
  std::string text = value.toString();
  if (latin1_)
    latin1Of(text, out);
  else
    out = std::move(text);
  return true;
}

SchemaAndValue StringConverter::read(std::string_view, std::optional<std::string_view> value) {
  if (!value) return {Schema::OPTIONAL_STRING_SCHEMA, Value()};
  return {Schema::OPTIONAL_STRING_SCHEMA, latin1_ ? Value(utf8Of(*value)) : Value(*value)};
}

bool ByteArrayConverter::write(std::string_view, const SchemaPtr& schema, const Value& value,
                               std::string& out) {
  if (schema && schema->type() != Type::BYTES)
    throw DataException("Invalid schema type for ByteArrayConverter: " +
                        std::string(typeName(schema->type())));
  if (value.isNull()) return false;
  if (value.kind() != Value::Kind::Bytes)
    throw DataException("ByteArrayConverter is not compatible with objects of type " +
                        std::string(value.javaClass()));
  out = value.asBytes().data;
  return true;
}

SchemaAndValue ByteArrayConverter::read(std::string_view, std::optional<std::string_view> value) {
  if (!value) return {Schema::OPTIONAL_BYTES_SCHEMA, Value()};
  return {Schema::OPTIONAL_BYTES_SCHEMA, Bytes{std::string(*value)}};
}

bool NumberConverter::write(std::string_view, const SchemaPtr& schema, const Value& value,
                            std::string& out) {
  bool boolean = type_ == Type::BOOLEAN;
  if (boolean && schema && schema->type() != Type::BOOLEAN)
    throw DataException("Invalid schema type for BooleanConverter: " +
                        std::string(typeName(schema->type())));
  if (value.isNull()) return false;
  if (value.kind() != valueKindOf(type_)) {
    if (boolean)
      throw DataException("BooleanConverter is not compatible with objects of type " +
                          std::string(value.javaClass()));
    throw DataException("Failed to serialize to " + std::string(typeName_) + " (was " +
                        std::string(value.javaClass()) + "): ");
  }
  switch (type_) {
    case Type::INT16:
      appendBigEndian(static_cast<uint16_t>(value.asInt16()), 2, out);
      break;
    case Type::INT32:
      appendBigEndian(static_cast<uint32_t>(value.asInt32()), 4, out);
      break;
    case Type::INT64:
      appendBigEndian(static_cast<uint64_t>(value.asInt64()), 8, out);
      break;
    case Type::FLOAT32:
      appendBigEndian(std::bit_cast<uint32_t>(value.asFloat32()), 4, out);
      break;
    case Type::FLOAT64:
      appendBigEndian(std::bit_cast<uint64_t>(value.asFloat64()), 8, out);
      break;
    default:
      out.push_back(value.asBoolean() ? '\x01' : '\x00');
      break;
  }
  return true;
}

SchemaAndValue NumberConverter::read(std::string_view, std::optional<std::string_view> value) {
  SchemaPtr schema = optionalSchemaOf(type_);
  if (!value) return {schema, Value()};
  if (value->size() != widthOf(type_))
    throw DataException("Failed to deserialize " + std::string(typeName_) +
                        ": Size of data received by " + std::string(deserializerOf(type_)) +
                        " is not " + std::to_string(widthOf(type_)));
  uint64_t bits = readBigEndian(*value);
  switch (type_) {
    case Type::INT16:
      return {schema, static_cast<int16_t>(bits)};
    case Type::INT32:
      return {schema, static_cast<int32_t>(bits)};
    case Type::INT64:
      return {schema, static_cast<int64_t>(bits)};
    case Type::FLOAT32:
      return {schema, std::bit_cast<float>(static_cast<uint32_t>(bits))};
    case Type::FLOAT64:
      return {schema, std::bit_cast<double>(bits)};
    default:
      if (bits > 1)
        throw DataException(
            "Failed to deserialize boolean: Unexpected byte received by "
            "BooleanDeserializer: " +
            std::to_string(bits));
      return {schema, bits == 1};
  }
}

}  // namespace oxbow::connect
