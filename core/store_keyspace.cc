// The keyspace: DEL, EXISTS, the expire family, KEYS, SCAN, RANDOMKEY,
// RENAME, FLUSH, DBSIZE, SWAPDB, COPY, OBJECT, WaitForChange, Inspect and
// Stats.

#include <chrono>

#include "ephpm/glob.h"
#include "ephpm/number_text.h"
#include "random.h"
#include "store_impl.h"

namespace ephpm {

Status Store::Impl::Del(std::string_view key, int64_t* removed) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, const WriteTime& now, bool* changed,
              uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        *removed = it != s.map.end() ? 1 : 0;
        if (*removed == 1) {
          DeleteLocked(s, it, key);
          *changed = true;
        }
        return Status::kOk;
      });
}

Status Store::Impl::Exists(std::string_view key, bool* exists) const {
  return FindLive(key, /*touch=*/false, exists);
}

Status Store::Impl::Touch(std::string_view key, bool* exists) const {
  return FindLive(key, /*touch=*/true, exists);
}

Status Store::Impl::FindLive(std::string_view key, bool touch, bool* exists) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end()) {
    *exists = false;
    return Status::kOk;
  }
  // A touch needs the time itself; EXISTS only whether the entry expired.
  const int64_t now = touch ? clock_->NowMs() : NowFor(it->second);
  *exists = !IsExpired(it->second, now);
  // Readers write the access time under the shared lock (hence atomic).
  if (touch && *exists) it->second.last_access.store(now, std::memory_order_relaxed);
  return Status::kOk;
}

Status Store::Impl::Expire(std::string_view key, int64_t ttl_ms, bool* applied) {
  if (ttl_ms <= 0) return ExpireAt(key, std::numeric_limits<int64_t>::min(), applied);
  int64_t at = 0;
  if (!ExpiryFrom(clock_->NowMs(), ttl_ms, &at)) return Status::kInvalidArgument;
  return ExpireAt(key, at, applied);
}

Status Store::Impl::ExpireAt(std::string_view key, int64_t at_ms, bool* applied) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        *applied = it != s.map.end();
        if (!*applied) return Status::kOk;
        return ExpireAtLocked(s, it, key, at_ms, now, changed);
      });
}

Status Store::Impl::ExpireAtLocked(Shard& s, Map::iterator it, std::string_view key, int64_t at_ms,
                                   int64_t now, bool* changed) {
  if (at_ms <= now) {  // a time already past deletes, as in Redis
    DeleteLocked(s, it, key);
    *changed = true;
    return Status::kOk;
  }
  const Status r = SetExpiryLocked(s, it, at_ms);
  if (r == Status::kOk) {
    PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
    *changed = true;
  }
  return r;
}

Status Store::Impl::Persist(std::string_view key, bool* applied) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        *applied = it != s.map.end() && it->second.expires_at != 0;
        if (*applied) {
          SetExpiryLocked(s, it, 0);  // removing a TTL allocates nothing
          PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
          *changed = true;
        }
        return Status::kOk;
      });
}

Status Store::Impl::Pttl(std::string_view key, int64_t* ttl_ms) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end()) {
    *ttl_ms = -2;
  } else if (it->second.expires_at == 0) {
    *ttl_ms = -1;
  } else {
    const int64_t now = clock_->NowMs();
    *ttl_ms = IsExpired(it->second, now) ? -2 : it->second.expires_at - now;
  }
  return Status::kOk;
}

Status Store::Impl::Keys(std::string_view pattern, std::vector<std::string>* out) const {
  const bool all = pattern == "*";
  const size_t base = DbBase();
  for (size_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[base + i];
    ReaderLock l(&s.mu);
    const int64_t now = clock_->NowMs();
    for (const auto& [k, e] : s.map) {
      if (IsExpired(e, now)) continue;
      if (all || GlobMatch(pattern, k)) out->push_back(k.str());
    }
  }
  return Status::kOk;
}

uint64_t Store::Impl::DbSize() const {
  uint64_t n = 0;
  const size_t base = DbBase();
  for (size_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[base + i];
    ReaderLock l(&s.mu);
    n += LiveCountLocked(s, clock_->NowMs());
  }
  return n;
}

