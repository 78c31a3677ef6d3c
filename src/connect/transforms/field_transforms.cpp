// The transforms that reshape a key or a value: InsertField, HoistField, ExtractField and
// ValueToKey, each with Kafka's configs and messages.
#include "connect/transforms/registry.h"
#include "connect/transforms/transform_util.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"

namespace oxbow::connect::transforms {

namespace {

// InsertField's "name", "name?" (optional, the default) or "name!" (required).
struct InsertionSpec {
  std::string name;
  bool optional = true;

  static std::optional<InsertionSpec> parse(const std::optional<std::string>& spec) {
    if (!spec) return std::nullopt;
    if (!spec->empty() && (spec->back() == '?' || spec->back() == '!')) {
      return InsertionSpec{spec->substr(0, spec->size() - 1), spec->back() == '?'};
    }
    return InsertionSpec{*spec, true};
  }
};

class InsertField : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    const std::string suffixes =
        " A trailing ! makes the field required, a trailing ? (the default) optional.";
    ConfigDef definition;
    definition
        .define("topic.field", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "Field to hold the record's topic." + suffixes)
        .define("partition.field", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "Field to hold the record's partition." + suffixes)
        .define("offset.field", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "Field to hold the record's offset (sink connectors only)." + suffixes)
        .define("timestamp.field", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "Field to hold the record's timestamp." + suffixes)
        .define("static.field", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "Field to hold static.value." + suffixes)
        .define("static.value", ConfigType::STRING, nullptr, Importance::MEDIUM,
                "The value of static.field.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    topicField_ = InsertionSpec::parse(config.getOptionalString("topic.field"));
    partitionField_ = InsertionSpec::parse(config.getOptionalString("partition.field"));
    offsetField_ = InsertionSpec::parse(config.getOptionalString("offset.field"));
    timestampField_ = InsertionSpec::parse(config.getOptionalString("timestamp.field"));
    staticField_ = InsertionSpec::parse(config.getOptionalString("static.field"));
    staticValue_ = config.getOptionalString("static.value");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    if (!topicField_ && !partitionField_ && !offsetField_ && !timestampField_ && !staticField_) {
      throw ConfigException("No field insertion configured");
    }
    if (staticField_ && !staticValue_) {
      throw ConfigException("static.value", "null",
                            "No value specified for static field: " + staticField_->name);
    }
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const Value& value = valueOf(record);
    if (value.isNull()) return record;
    // Only SinkRecords have an offset, and this chain carries plain ConnectRecords.
    if (offsetField_) {
      throw DataException(
          "Only SinkRecord supported for [field insertion], found: "
          "org.apache.kafka.connect.connector.ConnectRecord");
    }
    const SchemaPtr& schema = schemaOf(record);
    if (!schema) return applySchemaless(record, value);
    return applyWithSchema(record, value);
  }

  void close() override { cache_.clear(); }

 private:
  ConnectRecord applySchemaless(const ConnectRecord& record, const Value& value) {
    ValueMap updated = requireMap(value, kPurpose);
    if (topicField_) mapPut(updated, topicField_->name, record.topic());
    if (partitionField_ && record.kafkaPartition()) {
      mapPut(updated, partitionField_->name, *record.kafkaPartition());
    }
    if (timestampField_ && record.timestamp()) {
      mapPut(updated, timestampField_->name, *record.timestamp());
    }
    if (staticField_) mapPut(updated, staticField_->name, *staticValue_);
    return replaced(record, nullptr, std::move(updated));
  }

  ConnectRecord applyWithSchema(const ConnectRecord& record, const Value& value) {
    const Struct& input = requireStruct(value, kPurpose);
    SchemaPtr schema = cache_.get(input.schema(), [&] { return updatedSchema(*input.schema()); });
    Struct updated(schema);
    for (const Field& field : input.schema()->fields()) {
      updated.put(field.name(), replaceNullWithDefault_ ? input.get(field)
                                                        : input.getWithoutDefault(field.name()));
    }
    if (topicField_) updated.put(topicField_->name, record.topic());
    if (partitionField_ && record.kafkaPartition()) {
      updated.put(partitionField_->name, *record.kafkaPartition());
    }
    if (timestampField_ && record.timestamp()) {
      updated.put(timestampField_->name, DateTime{*record.timestamp()});
    }
    if (staticField_) updated.put(staticField_->name, *staticValue_);
    return replaced(record, schema, std::move(updated));
  }

  SchemaPtr updatedSchema(const Schema& input) const {
    SchemaBuilder builder = copyStructBasics(input);
    for (const Field& field : input.fields()) builder.field(field.name(), field.schema());
    auto add = [&](const std::optional<InsertionSpec>& spec, const SchemaPtr& optional,
                   const SchemaPtr& required) {
      if (spec) builder.field(spec->name, spec->optional ? optional : required);
    };
    add(topicField_, Schema::OPTIONAL_STRING_SCHEMA, Schema::STRING_SCHEMA);
    add(partitionField_, Schema::OPTIONAL_INT32_SCHEMA, Schema::INT32_SCHEMA);
    add(timestampField_, Timestamp::builder().optional().build(), Timestamp::SCHEMA);
    add(staticField_, Schema::OPTIONAL_STRING_SCHEMA, Schema::STRING_SCHEMA);
    return builder.build();
  }

