// The one reader/writer lock type of the store, annotated for clang's
// -Wthread-safety.  Backed by absl::Mutex, except in the ThreadSanitizer build
// (EPHPM_TSAN): Debian's abseil is not built with TSan, so TSan cannot see
// absl::Mutex's synchronisation, while std::shared_mutex goes through
// pthread_rwlock, which TSan intercepts.

#ifndef EPHPM_CORE_SHARED_MUTEX_H_
#define EPHPM_CORE_SHARED_MUTEX_H_

#include <algorithm>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"

#if defined(EPHPM_TSAN)
#include <shared_mutex>
#else
#include "absl/synchronization/mutex.h"
#endif

namespace ephpm {

class SharedMutex;

namespace section {
// The shard locks the calling thread holds for an atomic section
// (Store::Atomically), sorted by address; null outside one.  Inside a
// section, locking one of them again (any store call on a key of the
// section) is a no-op, and so is its unlock: the section holds them until it
// ends.  Locking any other shard inside a section would break the lock
// order: the section's callers prevent it (docs/ARCHITECTURE.md).  Read on
// every lock and unlock: initial-exec, as db_scope (core/store_impl.h).
inline thread_local const std::vector<const SharedMutex*>* held ABSL_ATTRIBUTE_INITIAL_EXEC =
    nullptr;

inline bool Holds(const SharedMutex* mu) {
  const std::vector<const SharedMutex*>* h = held;
  return h != nullptr && std::binary_search(h->begin(), h->end(), mu);
}
inline bool Active() { return held != nullptr; }
}  // namespace section

class ABSL_LOCKABLE SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  // The lock operations below do nothing on a lock the calling thread's
  // atomic section holds (see section::held).

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!section::Holds(this)) RawLock();
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!section::Holds(this)) RawUnlock();
  }
  void ReaderLock() ABSL_SHARED_LOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!section::Holds(this)) RawReaderLock();
  }
  void ReaderUnlock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!section::Holds(this)) RawReaderUnlock();
  }

  // The lock itself, whatever the thread's section holds: for the section.
#if defined(EPHPM_TSAN)
  void RawLock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void RawUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  void RawReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.lock_shared(); }
  bool RawReaderTryLock() ABSL_SHARED_TRYLOCK_FUNCTION(true) { return mu_.try_lock_shared(); }
  void RawReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
#else
  void RawLock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.Lock(); }
  void RawUnlock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  void RawReaderLock() ABSL_SHARED_LOCK_FUNCTION() { mu_.ReaderLock(); }
  bool RawReaderTryLock() ABSL_SHARED_TRYLOCK_FUNCTION(true) { return mu_.ReaderTryLock(); }
  void RawReaderUnlock() ABSL_UNLOCK_FUNCTION() { mu_.ReaderUnlock(); }

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
