// Sliding-window aggregations (Kafka's KStreamSlidingWindowAggregate, KIP-450). A key's windows
// are kept by start in a window store; each record updates every window that holds it and has not
// closed, creates its own left window [t - d, t] (from the previous record's left window, when that
// one still reaches t - d) and the right windows that become non-empty: its own [t + 1, t + 1 + d]
// when a later record falls in it, and its predecessor's when this record falls in that one.
// Records earlier than d fall in one combined window, [0, d].
#include <spdlog/spdlog.h>

#include <set>

#include "oxbow/streams/windows.h"
#include "streams/dsl/close_emitter.h"
#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

namespace {

using Step = AggregationProcessor::Step;

class SlidingAggregateProcessor : public AggregationProcessor {
 public:
  SlidingAggregateProcessor(std::string store, StoreOptions options, ErasedSerde key_serde,
                            SlidingWindows windows, Initializer init, Aggregator adder,
                            bool emit_on_close)
      : AggregationProcessor(std::move(store), std::move(options)),
        key_serde_(std::move(key_serde)),
        windows_(windows),
        init_(std::move(init)),
        adder_(std::move(adder)),
        emit_on_close_(emit_on_close) {
    forwards_updates_ = !emit_on_close;
  }

  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.key.has_value() || !r.value.has_value()) {
      ctx.record_dropped("null key or value in an aggregation");
      return;
    }
    if (emit_on_close_)
      closer_.load_once(*store_, ctx.previous_stream_time() - windows_.gracePeriodMs());
    aggregate(r);
    if (emit_on_close_)
      closer_.emit_closed(ctx, *store_, store_name_, options_, close_time_, r.headers);
  }

 private:
  void aggregate(const Record& r) {
    auto& ctx = context();
    int64_t t = r.timestamp, d = windows_.timeDifferenceMs();
    close_time_ = ctx.stream_time() - windows_.gracePeriodMs();
    record_ = &r;
    key_ = key_serde_.serialize(store_name_, r.key);
    if (t + 1 + d <= close_time_) {
      ctx.record_dropped("record for closed sliding windows");
      return;
    }
    if (t < d)
      process_early(t);
    else
      process_in_order(t);
  }

  struct Existing {
    int64_t start;
    std::optional<ValueAndTimestamp> value;
  };

  // The key's windows starting in [from, to], by start.
  std::vector<Existing> windows_starting(int64_t from, int64_t to) {
    std::vector<Existing> out;
    for (auto& [skey, stored] : store_->prefix_scan(key_)) {
      if (skey.size() != key_.size() + kWindowKeySuffix) continue;  // another key's
      int64_t start = window_store_start(skey);
      if (start < from || start > to) continue;
      out.push_back({start, split_timestamp(stored)});
    }
    return out;
  }

  Datum value_of(const ValueAndTimestamp& v) {
    return options_.value_serde.deserialize(store_name_, v.value);
  }

  // Adds the record to the window starting at `start` whose aggregate so far is `agg` (with the
  // time of its latest record), unless the window has closed.
  void update(int64_t start, const Datum& agg, int64_t agg_time, bool fresh) {
    int64_t end = start + windows_.timeDifferenceMs();
    auto& ctx = context();
    if (end < close_time_) {
      ctx.record_dropped("record for a closed sliding window");
      return;
    }
    int64_t t = record_->timestamp;
    Datum next = adder_(record_->key, record_->value, agg);
    int64_t time = fresh ? t : std::max(t, agg_time);
    write(start, next, time, fresh ? Datum() : agg);
  }

  void write(int64_t start, const Datum& value, int64_t time, const Datum& old) {
    auto& ctx = context();
    Window window{start, start + windows_.timeDifferenceMs()};
    std::string store_key = window_store_key(key_, start);
    store_->put(store_key, with_timestamp(time, options_.value_serde.serialize(store_name_, value)),
                context_at(ctx, time));
    if (emit_on_close_) return closer_.opened(start, std::move(store_key));
    forwarder_.maybe_forward(ctx, ChangeRecord{Datum(WindowedDatum{record_->key, window}),
                                               Change{value, old}, time, record_->headers});
  }

  // Newest window first, as Kafka's RocksDB-backed stores iterate (its processReverse): updates
  // are forwarded in that order.
  void process_in_order(int64_t t) {
    int64_t d = windows_.timeDifferenceMs();
    std::set<int64_t> starts;
    std::optional<ValueAndTimestamp> left_agg, right_agg;
    bool left_exists = false, right_exists = false;
    std::optional<int64_t> previous;  // the latest record time before t
    auto windows = windows_starting(std::max<int64_t>(0, t - 2 * d), t + 1);
    for (auto w = windows.rbegin(); w != windows.rend(); ++w) {
      starts.insert(w->start);
      int64_t end = w->start + d;
      if (w->start == t + 1) {
        right_exists = true;
      } else if (end > t) {
        if (!right_agg) right_agg = w->value;
        update(w->start, value_of(*w->value), w->value->timestamp, false);
      } else if (end == t) {
        left_exists = true;
        update(w->start, value_of(*w->value), w->value->timestamp, false);
        if (w->value->timestamp >= t) return;  // a record at t made every window already
        previous = w->value->timestamp;
      } else {
        left_agg = w->value;
        previous = w->value->timestamp;
        break;
      }
    }
    // The previous record's right window, if it is missing and this record falls in it.
    if (previous && !starts.count(*previous + 1) && *previous + 1 + d >= t)
      update(*previous + 1, init_(), t, true);
    if (!left_exists) {
      bool reaches = previous && t - d <= *previous;
      update(t - d, reaches ? value_of(*left_agg) : init_(), t, true);
    }
    if (!right_exists && right_agg && right_agg->timestamp > t) create_right_window(t, *right_agg);
  }

  void process_early(int64_t t) {
    std::set<int64_t> starts;
    std::optional<ValueAndTimestamp> combined, right_agg;
    bool right_exists = false;
    std::optional<int64_t> previous;
    for (auto& w : windows_starting(0, t + 1)) {
      starts.insert(w.start);
      if (w.start == 0) {
        combined = w.value;
        if (w.value->timestamp < t) previous = w.value->timestamp;
      } else if (w.start <= t) {
        right_agg = w.value;
        update(w.start, value_of(*w.value), w.value->timestamp, false);
      } else {
        right_exists = true;
      }
    }
    if (!right_agg && combined && combined->timestamp > t) right_agg = combined;
    if (!right_exists && right_agg && right_agg->timestamp > t) create_right_window(t, *right_agg);
    if (previous && !starts.count(*previous + 1)) update(*previous + 1, init_(), t, true);
    if (!combined)
      update(0, init_(), t, true);
    else
      update(0, value_of(*combined), combined->timestamp, false);
  }

  // This record's right window [t + 1, t + 1 + d]: what the window holding it holds after it.
  void create_right_window(int64_t t, const ValueAndTimestamp& agg) {
    write(t + 1, value_of(agg), agg.timestamp, Datum());
  }

  ErasedSerde key_serde_;
  SlidingWindows windows_;
  Initializer init_;
  Aggregator adder_;
  // The record being processed, its key's bytes and the close time it sees.
  const Record* record_ = nullptr;
  std::string key_;
  int64_t close_time_ = 0;
  bool emit_on_close_;
  WindowCloseEmitter closer_{windows_.timeDifferenceMs() + 1};
};

}  // namespace

