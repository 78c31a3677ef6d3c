#pragma once
// A KSQL value at run time (docs/sql/ksqldb-facts.md §2.1) and a row of them. Fixed-width values
// live in the Value itself, so that a row of them is read, computed and written with no
// allocation; a string keeps its buffer across the rows it is reused for, and containers share
// their elements. A row's array of values comes from its thread's free list of row arrays (below),
// so that the rows a query makes, copies and drops per record cost no heap allocation once warm.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace oxbow::sql {

class Value {
 public:
  enum class Kind : uint8_t {
    kNull,
    kBoolean,
    kInteger,
    kBigint,
    kDouble,
    kDecimal,
    kString,
    kBytes,
    kDate,
    kTime,
    kTimestamp,
    kArray,
    kMap,
    kStruct,
  };

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }

  void set_null() { kind_ = Kind::kNull; }
  void set_boolean(bool v) { kind_ = Kind::kBoolean, boolean_ = v; }
  void set_integer(int32_t v) { kind_ = Kind::kInteger, integer_ = v; }
  void set_bigint(int64_t v) { kind_ = Kind::kBigint, bigint_ = v; }
  void set_double(double v) { kind_ = Kind::kDouble, double_ = v; }
  // DATE: days since the epoch; TIME: milliseconds of the day; TIMESTAMP: epoch milliseconds.
  void set_time(Kind kind, int64_t v) { kind_ = kind, bigint_ = v; }
  // The unscaled digits and the scale: 1.50 is (150, 2).
  void set_decimal(__int128 unscaled, int scale) {
    kind_ = Kind::kDecimal, decimal_ = unscaled, scale_ = static_cast<int16_t>(scale);
  }
  // STRING or BYTES, reusing this Value's buffer.
  void set_text(Kind kind, const char* data, size_t size) {
    kind_ = kind;
    text_.assign(data, size);
  }
  void set_string(const std::string& s) { set_text(Kind::kString, s.data(), s.size()); }
  void append_text(const std::string& s) { text_ += s; }
  // ARRAY (elements), MAP (key, value, key, value, ...) or STRUCT (fields in the type's order).
  void set_items(Kind kind, std::shared_ptr<const std::vector<Value>> items) {
    kind_ = kind;
    items_ = std::move(items);
  }

  bool boolean() const { return boolean_; }
  int32_t integer() const { return integer_; }
  int64_t bigint() const { return bigint_; }  // BIGINT and the time kinds
  double dbl() const { return double_; }
  __int128 unscaled() const { return decimal_; }
  int scale() const { return scale_; }
  const std::string& text() const { return text_; }
  const std::vector<Value>& items() const { return *items_; }

  // The value as a double (any number), as an int64 (integers).
  double as_double() const;
  int64_t as_int64() const;

  // For tests and messages: 1, 1.50, 'x', [1, 2], {k=1}, Struct{F=1}, null.
  std::string debug_string() const;

 private:
  Kind kind_ = Kind::kNull;
  int16_t scale_ = 0;
  union {
    bool boolean_;
    int32_t integer_;
    int64_t bigint_;
    double double_;
    __int128 decimal_ = 0;
  };
  std::string text_;
  std::shared_ptr<const std::vector<Value>> items_;
};

// Row arrays are recycled per thread: an array freed goes onto the freeing thread's list for its
// length (a row made on one thread and dropped on another simply changes lists), up to a bound per
// length, past which, and for long rows, it goes back to the heap. Rows pass through Streams as
// values (copied into processors, made by each projection) at a rate where malloc's own costs and
// the allocation counts of the record path (src/sql/engine/record_path_test.cpp) both matter; a
// std::pmr pool would be per resource rather than per thread, and its vectors would not keep their
// resource across the copies Streams makes.
namespace row_arrays {
void* allocate(size_t values);
void release(void* array, size_t values) noexcept;
}  // namespace row_arrays

template <class T>
struct RowAllocator {
  using value_type = T;
  RowAllocator() noexcept = default;
  template <class U>
  RowAllocator(const RowAllocator<U>&) noexcept {}  // NOLINT: rebinding, as std::allocator's
  T* allocate(size_t n) {
    static_assert(sizeof(T) == sizeof(Value), "row arrays hold Values");
    return static_cast<T*>(row_arrays::allocate(n));
  }
  void deallocate(T* p, size_t n) noexcept { row_arrays::release(p, n); }
  friend bool operator==(const RowAllocator&, const RowAllocator&) noexcept { return true; }
};

using Row = std::vector<Value, RowAllocator<Value>>;

// The decimal's text at its scale: (150, 2) is "1.50".
std::string decimal_text(__int128 unscaled, int scale);

// A DOUBLE's text as Java's Double.toString writes it, which ksqlDB's CAST and its DELIMITED
// format print: plain between 10^-3 and 10^7 (1.5, 100.0), else 1.0E10 or 1.0E-4.
std::string java_double_text(double d);
void append_java_double(double d, std::string& out);

}  // namespace oxbow::sql