  static constexpr std::string_view kPurpose = "field insertion";
  std::optional<InsertionSpec> topicField_, partitionField_, offsetField_, timestampField_,
      staticField_;
  std::optional<std::string> staticValue_;
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

class HoistField : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    return ConfigDef().define("field", ConfigType::STRING, Importance::MEDIUM,
                              "Name of the one field of the struct or map that wraps the data.");
  }

  void configure(const TransformConfig& props) override {
    fieldName_ = AbstractConfig(config(), props).getString("field");
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const SchemaPtr& schema = schemaOf(record);
    const Value& value = valueOf(record);
    if (!schema) {
      ValueMap hoisted;
      hoisted.emplace_back(Value(fieldName_), value);
      return replaced(record, nullptr, std::move(hoisted));
    }
    SchemaPtr updated = cache_.get(
        schema, [&] { return SchemaBuilder::struct_().field(fieldName_, schema).build(); });
    Struct hoisted(updated);
    hoisted.put(fieldName_, value);
    return replaced(record, updated, std::move(hoisted));
  }

  void close() override { cache_.clear(); }

 private:
  std::string fieldName_;
  SchemaCache cache_;
};

// ExtractField reads a top-level field (Kafka's field.syntax.version V1).
class ExtractField : public OperandTransformation {
 public:
  using OperandTransformation::OperandTransformation;

  ConfigDef config() const override {
    ConfigDef definition;
    definition.define("field", ConfigType::STRING, Importance::MEDIUM,
                      "Name of the field to extract.");
    defineReplaceNullWithDefault(definition);
    // Kafka's V2 (nested paths) is declared, as Kafka declares it, and refused by configure().
    return definition.define("field.syntax.version", ConfigType::STRING, "V1",
                             CaseInsensitiveValidString::in({"V1", "V2"}), Importance::HIGH,
                             "How field names are read: V1 takes each as a top-level field name.");
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    fieldName_ = config.getString("field");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    std::string syntax = config.getString("field.syntax.version");
    if (syntax != "V1" && syntax != "v1") {
      throw ConfigException("field.syntax.version", syntax,
                            "only V1 (top-level field names) is supported");
    }
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    const SchemaPtr& schema = schemaOf(record);
    const Value& value = valueOf(record);
    if (!schema) {
      if (value.isNull()) return replaced(record, nullptr, Value());
      requireMap(value, kPurpose);
      const Value* extracted = value.mapGet(Value(fieldName_));
      return replaced(record, nullptr, extracted ? *extracted : Value());
    }
    if (!value.isNull()) requireStruct(value, kPurpose);
    const Field* field = schema->type() == Type::STRUCT ? schema->field(fieldName_) : nullptr;
    if (!field) throw std::invalid_argument("Unknown field: " + fieldName_);
    if (value.isNull()) return replaced(record, field->schema(), Value());
    const Struct& input = value.asStruct();
    return replaced(
        record, field->schema(),
        replaceNullWithDefault_ ? input.get(*field) : input.getWithoutDefault(fieldName_));
  }

 private:
  static constexpr std::string_view kPurpose = "field extraction";
  std::string fieldName_;
  bool replaceNullWithDefault_ = true;
};

class ValueToKey : public Transformation {
 public:
  ConfigDef config() const override {
    ConfigDef definition;
    definition.define("fields", ConfigType::LIST, DefaultValue(), NonEmptyListValidator::create(),
                      Importance::HIGH, "Fields of the value that make up the new key.");
    return defineReplaceNullWithDefault(definition);
  }

  void configure(const TransformConfig& props) override {
    AbstractConfig config(this->config(), props);
    fields_ = config.getList("fields");
    replaceNullWithDefault_ = config.getBoolean("replace.null.with.default");
    cache_.clear();
  }

  std::optional<ConnectRecord> apply(const ConnectRecord& record) override {
    if (!record.valueSchema()) {
      requireMap(record.value(), kPurpose);
      ValueMap key;
      for (const std::string& field : fields_) {
        const Value* found = record.value().mapGet(Value(field));
        key.emplace_back(Value(field), found ? *found : Value());
      }
      return rebuild(record, record.topic(), nullptr, std::move(key), record.valueSchema(),
                     record.value(), record.headers());
    }
    const Struct& value = requireStruct(record.value(), kPurpose);
    SchemaPtr keySchema = cache_.get(value.schema(), [&] {
      SchemaBuilder builder = SchemaBuilder::struct_();
      for (const std::string& field : fields_) {
        const Field* found = value.schema()->field(field);
        if (!found) throw DataException("Field does not exist: " + field);
        builder.field(field, found->schema());
      }
      return builder.build();
    });
    Struct key(keySchema);
    for (const std::string& field : fields_) {
      key.put(field, replaceNullWithDefault_ ? value.get(field) : value.getWithoutDefault(field));
    }
    return rebuild(record, record.topic(), keySchema, std::move(key), record.valueSchema(),
                   record.value(), record.headers());
  }

  void close() override { cache_.clear(); }

 private:
  static constexpr std::string_view kPurpose = "copying fields from value to key";
  std::vector<std::string> fields_;
  bool replaceNullWithDefault_ = true;
  SchemaCache cache_;
};

}  // namespace

void registerFieldTransforms(TransformationTable& table) {
  registerKeyAndValue<InsertField>(table, "InsertField");
  registerKeyAndValue<HoistField>(table, "HoistField");
  registerKeyAndValue<ExtractField>(table, "ExtractField");
  table.emplace("ValueToKey", [] { return std::make_unique<ValueToKey>(); });
}

}  // namespace oxbow::connect::transforms
