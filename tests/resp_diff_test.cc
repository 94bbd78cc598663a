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
//
// The pieces: resp_diff_reply.h (tokenizing, parsing and normalising
// replies), resp_diff_servers.h (the two servers and the connections to them);
// this file runs the scripts.

#include <signal.h>
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

#include "resp_diff_servers.h"

using namespace resp_diff;  // NOLINT: the test's own helpers

namespace {

// @rawopen: how long the connection must stay quiet to count as open.
constexpr int kQuietMs = 1000;
// !both= !redis= !ephpm=: how much of a reply the pattern is matched on.
constexpr size_t kRegexWindow = 8192;

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
