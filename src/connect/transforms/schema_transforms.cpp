// The transforms that rewrite a struct's or a map's fields, or a schema's name and version:
// ReplaceField, MaskField and SetSchemaMetadata, with Kafka's configs and messages.
#include <charconv>
#include <limits>
#include <map>
#include <set>

#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::transforms {

namespace {

// The field's value with or without its default, per replace.null.with.default.
const Value& fieldValue(const Struct& value, const Field& field, bool replaceNullWithDefault) {
  return replaceNullWithDefault ? value.get(field) : value.getWithoutDefault(field.name());
}

class ReplaceField : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition
        .define("exclude", ConfigType::LIST, std::vector<std::string>{}, Importance::MEDIUM,
                "Fields to drop; it wins over include.")
        .define("include", ConfigType::LIST, std::vector<std::string>{}, Importance::MEDIUM,
                "Fields to keep; when set, every other field is dropped.")
        .define("renames", ConfigType::LIST, std::vector<std::string>{}, Importance::MEDIUM,
                "Fields to rename, as old:new pairs.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    const std::vector<std::string>& exclude = config.getList("exclude");
    const std::vector<std::string>& include = config.getList("include");
    exclude_ = std::set<std::string, std::less<>>(exclude.begin(), exclude.end());
    include_ = std::set<std::string, std::less<>>(include.begin(), include.end());
    renames_.clear();
    reverseRenames_.clear();
    const std::vector<std::string>& mappings = config.getList("renames");
    for (const std::string& mapping : mappings) {
      // As Java's split(":"): trailing empty parts are dropped, so "a:" is one part.
      size_t colon = mapping.find(':');
      if (colon == std::string::npos || colon + 1 == mapping.size() ||
          mapping.find(':', colon + 1) != std::string::npos) {
        throw ConfigException("renames", toJavaString(mappings),
                              "Invalid rename mapping: " + mapping);
      }
      renames_[mapping.substr(0, colon)] = mapping.substr(colon + 1);
    }
    for (const auto& [from, to] : renames_) reverseRenames_[to] = from;
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const Value& value = valueOf(record);
    if (value.isNull()) return record;
    if (!schemaOf(record)) {
      ValueMap updated;
      for (const auto& [key, fieldValue] : requireMap(value, kPurpose)) {
        if (key.kind() != Value::Kind::String || !keep(key.asString())) continue;
        updated.emplace_back(Value(renamed(key.asString())), fieldValue);
      }
      return replaced(record, nullptr, std::move(updated));
    }
    const Struct& input = requireStruct(value, kPurpose);
    SchemaPtr schema = cache_.get(input.schema(), [&] {
      SchemaBuilder builder = copyStructBasics(*input.schema());
      for (const Field& field : input.schema()->fields()) {
        if (keep(field.name())) builder.field(renamed(field.name()), field.schema());
      }
      return builder.build();
    });
    Struct updated(schema);
    for (const Field& field : schema->fields()) {
      const Field* original = input.schema()->field(originalName(field.name()));
      updated.put(field, fieldValue(input, *original, replaceNullWithDefault_));
    }
    return replaced(record, schema, std::move(updated));
  }

  void close() override { cache_.clear(); }

 private:
  bool keep(const std::string& name) const {
    return !exclude_.contains(name) && (include_.empty() || include_.contains(name));
  }
  static const std::string& lookup(const std::map<std::string, std::string>& names,
                                   const std::string& name) {
    auto found = names.find(name);
    return found == names.end() ? name : found->second;
  }
  const std::string& renamed(const std::string& name) const { return lookup(renames_, name); }
  const std::string& originalName(const std::string& name) const {
    return lookup(reverseRenames_, name);
  }

