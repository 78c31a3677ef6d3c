#include "connect/runtime/distributed/record_json.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <limits>

namespace oxbow::connect::runtime::distributed::record_json {

std::optional<nlohmann::json> parse(const std::string& text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    spdlog::error("connect: ignoring {}: its value is not JSON ({})", what, e.what());
    return std::nullopt;
  }
}

std::string typeName(const nlohmann::json& value) {
  return value.type_name();
}

std::optional<Properties> stringMap(const nlohmann::json& value) {
  if (!value.is_object()) return std::nullopt;
  Properties out;
  for (const auto& [name, entry] : value.items()) {
    if (entry.is_null()) continue;
    if (!entry.is_string()) return std::nullopt;
    out.emplace(name, entry.get<std::string>());
  }
  return out;
}

std::optional<std::pair<std::string, int>> connectorTask(std::string_view text) {
  size_t dash = text.rfind('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view digits = text.substr(dash + 1);
  int task = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), task);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return std::make_pair(std::string(text.substr(0, dash)), task);
}

std::optional<int32_t> int32(const nlohmann::json& value) {
  if (!value.is_number_integer()) return std::nullopt;
  if (value.is_number_unsigned()) {
    auto n = value.get<uint64_t>();
    if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return std::nullopt;
    return static_cast<int32_t>(n);
  }
  auto n = value.get<int64_t>();
  if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(n);
}

}  // namespace oxbow::connect::runtime::distributed::record_json
