// The string family: GET, SET and its options, MSET, GETDEL, GETEX, APPEND,
// SETRANGE and the INCR family (IncrBy's routing is in store_locks.cc).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "ephpm/number_text.h"
#include "store_impl.h"

namespace ephpm {

void Store::Impl::Prefetch(std::string_view key, uint32_t db, Store::PrefetchStep step) const {
  if (!KeyOk(key) || db >= options_.databases || section::Active()) return;
  const HashedKey hk = HashKey(key);
  Shard& s = shards_[db * ShardsPerDatabase() + (hk.shard_hash & shard_mask_)];
  // The table's pointers change under the writer's lock (a rehash): read
  // them under the shared one, or not at all.
  if (!s.mu.RawReaderTryLock()) return;
  if (step == Store::PrefetchStep::kTable) {
    s.map.prefetch(hk);
  } else {
    s.map.find(NodePrefetch{hk.map_hash});  // matches nothing (KeyEq)
  }
  s.mu.RawReaderUnlock();
}

Status Store::Impl::GetInto(std::string_view key, absl::FunctionRef<char*(size_t)> alloc) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  std::string frame;  // a compressed value, decoded after the unlock
  uint64_t original_size = 0;
  {
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
    if (it == s.map.end() || IsExpired(it->second, now)) {
      counters_.Miss();
      if (it == s.map.end()) return Status::kNotFound;
      frame.clear();  // fall through to the lazy reap below
      original_size = UINT64_MAX;
    } else {
      const Entry& e = it->second;
      if (e.type != ValueType::kString) return Status::kWrongType;
      counters_.Hit();
      if (lru()) e.last_access.store(now, std::memory_order_relaxed);
      if (!e.compressed) return Emit(e.value, false, e.OriginalSize(), alloc);
      frame = e.value;
      original_size = e.OriginalSize();
    }
  }
  if (original_size == UINT64_MAX) {  // expired: remove it now (lazy expiry)
    ReapIfExpired(hk);
    return Status::kNotFound;
  }
  return Emit(frame, true, original_size, alloc);
}

Status Store::Impl::GetIntoBuffer(std::string_view key, char* buf, size_t capacity,
                                  uint64_t* length) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  std::string frame;  // a compressed value that fits, decoded after the unlock
  {
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
    if (it == s.map.end() || IsExpired(it->second, now)) {
      counters_.Miss();
      if (it == s.map.end()) return Status::kNotFound;
    } else {
      const Entry& e = it->second;
      if (e.type != ValueType::kString) return Status::kWrongType;
      const uint64_t size = e.OriginalSize();
      *length = size;
      // Measured only: the caller asks again with room, and that read
      // counts as the hit.
      if (size > capacity) return Status::kOk;
      counters_.Hit();
      if (lru()) e.last_access.store(now, std::memory_order_relaxed);
      if (!e.compressed) {
        if (size != 0) std::memcpy(buf, e.value.data(), size);
        return Status::kOk;
      }
      frame = e.value;
    }
  }
  if (frame.empty()) {  // expired: remove it now (lazy expiry)
    ReapIfExpired(hk);
    return Status::kNotFound;
  }
  return ZstdDecompress(frame, buf, *length) ? Status::kOk : Status::kOutOfMemory;
}

Status Store::Impl::Set(std::string_view key, std::string_view value, int64_t ttl_ms) {
  if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0) return Status::kInvalidArgument;
  Prepared p = PrepareForPut(value);
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, const WriteTime& now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    int64_t expires_at = 0;
    if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
      return Status::kInvalidArgument;
    }
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/false, now, shortfall, changed);
  });
}

Status Store::Impl::IncrByLocal(std::string_view key, int64_t delta, int64_t* result) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, const WriteTime& now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    int64_t current = 0;
    int64_t expires_at = 0;
    bool pinned = false;
    if (it != s.map.end()) {
      const Entry& e = it->second;
      if (e.type != ValueType::kString) return Status::kWrongType;
      if (!ReadInt64Locked(e, &current)) return Status::kNotInteger;
      expires_at = e.expires_at;  // INCR keeps the TTL, and so a lock's pin
      pinned = e.pinned;
    }
    int64_t next;
    if (__builtin_add_overflow(current, delta, &next)) return Status::kOverflow;
    Prepared p;
    char text[24];
    const auto done = std::to_chars(text, text + sizeof(text), next);  // fits: 20 at most
    p.stored = ValueBuf(std::string_view(text, static_cast<size_t>(done.ptr - text)));
    const Status put = PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, changed);
    if (put == Status::kOk) *result = next;
    return put;
  });
}

