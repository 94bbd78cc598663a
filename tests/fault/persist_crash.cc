// The persistence crash test with real processes (issue 14).
//
//   persist_crash_test --ephpm PATH [--iterations 12] [--seed N] [--modes always,everysec]
//                      [--writers 4] [--pipelined-writers 1] [--window-ms 2000]
//                      [--rewrite-every 3]
//                      [--load-kill-every 4] [--host-arg ARG]... [--keep]
//   persist_crash_test --disk-full --ephpm PATH [--modes always,everysec] [--php] [--keep]
//
// Crash mode: per fsync mode, one `ephpm --resp --data-dir D --fsync MODE`;
// writer threads (one connection each; one sends batches of pipelined
// requests) SET, INCR, HSET, DEL, EXPIRE keys of their own with values nobody else sends
// ("w<writer>-<seq>") and record every acknowledgement with its time; after 200-1500 ms (drawn from
// the seed) the host gets SIGKILL, sometimes right after a BGREWRITEAOF, so that a snapshot is
// being written when it dies.  It is restarted on the same data dir and the store is read back and
// judged (persist_checker.h): it must load; with `always` every acknowledged write is there; with
// `everysec` every missing one was acknowledged within --window-ms of the
// kill; nothing holds a value nobody wrote.  What was read becomes the next
// iteration's starting state, so crashes and restarts compound.
//
// Disk-full mode: a tmpfs of 2 MB (mount(2): needs root; exit 77, a skip,
// when refused) as the data dir's filesystem; writes until the host refuses
// them with -MISCONF, checks reads go on and writes stay refused, grows the
// filesystem, checks writes resume, then SIGTERM, restart, and every
// acknowledged write must be back (and no refused one).  With --php (a host
// built with PHP) a script served by the same host checks that
// ephpm_kv_set returns false with a warning while the disk is full, and
// true again once it has room.
//
// Exit status: 0 clean, 1 a violation, 2 the test could not run, 77 skipped.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "persist_checker.h"
#include "process.h"
#include "resp_client.h"

namespace ephpm_fault {
namespace {

// ---- time and printing -----------------------------------------------------------

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t g_start_us = 0;

void Say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Say(const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::printf("[%8.3f s] %s\n", static_cast<double>(NowUs() - g_start_us) / 1e6, buf);
  std::fflush(stdout);
}

void SleepMs(int64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// ---- settings ----------------------------------------------------------------------

struct Config {
  std::string ephpm;
  int iterations = 12;
  uint64_t seed = 0;
  std::vector<std::string> modes = {"always", "everysec"};
  int writers = 4;
  int pipelined_writers = 1;  // of those, how many send batches of requests
  int delay_min_ms = 200, delay_max_ms = 1500;
  int64_t window_ms = 2000;
  int rewrite_every = 3;    // every n-th iteration sends BGREWRITEAOF before the kill
  int load_kill_every = 4;  // every n-th restart is killed while it loads, then made again
  std::vector<std::string> host_args;
  bool disk_full = false;
  bool php = false;  // disk-full mode: also check the PHP functions over HTTP
  bool keep = false;
};

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

bool ParseArgs(int argc, char** argv, Config* c, std::string* error) {
  c->seed = std::random_device{}();
  c->seed = (c->seed << 32) ^ std::random_device{}();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        *error = a + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    auto number = [&](int64_t* out) {
      std::string v;
      if (!value(&v)) return false;
      char* end = nullptr;
      *out = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || *out < 0) {
        *error = a + ": not a number: " + v;
        return false;
      }
      return true;
    };
    int64_t n = 0;
    std::string v;
    if (a == "--ephpm") {
      if (!value(&c->ephpm)) return false;
    } else if (a == "--iterations") {
      if (!number(&n)) return false;
      c->iterations = static_cast<int>(n);
    } else if (a == "--seed") {
      if (!value(&v)) return false;
      c->seed = std::strtoull(v.c_str(), nullptr, 0);
    } else if (a == "--modes") {
      if (!value(&v)) return false;
      c->modes = Split(v, ',');
      for (const std::string& m : c->modes) {
        if (m != "always" && m != "everysec" && m != "no") {
          *error = "--modes: unknown mode " + m;
          return false;
        }
      }
    } else if (a == "--writers") {
      if (!number(&n)) return false;
      c->writers = static_cast<int>(std::max<int64_t>(1, n));
    } else if (a == "--pipelined-writers") {
      if (!number(&n)) return false;
      c->pipelined_writers = static_cast<int>(n);
    } else if (a == "--window-ms") {
      if (!number(&c->window_ms)) return false;
    } else if (a == "--rewrite-every") {
      if (!number(&n)) return false;
      c->rewrite_every = static_cast<int>(n);
    } else if (a == "--load-kill-every") {
      if (!number(&n)) return false;
      c->load_kill_every = static_cast<int>(n);
    } else if (a == "--host-arg") {
      if (!value(&v)) return false;
      c->host_args.push_back(v);
    } else if (a == "--disk-full") {
      c->disk_full = true;
    } else if (a == "--php") {
      c->php = true;
    } else if (a == "--keep") {
      c->keep = true;
    } else {
      *error = "unknown argument " + a;
      return false;
    }
  }
  if (c->ephpm.empty()) {
    *error = "--ephpm PATH is required";
    return false;
  }
  return true;
}

std::string MakeTempDir(const char* what) {
  std::string dir = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') dir = tmp;
  dir += std::string("/") + what + "-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) return "";
  return dir;
}

void RemoveTree(const std::string& dir) {
  // Test directories only hold plain files and one level of subdirectories.
  const std::string cmd = "rm -rf '" + dir + "'";
  if (std::system(cmd.c_str()) != 0) Say("could not remove %s", dir.c_str());
}

// ---- the host ------------------------------------------------------------------------

class Host {
 public:
  Host(const Config& c, std::string data_dir, std::string log, uint16_t port, std::string mode)
      : c_(c),
        data_dir_(std::move(data_dir)),
        log_(std::move(log)),
        port_(port),
        mode_(std::move(mode)) {}

  // Also serve PHP from docroot over HTTP, on a port the host picks.
  void ServePhp(const std::string& docroot) { docroot_ = docroot; }

