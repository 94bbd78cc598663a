// Shared by store_model_test.cc: what the random operations draw from, the
// operations themselves with their generator, and the configurations (with
// the accounting overheads measured on a probe store).

#ifndef EPHPM_TESTS_STORE_MODEL_OPS_H_
#define EPHPM_TESTS_STORE_MODEL_OPS_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <rapidcheck.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

namespace store_model {

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::Store;

// --- what the operations draw from -----------------------------------------

constexpr size_t kThreshold = 16;  // compression threshold when compression is on
constexpr int kLevel = 3;

constexpr int64_t kStart = 1'700'000'000'000;  // ManualClock's first reading

inline const std::string& Incompressible() {
  static const std::string v = ephpm_test::RandomBytes(24, 7);
  return v;
}

inline const std::vector<std::string>& KeyPool() {
  static const std::vector<std::string> v = {"a", "b", "c", "long-key-d"};
  return v;
}

inline const std::vector<std::string>& ValuePool() {
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

inline const std::vector<std::string>& FieldPool() {
  static const std::vector<std::string> v = {"f", "g", "field-h"};
  return v;
}

inline const std::vector<std::string>& FieldValuePool() {
  static const std::vector<std::string> v = {"1", "x", "-3", "9223372036854775807", ""};
  return v;
}

inline const std::vector<int64_t>& TtlPool() {  // set, set_nx, set_if_eq; 0 = none
  static const std::vector<int64_t> v = {0, 5, 1, 50, 1000};
  return v;
}

inline const std::vector<int64_t>& ExpirePool() {  // expire; <= 0 deletes
  static const std::vector<int64_t> v = {5, 1, 50, 1000, 0, -1};
  return v;
}

inline const std::vector<int64_t>& DeltaPool() {
  static const std::vector<int64_t> v = {1, -1, 7, std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min()};
  return v;
}

inline const std::vector<int64_t>& AdvancePool() {
  static const std::vector<int64_t> v = {1, 3, 10, 60, 1000};
  return v;
}

inline std::string Show(const std::string& s) {
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

inline std::string Describe(const Op& o) {
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

inline rc::Gen<int> Index(size_t n) { return rc::gen::inRange<int>(0, static_cast<int>(n)); }

inline rc::Gen<Op> GenOp() {
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

inline const Overheads& Measured() {
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
      r.field = used(*s) - one;  // a 1-byte field fits in its string object
      r.hash = one - r.entry - r.field;
    }
    return r;
  }();
  return o;
}

inline uint64_t LimitFor(const Config& c) {
  if (!c.limited) return 0;
  return 3 * Measured().entry + 160;
}

}  // namespace store_model

#endif  // EPHPM_TESTS_STORE_MODEL_OPS_H_
