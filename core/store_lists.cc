// The list family: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE,
// LINDEX, LSET, LREM, LTRIM, LINSERT, LPOS and LMOVE (RPOPLPUSH, and the
// moves of the blocking commands, which the RESP server retries).
//
// Every write follows store_hashes.cc: what may allocate (new element
// strings, a deque's new block, a new slot) happens before anything of the
// entry changes, or is undone when a later allocation throws; the
// accounted size moves by ListElementMem per element; the emptied list
// takes its key with it.

#include <algorithm>
#include <string>
#include <utility>

#include "store_impl.h"

namespace ephpm {

namespace {

// Redis's range rule (LRANGE, LTRIM): negative indexes count from the end,
// start is clamped to 0 and stop to the last element.  False when the range
// is empty.
bool ClampRange(int64_t start, int64_t stop, int64_t len, int64_t* from, int64_t* to) {
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) return false;
  if (stop >= len) stop = len - 1;
  *from = start;
  *to = stop;
  return true;
}

// An index of a list of `len` elements, negative from the end; false when
// out of range.
bool ResolveIndex(int64_t index, int64_t len, size_t* at) {
  if (index < 0) index += len;
  if (index < 0 || index >= len) return false;
  *at = static_cast<size_t>(index);
  return true;
}

}  // namespace

void Store::Impl::ListChangedLocked(Shard& s, Map::iterator it, std::string_view key,
                                    uint64_t new_mem, int64_t now) {
  Entry& e = it->second;
  Release(s, new_mem, e.mem_size);
  e.mem_size = new_mem;
  e.version = ++s.last_version;
  e.last_access.store(now, std::memory_order_relaxed);
  PublishLocked(s, Mutation::Kind::kSet, key, &e);
}

Status Store::Impl::ListPush(std::string_view key, const std::vector<std::string_view>& elements,
                             bool left, bool only_if_exists, int64_t* length) {
  if (!AllOk(key, elements)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *length = 0;
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    const bool exists = it != s.map.end();
    if (exists && it->second.type != ValueType::kList) return Status::kWrongType;
    if (!exists && only_if_exists) return Status::kOk;
    if (elements.empty()) {
      *length = exists ? static_cast<int64_t>(it->second.list()->items.size()) : 0;
      return Status::kOk;
    }
    uint64_t grow = 0;
    for (std::string_view v : elements) grow += ListElementMem(v.size());
    const uint64_t old_mem = exists ? it->second.mem_size : 0;
    const uint64_t new_mem = (exists ? old_mem : ListEntryMem(hk.key.size(), 0, false)) + grow;
    std::unique_ptr<ListValue> made;
    size_t pushed = 0;  // onto an existing list, for the undo
    const bool installed = Transact(
        s, new_mem, old_mem, false, 0, shortfall,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          ListValue* l = nullptr;
          if (!exists) {
            made = std::make_unique<ListValue>();
            l = made.get();
          } else {
            l = it->second.list();
          }
          for (std::string_view v : elements) {
            // push_front/push_back change nothing when they throw.
            if (left) {
              l->items.emplace_front(v);
            } else {
              l->items.emplace_back(v);
            }
            if (exists) ++pushed;
          }
          if (!exists) it = EmplaceLocked(s, hk);  // the last allocation
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          if (!exists) return;  // `made` goes with the lambda's scope
          auto& items = it->second.list()->items;
          for (; pushed > 0; --pushed) {
            if (left) {
              items.pop_front();
            } else {
              items.pop_back();
            }
          }
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          Entry& e = it->second;
          if (!exists) {
            e.Hold(std::move(made));
            e.type = ValueType::kList;
            e.compressed = false;
            e.expires_at = 0;
          }
          e.mem_size = new_mem;
          e.version = ++s.last_version;
          e.last_access.store(now, std::memory_order_relaxed);
        });
    if (!installed) return Status::kOutOfMemory;
    *length = static_cast<int64_t>(it->second.list()->items.size());
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
    *changed = true;
    return Status::kOk;
  });
}

Status Store::Impl::ListPop(std::string_view key, bool left, size_t count,
                            std::vector<std::string>* out) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  out->clear();
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kList) return Status::kWrongType;
        if (count == 0) return Status::kOk;
        auto& items = e.list()->items;
        const size_t n = std::min(count, items.size());
        out->reserve(n);  // the one allocation, before anything changes
        uint64_t freed = 0;
        for (size_t i = 0; i < n; ++i) {
          std::string& v = left ? items.front() : items.back();
          freed += ListElementMem(v.size());
          out->push_back(std::move(v));
          if (left) {
            items.pop_front();
          } else {
            items.pop_back();
          }
        }
        *changed = true;
        if (items.empty()) {
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        ListChangedLocked(s, it, key, e.mem_size - freed, now);
        return Status::kOk;
      });
}

