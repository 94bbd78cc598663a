// Strict mode in one process (docs/CLUSTER.md, "Strict mode"): three nodes
// whose lock decisions are etcd transactions, against a real one-member
// etcd started by tests/etcd/etcd-cluster.sh.  Threads race for one lock on
// every node; fences increase across nodes; a stale holder's fenced write is
// refused everywhere; without etcd nothing is guessed.  (The same over RESP,
// with quorum loss and mode switches, is in tests/e2e/etcd_*.sh; under
// ThreadSanitizer, this is where the arbiter's threads are checked.)

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cluster_util.h"
#include "etcd_arbiter.h"

namespace {

using cluster_test::Fast;
using cluster_test::Node;
using cluster_test::WaitFor;
using ephpm::DelIfEqOutcome;
using ephpm::FencedGrant;
using ephpm::LockStateOutcome;
using ephpm::SetFencedOutcome;
using ephpm::SetNxOutcome;
using ephpm::cluster::ClusterOptions;

std::string Shell(const std::string& args) {
  return "bash '" EPHPM_ETCD_CLUSTER_SCRIPT "' " + args + " >/dev/null 2>&1";
}

// A one-member etcd for the test case, stopped at its end.
struct Etcd {
  std::string dir;
  std::string endpoints;
  Etcd() {
    char tmpl[] = "/tmp/ephpm-strict-test.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    REQUIRE(std::system(Shell("start " + dir + "/etcd 1 " + std::to_string(getpid())).c_str()) == 0);
    std::ifstream in(dir + "/etcd/endpoints");
    std::getline(in, endpoints);
    REQUIRE(!endpoints.empty());
  }
  ~Etcd() {
    (void)std::system(Shell("stop " + dir + "/etcd").c_str());
    (void)std::system(("rm -rf '" + dir + "'").c_str());
  }
};

ClusterOptions Strict(const std::string& id, const std::string& endpoints,
                      const std::string& prefix, int64_t timeout_ms = 1000) {
  ClusterOptions o = Fast(id);
  o.arbiter = ClusterOptions::Arbiter::kEtcd;
  o.etcd_endpoints = {endpoints};
  o.etcd_prefix = prefix;
  o.etcd_lease_ttl_s = 2;
  o.etcd_timeout_ms = timeout_ms;
  return o;
}

uint64_t EtcdCounter(const Node& n, const std::string& name) {
  ephpm::ClusterInfo info;
  if (!n.node->Info(&info)) return 0;
  for (const auto& [k, v] : info.counters) {
    if (k == name) return v;
  }
  return ~uint64_t{0};
}

// Three strict nodes over `endpoints` (b joins through a, c through b).
struct StrictTrio {
  Node a, b, c;
  StrictTrio(const std::string& endpoints, const std::string& prefix,
             int64_t timeout_ms = 1000)
      : a(Strict("a", endpoints, prefix, timeout_ms)),
        b([&] {
          auto o = Strict("b", endpoints, prefix, timeout_ms);
          o.join = {a.address()};
          return o;
        }()),
        c([&] {
          auto o = Strict("c", endpoints, prefix, timeout_ms);
          o.join = {b.address()};
          return o;
        }()) {}
  std::vector<Node*> all() { return {&a, &b, &c}; }
  // Every node holds its lease, knows the three from etcd and may decide.
  bool Serving() {
    for (Node* n : all()) {
      if (EtcdCounter(*n, "etcd_serving") != 1 || EtcdCounter(*n, "etcd_members") != 3 ||
          !n->node->Ready()) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace

TEST_CASE("strict: the lease arithmetic stops a node before etcd can expire it",
          "[cluster][strict]") {
  using ephpm::cluster::LeaseServingUntil;
  // Sent at t = 1000 ms, etcd answered 5 s left: 1% drift and 100 ms slack.
  CHECK(LeaseServingUntil(1000, 5) == 1000 + 5000 - 50 - 100);
  // Always before the lease's earliest expiry as etcd counts it.
  for (int64_t ttl = 2; ttl <= 3600; ttl += 7) {
    CHECK(LeaseServingUntil(0, ttl) < ttl * 1000);
    CHECK(LeaseServingUntil(0, ttl) <= ttl * 1000 * 99 / 100 - 100);
  }
}

TEST_CASE("strict: one holder among threads on three nodes, fences increase across nodes",
          "[cluster][strict]") {
  Etcd etcd;
  StrictTrio t(etcd.endpoints, "/strict-" + std::to_string(getpid()) + "-a");
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);

  // 12 threads, 4 per node, race for each of 20 locks: exactly one wins.
  for (int round = 0; round < 20; ++round) {
    const std::string key = "race:" + std::to_string(round);
    std::atomic<int> winners{0}, unknown{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 12; ++i) {
      Node* n = t.all()[i % 3];
      threads.emplace_back([&, n, i] {
        const SetNxOutcome o = n->store->SetNx(key, "tok" + std::to_string(i), 30000);
        if (o == SetNxOutcome::kInserted) winners.fetch_add(1);
        if (o == SetNxOutcome::kOwnerUnreachable) unknown.fetch_add(1);
      });
    }
    for (auto& th : threads) th.join();
    INFO("round " << round);
    CHECK(winners.load() == 1);
    CHECK(unknown.load() == 0);
  }

  // Fences of successive grants of one lock, taken on each node in turn.
  uint64_t last = 0;
  for (int i = 0; i < 9; ++i) {
    Node* n = t.all()[i % 3];
    const std::string token = "f" + std::to_string(i);
    const FencedGrant g = n->store->SetNxFenced("fenced", token, 30000, false);
    REQUIRE(g.outcome == SetNxOutcome::kInserted);
    CHECK(g.fence > last);
    last = g.fence;
    // Every node reads the holder and its fence from etcd.
    for (Node* m : t.all()) {
      const auto st = m->store->LockState("fenced", token);
      CHECK(st.outcome == LockStateOutcome::kHeld);
      CHECK(st.fence == g.fence);
    }
    CHECK(n->store->DelIfEq("fenced", "not-" + token) == DelIfEqOutcome::kNotMatched);
    CHECK(t.all()[(i + 1) % 3]->store->DelIfEq("fenced", token) == DelIfEqOutcome::kDeleted);
    CHECK(n->store->LockState("fenced", token).outcome == LockStateOutcome::kAbsent);
  }
}

TEST_CASE("strict: a stale holder's fenced write is refused on every node",
          "[cluster][strict]") {
  Etcd etcd;
  StrictTrio t(etcd.endpoints, "/strict-" + std::to_string(getpid()) + "-b");
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);

  const FencedGrant old = t.a.store->SetNxFenced("lk", "old", 30000, false);
  REQUIRE(old.outcome == SetNxOutcome::kInserted);
  // The holder is gone (its lock released for it); another takes the lock.
  REQUIRE(t.c.store->DelIfEq("lk", "old") == DelIfEqOutcome::kDeleted);
  const FencedGrant now = t.b.store->SetNxFenced("lk", "new", 30000, false);
  REQUIRE(now.outcome == SetNxOutcome::kInserted);
  REQUIRE(now.fence > old.fence);
  REQUIRE(t.b.store->SetFenced("data", "new", now.fence, 0) == SetFencedOutcome::kWritten);
  for (Node* n : t.all()) {
    CHECK(n->store->SetFenced("data", "stale", old.fence, 0) == SetFencedOutcome::kStale);
  }
  // The lock's copy carries its fence to every member's fence clock, so a
  // later gossip-mode grant anywhere is above it.
  CHECK(WaitFor(5000, [&] {
          for (Node* n : t.all()) {
            if (n->store->FenceClock() < now.fence) return false;
          }
          return true;
        }) >= 0);
  // The session handler's write: set_if_eq(lock, token, ...) is the token
  // check in etcd plus a fenced write with the grant's fence.
  CHECK(t.c.store->SetIfEq("lk", "old", "data", "stale", 0) == ephpm::SetIfEqOutcome::kNotMatched);
  CHECK(t.a.store->SetIfEq("lk", "new", "data", "newer", 0) == ephpm::SetIfEqOutcome::kWritten);
  CHECK(WaitFor(5000, [&] {
          for (Node* n : t.all()) {
            if (n->Get("data") != "newer") return false;
          }
          return true;
        }) >= 0);
}

TEST_CASE("strict: without etcd nothing is decided, reads go on", "[cluster][strict]") {
  // A port nothing listens on.
  Node solo(Strict("solo", "127.0.0.1:9", "/strict-none"));
  REQUIRE(solo.store->Set("k", "v") == ephpm::Status::kOk);
  CHECK(solo.store->SetNx("lock", "t", 1000) == SetNxOutcome::kOwnerUnreachable);
  CHECK(solo.store->DelIfEq("lock", "t") == DelIfEqOutcome::kOwnerUnreachable);
  CHECK(solo.store->SetNxFenced("lock", "t", 1000, false).outcome ==
        SetNxOutcome::kOwnerUnreachable);
  CHECK(solo.store->ExpireIfEq("lock", "t", 1000) == ephpm::ExpireIfEqOutcome::kOwnerUnreachable);
  CHECK(solo.store->LockState("lock", "t").outcome == LockStateOutcome::kOwnerUnreachable);
  CHECK(solo.store->SetIfEq("lock", "t", "k", "w", 0) == ephpm::SetIfEqOutcome::kOwnerUnreachable);
  int64_t n = 0;
  CHECK(solo.store->IncrBy("c", 1, &n) == ephpm::Status::kOwnerUnreachable);
  CHECK(solo.Get("k") == "v");
  CHECK(EtcdCounter(solo, "etcd_serving") == 0);
  CHECK(EtcdCounter(solo, "etcd_refused") >= 5);
}

TEST_CASE("strict: a node keeps its lease while its threads take and release locks nonstop",
          "[cluster][strict]") {
  // Each release queues its lock's lease for revoking; the renewal of the
  // node's own lease must not wait behind them (it did: the node lost its
  // lease within one TTL under 8 busy workers, and refused every lock).
  Etcd etcd;
  // A long operation timeout: a refusal here must come from a lost lease,
  // not from a slow etcd under a sanitizer on a busy machine.
  StrictTrio t(etcd.endpoints, "/strict-" + std::to_string(getpid()) + "-c", 10000);
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);
  const uint64_t renewals = EtcdCounter(t.a, "etcd_lease_renewals");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> cycles{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const std::string key = "busy:" + std::to_string(i);
      for (uint64_t n = 0; !stop.load(); ++n) {
        const std::string token = std::to_string(i) + ":" + std::to_string(n);
        const SetNxOutcome o = t.a.store->SetNx(key, token, 30000);
        if (o != SetNxOutcome::kInserted) {
          refused.fetch_add(1);
          continue;
        }
        if (t.a.store->DelIfEq(key, token) == DelIfEqOutcome::kDeleted) cycles.fetch_add(1);
      }
    });
  }
  // Three lease TTLs (2 s each).
  std::this_thread::sleep_for(std::chrono::seconds(6));
  stop.store(true);
  for (auto& th : threads) th.join();
  INFO("cycles " << cycles.load() << ", refused " << refused.load());
  CHECK(cycles.load() > 0);
  CHECK(refused.load() == 0);
  CHECK(EtcdCounter(t.a, "etcd_lease_lost") == 0);
  CHECK(EtcdCounter(t.a, "etcd_serving") == 1);
  // Renewed three times per TTL: about 9 in 6 s.
  CHECK(EtcdCounter(t.a, "etcd_lease_renewals") >= renewals + 6);
}

