// The set family: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP,
// SRANDMEMBER, SMOVE, SINTER/SUNION/SDIFF (and their STORE forms),
// SINTERCARD and SSCAN.
//
// A set's members live in SetValue (aggregates.h): `index` maps a member to
// its position in `order`, which a removal fills with the last pointer.
// The operations on several keys lock every shard involved (MultiLock,
// PairWrite), so that they read and write one moment of all of them.

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "random.h"
#include "store_impl.h"

namespace ephpm {

namespace {

// Takes the member at position `pos` out of *s and hands back its node:
// the last pointer fills the gap.  Allocates nothing.
auto TakeAt(SetValue* s, size_t pos) {
  const std::string* victim = s->order[pos];
  const std::string* last = s->order.back();
  if (last != victim) {
    s->order[pos] = last;
    s->index.find(*last)->second = static_cast<uint32_t>(pos);
  }
  s->order.pop_back();
  return s->index.extract(s->index.find(*victim));
}

}  // namespace

Status Store::Impl::SAdd(std::string_view key, const std::vector<std::string_view>& members,
                         int64_t* added) {
  *added = 0;
  if (!AllOk(key, members)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    const bool exists = it != s.map.end();
    if (exists && it->second.type != ValueType::kSet) return Status::kWrongType;
    SetValue* set = exists ? it->second.set() : nullptr;
    // The members new to the set, each once.
    absl::flat_hash_set<std::string_view> seen;
    std::vector<std::string_view> fresh;
    uint64_t grow = 0;
    for (std::string_view m : members) {
      if ((set != nullptr && set->contains(m)) || !seen.insert(m).second) continue;
      fresh.push_back(m);
      grow += SetMemberMem(m.size());
    }
    if (fresh.empty()) return Status::kOk;
    const uint64_t old_mem = exists ? it->second.mem_size : 0;
    const uint64_t new_mem = (exists ? old_mem : SetEntryMem(hk.key.size(), 0, false)) + grow;
    std::unique_ptr<SetValue> made;
    size_t inserted = 0;  // into an existing set, for the undo
    const bool installed = Transact(
        s, new_mem, old_mem, false, 0, shortfall,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          SetValue* target = set;
          if (!exists) {
            made = std::make_unique<SetValue>();
            target = made.get();
          }
          ReserveMore(&target->order, fresh.size());
          target->index.reserve(target->size() + fresh.size());
          for (std::string_view m : fresh) {
            SetAdd(target, m);  // a node each: may throw
            ++inserted;
          }
          if (!exists) it = EmplaceLocked(s, hk);
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          // An existing set takes the new members back out (they are last
          // in `order`, so the others keep their places); a new one was
          // never installed.
          if (!exists) return;
          while (inserted > 0) SetRemove(set, fresh[--inserted]);
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          Entry& e = it->second;
          if (!exists) {
            e.Hold(std::move(made));
            e.type = ValueType::kSet;
            e.compressed = false;
            e.expires_at = 0;
          }
          e.mem_size = new_mem;
          e.version = ++s.last_version;
          e.last_access.store(now, std::memory_order_relaxed);
        });
    if (!installed) return Status::kOutOfMemory;
    *added = static_cast<int64_t>(fresh.size());
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
    *changed = true;
    return Status::kOk;
  });
}

Status Store::Impl::SRem(std::string_view key, const std::vector<std::string_view>& members,
                         int64_t* removed) {
  *removed = 0;
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kSet) return Status::kWrongType;
        uint64_t freed = 0;
        for (std::string_view m : members) {
          if (!SetRemove(e.set(), m)) continue;
          freed += SetMemberMem(m.size());
          ++*removed;
        }
        if (*removed == 0) return Status::kOk;
        *changed = true;
        e.mem_size -= freed;  // what the empty set's removal below gives back
        Release(s, e.mem_size, e.mem_size + freed);
        if (e.set()->size() == 0) {  // the last member takes the key with it
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        e.version = ++s.last_version;
        PublishLocked(s, Mutation::Kind::kSet, key, &e);
        return Status::kOk;
      });
}

