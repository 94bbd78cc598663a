// The write machinery every family shares: preparing a value outside the
// lock, the all-or-nothing install of an entry, and removal on expiry.

#include "store_impl.h"

namespace ephpm {

void DeleteAggregate(uintptr_t bits) noexcept {
  void* p = reinterpret_cast<void*>(bits & ~Aggregate::kTagMask);
  switch (bits & Aggregate::kTagMask) {
    case Aggregate::kHashTag: delete static_cast<HashFields*>(p); break;
    case Aggregate::kListTag: delete static_cast<ListValue*>(p); break;
    case Aggregate::kSetTag: delete static_cast<SetValue*>(p); break;
    default: delete static_cast<ZSetValue*>(p); break;
  }
}

Prepared Store::Impl::Prepare(std::string_view value) const {
  Prepared p;
  if (options_.compression == Compression::kZstd &&
      value.size() >= options_.compression_threshold &&
      ZstdCompressIfSmaller(value, options_.compression_level, &p.stored)) {
    p.compressed = true;
    return p;
  }
  p.stored = ValueBuf(value);  // exactly its length, as accounted (ValueHeapMem)
  return p;
}

void Store::Impl::ExpireLocked(Shard& s, Map::iterator it, int64_t now) {
  if (options_.replicator != nullptr) TombstoneLocked(s, it->first, it->second.stamp, now);
  RemoveLocked(s, it);
  s.expired.fetch_add(1, std::memory_order_relaxed);
}

Status Store::Impl::PutLocked(Shard& s, Map::iterator it, const HashedKey& hk, Prepared* p,
                              int64_t expires_at, bool pinned, const WriteTime& now,
                              uint64_t* shortfall,
                              bool* changed) {
  Entry fresh;
  // A deferred value overwrites the entry's buffer when it fits, else is
  // copied here, under the lock: nothing has changed yet if that fails.  A
  // new key's value takes the shard's spare buffer when it is the chunk
  // the value needs.
  const bool in_place = p->deferred && it != s.map.end() && FitsInPlace(it->second, p->raw.size());
  if (!p->deferred) {
    fresh.value = std::move(p->stored);
  } else if (!in_place && it == s.map.end() && FitsBuffer(s.spare_value, p->raw.size())) {
    fresh.value = std::move(s.spare_value);
    fresh.value.Overwrite(p->raw);  // fits (FitsBuffer): no allocation
  } else if (!in_place) {
    try {
      fresh.value = ValueBuf(p->raw);  // exactly its length, as accounted
    } catch (const std::bad_alloc&) {
      return Status::kOutOfMemory;
    }
  }
  const size_t stored_len = in_place ? p->raw.size() : fresh.value.size();
  fresh.compressed = p->compressed;
  fresh.type = ValueType::kString;
  fresh.expires_at = expires_at;
  fresh.pinned = pinned && expires_at != 0;  // no TTL, no pin
  fresh.ephemeral = p->ephemeral;
  fresh.fence = p->fence;
  fresh.mem_size = EntryMem(hk.key.size(), stored_len, expires_at != 0);
  if (!InstallLocked(s, &it, hk, &fresh, /*force=*/false, now, shortfall,
                     in_place ? &p->raw : nullptr)) {
    // Kept for a retry after eviction (a deferred value is still the caller's).
    if (!p->deferred) p->stored = std::move(fresh.value);
    return Status::kOutOfMemory;
  }
  PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
  *changed = true;
  return Status::kOk;
}

bool Store::Impl::InstallLocked(Shard& s, Map::iterator* itp, const HashedKey& hk, Entry* fresh,
                                bool force, const WriteTime& now, uint64_t* shortfall,
                                const std::string_view* in_place) {
  Map::iterator& it = *itp;
  const bool exists = it != s.map.end();
  const uint64_t old_mem = exists ? it->second.mem_size : 0;
  const uint64_t old_pinned = exists && it->second.pinned ? old_mem : 0;
  const int64_t old_expiry = exists ? it->second.expires_at : 0;
  bool ttl_inserted = false;
  return Transact(
      s, fresh->mem_size, old_mem, force, old_pinned, shortfall,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        // The node first: the index item points at its key.
        if (!exists) it = EmplaceLocked(s, hk);
        ttl_inserted = InsertTtlLocked(s, it->first, fresh->expires_at, old_expiry);
      },
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        if (ttl_inserted) s.ttl.erase(TtlItem{fresh->expires_at, &it->first});
        if (!exists && it != s.map.end()) {  // made above, still empty
          s.map.erase(it);
          it = s.map.end();
        }
      },
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        TouchWatchedLocked(s, hk.key);
        FillLocked(s, it, exists, fresh, fresh->mem_size, now, in_place);
        it->second.tentative = fresh->tentative;
        it->second.stamp = fresh->stamp;
      });
}

