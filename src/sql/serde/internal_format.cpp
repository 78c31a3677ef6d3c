// The rows of a query's own topics and stores (repartition topics, join and aggregation stores,
// their changelogs), which no other program reads: each value self-describing, in binary, so that
// a row crosses a topic or a store without a text format's parsing.
//   row    := count:u32 value*
//   value  := kind:u8 payload           kind: Value::Kind
//   payload: NULL none; BOOLEAN u8; INTEGER i32; BIGINT, DATE, TIME, TIMESTAMP i64; DOUBLE f64;
//            DECIMAL i128 then scale:i16; STRING, BYTES size:u32 bytes;
//            ARRAY, MAP, STRUCT count:u32 value* (a MAP's keys and values alternate)
// Integers little-endian, as the machine holds them. Bytes that do not read this way are a
// SerializationException, like any other format's.
#include <cstring>

#include "sql/serde/formats.h"
#include "sql/serde/row_serde.h"

namespace oxbow::sql {

namespace {

using Kind = Value::Kind;

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void write_value(const Value& v, std::string& out) {
  out += static_cast<char>(v.kind());
  switch (v.kind()) {
    case Kind::kNull:
      return;
    case Kind::kBoolean:
      return put<uint8_t>(out, v.boolean());
    case Kind::kInteger:
      return put(out, v.integer());
    case Kind::kBigint:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return put(out, v.bigint());
    case Kind::kDouble:
      return put(out, v.dbl());
    case Kind::kDecimal:
      put(out, v.unscaled());
      return put(out, static_cast<int16_t>(v.scale()));
    case Kind::kString:
    case Kind::kBytes:
      put(out, static_cast<uint32_t>(v.text().size()));
      out += v.text();
      return;
    case Kind::kArray:
    case Kind::kMap:
    case Kind::kStruct:
      put(out, static_cast<uint32_t>(v.items().size()));
      for (const auto& item : v.items()) write_value(item, out);
      return;
  }
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    if (bytes_.size() - at_ < sizeof(T)) formats::unreadable("A truncated internal row");
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string_view take(size_t n) {
    if (bytes_.size() - at_ < n) formats::unreadable("A truncated internal row");
    std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  void read_value(Value& v, int depth) {
    if (depth > 64) formats::unreadable("An internal row nested too deep");
    auto kind = static_cast<Kind>(get<uint8_t>());
    switch (kind) {
      case Kind::kNull:
        return v.set_null();
      case Kind::kBoolean:
        return v.set_boolean(get<uint8_t>() != 0);
      case Kind::kInteger:
        return v.set_integer(get<int32_t>());
      case Kind::kBigint:
        return v.set_bigint(get<int64_t>());
      case Kind::kDate:
      case Kind::kTime:
      case Kind::kTimestamp:
        return v.set_time(kind, get<int64_t>());
      case Kind::kDouble:
        return v.set_double(get<double>());
      case Kind::kDecimal: {
        auto unscaled = get<__int128>();
        return v.set_decimal(unscaled, get<int16_t>());
      }
      case Kind::kString:
      case Kind::kBytes: {
        std::string_view text = take(get<uint32_t>());
        return v.set_text(kind, text.data(), text.size());
      }
      case Kind::kArray:
      case Kind::kMap:
      case Kind::kStruct: {
        auto items = std::make_shared<std::vector<Value>>(count());
        for (auto& item : *items) read_value(item, depth + 1);
        return v.set_items(kind, std::move(items));
      }
    }
    formats::unreadable("An internal row with a value of unknown kind");
  }
  // A count that the bytes left could hold (each value takes a byte at least).
  uint32_t count() {
    auto n = get<uint32_t>();
    if (n > bytes_.size() - at_) formats::unreadable("A truncated internal row");
    return n;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace

streams::Serde<Row> internal_row_serde() {
  auto serialize = [](std::string_view, const Row& row, std::string& out) {
    put(out, static_cast<uint32_t>(row.size()));
    for (const auto& v : row) write_value(v, out);
  };
  auto deserialize = [](std::string_view, std::string_view bytes, Row& row) {
    Reader reader(bytes);
    row.resize(reader.count());
    for (auto& v : row) reader.read_value(v, 0);
    if (!reader.done()) formats::unreadable("Bytes after an internal row");
  };
  return formats::serde_of("INTERNAL", serialize, deserialize);
}

}  // namespace oxbow::sql
