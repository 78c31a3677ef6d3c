#include "broker/topics/producer_ids.h"

#include <spdlog/spdlog.h>

#include "common/properties.h"
#include "storage/file.h"

namespace oxbow::broker {

int64_t ProducerIdManager::next() {
  std::lock_guard lock(mutex_);
  if (next_ >= block_end_) {
    int64_t start = 0;
    std::string text;
    if (storage::read_whole_file(path_, text)) start = parse_int64(text).value_or(0);
    std::string error;
    if (!storage::write_file_atomically(path_, std::to_string(start + kBlockSize) + "\n", error)) {
      spdlog::error("cannot allocate producer ids: {}", error);
      return -1;
    }
    next_ = start;
    block_end_ = start + kBlockSize;
  }
  return next_++;
}

}  // namespace oxbow::broker
