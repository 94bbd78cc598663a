// The fault run's three ephpm-faulty node processes (Cluster) and the seeded
// schedule of faults run against them (FaultSchedule).

#ifndef EPHPM_TESTS_FAULT_NODES_H_
#define EPHPM_TESTS_FAULT_NODES_H_

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "checker.h"
#include "etcd.h"
#include "process.h"
#include "report.h"
#include "resp_client.h"
#include "run.h"
#include "workload.h"

namespace ephpm_fault {

// ---- the nodes --------------------------------------------------------------------

struct Node {
  std::string id;
  uint16_t resp_port = 0, cluster_port = 0;
  std::string log;
  Child child;
  enum State { kDown, kUp, kPaused } state = kDown;
};

class Cluster {
 public:
  Cluster(const Config& c, std::string program, const std::vector<uint16_t>& ports)
      : c_(c), program_(std::move(program)) {
    for (size_t i = 0; i < 3; ++i) {
      nodes_.emplace_back();
      Node& n = nodes_.back();
      n.id = "n" + std::to_string(i + 1);
      n.resp_port = ports[2 * i];
      n.cluster_port = ports[2 * i + 1];
      n.log = c.log_dir + "/" + n.id + ".log";
    }
  }
  ~Cluster() {
    for (Node& n : nodes_) n.child.Kill();
  }

  // Strict mode: every node decides locks through `etcd` (which outlives
  // this), its keys under `prefix`.  Before the first Start.
  void UseEtcd(EtcdCluster* etcd, const std::string& prefix) {
    etcd_ = etcd;
    etcd_prefix_ = prefix;
  }

  size_t size() const { return nodes_.size(); }
  Node& node(size_t i) { return nodes_[i]; }
  std::vector<std::string> Ids() const {
    std::vector<std::string> ids;
    for (const Node& n : nodes_) ids.push_back(n.id);
    return ids;
  }
  std::vector<NodeAddr> Addrs() const {
    std::vector<NodeAddr> out;
    for (const Node& n : nodes_) out.push_back(NodeAddr{n.id, n.resp_port});
    return out;
  }

  // Starts (or restarts) node i with the same id and ports, joining through
  // the others, and waits until it answers PING.  A port can be taken
  // meanwhile by someone else: a few attempts.
  bool Start(size_t i, std::string* error) {
    Node& n = nodes_[i];
    std::string join;
    for (const Node& o : nodes_) {
      if (&o == &n) continue;
      join += (join.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(o.cluster_port);
    }
    const std::vector<std::string> argv = {
        program_,
        "--resp", "127.0.0.1:" + std::to_string(n.resp_port),
        "--cluster-node-id", n.id,
        "--cluster-listen", "127.0.0.1:" + std::to_string(n.cluster_port),
        "--cluster-join", join,
        "--cluster-probe-interval", std::to_string(c_.probe_ms),
        "--cluster-suspicion-timeout", std::to_string(c_.suspicion_ms),
        "--cluster-request-timeout", std::to_string(c_.request_timeout_ms),
        "--log-level", "info"};
    std::vector<std::string> args = argv;
    if (etcd_ != nullptr) {
      args.insert(args.end(), {"--cluster-arbiter", "etcd", "--etcd-endpoints", etcd_->Endpoints(),
                               "--etcd-prefix", etcd_prefix_, "--etcd-timeout",
                               std::to_string(c_.etcd_timeout_ms), "--etcd-lease-ttl",
                               std::to_string(c_.etcd_lease_ttl_s)});
    }
    for (int attempt = 1; attempt <= 5; ++attempt) {
      const size_t from = FileSize(n.log);
      if (!n.child.Spawn(args, n.log, error)) return false;
      const std::string addr = WaitForLine(n.child, n.log, from, "resp listening on ", 10000);
      if (!addr.empty()) {
        RespClient client;
        Reply r;
        std::string e;
        if (client.Connect(n.resp_port, 1000, &e) && client.Call({"PING"}, 2000, &r, &e) &&
            r.IsStatus("PONG")) {
          n.state = Node::kUp;
          return true;
        }
        *error = n.id + " does not answer PING: " + e;
      } else {
        *error = n.id + " did not start";
      }
      std::string how;
      if (n.child.Exited(&how)) *error += " (" + how + ")";
      n.child.Kill();
      n.state = Node::kDown;
      SleepMs(200 * attempt);
    }
    *error += "; its log ends:\n" + Tail(n.log, 20);
    return false;
  }

  void Pause(size_t i) {
    Mark(i, "SIGSTOP");
    nodes_[i].child.Stop();
    nodes_[i].state = Node::kPaused;
  }
  void Resume(size_t i) {
    nodes_[i].child.Continue();
    nodes_[i].state = Node::kUp;
    Mark(i, "SIGCONT");
  }
  void Kill(size_t i) {
    if (nodes_[i].child.running()) Mark(i, "SIGKILL");
    nodes_[i].child.Kill();
    nodes_[i].state = Node::kDown;
  }

  // Nodes that exited on their own since the last look: a crash is a
  // failure of its own.  They are restarted so that the run goes on.
  std::vector<std::string> Crashes() {
    std::vector<std::string> out;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      std::string how;
      if (nodes_[i].state == Node::kDown || !nodes_[i].child.Exited(&how)) continue;
      Event("CRASH: %s exited on its own: %s; its log ends:\n%s", nodes_[i].id.c_str(),
            how.c_str(), Tail(nodes_[i].log, 20).c_str());
      out.push_back(nodes_[i].id + ": " + how);
      nodes_[i].state = Node::kDown;
      std::string error;
      if (!Start(i, &error)) Event("could not restart %s: %s", nodes_[i].id.c_str(), error.c_str());
    }
    return out;
  }

