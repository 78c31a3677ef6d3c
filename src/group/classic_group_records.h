#pragma once
// Classic groups as records of `__consumer_offsets`, in Kafka's GroupMetadata format, so that a
// restart loses no member, generation or assignment of a stable group:
//   key   (version 2): version int16, group string
//   value (version 3, as written): version int16, protocol_type string, generation int32,
//         protocol string?, leader string?, current_state_timestamp int64,
//         members [member_id string, group_instance_id string?, client_id string,
//                  client_host string, rebalance_timeout int32, session_timeout int32,
//                  subscription bytes, assignment bytes]
// Strings and bytes have int16 and int32 lengths (-1: null). Versions 0-4 are read: v0 lacks the
// rebalance timeout, the state timestamp and instance ids (v1, v2 and v3 add them in that order),
// and v4 is v3 in flexible encoding (compact lengths, tagged fields closing each structure).
// A null value (tombstone) deletes the group.
#include <optional>
#include <string>
#include <string_view>

#include "group/group.h"

namespace oxbow::group {

std::string encode_classic_group_key(const std::string& group);
std::string encode_classic_group_value(const ClassicGroupSnapshot& group);
// The group id of a GroupMetadata key; nullopt for keys of other kinds.
std::optional<std::string> classic_group_of_key(std::string_view key);
std::optional<ClassicGroupSnapshot> decode_classic_group_value(std::string_view bytes);

}  // namespace oxbow::group
