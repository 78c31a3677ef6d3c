// The untyped core of the interactive-query facades (queryable.h, queryable_windows.h): store
// type checks, and lookups of one window or session (their scans: query_scan.cpp).
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

// Kafka's composite stores for one window or session: the first local store that has it.
std::optional<std::string> first_value(
    const StoreAccess& access,
    const std::function<std::optional<std::string>(KeyValueStore&)>& get) {
  std::optional<std::string> found;
  access.visit([&](KeyValueStore& store) {
    found = get(store);
    return !found;
  });
  return found;
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

std::optional<std::string> query_window_value(const StoreAccess& access, const Datum& key,
                                              int64_t start) {
  std::string k = access.key_serde.serialize(access.name, key);
  return first_value(access, [&](KeyValueStore& store) { return query_window(store, k, start); });
}

std::optional<std::string> query_session_value(const StoreAccess& access, const Datum& key,
                                               int64_t start, int64_t end) {
  std::string k = access.key_serde.serialize(access.name, key);
  return first_value(access,
                     [&](KeyValueStore& store) { return query_session(store, k, start, end); });
}

}  // namespace oxbow::streams::detail