  // One command on node i, with a short deadline.
  bool Call(size_t i, const std::vector<std::string>& argv, Reply* r, std::string* error,
            int timeout_ms = 2000) {
    RespClient client;
    return client.Connect(nodes_[i].resp_port, timeout_ms, error) &&
           client.Call(argv, timeout_ms, r, error);
  }

  // EPHPM.FAULT on node i; false with *error when it was not applied.
  bool Fault(size_t i, const std::vector<std::string>& args, std::string* error) {
    std::vector<std::string> argv = {"EPHPM.FAULT"};
    argv.insert(argv.end(), args.begin(), args.end());
    Reply r;
    if (!Call(i, argv, &r, error)) return false;
    if (!r.IsStatus("OK")) {
      *error = r.Text();
      return false;
    }
    return true;
  }

  std::string Info(size_t i) {
    Reply r;
    std::string error;
    if (!Call(i, {"INFO", "ephpm-cluster"}, &r, &error, 1000)) return "<no answer: " + error + ">";
    return r.kind == Reply::kBulk ? r.str : r.Text();
  }

  // Whether every node sees exactly the three members, all alive; *why
  // says who does not.
  bool Converged(std::string* why) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const std::string info = Info(i);
      std::map<std::string, std::string> states;
      std::stringstream ss(info);
      for (std::string line; std::getline(ss, line);) {
        if (line.rfind("cluster_member", 0) != 0) continue;
        const size_t id = line.find(":id="), comma = line.find(',', id);
        const size_t st = line.find(",state="), st_end = line.find(',', st + 1);
        if (id == std::string::npos || st == std::string::npos) continue;
        states[line.substr(id + 4, comma - id - 4)] = line.substr(st + 7, st_end - st - 7);
      }
      bool ok = states.size() == nodes_.size();
      for (const Node& n : nodes_) ok = ok && states[n.id] == "alive";
      if (!ok) {
        *why = nodes_[i].id + " sees:";
        for (const auto& [id, s] : states) *why += " " + id + "=" + s;
        if (states.empty()) *why += " " + info;
        return false;
      }
      // Strict mode: the node's membership lease is alive (it answers lock
      // operations).
      if (etcd_ != nullptr && info.find("cluster_etcd_serving:1\r\n") == std::string::npos &&
          info.find("cluster_etcd_serving:1\n") == std::string::npos) {
        *why = nodes_[i].id + " is not serving in strict mode (its etcd lease is not certainly "
               "alive)";
        return false;
      }
    }
    if (etcd_ != nullptr) {
      // ... and etcd's member list, over which strict mode spreads the
      // keys, has exactly the three.
      std::set<std::string> ids;
      std::string error;
      if (!etcd_->RangeIds(etcd_prefix_ + "/members/", &ids, &error)) {
        *why = "cannot read the members from etcd: " + error;
        return false;
      }
      const std::vector<std::string> want = Ids();
      if (ids != std::set<std::string>(want.begin(), want.end())) {
        *why = "etcd lists the members:";
        for (const auto& id : ids) *why += " " + id;
        return false;
      }
    }
    return true;
  }

  bool WaitConverged(int64_t timeout_ms, std::string* why) {
    const int64_t until = NowUs() + timeout_ms * 1000;
    while (!Converged(why)) {
      if (NowUs() > until) return false;
      SleepMs(100);
    }
    return true;
  }

  // GET key on node i as a counter: absent is 0; nullopt when unreadable.
  std::optional<int64_t> ReadCounter(size_t i, const std::string& key) {
    Reply r;
    std::string error;
    if (!Call(i, {"GET", key}, &r, &error, 2000)) return std::nullopt;
    if (r.kind == Reply::kNil) return 0;
    if (r.kind != Reply::kBulk) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(r.str.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || r.str.empty()) return std::nullopt;
    return v;
  }

  // Every counter on every node, once the nodes have agreed twice in a row
  // (replication and catch-up syncs may still be in flight when membership
  // has converged) or timeout_ms has passed.
  std::map<std::string, Observed> SettledCounters(const std::vector<std::string>& keys,
                                                  int64_t timeout_ms) {
    const int64_t until = NowUs() + timeout_ms * 1000;
    std::map<std::string, Observed> last;
    int agreed = 0;
    for (;;) {
      std::map<std::string, Observed> now;
      bool agree = true;
      for (const std::string& key : keys) {
        for (size_t i = 0; i < nodes_.size(); ++i) now[key][nodes_[i].id] = ReadCounter(i, key);
        std::set<std::optional<int64_t>> values;
        for (const auto& [id, v] : now[key]) values.insert(v);
        agree = agree && values.size() == 1 && *values.begin();
      }
      agreed = agree && now == last ? agreed + 1 : (agree ? 1 : 0);
      last = std::move(now);
      if (agreed >= 2 || NowUs() > until) return last;
      SleepMs(200);
    }
  }

 private:
  // A line in the node's log, so that its own lines can be read against
  // the driver's timeline.
  void Mark(size_t i, const char* what) {
    MarkLog(nodes_[i].log, what);
  }

  const Config& c_;
  const std::string program_;
  std::deque<Node> nodes_;  // a deque: a Node (its Child) never moves
  EtcdCluster* etcd_ = nullptr;
  std::string etcd_prefix_;
};

