// PROTOBUF rows: the message ConnectDefault1 of ksqlDB's derived schema, written and read by the
// registry library's serdes in Protobuf's JSON mapping. The mapping's field names are the
// lowerCamel json names, so fields match columns ignoring case and underscores. As ksqlDB's
// default (no *_PROTOBUF_NULLABLE_REPRESENTATION), a NULL is not written and reads back as the
// field's default.
#include <cmath>
#include <cstdio>
#include <map>
#include <span>

#include "common/base64.h"
#include "oxbow/registry/serdes.h"
#include "registry/protobuf/schema.h"
#include "sql/binder/sql_error.h"
#include "sql/serde/formats.h"
#include "sql/serde/schema_registry.h"

namespace oxbow::sql::formats {

namespace {

using Json = nlohmann::json;
using Kind = Value::Kind;

// Days since the epoch to a civil date and back (Howard Hinnant's algorithms).
void civil(int64_t days, int64_t& y, unsigned& m, unsigned& d) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// google.protobuf.Timestamp's JSON form: RFC 3339 in UTC.
std::string rfc3339(int64_t ms) {
  const int64_t days = floor_div(ms, 86400000), in_day = ms - days * 86400000;
  int64_t y;
  unsigned m, d;
  civil(days, y, m, d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(in_day / 3600000),
                static_cast<long long>(in_day / 60000 % 60),
                static_cast<long long>(in_day / 1000 % 60), static_cast<long long>(in_day % 1000));
  return buf;
}

int64_t from_rfc3339(const std::string& text) {
  long long y = 0;
  unsigned m = 0, d = 0, h = 0, mi = 0, s = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%lld-%u-%uT%u:%u:%u%n", &y, &m, &d, &h, &mi, &s, &used) < 6)
    unreadable("Invalid timestamp: " + text);
  int64_t ms = 0;
  if (static_cast<size_t>(used) < text.size() && text[static_cast<size_t>(used)] == '.') {
    int64_t scale = 100;
    for (size_t i = static_cast<size_t>(used) + 1; i < text.size() && std::isdigit(text[i]); ++i) {
      ms += (text[i] - '0') * scale;
      scale /= 10;
    }
  }
  return (days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + s) * 1000 + ms;
}

std::string squashed(const std::string& name) {
  std::string out;
  for (char c : name)
    if (c != '_') out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Json to_proto(const Value& v, const SqlType& type);

Json message_to_proto(std::span<const Value> values, const std::vector<SqlField>& fields) {
  Json out = Json::object();
  for (size_t i = 0; i < fields.size() && i < values.size(); ++i)
    if (!values[i].is_null()) out[fields[i].name] = to_proto(values[i], *fields[i].type);
  return out;
}

Json to_proto(const Value& v, const SqlType& type) {
  switch (type.base()) {
    case SqlBaseType::kBoolean:
      return v.boolean();
    case SqlBaseType::kInteger:
      return v.integer();
    case SqlBaseType::kBigint:
      return v.bigint();
    case SqlBaseType::kDouble:
      // Protobuf's JSON form spells the values JSON has no numbers for.
      if (std::isnan(v.dbl())) return "NaN";
      if (std::isinf(v.dbl())) return v.dbl() > 0 ? "Infinity" : "-Infinity";
      return v.dbl();
    case SqlBaseType::kString:
      return v.text();
    case SqlBaseType::kBytes:
      return base64(v.text());
    case SqlBaseType::kDecimal:
      return {{"value", base64(decimal_bytes(v.unscaled()))},
              {"precision", type.precision()},
              {"scale", type.scale()}};
    case SqlBaseType::kDate: {
      int64_t y;
      unsigned m, d;
      civil(v.bigint(), y, m, d);
      return {{"year", y}, {"month", m}, {"day", d}};
    }
    case SqlBaseType::kTime: {
      const int64_t ms = v.bigint();
      return {{"hours", ms / 3600000},
              {"minutes", ms / 60000 % 60},
              {"seconds", ms / 1000 % 60},
              {"nanos", ms % 1000 * 1000000}};
    }
    case SqlBaseType::kTimestamp:
      return rfc3339(v.bigint());
    case SqlBaseType::kArray: {
      Json out = Json::array();
      for (const auto& e : v.items())
        if (!e.is_null()) out.push_back(to_proto(e, *type.element()));
      return out;
    }
    case SqlBaseType::kMap: {
      // The derived schema's repeated ConnectDefault<n>Entry {key, value}; a NULL part is left
      // unset.
      Json out = Json::array();
      for (size_t i = 0; i + 1 < v.items().size(); i += 2) {
        Json entry = Json::object();
        if (!v.items()[i].is_null()) entry["key"] = v.items()[i].text();
        if (!v.items()[i + 1].is_null())
          entry["value"] = to_proto(v.items()[i + 1], *type.element());
        out.push_back(std::move(entry));
      }
      return out;
    }
    case SqlBaseType::kStruct:
      return message_to_proto(v.items(), type.fields());
  }
  return nullptr;
}

void from_proto(const Json& j, const SqlType& type, Value& out);

// `out` holds one value per field.
void message_from_proto(const Json& j, const std::vector<SqlField>& fields, std::span<Value> out) {
  if (!j.is_object()) unreadable("Expected a Protobuf message, got " + std::string(j.type_name()));
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string wanted = squashed(fields[i].name);
    for (const auto& [k, e] : j.items())
      if (squashed(k) == wanted) {
        from_proto(e, *fields[i].type, out[i]);
        break;
      }
  }
}

int64_t number(const Json& j, const char* name) {
  if (!j.contains(name)) return 0;
  const Json& v = j[name];
  return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
}

void container_from_proto(const Json& j, const SqlType& type, Value& out) {
  auto items = std::make_shared<std::vector<Value>>();
  if (type.base() == SqlBaseType::kArray) {
    if (!j.is_array()) unreadable("Expected a repeated field for " + type.to_string());
    for (const auto& e : j) from_proto(e, *type.element(), items->emplace_back());
    return out.set_items(Kind::kArray, std::move(items));
  }
  if (type.base() == SqlBaseType::kMap) {
    if (j.is_array()) {  // repeated entry messages {key, value}, as ksqlDB writes maps
      for (const auto& entry : j) {
        if (!entry.is_object()) unreadable("Expected a map entry for " + type.to_string());
        from_proto(entry.value("key", Json()), *type.key(), items->emplace_back());
        from_proto(entry.value("value", Json()), *type.element(), items->emplace_back());
      }
      return out.set_items(Kind::kMap, std::move(items));
    }
    if (!j.is_object()) unreadable("Expected a map field for " + type.to_string());
    for (const auto& [k, e] : j.items()) {
      items->emplace_back().set_string(k);
      from_proto(e, *type.element(), items->emplace_back());
    }
    return out.set_items(Kind::kMap, std::move(items));
  }
  items->resize(type.fields().size());
  message_from_proto(j, type.fields(), *items);
  out.set_items(Kind::kStruct, std::move(items));
}

void from_proto(const Json& j, const SqlType& type, Value& out) {
  if (j.is_null()) return out.set_null();
  try {
    switch (type.base()) {
      case SqlBaseType::kDecimal: {
        const auto bytes = unbase64(j.at("value").get<std::string>());
        if (!bytes) unreadable("Invalid decimal bytes");
        __int128 v = bytes->empty() ? 0 : decimal_from_bytes(*bytes);
        for (int64_t s = number(j, "scale"); s < type.scale(); ++s) v *= 10;
        for (int64_t s = number(j, "scale"); s > type.scale(); --s) v /= 10;
        return out.set_decimal(v, type.scale());
      }
      case SqlBaseType::kDate:
        return out.set_time(Kind::kDate, days_from_civil(number(j, "year"),
                                                         static_cast<unsigned>(number(j, "month")),
                                                         static_cast<unsigned>(number(j, "day"))));
      case SqlBaseType::kTime:
        return out.set_time(Kind::kTime,
                            number(j, "hours") * 3600000 + number(j, "minutes") * 60000 +
                                number(j, "seconds") * 1000 + number(j, "nanos") / 1000000);
      case SqlBaseType::kTimestamp:
        return out.set_time(Kind::kTimestamp, from_rfc3339(j.get<std::string>()));
      case SqlBaseType::kArray:
      case SqlBaseType::kMap:
      case SqlBaseType::kStruct:
        return container_from_proto(j, type, out);
      default:
        return value_from_json(j, type, out);
    }
  } catch (const Json::exception& e) {
    unreadable(std::string("Error deserializing Protobuf message: ") + e.what());
  } catch (const std::logic_error& e) {
    unreadable(std::string("Error deserializing Protobuf message: ") + e.what());
  }
}

// Rows written with a pinned schema (*_SCHEMA_ID) under its id, as ksqlDB's use.schema.id: the
// message of the side's full name, else the first; columns matched to its fields ignoring case.
class PinnedProtobufWriter {
 public:
  PinnedProtobufWriter(registry::SchemaRegistryClient& client, int32_t id,
                       const std::string& full_name, bool key) {
    const registry::SchemaInfo info = pinned_schema(client, id, "PROTOBUF");
    auto parsed = registry::protobuf::parse(info.schema, {});
    if (!parsed)
      throw SqlError("The Protobuf schema of id " + std::to_string(id) + " does not parse");
    schema_ = std::make_shared<const registry::protobuf::Schema>(std::move(*parsed.schema));
    message_ = registry::protobuf::message_name(*schema_, {0}).value_or("");
    if (!full_name.empty())
      for (const auto& name : schema_->message_names())
        if (name == full_name || name.ends_with("." + full_name)) message_ = name;
    const auto indexes = registry::protobuf::message_indexes(*schema_, message_);
    if (!indexes)
      throw SqlError("The Protobuf schema of id " + std::to_string(id) + " has no message");
    prefix_ = registry::wire::header(id) + registry::protobuf::encode_message_indexes(*indexes);
    for (const auto& c : registry_columns(info, "PROTOBUF", key, false, full_name, true))
      field_names_[squashed(c.name)] = c.name;
  }

