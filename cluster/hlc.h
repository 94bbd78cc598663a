// The cluster's hybrid logical clock: the stamps that order replicated
// writes (last writer wins).

#ifndef EPHPM_CLUSTER_HLC_H_
#define EPHPM_CLUSTER_HLC_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "ephpm/clock.h"

namespace ephpm {
namespace cluster {

// Wall milliseconds in the high 48 bits and a counter in the low 16, never
// going back, and past every reading seen from another node (Observe), so a
// write made after seeing another is stamped after it whatever the two wall
// clocks say.
//
// Thread-safe (lock-free).
class Hlc {
 public:
  // A reading greater than every earlier one of this clock and every one
  // observed.
  uint64_t Now() {
    const uint64_t physical = static_cast<uint64_t>(WallMs() + skew_ms_.load()) << 16;
    uint64_t cur = last_.load();
    uint64_t next;
    do {
      next = std::max(cur + 1, physical);
    } while (!last_.compare_exchange_weak(cur, next));
    return next;
  }
  // Moves the clock past `remote`, a reading from another node.
  void Observe(uint64_t remote) {
    uint64_t cur = last_.load();
    while (remote > cur && !last_.compare_exchange_weak(cur, remote)) {
    }
  }
  // Shifts the wall clock this clock reads by `ms` (the tests' clock skew).
  void Skew(int64_t ms) { skew_ms_.store(ms); }

 private:
  std::atomic<uint64_t> last_{0};
  std::atomic<int64_t> skew_ms_{0};
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_HLC_H_