// ---- faults -----------------------------------------------------------------------

// A seeded schedule of faults, run on the main thread (which forks the
// restarted nodes) until a deadline.  One at a time: never more than one
// node paused or down.
class FaultSchedule {
 public:
  // `etcd`: the etcd cluster the etcd-* kinds act on (used by the nodes in
  // strict mode, unused in gossip mode); null when there is none.
  FaultSchedule(const Config& c, Cluster* cluster, EtcdCluster* etcd, uint64_t seed)
      : c_(c), cluster_(cluster), etcd_(etcd), rng_(seed), last_progress_us_(NowUs()) {}

  // Runs faults until `until_us`, finishing the one in progress; false
  // with *error when a node cannot be restarted (the run cannot go on).
  bool Run(int64_t until_us, FaultRecord* rec, std::function<void()> progress,
           std::string* error) {
    std::vector<std::string> kinds(c_.kinds.begin(), c_.kinds.end());
    std::sort(kinds.begin(), kinds.end());  // the schedule depends on the seed only
    rec_ = rec;
    progress_ = std::move(progress);
    while (NowUs() < until_us) {
      if (kinds.empty()) {
        Wait(until_us);
        break;
      }
      const std::string kind = kinds[rng_() % kinds.size()];
      ++rec->by_kind[kind];
      if (!RunOne(kind, error)) return false;
      Wait(std::min(until_us, NowUs() + Between(200, 1500) * 1000));
    }
    return true;
  }

