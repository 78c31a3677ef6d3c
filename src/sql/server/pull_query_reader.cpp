#include "sql/server/pull_query_reader.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <stdexcept>

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/queryable.h"
#include "rdkafka/offsets.h"

namespace oxbow::sql::server {

namespace {

using streams::QueryableStoreTypes;
using streams::StoreQueryParameters;
using Timestamped = streams::ValueAndTimestamp<Row>;

// Hands the plan's rows to the caller, up to the LIMIT.
class Emitter {
 public:
  Emitter(PullPlan& plan, const std::function<bool(const Row&)>& emit) : plan_(plan), emit_(emit) {}
  bool wants_more() const { return !plan_.limit || count_ < *plan_.limit; }
  // False once no more rows are wanted.
  bool take(const Row& key, const streams::Window* window, const Row& stored, int64_t timestamp) {
    auto row = plan_.rows->row(key, window, stored, timestamp);
    if (!row) return true;
    ++count_;
    return emit_(*row) && wants_more();
  }

 private:
  PullPlan& plan_;
  const std::function<bool(const Row&)>& emit_;
  int64_t count_ = 0;
};

Row key_row(const Value& v) {
  Row key(1);
  key[0] = v;
  return key;
}

// Every entry of `it` through `take(entry)` until it says stop; false when it did.
template <class Iterator, class Take>
bool drain(Iterator it, Take take) {
  while (it.hasNext())
    if (!take(it.next())) return false;
  return true;
}

void read_key_values(const streams::KafkaStreams& streams, const std::string& topology,
                     PullPlan& plan, Emitter& out) {
  auto store = streams.store(
      topology, StoreQueryParameters<>::fromNameAndType(
                    plan.store, QueryableStoreTypes::timestampedKeyValueStore<Row, Row>()));
  auto take = [&](const auto& e) {
    return out.take(e.key, nullptr, e.value.value, e.value.timestamp);
  };
  const KeyBounds& keys = plan.bounds.keys;
  if (keys.kind == KeyBounds::Kind::kLookup) {
    for (const Value& v : keys.keys) {
      Row key = key_row(v);
      if (auto found = store.get(key);
          found && !out.take(key, nullptr, found->value, found->timestamp))
        return;
    }
  } else if (keys.kind == KeyBounds::Kind::kRange) {
    for (const StoreRange& r : plan.ranges)
      if (!drain(store.range(key_row(r.from), key_row(r.to)), take)) return;
  } else {
    drain(store.all(), take);
  }
}

void read_windows(const streams::KafkaStreams& streams, const std::string& topology, PullPlan& plan,
                  Emitter& out) {
  auto store = streams.store(
      topology, StoreQueryParameters<>::fromNameAndType(
                    plan.store, QueryableStoreTypes::timestampedWindowStore<Row, Row>()));
  const TimeBounds& t = plan.bounds.starts;
  const int64_t size = plan.window_size_ms.value_or(0);
  auto take = [&](const Row& key, int64_t start, const Timestamped& v) {
    streams::Window window{start, start + size};
    return out.take(key, &window, v.value, v.timestamp);
  };
  auto take_windowed = [&](const auto& e) { return take(e.key.key, e.key.window.start, e.value); };
  const KeyBounds& keys = plan.bounds.keys;
  if (keys.kind == KeyBounds::Kind::kLookup) {
    for (const Value& v : keys.keys) {
      Row key = key_row(v);
      auto take_start = [&](const auto& e) { return take(key, e.key, e.value); };
      if (!drain(store.fetch(key, t.from, t.to), take_start)) return;
    }
  } else if (keys.kind == KeyBounds::Kind::kRange) {
    for (const StoreRange& r : plan.ranges)
      if (!drain(store.fetch(key_row(r.from), key_row(r.to), t.from, t.to), take_windowed)) return;
  } else {
    drain(store.fetchAll(t.from, t.to), take_windowed);
  }
}

// Sessions overlapping the window-start bounds: those starting inside them are among them.
// ROWTIME of a session is its end, as ksqlDB's.
void read_sessions(const streams::KafkaStreams& streams, const std::string& topology,
                   PullPlan& plan, Emitter& out) {
  auto store =
      streams.store(topology, StoreQueryParameters<>::fromNameAndType(
                                  plan.store, QueryableStoreTypes::sessionStore<Row, Row>()));
  const TimeBounds& t = plan.bounds.starts;
  auto take = [&](const auto& e) {
    return out.take(e.key.key, &e.key.window, e.value, e.key.window.end);
  };
  if (plan.bounds.keys.kind == KeyBounds::Kind::kLookup) {
    for (const Value& v : plan.bounds.keys.keys)
      if (!drain(store.findSessions(key_row(v), t.from, t.to), take)) return;
    return;
  }
  // The planner turns a session table's scan into its key type's whole ranges.
  for (const StoreRange& r : plan.ranges)
    if (!drain(store.findSessions(key_row(r.from), key_row(r.to), t.from, t.to), take)) return;
}

constexpr int kTimeoutMs = 10'000;
constexpr int kPollMs = 100;

// A consumer of no group over `topic`'s records up to the ends its partitions had at the start.
class TopicReader {
 public:
  TopicReader(const ClientConfig& client, const std::string& topic, const std::string& id)
      : consumer_(new_kafka_client(RD_KAFKA_CONSUMER, client,
                                   {{"group.id", id},
                                    {"enable.auto.commit", "false"},
                                    {"enable.auto.offset.store", "false"},
                                    {"enable.partition.eof", "true"}})) {
    rd_kafka_topic_partition_list_t* assigned = rd_kafka_topic_partition_list_new(4);
    for (int32_t p = 0; p < partition_count(topic); ++p) {
      int64_t low = 0, high = 0;
      auto err = rdkafka::query_watermarks(consumer_, topic, p, &low, &high, kTimeoutMs);
      if (err) fail(topic, rd_kafka_err2str(err));
      if (high <= low) continue;
      ends_[p] = high;
      rd_kafka_topic_partition_list_add(assigned, topic.c_str(), p)->offset = low;
    }
    rd_kafka_assign(consumer_, assigned);
    rd_kafka_topic_partition_list_destroy(assigned);
  }
  ~TopicReader() {
    rd_kafka_consumer_close(consumer_);
    rd_kafka_destroy(consumer_);
  }
  // Calls `take(message)` for each record before the ends; false from it stops.
  template <class Take>
  void read(Take take) {
    auto last_progress = std::chrono::steady_clock::now();
    while (!ends_.empty()) {
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_, kPollMs);
      if (!m) {
        if (std::chrono::steady_clock::now() - last_progress >
            std::chrono::milliseconds(kTimeoutMs))
          fail(topic_, "no progress in 10 s");
        continue;
      }
      last_progress = std::chrono::steady_clock::now();
      bool go_on = handle(m, take);
      rd_kafka_message_destroy(m);
      if (!go_on) return;
    }
  }

