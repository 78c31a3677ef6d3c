// Checking a document against a loaded schema, with everit's semantics (a keyword of a kind the
// value is not, such as minLength on a number without "type", does not apply) and much of its
// wording. Formats are not checked.
#include <cmath>
#include <set>

#include "registry/json/node.h"

namespace oxbow::registry::json::detail {

namespace {

// Deepest the schema and document may take the check; $ref cycles that consume no document
// (`{"$ref":"#"}`) end here instead of overflowing the stack.
constexpr int kMaxDepth = 512;

using Json = nlohmann::json;
using Error = std::optional<std::string>;

const char* java_type(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object:
      return "JSONObject";
    case Json::value_t::array:
      return "JSONArray";
    case Json::value_t::string:
      return "String";
    case Json::value_t::boolean:
      return "Boolean";
    case Json::value_t::null:
      return "Null";
    case Json::value_t::number_float:
      return "BigDecimal";
    default:
      return "Integer";
  }
}

bool integral(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

std::string number_text(double d) {
  Json j = d;
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 1e15) j = static_cast<int64_t>(d);
  return j.dump();
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

class Validator {
 public:
  Error check(const Node& s, const Json& v, const std::string& at) {
    if (++depth_ > kMaxDepth && !exhausted_)
      exhausted_ = at + ": schema or document nested too deeply to validate";
    // Once the cap is hit the answer is unknown: that, not a branch's verdict, is the result.
    Error e = exhausted_ ? exhausted_ : dispatch(s, v, at);
    --depth_;
    return exhausted_ ? exhausted_ : e;
  }

 private:
  static Error fail(const std::string& at, const std::string& what) { return at + ": " + what; }
  static Error expected(const std::string& at, const char* type, const Json& v) {
    return fail(at, std::string("expected type: ") + type + ", found: " + java_type(v));
  }

  Error dispatch(const Node& s, const Json& v, const std::string& at) {
    switch (s.kind) {
      case Kind::kEmpty:
      case Kind::kTrue:
        return std::nullopt;
      case Kind::kFalse:
        return fail(at, "false schema always fails");
      case Kind::kRef:
        return check(*s.target, v, at);
      case Kind::kString:
        return string(s, v, at);
      case Kind::kNumber:
        return number(s, v, at);
      case Kind::kBoolean:
        return v.is_boolean() ? std::nullopt : expected(at, "Boolean", v);
      case Kind::kNull:
        return v.is_null() ? std::nullopt : expected(at, "Null", v);
      case Kind::kObject:
        return object(s, v, at);
      case Kind::kArray:
        return array(s, v, at);
      case Kind::kEnum:
        for (const auto& allowed : s.values)
          if (allowed == v) return std::nullopt;
        return fail(at, v.dump() + " is not a valid enum value");
      case Kind::kConst:
        return s.values[0] == v ? std::nullopt : fail(at, "value does not match the const");
      case Kind::kCombined:
        return combined(s, v, at);
      case Kind::kNot:
        if (!check(*s.subschemas[0], v, at))
          return fail(at, "subject must not be valid against schema");
        return std::nullopt;
      case Kind::kConditional: {
        const Node *if_s = s.subschemas[0], *then_s = s.subschemas[1], *else_s = s.subschemas[2];
        if (!if_s) return std::nullopt;
        if (!check(*if_s, v, at)) return then_s ? check(*then_s, v, at) : std::nullopt;
        return else_s ? check(*else_s, v, at) : std::nullopt;
      }
    }
    return std::nullopt;
  }

  Error string(const Node& s, const Json& v, const std::string& at) {
    if (!v.is_string()) return s.requires_string ? expected(at, "String", v) : std::nullopt;
    const auto& text = v.get_ref<const std::string&>();
    int64_t length = static_cast<int64_t>(code_points(text));
    if (s.min_length && length < *s.min_length)
      return fail(at, "expected minLength: " + std::to_string(*s.min_length) +
                          ", actual: " + std::to_string(length));
    if (s.max_length && length > *s.max_length)
      return fail(at, "expected maxLength: " + std::to_string(*s.max_length) +
                          ", actual: " + std::to_string(length));
    if (s.pattern && s.pattern->find(text) == false)
      return fail(at, "string [" + text + "] does not match pattern " + s.pattern->source());
    return std::nullopt;
  }

  Error number(const Node& s, const Json& v, const std::string& at) {
    if (!v.is_number()) {
      if (s.requires_integer) return expected(at, "Integer", v);
      return s.requires_number ? expected(at, "Number", v) : std::nullopt;
    }
    if (s.requires_integer && !integral(v)) return expected(at, "Integer", v);
    double d = v.get<double>();
    std::string text = v.dump();
    if (s.minimum && (s.minimum_exclusive ? d <= *s.minimum : d < *s.minimum))
      return fail(
          at, text +
                  (s.minimum_exclusive ? " is not greater than " : " is not greater or equal to ") +
                  number_text(*s.minimum));
    if (s.maximum && (s.maximum_exclusive ? d >= *s.maximum : d > *s.maximum))
      return fail(
          at, text + (s.maximum_exclusive ? " is not less than " : " is not less or equal to ") +
                  number_text(*s.maximum));
    if (s.exclusive_minimum && d <= *s.exclusive_minimum)
      return fail(at, text + " is not greater than " + number_text(*s.exclusive_minimum));
    if (s.exclusive_maximum && d >= *s.exclusive_maximum)
      return fail(at, text + " is not less than " + number_text(*s.exclusive_maximum));
    if (s.multiple_of && *s.multiple_of != 0) {
      double q = d / *s.multiple_of;
      if (!std::isfinite(q) || std::fabs(q - std::round(q)) > 1e-9 * std::max(1.0, std::fabs(q)))
        return fail(at, text + " is not a multiple of " + number_text(*s.multiple_of));
    }
    return std::nullopt;
  }

  Error object(const Node& s, const Json& v, const std::string& at) {
    if (!v.is_object()) return s.requires_object ? expected(at, "JSONObject", v) : std::nullopt;
    for (const auto& name : s.required)
      if (!v.contains(name)) return fail(at, "required key [" + name + "] not found");
    for (const auto& [name, value] : v.items()) {
      std::string here = at + "/" + name;
      bool declared = false;
      for (const auto& [pname, pschema] : s.properties) {
        if (pname != name) continue;
        declared = true;
        if (Error e = check(*pschema, value, here)) return e;
      }
      for (const auto& [pattern, pschema] : s.pattern_properties) {
        if (pattern->find(name) == false) continue;
        declared = true;
        if (Error e = check(*pschema, value, here)) return e;
      }
      if (!declared && !s.permits_additional)
        return fail(at, "extraneous key [" + name + "] is not permitted");
      if (!declared && s.additional)
        if (Error e = check(*s.additional, value, here)) return e;
      if (s.property_names)
        if (Error e = check(*s.property_names, Json(name), here)) return e;
    }
    for (const auto& [name, needed] : s.property_dependencies) {
      if (!v.contains(name)) continue;
      for (const auto& other : needed)
        if (!v.contains(other)) return fail(at, "property [" + other + "] is required");
    }
    for (const auto& [name, dependency] : s.schema_dependencies)
      if (v.contains(name))
        if (Error e = check(*dependency, v, at)) return e;
    int64_t size = static_cast<int64_t>(v.size());
    if (s.min_properties && size < *s.min_properties)
      return fail(at, "minimum size: [" + std::to_string(*s.min_properties) + "], found: [" +
                          std::to_string(size) + "]");
    if (s.max_properties && size > *s.max_properties)
      return fail(at, "maximum size: [" + std::to_string(*s.max_properties) + "], found: [" +
                          std::to_string(size) + "]");
    return std::nullopt;
  }

  Error array(const Node& s, const Json& v, const std::string& at) {
    if (!v.is_array()) return s.requires_array ? expected(at, "JSONArray", v) : std::nullopt;
    int64_t size = static_cast<int64_t>(v.size());
    if (s.min_items && size < *s.min_items)
      return fail(at, "expected minimum item count: " + std::to_string(*s.min_items) +
                          ", found: " + std::to_string(size));
    if (s.max_items && size > *s.max_items)
      return fail(at, "expected maximum item count: " + std::to_string(*s.max_items) +
                          ", found: " + std::to_string(size));
    if (s.unique_items) {
      std::set<Json> seen;
      for (const auto& item : v)
        if (!seen.insert(item).second) return fail(at, "array items are not unique");
    }
    for (size_t i = 0; i < v.size(); ++i) {
      std::string here = at + "/" + std::to_string(i);
      if (s.all_items) {
        if (Error e = check(*s.all_items, v[i], here)) return e;
      } else if (i < s.item_schemas.size()) {
        if (Error e = check(*s.item_schemas[i], v[i], here)) return e;
      } else if (!s.item_schemas.empty() || s.additional_items) {
        if (!s.permits_additional_items)
          return fail(at, "expected: [" + std::to_string(s.item_schemas.size()) +
                              "] array items, found: [" + std::to_string(size) + "]");
        if (s.additional_items)
          if (Error e = check(*s.additional_items, v[i], here)) return e;
      }
    }
    if (s.contains) {
      bool any = false;
      for (const auto& item : v)
        if (!check(*s.contains, item, at)) {
          any = true;
          break;
        }
      if (!any) return fail(at, "expected at least one array item to match 'contains' schema");
    }
    return std::nullopt;
  }

  Error combined(const Node& s, const Json& v, const std::string& at) {
    size_t matched = 0;
    Error first;
    for (const Node* sub : s.subschemas) {
      Error e = check(*sub, v, at);
      if (!e)
        ++matched;
      else if (!first)
        first = e;
      if (e && s.criterion == Criterion::kAll) return e;
    }
    size_t total = s.subschemas.size();
    if (s.criterion == Criterion::kAny && matched == 0 && total > 0)
      return fail(at, "no subschema matched out of the total " + std::to_string(total) +
                          " subschemas" + (first ? " (" + *first + ")" : ""));
    if (s.criterion == Criterion::kOne && matched != 1)
      return fail(at, std::to_string(matched) + " subschemas matched instead of one");
    return std::nullopt;
  }

  int depth_ = 0;
  Error exhausted_;
};

}  // namespace

std::optional<std::string> validate(const Node& schema, const nlohmann::json& doc) {
  Validator v;
  return v.check(schema, doc, "#");
}

}  // namespace oxbow::registry::json::detail
