#pragma once
// Names and parameters Confluent's ProtobufData gives Connect schemas, shared by the Protobuf
// writer and reader of connect/schema_registry/.
#include <cstdint>
#include <memory>
#include <string_view>

#include "connect/schema_registry/format_data.h"

namespace oxbow::connect::registry_detail {

inline constexpr std::string_view kTagParameter = "io.confluent.connect.protobuf.Tag";
inline constexpr std::string_view kTypeParameter = "io.confluent.connect.protobuf.Type";
inline constexpr std::string_view kEnumParameter = "io.confluent.connect.protobuf.Enum";
inline constexpr std::string_view kUnionPrefix = "io.confluent.connect.protobuf.Union.";
inline constexpr int kMaxProtobufDepth = 64;
inline constexpr int64_t kMillisPerDay = 86400000;

// The .proto text of a struct schema, and its values as the serializer's JSON; DataException for
// other schemas.
std::unique_ptr<Writer> protobufWriter(const SchemaPtr& schema);

}  // namespace oxbow::connect::registry_detail