template <typename Read>
Status Store::Impl::ReadList(std::string_view key, Read read) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
    read(static_cast<const ListValue*>(nullptr));
    return Status::kOk;
  }
  if (it->second.type != ValueType::kList) return Status::kWrongType;
  if (lru()) it->second.last_access.store(clock_->CoarseMs(), std::memory_order_relaxed);
  read(static_cast<const ListValue*>(it->second.list()));
  return Status::kOk;
}

Status Store::Impl::ListLen(std::string_view key, int64_t* length) const {
  return ReadList(key, [&](const ListValue* l) {
    *length = l == nullptr ? 0 : static_cast<int64_t>(l->items.size());
  });
}

Status Store::Impl::ListRange(std::string_view key, int64_t start, int64_t stop,
                              std::vector<std::string>* out) const {
  out->clear();
  return ReadList(key, [&](const ListValue* l) {
    if (l == nullptr) return;
    int64_t from = 0, to = 0;
    if (!ClampRange(start, stop, static_cast<int64_t>(l->items.size()), &from, &to)) return;
    out->reserve(static_cast<size_t>(to - from + 1));
    for (int64_t i = from; i <= to; ++i) out->push_back(l->items[static_cast<size_t>(i)]);
  });
}

Status Store::Impl::ListIndex(std::string_view key, int64_t index, std::string* value) const {
  bool found = false;
  const Status st = ReadList(key, [&](const ListValue* l) {
    size_t at = 0;
    if (l == nullptr || !ResolveIndex(index, static_cast<int64_t>(l->items.size()), &at)) return;
    *value = l->items[at];
    found = true;
  });
  if (st != Status::kOk) return st;
  return found ? Status::kOk : Status::kNotFound;
}

Status Store::Impl::ListSet(std::string_view key, int64_t index, std::string_view value,
                            bool* in_range) {
  if (!KeyOk(key) || !ValueOk(value)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *in_range = false;
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    if (it == s.map.end()) return Status::kNotFound;
    if (it->second.type != ValueType::kList) return Status::kWrongType;
    auto& items = it->second.list()->items;
    size_t at = 0;
    if (!ResolveIndex(index, static_cast<int64_t>(items.size()), &at)) return Status::kOk;
    *in_range = true;
    const uint64_t old_mem = it->second.mem_size;
    const uint64_t new_mem = old_mem - ListElementMem(items[at].size()) + ListElementMem(value.size());
    std::string fresh;
    const bool installed = Transact(
        s, new_mem, old_mem, false, 0, shortfall, [&] { fresh = std::string(value); }, [] {},
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          items[at].swap(fresh);
          Entry& e = it->second;
          e.mem_size = new_mem;
          e.version = ++s.last_version;
          e.last_access.store(now, std::memory_order_relaxed);
        });
    if (!installed) return Status::kOutOfMemory;
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
    *changed = true;
    return Status::kOk;
  });
}

Status Store::Impl::ListRem(std::string_view key, int64_t count, std::string_view element,
                            int64_t* removed) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *removed = 0;
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kList) return Status::kWrongType;
        auto& items = e.list()->items;
        const size_t n = items.size();
        // |count| as an unsigned limit (0: all), without negating INT64_MIN.
        const uint64_t limit =
            count == 0 ? n : (count > 0 ? static_cast<uint64_t>(count)
                                        : uint64_t{0} - static_cast<uint64_t>(count));
        // Mark the matches from the chosen end, then close the gaps in one
        // pass of moves (no allocation) and cut the tail.
        std::vector<bool> drop(n, false);  // allocated before any change
        uint64_t found = 0, freed = 0;
        for (size_t k = 0; k < n && found < limit; ++k) {
          const size_t i = count < 0 ? n - 1 - k : k;
          if (items[i] != element) continue;
          drop[i] = true;
          ++found;
          freed += ListElementMem(items[i].size());
        }
        if (found == 0) return Status::kOk;
        size_t keep = 0;
        for (size_t i = 0; i < n; ++i) {
          if (drop[i]) continue;
          if (keep != i) items[keep] = std::move(items[i]);
          ++keep;
        }
        while (items.size() > keep) items.pop_back();
        *removed = static_cast<int64_t>(found);
        *changed = true;
        if (items.empty()) {
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        ListChangedLocked(s, it, key, e.mem_size - freed, now);
        return Status::kOk;
      });
}