  // Starts it and waits until it listens (the data loaded first).  The time
  // from the start to the listening line in *took_us.
  bool Start(int64_t* took_us, std::string* error) {
    std::vector<std::string> argv = {c_.ephpm,     "--resp",  "127.0.0.1:" + std::to_string(port_),
                                     "--data-dir", data_dir_, "--fsync",
                                     mode_};
    argv.insert(argv.end(), c_.host_args.begin(), c_.host_args.end());
    if (!docroot_.empty()) {
      argv.insert(argv.end(), {"--docroot", docroot_, "--listen", "127.0.0.1:0"});
    }
    const size_t from = FileSize(log_);
    const int64_t t0 = NowUs();
    if (!child_.Spawn(argv, log_, error)) return false;
    const std::string rest = WaitForLine(child_, log_, from, "resp listening on ", 60000);
    *took_us = NowUs() - t0;
    if (rest.empty()) {
      std::string how;
      if (child_.Exited(&how)) {
        *error = "ephpm ended (" + how + ") before it listened; its log ends:\n" + Tail(log_, 15);
      } else {
        child_.Kill();
        *error = "ephpm did not listen within 60 s; its log ends:\n" + Tail(log_, 15);
      }
      return false;
    }
    if (!docroot_.empty()) {
      const std::string http = WaitForLine(child_, log_, from, "http listening on ", 1000);
      const size_t colon = http.rfind(':');
      http_port_ = colon == std::string::npos
                       ? 0
                       : static_cast<uint16_t>(std::strtoul(http.c_str() + colon + 1, nullptr, 10));
      if (http_port_ == 0) {
        *error = "no \"http listening on\" line in " + log_;
        return false;
      }
    }
    return true;
  }

  // Starts it without waiting; whether it has listened since is Listened().
  bool Spawn(std::string* error) {
    std::vector<std::string> argv = {c_.ephpm,     "--resp",  "127.0.0.1:" + std::to_string(port_),
                                     "--data-dir", data_dir_, "--fsync",
                                     mode_};
    argv.insert(argv.end(), c_.host_args.begin(), c_.host_args.end());
    spawned_from_ = FileSize(log_);
    return child_.Spawn(argv, log_, error);
  }
  bool Listened() const {
    return !WaitForLine(child_, log_, spawned_from_, "resp listening on ", 0).empty();
  }

  void Kill() { child_.Kill(); }
  uint16_t http_port() const { return http_port_; }
  bool Terminate(std::string* how) { return child_.Terminate(20000, how); }
  bool Exited(std::string* how) { return child_.Exited(how); }
  uint16_t port() const { return port_; }
  const std::string& log() const { return log_; }

 private:
  const Config& c_;
  std::string data_dir_, log_;
  uint16_t port_;
  std::string mode_;
  std::string docroot_;
  uint16_t http_port_ = 0;
  size_t spawned_from_ = 0;
  Child child_;
};

// GET http://127.0.0.1:port/path: the response body, or "" with *error.
std::string HttpGet(uint16_t port, const std::string& path, std::string* error) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return "";
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    *error = std::string("connect: ") + std::strerror(errno);
    ::close(fd);
    return "";
  }
  const std::string req =
      "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  std::string in;
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
    const int64_t deadline = NowUs() + 10 * 1000000;
    char buf[4096];
    while (NowUs() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  const size_t body = in.find("\r\n\r\n");
  if (body == std::string::npos) {
    *error = "no HTTP response (" + std::to_string(in.size()) + " bytes)";
    return "";
  }
  return in.substr(body + 4);
}

// The script the PHP check serves: one ephpm_kv_set and what it said.
constexpr char kFullScript[] = R"php(<?php
$warnings = [];
set_error_handler(function (int $no, string $msg) use (&$warnings) {
    $warnings[] = $msg;
    return true;
});
$key = 'php:' . ($_GET['k'] ?? 'x');
$set = ephpm_kv_set($key, 'from php');
$get = ephpm_kv_get('d:0');
echo 'set=', var_export($set, true), "
";
echo 'get=', $get === false ? 'false' : 'ok', "
";
foreach ($warnings as $w) {
    echo 'warning=', str_replace("
", ' ', $w), "
";
}
)php";

constexpr int kCallTimeoutMs = 10000;

