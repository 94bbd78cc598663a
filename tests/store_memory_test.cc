// Memory accounting, the memory limit and eviction.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <malloc.h>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::SumOfEntries;

namespace {

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
  // A value has a buffer of its own once it is too long for the entry's
  // value object (15 bytes, core/value_buf.h): exactly its size (no
  // terminating NUL) and malloc's 8-byte header, in 16-byte steps.
  CHECK(EntrySize(10, 15, false) == EntrySize(10, 0, false));
  CHECK(EntrySize(10, 16, false) - EntrySize(10, 0, false) == 32);
  CHECK(EntrySize(10, 24, false) - EntrySize(10, 0, false) == 32);
  CHECK(EntrySize(10, 25, false) - EntrySize(10, 0, false) == 48);
  CHECK(EntrySize(10, 100, false) - EntrySize(10, 0, false) == 112);
  CHECK(EntrySize(10, 104, false) - EntrySize(10, 0, false) == 112);
  CHECK(EntrySize(10, 105, false) - EntrySize(10, 0, false) == 128);
  // A key lives in its Key object up to 30 bytes (core/include/ephpm/key.h), beyond that
  // in a buffer of exactly its size (no terminating NUL).  The expiry index
  // points at the entry's key rather than copying it: a TTL costs the same
  // whatever the key's length.
  CHECK(EntrySize(15, 0, false) == EntrySize(10, 0, false));
  CHECK(EntrySize(30, 0, false) == EntrySize(10, 0, false));
  CHECK(EntrySize(31, 0, false) - EntrySize(10, 0, false) == 48);
  CHECK(EntrySize(40, 0, false) - EntrySize(10, 0, false) == 48);
  CHECK(EntrySize(41, 0, false) - EntrySize(10, 0, false) == 64);
  CHECK(EntrySize(10, 0, true) > EntrySize(10, 0, false));  // the index's item
  CHECK(EntrySize(40, 0, true) - EntrySize(40, 0, false) ==
        EntrySize(10, 0, true) - EntrySize(10, 0, false));
}

// What the allocator says the process holds (glibc's in-use bytes, in the
// heap and in chunks of their own: until a process has freed a large
// block, glibc maps blocks of 128 KiB and more, such as a big table's
// array, apart from the heap), or nothing under a sanitizer
// (EPHPM_SANITIZE), whose allocator glibc does not see.
std::optional<uint64_t> AllocatedBytes() {
#ifdef EPHPM_TEST_SANITIZED
  return std::nullopt;
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

// Fills a fresh store with `fill` and compares its accounted total with
// what the allocator handed out meanwhile.  The figure ephpm.memory_limit
// enforces is a model; it must stay within 15% of the memory the entries
// really take, or a limit would not mean what it says (issue 19: it was
// half).  False when allocator statistics are not available.
template <typename Fill>
bool FollowsAllocator(const std::string& what, const Fill& fill) {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  const std::optional<uint64_t> before = AllocatedBytes();
  if (!before) {
    WARN("allocator statistics are not glibc's under a sanitizer: not compared");
    return false;
  }
  fill(*s);
  const double real = static_cast<double>(*AllocatedBytes() - *before);
  const double accounted = static_cast<double>(s->Stats().memory_used);
  INFO(what << ": accounted " << accounted << ", allocated " << real);
  CHECK(accounted / real > 0.85);
  CHECK(accounted / real < 1.15);
  return true;
}

TEST_CASE("the accounted total follows what the allocator gives the store", "[store][memory]") {
  // Shapes: the benchmark's (16 B keys, 64 B values), short keys and values
  // that fit the string objects, long values, TTLs, keys just past what a
  // Key holds inline and well past it.
  struct Shape {
    size_t key_len, value_len;
    bool ttl;
  };
  for (const Shape shape : {Shape{16, 64, false}, Shape{6, 8, false}, Shape{30, 700, false},
                            Shape{16, 64, true}, Shape{31, 64, false}, Shape{60, 64, true}}) {
    std::ostringstream what;
    what << "key " << shape.key_len << " B, value " << shape.value_len << " B, ttl " << shape.ttl;
    const bool compared = FollowsAllocator(what.str(), [&](Store& s) {
      constexpr int kKeys = 50000;
      std::string key(shape.key_len, 'k');
      const std::string value(shape.value_len, 'v');
      for (int i = 0; i < kKeys; ++i) {
        const std::string n = std::to_string(i);
        key.replace(key.size() - n.size(), n.size(), n);
        REQUIRE(s.Set(key, value, shape.ttl ? 60000 : 0) == Status::kOk);
      }
      REQUIRE(s.DbSize() == kKeys);
    });
    if (!compared) return;
  }
}

TEST_CASE("the accounted total follows the allocator for hashes, lists, sets and sorted sets",
          "[store][memory]") {
  // 1 000 keys of 60 elements (a table between two doublings) and 100 of
  // 600, elements of 8 bytes (inside the string objects) and of 30.
  enum Kind { kHash, kList, kSet, kZSet };
  for (const Kind kind : {kHash, kList, kSet, kZSet}) {
    for (const std::pair<int, int>& size : {std::pair{1000, 60}, std::pair{100, 600}}) {
      // Plain names, not a structured binding: clang 14 cannot capture one.
      const int keys = size.first, elements = size.second;
      for (const size_t len : {size_t{8}, size_t{30}}) {
        std::ostringstream what;
        what << "type " << kind << ", " << keys << " keys of " << elements << " elements of "
             << len << " B";
        const bool compared = FollowsAllocator(what.str(), [&](Store& s) {
          int64_t n = 0;
          for (int k = 0; k < keys; ++k) {
            const std::string key = "key" + std::to_string(k);
            std::vector<std::string> own;
            for (int e = 0; e < elements; ++e) {
              std::string m(len, 'm');
              const std::string num = std::to_string(e);
              own.push_back(m.replace(len - num.size(), num.size(), num));
            }
            const std::vector<std::string_view> views(own.begin(), own.end());
            if (kind == kHash) {
              std::vector<std::pair<std::string_view, std::string_view>> f;
              for (std::string_view x : views) f.emplace_back(x, x);
              REQUIRE(s.HSet(key, f, false, &n) == Status::kOk);
            } else if (kind == kList) {
              REQUIRE(s.ListPush(key, views, false, false, &n) == Status::kOk);
            } else if (kind == kSet) {
              REQUIRE(s.SAdd(key, views, &n) == Status::kOk);
            } else {
              std::vector<std::pair<double, std::string_view>> p;
              for (std::string_view x : views) p.emplace_back(1.5, x);
              REQUIRE(s.ZAdd(key, p, 0, &n) == Status::kOk);
            }
          }
        });
        if (!compared) return;
      }
    }
  }
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
  CHECK(s->Set("k0", std::string(120, 'A')) == Status::kOutOfMemory);  // growth refused
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
  o.memory_limit = EntrySize(1, 15, false);
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("n", "999999999999999") == Status::kOk);
  int64_t n = 0;
  // 16 digits no longer fit in the string object: a buffer of their own.
  CHECK(s->IncrBy("n", 1, &n) == Status::kOutOfMemory);
  std::string v;
  CHECK(s->Get("n", &v) == Status::kOk);
  CHECK(v == "999999999999999");
  CHECK(s->IncrBy("n", -1, &n) == Status::kOk);  // same size
  CHECK(n == 999999999999998);
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
    clock.Advance(1000);  // the access time keeps seconds
  }
  std::string v;
  REQUIRE(s->Get("k0", &v) == Status::kOk);  // k0 is now the most recent
  clock.Advance(1000);  // the access time keeps seconds
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

