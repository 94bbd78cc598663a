// The etcd client (cluster/etcd_client.h) against real etcd processes: a
// one-member cluster per test case (three members for the failover case),
// started by tests/etcd/etcd-cluster.sh in a temporary directory and
// stopped by the fixture's destructor; should the test die instead, the
// script's watchdog (given our pid) kills the members within a second.
//
// Assertions run on the main thread only: worker threads and watch
// callbacks record what they saw, the main thread checks it.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "etcd_client.h"

using ephpm::cluster::EtcdClient;
using ephpm::cluster::EtcdClientOptions;
using ephpm::cluster::EtcdCompare;
using ephpm::cluster::EtcdEvent;
using ephpm::cluster::EtcdKv;
using ephpm::cluster::EtcdOp;
using ephpm::cluster::EtcdPrefixEnd;
using ephpm::cluster::EtcdStatus;
using ephpm::cluster::EtcdTxnResult;
using ephpm::cluster::SteadyMs;

namespace {

using Code = EtcdStatus::Code;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t at = s.find(sep, from);
    out.push_back(s.substr(from, at - from));
    if (at == std::string::npos) return out;
    from = at + 1;
  }
}

bool HaveEtcd() { return std::system("command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1") == 0; }

int Run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return rc == -1 ? -1 : WEXITSTATUS(rc);
}

// A cluster of n members from etcd-cluster.sh.
class EtcdCluster {
 public:
  explicit EtcdCluster(int n) {
    for (int tries = 0; tries < 3 && !started_; ++tries) {  // a port taken meanwhile: again
      char tmpl[] = "/tmp/ephpm-etcd-XXXXXX";
      if (::mkdtemp(tmpl) == nullptr) break;
      dir_ = tmpl;
      started_ = Script("start " + dir_ + " " + std::to_string(n) + " " +
                        std::to_string(::getpid())) == 0;
      if (!started_) {
        Script("stop " + dir_);
        std::filesystem::remove_all(dir_);
      }
    }
    if (!started_) return;
    endpoints_ = Split(ReadFile(dir_ + "/endpoints"), ',');
  }
  ~EtcdCluster() {
    if (!started_) return;
    Script("stop " + dir_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  bool started() const { return started_; }
  const std::string& dir() const { return dir_; }
  const std::vector<std::string>& endpoints() const { return endpoints_; }
  std::string client(int k) const { return ReadFile(dir_ + "/m" + std::to_string(k) + ".client"); }

  bool Kill(int k) { return Script("kill " + dir_ + " " + std::to_string(k)) == 0; }
  bool Restart(int k) { return Script("restart " + dir_ + " " + std::to_string(k)) == 0; }
  // The leader's member number, 0 when none answers.
  int Leader() {
    const std::string out = dir_ + "/leader.out";
    if (Script("leader " + dir_ + " > " + out) != 0) return 0;
    return std::atoi(ReadFile(out).c_str());
  }
  // Compacts the history up to `revision` (etcdctl).
  bool Compact(int64_t revision) {
    return Run("ETCDCTL_API=3 etcdctl --endpoints=" + endpoints_[0] + " compaction " +
               std::to_string(revision) + " > /dev/null") == 0;
  }

 private:
  int Script(const std::string& args) { return Run("bash " EPHPM_ETCD_CLUSTER_SCRIPT " " + args); }

  std::string dir_;
  bool started_ = false;
  std::vector<std::string> endpoints_;
};

EtcdClientOptions Options(const std::vector<std::string>& endpoints) {
  EtcdClientOptions o;
  o.endpoints = endpoints;
  return o;
}

// A loopback listener that accepts connections and never answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 64) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) > 0) {
          const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
          if (c >= 0) accepted_.push_back(c);  // held open, never read
        }
      }
    });
  }
  ~SilentListener() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (int c : accepted_) ::close(c);
    if (fd_ >= 0) ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> accepted_;  // the accept thread's
  std::thread thread_;
};

