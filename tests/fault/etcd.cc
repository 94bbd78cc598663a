// The strict-mode fault run's etcd cluster (etcd.h).

#include "etcd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>

#include "workload.h"

namespace ephpm_fault {

// ---- HTTP and JSON, just enough for etcd's gateway ----------------------------------

bool HttpPost(uint16_t port, const std::string& path, const std::string& body, int timeout_ms,
              std::string* response, std::string* error) {
  const int64_t deadline = NowUs() + static_cast<int64_t>(timeout_ms) * 1000;
  auto left_ms = [&] {
    return static_cast<int>(std::max<int64_t>(0, (deadline - NowUs()) / 1000));
  };
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (errno != EINPROGRESS) {
      *error = std::string("connect: ") + std::strerror(errno);
      return false;
    }
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, left_ms()) != 1) {
      *error = "connect: timeout";
      return false;
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      *error = std::string("connect: ") + std::strerror(err);
      return false;
    }
  }
  const std::string req =
      "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, left_ms()) != 1) {
      *error = "send: timeout";
      return false;
    }
    const ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      *error = std::string("send: ") + std::strerror(errno);
      return false;
    }
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string in;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, left_ms()) != 1) {
      *error = "no whole answer in " + std::to_string(timeout_ms) + " ms";
      return false;
    }
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      *error = std::string("recv: ") + std::strerror(errno);
      return false;
    }
    in.append(buf, static_cast<size_t>(n));
  }
  const size_t head_end = in.find("\r\n\r\n");
  if (in.compare(0, 9, "HTTP/1.1 ") != 0 || head_end == std::string::npos) {
    *error = "malformed answer";
    return false;
  }
  std::string head = in.substr(0, head_end);
  std::string payload = in.substr(head_end + 4);
  for (char& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (head.find("transfer-encoding: chunked") != std::string::npos) {
    std::string out;
    for (size_t at = 0;;) {
      const size_t eol = payload.find("\r\n", at);
      if (eol == std::string::npos) break;
      const size_t n = std::strtoul(payload.substr(at, eol - at).c_str(), nullptr, 16);
      if (n == 0) break;
      out += payload.substr(eol + 2, n);
      at = eol + 2 + n + 2;
    }
    payload = std::move(out);
  }
  if (in.compare(9, 3, "200") != 0) {
    *error = in.substr(0, in.find("\r\n")) + ": " + payload.substr(0, 200);
    return false;
  }
  *response = std::move(payload);
  return true;
}

std::string JsonString(const std::string& json, const std::string& field) {
  const std::string needle = "\"" + field + "\":";
  const size_t at = json.find(needle);
  if (at == std::string::npos) return "";
  size_t v = at + needle.size();
  while (v < json.size() && json[v] == ' ') ++v;
  if (v >= json.size()) return "";
  if (json[v] == '"') {
    const size_t end = json.find('"', v + 1);
    return end == std::string::npos ? "" : json.substr(v + 1, end - v - 1);
  }
  size_t end = v;
  while (end < json.size() && json[end] != ',' && json[end] != '}') ++end;
  return json.substr(v, end - v);
}

