// The crash test's judge (persist_crash.cc): what the writers sent and saw
// acknowledged before a kill -9, against what the restarted store holds.
// Pure functions over recorded histories, unit-tested on hand-made ones
// (persist_checker_test.cc): a judge that cannot fail would hide exactly the
// lost writes the test exists to find.
//
// Each key is written by one writer, one request at a time, so its
// requests form a chain of states: the state at the iteration's start
// (`base`), then the state each request leaves.  Every request but the last
// was acknowledged (the last may have been in flight at the kill).  A
// correct store, restarted, holds one of those states, and which one tells
// what was lost: acknowledged requests after it.  A state outside the chain
// is a value nobody wrote (or a wrong TTL, or a resurrected key with a
// value it no longer had).
//
// Times are microseconds on the driver's monotonic clock.

#ifndef EPHPM_TESTS_FAULT_PERSIST_CHECKER_H_
#define EPHPM_TESTS_FAULT_PERSIST_CHECKER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ephpm_fault {

// A key's state as a client sees it.  Strings and counters use `value`,
// hashes `fields` (a hash with no field does not exist).
struct KeyState {
  bool exists = false;
  std::string value;
  std::map<std::string, std::string> fields;
  bool has_ttl = false;
  // With has_ttl: the expiry lies in [expiry_lo_us, expiry_hi_us].  For a
  // request: from its sending plus the TTL to its acknowledgement (or the
  // kill) plus the TTL.  For a read: the PTTL added to the read's sending
  // and to its reply.
  int64_t expiry_lo_us = 0, expiry_hi_us = 0;

  std::string Describe() const;  // for reports: "absent", "\"w1-7\" ttl", "{f0=w1-8}"
};

// Whether `observed` can be `expected`: same existence, value or fields and
// TTL presence, and expiry intervals that meet once widened by slop_us (the
// store's clock is not the driver's).
bool SameState(const KeyState& expected, const KeyState& observed, int64_t slop_us);

struct KeyOp {
  std::string what;  // "SET s:1:3 w1-77", for reports
  KeyState after;    // the key's state once applied
  int64_t sent_us = 0;
  bool acked = false;
  int64_t acked_us = 0;  // when the reply arrived
};

struct KeyHistory {
  KeyState base;           // at the iteration's start
  std::vector<KeyOp> ops;  // in order
};

struct CrashVerdict {
  int64_t keys = 0;
  int64_t acked = 0;           // acknowledged requests
  int64_t unacked = 0;         // sent, no reply (in flight at the kill)
  int64_t lost = 0;            // acknowledged requests missing after the restart
  int64_t lost_keys = 0;       // keys with at least one
  int64_t unacked_landed = 0;  // unacknowledged requests found applied
  // The longest a lost write had been acknowledged before the kill: kill
  // minus the acknowledgement of the earliest lost request (0 if none).
  int64_t window_us = 0;
  std::string window_key;
  // Violations in any mode: how many, and the first few, one line each
  // (key, what it holds, what its chain allowed).
  int64_t never_written_count = 0;
  std::vector<std::string> never_written;
  int64_t unexpected_count = 0;  // present, never written by anybody
  std::vector<std::string> unexpected_keys;
  // A few of the lost requests, for the report.
  std::vector<std::string> lost_examples;
};

// Judges one restart.  `observed` holds every key of `histories` (an absent
// key as a KeyState without exists); `present` lists every key the store
// reported (KEYS *): one with no history is an unexpected key.
CrashVerdict JudgeCrash(const std::map<std::string, KeyHistory>& histories,
                        const std::map<std::string, KeyState>& observed,
                        const std::vector<std::string>& present, int64_t kill_us, int64_t slop_us);

// The verdict against a policy: with `always` nothing acknowledged may be
// lost; with `everysec` (always_mode false) every lost write must have been
// acknowledged at most window_limit_us before the kill.  Values never
// written and unexpected keys fail both.  *why gets one line per reason.
bool CrashViolated(const CrashVerdict& v, bool always_mode, int64_t window_limit_us,
                   std::string* why);

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_PERSIST_CHECKER_H_
