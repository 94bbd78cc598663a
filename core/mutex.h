// The one exclusive lock type outside the store's shards (cluster, RESP and
// HTTP servers), annotated for clang's -Wthread-safety.  A std::mutex inside:
// libstdc++'s own is not annotated, and absl::Mutex is invisible to
// ThreadSanitizer with Debian's abseil (see shared_mutex.h).

#ifndef EPHPM_CORE_MUTEX_H_
#define EPHPM_CORE_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "absl/base/thread_annotations.h"

namespace ephpm {

class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds `mu` for the scope.  Condition waits go through the lock, so that
// the analysis knows the mutex is held again when they return; write them as
// `while (!ready_) l.Wait(&cv_);`: a predicate lambda would be analysed
// without the lock.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : lock_(mu->mu_) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Releases the mutex while waiting for `cv`, holds it again on return
  // (spurious wake-ups included).
  void Wait(std::condition_variable* cv) { cv->wait(lock_); }

  // The same, returning std::cv_status::timeout once `deadline` has passed.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(std::condition_variable* cv,
                           const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv->wait_until(lock_, deadline);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace ephpm

#endif  // EPHPM_CORE_MUTEX_H_
