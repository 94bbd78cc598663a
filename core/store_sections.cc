// Atomic sections (Store::Atomically) and WATCH's change counters: what
// RESP transactions (MULTI/EXEC) and scripts (EVAL) are built on.

#include <algorithm>
#include <optional>

#include "store_impl.h"

namespace ephpm {

Status Store::Impl::Atomically(const std::vector<std::string_view>& keys, bool all_shards,
                               absl::FunctionRef<void()> fn) {
  const uint32_t db = db_scope::Current(this);
  std::vector<std::pair<uint32_t, std::string_view>> in_db;
  in_db.reserve(keys.size());
  for (std::string_view k : keys) in_db.emplace_back(db, k);
  return AtomicallyIn(in_db, all_shards ? std::vector<uint32_t>{db} : std::vector<uint32_t>{}, fn);
}

Status Store::Impl::AtomicallyIn(const std::vector<std::pair<uint32_t, std::string_view>>& keys,
                                 const std::vector<uint32_t>& whole_databases,
                                 absl::FunctionRef<void()> fn) {
  if (section::Active()) return Status::kInvalidArgument;  // sections do not nest
  const size_t per_db = shard_mask_ + 1;
  std::vector<size_t> idx;
  idx.reserve(keys.size() + whole_databases.size() * per_db);
  for (uint32_t d : whole_databases) {
    if (d >= options_.databases) return Status::kInvalidArgument;
    for (size_t i = 0; i < per_db; ++i) idx.push_back(d * per_db + i);
  }
  for (const auto& [d, k] : keys) {
    if (!KeyOk(k) || d >= options_.databases) return Status::kInvalidArgument;
    idx.push_back(d * per_db + (HashKey(k).shard_hash & shard_mask_));
  }
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  // Shards are one array: index order is address order, which is the
  // order section::Holds searches.
  std::vector<const SharedMutex*> held;
  held.reserve(idx.size());
  for (size_t i : idx) held.push_back(&shards_[i].mu);

  // Ends the section however fn leaves: unlocks, then wakes the waiters of
  // every shard it held (a change inside did not, see Notify).
  struct End {
    const Impl* impl;
    const std::vector<size_t>& idx;
    ~End() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      section::held = nullptr;
      for (auto i = idx.rbegin(); i != idx.rend(); ++i) impl->shards_[*i].mu.RawUnlock();
      for (size_t i : idx) Notify(impl->shards_[i]);
    }
  };
  for (size_t i : idx) shards_[i].mu.RawLock();
  End end{this, idx};
  section::held = &held;
  // Closed before `end` unlocks: the section's records are one group.
  std::optional<LogGroup> group;
  if (engine_ != nullptr) group.emplace(this, idx);
  fn();
  return Status::kOk;
}

Status Store::Impl::Watch(std::string_view key, uint64_t* touched) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ShardWrite w(&s);
  // A key already expired is absent from the start: removing it now means
  // its removal cannot count as a change later (Redis 7.0 treats a stale
  // watched key the same way).
  auto it = s.map.find(hk);
  if (it != s.map.end()) {
    const int64_t now = clock_->NowMs();
    if (IsExpired(it->second, now)) {
      ExpireLocked(s, it, now);
      w.changed = true;
    }
  }
  auto wi = s.watched.find(hk);
  if (wi == s.watched.end()) wi = s.watched.try_emplace(std::string(key)).first;
  ++wi->second.watchers;
  *touched = wi->second.touched;
  return Status::kOk;
}

Status Store::Impl::WatchedChanged(std::string_view key, uint64_t touched, bool* changed) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto wi = s.watched.find(hk);
  // Not registered: Watch was not called, or Unwatch was; say changed,
  // the safe answer for EXEC.
  *changed = wi == s.watched.end() || wi->second.touched != touched;
  if (!*changed) {
    // Expired since, whether or not it has been removed yet.
    auto it = s.map.find(hk);
    *changed = it != s.map.end() && IsExpired(it->second, clock_->NowMs());
  }
  return Status::kOk;
}

void Store::Impl::Unwatch(std::string_view key) {
  if (!KeyOk(key)) return;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  WriterLock l(&s.mu);
  auto wi = s.watched.find(hk);
  if (wi == s.watched.end()) return;
  if (--wi->second.watchers == 0) s.watched.erase(wi);
}

}  // namespace ephpm
