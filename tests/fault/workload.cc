#include "workload.h"

#include <chrono>
#include <cstdio>
#include <iterator>
#include <random>

#include "resp_client.h"

namespace ephpm_fault {
namespace {

constexpr size_t kMaxUnexpected = 10;
constexpr int kConnectTimeoutMs = 1000;

// SplitMix64: independent streams from one seed.
uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return hi <= lo ? lo : lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// "CLUSTERDOWN" errors are the documented unknown outcome; any other error
// is unexpected.
bool IsClusterDown(const Reply& r) { return r.IsErrorPrefix("CLUSTERDOWN"); }

}  // namespace

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A thread's connection: to a random node, switched to another random node
// every few operations (so that some operations are decided where they are
// asked and some are routed), and remade after a failure.
class Workload::Picker {
 public:
  Picker(const WorkloadOptions& o, std::mt19937_64* rng, PerThread* out)
      : o_(o), rng_(rng), out_(out) {}

  // A connected client, or null when the chosen node refused (down); the
  // caller backs off and asks again.
  RespClient* Get() {
    if (client_.connected() && ops_left_-- > 0) return &client_;
    node_ = static_cast<size_t>((*rng_)() % o_.nodes.size());
    ops_left_ = Uniform(*rng_, 1, 20);
    std::string error;
    if (!client_.Connect(o_.nodes[node_].resp_port, kConnectTimeoutMs, &error)) {
      ++out_->connect_failures;
      return nullptr;
    }
    return &client_;
  }
  const std::string& node() const { return o_.nodes[node_].id; }

