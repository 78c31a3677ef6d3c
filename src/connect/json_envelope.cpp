// Locating an envelope's members with simdjson's On-Demand parser.
#include "json_envelope.h"

#include <simdjson.h>

#include <utility>

namespace oxbow::connect::document {
namespace {

namespace od = simdjson::ondemand;

// A member's value as text, or false.
bool textOf(od::value value, std::string_view& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      od::object object;
      return !value.get_object().get(object) && !object.raw_json().get(text);
    }
    case od::json_type::array: {
      od::array array;
      return !value.get_array().get(array) && !array.raw_json().get(text);
    }
    default:
      text = value.raw_json_token();
      return true;
  }
}

}  // namespace

bool splitEnvelope(std::string_view bytes, std::string& buffer, EnvelopeTexts& texts) {
  buffer.reserve(bytes.size() + simdjson::SIMDJSON_PADDING);
  buffer.assign(bytes);
  thread_local od::parser parser;
  od::document document;
  if (parser.iterate(buffer.data(), buffer.size(), buffer.capacity()).get(document)) return false;
  // Nothing but whitespace may follow the envelope.
  od::object whole;
  std::string_view wholeText;
  if (document.get_object().get(whole) || whole.raw_json().get(wholeText)) return false;
  size_t end = static_cast<size_t>(wholeText.data() - buffer.data()) + wholeText.size();
  if (std::string_view(buffer).substr(end).find_first_not_of(" \t\r\n") != std::string_view::npos)
    return false;
  document.rewind();
  od::object envelope;
  if (document.get_object().get(envelope)) return false;
  // One pass in order: find_field_unordered's wrap-around search back to the object's start read
  // from a null pointer after a malformed member ({"schema":{x},"other":1}).
  bool haveSchema = false, havePayload = false;
  for (auto field : envelope) {
    od::field member;
    std::string_view key;
    if (std::move(field).get(member) || member.unescaped_key().get(key)) return false;
    if (key == "schema" && !haveSchema) {
      od::json_type type;
      if (member.value().type().get(type) ||
          (type != od::json_type::object && type != od::json_type::null) ||
          !textOf(member.value(), texts.schema))
        return false;
      haveSchema = true;
    } else if (key == "payload" && !havePayload) {
      if (!textOf(member.value(), texts.payload)) return false;
      havePayload = true;
    } else {
      return false;
    }
  }
  return haveSchema && havePayload;
}

}  // namespace oxbow::connect::document
