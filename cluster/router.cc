// Owner routing, both sides: asking the key's owner (Route*, Ask, Call)
// and deciding as the owner (Decide, Settle, OnRouteRequest, Judge).

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "ephpm/clock.h"
#include "ephpm/send_cork.h"
#include "node_impl.h"
#include "owner.h"
#include "route_codec.h"

namespace ephpm {
namespace cluster {

// The rule this file implements is written above the declarations, in
// node_impl.h ("owner arbitration").

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
    SendCork::Release();  // the request or decision waited for may be held by it
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

// A route reply's status byte.  Refused means nothing was applied, so the
// asker may ask again; unconfirmed means the owner applied it but not
// every member confirmed it: the outcome is unknown, never to be retried.
constexpr uint8_t kRouteRefused = 0;
constexpr uint8_t kRouteDecided = 1;
constexpr uint8_t kRouteUnconfirmed = 2;
// Never on the wire: what the asker hands a request of a batch that could
// not be sent (nothing applied: asked again), or that got no answer, or a
// malformed one (outcome unknown).
constexpr uint8_t kRouteNotSent = 0xfe;
constexpr uint8_t kRouteNoAnswer = 0xff;

// A status byte as read: one the wire does not define is no answer.
constexpr uint8_t WireStatus(uint8_t status) {
  return status <= kRouteUnconfirmed ? status : kRouteNoAnswer;
}

ClusterNode::Impl::Placement ClusterNode::Impl::Place(std::string_view key) const {
  Placement p;
  if (force_local_.load(std::memory_order_relaxed)) return p;  // the tests' TestForceLocalRouting
  p.view = std::atomic_load(&view_);
  // A cluster of one (no other member known, none to join): as a single
  // node, no confirmation from anyone.
  // (Never in strict mode: there a lone node's lease decides too.)
  if (!etcd_ && p.view->known <= 1 && o_.join.empty()) return p;
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

std::string ClusterNode::Impl::RemoteOwner(std::string_view key) const {
  const Placement p = Place(key);
  return p.kind == Placement::Kind::kRemote ? p.address : std::string();
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
      cap.decision->changed.emplace_back(Key(m.key), m.stamp);
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
    cap.decision->changed.emplace_back(Key(m.key), m.stamp);
    cap.decision->failed = true;
    return;
  }
  // The decision's fields, without the sender (FlushDecisions puts it
  // before one or several of them), in a buffer this thread keeps for the
  // next decision (the batches copy it).
  static thread_local std::string entry_room;
  Writer w(std::move(entry_room));
  struct GiveBack {  // also when a throw leaves
    Writer* w;
    ~GiveBack() { entry_room = std::move(w->out()); }
  } give_back{&w};
  if (w.out().capacity() < Writer::kTypicalBody) w.out().reserve(Writer::kTypicalBody);
  w.Str(cap.routing_key);
  w.I64(cap.deadline_ms);
  w.Mut(m);
  const std::string& entry = w.out();
  absl::InlinedVector<const AliveMember*, 4> to;
  for (const AliveMember& a : etcd_ ? cap.view->confirm : cap.view->alive) {
    if (!a.self) to.push_back(&a);
  }
  {
    MutexLock l(&cap.decision->mu);
    cap.decision->changed.emplace_back(Key(m.key), m.stamp);
    cap.decision->pending += static_cast<int>(to.size());
  }
  mutations_published_.fetch_add(1, std::memory_order_relaxed);
  for (const AliveMember* a : to) {
    // Read without the decision's lock: `epochs` is written once, before
    // the operation runs.
    auto e = cap.decision->epochs.find(a->id);
    char tail[16];  // two U64s, without a string
    EncodeU64(e == cap.decision->epochs.end() ? 0 : e->second, tail);
    EncodeU64(start_incarnation_, tail + 8);
    const std::shared_ptr<DecisionBatch> b = BatchFor(a->address);
    {
      MutexLock l(&b->mu);
      const size_t at = b->entries.size();
      b->decisions.push_back(cap.decision);
      try {
        b->entries.append(entry).append(tail, sizeof tail);
      } catch (...) {
        b->entries.resize(at);
        b->decisions.pop_back();
        throw;
      }
      if (b->deadline_ms == 0 || cap.deadline_ms < b->deadline_ms) b->deadline_ms = cap.deadline_ms;
    }
    if (SendCork::Open()) {
      try {
        SendCork::Hold(b);
        continue;
      } catch (const std::bad_alloc&) {
      }
    }
    // Under the key's shard lock: what cannot be sent is put back and the
    // throw reaches SendDecision (which fails this decision).
    FlushDecisions(b.get(), /*settle_unsent=*/false);
  }
}

std::shared_ptr<ClusterNode::Impl::DecisionBatch> ClusterNode::Impl::BatchFor(
    const std::string& address) {
  MutexLock l(&batches_mu_);
  std::shared_ptr<DecisionBatch>& b = batches_[address];
  if (b == nullptr) {
    b = std::make_shared<DecisionBatch>();
    b->node = this;
    b->address = address;
  }
  return b;
}

// Sends what the batch holds: one decision as kDecision (as an uncorked
// sender always did), several as one kDecisionBatch.  When that throws (no
// memory): with `settle_unsent` (a cork's release, no store lock held) each
// decision fails as if the member had not answered; without (under a shard
// lock, where settling a failure would take store locks), the batch is put
// back as it was and the throw goes on.
void ClusterNode::Impl::FlushDecisions(DecisionBatch* b, bool settle_unsent) {
  std::vector<std::shared_ptr<Decision>> unsent;
  {
    MutexLock l(&b->mu);
    if (b->decisions.empty()) return;
    std::vector<std::shared_ptr<Decision>> ds;
    ds.swap(b->decisions);
    const int64_t deadline = b->deadline_ms;
    const int64_t timeout = std::max<int64_t>(1, deadline - WallMs());
    b->deadline_ms = 0;
    // The frame copies the entries and the callback the decisions, so the
    // batch keeps both buffers for the next pass (a pass of 16 INCRs per
    // member grew them from empty in 5 allocations each).
    const std::string_view entries = b->entries;
    try {
      Writer head;
      head.Str(o_.node_id);
      if (ds.size() == 1) {
        rpc_.Request(
            b->address, MsgType::kDecision, head.out(), timeout,
            [this, d = ds.front()](bool ok, std::string_view reply) {
              Settle(d, ok && ConfirmedIn(reply));
            },
            entries);
      } else {
        head.U32(static_cast<uint32_t>(ds.size()));
        decision_batches_.fetch_add(1, std::memory_order_relaxed);
        // (Moved into the callback only once it is made: a throw leaves ds.)
        auto settle = [this, batch = ds](bool ok, std::string_view reply) {
          SettleBatch(batch, ok, reply);
        };
        rpc_.Request(b->address, MsgType::kDecisionBatch, head.out(), timeout, std::move(settle),
                     entries);
      }
    } catch (...) {
      if (!settle_unsent) {
        b->decisions.swap(ds);  // nothing was appended meanwhile: b->mu is held
        b->deadline_ms = deadline;
        throw;
      }
      b->entries.clear();
      unsent.swap(ds);
    }
    if (unsent.empty()) {
      // Sent: the callback holds its own copy of the decisions.
      b->entries.clear();
      ds.clear();
      b->decisions.swap(ds);
    }
  }
  for (const auto& d : unsent) Settle(d, false);
}

// A batch's reply: the member's record of this node (as ConfirmedIn), then
// one verdict per decision, in the order sent.  Anything else, or no reply,
// fails every one of them.
void ClusterNode::Impl::SettleBatch(const std::vector<std::shared_ptr<Decision>>& ds, bool ok,
                                    std::string_view reply) {
  Reader r(reply);
  std::string_view sender;
  MemberRecord me;
  uint32_t n = 0;
  if (!ok || !r.Str(&sender) || !r.Member(&me) || !r.U32(&n) || n != ds.size()) {
    for (const auto& d : ds) Settle(d, false);
    return;
  }
  if (me.id == o_.node_id && me.state != MemberState::kAlive) ApplyUpdate(me);
  for (const auto& d : ds) {
    uint8_t verdict = 0;
    Settle(d, r.U8(&verdict) && verdict == static_cast<uint8_t>(Verdict::kConfirmed));
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
  decltype(Decision::changed) changed;
  bool failed = false;
  {
    MutexLock l(&d->mu);
    if (d->finished) return;
    if (!ok) d->failed = true;
    --d->pending;
    if (!d->released) return;  // the store operation has not returned yet
    if (!d->failed && d->pending > 0) return;
    d->finished = true;
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
  d->Finish(!failed);
}

// Runs `op` (a store _Local operation) as a decision over `view` and calls
// done(confirmed, outcome) once it is settled, on whichever thread settles
// it.  False, and nothing done, when this node may not decide (checked
// again here, under mu_, with the epochs the decision will carry: a state
// applied after this point makes the members refuse it).
template <typename Outcome, typename Op, typename Done>
bool ClusterNode::Impl::Decide(std::string_view routing_key, int64_t deadline_ms,
                               std::shared_ptr<const View> view, Op op, Done done) {
  // What may fail for lack of memory is done before the operation runs, so
  // that a throw leaves nothing applied and nothing counted: the decision
  // with the callback that will carry the outcome, and its copy of the
  // epochs.
  struct DecisionOf final : Decision {
    explicit DecisionOf(Done d) : done(std::move(d)) {}
    void Finish(bool ok) override {
      // Moved out, so that what the callback holds goes once it has run,
      // not when the last member's answer lets go of the decision.
      Done once = std::move(done);
      once(ok, std::move(out));
    }
    Done done;
    Outcome out{};
  };
  auto d = std::make_shared<DecisionOf>(std::move(done));
  {
    MutexLock l(&mu_);
    if (!CanDecide(*view)) return false;
    d->epochs = applied_epoch_;
    d->generation = standing_gen_.load(std::memory_order_relaxed);
    ++in_flight_;
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
    d->out = std::move(out);
    d->released = true;
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
  SendCork::Release();
  MutexLock l(&mu_);
  for (;;) {
    if (CanDecide(*std::atomic_load(&view_))) return true;
    const int64_t left = deadline_ms - WallMs();
    if (left <= 0) return false;
    l.WaitUntil(&ready_cv_, std::chrono::steady_clock::now() +
                                std::chrono::milliseconds(std::min<int64_t>(left, 10)));
  }
}

ClusterNode::Impl::Asked ClusterNode::Impl::Ask(RouteOp op, const RouteArgs& args,
                                                int64_t deadline_ms,
                                                std::shared_ptr<const View>* view,
                                                std::string* answer) {
  const std::string_view routing_key = RoutingKey(op, args);
  for (;;) {
    Placement p = Place(routing_key);
    if (p.kind == Placement::Kind::kPlain) return Asked::kPlain;
    if (p.kind == Placement::Kind::kHere) {
      if (CanDecide(*p.view)) {
        *view = std::move(p.view);
        return Asked::kHere;
      }
      // Without a majority there is nothing to wait for (a partition, or
      // members down: that takes failure detection, not a round trip); nor
      // in strict mode without a live lease (renewing it takes longer).
      if (p.view->alive.size() * 2 <= p.view->known) break;
      if (etcd_ && !etcd_->Serving()) break;
      if (!WaitUntilReady(deadline_ms - o_.max_clock_skew_ms)) break;
      continue;  // the owner may have changed meanwhile
    }
    switch (Call(p.address, RouteRequestBody(op, args, deadline_ms, *p.view, 0, 0), deadline_ms,
                 answer)) {
      case CallResult::kAnswered:
        return Asked::kAnswered;
      case CallResult::kUnreachable:
        return Asked::kUnknown;
      case CallResult::kRefused:
        break;
    }
    if (WallMs() + o_.max_clock_skew_ms + 10 >= deadline_ms) break;
    if (etcd_) {
      // The owner may have another member list: read etcd's now (bounded by
      // what is left of the request's time).
      etcd_->RefreshMembers(SteadyMs() + std::max<int64_t>(1, deadline_ms - WallMs()));
    }
    SendCork::Release();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  routed_refused_.fetch_add(1, std::memory_order_relaxed);
  return Asked::kUnknown;
}

std::string ClusterNode::Impl::RouteRequestBody(RouteOp op, const RouteArgs& args,
                                                int64_t deadline_ms, const View& view,
                                                uint64_t chain, uint64_t position) const {
  Writer w(Writer::kTypicalBody);
  w.Str(o_.node_id);
  RouteRequestFields(op, args, deadline_ms, view, chain, position, &w);
  return std::move(w.out());
}

void ClusterNode::Impl::RouteRequestFields(RouteOp op, const RouteArgs& args, int64_t deadline_ms,
                                           const View& view, uint64_t chain, uint64_t position,
                                           Writer* w) const {
  w->U8(static_cast<uint8_t>(op));
  w->I64(deadline_ms);
  EncodeArgs(op, args, w);
  if (etcd_) {
    // Strict mode: the member list this node computed the owner over.
    w->U64(view.fingerprint);
    w->I64(view.revision);
  }
  w->U64(chain);
  w->U64(position);
}

std::shared_ptr<ClusterNode::Impl::RouteBatch> ClusterNode::Impl::RouteBatchFor(
    const std::string& address) {
  MutexLock l(&batches_mu_);
  std::shared_ptr<RouteBatch>& b = route_batches_[address];
  if (b == nullptr) {
    b = std::make_shared<RouteBatch>();
    b->node = this;
    b->address = address;
  }
  return b;
}

void ClusterNode::Impl::QueueRoute(const std::string& address, RouteOp op, const RouteArgs& args,
                                   int64_t deadline_ms, const View& view, uint64_t chain,
                                   uint64_t position, StartedRoute& r) {
  net_->Queueing(address, MsgType::kRouteRequest);
  const std::shared_ptr<RouteBatch> b = RouteBatchFor(address);
  {
    MutexLock l(&b->mu);
    // Written in place, behind a length patched in after (no copy of the
    // fields through a buffer of their own).
    Writer w;
    w.out().swap(b->entries);
    const size_t at = w.out().size();
    try {
      w.U32(0);
      RouteRequestFields(op, args, deadline_ms, view, chain, position, &w);
      EncodeU32(static_cast<uint32_t>(w.out().size() - at - 4), w.out().data() + at);
      b->started.push_back(std::move(r));
    } catch (...) {
      w.out().resize(at);
      w.out().swap(b->entries);
      throw;
    }
    w.out().swap(b->entries);
    if (b->deadline_ms == 0 || deadline_ms < b->deadline_ms) b->deadline_ms = deadline_ms;
  }
  try {
    SendCork::Hold(b);
  } catch (const std::bad_alloc&) {
    // Not noted: it goes now (with whatever else the batch held).
    FlushRoutes(b.get());
  }
}

// One request as kRouteRequest would carry it costs a frame, an RPC entry
// and an answer frame each; a pass's requests to one owner share them.
void ClusterNode::Impl::FlushRoutes(RouteBatch* b) noexcept {
  std::vector<StartedRoute> unsent;
  {
    MutexLock l(&b->mu);
    if (b->started.empty()) return;
    const int64_t timeout = std::max<int64_t>(1, b->deadline_ms - WallMs());
    b->deadline_ms = 0;
    std::shared_ptr<std::vector<StartedRoute>> started;
    try {
      // Moved over, so that the batch keeps its vector's room for the next
      // pass (a pass of five regrew it from empty in three allocations).
      started = std::make_shared<std::vector<StartedRoute>>();
      started->reserve(b->started.size());
      for (StartedRoute& r : b->started) started->push_back(std::move(r));
      b->started.clear();
      Writer head;
      head.Str(o_.node_id);
      head.U32(static_cast<uint32_t>(started->size()));
      // The frame copies the entries: the batch keeps its buffer.
      rpc_.Request(
          b->address, MsgType::kRouteBatch, head.out(), timeout,
          [this, started](bool ok, std::string_view reply) {
            AnswerRoutes(started.get(), ok, reply);
          },
          b->entries);
      route_batches_sent_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
      // Not sent (Request throws before anything is queued): answered
      // below, outside the batch's lock, as the callbacks reach the
      // session.
      unsent.swap(b->started.empty() ? *started : b->started);
    }
    b->entries.clear();
  }
  for (auto& r : unsent) FinishRoute(r, kRouteNotSent, {});
}

void ClusterNode::Impl::AnswerRoutes(std::vector<StartedRoute>* started, bool ok,
                                     std::string_view reply) {
  // Checked whole first: a reply cut anywhere answers none of them.
  Reader r(reply);
  std::string_view sender;
  uint32_t n = 0;
  bool whole = ok && r.Str(&sender) && r.U32(&n) && n == started->size();
  const Reader answers = r;
  for (uint32_t i = 0; whole && i < n; ++i) {
    uint8_t status = 0;
    std::string_view outcome;
    whole = r.U8(&status) && r.Str(&outcome);
  }
  r = answers;
  for (auto& s : *started) {
    uint8_t status = kRouteNoAnswer;
    std::string_view outcome;
    if (whole) {
      r.U8(&status);
      r.Str(&outcome);
      status = WireStatus(status);
    }
    FinishRoute(s, status, outcome);
  }
}

void ClusterNode::Impl::FinishRoute(StartedRoute& r, uint8_t status, std::string_view outcome) {
  RouteAnswer a = std::move(r.base);
  if (status == kRouteRefused || status == kRouteNotSent) {
    a.kind = RouteAnswer::Kind::kRetry;  // nothing applied
  } else if (status == kRouteDecided) {
    a.kind = RouteAnswer::Kind::kAnswered;
    a.outcome.assign(outcome);
  } else {
    routed_unreachable_.fetch_add(1, std::memory_order_relaxed);
  }
  (*r.resume)(std::move(a));
}

uint64_t ClusterNode::Impl::NewChainId() {
  // Unique among the chains of every asker the owner hears from: a random
  // base per process, then a count (0 is "no chain").
  uint64_t id = chain_base_ + chain_count_.fetch_add(1, std::memory_order_relaxed);
  if (id == 0) id = chain_base_ + chain_count_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

bool ClusterNode::Impl::ChainAdmits(uint64_t chain, uint64_t position) {
  if (chain == 0 || position == 0) return true;
  MutexLock l(&chain_mu_);
  auto it = chains_.find(chain);
  return it != chains_.end() && it->second.next == position;
}

void ClusterNode::Impl::ChainDecided(uint64_t chain, uint64_t position, int64_t deadline) {
  if (chain == 0) return;
  MutexLock l(&chain_mu_);
  // A chain is forgotten once its last request's deadline has passed: a
  // later one of it would be refused as late anyway.  Swept when the map
  // has grown, so that the cost stays per request.
  if (position == 0 && chains_.size() >= chains_sweep_at_) {
    const int64_t now = WallMs();
    for (auto it = chains_.begin(); it != chains_.end();) {
      it = it->second.deadline < now ? chains_.erase(it) : std::next(it);
    }
    chains_sweep_at_ = std::max<size_t>(1024, 2 * chains_.size());
  }
  Chain& c = chains_[chain];
  c.next = position + 1;
  c.deadline = std::max(c.deadline, deadline);
}

template <RouteOp kOp>
bool ClusterNode::Impl::StartRoute(const RouteArgs& args, RouteDeferral* deferral) {
  using Outcome = typename RoutedOp<kOp>::Outcome;
  const std::string_view routing_key = RoutingKey(kOp, args);
  Placement p = Place(routing_key);
  RouteChain* const chain = deferral->chain();
  uint64_t opens = 0;  // the view of the chain this call opens, if it does
  if (chain != nullptr && chain->open()) {
    // Decisions are in flight: this one joins them if it is decided in the
    // view they were placed in (so that a key they touched has the same
    // owner), by another owner or here; else it waits for them (the caller
    // runs it again).  Here, not after a decision here was refused: that
    // one is asked again later, and must not be overtaken.
    const bool same_view = p.view != nullptr && p.view->generation + 1 == chain->view;
    const bool joins = same_view && (p.kind == Placement::Kind::kRemote ||
                                     (p.kind == Placement::Kind::kHere && !IsRead(kOp) &&
                                      !chain->local_refused && CanDecide(*p.view)));
    if (!joins) {
      deferral->Hold();
      return true;
    }
  } else {
    if (p.kind == Placement::Kind::kPlain) return false;
    if (p.kind == Placement::Kind::kHere && (IsRead(kOp) || !CanDecide(*p.view))) return false;
    // More requests wait behind this one: those decided in this view go
    // out at once, each owner's in this order.
    if (chain != nullptr && chain->more && p.view != nullptr) opens = p.view->generation + 1;
  }
  const int64_t deadline = WallMs() + o_.request_timeout_ms;
  RouteAnswer base;
  base.ticket = deferral->ticket();
  base.op = static_cast<uint8_t>(kOp);
  base.key.assign(routing_key);
  RouteDeferral::Resume resume = deferral->Defer();
  // From here the answer goes to `resume` exactly once, unless starting the
  // decision throws (no memory) before anything is applied or sent: then
  // the deferral is undone and the chain left as it was, and the throw goes
  // on (the command answers its out-of-memory error, or, joining a chain,
  // is held and runs again once the chain is answered).
  bool ran = false;  // the operation ran here: its answer goes to `resume`
  try {
    if (opens != 0) chain->view = opens;
    if (p.kind == Placement::Kind::kHere) {
      // Decided now, on this thread, as DecideHere does; only the
      // confirmations are waited for elsewhere.
      const bool started = Decide<Outcome>(
          routing_key, deadline, std::move(p.view),
          [&] {
            ran = true;
            return RoutedOp<kOp>::Run(store_, args);
          },
          // Each callback here runs once: it moves out what it holds.
          [resume, base](bool ok, Outcome out) mutable {
            RouteAnswer a = std::move(base);
            if (ok) {
              Writer w;
              OutcomeCodec<Outcome>::Encode(out, &w);
              a.kind = RouteAnswer::Kind::kAnswered;
              a.outcome = std::move(w.out());
            }
            (*resume)(std::move(a));
          });
      if (!started) {
        // Readiness lost since the check above; nothing applied.  The
        // replay asks again the waiting way.
        if (chain != nullptr) chain->local_refused = true;
        RouteAnswer a = std::move(base);
        a.kind = RouteAnswer::Kind::kRetry;
        (*resume)(std::move(a));
      }
      return true;
    }
    // An owner elsewhere: as Call, with the reply read where it arrives.
    // In a chain, as the next request of this owner's part (the position
    // is taken once the request is on its way: one that was not sent
    // leaves no gap the owner would refuse the next ones for).
    RouteChain::Link* link = nullptr;
    if (chain != nullptr && chain->open()) {
      auto it = std::find_if(chain->links.begin(), chain->links.end(),
                             [&](const RouteChain::Link& l) { return l.owner == p.address; });
      if (it == chain->links.end()) {
        it = chain->links.insert(chain->links.end(), RouteChain::Link{p.address, NewChainId(), 0});
      }
      link = &*it;
    }
    StartedRoute started{std::move(resume), std::move(base)};
    const uint64_t chain_id = link ? link->id : 0;
    const uint64_t position = link ? link->next : 0;
    if (SendCork::Open()) {
      // With the pass's other requests to this owner, in one frame.
      QueueRoute(p.address, kOp, args, deadline, *p.view, chain_id, position, started);
    } else {
      Writer w(Writer::kTypicalBody);
      w.Str(o_.node_id);
      RouteRequestFields(kOp, args, deadline, *p.view, chain_id, position, &w);
      const int64_t timeout = std::max<int64_t>(1, deadline - WallMs());
      rpc_.Request(p.address, MsgType::kRouteRequest, w.out(), timeout,
                   [this, started = std::move(started)](bool ok, std::string_view reply) mutable {
                     Reader r(reply);
                     std::string_view sender;
                     uint8_t status = kRouteNoAnswer;
                     if (!ok || !r.Str(&sender) || !r.U8(&status)) status = kRouteNoAnswer;
                     FinishRoute(started, WireStatus(status),
                                 reply.substr(reply.size() - r.remaining()));
                   });
    }
    if (link != nullptr) ++link->next;
    routed_calls_.fetch_add(1, std::memory_order_relaxed);
    return true;
  } catch (...) {
    // Once the operation ran the decision is made, and not undone here:
    // only its settling can have thrown (the callback, from Decide's own
    // Settle).
    if (ran) throw;
    if (opens != 0) chain->view = 0;
    deferral->Undefer();
    throw;
  }
}

template <RouteOp kOp>
Routed<typename RoutedOp<kOp>::Outcome> ClusterNode::Impl::Route(const RouteArgs& args) {
  using Outcome = typename RoutedOp<kOp>::Outcome;
  // A command run in two passes (ephpm/route_deferral.h).  The replay: the
  // first pass's decision answers; a refused one is asked again below.
  if (RouteReplay* replay = RouteReplay::Current()) {
    RouteAnswer a;
    if (replay->Take(static_cast<uint8_t>(kOp), RoutingKey(kOp, args), &a)) {
      Outcome out{};
      switch (a.kind) {
        case RouteAnswer::Kind::kAnswered:
          if (OutcomeCodec<Outcome>::Decode(a.outcome, &out)) return Routed<Outcome>::Owner(out);
          return Routed<Outcome>::Unreachable();
        case RouteAnswer::Kind::kUnknown:
          return Routed<Outcome>::Unreachable();
        case RouteAnswer::Kind::kRetry:
          break;
      }
    }
  }
  // The first pass: the first routed call starts its decision; the pass is
  // then abandoned, and nothing after it may act.
  if (RouteDeferral* deferral = RouteDeferral::Current()) {
    if (deferral->deferred()) return Routed<Outcome>::Unreachable();
    if (StartRoute<kOp>(args, deferral)) return Routed<Outcome>::Unreachable();
  }
  const int64_t deadline = WallMs() + o_.request_timeout_ms;
  std::shared_ptr<const View> view;
  std::string answer;
  switch (Ask(kOp, args, deadline, &view, &answer)) {
    case Asked::kPlain:
      return Routed<Outcome>::Local();
    case Asked::kHere:
      // A read on the owner is not a decision: this node reads its own copy.
      if constexpr (IsRead(kOp)) {
        return Routed<Outcome>::Local();
      } else {
        return DecideHere<Outcome>(RoutingKey(kOp, args), deadline, std::move(view),
                                   [&] { return RoutedOp<kOp>::Run(store_, args); });
      }
    case Asked::kAnswered: {
      Outcome out;
      if (OutcomeCodec<Outcome>::Decode(answer, &out)) {
        return Routed<Outcome>::Owner(std::move(out));
      }
      break;
    }
    case Asked::kUnknown:
      break;
  }
  return Routed<Outcome>::Unreachable();
}

// RouteArgs in member order: guard, token, key, value, ttl, delta.
Routed<SetNxOutcome> ClusterNode::Impl::RouteSetNx(std::string_view key, std::string_view value,
                                                   int64_t ttl_ms) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<SetNxOutcome>::Unreachable();
    return etcd_->SetNx(key, value, ttl_ms);
  }
  return Route<RouteOp::kSetNx>({{}, {}, key, value, ttl_ms, 0});
}

Routed<SetNxOutcome> ClusterNode::Impl::RouteSetNxEphemeral(std::string_view key,
                                                            std::string_view value,
                                                            int64_t ttl_ms) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<SetNxOutcome>::Unreachable();
    return etcd_->SetNx(key, value, ttl_ms);
  }
  return Route<RouteOp::kSetNxEphemeral>({{}, {}, key, value, ttl_ms, 0});
}

Routed<DelIfEqOutcome> ClusterNode::Impl::RouteDelIfEq(std::string_view key,
                                                       std::string_view token) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<DelIfEqOutcome>::Unreachable();
    return etcd_->DelIfEq(key, token);
  }
  return Route<RouteOp::kDelIfEq>({{}, token, key, {}, 0, 0});
}

Routed<SetIfEqOutcome> ClusterNode::Impl::RouteSetIfEq(std::string_view guard_key,
                                                       std::string_view token, std::string_view key,
                                                       std::string_view value, int64_t ttl_ms) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<SetIfEqOutcome>::Unreachable();
    return StrictSetIfEq(guard_key, token, key, value, ttl_ms);
  }
  return Route<RouteOp::kSetIfEq>({guard_key, token, key, value, ttl_ms, 0});
}

