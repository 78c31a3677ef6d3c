#pragma once
// emitStrategy(onWindowClose), KIP-825: each window's result once, when it closes, oldest start
// first (then by key bytes), as Kafka's time-ordered window store gives them. The windows not yet
// emitted are known in memory; after a restart they are those of the store that were still open
// at the stream time the task resumed from. The records carry the headers of the record that
// closed them, as Kafka's.
#include <set>
#include <string>
#include <utility>

#include "oxbow/streams/options.h"
#include "streams/processor/processor.h"
#include "streams/state/timestamped.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

class WindowCloseEmitter {
 public:
  // A window starting at s has closed once s + span <= stream time - grace: span is the size of a
  // time window, the time difference plus one for a sliding window (whose end is inclusive).
  explicit WindowCloseEmitter(int64_t span) : span_(span) {}

  void opened(int64_t start, std::string store_key) { open_.insert({start, std::move(store_key)}); }

  void load_once(KeyValueStore& store, int64_t closed_before) {
    if (loaded_) return;
    loaded_ = true;
    for (const auto& [store_key, value] : store.all()) {
      if (store_key.size() < kWindowKeySuffix) continue;
      int64_t start = window_store_start(store_key);
      if (start + span_ > closed_before) open_.insert({start, store_key});
    }
  }

  void emit_closed(ProcessorContext& ctx, KeyValueStore& store, const std::string& store_name,
                   const StoreOptions& options, int64_t close_time, const Headers& headers) {
    while (!open_.empty() && open_.begin()->first + span_ <= close_time) {
      std::string store_key = open_.begin()->second;
      open_.erase(open_.begin());
      auto stored = split_timestamp(store.get(store_key));
      if (!stored) continue;
      Datum key = options.key_serde.deserialize(store_name, store_key);
      Datum value = options.value_serde.deserialize(store_name, stored->value);
      ctx.forward_change(ChangeRecord{std::move(key), Change{std::move(value), Datum()},
                                      stored->timestamp, headers});
    }
  }

 private:
  int64_t span_;
  bool loaded_ = false;
  std::set<std::pair<int64_t, std::string>> open_;  // (start, store key) not yet emitted
};

}  // namespace oxbow::streams::detail
