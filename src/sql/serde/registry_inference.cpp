// Schema inference (docs/sql/ksqldb-facts.md §3): a registered schema's columns, as ksqlDB's
// ConnectKsqlSchemaTranslator makes them from Connect's reading of it: names upper-cased, every
// type nullable, map keys STRING, fields of types KSQL lacks left out.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "sql/binder/sql_error.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql {

namespace {

using SchemaJson = nlohmann::ordered_json;

using SchemaJson = nlohmann::ordered_json;

// Set while registry_columns reads a schema whose names are kept as written.
thread_local bool keep_names = false;

std::string upper_name(std::string s) {
  if (keep_names) return s;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class AvroColumns {
 public:
  // nullptr: a type KSQL cannot hold.
  SqlTypePtr type(const SchemaJson& s) {
    if (s.is_array()) {
      const SchemaJson* only = nullptr;
      for (const auto& b : s)
        if (!(b.is_string() && b == "null")) {
          if (only) return nullptr;
          only = &b;
        }
      return only ? type(*only) : nullptr;
    }
    if (s.is_string()) return named(s.get<std::string>());
    if (!s.is_object() || !s.contains("type")) return nullptr;
    const std::string t = s["type"].is_string() ? s["type"].get<std::string>() : "";
    const std::string logical = s.value("logicalType", "");
    if ((t == "bytes" || t == "fixed") && logical == "decimal")
      return SqlType::decimal(s.value("precision", 0), s.value("scale", 0));
    if (t == "int" && logical == "date") return SqlType::of(SqlBaseType::kDate);
    if (t == "int" && logical == "time-millis") return SqlType::of(SqlBaseType::kTime);
    if (t == "long" && logical == "timestamp-millis") return SqlType::of(SqlBaseType::kTimestamp);
    if (t == "record") return record(s);
    if (t == "enum") return remember(s, SqlType::string());
    if (t == "fixed") return remember(s, SqlType::bytes());
    if (t == "map") {
      auto v = type(s["values"]);
      return v ? SqlType::map(SqlType::string(), v) : nullptr;
    }
    if (t == "array") return array(s["items"]);
    return s["type"].is_string() ? named(t) : type(s["type"]);
  }

  std::vector<SqlField> fields(const SchemaJson& record) {
    std::vector<SqlField> out;
    for (const auto& f : record.value("fields", SchemaJson::array()))
      if (auto t = type(f["type"])) out.push_back({upper_name(f.value("name", "")), t});
    return out;
  }

 private:
  SqlTypePtr named(const std::string& name) {
    static const std::pair<const char*, SqlBaseType> kPrimitives[] = {
        {"boolean", SqlBaseType::kBoolean}, {"int", SqlBaseType::kInteger},
        {"long", SqlBaseType::kBigint},     {"float", SqlBaseType::kDouble},
        {"double", SqlBaseType::kDouble},   {"string", SqlBaseType::kString},
        {"bytes", SqlBaseType::kBytes}};
    for (const auto& [n, base] : kPrimitives)
      if (name == n) return SqlType::of(base);
    for (const auto& [full, t] : named_)
      if (full == name || full.ends_with("." + name)) return t;
    return nullptr;
  }

  SqlTypePtr remember(const SchemaJson& s, SqlTypePtr t) {
    std::string name = s.value("name", "");
    if (s.contains("namespace") && name.find('.') == std::string::npos)
      name = s["namespace"].get<std::string>() + "." + name;
    named_.emplace_back(name, t);
    return t;
  }

  SqlTypePtr record(const SchemaJson& s) {
    auto f = fields(s);
    return f.empty() ? nullptr : remember(s, SqlType::structure(std::move(f)));
  }

  // Connect writes a map with optional keys as an array of MapEntry records.
  SqlTypePtr array(const SchemaJson& items) {
    const SchemaJson* entry = &items;
    if (items.is_array())
      for (const auto& b : items)
        if (b.is_object()) entry = &b;
    if (entry->is_object() && entry->value("connect.internal.type", "") == "MapEntry") {
      for (const auto& f : (*entry)["fields"])
        if (f.value("name", "") == "value") {
          auto v = type(f["type"]);
          return v ? SqlType::map(SqlType::string(), v) : nullptr;
        }
      return nullptr;
    }
    auto e = type(items);
    return e ? SqlType::array(e) : nullptr;
  }

  std::vector<std::pair<std::string, SqlTypePtr>> named_;
};

SqlTypePtr json_schema_type(const SchemaJson& s);

std::vector<SqlField> json_schema_fields(const SchemaJson& object) {
  std::vector<std::pair<int64_t, SqlField>> indexed;
  int64_t n = 0;
  const SchemaJson properties = object.value("properties", SchemaJson::object());
  for (const auto& [name, p] : properties.items()) {
    const int64_t order = p.is_object() ? p.value("connect.index", n) : n;
    ++n;
    if (auto t = json_schema_type(p)) indexed.push_back({order, {upper_name(name), t}});
  }
  std::stable_sort(indexed.begin(), indexed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SqlField> out;
  for (auto& [order, f] : indexed) out.push_back(std::move(f));
  return out;
}

SqlTypePtr json_schema_type(const SchemaJson& s) {
  if (!s.is_object()) return nullptr;
  for (const char* any : {"oneOf", "anyOf"})
    if (s.contains(any)) {
      const SchemaJson* only = nullptr;
      for (const auto& b : s[any])
        if (b.value("type", "") != "null") {
          if (only) return nullptr;
          only = &b;
        }
      return only ? json_schema_type(*only) : nullptr;
    }
  const std::string t =
      s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
  const std::string title = s.value("title", ""), connect = s.value("connect.type", "");
  const std::string prefix = "org.apache.kafka.connect.data.";
  if (title == prefix + "Decimal") {
    const auto& p = s.value("connect.parameters", SchemaJson::object());
    return SqlType::decimal(std::stoi(p.value("connect.decimal.precision", "64")),
                            std::stoi(p.value("scale", "0")));
  }
  if (title == prefix + "Date") return SqlType::of(SqlBaseType::kDate);
  if (title == prefix + "Time") return SqlType::of(SqlBaseType::kTime);
  if (title == prefix + "Timestamp") return SqlType::of(SqlBaseType::kTimestamp);
  if (t == "boolean") return SqlType::boolean();
  if (t == "integer")
    return connect == "int8" || connect == "int16" || connect == "int32" ? SqlType::integer()
                                                                         : SqlType::bigint();
  if (t == "number") return SqlType::double_type();
  if (t == "string") return connect == "bytes" ? SqlType::bytes() : SqlType::string();
  if (t == "array") {
    auto e = s.contains("items") ? json_schema_type(s["items"]) : nullptr;
    return e ? SqlType::array(e) : nullptr;
  }
  if (t == "object" && (connect == "map" || s.contains("additionalProperties"))) {
    auto v =
        s.contains("additionalProperties") ? json_schema_type(s["additionalProperties"]) : nullptr;
    return v ? SqlType::map(SqlType::string(), v) : nullptr;
  }
  if (t == "object") {
    auto f = json_schema_fields(s);
    return f.empty() ? nullptr : SqlType::structure(std::move(f));
  }
  return nullptr;
}

// PROTOBUF: the .proto text read far enough for its first message's fields (the registry keeps
// Confluent's canonical text; a user's own text reads too), as ProtobufData reads them.
class ProtoText {
 public:
  explicit ProtoText(const std::string& text) {
    tokenize(text);
    // Empty tokens past the end, so that a field's look-ahead on a truncated text stays inside.
    tokens_.insert(tokens_.end(), 8, std::string());
  }

  // The fields of the top-level message `wanted` (with or without the package; empty: the only
  // top-level type). Several types and no name are refused as ksqlDB's DefaultSchemaInjector
  // refuses them.
  std::vector<SqlField> message(const std::string& wanted, bool key) {
    collect_names(0, "", tokens_.size());
    for (size_t i = 0; i + 1 < tokens_.size() && package_.empty(); ++i)
      if (tokens_[i] == "package") package_ = tokens_[i + 1] + ".";
    std::vector<std::pair<size_t, std::string>> top;  // by place in the text
    for (const auto* names : {&messages_, &enums_})
      for (const auto& [name, open] : *names)
        if (name.find('.') == std::string::npos) top.emplace_back(open, name);
    std::sort(top.begin(), top.end());
    std::string name = wanted;
    if (!package_.empty() && name.starts_with(package_)) name = name.substr(package_.size());
    if (wanted.empty() && top.size() > 1) {
      std::string listed;
      for (const auto& [open, n] : top)
        listed += (listed.empty() ? "" : "\n") + ("- " + package_ + n);
      throw SqlError(std::string(key ? "Key" : "Value") +
                     " schema has multiple schema definitions. \n\n" + listed +
                     "\n\nPlease specify a schema full name in the WITH clause using " +
                     (key ? "KEY" : "VALUE") + "_SCHEMA_FULL_NAME");
    }
    if (wanted.empty() && !top.empty()) name = top.front().second;
    if (const auto it = messages_.find(name); it != messages_.end() && !name.empty())
      return fields(it->second + 1, name);
    if (!wanted.empty()) throw SqlError("The registered Protobuf schema has no message " + wanted);
    throw SqlError("The registered Protobuf schema has no message");
  }

 private:
  void tokenize(const std::string& t) {
    for (size_t i = 0; i < t.size();) {
      const char c = t[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
        while (i < t.size() && t[i] != '\n') ++i;
      } else if (c == '"' || c == '\'') {
        size_t end = t.find(c, i + 1);
        if (end == std::string::npos) end = t.size() - 1;
        tokens_.push_back(t.substr(i, end - i + 1));
        i = end + 1;
      } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
        size_t end = i;
        while (end < t.size() &&
               (std::isalnum(static_cast<unsigned char>(t[end])) || t[end] == '_' || t[end] == '.'))
          ++end;
        tokens_.push_back(t.substr(i, end - i));
        i = end;
      } else {
        tokens_.push_back(std::string(1, c));
        ++i;
      }
    }
  }

  // The index after the block that opens at tokens_[open] ("{").
  size_t skip_block(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < tokens_.size(); ++i) {
      if (tokens_[i] == "{") ++depth;
      if (tokens_[i] == "}" && --depth == 0) return i + 1;
    }
    return tokens_.size();
  }

  // Every message and enum by its dotted path of names, so that fields resolve them.
  void collect_names(size_t i, const std::string& scope, size_t end) {
    while (i < end) {
      if ((tokens_[i] == "message" || tokens_[i] == "enum") && i + 2 < end) {
        const std::string name = scope + tokens_[i + 1];
        const size_t close = skip_block(i + 2);
        (tokens_[i] == "enum" ? enums_ : messages_)[name] = i + 2;
        if (tokens_[i] == "message") collect_names(i + 3, name + ".", close - 1);
        i = close;
      } else {
        ++i;
      }
    }
  }

  // A name as a field writes it, from the innermost scope out.
  std::string resolve(const std::string& name, const std::string& scope,
                      const std::map<std::string, size_t>& known) const {
    std::string s = scope;  // "A.B." or empty
    for (;;) {
      if (known.count(s + name)) return s + name;
      if (s.empty()) return "";
      s.pop_back();  // the scope's own dot: each turn is one scope shorter
      const size_t dot = s.find_last_of('.');
      s.resize(dot == std::string::npos ? 0 : dot + 1);
    }
  }

  SqlTypePtr scalar(std::string name, const std::string& scope, size_t options, int depth) {
    if (!name.empty() && name[0] == '.') name = name.substr(1);
    if (!package_.empty() && name.starts_with(package_)) name = name.substr(package_.size());
    static const std::pair<const char*, SqlBaseType> kScalars[] = {
        {"int32", SqlBaseType::kInteger},
        {"sint32", SqlBaseType::kInteger},
        {"sfixed32", SqlBaseType::kInteger},
        {"int8", SqlBaseType::kInteger},
        {"uint32", SqlBaseType::kBigint},
        {"fixed32", SqlBaseType::kBigint},
        {"int64", SqlBaseType::kBigint},
        {"sint64", SqlBaseType::kBigint},
        {"sfixed64", SqlBaseType::kBigint},
        {"uint64", SqlBaseType::kBigint},
        {"fixed64", SqlBaseType::kBigint},
        {"float", SqlBaseType::kDouble},
        {"double", SqlBaseType::kDouble},
        {"bool", SqlBaseType::kBoolean},
        {"string", SqlBaseType::kString},
        {"bytes", SqlBaseType::kBytes},
        {"google.protobuf.Timestamp", SqlBaseType::kTimestamp},
        {"google.type.Date", SqlBaseType::kDate},
        {"google.type.TimeOfDay", SqlBaseType::kTime},
        {"google.protobuf.Int32Value", SqlBaseType::kInteger},
        {"google.protobuf.Int64Value", SqlBaseType::kBigint},
        {"google.protobuf.DoubleValue", SqlBaseType::kDouble},
        {"google.protobuf.FloatValue", SqlBaseType::kDouble},
        {"google.protobuf.BoolValue", SqlBaseType::kBoolean},
        {"google.protobuf.StringValue", SqlBaseType::kString},
        {"google.protobuf.BytesValue", SqlBaseType::kBytes}};
    for (const auto& [n, base] : kScalars)
      if (name == n) return SqlType::of(base);
    if (name == "confluent.type.Decimal") return decimal(options);
    if (!resolve(name, scope, enums_).empty()) return SqlType::string();
    const std::string message = resolve(name, scope, messages_);
    if (message.empty() || depth > 32) return nullptr;
    auto f = fields(messages_[message] + 1, message, depth + 1);
    return f.empty() ? nullptr : SqlType::structure(std::move(f));
  }

  // confluent.type.Decimal's precision and scale from the field's confluent.field_meta params.
  SqlTypePtr decimal(size_t options) const {
    // Each param is { key: "precision", value: "4" }, in either order.
    int precision = 64, scale = 0;
    std::string key, value;
    for (size_t i = options; i + 2 < tokens_.size() && tokens_[i] != ";"; ++i) {
      if ((tokens_[i] == "key" || tokens_[i] == "value") && tokens_[i + 1] == ":")
        (tokens_[i] == "key" ? key : value) = tokens_[i + 2];
      if (tokens_[i] != "}") continue;
      int number = 0;
      const char* digits = value.data() + 1;
      const char* digits_end = value.data() + (value.size() > 2 ? value.size() - 1 : 1);
      if ((key == "\"precision\"" || key == "\"scale\"") &&
          std::from_chars(digits, digits_end, number).ec == std::errc())
        *(key == "\"scale\"" ? &scale : &precision) = number;
      key.clear();
      value.clear();
    }
    return SqlType::decimal(precision, scale);
  }

  // The fields of the message whose body starts at tokens_[open] (after its "{").
  std::vector<SqlField> fields(size_t open, const std::string& name, int depth = 0) {
    std::vector<SqlField> out;
    const size_t end = skip_block(open - 1) - 1;
    for (size_t i = open; i < end;) {
      const std::string& t = tokens_[i];
      if (t == "message" || t == "enum") {
        i = skip_block(i + 2);
      } else if (t == "oneof") {
        i += 3;  // "oneof NAME {": its fields read as the message's own
      } else if (t == "}" || t == ";") {
        ++i;
      } else if (t == "option" || t == "reserved" || t == "extensions") {
        while (i < end && tokens_[i] != ";") ++i;
      } else {
        i = field(i, name + ".", depth, out);
      }
    }
    return out;
  }

  size_t field(size_t i, const std::string& scope, int depth, std::vector<SqlField>& out) {
    bool repeated = false;
    if (tokens_[i] == "repeated" || tokens_[i] == "optional" || tokens_[i] == "required")
      repeated = tokens_[i++] == "repeated";
    SqlTypePtr type;
    if (tokens_[i] == "map" && tokens_[i + 1] == "<") {
      auto value = scalar(tokens_[i + 4], scope, i, depth);
      type = value ? SqlType::map(SqlType::string(), value) : nullptr;
      i += 6;
    } else {
      const std::string& type_name = tokens_[i];
      size_t options = i;
      while (options < tokens_.size() && tokens_[options] != ";" && tokens_[options] != "[")
        ++options;
      type = scalar(type_name, scope, options, depth);
      if (type && repeated) type = map_entries(type_name, *type).value_or(SqlType::array(type));
      ++i;
    }
    const std::string name = tokens_[i];
    while (i < tokens_.size() && tokens_[i] != ";") ++i;
    if (type) out.push_back({upper_name(name), type});
    return i + 1;
  }

  // ProtobufData's reading of repeated <Name>Entry {key, value} messages: a map (its keys
  // STRING, as ksqlDB's).
  static std::optional<SqlTypePtr> map_entries(const std::string& type_name, const SqlType& type) {
    if (!type_name.ends_with("Entry") || type.base() != SqlBaseType::kStruct ||
        type.fields().size() != 2 || upper_name_always(type.fields()[0].name) != "KEY" ||
        upper_name_always(type.fields()[1].name) != "VALUE")
      return std::nullopt;
    return SqlType::map(SqlType::string(), type.fields()[1].type);
  }

  static std::string upper_name_always(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }

  std::vector<std::string> tokens_;
  std::string package_;                             // "pkg.", or empty
  std::map<std::string, size_t> messages_, enums_;  // full path -> the index of its "{"
};

std::vector<SqlField> protobuf_fields(const std::string& text, const std::string& message,
                                      bool key) {
  return ProtoText(text).message(message, key);
}

std::vector<Column> columns_of(std::vector<SqlField> fields, bool key) {
  if (fields.empty())
    throw SqlError("Schema does not include any columns with types that ksqlDB supports.");
  std::vector<Column> out;
  for (auto& f : fields)
    out.push_back(
        {f.name, f.type, key ? ColumnNamespace::kKey : ColumnNamespace::kValue, std::string()});
  return out;
}

}  // namespace

