// SWAPDB, COPY and OBJECT's view of a key (Store::SwapDb, Store::Copy,
// Store::Object): contents, TTLs, exact accounting, WATCH, waiters, atomic
// sections, refusal for memory and the log across a restart.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <thread>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/clock.h"
#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::Store;
using ephpm::StoreOptions;
using ephpm::ValueType;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::Pttl;
using ephpm_test::SumOfEntries;
using ephpm_test::TempDir;

namespace {

StoreOptions Small() {
  StoreOptions o = NoSweeper();
  o.shards = 4;
  return o;
}

// The sum of every database's entries (SumOfEntries in each).
uint64_t SumOfAll(Store& s) {
  uint64_t sum = 0;
  for (uint32_t d = 0; d < s.options().databases; ++d) {
    Store::DatabaseScope scope(s, d);
    sum += SumOfEntries(s);
  }
  return sum;
}

std::vector<std::string> List(Store& s, std::string_view key) {
  std::vector<std::string> out;
  REQUIRE(s.ListRange(key, 0, -1, &out) == Status::kOk);
  return out;
}

std::vector<std::string> Members(Store& s, std::string_view key) {
  std::vector<std::string> out;
  REQUIRE(s.SMembers(key, &out) == Status::kOk);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> Fields(Store& s, std::string_view key) {
  std::vector<std::pair<std::string, std::string>> out;
  REQUIRE(s.HGetAll(key, &out) == Status::kOk);
  std::sort(out.begin(), out.end());
  return out;
}

Store::ZMembers ZAll(Store& s, std::string_view key) {
  Store::ZRangeSpec spec;
  spec.start = 0;
  spec.stop = -1;
  Store::ZMembers out;
  REQUIRE(s.ZRange(key, spec, &out) == Status::kOk);
  return out;
}

// One key of every type in the scope's database, names prefixed.
void FillEveryType(Store& s, const std::string& p) {
  REQUIRE(s.Set(p + "str", "value-" + p, 60000) == Status::kOk);
  int64_t n = 0;
  REQUIRE(s.HSet(p + "hash", {{"f1", "v1"}, {"f2", p}}, false, &n) == Status::kOk);
  REQUIRE(s.ListPush(p + "list", {"a", "b", p}, false, false, &n) == Status::kOk);
  REQUIRE(s.SAdd(p + "set", {"1", "2", p}, &n) == Status::kOk);
  REQUIRE(s.ZAdd(p + "zset", {{1.0, "a"}, {2.5, p}}, 0, &n) == Status::kOk);
}

}  // namespace

TEST_CASE("SwapDb exchanges two databases whole, accounting unchanged") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  FillEveryType(*s, "zero-");
  {
    Store::DatabaseScope scope(*s, 1);
    FillEveryType(*s, "one-");
    REQUIRE(s->Set("shared", "from1") == Status::kOk);
  }
  REQUIRE(s->Set("shared", "from0") == Status::kOk);
  const auto before = s->Stats();
  REQUIRE(before.memory_used == SumOfAll(*s));

  REQUIRE(s->SwapDb(0, 1) == Status::kOk);
  const auto after = s->Stats();
  CHECK(after.memory_used == before.memory_used);
  CHECK(after.memory_used == SumOfAll(*s));
  CHECK(after.databases[0].keys == before.databases[1].keys);
  CHECK(after.databases[1].keys == before.databases[0].keys);
  CHECK(after.databases[0].keys_with_ttl == 1);
  CHECK(GetOr(*s, "shared") == "from1");
  CHECK(GetOr(*s, "one-str") == "value-one-");
  CHECK(Pttl(*s, "one-str") == 60000);
  CHECK(GetOr(*s, "zero-str") == "<missing>");
  CHECK(List(*s, "one-list") == std::vector<std::string>{"a", "b", "one-"});
  CHECK(Members(*s, "one-set") == std::vector<std::string>{"1", "2", "one-"});
  CHECK(Fields(*s, "one-hash").size() == 2);
  CHECK(ZAll(*s, "one-zset").size() == 2);
  {
    Store::DatabaseScope scope(*s, 1);
    CHECK(GetOr(*s, "shared") == "from0");
    CHECK(List(*s, "zero-list") == std::vector<std::string>{"a", "b", "zero-"});
    // Writes after the swap land where the scope says and stay accounted.
    REQUIRE(s->Set("later", "x") == Status::kOk);
  }
  CHECK(GetOr(*s, "later") == "<missing>");
  CHECK(s->Stats().memory_used == SumOfAll(*s));

