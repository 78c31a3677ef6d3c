/* LD_PRELOAD shim for test_storage_faults.py: makes the disk fail on demand.

   While the file $OXBOW_FAULT_DIR/fsync-eio exists, fdatasync fails with EIO.
   While $OXBOW_FAULT_DIR/write-enospc exists, pwrite to a segment (*.log) fails with ENOSPC.
   The test creates and removes those files to switch the faults on and off. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int flag_is_set(const char* name) {
  const char* dir = getenv("OXBOW_FAULT_DIR");
  if (dir == NULL) return 0;
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

static int is_segment(int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 4) return 0;
  target[n] = '\0';
  return strcmp(target + n - 4, ".log") == 0;
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  if (flag_is_set("fsync-eio")) {
    errno = EIO;
    return -1;
  }
  return real(fd);
}

typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);

static ssize_t faulty_pwrite(const char* symbol, pwrite_fn* real, int fd, const void* buf,
                             size_t count, off_t offset) {
  if (*real == NULL) *real = (pwrite_fn)dlsym(RTLD_NEXT, symbol);
  if (flag_is_set("write-enospc") && is_segment(fd)) {
    errno = ENOSPC;
    return -1;
  }
  return (*real)(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  static pwrite_fn real;
  return faulty_pwrite("pwrite", &real, fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  static pwrite_fn real;
  return faulty_pwrite("pwrite64", &real, fd, buf, count, offset);
}
