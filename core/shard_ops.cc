// The write machinery every family shares: preparing a value outside the
// lock, the all-or-nothing install of an entry, and removal on expiry.

#include "store_impl.h"

namespace ephpm {

Prepared Store::Impl::Prepare(std::string_view value) const {
  Prepared p;
  p.original_size = value.size();
  if (options_.compression == Compression::kZstd &&
      value.size() >= options_.compression_threshold &&
      ZstdCompressIfSmaller(value, options_.compression_level, &p.stored)) {
    p.compressed = true;
    return p;
  }
  p.stored.assign(value.data(), value.size());
  return p;
}

void Store::Impl::ExpireLocked(Shard& s, Map::iterator it, int64_t now) {
  if (options_.replicator != nullptr) TombstoneLocked(s, it->first, it->second.stamp, now);
  RemoveLocked(s, it);
  s.expired.fetch_add(1, std::memory_order_relaxed);
}

Status Store::Impl::PutLocked(Shard& s, Map::iterator it, const HashedKey& hk, Prepared* p,
                 int64_t expires_at, bool pinned, int64_t now, uint64_t* shortfall,
                 bool* changed) {
  Entry fresh;
  fresh.value = std::move(p->stored);
  fresh.original_size = p->original_size;
  fresh.compressed = p->compressed;
  fresh.type = ValueType::kString;
  fresh.expires_at = expires_at;
  fresh.pinned = pinned && expires_at != 0;  // no TTL, no pin
  fresh.mem_size = EntryMem(hk.key.size(), fresh.value.size(), expires_at != 0);
  if (!InstallLocked(s, &it, hk, &fresh, /*force=*/false, now, shortfall)) {
    p->stored = std::move(fresh.value);  // kept for a retry after eviction
    return Status::kOutOfMemory;
  }
  PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
  *changed = true;
  return Status::kOk;
}

bool Store::Impl::InstallLocked(Shard& s, Map::iterator* itp, const HashedKey& hk, Entry* fresh, bool force,
                   int64_t now, uint64_t* shortfall) {
  Map::iterator& it = *itp;
  const bool exists = it != s.map.end();
  const uint64_t old_mem = exists ? it->second.mem_size : 0;
  const uint64_t old_pinned = exists && it->second.pinned ? old_mem : 0;
  const int64_t old_expiry = exists ? it->second.expires_at : 0;
  const int64_t expires_at = fresh->expires_at;
  const uint64_t new_mem = fresh->mem_size;
  if (!Reserve(new_mem, old_mem, force, shortfall, old_pinned)) return false;

  // The steps that allocate come first, and are undone if one throws.
  bool ttl_inserted = false;
  try {
    if (expires_at != 0 && expires_at != old_expiry) {
      ttl_inserted = s.ttl.insert(TtlItem{expires_at, std::string(hk.key)}).second;
    }
    if (!exists) {
      it = s.map.lazy_emplace(hk, [&hk](const Map::constructor& ctor) {
        ctor(std::piecewise_construct, std::forward_as_tuple(hk.key), std::forward_as_tuple());
      });
    }
  } catch (const std::bad_alloc&) {
    if (ttl_inserted) s.ttl.erase(TtlRef{expires_at, hk.key});
    Unreserve(new_mem, old_mem);
    *shortfall = 0;
    return false;
  }

  // Nothing below allocates.
  Entry& e = it->second;
  if (exists) {
    TrackCompressedLocked(s, e, false);
    TrackPinnedLocked(s, e, false);
    if (old_expiry != 0 && old_expiry != expires_at) s.ttl.erase(TtlRef{old_expiry, it->first});
  }
  e.value = std::move(fresh->value);
  e.hash = std::move(fresh->hash);  // a string replaces a hash, as SET does
  e.original_size = fresh->original_size;
  e.compressed = fresh->compressed;
  e.type = fresh->type;
  e.expires_at = expires_at;
  e.mem_size = new_mem;
  e.pinned = fresh->pinned;
  e.tentative = fresh->tentative;
  e.stamp = fresh->stamp;
  e.version = ++s.last_version;
  e.last_access.store(now, std::memory_order_relaxed);
  TrackCompressedLocked(s, e, true);
  TrackPinnedLocked(s, e, true);
  Release(new_mem, old_mem);
  return true;
}

}  // namespace ephpm