void Store::Impl::Flush() {
  Mutation m;
  m.kind = Mutation::Kind::kFlush;
  m.db = db_scope::Current(this);
  const bool replicated = options_.replicator != nullptr && m.db == 0;
  if (replicated) m.stamp = options_.replicator->NextStamp();
  FlushAll(m);
  if (replicated) options_.replicator->Publish(m);
}

void Store::Impl::FlushEveryDatabase() {
  // A database at a time, each one step with its log record (every shard of
  // every database at once would be more locks than any tool tracks).
  for (uint32_t d = 0; d < options_.databases; ++d) {
    Store::DatabaseScope scope(this, d);
    Flush();
  }
}

void Store::Impl::FlushAll(const Mutation& m) {
  // m's database: its shards.
  Shard* const base = &shards_[static_cast<size_t>(m.db) * (shard_mask_ + 1)];
  if (engine_ == nullptr) {
    // Without a log nothing needs one instant: a shard at a time.  (Every
    // shard locked at once is also more locks than ThreadSanitizer's
    // deadlock detector can track, 64, with the default 64 shards; a test
    // of a logged flush under TSan uses fewer shards.)
    if (!m.stamp.empty()) RaiseFlushStamp(m.stamp);
    for (size_t i = 0; i <= shard_mask_; ++i) {
      ShardWrite w(&base[i]);
      if (m.stamp.empty()) {
        ClearShardLocked(base[i]);
      } else {
        ClearOlderThanLocked(base[i], m.stamp);
      }
      w.changed = true;
    }
    return;
  }
  std::vector<Shard*> all;
  all.reserve(shard_mask_ + 1);
  for (size_t i = 0; i <= shard_mask_; ++i) all.push_back(&base[i]);
  {
    // Every shard at once, with the record logged inside: a write to any
    // shard is then either before the flush in both the store and the log,
    // or after it in both (docs/PERSISTENCE.md).
    MultiLock l(this, all);
    if (m.stamp.empty()) {
      for (Shard* s : all) ClearShardLocked(*s);
    } else {
      RaiseFlushStamp(m.stamp);
      for (Shard* s : all) ClearOlderThanLocked(*s, m.stamp);
    }
    LogLocked(m);
  }
  for (Shard* s : all) Notify(*s);
}

void Store::Impl::ClearShardLocked(Shard& s) {
  TouchWatchedPresentLocked(s);
  uint64_t mem = 0, tomb = 0, floor = 0;
  for (const auto& kv : s.map) {
    mem += kv.second.mem_size;
    if (!kv.second.pinned) floor = std::max(floor, kv.second.fence);
  }
  for (const auto& t : s.tombstones) tomb += TombstoneMem(t.first.size());
  // A flush forgets the keys, not the fences recorded for them: every
  // fenced write after it must reach the highest of them.
  for (const auto& [k, fence] : s.fence_records) {
    tomb += FenceRecordMem(k.size());
    floor = std::max(floor, fence);
  }
  RaiseFenceFloor(floor);
  s.fence_records.clear();
  AddUsedLocked(s, -static_cast<int64_t>(mem + tomb));
  tombstone_used_.fetch_sub(tomb, std::memory_order_relaxed);
  if (s.count_globally) pinned_used_.fetch_sub(s.pinned_bytes, std::memory_order_relaxed);
  s.pinned_keys = s.pinned_bytes = 0;
  Map().swap(s.map);  // swap, not clear(): the table's memory goes too
  s.spare_value.reset();
  TtlIndex().swap(s.ttl);
  s.tombstones.clear();
  s.tombstone_order.clear();
  s.has_evict_cursor = false;
  s.compressed_values = s.compressed_original = s.compressed_stored = 0;
}

Status Store::Impl::Rename(std::string_view src, std::string_view dst, bool only_if_absent,
                           bool* renamed) {
  if (!KeyOk(src) || !KeyOk(dst)) return Status::kInvalidArgument;
  const HashedKey hs = HashKey(src), hd = HashKey(dst);
  Shard& a = ShardFor(hs);
  Shard& b = ShardFor(hd);
  return WithEviction<Status>([&](uint64_t* shortfall) {
    PairWrite w(this, &a, &b);
    const Status st = RenameLocked(a, b, hs, hd, only_if_absent, renamed, shortfall, &w.changed_a);
    w.changed_b = w.changed_a;  // a rename wakes the waiters of both keys
    return st;
  });
}

