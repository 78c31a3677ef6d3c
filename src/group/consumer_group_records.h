#pragma once
// KIP-848 consumer groups as records of `__consumer_offsets`, in the formats of Kafka 4's group
// coordinator, so that a restart (clean or not) loses no member, epoch or assignment.
//
// A key is an int16 record type followed by its fields in classic encoding (int16-length
// strings); a value is an int16 version (0) followed by its fields in flexible encoding (compact
// strings and arrays, each structure ending in a tagged-field section). A null value (tombstone)
// deletes the key.
//
//   type  record                          key               value
//   3     ConsumerGroupMetadata           group             epoch int32;
//                                                           tag 0: metadata hash int64
//   5     ConsumerGroupMemberMetadata     group, member     instance_id string?, rack_id string?,
//                                                           client_id, client_host,
//                                                           subscribed_topic_names []string,
//                                                           subscribed_topic_regex string?,
//                                                           rebalance_timeout_ms int32,
//                                                           server_assignor string?
//   6     ConsumerGroupTargetAssignment-  group             assignment_epoch int32
//         Metadata
//   7     ConsumerGroupTargetAssignment-  group, member     [topic_id uuid, partitions []int32]
//         Member
//   8     ConsumerGroupCurrentMember-     group, member     member_epoch int32,
//         Assignment                                        previous_member_epoch int32,
//                                                           state int8 (0 stable, 1 unrevoked,
//                                                           2 unreleased partitions),
//                                                           assigned [topic_id, partitions],
//                                                           pending_revocation [same]
//   16    ConsumerGroupRegularExpression  group, regex      topics []string, version int64,
//                                                           timestamp int64
//
// Kafka's type 4 (the subscribed topics' partition metadata) is not written: like Kafka 4.1
// (KIP-1101) the group keeps a hash of them in its metadata record instead. Our hash is not
// Kafka's; a Kafka broker reading this log would only rebalance the group once.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "group/consumer_group.h"

namespace oxbow::group {

// A group's records: key bytes -> value bytes.
using GroupRecords = std::map<std::string, std::string>;

// The records that describe the group's snapshot: its own and its members'.
GroupRecords consumer_group_records(const ConsumerGroupSnapshot& snapshot,
                                    const std::string& group_id);
// The group's own records (metadata, target assignment epoch, regular expressions); the
// snapshot's members are not looked at.
GroupRecords consumer_group_own_records(const ConsumerGroupSnapshot& snapshot,
                                        const std::string& group_id);
// One member's records: metadata, current assignment, and its target when it has one.
GroupRecords consumer_member_records(const ConsumerMember& member, const Assignment* target,
                                     const std::string& group_id);
// The keys a member's records can have.
std::vector<std::string> consumer_member_keys(const std::string& group_id,
                                              const std::string& member_id);

// The group id of a consumer-group record's key; nullopt for keys of other types.
std::optional<std::string> consumer_group_of_key(std::string_view key);
// The member id of a member's record key; nullopt for the group's own keys and other kinds.
std::optional<std::string> consumer_member_of_key(std::string_view key);

// The snapshot the records describe; nullopt when they hold no group metadata record or one of
// them cannot be decoded.
std::optional<ConsumerGroupSnapshot> consumer_group_from_records(const GroupRecords& records);

}  // namespace oxbow::group
