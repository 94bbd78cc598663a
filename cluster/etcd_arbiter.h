// Strict mode: lock decisions made in etcd (docs/CLUSTER.md, "Strict mode").
//
// A node started with --cluster-arbiter etcd keeps its store, its data plane
// and its replication, but the lock operations are etcd transactions, never a
// decision of its own:
//
//   grant    Txn(If create_revision(L) == 0 and mod_revision(O) == m,
//                Then Put(L, token, lease), Put(F, "offset nonce", lease))
//   release  Txn(If value(L) == token, Then Delete(L), Delete(F))
//   refresh  Txn(If value(L) == token, Then Put(L, lease'), Put(F, lease'))
//   check    Txn(If value(L) == token, Then Range(L), Range(F))
//
// with L = <prefix>/locks/<key>, F = <prefix>/fences/<key>, O =
// <prefix>/fence-offset.  etcd's linearizable transactions make one holder;
// the lease makes a holder that never releases lose the lock.  Locks share
// leases: every lock this node grants within about half a second, with TTLs
// of the same class, goes under one lease that certainly lives at least the
// lock's TTL and at most about 1% + 1.6 s longer (LockLeaseSeconds); a
// lease is never revoked (other locks may be under it): it expires at its
// TTL, with any lock still under it.  So a lock cycle
// costs two Raft writes (grant, release), not four (a lease grant and its
// revoke besides).
//
// The fence of a grant is offset + the revision that created L.  Revisions
// strictly increase across the whole etcd cluster, so fences do too while
// the offset stays; the offset only ever rises, each time to a value above
// every fence granted before (EnsureOffset), so fences never go back, also
// across a switch from gossip mode (whose fences are hybrid logical clock
// readings) to strict mode and back: see EnsureOffset and docs/CLUSTER.md.
//
// Membership: the node registers <prefix>/members/<id> = its data-plane
// address under a lease it keeps alive.  It answers lock operations only
// while that lease is certainly alive by its own monotonic clock, with a
// margin for clock drift (ServingUntil); otherwise CLUSTERDOWN.
//
// The lock key is mirrored into the local store (and so replicated) after a
// grant, a refresh or a release, so that GET and the session handler's wait
// see it; the mirror is never consulted for a decision.
//
// Thread-safe.

#ifndef EPHPM_CLUSTER_ETCD_ARBITER_H_
#define EPHPM_CLUSTER_ETCD_ARBITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ephpm/replicator.h"
#include "ephpm/store.h"
#include "etcd_client.h"
#include "mutex.h"

namespace ephpm {
namespace cluster {

struct EtcdArbiterOptions {
  std::vector<std::string> endpoints;  // etcd client addresses, host:port
  std::string prefix = "/ephpm";       // every key this cluster writes is under it
  std::string node_id;
  std::string address;          // the node's data plane, the value of its member key
  int64_t timeout_ms = 1000;    // one lock operation, every retry included
  int64_t lease_ttl_s = 5;      // the membership lease
};

// The lease arithmetic (docs/CLUSTER.md, "Strict mode: the lease"): a
// keepalive sent at local monotonic time t that etcd answers with TTL s
// proves the lease lives until at least t + s on the leader's clock, since
// the leader renewed it after t.  Measured on this node's clock, which may
// run up to kDriftPpm slower than the leader's, that is at least
// t + s * (1 - kDriftPpm / 1e6); the node stops deciding kMarginMs before
// that, for the time between its check and the operation it lets through.
inline constexpr int64_t kLeaseDriftPpm = 10'000;  // 1%: 20x a bad crystal's 500 ppm
inline constexpr int64_t kLeaseMarginMs = 100;
// The local monotonic time until which a lease renewed at `sent_ms` with
// `ttl_s` seconds left may be relied on.
int64_t LeaseServingUntil(int64_t sent_ms, int64_t ttl_s);

// Lock leases: a lease of T seconds granted at local time g carries a lock
// of ttl_ms asked for at time now when now + ttl_ms <= LeaseServingUntil(g,
// T).  LockLeaseSeconds(ttl_ms) is the smallest T that leaves a lease
// usable for kLockLeaseReuseMs after its grant: a crashed holder's lock
// lives at most about 1% + kLockLeaseReuseMs + kLeaseMarginMs + 1 s (the
// rounding to seconds) beyond its TTL.
inline constexpr int64_t kLockLeaseReuseMs = 500;
int64_t LockLeaseSeconds(int64_t ttl_ms);

// What a token check on a guard found.
struct EtcdHold {
  enum class Kind { kHolds, kNotHeld, kUnreachable };
  Kind kind = Kind::kUnreachable;
  uint64_t fence = 0;  // kHolds: the grant's fence
};

// The members registered in etcd (id -> data-plane address) as of an etcd
// revision.
using EtcdMembers = std::map<std::string, std::string>;

class EtcdArbiter {
 public:
  // `clock_floor` reads the node's fence floor (at least every fence the
  // node has granted, seen or loaded), or nullopt while the node is not
  // ready to tell (it has not caught up with the members' states yet);
  // `observe_fence` moves the node's clock past a fence granted here.
  // `on_members` gets every new member list with the etcd revision it was
  // read at, from the lease thread, the watch's thread or a caller of
  // RefreshMembers, never under a lock of the arbiter; lists can arrive out
  // of order, so it keeps the one of the highest revision.
  EtcdArbiter(EtcdArbiterOptions o, Store* store,
              std::function<std::optional<uint64_t>()> clock_floor,
              std::function<void(uint64_t)> observe_fence,
              std::function<void(const EtcdMembers&, int64_t revision)> on_members);
  ~EtcdArbiter();  // Stop()s