Routed<DelIfGuardEqOutcome> ClusterNode::Impl::RouteDelIfGuardEq(std::string_view guard_key,
                                                                 std::string_view token,
                                                                 std::string_view key) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<DelIfGuardEqOutcome>::Unreachable();
    return StrictDelIfGuardEq(guard_key, token, key);
  }
  return Route<RouteOp::kDelIfGuardEq>({guard_key, token, key, {}, 0, 0});
}

Routed<ExpireIfGuardEqOutcome> ClusterNode::Impl::RouteExpireIfGuardEq(std::string_view guard_key,
                                                                       std::string_view token,
                                                                       std::string_view key,
                                                                       int64_t ttl_ms) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<ExpireIfGuardEqOutcome>::Unreachable();
    return StrictExpireIfGuardEq(guard_key, token, key, ttl_ms);
  }
  return Route<RouteOp::kExpireIfGuardEq>({guard_key, token, key, {}, ttl_ms, 0});
}

Routed<IncrByReply> ClusterNode::Impl::RouteIncrBy(std::string_view key, int64_t delta) {
  return Route<RouteOp::kIncrBy>({{}, {}, key, {}, 0, delta});
}

// A read on the key's owner.  Not a decision, but the owner must be one
// that may decide: a paused or catching-up owner could answer from a stale
// copy.
Routed<GetReply> ClusterNode::Impl::RouteGet(std::string_view key) {
  return Route<RouteOp::kGet>({{}, {}, key, {}, 0, 0});
}

