#pragma once
// Connect's exceptions (org.apache.kafka.connect.errors), named as Kafka names them: the runtime
// catches DataException around converters and transforms to apply its error tolerance.
#include <stdexcept>
#include <string>

namespace oxbow::connect {

// Anything Connect reports as a failure (ConnectException).
class ConnectException : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Data that does not fit its schema, or bytes a converter cannot read (DataException).
class DataException : public ConnectException {
 public:
  using ConnectException::ConnectException;
};

// A failure that may pass if the operation is tried again (RetriableException): the runtime
// retries converters and transforms that throw it for up to errors.retry.timeout.
class RetriableException : public ConnectException {
 public:
  using ConnectException::ConnectException;
};

// A SchemaBuilder used wrongly: a property set twice, a bad default (SchemaBuilderException).
class SchemaBuilderException : public DataException {
 public:
  using DataException::DataException;
};

}  // namespace oxbow::connect
