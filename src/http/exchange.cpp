#include <algorithm>
#include <cctype>
#include <cstring>

#include "http/connection.h"
#include "http/stream_server.h"
#include "http/websocket_session.h"

namespace oxbow::http {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string_view StreamRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (iequals(key, name)) return value;
  return {};
}

StreamExchange::StreamExchange(StreamRequest request, std::weak_ptr<Connection> connection,
                               int32_t stream_id,
                               std::function<void(std::function<void()>)> run_serially)
    : request_(std::move(request)),
      connection_(std::move(connection)),
      stream_id_(stream_id),
      serial_(std::move(run_serially)) {}

void StreamExchange::set_status(int status) {
  std::lock_guard lock(mutex_);
  if (!head_ready_) status_ = status;
}

void StreamExchange::set_header(std::string name, std::string value) {
  std::lock_guard lock(mutex_);
  if (head_ready_) return;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  headers_.emplace_back(std::move(name), std::move(value));
}

bool StreamExchange::write(std::string piece) {
  {
    std::lock_guard lock(mutex_);
    if (finished_ || client_gone()) return false;
    head_ready_ = true;
    if (!piece.empty()) {
      unsent_bytes_.fetch_add(piece.size(), std::memory_order_relaxed);
      pieces_.push_back(std::move(piece));
    }
  }
  notify_connection();
  return true;
}

void StreamExchange::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = head_ready_ = true;
  }
  notify_connection();
}

void StreamExchange::respond(int status, std::string content_type, std::string body) {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    if (!head_ready_) {
      status_ = status;
      headers_.emplace_back("content-type", std::move(content_type));
    }
    if (!client_gone() && !body.empty()) {
      unsent_bytes_.fetch_add(body.size(), std::memory_order_relaxed);
      pieces_.push_back(std::move(body));
    }
    finished_ = head_ready_ = true;
  }
  notify_connection();
}

bool StreamExchange::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

void StreamExchange::on_client_gone(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  if (client_gone())
    serial_(std::move(callback));
  else
    gone_callback_ = std::move(callback);
}

void StreamExchange::on_body(BodyCallback callback) {
  std::lock_guard lock(mutex_);
  if (client_gone()) return;
  body_callback_ = std::make_shared<BodyCallback>(std::move(callback));
  // Posted under the lock, so that pieces arriving meanwhile queue behind these.
  for (auto& [piece, last] : early_body_) post_piece(std::move(piece), last);
  early_body_.clear();
}

void StreamExchange::deliver_body(std::string piece, bool last) {
  std::lock_guard lock(mutex_);
  if (client_gone()) return;
  if (body_callback_)
    post_piece(std::move(piece), last);
  else
    early_body_.emplace_back(std::move(piece), last);
}

void StreamExchange::post_piece(std::string piece, bool last) {
  serial_([callback = body_callback_, piece = std::move(piece), last]() mutable {
    (*callback)(std::move(piece), last);
  });
  if (last) body_callback_.reset();
}

void StreamExchange::mark_sent() {
  std::lock_guard lock(mutex_);
  sent_.store(true, std::memory_order_release);
  gone_callback_ = nullptr;
}

void StreamExchange::mark_gone() {
  std::lock_guard lock(mutex_);
  if (sent() || client_gone()) return;
  gone_.store(true, std::memory_order_release);
  pieces_.clear();
  front_offset_ = 0;
  unsent_bytes_.store(0, std::memory_order_relaxed);
  if (gone_callback_) serial_(std::move(gone_callback_));
  gone_callback_ = nullptr;
  body_callback_.reset();
  early_body_.clear();
}

bool StreamExchange::take_head(int& status,
                               std::vector<std::pair<std::string, std::string>>& headers,
                               bool& complete) {
  std::lock_guard lock(mutex_);
  if (!head_ready_ || head_taken_) return false;
  head_taken_ = true;
  status = status_;
  headers = headers_;
  complete = finished_;
  return true;
}

bool StreamExchange::take_pieces(std::vector<std::string>& out, size_t max_bytes) {
  std::lock_guard lock(mutex_);
  size_t taken = 0;
  while (!pieces_.empty() && (taken == 0 || taken + pieces_.front().size() <= max_bytes)) {
    std::string piece = std::move(pieces_.front());
    pieces_.pop_front();
    if (front_offset_ > 0) piece.erase(0, front_offset_);
    front_offset_ = 0;
    taken += piece.size();
    unsent_bytes_.fetch_sub(piece.size(), std::memory_order_relaxed);
    out.push_back(std::move(piece));
  }
  return finished_ && pieces_.empty();
}

size_t StreamExchange::take_into(uint8_t* buffer, size_t length, bool& eof, bool& deferred) {
  std::lock_guard lock(mutex_);
  eof = deferred = false;
  if (pieces_.empty()) {
    eof = finished_;
    deferred = !finished_;
    return 0;
  }
  const std::string& front = pieces_.front();
  size_t n = std::min(length, front.size() - front_offset_);
  std::memcpy(buffer, front.data() + front_offset_, n);
  front_offset_ += n;
  if (front_offset_ == front.size()) {
    pieces_.pop_front();
    front_offset_ = 0;
  }
  unsent_bytes_.fetch_sub(n, std::memory_order_relaxed);
  eof = finished_ && pieces_.empty();
  return n;
}

std::shared_ptr<WebSocketSession> StreamExchange::accept_websocket() {
  {
    std::lock_guard lock(mutex_);
    if (!websocket_requested_ || websocket_ || head_ready_ || finished_ || client_gone())
      return nullptr;
    websocket_ = std::make_shared<WebSocketSession>(request_, serial_);
    finished_ = true;
  }
  notify_connection();
  return websocket();
}

std::shared_ptr<WebSocketSession> StreamExchange::websocket() const {
  std::lock_guard lock(mutex_);
  return websocket_;
}

std::vector<std::pair<std::string, std::string>> StreamExchange::response_headers() const {
  std::lock_guard lock(mutex_);
  return headers_;
}

void StreamExchange::notify_connection() {
  if (auto connection = connection_.lock()) connection->exchange_ready(shared_from_this());
}

}  // namespace oxbow::http
