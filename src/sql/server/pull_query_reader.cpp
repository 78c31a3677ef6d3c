#include "sql/server/pull_query_reader.h"

#include "oxbow/streams/kafka_streams.h"
#include "oxbow/streams/queryable.h"

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

void read_key_values(const streams::KafkaStreams& streams, PullPlan& plan, Emitter& out) {
  auto store = streams.store(StoreQueryParameters<>::fromNameAndType(
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

void read_windows(const streams::KafkaStreams& streams, PullPlan& plan, Emitter& out) {
  auto store = streams.store(StoreQueryParameters<>::fromNameAndType(
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
void read_sessions(const streams::KafkaStreams& streams, PullPlan& plan, Emitter& out) {
  auto store = streams.store(StoreQueryParameters<>::fromNameAndType(
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

}  // namespace

void read_pull_rows(const streams::KafkaStreams& streams, PullPlan& plan,
                    const std::function<bool(const Row&)>& emit) {
  Emitter out(plan, emit);
  if (!out.wants_more()) return;
  switch (plan.store_kind) {
    case PullStoreKind::kKeyValue:
      return read_key_values(streams, plan, out);
    case PullStoreKind::kWindow:
      return read_windows(streams, plan, out);
    case PullStoreKind::kSession:
      return read_sessions(streams, plan, out);
  }
}

}  // namespace oxbow::sql::server
