// The routed operations' table and the outcomes' encodings.

#include "route_codec.h"

#include <cstddef>

namespace ephpm {
namespace cluster {
namespace {

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
EPHPM_WIRE(ExpireIfEqOutcome, kApplied, 0);
EPHPM_WIRE(ExpireIfEqOutcome, kNotMatched, 1);
EPHPM_WIRE(ExpireIfEqOutcome, kOwnerUnreachable, 2);
EPHPM_WIRE(ExpireIfEqOutcome, kWrongType, 3);
EPHPM_WIRE(ExpireIfEqOutcome, kInvalidArgument, 4);
EPHPM_WIRE(ExpireIfEqOutcome, kOutOfMemory, 5);
EPHPM_WIRE(SetFencedOutcome, kWritten, 0);
EPHPM_WIRE(SetFencedOutcome, kStale, 1);
EPHPM_WIRE(SetFencedOutcome, kOutOfMemory, 2);
EPHPM_WIRE(SetFencedOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(SetFencedOutcome, kInvalidArgument, 4);
EPHPM_WIRE(LockStateOutcome, kHeld, 0);
EPHPM_WIRE(LockStateOutcome, kOther, 1);
EPHPM_WIRE(LockStateOutcome, kAbsent, 2);
EPHPM_WIRE(LockStateOutcome, kOwnerUnreachable, 3);
EPHPM_WIRE(LockStateOutcome, kInvalidArgument, 4);
EPHPM_WIRE(LockStateOutcome, kOutOfMemory, 5);
// The request enums too: their bytes are arguments.
EPHPM_WIRE(ValueCondition::Kind, kNone, 0);
EPHPM_WIRE(ValueCondition::Kind, kIfEq, 1);
EPHPM_WIRE(ValueCondition::Kind, kIfNe, 2);
EPHPM_WIRE(ValueCondition::Kind, kIfDigestEq, 3);
EPHPM_WIRE(ValueCondition::Kind, kIfDigestNe, 4);
EPHPM_WIRE(SetOptions::When, kAlways, 0);
EPHPM_WIRE(SetOptions::When, kIfAbsent, 1);
EPHPM_WIRE(SetOptions::When, kIfPresent, 2);
EPHPM_WIRE(SetOptions::Expiry, kNone, 0);
EPHPM_WIRE(SetOptions::Expiry, kKeep, 1);
EPHPM_WIRE(SetOptions::Expiry, kAt, 2);
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
EPHPM_WIRE(Status, kPersistenceError, 10);
#undef EPHPM_WIRE

// The last value of each one-byte outcome (a byte above it is malformed).
template <typename E>
constexpr int kMaxOutcome = 0;
template <>
constexpr int kMaxOutcome<SetNxOutcome> = static_cast<int>(SetNxOutcome::kInvalidArgument);
template <>
constexpr int kMaxOutcome<DelIfEqOutcome> = static_cast<int>(DelIfEqOutcome::kOutOfMemory);
template <>
constexpr int kMaxOutcome<SetIfEqOutcome> = static_cast<int>(SetIfEqOutcome::kInvalidArgument);
template <>
constexpr int kMaxOutcome<DelIfGuardEqOutcome> =
    static_cast<int>(DelIfGuardEqOutcome::kOutOfMemory);
template <>
constexpr int kMaxOutcome<ExpireIfGuardEqOutcome> =
    static_cast<int>(ExpireIfGuardEqOutcome::kOutOfMemory);
template <>
constexpr int kMaxOutcome<ExpireIfEqOutcome> = static_cast<int>(ExpireIfEqOutcome::kOutOfMemory);
template <>
constexpr int kMaxOutcome<SetFencedOutcome> = static_cast<int>(SetFencedOutcome::kInvalidArgument);
template <>
constexpr int kMaxOutcome<LockStateOutcome> = static_cast<int>(LockStateOutcome::kOutOfMemory);
template <>
constexpr int kMaxOutcome<Status> = static_cast<int>(Status::kPersistenceError);

// Reads an outcome byte of an enum whose values run 0..kMaxOutcome<E>.
template <typename E>
bool ByteFrom(Reader* r, E* out) {
  uint8_t v = 0;
  if (!r->U8(&v) || v > kMaxOutcome<E>) return false;
  *out = static_cast<E>(v);
  return true;
}

// Reads a byte that is a flag: 0 or 1.
bool FlagFrom(Reader* r, bool* out) {
  uint8_t v = 0;
  if (!r->U8(&v) || v > 1) return false;
  *out = v != 0;
  return true;
}

// One argument of a route request: a member of RouteArgs, a string, an
// integer, or a byte whose values run 0..max.
struct Field {
  enum class Kind : uint8_t { kStr, kI64, kU64, kByte } kind;
  std::string_view RouteArgs::*str;
  int64_t RouteArgs::*i64;
  uint64_t RouteArgs::*u64;
  uint8_t RouteArgs::*byte;
  uint8_t max;
};
constexpr Field Str(std::string_view RouteArgs::*m) {
  return {Field::Kind::kStr, m, nullptr, nullptr, nullptr, 0};
}
constexpr Field I64(int64_t RouteArgs::*m) {
  return {Field::Kind::kI64, nullptr, m, nullptr, nullptr, 0};
}
constexpr Field U64(uint64_t RouteArgs::*m) {
  return {Field::Kind::kU64, nullptr, nullptr, m, nullptr, 0};
}
constexpr Field Byte(uint8_t RouteArgs::*m, int max) {
  return {Field::Kind::kByte, nullptr, nullptr, nullptr, m, static_cast<uint8_t>(max)};
}
constexpr Field kGuard = Str(&RouteArgs::guard);
constexpr Field kToken = Str(&RouteArgs::token);
constexpr Field kKey = Str(&RouteArgs::key);
constexpr Field kValue = Str(&RouteArgs::value);
constexpr Field kTtl = I64(&RouteArgs::ttl);
constexpr Field kDelta = I64(&RouteArgs::delta);
constexpr Field kFence = U64(&RouteArgs::fence);
constexpr Field kEphemeral = Byte(&RouteArgs::ephemeral, 1);
constexpr Field kCondition =
    Byte(&RouteArgs::condition, static_cast<int>(ValueCondition::Kind::kIfDigestNe));
constexpr Field kDigest = U64(&RouteArgs::digest);
constexpr Field kWhen = Byte(&RouteArgs::when, static_cast<int>(SetOptions::When::kIfPresent));
constexpr Field kExpiry = Byte(&RouteArgs::expiry, static_cast<int>(SetOptions::Expiry::kAt));
constexpr Field kExpiresAt = I64(&RouteArgs::expires_at);
constexpr Field kGetOld = Byte(&RouteArgs::get_old, 1);

// A route request's arguments, after the operation byte and the deadline.
struct Row {
  RouteOp op;
  size_t count;
  Field fields[9];  // in wire order; the first is the routing key
};

constexpr Row kRows[] = {
    {RouteOp::kSetNx, 3, {kKey, kValue, kTtl}},
    {RouteOp::kDelIfEq, 2, {kKey, kToken}},
    {RouteOp::kSetIfEq, 5, {kGuard, kToken, kKey, kValue, kTtl}},
    {RouteOp::kIncrBy, 2, {kKey, kDelta}},
    {RouteOp::kGet, 1, {kKey}},
    {RouteOp::kDelIfGuardEq, 3, {kGuard, kToken, kKey}},
    {RouteOp::kExpireIfGuardEq, 4, {kGuard, kToken, kKey, kTtl}},
    {RouteOp::kSetNxEphemeral, 3, {kKey, kValue, kTtl}},
    {RouteOp::kSetNxFenced, 4, {kKey, kValue, kTtl, kEphemeral}},
    {RouteOp::kExpireIfEq, 3, {kKey, kToken, kTtl}},
    {RouteOp::kSetFenced, 4, {kKey, kValue, kFence, kTtl}},
    {RouteOp::kLockState, 2, {kKey, kToken}},
    {RouteOp::kSetWith,
     9,
     {kKey, kValue, kWhen, kExpiry, kExpiresAt, kGetOld, kCondition, kToken, kDigest}},
    {RouteOp::kDelEx, 4, {kKey, kCondition, kToken, kDigest}},
};

// Every row routes by a string, and has room for its fields.
constexpr bool RowsWellFormed() {
  for (const Row& row : kRows) {
    if (row.count == 0 || row.count > sizeof(row.fields) / sizeof(row.fields[0]) ||
        row.fields[0].kind != Field::Kind::kStr) {
      return false;
    }
  }
  return true;
}
static_assert(RowsWellFormed(), "a route row's first field is its routing key");

const Row* RowOf(RouteOp op) {
  for (const Row& row : kRows) {
    if (row.op == op) return &row;
  }
  return nullptr;
}

}  // namespace

void EncodeArgs(RouteOp op, const RouteArgs& a, Writer* w) {
  const Row* row = RowOf(op);
  for (size_t i = 0; i < row->count; ++i) {
    const Field& f = row->fields[i];
    switch (f.kind) {
      case Field::Kind::kStr:
        w->Str(a.*f.str);
        break;
      case Field::Kind::kI64:
        w->I64(a.*f.i64);
        break;
      case Field::Kind::kU64:
        w->U64(a.*f.u64);
        break;
      case Field::Kind::kByte:
        w->U8(a.*f.byte);
        break;
    }
  }
}

bool DecodeArgs(RouteOp op, Reader* r, RouteArgs* a) {
  const Row* row = RowOf(op);
  if (row == nullptr) return false;
  for (size_t i = 0; i < row->count; ++i) {
    const Field& f = row->fields[i];
    bool ok = false;
    switch (f.kind) {
      case Field::Kind::kStr:
        ok = r->Str(&(a->*f.str));
        break;
      case Field::Kind::kI64:
        ok = r->I64(&(a->*f.i64));
        break;
      case Field::Kind::kU64:
        ok = r->U64(&(a->*f.u64));
        break;
      case Field::Kind::kByte:
        ok = r->U8(&(a->*f.byte)) && a->*f.byte <= f.max;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

ValueCondition ConditionOf(const RouteArgs& a) {
  ValueCondition c;
  c.kind = static_cast<ValueCondition::Kind>(a.condition);
  c.value = a.token;
  c.digest = a.digest;
  return c;
}

SetOptions SetOptionsOf(const RouteArgs& a) {
  SetOptions o;
  o.when = static_cast<SetOptions::When>(a.when);
  o.expiry = static_cast<SetOptions::Expiry>(a.expiry);
  o.expires_at_ms = a.expires_at;
  o.get_old = a.get_old != 0;
  o.condition = ConditionOf(a);
  return o;
}

void PutCondition(const ValueCondition& c, RouteArgs* a) {
  a->condition = static_cast<uint8_t>(c.kind);
  a->token = c.value;
  a->digest = c.digest;
}

void PutSetOptions(const SetOptions& o, RouteArgs* a) {
  a->when = static_cast<uint8_t>(o.when);
  a->expiry = static_cast<uint8_t>(o.expiry);
  a->expires_at = o.expires_at_ms;
  a->get_old = o.get_old ? 1 : 0;
  PutCondition(o.condition, a);
}

std::string_view RoutingKey(RouteOp op, const RouteArgs& a) { return a.*RowOf(op)->fields[0].str; }

template <typename Outcome>
bool OutcomeCodec<Outcome>::Decode(std::string_view answer, Outcome* out) {
  Reader r(answer);
  return ByteFrom(&r, out);
}
template struct OutcomeCodec<SetNxOutcome>;
template struct OutcomeCodec<DelIfEqOutcome>;
template struct OutcomeCodec<SetIfEqOutcome>;
template struct OutcomeCodec<DelIfGuardEqOutcome>;
template struct OutcomeCodec<ExpireIfGuardEqOutcome>;
template struct OutcomeCodec<ExpireIfEqOutcome>;
template struct OutcomeCodec<SetFencedOutcome>;

void OutcomeCodec<IncrByReply>::Encode(const IncrByReply& o, Writer* w) {
  w->U8(static_cast<uint8_t>(o.status));
  w->I64(o.status == Status::kOk ? o.value : 0);
}

bool OutcomeCodec<IncrByReply>::Decode(std::string_view answer, IncrByReply* out) {
  Reader r(answer);
  return ByteFrom(&r, &out->status) && r.I64(&out->value);
}

void OutcomeCodec<GetReply>::Encode(const GetReply& o, Writer* w) {
  w->U8(static_cast<uint8_t>(o.status));
  w->Str(o.status == Status::kOk ? std::string_view(o.value) : std::string_view());
}

bool OutcomeCodec<GetReply>::Decode(std::string_view answer, GetReply* out) {
  Reader r(answer);
  std::string_view value;
  if (!ByteFrom(&r, &out->status) || !r.Str(&value)) return false;
  out->value.assign(value.data(), value.size());
  return true;
}

// The struct outcomes below refuse a reply with bytes left over, and one
// whose parts contradict each other: a decision that arrives garbled must
// read as "unknown", never as a verdict.

void OutcomeCodec<FencedGrant>::Encode(const FencedGrant& o, Writer* w) {
  w->U8(static_cast<uint8_t>(o.outcome));
  w->U64(o.outcome == SetNxOutcome::kInserted ? o.fence : 0);
}

bool OutcomeCodec<FencedGrant>::Decode(std::string_view answer, FencedGrant* out) {
  Reader r(answer);
  if (!ByteFrom(&r, &out->outcome) || !r.U64(&out->fence) || !r.done()) return false;
  // A grant always carries its fence, and only a grant does.
  return (out->outcome == SetNxOutcome::kInserted) == (out->fence != 0);
}

void OutcomeCodec<LockStateReply>::Encode(const LockStateReply& o, Writer* w) {
  w->U8(static_cast<uint8_t>(o.outcome));
  w->I64(o.pttl_ms);
  w->U64(o.fence);
}

bool OutcomeCodec<LockStateReply>::Decode(std::string_view answer, LockStateReply* out) {
  Reader r(answer);
  if (!ByteFrom(&r, &out->outcome) || !r.I64(&out->pttl_ms) || !r.U64(&out->fence) || !r.done()) {
    return false;
  }
  // A live entry has ms left or -1 (no expiry); -2 is Redis's "no key".
  const bool live =
      out->outcome == LockStateOutcome::kHeld || out->outcome == LockStateOutcome::kOther;
  return out->pttl_ms >= (live ? -1 : -2);
}

void OutcomeCodec<SetWithReply>::Encode(const SetWithReply& o, Writer* w) {
  const bool ok = o.status == Status::kOk;
  w->U8(static_cast<uint8_t>(o.status));
  w->U8(ok && o.result.written ? 1 : 0);
  w->U8(ok && o.result.had_old ? 1 : 0);
  w->Str(ok && o.result.had_old ? std::string_view(o.result.old) : std::string_view());
}

bool OutcomeCodec<SetWithReply>::Decode(std::string_view answer, SetWithReply* out) {
  Reader r(answer);
  std::string_view old;
  if (!ByteFrom(&r, &out->status) || !FlagFrom(&r, &out->result.written) ||
      !FlagFrom(&r, &out->result.had_old) || !r.Str(&old) || !r.done()) {
    return false;
  }
  if (!out->result.had_old && !old.empty()) return false;
  out->result.old.assign(old.data(), old.size());
  return true;
}

void OutcomeCodec<DelExReply>::Encode(const DelExReply& o, Writer* w) {
  w->U8(static_cast<uint8_t>(o.status));
  w->I64(o.status == Status::kOk ? o.removed : 0);
}

bool OutcomeCodec<DelExReply>::Decode(std::string_view answer, DelExReply* out) {
  Reader r(answer);
  if (!ByteFrom(&r, &out->status) || !r.I64(&out->removed) || !r.done()) return false;
  return out->removed == 0 || out->removed == 1;
}

}  // namespace cluster
}  // namespace ephpm
