#include "streams/dsl/fk_join_wrappers.h"

#include <algorithm>

#include "oxbow/streams/errors.h"

namespace oxbow::streams::detail {

namespace {

uint64_t rotl(uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}

uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

uint64_t little_endian64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

void put_big_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t big_endian(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(bytes[at + i]);
  return v;
}

constexpr uint8_t kNoHash = 0x80;
constexpr uint8_t kSubscriptionVersion = 1;
constexpr uint8_t kResponseVersion = 0;

void put_hash(std::string& out, const std::optional<ValueHash>& hash) {
  if (!hash) return;
  put_big_endian(out, (*hash)[0], 8);
  put_big_endian(out, (*hash)[1], 8);
}

// Reads the version byte and the hash after `at`; returns the offset past them.
size_t read_hash(std::string_view bytes, size_t at, std::optional<ValueHash>& hash,
                 const char* what) {
  bool none = static_cast<uint8_t>(bytes[0]) & kNoHash;
  if (none) return at;
  if (bytes.size() < at + 16) throw SerializationException(std::string(what) + " cut short");
  hash = ValueHash{big_endian(bytes, at, 8), big_endian(bytes, at + 8, 8)};
  return at + 16;
}

}  // namespace

ValueHash murmur3_hash128(std::string_view data, uint64_t seed) {
  constexpr uint64_t kC1 = 0x87c37b91114253d5ULL, kC2 = 0x4cf5ad432745937fULL;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const size_t blocks = data.size() / 16;
  uint64_t h1 = seed, h2 = seed;
  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k1 = little_endian64(bytes + i * 16), k2 = little_endian64(bytes + i * 16 + 8);
    h1 ^= rotl(k1 * kC1, 31) * kC2;
    h1 = (rotl(h1, 27) + h2) * 5 + 0x52dce729;
    h2 ^= rotl(k2 * kC2, 33) * kC1;
    h2 = (rotl(h2, 31) + h1) * 5 + 0x38495ab5;
  }
  const unsigned char* tail = bytes + blocks * 16;
  const size_t rest = data.size() & 15;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t{tail[i - 1]} << (8 * (i - 9));
  if (rest > 8) h2 ^= rotl(k2 * kC2, 33) * kC1;
  for (size_t i = std::min<size_t>(rest, 8); i > 0; --i)
    k1 ^= uint64_t{tail[i - 1]} << (8 * (i - 1));
  if (rest > 0) h1 ^= rotl(k1 * kC1, 31) * kC2;
  h1 ^= data.size();
  h2 ^= data.size();
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  return {h1, h2};
}

ErasedSerde subscription_serde(ErasedSerde primary_key) {
  ErasedSerde out;
  out.name = "SubscriptionWrapper<" + primary_key.name + ">";
  out.serialize = [primary_key](std::string_view topic, const Datum& d) {
    const auto& s = datum_cast<const Subscription&>(d);
    std::string bytes;
    bytes.push_back(static_cast<char>(kSubscriptionVersion | (s.hash ? 0 : kNoHash)));
    bytes.push_back(static_cast<char>(s.instruction));
    put_hash(bytes, s.hash);
    bytes += primary_key.serialize(std::string(topic) + "-pk", s.primary_key);
    put_big_endian(bytes, static_cast<uint32_t>(s.primary_partition), 4);
    return bytes;
  };
  out.deserialize = [primary_key](std::string_view topic, std::string_view bytes) {
    if (bytes.size() < 2) throw SerializationException("a subscription shorter than 2 bytes");
    uint8_t version = static_cast<uint8_t>(bytes[0]) & 0x7f;
    if (version > kSubscriptionVersion)
      throw SerializationException("a subscription of unknown version " + std::to_string(version));
    uint8_t instruction = static_cast<uint8_t>(bytes[1]);
    if (instruction > 3)
      throw SerializationException("Unknown instruction byte value = " +
                                   std::to_string(instruction));
    Subscription s;
    s.instruction = static_cast<SubscriptionInstruction>(instruction);
    size_t at = read_hash(bytes, 2, s.hash, "a subscription");
    size_t tail = version > 0 ? 4 : 0;
    if (bytes.size() < at + tail) throw SerializationException("a subscription cut short");
    s.primary_key = primary_key.deserialize(std::string(topic) + "-pk",
                                            bytes.substr(at, bytes.size() - at - tail));
    if (version > 0)
      s.primary_partition = static_cast<int32_t>(big_endian(bytes, bytes.size() - 4, 4));
    return Datum(std::move(s));
  };
  return out;
}

ErasedSerde subscription_response_serde(ErasedSerde foreign_value) {
  ErasedSerde out;
  out.name = "SubscriptionResponseWrapper<" + foreign_value.name + ">";
  out.serialize = [foreign_value](std::string_view topic, const Datum& d) {
    const auto& r = datum_cast<const SubscriptionResponse&>(d);
    std::string bytes;
    bytes.push_back(static_cast<char>(kResponseVersion | (r.hash ? 0 : kNoHash)));
    put_hash(bytes, r.hash);
    if (r.foreign_value.has_value()) bytes += foreign_value.serialize(topic, r.foreign_value);
    return bytes;
  };
  out.deserialize = [foreign_value](std::string_view topic, std::string_view bytes) {
    if (bytes.empty()) throw SerializationException("an empty subscription response");
    uint8_t version = static_cast<uint8_t>(bytes[0]) & 0x7f;
    if (version != kResponseVersion)
      throw SerializationException("a subscription response of unknown version " +
                                   std::to_string(version));
    SubscriptionResponse r;
    size_t at = read_hash(bytes, 1, r.hash, "a subscription response");
    if (bytes.size() > at) r.foreign_value = foreign_value.deserialize(topic, bytes.substr(at));
    return Datum(std::move(r));
  };
  return out;
}

std::string combined_key_prefix(std::string_view foreign_key) {
  std::string out;
  put_big_endian(out, static_cast<uint32_t>(foreign_key.size()), 4);
  out.append(foreign_key);
  return out;
}

std::string_view primary_key_of(std::string_view combined_key) {
  if (combined_key.size() < 4) throw SerializationException("a combined key shorter than 4 bytes");
  size_t fk = big_endian(combined_key, 0, 4);
  if (combined_key.size() < 4 + fk) throw SerializationException("a combined key cut short");
  return combined_key.substr(4 + fk);
}

}  // namespace oxbow::streams::detail
