// Shared by the cluster test suites: nodes with their stores in one
// process, short timings, polling helpers.

#ifndef EPHPM_TESTS_CLUSTER_UTIL_H_
#define EPHPM_TESTS_CLUSTER_UTIL_H_

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/store.h"
#include "node.h"

namespace cluster_test {

using ephpm::Status;
using ephpm::Store;
using ephpm::cluster::ClusterNode;
using ephpm::cluster::ClusterOptions;
using ephpm::cluster::FailureDetectionBoundMs;
using ephpm::cluster::JoinBoundMs;
using ephpm::cluster::MemberState;


inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline ClusterOptions Fast(const std::string& id) {
  ClusterOptions o;
  o.node_id = id;
  o.listen = "127.0.0.1:0";
  o.probe_interval_ms = 50;
  o.probe_timeout_ms = 20;
  o.suspicion_timeout_ms = 300;
  o.request_timeout_ms = 300;
  o.members_sync_every = 4;
  return o;
}

// A node and its store, built in the order the host builds them.
struct Node {
  std::unique_ptr<ClusterNode> node;
  std::unique_ptr<Store> store;

  // With a data_dir the store loads it first, as a restarted host does, and
  // logs with `fsync`.
  explicit Node(ClusterOptions o, const std::string& data_dir = "",
                ephpm::FsyncPolicy fsync = ephpm::FsyncPolicy::kEverySec) {
    node = std::make_unique<ClusterNode>(std::move(o));
    std::string error;
    REQUIRE(node->Listen(&error));
    ephpm::StoreOptions so;
    so.replicator = node.get();
    so.persistence.data_dir = data_dir;
    so.persistence.fsync = fsync;
    store = Store::Create(so, &error);
    INFO(error);
    REQUIRE(store);
    node->Attach(store.get());
    node->Start();
  }
  ~Node() { Kill(); }

  // Stops the node (its sockets close) and drops its store.
  void Kill() {
    if (node) node->Stop();
    store.reset();
    node.reset();
  }

  const std::string& id() const { return node->id(); }
  std::string address() const { return node->address(); }

  std::string Get(const std::string& key) const {
    std::string v;
    return store->Get(key, &v) == Status::kOk ? v : "<missing>";
  }

  // This node's view: member id -> state.
  std::map<std::string, MemberState> View() const {
    std::map<std::string, MemberState> out;
    for (const auto& m : node->Members()) out[m.id] = m.state;
    return out;
  }
};

// A key that `owner` owns in `view`'s view (found by trying names).
inline std::string KeyOwnedBy(const Node& view, const std::string& owner,
                              const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string k = prefix + std::to_string(i);
    if (view.node->OwnerOf(k) == owner) return k;
  }
}

// One of INFO's cluster counters ("cluster_routed_calls", ...) on node `n`.
inline uint64_t Counter(const Node& n, const std::string& name) {
  const std::string info = n.node->Describe();
  const size_t at = info.find(name + ":");
  REQUIRE(at != std::string::npos);
  return std::stoull(info.substr(at + name.size() + 1));
}

// Polls `pred` until it holds or `timeout_ms` passes; returns how long it
// took, or -1.
inline int64_t WaitFor(int64_t timeout_ms, const std::function<bool()>& pred) {
  const int64_t start = NowMs();
  for (;;) {
    if (pred()) return NowMs() - start;
    if (NowMs() - start > timeout_ms) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

inline bool AllAlive(const std::vector<Node*>& nodes, const std::set<std::string>& ids) {
  for (const Node* n : nodes) {
    const auto alive = n->node->AliveIds();
    if (std::set<std::string>(alive.begin(), alive.end()) != ids) return false;
  }
  return true;
}

inline bool AllReady(const std::vector<Node*>& nodes) {
  for (const Node* n : nodes) {
    if (!n->node->Ready()) return false;
  }
  return true;
}

// Three nodes: b joins through a, c through b (so c learns a only by gossip).
struct Trio {
  Node a{Fast("a")};
  Node b{[&] {
    auto o = Fast("b");
    o.join = {a.address()};
    return o;
  }()};
  Node c{[&] {
    auto o = Fast("c");
    o.join = {b.address()};
    return o;
  }()};

  std::vector<Node*> all() { return {&a, &b, &c}; }

  // Every node sees the three alive and may decide.
  void Converge() {
    REQUIRE(WaitFor(JoinBoundMs(Fast("x"), 3) * 2, [&] {
              return AllAlive(all(), {"a", "b", "c"}) && AllReady(all());
            }) >= 0);
  }

  // Cuts `n` off from the others in both directions (or heals it).
  void Isolate(Node& n, bool cut) {
    for (Node* o : all()) {
      if (o == &n) continue;
      n.node->TestCutOff(o->id(), cut);
      o->node->TestCutOff(n.id(), cut);
    }
  }

  bool Everywhere(const std::string& key, const std::string& value) {
    for (Node* n : all()) {
      if (n->Get(key) != value) return false;
    }
    return true;
  }
};

}  // namespace cluster_test

#endif  // EPHPM_TESTS_CLUSTER_UTIL_H_
