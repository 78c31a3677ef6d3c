// Session-windowed aggregations of a grouped stream (Kafka's KStreamSessionWindowAggregate): a
// record joins the sessions of its key that end no earlier than its time minus the gap and start
// no later than its time plus the gap; they merge into one session whose aggregate is the merged
// aggregates plus the record. Merged-away sessions are deleted (a tombstone downstream), the
// merged one is written. A record whose merged session would end before stream time minus gap
// minus grace is dropped and counted.
#include <spdlog/spdlog.h>

#include "oxbow/streams/windows.h"
#include "streams/dsl/dsl_internal.h"
#include "streams/dsl/table_forwarder.h"
#include "streams/state/window_key.h"

namespace oxbow::streams::detail {

namespace {

// Session-windowed keys over WindowedDatum: the key's bytes, then end and start (Kafka's
// SessionWindowedSerializer, and its session stores' keys).
ErasedSerde session_key_serde(ErasedSerde inner) {
  ErasedSerde out;
  out.name = "SessionWindowed(" + inner.name + ")";
  out.serialize = [inner](std::string_view topic, const Datum& d) {
    const auto& w = datum_cast<const WindowedDatum&>(d);
    return session_windowed_bytes(inner.serialize(topic, w.key), w.window);
  };
  out.deserialize = [inner](std::string_view topic, std::string_view bytes) {
    auto [key, window] = parse_session_windowed(bytes);
    return Datum(WindowedDatum{inner.deserialize(topic, key), window});
  };
  return out;
}

class SessionAggregateProcessor : public AggregationProcessor {
 public:
  SessionAggregateProcessor(std::string store, StoreOptions options, ErasedSerde key_serde,
                            SessionWindows windows, Initializer init, Aggregator adder,
                            SessionMerger merger)
      : AggregationProcessor(std::move(store), std::move(options)),
        key_serde_(std::move(key_serde)),
        windows_(windows),
        init_(std::move(init)),
        adder_(std::move(adder)),
        merger_(std::move(merger)) {}

  void process(const Record& r) override {
    auto& ctx = context();
    if (!r.key.has_value() || !r.value.has_value()) {
      ctx.record_dropped("null key or value in an aggregation");
      return;
    }
    int64_t t = r.timestamp, gap = windows_.inactivityGap();
    int64_t close_time = ctx.stream_time() - windows_.gracePeriodMs() - gap;
    std::string key = key_serde_.serialize(store_name_, r.key);
    Window merged{t, t};
    Datum aggregate = init_();
    std::vector<std::pair<std::string, Datum>> absorbed;  // store key, aggregate
    for (auto& [skey, stored] : store_->prefix_scan(key)) {
      if (skey.size() != key.size() + kSessionKeySuffix) continue;  // another key's
      auto [bytes, window] = parse_session_windowed(skey);
      if (window.end < t - gap || window.start > t + gap) continue;
      auto split = split_timestamp(stored);
      Datum value = options_.value_serde.deserialize(store_name_, split->value);
      aggregate = merger_(r.key, aggregate, value);
      merged = Window{std::min(merged.start, window.start), std::max(merged.end, window.end)};
      absorbed.emplace_back(skey, std::move(value));
    }
    if (merged.end < close_time) {
      const auto& rc = ctx.record_context();
      spdlog::debug(
          "skipping a record for an expired session: topic {} partition {} offset {} timestamp "
          "{} session [{}, {}] closed at stream time {}",
          rc.topic, rc.partition, rc.offset, t, merged.start, merged.end, ctx.stream_time());
      ctx.record_dropped("record for a closed session");
      return;
    }
    if (!(merged == Window{t, t})) {
      for (auto& [skey, value] : absorbed) {
        auto [bytes, window] = parse_session_windowed(skey);
        store_->put(skey, std::nullopt, context_at(ctx, window.end));
        forwarder_.maybe_forward(
            ctx, ChangeRecord{Datum(WindowedDatum{r.key, window}),
                              Change{Datum(), std::move(value)}, window.end, r.headers});
      }
    }
    aggregate = adder_(r.key, r.value, aggregate);
    store_->put(session_windowed_bytes(key, merged),
                with_timestamp(merged.end, options_.value_serde.serialize(store_name_, aggregate)),
                context_at(ctx, merged.end));
    forwarder_.maybe_forward(
        ctx, ChangeRecord{Datum(WindowedDatum{r.key, merged}),
                          Change{std::move(aggregate), Datum()}, merged.end, r.headers});
  }

 private:
  ErasedSerde key_serde_;
  SessionWindows windows_;
  Initializer init_;
  Aggregator adder_;
  SessionMerger merger_;
};

}  // namespace

ErasedSerde session_windowed_serde(const ErasedSerde& inner) {
  return session_key_serde(inner);
}

WindowedPlan session_window_plan(const SessionWindows& windows, Initializer init,
                                 SessionMerger merger, StoreOptions store) {
  ErasedSerde key_serde = store.key_serde;
  require_serde(key_serde, "key", "a session-windowed aggregation");
  set_retention(store, windows.inactivityGap() + windows.gracePeriodMs(), "session store",
                "the session inactivity gap plus the grace period",
                "gap=[" + std::to_string(windows.inactivityGap()) + "], grace=[" +
                    std::to_string(windows.gracePeriodMs()) + "]");
  store.key_serde = session_key_serde(key_serde);
  store.session_layout = true;
  WindowedPlan plan;
  plan.store = std::move(store);
  plan.processor = [=](const Aggregator& adder) -> AggregationFactory {
    return [=](const std::string& store_name, const StoreOptions& options) {
      return ProcessorFactory([=] {
        return std::make_unique<SessionAggregateProcessor>(store_name, options, key_serde, windows,
                                                           init, adder, merger);
      });
    };
  };
  plan.out_key_serde = session_key_serde(key_serde);
  // suppress(untilWindowCloses) waits, as Kafka's, for gap plus grace past a session's end.
  plan.window_grace_ms = windows.inactivityGap() + windows.gracePeriodMs();
  return plan;
}

Node session_aggregate(const Grouping& g, const SessionWindows& windows, Initializer init,
                       Aggregator adder, SessionMerger merger, StoreOptions store,
                       const std::string& name, const char* kind) {
  auto plan = session_window_plan(windows, std::move(init), std::move(merger), std::move(store));
  return windowed_grouped_aggregation(g, kind, name, plan, adder);
}

Node cogroup_session_aggregate(const std::vector<std::pair<Grouping, Aggregator>>& inputs,
                               const SessionWindows& windows, Initializer init,
                               SessionMerger merger, StoreOptions store, const std::string& name) {
  return cogroup_windowed(
      inputs, session_window_plan(windows, std::move(init), std::move(merger), std::move(store)),
      name);
}

}  // namespace oxbow::streams::detail