// The lock API of issue 15.  RouteArgs by name: the rows in route_codec.cc
// say which of them travel.
Routed<FencedGrant> ClusterNode::Impl::RouteSetNxFenced(std::string_view key,
                                                        std::string_view value, int64_t ttl_ms,
                                                        bool ephemeral) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<FencedGrant>::Unreachable();
    return etcd_->SetNxFenced(key, value, ttl_ms);
  }
  RouteArgs a;
  a.key = key;
  a.value = value;
  a.ttl = ttl_ms;
  a.ephemeral = ephemeral ? 1 : 0;
  return Route<RouteOp::kSetNxFenced>(a);
}

Routed<ExpireIfEqOutcome> ClusterNode::Impl::RouteExpireIfEq(std::string_view key,
                                                             std::string_view token,
                                                             int64_t ttl_ms) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<ExpireIfEqOutcome>::Unreachable();
    return etcd_->ExpireIfEq(key, token, ttl_ms);
  }
  RouteArgs a;
  a.key = key;
  a.token = token;
  a.ttl = ttl_ms;
  return Route<RouteOp::kExpireIfEq>(a);
}

Routed<SetFencedOutcome> ClusterNode::Impl::RouteSetFenced(std::string_view key,
                                                           std::string_view value, uint64_t fence,
                                                           int64_t ttl_ms) {
  RouteArgs a;
  a.key = key;
  a.value = value;
  a.fence = fence;
  a.ttl = ttl_ms;
  return Route<RouteOp::kSetFenced>(a);
}

