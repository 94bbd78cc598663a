// A cluster node: several ephpm processes forming one store.
//
//  - Membership: a SWIM-style protocol.  Every probe interval a node pings
//    the next member of a shuffled round; without an ack within the probe
//    timeout it asks k others to ping it (ping-req); without any ack by the
//    end of the interval the member becomes suspect, and after the
//    suspicion timeout dead.  A member that hears it is suspected refutes
//    with a higher incarnation.  Changes ride on the probes (gossip), each
//    sent a few times (3 x log2(n+1)).  A node joins through any member,
//    which answers with every member it knows; members also exchange their
//    whole lists now and then, so views converge.
//  - Data plane: node-to-node TCP (Boost.Asio), versioned length-prefixed
//    frames (wire.h), one reused connection per peer, a bounded send queue
//    per peer, a timeout per request.
//  - Owner arbitration: set_nx, del_if_eq, set_if_eq, incr_by, the lock
//    API's fenced grant, expire_if_eq, fenced write and the conditional SET
//    and DELEX (and reads that must see the owner's latest decision: a
//    session's data, a lock's state) are decided by the key's
//    owner (owner.h) among the members this node holds alive.  Another node
//    forwards them (Route*) and waits up to the request timeout; no answer is
//    kOwnerUnreachable, never a local guess.  The owner decides with the
//    Store's _local operation, never forwarding again, and replicates the
//    result.
//  - Replication: every client write is stamped with a hybrid logical clock
//    reading and this node's id (Replicator::NextStamp) and published to
//    every member not known dead; Store::ApplyReplicated keeps the newest
//    stamp per key (last writer wins, tombstones for deletions).  A node
//    that joins asks a member for its whole state; when a member comes back
//    from dead (a restart or a healed partition) each side sends it its own
//    state.  Reads are local.
//
// Thread-safe.  The parts (node_impl.h declares how they fit): hlc.h (the
// clock), transport.h (connections and frames; fault_transport.h wraps it
// in the tests), rpc.h (requests with timeouts), membership.{h,cc} (SWIM),
// replication.cc (publish, full sync, standing), router.cc and
// route_codec.h (owner routing, both sides).
//
// Lock order.  Every field a lock guards is annotated (clang's
// -Wthread-safety checks it).  A lock on the left may be held while taking
// the ones on its right, never the other way round:
//
//   store shard lock -> any node lock.  The store calls NextStamp,
//       Tentative and Publish while it holds a key's shard lock; Publish
//       takes, one at a time, Decision::mu, Rpc::mu_, TcpTransport::mu_
//       (then Conn::mu_), Impl::mu_ (LinkFailed, when a frame is dropped;
//       in a testing build also to name the peer at an address) and
//       FaultTransport::mu_.  So the node never
//       calls into the store (ApplyReplicated, ForEachForSync, the _Local
//       operations, ForgetLocal, ConfirmLocal) while holding a lock of its own.
//   TcpTransport::mu_ -> Conn::mu_   (whether a link is closed)
//   FaultTransport::mu_ -> Impl::mu_ (a lifted cut marks the peer for resync)
//   Impl::mu_ (membership and standing), Decision::mu, Rpc::mu_, Conn::mu_,
//   FaultTransport::pause_mu_ and a Handoff's mu are held alone: nothing is
//   sent, no request is completed and no callback runs under them.

#ifndef EPHPM_CLUSTER_NODE_H_
#define EPHPM_CLUSTER_NODE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ephpm/replicator.h"
#include "ephpm/store.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

struct ClusterOptions {
  std::string node_id;                  // unique in the cluster
  std::string listen = "127.0.0.1:0";   // data plane; port 0 = any free port
  std::vector<std::string> join;        // addresses of members to join through
  int64_t probe_interval_ms = 200;      // one probe per interval
  int64_t probe_timeout_ms = 100;       // direct ack expected within this
  int indirect_probes = 2;              // members asked to ping-req
  int64_t suspicion_timeout_ms = 1000;  // suspect -> dead
  int64_t request_timeout_ms = 500;     // any request/response exchange
  // How far two members' wall clocks may differ.  A member refuses a routed
  // request or a decision whose deadline (the asker's wall clock) is within
  // this of its own clock: the asker has answered "unknown", or is about to.
  // Must be less than request_timeout_ms.
  int64_t max_clock_skew_ms = 100;
  int64_t members_sync_every = 10;     // intervals between full member-list exchanges
  size_t max_queue_bytes = 64u << 20;  // a peer's unsent frames; beyond: resync it
  size_t io_threads = 1;

  // Who decides locks (docs/CLUSTER.md, "Strict mode").  kGossip: the key's
  // owner among the members (the rule above).  kEtcd: etcd transactions
  // (etcd_arbiter.h), with membership registered under an etcd lease.
  enum class Arbiter { kGossip, kEtcd };
  Arbiter arbiter = Arbiter::kGossip;
  std::vector<std::string> etcd_endpoints;  // host:port of etcd's clients
  std::string etcd_prefix = "/ephpm";       // every key of this cluster in etcd
  int64_t etcd_timeout_ms = 1000;           // one lock operation in etcd
  int64_t etcd_lease_ttl_s = 5;             // the membership lease
};

