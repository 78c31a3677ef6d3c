// KTable.suppress() (Kafka's KTableSuppressProcessor): a buffer of the latest update per key,
// emitted in order of buffer time once the suppression's stream time has passed it.
//
// The buffer is kept in memory and mirrored in a key-value store (in memory, changelogged unless
// logging is off) so that it is restored with the task. Store keys are the table's key bytes; a
// value is this layout (big-endian integers; Oxbow's own, an internal topic no other reader uses):
//   buffer time (8) | record timestamp (8) | insertion number (8)
//   | new value: length (4; 0xffffffff for null) and bytes | prior value: the same
//   | header count (4), then per header: key length (4), key, value length (4 or null) and bytes
// The prior value is the table's value before the first update that is still buffered, so that an
// emitted change spans everything the buffer held back.
#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "oxbow/streams/errors.h"
#include "oxbow/streams/suppressed.h"
#include "streams/dsl/dsl_internal.h"

namespace oxbow::streams::detail {

namespace {

struct Buffered {
  int64_t buffer_time = 0;
  int64_t timestamp = 0;
  int64_t seq = 0;
  std::optional<std::string> new_value, prior_value;
  Headers headers;
};

void put_u64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}
void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}
void put_bytes(std::string& out, const std::optional<std::string>& bytes) {
  put_u32(out, bytes ? static_cast<uint32_t>(bytes->size()) : 0xffffffffu);
  if (bytes) out += *bytes;
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  uint64_t u(size_t width) {
    need(width);
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(bytes_[pos_++]);
    return v;
  }
  std::optional<std::string> bytes() {
    uint32_t n = static_cast<uint32_t>(u(4));
    if (n == 0xffffffffu) return std::nullopt;
    need(n);
    std::string out(bytes_.substr(pos_, n));
    pos_ += n;
    return out;
  }

 private:
  void need(size_t n) {
    if (bytes_.size() - pos_ < n) throw StreamsException("a corrupt suppression buffer entry");
  }
  std::string_view bytes_;
  size_t pos_ = 0;
};

std::string encode(const Buffered& b) {
  std::string out;
  put_u64(out, static_cast<uint64_t>(b.buffer_time));
  put_u64(out, static_cast<uint64_t>(b.timestamp));
  put_u64(out, static_cast<uint64_t>(b.seq));
  put_bytes(out, b.new_value);
  put_bytes(out, b.prior_value);
  put_u32(out, static_cast<uint32_t>(b.headers.size()));
  for (const auto& h : b.headers) {
    put_bytes(out, h.key);
    put_bytes(out, h.value);
  }
  return out;
}

Buffered decode(std::string_view bytes) {
  Reader in(bytes);
  Buffered b;
  b.buffer_time = static_cast<int64_t>(in.u(8));
  b.timestamp = static_cast<int64_t>(in.u(8));
  b.seq = static_cast<int64_t>(in.u(8));
  b.new_value = in.bytes();
  b.prior_value = in.bytes();
  for (uint32_t n = static_cast<uint32_t>(in.u(4)); n > 0; --n) {
    Header h;
    h.key = in.bytes().value_or("");
    h.value = in.bytes();
    b.headers.push_back(std::move(h));
  }
  return b;
}

class SuppressProcessor : public TableProcessor {
 public:
  SuppressProcessor(std::string store, SuppressOptions options, int64_t wait_ms,
                    ErasedSerde key_serde, ErasedSerde value_serde)
      : store_name_(std::move(store)),
        options_(std::move(options)),
        wait_ms_(wait_ms),
        key_serde_(std::move(key_serde)),
        value_serde_(std::move(value_serde)) {}

  void init(ProcessorContext& context) override {
    Processor::init(context);
    store_ = &context.store(store_name_);
  }

  void process_change(const ChangeRecord& r) override {
    load();  // after restoration, which follows init
    observed_time_ = std::max(observed_time_, r.timestamp);
    buffer(r);
    while (!order_.empty() && order_.begin()->first.first <= observed_time_ - wait_ms_)
      emit_first();
    if (!over_capacity()) return;
    if (options_.shut_down_when_full)
      throw TaskFatalError(fmt::format(
          "{} buffer exceeded its max capacity. Currently [{}/{}] records and [{}/{}] bytes.",
          store_name_, entries_.size(), options_.max_records, bytes_, options_.max_bytes));
    while (over_capacity()) emit_first();
  }

 private:
  using Order = std::map<std::pair<int64_t, int64_t>, std::string>;  // (time, seq) -> key

  void load() {
    if (loaded_) return;
    loaded_ = true;
    for (auto& [key, value] : store_->all()) {
      Buffered b = decode(value);
      next_seq_ = std::max(next_seq_, b.seq + 1);
      track(key, std::move(b), value.size());
    }
  }