 private:
  [[noreturn]] static void fail(const std::string& topic, const std::string& why) {
    throw std::runtime_error("cannot read topic " + topic + ": " + why);
  }
  int32_t partition_count(const std::string& topic) {
    topic_ = topic;
    rd_kafka_topic_t* handle = rd_kafka_topic_new(consumer_, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* metadata = nullptr;
    auto err = rd_kafka_metadata(consumer_, 0, handle, &metadata, kTimeoutMs);
    rd_kafka_topic_destroy(handle);
    if (err) fail(topic, rd_kafka_err2str(err));
    int32_t count = metadata->topic_cnt == 1 && !metadata->topics[0].err
                        ? metadata->topics[0].partition_cnt
                        : -1;
    rd_kafka_metadata_destroy(metadata);
    if (count < 0) fail(topic, "unknown topic");
    return count;
  }
  template <class Take>
  bool handle(rd_kafka_message_t* m, Take& take) {
    auto end = ends_.find(m->partition);
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (end != ends_.end()) ends_.erase(end);
      return true;
    }
    if (m->err) fail(topic_, rd_kafka_message_errstr(m));
    if (end == ends_.end() || m->offset >= end->second) return true;
    if (m->offset + 1 >= end->second) ends_.erase(end);
    return take(m);
  }

  rd_kafka_t* consumer_;
  std::string topic_;
  std::map<int32_t, int64_t> ends_;  // the partitions not read to their end yet
};

}  // namespace

void read_pull_rows(const streams::KafkaStreams& streams, const std::string& topology,
                    PullPlan& plan, const std::function<bool(const Row&)>& emit) {
  Emitter out(plan, emit);
  if (!out.wants_more()) return;
  switch (plan.store_kind) {
    case PullStoreKind::kKeyValue:
      return read_key_values(streams, topology, plan, out);
    case PullStoreKind::kWindow:
      return read_windows(streams, topology, plan, out);
    case PullStoreKind::kSession:
      return read_sessions(streams, topology, plan, out);
  }
}

void read_stream_rows(const ClientConfig& client, PullPlan& plan,
                      const std::function<bool(const Row&)>& emit) {
  Emitter out(plan, emit);
  if (!out.wants_more()) return;
  const StreamScan& scan = *plan.stream;
  TopicReader reader(client, scan.topic, plan.query_id);
  reader.read([&](const rd_kafka_message_t* m) {
    Row key, value;
    try {
      key = scan.key.deserialize(
          scan.topic, std::string_view(static_cast<const char*>(m->key), m->key ? m->key_len : 0));
      if (m->payload)
        value = scan.value.deserialize(
            scan.topic, std::string_view(static_cast<const char*>(m->payload), m->len));
    } catch (const std::exception&) {
      return true;  // as a query skips a record it cannot read
    }
    return out.take(key, nullptr, value, rd_kafka_message_timestamp(m, nullptr));
  });
}

}  // namespace oxbow::sql::server
