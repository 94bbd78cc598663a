// core/hit_counters.h: per-thread hit and miss counts that lose nothing,
// whichever threads count and however many come and go.

#include "hit_counters.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ephpm {
namespace {

// Runs `threads` threads that are all alive at once (so that more of them
// than there are owned slots share the last one), each calling count().
template <typename Count>
void RunTogether(size_t threads, Count count) {
  std::mutex mu;
  std::condition_variable cv;
  size_t arrived = 0;
  std::vector<std::thread> pool;
  for (size_t i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      count(i);
      std::unique_lock<std::mutex> l(mu);
      if (++arrived == threads) cv.notify_all();
      cv.wait(l, [&] { return arrived == threads; });
    });
  }
  for (auto& t : pool) t.join();
}

TEST_CASE("HitCounters sum every thread's counts, also past the owned slots") {
  HitCounters c;
  const size_t before = counter_slot::OwnedCount();
  const size_t threads = counter_slot::kOwned + 36;  // some share the last slot
  RunTogether(threads, [&](size_t i) {
    for (size_t k = 0; k < 1000 + i; ++k) c.Hit();
    for (size_t k = 0; k < i; ++k) c.Miss();
  });
  uint64_t want_hits = 0, want_misses = 0;
  for (size_t i = 0; i < threads; ++i) {
    want_hits += 1000 + i;
    want_misses += i;
  }
  CHECK(c.hits() == want_hits);
  CHECK(c.misses() == want_misses);
  // Every exited thread gave its number back.
  CHECK(counter_slot::OwnedCount() == before);
}

TEST_CASE("HitCounters keep a slot's count when its number passes to another thread") {
  HitCounters c;
  for (int round = 1; round <= 50; ++round) {
    std::thread([&] {
      for (int k = 0; k < round; ++k) c.Hit();
      c.Miss();
    }).join();
  }
  CHECK(c.hits() == 50 * 51 / 2);
  CHECK(c.misses() == 50);
}

TEST_CASE("HitCounters read while threads count see a total that only grows") {
  HitCounters c;
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) c.Hit();
    });
  }
  uint64_t last = 0;
  bool monotonic = true;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t now = c.hits();
    if (now < last) monotonic = false;
    last = now;
  }
  stop = true;
  for (auto& t : pool) t.join();
  CHECK(monotonic);
  CHECK(c.hits() >= last);
}

}  // namespace
}  // namespace ephpm