bool Store::Impl::InsertTtlLocked(Shard& s, const Key& key, int64_t expires_at,
                                  int64_t old_expiry) {
  if (expires_at == 0 || expires_at == old_expiry) return false;
  return s.ttl.insert(TtlItem{expires_at, &key}).second;
}

Map::iterator Store::Impl::EmplaceLocked(Shard& s, const HashedKey& hk) {
  return s.map.lazy_emplace(hk, [&hk](const Map::constructor& ctor) {
    ctor(std::piecewise_construct, std::forward_as_tuple(hk.key), std::forward_as_tuple());
  });
}

void Store::Impl::FillLocked(Shard& s, Map::iterator it, bool existed, Entry* from,
                             uint64_t mem_size, const WriteTime& now,
                             const std::string_view* in_place) {
  Entry& e = it->second;
  // A recorded fence stays with the key through every later write (a lock's
  // grant does not: the next grant passes it anyway).  A new lock leaves
  // the key's record for the data written after it.
  uint64_t fence = from->fence;
  if (!from->pinned) {
    if (existed && !e.pinned) fence = std::max(fence, e.fence);
    if (!s.fence_records.empty()) {
      auto r = s.fence_records.find(std::string_view(it->first));
      if (r != s.fence_records.end()) {
        fence = std::max(fence, r->second);
        AddUsedLocked(s, -static_cast<int64_t>(FenceRecordMem(r->first.size())));
        tombstone_used_.fetch_sub(FenceRecordMem(r->first.size()), std::memory_order_relaxed);
        s.fence_records.erase(r);
      }
    }
  }
  if (existed) {
    TrackCompressedLocked(s, e, false);
    TrackPinnedLocked(s, e, false);
    if (e.expires_at != 0 && e.expires_at != from->expires_at) {
      s.ttl.erase(TtlItem{e.expires_at, &it->first});
    }
  }
  if (in_place != nullptr) {
    e.value.Overwrite(*in_place);  // fits (FitsInPlace): no allocation
  } else {
    e.value = std::move(from->value);
  }
  e.compressed = from->compressed;
  e.type = from->type;
  e.expires_at = from->expires_at;
  e.mem_size = mem_size;
  e.pinned = from->pinned;
  e.ephemeral = from->ephemeral;
  e.fence = fence;
  e.version = ++s.last_version;
  e.last_access.store(now.AccessMs(), std::memory_order_relaxed);
  TrackCompressedLocked(s, e, true);
  TrackPinnedLocked(s, e, true);
}

void Store::Impl::RecordFenceLocked(Shard& s, std::string_view key, uint64_t fence) {
  try {
    auto [r, inserted] = s.fence_records.try_emplace(std::string(key), fence);
    if (inserted) {
      AddUsedLocked(s, static_cast<int64_t>(FenceRecordMem(key.size())));
      tombstone_used_.fetch_add(FenceRecordMem(key.size()), std::memory_order_relaxed);
    } else {
      r->second = std::max(r->second, fence);
    }
  } catch (const std::bad_alloc&) {
    // Safe, if coarse: every fenced write must now reach this fence.
    RaiseFenceFloor(fence);
  }
}

uint64_t Store::Impl::RecordedFenceLocked(Shard& s, const HashedKey& hk, Map::iterator it) {
  uint64_t fence = fence_floor_.load(std::memory_order_acquire);
  if (it != s.map.end()) fence = std::max(fence, it->second.fence);
  if (!s.fence_records.empty()) {
    auto r = s.fence_records.find(hk);
    if (r != s.fence_records.end()) fence = std::max(fence, r->second);
  }
  return fence;
}

}  // namespace ephpm
