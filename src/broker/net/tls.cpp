#include "broker/net/tls.h"

#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <boost/asio/ssl/context.hpp>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>
#include <set>

#include "broker/config/config.h"
#include "common/properties.h"

namespace oxbow::broker {

namespace ssl = boost::asio::ssl;

bool uses_tls(const std::string& security_protocol) {
  return security_protocol == "SSL" || security_protocol == "SASL_SSL";
}

struct PrincipalMapper::Rule {
  bool is_default = false;
  std::regex pattern;
  std::string replacement;
  char letter_case = 0;  // 'L', 'U' or none
};

PrincipalMapper::PrincipalMapper() = default;
PrincipalMapper::~PrincipalMapper() = default;

namespace {

// Reads up to the next unescaped '/', keeping escapes for the regex.
bool read_until_slash(const std::string& text, size_t& pos, std::string& out) {
  while (pos < text.size() && text[pos] != '/') {
    if (text[pos] == '\\' && pos + 1 < text.size()) out += text[pos++];
    out += text[pos++];
  }
  if (pos >= text.size()) return false;
  ++pos;
  return true;
}

}  // namespace

std::unique_ptr<PrincipalMapper> PrincipalMapper::parse(const std::string& rules,
                                                        std::string& error) {
  auto mapper = std::make_unique<PrincipalMapper>();
  size_t pos = 0;
  auto skip_separators = [&] {
    while (pos < rules.size() &&
           (rules[pos] == ',' || std::isspace(static_cast<unsigned char>(rules[pos]))))
      ++pos;
  };
  for (skip_separators(); pos < rules.size(); skip_separators()) {
    Rule rule;
    if (rules.compare(pos, 7, "DEFAULT") == 0) {
      rule.is_default = true;
      pos += 7;
    } else if (rules.compare(pos, 5, "RULE:") == 0) {
      pos += 5;
      std::string pattern;
      if (!read_until_slash(rules, pos, pattern) ||
          !read_until_slash(rules, pos, rule.replacement)) {
        error = "ssl.principal.mapping.rules: a RULE needs the form RULE:pattern/replacement/[LU]";
        return nullptr;
      }
      if (pos < rules.size() && (rules[pos] == 'L' || rules[pos] == 'U'))
        rule.letter_case = rules[pos++];
      try {
        rule.pattern = std::regex(pattern);
      } catch (const std::regex_error& e) {
        error = "ssl.principal.mapping.rules: bad pattern '" + pattern + "': " + e.what();
        return nullptr;
      }
    } else {
      error =
          "ssl.principal.mapping.rules: expected RULE: or DEFAULT at '" + rules.substr(pos) + "'";
      return nullptr;
    }
    mapper->rules_.push_back(std::move(rule));
  }
  return mapper;
}

std::optional<std::string> PrincipalMapper::map(const std::string& subject) const {
  for (const auto& rule : rules_) {
    if (rule.is_default) return subject;
    std::smatch match;
    if (!std::regex_match(subject, match, rule.pattern)) continue;
    std::string name = match.format(rule.replacement);
    if (rule.letter_case == 'L') name = ascii_lower(std::move(name));
    if (rule.letter_case == 'U') name = ascii_upper(std::move(name));
    return name;
  }
  return std::nullopt;
}

namespace {

// A listener's value of an ssl.* key: its listener.name.<name>.<key> override, else the broker's.
class ListenerSettings {
 public:
  ListenerSettings(const BrokerConfig& config, const Endpoint& listener)
      : config_(config), prefix_("listener.name." + ascii_lower(listener.name) + ".") {}

  std::optional<std::string> get(const std::string& key) const {
    if (auto it = config_.given.find(prefix_ + key); it != config_.given.end()) return it->second;
    return config_.value_of(key);
  }
  // The name to quote in an error: the key as the user set it.
  std::string source(const std::string& key) const {
    return config_.given.count(prefix_ + key) ? prefix_ + key : key;
  }