// `ephpm --check-data DIR` (what a start would load, changing nothing), run
// to its end.  Its "name: value" lines, with "exit" = how it ended.
std::map<std::string, std::string> CheckData(const Config& c, const std::string& data_dir,
                                             const std::string& out_path) {
  std::map<std::string, std::string> out;
  ::unlink(out_path.c_str());
  Child child;
  std::string error;
  if (!child.Spawn({c.ephpm, "--check-data", data_dir}, out_path, &error)) {
    out["exit"] = error;
    return out;
  }
  std::string how;
  const int64_t deadline = NowUs() + 60 * 1000000;
  while (!child.Exited(&how) && NowUs() < deadline) SleepMs(5);
  if (how.empty()) {
    child.Kill();
    how = "still running after 60 s";
  }
  out["exit"] = how;
  std::ifstream f(out_path);
  std::string line;
  while (std::getline(f, line)) {
    const size_t colon = line.find(": ");
    if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return out;
}

// A connection for the driver's own reads and commands.
bool Connect(RespClient* client, uint16_t port, std::string* error) {
  client->Close();
  return client->Connect(port, 5000, error);
}

// INFO persistence as name -> value.
std::map<std::string, std::string> InfoPersistence(RespClient* client) {
  std::map<std::string, std::string> out;
  Reply r;
  std::string error;
  if (!client->Call({"INFO", "persistence"}, kCallTimeoutMs, &r, &error) ||
      r.kind != Reply::kBulk) {
    return out;
  }
  for (const std::string& line : Split(r.str, '\n')) {
    std::string l = line;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    const size_t colon = l.find(':');
    if (l.empty() || l[0] == '#' || colon == std::string::npos) continue;
    out[l.substr(0, colon)] = l.substr(colon + 1);
  }
  return out;
}

// The INFO persistence fields worth a line after a restart, in one string.
std::string LoadFigures(const std::map<std::string, std::string>& info) {
  std::string out;
  for (const auto& [k, v] : info) {
    if (k == "loading" || k == "async_loading") continue;
    if (k.find("load") != std::string::npos || k.find("trunc") != std::string::npos) {
      out += (out.empty() ? "" : " ") + k + "=" + v;
    }
  }
  return out.empty() ? "(no load figures in INFO persistence)" : out;
}

// ---- the writers -----------------------------------------------------------------------

constexpr int kStrings = 16, kCounters = 4, kHashes = 4, kFields = 4;
constexpr int64_t kUs = 1000000;

// What a reply must be for the model to hold.
struct Expect {
  Reply::Kind kind;
  int64_t num = 0;
};

class Writer {
 public:
  Writer(int id, bool pipelined, uint64_t seed) : id_(id), pipelined_(pipelined), rng_(seed) {
    for (int i = 0; i < kStrings; ++i) keys_["s:" + Id() + ":" + std::to_string(i)];
    for (int i = 0; i < kCounters; ++i) keys_["c:" + Id() + ":" + std::to_string(i)];
    for (int i = 0; i < kHashes; ++i) keys_["h:" + Id() + ":" + std::to_string(i)];
  }

  std::map<std::string, KeyHistory>& keys() { return keys_; }
  int64_t error_us() const { return error_us_; }
  const std::string& error() const { return error_; }
  int64_t acked() const { return acked_; }

  // Every key starts the next iteration from what the store was read to hold.
  void Rebase(const std::map<std::string, KeyState>& observed) {
    for (auto& [key, h] : keys_) {
      const auto it = observed.find(key);
      h.base = it == observed.end() ? KeyState{} : it->second;
      h.ops.clear();
    }
    error_.clear();
    error_us_ = 0;
    acked_ = 0;
  }

  // Writes until `stop` or the connection ends: one request at a time, or
  // when pipelined, batches of 2-16 sent in one write (the server answers
  // a batch once, after its durability wait with fsync=always).
  void Run(uint16_t port, const std::atomic<bool>* stop) {
    RespClient client;
    std::string error;
    if (!client.Connect(port, 5000, &error)) {
      Fail("cannot connect: " + error);
      return;
    }
    struct Sent {
      std::string key;
      size_t index;  // in keys_[key].ops
      Expect expect;
      int64_t ttl_us;
    };
    std::vector<Sent> batch;
    std::vector<std::vector<std::string>> commands;
    while (!stop->load(std::memory_order_relaxed)) {
      const size_t n = pipelined_ ? 2 + rng_() % 15 : 1;
      batch.clear();
      commands.clear();
      for (size_t i = 0; i < n; ++i) {
        std::vector<std::string> argv;
        KeyOp op;
        Sent s{"", 0, {Reply::kStatus}, 0};
        Next(&argv, &s.key, &op, &s.expect, &s.ttl_us);
        for (const std::string& a : argv) op.what += (op.what.empty() ? "" : " ") + a;
        KeyHistory& h = keys_[s.key];
        s.index = h.ops.size();
        h.ops.push_back(std::move(op));
        batch.push_back(std::move(s));
        commands.push_back(std::move(argv));
      }
      const int64_t sent_us = NowUs();
      size_t answered = 0;
      bool ok = true;
      const bool all = client.Pipeline(
          commands, kCallTimeoutMs,
          [&](size_t i, const Reply& r) {
            const int64_t now = NowUs();
            answered = i + 1;
            const Sent& s = batch[i];
            KeyOp& op = keys_[s.key].ops[s.index];
            op.sent_us = sent_us;
            if (!ok) return;  // after an unexpected reply: unknown outcomes
            if (r.kind != s.expect.kind || (r.kind == Reply::kInt && r.num != s.expect.num)) {
              ok = false;
              Fail("unexpected reply " + r.Text() + " to " + op.what + " (expected " +
                   (s.expect.kind == Reply::kInt ? ":" + std::to_string(s.expect.num) : "+OK") +
                   ")");
              return;
            }
            op.acked = true;
            op.acked_us = now;
            ++acked_;
          },
          &error);
      // Requests without a reply were sent all the same.  Then the expiry
      // each EXPIRE set: the store read its clock between our send and the
      // reply (or, without a reply, the host's death before `now`).  Later
      // requests of the batch on the same key that kept that TTL carry the
      // same interval.
      const int64_t now = NowUs();
      std::map<std::string, std::pair<int64_t, KeyState>> expiry;  // key -> (provisional lo, fixed)
      for (size_t i = 0; i < batch.size(); ++i) {
        KeyOp& op = keys_[batch[i].key].ops[batch[i].index];
        op.sent_us = sent_us;
        auto it = expiry.find(batch[i].key);
        if (batch[i].ttl_us > 0) {
          const int64_t provisional = op.after.expiry_lo_us;
          op.after.expiry_lo_us = sent_us + batch[i].ttl_us;
          op.after.expiry_hi_us = (op.acked ? op.acked_us : now) + batch[i].ttl_us;
          expiry[batch[i].key] = {provisional, op.after};
        } else if (it != expiry.end() && op.after.has_ttl &&
                   op.after.expiry_lo_us == it->second.first) {
          op.after.expiry_lo_us = it->second.second.expiry_lo_us;
          op.after.expiry_hi_us = it->second.second.expiry_hi_us;
        }
      }
      if (!all) {
        Fail("no reply to " + keys_[batch[answered].key].ops[batch[answered].index].what + ": " +
             error);
        return;
      }
      if (!ok) return;
    }
  }

 private:
  std::string Id() const { return std::to_string(id_); }

  std::string NewValue() {
    // Unique per writer and request, with some padding so that the log and
    // the snapshots have some size.
    ++seq_;
    return "w" + Id() + "-" + std::to_string(seq_) + "-" + std::string(24 + seq_ % 40, 'v');
  }

  const KeyState& Current(const std::string& key) {
    const KeyHistory& h = keys_[key];
    return h.ops.empty() ? h.base : h.ops.back().after;
  }

  std::string Pick(const char* prefix, int count) {
    return std::string(prefix) + Id() + ":" + std::to_string(rng_() % static_cast<uint64_t>(count));
  }

  // The next request: its arguments, key, resulting state and reply.  An
  // EXPIRE that sets a TTL gives it in *ttl_us, and Run fills in the expiry
  // once it knows when the reply came.
  void Next(std::vector<std::string>* argv, std::string* key, KeyOp* op, Expect* expect,
            int64_t* ttl_us) {
    const uint64_t r = rng_() % 100;
    if (r < 28) {  // SET (drops a TTL)
      *key = Pick("s:", kStrings);
      op->after.exists = true;
      op->after.value = NewValue();
      *argv = {"SET", *key, op->after.value};
      *expect = {Reply::kStatus};
    } else if (r < 43) {  // INCR (keeps a TTL; counters never get one)
      *key = Pick("c:", kCounters);
      const KeyState& cur = Current(*key);
      const int64_t n = (cur.exists ? std::strtoll(cur.value.c_str(), nullptr, 10) : 0) + 1;
      op->after = cur;
      op->after.exists = true;
      op->after.value = std::to_string(n);
      *argv = {"INCR", *key};
      *expect = {Reply::kInt, n};
    } else if (r < 63) {  // HSET of one field (keeps a TTL)
      *key = Pick("h:", kHashes);
      const std::string field = "f" + std::to_string(rng_() % kFields);
      const KeyState& cur = Current(*key);
      op->after = cur;
      op->after.exists = true;
      const bool added = op->after.fields.count(field) == 0;
      op->after.fields[field] = NewValue();
      *argv = {"HSET", *key, field, op->after.fields[field]};
      *expect = {Reply::kInt, added ? 1 : 0};
    } else if (r < 73) {  // DEL of a string or a hash
      *key = rng_() % 2 ? Pick("s:", kStrings) : Pick("h:", kHashes);
      const bool existed = Current(*key).exists;
      *argv = {"DEL", *key};
      *expect = {Reply::kInt, existed ? 1 : 0};
    } else if (r < 85) {  // EXPIRE, far away: 1 to 24 hours
      *key = rng_() % 2 ? Pick("s:", kStrings) : Pick("h:", kHashes);
      const KeyState& cur = Current(*key);
      const int64_t seconds = 3600 + static_cast<int64_t>(rng_() % 82800);
      op->after = cur;
      if (cur.exists) {
        // Provisional until the reply: any request generated after this
        // one in the same batch copies it (Run fixes them all).
        op->after.has_ttl = true;
        *ttl_us = seconds * kUs;
        op->after.expiry_lo_us = NowUs() + *ttl_us;
        op->after.expiry_hi_us = op->after.expiry_lo_us + kCallTimeoutMs * 1000;
      }
      *argv = {"EXPIRE", *key, std::to_string(seconds)};
      *expect = {Reply::kInt, cur.exists ? 1 : 0};
    } else {  // a new key: the store grows
      *key = "n:" + Id() + ":" + std::to_string(seq_ + 1);
      op->after.exists = true;
      op->after.value = NewValue();
      *argv = {"SET", *key, op->after.value};
      *expect = {Reply::kStatus};
    }
  }

  void Fail(const std::string& why) {
    error_ = why;
    error_us_ = NowUs();
  }

  int id_;
  bool pipelined_;
  std::mt19937_64 rng_;
  uint64_t seq_ = 0;
  std::map<std::string, KeyHistory> keys_;
  std::string error_;
  int64_t error_us_ = 0;
  int64_t acked_ = 0;
};

// ---- reading the store back ----------------------------------------------------------------

// PTTL into the state's expiry interval.  False with *error.
bool ReadTtl(RespClient* client, const std::string& key, KeyState* s, std::string* error) {
  Reply r;
  const int64_t sent = NowUs();
  if (!client->Call({"PTTL", key}, kCallTimeoutMs, &r, error)) return false;
  const int64_t replied = NowUs();
  if (r.kind != Reply::kInt) {
    *error = "PTTL " + key + ": " + r.Text();
    return false;
  }
  if (r.num == -2) {  // gone between the reads: cannot be, nothing else writes
    *error = "PTTL " + key + " says missing right after reading it";
    return false;
  }
  if (r.num >= 0) {
    s->has_ttl = true;
    // PTTL rounds down to the millisecond.
    s->expiry_lo_us = sent + r.num * 1000;
    s->expiry_hi_us = replied + (r.num + 1) * 1000;
  }
  return true;
}

// Reads every key of the writers' models, and KEYS *.
bool ReadBack(RespClient* client, std::vector<std::unique_ptr<Writer>>& writers,
              std::map<std::string, KeyState>* observed, std::vector<std::string>* present,
              std::string* error) {
  observed->clear();
  std::vector<std::string> plain;  // n: keys, read with MGET
  for (auto& w : writers) {
    for (const auto& entry : w->keys()) {
      const std::string& key = entry.first;
      if (key[0] == 'n') {
        plain.push_back(key);
        continue;
      }
      KeyState s;
      Reply r;
      if (key[0] == 'h') {
        if (!client->Call({"HGETALL", key}, kCallTimeoutMs, &r, error)) return false;
        if (r.kind != Reply::kArray || r.elems.size() % 2 != 0) {
          *error = "HGETALL " + key + ": " + r.Text();
          return false;
        }
        for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
          s.fields[r.elems[i].str] = r.elems[i + 1].str;
        }
        s.exists = !s.fields.empty();
      } else {
        if (!client->Call({"GET", key}, kCallTimeoutMs, &r, error)) return false;
        if (r.kind != Reply::kBulk && r.kind != Reply::kNil) {
          *error = "GET " + key + ": " + r.Text();
          return false;
        }
        s.exists = r.kind == Reply::kBulk;
        s.value = r.str;
      }
      if (s.exists && !ReadTtl(client, key, &s, error)) return false;
      (*observed)[key] = s;
    }
  }
  for (size_t i = 0; i < plain.size(); i += 500) {
    std::vector<std::string> argv = {"MGET"};
    const size_t end = std::min(plain.size(), i + 500);
    argv.insert(argv.end(), plain.begin() + static_cast<std::ptrdiff_t>(i),
                plain.begin() + static_cast<std::ptrdiff_t>(end));
    Reply r;
    if (!client->Call(argv, kCallTimeoutMs, &r, error)) return false;
    if (r.kind != Reply::kArray || r.elems.size() != end - i) {
      *error = "MGET: " + r.Text();
      return false;
    }
    for (size_t j = i; j < end; ++j) {
      KeyState s;
      s.exists = r.elems[j - i].kind == Reply::kBulk;
      s.value = r.elems[j - i].str;
      (*observed)[plain[j]] = s;
    }
  }
  Reply keys;
  if (!client->Call({"KEYS", "*"}, kCallTimeoutMs, &keys, error)) return false;
  if (keys.kind != Reply::kArray) {
    *error = "KEYS *: " + keys.Text();
    return false;
  }
  present->clear();
  for (const Reply& k : keys.elems) present->push_back(k.str);
  return true;
}

