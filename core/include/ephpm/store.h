// ephpm::Store: the sharded in-process key-value store.
//
// Thread-safe: every method may be called concurrently from any number of
// threads.  A single-key operation takes only the lock of that key's shard;
// an operation on two keys locks both shards in index order.
//
// Conventions for every method below:
//  - Keys and values are binary-safe byte strings.  An empty key is valid.
//    A key longer than kMaxKeySize, or a value longer than
//    StoreOptions::max_value_size, is refused with kInvalidArgument.
//  - TTLs are milliseconds.  An expired entry is absent for every operation at
//    every moment, whether or not it has been removed yet.
//  - A write refused for memory returns kOutOfMemory and changes nothing.
//    Under allkeys-lru a write first evicts unpinned entries to make room; one
//    that could not fit even with every unpinned entry gone (one larger than
//    the whole limit, or one that the locks leave no room for) is refused
//    before anything is evicted.
//  - String operations on an entry of another type return kWrongType.
//  - Locks: a key created by SetNx (or SetWith's NX) with a TTL is pinned:
//    allkeys-lru never evicts it while it is live.  The pin belongs to the
//    entry: an operation that replaces the entry drops it, one that edits the
//    value in place and keeps the TTL (IncrBy, Append, ...) keeps it, and
//    one that removes the TTL (Persist, GetEx kNone) drops it, so pinned
//    memory is always bounded by a TTL.  Changing the TTL keeps it; Rename
//    carries it.  See docs/ARCHITECTURE.md, "Memory limit and eviction".

#ifndef EPHPM_STORE_H_
#define EPHPM_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "ephpm/clock.h"
#include "ephpm/options.h"
#include "ephpm/replicator.h"
#include "ephpm/status.h"
#include "ephpm/types.h"

namespace ephpm {

// Counters and gauges reported by Store::Stats().
struct StoreStats {
  uint64_t keys = 0;              // live entries
  uint64_t keys_with_ttl = 0;     // live entries that have an expiry
  uint64_t memory_used = 0;       // accounted bytes
  uint64_t memory_limit = 0;      // 0 = unlimited
  uint64_t hits = 0;              // reads that found a live entry
  uint64_t misses = 0;            // reads that found nothing
  uint64_t expired = 0;           // expired entries removed (lazily or swept)
  uint64_t evicted = 0;           // entries removed by the eviction policy
  uint64_t compressed_values = 0; // entries currently stored compressed
  uint64_t compressed_original_bytes = 0;  // their sizes before compression
  uint64_t compressed_stored_bytes = 0;    // their sizes as stored
  uint64_t pinned_keys = 0;       // live locks, which eviction never takes
  uint64_t pinned_bytes = 0;      // their accounted bytes (part of memory_used)
  // Changes made since the start (each write, deletion, expiry or flush a
  // shard published; not one that found nothing to change): INFO's
  // rdb_changes_since_last_save counts from a snapshot's share of it.
  uint64_t changes = 0;
  // keys and keys_with_ttl of each database (INFO's keyspace section).
  struct Database {
    uint64_t keys = 0;
    uint64_t keys_with_ttl = 0;
  };
  std::vector<Database> databases;
};

// What Store::Inspect reports about one entry.
struct EntryInfo {
  ValueType type = ValueType::kString;
  bool compressed = false;
  uint64_t value_size = 0;   // bytes a reader gets back (an aggregate: its element count)
  uint64_t stored_size = 0;  // bytes kept (smaller when compressed)
  uint64_t mem_size = 0;     // bytes accounted for the whole entry
  uint64_t version = 0;
  int64_t expires_at_ms = 0; // 0 = no expiry
  Stamp stamp;               // the write that made it ({0, 0} on a single node)
  bool pinned = false;       // a lock: never evicted while live
};

// Conditions of Redis 7's EXPIRE options, combinable (XX and GT may go
// together).  A key without a TTL counts as expiring never, so GT never
// applies to it and LT always does.
inline constexpr unsigned kExpireNx = 1;  // only when the key has no TTL
inline constexpr unsigned kExpireXx = 2;  // only when it has one
inline constexpr unsigned kExpireGt = 4;  // only when the new expiry is later
inline constexpr unsigned kExpireLt = 8;  // only when the new expiry is earlier

// What Store::WaitForChange reports.
struct WaitResult {
  bool changed = false;  // false: the timeout passed with the version unmoved
  bool found = false;    // the key holds a live string
  std::string value;     // its value when found
  uint64_t version = 0;  // the key's version now; 0 while the key is absent
};

class Store {
 public:
  // Builds a store.  Returns null and sets *error when ValidateOptions fails.
  static std::unique_ptr<Store> Create(const StoreOptions& options,
                                       std::string* error);
  // Stops the sweeper and waits for it.  REQUIRES: no other thread is inside
  // a method of this store.
  ~Store();

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // --- hints --------------------------------------------------------------

  // For a caller about to run commands on keys it already knows (the next
  // requests of a RESP pipeline): starts fetching into the CPU's cache what
  // a lookup of `key` in database `db` will read, so that the lookup does
  // not wait for memory.  kTable fetches the hash table's probe position;
  // kNode, issued once that has arrived (a request later), the entries it
  // points to.  Changes nothing and never waits: skipped when the shard is
  // locked for writing, inside an atomic section, or for a bad key or db.
  enum class PrefetchStep { kTable, kNode };
  void Prefetch(std::string_view key, uint32_t db, PrefetchStep step) const;

  // --- strings ------------------------------------------------------------

  // kOk and the value (decompressed) in *value; kNotFound when missing or
  // expired; kWrongType for a non-string entry.
  Status Get(std::string_view key, std::string* value) const;

  // As Get, writing the value into the buffer `alloc(size)` returns.  `alloc`
  // may run while the shard is read-locked: it must only allocate (malloc,
  // never PHP's allocator) and must not call into the store.  It may return
  // null for a failed allocation, which is reported as kOutOfMemory.
  Status GetInto(std::string_view key,
                 absl::FunctionRef<char*(size_t)> alloc) const;

