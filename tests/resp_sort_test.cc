// SORT over RESP where ephpm's own machinery decides the answer (Redis's
// replies themselves are compared byte for byte in resp_diff/sort.resp):
// one step against concurrent writers, the sections of EXEC and scripts, a
// cluster's refusals, and STORE refused for memory.  Eight shards a
// database: SORT with BY or GET holds every shard of its database, which
// ThreadSanitizer's deadlock detector counts.

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/replicator.h"
#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {

bool Contains(const std::string& reply, const std::string& part) {
  return reply.find(part) != std::string::npos;
}

}  // namespace

// A writer swaps two weights in one step (MSET); SORT BY those weights with
// GET of them must see one generation: ascending weights, "1" then "2".  A
// SORT that read its BY values and its GET values at different times (or
// the source list apart from them) would answer "2", "1" now and then.
TEST_CASE("SORT: BY and GET read in one step against a concurrent writer", "[resp][sort]") {
  Fixture f({}, FewShards());
  Client c(f.port());
  REQUIRE(c.Call({"RPUSH", "ids", "a", "b"}) == Int(2));
  REQUIRE(c.Call({"MSET", "w_a", "1", "w_b", "2"}) == kOk);
  std::atomic<bool> done{false};
  std::atomic<int> writer_errors{0};
  std::thread writer([&] {
    Client w(f.port());
    for (int i = 0; !done.load(); ++i) {
      const bool flip = i % 2 == 0;
      if (w.Call({"MSET", "w_a", flip ? "2" : "1", "w_b", flip ? "1" : "2"}) != kOk) {
        writer_errors++;
      }
    }
  });
  int torn = 0;
  const std::string want = Arr({Bulk("1"), Bulk("2")});
  for (int i = 0; i < 2000; ++i) {
    if (c.Call({"SORT", "ids", "BY", "w_*", "GET", "w_*"}) != want) ++torn;
  }
  done = true;
  writer.join();
  CHECK(torn == 0);
  CHECK(writer_errors == 0);
}

TEST_CASE("SORT: inside EXEC and scripts, what it reads and writes is held", "[resp][sort]") {
  Fixture f({}, FewShards());
  Client c(f.port());
  REQUIRE(c.Call({"RPUSH", "l", "2", "3", "1"}) == Int(3));
  REQUIRE(c.Call({"MSET", "w_1", "30", "w_2", "20", "w_3", "10"}) == kOk);
  // EXEC holds the whole database for a SORT whose BY names keys, and
  // STORE's key.
  REQUIRE(c.Call({"MULTI"}) == kOk);
  REQUIRE(c.Call({"SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*"}) == "+QUEUED\r\n");
  REQUIRE(c.Call({"SORT", "l", "STORE", "dst"}) == "+QUEUED\r\n");
  CHECK(c.Call({"EXEC"}) == Arr({Arr({Bulk("3"), Bulk("10"), Bulk("2"), Bulk("20"), Bulk("1"),
                                      Bulk("30")}),
                                 Int(3)}));
  CHECK(c.Call({"LRANGE", "dst", "0", "-1"}) == Arr({Bulk("1"), Bulk("2"), Bulk("3")}));
  // A script that names "sort" holds every shard; one that builds the name
  // holds only its keys: BY and GET patterns and an undeclared STORE key are
  // then refused, declared keys are fine.
  CHECK(c.Call({"EVAL", "return redis.call('sort', KEYS[1], 'by', 'w_*', 'store', 'x')", "1",
                "l"}) == Int(3));
  CHECK(c.Call({"LRANGE", "x", "0", "-1"}) == Arr({Bulk("3"), Bulk("2"), Bulk("1")}));
  const std::string built = "local s = 'so' .. 'rt' ";
  CHECK(Contains(c.Call({"EVAL", built + "return redis.call(s, KEYS[1], 'by', 'w_*')", "1", "l"}),
                 "-ERR Script attempted to call a keyspace-wide command that it does not name "
                 "as a string literal"));
  CHECK(Contains(c.Call({"EVAL", built + "return redis.call(s, KEYS[1], 'get', '#', 'get', "
                                         "'w_*')",
                         "1", "l"}),
                 "-ERR Script attempted to call a keyspace-wide command"));
  // (A key in a shard the section holds is reachable: one outside l's.)
  const std::string undeclared = ephpm_test::KeyOutside(*f.store, "undeclared", {"l"});
  CHECK(Contains(c.Call({"EVAL", built + "return redis.call(s, KEYS[1], 'store', ARGV[1])", "1",
                         "l", undeclared}),
                 "-ERR Script attempted to access a key not declared in KEYS"));
  CHECK(c.Call({"EXISTS", undeclared}) == Int(0));
  CHECK(c.Call({"EVAL", built + "return redis.call(s, KEYS[1], 'by', 'nosort', 'get', '#', "
                                "'store', KEYS[2])",
                "2", "l", "y"}) == Int(3));
  CHECK(c.Call({"LRANGE", "y", "0", "-1"}) == Arr({Bulk("2"), Bulk("3"), Bulk("1")}));
  // A key past kMaxKeySize (source or STORE's): its section refuses it, as
  // every command's store call does; nothing is written.
  const std::string long_key(ephpm::kMaxKeySize + 1, 'k');
  const std::string too_long =
      Err("ERR key is longer than 65536 bytes or value longer than ephpm.max_value_size");
  CHECK(c.Call({"SORT", long_key}) == too_long);
  CHECK(c.Call({"SORT", "l", "STORE", long_key}) == too_long);
  CHECK(c.Call({"SORT", "l", "BY", "w_*", "STORE", long_key}) == too_long);
}

