#include "cli/server_properties.h"

#include <fstream>
#include <sstream>

namespace oxbow::cli {

std::optional<Properties> server_properties(const std::string& config_file,
                                            const std::vector<std::string>& overrides,
                                            std::string& error) {
  Properties props;
  if (!config_file.empty()) {
    std::ifstream in(config_file);
    if (!in) {
      error = "cannot read " + config_file;
      return std::nullopt;
    }
    std::stringstream text;
    text << in.rdbuf();
    if (auto bad = parse_properties(text.str(), props)) {
      error = config_file + ": " + *bad;
      return std::nullopt;
    }
  }
  for (const auto& item : overrides) {
    auto kv = split_assignment(item);
    if (!kv) {
      error = "--override expects key=value, got '" + item + "'";
      return std::nullopt;
    }
    props[kv->first] = kv->second;
  }
  return props;
}

}  // namespace oxbow::cli