// --- allkeys-lru and locks (set_nx with a TTL) ------------------------------

namespace {

// One shard and a sample as large as the shard: every eviction sees every
// key, so the least recently used key is always the first candidate.
ephpm::StoreOptions ExactLru(uint64_t limit) {
  auto o = NoSweeper();
  o.shards = 1;
  o.eviction_samples = 64;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  o.memory_limit = limit;
  return o;
}

const std::string kToken(32, 't');  // the session handler's token length

// Two locks and two 100-byte values in `s`, whose limit (set first when
// `set_limit`, else given by its options) is their sum: a write that would
// fit an empty store but not beside the locks is refused before anything is
// evicted (eviction's 'never fits' reads the pinned figure).  Returns the
// limit.
uint64_t CheckRefusedBesideLocks(Store& s, bool set_limit) {
  const uint64_t lock = EntrySize(2, kToken.size(), true);
  const uint64_t data = EntrySize(2, 100, false);
  const uint64_t limit = lock * 2 + data * 2;
  REQUIRE(s.SetNx("l0", kToken, 30000) == SetNxOutcome::kInserted);
  REQUIRE(s.SetNx("l1", kToken, 30000) == SetNxOutcome::kInserted);
  REQUIRE(s.Set("d0", std::string(100, 'a')) == Status::kOk);
  REQUIRE(s.Set("d1", std::string(100, 'b')) == Status::kOk);
  if (set_limit) s.SetMemoryLimit(limit);
  REQUIRE(s.memory_limit() == limit);
  // Fits in an empty store, but not in what the locks leave.
  const std::string big(data * 2, 'x');
  REQUIRE(EntrySize(3, big.size(), false) <= limit);
  REQUIRE(EntrySize(3, big.size(), false) > limit - lock * 2);
  CHECK(s.Set("big", big) == Status::kOutOfMemory);
  CHECK(s.Stats().evicted == 0);
  CHECK(s.DbSize() == 4);
  return limit;
}

// After CheckRefusedBesideLocks: a write that fits once the values are
// evicted evicts them, and the locks stay.
void CheckEvictsBesideLocks(Store& s) {
  CHECK(s.Set("mid", std::string(150, 'm')) == Status::kOk);
  CHECK(s.Stats().evicted == 2);
  std::string v;
  CHECK(s.Get("l0", &v) == Status::kOk);
  CHECK(s.Get("l1", &v) == Status::kOk);
  CHECK(s.Stats().memory_used == SumOfEntries(s));
}

}  // namespace

