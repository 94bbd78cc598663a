// The cluster fault test with real processes (issue 12): three ephpm-faulty
// nodes on loopback; lock cycles and increments from client threads against
// random nodes; meanwhile a seeded schedule of faults (SIGSTOP/SIGCONT, a
// SIGKILL and a restart, delayed links through EPHPM.FAULT), then a
// separate partition phase.  The judges (checker.h) find overlapping lock
// holds, locks that vanished before their TTL, and lost or phantom
// increments.  See README.md for how to run it and what it reports.
//
//   cluster_fault_test --ephpm-faulty PATH            the fault test
//   cluster_fault_test --check-shipped --ephpm PATH --ephpm-faulty PATH
//                                                      EPHPM.FAULT exists only in ephpm-faulty
//
// Exit status: 0 clean, 1 a violation (or a failed check), 2 the test could
// not run (a node would not start, a bad setting).

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "checker.h"
#include "node.h"
#include "owner.h"
#include "process.h"
#include "resp_client.h"
#include "workload.h"

namespace ephpm_fault {
namespace {

// ---- time and printing ------------------------------------------------------------

int64_t g_t0_us = 0;  // the run's start: every printed time is relative to it

std::string At(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(us - g_t0_us) / 1e6);
  return buf;
}

std::string Ms(int64_t us) { return std::to_string((us + 500) / 1000) + " ms"; }

void Event(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Event(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("[%9.3f s] %s\n", static_cast<double>(NowUs() - g_t0_us) / 1e6, buf);
  std::fflush(stdout);
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---- configuration ----------------------------------------------------------------

const char* const kAllKinds[] = {"pause-short", "pause-long",  "kill",      "kill-lagging",
                                 "delay-short", "delay-long",  "delayrepl"};

struct Config {
  uint64_t seed = 0;
  int64_t main_seconds = 90;
  int64_t tail_seconds = 3;  // load without new faults after the last one
  // A clean partition: the minority side decides nothing (docs/CLUSTER.md),
  // so a second holder or a lost increment there is a failure too.
  std::string partition = "fail";  // report | fail | off
  int64_t partition_seconds = 5;
  std::set<std::string> kinds;
  int lock_threads = 8, incr_threads = 3;
  int lock_keys_per_node = 2, counters_per_node = 1;
  int64_t ttl_min_ms = 150, ttl_max_ms = 1500;
  int64_t margin_ms = 25;
  int64_t client_timeout_ms = 3000;
  int64_t probe_ms = 100, suspicion_ms = 500, request_timeout_ms = 500;
  std::string log_dir;
  bool keep_logs = false;

  // The cluster's own bound (docs/CLUSTER.md): a stopped member of three is
  // seen dead by every other member within this.
  int64_t DetectionBoundMs() const {
    ephpm::cluster::ClusterOptions o;
    o.probe_interval_ms = probe_ms;
    o.probe_timeout_ms = std::max<int64_t>(1, probe_ms / 2);  // as sapi/main.cc sets it
    o.suspicion_timeout_ms = suspicion_ms;
    o.request_timeout_ms = request_timeout_ms;
    return ephpm::cluster::FailureDetectionBoundMs(o, 3);
  }
};

bool EnvInt(const char* name, int64_t lo, int64_t hi, int64_t* v, std::string* error) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0' || n < lo || n > hi) {
    *error = std::string(name) + "=" + s + ": needs an integer from " + std::to_string(lo) +
             " to " + std::to_string(hi);
    return false;
  }
  *v = n;
  return true;
}

bool LoadConfig(Config* c, std::string* error) {
  if (const char* s = std::getenv("EPHPM_FAULT_SEED"); s != nullptr && *s != '\0') {
    char* end = nullptr;
    errno = 0;
    c->seed = std::strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
      *error = std::string("EPHPM_FAULT_SEED=") + s + ": needs an unsigned integer";
      return false;
    }
  } else {
    c->seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  }
  int64_t lock_threads = c->lock_threads, incr_threads = c->incr_threads;
  int64_t lock_keys = c->lock_keys_per_node, counters = c->counters_per_node;
  if (!EnvInt("EPHPM_FAULT_SECONDS", 1, 86400 * 7, &c->main_seconds, error) ||
      !EnvInt("EPHPM_FAULT_TAIL_SECONDS", 0, 3600, &c->tail_seconds, error) ||
      !EnvInt("EPHPM_FAULT_PARTITION_SECONDS", 1, 3600, &c->partition_seconds, error) ||
      !EnvInt("EPHPM_FAULT_LOCK_THREADS", 1, 256, &lock_threads, error) ||
      !EnvInt("EPHPM_FAULT_INCR_THREADS", 1, 256, &incr_threads, error) ||
      !EnvInt("EPHPM_FAULT_LOCK_KEYS_PER_NODE", 1, 100, &lock_keys, error) ||
      !EnvInt("EPHPM_FAULT_COUNTERS_PER_NODE", 1, 100, &counters, error) ||
      !EnvInt("EPHPM_FAULT_TTL_MIN_MS", 50, 600000, &c->ttl_min_ms, error) ||
      !EnvInt("EPHPM_FAULT_TTL_MAX_MS", 50, 600000, &c->ttl_max_ms, error) ||
      !EnvInt("EPHPM_FAULT_MARGIN_MS", 0, 10000, &c->margin_ms, error) ||
      !EnvInt("EPHPM_FAULT_CLIENT_TIMEOUT_MS", 100, 600000, &c->client_timeout_ms, error) ||
      !EnvInt("EPHPM_FAULT_PROBE_MS", 10, 10000, &c->probe_ms, error) ||
      !EnvInt("EPHPM_FAULT_SUSPICION_MS", 10, 60000, &c->suspicion_ms, error) ||
      !EnvInt("EPHPM_FAULT_REQUEST_TIMEOUT_MS", 10, 60000, &c->request_timeout_ms, error)) {
    return false;
  }
  c->lock_threads = static_cast<int>(lock_threads);
  c->incr_threads = static_cast<int>(incr_threads);
  c->lock_keys_per_node = static_cast<int>(lock_keys);
  c->counters_per_node = static_cast<int>(counters);
  if (c->ttl_max_ms < c->ttl_min_ms) {
    *error = "EPHPM_FAULT_TTL_MAX_MS is below EPHPM_FAULT_TTL_MIN_MS";
    return false;
  }
  if (c->ttl_min_ms <= 2 * c->margin_ms) {
    *error = "EPHPM_FAULT_TTL_MIN_MS must be more than twice EPHPM_FAULT_MARGIN_MS";
    return false;
  }
  if (const char* s = std::getenv("EPHPM_FAULT_PARTITION"); s != nullptr && *s != '\0') {
    c->partition = s;
    if (c->partition != "report" && c->partition != "fail" && c->partition != "off") {
      *error = "EPHPM_FAULT_PARTITION must be report, fail or off";
      return false;
    }
  }
  std::string kinds = "all";
  if (const char* s = std::getenv("EPHPM_FAULT_KINDS"); s != nullptr && *s != '\0') kinds = s;
  std::stringstream ss(kinds);
  for (std::string k; std::getline(ss, k, ',');) {
    if (k == "all") {
      c->kinds.insert(std::begin(kAllKinds), std::end(kAllKinds));
    } else if (k == "none") {
    } else if (std::find(std::begin(kAllKinds), std::end(kAllKinds), k) != std::end(kAllKinds)) {
      c->kinds.insert(k);
    } else {
      *error = "EPHPM_FAULT_KINDS: unknown kind '" + k + "' (all, none, or of: pause-short " +
               "pause-long kill kill-lagging delay-short delay-long delayrepl)";
      return false;
    }
  }
  if (const char* s = std::getenv("EPHPM_FAULT_LOG_DIR"); s != nullptr && *s != '\0') {
    c->log_dir = s;
    c->keep_logs = true;
    ::mkdir(s, 0755);
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/ephpm-fault-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      *error = "mkdtemp " + templ + ": " + std::strerror(errno);
      return false;
    }
    c->log_dir = templ;
  }
  if (const char* s = std::getenv("EPHPM_FAULT_KEEP_LOGS"); s != nullptr && *s == '1') {
    c->keep_logs = true;
  }
  return true;
}

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
    for (int attempt = 1; attempt <= 5; ++attempt) {
      const size_t from = FileSize(n.log);
      if (!n.child.Spawn(argv, n.log, error)) return false;
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
    char line[128];
    const time_t now = time(nullptr);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    std::snprintf(line, sizeof line, "=== fault driver: %s at %s (driver time %s)\n", what, when,
                  At(NowUs()).c_str());
    if (std::FILE* f = std::fopen(nodes_[i].log.c_str(), "a")) {
      std::fputs(line, f);
      std::fclose(f);
    }
  }

  const Config& c_;
  const std::string program_;
  std::deque<Node> nodes_;  // a deque: a Node (its Child) never moves
};

