// The store's side of durability (docs/PERSISTENCE.md): opening the data
// dir and applying what it holds, logging under the key's lock, the
// snapshot walk, the write gate and the wait for durability, and the offline
// check behind `ephpm --check-data`.  The files themselves are the engine's
// (persist.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/send_cork.h"
#include "persist.h"
#include "store_impl.h"

namespace ephpm {

namespace {

// The last record this thread appended, and to which engine: WaitDurable
// waits for it.  A thread that used another store since waits for nothing
// here (its record went to that store's log).  `waited` is the last one
// already waited for, successfully or not: a failure is reported to the
// call that made the change, not again to every later call that logged
// nothing (a lock's release on a full disk).
struct LastAppend {
  const persist::Engine* engine = nullptr;
  uint64_t seq = 0;
  uint64_t waited = 0;
};
thread_local LastAppend tl_last_append;

// An entry copied out of a shard for a snapshot, so that it can be written
// with the shard's lock released.
struct Copied {
  Mutation::Kind kind = Mutation::Kind::kSet;
  std::string key;
  std::string value;  // as stored (a hash: its encoding)
  ValueType type = ValueType::kString;
  bool compressed = false;
  bool pinned = false;
  uint64_t original_size = 0;
  int64_t expires_at_ms = 0;
  Stamp stamp;
  uint64_t fence = 0;
};

// This thread's open log group (Store::Impl::OpenLogGroup).
struct OpenGroup {
  const void* impl = nullptr;  // the Store::Impl, null: none open
  int depth = 0;                      // scopes open; only the outermost counts
  std::vector<size_t> held;           // shard indices, sorted
  std::string records;                // encoded, back to back
  size_t count = 0;
};
thread_local OpenGroup tl_group;

}  // namespace

void Store::Impl::OpenLogGroup(std::vector<size_t> held) const {
  OpenGroup& g = tl_group;
  if (g.depth++ > 0) return;  // nested (a lock helper inside a section)
  if (engine_ == nullptr) return;
  g.impl = this;
  g.held = std::move(held);
  std::sort(g.held.begin(), g.held.end());
}

void Store::Impl::CloseLogGroup() const {
  OpenGroup& g = tl_group;
  if (--g.depth > 0 || g.impl != this) return;
  g.impl = nullptr;
  if (g.count == 0) return;
  LastAppend& last = tl_last_append;
  if (last.engine != engine_.get()) last = LastAppend{engine_.get(), 0, 0};
  last.seq = engine_->AppendGroup(g.records, g.count);
  g.count = 0;
  g.records.clear();
  if (g.records.capacity() > (1u << 20)) std::string().swap(g.records);
}

void Store::Impl::LogLocked(const Mutation& m) {
  if (engine_ == nullptr) return;
  OpenGroup& g = tl_group;
  if (g.impl == this && m.kind != Mutation::Kind::kFenceMark) {
    // Kept for the group when the group holds the record's shard(s).
    bool held = true;
    if (m.kind == Mutation::Kind::kFlush) {
      const size_t per_db = shard_mask_ + 1;
      for (size_t i = 0; i < per_db && held; ++i) {
        held = std::binary_search(g.held.begin(), g.held.end(), m.db * per_db + i);
      }
    } else {
      held = std::binary_search(g.held.begin(), g.held.end(), ShardIndex(m.db, m.key));
    }
    if (held) {
      persist::EncodeRecord(m, &g.records);
      ++g.count;
      return;
    }
  }
  LastAppend& last = tl_last_append;
  if (last.engine != engine_.get()) last = LastAppend{engine_.get(), 0, 0};
  last.seq = engine_->Append(m);
}

void Store::Impl::ApplyRecovered(const Mutation& m) {
  if (m.db >= options_.databases) {
    // As Redis with an RDB of more databases than it has: refuse to start
    // rather than drop the keys.
    if (load_error_.empty()) {
      load_error_ = "the data dir holds keys of database " + std::to_string(m.db) +
                    ", but this store has " + std::to_string(options_.databases) +
                    " databases (raise --databases)";
    }
    return;
  }
  if (m.kind == Mutation::Kind::kFlush) {
    FlushAll(m);
    return;
  }
  Store::DatabaseScope scope(this, m.db);
  if (m.kind == Mutation::Kind::kFenceMark) {
    // A key-less mark is the fence clock's; "floor" is the fence floor.
    if (m.key == kFloorMarkKey) {
      RaiseFenceFloor(m.fence);
    } else {
      ObserveFence(m.fence);
    }
    return;
  }
  if (m.pinned && m.fence != 0) ObserveFence(m.fence);
  if (!KeyOk(m.key)) return;
  const HashedKey hk = HashKey(m.key);
  Shard& s = ShardFor(hk);
  const int64_t now = clock_->NowMs();
  // Records are applied as they say even when their expiry has passed: a
  // later record may change it (PERSIST after a SET with a TTL), and only
  // the state after the last one tells.  RemoveExpiredAfterLoad drops what
  // is then expired.
  if (m.kind == Mutation::Kind::kSet) {
    Entry fresh;  // built outside the lock
    // The engine checked the record's checksum, so an aggregate that does
    // not decode (or a value longer than any the store accepts) was written
    // so by a store with a bug: said, and skipped.
    if (!EntryFromMutation(m, &fresh)) {
      std::fprintf(stderr, "ephpm: the record of a key of %zu bytes does not decode; "
                   "skipped\n", m.key.size());
      return;
    }
    ShardWrite w(&s);
    auto it = s.map.find(hk);
    uint64_t unused = 0;
    // force: what was stored before the restart is loaded whatever the
    // memory limit says now; eviction makes room afterwards.
    InstallLocked(s, &it, hk, &fresh, /*force=*/true, now, &unused);
    ForgetTombstoneLocked(s, m.key);
    w.changed = true;
    return;
  }
  ShardWrite w(&s);
  auto it = s.map.find(hk);
  if (m.kind == Mutation::Kind::kExpire) {
    if (it == s.map.end()) return;
    SetExpiryLocked(s, it, m.expires_at_ms);
    w.changed = true;
    return;
  }
  if (it != s.map.end()) RemoveLocked(s, it);
  if (m.fence != 0) RecordFenceLocked(s, m.key, m.fence);
  if (!m.stamp.empty()) TombstoneLocked(s, m.key, m.stamp, now);
  w.changed = true;
}

uint64_t Store::Impl::RemoveExpiredAfterLoad() {
  uint64_t removed = 0;
  for (bool more = true; more;) {
    more = false;
    removed += Sweep(1024, &more);
  }
  return removed;
}

void Store::Impl::SnapshotWalk(absl::FunctionRef<void(const Mutation&)> emit) const {
  const Stamp flushed = FlushStamp();
  if (!flushed.empty()) {
    Mutation m;
    m.kind = Mutation::Kind::kFlush;
    m.stamp = flushed;
    emit(m);
  }
  {
    // The fence clock's mark (a start resumes past it) and the floor.
    Mutation m;
    m.kind = Mutation::Kind::kFenceMark;
    {
      MutexLock l(&fence_mu_);
      m.fence = std::max(fence_last_, fence_reserved_);
    }
    if (m.fence != 0) emit(m);
    m.key = kFloorMarkKey;
    m.fence = FenceFloor();
    if (m.fence != 0) emit(m);
  }
  std::vector<Copied> copied;
  for (size_t i = 0; i < total_shards_; ++i) {
    copied.clear();
    {
      Shard& s = shards_[i];
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      copied.reserve(s.fence_records.size() + s.map.size() + s.tombstones.size());
      // Records first: a lock's entry may share its key with a record,
      // and a record applied after it would remove it.
      for (const auto& [k, fence] : s.fence_records) {
        Copied c;
        c.kind = Mutation::Kind::kDelete;
        c.key = k;
        c.fence = fence;
        copied.push_back(std::move(c));
      }
      for (const auto& [k, e] : s.map) {
        if (IsExpired(e, now) || e.ephemeral) continue;
        Copied c;
        c.key = k;
        c.type = e.type;
        c.value = EncodedValue(e);
        c.compressed = e.compressed;
        c.pinned = e.pinned;
        c.original_size = e.OriginalSize();
        c.expires_at_ms = e.expires_at;
        c.stamp = e.stamp;
        c.fence = e.fence;
        copied.push_back(std::move(c));
      }
      for (const auto& [k, t] : s.tombstones) {
        Copied c;
        c.kind = Mutation::Kind::kDelete;
        c.key = k;
        c.stamp = t.stamp;
        copied.push_back(std::move(c));
      }
    }
    for (const Copied& c : copied) {
      Mutation m;
      m.kind = c.kind;
      m.key = c.key;
      m.type = c.type;
      m.value = c.value;
      m.compressed = c.compressed;
      m.pinned = c.pinned;
      m.original_size = c.original_size;
      m.expires_at_ms = c.expires_at_ms;
      m.stamp = c.stamp;
      m.fence = c.fence;
      m.db = DbOf(shards_[i]);
      emit(m);
    }
  }
}

bool Store::Impl::OpenPersistence(std::string* error) {
  persist::Engine::Options eo;
  eo.persistence = options_.persistence;
  // Without a lock (a SAVE may come from a thread that holds shards).
  eo.count_changes = [this] {
    uint64_t n = 0;
    for (size_t i = 0; i < total_shards_; ++i) {
      n += shards_[i].changes.load(std::memory_order_relaxed);
    }
    return n;
  };
  persist::LoadStats stats;
  const auto start = std::chrono::steady_clock::now();
  engine_ = persist::Engine::Open(
      eo, [this](const Mutation& m) { ApplyRecovered(m); }, &stats, error);
  if (engine_ == nullptr) return false;
  if (!load_error_.empty()) {
    *error = load_error_;
    engine_.reset();
    return false;
  }
  RemoveExpiredAfterLoad();
  load_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - start)
                 .count();
  loaded_keys_ = Stats().keys;
  engine_->SetSnapshotSource(
      [this](absl::FunctionRef<void(const Mutation&)> emit) { SnapshotWalk(emit); });
  return true;
}

