// The store's multi-key sorted set and set operations against a reference
// model of Redis 7.0: ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE and their replies
// (ZUNION, ZINTER, ZDIFF), ZRANGESTORE, ZMPOP, SINTER, SUNION, SDIFF and their
// STORE forms, and COPY (within a database and to another), over a small
// pool of keys holding sorted sets, sets and strings (for WRONGTYPE) in two
// databases.  After every step the whole store (every key's type, contents
// and TTL in both databases) and its accounted memory are compared with the
// model.
//
// The model follows Redis 7.0's zunionInterDiffGenericCommand (t_zset.c) to
// the letter, checked against Debian's redis-server 7.0.15:
//  - ZUNION/ZINTER sort their inputs by cardinality (qsort, smallest first)
//    before combining, so where the order matters (a SUM meeting +inf and
//    -inf, whose NaN Redis turns into 0, then goes on adding) the result is
//    that of the sorted order.  qsort's order among inputs of equal size is
//    unspecified: the model accepts any of them.  ZDIFF keeps its order.
//  - A weighted score of the first input (or of any input of a union) that
//    is NaN (0 * inf) counts as 0; in an intersection, the weighted score of
//    a later input is not: a NaN makes a SUM 0 and is ignored by MIN and MAX.
//  - A set counts each member with score 1; a missing key is empty; a key of
//    any other type refuses the whole operation (WRONGTYPE, nothing changes).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/store.h"
#include "shard.h"  // EntryMem, SetEntryMem, ZSetEntryMem: the accounting under test
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::Store;
using ephpm::ValueType;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::SumOfEntries;

