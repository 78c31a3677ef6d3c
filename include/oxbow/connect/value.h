#pragma once
// The values Connect's data model carries (the Java objects of org.apache.kafka.connect.data):
// null, the primitives, strings, bytes, the logical types' values (a decimal, a point in time),
// lists, maps and structs. Primitives are held in place (a Value is 40 bytes and copying an int
// allocates nothing); strings and bytes keep short contents in their own buffer; a Struct is shared
// by reference, as a Java Struct is.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace oxbow::connect {

class Struct;
class Value;

// A BYTES value (Java's byte[]), kept apart from STRING.
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

// A Decimal's value (Java's BigDecimal): the unscaled integer as its minimal two's complement
// big-endian bytes (Connect's encoding of it) and the scale. Equal only with the same scale, as
// BigDecimal.equals.
class DecimalValue {
 public:
  DecimalValue() : unscaled_(1, '\0') {}
  DecimalValue(int64_t unscaled, int32_t scale);
  // From two's complement big-endian bytes (an empty string reads as zero).
  static DecimalValue fromUnscaledBytes(std::string_view bytes, int32_t scale);
  // From decimal text: "1.56", "-0.0100", "1.5E+3"; the scale is the text's (as new BigDecimal).
  // Throws DataException on text that is no number.
  static DecimalValue parse(std::string_view text);

  const std::string& unscaledBytes() const { return unscaled_; }
  int32_t scale() const { return scale_; }
  bool isNegative() const { return static_cast<unsigned char>(unscaled_[0]) & 0x80; }
  // The unscaled value in decimal digits, with a leading '-' when negative.
  std::string unscaledDigits() const;
  // As BigDecimal.toString: plain for usual scales, scientific notation past them.
  std::string toString() const;
  // The same number at another scale; throws DataException when that would drop non-zero digits.
  DecimalValue withScale(int32_t scale) const;

  bool operator==(const DecimalValue&) const = default;

 private:
  std::string unscaled_;
  int32_t scale_ = 0;
};

// A point in time in milliseconds since the epoch: the value of the Date, Time and Timestamp
// logical types (Java's java.util.Date).
struct DateTime {
  int64_t epochMillis = 0;
  bool operator==(const DateTime&) const = default;
};

using ValueList = std::vector<Value>;
// A map's entries in insertion order (a Java Map's entries, which are unordered: equality ignores
// the order).
using ValueMap = std::vector<std::pair<Value, Value>>;

class Value {
 public:
  // The kinds, in the order of the alternatives below.
  enum class Kind : uint8_t {
    Null,
    Boolean,
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    String,
    Bytes,
    Decimal,
    DateTime,
    Array,
    Map,
    Struct
  };

  Value() = default;
  Value(std::nullptr_t) {}        // NOLINT: null, as Java's
  Value(bool v) : data_(v) {}     // NOLINT: autoboxing, as Java's
  Value(int8_t v) : data_(v) {}   // NOLINT
  Value(int16_t v) : data_(v) {}  // NOLINT
  Value(int32_t v) : data_(v) {}  // NOLINT
  Value(int64_t v) : data_(v) {}  // NOLINT
  // long long, where it is not int64_t's type (a literal like 5LL).
  template <class T,
            std::enable_if_t<std::is_same_v<T, long long> && !std::is_same_v<long long, int64_t>,
                             int> = 0>
  Value(T v) : data_(static_cast<int64_t>(v)) {}        // NOLINT
  Value(float v) : data_(v) {}                          // NOLINT
  Value(double v) : data_(v) {}                         // NOLINT
  Value(const char* v) : data_(std::string(v)) {}       // NOLINT
  Value(std::string_view v) : data_(std::string(v)) {}  // NOLINT
  Value(std::string v) : data_(std::move(v)) {}         // NOLINT
  Value(Bytes v) : data_(std::move(v)) {}               // NOLINT
  Value(DecimalValue v) : data_(std::move(v)) {}        // NOLINT
  Value(DateTime v) : data_(v) {}                       // NOLINT
  Value(ValueList v) : data_(std::move(v)) {}           // NOLINT
  Value(ValueMap v) : data_(std::move(v)) {}            // NOLINT
  Value(std::shared_ptr<Struct> v);                     // NOLINT: null stays null
  Value(Struct v);                                      // NOLINT: shared from here on

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool isNull() const { return data_.index() == 0; }

  // Typed reads; each throws DataException when the value is of another kind.
  bool asBoolean() const { return get<bool>(Kind::Boolean); }
  int8_t asInt8() const { return get<int8_t>(Kind::Int8); }
  int16_t asInt16() const { return get<int16_t>(Kind::Int16); }
  int32_t asInt32() const { return get<int32_t>(Kind::Int32); }
  int64_t asInt64() const { return get<int64_t>(Kind::Int64); }
  float asFloat32() const { return get<float>(Kind::Float32); }
  double asFloat64() const { return get<double>(Kind::Float64); }
  const std::string& asString() const { return get<std::string>(Kind::String); }
  const Bytes& asBytes() const { return get<Bytes>(Kind::Bytes); }
  const DecimalValue& asDecimal() const { return get<DecimalValue>(Kind::Decimal); }
  DateTime asDateTime() const { return get<DateTime>(Kind::DateTime); }
  const ValueList& asList() const { return get<ValueList>(Kind::Array); }
  ValueList& asList() { return getMutable<ValueList>(Kind::Array); }
  const ValueMap& asMap() const { return get<ValueMap>(Kind::Map); }
  ValueMap& asMap() { return getMutable<ValueMap>(Kind::Map); }
  Struct& asStruct() const { return *get<std::shared_ptr<Struct>>(Kind::Struct); }
  const std::shared_ptr<Struct>& structPtr() const {
    return get<std::shared_ptr<Struct>>(Kind::Struct);
  }

  // The entry of a map with this key, or null when there is none (or this is no map).
  const Value* mapGet(const Value& key) const;

  // Deep equality as Java's equals: structs by schema and values, maps ignoring order, floats
  // bit for bit.
  bool operator==(const Value& other) const;
  // As Java's toString of the value ("null", "12", "[1, 2]", "{a=1}", "Struct{a=1}").
  std::string toString() const;
  // The Java class Connect's messages name for a value of this kind ("class java.lang.Integer").
  std::string_view javaClass() const;

 private:
  template <class T>
  const T& get(Kind expected) const {
    if (kind() != expected) throwKindMismatch(expected);
    return *std::get_if<T>(&data_);
  }
  template <class T>
  T& getMutable(Kind expected) {
    if (kind() != expected) throwKindMismatch(expected);
    return *std::get_if<T>(&data_);
  }
  [[noreturn]] void throwKindMismatch(Kind expected) const;

  std::variant<std::monostate, bool, int8_t, int16_t, int32_t, int64_t, float, double, std::string,
               Bytes, DecimalValue, DateTime, ValueList, ValueMap, std::shared_ptr<Struct>>
      data_;
};

std::string_view kindName(Value::Kind kind);

}  // namespace oxbow::connect
