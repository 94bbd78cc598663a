// The replication seam.  A Store calls its Replicator (if any) on every
// client-visible mutation, and asks it where the decision for set_nx and
// del_if_eq is made before touching its own map.  A single node installs no
// replicator, or one whose routing hooks keep the default "decide locally".

#ifndef EPHPM_REPLICATOR_H_
#define EPHPM_REPLICATOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ephpm/types.h"

namespace ephpm {

// The cluster as one node sees it, for INFO and ephpm_kv_info().
struct ClusterMemberInfo {
  std::string id;
  std::string address;  // "host:port" of its data plane
  std::string state;    // "alive", "suspect" or "dead"
  uint64_t incarnation = 0;
};
struct ClusterInfo {
  std::string node_id;
  std::string address;
  // Named counts ("incarnation", "alive", "routed_calls", ...), in the order
  // INFO shows them; names are only ever appended.
  std::vector<std::pair<std::string, uint64_t>> counters;
  std::vector<ClusterMemberInfo> members;  // every member known, self included
};

// INFO's cluster section: "cluster_node_id:...", "cluster_address:...", a
// "cluster_NAME:VALUE" line per counter, then "cluster_memberN:id=...,
// address=...,state=...,incarnation=..." per member; each line ends in "\n".
std::string FormatClusterInfo(const ClusterInfo& info);

// Where a routed decision was made.
template <typename Outcome>
struct Routed {
  enum class Where : uint8_t {
    kLocal,             // decide on this node (the caller runs the _local op)
    kOwner,             // the owner decided; `outcome` is its answer
    kOwnerUnreachable,  // the owner could not be asked; outcome unknown
  };
  Where where = Where::kLocal;
  Outcome outcome{};

  static Routed Local() { return Routed{}; }
  static Routed Owner(Outcome o) { return Routed{Where::kOwner, o}; }
  static Routed Unreachable() { return Routed{Where::kOwnerUnreachable, Outcome{}}; }
};

// Thread-safe: every method is called concurrently from many threads.
class Replicator {
 public:
  virtual ~Replicator() = default;

  // Asked by Store::SetNx before it looks at the local map.  An owner that
  // receives a forwarded request must call Store::SetNxLocal, never SetNx, so a
  // request cannot bounce between nodes that disagree about ownership.
  virtual Routed<SetNxOutcome> RouteSetNx(std::string_view key,
                                          std::string_view value,
                                          int64_t ttl_ms) {
    (void)key, (void)value, (void)ttl_ms;
    return Routed<SetNxOutcome>::Local();
  }

  // Asked by Store::SetNxEphemeral: as RouteSetNx, for a lock held by a
  // request, which the owner takes with Store::SetNxEphemeralLocal so that
  // no member logs it (docs/PERSISTENCE.md).  A replicator that does not
  // tell the two apart routes it as a plain set_nx.
  virtual Routed<SetNxOutcome> RouteSetNxEphemeral(std::string_view key,
                                                   std::string_view value,
                                                   int64_t ttl_ms) {
    return RouteSetNx(key, value, ttl_ms);
  }

  // Asked by Store::DelIfEq before it looks at the local map; the owner runs
  // Store::DelIfEqLocal.
  virtual Routed<DelIfEqOutcome> RouteDelIfEq(std::string_view key,
                                              std::string_view token) {
    (void)key, (void)token;
    return Routed<DelIfEqOutcome>::Local();
  }

  // Asked by Store::SetIfEq; the owner (of the guard key) runs
  // Store::SetIfEqLocal.
  virtual Routed<SetIfEqOutcome> RouteSetIfEq(std::string_view guard_key,
                                              std::string_view token, std::string_view key,
                                              std::string_view value, int64_t ttl_ms) {
    (void)guard_key, (void)token, (void)key, (void)value, (void)ttl_ms;
    return Routed<SetIfEqOutcome>::Local();
  }

  // Asked by Store::DelIfGuardEq; the owner (of the guard key) runs
  // Store::DelIfGuardEqLocal.
  virtual Routed<DelIfGuardEqOutcome> RouteDelIfGuardEq(std::string_view guard_key,
                                                        std::string_view token,
                                                        std::string_view key) {
    (void)guard_key, (void)token, (void)key;
    return Routed<DelIfGuardEqOutcome>::Local();
  }

  // Asked by Store::ExpireIfGuardEq; the owner (of the guard key) runs
  // Store::ExpireIfGuardEqLocal.
  virtual Routed<ExpireIfGuardEqOutcome> RouteExpireIfGuardEq(std::string_view guard_key,
                                                              std::string_view token,
                                                              std::string_view key,
                                                              int64_t ttl_ms) {
    (void)guard_key, (void)token, (void)key, (void)ttl_ms;
    return Routed<ExpireIfGuardEqOutcome>::Local();
  }

