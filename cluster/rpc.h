// Requests with timeouts over the transport: each request gets an id, its
// answer (a frame carrying that id) or its deadline completes it, once.
// One timer serves every deadline (armed for the earliest): an asio timer a
// request cost two allocations, and its cancel a handler run, per routed
// operation.

#ifndef EPHPM_CLUSTER_RPC_H_
#define EPHPM_CLUSTER_RPC_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "mutex.h"
#include "transport.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

// Thread-safe.  Its lock is a leaf but for the completions: `done` runs with
// no Rpc lock held.
class Rpc {
 public:
  using Done = std::function<void(bool ok, std::string_view reply)>;

  // Timers run on `io`; frames go through `transport`.
  Rpc(boost::asio::io_context* io, Transport* transport) : transport_(transport), timer_(*io) {}

  // Sends a request of `type` with `body` to the member at `address`;
  // `done` runs once: with the reply's body (true), or (false) after
  // `timeout_ms` or when the connection to `address` breaks.  If it throws
  // (no memory), `done` never runs.
  // The frame's body is `body` followed by `tail` (a part that differs
  // per member, without joining the two first).
  void Request(const std::string& address, MsgType type, std::string_view body,
               int64_t timeout_ms, Done done, std::string_view tail = {});
  // The answer to request `id` arrived (ok), or it failed: completes it.
  // Does nothing for a request already completed.
  void Complete(uint64_t id, bool ok, std::string_view body);
  // The connection to `address` broke: its requests will get no answer.
  void FailTo(const std::string& address);
  // Cancels the timer for good (the node is stopping): no request times
  // out after this.  REQUIRES: on an I/O thread.
  void CancelTimers();

  // Requests not yet completed, and deadlines held (the tests' view).
  size_t pending() const;
  size_t deadlines() const;

 private:
  using Time = std::chrono::steady_clock::time_point;
  struct Pending {
    Done done;
    std::string address;  // where the request went
    Time due;             // when it times out
  };
  // (due, id), earliest first.  A completed request's entry stays until it
  // comes up, or until the heap is rebuilt from pending_ (Request, once
  // most entries are stale).
  using Deadline = std::pair<Time, uint64_t>;

  // Arms the timer for `due` unless it is armed for that or earlier.
  void ArmLocked(Time due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The timer fired: completes every request past its deadline.
  void Expire();

  Transport* const transport_;
  // The timer and the deadlines are touched only under mu_ (in Request,
  // Expire and CancelTimers): an asio timer is not safe for concurrent use,
  // and a connection failure can complete a request on an I/O thread at
  // once.
  mutable Mutex mu_;
  // Flat: a request costs no node allocation of its own.
  absl::flat_hash_map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  // A min-heap (std::push_heap with kLater), rebuilt in place: its storage
  // is kept, where a fresh vector regrew past 1 KiB after every rebuild
  // (under load one rebuild every ~1 000 requests, each regrowth a large
  // allocation that made glibc consolidate its free lists).
  std::vector<Deadline> deadlines_ ABSL_GUARDED_BY(mu_);
  boost::asio::steady_timer timer_ ABSL_GUARDED_BY(mu_);
  bool armed_ ABSL_GUARDED_BY(mu_) = false;  // a wait is under way, for armed_for_
  Time armed_for_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;  // CancelTimers ran
  std::atomic<uint64_t> next_{0};
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_RPC_H_
