// Differential test: the same command scripts go to Debian's redis-server
// 7.0 and to the ephpm program, each started fresh on a free port, and the
// raw reply bytes are compared.  The script format is described in
// tests/resp_diff/README.md.
//
//   resp_diff_test --ephpm PATH [--redis-server PATH] [-v] SCRIPT...
//
// Exit status: 0 when every exchange matched, 1 on any unexpected
// difference (both byte strings are printed, escaped), 2 on a usage or
// setup error, 77 (ctest's SKIP_RETURN_CODE) when redis-server is missing.

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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// How long one reply may take; sanitizer builds are slow.
constexpr int kReplyTimeoutMs = 10000;
// How long a server may take to start listening.
constexpr int kStartTimeoutMs = 30000;
// @rawopen: how long the connection must stay quiet to count as open.
constexpr int kQuietMs = 1000;
// !both= !redis= !ephpm=: how much of a reply the pattern is matched on.
constexpr size_t kRegexWindow = 8192;

struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- text helpers ---------------------------------------------------------------------

std::string Escape(const std::string& s, size_t max = 4000) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    if (out.size() > max) {
      out += "...(" + std::to_string(s.size()) + " bytes)";
      break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\r': out += "\\r"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out + "\"";
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A script token: `quoted` tells whether it was written in double quotes
// (modifiers and directives are recognised only unquoted).
struct Token {
  std::string text;
  bool quoted = false;
};

// Splits a script line into tokens (see README: quoting).
std::vector<Token> Tokenize(const std::string& line) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) return out;
    Token t;
    if (line[i] == '"') {
      t.quoted = true;
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c != '\\') {
          t.text.push_back(c);
          continue;
        }
        if (i >= line.size()) throw std::invalid_argument("backslash at end of line");
        c = line[i++];
        switch (c) {
          case 'n': t.text.push_back('\n'); break;
          case 'r': t.text.push_back('\r'); break;
          case 't': t.text.push_back('\t'); break;
          case '0': t.text.push_back('\0'); break;
          case '\\': t.text.push_back('\\'); break;
          case '"': t.text.push_back('"'); break;
          case 'x': {
            if (i + 2 > line.size() || HexDigit(line[i]) < 0 || HexDigit(line[i + 1]) < 0) {
              throw std::invalid_argument("bad \\x escape");
            }
            t.text.push_back(static_cast<char>(HexDigit(line[i]) * 16 + HexDigit(line[i + 1])));
            i += 2;
            break;
          }
          default: throw std::invalid_argument(std::string("unknown escape \\") + c);
        }
      }
      if (!closed) throw std::invalid_argument("unterminated quote");
      if (i < line.size() && line[i] != ' ' && line[i] != '\t') {
        throw std::invalid_argument("a closing quote must end the token");
      }
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') t.text.push_back(line[i++]);
      // {N*TEXT}: TEXT repeated N times, for big arguments.
      const std::string& w = t.text;
      const size_t star = w.find('*');
      if (w.size() >= 5 && w.front() == '{' && w.back() == '}' && star != std::string::npos &&
          star > 1 && star + 2 < w.size() &&
          w.find_first_not_of("0123456789", 1) == star) {
        const size_t n = std::stoul(w.substr(1, star - 1));
        const std::string body = w.substr(star + 1, w.size() - star - 2);
        std::string big;
        big.reserve(n * body.size());
        for (size_t k = 0; k < n; ++k) big += body;
        t.text = std::move(big);
        t.quoted = true;  // never a modifier
      }
    }
    out.push_back(std::move(t));
  }
}

// ---- RESP replies -------------------------------------------------------------------

// One reply as a tree: `head` is its first line (for a bulk string, the
// whole bulk with its payload), `kids` the elements of an array.
struct Node {
  std::string head;
  std::vector<Node> kids;

  std::string Bytes() const {
    std::string s = head;
    for (const Node& k : kids) s += k.Bytes();
    return s;
  }
  bool IsArray() const { return !head.empty() && head[0] == '*' && head != "*-1\r\n"; }
};

enum class Parse { kOk, kIncomplete, kMalformed };