std::string Base64(const std::string& in) {
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) |
                       (static_cast<uint8_t>(in[i + 1]) << 8) | static_cast<uint8_t>(in[i + 2]);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += kChars[(v >> 6) & 63];
    out += kChars[v & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    const uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += kChars[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

namespace {

std::string Unbase64(const std::string& in) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : in) {
    int v;
    if (ch >= 'A' && ch <= 'Z')
      v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      v = ch - '0' + 52;
    else if (ch == '+' || ch == '-')
      v = 62;
    else if (ch == '/' || ch == '_')
      v = 63;
    else
      continue;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

// ---- the cluster -------------------------------------------------------------------

EtcdCluster::EtcdCluster(const Config& c, std::string program, const std::vector<uint16_t>& ports,
                         std::string data_root, std::string log_dir)
    : c_(c), program_(std::move(program)) {
  for (size_t k = 0; k < 3; ++k) {
    members_.emplace_back();
    Member& m = members_.back();
    m.name = "m" + std::to_string(k + 1);
    m.client_port = ports[2 * k];
    m.peer_port = ports[2 * k + 1];
    m.data_dir = data_root + "/" + m.name + ".data";
    m.log = log_dir + "/etcd-" + m.name + ".log";
    initial_cluster_ +=
        (k == 0 ? "" : ",") + m.name + "=http://127.0.0.1:" + std::to_string(m.peer_port);
  }
  token_ = "ephpm-fault-" + std::to_string(c.seed) + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(NowUs());
}

EtcdCluster::~EtcdCluster() {
  for (Member& m : members_) m.child.Kill();
}

std::string EtcdCluster::Endpoints() const {
  std::string out;
  for (const Member& m : members_) {
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(m.client_port);
  }
  return out;
}

std::vector<std::string> EtcdCluster::Argv(const Member& m) const {
  const std::string client = "http://127.0.0.1:" + std::to_string(m.client_port);
  const std::string peer = "http://127.0.0.1:" + std::to_string(m.peer_port);
  return {program_,
          "--name",
          m.name,
          "--data-dir",
          m.data_dir,
          "--listen-client-urls",
          client,
          "--advertise-client-urls",
          client,
          "--listen-peer-urls",
          peer,
          "--initial-advertise-peer-urls",
          peer,
          "--initial-cluster",
          initial_cluster_,
          "--initial-cluster-token",
          token_,
          "--initial-cluster-state",
          "new",
          "--heartbeat-interval",
          std::to_string(c_.etcd_heartbeat_ms),
          "--election-timeout",
          std::to_string(c_.etcd_election_ms),
          "--logger",
          "zap",
          "--log-outputs",
          "stderr"};
}

bool EtcdCluster::Start(size_t k, std::string* error) {
  Member& m = members_[k];
  if (!m.child.Spawn(Argv(m), m.log, error)) return false;
  const int64_t until = NowUs() + 20'000'000;
  for (;;) {
    std::string how;
    if (m.child.Exited(&how)) {
      *error = "etcd " + m.name + " exited: " + how + "; its log ends:\n" + Tail(m.log, 15);
      return false;
    }
    if (Status(k, 500).answered) break;
    if (NowUs() > until) {
      m.child.Kill();
      *error = "etcd " + m.name +
               " does not answer on its client port after 20 s; its log ends:\n" + Tail(m.log, 15);
      return false;
    }
    SleepMs(50);
  }
  m.up = true;
  return true;
}

bool EtcdCluster::StartAll(int64_t timeout_ms, std::string* error) {
  // All three at once: the first alone has no quorum and would not answer
  // a health check, but its client port answers a status request.
  for (size_t k = 0; k < members_.size(); ++k) {
    if (!members_[k].child.Spawn(Argv(members_[k]), members_[k].log, error)) return false;
    members_[k].up = true;
  }
  std::string why;
  if (!WaitHealthy(timeout_ms, &why)) {
    *error = "the etcd cluster is not healthy after " + std::to_string(timeout_ms) + " ms: " + why;
    for (const Member& m : members_) *error += "\n-- " + m.log + " (tail)\n" + Tail(m.log, 10);
    return false;
  }
  return true;
}

void EtcdCluster::Kill(size_t k) {
  if (members_[k].child.running()) Mark(k, "SIGKILL");
  members_[k].child.Kill();
  members_[k].up = false;
}

EtcdStatus EtcdCluster::Status(size_t k, int timeout_ms) {
  EtcdStatus s;
  std::string body;
  if (!HttpPost(members_[k].client_port, "/v3/maintenance/status", "{}", timeout_ms, &body,
                &s.error)) {
    return s;
  }
  s.answered = true;
  s.member_id = JsonString(body, "member_id");
  s.leader = JsonString(body, "leader");
  if (s.leader == "0") s.leader.clear();
  return s;
}

int EtcdCluster::Leader() {
  for (size_t k = 0; k < members_.size(); ++k) {
    if (!members_[k].up) continue;
    const EtcdStatus s = Status(k);
    if (s.answered && !s.leader.empty() && s.leader == s.member_id) return static_cast<int>(k);
  }
  return -1;
}

bool EtcdCluster::Healthy(std::string* why) {
  std::set<std::string> leaders;
  for (size_t k = 0; k < members_.size(); ++k) {
    if (!members_[k].up) {
      *why = members_[k].name + " is down";
      return false;
    }
    const EtcdStatus s = Status(k);
    if (!s.answered) {
      *why = members_[k].name + " does not answer: " + s.error;
      return false;
    }
    if (s.leader.empty()) {
      *why = members_[k].name + " knows no leader";
      return false;
    }
    leaders.insert(s.leader);
  }
  if (leaders.size() != 1) {
    *why = "the members name " + std::to_string(leaders.size()) + " different leaders";
    return false;
  }
  return true;
}

bool EtcdCluster::WaitHealthy(int64_t timeout_ms, std::string* why) {
  const int64_t until = NowUs() + timeout_ms * 1000;
  while (!Healthy(why)) {
    if (NowUs() > until) return false;
    SleepMs(50);
  }
  return true;
}

bool EtcdCluster::RangeIds(const std::string& prefix, std::set<std::string>* ids,
                           std::string* error) {
  // range_end: the prefix with its last byte incremented.
  std::string end = prefix;
  end.back() = static_cast<char>(end.back() + 1);
  const std::string body = "{\"key\":\"" + Base64(prefix) + "\",\"range_end\":\"" + Base64(end) +
                           "\",\"keys_only\":true}";
  for (size_t k = 0; k < members_.size(); ++k) {
    if (!members_[k].up) continue;
    std::string json;
    if (!HttpPost(members_[k].client_port, "/v3/kv/range", body, 2000, &json, error)) continue;
    ids->clear();
    for (size_t at = 0; (at = json.find("\"key\":\"", at)) != std::string::npos;) {
      at += 7;
      const size_t q = json.find('"', at);
      if (q == std::string::npos) break;
      const std::string key = Unbase64(json.substr(at, q - at));
      if (key.compare(0, prefix.size(), prefix) == 0) ids->insert(key.substr(prefix.size()));
      at = q;
    }
    return true;
  }
  if (error->empty()) *error = "no etcd member is up";
  return false;
}

std::vector<std::string> EtcdCluster::Crashes() {
  std::vector<std::string> out;
  for (size_t k = 0; k < members_.size(); ++k) {
    std::string how;
    if (!members_[k].up || !members_[k].child.Exited(&how)) continue;
    Event("CRASH: etcd %s exited on its own: %s; its log ends:\n%s", members_[k].name.c_str(),
          how.c_str(), Tail(members_[k].log, 15).c_str());
    out.push_back("etcd " + members_[k].name + ": " + how);
    members_[k].up = false;
    std::string error;
    if (!Start(k, &error))
      Event("could not restart etcd %s: %s", members_[k].name.c_str(), error.c_str());
  }
  return out;
}

MembersWatcher::MembersWatcher(std::vector<uint16_t> client_ports, std::string prefix)
    : ports_(std::move(client_ports)), prefix_(std::move(prefix)) {
  thread_ = std::thread([this] { Loop(); });
}

MembersWatcher::~MembersWatcher() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void MembersWatcher::Loop() {
  std::string end = prefix_;
  end.back() = static_cast<char>(end.back() + 1);
  const std::string body = "{\"key\":\"" + Base64(prefix_) + "\",\"range_end\":\"" + Base64(end) +
                           "\",\"keys_only\":true}";
  std::set<std::string> last;
  bool first = true, unreadable = false;
  size_t next = 0;
  while (!stop_.load()) {
    std::string json, error;
    bool read = false;
    for (size_t i = 0; i < ports_.size() && !read && !stop_.load(); ++i) {
      const uint16_t port = ports_[(next + i) % ports_.size()];
      // Serializable would read a lagging member's copy: linearizable (the
      // default) through any member.
      read = HttpPost(port, "/v3/kv/range", body, 300, &json, &error);
      if (!read) next = (next + 1) % ports_.size();
    }
    if (!read) {
      if (!unreadable) Event("etcd members: unreadable (%s)", error.c_str());
      unreadable = true;
      SleepMs(50);
      continue;
    }
    if (unreadable) Event("etcd members: readable again");
    unreadable = false;
    std::set<std::string> ids;
    for (size_t at = 0; (at = json.find("\"key\":\"", at)) != std::string::npos;) {
      at += 7;
      const size_t q = json.find('"', at);
      if (q == std::string::npos) break;
      const std::string key = Unbase64(json.substr(at, q - at));
      if (key.compare(0, prefix_.size(), prefix_) == 0) ids.insert(key.substr(prefix_.size()));
      at = q;
    }
    if (first || ids != last) {
      std::string text, changes;
      for (const auto& id : ids) {
        text += " " + id;
        if (!first && last.count(id) == 0) changes += " " + id + " back";
      }
      for (const auto& id : last) {
        if (ids.count(id) == 0) changes += " " + id + " gone";
      }
      Event("etcd members:%s%s (revision %s)", text.empty() ? " none" : text.c_str(),
            changes.empty() ? "" : (" (" + changes.substr(1) + ")").c_str(),
            JsonString(json, "revision").c_str());
      last = std::move(ids);
      first = false;
    }
    SleepMs(50);
  }
}

void EtcdCluster::Mark(size_t k, const char* what) { MarkLog(members_[k].log, what); }

}  // namespace ephpm_fault
