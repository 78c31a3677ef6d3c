#include "storage/file_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oxbow::storage {

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

CachedFile::~CachedFile() {
  release();
}

std::shared_ptr<OpenFile> CachedFile::get(bool create, std::string& error) {
  return FileCache::instance().get(*this, create, error);
}

void CachedFile::release() {
  FileCache::instance().forget(*this);
}

FileCache& FileCache::instance() {
  static FileCache cache;
  return cache;
}

std::shared_ptr<OpenFile> FileCache::get(CachedFile& slot, bool create, std::string& error) {
  std::lock_guard lock(mutex_);
  if (slot.cached_) {
    lru_.splice(lru_.begin(), lru_, slot.lru_position_);
    return slot.file_;
  }
  int fd = ::open(slot.path_.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
  if (fd < 0) {
    error = slot.path_ + ": " + std::strerror(errno);
    return nullptr;
  }
  slot.file_ = std::make_shared<OpenFile>(fd);
  lru_.push_front(&slot);
  slot.lru_position_ = lru_.begin();
  slot.cached_ = true;
  auto file = slot.file_;
  while (lru_.size() > budget_) {
    CachedFile* victim = lru_.back();
    lru_.pop_back();
    victim->cached_ = false;
    victim->file_.reset();
  }
  return file;
}

void FileCache::forget(CachedFile& slot) {
  std::lock_guard lock(mutex_);
  if (!slot.cached_) return;
  lru_.erase(slot.lru_position_);
  slot.cached_ = false;
  slot.file_.reset();
}

}  // namespace oxbow::storage
