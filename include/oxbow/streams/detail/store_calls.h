#pragma once
// What the typed store views (a processor's KeyValueStore<K, V>, interactive queries'
// ReadOnlyKeyValueStore<K, V>) ask of the byte-level store under them. That store's class stays
// inside the library (src/streams/state/bytes_store.h); these calls are compiled there, so an
// application sees neither its layers nor its virtual functions.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oxbow::streams {
struct RecordContext;
}

namespace oxbow::streams::detail {

class KeyValueStore;
using BytesPair = std::pair<std::string, std::string>;

// From the stream thread, through the store's cache and changelog.
const std::string& store_name(const KeyValueStore& store);
std::optional<std::string> store_get(KeyValueStore& store, const std::string& key);
// value nullopt deletes.
void store_put(KeyValueStore& store, const std::string& key,
               const std::optional<std::string>& value, const RecordContext& context);
std::vector<BytesPair> store_range(KeyValueStore& store, const std::string& from,
                                   const std::string& to);
std::vector<BytesPair> store_all(KeyValueStore& store);
int64_t store_num_entries(KeyValueStore& store);

// Interactive queries, from other threads: reads that change nothing (bytes_store.h).
std::optional<std::string> query_get(KeyValueStore& store, const std::string& key);
std::vector<BytesPair> query_range(KeyValueStore& store, const std::string& from,
                                   const std::string& to);
std::vector<BytesPair> query_prefix(KeyValueStore& store, const std::string& prefix);
std::vector<BytesPair> query_all(KeyValueStore& store);
int64_t query_num_entries(KeyValueStore& store);

}  // namespace oxbow::streams::detail
