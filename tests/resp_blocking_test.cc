// The blocking commands over real loopback sockets: BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH, BZPOPMIN, BZPOPMAX and BZMPOP woken by a push (ZADD) from
// another connection or from the Store directly (as PHP writes), their
// timeout, first come first served between waiters, the requests pipelined
// behind a blocked one, a client that disconnects while blocked, and no
// blocking inside MULTI.
//
// No timing assertion: a blocked client is known to be waiting once CLIENT
// LIST shows its last command (the server registers the wait before it
// publishes that); socket timeouts are hang guards only.

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {

// The id CLIENT ID gives this connection.
std::string IdOf(Client& c) {
  const std::string r = c.Call({"CLIENT", "ID"});
  REQUIRE(r.size() > 3);
  REQUIRE(r[0] == ':');
  return r.substr(1, r.size() - 3);
}

// The CLIENT LIST line of connection `id`, "" when it is gone.
std::string ListLine(Client& observer, const std::string& id) {
  const std::string r = observer.Call({"CLIENT", "LIST"});
  const std::string needle = "id=" + id + " ";
  // Every line starts after a '\n' (the first after the bulk's header).
  size_t at = r.find(needle);
  while (at != std::string::npos && (at == 0 || r[at - 1] != '\n')) at = r.find(needle, at + 1);
  if (at == std::string::npos) return "";
  return r.substr(at, r.find('\n', at) - at);
}

// Waits (bounded by the guard) until connection `id` shows `cmd` as its
// last command: it is then blocked.  False when the guard passed.
// REQUIRES: the connection's previous command was another one.
bool WaitBlocked(Client& observer, const std::string& id, const std::string& cmd) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kGuardMs);
  while (std::chrono::steady_clock::now() < until) {
    if (ListLine(observer, id).find(" cmd=" + cmd + " ") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Waits until connection `id` is gone from CLIENT LIST.
bool WaitGone(Client& observer, const std::string& id) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kGuardMs);
  while (std::chrono::steady_clock::now() < until) {
    if (ListLine(observer, id).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace

TEST_CASE("blocking: BLPOP is woken by a push from another connection") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLPOP", "q1", "q2", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK_FALSE(a.Readable(20));
  CHECK(b.Call({"RPUSH", "q2", "x", "y"}) == Int(2));
  CHECK(a.Reply() == Arr({Bulk("q2"), Bulk("x")}));
  CHECK(b.Call({"LRANGE", "q2", "0", "-1"}) == Arr({Bulk("y")}));

  // BRPOP takes from the tail; an element already there is served at once.
  CHECK(a.Call({"BRPOP", "q2", "0"}) == Arr({Bulk("q2"), Bulk("y")}));
  CHECK(b.Call({"EXISTS", "q2"}) == Int(0));
}

TEST_CASE("blocking: the requests pipelined behind a blocked one wait for it") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"}) + Encode({"ECHO", "after"}) +
                 Encode({"LLEN", "q"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK(b.Call({"LPUSH", "q", "v1", "v2"}) == Int(2));
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("v2")}));
  CHECK(a.Reply() == Bulk("after"));
  CHECK(a.Reply() == Int(1));
}