  // Back again, and with an empty database.
  REQUIRE(s->SwapDb(1, 0) == Status::kOk);
  CHECK(GetOr(*s, "shared") == "from0");
  REQUIRE(s->SwapDb(0, 7) == Status::kOk);
  CHECK(s->DbSize() == 0);
  {
    Store::DatabaseScope scope(*s, 7);
    CHECK(GetOr(*s, "shared") == "from0");
  }
  CHECK(s->Stats().memory_used == SumOfAll(*s));

  CHECK(s->SwapDb(3, 3) == Status::kOk);
  CHECK(s->SwapDb(0, 16) == Status::kInvalidArgument);
  CHECK(s->SwapDb(16, 0) == Status::kInvalidArgument);
}

TEST_CASE("SwapDb touches watched keys present in either database and wakes waiters") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  {
    Store::DatabaseScope scope(*s, 1);
    REQUIRE(s->Set("only1", "v") == Status::kOk);
  }
  REQUIRE(s->Set("both", "a") == Status::kOk);
  {
    Store::DatabaseScope scope(*s, 1);
    REQUIRE(s->Set("both", "b") == Status::kOk);
  }
  uint64_t t_only1 = 0, t_absent = 0, t_other = 0;
  REQUIRE(s->Watch("only1", &t_only1) == Status::kOk);
  REQUIRE(s->Watch("absent", &t_absent) == Status::kOk);
  {
    Store::DatabaseScope scope(*s, 2);  // a database the swap leaves alone
    REQUIRE(s->Set("only1", "v2") == Status::kOk);
    REQUIRE(s->Watch("only1", &t_other) == Status::kOk);
  }
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("both", &info) == Status::kOk);
  const uint64_t version = info.version;

  REQUIRE(s->SwapDb(0, 1) == Status::kOk);
  bool changed = false;
  REQUIRE(s->WatchedChanged("only1", t_only1, &changed) == Status::kOk);
  CHECK(changed);
  REQUIRE(s->WatchedChanged("absent", t_absent, &changed) == Status::kOk);
  CHECK_FALSE(changed);
  {
    Store::DatabaseScope scope(*s, 2);
    REQUIRE(s->WatchedChanged("only1", t_other, &changed) == Status::kOk);
    CHECK_FALSE(changed);
    s->Unwatch("only1");
  }
  s->Unwatch("only1");
  s->Unwatch("absent");

  // A waiter on "both" with the old version sees a change at once.
  ephpm::WaitResult r;
  REQUIRE(s->WaitForChange("both", version, 0, &r) == Status::kOk);
  CHECK(r.changed);
  CHECK(r.value == "b");
}

TEST_CASE("SwapDb is one step for every other thread") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  // Sixteen keys (over the four shards) hold "0" in database 0 and "1" in
  // database 1: a reader holding their shards must never see a mix.
  std::vector<std::string> keys;
  for (int i = 0; i < 16; ++i) keys.push_back("k" + std::to_string(i));
  for (uint32_t d = 0; d < 2; ++d) {
    Store::DatabaseScope scope(*s, d);
    for (const auto& k : keys) REQUIRE(s->Set(k, std::to_string(d)) == Status::kOk);
  }
  std::atomic<bool> stop{false};
  std::atomic<int> swap_errors{0};
  std::thread swapper([&] {
    while (!stop.load()) {
      if (s->SwapDb(0, 1) != Status::kOk) swap_errors.fetch_add(1);
    }
  });
  std::vector<std::string_view> views(keys.begin(), keys.end());
  int mixed = 0, rounds = 0;
  for (; rounds < 2000; ++rounds) {
    std::vector<std::string> seen;
    REQUIRE(s->Atomically(views, false, [&] {
      for (const auto& k : keys) seen.push_back(GetOr(*s, k));
    }) == Status::kOk);
    if (std::count(seen.begin(), seen.end(), seen[0]) != static_cast<long>(seen.size()) ||
        (seen[0] != "0" && seen[0] != "1")) {
      ++mixed;
    }
  }
  stop.store(true);
  swapper.join();
  CHECK(mixed == 0);
  CHECK(swap_errors.load() == 0);
  CHECK(s->Stats().memory_used == SumOfAll(*s));
}

