// Single-threaded contracts of ephpm::Store, on a manual clock (the fenced
// writes are in store_fence_test.cc).

#include <algorithm>
#include <cstring>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::DelIfEqOutcome;
using ephpm::ManualClock;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::Pttl;
using namespace std::string_literals;

namespace {

bool Exists(Store& s, std::string_view key) {
  bool e = false;
  REQUIRE(s.Exists(key, &e) == Status::kOk);
  return e;
}

int64_t Del(Store& s, std::string_view key) {
  int64_t n = -1;
  REQUIRE(s.Del(key, &n) == Status::kOk);
  return n;
}

uint64_t Version(Store& s, std::string_view key) {
  ephpm::EntryInfo info;
  return s.Inspect(key, &info) == Status::kOk ? info.version : 0;
}

}  // namespace

TEST_CASE("options are validated", "[store][options]") {
  std::string error;
  ephpm::StoreOptions o;
  o.shards = 48;
  CHECK(Store::Create(o, &error) == nullptr);
  CHECK(error.find("power of two") != std::string::npos);
  o.shards = 0;
  CHECK(Store::Create(o, &error) == nullptr);
  o = {};
  o.compression = ephpm::Compression::kZstd;
  o.compression_level = 99;
  CHECK(Store::Create(o, &error) == nullptr);
  CHECK(error.find("compression_level") != std::string::npos);
  o = {};
  o.max_value_size = 0;
  CHECK(Store::Create(o, &error) == nullptr);
  o = {};
  o.max_value_size = ephpm::kMaxValueSizeLimit + 1;
  CHECK(Store::Create(o, &error) == nullptr);
  CHECK(error == "max_value_size must be at most 2G");
  o.max_value_size = ephpm::kMaxValueSizeLimit;
  CHECK(Store::Create(o, &error) != nullptr);
  o = {};
  o.eviction_samples = 0;
  CHECK(Store::Create(o, &error) == nullptr);
  o = {};
  o.sweep_interval_ms = -1;
  CHECK(Store::Create(o, &error) == nullptr);
  o = {};
  CHECK(ephpm::ValidateOptions(o).empty());
  CHECK(o.shards >= 64);
  CHECK((o.shards & (o.shards - 1)) == 0);
}

TEST_CASE("get and set round-trip binary keys and values", "[store]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::string v;
  CHECK(s->Get("missing", &v) == Status::kNotFound);
  CHECK(s->Set("k", "v") == Status::kOk);
  CHECK(GetOr(*s, "k") == "v");
  CHECK(s->Set("k", "v2") == Status::kOk);  // replaces
  CHECK(GetOr(*s, "k") == "v2");

  const std::string bkey = "a\0b\xff"s, bval = "\0\0x\0"s;
  CHECK(s->Set(bkey, bval) == Status::kOk);
  CHECK(GetOr(*s, bkey) == bval);
  CHECK(GetOr(*s, "a"s) == "<missing>");  // the NUL is part of the key

  CHECK(s->Set("", "empty key is valid") == Status::kOk);
  CHECK(GetOr(*s, "") == "empty key is valid");
  CHECK(s->Set("empty", "") == Status::kOk);
  CHECK(GetOr(*s, "empty") == "");
  CHECK(s->DbSize() == 4);
}