TEST_CASE("blocking: a timeout replies a null array; a bad timeout is an error") {
  Fixture f;
  Client a(f.port());
  CHECK(a.Call({"BLPOP", "q", "0.05"}) == "*-1\r\n");
  CHECK(a.Call({"BRPOPLPUSH", "q", "d", "0.01"}) == "*-1\r\n");
  CHECK(a.Call({"BLMOVE", "q", "d", "LEFT", "RIGHT", "0.01"}) == "*-1\r\n");
  CHECK(a.Call({"BLPOP", "q", "-1"}) == Err("ERR timeout is negative"));
  CHECK(a.Call({"BLPOP", "q", "x"}) == Err("ERR timeout is not a float or out of range"));
  // The connection goes on normally.
  CHECK(a.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("blocking: two waiters on one key are served first come, first served") {
  Fixture f;
  Client first(f.port()), second(f.port()), pusher(f.port());
  const std::string id1 = IdOf(first), id2 = IdOf(second);
  REQUIRE(first.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(pusher, id1, "blpop"));
  REQUIRE(second.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(pusher, id2, "blpop"));

  CHECK(pusher.Call({"RPUSH", "q", "one"}) == Int(1));
  CHECK(first.Reply() == Arr({Bulk("q"), Bulk("one")}));
  CHECK_FALSE(second.Readable(20));
  CHECK(pusher.Call({"RPUSH", "q", "two"}) == Int(1));
  CHECK(second.Reply() == Arr({Bulk("q"), Bulk("two")}));

  // Both blocked again; one push of two elements serves them in order.
  REQUIRE(first.Send(Encode({"BRPOP", "q", "0"})));
  REQUIRE(WaitBlocked(pusher, id1, "brpop"));
  REQUIRE(second.Send(Encode({"BRPOP", "q", "0"})));
  REQUIRE(WaitBlocked(pusher, id2, "brpop"));
  CHECK(pusher.Call({"RPUSH", "q", "a", "b"}) == Int(2));
  CHECK(first.Reply() == Arr({Bulk("q"), Bulk("b")}));
  CHECK(second.Reply() == Arr({Bulk("q"), Bulk("a")}));
  CHECK(pusher.Call({"EXISTS", "q"}) == Int(0));
}

TEST_CASE("blocking: BLMOVE and BRPOPLPUSH move what a push brings") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blmove"));
  CHECK(b.Call({"RPUSH", "dst", "old"}) == Int(1));
  CHECK(b.Call({"RPUSH", "src", "v"}) == Int(1));
  CHECK(a.Reply() == Bulk("v"));
  CHECK(b.Call({"LRANGE", "dst", "0", "-1"}) == Arr({Bulk("old"), Bulk("v")}));
  CHECK(b.Call({"EXISTS", "src"}) == Int(0));

  REQUIRE(a.Send(Encode({"BRPOPLPUSH", "src", "dst", "0"})));
  REQUIRE(WaitBlocked(b, ida, "brpoplpush"));
  CHECK(b.Call({"LPUSH", "src", "w"}) == Int(1));
  CHECK(a.Reply() == Bulk("w"));
  CHECK(b.Call({"LRANGE", "dst", "0", "-1"}) == Arr({Bulk("w"), Bulk("old"), Bulk("v")}));
}

TEST_CASE("blocking: a push made on the Store directly (as PHP does) wakes a waiter") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  int64_t n = 0;
  REQUIRE(f.store->ListPush("q", {"from-php"}, false, false, &n) == ephpm::Status::kOk);
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("from-php")}));
}

TEST_CASE("blocking: a client that disconnects while blocked takes nothing") {
  Fixture f;
  Client b(f.port());
  std::string ida;
  {
    Client a(f.port());
    ida = IdOf(a);
    REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
    REQUIRE(WaitBlocked(b, ida, "blpop"));
  }  // closed while blocked
  REQUIRE(WaitGone(b, ida));
  CHECK(b.Call({"RPUSH", "q", "kept"}) == Int(1));
  CHECK(b.Call({"LRANGE", "q", "0", "-1"}) == Arr({Bulk("kept")}));

  // A waiter that came after the one that left is still served.
  Client c(f.port());
  const std::string idc = IdOf(c);
  REQUIRE(c.Send(Encode({"BLPOP", "q2", "0"})));
  REQUIRE(WaitBlocked(b, idc, "blpop"));
  CHECK(b.Call({"RPUSH", "q2", "v"}) == Int(1));
  CHECK(c.Reply() == Arr({Bulk("q2"), Bulk("v")}));
}

