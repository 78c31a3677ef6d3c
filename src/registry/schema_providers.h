#pragma once
// The schema types beside Avro, each adapting its own folder's schemas (json/, protobuf/) to
// ParsedSchema; parse_schema picks one by the request's schemaType.
#include <string_view>
#include <vector>

#include "registry/parsed_schema.h"

namespace oxbow::registry {

SchemaParse parse_json_schema(std::string_view text, const std::vector<NamedSchema>& references);
SchemaParse parse_protobuf_schema(std::string_view text,
                                  const std::vector<NamedSchema>& references);

}  // namespace oxbow::registry
