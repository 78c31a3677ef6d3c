#pragma once
// ksqlDB's variable substitution (KLIP-38): `${name}` stands for a variable DEFINEd earlier
// (names case-insensitive), `$${name}` for the text `${name}` itself, and an undefined variable
// stays as written (the statement then fails where the text is not valid).
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::sql {

std::string substitute_variables(std::string_view text,
                                 const std::map<std::string, std::string>& variables);

// `text` cut after each `;` that is not inside a quoted string, identifier or comment, so that
// each statement can be substituted with the variables the ones before it defined.
std::vector<std::string> split_statements(std::string_view text);

}  // namespace oxbow::sql