// Keys spread evenly over the owners the three nodes have when all are
// alive (owner.h: the ids sorted, hash modulo 3).
std::vector<std::string> KeysPerOwner(const std::string& prefix, const std::vector<std::string>& ids,
                                      int per_node, std::map<std::string, std::string>* owner) {
  std::vector<std::string> keys;
  std::vector<int> have(ids.size(), 0);
  for (int j = 0; keys.size() < ids.size() * static_cast<size_t>(per_node); ++j) {
    const std::string key = prefix + ":" + std::to_string(j);
    const size_t o = ephpm::cluster::OwnerIndex(key, ids.size());
    if (have[o] >= per_node) continue;
    ++have[o];
    keys.push_back(key);
    (*owner)[key] = ids[o];
  }
  return keys;
}

// ---- faults -----------------------------------------------------------------------

struct FaultRecord {
  std::map<std::string, int> by_kind;
  std::vector<std::string> not_applied;  // hook commands that failed
  std::vector<std::string> crashes;
};

// A seeded schedule of faults, run on the main thread (which forks the
// restarted nodes) until a deadline.  One at a time: never more than one
// node paused or down.
class FaultSchedule {
 public:
  FaultSchedule(const Config& c, Cluster* cluster, uint64_t seed)
      : c_(c), cluster_(cluster), rng_(seed), last_progress_us_(NowUs()) {}

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

