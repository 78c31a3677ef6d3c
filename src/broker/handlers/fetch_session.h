#pragma once
// KIP-227 incremental fetch sessions. A client that sends a full Fetch with session epoch 0 gets a
// session id; its later requests name only the partitions whose fetch position changed (and the
// ones to forget), and the answers carry only the partitions with something new: records, a moved
// high watermark or log start offset, or an error. Sessions live in memory
// (max.incremental.fetch.session.cache.slots of them, 1000 by default); when the cache is full, a
// session idle for two minutes, or one with fewer partitions that is not new, makes room, as in
// Kafka. Epochs: a session expects epoch 1 after it is created and one more after each
// incremental request it accepts.
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "protocol/errors.h"
#include "protocol/messages/fetch.h"

namespace oxbow::broker {

// What begin() made of a request, for select() and commit().
struct FetchSessionContext {
  protocol::ErrorCode error = protocol::ErrorCode::kNone;  // answer it with no partitions
  int16_t version = 0;
  int32_t session_id = 0;  // the incremental session, or 0
  int32_t request_epoch = -1;
  bool create_session = false;  // a full fetch asking for a new session
};

class FetchSessions {
 public:
  explicit FetchSessions(size_t max_sessions, int64_t eviction_ms = 120'000);

  // Resolves the request's session. A full request is left as it is (and closes the session it
  // names); an incremental one is rewritten to fetch every partition of its session, with the
  // request's changes applied.
  FetchSessionContext begin(protocol::FetchRequest& request, int16_t version, int64_t now_ms);
  // Before the response is sized for quotas: sets its session id and error, and for an
  // incremental session keeps only the partitions the client must hear about.
  void select(const FetchSessionContext& context, protocol::FetchResponse& response);
  // Once the response is final (`throttled`: a quota emptied it, so nothing was told): a full
  // fetch gets its session, an incremental one remembers what the client now knows.
  void commit(const FetchSessionContext& context, const protocol::FetchRequest& request,
              protocol::FetchResponse& response, bool throttled, int64_t now_ms);

  size_t size() const;
  size_t partitions() const;
  // Sessions evicted to make room for new ones.
  uint64_t evictions() const;

 private:
  using Key = std::pair<std::string, int32_t>;  // topic (id bytes or name), partition
  struct Partition {
    std::string topic;
    protocol::Uuid topic_id{};
    protocol::FetchRequest::FetchPartition request;
    int64_t high_watermark = -1;    // as last told
    int64_t log_start_offset = -1;  // as last told
  };
  struct Session {
    std::list<Partition> partitions;  // in fetch order; those that returned records go last
    std::map<Key, std::list<Partition>::iterator> index;
    bool uses_topic_ids = false;
    int32_t epoch = 1;  // the epoch the next request must carry
    int64_t created_ms = 0;
    int64_t last_used_ms = 0;
  };

  static int32_t next_epoch(int32_t epoch);
  static Key key_of(bool uses_topic_ids, const std::string& topic, const protocol::Uuid& id,
                    int32_t partition);
  static void apply_changes(Session& session, const protocol::FetchRequest& request);
  static void rewrite_request(const Session& session, protocol::FetchRequest& request);
  static void put(Session& session, Partition partition);
  Session* live_session(const FetchSessionContext& context);
  void create(const protocol::FetchRequest& request, protocol::FetchResponse& response,
              int16_t version, int64_t now_ms);
  bool make_room(size_t size, int64_t now_ms);
  int32_t new_session_id();

  const size_t max_sessions_;
  const int64_t eviction_ms_;
  mutable std::mutex mutex_;
  std::map<int32_t, Session> sessions_;
  uint64_t id_state_;
  uint64_t evictions_ = 0;
};

}  // namespace oxbow::broker
