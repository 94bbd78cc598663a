// The fault test's judges on hand-made histories: each violation they must
// find, each legal history they must pass, and the overlap sweep against a
// brute-force search on random histories.

#include "checker.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <utility>

using namespace ephpm_fault;

namespace {

constexpr int64_t kMs = 1000;            // microseconds
constexpr int64_t kMargin = 10 * kMs;    // the TTL safety margin in these tests

// A granted cycle: sent at `sent` ms, granted at `granted` ms, released
// (DELIFEQ sent) at `released` ms with `outcome`, answered 1 ms later.
LockCycle Granted(const std::string& key, int64_t sent, int64_t granted, int64_t ttl,
                  int64_t released, Release outcome = Release::kReleased,
                  const std::string& node = "n1") {
  LockCycle c;
  c.key = key;
  c.token = key + "@" + std::to_string(sent);
  c.node = node;
  c.ttl_ms = ttl;
  c.sent_us = sent * kMs;
  c.replied_us = granted * kMs;
  c.acquire = Acquire::kGranted;
  c.release_sent_us = released * kMs;
  c.release_replied_us = released * kMs + kMs;
  c.release = outcome;
  return c;
}

LockCycle NotGranted(const std::string& key, int64_t sent, int64_t replied, Acquire a) {
  LockCycle c;
  c.key = key;
  c.ttl_ms = 10000;
  c.sent_us = sent * kMs;
  c.replied_us = replied * kMs;
  c.acquire = a;
  return c;
}

std::vector<Overlap> Overlaps(const std::vector<LockCycle>& cycles) {
  return FindOverlaps(HoldsOf(cycles, kMargin));
}

}  // namespace

TEST_CASE("holds one after another on a key do not overlap", "[fault][checker]") {
  const std::vector<LockCycle> cycles = {
      Granted("k", 0, 1, 1000, 100),
      Granted("k", 99, 101, 1000, 200),  // granted after the first was released
      Granted("k", 150, 200, 1000, 300), // starts exactly where the second ends
  };
  CHECK(Overlaps(cycles).empty());
  CHECK(Tally(cycles, kMargin).holds == 3);
}

TEST_CASE("two holders of one key at once are an overlap, with both intervals",
          "[fault][checker]") {
  const std::vector<LockCycle> cycles = {
      Granted("k", 0, 1, 1000, 300, Release::kReleased, "n3"),
      Granted("k", 150, 200, 1000, 400, Release::kReleased, "n1"),
  };
  const auto o = Overlaps(cycles);
  REQUIRE(o.size() == 1);
  CHECK(o[0].a.cycle->node == "n3");
  CHECK(o[0].b.cycle->node == "n1");
  CHECK(o[0].a.start_us == 1 * kMs);
  CHECK(o[0].a.end_us == 300 * kMs);
  CHECK(o[0].b.start_us == 200 * kMs);
  CHECK(o[0].from_us == 200 * kMs);
  CHECK(o[0].to_us == 300 * kMs);
  const DoubleHolderWindow w = WindowOf(o);
  CHECK(w.total_us == 100 * kMs);
  CHECK(w.longest_us == 100 * kMs);
  CHECK(w.longest_key == "k");
}

TEST_CASE("holds on different keys never overlap", "[fault][checker]") {
  CHECK(Overlaps({Granted("a", 0, 1, 1000, 500), Granted("b", 0, 1, 1000, 500)}).empty());
}

TEST_CASE("a hold kept past its TTL ends at the TTL less the margin", "[fault][checker]") {
  // Sent at 0 with a 100 ms TTL and released only at 300: it held until 90.
  const LockCycle late = Granted("k", 0, 2, 100, 300, Release::kNotHeld);
  SECTION("a grant after the TTL is legal") {
    CHECK(Overlaps({late, Granted("k", 100, 150, 1000, 400)}).empty());
  }
  SECTION("a grant inside the margin is given the benefit of the doubt") {
    CHECK(Overlaps({late, Granted("k", 90, 95, 1000, 400)}).empty());
  }
  SECTION("a grant before the TTL less the margin overlaps") {
    const auto o = Overlaps({late, Granted("k", 50, 80, 1000, 400)});
    REQUIRE(o.size() == 1);
    CHECK(o[0].from_us == 80 * kMs);
    CHECK(o[0].to_us == 90 * kMs);
  }
  const LockTally t = Tally({late}, kMargin);
  CHECK(t.held_past_ttl == 1);
  CHECK(t.not_held == 1);
  // Its DELIFEQ answered 0 after the TTL: the lock expired, nothing vanished.
  CHECK(FindVanished({late}, kMargin).empty());
}

