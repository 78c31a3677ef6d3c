// libFuzzer: any text either parses or throws ParseError; whatever parses formats its
// expressions without failing.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sql/parser/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& statement : oxbow::sql::parser::parse(text))
      if (const auto* query =
              std::get_if<std::unique_ptr<oxbow::sql::parser::Query>>(&statement.body))
        for (const auto& item : (*query)->select) (void)oxbow::sql::parser::format(*item.expr);
  } catch (const oxbow::sql::parser::ParseError&) {
  }
  try {
    (void)oxbow::sql::parser::format(*oxbow::sql::parser::parse_expression(text));
  } catch (const oxbow::sql::parser::ParseError&) {
  }
  return 0;
}
