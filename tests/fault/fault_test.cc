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
//
// The pieces: run.h (the settings and the timeline), nodes.h (the node
// processes and the fault schedule), report.h (judging and printing a
// phase); this file picks the keys and runs the phases.

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
