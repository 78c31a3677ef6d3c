// TimestampConverter: a timestamp (a whole key or value, or one field) converted between Unix
// numbers, formatted strings and Connect's Date, Time and Timestamp, with Kafka's configs and
// messages.
#include <limits>

#include "connect/transforms/date_format.h"
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"

namespace oxbow::connect::transforms {

namespace {

enum class TimestampKind { String, Unix, Date, Time, Timestamp };

constexpr int64_t kMillisPerDay = 86400000;

std::optional<TimestampKind> kindNamed(const std::string& name) {
  if (name == "string") return TimestampKind::String;
  if (name == "unix") return TimestampKind::Unix;
  if (name == "Date") return TimestampKind::Date;
  if (name == "Time") return TimestampKind::Time;
  if (name == "Timestamp") return TimestampKind::Timestamp;
  return std::nullopt;
}

// Java's TimeUnit conversions: divisions truncate, multiplications saturate.
int64_t scaleUp(int64_t value, int64_t factor) {
  if (value > std::numeric_limits<int64_t>::max() / factor) {
    return std::numeric_limits<int64_t>::max();
  }
  if (value < std::numeric_limits<int64_t>::min() / factor) {
    return std::numeric_limits<int64_t>::min();
  }
  return value * factor;
}

int64_t floorMod(int64_t value, int64_t divisor) {
  int64_t rest = value % divisor;
  return rest < 0 ? rest + divisor : rest;
}

class TimestampConverter : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition
        .define("field", ConfigType::STRING, "", Importance::HIGH,
                "Field holding the timestamp; empty when the whole key or value is one.")
        .define("target.type", ConfigType::STRING, DefaultValue(),
                ValidString::in({"string", "unix", "Date", "Time", "Timestamp"}), Importance::HIGH,
                "What the timestamp becomes: string, unix, Date, Time or Timestamp.")
        .define("format", ConfigType::STRING, "", Importance::MEDIUM,
                "SimpleDateFormat pattern for string timestamps, written or read.")
        .define("unix.precision", ConfigType::STRING, "milliseconds",
                ValidString::in({"nanoseconds", "microseconds", "milliseconds", "seconds"}),
                Importance::LOW,
                "Unit of unix timestamps, written or read: seconds, milliseconds, microseconds or "
                "nanoseconds (finer than milliseconds is lost on the way through).");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    field_ = config.getString("field");
    target_ = *kindNamed(config.getString("target.type"));
    std::string pattern = config.getString("format");
    precision_ = config.getString("unix.precision");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    if (target_ == TimestampKind::String && pattern.empty()) {
      throw ConfigException(
          "TimestampConverter requires format option to be specified when using string "
          "timestamps");
    }
    format_.reset();
    if (!pattern.empty()) {
      try {
        format_.emplace(pattern);
      } catch (const std::invalid_argument&) {
        throw ConfigException(
            "TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
            "timestamps: " +
            pattern);
      }
    }
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const SchemaPtr& schema = schemaOf(record);
    const Value& value = valueOf(record);
    if (!schema) {
      if (value.isNull() || field_.empty()) {
        return replaced(record, nullptr, convert(value, std::nullopt));
      }
      ValueMap updated = requireMap(value, kPurpose);
      const Value* original = value.mapGet(Value(field_));
      mapPut(updated, field_, convert(original ? *original : Value(), std::nullopt));
      return replaced(record, nullptr, std::move(updated));
    }
    if (field_.empty()) {
      return replaced(record, targetSchema(schema->isOptional()),
                      convert(value, kindOfSchema(*schema)));
    }
    if (!value.isNull()) requireStruct(value, kPurpose);
    SchemaPtr updatedSchema = cache_.get(schema, [&] {
      SchemaBuilder builder = copyStructBasics(*schema);
      for (const Field& field : schema->fields()) {
        builder.field(field.name(), field.name() == field_
                                        ? targetSchema(field.schema()->isOptional())
                                        : field.schema());
      }
      if (schema->isOptional()) builder.optional();
      if (!schema->defaultValue().isNull()) {
        builder.defaultValue(convertStruct(schema->defaultValue().asStruct(), builder.build()));
      }
      return builder.build();
    });
    if (value.isNull()) return replaced(record, updatedSchema, Value());
    return replaced(record, updatedSchema, convertStruct(value.asStruct(), updatedSchema));
  }

  void close() override { cache_.clear(); }

 private:
  Struct convertStruct(const Struct& value, const SchemaPtr& updatedSchema) const {
    Struct updated(updatedSchema);
    for (const Field& field : value.schema()->fields()) {
      const Value& original =
          replaceNullWithDefault_ ? value.get(field) : value.getWithoutDefault(field.name());
      updated.put(field.name(), field.name() == field_
                                    ? convert(original, kindOfSchema(*field.schema()))
                                    : original);
    }
    return updated;
  }

