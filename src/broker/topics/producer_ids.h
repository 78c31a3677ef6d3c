#pragma once
// Producer ids for idempotent producers, unique for the life of the log directory: handed out
// from blocks of 1,000 whose end is made durable in `<first log dir>/oxbow-producer-ids` before
// any id of the block is used, so a restart never reuses an id.
#include <cstdint>
#include <mutex>
#include <string>

namespace oxbow::broker {

class ProducerIdManager {
 public:
  explicit ProducerIdManager(std::string path) : path_(std::move(path)) {}
  // Returns -1 when the block file cannot be written.
  int64_t next();

 private:
  static constexpr int64_t kBlockSize = 1000;
  std::string path_;
  std::mutex mutex_;
  int64_t next_ = 0;
  int64_t block_end_ = 0;  // exclusive; 0 = no block yet
};

}  // namespace oxbow::broker