// A loopback port nobody listens on (bound a moment ago, then closed).
std::string ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

// What a watch's callbacks saw (they run on the watch's thread).
struct WatchLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<EtcdEvent> events;
  std::vector<int64_t> batch_revisions;
  std::vector<std::string> ends;
  std::atomic<int> batches{0};

  std::function<void(const std::vector<EtcdEvent>&, int64_t)> OnEvents() {
    return [this](const std::vector<EtcdEvent>& batch, int64_t revision) {
      std::lock_guard<std::mutex> l(mu);
      events.insert(events.end(), batch.begin(), batch.end());
      batch_revisions.push_back(revision);
      batches.fetch_add(1);
      cv.notify_all();
    };
  }
  std::function<void(const std::string&)> OnEnd() {
    return [this](const std::string& reason) {
      std::lock_guard<std::mutex> l(mu);
      ends.push_back(reason);
      cv.notify_all();
    };
  }
  // Waits up to timeout_ms for `pred` (called with mu held).
  bool WaitFor(const std::function<bool()>& pred, int64_t timeout_ms) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::milliseconds(timeout_ms), pred);
  }
  size_t EventCount() {
    std::lock_guard<std::mutex> l(mu);
    return events.size();
  }
  std::vector<std::string> Ends() {
    std::lock_guard<std::mutex> l(mu);
    return ends;
  }
};

// scripts/install-deps.sh installs them: without, the test fails rather
// than pass having checked nothing.
#define REQUIRE_ETCD() \
  if (!HaveEtcd()) FAIL("etcd or etcdctl not installed (bash scripts/install-deps.sh)")

#define REQUIRE_OK(expr)                    \
  do {                                      \
    const EtcdStatus st_ = (expr);          \
    INFO("status message: " << st_.message); \
    REQUIRE(st_.ok());                      \
  } while (0)

int64_t In(int64_t ms) { return SteadyMs() + ms; }

}  // namespace

TEST_CASE("etcd: the prefix range end follows etcd's rule", "[etcd]") {
  CHECK(EtcdPrefixEnd("abc") == "abd");
  CHECK(EtcdPrefixEnd(std::string("a\xff", 2)) == "b");
  CHECK(EtcdPrefixEnd(std::string("a\xfe\xff\xff", 4)) == std::string("a\xff", 2));
  CHECK(EtcdPrefixEnd(std::string("\xff\xff", 2)) == std::string(1, '\0'));
  CHECK(EtcdPrefixEnd("") == std::string(1, '\0'));
  CHECK(EtcdOp::Delete("k", true).prev_kv);
  CHECK(EtcdOp::Put("k", "v", 7).lease == 7);
}

