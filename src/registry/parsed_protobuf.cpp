#include "registry/schema_providers.h"

namespace oxbow::registry {

SchemaParse parse_protobuf_schema(std::string_view, const std::vector<NamedSchema>&) {
  SchemaParse out;
  out.error = "not yet supported";
  return out;
}

}  // namespace oxbow::registry
