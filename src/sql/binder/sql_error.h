#pragma once
// A statement the engine refuses (ksqlDB's KsqlStatementException): the message ksqlDB gives, with
// its "Line: L, Col: C: " prefix where ksqlDB has one, which the server answers as a
// statement_error (40001).
#include <optional>
#include <stdexcept>
#include <string>

#include "sql/parser/token.h"

namespace oxbow::sql {

class SqlError : public std::runtime_error {
 public:
  explicit SqlError(const std::string& message) : std::runtime_error(message) {}
  SqlError(parser::Position position, const std::string& message)
      : std::runtime_error("Line: " + std::to_string(position.line) +
                           ", Col: " + std::to_string(position.column) + ": " + message),
        position_(position) {}
  const std::optional<parser::Position>& position() const { return position_; }

 private:
  std::optional<parser::Position> position_;
};

}  // namespace oxbow::sql
