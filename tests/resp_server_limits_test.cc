// The RESP server in this process, continued from resp_server_test.cc: the
// limits, AUTH, the lock scenario on a manual clock, many concurrent clients
// and starting and stopping the server.
//
// Assertions run on the main thread only; helper threads record what they
// saw.  Socket timeouts are guards against a hang, never assertions.

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

// ---------------------------------------------------------------------------
// Limits

TEST_CASE("server: bulk over max_bulk_len and oversized multibulk counts") {
  RespServerOptions o;
  o.max_bulk_len = 4096;
  Fixture f(o);
  {
    Client c(f.port());
    CHECK(c.Call({"SET", "k", std::string(4096, 'a')}) == kOk);
    REQUIRE(c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4097\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("invalid bulk length"));
    CHECK(closed);
  }
  {
    Client c(f.port());
    REQUIRE(c.Send("*4294967296\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("invalid multibulk length"));
    CHECK(closed);
  }
  {
    // A huge count that is allowed reserves nothing up front: the client
    // gets no reply until it sends the arguments, and then an error for a
    // bad one.
    Client c(f.port());
    REQUIRE(c.Send("*1000000000\r\n"));
    CHECK_FALSE(c.Readable(20));
    REQUIRE(c.Send("$3\r\nGET\r\n$1\r\nk\r\n:1\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("expected '$', got ':'"));
    CHECK(closed);
  }
}

TEST_CASE("server: a client whose unparsed input passes max_query_buffer is dropped") {
  RespServerOptions o;
  o.max_query_buffer = 1 << 20;   // 1 MiB
  o.max_bulk_len = 512ull << 20;  // the bulk itself is allowed
  Fixture f(o);
  SECTION("one large bulk arriving in pieces") {
    Client c(f.port());
    REQUIRE(c.Send("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$100000000\r\n"));
    // Stream up to 64 MiB of payload; the server must cut the client off
    // long before (the kernel buffers hold a few MiB at most), holding no
    // more than about the limit meanwhile.
    const std::string piece(64 * 1024, 'p');
    size_t sent = 0;
    bool failed = false;
    while (sent < (64u << 20)) {
      if (!c.Send(piece)) {
        failed = true;
        break;
      }
      sent += piece.size();
    }
    CHECK(failed);
    CHECK(sent < (32u << 20));
    CHECK(c.WaitClosed());
  }
  SECTION("many arguments of a request in progress") {
    Client c(f.port());
    std::string req = "*100000\r\n$3\r\nDEL\r\n";
    const std::string arg = Bulk(std::string(1000, 'a'));
    for (int i = 0; i < 2000; ++i) req += arg;  // ~2 MiB of arguments, request unfinished
    // The send may fail part way: the server drops the client.
    c.Send(req);
    bool closed = false;
    CHECK(c.ReadToClose(&closed).empty());  // dropped without a reply, as Redis does
    CHECK(closed);
  }
  // Still serving.
  Client ok(f.port());
  CHECK(ok.Call({"EXISTS", "big"}) == Int(0));
}

TEST_CASE("server: a client that does not read its big replies passes max_output_buffer") {
  RespServerOptions o;
  o.max_output_buffer = 1 << 20;  // 1 MiB
  Fixture f(o);
  const std::string value(100 * 1024, 'b');
  {
    Client setup(f.port());
    REQUIRE(setup.Call({"SET", "big", value}) == kOk);
  }
  // Small client buffers so that the kernel soon stops taking replies.  The
  // requests go in small batches, each answered below the limit, and each
  // batch only once the server has run the previous one (a watcher sees
  // its INCR), so that only replies piling up across batches pass it.
  Client c(f.port(), /*rcvbuf=*/4096, /*sndbuf=*/4096);
  Client watcher(f.port());
  std::string batch;
  for (int i = 0; i < 4; ++i) batch += Encode({"GET", "big"});  // 400 KiB of replies
  batch += Encode({"INCR", "seq"});
  // The server closing its end does not show here at once: the replies the
  // kernel already took are delivered first.  So ask the server.
  auto hung_up = [&watcher] {
    return watcher.Call({"INFO", "clients"}).find("connected_clients:1\r\n") != std::string::npos;
  };
  bool dropped = false, stuck = false;
  int batches = 0;
  while (!dropped && !stuck && batches < 500) {  // 200 MiB of replies if never dropped
    if (!c.Send(batch)) {
      dropped = true;
      break;
    }
    ++batches;
    stuck = true;
    for (int spin = 0; spin < 2000; ++spin) {  // the guard: a few seconds
      if (watcher.Call({"GET", "seq"}) == Bulk(std::to_string(batches))) {
        stuck = false;
        break;
      }
      if (hung_up()) {
        dropped = true;
        stuck = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  INFO("batches sent: " << batches);
  CHECK_FALSE(stuck);  // the server stopped reading instead of dropping the client
  CHECK(dropped);
  // What arrived before the close is far less than was asked for.
  bool closed = false;
  const std::string got = c.ReadToClose(&closed);
  CHECK(closed);
  CHECK(got.size() < static_cast<size_t>(batches) * 4 * value.size());
  CHECK(watcher.Call({"STRLEN", "big"}) == Int(static_cast<long long>(value.size())));
}

TEST_CASE("server: max_clients refuses the extra connection") {
  RespServerOptions o;
  o.max_clients = 2;
  Fixture f(o);
  auto a = std::make_unique<Client>(f.port());
  Client b(f.port());
  CHECK(a->Call({"PING"}) == "+PONG\r\n");
  CHECK(b.Call({"PING"}) == "+PONG\r\n");
  {
    Client extra(f.port());
    bool closed = false;
    CHECK(extra.ReadToClose(&closed) == Err("ERR max number of clients reached"));
    CHECK(closed);
  }
  CHECK(b.Call({"PING"}) == "+PONG\r\n");
  // A slot frees once a client leaves (the count drops when its session
  // ends, which can take a moment).
  a.reset();
  std::string reply;
  for (int i = 0; i < 500 && reply != "+PONG\r\n"; ++i) {
    Client again(f.port());
    reply = again.Call({"PING"});
    if (reply != "+PONG\r\n") std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(reply == "+PONG\r\n");
  const std::string info = b.Call({"INFO", "stats"});
  CHECK(info.find("rejected_connections:") != std::string::npos);
  CHECK(info.find("rejected_connections:0\r\n") == std::string::npos);
}

TEST_CASE("server: the idle timeout closes an idle client, not an active one") {
  RespServerOptions o;
  o.idle_timeout_seconds = 1;
  Fixture f(o);
  Client idle(f.port());
  Client active(f.port());
  CHECK(idle.Call({"PING"}) == "+PONG\r\n");
  bool active_ok = true;
  bool idle_closed = false;
  // Keep one client busy until the other is closed (the guard: 10 s).
  for (int i = 0; i < 1000 && !idle_closed; ++i) {
    if (active.Call({"PING"}) != "+PONG\r\n") active_ok = false;
    idle_closed = idle.WaitClosed(10);
  }
  CHECK(idle_closed);
  CHECK(active_ok);
  CHECK(active.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("server: CONFIG SET changes the client limits of a running server") {
  Fixture f;
  SECTION("maxclients") {
    Client admin(f.port());
    CHECK(admin.Call({"CONFIG", "SET", "maxclients", "2"}) == kOk);
    Client second(f.port());
    CHECK(second.Call({"PING"}) == "+PONG\r\n");
    {
      Client extra(f.port());
      bool closed = false;
      CHECK(extra.ReadToClose(&closed) == Err("ERR max number of clients reached"));
      CHECK(closed);
    }
    CHECK(admin.Call({"CONFIG", "SET", "maxclients", "3"}) == kOk);
    // The refused client's slot is given back once its session ends.
    std::string reply;
    for (int i = 0; i < 500 && reply != "+PONG\r\n"; ++i) {
      Client third(f.port());
      reply = third.Call({"PING"});
      if (reply != "+PONG\r\n") std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(reply == "+PONG\r\n");
  }
  SECTION("timeout: a client already idle past the new limit is closed; 0 turns it off") {
    Client idle(f.port());
    REQUIRE(idle.Call({"PING"}) == "+PONG\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    {
      Client admin(f.port());
      CHECK(admin.Call({"CONFIG", "SET", "timeout", "1"}) == kOk);
    }
    CHECK(idle.WaitClosed(5000));
    // A countdown already running is called off by timeout 0.
    Client kept(f.port());
    REQUIRE(kept.Call({"PING"}) == "+PONG\r\n");
    {
      Client admin(f.port());
      CHECK(admin.Call({"CONFIG", "SET", "timeout", "0"}) == kOk);
    }
    CHECK_FALSE(kept.WaitClosed(2000));
    CHECK(kept.Call({"PING"}) == "+PONG\r\n");
  }
  SECTION("proto-max-bulk-len, on a connection opened before the change") {
    Client c(f.port());
    CHECK(c.Call({"CONFIG", "SET", "proto-max-bulk-len", "1mb"}) == kOk);
    CHECK(c.Call({"SET", "k", std::string(1 << 20, 'a')}) == kOk);
    REQUIRE(c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("invalid bulk length"));
    CHECK(closed);
    Client after(f.port());
    CHECK(after.Call({"STRLEN", "k"}) == Int(1 << 20));
    CHECK(after.Call({"CONFIG", "SET", "proto-max-bulk-len", "1000"}) ==
          Err("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - "
              "argument must be between 1048576 and 9223372036854775807 inclusive"));
  }
  SECTION("client-query-buffer-limit, on a connection opened before the change") {
    Client c(f.port());
    CHECK(c.Call({"CONFIG", "SET", "client-query-buffer-limit", "1mb"}) == kOk);
    std::string req = "*100000\r\n$3\r\nDEL\r\n";
    const std::string arg = Bulk(std::string(1000, 'a'));
    for (int i = 0; i < 2000; ++i) req += arg;  // ~2 MiB of arguments, request unfinished
    c.Send(req);  // may fail part way: the server drops the client
    bool closed = false;
    CHECK(c.ReadToClose(&closed).empty());
    CHECK(closed);
    Client after(f.port());
    CHECK(after.Call({"PING"}) == "+PONG\r\n");
  }
}

// ---------------------------------------------------------------------------
// AUTH

TEST_CASE("server: AUTH with a password") {
  RespServerOptions o;
  o.password = "s3cret";
  Fixture f(o);
  const std::string noauth = Err("NOAUTH Authentication required.");
  const std::string wrongpass =
      Err("WRONGPASS invalid username-password pair or user is disabled.");
  {
    Client c(f.port());
    CHECK(c.Call({"GET", "k"}) == noauth);
    CHECK(c.Call({"PING"}) == noauth);
    CHECK(c.Call({"SET", "k", "v"}) == noauth);
    CHECK(c.Call({"GET"}) == Arity("get"));  // arity is checked first, as in Redis
    CHECK(c.Call({"AUTH", "wrong"}) == wrongpass);
    CHECK(c.Call({"AUTH", "default", "wrong"}) == wrongpass);
    CHECK(c.Call({"AUTH", "admin", "s3cret"}) == wrongpass);
    CHECK(c.Call({"HELLO", "2"}) ==
          Err("NOAUTH HELLO must be called with the client already authenticated, otherwise "
              "the HELLO AUTH <user> <pass> option can be used to authenticate the "
              "client and select the RESP protocol version at the same time"));
    CHECK(c.Call({"AUTH", "s3cret"}) == kOk);
    CHECK(c.Call({"SET", "k", "v"}) == kOk);
    CHECK(c.Call({"GET", "k"}) == Bulk("v"));
    // After AUTH the full frame limits apply.
    std::vector<std::string> mset = {"MSET"};
    for (int i = 0; i < 10; ++i) {
      mset.push_back("m" + std::to_string(i));
      mset.push_back(std::string(20000, 'x'));
    }
    CHECK(c.Call(mset) == kOk);
  }
  {
    Client c(f.port());
    CHECK(c.Call({"AUTH", "default", "s3cret"}) == kOk);
    CHECK(c.Call({"GET", "k"}) == Bulk("v"));
  }
  {
    Client c(f.port());
    CHECK(c.Call({"HELLO", "2", "AUTH", "default", "nope"}) == wrongpass);
    CHECK(c.Call({"HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "app"}) ==
          Arr({Bulk("server"), Bulk("redis"), Bulk("version"), Bulk("7.0.15"), Bulk("proto"),
               Int(2), Bulk("id"), Int(3), Bulk("mode"), Bulk("standalone"), Bulk("role"),
               Bulk("master"), Bulk("modules"), "*0\r\n"}));
    CHECK(c.Call({"CLIENT", "GETNAME"}) == Bulk("app"));
    CHECK(c.Call({"GET", "k"}) == Bulk("v"));
  }
  {
    Client c(f.port());
    CHECK(c.Call({"QUIT"}) == kOk);  // no AUTH needed to leave
    CHECK(c.WaitClosed());
  }
  {
    // Up to 10 arguments are fine before AUTH; 11 are not.
    Client c(f.port());
    CHECK(c.Call({"ECHO", "a", "b", "c", "d", "e", "f", "g", "h", "i"}) == Arity("echo"));
    REQUIRE(c.Send("*11\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("unauthenticated multibulk length"));
    CHECK(closed);
  }
  {
    Client c(f.port());
    CHECK(c.Call({"AUTH", std::string(16384, 'p')}) == wrongpass);
    REQUIRE(c.Send("*2\r\n$4\r\nAUTH\r\n$16385\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("unauthenticated bulk length"));
    CHECK(closed);
  }
  {
    // The limits lift with AUTH in the same pipeline.
    Client c(f.port());
    REQUIRE(c.Send(Encode({"AUTH", "s3cret"}) + Encode({"ECHO", std::string(20000, 'e')})));
    CHECK(c.Reply() == kOk);
    CHECK(c.Reply() == Bulk(std::string(20000, 'e')));
  }
}

// ---------------------------------------------------------------------------
// The design note's lock scenario, time moved by hand

namespace {

// A acquires with a 1 s TTL, stalls 1.2 s, B acquires, A releases with
// `release`, C tries; returns C's reply and the holder.
std::pair<std::string, std::string> LockScenario(Fixture& f, const std::string& release,
                                                 std::string* release_reply) {
  Client a(f.port()), b(f.port()), c(f.port());
  const auto acquire_a = a.Call({"SET", "lock", "a", "NX", "PX", "1000"});
  f.clock.Advance(1200);
  const auto acquire_b = b.Call({"SET", "lock", "B", "NX", "PX", "30000"});
  if (acquire_a != kOk || acquire_b != kOk) return {"setup failed", acquire_a + acquire_b};
  *release_reply =
      release == "DELIFEQ" ? a.Call({"DELIFEQ", "lock", "a"}) : a.Call({"DEL", "lock"});
  const auto acquire_c = c.Call({"SET", "lock", "c", "NX", "PX", "30000"});
  return {acquire_c, c.Call({"GET", "lock"})};
}

}  // namespace

TEST_CASE("server: lock released with DELIFEQ keeps the new holder's lock") {
  Fixture f;
  std::string released;
  const auto [c_reply, holder] = LockScenario(f, "DELIFEQ", &released);
  CHECK(released == Int(0));
  CHECK(c_reply == kNil);
  CHECK(holder == Bulk("B"));
  Client x(f.port());
  CHECK(x.Call({"PTTL", "lock"}) == Int(30000));
}

TEST_CASE("server: lock released with plain DEL destroys the new holder's lock") {
  Fixture f;
  std::string released;
  const auto [c_reply, holder] = LockScenario(f, "DEL", &released);
  CHECK(released == Int(1));  // A deleted B's lock
  CHECK(c_reply == kOk);      // so C got it while B thinks it holds it
  CHECK(holder == Bulk("c"));
}

// ---------------------------------------------------------------------------
// Concurrency

TEST_CASE("server: I/O threads, one fewer than the cores by default, shown by CONFIG GET") {
  // At least one, and a core left to the clients and the rest of the host.
  CHECK(DefaultIoThreads(0) == 1);  // hardware_concurrency() could not tell
  CHECK(DefaultIoThreads(1) == 1);
  CHECK(DefaultIoThreads(2) == 1);
  CHECK(DefaultIoThreads(3) == 2);
  CHECK(DefaultIoThreads(4) == 3);
  CHECK(DefaultIoThreads(64) == 63);
  SECTION("the default, on this machine") {
    std::string error;
    std::unique_ptr<Store> store = Store::Create(StoreOptions{}, &error);
    REQUIRE(store);
    RespServerOptions o;  // io_threads 0: the default
    RespServer server(store.get(), o);
    REQUIRE(server.Start(&error));
    const size_t expected = DefaultIoThreads(std::thread::hardware_concurrency());
    CHECK(server.io_threads() == expected);
    Client c(server.port());
    CHECK(c.Call({"CONFIG", "GET", "io-threads"}) ==
          Arr({Bulk("io-threads"), Bulk(std::to_string(expected))}));
  }
  SECTION("as set; CONFIG SET takes only the value it has") {
    RespServerOptions o;
    o.io_threads = 3;
    Fixture f(o);
    CHECK(f.server->io_threads() == 3);
    Client c(f.port());
    CHECK(c.Call({"CONFIG", "GET", "io-threads"}) == Arr({Bulk("io-threads"), Bulk("3")}));
    CHECK(c.Call({"CONFIG", "SET", "io-threads", "3"}) == kOk);
    CHECK(c.Call({"CONFIG", "SET", "io-threads", "1"}) ==
          Err("ERR CONFIG SET failed (possibly related to argument 'io-threads') - ephpm sets "
              "it at start only (--resp-io-threads)"));
  }
}

TEST_CASE("server: one I/O thread serves a blocked client's wake-up and the others meanwhile") {
  // With the default on two cores there is one I/O thread: nothing a
  // connection waits for may hold it.
  RespServerOptions o;
  o.io_threads = 1;
  Fixture f(o);
  Client waiter(f.port());
  REQUIRE(waiter.Send(Encode({"BLPOP", "q", "5"})));
  Client other(f.port());
  for (int i = 0; i < 50; ++i) REQUIRE(other.Call({"INCR", "n"}) == Int(i + 1));
  // A pipeline of 64 from a third client, while the first still waits.
  Client third(f.port());
  std::string batch;
  for (int i = 0; i < 64; ++i) batch += Encode({"SET", "k" + std::to_string(i), "v"});
  REQUIRE(third.Send(batch));
  for (int i = 0; i < 64; ++i) CHECK(third.Reply() == kOk);
  CHECK(other.Call({"RPUSH", "q", "x"}) == Int(1));
  CHECK(waiter.Reply() == Arr({Bulk("q"), Bulk("x")}));
  CHECK(other.Call({"LLEN", "q"}) == Int(0));
}

TEST_CASE("server: 32 concurrent clients INCR one key, every value seen once") {
  RespServerOptions o;
  o.io_threads = 4;
  Fixture f(o);
  constexpr int kThreads = 32, kEach = 200;
  std::vector<std::vector<std::string>> replies(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        Client c(f.port());
        // Half send one request at a time, half pipeline theirs in batches.
        if (t % 2 == 0) {
          for (int i = 0; i < kEach; ++i) replies[t].push_back(c.Call({"INCR", "counter"}));
        } else {
          for (int i = 0; i < kEach; i += 20) {
            std::string batch;
            for (int j = 0; j < 20; ++j) batch += Encode({"INCR", "counter"});
            if (!c.Send(batch)) break;
            for (int j = 0; j < 20; ++j) replies[t].push_back(c.Reply());
          }
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<long long> seen;
  size_t total = 0;
  bool all_integers = true;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(errors[t].empty());
    for (const auto& r : replies[t]) {
      ++total;
      if (r.size() < 4 || r[0] != ':') {
        all_integers = false;
        continue;
      }
      seen.insert(std::stoll(r.substr(1)));
    }
  }
  CHECK(all_integers);
  CHECK(total == kThreads * kEach);
  CHECK(seen.size() == kThreads * kEach);
  CHECK(*seen.begin() == 1);
  CHECK(*seen.rbegin() == kThreads * kEach);
  Client c(f.port());
  CHECK(c.Call({"GET", "counter"}) == Bulk(std::to_string(kThreads * kEach)));
}

TEST_CASE("server: clients that vanish mid-request, and Stop with clients connected") {
  Fixture f;
  for (int i = 0; i < 20; ++i) {
    Client c(f.port());
    c.Send("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc");  // then gone
  }
  {
    Client c(f.port());
    std::string many;
    for (int i = 0; i < 5000; ++i) many += Encode({"ECHO", std::string(100, 'e')});
    c.Send(many);  // gone without reading the replies
  }
  Client c(f.port());
  CHECK(c.Call({"EXISTS", "k"}) == Int(0));
  Client held(f.port());
  held.Send("*2\r\n$4\r\nECHO\r\n$10\r\nabc");  // left part way
  f.server->Stop();
  CHECK(held.WaitClosed());
  CHECK(c.WaitClosed());
  f.server->Stop();  // idempotent
}

TEST_CASE("server: Start fails on a port in use") {
  Fixture f;
  ManualClock clock;
  StoreOptions so;
  so.clock = &clock;
  so.sweep_interval_ms = 0;
  std::string error;
  auto store = Store::Create(so, &error);
  REQUIRE(store);
  RespServerOptions o;
  o.port = f.port();
  RespServer second(store.get(), o);
  CHECK_FALSE(second.Start(&error));
  CHECK(error.find("cannot listen on 127.0.0.1:" + std::to_string(f.port())) == 0);
  RespServerOptions bad;
  bad.bind_address = "not an address";
  RespServer third(store.get(), bad);
  CHECK_FALSE(third.Start(&error));
  CHECK(error.find("invalid address") == 0);
}

TEST_CASE("server: SET NX PX takes a lock that allkeys-lru keeps, and INFO memory counts it") {
  StoreOptions so;
  so.shards = 1;
  so.eviction_samples = 64;  // the lock, least recently used, is the first candidate
  so.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  so.memory_limit = 4096;
  Fixture f({}, so);
  Client c(f.port());
  CHECK(c.Call({"SET", "lk", "token", "NX", "PX", "60000"}) == kOk);
  CHECK(c.Call({"SETNX", "plain", "v"}) == Int(1));  // no TTL: ordinary data
  std::string info = c.Call({"INFO", "memory"});
  CHECK(info.find("\r\npinned_keys:1\r\n") != std::string::npos);
  CHECK(info.find("\r\npinned_bytes:0\r\n") == std::string::npos);
  for (int i = 0; i < 60; ++i) {
    f.clock.Advance(1);
    CHECK(c.Call({"SET", "k" + std::to_string(i), std::string(200, 'v')}) == kOk);
  }
  CHECK(f.store->Stats().evicted > 0);
  CHECK(c.Call({"SET", "lk", "other", "NX", "PX", "60000"}) == kNil);
  CHECK(c.Call({"GET", "lk"}) == "$5\r\ntoken\r\n");
  CHECK(c.Call({"DELIFEQ", "lk", "token"}) == Int(1));
  info = c.Call({"INFO", "memory"});
  CHECK(info.find("\r\npinned_keys:0\r\npinned_bytes:0\r\n") != std::string::npos);
}
