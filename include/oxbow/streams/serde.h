#pragma once
// Serdes: how keys and values become bytes on topics and in stores, and back.
//
// Formats are Kafka's, so that Java applications read what an Oxbow Streams application writes:
// String is UTF-8 as is; Int32, Int64 and Double are 4 or 8 bytes big-endian (Double as its IEEE
// 754 bits); ByteArray is the bytes as they are; Void has no bytes (always null). A null record key
// or value (absent bytes) is null whatever the serde: serdes only see present values.
//
// A Serde<T> is two functions and can be built at run time, which is how a topology composed at
// run time (the SQL engine's, with a generic row type) picks its formats.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oxbow::streams {

// Thrown by a deserializer for bytes it cannot read; the deserialization-exception handler decides
// whether the record is skipped or the task fails.
class SerializationException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Bytes = std::vector<uint8_t>;

// Kafka's VoidSerde type: a key or value that is always null.
struct Void {
  bool operator==(const Void&) const = default;
};

template <class T>
struct Serde {
  using Serializer = std::function<std::string(std::string_view topic, const T& value)>;
  using Deserializer = std::function<T(std::string_view topic, std::string_view bytes)>;
  using SerializerInto =
      std::function<void(std::string_view topic, const T& value, std::string& out)>;
  using DeserializerInto =
      std::function<void(std::string_view topic, std::string_view bytes, T& out)>;

  Serde() = default;
  Serde(Serializer serializer, Deserializer deserializer, std::string serde_name = {},
        SerializerInto serializer_into = {}, DeserializerInto deserializer_into = {})
      : serialize(std::move(serializer)),
        deserialize(std::move(deserializer)),
        name(std::move(serde_name)),
        serialize_into(std::move(serializer_into)),
        deserialize_into(std::move(deserializer_into)) {}

  Serializer serialize;
  Deserializer deserialize;
  // For describe() and error messages.
  std::string name;
  // Optional, for the record path: the same results written into `out`, which holds the bytes or
  // the value of the previous call, so that its memory is reused from record to record.
  SerializerInto serialize_into;
  DeserializerInto deserialize_into;

  explicit operator bool() const { return serialize && deserialize; }
};

namespace serdes {
Serde<std::string> String();
Serde<Bytes> ByteArray();
Serde<int32_t> Int32();
Serde<int64_t> Int64();
Serde<double> Double();
Serde<Void> VoidSerde();
}  // namespace serdes

// The serde a type gets when none is given (Kafka's default.key.serde / default.value.serde, chosen
// by type instead of by configuration). Types without one must be given a serde where the library
// writes them to a topic or a store; otherwise building the topology fails naming the operation.
template <class T>
struct DefaultSerde {
  static Serde<T> get() { return {}; }
};
template <>
struct DefaultSerde<std::string> {
  static Serde<std::string> get() { return serdes::String(); }
};
template <>
struct DefaultSerde<Bytes> {
  static Serde<Bytes> get() { return serdes::ByteArray(); }
};
template <>
struct DefaultSerde<int32_t> {
  static Serde<int32_t> get() { return serdes::Int32(); }
};
template <>
struct DefaultSerde<int64_t> {
  static Serde<int64_t> get() { return serdes::Int64(); }
};
template <>
struct DefaultSerde<double> {
  static Serde<double> get() { return serdes::Double(); }
};
template <>
struct DefaultSerde<Void> {
  static Serde<Void> get() { return serdes::VoidSerde(); }
};

}  // namespace oxbow::streams
