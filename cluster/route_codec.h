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
};

// Every argument a routed operation may take; each uses some of them.  The
// views point into the caller's arguments or into the received frame.
struct RouteArgs {
  std::string_view guard, token, key, value;
  int64_t ttl = 0, delta = 0;
};

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

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_ROUTE_CODEC_H_
