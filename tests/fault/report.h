// A phase of the fault run, reported: the faults the schedule injected, what
// the clients saw, the judges' verdicts on it (checker.h), and its printout.

#ifndef EPHPM_TESTS_FAULT_REPORT_H_
#define EPHPM_TESTS_FAULT_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checker.h"
#include "run.h"
#include "workload.h"

namespace ephpm_fault {

struct FaultRecord {
  std::map<std::string, int> by_kind;
  std::vector<std::string> not_applied;  // hook commands that failed
  std::vector<std::string> crashes;
};

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

// Runs the judges over the phase's histories and the counters read at its end.
void Judge(PhaseReport* p, const Config& c, const std::map<std::string, Observed>& observed);

// Prints the phase's summary; `fails`: whether its violations fail the run.
void PrintPhase(const PhaseReport& p, bool fails);

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_REPORT_H_
