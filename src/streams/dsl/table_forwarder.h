#pragma once
// How a stateful node sends its table updates downstream: at once when its store has no cache, or
// when the cache flushes (a key's latest update per commit) when it has one. The DSL's stores are
// timestamped: the flushed values carry their timestamps, which are left out here.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "streams/processor/processor.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {

// The context of the record being processed, with the time the node gives its output.
inline RecordContext context_at(const ProcessorContext& context, int64_t timestamp) {
  RecordContext rc = context.record_context();
  rc.timestamp = timestamp;
  return rc;
}

class TableForwarder {
 public:
  void init(ProcessorContext& context, const std::string& store, ErasedSerde key_serde,
            ErasedSerde value_serde) {
    // The key is read into a Datum kept from flush to flush (a flush does not start another of
    // the same cache) and lent to the change: a windowed key is past a Datum's inline bytes.
    cached_ = context.set_flush_listener(store, [&context, store, key_serde, value_serde,
                                                 key = Datum()](
                                                    const std::string& key_bytes,
                                                    const std::optional<std::string>& new_value,
                                                    const std::optional<std::string>& old_value,
                                                    const RecordContext& rc) mutable {
      key_serde.deserialize_to(store, key_bytes, key);
      ChangeRecord update{Datum::lend(key), {}, rc.timestamp, rc.headers ? *rc.headers : Headers{}};
      if (auto split = split_timestamp(new_value))
        update.change.new_value = value_serde.deserialize(store, split->value);
      if (auto split = split_timestamp(old_value))
        update.change.old_value = value_serde.deserialize(store, split->value);
      context.forward_change(update);
    });
  }
  void maybe_forward(ProcessorContext& context, const ChangeRecord& update) {
    if (!cached_) context.forward_change(update);
  }

 private:
  bool cached_ = false;
};

// What an aggregation's processor has: its store, found at init, and the forwarding of its
// updates (at once, or through the store's cache).
class AggregationProcessor : public Processor {
 public:
  using Step = std::function<Datum(const Datum& key, const Datum& value, const Datum& old)>;
  AggregationProcessor(std::string store, StoreOptions options)
      : store_name_(std::move(store)), options_(std::move(options)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    store_ = &context.store(store_name_);
    if (forwards_updates_)
      forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }

 protected:
  // A stream aggregation's update of one store entry (Kafka's KStreamAggregate): the old
  // aggregate (null if none) through `step`; the result keeps the latest timestamp of the records
  // taken in, is written, and is forwarded under `out_key`.
  // `forward` false: written only (emitStrategy onWindowClose forwards closed windows itself).
  void update(const std::string& store_key, Datum out_key, const Record& r, const Step& step,
              bool forward = true) {
    auto& ctx = context();
    Datum old;
    int64_t timestamp = r.timestamp;
    if (store_->get_into(store_key, read_bytes_)) {
      auto stored = split_timestamp_view(read_bytes_);
      old = options_.value_serde.deserialize(store_name_, stored.value);
      timestamp = std::max(timestamp, stored.timestamp);
    }
    Datum next = step(r.key, r.value, old);
    // Through buffers kept from update to update: the store copies what it keeps.
    options_.value_serde.serialize_to(store_name_, next, value_bytes_);
    if (!stored_bytes_) stored_bytes_.emplace();
    with_timestamp_into(timestamp, value_bytes_, *stored_bytes_);
    store_->put(store_key, stored_bytes_, context_at(ctx, timestamp));
    if (forward)
      forwarder_.maybe_forward(
          ctx, ChangeRecord{std::move(out_key), Change{std::move(next), std::move(old)}, timestamp,
                            r.headers});
  }

  std::string store_name_;
  StoreOptions options_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
  bool forwards_updates_ = true;  // false: the cache forwards nothing on flush

 private:
  std::string read_bytes_, value_bytes_;
  std::optional<std::string> stored_bytes_;
};

}  // namespace oxbow::streams::detail
