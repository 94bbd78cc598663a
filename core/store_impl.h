// Store::Impl, the store behind the public Store (leveldb's db_impl.h
// shape): the declaration of every operation and of the helpers they share.
// The definitions are spread by family: store_strings.cc, store_locks.cc,
// store_hashes.cc, store_keyspace.cc, replication.cc, eviction.cc,
// sweeper.cc and shard_ops.cc (the write machinery every family uses).
//
// Thread-safe: each operation takes the locks it needs.  A helper named
// ...Locked expects the shard lock its annotation names.
//
// Lock order: shard locks in index order (PairWrite, MultiLock), never
// another shard's out of order.  Under a shard lock the store may take
// flush_mu_ (ApplyReplicated reads the flush stamp) and call into the
// Replicator (PublishLocked: NextStamp, Tentative, Publish), which must
// not call back into the store.  A shard's wait_mu is taken only after
// its lock is released (ShardWrite, PairWrite), and sweep_mu_ never with
// a shard lock held.

#ifndef EPHPM_CORE_STORE_IMPL_H_
#define EPHPM_CORE_STORE_IMPL_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "compression.h"
#include "hit_counters.h"
#include "ephpm/store.h"
#include "mutex.h"
#include "persist.h"
#include "shard.h"

namespace ephpm {

// The database the calling thread addresses on one store
// (Store::DatabaseScope); 0 on any other store.
namespace db_scope {
// Read on every store call: initial-exec, so that a read is one load from
// the thread pointer instead of a call to __tls_get_addr (core/random.h says
// why the module's TLS block must stay small for that).
inline thread_local const void* store ABSL_ATTRIBUTE_INITIAL_EXEC = nullptr;
inline thread_local uint32_t db ABSL_ATTRIBUTE_INITIAL_EXEC = 0;
inline uint32_t Current(const void* impl) { return store == impl ? db : 0; }
}  // namespace db_scope


// The key of the log's kFenceMark that carries the fence floor (a key-less
// one carries the fence clock's mark).
inline constexpr std::string_view kFloorMarkKey = "floor";

// Where a decision is made (invariant 3 in docs/ARCHITECTURE.md): with a
// replicator, asks it (`ask`) and, when the key's owner decided, returns
// owner(its reply); an owner that could not be asked is `unreachable`,
// never replaced by a local guess.  Without a replicator, or when it says
// this node decides, returns local().
template <typename Result, typename Ask, typename Owner, typename Local>
Result Route(Replicator* replicator, Ask ask, Result unreachable, Owner owner, Local local) {
  if (replicator != nullptr) {
    auto routed = ask(*replicator);
    using Where = typename decltype(routed)::Where;
    switch (routed.where) {
      case Where::kLocal: break;
      case Where::kOwner: return owner(routed.outcome);
      case Where::kOwnerUnreachable: return unreachable;
    }
  }
  return local();
}

class Store::Impl {
 public:
  friend CheckDataReport CheckData(const std::string& data_dir);
  explicit Impl(const StoreOptions& o);
  ~Impl();
  // Starts the expiry sweeper, once the data dir (if any) is loaded: a
  // sweep in the middle of the load could remove an entry that a later
  // record makes live again.
  void StartSweeper();
  const StoreOptions& options() const { return options_; }
  // Before a limit applies, every shard counts globally (Shard::used folded
  // into used_, its pinned bytes into pinned_used_), so that a write under a
  // limit checks the whole total; without one, shards count locally again.
  // Takes every shard's lock in turn: from inside an atomic section only
  // when it holds every shard (RESP's EXEC of a CONFIG).
  void SetMemoryLimit(uint64_t bytes) ABSL_LOCKS_EXCLUDED(limit_mu_);
  // Makes `s` count globally, folding its part in, or locally again.
  void CountGloballyLocked(Shard& s, bool global) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  uint64_t memory_limit() const { return memory_limit_.load(std::memory_order_relaxed); }
  bool OverMemoryLimit() const {
    const uint64_t limit = memory_limit();
    return limit != 0 && !lru() && used_.load(std::memory_order_relaxed) > limit;
  }
  // The accounted total: used_ and every shard's local part.
  uint64_t MemoryUsed() const;
  int64_t NowMs() const { return clock_->NowMs(); }

  // --- persistence (persistence.cc) ---------------------------------------

  // Opens options_.persistence.data_dir, loading its data into this (still
  // private) store, and starts logging.  False and *error when it cannot.
  bool OpenPersistence(std::string* error);
  // Appends m to the log (when there is one) and notes its number for this
  // thread's WaitDurable.  Called under the lock(s) of m's key, or of every
  // shard for a flush, so that the log has each key's changes in order.
  void LogLocked(const Mutation& m);
  // A log group (persist.h): while the outermost scope on this thread is
  // open, the records it logs for the shards it holds (indices into
  // shards_, sorted) are kept and appended together when it closes, which
  // is before those locks are released (so every key's records stay in the
  // order of its changes).  Records for other shards go to the log at once.
  // A crash then loads all of a multi-key change or none of it.  Opened by
  // MultiLock, PairWrite and atomic sections.
  void OpenLogGroup(std::vector<size_t> held) const;
  void CloseLogGroup() const;
  class LogGroup {
   public:
    LogGroup(const Impl* impl, std::vector<size_t> held) : impl_(impl) {
      impl_->OpenLogGroup(std::move(held));
    }
    ~LogGroup() { impl_->CloseLogGroup(); }
    LogGroup(const LogGroup&) = delete;
    LogGroup& operator=(const LogGroup&) = delete;

   private:
    const Impl* const impl_;
  };
  // Logs the removal of `key` by this node alone (eviction, a forgotten
  // tentative write), which the replicator is not told of.
  void LogRemovalLocked(const Shard& s, std::string_view key) {
    if (engine_ == nullptr) return;
    Mutation m;
    m.kind = Mutation::Kind::kDelete;
    m.key = key;
    m.db = DbOf(s);
    LogLocked(m);
  }
  // Applies a record a start loads: as it says, whatever is there (no
  // last-writer-wins, no memory limit, nothing published or logged), its
  // expiry even when it has passed (a later record may change it).
  void ApplyRecovered(const Mutation& m);
  // Once every record is applied: removes the entries then expired, and
  // returns how many.
  uint64_t RemoveExpiredAfterLoad();
  // Calls emit for every entry a snapshot keeps (not expired, not
  // ephemeral) and every tombstone, a shard at a time: each shard's entries
  // are copied under its read lock, emitted after it is released.
  void SnapshotWalk(absl::FunctionRef<void(const Mutation&)> emit) const;
  Status WritesAllowed() const;
  Status WaitDurable();
  Status Rewrite(bool background, std::string* message);
  PersistenceInfo persistence_info() const;
  SetNxOutcome SetNxEphemeral(std::string_view key, std::string_view value, int64_t ttl_ms);

  // --- strings ------------------------------------------------------------

  void Prefetch(std::string_view key, uint32_t db, Store::PrefetchStep step) const;
  Status GetInto(std::string_view key, absl::FunctionRef<char*(size_t)> alloc) const;
  Status GetIntoBuffer(std::string_view key, char* buf, size_t capacity, uint64_t* length) const;
  Status Set(std::string_view key, std::string_view value, int64_t ttl_ms);

