#pragma once
// A server's settings as the `broker` and `registry` commands take them: a properties file, then
// `--override key=value` on top.
#include <optional>
#include <string>
#include <vector>

#include "common/properties.h"

namespace oxbow::cli {

// nullopt with `error` set (naming the file or the override) when they cannot be read.
std::optional<Properties> server_properties(const std::string& config_file,
                                            const std::vector<std::string>& overrides,
                                            std::string& error);

}  // namespace oxbow::cli
