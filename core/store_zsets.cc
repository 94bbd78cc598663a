// The sorted set family: ZADD, ZINCRBY (ZAdd with kZAddIncr), ZREM,
// ZSCORE, ZMSCORE, ZCARD, ZRANK, the ZRANGE family, ZCOUNT, ZLEXCOUNT,
// ZREMRANGEBY*, ZPOPMIN/ZPOPMAX, ZRANDMEMBER and the *STORE operations.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "random.h"
#include "store_impl.h"

namespace ephpm {

namespace {

using ZRangeSpec = Store::ZRangeSpec;
using ZLexBound = Store::ZLexBound;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Zero is kept as +0, as Redis's small sorted sets (which keep the text
// "0") answer it.
double Canonical(double d) { return d == 0 ? 0.0 : d; }

// How many members score below x.
size_t CountBelow(const ZOrder& o, double x) { return o.order_of_key({x, std::string_view()}); }

// How many members score x or below.
size_t CountAtMost(const ZOrder& o, double x) {
  if (x == kInf) return o.size();
  return o.order_of_key({std::nextafter(x, kInf), std::string_view()});
}

bool GteMin(std::string_view m, const ZLexBound& b) {
  switch (b.kind) {
    case ZLexBound::Kind::kMinusInf: return true;
    case ZLexBound::Kind::kPlusInf: return false;
    case ZLexBound::Kind::kInclusive: return m >= b.value;
    case ZLexBound::Kind::kExclusive: return m > b.value;
  }
  return false;
}

bool LteMax(std::string_view m, const ZLexBound& b) {
  switch (b.kind) {
    case ZLexBound::Kind::kMinusInf: return false;
    case ZLexBound::Kind::kPlusInf: return true;
    case ZLexBound::Kind::kInclusive: return m <= b.value;
    case ZLexBound::Kind::kExclusive: return m < b.value;
  }
  return false;
}

// The first rank whose member fails `pred`, which holds on a prefix of the
// order (a lex bound does when the members share a score, as Redis assumes).
template <typename Pred>
size_t PartitionPoint(const ZOrder& o, Pred pred) {
  size_t lo = 0, hi = o.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (pred(o.find_by_order(mid)->second)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The ascending ranks [*first, *last) that spec's range holds, before its
// offset and count.
void Select(const ZOrder& o, const ZRangeSpec& spec, size_t* first, size_t* last) {
  const int64_t len = static_cast<int64_t>(o.size());
  *first = *last = 0;
  switch (spec.by) {
    case ZRangeSpec::By::kRank: {
      int64_t start = spec.start, end = spec.stop;
      if (start < 0) start += len;
      if (end < 0) end += len;
      if (start < 0) start = 0;
      if (start > end || start >= len) return;
      if (end >= len) end = len - 1;
      // In reverse the ranks count from the highest member.
      *first = static_cast<size_t>(spec.reverse ? len - 1 - end : start);
      *last = static_cast<size_t>(spec.reverse ? len - start : end + 1);
      return;
    }
    case ZRangeSpec::By::kScore: {
      const auto& r = spec.score;
      *first = r.min_exclusive ? CountAtMost(o, r.min) : CountBelow(o, r.min);
      *last = r.max_exclusive ? CountBelow(o, r.max) : CountAtMost(o, r.max);
      break;
    }
    case ZRangeSpec::By::kLex:
      *first = PartitionPoint(o, [&](std::string_view m) { return !GteMin(m, spec.lex_min); });
      *last = PartitionPoint(o, [&](std::string_view m) { return LteMax(m, spec.lex_max); });
      break;
  }
  if (*last < *first) *last = *first;
}

// A source of ZStore: a sorted set or a set (whose members score 1);
// neither when missing.
struct Source {
  const ZSetValue* z = nullptr;
  const SetValue* set = nullptr;
  bool Find(std::string_view m, double* score) const {
    if (z != nullptr) {
      auto it = z->scores.find(m);
      if (it == z->scores.end()) return false;
      *score = it->second;
      return true;
    }
    if (set != nullptr && set->contains(m)) {
      *score = 1.0;
      return true;
    }
    return false;
  }
  template <typename Fn>
  void ForEach(Fn fn) const {
    if (z != nullptr) {
      for (const auto& [score, member] : z->order) fn(member, score);
    } else if (set != nullptr) {
      for (const std::string* m : set->order) fn(std::string_view(*m), 1.0);
    }
  }
  size_t Size() const { return z != nullptr ? z->scores.size() : set != nullptr ? set->size() : 0; }
};

// The source a live entry makes: kWrongType unless a sorted set or a set.
Status SourceOf(const Entry& e, Source* src) {
  if (e.type == ValueType::kZSet) {
    src->z = e.zset();
  } else if (e.type == ValueType::kSet) {
    src->set = e.set();
  } else {
    return Status::kWrongType;
  }
  return Status::kOk;
}

// The computation ZStore and ZCombine share: the members of the result
// with their scores.  Members view the sources' bytes.
void CombineSources(const std::vector<Source>& sources, const std::vector<double>& weights,
                    Store::ZAggregate aggregate, Store::ZStoreOp op,
                    absl::flat_hash_map<std::string_view, double>* result) {
  auto weight = [&](size_t i) { return weights.empty() ? 1.0 : weights[i]; };
  auto combine = [&](double* acc, double v) {
    switch (aggregate) {
      case Store::ZAggregate::kSum:
        *acc += v;
        if (std::isnan(*acc)) *acc = 0;  // inf + -inf, as Redis
        break;
      // A NaN v leaves acc as it is (Redis's `v < acc ? v : acc`).
      case Store::ZAggregate::kMin: *acc = v < *acc ? v : *acc; break;
      case Store::ZAggregate::kMax: *acc = v > *acc ? v : *acc; break;
    }
  };
  // Redis combines a union's and an intersection's inputs smallest first
  // (its qsort by cardinality, a stable merge sort in glibc); with
  // infinities the order changes the sums, and the first input is the one
  // whose 0 * inf counts as 0.
  std::vector<size_t> by_size(sources.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](size_t a, size_t b) { return sources[a].Size() < sources[b].Size(); });
  switch (op) {
    case Store::ZStoreOp::kUnion:
      for (size_t i : by_size) {
        sources[i].ForEach([&](std::string_view m, double sc) {
          double v = weight(i) * sc;
          if (std::isnan(v)) v = 0;  // 0 * inf, as Redis
          auto [r, inserted] = result->try_emplace(m, v);
          if (!inserted) combine(&r->second, v);
        });
      }
      break;
    case Store::ZStoreOp::kInter: {
      const size_t first = by_size[0];
      sources[first].ForEach([&](std::string_view m, double sc) {
        double acc = weight(first) * sc;
        if (std::isnan(acc)) acc = 0;  // only the first input's, as Redis
        for (size_t k = 1; k < by_size.size(); ++k) {
          const size_t i = by_size[k];
          double other = 0;
          if (!sources[i].Find(m, &other)) return;
          combine(&acc, weight(i) * other);
        }
        result->emplace(m, acc);
      });
      break;
    }
    case Store::ZStoreOp::kDiff:
      sources[0].ForEach([&](std::string_view m, double sc) {
        double unused = 0;
        for (size_t i = 1; i < sources.size(); ++i) {
          if (sources[i].Find(m, &unused)) return;
        }
        result->emplace(m, sc);
      });
      break;
  }
}

// Calls emit(member, score) for the members `spec` selects from `o`, in
// spec's order (ZRANGE's selection).
template <typename Emit>
void ForRange(const ZOrder& o, const ZRangeSpec& spec, Emit emit) {
  if (spec.by != ZRangeSpec::By::kRank && spec.offset < 0) return;
  size_t first = 0, last = 0;
  Select(o, spec, &first, &last);
  const size_t total = last - first;
  const size_t offset = spec.by == ZRangeSpec::By::kRank ? 0 : static_cast<size_t>(spec.offset);
  if (offset >= total) return;
  size_t take = total - offset;
  if (spec.by != ZRangeSpec::By::kRank && spec.count >= 0) {
    take = std::min(take, static_cast<size_t>(spec.count));
  }
  auto it = o.find_by_order(spec.reverse ? last - 1 - offset : first + offset);
  for (size_t i = 0; i < take; ++i) {
    emit(std::string_view(it->second), it->first, take);
    if (spec.reverse) {
      --it;
    } else {
      ++it;
    }
  }
}

}  // namespace

// ---- reads -----------------------------------------------------------------

template <typename Read>
Status Store::Impl::ReadZSet(std::string_view key, Read read) const {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
    return read(static_cast<const ZSetValue*>(nullptr));
  }
  if (it->second.type != ValueType::kZSet) return Status::kWrongType;
  if (lru()) it->second.last_access.store(clock_->CoarseMs(), std::memory_order_relaxed);
  return read(static_cast<const ZSetValue*>(it->second.zset()));
}

Status Store::Impl::ZScore(std::string_view key, std::string_view member, double* score) const {
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr) return Status::kNotFound;
    auto m = z->scores.find(member);
    if (m == z->scores.end()) return Status::kNotFound;
    *score = m->second;
    return Status::kOk;
  });
}

