// The routed operations' codec (cluster/route_codec.h): each operation's
// arguments travel in the order the owner reads them, a truncated or
// unknown request is refused, and outcomes round-trip or are refused when
// out of range.

#include <catch2/catch.hpp>
#include <string>

#include "route_codec.h"

using ephpm::DelExReply;
using ephpm::DelIfEqOutcome;
using ephpm::ExpireIfEqOutcome;
using ephpm::FencedGrant;
using ephpm::GetReply;
using ephpm::IncrByReply;
using ephpm::LockStateOutcome;
using ephpm::LockStateReply;
using ephpm::SetFencedOutcome;
using ephpm::SetNxOutcome;
using ephpm::SetOptions;
using ephpm::SetWithReply;
using ephpm::Status;
using ephpm::ValueCondition;
using ephpm::cluster::ConditionOf;
using ephpm::cluster::IsRead;
using ephpm::cluster::PutCondition;
using ephpm::cluster::PutSetOptions;
using ephpm::cluster::SetOptionsOf;
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
  a.fence = 0x0123456789abcdefu;
  a.ephemeral = 1;
  a.condition = static_cast<uint8_t>(ValueCondition::Kind::kIfDigestNe);
  a.digest = 0xfedcba9876543210u;
  a.when = static_cast<uint8_t>(SetOptions::When::kIfPresent);
  a.expiry = static_cast<uint8_t>(SetOptions::Expiry::kAt);
  a.get_old = 1;
  a.expires_at = 1'700'000'030'000;
  return a;
}

// Every routed operation, the lock API's included.
constexpr RouteOp kAllOps[] = {
    RouteOp::kSetNx,       RouteOp::kDelIfEq,        RouteOp::kSetIfEq,
    RouteOp::kIncrBy,      RouteOp::kGet,            RouteOp::kDelIfGuardEq,
    RouteOp::kExpireIfGuardEq, RouteOp::kSetNxEphemeral, RouteOp::kSetNxFenced,
    RouteOp::kExpireIfEq,  RouteOp::kSetFenced,      RouteOp::kLockState,
    RouteOp::kSetWith,     RouteOp::kDelEx};

