// The replication seam: what the store publishes, and how routing hooks
// decide where set_nx and del_if_eq are decided.

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::DelIfEqOutcome;
using ephpm::ManualClock;
using ephpm::Mutation;
using ephpm::Routed;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

struct Published {
  Mutation::Kind kind;
  std::string key;
  std::string value;
  int64_t expires_at_ms;
};

// Records publications; routes according to `mode`, counting each ask.
class FakeReplicator : public ephpm::Replicator {
 public:
  enum class Mode { kLocal, kOwnerSays, kUnreachable };
  Mode mode = Mode::kLocal;
  SetNxOutcome owner_set_nx = SetNxOutcome::kInserted;
  DelIfEqOutcome owner_del_if_eq = DelIfEqOutcome::kDeleted;
  int set_nx_asks = 0;
  int del_if_eq_asks = 0;

  Routed<SetNxOutcome> RouteSetNx(std::string_view, std::string_view, int64_t) override {
    ++set_nx_asks;
    switch (mode) {
      case Mode::kLocal: return Routed<SetNxOutcome>::Local();
      case Mode::kOwnerSays: return Routed<SetNxOutcome>::Owner(owner_set_nx);
      case Mode::kUnreachable: return Routed<SetNxOutcome>::Unreachable();
    }
    return {};
  }
  int set_if_eq_asks = 0;
  Routed<ephpm::SetIfEqOutcome> RouteSetIfEq(std::string_view, std::string_view, std::string_view,
                                             std::string_view, int64_t) override {
    ++set_if_eq_asks;
    switch (mode) {
      case Mode::kLocal: return Routed<ephpm::SetIfEqOutcome>::Local();
      case Mode::kOwnerSays:
        return Routed<ephpm::SetIfEqOutcome>::Owner(ephpm::SetIfEqOutcome::kNotMatched);
      case Mode::kUnreachable: return Routed<ephpm::SetIfEqOutcome>::Unreachable();
    }
    return {};
  }
  int del_if_guard_eq_asks = 0;
  Routed<ephpm::DelIfGuardEqOutcome> RouteDelIfGuardEq(std::string_view, std::string_view,
                                                       std::string_view) override {
    ++del_if_guard_eq_asks;
    switch (mode) {
      case Mode::kLocal: return Routed<ephpm::DelIfGuardEqOutcome>::Local();
      case Mode::kOwnerSays:
        return Routed<ephpm::DelIfGuardEqOutcome>::Owner(ephpm::DelIfGuardEqOutcome::kNotMatched);
      case Mode::kUnreachable: return Routed<ephpm::DelIfGuardEqOutcome>::Unreachable();
    }
    return {};
  }
  int expire_if_guard_eq_asks = 0;
  Routed<ephpm::ExpireIfGuardEqOutcome> RouteExpireIfGuardEq(std::string_view, std::string_view,
                                                             std::string_view, int64_t) override {
    ++expire_if_guard_eq_asks;
    switch (mode) {
      case Mode::kLocal: return Routed<ephpm::ExpireIfGuardEqOutcome>::Local();
      case Mode::kOwnerSays:
        return Routed<ephpm::ExpireIfGuardEqOutcome>::Owner(
            ephpm::ExpireIfGuardEqOutcome::kNotMatched);
      case Mode::kUnreachable: return Routed<ephpm::ExpireIfGuardEqOutcome>::Unreachable();
    }
    return {};
  }
  Routed<DelIfEqOutcome> RouteDelIfEq(std::string_view, std::string_view) override {
    ++del_if_eq_asks;
    switch (mode) {
      case Mode::kLocal: return Routed<DelIfEqOutcome>::Local();
      case Mode::kOwnerSays: return Routed<DelIfEqOutcome>::Owner(owner_del_if_eq);
      case Mode::kUnreachable: return Routed<DelIfEqOutcome>::Unreachable();
    }
    return {};
  }
  void Publish(const Mutation& m) noexcept override {
    std::lock_guard<std::mutex> l(mu_);
    log_.push_back({m.kind, std::string(m.key), std::string(m.value), m.expires_at_ms});
  }
  std::vector<Published> Take() {
    std::lock_guard<std::mutex> l(mu_);
    return std::move(log_);
  }