template <typename Read>
Status Store::Impl::ReadSet(std::string_view key, Read read) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
    read(static_cast<const SetValue*>(nullptr));
    return Status::kOk;
  }
  if (it->second.type != ValueType::kSet) return Status::kWrongType;
  if (lru()) it->second.last_access.store(clock_->CoarseMs(), std::memory_order_relaxed);
  read(static_cast<const SetValue*>(it->second.set()));
  return Status::kOk;
}

Status Store::Impl::SMembers(std::string_view key, std::vector<std::string>* members) const {
  members->clear();
  return ReadSet(key, [&](const SetValue* set) {
    if (set == nullptr) return;
    members->reserve(set->size());
    for (const std::string* m : set->order) members->push_back(*m);
  });
}

Status Store::Impl::SIsMember(std::string_view key, std::string_view member,
                              bool* is_member) const {
  return ReadSet(key, [&](const SetValue* set) {
    *is_member = set != nullptr && set->contains(member);
  });
}

Status Store::Impl::SMIsMember(std::string_view key, const std::vector<std::string_view>& members,
                               std::vector<bool>* is_member) const {
  is_member->assign(members.size(), false);
  return ReadSet(key, [&](const SetValue* set) {
    if (set == nullptr) return;
    for (size_t i = 0; i < members.size(); ++i) (*is_member)[i] = set->contains(members[i]);
  });
}

Status Store::Impl::SCard(std::string_view key, int64_t* count) const {
  return ReadSet(key, [&](const SetValue* set) {
    *count = set == nullptr ? 0 : static_cast<int64_t>(set->size());
  });
}

Status Store::Impl::SPop(std::string_view key, uint64_t count, std::vector<std::string>* popped) {
  popped->clear();
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kSet) return Status::kWrongType;
        SetValue* set = e.set();
        const size_t n = static_cast<size_t>(std::min<uint64_t>(count, set->size()));
        if (n == 0) return Status::kOk;
        popped->reserve(n);  // the one allocation, before anything changes
        uint64_t freed = 0;
        for (size_t i = 0; i < n; ++i) {
          auto node = TakeAt(set, RandomBelow(set->size()));
          freed += SetMemberMem(node.key().size());
          popped->push_back(std::move(node.key()));
        }
        *changed = true;
        e.mem_size -= freed;
        Release(s, e.mem_size, e.mem_size + freed);
        if (set->size() == 0) {
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        e.version = ++s.last_version;
        PublishLocked(s, Mutation::Kind::kSet, key, &e);
        return Status::kOk;
      });
}

Status Store::Impl::SRandMember(std::string_view key, int64_t count,
                                std::vector<std::string>* out) const {
  out->clear();
  // -count without overflow (RESP refuses INT64_MIN, as Redis does).
  const uint64_t wanted = count < 0 ? static_cast<uint64_t>(-(count + 1)) + 1
                                    : static_cast<uint64_t>(count);
  bool too_many = false;
  const Status st = ReadSet(key, [&](const SetValue* set) {
    if (set == nullptr || wanted == 0) return;
    const size_t size = set->size();
    if (count < 0) {  // drawn independently: repeats allowed
      if (wanted > out->max_size()) {
        too_many = true;
        return;
      }
      out->reserve(static_cast<size_t>(wanted));
      for (uint64_t i = 0; i < wanted; ++i) out->push_back(*set->order[RandomBelow(size)]);
      return;
    }
    if (wanted >= size) {
      out->reserve(size);
      for (const std::string* m : set->order) out->push_back(*m);
      return;
    }
    const size_t k = static_cast<size_t>(wanted);
    out->reserve(k);
    if (k * 4 >= size) {
      // Many of them: the first k of a partial shuffle of the positions.
      std::vector<uint32_t> pos(size);
      std::iota(pos.begin(), pos.end(), 0);
      for (size_t i = 0; i < k; ++i) {
        std::swap(pos[i], pos[i + RandomBelow(size - i)]);
        out->push_back(*set->order[pos[i]]);
      }
      return;
    }
    // A few: positions drawn until k distinct ones came up.
    absl::flat_hash_set<size_t> chosen;
    chosen.reserve(k);
    while (chosen.size() < k) {
      const size_t p = RandomBelow(size);
      if (chosen.insert(p).second) out->push_back(*set->order[p]);
    }
  });
  if (st != Status::kOk) return st;
  return too_many ? Status::kOutOfMemory : Status::kOk;
}