Status Store::Impl::ZMScore(std::string_view key, const std::vector<std::string_view>& members,
                            std::vector<std::optional<double>>* scores) const {
  scores->assign(members.size(), std::nullopt);
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr) return Status::kOk;
    for (size_t i = 0; i < members.size(); ++i) {
      auto m = z->scores.find(members[i]);
      if (m != z->scores.end()) (*scores)[i] = m->second;
    }
    return Status::kOk;
  });
}

Status Store::Impl::ZCard(std::string_view key, int64_t* count) const {
  return ReadZSet(key, [&](const ZSetValue* z) {
    *count = z == nullptr ? 0 : static_cast<int64_t>(z->size());
    return Status::kOk;
  });
}

Status Store::Impl::ZRank(std::string_view key, std::string_view member, bool reverse,
                          int64_t* rank) const {
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr) return Status::kNotFound;
    auto m = z->scores.find(member);
    if (m == z->scores.end()) return Status::kNotFound;
    const size_t r = z->order.order_of_key({m->second, std::string_view(m->first)});
    *rank = static_cast<int64_t>(reverse ? z->size() - 1 - r : r);
    return Status::kOk;
  });
}

Status Store::Impl::ZRange(std::string_view key, const ZRangeSpec& spec, ZMembers* out) const {
  out->clear();
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr) return Status::kOk;
    ForRange(z->order, spec, [&](std::string_view m, double score, size_t take) {
      if (out->empty()) out->reserve(take);
      out->emplace_back(std::string(m), score);
    });
    return Status::kOk;
  });
}

