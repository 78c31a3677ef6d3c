// Cast: fields of a struct or a map, or a whole key or value, cast to another primitive type, with
// Java's conversions (narrowing wraps, floats saturate, strings are parsed) and Kafka's messages.
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "connect/transforms/date_format.h"
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"

namespace oxbow::connect::transforms {

namespace {

constexpr std::string_view kSupportedInputs =
    "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]";
constexpr std::string_view kSupportedOutputs =
    "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]";

bool isSupportedOutput(Type type) {
  return isPrimitive(type) && type != Type::BYTES;
}

std::optional<Type> typeNamed(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (Type type :
       {Type::INT8, Type::INT16, Type::INT32, Type::INT64, Type::FLOAT32, Type::FLOAT64,
        Type::BOOLEAN, Type::STRING, Type::BYTES, Type::ARRAY, Type::MAP, Type::STRUCT}) {
    if (typeName(type) == text) return type;
  }
  return std::nullopt;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return std::string(text);
}

// Java's String.split(":"): trailing empty parts dropped.
std::vector<std::string> splitColons(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  while (parts.size() > 1 && parts.back().empty()) parts.pop_back();
  return parts;
}

// Thrown where Java throws NumberFormatException, turned into Kafka's DataException by castTo.
struct NumberFormatError {};

// A Java number held as what its narrowing conversions need.
struct JavaNumber {
  bool integral = true;
  int64_t integer = 0;
  double real = 0;

  int64_t longValue() const {
    if (integral) return integer;
    if (std::isnan(real)) return 0;
    if (real >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
    if (real <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(real);
  }
  int32_t intValue() const {
    if (integral) return static_cast<int32_t>(integer);
    if (std::isnan(real)) return 0;
    if (real >= 2147483647.0) return std::numeric_limits<int32_t>::max();
    if (real <= -2147483648.0) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(real);
  }
  double doubleValue() const { return integral ? static_cast<double>(integer) : real; }
};

std::optional<JavaNumber> numberOf(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Int8:
      return JavaNumber{true, value.asInt8(), 0};
    case Value::Kind::Int16:
      return JavaNumber{true, value.asInt16(), 0};
    case Value::Kind::Int32:
      return JavaNumber{true, value.asInt32(), 0};
    case Value::Kind::Int64:
      return JavaNumber{true, value.asInt64(), 0};
    case Value::Kind::Float32:
      return JavaNumber{false, 0, value.asFloat32()};
    case Value::Kind::Float64:
      return JavaNumber{false, 0, value.asFloat64()};
    case Value::Kind::Decimal: {
      const DecimalValue& decimal = value.asDecimal();
      double real = std::strtod(decimal.toString().c_str(), nullptr);
      // BigDecimal's integer conversions truncate toward zero; past int64 they are refused here.
      std::string digits = decimal.unscaledDigits();
      int32_t scale = decimal.scale();
      if (scale > 0) {
        bool negative = !digits.empty() && digits[0] == '-';
        std::string magnitude = negative ? digits.substr(1) : digits;
        magnitude = magnitude.size() > static_cast<size_t>(scale)
                        ? magnitude.substr(0, magnitude.size() - scale)
                        : "0";
        digits = (negative ? "-" : "") + magnitude;
      } else {
        digits.append(static_cast<size_t>(-scale), '0');
      }
      int64_t integer = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), integer);
      if (error != std::errc() || end != digits.data() + digits.size()) {
        throw DataException("Value (" + decimal.toString() +
                            ") was out of range for requested data type");
      }
      return JavaNumber{false, integer, real};
    }
    default:
      return std::nullopt;
  }
}

template <class T>
T parseJavaInteger(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
  T number{};
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    throw NumberFormatError{};
  }
  return number;
}

double parseJavaDouble(const std::string& text) {
  std::string body = trimmed(text);
  if (!body.empty() &&
      (body.back() == 'f' || body.back() == 'F' || body.back() == 'd' || body.back() == 'D')) {
    body.pop_back();
  }
  if (body.empty()) throw NumberFormatError{};
  char* end = nullptr;
  double number = std::strtod(body.c_str(), &end);
  if (end != body.c_str() + body.size()) throw NumberFormatError{};
  return number;
}

