// The fenced writes of ephpm::Store (set_if_eq, del_if_guard_eq,
// expire_if_guard_eq): a write that lands only while a guard key holds a token.

#include <catch2/catch.hpp>
#include <string>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::Pttl;

TEST_CASE("set_if_eq writes only while the guard holds the token", "[store][fence]") {
  for (size_t shards : {size_t{1}, size_t{64}}) {  // guard and key in one shard, and not
    DYNAMIC_SECTION("shards=" << shards) {
      ManualClock clock;
      auto o = NoSweeper();
      o.shards = shards;
      auto s = MakeStore(o, &clock);
      using ephpm::SetIfEqOutcome;
      CHECK(s->SetIfEq("lock", "tok", "data", "v0") == SetIfEqOutcome::kNotMatched);  // no guard
      CHECK(GetOr(*s, "data") == "<missing>");
      REQUIRE(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kInserted);
      CHECK(s->SetIfEq("lock", "tok", "data", "v1", 5000) == SetIfEqOutcome::kWritten);
      CHECK(GetOr(*s, "data") == "v1");
      CHECK(Pttl(*s, "data") == 5000);
      CHECK(s->SetIfEq("lock", "other", "data", "v2") == SetIfEqOutcome::kNotMatched);
      CHECK(s->SetIfEq("lock", "to", "data", "v2") == SetIfEqOutcome::kNotMatched);
      CHECK(GetOr(*s, "data") == "v1");
      CHECK(GetOr(*s, "lock") == "tok");  // the guard is only read
      clock.Advance(1000);                 // the guard expired
      CHECK(s->SetIfEq("lock", "tok", "data", "v3") == SetIfEqOutcome::kNotMatched);
      CHECK(GetOr(*s, "data") == "v1");
      CHECK(s->SetIfEq("lock", "tok", "data", "v", -1) == SetIfEqOutcome::kInvalidArgument);
      CHECK(s->SetIfEq(std::string(ephpm::kMaxKeySize + 1, 'k'), "tok", "data", "v") ==
            SetIfEqOutcome::kInvalidArgument);
      CHECK(s->Stats().memory_used == [&] {
        uint64_t sum = 0;
        ephpm::EntryInfo info;
        for (const char* k : {"data", "lock"}) {
          if (s->Inspect(k, &info) == Status::kOk) sum += info.mem_size;
        }
        return sum;
      }());
    }
  }
}

TEST_CASE("the fenced write: a request that overran its lock cannot overwrite the holder's data",
          "[store][fence][scenario]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  using ephpm::SetIfEqOutcome;
  REQUIRE(s->SetNx("session_lock:{abc}", "token-A", 30000) == SetNxOutcome::kInserted);
  clock.Advance(31000);  // A ran past its TTL
  REQUIRE(s->SetNx("session_lock:{abc}", "token-B", 30000) == SetNxOutcome::kInserted);
  CHECK(s->SetIfEq("session_lock:{abc}", "token-B", "session:{abc}", "B's data") ==
        SetIfEqOutcome::kWritten);
  CHECK(s->SetIfEq("session_lock:{abc}", "token-A", "session:{abc}", "A's stale data") ==
        SetIfEqOutcome::kNotMatched);
  CHECK(GetOr(*s, "session:{abc}") == "B's data");
}

