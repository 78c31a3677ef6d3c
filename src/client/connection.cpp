#include "client/connection.h"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cstring>

#include "client/scram.h"
#include "common/properties.h"
#include "protocol/errors.h"
#include "protocol/headers.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"

namespace oxbow::client {

namespace pr = oxbow::protocol;

namespace {

constexpr int16_t kSaslHandshake = 17;
constexpr int16_t kSaslAuthenticate = 36;

int connect_to(const std::string& host, const std::string& port, int timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

std::string openssl_error() {
  unsigned long code = ERR_get_error();
  if (code == 0) return "TLS failure";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

}  // namespace

std::string error_text(int16_t code, const std::optional<std::string>& message) {
  std::string text = pr::error_name(static_cast<pr::ErrorCode>(code));
  if (message && !message->empty()) text += ": " + *message;
  return text;
}

struct Connection::Tls {
  SSL_CTX* context = nullptr;
  SSL* ssl = nullptr;
  ~Tls() {
    if (ssl) SSL_free(ssl);
    if (context) SSL_CTX_free(context);
  }
};

Connection::Connection(const std::string& servers, const Settings& settings, std::string client_id,
                       int timeout_ms)
    : client_id_(std::move(client_id)) {
  std::string host;
  size_t start = 0;
  while (start <= servers.size() && fd_ < 0) {
    size_t end = servers.find(',', start);
    if (end == std::string::npos) end = servers.size();
    std::string server = servers.substr(start, end - start);
    size_t colon = server.rfind(':');
    if (colon != std::string::npos) {
      host = server.substr(0, colon);
      fd_ = connect_to(host, server.substr(colon + 1), timeout_ms);
      server_ = server;
    }
    start = end + 1;
  }
  if (fd_ < 0) fail(fmt::format("cannot connect to {}", servers));
  std::string protocol = ascii_lower(
      settings.count("security.protocol") ? settings.at("security.protocol") : "plaintext");
  if (protocol != "plaintext" && protocol != "ssl" && protocol != "sasl_plaintext" &&
      protocol != "sasl_ssl") {
    fail(fmt::format("security.protocol {} is not one of plaintext, ssl, sasl_plaintext, sasl_ssl",
                     protocol));
  }
  if (protocol == "ssl" || protocol == "sasl_ssl") start_tls(settings, host);
  if (protocol.starts_with("sasl")) authenticate(settings);
}

void Connection::fail(const std::string& why) const {
  throw ConnectionError(why);
}

void Connection::set_timeout(int timeout_ms) {
  timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
}

Connection::~Connection() {
  if (tls_ && tls_->ssl) SSL_shutdown(tls_->ssl);
  tls_.reset();
  if (fd_ >= 0) ::close(fd_);
}

void Connection::start_tls(const Settings& settings, const std::string& host) {
  auto get = [&](const char* key) {
    return settings.count(key) ? settings.at(key) : std::string();
  };
  tls_ = std::make_unique<Tls>();
  tls_->context = SSL_CTX_new(TLS_client_method());
  auto* ctx = tls_->context;
  if (!ctx) fail(fmt::format("{}: {}", server_, openssl_error()));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  bool verify = ascii_lower(get("enable.ssl.certificate.verification")) != "false";
  if (auto ca = get("ssl.ca.location"); !ca.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr) != 1) {
      fail(fmt::format("ssl.ca.location {}: {}", ca, openssl_error()));
    }
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  if (auto password = get("ssl.key.password"); !password.empty()) {
    SSL_CTX_set_default_passwd_cb_userdata(
        ctx, const_cast<char*>(settings.at("ssl.key.password").c_str()));
  }
  if (auto cert = get("ssl.certificate.location"); !cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
      fail(fmt::format("ssl.certificate.location {}: {}", cert, openssl_error()));
    }
    auto key = get("ssl.key.location");
    if (key.empty() || SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
      fail(fmt::format("ssl.key.location {}: {}", key, openssl_error()));
    }
  }
  SSL_CTX_set_verify(ctx, verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  tls_->ssl = SSL_new(ctx);
  SSL_set_fd(tls_->ssl, fd_);
  SSL_set_tlsext_host_name(tls_->ssl, host.c_str());
  // librdkafka 2.0 checks the broker's name against its certificate by default; so do we.
  if (verify && ascii_lower(get("ssl.endpoint.identification.algorithm")) != "none")
    SSL_set1_host(tls_->ssl, host.c_str());
  if (SSL_connect(tls_->ssl) != 1) {
    long result = SSL_get_verify_result(tls_->ssl);
    std::string why = result != X509_V_OK ? X509_verify_cert_error_string(result) : openssl_error();
    fail(fmt::format("{}: TLS handshake failed: {}", server_, why));
  }
}

std::vector<uint8_t> Connection::sasl_step(const std::string& token) {
  pr::SaslAuthenticateRequest request;
  request.auth_bytes.assign(token.begin(), token.end());
  auto response = call<pr::SaslAuthenticateResponse>(kSaslAuthenticate, 1, request);
  if (response.error_code != 0) {
    fail(fmt::format("{}: {}", server_, error_text(response.error_code, response.error_message)));
  }
  return response.auth_bytes;
}

void Connection::authenticate(const Settings& settings) {
  auto get = [&](const char* key) {
    return settings.count(key) ? settings.at(key) : std::string();
  };
  std::string mechanism = get("sasl.mechanism");
  if (mechanism.empty()) mechanism = get("sasl.mechanisms");
  if (mechanism.empty()) mechanism = "GSSAPI";  // librdkafka's default
  auto scram = scram_mechanism_from_name(mechanism);
  if (mechanism != "PLAIN" && scram == ScramMechanism::kUnknown) {
    fail(fmt::format(
        "sasl.mechanism {} is not supported here: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512",
        mechanism));
  }
  pr::SaslHandshakeRequest handshake;
  handshake.mechanism = mechanism;
  auto offered = call<pr::SaslHandshakeResponse>(kSaslHandshake, 1, handshake);
  if (offered.error_code != 0) {
    fail(fmt::format("{}: {}: the broker offers {}", server_,
                     pr::error_name(static_cast<pr::ErrorCode>(offered.error_code)),
                     fmt::join(offered.mechanisms, ", ")));
  }
  std::string user = get("sasl.username"), password = get("sasl.password");
  if (scram == ScramMechanism::kUnknown) {
    sasl_step(std::string() + '\0' + user + '\0' + password);
    return;
  }
  ScramClientExchange exchange(scram, user, password);
  auto server_first = sasl_step(exchange.first());
  auto client_final = exchange.final(std::string(server_first.begin(), server_first.end()));
  if (!client_final) fail(fmt::format("{}: malformed SCRAM server-first message", server_));
  auto server_final = sasl_step(*client_final);
  if (!exchange.verify(std::string(server_final.begin(), server_final.end()))) {
    fail(fmt::format(
        "{}: the broker's SCRAM signature is wrong: it does not hold this user's credential",
        server_));
  }
}

void Connection::send_all(const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = tls_ ? SSL_write(tls_->ssl, data, static_cast<int>(size))
                     : ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n <= 0)
      fail(fmt::format("{}: send failed: {}", server_,
                       tls_ ? openssl_error() : std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void Connection::receive_all(uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n =
        tls_ ? SSL_read(tls_->ssl, data, static_cast<int>(size)) : ::recv(fd_, data, size, 0);
    if (n == 0 ||
        (tls_ && n < 0 && SSL_get_error(tls_->ssl, static_cast<int>(n)) == SSL_ERROR_ZERO_RETURN)) {
      fail(fmt::format("{}: connection closed by the broker", server_));
    }
    if (n < 0)
      fail(
          fmt::format("{}: no answer: {}", server_, tls_ ? openssl_error() : std::strerror(errno)));
    data += n;
    size -= static_cast<size_t>(n);
  }
}

std::vector<uint8_t> Connection::call(int16_t api_key, int16_t api_version,
                                      const protocol::Writer& body) {
  bool flexible = protocol::is_flexible(api_key, api_version);
  int32_t correlation_id = next_correlation_id_++;
  protocol::Writer frame;
  frame.i32(0);  // size, patched below
  frame.i16(api_key);
  frame.i16(api_version);
  frame.i32(correlation_id);
  frame.nullable_string(client_id_, false);
  if (flexible) frame.uvarint(0);  // no tagged fields
  frame.raw(body.buffer().data(), body.buffer().size());
  auto& bytes = frame.buffer();
  uint32_t size = static_cast<uint32_t>(bytes.size() - 4);
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(size >> (24 - 8 * i));
  send_all(bytes.data(), bytes.size());

  uint8_t size_bytes[4];
  receive_all(size_bytes, 4);
  uint32_t response_size = (uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                           (uint32_t{size_bytes[2]} << 8) | size_bytes[3];
  std::vector<uint8_t> response(response_size);
  receive_all(response.data(), response.size());
  protocol::Reader reader(response);
  try {
    if (reader.i32() != correlation_id) fail(fmt::format("{}: response out of order", server_));
    if (flexible) reader.skip_tagged_fields();
  } catch (const protocol::DecodeError&) {
    fail(fmt::format("{}: malformed response", server_));
  }
  return {response.begin() + static_cast<std::ptrdiff_t>(reader.position()), response.end()};
}

}  // namespace oxbow::client
