#pragma once
// Hosts in configuration values, and in quota entities, as connections see them: resolved to the
// address text a connection reports for its peer, so that a limit set for a host name applies to
// the connections from it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace oxbow::broker {

// An address as connections report theirs (IPv4 as a.b.c.d); a host name is resolved, IPv4 first as
// Java prefers. nullopt when it is neither an address nor resolvable.
std::optional<std::string> resolve_address(const std::string& host);

// Parses max.connections.per.ip.overrides ("host:count,host:count"); nullopt with `error` when
// malformed.
std::optional<std::map<std::string, int64_t>> parse_per_ip_overrides(const std::string& text,
                                                                     std::string& error);

}  // namespace oxbow::broker