  EtcdArbiter(const EtcdArbiter&) = delete;
  EtcdArbiter& operator=(const EtcdArbiter&) = delete;

  // Starts the lease thread (registration, keepalive, the fence offset);
  // returns at once.  Until etcd has answered, lock operations are refused.
  void Start();
  void Stop();

  // Whether this node may answer lock operations now.
  bool Serving() const;

  // Reads the member list now (linearizable) and hands it to on_members;
  // false when etcd did not answer by deadline_ms (SteadyMs).
  bool RefreshMembers(int64_t deadline_ms) ABSL_LOCKS_EXCLUDED(mu_);
  // Asks the lease thread to read the member list soon (an asker had a
  // newer one).
  void RequestRefresh() ABSL_LOCKS_EXCLUDED(mu_);

  Routed<SetNxOutcome> SetNx(std::string_view key, std::string_view value, int64_t ttl_ms);
  Routed<FencedGrant> SetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms);
  Routed<DelIfEqOutcome> DelIfEq(std::string_view key, std::string_view token);
  Routed<ExpireIfEqOutcome> ExpireIfEq(std::string_view key, std::string_view token,
                                       int64_t ttl_ms);
  Routed<LockStateReply> LockState(std::string_view key, std::string_view token);
  // Whether `token` holds guard_key's lock, and the grant's fence.
  EtcdHold Holds(std::string_view guard_key, std::string_view token);

  // INFO's etcd_* counters.
  void Counters(std::vector<std::pair<std::string, uint64_t>>* out) const;

 private:
  struct Offset {
    uint64_t value = 0;
    int64_t mod_revision = 0;  // of the offset key; 0: not read yet
  };
  std::string LockKey(std::string_view key) const;
  std::string FenceKey(std::string_view key) const;
  std::string OffsetKey() const;
  std::string MemberKey() const;
  int64_t Deadline() const;
  // Reads the offset and, with may_raise (once, when this node starts in
  // strict mode), raises it above every fence granted so far when this
  // node's clock is past it.  A grant that finds the offset moved only
  // reads it again: raising it there too would make every node's grants
  // fail in turn.  False when etcd did not answer.
  bool EnsureOffset(int64_t deadline_ms, bool may_raise);
  Offset CurrentOffset() const ABSL_LOCKS_EXCLUDED(mu_);
  bool ArgsOk(std::string_view key, std::string_view value, int64_t ttl_ms) const;
  static EtcdCompare ValueIs(const std::string& key, std::string_view token);
  // One transaction, sent again while etcd answers "unavailable" and
  // deadline_ms (SteadyMs) has not passed: only for transactions that are
  // harmless to apply twice.  False (counted as refused) when etcd did not
  // answer in time.  *resent (optional): whether an earlier attempt may
  // have been applied, so that a compare failing now may be that attempt's
  // doing.
  bool TxnUntil(const std::vector<EtcdCompare>& compare, const std::vector<EtcdOp>& success,
                const std::vector<EtcdOp>& failure, int64_t deadline_ms, EtcdTxnResult* r,
                bool* resent = nullptr);
  FencedGrant Grant(std::string_view key, std::string_view value, int64_t ttl_ms, bool* unknown);
  void LeaseLoop();
  std::string MembersPrefix() const;
  // The watch on the members: (re)started by the lease thread from the
  // revision after the list it read.
  void WatchMembers(int64_t deadline_ms) ABSL_LOCKS_EXCLUDED(mu_);
  void MembersChanged(const std::vector<EtcdEvent>& events, int64_t revision)
      ABSL_LOCKS_EXCLUDED(mu_);
  // A lease for a lock of ttl_ms asked for now (0: none), shared with the
  // other locks of its class (see LockLeaseSeconds).  False when etcd did
  // not answer.
  bool LockLease(int64_t ttl_ms, int64_t deadline_ms, int64_t* lease) ABSL_LOCKS_EXCLUDED(mu_);

  const EtcdArbiterOptions o_;
  Store* const store_;
  const std::function<std::optional<uint64_t>()> clock_floor_;
  const std::function<void(uint64_t)> observe_fence_;
  const std::function<void(const EtcdMembers&, int64_t)> on_members_;
  EtcdClient client_;

  mutable Mutex mu_;
  std::condition_variable cv_;  // with mu_: stop, a refresh, a watch to restart
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  Offset offset_ ABSL_GUARDED_BY(mu_);
  // The lease locks go under, per lease length in seconds.
  struct LockLeaseSlot {
    int64_t id = 0;
    int64_t alive_until_ms = 0;  // LeaseServingUntil of its grant
  };
  std::map<int64_t, LockLeaseSlot> lock_leases_ ABSL_GUARDED_BY(mu_);
  EtcdMembers members_ ABSL_GUARDED_BY(mu_);
  int64_t members_revision_ ABSL_GUARDED_BY(mu_) = 0;
  bool watch_ended_ ABSL_GUARDED_BY(mu_) = false;
  bool refresh_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<EtcdClient::Watch> watch_;  // the lease thread's (and Stop's, after it)
  std::thread thread_;
  // Monotonic ms until which the membership lease is certainly alive.
  std::atomic<int64_t> serving_until_{0};
  std::atomic<int64_t> member_lease_{0};

  std::atomic<uint64_t> grants_{0};
  std::atomic<uint64_t> refused_{0};      // lock operations answered CLUSTERDOWN
  std::atomic<uint64_t> txns_failed_{0};  // etcd did not answer in time
  std::atomic<uint64_t> lease_renewals_{0};
  std::atomic<uint64_t> lease_lost_{0};
  std::atomic<uint64_t> offset_raised_{0};
  std::atomic<uint64_t> lock_leases_granted_{0};
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_ETCD_ARBITER_H_
