// The cluster fault test with real processes (issue 12): three ephpm-faulty
// nodes on loopback; lock cycles and increments from client threads against
// random nodes; meanwhile a seeded schedule of faults (SIGSTOP/SIGCONT, a
// SIGKILL and a restart, delayed links through EPHPM.FAULT), then a
// separate partition phase.  The judges (checker.h) find overlapping lock
// holds, locks that vanished before their TTL, and lost or phantom
// increments.  See README.md for how to run it and what it reports.
//
//   cluster_fault_test --ephpm-faulty PATH            the fault test (gossip mode)
//   cluster_fault_test --ephpm-faulty PATH --arbiter etcd
//                                                      strict mode: locks decided by a
//                                                      private three-member etcd cluster,
//                                                      which the schedule kills too
//   cluster_fault_test --ephpm-faulty PATH --arbiter both
//                                                      strict mode, then gossip mode with
//                                                      the same seed and schedule
//   cluster_fault_test --check-shipped --ephpm PATH --ephpm-faulty PATH
//                                                      EPHPM.FAULT exists only in ephpm-faulty
//
// Exit status: 0 clean, 1 a violation (or a failed check), 2 the test could
// not run (a node would not start, a bad setting, strict mode without etcd).
//
// The pieces: run.h (the settings and the timeline), nodes.h (the node
// processes and the fault schedule), report.h (judging and printing a
// phase); this file picks the keys and runs the phases.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "checker.h"
#include "etcd.h"
#include "node.h"
#include "nodes.h"
#include "owner.h"
#include "process.h"
#include "report.h"
#include "resp_client.h"
#include "run.h"
#include "workload.h"

