// The expiry index (core/shard.h TtlIndex): items in (time, key address)
// order behind an end marker that no caller sees, and a root that stays
// allocated while the index empties and fills again.

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/store.h"
#include "shard.h"
#include "test_util.h"

using ephpm::BasicTtlIndex;
using ephpm::Key;
using ephpm::ManualClock;
using ephpm::Status;
using ephpm::TtlIndex;
using ephpm::TtlItem;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

constexpr int64_t kLatest = std::numeric_limits<int64_t>::max();

// An allocator that counts the allocations made through it.
template <typename T>
struct CountingAlloc {
  using value_type = T;
  explicit CountingAlloc(int* c) : count(c) {}
  template <typename U>
  CountingAlloc(const CountingAlloc<U>& o) : count(o.count) {}  // NOLINT: rebinding converts
  T* allocate(size_t n) {
    ++*count;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, size_t n) { std::allocator<T>().deallocate(p, n); }
  template <typename U>
  bool operator==(const CountingAlloc<U>& o) const { return count == o.count; }
  template <typename U>
  bool operator!=(const CountingAlloc<U>& o) const { return count != o.count; }
  int* count;
};

std::vector<std::pair<int64_t, const Key*>> Items(const TtlIndex& t) {
  std::vector<std::pair<int64_t, const Key*>> out;
  for (auto it = t.begin(); it != t.end(); ++it) out.emplace_back(it->at, it->key);
  return out;
}

}  // namespace

TEST_CASE("the expiry index's end marker is not an item", "[ttl]") {
  const std::vector<Key> keys = {Key("a"), Key("b"), Key("c")};
  TtlIndex t;
  CHECK(t.empty());
  CHECK(t.size() == 0);
  CHECK(t.begin() == t.end());
  // An item at the latest time there is still comes before the end, and
  // items of one time are ordered by address.
  CHECK(t.insert(TtlItem{kLatest, &keys[1]}).second);
  CHECK(t.insert(TtlItem{5, &keys[2]}).second);
  CHECK(t.insert(TtlItem{kLatest, &keys[0]}).second);
  CHECK_FALSE(t.insert(TtlItem{5, &keys[2]}).second);
  CHECK(t.size() == 3);
  CHECK_FALSE(t.empty());
  CHECK(Items(t) == std::vector<std::pair<int64_t, const Key*>>{
                        {5, &keys[2]}, {kLatest, &keys[0]}, {kLatest, &keys[1]}});
  CHECK(t.erase(TtlItem{kLatest, &keys[0]}) == 1);
  CHECK(t.erase(TtlItem{kLatest, &keys[0]}) == 0);
  CHECK(t.erase(TtlItem{5, &keys[2]}) == 1);
  CHECK(t.erase(TtlItem{kLatest, &keys[1]}) == 1);
  CHECK(t.empty());
  CHECK(t.begin() == t.end());

  TtlIndex other;
  CHECK(other.insert(TtlItem{7, &keys[0]}).second);
  t.swap(other);
  CHECK(Items(t) == std::vector<std::pair<int64_t, const Key*>>{{7, &keys[0]}});
  CHECK(other.empty());
  CHECK(other.begin() == other.end());
  TtlIndex().swap(t);  // how a flush empties a shard's index
  CHECK(t.empty());
  CHECK(t.insert(TtlItem{1, &keys[1]}).second);
  CHECK(t.size() == 1);
}

TEST_CASE("the expiry index agrees with an ordered set over random inserts and erases", "[ttl]") {
  std::vector<Key> keys;
  for (int i = 0; i < 40; ++i) keys.emplace_back(std::to_string(i));
  // Few distinct times, the latest among them, so that equal times and the
  // marker's neighbourhood come up often.
  const int64_t times[] = {1, 2, 3, 1000, kLatest - 1, kLatest};
  std::mt19937_64 rng(19);
  TtlIndex t;
  std::set<std::pair<int64_t, uintptr_t>> model;
  for (int step = 0; step < 20000; ++step) {
    const Key* k = &keys[rng() % keys.size()];
    const int64_t at = times[rng() % std::size(times)];
    const auto m = std::make_pair(at, reinterpret_cast<uintptr_t>(k));
    if (rng() % 2 == 0) {
      // insert tries the end first (the latest time): a hint that fits, or
      // not, must land the item in order and point at it.
      const auto [pos, inserted] = t.insert(TtlItem{at, k});
      REQUIRE(inserted == model.insert(m).second);
      REQUIRE(pos->at == at);
      REQUIRE(pos->key == k);
    } else {
      REQUIRE(t.erase(TtlItem{at, k}) == model.erase(m));
    }
    REQUIRE(t.size() == model.size());
    REQUIRE(t.empty() == model.empty());
    if (step % 97 == 0) {
      std::vector<std::pair<int64_t, uintptr_t>> seen;
      for (auto it = t.begin(); it != t.end(); ++it) {
        seen.emplace_back(it->at, reinterpret_cast<uintptr_t>(it->key));
      }
      REQUIRE(seen == std::vector<std::pair<int64_t, uintptr_t>>(model.begin(), model.end()));
    }
  }
}

TEST_CASE("an expiry index that empties and fills again allocates nothing more", "[ttl]") {
  // The lock cycle: one expiring key in a shard, set and deleted over and
  // over.  A b-tree without the marker frees its root on the erase and
  // allocates it again on the insert: 10 000 allocations here.
  int allocations = 0;
  BasicTtlIndex<CountingAlloc<TtlItem>> t{CountingAlloc<TtlItem>(&allocations)};
  const Key a("lock:a"), b("lock:b");
  REQUIRE(t.insert(TtlItem{100, &a}).second);
  REQUIRE(t.erase(TtlItem{100, &a}) == 1);
  const int after_first = allocations;
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(t.insert(TtlItem{100 + i, i % 2 == 0 ? &a : &b}).second);
    REQUIRE(t.erase(TtlItem{100 + i, i % 2 == 0 ? &a : &b}) == 1);
  }
  CHECK(allocations == after_first);
  CHECK(t.empty());
}

TEST_CASE("expiry at the latest time there is, next to the end marker", "[ttl][store]") {
  // A TTL so long that its expiry is later than every other: the entry lives,
  // is counted as a key with a TTL, and does not disturb the sweep of the
  // entries that do expire.
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  REQUIRE(s->Set("soon", "1", 10) == Status::kOk);
  REQUIRE(s->Set("late", "2", std::numeric_limits<int64_t>::max() / 2) == Status::kOk);
  REQUIRE(s->Set("never", "3", 0) == Status::kOk);
  REQUIRE(s->Set("latest", "4", 0) == Status::kOk);
  bool applied = false;
  REQUIRE(s->ExpireAt("latest", kLatest, &applied) == Status::kOk);
  REQUIRE(applied);
  CHECK(s->Stats().keys_with_ttl == 3);
  clock.Advance(11);
  std::string v;
  CHECK(s->Get("soon", &v) == Status::kNotFound);
  CHECK(s->Get("late", &v) == Status::kOk);
  CHECK(s->Get("never", &v) == Status::kOk);
  CHECK(s->Get("latest", &v) == Status::kOk);
  CHECK(s->Stats().keys_with_ttl == 2);
  int64_t removed = 0;
  CHECK(s->Del("late", &removed) == Status::kOk);
  CHECK(removed == 1);
  CHECK(s->Del("latest", &removed) == Status::kOk);
  CHECK(removed == 1);
  CHECK(s->Stats().keys_with_ttl == 0);
}