// ---- crash mode ----------------------------------------------------------------------------

struct ModeTally {
  std::string mode;
  int iterations = 0;
  int64_t acked = 0, unacked = 0, unacked_landed = 0, lost = 0, lost_keys = 0;
  int64_t max_window_us = 0;
  int64_t max_restart_us = 0;
  int rewrite_kills = 0;          // iterations that sent BGREWRITEAOF
  int rewrite_running_kills = 0;  // ... 0-19 ms before the kill, still running then
  int rewrite_done_kills = 0;     // ... that completed before the kill
  int torn_tails = 0;             // kills after which --check-data saw a torn tail
  int load_kills = 0;             // restarts killed while they loaded
  int64_t keys = 0;
  int64_t took_us = 0;
  bool failed = false;
};

// Runs one fsync mode; false when the test could not run (*error), with
// t->failed for a violation.
bool RunMode(const Config& c, const std::string& mode, ModeTally* t, std::string* error) {
  t->mode = mode;
  const int64_t t0 = NowUs();
  const std::string dir = MakeTempDir(("ephpm-persist-crash-" + mode).c_str());
  if (dir.empty()) {
    *error = std::string("mkdtemp: ") + std::strerror(errno);
    return false;
  }
  const std::vector<uint16_t> ports = PickFreePorts(1, c.seed, error);
  if (ports.empty()) return false;
  Host host(c, dir + "/data", dir + "/ephpm.log", ports[0], mode);
  Say("%s: data dir %s/data, log %s, port %u", mode.c_str(), dir.c_str(), host.log().c_str(),
      ports[0]);
  int64_t took = 0;
  if (!host.Start(&took, error)) return false;

  std::mt19937_64 rng(c.seed ^ std::hash<std::string>{}(mode));
  std::vector<std::unique_ptr<Writer>> writers;
  for (int i = 0; i < c.writers; ++i) {
    // The last writers pipeline their requests.
    writers.push_back(std::make_unique<Writer>(
        i, i >= c.writers - c.pipelined_writers,
        c.seed ^ (0x9e3779b97f4a7c15ull * (i + 1)) ^ std::hash<std::string>{}(mode)));
  }
  RespClient control;
  if (!Connect(&control, host.port(), error)) return false;

  for (int it = 1; it <= c.iterations; ++it) {
    const int64_t delay_ms =
        c.delay_min_ms +
        static_cast<int64_t>(rng() % static_cast<uint64_t>(c.delay_max_ms - c.delay_min_ms + 1));
    const bool rewrite = c.rewrite_every > 0 && it % c.rewrite_every == 0;
    const int64_t after_rewrite_ms = rng() % 3 == 0 ? 0 : static_cast<int64_t>(rng() % 20);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (auto& w : writers) {
      threads.emplace_back([&w, &host, &stop] { w->Run(host.port(), &stop); });
    }
    // Rewrite iterations alternate: a BGREWRITEAOF 0-19 ms before the kill
    // (most often still running when the host dies), or one that completes
    // under the writers' load with the kill some time after it (the next
    // start loads the new snapshot and the log begun with it).
    std::string rewrite_note;
    if (rewrite && ++t->rewrite_kills % 2 == 0) {
      SleepMs(delay_ms / 3);
      Reply r;
      std::string e;
      const int64_t t_start = NowUs();
      if (!control.Call({"BGREWRITEAOF"}, kCallTimeoutMs, &r, &e) || r.kind != Reply::kStatus) {
        rewrite_note = ", BGREWRITEAOF refused: " + (e.empty() ? r.Text() : e);
        t->failed = true;
      } else {
        bool done = false;
        while (!done && NowUs() - t_start < 30 * kUs) {
          const auto info = InfoPersistence(&control);
          const auto in = info.find("aof_rewrite_in_progress");
          done = in == info.end() || in->second == "0";
          if (!done) SleepMs(5);
        }
        const int64_t took_us = NowUs() - t_start;
        t->rewrite_done_kills += done ? 1 : 0;
        const int64_t rest_ms = delay_ms - delay_ms / 3 - took_us / 1000;
        SleepMs(std::max<int64_t>(rest_ms, 50));
        rewrite_note = ", BGREWRITEAOF " + std::string(done ? "completed" : "NOT completed") +
                       " in " + std::to_string(took_us / 1000) + " ms, " +
                       std::to_string(std::max<int64_t>(rest_ms, 50)) + " ms before the kill";
      }
    } else if (rewrite) {
      SleepMs(delay_ms);
      Reply r;
      std::string e;
      if (!control.Call({"BGREWRITEAOF"}, kCallTimeoutMs, &r, &e) || r.kind != Reply::kStatus) {
        rewrite_note = ", BGREWRITEAOF refused: " + (e.empty() ? r.Text() : e);
        t->failed = true;
      } else {
        SleepMs(after_rewrite_ms);
        const auto info = InfoPersistence(&control);
        const auto in = info.find("aof_rewrite_in_progress");
        const bool running = in != info.end() && in->second == "1";
        t->rewrite_running_kills += running ? 1 : 0;
        rewrite_note = ", BGREWRITEAOF " + std::to_string(after_rewrite_ms) + " ms before, " +
                       (in == info.end() ? "INFO has no aof_rewrite_in_progress"
                        : running        ? "still running at the kill"
                                         : "done before the kill");
      }
    } else {
      SleepMs(delay_ms);
    }
    const int64_t kill_us = NowUs();
    host.Kill();
    stop = true;
    for (auto& th : threads) th.join();
    control.Close();

    // Writers that stopped before the kill saw something wrong.
    std::string writer_failures;
    for (auto& w : writers) {
      if (!w->error().empty() && w->error_us() < kill_us) {
        writer_failures += "  writer failed before the kill: " + w->error() + "\n";
      }
    }

    // What a start would load, asked before the start makes it.
    const auto checked = CheckData(c, dir + "/data", dir + "/check-data.out");
    std::string check_failure;
    if (checked.count("ok") == 0 || checked.at("ok") != "yes" ||
        checked.at("exit") != "exit status 0") {
      check_failure = "  ephpm --check-data: " + checked.at("exit") +
                      ", ok: " + (checked.count("ok") ? checked.at("ok") : "?") + " " +
                      (checked.count("error") ? checked.at("error") : "") + "\n";
    }
    const std::string torn = checked.count("torn_tail") ? checked.at("torn_tail") : "?";
    if (torn != "none") ++t->torn_tails;

    // Now and then a second crash, while the restart loads (or has just
    // cut a torn tail, removed old files, begun a new log): the data dir
    // must survive that too.
    std::string load_kill_note;
    if (c.load_kill_every > 0 && it % c.load_kill_every == 0) {
      const int64_t within_ms = std::max<int64_t>(1, t->max_restart_us / 1000);
      const int64_t after_ms = static_cast<int64_t>(rng() % static_cast<uint64_t>(within_ms));
      if (!host.Spawn(error)) return false;
      SleepMs(after_ms);
      const bool listened = host.Listened();
      host.Kill();
      ++t->load_kills;
      load_kill_note = "; killed again " + std::to_string(after_ms) + " ms into the restart (" +
                       (listened ? "it had listened" : "still loading") + ")";
    }

    int64_t restart_us = 0;
    if (!host.Start(&restart_us, error)) {
      Say("%s #%d: the store did not load after the crash", mode.c_str(), it);
      t->failed = true;
      *error = "restart after crash " + std::to_string(it) + ": " + *error;
      return false;
    }
    t->max_restart_us = std::max(t->max_restart_us, restart_us);
    if (!Connect(&control, host.port(), error)) return false;
    const auto info = InfoPersistence(&control);

    std::map<std::string, KeyState> observed;
    std::vector<std::string> present;
    if (!ReadBack(&control, writers, &observed, &present, error)) return false;
    std::map<std::string, KeyHistory> all;
    for (auto& w : writers) {
      for (auto& [k, h] : w->keys()) all.emplace(k, h);
    }
    const CrashVerdict v = JudgeCrash(all, observed, present, kill_us, 1500 * 1000);
    std::string why;
    const bool bad = CrashViolated(v, mode == "always", c.window_ms * 1000, &why);
    ++t->iterations;
    t->acked += v.acked;
    t->unacked += v.unacked;
    t->unacked_landed += v.unacked_landed;
    t->lost += v.lost;
    t->lost_keys += v.lost_keys;
    t->max_window_us = std::max(t->max_window_us, v.window_us);
    t->keys = static_cast<int64_t>(present.size());
    if (checked.count("keys") && checked.at("keys") != std::to_string(present.size())) {
      check_failure += "  ephpm --check-data said keys: " + checked.at("keys") +
                       ", the start loaded " + std::to_string(present.size()) + "\n";
    }
    Say("%s #%d: %" PRId64 " ms of writes%s%s; %" PRId64 " acknowledged, %" PRId64
        " in flight (%" PRId64 " landed); lost %" PRId64 " on %" PRId64
        " keys, window %.3f s; restart %.0f ms, %zu keys; torn tail: %s; %s",
        mode.c_str(), it, delay_ms, rewrite_note.c_str(), load_kill_note.c_str(), v.acked,
        v.unacked, v.unacked_landed, v.lost, v.lost_keys, static_cast<double>(v.window_us) / 1e6,
        static_cast<double>(restart_us) / 1e3, present.size(), torn.c_str(),
        LoadFigures(info).c_str());
    if (bad || !writer_failures.empty() || !check_failure.empty()) {
      t->failed = true;
      std::printf("VIOLATION (%s #%d):\n%s%s%s", mode.c_str(), it, why.c_str(),
                  writer_failures.c_str(), check_failure.c_str());
      for (const auto& l : v.never_written) std::printf("  never written: %s\n", l.c_str());
      for (const auto& l : v.unexpected_keys) std::printf("  unexpected key: %s\n", l.c_str());
      for (const auto& l : v.lost_examples) std::printf("  lost: %s\n", l.c_str());
      std::printf("  host log: %s\n", host.log().c_str());
      std::fflush(stdout);
    } else if (v.lost > 0) {
      for (size_t i = 0; i < v.lost_examples.size() && i < 2; ++i) {
        std::printf("  lost (allowed): %s\n", v.lost_examples[i].c_str());
      }
    }
    for (auto& w : writers) w->Rebase(observed);
  }
  std::string how;
  if (!host.Terminate(&how)) Say("%s: SIGTERM: %s", mode.c_str(), how.c_str());
  t->took_us = NowUs() - t0;
  if (!t->failed && !c.keep) RemoveTree(dir);
  return true;
}