TEST_CASE("over-long keys and values are refused and change nothing", "[store][limits]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.max_value_size = 100;
  auto s = MakeStore(o, &clock);
  const std::string max_key(ephpm::kMaxKeySize, 'k');
  const std::string long_key(ephpm::kMaxKeySize + 1, 'k');
  CHECK(s->Set(max_key, "ok") == Status::kOk);
  CHECK(GetOr(*s, max_key) == "ok");
  CHECK(s->Set("v", std::string(100, 'x')) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;

  std::string v;
  int64_t n = 0;
  bool b = false;
  std::vector<std::string> keys;
  ephpm::WaitResult w;
  ephpm::EntryInfo info;
  CHECK(s->Set(long_key, "x") == Status::kInvalidArgument);
  CHECK(s->Set("v", std::string(101, 'x')) == Status::kInvalidArgument);
  CHECK(s->SetNx(long_key, "x") == SetNxOutcome::kInvalidArgument);
  CHECK(s->SetNx("new", std::string(101, 'x')) == SetNxOutcome::kInvalidArgument);
  CHECK(s->Get(long_key, &v) == Status::kInvalidArgument);
  CHECK(s->Del(long_key, &n) == Status::kInvalidArgument);
  CHECK(s->DelIfEq(long_key, "x") == DelIfEqOutcome::kInvalidArgument);
  CHECK(s->DelIfEq("v", std::string(101, 'x')) == DelIfEqOutcome::kInvalidArgument);
  CHECK(s->Exists(long_key, &b) == Status::kInvalidArgument);
  CHECK(s->IncrBy(long_key, 1, &n) == Status::kInvalidArgument);
  CHECK(s->Expire(long_key, 10, &b) == Status::kInvalidArgument);
  CHECK(s->Persist(long_key, &b) == Status::kInvalidArgument);
  CHECK(s->Pttl(long_key, &n) == Status::kInvalidArgument);
  CHECK(s->Rename("v", long_key, false, &b) == Status::kInvalidArgument);
  CHECK(s->WaitForChange(long_key, 0, 0, &w) == Status::kInvalidArgument);
  CHECK(s->Inspect(long_key, &info) == Status::kInvalidArgument);
  CHECK(GetOr(*s, "v") == std::string(100, 'x'));
  CHECK(s->DbSize() == 2);
  CHECK(s->Stats().memory_used == used);
}

TEST_CASE("negative TTLs and expiries past int64 are refused", "[store][ttl][limits]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool applied = false;
  ephpm::WaitResult w;
  CHECK(s->Set("k", "v", -1) == Status::kInvalidArgument);
  CHECK(s->SetNx("k", "v", -5) == SetNxOutcome::kInvalidArgument);
  CHECK(s->DbSize() == 0);
  CHECK(s->Set("k", "v", INT64_MAX) == Status::kInvalidArgument);
  CHECK(s->Set("k", "v") == Status::kOk);
  CHECK(s->Expire("k", INT64_MAX, &applied) == Status::kInvalidArgument);
  CHECK(Pttl(*s, "k") == -1);
  CHECK(s->WaitForChange("k", 0, -1, &w) == Status::kInvalidArgument);
}

TEST_CASE("TTL edges: 1 ms, expiry exactly now, 0 means none", "[store][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(s->Set("none", "v", 0) == Status::kOk);
  CHECK(Pttl(*s, "none") == -1);

  CHECK(s->Set("one", "v", 1) == Status::kOk);
  CHECK(Pttl(*s, "one") == 1);
  CHECK(GetOr(*s, "one") == "v");
  clock.Advance(1);  // expiry is exactly now: gone
  CHECK(GetOr(*s, "one") == "<missing>");
  CHECK(Pttl(*s, "one") == -2);

  CHECK(s->Set("sec", "v", 1000) == Status::kOk);
  clock.Advance(999);
  CHECK(Pttl(*s, "sec") == 1);
  CHECK(Exists(*s, "sec"));
  clock.Advance(1);
  CHECK_FALSE(Exists(*s, "sec"));

  bool applied = false;
  CHECK(s->Set("at", "v") == Status::kOk);
  CHECK(s->ExpireAt("at", clock.NowMs() + 1, &applied) == Status::kOk);
  CHECK(applied);
  CHECK(Pttl(*s, "at") == 1);
  CHECK(s->ExpireAt("at", clock.NowMs(), &applied) == Status::kOk);  // now: deletes
  CHECK(applied);
  CHECK(Pttl(*s, "at") == -2);
}

TEST_CASE("an expired entry is absent for every operation before it is reaped",
          "[store][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  auto expired = [&](const std::string& key, std::string value = "old") {
    REQUIRE(s->Set(key, value, 100) == Status::kOk);
    clock.Advance(100);
  };

  expired("get");
  std::string v;
  CHECK(s->Get("get", &v) == Status::kNotFound);

  expired("exists");
  CHECK_FALSE(Exists(*s, "exists"));

  expired("setnx");
  CHECK(s->SetNx("setnx", "new") == SetNxOutcome::kInserted);
  CHECK(GetOr(*s, "setnx") == "new");
  CHECK(Pttl(*s, "setnx") == -1);  // the old TTL is gone with the old entry

  expired("delifeq", "tok");
  CHECK(s->DelIfEq("delifeq", "tok") == DelIfEqOutcome::kNotMatched);

  expired("incr", "41");
  int64_t n = 0;
  CHECK(s->IncrBy("incr", 5, &n) == Status::kOk);
  CHECK(n == 5);  // starts from 0, not 41
  CHECK(Pttl(*s, "incr") == -1);

  expired("del");
  CHECK(Del(*s, "del") == 0);

  bool applied = true;
  expired("expire");
  CHECK(s->Expire("expire", 1000, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  expired("persist");
  CHECK(s->Persist("persist", &applied) == Status::kOk);
  CHECK_FALSE(applied);

  expired("pttl");
  CHECK(Pttl(*s, "pttl") == -2);

  expired("inspect");
  ephpm::EntryInfo info;
  CHECK(s->Inspect("inspect", &info) == Status::kNotFound);

  expired("rename");
  CHECK(s->Rename("rename", "renamed", false, &applied) == Status::kNotFound);

  expired("wait");
  ephpm::WaitResult w;
  CHECK(s->WaitForChange("wait", 0, 0, &w) == Status::kOk);
  CHECK_FALSE(w.changed);
  CHECK(w.version == 0);

  s->Flush();
  expired("keys:a");
  CHECK(s->Set("keys:b", "live") == Status::kOk);
  std::vector<std::string> keys;
  CHECK(s->Keys("keys:*", &keys) == Status::kOk);
  CHECK(keys == std::vector<std::string>{"keys:b"});
  CHECK(s->DbSize() == 1);
  CHECK(s->Stats().keys == 1);
}

TEST_CASE("set replaces the TTL and expire, persist and pttl behave as in Redis", "[store][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool applied = false;
  CHECK(s->Set("k", "v", 5000) == Status::kOk);
  CHECK(Pttl(*s, "k") == 5000);
  CHECK(s->Set("k", "v2") == Status::kOk);  // SET without a TTL clears it
  CHECK(Pttl(*s, "k") == -1);

  CHECK(s->Expire("k", 2500, &applied) == Status::kOk);
  CHECK(applied);
  CHECK(Pttl(*s, "k") == 2500);
  CHECK(s->Persist("k", &applied) == Status::kOk);
  CHECK(applied);
  CHECK(Pttl(*s, "k") == -1);
  CHECK(s->Persist("k", &applied) == Status::kOk);
  CHECK_FALSE(applied);  // no TTL to remove
  CHECK(s->Persist("missing", &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->Expire("missing", 100, &applied) == Status::kOk);
  CHECK_FALSE(applied);

  // A TTL <= 0 deletes the key, as EXPIRE k -1 does in Redis.
  CHECK(s->Expire("k", 0, &applied) == Status::kOk);
  CHECK(applied);
  CHECK_FALSE(Exists(*s, "k"));
  CHECK(s->Set("k", "v") == Status::kOk);
  CHECK(s->Expire("k", -1, &applied) == Status::kOk);
  CHECK(applied);
  CHECK_FALSE(Exists(*s, "k"));
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("del counts what it removed", "[store]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(Del(*s, "k") == 0);
  CHECK(s->Set("k", "v") == Status::kOk);
  CHECK(Del(*s, "k") == 1);
  CHECK(Del(*s, "k") == 0);
  CHECK(s->DbSize() == 0);
}

TEST_CASE("set_nx creates only when absent", "[store][lock]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(s->SetNx("lock", "t1", 30000) == SetNxOutcome::kInserted);
  CHECK(s->SetNx("lock", "t2", 30000) == SetNxOutcome::kExists);
  CHECK(GetOr(*s, "lock") == "t1");
  CHECK(Pttl(*s, "lock") == 30000);
}

TEST_CASE("del_if_eq removes only an exactly equal live value", "[store][lock]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(s->DelIfEq("lock", "tok") == DelIfEqOutcome::kNotMatched);  // missing
  CHECK(s->Set("lock", "token") == Status::kOk);
  CHECK(s->DelIfEq("lock", "tok") == DelIfEqOutcome::kNotMatched);     // prefix
  CHECK(s->DelIfEq("lock", "token!") == DelIfEqOutcome::kNotMatched);  // longer
  CHECK(s->DelIfEq("lock", "TOKEN") == DelIfEqOutcome::kNotMatched);
  CHECK(s->DelIfEq("lock", "") == DelIfEqOutcome::kNotMatched);
  CHECK(GetOr(*s, "lock") == "token");
  CHECK(s->DelIfEq("lock", "token") == DelIfEqOutcome::kDeleted);
  CHECK_FALSE(Exists(*s, "lock"));
  CHECK(s->DelIfEq("lock", "token") == DelIfEqOutcome::kNotMatched);

  CHECK(s->Set("bin", "a\0b"s) == Status::kOk);
  CHECK(s->DelIfEq("bin", "a"s) == DelIfEqOutcome::kNotMatched);
  CHECK(s->DelIfEq("bin", "a\0b"s) == DelIfEqOutcome::kDeleted);
  CHECK(s->Set("empty", "") == Status::kOk);
  CHECK(s->DelIfEq("empty", "") == DelIfEqOutcome::kDeleted);
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("del_if_eq never matches an expired entry", "[store][lock][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  CHECK(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kInserted);
  clock.Advance(999);
  CHECK(Exists(*s, "lock"));
  clock.Advance(1);
  CHECK(s->DelIfEq("lock", "tok") == DelIfEqOutcome::kNotMatched);
  CHECK(s->Stats().expired == 1);  // it was reaped as expired, not deleted
}

TEST_CASE("the design note's scenario: a late plain del breaks B's lock, del_if_eq does not",
          "[store][lock][scenario]") {
  for (const bool use_del_if_eq : {false, true}) {
    DYNAMIC_SECTION((use_del_if_eq ? "del_if_eq" : "del")) {
      ManualClock clock;
      auto s = MakeStore(NoSweeper(), &clock);
      CHECK(s->SetNx("lock:nightly-report", "a", 1000) == SetNxOutcome::kInserted);
      clock.Advance(1200);  // A overruns its TTL
      CHECK(s->SetNx("lock:nightly-report", "B", 30000) == SetNxOutcome::kInserted);
      if (use_del_if_eq) {
        CHECK(s->DelIfEq("lock:nightly-report", "a") == DelIfEqOutcome::kNotMatched);
        CHECK(s->SetNx("lock:nightly-report", "c", 30000) == SetNxOutcome::kExists);
        CHECK(GetOr(*s, "lock:nightly-report") == "B");
      } else {
        CHECK(Del(*s, "lock:nightly-report") == 1);  // deleted B's lock
        CHECK(s->SetNx("lock:nightly-report", "c", 30000) == SetNxOutcome::kInserted);
        CHECK(GetOr(*s, "lock:nightly-report") == "c");
      }
    }
  }
}

TEST_CASE("incr_by parses canonical int64 text and keeps the value on error", "[store][incr]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  CHECK(s->IncrBy("c", 1, &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(s->IncrBy("c", -11, &n) == Status::kOk);
  CHECK(n == -10);
  CHECK(GetOr(*s, "c") == "-10");

  for (const std::string& bad : std::vector<std::string>{"abc", " 1", "1 ", "01", "+1", "-0", "1.5", "", "1\0"s}) {
    INFO(bad);
    REQUIRE(s->Set("bad", bad) == Status::kOk);
    CHECK(s->IncrBy("bad", 1, &n) == Status::kNotInteger);
    CHECK(GetOr(*s, "bad") == bad);
  }
  CHECK(s->Set("big", std::string(21, '1')) == Status::kOk);
  CHECK(s->IncrBy("big", 1, &n) == Status::kNotInteger);

  CHECK(s->Set("max", "9223372036854775807") == Status::kOk);
  CHECK(s->IncrBy("max", 1, &n) == Status::kOverflow);
  CHECK(GetOr(*s, "max") == "9223372036854775807");
  CHECK(s->Set("min", "-9223372036854775808") == Status::kOk);
  CHECK(s->IncrBy("min", -1, &n) == Status::kOverflow);
  CHECK(s->IncrBy("min", INT64_MAX, &n) == Status::kOk);
  CHECK(n == -1);

  CHECK(s->Set("ttl", "5", 10000) == Status::kOk);
  clock.Advance(4000);
  CHECK(s->IncrBy("ttl", 1, &n) == Status::kOk);
  CHECK(Pttl(*s, "ttl") == 6000);  // INCR keeps the TTL
}

TEST_CASE("keys matches Redis globs over live keys", "[store][keys]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  for (const char* k : {"user:1", "user:2", "user:10", "session:1"}) {
    REQUIRE(s->Set(k, "v") == Status::kOk);
  }
  REQUIRE(s->Set("a\0b"s, "v") == Status::kOk);
  auto keys = [&](std::string_view pattern) {
    std::vector<std::string> out;
    REQUIRE(s->Keys(pattern, &out) == Status::kOk);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(keys("user:?") == std::vector<std::string>{"user:1", "user:2"});
  CHECK(keys("user:*") == std::vector<std::string>{"user:1", "user:10", "user:2"});
  CHECK(keys("*:1") == std::vector<std::string>{"session:1", "user:1"});
  CHECK(keys("a\0*"s) == std::vector<std::string>{"a\0b"s});
  CHECK(keys("nothing*").empty());
  CHECK(keys("*").size() == 5);
}

TEST_CASE("flush removes everything and zeroes memory", "[store]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), "v", i % 2 ? 1000 : 0) == Status::kOk);
  }
  CHECK(s->DbSize() == 1000);
  CHECK(s->Stats().memory_used > 0);
  s->Flush();
  CHECK(s->DbSize() == 0);
  CHECK(s->Stats().memory_used == 0);
  CHECK(s->Set("k1", "again") == Status::kOk);
  CHECK(GetOr(*s, "k1") == "again");
}

TEST_CASE("rename moves value and TTL, honours only_if_absent", "[store][rename]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool renamed = false;
  CHECK(s->Rename("nope", "dst", false, &renamed) == Status::kNotFound);

  REQUIRE(s->Set("src", "value", 5000) == Status::kOk);
  CHECK(s->Rename("src", "dst", false, &renamed) == Status::kOk);
  CHECK(renamed);
  CHECK_FALSE(Exists(*s, "src"));
  CHECK(GetOr(*s, "dst") == "value");
  CHECK(Pttl(*s, "dst") == 5000);

  REQUIRE(s->Set("other", "x") == Status::kOk);
  CHECK(s->Rename("other", "dst", true, &renamed) == Status::kOk);
  CHECK_FALSE(renamed);  // dst exists
  CHECK(GetOr(*s, "dst") == "value");
  CHECK(s->Rename("other", "dst", false, &renamed) == Status::kOk);
  CHECK(renamed);
  CHECK(GetOr(*s, "dst") == "x");
  CHECK(Pttl(*s, "dst") == -1);  // replaced together with its TTL

  CHECK(s->Rename("dst", "dst", false, &renamed) == Status::kOk);
  CHECK(renamed);
  CHECK(s->Rename("dst", "dst", true, &renamed) == Status::kOk);
  CHECK_FALSE(renamed);
  CHECK(GetOr(*s, "dst") == "x");

  // Many renames across shards keep the counts and memory exact.
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s->Set("r" + std::to_string(i), std::string(i, 'v'), i % 3 ? 9000 : 0) ==
            Status::kOk);
  }
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s->Rename("r" + std::to_string(i), "s" + std::to_string(i), false, &renamed) ==
            Status::kOk);
  }
  CHECK(s->DbSize() == 201);
  for (int i = 0; i < 200; ++i) CHECK(GetOr(*s, "s" + std::to_string(i)) == std::string(i, 'v'));
  s->Flush();
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("every write, delete and expiry moves a key's version", "[store][version]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool applied = false;
  int64_t n = 0;
  CHECK(Version(*s, "k") == 0);
  REQUIRE(s->Set("k", "1") == Status::kOk);
  const uint64_t v1 = Version(*s, "k");
  CHECK(v1 != 0);
  REQUIRE(s->Set("k", "1") == Status::kOk);  // same value still moves it
  const uint64_t v2 = Version(*s, "k");
  CHECK(v2 != v1);
  REQUIRE(s->IncrBy("k", 1, &n) == Status::kOk);
  const uint64_t v3 = Version(*s, "k");
  CHECK(v3 != v2);
  REQUIRE(s->Expire("k", 100, &applied) == Status::kOk);
  const uint64_t v4 = Version(*s, "k");
  CHECK(v4 != v3);
  REQUIRE(s->Persist("k", &applied) == Status::kOk);
  const uint64_t v5 = Version(*s, "k");
  CHECK(v5 != v4);
  CHECK(Del(*s, "k") == 1);
  CHECK(Version(*s, "k") == 0);
  REQUIRE(s->Set("k", "again", 10) == Status::kOk);
  const uint64_t v6 = Version(*s, "k");
  CHECK(v6 != 0);
  for (uint64_t old : {v1, v2, v3, v4, v5}) CHECK(v6 != old);  // never reused
  clock.Advance(10);
  CHECK(Version(*s, "k") == 0);
}

TEST_CASE("wait_for_change returns the state, times out, and is woken by changes",
          "[store][wait]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  ephpm::WaitResult w;

  SECTION("a missing key times out with version 0") {
    CHECK(s->WaitForChange("k", 0, 20, &w) == Status::kOk);
    CHECK_FALSE(w.changed);
    CHECK_FALSE(w.found);
    CHECK(w.version == 0);
  }
  SECTION("a differing version returns at once with the value") {
    REQUIRE(s->Set("k", "hello") == Status::kOk);
    CHECK(s->WaitForChange("k", 0, 60000, &w) == Status::kOk);
    CHECK(w.changed);
    CHECK(w.found);
    CHECK(w.value == "hello");
    CHECK(w.version == Version(*s, "k"));
    const uint64_t seen = w.version;
    CHECK(s->WaitForChange("k", seen, 20, &w) == Status::kOk);
    CHECK_FALSE(w.changed);
    CHECK(w.version == seen);
  }
  SECTION("a set from another thread wakes the waiter") {
    REQUIRE(s->Set("k", "v1") == Status::kOk);
    const uint64_t seen = Version(*s, "k");
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      (void)s->Set("k", "v2");
    });
    const Status st = s->WaitForChange("k", seen, 60000, &w);
    writer.join();
    CHECK(st == Status::kOk);
    CHECK(w.changed);
    CHECK(w.value == "v2");
  }
  SECTION("a delete wakes the waiter with the key absent") {
    REQUIRE(s->Set("k", "v1") == Status::kOk);
    const uint64_t seen = Version(*s, "k");
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      int64_t n = 0;
      (void)s->Del("k", &n);
    });
    const Status st = s->WaitForChange("k", seen, 60000, &w);
    writer.join();
    CHECK(st == Status::kOk);
    CHECK(w.changed);
    CHECK_FALSE(w.found);
    CHECK(w.version == 0);
  }
  SECTION("a timeout of INT64_MAX ms waits (and is woken) instead of overflowing") {
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      (void)s->Set("k", "late");
    });
    const Status st = s->WaitForChange("k", 0, INT64_MAX, &w);
    writer.join();
    CHECK(st == Status::kOk);
    CHECK(w.changed);
    CHECK(w.value == "late");
  }
  SECTION("a waiter on an absent key is woken when it is created") {
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      (void)s->SetNx("k", "created");
    });
    const Status st = s->WaitForChange("k", 0, 60000, &w);
    writer.join();
    CHECK(st == Status::kOk);
    CHECK(w.changed);
    CHECK(w.value == "created");
  }
}

