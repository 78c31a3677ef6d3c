#pragma once
// Thin RAII wrappers over POSIX file calls, with errors as messages rather than exceptions.
#include <cstddef>
#include <cstdint>
#include <string>

namespace oxbow::storage {

class File {
 public:
  File() = default;
  explicit File(int fd) : fd_(fd) {}
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  File(File&& other) noexcept : fd_(other.release()) {}
  File& operator=(File&& other) noexcept;
  ~File();

  // Opens (creating when asked) for reading and writing. Returns an invalid File and sets `error`.
  static File open(const std::string& path, bool create, std::string& error);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

  // Whole-buffer positional I/O; false on error (errno kept).
  bool write_at(const void* data, size_t size, uint64_t offset) const;
  // Reads up to `size` bytes; returns bytes read or -1.
  int64_t read_at(void* data, size_t size, uint64_t offset) const;
  int64_t size() const;
  bool truncate(uint64_t size) const;
  bool sync_data() const;

 private:
  int fd_ = -1;
};

// Reads up to `size` bytes of `fd` at `offset`, retrying short reads; returns bytes read or -1.
int64_t read_at(int fd, void* data, size_t size, uint64_t offset);

// Writes `contents` to `path` so that a crash leaves either the old or the new file:
// temp file, fsync, rename, fsync of the directory.
// With `durable` false the fsyncs are skipped: the file is then all-or-nothing but may be lost.
bool write_file_atomically(const std::string& path, const std::string& contents, std::string& error,
                           bool durable = true);
bool read_whole_file(const std::string& path, std::string& out);
void sync_directory(const std::string& dir);

// A failed fdatasync of a partition's log ends the broker at once, as Kafka halts when its only log
// dir fails: the kernel may already have dropped the dirty pages it could not write, so neither a
// retry nor a clean shutdown's flush could make what was acknowledged durable. One line says which
// file and why; start-up then recovers the log as after a crash.
[[noreturn]] void halt_on_failed_sync(const std::string& path, int error);

}  // namespace oxbow::storage
