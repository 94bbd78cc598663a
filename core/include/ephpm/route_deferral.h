// Waiting for a routed decision without holding a thread.
//
// A cluster routes some operations (set_nx, del_if_eq, incr_by, ...) to the
// key's owner, or, on the owner, waits for the other members to confirm the
// decision (Replicator's Route* hooks).  A PHP worker waits for that on its
// own thread.  The RESP server must not: an I/O thread serves many clients.
// So it runs such a command in two passes:
//
// 1. The command runs inside a RouteDeferral.  The first routed decision it
//    asks for is only started: the replicator takes the scope's Resume (so
//    deferred() becomes true) and answers "owner unreachable" at once;
//    every routed call after that in the scope answers the same without
//    doing anything.  The command then ends having changed nothing, and the
//    caller drops its reply and suspends the client.
// 2. Once the decision is settled, Resume runs (on any thread) with its
//    answer.  The caller runs the same command again inside a RouteReplay
//    holding that answer: the replicator gives it to the first routed call
//    of the same operation and key, instead of asking again.
//
// For that to be exact, a command run this way must do nothing with a side
// effect before its routed call, and must take the time only from
// Store::NowMs, which the scopes freeze: its first value in pass 1 is every
// value in pass 1 and in the replay, so that both passes take the same
// branches.  The replicator that defers promises that an answer of kind
// kRetry means nothing was applied (the replay then asks again, waiting).
//
// A caller may have several decisions in flight (a RouteChain): a RESP
// connection whose client pipelines INCRs sends each as it comes instead
// of one per round trip.  Each owner decides its part of a chain in the
// order sent, or refuses a request whose predecessor it did not decide
// (then every later one too), so that asking again, in order, keeps the
// order; decisions here are made in order as they come.  A later command
// joins the chain only if its routed call is placed in the view the chain
// was opened in (one key, one owner); any other routed call is held
// (Hold): the pass is abandoned as by Defer, and the caller runs the
// command again, from the start, once every decision of the chain is
// answered.
//
// Both scopes are per thread and nest (the innermost counts).

#ifndef EPHPM_ROUTE_DEFERRAL_H_
#define EPHPM_ROUTE_DEFERRAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/key.h"

namespace ephpm {

struct RouteAnswer {
  enum class Kind : uint8_t {
    kAnswered,  // `outcome` is the decision's outcome (the replicator's encoding)
    kUnknown,   // the owner could not be asked, or did not confirm: outcome unknown
    kRetry,     // refused before anything was applied: ask again
  };
  Kind kind = Kind::kUnknown;
  uint64_t ticket = 0;  // the deferring scope's (RouteDeferral's `ticket`)
  uint8_t op = 0;       // the replicator's operation code
  Key key;              // the routing key
  std::string outcome;  // with kAnswered
};

// The time a command reads through Store::NowMs while a scope is active.
class FrozenClock {
 public:
  // The innermost scope's clock on this thread, or null.
  static FrozenClock* Current();
  // `now()` of the first call, from then on.
  int64_t Read(const std::function<int64_t()>& now) {
    if (now_ms_ < 0) now_ms_ = now();
    return now_ms_;
  }
  int64_t value() const { return now_ms_; }

 protected:
  explicit FrozenClock(int64_t now_ms);
  ~FrozenClock();
  FrozenClock(const FrozenClock&) = delete;
  FrozenClock& operator=(const FrozenClock&) = delete;

 private:
  int64_t now_ms_;  // -1 until read
  FrozenClock* const outer_;
};

// The decisions a caller has in flight, in the order sent.  The caller
// keeps it between commands (reset to {} when nothing is in flight) and the
// replicator fills it in: open() once a decision opened a chain that later
// ones may join.  One link per owner: each owner decides its part in
// order; parts on different owners are decided independently (as a Redis
// Cluster client's pipeline to several nodes), but only within the view
// the chain was opened in, so one key's requests all go to one owner.
struct RouteChain {
  struct Link {
    std::string owner;  // the owner's address (decisions here need no link)
    uint64_t id = 0;    // the owner's number for this part
    uint64_t next = 0;  // the position the next request of this part takes
  };
  bool more = false;           // set by the caller: more requests are waiting
                               // behind this one (worth opening a chain)
  uint64_t view = 0;           // the replicator's view the chain was opened in; 0: none
  bool local_refused = false;  // a decision here was not started: no later one may be
  std::vector<Link> links;

  bool open() const { return view != 0; }
};

class RouteDeferral : public FrozenClock {
 public:
  // Shared, so that each decision a caller defers holds it without an
  // allocation of its own (a chain of 16 routed INCRs made 16 copies).
  using Resume = std::shared_ptr<const std::function<void(RouteAnswer answer)>>;

  // `resume` must outlive the scope (a decision deferred holds a reference
  // to it; a command that routes nothing takes none).  Never null.
  // With `chain` the caller may have decisions in flight: while it is
  // open a routed call joins it or is held; else it may open one (when
  // chain->more).  `ticket` is copied into the answer.
  explicit RouteDeferral(const Resume* resume, RouteChain* chain = nullptr, uint64_t ticket = 0);
  ~RouteDeferral();

  // The innermost deferral on this thread, or null.
  static RouteDeferral* Current();

  // True once a routed decision has been started in this scope, or held.
  bool deferred() const { return deferred_; }
  // True when the routed call was held (Hold) rather than started.
  bool held() const { return held_; }
  RouteChain* chain() const { return chain_; }
  uint64_t ticket() const { return ticket_; }
  // For the replicator, when it starts a decision instead of waiting: the
  // callback that takes its answer (exactly once).  REQUIRES: !deferred().
  Resume Defer();
  // For the replicator, when starting the decision it deferred threw (no
  // memory) before anything was started: it drops the Resume Defer gave
  // it, never to run, and the command goes on as if it had not deferred
  // (its error is its reply).  REQUIRES: deferred() && !held().
  void Undefer();
  // For the replicator, when the call can join no chain in flight: nothing
  // is started, and the caller runs the command again once the chain is
  // answered.  REQUIRES: !deferred().
  void Hold();

 private:
  const Resume* const resume_;
  RouteChain* const chain_;
  const uint64_t ticket_;
  bool deferred_ = false;
  bool held_ = false;
  RouteDeferral* const outer_;
};

class RouteReplay : public FrozenClock {
 public:
  // `now_ms`: the first pass's frozen time (FrozenClock::value()).
  RouteReplay(RouteAnswer answer, int64_t now_ms);
  ~RouteReplay();

  // The innermost replay on this thread, or null.
  static RouteReplay* Current();

  // Moves the answer to *out the first time it is asked for with the
  // operation and key it is for; false otherwise.
  bool Take(uint8_t op, std::string_view key, RouteAnswer* out);
  // Whether a routed call has taken the answer.
  bool taken() const { return taken_; }

 private:
  RouteAnswer answer_;
  bool taken_ = false;
  RouteReplay* const outer_;
};

}  // namespace ephpm

#endif  // EPHPM_ROUTE_DEFERRAL_H_
