#pragma once
// The broker's topics as KIP-848 consumer groups see them: shapes (id, partition count) and the
// topics a subscription's regular expression matches. Expressions use RE2's syntax, which Kafka's
// RE2/J shares; matching takes linear time whatever the pattern, so a client's expression cannot
// stall the broker.
#include <string>

#include "group/consumer_group.h"

namespace oxbow::broker {

class TopicRegistry;

// Why the expression does not compile, or "" when it does.
std::string topic_regex_error(const std::string& regex);

class ConsumerTopics : public group::TopicCatalog {
 public:
  explicit ConsumerTopics(const TopicRegistry& topics) : topics_(topics) {}
  std::optional<group::TopicShape> find(const std::string& name) const override;
  // Whole-name matches (Kafka's Pattern.matcher(topic).matches()); never the internal topics.
  std::vector<std::string> matching(const std::string& regex) const override;

 private:
  const TopicRegistry& topics_;
};

}  // namespace oxbow::broker