TEST_CASE("etcd: put and range round-trip binary keys and values", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  const std::string prefix("bin\0\xff/", 6);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {prefix + std::string("\0", 1), std::string("\0\0\0", 3)},
      {prefix + "a", std::string("\xff\xfe\x00\x01 value", 10)},
      {prefix + std::string("\xff\xff", 2), ""},  // an empty value
      {prefix + "\n\r\"\\", std::string(100000, '\x80')},
  };
  int64_t last = 0;
  for (const auto& [k, v] : pairs) {
    int64_t rev = 0;
    REQUIRE_OK(client.Put(k, v, 0, In(5000), &rev));
    CHECK(rev > last);
    last = rev;
  }
  // One key.
  std::vector<EtcdKv> kvs;
  int64_t rev = 0;
  REQUIRE_OK(client.Range(pairs[1].first, "", In(5000), &kvs, &rev));
  REQUIRE(kvs.size() == 1);
  CHECK(kvs[0].key == pairs[1].first);
  CHECK(kvs[0].value == pairs[1].second);
  CHECK(kvs[0].version == 1);
  CHECK(kvs[0].create_revision == kvs[0].mod_revision);
  CHECK(kvs[0].lease == 0);
  CHECK(rev == last);
  // The prefix, in key order.
  REQUIRE_OK(client.Range(prefix, EtcdPrefixEnd(prefix), In(5000), &kvs, &rev));
  REQUIRE(kvs.size() == pairs.size());
  std::vector<std::pair<std::string, std::string>> sorted = pairs;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < kvs.size(); ++i) {
    CHECK(kvs[i].key == sorted[i].first);
    CHECK(kvs[i].value == sorted[i].second);
  }
  // A missing key: nothing, no error.
  REQUIRE_OK(client.Range("no such key", "", In(5000), &kvs, &rev));
  CHECK(kvs.empty());
  CHECK(rev == last);
  // An overwrite bumps the version and the mod revision only.
  REQUIRE_OK(client.Put(pairs[1].first, "v2", 0, In(5000), &rev));
  REQUIRE_OK(client.Range(pairs[1].first, "", In(5000), &kvs, nullptr));
  REQUIRE(kvs.size() == 1);
  CHECK(kvs[0].version == 2);
  CHECK(kvs[0].mod_revision == rev);
  CHECK(kvs[0].create_revision < rev);
  // An empty key is etcd's invalid argument: a definite rejection.
  const EtcdStatus bad = client.Put("", "v", 0, In(5000), nullptr);
  CHECK(bad.code == Code::kRejected);
  CHECK(bad.message.find("key is not provided") != std::string::npos);
  // A lease that does not exist: rejected too.
  const EtcdStatus no_lease = client.Put("k", "v", 12345, In(5000), nullptr);
  CHECK(no_lease.code == Code::kRejected);
  CHECK(no_lease.message.find("lease not found") != std::string::npos);
}

TEST_CASE("etcd: many threads share one client", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));
  constexpr int kThreads = 6, kEach = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string key = "mt/" + std::to_string(t) + "/" + std::to_string(i);
        if (!client.Put(key, key, 0, In(10000), nullptr).ok()) failures.fetch_add(1);
        std::vector<EtcdKv> kvs;
        if (!client.Range(key, "", In(10000), &kvs, nullptr).ok() || kvs.size() != 1 ||
            kvs[0].value != key) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  std::vector<EtcdKv> kvs;
  REQUIRE_OK(client.Range("mt/", EtcdPrefixEnd("mt/"), In(5000), &kvs, nullptr));
  CHECK(kvs.size() == kThreads * kEach);
}

TEST_CASE("etcd: a create-if-absent transaction succeeds once", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  const std::string key("lock\0\xff", 6);
  auto create = [&](const std::string& holder, EtcdTxnResult* r) {
    EtcdCompare absent;
    absent.key = key;
    absent.target = EtcdCompare::Target::kCreate;
    absent.number = 0;
    return client.Txn({absent}, {EtcdOp::Put(key, holder)}, {EtcdOp::Range(key)}, In(5000), r);
  };
  EtcdTxnResult first;
  REQUIRE_OK(create("holder-A", &first));
  CHECK(first.succeeded);
  CHECK(first.revision > 0);
  REQUIRE(first.responses.size() == 1);
  CHECK(first.responses[0].kvs.empty());  // a put answers nothing

  EtcdTxnResult second;
  REQUIRE_OK(create("holder-B", &second));
  CHECK_FALSE(second.succeeded);
  CHECK(second.revision == first.revision);
  REQUIRE(second.responses.size() == 1);
  REQUIRE(second.responses[0].kvs.size() == 1);
  const EtcdKv& held = second.responses[0].kvs[0];
  CHECK(held.key == key);
  CHECK(held.value == "holder-A");
  CHECK(held.create_revision == first.revision);
  CHECK(held.mod_revision == first.revision);
  CHECK(held.version == 1);

  // The other targets and results, each once true and once false.
  auto holds = [&](EtcdCompare c) {
    c.key = key;
    EtcdTxnResult r;
    const EtcdStatus st = client.Txn({c}, {}, {}, In(5000), &r);
    return st.ok() ? (r.succeeded ? 1 : 0) : -1;
  };
  using T = EtcdCompare::Target;
  using R = EtcdCompare::Result;
  EtcdCompare c;
  c.target = T::kVersion, c.result = R::kEqual, c.number = 1;
  CHECK(holds(c) == 1);
  c.result = R::kGreater;
  CHECK(holds(c) == 0);
  c.target = T::kMod, c.result = R::kLess, c.number = first.revision + 1;
  CHECK(holds(c) == 1);
  c.result = R::kNotEqual, c.number = first.revision;
  CHECK(holds(c) == 0);
  c.target = T::kValue, c.result = R::kEqual, c.value = "holder-A";
  CHECK(holds(c) == 1);
  c.value = "holder-B";
  CHECK(holds(c) == 0);
  c.target = T::kLease, c.result = R::kEqual, c.number = 0;
  CHECK(holds(c) == 1);
  c.target = T::kCreate, c.result = R::kGreater, c.number = 0;
  CHECK(holds(c) == 1);
}