TEST_CASE("SwapDb inside an atomic section needs both databases") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  REQUIRE(s->Set("k", "zero") == Status::kOk);
  Status inner = Status::kOk;
  REQUIRE(s->AtomicallyIn({}, {0}, [&] { inner = s->SwapDb(0, 1); }) == Status::kOk);
  CHECK(inner == Status::kInvalidArgument);
  CHECK(GetOr(*s, "k") == "zero");
  REQUIRE(s->AtomicallyIn({}, {0, 1}, [&] {
    inner = s->SwapDb(0, 1);
    // Later calls of the section see the swap.
    CHECK(GetOr(*s, "k") == "<missing>");
  }) == Status::kOk);
  CHECK(inner == Status::kOk);
  Store::DatabaseScope scope(*s, 1);
  CHECK(GetOr(*s, "k") == "zero");
}

TEST_CASE("SwapDb survives a restart, before and after a snapshot") {
  TempDir dir;
  ManualClock clock(1000000);
  StoreOptions o = Small();
  o.persistence.data_dir = dir.path;
  {
    auto s = MakeStore(o, &clock);
    FillEveryType(*s, "zero-");
    {
      Store::DatabaseScope scope(*s, 4);
      FillEveryType(*s, "four-");
    }
    REQUIRE(s->SwapDb(0, 4) == Status::kOk);
    REQUIRE(s->Set("after", "swap") == Status::kOk);  // into database 0
  }
  {
    auto s = MakeStore(o, &clock);
    CHECK(GetOr(*s, "four-str") == "value-four-");
    CHECK(Pttl(*s, "four-str") == 60000);
    CHECK(GetOr(*s, "after") == "swap");
    CHECK(GetOr(*s, "zero-str") == "<missing>");
    CHECK(List(*s, "four-list") == std::vector<std::string>{"a", "b", "four-"});
    CHECK(Members(*s, "four-set") == std::vector<std::string>{"1", "2", "four-"});
    CHECK(Fields(*s, "four-hash").size() == 2);
    CHECK(ZAll(*s, "four-zset").size() == 2);
    {
      Store::DatabaseScope scope(*s, 4);
      CHECK(GetOr(*s, "zero-str") == "value-zero-");
      CHECK(GetOr(*s, "after") == "<missing>");
    }
    CHECK(s->Stats().memory_used == SumOfAll(*s));
    // A snapshot, then another swap logged after it.
    std::string message;
    REQUIRE(s->Rewrite(false, &message) == Status::kOk);
    REQUIRE(s->SwapDb(4, 0) == Status::kOk);
    REQUIRE(s->Set("post", "snapshot") == Status::kOk);  // into database 0, zero-* again
  }
  {
    auto s = MakeStore(o, &clock);
    CHECK(GetOr(*s, "zero-str") == "value-zero-");
    CHECK(GetOr(*s, "after") == "<missing>");
    CHECK(GetOr(*s, "post") == "snapshot");
    Store::DatabaseScope scope(*s, 4);
    CHECK(GetOr(*s, "four-str") == "value-four-");
    CHECK(GetOr(*s, "after") == "swap");
    CHECK(s->Stats().memory_used == SumOfAll(*s));
  }
}

