#pragma once
// PRINT's Schema Registry formats: AVRO, PROTOBUF and JSON_SR records in Confluent's wire format
// read through the registry's client library, each written as ksqlDB writes its deserializer's
// result (see docs/sql/engine.md for where the text differs).
#include <nlohmann/json.hpp>
#include <string>

#include "sql/engine/topic_access.h"

namespace oxbow::sql {

// Decoders over the registry at `url`; none when `url` is empty.
RegistryDecoders registry_decoders(const std::string& url);

// An Avro datum (its JSON encoding) as Avro's GenericData.toString writes it:
// {"a": 1, "b": [1, 2]}, strings escaped as Avro escapes them.
std::string avro_text(const nlohmann::ordered_json& datum);

}  // namespace oxbow::sql
