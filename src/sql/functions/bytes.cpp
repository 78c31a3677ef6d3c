// BYTES to and from text and numbers (ksqlDB's CONVERSIONS), and ENCODE between text encodings.
#include <cstring>

#include "common/base64.h"

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

enum class Encoding { kHex, kUtf8, kAscii, kBase64, kUnknown };

Encoding encoding_of(const std::string& name) {
  std::string n = name;
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n == "hex"      ? Encoding::kHex
         : n == "utf8"   ? Encoding::kUtf8
         : n == "ascii"  ? Encoding::kAscii
         : n == "base64" ? Encoding::kBase64
                         : Encoding::kUnknown;
}

std::string to_hex(std::string_view in, bool upper) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  for (char c : in) {
    auto b = static_cast<unsigned char>(c);
    out += digits[b >> 4], out += digits[b & 15];
  }
  return out;
}

bool from_hex(std::string_view in, std::string& out) {
  if (in.size() % 2 != 0) return false;
  auto nibble = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  for (size_t i = 0; i < in.size(); i += 2) {
    int hi = nibble(in[i]), lo = nibble(in[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
  }
  return true;
}

// Java's US-ASCII charset: a byte past 127 reads as U+FFFD, a character past it writes as '?'.
std::string ascii_text(std::string_view bytes) {
  std::string out;
  for (char c : bytes)
    static_cast<unsigned char>(c) < 0x80 ? void(out += c) : append_utf8(out, 0xFFFD);
  return out;
}
std::string ascii_bytes(std::string_view text) {
  std::string out;
  for (char32_t c : code_points(text)) out += c < 0x80 ? static_cast<char>(c) : '?';
  return out;
}

bool decode(std::string_view text, Encoding e, std::string& bytes) {
  switch (e) {
    case Encoding::kHex:
      return from_hex(text, bytes);
    case Encoding::kBase64: {
      auto decoded = unbase64(text);
      return decoded ? (bytes = std::move(*decoded), true) : false;
    }
    case Encoding::kAscii:
      return bytes = ascii_bytes(text), true;
    default:
      return bytes = text, true;
  }
}

std::string encode(std::string_view bytes, Encoding e, bool upper_hex) {
  switch (e) {
    case Encoding::kHex:
      return to_hex(bytes, upper_hex);
    case Encoding::kBase64:
      return base64(bytes);
    case Encoding::kAscii:
      return ascii_text(bytes);
    default:
      return std::string(bytes);
  }
}

// Reads the encoding named by argument k; fails the call when it is unknown.
bool known_encoding(FunctionCall& call, size_t k, Encoding& e) {
  e = encoding_of(call[k].text());
  if (e != Encoding::kUnknown) return true;
  call.fail("Unknown encoding type '" + call[k].text() +
            "'. Supported formats are 'hex', 'utf8', 'ascii', and 'base64'.");
  return false;
}

void to_bytes(FunctionCall& call) {
  Encoding e;
  if (!known_encoding(call, 1, e)) return;
  std::string bytes;
  if (!decode(call[0].text(), e, bytes))
    return call.fail("Cannot decode '" + call[0].text() + "' as " + call[1].text());
  set_bytes(call.out(), bytes);
}

void from_bytes(FunctionCall& call) {
  Encoding e;
  if (!known_encoding(call, 1, e)) return;
  set_string(call.out(), encode(call[0].text(), e, true));
}

// ENCODE: text in one encoding to another; a hex input may start 0x or be x'..'.
void encode_text(FunctionCall& call) {
  Encoding from = encoding_of(call[1].text()), to = encoding_of(call[2].text());
  if (from == Encoding::kUnknown || to == Encoding::kUnknown || from == to)
    return call.fail("Supported input and output encodings are: hex, utf8, ascii and base64");
  std::string_view in = call[0].text();
  std::string odd;
  if (from == Encoding::kHex && in.substr(0, 2) == "0x") {
    in.remove_prefix(2);
    if (in.size() % 2) odd = "0" + std::string(in), in = odd;
  } else if (from == Encoding::kHex && in.size() >= 3 && (in[0] == 'x' || in[0] == 'X') &&
             in[1] == '\'' && in.back() == '\'') {
    in = in.substr(2, in.size() - 3);
  }
  std::string bytes;
  if (!decode(in, from, bytes)) return call.fail("Cannot decode '" + call[0].text() + "'");
  set_string(call.out(), encode(bytes, to, false));
}

// INT_FROM_BYTES, BIGINT_FROM_BYTES and DOUBLE_FROM_BYTES: exactly Size bytes, big-endian
// unless told otherwise.
template <size_t Size>
bool read_number(FunctionCall& call, uint64_t& bits) {
  const std::string& b = call[0].text();
  bool little = false;
  if (call.size() > 1) {
    const std::string& order = call[1].text();
    if (order != "BIG_ENDIAN" && order != "LITTLE_ENDIAN") {
      call.fail("Byte order must be BIG_ENDIAN or LITTLE_ENDIAN. Unknown byte order '" + order +
                "'.");
      return false;
    }
    little = order == "LITTLE_ENDIAN";
  }
  if (b.size() != Size) {
    call.fail("Number of bytes must be equal to " + std::to_string(Size) + ", but found " +
              std::to_string(b.size()));
    return false;
  }
  bits = 0;
  for (size_t k = 0; k < Size; ++k)
    bits = (bits << 8) | static_cast<unsigned char>(b[little ? Size - 1 - k : k]);
  return true;
}

void int_from_bytes(FunctionCall& call) {
  uint64_t bits;
  if (read_number<4>(call, bits)) call.out().set_integer(static_cast<int32_t>(bits));
}
void bigint_from_bytes(FunctionCall& call) {
  uint64_t bits;
  if (read_number<8>(call, bits)) call.out().set_bigint(static_cast<int64_t>(bits));
}
void double_from_bytes(FunctionCall& call) {
  uint64_t bits;
  double d;
  if (!read_number<8>(call, bits)) return;
  std::memcpy(&d, &bits, sizeof d);
  call.out().set_double(d);
}

std::vector<FunctionVariant> from_bytes_variants(const char* result, ScalarImplementation f) {
  return {signature("value BYTES", result, f),
          signature("value BYTES, byteOrder VARCHAR", result, f)};
}

}  // namespace

void add_bytes_functions(std::vector<FunctionInfo>& out) {
  out.push_back(scalar("TO_BYTES", kConversions,
                       "A string read as bytes in an encoding: hex, utf8, ascii or base64.",
                       {signature("value VARCHAR, encoding VARCHAR", "BYTES", to_bytes)}));
  out.push_back(scalar("FROM_BYTES", kConversions,
                       "Bytes written as a string in an encoding: hex, utf8, ascii or base64.",
                       {signature("value BYTES, encoding VARCHAR", "VARCHAR", from_bytes)}));
  out.push_back(scalar("ENCODE", kString,
                       "A string in one encoding (hex, utf8, ascii, base64) re-encoded in another.",
                       {signature("str VARCHAR, inputEncoding VARCHAR, outputEncoding VARCHAR",
                                  "VARCHAR", encode_text)}));
  out.push_back(scalar("INT_FROM_BYTES", kConversions,
                       "The INT in 4 bytes, BIG_ENDIAN unless LITTLE_ENDIAN is given.",
                       from_bytes_variants("INT", int_from_bytes)));
  out.push_back(scalar("BIGINT_FROM_BYTES", kConversions,
                       "The BIGINT in 8 bytes, BIG_ENDIAN unless LITTLE_ENDIAN is given.",
                       from_bytes_variants("BIGINT", bigint_from_bytes)));
  out.push_back(scalar("DOUBLE_FROM_BYTES", kConversions,
                       "The DOUBLE in 8 bytes, BIG_ENDIAN unless LITTLE_ENDIAN is given.",
                       from_bytes_variants("DOUBLE", double_from_bytes)));
}

}  // namespace oxbow::sql::functions
