#pragma once
// Connect's Values.parseString and Values.convertToString: the text form SimpleHeaderConverter
// writes header values in and infers their schemas from.
#include <string>
#include <string_view>

#include "oxbow/connect/schema.h"
#include "oxbow/connect/value.h"

namespace oxbow::connect::values {

// Text to a schema and value as Connect infers them: "" and other text a STRING; true and false
// BOOLEAN; "null" no schema and no value; integers the smallest of INT8..INT64 that holds them;
// other numbers FLOAT32 (FLOAT64 past its range, a Decimal past that); yyyy-MM-dd a Date,
// HH:mm:ss.SSSZ a Time, both joined by T a Timestamp; [a,b] an ARRAY and {k:v} a MAP of the
// elements' common schema (numbers widen to hold them all), their strings quoted. Text that looks
// like a list or map but is none stays a STRING.
SchemaAndValue parseString(std::string_view text);

// The text parseString reads back: numbers and booleans as Java prints them, strings as they are
// (quoted, with \ and " escaped, inside lists and maps), bytes in base64, dates and times in the
// ISO forms above, lists [a,b], maps and structs {k:v}.
std::string convertToString(const SchemaPtr& schema, const Value& value);

}  // namespace oxbow::connect::values
