// The lock API of issue 15 in a cluster: fenced grants, compare-and-expire,
// fenced writes, lock state and Redis 8.4's conditional SET and DELEX are
// decided (or read) by the key's owner; fences travel with the replicated
// entries and keep increasing when the owner changes; an unreachable owner
// is "unknown", never a local decision.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "cluster_util.h"
#include "ephpm/store.h"
#include "owner.h"

using namespace cluster_test;  // NOLINT: the suite's own helpers
using ephpm::DelExReply;
using ephpm::ExpireIfEqOutcome;
using ephpm::FencedGrant;
using ephpm::LockStateOutcome;
using ephpm::LockStateReply;
using ephpm::SetFencedOutcome;
using ephpm::SetNxOutcome;
using ephpm::SetOptions;
using ephpm::SetResult;
using ephpm::ValueCondition;

namespace {

ValueCondition IfEq(std::string_view value) {
  ValueCondition c;
  c.kind = ValueCondition::Kind::kIfEq;
  c.value = value;
  return c;
}

// A key that the 4th of four members (sorted by id) will own.
std::string KeyForFourth(const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string k = prefix + std::to_string(i);
    if (ephpm::cluster::OwnerIndex(k, 4) == 3) return k;
  }
}

// The fence key carries on node n's own copy (0 when missing).
uint64_t LocalFence(const Node& n, const std::string& key) {
  return n.store->LockStateLocal(key, "").fence;
}

}  // namespace

TEST_CASE("lock: a fenced grant asked of a non-owner is decided by the owner, with its fence",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  const std::string lock = KeyOwnedBy(t.a, "c", "lock:");
  const uint64_t decided_before = Counter(t.c, "cluster_routed_decided");
  const uint64_t calls_before = Counter(t.a, "cluster_routed_calls");

  const FencedGrant g = t.a.store->SetNxFenced(lock, "tok-a", 30000, false);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);
  CHECK(g.fence != 0);
  CHECK(Counter(t.c, "cluster_routed_decided") > decided_before);
  CHECK(Counter(t.a, "cluster_routed_calls") > calls_before);
  // Confirmed by every member before it was answered: each copy has the
  // lock and the fence it was granted with.
  CHECK(t.Everywhere(lock, "tok-a"));
  for (Node* n : t.all()) {
    INFO("node " << n->id());
    const LockStateReply s = n->store->LockStateLocal(lock, "tok-a");
    CHECK(s.outcome == LockStateOutcome::kHeld);
    CHECK(s.fence == g.fence);
    // Every member's clock has passed the fence, so a grant it makes later
    // (as a new owner) is stamped above it.
    CHECK(n->node->NextStamp().hlc > g.fence);
  }
  // The owner holds it for everyone: no second grant, and no fence with a refusal.
  const FencedGrant again = t.b.store->SetNxFenced(lock, "tok-b", 30000, true);
  CHECK(again.outcome == SetNxOutcome::kExists);
  CHECK(again.fence == 0);
  // A second lock, ephemeral, through the other non-owner: a later fence.
  const std::string other = KeyOwnedBy(t.a, "c", "lock2:");
  const FencedGrant e = t.b.store->SetNxFenced(other, "tok-e", 30000, true);
  REQUIRE(e.outcome == SetNxOutcome::kInserted);
  CHECK(e.fence > g.fence);
  CHECK(t.Everywhere(other, "tok-e"));
}

TEST_CASE("lock: fences strictly increase when the lock's owner stops and another grants it",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  // c owns the lock and runs 2 s ahead: its fences are above what a and b's
  // wall clocks would give them.
  t.c.node->TestSkewClock(2000);
  const std::string lock = KeyOwnedBy(t.a, "c", "lock:");
  const FencedGrant first = t.a.store->SetNxFenced(lock, "A", 600, false);
  REQUIRE(first.outcome == SetNxOutcome::kInserted);
  REQUIRE(t.Everywhere(lock, "A"));
  CHECK(LocalFence(t.a, lock) == first.fence);
  CHECK(LocalFence(t.b, lock) == first.fence);

  t.c.Kill();
  const ClusterOptions o = Fast("x");
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive({&t.a, &t.b}, {"a", "b"}) && AllReady({&t.a, &t.b});
          }) >= 0);
  const std::string new_owner = t.a.node->OwnerOf(lock);
  CHECK(new_owner != "c");
  // A's lease runs out; B is granted the lock by the new owner.
  FencedGrant second;
  REQUIRE(WaitFor(3000, [&] {
            second = t.b.store->SetNxFenced(lock, "B", 30000, false);
            return second.outcome == SetNxOutcome::kInserted;
          }) >= 0);
  INFO("first fence " << first.fence << ", second " << second.fence);
  CHECK(second.fence > first.fence);
  CHECK(t.a.Get(lock) == "B");
  CHECK(LocalFence(t.a, lock) == second.fence);
  CHECK(LocalFence(t.b, lock) == second.fence);

  // The resource sees the order: B's write stands, A's late one is stale.
  const std::string res = "res:{" + lock + "}";
  CHECK(t.a.store->SetFenced(res, "by-B", second.fence) == SetFencedOutcome::kWritten);
  CHECK(t.b.store->SetFenced(res, "by-A", first.fence) == SetFencedOutcome::kStale);
  CHECK(t.a.Get(res) == "by-B");
  CHECK(t.b.Get(res) == "by-B");
}

