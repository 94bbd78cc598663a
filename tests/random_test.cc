// core/random.h: the generator behind RANDOMKEY, SPOP, SRANDMEMBER and
// ZRANDMEMBER.

#include "random.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

namespace ephpm {
namespace {

TEST_CASE("SplitMix64 gives the published sequence for seed 0") {
  // The reference outputs of splitmix64.c (Vigna) seeded with 0.
  SplitMix64 g(0);
  CHECK(g() == 0xe220a8397b1dcdafu);
  CHECK(g() == 0x6e789e6aa1b965f4u);
  CHECK(g() == 0x06c45d188009454fu);
}

TEST_CASE("RandomBelow stays below n and reaches every value") {
  CHECK(RandomBelow(1) == 0);
  for (uint64_t n : {2u, 3u, 7u, 64u, 1000u}) {
    std::vector<int> seen(n, 0);
    for (int i = 0; i < 200000; ++i) {
      const uint64_t v = RandomBelow(n);
      REQUIRE(v < n);
      ++seen[v];
    }
    // 200 000 draws over at most 1000 values: every value expected at least
    // 200 times; none missing and none more than twice its share.
    for (uint64_t v = 0; v < n; ++v) {
      INFO("n=" << n << " v=" << v);
      CHECK(seen[v] > 0);
      CHECK(seen[v] < 2 * 200000 / static_cast<int>(n));
    }
  }
  // The full 64-bit range has no bias towards small values either.
  int high = 0;
  for (int i = 0; i < 10000; ++i) high += RandomBelow(UINT64_MAX) >= UINT64_MAX / 2 ? 1 : 0;
  CHECK(high > 4000);
  CHECK(high < 6000);
}

TEST_CASE("Threads get differently seeded generators") {
  std::vector<uint64_t> first(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < first.size(); ++i) {
    threads.emplace_back([&first, i] { first[i] = ThreadRandom()(); });
  }
  for (auto& t : threads) t.join();
  CHECK(std::set<uint64_t>(first.begin(), first.end()).size() == first.size());
}

}  // namespace
}  // namespace ephpm
