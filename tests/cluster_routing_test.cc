// Owner arbitration: set_nx, del_if_eq, set_if_eq and incr_by decided by the
// key's owner.  First the design note's three bugs, shown with the routing
// forced back to "local" and gone with it on; then many threads on four
// nodes; a stale release on a non-owner; a killed owner.

#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cluster_util.h"
#include "ephpm/store.h"
#include "owner.h"
#include "test_util.h"

using namespace cluster_test;  // NOLINT: the suite's own helpers
using ephpm::DelIfEqOutcome;
using ephpm::SetIfEqOutcome;
using ephpm::SetNxOutcome;
using ephpm::cluster::OwnerHash;
using ephpm::cluster::RoutingPart;

namespace {

void DelayReplication(const std::vector<Node*>& nodes, int64_t ms) {
  for (Node* from : nodes) {
    for (Node* to : nodes) {
      if (from != to) from->node->TestDelayReplication(to->id(), ms);
    }
  }
}

void ForceLocal(const std::vector<Node*>& nodes, bool local) {
  for (Node* n : nodes) n->node->TestForceLocalRouting(local);
}

}  // namespace

TEST_CASE("owner: the routing part is the first non-empty {...}, as Redis's hash tags",
          "[cluster][owner]") {
  CHECK(RoutingPart("plain") == "plain");
  CHECK(RoutingPart("session:{abc}") == "abc");
  CHECK(RoutingPart("session_lock:{abc}") == "abc");
  CHECK(RoutingPart("{user1000}.following") == "user1000");
  CHECK(RoutingPart("foo{}{bar}") == "foo{}{bar}");  // the first {} is empty: whole key
  CHECK(RoutingPart("foo{{bar}}zap") == "{bar");
  CHECK(RoutingPart("foo{bar}{zap}") == "bar");
  CHECK(RoutingPart("no{close") == "no{close");
  CHECK(RoutingPart("}{x}") == "x");
  CHECK(RoutingPart("") == "");
  CHECK(RoutingPart(std::string("a{\0b}", 5)) == std::string("\0b", 2));
}

TEST_CASE("owner: XXH3-64 with the fixed seed, the same in every process", "[cluster][owner]") {
  // Pinned: a change here moves every key's owner in a mixed-version cluster.
  CHECK(OwnerHash("abc") == 15078343622411485039ull);
  CHECK(OwnerHash("") == 7745884081319593353ull);
  CHECK(OwnerHash("{user1000}.following") == 7597248118361121333ull);
  CHECK(OwnerHash("session:{s1}") == OwnerHash("session_lock:{s1}"));
  // Spread: 30000 keys over three members, each gets a fair share.
  size_t count[3] = {0, 0, 0};
  for (int i = 0; i < 30000; ++i) ++count[ephpm::cluster::OwnerIndex("k" + std::to_string(i), 3)];
  for (size_t c : count) CHECK(c > 9000);
}

