#pragma once
// Kafka's primitive wire encodings: fixed-width big-endian integers, (zigzag) varints, strings,
// bytes and arrays in their classic (int16/int32 length) and compact (uvarint length + 1) forms,
// and the tagged-field sections that end every structure of a flexible version.
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace oxbow::protocol {

using Uuid = std::array<uint8_t, 16>;

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A range of a file to be sent as is (sendfile) in the middle of an encoded response.
// `keepalive` holds whatever keeps `fd` open until the bytes are sent.
struct FileSlice {
  int fd = -1;
  uint64_t offset = 0;
  uint32_t length = 0;
  std::shared_ptr<const void> keepalive;
};

// The `records` field type: request records are a view into the request frame (which the broker
// may patch in place, e.g. base offsets); response records are memory bytes followed by file
// slices.
struct Records {
  bool is_null = false;
  std::span<uint8_t> bytes;
  std::vector<FileSlice> slices;
  size_t size() const {
    size_t n = bytes.size();
    for (const auto& s : slices) n += s.length;
    return n;
  }
};

class Reader {
 public:
  explicit Reader(std::span<uint8_t> data) : data_(data) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }

  int8_t i8() { return static_cast<int8_t>(take(1)[0]); }
  bool boolean() { return i8() != 0; }
  int16_t i16() { return static_cast<int16_t>(be<uint16_t>()); }
  uint16_t u16() { return be<uint16_t>(); }
  int32_t i32() { return static_cast<int32_t>(be<uint32_t>()); }
  uint32_t u32() { return be<uint32_t>(); }
  int64_t i64() { return static_cast<int64_t>(be<uint64_t>()); }
  double f64() {
    uint64_t bits = be<uint64_t>();
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  Uuid uuid() {
    Uuid u;
    std::memcpy(u.data(), take(16), 16);
    return u;
  }
  uint32_t uvarint();
  int32_t varint();
  uint64_t uvarlong();
  int64_t varlong();

  std::optional<std::string> nullable_string(bool flexible);
  std::string string(bool flexible) { return nullable_string(flexible).value_or(std::string()); }
  std::optional<std::vector<uint8_t>> nullable_bytes(bool flexible);
  std::vector<uint8_t> bytes(bool flexible) {
    return nullable_bytes(flexible).value_or(std::vector<uint8_t>());
  }
  Records records(bool flexible);
  // An array's element count, or -1 for a null array. Rejects counts that cannot fit the input.
  int32_t array_length(bool flexible);
  void skip_tagged_fields();
  std::span<uint8_t> take_span(size_t n) { return {take(n), n}; }

 private:
  template <typename T>
  T be() {
    const uint8_t* p = take(sizeof(T));
    T v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | p[i]);
    return v;
  }
  uint8_t* take(size_t n) {
    if (n > remaining()) throw DecodeError("message truncated");
    uint8_t* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  // Length of a string/bytes field; -1 means null.
  int64_t length_prefix(bool flexible, bool is_int32);

  std::span<uint8_t> data_;
  size_t pos_ = 0;
};

class Writer {
 public:
  struct Splice {
    size_t at;  // the slice's bytes go after bytes()[0, at)
    FileSlice slice;
  };

  void i8(int8_t v) { bytes_.push_back(static_cast<uint8_t>(v)); }
  void boolean(bool v) { i8(v ? 1 : 0); }
  void i16(int16_t v) { be(static_cast<uint16_t>(v)); }
  void u16(uint16_t v) { be(v); }
  void i32(int32_t v) { be(static_cast<uint32_t>(v)); }
  void u32(uint32_t v) { be(v); }
  void i64(int64_t v) { be(static_cast<uint64_t>(v)); }
  void f64(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    be(bits);
  }
  void uuid(const Uuid& u) { raw(u.data(), u.size()); }
  void uvarint(uint32_t v);
  void varint(int32_t v);
  void uvarlong(uint64_t v);
  void varlong(int64_t v);

  void string(const std::string& s, bool flexible);
  void nullable_string(const std::optional<std::string>& s, bool flexible);
  void bytes(const std::vector<uint8_t>& b, bool flexible);
  void nullable_bytes(const std::optional<std::vector<uint8_t>>& b, bool flexible);
  void records(const Records& r, bool flexible);
  void array_length(int32_t n, bool flexible);  // n = -1 writes a null array
  void empty_tagged_fields() { uvarint(0); }

  void raw(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  size_t reserve_i32() {
    size_t at = bytes_.size();
    bytes_.resize(at + 4);
    return at;
  }
  void patch_i32(size_t at, int32_t v) {
    auto u = static_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) bytes_[at + i] = static_cast<uint8_t>(u >> (24 - 8 * i));
  }

  std::vector<uint8_t>& buffer() { return bytes_; }
  const std::vector<uint8_t>& buffer() const { return bytes_; }
  // The bytes as a string: the key or value of a record an internal topic keeps.
  std::string str() const { return std::string(bytes_.begin(), bytes_.end()); }
  const std::vector<Splice>& splices() const { return splices_; }
  size_t total_size() const {
    size_t n = bytes_.size();
    for (const auto& s : splices_) n += s.slice.length;
    return n;
  }

 private:
  template <typename T>
  void be(T v) {
    uint8_t b[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i)
      b[i] = static_cast<uint8_t>(v >> (8 * (sizeof(T) - 1 - i)));
    raw(b, sizeof(T));
  }
  void length_prefix(int64_t n, bool flexible, bool is_int32);

  std::vector<uint8_t> bytes_;
  std::vector<Splice> splices_;
};

}  // namespace oxbow::protocol
