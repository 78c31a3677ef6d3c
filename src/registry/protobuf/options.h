#pragma once
// Options as Confluent's printer writes them (registry/protobuf/ only): the text after `option `
// or inside `[...]`, from a .proto text's uninterpreted options or a descriptor's set fields.
#include <functional>
#include <string>
#include <vector>

#include "registry/protobuf/schema_data.h"

namespace oxbow::registry::protobuf {

struct PrintedOption {
  std::string name;  // as sorted by normalize: the bare name, custom ones resolved
  std::string text;  // `name = value`, a map value spanning lines
};

// Resolves a custom option's name (as written) to its full name, or returns it unchanged.
using ExtensionResolver = std::function<std::string(const std::string&)>;

// The options of an element. `options` is the element's *Options message; for a .proto text its
// uninterpreted options, in source order; for a descriptor the standard ones Confluent lists.
std::vector<PrintedOption> element_options(const pb::Message& options, bool from_text,
                                           bool normalize, const ExtensionResolver& resolve);

// A pseudo-option (`default`, `json_name`) with its value already printed.
PrintedOption pseudo_option(const std::string& name, const std::string& value);

// Confluent's formatNumber: under normalize a number prints through Java's default DecimalFormat
// (at most 3 decimals, no grouping); otherwise as written.
std::string format_number(const std::string& text, bool normalize);

// Each line of `value` two spaces in, each ending in a newline (nothing for an empty value).
void indent_lines(std::string& out, const std::string& value);

}  // namespace oxbow::registry::protobuf