 private:
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  size_t AnyNode() { return static_cast<size_t>(rng_() % cluster_->size()); }
  std::pair<size_t, size_t> AnyPair() {
    const size_t a = AnyNode();
    return {a, (a + 1 + rng_() % (cluster_->size() - 1)) % cluster_->size()};
  }
  const std::string& Id(size_t i) { return cluster_->node(i).id; }

  // Sleeps until `until_us`, looking for crashed nodes and printing
  // progress now and then.
  void Wait(int64_t until_us) {
    while (NowUs() < until_us) {
      SleepMs(std::min<int64_t>(50, (until_us - NowUs()) / 1000 + 1));
      for (auto& c : cluster_->Crashes()) rec_->crashes.push_back(c);
      if (etcd_ != nullptr) {
        for (auto& c : etcd_->Crashes()) rec_->crashes.push_back(c);
      }
      if (NowUs() - last_progress_us_ > 10'000'000) {
        last_progress_us_ = NowUs();
        progress_();
      }
    }
  }
  void WaitMs(int64_t ms) { Wait(NowUs() + ms * 1000); }

  void Hook(size_t node, const std::vector<std::string>& args) {
    std::string error;
    if (!cluster_->Fault(node, args, &error)) {
      std::string what = Id(node) + ":";
      for (const auto& a : args) what += " " + a;
      Event("fault hook NOT applied: %s: %s", what.c_str(), error.c_str());
      rec_->not_applied.push_back(what + ": " + error);
    }
  }

  bool Restart(size_t v, std::string* error) {
    if (!cluster_->Start(v, error)) {
      *error = "cannot restart " + Id(v) + ": " + *error;
      return false;
    }
    Event("%s restarted (same id and ports)", Id(v).c_str());
    return true;
  }

  bool RestartEtcd(size_t k, std::string* error) {
    if (!etcd_->Start(k, error)) {
      *error = "cannot restart etcd " + etcd_->member(k).name + ": " + *error;
      return false;
    }
    std::string why;
    const int64_t from = NowUs();
    // Back in the raft group (it knows the leader) before the next fault, so
    // that the next etcd fault never leaves two members down.
    if (!etcd_->WaitHealthy(20000, &why)) {
      *error = "etcd is not healthy 20 s after " + etcd_->member(k).name + " restarted: " + why;
      return false;
    }
    Event("etcd %s restarted (same data dir and ports); all three know the leader after %s",
          etcd_->member(k).name.c_str(), Ms(NowUs() - from).c_str());
    return true;
  }

  // etcd-kill-restart: one member, drawn from the seed, SIGKILLed and
  // restarted after 0.5-3 s.  etcd-kill-leader: whichever member leads,
  // likewise.  The draws are the same whatever happens, so that the rest
  // of the schedule does not depend on the etcd cluster's state.
  bool RunEtcd(const std::string& kind, std::string* error) {
    const size_t drawn = static_cast<size_t>(rng_() % 3);
    const int64_t down = Between(500, 3000);
    if (etcd_ == nullptr) {
      rec_->not_applied.push_back(kind + ": no etcd cluster");
      return true;
    }
    std::string why;
    if (!etcd_->WaitHealthy(20000, &why)) {
      *error = "etcd is not healthy before " + kind + ": " + why;
      return false;
    }
    size_t k = drawn;
    if (kind == "etcd-kill-leader") {
      int leader = -1;
      for (int attempt = 0; attempt < 40 && leader < 0; ++attempt) {
        leader = etcd_->Leader();
        if (leader < 0) SleepMs(50);
      }
      if (leader < 0) {
        Event("etcd-kill-leader: no member says it leads; NOT applied");
        rec_->not_applied.push_back(kind + ": no leader found");
        return true;
      }
      k = static_cast<size_t>(leader);
    }
    const bool leads = etcd_->Leader() == static_cast<int>(k);
    Event("SIGKILL etcd %s (%s), restart in %" PRId64 " ms%s", etcd_->member(k).name.c_str(),
          leads ? "the leader" : "a follower", down,
          c_.Strict() ? "" : " (gossip mode: nobody uses etcd)");
    etcd_->Kill(k);
    WaitMs(down);
    return RestartEtcd(k, error);
  }

