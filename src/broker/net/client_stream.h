#pragma once
// The bytes of one client connection: TCP, or TLS over it on SSL and SASL_SSL listeners. A
// response goes out with its segment slices spliced in, by sendfile on TCP and through a staging
// buffer under TLS. Every read and write that moves bytes counts as activity, which is what
// connections.max.idle.ms measures (as Kafka): a peer that stalls mid-request or stops reading a
// response idles out like a silent one.
#include <chrono>
#include <memory>
#include <string>

#include "broker/asio.h"

namespace boost::asio::ssl {
class context;
}

namespace oxbow::protocol {
class Writer;
struct FileSlice;
}  // namespace oxbow::protocol

namespace oxbow::broker {

class ClientStream {
 public:
  using Clock = std::chrono::steady_clock;

  // `tls`: the listener's TLS context, or nullptr for plain TCP.
  ClientStream(asio::ip::tcp::socket socket, asio::ssl::context* tls);
  ~ClientStream();
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  asio::ip::tcp::socket& socket() { return socket_; }
  bool uses_tls() const { return tls_ != nullptr; }

  // The server side of the TLS handshake; the error as Asio reports it.
  asio::awaitable<boost::system::error_code> tls_handshake();
  // The subject of the client's certificate after the handshake; empty when it sent none.
  std::string peer_certificate_subject();

  // Throw boost::system::system_error when the peer goes away.
  asio::awaitable<void> read_exact(void* data, size_t size);
  asio::awaitable<void> write_all(const void* data, size_t size);
  asio::awaitable<void> send(const protocol::Writer& response);

  Clock::time_point last_activity() const { return last_activity_; }
  void touch() { last_activity_ = Clock::now(); }
  void close();

 private:
  struct Tls;

  asio::awaitable<void> send_file(const protocol::FileSlice& slice);
  asio::awaitable<void> send_file_through_tls(const protocol::FileSlice& slice);
  void set_cork(bool on);

  asio::ip::tcp::socket socket_;
  std::unique_ptr<Tls> tls_;
  std::unique_ptr<uint8_t[]> file_chunk_;  // TLS fetch staging, allocated on first use
  Clock::time_point last_activity_ = Clock::now();
};

}  // namespace oxbow::broker
