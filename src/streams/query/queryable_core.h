#pragma once
// What KafkaStreams::store() needs of the queryable facades' core (queryable.cpp).
#include <typeinfo>

#include "oxbow/streams/options.h"
#include "oxbow/streams/queryable.h"

namespace oxbow::streams::detail {

// Checks that the store with `options` can be read as `kind` (through a timestamped view or not)
// with the facade's key and value types, and fills `access` (whose name is set) to read it.
// Throws store()'s InvalidStateStoreException ("... the queryable store type [...] does not
// accept the actual store type [...]") when it cannot.
void describe_store(StoreAccess& access, const StoreOptions& options, StoreKind kind,
                    bool timestamped, const std::type_info& key_type,
                    const std::type_info& value_type);

}  // namespace oxbow::streams::detail