TEST_CASE("allkeys-lru never evicts a live lock, even the least recently used key",
          "[store][memory][lru][lock]") {
  ManualClock clock;
  const uint64_t lock = EntrySize(4, kToken.size(), true);
  const uint64_t data = EntrySize(2, 100, false);
  auto s = MakeStore(ExactLru(lock + data * 3), &clock);
  REQUIRE(s->SetNx("lock", kToken, 30000) == SetNxOutcome::kInserted);
  clock.Advance(1);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(s->Set("d" + std::to_string(i), std::string(100, 'v')) == Status::kOk);
    clock.Advance(1);
  }
  CHECK(s->Stats().evicted == 7);
  std::string v;
  CHECK(s->Get("lock", &v) == Status::kOk);
  CHECK(v == kToken);
  // A second request cannot acquire it: no double grant.
  CHECK(s->SetNx("lock", std::string(32, 'u'), 30000) == SetNxOutcome::kExists);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("allkeys-lru: when locks alone fill the limit, writes are refused and no lock goes",
          "[store][memory][lru][lock]") {
  ManualClock clock;
  const uint64_t lock = EntrySize(2, kToken.size(), true);
  auto s = MakeStore(ExactLru(lock * 3), &clock);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(s->SetNx("l" + std::to_string(i), kToken, 30000) == SetNxOutcome::kInserted);
    clock.Advance(1);
  }
  CHECK(s->Set("d", "x") == Status::kOutOfMemory);
  CHECK(s->SetNx("l3", kToken, 30000) == SetNxOutcome::kOutOfMemory);
  int64_t n = 0;
  CHECK(s->IncrBy("counter", 1, &n) == Status::kOutOfMemory);
  CHECK(s->Stats().evicted == 0);
  for (int i = 0; i < 3; ++i) {
    CHECK(s->SetNx("l" + std::to_string(i), std::string(32, 'u'), 30000) ==
          SetNxOutcome::kExists);
  }
  // Once a lock expires, its memory is reclaimed like any expired entry.
  clock.Advance(30000);
  CHECK(s->Set("d", "x") == Status::kOk);
  s->SweepExpired(1000);  // the sum below sees live entries only
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("allkeys-lru: a write larger than the whole limit is refused before anything is evicted",
          "[store][memory][lru]") {
  ManualClock clock;
  auto s = MakeStore(ExactLru(4096), &clock);
  REQUIRE(s->Set("small", "v") == Status::kOk);
  REQUIRE(s->Set("other", std::string(100, 'o')) == Status::kOk);
  CHECK(s->Set("huge", std::string(8192, 'x')) == Status::kOutOfMemory);
  int64_t len = 0;
  CHECK(s->Append("other", std::string(8192, 'x'), &len) == Status::kOutOfMemory);
  CHECK(s->Stats().evicted == 0);
  CHECK(s->DbSize() == 2);
  std::string v;
  CHECK(s->Get("small", &v) == Status::kOk);
  CHECK(s->Get("other", &v) == Status::kOk);
  CHECK(v == std::string(100, 'o'));
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("allkeys-lru: a write that cannot fit beside the locks is refused before anything is "
          "evicted", "[store][memory][lru][lock]") {
  ManualClock clock;
  const uint64_t lock = EntrySize(2, kToken.size(), true);
  const uint64_t data = EntrySize(2, 100, false);
  auto s = MakeStore(ExactLru(lock * 2 + data * 2), &clock);
  CheckRefusedBesideLocks(*s, /*set_limit=*/false);
  CheckEvictsBesideLocks(*s);
}

TEST_CASE("allkeys-lru evicts a set_nx key without a TTL: it is ordinary data",
          "[store][memory][lru][lock]") {
  ManualClock clock;
  const uint64_t data = EntrySize(2, 100, false);
  auto s = MakeStore(ExactLru(data * 2), &clock);
  REQUIRE(s->SetNx("nx", std::string(100, 'n')) == SetNxOutcome::kInserted);
  clock.Advance(1000);  // the access time keeps seconds
  REQUIRE(s->Set("d0", std::string(100, 'a')) == Status::kOk);
  clock.Advance(1000);  // the access time keeps seconds
  REQUIRE(s->Set("d1", std::string(100, 'b')) == Status::kOk);
  std::string v;
  CHECK(s->Get("nx", &v) == Status::kNotFound);
  CHECK(s->Stats().evicted == 1);
}

namespace {

// Stats' pinned figures, checked against the entries themselves: the keys
// Inspect reports pinned, and the sum of their sizes.
void CheckPinned(Store& s, std::vector<std::string> want) {
  std::vector<std::string> keys, pinned;
  REQUIRE(s.Keys("*", &keys) == Status::kOk);
  uint64_t bytes = 0;
  for (const auto& k : keys) {
    ephpm::EntryInfo info;
    REQUIRE(s.Inspect(k, &info) == Status::kOk);
    if (info.pinned) {
      pinned.push_back(k);
      bytes += info.mem_size;
      CHECK(info.expires_at_ms != 0);  // a pin is always bounded by a TTL
    }
  }
  std::sort(pinned.begin(), pinned.end());
  std::sort(want.begin(), want.end());
  CHECK(pinned == want);
  const auto st = s.Stats();
  CHECK(st.pinned_keys == want.size());
  CHECK(st.pinned_bytes == bytes);
  CHECK(st.memory_used == SumOfEntries(s));
}

}  // namespace

TEST_CASE("the pin belongs to the entry: what keeps it and what drops it",
          "[store][memory][lock]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool b = false;
  int64_t n = 0;
  std::string v;
  REQUIRE(s->SetNx("plain", "v") == SetNxOutcome::kInserted);  // no TTL: data
  REQUIRE(s->SetNx("l", "5", 10000) == SetNxOutcome::kInserted);
  CheckPinned(*s, {"l"});
  CHECK(s->SetNx("l", "6", 10000) == SetNxOutcome::kExists);  // a refused attempt keeps it

  SECTION("a changed TTL, an edit in place and a rename keep it") {
    REQUIRE(s->Expire("l", 20000, &b) == Status::kOk);
    REQUIRE(s->ExpireAtIf("l", clock.NowMs() + 30000, ephpm::kExpireGt, &b) == Status::kOk);
    REQUIRE(b);
    REQUIRE(s->GetEx("l", ephpm::SetOptions::Expiry::kAt, clock.NowMs() + 40000, &v) ==
            Status::kOk);
    REQUIRE(s->IncrBy("l", 5, &n) == Status::kOk);
    REQUIRE(s->Append("l", "0", &n) == Status::kOk);
    REQUIRE(s->SetRange("l", 0, "2", &n) == Status::kOk);
    std::string f;
    REQUIRE(s->IncrByFloat("l", 0.5, &f) == Status::kOk);
    CHECK(f == "200.5");
    CheckPinned(*s, {"l"});
    REQUIRE(s->Rename("l", "renamed", false, &b) == Status::kOk);
    CheckPinned(*s, {"renamed"});
    REQUIRE(s->Set("plain", "x", 1000) == Status::kOk);
    REQUIRE(s->Rename("renamed", "plain", false, &b) == Status::kOk);  // over another key
    CheckPinned(*s, {"plain"});
  }
  SECTION("removing the TTL drops it: no pinned memory without a bound") {
    REQUIRE(s->Persist("l", &b) == Status::kOk);
    CheckPinned(*s, {});
    REQUIRE(s->Expire("l", 10000, &b) == Status::kOk);  // a TTL alone does not pin
    CheckPinned(*s, {});
    REQUIRE(s->SetNx("l2", "t", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->GetEx("l2", ephpm::SetOptions::Expiry::kNone, 0, &v) == Status::kOk);
    CheckPinned(*s, {});
  }
  SECTION("replacing the entry drops it") {
    ephpm::SetResult r;
    ephpm::SetOptions keep;
    keep.expiry = ephpm::SetOptions::Expiry::kKeep;
    REQUIRE(s->SetWith("l", "w", keep, &r) == Status::kOk);  // KEEPTTL still replaces
    CheckPinned(*s, {});
    REQUIRE(s->SetNx("l2", "t", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->Set("l2", "data", 10000) == Status::kOk);
    REQUIRE(s->SetNx("l3", "t", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->MSet({{"l3", "data"}}, false, &b) == Status::kOk);
    REQUIRE(s->SetNx("l4", "t", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->SetNx("guard", "tok", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->SetIfEq("guard", "tok", "l4", "data", 10000) == ephpm::SetIfEqOutcome::kWritten);
    CheckPinned(*s, {"guard"});
    REQUIRE(s->DelIfEq("guard", "tok") == ephpm::DelIfEqOutcome::kDeleted);
    CheckPinned(*s, {});
  }
  SECTION("SET NX with an expiry takes a lock as set_nx does; without one it does not") {
    ephpm::SetResult r;
    ephpm::SetOptions nx;
    nx.when = ephpm::SetOptions::When::kIfAbsent;
    nx.get_old = true;
    REQUIRE(s->SetWith("nx-plain", "v", nx, &r) == Status::kOk);
    nx.expiry = ephpm::SetOptions::Expiry::kAt;
    nx.expires_at_ms = clock.NowMs() + 5000;
    REQUIRE(s->SetWith("nx-lock", "v", nx, &r) == Status::kOk);
    REQUIRE(r.written);
    CheckPinned(*s, {"l", "nx-lock"});
  }
  SECTION("an expired lock is absent: not counted, and its memory goes back") {
    clock.Advance(10000);
    CHECK(s->Stats().pinned_keys == 0);  // before it is removed, too
    CHECK(s->Stats().pinned_bytes == 0);
    CHECK(s->SweepExpired(100) == 1);
    CheckPinned(*s, {});
  }
  SECTION("deleting and flushing take the figures to zero") {
    REQUIRE(s->SetNx("l2", "t", 10000) == SetNxOutcome::kInserted);
    REQUIRE(s->Del("l", &n) == Status::kOk);
    CheckPinned(*s, {"l2"});
    s->Flush();
    CheckPinned(*s, {});
    CHECK(s->Stats().memory_used == 0);
  }
}

TEST_CASE("allkeys-lru evicts a former lock once its pin is dropped",
          "[store][memory][lru][lock]") {
  ManualClock clock;
  const uint64_t data = EntrySize(2, 30, false);
  const uint64_t lock = EntrySize(2, kToken.size(), true);
  auto s = MakeStore(ExactLru(lock + data), &clock);
  REQUIRE(s->SetNx("l0", kToken, 30000) == SetNxOutcome::kInserted);
  bool b = false;
  REQUIRE(s->Persist("l0", &b) == Status::kOk);
  clock.Advance(1000);  // the access time keeps seconds
  REQUIRE(s->Set("d0", std::string(30, 'a')) == Status::kOk);
  clock.Advance(1000);  // the access time keeps seconds
  REQUIRE(s->Set("d1", std::string(30, 'b')) == Status::kOk);
  std::string v;
  CHECK(s->Get("l0", &v) == Status::kNotFound);  // the least recently used
  CHECK(s->Get("d0", &v) == Status::kOk);
  CHECK(s->Stats().evicted == 1);
}

TEST_CASE("SetMemoryLimit: a limit changed at runtime governs the next writes", "[store][memory]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(s->memory_limit() == 0);
  CHECK_FALSE(s->OverMemoryLimit());
  REQUIRE(s->Set("a", std::string(1000, 'x')) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;

  // Lowered below what is held: nothing is removed, growth is refused, a
  // write that does not grow is not, and the store says it is over.
  s->SetMemoryLimit(used / 2);
  CHECK(s->memory_limit() == used / 2);
  CHECK(s->Stats().memory_limit == used / 2);
  CHECK(s->OverMemoryLimit());
  CHECK(s->Set("b", "y") == Status::kOutOfMemory);
  CHECK(s->Set("a", "small") == Status::kOk);
  std::string v;
  CHECK(s->Get("a", &v) == Status::kOk);
  CHECK(v == "small");

  // Exactly at the limit is not over it; 0 lifts it.
  s->SetMemoryLimit(s->Stats().memory_used);
  CHECK_FALSE(s->OverMemoryLimit());
  s->SetMemoryLimit(0);
  CHECK_FALSE(s->OverMemoryLimit());
  CHECK(s->Set("b", std::string(5000, 'y')) == Status::kOk);
}

TEST_CASE("SetMemoryLimit: under allkeys-lru a lowered limit evicts instead of refusing",
          "[store][memory]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto s = MakeStore(o, &clock);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), std::string(200, 'x')) == Status::kOk);
  }
  s->SetMemoryLimit(s->Stats().memory_used / 4);
  // Not "over" for the RESP server's refusals: each write evicts what it needs.
  CHECK_FALSE(s->OverMemoryLimit());
  CHECK(s->Set("new", std::string(200, 'y')) == Status::kOk);
  CHECK(s->Stats().evicted > 0);
  CHECK(s->Stats().memory_used <= s->memory_limit());
}

// A SET over a string whose buffer is the chunk the new value needs copies
// into that buffer under the lock (Store::Impl::FitsInPlace): no malloc,
// no free.  What must not change: the values, the exact accounting, the
// value SET ... GET reports, and all-or-nothing under the limit.
TEST_CASE("overwrites into the entry's own buffer keep values and accounting exact",
          "[store][memory][inplace]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 200;
  auto s = MakeStore(o, &clock);
  std::mt19937_64 rng(0x1ace);
  const auto below = [&rng](uint64_t n) { return rng() % n; };
  std::vector<std::optional<std::string>> model(64);
  std::string v;
  for (int i = 0; i < 20000; ++i) {
    const size_t k = below(model.size());
    const std::string key = "inplace:" + std::to_string(k);
    // Lengths around the string object's 15 bytes, around chunk edges, and
    // past the compression threshold (an entry that holds a zstd frame).
    static const size_t kLens[] = {0, 8, 15, 16, 23, 24, 31, 32, 39, 40, 41, 56, 64, 100, 250, 1500};
    const size_t len = kLens[below(sizeof(kLens) / sizeof(kLens[0]))];
    std::string value(len, static_cast<char>('a' + i % 26));
    if (!value.empty()) value[0] = static_cast<char>('A' + k % 26);
    if (below(8) == 0) {
      ephpm::SetOptions so;
      so.get_old = true;
      ephpm::SetResult r;
      REQUIRE(s->SetWith(key, value, so, &r) == Status::kOk);
      CHECK(r.had_old == model[k].has_value());
      if (r.had_old) CHECK(r.old == *model[k]);  // read before the buffer was reused
    } else {
      REQUIRE(s->Set(key, value, below(4) == 0 ? 60000 : 0) == Status::kOk);
    }
    model[k] = value;
    REQUIRE(s->Get(key, &v) == Status::kOk);
    REQUIRE(v == value);
  }
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  for (size_t k = 0; k < model.size(); ++k) {
    if (s->Get("inplace:" + std::to_string(k), &v) == Status::kOk) {
      ephpm::EntryInfo info;
      REQUIRE(s->Inspect("inplace:" + std::to_string(k), &info) == Status::kOk);
      CHECK(info.mem_size == EntrySize(("inplace:" + std::to_string(k)).size(), info.stored_size,
                                       info.expires_at_ms != 0));
    }
  }
}

TEST_CASE("an overwrite the limit refuses leaves the old value, even one that would fit in place",
          "[store][memory][inplace][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = EntrySize(1, 32, false) * 2;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("a", std::string(32, 'a')) == Status::kOk);
  REQUIRE(s->Set("b", std::string(32, 'b')) == Status::kOk);
  REQUIRE(s->Stats().memory_used == o.memory_limit);
  // The same size with a TTL: the expiry index's item is growth the limit
  // refuses, after the value would have fitted the buffer.
  CHECK(s->Set("a", std::string(32, 'X'), 1000) == Status::kOutOfMemory);
  std::string v;
  REQUIRE(s->Get("a", &v) == Status::kOk);
  CHECK(v == std::string(32, 'a'));
  CHECK(s->Stats().memory_used == o.memory_limit);
  // Without the TTL it fits where the old value was.
  CHECK(s->Set("a", std::string(32, 'Y')) == Status::kOk);
  REQUIRE(s->Get("a", &v) == Status::kOk);
  CHECK(v == std::string(32, 'Y'));
  CHECK(s->Stats().memory_used == o.memory_limit);
}

TEST_CASE("overwrites in place follow what the allocator gives the store", "[store][memory][inplace]") {
  // Many overwrites of varying length over the same keys: a reused buffer
  // that stayed larger than its value would show as real growth the
  // accounting does not see.
  const bool compared = FollowsAllocator("overwrites", [&](Store& s) {
    std::mt19937_64 rng(77);
    for (int i = 0; i < 200000; ++i) {
      const std::string key = "k" + std::to_string(rng() % 20000);
      REQUIRE(s.Set(key, std::string(16 + rng() % 100, 'v'), 0) == Status::kOk);
    }
  });
  if (!compared) SUCCEED("no allocator statistics under a sanitizer");
}

namespace {

constexpr int kBufferKeys = 40000;

// The model counts a value of 16 B or more as one buffer: an entry's value
// of exactly its length (ValueHeapMem), a list element of its length + 1
// (StringHeapMem).  `per_key(len, &real, &accounted)` builds a store of
// kBufferKeys values of len bytes and measures, per key, what the allocator
// handed out and what the store accounts (false without allocator
// statistics).  The table's and the nodes' share is the same for every
// length, so the difference from 16 B, per key, isolates the value's buffer.
template <typename PerKey>
void CheckValueBuffers(const std::string& what, const PerKey& per_key) {
  double real16 = 0, acc16 = 0;
  if (!per_key(16, &real16, &acc16)) {
    SUCCEED("no allocator statistics under a sanitizer");
    return;
  }
  for (const size_t len : {20, 23, 24, 29, 30, 31, 40, 47, 48, 64}) {
    double real = 0, acc = 0;
    REQUIRE(per_key(len, &real, &acc));
    INFO(what << ", value " << len << " B: real " << real << " (16 B: " << real16
              << "), accounted " << acc << " (16 B: " << acc16 << ") per key");
    CHECK(std::abs((real - real16) - (acc - acc16)) < 2.0);
  }
}

}  // namespace

TEST_CASE("a value's buffer is as long as the accounting says, at every short length",
          "[store][memory]") {
  // Written when the value was a std::string, which grown from empty by
  // assign() takes twice its inline capacity (30 B) for a value of 16 to 29
  // bytes: a 48 B chunk where the model said 32 for 16-23 B.  A ValueBuf
  // has no growing path, and every path is still held to the model.
  for (const bool ttl : {false, true}) {
    CheckValueBuffers(ttl ? "with a TTL" : "no TTL", [&](size_t value_len, double* real,
                                                          double* accounted) {
      ManualClock clock;
      auto s = MakeStore(NoSweeper(), &clock);
      const std::optional<uint64_t> before = AllocatedBytes();
      if (!before) return false;
      const std::string value(value_len, 'v');
      for (int i = 0; i < kBufferKeys; ++i) {
        // Through every path that stores a whole string value.
        const std::string key = "key:" + std::to_string(i);
        switch (i % 3) {
          case 0: REQUIRE(s->Set(key, value, ttl ? 60000 : 0) == Status::kOk); break;
          case 1:
            REQUIRE(s->SetNx(key, value, ttl ? 60000 : 0) == SetNxOutcome::kInserted);
            break;
          default:
            // An overwrite that does not fit the old buffer (15 B: inline).
            REQUIRE(s->Set(key, "short", 0) == Status::kOk);
            REQUIRE(s->Set(key, value, ttl ? 60000 : 0) == Status::kOk);
        }
      }
      *real = static_cast<double>(*AllocatedBytes() - *before) / kBufferKeys;
      *accounted = static_cast<double>(s->Stats().memory_used) / kBufferKeys;
      return true;
    });
  }
}

TEST_CASE("values loaded from the log and set by LSET are as long as accounted too",
          "[store][memory]") {
  // The two other places a value is made from bytes: an entry decoded from
  // the log (or a replicated mutation: EntryFromMutation), and LSET.
  CheckValueBuffers("loaded from the log", [&](size_t value_len, double* real,
                                               double* accounted) {
    ephpm_test::TempDir dir;
    ManualClock clock;
    ephpm::StoreOptions o = NoSweeper();
    o.persistence.data_dir = dir.path;
    {
      auto writer = MakeStore(o, &clock);
      const std::string value(value_len, 'v');
      for (int i = 0; i < kBufferKeys; ++i) {
        REQUIRE(writer->Set("key:" + std::to_string(i), value) == Status::kOk);
      }
    }
    const std::optional<uint64_t> before = AllocatedBytes();
    if (!before) return false;
    auto s = MakeStore(o, &clock);
    REQUIRE(s->DbSize() == kBufferKeys);
    *real = static_cast<double>(*AllocatedBytes() - *before) / kBufferKeys;
    *accounted = static_cast<double>(s->Stats().memory_used) / kBufferKeys;
    return true;
  });
  CheckValueBuffers("set by LSET", [&](size_t value_len, double* real, double* accounted) {
    ManualClock clock;
    auto s = MakeStore(NoSweeper(), &clock);
    const std::optional<uint64_t> before = AllocatedBytes();
    if (!before) return false;
    const std::string value(value_len, 'v');
    for (int i = 0; i < kBufferKeys; ++i) {
      const std::string key = "list:" + std::to_string(i);
      int64_t length = 0;
      REQUIRE(s->ListPush(key, {"short"}, false, false, &length) == Status::kOk);
      bool in_range = false;
      REQUIRE(s->ListSet(key, 0, value, &in_range) == Status::kOk);
      REQUIRE(in_range);
    }
    *real = static_cast<double>(*AllocatedBytes() - *before) / kBufferKeys;
    *accounted = static_cast<double>(s->Stats().memory_used) / kBufferKeys;
    return true;
  });
}

TEST_CASE("a new key takes a removed value's buffer only when it is the chunk its value needs",
          "[store][memory][spare]") {
  // A shard keeps the buffer of the last short value removed from it
  // (Shard::spare_value) for its next new key.  Taken for a value that
  // needs another chunk, it would make the entry's real size differ from
  // its accounted one.  Every key here shares one shard (the "{t}" tag), and
  // before each new key a value of `removed` bytes is set and deleted there.
  for (const size_t removed : {24, 40, 64}) {
    CheckValueBuffers("after removing a value of " + std::to_string(removed) + " B",
                      [&](size_t value_len, double* real, double* accounted) {
                        ManualClock clock;
                        auto s = MakeStore(NoSweeper(), &clock);
                        const std::optional<uint64_t> before = AllocatedBytes();
                        if (!before) return false;
                        const std::string gone(removed, 'g');
                        const std::string value(value_len, 'v');
                        for (int i = 0; i < kBufferKeys; ++i) {
                          REQUIRE(s->Set("{t}gone", gone, 0) == Status::kOk);
                          int64_t removed_keys = 0;
                          REQUIRE(s->Del("{t}gone", &removed_keys) == Status::kOk);
                          REQUIRE(removed_keys == 1);
                          const std::string key = "{t}key:" + std::to_string(i);
                          if (i % 2 == 0) {
                            REQUIRE(s->Set(key, value, 0) == Status::kOk);
                          } else {
                            REQUIRE(s->SetNx(key, value, 60000) == SetNxOutcome::kInserted);
                          }
                        }
                        *real = static_cast<double>(*AllocatedBytes() - *before) / kBufferKeys;
                        *accounted = static_cast<double>(s->Stats().memory_used) / kBufferKeys;
                        return true;
                      });
  }
}

// --- the total's parts: shards count locally without a limit -----------------

TEST_CASE("the memory total stays exact as a limit comes and goes", "[store][memory][limit]") {
  // Without a limit each shard keeps its part of the total; a limit folds
  // every part into the process-wide figure before it applies.
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  auto exact = [&] { CHECK(s->Stats().memory_used == SumOfEntries(*s)); };
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), std::string(10 + i % 90, 'v')) == Status::kOk);
  }
  REQUIRE(s->SetNx("lock", kToken, 30000) == SetNxOutcome::kInserted);
  int64_t added = 0;
  const std::string wide(40, 'w');
  REQUIRE(s->HSet("h", {{"f", "v"}, {"g", wide}}, false, &added) == Status::kOk);
  exact();
  for (int round = 0; round < 3; ++round) {
    const uint64_t used = s->Stats().memory_used;
    // Room for a little more than now: the parts were folded in, so a big
    // write is refused and a small one taken.
    s->SetMemoryLimit(used + 200);
    exact();
    CHECK(s->Set("big", std::string(1000, 'b')) == Status::kOutOfMemory);
    CHECK(s->Set("small" + std::to_string(round), "x") == Status::kOk);
    exact();
    int64_t removed = 0;
    REQUIRE(s->Del("k" + std::to_string(round), &removed) == Status::kOk);
    exact();
    s->SetMemoryLimit(0);  // local parts again, from the global figure
    exact();
    CHECK(s->Set("big", std::string(1000, 'b')) == Status::kOk);
    REQUIRE(s->Del("big", &removed) == Status::kOk);
    REQUIRE(s->Del("k" + std::to_string(100 + round), &removed) == Status::kOk);
    exact();
    s->SetMemoryLimit(used * 10);  // a limit to a limit: nothing moves
    s->SetMemoryLimit(used * 20);
    exact();
    s->SetMemoryLimit(0);
  }
  CHECK(s->FlushEveryDatabase() == Status::kOk);
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("locks taken before a limit count as pinned once it applies",
          "[store][memory][limit][lru][lock]") {
  // Eviction's 'never fits' test needs the pinned bytes of every shard,
  // which are gathered only once a limit is set: the locks here were taken
  // without one.
  ManualClock clock;
  auto o = ExactLru(0);
  o.shards = 4;
  auto s = MakeStore(o, &clock);
  const uint64_t limit = CheckRefusedBesideLocks(*s, /*set_limit=*/true);
  // Lifted and set again: the pinned figure is not counted twice.
  s->SetMemoryLimit(0);
  s->SetMemoryLimit(limit);
  CheckEvictsBesideLocks(*s);
}

TEST_CASE("the memory total stays exact while limits change under concurrent writers",
          "[store][memory][limit][concurrency]") {
  // Writers in every shard (lock cycles, sets, deletes) while another
  // thread sets and lifts a limit that never binds: once all stop, the
  // total is the sum of the entries, and so it is with a limit set.
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 8;
  o.databases = 1;
  auto s = MakeStore(o, &clock);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      for (int i = 0; !stop.load() || i < 2000; ++i) {
        const std::string key = "w" + std::to_string(t) + ":" + std::to_string(rng() % 64);
        const std::string token(16 + rng() % 40, static_cast<char>('a' + t));
        int64_t removed = 0;
        switch (rng() % 4) {
          case 0:
            if (s->SetNx(key, token, 30000) == SetNxOutcome::kInserted &&
                s->DelIfEq(key, token) != ephpm::DelIfEqOutcome::kDeleted) {
              failures++;
            }
            break;
          case 1:
            if (s->Set(key, token) != Status::kOk) failures++;
            break;
          case 2:
            if (s->Del(key, &removed) != Status::kOk) failures++;
            break;
          default:
            if (s->SetNx(key, token, 30000) == SetNxOutcome::kOutOfMemory) failures++;
        }
      }
    });
  }
  for (int i = 0; i < 300; ++i) s->SetMemoryLimit(i % 2 == 0 ? (uint64_t{1} << 40) + i : 0);
  stop = true;
  for (auto& w : writers) w.join();
  CHECK(failures.load() == 0);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  s->SetMemoryLimit(uint64_t{1} << 40);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  // With the limit set, the global figure alone is the total: a limit just
  // under it refuses any growth.
  s->SetMemoryLimit(s->Stats().memory_used);
  CHECK(s->Set("one more", std::string(100, 'x')) == Status::kOutOfMemory);
  s->SetMemoryLimit(0);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("the pinned figure stays exact when SWAPDB meets a limit being set",
          "[store][memory][limit][lru][lock][concurrency]") {
  // SWAPDB moves the pinned bytes of whole shards; a SetMemoryLimit half
  // way through its shards may find the two databases counting
  // differently.  Lock cycles in both databases, SWAPDBs and limits set and
  // lifted, all at once; then the figure is put to the test eviction
  // relies on (as in 'locks taken before a limit count as pinned').
  // The race is one of timing: ten rounds, each a fresh store.
  for (int round = 0; round < 10; ++round) {
    ManualClock clock;
    auto o = ExactLru(0);
    o.shards = 4;
    o.databases = 2;
    auto s = MakeStore(o, &clock);
    std::atomic<bool> stop{false};
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (uint32_t db = 0; db < 2; ++db) {
      threads.emplace_back([&, db] {
        const Store::DatabaseScope scope(*s, db);
        std::mt19937 rng(db + 7);
        for (int i = 0; !stop.load() || i < 2000; ++i) {
          // Locks taken and released at random, so that shards hold some
          // when they are swapped.  A SWAPDB may move a lock to the other
          // database: a release then finds none, or the other thread's.
          const std::string key = "lock" + std::to_string(rng() % 16);
          if (rng() % 2 == 0) {
            const SetNxOutcome taken = s->SetNx(key, kToken, 30000);
            if (taken != SetNxOutcome::kInserted && taken != SetNxOutcome::kExists) failures++;
          } else {
            const ephpm::DelIfEqOutcome released = s->DelIfEq(key, kToken);
            if (released != ephpm::DelIfEqOutcome::kDeleted &&
                released != ephpm::DelIfEqOutcome::kNotMatched) {
              failures++;
            }
          }
        }
      });
    }
    threads.emplace_back([&] {
      for (int i = 0; !stop.load() || i < 2000; ++i) {
        if (s->SwapDb(0, 1) != Status::kOk) failures++;
      }
    });
    for (int i = 0; i < 20000; ++i) s->SetMemoryLimit(i % 2 == 0 ? uint64_t{1} << 40 : 0);
    stop = true;
    for (auto& t : threads) t.join();
    REQUIRE(failures.load() == 0);
    REQUIRE(s->FlushEveryDatabase() == Status::kOk);  // what a swap left behind
    CheckRefusedBesideLocks(*s, /*set_limit=*/true);
    CheckEvictsBesideLocks(*s);
  }
}
