#include "broker/handlers/fetch_session.h"

#include <chrono>
#include <limits>
#include <random>

namespace oxbow::broker {

namespace pr = oxbow::protocol;
using pr::ErrorCode;

namespace {

constexpr int32_t kInitialEpoch = 0;
constexpr int32_t kFinalEpoch = -1;

}  // namespace

FetchSessions::FetchSessions(size_t max_sessions, int64_t eviction_ms)
    : max_sessions_(max_sessions), eviction_ms_(eviction_ms), id_state_(std::random_device{}()) {}

int32_t FetchSessions::next_epoch(int32_t epoch) {
  if (epoch < 0) return epoch;
  return epoch == std::numeric_limits<int32_t>::max() ? 1 : epoch + 1;
}

FetchSessions::Key FetchSessions::key_of(bool uses_topic_ids, const std::string& topic,
                                         const pr::Uuid& id, int32_t partition) {
  return {uses_topic_ids ? std::string(id.begin(), id.end()) : topic, partition};
}

void FetchSessions::put(Session& session, Partition partition) {
  auto key = key_of(session.uses_topic_ids, partition.topic, partition.topic_id,
                    partition.request.partition);
  if (auto it = session.index.find(key); it != session.index.end()) {
    it->second->request = partition.request;
    return;
  }
  session.partitions.push_back(std::move(partition));
  session.index.emplace(std::move(key), std::prev(session.partitions.end()));
}

void FetchSessions::apply_changes(Session& session, const pr::FetchRequest& request) {
  for (const auto& topic : request.topics) {
    for (const auto& p : topic.partitions) put(session, {topic.topic, topic.topic_id, p});
  }
  for (const auto& topic : request.forgotten_topics_data) {
    for (int32_t partition : topic.partitions) {
      auto it = session.index.find(
          key_of(session.uses_topic_ids, topic.topic, topic.topic_id, partition));
      if (it == session.index.end()) continue;
      session.partitions.erase(it->second);
      session.index.erase(it);
    }
  }
}

void FetchSessions::rewrite_request(const Session& session, pr::FetchRequest& request) {
  request.topics.clear();
  request.forgotten_topics_data.clear();
  for (const auto& p : session.partitions) {
    bool same_topic = !request.topics.empty() && request.topics.back().topic == p.topic &&
                      request.topics.back().topic_id == p.topic_id;
    if (!same_topic) {
      auto& topic = request.topics.emplace_back();
      topic.topic = p.topic;
      topic.topic_id = p.topic_id;
    }
    request.topics.back().partitions.push_back(p.request);
  }
}

FetchSessionContext FetchSessions::begin(pr::FetchRequest& request, int16_t version,
                                         int64_t now_ms) {
  FetchSessionContext context;
  context.version = version;
  context.request_epoch = request.session_epoch;
  if (version < 7) return context;
  int32_t id = request.session_id;
  if (request.session_epoch == kInitialEpoch || request.session_epoch == kFinalEpoch) {
    // A full fetch closes the session it names, and asks for a new one unless it is final. The
    // usual sessionless fetch (id 0, final epoch) takes no lock.
    if (id != 0) {
      std::lock_guard lock(mutex_);
      sessions_.erase(id);
    }
    context.create_session = request.session_epoch == kInitialEpoch;
    return context;
  }
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) {
    context.error = ErrorCode::kFetchSessionIdNotFound;
    return context;
  }
  Session& session = it->second;
  if (session.epoch != request.session_epoch) {
    context.error = ErrorCode::kInvalidFetchSessionEpoch;
    return context;
  }
  if (session.uses_topic_ids != (version >= 13)) {
    context.error = ErrorCode::kFetchSessionTopicIdError;
    return context;
  }
  apply_changes(session, request);
  if (session.partitions.empty()) {
    // Everything forgotten: the session ends, and this is a fetch of nothing.
    sessions_.erase(it);
    request.topics.clear();
    return context;
  }
  session.last_used_ms = now_ms;
  session.epoch = next_epoch(session.epoch);
  context.session_id = id;
  rewrite_request(session, request);
  return context;
}

FetchSessions::Session* FetchSessions::live_session(const FetchSessionContext& context) {
  auto it = sessions_.find(context.session_id);
  // A duplicate request may have moved the session on since begin().
  if (it == sessions_.end() || it->second.epoch != next_epoch(context.request_epoch)) {
    return nullptr;
  }
  return &it->second;
}