Status Store::Impl::ZCount(std::string_view key, const ZRangeSpec& spec, int64_t* count) const {
  *count = 0;
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr) return Status::kOk;
    ZRangeSpec ascending = spec;
    ascending.reverse = false;
    size_t first = 0, last = 0;
    Select(z->order, ascending, &first, &last);
    *count = static_cast<int64_t>(last - first);
    return Status::kOk;
  });
}

Status Store::Impl::ZRandMember(std::string_view key, int64_t count, ZMembers* out) const {
  out->clear();
  return ReadZSet(key, [&](const ZSetValue* z) {
    if (z == nullptr || count == 0) return Status::kOk;
    const size_t n = z->size();
    auto emit = [&](size_t rank) {
      auto it = z->order.find_by_order(rank);
      out->emplace_back(std::string(it->second), it->first);
    };
    if (count < 0) {  // repeats allowed
      // -count as unsigned: INT64_MIN has no positive counterpart.
      const uint64_t k = 0 - static_cast<uint64_t>(count);
      out->reserve(static_cast<size_t>(std::min<uint64_t>(k, 1 << 16)));
      for (uint64_t i = 0; i < k; ++i) emit(static_cast<size_t>(RandomBelow(n)));
      return Status::kOk;
    }
    const size_t k = static_cast<size_t>(count);
    if (k >= n) {  // the whole set, from the highest, as Redis's small sets
      out->reserve(n);
      for (auto it = z->order.end(); it != z->order.begin();) {
        --it;
        out->emplace_back(std::string(it->second), it->first);
      }
      return Status::kOk;
    }
    // k distinct ranks: the first k of a partial Fisher-Yates shuffle.
    std::vector<size_t> ranks(n);
    std::iota(ranks.begin(), ranks.end(), size_t{0});
    out->reserve(k);
    for (size_t i = 0; i < k; ++i) {
      std::swap(ranks[i], ranks[i + static_cast<size_t>(RandomBelow(n - i))]);
      emit(ranks[i]);
    }
    return Status::kOk;
  });
}

