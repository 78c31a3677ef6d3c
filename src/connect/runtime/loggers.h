#pragma once
// Connect's /admin/loggers over spdlog (Kafka's Loggers over log4j): "root" is spdlog's default
// logger, through which Oxbow logs; every other spdlog logger registered in the process is listed
// by its name. Setting a namespace sets every logger whose name starts with it (and root sets them
// all); a namespace no logger has is created, as log4j creates it, sharing root's sinks. Kafka's
// levels map onto spdlog's: TRACE trace, DEBUG debug, INFO info, WARN warn, ERROR err, FATAL
// critical, OFF off.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace oxbow::connect::runtime {

struct LoggerLevel {
  std::string level;                    // Kafka's name: INFO, ...
  std::optional<int64_t> lastModified;  // ms since the epoch; none until set here
};

class WorkerLoggers {
 public:
  static constexpr const char* ROOT = "root";

  // Every logger, by name.
  std::map<std::string, LoggerLevel> all() const;
  // nullopt for a logger that does not exist.
  std::optional<LoggerLevel> level(const std::string& logger) const;
  // The loggers set, sorted; ConnectException for a level that is not Kafka's.
  std::vector<std::string> setLevel(const std::string& nameSpace, const std::string& level);
  // Whether Kafka knows the level (case-insensitive).
  static bool validLevel(const std::string& level);

 private:
  LoggerLevel describe(const std::string& name, int spdlogLevel) const;
  mutable std::mutex mutex_;
  std::map<std::string, int64_t> lastModified_;
};

}  // namespace oxbow::connect::runtime