TEST_CASE("SORT in a cluster: BY and GET refused as Redis Cluster does, STORE to the same owner",
          "[resp][sort][cluster]") {
  TwoOwners owners;
  StoreOptions so = FewShards();
  so.replicator = &owners;
  Fixture f({}, so);
  Client c(f.port());
  REQUIRE(c.Call({"RPUSH", "a1", "3", "1", "2"}) == Int(3));
  const std::string by_err = Err("ERR BY option of SORT denied in Cluster mode.");
  const std::string get_err = Err("ERR GET option of SORT denied in Cluster mode.");
  CHECK(c.Call({"SORT", "a1"}) == Arr({Bulk("1"), Bulk("2"), Bulk("3")}));
  CHECK(c.Call({"SORT", "a1", "BY", "nosort"}) == Arr({Bulk("3"), Bulk("1"), Bulk("2")}));
  CHECK(c.Call({"SORT", "a1", "BY", "a_*"}) == by_err);
  CHECK(c.Call({"SORT", "a1", "GET", "#"}) == get_err);
  CHECK(c.Call({"SORT_RO", "a1", "GET", "a_*"}) == get_err);
  // Each option is checked as it is read, as Redis does.
  CHECK(c.Call({"SORT", "a1", "LIMIT", "x", "1", "BY", "a_*"}) == Err(
      "ERR value is not an integer or out of range"));
  CHECK(c.Call({"SORT", "a1", "BY", "a_*", "LIMIT", "x", "1"}) == by_err);
  CHECK(c.Call({"SORT", "a1", "FOO", "GET", "#"}) == Err("ERR syntax error"));
  CHECK(c.Call({"SORT", "a1", "STORE", "b1"}) ==
        Err("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(c.Call({"EXISTS", "b1"}) == Int(0));
  CHECK(c.Call({"SORT", "a1", "DESC", "STORE", "a2"}) == Int(3));
  CHECK(c.Call({"LRANGE", "a2", "0", "-1"}) == Arr({Bulk("3"), Bulk("2"), Bulk("1")}));
  // In a transaction it is refused as it is queued (the transaction is then
  // discarded), as Redis Cluster does.
  REQUIRE(c.Call({"MULTI"}) == kOk);
  CHECK(c.Call({"SORT", "a1", "STORE", "b2"}) ==
        Err("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(c.Call({"EXEC"}) ==
        Err("EXECABORT Transaction discarded because of previous errors."));
  CHECK(c.Call({"EXISTS", "b2"}) == Int(0));
  // Commands whose keys a numkeys argument counts are held to the rule
  // too, before their own argument checks.
  CHECK(c.Call({"ZUNIONSTORE", "a3", "2", "a1", "b1"}) ==
        Err("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(c.Call({"SINTERCARD", "2", "a1", "b1", "LIMIT", "-1"}) ==
        Err("CROSSSLOT Keys in request don't hash to the same slot"));
  CHECK(c.Call({"LMPOP", "2", "a1", "a2", "LEFT"}) == Arr({Bulk("a1"), Arr({Bulk("3")})}));
}

TEST_CASE("SORT .. STORE refused for memory changes nothing", "[resp][sort][oom]") {
  StoreOptions so = FewShards();
  so.memory_limit = 96 * 1024;
  Fixture f({}, so);
  Client c(f.port());
  // A source of about 50 KB: its sorted copy would pass the limit.
  std::vector<std::string> push{"RPUSH", "src"};
  for (int i = 0; i < 200; ++i) push.push_back(std::to_string(i) + std::string(200, 'v'));
  REQUIRE(c.Call(push) == Int(200));
  REQUIRE(c.Call({"SET", "dst", "old"}) == kOk);
  const std::string oom = Err("OOM command not allowed when used memory > 'maxmemory'.");
  CHECK(c.Call({"SORT", "src", "ALPHA", "STORE", "dst"}) == oom);
  CHECK(c.Call({"GET", "dst"}) == Bulk("old"));
  CHECK(c.Call({"SORT", "src", "ALPHA", "STORE", "new"}) == oom);
  CHECK(c.Call({"EXISTS", "new"}) == Int(0));
  // A smaller result fits; the reply alone needs no room in the store.
  CHECK(c.Call({"SORT", "src", "ALPHA", "LIMIT", "0", "5", "STORE", "dst"}) == Int(5));
  CHECK(c.Call({"LLEN", "dst"}) == Int(5));
  const std::string sorted = c.Call({"SORT", "src", "ALPHA"});
  CHECK(sorted.rfind("*200\r\n", 0) == 0);
}

// EXEC holds the shards of every key its commands name, a numkeys
// command's sources included.  Were ZUNIONSTORE's sources left out, each
// EXEC would hold its destination's shard and then lock its source's: two
// transactions storing into each other's source would each wait for the
// other (they did, before the sources were counted).
TEST_CASE("EXEC holds ZUNIONSTORE's sources: transactions crossing their keys finish",
          "[resp][multi]") {
  Fixture f({}, FewShards());
  const std::string za = "za", zb = ephpm_test::KeyOutside(*f.store, "zb", {za});
  Client c(f.port());
  REQUIRE(c.Call({"ZADD", za, "1", "x"}) == Int(1));
  REQUIRE(c.Call({"ZADD", zb, "2", "y"}) == Int(1));
  std::atomic<int> failures{0};
  auto run = [&](const std::string& dst, const std::string& src) {
    Client t(f.port());
    for (int i = 0; i < 300; ++i) {
      if (t.Call({"MULTI"}) != kOk ||
          t.Call({"ZUNIONSTORE", dst, "2", src, dst}) != "+QUEUED\r\n" ||
          t.Call({"EXEC"}).rfind("*1\r\n:", 0) != 0) {
        failures++;
      }
    }
  };
  std::thread one(run, za, zb);
  std::thread two(run, zb, za);
  one.join();
  two.join();
  CHECK(failures == 0);
  CHECK(c.Call({"ZCARD", za}) == Int(2));
}
