// The sorted set family of the Store: semantics, accounting, types, expiry,
// the memory limit, and a model-based random test against a std::map.

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/store.h"
#include "shard.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::Store;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::SumOfEntries;

namespace {

using Pairs = std::vector<std::pair<double, std::string_view>>;
using Members = Store::ZMembers;
constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t ZMem(std::string_view key, const std::vector<std::string>& members, bool ttl = false) {
  uint64_t elements = 0;
  for (const auto& m : members) elements += ephpm::ZSetMemberMem(m.size());
  return ephpm::ZSetEntryMem(key.size(), elements, ttl);
}

Members All(const Store& s, std::string_view key) { return ephpm_test::ZAll(s, key); }

Store::ZRangeSpec ByScore(double min, double max, bool min_ex = false, bool max_ex = false) {
  Store::ZRangeSpec spec;
  spec.by = Store::ZRangeSpec::By::kScore;
  spec.score = {min, max, min_ex, max_ex};
  return spec;
}

Store::ZLexBound Lex(Store::ZLexBound::Kind kind, std::string v = "") {
  Store::ZLexBound b;
  b.kind = kind;
  b.value = std::move(v);
  return b;
}

}  // namespace

TEST_CASE("zadd adds, updates and orders by score then member", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{2, "b"}, {1, "a"}, {2, "a2"}, {-kInf, "m"}}, 0, &n) == Status::kOk);
  CHECK(n == 4);
  CHECK(All(*s, "z") == Members{{"m", -kInf}, {"a", 1}, {"a2", 2}, {"b", 2}});
  // The last score of a repeated member wins; it counts once.
  REQUIRE(s->ZAdd("z", Pairs{{5, "c"}, {7, "c"}}, 0, &n) == Status::kOk);
  CHECK(n == 1);
  double score = 0;
  REQUIRE(s->ZScore("z", "c", &score) == Status::kOk);
  CHECK(score == 7);
  // CH counts updates; an unchanged score is no update.
  REQUIRE(s->ZAdd("z", Pairs{{7, "c"}, {3, "a"}, {9, "d"}}, Store::kZAddCh, &n) == Status::kOk);
  CHECK(n == 2);
  CHECK(s->ZScore("z", "nomember", &score) == Status::kNotFound);
  CHECK(s->ZScore("nokey", "a", &score) == Status::kNotFound);
  int64_t rank = 0;
  // m -inf, a2 2, b 2, a 3, c 7, d 9
  REQUIRE(s->ZRank("z", "a", false, &rank) == Status::kOk);
  CHECK(rank == 3);
  REQUIRE(s->ZRank("z", "a", true, &rank) == Status::kOk);
  CHECK(rank == 2);
  CHECK(s->ZRank("z", "zz", false, &rank) == Status::kNotFound);
  // -0 is kept as 0.
  REQUIRE(s->ZAdd("zero", Pairs{{-0.0, "x"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZScore("zero", "x", &score) == Status::kOk);
  CHECK_FALSE(std::signbit(score));
  // A NaN score is refused.
  CHECK(s->ZAdd("z", Pairs{{std::nan(""), "x"}}, 0, &n) == Status::kInvalidArgument);
}

TEST_CASE("zadd's conditions and incr", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  std::optional<double> score;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "b"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("z", Pairs{{5, "a"}, {3, "c"}}, Store::kZAddNx, &n) == Status::kOk);
  CHECK(n == 1);
  REQUIRE(s->ZAdd("z", Pairs{{6, "a"}, {4, "d"}}, Store::kZAddXx | Store::kZAddCh, &n) ==
          Status::kOk);
  CHECK(n == 1);
  REQUIRE(s->ZAdd("z", Pairs{{5, "a"}, {9, "b"}}, Store::kZAddGt | Store::kZAddCh, &n) ==
          Status::kOk);
  CHECK(n == 1);  // only b moved (up)
  REQUIRE(s->ZAdd("z", Pairs{{5, "a"}, {10, "b"}}, Store::kZAddLt | Store::kZAddCh, &n) ==
          Status::kOk);
  CHECK(n == 1);  // only a moved (down)
  CHECK(All(*s, "z") == Members{{"c", 3}, {"a", 5}, {"b", 9}});
  // XX on a missing key creates nothing.
  REQUIRE(s->ZAdd("none", Pairs{{1, "a"}}, Store::kZAddXx, &n) == Status::kOk);
  bool exists = true;
  REQUIRE(s->Exists("none", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  // INCR: the new score, or nothing when a condition holds it back.
  REQUIRE(s->ZAdd("z", Pairs{{1.5, "a"}}, Store::kZAddIncr, &n, &score) == Status::kOk);
  CHECK(score == 6.5);
  REQUIRE(s->ZAdd("z", Pairs{{-1, "a"}}, Store::kZAddIncr | Store::kZAddGt, &n, &score) ==
          Status::kOk);
  CHECK_FALSE(score.has_value());
  REQUIRE(s->ZAdd("z", Pairs{{2, "new"}}, Store::kZAddIncr, &n, &score) == Status::kOk);
  CHECK(score == 2);
  CHECK(n == 1);
  REQUIRE(s->ZAdd("z", Pairs{{kInf, "i"}}, Store::kZAddIncr, &n, &score) == Status::kOk);
  const uint64_t version_before = [&] {
    ephpm::EntryInfo info;
    REQUIRE(s->Inspect("z", &info) == Status::kOk);
    return info.version;
  }();
  CHECK(s->ZAdd("z", Pairs{{-kInf, "i"}}, Store::kZAddIncr, &n, &score) ==
        Status::kNanOrInfinity);
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("z", &info) == Status::kOk);
  CHECK(info.version == version_before);
  double d = 0;
  REQUIRE(s->ZScore("z", "i", &d) == Status::kOk);
  CHECK(d == kInf);
  // INCR takes one pair; NX excludes XX, GT and LT, and GT excludes LT.
  CHECK(s->ZAdd("z", Pairs{{1, "a"}, {1, "b"}}, Store::kZAddIncr, &n, &score) ==
        Status::kInvalidArgument);
  for (unsigned bad : {Store::kZAddNx | Store::kZAddXx, Store::kZAddNx | Store::kZAddGt,
                       Store::kZAddNx | Store::kZAddLt, Store::kZAddGt | Store::kZAddLt}) {
    CHECK(s->ZAdd("z", Pairs{{1, "a"}}, bad, &n) == Status::kInvalidArgument);
  }
}

TEST_CASE("zrange by rank, score and lex, with offset and count", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}, {5, "e"}}, 0, &n) ==
          Status::kOk);
  Members out;
  Store::ZRangeSpec spec;
  spec.start = 1;
  spec.stop = -2;
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out == Members{{"b", 2}, {"c", 3}, {"d", 4}});
  spec.reverse = true;
  spec.start = 0;
  spec.stop = 1;
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out == Members{{"e", 5}, {"d", 4}});

  spec = ByScore(2, 4, true, false);
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out == Members{{"c", 3}, {"d", 4}});
  spec = ByScore(-kInf, kInf);
  spec.reverse = true;
  spec.offset = 1;
  spec.count = 2;
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out == Members{{"d", 4}, {"c", 3}});
  spec.offset = -1;
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out.empty());
  spec = ByScore(kInf, kInf, true, false);
  REQUIRE(s->ZRange("z", spec, &out) == Status::kOk);
  CHECK(out.empty());
  int64_t count = 0;
  REQUIRE(s->ZCount("z", ByScore(2, 5, false, true), &count) == Status::kOk);
  CHECK(count == 3);
  REQUIRE(s->ZCount("z", ByScore(4, 2), &count) == Status::kOk);
  CHECK(count == 0);

  using K = Store::ZLexBound::Kind;
  REQUIRE(s->ZAdd("l", Pairs{{0, "a"}, {0, "b"}, {0, "c"}, {0, "d"}}, 0, &n) == Status::kOk);
  spec = Store::ZRangeSpec{};
  spec.by = Store::ZRangeSpec::By::kLex;
  spec.lex_min = Lex(K::kExclusive, "a");
  spec.lex_max = Lex(K::kInclusive, "c");
  REQUIRE(s->ZRange("l", spec, &out) == Status::kOk);
  CHECK(out == Members{{"b", 0}, {"c", 0}});
  REQUIRE(s->ZCount("l", spec, &count) == Status::kOk);
  CHECK(count == 2);
  spec.lex_min = Lex(K::kPlusInf);
  spec.lex_max = Lex(K::kMinusInf);
  REQUIRE(s->ZRange("l", spec, &out) == Status::kOk);
  CHECK(out.empty());
  spec.lex_min = Lex(K::kMinusInf);
  spec.lex_max = Lex(K::kPlusInf);
  spec.reverse = true;
  spec.count = 3;
  REQUIRE(s->ZRange("l", spec, &out) == Status::kOk);
  CHECK(out == Members{{"d", 0}, {"c", 0}, {"b", 0}});
}