// An encoded outcome with one byte appended.
template <typename Outcome>
std::string WithTrailer(const Outcome& o) {
  Writer w;
  OutcomeCodec<Outcome>::Encode(o, &w);
  w.U8(0);
  return w.out();
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
  const RouteArgs a = Everything();
  for (RouteOp op : kAllOps) {
    INFO("op " << static_cast<int>(op));
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

TEST_CASE("route codec: the lock API's operation bytes are appended, never renumbered",
          "[cluster][route]") {
  CHECK(static_cast<int>(RouteOp::kSetNxEphemeral) == 8);
  CHECK(static_cast<int>(RouteOp::kSetNxFenced) == 9);
  CHECK(static_cast<int>(RouteOp::kExpireIfEq) == 10);
  CHECK(static_cast<int>(RouteOp::kSetFenced) == 11);
  CHECK(static_cast<int>(RouteOp::kLockState) == 12);
  CHECK(static_cast<int>(RouteOp::kSetWith) == 13);
  CHECK(static_cast<int>(RouteOp::kDelEx) == 14);
  // Reads are answered at once; everything else is a decision.
  CHECK(IsRead(RouteOp::kGet));
  CHECK(IsRead(RouteOp::kLockState));
  CHECK_FALSE(IsRead(RouteOp::kSetNxFenced));
  CHECK_FALSE(IsRead(RouteOp::kSetWith));
  CHECK_FALSE(IsRead(RouteOp::kDelEx));
}

TEST_CASE("route codec: the lock API's requests carry their arguments in row order",
          "[cluster][route]") {
  const RouteArgs a = Everything();
  Writer got, want;
  EncodeArgs(RouteOp::kSetNxFenced, a, &got);
  want.Str(a.key);
  want.Str(a.value);
  want.I64(a.ttl);
  want.U8(1);
  CHECK(got.out() == want.out());

  Writer fenced, fenced_want;
  EncodeArgs(RouteOp::kSetFenced, a, &fenced);
  fenced_want.Str(a.key);
  fenced_want.Str(a.value);
  fenced_want.U64(a.fence);
  fenced_want.I64(a.ttl);
  CHECK(fenced.out() == fenced_want.out());

  Writer delex, delex_want;
  EncodeArgs(RouteOp::kDelEx, a, &delex);
  delex_want.Str(a.key);
  delex_want.U8(a.condition);
  delex_want.Str(a.token);
  delex_want.U64(a.digest);
  CHECK(delex.out() == delex_want.out());
  for (RouteOp op : {RouteOp::kSetNxFenced, RouteOp::kExpireIfEq, RouteOp::kSetFenced,
                     RouteOp::kLockState, RouteOp::kSetWith, RouteOp::kDelEx}) {
    CHECK(RoutingKey(op, a) == a.key);
  }
}

TEST_CASE("route codec: SetOptions and a ValueCondition survive the trip through the arguments",
          "[cluster][route]") {
  SetOptions o;
  o.when = SetOptions::When::kAlways;
  o.expiry = SetOptions::Expiry::kAt;
  o.expires_at_ms = 1'700'000'123'456;
  o.get_old = true;
  o.condition.kind = ValueCondition::Kind::kIfEq;
  o.condition.value = "expected";
  o.condition.digest = 0;
  RouteArgs a;
  a.key = "k";
  a.value = "v";
  PutSetOptions(o, &a);
  Writer w;
  EncodeArgs(RouteOp::kSetWith, a, &w);
  Reader r(w.out());
  RouteArgs b;
  REQUIRE(DecodeArgs(RouteOp::kSetWith, &r, &b));
  const SetOptions back = SetOptionsOf(b);
  CHECK(back.when == o.when);
  CHECK(back.expiry == o.expiry);
  CHECK(back.expires_at_ms == o.expires_at_ms);
  CHECK(back.get_old == o.get_old);
  CHECK(back.condition.kind == o.condition.kind);
  CHECK(back.condition.value == "expected");

  ValueCondition c;
  c.kind = ValueCondition::Kind::kIfDigestEq;
  c.digest = 0xabcdef;
  RouteArgs d;
  d.key = "k";
  PutCondition(c, &d);
  Writer wd;
  EncodeArgs(RouteOp::kDelEx, d, &wd);
  Reader rd(wd.out());
  RouteArgs e;
  REQUIRE(DecodeArgs(RouteOp::kDelEx, &rd, &e));
  const ValueCondition cb = ConditionOf(e);
  CHECK(cb.kind == ValueCondition::Kind::kIfDigestEq);
  CHECK(cb.digest == 0xabcdefu);
  CHECK(cb.value.empty());
}

TEST_CASE("route codec: a request with an enum or flag byte out of range is refused",
          "[cluster][route]") {
  // Each case: an operation, and the argument set to one past its last value.
  struct Bad {
    RouteOp op;
    uint8_t RouteArgs::*field;
    uint8_t value;
  };
  const Bad bads[] = {
      {RouteOp::kSetNxFenced, &RouteArgs::ephemeral, 2},
      {RouteOp::kDelEx, &RouteArgs::condition, 5},
      {RouteOp::kSetWith, &RouteArgs::condition, 5},
      {RouteOp::kSetWith, &RouteArgs::when, 3},
      {RouteOp::kSetWith, &RouteArgs::expiry, 3},
      {RouteOp::kSetWith, &RouteArgs::get_old, 2},
  };
  for (const Bad& bad : bads) {
    RouteArgs a = Everything();
    Writer ok;
    EncodeArgs(bad.op, a, &ok);
    Reader r(ok.out());
    RouteArgs b;
    REQUIRE(DecodeArgs(bad.op, &r, &b));
    a.*bad.field = bad.value;
    Writer w;
    EncodeArgs(bad.op, a, &w);
    Reader rb(w.out());
    CHECK_FALSE(DecodeArgs(bad.op, &rb, &b));
  }
}

TEST_CASE("route codec: the lock API's one-byte outcomes round-trip up to their last value",
          "[cluster][route]") {
  ExpireIfEqOutcome e{};
  for (int v = 0; v <= 5; ++v) {
    Writer w;
    OutcomeCodec<ExpireIfEqOutcome>::Encode(static_cast<ExpireIfEqOutcome>(v), &w);
    REQUIRE(OutcomeCodec<ExpireIfEqOutcome>::Decode(w.out(), &e));
    CHECK(static_cast<int>(e) == v);
  }
  CHECK_FALSE(OutcomeCodec<ExpireIfEqOutcome>::Decode(std::string(1, '\x06'), &e));
  CHECK_FALSE(OutcomeCodec<ExpireIfEqOutcome>::Decode("", &e));
  SetFencedOutcome f{};
  for (int v = 0; v <= 4; ++v) {
    Writer w;
    OutcomeCodec<SetFencedOutcome>::Encode(static_cast<SetFencedOutcome>(v), &w);
    REQUIRE(OutcomeCodec<SetFencedOutcome>::Decode(w.out(), &f));
    CHECK(static_cast<int>(f) == v);
  }
  CHECK_FALSE(OutcomeCodec<SetFencedOutcome>::Decode(std::string(1, '\x05'), &f));
}

TEST_CASE("route codec: a fenced grant round-trips; a grant without a fence is refused",
          "[cluster][route]") {
  Writer w;
  OutcomeCodec<FencedGrant>::Encode(FencedGrant{SetNxOutcome::kInserted, 0x1234'5678'9abcu}, &w);
  FencedGrant g;
  REQUIRE(OutcomeCodec<FencedGrant>::Decode(w.out(), &g));
  CHECK(g.outcome == SetNxOutcome::kInserted);
  CHECK(g.fence == 0x1234'5678'9abcu);
  // Only a grant carries a fence: one a refusal happened to hold is not sent.
  Writer we;
  OutcomeCodec<FencedGrant>::Encode(FencedGrant{SetNxOutcome::kExists, 99}, &we);
  REQUIRE(OutcomeCodec<FencedGrant>::Decode(we.out(), &g));
  CHECK(g.outcome == SetNxOutcome::kExists);
  CHECK(g.fence == 0);

  Writer zero;
  zero.U8(static_cast<uint8_t>(SetNxOutcome::kInserted));
  zero.U64(0);
  CHECK_FALSE(OutcomeCodec<FencedGrant>::Decode(zero.out(), &g));
  Writer stray;
  stray.U8(static_cast<uint8_t>(SetNxOutcome::kExists));
  stray.U64(5);
  CHECK_FALSE(OutcomeCodec<FencedGrant>::Decode(stray.out(), &g));
  Writer range;
  range.U8(5);
  range.U64(0);
  CHECK_FALSE(OutcomeCodec<FencedGrant>::Decode(range.out(), &g));
  CHECK_FALSE(OutcomeCodec<FencedGrant>::Decode(w.out().substr(0, w.out().size() - 1), &g));
  CHECK_FALSE(
      OutcomeCodec<FencedGrant>::Decode(WithTrailer(FencedGrant{SetNxOutcome::kInserted, 7}), &g));
}

TEST_CASE("route codec: a lock state round-trips; a live one without a TTL reading is refused",
          "[cluster][route]") {
  const LockStateReply held{LockStateOutcome::kHeld, 2500, 77};
  Writer w;
  OutcomeCodec<LockStateReply>::Encode(held, &w);
  LockStateReply s;
  REQUIRE(OutcomeCodec<LockStateReply>::Decode(w.out(), &s));
  CHECK(s.outcome == LockStateOutcome::kHeld);
  CHECK(s.pttl_ms == 2500);
  CHECK(s.fence == 77);
  Writer wa;
  OutcomeCodec<LockStateReply>::Encode(LockStateReply{}, &wa);  // absent, -2
  REQUIRE(OutcomeCodec<LockStateReply>::Decode(wa.out(), &s));
  CHECK(s.outcome == LockStateOutcome::kAbsent);
  CHECK(s.pttl_ms == -2);
  Writer forever;
  OutcomeCodec<LockStateReply>::Encode(LockStateReply{LockStateOutcome::kOther, -1, 0}, &forever);
  CHECK(OutcomeCodec<LockStateReply>::Decode(forever.out(), &s));

  Writer live_gone;
  OutcomeCodec<LockStateReply>::Encode(LockStateReply{LockStateOutcome::kHeld, -2, 1}, &live_gone);
  CHECK_FALSE(OutcomeCodec<LockStateReply>::Decode(live_gone.out(), &s));
  Writer below;
  OutcomeCodec<LockStateReply>::Encode(LockStateReply{LockStateOutcome::kAbsent, -3, 0}, &below);
  CHECK_FALSE(OutcomeCodec<LockStateReply>::Decode(below.out(), &s));
  Writer range;
  range.U8(6);
  range.I64(-2);
  range.U64(0);
  CHECK_FALSE(OutcomeCodec<LockStateReply>::Decode(range.out(), &s));
  CHECK_FALSE(OutcomeCodec<LockStateReply>::Decode(w.out().substr(0, 9), &s));
  CHECK_FALSE(OutcomeCodec<LockStateReply>::Decode(WithTrailer(held), &s));
}

TEST_CASE("route codec: a conditional SET's reply round-trips; contradictions are refused",
          "[cluster][route]") {
  SetWithReply in;
  in.status = Status::kOk;
  in.result.written = true;
  in.result.had_old = true;
  in.result.old = "previous";
  Writer w;
  OutcomeCodec<SetWithReply>::Encode(in, &w);
  SetWithReply out;
  REQUIRE(OutcomeCodec<SetWithReply>::Decode(w.out(), &out));
  CHECK(out.status == Status::kOk);
  CHECK(out.result.written);
  CHECK(out.result.had_old);
  CHECK(out.result.old == "previous");
  // An error carries nothing else.
  SetWithReply err = in;
  err.status = Status::kWrongType;
  Writer we;
  OutcomeCodec<SetWithReply>::Encode(err, &we);
  REQUIRE(OutcomeCodec<SetWithReply>::Decode(we.out(), &out));
  CHECK(out.status == Status::kWrongType);
  CHECK_FALSE(out.result.written);
  CHECK_FALSE(out.result.had_old);
  CHECK(out.result.old.empty());
  // The persistence error is a status the owner may give.
  Writer wp;
  OutcomeCodec<SetWithReply>::Encode(SetWithReply{Status::kPersistenceError, {}}, &wp);
  REQUIRE(OutcomeCodec<SetWithReply>::Decode(wp.out(), &out));
  CHECK(out.status == Status::kPersistenceError);

  Writer bad_flag;
  bad_flag.U8(0);
  bad_flag.U8(2);
  bad_flag.U8(0);
  bad_flag.Str("");
  CHECK_FALSE(OutcomeCodec<SetWithReply>::Decode(bad_flag.out(), &out));
  Writer old_without_flag;
  old_without_flag.U8(0);
  old_without_flag.U8(1);
  old_without_flag.U8(0);
  old_without_flag.Str("x");
  CHECK_FALSE(OutcomeCodec<SetWithReply>::Decode(old_without_flag.out(), &out));
  Writer bad_status;
  bad_status.U8(11);
  bad_status.U8(0);
  bad_status.U8(0);
  bad_status.Str("");
  CHECK_FALSE(OutcomeCodec<SetWithReply>::Decode(bad_status.out(), &out));
  CHECK_FALSE(OutcomeCodec<SetWithReply>::Decode(w.out().substr(0, w.out().size() - 1), &out));
  CHECK_FALSE(OutcomeCodec<SetWithReply>::Decode(WithTrailer(in), &out));
}

TEST_CASE("route codec: a DELEX reply round-trips; a count other than 0 or 1 is refused",
          "[cluster][route]") {
  for (int64_t removed : {0, 1}) {
    Writer w;
    OutcomeCodec<DelExReply>::Encode(DelExReply{Status::kOk, removed}, &w);
    DelExReply d;
    REQUIRE(OutcomeCodec<DelExReply>::Decode(w.out(), &d));
    CHECK(d.status == Status::kOk);
    CHECK(d.removed == removed);
  }
  DelExReply d;
  Writer we;
  OutcomeCodec<DelExReply>::Encode(DelExReply{Status::kWrongType, 1}, &we);
  REQUIRE(OutcomeCodec<DelExReply>::Decode(we.out(), &d));
  CHECK(d.status == Status::kWrongType);
  CHECK(d.removed == 0);
  Writer two;
  two.U8(0);
  two.I64(2);
  CHECK_FALSE(OutcomeCodec<DelExReply>::Decode(two.out(), &d));
  Writer negative;
  negative.U8(0);
  negative.I64(-1);
  CHECK_FALSE(OutcomeCodec<DelExReply>::Decode(negative.out(), &d));
  Writer range;
  range.U8(11);
  range.I64(0);
  CHECK_FALSE(OutcomeCodec<DelExReply>::Decode(range.out(), &d));
  CHECK_FALSE(OutcomeCodec<DelExReply>::Decode(std::string(1, '\0'), &d));
  CHECK_FALSE(OutcomeCodec<DelExReply>::Decode(WithTrailer(DelExReply{Status::kOk, 1}), &d));
}
