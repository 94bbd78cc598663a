// Helpers shared by the Catch2 suites.

#ifndef EPHPM_TESTS_TEST_UTIL_H_
#define EPHPM_TESTS_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include <condition_variable>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/store.h"

namespace ephpm_test {

// A store on a manual clock with no sweeper thread unless asked for, so tests
// decide when time moves and when expired entries are swept.
inline std::unique_ptr<ephpm::Store> MakeStore(ephpm::StoreOptions o,
                                               const ephpm::Clock* clock) {
  o.clock = clock;
  std::string error;
  auto store = ephpm::Store::Create(o, &error);
  if (!store) throw std::runtime_error("Store::Create: " + error);
  return store;
}

// The string at `key`, or "<missing>", or "<wrongtype>" for a hash.
// The whole sorted set at `key`, by rank (REQUIREd to be readable).
inline ephpm::Store::ZMembers ZAll(const ephpm::Store& s, std::string_view key) {
  ephpm::Store::ZMembers out;
  REQUIRE(s.ZRange(key, ephpm::Store::ZRangeSpec{}, &out) == ephpm::Status::kOk);
  return out;
}

inline std::string GetOr(ephpm::Store& s, std::string_view key) {
  std::string v;
  const ephpm::Status st = s.Get(key, &v);
  if (st == ephpm::Status::kOk) return v;
  return st == ephpm::Status::kWrongType ? "<wrongtype>" : "<missing>";
}

// The key's PTTL (REQUIREd to be readable).
inline int64_t Pttl(ephpm::Store& s, std::string_view key) {
  int64_t t = 0;
  REQUIRE(s.Pttl(key, &t) == ephpm::Status::kOk);
  return t;
}

// The sum of every live entry's accounted size, read entry by entry (with no
// writer running: every key listed must still be there).
inline uint64_t SumOfEntries(ephpm::Store& s) {
  std::vector<std::string> keys;
  REQUIRE(s.Keys("*", &keys) == ephpm::Status::kOk);
  uint64_t sum = 0;
  for (const auto& k : keys) {
    ephpm::EntryInfo info;
    REQUIRE(s.Inspect(k, &info) == ephpm::Status::kOk);
    sum += info.mem_size;
  }
  return sum;
}

// A key named base, or base followed by a number, whose shard (database 0)
// is none of the given keys' shards.  The key hash is seeded per process, so
// a test that needs keys in different shards (a script's section, -BUSY)
// picks them this way rather than by name.
inline std::string KeyOutside(const ephpm::Store& store, const std::string& base,
                              const std::vector<std::string>& keys) {
  std::string k = base;
  for (int i = 0;; ++i) {
    bool clash = false;
    for (const auto& held : keys) {
      clash = clash || store.ShardIndex(0, k) == store.ShardIndex(0, held);
    }
    if (!clash) return k;
    k = base + std::to_string(i);
  }
}

// A fresh directory under /tmp, removed with everything in it.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/ephpm-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string Sub(const std::string& name) const { return path + "/" + name; }
  std::string path;
};

// A tmpfs of `size` ("256k") mounted on a fresh directory, unmounted at the
// end (declare it before the store that uses it): a disk that fills up.  ok
// is false where mounting is refused (not root, no CAP_SYS_ADMIN), with the
// reason in `error`.
struct Tmpfs {
  explicit Tmpfs(const char* size) {
    const std::string opts = std::string("size=") + size;
    ok = ::mount("tmpfs", dir.path.c_str(), "tmpfs", 0, opts.c_str()) == 0;
    if (!ok) error = std::strerror(errno);
  }
  bool Resize(const char* size) {
    const std::string opts = std::string("size=") + size;
    return ::mount("tmpfs", dir.path.c_str(), "tmpfs", MS_REMOUNT, opts.c_str()) == 0;
  }
  ~Tmpfs() {
    if (ok) ::umount2(dir.path.c_str(), MNT_DETACH);
  }
  TempDir dir;
  bool ok = false;
  std::string error;
};

inline ephpm::StoreOptions NoSweeper() {
  ephpm::StoreOptions o;
  o.sweep_interval_ms = 0;
  return o;
}

// Releases all threads at once, reusable for many rounds.  (C++17 has no
// std::barrier.)
class Barrier {
 public:
  explicit Barrier(size_t n) : n_(n) {}
  void ArriveAndWait() {
    std::unique_lock<std::mutex> l(mu_);
    const size_t gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(l, [&] { return generation_ != gen; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const size_t n_;
  size_t arrived_ = 0;
  size_t generation_ = 0;
};

// Incompressible bytes of length n (xorshift), deterministic per seed.
inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x >> 56);
  }
  return s;
}

}  // namespace ephpm_test

#endif  // EPHPM_TESTS_TEST_UTIL_H_
