// Replication: publishing a change (stamped, under the shard lock), applying
// a replicated one, tombstones, flush stamps, tentative writes
// (ConfirmLocal, ForgetLocal) and the full-sync walk.

#include "store_impl.h"

namespace ephpm {

// The replication encoding of a hash (see Mutation::value).
std::string EncodeHash(const HashFields& h) {
  std::string out;
  auto put_len = [&out](size_t n) {
    const uint32_t v = static_cast<uint32_t>(n);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  for (const auto& [f, v] : h) {
    put_len(f.size());
    out.append(f);
    put_len(v.size());
    out.append(v);
  }
  return out;
}

// The inverse of EncodeHash; false on a malformed encoding.
bool DecodeHash(std::string_view in, HashFields* out) {
  auto get_len = [&in](uint32_t* n) {
    if (in.size() < 4) return false;
    *n = 0;
    for (int i = 0; i < 4; ++i) *n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(4);
    return in.size() >= *n;
  };
  while (!in.empty()) {
    uint32_t fl = 0, vl = 0;
    if (!get_len(&fl)) return false;
    std::string field(in.substr(0, fl));
    in.remove_prefix(fl);
    if (!get_len(&vl)) return false;
    (*out)[std::move(field)] = std::string(in.substr(0, vl));
    in.remove_prefix(vl);
  }
  return true;
}

std::string EncodedValue(const Entry& e) {
  switch (e.type) {
    case ValueType::kString: return std::string(e.value.view());
    case ValueType::kHash: return EncodeHash(*e.hash());
    case ValueType::kList: return EncodeList(*e.list());
    case ValueType::kSet: return EncodeSet(*e.set());
    case ValueType::kZSet: return EncodeZSet(*e.zset());
  }
  return std::string(e.value.view());
}

uint64_t ValueSize(const Entry& e) {
  switch (e.type) {
    case ValueType::kString: return e.OriginalSize();
    case ValueType::kHash: return e.hash()->size();
    case ValueType::kList: return e.list()->items.size();
    case ValueType::kSet: return e.set()->size();
    case ValueType::kZSet: return e.zset()->size();
  }
  return 0;
}

void DescribeEntry(const Entry& e, Mutation* m, std::string* encoded) {
  m->type = e.type;
  if (e.type == ValueType::kString) {
    m->value = e.value;
  } else {
    *encoded = EncodedValue(e);
    m->value = *encoded;
  }
  m->compressed = e.compressed;
  m->original_size = e.OriginalSize();
  m->expires_at_ms = e.expires_at;
  m->version = e.version;
  m->pinned = e.pinned;
  m->ephemeral = e.ephemeral;
  m->fence = e.fence;
}

bool EntryFromMutation(const Mutation& m, Entry* fresh) {
  fresh->type = m.type;
  fresh->expires_at = m.expires_at_ms;
  fresh->stamp = m.stamp;
  if (m.type == ValueType::kHash) {
    fresh->Hold(std::make_unique<HashFields>());
    if (!DecodeHash(m.value, fresh->hash())) return false;
    uint64_t fields = 0;
    for (const auto& [f, v] : *fresh->hash()) fields += FieldMem(f.size(), v.size());
    fresh->mem_size = HashEntryMem(m.key.size(), fields, fresh->expires_at != 0);
    return true;
  }
  if (m.type != ValueType::kString) {
    uint64_t elements = 0;
    bool ok = false;
    uint64_t (*entry_mem)(size_t, uint64_t, bool) = nullptr;
    switch (m.type) {
      case ValueType::kList:
        fresh->Hold(std::make_unique<ListValue>());
        ok = DecodeList(m.value, fresh->list(), &elements) && !fresh->list()->items.empty();
        entry_mem = ListEntryMem;
        break;
      case ValueType::kSet:
        fresh->Hold(std::make_unique<SetValue>());
        ok = DecodeSet(m.value, fresh->set(), &elements) && fresh->set()->size() > 0;
        entry_mem = SetEntryMem;
        break;
      case ValueType::kZSet:
        fresh->Hold(std::make_unique<ZSetValue>());
        ok = DecodeZSet(m.value, fresh->zset(), &elements) && fresh->zset()->size() > 0;
        entry_mem = ZSetEntryMem;
        break;
      default:
        break;
    }
    if (!ok) return false;
    fresh->mem_size = entry_mem(m.key.size(), elements, fresh->expires_at != 0);
    return true;
  }
  // No value this store accepts is longer (ValueBuf keeps the length in 32
  // bits), and the size a compressed value reads back is its frame's
  // (Entry::OriginalSize): refused before anything is copied.
  const uint64_t original = m.compressed ? m.original_size : m.value.size();
  if (original > kMaxValueSizeLimit) return false;
  if (m.compressed && ZstdContentSize(m.value) != m.original_size) return false;
  fresh->value = ValueBuf(m.value);  // exactly its length, as accounted
  fresh->compressed = m.compressed;
  fresh->mem_size = EntryMem(m.key.size(), fresh->value.size(), fresh->expires_at != 0);
  // A lock stays pinned wherever it is held: should this node become the
  // owner (or the one that loaded it), it must not have evicted it.
  fresh->pinned = m.pinned && fresh->expires_at != 0;
  fresh->ephemeral = m.ephemeral;
  fresh->fence = m.fence;
  return true;
}

void Store::Impl::RaiseFlushStamp(Stamp stamp) {
  MutexLock l(&flush_mu_);
  if (flush_stamp_ < stamp) flush_stamp_ = stamp;
}

Stamp Store::Impl::FlushStamp() const {
  MutexLock l(&flush_mu_);
  return flush_stamp_;
}

void Store::Impl::ClearOlderThanLocked(Shard& s, Stamp stamp) {
  TouchWatchedPresentLocked(s);
  for (auto it = s.map.begin(); it != s.map.end();) {
    auto next = std::next(it);
    if (it->second.stamp < stamp) RemoveLocked(s, it);
    it = next;
  }
  for (auto it = s.tombstones.begin(); it != s.tombstones.end();) {
    auto next = std::next(it);
    if (it->second.stamp < stamp) {
      AccountTombstone(s, it->first.size(), false);
      s.tombstones.erase(it);
    }
    it = next;
  }
  s.has_evict_cursor = false;
}

bool Store::Impl::ApplyReplicated(const Mutation& m) {
  if (m.kind == Mutation::Kind::kFlush) {
    if (!(FlushStamp() < m.stamp)) return false;
    FlushAll(m);
    return true;
  }
  if (m.kind == Mutation::Kind::kFenceMark || !KeyOk(m.key)) return false;
  // A lock granted elsewhere: later grants here must pass its fence.
  if (m.pinned && m.fence != 0) ObserveFence(m.fence);
  // The new state, built outside the lock.
  Entry fresh;
  const bool removal = m.kind == Mutation::Kind::kDelete;
  if (!removal && !EntryFromMutation(m, &fresh)) return false;
  const HashedKey hk = HashKey(m.key);
  Shard& s = ShardFor(hk);
  ShardWrite w(&s);
  // The fence a deleted key kept: records only ever rise, so it is kept
  // whatever the stamps say.
  if (removal && m.fence != 0) RecordFenceLocked(s, m.key, m.fence);
  if (!(FlushStamp() < m.stamp)) return false;  // a later flush removed it
  const int64_t now = clock_->NowMs();
  auto it = s.map.find(hk);
  Stamp current;
  if (it != s.map.end()) {
    current = it->second.stamp;
  } else if (auto t = s.tombstones.find(hk); t != s.tombstones.end()) {
    current = t->second.stamp;
  }
  if (!(current < m.stamp)) return false;  // this node has the same or newer
  if (removal || (fresh.expires_at != 0 && fresh.expires_at <= now)) {
    if (it != s.map.end()) RemoveLocked(s, it);
    TombstoneLocked(s, m.key, m.stamp, now);
    Mutation d;
    d.kind = Mutation::Kind::kDelete;
    d.key = m.key;
    d.stamp = m.stamp;
    d.fence = removal ? m.fence : 0;
    LogLocked(d);
  } else {
    uint64_t unused = 0;
    if (!InstallLocked(s, &it, hk, &fresh, /*force=*/true, now, &unused)) return false;
    ForgetTombstoneLocked(s, m.key);
    if (!m.ephemeral) {
      Mutation l = m;  // a replicated expire carries the whole state: a set here
      l.kind = Mutation::Kind::kSet;
      LogLocked(l);
    }
  }
  w.changed = true;
  return true;
}

void Store::Impl::ForgetLocal(std::string_view key, const Stamp& stamp) {
  if (!KeyOk(key)) return;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ShardWrite w(&s);
  auto it = s.map.find(hk);
  if (it != s.map.end() && it->second.stamp == stamp) {
    RemoveLocked(s, it);
    LogRemovalLocked(s, key);  // the key is absent again
    w.changed = true;
  }
  auto t = s.tombstones.find(hk);
  if (t != s.tombstones.end() && t->second.stamp == stamp) ForgetTombstoneLocked(s, key);
}

void Store::Impl::ConfirmLocal(std::string_view key, const Stamp& stamp) {
  if (!KeyOk(key)) return;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  WriterLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it != s.map.end() && it->second.stamp == stamp) it->second.tentative = false;
  auto t = s.tombstones.find(hk);
  if (t != s.tombstones.end() && t->second.stamp == stamp) t->second.tentative = false;
}

void Store::Impl::ForEachForSync(absl::FunctionRef<void(const Mutation&)> fn) const {
  const Stamp flushed = FlushStamp();
  if (!flushed.empty()) {
    Mutation m;
    m.kind = Mutation::Kind::kFlush;
    m.stamp = flushed;
    fn(m);
  }
  for (size_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[i];
    ReaderLock l(&s.mu);
    const int64_t now = clock_->NowMs();
    for (const auto& [k, e] : s.map) {
      if (IsExpired(e, now) || e.tentative) continue;
      Mutation m;
      m.kind = Mutation::Kind::kSet;
      m.key = k;
      std::string encoded;
      DescribeEntry(e, &m, &encoded);
      m.stamp = e.stamp;
      fn(m);
    }
    for (const auto& [k, t] : s.tombstones) {
      if (t.tentative) continue;
      Mutation m;
      m.kind = Mutation::Kind::kDelete;
      m.key = k;
      m.stamp = t.stamp;
      auto r = s.fence_records.find(std::string_view(k));
      if (r != s.fence_records.end()) m.fence = r->second;
      fn(m);
    }
    // The fences of deleted keys whose tombstone is gone (or was never
    // made): unstamped, so a receiver records the fence and changes nothing
    // else (ApplyReplicated).
    for (const auto& [k, fence] : s.fence_records) {
      if (s.tombstones.find(std::string_view(k)) != s.tombstones.end()) continue;
      Mutation m;
      m.kind = Mutation::Kind::kDelete;
      m.key = k;
      m.fence = fence;
      fn(m);
    }
  }
}

uint64_t Store::Impl::TombstoneCount() const {
  uint64_t n = 0;
  for (size_t i = 0; i <= shard_mask_; ++i) {
    ReaderLock l(&shards_[i].mu);
    n += shards_[i].tombstones.size();
  }
  return n;
}

void Store::Impl::AccountTombstone(Shard& s, size_t key_len, bool add) {
  const uint64_t m = TombstoneMem(key_len);
  if (add) {
    AddUsedLocked(s, static_cast<int64_t>(m));
    tombstone_used_.fetch_add(m, std::memory_order_relaxed);
  } else {
    AddUsedLocked(s, -static_cast<int64_t>(m));
    tombstone_used_.fetch_sub(m, std::memory_order_relaxed);
  }
}

void Store::Impl::PublishMutationLocked(Shard& s, Mutation::Kind kind, std::string_view key,
                                        Entry* e, bool log, uint64_t fence) {
  Mutation m;
  m.kind = kind;
  m.key = key;
  m.fence = fence;
  m.db = DbOf(s);
  // A cluster has database 0 only (RESP refuses SELECT there).
  if (options_.replicator != nullptr && m.db == 0) {
    m.stamp = options_.replicator->NextStamp();
    const bool tentative = options_.replicator->Tentative();
    if (e != nullptr) {
      e->stamp = m.stamp;
      e->tentative = tentative;
      ForgetTombstoneLocked(s, key);
    } else if (kind == Mutation::Kind::kDelete) {
      TombstoneLocked(s, key, m.stamp, clock_->NowMs(), tentative);
    }
  }
  std::string encoded;
  if (e != nullptr) DescribeEntry(*e, &m, &encoded);
  if (options_.replicator != nullptr && m.db == 0) options_.replicator->Publish(m);
  if (engine_ == nullptr || !log || (e != nullptr && e->ephemeral)) return;
  if (kind == Mutation::Kind::kExpire) m.value = {};  // the log's expire is the expiry alone
  LogLocked(m);
}

void Store::Impl::TombstoneLocked(Shard& s, std::string_view key, Stamp stamp, int64_t now,
                                  bool tentative) {
  if (options_.replicator == nullptr) return;
  try {
    auto [t, inserted] =
        s.tombstones.try_emplace(std::string(key), Tombstone{stamp, now, tentative});
    if (!inserted) {
      if (t->second.stamp < stamp) t->second = Tombstone{stamp, now, tentative};
    } else {
      AccountTombstone(s, key.size(), true);
    }
    s.tombstone_order.emplace_back(now, std::string(key));
  } catch (const std::bad_alloc&) {
  }
}

void Store::Impl::ForgetTombstoneLocked(Shard& s, std::string_view key) {
  auto t = s.tombstones.find(key);
  if (t == s.tombstones.end()) return;
  AccountTombstone(s, key.size(), false);
  s.tombstones.erase(t);
}

void Store::Impl::CollectTombstonesLocked(Shard& s, int64_t now) {
  while (!s.tombstone_order.empty() &&
         s.tombstone_order.front().first + options_.tombstone_ttl_ms <= now) {
    const auto& [at, key] = s.tombstone_order.front();
    auto t = s.tombstones.find(std::string_view(key));
    if (t != s.tombstones.end() && t->second.at_ms == at) {
      AccountTombstone(s, key.size(), false);
      s.tombstones.erase(t);
    }
    s.tombstone_order.pop_front();
  }
}

}  // namespace ephpm
