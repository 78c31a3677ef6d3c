#pragma once
// Whether data written with one Avro schema can be read with another, by the specification's
// schema resolution as Avro's Java SchemaCompatibility checks it, and each problem in the words
// Confluent's registry reports it (its 409 details and verbose compatibility answers):
//   {errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the
//    new schema does not match with the old schema', additionalInfo:'reader type: INT not
//    compatible with writer type: STRING'}
// Resolution, as Java implements it: int reads as long, float or double, long as float or double,
// float as double, string and bytes as each other; named types match by unqualified name or a
// reader alias equal to the writer's full name; a reader record's field is found in the writer by
// name or the field's aliases, or else needs a default; a writer enum's symbols must all be the
// reader's unless the reader has a default symbol; every branch of a writer union must be
// readable, and a reader union reads a writer type one of its branches reads.
#include <string>
#include <vector>

#include "registry/avro/schema.h"

namespace oxbow::registry::avro {

struct Incompatibility {
  // READER_FIELD_MISSING_DEFAULT_VALUE, TYPE_MISMATCH, NAME_MISMATCH, MISSING_ENUM_SYMBOLS,
  // MISSING_UNION_BRANCH or FIXED_SIZE_MISMATCH.
  std::string type;
  std::string path;     // a JSON pointer into the reader schema, as Java's getLocation
  std::string message;  // Avro's own (Confluent's additionalInfo)
};

// Everything `reader` cannot read of data written with `writer`; empty when it reads all of it.
std::vector<Incompatibility> reader_writer_problems(const Schema& reader, const Schema& writer);

// Confluent's text for one problem. `reader_label`, `writer_label`: "new" or "old", as the
// registry names the schema being registered and the one it is checked against.
std::string confluent_text(const Incompatibility& problem, const std::string& reader_label,
                           const std::string& writer_label);

}  // namespace oxbow::registry::avro
