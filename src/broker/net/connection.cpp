// One client connection: reads requests in order, handles up to kMaxInFlight of them at once,
// writes the responses back in request order; the SASL state, quotas' throttling and the idle
// timeout live here, the bytes' way over TCP or TLS in ClientStream.
#include "broker/net/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ssl/error.hpp>
#include <deque>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/net/client_stream.h"
#include "broker/net/tls.h"
#include "broker/probe.h"
#include "broker/quotas/client_quotas.h"
#include "broker/quotas/connection_limits.h"
#include "broker/sasl/authenticator.h"
#include "common/clock.h"
#include "protocol/headers.h"

namespace oxbow::broker {

using asio::ip::tcp;
namespace pr = oxbow::protocol;

namespace {

constexpr size_t kMaxInFlight = 32;
constexpr size_t kSpareBuffers = 8;
constexpr size_t kMaxSpareBytes = 16 << 20;
constexpr auto kIdleCheckFloor = std::chrono::milliseconds(10);

// The client's address as Java's InetAddress prints it for IPv4, so that host ACLs written for
// 10.0.0.5 match a client that reached an IPv6 wildcard listener as ::ffff:10.0.0.5.
std::string client_address(const asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6()).to_string();
  }
  return address.to_string();
}
constexpr int16_t kApiVersionsKey = 18;
constexpr int16_t kProduceKey = 0;
constexpr int16_t kFetchKey = 1;
constexpr int16_t kSaslHandshakeKey = 17;
constexpr int16_t kSaslAuthenticateKey = 36;

// A request's bytes. Unlike a vector, growing it does not zero the memory, and connections reuse
// their buffers, so a large produce costs neither a memset nor fresh pages.
class RequestBuffer {
 public:
  void resize(size_t size) {
    if (size > capacity_) {
      data_.reset(new uint8_t[size]);
      capacity_ = size;
    }
    size_ = size;
  }
  std::span<uint8_t> span() { return {data_.get(), size_}; }
  size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

using Clock = std::chrono::steady_clock;

struct Slot {
  RequestBuffer request;
  Clock::time_point received;
  Clock::time_point started;
  Clock::time_point handled;
  Clock::duration parked{};  // of the handling time, waited by design (RequestContext::parked)
  pr::RequestHeader header;
  size_t body_offset = 0;
  pr::Writer response;
  bool done = false;
  bool respond = true;
  bool close_after = false;       // close without answering
  bool close_after_send = false;  // answer, then close
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Broker& broker, tcp::socket socket, const Endpoint& listener, const TlsListener* tls,
             std::chrono::milliseconds max_idle)
      : broker_(broker),
        stream_(std::move(socket), tls ? tls->context.get() : nullptr),
        max_idle_(max_idle),
        idle_timer_(executor()),
        listener_(listener.name),
        slot_ready_(executor()),
        slot_freed_(executor()),
        authenticated_(executor()),
        mute_timer_(executor()) {
    security_.listener = listener.name;
    security_.security_protocol = listener.security_protocol;
    boost::system::error_code ec;
    auto& client = stream_.socket();
    auto endpoint = client.remote_endpoint(ec);
    host_ = ec ? "unknown" : client_address(endpoint.address());
    peer_ = ec ? "unknown" : host_ + ":" + std::to_string(endpoint.port());
    client.set_option(tcp::no_delay(true), ec);
    client.native_non_blocking(true, ec);
    if (tls) principals_ = tls->principals;
    probe().connections++;
    probe().connections_accepted.add();
  }

  ~Connection() {
    probe().connections--;
    release_place();
  }

  void start() {
    if (throttle_new_connection()) return;
    int64_t limit = 0;
    if (!broker_.connection_limits().admit(listener_, host_, limit)) {
      probe().connections_rejected.add();
      spdlog::info(
          "Rejected connection from {} on listener {}, address already has the configured maximum "
          "of {} connections (max.connections.per.ip)",
          host_, listener_, limit);
      close();
      return;
    }
    admitted_ = true;
    auto self = shared_from_this();
    asio::co_spawn(
        executor(), [self]() { return self->run(); }, asio::detached);
    if (max_idle_.count() > 0) {
      asio::co_spawn(
          executor(), [self]() { return self->close_when_idle(); }, asio::detached);
    }
  }