 private:
  std::mutex mu_;
  std::vector<Published> log_;
};

std::unique_ptr<ephpm::Store> StoreWith(FakeReplicator* rep, ManualClock* clock) {
  auto o = NoSweeper();
  o.replicator = rep;
  return MakeStore(o, clock);
}

}  // namespace

TEST_CASE("routing Local: set_nx and del_if_eq decide on this node", "[replicator]") {
  ManualClock clock;
  FakeReplicator rep;
  auto s = StoreWith(&rep, &clock);
  CHECK(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kInserted);
  CHECK(s->SetNx("lock", "other", 1000) == SetNxOutcome::kExists);
  CHECK(s->DelIfEq("lock", "other") == DelIfEqOutcome::kNotMatched);
  CHECK(s->DelIfEq("lock", "tok") == DelIfEqOutcome::kDeleted);
  CHECK(rep.set_nx_asks == 2);
  CHECK(rep.del_if_eq_asks == 2);
}

TEST_CASE("routing Owner: the owner's answer is returned and the local map is untouched",
          "[replicator]") {
  ManualClock clock;
  FakeReplicator rep;
  rep.mode = FakeReplicator::Mode::kOwnerSays;
  auto s = StoreWith(&rep, &clock);

  rep.owner_set_nx = SetNxOutcome::kExists;
  CHECK(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kExists);
  rep.owner_set_nx = SetNxOutcome::kInserted;
  CHECK(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kInserted);
  CHECK(s->DbSize() == 0);  // the owner holds it; replication brings it here

  REQUIRE(s->Set("held", "stale-token") == Status::kOk);  // a stale local copy
  rep.owner_del_if_eq = DelIfEqOutcome::kNotMatched;
  CHECK(s->DelIfEq("held", "stale-token") == DelIfEqOutcome::kNotMatched);
  CHECK(s->SetIfEq("held", "stale-token", "data", "v") == ephpm::SetIfEqOutcome::kNotMatched);
  CHECK(rep.set_if_eq_asks == 1);
  REQUIRE(s->Set("data", "kept") == Status::kOk);
  CHECK(s->DelIfGuardEq("held", "stale-token", "data") ==
        ephpm::DelIfGuardEqOutcome::kNotMatched);
  CHECK(rep.del_if_guard_eq_asks == 1);
  CHECK(s->ExpireIfGuardEq("held", "stale-token", "data", 5) ==
        ephpm::ExpireIfGuardEqOutcome::kNotMatched);
  CHECK(rep.expire_if_guard_eq_asks == 1);
  int64_t ttl = 0;
  REQUIRE(s->Pttl("data", &ttl) == Status::kOk);
  CHECK(ttl == -1);  // the owner said no: no TTL given here
  std::string v;
  CHECK(s->Get("data", &v) == Status::kOk);  // the owner said no: nothing removed here
  CHECK(s->Get("held", &v) == Status::kOk);  // not removed on the owner's "no"
  CHECK(rep.Take().size() == 2);             // only the two Sets above were published
}

TEST_CASE("routing OwnerUnreachable is reported, never replaced by a local guess",
          "[replicator]") {
  ManualClock clock;
  FakeReplicator rep;
  rep.mode = FakeReplicator::Mode::kUnreachable;
  auto s = StoreWith(&rep, &clock);
  CHECK(s->SetNx("lock", "tok", 1000) == SetNxOutcome::kOwnerUnreachable);
  CHECK(s->DbSize() == 0);
  REQUIRE(s->Set("held", "tok") == Status::kOk);
  CHECK(s->DelIfEq("held", "tok") == DelIfEqOutcome::kOwnerUnreachable);
  CHECK(s->SetIfEq("held", "tok", "data", "v") == ephpm::SetIfEqOutcome::kOwnerUnreachable);
  std::string v;
  CHECK(s->Get("data", &v) == Status::kNotFound);
  REQUIRE(s->Set("data2", "kept") == Status::kOk);
  CHECK(s->DelIfGuardEq("held", "tok", "data2") == ephpm::DelIfGuardEqOutcome::kOwnerUnreachable);
  CHECK(s->Get("data2", &v) == Status::kOk);
  CHECK(s->ExpireIfGuardEq("held", "tok", "data2", 5) ==
        ephpm::ExpireIfGuardEqOutcome::kOwnerUnreachable);
  bool e = false;
  REQUIRE(s->Exists("held", &e) == Status::kOk);
  CHECK(e);
}