Status Store::Impl::SetWith(std::string_view key, std::string_view value, const SetOptions& o,
                            SetResult* r) {
  if (o.condition.kind == ValueCondition::Kind::kNone) return SetWithLocal(key, value, o, r);
  // A conditional write is a decision on the key's current value: made
  // where the key's decisions are made, like del_if_eq.
  return Route(
      options_.replicator, [&](Replicator& rep) { return rep.RouteSetWith(key, value, o); },
      Status::kOwnerUnreachable,
      [&](const SetWithReply& reply) {
        *r = reply.result;
        return reply.status;
      },
      [&] { return SetWithLocal(key, value, o, r); });
}

Status Store::Impl::SetWithLocal(std::string_view key, std::string_view value,
                                 const SetOptions& o, SetResult* r) {
  if (!KeyOk(key) || !ValueOk(value) || !ValueOk(o.condition.value)) {
    return Status::kInvalidArgument;
  }
  if (o.condition.kind != ValueCondition::Kind::kNone && o.when != SetOptions::When::kAlways) {
    return Status::kInvalidArgument;  // NX/XX and IF* exclude each other
  }
  Prepared p = PrepareForPut(value);
  const HashedKey hk = HashKey(key);
  std::string frame;  // the old value as stored, decoded after the unlock
  bool old_compressed = false;
  uint64_t old_size = 0;
  // The clock is read only if the key's current entry has an expiry or the
  // write needs a time (WriteTime), as for Set.
  const Status st = Mutate<Status>(hk, [&](Shard& s, const WriteTime& now, bool* changed,
                                           uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    *r = SetResult{};
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    const bool exists = it != s.map.end();
    if (o.get_old && exists) {
      if (it->second.type != ValueType::kString) return Status::kWrongType;
      r->had_old = true;
      frame = it->second.value;
      old_compressed = it->second.compressed;
      old_size = it->second.OriginalSize();
    }
    if ((o.when == SetOptions::When::kIfAbsent && exists) ||
        (o.when == SetOptions::When::kIfPresent && !exists)) {
      return Status::kOk;
    }
    if (o.condition.kind != ValueCondition::Kind::kNone) {
      if (exists && it->second.type != ValueType::kString) return Status::kWrongType;
      // IFEQ and IFDEQ need a value to compare, so never create a key;
      // IFNE and IFDNE hold for a missing one.
      const bool holds = exists ? ConditionHoldsLocked(it->second, o.condition)
                                : o.condition.kind == ValueCondition::Kind::kIfNe ||
                                      o.condition.kind == ValueCondition::Kind::kIfDigestNe;
      if (!holds) return Status::kOk;
    }
    int64_t expires_at = 0;
    if (o.expiry == SetOptions::Expiry::kAt) expires_at = o.expires_at_ms;
    if (o.expiry == SetOptions::Expiry::kKeep && exists) expires_at = it->second.expires_at;
    // NX with an expiry takes a lock as SetNx does; any other SET
    // replaces the entry, and a lock's pin goes with it.
    const bool pinned = o.when == SetOptions::When::kIfAbsent;
    const Status put = PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, changed);
    r->written = put == Status::kOk;
    return put;
  });
  if (st == Status::kOk && r->had_old) {
    return EmitString(frame, old_compressed, old_size, &r->old);
  }
  return st;
}

