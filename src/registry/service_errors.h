#pragma once
// The errors the registry's operations answer with, in Confluent's codes and texts, shared by
// service.cpp and service_settings.cpp.
#include <algorithm>
#include <cctype>
#include <string>

#include "registry/service.h"

namespace oxbow::registry::detail {

inline RegistryError not_found(int code, std::string message) {
  return {404, code, std::move(message)};
}
inline RegistryError unprocessable(int code, std::string message) {
  return {422, code, std::move(message)};
}

inline RegistryError subject_not_found(const std::string& s) {
  return not_found(40401, "Subject '" + s + "' not found.");
}
inline RegistryError version_not_found(int v) {
  return not_found(40402, "Version " + std::to_string(v) + " not found.");
}
inline RegistryError invalid_version(const std::string& raw) {
  return unprocessable(42202, "The specified version '" + raw +
                                  "' is not a valid version id. Allowed values are between [1, "
                                  "2^31-1] and the string \"latest\"");
}
inline RegistryError store_error(const char* what) {
  return {500, 50001, std::string(what) + " operation failed while writing to the Kafka store"};
}

inline std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

}  // namespace oxbow::registry::detail
