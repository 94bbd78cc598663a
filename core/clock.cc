#include "ephpm/clock.h"

#include <time.h>

#include <chrono>

namespace ephpm {
namespace {

class WallClock final : public Clock {
 public:
  int64_t NowMs() const override { return WallMs(); }
  // CLOCK_REALTIME_COARSE: the time of the last tick, read from the vDSO's
  // data page with no clock hardware access (6.5 ns against 39 ns for
  // CLOCK_REALTIME on this project's kvm-clock VMs).
  int64_t CoarseMs() const override {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0) return WallMs();
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
  }
};

}  // namespace

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const Clock* SystemClock() {
  static const WallClock* const clock = new WallClock();  // never destroyed
  return clock;
}

}  // namespace ephpm
