// A client of etcd v3 (3.4) over its JSON gateway: HTTP/1.1 POSTs to the
// /v3/... endpoints of the members' client URLs, JSON bodies, keys and
// values base64-encoded, 64-bit integers as JSON strings.
//
// Every call takes a deadline on SteadyMs()'s clock and never blocks past
// it: the connection, the request and the answer are all bounded by it (an
// etcd without quorum holds a request for its own ~6 s before it answers).
// A member that cannot be reached or answers "unavailable" is left for the
// next one, round-robin from the last member that answered, with a short
// pause between attempts, until the deadline.  Nothing here throws.
//
// Thread-safe: any number of threads may call one client at once.  Each
// call checks a keep-alive connection out of a small per-member pool, does
// its request with no lock held, and gives the connection back only after a
// clean exchange.

#ifndef EPHPM_CLUSTER_ETCD_CLIENT_H_
#define EPHPM_CLUSTER_ETCD_CLIENT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ephpm {
namespace cluster {

// Milliseconds of the monotonic clock (std::chrono::steady_clock), defined
// in node.cc; the deadlines below are on this clock.
int64_t SteadyMs();

// A key-value pair as etcd stores it.  Keys and values are arbitrary bytes.
struct EtcdKv {
  std::string key, value;
  int64_t create_revision = 0, mod_revision = 0, version = 0, lease = 0;
};

// One comparison of a transaction: `target` of `key` compared (`result`)
// with `number` (version, create or mod revision, lease id) or `value`.
// A key that does not exist has version, revisions and lease 0.
struct EtcdCompare {
  enum class Target { kVersion, kCreate, kMod, kValue, kLease };
  enum class Result { kEqual, kNotEqual, kGreater, kLess };
  std::string key;
  Target target = Target::kCreate;
  Result result = Result::kEqual;
  int64_t number = 0;  // version / revision / lease
  std::string value;   // kValue
};

// One operation of a transaction.  An empty range_end means the key alone;
// see EtcdPrefixEnd for a prefix.
struct EtcdOp {
  enum class Kind { kRange, kPut, kDelete };
  Kind kind = Kind::kRange;
  std::string key, range_end, value;
  int64_t lease = 0;     // kPut: 0 for none
  bool prev_kv = false;  // kDelete: return the deleted pairs
  // kPut: keep the key's value, change only its lease (etcd fails the
  // transaction when the key does not exist).
  bool ignore_value = false;
  static EtcdOp Range(std::string key, std::string range_end = {});
  static EtcdOp Put(std::string key, std::string value, int64_t lease = 0);
  static EtcdOp Delete(std::string key, bool prev_kv = false);
  // A delete of [key, range_end).
  static EtcdOp DeleteRange(std::string key, std::string range_end, bool prev_kv = false);
};

struct EtcdOpResult {
  std::vector<EtcdKv> kvs;  // range: the pairs found; delete: the deleted ones (prev_kv)
  int64_t deleted = 0;      // delete: how many
};

struct EtcdTxnResult {
  bool succeeded = false;  // whether every comparison held (the success ops ran)
  int64_t revision = 0;    // the store's revision after the transaction
  std::vector<EtcdOpResult> responses;  // one per op of the branch that ran
};

struct EtcdEvent {
  bool deleted = false;  // else a put
  EtcdKv kv;             // a delete: the key and its mod_revision (the delete's)
};

struct EtcdStatus {
  enum class Code { kOk, kUnavailable, kRejected, kMalformed };
  // kUnavailable: no endpoint answered before the deadline (connect refused,
  //   timeout, 5xx/503, or etcd's own "request timed out"/"no leader"/
  //   "leader changed" errors): the outcome is unknown if sent.
  // kRejected: etcd answered with a definite error (e.g. lease not found,
  //   invalid argument): nothing applied.
  // kMalformed: an answer we cannot parse.
  Code code = Code::kOk;
  std::string message;
  bool sent = false;  // at least one attempt may have reached etcd
  // An attempt was sent after an earlier one that may also have reached
  // etcd (its answer lost): the outcome is the last attempt's, and an
  // earlier one may have been applied before it.  A caller whose request is
  // not harmless to apply twice must read an answer with `resent` in that
  // light (a compare that fails may be the earlier attempt's doing).
  bool resent = false;
  bool ok() const { return code == Code::kOk; }
};

struct EtcdClientOptions {
  std::vector<std::string> endpoints;  // "host:port" (an IP address, or a name resolved per connection)
  int64_t connect_timeout_ms = 500;    // per attempt
  // One attempt (connect, request, answer) on one member gets at most this
  // much of the deadline before the next member is tried (0: the whole
  // deadline).  A request a follower forwarded to a leader that just died
  // is lost, and etcd answers it only after its own ~6 s timeout: this is
  // what lets a call fail over to another member within its deadline.  An
  // attempt cut short may still be applied: the call's `sent` says so.
  int64_t attempt_timeout_ms = 2000;
  // A watch's connection, request and etcd's "created" answer must all
  // come within this, else the watch ends (on_end).
  int64_t watch_create_timeout_ms = 5000;
  // Idle keep-alive connections kept per endpoint.
  size_t max_idle_per_endpoint = 8;
};

class EtcdClient {
 public:
  explicit EtcdClient(EtcdClientOptions o);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  // A transaction: if every `compare` holds, `success` runs, else `failure`.
  EtcdStatus Txn(const std::vector<EtcdCompare>& compare, const std::vector<EtcdOp>& success,
                 const std::vector<EtcdOp>& failure, int64_t deadline_ms, EtcdTxnResult* out);
  // The pairs in [key, range_end) (the key alone when range_end is empty),
  // linearizable, and the store's revision.  Either output may be null.
  EtcdStatus Range(const std::string& key, const std::string& range_end, int64_t deadline_ms,
                   std::vector<EtcdKv>* kvs, int64_t* revision);
  // `revision` may be null.  lease: 0 for none.
  EtcdStatus Put(const std::string& key, const std::string& value, int64_t lease,
                 int64_t deadline_ms, int64_t* revision);
  // A new lease of ttl_s seconds; *id its id, *ttl_granted the TTL etcd chose.
  EtcdStatus LeaseGrant(int64_t ttl_s, int64_t deadline_ms, int64_t* id, int64_t* ttl_granted);
  // Renews the lease once.  *ttl_left = remaining TTL in seconds as etcd
  // reports it; 0 when the lease no longer exists (etcd answers an expired
  // or unknown lease with no TTL, not with an error).
  EtcdStatus LeaseKeepAlive(int64_t id, int64_t deadline_ms, int64_t* ttl_left);
  // Revokes the lease, deleting its keys.  An unknown lease: kRejected.
  EtcdStatus LeaseRevoke(int64_t id, int64_t deadline_ms);