TEST_CASE("etcd: a value-compare delete returns the deleted pair", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  const std::string key = "del-if-eq";
  int64_t put_rev = 0;
  REQUIRE_OK(client.Put(key, "token-1", 0, In(5000), &put_rev));
  auto del_if = [&](const std::string& value, EtcdTxnResult* r) {
    EtcdCompare eq;
    eq.key = key;
    eq.target = EtcdCompare::Target::kValue;
    eq.value = value;
    return client.Txn({eq}, {EtcdOp::Delete(key, true)}, {}, In(5000), r);
  };
  EtcdTxnResult wrong;
  REQUIRE_OK(del_if("token-2", &wrong));
  CHECK_FALSE(wrong.succeeded);
  CHECK(wrong.responses.empty());

  EtcdTxnResult right;
  REQUIRE_OK(del_if("token-1", &right));
  CHECK(right.succeeded);
  CHECK(right.revision == put_rev + 1);
  REQUIRE(right.responses.size() == 1);
  CHECK(right.responses[0].deleted == 1);
  REQUIRE(right.responses[0].kvs.size() == 1);
  CHECK(right.responses[0].kvs[0].key == key);
  CHECK(right.responses[0].kvs[0].value == "token-1");
  CHECK(right.responses[0].kvs[0].mod_revision == put_rev);

  std::vector<EtcdKv> kvs;
  REQUIRE_OK(client.Range(key, "", In(5000), &kvs, nullptr));
  CHECK(kvs.empty());
  // A prefix delete without prev_kv: the count only.
  REQUIRE_OK(client.Put("p/1", "x", 0, In(5000), nullptr));
  REQUIRE_OK(client.Put("p/2", "x", 0, In(5000), nullptr));
  EtcdTxnResult r;
  REQUIRE_OK(client.Txn({}, {EtcdOp::DeleteRange("p/", EtcdPrefixEnd("p/"))}, {}, In(5000), &r));
  CHECK(r.succeeded);  // no comparisons: always the success branch
  REQUIRE(r.responses.size() == 1);
  CHECK(r.responses[0].deleted == 2);
  CHECK(r.responses[0].kvs.empty());
}

