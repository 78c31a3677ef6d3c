// Windowed aggregations of a grouped stream (Kafka's KStreamWindowAggregate): each record updates
// the aggregate of every window that holds it and has not closed; a record later than a window's
// end plus the grace period, by the task's stream time, is dropped for that window and counted.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "oxbow/streams/windows.h"
#include "streams/dsl/close_emitter.h"
#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

namespace {

using Step = AggregationProcessor::Step;

// Windowed keys over WindowedDatum: the key's bytes and the window's start (time_windowed_bytes),
// then `suffix` zero bytes (a window store's sequence number) that reading skips.
ErasedSerde windowed_key_serde(ErasedSerde inner, int64_t window_size, size_t suffix,
                               std::string name) {
  ErasedSerde out;
  out.name = std::move(name) + "(" + inner.name + ")";
  out.serialize = [inner, suffix](std::string_view topic, const Datum& d) {
    const auto& w = datum_cast<const WindowedDatum&>(d);
    std::string bytes = time_windowed_bytes(inner.serialize(topic, w.key), w.window.start);
    bytes.append(suffix, '\0');
    return bytes;
  };
  out.deserialize = [inner, window_size, suffix](std::string_view topic, std::string_view bytes) {
    if (bytes.size() < suffix) throw SerializationException("a windowed key too short");
    auto [key, window] = parse_time_windowed(bytes.substr(0, bytes.size() - suffix), window_size);
    return Datum(WindowedDatum{inner.deserialize(topic, key), window});
  };
  // The record path's forms: a sink writes each key into its own buffer, and a cache's flush reads
  // each key into a WindowedDatum it keeps (a windowed key is past a Datum's inline bytes).
  out.serialize_into = [inner, suffix](std::string_view topic, const Datum& d, std::string& bytes) {
    const auto& w = datum_cast<const WindowedDatum&>(d);
    inner.serialize_to(topic, w.key, bytes);
    for (int shift = 56; shift >= 0; shift -= 8)  // time_windowed_bytes' start
      bytes.push_back(static_cast<char>(static_cast<uint64_t>(w.window.start) >> shift & 0xff));
    bytes.append(suffix, '\0');
  };
  out.deserialize_into = [inner, window_size, suffix](std::string_view topic,
                                                      std::string_view bytes, Datum& d) {
    if (bytes.size() < suffix) throw SerializationException("a windowed key too short");
    auto [key, window] = parse_time_windowed(bytes.substr(0, bytes.size() - suffix), window_size);
    WindowedDatum* w = d.owned_if<WindowedDatum>();
    if (!w) w = &d.emplace<WindowedDatum>();
    inner.deserialize_to(topic, key, w->key);
    w->window = window;
  };
  return out;
}

// TimeWindows::windowsFor without its vector (up to size / advance windows, allocated per record).
template <class F>
void for_each_window(const TimeWindows& windows, int64_t timestamp, F&& f) {
  const int64_t size = windows.size(), advance = windows.advance();
  int64_t start = std::max<int64_t>(0, timestamp - size + advance) / advance * advance;
  for (; start <= timestamp; start += advance) f(Window{start, start + size});
}

class WindowAggregateProcessor : public AggregationProcessor {
 public:
  WindowAggregateProcessor(std::string store, StoreOptions options, ErasedSerde key_serde,
                           TimeWindows windows, Step step, bool emit_on_close)
      : AggregationProcessor(std::move(store), std::move(options)),
        key_serde_(std::move(key_serde)),
        windows_(windows),
        step_(std::move(step)),
        emit_on_close_(emit_on_close) {
    forwards_updates_ = !emit_on_close;
  }
  void process(const Record& r) override {
    if (emit_on_close_)
      closer_.load_once(*store_, context().previous_stream_time() - windows_.gracePeriodMs());
    process_windows(r);
  }
  void process_windows(const Record& r) {
    auto& ctx = context();
    if (!r.key.has_value() || !r.value.has_value()) {
      ctx.record_dropped("null key or value in an aggregation");
      return;
    }
    int64_t close_time = ctx.stream_time() - windows_.gracePeriodMs();
    key_serde_.serialize_to(store_name_, r.key, key_bytes_);
    for_each_window(windows_, r.timestamp, [&](const Window& window) {
      if (window.end <= close_time) {
        const auto& rc = ctx.record_context();
        spdlog::debug(
            "skipping a record for a closed window: topic {} partition {} offset {} timestamp {} "
            "window [{}, {}) closed at stream time {}",
            rc.topic, rc.partition, rc.offset, r.timestamp, window.start, window.end,
            ctx.stream_time());
        ctx.record_dropped("record for a closed window");
        return;
      }
      window_store_key_into(key_bytes_, window.start, 0, store_key_);
      // Lent for the call: what keeps the key past it (a cache-less forward's children) copies
      // it, so no windowed key is boxed per update.
      WindowedDatum out_key{Datum::lend(r.key), window};
      update(store_key_, Datum::borrow(out_key), r, step_, !emit_on_close_);
      if (emit_on_close_) closer_.opened(window.start, store_key_);
    });
    if (emit_on_close_)
      closer_.emit_closed(ctx, *store_, store_name_, options_, close_time, r.headers);
  }