Status Store::Impl::MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
                         bool only_if_none_exist, bool* written) {
  *written = false;
  // The last value of a repeated key wins, as in Redis.
  std::vector<size_t> order;  // indexes into pairs, one per distinct key
  {
    absl::flat_hash_map<std::string_view, size_t> last;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (!KeyOk(pairs[i].first) || !ValueOk(pairs[i].second)) return Status::kInvalidArgument;
      last[pairs[i].first] = i;
    }
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (last[pairs[i].first] == i) order.push_back(i);
    }
  }
  std::vector<HashedKey> keys;
  std::vector<Prepared> values;
  std::vector<Shard*> shards;
  for (size_t i : order) {
    keys.push_back(HashKey(pairs[i].first));
    values.push_back(Prepare(pairs[i].second));
    shards.push_back(&ShardFor(keys.back()));
  }
  return WithEviction<Status>([&](uint64_t* shortfall) {
    std::vector<Shard*> changed;
    Status st;
    {
      MultiLock l(this, shards);
      st = MSetLocked(keys, &values, shards, only_if_none_exist, written, shortfall, &changed);
    }
    for (Shard* c : changed) Notify(*c);
    return st;
  });
}

Status Store::Impl::GetDel(std::string_view key, std::string* value) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  ValueBuf frame;
  bool compressed = false;
  uint64_t size = 0;
  const Status st = Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kNotFound;
        if (it->second.type != ValueType::kString) return Status::kWrongType;
        Entry& e = it->second;
        compressed = e.compressed;
        size = e.OriginalSize();
        // The entry goes anyway: settle its compression figures, then take its
        // bytes instead of copying them.
        TrackCompressedLocked(s, e, false);
        e.compressed = false;
        frame = std::move(e.value);
        DeleteLocked(s, it, key);
        *changed = true;
        return Status::kOk;
      });
  if (st != Status::kOk) return st;
  return EmitString(frame, compressed, size, value);
}

Status Store::Impl::GetEx(std::string_view key, SetOptions::Expiry expiry, int64_t at_ms,
                          std::string* value) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  std::string frame;
  bool compressed = false;
  uint64_t size = 0;
  const Status st = Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kNotFound;
        if (it->second.type != ValueType::kString) return Status::kWrongType;
        frame = it->second.value;
        compressed = it->second.compressed;
        size = it->second.OriginalSize();
        if (expiry == SetOptions::Expiry::kAt && at_ms <= now) {
          DeleteLocked(s, it, key);
          *changed = true;
        } else if (expiry != SetOptions::Expiry::kKeep) {
          const int64_t target = expiry == SetOptions::Expiry::kAt ? at_ms : 0;
          if (it->second.expires_at != target) {
            const Status r = SetExpiryLocked(s, it, target);
            if (r != Status::kOk) return r;
            PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
            *changed = true;
          }
        }
        return Status::kOk;
      });
  if (st != Status::kOk) return st;
  return EmitString(frame, compressed, size, value);
}

template <typename Edit>
Status Store::Impl::EditString(std::string_view key, Edit edit, int64_t* length) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  for (;;) {
    uint64_t version = 0;
    std::string current;
    bool exists = false;
    {
      std::string frame;
      bool compressed = false;
      uint64_t size = 0;
      {
        ReaderLock l(&s.mu);
        auto it = s.map.find(hk);
        if (it != s.map.end() && !IsExpired(it->second, NowFor(it->second))) {
          if (it->second.type != ValueType::kString) return Status::kWrongType;
          exists = true;
          version = it->second.version;
          frame = it->second.value;
          compressed = it->second.compressed;
          size = it->second.OriginalSize();
        }
      }
      if (exists) {
        const Status st = EmitString(frame, compressed, size, &current);
        if (st != Status::kOk) return st;
      }
    }
    std::string next;
    bool store = true;
    const Status es = edit(exists, current, &next, &store);
    if (es != Status::kOk) return es;
    if (!ValueOk(next)) return Status::kInvalidArgument;
    *length = static_cast<int64_t>(next.size());
    if (!store) return Status::kOk;
    Prepared p = Prepare(next);
    bool retry = false;
    const Status st =
        Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                               uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          auto it = FindLiveForWriteLocked(s, hk, now, changed);
          const uint64_t now_version = it == s.map.end() ? 0 : it->second.version;
          if (now_version != version) {
            retry = true;
            return Status::kOk;
          }
          // An edit in place keeps the TTL, and so a lock's pin.
          const int64_t keep = it == s.map.end() ? 0 : it->second.expires_at;
          const bool pinned = it != s.map.end() && it->second.pinned;
          return PutLocked(s, it, hk, &p, keep, pinned, now, shortfall, changed);
        });
    if (!retry) return st;
  }
}