  // As Get, into buf: kOk and *length = the value's length; the bytes are
  // copied only when *length <= capacity (a caller with a larger value can
  // size its buffer and ask again).  Nothing is allocated for an
  // uncompressed value.
  Status GetIntoBuffer(std::string_view key, char* buf, size_t capacity, uint64_t* length) const;

  // Stores value under key, replacing any entry of any type (a lock's pin
  // goes with it).  ttl_ms > 0 sets an expiry, 0 none; a negative ttl_ms is
  // kInvalidArgument.
  Status Set(std::string_view key, std::string_view value, int64_t ttl_ms = 0);

  // Creates key only when no live entry exists (an expired one counts as
  // absent).  With ttl_ms > 0 the key is a lock and is pinned (see above);
  // without a TTL it is ordinary data.  Under allkeys-lru it may evict
  // unpinned keys to make room, never a lock.  Asks the replicator's
  // RouteSetNx first; kOwnerUnreachable is returned as such, never replaced
  // by a local decision.
  SetNxOutcome SetNx(std::string_view key, std::string_view value,
                     int64_t ttl_ms = 0);
  // The decision itself, under this node's shard lock.  Never routes.
  SetNxOutcome SetNxLocal(std::string_view key, std::string_view value,
                          int64_t ttl_ms = 0);
  // As SetNx, for a lock held by a request of this process (the session
  // lock, Ephpm\Lock): the entry is *ephemeral*, never logged nor put in
  // a snapshot, so that a restart does not bring back a lock whose holder
  // died with the process (docs/PERSISTENCE.md).  Taken even while writes are refused for the log (it needs no
  // disk).  In a cluster the owner takes it so too (RouteSetNxEphemeral):
  // the holder is a request of some member's process, and a restart of the
  // whole cluster ends every one of them.
  SetNxOutcome SetNxEphemeral(std::string_view key, std::string_view value,
                              int64_t ttl_ms);
  // The decision itself, under this node's shard lock.  Never routes.
  SetNxOutcome SetNxEphemeralLocal(std::string_view key, std::string_view value,
                                   int64_t ttl_ms);

  // Removes key.  kOk with *removed = 1 when a live entry was removed, 0 when
  // it was missing or expired.
  Status Del(std::string_view key, int64_t* removed);

  // Removes key only while it holds a live string exactly equal to token
  // (compared with the decompressed value), as one step under the shard's
  // write lock.  An expired entry never matches.  Asks the replicator's
  // RouteDelIfEq first.
  DelIfEqOutcome DelIfEq(std::string_view key, std::string_view token);
  // The decision itself, under this node's shard lock.  Never routes.
  DelIfEqOutcome DelIfEqLocal(std::string_view key, std::string_view token);

  // The fenced write: stores value under key (ttl_ms as in Set) only while
  // guard_key holds a live string exactly equal to token, decided under both
  // shards' write locks (taken in index order).  A request that lost its lock
  // cannot overwrite the data of the request that holds it now.  Asks the
  // replicator's RouteSetIfEq first.
  SetIfEqOutcome SetIfEq(std::string_view guard_key, std::string_view token,
                         std::string_view key, std::string_view value, int64_t ttl_ms = 0);
  // The decision itself, under this node's shard locks.  Never routes.
  SetIfEqOutcome SetIfEqLocal(std::string_view guard_key, std::string_view token,
                              std::string_view key, std::string_view value,
                              int64_t ttl_ms = 0);

  // The fenced delete: removes key only while guard_key holds a live string
  // exactly equal to token, decided under both shards' write locks.  A
  // request that lost its lock cannot delete the data of the request that
  // holds it now (the session handler's destroy).  kAbsent when the guard
  // held the token but key was already absent.  Asks the replicator's
  // RouteDelIfGuardEq first.
  DelIfGuardEqOutcome DelIfGuardEq(std::string_view guard_key, std::string_view token,
                                   std::string_view key);
  // The decision itself, under this node's shard locks.  Never routes.
  DelIfGuardEqOutcome DelIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                        std::string_view key);

