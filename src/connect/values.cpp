// Values.parseString and convertToString (see values.h): a tokenizer over Connect's delimiters,
// a recursive reader of lists and maps, and the inference of their elements' common schema.
#include "connect/values.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "common/base64.h"
#include "connect/civil_date.h"
#include "oxbow/connect/errors.h"
#include "oxbow/connect/logical.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect::values {
namespace {

constexpr int64_t kMillisPerDay = 86400000;

bool isDelimiter(char c) {
  return c == ':' || c == ',' || c == '{' || c == '}' || c == '[' || c == ']' || c == '"';
}

bool isBlank(std::string_view s) {
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The text split at unescaped delimiters, each delimiter a token of its own.
std::vector<std::string_view> tokenize(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      escaped = !escaped;
      continue;
    }
    if (isDelimiter(c) && !escaped) {
      if (start < i) tokens.push_back(text.substr(start, i - start));
      tokens.push_back(text.substr(i, 1));
      start = i + 1;
    }
    escaped = false;
  }
  if (start < text.size()) tokens.push_back(text.substr(start));
  return tokens;
}

std::optional<int64_t> digits(std::string_view s, size_t pos, size_t n) {
  int64_t v = 0;
  if (pos + n > s.size()) return std::nullopt;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

std::optional<int64_t> dateMillis(std::string_view s) {
  auto y = digits(s, 0, 4), m = digits(s, 5, 2), d = digits(s, 8, 2);
  if (!y || !m || !d || s[4] != '-' || s[7] != '-' || *m < 1 || *m > 12 || *d < 1 || *d > 31)
    return std::nullopt;
  return daysFromCivil(*y, *m, *d) * kMillisPerDay;
}

std::optional<int64_t> timeMillis(std::string_view s) {
  auto h = digits(s, 0, 2), m = digits(s, 3, 2), sec = digits(s, 6, 2), ms = digits(s, 9, 3);
  if (!h || !m || !sec || !ms || s[2] != ':' || s[5] != ':' || s[8] != '.' || s[12] != 'Z')
    return std::nullopt;
  return ((*h * 60 + *m) * 60 + *sec) * 1000 + *ms;
}

// A Date (yyyy-MM-dd), Time (HH:mm:ss.SSSZ) or Timestamp (both, joined by T).
std::optional<SchemaAndValue> temporal(std::string token) {
  for (size_t p; (p = token.find("\\:")) != std::string::npos;) token.erase(p, 1);
  if (token.size() == 13) {
    if (auto t = timeMillis(token)) return SchemaAndValue{Time::SCHEMA, DateTime{*t}};
  } else if (token.size() == 24 && token[10] == 'T') {
    auto d = dateMillis(token.substr(0, 10));
    auto t = timeMillis(std::string_view(token).substr(11));
    if (d && t) return SchemaAndValue{Timestamp::SCHEMA, DateTime{*d + *t}};
  } else if (token.size() == 10) {
    if (auto d = dateMillis(token)) return SchemaAndValue{Date::SCHEMA, DateTime{*d}};
  }
  return std::nullopt;
}

std::optional<SchemaAndValue> number(std::string_view token) {
  int64_t integral = 0;
  std::string_view unsigned_ = token.front() == '+' ? token.substr(1) : token;
  auto [end, error] =
      std::from_chars(unsigned_.data(), unsigned_.data() + unsigned_.size(), integral);
  if (error == std::errc() && end == unsigned_.data() + unsigned_.size()) {
    if (integral == static_cast<int8_t>(integral))
      return SchemaAndValue{Schema::INT8_SCHEMA, static_cast<int8_t>(integral)};
    if (integral == static_cast<int16_t>(integral))
      return SchemaAndValue{Schema::INT16_SCHEMA, static_cast<int16_t>(integral)};
    if (integral == static_cast<int32_t>(integral))
      return SchemaAndValue{Schema::INT32_SCHEMA, static_cast<int32_t>(integral)};
    return SchemaAndValue{Schema::INT64_SCHEMA, integral};
  }
  DecimalValue decimal;
  try {
    decimal = DecimalValue::parse(unsigned_);
  } catch (const DataException&) {
    return std::nullopt;
  }
  const double d = std::strtod(std::string(unsigned_).c_str(), nullptr);
  const float f = static_cast<float>(d);
  if (decimal.scale() != 0 && std::isfinite(f)) return SchemaAndValue{Schema::FLOAT32_SCHEMA, f};
  if (decimal.scale() != 0 && std::isfinite(d)) return SchemaAndValue{Schema::FLOAT64_SCHEMA, d};
  return SchemaAndValue{Decimal::schema(decimal.scale()), decimal};
}

// The common schema of a list's elements or a map's keys or values (Values' SchemaMerger): the
// first schema, widened among the numbers; none once two do not fit together.
class SchemaMerger {
 public:
  void merge(const SchemaAndValue& v) {
    if (!v.schema || !compatible_) return;
    if (!common_) {
      common_ = v.schema;
      return;
    }
    common_ = mergeSchemas(common_, v.schema);
    compatible_ = common_ != nullptr;
  }
  const SchemaPtr& schema() const { return common_; }

 private:
  static int rank(Type t) {
    switch (t) {
      case Type::INT8:
        return 1;
      case Type::INT16:
        return 2;
      case Type::INT32:
        return 3;
      case Type::INT64:
        return 4;
      case Type::FLOAT32:
        return 5;
      case Type::FLOAT64:
        return 6;
      default:
        return 0;
    }
  }
  static SchemaPtr mergeSchemas(const SchemaPtr& a, const SchemaPtr& b) {
    if (a->type() != b->type()) {
      const int ra = rank(a->type()), rb = rank(b->type());
      if (ra == 0 || rb == 0 || a->name() || b->name()) return nullptr;
      return ra > rb ? a : b;
    }
    if (a->isOptional() == b->isOptional()) return a->isOptional() ? a : b;
    return *a == *b ? a : nullptr;
  }
  SchemaPtr common_;
  bool compatible_ = true;
};

// A number widened to a numeric type (the elements aligned with their common schema).
Value widened(const Value& v, Type type) {
  double d = 0;
  int64_t i = 0;
  switch (v.kind()) {
    case Value::Kind::Int8:
      i = v.asInt8();
      d = static_cast<double>(i);
      break;
    case Value::Kind::Int16:
      i = v.asInt16();
      d = static_cast<double>(i);
      break;
    case Value::Kind::Int32:
      i = v.asInt32();
      d = static_cast<double>(i);
      break;
    case Value::Kind::Int64:
      i = v.asInt64();
      d = static_cast<double>(i);
      break;
    case Value::Kind::Float32:
      d = v.asFloat32();
      break;
    default:
      return v;
  }
  switch (type) {
    case Type::INT16:
      return static_cast<int16_t>(i);
    case Type::INT32:
      return static_cast<int32_t>(i);
    case Type::INT64:
      return i;
    case Type::FLOAT32:
      return static_cast<float>(d);
    case Type::FLOAT64:
      return d;
    default:
      return v;
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), tokens_(tokenize(text)) {}

  // nullopt for null; DataException when a list or map is malformed (embedded values only).
  std::optional<SchemaAndValue> parse(bool embedded) {
    skipBlank();
    if (pos_ >= tokens_.size()) return std::nullopt;
    if (embedded && consume("\"")) return quoted();
    for (const char* literal : {"null", "true", "false"}) {
      const size_t mark = pos_;
      if (consume(literal) && (embedded || atEnd())) {
        if (literal[0] == 'n') return std::nullopt;
        return SchemaAndValue{Schema::BOOLEAN_SCHEMA, Value(literal[0] == 't')};
      }
      pos_ = mark;
    }
    const size_t mark = pos_;
    try {
      if (consume("[")) return list();
      if (consume("{")) return map();
    } catch (const DataException&) {
      pos_ = mark;
    }
    const std::string_view token = tokens_[pos_++];
    if (isBlank(token)) return SchemaAndValue{Schema::STRING_SCHEMA, std::string(token)};
    return scalar(embedded, std::string(trimmed(token)));
  }

  bool atEnd() {
    skipBlank();
    return pos_ >= tokens_.size();
  }

 private:
  void skipBlank() {
    while (pos_ < tokens_.size() && isBlank(tokens_[pos_]) && pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool consume(std::string_view expected) {
    skipBlank();
    if (pos_ < tokens_.size() && trimmed(tokens_[pos_]) == expected) {
      ++pos_;
      return true;
    }
    return false;
  }

  SchemaAndValue scalar(bool embedded, const std::string& token) {
    const bool digit = std::isdigit(static_cast<unsigned char>(token[0]));
    if (digit) {
      // A time's colons split it into five tokens.
      if (pos_ + 4 <= tokens_.size()) {
        std::string joined = token;
        for (size_t i = 0; i < 4; ++i) joined += tokens_[pos_ + i];
        if (auto t = temporal(joined)) {
          pos_ += 4;
          return *t;
        }
      }
      if (auto t = temporal(token)) return *t;
    }
    if (digit || token[0] == '+' || token[0] == '-')
      if (auto n = number(token)) return *n;
    if (embedded) throw DataException("Failed to parse embedded value");
    pos_ = tokens_.size();
    return {Schema::STRING_SCHEMA, std::string(text_)};
  }

  SchemaAndValue quoted() {
    std::string content;
    while (pos_ < tokens_.size()) {
      if (tokens_[pos_] == "\"") {
        ++pos_;
        break;
      }
      content += tokens_[pos_++];
    }
    if (auto t = temporal(content)) return *t;
    return {Schema::STRING_SCHEMA, content};
  }

  SchemaAndValue list() {
    ValueList elements;
    SchemaMerger merger;
    while (pos_ < tokens_.size()) {
      if (consume("]")) {
        if (!merger.schema()) return {arrayOfNull(), std::move(elements)};
        for (Value& e : elements) e = widened(e, merger.schema()->type());
        return {SchemaBuilder::array(merger.schema()).build(), std::move(elements)};
      }
      if (consume(",")) throw DataException("Unable to parse an empty array element: " + text());
      std::optional<SchemaAndValue> element = parse(true);
      if (element) merger.merge(*element);
      elements.push_back(element ? element->value : Value());
      const size_t mark = pos_;
      if (consume("]"))
        pos_ = mark;
      else if (!consume(","))
        throw DataException("Array elements missing ',' delimiter");
    }
    throw DataException("Array is missing terminating ']': " + text());
  }

  SchemaAndValue map() {
    ValueMap entries;
    SchemaMerger keys, values;
    while (pos_ < tokens_.size()) {
      if (consume("}")) {
        if (!keys.schema()) return {mapOf(nullptr, nullptr), std::move(entries)};
        for (auto& [k, v] : entries) {
          k = widened(k, keys.schema()->type());
          if (values.schema()) v = widened(v, values.schema()->type());
        }
        return {mapOf(keys.schema(), values.schema()), std::move(entries)};
      }
      if (consume(","))
        throw DataException("Unable to parse a map entry with no key or value: " + text());
      std::optional<SchemaAndValue> key = parse(true);
      if (!key || key->value.isNull())
        throw DataException("Map entry may not have a null key: " + text());
      if (!consume(":")) throw DataException("Map entry is missing ':' in " + text());
      std::optional<SchemaAndValue> value = parse(true);
      entries.emplace_back(key->value, value ? value->value : Value());
      consume(",");
      keys.merge(*key);
      if (value) values.merge(*value);
    }
    throw DataException("Map is missing terminating '}': " + text());
  }

  static SchemaPtr arrayOfNull() {
    return std::make_shared<Schema>(Type::ARRAY, false, Value(), std::nullopt, std::nullopt,
                                    std::nullopt, std::nullopt, std::vector<Field>{}, nullptr,
                                    nullptr);
  }
  static SchemaPtr mapOf(SchemaPtr key, SchemaPtr value) {
    return std::make_shared<Schema>(Type::MAP, false, Value(), std::nullopt, std::nullopt,
                                    std::nullopt, std::nullopt, std::vector<Field>{},
                                    std::move(key), std::move(value));
  }
  std::string text() const { return std::string(text_); }

  std::string_view text_;
  std::vector<std::string_view> tokens_;
  size_t pos_ = 0;
};

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

// Values.dateFormatFor: a time within the epoch's first day, a date at midnight, else both.
std::string dateText(const Value& v) {
  const int64_t millis = v.asDateTime().epochMillis;
  const std::string full = v.toString();  // yyyy-MM-ddTHH:mm:ss.SSSZ
  if (millis >= 0 && millis < kMillisPerDay) return full.substr(11);
  if (millis % kMillisPerDay == 0) return full.substr(0, 10);
  return full;
}

void append(std::string& out, const Value& v, bool embedded) {
  switch (v.kind()) {
    case Value::Kind::String:
      out += embedded ? "\"" + escaped(v.asString()) + "\"" : v.asString();
      return;
    case Value::Kind::Bytes:
      out += embedded ? "\"" + base64(v.asBytes().data) + "\"" : base64(v.asBytes().data);
      return;
    case Value::Kind::DateTime:
      out += dateText(v);
      return;
    case Value::Kind::Array: {
      out += '[';
      bool first = true;
      for (const Value& e : v.asList()) {
        if (!first) out += ',';
        first = false;
        append(out, e, true);
      }
      out += ']';
      return;
    }
    case Value::Kind::Map: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.asMap()) {
        if (!first) out += ',';
        first = false;
        append(out, k, true);
        out += ':';
        append(out, e, true);
      }
      out += '}';
      return;
    }
    case Value::Kind::Struct: {
      const Struct& s = v.asStruct();
      out += '{';
      bool first = true;
      for (const Field& f : s.schema()->fields()) {
        if (!first) out += ',';
        first = false;
        append(out, Value(f.name()), true);
        out += ':';
        append(out, s.get(f), true);
      }
      out += '}';
      return;
    }
    default:
      out += v.toString();  // null, booleans and numbers as Java prints them
  }
}

}  // namespace

SchemaAndValue parseString(std::string_view text) {
  if (text.empty()) return {Schema::STRING_SCHEMA, std::string()};
  Parser parser(text);
  std::optional<SchemaAndValue> parsed = parser.parse(false);
  if (!parsed) return {};
  if (!parser.atEnd()) return {Schema::STRING_SCHEMA, std::string(text)};
  return *parsed;
}

std::string convertToString(const SchemaPtr&, const Value& value) {
  std::string out;
  append(out, value, false);
  return out;
}

}  // namespace oxbow::connect::values
