// Shared by store_model_test.cc: the reference the store is checked against,
// an exact model of its entries, TTLs, pins, compression, memory accounting
// and (as sets of candidate states) eviction.

#ifndef EPHPM_TESTS_STORE_MODEL_REFERENCE_H_
#define EPHPM_TESTS_STORE_MODEL_REFERENCE_H_

#include <zstd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "store_model_ops.h"

namespace store_model {

// --- the reference -----------------------------------------------------------

struct MEntry {
  bool hash = false;
  std::string str;
  std::map<std::string, std::string> fields;
  int64_t exp = 0;  // absolute ms, 0 = none
  bool pinned = false;
  bool compressed = false;
  uint64_t stored = 0;  // bytes stored for a string (the frame when compressed)
};

inline bool SameEntry(const MEntry& a, const MEntry& b) {
  return a.hash == b.hash && a.str == b.str && a.fields == b.fields && a.exp == b.exp &&
         a.pinned == b.pinned && a.compressed == b.compressed && (a.hash || a.stored == b.stored);
}

inline std::string DescribeEntry(const MEntry& e) {
  std::ostringstream os;
  if (e.hash) {
    os << "hash{";
    bool first = true;
    for (const auto& [f, v] : e.fields) {
      os << (first ? "" : ", ") << Show(f) << ": " << Show(v);
      first = false;
    }
    os << "}";
  } else {
    os << Show(e.str);
    if (e.compressed) os << " (compressed to " << e.stored << ")";
  }
  if (e.exp != 0) os << " exp=t+" << e.exp - kStart;
  if (e.pinned) os << " pinned";
  return os.str();
}

// A canonical decimal int64: exactly what printing the number gives back.
inline bool ParseCanonical(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size()) return false;
  if (std::to_string(v) != s) return false;
  *out = v;
  return true;
}

class Reference {
 public:
  Reference(const Config& c, int64_t now) : c_(c), limit_(LimitFor(c)), now_(now) {}

  int64_t now() const { return now_; }
  uint64_t reaped() const { return reaped_; }
  bool forced_over() const { return forced_over_; }
  const std::map<std::string, MEntry>& entries() const { return entries_; }

  bool Live(const MEntry& e) const { return e.exp == 0 || e.exp > now_; }

  uint64_t Mem(const std::string& key, const MEntry& e) const {
    const Overheads& o = Measured();
    uint64_t m = o.entry + Buffer(key.size());
    if (e.hash) {
      m += o.hash;
      for (const auto& [f, v] : e.fields) m += o.field + Buffer(f.size()) + Buffer(v.size());
    } else {
      m += ValueBuffer(e.stored);
    }
    if (e.exp != 0) m += o.ttl + Buffer(key.size());
    return m;
  }

  // The documented cost of a string's bytes: nothing up to 15 (they fit in
  // the string object), else the malloc chunk of len + 1 bytes (+ 8, in
  // steps of 16, at least 32).
  static uint64_t Buffer(uint64_t len) {
    if (len <= 15) return 0;
    return std::max<uint64_t>(32, (len + 1 + 8 + 15) / 16 * 16);
  }
  // A string entry's stored bytes (core/value_buf.h): nothing up to 15,
  // else the malloc chunk of exactly len bytes (no terminating NUL).
  static uint64_t ValueBuffer(uint64_t len) {
    if (len <= 15) return 0;
    return std::max<uint64_t>(32, (len + 8 + 15) / 16 * 16);
  }

  uint64_t Total() const {
    uint64_t t = 0;
    for (const auto& [k, e] : entries_) t += Mem(k, e);
    return t;
  }

  // The pinned entries held, expired ones not yet removed included: what
  // the store counts as unevictable when it decides that a write never fits.
  uint64_t PinnedHeld() const {
    uint64_t t = 0;
    for (const auto& [k, e] : entries_) {
      if (e.pinned) t += Mem(k, e);
    }
    return t;
  }

