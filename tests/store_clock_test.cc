// When the store reads its clock: an expiry decision reads it precisely,
// under the key's lock, once per write; a write or read that involves no
// expiry reads no precise time at all (an access time comes from
// Clock::CoarseMs).  And the cheap reading never changes an answer.

#include <atomic>
#include <catch2/catch.hpp>
#include <string>

#include "ephpm/clock.h"
#include "ephpm/store.h"
#include "shard.h"
#include "test_util.h"

using ephpm::Status;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;  // no sweeper thread reading the clock

namespace {

// A manual clock that counts its precise and its cheap readings; CoarseMs
// lags NowMs by `coarse_lag` ms, as a kernel tick may.
class CountingClock final : public ephpm::Clock {
 public:
  int64_t NowMs() const override {
    precise.fetch_add(1);
    return now.load();
  }
  int64_t CoarseMs() const override {
    coarse.fetch_add(1);
    return now.load() - coarse_lag;
  }
  std::atomic<int64_t> now{1'700'000'000'000};
  int64_t coarse_lag = 0;
  mutable std::atomic<int> precise{0};
  mutable std::atomic<int> coarse{0};
};

}  // namespace

TEST_CASE("writes and reads without an expiry read no precise time", "[store][clock]") {
  CountingClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  clock.precise = 0;
  REQUIRE(s->Set("k", "v") == Status::kOk);        // new key, no TTL
  REQUIRE(s->Set("k", "v2") == Status::kOk);       // over a key without one
  int64_t n = 0;
  REQUIRE(s->IncrBy("n", 5, &n) == Status::kOk);
  REQUIRE(s->IncrBy("n", 1, &n) == Status::kOk);
  std::string v;
  REQUIRE(s->Get("k", &v) == Status::kOk);
  int64_t removed = 0;
  REQUIRE(s->Del("k", &removed) == Status::kOk);
  CHECK(removed == 1);
  // RESP's SET (SetWith): new key, overwrite, GET, NX, XX, KEEPTTL.
  ephpm::SetResult r;
  REQUIRE(s->SetWith("w", "v", ephpm::SetOptions{}, &r) == Status::kOk);
  REQUIRE(s->SetWith("w", "v2", ephpm::SetOptions{}, &r) == Status::kOk);
  ephpm::SetOptions get_old;
  get_old.get_old = true;
  REQUIRE(s->SetWith("w", "v3", get_old, &r) == Status::kOk);
  CHECK(r.old == "v2");
  ephpm::SetOptions nx;
  nx.when = ephpm::SetOptions::When::kIfAbsent;
  REQUIRE(s->SetWith("w", "no", nx, &r) == Status::kOk);
  CHECK_FALSE(r.written);
  ephpm::SetOptions xx_keep;
  xx_keep.when = ephpm::SetOptions::When::kIfPresent;
  xx_keep.expiry = ephpm::SetOptions::Expiry::kKeep;
  REQUIRE(s->SetWith("w", "v4", xx_keep, &r) == Status::kOk);
  CHECK(r.written);
  CHECK(clock.precise == 0);
  // The writes still stamped an access time, from the cheap reading.
  CHECK(clock.coarse >= 3);
}

TEST_CASE("a write that involves an expiry reads the precise time once", "[store][clock]") {
  CountingClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  clock.precise = 0;
  REQUIRE(s->Set("t", "v", 1000) == Status::kOk);  // a TTL to compute
  CHECK(clock.precise == 1);
  clock.precise = 0;
  REQUIRE(s->Set("t", "v2") == Status::kOk);  // over a key with one: is it live?
  CHECK(clock.precise == 1);
  REQUIRE(s->Set("u", "v", 1000) == Status::kOk);
  clock.precise = 0;
  REQUIRE(s->Set("u", "v2", 2000) == Status::kOk);  // both: still one reading
  CHECK(clock.precise == 1);
  int64_t ttl = 0;
  REQUIRE(s->Pttl("u", &ttl) == Status::kOk);
  CHECK(ttl == 2000);
  // RESP's SET over a key with a TTL: is it live?
  clock.precise = 0;
  ephpm::SetResult r;
  REQUIRE(s->SetWith("u", "v3", ephpm::SetOptions{}, &r) == Status::kOk);
  CHECK(clock.precise == 1);
}

