#pragma once
// A statement that does not parse. what() is ksqlDB's form, "line L:C: Syntax Error\n<detail>",
// which tools and users match on (docs/sql/ksqldb-facts.md §6.1).
#include <stdexcept>
#include <string>

#include "sql/parser/token.h"

namespace oxbow::sql::parser {

class ParseError : public std::runtime_error {
 public:
  ParseError(Position position, const std::string& detail)
      : std::runtime_error("line " + std::to_string(position.line) + ":" +
                           std::to_string(position.column) + ": Syntax Error\n" + detail),
        position_(position),
        detail_(detail) {}
  Position position() const { return position_; }
  const std::string& detail() const { return detail_; }

 private:
  Position position_;
  std::string detail_;
};

}  // namespace oxbow::sql::parser