TEST_CASE("routing: the design note's three bugs with local decisions, fixed by the owner",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const std::vector<Node*> all = t.all();

  for (const bool routed : {false, true}) {
    INFO((routed ? "routed to the owner" : "forced local"));
    ForceLocal(all, !routed);
    const std::string tag = routed ? "r" : "l";

    // 1. One lock, one request on each node at the same moment, each
    //    node's copy behind the others: local decisions give three winners.
    DelayReplication(all, 400);
    const std::string lock = "lock:one:" + tag;
    std::atomic<int> inserted{0}, other{0};
    ephpm_test::Barrier barrier(3);
    std::vector<std::thread> racers;
    for (Node* n : all) {
      racers.emplace_back([&, n] {
        barrier.ArriveAndWait();
        const SetNxOutcome o = n->store->SetNx(lock, "token-" + n->id(), 30000);
        (o == SetNxOutcome::kInserted ? inserted : other).fetch_add(1);
      });
    }
    for (auto& r : racers) r.join();
    CHECK(inserted.load() == (routed ? 1 : 3));
    CHECK(other.load() == (routed ? 2 : 0));
    DelayReplication(all, 0);

    // 2. A stale release: the owner's lock moved from token-1 to token-2
    //    (token-1 expired and was granted again), but c's copy still holds
    //    token-1.  The old holder's release through c must be refused.
    const std::string key = KeyOwnedBy(t.a, "a", "lock:stale:" + tag + ":");
    REQUIRE(t.a.store->SetNx(key, "token-1", 30000) == SetNxOutcome::kInserted);
    REQUIRE(WaitFor(2000, [&] { return t.Everywhere(key, "token-1"); }) >= 0);
    t.a.node->TestDelayReplication("c", 600);
    t.b.node->TestDelayReplication("c", 600);
    REQUIRE(t.a.store->DelIfEqLocal(key, "token-1") == DelIfEqOutcome::kDeleted);
    REQUIRE(t.a.store->SetNxLocal(key, "token-2", 30000) == SetNxOutcome::kInserted);
    CHECK(t.c.Get(key) == "token-1");  // c lags
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the release comes later
    const DelIfEqOutcome stale = t.c.store->DelIfEq(key, "token-1");
    CHECK(stale == (routed ? DelIfEqOutcome::kNotMatched : DelIfEqOutcome::kDeleted));
    DelayReplication(all, 0);
    // Once everything has arrived: the new holder's lock survives on every
    // node only when the release was refused; the local "success" deleted
    // it everywhere (its tombstone is newer than the grant).
    if (routed) {
      REQUIRE(WaitFor(3000, [&] { return t.Everywhere(key, "token-2"); }) >= 0);
    } else {
      REQUIRE(WaitFor(3000, [&] { return t.Everywhere(key, "<missing>"); }) >= 0);
    }

    // 3. The owner cut off from b: b's set_nx cannot be decided.
    const std::string far = KeyOwnedBy(t.b, "a", "lock:far:" + tag + ":");
    t.a.node->TestCutOff("b", true);
    t.b.node->TestCutOff("a", true);
    const int64_t start = NowMs();
    const SetNxOutcome o = t.b.store->SetNx(far, "token-b", 30000);
    const int64_t took = NowMs() - start;
    t.a.node->TestCutOff("b", false);
    t.b.node->TestCutOff("a", false);
    CHECK(o == (routed ? SetNxOutcome::kOwnerUnreachable : SetNxOutcome::kInserted));
    if (routed) {
      INFO("the unreachable answer took " << took << " ms");
      CHECK(took >= Fast("x").request_timeout_ms - 5);  // it waited for the owner
      CHECK(t.b.Get(far) == "<missing>");                // and decided nothing itself
    }
    REQUIRE(WaitFor(3000, [&] { return AllAlive(all, {"a", "b", "c"}); }) >= 0);
  }
}