Status Store::Impl::Move(std::string_view key, uint32_t to_db, bool* moved) {
  *moved = false;
  if (!KeyOk(key) || to_db >= options_.databases) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& a = ShardFor(hk);
  Shard& b = shards_[to_db * (shard_mask_ + 1) + (hk.shard_hash & shard_mask_)];
  if (&a == &b) return Status::kInvalidArgument;
  return WithEviction<Status>([&](uint64_t* shortfall) {
    PairWrite w(this, &a, &b);
    const Status st = RenameLocked(a, b, hk, hk, /*only_if_absent=*/true, moved, shortfall,
                                   &w.changed_a);
    w.changed_b = w.changed_a;
    return st == Status::kNotFound ? Status::kOk : st;
  });
}

Status Store::Impl::ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions,
                               bool* applied) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        *applied = false;
        if (it == s.map.end()) return Status::kOk;
        const int64_t current = it->second.expires_at;  // 0: never
        if ((conditions & kExpireNx) && current != 0) return Status::kOk;
        if ((conditions & kExpireXx) && current == 0) return Status::kOk;
        if ((conditions & kExpireGt) && (current == 0 || at_ms <= current)) return Status::kOk;
        if ((conditions & kExpireLt) && current != 0 && at_ms >= current) return Status::kOk;
        *applied = true;
        *changed = true;  // even when the index node cannot be allocated
        return ExpireAtLocked(s, it, key, at_ms, now, changed);
      });
}

Status Store::Impl::RandomKey(std::string* key) const {
  // Every key about as likely as any other, as Redis's: the entry of a
  // random rank over the shards' sizes (then the first live one from there,
  // so an expired entry not yet removed passes its chance to the next).  A
  // random shard instead would favour a key whose shard follows empty ones.
  // The sizes are read one shard at a time: when writers change them in
  // between, the rank may fall past the end, and the walk wraps.
  const size_t n = shard_mask_ + 1;
  const size_t base = DbBase();
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const Shard& s = shards_[base + i];
    ReaderLock l(&s.mu);
    total += s.map.size();
  }
  if (total == 0) return Status::kNotFound;
  uint64_t rank = RandomBelow(total);
  for (size_t k = 0; k < 2 * n; ++k) {
    Shard& s = shards_[base + (k & shard_mask_)];
    ReaderLock l(&s.mu);
    const size_t size = s.map.size();
    if (rank >= size) {
      rank -= size;
      continue;
    }
    const int64_t now = clock_->NowMs();
    auto it = s.map.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rank));
    for (size_t tried = 0; tried < size; ++tried) {
      if (!IsExpired(it->second, now)) {
        *key = it->first;
        return Status::kOk;
      }
      if (++it == s.map.end()) it = s.map.begin();
    }
    rank = 0;  // every entry here expired: the next shard's first live one
  }
  return Status::kNotFound;
}

Status Store::Impl::Scan(uint64_t cursor, std::string_view pattern, size_t count,
                         std::optional<ValueType> type, std::vector<std::string>* keys,
                         uint64_t* next) const {
  // The cursor is the index of the next shard to visit.  Shards are
  // visited whole, so a key present for the whole walk is met exactly
  // once however the tables grow or shrink between steps.
  *next = 0;
  if (cursor > shard_mask_) return Status::kOk;
  size_t visited = 0;
  const size_t base = DbBase();
  for (uint64_t i = cursor; i <= shard_mask_; ++i) {
    {
      Shard& s = shards_[base + i];
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      for (const auto& [k, e] : s.map) {
        ++visited;
        if (IsExpired(e, now)) continue;
        if (type && e.type != *type) continue;
        if (!pattern.empty() && pattern != "*" && !GlobMatch(pattern, k)) continue;
        keys->push_back(k.str());
      }
    }
    if (visited >= count && i < shard_mask_) {
      *next = i + 1;
      return Status::kOk;
    }
  }
  return Status::kOk;
}

