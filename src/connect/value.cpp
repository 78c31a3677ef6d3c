// Values: the decimal arithmetic Connect's Decimal needs (between two's complement bytes, decimal
// digits and text), deep equality and Java's text of values.
#include "oxbow/connect/value.h"

#include <charconv>
#include <cstring>
#include <ctime>
#include <limits>

#include "oxbow/connect/errors.h"
#include "oxbow/connect/struct.h"

namespace oxbow::connect {
namespace {

// The largest scale change withScale makes (a change past it is no real decimal's).
constexpr int64_t kMaxRescale = 10000;

bool highBit(char byte) {
  return static_cast<unsigned char>(byte) & 0x80;
}

// Drops the leading bytes two's complement does not need.
void minimize(std::string& bytes) {
  size_t skip = 0;
  while (skip + 1 < bytes.size()) {
    char lead = bytes[skip];
    if ((lead == '\0' && !highBit(bytes[skip + 1])) ||
        (lead == '\xff' && highBit(bytes[skip + 1]))) {
      ++skip;
    } else {
      break;
    }
  }
  bytes.erase(0, skip);
  if (bytes.empty()) bytes.assign(1, '\0');
}

// Two's complement negation in place, over the same width.
void negate(std::string& bytes) {
  unsigned carry = 1;
  for (size_t i = bytes.size(); i-- > 0;) {
    unsigned x = (~static_cast<unsigned char>(bytes[i]) & 0xffu) + carry;
    bytes[i] = static_cast<char>(x & 0xffu);
    carry = x >> 8;
  }
}

// Unsigned decimal digits to big-endian magnitude bytes.
std::string magnitudeOf(std::string_view digits) {
  std::string magnitude;
  for (char digit : digits) {
    unsigned carry = static_cast<unsigned>(digit - '0');
    for (size_t i = magnitude.size(); i-- > 0;) {
      unsigned x = static_cast<unsigned char>(magnitude[i]) * 10u + carry;
      magnitude[i] = static_cast<char>(x & 0xffu);
      carry = x >> 8;
    }
    while (carry) {
      magnitude.insert(magnitude.begin(), static_cast<char>(carry & 0xffu));
      carry >>= 8;
    }
  }
  return magnitude;
}

std::string twosComplementOf(std::string_view digits, bool negative) {
  std::string bytes = magnitudeOf(digits);
  bytes.insert(bytes.begin(), '\0');  // room for the sign
  if (negative) negate(bytes);
  minimize(bytes);
  return bytes;
}

// "-123" style digits of two's complement bytes.
std::string digitsOf(std::string magnitude, bool negative) {
  if (negative) negate(magnitude);
  std::string digits;
  size_t start = 0;
  while (start < magnitude.size()) {
    unsigned remainder = 0;
    for (size_t i = start; i < magnitude.size(); ++i) {
      unsigned x = (remainder << 8) | static_cast<unsigned char>(magnitude[i]);
      magnitude[i] = static_cast<char>(x / 10);
      remainder = x % 10;
    }
    digits.push_back(static_cast<char>('0' + remainder));
    while (start < magnitude.size() && magnitude[start] == '\0') ++start;
  }
  if (digits.empty()) digits = "0";
  if (negative) digits.push_back('-');
  return {digits.rbegin(), digits.rend()};
}

std::string doubleText(double v) {
  char buffer[64];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string floatText(float v) {
  char buffer[64];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  std::string text(buffer, end);
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

bool mapsEqual(const ValueMap& a, const ValueMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [key, value] : a) {
    bool found = false;
    for (const auto& [otherKey, otherValue] : b) {
      if (otherKey == key) {
        if (!(otherValue == value)) return false;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

DecimalValue::DecimalValue(int64_t unscaled, int32_t scale) : scale_(scale) {
  unscaled_.resize(8);
  auto bits = static_cast<uint64_t>(unscaled);
  for (int i = 7; i >= 0; --i, bits >>= 8)
    unscaled_[static_cast<size_t>(i)] = static_cast<char>(bits & 0xff);
  minimize(unscaled_);
}

DecimalValue DecimalValue::fromUnscaledBytes(std::string_view bytes, int32_t scale) {
  DecimalValue result;
  result.unscaled_.assign(bytes);
  result.scale_ = scale;
  minimize(result.unscaled_);
  return result;
}

DecimalValue DecimalValue::parse(std::string_view text) {
  auto invalid = [&] { return DataException("Invalid decimal number: " + std::string(text)); };
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  std::string digits;
  int64_t fraction = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
      if (point) ++fraction;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (digits.empty()) throw invalid();
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && text[i] == '+') ++i;
    auto [end, error] = std::from_chars(text.data() + i, text.data() + text.size(), exponent);
    if (error != std::errc() || end == text.data() + i) throw invalid();
    i = static_cast<size_t>(end - text.data());
  }
  if (i != text.size()) throw invalid();
  int64_t scale = fraction - exponent;
  if (scale > std::numeric_limits<int32_t>::max() || scale < std::numeric_limits<int32_t>::min())
    throw invalid();
  size_t first = digits.find_first_not_of('0');
  std::string_view significant =
      first == std::string::npos ? std::string_view("0") : std::string_view(digits).substr(first);
  DecimalValue result;
  result.unscaled_ = twosComplementOf(significant, negative);
  result.scale_ = static_cast<int32_t>(scale);
  return result;
}

std::string DecimalValue::unscaledDigits() const {
  return digitsOf(unscaled_, isNegative());
}

std::string DecimalValue::toString() const {
  std::string digits = unscaledDigits();
  bool negative = digits[0] == '-';
  std::string coefficient = negative ? digits.substr(1) : digits;
  std::string sign = negative ? "-" : "";
  int64_t length = static_cast<int64_t>(coefficient.size());
  int64_t adjusted = -static_cast<int64_t>(scale_) + (length - 1);
  if (scale_ >= 0 && adjusted >= -6) {
    if (scale_ == 0) return sign + coefficient;
    if (length > scale_) {
      return sign + coefficient.substr(0, static_cast<size_t>(length - scale_)) + "." +
             coefficient.substr(static_cast<size_t>(length - scale_));
    }
    return sign + "0." + std::string(static_cast<size_t>(scale_ - length), '0') + coefficient;
  }
  std::string text = sign + coefficient.substr(0, 1);
  if (length > 1) text += "." + coefficient.substr(1);
  text += "E";
  if (adjusted >= 0) text += "+";
  return text + std::to_string(adjusted);
}

DecimalValue DecimalValue::withScale(int32_t scale) const {
  if (scale == scale_) return *this;
  int64_t change = static_cast<int64_t>(scale) - scale_;
  if (change > kMaxRescale || change < -kMaxRescale)
    throw DataException("Cannot rescale decimal " + toString() + " to scale " +
                        std::to_string(scale));
  std::string digits = unscaledDigits();
  bool negative = digits[0] == '-';
  if (negative) digits.erase(0, 1);
  if (change > 0) {
    if (digits != "0") digits.append(static_cast<size_t>(change), '0');
  } else {
    auto drop = static_cast<size_t>(-change);
    size_t kept = digits.size() > drop ? digits.size() - drop : 0;
    if (digits.find_first_not_of('0', kept) != std::string::npos)
      throw DataException("Rounding necessary to rescale decimal " + toString() + " to scale " +
                          std::to_string(scale));
    digits.resize(kept);
    if (digits.empty()) digits = "0";
  }
  DecimalValue result;
  result.unscaled_ = twosComplementOf(digits, negative);
  result.scale_ = scale;
  return result;
}

Value::Value(std::shared_ptr<Struct> v) {
  if (v) data_ = std::move(v);
}

Value::Value(Struct v) : data_(std::make_shared<Struct>(std::move(v))) {}

void Value::throwKindMismatch(Kind expected) const {
  throw DataException("Expected a value of type " + std::string(kindName(expected)) +
                      " but found " + std::string(kindName(kind())));
}

const Value* Value::mapGet(const Value& key) const {
  if (kind() != Kind::Map) return nullptr;
  for (const auto& [k, v] : *std::get_if<ValueMap>(&data_))
    if (k == key) return &v;
  return nullptr;
}

bool Value::operator==(const Value& other) const {
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::Float32: {
      float a = asFloat32(), b = other.asFloat32();
      return std::memcmp(&a, &b, sizeof a) == 0;
    }
    case Kind::Float64: {
      double a = asFloat64(), b = other.asFloat64();
      return std::memcmp(&a, &b, sizeof a) == 0;
    }
    case Kind::Map:
      return mapsEqual(asMap(), other.asMap());
    case Kind::Struct:
      return structPtr() == other.structPtr() || asStruct() == other.asStruct();
    default:
      return data_ == other.data_;
  }
}

std::string Value::toString() const {
  switch (kind()) {
    case Kind::Null:
      return "null";
    case Kind::Boolean:
      return asBoolean() ? "true" : "false";
    case Kind::Int8:
      return std::to_string(asInt8());
    case Kind::Int16:
      return std::to_string(asInt16());
    case Kind::Int32:
      return std::to_string(asInt32());
    case Kind::Int64:
      return std::to_string(asInt64());
    case Kind::Float32:
      return floatText(asFloat32());
    case Kind::Float64:
      return doubleText(asFloat64());
    case Kind::String:
      return asString();
    case Kind::Bytes: {
      std::string text = "[";
      for (char byte : asBytes().data) {
        if (text.size() > 1) text += ", ";
        text += std::to_string(static_cast<signed char>(byte));
      }
      return text + "]";
    }
    case Kind::Decimal:
      return asDecimal().toString();
    case Kind::DateTime: {
      int64_t millis = asDateTime().epochMillis;
      int64_t seconds = millis >= 0 ? millis / 1000 : -((-millis + 999) / 1000);
      auto time = static_cast<std::time_t>(seconds);
      std::tm utc{};
      gmtime_r(&time, &utc);
      char buffer[48];
      size_t n = std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
      std::string text(buffer, n);
      char fraction[8];
      std::snprintf(fraction, sizeof fraction, ".%03dZ", static_cast<int>(millis - seconds * 1000));
      return text + fraction;
    }
    case Kind::Array: {
      std::string text = "[";
      for (const Value& element : asList()) {
        if (text.size() > 1) text += ", ";
        text += element.toString();
      }
      return text + "]";
    }
    case Kind::Map: {
      std::string text = "{";
      for (const auto& [key, value] : asMap()) {
        if (text.size() > 1) text += ", ";
        text += key.toString() + "=" + value.toString();
      }
      return text + "}";
    }
    case Kind::Struct:
      return asStruct().toString();
  }
  return {};
}

std::string_view Value::javaClass() const {
  switch (kind()) {
    case Kind::Null:
      return "null";
    case Kind::Boolean:
      return "class java.lang.Boolean";
    case Kind::Int8:
      return "class java.lang.Byte";
    case Kind::Int16:
      return "class java.lang.Short";
    case Kind::Int32:
      return "class java.lang.Integer";
    case Kind::Int64:
      return "class java.lang.Long";
    case Kind::Float32:
      return "class java.lang.Float";
    case Kind::Float64:
      return "class java.lang.Double";
    case Kind::String:
      return "class java.lang.String";
    case Kind::Bytes:
      return "class [B";
    case Kind::Decimal:
      return "class java.math.BigDecimal";
    case Kind::DateTime:
      return "class java.util.Date";
    case Kind::Array:
      return "class java.util.ArrayList";
    case Kind::Map:
      return "class java.util.HashMap";
    case Kind::Struct:
      return "class org.apache.kafka.connect.data.Struct";
  }
  return {};
}

std::string_view kindName(Value::Kind kind) {
  static constexpr std::string_view kNames[] = {
      "NULL",   "BOOLEAN", "INT8",    "INT16",    "INT32", "INT64", "FLOAT32", "FLOAT64",
      "STRING", "BYTES",   "DECIMAL", "DATETIME", "ARRAY", "MAP",   "STRUCT"};
  return kNames[static_cast<size_t>(kind)];
}

}  // namespace oxbow::connect