TEST_CASE("routing: 32 threads on four nodes race set_nx: exactly one winner per key",
          "[cluster][routing]") {
  Trio t;
  auto od = Fast("d");
  od.join = {t.a.address()};
  Node d(od);
  const std::vector<Node*> all = {&t.a, &t.b, &t.c, &d};
  REQUIRE(WaitFor(5000, [&] { return AllAlive(all, {"a", "b", "c", "d"}) && AllReady(all); }) >= 0);

  constexpr int kThreads = 32, kRounds = 60;
  std::vector<int> winners(kRounds, 0), unreachable(kRounds, 0), bad(kRounds, 0);
  std::vector<std::string> winner_token(kRounds);
  std::mutex mu;
  ephpm_test::Barrier barrier(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      Node* n = all[static_cast<size_t>(th) % all.size()];
      for (int round = 0; round < kRounds; ++round) {
        const std::string key = "race:" + std::to_string(round);
        const std::string token = "t" + std::to_string(th);
        barrier.ArriveAndWait();
        const SetNxOutcome o = n->store->SetNx(key, token, 30000);
        std::lock_guard<std::mutex> l(mu);
        if (o == SetNxOutcome::kInserted) {
          ++winners[static_cast<size_t>(round)];
          winner_token[static_cast<size_t>(round)] = token;
        } else if (o == SetNxOutcome::kOwnerUnreachable) {
          ++unreachable[static_cast<size_t>(round)];
        } else if (o != SetNxOutcome::kExists) {
          ++bad[static_cast<size_t>(round)];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    CHECK(winners[static_cast<size_t>(round)] == 1);
    CHECK(unreachable[static_cast<size_t>(round)] == 0);
    CHECK(bad[static_cast<size_t>(round)] == 0);
  }
  // Every node ends with each round's one winner.
  REQUIRE(WaitFor(3000, [&] {
            for (int round = 0; round < kRounds; ++round) {
              for (Node* n : all) {
                if (n->Get("race:" + std::to_string(round)) !=
                    winner_token[static_cast<size_t>(round)]) {
                  return false;
                }
              }
            }
            return true;
          }) >= 0);
  const std::string info = t.b.node->Describe();
  CHECK(info.find("cluster_routed_calls:0\n") == std::string::npos);
}

TEST_CASE("routing: a stale del_if_eq on a non-owner that still holds the old token is refused",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const std::string key = KeyOwnedBy(t.a, "a", "lock:");
  REQUIRE(t.b.store->SetNx(key, "old", 30000) == SetNxOutcome::kInserted);
  // A decision is answered only once every member has it.
  CHECK(t.Everywhere(key, "old"));
  REQUIRE(t.b.store->DelIfEq(key, "old") == DelIfEqOutcome::kDeleted);
  REQUIRE(t.b.store->SetNx(key, "new", 30000) == SetNxOutcome::kInserted);
  CHECK(t.Everywhere(key, "new"));
  // A copy can still be stale where no decision keeps it current (a node
  // that was cut off or held dead, before it catches up): make c's so by
  // hand, holding the old token.
  ephpm::EntryInfo held;
  REQUIRE(t.c.store->Inspect(key, &held) == Status::kOk);
  t.c.store->ForgetLocal(key, ephpm::Stamp{held.stamp.hlc + 1, held.stamp.node});  // not its
  CHECK(t.c.Get(key) == "new");                                                       // stamp
  t.c.store->ForgetLocal(key, held.stamp);
  CHECK(t.c.Get(key) == "<missing>");
  ephpm::Mutation stale;
  stale.kind = ephpm::Mutation::Kind::kSet;
  stale.key = key;
  stale.value = "old";
  stale.original_size = 3;
  stale.stamp = ephpm::Stamp{1, 1};
  REQUIRE(t.c.store->ApplyReplicated(stale));
  CHECK(t.c.Get(key) == "old");
  CHECK(t.c.store->DelIfEq(key, "old") == DelIfEqOutcome::kNotMatched);
  // ... and a fenced write with the old token is refused the same way.
  CHECK(t.c.store->SetIfEq(key, "old", "data:" + key, "stale", 0) ==
        SetIfEqOutcome::kNotMatched);
  CHECK(t.c.store->SetIfEq(key, "new", "data:" + key, "fresh", 0) == SetIfEqOutcome::kWritten);
  // ... and so is a fenced delete (the session's destroy) with the old token.
  CHECK(t.c.store->DelIfGuardEq(key, "old", "data:" + key) ==
        ephpm::DelIfGuardEqOutcome::kNotMatched);
  CHECK(t.Everywhere("data:" + key, "fresh"));
  // The holder's fenced delete and release, through any node, work.
  CHECK(t.c.store->DelIfGuardEq(key, "new", "data:" + key) ==
        ephpm::DelIfGuardEqOutcome::kDeleted);
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere("data:" + key, "<missing>"); }) >= 0);
  CHECK(t.c.store->DelIfEq(key, "new") == DelIfEqOutcome::kDeleted);
  CHECK(t.Everywhere(key, "<missing>"));  // c's stale copy too: the release reached it
}

