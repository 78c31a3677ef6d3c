#include "protocol/wire.h"

namespace oxbow::protocol {

uint32_t Reader::uvarint() {
  uint64_t v = uvarlong();
  if (v > UINT32_MAX) throw DecodeError("varint out of range");
  return static_cast<uint32_t>(v);
}

uint64_t Reader::uvarlong() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = take(1)[0];
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return value;
  }
  throw DecodeError("varint too long");
}

int32_t Reader::varint() {
  uint32_t u = uvarint();
  return static_cast<int32_t>((u >> 1) ^ -(u & 1));
}

int64_t Reader::varlong() {
  uint64_t u = uvarlong();
  return static_cast<int64_t>((u >> 1) ^ -(u & 1));
}

int64_t Reader::length_prefix(bool flexible, bool is_int32) {
  int64_t n = flexible ? static_cast<int64_t>(uvarint()) - 1 : (is_int32 ? i32() : i16());
  if (n < -1) throw DecodeError("negative length");
  if (n > static_cast<int64_t>(remaining())) throw DecodeError("length exceeds message");
  return n;
}

std::optional<std::string> Reader::nullable_string(bool flexible) {
  int64_t n = length_prefix(flexible, false);
  if (n < 0) return std::nullopt;
  auto* p = take(static_cast<size_t>(n));
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

std::optional<std::vector<uint8_t>> Reader::nullable_bytes(bool flexible) {
  int64_t n = length_prefix(flexible, true);
  if (n < 0) return std::nullopt;
  auto* p = take(static_cast<size_t>(n));
  return std::vector<uint8_t>(p, p + n);
}

Records Reader::records(bool flexible) {
  Records r;
  int64_t n = length_prefix(flexible, true);
  if (n < 0) {
    r.is_null = true;
    return r;
  }
  r.bytes = take_span(static_cast<size_t>(n));
  return r;
}

int32_t Reader::array_length(bool flexible) {
  int64_t n = flexible ? static_cast<int64_t>(uvarint()) - 1 : i32();
  if (n < -1) throw DecodeError("negative array length");
  // Every element takes at least one byte: a larger count is a lie that would make us allocate.
  if (n > static_cast<int64_t>(remaining())) throw DecodeError("array length exceeds message");
  return static_cast<int32_t>(n);
}

void Reader::skip_tagged_fields() {
  uint32_t count = uvarint();
  for (uint32_t i = 0; i < count; ++i) {
    uvarint();  // tag
    uint32_t size = uvarint();
    take(size);
  }
}

void Writer::uvarlong(uint64_t v) {
  while (v >= 0x80) {
    bytes_.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  bytes_.push_back(static_cast<uint8_t>(v));
}

void Writer::uvarint(uint32_t v) {
  uvarlong(v);
}

void Writer::varint(int32_t v) {
  uvarint((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31));
}

void Writer::varlong(int64_t v) {
  uvarlong((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void Writer::length_prefix(int64_t n, bool flexible, bool is_int32) {
  if (flexible) {
    uvarint(static_cast<uint32_t>(n + 1));
  } else if (is_int32) {
    i32(static_cast<int32_t>(n));
  } else {
    i16(static_cast<int16_t>(n));
  }
}

void Writer::string(const std::string& s, bool flexible) {
  length_prefix(static_cast<int64_t>(s.size()), flexible, false);
  raw(s.data(), s.size());
}

void Writer::nullable_string(const std::optional<std::string>& s, bool flexible) {
  if (!s) {
    length_prefix(-1, flexible, false);
  } else {
    string(*s, flexible);
  }
}

void Writer::bytes(const std::vector<uint8_t>& b, bool flexible) {
  length_prefix(static_cast<int64_t>(b.size()), flexible, true);
  raw(b.data(), b.size());
}

void Writer::nullable_bytes(const std::optional<std::vector<uint8_t>>& b, bool flexible) {
  if (!b) {
    length_prefix(-1, flexible, true);
  } else {
    bytes(*b, flexible);
  }
}

void Writer::records(const Records& r, bool flexible) {
  if (r.is_null) {
    length_prefix(-1, flexible, true);
    return;
  }
  length_prefix(static_cast<int64_t>(r.size()), flexible, true);
  raw(r.bytes.data(), r.bytes.size());
  for (const auto& slice : r.slices) {
    if (slice.length > 0) splices_.push_back({bytes_.size(), slice});
  }
}

void Writer::array_length(int32_t n, bool flexible) {
  if (flexible) {
    uvarint(static_cast<uint32_t>(n + 1));
  } else {
    i32(n);
  }
}

}  // namespace oxbow::protocol
