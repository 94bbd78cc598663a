// SWAPDB and COPY over real loopback sockets, where one connection is not
// enough: a client blocked on a list that SWAPDB brings is served, and what
// SWAPDB and COPY ... DB did is back after a restart with a data dir.
//
// Assertions run on the main thread only.

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "ephpm/replicator.h"
#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {


struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/ephpm-resp-keyspace-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

// Waits (bounded by the guard) until connection `id` shows `cmd` as its
// last command in CLIENT LIST: it is then blocked.
bool WaitBlocked(Client& observer, const std::string& id, const std::string& cmd) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kGuardMs);
  const std::string needle = "id=" + id + " ";
  while (std::chrono::steady_clock::now() < until) {
    const std::string r = observer.Call({"CLIENT", "LIST"});
    size_t at = r.find(needle);
    while (at != std::string::npos && (at == 0 || r[at - 1] != '\n')) at = r.find(needle, at + 1);
    if (at != std::string::npos &&
        r.substr(at, r.find('\n', at) - at).find(" cmd=" + cmd + " ") != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace

TEST_CASE("SWAPDB serves a client blocked on a list the swap brings") {
  Fixture f({}, FewShards());
  Client a(f.port()), b(f.port());
  const std::string r = a.Call({"CLIENT", "ID"});
  REQUIRE(r.size() > 3);
  const std::string ida = r.substr(1, r.size() - 3);
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK(b.Call({"SELECT", "1"}) == kOk);
  CHECK(b.Call({"RPUSH", "q", "x", "y"}) == Int(2));
  CHECK_FALSE(a.Readable(20));  // another database: still blocked
  CHECK(b.Call({"SWAPDB", "0", "1"}) == kOk);
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("x")}));
  CHECK(a.Call({"LRANGE", "q", "0", "-1"}) == Arr({Bulk("y")}));
  CHECK(b.Call({"EXISTS", "q"}) == Int(0));
}

TEST_CASE("SWAPDB and COPY ... DB are back after a restart") {
  TempDir dir;
  StoreOptions so = FewShards();
  so.persistence.data_dir = dir.path + "/data";
  so.persistence.fsync = ephpm::FsyncPolicy::kAlways;
  const int64_t start = 1'700'000'000'000;
  {
    Fixture f({}, so, start);
    Client c(f.port());
    CHECK(c.Call({"SET", "s", "zero"}) == kOk);
    CHECK(c.Call({"HSET", "h", "f", "v"}) == Int(1));
    CHECK(c.Call({"SELECT", "2"}) == kOk);
    CHECK(c.Call({"SET", "s", "two"}) == kOk);
    CHECK(c.Call({"SET", "t", "x", "PX", "60000"}) == kOk);
    CHECK(c.Call({"SWAPDB", "0", "2"}) == kOk);
    CHECK(c.Call({"COPY", "h", "h", "DB", "5"}) == Int(1));
    CHECK(c.Call({"SELECT", "0"}) == kOk);
    CHECK(c.Call({"COPY", "t", "t", "DB", "3"}) == Int(1));
  }
  Fixture f({}, so, start + 1000);
  Client c(f.port());
  CHECK(c.Call({"GET", "s"}) == Bulk("two"));
  CHECK(c.Call({"PTTL", "t"}) == Int(59000));
  CHECK(c.Call({"EXISTS", "h"}) == Int(0));
  CHECK(c.Call({"SELECT", "2"}) == kOk);
  CHECK(c.Call({"GET", "s"}) == Bulk("zero"));
  CHECK(c.Call({"HGET", "h", "f"}) == Bulk("v"));
  CHECK(c.Call({"SELECT", "5"}) == kOk);
  CHECK(c.Call({"HGET", "h", "f"}) == Bulk("v"));
  CHECK(c.Call({"SELECT", "3"}) == kOk);
  CHECK(c.Call({"PTTL", "t"}) == Int(59000));
}

namespace {

// A cluster of one owner for every key: only database 0 exists there.
class OneOwner : public ephpm::Replicator {};

}  // namespace

TEST_CASE("in a cluster SWAPDB is refused, COPY only within database 0") {
  OneOwner owner;
  StoreOptions so = FewShards();
  so.replicator = &owner;
  Fixture f({}, so);
  Client c(f.port());
  CHECK(c.Call({"SWAPDB", "0", "1"}) == Err("ERR SWAPDB is not allowed in cluster mode"));
  CHECK(c.Call({"SWAPDB", "0", "0"}) == Err("ERR SWAPDB is not allowed in cluster mode"));
  CHECK(c.Call({"SET", "{t}a", "v"}) == kOk);
  CHECK(c.Call({"COPY", "{t}a", "{t}b", "DB", "1"}) ==
        Err("ERR Copying to another database is not allowed in cluster mode"));
  CHECK(c.Call({"COPY", "{t}a", "{t}b", "DB", "0"}) == Int(1));
  CHECK(c.Call({"GET", "{t}b"}) == Bulk("v"));
  CHECK(c.Call({"COPY", "{t}a", "{t}b"}) == Int(0));
}