Status Store::Impl::Append(std::string_view key, std::string_view value, int64_t* length) {
  return EditString(key,
                    [&](bool, const std::string& current, std::string* next, bool*) {
                      if (current.size() + value.size() > options_.max_value_size) {
                        return Status::kInvalidArgument;
                      }
                      next->reserve(current.size() + value.size());
                      next->append(current).append(value);
                      return Status::kOk;
                    },
                    length);
}

Status Store::Impl::SetRange(std::string_view key, uint64_t offset, std::string_view value,
                             int64_t* length) {
  return EditString(key,
                    [&](bool exists, const std::string& current, std::string* next,
                        bool* store) {
                      if (value.empty()) {  // nothing to write: report the length
                        *next = current;
                        *store = false;
                        return Status::kOk;
                      }
                      if (offset > options_.max_value_size ||
                          offset + value.size() > options_.max_value_size) {
                        return Status::kInvalidArgument;
                      }
                      (void)exists;
                      *next = current;
                      if (next->size() < offset + value.size()) {
                        next->resize(offset + value.size(), '\0');
                      }
                      next->replace(offset, value.size(), value);
                      return Status::kOk;
                    },
                    length);
}

Status Store::Impl::EditPadded(std::string_view key, size_t min_size,
                              absl::FunctionRef<bool(bool existed, std::string* bytes)> edit) {
  // Refused before the string is padded out to it.
  if (min_size > options_.max_value_size) return Status::kInvalidArgument;
  int64_t length = 0;
  return EditString(key,
                    [&](bool exists, const std::string& current, std::string* next,
                        bool* store) {
                      *next = current;
                      const bool padded = next->size() < min_size;
                      if (padded) next->resize(min_size, '\0');
                      const bool changed = edit(exists, next);
                      // As Redis: an edit that changes nothing writes nothing
                      // (no version move, no WATCH touched, nothing logged).
                      *store = !exists || padded || changed;
                      return Status::kOk;
                    },
                    &length);
}

Status Store::Impl::SetBit(std::string_view key, uint64_t bit, bool on, int* old) {
  const uint64_t byte = bit >> 3;
  const unsigned mask = 0x80u >> (bit & 7);
  if (byte >= options_.max_value_size) return Status::kInvalidArgument;
  return EditPadded(key, static_cast<size_t>(byte) + 1, [&](bool, std::string* bytes) {
    unsigned char& b = reinterpret_cast<unsigned char&>((*bytes)[byte]);
    *old = (b & mask) != 0 ? 1 : 0;
    b = static_cast<unsigned char>(on ? (b | mask) : (b & ~mask));
    return *old != (on ? 1 : 0);
  });
}

Status Store::Impl::BitOp(Store::BitOpKind op, std::string_view dst,
                          const std::vector<std::string_view>& keys, int64_t* length) {
  if (op == Store::BitOpKind::kNot && keys.size() != 1) return Status::kInvalidArgument;
  return WriteFromSources(dst, keys, [&](const HashedKey& hd,
                                         const std::vector<const Entry*>& live, int64_t now,
                                         uint64_t* shortfall, std::vector<Shard*>* touched)
                                         ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::vector<std::string> sources(live.size());
    size_t longest = 0;
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i] == nullptr) continue;
      const Entry& e = *live[i];
      if (e.type != ValueType::kString) return Status::kWrongType;
      const Status st = EmitString(e.value, e.compressed, e.OriginalSize(), &sources[i]);
      if (st != Status::kOk) return st;
      longest = std::max(longest, sources[i].size());
    }
    std::string result(longest, '\0');
    auto byte_of = [&](size_t i, size_t j) -> unsigned char {
      return j < sources[i].size() ? static_cast<unsigned char>(sources[i][j]) : 0;
    };
    for (size_t j = 0; j < longest; ++j) {
      unsigned char b = byte_of(0, j);
      switch (op) {
        case Store::BitOpKind::kNot: b = static_cast<unsigned char>(~b); break;
        case Store::BitOpKind::kAnd:
          for (size_t i = 1; i < sources.size(); ++i) b &= byte_of(i, j);
          break;
        case Store::BitOpKind::kOr:
          for (size_t i = 1; i < sources.size(); ++i) b |= byte_of(i, j);
          break;
        case Store::BitOpKind::kXor:
          for (size_t i = 1; i < sources.size(); ++i) b ^= byte_of(i, j);
          break;
      }
      result[j] = static_cast<char>(b);
    }
    *length = static_cast<int64_t>(longest);
    Shard& ds = ShardFor(hd);
    bool changed = false;
    auto it = FindLiveForWriteLocked(ds, hd, now, &changed);
    Status st = Status::kOk;
    if (result.empty()) {
      if (it != ds.map.end()) {
        DeleteLocked(ds, it, dst);
        changed = true;
      }
    } else if (!ValueOk(result)) {
      st = Status::kInvalidArgument;
    } else {
      Prepared p = Prepare(result);
      st = PutLocked(ds, it, hd, &p, /*expires_at=*/0, /*pinned=*/false, now, shortfall,
                     &changed);
    }
    if (changed) touched->push_back(&ds);
    return st;
  });
}