TEST_CASE("routing: incr_by is decided by the owner, so increments from every node add up",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (Node* n : t.all()) {
    for (int i = 0; i < 3; ++i) {
      threads.emplace_back([&, n] {
        for (int k = 0; k < 200; ++k) {
          int64_t v = 0;
          if (n->store->IncrBy("counter", 1, &v) != Status::kOk) errors.fetch_add(1);
        }
      });
    }
  }
  for (auto& th : threads) th.join();
  CHECK(errors.load() == 0);
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere("counter", "1800"); }) >= 0);
  // Errors come back from the owner as they are.
  REQUIRE(t.a.store->Set("text", "abc") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("text", "abc"); }) >= 0);
  for (Node* n : t.all()) {
    int64_t v = 0;
    CHECK(n->store->IncrBy("text", 1, &v) == Status::kNotInteger);
  }
  // GetFromOwner sees the owner's write before replication brings it.
  const std::string key = KeyOwnedBy(t.a, "a", "fresh:");
  t.a.node->TestDelayReplication("b", 500);
  REQUIRE(t.a.store->Set(key, "v2") == Status::kOk);
  std::string v;
  CHECK(t.b.Get(key) == "<missing>");
  CHECK(t.b.store->GetFromOwner(key, &v) == Status::kOk);
  CHECK(v == "v2");
  CHECK(t.b.store->GetFromOwner("no-such-key", &v) == Status::kNotFound);
  t.a.node->TestDelayReplication("b", 0);
}

TEST_CASE("routing: a killed owner answers OwnerUnreachable, never a second winner; then ownership moves",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const std::string held = KeyOwnedBy(t.b, "c", "held:");
  const std::string fresh = KeyOwnedBy(t.b, "c", "fresh:");
  REQUIRE(t.a.store->SetNx(held, "holder", 30000) == SetNxOutcome::kInserted);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere(held, "holder"); }) >= 0);

  t.c.Kill();
  const ClusterOptions o = Fast("x");
  int inserted_fresh = 0, inserted_held = 0, unreachable = 0, others = 0;
  int64_t slowest = 0;
  const int64_t deadline = NowMs() + 4 * FailureDetectionBoundMs(o, 3);
  bool moved = false;
  while (NowMs() < deadline) {
    for (Node* n : {&t.a, &t.b}) {
      const bool c_alive_before = n->View()["c"] != MemberState::kDead;
      const int64_t start = NowMs();
      const SetNxOutcome r1 = n->store->SetNx(fresh, "from-" + n->id(), 30000);
      const SetNxOutcome r2 = n->store->SetNx(held, "thief-" + n->id(), 30000);
      slowest = std::max(slowest, NowMs() - start);
      if (c_alive_before && n->View()["c"] != MemberState::kDead) {
        // While this node still holds c alive, its answer is "unknown".
        CHECK(r1 == SetNxOutcome::kOwnerUnreachable);
        CHECK(r2 == SetNxOutcome::kOwnerUnreachable);
      }
      inserted_fresh += r1 == SetNxOutcome::kInserted;
      inserted_held += r2 == SetNxOutcome::kInserted;
      unreachable += (r1 == SetNxOutcome::kOwnerUnreachable) + (r2 == SetNxOutcome::kOwnerUnreachable);
      others += r1 == SetNxOutcome::kExists;
    }
    moved = t.a.View()["c"] == MemberState::kDead && t.b.View()["c"] == MemberState::kDead;
    if (moved && inserted_fresh == 1 && others >= 1) break;
  }
  INFO("unreachable answers " << unreachable << ", slowest pair " << slowest << " ms");
  CHECK(unreachable > 0);
  CHECK(moved);
  // A lock that had replicated before the owner died is known to the new
  // owner: nobody steals it.  A new lock has exactly one winner.
  CHECK(inserted_held == 0);
  CHECK(inserted_fresh == 1);
  CHECK(slowest <= 2 * (o.request_timeout_ms + 1000));
  CHECK(t.a.Get(held) == "holder");
}