// A read on the owner, as RouteGet: a member's copy may miss the owner's
// latest grant or refresh.
Routed<LockStateReply> ClusterNode::Impl::RouteLockState(std::string_view key,
                                                         std::string_view token) {
  if (etcd_) {
    if (EtcdCallStops()) return Routed<LockStateReply>::Unreachable();
    return etcd_->LockState(key, token);
  }
  RouteArgs a;
  a.key = key;
  a.token = token;
  return Route<RouteOp::kLockState>(a);
}

// ---- strict mode: the guard-key operations ------------------------------------
//
// The guard (a lock) is checked in etcd, which also gives the grant's
// fence; the data is written by its owner among the members as a fenced
// write, which the owner refuses when it has recorded a higher fence for the
// key (a newer holder wrote).  So a holder whose lock expired between the
// check and the write cannot overwrite what the next holder wrote.

Routed<SetFencedOutcome> ClusterNode::Impl::FencedWrite(std::string_view key,
                                                        std::string_view value, uint64_t fence,
                                                        int64_t ttl_ms) {
  Routed<SetFencedOutcome> w = RouteSetFenced(key, value, fence, ttl_ms);
  if (w.where == Routed<SetFencedOutcome>::Where::kLocal) {
    w = Routed<SetFencedOutcome>::Owner(store_->SetFencedLocal(key, value, fence, ttl_ms));
  }
  return w;
}