TEST_CASE("wait_for_change wakes when the watched entry expires", "[store][wait][ttl]") {
  // Real time: the waiter must notice an expiry that nobody else touches.
  auto s = MakeStore(NoSweeper(), ephpm::SystemClock());
  REQUIRE(s->Set("k", "v", 50) == Status::kOk);
  const uint64_t seen = Version(*s, "k");
  ephpm::WaitResult w;
  const auto start = std::chrono::steady_clock::now();
  CHECK(s->WaitForChange("k", seen, 60000, &w) == Status::kOk);
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(w.changed);
  CHECK_FALSE(w.found);
  CHECK(w.version == 0);
  CHECK(waited < std::chrono::seconds(30));  // not the timeout
}

TEST_CASE("compression: stored compressed only when smaller, read back intact",
          "[store][compression]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 64;
  auto s = MakeStore(o, &clock);
  ephpm::EntryInfo info;

  const std::string text(4096, 'z');
  REQUIRE(s->Set("text", text) == Status::kOk);
  REQUIRE(s->Inspect("text", &info) == Status::kOk);
  CHECK(info.compressed);
  CHECK(info.value_size == text.size());
  CHECK(info.stored_size < text.size());
  CHECK(GetOr(*s, "text") == text);

  const std::string noise = ephpm_test::RandomBytes(4096, 1);
  REQUIRE(s->Set("noise", noise) == Status::kOk);
  REQUIRE(s->Inspect("noise", &info) == Status::kOk);
  CHECK_FALSE(info.compressed);  // would not be smaller
  CHECK(GetOr(*s, "noise") == noise);

  const std::string small(63, 'z');
  REQUIRE(s->Set("small", small) == Status::kOk);
  REQUIRE(s->Inspect("small", &info) == Status::kOk);
  CHECK_FALSE(info.compressed);  // under the threshold

  const auto st = s->Stats();
  CHECK(st.compressed_values == 1);
  CHECK(st.compressed_original_bytes == text.size());
  CHECK(st.compressed_stored_bytes < text.size());

  ephpm::WaitResult w;
  REQUIRE(s->WaitForChange("text", 0, 0, &w) == Status::kOk);
  CHECK(w.value == text);
}