Status Store::Impl::WaitForChange(std::string_view key, uint64_t last_version, int64_t timeout_ms,
                                  WaitResult* r) const {
  if (!KeyOk(key) || timeout_ms < 0) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  using Steady = std::chrono::steady_clock;
  // steady_clock counts nanoseconds in an int64: cap the timeout (at about
  // a century) so that now + timeout cannot overflow.
  constexpr int64_t kMaxTimeoutMs = int64_t{100} * 365 * 24 * 3600 * 1000;
  const auto deadline =
      Steady::now() + std::chrono::milliseconds(std::min(timeout_ms, kMaxTimeoutMs));
  std::string frame;
  bool compressed = false;
  uint64_t original_size = 0;
  r->changed = r->found = false;
  r->value.clear();

  // Registered before the first look, so a writer that changes the key
  // after that look sees a waiter and notifies (see Notify).
  s.waiters.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    const uint64_t seq = s.wake_seq.load(std::memory_order_seq_cst);
    uint64_t version = 0;
    int64_t expires_in = 0;  // ms until the live entry expires, 0 = never
    {
      ReaderLock l(&s.mu);
      auto it = s.map.find(hk);
      const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
      if (it != s.map.end() && !IsExpired(it->second, now)) {
        const Entry& e = it->second;
        version = e.version;
        if (e.expires_at != 0) expires_in = e.expires_at - now;
        if (version != last_version && e.type == ValueType::kString) {
          r->found = true;
          frame = e.value;
          compressed = e.compressed;
          original_size = e.OriginalSize();
        }
      }
    }
    r->version = version;
    if (version != last_version) {
      r->changed = true;
      break;
    }
    const auto steady_now = Steady::now();
    if (steady_now >= deadline) break;
    auto wake_at = deadline;
    if (expires_in > 0) {  // its expiry moves the version too
      wake_at = std::min(wake_at, steady_now + std::chrono::milliseconds(expires_in));
    }
    std::unique_lock<std::mutex> l(s.wait_mu);
    s.wait_cv.wait_until(l, wake_at, [&] {
      return s.wake_seq.load(std::memory_order_seq_cst) != seq;
    });
  }
  s.waiters.fetch_sub(1, std::memory_order_seq_cst);

  if (!r->found) return Status::kOk;
  return EmitString(frame, compressed, original_size, &r->value);
}

Status Store::Impl::Inspect(std::string_view key, EntryInfo* info) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
    return Status::kNotFound;
  }
  const Entry& e = it->second;
  info->type = e.type;
  info->compressed = e.compressed;
  info->value_size = ValueSize(e);
  info->stored_size = e.value.size();
  info->mem_size = e.mem_size;
  info->version = e.version;
  info->expires_at_ms = e.expires_at;
  info->stamp = e.stamp;
  info->pinned = e.pinned;
  return Status::kOk;
}

StoreStats Store::Impl::Stats() const {
  StoreStats st;
  st.memory_limit = memory_limit_.load(std::memory_order_relaxed);
  st.databases.resize(options_.databases);
  for (size_t i = 0; i < total_shards_; ++i) {
    Shard& s = shards_[i];
    StoreStats::Database& db = st.databases[DbOf(s)];
    st.expired += s.expired.load(std::memory_order_relaxed);
    st.evicted += s.evicted.load(std::memory_order_relaxed);
    st.changes += s.changes.load(std::memory_order_relaxed);
    ReaderLock l(&s.mu);
    const int64_t now = clock_->NowMs();
    const uint64_t live = LiveCountLocked(s, now);
    st.keys += live;
    st.keys_with_ttl += s.ttl.size() - (s.map.size() - live);
    db.keys += live;
    db.keys_with_ttl += s.ttl.size() - (s.map.size() - live);
    st.compressed_values += s.compressed_values;
    st.compressed_original_bytes += s.compressed_original;
    st.compressed_stored_bytes += s.compressed_stored;
    // Locks that expired but were not removed yet are absent: not counted.
    uint64_t pinned_keys = s.pinned_keys, pinned_bytes = s.pinned_bytes;
    for (auto t = s.ttl.begin(); pinned_keys > 0 && t != s.ttl.end() && t->at <= now; ++t) {
      auto it = s.map.find(std::string_view(*t->key));
      if (it != s.map.end() && it->second.pinned) {
        pinned_keys--;
        pinned_bytes -= it->second.mem_size;
      }
    }
    st.pinned_keys += pinned_keys;
    st.pinned_bytes += pinned_bytes;
  }
  st.hits = counters_.hits();
  st.misses = counters_.misses();
  st.memory_used = MemoryUsed();
  return st;
}

