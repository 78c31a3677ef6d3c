#pragma once
// What `oxbow sql` prints of a query's answer from POST /query: the server streams one JSON array,
// `[{"header":...}`, then `,{"row":...}` per row, maybe a `finalMessage` or an `errorMessage`,
// then `]`, in pieces cut anywhere. Printed as ksqlDB's CLI prints it: a header of column names
// between rules, a line per row (cells of equal width, wrapped), then the final message.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace oxbow::cli {

// Cuts the streamed array into its elements as they complete (strings and escapes respected).
class JsonArrayElements {
 public:
  explicit JsonArrayElements(std::function<void(const nlohmann::json&)> on_element)
      : on_element_(std::move(on_element)) {}
  void feed(std::string_view piece);

 private:
  std::function<void(const nlohmann::json&)> on_element_;
  std::string element_;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

// The column names of a header's schema text, "`A` STRING, `B` STRUCT<`X` INT, `Y` INT>".
std::vector<std::string> schema_column_names(std::string_view schema);

// A value as ksqlDB's CLI prints a cell (Java's toString of the decoded JSON): strings bare,
// lists as [a, b], maps as {k=v}.
std::string cell_text(const nlohmann::json& value);

// ksqlDB's TabularRow: `width` shared out between the columns (at least 5 each), every cell that
// wide, longer values wrapped onto further lines; a header between two rules.
std::string tabular_row(const std::vector<std::string>& cells, int width, bool header);

class QueryOutput {
 public:
  // `width`: the terminal's; `json`: --output JSON (each header and row as its JSON).
  QueryOutput(int width, bool json) : width_(width), json_(json) {}
  // Prints one element of the stream; false once it was the last (an error or final message).
  bool print(const nlohmann::json& element);
  bool failed() const { return failed_; }

 private:
  int width_;
  bool json_;
  bool failed_ = false;
};

}  // namespace oxbow::cli
