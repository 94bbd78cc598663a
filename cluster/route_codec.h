// The routed operations on the wire: one table that says, per operation,
// which arguments a route request carries (in order), how the key's owner
// runs it, and how its outcome travels back.  Both sides of owner routing
// (router.cc) go through it, so an operation is described once.

#ifndef EPHPM_CLUSTER_ROUTE_CODEC_H_
#define EPHPM_CLUSTER_ROUTE_CODEC_H_

#include <cstdint>
#include <string_view>

#include "ephpm/store.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

// A route request's operation byte.
enum class RouteOp : uint8_t {
  kSetNx = 1,
  kDelIfEq = 2,
  kSetIfEq = 3,
  kIncrBy = 4,
  kGet = 5,
  kDelIfGuardEq = 6,
  kExpireIfGuardEq = 7,
  kSetNxEphemeral = 8,  // set_nx for a lock held by a request (Store::SetNxEphemeral)
  kSetNxFenced = 9,     // a grant with its fencing token (Store::SetNxFenced)
  kExpireIfEq = 10,     // compare-and-expire, a lock's refresh
  kSetFenced = 11,      // the resource-side fenced write
  kLockState = 12,      // a read on the owner: a lock's holder, TTL and fence
  kSetWith = 13,        // SET with an IFEQ/IFNE/IFDEQ/IFDNE condition
  kDelEx = 14,          // DELEX with a condition
};

// Every argument a routed operation may take; each uses some of them.  The
// views point into the caller's arguments or into the received frame.
// `token` is what the key's value is compared with: a lock's token, or the
// value of a ValueCondition.  The one-byte fields are enums and flags; a
// request with one out of its range is malformed.
struct RouteArgs {
  std::string_view guard, token, key, value;
  int64_t ttl = 0, delta = 0;
  uint64_t fence = 0;
  uint8_t ephemeral = 0;  // SetNxFenced: 0 or 1
  // A ValueCondition: its kind (and `token`, `digest`).
  uint8_t condition = 0;
  uint64_t digest = 0;
  // SetOptions: when, expiry (their enums' values), expires_at_ms, get_old (0 or 1).
  uint8_t when = 0, expiry = 0, get_old = 0;
  int64_t expires_at = 0;
};

// Whether op only reads on the owner (answered at once, not a decision).
constexpr bool IsRead(RouteOp op) { return op == RouteOp::kGet || op == RouteOp::kLockState; }

// A ValueCondition and SetOptions rebuilt from the arguments; the
// condition's value views a.token.
ValueCondition ConditionOf(const RouteArgs& a);
SetOptions SetOptionsOf(const RouteArgs& a);
// The arguments that carry them (the reverse of the two above).
void PutCondition(const ValueCondition& c, RouteArgs* a);
void PutSetOptions(const SetOptions& o, RouteArgs* a);

// Writes op's arguments, in the order its table row gives.
void EncodeArgs(RouteOp op, const RouteArgs& a, Writer* w);
// Reads op's arguments.  False for an unknown operation or a malformed body.
bool DecodeArgs(RouteOp op, Reader* r, RouteArgs* a);
// The key whose owner decides: the guard key when op has one, else the key.
std::string_view RoutingKey(RouteOp op, const RouteArgs& a);

// How an outcome travels back: Encode appends it, Decode reads a whole
// answer (false when malformed or out of range).
template <typename Outcome>
struct OutcomeCodec {
  // Outcomes that are one byte: an enum whose values run 0..kMax.
  static void Encode(Outcome o, Writer* w) { w->U8(static_cast<uint8_t>(o)); }
  static bool Decode(std::string_view answer, Outcome* out);
};
template <>
struct OutcomeCodec<IncrByReply> {
  static void Encode(const IncrByReply& o, Writer* w);
  static bool Decode(std::string_view answer, IncrByReply* out);
};
template <>
struct OutcomeCodec<GetReply> {
  static void Encode(const GetReply& o, Writer* w);
  static bool Decode(std::string_view answer, GetReply* out);
};
template <>
struct OutcomeCodec<FencedGrant> {
  static void Encode(const FencedGrant& o, Writer* w);
  static bool Decode(std::string_view answer, FencedGrant* out);
};
template <>
struct OutcomeCodec<LockStateReply> {
  static void Encode(const LockStateReply& o, Writer* w);
  static bool Decode(std::string_view answer, LockStateReply* out);
};
template <>
struct OutcomeCodec<SetWithReply> {
  static void Encode(const SetWithReply& o, Writer* w);
  static bool Decode(std::string_view answer, SetWithReply* out);
};
template <>
struct OutcomeCodec<DelExReply> {
  static void Encode(const DelExReply& o, Writer* w);
  static bool Decode(std::string_view answer, DelExReply* out);
};