std::vector<Column> registry_columns(const registry::SchemaInfo& info, const std::string& format,
                                     bool key, bool unwrapped_value, const std::string& message,
                                     bool names_as_written) {
  struct Scope {
    explicit Scope(bool as_written) { keep_names = as_written; }
    ~Scope() { keep_names = false; }
  } scope(names_as_written);
  if (format == "PROTOBUF") return columns_of(protobuf_fields(info.schema, message, key), key);
  SchemaJson schema = SchemaJson::parse(info.schema, nullptr, false);
  if (schema.is_discarded()) throw SqlError("The registered schema does not parse");
  const bool avro = format == "AVRO";
  AvroColumns avro_columns;
  const bool structured = schema.is_object() && (avro ? schema.value("type", "") == "record"
                                                      : schema.value("type", "") == "object" &&
                                                            schema.contains("properties"));
  std::vector<SqlField> fields;
  if (structured && !(unwrapped_value && !key)) {
    fields = avro ? avro_columns.fields(schema) : json_schema_fields(schema);
  } else if (key || unwrapped_value) {
    auto t = avro ? avro_columns.type(schema) : json_schema_type(schema);
    if (t) fields.push_back({key ? "ROWKEY" : "ROWVAL", t});
  } else {
    throw SqlError("KSQL stream/table schema must be structured");
  }
  return columns_of(std::move(fields), key);
}

}  // namespace oxbow::sql
