#pragma once
// A reader-writer lock that lets a waiting writer in before new readers: std::shared_mutex (over
// glibc's default rwlock) prefers readers, so a steady stream of queries could hold a Streams
// thread off the task it has to update for as long as the queries keep coming. Usable with
// std::unique_lock, std::lock_guard and std::shared_lock. Not recursive: a thread that holds it
// shared must not take it shared again while a writer may be waiting.
#include <pthread.h>

namespace oxbow {

class WriterPreferringSharedMutex {
 public:
  WriterPreferringSharedMutex() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WriterPreferringSharedMutex() { pthread_rwlock_destroy(&lock_); }
  WriterPreferringSharedMutex(const WriterPreferringSharedMutex&) = delete;
  WriterPreferringSharedMutex& operator=(const WriterPreferringSharedMutex&) = delete;

  void lock() { pthread_rwlock_wrlock(&lock_); }
  bool try_lock() { return pthread_rwlock_trywrlock(&lock_) == 0; }
  void unlock() { pthread_rwlock_unlock(&lock_); }
  void lock_shared() { pthread_rwlock_rdlock(&lock_); }
  bool try_lock_shared() { return pthread_rwlock_tryrdlock(&lock_) == 0; }
  void unlock_shared() { pthread_rwlock_unlock(&lock_); }

 private:
  pthread_rwlock_t lock_;
};

}  // namespace oxbow
