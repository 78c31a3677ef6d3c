#pragma once
// The fast path of reading an envelope: its "schema" and "payload" members located by simdjson's
// On-Demand parser without parsing them, so that a schema seen before is a cache lookup of its
// text and only the payload is parsed into a tree.
#include <string>
#include <string_view>

namespace oxbow::connect::document {

struct EnvelopeTexts {
  std::string_view schema;   // the schema member's JSON text ("null" for a null schema)
  std::string_view payload;  // the payload member's JSON text
};

// False when `bytes` are not one JSON object of exactly the members "schema" (an object or null)
// and "payload": the full parser then reads them and says what is wrong. The texts point into
// `buffer`, which holds a padded copy of the bytes.
bool splitEnvelope(std::string_view bytes, std::string& buffer, EnvelopeTexts& texts);

}  // namespace oxbow::connect::document