Status Store::Impl::IncrByFloat(std::string_view key, long double delta, std::string* result) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    long double current = 0;
    int64_t expires_at = 0;
    bool pinned = false;
    if (it != s.map.end()) {
      const Entry& e = it->second;
      if (e.type != ValueType::kString) return Status::kWrongType;
      std::string text;
      if (!ReadSmallLocked(e, kMaxNumberText, &text) || !ParseLongDouble(text, &current)) {
        return Status::kNotFloat;
      }
      expires_at = e.expires_at;
      pinned = e.pinned;
    }
    const long double next = current + delta;
    if (std::isnan(next) || std::isinf(next)) return Status::kNanOrInfinity;
    Prepared p;
    *result = FormatLongDouble(next);
    p.stored = ValueBuf(*result);
    return PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, changed);
  });
}

Status Store::Impl::MSetLocked(const std::vector<HashedKey>& keys, std::vector<Prepared>* values,
                               const std::vector<Shard*>& shards, bool only_if_none_exist,
                               bool* written, uint64_t* shortfall, std::vector<Shard*>* changed) {
  const int64_t now = clock_->NowMs();
  const size_t n = keys.size();
  for (size_t i = 0; i < n; ++i) {
    bool reaped = false;
    FindLiveForWriteLocked(*shards[i], keys[i], now, &reaped);
    if (reaped) changed->push_back(shards[i]);
  }
  // Which keys exist is kept as flags, not iterators: creating a slot for
  // one key may rehash a table that another key shares, which invalidates
  // its iterator (and Debian's hardened abseil traps on comparing one).
  std::vector<char> existed(n, 0);
  uint64_t old_total = 0, new_total = 0, old_pinned = 0;
  for (size_t i = 0; i < n; ++i) {  // after the reaps: a reap may have shared a table
    auto it = shards[i]->map.find(keys[i]);
    if (it != shards[i]->map.end()) {
      if (only_if_none_exist) return Status::kOk;
      existed[i] = 1;
      old_total += it->second.mem_size;
      if (it->second.pinned) old_pinned += it->second.mem_size;
    }
    new_total += EntryMem(keys[i].key.size(), (*values)[i].stored.size(), false);
  }
  // MultiLock holds every shard here, which the analysis cannot follow.
  // The apply step below must not allocate: room for what it records first.
  changed->reserve(changed->size() + n);
  std::vector<size_t> created;
  const bool installed = Transact(
      *shards[0], new_total, old_total, false, old_pinned, shortfall,
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        for (size_t i = 0; i < n; ++i) {
          if (existed[i]) continue;
          EmplaceLocked(*shards[i], keys[i]);
          created.push_back(i);
        }
      },
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        for (size_t i : created) shards[i]->map.erase(shards[i]->map.find(keys[i]));
      },
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        for (size_t i = 0; i < n; ++i) {
          Shard& s = *shards[i];
          auto it = s.map.find(keys[i]);
          Prepared& p = (*values)[i];
          // Replaced: a lock's pin goes with it, and so does a TTL.
          Entry from;
          from.compressed = p.compressed;
          from.type = ValueType::kString;
          const uint64_t mem = EntryMem(keys[i].key.size(), p.stored.size(), false);
          from.value = std::move(p.stored);
          FillLocked(s, it, existed[i] != 0, &from, mem, now);
          changed->push_back(&s);
        }
      });
  if (!installed) return Status::kOutOfMemory;
  // Published once every entry and the memory total are settled (publishing
  // allocates; the locks are still held, so the order is the same).
  for (size_t i = 0; i < n; ++i) {
    Shard& s = *shards[i];
    PublishLocked(s, Mutation::Kind::kSet, keys[i].key, &s.map.find(keys[i])->second);
  }
  *written = true;
  return Status::kOk;
}

