// Concurrent histories of the store, checked for linearizability.
//
// Several threads run random operations (get, set, set_nx, del_if_eq,
// incr_by) on a two-key space, each thread with its own seeded generator.
// Every operation takes a ticket from one atomic counter just before it is
// called and another just after it returned, so that "a returned before b
// was called" is known exactly.  After the threads are joined, each key's
// history is searched (Wing & Gong, with memoised dead ends) for a
// sequential order that respects those real-time constraints and in which
// every result is what a single-threaded store would answer.  Linearizability
// is local, so single-key histories are enough for single-key operations.
// Histories are kept small (one round of a few operations per thread on a
// fresh store) so that the search is fast.  Catch2 assertions run only on the
// main thread.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <rapidcheck.h>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::DelIfEqOutcome;
using ephpm::ManualClock;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;

namespace {

enum class Kind { kGet, kSet, kSetNx, kDelIfEq, kIncr };

struct Event {
  Kind kind = Kind::kGet;
  int thread = 0;
  std::string key;
  std::string arg;  // the value (set, set_nx), the token (del_if_eq)
  uint64_t call = 0, ret = 0;
  std::string result;
};

std::string Describe(const Event& e) {
  std::ostringstream os;
  os << "[" << e.call << ", " << e.ret << "] thread " << e.thread << ": ";
  switch (e.kind) {
    case Kind::kGet: os << "get(" << e.key << ")"; break;
    case Kind::kSet: os << "set(" << e.key << ", " << e.arg << ")"; break;
    case Kind::kSetNx: os << "set_nx(" << e.key << ", " << e.arg << ")"; break;
    case Kind::kDelIfEq: os << "del_if_eq(" << e.key << ", " << e.arg << ")"; break;
    case Kind::kIncr: os << "incr_by(" << e.key << ", 1)"; break;
  }
  os << " -> " << e.result;
  return os.str();
}

// The sequential specification: one key's value, or nothing.
using Value = std::optional<std::string>;

bool ParseCanonical(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end != s.c_str() + s.size() || std::to_string(v) != s) return false;
  *out = v;
  return true;
}

// What a single-threaded store answers to `e` in state `v`; moves v on.
std::string Answer(const Event& e, Value* v) {
  switch (e.kind) {
    case Kind::kGet: return v->has_value() ? "ok " + **v : "not found";
    case Kind::kSet: *v = e.arg; return "ok";
    case Kind::kSetNx:
      if (v->has_value()) return "exists";
      *v = e.arg;
      return "inserted";
    case Kind::kDelIfEq:
      if (!v->has_value() || **v != e.arg) return "not matched";
      v->reset();
      return "deleted";
    case Kind::kIncr: {
      int64_t n = 0;
      if (v->has_value() && !ParseCanonical(**v, &n)) return "not an integer";
      if (__builtin_add_overflow(n, 1, &n)) return "overflow";
      *v = std::to_string(n);
      return "ok " + **v;
    }
  }
  return "?";
}

// Wing & Gong: is there a sequential order of h, consistent with the
// real-time order of its calls and returns, whose answers are h's results?
// REQUIRES: h.size() <= 64.
class Linearizer {
 public:
  explicit Linearizer(const std::vector<Event>& h) : h_(h) {}

  bool Check() { return Search(0, Value()); }

 private:
  bool Search(uint64_t done, const Value& v) {
    const uint64_t all = h_.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << h_.size()) - 1;
    if (done == all) return true;
    const std::string memo = std::to_string(done) + (v ? "=" + *v : "-");
    if (dead_.count(memo) != 0) return false;
    // An operation may go next only if it was called before every pending
    // operation returned.
    uint64_t first_ret = UINT64_MAX;
    for (size_t i = 0; i < h_.size(); ++i) {
      if ((done & (uint64_t{1} << i)) == 0) first_ret = std::min(first_ret, h_[i].ret);
    }
    for (size_t i = 0; i < h_.size(); ++i) {
      if ((done & (uint64_t{1} << i)) != 0 || h_[i].call > first_ret) continue;
      Value next = v;
      if (Answer(h_[i], &next) != h_[i].result) continue;
      if (Search(done | (uint64_t{1} << i), next)) return true;
    }
    dead_.insert(memo);
    return false;
  }

  const std::vector<Event>& h_;
  std::unordered_set<std::string> dead_;
};