  void track(const std::string& key, Buffered b, size_t encoded_size) {
    order_[{b.buffer_time, b.seq}] = key;
    bytes_ += static_cast<int64_t>(key.size() + encoded_size);
    entries_[key] = Entry{std::move(b), static_cast<int64_t>(key.size() + encoded_size)};
  }

  void buffer(const ChangeRecord& r) {
    auto& ctx = context();
    const Change& change = r.change;
    std::string key = key_serde_.serialize(store_name_, r.key);
    auto serialize = [&](const Datum& d) -> std::optional<std::string> {
      if (!d.has_value()) return std::nullopt;
      return value_serde_.serialize(store_name_, d);
    };
    Buffered b;
    if (auto it = entries_.find(key); it != entries_.end()) {
      b = std::move(it->second.buffered);  // keeps its place in time and its prior value
      bytes_ -= it->second.bytes;
      entries_.erase(it);
    } else {
      b.buffer_time = options_.until_window_closes
                          ? datum_cast<const WindowedDatum&>(r.key).window.end
                          : r.timestamp;
      b.seq = next_seq_++;
      b.prior_value = serialize(change.old_value);
    }
    b.timestamp = r.timestamp;
    b.new_value = serialize(change.new_value);
    b.headers = r.headers;
    std::string encoded = encode(b);
    store_->put(key, encoded, ctx.record_context());
    track(key, std::move(b), encoded.size());
  }

  void emit_first() {
    auto first = order_.begin();
    std::string key = std::move(first->second);
    order_.erase(first);
    auto it = entries_.find(key);
    Buffered b = std::move(it->second.buffered);
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    RecordContext rc = context().record_context();
    rc.timestamp = b.timestamp;
    store_->put(key, std::nullopt, rc);
    // Final results leave out tombstones: a window's result is never deleted.
    if (options_.until_window_closes && !b.new_value) return;
    auto deserialize = [&](const std::optional<std::string>& bytes) {
      return bytes ? value_serde_.deserialize(store_name_, *bytes) : Datum();
    };
    context().forward_change(ChangeRecord{key_serde_.deserialize(store_name_, key),
                                          {deserialize(b.new_value), deserialize(b.prior_value)},
                                          b.timestamp,
                                          std::move(b.headers)});
  }

  bool over_capacity() const {
    return static_cast<int64_t>(entries_.size()) > options_.max_records ||
           bytes_ > options_.max_bytes;
  }

  struct Entry {
    Buffered buffered;
    int64_t bytes = 0;
  };
  std::string store_name_;
  SuppressOptions options_;
  int64_t wait_ms_;
  ErasedSerde key_serde_, value_serde_;
  KeyValueStore* store_ = nullptr;
  bool loaded_ = false;
  int64_t observed_time_ = -1;
  int64_t next_seq_ = 0;
  int64_t bytes_ = 0;
  std::unordered_map<std::string, Entry> entries_;
  Order order_;
};

}  // namespace

Node suppress(const Node& table, SuppressOptions options) {
  auto& graph = *table.graph;
  int64_t wait = options.time_limit_ms;
  if (options.until_window_closes) {
    if (table.window_grace_ms < 0)
      throw TopologyException(
          "Window close time is only defined for windowed computations: suppress("
          "untilWindowCloses) needs a windowed aggregation upstream");
    wait = table.window_grace_ms;
  }
  std::string node_name = graph.name_or_new(options.name, "KTABLE-SUPPRESS-");
  std::string store_name = options.name.empty() ? graph.new_name("KTABLE-SUPPRESS-STATE-STORE-")
                                                : options.name + "-store";
  require_serde(table.key_serde, "key", "suppression " + node_name);
  require_serde(table.value_serde, "value", "suppression " + node_name);
  if (table.send_old_values) table.send_old_values(true);  // the prior values it emits
  StoreOptions store;
  store.name = store_name;
  store.key_serde = table.key_serde;
  store.caching = false;
  store.logging = options.logging;
  store.changelog_configs = options.changelog_configs;
  store.type = StoreType::kInMemory;
  graph.add_store({store_name, store, ""});
  ErasedSerde key_serde = table.key_serde, value_serde = table.value_serde;
  Node out = add_processor(table, "", node_name, ProcessorFactory([=] {
                             return std::make_unique<SuppressProcessor>(store_name, options, wait,
                                                                        key_serde, value_serde);
                           }),
                           {store_name}, kTableToTable);
  out.store.clear();
  out.send_old_values = nullptr;  // it always sends the prior values
  out.lookup = nullptr;           // a view of the buffer is not there yet
  return out;
}

}  // namespace oxbow::streams::detail
