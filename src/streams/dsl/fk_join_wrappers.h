#pragma once
// What a foreign-key join (KIP-213) sends between its two sides, in Kafka Streams' byte formats so
// that its internal topics read the same to either implementation.
//
// Subscription topic (`...-subscription-registration-topic`), key: the foreign key (the right
// table's key serde); value, version 1:
//   byte 0      the version (1), its top bit set when there is no hash
//   byte 1      the instruction (SubscriptionInstruction)
//   16 bytes    the hash of the left row's value, when there is one: two 64-bit halves big-endian
//   n bytes     the left row's key (the left table's key serde)
//   4 bytes     the partition of the left row, big-endian
// Response topic (`...-subscription-response-topic`), key: the left row's key; value, version 0:
//   byte 0      the version (0), its top bit set when there is no hash
//   16 bytes    the hash, when there is one
//   n bytes     the right row's value (the right table's value serde); none: null. As in Kafka, a
//               value serialized to no bytes reads back as null.
// Subscription store key: the foreign key's length (4 bytes big-endian), its bytes, then the left
// key's bytes; so a prefix scan on a foreign key finds every left row subscribed to it.
// Store value: a timestamped (state/timestamped.h) subscription value.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oxbow/streams/record.h"

namespace oxbow::streams::detail {

// Murmur3 x64 128-bit, seed 104729, as Kafka's Murmur3.hash128: the hash the left side sends with
// each subscription and checks responses against.
using ValueHash = std::array<uint64_t, 2>;
ValueHash murmur3_hash128(std::string_view data, uint64_t seed = 104729);

enum class SubscriptionInstruction : uint8_t {
  kDeleteKeyNoPropagate = 0,
  kDeleteKeyAndPropagate = 1,
  kPropagateNullIfNoForeignValue = 2,
  kPropagateOnlyIfForeignValue = 3,
};

struct Subscription {
  std::optional<ValueHash> hash;  // none: the left row was deleted
  SubscriptionInstruction instruction = SubscriptionInstruction::kDeleteKeyNoPropagate;
  Datum primary_key;
  int32_t primary_partition = 0;
};

struct SubscriptionResponse {
  std::optional<ValueHash> hash;
  Datum foreign_value;
  int32_t primary_partition = 0;  // not serialized: it only picks the response's partition
};

ErasedSerde subscription_serde(ErasedSerde primary_key);
ErasedSerde subscription_response_serde(ErasedSerde foreign_value);

std::string combined_key_prefix(std::string_view foreign_key);
// The left key's bytes in a combined key with that prefix.
std::string_view primary_key_of(std::string_view combined_key);

}  // namespace oxbow::streams::detail
