#include "sql/execution/value.h"

#include <charconv>
#include <cmath>
#include <string_view>

namespace oxbow::sql {

namespace row_arrays {
namespace {

// Rows of up to kLongest values are recycled, at most kKept arrays of each length per thread: a
// task's rows in flight at once are a handful per length.
constexpr size_t kLongest = 64;
constexpr size_t kKept = 256;

struct FreeArray {
  FreeArray* next;
};

// Trivially destructible, so that a row dropped by another thread-local's destructor after the
// lists were emptied still reads valid memory (`closed`) and frees its array instead.
struct FreeLists {
  FreeArray* head[kLongest + 1];
  size_t count[kLongest + 1];
  bool closed;
};

thread_local constinit FreeLists free_lists{};

// Empties the lists when the thread exits; made on the first array kept.
struct ListsCloser {
  ListsCloser() = default;
  ~ListsCloser() {
    free_lists.closed = true;
    for (size_t n = 0; n <= kLongest; ++n)
      while (FreeArray* a = free_lists.head[n]) {
        free_lists.head[n] = a->next;
        ::operator delete(a);
      }
  }
};

FreeLists& lists() {
  return free_lists;
}

void ensure_closed_at_thread_exit() {
  thread_local ListsCloser closer;
  (void)closer;
}

}  // namespace

void* allocate(size_t values) {
  if (values > 0 && values <= kLongest) {
    FreeLists& l = lists();
    if (FreeArray* a = l.head[values]) {
      l.head[values] = a->next;
      --l.count[values];
      return a;
    }
  }
  return ::operator new(values * sizeof(Value));
}

void release(void* array, size_t values) noexcept {
  if (values > 0 && values <= kLongest) {
    FreeLists& l = lists();
    if (!l.closed && l.count[values] < kKept) {
      if (l.count[values] == 0) ensure_closed_at_thread_exit();
      auto* a = static_cast<FreeArray*>(array);
      a->next = l.head[values];
      l.head[values] = a;
      ++l.count[values];
      return;
    }
  }
  ::operator delete(array);
}

}  // namespace row_arrays

void append_java_double(double d, std::string& out) {
  if (std::isnan(d)) return void(out += "NaN");
  if (std::isinf(d)) return void(out += d > 0 ? "Infinity" : "-Infinity");
  double magnitude = std::fabs(d);
  bool plain = magnitude == 0 || (magnitude >= 1e-3 && magnitude < 1e7);
  char buffer[64];
  char* end = std::to_chars(buffer, buffer + sizeof buffer, d,
                            plain ? std::chars_format::fixed : std::chars_format::scientific)
                  .ptr;
  std::string_view text(buffer, static_cast<size_t>(end - buffer));
  size_t e = plain ? text.size() : text.find('e');  // 1.5e-04: Java writes 1.5E-4
  if (!plain && e == (d < 0 ? 2u : 1u)) {
    // One shortest digit: Java writes two, the pair nearest the exact binary value (so
    // Double.MIN_VALUE, 4.94...e-324, is 4.9E-324, and 1e23, 9.99...e22, is 1.0E23).
    end = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific, 1).ptr;
    text = std::string_view(buffer, static_cast<size_t>(end - buffer));
    e = text.find('e');
  }
  std::string_view digits = text.substr(0, e);
  out += digits;
  if (digits.find('.') == std::string_view::npos) out += ".0";
  if (plain) return;
  out += 'E';
  int exponent = 0;
  std::string_view written = text.substr(e + 1);
  if (!written.empty() && written[0] == '+') written.remove_prefix(1);
  std::from_chars(written.data(), written.data() + written.size(), exponent);
  end = std::to_chars(buffer, buffer + sizeof buffer, exponent).ptr;
  out.append(buffer, end);
}

std::string java_double_text(double d) {
  std::string out;
  append_java_double(d, out);
  return out;
}

std::string decimal_text(__int128 unscaled, int scale) {
  bool negative = unscaled < 0;
  unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(-(unscaled + 1)) + 1 : unscaled;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude > 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale)
      digits.insert(0, static_cast<size_t>(scale) - digits.size() + 1, '0');
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return negative ? "-" + digits : digits;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::kInteger:
      return integer_;
    case Kind::kDouble:
      return double_;
    case Kind::kDecimal: {
      double v = static_cast<double>(decimal_);
      for (int i = 0; i < scale_; ++i) v /= 10;
      return v;
    }
    default:
      return static_cast<double>(bigint_);
  }
}

int64_t Value::as_int64() const {
  return kind_ == Kind::kInteger ? integer_ : bigint_;
}

std::string Value::debug_string() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBoolean:
      return boolean_ ? "true" : "false";
    case Kind::kInteger:
      return std::to_string(integer_);
    case Kind::kBigint:
    case Kind::kDate:
    case Kind::kTime:
    case Kind::kTimestamp:
      return std::to_string(bigint_);
    case Kind::kDouble: {
      char buffer[64];
      auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, double_);
      (void)error;
      return std::string(buffer, end);
    }
    case Kind::kDecimal:
      return decimal_text(decimal_, scale_);
    case Kind::kString:
    case Kind::kBytes:
      return "'" + text_ + "'";
    case Kind::kArray:
    case Kind::kMap:
    case Kind::kStruct: {
      std::string out = kind_ == Kind::kArray ? "[" : kind_ == Kind::kMap ? "{" : "Struct{";
      const auto& v = *items_;
      for (size_t i = 0; i < v.size(); ++i) {
        if (kind_ == Kind::kMap && i % 2 == 1) {
          out += "=" + v[i].debug_string();
          continue;
        }
        out += (i == 0 ? "" : ", ") + v[i].debug_string();
      }
      return out + (kind_ == Kind::kArray ? "]" : "}");
    }
  }
  return "?";
}

}  // namespace oxbow::sql