  bool RunOne(const std::string& kind, std::string* error) {
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
  std::mt19937_64 rng_;
  FaultRecord* rec_ = nullptr;
  std::function<void()> progress_;
  int64_t last_progress_us_;
};

// ---- judging and reporting ---------------------------------------------------------

struct PhaseReport {
  std::string name;
  int64_t start_us = 0, end_us = 0;
  FaultRecord faults;
  WorkloadResult result;  // owns the cycles the holds point into
  LockTally locks;
  std::vector<Overlap> overlaps;
  DoubleHolderWindow window;
  std::vector<const LockCycle*> vanished;
  std::map<std::string, CounterVerdict> counters;
  std::map<std::string, std::string> owner;  // of each key, all nodes alive
  bool converged = true;
  std::string not_converged;
  int64_t cut_us = 0, heal_us = 0;  // the partition phase's

  int64_t Acked() const {
    int64_t n = 0;
    for (const auto& [k, v] : counters) n += v.acked;
    return n;
  }
  int64_t Lost() const {
    int64_t n = 0;
    for (const auto& [k, v] : counters) n += v.lost;
    return n;
  }
  int64_t Phantom() const {
    int64_t n = 0;
    for (const auto& [k, v] : counters) n += v.phantom;
    return n;
  }
  std::vector<std::string> Violations() const {
    std::vector<std::string> out;
    if (!overlaps.empty()) out.push_back(std::to_string(overlaps.size()) + " overlapping holds");
    if (!vanished.empty()) out.push_back(std::to_string(vanished.size()) + " vanished locks");
    if (Lost() > 0) out.push_back(std::to_string(Lost()) + " lost increments");
    if (Phantom() > 0) out.push_back(std::to_string(Phantom()) + " phantom increments");
    int went_back = 0, split = 0;
    for (const auto& [k, v] : counters) {
      went_back += !v.duplicate_replies.empty() || !v.impossible_replies.empty();
      split += !v.agree;
    }
    if (went_back > 0) out.push_back(std::to_string(went_back) + " counters that went back");
    if (split > 0) out.push_back(std::to_string(split) + " counters the nodes disagree on");
    if (!result.unexpected.empty()) out.push_back("unexpected replies");
    if (!faults.crashes.empty()) out.push_back(std::to_string(faults.crashes.size()) + " crashes");
    if (!converged) out.push_back("membership did not converge");
    return out;
  }
};

void Judge(PhaseReport* p, const Config& c, const std::map<std::string, Observed>& observed) {
  const int64_t margin = c.margin_ms * 1000;
  p->locks = Tally(p->result.cycles, margin);
  p->overlaps = FindOverlaps(HoldsOf(p->result.cycles, margin));
  p->window = WindowOf(p->overlaps);
  p->vanished = FindVanished(p->result.cycles, margin);
  for (const auto& [key, h] : p->result.counters) {
    auto it = observed.find(key);
    p->counters[key] = JudgeCounter(h, it == observed.end() ? Observed{} : it->second);
  }
}

std::string HoldText(const Hold& h) {
  const LockCycle& c = *h.cycle;
  const char* end = "released";
  if (c.release == Release::kNone || h.end_us < c.release_sent_us) end = "TTL";
  return "via " + c.node + ", sent " + At(c.sent_us) + ", held [" + At(h.start_us) + ", " +
         At(h.end_us) + ") until " + end + ", ttl " + std::to_string(c.ttl_ms) + " ms, token " +
         c.token;
}

void PrintPhase(const PhaseReport& p, bool fails) {
  std::printf("\n== phase %s: %.1f s\n", p.name.c_str(),
              static_cast<double>(p.end_us - p.start_us) / 1e6);
  std::string kinds;
  for (const auto& [k, n] : p.faults.by_kind) kinds += " " + k + "=" + std::to_string(n);
  std::printf("faults injected:%s\n", kinds.empty() ? " none" : kinds.c_str());
  if (!p.faults.not_applied.empty()) {
    std::printf("fault hooks not applied (the run was less adversarial than scheduled): %zu\n",
                p.faults.not_applied.size());
    for (const auto& s : p.faults.not_applied) std::printf("  %s\n", s.c_str());
  }
  const LockTally& t = p.locks;
  std::printf(
      "locks: %" PRId64 " cycles: %" PRId64 " granted (%" PRId64 " holds, %" PRId64
      " granted too late to hold, %" PRId64 " held past the TTL), %" PRId64
      " refused, %" PRId64 " unknown outcomes, %" PRId64 " unexpected\n",
      t.cycles, t.granted, t.holds, t.empty_holds, t.held_past_ttl, t.refused, t.unknown,
      t.unexpected);
  std::printf("  releases: %" PRId64 " released, %" PRId64 " found it gone, %" PRId64
              " unknown, %" PRId64 " unexpected; connect failures (nothing sent) %" PRId64 "\n",
              t.released, t.not_held, t.release_unknown, t.release_unexpected,
              p.result.connect_failures);
  std::printf("  OVERLAPS (two holders at once): %zu", p.overlaps.size());
  if (!p.overlaps.empty()) {
    std::printf("; double-holder time %s in all, longest %s on %s, from %s to %s",
                Ms(p.window.total_us).c_str(), Ms(p.window.longest_us).c_str(),
                p.window.longest_key.c_str(), At(p.window.first_us).c_str(),
                At(p.window.last_us).c_str());
  }
  std::printf("\n");
  if (p.cut_us != 0) {
    std::printf("  partition: cut at %s, healed at %s (%s)", At(p.cut_us).c_str(),
                At(p.heal_us).c_str(), Ms(p.heal_us - p.cut_us).c_str());
    if (!p.overlaps.empty()) {
      std::printf("; two holders from %+.3f s after the cut to %+.3f s after the heal",
                  static_cast<double>(p.window.first_us - p.cut_us) / 1e6,
                  static_cast<double>(p.window.last_us - p.heal_us) / 1e6);
    }
    std::printf("\n");
  }
  const size_t show = 20;
  for (size_t i = 0; i < p.overlaps.size() && i < show; ++i) {
    const Overlap& o = p.overlaps[i];
    std::printf("    %s (owner %s when all are alive): both held for %s from %s\n      A %s\n"
                "      B %s\n",
                o.a.cycle->key.c_str(), p.owner.at(o.a.cycle->key).c_str(),
                Ms(o.to_us - o.from_us).c_str(), At(o.from_us).c_str(), HoldText(o.a).c_str(),
                HoldText(o.b).c_str());
  }
  if (p.overlaps.size() > show) std::printf("    ... and %zu more\n", p.overlaps.size() - show);
  std::printf("  VANISHED (DELIFEQ answered 0 before the TTL): %zu\n", p.vanished.size());
  for (size_t i = 0; i < p.vanished.size() && i < show; ++i) {
    const LockCycle& c = *p.vanished[i];
    std::printf("    %s via %s: granted %s, ttl %" PRId64 " ms, release sent %s, answered 0 at %s\n",
                c.key.c_str(), c.node.c_str(), At(c.replied_us).c_str(), c.ttl_ms,
                At(c.release_sent_us).c_str(), At(c.release_replied_us).c_str());
  }
  if (p.vanished.size() > show) std::printf("    ... and %zu more\n", p.vanished.size() - show);
  int64_t acked = 0, unknown = 0, observed = 0;
  std::printf("counters:\n");
  for (const auto& [key, v] : p.counters) {
    acked += v.acked;
    unknown += v.unknown;
    std::string seen;
    std::optional<int64_t> lo;
    for (const auto& [id, val] : v.observed) {
      seen += " " + id + "=" + (val ? std::to_string(*val) : std::string("unreadable"));
      if (val) lo = lo ? std::min(*lo, *val) : *val;
    }
    observed += lo.value_or(0);
    std::printf("  %s (owner %s): acked %" PRId64 ", unknown %" PRId64 ", observed%s", key.c_str(),
                p.owner.at(key).c_str(), v.acked, v.unknown, seen.c_str());
    if (v.agree && v.lost == 0 && v.phantom == 0 && v.unknown > 0) {
      // How many unknown outcomes did land (e.g. a routed request applied
      // after its caller was told -CLUSTERDOWN): not a violation today.
      std::printf(" (%" PRId64 " of the unknown landed)", lo.value_or(0) - v.acked);
    }
    if (v.lost > 0) std::printf("  LOST %" PRId64, v.lost);
    if (v.phantom > 0) std::printf("  PHANTOM %" PRId64, v.phantom);
    if (!v.agree) std::printf("  NODES DISAGREE");
    if (!v.duplicate_replies.empty()) {
      std::printf("  WENT BACK: %zu values acknowledged twice (first %" PRId64 ")",
                  v.duplicate_replies.size(), v.duplicate_replies.front());
    }
    if (!v.impossible_replies.empty()) {
      std::printf("  %zu IMPOSSIBLE values acknowledged (first %" PRId64 ")",
                  v.impossible_replies.size(), v.impossible_replies.front());
    }
    std::printf("\n");
  }
  std::printf("  increments: acked %" PRId64 ", unknown %" PRId64 ", observed %" PRId64
              " (lowest node), LOST %" PRId64 ", PHANTOM %" PRId64 "\n",
              acked, unknown, observed, p.Lost(), p.Phantom());
  for (const auto& u : p.result.unexpected) std::printf("UNEXPECTED reply: %s\n", u.c_str());
  for (const auto& c : p.faults.crashes) std::printf("CRASH: %s\n", c.c_str());
  if (!p.converged) std::printf("NOT CONVERGED after the phase: %s\n", p.not_converged.c_str());
  const auto v = p.Violations();
  std::string list;
  for (const auto& s : v) list += (list.empty() ? "" : ", ") + s;
  std::printf("phase %s: %s%s\n", p.name.c_str(),
              v.empty() ? "no violation" : (fails ? "FAIL: " : "violations (report only): "),
              list.c_str());
  std::fflush(stdout);
}

// ---- the phases ------------------------------------------------------------------

WorkloadOptions Options(const Config& c, const Cluster& cluster, const std::string& prefix,
                        PhaseReport* p) {
  WorkloadOptions o;
  o.nodes = cluster.Addrs();
  o.lock_keys = KeysPerOwner(prefix + ":lock", cluster.Ids(), c.lock_keys_per_node, &p->owner);
  o.counter_keys =
      KeysPerOwner(prefix + ":counter", cluster.Ids(), c.counters_per_node, &p->owner);
  o.lock_threads = c.lock_threads;
  o.incr_threads = c.incr_threads;
  o.ttl_min_ms = c.ttl_min_ms;
  o.ttl_max_ms = c.ttl_max_ms;
  o.client_timeout_ms = static_cast<int>(c.client_timeout_ms);
  o.seed = c.seed ^ (prefix == "m" ? 0x6d61696eull : 0x70617274ull);  // one stream per phase
  o.token_prefix = prefix;
  return o;
}

// After a phase: every hook cleared, every node up, membership converged,
// the counters settled and read; then the judges.
void Finish(Cluster* cluster, const Config& c, const WorkloadOptions& o, PhaseReport* p) {
  for (size_t i = 0; i < cluster->size(); ++i) {
    std::string error;
    if (cluster->node(i).state == Node::kUp && !cluster->Fault(i, {"CLEAR"}, &error)) {
      Event("EPHPM.FAULT CLEAR on %s failed: %s", cluster->node(i).id.c_str(), error.c_str());
    }
  }
  for (auto& crash : cluster->Crashes()) p->faults.crashes.push_back(crash);
  p->converged = cluster->WaitConverged(30000, &p->not_converged);
  Event("phase %s: membership %s; reading the counters", p->name.c_str(),
        p->converged ? "converged" : "did NOT converge in 30 s");
  const auto observed = cluster->SettledCounters(o.counter_keys, 15000);
  Judge(p, c, observed);
}

bool RunMainPhase(Cluster* cluster, const Config& c, PhaseReport* p, std::string* error) {
  p->name = "main";
  const WorkloadOptions o = Options(c, *cluster, "m", p);
  Workload w(o);
  p->start_us = NowUs();
  Event("main phase: %d lock threads on %zu keys, %d increment threads on %zu counters, faults "
        "for %" PRId64 " s",
        o.lock_threads, o.lock_keys.size(), o.incr_threads, o.counter_keys.size(),
        c.main_seconds);
  w.Start();
  FaultSchedule faults(c, cluster, c.seed);
  const bool ran = faults.Run(
      p->start_us + c.main_seconds * 1'000'000, &p->faults,
      [&w] {
        Event("progress: %" PRId64 " locks granted, %" PRId64 " increments acknowledged, %" PRId64
              " unknown outcomes",
              w.granted(), w.acked(), w.unknown());
      },
      error);
  if (ran && c.tail_seconds > 0) {
    // What the last fault broke shows after it ends (a resumed owner acts
    // on its stale copy): keep the load on a while.
    Event("faults over; load goes on for %" PRId64 " s", c.tail_seconds);
    SleepMs(c.tail_seconds * 1000);
  }
  p->result = w.Stop();
  p->end_us = NowUs();
  if (!ran) return false;
  Finish(cluster, c, o, p);
  return true;
}

void RunPartitionPhase(Cluster* cluster, const Config& c, PhaseReport* p) {
  p->name = "partition";
  const WorkloadOptions o = Options(c, *cluster, "p", p);
  std::mt19937_64 rng(c.seed ^ 0x9a27171017ull);
  const size_t x = static_cast<size_t>(rng() % cluster->size());
  const std::string& xid = cluster->node(x).id;
  Workload w(o);
  p->start_us = NowUs();
  w.Start();
  auto cut = [&](const char* on) {
    for (size_t i = 0; i < cluster->size(); ++i) {
      if (i == x) continue;
      std::string error;
      for (auto [from, to] : {std::pair{x, i}, std::pair{i, x}}) {
        if (!cluster->Fault(from, {"CUT", cluster->node(to).id, on}, &error)) {
          Event("CUT %s on %s NOT applied: %s", on, cluster->node(from).id.c_str(),
                error.c_str());
          p->faults.not_applied.push_back("CUT " + std::string(on) + " on " +
                                          cluster->node(from).id + ": " + error);
        }
      }
    }
  };
  SleepMs(2000);
  cut("1");
  p->cut_us = NowUs();
  p->faults.by_kind["partition"] = 1;
  Event("partition: %s cut off from the other two, both ways, for %" PRId64 " s", xid.c_str(),
        c.partition_seconds);
  SleepMs(c.partition_seconds * 1000);
  cut("0");
  p->heal_us = NowUs();
  Event("partition healed");
  SleepMs(3000);
  p->result = w.Stop();
  p->end_us = NowUs();
  Finish(cluster, c, o, p);
}

// ---- the shipped program refuses EPHPM.FAULT ----------------------------------------

int CheckShipped(const std::string& ephpm, const std::string& faulty) {
  std::string dir = "/tmp/ephpm-fault-check-XXXXXX";
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') {
    dir = std::string(tmp) + "/ephpm-fault-check-XXXXXX";
  }
  if (::mkdtemp(dir.data()) == nullptr) {
    std::printf("mkdtemp failed: %s\n", std::strerror(errno));
    return 2;
  }
  int failures = 0;
  auto check = [&](const std::string& what, bool ok, const std::string& got) {
    std::printf("%s: %s (got %s)\n", ok ? "ok  " : "FAIL", what.c_str(), got.c_str());
    failures += ok ? 0 : 1;
  };
  // One program on a free port: its RESP port, 0 when it did not start.
  auto start = [&](Child* child, const std::string& program, const std::string& log,
                   const std::vector<std::string>& extra) -> uint16_t {
    std::vector<std::string> argv = {program, "--resp", "127.0.0.1:0", "--cluster-node-id",
                                     "solo"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string error;
    if (!child->Spawn(argv, log, &error)) {
      std::printf("cannot start %s: %s\n", program.c_str(), error.c_str());
      return 0;
    }
    const std::string addr = WaitForLine(*child, log, 0, "resp listening on ", 10000);
    const size_t colon = addr.rfind(':');
    if (colon == std::string::npos) {
      std::printf("%s did not start; its log:\n%s", program.c_str(), Tail(log, 20).c_str());
      return 0;
    }
    return static_cast<uint16_t>(std::atoi(addr.c_str() + colon + 1));
  };
  auto call = [](uint16_t port, const std::vector<std::string>& argv, RespClient* client) {
    Reply r;
    std::string error;
    if (!client->connected() && !client->Connect(port, 2000, &error)) return "<" + error + ">";
    if (!client->Call(argv, 2000, &r, &error)) return "<" + error + ">";
    return r.Text();
  };
  {
    Child shipped;
    const uint16_t port = start(&shipped, ephpm, dir + "/ephpm.log", {});
    if (port == 0) return 2;
    RespClient c;
    for (const char* name : {"EPHPM.FAULT", "ephpm.fault"}) {
      const std::string got = call(port, {name, "CUT", "x", "1"}, &c);
      check(std::string("the shipped ephpm does not know ") + name,
            got.rfind("-ERR unknown command '" + std::string(name) + "'", 0) == 0, got);
    }
    const std::string got = call(port, {"PING"}, &c);
    check("the shipped ephpm still serves", got == "+PONG", got);
  }
  {
    // The positive control: the same requests reach the hooks in ephpm-faulty.
    Child test_only;
    const uint16_t port =
        start(&test_only, faulty, dir + "/ephpm-faulty.log", {"--resp-password", "pw"});
    if (port == 0) return 2;
    RespClient c;
    std::string got = call(port, {"EPHPM.FAULT", "CLEAR"}, &c);
    check("ephpm-faulty asks for AUTH first", got.rfind("-NOAUTH", 0) == 0, got);
    got = call(port, {"AUTH", "pw"}, &c);
    check("AUTH", got == "+OK", got);
    got = call(port, {"ephpm.fault", "clear"}, &c);
    check("ephpm-faulty applies EPHPM.FAULT CLEAR", got == "+OK", got);
    got = call(port, {"EPHPM.FAULT", "SKEW", "0"}, &c);
    check("ephpm-faulty applies EPHPM.FAULT SKEW", got == "+OK", got);
    got = call(port, {"EPHPM.FAULT", "CUT", "nobody", "1"}, &c);
    check("ephpm-faulty refuses a peer it does not know",
          got.rfind("-ERR not a peer of this node", 0) == 0, got);
    got = call(port, {"EPHPM.FAULT", "DELAY", "solo", "10"}, &c);
    check("ephpm-faulty refuses itself as a peer", got.rfind("-ERR not a peer", 0) == 0, got);
    got = call(port, {"EPHPM.FAULT", "DELAY"}, &c);
    check("ephpm-faulty explains its usage", got.rfind("-ERR usage: EPHPM.FAULT", 0) == 0, got);
  }
  std::string rm = "rm -rf '" + dir + "'";
  if (failures == 0 && std::system(rm.c_str()) != 0) std::printf("could not remove %s\n", dir.c_str());
  return failures == 0 ? 0 : 1;
}

int Usage() {
  std::fprintf(stderr,
               "usage: cluster_fault_test --ephpm-faulty PATH\n"
               "       cluster_fault_test --check-shipped --ephpm PATH --ephpm-faulty PATH\n"
               "settings: EPHPM_FAULT_* in the environment (tests/fault/README.md)\n");
  return 2;
}

int Main(int argc, char** argv) {
  std::string faulty, ephpm;
  bool check_shipped = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ephpm-faulty" && i + 1 < argc) {
      faulty = argv[++i];
    } else if (a == "--ephpm" && i + 1 < argc) {
      ephpm = argv[++i];
    } else if (a == "--check-shipped") {
      check_shipped = true;
    } else {
      return Usage();
    }
  }
  InstallCleanupHandlers();
  if (check_shipped) return faulty.empty() || ephpm.empty() ? Usage() : CheckShipped(ephpm, faulty);
  if (faulty.empty()) return Usage();

  Config c;
  std::string error;
  if (!LoadConfig(&c, &error)) {
    std::fprintf(stderr, "cluster_fault_test: %s\n", error.c_str());
    return 2;
  }
  g_t0_us = NowUs();
  const int64_t wall_minus_mono_start =
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() -
      NowUs();
  std::string kinds;
  for (const auto& k : c.kinds) kinds += (kinds.empty() ? "" : ",") + k;
  std::printf(
      "cluster fault test: seed %" PRIu64 "\n"
      "  replay: EPHPM_FAULT_SEED=%" PRIu64 " EPHPM_FAULT_SECONDS=%" PRId64
      " EPHPM_FAULT_KINDS=%s EPHPM_FAULT_PARTITION=%s (the same fault schedule, keys and tokens;\n"
      "  thread timing differs from run to run)\n"
      "  main phase %" PRId64 " s; partition phase %s (cut %" PRId64 " s); %d lock threads, %d "
      "increment threads; TTL %" PRId64 "-%" PRId64 " ms, margin %" PRId64 " ms; client timeout %" PRId64
      " ms\n"
      "  nodes: probe %" PRId64 " ms, suspicion %" PRId64 " ms, request timeout %" PRId64
      " ms; failure detection bound %" PRId64 " ms\n"
      "  logs: %s\n",
      c.seed, c.seed, c.main_seconds, kinds.empty() ? "none" : kinds.c_str(),
      c.partition.c_str(), c.main_seconds, c.partition.c_str(), c.partition_seconds,
      c.lock_threads, c.incr_threads, c.ttl_min_ms, c.ttl_max_ms, c.margin_ms,
      c.client_timeout_ms, c.probe_ms, c.suspicion_ms, c.request_timeout_ms,
      c.DetectionBoundMs(), c.log_dir.c_str());
  std::fflush(stdout);

  const std::vector<uint16_t> ports = PickFreePorts(6, c.seed, &error);
  if (ports.empty()) {
    std::printf("cannot run: %s\n", error.c_str());
    return 2;
  }
  Cluster cluster(c, faulty, ports);
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!cluster.Start(i, &error)) {
      std::printf("cannot run: %s\n", error.c_str());
      return 2;
    }
  }
  std::string why;
  if (!cluster.WaitConverged(15000, &why)) {
    std::printf("cannot run: the three nodes did not converge in 15 s: %s\n", why.c_str());
    return 2;
  }
  Event("three nodes up and converged: n1 resp %u, n2 resp %u, n3 resp %u",
        cluster.node(0).resp_port, cluster.node(1).resp_port, cluster.node(2).resp_port);

  PhaseReport main_phase, partition_phase;
  if (!RunMainPhase(&cluster, c, &main_phase, &error)) {
    // Not judged: with a node missing, the counters cannot be read.
    std::printf("\nRESULT: the run stopped (seed %" PRIu64 "): %s\nlogs in %s\n", c.seed,
                error.c_str(), c.log_dir.c_str());
    return 2;
  }
  const bool partition_ran = c.partition != "off" && main_phase.converged;
  if (c.partition != "off" && !main_phase.converged) {
    std::printf("partition phase skipped: the main phase did not end converged\n");
  }
  if (partition_ran) RunPartitionPhase(&cluster, c, &partition_phase);

  // ---- the report ----
  const int64_t wall_minus_mono_end =
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() -
      NowUs();
  std::printf("\n======== cluster fault test report (seed %" PRIu64 ", %.1f s) ========\n", c.seed,
              static_cast<double>(NowUs() - g_t0_us) / 1e6);
  const int64_t drift = wall_minus_mono_end - wall_minus_mono_start;
  if (std::llabs(drift) > c.margin_ms * 500) {
    std::printf("WARNING: the wall clock moved %" PRId64 " ms against the monotonic clock during "
                "the run; TTLs (wall clock) and holds (monotonic) may disagree by that much\n",
                drift / 1000);
  }
  PrintPhase(main_phase, true);
  const bool partition_fails = c.partition == "fail";
  if (partition_ran) PrintPhase(partition_phase, partition_fails);
  const bool failed = !main_phase.Violations().empty() ||
                      (partition_ran && partition_fails && !partition_phase.Violations().empty());
  if (failed) {
    std::printf("\n---- the nodes at the end ----\n");
    for (size_t i = 0; i < cluster.size(); ++i) {
      std::printf("-- %s: INFO ephpm-cluster\n%s\n-- %s: log tail (%s)\n%s",
                  cluster.node(i).id.c_str(), cluster.Info(i).c_str(),
                  cluster.node(i).id.c_str(), cluster.node(i).log.c_str(),
                  Tail(cluster.node(i).log, 30).c_str());
    }
  }
  std::printf("\nRESULT: %s (seed %" PRIu64 "; logs in %s)\n", failed ? "FAIL" : "PASS", c.seed,
              failed || c.keep_logs ? c.log_dir.c_str() : "(removed)");
  std::fflush(stdout);
  for (size_t i = 0; i < cluster.size(); ++i) cluster.Kill(i);
  if (!failed && !c.keep_logs) {
    const std::string rm = "rm -rf '" + c.log_dir + "'";
    if (std::system(rm.c_str()) != 0) std::printf("could not remove %s\n", c.log_dir.c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace ephpm_fault

int main(int argc, char** argv) { return ephpm_fault::Main(argc, argv); }