TEST_CASE("the _local variants never ask the replicator", "[replicator]") {
  ManualClock clock;
  FakeReplicator rep;
  rep.mode = FakeReplicator::Mode::kUnreachable;
  auto s = StoreWith(&rep, &clock);
  CHECK(s->SetNxLocal("lock", "tok", 1000) == SetNxOutcome::kInserted);
  CHECK(s->SetNxLocal("lock", "tok", 1000) == SetNxOutcome::kExists);
  CHECK(s->SetIfEqLocal("lock", "tok", "data", "v") == ephpm::SetIfEqOutcome::kWritten);
  CHECK(s->ExpireIfGuardEqLocal("lock", "tok", "data", 5000) ==
        ephpm::ExpireIfGuardEqOutcome::kApplied);
  CHECK(s->DelIfGuardEqLocal("lock", "tok", "data") == ephpm::DelIfGuardEqOutcome::kDeleted);
  CHECK(s->DelIfEqLocal("lock", "tok") == DelIfEqOutcome::kDeleted);
  CHECK(rep.del_if_guard_eq_asks == 0);
  CHECK(rep.expire_if_guard_eq_asks == 0);
  CHECK(rep.set_if_eq_asks == 0);
  CHECK(rep.set_nx_asks == 0);
  CHECK(rep.del_if_eq_asks == 0);
}

TEST_CASE("every client mutation is published but expiry and eviction are not",
          "[replicator]") {
  ManualClock clock;
  FakeReplicator rep;
  auto s = StoreWith(&rep, &clock);
  int64_t n = 0;
  bool b = false;
  const int64_t now = clock.NowMs();
  REQUIRE(s->Set("k", "v", 1000) == Status::kOk);
  REQUIRE(s->SetNx("lock", "tok") == SetNxOutcome::kInserted);
  REQUIRE(s->SetNx("lock", "tok2") == SetNxOutcome::kExists);  // no change: nothing
  REQUIRE(s->DelIfEq("lock", "nope") == DelIfEqOutcome::kNotMatched);
  REQUIRE(s->SetIfEq("k", "nope", "fenced", "x") == ephpm::SetIfEqOutcome::kNotMatched);
  REQUIRE(s->DelIfEq("lock", "tok") == DelIfEqOutcome::kDeleted);
  REQUIRE(s->IncrBy("n", 5, &n) == Status::kOk);
  REQUIRE(s->Expire("n", 500, &b) == Status::kOk);
  REQUIRE(s->Persist("n", &b) == Status::kOk);
  REQUIRE(s->Rename("n", "m", false, &b) == Status::kOk);
  REQUIRE(s->Del("m", &n) == Status::kOk);
  REQUIRE(s->Del("m", &n) == Status::kOk);  // nothing removed: nothing
  REQUIRE(s->Expire("k", 0, &b) == Status::kOk);
  s->Flush();
  REQUIRE(s->Set("short", "v", 10) == Status::kOk);
  clock.Advance(10);
  s->SweepExpired(100);  // expiry is local to every node

  const auto log = rep.Take();
  using K = Mutation::Kind;
  const std::vector<std::pair<K, std::string>> want = {
      {K::kSet, "k"},    {K::kSet, "lock"},   {K::kDelete, "lock"}, {K::kSet, "n"},
      {K::kExpire, "n"}, {K::kExpire, "n"},   {K::kDelete, "n"},    {K::kSet, "m"},
      {K::kDelete, "m"}, {K::kDelete, "k"},   {K::kFlush, ""},      {K::kSet, "short"}};
  REQUIRE(log.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("publication " << i);
    CHECK(log[i].kind == want[i].first);
    CHECK(log[i].key == want[i].second);
  }
  CHECK(log[0].value == "v");
  CHECK(log[0].expires_at_ms == now + 1000);  // absolute, for other nodes
  CHECK(log[3].value == "5");
  CHECK(log[4].expires_at_ms == now + 500);
  CHECK(log[5].expires_at_ms == 0);
}