TEST_CASE("set_if_eq refused for memory changes nothing", "[store][fence][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 600;
  auto s = MakeStore(o, &clock);
  using ephpm::SetIfEqOutcome;
  REQUIRE(s->Set("lock", "tok") == Status::kOk);
  REQUIRE(s->Set("data", "old") == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  CHECK(s->SetIfEq("lock", "tok", "data", std::string(1000, 'x')) == SetIfEqOutcome::kOutOfMemory);
  CHECK(GetOr(*s, "data") == "old");
  CHECK(s->Stats().memory_used == used);
}

TEST_CASE("del_if_guard_eq removes only while the guard holds the token", "[store][fence]") {
  for (size_t shards : {size_t{1}, size_t{64}}) {  // guard and key in one shard, and not
    DYNAMIC_SECTION("shards=" << shards) {
      ManualClock clock;
      auto o = NoSweeper();
      o.shards = shards;
      o.compression = ephpm::Compression::kZstd;  // a compressed guard compares decoded
      o.compression_threshold = 16;
      auto s = MakeStore(o, &clock);
      using ephpm::DelIfGuardEqOutcome;
      const std::string token(64, 't');
      REQUIRE(s->Set("data", "v") == Status::kOk);
      CHECK(s->DelIfGuardEq("lock", token, "data") == DelIfGuardEqOutcome::kNotMatched);  // no guard
      CHECK(GetOr(*s, "data") == "v");
      REQUIRE(s->SetNx("lock", token, 1000) == SetNxOutcome::kInserted);
      ephpm::EntryInfo info;
      REQUIRE(s->Inspect("lock", &info) == Status::kOk);
      CHECK(info.compressed);
      CHECK(s->DelIfGuardEq("lock", "other", "data") == DelIfGuardEqOutcome::kNotMatched);
      CHECK(s->DelIfGuardEq("lock", token.substr(1), "data") == DelIfGuardEqOutcome::kNotMatched);
      CHECK(GetOr(*s, "data") == "v");
      CHECK(s->DelIfGuardEq("lock", token, "data") == DelIfGuardEqOutcome::kDeleted);
      CHECK(GetOr(*s, "data") == "<missing>");
      CHECK(GetOr(*s, "lock") == token);  // the guard is only read
      CHECK(s->DelIfGuardEq("lock", token, "data") == DelIfGuardEqOutcome::kAbsent);
      REQUIRE(s->Set("data", "w") == Status::kOk);
      clock.Advance(1000);  // the guard expired
      CHECK(s->DelIfGuardEq("lock", token, "data") == DelIfGuardEqOutcome::kNotMatched);
      CHECK(GetOr(*s, "data") == "w");
      ephpm::StoreStats st = s->Stats();
      CHECK(st.memory_used == [&] {
        uint64_t sum = 0;
        for (const char* k : {"data", "lock"}) {
          if (s->Inspect(k, &info) == Status::kOk) sum += info.mem_size;
        }
        return sum;
      }());
      int64_t added = 0;
      REQUIRE(s->HSet("hguard", {{"f", "v"}}, false, &added) == Status::kOk);
      CHECK(s->DelIfGuardEq("hguard", "v", "data") == DelIfGuardEqOutcome::kWrongType);
      CHECK(GetOr(*s, "data") == "w");
      CHECK(s->DelIfGuardEq(std::string(ephpm::kMaxKeySize + 1, 'k'), "tok", "data") ==
            DelIfGuardEqOutcome::kInvalidArgument);
      CHECK(s->DelIfGuardEq("lock", "tok", std::string(ephpm::kMaxKeySize + 1, 'k')) ==
            DelIfGuardEqOutcome::kInvalidArgument);
    }
  }
}

TEST_CASE("expire_if_guard_eq changes the TTL only while the guard holds the token",
          "[store][fence]") {
  for (size_t shards : {size_t{1}, size_t{64}}) {
    DYNAMIC_SECTION("shards=" << shards) {
      ManualClock clock;
      auto o = NoSweeper();
      o.shards = shards;
      auto s = MakeStore(o, &clock);
      using ephpm::ExpireIfGuardEqOutcome;
      REQUIRE(s->Set("data", "v", 50000) == Status::kOk);
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", 600000) == ExpireIfGuardEqOutcome::kNotMatched);
      CHECK(Pttl(*s, "data") == 50000);
      REQUIRE(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kInserted);
      CHECK(s->ExpireIfGuardEq("lock", "other", "data", 600000) ==
            ExpireIfGuardEqOutcome::kNotMatched);
      CHECK(Pttl(*s, "data") == 50000);
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", 600000) == ExpireIfGuardEqOutcome::kApplied);
      CHECK(Pttl(*s, "data") == 600000);
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", 0) == ExpireIfGuardEqOutcome::kApplied);
      CHECK(Pttl(*s, "data") == -1);  // 0 removes the TTL, never deletes
      CHECK(GetOr(*s, "data") == "v");
      CHECK(s->ExpireIfGuardEq("lock", "tok", "nothing", 600000) ==
            ExpireIfGuardEqOutcome::kAbsent);
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", -1) ==
            ExpireIfGuardEqOutcome::kInvalidArgument);
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", INT64_MAX) ==
            ExpireIfGuardEqOutcome::kInvalidArgument);  // now + ttl overflows
      CHECK(Pttl(*s, "data") == -1);
      CHECK(GetOr(*s, "lock") == "tok");  // the guard is only read
      clock.Advance(1000);                 // the guard expired
      CHECK(s->ExpireIfGuardEq("lock", "tok", "data", 5) == ExpireIfGuardEqOutcome::kNotMatched);
      CHECK(Pttl(*s, "data") == -1);
      int64_t added = 0;
      REQUIRE(s->HSet("hguard", {{"f", "v"}}, false, &added) == Status::kOk);
      CHECK(s->ExpireIfGuardEq("hguard", "v", "data", 5) == ExpireIfGuardEqOutcome::kWrongType);
      CHECK(s->ExpireIfGuardEq(std::string(ephpm::kMaxKeySize + 1, 'k'), "tok", "data", 5) ==
            ExpireIfGuardEqOutcome::kInvalidArgument);
      // The memory total still equals the entries' sum after TTLs came and went.
      CHECK(s->Stats().memory_used == [&] {
        uint64_t sum = 0;
        ephpm::EntryInfo info;
        for (const char* k : {"data", "hguard"}) {
          if (s->Inspect(k, &info) == Status::kOk) sum += info.mem_size;
        }
        return sum;
      }());
    }
  }
}

TEST_CASE("the fenced delete: a request that overran its lock cannot destroy the holder's data",
          "[store][fence][scenario]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  using ephpm::DelIfGuardEqOutcome;
  REQUIRE(s->SetNx("session_lock:{abc}", "token-A", 30000) == SetNxOutcome::kInserted);
  clock.Advance(31000);  // A ran past its TTL
  REQUIRE(s->SetNx("session_lock:{abc}", "token-B", 30000) == SetNxOutcome::kInserted);
  REQUIRE(s->SetIfEq("session_lock:{abc}", "token-B", "session:{abc}", "B's data") ==
          ephpm::SetIfEqOutcome::kWritten);
  CHECK(s->DelIfGuardEq("session_lock:{abc}", "token-A", "session:{abc}") ==
        DelIfGuardEqOutcome::kNotMatched);
  CHECK(GetOr(*s, "session:{abc}") == "B's data");
}
