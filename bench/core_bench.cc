// core_bench: ephpm::Store against a straightforward baseline, a
// std::unordered_map<std::string, std::string> behind one std::mutex.
//
// Both implementations see exactly the same work: the same 100000 keys
// "key:<n>", the same 64-byte values, the same per-thread random key
// sequence.  Operations measured, each at 1 and 2 threads:
//
//   get      a read of a key that is present (always a hit)
//   set      an overwrite of a present key with a 64-byte value
//   lock     one set_nx of a "lock:<n>" key with a 64-byte token followed by
//            a del_if_eq with that token: one lock acquire + release.  One
//            item = one whole cycle (two store calls).
//   mix90    90% get, 10% set, chosen at random per operation
//
// The writes are also measured with the append-only log on (docs/
// PERSISTENCE.md): "-log-everysec" (the default policy; the calling thread
// only appends to a buffer) and, for set, "-log-always" (each write waits
// for its fsync, as the ops table does; group commit across the threads).
//
// Every benchmark reports items_per_second.  Threaded runs use real (wall)
// time: the CPU time Google Benchmark would otherwise use is summed over
// threads, so it would hide exactly the contention being measured; with real
// time, "Time" is wall time per operation over all threads together and
// items_per_second is the aggregate throughput.
//
// Correctness is checked (a get that misses, a set_nx that fails, ... marks
// the run as an error) but timing is never judged here; see
// docs/BENCHMARKS.md for the figures.
//
// Diagnostic flag: --absl_deadlock_detection=off turns off absl::Mutex's
// deadlock detection for the whole process before anything runs.  Debian's
// abseil is built without NDEBUG, so that detection is active by default and
// costs every shard lock acquisition; the flag measures what it costs.  The
// figures of record are taken without it.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "ephpm/options.h"
#include "ephpm/status.h"
#include "ephpm/store.h"
#include "ephpm/types.h"
#include "random.h"