 private:
  asio::awaitable<void> run() {
    if (stream_.uses_tls() && !co_await tls_handshake()) {
      close();
      co_return;
    }
    auto self = shared_from_this();
    asio::co_spawn(
        executor(), [self]() { return self->write_loop(); }, asio::detached);
    co_await read_loop();
  }

  // connections.max.idle.ms: a connection with nothing in flight and no request for that long is
  // closed, as Kafka does; a client stuck in (or never starting) its TLS handshake counts as idle.
  asio::awaitable<void> close_when_idle() {
    auto self = shared_from_this();
    while (!closed_) {
      // While a request is being handled (a long poll, a join waiting for its group), look again a
      // full period later. Answers waiting to be sent do not count: a client that stops reading
      // them is idle once no byte has moved for the period.
      auto now = Clock::now();
      idle_timer_.expires_at(handling_request() ? now + max_idle_
                                                : std::max(stream_.last_activity() + max_idle_,
                                                           now + kIdleCheckFloor));
      boost::system::error_code ec;
      co_await idle_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (closed_) break;
      if (!handling_request() && Clock::now() - stream_.last_activity() >= max_idle_) {
        spdlog::debug(
            "closing connection from {} on listener {}: idle for {} ms (connections.max.idle.ms)",
            peer_, listener_, max_idle_.count());
        close();
      }
    }
  }

  bool handling_request() const {
    return std::any_of(slots_.begin(), slots_.end(), [](const auto& slot) { return !slot->done; });
  }

  // The TLS handshake, and the principal of a client certificate. Failures are audit lines.
  asio::awaitable<bool> tls_handshake() {
    auto ec = co_await stream_.tls_handshake();
    if (ec) {
      // A client hanging up mid-handshake (librdkafka drops spare connections), or closed for
      // idling in it, is no failed login.
      if (ec != asio::error::eof && ec != asio::ssl::error::stream_truncated &&
          ec != asio::error::operation_aborted && !closed_) {
        probe().tls_handshake_failures.add();
        spdlog::warn("authentication failed: TLS handshake with {} on listener {}: {}", peer_,
                     listener_, ec.message());
      }
      co_return false;
    }
    // On SASL_SSL the principal is the SASL user's, as in Kafka.
    if (security_.needs_sasl()) co_return true;
    auto subject = stream_.peer_certificate_subject();
    if (subject.empty()) co_return true;
    auto name = principals_->map(subject);
    if (!name) {
      probe().tls_handshake_failures.add();
      spdlog::warn(
          "authentication failed: client certificate '{}' from {} on listener {} matches no "
          "ssl.principal.mapping.rules",
          subject, peer_, listener_);
      co_return false;
    }
    security_.principal = "User:" + *name;
    co_return true;
  }