TEST_CASE("zset accounting is exact through every write", "[store][zset][memory]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "bb"}, {3, "ccc"}}, 0, &n) == Status::kOk);
  CHECK(s->Stats().memory_used == ZMem("z", {"a", "bb", "ccc"}));
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  REQUIRE(s->ZAdd("z", Pairs{{5, "a"}, {4, "dddd"}}, 0, &n) == Status::kOk);
  CHECK(s->Stats().memory_used == ZMem("z", {"a", "bb", "ccc", "dddd"}));
  REQUIRE(s->ZRem("z", {"bb", "nomember"}, &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(s->Stats().memory_used == ZMem("z", {"a", "ccc", "dddd"}));
  Members popped;
  REQUIRE(s->ZPop("z", false, 1, &popped) == Status::kOk);
  CHECK(popped == Members{{"ccc", 3}});
  CHECK(s->Stats().memory_used == ZMem("z", {"a", "dddd"}));
  bool applied = false;
  REQUIRE(s->Expire("z", 10000, &applied) == Status::kOk);
  CHECK(s->Stats().memory_used == ZMem("z", {"a", "dddd"}, true));
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  REQUIRE(s->ZRemRange("z", ByScore(-kInf, 4.5), &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(s->Stats().memory_used == ZMem("z", {"a"}, true));
  // The last member takes the key with it.
  REQUIRE(s->ZPop("z", true, 5, &popped) == Status::kOk);
  CHECK(popped == Members{{"a", 5}});
  CHECK(s->Stats().memory_used == 0);
  CHECK(s->Stats().keys == 0);
  REQUIRE(s->ZAdd("y", Pairs{{1, "a"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZRem("y", {"a"}, &n) == Status::kOk);
  bool exists = true;
  REQUIRE(s->Exists("y", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("zset operations on other types are WRONGTYPE and change nothing",
          "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  int64_t n = 0;
  const uint64_t before = s->Stats().memory_used;
  double d = 0;
  Members out;
  CHECK(s->ZAdd("str", Pairs{{1, "a"}}, 0, &n) == Status::kWrongType);
  CHECK(s->ZRem("str", {"a"}, &n) == Status::kWrongType);
  CHECK(s->ZScore("str", "a", &d) == Status::kWrongType);
  CHECK(s->ZCard("str", &n) == Status::kWrongType);
  CHECK(s->ZRange("str", Store::ZRangeSpec{}, &out) == Status::kWrongType);
  CHECK(s->ZPop("str", false, 1, &out) == Status::kWrongType);
  CHECK(s->ZRemRange("str", Store::ZRangeSpec{}, &n) == Status::kWrongType);
  CHECK(s->ZStore("dst", {"str"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &n) ==
        Status::kWrongType);
  CHECK(s->Stats().memory_used == before);
  CHECK(ephpm_test::GetOr(*s, "str") == "v");
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}}, 0, &n) == Status::kOk);
  std::string v;
  CHECK(s->Get("z", &v) == Status::kWrongType);
  int64_t added = 0;
  CHECK(s->HSet("z", {{"f", "v"}}, false, &added) == Status::kWrongType);
}

TEST_CASE("an expired sorted set is absent", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}}, 0, &n) == Status::kOk);
  bool applied = false;
  REQUIRE(s->Expire("z", 100, &applied) == Status::kOk);
  clock.Advance(200);
  double d = 0;
  CHECK(s->ZScore("z", "a", &d) == Status::kNotFound);
  REQUIRE(s->ZCard("z", &n) == Status::kOk);
  CHECK(n == 0);
  REQUIRE(s->ZAdd("z", Pairs{{2, "b"}}, Store::kZAddXx, &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(s->Stats().memory_used == 0);
  REQUIRE(s->ZAdd("z", Pairs{{2, "b"}}, 0, &n) == Status::kOk);
  CHECK(All(*s, "z") == Members{{"b", 2}});
  CHECK(s->Stats().memory_used == ZMem("z", {"b"}));
}

TEST_CASE("a zset write refused for memory changes nothing", "[store][zset][memory]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;
  o.memory_limit = ZMem("z", {"a", "b"}) + 10;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "b"}}, 0, &n) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  // A new member does not fit; neither part of a batch goes in.
  CHECK(s->ZAdd("z", Pairs{{0.5, "a"}, {3, "c"}}, 0, &n) == Status::kOutOfMemory);
  CHECK(All(*s, "z") == Members{{"a", 1}, {"b", 2}});
  CHECK(s->Stats().memory_used == used);
  CHECK(s->ZAdd("other", Pairs{{1, "x"}}, 0, &n) == Status::kOutOfMemory);
  CHECK(s->ZStore("dst", {"z"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &n) ==
        Status::kOutOfMemory);
  CHECK(s->Stats().memory_used == used);
  CHECK(s->Stats().keys == 1);
  // Updating scores needs no memory.
  REQUIRE(s->ZAdd("z", Pairs{{5, "a"}}, 0, &n) == Status::kOk);
  CHECK(All(*s, "z") == Members{{"b", 2}, {"a", 5}});
  CHECK(s->Stats().memory_used == used);
}

TEST_CASE("zunionstore, zinterstore and zdiffstore", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("a", Pairs{{1, "x"}, {2, "y"}, {3, "z"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("b", Pairs{{10, "y"}, {20, "z"}, {30, "w"}}, 0, &n) == Status::kOk);
  REQUIRE(s->Set("dst", "a string first") == Status::kOk);
  REQUIRE(s->ZStore("dst", {"a", "b", "missing"}, {2, 1, 5}, Store::ZAggregate::kSum,
                    Store::ZStoreOp::kUnion, &n) == Status::kOk);
  CHECK(n == 4);
  CHECK(All(*s, "dst") == Members{{"x", 2}, {"y", 14}, {"z", 26}, {"w", 30}});
  REQUIRE(s->ZStore("dst", {"a", "b"}, {}, Store::ZAggregate::kMax, Store::ZStoreOp::kInter,
                    &n) == Status::kOk);
  CHECK(All(*s, "dst") == Members{{"y", 10}, {"z", 20}});
  REQUIRE(s->ZStore("dst", {"a", "b"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kDiff,
                    &n) == Status::kOk);
  CHECK(All(*s, "dst") == Members{{"x", 1}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  // An empty result deletes the destination.
  REQUIRE(s->ZStore("dst", {"a", "a"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kDiff,
                    &n) == Status::kOk);
  CHECK(n == 0);
  bool exists = true;
  REQUIRE(s->Exists("dst", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  // The destination may be an input.
  REQUIRE(s->ZStore("a", {"a", "b"}, {}, Store::ZAggregate::kMin, Store::ZStoreOp::kUnion,
                    &n) == Status::kOk);
  CHECK(All(*s, "a") == Members{{"x", 1}, {"y", 2}, {"z", 3}, {"w", 30}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("zset operations agree with a std::map model", "[store][zset][model]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 4;
  auto s = MakeStore(o, &clock);
  std::mt19937 rng(12345);
  std::map<std::string, double> model;
  auto pick_member = [&] { return std::string(1, static_cast<char>('a' + rng() % 12)); };
  auto pick_score = [&] { return static_cast<double>(static_cast<int>(rng() % 9) - 4) / 2; };
  auto sorted = [&] {
    std::vector<std::pair<double, std::string>> v;
    for (const auto& [m, sc] : model) v.emplace_back(sc, m);
    std::sort(v.begin(), v.end());
    Members out;
    for (const auto& [sc, m] : v) out.emplace_back(m, sc);
    return out;
  };
  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng() % 5);
    int64_t n = 0;
    if (op == 0) {  // ZADD of a few pairs, sometimes with NX/XX/GT/LT
      std::vector<std::string> ms;
      std::vector<double> scs;
      const int k = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < k; ++i) {
        ms.push_back(pick_member());
        scs.push_back(pick_score());
      }
      const unsigned choices[] = {0, Store::kZAddNx, Store::kZAddXx, Store::kZAddGt,
                                  Store::kZAddLt, Store::kZAddXx | Store::kZAddGt};
      const unsigned flags = choices[rng() % 6];
      Pairs pairs;
      for (int i = 0; i < k; ++i) pairs.emplace_back(scs[i], ms[i]);
      int64_t added = 0;
      for (int i = 0; i < k; ++i) {
        auto it = model.find(ms[i]);
        if (it == model.end()) {
          if (flags & Store::kZAddXx) continue;
          model[ms[i]] = scs[i];
          ++added;
        } else {
          if (flags & Store::kZAddNx) continue;
          if ((flags & Store::kZAddGt) && scs[i] <= it->second) continue;
          if ((flags & Store::kZAddLt) && scs[i] >= it->second) continue;
          it->second = scs[i];
        }
      }
      REQUIRE(s->ZAdd("z", pairs, flags, &n) == Status::kOk);
      CHECK(n == added);
    } else if (op == 1) {  // ZREM
      const std::string m = pick_member();
      REQUIRE(s->ZRem("z", {m}, &n) == Status::kOk);
      CHECK(n == static_cast<int64_t>(model.erase(m)));
    } else if (op == 2) {  // ZINCRBY
      const std::string m = pick_member();
      const double by = pick_score();
      std::optional<double> score;
      REQUIRE(s->ZAdd("z", Pairs{{by, m}}, Store::kZAddIncr, &n, &score) == Status::kOk);
      double next = model.count(m) ? model[m] + by : by;
      if (next == 0) next = 0;
      model[m] = next;
      CHECK(score == next);
    } else if (op == 3) {  // ZPOPMIN / ZPOPMAX
      const bool max = rng() % 2 == 0;
      const int64_t k = static_cast<int64_t>(rng() % 3);
      Members popped;
      REQUIRE(s->ZPop("z", max, k, &popped) == Status::kOk);
      Members all = sorted();
      Members expect;
      for (int64_t i = 0; i < k && i < static_cast<int64_t>(all.size()); ++i) {
        expect.push_back(max ? all[all.size() - 1 - static_cast<size_t>(i)]
                             : all[static_cast<size_t>(i)]);
      }
      CHECK(popped == expect);
      for (const auto& [m, sc] : expect) model.erase(m);
    } else {  // ZREMRANGEBYSCORE
      const double lo = pick_score(), hi = pick_score();
      REQUIRE(s->ZRemRange("z", ByScore(lo, hi, false, true), &n) == Status::kOk);
      int64_t expect = 0;
      for (auto it = model.begin(); it != model.end();) {
        if (it->second >= lo && it->second < hi) {
          it = model.erase(it);
          ++expect;
        } else {
          ++it;
        }
      }
      CHECK(n == expect);
    }
    // The whole order, each member's score and rank, the count and the memory.
    const Members all = sorted();
    REQUIRE(All(*s, "z") == all);
    for (size_t i = 0; i < all.size(); ++i) {
      int64_t rank = -1;
      REQUIRE(s->ZRank("z", all[i].first, false, &rank) == Status::kOk);
      CHECK(rank == static_cast<int64_t>(i));
      REQUIRE(s->ZRank("z", all[i].first, true, &rank) == Status::kOk);
      CHECK(rank == static_cast<int64_t>(all.size() - 1 - i));
      double d = 0;
      REQUIRE(s->ZScore("z", all[i].first, &d) == Status::kOk);
      CHECK(d == all[i].second);
    }
    int64_t card = -1;
    REQUIRE(s->ZCard("z", &card) == Status::kOk);
    CHECK(card == static_cast<int64_t>(all.size()));
    std::vector<std::string> names;
    for (const auto& [m, sc] : all) names.push_back(m);
    CHECK(s->Stats().memory_used == (all.empty() ? 0 : ZMem("z", names)));
    // A random rank window agrees too.
    Store::ZRangeSpec spec;
    spec.start = static_cast<int64_t>(rng() % 14) - 7;
    spec.stop = static_cast<int64_t>(rng() % 14) - 7;
    spec.reverse = rng() % 2 == 0;
    Members window;
    REQUIRE(s->ZRange("z", spec, &window) == Status::kOk);
    Members expect;
    const int64_t len = static_cast<int64_t>(all.size());
    int64_t a = spec.start < 0 ? spec.start + len : spec.start;
    int64_t b = spec.stop < 0 ? spec.stop + len : spec.stop;
    if (a < 0) a = 0;
    if (b >= len) b = len - 1;
    for (int64_t i = a; i <= b; ++i) {
      expect.push_back(spec.reverse ? all[static_cast<size_t>(len - 1 - i)]
                                    : all[static_cast<size_t>(i)]);
    }
    CHECK(window == expect);
  }
}

TEST_CASE("zrandmember", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}}, 0, &n) == Status::kOk);
  Members out;
  REQUIRE(s->ZRandMember("z", 10, &out) == Status::kOk);
  CHECK(out == Members{{"d", 4}, {"c", 3}, {"b", 2}, {"a", 1}});
  REQUIRE(s->ZRandMember("z", 3, &out) == Status::kOk);
  REQUIRE(out.size() == 3);
  std::set<std::string> distinct;
  for (const auto& [m, sc] : out) {
    distinct.insert(m);
    double d = 0;
    REQUIRE(s->ZScore("z", m, &d) == Status::kOk);
    CHECK(d == sc);
  }
  CHECK(distinct.size() == 3);
  REQUIRE(s->ZRandMember("z", -20, &out) == Status::kOk);
  CHECK(out.size() == 20);
  REQUIRE(s->ZRandMember("z", 0, &out) == Status::kOk);
  CHECK(out.empty());
  REQUIRE(s->ZRandMember("nokey", 5, &out) == Status::kOk);
  CHECK(out.empty());
}

TEST_CASE("sorted sets survive a restart, from the log and from a snapshot",
          "[store][zset][persistence]") {
  ephpm_test::TempDir dir;
  ManualClock clock;
  auto o = NoSweeper();
  o.persistence.data_dir = dir.path;
  const Members expect{{"m", -kInf}, {"a", -1}, {"b", 1.5}, {"long member name", 2}, {"c", kInf}};
  for (bool snapshot : {false, true}) {
    INFO("snapshot " << snapshot);
    {
      auto s = MakeStore(o, &clock);
      int64_t n = 0;
      REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {1.5, "b"}, {kInf, "c"}, {-kInf, "m"}, {7, "gone"}},
                      0, &n) == Status::kOk);
      REQUIRE(s->ZAdd("z", Pairs{{-1, "a"}, {2, "long member name"}}, 0, &n) == Status::kOk);
      REQUIRE(s->ZRem("z", {"gone"}, &n) == Status::kOk);
      REQUIRE(s->ZAdd("empty", Pairs{{1, "x"}}, 0, &n) == Status::kOk);
      Members popped;
      REQUIRE(s->ZPop("empty", false, 1, &popped) == Status::kOk);
      if (snapshot) {
        std::string message;
        REQUIRE(s->Rewrite(false, &message) == Status::kOk);
      }
      REQUIRE(All(*s, "z") == expect);
    }
    auto s = MakeStore(o, &clock);
    CHECK(All(*s, "z") == expect);
    bool exists = true;
    REQUIRE(s->Exists("empty", &exists) == Status::kOk);
    CHECK_FALSE(exists);
    CHECK(s->Stats().memory_used ==
          ZMem("z", {"m", "a", "b", "long member name", "c"}));
    // The reloaded set takes writes as any other.
    int64_t n = 0;
    REQUIRE(s->ZAdd("z", Pairs{{3, "d"}}, 0, &n) == Status::kOk);
    REQUIRE(s->ZRem("z", {"d"}, &n) == Status::kOk);
    CHECK(s->Stats().memory_used == SumOfEntries(*s));
  }
}

namespace {

// Stamps writes and keeps copies of what the store publishes.
class Recorder : public ephpm::Replicator {
 public:
  ephpm::Stamp NextStamp() override { return ephpm::Stamp{++clock_, 1}; }
  void Publish(const ephpm::Mutation& m) noexcept override {
    Owned o{m, std::string(m.key), std::string(m.value)};
    log.push_back(std::move(o));
  }
  struct Owned {
    ephpm::Mutation m;
    std::string key, value;
  };
  std::vector<Owned> log;

 private:
  uint64_t clock_ = 0;
};

}  // namespace

TEST_CASE("sorted set writes replicate intact, deletion included", "[store][zset][replication]") {
  ManualClock clock;
  Recorder rep;
  auto o = NoSweeper();
  o.replicator = &rep;
  auto a = MakeStore(o, &clock);
  Recorder rep_b;
  auto ob = NoSweeper();
  ob.replicator = &rep_b;
  auto b = MakeStore(ob, &clock);
  auto deliver = [&] {
    for (const auto& w : rep.log) {
      ephpm::Mutation m = w.m;
      m.key = w.key;
      m.value = w.value;
      b->ApplyReplicated(m);
    }
    rep.log.clear();
  };
  int64_t n = 0;
  REQUIRE(a->ZAdd("z", Pairs{{1, "a"}, {2, "b"}, {-kInf, "c"}}, 0, &n) == Status::kOk);
  REQUIRE(a->ZAdd("z", Pairs{{5, "a"}}, Store::kZAddIncr, &n) == Status::kOk);
  REQUIRE(a->Set("s", "a string") == Status::kOk);
  REQUIRE(a->ZStore("s", {"z"}, {2}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &n) ==
          Status::kOk);
  deliver();
  CHECK(All(*b, "z") == Members{{"c", -kInf}, {"b", 2}, {"a", 6}});
  CHECK(All(*b, "s") == Members{{"c", -kInf}, {"b", 4}, {"a", 12}});
  CHECK(b->Stats().memory_used == a->Stats().memory_used);
  CHECK(b->Stats().memory_used == SumOfEntries(*b));
  // A string replacing a sorted set on the replica.
  REQUIRE(a->Set("s", "back to a string") == Status::kOk);
  Members popped;
  REQUIRE(a->ZPop("z", false, 3, &popped) == Status::kOk);
  deliver();
  CHECK(ephpm_test::GetOr(*b, "s") == "back to a string");
  bool exists = true;
  REQUIRE(b->Exists("z", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  // The same entries, and the same tombstone for z.
  CHECK(b->Stats().memory_used == a->Stats().memory_used);
}

TEST_CASE("under allkeys-lru a zadd evicts older keys to make room", "[store][zset][memory]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  o.eviction_samples = 64;
  const std::vector<std::string> members = {"m1", "m2", "m3", "m4"};
  o.memory_limit = ZMem("z", members) + 64;
  auto s = MakeStore(o, &clock);
  for (int i = 0; i < 20; ++i) {
    if (s->Set("k" + std::to_string(i), std::string(16, 'v')) != Status::kOk) break;
    clock.Advance(1);
  }
  REQUIRE(s->Stats().keys > 0);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "m1"}, {2, "m2"}, {3, "m3"}, {4, "m4"}}, 0, &n) == Status::kOk);
  CHECK(n == 4);
  CHECK(s->Stats().memory_used <= o.memory_limit);
  CHECK(s->Stats().evicted > 0);
  CHECK(All(*s, "z") == Members{{"m1", 1}, {"m2", 2}, {"m3", 3}, {"m4", 4}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  // One that could never fit is refused without evicting the set.
  std::vector<std::string> many;
  Pairs big;
  for (int i = 0; i < 100; ++i) many.push_back("member" + std::to_string(i));
  for (const auto& m : many) big.emplace_back(1, m);
  CHECK(s->ZAdd("other", big, 0, &n) == Status::kOutOfMemory);
  CHECK(All(*s, "z").size() == 4);
}

TEST_CASE("zunionstore and zinterstore read a set's members as scoring 1", "[store][zset]") {
  ManualClock clock;
  Recorder rep;
  auto o = NoSweeper();
  o.replicator = &rep;
  auto s = MakeStore(o, &clock);
  // A set, arriving by replication (the set commands live elsewhere).
  ephpm::SetValue set;
  ephpm::SetAdd(&set, "x");
  ephpm::SetAdd(&set, "w");
  const std::string encoded = ephpm::EncodeSet(set);
  ephpm::Mutation m;
  m.kind = ephpm::Mutation::Kind::kSet;
  m.key = "set";
  m.type = ephpm::ValueType::kSet;
  m.value = encoded;
  m.stamp = ephpm::Stamp{1000, 7};
  s->ApplyReplicated(m);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{5, "x"}, {6, "y"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZStore("u", {"z", "set"}, {1, 10}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion,
                    &n) == Status::kOk);
  CHECK(All(*s, "u") == Members{{"y", 6}, {"w", 10}, {"x", 15}});
  REQUIRE(s->ZStore("i", {"set", "z"}, {}, Store::ZAggregate::kMax, Store::ZStoreOp::kInter,
                    &n) == Status::kOk);
  CHECK(All(*s, "i") == Members{{"x", 5}});
  REQUIRE(s->ZStore("d", {"set", "z"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kDiff,
                    &n) == Status::kOk);
  CHECK(All(*s, "d") == Members{{"w", 1}});
  // A set is not a sorted set for the other commands.
  Members out;
  CHECK(s->ZRange("set", Store::ZRangeSpec{}, &out) == Status::kWrongType);
}

TEST_CASE("zunion, zinter and zdiff reply what the store forms store, ordered",
          "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("a", Pairs{{1, "x"}, {2, "y"}, {3, "z"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("b", Pairs{{10, "y"}, {20, "z"}, {30, "w"}, {2, "b2"}}, 0, &n) == Status::kOk);
  REQUIRE(s->SAdd("set", {"x", "w"}, &n) == Status::kOk);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  Members out;
  REQUIRE(s->ZCombine({"a", "b", "missing"}, {2, 1, 5}, Store::ZAggregate::kSum,
                      Store::ZStoreOp::kUnion, &out) == Status::kOk);
  // A tie in score (b2 and x) is ordered by member bytes.
  CHECK(out == Members{{"b2", 2}, {"x", 2}, {"y", 14}, {"z", 26}, {"w", 30}});
  REQUIRE(s->ZCombine({"a", "b"}, {}, Store::ZAggregate::kMin, Store::ZStoreOp::kInter, &out) ==
          Status::kOk);
  CHECK(out == Members{{"y", 2}, {"z", 3}});
  REQUIRE(s->ZCombine({"b", "a"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kDiff, &out) ==
          Status::kOk);
  CHECK(out == Members{{"b2", 2}, {"w", 30}});
  // A set's members score 1.
  REQUIRE(s->ZCombine({"a", "set"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
          Status::kOk);
  CHECK(out == Members{{"w", 1}, {"x", 2}, {"y", 2}, {"z", 3}});
  REQUIRE(s->ZCombine({"set", "a"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kDiff, &out) ==
          Status::kOk);
  CHECK(out == Members{{"w", 1}});
  // inf * 0 is 0, inf + -inf is 0 (Redis); a -0 is replied as such (as
  // Redis does), but stored as 0.
  REQUIRE(s->ZCombine({"a", "b"}, {kInf, -kInf}, Store::ZAggregate::kSum,
                      Store::ZStoreOp::kUnion, &out) == Status::kOk);
  CHECK(out == Members{{"b2", -kInf}, {"w", -kInf}, {"y", 0}, {"z", 0}, {"x", kInf}});
  REQUIRE(s->ZCombine({"a"}, {-0.0}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
          Status::kOk);
  REQUIRE(out.size() == 3);
  CHECK(std::signbit(out[0].second));
  REQUIRE(s->ZStore("neg", {"a"}, {-0.0}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &n) ==
          Status::kOk);
  REQUIRE(All(*s, "neg").size() == 3);
  CHECK_FALSE(std::signbit(All(*s, "neg")[0].second));
  REQUIRE(s->Del("neg", &n) == Status::kOk);
  // A missing key is empty; another type is WRONGTYPE.
  REQUIRE(s->ZCombine({"missing"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
          Status::kOk);
  CHECK(out.empty());
  CHECK(s->ZCombine({"a", "str"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
        Status::kWrongType);
  CHECK(s->ZCombine({"missing", "str"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kInter,
                    &out) == Status::kWrongType);
  CHECK(s->ZCombine({}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
        Status::kInvalidArgument);
  CHECK(s->ZCombine({"a", "b"}, {1}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
        Status::kInvalidArgument);
  // ZStore stores exactly what ZCombine replies.
  for (auto op : {Store::ZStoreOp::kUnion, Store::ZStoreOp::kInter, Store::ZStoreOp::kDiff}) {
    REQUIRE(s->ZCombine({"b", "a", "set"}, {}, Store::ZAggregate::kMax, op, &out) ==
            Status::kOk);
    REQUIRE(s->ZStore("dst", {"b", "a", "set"}, {}, Store::ZAggregate::kMax, op, &n) ==
            Status::kOk);
    CHECK(n == static_cast<int64_t>(out.size()));
    CHECK(All(*s, "dst") == out);
  }
  REQUIRE(s->Del("dst", &n) == Status::kOk);
  CHECK(s->Stats().memory_used == used);  // the reads changed nothing
  // An expired key is absent.
  bool applied = false;
  REQUIRE(s->Expire("b", 100, &applied) == Status::kOk);
  clock.Advance(200);
  REQUIRE(s->ZCombine({"a", "b"}, {}, Store::ZAggregate::kSum, Store::ZStoreOp::kUnion, &out) ==
          Status::kOk);
  CHECK(out == Members{{"x", 1}, {"y", 2}, {"z", 3}});
}

TEST_CASE("zintercard counts the common members up to a limit", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("a", Pairs{{1, "x"}, {2, "y"}, {3, "z"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("b", Pairs{{10, "y"}, {20, "z"}, {30, "w"}}, 0, &n) == Status::kOk);
  REQUIRE(s->SAdd("set", {"x", "y", "w"}, &n) == Status::kOk);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  REQUIRE(s->ZInterCard({"a"}, 0, &n) == Status::kOk);
  CHECK(n == 3);
  REQUIRE(s->ZInterCard({"a", "b"}, 0, &n) == Status::kOk);
  CHECK(n == 2);
  REQUIRE(s->ZInterCard({"a", "b"}, 1, &n) == Status::kOk);
  CHECK(n == 1);
  REQUIRE(s->ZInterCard({"a", "b"}, 5, &n) == Status::kOk);
  CHECK(n == 2);
  REQUIRE(s->ZInterCard({"a", "b", "set"}, 0, &n) == Status::kOk);
  CHECK(n == 1);
  REQUIRE(s->ZInterCard({"a", "missing"}, 0, &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(s->ZInterCard({"a", "str"}, 0, &n) == Status::kWrongType);
  CHECK(s->ZInterCard({"missing", "str"}, 0, &n) == Status::kWrongType);
  CHECK(s->ZInterCard({}, 0, &n) == Status::kInvalidArgument);
}

TEST_CASE("zrangestore stores a range, replaces the destination, deletes it when empty",
          "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("src", Pairs{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}}, 0, &n) == Status::kOk);
  REQUIRE(s->Set("dst", "a string first") == Status::kOk);
  Store::ZRangeSpec rank;
  rank.start = 1;
  rank.stop = 2;
  REQUIRE(s->ZRangeStore("dst", "src", rank, &n) == Status::kOk);
  CHECK(n == 2);
  CHECK(All(*s, "dst") == Members{{"b", 2}, {"c", 3}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  // By score, in reverse, with an offset and a count.
  Store::ZRangeSpec score = ByScore(1, kInf, true);
  score.reverse = true;
  score.offset = 1;
  score.count = 2;
  REQUIRE(s->ZRangeStore("dst", "src", score, &n) == Status::kOk);
  CHECK(n == 2);
  CHECK(All(*s, "dst") == Members{{"b", 2}, {"c", 3}});
  Store::ZRangeSpec lex;
  lex.by = Store::ZRangeSpec::By::kLex;
  lex.lex_min = Lex(Store::ZLexBound::Kind::kExclusive, "b");
  lex.lex_max = Lex(Store::ZLexBound::Kind::kPlusInf);
  REQUIRE(s->ZRangeStore("dst", "src", lex, &n) == Status::kOk);
  CHECK(All(*s, "dst") == Members{{"c", 3}, {"d", 4}});
  // An empty range, or a missing source, deletes the destination.
  Store::ZRangeSpec none;
  none.start = 10;
  none.stop = 20;
  REQUIRE(s->ZRangeStore("dst", "src", none, &n) == Status::kOk);
  CHECK(n == 0);
  bool exists = true;
  REQUIRE(s->Exists("dst", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  REQUIRE(s->ZRangeStore("dst", "src", Store::ZRangeSpec{}, &n) == Status::kOk);
  REQUIRE(s->ZRangeStore("dst", "missing", Store::ZRangeSpec{}, &n) == Status::kOk);
  CHECK(n == 0);
  REQUIRE(s->Exists("dst", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  // The source may be the destination.
  REQUIRE(s->ZRangeStore("src", "src", rank, &n) == Status::kOk);
  CHECK(All(*s, "src") == Members{{"b", 2}, {"c", 3}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->Stats().memory_used == ZMem("src", {"b", "c"}));
  // A source of another type (a set included) is WRONGTYPE; the
  // destination stays.
  REQUIRE(s->SAdd("set", {"m"}, &n) == Status::kOk);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  CHECK(s->ZRangeStore("src", "str", Store::ZRangeSpec{}, &n) == Status::kWrongType);
  CHECK(s->ZRangeStore("src", "set", Store::ZRangeSpec{}, &n) == Status::kWrongType);
  CHECK(All(*s, "src") == Members{{"b", 2}, {"c", 3}});
  // An expired source is absent.
  bool applied = false;
  REQUIRE(s->Expire("src", 100, &applied) == Status::kOk);
  clock.Advance(200);
  REQUIRE(s->ZRangeStore("dst", "src", Store::ZRangeSpec{}, &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("zrangestore refused for memory changes nothing", "[store][zset][memory]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;
  o.memory_limit = ZMem("z", {"a", "b"}) + 10;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("z", Pairs{{1, "a"}, {2, "b"}}, 0, &n) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  CHECK(s->ZRangeStore("dst", "z", Store::ZRangeSpec{}, &n) == Status::kOutOfMemory);
  CHECK(n == 0);
  CHECK(s->Stats().memory_used == used);
  CHECK(s->Stats().keys == 1);
  // Replacing the source with a part of itself needs no more.
  Store::ZRangeSpec first;
  first.stop = 0;
  REQUIRE(s->ZRangeStore("z", "z", first, &n) == Status::kOk);
  CHECK(All(*s, "z") == Members{{"a", 1}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("zrangestore replicates the stored set and the deletion", "[store][zset][replication]") {
  ManualClock clock;
  Recorder rep;
  auto o = NoSweeper();
  o.replicator = &rep;
  auto a = MakeStore(o, &clock);
  auto b = MakeStore(NoSweeper(), &clock);
  auto deliver = [&] {
    for (const auto& w : rep.log) {
      ephpm::Mutation m = w.m;
      m.key = w.key;
      m.value = w.value;
      b->ApplyReplicated(m);
    }
    rep.log.clear();
  };
  int64_t n = 0;
  REQUIRE(a->ZAdd("src", Pairs{{1, "a"}, {2, "b"}, {-kInf, "c"}}, 0, &n) == Status::kOk);
  REQUIRE(a->Set("dst", "a string") == Status::kOk);
  Store::ZRangeSpec two;
  two.stop = 1;
  REQUIRE(a->ZRangeStore("dst", "src", two, &n) == Status::kOk);
  deliver();
  CHECK(All(*b, "dst") == Members{{"c", -kInf}, {"a", 1}});
  Store::ZRangeSpec none;
  none.start = 5;
  REQUIRE(a->ZRangeStore("dst", "src", none, &n) == Status::kOk);
  deliver();
  bool exists = true;
  REQUIRE(b->Exists("dst", &exists) == Status::kOk);
  CHECK_FALSE(exists);
  CHECK(All(*b, "src") == All(*a, "src"));
}

TEST_CASE("zmpop pops from the first key that has members", "[store][zset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  REQUIRE(s->ZAdd("a", Pairs{{1, "x"}, {2, "y"}, {3, "z"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("b", Pairs{{10, "p"}}, 0, &n) == Status::kOk);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  Members out;
  size_t which = 9;
  REQUIRE(s->ZMPop({"missing", "a", "b"}, false, 2, false, &which, &out) == Status::kOk);
  CHECK(which == 1);
  CHECK(out == Members{{"x", 1}, {"y", 2}});
  REQUIRE(s->ZMPop({"missing", "a", "b"}, true, 5, false, &which, &out) == Status::kOk);
  CHECK(which == 1);
  CHECK(out == Members{{"z", 3}});
  bool exists = true;
  REQUIRE(s->Exists("a", &exists) == Status::kOk);
  CHECK_FALSE(exists);  // the last member took the key
  REQUIRE(s->ZMPop({"a", "b"}, true, 1, false, &which, &out) == Status::kOk);
  CHECK(which == 1);
  CHECK(out == Members{{"p", 10}});
  // Nothing anywhere: an empty result.
  REQUIRE(s->ZMPop({"a", "b"}, false, 1, false, &which, &out) == Status::kOk);
  CHECK(out.empty());
  // Another type met first is WRONGTYPE (and nothing is popped), unless
  // skipped, as a blocked client does.
  REQUIRE(s->ZAdd("b", Pairs{{4, "q"}}, 0, &n) == Status::kOk);
  CHECK(s->ZMPop({"missing", "str", "b"}, false, 1, false, &which, &out) == Status::kWrongType);
  CHECK(All(*s, "b") == Members{{"q", 4}});
  REQUIRE(s->ZMPop({"str", "b"}, false, 1, true, &which, &out) == Status::kOk);
  CHECK(which == 1);
  CHECK(out == Members{{"q", 4}});
  // A key after the one popped from is not looked at.
  REQUIRE(s->ZAdd("b", Pairs{{4, "q"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZMPop({"b", "str"}, false, 1, false, &which, &out) == Status::kOk);
  CHECK(out == Members{{"q", 4}});
  // An expired key is empty.
  REQUIRE(s->ZAdd("e", Pairs{{1, "gone"}}, 0, &n) == Status::kOk);
  REQUIRE(s->ZAdd("f", Pairs{{2, "kept"}}, 0, &n) == Status::kOk);
  bool applied = false;
  REQUIRE(s->Expire("e", 100, &applied) == Status::kOk);
  clock.Advance(200);
  REQUIRE(s->ZMPop({"e", "f"}, false, 1, false, &which, &out) == Status::kOk);
  CHECK(which == 1);
  CHECK(out == Members{{"kept", 2}});
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->ZMPop({}, false, 1, false, &which, &out) == Status::kInvalidArgument);
  CHECK(s->ZMPop({"f"}, false, -1, false, &which, &out) == Status::kInvalidArgument);
}
