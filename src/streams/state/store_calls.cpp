#include "oxbow/streams/detail/store_calls.h"

#include "streams/state/bytes_store.h"

namespace oxbow::streams::detail {

const std::string& store_name(const KeyValueStore& store) {
  return store.name();
}
std::optional<std::string> store_get(KeyValueStore& store, const std::string& key) {
  return store.get(key);
}
void store_put(KeyValueStore& store, const std::string& key,
               const std::optional<std::string>& value, const RecordContext& context) {
  store.put(key, value, context);
}
CursorPtr store_scan(KeyValueStore& store, const KeyRange& range) {
  return CursorPtr(store.scan(range).release());
}
int64_t store_num_entries(KeyValueStore& store) {
  return store.approximate_num_entries();
}

std::optional<std::string> query_get(KeyValueStore& store, const std::string& key) {
  return store.query_get(key);
}
int64_t query_num_entries(KeyValueStore& store) {
  return store.query_num_entries();
}

}  // namespace oxbow::streams::detail