// Issue 12, break 4: the owner of a lock and a counter is paused (its network
// side frozen, as with SIGSTOP); it is declared dead, a new owner grants the
// lock to B and acknowledges increments; then the paused node resumes with
// requests still queued for it, and its own clients ask it to decide on its
// stale copy.  None of that may be applied: no second holder, no lost
// increment.
TEST_CASE("routing: a paused owner that wakes up applies nothing stale", "[cluster][routing]") {
  Trio t;
  t.Converge();
  const std::string lock = KeyOwnedBy(t.a, "c", "lock:");
  const std::string counter = KeyOwnedBy(t.a, "c", "counter:");
  const ClusterOptions o = Fast("x");
  // A holds the lock (a short TTL, so that B may take it once A's lease is
  // over); ten increments are acknowledged.
  REQUIRE(t.a.store->SetNx(lock, "A", 800) == SetNxOutcome::kInserted);
  int64_t v = 0;
  for (int i = 0; i < 10; ++i) REQUIRE(t.a.store->IncrBy(counter, 1, &v) == Status::kOk);
  REQUIRE(v == 10);

  t.c.node->TestPause(true);
  // Requests for the paused owner: the answer is "unknown", and they stay
  // queued on its socket.
  CHECK(t.a.store->DelIfEq(lock, "A") == DelIfEqOutcome::kOwnerUnreachable);
  CHECK(t.b.store->IncrBy(counter, 1, &v) == Status::kOwnerUnreachable);

  // c is declared dead; a and b may decide again.
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive({&t.a, &t.b}, {"a", "b"}) && AllReady({&t.a, &t.b});
          }) >= 0);
  // A's lock runs out; B takes it on the new owner; increments go on.
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  REQUIRE(WaitFor(3000, [&] {
            return t.b.store->SetNx(lock, "B", 30000) == SetNxOutcome::kInserted;
          }) >= 0);
  int64_t acknowledged = 10;
  for (int i = 0; i < 5; ++i) {
    if (t.a.store->IncrBy(counter, 1, &v) == Status::kOk) ++acknowledged;
  }
  REQUIRE(acknowledged == 15);
  CHECK(t.a.Get(lock) == "B");
  CHECK(t.b.Get(lock) == "B");

  // c wakes up.  Its own clients ask it first, on its stale copy (A's lock
  // expired there, the counter at 10 or 11).
  t.c.node->TestPause(false);
  const SetNxOutcome stolen = t.c.store->SetNx(lock, "C", 30000);
  const Status incr_on_stale = t.c.store->IncrBy(counter, 1, &v);
  CHECK(stolen != SetNxOutcome::kInserted);
  if (incr_on_stale == Status::kOk) {
    // Only possible if c had already caught up (in one process that takes
    // well under a millisecond): then it counted from the new owner's value.
    CHECK(v > acknowledged);
    ++acknowledged;
  } else {
    CHECK(incr_on_stale == Status::kOwnerUnreachable);
  }

  // c rejoins and catches up; then every node agrees: B holds the lock,
  // the counter has every acknowledged increment (and no more than the
  // answers that were "unknown" could add).
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive(t.all(), {"a", "b", "c"}) && AllReady(t.all());
          }) >= 0);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere(lock, "B"); }) >= 0);
  int64_t observed = -1;
  {
    std::string text;
    REQUIRE(t.c.store->Get(counter, &text) == Status::kOk);
    observed = std::stoll(text);
  }
  INFO("acknowledged " << acknowledged << ", observed " << observed);
  CHECK(observed >= acknowledged);
  CHECK(observed <= acknowledged + 1);  // the one increment answered "unknown" during the pause
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere(counter, std::to_string(observed)); }) >= 0);
  CHECK(t.c.store->SetNx(lock, "D", 30000) == SetNxOutcome::kExists);
  CHECK(t.c.store->IncrBy(counter, 1, &v) == Status::kOk);
  CHECK(v == observed + 1);
  CHECK(t.Everywhere(lock, "B"));
  // The paused owner refused the requests that had waited for it.
  CHECK(t.c.node->Describe().find("cluster_routed_refused:0\n") == std::string::npos);
}

