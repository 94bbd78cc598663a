// The set of live connections of a server, so that Stop() and listings
// (CLIENT LIST) can reach every one from another thread.

#ifndef EPHPM_NET_SESSION_REGISTRY_H_
#define EPHPM_NET_SESSION_REGISTRY_H_

#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "mutex.h"

namespace ephpm {
namespace net {

// Session must derive from std::enable_shared_from_this<Session>, Add()
// itself when it starts and Remove() itself in its destructor.
//
// Thread-safe.  Lock order: the registry's mutex is a leaf; nothing else is
// taken while it is held (Live() copies references out first).
template <typename Session>
class SessionRegistry {
 public:
  void Add(Session* s) {
    MutexLock l(&mu_);
    sessions_.insert(s);
  }
  void Remove(Session* s) {
    MutexLock l(&mu_);
    sessions_.erase(s);
  }
  bool Empty() const {
    MutexLock l(&mu_);
    return sessions_.empty();
  }

  // References to the sessions that are not being destroyed.  A session
  // whose last reference is gone waits in its destructor (in Remove()) for
  // the mutex, and is skipped: shared_from_this() on it would throw.  The
  // references are dropped by the caller after the mutex is released, since
  // dropping the last one runs a destructor, which takes the mutex.
  std::vector<std::shared_ptr<Session>> Live() const {
    std::vector<std::shared_ptr<Session>> live;
    MutexLock l(&mu_);
    live.reserve(sessions_.size());
    for (Session* s : sessions_) {
      if (auto p = s->weak_from_this().lock()) live.push_back(std::move(p));
    }
    return live;
  }

 private:
  mutable Mutex mu_;
  std::unordered_set<Session*> sessions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace net
}  // namespace ephpm

#endif  // EPHPM_NET_SESSION_REGISTRY_H_
