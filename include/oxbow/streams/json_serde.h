#pragma once
// A JSON serde over nlohmann::json (Debian's nlohmann-json3-dev), kept out of serde.h so that only
// applications that use JSON need that header. Bytes are the compact UTF-8 text Jackson-based
// Java serdes read and write; text that does not parse is a SerializationException, which the
// deserialization-exception handler turns into a skipped record or a failed task.
#include <nlohmann/json.hpp>

#include "oxbow/streams/serde.h"

namespace oxbow::streams {

namespace serdes {

inline Serde<nlohmann::json> Json() {
  Serde<nlohmann::json> s;
  s.name = "JsonSerde";
  s.serialize = [](std::string_view, const nlohmann::json& value) { return value.dump(); };
  s.deserialize = [](std::string_view topic, std::string_view bytes) {
    auto value = nlohmann::json::parse(bytes, nullptr, false);
    if (value.is_discarded())
      throw SerializationException("JSON value on " + std::string(topic) + " does not parse");
    return value;
  };
  return s;
}

}  // namespace serdes

template <>
struct DefaultSerde<nlohmann::json> {
  static Serde<nlohmann::json> get() { return serdes::Json(); }
};

}  // namespace oxbow::streams