 private:
  const WorkloadOptions& o_;
  std::mt19937_64* rng_;
  PerThread* out_;
  RespClient client_;
  size_t node_ = 0;
  int64_t ops_left_ = 0;
};

Workload::Workload(WorkloadOptions o) : o_(std::move(o)) {}

Workload::~Workload() {
  if (!threads_.empty()) Stop();
}

void Workload::Start() {
  results_.resize(static_cast<size_t>(o_.lock_threads + o_.incr_threads));
  for (int i = 0; i < o_.lock_threads; ++i) {
    threads_.emplace_back([this, i] { LockLoop(i, &results_[static_cast<size_t>(i)]); });
  }
  for (int i = 0; i < o_.incr_threads; ++i) {
    threads_.emplace_back(
        [this, i] { IncrLoop(i, &results_[static_cast<size_t>(o_.lock_threads + i)]); });
  }
}

WorkloadResult Workload::Stop() {
  stop_.store(true);
  for (auto& t : threads_) t.join();
  threads_.clear();
  WorkloadResult r;
  for (PerThread& p : results_) {
    r.cycles.insert(r.cycles.end(), std::make_move_iterator(p.cycles.begin()),
                    std::make_move_iterator(p.cycles.end()));
    for (auto& [key, h] : p.counters) {
      CounterHistory& m = r.counters[key];
      m.acked += h.acked;
      m.unknown += h.unknown;
      m.unexpected += h.unexpected;
      m.replies.insert(m.replies.end(), h.replies.begin(), h.replies.end());
    }
    r.connect_failures += p.connect_failures;
    r.clusterdown_set += p.clusterdown_set;
    r.clusterdown_delifeq += p.clusterdown_delifeq;
    r.clusterdown_incr += p.clusterdown_incr;
    for (auto& [key, acks] : p.incr_acks) {
      auto& all = r.incr_acks[key];
      all.insert(all.end(), std::make_move_iterator(acks.begin()),
                 std::make_move_iterator(acks.end()));
    }
    for (auto& u : p.unexpected) {
      if (r.unexpected.size() < kMaxUnexpected) r.unexpected.push_back(std::move(u));
    }
  }
  for (const std::string& key : o_.counter_keys) r.counters[key];  // even if never reached
  results_.clear();
  return r;
}

void Workload::LockLoop(int index, PerThread* out) {
  std::mt19937_64 rng(Mix(o_.seed ^ Mix(0x10c0000ull + static_cast<uint64_t>(index))));
  Picker picker(o_, &rng, out);
  uint64_t seq = 0;
  auto unexpected = [&](const std::string& what) {
    if (out->unexpected.size() < kMaxUnexpected) out->unexpected.push_back(what);
  };
  while (!stop_.load()) {
    RespClient* c = picker.Get();
    if (c == nullptr) {
      SleepMs(20);
      continue;
    }
    LockCycle cycle;
    cycle.key = o_.lock_keys[rng() % o_.lock_keys.size()];
    char token[96];
    std::snprintf(token, sizeof token, "%s-l%d-%llu-%016llx", o_.token_prefix.c_str(), index,
                  static_cast<unsigned long long>(++seq), static_cast<unsigned long long>(rng()));
    cycle.token = token;
    cycle.node = picker.node();
    cycle.ttl_ms = Uniform(rng, o_.ttl_min_ms, o_.ttl_max_ms);
    Reply reply;
    std::string error;
    cycle.sent_us = NowUs();
    const bool answered = c->Call({"SET", cycle.key, cycle.token, "NX", "PX",
                                   std::to_string(cycle.ttl_ms)},
                                  o_.client_timeout_ms, &reply, &error);
    cycle.replied_us = NowUs();
    if (!answered) {
      cycle.acquire = Acquire::kUnknown;
      cycle.detail = error;
    } else if (reply.IsStatus("OK")) {
      cycle.acquire = Acquire::kGranted;
    } else if (reply.kind == Reply::kNil) {
      cycle.acquire = Acquire::kRefused;
    } else if (IsClusterDown(reply)) {
      cycle.acquire = Acquire::kUnknown;
      cycle.detail = reply.Text();
      ++out->clusterdown_set;
    } else {
      cycle.acquire = Acquire::kUnexpected;
      cycle.detail = reply.Text();
      unexpected("SET " + cycle.key + " ... NX PX on " + cycle.node + ": " + reply.Text());
    }
    if (cycle.acquire == Acquire::kUnknown) unknown_.fetch_add(1);
    if (cycle.acquire != Acquire::kGranted) {
      out->cycles.push_back(std::move(cycle));
      if (answered) SleepMs(Uniform(rng, 1, 20));  // back off from a held lock
      continue;
    }
    granted_.fetch_add(1);
    // Hold: mostly well inside the TTL, sometimes past it on purpose.
    const bool overhold =
        std::uniform_real_distribution<double>(0, 1)(rng) < o_.overhold_share;
    const int64_t hold_ms = overhold ? Uniform(rng, cycle.ttl_ms, cycle.ttl_ms * 3 / 2)
                                     : Uniform(rng, 0, cycle.ttl_ms * 3 / 4);
    const int64_t until = cycle.replied_us + hold_ms * 1000;
    while (!stop_.load() && NowUs() < until) SleepMs(std::min<int64_t>(10, (until - NowUs()) / 1000 + 1));
    cycle.release_sent_us = NowUs();
    const bool released = c->Call({"DELIFEQ", cycle.key, cycle.token}, o_.client_timeout_ms,
                                  &reply, &error);
    cycle.release_replied_us = NowUs();
    if (!released) {
      cycle.release = Release::kUnknown;
      cycle.detail = error;
    } else if (reply.kind == Reply::kInt && reply.num == 1) {
      cycle.release = Release::kReleased;
    } else if (reply.kind == Reply::kInt && reply.num == 0) {
      cycle.release = Release::kNotHeld;
    } else if (IsClusterDown(reply)) {
      cycle.release = Release::kUnknown;
      cycle.detail = reply.Text();
      ++out->clusterdown_delifeq;
    } else {
      cycle.release = Release::kUnexpected;
      cycle.detail = reply.Text();
      unexpected("DELIFEQ " + cycle.key + " on " + cycle.node + ": " + reply.Text());
    }
    out->cycles.push_back(std::move(cycle));
  }
}

void Workload::IncrLoop(int index, PerThread* out) {
  std::mt19937_64 rng(Mix(o_.seed ^ Mix(0x1c0000ull + static_cast<uint64_t>(index))));
  Picker picker(o_, &rng, out);
  while (!stop_.load()) {
    RespClient* c = picker.Get();
    if (c == nullptr) {
      SleepMs(20);
      continue;
    }
    const std::string& key = o_.counter_keys[rng() % o_.counter_keys.size()];
    CounterHistory& h = out->counters[key];
    Reply reply;
    std::string error;
    const int64_t sent_us = NowUs();
    if (!c->Call({"INCR", key}, o_.client_timeout_ms, &reply, &error)) {
      ++h.unknown;
      unknown_.fetch_add(1);
    } else if (reply.kind == Reply::kInt) {
      ++h.acked;
      h.replies.push_back(reply.num);
      out->incr_acks[key].push_back(IncrAck{reply.num, picker.node(), sent_us, NowUs()});
      acked_.fetch_add(1);
    } else if (IsClusterDown(reply)) {
      ++h.unknown;
      unknown_.fetch_add(1);
      ++out->clusterdown_incr;
    } else {
      // A failure of its own (the report lists it); the judge counts it as
      // possibly landed.
      ++h.unexpected;
      if (out->unexpected.size() < kMaxUnexpected) {
        out->unexpected.push_back("INCR " + key + " on " + picker.node() + ": " + reply.Text());
      }
    }
    if (o_.incr_pause_max_ms > 0) SleepMs(Uniform(rng, 0, o_.incr_pause_max_ms));
  }
}

}  // namespace ephpm_fault
