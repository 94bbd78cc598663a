// Shared by the RESP server suites (resp_server_test.cc,
// resp_server_limits_test.cc): a server on a manual clock over loopback, a
// blocking client that reads whole replies, and reply builders.

#ifndef EPHPM_TESTS_RESP_SERVER_UTIL_H_
#define EPHPM_TESTS_RESP_SERVER_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/clock.h"
#include "ephpm/replicator.h"
#include "ephpm/store.h"
#include "resp/server.h"
#include "test_util.h"

namespace resp_server_test {

using ephpm_test::KeyOutside;


using ephpm::ManualClock;
using ephpm::Store;
using ephpm::StoreOptions;
using ephpm::resp::DefaultIoThreads;
using ephpm::resp::RespServer;
using ephpm::resp::RespServerOptions;
using namespace std::string_literals;

// How long a read may wait before the test gives up on the server (a hang
// guard: a correct server answers in microseconds).
constexpr int kGuardMs = 10000;

// "*<n>\r\n$<len>\r\n<arg>\r\n..." for one request.
inline std::string Encode(const std::vector<std::string>& argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

inline std::string Bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// End of the RESP reply that starts at b[pos], or npos while incomplete.
inline size_t ReplyEnd(const std::string& b, size_t pos) {
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
// The clock starts at start_ms (persistence tests start it at the wall
// clock's now, so that what a restart loads is judged by a plausible time).
struct Fixture {
  explicit Fixture(RespServerOptions o = {}, StoreOptions so = {},
                   int64_t start_ms = 1'700'000'000'000)
      : clock(start_ms) {
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

inline std::string Err(const std::string& m) { return "-" + m + "\r\n"; }
const std::string kOk = "+OK\r\n";
const std::string kNil = "$-1\r\n";
inline std::string Int(long long v) { return ":" + std::to_string(v) + "\r\n"; }
inline std::string Arr(const std::vector<std::string>& items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& i : items) out += i;
  return out;
}
inline std::string Arity(const std::string& cmd) {
  return Err("ERR wrong number of arguments for '" + cmd + "' command");
}
inline std::string ProtoErr(const std::string& what) { return Err("ERR Protocol error: " + what); }

// Eight shards a database: a transaction or command that holds every shard
// of one (SWAPDB, SORT with BY) stays within ThreadSanitizer's deadlock
// detector, which tracks at most 64 locks per thread.
inline StoreOptions FewShards() {
  StoreOptions so;
  so.shards = 8;
  return so;
}

// A cluster's routing as a transaction or a script sees it: keys that start
// with the same letter have one owner ("a..." and "b..." two owners); keys
// starting "r" are owned by another member.
class TwoOwners : public ephpm::Replicator {
 public:
  bool SameOwner(const std::vector<std::string_view>& keys) override {
    for (std::string_view k : keys) {
      if (k.empty() || keys.front().empty() || k[0] != keys.front()[0]) return false;
    }
    return true;
  }
  std::string RemoteOwner(std::string_view key) override {
    return !key.empty() && key[0] == 'r' ? "10.0.0.2:7000" : "";
  }
};

}  // namespace resp_server_test

#endif  // EPHPM_TESTS_RESP_SERVER_UTIL_H_
