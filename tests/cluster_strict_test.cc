// Strict mode in one process (docs/CLUSTER.md, "Strict mode"): three nodes
// whose lock decisions are etcd transactions, against a real one-member
// etcd started by tests/etcd/etcd-cluster.sh.  Threads race for one lock on
// every node; fences increase across nodes; a stale holder's fenced write is
// refused everywhere; without etcd nothing is guessed.  (The same over RESP,
// with quorum loss and mode switches, is in tests/e2e/etcd_*.sh; under
// ThreadSanitizer, this is where the arbiter's threads are checked.)

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster_util.h"
#include "etcd_arbiter.h"
#include "etcd_client.h"

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

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A TCP proxy in front of one etcd member that loses, once, the answer to
// (or the whole of) the next request containing a marker: etcd applies the
// request and the connection breaks before its answer arrives, as when a
// member dies at that moment, or the request never arrives although it was
// sent.  Everything else passes through, except, while StallWatches(true),
// what etcd sends on watch streams (held back, as by a stalled member).
class LossyProxy {
 public:
  enum class Mode { kNone, kDropAnswer, kDropRequest };

  explicit LossyProxy(const std::string& target) {
    const size_t colon = target.rfind(':');
    REQUIRE(colon != std::string::npos);
    upstream_.sin_family = AF_INET;
    upstream_.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
    REQUIRE(inet_pton(AF_INET, target.substr(0, colon).c_str(), &upstream_.sin_addr) == 1);
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listen_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(listen_, 64) == 0);
    socklen_t len = sizeof a;
    REQUIRE(getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] { AcceptLoop(); });
  }
  ~LossyProxy() {
    stop_.store(true);
    shutdown(listen_, SHUT_RDWR);
    accept_.join();
    close(listen_);
    // Joined without the lock: a relay takes it (Take) until it sees stop_.
    std::vector<std::thread> conns;
    {
      std::lock_guard<std::mutex> l(mu_);
      conns.swap(conns_);
    }
    for (std::thread& t : conns) t.join();
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  void Arm(Mode m, const std::string& marker) {
    std::lock_guard<std::mutex> l(mu_);
    mode_ = m;
    marker_ = marker;
  }
  int fired() {
    std::lock_guard<std::mutex> l(mu_);
    return fired_;
  }
  // Returns once every relay has seen it (each polls at most 20 ms).
  void StallWatches(bool on) {
    stall_watches_.store(on);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

 private:
  void AcceptLoop() {
    for (;;) {
      const int c = accept(listen_, nullptr, nullptr);
      if (c < 0) return;  // shut down
      std::lock_guard<std::mutex> l(mu_);
      conns_.emplace_back([this, c] { Relay(c); });
    }
  }
  // The mode that applies to a request holding `pending`, disarmed.
  Mode Take(const std::string& pending) {
    std::lock_guard<std::mutex> l(mu_);
    if (mode_ == Mode::kNone || pending.find(marker_) == std::string::npos) return Mode::kNone;
    const Mode m = mode_;
    mode_ = Mode::kNone;
    ++fired_;
    return m;
  }
  static bool WriteAll(int fd, const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  void Relay(int c) {
    const int u = socket(AF_INET, SOCK_STREAM, 0);
    if (u < 0 || connect(u, reinterpret_cast<const sockaddr*>(&upstream_), sizeof upstream_) != 0) {
      close(c);
      if (u >= 0) close(u);
      return;
    }
    std::string pending;  // the client's bytes since etcd last answered
    bool drop_answer = false, watch = false;
    char buf[16384];
    while (!stop_.load()) {
      // A stalled watch's stream is left unread: etcd's bytes wait in the
      // socket until the stall ends.
      const bool stalled = watch && stall_watches_.load();
      pollfd fds[2] = {{c, POLLIN, 0}, {u, static_cast<short>(stalled ? 0 : POLLIN), 0}};
      if (poll(fds, 2, 20) < 0) break;
      if (fds[0].revents != 0) {
        const ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        pending.append(buf, static_cast<size_t>(n));
        if (pending.find("/v3/watch") != std::string::npos) watch = true;
        const Mode m = Take(pending);
        if (m == Mode::kDropRequest) break;
        if (m == Mode::kDropAnswer) drop_answer = true;
        if (!WriteAll(u, buf, static_cast<size_t>(n))) break;
      }
      if (fds[1].revents != 0) {
        const ssize_t n = read(u, buf, sizeof buf);
        if (n <= 0 || drop_answer) break;
        pending.clear();
        if (!WriteAll(c, buf, static_cast<size_t>(n))) break;
      }
    }
    close(c);
    close(u);
  }

  sockaddr_in upstream_{};
  int listen_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> stall_watches_{false};
  std::thread accept_;
  std::mutex mu_;
  std::vector<std::thread> conns_;  // guarded by mu_
  Mode mode_ = Mode::kNone;         // guarded by mu_
  std::string marker_;              // guarded by mu_
  int fired_ = 0;                   // guarded by mu_
};

}  // namespace

TEST_CASE("strict: a lost answer never turns into a wrong one", "[cluster][strict]") {
  Etcd etcd;
  LossyProxy proxy(etcd.endpoints);
  const std::string prefix = "/strict-" + std::to_string(getpid()) + "-g";
  Node solo(Strict("solo", proxy.endpoint(), prefix));
  REQUIRE(WaitFor(20000, [&] {
            return EtcdCounter(solo, "etcd_serving") == 1 &&
                   EtcdCounter(solo, "etcd_members") == 1 && solo.node->Ready();
          }) >= 0);
  ephpm::cluster::EtcdClient direct(ephpm::cluster::EtcdClientOptions{{etcd.endpoints}, 2000});
  auto in_etcd = [&](const std::string& key) {
    std::vector<ephpm::cluster::EtcdKv> kvs;
    REQUIRE(direct.Range(prefix + "/locks/" + key, "", NowMs() + 5000, &kvs, nullptr).ok());
    return kvs.empty() ? std::string("<none>") : kvs[0].value;
  };

  SECTION("a release applied whose answer was lost is unknown, not 'not held'") {
    REQUIRE(solo.store->SetNx("rel", "t", 30000) == SetNxOutcome::kInserted);
    proxy.Arm(LossyProxy::Mode::kDropAnswer, "request_delete_range");
    CHECK(solo.store->DelIfEq("rel", "t") == DelIfEqOutcome::kOwnerUnreachable);
    CHECK(proxy.fired() == 1);
    CHECK(in_etcd("rel") == "<none>");  // the first attempt did release it
  }
  SECTION("a grant applied whose answer was lost is recognised as this caller's") {
    proxy.Arm(LossyProxy::Mode::kDropAnswer, "request_put");
    const FencedGrant g = solo.store->SetNxFenced("g", "tg", 30000, false);
    CHECK(proxy.fired() == 1);
    REQUIRE(g.outcome == SetNxOutcome::kInserted);
    const auto st = solo.store->LockState("g", "tg");
    CHECK(st.outcome == LockStateOutcome::kHeld);
    CHECK(st.fence == g.fence);
    CHECK(solo.store->DelIfEq("g", "tg") == DelIfEqOutcome::kDeleted);
  }
  SECTION("a lost grant never claims another caller's equal value under the same lease") {
    // Two callers on one node ask for one lock with the same value; their
    // grants would share a lease.  The second's request is lost, and its
    // retry finds the first's lock: that is not its grant.
    REQUIRE(solo.store->SetNx("same", "v", 30000) == SetNxOutcome::kInserted);
    proxy.Arm(LossyProxy::Mode::kDropRequest, "request_put");
    CHECK(solo.store->SetNx("same", "v", 30000) == SetNxOutcome::kOwnerUnreachable);
    CHECK(proxy.fired() == 1);
    CHECK(in_etcd("same") == "v");
    // Without a loss the answer is plain.
    CHECK(solo.store->SetNx("same", "v", 30000) == SetNxOutcome::kExists);
  }
}

TEST_CASE("strict: an owner with another member list refuses and the asker reads etcd's list",
          "[cluster][strict]") {
  // Node a reaches etcd through a proxy that can hold back its watch's
  // events; when d leaves, a keeps the four-member list while b and c see
  // three.  A routed INCR from a carries a's list's fingerprint: an owner
  // with the three-member list refuses it, a reads etcd's list at once and
  // asks the owner of the new list.  Each INCR lands exactly once.
  Etcd etcd;
  LossyProxy proxy(etcd.endpoints);
  const std::string prefix = "/strict-" + std::to_string(getpid()) + "-h";
  Node a(Strict("a", proxy.endpoint(), prefix));
  auto joining = [&](const std::string& id, const std::string& via) {
    auto o = Strict(id, etcd.endpoints, prefix);
    o.join = {via};
    return o;
  };
  Node b(joining("b", a.address()));
  Node c(joining("c", b.address()));
  Node d(joining("d", c.address()));
  auto serving = [&](const std::vector<Node*>& ns, uint64_t members) {
    for (Node* n : ns) {
      if (EtcdCounter(*n, "etcd_serving") != 1 || EtcdCounter(*n, "etcd_members") != members ||
          !n->node->Ready()) {
        return false;
      }
    }
    return true;
  };
  REQUIRE(WaitFor(20000, [&] { return serving({&a, &b, &c, &d}, 4); }) >= 0);

  proxy.StallWatches(true);
  d.Kill();  // leaves: its member key goes with its lease
  REQUIRE(WaitFor(20000, [&] { return serving({&b, &c}, 3); }) >= 0);
  // ...and gossip has found d gone, so that decisions need not wait for it.
  REQUIRE(WaitFor(20000, [&] {
            for (Node* n : {&a, &b, &c}) {
              if (EtcdCounter(*n, "alive") != 3) return false;
            }
            return true;
          }) >= 0);
  REQUIRE(EtcdCounter(a, "etcd_members") == 4);  // a's watch is held back

  const uint64_t refused_before = EtcdCounter(b, "routed_refused") +
                                  EtcdCounter(c, "routed_refused");
  // Until a has read the new list.  A key a's old list gives to d cannot be
  // decided (d is gone: "unknown"); one it gives to b or c is refused by
  // them, and a reads the list and asks again.
  std::vector<std::string> landed;
  for (int i = 0; i < 40 && EtcdCounter(a, "etcd_members") == 4; ++i) {
    const std::string key = "ctr:" + std::to_string(i);
    int64_t v = 0;
    const ephpm::Status st = a.store->IncrBy(key, 1, &v);
    INFO("key " << key);
    CHECK((st == ephpm::Status::kOk || st == ephpm::Status::kOwnerUnreachable));
    if (st == ephpm::Status::kOk) {
      CHECK(v == 1);
      landed.push_back(key);
    }
  }
  // a read the new list although its watch said nothing: a refusal made it.
  CHECK(EtcdCounter(a, "etcd_members") == 3);
  CHECK(EtcdCounter(b, "routed_refused") + EtcdCounter(c, "routed_refused") > refused_before);
  CHECK(!landed.empty());
  // Exactly once, on every node.
  CHECK(WaitFor(5000, [&] {
          for (Node* n : {&a, &b, &c}) {
            for (const std::string& k : landed) {
              if (n->Get(k) != "1") return false;
            }
          }
          return true;
        }) >= 0);
  proxy.StallWatches(false);
}

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

TEST_CASE("strict: a shared lock lease outlives every lock put under it",
          "[cluster][strict]") {
  using ephpm::cluster::kLockLeaseReuseMs;
  using ephpm::cluster::LeaseServingUntil;
  using ephpm::cluster::LockLeaseSeconds;
  for (int64_t ttl = 1; ttl <= 3'600'000; ttl += ttl < 5000 ? 1 : 997) {
    const int64_t t = LockLeaseSeconds(ttl);
    INFO("ttl " << ttl << " ms, lease " << t << " s");
    // Reusable for half a second after its grant, on the worst clock...
    REQUIRE(LeaseServingUntil(0, t) >= ttl + kLockLeaseReuseMs);
    // ...and the shortest such lease, so a crashed holder's lock is not
    // kept much past its TTL: 1% drift, the reuse time, the margin and the
    // rounding to whole seconds.
    REQUIRE((t == 1 || LeaseServingUntil(0, t - 1) < ttl + kLockLeaseReuseMs));
    REQUIRE(t * 1000 <= ttl + ttl / 50 + kLockLeaseReuseMs + 100 + 1000 + 20);
  }
  CHECK(LockLeaseSeconds(30000) == 31);
  CHECK(LockLeaseSeconds(2000) == 3);
}

TEST_CASE("strict: locks share leases, and no release or expiry takes another's lock",
          "[cluster][strict]") {
  Etcd etcd;
  const std::string prefix = "/strict-" + std::to_string(getpid()) + "-e";
  StrictTrio t(etcd.endpoints, prefix);
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);
  ephpm::cluster::EtcdClient client(ephpm::cluster::EtcdClientOptions{{etcd.endpoints}, 2000});
  auto lease_of = [&](const std::string& key) {
    std::vector<ephpm::cluster::EtcdKv> kvs;
    int64_t rev = 0;
    REQUIRE(client.Range(prefix + "/locks/" + key, "", NowMs() + 5000, &kvs, &rev).ok());
    return kvs.empty() ? int64_t{-1} : kvs[0].lease;
  };

  // Many cycles: far fewer lease grants than locks.
  const uint64_t leases_before = EtcdCounter(t.a, "etcd_lock_leases");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) {
    const std::string token = "c" + std::to_string(i);
    REQUIRE(t.a.store->SetNx("cycle", token, 2000) == SetNxOutcome::kInserted);
    REQUIRE(t.a.store->DelIfEq("cycle", token) == DelIfEqOutcome::kDeleted);
  }
  const int64_t took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  const uint64_t leases = EtcdCounter(t.a, "etcd_lock_leases") - leases_before;
  INFO("40 cycles in " << took_ms << " ms took " << leases << " lease grants");
  // A 2 s lock's lease (3 s) carries new locks for at least 500 ms.
  CHECK(leases >= 1);
  CHECK(leases <= 1 + static_cast<uint64_t>(took_ms / 500));

  // Two locks granted together go under one lease: releasing one, or
  // refreshing it onto another lease, leaves the other where it is.
  REQUIRE(t.a.store->SetNx("p", "tp", 2000) == SetNxOutcome::kInserted);
  REQUIRE(t.a.store->SetNx("q", "tq", 2000) == SetNxOutcome::kInserted);
  REQUIRE(t.a.store->SetNx("r", "tr", 2000) == SetNxOutcome::kInserted);
  const int64_t shared = lease_of("p");
  CHECK(shared > 0);
  CHECK(lease_of("q") == shared);
  CHECK(lease_of("r") == shared);
  REQUIRE(t.a.store->DelIfEq("p", "tp") == DelIfEqOutcome::kDeleted);
  REQUIRE(t.a.store->ExpireIfEq("r", "tr", 60000) == ephpm::ExpireIfEqOutcome::kApplied);
  CHECK(lease_of("p") == -1);
  CHECK(lease_of("q") == shared);
  CHECK(lease_of("r") != shared);
  for (Node* n : t.all()) {
    CHECK(n->store->LockState("q", "tq").outcome == LockStateOutcome::kHeld);
    CHECK(n->store->SetNx("q", "thief", 1000) == SetNxOutcome::kExists);
  }

  // Every lock lives its TTL: asked for at `asked`, nobody else gets it
  // while less than the TTL has passed (checked from the moment each
  // attempt started), and it is free a few seconds later (its lease, 3 s,
  // runs out; etcd checks expiry about every 500 ms).
  const auto asked = std::chrono::steady_clock::now();
  REQUIRE(t.b.store->SetNx("ttl", "holder", 2000) == SetNxOutcome::kInserted);
  bool freed = false;
  for (;;) {
    const auto attempt = std::chrono::steady_clock::now();
    const int64_t since = std::chrono::duration_cast<std::chrono::milliseconds>(attempt - asked)
                              .count();
    const SetNxOutcome o = t.c.store->SetNx("ttl", "next", 2000);
    if (since < 2000) {
      INFO("attempt " << since << " ms after the grant was asked for");
      CHECK(o == SetNxOutcome::kExists);
    } else if (o == SetNxOutcome::kInserted) {
      freed = true;
      break;
    }
    if (since > 10000) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(freed);
  // The other locks of the 2 s lease went with it; the refreshed one stays.
  CHECK(t.a.store->SetNx("q", "after", 2000) == SetNxOutcome::kInserted);
  CHECK(t.c.store->LockState("r", "tr").outcome == LockStateOutcome::kHeld);
}