uint64_t Store::Impl::LiveCountLocked(const Shard& s, int64_t now) {
  uint64_t expired = 0;
  for (auto it = s.ttl.begin(); it != s.ttl.end() && it->at <= now; ++it) ++expired;
  return s.map.size() - expired;
}

Status Store::Impl::SetExpiryLocked(Shard& s, Map::iterator it, int64_t at_ms) {
  Entry& e = it->second;
  if (e.expires_at != at_ms) {
    if (at_ms != 0) {
      try {
        s.ttl.insert(TtlItem{at_ms, &it->first});
      } catch (const std::bad_alloc&) {
        return Status::kOutOfMemory;
      }
    }
    if (e.expires_at != 0) s.ttl.erase(TtlItem{e.expires_at, &it->first});
    // Adding or removing a TTL adds or removes an index item.
    const uint64_t ttl_part = EntryMem(it->first.size(), 0, true) - EntryMem(it->first.size(), 0, false);
    const uint64_t new_mem =
        at_ms != 0 && e.expires_at == 0   ? e.mem_size + ttl_part
        : at_ms == 0 && e.expires_at != 0 ? e.mem_size - ttl_part
                                          : e.mem_size;
    uint64_t unused = 0;
    Reserve(s, new_mem, e.mem_size, /*force=*/true, &unused);
    Release(s, new_mem, e.mem_size);
    TrackPinnedLocked(s, e, false);
    e.mem_size = new_mem;
    e.expires_at = at_ms;
    // A new TTL keeps a lock pinned; none unpins it, so that no pinned
    // entry can hold memory for ever.
    if (at_ms == 0) e.pinned = false;
    TrackPinnedLocked(s, e, true);
  }
  e.version = ++s.last_version;
  return Status::kOk;
}

Status Store::Impl::RenameLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                                 bool only_if_absent, bool* renamed, uint64_t* shortfall,
                                 bool* changed) {
  const int64_t now = clock_->NowMs();
  FindLiveForWriteLocked(a, hs, now, changed);
  auto dst = FindLiveForWriteLocked(b, hd, now, changed);
  auto src = a.map.find(hs);  // again: the reap of dst may share the table
  *renamed = false;
  if (src == a.map.end()) return Status::kNotFound;
  if (hs.key == hd.key && &a == &b) {  // Redis: RENAME k k is OK, RENAMENX k k is 0
    *renamed = !only_if_absent;
    return Status::kOk;
  }
  if (only_if_absent && dst != b.map.end()) return Status::kOk;

  const int64_t expires_at = src->second.expires_at;
  const uint64_t src_fence = src->second.pinned ? 0 : src->second.fence;
  const bool dst_existed = dst != b.map.end();
  const int64_t dst_old_expiry = dst_existed ? dst->second.expires_at : 0;
  // The entry's size with dst's key instead of src's.
  const uint64_t new_mem = src->second.mem_size - KeyMem(hs.key.size(), expires_at != 0) +
                           KeyMem(hd.key.size(), expires_at != 0);
  const uint64_t old_mem = src->second.mem_size + (dst_existed ? dst->second.mem_size : 0);
  const uint64_t old_pinned = (src->second.pinned ? src->second.mem_size : 0) +
                              (dst_existed && dst->second.pinned ? dst->second.mem_size : 0);
  bool ttl_inserted = false;
  Entry* de = nullptr;
  const bool installed = Transact(
      b, new_mem, old_mem, false, old_pinned, shortfall,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        // The node first: the index item points at its key.
        if (!dst_existed) {
          dst = EmplaceLocked(b, hd);
          src = a.map.find(hs);  // the insert may have rehashed a shared table
        }
        ttl_inserted = InsertTtlLocked(b, dst->first, expires_at, dst_old_expiry);
      },
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(b.mu) {
        if (ttl_inserted) b.ttl.erase(TtlItem{expires_at, &dst->first});
        if (!dst_existed && dst != b.map.end()) {  // made above, still empty
          b.map.erase(dst);
          dst = b.map.end();
        }
      },
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        Entry& se = src->second;
        TrackCompressedLocked(a, se, false);
        TrackPinnedLocked(a, se, false);
        if (expires_at != 0) a.ttl.erase(TtlItem{expires_at, &src->first});
        // A renamed lock is still a lock: the pin moves with the rest.
        FillLocked(b, dst, dst_existed, &se, new_mem, now);
        de = &dst->second;
        a.map.erase(src);
      });
  if (!installed) return Status::kOutOfMemory;
  // The data moved, but src keeps the fence recorded for it (a stale
  // fenced writer to src is still refused).
  if (src_fence != 0) RecordFenceLocked(a, hs.key, src_fence);
  PublishLocked(a, Mutation::Kind::kDelete, hs.key, nullptr, /*log=*/true, src_fence);
  PublishLocked(b, Mutation::Kind::kSet, hd.key, de);
  *renamed = true;
  *changed = true;
  return Status::kOk;
}