namespace ephpm_fault {
namespace {

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
void Finish(Cluster* cluster, EtcdCluster* etcd, const Config& c, const WorkloadOptions& o,
            PhaseReport* p) {
  for (size_t i = 0; i < cluster->size(); ++i) {
    std::string error;
    if (cluster->node(i).state == Node::kUp && !cluster->Fault(i, {"CLEAR"}, &error)) {
      Event("EPHPM.FAULT CLEAR on %s failed: %s", cluster->node(i).id.c_str(), error.c_str());
    }
  }
  for (auto& crash : cluster->Crashes()) p->faults.crashes.push_back(crash);
  if (etcd != nullptr) {
    for (auto& crash : etcd->Crashes()) p->faults.crashes.push_back(crash);
  }
  p->converged = cluster->WaitConverged(30000, &p->not_converged);
  Event("phase %s: membership %s; reading the counters", p->name.c_str(),
        p->converged ? "converged" : "did NOT converge in 30 s");
  const auto observed = cluster->SettledCounters(o.counter_keys, 15000);
  Judge(p, c, observed);
}

bool RunMainPhase(Cluster* cluster, EtcdCluster* etcd, const Config& c, PhaseReport* p,
                  std::string* error) {
  p->name = "main";
  const WorkloadOptions o = Options(c, *cluster, "m", p);
  Workload w(o);
  p->start_us = NowUs();
  Event("main phase: %d lock threads on %zu keys, %d increment threads on %zu counters, faults "
        "for %" PRId64 " s",
        o.lock_threads, o.lock_keys.size(), o.incr_threads, o.counter_keys.size(),
        c.main_seconds);
  w.Start();
  FaultSchedule faults(c, cluster, etcd, c.seed);
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
  Finish(cluster, etcd, c, o, p);
  return true;
}

void RunPartitionPhase(Cluster* cluster, EtcdCluster* etcd, const Config& c, PhaseReport* p) {
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
  Event("partition: %s cut off from the other two, both ways, for %" PRId64 " s%s", xid.c_str(),
        c.partition_seconds,
        c.Strict() ? " (the data plane only: every node still reaches etcd)" : "");
  SleepMs(c.partition_seconds * 1000);
  cut("0");
  p->heal_us = NowUs();
  Event("partition healed");
  SleepMs(3000);
  p->result = w.Stop();
  p->end_us = NowUs();
  Finish(cluster, etcd, c, o, p);
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
               "usage: cluster_fault_test --ephpm-faulty PATH [--arbiter gossip|etcd|both]\n"
               "       cluster_fault_test --check-shipped --ephpm PATH --ephpm-faulty PATH\n"
               "  --arbiter etcd: strict mode (locks decided by a private etcd cluster);\n"
               "  both: strict mode, then gossip mode with the same seed and schedule\n"
               "settings: EPHPM_FAULT_* in the environment (tests/fault/README.md)\n");
  return 2;
}

// A temporary directory, removed (with what is in it) when this goes.
struct TempDir {
  std::string path;
  ~TempDir() {
    if (path.empty()) return;
    const std::string rm = "rm -rf '" + path + "'";
    if (std::system(rm.c_str()) != 0) std::printf("could not remove %s\n", path.c_str());
  }
};

std::string ModeName(const Config& c) { return c.Strict() ? "strict" : "gossip"; }

// One line per mode that a document can quote: the main phase's figures,
// then the partition phase's (cut_*).
std::string SummaryLine(const Config& c, const PhaseReport& m, const PhaseReport* cut, bool failed,
                        double seconds) {
  auto unknown = [](const PhaseReport& p) {
    int64_t incr_unknown = 0;
    for (const auto& [k, v] : p.counters) incr_unknown += v.unknown;
    return p.locks.unknown + p.locks.release_unknown + incr_unknown;
  };
  // Values acknowledged to two increments (or unreachable): each is an
  // acknowledged increment lost, even when unknown increments that landed
  // hide it from lost_increments (acked - lowest observed).
  auto went_back = [](const PhaseReport& p) {
    size_t n = 0;
    for (const auto& [k, v] : p.counters) n += v.duplicate_replies.size() + v.impossible_replies.size();
    return n;
  };
  std::string faults;
  for (const auto& [k, n] : m.faults.by_kind) {
    faults += (faults.empty() ? "" : ",") + k + ":" + std::to_string(n);
  }
  char buf[2048];
  int n = std::snprintf(
      buf, sizeof buf,
      "SUMMARY mode=%s seed=%" PRIu64 " kinds=%s main_s=%" PRId64 " faults=%s not_applied=%zu"
      " holds=%" PRId64 " overlaps=%zu vanished=%zu acked_increments=%" PRId64
      " lost_increments=%" PRId64 " went_back=%zu phantom=%" PRId64 " clusterdown=%" PRId64
      " (set=%" PRId64
      ",delifeq=%" PRId64 ",incr=%" PRId64 ") unknown=%" PRId64,
      ModeName(c).c_str(), c.seed, c.kinds_text.c_str(), c.main_seconds,
      faults.empty() ? "none" : faults.c_str(), m.faults.not_applied.size(), m.locks.holds,
      m.overlaps.size(), m.vanished.size(), m.Acked(), m.Lost(), went_back(m), m.Phantom(),
      m.result.Clusterdown(), m.result.clusterdown_set, m.result.clusterdown_delifeq,
      m.result.clusterdown_incr, unknown(m));
  std::string out(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
  if (cut != nullptr) {
    n = std::snprintf(buf, sizeof buf,
                      " | cut_s=%" PRId64 " cut_holds=%" PRId64 " cut_overlaps=%zu"
                      " cut_double_holder_ms=%" PRId64 " cut_acked_increments=%" PRId64
                      " cut_lost_increments=%" PRId64 " cut_went_back=%zu cut_clusterdown=%" PRId64
                      " cut_unknown=%" PRId64,
                      c.partition_seconds, cut->locks.holds, cut->overlaps.size(),
                      (cut->window.total_us + 500) / 1000, cut->Acked(), cut->Lost(),
                      went_back(*cut), cut->result.Clusterdown(), unknown(*cut));
    out.append(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
  } else {
    out += " | cut=off";
  }
  n = std::snprintf(buf, sizeof buf, " | result=%s run_s=%.1f", failed ? "FAIL" : "PASS", seconds);
  out.append(buf, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
  return out;
}

// One whole run (the etcd cluster if needed, three nodes, the main phase,
// the partition phase, the report) in c's mode: 0 clean, 1 a violation, 2
// could not run (also: no etcd).  *summary: its SUMMARY line (empty when it did not run).
int RunMode(const Config& c, const std::string& faulty, std::string* summary) {
  const int64_t t0 = NowUs();
  const int64_t wall_minus_mono_start =
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() -
      NowUs();
  std::printf(
      "cluster fault test (%s mode: locks decided by %s): seed %" PRIu64 "\n"
      "  replay: EPHPM_FAULT_ARBITER=%s EPHPM_FAULT_SEED=%" PRIu64 " EPHPM_FAULT_SECONDS=%" PRId64
      " EPHPM_FAULT_KINDS=%s EPHPM_FAULT_PARTITION=%s (the same fault schedule, keys and tokens;\n"
      "  thread timing differs from run to run)\n"
      "  main phase %" PRId64 " s; partition phase %s (cut %" PRId64 " s); %d lock threads, %d "
      "increment threads; TTL %" PRId64 "-%" PRId64 " ms, margin %" PRId64 " ms; client timeout %" PRId64
      " ms\n"
      "  nodes: probe %" PRId64 " ms, suspicion %" PRId64 " ms, request timeout %" PRId64
      " ms; failure detection bound %" PRId64 " ms\n",
      ModeName(c).c_str(), c.Strict() ? "etcd" : "the key's owner", c.seed, c.arbiter.c_str(),
      c.seed, c.main_seconds, c.kinds_text.c_str(), c.partition.c_str(), c.main_seconds,
      c.partition.c_str(), c.partition_seconds, c.lock_threads, c.incr_threads, c.ttl_min_ms,
      c.ttl_max_ms, c.margin_ms, c.client_timeout_ms, c.probe_ms, c.suspicion_ms,
      c.request_timeout_ms, c.DetectionBoundMs());
  if (c.NeedEtcd()) {
    std::printf("  etcd: 3 members (%s), heartbeat %" PRId64 " ms, election %" PRId64 " ms%s\n",
                c.etcd_program.c_str(), c.etcd_heartbeat_ms, c.etcd_election_ms,
                c.Strict() ? "" : "; unused by the nodes (gossip mode), there for its faults");
  }
  if (c.Strict()) {
    std::printf("  strict mode: --etcd-timeout %" PRId64 " ms, --etcd-lease-ttl %" PRId64
                " s; a lock's lease in etcd is its PX rounded up to whole seconds (at least "
                "etcd's minimum): held at least as long as the holds judged here\n",
                c.etcd_timeout_ms, c.etcd_lease_ttl_s);
  }
  std::printf("  logs: %s\n", c.log_dir.c_str());
  std::fflush(stdout);

  std::string error;
  const std::vector<uint16_t> ports = PickFreePorts(c.NeedEtcd() ? 12 : 6, c.seed, &error);
  if (ports.empty()) {
    std::printf("cannot run: %s\n", error.c_str());
    return 2;
  }
  // The etcd members' data dirs: temporary, removed however the run ends
  // (the members are SIGKILLed first: they are declared after it).
  TempDir etcd_data;
  std::unique_ptr<EtcdCluster> etcd;
  if (c.NeedEtcd()) {
    if (::access(c.etcd_program.c_str(), X_OK) != 0) {
      // Never a silent pass: scripts/install-deps.sh installs etcd-server.
      std::printf("FAIL: %s is not an executable (Debian's etcd-server; EPHPM_FAULT_ETCD)\n",
                  c.etcd_program.c_str());
      return 2;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/ephpm-fault-etcd-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) {
      std::printf("cannot run: mkdtemp %s: %s\n", templ.c_str(), std::strerror(errno));
      return 2;
    }
    etcd_data.path = templ;
    etcd = std::make_unique<EtcdCluster>(
        c, c.etcd_program, std::vector<uint16_t>(ports.begin() + 6, ports.end()), templ,
        c.log_dir);
    if (!etcd->StartAll(30000, &error)) {
      std::printf("cannot run: %s\n", error.c_str());
      return 2;
    }
    Event("etcd up: %s (leader m%d), data in %s", etcd->Endpoints().c_str(), etcd->Leader() + 1,
          templ.c_str());
  }
  Cluster cluster(c, faulty, std::vector<uint16_t>(ports.begin(), ports.begin() + 6));
  if (c.Strict()) cluster.UseEtcd(etcd.get(), "/ephpm-fault");
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!cluster.Start(i, &error)) {
      std::printf("cannot run: %s\n", error.c_str());
      return 2;
    }
  }
  std::string why;
  if (!cluster.WaitConverged(c.Strict() ? 30000 : 15000, &why)) {
    std::printf("cannot run: the three nodes did not converge in %d s: %s\n",
                c.Strict() ? 30 : 15, why.c_str());
    for (size_t i = 0; i < cluster.size(); ++i) {
      std::printf("-- %s: log tail\n%s", cluster.node(i).id.c_str(),
                  Tail(cluster.node(i).log, 15).c_str());
    }
    return 2;
  }
  Event("three nodes up and converged%s: n1 resp %u, n2 resp %u, n3 resp %u",
        c.Strict() ? " (and registered in etcd, serving)" : "", cluster.node(0).resp_port,
        cluster.node(1).resp_port, cluster.node(2).resp_port);

  // Strict mode: etcd's member list (over which the keys' owners are
  // computed) on the timeline.
  std::unique_ptr<MembersWatcher> members_watcher;
  if (c.Strict()) {
    std::vector<uint16_t> etcd_ports;
    for (size_t k = 0; k < etcd->size(); ++k) etcd_ports.push_back(etcd->member(k).client_port);
    members_watcher = std::make_unique<MembersWatcher>(etcd_ports, "/ephpm-fault/members/");
  }
  PhaseReport main_phase, partition_phase;
  if (!RunMainPhase(&cluster, etcd.get(), c, &main_phase, &error)) {
    // Not judged: with a node missing, the counters cannot be read.
    std::printf("\nRESULT: the run stopped (seed %" PRIu64 "): %s\nlogs in %s\n", c.seed,
                error.c_str(), c.log_dir.c_str());
    return 2;
  }
  const bool partition_ran = c.partition != "off" && main_phase.converged;
  if (c.partition != "off" && !main_phase.converged) {
    std::printf("partition phase skipped: the main phase did not end converged\n");
  }
  if (partition_ran) RunPartitionPhase(&cluster, etcd.get(), c, &partition_phase);

  // ---- the report ----
  const int64_t wall_minus_mono_end =
      std::chrono::duration_cast<std::chrono::microseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() -
      NowUs();
  members_watcher.reset();
  const double seconds = static_cast<double>(NowUs() - t0) / 1e6;
  std::printf("\n======== cluster fault test report (%s mode, seed %" PRIu64 ", %.1f s) ========\n",
              ModeName(c).c_str(), c.seed, seconds);
  const int64_t drift = wall_minus_mono_end - wall_minus_mono_start;
  if (std::llabs(drift) > c.margin_ms * 500) {
    std::printf("WARNING: the wall clock moved %" PRId64 " ms against the monotonic clock during "
                "the run; TTLs (wall clock) and holds (monotonic) may disagree by that much\n",
                drift / 1000);
  }
  PrintPhase(main_phase, true);
  // In strict mode etcd decides every lock, on whichever side of the cut
  // it is asked: an overlap in the partition fails the run whatever
  // EPHPM_FAULT_PARTITION says.
  const bool partition_fails = c.partition == "fail";
  const bool strict_cut_overlap = c.Strict() && partition_ran && !partition_phase.overlaps.empty();
  if (partition_ran) PrintPhase(partition_phase, partition_fails || strict_cut_overlap);
  if (strict_cut_overlap && !partition_fails) {
    std::printf("strict mode: overlapping holds in the partition phase fail the run\n");
  }
  const bool failed = !main_phase.Violations().empty() || strict_cut_overlap ||
                      (partition_ran && partition_fails && !partition_phase.Violations().empty());
  if (failed) {
    std::printf("\n---- the nodes at the end ----\n");
    for (size_t i = 0; i < cluster.size(); ++i) {
      std::printf("-- %s: INFO ephpm-cluster\n%s\n-- %s: log tail (%s)\n%s",
                  cluster.node(i).id.c_str(), cluster.Info(i).c_str(),
                  cluster.node(i).id.c_str(), cluster.node(i).log.c_str(),
                  Tail(cluster.node(i).log, 30).c_str());
    }
    if (etcd != nullptr) {
      for (size_t k = 0; k < etcd->size(); ++k) {
        std::printf("-- etcd %s: log %s\n", etcd->member(k).name.c_str(),
                    etcd->member(k).log.c_str());
      }
    }
  }
  std::printf("\nRESULT: %s (%s mode, seed %" PRIu64 "; logs in %s)\n", failed ? "FAIL" : "PASS",
              ModeName(c).c_str(), c.seed,
              failed || c.keep_logs ? c.log_dir.c_str() : "(removed)");
  *summary = SummaryLine(c, main_phase, partition_ran ? &partition_phase : nullptr, failed, seconds);
  std::printf("%s\n", summary->c_str());
  std::fflush(stdout);
  for (size_t i = 0; i < cluster.size(); ++i) cluster.Kill(i);
  return failed ? 1 : 0;
}

int Main(int argc, char** argv) {
  std::string faulty, ephpm, arbiter;
  bool check_shipped = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ephpm-faulty" && i + 1 < argc) {
      faulty = argv[++i];
    } else if (a == "--ephpm" && i + 1 < argc) {
      ephpm = argv[++i];
    } else if (a == "--arbiter" && i + 1 < argc) {
      arbiter = argv[++i];
    } else if (a == "--check-shipped") {
      check_shipped = true;
    } else {
      return Usage();
    }
  }
  InstallCleanupHandlers();
  if (check_shipped) return faulty.empty() || ephpm.empty() ? Usage() : CheckShipped(ephpm, faulty);
  if (faulty.empty()) return Usage();
  if (arbiter.empty()) {
    if (const char* s = std::getenv("EPHPM_FAULT_ARBITER"); s != nullptr) arbiter = s;
  }
  const bool both = arbiter == "both";

