// MULTI/EXEC/WATCH across connections and against in-process callers of the
// store: WATCH sees other connections' and PHP's writes, an optimistic
// increment loses no update, EXEC (and EVAL) is one step for every other
// reader and for in-process writers of the same keys, and in
// a cluster a transaction runs only where its keys are decided.  (Replies on
// one connection are compared with redis-server in resp_diff/multi.resp.)

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "ephpm/replicator.h"
#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {

const std::string kQueued = "+QUEUED\r\n";
const std::string kNullArray = "*-1\r\n";

// The integer a bulk reply holds ("$1\r\n7\r\n" -> 7), 0 for a null bulk.
long long BulkInt(const std::string& reply) {
  if (reply == kNil) return 0;
  const size_t body = reply.find("\r\n") + 2;
  return std::stoll(reply.substr(body, reply.size() - body - 2));
}

}  // namespace

TEST_CASE("WATCH: another connection's write, and an in-process write, abort EXEC",
          "[resp][multi]") {
  Fixture f;
  Client a(f.port()), b(f.port());
  REQUIRE(a.Call({"SET", "k", "1"}) == kOk);

  SECTION("another connection") {
    REQUIRE(a.Call({"WATCH", "k"}) == kOk);
    REQUIRE(b.Call({"SET", "k", "2"}) == kOk);
  }
  SECTION("a PHP caller of the same store") {
    REQUIRE(a.Call({"WATCH", "k"}) == kOk);
    REQUIRE(f.store->Set("k", "2") == ephpm::Status::kOk);
  }
  SECTION("another connection deletes it") {
    REQUIRE(a.Call({"WATCH", "k"}) == kOk);
    REQUIRE(b.Call({"DEL", "k"}) == Int(1));
  }
  SECTION("it expires") {
    REQUIRE(a.Call({"PEXPIRE", "k", "100"}) == Int(1));
    REQUIRE(a.Call({"WATCH", "k"}) == kOk);
    f.clock.Advance(100);
  }
  REQUIRE(a.Call({"MULTI"}) == kOk);
  REQUIRE(a.Call({"SET", "k", "mine"}) == kQueued);
  CHECK(a.Call({"EXEC"}) == kNullArray);
  CHECK(a.Call({"GET", "k"}) != Bulk("mine"));
}

TEST_CASE("WATCH: writes to other keys and reads of the key do not abort EXEC", "[resp][multi]") {
  Fixture f;
  Client a(f.port()), b(f.port());
  REQUIRE(a.Call({"SET", "k", "1"}) == kOk);
  REQUIRE(a.Call({"WATCH", "k"}) == kOk);
  for (int i = 0; i < 100; ++i) REQUIRE(b.Call({"SET", "other" + std::to_string(i), "x"}) == kOk);
  REQUIRE(b.Call({"GET", "k"}) == Bulk("1"));
  std::string v;
  REQUIRE(f.store->Get("k", &v) == ephpm::Status::kOk);
  REQUIRE(a.Call({"MULTI"}) == kOk);
  REQUIRE(a.Call({"SET", "k", "mine"}) == kQueued);
  CHECK(a.Call({"EXEC"}) == Arr({kOk}));
  CHECK(b.Call({"GET", "k"}) == Bulk("mine"));
}

TEST_CASE("WATCH: a connection that closes while watching leaves nothing behind",
          "[resp][multi]") {
  Fixture f;
  {
    Client a(f.port());
    REQUIRE(a.Call({"WATCH", "k", "j"}) == kOk);
  }
  // The watcher count is the store's: a new WATCH/UNWATCH pair on the same
  // keys must still work, and a write must not be held up by a dead one.
  Client b(f.port());
  for (int i = 0; i < 50; ++i) {
    REQUIRE(b.Call({"WATCH", "k"}) == kOk);
    REQUIRE(b.Call({"MULTI"}) == kOk);
    REQUIRE(b.Call({"INCR", "k"}) == kQueued);
    REQUIRE(b.Call({"EXEC"}) == Arr({Int(i + 1)}));
  }
}

