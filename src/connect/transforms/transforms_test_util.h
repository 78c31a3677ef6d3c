#pragma once
// What the transforms' tests share: a configured transform, the message of the exception a body
// throws.
#include <memory>
#include <string>
#include <string_view>

#include "oxbow/connect/transformation.h"

namespace oxbow::connect::testing {

// The message of the Exception `body` throws, or "no exception".
template <class Exception, class Body>
std::string messageOf(Body body) {
  try {
    body();
  } catch (const Exception& error) {
    return error.what();
  }
  return "no exception";
}

// A transform of that class, configured.
inline std::unique_ptr<Transformation> configured(std::string_view className,
                                                  const TransformConfig& config) {
  auto transformation = createTransformation(className);
  transformation->configure(config);
  return transformation;
}

// A record of topic "topic" with only a value.
inline ConnectRecord valueRecord(SchemaPtr schema, Value value) {
  return ConnectRecord("topic", 0, nullptr, Value(), std::move(schema), std::move(value));
}

}  // namespace oxbow::connect::testing