TEST_CASE("del_if_eq compares against the decompressed value", "[store][compression][lock]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 16;
  auto s = MakeStore(o, &clock);
  const std::string token(300, 'T');  // larger than the stack buffer, too
  for (const std::string& value : {std::string(64, 'a') + "token", token}) {
    REQUIRE(s->Set("lock", value, 30000) == Status::kOk);
    ephpm::EntryInfo info;
    REQUIRE(s->Inspect("lock", &info) == Status::kOk);
    REQUIRE(info.compressed);
    std::string other = value;
    other.back() = '!';
    CHECK(s->DelIfEq("lock", other) == DelIfEqOutcome::kNotMatched);
    CHECK(s->DelIfEq("lock", value.substr(1)) == DelIfEqOutcome::kNotMatched);
    CHECK(s->DelIfEq("lock", value) == DelIfEqOutcome::kDeleted);
    CHECK_FALSE(Exists(*s, "lock"));
  }
  CHECK(s->Stats().compressed_values == 0);
  CHECK(s->Stats().memory_used == 0);

  // incr reads a compressed integer too (threshold 1 compresses nothing this
  // short in practice, so check only that incr works whatever the encoding).
  int64_t n = 0;
  REQUIRE(s->Set("n", "12345678901234567") == Status::kOk);
  CHECK(s->IncrBy("n", 1, &n) == Status::kOk);
  CHECK(n == 12345678901234568);
}