// ---------------------------------------------------------------------------
// SWAPDB, COPY, OBJECT.

Status Store::Impl::SwapDb(uint32_t a, uint32_t b) {
  if (a >= options_.databases || b >= options_.databases || options_.replicator != nullptr) {
    return Status::kInvalidArgument;
  }
  if (a == b) return Status::kOk;
  const size_t per_db = shard_mask_ + 1;
  std::vector<Shard*> all;
  all.reserve(2 * per_db);
  for (size_t i = 0; i < per_db; ++i) {
    all.push_back(&shards_[a * per_db + i]);
    all.push_back(&shards_[b * per_db + i]);
  }
  // Inside an atomic section every one of them must be the section's:
  // locking another would break the lock order.
  if (section::Active()) {
    for (Shard* s : all) {
      if (!section::Holds(&s->mu)) return Status::kInvalidArgument;
    }
  }
  {
    // Both databases at once (no-ops for the shards an atomic section of
    // this thread holds), the log records written inside: a write to either
    // database is before the swap in both the store and the log, or after
    // it in both.
    MultiLock l(this, all);
    for (size_t i = 0; i < per_db; ++i) {
      SwapShardsLocked(shards_[a * per_db + i], shards_[b * per_db + i]);
    }
    if (engine_ != nullptr) {
      LogDatabaseLocked(a);
      LogDatabaseLocked(b);
    }
  }
  for (Shard* s : all) Notify(*s);
  return Status::kOk;
}

void Store::Impl::SwapShardsLocked(Shard& x, Shard& y) {
  // Redis 7.0 (touchAllWatchedKeysInDb): a watched key changes when it
  // exists in either database.
  for (auto& [k, w] : x.watched) {
    if (x.map.find(k) != x.map.end() || y.map.find(k) != y.map.end()) ++w.touched;
  }
  for (auto& [k, w] : y.watched) {
    if (x.map.find(k) != x.map.end() || y.map.find(k) != y.map.end()) ++w.touched;
  }
  // The pinned bytes change shards below: both must count the same way
  // (a SetMemoryLimit may be half way); counting globally is always exact.
  if (x.count_globally != y.count_globally) {
    CountGloballyLocked(x, true);
    CountGloballyLocked(y, true);
  }
  x.map.swap(y.map);
  x.ttl.swap(y.ttl);
  x.evict_cursor.swap(y.evict_cursor);
  std::swap(x.has_evict_cursor, y.has_evict_cursor);
  std::swap(x.compressed_values, y.compressed_values);
  std::swap(x.compressed_original, y.compressed_original);
  std::swap(x.compressed_stored, y.compressed_stored);
  std::swap(x.pinned_keys, y.pinned_keys);
  std::swap(x.pinned_bytes, y.pinned_bytes);
  x.tombstones.swap(y.tombstones);
  x.tombstone_order.swap(y.tombstone_order);
  x.fence_records.swap(y.fence_records);
  // Every key of both changed: each gets a version newer than any either
  // shard gave, so that a waiter on it (WaitForChange) sees the change.
  const uint64_t top = std::max(x.last_version, y.last_version);
  x.last_version = y.last_version = top;
  for (auto& kv : x.map) kv.second.version = ++x.last_version;
  for (auto& kv : y.map) kv.second.version = ++y.last_version;
}