  // The fenced TTL refresh: gives key a TTL of ttl_ms from now (0 removes
  // its TTL) only while guard_key holds a live string exactly equal to token,
  // decided under both shards' write locks (the session handler's lazy_write
  // refresh, which must not touch the data of a request that holds the lock
  // now).  kAbsent when the guard held the token but key was absent.  A
  // negative ttl_ms is kInvalidArgument.  Asks the replicator's
  // RouteExpireIfGuardEq first.
  ExpireIfGuardEqOutcome ExpireIfGuardEq(std::string_view guard_key, std::string_view token,
                                         std::string_view key, int64_t ttl_ms);
  // The decision itself, under this node's shard locks.  Never routes.
  ExpireIfGuardEqOutcome ExpireIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                              std::string_view key, int64_t ttl_ms);

  // --- locks with fencing tokens (docs/LOCKS.md) ---------------------------

  // As SetNx (ephemeral: as SetNxEphemeral), and on kInserted the grant's
  // fencing token: strictly greater than every fence this node granted or
  // recorded before, and than every one it heard of from other members
  // (replicated entries, the cluster's hybrid logical clock).  The fence
  // stays with the lock's entry (LockState).  Asks the replicator's
  // RouteSetNxFenced first.
  FencedGrant SetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                          bool ephemeral);
  // The decision itself, under this node's shard lock.  Never routes.
  FencedGrant SetNxFencedLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                               bool ephemeral);

  // Compare-and-expire (a lock's refresh): gives key a TTL of ttl_ms from
  // now only while it holds a live string exactly equal to token, as one step
  // under the shard's write lock.  ttl_ms <= 0 removes it then (Redis's
  // EXPIRE with a time not in the future).  The entry keeps its pin, fence
  // and ephemeral mark.  Asks the replicator's RouteExpireIfEq first.
  ExpireIfEqOutcome ExpireIfEq(std::string_view key, std::string_view token, int64_t ttl_ms);
  // The decision itself, under this node's shard lock.  Never routes.
  ExpireIfEqOutcome ExpireIfEqLocal(std::string_view key, std::string_view token,
                                    int64_t ttl_ms);

  // The fenced write: stores value under key (ttl_ms as in Set) only when
  // fence >= the highest fence recorded for key, and records fence.  The
  // record outlives the entry: a delete, expiry or eviction keeps it (it is
  // accounted in memory_used and never evicted; Flush turns it into a
  // floor for every key).  fence 0 or past kMaxFence is kInvalidArgument.  Asks the replicator's RouteSetFenced first.
  SetFencedOutcome SetFenced(std::string_view key, std::string_view value, uint64_t fence,
                             int64_t ttl_ms = 0);
  // The decision itself, under this node's shard lock.  Never routes.
  SetFencedOutcome SetFencedLocal(std::string_view key, std::string_view value, uint64_t fence,
                                  int64_t ttl_ms = 0);

  // Whether key holds token now, with the entry's TTL and fence (an empty
  // token matches nothing: the state of whatever is there).  Asks the
  // replicator's RouteLockState first, so a member reads the owner's state.
  LockStateReply LockState(std::string_view key, std::string_view token) const;
  // The read itself, on this node.  Never routes.
  LockStateReply LockStateLocal(std::string_view key, std::string_view token) const;
  // The fence clock: at least every fence this store granted, observed or
  // loaded (with a log, the mark reserved ahead of them).  Strict mode
  // raises etcd's fence offset past it (cluster/etcd_arbiter.h).
  uint64_t FenceClock() const;
  // Strict mode's copy of a lock granted (or refreshed) in etcd with
  // `fence`: stores value under key as a lock (pinned while it has a TTL)
  // carrying that fence, whatever was there, and moves the fence clock past
  // it.  The copy is replicated and logged with its fence, so every member's
  // fence clock, and this one's after a restart, passes the grant: a later
  // gossip-mode grant is above it.  Never a decision.
  Status MirrorLock(std::string_view key, std::string_view value, int64_t ttl_ms,
                    uint64_t fence);

  // --- conditional writes of Redis 8.4 (RESP) -----------------------------

  // XXH3-64 (seed 0) of value's bytes: what DIGEST reports and IFDEQ/IFDNE
  // compare with.
  static uint64_t DigestOf(std::string_view value);
  // *digest = DigestOf(the key's value).  kNotFound when missing or
  // expired, kWrongType for a non-string.
  Status Digest(std::string_view key, uint64_t* digest) const;
  // DELEX: removes key when the condition holds (kNone: always, as DEL).
  // *removed = 1 when a live entry was removed, else 0.  With a condition a
  // non-string key is kWrongType.  With a condition, asks the replicator's
  // RouteDelEx first.
  Status DelEx(std::string_view key, const ValueCondition& condition, int64_t* removed);
  // The decision itself, on this node.  Never routes.
  Status DelExLocal(std::string_view key, const ValueCondition& condition, int64_t* removed);
  // SetWith with a condition, decided on this node.  Never routes (SetWith
  // asks the replicator's RouteSetWith first when options.condition is set).
  Status SetWithLocal(std::string_view key, std::string_view value, const SetOptions& options,
                      SetResult* result);

  // *exists = whether a live entry of any type is there.
  Status Exists(std::string_view key, bool* exists) const;
  // TOUCH: as Exists, and a live key counts as just accessed (OBJECT
  // IDLETIME 0, the newest for allkeys-lru).  Not a change.
  Status Touch(std::string_view key, bool* exists) const;

  // Adds delta to the decimal int64 stored at key (a missing or expired key
  // counts as "0") and stores the result, keeping any TTL.  kNotInteger when
  // the value is not a canonical decimal int64, kOverflow when the result
  // leaves the int64 range; in both cases the value is kept.
  // Asks the replicator's RouteIncrBy first (kOwnerUnreachable when the
  // owner cannot be asked).
  Status IncrBy(std::string_view key, int64_t delta, int64_t* result);
  // The increment itself, on this node.  Never routes.
  Status IncrByLocal(std::string_view key, int64_t delta, int64_t* result);

  // As Get, but read on the key's owner when the replicator routes it
  // (RouteGet): it sees the owner's latest write even before replication
  // brings it here.  kOwnerUnreachable when the owner cannot be asked.
  Status GetFromOwner(std::string_view key, std::string* value) const;

  // SET with Redis's options (NX/XX, KEEPTTL, EX/PX/EXAT/PXAT, GET).  With
  // get_old, an existing entry of another type is kWrongType and nothing is
  // written.  An expiry not after now stores an entry that is absent at once.
  // A replaced entry loses its pin; NX with an expiry creates a lock (pinned),
  // as SetNx does.
  Status SetWith(std::string_view key, std::string_view value, const SetOptions& options,
                 SetResult* result);

  // Sets several keys as one step: all shards involved are locked (in index
  // order) for the whole operation.  With only_if_none_exist (MSETNX) nothing
  // is written when any key is live, and *written says whether they were.
  // A key given twice takes its last value.
  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
              bool only_if_none_exist, bool* written);

  // Removes the key and returns its value.  kNotFound when missing;
  // kWrongType (nothing removed) for a non-string.
  Status GetDel(std::string_view key, std::string* value);

  // Returns the value and changes the TTL in the same step: kKeep leaves it,
  // kNone removes it (PERSIST, which drops a lock's pin), kAt sets it (a time
  // not after now deletes the key after reading it).
  Status GetEx(std::string_view key, SetOptions::Expiry expiry, int64_t expires_at_ms,
               std::string* value);

  // Appends to the string at key (a missing key counts as ""), keeping its
  // TTL.  *length = the new length.  kInvalidArgument past max_value_size.
  Status Append(std::string_view key, std::string_view value, int64_t* length);

  // Overwrites the string at key from byte `offset` (zero-padding a shorter
  // value), keeping its TTL.  An empty value on a missing key creates
  // nothing.  *length = the new length.  kInvalidArgument past max_value_size.
  Status SetRange(std::string_view key, uint64_t offset, std::string_view value,
                  int64_t* length);

  // SETBIT: sets (on) or clears bit `bit` of the string at key, counting
  // from the first byte's most significant bit, zero-padding the string to
  // reach it (a missing key counts as ""), keeping its TTL.  *old = the bit
  // before.  kInvalidArgument when the string would pass max_value_size.
  Status SetBit(std::string_view key, uint64_t bit, bool on, int* old);

  // The write half of BITFIELD: `edit` gets a copy of the string at key
  // (*bytes; `existed` false for a missing key, whose copy is ""),
  // zero-padded to at least min_size bytes, changes it in place and returns
  // whether it changed anything.  The result is stored, keeping the TTL,
  // when it changed, was padded or the key was missing (as Redis, which
  // creates and grows the string before it edits it).  `edit` runs again,
  // on a fresh copy, when another write got in first: it must start over
  // each time.  kInvalidArgument when min_size passes max_value_size;
  // kWrongType for a key of another type.
  Status EditPadded(std::string_view key, size_t min_size,
                    absl::FunctionRef<bool(bool existed, std::string* bytes)> edit);

  // BITOP: dst becomes the bytewise AND, OR or XOR of the strings at keys
  // (a missing key counts as "", a shorter string as zero-padded), or NOT of
  // the one string at keys[0]; it has no TTL.  An empty result deletes dst.
  // *length = the result's length.  kWrongType when a source is not a
  // string; kInvalidArgument for NOT over more or fewer than one key.
  enum class BitOpKind { kAnd, kOr, kXor, kNot };
  Status BitOp(BitOpKind op, std::string_view dst, const std::vector<std::string_view>& keys,
               int64_t* length);

  // Adds delta to the number stored at key as Redis's INCRBYFLOAT does (long
  // double arithmetic, the result formatted with up to 17 digits after the
  // point and trailing zeros removed), keeping its TTL.  *result = the text
  // stored.  kNotFloat when the value is not a number; kNanOrInfinity when the
  // result would not be finite; the value is then kept.
  Status IncrByFloat(std::string_view key, long double delta, std::string* result);

  // --- hashes -------------------------------------------------------------
  // A hash is an entry of type kHash mapping fields to values.  Removing its
  // last field removes the key.  String operations on a hash, and hash
  // operations on a string, are kWrongType.

  // Sets fields (HSET/HMSET), or with only_if_absent only fields that do not
  // exist (HSETNX).  *added = fields that were new.  A field given twice
  // takes its last value.
  Status HSet(std::string_view key,
              const std::vector<std::pair<std::string_view, std::string_view>>& fields,
              bool only_if_absent, int64_t* added);
  // kNotFound when the key or the field is missing.
  Status HGet(std::string_view key, std::string_view field, std::string* value) const;
  // One entry per field, nullopt for a missing one (all of them for a
  // missing key).
  Status HMGet(std::string_view key, const std::vector<std::string_view>& fields,
               std::vector<std::optional<std::string>>* values) const;
  // *removed = fields that existed.
  Status HDel(std::string_view key, const std::vector<std::string_view>& fields,
              int64_t* removed);
  // Every field and value, in no particular order (empty for a missing key).
  Status HGetAll(std::string_view key,
                 std::vector<std::pair<std::string, std::string>>* fields) const;
  // HRANDFIELD: count > 0 picks that many distinct fields (the whole hash
  // when it has no more), count < 0 draws -count times with repeats (in the
  // order drawn); empty for a missing key.  kOutOfMemory when -count draws do
  // not fit in memory.
  Status HRandField(std::string_view key, int64_t count,
                    std::vector<std::pair<std::string, std::string>>* out) const;
  Status HLen(std::string_view key, int64_t* count) const;
  Status HExists(std::string_view key, std::string_view field, bool* exists) const;
  // Length of a field's value; 0 when missing.
  Status HStrLen(std::string_view key, std::string_view field, int64_t* length) const;
  // HINCRBY: kNotInteger when the field's value is not an int64, kOverflow
  // when the result would leave the range.
  Status HIncrBy(std::string_view key, std::string_view field, int64_t delta, int64_t* result);
  // HINCRBYFLOAT, formatted as IncrByFloat.
  Status HIncrByFloat(std::string_view key, std::string_view field, long double delta,
                      std::string* result);

  // --- sorted sets ----------------------------------------------------------
  // A sorted set is an entry of type kZSet: distinct members, each with a
  // score (a double, never NaN; a zero score is kept as +0, as Redis's small
  // sets do), ordered by (score, member bytes).  Removing its last member
  // removes the key.  Other types are kWrongType both ways.

  // ZADD's options, combinable as Redis allows (NX with XX, GT or LT, and GT
  // with LT are kInvalidArgument).  kZAddIncr takes exactly one pair.
  static constexpr unsigned kZAddNx = 1;    // only add new members
  static constexpr unsigned kZAddXx = 2;    // only update existing members
  static constexpr unsigned kZAddGt = 4;    // update only to a greater score
  static constexpr unsigned kZAddLt = 8;    // update only to a lesser score
  static constexpr unsigned kZAddCh = 16;   // *count counts updated members too
  static constexpr unsigned kZAddIncr = 32; // add the score to the member's (ZINCRBY)

  // A score interval; an exclusive bound leaves its own value out.
  struct ZScoreRange {
    double min = 0, max = 0;
    bool min_exclusive = false, max_exclusive = false;
  };
  // A bound of a lex range: "-", "+", "[value" or "(value".
  struct ZLexBound {
    enum class Kind { kMinusInf, kPlusInf, kInclusive, kExclusive };
    Kind kind = Kind::kMinusInf;
    std::string value;
  };
  // Which members a range operation selects: by rank (start and stop as
  // ZRANGE's, negative from the end, both included), by score or by member
  // bytes (meaningful when the members share one score, as in Redis), in
  // ascending or (reverse) descending order; then `offset` members of that
  // order are skipped (a negative offset selects nothing) and at most
  // `count` returned (negative: all).  ZCount and ZRemRange ignore the
  // direction, offset and count.
  struct ZRangeSpec {
    enum class By { kRank, kScore, kLex };
    By by = By::kRank;
    bool reverse = false;
    int64_t start = 0, stop = -1;
    ZScoreRange score;
    ZLexBound lex_min, lex_max;
    int64_t offset = 0, count = -1;
  };
  using ZMembers = std::vector<std::pair<std::string, double>>;
  // How ZStore combines the scores of a member found in several inputs.
  enum class ZAggregate { kSum, kMin, kMax };
  enum class ZStoreOp { kUnion, kInter, kDiff };

  // ZADD (and ZINCRBY with kZAddIncr): the (score, member) pairs in order,
  // each seeing the ones before it.  *count = members added (with kZAddCh,
  // added or updated).  With kZAddIncr, *score is the member's new score, or
  // nullopt when a condition (NX, XX, GT, LT) left it alone; kNanOrInfinity
  // when the sum is NaN (nothing changes).  A NaN score is kInvalidArgument.
  Status ZAdd(std::string_view key, const std::vector<std::pair<double, std::string_view>>& pairs,
              unsigned flags, int64_t* count, std::optional<double>* score = nullptr);
  // *removed = members that were there.
  Status ZRem(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* removed);
  // kNotFound when the key or the member is missing.
  Status ZScore(std::string_view key, std::string_view member, double* score) const;
  // One entry per member, nullopt for a missing one.
  Status ZMScore(std::string_view key, const std::vector<std::string_view>& members,
                 std::vector<std::optional<double>>* scores) const;
  Status ZCard(std::string_view key, int64_t* count) const;
  // The member's 0-based rank, ascending (or descending with reverse);
  // kNotFound when the key or the member is missing.
  Status ZRank(std::string_view key, std::string_view member, bool reverse, int64_t* rank) const;
  // The members `spec` selects, in its order (empty for a missing key).
  Status ZRange(std::string_view key, const ZRangeSpec& spec, ZMembers* out) const;
  // How many members spec's range holds (ZCOUNT, ZLEXCOUNT).
  Status ZCount(std::string_view key, const ZRangeSpec& spec, int64_t* count) const;
  // Removes the members spec's range holds (ZREMRANGEBY*); *removed = how many.
  Status ZRemRange(std::string_view key, const ZRangeSpec& spec, int64_t* removed);
  // Removes and returns the `count` lowest members (highest with max), in
  // that order.  REQUIRES: count >= 0.
  Status ZPop(std::string_view key, bool max, int64_t count, ZMembers* out);
  // ZRANDMEMBER with a count: count > 0, that many distinct members (all of
  // them, from the highest, when count >= the size); count < 0, -count members that
  // may repeat.  Empty for a missing key.
  Status ZRandMember(std::string_view key, int64_t count, ZMembers* out) const;
  // ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE: combines the sorted sets (or sets,
  // whose members score 1) at `keys`, a missing key being empty, each score
  // times its key's weight (weights is empty or one per key; unused by
  // kDiff, which keeps the first key's scores), and stores the result at
  // `dst`, replacing whatever it held (an empty result deletes dst).  Every
  // key's shard is locked for the whole operation.  *size = the result's size.
  Status ZStore(std::string_view dst, const std::vector<std::string_view>& keys,
                const std::vector<double>& weights, ZAggregate aggregate, ZStoreOp op,
                int64_t* size);
  // ZUNION, ZINTER, ZDIFF: ZStore's result, not stored: in *out ordered by
  // (score, member bytes), as Redis replies it (a -0 score stays -0 here,
  // as in Redis's reply; ZStore stores it as 0).
  Status ZCombine(const std::vector<std::string_view>& keys, const std::vector<double>& weights,
                  ZAggregate aggregate, ZStoreOp op, ZMembers* out) const;
  // ZINTERCARD: how many members every key holds (sorted sets, or sets); a
  // missing key makes it 0.  The count stops at `limit` (0: no limit).
  Status ZInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                    int64_t* count) const;
  // ZRANGESTORE: stores the members `spec` selects from the sorted set at
  // `src` (a missing key is empty) as a sorted set at `dst`, replacing
  // whatever it held (an empty selection deletes dst).  *size = how many.
  Status ZRangeStore(std::string_view dst, std::string_view src, const ZRangeSpec& spec,
                     int64_t* size);
  // ZMPOP, and BZPOPMIN, BZPOPMAX, BZMPOP's attempts: ZPop on the first of
  // `keys` that holds members, all of them locked together (so a key before
  // it is empty at the moment of the pop); *which = its index, out empty
  // when none had any.  kWrongType for a key of another type met first,
  // unless skip_other_types (a blocked client waits past it, as Redis's).
  // REQUIRES: count >= 0.
  Status ZMPop(const std::vector<std::string_view>& keys, bool max, int64_t count,
               bool skip_other_types, size_t* which, ZMembers* out);
  // --- sets ---------------------------------------------------------------
  // A set is an entry of type kSet holding distinct members.  Removing its
  // last member removes the key.  A missing key reads as an empty set; set
  // operations on another type are kWrongType.  Members are returned in no
  // particular order.

  // SADD: *added = members that were new (a member given twice counts once).
  Status SAdd(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* added);
  // SREM: *removed = members that were there.
  Status SRem(std::string_view key, const std::vector<std::string_view>& members,
              int64_t* removed);
  Status SMembers(std::string_view key, std::vector<std::string>* members) const;
  Status SIsMember(std::string_view key, std::string_view member, bool* is_member) const;
  // One flag per member asked.
  Status SMIsMember(std::string_view key, const std::vector<std::string_view>& members,
                    std::vector<bool>* is_member) const;
  Status SCard(std::string_view key, int64_t* count) const;
  // SPOP: removes up to `count` members at random, each at most once, into
  // *popped (all of them when count >= the set's size).
  Status SPop(std::string_view key, uint64_t count, std::vector<std::string>* popped);
  // SRANDMEMBER: count >= 0 gives min(count, size) distinct members; count
  // < 0 gives -count members drawn independently (repeats possible), none
  // for an empty set.
  Status SRandMember(std::string_view key, int64_t count, std::vector<std::string>* out) const;
  // SMOVE: moves member from src to dst in one step (*moved: whether src
  // had it).  kWrongType when src exists and either key is not a set.
  Status SMove(std::string_view src, std::string_view dst, std::string_view member,
               bool* moved);
  enum class SetOp { kInter, kUnion, kDiff };
  // SINTER, SUNION, SDIFF (the first key less the others) of one moment.
  Status SCombine(SetOp op, const std::vector<std::string_view>& keys,
                  std::vector<std::string>* out) const;
  // SINTERSTORE, SUNIONSTORE, SDIFFSTORE: the result replaces dst, whatever
  // it held (its TTL too); an empty result deletes dst.  *size = the
  // result's cardinality.
  Status SCombineStore(SetOp op, std::string_view dst, const std::vector<std::string_view>& keys,
                       int64_t* size);
  // SINTERCARD: the intersection's cardinality, counting stops at `limit`
  // (0 = no limit).
  Status SInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                    int64_t* count) const;
  // SSCAN's step: up to `count` members from `cursor` (0 = start); *next
  // is 0 once the scan is over.  A member present from the first step to
  // the last is returned at least once.
  Status SScan(std::string_view key, uint64_t cursor, size_t count,
               std::vector<std::string>* members, uint64_t* next) const;
  // --- lists --------------------------------------------------------------
  // A list is an entry of type kList: a sequence of elements, both ends in
  // O(1).  Removing its last element removes the key.  List operations on a
  // key of another type are kWrongType and change nothing.  Indexes follow
  // Redis: negative ones count from the tail (-1 is the last element).

  // LPUSH/RPUSH: pushes each element in turn at the head (left) or tail, so
  // LPUSH k a b leaves b first.  With only_if_exists (LPUSHX/RPUSHX) a
  // missing key stays missing.  *length = the list's length after (0 for a
  // missing key with only_if_exists).
  Status ListPush(std::string_view key, const std::vector<std::string_view>& elements, bool left,
                  bool only_if_exists, int64_t* length);
  // LPOP/RPOP: pops up to `count` elements from the head (left) or tail,
  // in the order popped; *out empty for a missing key.
  Status ListPop(std::string_view key, bool left, size_t count, std::vector<std::string>* out);
  // 0 for a missing key.
  Status ListLen(std::string_view key, int64_t* length) const;
  // LRANGE: the elements from start to stop inclusive, clamped to the list.
  Status ListRange(std::string_view key, int64_t start, int64_t stop,
                   std::vector<std::string>* out) const;
  // LINDEX: kNotFound when the key is missing or the index out of range.
  Status ListIndex(std::string_view key, int64_t index, std::string* value) const;
  // LSET: kNotFound when the key is missing; *in_range = false (and nothing
  // changed) when the index is out of range.
  Status ListSet(std::string_view key, int64_t index, std::string_view value, bool* in_range);
  // LREM: removes up to |count| elements equal to `element`, from the head
  // when count > 0, from the tail when count < 0, all when count == 0.
  Status ListRem(std::string_view key, int64_t count, std::string_view element, int64_t* removed);
  // LTRIM: keeps the elements from start to stop inclusive (none when the
  // range is empty, which removes the key).
  Status ListTrim(std::string_view key, int64_t start, int64_t stop);
  // LINSERT: inserts `element` before or after the first `pivot`.  *length
  // = the new length, -1 when the pivot is missing, 0 when the key is.
  Status ListInsert(std::string_view key, bool before, std::string_view pivot,
                    std::string_view element, int64_t* length);
  // LPOS: the indexes of elements equal to `element`.  rank != 0: the
  // |rank|-th match first, searching from the head when rank > 0, from the
  // tail when rank < 0; count = how many matches at most (0: all); maxlen =
  // how many elements to compare at most (0: all).  REQUIRES: rank != 0,
  // count >= 0, maxlen >= 0.
  Status ListPos(std::string_view key, std::string_view element, int64_t rank, int64_t count,
                 int64_t maxlen, std::vector<int64_t>* positions) const;
  // LMOVE/RPOPLPUSH: pops from src's head (from_left) or tail and pushes
  // onto dst's head (to_left) or tail, in one step (src == dst rotates).
  // kNotFound when src is missing; kWrongType when src or dst holds another
  // type, and then nothing is popped.  Both shards locked in index order.
  Status ListMove(std::string_view src, std::string_view dst, bool from_left, bool to_left,
                  std::string* moved);
  // SORT .. STORE: key becomes a list of `elements` in that order, whatever
  // it held, without a TTL; no elements deletes it.  kInvalidArgument for a
  // key or element past its limit; kOutOfMemory changes nothing.
  Status ListReplace(std::string_view key, const std::vector<std::string_view>& elements);

  // --- expiry -------------------------------------------------------------

  // Sets key's TTL to ttl_ms from now.  A ttl_ms <= 0 deletes the key, as
  // Redis does.  *applied = whether a live entry was there.
  Status Expire(std::string_view key, int64_t ttl_ms, bool* applied);
  // As Expire with an absolute time in ms since the epoch; a time not after
  // now deletes the key.
  Status ExpireAt(std::string_view key, int64_t at_ms, bool* applied);
  // ExpireAt, applied only when every condition (kExpire* bits; 0 = always)
  // holds; *applied = whether they held for a live entry.
  Status ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions, bool* applied);
  // Removes key's TTL, and with it a lock's pin.  *applied = whether a live
  // entry had one.
  Status Persist(std::string_view key, bool* applied);
  // *ttl_ms = milliseconds left (> 0), -1 when the key has no expiry, -2 when
  // it is missing or expired.
  Status Pttl(std::string_view key, int64_t* ttl_ms) const;

  // --- keyspace -----------------------------------------------------------

  // Appends every live key matching the Redis glob `pattern` (* ? [a-z] [^x]
  // and \ escapes) to *out, in no particular order.  Shards are visited one
  // at a time, so keys written meanwhile may or may not appear.
  Status Keys(std::string_view pattern, std::vector<std::string>* out) const;

  // Number of live entries.
  uint64_t DbSize() const;

  // A live key picked at random; kNotFound when the store is empty.
  Status RandomKey(std::string* key) const;

  // One step of a cursor walk over the keyspace (Redis's SCAN).  Start with
  // cursor 0; the walk is over when *next is 0.  Every key that exists for
  // the whole walk is returned exactly once; keys written meanwhile may or
  // may not be.  Each step returns whole shards until at least `count` keys
  // were visited, so a step may return more than `count`.  Only keys
  // matching `pattern` (a glob, or "" for all) and, when type is set, of that
  // type are returned.  A cursor that no walk produced ends the walk at once.
  Status Scan(uint64_t cursor, std::string_view pattern, size_t count,
              std::optional<ValueType> type, std::vector<std::string>* keys,
              uint64_t* next) const;

  // Removes every entry of the scope's database (FLUSHDB).  kOk, or
  // kOutOfMemory when an allocation failed before anything was removed
  // (then nothing was).
  Status Flush();

  // Moves src's entry (value, type, TTL and pin) to dst, replacing dst.  With
  // only_if_absent, does nothing and sets *renamed = false when dst is live.
  // kNotFound when src is missing.  Both shards are locked in index order.
  Status Rename(std::string_view src, std::string_view dst, bool only_if_absent,
                bool* renamed);

  // --- waiting ------------------------------------------------------------

  // Blocks until key's version differs from last_version or timeout_ms
  // passes.  Every write, delete and expiry moves a key's version; an absent
  // key has version 0.  Returns at once when the version already differs, so
  // last_version = 0 reads the current state of a present key.  A negative
  // timeout_ms is kInvalidArgument; one past a century waits a century.
  Status WaitForChange(std::string_view key, uint64_t last_version,
                       int64_t timeout_ms, WaitResult* result) const;

  // --- databases (RESP's SELECT) -------------------------------------------

  // While one is alive, every call the creating thread makes on `store`
  // addresses database `db` (< options().databases; 0 outside any scope and
  // on every other store): its keys, and KEYS, SCAN, DBSIZE, RANDOMKEY and
  // FLUSH(DB) of that database.  Scopes nest (the inner one wins until it
  // ends).  A cluster has database 0 only: only database 0 replicates.
  class DatabaseScope {
   public:
    DatabaseScope(const Store& store, uint32_t db);
    // The store's own door (its implementation object; persistence loads
    // each record in its database).
    DatabaseScope(const void* impl, uint32_t db);
    ~DatabaseScope();
    DatabaseScope(const DatabaseScope&) = delete;
    DatabaseScope& operator=(const DatabaseScope&) = delete;

   private:
    const void* prev_store_;
    uint32_t prev_db_;
  };

  // MOVE: moves key's entry (value, TTL, pin) from the scope's database to
  // to_db, unless key is missing there or present in to_db (*moved = false).
  // kInvalidArgument when to_db is the same database or out of range.
  Status Move(std::string_view key, uint32_t to_db, bool* moved);
  // FLUSHALL: Flush in every database, one after the other.
  Status FlushEveryDatabase();

  // --- SWAPDB, COPY, OBJECT (issue 16) --------------------------------------

  // SWAPDB: exchanges the contents of databases a and b (< options().
  // databases) in one step for every other thread: every shard of both is
  // locked in index order (inside an atomic section, the section must hold
  // both databases).  A connection or scope addressing a then sees b's
  // former keys.  Watched keys present in either database count as changed,
  // every swapped key gets a new version (WaitForChange wakes) and, with a
  // data dir, the log records both databases' new contents (a flush of each
  // and every entry), so that a restart and a fuzzy snapshot replay it
  // exactly.  kInvalidArgument when an index is out of range or with a
  // replicator (a cluster has database 0 only).  a == b does nothing.
  Status SwapDb(uint32_t a, uint32_t b);
  // COPY: copies src's entry (value of any type, TTL) of the scope's
  // database to dst in database dst_db, unless src is missing or dst is
  // live and !replace (*copied = false).  The copy is plain data: not a
  // pin, not ephemeral, no fence.  All or nothing: kOutOfMemory changes
  // nothing.  kInvalidArgument when dst_db is out of range or dst is src.
  Status Copy(std::string_view src, std::string_view dst, uint32_t dst_db, bool replace,
              bool* copied);
  // What OBJECT reports on a live key, read without touching it.
  struct ObjectShape {
    ValueType type = ValueType::kString;
    // A string's length; an aggregate's number of elements.
    uint64_t size = 0;
    // The longest element: a hash's longest field or value, a list's
    // element, a set's or a sorted set's member.
    uint64_t longest = 0;
    // A string: its value is a 64-bit integer in Redis's canonical form
    // (then `integer` holds it).  A set: every member is one.
    bool integers = false;
    int64_t integer = 0;
    // Milliseconds since the entry's last access the store tracked: every
    // read and write under allkeys-lru, the last write otherwise.
    int64_t idle_ms = 0;
  };
  // kNotFound when key is missing or expired.
  Status Object(std::string_view key, ObjectShape* shape) const;

  // --- atomic sections and WATCH (RESP's MULTI/EXEC and EVAL) --------------

  // Runs fn with the shards of `keys` (every shard with all_shards) locked
  // exclusively, taken in index order, for fn's whole run, then wakes their
  // waiters.  The store calls fn makes on this thread on keys of those
  // shards do not lock again, so a sequence of them is one step for every
  // other thread, in-process PHP callers included.  fn must not call the
  // store on a key of any other shard (that would break the lock order: the
  // caller checks its keys first), nor wait for another thread that needs
  // these shards.  Inside, a write that needs eviction is refused for memory
  // instead (eviction visits other shards).  kInvalidArgument for a key
  // longer than kMaxKeySize or when called inside a section (they do not
  // nest); fn then does not run.
  Status Atomically(const std::vector<std::string_view>& keys, bool all_shards,
                    absl::FunctionRef<void()> fn);
  // As Atomically, over keys each in its own database, and every shard of
  // each of whole_databases (a transaction that SELECTs, MOVEs or FLUSHes).
  Status AtomicallyIn(const std::vector<std::pair<uint32_t, std::string_view>>& keys,
                      const std::vector<uint32_t>& whole_databases, absl::FunctionRef<void()> fn);

  // WATCH: registers interest in key and sets *touched to its change
  // counter, which every later change to the key moves (a write, a
  // deletion, an expiry, an eviction, a flush while it exists, a replicated
  // or loaded change), whether the key exists or not.  A key expired
  // already is removed first.  Pair every Watch with one Unwatch.
  Status Watch(std::string_view key, uint64_t* touched);
  // *changed = whether key changed since Watch gave `touched`, or has
  // expired since.  Inside Atomically (with key's shard), the answer holds
  // until the section ends.
  Status WatchedChanged(std::string_view key, uint64_t touched, bool* changed) const;
  // Ends one Watch of key.
  void Unwatch(std::string_view key);
  // Whether the calling thread's atomic section holds key's shard (in the
  // scope's database): a call on key inside the section is then safe.
  bool HeldBySection(std::string_view key) const;
  // Where key lives in database db: its shard's index among every
  // database's shards (database d has ShardsPerDatabase() of them, from
  // d * ShardsPerDatabase()).  For callers that compare what two operations
  // lock (RESP's -BUSY for a long script); keys longer than kMaxKeySize too.
  size_t ShardIndex(uint32_t db, std::string_view key) const;
  size_t ShardsPerDatabase() const;

  // --- replication --------------------------------------------------------
  // Used by a cluster's Replicator; a single node never calls these.

  // Applies a mutation another node published, if its stamp is newer than
  // what this node has for the key (its entry, or the tombstone of its
  // deletion or expiry): last writer wins, so every node that has seen the
  // same writes holds the same state.  A kFlush removes every entry and
  // tombstone older than its stamp.  Not refused for memory (a node cannot
  // decline the cluster's state); not published again.  Returns whether it
  // changed anything.  m.pinned pins the entry when it is a string with an
  // expiry (else it is ignored).  REQUIRES: m.stamp is set.
  bool ApplyReplicated(const Mutation& m);

  // Removes key's entry or tombstone on this node only, if it is still the
  // state the write `stamp` made: nothing is published and no tombstone is
  // left, so the next state received for the key wins whatever its stamp.
  // A cluster node calls it for a decision its peers did not confirm (its
  // own copy of the key may then be wrong, and a fresher stamp of its own
  // would otherwise override theirs), then fetches their state again.  A
  // later write to the key (a decision made on top of it) is left alone.
  void ForgetLocal(std::string_view key, const Stamp& stamp);
  // Marks key's entry or tombstone confirmed, if it is still the state the
  // write `stamp` made.  A write the replicator published as tentative
  // (Replicator::Tentative) stays out of ForEachForSync until then.
  void ConfirmLocal(std::string_view key, const Stamp& stamp);

  // Calls fn for every live entry and tombstone (but tentative ones, see
  // ConfirmLocal), as the mutations that
  // would recreate them (with their stamps), a shard at a time under its
  // read lock; first a kFlush when a flush stamp is set.  fn must only copy.
  void ForEachForSync(absl::FunctionRef<void(const Mutation&)> fn) const;

  // Tombstones currently kept.
  uint64_t TombstoneCount() const;

  // --- persistence (StoreOptions::persistence, docs/PERSISTENCE.md) -------

  // kOk, or kPersistenceError while the log cannot be written: the edges
  // (the ops table, RESP) refuse writes then, as Redis does with MISCONF.
  // Reads, DelIfEq and SetNxEphemeral go on.
  Status WritesAllowed() const;
  // With fsync=always, waits until every change this thread has made is
  // durable (group commit); kOk at once otherwise.  kPersistenceError when
  // it could not be made durable (the change stays in memory and is logged
  // once the disk accepts writes again).  Call once no store call is in
  // progress on this thread: after one operation (the ops table) or one
  // batch of pipelined commands (RESP).
  Status WaitDurable();
  // Snapshot + log compaction: background=false (SAVE) waits for it,
  // background=true (BGREWRITEAOF) starts it.  kOk with *message, or an
  // error with *message: kInvalidArgument when persistence is off or a
  // rewrite is already in progress, kPersistenceError when it failed.
  Status Rewrite(bool background, std::string* message);
  PersistenceInfo persistence_info() const;

  // --- introspection ------------------------------------------------------

  // Details of a live entry; kNotFound when missing or expired.
  Status Inspect(std::string_view key, EntryInfo* info) const;

  StoreStats Stats() const;
  const StoreOptions& options() const;
  // Replaces options().memory_limit from now on (0 = unlimited; CONFIG SET
  // maxmemory).  Entries already over a lowered limit stay; the next write
  // that needs memory evicts or is refused as under any limit.
  void SetMemoryLimit(uint64_t bytes);
  uint64_t memory_limit() const;
  // Whether a limit is set, the policy is noeviction and the accounted
  // memory is past the limit: Redis's "out of memory" state, in which the
  // RESP server refuses commands that may grow the data (denyoom) before
  // they run.  (Under allkeys-lru each write evicts what it needs.)
  bool OverMemoryLimit() const;
  // The store's clock (ms since the epoch), for callers that turn relative
  // TTLs into absolute expiries.
  int64_t NowMs() const;

  // Removes up to `budget_per_shard` expired entries from each shard; returns
  // how many were removed.  The sweeper thread calls this; tests may too.
  size_t SweepExpired(size_t budget_per_shard);

 private:
  friend CheckDataReport CheckData(const std::string& data_dir, const StoreOptions& options);
  class Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ephpm

#endif  // EPHPM_STORE_H_