// Per operation: its outcome type, and how the owner runs it (the store's
// _Local operation, never forwarding again).
template <RouteOp kOp>
struct RoutedOp;
template <>
struct RoutedOp<RouteOp::kSetNx> {
  using Outcome = SetNxOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) { return s->SetNxLocal(a.key, a.value, a.ttl); }
};
template <>
struct RoutedOp<RouteOp::kSetNxEphemeral> {
  using Outcome = SetNxOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->SetNxEphemeralLocal(a.key, a.value, a.ttl);
  }
};
template <>
struct RoutedOp<RouteOp::kDelIfEq> {
  using Outcome = DelIfEqOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) { return s->DelIfEqLocal(a.key, a.token); }
};
template <>
struct RoutedOp<RouteOp::kSetIfEq> {
  using Outcome = SetIfEqOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->SetIfEqLocal(a.guard, a.token, a.key, a.value, a.ttl);
  }
};
template <>
struct RoutedOp<RouteOp::kDelIfGuardEq> {
  using Outcome = DelIfGuardEqOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->DelIfGuardEqLocal(a.guard, a.token, a.key);
  }
};
template <>
struct RoutedOp<RouteOp::kExpireIfGuardEq> {
  using Outcome = ExpireIfGuardEqOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->ExpireIfGuardEqLocal(a.guard, a.token, a.key, a.ttl);
  }
};
template <>
struct RoutedOp<RouteOp::kIncrBy> {
  using Outcome = IncrByReply;
  static Outcome Run(Store* s, const RouteArgs& a) {
    IncrByReply r;
    r.status = s->IncrByLocal(a.key, a.delta, &r.value);
    return r;
  }
};
// A read on the owner: not a decision (the owner answers at once).
template <>
struct RoutedOp<RouteOp::kGet> {
  using Outcome = GetReply;
  static Outcome Run(Store* s, const RouteArgs& a) {
    GetReply r;
    r.status = s->Get(a.key, &r.value);
    return r;
  }
};
template <>
struct RoutedOp<RouteOp::kSetNxFenced> {
  using Outcome = FencedGrant;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->SetNxFencedLocal(a.key, a.value, a.ttl, a.ephemeral != 0);
  }
};
template <>
struct RoutedOp<RouteOp::kExpireIfEq> {
  using Outcome = ExpireIfEqOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->ExpireIfEqLocal(a.key, a.token, a.ttl);
  }
};
template <>
struct RoutedOp<RouteOp::kSetFenced> {
  using Outcome = SetFencedOutcome;
  static Outcome Run(Store* s, const RouteArgs& a) {
    return s->SetFencedLocal(a.key, a.value, a.fence, a.ttl);
  }
};
// A read on the owner, as kGet.
template <>
struct RoutedOp<RouteOp::kLockState> {
  using Outcome = LockStateReply;
  static Outcome Run(Store* s, const RouteArgs& a) { return s->LockStateLocal(a.key, a.token); }
};
template <>
struct RoutedOp<RouteOp::kSetWith> {
  using Outcome = SetWithReply;
  static Outcome Run(Store* s, const RouteArgs& a) {
    SetWithReply r;
    r.status = s->SetWithLocal(a.key, a.value, SetOptionsOf(a), &r.result);
    return r;
  }
};
template <>
struct RoutedOp<RouteOp::kDelEx> {
  using Outcome = DelExReply;
  static Outcome Run(Store* s, const RouteArgs& a) {
    DelExReply r;
    r.status = s->DelExLocal(a.key, ConditionOf(a), &r.removed);
    return r;
  }
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_ROUTE_CODEC_H_
