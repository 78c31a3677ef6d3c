#include "storage/segment.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "common/crc32c.h"
#include "protocol/record_batch.h"
#include "storage/file.h"

namespace oxbow::storage {

namespace pr = oxbow::protocol;

namespace {

void put_be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint32_t get_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t get_be64(const uint8_t* p) {
  return (uint64_t{get_be32(p)} << 32) | get_be32(p + 4);
}

bool read_file(const std::string& path, std::string& out) {
  return read_whole_file(path, out);
}

}  // namespace

std::string Segment::file_name(int64_t base_offset, const char* suffix) {
  char name[40];
  std::snprintf(name, sizeof(name), "%020lld%s", static_cast<long long>(base_offset), suffix);
  return name;
}

Segment::Segment(std::string dir, int64_t base_offset, int32_t index_interval_bytes)
    : dir_(std::move(dir)),
      base_offset_(base_offset),
      index_interval_bytes_(index_interval_bytes),
      log_(dir_ + "/" + file_name(base_offset, ".log")),
      next_offset_(base_offset) {}

std::shared_ptr<Segment> Segment::create(const std::string& dir, int64_t base_offset,
                                         int32_t index_interval_bytes, std::string& error) {
  std::shared_ptr<Segment> s(new Segment(dir, base_offset, index_interval_bytes));
  auto file = s->log_.get(true, error);
  if (!file || ::ftruncate(file->fd(), 0) != 0) return nullptr;
  ::unlink(s->path(".index").c_str());
  ::unlink(s->path(".timeindex").c_str());
  s->index_loaded_ = true;
  return s;
}

std::shared_ptr<Segment> Segment::existing(const std::string& dir, int64_t base_offset,
                                           uint64_t size, int32_t index_interval_bytes) {
  std::shared_ptr<Segment> s(new Segment(dir, base_offset, index_interval_bytes));
  s->size_ = size;
  return s;
}

std::shared_ptr<OpenFile> Segment::log_file() {
  std::string error;
  return log_.get(false, error);
}

int64_t Segment::read_at(void* data, size_t size, uint64_t offset) {
  auto file = log_file();
  if (!file) return -1;
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(file->fd(), p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<int64_t>(done);
}

bool Segment::read_index_files() {
  std::string raw;
  if (!read_file(path(".index"), raw) || raw.size() % 8 != 0) return false;
  std::vector<OffsetIndexEntry> index;
  for (size_t i = 0; i < raw.size(); i += 8) {
    auto* p = reinterpret_cast<const uint8_t*>(raw.data() + i);
    OffsetIndexEntry e{static_cast<int32_t>(get_be32(p)), static_cast<int32_t>(get_be32(p + 4))};
    bool ordered = index.empty() || (e.relative_offset > index.back().relative_offset &&
                                     e.position > index.back().position);
    if (!ordered || e.relative_offset < 0 || e.position < 0 ||
        static_cast<uint64_t>(e.position) >= size_) {
      return false;
    }
    index.push_back(e);
  }
  std::string traw;
  if (!read_file(path(".timeindex"), traw) || traw.size() % 12 != 0) return false;
  std::vector<TimeIndexEntry> time_index;
  for (size_t i = 0; i < traw.size(); i += 12) {
    auto* p = reinterpret_cast<const uint8_t*>(traw.data() + i);
    time_index.push_back(
        {static_cast<int64_t>(get_be64(p)), static_cast<int32_t>(get_be32(p + 8))});
  }
  if (index.empty() && size_ > 0) return false;
  index_ = std::move(index);
  time_index_ = std::move(time_index);
  return true;
}

void Segment::ensure_index_loaded() {
  if (index_loaded_) return;
  index_loaded_ = true;
  if (!read_index_files()) {
    recover();
    return;
  }
  // A sealed segment's time index ends with its largest timestamp.
  if (!time_index_.empty() && time_index_.back().timestamp > max_timestamp_) {
    max_timestamp_ = time_index_.back().timestamp;
    max_timestamp_offset_ = base_offset_ + time_index_.back().relative_offset;
  }
}

int64_t Segment::max_timestamp() {
  ensure_index_loaded();
  return max_timestamp_;
}

void Segment::note_timestamp(int64_t batch_max_timestamp, int64_t batch_last_offset) {
  if (batch_max_timestamp > max_timestamp_) {
    max_timestamp_ = batch_max_timestamp;
    max_timestamp_offset_ = batch_last_offset;
  }
}

void Segment::add_index_entries(int64_t last_offset, int64_t max_timestamp, uint64_t position) {
  auto relative = static_cast<int32_t>(last_offset - base_offset_);
  index_.push_back({relative, static_cast<int32_t>(position)});
  if (time_index_.empty() || max_timestamp > time_index_.back().timestamp) {
    time_index_.push_back({max_timestamp, relative});
  }
}

bool Segment::append(const uint8_t* data, size_t size, int64_t last_offset, int64_t max_timestamp) {
  ensure_index_loaded();
  std::string error;
  auto file = log_.get(true, error);
  if (!file) return false;
  const uint8_t* p = data;
  size_t left = size;
  uint64_t at = size_;
  while (left > 0) {
    ssize_t n = ::pwrite(file->fd(), p, left, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::error("write to {} failed: {}; the produce is answered KAFKA_STORAGE_ERROR",
                    path(".log"), n < 0 ? std::strerror(errno) : "no progress");
      // Keep the file as long as the data we acknowledge: drop a partial write.
      ::ftruncate(file->fd(), static_cast<off_t>(size_));
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
    at += static_cast<uint64_t>(n);
  }
  uint64_t position = size_;
  size_ += size;
  bytes_since_index_ += size;
  // Index the first batch, then one batch every index_interval_bytes.
  if (index_.empty() || bytes_since_index_ >= static_cast<uint64_t>(index_interval_bytes_)) {
    add_index_entries(last_offset, std::max(max_timestamp, max_timestamp_), position);
    bytes_since_index_ = 0;
  }
  next_offset_ = last_offset + 1;
  note_timestamp(max_timestamp, last_offset);
  return true;
}

uint64_t Segment::position_of(int64_t offset) {
  ensure_index_loaded();
  uint64_t pos = 0;
  auto relative = offset - base_offset_;
  // Largest indexed batch whose last offset is below the target: the target lies after it.
  auto it =
      std::lower_bound(index_.begin(), index_.end(), relative,
                       [](const OffsetIndexEntry& e, int64_t r) { return e.relative_offset < r; });
  if (it != index_.begin()) pos = static_cast<uint64_t>(std::prev(it)->position);
  uint8_t header[pr::kBatchHeaderSize];
  while (pos + pr::kBatchHeaderSize <= size_) {
    if (read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0) break;
    if (h.last_offset() >= offset) return pos;
    pos += h.total_size();
  }
  return size_;
}

uint64_t Segment::last_boundary_before(uint64_t from, uint64_t end) {
  ensure_index_loaded();
  // Index entries are batch starts: begin at the last one in range, so only the few batches after
  // it are read.
  auto it = std::upper_bound(index_.begin(), index_.end(), end,
                             [](uint64_t e, const OffsetIndexEntry& entry) {
                               return e < static_cast<uint64_t>(entry.position);
                             });
  uint64_t pos = from;
  if (it != index_.begin() && static_cast<uint64_t>(std::prev(it)->position) > from) {
    pos = static_cast<uint64_t>(std::prev(it)->position);
  }
  uint8_t overhead[pr::kBatchLogOverhead];
  while (pos + pr::kBatchLogOverhead <= end) {
    if (read_at(overhead, sizeof(overhead), pos) != static_cast<int64_t>(sizeof(overhead))) break;
    int64_t base;
    int32_t length;
    pr::read_log_overhead(overhead, base, length);
    if (length <= 0) break;
    uint64_t next = pos + pr::kBatchLogOverhead + static_cast<uint64_t>(length);
    if (next > end) break;
    pos = next;
  }
  return pos;
}

std::optional<pr::OffsetAndTimestamp> Segment::record_in_batch_at(uint64_t position, int64_t ts) {
  uint8_t header[pr::kBatchHeaderSize];
  if (read_at(header, sizeof(header), position) != static_cast<int64_t>(sizeof(header)))
    return std::nullopt;
  auto h = pr::read_batch_header(header);
  std::vector<uint8_t> batch(h.total_size());
  if (read_at(batch.data(), batch.size(), position) != static_cast<int64_t>(batch.size()))
    return std::nullopt;
  return pr::find_record_by_timestamp(batch, ts);
}

std::optional<pr::OffsetAndTimestamp> Segment::offset_for_timestamp(int64_t ts) {
  if (max_timestamp() < ts) return std::nullopt;
  uint64_t pos = 0;
  // Last time-index entry strictly older than ts: everything up to its batch is older.
  auto it = std::lower_bound(time_index_.begin(), time_index_.end(), ts,
                             [](const TimeIndexEntry& e, int64_t t) { return e.timestamp < t; });
  if (it != time_index_.begin())
    pos = position_of(base_offset_ + std::prev(it)->relative_offset + 1);
  while (pos + pr::kBatchHeaderSize <= size_) {
    uint8_t header[pr::kBatchHeaderSize];
    if (read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0) break;
    if (h.max_timestamp >= ts && !h.is_control()) return record_in_batch_at(pos, ts);
    pos += h.total_size();
  }
  return std::nullopt;
}

std::optional<pr::OffsetAndTimestamp> Segment::largest_timestamp_record() {
  int64_t largest = max_timestamp();
  if (largest < 0) return std::nullopt;
  return offset_for_timestamp(largest);
}

void Segment::load_tail() {
  ensure_index_loaded();
  uint64_t pos = index_.empty() ? 0 : static_cast<uint64_t>(index_.back().position);
  int64_t last = base_offset_ - 1;
  if (!index_.empty()) last = base_offset_ + index_.back().relative_offset;
  max_timestamp_ = time_index_.empty() ? -1 : time_index_.back().timestamp;
  uint8_t header[pr::kBatchHeaderSize];
  uint64_t since_index = 0;
  while (pos + pr::kBatchHeaderSize <= size_) {
    if (read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0 || pos + h.total_size() > size_) break;
    last = h.last_offset();
    note_timestamp(h.max_timestamp, h.last_offset());
    pos += h.total_size();
    since_index += h.total_size();
  }
  next_offset_ = last + 1;
  bytes_since_index_ = since_index;
}

uint64_t Segment::recover() {
  index_.clear();
  time_index_.clear();
  index_loaded_ = true;
  ::unlink(path(".index").c_str());
  ::unlink(path(".timeindex").c_str());
  uint64_t pos = 0;
  uint64_t file_size = size_;
  size_ = 0;
  next_offset_ = base_offset_;
  max_timestamp_ = -1;
  max_timestamp_offset_ = -1;
  bytes_since_index_ = 0;
  std::vector<uint8_t> batch;
  while (pos + pr::kBatchHeaderSize <= file_size) {
    uint8_t header[pr::kBatchHeaderSize];
    if (read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.magic != 2 ||
        h.batch_length < static_cast<int32_t>(pr::kBatchHeaderSize - pr::kBatchLogOverhead) ||
        pos + h.total_size() > file_size || h.base_offset < next_offset_) {
      break;
    }
    batch.resize(h.total_size());
    if (read_at(batch.data(), batch.size(), pos) != static_cast<int64_t>(batch.size())) break;
    if (crc32c(batch.data() + pr::kAttributesOffset, batch.size() - pr::kAttributesOffset) != h.crc)
      break;
    uint64_t position = size_;
    size_ += batch.size();
    bytes_since_index_ += batch.size();
    if (index_.empty() || bytes_since_index_ >= static_cast<uint64_t>(index_interval_bytes_)) {
      add_index_entries(h.last_offset(), std::max(h.max_timestamp, max_timestamp_), position);
      bytes_since_index_ = 0;
    }
    next_offset_ = h.last_offset() + 1;
    note_timestamp(h.max_timestamp, h.last_offset());
    pos += batch.size();
  }
  uint64_t truncated = file_size - size_;
  if (truncated > 0) {
    spdlog::warn("recovery truncated a torn or corrupt tail of {} bytes from {} (offsets from {})",
                 truncated, path(".log"), next_offset_);
    if (auto file = log_file()) ::ftruncate(file->fd(), static_cast<off_t>(size_));
  }
  return truncated;
}

void Segment::for_each_batch(
    const std::function<void(const uint8_t* batch, size_t available)>& visit) {
  uint8_t head[pr::kBatchHeaderSize + 32];
  uint64_t pos = 0;
  while (pos + pr::kBatchHeaderSize <= size_) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(head), size_ - pos));
    if (read_at(head, want, pos) != static_cast<int64_t>(want)) break;
    auto h = pr::read_batch_header(head);
    if (h.batch_length <= 0 || pos + h.total_size() > size_) break;
    visit(head, std::min(want, h.total_size()));
    pos += h.total_size();
  }
}