Routed<SetIfEqOutcome> ClusterNode::Impl::StrictSetIfEq(std::string_view guard_key,
                                                        std::string_view token,
                                                        std::string_view key,
                                                        std::string_view value, int64_t ttl_ms) {
  const EtcdHold h = etcd_->Holds(guard_key, token);
  if (h.kind == EtcdHold::Kind::kUnreachable) return Routed<SetIfEqOutcome>::Unreachable();
  if (h.kind == EtcdHold::Kind::kNotHeld) {
    return Routed<SetIfEqOutcome>::Owner(SetIfEqOutcome::kNotMatched);
  }
  const Routed<SetFencedOutcome> w = FencedWrite(key, value, h.fence, ttl_ms);
  if (w.where != Routed<SetFencedOutcome>::Where::kOwner) {
    return Routed<SetIfEqOutcome>::Unreachable();
  }
  switch (w.outcome) {
    case SetFencedOutcome::kWritten:
      return Routed<SetIfEqOutcome>::Owner(SetIfEqOutcome::kWritten);
    case SetFencedOutcome::kStale:  // a newer holder has written: this one holds no more
      return Routed<SetIfEqOutcome>::Owner(SetIfEqOutcome::kNotMatched);
    case SetFencedOutcome::kOutOfMemory:
      return Routed<SetIfEqOutcome>::Owner(SetIfEqOutcome::kOutOfMemory);
    case SetFencedOutcome::kInvalidArgument:
      return Routed<SetIfEqOutcome>::Owner(SetIfEqOutcome::kInvalidArgument);
    case SetFencedOutcome::kOwnerUnreachable:
      break;
  }
  return Routed<SetIfEqOutcome>::Unreachable();
}

