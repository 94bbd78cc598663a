// The ephpm program: one process serving a PHP application over HTTP, with
// the store inside it (reached from PHP through ephpm_kv_* and the "ephpm"
// session handler) and, optionally, over RESP.
//
//   ephpm --docroot examples/                    HTTP on 127.0.0.1:8131
//   ephpm --docroot app/ --resp 127.0.0.1:6380   ... and RESP
//   ephpm --resp 127.0.0.1:6380                  RESP only
//   ephpm ... --cluster-node-id b --cluster-join 127.0.0.1:7000
//                                                one node of a cluster

#include <signal.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <algorithm>
#include <vector>

#include "ephpm/host_port.h"
#include "ephpm/kv_ops_store.h"
#include "ephpm/number_text.h"
#include "ephpm/settings.h"
#include "ephpm/store.h"
#include "node.h"
#include "resp/server.h"

#ifdef EPHPM_CLUSTER_TEST_HOOKS
#include "fault_command.h"  // ephpm-faulty, the fault test's program, only
#endif
#ifdef EPHPM_WITH_PHP
#include "http_server.h"
#include "php_host.h"
#endif

namespace {

const char kUsage[] =
    "usage: ephpm [--docroot DIR] [--listen ADDR] [--resp ADDR] [options]\n"
    "\n"
    "Serves a PHP application over HTTP with an in-process key-value store\n"
    "(ephpm_kv_* functions, session.save_handler=ephpm), optionally over RESP too.\n"
    "\n"
    "  --docroot DIR            serve the PHP application in DIR over HTTP\n"
    "  --listen ADDR            HTTP address (default 127.0.0.1:8131; port 0 picks a free\n"
    "                           port; the bound address is printed)\n"
    "  --resp ADDR              also serve the store over RESP2 on ADDR (loopback advised)\n"
    "  --resp-password PASS     require AUTH PASS from RESP clients\n"
    "  --resp-max-clients N     refuse RESP connections beyond N (default 10000)\n"
    "  --resp-timeout SECONDS   close RESP clients idle this long (default 0: never)\n"
    "  -d NAME=VALUE            a PHP INI setting (repeatable); ephpm.* settings build the\n"
    "                           store: memory_limit, eviction_policy, compression,\n"
    "                           compression_threshold, compression_level, max_value_size,\n"
    "                           shards\n"
    "  -c FILE                  load this php.ini (default: none, not even the system's)\n"
    "  --workers N              PHP worker threads (default: one per core with a\n"
    "                           thread-safe PHP; a non-thread-safe PHP has exactly one)\n"
    "  --memory-limit SIZE      shorthand for -d ephpm.memory_limit=SIZE\n"
    "  --max-body-size SIZE     largest request body (default 64M; larger: 413)\n"
    "  --max-header-size SIZE   largest request head (default 16K; larger: 431)\n"
    "  --request-timeout SECS   time to receive a request (default 60; then 408)\n"
    "  --cluster-node-id ID     be a node of a cluster, named ID (unique in the cluster)\n"
    "  --cluster-listen ADDR    the node-to-node address (default 127.0.0.1:0: a free\n"
    "                           port on loopback; the bound address is printed)\n"
    "  --cluster-join ADDR,...  members to join through (any one that answers is enough)\n"
    "  --cluster-probe-interval MS     failure detection period (default 200)\n"
    "  --cluster-suspicion-timeout MS  suspect to dead (default 1000)\n"
    "  --cluster-request-timeout MS    a node-to-node request (default 500)\n"
    "  --cluster-max-clock-skew MS     how far members' clocks may differ (default 100;\n"
    "                                  less than the request timeout)\n"
    "  --log-level LEVEL        error, warn, info (default; one access line per request)\n"
    "                           or debug\n"
    "  -h, --help               this text\n"
    "\n"
    "SIGINT and SIGTERM let requests in flight finish, then exit 0.\n";

enum class Level { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
Level g_level = Level::kInfo;
std::mutex g_log_mu;

void Log(Level level, std::string_view msg) {
  if (level > g_level) return;
  static const char* const names[] = {"error", "warn", "info", "debug"};
  char when[32];
  const time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::lock_guard<std::mutex> l(g_log_mu);
  std::fprintf(stderr, "%s %s %.*s\n", when, names[static_cast<int>(level)],
               static_cast<int>(msg.size()), msg.data());
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "ephpm: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ephpm::StoreOptions store_options;
  ephpm::resp::RespServerOptions resp;
  bool want_resp = false;
  std::string docroot, listen = "127.0.0.1:8131", ini_file;
  // The host's defaults; -d settings come after them and win.
  std::vector<std::pair<std::string, std::string>> ini = {{"session.save_handler", "ephpm"}};
  uint64_t max_body = 64ull << 20, max_header = 16 << 10;
  int64_t request_timeout = 60;
  int64_t workers = 0;  // 0: the default for this PHP
  ephpm::cluster::ClusterOptions cluster;
  bool want_cluster = false, cluster_flags = false;

  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    auto value = [&]() {
      if (i + 1 >= args.size()) return false;
      v = args[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--docroot") {
      if (!value()) return Fail("--docroot needs a directory");
      docroot = v;
    } else if (a == "--listen") {
      if (!value()) return Fail("--listen needs host:port");
      listen = v;
    } else if (a == "--resp") {
      if (!value() || !ephpm::SplitHostPort(v, &resp.bind_address, &resp.port)) {
        return Fail("--resp needs host:port, e.g. 127.0.0.1:6380");
      }
      want_resp = true;
    } else if (a == "--resp-password") {
      if (!value()) return Fail("--resp-password needs a value");
      resp.password = v;
    } else if (a == "--workers") {
      if (!value() || !ephpm::ParseInt64(v, &workers) || workers < 1 || workers > 1024) {
        return Fail("--workers needs a number from 1 to 1024");
      }
    } else if (a == "--resp-max-clients" || a == "--resp-timeout" || a == "--request-timeout") {
      int64_t n = 0;
      if (!value() || !ephpm::ParseInt64(v, &n) || n < 0) {
        return Fail(a + " needs a non-negative integer");
      }
      if (a == "--resp-max-clients") resp.max_clients = static_cast<size_t>(n);
      if (a == "--resp-timeout") resp.idle_timeout_seconds = n;
      if (a == "--request-timeout") {
        if (n == 0) return Fail("--request-timeout needs at least 1 second");
        request_timeout = n;
      }
    } else if (a == "--max-body-size" || a == "--max-header-size") {
      uint64_t n = 0;
      if (!value() || !ephpm::ParseByteSize(v, &n) || n == 0) {
        return Fail(a + " needs a size such as 16K or 64M");
      }
      (a == "--max-body-size" ? max_body : max_header) = n;
    } else if (a == "-d" || a == "--memory-limit") {
      if (!value()) return Fail(a + " needs a value");
      std::string name = "ephpm.memory_limit", setting = v;
      if (a == "-d") {
        const size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0) return Fail("-d needs NAME=VALUE, got '" + v + "'");
        name = v.substr(0, eq);
        setting = v.substr(eq + 1);
      }
      if (name.compare(0, 6, "ephpm.") == 0) {
        // A store setting: applied here, where the store is built, and passed
        // on to PHP so that ini_get() and phpinfo() show it.
        const std::string short_name = name.substr(6);
        const bool is_store_setting =
            short_name.compare(0, 8, "session_") != 0;
        if (is_store_setting) {
          const std::string err = ephpm::ApplySetting(short_name, setting, &store_options);
          if (!err.empty()) return Fail(name + " " + err);
        }
      }
      ini.emplace_back(name, setting);
    } else if (a == "-c") {
      if (!value()) return Fail("-c needs a php.ini path");
      ini_file = v;
    } else if (a == "--cluster-node-id") {
      if (!value() || v.empty() || v.size() > 255 ||
          v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "0123456789._-") != std::string::npos) {
        return Fail("--cluster-node-id needs a name of 1 to 255 letters, digits, '.', '_' "
                    "or '-'");
      }
      cluster.node_id = v;
      want_cluster = true;
    } else if (a == "--cluster-listen") {
      if (!value()) return Fail("--cluster-listen needs host:port");
      cluster.listen = v;
      cluster_flags = true;
    } else if (a == "--cluster-join") {
      if (!value() || v.empty()) return Fail("--cluster-join needs host:port[,host:port...]");
      for (size_t start = 0; start <= v.size();) {
        size_t comma = v.find(',', start);
        if (comma == std::string::npos) comma = v.size();
        std::string one = v.substr(start, comma - start);
        std::string host;
        uint16_t port = 0;
        if (!ephpm::SplitHostPort(one, &host, &port) || port == 0) {
          return Fail("--cluster-join: '" + one + "' is not host:port");
        }
        cluster.join.push_back(one);
        start = comma + 1;
      }
      cluster_flags = true;
    } else if (a == "--cluster-max-clock-skew") {
      int64_t n = 0;
      if (!value() || !ephpm::ParseInt64(v, &n) || n < 0 || n > 3600000) {
        return Fail(a + " needs milliseconds from 0 to 3600000");
      }
      cluster.max_clock_skew_ms = n;
      cluster_flags = true;
    } else if (a == "--cluster-probe-interval" || a == "--cluster-suspicion-timeout" ||
               a == "--cluster-request-timeout") {
      int64_t n = 0;
      if (!value() || !ephpm::ParseInt64(v, &n) || n < 1 || n > 3600000) {
        return Fail(a + " needs milliseconds from 1 to 3600000");
      }
      if (a == "--cluster-probe-interval") {
        cluster.probe_interval_ms = n;
        cluster.probe_timeout_ms = std::max<int64_t>(1, n / 2);
      }
      if (a == "--cluster-suspicion-timeout") cluster.suspicion_timeout_ms = n;
      if (a == "--cluster-request-timeout") cluster.request_timeout_ms = n;
      cluster_flags = true;
    } else if (a == "--log-level") {
      if (!value()) return Fail("--log-level needs a level");
      if (v == "error") g_level = Level::kError;
      else if (v == "warn") g_level = Level::kWarn;
      else if (v == "info") g_level = Level::kInfo;
      else if (v == "debug") g_level = Level::kDebug;
      else return Fail("--log-level must be error, warn, info or debug");
    } else {
      std::fputs(kUsage, stderr);
      return Fail("unknown argument '" + a + "'");
    }
  }
  if (docroot.empty() && !want_resp) {
    std::fputs(kUsage, stderr);
    return Fail("nothing to serve: give --docroot DIR and/or --resp ADDR");
  }
  if (cluster_flags && !want_cluster) {
    return Fail("the --cluster-* options need --cluster-node-id");
  }
  if (cluster.max_clock_skew_ms >= cluster.request_timeout_ms) {
    return Fail("--cluster-max-clock-skew (" + std::to_string(cluster.max_clock_skew_ms) +
                ") must be less than --cluster-request-timeout (" +
                std::to_string(cluster.request_timeout_ms) +
                "): a routed request would always arrive too late");
  }
  resp.max_bulk_len = store_options.max_value_size;