TEST_CASE("strict: expire_if_eq refreshes only the holder's lock and keeps its fence",
          "[cluster][strict]") {
  Etcd etcd;
  StrictTrio t(etcd.endpoints, "/strict-" + std::to_string(getpid()) + "-d");
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);
  const FencedGrant g = t.a.store->SetNxFenced("rk", "mine", 2000, false);
  REQUIRE(g.outcome == SetNxOutcome::kInserted);
  CHECK(t.b.store->ExpireIfEq("rk", "other", 60000) == ephpm::ExpireIfEqOutcome::kNotMatched);
  CHECK(t.b.store->ExpireIfEq("absent", "mine", 60000) == ephpm::ExpireIfEqOutcome::kNotMatched);
  CHECK(t.c.store->ExpireIfEq("rk", "mine", 60000) == ephpm::ExpireIfEqOutcome::kApplied);
  // Past the first lease's 2 s: the lock lives on its new lease, same fence.
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  const auto st = t.a.store->LockState("rk", "mine");
  CHECK(st.outcome == LockStateOutcome::kHeld);
  CHECK(st.fence == g.fence);
  CHECK(t.b.store->SetNx("rk", "thief", 1000) == SetNxOutcome::kExists);
  // A TTL <= 0 releases, as Redis's EXPIRE with a time not in the future.
  CHECK(t.b.store->ExpireIfEq("rk", "mine", 0) == ephpm::ExpireIfEqOutcome::kApplied);
  CHECK(t.c.store->LockState("rk", "mine").outcome == LockStateOutcome::kAbsent);
  CHECK(t.c.store->ExpireIfEq("rk", "mine", 0) == ephpm::ExpireIfEqOutcome::kNotMatched);
}
