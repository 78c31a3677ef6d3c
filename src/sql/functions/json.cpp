// JSON functions over JSON text (ksqlDB's JSON category), through nlohmann's parser with the
// keys of objects kept in their order, as Jackson keeps them.
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

using Json = nlohmann::ordered_json;

// The text as JSON; false when it is not JSON.
bool parse(const std::string& text, Json& out) {
  out = Json::parse(text, nullptr, false);
  return !out.is_discarded();
}

// An argument read as ksqlDB's JSON functions read it (Jackson's readTree): blank text is the
// missing node, for which they return NULL; text that is not JSON makes them throw, which fails
// the whole expression. True with the JSON; false when the call's result is already decided.
bool read_argument(FunctionCall& call, const std::string& text, Json& out) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return call.null_result(), false;
  if (parse(text, out)) return true;
  call.fail("Invalid JSON format:" + text);
  return false;
}

std::string text_of(const Json& j) {
  return j.is_string() ? j.get<std::string>() : j.dump();
}

void is_json_string(FunctionCall& call) {
  Json j;
  call.out().set_boolean(!call[0].is_null() && parse(call[0].text(), j));
}

void json_array_length(FunctionCall& call) {
  Json j;
  if (!read_argument(call, call[0].text(), j)) return;
  if (!j.is_array()) return call.null_result();
  call.out().set_integer(static_cast<int32_t>(j.size()));
}

void json_keys(FunctionCall& call) {
  Json j;
  if (!read_argument(call, call[0].text(), j)) return;
  if (!j.is_object()) return call.null_result();
  std::vector<Value> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(string_value(key));
  set_items(call.out(), Kind::kArray, std::move(keys));
}

// Each member of an object as (key, JSON text) or each element of an array as JSON text.
void json_records(FunctionCall& call) {
  Json j;
  if (!read_argument(call, call[0].text(), j)) return;
  if (!j.is_object()) return call.null_result();
  std::vector<Value> items;
  for (const auto& [key, value] : j.items()) {
    items.push_back(string_value(key));
    items.push_back(string_value(value.dump()));
  }
  set_items(call.out(), Kind::kMap, std::move(items));
}

void json_items(FunctionCall& call) {
  Json j;
  // Jackson reads the text as a list: anything else, blank text too, throws.
  if (!parse(call[0].text(), j) || !j.is_array())
    return call.fail("Invalid JSON format:" + call[0].text());
  std::vector<Value> items;
  for (const auto& e : j) items.push_back(string_value(e.dump()));
  set_items(call.out(), Kind::kArray, std::move(items));
}

// PostgreSQL's ||: two objects merge (the right's members winning), arrays join, and a value
// that is not an array counts as an array of itself. NULL if any is NULL or blank.
void json_concat(FunctionCall& call) {
  Json result;
  for (size_t k = 0; k < call.size(); ++k) {
    Json next;
    if (call[k].is_null()) return call.null_result();
    if (!read_argument(call, call[k].text(), next)) return;
    if (k == 0) {
      result = std::move(next);
    } else if (result.is_object() && next.is_object()) {
      for (auto& [key, value] : next.items()) result[key] = value;
    } else {
      Json joined = result.is_array() ? result : Json::array({result});
      if (next.is_array())
        for (auto& e : next) joined.push_back(e);
      else
        joined.push_back(next);
      result = std::move(joined);
    }
  }
  set_string(call.out(), result.dump());
}

// The value as JSON, struct fields named by its type.
Json to_json(const Value& v, const SqlType* type) {
  switch (v.kind()) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBoolean:
      return v.boolean();
    case Kind::kInteger:
      return v.integer();
    case Kind::kBigint:
      return v.bigint();
    case Kind::kDouble:
      return v.dbl();
    case Kind::kDecimal:
      return Json::parse(decimal_text(v.unscaled(), v.scale()));
    case Kind::kString:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return ops::cast_text(v);
    case Kind::kBytes:
      return base64(v.text());
    case Kind::kArray: {
      Json out = Json::array();
      for (const auto& e : v.items())
        out.push_back(to_json(e, type ? type->element().get() : nullptr));
      return out;
    }
    case Kind::kMap: {
      Json out = Json::object();
      const auto& items = v.items();
      for (size_t k = 0; k + 1 < items.size(); k += 2)
        out[ops::cast_text(items[k])] =
            to_json(items[k + 1], type ? type->element().get() : nullptr);
      return out;
    }
    case Kind::kStruct: {
      Json out = Json::object();
      const auto& items = v.items();
      for (size_t k = 0; k < items.size(); ++k) {
        const SqlField* f = type && k < type->fields().size() ? &type->fields()[k] : nullptr;
        out[f ? f->name : "F" + std::to_string(k)] = to_json(items[k], f ? f->type.get() : nullptr);
      }
      return out;
    }
  }
  return nullptr;
}

