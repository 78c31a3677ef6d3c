#include "broker/net/client_stream.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>

#include <boost/asio/ssl/stream.hpp>

#include "broker/net/tls.h"
#include "protocol/wire.h"

namespace oxbow::broker {

using asio::ip::tcp;
namespace pr = oxbow::protocol;

namespace {
constexpr size_t kTlsFileChunk = 256 << 10;
}

struct ClientStream::Tls {
  Tls(tcp::socket& socket, asio::ssl::context& context) : stream(socket, context) {}
  asio::ssl::stream<tcp::socket&> stream;
};

ClientStream::ClientStream(tcp::socket socket, asio::ssl::context* tls)
    : socket_(std::move(socket)) {
  if (tls) tls_ = std::make_unique<Tls>(socket_, *tls);
}

ClientStream::~ClientStream() = default;

asio::awaitable<boost::system::error_code> ClientStream::tls_handshake() {
  boost::system::error_code ec;
  co_await tls_->stream.async_handshake(asio::ssl::stream_base::server,
                                        asio::redirect_error(asio::use_awaitable, ec));
  co_return ec;
}

std::string ClientStream::peer_certificate_subject() {
  return tls_ ? broker::peer_certificate_subject(tls_->stream.native_handle()) : std::string();
}

asio::awaitable<void> ClientStream::read_exact(void* data, size_t size) {
  auto* at = static_cast<uint8_t*>(data);
  while (size > 0) {
    size_t n =
        tls_ ? co_await tls_->stream.async_read_some(asio::buffer(at, size), asio::use_awaitable)
             : co_await socket_.async_read_some(asio::buffer(at, size), asio::use_awaitable);
    touch();
    at += n;
    size -= n;
  }
}

asio::awaitable<void> ClientStream::write_all(const void* data, size_t size) {
  const auto* at = static_cast<const uint8_t*>(data);
  while (size > 0) {
    size_t n =
        tls_ ? co_await tls_->stream.async_write_some(asio::buffer(at, size), asio::use_awaitable)
             : co_await socket_.async_write_some(asio::buffer(at, size), asio::use_awaitable);
    touch();
    at += n;
    size -= n;
  }
}

asio::awaitable<void> ClientStream::send(const pr::Writer& out) {
  const auto& bytes = out.buffer();
  if (out.splices().empty()) {
    co_await write_all(bytes.data(), bytes.size());
    co_return;
  }
  set_cork(true);
  size_t pos = 0;
  for (const auto& splice : out.splices()) {
    if (splice.at > pos) co_await write_all(bytes.data() + pos, splice.at - pos);
    pos = splice.at;
    if (tls_) {
      co_await send_file_through_tls(splice.slice);
    } else {
      co_await send_file(splice.slice);
    }
  }
  if (bytes.size() > pos) co_await write_all(bytes.data() + pos, bytes.size() - pos);
  set_cork(false);
}

// Zero-copy: the kernel moves the segment's bytes straight to the socket.
asio::awaitable<void> ClientStream::send_file(const pr::FileSlice& slice) {
  off_t offset = static_cast<off_t>(slice.offset);
  size_t left = slice.length;
  while (left > 0) {
    ssize_t n = ::sendfile(socket_.native_handle(), slice.fd, &offset, left);
    if (n > 0) {
      left -= static_cast<size_t>(n);
      touch();
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      co_await socket_.async_wait(tcp::socket::wait_write, asio::use_awaitable);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0) {
      // EPIPE or ECONNRESET when the client has gone: the connection is closed, not the broker.
      throw boost::system::system_error(errno, boost::system::system_category(), "sendfile");
    } else {
      // The segment ended before the promised length (truncated under us): the stream is unusable.
      throw std::runtime_error("sendfile stopped short");
    }
  }
}

// TLS must encrypt in user space: the segment's bytes are read in chunks and written through it.
asio::awaitable<void> ClientStream::send_file_through_tls(const pr::FileSlice& slice) {
  if (!file_chunk_) file_chunk_.reset(new uint8_t[kTlsFileChunk]);
  uint64_t offset = slice.offset;
  size_t left = slice.length;
  while (left > 0) {
    size_t want = std::min(left, kTlsFileChunk);
    ssize_t n = ::pread(slice.fd, file_chunk_.get(), want, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("segment read for a TLS fetch stopped short");
    co_await write_all(file_chunk_.get(), static_cast<size_t>(n));
    offset += static_cast<uint64_t>(n);
    left -= static_cast<size_t>(n);
  }
}

void ClientStream::set_cork(bool on) {
  int value = on ? 1 : 0;
  ::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_CORK, &value, sizeof(value));
}

void ClientStream::close() {
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

}  // namespace oxbow::broker
