// ClusterNode::Impl, the node's private declaration, shared by the files
// that define it (as leveldb's db_impl.h): node.cc (lifecycle, frames,
// counters, views), membership.cc (SWIM and the protocol period),
// replication.cc (publish, full sync, standing) and router.cc (both sides
// of owner routing), with node_faults.cc or node_no_faults.cc for the fault
// hooks.  The transport, the requests, the clock and the routed operations'
// codec are their own units (transport.h, rpc.h, hlc.h, route_codec.h).
//
// The lock order is written in node.h.

#ifndef EPHPM_CLUSTER_NODE_IMPL_H_
#define EPHPM_CLUSTER_NODE_IMPL_H_

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "ephpm/key.h"
#include "ephpm/route_deferral.h"
#include "ephpm/send_cork.h"
#include "etcd_arbiter.h"
#include "hlc.h"
#include "mutex.h"
#include "node.h"
#include "route_codec.h"
#include "rpc.h"
#include "transport.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

class FaultTransport;

// Milliseconds of the monotonic clock (suspicion and re-ask timers).
int64_t SteadyMs();

class ClusterNode::Impl {
 public:
  explicit Impl(ClusterOptions o);
  ~Impl();

  // ---- lifecycle (node.cc) ----------------------------------------------------
  bool Listen(std::string* error);
  void Attach(Store* store) { store_ = store; }
  void Start();
  void Stop();
  const std::string& id() const { return o_.node_id; }
  std::string address() const { return address_; }

  // ---- views and counters (node.cc) -------------------------------------------
  std::vector<MemberRecord> Members() const;
  std::vector<std::string> AliveIds() const;
  bool Info(ClusterInfo* info) const;

  // ---- fault hooks (node_faults.cc in the testing build, else
  // node_no_faults.cc) -------------------------------------------------------
  // The transport to put in front of tcp_ (null: none).
  std::unique_ptr<Transport> MakeFaults();
  // Lets the I/O threads go if the tests froze them (called by Stop).
  void Unpause();
  // The tests' fault transport.  REQUIRES: the testing build.
  FaultTransport* faults();
  void TestSkewClock(int64_t ms) { hlc_.Skew(ms); }
  void TestForceLocalRouting(bool local) { force_local_.store(local); }

  // ---- replication hooks, called under a store shard lock (replication.cc) ----
  Stamp NextStamp() { return Stamp{hlc_.Now(), node_hash_}; }
  // A decision being made on this thread is tentative until confirmed.
  bool Tentative() const { return tl_capture != nullptr && tl_capture->node == this; }
  void Publish(const Mutation& m) noexcept;