bool Store::Impl::ReadSmallLocked(const Entry& e, size_t max, std::string* out) {
  const uint64_t size = e.OriginalSize();
  if (size > max) return false;
  if (!e.compressed) {
    out->assign(e.value);
    return true;
  }
  out->resize(size);
  return ZstdDecompress(e.value, out->data(), out->size());
}

bool Store::Impl::ReadInt64Locked(const Entry& e, int64_t* out) {
  const uint64_t size = e.OriginalSize();
  if (size > 20) return false;
  char text[20];
  if (e.compressed) {
    if (!ZstdDecompress(e.value, text, size)) return false;
  } else {
    std::memcpy(text, e.value.data(), size);
  }
  return ParseInt64(std::string_view(text, size), out);
}

// --- conditional writes of Redis 8.4 ----------------------------------------

uint64_t Store::DigestOf(std::string_view value) {
  return XXH3_64bits(value.data(), value.size());
}

namespace {
// The digest of the string entry `e`, decoding a compressed value (which
// may throw bad_alloc).
uint64_t DigestOfEntry(const Entry& e) {
  if (!e.compressed) return Store::DigestOf(e.value);
  std::string plain(e.OriginalSize(), '\0');
  if (!ZstdDecompress(e.value, plain.data(), plain.size())) throw std::bad_alloc();
  return Store::DigestOf(plain);
}
}  // namespace

bool Store::Impl::ConditionHoldsLocked(const Entry& e, const ValueCondition& c) {
  switch (c.kind) {
    case ValueCondition::Kind::kNone: return true;
    case ValueCondition::Kind::kIfEq: return EqualsLocked(e, c.value);
    case ValueCondition::Kind::kIfNe: return !EqualsLocked(e, c.value);
    case ValueCondition::Kind::kIfDigestEq: return DigestOfEntry(e) == c.digest;
    case ValueCondition::Kind::kIfDigestNe: return DigestOfEntry(e) != c.digest;
  }
  return false;
}

Status Store::Impl::Digest(std::string_view key, uint64_t* digest) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  bool expired = false;
  Status st = Status::kNotFound;
  {
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    if (it != s.map.end()) {
      if (IsExpired(it->second, clock_->NowMs())) {
        expired = true;
      } else if (it->second.type != ValueType::kString) {
        st = Status::kWrongType;
      } else {
        *digest = DigestOfEntry(it->second);
        st = Status::kOk;
      }
    }
  }
  if (expired) ReapIfExpired(hk);
  return st;
}

Status Store::Impl::DelEx(std::string_view key, const ValueCondition& c, int64_t* removed) {
  if (c.kind == ValueCondition::Kind::kNone) return Del(key, removed);
  return Route(
      options_.replicator, [&](Replicator& rep) { return rep.RouteDelEx(key, c); },
      Status::kOwnerUnreachable,
      [&](const DelExReply& reply) {
        *removed = reply.removed;
        return reply.status;
      },
      [&] { return DelExLocal(key, c, removed); });
}

Status Store::Impl::DelExLocal(std::string_view key, const ValueCondition& c, int64_t* removed) {
  *removed = 0;
  if (!KeyOk(key) || !ValueOk(c.value)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  // The compare and the removal are one step under the write lock.
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        if (c.kind != ValueCondition::Kind::kNone) {
          if (it->second.type != ValueType::kString) return Status::kWrongType;
          if (!ConditionHoldsLocked(it->second, c)) return Status::kOk;
        }
        DeleteLocked(s, it, key);
        *changed = true;
        *removed = 1;
        return Status::kOk;
      });
}

}  // namespace ephpm