TEST_CASE("blocking: WRONGTYPE at once; a key that turns into a list later serves") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  CHECK(b.Call({"SET", "s", "v"}) == kOk);
  CHECK(a.Call({"BLPOP", "s", "0"}) ==
        Err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  // Another command between, so that WaitBlocked sees the next BLPOP.
  CHECK(a.Call({"PING"}) == "+PONG\r\n");
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK(b.Call({"SET", "q", "string"}) == kOk);  // not a list: still blocked
  CHECK_FALSE(a.Readable(20));
  CHECK(b.Call({"DEL", "q"}) == Int(1));
  CHECK(b.Call({"RPUSH", "q", "x"}) == Int(1));
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("x")}));
}

TEST_CASE("blocking: BLMOVE onto a destination turned into a string answers WRONGTYPE") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLMOVE", "src", "dst", "LEFT", "LEFT", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blmove"));
  CHECK(b.Call({"SET", "dst", "str"}) == kOk);
  CHECK(b.Call({"RPUSH", "src", "x"}) == Int(1));
  CHECK(a.Reply() == Err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(b.Call({"LRANGE", "src", "0", "-1"}) == Arr({Bulk("x")}));  // nothing popped
  CHECK(a.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("blocking: many blocked clients share a stream of pushes, each element once") {
  Fixture f;
  constexpr int kClients = 4;
  constexpr int kEach = 50;
  // Each client pops kEach elements with BLPOP/BRPOP in turn; the pusher
  // pushes them all, one by one.  Each client records its replies; the
  // checks run once every thread is done.
  std::vector<std::vector<std::string>> got(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&f, &got, i] {
      Client c(f.port());
      for (int k = 0; k < kEach; ++k) {
        got[static_cast<size_t>(i)].push_back(
            c.Call({k % 2 == 0 ? "BLPOP" : "BRPOP", "other", "q", "0"}));
      }
    });
  }
  Client pusher(f.port());
  std::vector<std::string> expected;
  for (int k = 0; k < kClients * kEach; ++k) {
    const std::string v = "e" + std::to_string(k);
    CHECK(pusher.Call({"RPUSH", "q", v}).substr(0, 1) == ":");
    expected.push_back(Arr({Bulk("q"), Bulk(v)}));
  }
  for (auto& t : clients) t.join();
  std::vector<std::string> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  std::sort(all.begin(), all.end());
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
  CHECK(pusher.Call({"EXISTS", "q"}) == Int(0));
}

TEST_CASE("blocking: the idle timeout does not close a blocked client (as Redis)") {
  RespServerOptions o;
  o.idle_timeout_seconds = 1;
  Fixture f(o);
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  // Past the idle timeout (b stays active meanwhile).
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    REQUIRE(b.Call({"PING"}) == "+PONG\r\n");
  }
  CHECK(b.Call({"RPUSH", "q", "x"}) == Int(1));
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("x")}));
}

// ---- the sorted set ones: BZPOPMIN, BZPOPMAX, BZMPOP ---------------------

TEST_CASE("blocking: BZPOPMIN and BZPOPMAX are woken by a ZADD from another connection") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BZPOPMIN", "z1", "z2", "0"})));
  REQUIRE(WaitBlocked(b, ida, "bzpopmin"));
  CHECK_FALSE(a.Readable(20));
  CHECK(b.Call({"ZADD", "z2", "2", "y", "1", "x", "3", "z"}) == Int(3));
  CHECK(a.Reply() == Arr({Bulk("z2"), Bulk("x"), Bulk("1")}));
  CHECK(b.Call({"ZRANGE", "z2", "0", "-1"}) == Arr({Bulk("y"), Bulk("z")}));

  // A member already there is served at once; the highest with BZPOPMAX.
  CHECK(a.Call({"BZPOPMAX", "z1", "z2", "0"}) == Arr({Bulk("z2"), Bulk("z"), Bulk("3")}));

  REQUIRE(a.Send(Encode({"BZPOPMAX", "z1", "0"})));
  REQUIRE(WaitBlocked(b, ida, "bzpopmax"));
  CHECK(b.Call({"ZADD", "z1", "1.5", "m", "-inf", "n"}) == Int(2));
  CHECK(a.Reply() == Arr({Bulk("z1"), Bulk("m"), Bulk("1.5")}));
  CHECK(b.Call({"ZRANGE", "z1", "0", "-1", "WITHSCORES"}) == Arr({Bulk("n"), Bulk("-inf")}));
}

