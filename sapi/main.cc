// The ephpm program: one process serving a PHP application over HTTP, with
// the store inside it (reached from PHP through ephpm_kv_* and the "ephpm"
// session handler) and, optionally, over RESP.
//
//   ephpm --docroot examples/                    HTTP on 127.0.0.1:8131
//   ephpm --docroot app/ --resp 127.0.0.1:6380   ... and RESP
//   ephpm --resp 127.0.0.1:6380                  RESP only
//   ephpm ... --data-dir /var/lib/ephpm          the store survives restarts
//   ephpm --check-data /var/lib/ephpm            what a start would load
//   ephpm ... --cluster-node-id b --cluster-join 127.0.0.1:7000
//                                                one node of a cluster

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ephpm/host_port.h"
#include "ephpm/kv_ops_store.h"
#include "ephpm/store.h"
#include "host_flags.h"
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

using Level = ephpm::LogLevel;
Level g_level = Level::kInfo;
std::mutex g_log_mu;

void Log(Level level, std::string_view msg) {
  if (level > g_level) return;
  char when[32];
  const time_t now = time(nullptr);
  struct tm tm;
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::lock_guard<std::mutex> l(g_log_mu);
  std::fprintf(stderr, "%s %s %.*s\n", when, ephpm::LogLevelName(level),
               static_cast<int>(msg.size()), msg.data());
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "ephpm: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ephpm::HostFlagsResult parsed =
      ephpm::ParseHostFlags(std::vector<std::string>(argv + 1, argv + argc));
  switch (parsed.action) {
    case ephpm::HostFlagsResult::Action::kHelp:
      std::fputs(ephpm::kHostUsage, stdout);
      return 0;
    case ephpm::HostFlagsResult::Action::kError:
      if (parsed.show_usage) std::fputs(ephpm::kHostUsage, stderr);
      return Fail(parsed.error);
    case ephpm::HostFlagsResult::Action::kCheckData: {
      const ephpm::CheckDataReport report =
          ephpm::CheckData(parsed.flags.check_data_dir, parsed.flags.store);
      if (!report.ok) {
        std::fprintf(stderr, "ephpm: %s\n", report.error.c_str());
        return 1;
      }
      std::fputs(ephpm::CheckDataText(report).c_str(), stdout);
      return 0;
    }
    case ephpm::HostFlagsResult::Action::kRun:
      break;
  }
  ephpm::HostFlags& flags = parsed.flags;
  g_level = flags.log_level;

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
  if (flags.want_cluster) {
    node = std::make_unique<ephpm::cluster::ClusterNode>(flags.cluster);
    if (!node->Listen(&error)) return Fail(error);
    flags.store.replicator = node.get();
  }
  // With a data dir this loads it, and refuses (naming the dir) one that
  // cannot be used or that another process holds, before anything is served.
  auto store = ephpm::Store::Create(flags.store, &error);
  if (!store) return Fail(error);
  if (!flags.store.persistence.data_dir.empty()) {
    const ephpm::PersistenceInfo p = store->persistence_info();
    Log(Level::kInfo,
        "persistence: " + flags.store.persistence.data_dir + " (fsync " +
            ephpm::FsyncPolicyName(p.fsync) + "): loaded " + std::to_string(p.loaded_keys) +
            " keys from " + std::to_string(p.loaded_records) + " records in " +
            std::to_string(p.load_ms) + " ms" +
            (p.truncated_bytes > 0
                 ? ", cut a torn tail of " + std::to_string(p.truncated_bytes) + " bytes"
                 : ""));
  }
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
  if (!flags.docroot.empty()) {
    ephpm::PhpHostOptions po;
    po.ini = flags.ini;
    po.ini_file = flags.ini_file;
    po.log = [](std::string_view m) { Log(Level::kError, m); };
    if (ephpm::PhpHost::ThreadSafe()) {
      po.workers = flags.workers > 0 ? static_cast<size_t>(flags.workers)
                               : std::max(1u, std::thread::hardware_concurrency());
    } else if (flags.workers > 1) {
      return Fail("this PHP is not thread-safe: it runs one PHP worker (build the host "
                  "against a thread-safe PHP for --workers, see scripts/build-zts-php.sh)");
    }
    php = ephpm::PhpHost::Start(po, &ops, &error);
    if (!php) return Fail(error);
    ephpm::HttpServerOptions ho;
    if (!ephpm::SplitHostPort(flags.listen, &ho.bind_address, &ho.port)) {
      return Fail("--listen needs host:port, e.g. 127.0.0.1:8131");
    }
    ho.document_root = flags.docroot;
    ho.symlinks = flags.symlinks;
    ho.max_body_bytes = flags.max_body_bytes;
    ho.max_header_bytes = flags.max_header_bytes;
    ho.request_timeout_seconds = flags.request_timeout_seconds;
    ho.access_log = [](std::string_view line) { Log(Level::kInfo, line); };
    ho.error_log = [](std::string_view line) { Log(Level::kError, line); };
    http = std::make_unique<ephpm::HttpServer>(php.get(), ho);
    if (!http->Start(&error)) return Fail(error);
    std::printf("http listening on %s\n", http->address().c_str());
    Log(Level::kInfo, "serving " + flags.docroot + " with " + std::to_string(po.workers) +
                          " PHP worker" + (po.workers == 1 ? "" : "s") +
                          (ephpm::PhpHost::ThreadSafe() ? " (thread-safe PHP)" : ""));
  }
#else
  (void)ops;
  if (!flags.docroot.empty()) {
    return Fail("this build has no PHP (configure with EPHPM_BUILD_PHP=ON)");
  }
#endif

  std::unique_ptr<ephpm::resp::RespServer> resp_server;
  if (flags.want_resp) {
    resp_server = std::make_unique<ephpm::resp::RespServer>(store.get(), flags.resp);
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
  // Returning destroys the store (before the node it publishes to), whose
  // log is flushed and fsynced on the way: never _exit() from here.
  return 0;
}