// ---- writes ----------------------------------------------------------------

Status Store::Impl::ZAdd(std::string_view key,
                         const std::vector<std::pair<double, std::string_view>>& pairs,
                         unsigned flags, int64_t* count, std::optional<double>* score) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  for (const auto& [sc, m] : pairs) {
    if (!ValueOk(m) || std::isnan(sc)) return Status::kInvalidArgument;
  }
  const bool incr = (flags & Store::kZAddIncr) != 0;
  if (incr && pairs.size() != 1) return Status::kInvalidArgument;
  const bool nx = (flags & Store::kZAddNx) != 0, xx = (flags & Store::kZAddXx) != 0;
  const bool gt = (flags & Store::kZAddGt) != 0, lt = (flags & Store::kZAddLt) != 0;
  if ((nx && (xx || gt || lt)) || (gt && lt)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(hk, [&](Shard& s, int64_t now, bool* changed,
                                uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    *count = 0;
    if (score != nullptr) score->reset();
    auto it = FindLiveForWriteLocked(s, hk, now, changed);
    const bool exists = it != s.map.end();
    if (exists && it->second.type != ValueType::kZSet) return Status::kWrongType;
    if (!exists && (flags & Store::kZAddXx) != 0) return Status::kOk;
    ZSetValue* z = exists ? it->second.zset() : nullptr;

    // What the pairs do, applied one after the other as Redis does: each
    // member's final score.  `stored` views an existing member's bytes.
    struct Step {
      std::string_view member;
      double score;
      bool existed;
      double old_score;
      std::string_view stored;
    };
    // A member given twice is found among the steps so far: by a scan for
    // a few pairs (no allocation: most ZADDs have one), by a map for more.
    constexpr size_t kScanPairs = 16;
    absl::InlinedVector<Step, 2> steps;
    absl::flat_hash_map<std::string_view, size_t> step_of;
    const bool scan = pairs.size() <= kScanPairs;
    auto find_step = [&](std::string_view m) -> Step* {
      if (scan) {
        for (Step& st : steps) {
          if (st.member == m) return &st;
        }
        return nullptr;
      }
      auto si = step_of.find(m);
      return si == step_of.end() ? nullptr : &steps[si->second];
    };
    auto add_step = [&](const Step& st) {
      if (!scan) step_of.emplace(st.member, steps.size());
      steps.push_back(st);
    };
    int64_t added = 0, updated = 0;
    bool processed = false;
    double last = 0;
    for (const auto& [sc, m] : pairs) {
      Step* step = find_step(m);
      bool present = step != nullptr;
      double cur = present ? step->score : 0;
      std::string_view stored;
      if (!present && z != nullptr) {
        auto zi = z->scores.find(m);
        if (zi != z->scores.end()) {
          present = true;
          cur = zi->second;
          stored = zi->first;
        }
      }
      if (present) {
        if ((flags & Store::kZAddNx) != 0) continue;
        double next = sc;
        if (incr) {
          next = cur + sc;
          if (std::isnan(next)) return Status::kNanOrInfinity;
        }
        next = Canonical(next);
        if (((flags & Store::kZAddLt) != 0 && next >= cur) ||
            ((flags & Store::kZAddGt) != 0 && next <= cur)) {
          continue;
        }
        processed = true;
        last = next;
        if (next == cur) continue;
        ++updated;
        if (step == nullptr) {
          add_step(Step{m, next, true, cur, stored});
        } else {
          step->score = next;
        }
      } else {
        if ((flags & Store::kZAddXx) != 0) continue;
        ++added;
        processed = true;
        last = Canonical(sc);
        add_step(Step{m, last, false, 0, {}});
      }
    }
    *count = (flags & Store::kZAddCh) != 0 ? added + updated : added;
    if (incr && processed && score != nullptr) *score = last;
    // A member moved away and back again is unchanged.
    steps.erase(std::remove_if(steps.begin(), steps.end(),
                               [](const Step& st) { return st.existed && st.score == st.old_score; }),
                steps.end());
    if (steps.empty()) return Status::kOk;

    uint64_t grow = 0;
    size_t fresh = 0;
    for (const Step& st : steps) {
      if (st.existed) continue;
      grow += ZSetMemberMem(st.member.size());
      ++fresh;
    }
    const uint64_t old_mem = exists ? it->second.mem_size : 0;
    const uint64_t new_mem = (exists ? old_mem : ZSetEntryMem(key.size(), 0, false)) + grow;
    std::unique_ptr<ZSetValue> made;
    size_t done = 0;  // steps whose new nodes are in place
    const bool installed = Transact(
        s, new_mem, old_mem, false, 0, shortfall,
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          if (!exists) {
            made = std::make_unique<ZSetValue>();
            z = made.get();
          }
          z->scores.reserve(z->scores.size() + fresh);
          // New members get their map and tree nodes; a moved member a second
          // tree node, the old one going in the apply step.
          for (const Step& st : steps) {
            if (st.existed) {
              z->order.insert({st.score, st.stored});
            } else {
              auto node = z->scores.emplace(std::string(st.member), st.score).first;
              try {
                z->order.insert({st.score, std::string_view(node->first)});
              } catch (...) {
                z->scores.erase(node);
                throw;
              }
            }
            ++done;
          }
          if (!exists) it = EmplaceLocked(s, hk);
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          if (!exists) {
            made.reset();
            return;
          }
          for (size_t i = done; i-- > 0;) {
            const Step& st = steps[i];
            if (st.existed) {
              z->order.erase({st.score, st.stored});
            } else {
              auto node = z->scores.find(st.member);
              z->order.erase({st.score, std::string_view(node->first)});
              z->scores.erase(node);
            }
          }
        },
        [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
          Entry& e = it->second;
          if (!exists) {
            e.Hold(std::move(made));
            e.type = ValueType::kZSet;
            e.compressed = false;
            e.expires_at = 0;
          }
          for (const Step& st : steps) {
            if (!st.existed) continue;
            z->order.erase({st.old_score, st.stored});
            z->scores.find(st.stored)->second = st.score;
          }
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

Status Store::Impl::ZRem(std::string_view key, const std::vector<std::string_view>& members,
                         int64_t* removed) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *removed = 0;
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        Entry& e = it->second;
        if (e.type != ValueType::kZSet) return Status::kWrongType;
        ZSetValue& z = *e.zset();
        uint64_t freed = 0;
        for (std::string_view m : members) {
          auto mi = z.scores.find(m);
          if (mi == z.scores.end()) continue;
          freed += ZSetMemberMem(mi->first.size());
          z.order.erase({mi->second, std::string_view(mi->first)});
          z.scores.erase(mi);
          ++*removed;
        }
        if (*removed == 0) return Status::kOk;
        *changed = true;
        if (z.scores.empty()) {  // the last member takes the key with it
          DeleteLocked(s, it, key);
          return Status::kOk;
        }
        Release(s, e.mem_size - freed, e.mem_size);
        e.mem_size -= freed;
        e.version = ++s.last_version;
        PublishLocked(s, Mutation::Kind::kSet, key, &e);
        return Status::kOk;
      });
}

void Store::Impl::ZRemoveRanksLocked(Shard& s, Map::iterator it, std::string_view key,
                                     size_t first, size_t last, bool descending, ZMembers* out,
                                     bool* changed) {
  if (first >= last) return;
  Entry& e = it->second;
  ZSetValue& z = *e.zset();
  if (out != nullptr) {  // copied before anything changes
    out->reserve(last - first);
    auto oi = z.order.find_by_order(descending ? last - 1 : first);
    for (size_t i = first; i < last; ++i) {
      out->emplace_back(std::string(oi->second), oi->first);
      if (descending) {
        --oi;
      } else {
        ++oi;
      }
    }
  }
  uint64_t freed = 0;
  auto oi = z.order.find_by_order(first);
  for (size_t i = first; i < last; ++i) {
    auto mi = z.scores.find(oi->second);
    freed += ZSetMemberMem(mi->first.size());
    auto next = oi;
    ++next;
    z.order.erase(oi);
    z.scores.erase(mi);
    oi = next;
  }
  *changed = true;
  if (z.scores.empty()) {
    DeleteLocked(s, it, key);
    return;
  }
  Release(s, e.mem_size - freed, e.mem_size);
  e.mem_size -= freed;
  e.version = ++s.last_version;
  PublishLocked(s, Mutation::Kind::kSet, key, &e);
}

Status Store::Impl::ZRemRange(std::string_view key, const ZRangeSpec& spec, int64_t* removed) {
  if (!KeyOk(key)) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  *removed = 0;
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        if (it->second.type != ValueType::kZSet) return Status::kWrongType;
        ZRangeSpec ascending = spec;
        ascending.reverse = false;
        size_t first = 0, last = 0;
        Select(it->second.zset()->order, ascending, &first, &last);
        *removed = static_cast<int64_t>(last - first);
        ZRemoveRanksLocked(s, it, key, first, last, false, nullptr, changed);
        return Status::kOk;
      });
}