  // Signals are taken synchronously by this thread; every thread started
  // below inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::string error;
  // The node is built first and stopped last: the store publishes to it and
  // it applies what other nodes publish to the store.
  std::unique_ptr<ephpm::cluster::ClusterNode> node;
  if (want_cluster) {
    node = std::make_unique<ephpm::cluster::ClusterNode>(cluster);
    if (!node->Listen(&error)) return Fail(error);
    store_options.replicator = node.get();
  }
  auto store = ephpm::Store::Create(store_options, &error);
  if (!store) return Fail(error);
  if (node) {
    node->Attach(store.get());
    node->Start();
    std::printf("cluster node %s listening on %s\n", node->id().c_str(),
                node->address().c_str());
  }
  const ephpm_kv_ops ops = ephpm::MakeKvOps(store.get());

#ifdef EPHPM_WITH_PHP
  std::unique_ptr<ephpm::PhpHost> php;
  std::unique_ptr<ephpm::HttpServer> http;
  if (!docroot.empty()) {
    ephpm::PhpHostOptions po;
    po.ini = ini;
    po.ini_file = ini_file;
    po.log = [](std::string_view m) { Log(Level::kError, m); };
    if (ephpm::PhpHost::ThreadSafe()) {
      po.workers = workers > 0 ? static_cast<size_t>(workers)
                               : std::max(1u, std::thread::hardware_concurrency());
    } else if (workers > 1) {
      return Fail("this PHP is not thread-safe: it runs one PHP worker (build the host "
                  "against a thread-safe PHP for --workers, see scripts/build-zts-php.sh)");
    }
    php = ephpm::PhpHost::Start(po, &ops, &error);
    if (!php) return Fail(error);
    ephpm::HttpServerOptions ho;
    if (!ephpm::SplitHostPort(listen, &ho.bind_address, &ho.port)) {
      return Fail("--listen needs host:port, e.g. 127.0.0.1:8131");
    }
    ho.document_root = docroot;
    ho.max_body_bytes = max_body;
    ho.max_header_bytes = max_header;
    ho.request_timeout_seconds = request_timeout;
    ho.access_log = [](std::string_view line) { Log(Level::kInfo, line); };
    ho.error_log = [](std::string_view line) { Log(Level::kError, line); };
    http = std::make_unique<ephpm::HttpServer>(php.get(), ho);
    if (!http->Start(&error)) return Fail(error);
    std::printf("http listening on %s\n", http->address().c_str());
    Log(Level::kInfo, "serving " + docroot + " with " + std::to_string(po.workers) +
                          " PHP worker" + (po.workers == 1 ? "" : "s") +
                          (ephpm::PhpHost::ThreadSafe() ? " (thread-safe PHP)" : ""));
  }
#else
  (void)ops, (void)request_timeout, (void)max_body, (void)max_header, (void)workers;
  if (!docroot.empty()) return Fail("this build has no PHP (configure with EPHPM_BUILD_PHP=ON)");
#endif

