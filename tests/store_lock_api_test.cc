// The lock API of docs/LOCKS.md at the store: fenced grants, compare-and-
// expire, fenced writes and the records that outlive their keys, lock state,
// Redis 8.4's conditions (SET IF*, DELEX, DIGEST); fences across restarts;
// random sequences against a reference model; concurrent grants.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "ephpm/clock.h"
#include "ephpm/kv_ops.h"
#include "ephpm/kv_ops_store.h"
#include "ephpm/store.h"
#include "test_util.h"

namespace fs = std::filesystem;
using ephpm::DelIfEqOutcome;
using ephpm::ExpireIfEqOutcome;
using ephpm::FencedGrant;
using ephpm::LockStateOutcome;
using ephpm::ManualClock;
using ephpm::SetFencedOutcome;
using ephpm::SetNxOutcome;
using ephpm::SetOptions;
using ephpm::SetResult;
using ephpm::Status;
using ephpm::Store;
using ephpm::StoreOptions;
using ephpm::ValueCondition;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

using ephpm_test::TempDir;


StoreOptions WithDir(const std::string& dir, const ManualClock* clock) {
  StoreOptions o = NoSweeper();
  o.shards = 4;
  o.clock = clock;
  o.persistence.data_dir = dir;
  return o;
}

std::unique_ptr<Store> Open(const StoreOptions& o) {
  std::string error;
  auto s = Store::Create(o, &error);
  INFO(error);
  REQUIRE(s != nullptr);
  return s;
}

FencedGrant Grant(Store& s, const std::string& name, const std::string& token,
                  int64_t ttl_ms = 30'000, bool ephemeral = true) {
  return s.SetNxFenced(name, token, ttl_ms, ephemeral);
}

SetResult SetIf(Store& s, const std::string& key, const std::string& value,
                ValueCondition::Kind kind, const std::string& cmp, uint64_t digest = 0,
                bool get = false, Status expect = Status::kOk) {
  SetOptions o;
  o.condition.kind = kind;
  o.condition.value = cmp;
  o.condition.digest = digest;
  o.get_old = get;
  SetResult r;
  REQUIRE(s.SetWith(key, value, o, &r) == expect);
  return r;
}

}  // namespace

