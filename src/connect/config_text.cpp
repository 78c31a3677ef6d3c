// ConfigDef's text rules: a property's text parsed by type as Kafka's ConfigDef.parseType does
// (Java's trim, Integer.parseInt, Double.parseDouble, the list split), and values printed as Java
// prints them in Kafka's messages.
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "oxbow/connect/config_def.h"

namespace oxbow::connect {

ConfigException::ConfigException(std::string_view name, std::string_view value,
                                 std::string_view message)
    : std::runtime_error("Invalid value " + std::string(value) + " for configuration " +
                         std::string(name) + (message.empty() ? "" : ": " + std::string(message))) {
}

namespace {

// Java's String.trim: every character up to U+0020 counts as blank.
std::string_view javaTrim(std::string_view text) {
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  return text;
}

// Java regex \s: what COMMA_WITH_WHITESPACE strips around each comma.
bool isRegexSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\x0B' || c == '\f' || c == '\r';
}

std::string stripRegexSpace(std::string_view text) {
  while (!text.empty() && isRegexSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isRegexSpace(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// Integer.parseInt / Long.parseLong / Short.parseShort: an optional sign and ASCII digits, in
// the type's range.
std::optional<int64_t> parseJavaInteger(std::string_view text, int64_t min, int64_t max) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.front() == '+' || text.front() == '-') return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  constexpr uint64_t kLongMinMagnitude = uint64_t{1} << 63;
  if (magnitude > kLongMinMagnitude || (magnitude == kLongMinMagnitude && !negative)) {
    return std::nullopt;
  }
  int64_t value = 0;
  if (magnitude == kLongMinMagnitude) {
    value = std::numeric_limits<int64_t>::min();
  } else {
    value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

bool allDigits(std::string_view text) {
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Double.parseDouble for decimal text: sign, digits with an optional point (a digit on either
// side), an optional exponent, an optional f/F/d/D suffix; NaN and Infinity. Hexadecimal floats
// are not read.
std::optional<double> parseJavaDouble(std::string_view text) {
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (body == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (body == "Infinity") {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  bool suffixed =
      !body.empty() && std::string_view("fFdD").find(body.back()) != std::string_view::npos;
  if (suffixed) body.remove_suffix(1);
  size_t exponent = body.find_first_of("eE");
  std::string_view mantissa = body.substr(0, exponent);
  if (exponent != std::string_view::npos) {
    std::string_view digits = body.substr(exponent + 1);
    if (!digits.empty() && (digits.front() == '+' || digits.front() == '-'))
      digits.remove_prefix(1);
    if (digits.empty() || !allDigits(digits)) return std::nullopt;
  }
  size_t point = mantissa.find('.');
  std::string_view whole = mantissa.substr(0, point);
  std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : mantissa.substr(point + 1);
  if ((whole.empty() && fraction.empty()) || !allDigits(whole) || !allDigits(fraction)) {
    return std::nullopt;
  }
  std::string number(text.substr(0, text.size() - (suffixed ? 1 : 0)));
  return std::strtod(number.c_str(), nullptr);
}

std::vector<std::string> parseList(std::string_view trimmed) {
  std::vector<std::string> items;
  if (trimmed.empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = trimmed.find(',', start);
    items.push_back(stripRegexSpace(trimmed.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

ParsedValue parseInteger(const std::string& name, const std::string& text, std::string_view trimmed,
                         ConfigDef::Type type) {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  if (type == ConfigDef::Type::INT) {
    min = std::numeric_limits<int32_t>::min();
    max = std::numeric_limits<int32_t>::max();
  } else if (type == ConfigDef::Type::SHORT) {
    min = std::numeric_limits<int16_t>::min();
    max = std::numeric_limits<int16_t>::max();
  }
  std::optional<int64_t> value = parseJavaInteger(trimmed, min, max);
  if (!value) {
    throw ConfigException(name, text,
                          "Not a number of type " + std::string(ConfigDef::typeName(type)));
  }
  if (type == ConfigDef::Type::INT) return static_cast<int32_t>(*value);
  if (type == ConfigDef::Type::SHORT) return static_cast<int16_t>(*value);
  return *value;
}

// Java's Double.toString: plain between 10^-3 and 10^7, else d.dddE±n; always a fraction digit.
std::string javaDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buffer[64];
  auto end =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific).ptr;
  std::string scientific(buffer, end);  // "-1.2345e+03"
  size_t e = scientific.find('e');
  int exponent = std::atoi(scientific.c_str() + e + 1);
  std::string sign = scientific[0] == '-' ? "-" : "";
  std::string digits;
  for (char c : scientific.substr(sign.size(), e - sign.size())) {
    if (c != '.') digits += c;
  }
  double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    std::string whole;
    std::string fraction;
    if (exponent >= 0) {
      digits.resize(std::max<size_t>(digits.size(), exponent + 1), '0');
      whole = digits.substr(0, exponent + 1);
      fraction = digits.substr(exponent + 1);
    } else {
      whole = "0";
      fraction = std::string(-exponent - 1, '0') + digits;
    }
    return sign + whole + "." + (fraction.empty() ? "0" : fraction);
  }
  std::string fraction = digits.size() > 1 ? digits.substr(1) : "0";
  return sign + digits.substr(0, 1) + "." + fraction + "E" + std::to_string(exponent);
}

}  // namespace

std::string Number::toString() const {
  return integral_ ? std::to_string(long_) : javaDouble(double_);
}

std::string toJavaString(const ParsedValue& value) {
  struct Visitor {
    std::string operator()(std::monostate) const { return "null"; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int16_t v) const { return std::to_string(v); }
    std::string operator()(int32_t v) const { return std::to_string(v); }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return javaDouble(v); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const Password& v) const { return v.toString(); }
    std::string operator()(const std::vector<std::string>& v) const {
      std::string text = "[";
      for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + v[i];
      return text + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

std::optional<std::string> convertToString(const ParsedValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return std::nullopt;
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    std::string text;
    for (size_t i = 0; i < list->size(); ++i) text += (i ? "," : "") + (*list)[i];
    return text;
  }
  return toJavaString(value);
}

ParsedValue ConfigDef::parseType(const std::string& name, const std::string& text, Type type) {
  std::string_view trimmed = javaTrim(text);
  switch (type) {
    case Type::BOOLEAN:
      if (equalsIgnoreCase(trimmed, "true")) return true;
      if (equalsIgnoreCase(trimmed, "false")) return false;
      throw ConfigException(name, text, "Expected value to be either true or false");
    case Type::PASSWORD:
      return Password(std::string(trimmed));
    case Type::STRING:
    case Type::CLASS:
      return std::string(trimmed);
    case Type::INT:
    case Type::SHORT:
    case Type::LONG:
      return parseInteger(name, text, trimmed, type);
    case Type::DOUBLE:
      if (std::optional<double> value = parseJavaDouble(trimmed)) return *value;
      throw ConfigException(name, text, "Not a number of type DOUBLE");
    case Type::LIST:
      return parseList(trimmed);
  }
  throw std::logic_error("unknown config type");
}

std::string_view ConfigDef::typeName(Type type) {
  static constexpr std::string_view kNames[] = {"BOOLEAN", "STRING", "INT",   "SHORT",   "LONG",
                                                "DOUBLE",  "LIST",   "CLASS", "PASSWORD"};
  return kNames[static_cast<size_t>(type)];
}

std::string_view ConfigDef::importanceName(Importance importance) {
  static constexpr std::string_view kNames[] = {"HIGH", "MEDIUM", "LOW"};
  return kNames[static_cast<size_t>(importance)];
}

std::string_view ConfigDef::widthName(Width width) {
  static constexpr std::string_view kNames[] = {"NONE", "SHORT", "MEDIUM", "LONG"};
  return kNames[static_cast<size_t>(width)];
}

}  // namespace oxbow::connect
