// What the whole fault run shares: its settings (EPHPM_FAULT_* from the
// environment), its start time and the timeline it prints.

#ifndef EPHPM_TESTS_FAULT_RUN_H_
#define EPHPM_TESTS_FAULT_RUN_H_

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "node.h"

namespace ephpm_fault {

extern int64_t g_t0_us;  // the run's start: every printed time is relative to it

// A time on the NowUs clock as seconds since the run's start ("1.234 s").
std::string At(int64_t us);
// Appends "=== fault driver: WHAT at <UTC time> (driver time <At>)" to a
// process's log, so that its own lines can be read against the timeline.
void MarkLog(const std::string& log_path, const char* what);
// A duration in microseconds as rounded milliseconds ("12 ms").
std::string Ms(int64_t us);
// One line of the timeline, stamped with the time since the run's start.
void Event(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void SleepMs(int64_t ms);

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

  // Who decides locks: "gossip" (the key's owner) or "etcd" (strict mode,
  // docs/CLUSTER.md): --arbiter or EPHPM_FAULT_ARBITER.  LoadConfig fills it
  // from the environment when the caller left it empty.
  std::string arbiter;
  bool Strict() const { return arbiter == "etcd"; }
  // The etcd cluster, started in strict mode and whenever the schedule has
  // etcd faults (in gossip mode it runs unused, so that the same seed gives
  // the same schedule and a similar load in both modes).
  std::string etcd_program = "/usr/bin/etcd";
  int64_t etcd_heartbeat_ms = 50, etcd_election_ms = 500;  // as tests/etcd/etcd-cluster.sh
  // The hosts' --etcd-timeout and --etcd-lease-ttl in strict mode.
  int64_t etcd_timeout_ms = 1000;
  int64_t etcd_lease_ttl_s = 2;
  bool EtcdFaults() const {
    return kinds.count("etcd-kill-restart") > 0 || kinds.count("etcd-kill-leader") > 0;
  }
  bool NeedEtcd() const { return Strict() || EtcdFaults(); }
  // The kinds as given (or defaulted), for the replay line.
  std::string kinds_text;

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

// The settings from the environment over the defaults; false with *error
// on a bad one.
bool LoadConfig(Config* c, std::string* error);

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_RUN_H_
