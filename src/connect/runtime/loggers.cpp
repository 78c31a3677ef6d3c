#include "connect/runtime/loggers.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/properties.h"
#include "oxbow/connect/errors.h"

namespace oxbow::connect::runtime {

namespace {

struct LevelName {
  const char* kafka;
  spdlog::level::level_enum spdlog;
};

constexpr LevelName kLevels[] = {
    {"TRACE", spdlog::level::trace}, {"DEBUG", spdlog::level::debug},
    {"INFO", spdlog::level::info},   {"WARN", spdlog::level::warn},
    {"ERROR", spdlog::level::err},   {"FATAL", spdlog::level::critical},
    {"OFF", spdlog::level::off},
};

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

const LevelName* byKafkaName(const std::string& level) {
  std::string wanted = upper(level);
  for (const LevelName& name : kLevels) {
    if (wanted == name.kafka) return &name;
  }
  return nullptr;
}

const char* kafkaName(int level) {
  for (const LevelName& name : kLevels) {
    if (name.spdlog == level) return name.kafka;
  }
  return "INFO";
}

// Every registered logger but the default one (root), by name.
std::map<std::string, std::shared_ptr<spdlog::logger>> namedLoggers() {
  std::map<std::string, std::shared_ptr<spdlog::logger>> out;
  std::shared_ptr<spdlog::logger> root = spdlog::default_logger();
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& logger) {
    if (logger != root && !logger->name().empty()) out[logger->name()] = logger;
  });
  return out;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool WorkerLoggers::validLevel(const std::string& level) {
  return byKafkaName(level) != nullptr;
}

LoggerLevel WorkerLoggers::describe(const std::string& name, int spdlogLevel) const {
  auto found = lastModified_.find(name);
  return LoggerLevel{kafkaName(spdlogLevel), found == lastModified_.end()
                                                 ? std::nullopt
                                                 : std::optional<int64_t>(found->second)};
}

std::map<std::string, LoggerLevel> WorkerLoggers::all() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, LoggerLevel> out;
  for (const auto& [name, logger] : namedLoggers()) out[name] = describe(name, logger->level());
  out[ROOT] = describe(ROOT, spdlog::default_logger()->level());
  return out;
}

std::optional<LoggerLevel> WorkerLoggers::level(const std::string& logger) const {
  if (ascii_lower(logger) == ROOT) {
    std::lock_guard lock(mutex_);
    return describe(ROOT, spdlog::default_logger()->level());
  }
  std::shared_ptr<spdlog::logger> found = spdlog::get(logger);
  if (!found || found == spdlog::default_logger()) return std::nullopt;
  std::lock_guard lock(mutex_);
  return describe(logger, found->level());
}

std::vector<std::string> WorkerLoggers::setLevel(const std::string& nameSpace,
                                                 const std::string& level) {
  const LevelName* wanted = byKafkaName(level);
  if (wanted == nullptr) throw ConnectException("invalid log level '" + level + "'.");
  bool root = ascii_lower(nameSpace) == ROOT;
  std::map<std::string, std::shared_ptr<spdlog::logger>> loggers = namedLoggers();
  std::vector<std::pair<std::string, std::shared_ptr<spdlog::logger>>> chosen;
  for (const auto& [name, logger] : loggers) {
    if (root || name.starts_with(nameSpace)) chosen.emplace_back(name, logger);
  }
  if (root) {
    chosen.emplace_back(ROOT, spdlog::default_logger());
  } else if (!loggers.contains(nameSpace) && spdlog::get(nameSpace) == nullptr) {
    std::shared_ptr<spdlog::logger> created = spdlog::default_logger()->clone(nameSpace);
    spdlog::register_logger(created);
    chosen.emplace_back(nameSpace, created);
  }
  std::lock_guard lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, logger] : chosen) {
    // As Kafka, a logger already at the level keeps its last_modified but is still listed.
    if (logger->level() != wanted->spdlog) {
      logger->set_level(wanted->spdlog);
      lastModified_[name] = nowMs();
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace oxbow::connect::runtime