// Sizes time bounds from the options: a member that stops answering is seen
// dead by every other member within this (detection, suspicion, and the
// gossip's spread).
int64_t FailureDetectionBoundMs(const ClusterOptions& o, size_t members);
// A member that joins is known to every member within this.
int64_t JoinBoundMs(const ClusterOptions& o, size_t members);

class ClusterNode final : public Replicator {
 public:
  explicit ClusterNode(ClusterOptions options);
  ~ClusterNode() override;  // Stop()s

  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // Binds the data plane.  Call before the Store is built (so its address is
  // known), then Attach the store, then Start.
  bool Listen(std::string* error);
  // The store this node replicates (built with this node as its replicator).
  void Attach(Store* store);
  // Starts probing and joining.
  void Start();
  // Leaves: stops probing, closes every connection, joins the I/O threads.
  void Stop();

  const std::string& id() const;
  std::string address() const;  // the bound data-plane address

  // This node's view: every member it knows, itself included, by id.
  std::vector<MemberRecord> Members() const;
  // Ids of the members it holds alive (suspect counts as alive), sorted.
  std::vector<std::string> AliveIds() const;
  // The id of key's owner in this node's view.
  std::string OwnerOf(std::string_view key) const;
  // Whether this node may decide now: it holds a majority of the members it
  // knows alive and has caught up with every one of them (docs/CLUSTER.md).
  bool Ready() const;

  // Replicator
  Stamp NextStamp() override;
  void Publish(const Mutation& m) noexcept override;
  bool Tentative() const override;
  bool Info(ClusterInfo* info) const override;
  Routed<SetNxOutcome> RouteSetNx(std::string_view key, std::string_view value,
                                  int64_t ttl_ms) override;
  Routed<SetNxOutcome> RouteSetNxEphemeral(std::string_view key, std::string_view value,
                                           int64_t ttl_ms) override;
  Routed<DelIfEqOutcome> RouteDelIfEq(std::string_view key, std::string_view token) override;
  Routed<SetIfEqOutcome> RouteSetIfEq(std::string_view guard_key, std::string_view token,
                                      std::string_view key, std::string_view value,
                                      int64_t ttl_ms) override;
  Routed<DelIfGuardEqOutcome> RouteDelIfGuardEq(std::string_view guard_key, std::string_view token,
                                                std::string_view key) override;
  Routed<ExpireIfGuardEqOutcome> RouteExpireIfGuardEq(std::string_view guard_key,
                                                      std::string_view token, std::string_view key,
                                                      int64_t ttl_ms) override;
  Routed<IncrByReply> RouteIncrBy(std::string_view key, int64_t delta) override;
  Routed<GetReply> RouteGet(std::string_view key) override;
  Routed<FencedGrant> RouteSetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                                       bool ephemeral) override;
  Routed<ExpireIfEqOutcome> RouteExpireIfEq(std::string_view key, std::string_view token,
                                            int64_t ttl_ms) override;
  Routed<SetFencedOutcome> RouteSetFenced(std::string_view key, std::string_view value,
                                          uint64_t fence, int64_t ttl_ms) override;
  Routed<LockStateReply> RouteLockState(std::string_view key, std::string_view token) override;
  Routed<SetWithReply> RouteSetWith(std::string_view key, std::string_view value,
                                    const SetOptions& options) override;
  Routed<DelExReply> RouteDelEx(std::string_view key, const ValueCondition& condition) override;
  bool SameOwner(const std::vector<std::string_view>& keys) override;
  std::string RemoteOwner(std::string_view key) override;

  // The test hooks, defined only in the testing library
  // (ephpm_cluster_testing, node_faults.cc): the shipped one has none, so a
  // call to them from a shipped program does not link.
  //
  // Drop every frame to and from `peer` (a partition).
  void TestCutOff(const std::string& peer, bool cut);
  // Delay every frame this node sends to `peer`.
  void TestDelay(const std::string& peer, int64_t ms);
  // Delay only the replication this node sends to `peer` (requests and
  // answers go at once): a node whose copy lags behind.
  void TestDelayReplication(const std::string& peer, int64_t ms);
  // The next `n` frames of `type` (a MsgType's value) this node sends to
  // `peer` fail as if no memory could be had for them: the send throws
  // std::bad_alloc.
  void TestFailSends(const std::string& peer, uint8_t type, int n);
  // Move this node's wall clock (for stamps) by `ms`.
  void TestSkewClock(int64_t ms);
  // Freeze this node's network side (every I/O thread, so no frame is read
  // or sent, no timer fires, no probe goes out) until called with false: a
  // process stopped with SIGSTOP, as far as its peers can tell.  Callers of
  // the store keep running.
  void TestPause(bool paused);
  // Decide every routed operation locally, as if there were no owner (the
  // design note's bugs, for the tests that show them).
  void TestForceLocalRouting(bool local);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_NODE_H_