// A decision is answered only once every member has it: an owner that dies
// right after answering cannot take an acknowledged grant or increment with
// it, and whichever node owns the key next already knows it.
TEST_CASE("routing: a decision is on every member before it is answered", "[cluster][routing]") {
  Trio t;
  t.Converge();
  int64_t v = 0;
  for (int i = 0; i < 60; ++i) {
    Node* n = t.all()[static_cast<size_t>(i) % 3];
    const std::string key = "held:" + std::to_string(i);
    REQUIRE(n->store->SetNx(key, "tok" + std::to_string(i), 30000) == SetNxOutcome::kInserted);
    CHECK(t.Everywhere(key, "tok" + std::to_string(i)));
    REQUIRE(n->store->IncrBy("counter:" + std::to_string(i % 7), 1, &v) == Status::kOk);
    CHECK(t.Everywhere("counter:" + std::to_string(i % 7), std::to_string(v)));
    REQUIRE(n->store->SetIfEq(key, "tok" + std::to_string(i), "data:" + key, "d", 0) ==
            SetIfEqOutcome::kWritten);
    CHECK(t.Everywhere("data:" + key, "d"));
    REQUIRE(n->store->ExpireIfGuardEq(key, "tok" + std::to_string(i), "data:" + key, 60000) ==
            ephpm::ExpireIfGuardEqOutcome::kApplied);
    for (Node* m : t.all()) {
      ephpm::EntryInfo info;
      REQUIRE(m->store->Inspect("data:" + key, &info) == Status::kOk);
      CHECK(info.expires_at_ms != 0);
    }
    REQUIRE(n->store->DelIfGuardEq(key, "tok" + std::to_string(i), "data:" + key) ==
            ephpm::DelIfGuardEqOutcome::kDeleted);
    CHECK(t.Everywhere("data:" + key, "<missing>"));
    REQUIRE(n->store->DelIfEq(key, "tok" + std::to_string(i)) == DelIfEqOutcome::kDeleted);
    CHECK(t.Everywhere(key, "<missing>"));
  }
  const std::string info = t.a.node->Describe();
  CHECK(info.find("cluster_decisions_unconfirmed:0\n") != std::string::npos);
  CHECK(info.find("cluster_decisions_confirmed:0\n") == std::string::npos);
}

// A routed request carries its caller's deadline: one that reaches the owner
// after the caller was answered "unknown" is refused, never applied.
TEST_CASE("routing: a request that reaches the owner after its deadline is not applied",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const std::string key = KeyOwnedBy(t.a, "c", "late:");
  const std::string counter = KeyOwnedBy(t.a, "c", "late-counter:");
  const ClusterOptions o = Fast("x");
  t.a.node->TestDelay("c", o.request_timeout_ms + 200);  // every frame a -> c arrives late
  int64_t v = 0;
  CHECK(t.a.store->SetNx(key, "late", 30000) == SetNxOutcome::kOwnerUnreachable);
  CHECK(t.a.store->IncrBy(counter, 1, &v) == Status::kOwnerUnreachable);
  std::this_thread::sleep_for(std::chrono::milliseconds(o.request_timeout_ms + 400));
  t.a.node->TestDelay("c", 0);
  CHECK(t.c.Get(key) == "<missing>");
  CHECK(t.b.Get(key) == "<missing>");
  CHECK(t.c.Get(counter) == "<missing>");
  CHECK(t.c.node->Describe().find("cluster_routed_refused:0\n") == std::string::npos);
  // Once the link is quick again, the same request is decided.
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive(t.all(), {"a", "b", "c"}) && AllReady(t.all());
          }) >= 0);
  REQUIRE(WaitFor(3000, [&] {
            return t.a.store->SetNx(key, "on-time", 30000) == SetNxOutcome::kInserted;
          }) >= 0);
  CHECK(t.Everywhere(key, "on-time"));
}

