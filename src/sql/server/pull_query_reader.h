#pragma once
// Runs a planned pull query (sql/engine/pull_query.h): on a table, against the stores of the
// KafkaStreams that runs its materializing query, through Streams' interactive queries: key lookups
// with get() (window and session stores: the key's windows in the bounds), store ranges with
// range(), scans with all() (window stores: fetchAll over the window-start bounds). Store reads
// take each task's lock for one batch only (queryable.h), so pull queries never wait for each other
// and hold up processing for one batch at most; nothing here takes a lock of the server's.
#include <functional>
#include <string>

#include "sql/engine/pull_query.h"
#include "sql/server/kafka_cluster.h"

namespace oxbow::streams {
class KafkaStreams;
}

namespace oxbow::sql::server {

// Calls `emit` with each result row, in the store's order, until it returns false or the rows
// run out or the plan's LIMIT is reached. Throws what the store throws (InvalidStateStoreException
// while the query is not running, or rebalancing away). `topology`: the query's named topology in a
// shared runtime, whose stores are looked up by it; "" for a query running alone.
void read_pull_rows(const streams::KafkaStreams& streams, const std::string& topology,
                    PullPlan& plan, const std::function<bool(const Row&)>& emit);

// The same for a pull query on a stream (plan.stream): its topic's records from each partition's
// beginning to the end it had when the read began, through a consumer of no group (assigned,
// nothing committed). A record that does not deserialize is skipped. Throws std::runtime_error
// when the topic cannot be read.
void read_stream_rows(const ClientConfig& client, PullPlan& plan,
                      const std::function<bool(const Row&)>& emit);

}  // namespace oxbow::sql::server
