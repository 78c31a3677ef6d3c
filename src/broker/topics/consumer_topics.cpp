#include "broker/topics/consumer_topics.h"

#include <map>
#include <memory>
#include <mutex>

#include <re2/re2.h>

#include "broker/topics/internal_topic.h"
#include "broker/topics/topic_registry.h"

namespace oxbow::broker {

namespace {

// Compiled expressions, kept because every heartbeat of a member carries its expression. Bounded:
// past the limit the cache starts over.
constexpr size_t kMaxCached = 1024;

std::shared_ptr<const re2::RE2> compiled(const std::string& regex) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const re2::RE2>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(regex);
  if (it != cache.end()) return it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(regex, options);
  cache.emplace(regex, re);
  return re;
}

}  // namespace

std::string topic_regex_error(const std::string& regex) {
  auto re = compiled(regex);
  return re->ok() ? "" : re->error();
}

std::optional<group::TopicShape> ConsumerTopics::find(const std::string& name) const {
  auto info = topics_.find(name);
  if (!info) return std::nullopt;
  return group::TopicShape{info->id, info->name, info->partitions};
}

std::vector<std::string> ConsumerTopics::matching(const std::string& regex) const {
  auto re = compiled(regex);
  std::vector<std::string> out;
  if (!re->ok()) return out;
  for (const auto& info : topics_.list()) {
    if (info.name == kOffsetsTopic || info.name == kTransactionStateTopic) continue;
    if (re2::RE2::FullMatch(info.name, *re)) out.push_back(info.name);
  }
  return out;
}

}  // namespace oxbow::broker
