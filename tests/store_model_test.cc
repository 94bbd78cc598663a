// Model-based random testing of the store.
//
// RapidCheck generates long sequences of operations on a few keys (so that
// they collide) while a manual clock moves forward.  After every operation
// the store's answer is compared with a reference written for this test, and
// then so is the store's whole state: every live entry's type, value, TTL,
// pin, compression and accounted size (read with ForEachForSync and Inspect,
// which touch nothing), the memory total (expired entries not yet removed
// included), the live and pinned counts and the expired and evicted
// counters.  The reference predicts the memory limit exactly, from the
// documented formula (a fixed overhead per entry + key + stored bytes, plus
// an index node and a key copy with a TTL; per hash field an overhead + field
// + value) with the overheads measured once on a probe store.
//
// The operations: get, set (with and without a TTL), set_nx, del,
// del_if_eq, set_if_eq, del_if_guard_eq, expire_if_guard_eq, incr_by, expire, persist, rename
// and renamenx, hset, hget, hdel, hincrby, pttl, dbsize, getex, getdel, SET
// with its options, mset and msetnx, append, a sweep of expired entries, and
// the clock moving on.  Four configurations: no limit; compression on with a
// small threshold; a small limit under noeviction (every refusal predicted);
// the same under allkeys-lru.
//
// The reference lives beside the store in the harness, not in RapidCheck's
// model, because under allkeys-lru the store chooses what to evict: after a
// write that had to evict, the reference looks for the sets of live unpinned
// entries and of expired entries (as many as the counters say) whose removal
// makes the store's answer and state match, and fails when no such set
// exists: a lock that disappeared, a key that came back, a value that changed
// without a write.  Expired entries cannot be seen, so more than one state
// may explain the store; the harness keeps all of them until later
// operations tell them apart.
//
// A failure is shrunk to a short sequence of operations, printed with the
// seed; RC_PARAMS="seed=N" replays the run.  The number of cases and their
// length are fixed here (RC_PARAMS's max_success/max_size override them when
// set to other than RapidCheck's defaults).

#include <zstd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <rapidcheck.h>
#include <rapidcheck/state.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::DelIfEqOutcome;
using ephpm::DelIfGuardEqOutcome;
using ephpm::ManualClock;
using ephpm::Mutation;
using ephpm::SetIfEqOutcome;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;