TEST_CASE("Copy copies every type with its TTL, accounted exactly") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  FillEveryType(*s, "");
  bool copied = false;
  std::vector<std::pair<uint64_t, bool>> growth;  // a long key's extra bytes, with a TTL?
  for (const char* k : {"str", "hash", "list", "set", "zset"}) {
    const std::string dst = std::string(k) + "2";
    REQUIRE(s->Copy(k, dst, 0, false, &copied) == Status::kOk);
    CHECK(copied);
    ephpm::EntryInfo a, b;
    REQUIRE(s->Inspect(k, &a) == Status::kOk);
    REQUIRE(s->Inspect(dst, &b) == Status::kOk);
    CHECK(a.type == b.type);
    CHECK(a.value_size == b.value_size);
    // Both keys fit in the key object (30 bytes or fewer): the same size.
    CHECK(b.mem_size == a.mem_size);
    CHECK(a.expires_at_ms == b.expires_at_ms);
    // A key too long for that has a buffer of its own (one: the expiry
    // index points at the entry's key, it does not copy it).
    const std::string long_dst =
        "a-copy-under-a-name-longer-than-a-key-holds-" + std::to_string(growth.size());
    REQUIRE(s->Copy(k, long_dst, 0, false, &copied) == Status::kOk);
    ephpm::EntryInfo c;
    REQUIRE(s->Inspect(long_dst, &c) == Status::kOk);
    REQUIRE(c.mem_size > a.mem_size);
    growth.emplace_back(c.mem_size - a.mem_size, a.expires_at_ms != 0);
    int64_t gone = 0;
    REQUIRE(s->Del(long_dst, &gone) == Status::kOk);
  }
  uint64_t plain = 0;
  for (const auto& [g, ttl] : growth) {
    if (!ttl) plain = g;
  }
  REQUIRE(plain > 0);
  bool saw_ttl = false;
  for (const auto& [g, ttl] : growth) {
    CHECK(g == plain);
    saw_ttl = saw_ttl || ttl;
  }
  CHECK(saw_ttl);
  CHECK(GetOr(*s, "str2") == "value-");
  CHECK(Pttl(*s, "str2") == 60000);
  CHECK(List(*s, "list2") == List(*s, "list"));
  CHECK(Members(*s, "set2") == Members(*s, "set"));
  CHECK(Fields(*s, "hash2") == Fields(*s, "hash"));
  CHECK(ZAll(*s, "zset2") == ZAll(*s, "zset"));
  CHECK(s->Stats().memory_used == SumOfAll(*s));

  // Independent: changing the copy leaves the source alone.
  int64_t n = 0;
  REQUIRE(s->ListPush("list2", {"more"}, false, false, &n) == Status::kOk);
  CHECK(List(*s, "list").size() == 3);
  REQUIRE(s->SAdd("set2", {"new"}, &n) == Status::kOk);
  CHECK(Members(*s, "set").size() == 3);

  // An existing destination: kept without replace, overwritten (any type)
  // with it.
  REQUIRE(s->Copy("zset", "str2", 0, false, &copied) == Status::kOk);
  CHECK_FALSE(copied);
  CHECK(GetOr(*s, "str2") == "value-");
  REQUIRE(s->Copy("zset", "str2", 0, true, &copied) == Status::kOk);
  CHECK(copied);
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("str2", &info) == Status::kOk);
  CHECK(info.type == ValueType::kZSet);
  CHECK(info.expires_at_ms == 0);
  CHECK(s->Stats().memory_used == SumOfAll(*s));

  // Missing or expired source.
  REQUIRE(s->Copy("nothere", "x", 0, true, &copied) == Status::kOk);
  CHECK_FALSE(copied);
  clock.Advance(60001);
  REQUIRE(s->Copy("str", "x", 0, true, &copied) == Status::kOk);
  CHECK_FALSE(copied);
  CHECK(GetOr(*s, "x") == "<missing>");

  // To another database, the same name included.
  REQUIRE(s->Copy("list", "list", 3, false, &copied) == Status::kOk);
  CHECK(copied);
  {
    Store::DatabaseScope scope(*s, 3);
    CHECK(List(*s, "list") == std::vector<std::string>{"a", "b", ""});
  }
  CHECK(s->Stats().memory_used == SumOfAll(*s));

  CHECK(s->Copy("list", "list", 0, true, &copied) == Status::kInvalidArgument);
  CHECK(s->Copy("list", "l", 16, true, &copied) == Status::kInvalidArgument);
}