// Parses one reply at b[*pos..]; advances *pos past it on kOk.
Parse ParseReply(const std::string& b, size_t* pos, Node* out) {
  const size_t eol = b.find("\r\n", *pos);
  if (eol == std::string::npos) return *pos < b.size() ? Parse::kIncomplete : Parse::kIncomplete;
  if (eol == *pos) return Parse::kMalformed;
  const char type = b[*pos];
  const std::string line = b.substr(*pos, eol + 2 - *pos);
  const std::string body = b.substr(*pos + 1, eol - *pos - 1);
  switch (type) {
    case '+':
    case '-':
    case ':':
    case '_':  // RESP3 (Redis after HELLO 3): null, boolean, double, big number
    case '#':
    case ',':
    case '(':
      out->head = line;
      *pos = eol + 2;
      return Parse::kOk;
    case '$':
    case '=':  // RESP3 verbatim string and blob error
    case '!': {
      char* end = nullptr;
      const long long n = std::strtoll(body.c_str(), &end, 10);
      if (end == body.c_str() || *end != '\0' || n < -1) return Parse::kMalformed;
      if (n == -1) {
        out->head = line;
        *pos = eol + 2;
        return Parse::kOk;
      }
      const size_t total = line.size() + static_cast<size_t>(n) + 2;
      if (b.size() - *pos < total) return Parse::kIncomplete;
      out->head = b.substr(*pos, total);
      if (out->head.compare(total - 2, 2, "\r\n") != 0) return Parse::kMalformed;
      *pos += total;
      return Parse::kOk;
    }
    case '*':
    case '~':  // RESP3 set, push, map (2n elements)
    case '>':
    case '%': {
      char* end = nullptr;
      long long n = std::strtoll(body.c_str(), &end, 10);
      if (end == body.c_str() || *end != '\0' || n < -1) return Parse::kMalformed;
      if (type == '%' && n > 0) n *= 2;
      size_t p = eol + 2;
      Node node;
      node.head = line;
      for (long long k = 0; k < n; ++k) {
        Node kid;
        const Parse r = ParseReply(b, &p, &kid);
        if (r != Parse::kOk) return r;
        node.kids.push_back(std::move(kid));
      }
      *out = std::move(node);
      *pos = p;
      return Parse::kOk;
    }
    default:
      return Parse::kMalformed;
  }
}

// ---- sockets and processes ------------------------------------------------------------