  Config c;
  // Both: the strict mode's defaults (its fault kinds) for both runs.
  c.arbiter = both ? "etcd" : arbiter;
  std::string error;
  if (!LoadConfig(&c, &error)) {
    std::fprintf(stderr, "cluster_fault_test: %s\n", error.c_str());
    return 2;
  }
  g_t0_us = NowUs();
  if (!both) {
    std::string summary;
    const int status = RunMode(c, faulty, &summary);
    if (status == 0 && !c.keep_logs) {
      const std::string rm = "rm -rf '" + c.log_dir + "'";
      if (std::system(rm.c_str()) != 0) std::printf("could not remove %s\n", c.log_dir.c_str());
    }
    return status;
  }
  // The same seed, fault kinds and schedule in strict mode, then in gossip
  // mode (where the etcd faults hit an etcd cluster nobody uses), and the
  // two SUMMARY lines together at the end.
  std::vector<std::string> summaries;
  int worst = 0;
  for (const char* mode : {"etcd", "gossip"}) {
    Config m = c;
    m.arbiter = mode;
    m.log_dir = c.log_dir + "/" + ModeName(m);
    ::mkdir(m.log_dir.c_str(), 0755);
    std::string summary;
    const int status = RunMode(m, faulty, &summary);
    worst = std::max(worst, status);
    summaries.push_back(summary.empty() ? "SUMMARY mode=" + ModeName(m) + " did not run (status " +
                                              std::to_string(status) + ")"
                                        : summary);
    std::printf("\n");
  }
  std::printf("======== both modes, seed %" PRIu64 " (%.1f s in all) ========\n", c.seed,
              static_cast<double>(NowUs() - g_t0_us) / 1e6);
  for (const auto& line : summaries) std::printf("%s\n", line.c_str());
  std::printf("RESULT: %s (logs in %s)\n", worst == 0 ? "PASS" : worst == 1 ? "FAIL" : "NOT RUN",
              worst != 0 || c.keep_logs ? c.log_dir.c_str() : "(removed)");
  std::fflush(stdout);
  if (worst == 0 && !c.keep_logs) {
    const std::string rm = "rm -rf '" + c.log_dir + "'";
    if (std::system(rm.c_str()) != 0) std::printf("could not remove %s\n", c.log_dir.c_str());
  }
  return worst;
}

}  // namespace
}  // namespace ephpm_fault

int main(int argc, char** argv) { return ephpm_fault::Main(argc, argv); }
