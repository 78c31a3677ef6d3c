#pragma once
// How a stateful node sends its table updates downstream: at once when its store has no cache, or
// when the cache flushes (a key's latest update per commit) when it has one. The DSL's stores are
// timestamped: the flushed values carry their timestamps, which are left out here.
#include <string>
#include <utility>

#include "streams/processor/processor.h"
#include "streams/state/timestamped.h"

namespace oxbow::streams::detail {

class TableForwarder {
 public:
  void init(ProcessorContext& context, const std::string& store, ErasedSerde key_serde,
            ErasedSerde value_serde) {
    cached_ = context.set_flush_listener(
        store, [&context, store, key_serde, value_serde](
                   const std::string& key, const std::optional<std::string>& new_value,
                   const std::optional<std::string>& old_value, const RecordContext& rc) {
          Change change;
          if (auto split = split_timestamp(new_value))
            change.new_value = value_serde.deserialize(store, split->value);
          if (auto split = split_timestamp(old_value))
            change.old_value = value_serde.deserialize(store, split->value);
          Record r{key_serde.deserialize(store, key), Datum(std::move(change)), rc.timestamp,
                   rc.headers ? *rc.headers : Headers{}};
          context.forward(r);
        });
  }
  void maybe_forward(ProcessorContext& context, Record record) {
    if (!cached_) context.forward(record);
  }

 private:
  bool cached_ = false;
};

// What an aggregation's processor has: its store, found at init, and the forwarding of its
// updates (at once, or through the store's cache).
class AggregationProcessor : public Processor {
 public:
  AggregationProcessor(std::string store, StoreOptions options)
      : store_name_(std::move(store)), options_(std::move(options)) {}
  void init(ProcessorContext& context) override {
    Processor::init(context);
    store_ = &context.store(store_name_);
    forwarder_.init(context, store_name_, options_.key_serde, options_.value_serde);
  }

 protected:
  std::string store_name_;
  StoreOptions options_;
  KeyValueStore* store_ = nullptr;
  TableForwarder forwarder_;
};

// The context of the record being processed, with the time the node gives its output.
inline RecordContext context_at(const ProcessorContext& context, int64_t timestamp) {
  RecordContext rc = context.record_context();
  rc.timestamp = timestamp;
  return rc;
}

}  // namespace oxbow::streams::detail