Status Store::Impl::WritesAllowed() const {
  return engine_ != nullptr && engine_->Failed() ? Status::kPersistenceError : Status::kOk;
}

Status Store::Impl::WaitDurable() {
  LastAppend& last = tl_last_append;
  if (engine_ == nullptr || last.engine != engine_.get() || last.seq == last.waited) {
    return Status::kOk;
  }
  last.waited = last.seq;
  SendCork::Release();  // this thread's cluster frames do not wait for the disk
  return engine_->WaitDurable(last.seq);
}

Status Store::Impl::Rewrite(bool background, std::string* message) {
  if (engine_ == nullptr) {
    *message = "persistence is off (no data dir)";
    return Status::kInvalidArgument;
  }
  return engine_->Rewrite(background, message);
}

PersistenceInfo Store::Impl::persistence_info() const {
  PersistenceInfo info;
  if (engine_ == nullptr) return info;
  engine_->Info(&info);
  info.enabled = true;
  info.loaded_keys = loaded_keys_;
  info.load_ms = load_ms_;
  return info;
}

CheckDataReport CheckData(const std::string& data_dir, const StoreOptions& options) {
  CheckDataReport r;
  StoreOptions o = options;
  o.persistence = PersistenceOptions();  // the load below reads the dir; nothing writes it
  o.replicator = nullptr;
  o.sweep_interval_ms = 0;  // a private store: nothing runs beside the load
  std::string error;
  std::unique_ptr<Store> store = Store::Create(o, &error);
  if (store == nullptr) {
    r.error = error;
    return r;
  }
  Store::Impl* impl = store->impl_.get();
  persist::LoadStats stats;
  if (!persist::Load(
          data_dir, /*repair=*/false,
          [&](const Mutation& m) { impl->ApplyRecovered(m); },
          &stats, &error)) {
    r.error = error;
    return r;
  }
  if (!impl->load_error_.empty()) {
    r.error = impl->load_error_;
    return r;
  }
  r.ok = true;
  r.snapshot = stats.snapshot;
  r.snapshot_records = stats.snapshot_records;
  r.logs = stats.logs;
  r.log_records = stats.log_records;
  r.torn_file = stats.torn_file;
  r.torn_offset = stats.torn_offset;
  r.torn_bytes = stats.torn_bytes;
  r.expired = impl->RemoveExpiredAfterLoad();
  for (uint32_t db = 0; db < o.databases; ++db) {
    Store::DatabaseScope scope(*store, db);
    const uint64_t n = impl->DbSize();
    if (n == 0) continue;
    r.keys += n;
    r.keys_by_db.emplace_back(db, n);
  }
  impl->SnapshotWalk([&](const Mutation& m) {
    if (m.kind == Mutation::Kind::kSet) r.value_bytes += m.value.size();
  });
  return r;
}

CheckDataReport CheckData(const std::string& data_dir) { return CheckData(data_dir, StoreOptions()); }

}  // namespace ephpm