TEST_CASE("the TTL counts from the request being sent, not from the grant",
          "[fault][checker]") {
  // Sent at 0, granted only at 80 (a slow owner), TTL 100: held until 90,
  // since the owner may have started the TTL at once.
  const auto holds = HoldsOf({Granted("k", 0, 80, 100, 500)}, kMargin);
  REQUIRE(holds.size() == 1);
  CHECK(holds[0].end_us == 90 * kMs);
}

TEST_CASE("a grant that arrives after its TTL is no hold at all", "[fault][checker]") {
  const std::vector<LockCycle> cycles = {Granted("k", 0, 95, 100, 500),
                                         Granted("k", 96, 97, 1000, 500)};
  CHECK(HoldsOf(cycles, kMargin).size() == 1);
  CHECK(Overlaps(cycles).empty());
  const LockTally t = Tally(cycles, kMargin);
  CHECK(t.granted == 2);
  CHECK(t.holds == 1);
  CHECK(t.empty_holds == 1);
}

TEST_CASE("a granted cycle never released holds until its TTL", "[fault][checker]") {
  LockCycle c = Granted("k", 0, 1, 100, 0, Release::kNone);
  c.release_sent_us = 0;
  const auto holds = HoldsOf({c}, kMargin);
  REQUIRE(holds.size() == 1);
  CHECK(holds[0].end_us == 90 * kMs);
  CHECK(Overlaps({c, Granted("k", 20, 50, 1000, 200)}).size() == 1);
}

TEST_CASE("unknown, refused and unexpected outcomes are counted, never held",
          "[fault][checker]") {
  const std::vector<LockCycle> cycles = {
      Granted("k", 0, 1, 1000, 500),
      NotGranted("k", 10, 20, Acquire::kUnknown),     // -CLUSTERDOWN: may have landed
      NotGranted("k", 30, 3030, Acquire::kUnknown),   // a timeout
      NotGranted("k", 40, 41, Acquire::kRefused),
      NotGranted("k", 50, 51, Acquire::kUnexpected),
  };
  CHECK(HoldsOf(cycles, kMargin).size() == 1);
  CHECK(Overlaps(cycles).empty());
  const LockTally t = Tally(cycles, kMargin);
  CHECK(t.cycles == 5);
  CHECK(t.granted == 1);
  CHECK(t.unknown == 2);
  CHECK(t.refused == 1);
  CHECK(t.unexpected == 1);
}

TEST_CASE("an unknown release ends the hold when it is sent", "[fault][checker]") {
  // The client gives the lock up when it sends the release, whatever came
  // back; a grant after that is legal, one before it is not.
  const LockCycle a = Granted("k", 0, 1, 1000, 100, Release::kUnknown);
  CHECK(Overlaps({a, Granted("k", 100, 101, 1000, 200)}).empty());
  CHECK(Overlaps({a, Granted("k", 50, 99, 1000, 200)}).size() == 1);
  CHECK(FindVanished({a}, kMargin).empty());
  CHECK(Tally({a}, kMargin).release_unknown == 1);
}

TEST_CASE("a release answered 0 before the TTL means the lock vanished", "[fault][checker]") {
  const std::vector<LockCycle> cycles = {Granted("k", 0, 1, 1000, 300, Release::kNotHeld),
                                         Granted("j", 0, 1, 1000, 300)};
  const auto v = FindVanished(cycles, kMargin);
  REQUIRE(v.size() == 1);
  CHECK(v[0]->key == "k");
  // Answered inside the margin: not counted.
  CHECK(FindVanished({Granted("k", 0, 1, 1000, 990, Release::kNotHeld)}, kMargin).empty());
}

TEST_CASE("three holders at once: every pair, and one window", "[fault][checker]") {
  const std::vector<LockCycle> cycles = {
      Granted("k", 0, 0, 1000, 300),
      Granted("k", 0, 100, 1000, 200),
      Granted("k", 0, 150, 1000, 400),
      Granted("k", 0, 600, 1000, 700),  // alone again
      Granted("j", 0, 0, 1000, 50),
      Granted("j", 0, 10, 1000, 20),
  };
  const auto o = Overlaps(cycles);
  CHECK(o.size() == 4);  // (1,2) (1,3) (2,3) on k, one on j
  const DoubleHolderWindow w = WindowOf(o);
  CHECK(w.longest_key == "k");
  CHECK(w.longest_us == 200 * kMs);  // [100, 300)
  CHECK(w.total_us == 200 * kMs + 10 * kMs);
  CHECK(w.first_us == 10 * kMs);
  CHECK(w.last_us == 300 * kMs);
}