Routed<DelIfGuardEqOutcome> ClusterNode::Impl::StrictDelIfGuardEq(std::string_view guard_key,
                                                                  std::string_view token,
                                                                  std::string_view key) {
  const EtcdHold h = etcd_->Holds(guard_key, token);
  if (h.kind == EtcdHold::Kind::kUnreachable) return Routed<DelIfGuardEqOutcome>::Unreachable();
  if (h.kind == EtcdHold::Kind::kNotHeld) {
    return Routed<DelIfGuardEqOutcome>::Owner(DelIfGuardEqOutcome::kNotMatched);
  }
  int64_t removed = 0;
  const Status s = store_->Del(key, &removed);
  if (s == Status::kOutOfMemory) {
    return Routed<DelIfGuardEqOutcome>::Owner(DelIfGuardEqOutcome::kOutOfMemory);
  }
  if (s != Status::kOk) {
    return Routed<DelIfGuardEqOutcome>::Owner(DelIfGuardEqOutcome::kInvalidArgument);
  }
  return Routed<DelIfGuardEqOutcome>::Owner(removed > 0 ? DelIfGuardEqOutcome::kDeleted
                                                        : DelIfGuardEqOutcome::kAbsent);
}

Routed<ExpireIfGuardEqOutcome> ClusterNode::Impl::StrictExpireIfGuardEq(
    std::string_view guard_key, std::string_view token, std::string_view key, int64_t ttl_ms) {
  if (ttl_ms < 0) {
    return Routed<ExpireIfGuardEqOutcome>::Owner(ExpireIfGuardEqOutcome::kInvalidArgument);
  }
  const EtcdHold h = etcd_->Holds(guard_key, token);
  if (h.kind == EtcdHold::Kind::kUnreachable) {
    return Routed<ExpireIfGuardEqOutcome>::Unreachable();
  }
  if (h.kind == EtcdHold::Kind::kNotHeld) {
    return Routed<ExpireIfGuardEqOutcome>::Owner(ExpireIfGuardEqOutcome::kNotMatched);
  }
  bool applied = false;
  const Status s = ttl_ms > 0 ? store_->Expire(key, ttl_ms, &applied) : store_->Persist(key, &applied);
  if (s == Status::kOutOfMemory) {
    return Routed<ExpireIfGuardEqOutcome>::Owner(ExpireIfGuardEqOutcome::kOutOfMemory);
  }
  if (s != Status::kOk) {
    return Routed<ExpireIfGuardEqOutcome>::Owner(ExpireIfGuardEqOutcome::kInvalidArgument);
  }
  bool exists = applied;
  if (!applied) store_->Exists(key, &exists);
  return Routed<ExpireIfGuardEqOutcome>::Owner(exists ? ExpireIfGuardEqOutcome::kApplied
                                                      : ExpireIfGuardEqOutcome::kAbsent);
}