namespace {

// --- what the operations draw from -----------------------------------------

constexpr size_t kThreshold = 16;  // compression threshold when compression is on
constexpr int kLevel = 3;

constexpr int64_t kStart = 1'700'000'000'000;  // ManualClock's first reading

const std::string& Incompressible() {
  static const std::string v = ephpm_test::RandomBytes(24, 7);
  return v;
}

const std::vector<std::string>& KeyPool() {
  static const std::vector<std::string> v = {"a", "b", "c", "long-key-d"};
  return v;
}

const std::vector<std::string>& ValuePool() {
  static const std::vector<std::string> v = {
      "1",
      "tok1",
      "",
      "x",
      "-7",
      "tok2",
      "9223372036854775807",
      "-9223372036854775808",
      "007",  // not canonical: not an integer
      std::string(40, 'z'),                                  // compresses
      "lock-token-lock-token-lock-token-lock-token-12345",   // compresses
      Incompressible(),                                      // does not
  };
  return v;
}

const std::vector<std::string>& FieldPool() {
  static const std::vector<std::string> v = {"f", "g", "field-h"};
  return v;
}

const std::vector<std::string>& FieldValuePool() {
  static const std::vector<std::string> v = {"1", "x", "-3", "9223372036854775807", ""};
  return v;
}

const std::vector<int64_t>& TtlPool() {  // set, set_nx, set_if_eq; 0 = none
  static const std::vector<int64_t> v = {0, 5, 1, 50, 1000};
  return v;
}

const std::vector<int64_t>& ExpirePool() {  // expire; <= 0 deletes
  static const std::vector<int64_t> v = {5, 1, 50, 1000, 0, -1};
  return v;
}

const std::vector<int64_t>& DeltaPool() {
  static const std::vector<int64_t> v = {1, -1, 7, std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
  return v;
}

const std::vector<int64_t>& AdvancePool() {
  static const std::vector<int64_t> v = {1, 3, 10, 60, 1000};
  return v;
}

std::string Show(const std::string& s) {
  if (s == Incompressible()) return "<24 random bytes>";
  if (s.size() > 20 && s.find_first_not_of(s[0]) == std::string::npos) {
    return "'" + std::string(1, s[0]) + "'x" + std::to_string(s.size());
  }
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

// --- operations --------------------------------------------------------------

enum class Kind {
  kAdvance, kGet, kSet, kSetNx, kDel, kDelIfEq, kSetIfEq, kDelIfGuardEq, kExpireIfGuardEq,
  kIncrBy, kExpire,
  kPersist, kRename, kHSet, kHGet, kHDel, kHIncrBy, kPttl, kDbSize, kSweep,
  kGetEx, kGetDel, kSetWith, kMSet, kAppend,
};

// GetEx's expiry: keep it, remove it (PERSIST), set it ttl ms from now, or
// set it in the past (which deletes the key after reading it).
enum GetExMode { kExKeep, kExPersist, kExAt, kExPast, kNumGetExModes };

// Indexes into the pools, so that shrinking moves toward the first entries.
struct Op {
  Kind kind = Kind::kGet;
  int key = 0, key2 = 0, value = 0, token = 0, ttl = 0, delta = 0, field = 0;
  bool nx = false;
  int value2 = 0;
  int mode = 0;  // GetExMode; for SetWith: when (0 always, 1 NX, 2 XX) + 3 * expiry
                 // (0 none, 1 KEEPTTL, 2 at now + ttl)
  bool get_old = false;
};

const char* const kWhen[] = {"", " NX", " XX"};
const char* const kExpiry[] = {"", " KEEPTTL", " PX"};

std::string Describe(const Op& o) {
  const auto& k = KeyPool();
  std::ostringstream os;
  auto key = [&](int i) { return Show(k[i]); };
  switch (o.kind) {
    case Kind::kAdvance: os << "clock += " << AdvancePool()[o.delta] << " ms"; break;
    case Kind::kGet: os << "get(" << key(o.key) << ")"; break;
    case Kind::kSet:
      os << "set(" << key(o.key) << ", " << Show(ValuePool()[o.value]) << ", ttl=" << TtlPool()[o.ttl]
         << ")";
      break;
    case Kind::kSetNx:
      os << "set_nx(" << key(o.key) << ", " << Show(ValuePool()[o.value])
         << ", ttl=" << TtlPool()[o.ttl] << ")";
      break;
    case Kind::kDel: os << "del(" << key(o.key) << ")"; break;
    case Kind::kDelIfEq:
      os << "del_if_eq(" << key(o.key) << ", " << Show(ValuePool()[o.token]) << ")";
      break;
    case Kind::kSetIfEq:
      os << "set_if_eq(guard=" << key(o.key2) << ", " << Show(ValuePool()[o.token]) << ", "
         << key(o.key) << ", " << Show(ValuePool()[o.value]) << ", ttl=" << TtlPool()[o.ttl] << ")";
      break;
    case Kind::kDelIfGuardEq:
      os << "del_if_guard_eq(guard=" << key(o.key2) << ", " << Show(ValuePool()[o.token]) << ", "
         << key(o.key) << ")";
      break;
    case Kind::kExpireIfGuardEq:
      os << "expire_if_guard_eq(guard=" << key(o.key2) << ", " << Show(ValuePool()[o.token]) << ", "
         << key(o.key) << ", ttl=" << TtlPool()[o.ttl] << ")";
      break;
    case Kind::kIncrBy: os << "incr_by(" << key(o.key) << ", " << DeltaPool()[o.delta] << ")"; break;
    case Kind::kExpire: os << "expire(" << key(o.key) << ", " << ExpirePool()[o.ttl] << " ms)"; break;
    case Kind::kPersist: os << "persist(" << key(o.key) << ")"; break;
    case Kind::kRename:
      os << (o.nx ? "renamenx(" : "rename(") << key(o.key) << ", " << key(o.key2) << ")";
      break;
    case Kind::kHSet:
      os << "hset(" << key(o.key) << ", " << Show(FieldPool()[o.field]) << ", "
         << Show(FieldValuePool()[o.value]) << ")";
      break;
    case Kind::kHGet: os << "hget(" << key(o.key) << ", " << Show(FieldPool()[o.field]) << ")"; break;
    case Kind::kHDel: os << "hdel(" << key(o.key) << ", " << Show(FieldPool()[o.field]) << ")"; break;
    case Kind::kHIncrBy:
      os << "hincrby(" << key(o.key) << ", " << Show(FieldPool()[o.field]) << ", "
         << DeltaPool()[o.delta] << ")";
      break;
    case Kind::kPttl: os << "pttl(" << key(o.key) << ")"; break;
    case Kind::kGetEx:
      os << "getex(" << key(o.key)
         << (o.mode == kExKeep      ? ""
             : o.mode == kExPersist ? ", PERSIST"
             : o.mode == kExAt      ? ", PX " + std::to_string(TtlPool()[o.ttl])
                                    : ", PXAT <past>")
         << ")";
      break;
    case Kind::kGetDel: os << "getdel(" << key(o.key) << ")"; break;
    case Kind::kSetWith:
      os << "SET " << key(o.key) << " " << Show(ValuePool()[o.value]) << kWhen[o.mode % 3]
         << kExpiry[o.mode / 3];
      if (o.mode / 3 == 2) os << " " << TtlPool()[o.ttl];
      if (o.get_old) os << " GET";
      break;
    case Kind::kMSet:
      os << (o.nx ? "msetnx(" : "mset(") << key(o.key) << " " << Show(ValuePool()[o.value]) << ", "
         << key(o.key2) << " " << Show(ValuePool()[o.value2]) << ")";
      break;
    case Kind::kAppend:
      os << "append(" << key(o.key) << ", " << Show(ValuePool()[o.value]) << ")";
      break;
    case Kind::kDbSize: os << "dbsize()"; break;
    case Kind::kSweep: os << "sweep_expired()"; break;
  }
  return os.str();
}

rc::Gen<int> Index(size_t n) { return rc::gen::inRange<int>(0, static_cast<int>(n)); }

rc::Gen<Op> GenOp() {
  using rc::gen::apply;
  const auto key = Index(KeyPool().size());
  const auto value = Index(ValuePool().size());
  const auto ttl = Index(TtlPool().size());
  auto make = [](Kind kind) {
    Op o;
    o.kind = kind;
    return o;
  };
  return rc::gen::weightedOneOf<Op>({
      {6, apply([=](int d) { Op o = make(Kind::kAdvance); o.delta = d; return o; },
                Index(AdvancePool().size()))},
      {8, apply([=](int k) { Op o = make(Kind::kGet); o.key = k; return o; }, key)},
      {10, apply([=](int k, int v, int t) {
                   Op o = make(Kind::kSet); o.key = k; o.value = v; o.ttl = t; return o;
                 }, key, value, ttl)},
      {10, apply([=](int k, int v, int t) {
                   Op o = make(Kind::kSetNx); o.key = k; o.value = v; o.ttl = t; return o;
                 }, key, value, ttl)},
      {4, apply([=](int k) { Op o = make(Kind::kDel); o.key = k; return o; }, key)},
      {6, apply([=](int k, int t) { Op o = make(Kind::kDelIfEq); o.key = k; o.token = t; return o; },
                key, value)},
      {5, apply([=](int g, int t, int k, int v, int tt) {
                  Op o = make(Kind::kSetIfEq);
                  o.key2 = g; o.token = t; o.key = k; o.value = v; o.ttl = tt;
                  return o;
                }, key, value, key, value, ttl)},
      {3, apply([=](int g, int t, int k) {
                  Op o = make(Kind::kDelIfGuardEq); o.key2 = g; o.token = t; o.key = k; return o;
                }, key, value, key)},
      {3, apply([=](int g, int t, int k, int tt) {
                  Op o = make(Kind::kExpireIfGuardEq);
                  o.key2 = g; o.token = t; o.key = k; o.ttl = tt;
                  return o;
                }, key, value, key, ttl)},
      {6, apply([=](int k, int d) { Op o = make(Kind::kIncrBy); o.key = k; o.delta = d; return o; },
                key, Index(DeltaPool().size()))},
      {5, apply([=](int k, int t) { Op o = make(Kind::kExpire); o.key = k; o.ttl = t; return o; },
                key, Index(ExpirePool().size()))},
      {3, apply([=](int k) { Op o = make(Kind::kPersist); o.key = k; return o; }, key)},
      {4, apply([=](int a, int b, bool nx) {
                  Op o = make(Kind::kRename); o.key = a; o.key2 = b; o.nx = nx; return o;
                }, key, key, rc::gen::arbitrary<bool>())},
      {5, apply([=](int k, int f, int v) {
                  Op o = make(Kind::kHSet); o.key = k; o.field = f; o.value = v; return o;
                }, key, Index(FieldPool().size()), Index(FieldValuePool().size()))},
      {3, apply([=](int k, int f) { Op o = make(Kind::kHGet); o.key = k; o.field = f; return o; },
                key, Index(FieldPool().size()))},
      {3, apply([=](int k, int f) { Op o = make(Kind::kHDel); o.key = k; o.field = f; return o; },
                key, Index(FieldPool().size()))},
      {3, apply([=](int k, int f, int d) {
                  Op o = make(Kind::kHIncrBy); o.key = k; o.field = f; o.delta = d; return o;
                }, key, Index(FieldPool().size()), Index(DeltaPool().size()))},
      {3, apply([=](int k) { Op o = make(Kind::kPttl); o.key = k; return o; }, key)},
      {3, apply([=](int k, int m, int t) {
                  Op o = make(Kind::kGetEx); o.key = k; o.mode = m; o.ttl = t; return o;
                }, key, Index(kNumGetExModes), ttl)},
      {2, apply([=](int k) { Op o = make(Kind::kGetDel); o.key = k; return o; }, key)},
      {5, apply([=](int k, int v, int m, int t, bool g) {
                  Op o = make(Kind::kSetWith);
                  o.key = k; o.value = v; o.mode = m; o.ttl = t; o.get_old = g;
                  return o;
                }, key, value, Index(9), ttl, rc::gen::arbitrary<bool>())},
      {3, apply([=](int a, int v, int b, int w, bool nx) {
                  Op o = make(Kind::kMSet);
                  o.key = a; o.value = v; o.key2 = b; o.value2 = w; o.nx = nx;
                  return o;
                }, key, value, key, value, rc::gen::arbitrary<bool>())},
      {3, apply([=](int k, int v) { Op o = make(Kind::kAppend); o.key = k; o.value = v; return o; },
                key, value)},
      {2, rc::gen::just(make(Kind::kDbSize))},
      {1, rc::gen::just(make(Kind::kSweep))},
  });
}

// --- the configurations ------------------------------------------------------

struct Config {
  const char* name;
  size_t shards;
  bool compression;
  bool limited;  // a memory limit that holds about three small entries
  bool lru;
};

// The accounting overheads of the documented formula, measured once.
struct Overheads {
  uint64_t entry = 0, ttl = 0, hash = 0, field = 0;
};

const Overheads& Measured() {
  static const Overheads o = [] {
    ManualClock clock;
    Overheads r;
    auto used = [](Store& s) { return s.Stats().memory_used; };
    {
      auto s = ephpm_test::MakeStore(ephpm_test::NoSweeper(), &clock);
      if (s->Set("", "") != Status::kOk) throw std::runtime_error("probe set");
      r.entry = used(*s);
      if (s->Set("", "", 1000) != Status::kOk) throw std::runtime_error("probe set ttl");
      r.ttl = used(*s) - r.entry;
    }
    {
      auto s = ephpm_test::MakeStore(ephpm_test::NoSweeper(), &clock);
      int64_t added = 0;
      if (s->HSet("", {{"", ""}}, false, &added) != Status::kOk) throw std::runtime_error("probe");
      const uint64_t one = used(*s);
      if (s->HSet("", {{"a", ""}}, false, &added) != Status::kOk) throw std::runtime_error("probe");
      r.field = used(*s) - one - 1;
      r.hash = one - r.entry - r.field;
    }
    return r;
  }();
  return o;
}

uint64_t LimitFor(const Config& c) {
  if (!c.limited) return 0;
  return 3 * Measured().entry + 160;
}

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

bool SameEntry(const MEntry& a, const MEntry& b) {
  return a.hash == b.hash && a.str == b.str && a.fields == b.fields && a.exp == b.exp &&
         a.pinned == b.pinned && a.compressed == b.compressed && (a.hash || a.stored == b.stored);
}

std::string DescribeEntry(const MEntry& e) {
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
bool ParseCanonical(const std::string& s, int64_t* out) {
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
    uint64_t m = o.entry + key.size();
    if (e.hash) {
      m += o.hash;
      for (const auto& [f, v] : e.fields) m += o.field + f.size() + v.size();
    } else {
      m += e.stored;
    }
    if (e.exp != 0) m += o.ttl + key.size();
    return m;
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

// --- what the store holds ----------------------------------------------------

struct Seen {
  MEntry entry;
  uint64_t mem = 0;
};

bool DecodeFields(std::string_view in, std::map<std::string, std::string>* out) {
  auto len = [&in](uint32_t* n) {
    if (in.size() < 4) return false;
    *n = 0;
    for (int i = 0; i < 4; ++i) *n |= uint32_t{static_cast<unsigned char>(in[i])} << (8 * i);
    in.remove_prefix(4);
    return in.size() >= *n;
  };
  while (!in.empty()) {
    uint32_t fl = 0, vl = 0;
    if (!len(&fl)) return false;
    std::string f(in.substr(0, fl));
    in.remove_prefix(fl);
    if (!len(&vl)) return false;
    (*out)[f] = std::string(in.substr(0, vl));
    in.remove_prefix(vl);
  }
  return true;
}

// Every live entry, read without touching anything (no LRU time, no counter,
// no removal).  Sets *err on an inconsistency between the two views.
std::map<std::string, Seen> Observe(const Store& s, std::string* err) {
  struct Raw {
    std::string key, value;
    Mutation m;
  };
  std::vector<Raw> raw;
  s.ForEachForSync([&](const Mutation& m) {
    raw.push_back(Raw{std::string(m.key), std::string(m.value), m});
  });
  std::map<std::string, Seen> out;
  for (const Raw& r : raw) {
    if (r.m.kind != Mutation::Kind::kSet) {
      *err = "ForEachForSync gave a mutation that is not a set";
      continue;
    }
    Seen seen;
    MEntry& e = seen.entry;
    e.hash = r.m.type == ephpm::ValueType::kHash;
    e.exp = r.m.expires_at_ms;
    e.pinned = r.m.pinned;
    e.compressed = r.m.compressed;
    if (e.hash) {
      if (!DecodeFields(r.value, &e.fields)) *err = "undecodable hash at " + Show(r.key);
    } else if (e.compressed) {
      e.str.resize(r.m.original_size);
      const size_t n = ZSTD_decompress(e.str.data(), e.str.size(), r.value.data(), r.value.size());
      if (ZSTD_isError(n) || n != e.str.size()) *err = "undecodable frame at " + Show(r.key);
      e.stored = r.value.size();
    } else {
      e.str = r.value;
      e.stored = r.value.size();
    }
    ephpm::EntryInfo info;
    if (s.Inspect(r.key, &info) != Status::kOk) {
      *err = "Inspect does not find " + Show(r.key) + ", which ForEachForSync gave";
    } else if (info.pinned != e.pinned || info.expires_at_ms != e.exp ||
               info.compressed != e.compressed ||
               (info.type == ephpm::ValueType::kHash) != e.hash) {
      *err = "Inspect and ForEachForSync disagree about " + Show(r.key);
    }
    seen.mem = info.mem_size;
    out[r.key] = std::move(seen);
  }
  return out;
}

// "" when the store's state is the reference's, else the first difference.
std::string Compare(const Reference& ref, const std::map<std::string, Seen>& seen,
                    const ephpm::StoreStats& st) {
  std::ostringstream os;
  uint64_t live = 0, with_ttl = 0, pinned = 0, pinned_bytes = 0;
  uint64_t compressed = 0, compressed_orig = 0, compressed_stored = 0;
  for (const auto& [k, e] : ref.entries()) {
    if (e.compressed) {
      ++compressed;
      compressed_orig += e.str.size();
      compressed_stored += e.stored;
    }
    if (!ref.Live(e)) continue;
    ++live;
    if (e.exp != 0) ++with_ttl;
    if (e.pinned) {
      ++pinned;
      pinned_bytes += ref.Mem(k, e);
    }
    auto it = seen.find(k);
    if (it == seen.end()) {
      os << Show(k) << " is missing from the store; the reference has " << DescribeEntry(e)
         << (e.pinned ? " (a live lock!)" : "");
      return os.str();
    }
    if (!SameEntry(e, it->second.entry)) {
      os << Show(k) << " is " << DescribeEntry(it->second.entry) << "; the reference has "
         << DescribeEntry(e);
      return os.str();
    }
    if (it->second.mem != ref.Mem(k, e)) {
      os << Show(k) << " is accounted " << it->second.mem << " bytes; the formula gives "
         << ref.Mem(k, e);
      return os.str();
    }
  }
  for (const auto& [k, s] : seen) {
    auto it = ref.entries().find(k);
    if (it == ref.entries().end() || !ref.Live(it->second)) {
      os << Show(k) << " is in the store (" << DescribeEntry(s.entry)
         << ") but absent from the reference";
      return os.str();
    }
  }
  auto field = [&os](const char* name, uint64_t store, uint64_t want) {
    if (store != want) os << name << " is " << store << ", the reference says " << want << "; ";
  };
  field("memory_used", st.memory_used, ref.Total());
  field("keys", st.keys, live);
  field("keys_with_ttl", st.keys_with_ttl, with_ttl);
  field("pinned_keys", st.pinned_keys, pinned);
  field("pinned_bytes", st.pinned_bytes, pinned_bytes);
  field("compressed_values", st.compressed_values, compressed);
  field("compressed_original_bytes", st.compressed_original_bytes, compressed_orig);
  field("compressed_stored_bytes", st.compressed_stored_bytes, compressed_stored);
  if (st.memory_limit != 0 && st.memory_used > st.memory_limit && !ref.forced_over()) {
    os << "memory_used " << st.memory_used << " is over the limit " << st.memory_limit
       << " and no forced operation put it there; ";
  }
  return os.str();
}

std::string DescribeState(const Reference& ref) {
  std::ostringstream os;
  os << "now=t+" << ref.now() - kStart << " total=" << ref.Total() << " {";
  for (const auto& [k, e] : ref.entries()) {
    os << " " << Show(k) << ": " << DescribeEntry(e) << (ref.Live(e) ? "" : " (expired)") << ";";
  }
  os << " }";
  return os.str();
}

// What tells two reference states apart.
std::string StateKey(const Reference& ref) {
  return DescribeState(ref) + " reaped=" + std::to_string(ref.reaped()) +
         (ref.forced_over() ? " forced" : "");
}

// --- the store's side ----------------------------------------------------------

std::string StatusText(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kNotFound: return "not found";
    case Status::kOutOfMemory: return "out of memory";
    case Status::kWrongType: return "wrong type";
    case Status::kNotInteger: return "not an integer";
    case Status::kOverflow: return "overflow";
    default: return std::string("status ") + ephpm::StatusName(s);
  }
}

std::string Run(Store& s, ManualClock& clock, const Op& op) {
  const auto& keys = KeyPool();
  const std::string& k = keys[op.key];
  const std::string& k2 = keys[op.key2];
  switch (op.kind) {
    case Kind::kAdvance:
      clock.Advance(AdvancePool()[op.delta]);
      return "ok";
    case Kind::kGet: {
      std::string v;
      const Status st = s.Get(k, &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kSet: return StatusText(s.Set(k, ValuePool()[op.value], TtlPool()[op.ttl]));
    case Kind::kSetNx:
      switch (s.SetNx(k, ValuePool()[op.value], TtlPool()[op.ttl])) {
        case SetNxOutcome::kInserted: return "inserted";
        case SetNxOutcome::kExists: return "exists";
        case SetNxOutcome::kOutOfMemory: return "out of memory";
        default: return "unexpected set_nx outcome";
      }
    case Kind::kDel: {
      int64_t n = -1;
      const Status st = s.Del(k, &n);
      return st == Status::kOk ? "removed " + std::to_string(n) : StatusText(st);
    }
    case Kind::kDelIfEq:
      switch (s.DelIfEq(k, ValuePool()[op.token])) {
        case DelIfEqOutcome::kDeleted: return "deleted";
        case DelIfEqOutcome::kNotMatched: return "not matched";
        case DelIfEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected del_if_eq outcome";
      }
    case Kind::kSetIfEq:
      switch (s.SetIfEq(k2, ValuePool()[op.token], k, ValuePool()[op.value], TtlPool()[op.ttl])) {
        case SetIfEqOutcome::kWritten: return "written";
        case SetIfEqOutcome::kNotMatched: return "not matched";
        case SetIfEqOutcome::kWrongType: return "wrong type";
        case SetIfEqOutcome::kOutOfMemory: return "out of memory";
        default: return "unexpected set_if_eq outcome";
      }
    case Kind::kDelIfGuardEq:
      switch (s.DelIfGuardEq(k2, ValuePool()[op.token], k)) {
        case DelIfGuardEqOutcome::kDeleted: return "deleted";
        case DelIfGuardEqOutcome::kAbsent: return "absent";
        case DelIfGuardEqOutcome::kNotMatched: return "not matched";
        case DelIfGuardEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected del_if_guard_eq outcome";
      }
    case Kind::kExpireIfGuardEq:
      switch (s.ExpireIfGuardEq(k2, ValuePool()[op.token], k, TtlPool()[op.ttl])) {
        case ephpm::ExpireIfGuardEqOutcome::kApplied: return "applied";
        case ephpm::ExpireIfGuardEqOutcome::kAbsent: return "absent";
        case ephpm::ExpireIfGuardEqOutcome::kNotMatched: return "not matched";
        case ephpm::ExpireIfGuardEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected expire_if_guard_eq outcome";
      }
    case Kind::kIncrBy: {
      int64_t n = 0;
      const Status st = s.IncrBy(k, DeltaPool()[op.delta], &n);
      return st == Status::kOk ? "ok " + std::to_string(n) : StatusText(st);
    }
    case Kind::kExpire: {
      bool applied = false;
      const Status st = s.Expire(k, ExpirePool()[op.ttl], &applied);
      return st == Status::kOk ? std::string("applied ") + (applied ? "1" : "0") : StatusText(st);
    }
    case Kind::kPersist: {
      bool applied = false;
      const Status st = s.Persist(k, &applied);
      return st == Status::kOk ? std::string("applied ") + (applied ? "1" : "0") : StatusText(st);
    }
    case Kind::kRename: {
      bool renamed = false;
      const Status st = s.Rename(k, k2, op.nx, &renamed);
      return st == Status::kOk ? std::string("renamed ") + (renamed ? "1" : "0") : StatusText(st);
    }
    case Kind::kHSet: {
      int64_t added = -1;
      const Status st =
          s.HSet(k, {{FieldPool()[op.field], FieldValuePool()[op.value]}}, false, &added);
      return st == Status::kOk ? "added " + std::to_string(added) : StatusText(st);
    }
    case Kind::kHGet: {
      std::string v;
      const Status st = s.HGet(k, FieldPool()[op.field], &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kHDel: {
      int64_t removed = -1;
      const Status st = s.HDel(k, {FieldPool()[op.field]}, &removed);
      return st == Status::kOk ? "removed " + std::to_string(removed) : StatusText(st);
    }
    case Kind::kHIncrBy: {
      int64_t n = 0;
      const Status st = s.HIncrBy(k, FieldPool()[op.field], DeltaPool()[op.delta], &n);
      return st == Status::kOk ? "ok " + std::to_string(n) : StatusText(st);
    }
    case Kind::kPttl: {
      int64_t ttl = 0;
      const Status st = s.Pttl(k, &ttl);
      return st == Status::kOk ? std::to_string(ttl) : StatusText(st);
    }
    case Kind::kDbSize: return std::to_string(s.DbSize());
    case Kind::kSweep: return "removed " + std::to_string(s.SweepExpired(1000));
    case Kind::kGetEx: {
      using E = ephpm::SetOptions::Expiry;
      std::string v;
      Status st = Status::kOk;
      switch (op.mode) {
        case kExKeep: st = s.GetEx(k, E::kKeep, 0, &v); break;
        case kExPersist: st = s.GetEx(k, E::kNone, 0, &v); break;
        case kExAt: st = s.GetEx(k, E::kAt, s.NowMs() + TtlPool()[op.ttl], &v); break;
        default: st = s.GetEx(k, E::kAt, s.NowMs() - 1, &v); break;
      }
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kGetDel: {
      std::string v;
      const Status st = s.GetDel(k, &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kSetWith: {
      ephpm::SetOptions o;
      o.when = static_cast<ephpm::SetOptions::When>(op.mode % 3);
      o.expiry = static_cast<ephpm::SetOptions::Expiry>(op.mode / 3);
      if (o.expiry == ephpm::SetOptions::Expiry::kAt) o.expires_at_ms = s.NowMs() + TtlPool()[op.ttl];
      o.get_old = op.get_old;
      ephpm::SetResult r;
      const Status st = s.SetWith(k, ValuePool()[op.value], o, &r);
      if (st != Status::kOk) return StatusText(st);
      return std::string("written ") + (r.written ? "1" : "0") + " old " +
             (r.had_old ? Show(r.old) : "-");
    }
    case Kind::kMSet: {
      bool written = false;
      const Status st =
          s.MSet({{k, ValuePool()[op.value]}, {k2, ValuePool()[op.value2]}}, op.nx, &written);
      return st == Status::kOk ? std::string("written ") + (written ? "1" : "0") : StatusText(st);
    }
    case Kind::kAppend: {
      int64_t length = 0;
      const Status st = s.Append(k, ValuePool()[op.value], &length);
      return st == Status::kOk ? "length " + std::to_string(length) : StatusText(st);
    }
  }
  return "?";
}

// All subsets of `from` with exactly n members.
void Subsets(const std::vector<std::string>& from, size_t n, size_t start,
             std::vector<std::string>* cur, std::vector<std::vector<std::string>>* out) {
  if (cur->size() == n) {
    out->push_back(*cur);
    return;
  }
  for (size_t i = start; i < from.size(); ++i) {
    cur->push_back(from[i]);
    Subsets(from, n, i + 1, cur, out);
    cur->pop_back();
  }
}

std::vector<std::vector<std::string>> Choose(const std::vector<std::string>& from, uint64_t n) {
  std::vector<std::vector<std::string>> out;
  if (n > from.size()) return out;
  std::vector<std::string> cur;
  Subsets(from, static_cast<size_t>(n), 0, &cur, &out);
  return out;
}

// What the runs went through, so that a run that tested little shows.
struct Tally {
  uint64_t operations = 0, refused = 0, evicting = 0, expired = 0, ambiguous = 0, pinned = 0,
           compressed = 0;
};
Tally tally;

// The store and its reference, side by side.  Eviction may remove expired
// entries, which no read can see, so after an evicting write several
// reference states can explain the store equally well (two expired entries
// of the same size, say).  The harness keeps every state that explains
// everything seen so far, and fails when none is left.  They differ only in
// which expired entries are still held, so there are few.
struct Harness {
  explicit Harness(const Config& c) : config(c) {
    auto o = ephpm_test::NoSweeper();  // expired entries go only when the operations say
    o.shards = c.shards;
    o.compression = c.compression ? ephpm::Compression::kZstd : ephpm::Compression::kOff;
    o.compression_threshold = kThreshold;
    o.compression_level = kLevel;
    o.memory_limit = LimitFor(c);
    o.eviction = c.lru ? ephpm::EvictionPolicy::kAllKeysLru : ephpm::EvictionPolicy::kNoEviction;
    o.eviction_samples = 3;
    store = ephpm_test::MakeStore(o, &clock);
    refs.emplace_back(c, clock.NowMs());
  }

  void Step(const Op& op) {
    ++tally.operations;
    const ephpm::StoreStats before = store->Stats();
    const std::string answer = Run(*store, clock, op);
    const ephpm::StoreStats after = store->Stats();
    std::string err;
    const auto seen = Observe(*store, &err);
    if (!err.empty()) RC_FAIL("after " + Describe(op) + ": " + err);
    const uint64_t evicted = after.evicted - before.evicted;
    const uint64_t expired = after.expired - before.expired;

    std::map<std::string, Reference> next;  // by StateKey: no duplicates
    std::string why;                        // what the first state could not explain
    bool evicting = false;
    for (const Reference& ref : refs) {
      Reference attempt = ref;
      attempt.Begin();
      const std::optional<std::string> want = attempt.Apply(op);
      if (want) {  // decided without eviction
        std::string diff;
        if (answer != *want) diff = "the store answered '" + answer + "', the reference '" + *want + "'";
        if (diff.empty()) diff = Compare(attempt, seen, after);
        if (diff.empty() && evicted != 0) diff = std::to_string(evicted) + " entries evicted";
        if (diff.empty() && expired != attempt.reaped() - ref.reaped()) {
          diff = std::to_string(expired) + " expired entries removed, the reference removed " +
                 std::to_string(attempt.reaped() - ref.reaped());
        }
        if (diff.empty()) {
          next.emplace(StateKey(attempt), std::move(attempt));
        } else if (why.empty()) {
          why = diff + "\n  reference before: " + DescribeState(ref);
        }
        continue;
      }
      // allkeys-lru had to evict: some live unpinned entries and some expired
      // ones (as many as the counters say) went before the write was retried.
      evicting = true;
      const uint64_t reaped_first = attempt.reaped() - ref.reaped();
      bool explained = false;
      if (expired >= reaped_first) {
        for (const auto& gone_expired : Choose(attempt.ExpiredKeys(), expired - reaped_first)) {
          for (const auto& gone_live : Choose(attempt.EvictableKeys(), evicted)) {
            Reference c = attempt;
            for (const auto& k : gone_expired) c.Drop(k, true);
            for (const auto& k : gone_live) c.Drop(k, false);
            const uint64_t reaped_before = c.reaped();
            const std::optional<std::string> got = c.Apply(op);
            if (!got || *got != answer || c.reaped() != reaped_before) continue;
            if (!Compare(c, seen, after).empty()) continue;
            explained = true;
            next.emplace(StateKey(c), std::move(c));
          }
        }
      }
      if (!explained && why.empty()) {
        std::ostringstream os;
        os << "no eviction explains the store's answer '" << answer << "' and state (" << evicted
           << " evicted, " << expired << " expired entries removed)";
        for (const auto& [k, e] : attempt.entries()) {
          if (attempt.Live(e) && e.pinned && seen.count(k) == 0) {
            os << "; the live lock " << Show(k) << " disappeared";
          }
        }
        os << "\n  reference before: " << DescribeState(ref);
        why = os.str();
      }
    }
    if (next.empty()) RC_FAIL(Describe(op) + ": " + why);

    refs.clear();
    for (auto& [key, r] : next) refs.push_back(std::move(r));
    const Reference& r = refs.front();
    if (answer == "out of memory") ++tally.refused;
    if (evicting) ++tally.evicting;
    if (expired != 0) ++tally.expired;
    if (refs.size() > 1) ++tally.ambiguous;
    for (const auto& [k, e] : r.entries()) {
      if (e.pinned && r.Live(e)) ++tally.pinned;
      if (e.compressed) ++tally.compressed;
    }
  }

  Config config;
  ManualClock clock{kStart};
  std::unique_ptr<Store> store;
  std::vector<Reference> refs;  // every state that explains what was seen
};

struct NoModel {};

struct OpCommand final : rc::state::Command<NoModel, Harness> {
  explicit OpCommand(Op o) : op(o) {}
  void run(const NoModel&, Harness& h) const override { h.Step(op); }
  void show(std::ostream& os) const override { os << Describe(op); }
  Op op;
};

using CommandPtr = std::shared_ptr<const rc::state::Command<NoModel, Harness>>;

rc::detail::TestParams Params(int cases, int length) {
  rc::detail::TestParams p = rc::detail::configuration().testParams;
  const rc::detail::TestParams defaults;
  if (p.maxSuccess == defaults.maxSuccess) p.maxSuccess = cases;
  if (p.maxSize == defaults.maxSize) p.maxSize = length;
  return p;
}

void CheckModel(const Config& c) {
  const rc::detail::TestParams params = Params(100, 1000);
  rc::detail::TestMetadata meta;
  meta.id = std::string("store_model/") + c.name;
  meta.description = meta.id;
  std::cout << meta.id << ": seed=" << params.seed << ", " << params.maxSuccess
            << " sequences of up to " << params.maxSize << " operations (replay with RC_PARAMS=\"seed="
            << params.seed << "\")" << std::endl;
  tally = Tally{};
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [&c] {
        Harness h(c);
        rc::state::check(NoModel{}, h, [](const NoModel&) {
          return rc::gen::map(GenOp(), [](Op o) -> CommandPtr {
            return std::make_shared<const OpCommand>(o);
          });
        });
      },
      meta, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  const Tally& t = tally;
  std::cout << meta.id << ": " << t.operations << " operations checked; " << t.refused
            << " refused for memory, " << t.evicting << " evicted to make room, " << t.expired
            << " removed expired entries, " << t.ambiguous
            << " left more than one possible state; entry-steps pinned " << t.pinned
            << ", compressed " << t.compressed << std::endl;
  if (!result.is<rc::detail::SuccessResult>()) {
    std::cout << message.str() << std::endl;
    FAIL(meta.id << " failed (seed " << params.seed
                 << "); the shrunk sequence and what went wrong are printed above");
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("model: no limit, no compression, four shards", "[store][model]") {
  CheckModel(Config{"plain", 4, false, false, false});
}

TEST_CASE("model: compression on (threshold 16), one shard", "[store][model]") {
  CheckModel(Config{"compressed", 1, true, false, false});
}

TEST_CASE("model: a small memory limit under noeviction predicts every refusal",
          "[store][model][memory]") {
  CheckModel(Config{"noeviction", 2, true, true, false});
}

TEST_CASE("model: a small memory limit under allkeys-lru never loses a lock",
          "[store][model][memory][lru]") {
  CheckModel(Config{"allkeys-lru", 2, true, true, true});
}