  static constexpr std::string_view kPurpose = "field replacement";
  std::set<std::string, std::less<>> exclude_, include_;
  std::map<std::string, std::string> renames_, reverseRenames_;
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

// An integer of type T read from the whole text, as Java's Integer.parseInt and friends.
template <class T>
std::optional<T> parseWhole(const std::string& text) {
  T number{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return number;
}

class MaskField : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition
        .define("fields", ConfigType::LIST, DefaultValue(), NonEmptyListValidator::create(),
                Importance::HIGH, "Fields to mask.")
        .define("replacement", ConfigType::STRING, nullptr, NonEmptyString::create(),
                Importance::LOW,
                "Value every masked field takes, read as the field's type (numbers and non-empty "
                "strings only); unset, the type's empty value.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    const std::vector<std::string>& fields = config.getList("fields");
    fields_ = std::set<std::string, std::less<>>(fields.begin(), fields.end());
    replacement_ = config.getOptionalString("replacement");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    if (!schemaOf(record)) {
      const ValueMap& value = requireMap(valueOf(record), kPurpose);
      ValueMap updated = value;
      for (const std::string& field : fields_) {
        const Value* original = valueOf(record).mapGet(Value(field));
        mapPut(updated, field, masked(original ? *original : Value()));
      }
      return replaced(record, nullptr, std::move(updated));
    }
    const Struct& value = requireStruct(valueOf(record), kPurpose);
    Struct updated(value.schema());
    for (const Field& field : value.schema()->fields()) {
      const Value& original = fieldValue(value, field, replaceNullWithDefault_);
      updated.put(field, fields_.contains(field.name()) ? masked(original) : original);
    }
    return replaced(record, value.schema(), std::move(updated));
  }

 private:
  Value masked(const Value& value) const {
    if (value.isNull()) return Value();
    return replacement_ ? maskWithReplacement(value, *replacement_) : maskWithEmpty(value);
  }

  static Value maskWithEmpty(const Value& value) {
    switch (value.kind()) {
      case Value::Kind::Boolean:
        return false;
      case Value::Kind::Int8:
        return int8_t{0};
      case Value::Kind::Int16:
        return int16_t{0};
      case Value::Kind::Int32:
        return int32_t{0};
      case Value::Kind::Int64:
        return int64_t{0};
      case Value::Kind::Float32:
        return 0.0f;
      case Value::Kind::Float64:
        return 0.0;
      case Value::Kind::Decimal:
        return DecimalValue(0, 0);
      case Value::Kind::DateTime:
        return DateTime{0};
      case Value::Kind::String:
        return std::string();
      case Value::Kind::Array:
        return ValueList();
      case Value::Kind::Map:
        return ValueMap();
      default:
        throw DataException("Cannot mask value of type: " + javaClassOf(value));
    }
  }

  static Value maskWithReplacement(const Value& value, const std::string& replacement) {
    auto number = [&]<class T>(std::optional<T> parsed) -> Value {
      if (!parsed) {
        throw DataException("Unable to convert " + replacement +
                            " (class java.lang.String) to number");
      }
      return *parsed;
    };
    switch (value.kind()) {
      case Value::Kind::Int8:
        return number(parseWhole<int8_t>(replacement));
      case Value::Kind::Int16:
        return number(parseWhole<int16_t>(replacement));
      case Value::Kind::Int32:
        return number(parseWhole<int32_t>(replacement));
      case Value::Kind::Int64:
        return number(parseWhole<int64_t>(replacement));
      case Value::Kind::Float32:
        return number(parseWhole<float>(replacement));
      case Value::Kind::Float64:
        return number(parseWhole<double>(replacement));
      case Value::Kind::Decimal:
        return DecimalValue::parse(replacement);
      case Value::Kind::String:
        return replacement;
      default:
        throw DataException("Cannot mask value of type " + javaClassOf(value) +
                            " with custom replacement.");
    }
  }

  // Java's Class.toString of the value's class: "class java.lang.Boolean", "class [B" for bytes.
  static std::string javaClassOf(const Value& value) {
    if (value.kind() == Value::Kind::Bytes) return "class [B";
    if (value.kind() == Value::Kind::Struct) return "class org.apache.kafka.connect.data.Struct";
    return std::string(value.javaClass());
  }

  static constexpr std::string_view kPurpose = "mask fields";
  std::set<std::string, std::less<>> fields_;
  std::optional<std::string> replacement_;
  bool replaceNullWithDefault_ = true;
};

class SetSchemaMetadata : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition
        .define("schema.name", ConfigType::STRING, nullptr, Importance::HIGH,
                "Name the schema is given.")
        .define("schema.version", ConfigType::INT, nullptr, Importance::HIGH,
                "Version the schema is given.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    schemaName_ = config.getOptionalString("schema.name");
    schemaVersion_.reset();
    if (!config.isNull("schema.version")) schemaVersion_ = config.getInt("schema.version");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    if (!schemaName_ && !schemaVersion_) {
      throw ConfigException("Neither schema name nor version configured");
    }
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const SchemaPtr& schema = schemaOf(record);
    const Value& value = valueOf(record);
    if (!schema && value.isNull()) return record;
    requireSchema(schema, "updating schema metadata");
    bool isMap = schema->type() == Type::MAP;
    bool hasValueSchema = isMap || schema->type() == Type::ARRAY;
    std::vector<Field> fields =
        schema->type() == Type::STRUCT ? schema->fields() : std::vector<Field>();
    auto updated = std::make_shared<const Schema>(
        schema->type(), schema->isOptional(), schema->defaultValue(),
        schemaName_ ? schemaName_ : schema->name(),
        schemaVersion_ ? schemaVersion_ : schema->version(), schema->doc(), schema->parameters(),
        std::move(fields), isMap ? schema->keySchema() : nullptr,
        hasValueSchema ? schema->valueSchema() : nullptr);
    if (value.kind() != Value::Kind::Struct) return replaced(record, updated, value);
    // A struct is tied to its schema: copy it into one of the new schema.
    Struct restated(updated);
    for (const Field& field : updated->fields()) {
      restated.put(field, fieldValue(value.asStruct(), field, replaceNullWithDefault_));
    }
    return replaced(record, updated, std::move(restated));
  }

 private:
  std::optional<std::string> schemaName_;
  std::optional<int32_t> schemaVersion_;
  bool replaceNullWithDefault_ = true;
};

}  // namespace

void registerSchemaTransforms(TransformationTable& table) {
  registerKeyAndValue<ReplaceField>(table, "ReplaceField");
  registerKeyAndValue<MaskField>(table, "MaskField");
  registerKeyAndValue<SetSchemaMetadata>(table, "SetSchemaMetadata");
}

}  // namespace oxbow::connect::transforms