void to_json_string(FunctionCall& call) {
  set_string(call.out(), to_json(call[0], call.arg_type(0).get()).dump());
}

// Whether a JSON array holds a value equal to the argument (false for anything else).
void json_array_contains(FunctionCall& call) {
  Json j;
  if (call[0].is_null() || !parse(call[0].text(), j) || !j.is_array())
    return call.out().set_boolean(false);
  Json wanted = to_json(call[1], call.arg_type(1).get());
  bool found = false;
  for (const auto& e : j) {
    bool numbers = e.is_number() && wanted.is_number();
    found = found || (numbers ? e.get<double>() == wanted.get<double>() : e == wanted);
  }
  call.out().set_boolean(found);
}

// A JSONPath of member names and indexes: $.a.b, $['a'], $.a[0].
bool follow(const std::string& path, const Json& root, const Json*& at) {
  at = &root;
  size_t i = path.rfind('$', 0) == 0 ? 1 : 0;
  while (i < path.size()) {
    std::string key;
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      key = path.substr(i + 1, end - i - 1);
      i = end == std::string::npos ? path.size() : end;
    } else if (path[i] == '[') {
      size_t end = path.find(']', i);
      if (end == std::string::npos) return false;
      key = path.substr(i + 1, end - i - 1);
      i = end + 1;
      if (!key.empty() && (key[0] == '\'' || key[0] == '"')) {
        key = key.substr(1, key.size() - 2);
      } else if (at->is_array()) {
        char* rest = nullptr;
        long n = std::strtol(key.c_str(), &rest, 10);
        if (*rest || n < 0 || static_cast<size_t>(n) >= at->size()) return false;
        at = &(*at)[static_cast<size_t>(n)];
        continue;
      }
    } else {
      return false;
    }
    if (!at->is_object() || !at->contains(key)) return false;
    at = &(*at)[key];
  }
  return true;
}

void extract_json_field(FunctionCall& call) {
  Json j;
  const Json* at = nullptr;
  if (!read_argument(call, call[0].text(), j)) return;
  if (!follow(call[1].text(), j, at) || at->is_null()) return call.null_result();
  set_string(call.out(), text_of(*at));
}

}  // namespace

void add_json_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar_seeing_nulls("IS_JSON_STRING", kJson, "Whether the string is valid JSON.",
                                    {signature("input VARCHAR", "BOOLEAN", is_json_string)}));
  out.push_back(scalar("JSON_ARRAY_LENGTH", kJson,
                       "The length of a JSON array, NULL for other JSON.",
                       {signature("jsonArray VARCHAR", "INT", json_array_length)}));
  out.push_back(scalar("JSON_KEYS", kJson, "The keys of a JSON object, NULL for other JSON.",
                       {signature("jsonObj VARCHAR", "ARRAY<VARCHAR>", json_keys)}));
  out.push_back(scalar("JSON_RECORDS", kJson,
                       "The members of a JSON object, their values as JSON text; NULL for "
                       "other JSON.",
                       {signature("jsonObj VARCHAR", "MAP<VARCHAR, VARCHAR>", json_records)}));
  out.push_back(scalar("JSON_ITEMS", kJson, "The elements of a JSON array as JSON text.",
                       {signature("jsonItems VARCHAR", "ARRAY<VARCHAR>", json_items)}));
  out.push_back(scalar_seeing_nulls(
      "JSON_CONCAT", kJson,
      "JSON values joined as PostgreSQL's || joins them (objects merged, arrays appended).",
      {signature("jsonStrings VARCHAR...", "VARCHAR", json_concat)}));
  out.push_back(scalar_seeing_nulls("TO_JSON_STRING", kJson, "Any value as JSON text.",
                                    {signature("input T", "VARCHAR", to_json_string)}));
  out.push_back(scalar_seeing_nulls(
      "JSON_ARRAY_CONTAINS", kJson,
      "Whether a JSON array holds the value; false for anything that is not an array.",
      {signature("jsonArray VARCHAR, val T", "BOOLEAN", json_array_contains)}));
  out.push_back(
      scalar("EXTRACTJSONFIELD", kJson,
             "The value at a JSONPath ($.a.b[0]) in JSON text: a string as it is, anything else as "
             "JSON; NULL where there is none.",
             {signature("input VARCHAR, path VARCHAR", "VARCHAR", extract_json_field)}));
}

}  // namespace oxbow::sql::functions
