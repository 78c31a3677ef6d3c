#include "sql/binder/ddl_binder.h"

#include <algorithm>
#include <set>

#include "sql/binder/sql_error.h"
#include "sql/binder/with_properties.h"

namespace oxbow::sql {

namespace {

using parser::ColumnConstraint;

bool contains_map(const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kMap:
      return true;
    case SqlBaseType::kArray:
      return contains_map(*type.element());
    case SqlBaseType::kStruct:
      for (const auto& f : type.fields())
        if (contains_map(*f.type)) return true;
      return false;
    default:
      return false;
  }
}

const SqlTypePtr& headers_type() {
  static const SqlTypePtr type =
      SqlType::array(SqlType::structure({{"KEY", SqlType::string()}, {"VALUE", SqlType::bytes()}}));
  return type;
}

Column bind_column(const parser::ColumnDef& def, bool table, const Catalog& catalog) {
  Column column;
  column.name = def.name.text;
  if (is_system_column_name(column.name))
    throw SqlError(def.name.position, "'" + column.name +
                                          "' is a reserved column name. You cannot use it as a "
                                          "name for a column.");
  column.type = bind_type(def.type, catalog);
  switch (def.constraint) {
    case ColumnConstraint::kKey:
      if (table)
        throw SqlError(def.name.position, "Column `" + column.name +
                                              "` is a 'KEY' column: please use 'PRIMARY KEY' for "
                                              "tables.");
      column.ns = ColumnNamespace::kKey;
      break;
    case ColumnConstraint::kPrimaryKey:
      if (!table)
        throw SqlError(def.name.position, "Column `" + column.name +
                                              "` is a 'PRIMARY KEY' column: please use 'KEY' for "
                                              "streams.");
      column.ns = ColumnNamespace::kKey;
      break;
    case ColumnConstraint::kHeaders:
      if (!column.type->equals(*headers_type()))
        throw SqlError(def.name.position, "Invalid type for HEADERS column: expected " +
                                              headers_type()->to_string() + ", got " +
                                              column.type->to_string());
      column.ns = ColumnNamespace::kHeaders;
      break;
    case ColumnConstraint::kHeader:
      if (column.type->base() != SqlBaseType::kBytes)
        throw SqlError(def.name.position, "Invalid type for HEADER('" + def.header_key +
                                              "') column: expected BYTES, got " +
                                              column.type->to_string());
      column.ns = ColumnNamespace::kHeader;
      column.header_key = def.header_key;
      break;
    case ColumnConstraint::kNone:
      column.ns = ColumnNamespace::kValue;
      break;
  }
  if (column.ns == ColumnNamespace::kKey && contains_map(*column.type))
    throw SqlError(
        "Map keys, including types that contain maps, are not supported as they may "
        "lead to unexpected behavior due to inconsistent serialization. Key column "
        "name: `" +
        column.name + "`. Column type: " + column.type->to_string() +
        ". See https://github.com/confluentinc/ksql/issues/6621 for more.");
  return column;
}

void bind_formats(DataSource& source, const WithProperties& with, const DdlSettings& settings) {
  if (with.has("FORMAT") && with.has("KEY_FORMAT"))
    throw SqlError(
        "Cannot supply both 'KEY_FORMAT' and 'FORMAT' properties, as 'FORMAT' sets both key and "
        "value formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'.");
  if (with.has("FORMAT") && with.has("VALUE_FORMAT"))
    throw SqlError(
        "Cannot supply both 'VALUE_FORMAT' and 'FORMAT' properties, as 'FORMAT' sets both key "
        "and value formats. Either use just 'FORMAT', or use 'KEY_FORMAT' and 'VALUE_FORMAT'.");
  Formats& f = source.formats;
  auto both = with.text("FORMAT");
  auto key = both ? both : with.text("KEY_FORMAT");
  auto value = both ? both : with.text("VALUE_FORMAT");
  f.key_format = checked_format(key.value_or(settings.default_key_format));
  if (!value && settings.default_value_format.empty())
    throw SqlError(
        "Statement is missing the 'VALUE_FORMAT' property from the WITH clause. Either provide "
        "one or set a default via the 'ksql.persistence.default.format.value' config.");
  f.value_format = checked_format(value.value_or(settings.default_value_format));
  for (const char* property : {"KEY_DELIMITER", "VALUE_DELIMITER"}) {
    auto delimiter = with.text(property);
    if (!delimiter) continue;
    bool key_side = property[0] == 'K';
    const std::string& format = key_side ? f.key_format : f.value_format;
    if (format != "DELIMITED")
      throw SqlError(format + " does not support the following configs: [delimiter]");
    (key_side ? f.key_delimiter : f.value_delimiter) = checked_delimiter(property, *delimiter);
  }
  f.wrap_single_value = with.boolean("WRAP_SINGLE_VALUE");
  // ksqlDB's Protobuf rows are always messages.
  if (f.value_format == "PROTOBUF" && f.wrap_single_value == false)
    throw SqlError("Format 'PROTOBUF' does not support 'WRAP_SINGLE_VALUE' set to 'false'.");
  bind_registry_properties(f, with, source.name);
}

void bind_key_columns(const DataSource& source) {
  std::vector<const Column*> keys;
  for (const auto& c : source.columns)
    if (c.ns == ColumnNamespace::kKey) keys.push_back(&c);
  if (source.kind == SourceKind::kTable && keys.empty())
    throw SqlError("Tables require a PRIMARY KEY. Please define the PRIMARY KEY.");
  if (source.window && keys.empty()) throw SqlError("Windowed sources require a key column.");
  if (source.formats.key_format == "KAFKA" && keys.size() > 1) {
    std::string listed;
    for (const Column* k : keys)
      listed += (listed.empty() ? "" : ", ") + ("`" + k->name + "` " + k->type->to_string());
    throw SqlError("The 'KAFKA' format only supports a single field. Got: [" + listed + "]");
  }
  if (source.formats.key_format == "DELIMITED")
    for (const Column* k : keys)
      if (k->type->base() == SqlBaseType::kArray || k->type->base() == SqlBaseType::kMap ||
          k->type->base() == SqlBaseType::kStruct)
        throw SqlError("The 'DELIMITED' format does not support type '" + k->type->to_string() +
                       "', column: `" + k->name + "`");
}

void bind_timestamp(DataSource& source, const WithProperties& with) {
  source.timestamp_format = with.text("TIMESTAMP_FORMAT");
  auto name = with.text("TIMESTAMP");
  if (!name) return;
  std::string column_name = *name;
  for (char& c : column_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const Column* column = source.column(column_name);
  if (!column)
    throw SqlError("The TIMESTAMP column set in the WITH clause does not exist in the schema: '" +
                   column_name + "'");
  SqlBaseType base = column->type->base();
  bool ok = base == SqlBaseType::kBigint || base == SqlBaseType::kTimestamp ||
            (base == SqlBaseType::kString && source.timestamp_format);
  if (!ok)
    throw SqlError("Timestamp column, `" + column_name +
                   "`, should be LONG(INT64), TIMESTAMP, or a String with a timestamp_format "
                   "specified");
  source.timestamp_column = column_name;
}

void bind_window(DataSource& source, const WithProperties& with) {
  auto type = with.text("WINDOW_TYPE");
  if (!type) {
    if (with.has("WINDOW_SIZE"))
      throw SqlError("'WINDOW_SIZE' should only be set together with 'WINDOW_TYPE'.");
    return;
  }
  std::string t = *type;
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  SourceWindow window;
  if (t == "SESSION")
    window.type = SourceWindowType::kSession;
  else if (t == "HOPPING")
    window.type = SourceWindowType::kHopping;
  else if (t == "TUMBLING")
    window.type = SourceWindowType::kTumbling;
  else
    throw SqlError("Configuration WINDOW_TYPE is invalid: Unknown window type: '" + *type +
                   "'. Valid values: SESSION, HOPPING, TUMBLING");
  auto size = with.text("WINDOW_SIZE");
  if (window.type == SourceWindowType::kSession && size)
    throw SqlError("'WINDOW_SIZE' should not be set for SESSION windows.");
  if (window.type != SourceWindowType::kSession && !size)
    throw SqlError("'WINDOW_SIZE' must be set for " + t + " windows.");
  if (size) window.size_ms = parse_duration_ms("WINDOW_SIZE", *size);
  source.window = window;
}

// ---- Schema inference (docs/sql/ksqldb-facts.md §3): a CREATE's columns from the registry.

bool is_registry_format(const std::string& format) {
  return format == "AVRO" || format == "JSON_SR" || format == "PROTOBUF";
}

std::string upper_name(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The registry's schema of one side, `schema_id` or the subject's latest.
registry::SchemaInfo fetch_schema(const std::string& url, const std::string& topic, bool key,
                                  std::optional<int64_t> schema_id) {
  const std::string side = key ? "keys" : "values";
  registry::ClientConfig config;
  config.urls = registry::ClientConfig::from_properties({{"schema.registry.url", url}}).urls;
  registry::SchemaRegistryClient client(config);
  try {
    if (schema_id) return client.schema_by_id(static_cast<int>(*schema_id));
    return client.latest(topic + (key ? "-key" : "-value")).info;
  } catch (const registry::RegistryClientError& e) {
    if (e.http_status() == 404)
      throw SqlError("Schema for message " + side + " on topic '" + topic +
                     "' does not exist in the Schema Registry.");
    throw SqlError("Failed to fetch the schema for message " + side + " on topic '" + topic +
                   "' from the Schema Registry: " + e.what());
  }
}

// CREATE without value (or key) columns in an SR format: they come from the registry.
void infer_columns(DataSource& source, const WithProperties& with, const DdlSettings& settings) {
  for (bool key : {true, false}) {
    const std::string side = key ? "KEY" : "VALUE";
    const std::string& format = key ? source.formats.key_format : source.formats.value_format;
    const auto schema_id = with.integer(side + "_SCHEMA_ID");
    const ColumnNamespace ns = key ? ColumnNamespace::kKey : ColumnNamespace::kValue;
    const bool declared = std::any_of(source.columns.begin(), source.columns.end(),
                                      [&](const Column& c) { return c.ns == ns; });
    if (schema_id && !is_registry_format(format))
      throw SqlError(side + "_FORMAT should support schema inference when " + side +
                     "_SCHEMA_ID is provided. Current format is " + format + ".");
    if (schema_id && declared)
      throw SqlError("Table elements and " + side +
                     "_SCHEMA_ID cannot both exist for create statement.");
    if (!is_registry_format(format)) continue;
    if (settings.schema_registry_url.empty())
      throw SqlError("Cannot create topic '" + source.topic + "' with format " + format +
                     " without configuring 'ksql.schema.registry.url'");
    if (declared) continue;
    auto info = fetch_schema(settings.schema_registry_url, source.topic, key, schema_id);
    const bool unwrapped = !key && source.formats.wrap_single_value == false;
    if (!settings.registry_columns)
      throw SqlError("Schema inference is not available: no translator of registered schemas");
    const std::string& full_name =
        key ? source.formats.key_schema_full_name : source.formats.value_schema_full_name;
    for (auto& c : settings.registry_columns(info, format, key, unwrapped, full_name,
                                             schema_id.has_value())) {
      if (source.column(c.name)) throw SqlError("Duplicate column names: `" + c.name + "`");
      source.columns.push_back(std::move(c));
    }
  }
}

}  // namespace

SqlTypePtr bind_type(const parser::TypeSpec& spec, const Catalog& catalog) {
  try {
    if (spec.custom) {
      if (auto named = catalog.find_type(spec.base)) return named;
      throw SqlError("Cannot resolve unknown type or alias: " + spec.base);
    }
    static const std::pair<const char*, SqlBaseType> kPrimitives[] = {
        {"BOOLEAN", SqlBaseType::kBoolean},    {"INTEGER", SqlBaseType::kInteger},
        {"BIGINT", SqlBaseType::kBigint},      {"DOUBLE", SqlBaseType::kDouble},
        {"STRING", SqlBaseType::kString},      {"BYTES", SqlBaseType::kBytes},
        {"DATE", SqlBaseType::kDate},          {"TIME", SqlBaseType::kTime},
        {"TIMESTAMP", SqlBaseType::kTimestamp}};
    for (const auto& [name, base] : kPrimitives)
      if (spec.base == name) return SqlType::of(base);
    if (spec.base == "DECIMAL")
      return SqlType::decimal(spec.parameters.at(0), spec.parameters.at(1));
    if (spec.base == "ARRAY") return SqlType::array(bind_type(spec.elements.at(0), catalog));
    if (spec.base == "MAP")
      return SqlType::map(bind_type(spec.elements.at(0), catalog),
                          bind_type(spec.elements.at(1), catalog));
    if (spec.base == "STRUCT") {
      std::vector<SqlField> fields;
      for (size_t i = 0; i < spec.elements.size(); ++i)
        fields.push_back({spec.field_names.at(i), bind_type(spec.elements[i], catalog)});
      return SqlType::structure(std::move(fields));
    }
    throw SqlError("Cannot resolve unknown type or alias: " + spec.base);
  } catch (const SqlTypeError& e) {
    throw SqlError(e.what());
  }
}

BoundCreate bind_create_source(const parser::CreateSource& create, const Catalog& catalog,
                               const DdlSettings& settings) {
  BoundCreate out;
  DataSource& source = out.source;
  source.kind = create.table ? SourceKind::kTable : SourceKind::kStream;
  source.name = create.name.text;
  source.read_only = create.source;
  if (const DataSource* existing = catalog.find_source(source.name)) {
    if (create.if_not_exists) {
      out.skip = true;
      out.warning =
          std::string("A ") + existing->kind_name() + " with the same name already exists.";
      return out;
    }
    if (!create.or_replace || existing->kind != source.kind)
      throw SqlError(std::string("Cannot add ") + source.kind_name() + " '" + source.name +
                     "': A " + existing->kind_name() + " with the same name already exists");
    if (existing->read_only || create.source)
      throw SqlError(std::string("Cannot add ") + source.kind_name() + " '" + source.name +
                     "': CREATE OR REPLACE is not supported on source " + source.kind_name() +
                     "s.");
  }
  WithProperties with = read_create_properties(create.properties);
  auto format_of = [&](const char* property) {
    auto f = with.text("FORMAT") ? with.text("FORMAT") : with.text(property);
    return f ? upper_name(*f) : std::string();
  };
  const std::string declared_value_format = format_of("VALUE_FORMAT").empty()
                                                ? upper_name(settings.default_value_format)
                                                : format_of("VALUE_FORMAT");
  // Columns may come from the registry, and then none need be written.
  if (create.columns.empty() && !is_registry_format(declared_value_format))
    throw SqlError("The statement does not define any columns.");
  std::set<std::string> seen;
  for (const auto& def : create.columns) {
    Column column = bind_column(def, create.table, catalog);
    if (!seen.insert(column.name).second)
      throw SqlError(def.name.position, "Duplicate column names: `" + column.name + "`");
    source.columns.push_back(std::move(column));
  }
  auto topic = with.text("KAFKA_TOPIC");
  if (!topic)
    throw SqlError("Missing required configuration \"KAFKA_TOPIC\" which has no default value.");
  if (topic->empty()) throw SqlError("KAFKA_TOPIC cannot be empty.");
  source.topic = *topic;
  if (auto partitions = with.integer("PARTITIONS")) {
    if (*partitions < 1 || *partitions > INT32_MAX)
      throw SqlError("Invalid number of partitions in WITH clause: " + std::to_string(*partitions));
    source.partitions = static_cast<int32_t>(*partitions);
  }
  if (auto replicas = with.integer("REPLICAS")) {
    if (*replicas < 1 || *replicas > INT16_MAX)
      throw SqlError("Invalid number of replicas in WITH clause: " + std::to_string(*replicas));
    source.replicas = static_cast<int16_t>(*replicas);
  }
  bind_formats(source, with, settings);
  infer_columns(source, with, settings);
  bind_window(source, with);
  if (auto retention = with.integer("RETENTION_MS")) {
    if (source.kind == SourceKind::kTable && !source.window)
      throw SqlError(
          "Invalid config variable in the WITH clause: RETENTION_MS. Non-windowed tables do not "
          "support retention.");
    source.retention_ms = *retention;
  }
  bind_key_columns(source);
  bind_timestamp(source, with);
  // Keys first, as ksqlDB lists a schema.
  std::stable_partition(source.columns.begin(), source.columns.end(),
                        [](const Column& c) { return c.ns == ColumnNamespace::kKey; });
  return out;
}

}  // namespace oxbow::sql
