// URL functions: the parts of a URL as Java's java.net.URI splits them (path, query and
// fragment with their %XX escapes decoded), and form-parameter escaping.
#include <cctype>

#include "sql/functions/library.h"

namespace oxbow::sql::functions {

namespace {

struct Url {
  std::string scheme, host, path, query, fragment;
  int32_t port = -1;
  bool has_query = false, has_fragment = false;
};

int hex_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c))         ? c - '0'
         : std::isxdigit(static_cast<unsigned char>(c)) != 0 ? std::tolower(c) - 'a' + 10
                                                             : -1;
}

// %XX to its byte; false on a malformed escape. `plus`: '+' is a space (form encoding).
bool decode(std::string_view in, bool plus, std::string& out) {
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+' && plus) {
      out += ' ';
    } else if (in[i] == '%') {
      if (i + 2 >= in.size() || hex_digit(in[i + 1]) < 0 || hex_digit(in[i + 2]) < 0) return false;
      out += static_cast<char>(hex_digit(in[i + 1]) * 16 + hex_digit(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return true;
}

bool valid_char(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != '"' && c != '<' && c != '>' &&
         c != '\\' && c != '^' && c != '`' && c != '{' && c != '|' && c != '}';
}

// Splits `text` as a URI: [scheme:][//authority][path][?query][#fragment]. False when it is not
// one (a character a URI may not hold, a bad escape or port).
bool parse(std::string_view text, Url& url) {
  for (char c : text)
    if (!valid_char(c) && c != '#') return false;
  size_t hash = text.find('#');
  if (hash != std::string_view::npos) {
    url.has_fragment = true;
    if (!decode(text.substr(hash + 1), false, url.fragment)) return false;
    text = text.substr(0, hash);
  }
  size_t colon = text.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::isalpha(static_cast<unsigned char>(text[0])) &&
      text.substr(0, colon).find_first_of("/?") == std::string_view::npos) {
    url.scheme = std::string(text.substr(0, colon));
    text = text.substr(colon + 1);
  }
  size_t question = text.find('?');
  if (question != std::string_view::npos) {
    url.has_query = true;
    if (!decode(text.substr(question + 1), false, url.query)) return false;
    text = text.substr(0, question);
  }
  if (text.substr(0, 2) == "//") {
    text = text.substr(2);
    size_t slash = text.find('/');
    std::string_view authority = text.substr(0, slash);
    text = slash == std::string_view::npos ? std::string_view() : text.substr(slash);
    if (size_t at = authority.rfind('@'); at != std::string_view::npos)
      authority = authority.substr(at + 1);
    size_t port = authority.rfind(':');
    if (port != std::string_view::npos && authority.find(']') == std::string_view::npos) {
      std::string_view digits = authority.substr(port + 1);
      if (digits.empty() || digits.size() > 9 ||
          digits.find_first_not_of("0123456789") != std::string_view::npos)
        return false;
      url.port = std::stoi(std::string(digits));
      authority = authority.substr(0, port);
    }
    url.host = std::string(authority);
  }
  return decode(text, false, url.path);
}

// The part `Part` of the URL argument: NULL where the URL lacks it, an error when it is none.
template <typename Get>
void extract(FunctionCall& call, Get get) {
  Url url;
  if (!parse(call[0].text(), url))
    return call.fail("URL input has invalid syntax: " + call[0].text());
  get(url, call.out());
}

void fragment(FunctionCall& call) {
  extract(call, [](const Url& u, Value& out) {
    u.has_fragment ? set_string(out, u.fragment) : out.set_null();
  });
}
void host(FunctionCall& call) {
  extract(call, [](const Url& u, Value& out) {
    u.host.empty() ? out.set_null() : set_string(out, u.host);
  });
}
void path(FunctionCall& call) {
  extract(call, [](const Url& u, Value& out) { set_string(out, u.path); });
}
void port(FunctionCall& call) {
  extract(call,
          [](const Url& u, Value& out) { u.port < 0 ? out.set_null() : out.set_integer(u.port); });
}
void protocol(FunctionCall& call) {
  extract(call, [](const Url& u, Value& out) {
    u.scheme.empty() ? out.set_null() : set_string(out, u.scheme);
  });
}
void query(FunctionCall& call) {
  extract(call, [](const Url& u, Value& out) {
    u.has_query ? set_string(out, u.query) : out.set_null();
  });
}

// The first value of the named parameter in the query; "" for one without '='.
void parameter(FunctionCall& call) {
  const std::string& name = call[1].text();
  extract(call, [&](const Url& u, Value& out) {
    out.set_null();
    if (!u.has_query) return;
    std::string_view q = u.query;
    while (true) {
      size_t amp = q.find('&');
      std::string_view param = q.substr(0, amp);
      size_t eq = param.find('=');
      if (param.substr(0, eq) == name)
        return set_string(out, eq == std::string_view::npos ? "" : param.substr(eq + 1));
      if (amp == std::string_view::npos) return;
      q = q.substr(amp + 1);
    }
  });
}

// application/x-www-form-urlencoded: letters, digits and -_.* kept, space as '+', the rest %XX.
void encode_param(FunctionCall& call) {
  static const char* kHex = "0123456789ABCDEF";
  std::string& out = scratch();
  for (char ch : call[0].text()) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '*')
      out += ch;
    else if (c == ' ')
      out += '+';
    else
      out += '%', out += kHex[c >> 4], out += kHex[c & 15];
  }
  set_string(call.out(), out);
}

void decode_param(FunctionCall& call) {
  std::string& out = scratch();
  if (!decode(call[0].text(), true, out))
    return call.fail("url_decode udf encountered an encoding exception while decoding: " +
                     call[0].text());
  set_string(call.out(), out);
}

}  // namespace

void add_url_functions(std::vector<FunctionInfo>& out) {
  const std::tuple<const char*, const char*, const char*, ScalarImplementation> parts[] = {
      {"URL_EXTRACT_FRAGMENT", "VARCHAR", "The fragment of a URL, NULL if it has none.", fragment},
      {"URL_EXTRACT_HOST", "VARCHAR", "The host of a URL.", host},
      {"URL_EXTRACT_PATH", "VARCHAR", "The path of a URL (empty if it has none).", path},
      {"URL_EXTRACT_PORT", "INT", "The port of a URL, NULL if it names none.", port},
      {"URL_EXTRACT_PROTOCOL", "VARCHAR", "The scheme of a URL, NULL if it has none.", protocol},
      {"URL_EXTRACT_QUERY", "VARCHAR", "The query of a URL, NULL if it has none.", query}};
  for (auto [name, result, description, f] : parts)
    out.push_back(scalar(name, kUrl, description, {signature("input VARCHAR", result, f)}));
  out.push_back(scalar("URL_EXTRACT_PARAMETER", kUrl,
                       "The value of a parameter in a URL's query, NULL if it is absent.",
                       {signature("input VARCHAR, paramToFind VARCHAR", "VARCHAR", parameter)}));
  out.push_back(scalar("URL_ENCODE_PARAM", kUrl,
                       "A string escaped as an application/x-www-form-urlencoded parameter.",
                       {signature("input VARCHAR", "VARCHAR", encode_param)}));
  out.push_back(scalar("URL_DECODE_PARAM", kUrl,
                       "An application/x-www-form-urlencoded parameter unescaped.",
                       {signature("input VARCHAR", "VARCHAR", decode_param)}));
}

}  // namespace oxbow::sql::functions
