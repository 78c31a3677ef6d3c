// Reading a schema's text as Confluent's Jackson mapper does, and printing it back the way
// Jackson prints: compact, keys in the order written (or sorted, for normalize), floats as Java's
// BigDecimal.toString() of the literal, strings with Jackson's escapes.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "registry/json/java.h"
#include "registry/json/node.h"

namespace oxbow::registry::json::detail {

namespace {

// Builds a Tree where each float is kept as its literal (in a binary value), since Jackson keeps
// it as an exact BigDecimal and prints `1.50` back as `1.50`.
class LiteralBuilder {
 public:
  using number_integer_t = Tree::number_integer_t;
  using number_unsigned_t = Tree::number_unsigned_t;
  using number_float_t = Tree::number_float_t;
  using string_t = Tree::string_t;
  using binary_t = Tree::binary_t;

  Tree root;
  std::string error;

  bool null() { return put(Tree(nullptr)); }
  bool boolean(bool v) { return put(Tree(v)); }
  bool number_integer(number_integer_t v) { return put(Tree(v)); }
  bool number_unsigned(number_unsigned_t v) { return put(Tree(v)); }
  bool number_float(number_float_t, const string_t& literal) {
    return put(Tree::binary(binary_t::container_type(literal.begin(), literal.end())));
  }
  bool string(string_t& v) { return put(Tree(std::move(v))); }
  bool binary(binary_t&) { return false; }
  bool start_object(std::size_t) { return open(Tree::object()); }
  bool key(string_t& k) {
    // Jackson keeps a repeated key's last value in its first position; operator[] does that.
    slot_ = &(*stack_.back())[k];
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Tree::array()); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag.
    if (auto pos = error.find("] "); error.rfind("[json.exception", 0) == 0 && pos != error.npos)
      error = error.substr(pos + 2);
    return false;
  }

 private:
  Tree* place(Tree&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Tree& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(Tree&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Tree&& v) {
    if (static_cast<int>(stack_.size()) >= kMaxNesting) {
      error = "nesting deeper than " + std::to_string(kMaxNesting) + " levels";
      return false;
    }
    stack_.push_back(place(std::move(v)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<Tree*> stack_;
  Tree* slot_ = nullptr;
};

// Java's BigDecimal.toString() of a JSON number literal.
std::string big_decimal_text(const std::string& literal) {
  size_t i = 0;
  bool negative = false;
  if (i < literal.size() && literal[i] == '-') negative = true, ++i;
  std::string digits;
  long long scale = 0;
  for (; i < literal.size() && literal[i] >= '0' && literal[i] <= '9'; ++i) digits += literal[i];
  if (i < literal.size() && literal[i] == '.') {
    for (++i; i < literal.size() && literal[i] >= '0' && literal[i] <= '9'; ++i) {
      digits += literal[i];
      ++scale;
    }
  }
  if (i < literal.size() && (literal[i] == 'e' || literal[i] == 'E')) {
    errno = 0;
    long long exponent = std::strtoll(literal.c_str() + i + 1, nullptr, 10);
    // Beyond what BigDecimal takes; Jackson would refuse it, keep the literal.
    if (errno == ERANGE || exponent > 1000000000LL || exponent < -1000000000LL) return literal;
    scale -= exponent;
  }
  size_t lead = digits.find_first_not_of('0');
  digits = lead == std::string::npos ? "0" : digits.substr(lead);
  if (digits == "0") negative = false;
  std::string out = negative ? "-" : "";
  long long adjusted = -scale + static_cast<long long>(digits.size()) - 1;
  if (scale == 0) return out + digits;
  if (scale > 0 && adjusted >= -6) {
    long long n = static_cast<long long>(digits.size());
    if (n > scale) return out + digits.substr(0, n - scale) + "." + digits.substr(n - scale);
    return out + "0." + std::string(scale - n, '0') + digits;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += adjusted >= 0 ? "E+" : "E";
  return out + std::to_string(adjusted);
}

void print_string(const std::string& s, std::string& out) {
  static const char* kHex = "0123456789ABCDEF";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void print(const Tree& v, bool sorted, std::string& out) {
  switch (v.type()) {
    case Tree::value_t::object: {
      std::vector<const std::pair<const std::string, Tree>*> items;
      for (const auto& item : v.get_ref<const Tree::object_t&>()) items.push_back(&item);
      if (sorted)
        std::stable_sort(items.begin(), items.end(),
                         [](auto* a, auto* b) { return java_less(a->first, b->first); });
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ',';
        print_string(items[i]->first, out);
        out += ':';
        print(items[i]->second, sorted, out);
      }
      out += '}';
      return;
    }
    case Tree::value_t::array:
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ',';
        print(v[i], sorted, out);
      }
      out += ']';
      return;
    case Tree::value_t::string:
      print_string(v.get_ref<const std::string&>(), out);
      return;
    case Tree::value_t::binary: {
      const auto& bytes = v.get_binary();
      out += big_decimal_text(std::string(bytes.begin(), bytes.end()));
      return;
    }
    default:
      out += v.dump();
  }
}

// The tree the loader reads: float literals become doubles.
Tree to_values(Tree&& v) {
  if (v.is_binary()) {
    const auto& bytes = v.get_binary();
    return Tree(std::strtod(std::string(bytes.begin(), bytes.end()).c_str(), nullptr));
  }
  if (v.is_object()) {
    for (auto& item : v.get_ref<Tree::object_t&>()) item.second = to_values(std::move(item.second));
  } else if (v.is_array()) {
    for (auto& item : v) item = to_values(std::move(item));
  }
  return std::move(v);
}

}  // namespace

TextParse parse_text(std::string_view text) {
  TextParse out;
  LiteralBuilder builder;
  // Not strict: Jackson's readTree ignores what follows the first value.
  bool ok = Tree::sax_parse(text.begin(), text.end(), &builder,
                            nlohmann::detail::input_format_t::json, false);
  if (!ok) {
    out.error = "Invalid JSON schema: " + builder.error;
    return out;
  }
  print(builder.root, false, out.canonical);
  print(builder.root, true, out.normalized);
  out.tree = std::make_shared<Tree>(to_values(std::move(builder.root)));
  return out;
}

}  // namespace oxbow::registry::json::detail