WindowedPlan sliding_window_plan(const SlidingWindows& windows, Initializer init,
                                 StoreOptions store, bool emit_on_close) {
  ErasedSerde key_serde = store.key_serde;
  require_serde(key_serde, "key", "a sliding-window aggregation");
  // Windows are looked up to twice the difference back: Kafka keeps them that long.
  set_retention(store, 2 * windows.timeDifferenceMs() + windows.gracePeriodMs(), "window store",
                "twice the time difference plus the grace period",
                "difference=[" + std::to_string(windows.timeDifferenceMs()) + "], grace=[" +
                    std::to_string(windows.gracePeriodMs()) + "]");
  store.key_serde = window_store_key_serde(key_serde, windows.timeDifferenceMs());
  WindowedPlan plan;
  plan.store = std::move(store);
  plan.processor = [=](const Aggregator& adder) -> AggregationFactory {
    return [=](const std::string& store_name, const StoreOptions& options) {
      return ProcessorFactory([=] {
        return std::make_unique<SlidingAggregateProcessor>(store_name, options, key_serde, windows,
                                                           init, adder, emit_on_close);
      });
    };
  };
  plan.out_key_serde = time_windowed_serde(key_serde, windows.timeDifferenceMs());
  plan.window_grace_ms = windows.gracePeriodMs();
  return plan;
}

Node sliding_aggregate(const Grouping& g, const SlidingWindows& windows, Initializer init,
                       Aggregator adder, StoreOptions store, const std::string& name,
                       const char* kind, bool emit_on_close) {
  auto plan = sliding_window_plan(windows, std::move(init), std::move(store), emit_on_close);
  return windowed_grouped_aggregation(g, kind, name, plan, adder);
}

Node cogroup_sliding_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                               const SlidingWindows& windows, Initializer init, StoreOptions store,
                               const std::string& name) {
  return cogroup_windowed(
      inputs, sliding_window_plan(windows, std::move(init), std::move(store), false), name);
}

}  // namespace oxbow::streams::detail