  // A watch on [key, range_end) (the key alone when range_end is empty)
  // from start_revision (0: from now), on a thread of its own, over a
  // connection of its own to one member (the client's last good one first).
  // on_events runs on that thread for every batch of events, with the
  // batch's header revision; on_end runs once when the stream ends for any
  // reason other than Cancel (no member reachable, the connection lost, the
  // start revision compacted, canceled by etcd) with a reason string; after
  // on_end the watch is dead and the owner starts a new one (from the last
  // revision seen + 1).  Cancel() (and the destructor) stop it and join its
  // thread, interrupting a blocked connect or read; no callback runs after
  // Cancel returns.  Neither may be called from the watch's own callbacks.
  // A member that is up but stalled (SIGSTOPped, partitioned) keeps a watch
  // silent, not ended: the owner detects that by other means (keepalives).
  // The watch needs nothing of the client: it may outlive it.
  class Watch {
   public:
    virtual ~Watch() = default;
    virtual void Cancel() = 0;
  };
  std::unique_ptr<Watch> StartWatch(
      const std::string& key, const std::string& range_end, int64_t start_revision,
      std::function<void(const std::vector<EtcdEvent>&, int64_t revision)> on_events,
      std::function<void(const std::string& reason)> on_end);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The range end that makes [prefix, end) every key starting with `prefix`:
// the prefix with its last byte below 0xff incremented and what follows it
// dropped (etcd's WithPrefix rule); "\0" (every key from `prefix` on) when
// there is no such byte.
std::string EtcdPrefixEnd(std::string prefix);

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_ETCD_CLIENT_H_
