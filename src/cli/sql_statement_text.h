#pragma once
// What `oxbow sql` reads of a statement's text itself, before (or instead of) sending it: whether
// it is a query or a PRINT (its answer streams from /query), and the statements ksqlDB's CLI runs
// on its own side: RUN SCRIPT, SET / UNSET of a session property, DEFINE / UNDEFINE of a variable
// and SHOW VARIABLES.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oxbow::cli {

std::string upper(std::string_view text);

// The words of a line, the ';' at its end dropped.
std::vector<std::string> line_words(std::string_view line);

// The statement without the `--` comment lines before it.
std::string_view without_leading_comments(std::string_view statement);

// A SELECT, push or pull.
bool is_query(std::string_view statement);
// A PRINT of a topic (its lines stream from /query too).
bool is_print(std::string_view statement);

// A quoted SQL string at the start of `text` ('' for a quote), moving `text` past it.
std::optional<std::string> quoted(std::string_view& text);

// The path of `RUN SCRIPT '<path>';`.
std::optional<std::string> script_path(std::string_view statement);

// SET 'name' = 'value'; (value set) or UNSET 'name'; (value empty).
struct LocalProperty {
  std::string name;
  std::optional<std::string> value;
};
std::optional<LocalProperty> local_property(std::string_view statement);

// DEFINE name = 'value'; (value set), UNDEFINE name; (value empty) or SHOW|LIST VARIABLES;
// (name empty too).
struct VariableStatement {
  std::string name;
  std::optional<std::string> value;
};
std::optional<VariableStatement> variable_statement(std::string_view statement);

}  // namespace oxbow::cli
