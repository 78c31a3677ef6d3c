// What one gigabyte of appends costs the CPU: 1 MB pwrite()s of a hot buffer into a new file,
// through the page cache or with O_DIRECT. The broker's produce path pays the first; librdkafka's
// mock cluster pays neither. Usage: write_cost FILE MEGABYTES [direct]
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: write_cost FILE MEGABYTES [direct]\n");
    return 2;
  }
  constexpr size_t kChunk = 1 << 20;
  const long megabytes = std::atol(argv[2]);
  const bool direct = argc > 3 && std::strcmp(argv[3], "direct") == 0;
  void* buffer = std::aligned_alloc(4096, kChunk);  // O_DIRECT needs block-aligned memory
  std::memset(buffer, 7, kChunk);
  const int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  const double cpu0 = cpu_seconds(), wall0 = wall_seconds();
  for (long i = 0; i < megabytes; ++i) {
    if (pwrite(fd, buffer, kChunk, static_cast<off_t>(i) * kChunk) !=
        static_cast<ssize_t>(kChunk)) {
      std::perror("pwrite");
      return 1;
    }
  }
  const double gigabytes = megabytes / 1024.0;
  std::printf("%-9s %.3f s of CPU per GB, %.2f GB/s\n", direct ? "O_DIRECT" : "buffered",
              (cpu_seconds() - cpu0) / gigabytes, gigabytes / (wall_seconds() - wall0));
  close(fd);
  return 0;
}