TEST_CASE("the overlap sweep finds exactly the pairs a brute-force search finds",
          "[fault][checker]") {
  std::mt19937_64 rng(20261201);
  for (int round = 0; round < 200; ++round) {
    std::vector<LockCycle> cycles;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + std::to_string(rng() % 3);
      const int64_t sent = static_cast<int64_t>(rng() % 1000);
      const int64_t granted = sent + static_cast<int64_t>(rng() % 50);
      const int64_t ttl = 20 + static_cast<int64_t>(rng() % 200);
      const int64_t released = granted + static_cast<int64_t>(rng() % 300);
      cycles.push_back(Granted(key, sent, granted, ttl, released));
      cycles.back().token = "t" + std::to_string(i);
    }
    const auto holds = HoldsOf(cycles, kMargin);
    std::set<std::pair<std::string, std::string>> brute, swept;
    for (size_t i = 0; i < holds.size(); ++i) {
      for (size_t j = i + 1; j < holds.size(); ++j) {
        const Hold& x = holds[i];
        const Hold& y = holds[j];
        if (x.cycle->key == y.cycle->key && x.start_us < y.end_us && y.start_us < x.end_us) {
          brute.insert(std::minmax(x.cycle->token, y.cycle->token));
        }
      }
    }
    for (const Overlap& o : FindOverlaps(holds)) {
      CHECK(o.from_us < o.to_us);
      CHECK(o.a.cycle->key == o.b.cycle->key);
      swept.insert(std::minmax(o.a.cycle->token, o.b.cycle->token));
    }
    REQUIRE(swept == brute);
  }
}

TEST_CASE("a counter with every acknowledged increment is clean", "[fault][checker]") {
  CounterHistory h;
  h.acked = 5;
  h.unknown = 2;
  h.replies = {1, 2, 4, 5, 6};  // 3 went to an unknown increment that landed
  for (int64_t seen : {5, 6, 7}) {
    const CounterVerdict v = JudgeCounter(h, {{"n1", seen}, {"n2", seen}, {"n3", seen}});
    CHECK_FALSE(v.Violated());
    CHECK(v.lost == 0);
    CHECK(v.phantom == 0);
  }
}

TEST_CASE("fewer than acknowledged is a lost increment", "[fault][checker]") {
  CounterHistory h;
  h.acked = 5;
  h.unknown = 3;  // unknown increments never excuse a missing acknowledged one
  h.replies = {1, 2, 3, 4, 5};
  const CounterVerdict v = JudgeCounter(h, {{"n1", 4}, {"n2", 4}, {"n3", 4}});
  CHECK(v.Violated());
  CHECK(v.lost == 1);
  CHECK(v.agree);
}

TEST_CASE("more than acknowledged plus unknown is a phantom", "[fault][checker]") {
  CounterHistory h;
  h.acked = 5;
  h.unknown = 1;
  h.replies = {1, 2, 3, 4, 5};
  const CounterVerdict v = JudgeCounter(h, {{"n1", 7}, {"n2", 7}});
  CHECK(v.Violated());
  CHECK(v.phantom == 1);
  CHECK(v.lost == 0);
}

TEST_CASE("nodes that disagree or cannot be read are violations", "[fault][checker]") {
  CounterHistory h;
  h.acked = 3;
  h.replies = {1, 2, 3};
  const CounterVerdict split = JudgeCounter(h, {{"n1", 3}, {"n2", 2}, {"n3", 3}});
  CHECK_FALSE(split.agree);
  CHECK(split.lost == 1);  // judged by the lowest node
  CHECK(split.Violated());
  const CounterVerdict unread = JudgeCounter(h, {{"n1", 3}, {"n2", std::nullopt}});
  CHECK(unread.unreadable);
  CHECK_FALSE(unread.agree);
  CHECK(unread.lost == 0);
  CHECK(unread.Violated());
}

TEST_CASE("a value acknowledged twice means the counter went back", "[fault][checker]") {
  // The final value is right (4), but two increments were told "3": one was
  // applied to a copy missing the other.  (Here an unknown one landed too.)
  CounterHistory h;
  h.acked = 4;
  h.unknown = 1;
  h.replies = {1, 2, 3, 3};
  const CounterVerdict v = JudgeCounter(h, {{"n1", 4}, {"n2", 4}});
  CHECK(v.lost == 0);
  REQUIRE(v.duplicate_replies == std::vector<int64_t>{3});
  CHECK(v.Violated());
}

TEST_CASE("an acknowledged value no history can reach is flagged", "[fault][checker]") {
  CounterHistory h;
  h.acked = 2;
  h.replies = {1, 9};
  const CounterVerdict v = JudgeCounter(h, {{"n1", 2}});
  CHECK(v.impossible_replies == std::vector<int64_t>{9});
  CHECK(v.Violated());
}