  SchemaPtr targetSchema(bool optional) const {
    switch (target_) {
      case TimestampKind::String:
        return optional ? Schema::OPTIONAL_STRING_SCHEMA : Schema::STRING_SCHEMA;
      case TimestampKind::Unix:
        return optional ? Schema::OPTIONAL_INT64_SCHEMA : Schema::INT64_SCHEMA;
      case TimestampKind::Date:
        return optional ? Date::builder().optional().build() : Date::SCHEMA;
      case TimestampKind::Time:
        return optional ? Time::builder().optional().build() : Time::SCHEMA;
      default:
        return optional ? Timestamp::builder().optional().build() : Timestamp::SCHEMA;
    }
  }

  static TimestampKind kindOfSchema(const Schema& schema) {
    if (schema.name() == std::optional<std::string>(Timestamp::LOGICAL_NAME)) {
      return TimestampKind::Timestamp;
    }
    if (schema.name() == std::optional<std::string>(Date::LOGICAL_NAME)) return TimestampKind::Date;
    if (schema.name() == std::optional<std::string>(Time::LOGICAL_NAME)) return TimestampKind::Time;
    if (schema.type() == Type::STRING) return TimestampKind::String;
    if (schema.type() == Type::INT64) return TimestampKind::Unix;
    throw ConnectException("Schema " + schema.toString() +
                           " does not correspond to a known timestamp type format");
  }

  // The timestamp in milliseconds, read as `source` (inferred from the value when absent).
  int64_t toMillis(const Value& value, std::optional<TimestampKind> source) const {
    if (!source) {
      switch (value.kind()) {
        case Value::Kind::DateTime:
          source = TimestampKind::Timestamp;
          break;
        case Value::Kind::Int64:
          source = TimestampKind::Unix;
          break;
        case Value::Kind::String:
          source = TimestampKind::String;
          break;
        default:
          throw DataException("TimestampConverter does not support " +
                              std::string(value.javaClass()) + " objects as timestamps");
      }
    }
    switch (*source) {
      case TimestampKind::String: {
        if (value.kind() != Value::Kind::String) {
          throw DataException("Expected string timestamp to be a String, but found " +
                              std::string(value.javaClass()));
        }
        std::optional<int64_t> parsed = format_ ? format_->parse(value.asString()) : std::nullopt;
        if (!parsed) {
          throw DataException("Could not parse timestamp: value (" + value.asString() +
                              ") does not match pattern (" +
                              (format_ ? format_->pattern() : std::string("null")) + ")");
        }
        return *parsed;
      }
      case TimestampKind::Unix: {
        if (value.kind() != Value::Kind::Int64) {
          throw DataException("Expected Unix timestamp to be a Long, but found " +
                              std::string(value.javaClass()));
        }
        int64_t unix = value.asInt64();
        if (precision_ == "seconds") return scaleUp(unix, 1000);
        if (precision_ == "microseconds") return unix / 1000;
        if (precision_ == "nanoseconds") return unix / 1000000;
        return unix;
      }
      default: {
        if (value.kind() != Value::Kind::DateTime) {
          std::string_view name = *source == TimestampKind::Date   ? "Date"
                                  : *source == TimestampKind::Time ? "Time"
                                                                   : "Timestamp";
          throw DataException("Expected " + std::string(name) +
                              " to be a java.util.Date, but found " +
                              std::string(value.javaClass()));
        }
        return value.asDateTime().epochMillis;
      }
    }
  }

  Value convert(const Value& value, std::optional<TimestampKind> source) const {
    if (value.isNull()) return Value();
    int64_t millis = toMillis(value, source);
    switch (target_) {
      case TimestampKind::String:
        return format_->format(millis);
      case TimestampKind::Unix:
        if (precision_ == "seconds") return millis / 1000;
        if (precision_ == "microseconds") return scaleUp(millis, 1000);
        if (precision_ == "nanoseconds") return scaleUp(millis, 1000000);
        return millis;
      case TimestampKind::Date:
        return DateTime{millis - floorMod(millis, kMillisPerDay)};
      case TimestampKind::Time:
        return DateTime{floorMod(millis, kMillisPerDay)};
      default:
        return DateTime{millis};
    }
  }

  static constexpr std::string_view kPurpose = "converting timestamp formats";
  std::string field_;
  TimestampKind target_ = TimestampKind::Timestamp;
  std::optional<UtcDateFormat> format_;
  std::string precision_ = "milliseconds";
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

}  // namespace

void registerTimestampConverter(TransformationTable& table) {
  registerKeyAndValue<TimestampConverter>(table, "TimestampConverter");
}

}  // namespace oxbow::connect::transforms