TEST_CASE("etcd: leases: grant, keepalive, revoke", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  int64_t id = 0, ttl = 0;
  REQUIRE_OK(client.LeaseGrant(10, In(5000), &id, &ttl));
  CHECK(id != 0);
  CHECK(ttl == 10);
  REQUIRE_OK(client.Put("leased", "v", id, In(5000), nullptr));
  std::vector<EtcdKv> kvs;
  REQUIRE_OK(client.Range("leased", "", In(5000), &kvs, nullptr));
  REQUIRE(kvs.size() == 1);
  CHECK(kvs[0].lease == id);

  int64_t left = -1;
  REQUIRE_OK(client.LeaseKeepAlive(id, In(5000), &left));
  CHECK(left > 0);
  CHECK(left <= 10);

  REQUIRE_OK(client.LeaseRevoke(id, In(5000)));
  REQUIRE_OK(client.Range("leased", "", In(5000), &kvs, nullptr));
  CHECK(kvs.empty());
  // A revoked lease: keepalive answers 0, not an error; revoke is rejected.
  left = -1;
  REQUIRE_OK(client.LeaseKeepAlive(id, In(5000), &left));
  CHECK(left == 0);
  const EtcdStatus again = client.LeaseRevoke(id, In(5000));
  CHECK(again.code == Code::kRejected);
  CHECK(again.message.find("lease not found") != std::string::npos);
  // A lease that never existed: the same.
  left = -1;
  REQUIRE_OK(client.LeaseKeepAlive(987654321, In(5000), &left));
  CHECK(left == 0);
}