TEST_CASE("strict: a fence key written by an older ephpm (the offset alone) still reads",
          "[cluster][strict]") {
  Etcd etcd;
  const std::string prefix = "/strict-" + std::to_string(getpid()) + "-f";
  StrictTrio t(etcd.endpoints, prefix);
  REQUIRE(WaitFor(20000, [&] { return t.Serving(); }) >= 0);
  ephpm::cluster::EtcdClient client(ephpm::cluster::EtcdClientOptions{{etcd.endpoints}, 2000});
  const int64_t ms = NowMs();
  int64_t rev = 0;
  REQUIRE(client.Put(prefix + "/locks/legacy", "tok", 0, ms + 5000, &rev).ok());
  REQUIRE(client.Put(prefix + "/fences/legacy", "1000", 0, ms + 5000, &rev).ok());
  const auto st = t.b.store->LockState("legacy", "tok");
  CHECK(st.outcome == LockStateOutcome::kHeld);
  CHECK(st.fence == 1000 + static_cast<uint64_t>(rev - 1));  // the lock key's create revision
  CHECK(t.c.store->SetIfEq("legacy", "tok", "data", "v", 0) == ephpm::SetIfEqOutcome::kWritten);
  CHECK(t.a.store->DelIfEq("legacy", "tok") == DelIfEqOutcome::kDeleted);
  CHECK(t.a.store->LockState("legacy", "tok").outcome == LockStateOutcome::kAbsent);
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
  // Releases once queued their locks' leases for revoking on the lease
  // thread, and the renewal of the node's own lease waited behind them: the
  // node lost its lease within one TTL under 8 busy workers and refused
  // every lock.  Nothing is queued there now; this keeps it so.
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

// An owner cut off from the other members (etcd still in reach) answers its
// own increment "unknown" and forgets its copy of the counter (rule 5).
// etcd still lists the others, so they confirm its decisions again as soon
// as they revive it: it must not decide before it has their state, even
// while SWIM holds them dead.  (CI, fault.strict seed 16497513000771955585:
// the owner, ready because the only members it awaited were the ones SWIM
// held alive, none, decided on the gap after the heal, and the others
// confirmed it: a counter at 1 420 went back to 1.)
TEST_CASE("strict: an owner cut off from the others decides again only with their state",
          "[cluster][strict]") {
  Etcd etcd;
  StrictTrio t(etcd.endpoints, "/strict-" + std::to_string(getpid()) + "-cut");
  REQUIRE(WaitFor(20000, [&] {
            return t.Serving() && cluster_test::AllAlive(t.all(), {"a", "b", "c"});
          }) >= 0);
  const std::string counter = cluster_test::KeyOwnedBy(t.a, "a", "counter:");
  int64_t v = 0;
  for (int i = 0; i < 10; ++i) REQUIRE(t.b.store->IncrBy(counter, 1, &v) == ephpm::Status::kOk);
  REQUIRE(v == 10);
  auto everywhere = [&](const std::string& value) {
    for (Node* n : t.all()) {
      if (n->Get(counter) != value) return false;
    }
    return true;
  };
  REQUIRE(everywhere("10"));

  auto cut = [&](bool on) {
    for (Node* n : {&t.b, &t.c}) {
      t.a.node->TestCutOff(n->id(), on);
      n->node->TestCutOff("a", on);
    }
  };
  cut(true);
  // Nobody confirms a's own increment: unknown, and a drops what it wrote.
  // It settles at its deadline (the request timeout), about when a's
  // probes have made b and c suspect, before they are declared dead.
  CHECK(t.a.store->IncrBy(counter, 1, &v) == ephpm::Status::kOwnerUnreachable);
  CHECK(t.a.Get(counter) == "<missing>");
  const ClusterOptions o = Fast("x");
  REQUIRE(WaitFor(4 * ephpm::cluster::FailureDetectionBoundMs(o, 3), [&] {
            auto va = t.a.View(), vb = t.b.View(), vc = t.c.View();
            using ephpm::cluster::MemberState;
            return va["b"] == MemberState::kDead && va["c"] == MemberState::kDead &&
                   vb["a"] == MemberState::kDead && vc["a"] == MemberState::kDead;
          }) >= 0);
  // b and c are in etcd's list: a waits for their state (they cannot send
  // it while the cut lasts), also once SWIM holds them dead.
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * o.probe_interval_ms));
  CHECK_FALSE(t.a.node->Ready());
  CHECK(t.a.store->IncrBy(counter, 1, &v) == ephpm::Status::kOwnerUnreachable);
  CHECK(t.a.Get(counter) == "<missing>");

  cut(false);
  REQUIRE(WaitFor(4 * ephpm::cluster::FailureDetectionBoundMs(o, 3), [&] {
            return cluster_test::AllAlive(t.all(), {"a", "b", "c"}) &&
                   cluster_test::AllReady(t.all());
          }) >= 0);
  // The unknown increments reached nobody: the count goes on from 10.
  REQUIRE(t.a.store->IncrBy(counter, 1, &v) == ephpm::Status::kOk);
  CHECK(v == 11);
  CHECK(everywhere("11"));
}

