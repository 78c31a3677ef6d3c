#pragma once
// ksqlDB's GET /clusterStatus (this one server's entry: alive, the queries' active and standby
// stores and partitions) and GET /is_valid_property/{property} (true, or the error for a property
// the server's deny list keeps requests from overriding), and the deny list itself, which /ksql's
// and /ws/query's request properties are checked against too.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "oxbow/streams/streams_metadata.h"
#include "sql/server/ksql_resource.h"

namespace oxbow::sql::server {

// The properties no request may override: those of `ksql.properties.overrides.denylist`
// (comma-separated) and, always, `ksql.service.id`, in that order.
std::vector<std::string> denied_properties(const std::map<std::string, std::string>& server);

// ksqlDB's message for `properties` that meet the deny list, or nullopt when none does.
std::optional<std::string> denied_overrides(const std::vector<std::string>& denied,
                                            const std::map<std::string, std::string>& properties);

// GET /is_valid_property/{property}: 200 `true`, or 400 generic_error 40000 for a denied one.
// As in ksqlDB (without shared runtimes), a property the server does not know is valid.
RestResponse is_valid_property(const std::string& property, const std::vector<std::string>& denied);

// GET /clusterStatus of the server known as `host` ("host:port"): `queries` holds, per running
// persistent query, where its Streams application's state lives; each server found there (the
// same service id's) gets an entry with its part.
nlohmann::json cluster_status_json(
    const std::string& host, int64_t now_ms,
    const std::map<std::string, std::vector<streams::StreamsMetadata>>& queries);

}  // namespace oxbow::sql::server