int RunCrash(const Config& c) {
  Say("persist_crash_test: seed %" PRIu64 " (replay with --seed %" PRIu64
      "), %d iterations per mode, %d writers, kill after %d-%d ms, window limit %" PRId64 " ms",
      c.seed, c.seed, c.iterations, c.writers, c.delay_min_ms, c.delay_max_ms, c.window_ms);
  std::vector<ModeTally> tallies;
  bool failed = false;
  for (const std::string& mode : c.modes) {
    ModeTally t;
    std::string error;
    if (!RunMode(c, mode, &t, &error)) {
      std::printf("%s: %s\n", t.failed ? "FAIL" : "could not run", error.c_str());
      return t.failed ? 1 : 2;
    }
    failed = failed || t.failed;
    tallies.push_back(t);
  }
  std::printf(
      "\n| fsync | iterations | acknowledged | in flight (landed) | lost (keys) | "
      "largest window | BGREWRITEAOF (running at the kill, completed) | torn tails | "
      "restarts killed | keys at end | slowest restart | time "
      "|\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ModeTally& t : tallies) {
    std::printf("| %s | %d | %" PRId64 " | %" PRId64 " (%" PRId64 ") | %" PRId64 " (%" PRId64
                ") | %.3f s | %d (%d, %d) | %d | %d | %" PRId64 " | %.0f ms | %.1f s |%s\n",
                t.mode.c_str(), t.iterations, t.acked, t.unacked, t.unacked_landed, t.lost,
                t.lost_keys, static_cast<double>(t.max_window_us) / 1e6, t.rewrite_kills,
                t.rewrite_running_kills, t.rewrite_done_kills, t.torn_tails, t.load_kills, t.keys,
                static_cast<double>(t.max_restart_us) / 1e3, static_cast<double>(t.took_us) / 1e6,
                t.failed ? " FAILED" : "");
  }
  std::printf("seed %" PRIu64 ": %s\n", c.seed, failed ? "FAILED" : "clean");
  return failed ? 1 : 0;
}

