// Requests with timeouts: the pending table, ids, deadlines and completion.

#include "rpc.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace ephpm {
namespace cluster {

namespace {
// The heap's order: the earliest deadline at the front.
constexpr std::greater<std::pair<std::chrono::steady_clock::time_point, uint64_t>> kLater;
}  // namespace

void Rpc::Request(const std::string& address, MsgType type, std::string_view body,
                  int64_t timeout_ms, Done done, std::string_view tail) {
  const uint64_t id = next_.fetch_add(1) + 1;
  const Time due = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  FramePtr frame = std::make_shared<const std::string>(Frame(type, id, body, tail));
  {
    MutexLock l(&mu_);
    // Most entries stale (their requests answered long before their
    // deadlines): rebuilt from what is pending, so that the heap stays
    // within twice the requests in flight.
    if (deadlines_.size() > 2 * pending_.size() + 1024) {
      // In place: there is room (pending_ is under half the size).
      deadlines_.clear();
      for (const auto& [pid, p] : pending_) deadlines_.emplace_back(p.due, pid);
      std::make_heap(deadlines_.begin(), deadlines_.end(), kLater);
    }
    // The deadline first: should the table's insert throw, a deadline
    // without its request is dropped when it comes up.
    deadlines_.emplace_back(due, id);
    std::push_heap(deadlines_.begin(), deadlines_.end(), kLater);
    pending_.emplace(id, Pending{std::move(done), address, due});
    try {
      ArmLocked(due);
    } catch (...) {
      pending_.erase(id);
      throw;
    }
  }
  try {
    transport_->Send(address, std::move(frame), false);
  } catch (...) {
    // Not sent: never completed either (the caller sees the throw).
    MutexLock l(&mu_);
    pending_.erase(id);
    throw;
  }
}

void Rpc::ArmLocked(Time due) {
  if (stopped_ || (armed_ && armed_for_ <= due)) return;
  // Re-arming cancels the wait under way (its handler sees
  // operation_aborted); deadlines mostly come in order, so that is rare.
  timer_.expires_at(due);
  armed_ = false;  // until the wait below is made (it may throw)
  timer_.async_wait([this](boost::system::error_code e) {
    if (e) return;
    Expire();
  });
  armed_ = true;
  armed_for_ = due;
}

void Rpc::Expire() {
  std::vector<uint64_t> late;
  {
    MutexLock l(&mu_);
    armed_ = false;
    const Time now = std::chrono::steady_clock::now();
    while (!deadlines_.empty()) {
      const auto [due, id] = deadlines_.front();
      auto it = pending_.find(id);
      if (it != pending_.end() && due > now) break;
      std::pop_heap(deadlines_.begin(), deadlines_.end(), kLater);
      deadlines_.pop_back();
      if (it != pending_.end()) late.push_back(id);
    }
    if (!deadlines_.empty()) ArmLocked(deadlines_.front().first);
  }
  for (uint64_t id : late) Complete(id, false, {});
}

void Rpc::FailTo(const std::string& address) {
  std::vector<uint64_t> ids;
  {
    MutexLock l(&mu_);
    for (const auto& [id, p] : pending_) {
      if (p.address == address) ids.push_back(id);
    }
  }
  for (uint64_t id : ids) Complete(id, false, {});
}

void Rpc::Complete(uint64_t id, bool ok, std::string_view body) {
  Pending p;
  {
    MutexLock l(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // already answered or timed out
    p = std::move(it->second);
    pending_.erase(it);
  }
  p.done(ok, body);
}

void Rpc::CancelTimers() {
  MutexLock l(&mu_);
  stopped_ = true;
  armed_ = false;
  timer_.cancel();
}

size_t Rpc::pending() const {
  MutexLock l(&mu_);
  return pending_.size();
}

size_t Rpc::deadlines() const {
  MutexLock l(&mu_);
  return deadlines_.size();
}

}  // namespace cluster
}  // namespace ephpm