Routed<SetWithReply> ClusterNode::Impl::RouteSetWith(std::string_view key, std::string_view value,
                                                     const SetOptions& options) {
  RouteArgs a;
  a.key = key;
  a.value = value;
  PutSetOptions(options, &a);
  return Route<RouteOp::kSetWith>(a);
}

Routed<DelExReply> ClusterNode::Impl::RouteDelEx(std::string_view key,
                                                 const ValueCondition& condition) {
  RouteArgs a;
  a.key = key;
  PutCondition(condition, &a);
  return Route<RouteOp::kDelEx>(a);
}

bool ClusterNode::Impl::ReadRouteItem(Reader* r, RouteItem* item) const {
  uint8_t op_byte = 0;
  if (!r->U8(&op_byte) || !r->I64(&item->deadline)) return false;
  item->op = static_cast<RouteOp>(op_byte);
  if (!DecodeArgs(item->op, r, &item->args)) return false;
  if (etcd_ && (!r->U64(&item->fingerprint) || !r->I64(&item->revision))) return false;
  return r->U64(&item->chain) && r->U64(&item->position);
}

template <typename AnswerFn>
bool ClusterNode::Impl::HandleRoute(RouteItem& item, const AnswerFn& answer) {
  const std::string_view routing = RoutingKey(item.op, item.args);
  Placement p = Place(routing);
  // Strict mode: the asker computed the owner over another member list.
  // The one that read it earlier catches up: the asker reads etcd's list
  // before it asks again, and this node too if the asker's is newer.
  const bool other_list = etcd_ && p.view && item.fingerprint != p.view->fingerprint;
  if (other_list && item.revision > p.view->revision) etcd_->RequestRefresh();
  // A request of a chain whose predecessor was not decided here is
  // refused, as every later one then is: the asker asks again, in order.
  if (WallMs() + o_.max_clock_skew_ms >= item.deadline || p.kind != Placement::Kind::kHere ||
      other_list || !CanDecide(*p.view) || !ChainAdmits(item.chain, item.position)) {
    routed_refused_.fetch_add(1, std::memory_order_relaxed);
    answer(kRouteRefused, std::string());
    return true;
  }
  bool decided = true;  // a read is answered at once
  const bool well_formed =
      DecideOrRead(item.op, item.args, item.deadline, std::move(p.view), answer, &decided);
  if (decided) ChainDecided(item.chain, item.position, item.deadline);
  return well_formed;
}

// The owner's side of a route request.  A request past its deadline, for
// a key this node does not own in its own view, or arriving while it may
// not decide, is refused (the asker answers "unknown outcome"); else the
// decision is made with the _local operation (never forwarding again, so
// a request cannot bounce between nodes whose views differ) and answered
// once confirmed.  False for a malformed request.
bool ClusterNode::Impl::OnRouteRequest(const std::shared_ptr<Conn>& c, const std::string& asker,
                                       uint64_t request_id, Reader* r) {
  RouteItem item;
  if (!ReadRouteItem(r, &item)) return false;
  auto answer = [this, c, asker, request_id](uint8_t status, const std::string& outcome) {
    Writer w(Writer::kTypicalBody);
    w.Str(o_.node_id);
    w.U8(status);
    w.out().append(outcome);
    Reply(c, asker, MsgType::kRouteReply, request_id, w.out());
  };
  return HandleRoute(item, answer);
}

