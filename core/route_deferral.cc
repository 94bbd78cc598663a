#include "ephpm/route_deferral.h"

#include <utility>

namespace ephpm {

namespace {
thread_local FrozenClock* tl_clock = nullptr;
thread_local RouteDeferral* tl_deferral = nullptr;
thread_local RouteReplay* tl_replay = nullptr;
}  // namespace

FrozenClock* FrozenClock::Current() { return tl_clock; }

FrozenClock::FrozenClock(int64_t now_ms) : now_ms_(now_ms), outer_(tl_clock) { tl_clock = this; }

FrozenClock::~FrozenClock() { tl_clock = outer_; }

RouteDeferral::RouteDeferral(const Resume* resume, RouteChain* chain, uint64_t ticket)
    : FrozenClock(-1), resume_(resume), chain_(chain), ticket_(ticket), outer_(tl_deferral) {
  tl_deferral = this;
}

RouteDeferral::~RouteDeferral() { tl_deferral = outer_; }

RouteDeferral* RouteDeferral::Current() { return tl_deferral; }

RouteDeferral::Resume RouteDeferral::Defer() {
  deferred_ = true;
  return *resume_;
}

void RouteDeferral::Undefer() { deferred_ = false; }

void RouteDeferral::Hold() {
  deferred_ = true;
  held_ = true;
}

RouteReplay::RouteReplay(RouteAnswer answer, int64_t now_ms)
    : FrozenClock(now_ms), answer_(std::move(answer)), outer_(tl_replay) {
  tl_replay = this;
}

RouteReplay::~RouteReplay() { tl_replay = outer_; }

RouteReplay* RouteReplay::Current() { return tl_replay; }

bool RouteReplay::Take(uint8_t op, std::string_view key, RouteAnswer* out) {
  if (taken_ || answer_.op != op || !(answer_.key == key)) return false;
  taken_ = true;
  *out = std::move(answer_);
  return true;
}

}  // namespace ephpm
