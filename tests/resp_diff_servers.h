// Shared by resp_diff_test.cc: redis-server and ephpm started as child
// processes on free ports, and a connection that reads whole replies.

#ifndef EPHPM_TESTS_RESP_DIFF_SERVERS_H_
#define EPHPM_TESTS_RESP_DIFF_SERVERS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "resp_diff_reply.h"

namespace resp_diff {

using Clock = std::chrono::steady_clock;

// How long one reply may take; sanitizer builds are slow.
constexpr int kReplyTimeoutMs = 10000;
// How long a server may take to start listening.
constexpr int kStartTimeoutMs = 30000;

struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- sockets and processes ------------------------------------------------------------

inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    throw SetupError(std::string("cannot find a free port: ") + std::strerror(errno));
  }
  close(fd);
  return ntohs(a.sin_port);
}

inline int ConnectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

inline int MsLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// A child process, killed (SIGKILL) and reaped when this goes away.
class Child {
 public:
  Child(const std::vector<std::string>& argv, int stdout_fd, const std::string& log_path) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
    if (pid_ == 0) {
      // Dies with the runner, however the runner ends.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, 2);
        if (stdout_fd < 0) dup2(log, 1);
      }
      if (stdout_fd >= 0) dup2(stdout_fd, 1);
      execv(args[0], args.data());
      std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
      _exit(127);
    }
  }
  ~Child() { Kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Whether it is still running.
  bool Alive() {
    if (pid_ <= 0) return false;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      status_ = st;
      return false;
    }
    return true;
  }
  int status() const { return status_; }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What a script asks of both servers (@server).
struct ServerConfig {
  std::string password;
  std::string maxmemory;  // bytes, "" = no limit
};

struct Paths {
  std::string ephpm;
  std::string redis;
  std::string tmp;  // a private directory for logs
};

// One server under test.
struct Server {
  std::string name;
  int port = 0;
  std::string log;
  std::unique_ptr<Child> child;

  std::string Tail() const {
    std::string s = ReadFile(log);
    if (s.size() > 2000) s = "..." + s.substr(s.size() - 2000);
    return s;
  }
};