TEST_CASE("locks: a paused holder's fenced write is refused after its lease passed",
          "[locks][fence]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  // A takes the lock and pauses past its TTL.
  const FencedGrant a = Grant(*s, "lock:res", "token-a", 1'000);
  REQUIRE(a.outcome == SetNxOutcome::kInserted);
  REQUIRE(a.fence > 0);
  clock.Advance(1'500);
  // B takes it (the expired entry counts as absent) and writes.
  const FencedGrant b = Grant(*s, "lock:res", "token-b", 30'000);
  REQUIRE(b.outcome == SetNxOutcome::kInserted);
  REQUIRE(b.fence > a.fence);
  REQUIRE(s->SetFenced("res", "written by B", b.fence) == SetFencedOutcome::kWritten);
  // A wakes up and writes with its old fence: refused, B's value survives.
  REQUIRE(s->SetFenced("res", "written by A", a.fence) == SetFencedOutcome::kStale);
  REQUIRE(GetOr(*s, "res") == "written by B");
  // A's release by token does not take B's lock either.
  REQUIRE(s->DelIfEq("lock:res", "token-a") == DelIfEqOutcome::kNotMatched);
  REQUIRE(s->LockState("lock:res", "token-b").outcome == LockStateOutcome::kHeld);
  // The same fence again is allowed (B writes twice); a higher one too.
  REQUIRE(s->SetFenced("res", "B again", b.fence) == SetFencedOutcome::kWritten);
  REQUIRE(s->SetFenced("res", "later", b.fence + 1) == SetFencedOutcome::kWritten);
  REQUIRE(s->SetFenced("res", "B late", b.fence) == SetFencedOutcome::kStale);
  REQUIRE(GetOr(*s, "res") == "later");
}

TEST_CASE("locks: fences strictly increase per grant, across names and a clock going back",
          "[locks][fence]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  uint64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string name = "n" + std::to_string(i % 7);
    const FencedGrant g = Grant(*s, name, "t");
    REQUIRE(g.outcome == SetNxOutcome::kInserted);
    REQUIRE(g.fence > last);
    last = g.fence;
    REQUIRE(s->DelIfEq(name, "t") == DelIfEqOutcome::kDeleted);
    if (i == 100) clock.Advance(-3'600'000);  // an NTP step back
    if (i % 50 == 0) clock.Advance(5);
  }
  // A refused grant gives no fence.
  REQUIRE(Grant(*s, "held", "x").outcome == SetNxOutcome::kInserted);
  const FencedGrant refused = Grant(*s, "held", "y");
  REQUIRE(refused.outcome == SetNxOutcome::kExists);
  REQUIRE(refused.fence == 0);
  // The wall clock's milliseconds are in the high bits, as the cluster's
  // stamps are, so fences of different stores are roughly comparable.
  ManualClock later(clock.NowMs() + 86'400'000);
  auto t = MakeStore(NoSweeper(), &later);
  REQUIRE(Grant(*t, "x", "t").fence > last);
}

TEST_CASE("locks: compare-and-expire refreshes only the holder's lock", "[locks][refresh]") {
  ManualClock clock;
  StoreOptions o = NoSweeper();
  o.memory_limit = 1 << 20;
  o.max_value_size = 1024;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto s = MakeStore(o, &clock);
  const FencedGrant g = Grant(*s, "lk", "mine", 1'000);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);
  REQUIRE(s->ExpireIfEq("lk", "other", 60'000) == ExpireIfEqOutcome::kNotMatched);
  REQUIRE(ephpm_test::Pttl(*s, "lk") == 1'000);
  REQUIRE(s->ExpireIfEq("lk", "mine", 60'000) == ExpireIfEqOutcome::kApplied);
  REQUIRE(ephpm_test::Pttl(*s, "lk") == 60'000);
  // The refreshed lock keeps its pin and its fence.
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("lk", &info) == Status::kOk);
  REQUIRE(info.pinned);
  const auto st = s->LockState("lk", "mine");
  REQUIRE(st.outcome == LockStateOutcome::kHeld);
  REQUIRE(st.fence == g.fence);
  REQUIRE(st.pttl_ms == 60'000);
  // Once expired it is not ours to refresh: nothing is brought back.
  clock.Advance(60'000);
  REQUIRE(s->ExpireIfEq("lk", "mine", 60'000) == ExpireIfEqOutcome::kNotMatched);
  REQUIRE(GetOr(*s, "lk") == "<missing>");
  // A TTL not in the future removes a matching lock (EXPIRE's rule).
  REQUIRE(Grant(*s, "lk2", "mine").outcome == SetNxOutcome::kInserted);
  REQUIRE(s->ExpireIfEq("lk2", "mine", 0) == ExpireIfEqOutcome::kApplied);
  REQUIRE(GetOr(*s, "lk2") == "<missing>");
  REQUIRE(Grant(*s, "lk3", "mine").outcome == SetNxOutcome::kInserted);
  REQUIRE(s->ExpireIfEq("lk3", "mine", -5) == ExpireIfEqOutcome::kApplied);
  REQUIRE(GetOr(*s, "lk3") == "<missing>");
  // Errors: another type, over-long key or token, a TTL past the clock.
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  REQUIRE(s->ExpireIfEq("h", "v", 1'000) == ExpireIfEqOutcome::kWrongType);
  REQUIRE(s->ExpireIfEq(std::string(70'000, 'k'), "t", 1) == ExpireIfEqOutcome::kInvalidArgument);
  REQUIRE(s->ExpireIfEq("lk", std::string(o.max_value_size + 1, 't'), 1) ==
          ExpireIfEqOutcome::kInvalidArgument);
  REQUIRE(Grant(*s, "lk4", "mine").outcome == SetNxOutcome::kInserted);
  REQUIRE(s->ExpireIfEq("lk4", "mine", INT64_MAX) == ExpireIfEqOutcome::kInvalidArgument);
  REQUIRE(ephpm_test::Pttl(*s, "lk4") == 30'000);
}

TEST_CASE("locks: a fenced write's record outlives delete, expiry, eviction and flush",
          "[locks][fence]") {
  ManualClock clock;
  StoreOptions o = NoSweeper();
  o.shards = 2;
  o.memory_limit = 64 * 1024;
  o.max_value_size = 1 << 20;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto s = MakeStore(o, &clock);
  int64_t removed = 0;
  SECTION("delete") {
    REQUIRE(s->SetFenced("d", "v", 100) == SetFencedOutcome::kWritten);
    REQUIRE(s->Del("d", &removed) == Status::kOk);
    REQUIRE(removed == 1);
    REQUIRE(s->SetFenced("d", "stale", 99) == SetFencedOutcome::kStale);
    REQUIRE(GetOr(*s, "d") == "<missing>");
    REQUIRE(s->SetFenced("d", "ok", 100) == SetFencedOutcome::kWritten);
  }
  SECTION("a conditional delete, a compare-and-delete") {
    REQUIRE(s->SetFenced("d", "v", 100) == SetFencedOutcome::kWritten);
    REQUIRE(s->DelEx("d", {ValueCondition::Kind::kIfEq, "v", 0}, &removed) == Status::kOk);
    REQUIRE(removed == 1);
    REQUIRE(s->SetFenced("d", "stale", 50) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("d", "v2", 100) == SetFencedOutcome::kWritten);
    REQUIRE(s->DelIfEq("d", "v2") == DelIfEqOutcome::kDeleted);
    REQUIRE(s->SetFenced("d", "stale", 50) == SetFencedOutcome::kStale);
  }
  SECTION("expiry, lazy and swept") {
    REQUIRE(s->SetFenced("e", "v", 100, 1'000) == SetFencedOutcome::kWritten);
    REQUIRE(s->SetFenced("e2", "v", 100, 1'000) == SetFencedOutcome::kWritten);
    clock.Advance(2'000);
    REQUIRE(s->SweepExpired(100) >= 1);
    REQUIRE(s->SetFenced("e", "stale", 99) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("e2", "stale", 99) == SetFencedOutcome::kStale);
  }
  SECTION("eviction under memory pressure") {
    REQUIRE(s->SetFenced("victim", "v", 100) == SetFencedOutcome::kWritten);
    for (int i = 0; i < 2'000; ++i) {
      REQUIRE(s->Set("fill" + std::to_string(i), std::string(200, 'x')) == Status::kOk);
    }
    REQUIRE(GetOr(*s, "victim") == "<missing>");  // evicted
    REQUIRE(s->Stats().evicted > 0);
    REQUIRE(s->SetFenced("victim", "stale", 99) == SetFencedOutcome::kStale);
    // The records count in the memory total and are never evicted.
    REQUIRE(s->Stats().memory_used <= o.memory_limit);
  }
  SECTION("a plain write keeps the key's fence") {
    REQUIRE(s->SetFenced("p", "v", 100) == SetFencedOutcome::kWritten);
    REQUIRE(s->Set("p", "plain") == Status::kOk);
    int64_t n = 0;
    REQUIRE(s->Append("p", "+", &n) == Status::kOk);
    REQUIRE(s->SetFenced("p", "stale", 99) == SetFencedOutcome::kStale);
    REQUIRE(GetOr(*s, "p") == "plain+");
    // Renamed, the data takes its fence along; the old name keeps a record.
    bool renamed = false;
    REQUIRE(s->Rename("p", "q", false, &renamed) == Status::kOk);
    REQUIRE(s->SetFenced("q", "stale", 99) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("p", "stale", 99) == SetFencedOutcome::kStale);
  }
  SECTION("a flush turns every record into a floor") {
    REQUIRE(s->SetFenced("f1", "v", 100) == SetFencedOutcome::kWritten);
    REQUIRE(s->SetFenced("f2", "v", 300) == SetFencedOutcome::kWritten);
    REQUIRE(s->Del("f2", &removed) == Status::kOk);
    REQUIRE(s->Flush() == Status::kOk);
    REQUIRE(s->SetFenced("other", "stale", 299) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("f1", "ok", 300) == SetFencedOutcome::kWritten);
    REQUIRE(s->Stats().memory_used == ephpm_test::SumOfEntries(*s));
  }
  SECTION("a lock's grant on the same key counts, and a released lock leaves no record") {
    const FencedGrant g = Grant(*s, "both", "t");
    REQUIRE(s->SetFenced("both", "stale", g.fence - 1) == SetFencedOutcome::kStale);
    REQUIRE(s->DelIfEq("both", "t") == DelIfEqOutcome::kDeleted);
    REQUIRE(s->SetFenced("both", "any", 1) == SetFencedOutcome::kWritten);
  }
  SECTION("bad arguments") {
    REQUIRE(s->SetFenced("k", "v", 0) == SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced("k", "v", ephpm::kMaxFence + 1) == SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced("kmax", "v", ephpm::kMaxFence) == SetFencedOutcome::kWritten);
    REQUIRE(s->SetFenced("kmax", "v", ephpm::kMaxFence - 1) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("k", "v", 1, -1) == SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced(std::string(70'000, 'k'), "v", 1) == SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced("k", std::string(o.max_value_size + 1, 'v'), 1) ==
            SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced("k", "v", 1, INT64_MAX) == SetFencedOutcome::kInvalidArgument);
    REQUIRE(s->SetFenced("k", std::string(o.memory_limit, 'v'), 1) ==
            SetFencedOutcome::kOutOfMemory);
    REQUIRE(GetOr(*s, "k") == "<missing>");
  }
}

TEST_CASE("locks: lock state reports holder, TTL and fence", "[locks]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  auto st = s->LockState("none", "t");
  REQUIRE(st.outcome == LockStateOutcome::kAbsent);
  REQUIRE(st.pttl_ms == -2);
  REQUIRE(st.fence == 0);
  const FencedGrant g = Grant(*s, "l", "t", 5'000);
  clock.Advance(1'000);
  st = s->LockState("l", "t");
  REQUIRE(st.outcome == LockStateOutcome::kHeld);
  REQUIRE(st.pttl_ms == 4'000);
  REQUIRE(st.fence == g.fence);
  st = s->LockState("l", "u");
  REQUIRE(st.outcome == LockStateOutcome::kOther);
  REQUIRE(st.fence == g.fence);
  st = s->LockState("l", "");
  REQUIRE(st.outcome == LockStateOutcome::kOther);
  REQUIRE(s->Set("plain", "t") == Status::kOk);
  st = s->LockState("plain", "t");
  REQUIRE(st.outcome == LockStateOutcome::kHeld);
  REQUIRE(st.pttl_ms == -1);
  REQUIRE(st.fence == 0);
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"t", "t"}}, false, &added) == Status::kOk);
  REQUIRE(s->LockState("h", "t").outcome == LockStateOutcome::kOther);
  clock.Advance(4'000);
  REQUIRE(s->LockState("l", "t").outcome == LockStateOutcome::kAbsent);
  REQUIRE(s->LockState(std::string(70'000, 'k'), "t").outcome ==
          LockStateOutcome::kInvalidArgument);
}

TEST_CASE("locks: SET's IFEQ, IFNE, IFDEQ, IFDNE", "[locks][conditions]") {
  ManualClock clock;
  StoreOptions o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 64;
  auto s = MakeStore(o, &clock);
  using K = ValueCondition::Kind;
  REQUIRE(s->Set("k", "old") == Status::kOk);
  // IFEQ: only over an equal value; never creates.
  REQUIRE_FALSE(SetIf(*s, "k", "new", K::kIfEq, "other").written);
  REQUIRE(SetIf(*s, "k", "new", K::kIfEq, "old").written);
  REQUIRE(GetOr(*s, "k") == "new");
  REQUIRE_FALSE(SetIf(*s, "missing", "v", K::kIfEq, "").written);
  REQUIRE(GetOr(*s, "missing") == "<missing>");
  // IFNE: over a different value, and creates a missing key.
  REQUIRE_FALSE(SetIf(*s, "k", "x", K::kIfNe, "new").written);
  REQUIRE(SetIf(*s, "k", "x", K::kIfNe, "new2").written);
  REQUIRE(SetIf(*s, "created", "v", K::kIfNe, "v").written);
  REQUIRE(GetOr(*s, "created") == "v");
  // Digests: XXH3-64 of the value.
  const uint64_t d = Store::DigestOf("x");
  REQUIRE_FALSE(SetIf(*s, "k", "y", K::kIfDigestEq, "", d + 1).written);
  REQUIRE(SetIf(*s, "k", "y", K::kIfDigestEq, "", d).written);
  REQUIRE_FALSE(SetIf(*s, "k", "z", K::kIfDigestNe, "", Store::DigestOf("y")).written);
  REQUIRE(SetIf(*s, "k", "z", K::kIfDigestNe, "", d).written);
  REQUIRE_FALSE(SetIf(*s, "nokey", "v", K::kIfDigestEq, "", d).written);
  REQUIRE(SetIf(*s, "nokey2", "v", K::kIfDigestNe, "", d).written);
  // GET reports the old value whatever the outcome.
  SetResult r = SetIf(*s, "k", "w", K::kIfEq, "nope", 0, /*get=*/true);
  REQUIRE_FALSE(r.written);
  REQUIRE(r.had_old);
  REQUIRE(r.old == "z");
  r = SetIf(*s, "k", "w", K::kIfEq, "z", 0, /*get=*/true);
  REQUIRE(r.written);
  REQUIRE(r.old == "z");
  // A compressed value compares and digests as its plain bytes.
  const std::string big(4'096, 'b');
  REQUIRE(s->Set("big", big) == Status::kOk);
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("big", &info) == Status::kOk);
  REQUIRE(info.compressed);
  REQUIRE(SetIf(*s, "big", big, K::kIfDigestEq, "", Store::DigestOf(big)).written);
  REQUIRE(SetIf(*s, "big", "small", K::kIfEq, big).written);
  uint64_t got = 0;
  REQUIRE(s->Set("big2", big) == Status::kOk);
  REQUIRE(s->Digest("big2", &got) == Status::kOk);
  REQUIRE(got == Store::DigestOf(big));
  // Another type is WRONGTYPE, and nothing changes.
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  SetIf(*s, "h", "v", K::kIfNe, "x", 0, false, Status::kWrongType);
  REQUIRE(GetOr(*s, "h") == "<wrongtype>");
  // IF* with NX or XX is refused.
  SetOptions both;
  both.when = SetOptions::When::kIfAbsent;
  both.condition.kind = K::kIfNe;
  SetResult unused;
  REQUIRE(s->SetWith("k", "v", both, &unused) == Status::kInvalidArgument);
  // TTL options apply with a condition.
  SetOptions ttl;
  ttl.condition.kind = K::kIfEq;
  ttl.condition.value = "w";
  ttl.expiry = SetOptions::Expiry::kAt;
  ttl.expires_at_ms = clock.NowMs() + 10'000;
  REQUIRE(s->SetWith("k", "ttl", ttl, &unused) == Status::kOk);
  REQUIRE(unused.written);
  REQUIRE(ephpm_test::Pttl(*s, "k") == 10'000);
}

TEST_CASE("locks: DELEX and DIGEST", "[locks][conditions]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  using K = ValueCondition::Kind;
  int64_t removed = -1;
  REQUIRE(s->Set("k", "v") == Status::kOk);
  REQUIRE(s->DelEx("k", {K::kIfEq, "x", 0}, &removed) == Status::kOk);
  REQUIRE(removed == 0);
  REQUIRE(s->DelEx("k", {K::kIfNe, "v", 0}, &removed) == Status::kOk);
  REQUIRE(removed == 0);
  REQUIRE(s->DelEx("k", {K::kIfDigestEq, "", Store::DigestOf("x")}, &removed) == Status::kOk);
  REQUIRE(removed == 0);
  REQUIRE(s->DelEx("k", {K::kIfDigestNe, "", Store::DigestOf("v")}, &removed) == Status::kOk);
  REQUIRE(removed == 0);
  REQUIRE(GetOr(*s, "k") == "v");
  REQUIRE(s->DelEx("k", {K::kIfDigestEq, "", Store::DigestOf("v")}, &removed) == Status::kOk);
  REQUIRE(removed == 1);
  REQUIRE(s->DelEx("k", {K::kIfNe, "x", 0}, &removed) == Status::kOk);
  REQUIRE(removed == 0);  // missing: nothing to remove
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  REQUIRE(s->DelEx("h", {K::kIfEq, "v", 0}, &removed) == Status::kWrongType);
  REQUIRE(s->DelEx("h", {}, &removed) == Status::kOk);  // no condition: DEL
  REQUIRE(removed == 1);
  uint64_t d = 0;
  REQUIRE(s->Digest("missing", &d) == Status::kNotFound);
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  REQUIRE(s->Digest("h", &d) == Status::kWrongType);
  REQUIRE(s->Set("t", "x", 1'000) == Status::kOk);
  clock.Advance(1'000);
  REQUIRE(s->Digest("t", &d) == Status::kNotFound);
  // XXH3-64 with seed 0 of "hello", as xxhsum -H3 prints it.
  REQUIRE(Store::DigestOf("hello") == 0x9555e8555c62dcfdULL);
  REQUIRE(Store::DigestOf("") == 0x2d06800538d394c2ULL);
}

TEST_CASE("locks: fences survive a restart, ephemeral grants included", "[locks][persistence]") {
  TempDir dir;
  ManualClock clock;
  uint64_t last = 0;
  {
    auto s = Open(WithDir(dir.path, &clock));
    for (int i = 0; i < 20; ++i) {
      const FencedGrant g = Grant(*s, "lock", "t", 30'000, /*ephemeral=*/true);
      REQUIRE(g.outcome == SetNxOutcome::kInserted);
      last = g.fence;
      REQUIRE(s->DelIfEq("lock", "t") == DelIfEqOutcome::kDeleted);
    }
    REQUIRE(s->SetFenced("data", "v", last) == SetFencedOutcome::kWritten);
    REQUIRE(s->SetFenced("deleted", "v", last) == SetFencedOutcome::kWritten);
    int64_t removed = 0;
    REQUIRE(s->Del("deleted", &removed) == Status::kOk);
    REQUIRE(s->SetFenced("flushed", "v", last + 7) == SetFencedOutcome::kWritten);
    // A plain (logged) grant still held at the restart comes back with its fence.
    REQUIRE(Grant(*s, "kept", "k", 600'000, /*ephemeral=*/false).outcome ==
            SetNxOutcome::kInserted);
  }
  // The wall clock went back an hour while the store was down.
  clock.Advance(-3'600'000);
  SECTION("from the log") {
    auto s = Open(WithDir(dir.path, &clock));
    REQUIRE(Grant(*s, "lock", "t").fence > last);
    REQUIRE(s->SetFenced("data", "stale", last - 1) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("deleted", "stale", last - 1) == SetFencedOutcome::kStale);
    REQUIRE(s->LockState("kept", "k").fence > 0);
  }
  SECTION("from a snapshot, then again after a flush and a second snapshot") {
    {
      auto s = Open(WithDir(dir.path, &clock));
      std::string msg;
      REQUIRE(s->Rewrite(false, &msg) == Status::kOk);
    }
    {
      auto s = Open(WithDir(dir.path, &clock));
      REQUIRE(Grant(*s, "lock", "t").fence > last);
      REQUIRE(s->SetFenced("data", "stale", last - 1) == SetFencedOutcome::kStale);
      REQUIRE(s->SetFenced("deleted", "stale", last - 1) == SetFencedOutcome::kStale);
      const auto kept = s->LockState("kept", "k");
      REQUIRE(kept.outcome == LockStateOutcome::kHeld);
      REQUIRE(kept.fence > 0);
      REQUIRE(s->Flush() == Status::kOk);
      std::string msg;
      REQUIRE(s->Rewrite(false, &msg) == Status::kOk);
    }
    auto s = Open(WithDir(dir.path, &clock));
    REQUIRE(s->SetFenced("anything", "stale", last + 6) == SetFencedOutcome::kStale);
    REQUIRE(s->SetFenced("anything", "ok", last + 7) == SetFencedOutcome::kWritten);
    REQUIRE(Grant(*s, "lock", "t").fence > last);
  }
}

TEST_CASE("locks: the ops table's lock slots", "[locks][kv_ops]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  REQUIRE(EPHPM_KV_OPS_HAS(&ops, set_nx_fenced));
  REQUIRE(EPHPM_KV_OPS_HAS(&ops, expire_if_eq));
  REQUIRE(EPHPM_KV_OPS_HAS(&ops, set_fenced));
  REQUIRE(EPHPM_KV_OPS_HAS(&ops, lock_state));
  int inserted = -1, applied = -1, written = -1, state = -1;
  uint64_t fence = 0, f2 = 0;
  int64_t pttl = 0;
  REQUIRE(ops.set_nx_fenced(ops.ctx, "l", 1, "tok", 3, 1'000, 1, &inserted, &fence) ==
          EPHPM_KV_OK);
  REQUIRE(inserted == 1);
  REQUIRE(fence > 0);
  REQUIRE(ops.set_nx_fenced(ops.ctx, "l", 1, "tok", 3, 1'000, 1, &inserted, &f2) == EPHPM_KV_OK);
  REQUIRE(inserted == 0);
  REQUIRE(f2 == 0);
  REQUIRE(ops.lock_state(ops.ctx, "l", 1, "tok", 3, &state, &pttl, &f2) == EPHPM_KV_OK);
  REQUIRE(state == 0);
  REQUIRE(pttl == 1'000);
  REQUIRE(f2 == fence);
  REQUIRE(ops.lock_state(ops.ctx, "l", 1, "no", 2, &state, &pttl, &f2) == EPHPM_KV_OK);
  REQUIRE(state == 1);
  REQUIRE(ops.lock_state(ops.ctx, "m", 1, "no", 2, &state, &pttl, &f2) == EPHPM_KV_OK);
  REQUIRE(state == 2);
  REQUIRE(pttl == -2);
  REQUIRE(ops.expire_if_eq(ops.ctx, "l", 1, "tok", 3, 5'000, &applied) == EPHPM_KV_OK);
  REQUIRE(applied == 1);
  REQUIRE(ops.expire_if_eq(ops.ctx, "l", 1, "no", 2, 5'000, &applied) == EPHPM_KV_OK);
  REQUIRE(applied == 0);
  REQUIRE(ops.set_fenced(ops.ctx, "d", 1, "v", 1, fence, 0, &written) == EPHPM_KV_OK);
  REQUIRE(written == 1);
  REQUIRE(ops.set_fenced(ops.ctx, "d", 1, "v", 1, fence - 1, 0, &written) == EPHPM_KV_OK);
  REQUIRE(written == 0);
  REQUIRE(ops.set_fenced(ops.ctx, "d", 1, "v", 1, 0, 0, &written) == EPHPM_KV_INVALID_ARGUMENT);
  REQUIRE(ops.set_nx_fenced(ops.ctx, "x", 1, "v", 1, -1, 0, &inserted, &fence) ==
          EPHPM_KV_INVALID_ARGUMENT);
  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  REQUIRE(ops.expire_if_eq(ops.ctx, "h", 1, "v", 1, 5, &applied) == EPHPM_KV_WRONG_TYPE);
}

// Random sequences of grants, releases, refreshes, fenced and plain writes,
// deletes, flushes and time against a model that keeps, per key, the highest
// fence ever recorded (never forgotten) and the floor a flush leaves.
TEST_CASE("locks: random sequences against a reference model", "[locks][model]") {
  const char* env = std::getenv("EPHPM_SEED");
  const uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  INFO("EPHPM_SEED=" << seed);
  std::mt19937_64 rng(seed);
  TempDir dir;
  ManualClock clock;
  StoreOptions o = WithDir(dir.path, &clock);
  o.memory_limit = 256 * 1024;
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto s = Open(o);
  const int kKeys = 6;
  struct Held {
    std::string token;
    uint64_t fence;
  };
  std::map<int, Held> held;             // locks we believe we hold (may have expired)
  std::map<int, uint64_t> recorded;     // the model: highest fence recorded per data key
  uint64_t floor = 0, last_fence = 0;
  std::map<int, std::string> value;     // the model's data value, when the store keeps it
  int stale = 0, written = 0;
  for (int step = 0; step < 4'000; ++step) {
    const int k = static_cast<int>(rng() % kKeys);
    const std::string lock = "lock" + std::to_string(k), data = "data" + std::to_string(k);
    INFO("step " << step << " key " << k);
    switch (rng() % 11) {
      case 0:
      case 1: {  // grant
        const std::string token = "t" + std::to_string(step);
        const FencedGrant g = Grant(*s, lock, token, 1 + rng() % 3'000, rng() % 2 == 0);
        if (g.outcome == SetNxOutcome::kInserted) {
          REQUIRE(g.fence > last_fence);
          last_fence = g.fence;
          held[k] = {token, g.fence};
        } else {
          REQUIRE(g.outcome == SetNxOutcome::kExists);
        }
        break;
      }
      case 2:  // release
        if (held.count(k) != 0) {
          s->DelIfEq(lock, held[k].token);
          held.erase(k);
        }
        break;
      case 3:  // refresh
        if (held.count(k) != 0) s->ExpireIfEq(lock, held[k].token, 1 + rng() % 3'000);
        break;
      case 4:
      case 5: {  // a fenced write with the fence we hold (maybe stale), or a random one
        uint64_t fence = held.count(k) != 0 ? held[k].fence : 1 + rng() % (last_fence + 2);
        if (rng() % 4 == 0) fence = 1 + rng() % (last_fence + 2);
        const std::string v = "v" + std::to_string(step);
        const SetFencedOutcome out = s->SetFenced(data, v, fence);
        const uint64_t need = std::max(floor, recorded[k]);
        if (fence < need) {
          REQUIRE(out == SetFencedOutcome::kStale);
          stale++;
        } else {
          written++;
          REQUIRE(out == SetFencedOutcome::kWritten);
          recorded[k] = fence;
          value[k] = v;
        }
        break;
      }
      case 6: {  // a plain write keeps the fence
        REQUIRE(s->Set(data, "plain") == Status::kOk);
        value[k] = "plain";
        break;
      }
      case 7: {
        int64_t removed = 0;
        REQUIRE(s->Del(data, &removed) == Status::kOk);
        value.erase(k);
        break;
      }
      case 8:
        clock.Advance(static_cast<int64_t>(rng() % 2'000));
        break;
      case 9:
        if (rng() % 20 == 0) {
          REQUIRE(s->Flush() == Status::kOk);
          for (const auto& [key, f] : recorded) floor = std::max(floor, f);
          recorded.clear();
          value.clear();
          held.clear();
        } else if (rng() % 4 == 0) {
          // Memory pressure: fill, so that data keys may be evicted.
          for (int i = 0; i < 300; ++i) {
            s->Set("fill" + std::to_string(rng() % 2'000), std::string(256, 'f'));
          }
        }
        break;
      case 10:
        if (rng() % 8 == 0) {  // restart; ephemeral locks go, the clock may step back
          s.reset();
          if (rng() % 2 == 0) clock.Advance(-static_cast<int64_t>(rng() % 100'000));
          s = Open(o);
          held.clear();
        } else if (rng() % 8 == 0) {
          std::string msg;
          REQUIRE(s->Rewrite(false, &msg) == Status::kOk);
        }
        break;
    }
    // Whatever the store still holds for the data key is the model's last
    // write (or it was evicted or expired).
    const std::string got = GetOr(*s, data);
    if (got != "<missing>") {
      REQUIRE(value.count(k) == 1);
      REQUIRE(got == value[k]);
    }
  }
  // Both verdicts were exercised.
  CHECK(stale > 50);
  CHECK(written > 50);
}

TEST_CASE("locks: concurrent grants get distinct, ordered fences", "[locks][concurrency]") {
  StoreOptions o = NoSweeper();
  auto s = Store::Create(o, nullptr);
  REQUIRE(s != nullptr);
  constexpr int kThreads = 4, kRounds = 2'000;
  std::vector<std::vector<uint64_t>> fences(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string token = "t" + std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        const std::string name = "n" + std::to_string(i % 3);
        const FencedGrant g = s->SetNxFenced(name, token, 30'000, true);
        if (g.outcome != SetNxOutcome::kInserted) continue;
        fences[t].push_back(g.fence);
        if (s->DelIfEq(name, token) != DelIfEqOutcome::kDeleted) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(failures == 0);
  std::vector<uint64_t> all;
  for (const auto& f : fences) {
    REQUIRE(std::is_sorted(f.begin(), f.end()));
    all.insert(all.end(), f.begin(), f.end());
  }
  std::sort(all.begin(), all.end());
  REQUIRE(std::adjacent_find(all.begin(), all.end()) == all.end());
  REQUIRE(all.size() > 0);
}
