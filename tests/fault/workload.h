// The fault test's clients: threads that run lock cycles and increments
// against random nodes and record what they saw, for the judges in
// checker.h.  Every outcome the client cannot know (-CLUSTERDOWN, a timeout,
// a broken connection) is recorded as unknown, never guessed.

#ifndef EPHPM_TESTS_FAULT_WORKLOAD_H_
#define EPHPM_TESTS_FAULT_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "checker.h"

namespace ephpm_fault {

// Microseconds on the monotonic clock (the one every recorded time uses).
int64_t NowUs();

struct NodeAddr {
  std::string id;
  uint16_t resp_port = 0;
};

struct WorkloadOptions {
  std::vector<NodeAddr> nodes;
  std::vector<std::string> lock_keys;
  std::vector<std::string> counter_keys;
  int lock_threads = 8;
  int incr_threads = 3;
  int64_t ttl_min_ms = 150, ttl_max_ms = 1500;
  // The share of holds kept past their TTL on purpose, so that expiry (and
  // a release that finds the lock gone) is exercised.
  double overhold_share = 0.15;
  int client_timeout_ms = 3000;  // a reply later than this is an unknown outcome
  int incr_pause_max_ms = 2;     // between one thread's increments
  uint64_t seed = 0;
  std::string token_prefix;  // tokens are unique across phases
};

// One acknowledged INCR, for the report on a counter that went back (which
// two requests, through which nodes, when).
struct IncrAck {
  int64_t value = 0;
  std::string node;  // the node asked
  int64_t sent_us = 0, replied_us = 0;
};

struct WorkloadResult {
  std::vector<LockCycle> cycles;
  std::map<std::string, CounterHistory> counters;
  int64_t connect_failures = 0;  // nothing was sent: not an outcome
  std::vector<std::string> unexpected;  // the first few unexpected replies, with context
  // -CLUSTERDOWN answers (a share of the unknown outcomes), by command.
  int64_t clusterdown_set = 0, clusterdown_delifeq = 0, clusterdown_incr = 0;
  int64_t Clusterdown() const { return clusterdown_set + clusterdown_delifeq + clusterdown_incr; }
  std::map<std::string, std::vector<IncrAck>> incr_acks;  // per counter
};

class Workload {
 public:
  explicit Workload(WorkloadOptions o);
  ~Workload();  // stops

  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  void Start();
  // Asks every thread to finish its cycle, joins them and merges what they
  // recorded.  Call once.
  WorkloadResult Stop();

  // Live figures for progress lines.
  int64_t granted() const { return granted_.load(); }
  int64_t acked() const { return acked_.load(); }
  int64_t unknown() const { return unknown_.load(); }

 private:
  struct PerThread {
    std::vector<LockCycle> cycles;
    std::map<std::string, CounterHistory> counters;
    int64_t connect_failures = 0;
    std::vector<std::string> unexpected;
    int64_t clusterdown_set = 0, clusterdown_delifeq = 0, clusterdown_incr = 0;
    std::map<std::string, std::vector<IncrAck>> incr_acks;
  };
  class Picker;

  void LockLoop(int index, PerThread* out);
  void IncrLoop(int index, PerThread* out);

  const WorkloadOptions o_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> granted_{0}, acked_{0}, unknown_{0};
  std::vector<PerThread> results_;
  std::vector<std::thread> threads_;
};

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_WORKLOAD_H_
