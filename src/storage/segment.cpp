#include "storage/segment.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/crc32c.h"
#include "protocol/record_batch.h"

namespace oxbow::storage {

namespace pr = oxbow::protocol;

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void put_be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint32_t get_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint64_t get_be64(const uint8_t* p) { return (uint64_t{get_be32(p)} << 32) | get_be32(p + 4); }

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
      next_offset_(base_offset) {}

bool Segment::open_files(bool create, std::string& error) {
  log_ = File::open(dir_ + "/" + file_name(base_offset_, ".log"), create, error);
  if (!log_.valid()) return false;
  // Indexes are derived data: create them when missing even for an existing segment.
  index_file_ = File::open(dir_ + "/" + file_name(base_offset_, ".index"), true, error);
  time_index_file_ = File::open(dir_ + "/" + file_name(base_offset_, ".timeindex"), true, error);
  return index_file_.valid() && time_index_file_.valid();
}

std::shared_ptr<Segment> Segment::create(const std::string& dir, int64_t base_offset,
                                         int32_t index_interval_bytes, std::string& error) {
  std::shared_ptr<Segment> s(new Segment(dir, base_offset, index_interval_bytes));
  if (!s->open_files(true, error)) return nullptr;
  s->log_.truncate(0);
  s->index_file_.truncate(0);
  s->time_index_file_.truncate(0);
  s->created_ms_ = now_ms();
  s->index_loaded_ = true;
  return s;
}

std::shared_ptr<Segment> Segment::open(const std::string& dir, int64_t base_offset,
                                       int32_t index_interval_bytes, std::string& error) {
  std::shared_ptr<Segment> s(new Segment(dir, base_offset, index_interval_bytes));
  if (!s->open_files(false, error)) return nullptr;
  int64_t size = s->log_.size();
  s->size_ = size < 0 ? 0 : static_cast<uint64_t>(size);
  s->created_ms_ = now_ms();
  return s;
}

void Segment::load_indexes() {
  index_.clear();
  time_index_.clear();
  int64_t bytes = index_file_.size();
  bool valid = bytes >= 0 && bytes % 8 == 0;
  if (valid && bytes > 0) {
    std::vector<uint8_t> raw(static_cast<size_t>(bytes));
    valid = index_file_.read_at(raw.data(), raw.size(), 0) == bytes;
    for (size_t i = 0; valid && i < raw.size(); i += 8) {
      OffsetIndexEntry e{static_cast<int32_t>(get_be32(&raw[i])),
                         static_cast<int32_t>(get_be32(&raw[i + 4]))};
      bool ordered = index_.empty() || (e.relative_offset > index_.back().relative_offset &&
                                        e.position > index_.back().position);
      valid = ordered && e.relative_offset >= 0 && static_cast<uint64_t>(e.position) < size_ + 1;
      index_.push_back(e);
    }
  }
  int64_t tbytes = time_index_file_.size();
  bool tvalid = tbytes >= 0 && tbytes % 12 == 0;
  if (tvalid && tbytes > 0) {
    std::vector<uint8_t> raw(static_cast<size_t>(tbytes));
    tvalid = time_index_file_.read_at(raw.data(), raw.size(), 0) == tbytes;
    for (size_t i = 0; tvalid && i < raw.size(); i += 12) {
      time_index_.push_back({static_cast<int64_t>(get_be64(&raw[i])),
                             static_cast<int32_t>(get_be32(&raw[i + 8]))});
    }
  }
  index_loaded_ = true;
  if (!valid || !tvalid) rebuild_index_files();
}

void Segment::ensure_index_loaded() {
  if (!index_loaded_) load_indexes();
}

void Segment::add_index_entries(int64_t last_offset, int64_t max_timestamp, uint64_t position) {
  auto relative = static_cast<int32_t>(last_offset - base_offset_);
  uint8_t entry[12];
  put_be32(entry, static_cast<uint32_t>(relative));
  put_be32(entry + 4, static_cast<uint32_t>(position));
  index_file_.write_at(entry, 8, index_.size() * 8);
  index_.push_back({relative, static_cast<int32_t>(position)});
  if (time_index_.empty() || max_timestamp > time_index_.back().timestamp) {
    put_be64(entry, static_cast<uint64_t>(max_timestamp));
    put_be32(entry + 8, static_cast<uint32_t>(relative));
    time_index_file_.write_at(entry, 12, time_index_.size() * 12);
    time_index_.push_back({max_timestamp, relative});
  }
}

bool Segment::append(const uint8_t* data, size_t size, int64_t last_offset, int64_t max_timestamp) {
  ensure_index_loaded();
  if (!log_.write_at(data, size, size_)) return false;
  uint64_t position = size_;
  size_ += size;
  bytes_since_index_ += size;
  // Index the first batch, then one batch every index_interval_bytes.
  if (index_.empty() || bytes_since_index_ >= static_cast<uint64_t>(index_interval_bytes_)) {
    add_index_entries(last_offset, std::max(max_timestamp, max_timestamp_), position);
    bytes_since_index_ = 0;
  }
  next_offset_ = last_offset + 1;
  max_timestamp_ = std::max(max_timestamp_, max_timestamp);
  return true;
}

uint64_t Segment::position_of(int64_t offset) {
  ensure_index_loaded();
  uint64_t pos = 0;
  auto relative = offset - base_offset_;
  // Largest indexed batch whose last offset is below the target: the target lies after it.
  auto it = std::lower_bound(index_.begin(), index_.end(), relative,
                             [](const OffsetIndexEntry& e, int64_t r) { return e.relative_offset < r; });
  if (it != index_.begin()) pos = static_cast<uint64_t>(std::prev(it)->position);
  uint8_t header[pr::kBatchHeaderSize];
  while (pos + pr::kBatchHeaderSize <= size_) {
    if (log_.read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0) break;
    if (h.last_offset() >= offset) return pos;
    pos += h.total_size();
  }
  return size_;
}

std::optional<int64_t> Segment::offset_for_timestamp(int64_t ts) {
  if (max_timestamp_ < ts) return std::nullopt;
  ensure_index_loaded();
  uint64_t pos = 0;
  // Last time-index entry strictly older than ts: everything up to its batch is older.
  auto it = std::lower_bound(time_index_.begin(), time_index_.end(), ts,
                             [](const TimeIndexEntry& e, int64_t t) { return e.timestamp < t; });
  if (it != time_index_.begin()) pos = position_of(base_offset_ + std::prev(it)->relative_offset + 1);
  std::vector<uint8_t> batch;
  while (pos + pr::kBatchHeaderSize <= size_) {
    uint8_t header[pr::kBatchHeaderSize];
    if (log_.read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0) break;
    if (h.max_timestamp >= ts && !h.is_control()) {
      batch.resize(h.total_size());
      if (log_.read_at(batch.data(), batch.size(), pos) != static_cast<int64_t>(batch.size())) break;
      return pr::first_offset_at_or_after(batch, ts);
    }
    pos += h.total_size();
  }
  return std::nullopt;
}

int64_t Segment::max_timestamp() {
  if (!index_loaded_) {
    load_indexes();
    if (!time_index_.empty()) max_timestamp_ = std::max(max_timestamp_, time_index_.back().timestamp);
  }
  return max_timestamp_;
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
    if (log_.read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.batch_length <= 0 || pos + h.total_size() > size_) break;
    last = h.last_offset();
    max_timestamp_ = std::max(max_timestamp_, h.max_timestamp);
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
  index_file_.truncate(0);
  time_index_file_.truncate(0);
  uint64_t pos = 0;
  uint64_t file_size = size_;
  size_ = 0;
  next_offset_ = base_offset_;
  max_timestamp_ = -1;
  bytes_since_index_ = 0;
  std::vector<uint8_t> batch;
  while (pos + pr::kBatchHeaderSize <= file_size) {
    uint8_t header[pr::kBatchHeaderSize];
    if (log_.read_at(header, sizeof(header), pos) != static_cast<int64_t>(sizeof(header))) break;
    auto h = pr::read_batch_header(header);
    if (h.magic != 2 || h.batch_length < static_cast<int32_t>(pr::kBatchHeaderSize - pr::kBatchLogOverhead) ||
        pos + h.total_size() > file_size || h.base_offset < next_offset_) {
      break;
    }
    batch.resize(h.total_size());
    if (log_.read_at(batch.data(), batch.size(), pos) != static_cast<int64_t>(batch.size())) break;
    if (crc32c(batch.data() + pr::kAttributesOffset, batch.size() - pr::kAttributesOffset) != h.crc) break;
    uint64_t position = size_;
    size_ += batch.size();
    bytes_since_index_ += batch.size();
    if (index_.empty() || bytes_since_index_ >= static_cast<uint64_t>(index_interval_bytes_)) {
      add_index_entries(h.last_offset(), std::max(h.max_timestamp, max_timestamp_), position);
      bytes_since_index_ = 0;
    }
    next_offset_ = h.last_offset() + 1;
    max_timestamp_ = std::max(max_timestamp_, h.max_timestamp);
    pos += batch.size();
  }
  uint64_t truncated = file_size - size_;
  if (truncated > 0) log_.truncate(size_);
  return truncated;
}

void Segment::rebuild_index_files() { recover(); }

bool Segment::flush() {
  return log_.sync_data() && index_file_.sync_data() && time_index_file_.sync_data();
}

void Segment::seal() {
  if (index_loaded_) {
    index_file_.truncate(index_.size() * 8);
    time_index_file_.truncate(time_index_.size() * 12);
  }
}

void Segment::remove_files() {
  for (const char* suffix : {".log", ".index", ".timeindex"}) {
    ::unlink((dir_ + "/" + file_name(base_offset_, suffix)).c_str());
  }
}

}  // namespace oxbow::storage