Status Store::Impl::ZPop(std::string_view key, bool max, int64_t count, ZMembers* out) {
  if (!KeyOk(key) || count < 0) return Status::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        out->clear();
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return Status::kOk;
        if (it->second.type != ValueType::kZSet) return Status::kWrongType;
        const size_t n = it->second.zset()->size();
        const size_t k = std::min(n, static_cast<size_t>(count));
        if (max) {
          ZRemoveRanksLocked(s, it, key, n - k, n, true, out, changed);
        } else {
          ZRemoveRanksLocked(s, it, key, 0, k, false, out, changed);
        }
        return Status::kOk;
      });
}

Status Store::Impl::ZReplaceLocked(
    Shard& s, const HashedKey& hd, const std::vector<std::pair<std::string_view, double>>& members,
    int64_t now, uint64_t* shortfall, std::vector<Shard*>* touched) {
  bool expired = false;
  auto it = FindLiveForWriteLocked(s, hd, now, &expired);
  if (expired) touched->push_back(&s);
  if (members.empty()) {
    if (it != s.map.end()) {
      DeleteLocked(s, it, hd.key);
      touched->push_back(&s);
    }
    return Status::kOk;
  }
  Entry fresh;
  fresh.type = ValueType::kZSet;
  fresh.Hold(std::make_unique<ZSetValue>());
  fresh.zset()->scores.reserve(members.size());
  uint64_t elements = 0;
  for (const auto& [m, sc] : members) {
    ZSetPut(fresh.zset(), m, Canonical(sc));
    elements += ZSetMemberMem(m.size());
  }
  fresh.mem_size = ZSetEntryMem(hd.key.size(), elements, false);
  if (!InstallLocked(s, &it, hd, &fresh, /*force=*/false, now, shortfall)) {
    return Status::kOutOfMemory;
  }
  PublishLocked(s, Mutation::Kind::kSet, hd.key, &it->second);
  touched->push_back(&s);
  return Status::kOk;
}

