#pragma once
// Key-value stores over bytes, as Kafka Streams' are underneath its typed facades: RocksDB or in
// memory at the bottom, then optional changelogging and caching layers.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oxbow/streams/record.h"
#include "streams/state/bytes_store.h"

namespace oxbow::streams::detail {

// What a cache does with a dirty entry when it flushes it: the new and the previous value
// (nullopt: null) and the record context of the write.
using FlushListener =
    std::function<void(const std::string& key, const std::optional<std::string>& new_value,
                       const std::optional<std::string>& old_value, const RecordContext& context)>;

}  // namespace oxbow::streams::detail