Status Store::Impl::SMove(std::string_view src, std::string_view dst, std::string_view member,
                          bool* moved) {
  *moved = false;
  if (!KeyOk(src) || !KeyOk(dst) || !ValueOk(member)) return Status::kInvalidArgument;
  const HashedKey hs = HashKey(src), hd = HashKey(dst);
  Shard& a = ShardFor(hs);
  Shard& b = ShardFor(hd);
  return WithEviction<Status>([&](uint64_t* shortfall) {
    PairWrite w(this, &a, &b);
    return SMoveLocked(a, b, hs, hd, member, moved, shortfall, &w.changed_a, &w.changed_b);
  });
}

Status Store::Impl::SMoveLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                                std::string_view member, bool* moved, uint64_t* shortfall,
                                bool* changed_a, bool* changed_b) {
  *moved = false;
  const int64_t now = clock_->NowMs();
  FindLiveForWriteLocked(a, hs, now, changed_a);
  FindLiveForWriteLocked(b, hd, now, changed_b);
  // Found after both reaps: a reap may have changed a table the keys share.
  auto src = a.map.find(hs);
  if (src == a.map.end()) return Status::kOk;  // Redis: 0 before any type check
  auto dst = b.map.find(hd);
  const bool dst_exists = dst != b.map.end();
  if (src->second.type != ValueType::kSet) return Status::kWrongType;
  if (dst_exists && dst->second.type != ValueType::kSet) return Status::kWrongType;
  SetValue* ss = src->second.set();
  if (hs.key == hd.key) {  // the same set: nothing moves
    *moved = ss->contains(member);
    return Status::kOk;
  }
  if (!ss->contains(member)) return Status::kOk;
  SetValue* ds = dst_exists ? dst->second.set() : nullptr;
  const bool dst_has = ds != nullptr && ds->contains(member);
  const uint64_t mm = SetMemberMem(member.size());
  const uint64_t src_old = src->second.mem_size;
  const uint64_t dst_old = dst_exists ? dst->second.mem_size : 0;
  const uint64_t dst_new =
      dst_has ? dst_old : (dst_exists ? dst_old + mm : SetEntryMem(hd.key.size(), mm, false));
  // An emptied src is accounted as an empty set here; its removal below
  // (DeleteLocked) gives back the rest.
  const uint64_t old_total = src_old + dst_old;
  const uint64_t new_total = src_old - mm + dst_new;
  std::unique_ptr<SetValue> made;
  const bool installed = Transact(
      b, new_total, old_total, false, 0, shortfall,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        if (!dst_exists) {
          made = std::make_unique<SetValue>();
          SetAdd(made.get(), member);
          dst = EmplaceLocked(b, hd);
        } else if (!dst_has) {
          SetAdd(ds, member);  // the last step that may throw: nothing to undo
        }
      },
      [] {},
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        src = a.map.find(hs);  // the insert may have rehashed a shared table
        Entry& se = src->second;
        SetRemove(se.set(), member);
        se.mem_size = src_old - mm;
        se.version = ++a.last_version;
        if (dst_has) return;
        Entry& de = dst->second;
        if (!dst_exists) {
          de.Hold(std::move(made));
          de.type = ValueType::kSet;
          de.compressed = false;
          de.expires_at = 0;
        }
        de.mem_size = dst_new;
        de.version = ++b.last_version;
        de.last_access.store(now, std::memory_order_relaxed);
      });
  if (!installed) return Status::kOutOfMemory;
  *moved = true;
  *changed_a = true;
  if (src->second.set()->size() == 0) {
    DeleteLocked(a, src, hs.key);
  } else {
    PublishLocked(a, Mutation::Kind::kSet, hs.key, &src->second);
  }
  if (!dst_has) {
    dst = b.map.find(hd);
    PublishLocked(b, Mutation::Kind::kSet, hd.key, &dst->second);
    *changed_b = true;
  }
  return Status::kOk;
}

