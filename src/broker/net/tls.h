#pragma once
// TLS for SSL and SASL_SSL listeners (OpenSSL through Boost.Asio), configured with Kafka's ssl.*
// keys in PEM form. Each key may be set for one listener as listener.name.<listener, lower
// case>.<key>, which wins over the broker-wide key.
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace oxbow::broker {

struct BrokerConfig;
struct Endpoint;

bool uses_tls(const std::string& security_protocol);

// ssl.principal.mapping.rules: turns a client certificate's subject (RFC 2253, "CN=alice,O=acme")
// into a principal name. Rules are tried in order, the first whose pattern matches the whole
// subject wins; DEFAULT keeps the subject as it is. No match: the client is refused.
class PrincipalMapper {
 public:
  // nullptr with `error` when the rules do not parse.
  static std::unique_ptr<PrincipalMapper> parse(const std::string& rules, std::string& error);
  PrincipalMapper();
  ~PrincipalMapper();
  std::optional<std::string> map(const std::string& subject) const;

 private:
  struct Rule;
  std::vector<Rule> rules_;
};

struct TlsListener {
  std::shared_ptr<boost::asio::ssl::context> context;
  std::shared_ptr<const PrincipalMapper> principals;
};

// The TLS setup of a listener; nullopt with `error` (naming the key) when its settings are
// missing or unusable.
std::optional<TlsListener> make_tls_listener(const BrokerConfig& config, const Endpoint& listener,
                                             std::string& error);

// The subject of the peer's verified certificate (RFC 2253), or empty when it sent none.
// `ssl` is the connection's native SSL handle.
std::string peer_certificate_subject(void* ssl);

}  // namespace oxbow::broker