  bool RunOne(const std::string& kind, std::string* error) {
    if (kind.rfind("etcd-", 0) == 0) return RunEtcd(kind, error);
    const int64_t detect = c_.DetectionBoundMs();
    const int64_t req = c_.request_timeout_ms;
    if (kind == "pause-short" || kind == "pause-long") {
      const size_t v = AnyNode();
      // Shorter than the suspicion timeout cannot get a node declared dead;
      // longer than the detection bound always does.
      const int64_t ms = kind == "pause-short"
                             ? Between(20, std::max<int64_t>(21, c_.suspicion_ms * 4 / 5))
                             : Between(detect + 200, detect + 2500);
      Event("SIGSTOP %s for %" PRId64 " ms (%s failure detection, bound %" PRId64 " ms)",
            Id(v).c_str(), ms, kind == "pause-short" ? "shorter than" : "longer than", detect);
      cluster_->Pause(v);
      WaitMs(ms);
      cluster_->Resume(v);
      Event("SIGCONT %s", Id(v).c_str());
      return true;
    }
    if (kind == "kill" || kind == "kill-lagging") {
      const size_t v = AnyNode();
      if (kind == "kill-lagging") {
        // Its replication lags: what it acknowledged last is on no other node.
        const int64_t lag = Between(100, 1000);
        for (size_t p = 0; p < cluster_->size(); ++p) {
          if (p != v) Hook(v, {"DELAYREPL", Id(p), std::to_string(lag)});
        }
        const int64_t run = Between(300, 1500);
        Event("%s replicates %" PRId64 " ms late; SIGKILL in %" PRId64 " ms", Id(v).c_str(), lag,
              run);
        WaitMs(run);
      }
      const int64_t down = Between(100, detect + 1500);
      Event("SIGKILL %s, restart in %" PRId64 " ms", Id(v).c_str(), down);
      cluster_->Kill(v);
      WaitMs(down);
      return Restart(v, error);
    }
    // Link faults between a pair, in both directions (or, for replication,
    // one way: a lagging copy).
    const auto [a, b] = AnyPair();
    int64_t ms = 0;
    std::string hook = "DELAY";
    if (kind == "delay-short") ms = Between(5, std::max<int64_t>(6, req / 2));
    if (kind == "delay-long") ms = Between(req + 100, 3 * req);
    if (kind == "delayrepl") {
      hook = "DELAYREPL";
      ms = Between(100, 2000);
    }
    const int64_t lasting = Between(500, 4000);
    Event("%s %s %s %s: %" PRId64 " ms (%s the request timeout, %" PRId64 " ms) for %" PRId64
          " ms",
          hook.c_str(), Id(a).c_str(), hook == "DELAY" ? "<->" : "->", Id(b).c_str(), ms,
          ms > req ? "longer than" : "shorter than", req, lasting);
    Hook(a, {hook, Id(b), std::to_string(ms)});
    if (hook == "DELAY") Hook(b, {hook, Id(a), std::to_string(ms)});
    WaitMs(lasting);
    Hook(a, {hook, Id(b), "0"});
    if (hook == "DELAY") Hook(b, {hook, Id(a), "0"});
    Event("%s between %s and %s cleared", hook.c_str(), Id(a).c_str(), Id(b).c_str());
    return true;
  }

  const Config& c_;
  Cluster* cluster_;
  EtcdCluster* etcd_;
  std::mt19937_64 rng_;
  FaultRecord* rec_ = nullptr;
  std::function<void()> progress_;
  int64_t last_progress_us_;
};

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_NODES_H_
