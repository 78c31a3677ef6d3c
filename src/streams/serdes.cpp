#include <cstring>
#include <string>

#include "oxbow/streams/record.h"

namespace oxbow::streams {

namespace {

template <class T, class Bits>
Serde<T> big_endian(const char* name) {
  Serde<T> s;
  s.name = name;
  s.serialize = [](std::string_view, const T& value) {
    Bits bits;
    std::memcpy(&bits, &value, sizeof bits);
    std::string out(sizeof bits, '\0');
    for (size_t i = 0; i < sizeof bits; ++i)
      out[i] = static_cast<char>(bits >> (8 * (sizeof bits - 1 - i)));
    return out;
  };
  s.deserialize = [name](std::string_view, std::string_view bytes) {
    if (bytes.size() != sizeof(Bits))
      throw SerializationException(std::string("Size of data received by ") + name +
                                   "Deserializer is not " + std::to_string(sizeof(Bits)));
    Bits bits = 0;
    for (unsigned char c : bytes) bits = static_cast<Bits>(bits << 8 | c);
    T value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  };
  return s;
}

}  // namespace

namespace serdes {

Serde<std::string> String() {
  return {[](std::string_view, const std::string& v) { return v; },
          [](std::string_view, std::string_view b) { return std::string(b); }, "String",
          [](std::string_view, const std::string& v, std::string& out) { out.assign(v); },
          [](std::string_view, std::string_view b, std::string& out) { out.assign(b); }};
}

Serde<Bytes> ByteArray() {
  return {
      [](std::string_view, const Bytes& v) { return std::string(v.begin(), v.end()); },
      [](std::string_view, std::string_view b) { return Bytes(b.begin(), b.end()); }, "ByteArray",
      [](std::string_view, const Bytes& v, std::string& out) { out.assign(v.begin(), v.end()); },
      [](std::string_view, std::string_view b, Bytes& out) { out.assign(b.begin(), b.end()); }};
}

Serde<int32_t> Int32() {
  return big_endian<int32_t, uint32_t>("Integer");
}
Serde<int64_t> Int64() {
  return big_endian<int64_t, uint64_t>("Long");
}
Serde<double> Double() {
  return big_endian<double, uint64_t>("Double");
}

Serde<Void> VoidSerde() {
  return {[](std::string_view, const Void&) -> std::string {
            throw SerializationException("the Void serde writes only nulls");
          },
          [](std::string_view, std::string_view) -> Void {
            throw SerializationException("Data should be null for a VoidDeserializer.");
          },
          "Void"};
}

}  // namespace serdes

namespace detail {

void throw_type_mismatch(const std::type_info& wanted, const std::type_info& held) {
  throw std::logic_error(std::string("a record holds ") + held.name() + " where " + wanted.name() +
                         " was expected (a serde or operation of another type)");
}

}  // namespace detail
}  // namespace oxbow::streams