void Segment::read_batches(const std::function<bool(std::span<const uint8_t> batch)>& visit) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<uint8_t> buffer;
  uint64_t pos = 0;
  while (pos + pr::kBatchHeaderSize <= size_) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - pos));
    buffer.resize(want);
    if (read_at(buffer.data(), want, pos) != static_cast<int64_t>(want)) return;
    size_t at = 0;
    while (at + pr::kBatchHeaderSize <= want) {
      auto h = pr::read_batch_header(buffer.data() + at);
      if (h.batch_length <= 0) return;
      if (at + h.total_size() > want) {
        // A batch larger than the chunk: read it alone.
        if (at == 0) {
          if (pos + h.total_size() > size_) return;
          buffer.resize(h.total_size());
          if (read_at(buffer.data(), buffer.size(), pos) != static_cast<int64_t>(buffer.size()))
            return;
          if (!visit(std::span(buffer.data(), buffer.size()))) return;
          at = h.total_size();
        }
        break;
      }
      if (!visit(std::span(buffer.data() + at, h.total_size()))) return;
      at += h.total_size();
    }
    if (at == 0) return;
    pos += at;
  }
}

bool Segment::flush() {
  auto file = log_file();
  if (!file) return false;
  if (::fdatasync(file->fd()) != 0) halt_on_failed_sync(path(".log"), errno);
  return true;
}

