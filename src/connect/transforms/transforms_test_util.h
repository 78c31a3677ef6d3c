#pragma once
// What the transforms' tests share: the message of the exception a body throws.
#include <string>

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

}  // namespace oxbow::connect::testing