TEST_CASE("blocking: BZMPOP is woken by a ZADD and pops up to COUNT members") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BZMPOP", "0", "2", "z1", "z2", "MAX", "COUNT", "2"})));
  REQUIRE(WaitBlocked(b, ida, "bzmpop"));
  CHECK(b.Call({"ZADD", "z2", "1", "a", "2", "b", "3", "c"}) == Int(3));
  CHECK(a.Reply() ==
        Arr({Bulk("z2"), Arr({Arr({Bulk("c"), Bulk("3")}), Arr({Bulk("b"), Bulk("2")})})}));
  // Fewer members than COUNT: all of them, and the key goes.
  CHECK(a.Call({"BZMPOP", "0", "1", "z2", "MIN", "COUNT", "10"}) ==
        Arr({Bulk("z2"), Arr({Arr({Bulk("a"), Bulk("1")})})}));
  CHECK(b.Call({"EXISTS", "z2"}) == Int(0));
}

TEST_CASE("blocking: a ZADD made on the Store directly (as PHP does) wakes BZPOPMIN") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BZPOPMIN", "z", "0"})));
  REQUIRE(WaitBlocked(b, ida, "bzpopmin"));
  int64_t n = 0;
  REQUIRE(f.store->ZAdd("z", {{4.5, "from-php"}}, 0, &n) == ephpm::Status::kOk);
  CHECK(a.Reply() == Arr({Bulk("z"), Bulk("from-php"), Bulk("4.5")}));
}

TEST_CASE("blocking: sorted set waiters are served first come, first served") {
  Fixture f;
  Client first(f.port()), second(f.port()), third(f.port()), adder(f.port());
  const std::string id1 = IdOf(first), id2 = IdOf(second), id3 = IdOf(third);
  REQUIRE(first.Send(Encode({"BZPOPMIN", "z", "0"})));
  REQUIRE(WaitBlocked(adder, id1, "bzpopmin"));
  REQUIRE(second.Send(Encode({"BZMPOP", "0", "1", "z", "MIN", "COUNT", "2"})));
  REQUIRE(WaitBlocked(adder, id2, "bzmpop"));
  REQUIRE(third.Send(Encode({"BZPOPMAX", "z", "0"})));
  REQUIRE(WaitBlocked(adder, id3, "bzpopmax"));

  CHECK(adder.Call({"ZADD", "z", "1", "a"}) == Int(1));
  CHECK(first.Reply() == Arr({Bulk("z"), Bulk("a"), Bulk("1")}));
  CHECK_FALSE(second.Readable(20));
  CHECK_FALSE(third.Readable(20));
  // One ZADD of four members: the second takes two, the third the highest.
  CHECK(adder.Call({"ZADD", "z", "1", "b", "2", "c", "3", "d", "4", "e"}) == Int(4));
  CHECK(second.Reply() ==
        Arr({Bulk("z"), Arr({Arr({Bulk("b"), Bulk("1")}), Arr({Bulk("c"), Bulk("2")})})}));
  CHECK(third.Reply() == Arr({Bulk("z"), Bulk("e"), Bulk("4")}));
  CHECK(adder.Call({"ZRANGE", "z", "0", "-1"}) == Arr({Bulk("d")}));
}