  std::string write(const Json& message) const {
    Json renamed = Json::object();
    for (const auto& [name, value] : message.items()) {
      const auto it = field_names_.find(squashed(name));
      if (!field_names_.empty() && it == field_names_.end()) missing_in_pinned_schema(name);
      renamed[it == field_names_.end() ? name : it->second] = value;
    }
    auto binary = registry::protobuf::json_to_binary(*schema_, message_, renamed.dump());
    if (!binary)
      throw streams::SerializationException("Unable to serialize record: " + binary.error);
    return prefix_ + *binary.value;
  }

 private:
  std::shared_ptr<const registry::protobuf::Schema> schema_;
  std::string message_, prefix_;
  std::map<std::string, std::string> field_names_;  // squashed -> the schema's field name
};

}  // namespace

streams::Serde<Row> protobuf_serde(std::vector<Column> columns, bool key,
                                   const RegistrySide& side) {
  auto client = registry_client_or_throw("PROTOBUF");
  std::shared_ptr<registry::Serializer> serializer;
  std::shared_ptr<const PinnedProtobufWriter> pinned;
  if (side.schema_id) {
    pinned =
        std::make_shared<const PinnedProtobufWriter>(*client, *side.schema_id, side.full_name, key);
  } else {
    const registry::SchemaInfo schema = derived_schema("PROTOBUF", columns, true, side);
    serializer = std::make_shared<registry::Serializer>(
        client, registry::SerdeConfig{}, registry::Format::kProtobuf, schema.schema, key);
  }
  auto deserializer = std::make_shared<registry::Deserializer>(client, registry::SerdeConfig{},
                                                               registry::Format::kProtobuf, key);
  auto fields = std::make_shared<std::vector<SqlField>>();
  for (const auto& c : columns) fields->push_back({c.name, c.type});
  auto serialize = [serializer, pinned, fields](std::string_view topic, const Row& row) {
    if (pinned) return pinned->write(message_to_proto(row, *fields));
    try {
      return serializer->serialize(topic, message_to_proto(row, *fields));
    } catch (const registry::SerdeError& e) {
      throw streams::SerializationException(e.what());
    }
  };
  auto deserialize = [deserializer, fields](std::string_view topic, std::string_view bytes) {
    Json message;
    try {
      message = deserializer->deserialize(topic, bytes);
    } catch (const registry::SerdeError& e) {
      unreadable(e.what());
    }
    Row row(fields->size());
    message_from_proto(message, *fields, row);
    return row;
  };
  return streams::Serde<Row>(serialize, deserialize, "PROTOBUF");
}

}  // namespace oxbow::sql::formats