TEST_CASE("lock: a fenced write through a non-owner is judged by the owner and travels with "
          "its fence",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  const std::string lock = KeyOwnedBy(t.a, "c", "lock:");
  const std::string res = KeyOwnedBy(t.a, "c", "res:");
  const FencedGrant g = t.a.store->SetNxFenced(lock, "tok", 30000, false);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);

  uint64_t decided = Counter(t.c, "cluster_routed_decided");
  REQUIRE(t.a.store->SetFenced(res, "v1", g.fence) == SetFencedOutcome::kWritten);
  CHECK(Counter(t.c, "cluster_routed_decided") > decided);
  CHECK(t.Everywhere(res, "v1"));
  for (Node* n : t.all()) CHECK(LocalFence(*n, res) == g.fence);

  // An older fence, through either non-owner: refused by the owner.
  decided = Counter(t.c, "cluster_routed_decided");
  CHECK(t.b.store->SetFenced(res, "stale", g.fence - 1) == SetFencedOutcome::kStale);
  CHECK(t.a.store->SetFenced(res, "stale", g.fence - 1, 5000) == SetFencedOutcome::kStale);
  CHECK(Counter(t.c, "cluster_routed_decided") >= decided + 2);
  CHECK(t.Everywhere(res, "v1"));

  // A newer one is written and replicated with its fence, so that any
  // member (a future owner) refuses what is older than it.
  const uint64_t fresh = g.fence + 1;
  REQUIRE(t.b.store->SetFenced(res, "v2", fresh) == SetFencedOutcome::kWritten);
  CHECK(t.Everywhere(res, "v2"));
  for (Node* n : t.all()) CHECK(LocalFence(*n, res) == fresh);

  // A fence far above every clock (a client's own version numbers): every
  // member's clock still passes it, since it came with the mutation.
  const uint64_t far = t.a.node->NextStamp().hlc + (uint64_t{60'000} << 16);
  REQUIRE(t.a.store->SetFenced(res, "v3", far) == SetFencedOutcome::kWritten);
  CHECK(t.Everywhere(res, "v3"));
  for (Node* n : t.all()) {
    INFO("node " << n->id());
    CHECK(LocalFence(*n, res) == far);
    CHECK(n->node->NextStamp().hlc > far);
  }
  // ... and a grant made after it is fenced above it.
  const std::string lock2 = KeyOwnedBy(t.a, "b", "lock2:");
  const FencedGrant g2 = t.c.store->SetNxFenced(lock2, "tok2", 30000, false);
  REQUIRE(g2.outcome == SetNxOutcome::kInserted);
  CHECK(g2.fence > far);
}

TEST_CASE("lock: expire_if_eq, lock state, DELEX IFEQ and SET IFEQ are answered by the owner, "
          "not a lagging copy",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  const std::string held = KeyOwnedBy(t.a, "c", "held:");
  const std::string cas = KeyOwnedBy(t.a, "c", "cas:");
  const std::string gone = KeyOwnedBy(t.a, "c", "gone:");
  // c's plain writes reach a late: a's copy lags, so an answer from it
  // would differ from the owner's.
  t.c.node->TestDelayReplication("a", 2000);
  REQUIRE(t.c.store->Set(held, "tok") == Status::kOk);
  REQUIRE(t.c.store->Set(cas, "v1") == Status::kOk);
  REQUIRE(t.c.store->Set(gone, "x") == Status::kOk);
  REQUIRE(t.a.Get(held) == "<missing>");

  // Lock state: the owner's, with its TTL reading.
  CHECK(t.a.store->LockStateLocal(held, "tok").outcome == LockStateOutcome::kAbsent);
  const LockStateReply s = t.a.store->LockState(held, "tok");
  CHECK(s.outcome == LockStateOutcome::kHeld);
  CHECK(s.pttl_ms == -1);
  CHECK(t.a.store->LockState(held, "other").outcome == LockStateOutcome::kOther);

  // Compare-and-expire: applied on the owner, and confirmed by a too.
  CHECK(t.a.store->ExpireIfEq(held, "other", 60000) == ExpireIfEqOutcome::kNotMatched);
  REQUIRE(t.a.store->ExpireIfEq(held, "tok", 60000) == ExpireIfEqOutcome::kApplied);
  const LockStateReply after = t.a.store->LockState(held, "tok");
  CHECK(after.outcome == LockStateOutcome::kHeld);
  CHECK(after.pttl_ms > 0);
  CHECK(after.pttl_ms <= 60000);
  for (Node* n : {&t.b, &t.c}) {
    ephpm::EntryInfo info;
    REQUIRE(n->store->Inspect(held, &info) == Status::kOk);
    CHECK(info.expires_at_ms != 0);
  }

  // SET IFEQ: the owner holds v1 (a's copy has nothing).
  SetOptions o;
  o.condition = IfEq("v1");
  o.get_old = true;
  SetResult r;
  REQUIRE(t.a.store->SetWith(cas, "v2", o, &r) == Status::kOk);
  CHECK(r.written);
  CHECK(r.had_old);
  CHECK(r.old == "v1");
  CHECK(t.Everywhere(cas, "v2"));
  SetResult again;
  REQUIRE(t.b.store->SetWith(cas, "v3", o, &again) == Status::kOk);  // v1 no longer
  CHECK_FALSE(again.written);
  CHECK(again.old == "v2");
  CHECK(t.Everywhere(cas, "v2"));

  // DELEX IFEQ: removed on the owner, and everywhere.
  int64_t removed = -1;
  REQUIRE(t.a.store->DelEx(gone, IfEq("y"), &removed) == Status::kOk);
  CHECK(removed == 0);
  REQUIRE(t.a.store->DelEx(gone, IfEq("x"), &removed) == Status::kOk);
  CHECK(removed == 1);
  CHECK(t.Everywhere(gone, "<missing>"));
  // Errors come back as they are: under a condition a hash is the wrong
  // type on the owner (a's copy has no such key yet).
  const std::string hash = "hash:{" + gone + "}";
  int64_t added = 0;
  REQUIRE(t.c.store->HSet(hash, {{"f", "v"}}, false, &added) == Status::kOk);
  CHECK(t.a.store->DelEx(hash, IfEq("v"), &removed) == Status::kWrongType);
  SetResult wrong;
  CHECK(t.a.store->SetWith(hash, "s", o, &wrong) == Status::kWrongType);
  t.c.node->TestDelayReplication("a", 0);
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere(held, "tok"); }) >= 0);
}