// The other side of the rule above: a member that is gone (here: cut off
// from the members and from etcd, as a crashed host) stops being awaited
// once its lease has run out and etcd's list no longer has it, so the
// others decide again.
TEST_CASE("strict: a member that left etcd's list is no longer awaited", "[cluster][strict]") {
  Etcd etcd;
  auto proxy = std::make_unique<LossyProxy>(etcd.endpoints);  // c's only way to etcd
  const std::string prefix = "/strict-" + std::to_string(getpid()) + "-gone";
  Node a(Strict("a", etcd.endpoints, prefix));
  Node b([&] {
    auto o = Strict("b", etcd.endpoints, prefix);
    o.join = {a.address()};
    return o;
  }());
  Node c([&] {
    auto o = Strict("c", proxy->endpoint(), prefix);
    o.join = {b.address()};
    return o;
  }());
  const std::vector<Node*> all = {&a, &b, &c};
  REQUIRE(WaitFor(20000, [&] {
            for (Node* n : all) {
              if (EtcdCounter(*n, "etcd_members") != 3 || !n->node->Ready()) return false;
            }
            return cluster_test::AllAlive(all, {"a", "b", "c"});
          }) >= 0);
  const std::string counter = cluster_test::KeyOwnedBy(a, "a", "counter:");
  int64_t v = 0;
  for (int i = 0; i < 10; ++i) REQUIRE(b.store->IncrBy(counter, 1, &v) == ephpm::Status::kOk);
  for (Node* n : {&a, &b}) {
    c.node->TestCutOff(n->id(), true);
    n->node->TestCutOff("c", true);
  }
  proxy.reset();
  // c, in etcd's list until its lease (2 s) runs out, cannot confirm: the
  // outcome is unknown (b may have applied it) and a catches up, waiting
  // for b's state and c's.
  CHECK(a.store->IncrBy(counter, 1, &v) == ephpm::Status::kOwnerUnreachable);
  CHECK_FALSE(a.node->Ready());
  // etcd drops c, and a and b decide again.
  REQUIRE(WaitFor(20000, [&] {
            return EtcdCounter(a, "etcd_members") == 2 && a.node->Ready() && b.node->Ready();
          }) >= 0);
  REQUIRE(a.store->IncrBy(counter, 1, &v) == ephpm::Status::kOk);
  CHECK((v == 11 || v == 12));
  CHECK(b.Get(counter) == std::to_string(v));
}
