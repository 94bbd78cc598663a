#include "ephpm/clock.h"

#include <chrono>

namespace ephpm {
namespace {

class WallClock final : public Clock {
 public:
  int64_t NowMs() const override { return WallMs(); }
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
