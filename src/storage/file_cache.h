#pragma once
// Open segment files on a budget. Each segment's .log is opened on first use and closed again
// when the number of open files passes the budget (least recently used first), so that ten
// thousand idle partitions hold no descriptors. A descriptor in use by a send (a FileSlice holds
// the shared OpenFile) stays open until that send is done, even when evicted.
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>

namespace oxbow::storage {

class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

class FileCache;

// A slot for one file's descriptor, owned by the segment the file belongs to.
class CachedFile {
 public:
  explicit CachedFile(std::string path) : path_(std::move(path)) {}
  ~CachedFile();
  CachedFile(const CachedFile&) = delete;
  CachedFile& operator=(const CachedFile&) = delete;

  // The open file, opening (O_CREAT when `create`) if needed; nullptr with `error` set on failure.
  std::shared_ptr<OpenFile> get(bool create, std::string& error);
  // Drops the descriptor now (before the file is removed or truncated by path).
  void release();
  const std::string& path() const { return path_; }

 private:
  friend class FileCache;
  std::string path_;
  std::shared_ptr<OpenFile> file_;
  std::list<CachedFile*>::iterator lru_position_;
  bool cached_ = false;
};

class FileCache {
 public:
  static FileCache& instance();
  void set_budget(size_t max_open) {
    std::lock_guard lock(mutex_);
    budget_ = max_open;
  }
  size_t open_count() {
    std::lock_guard lock(mutex_);
    return lru_.size();
  }

 private:
  friend class CachedFile;
  std::shared_ptr<OpenFile> get(CachedFile& slot, bool create, std::string& error);
  void forget(CachedFile& slot);

  std::mutex mutex_;
  std::list<CachedFile*> lru_;  // most recently used first
  size_t budget_ = 4096;
};

}  // namespace oxbow::storage
