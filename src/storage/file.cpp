#include "storage/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

namespace oxbow::storage {

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

File::~File() {
  if (fd_ >= 0) ::close(fd_);
}

File File::open(const std::string& path, bool create, std::string& error) {
  int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) error = path + ": " + std::strerror(errno);
  return File(fd);
}

bool File::write_at(const void* data, size_t size, uint64_t offset) const {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

int64_t File::read_at(void* data, size_t size, uint64_t offset) const {
  return storage::read_at(fd_, data, size, offset);
}

int64_t read_at(int fd, void* data, size_t size, uint64_t offset) {
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<int64_t>(done);
}

int64_t File::size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return -1;
  return st.st_size;
}

bool File::truncate(uint64_t size) const {
  return ::ftruncate(fd_, static_cast<off_t>(size)) == 0;
}

bool File::sync_data() const {
  return ::fdatasync(fd_) == 0;
}

void halt_on_failed_sync(const std::string& path, int error) {
  spdlog::critical(
      "fsync of {} failed: {}; stopping at once without a clean shutdown (records acknowledged "
      "since the last fsync may not be on disk; start-up will recover the log)",
      path, std::strerror(error));
  spdlog::shutdown();
  std::_Exit(1);
}

void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

bool write_file_atomically(const std::string& path, const std::string& contents, std::string& error,
                           bool durable) {
  std::string tmp = path + ".tmp";
  File file = File::open(tmp, true, error);
  if (!file.valid()) return false;
  if (!file.truncate(0) || !file.write_at(contents.data(), contents.size(), 0) ||
      (durable && !file.sync_data())) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  if (durable) sync_directory(std::filesystem::path(path).parent_path().string());
  return true;
}

bool read_whole_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace oxbow::storage