Status Store::Impl::ZStore(std::string_view dst, const std::vector<std::string_view>& keys,
                           const std::vector<double>& weights, Store::ZAggregate aggregate,
                           Store::ZStoreOp op, int64_t* size) {
  if (!weights.empty() && weights.size() != keys.size()) return Status::kInvalidArgument;
  return WriteFromSources(dst, keys, [&](const HashedKey& hd,
                                         const std::vector<const Entry*>& live, int64_t now,
                                         uint64_t* shortfall, std::vector<Shard*>* touched)
                                         ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::vector<Source> sources(live.size());
    for (size_t i = 0; i < live.size(); ++i) {
      if (live[i] == nullptr) continue;
      const Status st = SourceOf(*live[i], &sources[i]);
      if (st != Status::kOk) return st;
    }
    // Members view the sources' bytes, which stay until the result is
    // installed.
    absl::flat_hash_map<std::string_view, double> result;
    CombineSources(sources, weights, aggregate, op, &result);
    *size = static_cast<int64_t>(result.size());
    const std::vector<std::pair<std::string_view, double>> members(result.begin(), result.end());
    return ZReplaceLocked(ShardFor(hd), hd, members, now, shortfall, touched);
  });
}

namespace {

// The live sources at `hks`, whose shards the caller holds, for a read:
// an expired or missing key is an empty source.
Status ReadSourcesLocked(const std::vector<const Shard*>& shards,
                         const std::vector<HashedKey>& hks, int64_t now, bool lru,
                         std::vector<Source>* sources) ABSL_NO_THREAD_SAFETY_ANALYSIS {
  sources->assign(hks.size(), Source{});
  for (size_t i = 0; i < hks.size(); ++i) {
    auto it = shards[i]->map.find(hks[i]);
    if (it == shards[i]->map.end() || IsExpired(it->second, now)) continue;
    const Status st = SourceOf(it->second, &(*sources)[i]);
    if (st != Status::kOk) return st;
    if (lru) it->second.last_access.store(now, std::memory_order_relaxed);
  }
  return Status::kOk;
}

}  // namespace