TEST_CASE("WATCH: optimistic increments from connections and in-process increments lose nothing",
          "[resp][multi]") {
  Fixture f;
  constexpr int kClients = 3, kPerClient = 150, kInProcess = 300;
  std::atomic<int> failures{0}, retries{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      Client c(f.port());
      for (int done = 0; done < kPerClient;) {
        if (c.Call({"WATCH", "n"}) != kOk) failures++;
        const long long v = BulkInt(c.Call({"GET", "n"}));
        if (c.Call({"MULTI"}) != kOk) failures++;
        if (c.Call({"SET", "n", std::to_string(v + 1)}) != kQueued) failures++;
        const std::string r = c.Call({"EXEC"});
        if (r == Arr({kOk})) {
          ++done;
        } else if (r == kNullArray) {
          retries++;
        } else {
          failures++;
          return;
        }
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < kInProcess; ++i) {
      int64_t r = 0;
      if (f.store->IncrBy("n", 1, &r) != ephpm::Status::kOk) failures++;
    }
  });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  Client c(f.port());
  CHECK(c.Call({"GET", "n"}) == Bulk(std::to_string(kClients * kPerClient + kInProcess)));
  INFO("EXECs aborted by a concurrent change: " << retries.load());
}

TEST_CASE("EXEC: a transaction is one step for other connections and in-process readers",
          "[resp][multi]") {
  Fixture f;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, torn{0}, reads{0};
  std::thread writer([&] {
    Client c(f.port());
    for (int i = 0; i < 400; ++i) {
      // Two keys, most likely in two shards.
      if (c.Call({"MULTI"}) != kOk) failures++;
      if (c.Call({"INCR", "left"}) != kQueued) failures++;
      if (c.Call({"INCR", "right"}) != kQueued) failures++;
      const std::string r = c.Call({"EXEC"});
      if (r != Arr({Int(i + 1), Int(i + 1)})) failures++;
    }
    stop = true;
  });
  std::thread resp_reader([&] {
    Client c(f.port());
    while (!stop) {
      if (c.Call({"MULTI"}) != kOk) failures++;
      if (c.Call({"MGET", "left", "right"}) != kQueued) failures++;
      const std::string r = c.Call({"EXEC"});
      // *1 *2 <left> <right>: the two values are equal.
      const std::string prefix = "*1\r\n*2\r\n";
      if (r.compare(0, prefix.size(), prefix) != 0) {
        failures++;
        break;
      }
      const size_t split = ReplyEnd(r, prefix.size());
      const std::string l = r.substr(prefix.size(), split - prefix.size());
      const std::string rr = r.substr(split);
      if (l != rr) torn++;
      reads++;
    }
  });
  std::thread php_reader([&] {
    while (!stop) {
      std::string l, r;
      f.store->Atomically({"left", "right"}, false, [&] {
        f.store->Get("left", &l);
        f.store->Get("right", &r);
      });
      if (l != r) torn++;
    }
  });
  writer.join();
  resp_reader.join();
  php_reader.join();
  CHECK(failures == 0);
  CHECK(torn == 0);
  CHECK(reads > 0);
}

TEST_CASE("EXEC and EVAL racing in-process writers on the same keys are each one step",
          "[resp][multi][script]") {
  RespServerOptions o;
  o.io_threads = 2;
  Fixture f(o);
  constexpr int kScripts = 150, kTransactions = 150;
  // Read-modify-write of n by +1000: an in-process increment that landed
  // between the script's GET and SET would be lost.  The loop widens the
  // window.
  const std::string rmw =
      "local v = tonumber(redis.call('get', KEYS[1]) or '0')\n"
      "for i = 1, 2000 do end\n"
      "redis.call('set', KEYS[1], v + 1000)\n"
      "return v";
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, torn{0};
  std::atomic<int64_t> php_increments{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 2; ++t) {
    clients.emplace_back([&] {
      Client c(f.port());
      for (int i = 0; i < kScripts; ++i) {
        const std::string r = c.Call({"EVAL", rmw, "1", "n"});
        if (r.empty() || r[0] != ':') failures++;
      }
    });
    clients.emplace_back([&, t] {
      Client c(f.port());
      for (int i = 0; i < kTransactions; ++i) {
        // What the transaction wrote is what it reads back, although the
        // in-process writers overwrite m all the time.
        const std::string mine = "tx" + std::to_string(t) + "-" + std::to_string(i);
        if (c.Call({"MULTI"}) != kOk) failures++;
        if (c.Call({"SET", "m", mine}) != kQueued) failures++;
        if (c.Call({"APPEND", "m", "!"}) != kQueued) failures++;
        if (c.Call({"GET", "m"}) != kQueued) failures++;
        const std::string r = c.Call({"EXEC"});
        const std::string want = mine + "!";
        if (r != Arr({kOk, Int(static_cast<long long>(want.size())), Bulk(want)})) torn++;
      }
    });
  }
  std::vector<std::thread> php;
  for (int t = 0; t < 2; ++t) {
    php.emplace_back([&] {
      while (!stop) {
        int64_t v = 0;
        if (f.store->IncrBy("n", 1, &v) == ephpm::Status::kOk) {
          php_increments++;
        } else {
          failures++;
        }
        if (f.store->Set("m", "php") != ephpm::Status::kOk) failures++;
      }
    });
  }
  for (auto& th : clients) th.join();
  stop = true;
  for (auto& th : php) th.join();
  CHECK(failures == 0);
  CHECK(torn == 0);
  CHECK(php_increments > 0);
  Client c(f.port());
  CHECK(c.Call({"GET", "n"}) ==
        Bulk(std::to_string(2 * kScripts * 1000 + php_increments.load())));
}