namespace {

// A kRouteBatch's answers as they come (decisions settle on whichever
// thread confirms them, reads and refusals at once); the reply goes when
// the last one has, on the connection the batch came in on.  Held once
// for the batch, so that each request's answer callback carries only its
// index (not its own copy of the asker's id and connection).
struct BatchAnswers {
  BatchAnswers(std::shared_ptr<Conn> c, std::string asker, uint64_t request_id)
      : conn(std::move(c)), asker(std::move(asker)), request_id(request_id) {}
  const std::shared_ptr<Conn> conn;
  const std::string asker;
  const uint64_t request_id;
  Mutex mu;
  std::vector<std::pair<uint8_t, std::string>> answers ABSL_GUARDED_BY(mu);
  size_t left ABSL_GUARDED_BY(mu) = 0;
};

}  // namespace

bool ClusterNode::Impl::OnRouteBatch(const std::shared_ptr<Conn>& c, const std::string& asker,
                                     uint64_t request_id, Reader* r) {
  uint32_t n = 0;
  if (!r->U32(&n) || n == 0) return false;
  std::vector<RouteItem> items;
  items.reserve(std::min<uint32_t>(n, 4096));
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view fields;
    if (!r->Str(&fields)) return false;
    Reader fr(fields);
    if (!ReadRouteItem(&fr, &items.emplace_back())) return false;
  }
  auto acc = std::make_shared<BatchAnswers>(c, asker, request_id);
  {
    MutexLock l(&acc->mu);
    acc->answers.resize(n);
    acc->left = n;
  }
  bool well_formed = true;
  for (uint32_t i = 0; i < n; ++i) {
    PrefetchAhead(i, n, [&](size_t j) { return RoutingKey(items[j].op, items[j].args); });
    auto answer = [this, acc, i](uint8_t status, const std::string& outcome) {
      std::vector<std::pair<uint8_t, std::string>> all;
      {
        MutexLock l(&acc->mu);
        acc->answers[i] = {status, outcome};
        if (--acc->left != 0) return;
        all.swap(acc->answers);
      }
      Writer w(Writer::kTypicalBody);
      w.Str(o_.node_id);
      w.U32(static_cast<uint32_t>(all.size()));
      for (const auto& [st, out] : all) {
        w.U8(st);
        w.Str(out);
      }
      Reply(acc->conn, acc->asker, MsgType::kRouteBatchReply, acc->request_id, w.out());
    };
    // (False only for an unknown operation, which ReadRouteItem refused.)
    well_formed = HandleRoute(items[i], answer) && well_formed;
  }
  return well_formed;
}

template <typename AnswerFn>
bool ClusterNode::Impl::DecideOrRead(RouteOp op, const RouteArgs& args, int64_t deadline,
                                     std::shared_ptr<const View> view, const AnswerFn& answer,
                                     bool* decided) {
  switch (op) {
    case RouteOp::kSetNx:
      return DecideFor<RouteOp::kSetNx>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kSetNxEphemeral:
      return DecideFor<RouteOp::kSetNxEphemeral>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kDelIfEq:
      return DecideFor<RouteOp::kDelIfEq>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kSetIfEq:
      return DecideFor<RouteOp::kSetIfEq>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kDelIfGuardEq:
      return DecideFor<RouteOp::kDelIfGuardEq>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kExpireIfGuardEq:
      return DecideFor<RouteOp::kExpireIfGuardEq>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kIncrBy:
      return DecideFor<RouteOp::kIncrBy>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kSetNxFenced:
      return DecideFor<RouteOp::kSetNxFenced>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kExpireIfEq:
      return DecideFor<RouteOp::kExpireIfEq>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kSetFenced:
      return DecideFor<RouteOp::kSetFenced>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kSetWith:
      return DecideFor<RouteOp::kSetWith>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kDelEx:
      return DecideFor<RouteOp::kDelEx>(args, deadline, std::move(view), answer, decided);
    case RouteOp::kGet:
      return ReadFor<RouteOp::kGet>(args, answer);
    case RouteOp::kLockState:
      return ReadFor<RouteOp::kLockState>(args, answer);
  }
  return false;  // not reached: DecodeArgs refused an unknown operation
}

template <RouteOp kOp, typename AnswerFn>
bool ClusterNode::Impl::DecideFor(const RouteArgs& args, int64_t deadline,
                                  std::shared_ptr<const View> view, const AnswerFn& answer,
                                  bool* decided) {
  using Outcome = typename RoutedOp<kOp>::Outcome;
  const bool started = Decide<Outcome>(
      RoutingKey(kOp, args), deadline, std::move(view),
      [&] { return RoutedOp<kOp>::Run(store_, args); },
      [answer](bool ok, Outcome out) {
        Writer w;
        OutcomeCodec<Outcome>::Encode(out, &w);
        answer(ok ? kRouteDecided : kRouteUnconfirmed, w.out());
      });
  *decided = started;
  if (!started) {
    routed_refused_.fetch_add(1, std::memory_order_relaxed);
    answer(kRouteRefused, "");
  } else {
    routed_decided_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

template <RouteOp kOp, typename AnswerFn>
bool ClusterNode::Impl::ReadFor(const RouteArgs& args, const AnswerFn& answer) {
  static_assert(IsRead(kOp), "a decision goes through DecideFor");
  Writer w;
  OutcomeCodec<typename RoutedOp<kOp>::Outcome>::Encode(RoutedOp<kOp>::Run(store_, args), &w);
  answer(kRouteDecided, w.out());
  routed_decided_.fetch_add(1, std::memory_order_relaxed);
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