  std::unique_ptr<ephpm::resp::RespServer> resp_server;
  if (want_resp) {
    resp_server = std::make_unique<ephpm::resp::RespServer>(store.get(), resp);
    if (node) {
      ephpm::cluster::ClusterNode* n = node.get();
      resp_server->set_extra_info([n] {
        std::string out = "# Ephpm-cluster\r\n";
        const std::string lines = n->Describe();
        for (size_t start = 0; start < lines.size();) {
          size_t nl = lines.find('\n', start);
          if (nl == std::string::npos) nl = lines.size();
          out.append(lines, start, nl - start).append("\r\n");
          start = nl + 1;
        }
        return out;
      });
    }
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    // ephpm-faulty (tests only, never installed): the fault hooks over RESP.
    if (node) {
      ephpm::AddFaultCommand(resp_server.get(), node.get(),
                             [](std::string_view m) { Log(Level::kInfo, m); });
    }
#endif
    if (!resp_server->Start(&error)) return Fail(error);
    std::printf("resp listening on %s\n", resp_server->address().c_str());
  }
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  Log(Level::kInfo, sig == SIGINT ? "SIGINT: finishing requests in flight" : "SIGTERM: finishing requests in flight");
#ifdef EPHPM_WITH_PHP
  if (http) http->Stop();
  php.reset();  // the queue is empty once the HTTP side drained
#endif
  if (resp_server) resp_server->Stop();
  if (node) node->Stop();
  return 0;
}
