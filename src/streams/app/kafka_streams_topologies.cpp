// KafkaStreams::Impl's named topologies, added and removed while the instance runs.
#include "streams/app/kafka_streams_impl.h"

namespace oxbow::streams {

using detail::Config;

void KafkaStreams::Impl::add_named_topology(const std::string& name, const Topology& topology,
                                            const std::string& prefix) {
  require_named_instance("addNamedTopology");
  std::lock_guard change(change_mutex_);
  detail::NamedGraph added{
      name, detail::graph_of(topology),
      prefix.empty() ? detail::default_prefix(task_.application_id, name) : prefix};
  detail::Topologies next = named_;
  next.push_back(added);
  detail::check_named_topologies(next);
  State s = state();
  bool running = s != State::CREATED;
  if (running && s != State::RUNNING && s != State::REBALANCING)
    throw std::logic_error(std::string("addNamedTopology(): the instance is ") + to_string(s));
  if (running) detail::prepare_internal_topics(config_, {added}, internal_topic_settings());
  metadata_->add_topology(*added.graph, added.prefix);
  named_ = std::move(next);
  {
    std::lock_guard lock(mutex_);
    named_topologies_.insert_or_assign(name, topology);
  }
  if (running) publish_topologies();
}

void KafkaStreams::Impl::remove_named_topology(const std::string& name, bool reset_offsets) {
  require_named_instance("removeNamedTopology");
  std::lock_guard change(change_mutex_);
  auto it = std::find_if(named_.begin(), named_.end(),
                         [&](const detail::NamedGraph& t) { return t.name == name; });
  if (it == named_.end())
    throw std::invalid_argument("removeNamedTopology(): no named topology " + name);
  detail::NamedGraph removed = *it;
  State s = state();
  if (s != State::CREATED && s != State::RUNNING && s != State::REBALANCING)
    throw std::logic_error(std::string("removeNamedTopology(): the instance is ") + to_string(s));
  named_.erase(it);
  if (s != State::CREATED) {
    publish_topologies();
    wait_for_threads_to_apply();
    std::filesystem::remove_all(std::filesystem::path(task_.state_root) / ("__" + name + "__"));
    if (reset_offsets) reset_offsets_of(removed);
  }
  std::lock_guard lock(mutex_);
  named_topologies_.erase(name);
}

const Topology* KafkaStreams::Impl::topology_by_name(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = named_topologies_.find(name);
  return it == named_topologies_.end() ? nullptr : &it->second;
}

void KafkaStreams::Impl::require_named_instance(const char* call) const {
  if (!named_instance_)
    throw std::logic_error(std::string(call) +
                           "(): this instance runs the topology it was made with; named "
                           "topologies go to an instance made without one, KafkaStreams(config)");
}

std::shared_ptr<const detail::Topologies> KafkaStreams::Impl::current_topologies() const {
  std::lock_guard lock(topologies_mutex_);
  return topologies_;
}

void KafkaStreams::Impl::publish_topologies() {
  auto next = std::make_shared<const detail::Topologies>(named_);
  {
    std::lock_guard lock(topologies_mutex_);
    topologies_ = next;
  }
  std::lock_guard threads_lock(threads_mutex_);
  for (auto& t : threads_list_) t->set_topologies(next);
}

void KafkaStreams::Impl::wait_for_threads_to_apply() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    bool applied = true;
    {
      std::shared_lock lock(threads_mutex_);
      for (auto& t : threads_list_) applied = applied && t->topologies_applied();
    }
    if (applied) return;
    if (std::chrono::steady_clock::now() >= deadline)
      throw StreamsException("the stream threads did not take the new topologies within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void KafkaStreams::Impl::reset_offsets_of(const detail::NamedGraph& removed) {
  {
    std::lock_guard lock(metadata_client_mutex_);
    detail::delete_position_groups(metadata_client().get(), {removed.prefix});
  }
  std::set<std::string> topics, still_read;
  for (const auto& t : named_)
    for (const auto& sub : t.graph->subtopologies())
      for (const auto& topic : sub.source_topics) still_read.insert(t.wire(topic));
  for (const auto& sub : removed.graph->subtopologies())
    for (const auto& t : sub.source_topics)
      if (!still_read.count(removed.wire(t))) topics.insert(removed.wire(t));
  auto* list = rd_kafka_topic_partition_list_new(0);
  for (const auto& t : topics)
    for (int32_t p = 0, n = topic_partitions(t); p < n; ++p)
      rd_kafka_topic_partition_list_add(list, t.c_str(), p);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      std::lock_guard lock(metadata_client_mutex_);
      detail::delete_group_offsets(metadata_client().get(), task_.application_id, list);
      break;
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() >= deadline) {
        rd_kafka_topic_partition_list_destroy(list);
        throw StreamsException(std::string("removeNamedTopology(): ") + e.what());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  rd_kafka_topic_partition_list_destroy(list);
}

}  // namespace oxbow::streams
