// The untyped core of the interactive-query facades (queryable.h, queryable_windows.h): store
// type checks, and reads of window and session stores through the stores' query_* methods.
#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <typeinfo>

#include "oxbow/streams/queryable_windows.h"
#include "streams/query/queryable_core.h"
#include "streams/state/window_key.h"
#include "streams/state/window_queries.h"

namespace oxbow::streams::detail {

namespace {

std::string mismatch_message(const StoreAccess& access, const std::string& why) {
  return "Cannot get state store " + access.name + " because the queryable store type [" +
         access.queryable_type + "] does not accept the actual store type [" + access.actual_type +
         "]" + (why.empty() ? "." : " (" + why + ").");
}

const char* queryable_type_name(StoreKind kind, bool timestamped) {
  switch (kind) {
    case StoreKind::kKeyValue:
      return timestamped ? "timestampedKeyValueStore" : "keyValueStore";
    case StoreKind::kWindow:
      return timestamped ? "timestampedWindowStore" : "windowStore";
    case StoreKind::kSession:
      return "sessionStore";
  }
  return "?";
}

// A serde that writes a key alone as a window or session store's keys hold it: the store's key
// serde writes the key with a window, whose `suffix` bytes are cut off. A key of another type
// than the store's makes the typed serde inside throw its std::logic_error, which is store()'s
// type mismatch (found only now: the store's serde does not tell its key type).
ErasedSerde key_alone(const ErasedSerde& store_key_serde, size_t suffix, std::string mismatch) {
  ErasedSerde out;
  out.name = store_key_serde.name;
  out.serialize = [store_key_serde, suffix, mismatch](std::string_view topic, const Datum& key) {
    std::string bytes;
    try {
      bytes = store_key_serde.serialize(topic, Datum(WindowedDatum{key, Window{}}));
    } catch (const std::logic_error& e) {
      if (typeid(e) != typeid(std::logic_error)) throw;
      throw InvalidStateStoreException(mismatch);
    }
    if (bytes.size() < suffix) throw InvalidStateStoreException(mismatch);
    bytes.resize(bytes.size() - suffix);
    return bytes;
  };
  out.deserialize = [](std::string_view, std::string_view) -> Datum {
    throw std::logic_error("a key alone is never read from a window or session store");
  };
  return out;
}

WindowedRow decode(const StoreAccess& access, const BytesPair& row) {
  Datum key = access.windowed_key_serde.deserialize(access.name, row.first);
  const auto* windowed = datum_cast<WindowedDatum>(&key);
  if (!windowed) access.type_mismatch("its key serde does not read windowed keys");
  auto [timestamp, bytes] = split_stored(access.timestamped, row.second);
  return WindowedRow{*windowed, access.value_serde.deserialize(access.name, bytes), timestamp};
}

// Rows are decoded after the visit, outside the tasks' locks, which the stream threads wait for.
std::vector<WindowedRow> decode_all(const StoreAccess& access, const std::vector<BytesPair>& rows) {
  std::vector<WindowedRow> out;
  out.reserve(rows.size());
  for (const auto& row : rows) out.push_back(decode(access, row));
  return out;
}

// Kafka's composite stores for one key: the first local store with anything for it.
template <class Scan>
std::vector<WindowedRow> first_found(const StoreAccess& access, bool backward, const Scan& scan) {
  std::vector<BytesPair> rows;
  access.visit([&](KeyValueStore& store) {
    rows = scan(store);
    return rows.empty();
  });
  if (backward) std::reverse(rows.begin(), rows.end());
  return decode_all(access, rows);
}

// For key ranges: every local store's part, one after another.
template <class Scan>
std::vector<WindowedRow> concatenated(const StoreAccess& access, bool backward, const Scan& scan) {
  std::vector<BytesPair> rows;
  access.visit([&](KeyValueStore& store) {
    std::vector<BytesPair> part = scan(store);
    if (backward) std::reverse(part.begin(), part.end());
    rows.insert(rows.end(), std::make_move_iterator(part.begin()),
                std::make_move_iterator(part.end()));
    return true;
  });
  return decode_all(access, rows);
}

std::optional<WindowedRow> first_value(
    const StoreAccess& access, const std::string& store_key,
    const std::function<std::optional<std::string>(KeyValueStore&)>& get) {
  std::optional<std::string> found;
  access.visit([&](KeyValueStore& store) {
    found = get(store);
    return !found;
  });
  if (!found) return std::nullopt;
  return decode(access, BytesPair{store_key, std::move(*found)});
}

}  // namespace

void StoreAccess::type_mismatch(const std::string& why) const {
  throw InvalidStateStoreException(mismatch_message(*this, why));
}

void describe_store(StoreAccess& access, const StoreOptions& o, StoreKind kind, bool timestamped,
                    const std::type_info& key_type, const std::type_info& value_type) {
  StoreKind actual = o.session_layout     ? StoreKind::kSession
                     : o.retention_ms > 0 ? StoreKind::kWindow
                                          : StoreKind::kKeyValue;
  access.queryable_type = queryable_type_name(kind, timestamped);
  switch (actual) {
    case StoreKind::kKeyValue:
      access.actual_type = o.timestamped ? "TimestampedKeyValueStore" : "KeyValueStore";
      break;
    case StoreKind::kWindow:
      access.actual_type = o.timestamped ? "TimestampedWindowStore" : "WindowStore";
      break;
    case StoreKind::kSession:
      access.actual_type = "SessionStore";
      break;
  }
  if (actual != kind || (timestamped && !o.timestamped)) access.type_mismatch("");
  // A stream-stream join's stores key records by the key alone and do not know their windows'
  // size, which a Windowed key needs.
  if (kind == StoreKind::kWindow && !o.timestamped)
    access.type_mismatch("a stream-stream join's store, which is not queryable");
  if (!o.key_serde || !o.value_serde) access.type_mismatch("the store has no serdes");
  auto check = [&](const ErasedSerde& serde, const std::type_info& wanted, const char* what) {
    if (serde.type && *serde.type != wanted)
      access.type_mismatch(std::string("its ") + what + " serde " + serde.name +
                           " is of another type than the one asked for");
  };
  check(o.value_serde, value_type, "value");
  access.value_serde = o.value_serde;
  access.timestamped = o.timestamped;
  if (kind == StoreKind::kKeyValue) {
    check(o.key_serde, key_type, "key");
    access.key_serde = o.key_serde;
    return;
  }
  // The store's key serde is the windowed one over the key's own, which does not say its type.
  access.windowed_key_serde = o.key_serde;
  access.key_serde =
      key_alone(o.key_serde, kind == StoreKind::kWindow ? kWindowKeySuffix : kSessionKeySuffix,
                mismatch_message(access, "its key serde writes another type"));
}

std::optional<WindowedRow> WindowedReads::window(const Datum& key, int64_t start) const {
  std::string k = access_->key_serde.serialize(access_->name, key);
  return first_value(*access_, window_store_key(k, start),
                     [&](KeyValueStore& store) { return query_window(store, k, start); });
}

std::vector<WindowedRow> WindowedReads::windows_of(const Datum& key, int64_t from, int64_t to,
                                                   bool backward) const {
  std::string k = access_->key_serde.serialize(access_->name, key);
  return first_found(*access_, backward,
                     [&](KeyValueStore& store) { return query_windows(store, &k, &k, from, to); });
}

std::vector<WindowedRow> WindowedReads::windows(const Datum* key_from, const Datum* key_to,
                                                int64_t from, int64_t to, bool backward) const {
  std::optional<std::string> f, t;
  if (key_from) f = access_->key_serde.serialize(access_->name, *key_from);
  if (key_to) t = access_->key_serde.serialize(access_->name, *key_to);
  return concatenated(*access_, backward, [&](KeyValueStore& store) {
    return query_windows(store, f ? &*f : nullptr, t ? &*t : nullptr, from, to);
  });
}

std::optional<WindowedRow> WindowedReads::session(const Datum& key, int64_t start,
                                                  int64_t end) const {
  std::string k = access_->key_serde.serialize(access_->name, key);
  return first_value(*access_, session_windowed_bytes(k, Window{start, end}),
                     [&](KeyValueStore& store) { return query_session(store, k, start, end); });
}

std::vector<WindowedRow> WindowedReads::sessions_of(const Datum& key, int64_t earliest_end,
                                                    int64_t latest_start, bool backward) const {
  std::string k = access_->key_serde.serialize(access_->name, key);
  return first_found(*access_, backward, [&](KeyValueStore& store) {
    return query_sessions(store, &k, &k, earliest_end, latest_start);
  });
}

std::vector<WindowedRow> WindowedReads::sessions(const Datum* key_from, const Datum* key_to,
                                                 int64_t earliest_end, int64_t latest_start,
                                                 bool backward) const {
  std::optional<std::string> f, t;
  if (key_from) f = access_->key_serde.serialize(access_->name, *key_from);
  if (key_to) t = access_->key_serde.serialize(access_->name, *key_to);
  return concatenated(*access_, backward, [&](KeyValueStore& store) {
    return query_sessions(store, f ? &*f : nullptr, t ? &*t : nullptr, earliest_end, latest_start);
  });
}

}  // namespace oxbow::streams::detail