void Store::Impl::LogDatabaseLocked(uint32_t d) {
  Mutation flush;
  flush.kind = Mutation::Kind::kFlush;
  flush.db = d;
  LogLocked(flush);
  const size_t per_db = shard_mask_ + 1;
  std::string encoded;
  for (size_t i = 0; i < per_db; ++i) {
    Shard& s = shards_[d * per_db + i];
    for (const auto& [k, e] : s.map) {
      if (e.ephemeral) continue;  // never logged (Entry::ephemeral)
      Mutation m;
      m.kind = Mutation::Kind::kSet;
      m.key = k;
      DescribeEntry(e, &m, &encoded);
      m.stamp = e.stamp;
      m.db = d;
      LogLocked(m);
    }
  }
}

Status Store::Impl::Copy(std::string_view src, std::string_view dst, uint32_t dst_db,
                         bool replace, bool* copied) {
  *copied = false;
  if (!KeyOk(src) || !KeyOk(dst) || dst_db >= options_.databases) {
    return Status::kInvalidArgument;
  }
  if (src == dst && dst_db == db_scope::Current(this)) return Status::kInvalidArgument;
  const HashedKey hs = HashKey(src), hd = HashKey(dst);
  Shard& a = ShardFor(hs);
  Shard& b = shards_[dst_db * (shard_mask_ + 1) + (hd.shard_hash & shard_mask_)];
  // Inside an atomic section both shards must be the section's (a copy to
  // another database it does not hold is refused, not locked).
  if (section::Active() && (!section::Holds(&a.mu) || !section::Holds(&b.mu))) {
    return Status::kInvalidArgument;
  }
  return WithEviction<Status>([&](uint64_t* shortfall) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    PairWrite w(this, &a, &b);
    const int64_t now = clock_->NowMs();
    FindLiveForWriteLocked(a, hs, now, &w.changed_a);
    auto to = FindLiveForWriteLocked(b, hd, now, &w.changed_b);
    auto from = a.map.find(hs);  // again: the reap of dst may share the table
    if (from == a.map.end()) return Status::kOk;
    if (to != b.map.end() && !replace) return Status::kOk;
    // The copy, built before anything changes (a deep copy of the
    // container through its encoding, which also gives its exact size).
    Entry fresh;
    try {
      Mutation m;
      m.key = dst;
      std::string encoded;
      DescribeEntry(from->second, &m, &encoded);
      m.pinned = m.ephemeral = false;
      m.fence = 0;
      if (!EntryFromMutation(m, &fresh)) return Status::kInvalidArgument;
    } catch (const std::bad_alloc&) {
      return Status::kOutOfMemory;
    }
    if (!InstallLocked(b, &to, hd, &fresh, /*force=*/false, now, shortfall)) {
      return Status::kOutOfMemory;
    }
    PublishLocked(b, Mutation::Kind::kSet, dst, &to->second);
    w.changed_b = true;
    *copied = true;
    return Status::kOk;
  });
}

Status Store::Impl::Object(std::string_view key, Store::ObjectShape* shape) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  const int64_t now = clock_->NowMs();
  if (it == s.map.end() || IsExpired(it->second, now)) return Status::kNotFound;
  const Entry& e = it->second;
  *shape = Store::ObjectShape{};
  shape->type = e.type;
  shape->idle_ms = e.last_access.IdleMs(now);
  auto longest = [&](size_t n) { shape->longest = std::max<uint64_t>(shape->longest, n); };
  switch (e.type) {
    case ValueType::kString: {
      shape->size = e.OriginalSize();
      std::string text;
      // An integer has at most 20 characters.
      shape->integers = ReadSmallLocked(e, 20, &text) && ParseInt64(text, &shape->integer);
      break;
    }
    case ValueType::kHash:
      shape->size = e.hash()->size();
      for (const auto& [f, v] : *e.hash()) {
        longest(f.size());
        longest(v.size());
      }
      break;
    case ValueType::kList:
      shape->size = e.list()->items.size();
      for (const auto& v : e.list()->items) longest(v.size());
      break;
    case ValueType::kSet: {
      shape->size = e.set()->size();
      shape->integers = true;
      int64_t unused = 0;
      for (const auto& [m, pos] : e.set()->index) {
        longest(m.size());
        if (shape->integers && !ParseInt64(m, &unused)) shape->integers = false;
      }
      break;
    }
    case ValueType::kZSet:
      shape->size = e.zset()->size();
      for (const auto& [m, score] : e.zset()->scores) longest(m.size());
      break;
  }
  return Status::kOk;
}

}  // namespace ephpm
