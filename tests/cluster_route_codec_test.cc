// The routed operations' codec (cluster/route_codec.h): each operation's
// arguments travel in the order the owner reads them, a truncated or
// unknown request is refused, and outcomes round-trip or are refused when
// out of range.

#include <catch2/catch.hpp>
#include <string>

#include "route_codec.h"

using ephpm::DelIfEqOutcome;
using ephpm::GetReply;
using ephpm::IncrByReply;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::cluster::DecodeArgs;
using ephpm::cluster::EncodeArgs;
using ephpm::cluster::OutcomeCodec;
using ephpm::cluster::Reader;
using ephpm::cluster::RouteArgs;
using ephpm::cluster::RouteOp;
using ephpm::cluster::RoutingKey;
using ephpm::cluster::Writer;

namespace {

RouteArgs Everything() {
  RouteArgs a;
  a.guard = "lock:{s}";
  a.token = "tok";
  a.key = "data:{s}";
  a.value = "v";
  a.ttl = 1500;
  a.delta = -7;
  return a;
}

}  // namespace

TEST_CASE("route codec: a set_if_eq request is guard, token, key, value, ttl on the wire",
          "[cluster][route]") {
  const RouteArgs a = Everything();
  Writer got, want;
  EncodeArgs(RouteOp::kSetIfEq, a, &got);
  want.Str(a.guard);
  want.Str(a.token);
  want.Str(a.key);
  want.Str(a.value);
  want.I64(a.ttl);
  CHECK(got.out() == want.out());
  CHECK(RoutingKey(RouteOp::kSetIfEq, a) == a.guard);
  CHECK(RoutingKey(RouteOp::kSetNx, a) == a.key);
}

TEST_CASE("route codec: every operation's arguments round-trip, and a cut request is refused",
          "[cluster][route]") {
  const RouteOp ops[] = {RouteOp::kSetNx,        RouteOp::kDelIfEq, RouteOp::kSetIfEq,
                         RouteOp::kIncrBy,       RouteOp::kGet,     RouteOp::kDelIfGuardEq,
                         RouteOp::kExpireIfGuardEq, RouteOp::kSetNxEphemeral};
  const RouteArgs a = Everything();
  for (RouteOp op : ops) {
    Writer w;
    EncodeArgs(op, a, &w);
    RouteArgs b;
    Reader r(w.out());
    REQUIRE(DecodeArgs(op, &r, &b));
    CHECK(r.done());
    CHECK(RoutingKey(op, b) == RoutingKey(op, a));
    Writer again;
    EncodeArgs(op, b, &again);
    CHECK(again.out() == w.out());
    const std::string cut = w.out().substr(0, w.out().size() - 1);
    Reader rc(cut);
    RouteArgs c;
    CHECK_FALSE(DecodeArgs(op, &rc, &c));
  }
  Reader r("");
  RouteArgs b;
  CHECK_FALSE(DecodeArgs(static_cast<RouteOp>(99), &r, &b));
}

TEST_CASE("route codec: outcomes round-trip, a byte past the last value is refused",
          "[cluster][route]") {
  Writer w;
  OutcomeCodec<SetNxOutcome>::Encode(SetNxOutcome::kExists, &w);
  SetNxOutcome s{};
  REQUIRE(OutcomeCodec<SetNxOutcome>::Decode(w.out(), &s));
  CHECK(s == SetNxOutcome::kExists);
  DelIfEqOutcome d{};
  CHECK(OutcomeCodec<DelIfEqOutcome>::Decode(std::string(1, '\x05'), &d));
  CHECK_FALSE(OutcomeCodec<DelIfEqOutcome>::Decode(std::string(1, '\x06'), &d));
  CHECK_FALSE(OutcomeCodec<DelIfEqOutcome>::Decode("", &d));

  Writer wi;
  OutcomeCodec<IncrByReply>::Encode(IncrByReply{Status::kOk, 42}, &wi);
  IncrByReply i;
  REQUIRE(OutcomeCodec<IncrByReply>::Decode(wi.out(), &i));
  CHECK(i.status == Status::kOk);
  CHECK(i.value == 42);

  Writer wg;
  OutcomeCodec<GetReply>::Encode(GetReply{Status::kOk, "hello"}, &wg);
  GetReply g;
  REQUIRE(OutcomeCodec<GetReply>::Decode(wg.out(), &g));
  CHECK(g.status == Status::kOk);
  CHECK(g.value == "hello");
  Writer wm;
  OutcomeCodec<GetReply>::Encode(GetReply{Status::kNotFound, "stale"}, &wm);
  REQUIRE(OutcomeCodec<GetReply>::Decode(wm.out(), &g));
  CHECK(g.status == Status::kNotFound);
  CHECK(g.value.empty());
}