 private:
  const BrokerConfig& config_;
  std::string prefix_;
};

// The contents of a PKCS12 store (what keytool and `openssl pkcs12 -export` write).
struct Pkcs12Contents {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> certificate{nullptr, X509_free};
  std::vector<std::unique_ptr<X509, decltype(&X509_free)>> others;  // chain or trusted certificates
};

Pkcs12Contents read_pkcs12(const std::string& path, const std::string& password,
                           const std::string& key_name) {
  std::unique_ptr<FILE, decltype(&fclose)> file(fopen(path.c_str(), "rb"), fclose);
  if (!file) throw std::runtime_error(key_name + " " + path + ": " + std::strerror(errno));
  std::unique_ptr<PKCS12, decltype(&PKCS12_free)> store(d2i_PKCS12_fp(file.get(), nullptr),
                                                        PKCS12_free);
  EVP_PKEY* key = nullptr;
  X509* certificate = nullptr;
  STACK_OF(X509)* others = nullptr;
  if (!store || PKCS12_parse(store.get(), password.c_str(), &key, &certificate, &others) != 1) {
    // OpenSSL 3 refuses the RC2-40 stores of old keytools: its reason says so.
    const char* reason = ERR_reason_error_string(ERR_get_error());
    ERR_clear_error();
    throw std::runtime_error(key_name + " " + path +
                             ": not a PKCS12 store, or the password is wrong (" +
                             (reason ? reason : "no detail") + ")");
  }
  Pkcs12Contents out;
  out.key.reset(key);
  out.certificate.reset(certificate);
  for (int i = 0; others && i < sk_X509_num(others); ++i)
    out.others.emplace_back(sk_X509_value(others, i), X509_free);
  sk_X509_free(others);
  return out;
}

void load_pkcs12_identity(ssl::context& context, const ListenerSettings& settings,
                          const std::string& location) {
  auto store = read_pkcs12(location, settings.get("ssl.keystore.password").value_or(""),
                           "ssl.keystore.location");
  SSL_CTX* ctx = context.native_handle();
  if (!store.key || !store.certificate ||
      SSL_CTX_use_certificate(ctx, store.certificate.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, store.key.get()) != 1) {
    throw std::runtime_error("ssl.keystore.location " + location +
                             ": no usable private key and certificate");
  }
  for (auto& c : store.others) {
    if (SSL_CTX_add1_chain_cert(ctx, c.get()) != 1) {
      throw std::runtime_error("ssl.keystore.location " + location +
                               ": a chain certificate is unusable");
    }
  }
}

// ssl.keystore.type / ssl.truststore.type, checked here too since per-listener overrides are not
// validated with the broker's keys.
std::string store_type(const ListenerSettings& settings, const std::string& key) {
  std::string type = ascii_upper(settings.get(key).value_or("PEM"));
  if (type != "PEM" && type != "PKCS12") {
    throw std::runtime_error(
        settings.source(key) + "=" + type +
        " is not supported: use PEM or PKCS12 (keytool -importkeystore -deststoretype PKCS12 "
        "converts a JKS store)");
  }
  return type;
}

void load_identity(ssl::context& context, const ListenerSettings& settings) {
  if (store_type(settings, "ssl.keystore.type") == "PKCS12") {
    auto location = settings.get("ssl.keystore.location");
    if (!location) throw std::runtime_error("ssl.keystore.type=PKCS12 needs ssl.keystore.location");
    load_pkcs12_identity(context, settings, *location);
    return;
  }
  if (auto password = settings.get("ssl.key.password")) {
    context.set_password_callback(
        [p = *password](size_t, ssl::context::password_purpose) { return p; });
  }
  auto location = settings.get("ssl.keystore.location");
  auto chain = settings.get("ssl.keystore.certificate.chain");
  auto key = settings.get("ssl.keystore.key");
  if (chain && key) {
    context.use_certificate_chain(boost::asio::buffer(*chain));
    context.use_private_key(boost::asio::buffer(*key), ssl::context::pem);
  } else if (location) {
    context.use_certificate_chain_file(*location);
    context.use_private_key_file(*location, ssl::context::pem);
  } else {
    throw std::runtime_error(
        "needs ssl.keystore.location (a PEM file with the key and certificate chain), or "
        "ssl.keystore.key with ssl.keystore.certificate.chain");
  }
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    throw std::runtime_error("the private key does not match the certificate");
  }
}

void load_trust(ssl::context& context, const ListenerSettings& settings,
                const std::string& client_auth) {
  auto location = settings.get("ssl.truststore.location");
  auto certificates = settings.get("ssl.truststore.certificates");
  if (location && store_type(settings, "ssl.truststore.type") == "PKCS12") {
    auto store = read_pkcs12(*location, settings.get("ssl.truststore.password").value_or(""),
                             "ssl.truststore.location");
    X509_STORE* trusted = SSL_CTX_get_cert_store(context.native_handle());
    int added = 0;
    if (store.certificate) added += X509_STORE_add_cert(trusted, store.certificate.get()) == 1;
    for (auto& c : store.others) added += X509_STORE_add_cert(trusted, c.get()) == 1;
    if (added == 0)
      throw std::runtime_error("ssl.truststore.location " + *location + ": no certificate in it");
  } else if (certificates) {
    context.add_certificate_authority(boost::asio::buffer(*certificates));
  } else if (location) {
    context.load_verify_file(*location);
  } else if (client_auth != "none") {
    throw std::runtime_error("ssl.client.auth=" + client_auth +
                             " needs ssl.truststore.location or ssl.truststore.certificates");
  }
  if (client_auth == "required") {
    context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  } else if (client_auth == "requested") {
    context.set_verify_mode(ssl::verify_peer);
  } else {
    context.set_verify_mode(ssl::verify_none);
  }
}

void set_protocols(ssl::context& context, const ListenerSettings& settings) {
  auto enabled = split(settings.get("ssl.enabled.protocols").value_or("TLSv1.2,TLSv1.3"), ',');
  bool v12 = std::find(enabled.begin(), enabled.end(), "TLSv1.2") != enabled.end();
  bool v13 = std::find(enabled.begin(), enabled.end(), "TLSv1.3") != enabled.end();
  if (!v12 && !v13)
    throw std::runtime_error("ssl.enabled.protocols names neither TLSv1.2 nor TLSv1.3");
  SSL_CTX_set_min_proto_version(context.native_handle(), v12 ? TLS1_2_VERSION : TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(context.native_handle(), v13 ? TLS1_3_VERSION : TLS1_2_VERSION);
  if (auto ciphers = settings.get("ssl.cipher.suites"); ciphers && !ciphers->empty()) {
    // Kafka configs name suites the IANA way (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); OpenSSL's
    // TLS 1.2 list wants its own names, its TLS 1.3 list the IANA ones. OpenSSL names pass as
    // given.
    static const std::set<std::string> kTls13Suites = {
        "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"};
    std::string tls12, tls13;
    for (auto name : split(*ciphers, ',')) {
      if (name.empty()) continue;
      bool is_tls13 = kTls13Suites.count(name) > 0;
      if (!is_tls13 && name.starts_with("TLS_")) {
        std::string openssl_name = OPENSSL_cipher_name(name.c_str());
        if (openssl_name == "(NONE)")
          throw std::runtime_error("ssl.cipher.suites: unknown cipher suite " + name);
        name = openssl_name;
      }
      auto& list = is_tls13 ? tls13 : tls12;
      list += (list.empty() ? "" : ":") + name;
    }
    if (!tls12.empty() && SSL_CTX_set_cipher_list(context.native_handle(), tls12.c_str()) != 1) {
      throw std::runtime_error("ssl.cipher.suites: no usable TLS 1.2 cipher in '" + tls12 + "'");
    }
    if (!tls13.empty() && SSL_CTX_set_ciphersuites(context.native_handle(), tls13.c_str()) != 1) {
      throw std::runtime_error("ssl.cipher.suites: no usable TLS 1.3 suite in '" + tls13 + "'");
    }
  }
}

}  // namespace

std::optional<TlsListener> make_tls_listener(const BrokerConfig& config, const Endpoint& listener,
                                             std::string& error) {
  ListenerSettings settings(config, listener);
  TlsListener out;
  try {
    auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                         ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    set_protocols(*context, settings);
    // Sessions resumed with a client certificate need a context id, else OpenSSL fails the
    // handshake.
    SSL_CTX_set_session_id_context(
        context->native_handle(), reinterpret_cast<const unsigned char*>(listener.name.data()),
        static_cast<unsigned int>(std::min<size_t>(listener.name.size(), SSL_MAX_SID_CTX_LENGTH)));
    load_identity(*context, settings);
    std::string client_auth = settings.get("ssl.client.auth").value_or("none");
    if (client_auth != "none" && client_auth != "requested" && client_auth != "required") {
      throw std::runtime_error(settings.source("ssl.client.auth") +
                               ": expected required, requested or none, not " + client_auth);
    }
    load_trust(*context, settings, client_auth);
    out.context = std::move(context);
  } catch (const std::exception& e) {
    error = "listener " + listener.name + " (" + listener.security_protocol + "): " + e.what();
    return std::nullopt;
  }
  auto mapper = PrincipalMapper::parse(
      settings.get("ssl.principal.mapping.rules").value_or("DEFAULT"), error);
  if (!mapper) return std::nullopt;
  out.principals = std::move(mapper);
  return out;
}

std::string peer_certificate_subject(void* handle) {
  auto* ssl = static_cast<SSL*>(handle);
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return {};
  std::string subject;
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    // RFC 2253 without escaping multi-byte characters, as Java's X500Principal.getName() prints it.
    X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0,
                       XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
    char* data = nullptr;
    long size = BIO_get_mem_data(bio, &data);
    if (size > 0) subject.assign(data, static_cast<size_t>(size));
    BIO_free(bio);
  }
  X509_free(cert);
  return subject;
}

}  // namespace oxbow::broker