TEST_CASE("Copy refused for memory changes nothing") {
  ManualClock clock(1000000);
  StoreOptions o = Small();
  o.memory_limit = 64 * 1024;
  auto s = MakeStore(o, &clock);
  std::vector<std::string> items(300, std::string(100, 'x'));
  std::vector<std::string_view> views(items.begin(), items.end());
  int64_t n = 0;
  REQUIRE(s->ListPush("big", views, false, false, &n) == Status::kOk);
  REQUIRE(s->Set("dst", "keep") == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  REQUIRE(used * 2 > o.memory_limit);  // a second copy cannot fit
  bool copied = true;
  CHECK(s->Copy("big", "dst", 0, true, &copied) == Status::kOutOfMemory);
  CHECK_FALSE(copied);
  CHECK(GetOr(*s, "dst") == "keep");
  CHECK(s->Stats().memory_used == used);
  CHECK(s->Stats().memory_used == SumOfAll(*s));
  CHECK(s->Copy("big", "fresh", 0, false, &copied) == Status::kOutOfMemory);
  bool exists = true;
  REQUIRE(s->Exists("fresh", &exists) == Status::kOk);
  CHECK_FALSE(exists);
}

TEST_CASE("Copy inside an atomic section needs the destination's shard") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  REQUIRE(s->Set("k", "v") == Status::kOk);
  Status inner = Status::kOk;
  bool copied = false;
  REQUIRE(s->Atomically({"k"}, false, [&] { inner = s->Copy("k", "k", 2, false, &copied); }) ==
          Status::kOk);
  CHECK(inner == Status::kInvalidArgument);
  REQUIRE(s->AtomicallyIn({{0, "k"}, {2, "k"}}, {}, [&] {
    inner = s->Copy("k", "k", 2, false, &copied);
  }) == Status::kOk);
  CHECK(inner == Status::kOk);
  CHECK(copied);
}

TEST_CASE("Object describes a key's shape without touching it") {
  ManualClock clock(1000000);
  auto s = MakeStore(Small(), &clock);
  Store::ObjectShape o;
  CHECK(s->Object("nothere", &o) == Status::kNotFound);
  REQUIRE(s->Set("i", "-1234") == Status::kOk);
  REQUIRE(s->Object("i", &o) == Status::kOk);
  CHECK(o.type == ValueType::kString);
  CHECK(o.integers);
  CHECK(o.integer == -1234);
  CHECK(o.size == 5);
  REQUIRE(s->Set("i", "0123") == Status::kOk);
  REQUIRE(s->Object("i", &o) == Status::kOk);
  CHECK_FALSE(o.integers);
  int64_t n = 0;
  REQUIRE(s->SAdd("si", {"1", "-2", "30"}, &n) == Status::kOk);
  REQUIRE(s->Object("si", &o) == Status::kOk);
  CHECK(o.integers);
  CHECK(o.size == 3);
  REQUIRE(s->SAdd("si", {"x"}, &n) == Status::kOk);
  REQUIRE(s->Object("si", &o) == Status::kOk);
  CHECK_FALSE(o.integers);
  REQUIRE(s->HSet("h", {{"f", std::string(70, 'v')}}, false, &n) == Status::kOk);
  REQUIRE(s->Object("h", &o) == Status::kOk);
  CHECK(o.longest == 70);
  CHECK(o.size == 1);
  REQUIRE(s->ZAdd("z", {{1.0, "abc"}, {2.0, "abcdef"}}, 0, &n) == Status::kOk);
  REQUIRE(s->Object("z", &o) == Status::kOk);
  CHECK(o.longest == 6);
  CHECK(o.size == 2);
  clock.Advance(5000);
  REQUIRE(s->Object("z", &o) == Status::kOk);
  CHECK(o.idle_ms == 5000);
  REQUIRE(s->Set("t", "v", 10) == Status::kOk);
  clock.Advance(10);
  CHECK(s->Object("t", &o) == Status::kNotFound);
}
