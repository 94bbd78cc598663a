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
constexpr int kMaxOutcome<Status> = static_cast<int>(Status::kNanOrInfinity);

// Reads an outcome byte of an enum whose values run 0..kMaxOutcome<E>.
template <typename E>
bool ByteFrom(Reader* r, E* out) {
  uint8_t v = 0;
  if (!r->U8(&v) || v > kMaxOutcome<E>) return false;
  *out = static_cast<E>(v);
  return true;
}

// One argument of a route request: a string or an integer member of
// RouteArgs (exactly one of the two is set).
struct Field {
  std::string_view RouteArgs::*str;
  int64_t RouteArgs::*num;
};
constexpr Field kGuard{&RouteArgs::guard, nullptr};
constexpr Field kToken{&RouteArgs::token, nullptr};
constexpr Field kKey{&RouteArgs::key, nullptr};
constexpr Field kValue{&RouteArgs::value, nullptr};
constexpr Field kTtl{nullptr, &RouteArgs::ttl};
constexpr Field kDelta{nullptr, &RouteArgs::delta};

// A route request's arguments, after the operation byte and the deadline.
struct Row {
  RouteOp op;
  size_t count;
  Field fields[5];  // in wire order; the first is the routing key
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
};

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
    if (f.str != nullptr) {
      w->Str(a.*f.str);
    } else {
      w->I64(a.*f.num);
    }
  }
}

bool DecodeArgs(RouteOp op, Reader* r, RouteArgs* a) {
  const Row* row = RowOf(op);
  if (row == nullptr) return false;
  for (size_t i = 0; i < row->count; ++i) {
    const Field& f = row->fields[i];
    if (!(f.str != nullptr ? r->Str(&(a->*f.str)) : r->I64(&(a->*f.num)))) return false;
  }
  return true;
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

}  // namespace cluster
}  // namespace ephpm
