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
std::vector<BytesPair> store_range(KeyValueStore& store, const std::string& from,
                                   const std::string& to) {
  return store.range(from, to);
}
std::vector<BytesPair> store_all(KeyValueStore& store) {
  return store.all();
}
int64_t store_num_entries(KeyValueStore& store) {
  return store.approximate_num_entries();
}

std::optional<std::string> query_get(KeyValueStore& store, const std::string& key) {
  return store.query_get(key);
}
std::vector<BytesPair> query_range(KeyValueStore& store, const std::string& from,
                                   const std::string& to) {
  return store.query_range(from, to);
}
std::vector<BytesPair> query_prefix(KeyValueStore& store, const std::string& prefix) {
  return store.query_prefix(prefix);
}
std::vector<BytesPair> query_all(KeyValueStore& store) {
  return store.query_all();
}
int64_t query_num_entries(KeyValueStore& store) {
  return store.query_num_entries();
}

}  // namespace oxbow::streams::detail