// ---- disk-full mode ----------------------------------------------------------------------------

constexpr char kMisconf[] = "MISCONF Errors writing to the AOF file: No space left on device";

std::string g_mounted;  // unmounted at exit, however the driver ends normally

void Unmount() {
  if (!g_mounted.empty()) ::umount2(g_mounted.c_str(), MNT_DETACH);
  g_mounted.clear();
}

struct DiskFullCheck {
  int failures = 0;
  void operator()(bool ok, const std::string& what) {
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
    std::fflush(stdout);
    failures += ok ? 0 : 1;
  }
};

// Returns the exit status for this mode (0, 1, 2 or 77).
int RunDiskFull(const Config& c, const std::string& mode) {
  const std::string dir = MakeTempDir(("ephpm-persist-full-" + mode).c_str());
  if (dir.empty()) {
    std::printf("mkdtemp: %s\n", std::strerror(errno));
    return 2;
  }
  const std::string mnt = dir + "/mnt";
  ::mkdir(mnt.c_str(), 0700);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=2m,mode=0700") != 0) {
    std::printf("SKIP: cannot mount a 2 MB tmpfs on %s (%s): needs root\n", mnt.c_str(),
                std::strerror(errno));
    RemoveTree(dir);
    return 77;
  }
  g_mounted = mnt;
  std::string error;
  const std::vector<uint16_t> ports = PickFreePorts(1, c.seed, &error);
  if (ports.empty()) {
    std::printf("%s\n", error.c_str());
    return 2;
  }
  Host host(c, mnt + "/data", dir + "/ephpm.log", ports[0], mode);
  Say("disk full, fsync=%s: data dir %s/data (tmpfs, 2 MB), log %s", mode.c_str(), mnt.c_str(),
      host.log().c_str());
  if (c.php) {
    const std::string docroot = dir + "/docroot";
    ::mkdir(docroot.c_str(), 0700);
    std::ofstream(docroot + "/full.php") << kFullScript;
    host.ServePhp(docroot);
  }
  int64_t took = 0;
  RespClient client;
  if (!host.Start(&took, &error) || !Connect(&client, host.port(), &error)) {
    std::printf("could not start: %s\n", error.c_str());
    Unmount();
    return 2;
  }
  DiskFullCheck check;
  std::map<std::string, std::string> acked;
  std::set<std::string> refused, unknown;
  auto value_of = [](const std::string& key) { return key + ":" + std::string(1000, 'd'); };
  auto set = [&](const std::string& key, Reply* r) {
    return client.Call({"SET", key, value_of(key)}, kCallTimeoutMs, r, &error);
  };

  // 1. Fill the disk.
  std::string first_error;
  int i = 0;
  for (; i < 20000; ++i) {
    const std::string key = "d:" + std::to_string(i);
    Reply r;
    if (!set(key, &r)) {
      check(false, "SET " + key + " got no reply: " + error);
      break;
    }
    if (r.kind == Reply::kStatus) {
      acked[key] = value_of(key);
      continue;
    }
    // With fsync=always the request that meets the failure was applied in
    // memory before its durability wait failed: it stays and is logged once
    // the disk has room (docs/PERSISTENCE.md, "Errors").  Its outcome is
    // unknown to the client; later ones are refused before they apply.
    (mode == "always" ? unknown : refused).insert(key);
    first_error = r.kind == Reply::kError ? r.str : r.Text();
    break;
  }
  check(!first_error.empty(), "writes refused once the 2 MB filesystem is full, after " +
                                  std::to_string(acked.size()) + " acknowledged SETs of 1 KB");
  check(first_error.compare(0, sizeof kMisconf - 1, kMisconf) == 0,
        "the refusal says \"" + std::string(kMisconf) + "\" (got \"" + first_error + "\")");
  auto info = InfoPersistence(&client);
  std::string figures;
  for (const auto& [k, v] : info) {
    if (k.find("status") != std::string::npos || k.find("error") != std::string::npos) {
      figures += " " + k + "=" + v;
    }
  }
  Say("INFO persistence while full:%s", figures.c_str());

  // 2. Reads go on; writes stay refused (a DEL too: it needs the log).
  if (!acked.empty()) {
    for (const std::string& key : {std::string("d:0"), "d:" + std::to_string(acked.size() / 2),
                                   "d:" + std::to_string(acked.size() - 1)}) {
      Reply r;
      const bool ok = client.Call({"GET", key}, kCallTimeoutMs, &r, &error) &&
                      r.kind == Reply::kBulk && r.str == value_of(key);
      check(ok, "GET " + key + " answers its value while the disk is full");
    }
  }
  {
    Reply r;
    const bool ok =
        client.Call({"DEL", "d:0"}, kCallTimeoutMs, &r, &error) && r.IsErrorPrefix("MISCONF");
    check(ok, "DEL d:0 refused with MISCONF while full (got " + (ok ? "" : r.Text() + error) + ")");
    Reply s;
    const bool ok2 = set("d:refused", &s) && s.IsErrorPrefix("MISCONF");
    check(ok2, "SET d:refused refused with MISCONF while full (got " + s.Text() + ")");
    refused.insert("d:refused");
    Reply g;
    const bool ok3 =
        client.Call({"GET", "d:refused"}, kCallTimeoutMs, &g, &error) && g.kind == Reply::kNil;
    check(ok3, "a refused SET left nothing behind (GET d:refused: " + g.Text() + ")");
  }

  // 2b. The PHP functions: false with a warning, reads go on.
  std::set<std::string> php_acked, php_refused;
  auto php_set = [&](const std::string& k, bool want) {
    const std::string body = HttpGet(host.http_port(), "/full.php?k=" + k, &error);
    const bool refused = body.find("set=false") != std::string::npos;
    const bool done = body.find("set=true") != std::string::npos;
    const size_t w = body.find("warning=");
    const std::string warning =
        w == std::string::npos ? "" : body.substr(w + 8, body.find('\n', w) - w - 8);
    (done ? php_acked : php_refused).insert("php:" + k);
    if (!want) {
      check(refused && !warning.empty() && body.find("get=ok") != std::string::npos,
            "PHP while full: ephpm_kv_set returns false with a warning (\"" + warning +
                "\"), ephpm_kv_get still reads" + (body.empty() ? ": " + error : ""));
      check(warning.find("No space left on device") != std::string::npos,
            "the PHP warning gives the reason (No space left on device)");
    } else {
      check(done && warning.empty(),
            "PHP once there is room: ephpm_kv_set returns true without a warning (" +
                (body.empty() ? error : body.substr(0, body.find('\n'))) + ")");
    }
  };
  if (c.php) php_set("full", false);

  // 3. More room: writes resume.
  const int64_t grown_us = NowUs();
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT, "size=64m,mode=0700") != 0) {
    check(false, std::string("remount with 64 MB: ") + std::strerror(errno));
  }
  bool resumed = false;
  int64_t resumed_us = 0;
  for (int attempt = 0; attempt < 200 && !resumed; ++attempt) {
    const std::string key = "d:resume-" + std::to_string(attempt);
    Reply r;
    if (!set(key, &r)) break;
    if (r.kind == Reply::kStatus) {
      acked[key] = value_of(key);
      resumed = true;
      resumed_us = NowUs() - grown_us;
    } else if (r.IsErrorPrefix("MISCONF")) {
      refused.insert(key);
      SleepMs(50);
    } else {
      check(false, "SET " + key + " after the remount: " + r.Text());
      break;
    }
  }
  check(resumed, "writes resume after the filesystem grows (" + std::to_string(resumed_us / 1000) +
                     " ms after the remount)");
  if (c.php && resumed) php_set("resumed", true);
  for (int j = 0; j < 300 && resumed; ++j) {
    const std::string key = "d:after-" + std::to_string(j);
    Reply r;
    if (set(key, &r) && r.kind == Reply::kStatus) {
      acked[key] = value_of(key);
    } else {
      check(false, "SET " + key + " after resuming: " + r.Text() + error);
      break;
    }
  }

  // 4. A clean stop and a start: every acknowledged write is back, no
  // refused one.
  std::string how;
  const bool stopped = host.Terminate(&how) && how == "exit status 0";
  check(stopped, "SIGTERM stops the host cleanly (" + how + ")");
  client.Close();
  int64_t restart_us = 0;
  if (!host.Start(&restart_us, &error) || !Connect(&client, host.port(), &error)) {
    check(false, "restart after the disk was full: " + error);
  } else {
    int64_t missing = 0, wrong = 0;
    std::vector<std::string> keys;
    for (const auto& entry : acked) keys.push_back(entry.first);
    for (const std::string& k : php_acked) acked[k] = "from php";
    refused.insert(php_refused.begin(), php_refused.end());
    keys.insert(keys.end(), php_acked.begin(), php_acked.end());
    keys.insert(keys.end(), refused.begin(), refused.end());
    int64_t refused_present = 0;
    for (size_t k = 0; k < keys.size(); k += 500) {
      std::vector<std::string> argv = {"MGET"};
      const size_t end = std::min(keys.size(), k + 500);
      argv.insert(argv.end(), keys.begin() + static_cast<std::ptrdiff_t>(k),
                  keys.begin() + static_cast<std::ptrdiff_t>(end));
      Reply r;
      if (!client.Call(argv, kCallTimeoutMs, &r, &error) || r.elems.size() != end - k) {
        check(false, "MGET after the restart: " + r.Text() + error);
        break;
      }
      for (size_t j = k; j < end; ++j) {
        const Reply& e = r.elems[j - k];
        if (refused.count(keys[j])) {
          refused_present += e.kind == Reply::kBulk ? 1 : 0;
        } else if (e.kind != Reply::kBulk) {
          ++missing;
        } else if (e.str != acked[keys[j]]) {
          ++wrong;
        }
      }
    }
    check(missing == 0 && wrong == 0,
          "after the restart (" + std::to_string(restart_us / 1000) + " ms) all " +
              std::to_string(acked.size()) + " acknowledged writes are back (" +
              std::to_string(missing) + " missing, " + std::to_string(wrong) + " wrong)");
    check(refused_present == 0, "none of the " + std::to_string(refused.size()) +
                                    " refused writes is there (" + std::to_string(refused_present) +
                                    " are)");
    for (const std::string& key : unknown) {
      Reply r;
      client.Call({"GET", key}, kCallTimeoutMs, &r, &error);
      Say("%s, refused by its durability wait (fsync=always), is %s after the restart", key.c_str(),
          r.kind == Reply::kBulk ? "there" : "absent");
    }
    host.Terminate(&how);
  }
  Unmount();
  if (check.failures > 0) {
    std::printf("host log: %s\n", host.log().c_str());
  } else if (!c.keep) {
    RemoveTree(dir);
  }
  return check.failures > 0 ? 1 : 0;
}

}  // namespace
}  // namespace ephpm_fault

int main(int argc, char** argv) {
  using namespace ephpm_fault;
  g_start_us = NowUs();
  InstallCleanupHandlers();
  Config c;
  std::string error;
  if (!ParseArgs(argc, argv, &c, &error)) {
    std::fprintf(stderr, "persist_crash_test: %s\n", error.c_str());
    return 2;
  }
  if (!c.disk_full) return RunCrash(c);
  std::atexit(Unmount);
  int worst = 0;
  for (const std::string& mode : c.modes) {
    const int rc = RunDiskFull(c, mode);
    if (rc == 77) return 77;
    worst = std::max(worst, rc);
  }
  return worst;
}