TEST_CASE("lock: with the owner unreachable every lock operation is unknown, never decided "
          "locally",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  const std::string lock = KeyOwnedBy(t.a, "c", "lock:");
  const std::string res = KeyOwnedBy(t.a, "c", "res:");
  const FencedGrant g = t.a.store->SetNxFenced(lock, "tok", 30000, false);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);
  REQUIRE(t.a.store->SetFenced(res, "v1", g.fence) == SetFencedOutcome::kWritten);

  // a and c cannot reach each other; b still can, so neither is declared
  // dead and c stays the owner in a's view.
  t.a.node->TestCutOff("c", true);
  t.c.node->TestCutOff("a", true);
  const ClusterOptions o = Fast("x");
  int64_t quickest = o.request_timeout_ms;  // the quickest "unknown" answer
  auto timed = [&](auto op) {
    const int64_t start = NowMs();
    auto out = op();
    quickest = std::min(quickest, NowMs() - start);
    return out;
  };
  const std::string fresh = KeyOwnedBy(t.a, "c", "fresh:");
  CHECK(timed([&] { return t.a.store->SetNxFenced(fresh, "t", 30000, false); }).outcome ==
        SetNxOutcome::kOwnerUnreachable);
  CHECK(timed([&] { return t.a.store->ExpireIfEq(lock, "tok", 60000); }) ==
        ExpireIfEqOutcome::kOwnerUnreachable);
  CHECK(timed([&] { return t.a.store->SetFenced(res, "v2", g.fence + 1); }) ==
        SetFencedOutcome::kOwnerUnreachable);
  // Its own copy says "held": the answer is still "unknown".
  REQUIRE(t.a.store->LockStateLocal(lock, "tok").outcome == LockStateOutcome::kHeld);
  CHECK(timed([&] { return t.a.store->LockState(lock, "tok"); }).outcome ==
        LockStateOutcome::kOwnerUnreachable);
  SetOptions so;
  so.condition = IfEq("v1");
  SetResult r;
  CHECK(timed([&] { return t.a.store->SetWith(res, "v3", so, &r); }) == Status::kOwnerUnreachable);
  CHECK_FALSE(r.written);
  int64_t removed = -1;
  CHECK(timed([&] { return t.a.store->DelEx(res, IfEq("v1"), &removed); }) ==
        Status::kOwnerUnreachable);
  CHECK(t.a.node->OwnerOf(lock) == "c");  // still c's throughout
  t.a.node->TestCutOff("c", false);
  t.c.node->TestCutOff("a", false);
  INFO("the quickest unreachable answer took " << quickest << " ms");
  CHECK(quickest >= o.request_timeout_ms - 5);  // each waited for the owner

  // Nothing was decided anywhere.
  CHECK(t.Everywhere(fresh, "<missing>"));
  CHECK(t.Everywhere(res, "v1"));
  for (Node* n : t.all()) CHECK(LocalFence(*n, res) == g.fence);
  ephpm::EntryInfo info;
  REQUIRE(t.c.store->Inspect(lock, &info) == Status::kOk);
  CHECK(info.expires_at_ms != 0);
  CHECK(info.expires_at_ms - ephpm::WallMs() <= 30000);
}