 private:
  ErasedSerde key_serde_;  // the key's own; options_.key_serde reads the store's window keys
  TimeWindows windows_;
  Step step_;
  bool emit_on_close_;
  WindowCloseEmitter closer_{windows_.size()};
  // Kept from record to record, so that their memory is reused.
  std::string key_bytes_, store_key_;
};

}  // namespace

void set_retention(StoreOptions& store, int64_t minimum, const std::string& what,
                   const std::string& rule, const std::string& got) {
  if (store.retention_ms == 0) store.retention_ms = std::max<int64_t>(minimum, 1);
  if (store.retention_ms < minimum)
    throw std::invalid_argument("The retention period of the " + what + " " + store.name +
                                " must be no smaller than " + rule + ". Got " + got +
                                ", retention=[" + std::to_string(store.retention_ms) + "]");
}

ErasedSerde window_store_key_serde(ErasedSerde inner, int64_t window_size) {
  return windowed_key_serde(std::move(inner), window_size, 4, "WindowStoreKey");
}

ErasedSerde time_windowed_serde(const ErasedSerde& inner, int64_t window_size) {
  return windowed_key_serde(inner, window_size, 0, "TimeWindowed");
}

WindowedPlan time_window_plan(const TimeWindows& windows, Initializer init, StoreOptions store,
                              bool emit_on_close) {
  ErasedSerde key_serde = store.key_serde;
  require_serde(key_serde, "key", "a windowed aggregation");
  set_retention(store, windows.size() + windows.gracePeriodMs(), "window store",
                "its window size plus the grace period",
                "size=[" + std::to_string(windows.size()) + "], grace=[" +
                    std::to_string(windows.gracePeriodMs()) + "]");
  store.key_serde = window_store_key_serde(key_serde, windows.size());
  WindowedPlan plan;
  plan.store = std::move(store);
  plan.processor = [=](const Aggregator& adder) -> AggregationFactory {
    Step step = [init, adder](const Datum& k, const Datum& v, const Datum& old) {
      return adder(k, v, old.has_value() ? old : init());
    };
    return [=](const std::string& store_name, const StoreOptions& options) {
      return ProcessorFactory([=] {
        return std::make_unique<WindowAggregateProcessor>(store_name, options, key_serde, windows,
                                                          step, emit_on_close);
      });
    };
  };
  plan.out_key_serde = time_windowed_serde(key_serde, windows.size());
  plan.window_grace_ms = windows.gracePeriodMs();
  return plan;
}

Node windowed_grouped_aggregation(const Grouping& g, const char* kind, const std::string& name,
                                  const WindowedPlan& plan, const Aggregator& adder) {
  Node out = grouped_aggregation(g, kind, plan.store, name, plan.processor(adder));
  out.key_serde = plan.out_key_serde;
  out.window_grace_ms = plan.window_grace_ms;
  return out;
}

Aggregator reducing(Reducer reducer) {
  return [reducer = std::move(reducer)](const Datum&, const Datum& v, const Datum& old) {
    return old.has_value() ? reducer(old, v) : v;
  };
}

Node windowed_aggregate(const Grouping& in, const TimeWindows& windows, Initializer init,
                        Aggregator adder, StoreOptions store, const std::string& name,
                        bool emit_on_close) {
  auto plan = time_window_plan(windows, std::move(init), std::move(store), emit_on_close);
  return windowed_grouped_aggregation(in, "AGGREGATE", name, plan, adder);
}

Node windowed_reduce(const Grouping& in, const TimeWindows& windows, Reducer reducer,
                     StoreOptions store, const std::string& name, bool emit_on_close) {
  auto plan = time_window_plan(
      windows, [] { return Datum(); }, std::move(store), emit_on_close);
  return windowed_grouped_aggregation(in, "REDUCE", name, plan, reducing(std::move(reducer)));
}

Node cogroup_windowed_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                                const TimeWindows& windows, Initializer init, StoreOptions store,
                                const std::string& name) {
  return cogroup_windowed(
      inputs, time_window_plan(windows, std::move(init), std::move(store), false), name);
}

}  // namespace oxbow::streams::detail