TEST_CASE("etcd: a lease that expires removes its key", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  int64_t id = 0, ttl = 0;
  REQUIRE_OK(client.LeaseGrant(2, In(5000), &id, &ttl));
  REQUIRE_OK(client.Put("expiring", "v", id, In(5000), nullptr));
  const int64_t start = SteadyMs();
  bool gone = false;
  std::vector<EtcdKv> kvs;
  while (!gone && SteadyMs() - start < 10000) {
    REQUIRE_OK(client.Range("expiring", "", In(5000), &kvs, nullptr));
    gone = kvs.empty();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int64_t took = SteadyMs() - start;
  CHECK(gone);
  CHECK(took >= 1500);  // not before its TTL (less etcd's rounding)
  int64_t left = -1;
  REQUIRE_OK(client.LeaseKeepAlive(id, In(5000), &left));
  CHECK(left == 0);
}

TEST_CASE("etcd: a watch sees puts and deletes, and Cancel is prompt", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  const std::string prefix("w\0/", 3);
  WatchLog log;
  auto watch = client.StartWatch(prefix, EtcdPrefixEnd(prefix), 0, log.OnEvents(), log.OnEnd());
  REQUIRE(watch != nullptr);
  // The watch starts "now": wait until it is created before writing (an
  // event proves it: write until one is seen).
  const std::string k1 = prefix + "one", k2 = prefix + std::string("\xff", 1);
  int64_t rev0 = 0;
  for (int i = 0; i < 50 && log.EventCount() == 0; ++i) {
    REQUIRE_OK(client.Put(prefix + "warmup", "x", 0, In(5000), &rev0));
    log.WaitFor([&] { return !log.events.empty(); }, 100);
  }
  REQUIRE(log.EventCount() > 0);
  REQUIRE(log.WaitFor([&] { return log.events.back().kv.mod_revision == rev0; }, 5000));
  const size_t base = log.EventCount();

  int64_t r1 = 0, r2 = 0, r3 = 0;
  REQUIRE_OK(client.Put(k1, "v1", 0, In(5000), &r1));
  REQUIRE_OK(client.Put(k2, std::string("\0v2", 3), 0, In(5000), &r2));
  EtcdTxnResult del;
  REQUIRE_OK(client.Txn({}, {EtcdOp::Delete(k1)}, {}, In(5000), &del));
  r3 = del.revision;
  REQUIRE_OK(client.Put("outside the prefix", "x", 0, In(5000), nullptr));
  REQUIRE(log.WaitFor([&] { return log.events.size() >= base + 3; }, 5000));
  {
    std::lock_guard<std::mutex> l(log.mu);
    REQUIRE(log.events.size() == base + 3);
    const EtcdEvent& e1 = log.events[base];
    const EtcdEvent& e2 = log.events[base + 1];
    const EtcdEvent& e3 = log.events[base + 2];
    CHECK_FALSE(e1.deleted);
    CHECK(e1.kv.key == k1);
    CHECK(e1.kv.value == "v1");
    CHECK(e1.kv.mod_revision == r1);
    CHECK(e1.kv.create_revision == r1);
    CHECK_FALSE(e2.deleted);
    CHECK(e2.kv.key == k2);
    CHECK(e2.kv.value == std::string("\0v2", 3));
    CHECK(e2.kv.mod_revision == r2);
    CHECK(e3.deleted);
    CHECK(e3.kv.key == k1);
    CHECK(e3.kv.mod_revision == r3);
    CHECK(r1 < r2);
    CHECK(r2 < r3);
    for (size_t i = 1; i < log.batch_revisions.size(); ++i) {
      CHECK(log.batch_revisions[i - 1] < log.batch_revisions[i]);
    }
    CHECK(log.batch_revisions.back() == r3);
    CHECK(log.ends.empty());
  }

  // Cancel while a writer keeps the stream busy.
  std::atomic<bool> stop{false};
  std::atomic<int> writes{0};
  std::thread writer([&] {
    EtcdClient w(Options(cluster.endpoints()));
    for (int i = 0; !stop.load(); ++i) {
      if (w.Put(prefix + "busy", std::to_string(i), 0, In(2000), nullptr).ok()) writes.fetch_add(1);
    }
  });
  const size_t before = log.EventCount();
  log.WaitFor([&] { return log.events.size() >= before + 20; }, 5000);
  const int64_t t0 = SteadyMs();
  watch->Cancel();
  const int64_t cancel_ms = SteadyMs() - t0;
  const int batches_at_cancel = log.batches.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int batches_later = log.batches.load();
  stop.store(true);
  writer.join();
  CHECK(writes.load() > 0);
  CHECK(log.EventCount() >= before + 20);
  CHECK(cancel_ms < 1000);
  CHECK(batches_later == batches_at_cancel);  // nothing after Cancel
  CHECK(log.Ends().empty());                  // Cancel is no end
  watch.reset();                              // a second Cancel (the destructor) is harmless
}

TEST_CASE("etcd: a watch replays history and ends on compaction", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  int64_t first = 0, last = 0;
  REQUIRE_OK(client.Put("h", "1", 0, In(5000), &first));
  REQUIRE_OK(client.Put("h", "2", 0, In(5000), nullptr));
  REQUIRE_OK(client.Put("h", "3", 0, In(5000), &last));
  {
    WatchLog log;
    auto watch = client.StartWatch("h", "", first, log.OnEvents(), log.OnEnd());
    REQUIRE(log.WaitFor([&] { return log.events.size() >= 3; }, 5000));
    std::lock_guard<std::mutex> l(log.mu);
    REQUIRE(log.events.size() == 3);
    CHECK(log.events[0].kv.value == "1");
    CHECK(log.events[2].kv.value == "3");
    CHECK(log.events[2].kv.version == 3);
    CHECK(log.ends.empty());
  }
  REQUIRE(cluster.Compact(last));
  WatchLog log;
  auto watch = client.StartWatch("h", "", first, log.OnEvents(), log.OnEnd());
  REQUIRE(log.WaitFor([&] { return !log.ends.empty(); }, 5000));
  const std::vector<std::string> ends = log.Ends();
  REQUIRE(ends.size() == 1);
  CHECK(ends[0].find("compacted") != std::string::npos);
  CHECK(log.EventCount() == 0);
}

TEST_CASE("etcd: a watch ends when its member dies or cannot be reached", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(1);
  REQUIRE(cluster.started());
  EtcdClient client(Options(cluster.endpoints()));

  WatchLog log;
  auto watch = client.StartWatch("k", "", 0, log.OnEvents(), log.OnEnd());
  for (int i = 0; i < 50 && log.EventCount() == 0; ++i) {
    REQUIRE_OK(client.Put("k", "v", 0, In(5000), nullptr));
    log.WaitFor([&] { return !log.events.empty(); }, 100);
  }
  REQUIRE(log.EventCount() > 0);
  REQUIRE(cluster.Kill(1));
  const int64_t t0 = SteadyMs();
  REQUIRE(log.WaitFor([&] { return !log.ends.empty(); }, 5000));
  CHECK(SteadyMs() - t0 < 3000);
  std::vector<std::string> ends = log.Ends();
  REQUIRE(ends.size() == 1);
  CHECK(ends[0].find("lost") != std::string::npos);
  watch->Cancel();
  CHECK(log.Ends().size() == 1);

  // Nothing listening: on_end after the connect fails, soon.
  WatchLog refused;
  EtcdClient none(Options({ClosedPort(), ClosedPort()}));
  auto w2 = none.StartWatch("k", "", 0, refused.OnEvents(), refused.OnEnd());
  REQUIRE(refused.WaitFor([&] { return !refused.ends.empty(); }, 3000));
  ends = refused.Ends();
  CHECK(ends[0].find("no etcd endpoint reachable") != std::string::npos);

  // A listener that never answers: on_end by watch_create_timeout_ms, and
  // Cancel interrupts the wait before that.
  SilentListener silent;
  EtcdClientOptions o = Options({silent.address()});
  o.watch_create_timeout_ms = 800;
  EtcdClient mute(o);
  WatchLog timed;
  auto w3 = mute.StartWatch("k", "", 0, timed.OnEvents(), timed.OnEnd());
  REQUIRE(timed.WaitFor([&] { return !timed.ends.empty(); }, 3000));
  ends = timed.Ends();
  CHECK(ends[0].find("in time") != std::string::npos);

  o.watch_create_timeout_ms = 60000;
  EtcdClient mute_long(o);
  WatchLog blocked;
  auto w4 = mute_long.StartWatch("k", "", 0, blocked.OnEvents(), blocked.OnEnd());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int64_t t1 = SteadyMs();
  w4->Cancel();
  CHECK(SteadyMs() - t1 < 1000);
  CHECK(blocked.Ends().empty());
}

TEST_CASE("etcd: deadlines hold against silent and closed endpoints", "[etcd]") {
  // No etcd needed.
  SilentListener a, b;
  REQUIRE(a.port() != 0);
  REQUIRE(b.port() != 0);
  EtcdClient silent(Options({a.address(), b.address()}));
  EtcdCompare absent;
  absent.key = "k";
  {
    const int64_t t0 = SteadyMs();
    EtcdTxnResult r;
    const EtcdStatus st =
        silent.Txn({absent}, {EtcdOp::Put("k", "v")}, {EtcdOp::Range("k")}, t0 + 800, &r);
    const int64_t took = SteadyMs() - t0;
    CHECK(st.code == Code::kUnavailable);
    CHECK(st.sent);  // the request went out: its outcome is unknown
    CHECK(took >= 750);
    CHECK(took <= 800 + 200);
  }
  {
    const int64_t t0 = SteadyMs();
    int64_t left = 0;
    const EtcdStatus st = silent.LeaseKeepAlive(1, t0 + 300, &left);
    CHECK(st.code == Code::kUnavailable);
    CHECK(SteadyMs() - t0 <= 300 + 200);
  }
  {
    EtcdClient closed(Options({ClosedPort(), ClosedPort(), ClosedPort()}));
    const int64_t t0 = SteadyMs();
    const EtcdStatus st = closed.Put("k", "v", 0, t0 + 300, nullptr);
    const int64_t took = SteadyMs() - t0;
    CHECK(st.code == Code::kUnavailable);
    CHECK_FALSE(st.sent);  // never connected: nothing reached anyone
    CHECK(took <= 300 + 200);
    INFO(st.message);
    CHECK(st.message.find("refused") != std::string::npos);
  }
  {
    // A deadline already past: no attempt at all.
    EtcdClient closed(Options({ClosedPort()}));
    const EtcdStatus st = closed.Put("k", "v", 0, SteadyMs() - 1, nullptr);
    CHECK(st.code == Code::kUnavailable);
    CHECK_FALSE(st.sent);
  }
  {
    // No endpoints, a bad address: unavailable, never a crash.
    EtcdClient none(Options({}));
    CHECK(none.Put("k", "v", 0, In(100), nullptr).code == Code::kUnavailable);
    EtcdClient bad(Options({"no-port-here"}));
    CHECK(bad.Put("k", "v", 0, In(100), nullptr).code == Code::kUnavailable);
  }
}

TEST_CASE("etcd: three members: failover, quorum loss, recovery", "[etcd]") {
  REQUIRE_ETCD();
  EtcdCluster cluster(3);
  REQUIRE(cluster.started());
  const int leader = cluster.Leader();
  REQUIRE(leader >= 1);
  // The leader first: the client's first calls go there, so it is the
  // member the client used last when it dies.
  std::vector<std::string> endpoints = {cluster.client(leader)};
  std::vector<int> others;
  for (int k = 1; k <= 3; ++k) {
    if (k != leader) {
      endpoints.push_back(cluster.client(k));
      others.push_back(k);
    }
  }
  EtcdClient client(Options(endpoints));
  REQUIRE_OK(client.Put("f/0", "before", 0, In(5000), nullptr));
  int64_t lease = 0, ttl = 0;
  REQUIRE_OK(client.LeaseGrant(30, In(5000), &lease, &ttl));

  // Kill the leader: the next calls fail over within their deadline (a new
  // election takes about a second with the script's raft timings).
  REQUIRE(cluster.Kill(leader));
  {
    const int64_t t0 = SteadyMs();
    EtcdTxnResult r;
    EtcdCompare absent;
    absent.key = "f/1";
    const EtcdStatus st =
        client.Txn({absent}, {EtcdOp::Put("f/1", "after")}, {EtcdOp::Range("f/1")}, t0 + 5000, &r);
    INFO(st.message);
    REQUIRE(st.ok());
    CHECK(r.succeeded);
    CHECK(SteadyMs() - t0 <= 5000 + 200);
  }
  std::vector<EtcdKv> kvs;
  REQUIRE_OK(client.Range("f/", EtcdPrefixEnd("f/"), In(5000), &kvs, nullptr));
  CHECK(kvs.size() == 2);
  int64_t left = 0;
  REQUIRE_OK(client.LeaseKeepAlive(lease, In(5000), &left));
  CHECK(left > 0);

  // Kill a second member: no quorum.  A transaction answers kUnavailable by
  // its deadline, never success.
  REQUIRE(cluster.Kill(others[0]));
  {
    const int64_t t0 = SteadyMs();
    EtcdTxnResult r;
    EtcdCompare absent;
    absent.key = "f/2";
    const EtcdStatus st = client.Txn({absent}, {EtcdOp::Put("f/2", "no quorum")},
                                     {EtcdOp::Range("f/2")}, t0 + 1500, &r);
    const int64_t took = SteadyMs() - t0;
    INFO(st.message);
    CHECK(st.code == Code::kUnavailable);
    CHECK(st.sent);  // the survivor took the request
    CHECK(took <= 1500 + 300);
    CHECK(took >= 1400);
  }
  {
    const int64_t t0 = SteadyMs();
    const EtcdStatus st = client.Range("f/0", "", t0 + 1000, &kvs, nullptr);
    CHECK(st.code == Code::kUnavailable);
    CHECK(SteadyMs() - t0 <= 1000 + 300);
  }

  // One member back: quorum again, the calls succeed again.
  REQUIRE(cluster.Restart(others[0]));
  {
    const int64_t t0 = SteadyMs();
    int64_t rev = 0;
    const EtcdStatus st = client.Put("f/3", "back", 0, t0 + 10000, &rev);
    INFO(st.message);
    REQUIRE(st.ok());
    CHECK(rev > 0);
  }
  REQUIRE_OK(client.Range("f/3", "", In(5000), &kvs, nullptr));
  REQUIRE(kvs.size() == 1);
  CHECK(kvs[0].value == "back");
}