// A joining member receives every member's whole state: the fences live
// entries carry come with them, and move its clock, so once it owns the lock
// its grant is above the one made before it joined.
TEST_CASE("lock: a member that joins later receives the fences, and grants above them",
          "[cluster][lock]") {
  Trio t;
  t.Converge();
  const std::string lock = KeyForFourth("lock:");
  const std::string held = KeyForFourth("held:");
  const FencedGrant g = t.a.store->SetNxFenced(lock, "tok", 600, false);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);
  const FencedGrant h = t.b.store->SetNxFenced(held, "tok", 30000, false);
  REQUIRE(h.outcome == SetNxOutcome::kInserted);

  auto od = Fast("d");
  od.join = {t.b.address()};
  Node d(od);
  std::vector<Node*> all = {&t.a, &t.b, &t.c, &d};
  REQUIRE(WaitFor(4 * JoinBoundMs(Fast("x"), 4), [&] {
            return AllAlive(all, {"a", "b", "c", "d"}) && AllReady(all);
          }) >= 0);
  CHECK(d.node->OwnerOf(lock) == "d");
  const LockStateReply s = d.store->LockStateLocal(held, "tok");
  CHECK(s.outcome == LockStateOutcome::kHeld);
  CHECK(s.fence == h.fence);
  CHECK(d.node->NextStamp().hlc > h.fence);
  // The short lock runs out; d, its owner now, grants it above both.
  FencedGrant next;
  REQUIRE(WaitFor(3000, [&] {
            next = t.a.store->SetNxFenced(lock, "tok2", 30000, false);
            return next.outcome == SetNxOutcome::kInserted;
          }) >= 0);
  CHECK(next.fence > g.fence);
  CHECK(next.fence > h.fence);
  for (Node* n : all) CHECK(LocalFence(*n, lock) == next.fence);
}

// KNOWN GAP (store side, reported): Store::ForEachForSync sends a deleted
// key's tombstone without the fence the key keeps recorded, and no fence
// record at all, so a member that catches up by a whole state does not know
// it; once it owns the key it accepts a fenced write older than one the
// cluster already took.  Members that were there when the key was deleted
// keep the record (the kDelete carried it).  [!mayfail] until the sync
// carries fence records.
TEST_CASE("lock: a member that joins later refuses a stale fenced write to a deleted key",
          "[cluster][lock][!mayfail]") {
  Trio t;
  t.Converge();
  const std::string res = KeyForFourth("res:");
  const uint64_t fence = t.a.node->NextStamp().hlc;
  REQUIRE(t.a.store->SetFenced(res, "v", fence) == SetFencedOutcome::kWritten);
  int64_t removed = 0;
  REQUIRE(t.b.store->Del(res, &removed) == Status::kOk);
  REQUIRE(removed == 1);
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere(res, "<missing>"); }) >= 0);
  // The members present keep the record: a stale write is refused.
  CHECK(t.c.store->SetFenced(res, "stale", fence - 1) == SetFencedOutcome::kStale);

  auto od = Fast("d");
  od.join = {t.b.address()};
  Node d(od);
  std::vector<Node*> all = {&t.a, &t.b, &t.c, &d};
  REQUIRE(WaitFor(4 * JoinBoundMs(Fast("x"), 4), [&] {
            return AllAlive(all, {"a", "b", "c", "d"}) && AllReady(all);
          }) >= 0);
  REQUIRE(d.node->OwnerOf(res) == "d");
  CHECK(t.a.store->SetFenced(res, "stale", fence - 1) == SetFencedOutcome::kStale);
  CHECK(t.a.Get(res) == "<missing>");
}
