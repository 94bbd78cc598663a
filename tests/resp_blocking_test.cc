// The blocking list commands over real loopback sockets: BLPOP, BRPOP,
// BLMOVE and BRPOPLPUSH woken by a push from another connection or from the
// Store directly (as PHP writes), their timeout, first come first served
// between two waiters, the requests pipelined behind a blocked one, and a
// client that disconnects while blocked.
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
