// KafkaStreams::Impl's settings, lifecycle, stream threads and monitor.
#include "streams/app/kafka_streams_impl.h"

namespace oxbow::streams {

using detail::Config;

KafkaStreams::Impl::Impl(const Topology* topology, Config config)
    : named_instance_(!topology),
      config_(std::move(config)),
      task_(detail::task_config_from(config_)) {
  if (!config_.count("application.id") || config_.at("application.id").empty())
    throw std::invalid_argument("application.id: missing (it names the group and internal topics)");
  if (!config_.count("bootstrap.servers"))
    throw std::invalid_argument("bootstrap.servers: missing");
  threads_ = int_setting("num.stream.threads", 1, 1);
  std::string guarantee = value_or("processing.guarantee", "at_least_once");
  if (guarantee == "exactly_once_v2" || guarantee == "exactly_once_beta")
    exactly_once_ = true;
  else if (guarantee != "at_least_once")
    throw std::invalid_argument("processing.guarantee: '" + guarantee +
                                "' is not one of at_least_once, exactly_once_v2");
  std::string production =
      value_or("default.production.exception.handler", "DefaultProductionExceptionHandler");
  auto ends_with = [&](const std::string& suffix) {
    return production.size() >= suffix.size() &&
           production.compare(production.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with("LogAndContinueProductionExceptionHandler"))
    production_handler_ = [](const ProductionError&) {
      return ProductionExceptionHandlerResponse::CONTINUE;
    };
  else if (!ends_with("DefaultProductionExceptionHandler"))
    throw std::invalid_argument("default.production.exception.handler: unknown handler '" +
                                production +
                                "' (DefaultProductionExceptionHandler or "
                                "LogAndContinueProductionExceptionHandler)");
  // Kafka's defaults: 30 s, or 100 ms under exactly-once.
  commit_interval_ms_ = int_setting("commit.interval.ms", exactly_once_ ? 100 : 30000, 0);
  replication_factor_ = static_cast<int32_t>(int_setting("replication.factor", -1, -1));
  state_dir_ =
      value_or("state.dir", (std::filesystem::temp_directory_path() / "kafka-streams").string());
  task_.state_root = (std::filesystem::path(state_dir_) / task_.application_id).string();
  identity_ = detail::ProcessIdentity::claim(task_.state_root);
  process_id_ = identity_->id();
  configure_group();
  if (topology) {
    topologies_ = detail::single_topology(detail::graph_of(*topology), task_.application_id);
    metadata_->add_topology(*detail::graph_of(*topology), task_.application_id);
  }
  task_.exactly_once = exactly_once_;
  task_.rocksdb_memory = std::make_shared<detail::RocksDbMemory>(
      int_setting(detail::kRocksDbMemoryMaxBytes, detail::kRocksDbMemoryDefault, 8 << 20));
  // Made here rather than in start(): queries look for global stores from any thread.
  if (topology && !detail::graph_of(*topology)->global_tables().empty())
    task_.globals = std::make_shared<detail::GlobalStores>();
  hub_->read = [this](const std::string& topology, const std::string& name,
                      std::optional<int32_t> partition, bool stale,
                      const std::function<bool(detail::KeyValueStore&)>& read) {
    read_store(topology, name, partition, stale, read);
  };
}

KafkaStreams::Impl::~Impl() {
  {
    std::unique_lock lock(hub_->mutex);
    hub_->read = nullptr;
  }
  if (!close(std::chrono::milliseconds(60000))) close(std::chrono::milliseconds::max());
}

void KafkaStreams::Impl::start() {
  // Named topologies added or removed meanwhile wait until the threads run.
  std::lock_guard change(change_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::CREATED)
      throw std::logic_error("start() is allowed only once, from CREATED");
    if (named_instance_) {
      if (named_.empty())
        throw std::logic_error("start(): no named topology was added (addNamedTopology)");
      detail::check_named_topologies(named_);
      std::lock_guard topologies_lock(topologies_mutex_);
      topologies_ = std::make_shared<const detail::Topologies>(named_);
    }
  }
  // Whether set by default.production.exception.handler or setProductionExceptionHandler.
  if (production_handler_ && exactly_once_)
    spdlog::info(
        "{}: under exactly_once_v2 the production exception handler is asked about records the "
        "producer refuses before sending; a write the broker fails aborts its transaction and "
        "fails the thread",
        task_.application_id);
  set_state(State::REBALANCING);
  try {
    if (auto it = config_.find("metrics.listener"); it != config_.end() && !it->second.empty()) {
      metrics_server_ =
          std::make_unique<detail::MetricsServer>(it->second, [this] { return metrics_text(); });
      spdlog::info("stream-client [{}] metrics on port {}", task_.application_id,
                   metrics_server_->port());
    }
    prepare_topics();
    if (task_.globals) {
      // Global tables are read to their end before any stream thread starts, as Kafka does.
      global_thread_ =
          std::make_unique<detail::GlobalThread>(topologies_->front().graph, config_, exactly_once_,
                                                 task_.on_deserialization_error, task_.globals);
      global_thread_->start();
    }
    shutdown_signal_ = std::make_unique<detail::ShutdownSignal>(config_, task_.application_id,
                                                                replication_factor_);
    std::lock_guard lock(threads_mutex_);
    for (int i = 0; i < threads_; ++i) add_thread_locked();
  } catch (...) {
    set_state(State::ERROR);
    throw;
  }
  monitor_ = std::thread([this] { monitor(); });
}

bool KafkaStreams::Impl::close(std::chrono::milliseconds timeout) {
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::NOT_RUNNING) return true;
    first = !closing_;
    closing_ = true;
  }
  if (first && state() != State::ERROR && state() != State::CREATED)
    set_state(State::PENDING_SHUTDOWN);
  std::unique_lock threads_lock(threads_mutex_);
  if (state() == State::NOT_RUNNING) return true;  // another close() finished meanwhile
  for (auto& t : threads_list_) t->request_stop();
  auto deadline = timeout == std::chrono::milliseconds::max()
                      ? std::chrono::steady_clock::time_point::max()
                      : std::chrono::steady_clock::now() + timeout;
  bool stopped = true;
  for (auto& t : threads_list_) {
    while (t->running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (t->running()) stopped = false;
  }
  if (!stopped) return false;
  {
    std::lock_guard lock(mutex_);
    stop_monitor_ = true;
  }
  cv_.notify_all();
  threads_lock.unlock();  // the monitor may be waiting for it
  // The monitor may be in a request to a cluster that is gone: the timeout bounds it too.
  while (monitor_.joinable() && !monitor_exited_ && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (monitor_.joinable() && !monitor_exited_) return false;
  if (monitor_.joinable()) monitor_.join();
  threads_lock.lock();
  threads_list_.clear();
  if (global_thread_) global_thread_->stop();
  if (state() != State::ERROR) set_state(State::NOT_RUNNING);
  metrics_server_.reset();
  return stopped;
}

std::optional<std::string> KafkaStreams::Impl::add_stream_thread() {
  auto s = state();
  if (s != State::RUNNING && s != State::REBALANCING) return std::nullopt;
  std::lock_guard lock(threads_mutex_);
  add_thread_locked();
  return threads_list_.back()->name();
}

std::optional<std::string> KafkaStreams::Impl::remove_stream_thread(
    std::chrono::milliseconds timeout) {
  auto s = state();
  if (s != State::RUNNING && s != State::REBALANCING) return std::nullopt;
  std::unique_ptr<detail::StreamThread> victim;
  {
    std::lock_guard lock(threads_mutex_);
    // The last thread stays: an instance with none would process nothing.
    if (threads_list_.size() <= 1) return std::nullopt;
    victim = std::move(threads_list_.back());
    threads_list_.pop_back();
    resize_caches_locked();
  }
  std::string name = victim->name();
  victim->request_stop();  // commits and leaves the group; its tasks move to the others
  auto deadline = timeout == std::chrono::milliseconds::max()
                      ? std::chrono::steady_clock::time_point::max()
                      : std::chrono::steady_clock::now() + timeout;
  while (victim->running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (victim->running()) {
    std::lock_guard lock(threads_mutex_);
    threads_list_.push_back(std::move(victim));  // still stopping; close() will wait for it
    resize_caches_locked();
    return std::nullopt;
  }
  victim->join();
  return name;
}

void KafkaStreams::Impl::configure_group() {
  group_.process_id = process_id_;
  std::string server = value_or("application.server", "");
  HostInfo self = HostInfo::unavailable();
  if (!server.empty()) {
    size_t colon = server.rfind(':');
    auto port = colon == std::string::npos ? std::nullopt : parse_int64(server.substr(colon + 1));
    if (colon == std::string::npos || colon == 0)
      throw std::invalid_argument(
          "Config application.server isn't in the correct format. "
          "Expected a host:port pair but received " +
          server);
    if (!port || *port < 0 || *port > 65535)
      throw std::invalid_argument("Invalid port supplied in " + server +
                                  " for config application.server");
    self = HostInfo(server.substr(0, colon), static_cast<int32_t>(*port));
  }
  group_.endpoint = server;
  group_.assignor.num_standby_replicas =
      static_cast<int32_t>(int_setting("num.standby.replicas", 0, 0));
  group_.assignor.acceptable_recovery_lag = int_setting("acceptable.recovery.lag", 10000, 0);
  group_.assignor.max_warmup_replicas =
      static_cast<int32_t>(int_setting("max.warmup.replicas", 2, 1));
  group_.probing_rebalance_interval_ms =
      int_setting("probing.rebalance.interval.ms", 600000, 60000);
  metadata_ = std::make_shared<detail::MetadataState>(
      self, [this](const std::string& topic) { return topic_partitions(topic); });
  group_.on_hosts = [metadata = metadata_](const detail::AssignmentInfo& info, int) {
    metadata->update(info);
  };
}

std::string KafkaStreams::Impl::metrics_text() {
  detail::MetricsView view;
  view.application_id = task_.application_id;
  view.state = to_string(state());
  view.rocksdb_memory = task_.rocksdb_memory.get();
  {
    std::lock_guard lock(threads_mutex_);
    for (auto& t : threads_list_)
      if (t->running()) view.threads.push_back(t->metrics());
  }
  return detail::prometheus_text(view);
}

void KafkaStreams::Impl::set_processing_handler(ProcessingExceptionHandler h) {
  task_.on_processing_error = std::move(h);
}

void KafkaStreams::Impl::clean_up() {
  auto s = state();
  if (s != State::CREATED && s != State::NOT_RUNNING && s != State::ERROR)
    throw std::logic_error("cleanUp() is not allowed while the application runs");
  std::filesystem::remove_all(std::filesystem::path(state_dir_) / config_.at("application.id"));
}

std::string KafkaStreams::Impl::value_or(const std::string& key,
                                         const std::string& fallback) const {
  auto it = config_.find(key);
  return it == config_.end() ? fallback : it->second;
}

int64_t KafkaStreams::Impl::int_setting(const std::string& key, int64_t fallback,
                                        int64_t min) const {
  auto it = config_.find(key);
  if (it == config_.end()) return fallback;
  auto n = parse_int64(it->second);
  if (!n || *n < min)
    throw std::invalid_argument(key + ": '" + it->second +
                                "' is not a number >= " + std::to_string(min));
  return *n;
}

void KafkaStreams::Impl::set_state(State next) {
  State old;
  {
    std::lock_guard lock(mutex_);
    old = state_;
    if (old == next) return;
    state_ = next;
    state_seen_.store(next, std::memory_order_release);
  }
  spdlog::info("stream-client [{}] State transition from {} to {}", task_.application_id,
               to_string(old), to_string(next));
  if (listener_) listener_(next, old);
}

void KafkaStreams::Impl::prepare_topics() {
  detail::prepare_internal_topics(config_, *current_topologies(), internal_topic_settings());
}

detail::InternalTopicSettings KafkaStreams::Impl::internal_topic_settings() const {
  detail::InternalTopicSettings settings;
  settings.replication_factor = replication_factor_;
  settings.window_changelog_extra_retention_ms =
      int_setting("windowstore.changelog.additional.retention.ms", 86400000, 0);
  return settings;
}

void KafkaStreams::Impl::add_thread_locked() {
  detail::ThreadConfig tc;
  tc.app = config_;
  tc.group = group_;
  tc.task = task_;
  tc.commit_interval_ms = commit_interval_ms_;
  tc.repartition_purge_interval_ms = int_setting("repartition.purge.interval.ms", 30000, 0);
  tc.exactly_once = exactly_once_;
  tc.production_handler = production_handler_;
  tc.client_id = task_.application_id + "-StreamThread-" + std::to_string(++thread_counter_);
  tc.thread_index = thread_counter_;
  tc.transactional_id =
      task_.application_id + "-" + process_id_ + "-" + std::to_string(thread_counter_);
  tc.task.cache_budget = std::make_shared<detail::CacheBudget>();
  auto thread = std::make_unique<detail::StreamThread>(current_topologies(), tc);
  thread->start();
  threads_list_.push_back(std::move(thread));
  resize_caches_locked();
  // The new member makes the group rebalance: REBALANCING until its first assignment is done
  // (the monitor's next look may come after that), as Kafka's thread state listener reports.
  if (state() == State::RUNNING) set_state(State::REBALANCING);
}

void KafkaStreams::Impl::resize_caches_locked() {
  if (threads_list_.empty()) return;
  int64_t share = task_.cache_max_bytes / static_cast<int64_t>(threads_list_.size());
  for (auto& t : threads_list_) t->cache_budget().max_bytes = share;
}

void KafkaStreams::Impl::monitor() {
  auto next_signal_check = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!stop_monitor_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (stop_monitor_) break;
    lock.unlock();
    bool shutdown_requested = false;
    if (std::chrono::steady_clock::now() >= next_signal_check) {
      next_signal_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      shutdown_requested = shutdown_signal_->requested();
    }
    {
      std::lock_guard threads_lock(threads_mutex_);
      check_threads(shutdown_requested);
    }
    lock.lock();
  }
  monitor_exited_ = true;
}

void KafkaStreams::Impl::check_threads(bool shutdown_requested) {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
  }
  if (shutdown_requested) {
    spdlog::error("stream-client [{}] an instance of the application asked all to shut down",
                  task_.application_id);
    shut_down_on_error_locked();
    return;
  }
  if (global_thread_ && global_thread_->failed()) {
    spdlog::error("stream-client [{}] the global thread failed: {}", task_.application_id,
                  global_thread_->failure());
    shut_down_on_error_locked();
    return;
  }
  bool rebalancing = false;
  for (size_t i = 0; i < threads_list_.size(); ++i) {
    auto& t = threads_list_[i];
    if (t->failed() && !t->running()) {
      auto response = StreamThreadExceptionResponse::SHUTDOWN_CLIENT;
      if (handler_) response = handler_(StreamsException(t->failure()));
      if (response == StreamThreadExceptionResponse::REPLACE_THREAD) {
        t->join();
        threads_list_.erase(threads_list_.begin() + static_cast<long>(i));
        add_thread_locked();
        return;
      }
      if (response == StreamThreadExceptionResponse::SHUTDOWN_APPLICATION)
        shutdown_signal_->request(process_id_, t->failure());
      shut_down_on_error_locked();
      return;
    }
    rebalancing = rebalancing || t->rebalancing();
  }
  auto s = state();
  if (s == State::REBALANCING || s == State::RUNNING)
    set_state(rebalancing ? State::REBALANCING : State::RUNNING);
}

void KafkaStreams::Impl::shut_down_on_error_locked() {
  set_state(State::PENDING_ERROR);
  for (auto& other : threads_list_) other->request_stop();
  for (auto& other : threads_list_) other->join();
  set_state(State::ERROR);
  std::lock_guard lock(mutex_);
  stop_monitor_ = true;
}

}  // namespace oxbow::streams
