#pragma once
// Internal to binary.cpp and binary_decode.cpp.
#include <string>

#include <nlohmann/json.hpp>

#include "registry/avro/schema.h"

namespace oxbow::registry::avro::detail {

constexpr int kMaxEncodeDepth = 200;

inline bool is_named_kind(Kind kind) {
  return kind == Kind::kRecord || kind == Kind::kEnum || kind == Kind::kFixed;
}

inline std::string short_name(const std::string& full) {
  const auto dot = full.rfind('.');
  return dot == std::string::npos ? full : full.substr(dot + 1);
}

// A default, written as the specification writes defaults (a union's as its first branch's
// value, unwrapped; a record's possibly lacking fields that have defaults of their own), in the
// JSON encoding. Defined for nlohmann::json and nlohmann::ordered_json.
template <class J>
J from_default(const Node& node, const nlohmann::ordered_json& value, int depth);

}  // namespace oxbow::registry::avro::detail