  // The stamp for a local client write, asked while the key's shard lock is
  // held (so one key's stamps increase in the order its writes apply).
  // The default, no stamp, is right for a single node.  REQUIRES: fast,
  // thread-safe, no I/O.
  virtual Stamp NextStamp() { return Stamp{}; }

  // Fills *info and returns true when this node is part of a cluster; the
  // default, false, is right for a single node.  REQUIRES: thread-safe.
  virtual bool Info(ClusterInfo* info) const {
    (void)info;
    return false;
  }

  // Info() as INFO's lines (FormatClusterInfo); "" for none.
  virtual std::string Describe() const {
    ClusterInfo info;
    return Info(&info) ? FormatClusterInfo(info) : std::string();
  }

  // Called after a mutation is applied, while the key's shard lock is still
  // held, so calls for one key arrive in the order they were applied.
  // REQUIRES: must not block, do I/O, or call back into the Store; copy what
  // it needs and hand it to another thread.  Must not throw either: the
  // change is already applied, so a replicator that cannot allocate makes up
  // for it later (a cluster node sends its peers a whole state).  Expiry and
  // eviction are local and are not published.
  virtual void Publish(const Mutation& m) noexcept { (void)m; }

  // Asked with Publish, on the same thread under the same lock: whether this
  // mutation is tentative, a decision the other members have not confirmed
  // yet.  The store then keeps it out of a full sync until the replicator
  // calls Store::ConfirmLocal (or drops it with Store::ForgetLocal).
  virtual bool Tentative() const { return false; }

  // Asked by Store::IncrBy before it looks at the local map; the owner runs
  // Store::IncrByLocal.
  virtual Routed<IncrByReply> RouteIncrBy(std::string_view key, int64_t delta) {
    (void)key, (void)delta;
    return Routed<IncrByReply>::Local();
  }

  // Asked by Store::GetFromOwner: a read that must see the owner's latest
  // decision (a session's data while its lock is held), made with
  // Store::Get on the owner.
  virtual Routed<GetReply> RouteGet(std::string_view key) {
    (void)key;
    return Routed<GetReply>::Local();
  }

  // Asked by Store::SetNxFenced; the owner runs Store::SetNxFencedLocal (its
  // fence clock grants the fence).
  virtual Routed<FencedGrant> RouteSetNxFenced(std::string_view key, std::string_view value,
                                               int64_t ttl_ms, bool ephemeral) {
    (void)key, (void)value, (void)ttl_ms, (void)ephemeral;
    return Routed<FencedGrant>::Local();
  }

  // Asked by Store::ExpireIfEq; the owner runs Store::ExpireIfEqLocal.
  virtual Routed<ExpireIfEqOutcome> RouteExpireIfEq(std::string_view key,
                                                    std::string_view token, int64_t ttl_ms) {
    (void)key, (void)token, (void)ttl_ms;
    return Routed<ExpireIfEqOutcome>::Local();
  }

  // Asked by Store::SetFenced; the owner runs Store::SetFencedLocal.
  virtual Routed<SetFencedOutcome> RouteSetFenced(std::string_view key, std::string_view value,
                                                  uint64_t fence, int64_t ttl_ms) {
    (void)key, (void)value, (void)fence, (void)ttl_ms;
    return Routed<SetFencedOutcome>::Local();
  }

  // Asked by Store::LockState; the owner runs Store::LockStateLocal.
  virtual Routed<LockStateReply> RouteLockState(std::string_view key, std::string_view token) {
    (void)key, (void)token;
    return Routed<LockStateReply>::Local();
  }

  // Asked by Store::SetWith when options.condition is set; the owner runs
  // Store::SetWithLocal.
  virtual Routed<SetWithReply> RouteSetWith(std::string_view key, std::string_view value,
                                            const SetOptions& options) {
    (void)key, (void)value, (void)options;
    return Routed<SetWithReply>::Local();
  }

  // Asked by Store::DelEx when a condition is given; the owner runs
  // Store::DelExLocal.
  virtual Routed<DelExReply> RouteDelEx(std::string_view key, const ValueCondition& condition) {
    (void)key, (void)condition;
    return Routed<DelExReply>::Local();
  }

  // Whether all these keys have one owner (a multi-key command is refused
  // otherwise).  Always true on a single node.
  virtual bool SameOwner(const std::vector<std::string_view>& keys) {
    (void)keys;
    return true;
  }

  // "" when this node decides for `key` (its owner, or a single node);
  // else the owner's address.  A transaction or a script runs where its
  // keys are decided (Store::Atomically on the owner's shards), never on a
  // member's copy.
  virtual std::string RemoteOwner(std::string_view key) {
    (void)key;
    return "";
  }
};

}  // namespace ephpm

#endif  // EPHPM_REPLICATOR_H_