// A node cut off from the others (a partition) holds a minority of the
// members it knows: it refuses every decision, so a lock cannot get a holder
// on each side; the majority side goes on.
TEST_CASE("routing: the minority side of a partition decides nothing", "[cluster][routing]") {
  Trio t;
  t.Converge();
  const ClusterOptions o = Fast("x");
  const std::string c_key = KeyOwnedBy(t.a, "c", "p:");
  t.Isolate(t.c, true);
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive({&t.a, &t.b}, {"a", "b"}) && AllAlive({&t.c}, {"c"}) &&
                   AllReady({&t.a, &t.b});
          }) >= 0);
  CHECK_FALSE(t.c.node->Ready());
  CHECK(t.c.store->SetNx(c_key, "minority", 30000) == SetNxOutcome::kOwnerUnreachable);
  int64_t v = 0;
  CHECK(t.c.store->IncrBy("p-counter", 1, &v) == Status::kOwnerUnreachable);
  CHECK(t.a.store->SetNx(c_key, "majority", 30000) == SetNxOutcome::kInserted);
  CHECK(t.c.Get(c_key) == "<missing>");
  t.Isolate(t.c, false);
  REQUIRE(WaitFor(6 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive(t.all(), {"a", "b", "c"}) && AllReady(t.all());
          }) >= 0);
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere(c_key, "majority"); }) >= 0);
  CHECK(t.c.store->SetNx(c_key, "late", 30000) == SetNxOutcome::kExists);
}

// Issue 12, break 4 (found by the fault test): an owner that applied a
// routed decision but did not get every confirmation must answer "unknown".
// Answered "refused", the asker asked again, and the first try could still
// stand on the members that had confirmed it: one INCR counted twice.
TEST_CASE("routing: an unconfirmed routed decision is unknown to the asker, never asked again",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const ClusterOptions o = Fast("x");
  const std::string counter = KeyOwnedBy(t.a, "c", "unconfirmed:");
  int64_t v = 0;
  REQUIRE(t.a.store->IncrBy(counter, 1, &v) == Status::kOk);
  REQUIRE(v == 1);
  const uint64_t calls = Counter(t.a, "cluster_routed_calls");
  t.c.node->TestCutOff("b", true);  // c's frames to b are lost: b cannot confirm
  CHECK(t.a.store->IncrBy(counter, 1, &v) == Status::kOwnerUnreachable);
  t.c.node->TestCutOff("b", false);
  CHECK(Counter(t.a, "cluster_routed_calls") == calls + 1);
  // (c's own timer for b's confirmation ends at the same deadline as a's
  // wait: whichever comes first, a asked once.)
  CHECK(WaitFor(2000, [&] { return Counter(t.c, "cluster_decisions_unconfirmed") >= 1; }) >= 0);
  // c forgets its copy and fetches the members' state.  a confirmed the
  // increment, b never saw it: until the next decision on the key, b may
  // still read 1 where a reads 2 (nothing pushes an unknown outcome to a
  // member that missed it).  The next decision starts from the newest state
  // and reaches every member: 2 or 3, never 4.
  REQUIRE(WaitFor(6 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive(t.all(), {"a", "b", "c"}) && AllReady(t.all());
          }) >= 0);
  for (Node* n : t.all()) {
    const std::string seen = n->Get(counter);
    INFO(n->id() << " reads " << seen);
    CHECK((seen == "1" || seen == "2"));
  }
  REQUIRE(t.b.store->IncrBy(counter, 1, &v) == Status::kOk);
  CHECK((v == 2 || v == 3));
  CHECK(t.Everywhere(counter, std::to_string(v)));
}