void FetchSessions::select(const FetchSessionContext& context, pr::FetchResponse& response) {
  response.session_id = 0;
  if (context.error != ErrorCode::kNone) {
    response.error_code = pr::code(context.error);
    response.responses.clear();
    return;
  }
  if (context.session_id == 0) return;
  std::lock_guard lock(mutex_);
  Session* session = live_session(context);
  response.session_id = context.session_id;
  if (!session) {
    response.error_code = pr::code(ErrorCode::kInvalidFetchSessionEpoch);
    response.responses.clear();
    return;
  }
  // As Kafka: records, a moved high watermark or log start offset, or an error.
  for (auto& topic : response.responses) {
    std::erase_if(topic.partitions, [&](const pr::FetchResponse::PartitionData& out) {
      auto it = session->index.find(
          key_of(session->uses_topic_ids, topic.topic, topic.topic_id, out.partition_index));
      if (it == session->index.end()) return false;
      const Partition& known = *it->second;
      return out.records.size() == 0 && out.error_code == 0 &&
             out.high_watermark == known.high_watermark &&
             out.log_start_offset == known.log_start_offset;
    });
  }
  std::erase_if(response.responses, [](const auto& topic) { return topic.partitions.empty(); });
}

void FetchSessions::commit(const FetchSessionContext& context, const pr::FetchRequest& request,
                           pr::FetchResponse& response, bool throttled, int64_t now_ms) {
  if (throttled || context.error != ErrorCode::kNone) return;
  if (context.session_id == 0) {
    if (context.create_session) create(request, response, context.version, now_ms);
    return;
  }
  std::lock_guard lock(mutex_);
  Session* session = live_session(context);
  if (!session) return;
  for (const auto& topic : response.responses) {
    for (const auto& out : topic.partitions) {
      auto it = session->index.find(
          key_of(session->uses_topic_ids, topic.topic, topic.topic_id, out.partition_index));
      if (it == session->index.end()) continue;
      Partition& known = *it->second;
      // An error is told again once it is gone: the high watermark will differ.
      known.high_watermark = out.error_code != 0 ? -1 : out.high_watermark;
      known.log_start_offset = out.log_start_offset;
      // Partitions that returned records go last, so that the others are read first next time.
      if (out.records.size() > 0) {
        session->partitions.splice(session->partitions.end(), session->partitions, it->second);
      }
    }
  }
}

void FetchSessions::create(const pr::FetchRequest& request, pr::FetchResponse& response,
                           int16_t version, int64_t now_ms) {
  size_t size = 0;
  for (const auto& topic : request.topics) size += topic.partitions.size();
  std::lock_guard lock(mutex_);
  if (sessions_.size() >= max_sessions_ && !make_room(size, now_ms)) return;
  Session session;
  session.uses_topic_ids = version >= 13;
  session.created_ms = session.last_used_ms = now_ms;
  for (size_t t = 0; t < request.topics.size(); ++t) {
    const auto& topic = request.topics[t];
    for (size_t p = 0; p < topic.partitions.size(); ++p) {
      Partition partition{topic.topic, topic.topic_id, topic.partitions[p]};
      if (t < response.responses.size() && p < response.responses[t].partitions.size()) {
        const auto& out = response.responses[t].partitions[p];
        partition.high_watermark = out.error_code != 0 ? -1 : out.high_watermark;
        partition.log_start_offset = out.log_start_offset;
      }
      put(session, std::move(partition));
    }
  }
  int32_t id = new_session_id();
  sessions_.emplace(id, std::move(session));
  response.session_id = id;
}

// As Kafka's cache: a session idle longer than the eviction time goes first; otherwise the
// smallest session older than that time, if the new one has more partitions.
bool FetchSessions::make_room(size_t size, int64_t now_ms) {
  if (sessions_.empty()) return false;
  auto idlest = sessions_.begin();
  auto smallest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.last_used_ms < idlest->second.last_used_ms) idlest = it;
    bool settled = now_ms - it->second.created_ms > eviction_ms_;
    if (settled && (smallest == sessions_.end() ||
                    it->second.partitions.size() < smallest->second.partitions.size())) {
      smallest = it;
    }
  }
  auto victim = sessions_.end();
  if (now_ms - idlest->second.last_used_ms > eviction_ms_) {
    victim = idlest;
  } else if (smallest != sessions_.end() && size > smallest->second.partitions.size()) {
    victim = smallest;
  }
  if (victim == sessions_.end()) return false;
  sessions_.erase(victim);
  ++evictions_;
  return true;
}

int32_t FetchSessions::new_session_id() {
  std::mt19937_64 random(id_state_++);
  std::uniform_int_distribution<int32_t> ids(1, std::numeric_limits<int32_t>::max());
  int32_t id;
  do {
    id = ids(random);
  } while (sessions_.contains(id));
  return id;
}

size_t FetchSessions::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

uint64_t FetchSessions::evictions() const {
  std::lock_guard lock(mutex_);
  return evictions_;
}

size_t FetchSessions::partitions() const {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& [_, session] : sessions_) n += session.partitions.size();
  return n;
}

}  // namespace oxbow::broker
