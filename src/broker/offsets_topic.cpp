#include "broker/offsets_topic.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "broker/topic_registry.h"
#include "common/clock.h"
#include "protocol/batch_builder.h"
#include "protocol/record_batch.h"
#include "storage/partition_log.h"

namespace oxbow::broker {

namespace pr = oxbow::protocol;

bool OffsetsTopic::ensure_topic() {
  if (exists_) return true;
  auto result = topics_.create(kOffsetsTopic, partitions_, {{"cleanup.policy", "compact"}, {"retention.ms", "-1"}},
                               false);
  exists_ = result.error == pr::ErrorCode::kNone || result.error == pr::ErrorCode::kTopicAlreadyExists;
  return exists_;
}

bool OffsetsTopic::append(int32_t partition,
                          const std::vector<std::pair<std::string, std::optional<std::string>>>& records) {
  if (!ensure_topic()) return false;
  auto log = topics_.partition(kOffsetsTopic, partition);
  if (!log) return false;
  std::vector<pr::OutgoingRecord> batch_records;
  batch_records.reserve(records.size());
  for (const auto& [key, value] : records) batch_records.push_back({key, value, 0});
  auto batch = pr::build_batch(batch_records, now_ms());
  auto result = log->append(batch, now_ms());
  if (result.error != pr::ErrorCode::kNone) {
    spdlog::error("appending to {}-{}: {}", kOffsetsTopic, partition, pr::error_name(result.error));
    return false;
  }
  return true;
}

void OffsetsTopic::replay(const std::function<void(std::string_view, std::optional<std::string_view>)>& visit) {
  if (!topics_.find(kOffsetsTopic)) return;
  std::vector<uint8_t> bytes;
  std::vector<pr::RecordView> records;
  for (int32_t p = 0; p < partitions_; ++p) {
    auto log = topics_.partition(kOffsetsTopic, p);
    if (!log) continue;
    int64_t offset = log->log_start_offset();
    while (offset < log->high_watermark()) {
      auto read = log->read(offset, 1 << 20, true);
      if (read.error != pr::ErrorCode::kNone || read.slice.length == 0) break;
      bytes.resize(read.slice.length);
      if (::pread(read.slice.fd, bytes.data(), bytes.size(), static_cast<off_t>(read.slice.offset)) !=
          static_cast<ssize_t>(bytes.size())) {
        break;
      }
      size_t pos = 0;
      int64_t next = offset;
      while (pos + pr::kBatchHeaderSize <= bytes.size()) {
        auto header = pr::read_batch_header(bytes.data() + pos);
        if (pos + header.total_size() > bytes.size()) break;
        records.clear();
        if (!header.is_control() && pr::parse_records(bytes.data() + pos, header.total_size(), records)) {
          for (const auto& r : records) {
            if (r.key) visit(*r.key, r.value);
          }
        }
        next = header.last_offset() + 1;
        pos += header.total_size();
      }
      if (next == offset) break;
      offset = next;
    }
  }
}

}  // namespace oxbow::broker