void Segment::seal() {
  if (!index_loaded_) return;
  // As Kafka does at a roll: the time index ends with the segment's largest timestamp, so that a
  // sealed segment's maximum is known from its index alone.
  if (max_timestamp_offset_ >= 0 &&
      (time_index_.empty() || time_index_.back().timestamp < max_timestamp_)) {
    time_index_.push_back(
        {max_timestamp_, static_cast<int32_t>(max_timestamp_offset_ - base_offset_)});
  }
  std::vector<uint8_t> raw(index_.size() * 8);
  for (size_t i = 0; i < index_.size(); ++i) {
    put_be32(&raw[i * 8], static_cast<uint32_t>(index_[i].relative_offset));
    put_be32(&raw[i * 8 + 4], static_cast<uint32_t>(index_[i].position));
  }
  std::vector<uint8_t> traw(time_index_.size() * 12);
  for (size_t i = 0; i < time_index_.size(); ++i) {
    put_be64(&traw[i * 12], static_cast<uint64_t>(time_index_[i].timestamp));
    put_be32(&traw[i * 12 + 8], static_cast<uint32_t>(time_index_[i].relative_offset));
  }
  std::string error;
  for (auto [suffix, bytes] : {std::pair{".index", &raw}, std::pair{".timeindex", &traw}}) {
    File file = File::open(path(suffix), true, error);
    if (!file.valid()) continue;
    file.truncate(0);
    file.write_at(bytes->data(), bytes->size(), 0);
  }
}

void Segment::remove_files() {
  log_.release();
  for (const char* suffix : {".log", ".index", ".timeindex"}) ::unlink(path(suffix).c_str());
}

}  // namespace oxbow::storage
