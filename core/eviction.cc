// Memory accounting against the limit (Reserve) and allkeys-lru eviction.

#include "store_impl.h"

namespace ephpm {

bool Store::Impl::Reserve(Shard& s, uint64_t new_mem, uint64_t old_mem, bool force,
                          uint64_t* shortfall, uint64_t old_pinned) {
  if (new_mem <= old_mem) return true;
  const uint64_t delta = new_mem - old_mem;
  const uint64_t limit = memory_limit_.load(std::memory_order_relaxed);
  if (limit == 0 || force) {
    AddUsedLocked(s, static_cast<int64_t>(delta));
    return true;
  }
  // A limit is published only once every shard counts globally
  // (SetMemoryLimit): used_ is the whole total here.
  uint64_t cur = used_.load(std::memory_order_relaxed);
  do {
    if (cur + delta > limit) {
      *shortfall = NeverFits(new_mem, old_pinned) ? kNeverFits : cur + delta - limit;
      return false;
    }
  } while (!used_.compare_exchange_weak(cur, cur + delta, std::memory_order_relaxed));
  return true;
}

void Store::Impl::SetMemoryLimit(uint64_t bytes) {
  uint64_t seq = 0;
  {
    MutexLock l(&limit_mu_);
    seq = ++limit_seq_;
    limit_target_.store(bytes, std::memory_order_relaxed);
    // No limit before any shard stops counting globally.
    if (bytes == 0) memory_limit_.store(0, std::memory_order_relaxed);
  }
  // Each shard takes the mode of the latest call's limit (a call that
  // overtook this one may have changed it): a shard swept after a later
  // call began is swept by that call too.
  for (size_t i = 0; i < total_shards_; ++i) {
    Shard& s = shards_[i];
    WriterLock w(&s.mu);
    CountGloballyLocked(s, limit_target_.load(std::memory_order_relaxed) != 0);
  }
  if (bytes == 0) return;
  MutexLock l(&limit_mu_);
  // Every shard counts globally now, unless a later call began: then that
  // call decides the limit.
  if (limit_seq_ == seq) memory_limit_.store(bytes, std::memory_order_relaxed);
}

void Store::Impl::CountGloballyLocked(Shard& s, bool global) {
  if (s.count_globally == global) return;
  if (global) {
    used_.fetch_add(static_cast<uint64_t>(s.used.load(std::memory_order_relaxed)),
                    std::memory_order_relaxed);
    s.used.store(0, std::memory_order_relaxed);
    pinned_used_.fetch_add(s.pinned_bytes, std::memory_order_relaxed);
  } else {
    // Its bytes in used_ stay there: the total is used_ and the parts.
    pinned_used_.fetch_sub(s.pinned_bytes, std::memory_order_relaxed);
  }
  s.count_globally = global;
}

uint64_t Store::Impl::MemoryUsed() const {
  int64_t total = static_cast<int64_t>(used_.load(std::memory_order_relaxed));
  for (size_t i = 0; i < total_shards_; ++i) {
    total += shards_[i].used.load(std::memory_order_relaxed);
  }
  // Read without the locks, the parts may be of different moments.
  return total > 0 ? static_cast<uint64_t>(total) : 0;
}

bool Store::Impl::NeverFits(uint64_t new_mem, uint64_t old_pinned) const {
  const uint64_t kept = pinned_used_.load(std::memory_order_relaxed) +
                        tombstone_used_.load(std::memory_order_relaxed);
  const uint64_t others = kept > old_pinned ? kept - old_pinned : 0;
  return others + new_mem > memory_limit_.load(std::memory_order_relaxed);
}

bool Store::Impl::EvictFor(uint64_t bytes) {
  uint64_t freed = 0;
  size_t empty_visits = 0;
  while (freed < bytes && empty_visits < total_shards_) {
    Shard& s = shards_[next_evict_shard_.fetch_add(1, std::memory_order_relaxed) % total_shards_];
    const uint64_t got = EvictOneFrom(s);
    if (got == 0) {
      ++empty_visits;
    } else {
      empty_visits = 0;
      freed += got;
    }
  }
  return freed > 0;
}

uint64_t Store::Impl::EvictOneFrom(Shard& s) {
  uint64_t freed = 0;
  {
    ShardWrite w(&s);
    if (s.map.empty()) return 0;
    const int64_t now = clock_->NowMs();
    if (!s.ttl.empty() && s.ttl.begin()->at <= now) {  // the best victim
      auto it = s.map.find(std::string_view(*s.ttl.begin()->key));
      freed = it->second.mem_size;
      ExpireLocked(s, it, now);
    } else {
      // Nothing here is expired, so every pinned entry is a live lock.
      if (s.pinned_keys == s.map.size()) return 0;
      auto it = s.has_evict_cursor ? s.map.find(std::string_view(s.evict_cursor)) : s.map.end();
      if (it == s.map.end()) it = s.map.begin();
      auto victim = s.map.end();
      int64_t oldest = std::numeric_limits<int64_t>::max();
      size_t sampled = 0;
      // Locks are stepped over, not counted: the sample is of candidates.
      for (size_t seen = 0; seen < s.map.size() && sampled < options_.eviction_samples;
           ++seen) {
        const Entry& e = it->second;
        if (!e.pinned) {
          ++sampled;
          const int64_t at = e.last_access.load(std::memory_order_relaxed);
          if (victim == s.map.end() || at < oldest) {
            oldest = at;
            victim = it;
          }
        }
        if (++it == s.map.end()) it = s.map.begin();
      }
      // The hand moves past the sample; the victim's slot is about to go.
      s.has_evict_cursor = it != victim;
      if (s.has_evict_cursor) s.evict_cursor = it->first;
      freed = victim->second.mem_size;
      // Eviction is this node's own decision: logged, not replicated.
      LogRemovalLocked(s, victim->first);
      RemoveLocked(s, victim);
      s.evicted.fetch_add(1, std::memory_order_relaxed);
    }
    w.changed = true;
  }
  return freed;
}

}  // namespace ephpm