bool Linearizable(const std::vector<Event>& h) { return Linearizer(h).Check(); }

std::string Run(Store& s, const Event& e) {
  switch (e.kind) {
    case Kind::kGet: {
      std::string v;
      const Status st = s.Get(e.key, &v);
      return st == Status::kOk ? "ok " + v : st == Status::kNotFound ? "not found"
                                                                    : ephpm::StatusName(st);
    }
    case Kind::kSet: {
      const Status st = s.Set(e.key, e.arg);
      return st == Status::kOk ? "ok" : ephpm::StatusName(st);
    }
    case Kind::kSetNx:
      switch (s.SetNx(e.key, e.arg, 60000)) {  // a lock, as the session handler takes it
        case SetNxOutcome::kInserted: return "inserted";
        case SetNxOutcome::kExists: return "exists";
        default: return "unexpected set_nx outcome";
      }
    case Kind::kDelIfEq:
      switch (s.DelIfEq(e.key, e.arg)) {
        case DelIfEqOutcome::kDeleted: return "deleted";
        case DelIfEqOutcome::kNotMatched: return "not matched";
        default: return "unexpected del_if_eq outcome";
      }
    case Kind::kIncr: {
      int64_t n = 0;
      const Status st = s.IncrBy(e.key, 1, &n);
      if (st == Status::kOk) return "ok " + std::to_string(n);
      if (st == Status::kNotInteger) return "not an integer";
      return ephpm::StatusName(st);
    }
  }
  return "?";
}

constexpr int kThreads = 4;
constexpr int kOpsPerThread = 8;
const char* const kKeys[] = {"x", "y"};

// One thread's operations for one round: drawn from its own generator, with
// tokens taken from what it wrote or read (as a lock holder would).
std::vector<Event> Plan(uint64_t seed, int round, int thread) {
  std::mt19937_64 rng(seed ^ (uint64_t(round) * 0x9E3779B97F4A7C15ull) ^ uint64_t(thread + 1));
  std::vector<Event> plan;
  std::string last = "none";
  for (int i = 0; i < kOpsPerThread; ++i) {
    Event e;
    e.thread = thread;
    e.key = kKeys[rng() % 2];
    const unsigned pick = rng() % 100;
    const std::string fresh = rng() % 5 == 0
                                  ? "t" + std::to_string(thread) + "-" + std::to_string(i)
                                  : std::to_string((thread + 1) * 1000000 + round * 100 + i);
    if (pick < 25) {
      e.kind = Kind::kGet;
    } else if (pick < 45) {
      e.kind = Kind::kSet;
      e.arg = last = fresh;
    } else if (pick < 65) {
      e.kind = Kind::kSetNx;
      e.arg = last = fresh;
    } else if (pick < 85) {
      e.kind = Kind::kDelIfEq;
      e.arg = last;
    } else {
      e.kind = Kind::kIncr;
    }
    plan.push_back(std::move(e));
  }
  return plan;
}

}  // namespace