  // A lock decision (see Route), whose owner's reply is the outcome itself.
  // Every outcome enum here has a kOwnerUnreachable.
  template <typename Outcome, typename Ask, typename Local>
  Outcome Decided(Ask ask, Local local) {
    return Route(options_.replicator, ask, Outcome::kOwnerUnreachable,
                 [](const Outcome& o) { return o; }, local);
  }

  SetNxOutcome SetNx(std::string_view key, std::string_view value, int64_t ttl_ms);
  SetNxOutcome SetNxLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                          bool ephemeral = false);
  Status Del(std::string_view key, int64_t* removed);
  DelIfEqOutcome DelIfEq(std::string_view key, std::string_view token);
  DelIfEqOutcome DelIfEqLocal(std::string_view key, std::string_view token);
  SetIfEqOutcome SetIfEq(std::string_view guard_key, std::string_view token,
                         std::string_view key, std::string_view value, int64_t ttl_ms);
  SetIfEqOutcome SetIfEqLocal(std::string_view guard_key, std::string_view token,
                              std::string_view key, std::string_view value, int64_t ttl_ms);
  DelIfGuardEqOutcome DelIfGuardEq(std::string_view guard_key, std::string_view token,
                                   std::string_view key);
  DelIfGuardEqOutcome DelIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                        std::string_view key);
  ExpireIfGuardEqOutcome ExpireIfGuardEq(std::string_view guard_key, std::string_view token,
                                         std::string_view key, int64_t ttl_ms);
  ExpireIfGuardEqOutcome ExpireIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                              std::string_view key, int64_t ttl_ms);
  // --- locks with fencing tokens (store_locks.cc) --------------------------
  FencedGrant SetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                          bool ephemeral);
  FencedGrant SetNxFencedLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                               bool ephemeral);
  // set_nx on this node, both kinds: with `fenced`, the grant draws a fence.
  FencedGrant TakeLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                        bool ephemeral, bool fenced);
  ExpireIfEqOutcome ExpireIfEq(std::string_view key, std::string_view token, int64_t ttl_ms);
  ExpireIfEqOutcome ExpireIfEqLocal(std::string_view key, std::string_view token,
                                    int64_t ttl_ms);
  SetFencedOutcome SetFenced(std::string_view key, std::string_view value, uint64_t fence,
                             int64_t ttl_ms);
  SetFencedOutcome SetFencedLocal(std::string_view key, std::string_view value, uint64_t fence,
                                  int64_t ttl_ms);
  LockStateReply LockState(std::string_view key, std::string_view token) const;
  LockStateReply LockStateLocal(std::string_view key, std::string_view token) const;
  // The next fence this store grants: past every fence it granted, observed
  // (ObserveFence) or loaded, past the cluster's clock when there is one,
  // and at least the wall clock's (ms << 16), as the cluster's stamps are.
  // With a log, a grant past the reserved mark first logs a new mark a
  // little ahead, so a restart resumes past every fence granted.  Lock
  // order: under a shard lock, takes fence_mu_ then the log's buffer.
  uint64_t NextFence();
  // Moves the fence clock past `fence` (a grant heard of from another
  // member, or loaded).
  void ObserveFence(uint64_t fence);
  uint64_t FenceClock() const;
  Status MirrorLock(std::string_view key, std::string_view value, int64_t ttl_ms, uint64_t fence);
  // Raises the fence floor (never lowers it): the fence every fenced write
  // must reach, past every fence a flush removed (or a record that could not
  // be allocated).
  void RaiseFenceFloor(uint64_t fence) {
    uint64_t cur = fence_floor_.load(std::memory_order_relaxed);
    while (fence > cur && !fence_floor_.compare_exchange_weak(cur, fence)) {
    }
  }
  uint64_t FenceFloor() const { return fence_floor_.load(std::memory_order_acquire); }
  // The fence a fenced write of key `hk` must reach: its live entry's, its
  // record's, the floor.
  uint64_t RecordedFenceLocked(Shard& s, const HashedKey& hk, Map::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // Keeps `fence` recorded for `key` once its entry is gone (a record, or
  // the shard's floor when the record cannot be allocated).  Allocates, but
  // never fails.
  void RecordFenceLocked(Shard& s, std::string_view key, uint64_t fence)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // --- conditional writes of Redis 8.4 ------------------------------------
  Status Digest(std::string_view key, uint64_t* digest) const;
  Status DelEx(std::string_view key, const ValueCondition& c, int64_t* removed);
  Status DelExLocal(std::string_view key, const ValueCondition& c, int64_t* removed);
  Status SetWithLocal(std::string_view key, std::string_view value, const SetOptions& o,
                      SetResult* r);
  // Whether the string entry `e` passes condition c (kNone: always).  May
  // throw bad_alloc decoding a compressed value.
  static bool ConditionHoldsLocked(const Entry& e, const ValueCondition& c);
  Status Exists(std::string_view key, bool* exists) const;
  Status Touch(std::string_view key, bool* exists) const;
  // Exists, and with `touch` Touch: whether key is live, marking it just
  // accessed when it is and touch is set.
  Status FindLive(std::string_view key, bool touch, bool* exists) const;
  Status IncrBy(std::string_view key, int64_t delta, int64_t* result);
  Status IncrByLocal(std::string_view key, int64_t delta, int64_t* result);
  Status SetWith(std::string_view key, std::string_view value, const SetOptions& o,
                 SetResult* r);
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
              bool only_if_none_exist, bool* written);
  Status GetDel(std::string_view key, std::string* value);
  Status GetEx(std::string_view key, SetOptions::Expiry expiry, int64_t at_ms,
               std::string* value);

  // APPEND and SETRANGE build the new value outside the lock from a copy,
  // then store it only if the key's version did not move meanwhile (else
  // they start over): a large value is never copied or compressed under the
  // lock, and the result is as if the operation ran in one step.
  template <typename Edit>
  Status EditString(std::string_view key, Edit edit, int64_t* length);
  Status Append(std::string_view key, std::string_view value, int64_t* length);
  Status SetRange(std::string_view key, uint64_t offset, std::string_view value,
                  int64_t* length);
  Status IncrByFloat(std::string_view key, long double delta, std::string* result);
  Status SetBit(std::string_view key, uint64_t bit, bool on, int* old);
  Status EditPadded(std::string_view key, size_t min_size,
                    absl::FunctionRef<bool(bool existed, std::string* bytes)> edit);
  Status BitOp(Store::BitOpKind op, std::string_view dst, const std::vector<std::string_view>& keys,
               int64_t* length);

  // --- hashes -------------------------------------------------------------

  Status HSet(std::string_view key,
              const std::vector<std::pair<std::string_view, std::string_view>>& fields,
              bool only_if_absent, int64_t* added);

  // Runs `read` on the live hash at key (nullptr when missing), under the
  // shared lock.  kWrongType for a string.
  template <typename Read>
  Status ReadHash(std::string_view key, Read read) const;
  Status HGet(std::string_view key, std::string_view field, std::string* value) const;
  Status HMGet(std::string_view key, const std::vector<std::string_view>& fields,
               std::vector<std::optional<std::string>>* values) const;
  Status HGetAll(std::string_view key,
                 std::vector<std::pair<std::string, std::string>>* fields) const;
  Status HRandField(std::string_view key, int64_t count,
                    std::vector<std::pair<std::string, std::string>>* out) const;
  Status HLen(std::string_view key, int64_t* count) const;
  Status HExists(std::string_view key, std::string_view field, bool* exists) const;
  Status HStrLen(std::string_view key, std::string_view field, int64_t* length) const;
  Status HDel(std::string_view key, const std::vector<std::string_view>& fields,
              int64_t* removed);

  // HINCRBY and HINCRBYFLOAT: `update` turns the field's current text (or
  // nullptr when missing) into the new text, or returns an error status.
  template <typename Update>
  Status HUpdateField(std::string_view key, std::string_view field, Update update);
  Status HIncrBy(std::string_view key, std::string_view field, int64_t delta, int64_t* result);
  Status HIncrByFloat(std::string_view key, std::string_view field, long double delta,
                      std::string* result);

  // --- sorted sets (store_zsets.cc) ----------------------------------------

  using ZMembers = Store::ZMembers;
  using ZRangeSpec = Store::ZRangeSpec;
  Status ZAdd(std::string_view key, const std::vector<std::pair<double, std::string_view>>& pairs,
              unsigned flags, int64_t* count, std::optional<double>* score);
  Status ZRem(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* removed);
  // Runs `read` on the live sorted set at key (nullptr when missing), under
  // the shared lock.  kWrongType for another type.
  template <typename Read>
  Status ReadZSet(std::string_view key, Read read) const;
  Status ZScore(std::string_view key, std::string_view member, double* score) const;
  Status ZMScore(std::string_view key, const std::vector<std::string_view>& members,
                 std::vector<std::optional<double>>* scores) const;
  Status ZCard(std::string_view key, int64_t* count) const;
  Status ZRank(std::string_view key, std::string_view member, bool reverse, int64_t* rank) const;
  Status ZRange(std::string_view key, const ZRangeSpec& spec, ZMembers* out) const;
  Status ZCount(std::string_view key, const ZRangeSpec& spec, int64_t* count) const;
  Status ZRemRange(std::string_view key, const ZRangeSpec& spec, int64_t* removed);
  Status ZPop(std::string_view key, bool max, int64_t count, ZMembers* out);
  Status ZRandMember(std::string_view key, int64_t count, ZMembers* out) const;
  Status ZStore(std::string_view dst, const std::vector<std::string_view>& keys,
                const std::vector<double>& weights, Store::ZAggregate aggregate,
                Store::ZStoreOp op, int64_t* size);
  Status ZCombine(const std::vector<std::string_view>& keys, const std::vector<double>& weights,
                  Store::ZAggregate aggregate, Store::ZStoreOp op, ZMembers* out) const;
  Status ZInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                    int64_t* count) const;
  Status ZRangeStore(std::string_view dst, std::string_view src, const ZRangeSpec& spec,
                     int64_t* size);
  Status ZMPop(const std::vector<std::string_view>& keys, bool max, int64_t count,
               bool skip_other_types, size_t* which, ZMembers* out);
  // Replaces whatever `dst` holds (its shard locked, every source's bytes
  // alive) with a sorted set of `members` (distinct), or deletes it when
  // members is empty; adds the shards it changed to *touched.  kOutOfMemory
  // changes nothing.
  Status ZReplaceLocked(Shard& s, const HashedKey& hd,
                        const std::vector<std::pair<std::string_view, double>>& members,
                        int64_t now, uint64_t* shortfall, std::vector<Shard*>* touched)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // Removes the members at ascending ranks [first, last) of the live sorted
  // set at `it` (key `key`), copying them into *out first when out is set;
  // deletes the key when it empties.  Nothing is allocated once a member is
  // removed.
  void ZRemoveRanksLocked(Shard& s, Map::iterator it, std::string_view key, size_t first,
                          size_t last, bool descending, ZMembers* out, bool* changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  // --- sets (store_sets.cc) ---------------------------------------------

  Status SAdd(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* added);
  Status SRem(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* removed);
  // Runs `read` on the live set at key (nullptr when missing), under the
  // shared lock.  kWrongType for another type.
  template <typename Read>
  Status ReadSet(std::string_view key, Read read) const;
  Status SMembers(std::string_view key, std::vector<std::string>* members) const;
  Status SIsMember(std::string_view key, std::string_view member, bool* is_member) const;
  Status SMIsMember(std::string_view key, const std::vector<std::string_view>& members,
                    std::vector<bool>* is_member) const;
  Status SCard(std::string_view key, int64_t* count) const;
  Status SPop(std::string_view key, uint64_t count, std::vector<std::string>* popped);
  Status SRandMember(std::string_view key, int64_t count, std::vector<std::string>* out) const;
  Status SMove(std::string_view src, std::string_view dst, std::string_view member, bool* moved);
  Status SCombine(Store::SetOp op, const std::vector<std::string_view>& keys,
                  std::vector<std::string>* out) const;
  Status SCombineStore(Store::SetOp op, std::string_view dst,
                       const std::vector<std::string_view>& keys, int64_t* size);
  Status SInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                    int64_t* count) const;
  Status SScan(std::string_view key, uint64_t cursor, size_t count,
               std::vector<std::string>* members, uint64_t* next) const;
  // The live sets at `keys` (nullptr for a missing or expired one) with
  // every shard involved locked by the caller; kWrongType when one holds
  // another type.
  Status SetsLocked(const std::vector<HashedKey>& keys, int64_t now,
                    std::vector<const SetValue*>* sets) const ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // The members of `op` over `sets`, viewing into them.
  static void CombineLocked(Store::SetOp op, const std::vector<const SetValue*>& sets,
                            std::vector<std::string_view>* out);
  Status SMoveLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                     std::string_view member, bool* moved, uint64_t* shortfall, bool* changed_a,
                     bool* changed_b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu);
  // --- lists (store_lists.cc) ---------------------------------------------

  Status ListPush(std::string_view key, const std::vector<std::string_view>& elements, bool left,
                  bool only_if_exists, int64_t* length);
  Status ListPop(std::string_view key, bool left, size_t count, std::vector<std::string>* out);
  // Runs `read` on the live list at key (nullptr when missing), under the
  // shared lock.  kWrongType for another type.
  template <typename Read>
  Status ReadList(std::string_view key, Read read) const;
  Status ListLen(std::string_view key, int64_t* length) const;
  Status ListRange(std::string_view key, int64_t start, int64_t stop,
                   std::vector<std::string>* out) const;
  Status ListIndex(std::string_view key, int64_t index, std::string* value) const;
  Status ListSet(std::string_view key, int64_t index, std::string_view value, bool* in_range);
  Status ListRem(std::string_view key, int64_t count, std::string_view element, int64_t* removed);
  Status ListTrim(std::string_view key, int64_t start, int64_t stop);
  Status ListInsert(std::string_view key, bool before, std::string_view pivot,
                    std::string_view element, int64_t* length);
  Status ListPos(std::string_view key, std::string_view element, int64_t rank, int64_t count,
                 int64_t maxlen, std::vector<int64_t>* positions) const;
  Status ListMove(std::string_view src, std::string_view dst, bool from_left, bool to_left,
                  std::string* moved);
  Status ListReplace(std::string_view key, const std::vector<std::string_view>& elements);
  Status ListMoveLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                        bool from_left, bool to_left, std::string* moved, uint64_t* shortfall,
                        bool* changed_a, bool* changed_b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu);
  // After a change to the live list at `it` (still non-empty): its new
  // accounted size, a new version, the publication.  Allocates nothing but
  // what PublishLocked does.
  void ListChangedLocked(Shard& s, Map::iterator it, std::string_view key, uint64_t new_mem,
                         int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // --- expiry -------------------------------------------------------------

  Status Expire(std::string_view key, int64_t ttl_ms, bool* applied);
  Status ExpireAt(std::string_view key, int64_t at_ms, bool* applied);
  Status Persist(std::string_view key, bool* applied);
  Status Pttl(std::string_view key, int64_t* ttl_ms) const;

  // --- keyspace -----------------------------------------------------------

  Status Keys(std::string_view pattern, std::vector<std::string>* out) const;
  uint64_t DbSize() const;
  void Flush();
  void RaiseFlushStamp(Stamp stamp);
  Stamp FlushStamp() const;

  // The flush `m` (a kFlush; with a stamp it removes only what is older,
  // see ClearOlderThanLocked, and raises the flush stamp).  With a log,
  // every shard locked at once and the record logged under them; without,
  // a shard at a time.  Waiters woken after.
  void FlushAll(const Mutation& m) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // Removes every entry and tombstone of `s`.
  void ClearShardLocked(Shard& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // --- replication --------------------------------------------------------

  // Removes the entries and tombstones whose stamp is older than `stamp`:
  // a flush removes what was written before it, in the cluster's order,
  // and keeps what was written after it (on another node, say).
  void ClearOlderThanLocked(Shard& s, Stamp stamp) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  bool ApplyReplicated(const Mutation& m);
  void ForgetLocal(std::string_view key, const Stamp& stamp);
  void ConfirmLocal(std::string_view key, const Stamp& stamp);
  void ForEachForSync(absl::FunctionRef<void(const Mutation&)> fn) const;
  uint64_t TombstoneCount() const;
  Status Rename(std::string_view src, std::string_view dst, bool only_if_absent,
                bool* renamed);
  Status ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions, bool* applied);
  Status RandomKey(std::string* key) const;
  Status Scan(uint64_t cursor, std::string_view pattern, size_t count,
              std::optional<ValueType> type, std::vector<std::string>* keys,
              uint64_t* next) const;

  // --- waiting ------------------------------------------------------------

  Status WaitForChange(std::string_view key, uint64_t last_version, int64_t timeout_ms,
                       WaitResult* r) const;

  // --- introspection ------------------------------------------------------

  Status Inspect(std::string_view key, EntryInfo* info) const;
  StoreStats Stats() const;

  // --- atomic sections and WATCH (store_sections.cc) ----------------------

  Status Atomically(const std::vector<std::string_view>& keys, bool all_shards,
                    absl::FunctionRef<void()> fn) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  Status AtomicallyIn(const std::vector<std::pair<uint32_t, std::string_view>>& keys,
                      const std::vector<uint32_t>& whole_databases, absl::FunctionRef<void()> fn)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;
  Status Move(std::string_view key, uint32_t to_db, bool* moved);
  void FlushEveryDatabase();
  // SWAPDB, COPY, OBJECT (store_keyspace.cc).  SwapDb locks every shard of
  // both databases (MultiLock, which the analysis cannot follow).
  Status SwapDb(uint32_t a, uint32_t b) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  Status Copy(std::string_view src, std::string_view dst, uint32_t dst_db, bool replace,
              bool* copied);
  Status Object(std::string_view key, Store::ObjectShape* shape) const;
  // Exchanges what two shards of the same index in two databases hold,
  // but their watchers (which stay with their database) and counters.
  void SwapShardsLocked(Shard& x, Shard& y) ABSL_EXCLUSIVE_LOCKS_REQUIRED(x.mu, y.mu);
  // Logs database d's contents as a flush then every entry but ephemeral
  // ones (SwapDb's record, under every lock of d).
  void LogDatabaseLocked(uint32_t d) ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // A record of a database this store does not have, met while loading.
  std::string load_error_;
  Status Watch(std::string_view key, uint64_t* touched);
  Status WatchedChanged(std::string_view key, uint64_t touched, bool* changed) const;
  void Unwatch(std::string_view key);
  bool HeldBySection(std::string_view key) const {
    return KeyOk(key) && section::Holds(&ShardFor(HashKey(key)).mu);
  }
  size_t ShardsPerDatabase() const { return shard_mask_ + 1; }
  size_t ShardIndex(uint32_t db, std::string_view key) const {
    return db * ShardsPerDatabase() + (HashKey(key).shard_hash & shard_mask_);
  }

  // --- expiry sweeping ----------------------------------------------------

  // Removes up to `budget` expired entries from each shard, earliest expiry
  // first; *more is set when a shard had more left.  With the ordered index
  // nothing has to be sampled: every entry removed here is expired.
  size_t Sweep(size_t budget, bool* more);

 private:
  static constexpr int kMaxEvictionRounds = 16;
  // A shortfall no eviction can cover (see Reserve).
  static constexpr uint64_t kNeverFits = std::numeric_limits<uint64_t>::max();

  // The scope of a write to one shard: holds its writer lock and, once the
  // lock is released, wakes the shard's waiters (WaitForChange) if the write
  // set `changed`.
  class ABSL_SCOPED_LOCKABLE ShardWrite {
   public:
    explicit ShardWrite(Shard* s) ABSL_EXCLUSIVE_LOCK_FUNCTION(s->mu) : s_(s) { s_->mu.Lock(); }
    ~ShardWrite() ABSL_UNLOCK_FUNCTION() {
      s_->mu.Unlock();
      if (changed) Notify(*s_);
    }
    ShardWrite(const ShardWrite&) = delete;
    ShardWrite& operator=(const ShardWrite&) = delete;

    bool changed = false;

   private:
    Shard* const s_;
  };

  // The same for a write to two shards, which it locks in index order (once
  // when they are the same shard), so that two-key operations cannot
  // deadlock each other.  Wakes a's waiters if changed_a, then b's if
  // changed_b (once when they are the same shard).
  class ABSL_SCOPED_LOCKABLE PairWrite {
   public:
    PairWrite(const Impl* impl, Shard* a, Shard* b)
        ABSL_EXCLUSIVE_LOCK_FUNCTION(a->mu, b->mu) ABSL_NO_THREAD_SAFETY_ANALYSIS : a_(a),
                                                                                    b_(b),
                                                                                    first_(a),
                                                                                    second_(b) {
      if (impl->IndexOf(a) > impl->IndexOf(b)) std::swap(first_, second_);
      first_->mu.Lock();
      if (second_ != first_) second_->mu.Lock();
      if (impl->engine_ != nullptr) {
        group_.emplace(impl, std::vector<size_t>{impl->IndexOf(first_), impl->IndexOf(second_)});
      }
    }
    ~PairWrite() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      group_.reset();  // its records reach the log before the locks go
      if (second_ != first_) second_->mu.Unlock();
      first_->mu.Unlock();
      if (changed_a) Notify(*a_);
      if (changed_b && b_ != a_) Notify(*b_);
    }
    PairWrite(const PairWrite&) = delete;
    PairWrite& operator=(const PairWrite&) = delete;

    bool changed_a = false;
    bool changed_b = false;

   private:
    Shard* const a_;
    Shard* const b_;
    Shard* first_;
    Shard* second_;
    std::optional<LogGroup> group_;
  };

  // The time of one write: the clock is read under the lock at the first
  // question and the answer kept for the rest of the write, so that all its
  // decisions use one instant; a write that asks nothing (no TTL involved)
  // reads no clock.  A WriteTime made from a number is that time.  Converts
  // to int64_t (reading the clock) for code that needs the number.
  class WriteTime {
   public:
    explicit WriteTime(const Clock* clock) : clock_(clock) {}
    WriteTime(int64_t ms) : ms_(ms), read_(true) {}  // NOLINT: a known time
    WriteTime(const WriteTime&) = delete;
    WriteTime& operator=(const WriteTime&) = delete;

    int64_t ms() const {
      if (!read_) {
        ms_ = clock_->NowMs();
        read_ = true;
      }
      return ms_;
    }
    operator int64_t() const { return ms(); }  // NOLINT
    // For an access time: the write's time if it was read, else the
    // clock's cheap reading (Clock::CoarseMs).
    int64_t AccessMs() const { return read_ ? ms_ : clock_->CoarseMs(); }

   private:
    const Clock* clock_ = nullptr;
    mutable int64_t ms_ = 0;
    mutable bool read_ = false;
  };

  // The skeleton of a write to one key: runs fn(s, now, &changed, shortfall)
  // under the writer lock of hk's shard `s`, `now` a WriteTime (fn may take
  // it as an int64_t, which reads the clock at once); tries
  // again after eviction when WithEviction says so; wakes the shard's
  // waiters once the lock is released if fn set changed.  fn is a lambda
  // annotated ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu), a requirement the
  // analysis cannot match through a template parameter, hence none here.
  template <typename Result, typename Fn>
  Result Mutate(const HashedKey& hk, Fn fn) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    Shard& s = ShardFor(hk);
    return WithEviction<Result>([&](uint64_t* shortfall) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      ShardWrite w(&s);
      const WriteTime now(clock_);
      return fn(s, now, &w.changed, shortfall);
    });
  }

  // The skeleton of a write to `dst` computed from the values at `keys`
  // (BITOP, ZUNIONSTORE and its kin), in one step: every key's shard held in
  // one MultiLock.  Checks the keys, then runs fn(hd, live, now, shortfall,
  // &touched) with every shard held: live[i] is the live entry at keys[i],
  // or nullptr (an expired one removed, its shard in touched); fn installs
  // the result at hd (its shard held too) and adds the shards it changed to
  // touched, which are woken once every lock is released.  Tries again after
  // eviction when WithEviction says so.  The analysis cannot follow
  // MultiLock, hence none here.
  template <typename Fn>
  Status WriteFromSources(std::string_view dst, const std::vector<std::string_view>& keys,
                          Fn fn) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!KeyOk(dst) || keys.empty()) return Status::kInvalidArgument;
    for (std::string_view k : keys) {
      if (!KeyOk(k)) return Status::kInvalidArgument;
    }
    const HashedKey hd = HashKey(dst);
    std::vector<HashedKey> hks;
    hks.reserve(keys.size());
    std::vector<Shard*> shards{&ShardFor(hd)};
    for (std::string_view k : keys) {
      hks.push_back(HashKey(k));
      shards.push_back(&ShardFor(hks.back()));
    }
    return WithEviction<Status>([&](uint64_t* shortfall) ABSL_NO_THREAD_SAFETY_ANALYSIS {
      std::vector<Shard*> touched;
      Status st = Status::kOk;
      {
        MultiLock l(this, shards);
        const int64_t now = clock_->NowMs();
        std::vector<const Entry*> live(keys.size(), nullptr);
        for (size_t i = 0; i < keys.size(); ++i) {
          Shard& s = ShardFor(hks[i]);
          bool expired = false;
          auto it = FindLiveForWriteLocked(s, hks[i], now, &expired);
          if (expired) touched.push_back(&s);
          if (it != s.map.end()) live[i] = &it->second;
        }
        st = fn(hd, live, now, shortfall, &touched);
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      for (Shard* c : touched) Notify(*c);
      return st;
    });
  }

  bool KeyOk(std::string_view key) const { return key.size() <= kMaxKeySize; }
  bool ValueOk(std::string_view v) const { return v.size() <= options_.max_value_size; }
  // A container write's key and elements (members, fields' values) within
  // their limits.
  bool AllOk(std::string_view key, const std::vector<std::string_view>& elements) const {
    if (!KeyOk(key)) return false;
    for (std::string_view v : elements) {
      if (!ValueOk(v)) return false;
    }
    return true;
  }
  bool lru() const { return options_.eviction == EvictionPolicy::kAllKeysLru; }
  Shard& ShardFor(const HashedKey& hk) const {
    return shards_[DbBase() + (hk.shard_hash & shard_mask_)];
  }
  // Databases: database d owns shards_[d * (shard_mask_ + 1)] onwards.  The
  // database of a call is the calling thread's Store::DatabaseScope for
  // this store, else 0.
  size_t DbBase() const { return db_scope::Current(this) * (shard_mask_ + 1); }
  uint32_t DbOf(const Shard& s) const {
    return static_cast<uint32_t>(IndexOf(&s) / (shard_mask_ + 1));
  }
  size_t IndexOf(const Shard* s) const { return static_cast<size_t>(s - shards_.get()); }

  // The clock is read only when the answer depends on it: precisely for an
  // entry with an expiry, cheaply for one without (then the time is only an
  // access time, for LRU).
  int64_t NowFor(const Entry& e) const {
    if (e.expires_at != 0) return clock_->NowMs();
    return lru() ? clock_->CoarseMs() : 0;
  }

  // now + ttl_ms, refusing a sum past the int64 range.
  static bool ExpiryFrom(int64_t now, int64_t ttl_ms, int64_t* at) {
    return !__builtin_add_overflow(now, ttl_ms, at);
  }

  Prepared Prepare(std::string_view value) const;
  // Prepare, but for a value PutLocked alone consumes: one stored as is and
  // at most kDeferredCopyMax bytes is not copied here (Prepared::deferred).
  Prepared PrepareForPut(std::string_view value) const {
    const bool compresses = options_.compression == Compression::kZstd &&
                            value.size() >= options_.compression_threshold;
    if (compresses || value.size() > kDeferredCopyMax) return Prepare(value);
    Prepared p;
    p.raw = value;
    p.deferred = true;
    return p;
  }
  static constexpr size_t kDeferredCopyMax = 1024;

  // --- memory -------------------------------------------------------------

  // Moves the accounted total from old_mem to new_mem for the entries a
  // write replaces (old_pinned of old_mem were pinned).  A growth that would
  // pass the limit is refused (false, *shortfall = bytes over) unless `force`
  // (operations Redis never refuses for memory, such as EXPIRE).  When even
  // evicting every unpinned entry could not make room, *shortfall is
  // kNeverFits, so that nothing is evicted for it.  A shrink is applied by
  // Release once the change is made.
  // `s` is a shard the caller holds exclusively (any of them, for a write to
  // several: only the sum of the parts is a figure).
  bool Reserve(Shard& s, uint64_t new_mem, uint64_t old_mem, bool force, uint64_t* shortfall,
               uint64_t old_pinned = 0) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Whether new_mem bytes could not fit beside what eviction cannot remove:
  // the pinned entries (but those the write replaces) and the tombstones.
  bool NeverFits(uint64_t new_mem, uint64_t old_pinned) const;
  void Unreserve(Shard& s, uint64_t new_mem, uint64_t old_mem) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (new_mem > old_mem) AddUsedLocked(s, -static_cast<int64_t>(new_mem - old_mem));
  }
  void Release(Shard& s, uint64_t new_mem, uint64_t old_mem) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (new_mem < old_mem) AddUsedLocked(s, -static_cast<int64_t>(old_mem - new_mem));
  }
  // Adds `delta` accounted bytes: to the shard's part, or to used_ while
  // the shard counts globally (Shard::count_globally).
  void AddUsedLocked(Shard& s, int64_t delta) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (s.count_globally) {
      used_.fetch_add(static_cast<uint64_t>(delta), std::memory_order_relaxed);
    } else {
      s.used.store(s.used.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    }
  }

  // Runs `attempt`, which takes its lock and reports a reservation refused
  // by the limit through its shortfall argument; under allkeys-lru, evicts
  // (holding no lock) and tries again.  A write that could never fit is
  // refused without evicting anything.
  template <typename Result, typename Attempt>
  Result WithEviction(Attempt attempt) {
    bool swept = false;
    for (int round = 0;; ++round) {
      uint64_t shortfall = 0;
      Result r = attempt(&shortfall);
      if (shortfall == 0 || !lru() || round >= kMaxEvictionRounds) return r;
      // Eviction visits other shards, which an atomic section must not
      // lock: a write in one is refused for memory instead.
      if (section::Active()) return r;
      if (shortfall == kNeverFits) {
        // An expired lock counts as pinned until it is removed.  Expired
        // entries are absent already, so removing them evicts nothing: do
        // that once, then decide again.
        if (swept) return r;
        swept = true;
        bool more = false;
        if (Sweep(std::numeric_limits<size_t>::max(), &more) == 0) return r;
        continue;
      }
      if (!EvictFor(shortfall)) return r;
    }
  }

  // --- helpers under a shard lock ----------------------------------------

  static void TrackCompressedLocked(Shard& s, const Entry& e, bool add)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (!e.compressed) return;
    if (add) {
      s.compressed_values++;
      s.compressed_original += e.OriginalSize();
      s.compressed_stored += e.value.size();
    } else {
      s.compressed_values--;
      s.compressed_original -= e.OriginalSize();
      s.compressed_stored -= e.value.size();
    }
  }

  // Adds (or takes away) a pinned entry's figures: its shard's, for Stats and
  // eviction, and the store's total, which tells when a write can never fit.
  // Call with add = false before an entry's pin or size changes and with
  // add = true after.
  void TrackPinnedLocked(Shard& s, const Entry& e, bool add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (!e.pinned) return;
    if (add) {
      s.pinned_keys++;
      s.pinned_bytes += e.mem_size;
      if (s.count_globally) pinned_used_.fetch_add(e.mem_size, std::memory_order_relaxed);
    } else {
      s.pinned_keys--;
      s.pinned_bytes -= e.mem_size;
      if (s.count_globally) pinned_used_.fetch_sub(e.mem_size, std::memory_order_relaxed);
    }
  }

  // Moves the accounted total (and the tombstones' share of it) by one
  // tombstone of a key of key_len bytes.
  void AccountTombstone(Shard& s, size_t key_len, bool add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  static uint64_t LiveCountLocked(const Shard& s, int64_t now) ABSL_SHARED_LOCKS_REQUIRED(s.mu);

  // Removes the entry at `it` and its index node, settling memory.  Allocates
  // nothing.  The caller publishes and notifies.
  // A removed entry that carried a recorded fence (not a lock's grant)
  // leaves a fence record, which does allocate (RecordFenceLocked).
  void RemoveLocked(Shard& s, Map::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    TouchWatchedLocked(s, it->first);
    Entry& e = it->second;
    if (e.fence != 0 && !e.pinned) RecordFenceLocked(s, it->first, e.fence);
    if (e.expires_at != 0) s.ttl.erase(TtlItem{e.expires_at, &it->first});
    TrackCompressedLocked(s, e, false);
    TrackPinnedLocked(s, e, false);
    AddUsedLocked(s, -static_cast<int64_t>(e.mem_size));
    if (e.type == ValueType::kString && e.value.is_heap() &&
        e.value.capacity() <= kSpareValueMax && !s.spare_value.is_heap()) {
      s.spare_value = std::move(e.value);  // see Shard::spare_value
    }
    s.map.erase(it);
  }

  // WATCH: moves the counter of `key` when a connection watches it.  Every
  // change reaches here: local ones through PublishLocked, removals through
  // RemoveLocked, replicated and loaded ones through InstallLocked, flushes
  // through ClearShardLocked/ClearOlderThanLocked.
  static void TouchWatchedLocked(Shard& s, std::string_view key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (s.watched.empty()) return;
    auto it = s.watched.find(key);
    if (it != s.watched.end()) ++it->second.touched;
  }
  // The same for a flush: every watched key that has an entry.
  static void TouchWatchedPresentLocked(Shard& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    for (auto& [k, w] : s.watched) {
      if (s.map.find(k) != s.map.end()) ++w.touched;
    }
  }

  // Removes the live entry at `it`, whose key is `key`, and publishes the
  // deletion.  The caller notifies.
  void DeleteLocked(Shard& s, Map::iterator it, std::string_view key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    const bool ephemeral = it->second.ephemeral;  // never logged: nothing to undo
    // The fence the key keeps recorded travels with its deletion.
    const uint64_t fence = it->second.pinned ? 0 : it->second.fence;
    RemoveLocked(s, it);
    PublishLocked(s, Mutation::Kind::kDelete, key, nullptr, /*log=*/!ephemeral, fence);
  }

  // Gives the live entry at `it` of `key` the expiry at_ms and publishes
  // it; a time already past (at_ms <= now) deletes it instead, as in Redis.
  // Sets *changed when it did either.
  Status ExpireAtLocked(Shard& s, Map::iterator it, std::string_view key, int64_t at_ms,
                        int64_t now, bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Removes the expired entry at `it`.  With a replicator the key keeps a
  // tombstone with the entry's stamp: its expiry is absolute, so every node
  // removes it too, and an older write arriving later must not revive it.
  void ExpireLocked(Shard& s, Map::iterator it, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Finds `hk` for a write.  An expired entry met here is removed (lazy
  // expiry), reported as absent, and sets *changed.
  Map::iterator FindLiveForWriteLocked(Shard& s, const HashedKey& hk, const WriteTime& now,
                                       bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = s.map.find(hk);
    if (it != s.map.end() && IsExpired(it->second, now)) {
      ExpireLocked(s, it, now);
      *changed = true;
      return s.map.end();
    }
    return it;
  }

  // Lazy expiry for readers, which see an expired entry under the shared
  // lock and cannot remove it there.
  void ReapIfExpired(const HashedKey& hk) const;

  // Makes `p` the string value of key `hk` with expiry `expires_at`,
  // replacing the live entry at `it` (or creating one when it == end), then
  // publishes it.  `pinned` makes it a lock when it has an expiry.  All or
  // nothing: kOutOfMemory leaves everything as it was (*shortfall > 0 when
  // the limit refused it).  Sets *changed on success.
  Status PutLocked(Shard& s, Map::iterator it, const HashedKey& hk, Prepared* p,
                   int64_t expires_at, bool pinned, const WriteTime& now, uint64_t* shortfall,
                   bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Puts `fresh` (value or hash, type, compression, expiry, mem_size) in
  // place of the entry at *it (or a new one when *it == end) and points *it
  // at it.  All or nothing: on false (the limit refused the growth, or an
  // allocation failed) nothing changed and fresh is untouched.  `force`
  // accounts the growth whatever the limit (replicated state).
  // `in_place`, when given, is the string value the entry at *it takes by a
  // copy into its own buffer (PutLocked checked that it fits, so it
  // allocates nothing); fresh->value is empty then.
  bool InstallLocked(Shard& s, Map::iterator* itp, const HashedKey& hk, Entry* fresh, bool force,
                     const WriteTime& now, uint64_t* shortfall,
                     const std::string_view* in_place = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // The all-or-nothing write every install shares (InstallLocked,
  // RenameLocked, MSetLocked, HSetLocked): reserves new_mem in place of
  // old_mem (see Reserve), runs `allocate`, every step that may throw, then
  // `apply`, which must not allocate, and releases what the write freed.  An
  // allocation that throws runs `undo` and gives the reservation back.
  // False, with nothing changed, when the limit refused the growth or an
  // allocation failed.  The steps run under the caller's shard locks: they
  // are annotated with them, which the analysis cannot match through a
  // template parameter, hence none here.
  template <typename Allocate, typename Undo, typename Apply>
  bool Transact(Shard& s, uint64_t new_mem, uint64_t old_mem, bool force, uint64_t old_pinned,
                uint64_t* shortfall, Allocate allocate, Undo undo,
                Apply apply) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (!Reserve(s, new_mem, old_mem, force, shortfall, old_pinned)) return false;
    try {
      allocate();
    } catch (const std::bad_alloc&) {
      undo();
      Unreserve(s, new_mem, old_mem);
      *shortfall = 0;
      return false;
    }
    apply();
    Release(s, new_mem, old_mem);
    return true;
  }

  // Inserts the index item of a new expiry (not when it is 0 or the entry's
  // old one) for the entry whose map node holds `key`; whether it did, for
  // an undo.  May throw bad_alloc.
  bool InsertTtlLocked(Shard& s, const Key& key, int64_t expires_at, int64_t old_expiry)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // A new, empty slot for `hk`.  May throw bad_alloc.
  Map::iterator EmplaceLocked(Shard& s, const HashedKey& hk) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Moves `from`'s contents (value or hash, type, sizes, compression,
  // expiry, pin) into the entry at `it`, with accounted size mem_size, a new
  // version and `now` as last access; settles the figures and the index node
  // of the state it replaces when `existed`.  Allocates nothing: a new
  // expiry's index node is in place already (InsertTtlLocked).  Leaves the
  // stamp and the memory total to the caller.  `in_place`: as for
  // InstallLocked.
  void FillLocked(Shard& s, Map::iterator it, bool existed, Entry* from, uint64_t mem_size,
                  const WriteTime& now, const std::string_view* in_place = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Whether the live entry e can take a string value of `len` bytes into
  // its own buffer: it holds an uncompressed string whose buffer is the very
  // malloc chunk a new value of len bytes would get (so the accounting,
  // which models that chunk, stays exact).
  static bool FitsInPlace(const Entry& e, size_t len) {
    return e.type == ValueType::kString && !e.compressed && FitsBuffer(e.value, len);
  }
  // Whether `buffer` is the very malloc chunk a value of len bytes gets.
  static bool FitsBuffer(const ValueBuf& buffer, size_t len) {
    return len > ValueBuf::kInline && buffer.is_heap() && len <= buffer.capacity() &&
           ValueHeapMem(buffer.capacity()) == ValueHeapMem(len);
  }

  // Gives the live entry at `it` expiry `at_ms` (0 = none), keeping the
  // index and the memory total exact.  Only adding an index node allocates.
  Status SetExpiryLocked(Shard& s, Map::iterator it, int64_t at_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Whether the guard key of a fenced operation (set_if_eq, del_if_guard_eq,
  // expire_if_guard_eq) holds a live string equal to token.  May throw
  // bad_alloc decoding a compressed guard (the Store API turns it into
  // kOutOfMemory; nothing has changed by then).
  enum class Guard { kHolds, kNotMatched, kWrongType };
  // When guard `g` does not hold, sets *refused to what the fenced
  // operation answers (its kNotMatched or kWrongType) and returns true.
  template <typename Outcome>
  static bool GuardRefuses(Guard g, Outcome* refused) {
    if (g == Guard::kHolds) return false;
    *refused = g == Guard::kWrongType ? Outcome::kWrongType : Outcome::kNotMatched;
    return true;
  }
  Guard GuardHoldsLocked(Shard& g, const HashedKey& hg, std::string_view token, int64_t now,
                         bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(g.mu);
  SetIfEqOutcome SetIfEqLocked(Shard& g, Shard& s, const HashedKey& hg, const HashedKey& hk,
                               std::string_view token, Prepared* p, int64_t ttl_ms,
                               uint64_t* shortfall, bool* changed_g, bool* changed_s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(g.mu, s.mu);
  Status RenameLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                      bool only_if_absent, bool* renamed, uint64_t* shortfall, bool* changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu);

  // Locks a set of shards in index order, each once.
  class ABSL_SCOPED_LOCKABLE MultiLock {
   public:
    MultiLock(const Impl* impl, std::vector<Shard*> shards) ABSL_NO_THREAD_SAFETY_ANALYSIS
        : shards_(std::move(shards)) {
      std::sort(shards_.begin(), shards_.end(), [impl](const Shard* a, const Shard* b) {
        return impl->IndexOf(a) < impl->IndexOf(b);
      });
      shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
      for (Shard* s : shards_) s->mu.Lock();
      if (impl->engine_ != nullptr) {
        std::vector<size_t> held;
        held.reserve(shards_.size());
        for (const Shard* s : shards_) held.push_back(impl->IndexOf(s));
        group_.emplace(impl, std::move(held));
      }
    }
    ~MultiLock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      group_.reset();  // its records reach the log before the locks go
      for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) (*it)->mu.Unlock();
    }
    MultiLock(const MultiLock&) = delete;
    MultiLock& operator=(const MultiLock&) = delete;

   private:
    std::vector<Shard*> shards_;
    std::optional<LogGroup> group_;
  };

  // MSET/MSETNX with every involved shard locked (by MultiLock, which the
  // analysis cannot follow).  All or nothing: the whole growth is reserved
  // first, then every new slot allocated, then the values moved in.
  Status MSetLocked(const std::vector<HashedKey>& keys, std::vector<Prepared>* values,
                    const std::vector<Shard*>& shards, bool only_if_none_exist, bool* written,
                    uint64_t* shortfall, std::vector<Shard*>* changed)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;

  // Copies a string entry's value (decoded) when it is at most `max` bytes.
  static bool ReadSmallLocked(const Entry& e, size_t max, std::string* out);

  // Sets hash fields on the live hash at `it` (or a new hash when it == end).
  // All or nothing: the new field strings and the table's room are allocated
  // before anything changes.
  Status HSetLocked(Shard& s, Map::iterator it, const HashedKey& hk,
                    const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                    bool only_if_absent, int64_t now, int64_t* added, uint64_t* shortfall,
                    bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Hands a mutation to the replicator and the log while the shard lock is
  // held, so that changes to one key reach both in the order they were
  // applied: stamps it first (the entry keeps its stamp; a deletion leaves
  // a tombstone).  An ephemeral entry's changes are not logged.  `fence` is
  // a deletion's: the fence the key keeps recorded (Mutation::fence).
  // Inline up to the common case of a store with neither (the mutation is
  // built out of line).
  void PublishLocked(Shard& s, Mutation::Kind kind, std::string_view key, Entry* e,
                     bool log = true, uint64_t fence = 0) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    s.changes.store(s.changes.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    TouchWatchedLocked(s, key);
    if (options_.replicator == nullptr && engine_ == nullptr) return;
    PublishMutationLocked(s, kind, key, e, log, fence);
  }
  void PublishMutationLocked(Shard& s, Mutation::Kind kind, std::string_view key, Entry* e,
                             bool log, uint64_t fence) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);


  // Records that `key` was deleted (or expired) by the write `stamp`.  A
  // tombstone that cannot be allocated is skipped: a late older write could
  // then revive the key on this node (the cluster's full sync corrects it).
  void TombstoneLocked(Shard& s, std::string_view key, Stamp stamp, int64_t now,
                       bool tentative = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);
  void ForgetTombstoneLocked(Shard& s, std::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Drops tombstones older than the TTL (and order records of tombstones
  // replaced since).
  void CollectTombstonesLocked(Shard& s, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu);

  // Wakes WaitForChange callers on `s`.  Called after a change, unlocked.
  static void Notify(const Shard& s) {
    if (s.waiters.load(std::memory_order_seq_cst) == 0) return;
    // Inside an atomic section the shard stays locked: Atomically wakes
    // its shards' waiters once it has released them.
    if (section::Holds(&s.mu)) return;
    s.wake_seq.fetch_add(1, std::memory_order_seq_cst);
    std::lock_guard<std::mutex> l(s.wait_mu);
    s.wait_cv.notify_all();
  }

  // Writes a value into alloc's buffer, decoding a compressed one.
  static Status Emit(std::string_view stored, bool compressed, uint64_t original_size,
                     absl::FunctionRef<char*(size_t)> alloc) {
    char* out = alloc(original_size);
    if (out == nullptr) return Status::kOutOfMemory;
    if (!compressed) {
      if (original_size != 0) std::memcpy(out, stored.data(), original_size);
      return Status::kOk;
    }
    // A frame this store wrote fails to decode only when zstd cannot
    // allocate its context.
    return ZstdDecompress(stored, out, original_size) ? Status::kOk : Status::kOutOfMemory;
  }

  // The same into *out, resized to the value's length.
  static Status EmitString(std::string_view stored, bool compressed, uint64_t original_size,
                           std::string* out) {
    return Emit(stored, compressed, original_size, [out](size_t n) {
      out->resize(n);
      return out->data();
    });
  }

  // Whether the string entry `e` equals `token`.  A compressed entry is
  // decoded only when its original size equals the token's, so the work
  // under the lock is bounded by the token's length.
  static bool EqualsLocked(const Entry& e, std::string_view token) {
    if (e.OriginalSize() != token.size()) return false;
    if (!e.compressed) return std::string_view(e.value) == token;
    char small[256];
    std::string large;
    char* plain = small;
    if (token.size() > sizeof(small)) {
      large.resize(token.size());
      plain = large.data();
    }
    if (!ZstdDecompress(e.value, plain, token.size())) throw std::bad_alloc();
    return std::memcmp(plain, token.data(), token.size()) == 0;
  }

  // Reads the int64 text of the string entry `e`.  At most 20 bytes, so a
  // compressed one is decoded into a stack buffer.
  static bool ReadInt64Locked(const Entry& e, int64_t* out);

  // --- eviction -----------------------------------------------------------

  // Evicts, one shard at a time, the least recently used of a few sampled
  // unpinned entries until `bytes` were freed.  Returns whether anything was
  // freed.
  bool EvictFor(uint64_t bytes);

  // Removes one entry of `s`: the earliest expired one if any (it is absent
  // already), else the least recently used of `eviction_samples` unpinned
  // entries after the shard's cursor.  A live lock is never a candidate.
  // Returns the bytes freed; 0 when the shard holds nothing evictable.
  uint64_t EvictOneFrom(Shard& s);
  void SweepLoop();

  const StoreOptions options_;
  const Clock* const clock_;
  const size_t shard_mask_;
  const size_t total_shards_;  // shard_mask_ + 1 per database
  const std::unique_ptr<Shard[]> shards_;
  HitCounters counters_;  // reads that found a live string, or nothing
  // The accounted total's global part (MemoryUsed adds the shards'); the
  // whole total while a limit applies.
  std::atomic<uint64_t> used_{0};
  // options_.memory_limit until SetMemoryLimit (CONFIG SET maxmemory).
  std::atomic<uint64_t> memory_limit_{0};
  // SetMemoryLimit's latest call (a sequence number) and its limit: a call
  // publishes a non-zero limit only if no later one began meanwhile.  Never
  // held with a shard lock.
  Mutex limit_mu_;
  uint64_t limit_seq_ ABSL_GUARDED_BY(limit_mu_) = 0;
  std::atomic<uint64_t> limit_target_{0};  // read by the sweeps under shard locks
  // The parts of used_ that eviction cannot remove: pinned entries (live or
  // expired and not yet removed; kept only while shards count globally) and
  // tombstones.
  std::atomic<uint64_t> pinned_used_{0};
  std::atomic<uint64_t> tombstone_used_{0};
  std::atomic<size_t> next_evict_shard_{0};

  std::atomic<uint64_t> fence_floor_{0};
  mutable Mutex fence_mu_;
  uint64_t fence_last_ ABSL_GUARDED_BY(fence_mu_) = 0;      // the last fence granted or seen
  uint64_t fence_reserved_ ABSL_GUARDED_BY(fence_mu_) = 0;  // the log's mark
  mutable Mutex flush_mu_;
  Stamp flush_stamp_ ABSL_GUARDED_BY(flush_mu_);  // the newest flush seen (replication)

  // Set once by OpenPersistence, before the store is shared; reset by the
  // destructor once the sweeper has stopped.
  std::unique_ptr<persist::Engine> engine_;
  uint64_t loaded_keys_ = 0;  // what OpenPersistence loaded
  int64_t load_ms_ = 0;

  Mutex sweep_mu_;
  std::condition_variable sweep_cv_;
  bool stop_ ABSL_GUARDED_BY(sweep_mu_) = false;
  std::thread sweeper_;
};

}  // namespace ephpm

#endif  // EPHPM_CORE_STORE_IMPL_H_