namespace {

using Pairs = std::vector<std::pair<double, std::string_view>>;
using Members = Store::ZMembers;
using ZMap = std::map<std::string, double>;
using Agg = Store::ZAggregate;
using ZOp = Store::ZStoreOp;
using SetOp = Store::SetOp;
constexpr double kInf = std::numeric_limits<double>::infinity();

// One key of the model.
struct Value {
  ValueType type = ValueType::kString;
  std::string str;
  std::set<std::string> set;
  ZMap zset;
  int64_t expires_at = 0;  // absolute ms, 0 = none
};
using Db = std::map<std::string, Value>;

std::string Fmt(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << d;
  return os.str();
}

const char* AggName(Agg a) {
  return a == Agg::kSum ? "SUM" : a == Agg::kMin ? "MIN" : "MAX";
}
const char* ZOpName(ZOp op) {
  return op == ZOp::kUnion ? "UNION" : op == ZOp::kInter ? "INTER" : "DIFF";
}
const char* SetOpName(SetOp op) {
  return op == SetOp::kUnion ? "SUNION" : op == SetOp::kInter ? "SINTER" : "SDIFF";
}

std::string Describe(const Value* v) {
  if (v == nullptr) return "(missing)";
  std::ostringstream os;
  switch (v->type) {
    case ValueType::kString:
      os << "string '" << v->str << "'";
      break;
    case ValueType::kSet:
      os << "set {";
      for (const auto& m : v->set) os << " " << m;
      os << " }";
      break;
    case ValueType::kZSet:
      os << "zset {";
      for (const auto& [m, sc] : v->zset) os << " " << m << ":" << Fmt(sc);
      os << " }";
      break;
    default:
      os << "?";
  }
  if (v->expires_at != 0) os << " ttl@" << v->expires_at;
  return os.str();
}

std::string Describe(const Members& ms) {
  std::ostringstream os;
  os << "[";
  for (const auto& [m, sc] : ms) os << " " << m << ":" << Fmt(sc);
  os << " ]";
  return os.str();
}

// A sorted set's members in Redis's order: by score, then member bytes.
Members Sorted(const ZMap& z) {
  std::vector<std::pair<double, std::string>> v;
  for (const auto& [m, sc] : z) v.emplace_back(sc, m);
  std::sort(v.begin(), v.end());
  Members out;
  for (const auto& [sc, m] : v) out.emplace_back(m, sc);
  return out;
}

// What an input of ZUNION/ZINTER/ZDIFF contributes: a sorted set's scores,
// a set's members with score 1, nothing for a missing key.
ZMap ScoresOf(const Value* v) {
  ZMap out;
  if (v == nullptr) return out;
  if (v->type == ValueType::kZSet) return v->zset;
  for (const auto& m : v->set) out.emplace(m, 1.0);
  return out;
}

// Redis 7.0's zunionInterDiffGenericCommand over inputs in `order`.
ZMap RedisCombine(const std::vector<ZMap>& src, const std::vector<double>& weights, Agg agg,
                  ZOp op, const std::vector<size_t>& order) {
  auto weight = [&](size_t i) { return weights.empty() ? 1.0 : weights[i]; };
  // zunionInterAggregate.
  auto aggregate = [&](double* target, double val) {
    switch (agg) {
      case Agg::kSum:
        *target = *target + val;
        if (std::isnan(*target)) *target = 0.0;
        break;
      case Agg::kMin:
        *target = val < *target ? val : *target;
        break;
      case Agg::kMax:
        *target = val > *target ? val : *target;
        break;
    }
  };
  ZMap out;
  switch (op) {
    case ZOp::kUnion:
      for (size_t i : order) {
        for (const auto& [m, sc] : src[i]) {
          double score = weight(i) * sc;
          if (std::isnan(score)) score = 0;
          auto it = out.find(m);
          if (it == out.end()) {
            out.emplace(m, score);
          } else {
            aggregate(&it->second, score);
          }
        }
      }
      break;
    case ZOp::kInter:
      for (const auto& [m, sc] : src[order[0]]) {
        double score = weight(order[0]) * sc;
        if (std::isnan(score)) score = 0;
        bool everywhere = true;
        for (size_t j = 1; j < order.size(); ++j) {
          auto it = src[order[j]].find(m);
          if (it == src[order[j]].end()) {
            everywhere = false;
            break;
          }
          const double value = it->second * weight(order[j]);  // NaN not cleared here
          aggregate(&score, value);
        }
        if (everywhere) out.emplace(m, score);
      }
      break;
    case ZOp::kDiff:  // the first input's own scores, weights unused
      for (const auto& [m, sc] : src[0]) {
        bool elsewhere = false;
        for (size_t j = 1; j < src.size(); ++j) elsewhere = elsewhere || src[j].count(m) > 0;
        if (!elsewhere) out.emplace(m, sc);
      }
      break;
  }
  return out;
}

// Every result Redis may give: one per order qsort may leave the inputs in
// (by cardinality, ties in any order; ZDIFF keeps the given order).
std::vector<ZMap> RedisResults(const std::vector<ZMap>& src, const std::vector<double>& weights,
                               Agg agg, ZOp op) {
  std::vector<size_t> order(src.size());
  std::iota(order.begin(), order.end(), 0);
  if (op == ZOp::kDiff) return {RedisCombine(src, weights, agg, op, order)};
  std::vector<ZMap> out;
  do {
    bool by_size = true;
    for (size_t i = 1; i < order.size(); ++i) {
      by_size = by_size && src[order[i - 1]].size() <= src[order[i]].size();
    }
    if (!by_size) continue;
    ZMap r = RedisCombine(src, weights, agg, op, order);
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  } while (std::next_permutation(order.begin(), order.end()));
  return out;
}

// The accounted size of one model entry.
uint64_t MemOf(const std::string& key, const Value& v) {
  const bool ttl = v.expires_at != 0;
  uint64_t elements = 0;
  switch (v.type) {
    case ValueType::kString:
      return ephpm::EntryMem(key.size(), v.str.size(), ttl);
    case ValueType::kSet:
      for (const auto& m : v.set) elements += ephpm::SetMemberMem(m.size());
      return ephpm::SetEntryMem(key.size(), elements, ttl);
    case ValueType::kZSet:
      for (const auto& [m, sc] : v.zset) elements += ephpm::ZSetMemberMem(m.size());
      return ephpm::ZSetEntryMem(key.size(), elements, ttl);
    default:
      return 0;
  }
}

Members All(const Store& s, std::string_view key) { return ephpm_test::ZAll(s, key); }

// Compares database `db` of the store with the model: the keys, each key's
// type, contents and expiry.  Returns the accounted size the model expects.
uint64_t CheckDb(Store& s, uint32_t db, const Db& model) {
  Store::DatabaseScope scope(s, db);
  INFO("database " << db);
  std::vector<std::string> keys;
  REQUIRE(s.Keys("*", &keys) == Status::kOk);
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> expect_keys;
  for (const auto& [k, v] : model) expect_keys.push_back(k);
  REQUIRE(keys == expect_keys);
  REQUIRE(s.DbSize() == model.size());
  uint64_t mem = 0;
  for (const auto& [k, v] : model) {
    INFO("key " << k << " = " << Describe(&v));
    ephpm::EntryInfo info;
    REQUIRE(s.Inspect(k, &info) == Status::kOk);
    REQUIRE(info.type == v.type);
    REQUIRE(info.expires_at_ms == v.expires_at);
    REQUIRE(info.mem_size == MemOf(k, v));
    mem += info.mem_size;
    switch (v.type) {
      case ValueType::kString: {
        std::string got;
        REQUIRE(s.Get(k, &got) == Status::kOk);
        REQUIRE(got == v.str);
        break;
      }
      case ValueType::kSet: {
        std::vector<std::string> got;
        REQUIRE(s.SMembers(k, &got) == Status::kOk);
        std::sort(got.begin(), got.end());
        REQUIRE(got == std::vector<std::string>(v.set.begin(), v.set.end()));
        break;
      }
      case ValueType::kZSet: {
        const Members got = All(s, k);
        INFO("store holds " << Describe(got));
        REQUIRE(got == Sorted(v.zset));
        for (const auto& [m, sc] : got) {
          // Never NaN; a zero is kept as +0 (Redis stores ZUNIONSTORE's -0 as 0).
          REQUIRE_FALSE(std::isnan(sc));
          REQUIRE_FALSE((sc == 0 && std::signbit(sc)));
        }
        break;
      }
      default:
        FAIL("unexpected type in the model");
    }
  }
  REQUIRE(SumOfEntries(s) == mem);
  return mem;
}

void CheckStore(Store& s, const std::vector<Db>& dbs) {
  uint64_t mem = 0;
  for (uint32_t db = 0; db < dbs.size(); ++db) mem += CheckDb(s, db, dbs[db]);
  REQUIRE(s.Stats().memory_used == mem);
}

// One run of the model test: `steps` random operations from `seed` on a
// fresh store.
void RunMultiKeyModel(uint32_t seed, int steps) {
  INFO("seed " << seed << " (MULTIKEY_MODEL_SEED=" << seed << " replays it alone)");
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 4;  // keys share shards often: MultiLock with repeats
  o.databases = 2;
  auto s = MakeStore(o, &clock);
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto chance = [&](unsigned one_in) { return rng() % one_in == 0; };

  const std::vector<std::string> key_pool = {"k0", "k1", "k2", "k3", "key4"};
  const std::vector<std::string> member_pool = {"a", "b", "c", "d", "e", "f", "member-g"};
  // Dyadic values and power-of-two weights, so that sums and products stay
  // exact: the order of the additions matters only where it does in Redis
  // (a SUM meeting both infinities).
  const std::vector<double> score_pool = {-2, -1, -0.5, 0, 0.5, 1, 1.5, 3, 4, kInf, -kInf};
  const std::vector<double> weight_pool = {1, 0, -1, 0.5, -0.5, 2, 0.25, -2, kInf, -kInf};

  std::vector<Db> dbs(2);
  auto pick_key = [&] { return key_pool[pick(key_pool.size())]; };
  auto pick_member = [&] { return member_pool[pick(member_pool.size())]; };
  auto pick_score = [&] {
    // Infinities one time in 5.
    return chance(5) ? score_pool[9 + pick(2)] : score_pool[pick(9)];
  };
  auto pick_weight = [&] {
    return chance(5) ? weight_pool[8 + pick(2)] : weight_pool[pick(8)];
  };
  auto find = [](Db& db, const std::string& k) -> Value* {
    auto it = db.find(k);
    return it == db.end() ? nullptr : &it->second;
  };
  auto is_agg = [](const Value* v) {
    return v == nullptr || v->type == ValueType::kZSet || v->type == ValueType::kSet;
  };
  auto keys_text = [](const std::vector<std::string>& ks) {
    std::string t;
    for (const auto& k : ks) t += " " + k;
    return t;
  };
  // The inputs' model state, for failure messages.
  auto inputs_text = [&](Db& db, const std::vector<std::string>& ks) {
    std::string t;
    for (const auto& k : ks) t += "\n  " + k + " = " + Describe(find(db, k));
    return t;
  };

  int disagreements = 0;  // ZSTORE/ZCOMBINE results outside Redis's (see below)
  std::map<std::string, int> ran;  // how often each operation ran, for coverage
  for (int step = 0; step < steps; ++step) {
    clock.Advance(1);
    const int64_t now = clock.NowMs();
    // Most steps in database 0, some in database 1.
    const uint32_t cur = chance(6) ? 1 : 0;
    const uint32_t other = 1 - cur;
    Db& db = dbs[cur];
    const unsigned roll = static_cast<unsigned>(pick(100));
    std::ostringstream desc;
    desc << "step " << step << ", db " << cur << ": ";
    {
      Store::DatabaseScope scope(*s, cur);
      if (roll < 18) {  // ZADD, sometimes every score 0 (for BYLEX)
        ran["ZADD"]++;
        const std::string k = pick_key();
        const bool zeros = chance(3);
        std::vector<std::string> ms;
        std::vector<double> scs;
        const size_t n = 1 + pick(3);
        for (size_t i = 0; i < n; ++i) {
          ms.push_back(pick_member());
          scs.push_back(zeros ? 0.0 : pick_score());
        }
        Pairs pairs;
        for (size_t i = 0; i < n; ++i) pairs.emplace_back(scs[i], ms[i]);
        desc << "ZADD " << k;
        for (size_t i = 0; i < n; ++i) desc << " " << Fmt(scs[i]) << " " << ms[i];
        desc << "\n  " << k << " = " << Describe(find(db, k));
        INFO(desc.str());
        int64_t added = -1;
        Value* v = find(db, k);
        if (v != nullptr && v->type != ValueType::kZSet) {
          REQUIRE(s->ZAdd(k, pairs, 0, &added) == Status::kWrongType);
        } else {
          REQUIRE(s->ZAdd(k, pairs, 0, &added) == Status::kOk);
          if (v == nullptr) {
            v = &db[k];
            v->type = ValueType::kZSet;
          }
          int64_t expect = 0;
          for (size_t i = 0; i < n; ++i) {
            expect += v->zset.count(ms[i]) == 0 ? 1 : 0;
            v->zset[ms[i]] = scs[i] + 0.0;
          }
          CHECK(added == expect);
        }
      } else if (roll < 26) {  // SADD
        ran["SADD"]++;
        const std::string k = pick_key();
        std::vector<std::string> ms;
        const size_t n = 1 + pick(3);
        for (size_t i = 0; i < n; ++i) ms.push_back(pick_member());
        const std::vector<std::string_view> views(ms.begin(), ms.end());
        desc << "SADD " << k << keys_text(ms) << "\n  " << k << " = " << Describe(find(db, k));
        INFO(desc.str());
        int64_t added = -1;
        Value* v = find(db, k);
        if (v != nullptr && v->type != ValueType::kSet) {
          REQUIRE(s->SAdd(k, views, &added) == Status::kWrongType);
        } else {
          REQUIRE(s->SAdd(k, views, &added) == Status::kOk);
          if (v == nullptr) {
            v = &db[k];
            v->type = ValueType::kSet;
          }
          int64_t expect = 0;
          for (const auto& m : ms) expect += v->set.insert(m).second ? 1 : 0;
          CHECK(added == expect);
        }
      } else if (roll < 30) {  // SET, so that WRONGTYPE happens
        ran["SET"]++;
        const std::string k = pick_key();
        const std::string val = "str" + std::to_string(pick(10));
        const int64_t ttl = chance(3) ? 10'000'000 + static_cast<int64_t>(pick(1000)) : 0;
        desc << "SET " << k << " " << val << " ttl " << ttl;
        INFO(desc.str());
        REQUIRE(s->Set(k, val, ttl) == Status::kOk);
        Value& v = db[k];
        v = Value{};
        v.str = val;
        v.expires_at = ttl == 0 ? 0 : now + ttl;
      } else if (roll < 33) {  // DEL
        ran["DEL"]++;
        const std::string k = pick_key();
        desc << "DEL " << k;
        INFO(desc.str());
        int64_t removed = -1;
        REQUIRE(s->Del(k, &removed) == Status::kOk);
        CHECK(removed == static_cast<int64_t>(db.erase(k)));
      } else if (roll < 36) {  // PEXPIRE (far: nothing expires) or PERSIST
        const std::string k = pick_key();
        Value* v = find(db, k);
        bool applied = false;
        if (chance(3)) {
          ran["PERSIST"]++;
          desc << "PERSIST " << k;
          INFO(desc.str());
          REQUIRE(s->Persist(k, &applied) == Status::kOk);
          CHECK(applied == (v != nullptr && v->expires_at != 0));
          if (v != nullptr) v->expires_at = 0;
        } else {
          ran["PEXPIRE"]++;
          const int64_t ttl = 20'000'000 + static_cast<int64_t>(pick(1000));
          desc << "PEXPIRE " << k << " " << ttl;
          INFO(desc.str());
          REQUIRE(s->Expire(k, ttl, &applied) == Status::kOk);
          CHECK(applied == (v != nullptr));
          if (v != nullptr) v->expires_at = now + ttl;
        }
      } else if (roll < 58) {  // ZUNIONSTORE/ZINTERSTORE/ZDIFFSTORE, or the reply forms
        const bool store = roll < 48;
        const ZOp op = static_cast<ZOp>(pick(3));
        const Agg agg = static_cast<Agg>(pick(3));
        std::vector<std::string> ks;
        const size_t n = 1 + pick(4);
        for (size_t i = 0; i < n; ++i) ks.push_back(pick_key());
        std::vector<double> weights;
        if (!chance(4)) {
          for (size_t i = 0; i < n; ++i) weights.push_back(pick_weight());
        }
        // The destination is often one of the inputs.
        const std::string dst = chance(2) ? ks[pick(n)] : pick_key();
        ran[std::string(store ? "Z" : "Z(reply) ") + ZOpName(op)]++;
        desc << (store ? "ZSTORE " : "ZCOMBINE ") << ZOpName(op) << " AGGREGATE "
             << AggName(agg);
        if (store) desc << " dst " << dst;
        desc << " keys" << keys_text(ks) << " weights";
        if (weights.empty()) desc << " (none)";
        for (double w : weights) desc << " " << Fmt(w);
        desc << inputs_text(db, ks);
        if (store) desc << "\n  dst " << dst << " = " << Describe(find(db, dst));
        INFO(desc.str());
        const std::vector<std::string_view> views(ks.begin(), ks.end());
        bool wrongtype = false;
        std::vector<ZMap> src;
        for (const auto& k : ks) {
          const Value* v = find(db, k);
          wrongtype = wrongtype || !is_agg(v);
          src.push_back(ScoresOf(v));
        }
        int64_t size = -1;
        Members out;
        const Status st = store ? s->ZStore(dst, views, weights, agg, op, &size)
                                : s->ZCombine(views, weights, agg, op, &out);
        if (wrongtype) {
          REQUIRE(st == Status::kWrongType);  // and nothing changed: see CheckStore
        } else {
          REQUIRE(st == Status::kOk);
          const std::vector<ZMap> allowed = RedisResults(src, weights, agg, op);
          // Every allowed result has the same members: only scores differ.
          const ZMap& first = allowed.front();
          ZMap got;
          if (store) {
            CHECK(size == static_cast<int64_t>(first.size()));
            for (const auto& [m, sc] : All(*s, dst)) got.emplace(m, sc);
          } else {
            for (const auto& [m, sc] : out) got.emplace(m, sc);
            CHECK(got.size() == out.size());  // no member twice
          }
          bool matched = false;
          for (const ZMap& r : allowed) {
            if (got == r) {
              matched = true;
              if (!store) {
                INFO("replied " << Describe(out));
                CHECK(out == Sorted(r));  // ordered by score, then member
              }
            }
          }
          if (!matched) {
            // The store's scores are none of those Redis 7.0 gives: a
            // failure, reported with the inputs; the model then takes the
            // store's result so that the run goes on checking the rest.
            std::string expected;
            for (const ZMap& r : allowed) expected += "\n  " + Describe(Sorted(r));
            INFO("Redis 7.0 gives" << expected << "\nthe store gives\n  "
                                   << Describe(Sorted(got)));
            CHECK(matched);
            ++disagreements;
          }
          if (store) {
            // The result (an empty one deletes dst) replaces dst, TTL and all.
            db.erase(dst);
            if (!got.empty()) {
              Value& v = db[dst];
              v.type = ValueType::kZSet;
              for (const auto& [m, sc] : got) v.zset[m] = sc + 0.0;
            }
          }
        }
      } else if (roll < 68) {  // ZRANGESTORE by rank, score or lex
        const std::string src_key = pick_key();
        const std::string dst = chance(4) ? src_key : pick_key();
        Store::ZRangeSpec spec;
        spec.by = static_cast<Store::ZRangeSpec::By>(pick(3));
        spec.reverse = chance(2);
        const Value* sv = find(db, src_key);
        const bool is_zset = sv != nullptr && sv->type == ValueType::kZSet;
        if (spec.by == Store::ZRangeSpec::By::kLex && is_zset) {
          // BYLEX is meaningful on a sorted set whose members share one
          // score; on another, use BYSCORE.
          std::set<double> distinct;
          for (const auto& [m, sc] : sv->zset) distinct.insert(sc);
          if (distinct.size() > 1) spec.by = Store::ZRangeSpec::By::kScore;
        }
        auto lex_bound = [&] {
          Store::ZLexBound b;
          b.kind = static_cast<Store::ZLexBound::Kind>(pick(4));
          if (b.kind == Store::ZLexBound::Kind::kInclusive ||
              b.kind == Store::ZLexBound::Kind::kExclusive) {
            b.value = pick_member();
          }
          return b;
        };
        auto lex_text = [](const Store::ZLexBound& b) {
          switch (b.kind) {
            case Store::ZLexBound::Kind::kMinusInf: return std::string("-");
            case Store::ZLexBound::Kind::kPlusInf: return std::string("+");
            case Store::ZLexBound::Kind::kInclusive: return "[" + b.value;
            default: return "(" + b.value;
          }
        };
        switch (spec.by) {
          case Store::ZRangeSpec::By::kRank:
            ran["ZRANGESTORE rank"]++;
            spec.start = static_cast<int64_t>(pick(12)) - 6;
            spec.stop = static_cast<int64_t>(pick(12)) - 6;
            desc << "ZRANGESTORE " << dst << " " << src_key << " " << spec.start << " "
                 << spec.stop;
            break;
          case Store::ZRangeSpec::By::kScore:
            ran["ZRANGESTORE score"]++;
            spec.score.min = chance(6) ? -kInf : score_pool[pick(9)];
            spec.score.max = chance(6) ? kInf : score_pool[pick(9)];
            spec.score.min_exclusive = chance(3);
            spec.score.max_exclusive = chance(3);
            desc << "ZRANGESTORE " << dst << " " << src_key << " BYSCORE min "
                 << (spec.score.min_exclusive ? "(" : "") << Fmt(spec.score.min) << " max "
                 << (spec.score.max_exclusive ? "(" : "") << Fmt(spec.score.max);
            break;
          case Store::ZRangeSpec::By::kLex:
            ran["ZRANGESTORE lex"]++;
            spec.lex_min = lex_bound();
            spec.lex_max = lex_bound();
            desc << "ZRANGESTORE " << dst << " " << src_key << " BYLEX min "
                 << lex_text(spec.lex_min) << " max " << lex_text(spec.lex_max);
            break;
        }
        if (spec.by != Store::ZRangeSpec::By::kRank && chance(2)) {
          static const int64_t offsets[] = {-1, 0, 0, 1, 2};
          static const int64_t counts[] = {-1, 0, 1, 2, 3};
          spec.offset = offsets[pick(5)];
          spec.count = counts[pick(5)];
          desc << " LIMIT " << spec.offset << " " << spec.count;
        }
        if (spec.reverse) desc << " REV";
        desc << "\n  " << src_key << " = " << Describe(sv) << "\n  dst " << dst << " = "
             << Describe(find(db, dst));
        INFO(desc.str());
        int64_t size = -1;
        const Status st = s->ZRangeStore(dst, src_key, spec, &size);
        if (sv != nullptr && !is_zset) {
          REQUIRE(st == Status::kWrongType);
        } else {
          REQUIRE(st == Status::kOk);
          // The selection, as Redis's ZRANGE makes it.
          Members all = is_zset ? Sorted(sv->zset) : Members{};
          Members sel;
          const int64_t len = static_cast<int64_t>(all.size());
          if (spec.by == Store::ZRangeSpec::By::kRank) {
            if (spec.reverse) std::reverse(all.begin(), all.end());
            int64_t a = spec.start < 0 ? spec.start + len : spec.start;
            int64_t b = spec.stop < 0 ? spec.stop + len : spec.stop;
            if (a < 0) a = 0;
            if (b >= len) b = len - 1;
            for (int64_t i = a; i <= b; ++i) sel.push_back(all[static_cast<size_t>(i)]);
          } else {
            auto in_range = [&](const std::pair<std::string, double>& e) {
              if (spec.by == Store::ZRangeSpec::By::kScore) {
                const double sc = e.second;
                const bool lo = spec.score.min_exclusive ? sc > spec.score.min
                                                         : sc >= spec.score.min;
                const bool hi = spec.score.max_exclusive ? sc < spec.score.max
                                                         : sc <= spec.score.max;
                return lo && hi;
              }
              const std::string& m = e.first;
              bool lo = false, hi = false;
              switch (spec.lex_min.kind) {
                case Store::ZLexBound::Kind::kMinusInf: lo = true; break;
                case Store::ZLexBound::Kind::kPlusInf: lo = false; break;
                case Store::ZLexBound::Kind::kInclusive: lo = m >= spec.lex_min.value; break;
                case Store::ZLexBound::Kind::kExclusive: lo = m > spec.lex_min.value; break;
              }
              switch (spec.lex_max.kind) {
                case Store::ZLexBound::Kind::kMinusInf: hi = false; break;
                case Store::ZLexBound::Kind::kPlusInf: hi = true; break;
                case Store::ZLexBound::Kind::kInclusive: hi = m <= spec.lex_max.value; break;
                case Store::ZLexBound::Kind::kExclusive: hi = m < spec.lex_max.value; break;
              }
              return lo && hi;
            };
            Members matching;
            for (const auto& e : all) {
              if (in_range(e)) matching.push_back(e);
            }
            if (spec.reverse) std::reverse(matching.begin(), matching.end());
            if (spec.offset >= 0) {
              for (size_t i = static_cast<size_t>(spec.offset); i < matching.size(); ++i) {
                if (spec.count >= 0 && static_cast<int64_t>(sel.size()) >= spec.count) break;
                sel.push_back(matching[i]);
              }
            }
          }
          CHECK(size == static_cast<int64_t>(sel.size()));
          db.erase(dst);  // replaced, TTL and all; an empty selection deletes it
          if (!sel.empty()) {
            Value& v = db[dst];
            v.type = ValueType::kZSet;
            for (const auto& [m, sc] : sel) v.zset[m] = sc;
          }
        }
      } else if (roll < 75) {  // ZMPOP (and BZMPOP's attempt, which skips other types)
        ran["ZMPOP"]++;
        std::vector<std::string> ks;
        const size_t n = 1 + pick(3);
        for (size_t i = 0; i < n; ++i) ks.push_back(pick_key());
        const bool max = chance(2);
        const int64_t count = 1 + static_cast<int64_t>(pick(3));
        const bool skip = chance(5);
        desc << "ZMPOP " << n << keys_text(ks) << (max ? " MAX" : " MIN") << " COUNT "
             << count << (skip ? " (skipping other types)" : "") << inputs_text(db, ks);
        INFO(desc.str());
        const std::vector<std::string_view> views(ks.begin(), ks.end());
        size_t which = 99;
        Members out;
        const Status st = s->ZMPop(views, max, count, skip, &which, &out);
        // The model: the first key holding a sorted set; WRONGTYPE for
        // another type met first.
        Status expect_st = Status::kOk;
        size_t expect_which = ks.size();
        for (size_t i = 0; i < ks.size(); ++i) {
          const Value* v = find(db, ks[i]);
          if (v == nullptr) continue;
          if (v->type != ValueType::kZSet) {
            if (skip) continue;
            expect_st = Status::kWrongType;
            break;
          }
          expect_which = i;
          break;
        }
        REQUIRE(st == expect_st);
        if (expect_st == Status::kOk) {
          if (expect_which == ks.size()) {
            CHECK(out.empty());
          } else {
            CHECK(which == expect_which);
            Value& v = db[ks[expect_which]];
            Members all = Sorted(v.zset);
            if (max) std::reverse(all.begin(), all.end());
            if (all.size() > static_cast<size_t>(count)) all.resize(static_cast<size_t>(count));
            INFO("popped " << Describe(out) << ", the model pops " << Describe(all));
            CHECK(out == all);
            for (const auto& [m, sc] : all) v.zset.erase(m);
            if (v.zset.empty()) db.erase(ks[expect_which]);
          }
        }
      } else if (roll < 90) {  // SINTER/SUNION/SDIFF and their STORE forms
        const bool store = roll < 83;
        const SetOp op = static_cast<SetOp>(pick(3));
        std::vector<std::string> ks;
        const size_t n = 1 + pick(3);
        for (size_t i = 0; i < n; ++i) ks.push_back(pick_key());
        const std::string dst = chance(2) ? ks[pick(n)] : pick_key();
        ran[std::string(SetOpName(op)) + (store ? "STORE" : "")]++;
        desc << SetOpName(op) << (store ? "STORE " + dst : std::string()) << keys_text(ks)
             << inputs_text(db, ks);
        if (store) desc << "\n  dst " << dst << " = " << Describe(find(db, dst));
        INFO(desc.str());
        bool wrongtype = false;
        std::set<std::string> expect;
        for (size_t i = 0; i < ks.size(); ++i) {
          const Value* v = find(db, ks[i]);
          if (v != nullptr && v->type != ValueType::kSet) wrongtype = true;
          const std::set<std::string> ms = v != nullptr ? v->set : std::set<std::string>{};
          if (i == 0 || op == SetOp::kUnion) {
            expect.insert(ms.begin(), ms.end());
          } else if (op == SetOp::kInter) {
            std::set<std::string> both;
            std::set_intersection(expect.begin(), expect.end(), ms.begin(), ms.end(),
                                  std::inserter(both, both.end()));
            expect = both;
          } else {
            for (const auto& m : ms) expect.erase(m);
          }
        }
        const std::vector<std::string_view> views(ks.begin(), ks.end());
        if (store) {
          int64_t size = -1;
          const Status st = s->SCombineStore(op, dst, views, &size);
          if (wrongtype) {
            REQUIRE(st == Status::kWrongType);
          } else {
            REQUIRE(st == Status::kOk);
            CHECK(size == static_cast<int64_t>(expect.size()));
            db.erase(dst);  // replaced, TTL and all; an empty result deletes it
            if (!expect.empty()) {
              Value& v = db[dst];
              v.type = ValueType::kSet;
              v.set = expect;
            }
          }
        } else {
          std::vector<std::string> out;
          const Status st = s->SCombine(op, views, &out);
          if (wrongtype) {
            REQUIRE(st == Status::kWrongType);
          } else {
            REQUIRE(st == Status::kOk);
            std::sort(out.begin(), out.end());
            CHECK(out == std::vector<std::string>(expect.begin(), expect.end()));
          }
        }
      } else {  // COPY, within the database and to the other one
        ran["COPY"]++;
        const std::string src_key = pick_key();
        const std::string dst = chance(4) ? src_key : pick_key();
        uint32_t dst_db = chance(2) ? other : cur;
        if (chance(25)) dst_db = 2;  // out of range
        const bool replace = chance(2);
        desc << "COPY " << src_key << " " << dst << " DB " << dst_db
             << (replace ? " REPLACE" : "") << "\n  " << src_key << " = "
             << Describe(find(db, src_key));
        if (dst_db < 2) desc << "\n  dst " << dst << " = " << Describe(find(dbs[dst_db], dst));
        INFO(desc.str());
        bool copied = true;
        const Status st = s->Copy(src_key, dst, dst_db, replace, &copied);
        if (dst_db >= 2 || (src_key == dst && dst_db == cur)) {
          // ERR DB index is out of range / source and destination objects
          // are the same (even for a missing key).
          REQUIRE(st == Status::kInvalidArgument);
        } else {
          REQUIRE(st == Status::kOk);
          const Value* sv = find(db, src_key);
          const bool expect = sv != nullptr && (replace || find(dbs[dst_db], dst) == nullptr);
          CHECK(copied == expect);
          if (expect) dbs[dst_db][dst] = *sv;  // the value and its TTL
        }
      }
    }
    INFO(desc.str());
    CheckStore(*s, dbs);
  }
  // Every operation ran, BYLEX included.
  for (const char* name :
       {"ZADD", "SADD", "SET", "DEL", "PEXPIRE", "PERSIST", "ZUNION", "ZINTER", "ZDIFF",
        "Z(reply) UNION", "Z(reply) INTER", "Z(reply) DIFF", "ZRANGESTORE rank",
        "ZRANGESTORE score", "ZRANGESTORE lex", "ZMPOP", "SINTER", "SUNION", "SDIFF",
        "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE", "COPY"}) {
    INFO(name);
    CHECK(ran[name] >= 10);
  }
  CHECK(disagreements == 0);
  // Deleting everything returns the accounted memory to 0.
  for (uint32_t d = 0; d < 2; ++d) {
    Store::DatabaseScope scope(*s, d);
    for (const auto& k : key_pool) {
      int64_t removed = 0;
      REQUIRE(s->Del(k, &removed) == Status::kOk);
    }
    REQUIRE(s->DbSize() == 0);
  }
  CHECK(s->Stats().memory_used == 0);
}

}  // namespace