// Issue 12, break 4 (found by the fault test): the members remember the
// catch-up state they sent a node they saw come back from the dead, and
// refuse its decisions taken before it applied that state.  A process
// started since with the same id never saw that state; it must not be
// refused forever (it fetches everyone's state on start anyway).
TEST_CASE("routing: a node revived, then restarted with the same id, decides again",
          "[cluster][routing]") {
  Trio t;
  t.Converge();
  const ClusterOptions o = Fast("x");
  // c is held dead, then comes back: a and b send it their state.
  t.c.node->TestPause(true);
  REQUIRE(WaitFor(4 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive({&t.a, &t.b}, {"a", "b"}) && AllReady({&t.a, &t.b});
          }) >= 0);
  t.c.node->TestPause(false);
  t.Converge();
  const std::string before = KeyOwnedBy(t.a, "c", "revived:");
  REQUIRE(WaitFor(3000, [&] {
            return t.c.store->SetNx(before, "c1", 30000) == SetNxOutcome::kInserted;
          }) >= 0);

  // The process restarts at once (before anyone declares it dead).
  t.c.Kill();
  Node c2([&] {
    auto oc = Fast("c");
    oc.join = {t.a.address()};
    return oc;
  }());
  const std::vector<Node*> all{&t.a, &t.b, &c2};
  auto knows_c2 = [&](const Node* n) {
    for (const auto& m : n->node->Members()) {
      if (m.id == "c") return m.address == c2.address();
    }
    return false;
  };
  REQUIRE(WaitFor(6 * FailureDetectionBoundMs(o, 3), [&] {
            return AllAlive(all, {"a", "b", "c"}) && AllReady(all) && knows_c2(&t.a) &&
                   knows_c2(&t.b);
          }) >= 0);
  // Its decisions are confirmed, asked there or routed to it.
  const std::string after = KeyOwnedBy(t.a, "c", "restarted:");
  int64_t v = 0;
  CHECK(WaitFor(3000, [&] { return c2.store->IncrBy(after, 1, &v) == Status::kOk; }) >= 0);
  CHECK(t.a.store->SetNx(after + ":lock", "a", 30000) != SetNxOutcome::kOwnerUnreachable);
  CHECK(c2.store->SetNx(before, "c2", 30000) == SetNxOutcome::kExists);
  CHECK(c2.Get(before) == "c1");
}

TEST_CASE("routing: a paused node's callers get nothing out until it wakes",
          "[cluster][routing]") {
  // TestPause stands for a stopped process as its peers see it.  A route
  // request is written by the calling thread itself when its connection is
  // idle (cluster/transport.cc): that write too must wait for the pause to
  // end, or the owner would decide for a process that is stopped.
  Trio t;
  t.Converge();
  const std::string k = KeyOwnedBy(t.c, "a", "paused:");
  t.c.node->TestPause(true);
  CHECK(t.c.store->SetNx(k, "C", 30000) == SetNxOutcome::kOwnerUnreachable);
  CHECK(t.a.Get(k) == "<missing>");
  CHECK(t.b.Get(k) == "<missing>");
  t.c.node->TestPause(false);
  // The request leaves now, past its deadline: the owner refuses it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(t.a.Get(k) == "<missing>");
  CHECK(t.b.Get(k) == "<missing>");
  CHECK(t.c.Get(k) == "<missing>");
  // Awake, c's requests go out again.
  t.Converge();
  CHECK(WaitFor(5000, [&] { return t.c.store->SetNx(k, "C2", 30000) == SetNxOutcome::kInserted; }) >=
        0);
  CHECK(t.a.Get(k) == "C2");
}