inline std::unique_ptr<Server> StartRedis(const Paths& p, const ServerConfig& cfg, int seq) {
  auto s = std::make_unique<Server>();
  s->name = "redis";
  s->log = p.tmp + "/redis-" + std::to_string(seq) + ".log";
  for (int attempt = 0; attempt < 5; ++attempt) {
    s->port = FreePort();
    std::vector<std::string> argv = {
        p.redis, "--port", std::to_string(s->port), "--bind", "127.0.0.1",
        "--databases", "16", "--save", "", "--appendonly", "no", "--daemonize", "no",
        "--dir", p.tmp, "--logfile", ""};
    if (!cfg.password.empty()) argv.insert(argv.end(), {"--requirepass", cfg.password});
    if (!cfg.maxmemory.empty()) {
      argv.insert(argv.end(),
                  {"--maxmemory", cfg.maxmemory, "--maxmemory-policy", "noeviction"});
    }
    s->child = std::make_unique<Child>(argv, -1, s->log);
    const auto deadline = Clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
    while (s->child->Alive() && Clock::now() < deadline) {
      const int fd = ConnectTo(s->port);
      if (fd >= 0) {
        close(fd);
        return s;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    s->child->Kill();  // the port was taken meanwhile, or it is too slow: again
  }
  throw SetupError("redis-server did not start; its log:\n" + s->Tail());
}

inline std::unique_ptr<Server> StartEphpm(const Paths& p, const ServerConfig& cfg, int seq) {
  auto s = std::make_unique<Server>();
  s->name = "ephpm";
  s->log = p.tmp + "/ephpm-" + std::to_string(seq) + ".log";
  std::vector<std::string> argv = {p.ephpm, "--resp", "127.0.0.1:0"};
  if (!cfg.password.empty()) argv.insert(argv.end(), {"--resp-password", cfg.password});
  if (!cfg.maxmemory.empty()) argv.insert(argv.end(), {"--memory-limit", cfg.maxmemory});
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw SetupError("pipe failed");
  s->child = std::make_unique<Child>(argv, pipe_fds[1], s->log);
  close(pipe_fds[1]);
  // "resp listening on 127.0.0.1:PORT\n"
  std::string out;
  const auto deadline = Clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
  while (out.find('\n') == std::string::npos) {
    pollfd pfd{pipe_fds[0], POLLIN, 0};
    if (poll(&pfd, 1, MsLeft(deadline)) <= 0) break;
    char buf[256];
    const ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  const size_t colon = out.rfind(':');
  if (out.rfind("resp listening on ", 0) != 0 || colon == std::string::npos) {
    throw SetupError("ephpm did not start: printed " + Escape(out) + "; its log:\n" + s->Tail());
  }
  s->port = std::atoi(out.c_str() + colon + 1);
  return s;
}

// One client connection.
class Conn {
 public:
  explicit Conn(int port) : fd_(ConnectTo(port)) {
    if (fd_ < 0) throw SetupError("cannot connect to port " + std::to_string(port));
  }
  ~Conn() {
    if (fd_ >= 0) close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  bool closed() const { return eof_; }
  // After a timeout or a malformed reply the stream is out of step: the
  // next request goes on a new connection.
  void Abandon() { eof_ = true; }

  void Send(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return;  // the server closed: what it sent is still read below
      }
      off += static_cast<size_t>(n);
    }
  }

  void HalfClose() { shutdown(fd_, SHUT_WR); }

  // Reads until `n` whole replies are buffered, the peer closes, or the
  // timeout.  Returns the replies; *tail gets what was received beyond them
  // (a partial reply) plus "<closed>" / "<timeout>" when that ended it.
  std::vector<Node> Replies(size_t n, std::string* tail) {
    std::vector<Node> got;
    const auto deadline = Clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
    while (true) {
      while (got.size() < n) {
        size_t pos = 0;
        Node node;
        const Parse r = ParseReply(in_, &pos, &node);
        if (r == Parse::kMalformed) {
          *tail = in_ + "<malformed reply>";
          in_.clear();
          return got;
        }
        if (r != Parse::kOk) break;
        in_.erase(0, pos);
        got.push_back(std::move(node));
      }
      if (got.size() == n) return got;
      if (eof_) {
        *tail = in_ + "<closed>";
        in_.clear();
        return got;
      }
      if (!Fill(MsLeft(deadline))) {
        if (eof_) continue;
        *tail = in_ + "<timeout>";
        in_.clear();
        return got;
      }
    }
  }

  // Reads everything until the peer closes (then appends "<closed>") or,
  // when quiet_ms > 0, until nothing arrives for that long (then "<open>").
  std::string UntilClose(int quiet_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(kReplyTimeoutMs);
    while (!eof_) {
      const int wait = quiet_ms > 0 ? std::min(quiet_ms, MsLeft(deadline)) : MsLeft(deadline);
      if (!Fill(wait) && !eof_) {
        std::string s = std::move(in_) + (quiet_ms > 0 ? "<open>" : "<timeout>");
        in_.clear();
        return s;
      }
    }
    std::string s = std::move(in_) + "<closed>";
    in_.clear();
    return s;
  }

 private:
  // Waits up to ms for bytes; false on timeout or EOF (eof_ set).
  bool Fill(int ms) {
    pollfd pfd{fd_, POLLIN, 0};
    const int r = poll(&pfd, 1, ms);
    if (r <= 0) return false;
    char buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      eof_ = true;  // closed or reset
      return false;
    }
    in_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  std::string in_;
  bool eof_ = false;
};

inline std::string Multibulk(const std::vector<std::string>& argv) {
  std::string s = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

}  // namespace resp_diff

#endif  // EPHPM_TESTS_RESP_DIFF_SERVERS_H_
