// The RESP server in this process, with a real Store, over real loopback
// sockets: framing (split reads, pipelining, inline commands, malformed
// frames), every command's replies, the limits, AUTH, QUIT, the lock
// scenario on a manual clock and many concurrent clients.
//
// Assertions run on the main thread only; helper threads record what they
// saw.  Socket timeouts are guards against a hang, never assertions.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ephpm/clock.h"
#include "ephpm/store.h"
#include "resp/server.h"

namespace {

using ephpm::ManualClock;
using ephpm::Store;
using ephpm::StoreOptions;
using ephpm::resp::RespServer;
using ephpm::resp::RespServerOptions;
using namespace std::string_literals;

// How long a read may wait before the test gives up on the server (a hang
// guard: a correct server answers in microseconds).
constexpr int kGuardMs = 10000;

// "*<n>\r\n$<len>\r\n<arg>\r\n..." for one request.
std::string Encode(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// End of the RESP reply that starts at b[pos], or npos while incomplete.
size_t ReplyEnd(const std::string& b, size_t pos) {
  if (pos >= b.size()) return std::string::npos;
  const size_t cr = b.find("\r\n", pos);
  if (cr == std::string::npos) return std::string::npos;
  const char type = b[pos];
  const size_t after_line = cr + 2;
  if (type == '+' || type == '-' || type == ':') return after_line;
  const long long n = std::stoll(b.substr(pos + 1, cr - pos - 1));
  if (type == '$') {
    if (n < 0) return after_line;
    const size_t end = after_line + static_cast<size_t>(n) + 2;
    return end <= b.size() ? end : std::string::npos;
  }
  if (type == '*') {
    size_t at = after_line;
    for (long long i = 0; i < n; ++i) {
      at = ReplyEnd(b, at);
      if (at == std::string::npos) return at;
    }
    return at;
  }
  throw std::runtime_error("not a RESP reply: " + b.substr(pos, 40));
}

// A blocking client socket that reads whole replies.
class Client {
 public:
  // rcvbuf/sndbuf: small kernel buffers, set before connecting, for the
  // tests that need back-pressure early.
  explicit Client(uint16_t port, int rcvbuf = 0, int sndbuf = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    if (sndbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{kGuardMs / 1000, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      throw std::runtime_error("connect failed: "s + std::strerror(errno));
    }
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // False when the connection failed (reset, closed, or the guard passed).
  bool Send(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // The next whole reply, or "<closed>" / "<timeout>" when none comes.
  std::string Reply() {
    for (;;) {
      const size_t end = ReplyEnd(buf_, 0);
      if (end != std::string::npos) {
        std::string r = buf_.substr(0, end);
        buf_.erase(0, end);
        return r;
      }
      const int got = Fill(kGuardMs);
      if (got == 0) return "<closed>";
      if (got == -2) return "<timeout>";
    }
  }

  std::string Call(const std::vector<std::string>& argv) {
    if (!Send(Encode(argv))) return "<send failed>";
    return Reply();
  }
  std::string Raw(const std::string& bytes) {
    if (!Send(bytes)) return "<send failed>";
    return Reply();
  }

  // Exactly n bytes (fewer if the connection ends first).
  std::string ReadBytes(size_t n) {
    while (buf_.size() < n) {
      if (Fill(kGuardMs) <= 0) break;
    }
    std::string r = buf_.substr(0, std::min(n, buf_.size()));
    buf_.erase(0, r.size());
    return r;
  }

  // Everything until the server closes the connection.  *closed is false
  // when the guard passed with the connection still open.
  std::string ReadToClose(bool* closed) {
    for (;;) {
      const int got = Fill(kGuardMs);
      if (got == 0) {
        *closed = true;
        break;
      }
      if (got == -2) {
        *closed = false;
        break;
      }
    }
    std::string r = std::move(buf_);
    buf_.clear();
    return r;
  }

  // Whether any byte arrives within ms (for "nothing was replied yet").
  bool Readable(int ms) {
    if (!buf_.empty()) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }

  // True when the server has closed (EOF or reset) within the guard.
  bool WaitClosed(int ms = kGuardMs) {
    for (;;) {
      const int got = Fill(ms);
      if (got == 0) return true;
      if (got == -2) return false;
    }
  }

  int fd() const { return fd_; }

 private:
  // >0 bytes appended; 0 the peer closed (EOF or reset); -2 nothing within ms.
  int Fill(int ms) {
    pollfd p{fd_, POLLIN, 0};
    int r;
    do {
      r = ::poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return -2;
    char tmp[65536];
    ssize_t n;
    do {
      n = ::recv(fd_, tmp, sizeof tmp, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return 0;
    buf_.append(tmp, static_cast<size_t>(n));
    return static_cast<int>(n);
  }

  int fd_ = -1;
  std::string buf_;
};

// A Store on a manual clock (no sweeper) served on a free loopback port.
struct Fixture {
  explicit Fixture(RespServerOptions o = {}, StoreOptions so = {}) {
    so.clock = &clock;
    so.sweep_interval_ms = 0;
    std::string error;
    store = Store::Create(so, &error);
    if (!store) throw std::runtime_error(error);
    o.bind_address = "127.0.0.1";
    o.port = 0;
    if (o.io_threads == 0) o.io_threads = 2;
    server = std::make_unique<RespServer>(store.get(), o);
    if (!server->Start(&error)) throw std::runtime_error(error);
  }
  ~Fixture() {
    server->Stop();
    server.reset();
  }
  uint16_t port() const { return server->port(); }

  ManualClock clock;
  std::unique_ptr<Store> store;
  std::unique_ptr<RespServer> server;
};

std::string Err(const std::string& m) { return "-" + m + "\r\n"; }
const std::string kOk = "+OK\r\n";
const std::string kNil = "$-1\r\n";
std::string Int(long long v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Arr(const std::vector<std::string>& items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& i : items) out += i;
  return out;
}
std::string Arity(const std::string& cmd) {
  return Err("ERR wrong number of arguments for '" + cmd + "' command");
}

}  // namespace

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

std::string ProtoErr(const std::string& what) { return Err("ERR Protocol error: " + what); }

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
      {{"SELECT", "1"}, Err("ERR DB index is out of range")},
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
  // COMMAND, COMMAND LIST and COMMAND COUNT agree.
  const std::string names = c.Call({"COMMAND", "LIST"});
  const std::string count = c.Call({"COMMAND", "COUNT"});
  REQUIRE(count.size() > 3);
  CHECK(names.rfind("*" + count.substr(1, count.size() - 3) + "\r\n", 0) == 0);
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