Status Store::Impl::ListTrim(std::string_view key, int64_t start, int64_t stop) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kList) return Status::kWrongType;
        auto& items = e.list()->items;
        int64_t from = 0, to = -1;
        if (!ClampRange(start, stop, static_cast<int64_t>(items.size()), &from, &to)) {
          *changed = true;
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        const size_t head = static_cast<size_t>(from);
        const size_t tail = items.size() - 1 - static_cast<size_t>(to);
        if (head == 0 && tail == 0) return Status::kOk;  // Redis: nothing to tell
        uint64_t freed = 0;
        for (size_t i = 0; i < head; ++i) {
          freed += ListElementMem(items.front().size());
          items.pop_front();
        }
        for (size_t i = 0; i < tail; ++i) {
          freed += ListElementMem(items.back().size());
          items.pop_back();
        }
        *changed = true;
        ListChangedLocked(s, it, key, e.mem_size - freed, now);
        return Status::kOk;
      });
}

Status Store::Impl::ListInsert(std::string_view key, bool before, std::string_view pivot,
                               std::string_view element, int64_t* length) {
  if (!KeyOk(key) || !ValueOk(element)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *length = 0;
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    if (it == s.map.end()) return Status::kOk;
    if (it->second.type != ValueType::kList) return Status::kWrongType;
    auto& items = it->second.list()->items;
    auto at = std::find(items.begin(), items.end(), pivot);
    if (at == items.end()) {
      *length = -1;
      return Status::kOk;
    }
    if (!before) ++at;
    const uint64_t old_mem = it->second.mem_size;
    const uint64_t new_mem = old_mem + ListElementMem(element.size());
    const bool installed = Transact(
        s, new_mem, old_mem, false, 0, shortfall,
        [&] {
          // A deque's insert changes nothing when the allocation throws
          // (std::string's moves do not).
          std::string fresh(element);
          items.insert(at, std::move(fresh));
        },
        [] {},
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          Entry& e = it->second;
          e.mem_size = new_mem;
          e.version = ++s.last_version;
          e.last_access.store(now, std::memory_order_relaxed);
        });
    if (!installed) return Status::kOutOfMemory;
    *length = static_cast<int64_t>(items.size());
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
    *changed = true;
    return Status::kOk;
  });
}

Status Store::Impl::ListPos(std::string_view key, std::string_view element, int64_t rank,
                            int64_t count, int64_t maxlen,
                            std::vector<int64_t>* positions) const {
  positions->clear();
  if (rank == 0 || count < 0 || maxlen < 0) return Status::kInvalidArgument;
  return ReadList(key, [&](const ListValue* l) {
    if (l == nullptr) return;
    const size_t n = l->items.size();
    const size_t scan = maxlen == 0 ? n : std::min(n, static_cast<size_t>(maxlen));
    // |rank| - 1 matches to skip, without negating INT64_MIN.
    uint64_t skip = rank > 0 ? static_cast<uint64_t>(rank) - 1
                             : uint64_t{0} - static_cast<uint64_t>(rank) - 1;
    for (size_t k = 0; k < scan; ++k) {
      const size_t i = rank > 0 ? k : n - 1 - k;
      if (l->items[i] != element) continue;
      if (skip > 0) {
        --skip;
        continue;
      }
      positions->push_back(static_cast<int64_t>(i));
      if (count != 0 && positions->size() >= static_cast<uint64_t>(count)) return;
    }
  });
}

Status Store::Impl::ListReplace(std::string_view key,
                                const std::vector<std::string_view>& elements) {
  if (!AllOk(key, elements)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    if (elements.empty()) {
      if (it != s.map.end()) {
        DeleteLocked(s, it, key);
        *changed = true;
      }
      return Status::kOk;
    }
    // Built whole before anything changes: a failed allocation throws out
    // of here with the old entry in place.
    auto list = std::make_unique<ListValue>();
    uint64_t elements_mem = 0;
    for (std::string_view v : elements) {
      list->items.emplace_back(v);
      elements_mem += ListElementMem(v.size());
    }
    Entry fresh;
    fresh.type = ValueType::kList;
    fresh.Hold(std::move(list));
    fresh.mem_size = ListEntryMem(hk.key.size(), elements_mem, false);
    if (!InstallLocked(s, &it, hk, &fresh, /*force=*/false, now, shortfall)) {
      return Status::kOutOfMemory;
    }
    PublishLocked(s, Mutation::Kind::kSet, key, &it->second);
    *changed = true;
    return Status::kOk;
  });
}