TEST_CASE("the sweeper removes expired entries, earliest first, within its budget",
          "[store][ttl][sweeper]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;
  auto s = MakeStore(o, &clock);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), "v", 100 + i) == Status::kOk);
  }
  REQUIRE(s->Set("forever", "v") == Status::kOk);
  clock.Advance(150);  // k0..k50 expired
  CHECK(s->SweepExpired(10) == 10);
  CHECK(s->Stats().expired == 10);
  CHECK(s->SweepExpired(1000) == 41);
  CHECK(s->SweepExpired(1000) == 0);
  CHECK(s->DbSize() == 50);
  CHECK(Exists(*s, "k51"));
  CHECK(s->Stats().expired == 51);
}

TEST_CASE("the background sweeper reaps on its own and stops with the store",
          "[store][ttl][sweeper]") {
  ephpm::StoreOptions o;
  o.sweep_interval_ms = 5;
  auto s = MakeStore(o, ephpm::SystemClock());
  for (int i = 0; i < 500; ++i) {
    REQUIRE(s->Set("k" + std::to_string(i), "v", 1) == Status::kOk);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (s->Stats().expired < 500 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(s->Stats().expired == 500);  // nobody touched them: the sweeper did
  CHECK(s->Stats().memory_used == 0);
  s.reset();  // joins the sweeper; a hang here fails by timeout
  for (int i = 0; i < 50; ++i) MakeStore(o, ephpm::SystemClock()).reset();
}

TEST_CASE("stats count hits, misses and keys", "[store][stats]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::string v;
  REQUIRE(s->Set("a", "1") == Status::kOk);
  REQUIRE(s->Set("b", "2", 10) == Status::kOk);
  CHECK(s->Get("a", &v) == Status::kOk);
  CHECK(s->Get("a", &v) == Status::kOk);
  CHECK(s->Get("zz", &v) == Status::kNotFound);
  clock.Advance(10);
  CHECK(s->Get("b", &v) == Status::kNotFound);
  const auto st = s->Stats();
  CHECK(st.hits == 2);
  CHECK(st.misses == 2);
  CHECK(st.keys == 1);
  CHECK(st.expired == 1);  // reaped lazily by the get
}

TEST_CASE("GetIntoBuffer copies what fits and measures what does not", "[store]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 16;
  auto s = MakeStore(o, &clock);
  char buf[8];
  uint64_t n = 0;
  CHECK(s->GetIntoBuffer("k", buf, sizeof buf, &n) == Status::kNotFound);
  REQUIRE(s->Set("k", "abc") == Status::kOk);
  CHECK(s->GetIntoBuffer("k", buf, sizeof buf, &n) == Status::kOk);
  CHECK(std::string(buf, n) == "abc");
  const std::string big(64, 'z');  // stored compressed
  REQUIRE(s->Set("big", big) == Status::kOk);
  std::memset(buf, '-', sizeof buf);
  CHECK(s->GetIntoBuffer("big", buf, sizeof buf, &n) == Status::kOk);
  CHECK(n == 64);
  CHECK(std::string(buf, sizeof buf) == "--------");  // too small: untouched
  std::string room(64, '\0');
  CHECK(s->GetIntoBuffer("big", room.data(), room.size(), &n) == Status::kOk);
  CHECK(room == big);
  CHECK(s->Stats().hits == 2);  // the measuring read is not a hit
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  CHECK(s->GetIntoBuffer("h", buf, sizeof buf, &n) == Status::kWrongType);
  REQUIRE(s->Set("ttl", "x", 5) == Status::kOk);
  clock.Advance(5);
  CHECK(s->GetIntoBuffer("ttl", buf, sizeof buf, &n) == Status::kNotFound);
}