// Values.dateFormatFor: a time of the epoch's first day as a time, a midnight as a date, anything
// else as an ISO-8601 timestamp, in UTC.
std::string dateText(int64_t epochMillis) {
  constexpr int64_t kMillisPerDay = 86400000;
  static const UtcDateFormat time("HH:mm:ss.SSS'Z'");
  static const UtcDateFormat date("yyyy-MM-dd");
  static const UtcDateFormat timestamp("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'");
  if (epochMillis >= 0 && epochMillis < kMillisPerDay) return time.format(epochMillis);
  if (epochMillis % kMillisPerDay == 0) return date.format(epochMillis);
  return timestamp.format(epochMillis);
}

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[chunk >> 18 & 63];
    out += kAlphabet[chunk >> 12 & 63];
    out += i + 1 < bytes.size() ? kAlphabet[chunk >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

// The Java class Kafka's "Unexpected type" message names.
std::string javaClassName(const Value& value) {
  if (value.kind() == Value::Kind::Bytes) return "class [B";
  return std::string(value.javaClass());
}

Value castTo(const SchemaPtr& schema, Value value, Type target) {
  if (value.isNull()) return Value();
  Type from;
  if (schema) {
    from = schema->type();
  } else {
    switch (value.kind()) {
      case Value::Kind::Decimal:
      case Value::Kind::DateTime:
        throw DataException("Cast transformation was passed a value of type " +
                            std::string(value.javaClass()) +
                            " which is not supported by Connect's data API");
      case Value::Kind::Array:
        from = Type::ARRAY;
        break;
      case Value::Kind::Map:
        from = Type::MAP;
        break;
      case Value::Kind::Struct:
        from = Type::STRUCT;
        break;
      default:
        from = Type::INT8;  // a primitive: supported
    }
  }
  if (!isPrimitive(from)) {
    throw DataException("Cast transformation does not support casting from " +
                        std::string(typeName(from)) + "; supported types are " +
                        std::string(kSupportedInputs));
  }
  // Date, Time and Timestamp cast as their encoded numbers, except to a string.
  if (schema && schema->name() && target != Type::STRING && value.kind() == Value::Kind::DateTime) {
    const std::string& name = *schema->name();
    if (name == Date::LOGICAL_NAME) value = Date::fromLogical(schema, value.asDateTime());
    if (name == Time::LOGICAL_NAME) value = Time::fromLogical(schema, value.asDateTime());
    if (name == Timestamp::LOGICAL_NAME) value = Timestamp::fromLogical(schema, value.asDateTime());
  }
  if (target == Type::STRING) {
    if (value.kind() == Value::Kind::DateTime) return dateText(value.asDateTime().epochMillis);
    if (value.kind() == Value::Kind::Bytes) return base64(value.asBytes().data);
    if (value.kind() == Value::Kind::String) return value;
    return value.toString();
  }
  try {
    std::optional<JavaNumber> number = numberOf(value);
    if (!number && value.kind() == Value::Kind::Boolean) {
      number = JavaNumber{true, value.asBoolean() ? 1 : 0, 0};
    }
    if (number) {
      switch (target) {
        case Type::INT8:
          return static_cast<int8_t>(number->intValue());
        case Type::INT16:
          return static_cast<int16_t>(number->intValue());
        case Type::INT32:
          return number->intValue();
        case Type::INT64:
          return number->longValue();
        case Type::FLOAT32:
          return static_cast<float>(number->doubleValue());
        case Type::FLOAT64:
          return number->doubleValue();
        default:
          return number->longValue() != 0;
      }
    }
    if (value.kind() == Value::Kind::String) {
      const std::string& text = value.asString();
      switch (target) {
        case Type::INT8:
          return parseJavaInteger<int8_t>(text);
        case Type::INT16:
          return parseJavaInteger<int16_t>(text);
        case Type::INT32:
          return parseJavaInteger<int32_t>(text);
        case Type::INT64:
          return parseJavaInteger<int64_t>(text);
        case Type::FLOAT32:
          return static_cast<float>(parseJavaDouble(text));
        case Type::FLOAT64:
          return parseJavaDouble(text);
        default: {
          std::string lower = text;
          for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          return lower == "true";
        }
      }
    }
  } catch (const NumberFormatError&) {
    throw DataException("Value (" + value.toString() +
                        ") was out of range for requested data type");
  }
  throw DataException("Unexpected type in Cast transformation: " + javaClassName(value));
}

struct CastSpec {
  std::map<std::string, Type> fields;
  std::optional<Type> wholeValue;
};

// The casts a spec names: per field, or one type for the whole key or value; ConfigException with
// Kafka's messages for a spec that is empty or names a type it cannot cast to.
CastSpec parseSpec(const std::vector<std::string>& spec) {
  if (spec.empty()) throw ConfigException("Must specify at least one field to cast.");
  CastSpec parsed;
  for (const std::string& mapping : spec) {
    std::vector<std::string> parts = splitColons(mapping);
    if (parts.size() > 2) {
      throw ConfigException("renames", toJavaString(spec), "Invalid rename mapping: " + mapping);
    }
    std::string typeText = trimmed(parts.back());
    std::optional<Type> type = typeNamed(typeText);
    if (!type) throw ConfigException("Invalid type found in casting spec: " + typeText);
    if (!isSupportedOutput(*type)) {
      throw ConfigException("Cast transformation does not support casting to " +
                            std::string(typeName(*type)) + "; supported types are " +
                            std::string(kSupportedOutputs));
    }
    if (parts.size() == 1) {
      parsed.wholeValue = *type;
    } else {
      parsed.fields[trimmed(parts[0])] = *type;
    }
  }
  if (parsed.wholeValue && spec.size() > 1) {
    throw ConfigException(
        "Cast transformations that specify a type to cast the entire value to may only specify "
        "a single cast in their spec");
  }
  return parsed;
}

class Cast : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition.define(
        "spec", ConfigType::LIST, DefaultValue(),
        LambdaValidator::with(
            [](const std::string&, const ParsedValue& value) {
              parseSpec(std::get<std::vector<std::string>>(value));
            },
            [] {
              return std::string(
                  "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>");
            }),
        Importance::HIGH,
        "The casts, as field:type pairs for the fields of a struct or map, or one type for the "
        "whole key or value. Types: int8, int16, int32, int64, float32, float64, boolean, string "
        "(the only one bytes cast to).");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    spec_ = parseSpec(config.getList("spec"));
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const Value& value = valueOf(record);
    if (value.isNull()) return record;
    const SchemaPtr& schema = schemaOf(record);
    if (!schema) {
      if (spec_.wholeValue)
        return replaced(record, nullptr, castTo(nullptr, value, *spec_.wholeValue));
      ValueMap updated = requireMap(value, kPurpose);
      for (const auto& [field, type] : spec_.fields) {
        const Value* original = value.mapGet(Value(field));
        mapPut(updated, field, castTo(nullptr, original ? *original : Value(), type));
      }
      return replaced(record, nullptr, std::move(updated));
    }
    SchemaPtr updatedSchema = cache_.get(schema, [&] { return castSchema(*schema, schema); });
    if (spec_.wholeValue)
      return replaced(record, updatedSchema, castTo(schema, value, *spec_.wholeValue));
    const Struct& input = requireStruct(value, kPurpose);
    Struct updated(updatedSchema);
    for (const Field& field : schema->fields()) {
      const Value& original =
          replaceNullWithDefault_ ? input.get(field) : input.getWithoutDefault(field.name());
      auto cast = spec_.fields.find(field.name());
      updated.put(field.name(), cast == spec_.fields.end()
                                    ? original
                                    : castTo(field.schema(), original, cast->second));
    }
    return replaced(record, updatedSchema, std::move(updated));
  }

  void close() override { cache_.clear(); }

 private:
  SchemaPtr castSchema(const Schema& schema, const SchemaPtr& schemaPtr) const {
    SchemaBuilder builder =
        copySchemaBasics(schema, SchemaBuilder(spec_.wholeValue.value_or(Type::STRUCT)));
    if (!spec_.wholeValue) {
      for (const Field& field : schema.fields()) {
        auto cast = spec_.fields.find(field.name());
        if (cast == spec_.fields.end()) {
          builder.field(field.name(), field.schema());
          continue;
        }
        SchemaBuilder fieldBuilder(cast->second);
        if (field.schema()->isOptional()) fieldBuilder.optional();
        if (!field.schema()->defaultValue().isNull()) {
          fieldBuilder.defaultValue(
              castTo(field.schema(), field.schema()->defaultValue(), cast->second));
        }
        builder.field(field.name(), fieldBuilder.build());
      }
    }
    if (schema.isOptional()) builder.optional();
    if (!schema.defaultValue().isNull()) {
      builder.defaultValue(castTo(schemaPtr, schema.defaultValue(), builder.type()));
    }
    return builder.build();
  }

  static constexpr std::string_view kPurpose = "cast types";
  CastSpec spec_;
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

}  // namespace

void registerCast(TransformationTable& table) {
  registerKeyAndValue<Cast>(table, "Cast");
}

}  // namespace oxbow::connect::transforms
