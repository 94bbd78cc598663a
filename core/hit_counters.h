// Hit and miss counts (StoreStats::hits and misses, INFO's keyspace_hits
// and keyspace_misses), counted on every read, by readers that hold a
// shard's lock shared.
//
// One shared atomic would cost every read a locked read-modify-write.
// Instead each thread owns a slot of its own and adds with a plain load and
// store: the owner is the only writer of its slot, so no count is lost, and
// a reader of the totals sums every slot.  A thread takes one of kOwned
// slot numbers on its first count (the same number in every store) and gives
// it back when it exits; the next owner of the number goes on from the
// count the last one left (their hand-over is a release/acquire pair on
// the process-wide table of numbers).  With every number taken, further
// threads share the last slot with atomic adds.

#ifndef EPHPM_CORE_HIT_COUNTERS_H_
#define EPHPM_CORE_HIT_COUNTERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"

namespace ephpm {

namespace counter_slot {
inline constexpr size_t kOwned = 64;
inline constexpr size_t kShared = kOwned;  // the slot threads share
inline constexpr size_t kUnassigned = SIZE_MAX;

// The calling thread's slot number.  Initial-exec: read on every count
// (core/random.h says why the module's TLS block stays small).
inline thread_local size_t current ABSL_ATTRIBUTE_INITIAL_EXEC = kUnassigned;

// Gives the calling thread a slot number (kShared when none is free) and
// arranges for its return when the thread exits.
size_t Acquire();

// The number of slot numbers currently owned (for tests).
size_t OwnedCount();
}  // namespace counter_slot

class HitCounters {
 public:
  void Hit() const { Add(&Slot::hits); }
  void Miss() const { Add(&Slot::misses); }
  uint64_t hits() const { return Sum(&Slot::hits); }
  uint64_t misses() const { return Sum(&Slot::misses); }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
  };

  void Add(std::atomic<uint64_t> Slot::*field) const {
    size_t n = counter_slot::current;
    if (ABSL_PREDICT_FALSE(n == counter_slot::kUnassigned)) n = counter_slot::Acquire();
    std::atomic<uint64_t>& c = slots_[n].*field;
    if (ABSL_PREDICT_FALSE(n == counter_slot::kShared)) {
      c.fetch_add(1, std::memory_order_relaxed);
    } else {
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }
  uint64_t Sum(std::atomic<uint64_t> Slot::*field) const {
    uint64_t total = 0;
    for (const Slot& s : slots_) total += (s.*field).load(std::memory_order_relaxed);
    return total;
  }

  mutable Slot slots_[counter_slot::kOwned + 1];
};

}  // namespace ephpm

#endif  // EPHPM_CORE_HIT_COUNTERS_H_
