// Atomic sections (Store::Atomically) and WATCH's change counters: a
// read-modify-write inside a section is one step for every other thread, a
// section's waiters wake once it ends, eviction never runs inside one; every
// kind of change moves a watched key's counter, and nothing else does.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "ephpm/clock.h"
#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::Store;
using ephpm::StoreOptions;
using ephpm::WaitResult;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

int64_t IntOf(Store& s, const std::string& key) {
  const std::string v = GetOr(s, key);
  return v == "<missing>" ? 0 : std::stoll(v);
}

}  // namespace

TEST_CASE("Atomically: a read-modify-write inside a section loses no update to plain increments",
          "[sections]") {
  auto store = MakeStore(NoSweeper(), ephpm::SystemClock());
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        if (t % 2 == 0) {
          // GET then SET: without the section two threads would both read n
          // and both write n + 1.
          const Status st = store->Atomically({"n"}, false, [&] {
            const int64_t v = IntOf(*store, "n");
            if (store->Set("n", std::to_string(v + 1)) != Status::kOk) failures++;
          });
          if (st != Status::kOk) failures++;
        } else {
          int64_t r = 0;
          if (store->IncrBy("n", 1, &r) != Status::kOk) failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK(IntOf(*store, "n") == kThreads * kRounds);
}

TEST_CASE("Atomically: a transfer between two keys is never seen half done", "[sections]") {
  StoreOptions o = NoSweeper();
  o.shards = 64;
  auto store = MakeStore(o, o.clock != nullptr ? o.clock : ephpm::SystemClock());
  // Two keys in different shards, so the section really takes two locks.
  const std::string b = ephpm_test::KeyOutside(*store, "b", {"a"});
  REQUIRE(store->Set("a", "1000") == Status::kOk);
  REQUIRE(store->Set(b, "0") == Status::kOk);
  std::atomic<bool> stop{false};
  std::atomic<int> bad_sums{0}, failures{0};
  std::thread mover([&] {
    for (int i = 0; i < 3000; ++i) {
      const Status st = store->Atomically({b, "a"}, false, [&] {
        int64_t r = 0;
        if (store->IncrBy("a", -1, &r) != Status::kOk) failures++;
        if (store->IncrBy(b, 1, &r) != Status::kOk) failures++;
      });
      if (st != Status::kOk) failures++;
    }
    stop = true;
  });
  std::thread reader([&] {
    while (!stop) {
      int64_t sum = 0;
      store->Atomically({"a", b}, false, [&] { sum = IntOf(*store, "a") + IntOf(*store, b); });
      if (sum != 1000) bad_sums++;
    }
  });
  mover.join();
  reader.join();
  CHECK(failures == 0);
  CHECK(bad_sums == 0);
  CHECK(IntOf(*store, "a") == 1000 - 3000);
  CHECK(IntOf(*store, b) == 3000);
}

TEST_CASE("Atomically: all shards, nesting refused, long keys refused", "[sections]") {
  auto store = MakeStore(NoSweeper(), ephpm::SystemClock());
  REQUIRE(store->Set("x", "1") == Status::kOk);
  bool ran = false;
  CHECK(store->Atomically({}, true, [&] {
    ran = true;
    CHECK(store->DbSize() == 1);
    std::vector<std::string> keys;
    CHECK(store->Keys("*", &keys) == Status::kOk);
    CHECK(keys.size() == 1);
    CHECK(store->Flush() == Status::kOk);
    bool inner = false;
    CHECK(store->Atomically({"x"}, false, [&] { inner = true; }) == Status::kInvalidArgument);
    CHECK_FALSE(inner);
  }) == Status::kOk);
  CHECK(ran);
  CHECK(store->DbSize() == 0);
  ran = false;
  CHECK(store->Atomically({std::string(ephpm::kMaxKeySize + 1, 'k')}, false, [&] { ran = true; }) ==
        Status::kInvalidArgument);
  CHECK_FALSE(ran);
  // An exception out of fn ends the section: the shard is usable after it.
  CHECK_THROWS(store->Atomically({"x"}, false, [&] { throw std::runtime_error("out"); }));
  CHECK(store->Set("x", "2") == Status::kOk);
  CHECK(store->Atomically({"x"}, false, [] {}) == Status::kOk);
}

TEST_CASE("Atomically: hash tags put a key in the shard of its tag; the section says what it holds",
          "[sections]") {
  StoreOptions o = NoSweeper();
  o.shards = 64;
  auto store = MakeStore(o, ephpm::SystemClock());
  // A key outside the section: some key of another shard than "t".
  std::string outside;
  store->Atomically({"t"}, false, [&] {
    CHECK(store->HeldBySection("t"));
    CHECK(store->HeldBySection("{t}x"));
    CHECK(store->HeldBySection("a{t}b{c}"));  // the first tag counts
    for (int i = 0; outside.empty() && i < 1000; ++i) {
      const std::string k = "k" + std::to_string(i);
      if (!store->HeldBySection(k)) outside = k;
    }
    // A tag of a key outside is outside too.
    CHECK_FALSE(store->HeldBySection("{" + outside + "}"));
    CHECK_FALSE(store->HeldBySection("t{" + outside + "}"));
    CHECK(store->Set("{t}x", "v") == Status::kOk);  // no lock taken: held already
  });
  REQUIRE_FALSE(outside.empty());
  CHECK_FALSE(store->HeldBySection("t"));  // no section any more
  CHECK(GetOr(*store, "{t}x") == "v");
}

TEST_CASE("Atomically: a waiter wakes once the section has ended, and sees its last state",
          "[sections]") {
  auto store = MakeStore(NoSweeper(), ephpm::SystemClock());
  std::atomic<bool> ready{false};
  WaitResult r;
  Status wst = Status::kInvalidArgument;
  std::thread waiter([&] {
    ready = true;
    wst = store->WaitForChange("k", 0, 10000, &r);
  });
  while (!ready) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(store->Atomically({"k"}, false, [&] {
    store->Set("k", "first");
    store->Set("k", "last");
  }) == Status::kOk);
  waiter.join();
  CHECK(wst == Status::kOk);
  CHECK(r.changed);
  CHECK(r.value == "last");
}

TEST_CASE("Atomically: a write that needs eviction is refused for memory, nothing evicted",
          "[sections]") {
  StoreOptions o = NoSweeper();
  o.shards = 4;
  o.memory_limit = 64 * 1024;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto store = MakeStore(o, o.clock != nullptr ? o.clock : ephpm::SystemClock());
  int n = 0;
  while (store->Stats().memory_used + 2000 < o.memory_limit) {
    REQUIRE(store->Set("fill" + std::to_string(n++), std::string(1000, 'f')) == Status::kOk);
  }
  const auto before = store->Stats();
  Status inside = Status::kOk;
  REQUIRE(store->Atomically({"big"}, false, [&] {
    inside = store->Set("big", std::string(8000, 'b'));
  }) == Status::kOk);
  CHECK(inside == Status::kOutOfMemory);
  CHECK(store->Stats().keys == before.keys);
  CHECK(store->Stats().evicted == 0);
  // Outside a section the same write evicts and succeeds.
  CHECK(store->Set("big", std::string(8000, 'b')) == Status::kOk);
  CHECK(store->Stats().evicted > 0);
}

TEST_CASE("Watch: every kind of change moves the counter, reads and other keys do not",
          "[sections][watch]") {
  ManualClock clock(1000000);
  StoreOptions o = NoSweeper();
  o.clock = &clock;
  auto store = MakeStore(o, o.clock != nullptr ? o.clock : ephpm::SystemClock());
  auto changed = [&](const std::string& key, uint64_t t) {
    bool c = false;
    REQUIRE(store->WatchedChanged(key, t, &c) == Status::kOk);
    return c;
  };
  uint64_t t = 0;
  int64_t n = 0;
  bool applied = false;

  SECTION("reads and writes to other keys") {
    REQUIRE(store->Set("k", "v") == Status::kOk);
    REQUIRE(store->Watch("k", &t) == Status::kOk);
    std::string v;
    CHECK(store->Get("k", &v) == Status::kOk);
    CHECK(store->Set("other", "x") == Status::kOk);
    CHECK_FALSE(changed("k", t));
    CHECK(store->Set("k", "v") == Status::kOk);  // the same value still counts, as in Redis
    CHECK(changed("k", t));
    store->Unwatch("k");
  }
  SECTION("an absent key created and deleted again") {
    REQUIRE(store->Watch("gone", &t) == Status::kOk);
    CHECK_FALSE(changed("gone", t));
    REQUIRE(store->Set("gone", "v") == Status::kOk);
    REQUIRE(store->Del("gone", &n) == Status::kOk);
    CHECK(changed("gone", t));
    store->Unwatch("gone");
  }
  SECTION("a TTL change, an increment, a hash field, a rename onto it") {
    for (int kind = 0; kind < 4; ++kind) {
      REQUIRE(store->Set("k", "1") == Status::kOk);
      REQUIRE(store->Set("src", "s") == Status::kOk);
      REQUIRE(store->Watch("k", &t) == Status::kOk);
      switch (kind) {
        case 0: REQUIRE(store->Expire("k", 5000, &applied) == Status::kOk); break;
        case 1: REQUIRE(store->IncrBy("k", 1, &n) == Status::kOk); break;
        case 2: REQUIRE(store->Rename("src", "k", false, &applied) == Status::kOk); break;
        case 3: REQUIRE(store->Rename("k", "moved", false, &applied) == Status::kOk); break;
      }
      CHECK(changed("k", t));
      store->Unwatch("k");
    }
  }
  SECTION("expiry after WATCH counts, removed or not; a key expired before WATCH does not") {
    REQUIRE(store->Set("e", "v", 100) == Status::kOk);
    REQUIRE(store->Watch("e", &t) == Status::kOk);
    clock.Advance(100);
    CHECK(changed("e", t));  // expired, not yet removed
    CHECK(store->SweepExpired(100) == 1);
    CHECK(changed("e", t));
    store->Unwatch("e");

    REQUIRE(store->Set("stale", "v", 100) == Status::kOk);
    clock.Advance(100);
    REQUIRE(store->Watch("stale", &t) == Status::kOk);
    store->SweepExpired(100);
    std::string v;
    CHECK(store->Get("stale", &v) == Status::kNotFound);
    CHECK_FALSE(changed("stale", t));
    store->Unwatch("stale");
  }
  SECTION("a flush touches watched keys that exist, not absent ones") {
    REQUIRE(store->Set("here", "v") == Status::kOk);
    uint64_t t_here = 0, t_absent = 0;
    REQUIRE(store->Watch("here", &t_here) == Status::kOk);
    REQUIRE(store->Watch("absent", &t_absent) == Status::kOk);
    REQUIRE(store->Flush() == Status::kOk);
    CHECK(changed("here", t_here));
    CHECK_FALSE(changed("absent", t_absent));
    store->Unwatch("here");
    store->Unwatch("absent");
  }
  SECTION("two watchers; an unwatched key reports changed") {
    uint64_t t1 = 0, t2 = 0;
    REQUIRE(store->Watch("k", &t1) == Status::kOk);
    REQUIRE(store->Watch("k", &t2) == Status::kOk);
    store->Unwatch("k");
    CHECK_FALSE(changed("k", t2));  // the other watcher still has it
    REQUIRE(store->Set("k", "v") == Status::kOk);
    CHECK(changed("k", t2));
    store->Unwatch("k");
    CHECK(changed("never", 0));
  }
}

TEST_CASE("Watch: eviction of a watched key counts as a change", "[sections][watch]") {
  StoreOptions o = NoSweeper();
  o.shards = 1;
  o.memory_limit = 32 * 1024;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto store = MakeStore(o, o.clock != nullptr ? o.clock : ephpm::SystemClock());
  REQUIRE(store->Set("victim", std::string(1000, 'v')) == Status::kOk);
  uint64_t t = 0;
  REQUIRE(store->Watch("victim", &t) == Status::kOk);
  bool c = false;
  ephpm::EntryInfo info;  // Inspect, not Get: a read would make it recently used
  for (int i = 0; i < 2000 && store->Inspect("victim", &info) == Status::kOk; ++i) {
    REQUIRE(store->WatchedChanged("victim", t, &c) == Status::kOk);
    REQUIRE_FALSE(c);  // other keys' writes and evictions do not count
    REQUIRE(store->Set("f" + std::to_string(i), std::string(1000, 'f')) == Status::kOk);
  }
  REQUIRE(store->Inspect("victim", &info) == Status::kNotFound);
  REQUIRE(store->WatchedChanged("victim", t, &c) == Status::kOk);
  CHECK(c);
  store->Unwatch("victim");
}