TEST_CASE("EXEC in a cluster: keys of two owners are CROSSSLOT, a remote owner's are refused",
          "[resp][multi]") {
  TwoOwners owners;
  StoreOptions so;
  so.replicator = &owners;
  Fixture f({}, so);
  Client c(f.port());
  REQUIRE(c.Call({"MULTI"}) == kOk);
  REQUIRE(c.Call({"SET", "a1", "x"}) == kQueued);
  REQUIRE(c.Call({"SET", "b1", "y"}) == kQueued);
  CHECK(c.Call({"EXEC"}) == Err("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(c.Call({"EXISTS", "a1", "a2"}) == Int(0));

  REQUIRE(c.Call({"MULTI"}) == kOk);
  REQUIRE(c.Call({"SET", "r1", "x"}) == kQueued);
  CHECK(c.Call({"EXEC"}) ==
        Err("ERR a transaction runs on the owner of its keys: send it to 10.0.0.2:7000"));
  CHECK(c.Call({"EXISTS", "r1"}) == Int(0));

  // WATCHed keys count as the transaction's keys.
  REQUIRE(c.Call({"WATCH", "b9"}) == kOk);
  REQUIRE(c.Call({"MULTI"}) == kOk);
  REQUIRE(c.Call({"SET", "a1", "x"}) == kQueued);
  CHECK(c.Call({"EXEC"}) == Err("CROSSSLOT Keys in request don't hash to the same slot"));

  REQUIRE(c.Call({"MULTI"}) == kOk);
  REQUIRE(c.Call({"SET", "a1", "x"}) == kQueued);
  REQUIRE(c.Call({"GET", "a2"}) == kQueued);
  CHECK(c.Call({"EXEC"}) == Arr({kOk, kNil}));
}

TEST_CASE("MULTI: CONFIG SET maxmemory inside EXEC, beside SWAPDBs, takes no lock out of order",
          "[resp][multi]") {
  // Setting a limit takes every shard's lock in turn (Store::SetMemoryLimit).
  // Inside EXEC the transaction already holds its shards: were those only
  // database 1's, taking database 0's after them would invert the order a
  // SWAPDB 0 1 takes them in, and the two would wait for each other.  So a
  // transaction with CONFIG holds every database.  (Two databases of four
  // shards: few locks, for ThreadSanitizer's deadlock detector.)
  StoreOptions so;
  so.databases = 2;
  so.shards = 4;
  Fixture f({}, so);
  Client a(f.port());
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::thread swapper([&] {
    Client b(f.port());
    while (!stop.load()) {
      if (b.Call({"SWAPDB", "0", "1"}) != kOk) bad++;
    }
  });
  for (int i = 0; i < 200; ++i) {
    const std::string limit = i % 2 == 0 ? "104857600" : "0";
    REQUIRE(a.Call({"MULTI"}) == kOk);
    REQUIRE(a.Call({"SELECT", "1"}) == kQueued);
    REQUIRE(a.Call({"SET", "k", std::to_string(i)}) == kQueued);
    REQUIRE(a.Call({"CONFIG", "SET", "maxmemory", limit}) == kQueued);
    REQUIRE(a.Call({"EXEC"}) == Arr({kOk, kOk, kOk}));
    REQUIRE(a.Call({"CONFIG", "GET", "maxmemory"}) == Arr({Bulk("maxmemory"), Bulk(limit)}));
    REQUIRE(a.Call({"SELECT", "0"}) == kOk);
  }
  stop = true;
  swapper.join();
  CHECK(bad.load() == 0);
}