  // Keys eviction may take, in the state after a refused first attempt.
  std::vector<std::string> ExpiredKeys() const {
    std::vector<std::string> out;
    for (const auto& [k, e] : entries_) {
      if (!Live(e)) out.push_back(k);
    }
    return out;
  }
  std::vector<std::string> EvictableKeys() const {
    std::vector<std::string> out;
    for (const auto& [k, e] : entries_) {
      if (Live(e) && !e.pinned) out.push_back(k);
    }
    return out;
  }
  void Drop(const std::string& key, bool expired) {
    entries_.erase(key);
    if (expired) ++reaped_;
  }

  // Starts an operation: the store's WithEviction sweeps at most once.
  void Begin() { swept_ = false; }

  // The answer to `op`, applied to the reference; nullopt when the store
  // must evict to make room (allkeys-lru), with the reference left as the
  // store is after its refused first attempt.
  std::optional<std::string> Apply(const Op& op) {
    const auto& keys = KeyPool();
    const std::string& k = keys[op.key];
    const std::string& k2 = keys[op.key2];
    switch (op.kind) {
      case Kind::kAdvance:
        now_ += AdvancePool()[op.delta];
        return "ok";
      case Kind::kGet: {
        const MEntry* e = FindLive(k);
        if (e == nullptr) {
          Reap(k);  // a reader that meets an expired entry removes it
          return "not found";
        }
        if (e->hash) return "wrong type";
        return "ok " + Show(e->str);
      }
      case Kind::kSet: {
        Reap(k);
        MEntry fresh = StringEntry(ValuePool()[op.value], ExpiryIn(TtlPool()[op.ttl]), false);
        return Put(k, std::move(fresh), "ok");
      }
      case Kind::kSetNx: {
        Reap(k);
        if (FindLive(k) != nullptr) return "exists";
        const int64_t ttl = TtlPool()[op.ttl];
        MEntry fresh = StringEntry(ValuePool()[op.value], ExpiryIn(ttl), ttl > 0);
        auto r = Put(k, std::move(fresh), "inserted");
        return r;
      }
      case Kind::kDel: {
        Reap(k);
        if (FindLive(k) == nullptr) return "removed 0";
        entries_.erase(k);
        return "removed 1";
      }
      case Kind::kDelIfEq: {
        Reap(k);
        const MEntry* e = FindLive(k);
        if (e == nullptr) return "not matched";
        if (e->hash) return "wrong type";
        if (e->str != ValuePool()[op.token]) return "not matched";
        entries_.erase(k);
        return "deleted";
      }
      case Kind::kSetIfEq: {
        Reap(k2);
        const MEntry* g = FindLive(k2);
        if (g == nullptr) return "not matched";
        if (g->hash) return "wrong type";
        if (g->str != ValuePool()[op.token]) return "not matched";
        Reap(k);
        MEntry fresh = StringEntry(ValuePool()[op.value], ExpiryIn(TtlPool()[op.ttl]), false);
        return Put(k, std::move(fresh), "written");
      }
      case Kind::kDelIfGuardEq: {
        Reap(k2);
        const MEntry* g = FindLive(k2);
        if (g == nullptr) return "not matched";
        if (g->hash) return "wrong type";
        if (g->str != ValuePool()[op.token]) return "not matched";
        Reap(k);
        if (FindLive(k) == nullptr) return "absent";
        entries_.erase(k);
        return "deleted";
      }
      case Kind::kExpireIfGuardEq: {
        Reap(k2);
        const MEntry* g = FindLive(k2);
        if (g == nullptr) return "not matched";
        if (g->hash) return "wrong type";
        if (g->str != ValuePool()[op.token]) return "not matched";
        Reap(k);
        MEntry* e = FindLiveMut(k);
        if (e == nullptr) return "absent";
        const int64_t ttl = TtlPool()[op.ttl];
        if (ttl == 0) {  // no TTL: as PERSIST, which unpins a lock
          e->exp = 0;
          e->pinned = false;
        } else {
          e->exp = now_ + ttl;  // a new TTL keeps a lock's pin; never refused for memory
          NoteForced();
        }
        return "applied";
      }
      case Kind::kIncrBy: {
        Reap(k);
        const MEntry* e = FindLive(k);
        int64_t current = 0;
        MEntry fresh;
        if (e != nullptr) {
          if (e->hash) return "wrong type";
          if (!ParseCanonical(e->str, &current)) return "not an integer";
          fresh.exp = e->exp;  // kept, and with it a lock's pin
          fresh.pinned = e->pinned;
        }
        int64_t next = 0;
        if (__builtin_add_overflow(current, DeltaPool()[op.delta], &next)) return "overflow";
        fresh.str = std::to_string(next);  // stored as is, never compressed
        fresh.stored = fresh.str.size();
        return Put(k, std::move(fresh), "ok " + std::to_string(next));
      }
      case Kind::kExpire: {
        Reap(k);
        MEntry* e = FindLiveMut(k);
        if (e == nullptr) return "applied 0";
        const int64_t ttl = ExpirePool()[op.ttl];
        if (ttl <= 0) {
          entries_.erase(k);
          return "applied 1";
        }
        e->exp = now_ + ttl;  // never refused for memory (a new index node is forced)
        NoteForced();
        return "applied 1";
      }
      case Kind::kPersist: {
        Reap(k);
        MEntry* e = FindLiveMut(k);
        if (e == nullptr || e->exp == 0) return "applied 0";
        e->exp = 0;
        e->pinned = false;
        return "applied 1";
      }
      case Kind::kRename: {
        Reap(k);
        Reap(k2);
        const MEntry* src = FindLive(k);
        if (src == nullptr) return "not found";
        if (k == k2) return op.nx ? "renamed 0" : "renamed 1";
        const MEntry* dst = FindLive(k2);
        if (op.nx && dst != nullptr) return "renamed 0";
        const uint64_t new_mem = Mem(k2, *src);
        const uint64_t old_mem = Mem(k, *src) + (dst != nullptr ? Mem(k2, *dst) : 0);
        const uint64_t old_pinned = (src->pinned ? Mem(k, *src) : 0) +
                                    (dst != nullptr && dst->pinned ? Mem(k2, *dst) : 0);
        const auto fit = Fit(new_mem, old_mem, old_pinned);
        if (!fit) return std::nullopt;
        if (!*fit) return "out of memory";
        MEntry moved = *FindLive(k);
        entries_.erase(k);
        entries_[k2] = std::move(moved);
        return "renamed 1";
      }
      case Kind::kHSet:
      case Kind::kHIncrBy: {
        Reap(k);
        const MEntry* e = FindLive(k);
        if (e != nullptr && !e->hash) return "wrong type";
        const std::string& f = FieldPool()[op.field];
        std::string value = FieldValuePool()[op.value];
        std::string answer;
        if (op.kind == Kind::kHIncrBy) {
          int64_t current = 0;
          if (e != nullptr) {
            auto fi = e->fields.find(f);
            if (fi != e->fields.end() && !ParseCanonical(fi->second, &current)) {
              return "not an integer";
            }
          }
          int64_t next = 0;
          if (__builtin_add_overflow(current, DeltaPool()[op.delta], &next)) return "overflow";
          value = std::to_string(next);
          answer = "ok " + value;
        } else {
          answer = "added " + std::string(e != nullptr && e->fields.count(f) != 0 ? "0" : "1");
        }
        MEntry fresh;
        if (e != nullptr) fresh = *e;
        fresh.hash = true;
        fresh.fields[f] = value;
        return Put(k, std::move(fresh), answer);
      }
      case Kind::kHGet: {
        const MEntry* e = FindLive(k);  // hash reads do not remove an expired entry
        if (e == nullptr) return "not found";
        if (!e->hash) return "wrong type";
        auto fi = e->fields.find(FieldPool()[op.field]);
        if (fi == e->fields.end()) return "not found";
        return "ok " + Show(fi->second);
      }
      case Kind::kHDel: {
        Reap(k);
        MEntry* e = FindLiveMut(k);
        if (e == nullptr) return "removed 0";
        if (!e->hash) return "wrong type";
        if (e->fields.erase(FieldPool()[op.field]) == 0) return "removed 0";
        if (e->fields.empty()) entries_.erase(k);  // the last field takes the key
        return "removed 1";
      }
      case Kind::kPttl: {
        const MEntry* e = FindLive(k);
        if (e == nullptr) return "-2";
        if (e->exp == 0) return "-1";
        return std::to_string(e->exp - now_);
      }
      case Kind::kDbSize: {
        uint64_t n = 0;
        for (const auto& [key, e] : entries_) n += Live(e) ? 1 : 0;
        return std::to_string(n);
      }
      case Kind::kSweep:
        return "removed " + std::to_string(SweepAll());
      case Kind::kGetEx: {
        Reap(k);
        MEntry* e = FindLiveMut(k);
        if (e == nullptr) return "not found";
        if (e->hash) return "wrong type";
        const std::string answer = "ok " + Show(e->str);
        switch (op.mode) {
          case kExKeep: break;
          case kExPersist:  // drops a lock's pin with the TTL
            e->exp = 0;
            e->pinned = false;
            break;
          case kExAt:
            if (TtlPool()[op.ttl] > 0) {
              e->exp = now_ + TtlPool()[op.ttl];  // a new TTL keeps the pin
              NoteForced();
            } else {
              entries_.erase(k);  // "at now" is not after now
            }
            break;
          default:
            entries_.erase(k);
            break;
        }
        return answer;
      }
      case Kind::kGetDel: {
        Reap(k);
        const MEntry* e = FindLive(k);
        if (e == nullptr) return "not found";
        if (e->hash) return "wrong type";
        const std::string answer = "ok " + Show(e->str);
        entries_.erase(k);
        return answer;
      }
      case Kind::kSetWith: {
        Reap(k);
        const MEntry* e = FindLive(k);
        std::string old = "-";
        if (op.get_old && e != nullptr) {
          if (e->hash) return "wrong type";
          old = Show(e->str);
        }
        const int when = op.mode % 3, expiry = op.mode / 3;
        if ((when == 1 && e != nullptr) || (when == 2 && e == nullptr)) {
          return "written 0 old " + old;
        }
        int64_t exp = 0;
        if (expiry == 1 && e != nullptr) exp = e->exp;
        if (expiry == 2) exp = now_ + TtlPool()[op.ttl];  // 0: at now, absent at once
        // NX with an expiry takes a lock; any other SET replaces the pin away.
        MEntry fresh = StringEntry(ValuePool()[op.value], exp, when == 1);
        return Put(k, std::move(fresh), "written 1 old " + old);
      }
      case Kind::kMSet: {
        Reap(k);
        Reap(k2);
        if (op.nx && (FindLive(k) != nullptr || FindLive(k2) != nullptr)) return "written 0";
        // A key given twice takes its last value.
        std::map<std::string, std::string> pairs = {{k, ValuePool()[op.value]}};
        pairs[k2] = ValuePool()[op.value2];
        uint64_t new_mem = 0, old_mem = 0, old_pinned = 0;
        std::map<std::string, MEntry> fresh;
        for (const auto& [key, v] : pairs) {
          fresh[key] = StringEntry(v, 0, false);
          new_mem += Mem(key, fresh[key]);
          if (const MEntry* old = FindLive(key)) {
            old_mem += Mem(key, *old);
            if (old->pinned) old_pinned += Mem(key, *old);
          }
        }
        const auto fit = Fit(new_mem, old_mem, old_pinned);
        if (!fit) return std::nullopt;
        if (!*fit) return "out of memory";
        for (auto& [key, f] : fresh) entries_[key] = std::move(f);
        NoteForced();
        return "written 1";
      }
      case Kind::kAppend: {
        Reap(k);
        const MEntry* e = FindLive(k);
        if (e != nullptr && e->hash) return "wrong type";
        const std::string next = (e != nullptr ? e->str : "") + ValuePool()[op.value];
        // An edit in place: the TTL stays, and so does a lock's pin.
        MEntry fresh = StringEntry(next, e != nullptr ? e->exp : 0, e != nullptr && e->pinned);
        return Put(k, std::move(fresh), "length " + std::to_string(next.size()));
      }
    }
    return "?";
  }

