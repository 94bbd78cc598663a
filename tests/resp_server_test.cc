// The RESP server in this process, with a real Store, over real loopback
// sockets: framing (split reads, pipelining, inline commands, malformed
// frames), every command's replies and QUIT.  The limits, AUTH, the lock
// scenario and concurrent clients are in resp_server_limits_test.cc.
//
// Assertions run on the main thread only; helper threads record what they
// saw.  Socket timeouts are guards against a hang, never assertions.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

// ---------------------------------------------------------------------------
// Framing

TEST_CASE("server: a request sent byte by byte is answered once, when complete") {
  Fixture f;
  Client c(f.port());
  const std::string value = "va\0ue\r\n*1"s;
  const std::string req = Encode({"SET", "key", value});
  for (size_t i = 0; i + 1 < req.size(); ++i) {
    REQUIRE(c.Send(req.substr(i, 1)));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // Nothing may be answered before the last byte.
  CHECK_FALSE(c.Readable(20));
  REQUIRE(c.Send(req.substr(req.size() - 1)));
  CHECK(c.Reply() == kOk);
  CHECK(c.Call({"GET", "key"}) == Bulk(value));

  // An inline request, byte by byte too.
  const std::string inline_req = "ECHO \"split\\x21\"\r\n";
  for (char ch : inline_req) {
    REQUIRE(c.Send(std::string(1, ch)));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(c.Reply() == Bulk("split!"));

  // Split in two at every position.
  const std::string ping = Encode({"ECHO", "abc"});
  for (size_t cut = 1; cut < ping.size(); ++cut) {
    REQUIRE(c.Send(ping.substr(0, cut)));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(c.Send(ping.substr(cut)));
    CHECK(c.Reply() == Bulk("abc"));
  }
}

TEST_CASE("server: 1000 pipelined commands in one write, replies in order") {
  Fixture f;
  Client c(f.port());
  std::string batch, expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string k = "k" + std::to_string((i / 5) % 50);
    switch (i % 5) {
      case 0:
        batch += Encode({"SET", k, "v" + std::to_string(i)});
        expected += kOk;
        break;
      case 1:
        batch += Encode({"GET", k});
        expected += Bulk("v" + std::to_string(i - 1));
        break;
      case 2:
        batch += Encode({"INCR", "counter"});
        expected += Int(i / 5 + 1);
        break;
      case 3:
        batch += "ECHO inline" + std::to_string(i) + "\r\n";  // inline in the same stream
        expected += Bulk("inline" + std::to_string(i));
        break;
      case 4:
        batch += Encode({"NOPE"});
        expected += Err("ERR unknown command 'NOPE', with args beginning with: ");
        break;
    }
  }
  REQUIRE(c.Send(batch));
  CHECK(c.ReadBytes(expected.size()) == expected);
  CHECK_FALSE(c.Readable(10));
  CHECK(c.Call({"GET", "counter"}) == Bulk("200"));

  // Big replies pipelined: 200 x GET of a 64 KiB value.
  const std::string big(64 * 1024, 'x');
  CHECK(c.Call({"SET", "big", big}) == kOk);
  std::string gets, want;
  for (int i = 0; i < 200; ++i) {
    gets += Encode({"GET", "big"});
    want += Bulk(big);
  }
  REQUIRE(c.Send(gets));
  CHECK(c.ReadBytes(want.size()) == want);
}

// The requests queued behind the one running are prefetched (their keys
// peeked in the input, Store::Prefetch): in the database the connection is
// in when that request runs, with SELECTs among them, keys too long for a
// key, and requests the peek skips, every reply is the one run alone gives,
// and only the GETs count as hits and misses.
TEST_CASE("server: a pipeline across databases answers as run one by one, counting only its "
          "reads") {
  Fixture f;
  Client c(f.port());
  const std::string too_long(ephpm::kMaxKeySize + 1, 'k');
  std::string batch, expected;
  auto add = [&](const std::vector<std::string>& argv, const std::string& reply) {
    batch += Encode(argv);
    expected += reply;
  };
  for (int i = 0; i < 50; ++i) {
    const std::string k = "p" + std::to_string(i % 7);
    add({"SELECT", "1"}, kOk);
    add({"SET", k, "one" + std::to_string(i)}, kOk);
    add({"SELECT", "0"}, kOk);
    add({"GET", k}, i < 7 ? Bulk("") : Bulk("zero" + std::to_string(i - 7)));
    add({"SET", k, "zero" + std::to_string(i)}, kOk);
    add({"SELECT", "1"}, kOk);
    add({"GET", k}, Bulk("one" + std::to_string(i)));
    add({"GET", too_long},
        Err("ERR key is longer than 65536 bytes or value longer than ephpm.max_value_size"));
    batch += "PING\r\n";  // inline: the peek skips it
    expected += "+PONG\r\n";
    add({"SELECT", "0"}, kOk);
  }
  // The first seven GETs in database 0 found nothing.
  std::string fixed;
  for (size_t at = 0, n = 0; at < expected.size();) {
    const size_t end = ReplyEnd(expected, at);
    std::string r = expected.substr(at, end - at);
    if (r == Bulk("") && n++ < 7) r = "$-1\r\n";
    fixed += r;
    at = end;
  }
  REQUIRE(c.Send(batch));
  CHECK(c.ReadBytes(fixed.size()) == fixed);
  const std::string info = c.Call({"INFO", "stats"});
  CHECK(info.find("keyspace_hits:93\r\n") != std::string::npos);
  CHECK(info.find("keyspace_misses:7\r\n") != std::string::npos);
}

TEST_CASE("server: a pipelining client that reads only after writing everything completes") {
  // Requests that the client writes in full before reading any reply, with
  // more replies than the kernel buffers hold: the server must keep reading
  // while its replies wait, or both sides wait for each other forever.
  Fixture f;
  Client c(f.port(), /*rcvbuf=*/4096, /*sndbuf=*/4096);
  const std::string value(200, 'v');
  REQUIRE(c.Call({"SET", "k", value}) == kOk);
  std::string batch;
  const int n = 40000;  // ~0.9 MB of requests, ~8.2 MB of replies
  for (int i = 0; i < n; ++i) batch += Encode({"GET", "k"});
  const bool sent = c.Send(batch);  // SO_SNDTIMEO guards a deadlock
  REQUIRE(sent);
  const std::string one = Bulk(value);
  const std::string all = c.ReadBytes(one.size() * n);
  CHECK(all.size() == one.size() * n);
  CHECK(all.substr(0, one.size()) == one);
  CHECK(all.substr(all.size() - one.size()) == one);
  CHECK(c.Call({"PING"}) == "+PONG\r\n");
}

TEST_CASE("server: inline commands as typed into nc") {
  Fixture f;
  Client c(f.port());
  CHECK(c.Raw("PING\r\n") == "+PONG\r\n");
  CHECK(c.Raw("ping\n") == "+PONG\r\n");  // LF only, lower case
  CHECK(c.Raw("SET greeting \"hello world\"\r\n") == kOk);
  CHECK(c.Raw("GET greeting\r\n") == Bulk("hello world"));
  CHECK(c.Raw("SET 'single quoted' 'it\\'s'\r\n") == kOk);
  CHECK(c.Raw("GET \"single quoted\"\r\n") == Bulk("it's"));
  CHECK(c.Raw("SET bin \"a\\x00b\\r\\n\\t\\\"\"\r\n") == kOk);
  CHECK(c.Call({"GET", "bin"}) == Bulk("a\0b\r\n\t\""s));
  CHECK(c.Raw("  ECHO    spaced\t  \r\n") == Bulk("spaced"));
  CHECK(c.Raw("ECHO \"\"\r\n") == Bulk(""));
  // Blank lines get no reply at all.
  REQUIRE(c.Send("\r\n\n   \r\n"));
  CHECK(c.Raw("PING\r\n") == "+PONG\r\n");
  CHECK(c.Raw("HSET h \"a field\" 1\r\n") == Int(1));
  CHECK(c.Raw("HGET h \"a field\"\r\n") == Bulk("1"));
  CHECK(c.Raw("INCR n\r\nINCR n\r\n") == Int(1));
  CHECK(c.Reply() == Int(2));
  CHECK(c.Raw("GET\r\n") == Arity("get"));
  CHECK(c.Raw("FOO 'a b' c\r\n") ==
        Err("ERR unknown command 'FOO', with args beginning with: 'a b' 'c' "));
}

namespace {

struct Malformed {
  const char* name;
  std::string request;
  std::string expected;  // every byte before the close
};

}  // namespace

TEST_CASE("server: malformed frames get the protocol error, then the connection closes") {
  RespServerOptions o;
  o.max_bulk_len = 1024;
  Fixture f(o);
  const std::string big_digits(70000, '1');
  const std::vector<Malformed> cases = {
      {"count not a number", "*abc\r\n", ProtoErr("invalid multibulk length")},
      {"count is a lone minus", "*-\r\n", ProtoErr("invalid multibulk length")},
      {"count with leading zero", "*01\r\n", ProtoErr("invalid multibulk length")},
      {"count with plus sign", "*+1\r\n", ProtoErr("invalid multibulk length")},
      {"count with a space", "* 1\r\n", ProtoErr("invalid multibulk length")},
      {"count above INT_MAX", "*2147483648\r\n", ProtoErr("invalid multibulk length")},
      {"count overflows int64", "*99999999999999999999\r\n", ProtoErr("invalid multibulk length")},
      {"empty count", "*\r\n", ProtoErr("invalid multibulk length")},
      {"bare word instead of bulk", "*1\r\nGET\r\n", ProtoErr("expected '$', got 'G'")},
      {"integer instead of bulk", "*1\r\n:1\r\n", ProtoErr("expected '$', got ':'")},
      {"error line instead of bulk", "*1\r\n-1\r\n", ProtoErr("expected '$', got '-'")},
      {"array instead of bulk", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n*1\r\n",
       ProtoErr("expected '$', got '*'")},
      {"value without header", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\nv\r\n",
       ProtoErr("expected '$', got 'v'")},
      {"empty header line", "*2\r\n$4\r\nPING\r\n\r\n\r\n", ProtoErr("expected '$', got ' '")},
      {"LF-started header line", "*1\r\n\nX\r\n", ProtoErr("expected '$', got ' '")},
      {"bulk length not a number", "*1\r\n$abc\r\n", ProtoErr("invalid bulk length")},
      {"bulk length negative", "*1\r\n$-1\r\n", ProtoErr("invalid bulk length")},
      {"bulk length -5", "*1\r\n$-5\r\n", ProtoErr("invalid bulk length")},
      {"bulk length leading zero", "*1\r\n$01\r\n", ProtoErr("invalid bulk length")},
      {"bulk length empty", "*1\r\n$\r\n", ProtoErr("invalid bulk length")},
      {"bulk length trailing space", "*1\r\n$1 \r\n", ProtoErr("invalid bulk length")},
      {"bulk length leading space", "*1\r\n$ 3\r\n", ProtoErr("invalid bulk length")},
      {"bulk length overflows", "*1\r\n$18446744073709551616\r\n", ProtoErr("invalid bulk length")},
      {"bulk over max_bulk_len", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1025\r\n",
       ProtoErr("invalid bulk length")},
      {"INT_MAX count, then a bad bulk", "*2147483647\r\n$x\r\n", ProtoErr("invalid bulk length")},
      {"unbalanced double quote", "SET \"a b\r\n", ProtoErr("unbalanced quotes in request")},
      {"unbalanced single quote", "SET 'a\r\n", ProtoErr("unbalanced quotes in request")},
      {"text after closing double quote", "SET \"a\"b 1\r\n",
       ProtoErr("unbalanced quotes in request")},
      {"text after closing single quote", "SET 'a'b 1\r\n",
       ProtoErr("unbalanced quotes in request")},
      {"lone double quote", "\"\r\n", ProtoErr("unbalanced quotes in request")},
      {"quote opened inside a word", "a\"b\r\n", ProtoErr("unbalanced quotes in request")},
      {"inline line too long", std::string(70000, 'a'), ProtoErr("too big inline request")},
      {"inline line stuck on NUL", "PING\0\r\n"s + std::string(70000, 'x'),
       ProtoErr("too big inline request")},
      {"count line too long", "*" + big_digits, ProtoErr("too big mbulk count string")},
      {"bulk header too long", "*1\r\n$" + big_digits, ProtoErr("too big bulk count string")},
      {"good inline, then a bad count", "PING\r\n*x\r\n",
       "+PONG\r\n" + ProtoErr("invalid multibulk length")},
      {"good multibulk, then a bad bulk", Encode({"PING"}) + "*1\r\n$x\r\n",
       "+PONG\r\n" + ProtoErr("invalid bulk length")},
      {"writes before the error stay done", Encode({"SET", "done", "1"}) + "*1\r\n$-2\r\n",
       kOk + ProtoErr("invalid bulk length")},
  };
  REQUIRE(cases.size() >= 30);
  for (const auto& tc : cases) {
    INFO("case: " << tc.name);
    Client c(f.port());
    REQUIRE(c.Send(tc.request));
    bool closed = false;
    const std::string got = c.ReadToClose(&closed);
    CHECK(got == tc.expected);
    CHECK(closed);
  }

  // The error also comes when the bad bytes arrive in a later read.
  {
    Client c(f.port());
    REQUIRE(c.Send("*2\r\n$4\r\nECHO\r\n$"));
    CHECK_FALSE(c.Readable(20));
    REQUIRE(c.Send("1x\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == ProtoErr("invalid bulk length"));
    CHECK(closed);
  }
  // The server is unharmed, and the write before the error was done.
  Client ok(f.port());
  CHECK(ok.Call({"GET", "done"}) == Bulk("1"));
}

TEST_CASE("server: frame quirks that are not errors") {
  Fixture f;
  Client c(f.port());
  // The two bytes after a payload are skipped unchecked, as in Redis.
  CHECK(c.Raw("*1\r\n$4\r\nPINGxx") == "+PONG\r\n");
  // "*0" and negative counts are empty requests: no reply.
  REQUIRE(c.Send("*0\r\n*-1\r\n*-7\r\n"));
  CHECK(c.Call({"PING"}) == "+PONG\r\n");
  // An empty bulk and a binary one.
  CHECK(c.Call({"SET", "", "\0\xff\r\n"s}) == kOk);
  CHECK(c.Call({"GET", ""}) == Bulk("\0\xff\r\n"s));
  // A bulk of exactly max_bulk_len (1 KiB here) passes.
  RespServerOptions o;
  o.max_bulk_len = 1024;
  Fixture g(o);
  Client d(g.port());
  CHECK(d.Call({"SET", "k", std::string(1024, 'z')}) == kOk);
  CHECK(d.Call({"STRLEN", "k"}) == Int(1024));
}

// ---------------------------------------------------------------------------
// Every command

namespace {

struct Row {
  std::vector<std::string> argv;
  std::string reply;
};

}  // namespace

TEST_CASE("server: every command, a valid and an invalid form, exact replies") {
  StoreOptions so;
  so.shards = 1;  // SCAN over one shard: one step returns everything
  Fixture f({}, so);
  const int64_t now = f.clock.NowMs();  // 1'700'000'000'000
  Client c(f.port());
  const std::vector<Row> rows = {
      // connection and server
      {{"PING"}, "+PONG\r\n"},
      {{"PING", "hi"}, Bulk("hi")},
      {{"PING", "a", "b"}, Arity("ping")},
      {{"ECHO", "x y"}, Bulk("x y")},
      {{"ECHO"}, Arity("echo")},
      {{"SELECT", "0"}, kOk},
      {{"SELECT", "16"}, Err("ERR DB index is out of range")},
      {{"SELECT", "1"}, kOk},
      {{"SELECT", "0"}, kOk},
      {{"SELECT", "x"}, Err("ERR value is not an integer or out of range")},
      {{"SELECT"}, Arity("select")},
      {{"AUTH", "pw"},
       Err("ERR AUTH <password> called without any password configured for the default user. "
           "Are you sure your configuration is correct?")},
      {{"AUTH", "default", "anything"}, kOk},
      {{"AUTH", "bob", "pw"}, Err("WRONGPASS invalid username-password pair or user is disabled.")},
      {{"AUTH", "a", "b", "c"}, Err("ERR syntax error")},
      {{"AUTH"}, Arity("auth")},
      {{"HELLO", "2"},
       Arr({Bulk("server"), Bulk("redis"), Bulk("version"), Bulk("7.0.15"), Bulk("proto"), Int(2),
            Bulk("id"), Int(1), Bulk("mode"), Bulk("standalone"), Bulk("role"), Bulk("master"),
            Bulk("modules"), "*0\r\n"})},
      {{"HELLO", "3"}, Err("NOPROTO unsupported protocol version")},
      {{"HELLO", "x"}, Err("ERR Protocol version is not an integer or out of range")},
      {{"HELLO", "2", "FOO"}, Err("ERR Syntax error in HELLO option 'FOO'")},
      {{"COMMAND", "INFO", "get"},
       Arr({Arr({Bulk("get"), Int(2), Arr({"+readonly\r\n", "+fast\r\n"}), Int(1), Int(1), Int(1),
                 Arr({"+@read\r\n", "+@string\r\n", "+@fast\r\n"}), "*0\r\n", "*0\r\n",
                 "*0\r\n"})})},
      {{"COMMAND", "DOCS", "get"}, "*0\r\n"},
      {{"COMMAND", "NOPE"}, Err("ERR unknown subcommand 'NOPE'. Try COMMAND HELP.")},
      {{"COMMAND", "COUNT", "x"}, Arity("command|count")},
      {{"CLIENT", "ID"}, Int(1)},
      {{"CLIENT", "GETNAME"}, kNil},
      {{"CLIENT", "SETNAME", "tester"}, kOk},
      {{"CLIENT", "GETNAME"}, Bulk("tester")},
      {{"CLIENT", "SETNAME", "a b"},
       Err("ERR Client names cannot contain spaces, newlines or special characters.")},
      {{"CLIENT", "NOPE"}, Err("ERR unknown subcommand 'NOPE'. Try CLIENT HELP.")},
      {{"CLIENT"}, Arity("client")},
      {{"CLIENT", "ID", "x"}, Arity("client|id")},
      {{"INFO", "nosuchsection"}, Bulk("")},
      {{"DBSIZE"}, Int(0)},
      {{"DBSIZE", "x"}, Arity("dbsize")},
      {{"FLUSHDB"}, kOk},
      {{"FLUSHDB", "LATER"}, Err("ERR syntax error")},
      {{"FLUSHALL", "SYNC"}, kOk},
      {{"FLUSHALL", "a", "b"}, Err("ERR syntax error")},
      {{"TIME", "x"}, Arity("time")},
      {{"NOSUCH", "a"}, Err("ERR unknown command 'NOSUCH', with args beginning with: 'a' ")},
      // strings
      {{"SET", "s", "v1"}, kOk},
      {{"SET", "s", "v2", "XX", "GET"}, Bulk("v1")},
      {{"SET", "s", "v", "NX", "XX"}, Err("ERR syntax error")},
      {{"SET", "s", "v", "EX", "0"}, Err("ERR invalid expire time in 'set' command")},
      {{"SET", "s", "v", "EX", "ten"}, Err("ERR value is not an integer or out of range")},
      {{"SET", "s"}, Arity("set")},
      {{"GET", "s"}, Bulk("v2")},
      {{"GET", "missing"}, kNil},
      {{"GET"}, Arity("get")},
      {{"SETNX", "s", "x"}, Int(0)},
      {{"SETNX", "s2", "x"}, Int(1)},
      {{"SETNX", "s"}, Arity("setnx")},
      {{"SETEX", "tmp", "100", "t"}, kOk},
      {{"TTL", "tmp"}, Int(100)},
      {{"SETEX", "tmp", "0", "t"}, Err("ERR invalid expire time in 'setex' command")},
      {{"PSETEX", "tmp", "1500", "t"}, kOk},
      {{"PTTL", "tmp"}, Int(1500)},
      {{"PSETEX", "tmp", "-1", "t"}, Err("ERR invalid expire time in 'psetex' command")},
      {{"GETSET", "s", "v3"}, Bulk("v2")},
      {{"GETSET", "s"}, Arity("getset")},
      {{"GETDEL", "s2"}, Bulk("x")},
      {{"GETDEL", "s2"}, kNil},
      {{"GETDEL"}, Arity("getdel")},
      {{"GETEX", "s", "EX", "50"}, Bulk("v3")},
      {{"TTL", "s"}, Int(50)},
      {{"GETEX", "s", "PERSIST"}, Bulk("v3")},
      {{"TTL", "s"}, Int(-1)},
      {{"GETEX", "s", "BOGUS"}, Err("ERR syntax error")},
      {{"MSET", "m1", "a", "m2", "b"}, kOk},
      {{"MSET", "m1", "a", "m2"}, Arity("mset")},
      {{"MGET", "m1", "missing", "m2"}, Arr({Bulk("a"), kNil, Bulk("b")})},
      {{"MGET"}, Arity("mget")},
      {{"MSETNX", "m1", "x", "m3", "c"}, Int(0)},
      {{"MSETNX", "m3", "c", "m4", "d"}, Int(1)},
      {{"MSETNX", "m5"}, Arity("msetnx")},
      {{"APPEND", "ap", "Hello"}, Int(5)},
      {{"APPEND", "ap", " World"}, Int(11)},
      {{"APPEND", "ap"}, Arity("append")},
      {{"STRLEN", "ap"}, Int(11)},
      {{"STRLEN", "missing"}, Int(0)},
      {{"STRLEN"}, Arity("strlen")},
      {{"SETRANGE", "ap", "6", "Redis"}, Int(11)},
      {{"SETRANGE", "ap", "-1", "x"}, Err("ERR offset is out of range")},
      {{"GETRANGE", "ap", "0", "4"}, Bulk("Hello")},
      {{"GETRANGE", "ap", "-5", "-1"}, Bulk("Redis")},
      {{"GETRANGE", "ap", "a", "1"}, Err("ERR value is not an integer or out of range")},
      {{"INCR", "n"}, Int(1)},
      {{"INCR", "s"}, Err("ERR value is not an integer or out of range")},
      {{"DECR", "n"}, Int(0)},
      {{"DECR"}, Arity("decr")},
      {{"INCRBY", "n", "10"}, Int(10)},
      {{"INCRBY", "n", "1.5"}, Err("ERR value is not an integer or out of range")},
      {{"DECRBY", "n", "3"}, Int(7)},
      {{"DECRBY", "n", "-9223372036854775808"}, Err("ERR decrement would overflow")},
      {{"SET", "max", "9223372036854775807"}, kOk},
      {{"INCRBY", "max", "1"}, Err("ERR increment or decrement would overflow")},
      {{"INCRBYFLOAT", "f", "1.5"}, Bulk("1.5")},
      {{"INCRBYFLOAT", "f", "0.25"}, Bulk("1.75")},
      {{"INCRBYFLOAT", "f", "abc"}, Err("ERR value is not a valid float")},
      // keys
      {{"EXISTS", "m1", "m2", "missing", "m1"}, Int(3)},
      {{"EXISTS"}, Arity("exists")},
      {{"DEL", "m3", "m4", "missing"}, Int(2)},
      {{"DEL"}, Arity("del")},
      {{"UNLINK", "m2"}, Int(1)},
      {{"UNLINK"}, Arity("unlink")},
      {{"TYPE", "m1"}, "+string\r\n"},
      {{"TYPE", "missing"}, "+none\r\n"},
      {{"TYPE"}, Arity("type")},
      {{"RENAME", "m1", "r1"}, kOk},
      {{"RENAME", "missing", "r2"}, Err("ERR no such key")},
      {{"RENAMENX", "r1", "ap"}, Int(0)},
      {{"RENAMENX", "r1", "r2"}, Int(1)},
      {{"RENAMENX", "missing", "r3"}, Err("ERR no such key")},
      {{"KEYS", "r?"}, Arr({Bulk("r2")})},
      {{"KEYS"}, Arity("keys")},
      {{"SCAN", "0", "MATCH", "r*", "COUNT", "1000"}, Arr({Bulk("0"), Arr({Bulk("r2")})})},
      {{"SCAN", "0", "MATCH", "*", "TYPE", "nosuchtype"}, Arr({Bulk("0"), "*0\r\n"})},
      {{"SCAN", "x"}, Err("ERR invalid cursor")},
      {{"SCAN", "0", "COUNT", "0"}, Err("ERR syntax error")},
      {{"SCAN", "0", "COUNT"}, Err("ERR syntax error")},
      {{"RANDOMKEY", "x"}, Arity("randomkey")},
      {{"EXPIRE", "r2", "100"}, Int(1)},
      {{"EXPIRE", "r2", "200", "NX"}, Int(0)},
      {{"EXPIRE", "r2", "200", "GT"}, Int(1)},
      {{"TTL", "r2"}, Int(200)},
      {{"EXPIRE", "missing", "100"}, Int(0)},
      {{"EXPIRE", "r2", "10", "NX", "XX"},
       Err("ERR NX and XX, GT or LT options at the same time are not compatible")},
      {{"EXPIRE", "r2", "10", "GT", "LT"},
       Err("ERR GT and LT options at the same time are not compatible")},
      {{"EXPIRE", "r2", "10", "SOON"}, Err("ERR Unsupported option SOON")},
      {{"EXPIRE", "r2", "ten"}, Err("ERR value is not an integer or out of range")},
      {{"PEXPIRE", "r2", "2500"}, Int(1)},
      {{"PTTL", "r2"}, Int(2500)},
      {{"TTL", "r2"}, Int(3)},  // 2.5 s rounds to 3, as in Redis
      {{"PEXPIRE", "r2"}, Arity("pexpire")},
      {{"EXPIREAT", "r2", std::to_string(now / 1000 + 1000)}, Int(1)},
      {{"EXPIRETIME", "r2"}, Int(now / 1000 + 1000)},
      {{"PEXPIRETIME", "r2"}, Int(now + 1000000)},
      {{"EXPIREAT", "r2", "x"}, Err("ERR value is not an integer or out of range")},
      {{"PEXPIREAT", "r2", std::to_string(now + 4321)}, Int(1)},
      {{"PEXPIRETIME", "r2"}, Int(now + 4321)},
      {{"PEXPIREAT", "r2"}, Arity("pexpireat")},
      {{"EXPIRETIME", "ap"}, Int(-1)},
      {{"EXPIRETIME", "missing"}, Int(-2)},
      {{"EXPIRETIME"}, Arity("expiretime")},
      {{"PEXPIRETIME"}, Arity("pexpiretime")},
      {{"TTL", "missing"}, Int(-2)},
      {{"TTL"}, Arity("ttl")},
      {{"PTTL", "ap"}, Int(-1)},
      {{"PTTL"}, Arity("pttl")},
      {{"PERSIST", "r2"}, Int(1)},
      {{"PERSIST", "r2"}, Int(0)},
      {{"PERSIST"}, Arity("persist")},
      // hashes
      {{"HSET", "h", "f1", "1", "f2", "two"}, Int(2)},
      {{"HSET", "h", "f1", "10"}, Int(0)},
      {{"HSET", "h", "f1"}, Arity("hset")},
      {{"HSET", "h", "f1", "1", "f2"}, Arity("hset")},
      {{"HMSET", "h", "f3", "3"}, kOk},
      {{"HMSET", "h", "f3"}, Arity("hmset")},
      {{"HSETNX", "h", "f3", "x"}, Int(0)},
      {{"HSETNX", "h", "f4", "4"}, Int(1)},
      {{"HSETNX", "h", "f4"}, Arity("hsetnx")},
      {{"HGET", "h", "f2"}, Bulk("two")},
      {{"HGET", "h", "nope"}, kNil},
      {{"HGET", "ap", "f"},
       Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
      {{"GET", "h"}, Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
      {{"HMGET", "h", "f1", "nope", "f2"}, Arr({Bulk("10"), kNil, Bulk("two")})},
      {{"HMGET", "h"}, Arity("hmget")},
      {{"HDEL", "h", "f3", "f4", "nope"}, Int(2)},
      {{"HDEL", "h"}, Arity("hdel")},
      {{"HLEN", "h"}, Int(2)},
      {{"HLEN", "ap"}, Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
      {{"HEXISTS", "h", "f1"}, Int(1)},
      {{"HEXISTS", "h", "nope"}, Int(0)},
      {{"HEXISTS", "h"}, Arity("hexists")},
      {{"HSTRLEN", "h", "f2"}, Int(3)},
      {{"HSTRLEN", "h", "nope"}, Int(0)},
      {{"HSTRLEN", "h"}, Arity("hstrlen")},
      {{"HINCRBY", "h", "f1", "5"}, Int(15)},
      {{"HINCRBY", "h", "f2", "1"}, Err("ERR hash value is not an integer")},
      {{"HINCRBY", "h", "f1", "x"}, Err("ERR value is not an integer or out of range")},
      {{"HINCRBYFLOAT", "h", "fl", "2.5"}, Bulk("2.5")},
      {{"HINCRBYFLOAT", "h", "f2", "1"}, Err("ERR hash value is not a float")},
      {{"HINCRBYFLOAT", "h", "fl", "x"}, Err("ERR value is not a valid float")},
      {{"HSET", "one", "k", "v"}, Int(1)},
      {{"HGETALL", "one"}, Arr({Bulk("k"), Bulk("v")})},
      {{"HGETALL", "missing"}, "*0\r\n"},
      {{"HGETALL"}, Arity("hgetall")},
      {{"HKEYS", "one"}, Arr({Bulk("k")})},
      {{"HKEYS"}, Arity("hkeys")},
      {{"HVALS", "one"}, Arr({Bulk("v")})},
      {{"HVALS"}, Arity("hvals")},
      {{"HSCAN", "one", "0"}, Arr({Bulk("0"), Arr({Bulk("k"), Bulk("v")})})},
      {{"HSCAN", "h", "0", "MATCH", "f2"}, Arr({Bulk("0"), Arr({Bulk("f2"), Bulk("two")})})},
      {{"HSCAN", "one", "x"}, Err("ERR invalid cursor")},
      {{"TYPE", "one"}, "+hash\r\n"},
      // locks
      {{"SET", "lk", "tok"}, kOk},
      {{"DELIFEQ", "lk", "other"}, Int(0)},
      {{"DELIFEQ", "lk", "tok"}, Int(1)},
      {{"DELIFEQ", "lk", "tok"}, Int(0)},
      {{"DELIFEQ", "one", "v"},
       Err("WRONGTYPE Operation against a key holding the wrong kind of value")},
      {{"DELIFEQ", "lk"}, Arity("delifeq")},
      // SETNX-style locking through SET
      {{"SET", "lk", "a", "NX", "PX", "1000"}, kOk},
      {{"SET", "lk", "b", "NX", "PX", "1000"}, kNil},
      {{"SET", "lk", "b", "NX", "PX"}, Err("ERR syntax error")},
      {{"FLUSHALL"}, kOk},
      {{"RANDOMKEY"}, kNil},
      {{"SET", "only", "1"}, kOk},
      {{"RANDOMKEY"}, Bulk("only")},
      {{"DBSIZE"}, Int(1)},
  };
  for (const auto& row : rows) {
    std::string shown;
    for (const auto& a : row.argv) shown += a + " ";
    INFO("request: " << shown);
    CHECK(c.Call(row.argv) == row.reply);
  }

  // Replies whose content varies: checked by shape.
  const std::string time = c.Call({"TIME"});
  CHECK(time.rfind("*2\r\n$", 0) == 0);
  const std::string info = c.Call({"INFO"});
  CHECK(info.find("# Server\r\nredis_version:7.0.15\r\n") != std::string::npos);
  CHECK(info.find("connected_clients:1\r\n") != std::string::npos);
  CHECK(info.find("db0:keys=1,expires=0") != std::string::npos);
  const std::string client_info = c.Call({"CLIENT", "INFO"});
  CHECK(client_info.find("id=1 addr=127.0.0.1:") != std::string::npos);
  CHECK(client_info.find(" name=tester ") != std::string::npos);
  CHECK(client_info.find(" cmd=client|info ") != std::string::npos);
  const std::string list = c.Call({"CLIENT", "LIST"});
  CHECK(list.find("id=1 ") != std::string::npos);
  const std::string help = c.Call({"CLIENT", "HELP"});
  CHECK(help.find("\r\n+CLIENT <subcommand>") != std::string::npos);
  CHECK(c.Call({"COMMAND", "HELP"}).find("\r\n+COMMAND <subcommand>") != std::string::npos);
  // COMMAND and COMMAND COUNT agree; COMMAND LIST names subcommands too.
  const std::string names = c.Call({"COMMAND", "LIST"});
  const std::string count = c.Call({"COMMAND", "COUNT"});
  REQUIRE(count.size() > 3);
  CHECK(std::stoll(names.substr(1)) > std::stoll(count.substr(1)));
  CHECK(names.find(Bulk("delifeq")) != std::string::npos);
  CHECK(c.Call({"COMMAND"}).rfind("*" + count.substr(1, count.size() - 3) + "\r\n*10\r\n", 0) == 0);
}

TEST_CASE("server: QUIT replies +OK and closes; nothing after it runs") {
  Fixture f;
  {
    Client c(f.port());
    CHECK(c.Call({"QUIT"}) == kOk);
    CHECK(c.WaitClosed());
  }
  {
    Client c(f.port());
    REQUIRE(c.Send("SET a 1\r\nQUIT\r\nSET b 2\r\n"));
    bool closed = false;
    CHECK(c.ReadToClose(&closed) == kOk + kOk);
    CHECK(closed);
  }
  Client c(f.port());
  CHECK(c.Call({"EXISTS", "a", "b"}) == Int(1));
  CHECK(c.Call({"QUIT", "extra", "args"}) == kOk);
  CHECK(c.WaitClosed());
}

// Writes that would grow a string past ephpm.max_value_size are refused with
// Redis's proto-max-bulk-len error when proto-max-bulk-len lets the request
// through (it may be set above the store's limit), and change nothing: not
// the value, not a key that did not exist, not a BITFIELD's earlier fields.
TEST_CASE("server: string edits past max_value_size are refused and change nothing") {
  StoreOptions so;
  so.max_value_size = 64;
  Fixture f({}, so);
  Client c(f.port());
  const std::string too_big = Err(
      "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  CHECK(c.Call({"SET", "s", "abc"}) == kOk);
  CHECK(c.Call({"APPEND", "s", std::string(62, 'x')}) == too_big);
  CHECK(c.Call({"SETRANGE", "s", "64", "x"}) == too_big);
  CHECK(c.Call({"SETBIT", "s", "512", "1"}) == too_big);  // byte 64: 65 bytes
  CHECK(c.Call({"BITFIELD", "s", "SET", "u8", "0", "255", "SET", "u8", "505", "1"}) == too_big);
  CHECK(c.Call({"BITFIELD", "s", "INCRBY", "u8", "#64", "1"}) == too_big);
  CHECK(c.Call({"GET", "s"}) == Bulk("abc"));
  CHECK(c.Call({"SETBIT", "n", "600", "1"}) == too_big);
  CHECK(c.Call({"BITFIELD", "n", "SET", "i16", "1000", "-1"}) == too_big);
  CHECK(c.Call({"SETRANGE", "n", "100", "x"}) == too_big);
  CHECK(c.Call({"APPEND", "n", std::string(65, 'y')}) == too_big);
  CHECK(c.Call({"EXISTS", "n"}) == Int(0));
  // At the limit exactly, each is a write.
  CHECK(c.Call({"SETBIT", "s", "511", "1"}) == Int(0));
  CHECK(c.Call({"STRLEN", "s"}) == Int(64));
  CHECK(c.Call({"BITFIELD", "b", "SET", "u8", "504", "7"}) == Arr({Int(0)}));
  CHECK(c.Call({"STRLEN", "b"}) == Int(64));
  CHECK(c.Call({"APPEND", "a", std::string(64, 'z')}) == Int(64));
  CHECK(c.Call({"APPEND", "a", "z"}) == too_big);
  CHECK(c.Call({"STRLEN", "a"}) == Int(64));
  // A key past kMaxKeySize: LCS's one-step read refuses it as every
  // command does; a source of another type is LCS's own error.
  const std::string long_key(ephpm::kMaxKeySize + 1, 'k');
  const std::string long_key_err =
      Err("ERR key is longer than 65536 bytes or value longer than ephpm.max_value_size");
  CHECK(c.Call({"LCS", "s", long_key}) == long_key_err);
  // The edits name the key's fault, not the value's.
  CHECK(c.Call({"APPEND", long_key, "x"}) == long_key_err);
  CHECK(c.Call({"SETRANGE", long_key, "0", "x"}) == long_key_err);
  CHECK(c.Call({"SETBIT", long_key, "0", "1"}) == long_key_err);
  CHECK(c.Call({"BITFIELD", long_key, "SET", "u8", "0", "1"}) == long_key_err);
  CHECK(c.Call({"RPUSH", "l", "x"}) == Int(1));
  CHECK(c.Call({"LCS", "a", "l"}) == Err("ERR The specified keys must contain string values"));
  CHECK(c.Call({"LCS", "a", "nokey", "LEN"}) == Int(0));
}

// LCS reads its two keys in one step: a writer sets both to the same string,
// a different one each time (MSET, one step; the keys on different shards),
// so the longest common subsequence is always the whole string.  Reading
// one key, letting the writer in, then reading the other, would answer 0.
TEST_CASE("server: LCS reads both keys in one step against a concurrent writer") {
  Fixture f;
  const std::string l1 = "l1", l2 = ephpm_test::KeyOutside(*f.store, "l2", {l1});
  Client c(f.port());
  CHECK(c.Call({"MSET", l1, "aaaaaaaa", l2, "aaaaaaaa"}) == kOk);
  std::atomic<bool> done{false};
  std::atomic<int> writer_errors{0};
  std::thread writer([&] {
    Client w(f.port());
    for (int i = 0; !done.load(); ++i) {
      const std::string v(8, static_cast<char>('a' + i % 26));
      if (w.Call({"MSET", l1, v, l2, v}) != kOk) writer_errors++;
    }
  });
  int torn = 0;
  for (int i = 0; i < 2000; ++i) {
    if (c.Call({"LCS", l1, l2, "LEN"}) != Int(8)) ++torn;
  }
  done = true;
  writer.join();
  CHECK(torn == 0);
  CHECK(writer_errors == 0);
}

// COMMAND LIST lists subcommands too, as Redis 7.0 does, in the table's
// order (Redis's is its hash table's: resp_diff compares the one-name
// answers); FILTERBY ACLCAT and PATTERN select, ignoring case.
TEST_CASE("server: COMMAND LIST lists subcommands, and FILTERBY selects") {
  Fixture f;
  Client c(f.port());
  auto names = [&](const std::vector<std::string>& argv) {
    const std::string reply = c.Call(argv);
    std::vector<std::string> out;
    for (size_t at = reply.find("\r\n$"); at != std::string::npos;
         at = reply.find("\r\n$", at + 2)) {
      const size_t len_end = reply.find("\r\n", at + 2);
      const size_t len = std::stoul(reply.substr(at + 3, len_end - at - 3));
      out.push_back(reply.substr(len_end + 2, len));
    }
    return out;
  };
  auto has = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  const auto all = names({"COMMAND", "LIST"});
  CHECK(has(all, "set"));
  CHECK(has(all, "client|list"));
  CHECK(has(all, "command|getkeys"));
  CHECK(all.size() > static_cast<size_t>(std::stoll(c.Call({"COMMAND", "COUNT"}).substr(1))));
  const auto scripting = names({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "Scripting"});
  CHECK(has(scripting, "eval"));
  CHECK(has(scripting, "script|load"));
  CHECK_FALSE(has(scripting, "set"));
  const auto config = names({"COMMAND", "LIST", "FILTERBY", "PATTERN", "config*"});
  CHECK(has(config, "config"));
  CHECK(has(config, "config|get"));
  const auto re = names({"COMMAND", "LIST", "FILTERBY", "PATTERN", "CONFIG|*re*"});
  CHECK(has(re, "config|resetstat"));
  CHECK(has(re, "config|rewrite"));
  CHECK_FALSE(has(re, "config|get"));
  CHECK(has(names({"COMMAND", "LIST", "FILTERBY", "PATTERN", "cl*help"}), "client|help"));
}
