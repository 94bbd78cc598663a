// Expiry: the Impl's construction and teardown of the sweeper thread, the
// sweep itself, and lazy expiry for readers.

#include <chrono>
#include <thread>

#include "store_impl.h"

namespace ephpm {

Store::Impl::Impl(const StoreOptions& o)
    : options_(o),
      clock_(o.clock != nullptr ? o.clock : SystemClock()),
      shard_mask_(o.shards - 1),
      total_shards_(o.shards * o.databases),
      shards_(new Shard[o.shards * o.databases]),
      memory_limit_(o.memory_limit),
      limit_target_(o.memory_limit) {
  // A limit from the start: every shard counts globally from the start.
  if (o.memory_limit != 0) {
    for (size_t i = 0; i < total_shards_; ++i) {
      WriterLock w(&shards_[i].mu);
      shards_[i].count_globally = true;
    }
  }
}

void Store::Impl::StartSweeper() {
  if (options_.sweep_interval_ms > 0) sweeper_ = std::thread([this] { SweepLoop(); });
}

Store::Impl::~Impl() {
  if (sweeper_.joinable()) {
    {
      MutexLock l(&sweep_mu_);
      stop_ = true;
    }
    sweep_cv_.notify_all();
    sweeper_.join();
  }
  // Writes and fsyncs what is buffered; waits for a snapshot in progress,
  // whose walk reads the shards (still alive here).
  engine_.reset();
}

size_t Store::Impl::Sweep(size_t budget, bool* more) {
  size_t total = 0;
  for (size_t i = 0; i < total_shards_; ++i) {
    Shard& s = shards_[i];
    size_t removed = 0;
    {
      ShardWrite w(&s);
      const int64_t now = clock_->NowMs();
      while (!s.ttl.empty() && s.ttl.begin()->at <= now) {
        if (removed == budget) {
          *more = true;
          break;
        }
        auto it = s.map.find(std::string_view(*s.ttl.begin()->key));
        ExpireLocked(s, it, now);  // erases the index node too
        ++removed;
      }
      CollectTombstonesLocked(s, now);
      w.changed = removed > 0;
    }
    total += removed;
  }
  return total;
}

void Store::Impl::ReapIfExpired(const HashedKey& hk) const {
  Shard& s = ShardFor(hk);
  ShardWrite w(&s);
  const_cast<Impl*>(this)->FindLiveForWriteLocked(s, hk, clock_->NowMs(), &w.changed);
}

void Store::Impl::SweepLoop() {
  bool more = false;
  for (;;) {
    {
      // Adaptive, like Redis's active expiry: a pass that hit its budget
      // means a backlog, so the next pass starts at once.
      MutexLock l(&sweep_mu_);
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(more ? 0 : options_.sweep_interval_ms);
      while (!stop_ && l.WaitUntil(&sweep_cv_, until) == std::cv_status::no_timeout) {
      }
      if (stop_) return;
    }
    more = false;
    Sweep(options_.sweep_budget, &more);
  }
}

}  // namespace ephpm
