#include "resp_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace ephpm_fault {
namespace {

using Clock = std::chrono::steady_clock;

int MsLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

enum class Parse { kOk, kIncomplete, kMalformed };

// Parses one reply at in[*pos...]; advances *pos past it.
Parse ParseReply(const std::string& in, size_t* pos, Reply* out, int depth = 0) {
  if (depth > 8) return Parse::kMalformed;
  const size_t eol = in.find("\r\n", *pos);
  if (eol == std::string::npos) return Parse::kIncomplete;
  if (eol == *pos) return Parse::kMalformed;
  const char type = in[*pos];
  const std::string line = in.substr(*pos + 1, eol - *pos - 1);
  auto number = [&](int64_t* n) {
    if (line.empty()) return false;
    char* end = nullptr;
    errno = 0;
    *n = std::strtoll(line.c_str(), &end, 10);
    return errno == 0 && *end == '\0';
  };
  switch (type) {
    case '+':
    case '-':
      out->kind = type == '+' ? Reply::kStatus : Reply::kError;
      out->str = line;
      *pos = eol + 2;
      return Parse::kOk;
    case ':':
      out->kind = Reply::kInt;
      if (!number(&out->num)) return Parse::kMalformed;
      *pos = eol + 2;
      return Parse::kOk;
    case '$': {
      int64_t len = 0;
      if (!number(&len) || len < -1) return Parse::kMalformed;
      if (len == -1) {
        out->kind = Reply::kNil;
        *pos = eol + 2;
        return Parse::kOk;
      }
      const size_t need = eol + 2 + static_cast<size_t>(len) + 2;
      if (in.size() < need) return Parse::kIncomplete;
      if (in.compare(need - 2, 2, "\r\n") != 0) return Parse::kMalformed;
      out->kind = Reply::kBulk;
      out->str = in.substr(eol + 2, static_cast<size_t>(len));
      *pos = need;
      return Parse::kOk;
    }
    case '*': {
      int64_t n = 0;
      if (!number(&n) || n < -1) return Parse::kMalformed;
      size_t p = eol + 2;
      if (n == -1) {
        out->kind = Reply::kNil;
        *pos = p;
        return Parse::kOk;
      }
      out->kind = Reply::kArray;
      out->elems.assign(static_cast<size_t>(n), Reply{});
      for (auto& e : out->elems) {
        const Parse r = ParseReply(in, &p, &e, depth + 1);
        if (r != Parse::kOk) return r;
      }
      *pos = p;
      return Parse::kOk;
    }
    default:
      return Parse::kMalformed;
  }
}

// Appends argv as a RESP array of bulk strings.
void AppendCommand(const std::vector<std::string>& argv, std::string* req) {
  *req += "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& a : argv) *req += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
}

}  // namespace

std::string Reply::Text() const {
  switch (kind) {
    case kStatus: return "+" + str;
    case kError: return "-" + str;
    case kInt: return ":" + std::to_string(num);
    case kBulk: return "$" + (str.size() > 60 ? str.substr(0, 60) + "..." : str);
    case kNil: return "(nil)";
    case kArray: return "*" + std::to_string(elems.size());
  }
  return "?";
}

bool RespClient::Connect(uint16_t port, int timeout_ms, std::string* error) {
  Close();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int r = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  if (r != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    r = ::poll(&p, 1, timeout_ms);
    int so_error = 0;
    socklen_t len = sizeof so_error;
    if (r == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) == 0 && so_error == 0) {
      r = 0;
    } else {
      errno = r == 0 ? ETIMEDOUT : (so_error != 0 ? so_error : errno);
      r = -1;
    }
  }
  if (r != 0) {
    *error = std::string("connect: ") + std::strerror(errno);
    ::close(fd);
    return false;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  fd_ = fd;
  in_.clear();
  return true;
}

void RespClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  in_.clear();
}

bool RespClient::Call(const std::vector<std::string>& argv, int timeout_ms, Reply* out,
                      std::string* error) {
  if (fd_ < 0) {
    *error = "not connected";
    return false;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string req;
  AppendCommand(argv, &req);
  return Send(req, deadline, error) && Read(deadline, out, error);
}

bool RespClient::Pipeline(const std::vector<std::vector<std::string>>& commands, int timeout_ms,
                          const std::function<void(size_t, const Reply&)>& on_reply,
                          std::string* error) {
  if (fd_ < 0) {
    *error = "not connected";
    return false;
  }
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string req;
  for (const auto& argv : commands) AppendCommand(argv, &req);
  if (!Send(req, deadline, error)) return false;
  for (size_t i = 0; i < commands.size(); ++i) {
    Reply r;
    if (!Read(deadline, &r, error)) return false;
    on_reply(i, r);
  }
  return true;
}

bool RespClient::Send(const std::string& req, Clock::time_point deadline, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    Close();
    return false;
  };
  for (size_t off = 0; off < req.size();) {
    const ssize_t n = ::send(fd_, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, MsLeft(deadline)) <= 0) return fail("timeout sending");
      continue;
    }
    return fail(std::string("send: ") + std::strerror(errno));
  }
  return true;
}

bool RespClient::Read(Clock::time_point deadline, Reply* out, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why;
    Close();
    return false;
  };
  for (;;) {
    size_t pos = 0;
    Reply r;
    const Parse p = ParseReply(in_, &pos, &r);
    if (p == Parse::kOk) {
      in_.erase(0, pos);
      *out = std::move(r);
      return true;
    }
    if (p == Parse::kMalformed) return fail("malformed reply: " + in_.substr(0, 80));
    pollfd pf{fd_, POLLIN, 0};
    const int ready = ::poll(&pf, 1, MsLeft(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return fail("timeout");
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == 0) return fail("closed by the node");
    if (n < 0) return fail(std::string("recv: ") + std::strerror(errno));
    in_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace ephpm_fault