TEST_CASE("a write without a TTL still finds an expired entry absent", "[store][clock]") {
  CountingClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  REQUIRE(s->Set("k", "old", 100) == Status::kOk);
  REQUIRE(s->Set("n", "41", 100) == Status::kOk);
  clock.now += 100;  // both expire now
  REQUIRE(s->Set("k", "new") == Status::kOk);
  int64_t ttl = 0;
  REQUIRE(s->Pttl("k", &ttl) == Status::kOk);
  CHECK(ttl == -1);  // the old TTL went with the old entry
  // SetWith (RESP's SET) too, with NX: the expired entry is absent.
  REQUIRE(s->Set("x", "old", 100) == Status::kOk);
  clock.now += 100;
  ephpm::SetOptions nx;
  nx.when = ephpm::SetOptions::When::kIfAbsent;
  ephpm::SetResult r;
  REQUIRE(s->SetWith("x", "new", nx, &r) == Status::kOk);
  CHECK(r.written);
  CHECK(ephpm_test::GetOr(*s, "x") == "new");
  int64_t n = 0;
  REQUIRE(s->IncrBy("n", 1, &n) == Status::kOk);
  CHECK(n == 1);  // counted from nothing, not from 41
  REQUIRE(s->Pttl("n", &ttl) == Status::kOk);
  CHECK(ttl == -1);
  int64_t removed = 7;
  REQUIRE(s->Set("d", "x", 50) == Status::kOk);
  clock.now += 50;
  REQUIRE(s->Del("d", &removed) == Status::kOk);
  CHECK(removed == 0);  // expired: nothing to delete
  CHECK(s->Stats().expired == 4);
}

TEST_CASE("a lagging cheap clock never makes an access time negative or an entry expire",
          "[store][clock]") {
  CountingClock clock;
  clock.coarse_lag = 4;  // one 250 Hz tick
  auto o = NoSweeper();
  o.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("k", "v") == Status::kOk);
  // The access time keeps whole seconds (Entry's AccessTime), so the lag
  // shows as a second at most when it straddles one.
  ephpm::Store::ObjectShape shape;
  REQUIRE(s->Object("k", &shape) == Status::kOk);
  CHECK(shape.idle_ms >= 0);
  CHECK(shape.idle_ms <= 1000);
  clock.now += 1000;
  REQUIRE(s->Object("k", &shape) == Status::kOk);
  CHECK(shape.idle_ms >= 1000);
  CHECK(shape.idle_ms <= 2000);
  std::string v;
  REQUIRE(s->Get("k", &v) == Status::kOk);  // an access under LRU
  REQUIRE(s->Object("k", &shape) == Status::kOk);
  CHECK(shape.idle_ms <= 1000);
}

TEST_CASE("the access time keeps whole seconds, from the epoch's to 2106's", "[store][clock]") {
  ephpm::AccessTime t;
  t.store(1'700'000'123'456, std::memory_order_relaxed);
  CHECK(t.load(std::memory_order_relaxed) == 1'700'000'123'000);
  CHECK(t.IdleMs(1'700'000'123'999) == 0);
  CHECK(t.IdleMs(1'700'000'124'000) == 1000);
  CHECK(t.IdleMs(1'700'000'000'000) == 0);  // a clock behind the access: never negative
  // 32 bits of seconds: no wrap before 2106; beyond, and before 1970, clamped.
  t.store(int64_t{UINT32_MAX} * 1000 + 5000, std::memory_order_relaxed);
  CHECK(t.load(std::memory_order_relaxed) == int64_t{UINT32_MAX} * 1000);
  t.store(-5000, std::memory_order_relaxed);
  CHECK(t.load(std::memory_order_relaxed) == 0);
  CHECK(t.IdleMs(4'102'444'800'000) == 4'102'444'800'000);  // 2100-01-01, from 0
}

TEST_CASE("the wall clock's cheap reading trails its precise one", "[clock]") {
  const ephpm::Clock* c = ephpm::SystemClock();
  for (int i = 0; i < 1000; ++i) {
    const int64_t coarse = c->CoarseMs();
    const int64_t precise = c->NowMs();
    REQUIRE(coarse <= precise);
    // A kernel tick is at most 10 ms (100 Hz); a second leaves room for a
    // descheduled test without letting a wrong clock (seconds, not ms) pass.
    REQUIRE(precise - coarse < 1000);
  }
}
