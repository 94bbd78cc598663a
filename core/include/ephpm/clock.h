// The store reads time only through a Clock, so tests can move time instead
// of sleeping.  Times are milliseconds since the Unix epoch (wall clock), the
// unit Redis uses for absolute expiries, so an expiry means the same instant
// on every node of a cluster.

#ifndef EPHPM_CLOCK_H_
#define EPHPM_CLOCK_H_

#include <atomic>
#include <cstdint>

namespace ephpm {

// Thread-safe: implementations are called concurrently from every thread.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowMs() const = 0;
  // A cheaper reading that may lag NowMs() by up to one kernel tick (a few
  // ms) and never leads it: for access times (LRU, OBJECT IDLETIME), never
  // for an expiry decision.
  virtual int64_t CoarseMs() const { return NowMs(); }
};

// The process-wide wall clock.  Never null, never destroyed.
const Clock* SystemClock();
// What it reads, for code that keeps no Clock (the network layers).
int64_t WallMs();

// A clock that only moves when told to.  Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}
  int64_t NowMs() const override { return now_.load(std::memory_order_acquire); }
  void Advance(int64_t ms) { now_.fetch_add(ms, std::memory_order_acq_rel); }
  void Set(int64_t ms) { now_.store(ms, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace ephpm

#endif  // EPHPM_CLOCK_H_
