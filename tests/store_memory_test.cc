// Memory accounting, the memory limit and eviction.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

// The sum of every live entry's accounted size, read entry by entry.
uint64_t SumOfEntries(Store& s) {
  std::vector<std::string> keys;
  REQUIRE(s.Keys("*", &keys) == Status::kOk);
  uint64_t sum = 0;
  for (const auto& k : keys) {
    ephpm::EntryInfo info;
    REQUIRE(s.Inspect(k, &info) == Status::kOk);
    sum += info.mem_size;
  }
  return sum;
}

// The accounted size of one entry of this shape, measured on a fresh store.
uint64_t EntrySize(size_t key_len, size_t value_len, bool ttl) {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  REQUIRE(s->Set(std::string(key_len, 'k'), std::string(value_len, 'v'), ttl ? 1000 : 0) ==
          Status::kOk);
  return s->Stats().memory_used;
}

}  // namespace

TEST_CASE("the memory total is the exact sum of the entries", "[store][memory]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 100;
  auto s = MakeStore(o, &clock);
  CHECK(s->Stats().memory_used == 0);
  bool b = false;
  int64_t n = 0;
  for (int i = 0; i < 300; ++i) {
    const std::string k = "k" + std::to_string(i);
    REQUIRE(s->Set(k, std::string(i * 3, 'x'), i % 2 ? 5000 : 0) == Status::kOk);
    if (i % 5 == 0) REQUIRE(s->Expire(k, 100 + i, &b) == Status::kOk);
    if (i % 7 == 0) REQUIRE(s->Persist(k, &b) == Status::kOk);
    if (i % 11 == 0) REQUIRE(s->Set(k, std::to_string(i)) == Status::kOk);
    if (i % 13 == 0) {
      REQUIRE(s->Set(k, "12", 3000) == Status::kOk);
      REQUIRE(s->IncrBy(k, 1, &n) == Status::kOk);
    }
    if (i % 17 == 0) REQUIRE(s->Rename(k, "r" + k, false, &b) == Status::kOk);
    if (i % 19 == 0) REQUIRE(s->Del(k, &n) == Status::kOk);
    CHECK(s->Stats().memory_used == SumOfEntries(*s));
  }
  clock.Advance(400);  // some expired, not yet reaped
  s->SweepExpired(1000);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  std::vector<std::string> keys;
  REQUIRE(s->Keys("*", &keys) == Status::kOk);
  for (const auto& k : keys) REQUIRE(s->Del(k, &n) == Status::kOk);
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("an entry's size counts key, value and TTL index", "[store][memory]") {
  CHECK(EntrySize(10, 100, false) - EntrySize(10, 0, false) == 100);
  CHECK(EntrySize(20, 0, false) - EntrySize(10, 0, false) == 10);
  CHECK(EntrySize(10, 0, true) > EntrySize(10, 0, false) + 10);  // key copy + node
}

TEST_CASE("noeviction: a write over the limit is refused and changes nothing",
          "[store][memory][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  const uint64_t one = EntrySize(2, 100, false);  // keys "k0".."k9"
  o.memory_limit = one * 3;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("k0", std::string(100, 'a')) == Status::kOk);
  REQUIRE(s->Set("k1", std::string(100, 'b')) == Status::kOk);
  REQUIRE(s->Set("k2", std::string(100, 'c')) == Status::kOk);
  CHECK(s->Stats().memory_used == o.memory_limit);

  CHECK(s->Set("k3", std::string(100, 'd')) == Status::kOutOfMemory);
  CHECK(s->SetNx("k3", std::string(100, 'd')) == SetNxOutcome::kOutOfMemory);
  CHECK(s->Set("k0", std::string(101, 'A')) == Status::kOutOfMemory);  // growth refused
  std::string v;
  CHECK(s->Get("k0", &v) == Status::kOk);
  CHECK(v == std::string(100, 'a'));  // the old value survives
  CHECK(s->Get("k3", &v) == Status::kNotFound);
  CHECK(s->DbSize() == 3);
  CHECK(s->Stats().memory_used == o.memory_limit);
  CHECK(s->Stats().evicted == 0);

  // Shrinking and same-size writes are fine; deleting makes room again.
  CHECK(s->Set("k0", std::string(50, 'a')) == Status::kOk);
  CHECK(s->Set("k1", std::string(100, 'B')) == Status::kOk);
  int64_t n = 0;
  REQUIRE(s->Del("k2", &n) == Status::kOk);
  CHECK(s->Set("k3", std::string(100, 'd')) == Status::kOk);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("noeviction: incr that would grow past the limit keeps the value",
          "[store][memory][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = EntrySize(1, 1, false);
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("n", "9") == Status::kOk);
  int64_t n = 0;
  CHECK(s->IncrBy("n", 1, &n) == Status::kOutOfMemory);  // "10" is one byte longer
  std::string v;
  CHECK(s->Get("n", &v) == Status::kOk);
  CHECK(v == "9");
  CHECK(s->IncrBy("n", -1, &n) == Status::kOk);  // same size
  CHECK(n == 8);
}

TEST_CASE("allkeys-lru evicts the least recently used sampled key", "[store][memory][lru]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;               // one shard and a sample as large as the shard:
  o.eviction_samples = 64;    // the sample sees every key, so LRU is exact
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  const uint64_t one = EntrySize(2, 100, false);
  o.memory_limit = one * 10;
  auto s = MakeStore(o, &clock);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), std::string(100, 'v')) == Status::kOk);
    clock.Advance(1);
  }
  std::string v;
  REQUIRE(s->Get("k0", &v) == Status::kOk);  // k0 is now the most recent
  clock.Advance(1);
  REQUIRE(s->Set("kA", std::string(100, 'n')) == Status::kOk);
  CHECK(s->Get("k0", &v) == Status::kOk);
  CHECK(s->Get("k1", &v) == Status::kNotFound);  // the least recently used
  CHECK(s->Stats().evicted == 1);
  CHECK(s->DbSize() == 10);
  CHECK(s->Stats().memory_used <= o.memory_limit);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("allkeys-lru prefers an expired entry and keeps memory under the limit",
          "[store][memory][lru]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 4;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  o.memory_limit = 64 * 1024;
  auto s = MakeStore(o, &clock);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(s->Set("key:" + std::to_string(i), std::string(200, 'v'), i % 4 == 0 ? 5 : 0) ==
            Status::kOk);
    CHECK(s->Stats().memory_used <= o.memory_limit);
    clock.Advance(1);
  }
  const auto st = s->Stats();
  CHECK(st.evicted + st.expired > 4000);
  CHECK(st.expired > 0);
  s->SweepExpired(100000);  // the sum below sees live entries only
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("allkeys-lru refuses a value larger than the whole limit", "[store][memory][lru]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  o.memory_limit = 4096;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("small", "v") == Status::kOk);
  CHECK(s->Set("huge", std::string(8192, 'x')) == Status::kOutOfMemory);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->Stats().memory_used <= o.memory_limit);
}