TEST_CASE("multi-key zset and set operations and COPY agree with a model of Redis 7.0",
          "[store][zset][set][model]") {
  // MULTIKEY_MODEL_SEED=N runs that seed alone.
  if (const char* env = std::getenv("MULTIKEY_MODEL_SEED"); env != nullptr) {
    RunMultiKeyModel(static_cast<uint32_t>(std::strtoul(env, nullptr, 10)), 4000);
    return;
  }
  for (uint32_t seed : {20240611u, 5u, 13u}) RunMultiKeyModel(seed, 4000);
}

// Pinned cases where Redis 7.0's order and NaN handling decide the scores,
// each checked against Debian's redis-server 7.0.15 (the replies quoted).
// The checks marked REDIS 7.0 BEHAVIOUR failed while the store combined its
// inputs in the given order and cleared every weighted NaN (the random test
// above found both); zsets_more.resp compares the same cases over RESP.
TEST_CASE("ZUNIONSTORE and ZINTERSTORE give Redis 7.0's scores for infinities and NaN",
          "[store][zset][model]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  auto score = [&](std::string_view key, std::string_view member) {
    double d = std::nan("");
    REQUIRE(s->ZScore(key, member, &d) == Status::kOk);
    return d;
  };
  SECTION("a union adds its inputs smallest first") {
    // ZADD k1 5 m 1 p 1 q; ZADD k2 inf m; ZADD k3 -inf m 1 r
    // ZUNIONSTORE d 3 k1 k2 k3 -> m = 5 (k2, then k3: inf + -inf = 0; then k1: 0 + 5)
    REQUIRE(s->ZAdd("k1", Pairs{{5, "m"}, {1, "p"}, {1, "q"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZAdd("k2", Pairs{{kInf, "m"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZAdd("k3", Pairs{{-kInf, "m"}, {1, "r"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZStore("d", {"k1", "k2", "k3"}, {}, Agg::kSum, ZOp::kUnion, &n) == Status::kOk);
    CHECK(n == 4);
    CHECK(score("d", "m") == 5);  // REDIS 7.0 BEHAVIOUR
    Members out;
    REQUIRE(s->ZCombine({"k1", "k2", "k3"}, {}, Agg::kSum, ZOp::kUnion, &out) == Status::kOk);
    INFO("ZUNION replies " << Describe(out));
    CHECK(out == Members{{"p", 1}, {"q", 1}, {"r", 1}, {"m", 5}});  // REDIS 7.0 BEHAVIOUR
  }
  SECTION("an intersection does not clear a later input's NaN") {
    // ZADD a1 1 m; ZADD b1 inf m 1 x
    // ZINTERSTORE d 2 a1 b1 WEIGHTS 1 0 AGGREGATE SUM -> m = 0 (1 + inf*0 = NaN -> 0)
    //                                   AGGREGATE MIN -> m = 1 (the NaN is ignored)
    //                                   AGGREGATE MAX -> m = 1
    REQUIRE(s->ZAdd("a1", Pairs{{1, "m"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZAdd("b1", Pairs{{kInf, "m"}, {1, "x"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZStore("d", {"a1", "b1"}, {1, 0}, Agg::kSum, ZOp::kInter, &n) == Status::kOk);
    CHECK(score("d", "m") == 0);  // REDIS 7.0 BEHAVIOUR
    REQUIRE(s->ZStore("d", {"a1", "b1"}, {1, 0}, Agg::kMin, ZOp::kInter, &n) == Status::kOk);
    CHECK(score("d", "m") == 1);  // REDIS 7.0 BEHAVIOUR
    REQUIRE(s->ZStore("d", {"a1", "b1"}, {1, 0}, Agg::kMax, ZOp::kInter, &n) == Status::kOk);
    CHECK(score("d", "m") == 1);
  }
}