TEST_CASE("blocking: BZPOPMIN and BZMPOP time out with a null array; bad input is an error") {
  Fixture f;
  Client a(f.port());
  CHECK(a.Call({"BZPOPMIN", "z", "0.05"}) == "*-1\r\n");
  CHECK(a.Call({"BZPOPMAX", "z", "y", "0.01"}) == "*-1\r\n");
  CHECK(a.Call({"BZMPOP", "0.01", "2", "z", "y", "MIN"}) == "*-1\r\n");
  CHECK(a.Call({"BZPOPMIN", "z", "-1"}) == Err("ERR timeout is negative"));
  CHECK(a.Call({"BZMPOP", "x", "1", "z", "MIN"}) ==
        Err("ERR timeout is not a float or out of range"));
  CHECK(a.Call({"BZMPOP", "0", "0", "z", "MIN"}) == Err("ERR numkeys should be greater than 0"));
  CHECK(a.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("blocking: a client that disconnects in BZPOPMIN takes nothing") {
  Fixture f;
  Client b(f.port());
  std::string ida;
  {
    Client a(f.port());
    ida = IdOf(a);
    REQUIRE(a.Send(Encode({"BZPOPMIN", "z", "0"})));
    REQUIRE(WaitBlocked(b, ida, "bzpopmin"));
  }  // closed while blocked
  REQUIRE(WaitGone(b, ida));
  CHECK(b.Call({"ZADD", "z", "1", "kept"}) == Int(1));
  CHECK(b.Call({"ZRANGE", "z", "0", "-1"}) == Arr({Bulk("kept")}));

  Client c(f.port());
  const std::string idc = IdOf(c);
  REQUIRE(c.Send(Encode({"BZMPOP", "0", "1", "z2", "MAX"})));
  REQUIRE(WaitBlocked(b, idc, "bzmpop"));
  CHECK(b.Call({"ZADD", "z2", "1", "v"}) == Int(1));
  CHECK(c.Reply() == Arr({Bulk("z2"), Arr({Arr({Bulk("v"), Bulk("1")})})}));
}

TEST_CASE("blocking: a blocked BZPOPMIN passes over a key of another type") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  CHECK(b.Call({"SET", "s", "v"}) == kOk);
  CHECK(a.Call({"BZPOPMIN", "s", "0"}) ==
        Err("WRONGTYPE Operation against a key holding the wrong kind of value"));
  CHECK(a.Call({"PING"}) == "+PONG\r\n");
  REQUIRE(a.Send(Encode({"BZPOPMIN", "z", "0"})));
  REQUIRE(WaitBlocked(b, ida, "bzpopmin"));
  CHECK(b.Call({"SADD", "z", "m"}) == Int(1));  // a set: still blocked
  CHECK_FALSE(a.Readable(20));
  CHECK(b.Call({"DEL", "z"}) == Int(1));
  CHECK(b.Call({"ZADD", "z", "2", "m"}) == Int(1));
  CHECK(a.Reply() == Arr({Bulk("z"), Bulk("m"), Bulk("2")}));
}

TEST_CASE("blocking: inside MULTI, BZPOPMIN and BZMPOP do not block") {
  Fixture f;
  Client a(f.port());
  CHECK(a.Call({"ZADD", "z", "1", "a"}) == Int(1));
  CHECK(a.Call({"MULTI"}) == kOk);
  CHECK(a.Call({"BZPOPMIN", "z", "0"}) == "+QUEUED\r\n");
  CHECK(a.Call({"BZPOPMAX", "z", "0"}) == "+QUEUED\r\n");
  CHECK(a.Call({"BZMPOP", "0", "1", "z", "MIN"}) == "+QUEUED\r\n");
  CHECK(a.Call({"ZADD", "z", "2", "b"}) == "+QUEUED\r\n");
  CHECK(a.Call({"BZMPOP", "0", "1", "z", "MIN"}) == "+QUEUED\r\n");
  CHECK(a.Call({"EXEC"}) == Arr({Arr({Bulk("z"), Bulk("a"), Bulk("1")}), "*-1\r\n", "*-1\r\n",
                                 Int(1), Arr({Bulk("z"), Arr({Arr({Bulk("b"), Bulk("2")})})})}));
}

TEST_CASE("blocking: BLMPOP is woken by a push and pops up to COUNT elements") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  REQUIRE(a.Send(Encode({"BLMPOP", "0", "2", "l1", "l2", "RIGHT", "COUNT", "2"})));
  REQUIRE(WaitBlocked(b, ida, "blmpop"));
  CHECK_FALSE(a.Readable(20));
  CHECK(b.Call({"RPUSH", "l2", "x", "y", "z"}) == Int(3));
  CHECK(a.Reply() == Arr({Bulk("l2"), Arr({Bulk("z"), Bulk("y")})}));
  CHECK(a.Call({"BLMPOP", "0", "1", "l2", "LEFT", "COUNT", "9"}) ==
        Arr({Bulk("l2"), Arr({Bulk("x")})}));
  CHECK(b.Call({"EXISTS", "l2"}) == Int(0));
  CHECK(a.Call({"BLMPOP", "0.01", "1", "l2", "LEFT"}) == "*-1\r\n");
  // First come, first served with a BLPOP on the same key.
  Client c(f.port());
  const std::string idc = IdOf(c);
  REQUIRE(a.Send(Encode({"BLPOP", "l3", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  REQUIRE(c.Send(Encode({"BLMPOP", "0", "1", "l3", "LEFT", "COUNT", "5"})));
  REQUIRE(WaitBlocked(b, idc, "blmpop"));
  CHECK(b.Call({"RPUSH", "l3", "1", "2", "3"}) == Int(3));
  CHECK(a.Reply() == Arr({Bulk("l3"), Bulk("1")}));
  CHECK(c.Reply() == Arr({Bulk("l3"), Arr({Bulk("2"), Bulk("3")})}));
}

TEST_CASE("blocking: many BZPOPMIN/BZMPOP clients share a stream of ZADDs, each member once") {
  Fixture f;
  constexpr int kClients = 4;
  constexpr int kEach = 30;
  // Each client pops kEach members, one at a time, with BZPOPMIN and
  // BZMPOP in turn; the adder adds them all, one by one.  The replies are
  // recorded and checked once every thread is done.
  std::vector<std::vector<std::string>> got(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&f, &got, i] {
      Client c(f.port());
      for (int k = 0; k < kEach; ++k) {
        const std::string r = k % 2 == 0 ? c.Call({"BZPOPMIN", "other", "z", "0"})
                                         : c.Call({"BZMPOP", "0", "2", "other", "z", "MIN"});
        got[static_cast<size_t>(i)].push_back(r);
      }
    });
  }
  Client adder(f.port());
  std::vector<std::string> members;
  for (int k = 0; k < kClients * kEach; ++k) {
    const std::string m = "m" + std::to_string(k);
    CHECK(adder.Call({"ZADD", "z", std::to_string(k), m}).substr(0, 1) == ":");
    members.push_back(m);
  }
  for (auto& t : clients) t.join();
  // Every member popped exactly once, whichever reply shape carried it.
  std::vector<std::string> popped;
  for (const auto& g : got) {
    for (const std::string& r : g) {
      for (const std::string& m : members) {
        if (r.find("$" + std::to_string(m.size()) + "\r\n" + m + "\r\n") != std::string::npos) {
          popped.push_back(m);
        }
      }
    }
  }
  std::sort(popped.begin(), popped.end());
  std::sort(members.begin(), members.end());
  CHECK(popped == members);
  CHECK(adder.Call({"EXISTS", "z"}) == Int(0));
}

TEST_CASE("blocking: a waiter is served in the database it SELECTed, by pushes there only; "
          "INFO counts it") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  // An element already there, in database 9: served at once, from 9.
  CHECK(b.Call({"SELECT", "9"}) == kOk);
  CHECK(b.Call({"RPUSH", "q", "in9"}) == Int(1));
  CHECK(a.Call({"SELECT", "9"}) == kOk);
  CHECK(a.Call({"BLPOP", "q", "0"}) == Arr({Bulk("q"), Bulk("in9")}));
  CHECK(a.Call({"ZADD", "z", "1", "m9"}) == Int(1));
  CHECK(a.Call({"BZPOPMIN", "z", "0"}) == Arr({Bulk("z"), Bulk("m9"), Bulk("1")}));

  // Blocked in 9: a push to the same name in database 0 is not for it (nor
  // one made on the Store directly, which is database 0, as PHP's).
  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK(b.Call({"INFO", "clients"}).find("\r\nblocked_clients:1\r\n") != std::string::npos);
  CHECK(b.Call({"SELECT", "0"}) == kOk);
  CHECK(b.Call({"RPUSH", "q", "in0"}) == Int(1));
  int64_t pushed = 0;
  REQUIRE(f.store->ListPush("q", {"php0"}, false, false, &pushed) == ephpm::Status::kOk);
  CHECK_FALSE(a.Readable(150));  // (past the server's 100 ms re-poll of PHP pushes)
  CHECK(b.Call({"SELECT", "9"}) == kOk);
  CHECK(b.Call({"RPUSH", "q", "later9"}) == Int(1));
  CHECK(a.Reply() == Arr({Bulk("q"), Bulk("later9")}));
  CHECK(b.Call({"INFO", "clients"}).find("\r\nblocked_clients:0\r\n") != std::string::npos);
  CHECK(b.Call({"SELECT", "0"}) == kOk);
  CHECK(b.Call({"LRANGE", "q", "0", "-1"}) == Arr({Bulk("in0"), Bulk("php0")}));

  // BLMOVE moves within the waiter's database.
  CHECK(b.Call({"SELECT", "9"}) == kOk);
  REQUIRE(a.Send(Encode({"BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blmove"));
  CHECK(b.Call({"RPUSH", "src", "x"}) == Int(1));
  CHECK(a.Reply() == Bulk("x"));
  CHECK(b.Call({"LRANGE", "dst", "0", "-1"}) == Arr({Bulk("x")}));
  CHECK(b.Call({"SELECT", "0"}) == kOk);
  CHECK(b.Call({"EXISTS", "dst"}) == Int(0));
}

TEST_CASE("blocking: CLIENT UNBLOCK ends a wait as its timeout would, or with UNBLOCKED") {
  Fixture f;
  Client a(f.port()), b(f.port());
  const std::string ida = IdOf(a);
  // Not blocked: 0, and the client is untouched.
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida}) == Int(0));
  CHECK(b.Call({"CLIENT", "UNBLOCK", "999999"}) == Int(0));
  CHECK(b.Call({"CLIENT", "UNBLOCK", "-1"}) == Int(0));

  REQUIRE(a.Send(Encode({"BLPOP", "q", "0"})));
  REQUIRE(WaitBlocked(b, ida, "blpop"));
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida}) == Int(1));
  CHECK(a.Reply() == "*-1\r\n");
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida}) == Int(0));
  // The waiter is gone: a push stays in the list.
  CHECK(b.Call({"RPUSH", "q", "x"}) == Int(1));
  CHECK(b.Call({"LLEN", "q"}) == Int(1));
  CHECK(b.Call({"DEL", "q"}) == Int(1));

  REQUIRE(a.Send(Encode({"BZPOPMIN", "z", "0"})));
  REQUIRE(WaitBlocked(b, ida, "bzpopmin"));
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida, "error"}) == Int(1));
  CHECK(a.Reply() == "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
  CHECK(a.Call({"PING"}) == "+PONG\r\n");

  // Requests pipelined behind the blocked one run once it is unblocked.
  REQUIRE(a.Send(Encode({"BLMOVE", "s", "d", "LEFT", "LEFT", "0"}) + Encode({"ECHO", "after"})));
  REQUIRE(WaitBlocked(b, ida, "blmove"));
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida, "TIMEOUT"}) == Int(1));
  CHECK(a.Reply() == "*-1\r\n");  // (Redis 7.0: a null array for every blocked type)
  CHECK(a.Reply() == Bulk("after"));
  CHECK(b.Call({"INFO", "clients"}).find("\r\nblocked_clients:0\r\n") != std::string::npos);

  // Bad input.
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida, "nope"}) ==
        "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n");
  CHECK(b.Call({"CLIENT", "UNBLOCK", "x"}) ==
        "-ERR value is not an integer or out of range\r\n");
  CHECK(b.Call({"CLIENT", "UNBLOCK", ida, "error", "more"}) ==
        "-ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.\r\n");
}