  asio::awaitable<void> read_loop() {
    auto self = shared_from_this();
    try {
      while (!closed_) {
        uint8_t size_bytes[4];
        co_await stream_.read_exact(size_bytes, sizeof(size_bytes));
        int64_t size =
            static_cast<int32_t>((uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                                 (uint32_t{size_bytes[2]} << 8) | size_bytes[3]);
        if (!stream_.uses_tls() && size_bytes[0] >= 0x14 && size_bytes[0] <= 0x17 &&
            size_bytes[1] == 0x03) {
          spdlog::warn("closing connection from {}: a TLS handshake on {} listener {}", peer_,
                       security_.security_protocol, listener_);
          break;
        }
        if (security_.raw_sasl_tokens) {
          if (!co_await take_bare_sasl_token(size)) break;
          continue;
        }
        if (size < 8 || size > max_request_size()) {
          spdlog::warn("closing connection from {}: request size {} is outside 8..{} ({})", peer_,
                       size, max_request_size(),
                       before_authentication() ? "sasl.server.max.receive.size"
                                               : "socket.request.max.bytes");
          break;
        }
        auto slot = std::make_shared<Slot>();
        if (!spare_buffers_.empty()) {
          slot->request = std::move(spare_buffers_.back());
          spare_buffers_.pop_back();
        }
        slot->request.resize(static_cast<size_t>(size));
        auto bytes = slot->request.span();
        co_await stream_.read_exact(bytes.data(), bytes.size());
        while (Clock::now() < muted_until_ && !closed_) co_await wait_until(muted_until_);
        // A throttled client's wait is not idleness.
        stream_.touch();
        slot->received = stream_.last_activity();
        if (!admit(*slot)) break;
        slots_.push_back(slot);
        asio::co_spawn(executor(), process(slot), asio::detached);
        // Authentication changes what the next request may be: finish it before reading on.
        if (is_sasl_request(slot->header.api_key)) {
          while (!slot->done && !closed_) co_await sleep_on(authenticated_);
        }
        while (slots_.size() >= kMaxInFlight && !closed_) co_await sleep_on(slot_freed_);
      }
    } catch (const boost::system::system_error& e) {
      if (e.code() != asio::error::eof && e.code() != asio::error::operation_aborted) {
        spdlog::debug("connection from {}: {}", peer_, e.what());
      }
    }
    close();
  }

  bool before_authentication() const { return security_.needs_sasl() && !security_.authenticated; }

  // As Kafka, a client that has not authenticated may only send small requests.
  int64_t max_request_size() const {
    const auto& config = broker_.config();
    return before_authentication() ? config.sasl_server_max_receive_size
                                   : config.socket_request_max_bytes;
  }

  // A SASL token sent bare after SaslHandshake v0. The answer goes back the same way, after the
  // responses before it; a failed exchange closes the connection, which is all such a client
  // can be told.
  asio::awaitable<bool> take_bare_sasl_token(int64_t size) {
    if (size < 0 || size > broker_.config().sasl_server_max_receive_size) {
      spdlog::warn(
          "closing connection from {}: SASL token size {} is outside 0..{} "
          "(sasl.server.max.receive.size)",
          peer_, size, broker_.config().sasl_server_max_receive_size);
      co_return false;
    }
    auto slot = std::make_shared<Slot>();
    slot->request.resize(static_cast<size_t>(size));
    auto token = slot->request.span();
    if (size > 0) co_await stream_.read_exact(token.data(), token.size());
    slot->received = slot->started = Clock::now();
    slot->header.api_key = kSaslAuthenticateKey;
    RequestContext ctx{broker_, slot->header, listener_, host_};
    ctx.security = &security_;
    auto step = authenticate_sasl_token(ctx, token);
    if (step.error_code != 0) co_return false;
    slot->handled = Clock::now();
    slot->response.reserve_i32();
    slot->response.raw(step.server_token.data(), step.server_token.size());
    slot->done = true;
    slots_.push_back(slot);
    slot_ready_.cancel();
    co_return true;
  }

  // Parses the header and decides whether the request can be handled at all.
  bool admit(Slot& slot) {
    pr::Reader reader(slot.request.span());
    try {
      slot.header = pr::decode_request_header(reader);
      slot.body_offset = reader.position();
    } catch (const pr::DecodeError& e) {
      spdlog::warn("closing connection from {}: malformed request header: {}", peer_, e.what());
      return false;
    }
    int16_t key = slot.header.api_key;
    if (!is_implemented(key)) {
      spdlog::warn("closing connection from {}: unsupported API key {} (version {})", peer_, key,
                   slot.header.api_version);
      return false;
    }
    if (!pr::version_supported(key, slot.header.api_version) && key != kApiVersionsKey) {
      spdlog::warn("closing connection from {}: unsupported version {} of API key {}", peer_,
                   slot.header.api_version, key);
      return false;
    }
    if (!security_.admits(key, Clock::now())) {
      spdlog::warn(
          "closing connection from {} on listener {}: API key {} {}", peer_, listener_, key,
          security_.authenticated ? "after the SASL session expired (connections.max.reauth.ms)"
                                  : "before SASL authentication");
      return false;
    }
    return true;
  }

  static bool is_sasl_request(int16_t key) {
    return key == kSaslHandshakeKey || key == kSaslAuthenticateKey;
  }

  asio::awaitable<void> process(std::shared_ptr<Slot> slot) {
    auto self = shared_from_this();
    pr::Reader reader(slot->request.span().subspan(slot->body_offset));
    slot->started = Clock::now();
    auto& out = slot->response;
    out.reserve_i32();
    pr::encode_response_header(out, slot->header);
    size_t body_start = out.buffer().size();
    RequestContext ctx{broker_, slot->header, listener_, host_};
    ctx.security = &security_;
    ctx.request_bytes = slot->request.span().size();
    try {
      if (slot->header.api_key == kApiVersionsKey &&
          !pr::version_supported(kApiVersionsKey, slot->header.api_version)) {
        write_api_versions_fallback(out);
      } else {
        co_await dispatch(ctx, reader, out);
      }
      slot->respond = ctx.respond;
      if (security_.close_after_response) slot->close_after_send = true;
      if (slot->header.api_key == kProduceKey && broker_.inject_produce_fault()) {
        spdlog::info("fault injection: dropping connection from {} after a produce", peer_);
        slot->close_after = true;
      }
    } catch (const pr::DecodeError& e) {
      spdlog::warn("closing connection from {}: malformed {} v{} request: {}", peer_,
                   slot->header.api_key, slot->header.api_version, e.what());
      slot->close_after = true;
    } catch (const std::exception& e) {
      spdlog::error("closing connection from {}: API key {} failed: {}", peer_,
                    slot->header.api_key, e.what());
      slot->close_after = true;
    }
    slot->handled = Clock::now();
    slot->parked = ctx.parked;
    if (!slot->close_after && quotas_active(ctx)) apply_request_quota(*slot, ctx, body_start);
    if (ctx.throttle_ms > 0) throttle(*slot, ctx.throttle_ms);
    if (auto* api = probe().api(slot->header.api_key)) {
      api->requests.add();
      api->queue_seconds.observe(seconds(slot->received, slot->started));
      api->local_seconds.observe(seconds(slot->started, slot->handled));
      if (slot->close_after) api->errors.add();
      if (slot->header.api_key == kProduceKey)
        probe().produce_request_bytes.observe(slot->request.span().size());
    }
    slot->done = true;
    slot_ready_.cancel();
    authenticated_.cancel();
  }

  // connection_creation_rate (KIP-612): a connection over its address's rate is neither served
  // nor counted, and is closed once the throttle time is up, as Kafka's acceptor does.
  bool throttle_new_connection() {
    auto& quotas = broker_.client_quotas();
    if (!quotas.active()) return false;
    int64_t now = steady_now_ms();
    int64_t delay = quotas.record(QuotaType::kConnection, "", host_, 1, now);
    if (delay <= 0) return false;
    quotas.unrecord(QuotaType::kConnection, "", host_, 1, now);
    probe().connections_throttled.add();
    spdlog::debug("delaying closing of connection from {} for {} ms (connection_creation_rate)",
                  peer_, delay);
    auto self = shared_from_this();
    asio::co_spawn(
        executor(),
        [self, delay]() -> asio::awaitable<void> {
          co_await self->wait_until(Clock::now() + std::chrono::milliseconds(delay));
          self->close();
        },
        asio::detached);
    return true;
  }

  // request_percentage: the handler's own time, without what it waited for by design or on other
  // work. SASL and ApiVersions are exempt (Kafka serves them before the request handlers), and so
  // is produce with acks=0, as in Kafka. A longer throttle than the byte rates' goes into the
  // response's throttle_time_ms.
  void apply_request_quota(Slot& slot, RequestContext& ctx, size_t body_start) {
    int16_t key = slot.header.api_key;
    if (is_sasl_request(key) || key == kApiVersionsKey || !ctx.respond) return;
    auto busy = slot.handled - slot.started - ctx.parked - ctx.waited;
    int32_t throttle =
        record_request_time(ctx, std::chrono::duration_cast<std::chrono::nanoseconds>(busy));
    if (throttle <= ctx.throttle_ms) return;
    ctx.throttle_ms = throttle;
    if (auto at = pr::throttle_time_position(key, slot.header.api_version, body_start,
                                             slot.response.buffer().size()))
      slot.response.patch_i32(*at, throttle);
  }

  // A client over its quota gets its answer at once, and its next requests wait out the throttle
  // time: Kafka mutes the channel, whatever the request's version.
  void throttle(Slot& slot, int32_t throttle_ms) {
    muted_until_ = std::max(muted_until_, slot.handled + std::chrono::milliseconds(throttle_ms));
    if (auto* api = probe().api(slot.header.api_key)) {
      api->throttled.add();
      api->throttle_ms.add(static_cast<uint64_t>(throttle_ms));
    }
  }

  asio::awaitable<void> wait_until(Clock::time_point until) {
    mute_timer_.expires_at(until);
    boost::system::error_code ec;
    co_await mute_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  static double seconds(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
  }

  void note_sent(const Slot& slot) {
    auto now = Clock::now();
    if (auto* api = probe().api(slot.header.api_key))
      api->send_seconds.observe(seconds(slot.handled, now));
    if (slot.header.api_key == kFetchKey)
      probe().fetch_response_bytes.observe(slot.response.total_size());
    // A long poll that waited its max_wait_ms out, or a join waiting for the group, is not slow.
    double parked_ms = std::chrono::duration<double, std::milli>(slot.parked).count();
    double total_ms = seconds(slot.received, now) * 1000 - parked_ms;
    if (total_ms >= broker_.slow_request_ms()) {
      spdlog::warn(
          "slow request: API key {} v{} from {} (client {}) took {:.1f} ms besides {:.1f} ms "
          "parked: queue {:.1f}, local {:.1f}, send {:.1f}",
          slot.header.api_key, slot.header.api_version, peer_, slot.header.client_id.value_or(""),
          total_ms, parked_ms, seconds(slot.received, slot.started) * 1000,
          seconds(slot.started, slot.handled) * 1000 - parked_ms,
          seconds(slot.handled, now) * 1000);
    }
  }

  asio::awaitable<void> write_loop() {
    auto self = shared_from_this();
    try {
      while (!closed_) {
        if (slots_.empty() || !slots_.front()->done) {
          co_await sleep_on(slot_ready_);
          continue;
        }
        auto slot = std::move(slots_.front());
        slots_.pop_front();
        slot_freed_.cancel();
        // The request's bytes are no longer referenced once its handler is done.
        if (spare_buffers_.size() < kSpareBuffers && slot->request.capacity() <= kMaxSpareBytes) {
          spare_buffers_.push_back(std::move(slot->request));
        }
        if (slot->close_after) break;
        if (!slot->respond) continue;
        auto& out = slot->response;
        out.patch_i32(0, static_cast<int32_t>(out.total_size() - 4));
        co_await stream_.send(out);
        note_sent(*slot);
        if (slot->close_after_send) break;
      }
    } catch (const std::exception& e) {
      spdlog::debug("connection from {}: write failed: {}", peer_, e.what());
    }
    close();
  }

  asio::awaitable<void> sleep_on(asio::steady_timer& timer) {
    timer.expires_at(asio::steady_timer::time_point::max());
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }

  void release_place() {
    if (admitted_) broker_.connection_limits().release(listener_, host_);
    admitted_ = false;
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    release_place();
    stream_.close();
    slot_ready_.cancel();
    slot_freed_.cancel();
    authenticated_.cancel();
    idle_timer_.cancel();
    mute_timer_.cancel();
  }

  tcp::socket::executor_type executor() { return stream_.socket().get_executor(); }

  Broker& broker_;
  ClientStream stream_;
  std::chrono::milliseconds max_idle_;
  asio::steady_timer idle_timer_;
  std::shared_ptr<const PrincipalMapper> principals_;  // set on SSL and SASL_SSL listeners
  std::string listener_;
  std::string host_;
  std::string peer_;
  asio::steady_timer slot_ready_;
  asio::steady_timer slot_freed_;
  asio::steady_timer authenticated_;  // wakes the read loop when a SASL request is done
  asio::steady_timer mute_timer_;     // the read loop's wait while throttled
  Clock::time_point muted_until_{};
  SecurityState security_;
  std::deque<std::shared_ptr<Slot>> slots_;
  std::vector<RequestBuffer> spare_buffers_;
  bool closed_ = false;
  bool admitted_ = false;  // counted in the broker's connection limits
};

}  // namespace

void start_connection(Broker& broker, tcp::socket socket, const Endpoint& listener,
                      const TlsListener* tls, std::chrono::milliseconds max_idle) {
  std::make_shared<Connection>(broker, std::move(socket), listener, tls, max_idle)->start();
}

}  // namespace oxbow::broker