Status Store::Impl::SetsLocked(const std::vector<HashedKey>& keys, int64_t now,
                               std::vector<const SetValue*>* sets) const {
  sets->clear();
  sets->reserve(keys.size());
  for (const HashedKey& hk : keys) {
    const Shard& s = ShardFor(hk);
    auto it = s.map.find(hk);
    if (it == s.map.end() || IsExpired(it->second, now)) {  // absent: an empty set
      sets->push_back(nullptr);
      continue;
    }
    if (it->second.type != ValueType::kSet) return Status::kWrongType;
    if (lru()) it->second.last_access.store(now, std::memory_order_relaxed);
    sets->push_back(it->second.set());
  }
  return Status::kOk;
}

void Store::Impl::CombineLocked(Store::SetOp op, const std::vector<const SetValue*>& sets,
                                std::vector<std::string_view>* out) {
  out->clear();
  switch (op) {
    case Store::SetOp::kInter: {
      for (const SetValue* s : sets) {
        if (s == nullptr) return;  // with an empty set, nothing in common
      }
      // The smallest set drives; each of its members is looked up in the rest.
      const SetValue* smallest = *std::min_element(
          sets.begin(), sets.end(),
          [](const SetValue* x, const SetValue* y) { return x->size() < y->size(); });
      for (const std::string* m : smallest->order) {
        bool everywhere = true;
        for (const SetValue* s : sets) {
          if (s != smallest && !s->contains(*m)) {
            everywhere = false;
            break;
          }
        }
        if (everywhere) out->push_back(*m);
      }
      return;
    }
    case Store::SetOp::kUnion: {
      absl::flat_hash_set<std::string_view> seen;
      for (const SetValue* s : sets) {
        if (s == nullptr) continue;
        for (const std::string* m : s->order) {
          if (seen.insert(*m).second) out->push_back(*m);
        }
      }
      return;
    }
    case Store::SetOp::kDiff: {
      if (sets.empty() || sets[0] == nullptr) return;
      for (const std::string* m : sets[0]->order) {
        bool elsewhere = false;
        for (size_t i = 1; i < sets.size() && !elsewhere; ++i) {
          // The first set again (SDIFF a a) takes everything away.
          elsewhere = sets[i] != nullptr && sets[i]->contains(*m);
        }
        if (!elsewhere) out->push_back(*m);
      }
      return;
    }
  }
}

Status Store::Impl::SCombine(Store::SetOp op, const std::vector<std::string_view>& keys,
                             std::vector<std::string>* out) const {
  out->clear();
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards;
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  MultiLock l(this, shards);
  std::vector<const SetValue*> sets;
  const Status st = SetsLocked(hks, clock_->NowMs(), &sets);
  if (st != Status::kOk) return st;
  std::vector<std::string_view> views;
  CombineLocked(op, sets, &views);
  out->assign(views.begin(), views.end());
  return Status::kOk;
}

Status Store::Impl::SInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                               int64_t* count) const {
  *count = 0;
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards;
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  MultiLock l(this, shards);
  std::vector<const SetValue*> sets;
  const Status st = SetsLocked(hks, clock_->NowMs(), &sets);
  if (st != Status::kOk) return st;
  for (const SetValue* s : sets) {
    if (s == nullptr) return Status::kOk;
  }
  const SetValue* smallest = *std::min_element(
      sets.begin(), sets.end(),
      [](const SetValue* x, const SetValue* y) { return x->size() < y->size(); });
  for (const std::string* m : smallest->order) {
    bool everywhere = true;
    for (const SetValue* s : sets) {
      if (s != smallest && !s->contains(*m)) {
        everywhere = false;
        break;
      }
    }
    if (!everywhere) continue;
    ++*count;
    if (limit != 0 && static_cast<uint64_t>(*count) >= limit) break;
  }
  return Status::kOk;
}

