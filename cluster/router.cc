// Owner routing, both sides: asking the key's owner (Route*, Ask, Call)
// and deciding as the owner (Decide, Settle, OnRouteRequest, Judge).

#include <algorithm>
#include <chrono>
#include <thread>

#include "ephpm/clock.h"
#include "node_impl.h"
#include "owner.h"

namespace ephpm {
namespace cluster {

// The rule this file implements is written above the declarations, in
// node_impl.h ("owner arbitration").

constexpr int kMaxStatus = static_cast<int>(Status::kNanOrInfinity);

// A result handed from whichever thread produces it (an I/O thread, a
// timer) to a thread that waits for it.
template <typename T>
struct Handoff {
  Mutex mu;
  std::condition_variable cv;
  bool done ABSL_GUARDED_BY(mu) = false;
  bool ok ABSL_GUARDED_BY(mu) = false;
  T value ABSL_GUARDED_BY(mu){};
  void Put(bool good, T v) {
    MutexLock l(&mu);
    done = true;
    ok = good;
    value = std::move(v);
    cv.notify_all();
  }
  // True, with the result moved to *out, when a good one came within `ms`.
  bool Wait(int64_t ms, T* out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    MutexLock l(&mu);
    while (!done) {
      if (l.WaitUntil(&cv, deadline) == std::cv_status::timeout) break;
    }
    if (!done || !ok) return false;
    *out = std::move(value);
    return true;
  }
};

// Decodes an outcome byte of an enum whose values run 0..max.
template <typename E>
bool OutcomeFrom(std::string_view answer, int max, E* out) {
  Reader r(answer);
  uint8_t v = 0;
  if (!r.U8(&v) || v > max) return false;
  *out = static_cast<E>(v);
  return true;
}

// A route reply's status byte.  Refused means nothing was applied, so the
// asker may ask again; unconfirmed means the owner applied it but not
// every member confirmed it: the outcome is unknown, never to be retried.
constexpr uint8_t kRouteRefused = 0;
constexpr uint8_t kRouteDecided = 1;
constexpr uint8_t kRouteUnconfirmed = 2;

thread_local ClusterNode::Impl::Capture* ClusterNode::Impl::tl_capture = nullptr;

ClusterNode::Impl::Placement ClusterNode::Impl::Place(std::string_view key) const {
  Placement p;
  if (force_local_.load()) return p;  // the tests' TestForceLocalRouting
  p.view = std::atomic_load(&view_);
  // A cluster of one (no other member known, none to join): as a single
  // node, no confirmation from anyone.
  if (p.view->known <= 1 && o_.join.empty()) return p;
  if (p.view->alive.empty()) {
    p.kind = Placement::Kind::kHere;  // refused by CanDecide
    return p;
  }
  const AliveMember& owner = p.view->alive[OwnerIndex(key, p.view->alive.size())];
  if (owner.self) {
    p.kind = Placement::Kind::kHere;
  } else {
    p.kind = Placement::Kind::kRemote;
    p.address = owner.address;
  }
  return p;
}

bool ClusterNode::Impl::Ready() const { return CanDecide(*std::atomic_load(&view_)); }

std::string ClusterNode::Impl::OwnerOf(std::string_view key) const {
  auto view = std::atomic_load(&view_);
  if (view->alive.empty()) return o_.node_id;
  return view->alive[OwnerIndex(key, view->alive.size())].id;
}

bool ClusterNode::Impl::SameOwner(const std::vector<std::string_view>& keys) const {
  auto view = std::atomic_load(&view_);
  if (view->alive.size() <= 1 || keys.empty()) return true;
  const size_t first = OwnerIndex(keys[0], view->alive.size());
  for (std::string_view k : keys) {
    if (OwnerIndex(k, view->alive.size()) != first) return false;
  }
  return true;
}

// Publish, during a decision: sends the mutation to every other member
// the decision is made over, as a decision to confirm.  Called under the
// key's shard lock (so one key's decisions leave in the order they were
// applied); only queues frames.
void ClusterNode::Impl::SendDecision(const Capture& cap, const Mutation& m) noexcept {
  try {
    SendDecisionOrThrow(cap, m);
  } catch (const std::bad_alloc&) {
    // Not sent to every member: the decision fails (answered "unknown",
    // what it wrote forgotten, the standing lost).  Should even the key's
    // record fail, the write stays tentative here, never sent in a sync,
    // until a newer state of the key replaces it.
    MutexLock l(&cap.decision->mu);
    cap.decision->failed = true;
    try {
      cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
    } catch (const std::bad_alloc&) {
    }
  }
}

void ClusterNode::Impl::SendDecisionOrThrow(const Capture& cap, const Mutation& m) {
  if (standing_gen_.load(std::memory_order_acquire) != cap.decision->generation) {
    // This node lost its standing after the decision was let through, and
    // may have forgotten part of its copy (an unconfirmed decision) since:
    // the operation may have read that gap.  It is not sent; settling it
    // as failed forgets what it wrote.
    MutexLock l(&cap.decision->mu);
    cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
    cap.decision->failed = true;
    return;
  }
  Writer w;
  w.Str(o_.node_id);
  w.Str(cap.routing_key);
  w.I64(cap.deadline_ms);
  w.Mut(m);
  const std::string body = std::move(w.out());
  const int64_t timeout = std::max<int64_t>(1, cap.deadline_ms - WallMs());
  std::vector<const AliveMember*> to;
  for (const AliveMember& a : cap.view->alive) {
    if (!a.self) to.push_back(&a);
  }
  {
    MutexLock l(&cap.decision->mu);
    cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
    cap.decision->pending += static_cast<int>(to.size());
  }
  mutations_published_.fetch_add(1, std::memory_order_relaxed);
  for (const AliveMember* a : to) {
    // Read without the decision's lock: `epochs` is written once, before
    // the operation runs.
    auto e = cap.decision->epochs.find(a->id);
    Writer tail;
    tail.U64(e == cap.decision->epochs.end() ? 0 : e->second);
    tail.U64(start_incarnation_);
    rpc_.Request(a->address, MsgType::kDecision, body + tail.out(), timeout,
                 [this, d = cap.decision](bool ok, std::string_view reply) {
                   Settle(d, ok && ConfirmedIn(reply));
                 });
  }
}

// Reads a decision reply: the member's verdict and its record of this
// node (a record saying this node is dead makes it refute and lose its
// standing, through ApplyUpdate).
bool ClusterNode::Impl::ConfirmedIn(std::string_view reply) {
  Reader r(reply);
  std::string_view sender;
  uint8_t verdict = 0;
  MemberRecord me;
  if (!r.Str(&sender) || !r.U8(&verdict) || !r.Member(&me)) return false;
  if (me.id == o_.node_id && me.state != MemberState::kAlive) ApplyUpdate(me);
  return verdict == static_cast<uint8_t>(Verdict::kConfirmed);
}

// Counts one answer (or the own token); finishes the decision once every
// member confirmed, or at the first that did not.
void ClusterNode::Impl::Settle(const std::shared_ptr<Decision>& d, bool ok) {
  std::function<void(bool)> done;
  std::vector<std::pair<std::string, Stamp>> changed;
  bool failed = false;
  {
    MutexLock l(&d->mu);
    if (d->finished) return;
    if (!ok) d->failed = true;
    --d->pending;
    if (!d->done) return;  // the store operation has not returned yet
    if (!d->failed && d->pending > 0) return;
    d->finished = true;
    done = std::move(d->done);
    changed = std::move(d->changed);
    failed = d->failed;
  }
  if (failed) {
    decisions_unconfirmed_.fetch_add(1, std::memory_order_relaxed);
    // This copy may now differ from the members' (some may have refused
    // it, and a node that was held dead decided on a stale copy): drop
    // what the decision wrote, unless a later decision has replaced it,
    // so that their state wins whatever the stamps say, and catch up.
    // In this order: the standing goes first, so that a decision let
    // through before now that runs its operation after the forget (and
    // may read the gap it leaves) is dropped by SendDecision; the members
    // are asked for their state only after the forget, so that what they
    // send fills the gap.
    LoseStanding([&] {
      for (const auto& [key, stamp] : changed) store_->ForgetLocal(key, stamp);
    });
  } else if (!changed.empty()) {
    for (const auto& [key, stamp] : changed) store_->ConfirmLocal(key, stamp);
    decisions_confirmed_.fetch_add(1, std::memory_order_relaxed);
  }
  {
    MutexLock l(&mu_);
    --in_flight_;
    MaybeReadyLocked();
  }
  done(!failed);
}

// Runs `op` (a store _Local operation) as a decision over `view` and calls
// done(confirmed, outcome) once it is settled, on whichever thread settles
// it.  False, and nothing done, when this node may not decide (checked
// again here, under mu_, with the epochs the decision will carry: a state
// applied after this point makes the members refuse it).
template <typename Outcome, typename Op>
bool ClusterNode::Impl::Decide(std::string_view routing_key, int64_t deadline_ms,
                               std::shared_ptr<const View> view, Op op,
                               std::function<void(bool, Outcome)> done) {
  auto d = std::make_shared<Decision>();
  {
    MutexLock l(&mu_);
    if (!CanDecide(*view)) return false;
    ++in_flight_;
    d->epochs = applied_epoch_;
    d->generation = standing_gen_.load(std::memory_order_relaxed);
  }
  Capture cap{this, d, routing_key, deadline_ms, std::move(view)};
  Outcome out;
  {
    Capture* outer = tl_capture;
    tl_capture = &cap;
    out = op();
    tl_capture = outer;
  }
  {
    MutexLock l(&d->mu);
    // Standing lost while the operation ran: it may have read a gap left
    // by a forgotten decision even where it wrote nothing (a "no such key"
    // or a mismatch), so its outcome is unknown.
    if (standing_gen_.load(std::memory_order_acquire) != d->generation) d->failed = true;
    d->done = [done = std::move(done), out](bool ok) { done(ok, out); };
  }
  Settle(d, true);  // the own token
  return true;
}

// A decision for a key this node owns, asked on this node: made here and
// waited for on the calling thread.  REQUIRES: CanDecide(*view).
template <typename Outcome, typename Op>
Routed<Outcome> ClusterNode::Impl::DecideHere(std::string_view routing_key, int64_t deadline_ms,
                                              std::shared_ptr<const View> view, Op op) {
  auto h = std::make_shared<Handoff<Outcome>>();
  if (!Decide<Outcome>(routing_key, deadline_ms, std::move(view), op,
                       [h](bool ok, Outcome out) { h->Put(ok, std::move(out)); })) {
    routed_refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<Outcome>::Unreachable();  // nothing applied
  }
  // Every confirmation has its own timer; the margin covers a node whose
  // I/O threads are stopped.
  Outcome out{};
  if (!h->Wait(o_.request_timeout_ms + 1000, &out)) return Routed<Outcome>::Unreachable();
  return Routed<Outcome>::Owner(std::move(out));
}

// Sends a route request to the owner at `address` and waits for its
// answer (the body after the sender id and the "decided" byte) until
// `deadline_ms`.  kRefused: the owner refused it (past the deadline, not
// the owner in its view, not ready), so it was not applied; kUnreachable:
// no answer in time, or the connection broke first (outcome unknown).
ClusterNode::Impl::CallResult ClusterNode::Impl::Call(const std::string& address,
                                                      const std::string& body, int64_t deadline_ms,
                                                      std::string* answer) {
  auto h = std::make_shared<Handoff<std::string>>();
  routed_calls_.fetch_add(1, std::memory_order_relaxed);
  const int64_t timeout = std::max<int64_t>(1, deadline_ms - WallMs());
  rpc_.Request(address, MsgType::kRouteRequest, body, timeout,
               [h](bool ok, std::string_view b) { h->Put(ok, std::string(b)); });
  // The timer answers first; the margin covers a node being stopped.
  std::string reply;
  const bool got = h->Wait(timeout + 1000, &reply);
  Reader r(reply);
  std::string_view sender;
  uint8_t decided = 0;
  if (!got || !r.Str(&sender) || !r.U8(&decided)) {
    routed_unreachable_.fetch_add(1, std::memory_order_relaxed);
    return CallResult::kUnreachable;
  }
  if (decided == kRouteRefused) return CallResult::kRefused;
  if (decided != kRouteDecided) {
    routed_unreachable_.fetch_add(1, std::memory_order_relaxed);
    return CallResult::kUnreachable;  // decided, but not confirmed: unknown
  }
  answer->assign(reply, reply.size() - r.remaining(), std::string::npos);
  return CallResult::kAnswered;
}

// Waits until this node may decide (it is catching up, or a view change
// took its majority away) or `deadline_ms` passes.
bool ClusterNode::Impl::WaitUntilReady(int64_t deadline_ms) {
  MutexLock l(&mu_);
  for (;;) {
    if (CanDecide(*std::atomic_load(&view_))) return true;
    const int64_t left = deadline_ms - WallMs();
    if (left <= 0) return false;
    l.WaitUntil(&ready_cv_, std::chrono::steady_clock::now() +
                                std::chrono::milliseconds(std::min<int64_t>(left, 10)));
  }
}

// Where a decision ended up: on a single node (kPlain: the caller decides
// locally), here (kHere: *view is what to decide over), answered by the
// owner (kAnswered: *answer), or unknown.

// Finds the owner of `routing_key` and asks it, until `deadline_ms`: an
// owner that refuses (it is catching up, or the views are changing) has
// applied nothing and is asked again; one that does not answer leaves the
// outcome unknown.  This node waits for its own readiness the same way.
ClusterNode::Impl::Asked ClusterNode::Impl::Ask(std::string_view routing_key, RouteOp op,
                                                int64_t deadline_ms,
                                                const std::function<void(Writer*)>& args,
                                                std::shared_ptr<const View>* view,
                                                std::string* answer) {
  for (;;) {
    Placement p = Place(routing_key);
    if (p.kind == Placement::Kind::kPlain) return Asked::kPlain;
    if (p.kind == Placement::Kind::kHere) {
      if (CanDecide(*p.view)) {
        *view = std::move(p.view);
        return Asked::kHere;
      }
      // Without a majority there is nothing to wait for (a partition, or
      // members down: that takes failure detection, not a round trip).
      if (p.view->alive.size() * 2 <= p.view->known) break;
      if (!WaitUntilReady(deadline_ms - o_.max_clock_skew_ms)) break;
      continue;  // the owner may have changed meanwhile
    }
    Writer w;
    w.Str(o_.node_id);
    w.U8(static_cast<uint8_t>(op));
    w.I64(deadline_ms);
    args(&w);
    switch (Call(p.address, w.out(), deadline_ms, answer)) {
      case CallResult::kAnswered:
        return Asked::kAnswered;
      case CallResult::kUnreachable:
        return Asked::kUnknown;
      case CallResult::kRefused:
        break;
    }
    if (WallMs() + o_.max_clock_skew_ms + 10 >= deadline_ms) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  routed_refused_.fetch_add(1, std::memory_order_relaxed);
  return Asked::kUnknown;
}

// The outcome bytes on the wire are these enums' values: pinned here, so
// that a renumbered or reordered enum fails to build instead of changing
// what a byte means, and so that each `max` below is still the last value.
#define EPHPM_WIRE(E, v, n) static_assert(static_cast<int>(E::v) == (n), #E "::" #v " on the wire")
EPHPM_WIRE(SetNxOutcome, kInserted, 0);
EPHPM_WIRE(SetNxOutcome, kExists, 1);
EPHPM_WIRE(SetNxOutcome, kOutOfMemory, 2);
EPHPM_WIRE(SetNxOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(SetNxOutcome, kInvalidArgument, 4);
EPHPM_WIRE(DelIfEqOutcome, kDeleted, 0);
EPHPM_WIRE(DelIfEqOutcome, kNotMatched, 1);
EPHPM_WIRE(DelIfEqOutcome, kOwnerUnreachable, 2);
EPHPM_WIRE(DelIfEqOutcome, kWrongType, 3);
EPHPM_WIRE(DelIfEqOutcome, kInvalidArgument, 4);
EPHPM_WIRE(DelIfEqOutcome, kOutOfMemory, 5);
EPHPM_WIRE(SetIfEqOutcome, kWritten, 0);
EPHPM_WIRE(SetIfEqOutcome, kNotMatched, 1);
EPHPM_WIRE(SetIfEqOutcome, kOutOfMemory, 2);
EPHPM_WIRE(SetIfEqOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(SetIfEqOutcome, kWrongType, 4);
EPHPM_WIRE(SetIfEqOutcome, kInvalidArgument, 5);
EPHPM_WIRE(DelIfGuardEqOutcome, kDeleted, 0);
EPHPM_WIRE(DelIfGuardEqOutcome, kAbsent, 1);
EPHPM_WIRE(DelIfGuardEqOutcome, kNotMatched, 2);
EPHPM_WIRE(DelIfGuardEqOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(DelIfGuardEqOutcome, kWrongType, 4);
EPHPM_WIRE(DelIfGuardEqOutcome, kInvalidArgument, 5);
EPHPM_WIRE(DelIfGuardEqOutcome, kOutOfMemory, 6);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kApplied, 0);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kAbsent, 1);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kNotMatched, 2);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kWrongType, 4);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kInvalidArgument, 5);
EPHPM_WIRE(ExpireIfGuardEqOutcome, kOutOfMemory, 6);
EPHPM_WIRE(Status, kOk, 0);
EPHPM_WIRE(Status, kNotFound, 1);
EPHPM_WIRE(Status, kOutOfMemory, 2);
EPHPM_WIRE(Status, kInvalidArgument, 3);
EPHPM_WIRE(Status, kOwnerUnreachable, 4);
EPHPM_WIRE(Status, kWrongType, 5);
EPHPM_WIRE(Status, kNotInteger, 6);
EPHPM_WIRE(Status, kOverflow, 7);
EPHPM_WIRE(Status, kNotFloat, 8);
EPHPM_WIRE(Status, kNanOrInfinity, 9);
#undef EPHPM_WIRE

// Routes a decision whose answer is one outcome byte.
template <typename Outcome, typename Op>
Routed<Outcome> ClusterNode::Impl::RouteByte(std::string_view routing_key, RouteOp rop, Outcome max,
                                             const std::function<void(Writer*)>& args, Op local) {
  const int64_t deadline = WallMs() + o_.request_timeout_ms;
  std::shared_ptr<const View> view;
  std::string answer;
  Outcome out;
  switch (Ask(routing_key, rop, deadline, args, &view, &answer)) {
    case Asked::kPlain:
      return Routed<Outcome>::Local();
    case Asked::kHere:
      return DecideHere<Outcome>(routing_key, deadline, std::move(view), local);
    case Asked::kAnswered:
      if (OutcomeFrom(answer, static_cast<int>(max), &out)) return Routed<Outcome>::Owner(out);
      break;
    case Asked::kUnknown:
      break;
  }
  return Routed<Outcome>::Unreachable();
}

Routed<SetNxOutcome> ClusterNode::Impl::RouteSetNx(std::string_view key, std::string_view value,
                                                   int64_t ttl_ms) {
  return RouteByte<SetNxOutcome>(
      key, RouteOp::kSetNx, SetNxOutcome::kInvalidArgument,
      [&](Writer* w) {
        w->Str(key);
        w->Str(value);
        w->I64(ttl_ms);
      },
      [&] { return store_->SetNxLocal(key, value, ttl_ms); });
}

Routed<DelIfEqOutcome> ClusterNode::Impl::RouteDelIfEq(std::string_view key,
                                                       std::string_view token) {
  return RouteByte<DelIfEqOutcome>(
      key, RouteOp::kDelIfEq, DelIfEqOutcome::kOutOfMemory,
      [&](Writer* w) {
        w->Str(key);
        w->Str(token);
      },
      [&] { return store_->DelIfEqLocal(key, token); });
}

Routed<SetIfEqOutcome> ClusterNode::Impl::RouteSetIfEq(std::string_view guard_key,
                                                       std::string_view token, std::string_view key,
                                                       std::string_view value, int64_t ttl_ms) {
  return RouteByte<SetIfEqOutcome>(
      guard_key, RouteOp::kSetIfEq, SetIfEqOutcome::kInvalidArgument,
      [&](Writer* w) {
        w->Str(guard_key);
        w->Str(token);
        w->Str(key);
        w->Str(value);
        w->I64(ttl_ms);
      },
      [&] { return store_->SetIfEqLocal(guard_key, token, key, value, ttl_ms); });
}

Routed<DelIfGuardEqOutcome> ClusterNode::Impl::RouteDelIfGuardEq(std::string_view guard_key,
                                                                 std::string_view token,
                                                                 std::string_view key) {
  return RouteByte<DelIfGuardEqOutcome>(
      guard_key, RouteOp::kDelIfGuardEq, DelIfGuardEqOutcome::kOutOfMemory,
      [&](Writer* w) {
        w->Str(guard_key);
        w->Str(token);
        w->Str(key);
      },
      [&] { return store_->DelIfGuardEqLocal(guard_key, token, key); });
}

Routed<ExpireIfGuardEqOutcome> ClusterNode::Impl::RouteExpireIfGuardEq(std::string_view guard_key,
                                                                       std::string_view token,
                                                                       std::string_view key,
                                                                       int64_t ttl_ms) {
  return RouteByte<ExpireIfGuardEqOutcome>(
      guard_key, RouteOp::kExpireIfGuardEq, ExpireIfGuardEqOutcome::kOutOfMemory,
      [&](Writer* w) {
        w->Str(guard_key);
        w->Str(token);
        w->Str(key);
        w->I64(ttl_ms);
      },
      [&] { return store_->ExpireIfGuardEqLocal(guard_key, token, key, ttl_ms); });
}

Routed<IncrByReply> ClusterNode::Impl::RouteIncrBy(std::string_view key, int64_t delta) {
  const int64_t deadline = WallMs() + o_.request_timeout_ms;
  std::shared_ptr<const View> view;
  std::string answer;
  auto args = [&](Writer* w) {
    w->Str(key);
    w->I64(delta);
  };
  switch (Ask(key, RouteOp::kIncrBy, deadline, args, &view, &answer)) {
    case Asked::kPlain:
      return Routed<IncrByReply>::Local();
    case Asked::kHere:
      return DecideHere<IncrByReply>(key, deadline, std::move(view), [&] {
        IncrByReply r;
        r.status = store_->IncrByLocal(key, delta, &r.value);
        return r;
      });
    case Asked::kAnswered: {
      IncrByReply out;
      Reader r(answer);
      if (OutcomeFrom(answer, kMaxStatus, &out.status) && r.Skip(1) && r.I64(&out.value)) {
        return Routed<IncrByReply>::Owner(out);
      }
      break;
    }
    case Asked::kUnknown:
      break;
  }
  return Routed<IncrByReply>::Unreachable();
}

// A read on the key's owner.  Not a decision, but the owner must be one
// that may decide: a paused or catching-up owner could answer from a stale
// copy.
Routed<GetReply> ClusterNode::Impl::RouteGet(std::string_view key) {
  const int64_t deadline = WallMs() + o_.request_timeout_ms;
  std::shared_ptr<const View> view;
  std::string answer;
  switch (Ask(
      key, RouteOp::kGet, deadline, [&](Writer* w) { w->Str(key); }, &view, &answer)) {
    case Asked::kPlain:
    case Asked::kHere:
      return Routed<GetReply>::Local();
    case Asked::kAnswered: {
      GetReply out;
      std::string_view value;
      Reader r(answer);
      if (OutcomeFrom(answer, kMaxStatus, &out.status) && r.Skip(1) && r.Str(&value)) {
        out.value.assign(value.data(), value.size());
        return Routed<GetReply>::Owner(std::move(out));
      }
      break;
    }
    case Asked::kUnknown:
      break;
  }
  return Routed<GetReply>::Unreachable();
}

// The owner's side of a route request.  A request past its deadline, for
// a key this node does not own in its own view, or arriving while it may
// not decide, is refused (the asker answers "unknown outcome"); else the
// decision is made with the _local operation (never forwarding again, so
// a request cannot bounce between nodes whose views differ) and answered
// once confirmed.  False for a malformed request.
bool ClusterNode::Impl::OnRouteRequest(const std::shared_ptr<Conn>& c, const std::string& asker,
                                       uint64_t request_id, Reader* r) {
  uint8_t op = 0;
  int64_t deadline = 0;
  if (!r->U8(&op) || !r->I64(&deadline)) return false;
  std::string_view key, value, token, guard;
  int64_t ttl = 0, delta = 0;
  std::string_view routing;
  switch (static_cast<RouteOp>(op)) {
    case RouteOp::kSetNx:
      if (!r->Str(&key) || !r->Str(&value) || !r->I64(&ttl)) return false;
      routing = key;
      break;
    case RouteOp::kDelIfEq:
      if (!r->Str(&key) || !r->Str(&token)) return false;
      routing = key;
      break;
    case RouteOp::kSetIfEq:
      if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key) || !r->Str(&value) || !r->I64(&ttl)) {
        return false;
      }
      routing = guard;
      break;
    case RouteOp::kDelIfGuardEq:
      if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key)) return false;
      routing = guard;
      break;
    case RouteOp::kExpireIfGuardEq:
      if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key) || !r->I64(&ttl)) return false;
      routing = guard;
      break;
    case RouteOp::kIncrBy:
      if (!r->Str(&key) || !r->I64(&delta)) return false;
      routing = key;
      break;
    case RouteOp::kGet:
      if (!r->Str(&key)) return false;
      routing = key;
      break;
    default:
      return false;
  }
  auto answer = [this, c, asker, request_id](uint8_t status, const std::string& outcome) {
    Writer w;
    w.Str(o_.node_id);
    w.U8(status);
    w.out().append(outcome);
    Reply(c, asker, MsgType::kRouteReply, request_id, w.out());
  };
  auto refuse = [this, &answer] {
    routed_refused_.fetch_add(1, std::memory_order_relaxed);
    answer(kRouteRefused, "");
  };
  Placement p = Place(routing);
  if (WallMs() + o_.max_clock_skew_ms >= deadline || p.kind != Placement::Kind::kHere ||
      !CanDecide(*p.view)) {
    refuse();
    return true;
  }
  auto one_byte = [answer](bool ok, auto outcome) {
    answer(ok ? kRouteDecided : kRouteUnconfirmed, std::string(1, static_cast<char>(outcome)));
  };
  bool started = true;
  switch (static_cast<RouteOp>(op)) {
    case RouteOp::kSetNx:
      started = Decide<SetNxOutcome>(
          routing, deadline, std::move(p.view), [&] { return store_->SetNxLocal(key, value, ttl); },
          one_byte);
      break;
    case RouteOp::kDelIfEq:
      started = Decide<DelIfEqOutcome>(
          routing, deadline, std::move(p.view), [&] { return store_->DelIfEqLocal(key, token); },
          one_byte);
      break;
    case RouteOp::kSetIfEq:
      started = Decide<SetIfEqOutcome>(
          routing, deadline, std::move(p.view),
          [&] { return store_->SetIfEqLocal(guard, token, key, value, ttl); }, one_byte);
      break;
    case RouteOp::kDelIfGuardEq:
      started = Decide<DelIfGuardEqOutcome>(
          routing, deadline, std::move(p.view),
          [&] { return store_->DelIfGuardEqLocal(guard, token, key); }, one_byte);
      break;
    case RouteOp::kExpireIfGuardEq:
      started = Decide<ExpireIfGuardEqOutcome>(
          routing, deadline, std::move(p.view),
          [&] { return store_->ExpireIfGuardEqLocal(guard, token, key, ttl); }, one_byte);
      break;
    case RouteOp::kIncrBy:
      started = Decide<IncrByReply>(
          routing, deadline, std::move(p.view),
          [&] {
            IncrByReply rep;
            rep.status = store_->IncrByLocal(key, delta, &rep.value);
            return rep;
          },
          [answer](bool ok, IncrByReply rep) {
            Writer w;
            w.U8(static_cast<uint8_t>(rep.status));
            w.I64(rep.status == Status::kOk ? rep.value : 0);
            answer(ok ? kRouteDecided : kRouteUnconfirmed, w.out());
          });
      break;
    case RouteOp::kGet: {
      std::string v;
      const Status st = store_->Get(key, &v);
      Writer w;
      w.U8(static_cast<uint8_t>(st));
      w.Str(st == Status::kOk ? std::string_view(v) : std::string_view());
      answer(kRouteDecided, w.out());
      break;
    }
  }
  if (!started) {
    refuse();
  } else {
    routed_decided_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

// A member's side of a decision: confirms it (and applies it) only under
// conditions a-d above.
ClusterNode::Impl::Verdict ClusterNode::Impl::Judge(std::string_view decider,
                                                    std::string_view routing_key, int64_t deadline,
                                                    uint64_t epoch, uint64_t life) {
  if (store_ == nullptr) return Verdict::kNotServing;
  {
    MutexLock l(&mu_);
    const std::string id(decider);
    auto it = members_.find(id);
    if (it == members_.end() || it->second.rec.state == MemberState::kDead) {
      return Verdict::kSenderDead;
    }
    // Not yet applied the state sent when it came back, or decided before
    // it had (the decision carries the epoch it had applied then).
    if (catchup_.count(id) != 0) return Verdict::kCatchUp;
    // The check is for the process this node revived: one started since
    // (a later first incarnation) has no memory of that state, and its own
    // readiness rule made it fetch everyone's state when it started.
    if (auto e = sent_epoch_.find(id);
        e != sent_epoch_.end() && life <= e->second.incarnation && epoch < e->second.epoch) {
      return Verdict::kCatchUp;
    }
  }
  if (OwnerOf(routing_key) != decider) return Verdict::kNotOwner;
  if (WallMs() + o_.max_clock_skew_ms >= deadline) return Verdict::kLate;
  return Verdict::kConfirmed;
}

// This member's record of `id`; one with an empty id when it does not
// know it (which the asker ignores: it is not news about it).
MemberRecord ClusterNode::Impl::RecordOf(std::string_view id) const {
  MutexLock l(&mu_);
  auto it = members_.find(std::string(id));
  if (it == members_.end()) return MemberRecord{};
  return it->second.rec;
}

}  // namespace cluster
}  // namespace ephpm