  // ---- owner routing (router.cc) ----------------------------------------------
  bool Ready() const;
  std::string OwnerOf(std::string_view key) const;
  bool SameOwner(const std::vector<std::string_view>& keys) const;
  std::string RemoteOwner(std::string_view key) const;
  Routed<SetNxOutcome> RouteSetNx(std::string_view key, std::string_view value, int64_t ttl_ms);
  Routed<SetNxOutcome> RouteSetNxEphemeral(std::string_view key, std::string_view value,
                                           int64_t ttl_ms);
  Routed<DelIfEqOutcome> RouteDelIfEq(std::string_view key, std::string_view token);
  Routed<SetIfEqOutcome> RouteSetIfEq(std::string_view guard_key, std::string_view token,
                                      std::string_view key, std::string_view value, int64_t ttl_ms);
  Routed<DelIfGuardEqOutcome> RouteDelIfGuardEq(std::string_view guard_key, std::string_view token,
                                                std::string_view key);
  Routed<ExpireIfGuardEqOutcome> RouteExpireIfGuardEq(std::string_view guard_key,
                                                      std::string_view token, std::string_view key,
                                                      int64_t ttl_ms);
  Routed<IncrByReply> RouteIncrBy(std::string_view key, int64_t delta);
  Routed<GetReply> RouteGet(std::string_view key);
  Routed<FencedGrant> RouteSetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                                       bool ephemeral);
  Routed<ExpireIfEqOutcome> RouteExpireIfEq(std::string_view key, std::string_view token,
                                            int64_t ttl_ms);
  Routed<SetFencedOutcome> RouteSetFenced(std::string_view key, std::string_view value,
                                          uint64_t fence, int64_t ttl_ms);
  Routed<LockStateReply> RouteLockState(std::string_view key, std::string_view token);
  Routed<SetWithReply> RouteSetWith(std::string_view key, std::string_view value,
                                    const SetOptions& options);
  Routed<DelExReply> RouteDelEx(std::string_view key, const ValueCondition& condition);

 private:
  // ---- strict mode (router.cc): the guard checked in etcd, the data written
  // by its owner with the grant's fence --------------------------------------
  Routed<SetFencedOutcome> FencedWrite(std::string_view key, std::string_view value,
                                       uint64_t fence, int64_t ttl_ms);
  Routed<SetIfEqOutcome> StrictSetIfEq(std::string_view guard_key, std::string_view token,
                                       std::string_view key, std::string_view value,
                                       int64_t ttl_ms);
  Routed<DelIfGuardEqOutcome> StrictDelIfGuardEq(std::string_view guard_key,
                                                 std::string_view token, std::string_view key);
  Routed<ExpireIfGuardEqOutcome> StrictExpireIfGuardEq(std::string_view guard_key,
                                                       std::string_view token,
                                                       std::string_view key, int64_t ttl_ms);

  // ---- owner arbitration (router.cc) ------------------------------------------
  //
  // The rule (docs/CLUSTER.md, "Why a paused owner cannot decide"): a
  // decision (set_nx, del_if_eq, set_if_eq, del_if_guard_eq,
  // expire_if_guard_eq, incr_by, the fenced grant, expire_if_eq, the fenced
  // write, a conditional SET or DELEX) is made by the key's owner only while
  //   1. the members it holds alive are a strict majority of the members it
  //      knows, and
  //   2. it is *ready*: since it started, or since it last lost its standing
  //      (it learned it had been declared dead, or that it is a restarted
  //      process, or a decision of its own was not confirmed), it has
  //      received a whole state from every member it holds alive (in strict
  //      mode also every member of etcd's list: AwaitedLocked), each taken
  //      while that member held it alive;
  // and a decision that changed something is answered only once every member
  // the owner holds alive has *confirmed* it.  A member confirms only while
  //   a. it holds the decider alive,
  //   b. its own view names the decider as the key's owner,
  //   c. the decision's deadline (the asker's) is more than the clock skew
  //      allowance away, and
  //   d. the decider has applied the whole state this member sent it when it
  //      last came back from the dead (so a decider that missed decisions
  //      made while it was held dead is refused until it caught up).
  // A decision that is not confirmed is answered "unknown outcome", the
  // decider forgets its own copy of the key (so its fresher stamp cannot
  // override the cluster's state) and loses its standing until it caught up.

  // A member's verdict on a decision.
  enum class Verdict : uint8_t {
    kConfirmed = 0,
    kSenderDead = 1,  // the member holds the decider dead (or does not know it)
    kNotOwner = 2,    // the member's view names another owner
    kLate = 3,        // past the deadline (less the clock skew allowance)
    kCatchUp = 4,     // the decider has not applied this member's state since it came back
    kNotServing = 5,  // the member has no store yet
  };

  // The members a decision is made over: the alive members sorted by id,
  // and how many members this node knows (dead ones included).
  struct AliveMember {
    std::string id, address;
    bool self;
  };
  struct View {
    std::vector<AliveMember> alive;
    size_t known = 0;
    // Strict mode: the members are etcd's list as of `revision`, and
    // `fingerprint` (XXH3-64 of the ids and addresses in order) is what a
    // routed request carries: an owner whose list differs refuses it.
    int64_t revision = 0;
    uint64_t fingerprint = 0;
    bool has_self = false;  // this node is in `alive`
    // Strict mode: who confirms a decision.  Every member of etcd's list and
    // every member SWIM does not hold dead: one that is alive but not (yet,
    // or no longer) registered in etcd can be the key's owner as soon as
    // its registration reaches the others, so it must hold every decision
    // before it is answered, as in gossip mode (rule 4).  Empty in gossip
    // mode, where `alive` is that set.
    std::vector<AliveMember> confirm;
    // Counts the views this node has made (RouteChain::view).
    uint64_t generation = 0;
  };

  // Where the decision for a key is made.
  struct Placement {
    enum class Kind { kPlain, kHere, kRemote } kind = Kind::kPlain;
    std::string address;               // kRemote: the owner's
    std::shared_ptr<const View> view;  // kHere: the view the decision is made over
  };

  // One decision waiting for its confirmations.  `pending` counts the
  // members not yet answered plus the decider's own token, released (with
  // `released` set and the outcome kept) once the store operation has
  // returned.  Decide makes it together with what carries its outcome
  // (DecisionOf): one allocation for both.
  struct Decision {
    virtual ~Decision() = default;
    // Called exactly once, by Settle, outside every lock: the decision was
    // confirmed by every member (ok) or not.
    virtual void Finish(bool ok) = 0;

    Mutex mu;
    int pending ABSL_GUARDED_BY(mu) = 1;
    bool failed ABSL_GUARDED_BY(mu) = false;
    bool finished ABSL_GUARDED_BY(mu) = false;
    bool released ABSL_GUARDED_BY(mu) = false;  // the own token: the outcome is kept
    // What the decision wrote: almost always one key (a Key holds up to 30
    // bytes inline), so neither the list nor the key allocates.
    absl::InlinedVector<std::pair<Key, Stamp>, 1> changed ABSL_GUARDED_BY(mu);
    // Per member, the epoch of the latest state it sent this node on seeing
    // it back from the dead that this node had applied when it took the
    // decision (rule d: the member refuses a decision taken before).
    // Written once, before the operation runs; read without the lock.
    std::map<std::string, uint64_t> epochs;
    uint64_t generation = 0;  // standing_gen_ when it was taken (written once, likewise)
  };

  // Before the i-th of n keys of a batch is handled (decisions to apply,
  // route requests to decide): the store starts loading the next key's
  // entry and the table position of the one after, as a RESP pipeline
  // does (Session::PrefetchAhead), so that their lookups do not each wait
  // for memory.  key_at(j) is the j-th key.  Only a hint (Store::Prefetch).
  template <typename KeyAt>
  void PrefetchAhead(size_t i, size_t n, const KeyAt& key_at) const {
    if (store_ == nullptr) return;
    using Step = Store::PrefetchStep;
    if (i == 0) {  // the first two have had no call ahead of them
      store_->Prefetch(key_at(0), 0, Step::kTable);
      if (n > 1) store_->Prefetch(key_at(1), 0, Step::kTable);
    }
    if (i + 2 < n) store_->Prefetch(key_at(i + 2), 0, Step::kTable);
    if (i + 1 < n) store_->Prefetch(key_at(i + 1), 0, Step::kNode);
  }

  // The decision being made on this thread, seen by Publish.
  struct Capture {
    Impl* node;
    std::shared_ptr<Decision> decision;
    std::string_view routing_key;
    int64_t deadline_ms;
    std::shared_ptr<const View> view;
  };
  static inline thread_local Capture* tl_capture = nullptr;

  enum class CallResult { kAnswered, kRefused, kUnreachable };
  // Where a decision ended up: on a single node (kPlain: the caller decides
  // locally), here (kHere: *view is what to decide over), answered by the
  // owner (kAnswered: *answer), or unknown.
  enum class Asked { kPlain, kHere, kAnswered, kUnknown };

  Placement Place(std::string_view key) const;
  // Rules 1 and 2 above; in strict mode, rule 1 is "this node is in etcd's
  // member list and its lease is certainly alive" (EtcdArbiter::Serving).
  bool CanDecide(const View& v) const {
    if (etcd_) {
      return v.has_self && etcd_->Serving() && ready_.load(std::memory_order_acquire);
    }
    return v.alive.size() * 2 > v.known && ready_.load(std::memory_order_acquire);
  }
  // Strict mode: a member list from etcd (EtcdArbiter's on_members).
  void OnEtcdMembers(const EtcdMembers& members, int64_t revision) ABSL_LOCKS_EXCLUDED(mu_);
  void SendDecision(const Capture& cap, const Mutation& m) noexcept;
  void SendDecisionOrThrow(const Capture& cap, const Mutation& m);
  // A member's decisions not yet sent: what a thread with a SendCork open
  // decided (a RESP pipeline's, or the route requests of one read on an
  // I/O thread) leaves as one kDecisionBatch when the cork releases (or
  // when an uncorked thread decides for the same member: everything queued
  // goes, in order).  Sent under `mu`, so that two flushes cannot swap:
  // one key's decisions reach each member in the order they were applied.
  struct DecisionBatch final : CorkedLink {
    Impl* node = nullptr;
    std::string address;
    Mutex mu;  // before the Rpc's and the transport's locks
    std::string entries ABSL_GUARDED_BY(mu);  // each: the decision's fields and its tail
    std::vector<std::shared_ptr<Decision>> decisions ABSL_GUARDED_BY(mu);
    int64_t deadline_ms ABSL_GUARDED_BY(mu) = 0;  // the earliest of theirs
    void Uncork() noexcept override { node->FlushDecisions(this, /*settle_unsent=*/true); }
  };
  std::shared_ptr<DecisionBatch> BatchFor(const std::string& address) ABSL_LOCKS_EXCLUDED(batches_mu_);
  // Throws only without settle_unsent.
  void FlushDecisions(DecisionBatch* b, bool settle_unsent);
  // Settles a batch's decisions from its reply (kDecisionBatchReply).
  void SettleBatch(const std::vector<std::shared_ptr<Decision>>& ds, bool ok,
                   std::string_view reply) ABSL_LOCKS_EXCLUDED(mu_);
  // A request started by StartRoute, until answered: where its answer goes.
  struct StartedRoute {
    RouteDeferral::Resume resume;
    RouteAnswer base;  // its ticket, operation and key
  };
  // Hands a started request its answer: the owner's status byte (router.cc)
  // and the encoded outcome.
  void FinishRoute(StartedRoute& r, uint8_t status, std::string_view outcome);
  // An owner's route requests not yet sent: what a thread with a SendCork
  // open asked of it in one pass (a RESP pipeline's part of a chain) leaves
  // as one kRouteBatch when the cork releases, and the owner answers them
  // all in one kRouteBatchReply.  Sent under `mu`, so that two flushes
  // cannot swap: a chain's requests reach the owner in the order made.
  struct RouteBatch final : CorkedLink {
    Impl* node = nullptr;
    std::string address;
    Mutex mu;  // before the Rpc's and the transport's locks
    std::string entries ABSL_GUARDED_BY(mu);  // each request's fields, as a Str
    std::vector<StartedRoute> started ABSL_GUARDED_BY(mu);
    int64_t deadline_ms ABSL_GUARDED_BY(mu) = 0;  // the earliest of theirs
    void Uncork() noexcept override { node->FlushRoutes(this); }
  };
  std::shared_ptr<RouteBatch> RouteBatchFor(const std::string& address)
      ABSL_LOCKS_EXCLUDED(batches_mu_);
  // Queues a route request (its fields, written straight into the batch)
  // in the owner's batch and notes the batch in this thread's cork.
  // Throws (no memory) with nothing queued and `r` left as it was.
  void QueueRoute(const std::string& address, RouteOp op, const RouteArgs& args,
                  int64_t deadline_ms, const View& view, uint64_t chain, uint64_t position,
                  StartedRoute& r);
  // Sends what the batch holds.  Requests that cannot be sent (no memory)
  // are answered kRouteNotSent: nothing was applied, they may be asked again.
  void FlushRoutes(RouteBatch* b) noexcept;
  // Hands a kRouteBatchReply's answers to the requests, in order; a reply
  // that is missing or malformed answers each as unreachable.
  void AnswerRoutes(std::vector<StartedRoute>* started, bool ok, std::string_view reply);
  // A member's side of one decision: judged, applied when confirmed.
  Verdict TakeDecision(std::string_view sender, std::string_view routing_key, int64_t deadline,
                       const Mutation& m, uint64_t epoch, uint64_t life);
  bool ConfirmedIn(std::string_view reply) ABSL_LOCKS_EXCLUDED(mu_);
  void Settle(const std::shared_ptr<Decision>& d, bool ok) ABSL_LOCKS_EXCLUDED(mu_);
  // `done(bool confirmed, Outcome)` (a callable, kept as is inside the
  // decision's one std::function) runs once, when the decision is settled.
  template <typename Outcome, typename Op, typename Done>
  bool Decide(std::string_view routing_key, int64_t deadline_ms, std::shared_ptr<const View> view,
              Op op, Done done) ABSL_LOCKS_EXCLUDED(mu_);
  template <typename Outcome, typename Op>
  Routed<Outcome> DecideHere(std::string_view routing_key, int64_t deadline_ms,
                             std::shared_ptr<const View> view, Op op);
  CallResult Call(const std::string& address, const std::string& body, int64_t deadline_ms,
                  std::string* answer);
  bool WaitUntilReady(int64_t deadline_ms) ABSL_LOCKS_EXCLUDED(mu_);
  // Finds the owner of op's routing key and asks it, until `deadline_ms`:
  // an owner that refuses (it is catching up, or the views are changing)
  // has applied nothing and is asked again; one that does not answer leaves
  // the outcome unknown.  This node waits for its own readiness the same way.
  Asked Ask(RouteOp op, const RouteArgs& args, int64_t deadline_ms,
            std::shared_ptr<const View>* view, std::string* answer);
  // The asking side of every routed operation.
  template <RouteOp kOp>
  Routed<typename RoutedOp<kOp>::Outcome> Route(const RouteArgs& args);
  // A route request's body: the asker, the operation, the deadline, the
  // arguments (and in strict mode the member list it was placed over), the
  // chain and position.  Its fields are the same without the asker (a
  // kRouteBatch names the asker once).
  std::string RouteRequestBody(RouteOp op, const RouteArgs& args, int64_t deadline_ms,
                               const View& view, uint64_t chain, uint64_t position) const;
  void RouteRequestFields(RouteOp op, const RouteArgs& args, int64_t deadline_ms,
                          const View& view, uint64_t chain, uint64_t position, Writer* w) const;
  // Chains (ephpm/route_deferral.h).  The asking side: a new chain's number.
  uint64_t NewChainId();
  // The asking side, in strict mode's etcd paths, which decide in etcd
  // where no RouteDeferral can wait for them: true when the call must not
  // act, answering "unreachable" (a deferral's pass that already deferred
  // acts no more; while a chain is open the call is held, since no etcd
  // decision can join one).
  static bool EtcdCallStops() {
    RouteDeferral* d = RouteDeferral::Current();
    if (d == nullptr) return false;
    if (d->deferred()) return true;
    if (d->chain() == nullptr || !d->chain()->open()) return false;
    d->Hold();
    return true;
  }
  // The owner's side: whether request `position` of `chain` may be decided
  // (the first may; a later one only right after its predecessor was), and
  // the record that it was.
  bool ChainAdmits(uint64_t chain, uint64_t position) ABSL_LOCKS_EXCLUDED(chain_mu_);
  void ChainDecided(uint64_t chain, uint64_t position, int64_t deadline)
      ABSL_LOCKS_EXCLUDED(chain_mu_);
  // Route, for a caller in a RouteDeferral (ephpm/route_deferral.h): starts
  // the decision (sends it to the owner, or makes it here) and hands its
  // answer to the deferral's Resume once it is settled, instead of
  // waiting.  False, with nothing done, where it would not wait for a peer
  // (a single node, a read here) or where the waiting path decides better
  // (this node not ready yet).
  template <RouteOp kOp>
  bool StartRoute(const RouteArgs& args, RouteDeferral* deferral);
  // The owner's side of a decision asked by another node: decides it and
  // answers (answer(status byte, encoded outcome)) once it is settled, or
  // refuses it.  Returns true.
  template <RouteOp kOp, typename AnswerFn>
  bool DecideFor(const RouteArgs& args, int64_t deadline, std::shared_ptr<const View> view,
                 const AnswerFn& answer, bool* decided);
  // OnRouteRequest's decision (or read) of an admitted request; *decided
  // false when it was refused after all.  False for an unknown operation.
  template <typename AnswerFn>
  bool DecideOrRead(RouteOp op, const RouteArgs& args, int64_t deadline,
                    std::shared_ptr<const View> view, const AnswerFn& answer, bool* decided);
  // The owner's side of a read (IsRead): answered at once.  Returns true.
  template <RouteOp kOp, typename AnswerFn>
  bool ReadFor(const RouteArgs& args, const AnswerFn& answer);
  bool OnRouteRequest(const std::shared_ptr<Conn>& c, const std::string& asker, uint64_t request_id,
                      Reader* r);
  // A kRouteBatch: read whole (a batch cut anywhere decides none of it),
  // each request then handled as OnRouteRequest would, in order; answered
  // in one kRouteBatchReply once every one is.  False when malformed.
  bool OnRouteBatch(const std::shared_ptr<Conn>& c, const std::string& asker, uint64_t request_id,
                    Reader* r);
  // One route request's fields, as read.
  struct RouteItem {
    RouteOp op{};
    int64_t deadline = 0;
    RouteArgs args;
    uint64_t fingerprint = 0;
    int64_t revision = 0;
    uint64_t chain = 0;
    uint64_t position = 0;
  };
  bool ReadRouteItem(Reader* r, RouteItem* item) const;
  // The owner's handling of one request: refused (late, not the owner,
  // not ready, a chain's gap) or decided (read) with answer(status,
  // outcome) called once it is settled.  False for an unknown operation.
  template <typename AnswerFn>
  bool HandleRoute(RouteItem& item, const AnswerFn& answer);
  Verdict Judge(std::string_view decider, std::string_view routing_key, int64_t deadline,
                uint64_t epoch, uint64_t life) ABSL_LOCKS_EXCLUDED(mu_);
  MemberRecord RecordOf(std::string_view id) const ABSL_LOCKS_EXCLUDED(mu_);

  // ---- transport and frames (node.cc) -----------------------------------------
  // Sends a frame to the member at `address` (through the fault transport
  // in a testing build).
  void SendTo(const std::string& address, FramePtr frame, bool replication) {
    net_->Send(address, std::move(frame), replication);
  }
  // Answers a request on the connection it came in on; `peer` is the asker.
  void Reply(const std::shared_ptr<Conn>& c, const std::string& peer, MsgType type,
             uint64_t request_id, const std::string& body);
  // An outbound connection broke, or its queue overflowed: what it carried
  // may be lost, so the member gets this node's whole state (at the next
  // tick, if it is not dead; a dead one gets it when it comes back).
  void LinkFailed(const std::string& address) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves the clock past a mutation this node received: its stamp, and the
  // fence the key carries.  A fence is granted as at least a stamp of the
  // owner's clock (Store::SetNxFenced), so a node that has heard of a fence
  // stamps, and thus grants, only above it: fences keep increasing when the
  // key's owner changes.
  // A fence recorded by a fenced write is the client's number, not a clock
  // reading: one past kMaxObservedFence would let the clock run out of
  // readings (or wrap and go back), so the clock stops short of it and the
  // store's own fence clock, which records it whole, keeps the order.
  static constexpr uint64_t kMaxObservedFence = ~uint64_t{0} >> 1;
  void ObserveFence(uint64_t fence) { hlc_.Observe(std::min(fence, kMaxObservedFence)); }
  void Observe(const Mutation& m) {
    hlc_.Observe(m.stamp.hlc);
    ObserveFence(m.fence);
  }
  // Applies the `n` replicated mutations *r holds next (a kReplicate or
  // kSyncBatch body); false when one is malformed.
  bool ApplyMutations(Reader* r, uint32_t n);
  // Handles one frame; false closes the connection (malformed).
  bool OnFrame(const std::shared_ptr<Conn>& c, const Header& h, std::string_view body);
  // The id of the member at `address` ("" for none).
  // Defined in the testing build only (node_faults.cc), its one user.
  std::string IdAt(const std::string& address) const ABSL_LOCKS_EXCLUDED(mu_);

  // ---- replication and standing (replication.cc) ------------------------------
  void SyncTo(const std::string& address, uint64_t round = 0, uint64_t epoch = 0,
              bool held_alive = false);
  void SyncReceived(const std::string& sender, uint64_t round, uint64_t epoch, bool held_alive)
      ABSL_LOCKS_EXCLUDED(mu_);
  void MaybeReadyLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The members (id -> address) whose whole state a sync round needs: the
  // ones that confirm this node's decisions (rule 4).  Those SWIM does not
  // hold dead and, in strict mode, every member of etcd's list: they confirm
  // as soon as they revive this node, whatever SWIM says here.
  std::map<std::string, std::string> AwaitedLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<std::string> StartSyncRoundLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AskForSync(const std::vector<std::string>& addresses, uint64_t round);
  void LoseStanding(const std::function<void()>& meanwhile = {}) ABSL_LOCKS_EXCLUDED(mu_);

  // ---- membership (membership.cc) ---------------------------------------------
  struct Member {
    MemberRecord rec;
    int64_t suspect_since_ms = 0;
  };
  struct Gossip {
    MemberRecord rec;
    int sends_left;
  };
  // What a membership change asks of this node once its lock is released.
  struct Effects {
    std::vector<std::pair<std::string, uint64_t>> push;  // SyncTo(address, 0, epoch)
    std::vector<std::string> ask;                        // AskForSync(ask, round)
    uint64_t round = 0;
    bool lost_standing = false;
  };
  std::string GossipBody(std::string_view extra = {}) ABSL_LOCKS_EXCLUDED(mu_);
  bool ReadGossip(Reader* r) ABSL_LOCKS_EXCLUDED(mu_);
  bool ReadMemberList(Reader* r) ABSL_LOCKS_EXCLUDED(mu_);
  std::string MembersBody() ABSL_LOCKS_EXCLUDED(mu_);
  void ReadMembers(std::string_view body) ABSL_LOCKS_EXCLUDED(mu_);
  void Run(const Effects& fx);
  void ApplyUpdate(const MemberRecord& rec) ABSL_LOCKS_EXCLUDED(mu_);
  void ApplyUpdateLocked(const MemberRecord& rec, Effects* fx) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void GossipLocked(const MemberRecord& rec) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshPeersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkLocked(const std::string& id, MemberState state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ScheduleTick(int64_t delay_ms);
  void Tick() ABSL_LOCKS_EXCLUDED(mu_);
  void Probe(const std::string& id, const std::string& address,
             const std::vector<std::string>& helpers);
  void Join();
  void ExchangeMembers(const std::string& address);

  // ---- state ------------------------------------------------------------------
  const ClusterOptions o_;
  const uint64_t node_hash_;
  std::string address_;  // written by Listen, before Start
  Store* store_ = nullptr;
  Hlc hlc_;

  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  boost::asio::steady_timer tick_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
  std::unique_ptr<TcpTransport> tcp_;
  std::unique_ptr<Transport> fault_;  // MakeFaults(): the testing build's FaultTransport
  Transport* net_;                    // what frames go through: fault_ or tcp_
  Rpc rpc_;

  mutable Mutex mu_;  // membership and standing
  std::map<std::string, Member> members_ ABSL_GUARDED_BY(mu_);
  std::vector<Gossip> gossip_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> probe_order_ ABSL_GUARDED_BY(mu_);
  size_t probe_pos_ ABSL_GUARDED_BY(mu_) = 0;
  std::string probe_target_ ABSL_GUARDED_BY(mu_);
  bool probe_acked_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t ticks_ = 0;  // only the tick handler touches it
  // Standing (see "owner arbitration").
  bool joined_ ABSL_GUARDED_BY(mu_);  // knows another member, or has none to join
  // The current round of asking for states (0: none).
  uint64_t sync_round_ ABSL_GUARDED_BY(mu_) = 1;
  // Members whose state this round still needs, and when they were last asked.
  std::map<std::string, int64_t> sync_awaiting_ ABSL_GUARDED_BY(mu_);
  // Members back from the dead: epoch of the state sent.
  std::map<std::string, uint64_t> catchup_ ABSL_GUARDED_BY(mu_);
  uint64_t catchup_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // The latest such epoch sent to each member (kept after its kSyncDone):
  // a decision carrying an older one was taken before it caught up.
  struct SentEpoch {
    uint64_t epoch;
    uint64_t incarnation;  // of the member when it was revived
  };
  std::map<std::string, SentEpoch> sent_epoch_ ABSL_GUARDED_BY(mu_);
  // Per member, the latest epoch of a state it sent on seeing this node back
  // from the dead that this node has applied.
  std::map<std::string, uint64_t> applied_epoch_ ABSL_GUARDED_BY(mu_);
  // Decisions this node has started and not settled: it becomes ready only
  // when there are none (one made on a stale copy must be forgotten first).
  uint64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  // This run's first incarnation: written by Listen (under mu_) before
  // Start, read without the lock afterwards.
  uint64_t start_incarnation_ = 0;
  bool restart_seen_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> resync_ ABSL_GUARDED_BY(mu_);  // addresses to send a whole state
  // Publish could not allocate a frame: every member gets a whole state.
  std::atomic<bool> resync_all_{false};
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  // Read and replaced with std::atomic_load/atomic_store; replaced under mu_.
  std::shared_ptr<const std::vector<std::string>> peers_ =
      std::make_shared<const std::vector<std::string>>();
  std::shared_ptr<const View> view_ = std::make_shared<const View>();
  std::atomic<bool> ready_{false};  // may decide (rule 2); written under mu_
  // Moves on every loss of standing (under mu_); a decision let through
  // under an older one is not sent, and its outcome is unknown (SendDecision,
  // Decide).
  std::atomic<uint64_t> standing_gen_{0};
  std::condition_variable ready_cv_;      // with mu_: ready_ or the view changed
  std::atomic<bool> force_local_{false};  // the tests' TestForceLocalRouting
  // Strict mode's arbiter (o_.arbiter == kEtcd): built by Start, once the
  // store is attached; null in gossip mode.
  std::unique_ptr<EtcdArbiter> etcd_;
  EtcdMembers etcd_members_ ABSL_GUARDED_BY(mu_);
  int64_t etcd_members_revision_ ABSL_GUARDED_BY(mu_) = 0;

  // Chains of route requests (ephpm/route_deferral.h).  Asking: numbers.
  const uint64_t chain_base_ =
      std::random_device{}() * uint64_t{0x100000000} ^ std::random_device{}();
  std::atomic<uint64_t> chain_count_{1};
  uint64_t view_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // Deciding: for each chain heard from, the position it may take next and
  // the latest deadline of its requests.
  struct Chain {
    uint64_t next = 0;
    int64_t deadline = 0;
  };
  Mutex chain_mu_;  // a leaf
  std::map<uint64_t, Chain> chains_ ABSL_GUARDED_BY(chain_mu_);
  Mutex batches_mu_;  // a leaf
  std::map<std::string, std::shared_ptr<DecisionBatch>> batches_ ABSL_GUARDED_BY(batches_mu_);
  std::map<std::string, std::shared_ptr<RouteBatch>> route_batches_ ABSL_GUARDED_BY(batches_mu_);
  size_t chains_sweep_at_ ABSL_GUARDED_BY(chain_mu_) = 1024;

  std::atomic<uint64_t> decision_batches_{0};  // kDecisionBatch frames sent
  std::atomic<uint64_t> route_batches_sent_{0};  // kRouteBatch frames sent
  std::atomic<uint64_t> mutations_published_{0};
  std::atomic<uint64_t> mutations_received_{0};
  std::atomic<uint64_t> frames_dropped_{0};  // replication frames over a peer's queue cap
  std::atomic<uint64_t> full_syncs_sent_{0};
  std::atomic<uint64_t> routed_calls_{0};           // decisions asked of another owner
  std::atomic<uint64_t> routed_unreachable_{0};     // ... that got no answer in time
  std::atomic<uint64_t> routed_decided_{0};         // decisions made here for another node
  std::atomic<uint64_t> routed_refused_{0};         // ... refused: late, not the owner, not ready
  std::atomic<uint64_t> decisions_confirmed_{0};    // changes confirmed by every member
  std::atomic<uint64_t> decisions_unconfirmed_{0};  // ... not: answered "unknown", forgotten
  std::atomic<uint64_t> decisions_refused_{0};      // others' decisions this member refused
  std::atomic<uint64_t> standing_lost_{0};          // times this node had to catch up
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_NODE_IMPL_H_