int FreePort() {
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

int ConnectTo(int port) {
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

int MsLeft(Clock::time_point deadline) {
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

std::string ReadFile(const std::string& path) {
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

std::unique_ptr<Server> StartRedis(const Paths& p, const ServerConfig& cfg, int seq) {
  auto s = std::make_unique<Server>();
  s->name = "redis";
  s->log = p.tmp + "/redis-" + std::to_string(seq) + ".log";
  for (int attempt = 0; attempt < 5; ++attempt) {
    s->port = FreePort();
    std::vector<std::string> argv = {
        p.redis, "--port", std::to_string(s->port), "--bind", "127.0.0.1",
        "--databases", "1", "--save", "", "--appendonly", "no", "--daemonize", "no",
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

std::unique_ptr<Server> StartEphpm(const Paths& p, const ServerConfig& cfg, int seq) {
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

std::string Multibulk(const std::vector<std::string>& argv) {
  std::string s = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

// ---- normalisation and checks -------------------------------------------------------

struct Modifiers {
  bool sort = false;        // !sort: array elements in sorted order
  bool sort_pairs = false;  // !sortpairs: flat [k, v, k, v...] array, pairs sorted
  bool scan = false;        // !scan: [cursor, [elements]], elements sorted
  bool scan_pairs = false;  // !scanpairs: [cursor, [k, v, ...]], pairs sorted
  bool scan_all = false;    // !scanall: SCAN iterated to cursor 0, the union compared
  bool closes = false;      // !closes: after the reply the server must close
  bool subseq = false;      // !subseq: ephpm's array is a subsequence of redis's
  std::optional<long long> tolerance;  // !tol=N: integer replies within N
  std::optional<std::string> both_re, redis_re, ephpm_re;  // !both= !redis= !ephpm=
};

void SortKids(Node* n, bool pairs) {
  if (!n->IsArray()) return;
  if (!pairs) {
    std::sort(n->kids.begin(), n->kids.end(),
              [](const Node& a, const Node& b) { return a.Bytes() < b.Bytes(); });
    return;
  }
  if (n->kids.size() % 2 != 0) return;
  std::vector<std::pair<std::string, std::pair<Node, Node>>> ps;
  for (size_t i = 0; i < n->kids.size(); i += 2) {
    ps.push_back({n->kids[i].Bytes() + n->kids[i + 1].Bytes(), {n->kids[i], n->kids[i + 1]}});
  }
  std::sort(ps.begin(), ps.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  n->kids.clear();
  for (auto& p : ps) {
    n->kids.push_back(std::move(p.second.first));
    n->kids.push_back(std::move(p.second.second));
  }
}

Node Normalise(Node n, const Modifiers& m) {
  if (m.sort || m.sort_pairs) SortKids(&n, m.sort_pairs);
  if ((m.scan || m.scan_pairs) && n.IsArray() && n.kids.size() == 2) {
    SortKids(&n.kids[1], m.scan_pairs);
  }
  return n;
}

bool ParseInteger(const std::string& bytes, long long* v) {
  if (bytes.size() < 4 || bytes[0] != ':') return false;
  char* end = nullptr;
  *v = std::strtoll(bytes.c_str() + 1, &end, 10);
  return std::string(end) == "\r\n";
}

// ---- the scripts ------------------------------------------------------------------------

struct Stats {
  int exchanges = 0;
  int failures = 0;
};

class ScriptRun {
 public:
  ScriptRun(const Paths& paths, std::string file, bool verbose, Stats* stats)
      : paths_(paths), file_(std::move(file)), verbose_(verbose), stats_(stats) {}

  void Run() {
    std::ifstream in(file_);
    if (!in) throw SetupError("cannot read " + file_);
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      line_ = lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '#') continue;
      std::vector<Token> toks;
      try {
        toks = Tokenize(line);
      } catch (const std::invalid_argument& e) {
        throw SetupError(Where() + ": " + e.what());
      }
      text_ = line.substr(first);
      if (!toks[0].quoted && toks[0].text[0] == '@') {
        Directive(toks);
      } else {
        Command(toks);
      }
    }
    CheckAlive();
  }

 private:
  std::string Where() const { return file_ + ":" + std::to_string(line_); }

  void EnsureStarted() {
    if (redis_) return;
    static int seq = 0;
    ++seq;
    redis_ = StartRedis(paths_, config_, seq);
    ephpm_ = StartEphpm(paths_, config_, seq);
  }

  void EnsureConnected() {
    EnsureStarted();
    if (!rconn_ || rconn_->closed()) rconn_ = std::make_unique<Conn>(redis_->port);
    if (!econn_ || econn_->closed()) econn_ = std::make_unique<Conn>(ephpm_->port);
  }

  void CheckAlive() {
    if (!ephpm_) return;
    if (!ephpm_->child->Alive()) {
      Fail("ephpm exited (status " + std::to_string(ephpm_->child->status()) + "); its log:\n" +
           ephpm_->Tail());
      throw SetupError("ephpm died");
    }
    if (!redis_->child->Alive()) throw SetupError("redis-server exited:\n" + redis_->Tail());
  }

  void Fail(const std::string& what) {
    ++stats_->failures;
    std::cout << "FAIL " << Where() << ": " << text_ << "\n" << what << "\n";
  }

  static std::string Concat(const std::vector<Token>& toks, size_t from) {
    std::string s;
    for (size_t i = from; i < toks.size(); ++i) s += toks[i].text;
    return s;
  }

  void Directive(const std::vector<Token>& toks) {
    const std::string& d = toks[0].text;
    if (d == "@server") {
      if (redis_) throw SetupError(Where() + ": @server must come before any command");
      for (size_t i = 1; i < toks.size(); ++i) {
        const std::string& kv = toks[i].text;
        const size_t eq = kv.find('=');
        const std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (k == "requirepass") {
          config_.password = v;
        } else if (k == "maxmemory") {
          config_.maxmemory = v;
        } else {
          throw SetupError(Where() + ": unknown @server option " + kv);
        }
      }
    } else if (d == "@reconnect") {
      EnsureStarted();
      rconn_.reset();
      econn_.reset();
      EnsureConnected();
    } else if (d == "@sleep") {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::stoi(toks.at(1).text)));
    } else if (d == "@raw" || d == "@rawopen") {
      // A fresh connection per side: the bytes, then all that comes back.
      EnsureStarted();
      const std::string bytes = Concat(toks, 1);
      const bool half_close = d == "@raw";
      auto one = [&](Server& s) {
        Conn c(s.port);
        c.Send(bytes);
        if (half_close) c.HalfClose();
        return c.UntilClose(half_close ? 0 : kQuietMs);
      };
      Compare(one(*redis_), one(*ephpm_), Modifiers{});
    } else if (d == "@send") {
      // Raw bytes on the current connection; N replies read back.
      EnsureConnected();
      const size_t n = std::stoul(toks.at(1).text);
      const std::string bytes = Concat(toks, 2);
      auto one = [&](Conn& c) {
        c.Send(bytes);
        std::string tail;
        std::string s;
        for (const Node& r : c.Replies(n, &tail)) s += r.Bytes();
        if (!tail.empty()) c.Abandon();
        return s + tail;
      };
      Compare(one(*rconn_), one(*econn_), Modifiers{});
    } else {
      throw SetupError(Where() + ": unknown directive " + d);
    }
  }

  Modifiers ParseModifiers(const std::vector<Token>& toks, size_t* first_arg) {
    Modifiers m;
    size_t i = 0;
    for (; i < toks.size() && !toks[i].quoted && toks[i].text[0] == '!'; ++i) {
      const std::string& t = toks[i].text;
      auto value = [&](const char* prefix) -> std::optional<std::string> {
        const size_t n = std::strlen(prefix);
        if (t.compare(0, n, prefix) == 0) return t.substr(n);
        return std::nullopt;
      };
      if (t == "!sort") {
        m.sort = true;
      } else if (t == "!sortpairs") {
        m.sort_pairs = true;
      } else if (t == "!scan") {
        m.scan = true;
      } else if (t == "!scanpairs") {
        m.scan_pairs = true;
      } else if (t == "!scanall") {
        m.scan_all = true;
      } else if (t == "!closes") {
        m.closes = true;
      } else if (t == "!subseq") {
        m.subseq = true;
      } else if (auto v = value("!tol=")) {
        m.tolerance = std::stoll(*v);
      } else if (auto v = value("!both=")) {
        m.both_re = *v;
      } else if (auto v = value("!redis=")) {
        m.redis_re = *v;
      } else if (auto v = value("!ephpm=")) {
        m.ephpm_re = *v;
      } else {
        throw SetupError(Where() + ": unknown modifier " + t);
      }
    }
    *first_arg = i;
    return m;
  }

  // One request on one connection; the reply's bytes (normalised).
  std::string Exchange(Conn& c, const std::vector<std::string>& argv, const Modifiers& m) {
    if (m.scan_all) return ScanAll(c, argv);
    c.Send(Multibulk(argv));
    std::string tail;
    std::vector<Node> r = c.Replies(1, &tail);
    if (r.empty() && tail.find("<closed>") == std::string::npos) c.Abandon();
    std::string s = r.empty() ? tail : Normalise(std::move(r[0]), m).Bytes();
    if (m.closes && !r.empty()) s += c.UntilClose(kQuietMs);
    return s;
  }

  // SCAN/HSCAN iterated from the given cursor until it comes back 0: the
  // union of what came back (HSCAN: field-value pairs), sorted, as one
  // [0, [...]] reply.  An error, or anything but a scan reply, ends it.
  std::string ScanAll(Conn& c, std::vector<std::string> argv) {
    std::string name = argv[0];
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool pairs = name == "hscan";
    const size_t cursor_at = pairs ? 2 : 1;
    std::set<std::string> items;
    size_t elements = 0;
    for (int round = 0; round < 100000; ++round) {
      c.Send(Multibulk(argv));
      std::string tail;
      std::vector<Node> r = c.Replies(1, &tail);
      if (r.empty()) {
        if (tail.find("<closed>") == std::string::npos) c.Abandon();
        return tail;
      }
      const Node& n = r[0];
      if (!n.IsArray() || n.kids.size() != 2 || !n.kids[1].IsArray()) return n.Bytes();
      const std::vector<Node>& got = n.kids[1].kids;
      for (size_t i = 0; i < got.size(); i += pairs ? 2 : 1) {
        std::string item = got[i].Bytes();
        if (pairs && i + 1 < got.size()) item += got[i + 1].Bytes();
        if (items.insert(item).second) elements += pairs ? 2 : 1;
      }
      const std::string& cur = n.kids[0].head;  // "$<len>\r\n<cursor>\r\n"
      const size_t nl = cur.find("\r\n");
      const std::string cursor = cur.substr(nl + 2, cur.size() - nl - 4);
      if (cursor == "0") break;
      argv[cursor_at] = cursor;
    }
    std::string s = "*2\r\n$1\r\n0\r\n*" + std::to_string(elements) + "\r\n";
    for (const std::string& k : items) s += k;
    return s;
  }

  // For !subseq: ephpm's elements appear in redis's, in the same order.
  static bool Subsequence(const std::string& redis, const std::string& ephpm) {
    Node r, e;
    size_t rp = 0, ep = 0;
    if (ParseReply(redis, &rp, &r) != Parse::kOk || ParseReply(ephpm, &ep, &e) != Parse::kOk ||
        rp != redis.size() || ep != ephpm.size() || !r.IsArray() || !e.IsArray() ||
        e.kids.empty()) {
      return false;
    }
    size_t i = 0;
    for (const Node& k : r.kids) {
      if (i < e.kids.size() && k.Bytes() == e.kids[i].Bytes()) ++i;
    }
    return i == e.kids.size();
  }

  void Command(const std::vector<Token>& toks) {
    size_t first = 0;
    const Modifiers m = ParseModifiers(toks, &first);
    if (first >= toks.size()) throw SetupError(Where() + ": modifiers but no command");
    std::vector<std::string> argv;
    for (size_t i = first; i < toks.size(); ++i) argv.push_back(toks[i].text);
    EnsureConnected();
    const std::string r = Exchange(*rconn_, argv, m);
    const std::string e = Exchange(*econn_, argv, m);
    Compare(r, e, m);
  }

  void Compare(const std::string& r, const std::string& e, const Modifiers& m) {
    ++stats_->exchanges;
    if (verbose_) {
      std::cout << Where() << ": " << text_ << "\n  redis: " << Escape(r)
                << "\n  ephpm: " << Escape(e) << "\n";
    }
    auto both = [&](const std::string& why) {
      Fail("  " + why + "\n  redis: " + Escape(r) + "\n  ephpm: " + Escape(e));
    };
    if (m.both_re || m.redis_re || m.ephpm_re) {
      // A listed, legitimate difference: each side against its pattern.
      // The pattern must match the start of the reply (only its first
      // kRegexWindow bytes are searched: libstdc++'s regex recurses per
      // byte), and the reply must be exactly one well-formed reply.
      auto check = [&](const std::string& who, const std::string& got,
                       const std::optional<std::string>& re) {
        if (!re) return;
        const std::string window = got.substr(0, kRegexWindow);
        Node node;
        size_t end = 0;
        if (!std::regex_search(window, std::regex(*re), std::regex_constants::match_continuous)) {
          both(who + "'s reply does not start with /" + *re + "/");
        } else if (ParseReply(got, &end, &node) != Parse::kOk || end != got.size()) {
          both(who + "'s reply is not one whole reply");
        }
      };
      check("redis", r, m.redis_re ? m.redis_re : m.both_re);
      check("ephpm", e, m.ephpm_re ? m.ephpm_re : m.both_re);
      return;
    }
    if (m.subseq) {
      if (!Subsequence(r, e)) both("ephpm's elements are not a subsequence of redis's");
      return;
    }
    if (m.tolerance) {
      long long a = 0, b = 0;
      if (ParseInteger(r, &a) && ParseInteger(e, &b) && std::llabs(a - b) <= *m.tolerance) return;
    }
    if (r != e) both("replies differ");
  }

  const Paths& paths_;
  const std::string file_;
  const bool verbose_;
  Stats* const stats_;
  int line_ = 0;
  std::string text_;
  ServerConfig config_;
  // Servers before connections: members go in reverse, so the connections
  // close before their servers are killed.
  std::unique_ptr<Server> redis_, ephpm_;
  std::unique_ptr<Conn> rconn_, econn_;
};

std::string FindRedis() {
  for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Paths paths;
  bool verbose = false;
  std::vector<std::string> scripts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ephpm" && i + 1 < argc) {
      paths.ephpm = argv[++i];
    } else if (a == "--redis-server" && i + 1 < argc) {
      paths.redis = argv[++i];
    } else if (a == "-v") {
      verbose = true;
    } else if (!a.empty() && a[0] != '-') {
      scripts.push_back(a);
    } else {
      std::cerr << "usage: resp_diff_test --ephpm PATH [--redis-server PATH] [-v] SCRIPT...\n";
      return 2;
    }
  }
  if (paths.ephpm.empty() || scripts.empty()) {
    std::cerr << "usage: resp_diff_test --ephpm PATH [--redis-server PATH] [-v] SCRIPT...\n";
    return 2;
  }
  if (paths.redis.empty()) paths.redis = FindRedis();
  if (paths.redis.empty() || access(paths.redis.c_str(), X_OK) != 0) {
    std::cout << "SKIP: redis-server not found (apt-get install redis-server)\n";
    return 77;
  }
  char tmpl[] = "/tmp/resp_diff.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    std::cerr << "mkdtemp failed\n";
    return 2;
  }
  paths.tmp = tmpl;

  Stats stats;
  int status = 0;
  for (const std::string& script : scripts) {
    try {
      ScriptRun(paths, script, verbose, &stats).Run();  // servers killed on return
    } catch (const std::exception& e) {
      std::cout << "ERROR " << script << ": " << e.what() << "\n";
      status = 2;
    }
  }
  std::system(("rm -rf '" + paths.tmp + "'").c_str());
  std::cout << stats.exchanges << " exchanges checked, " << stats.failures << " unexpected "
            << (stats.failures == 1 ? "difference" : "differences") << "\n";
  if (stats.failures > 0) return 1;
  return status;
}