Status Store::Impl::ZCombine(const std::vector<std::string_view>& keys,
                             const std::vector<double>& weights, Store::ZAggregate aggregate,
                             Store::ZStoreOp op, ZMembers* out) const {
  out->clear();
  if (keys.empty()) return Status::kInvalidArgument;
  if (!weights.empty() && weights.size() != keys.size()) return Status::kInvalidArgument;
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards;
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  std::vector<std::pair<std::string_view, double>> sorted;
  MultiLock l(this, shards);
  std::vector<Source> sources;
  const Status st = ReadSourcesLocked({shards.begin(), shards.end()}, hks, clock_->NowMs(),
                                      lru(), &sources);
  if (st != Status::kOk) return st;
  absl::flat_hash_map<std::string_view, double> result;
  CombineSources(sources, weights, aggregate, op, &result);
  // Unlike a stored result, the reply keeps a -0 (Redis replies it from
  // the computed set, before any small encoding turns it into 0).
  sorted.assign(result.begin(), result.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  out->reserve(sorted.size());
  for (const auto& [m, sc] : sorted) out->emplace_back(std::string(m), sc);
  return Status::kOk;
}

Status Store::Impl::ZInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                               int64_t* count) const {
  *count = 0;
  if (keys.empty()) return Status::kInvalidArgument;
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards;
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  MultiLock l(this, shards);
  std::vector<Source> sources;
  const Status st = ReadSourcesLocked({shards.begin(), shards.end()}, hks, clock_->NowMs(),
                                      lru(), &sources);
  if (st != Status::kOk) return st;
  auto size = [](const Source& src) {
    if (src.z != nullptr) return src.z->size();
    return src.set != nullptr ? src.set->size() : size_t{0};
  };
  size_t smallest = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (size(sources[i]) == 0) return Status::kOk;  // nothing in common
    if (size(sources[i]) < size(sources[smallest])) smallest = i;
  }
  bool done = false;
  sources[smallest].ForEach([&](std::string_view m, double) {
    if (done) return;
    double unused = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (i != smallest && !sources[i].Find(m, &unused)) return;
    }
    ++*count;
    if (limit != 0 && static_cast<uint64_t>(*count) >= limit) done = true;
  });
  return Status::kOk;
}

