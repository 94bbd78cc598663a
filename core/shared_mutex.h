// The one reader/writer lock type of the store, annotated for clang's
// -Wthread-safety.  Backed by absl::Mutex, except in the ThreadSanitizer build
// (EPHPM_TSAN): Debian's abseil is not built with TSan, so TSan cannot see
// absl::Mutex's synchronisation, while std::shared_mutex goes through
// pthread_rwlock, which TSan intercepts.

#ifndef EPHPM_CORE_SHARED_MUTEX_H_
#define EPHPM_CORE_SHARED_MUTEX_H_

#include "absl/base/thread_annotations.h"

#if defined(EPHPM_TSAN)
#include <shared_mutex>
#else
#include "absl/synchronization/mutex.h"
#endif

namespace ephpm {

class ABSL_LOCKABLE SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

#if defined(EPHPM_TSAN)
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
#else
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.Lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.ReaderLock(); }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.ReaderUnlock(); }

 private:
  absl::Mutex mu_;
#endif
};

// Holds `mu` exclusively for the scope.
class ABSL_SCOPED_LOCKABLE WriterLock {
 public:
  explicit WriterLock(SharedMutex* mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->Lock();
  }
  ~WriterLock() ABSL_UNLOCK_FUNCTION() { mu_->Unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// Holds `mu` shared for the scope.
class ABSL_SCOPED_LOCKABLE ReaderLock {
 public:
  explicit ReaderLock(SharedMutex* mu) ABSL_SHARED_LOCK_FUNCTION(mu)
      : mu_(mu) {
    mu_->ReaderLock();
  }
  ~ReaderLock() ABSL_UNLOCK_FUNCTION() { mu_->ReaderUnlock(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex* const mu_;
};

}  // namespace ephpm

#endif  // EPHPM_CORE_SHARED_MUTEX_H_