Status Store::Impl::ListMove(std::string_view src, std::string_view dst, bool from_left,
                             bool to_left, std::string* moved) {
  if (!KeyOk(src) || !KeyOk(dst)) return Status::kInvalidArgument;
  const HashedKey hs = HashKey(src), hd = HashKey(dst);
  Shard& a = ShardFor(hs);
  Shard& b = ShardFor(hd);
  return WithEviction<Status>([&](uint64_t* shortfall) {
    PairWrite w(this, &a, &b);
    return ListMoveLocked(a, b, hs, hd, from_left, to_left, moved, shortfall, &w.changed_a,
                          &w.changed_b);
  });
}

Status Store::Impl::ListMoveLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                                   bool from_left, bool to_left, std::string* moved,
                                   uint64_t* shortfall, bool* changed_a, bool* changed_b) {
  const int64_t now = clock_->NowMs();
  FindLiveForWriteLocked(a, hs, now, changed_a);
  auto dit = FindLiveForWriteLocked(b, hd, now, changed_b);
  auto sit = a.map.find(hs);  // again: the reap of dst may share the table
  // As Redis: a missing source answers nil before dst is looked at; a
  // source or destination of another type pops nothing.
  if (sit == a.map.end()) return Status::kNotFound;
  if (sit->second.type != ValueType::kList) return Status::kWrongType;
  if (dit != b.map.end() && dit->second.type != ValueType::kList) return Status::kWrongType;
  auto& sitems = sit->second.list()->items;
  const std::string& picked = from_left ? sitems.front() : sitems.back();
  moved->assign(picked);  // the caller's copy, before anything changes

  if (hs.key == hd.key) {  // a rotation: same size, same key
    auto& items = sitems;
    if (from_left != to_left) {
      // The copy goes in first (a deque's push changes nothing when it
      // throws), then the original goes.
      if (to_left) {
        items.push_front(*moved);
        items.pop_back();
      } else {
        items.push_back(*moved);
        items.pop_front();
      }
    }
    *changed_a = true;
    ListChangedLocked(a, sit, hs.key, sit->second.mem_size, now);
    return Status::kOk;
  }

  const uint64_t em = ListElementMem(moved->size());
  const bool dst_existed = dit != b.map.end();
  const bool src_empties = sitems.size() == 1;
  const uint64_t src_mem = sit->second.mem_size;
  const uint64_t dst_mem = dst_existed ? dit->second.mem_size : 0;
  const uint64_t dst_new_mem =
      (dst_existed ? dst_mem : ListEntryMem(hd.key.size(), 0, false)) + em;
  // An emptied source is removed after, by DeleteLocked, which takes off
  // what it then accounts.
  const uint64_t src_new_mem = src_mem - em;
  std::unique_ptr<ListValue> made;
  const bool installed = Transact(
      b, src_new_mem + dst_new_mem, src_mem + dst_mem, false, 0, shortfall,
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        if (!dst_existed) {
          made = std::make_unique<ListValue>();
          made->items.push_back(*moved);
          dit = EmplaceLocked(b, hd);
          sit = a.map.find(hs);  // the insert may have rehashed a shared table
        } else if (to_left) {
          dit->second.list()->items.push_front(*moved);
        } else {
          dit->second.list()->items.push_back(*moved);
        }
      },
      [] {},
      [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
        Entry& de = dit->second;
        if (!dst_existed) {
          de.Hold(std::move(made));
          de.type = ValueType::kList;
          de.compressed = false;
          de.expires_at = 0;
        }
        de.mem_size = dst_new_mem;
        de.version = ++b.last_version;
        de.last_access.store(now, std::memory_order_relaxed);
        Entry& se = sit->second;
        if (from_left) {
          se.list()->items.pop_front();
        } else {
          se.list()->items.pop_back();
        }
        // Transact settles the total for both entries.
        se.mem_size = src_new_mem;
        se.version = ++a.last_version;
        se.last_access.store(now, std::memory_order_relaxed);
      });
  if (!installed) return Status::kOutOfMemory;
  *changed_a = true;
  *changed_b = true;
  if (src_empties) {
    DeleteLocked(a, sit, hs.key);
  } else {
    PublishLocked(a, Mutation::Kind::kSet, hs.key, &sit->second);
  }
  PublishLocked(b, Mutation::Kind::kSet, hd.key, &dit->second);
  return Status::kOk;
}

}  // namespace ephpm
