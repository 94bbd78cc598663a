// Small value types shared by the store and its replication seam.

#ifndef EPHPM_TYPES_H_
#define EPHPM_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ephpm/status.h"

namespace ephpm {

// What an entry holds.  String commands on an entry of another type answer
// Status::kWrongType.
enum class ValueType : uint8_t {
  kString = 0,
  kHash = 1,  // field -> value, as Redis's hash
  kList = 2,  // an ordered sequence of elements, as Redis's list
  kSet = 3,   // distinct members, as Redis's set
  kZSet = 4,  // distinct members ordered by a score, as Redis's sorted set
};
inline constexpr ValueType kLastValueType = ValueType::kZSet;

// Result of Store::SetNx.
enum class SetNxOutcome : int {
  kInserted = 0,          // this call created the key
  kExists = 1,            // a live entry (of any type) was already there
  kOutOfMemory = 2,       // refused by the memory limit; nothing changed
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kInvalidArgument = 4,   // key or value too long, negative TTL
};

// Result of Store::DelIfEq.
enum class DelIfEqOutcome : int {
  kDeleted = 0,           // a live string equal to the token was removed
  kNotMatched = 1,        // missing, expired, or a different value
  kOwnerUnreachable = 2,  // cluster: the owner did not answer; outcome unknown
  kWrongType = 3,         // the key holds a non-string value
  kInvalidArgument = 4,   // key or token too long
  kOutOfMemory = 5,       // decoding a compressed candidate failed to allocate;
                          // nothing changed
};

// Result of Store::SetIfEq (the fenced write).
enum class SetIfEqOutcome : int {
  kWritten = 0,           // the guard held the token; the key was written
  kNotMatched = 1,        // the guard is missing, expired or holds another value
  kOutOfMemory = 2,       // refused by the memory limit; nothing changed
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kWrongType = 4,         // the guard holds a non-string value
  kInvalidArgument = 5,   // a key, the token or the value too long; negative TTL
};

// Result of Store::DelIfGuardEq (the fenced delete).
enum class DelIfGuardEqOutcome : int {
  kDeleted = 0,           // the guard held the token; the key was removed
  kAbsent = 1,            // the guard held the token; the key was already absent
  kNotMatched = 2,        // the guard is missing, expired or holds another value;
                          // nothing was removed
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kWrongType = 4,         // the guard holds a non-string value
  kInvalidArgument = 5,   // a key or the token too long
  kOutOfMemory = 6,       // decoding a compressed guard failed to allocate;
                          // nothing changed
};

// Result of Store::ExpireIfGuardEq (the fenced TTL refresh).
enum class ExpireIfGuardEqOutcome : int {
  kApplied = 0,           // the guard held the token; the key's TTL was set
  kAbsent = 1,            // the guard held the token; the key was absent
  kNotMatched = 2,        // the guard is missing, expired or holds another value;
                          // nothing changed
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kWrongType = 4,         // the guard holds a non-string value
  kInvalidArgument = 5,   // a key or the token too long; a negative TTL
  kOutOfMemory = 6,       // an allocation failed; nothing changed
};

// Result of Store::ExpireIfEq (compare-and-expire: a lock's refresh).
enum class ExpireIfEqOutcome : int {
  kApplied = 0,           // a live string equal to the token got the new TTL
                          // (ttl_ms <= 0: was removed, as Redis's EXPIRE does)
  kNotMatched = 1,        // missing, expired, or a different value
  kOwnerUnreachable = 2,  // cluster: the owner did not answer; outcome unknown
  kWrongType = 3,         // the key holds a non-string value
  kInvalidArgument = 4,   // key or token too long; a TTL past the clock's range
  kOutOfMemory = 5,       // an allocation failed; nothing changed
};

// The largest fence a fenced write accepts (INT64_MAX: PHP's int, RESP's
// integer).  Grants stay far below it (wall ms << 16 passes it in the year
// 10889).
inline constexpr uint64_t kMaxFence = 0x7fffffffffffffffULL;

// Result of Store::SetFenced (the resource-side check of a fencing token).
enum class SetFencedOutcome : int {
  kWritten = 0,           // fence >= the key's recorded fence: stored, fence recorded
  kStale = 1,             // a higher fence is recorded for the key; nothing changed
  kOutOfMemory = 2,       // refused by the memory limit; nothing changed
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kInvalidArgument = 4,   // key or value too long, negative TTL, fence 0 or past kMaxFence
};

// Result of Store::LockState: what key holds, seen from a token.
enum class LockStateOutcome : int {
  kHeld = 0,              // a live string equal to the token
  kOther = 1,             // live, but another value or another type
  kAbsent = 2,            // missing or expired
  kOwnerUnreachable = 3,  // cluster: the owner did not answer; outcome unknown
  kInvalidArgument = 4,   // key or token too long
  kOutOfMemory = 5,       // decoding a compressed value failed to allocate
};

// The error an outcome carries, or Status::kOk for a verdict (inserted,
// exists, deleted, not matched, absent, written, applied).  Every edge (the
// C ABI, RESP, the cluster wire) turns the error part into its own form
// through its one Status table, and only the verdicts per operation.
constexpr Status ErrorOf(SetNxOutcome o) {
  switch (o) {
    case SetNxOutcome::kInserted:
    case SetNxOutcome::kExists: return Status::kOk;
    case SetNxOutcome::kOutOfMemory: return Status::kOutOfMemory;
    case SetNxOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case SetNxOutcome::kInvalidArgument: return Status::kInvalidArgument;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(DelIfEqOutcome o) {
  switch (o) {
    case DelIfEqOutcome::kDeleted:
    case DelIfEqOutcome::kNotMatched: return Status::kOk;
    case DelIfEqOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case DelIfEqOutcome::kWrongType: return Status::kWrongType;
    case DelIfEqOutcome::kInvalidArgument: return Status::kInvalidArgument;
    case DelIfEqOutcome::kOutOfMemory: return Status::kOutOfMemory;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(SetIfEqOutcome o) {
  switch (o) {
    case SetIfEqOutcome::kWritten:
    case SetIfEqOutcome::kNotMatched: return Status::kOk;
    case SetIfEqOutcome::kOutOfMemory: return Status::kOutOfMemory;
    case SetIfEqOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case SetIfEqOutcome::kWrongType: return Status::kWrongType;
    case SetIfEqOutcome::kInvalidArgument: return Status::kInvalidArgument;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(DelIfGuardEqOutcome o) {
  switch (o) {
    case DelIfGuardEqOutcome::kDeleted:
    case DelIfGuardEqOutcome::kAbsent:
    case DelIfGuardEqOutcome::kNotMatched: return Status::kOk;
    case DelIfGuardEqOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case DelIfGuardEqOutcome::kWrongType: return Status::kWrongType;
    case DelIfGuardEqOutcome::kInvalidArgument: return Status::kInvalidArgument;
    case DelIfGuardEqOutcome::kOutOfMemory: return Status::kOutOfMemory;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(ExpireIfGuardEqOutcome o) {
  switch (o) {
    case ExpireIfGuardEqOutcome::kApplied:
    case ExpireIfGuardEqOutcome::kAbsent:
    case ExpireIfGuardEqOutcome::kNotMatched: return Status::kOk;
    case ExpireIfGuardEqOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case ExpireIfGuardEqOutcome::kWrongType: return Status::kWrongType;
    case ExpireIfGuardEqOutcome::kInvalidArgument: return Status::kInvalidArgument;
    case ExpireIfGuardEqOutcome::kOutOfMemory: return Status::kOutOfMemory;
  }
  return Status::kInvalidArgument;
}

constexpr Status ErrorOf(ExpireIfEqOutcome o) {
  switch (o) {
    case ExpireIfEqOutcome::kApplied:
    case ExpireIfEqOutcome::kNotMatched: return Status::kOk;
    case ExpireIfEqOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case ExpireIfEqOutcome::kWrongType: return Status::kWrongType;
    case ExpireIfEqOutcome::kInvalidArgument: return Status::kInvalidArgument;
    case ExpireIfEqOutcome::kOutOfMemory: return Status::kOutOfMemory;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(SetFencedOutcome o) {
  switch (o) {
    case SetFencedOutcome::kWritten:
    case SetFencedOutcome::kStale: return Status::kOk;
    case SetFencedOutcome::kOutOfMemory: return Status::kOutOfMemory;
    case SetFencedOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case SetFencedOutcome::kInvalidArgument: return Status::kInvalidArgument;
  }
  return Status::kInvalidArgument;
}
constexpr Status ErrorOf(LockStateOutcome o) {
  switch (o) {
    case LockStateOutcome::kHeld:
    case LockStateOutcome::kOther:
    case LockStateOutcome::kAbsent: return Status::kOk;
    case LockStateOutcome::kOwnerUnreachable: return Status::kOwnerUnreachable;
    case LockStateOutcome::kInvalidArgument: return Status::kInvalidArgument;
    case LockStateOutcome::kOutOfMemory: return Status::kOutOfMemory;
  }
  return Status::kInvalidArgument;
}

// A lock grant with its fencing token (Store::SetNxFenced).  `fence` is set
// when outcome is kInserted: strictly greater than every fence this node
// granted or heard of before (docs/LOCKS.md).
struct FencedGrant {
  SetNxOutcome outcome = SetNxOutcome::kExists;
  uint64_t fence = 0;
};

// What Store::LockState reports.  pttl_ms and fence describe the live entry
// (kHeld, kOther): ms left (-1 without an expiry) and the fence it carries
// (its grant's, or the highest recorded by SetFenced; 0 for none).
struct LockStateReply {
  LockStateOutcome outcome = LockStateOutcome::kAbsent;
  int64_t pttl_ms = -2;
  uint64_t fence = 0;
};

// What an increment decided by a key's owner came to: kOk and the new value,
// or the error status (kNotInteger, kOverflow, kOutOfMemory, ...).
struct IncrByReply {
  Status status = Status::kOk;
  int64_t value = 0;
};

// A read made on a key's owner: kOk and the value, kNotFound, kWrongType.
struct GetReply {
  Status status = Status::kNotFound;
  std::string value;
};

// A condition on a key's current string value (Redis 8.4's IFEQ, IFNE,
// IFDEQ, IFDNE; Valkey 8.1's IFEQ), for Store::SetWith and Store::DelEx.
// Compared with the decompressed value; a digest is Store::DigestOf.
struct ValueCondition {
  enum class Kind : uint8_t {
    kNone,
    kIfEq,         // the key holds exactly `value`
    kIfNe,         // the key does not hold `value` (a missing key counts)
    kIfDigestEq,   // the value's digest is `digest`
    kIfDigestNe,   // the value's digest is not `digest` (a missing key counts)
  };
  Kind kind = Kind::kNone;
  std::string_view value;
  uint64_t digest = 0;
};

// Redis's SET options, for Store::SetWith.
struct SetOptions {
  enum class When : uint8_t { kAlways, kIfAbsent /* NX */, kIfPresent /* XX */ };
  enum class Expiry : uint8_t {
    kNone,  // the key ends up without a TTL (plain SET)
    kKeep,  // KEEPTTL: an existing key keeps its TTL
    kAt,    // EX/PX/EXAT/PXAT: expires at expires_at_ms (absolute)
  };
  When when = When::kAlways;
  Expiry expiry = Expiry::kNone;
  int64_t expires_at_ms = 0;
  bool get_old = false;  // GET: report the previous value
  // IFEQ/IFNE/IFDEQ/IFDNE; only with when == kAlways.  IFEQ and IFDEQ never
  // create a missing key, IFNE and IFDNE do.  A non-string key with a
  // condition is kWrongType.
  ValueCondition condition;
};

// What Store::SetWith reports.
struct SetResult {
  bool written = false;  // the condition held and the value was stored
  bool had_old = false;  // with get_old: a live string was there ...
  std::string old;       // ... and this was its value
};

// A conditional SET or DELEX decided by the key's owner (RouteSetWith,
// RouteDelEx): the status and what the call reported.
struct SetWithReply {
  Status status = Status::kOk;
  SetResult result;
};
struct DelExReply {
  Status status = Status::kOk;
  int64_t removed = 0;
};

// A write's place in the cluster-wide order, for last-writer-wins: a hybrid
// logical clock reading ((wall ms << 16) | counter) and a hash of the writing
// node's id as the tie-break.  {0, 0} means "not stamped" (a single node).
struct Stamp {
  uint64_t hlc = 0;
  uint64_t node = 0;
  friend bool operator<(const Stamp& a, const Stamp& b) {
    return a.hlc != b.hlc ? a.hlc < b.hlc : a.node < b.node;
  }
  friend bool operator==(const Stamp& a, const Stamp& b) {
    return a.hlc == b.hlc && a.node == b.node;
  }
  bool empty() const { return hlc == 0 && node == 0; }
};

// One change to the store, as handed to Replicator::Publish (and taken back
// by Store::ApplyReplicated on another node).  A set or expire carries the
// key's whole state, so replication is state-based: the newest stamp wins.
// The views point into the store and are valid only during the call.
struct Mutation {
  enum class Kind : uint8_t {
    kSet,     // key now holds `value` (stored bytes) with `expires_at_ms`
    kDelete,  // key was removed by a client operation
    kExpire,  // key's expiry changed to `expires_at_ms` (0 = persistent)
    kFlush,   // every key was removed
    // The log only, never published: the store's fence clock has granted
    // (or reserved) fences up to `fence`; a start resumes past it.
    kFenceMark,
  };
  Kind kind;
  std::string_view key;
  ValueType type = ValueType::kString;
  // As stored: a zstd frame when `compressed`; for a hash, every field as
  // <u32 field length><field><u32 value length><value> (little endian).
  std::string_view value;
  bool compressed = false;
  uint64_t original_size = 0;  // the value's length before compression
  int64_t expires_at_ms = 0;   // absolute, 0 = none
  uint64_t version = 0;        // the key's version after the change (local)
  Stamp stamp;                 // where the change stands in the cluster's order
  // The key is a lock (made by set_nx with a TTL): never evicted while live.
  // Carried so that a node that becomes the key's owner holds the lock as
  // firmly as the owner did.  Only ever set with `expires_at_ms`.
  bool pinned = false;
  // The key is a lock held by a request of the node that decided it
  // (Store::SetNxEphemeral): every node holds it so, and none logs it, so
  // that no restart brings it back (docs/PERSISTENCE.md).
  bool ephemeral = false;
  // The fencing token the key carries (0 = none): a lock's grant
  // (Store::SetNxFenced) or the highest fence a fenced write recorded
  // (Store::SetFenced).  On a kDelete it is the fence the removed entry
  // carried, which the key keeps recorded after the removal.
  uint64_t fence = 0;
  // The database the key is in (Store::DatabaseScope); for a kFlush, the
  // database flushed.  A cluster has database 0 only.
  uint32_t db = 0;
};

}  // namespace ephpm

#endif  // EPHPM_TYPES_H_