Status Store::Impl::ZRangeStore(std::string_view dst, std::string_view src,
                                const ZRangeSpec& spec, int64_t* size) {
  *size = 0;
  if (!KeyOk(dst) || !KeyOk(src)) return Status::kInvalidArgument;
  const HashedKey hd = HashKey(dst);
  const HashedKey hs = HashKey(src);
  std::vector<Shard*> shards{&ShardFor(hd), &ShardFor(hs)};
  return WithEviction<Status>([&](uint64_t* shortfall) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    std::vector<Shard*> touched;
    Status st = Status::kOk;
    {
      MultiLock l(this, shards);
      // Both shards are held (the analysis cannot follow MultiLock).
      const int64_t now = clock_->NowMs();
      Shard& ss = ShardFor(hs);
      bool expired = false;
      auto it = FindLiveForWriteLocked(ss, hs, now, &expired);
      if (expired) touched.push_back(&ss);
      std::vector<std::pair<std::string_view, double>> members;
      if (it != ss.map.end()) {
        if (it->second.type != ValueType::kZSet) {
          st = Status::kWrongType;
        } else {
          ForRange(it->second.zset()->order, spec, [&](std::string_view m, double sc, size_t) {
            members.emplace_back(m, sc);
          });
        }
      }
      if (st == Status::kOk) {
        *size = static_cast<int64_t>(members.size());
        st = ZReplaceLocked(ShardFor(hd), hd, members, now, shortfall, &touched);
        if (st != Status::kOk) *size = 0;
      }
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (Shard* c : touched) Notify(*c);
    return st;
  });
}

Status Store::Impl::ZMPop(const std::vector<std::string_view>& keys, bool max, int64_t count,
                          bool skip_other_types, size_t* which, ZMembers* out) {
  out->clear();
  *which = 0;
  if (keys.empty() || count < 0) return Status::kInvalidArgument;
  std::vector<HashedKey> hks;
  std::vector<Shard*> shards;
  for (std::string_view k : keys) {
    if (!KeyOk(k)) return Status::kInvalidArgument;
    hks.push_back(HashKey(k));
    shards.push_back(&ShardFor(hks.back()));
  }
  std::vector<Shard*> touched;
  Status st = Status::kOk;
  [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    MultiLock l(this, shards);
    // Every shard is held (the analysis cannot follow MultiLock).
    const int64_t now = clock_->NowMs();
    for (size_t i = 0; i < keys.size(); ++i) {
      Shard& s = ShardFor(hks[i]);
      bool changed = false;
      auto it = FindLiveForWriteLocked(s, hks[i], now, &changed);
      if (changed) touched.push_back(&s);
      if (it == s.map.end()) continue;
      if (it->second.type != ValueType::kZSet) {
        if (skip_other_types) continue;
        st = Status::kWrongType;
        return;
      }
      const size_t n = it->second.zset()->size();
      const size_t k = std::min(n, static_cast<size_t>(count));
      if (k == 0) return;  // COUNT 0 pops nothing (as ZPop)
      *which = i;
      if (max) {
        ZRemoveRanksLocked(s, it, hks[i].key, n - k, n, true, out, &changed);
      } else {
        ZRemoveRanksLocked(s, it, hks[i].key, 0, k, false, out, &changed);
      }
      touched.push_back(&s);
      return;
    }
  }();
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (Shard* c : touched) Notify(*c);
  return st;
}

}  // namespace ephpm