namespace {

// INFO memory's used_memory.
int64_t UsedMemory(Client& c) {
  const std::string info = c.Call({"INFO", "memory"});
  const size_t at = info.find("used_memory:");
  if (at == std::string::npos) return -1;
  return std::stoll(info.substr(at + 12));
}

// An integer reply's value (-1 for anything else).
int64_t IntOf(const std::string& reply) {
  if (reply.size() < 4 || reply[0] != ':') return -1;
  return std::stoll(reply.substr(1));
}

}  // namespace

TEST_CASE("MEMORY USAGE reports what the store accounts for each key") {
  Fixture f;
  Client c(f.port());
  const int64_t before = UsedMemory(c);
  REQUIRE(before >= 0);
  CHECK(c.Call({"SET", "s", "v"}) == kOk);
  CHECK(c.Call({"SET", "big", std::string(100000, 'A')}) == kOk);
  CHECK(c.Call({"HSET", "h", "f1", "v1", "f2", std::string(300, 'x')}) == Int(2));
  CHECK(c.Call({"RPUSH", "l", "a", "b", "c"}) == Int(3));
  CHECK(c.Call({"SADD", "set", "1", "2"}) == Int(2));
  CHECK(c.Call({"ZADD", "z", "1", "m"}) == Int(1));
  CHECK(c.Call({"SET", "t", "v", "EX", "100"}) == kOk);
  int64_t sum = 0;
  for (const char* k : {"s", "big", "h", "l", "set", "z", "t"}) {
    INFO("key " << k);
    const int64_t usage = IntOf(c.Call({"MEMORY", "USAGE", k}));
    CHECK(usage > 0);
    sum += usage;
  }
  // No replicator, so nothing but the entries is accounted: each key's
  // figure is its share of used_memory, exactly.
  CHECK(UsedMemory(c) - before == sum);
  // The figure follows the value: a smaller one after a big one is
  // accounted at its own size (Redis's "trim on SET with big value").
  const int64_t big = IntOf(c.Call({"MEMORY", "USAGE", "big"}));
  CHECK(big >= 100000);
  CHECK(c.Call({"SET", "big", std::string(33000, 'A')}) == kOk);
  const int64_t trimmed = IntOf(c.Call({"MEMORY", "USAGE", "big"}));
  CHECK(trimmed >= 33000);
  CHECK(trimmed < 42000);
  // A field added to the hash is in its figure.
  const int64_t h = IntOf(c.Call({"MEMORY", "USAGE", "h"}));
  CHECK(c.Call({"HSET", "h", "f3", std::string(1000, 'y')}) == Int(1));
  CHECK(IntOf(c.Call({"MEMORY", "USAGE", "h"})) >= h + 1000);
  // SAMPLES is accepted (the whole value is always measured).
  CHECK(c.Call({"MEMORY", "USAGE", "h", "SAMPLES", "0"}) == c.Call({"MEMORY", "USAGE", "h"}));
  // Missing, expired and other databases' keys: a null.
  CHECK(c.Call({"MEMORY", "USAGE", "nosuchkey"}) == kNil);
  CHECK(c.Call({"SET", "gone", "v", "PX", "1"}) == kOk);
  CHECK(IntOf(c.Call({"MEMORY", "USAGE", "gone"})) > 0);
  f.clock.Advance(1);
  CHECK(c.Call({"MEMORY", "USAGE", "gone"}) == kNil);
  CHECK(c.Call({"SELECT", "1"}) == kOk);
  CHECK(c.Call({"MEMORY", "USAGE", "s"}) == kNil);
}

TEST_CASE("TOUCH counts live keys and makes them just accessed") {
  Fixture f;
  Client c(f.port());
  CHECK(c.Call({"SET", "a", "v"}) == kOk);
  CHECK(c.Call({"RPUSH", "l", "x"}) == Int(1));
  f.clock.Advance(5000);
  CHECK(c.Call({"OBJECT", "IDLETIME", "a"}) == Int(5));
  CHECK(c.Call({"OBJECT", "IDLETIME", "l"}) == Int(5));
  CHECK(c.Call({"TOUCH", "a", "nokey", "a"}) == Int(2));
  CHECK(c.Call({"OBJECT", "IDLETIME", "a"}) == Int(0));
  CHECK(c.Call({"OBJECT", "IDLETIME", "l"}) == Int(5));  // not named
  // A read, not a change: nothing published, no WATCH touched.
  CHECK(c.Call({"WATCH", "l"}) == kOk);
  CHECK(c.Call({"TOUCH", "l"}) == Int(1));
  CHECK(c.Call({"MULTI"}) == kOk);
  CHECK(c.Call({"LLEN", "l"}) == "+QUEUED\r\n");
  CHECK(c.Call({"EXEC"}) == Arr({Int(1)}));
  CHECK(c.Call({"OBJECT", "IDLETIME", "l"}) == Int(0));
  // Expired: not counted.
  CHECK(c.Call({"PEXPIRE", "a", "10"}) == Int(1));
  f.clock.Advance(10);
  CHECK(c.Call({"TOUCH", "a"}) == Int(0));
}
