#include "hit_counters.h"

namespace ephpm {
namespace counter_slot {

namespace {
// Bit i set: slot number i has an owner.
std::atomic<uint64_t> g_owned{0};
static_assert(kOwned == 64, "g_owned has one bit per slot number");

// Returns the calling thread's number when the thread exits.  Counts made
// after that (by destructors of other thread-locals) go to the shared slot.
struct Releaser {
  size_t slot = kUnassigned;
  ~Releaser() {
    if (slot < kOwned) g_owned.fetch_and(~(uint64_t{1} << slot), std::memory_order_release);
    current = kShared;
  }
};
thread_local Releaser tl_releaser;
}  // namespace

size_t Acquire() {
  uint64_t owned = g_owned.load(std::memory_order_relaxed);
  for (;;) {
    if (owned == ~uint64_t{0}) return current = kShared;
    const size_t n = static_cast<size_t>(__builtin_ctzll(~owned));
    // Acquire: this thread's first load of the slot sees the last owner's
    // final count.
    if (g_owned.compare_exchange_weak(owned, owned | (uint64_t{1} << n),
                                      std::memory_order_acquire, std::memory_order_relaxed)) {
      tl_releaser.slot = n;
      return current = n;
    }
  }
}

size_t OwnedCount() {
  return static_cast<size_t>(__builtin_popcountll(g_owned.load(std::memory_order_relaxed)));
}

}  // namespace counter_slot
}  // namespace ephpm