namespace {

constexpr size_t kKeyCount = 100000;
constexpr size_t kValueSize = 64;

// The keyspace, built once and shared read-only by every thread, so that no
// key is formatted inside a timed loop.
std::vector<std::string> MakeKeys(const char* prefix) {
  std::vector<std::string> keys;
  keys.reserve(kKeyCount);
  for (size_t i = 0; i < kKeyCount; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

const std::vector<std::string>& DataKeys() {
  static const std::vector<std::string> keys = MakeKeys("key:");
  return keys;
}

// Keys for the lock cycle, disjoint from the data keys so that the lock
// benchmark neither reads nor disturbs the pre-populated entries.
const std::vector<std::string>& LockKeys() {
  static const std::vector<std::string> keys = MakeKeys("lock:");
  return keys;
}

// A value of kValueSize bytes, different per writer so that a reader could
// tell writers apart (the size, and so the work, is the same).
std::string MakeValue(char fill) { return std::string(kValueSize, fill); }

// core/random.h's SplitMix64: a few instructions per number, so the
// generator costs far less than the operations it drives and adds nothing
// shared between threads.
using Rng = ephpm::SplitMix64;

// Maps a 64-bit random number onto [0, n) with a multiply instead of a
// division (Lemire's multiply-shift reduction).
size_t Below(uint64_t r, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

// Each thread of each run gets its own sequence; the seed depends only on the
// thread index, so both implementations see the same keys in the same order.
Rng ThreadRng(const benchmark::State& state) {
  return Rng(0x243f6a8885a308d3ULL * (static_cast<uint64_t>(state.thread_index()) + 1));
}

// ---------------------------------------------------------------------------
// The baseline: what one would write without sharding.  Every operation,
// reads included, takes the one mutex.

class MutexMap {
 public:
  bool Get(const std::string& key, std::string* out) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return false;
    out->assign(it->second);
    return true;
  }

  void Set(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> l(mu_);
    map_.insert_or_assign(key, value);
  }

  bool SetNx(const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> l(mu_);
    return map_.try_emplace(key, value).second;
  }

  bool DelIfEq(const std::string& key, const std::string& token) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = map_.find(key);
    if (it == map_.end() || it->second != token) return false;
    map_.erase(it);
    return true;
  }

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::string> map_;
};

// ---------------------------------------------------------------------------
// Adapters giving both implementations one interface, so that each benchmark
// body is written once and the two can only differ in the store itself.
// Each returns whether the operation did what the benchmark expects.

// kLog: the store with its append-only log (docs/PERSISTENCE.md) in a
// fresh directory under /tmp, removed at exit: kEverySec is the default
// policy; kAlways waits for the fsync after each write, as the ops table does.
enum class Durability { kNone, kEverySec, kAlways };

template <Durability kDurability = Durability::kNone>
class EphpmAdapter {
 public:
  EphpmAdapter() {
    ephpm::StoreOptions o;
    if (kDurability != Durability::kNone) {
      char tmpl[] = "/tmp/ephpm-bench-XXXXXX";
      if (::mkdtemp(tmpl) == nullptr) {
        std::perror("mkdtemp");
        std::abort();
      }
      dir_ = tmpl;
      o.persistence.data_dir = dir_;
      o.persistence.fsync = kDurability == Durability::kAlways ? ephpm::FsyncPolicy::kAlways
                                                               : ephpm::FsyncPolicy::kEverySec;
    }
    std::string error;
    store_ = ephpm::Store::Create(o, &error);
    if (store_ == nullptr) {
      std::fprintf(stderr, "ephpm::Store::Create failed: %s\n", error.c_str());
      std::abort();
    }
  }
  ~EphpmAdapter() {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  bool Get(const std::string& key, std::string* out) const {
    return store_->Get(key, out) == ephpm::Status::kOk;
  }
  bool Set(const std::string& key, const std::string& value) {
    return store_->Set(key, value) == ephpm::Status::kOk && Durable();
  }
  // The population before any run: not waited for one by one.
  void Fill(const std::string& key, const std::string& value) { store_->Set(key, value); }
  bool SetNx(const std::string& key, const std::string& value) {
    return store_->SetNx(key, value) == ephpm::SetNxOutcome::kInserted && Durable();
  }
  bool DelIfEq(const std::string& key, const std::string& token) {
    return store_->DelIfEq(key, token) == ephpm::DelIfEqOutcome::kDeleted && Durable();
  }

 private:
  bool Durable() {
    return kDurability != Durability::kAlways || store_->WaitDurable() == ephpm::Status::kOk;
  }

  std::string dir_;
  std::unique_ptr<ephpm::Store> store_;
};

class BaselineAdapter {
 public:
  bool Get(const std::string& key, std::string* out) const { return map_.Get(key, out); }
  bool Set(const std::string& key, const std::string& value) {
    map_.Set(key, value);
    return true;
  }
  void Fill(const std::string& key, const std::string& value) { map_.Set(key, value); }
  bool SetNx(const std::string& key, const std::string& value) {
    return map_.SetNx(key, value);
  }
  bool DelIfEq(const std::string& key, const std::string& token) {
    return map_.DelIfEq(key, token);
  }

 private:
  MutexMap map_;
};

// One instance per implementation, shared by all its benchmarks and threads
// and populated once (main() calls this before any benchmark runs, so no
// run pays for it).  The benchmarks leave the data keys' number and sizes
// unchanged and remove every lock key they create, so each run starts from
// the same state.
template <typename Impl>
Impl& Shared() {
  static Impl instance;
  static const bool populated = [] {
    const std::string value = MakeValue('v');
    for (const std::string& key : DataKeys()) instance.Fill(key, value);
    return true;
  }();
  static_cast<void>(populated);
  return instance;
}

// ---------------------------------------------------------------------------
// The benchmark bodies.  Keys are picked inside the timed loop on purpose:
// the pick is a few nanoseconds, the same for both implementations, and a
// random pick is what spreads the load over ephpm's shards.

template <typename Impl>
void BM_Get(benchmark::State& state) {
  Impl& impl = Shared<Impl>();
  const std::vector<std::string>& keys = DataKeys();
  Rng rng = ThreadRng(state);
  std::string out;
  out.reserve(kValueSize);
  size_t failed = 0;
  for (auto _ : state) {
    failed += !impl.Get(keys[Below(rng(), keys.size())], &out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
  if (failed != 0) state.SkipWithError("get missed a pre-populated key");
}

template <typename Impl>
void BM_Set(benchmark::State& state) {
  Impl& impl = Shared<Impl>();
  const std::vector<std::string>& keys = DataKeys();
  Rng rng = ThreadRng(state);
  const std::string value = MakeValue(static_cast<char>('a' + state.thread_index()));
  size_t failed = 0;
  for (auto _ : state) {
    failed += !impl.Set(keys[Below(rng(), keys.size())], value);
  }
  state.SetItemsProcessed(state.iterations());
  if (failed != 0) state.SkipWithError("set failed");
}

// A lock acquire + release.  Threads use disjoint lock keys (n % threads ==
// thread index), so that every set_nx finds its key free and both calls do
// the full work in every iteration; cross-thread contention is then only
// that of the store itself, as with independent locks in real use.
template <typename Impl>
void BM_LockCycle(benchmark::State& state) {
  Impl& impl = Shared<Impl>();
  const std::vector<std::string>& keys = LockKeys();
  const size_t stride = static_cast<size_t>(state.threads());
  const size_t offset = static_cast<size_t>(state.thread_index());
  const size_t slots = keys.size() / stride;
  Rng rng = ThreadRng(state);
  const std::string token = MakeValue(static_cast<char>('A' + state.thread_index()));
  size_t failed = 0;
  for (auto _ : state) {
    const std::string& key = keys[Below(rng(), slots) * stride + offset];
    failed += !impl.SetNx(key, token);
    failed += !impl.DelIfEq(key, token);
  }
  state.SetItemsProcessed(state.iterations());
  if (failed != 0) state.SkipWithError("set_nx or del_if_eq did not succeed");
}

// 90% get, 10% set.  One random number picks both the key (from its high
// bits, through Below) and the operation (from its low 32 bits).
template <typename Impl>
void BM_Mix90(benchmark::State& state) {
  Impl& impl = Shared<Impl>();
  const std::vector<std::string>& keys = DataKeys();
  Rng rng = ThreadRng(state);
  const std::string value = MakeValue(static_cast<char>('a' + state.thread_index()));
  std::string out;
  out.reserve(kValueSize);
  size_t failed = 0;
  for (auto _ : state) {
    const uint64_t r = rng();
    const std::string& key = keys[Below(r, keys.size())];
    if (static_cast<uint32_t>(r) % 10 == 0) {
      failed += !impl.Set(key, value);
    } else {
      failed += !impl.Get(key, &out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (failed != 0) state.SkipWithError("get missed or set failed");
}

// Removes `flag` from argv when present (before Google Benchmark sees argv,
// as it rejects flags it does not know) and returns whether it was there.
bool TakeFlag(int* argc, char** argv, const char* flag) {
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], flag) != 0) continue;
    for (int j = i; j < *argc; ++j) argv[j] = argv[j + 1];  // argv[argc] is null
    --*argc;
    return true;
  }
  return false;
}

// Registers `fn` as `name` at 1 and 2 threads, timed on the wall clock (see
// the note at the top).
void Register(const std::string& name, void (*fn)(benchmark::State&)) {
  benchmark::RegisterBenchmark(name.c_str(), fn)->Threads(1)->Threads(2)->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  const bool no_deadlock_detection = TakeFlag(&argc, argv, "--absl_deadlock_detection=off");
  if (no_deadlock_detection) {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("absl_deadlock_detection",
                              no_deadlock_detection ? "off" : "library default");

  // Registered interleaved, ephpm then baseline for each operation, so that
  // the two figures to compare sit next to each other in the report.
  using Ephpm = EphpmAdapter<>;
  using EphpmLog = EphpmAdapter<Durability::kEverySec>;
  using EphpmLogAlways = EphpmAdapter<Durability::kAlways>;
  Register("get/ephpm", BM_Get<Ephpm>);
  Register("get/baseline", BM_Get<BaselineAdapter>);
  Register("set/ephpm", BM_Set<Ephpm>);
  Register("set/ephpm-log-everysec", BM_Set<EphpmLog>);
  Register("set/ephpm-log-always", BM_Set<EphpmLogAlways>);
  Register("set/baseline", BM_Set<BaselineAdapter>);
  Register("lock/ephpm", BM_LockCycle<Ephpm>);
  Register("lock/ephpm-log-everysec", BM_LockCycle<EphpmLog>);
  Register("lock/baseline", BM_LockCycle<BaselineAdapter>);
  Register("mix90/ephpm", BM_Mix90<Ephpm>);
  Register("mix90/ephpm-log-everysec", BM_Mix90<EphpmLog>);
  Register("mix90/baseline", BM_Mix90<BaselineAdapter>);

  // Build and populate every instance up front, outside every measurement.
  Shared<Ephpm>();
  Shared<EphpmLog>();
  Shared<EphpmLogAlways>();
  Shared<BaselineAdapter>();

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
