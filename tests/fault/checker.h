// The fault test's judges: what the client threads saw, turned into
// verdicts.  Pure functions over recorded histories, so that they are
// unit-tested on hand-made histories (checker_test.cc): a bug here would hide
// exactly the violations the fault test exists to find.
//
// Times are microseconds on the driver's monotonic clock.  What the judges
// return points into the cycles given to them, which must outlive it.

#ifndef EPHPM_TESTS_FAULT_CHECKER_H_
#define EPHPM_TESTS_FAULT_CHECKER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ephpm_fault {

// ---- locks ----------------------------------------------------------------------

enum class Acquire {
  kGranted,     // +OK
  kRefused,     // nil: somebody holds it
  kUnknown,     // -CLUSTERDOWN, a timeout or a broken connection: may or may not have landed
  kUnexpected,  // any other reply (an error the test does not expect)
};

enum class Release {
  kNone,      // not granted, or (granted) never released
  kReleased,  // DELIFEQ answered 1
  kNotHeld,   // DELIFEQ answered 0: the key did not hold this token any more
  kUnknown,   // -CLUSTERDOWN, a timeout or a broken connection
  kUnexpected,
};

// One SET key token NX PX ttl, and when granted the DELIFEQ that ended it.
struct LockCycle {
  std::string key, token;
  std::string node;        // the node the client asked (it decided, or routed)
  int64_t ttl_ms = 0;
  int64_t sent_us = 0;     // SET NX about to be sent
  int64_t replied_us = 0;  // its reply arrived (or the client gave up)
  Acquire acquire = Acquire::kUnknown;
  int64_t release_sent_us = 0;     // DELIFEQ about to be sent
  int64_t release_replied_us = 0;  // its reply arrived (or the client gave up)
  Release release = Release::kNone;  // kNone on a granted cycle: never released
  std::string detail;  // the unexpected reply, or why the outcome is unknown
};

// The interval in which a granted cycle's client believed it held the lock:
// from the grant's arrival until the earlier of the release being sent (if
// it ever was) and the TTL (counted from the request being sent, since the owner cannot have
// started it earlier) less `margin_us`.  Empty (end <= start) when the grant
// arrived after that.
struct Hold {
  const LockCycle* cycle;
  int64_t start_us, end_us;
};

// The holds of the granted cycles (empty ones left out).
std::vector<Hold> HoldsOf(const std::vector<LockCycle>& cycles, int64_t margin_us);

// Two holds of one key whose intervals intersect: two clients held the lock
// at once.  `a` started first (or at the same time).
struct Overlap {
  Hold a, b;
  int64_t from_us, to_us;  // the intersection
};

// Every pair of holds of one key whose half-open intervals [start, end)
// intersect.
std::vector<Overlap> FindOverlaps(const std::vector<Hold>& holds);

// How long some lock of a key had two holders: the union of the overlaps'
// intersections, per key.
struct DoubleHolderWindow {
  int64_t total_us = 0;    // summed over keys
  int64_t longest_us = 0;  // the longest single stretch
  std::string longest_key;
  int64_t first_us = 0, last_us = 0;  // first start and last end of any stretch
};
DoubleHolderWindow WindowOf(const std::vector<Overlap>& overlaps);

// Granted cycles whose DELIFEQ answered 0 although its answer came before the
// TTL less `margin_us` had passed: the lock was gone before its TTL while its
// holder still held it, i.e. something other than its holder or its expiry
// removed or replaced it.  (A release sent after the TTL may find the key
// gone; that is not counted.)
std::vector<const LockCycle*> FindVanished(const std::vector<LockCycle>& cycles,
                                           int64_t margin_us);

struct LockTally {
  int64_t cycles = 0, granted = 0, holds = 0, empty_holds = 0, refused = 0, unknown = 0,
          unexpected = 0;
  int64_t released = 0, not_held = 0, release_unknown = 0, release_unexpected = 0;
  int64_t held_past_ttl = 0;  // holds that ended by TTL: the release came after it
};
LockTally Tally(const std::vector<LockCycle>& cycles, int64_t margin_us);

// ---- counters -------------------------------------------------------------------

// What the clients saw of one counter, only ever INCRed by 1 from absent.
struct CounterHistory {
  int64_t acked = 0;    // :n replies
  int64_t unknown = 0;  // -CLUSTERDOWN, timeouts, broken connections
  int64_t unexpected = 0;  // any other reply: a failure of its own, and may have landed
  std::vector<int64_t> replies;  // every n acknowledged
};

// The value read at the end on each node; nullopt when it could not be read
// (the node did not answer, or the value was not an integer).  An absent key
// reads as 0.
using Observed = std::map<std::string, std::optional<int64_t>>;

struct CounterVerdict {
  int64_t acked = 0, unknown = 0;
  Observed observed;
  bool agree = false;       // every node read, and the same value
  bool unreadable = false;  // some node could not be read
  // Increments acknowledged but missing on some node: acked - min(observed).
  int64_t lost = 0;
  // More on some node than every increment that may have landed:
  // max(observed) - (acked + unknown + unexpected).
  int64_t phantom = 0;
  // Values acknowledged to two increments: the counter went back (an
  // increment was applied to a state missing an acknowledged one).
  std::vector<int64_t> duplicate_replies;
  // Acknowledged values below 1 or above what every increment that may
  // have landed can reach.
  std::vector<int64_t> impossible_replies;

  bool Violated() const {
    return lost > 0 || phantom > 0 || !duplicate_replies.empty() || !impossible_replies.empty() ||
           !agree;
  }
};

CounterVerdict JudgeCounter(const CounterHistory& h, const Observed& observed);

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_CHECKER_H_