 private:
  const MEntry* FindLive(const std::string& k) const {
    auto it = entries_.find(k);
    return it != entries_.end() && Live(it->second) ? &it->second : nullptr;
  }
  MEntry* FindLiveMut(const std::string& k) {
    auto it = entries_.find(k);
    return it != entries_.end() && Live(it->second) ? &it->second : nullptr;
  }
  // A writer that meets an expired entry removes it.
  void Reap(const std::string& k) {
    auto it = entries_.find(k);
    if (it != entries_.end() && !Live(it->second)) {
      entries_.erase(it);
      ++reaped_;
    }
  }
  uint64_t SweepAll() {
    uint64_t n = 0;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (!Live(it->second)) {
        it = entries_.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    reaped_ += n;
    return n;
  }
  int64_t ExpiryIn(int64_t ttl) const { return ttl > 0 ? now_ + ttl : 0; }

  MEntry StringEntry(const std::string& v, int64_t exp, bool pinned) const {
    MEntry e;
    e.str = v;
    e.exp = exp;
    e.pinned = pinned && exp != 0;
    e.stored = v.size();
    if (c_.compression && v.size() >= kThreshold) {
      std::string frame(ZSTD_compressBound(v.size()), '\0');
      const size_t n = ZSTD_compress(frame.data(), frame.size(), v.data(), v.size(), kLevel);
      if (!ZSTD_isError(n) && n < v.size()) {
        e.compressed = true;
        e.stored = n;
      }
    }
    return e;
  }

  // Whether a write that turns old_mem bytes (old_pinned of them pinned)
  // into new_mem fits: true, false (refused), nullopt (must evict first).
  std::optional<bool> Fit(uint64_t new_mem, uint64_t old_mem, uint64_t old_pinned) {
    if (limit_ == 0 || new_mem <= old_mem) return true;
    if (Total() - old_mem + new_mem <= limit_) return true;
    if (!c_.lru) return false;
    const uint64_t pinned = PinnedHeld();
    if ((pinned > old_pinned ? pinned - old_pinned : 0) + new_mem > limit_) {
      // Never fits beside the pins: refused without evicting, once the
      // expired entries (which may hold expired pins) are gone.
      if (swept_ || ExpiredKeys().empty()) return false;
      swept_ = true;
      SweepAll();
      return Fit(new_mem, old_mem, old_pinned);
    }
    return std::nullopt;
  }

  // Installs `fresh` at k (replacing the live entry, if any) when it fits.
  std::optional<std::string> Put(const std::string& k, MEntry fresh, std::string answer) {
    const MEntry* old = FindLive(k);
    const uint64_t old_mem = old != nullptr ? Mem(k, *old) : 0;
    const uint64_t old_pinned = old != nullptr && old->pinned ? old_mem : 0;
    const auto fit = Fit(Mem(k, fresh), old_mem, old_pinned);
    if (!fit) return std::nullopt;
    if (!*fit) return "out of memory";
    entries_[k] = std::move(fresh);
    NoteForced();
    return answer;
  }

  // Only operations that are never refused (EXPIRE) may leave the total
  // over the limit; the next writes are refused or evict until it is under.
  void NoteForced() { forced_over_ = limit_ != 0 && Total() > limit_; }

  Config c_;
  uint64_t limit_;
  int64_t now_;
  std::map<std::string, MEntry> entries_;  // what the store holds, expired entries included
  uint64_t reaped_ = 0;                    // expired entries removed
  bool swept_ = false;
  bool forced_over_ = false;
};

}  // namespace store_model

#endif  // EPHPM_TESTS_STORE_MODEL_REFERENCE_H_