Status Store::Impl::SCombineStore(Store::SetOp op, std::string_view dst,
                                  const std::vector<std::string_view>& keys, int64_t* size) {
  *size = 0;
  if (!KeyOk(dst)) return Status::kInvalidArgument;
  const HashedKey hd = HashKey(dst);
  Shard& ds = ShardFor(hd);
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards = {&ds};
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  return WithEviction<Status>([&](uint64_t* shortfall) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    bool changed = false;
    Status st = Status::kOk;
    {
      MultiLock l(this, shards);
      const int64_t now = clock_->NowMs();
      FindLiveForWriteLocked(ds, hd, now, &changed);
      std::vector<const SetValue*> sets;
      st = SetsLocked(hks, now, &sets);
      if (st == Status::kOk) {
        std::vector<std::string_view> views;
        CombineLocked(op, sets, &views);
        auto it = ds.map.find(hd);
        const bool exists = it != ds.map.end();
        *size = static_cast<int64_t>(views.size());
        if (views.empty()) {  // an empty result removes dst, whatever it held
          if (exists) {
            DeleteLocked(ds, it, dst);
            changed = true;
          }
        } else {
          uint64_t elements = 0;
          for (std::string_view m : views) elements += SetMemberMem(m.size());
          const uint64_t new_mem = SetEntryMem(hd.key.size(), elements, false);
          const uint64_t old_mem = exists ? it->second.mem_size : 0;
          const uint64_t old_pinned = exists && it->second.pinned ? old_mem : 0;
          std::unique_ptr<SetValue> made;
          // The views may point into dst's own set: the new one is built
          // whole before the entry changes.
          const bool installed = Transact(
              ds, new_mem, old_mem, false, old_pinned, shortfall,
              [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                made = std::make_unique<SetValue>();
                made->order.reserve(views.size());
                made->index.reserve(views.size());
                for (std::string_view m : views) SetAdd(made.get(), m);
                if (!exists) it = EmplaceLocked(ds, hd);
              },
              [] {},
              [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                // Replaced: its TTL and any pin go with it.
                Entry from;
                from.type = ValueType::kSet;
                from.Hold(std::move(made));
                FillLocked(ds, it, exists, &from, new_mem, now);
              });
          if (installed) {
            PublishLocked(ds, Mutation::Kind::kSet, hd.key, &it->second);
            changed = true;
          } else {
            *size = 0;
            st = Status::kOutOfMemory;
          }
        }
      }
    }
    if (changed) Notify(ds);
    return st;
  });
}

Status Store::Impl::SScan(std::string_view key, uint64_t cursor, size_t count,
                          std::vector<std::string>* members, uint64_t* next) const {
  members->clear();
  *next = 0;
  // The cursor is how many positions, from the start of `order`, are still
  // to visit; positions are visited from the end down.  A removal moves the
  // last member into the gap, that is only ever from a visited position or
  // further down the unvisited ones, and an addition goes last: a member
  // present throughout is visited (at least) once.
  return ReadSet(key, [&](const SetValue* set) {
    if (set == nullptr) return;
    const uint64_t size = set->size();
    const uint64_t top = cursor == 0 || cursor > size ? size : cursor;
    const uint64_t step = std::max<size_t>(count, 1);  // 0 would never end
    const uint64_t bottom = top > step ? top - step : 0;
    members->reserve(static_cast<size_t>(top - bottom));
    for (uint64_t p = top; p > bottom; --p) members->push_back(*set->order[p - 1]);
    *next = bottom;
  });
}

}  // namespace ephpm