TEST_CASE("linearizability: the checker refuses impossible histories and accepts overlaps",
          "[store][model][linearizability]") {
  auto ev = [](Kind k, const char* arg, uint64_t call, uint64_t ret, const char* result) {
    Event e;
    e.kind = k;
    e.key = "x";
    e.arg = arg;
    e.call = call;
    e.ret = ret;
    e.result = result;
    return e;
  };
  // Two increments one after the other cannot both answer 1 (a lost update).
  CHECK_FALSE(Linearizable({ev(Kind::kIncr, "", 0, 1, "ok 1"), ev(Kind::kIncr, "", 2, 3, "ok 1")}));
  // Overlapping, they still cannot.
  CHECK_FALSE(Linearizable({ev(Kind::kIncr, "", 0, 3, "ok 1"), ev(Kind::kIncr, "", 1, 2, "ok 1")}));
  CHECK(Linearizable({ev(Kind::kIncr, "", 0, 3, "ok 2"), ev(Kind::kIncr, "", 1, 2, "ok 1")}));
  // Two set_nx both inserting: a double grant.
  CHECK_FALSE(Linearizable({ev(Kind::kSetNx, "a", 0, 3, "inserted"),
                            ev(Kind::kSetNx, "b", 1, 2, "inserted")}));
  // A read that returned before a write was called cannot see it ...
  CHECK_FALSE(Linearizable({ev(Kind::kGet, "", 0, 1, "ok v"), ev(Kind::kSet, "v", 2, 3, "ok")}));
  // ... but may when they overlap.
  CHECK(Linearizable({ev(Kind::kGet, "", 0, 3, "ok v"), ev(Kind::kSet, "v", 1, 2, "ok")}));
  // A release of a lock that another holder took in between cannot succeed.
  CHECK_FALSE(Linearizable({ev(Kind::kSetNx, "a", 0, 1, "inserted"),
                            ev(Kind::kDelIfEq, "a", 2, 3, "deleted"),
                            ev(Kind::kSetNx, "b", 4, 5, "inserted"),
                            ev(Kind::kDelIfEq, "a", 6, 7, "deleted")}));
}

TEST_CASE("linearizability: concurrent set/get/set_nx/del_if_eq/incr on two keys",
          "[store][model][linearizability]") {
  const uint64_t seed = rc::detail::configuration().testParams.seed;
  const int rounds = 1500;
  std::cout << "linearizability: seed=" << seed << ", " << rounds << " rounds of " << kThreads
            << " threads x " << kOpsPerThread << " operations (replay the plans with RC_PARAMS=\"seed="
            << seed << "\"; the interleaving is the machine's)" << std::endl;
  uint64_t checked = 0, overlapping = 0;
  for (int round = 0; round < rounds; ++round) {
    ManualClock clock;
    auto o = ephpm_test::NoSweeper();
    o.shards = 2;
    auto store = ephpm_test::MakeStore(o, &clock);
    std::atomic<uint64_t> ticket{0};
    std::atomic<int> ready{0};
    std::vector<std::vector<Event>> done(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::vector<Event> plan = Plan(seed, round, t);
        std::minstd_rand pause(static_cast<unsigned>(seed) + static_cast<unsigned>(t));
        // Start together (a spinning start: waking from a condition variable
        // takes longer than a whole round of operations).
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        for (Event& e : plan) {
          // A short pause of random length, so that calls of different
          // threads fall into each other's intervals in varied ways.
          for (unsigned spin = pause() % 256; spin > 0; --spin) {
            ticket.load(std::memory_order_relaxed);
          }
          e.call = ticket.fetch_add(1, std::memory_order_seq_cst);
          e.result = Run(*store, e);
          e.ret = ticket.fetch_add(1, std::memory_order_seq_cst);
        }
        done[t] = std::move(plan);
      });
    }
    for (auto& th : threads) th.join();

    for (const char* key : kKeys) {
      std::vector<Event> h;
      for (const auto& d : done) {
        for (const auto& e : d) {
          if (e.key == key) h.push_back(e);
        }
      }
      for (size_t i = 0; i < h.size(); ++i) {
        for (size_t j = i + 1; j < h.size(); ++j) {
          if (h[i].call < h[j].ret && h[j].call < h[i].ret) ++overlapping;
        }
      }
      ++checked;
      if (!Linearizable(h)) {
        std::sort(h.begin(), h.end(), [](const Event& a, const Event& b) { return a.call < b.call; });
        std::ostringstream os;
        os << "round " << round << ", key " << key << " (seed " << seed
           << "): no sequential order explains this history:\n";
        for (const auto& e : h) os << "  " << Describe(e) << "\n";
        FAIL(os.str());
      }
    }
  }
  std::cout << "linearizability: " << checked << " single-key histories checked, " << overlapping
            << " overlapping pairs of operations" << std::endl;
  CHECK(checked == rounds * 2);
}
