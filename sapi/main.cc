// The ephpm program.  For now it serves the store over RESP:
//
//   ephpm --resp 127.0.0.1:6380 [--resp-password SECRET] [-d ephpm.memory_limit=64M]
//
// (the HTTP host with PHP workers joins it in later work).

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ephpm/number_text.h"
#include "ephpm/settings.h"
#include "ephpm/store.h"
#include "resp/server.h"

namespace {

const char kUsage[] =
    "usage: ephpm --resp ADDR [options]\n"
    "\n"
    "Serves an in-process key-value store over RESP2 (redis-cli, phpredis, ...).\n"
    "\n"
    "  --resp ADDR              listen for RESP clients on ADDR (host:port; port 0 picks a\n"
    "                           free port; the bound address is printed)\n"
    "  --resp-password PASS     require AUTH PASS (default: no password)\n"
    "  --resp-max-clients N     refuse connections beyond N (default 10000)\n"
    "  --resp-timeout SECONDS   close clients idle this long (default 0: never)\n"
    "  --memory-limit SIZE      shorthand for -d ephpm.memory_limit=SIZE\n"
    "  -d ephpm.NAME=VALUE      a store setting, as in php.ini: memory_limit,\n"
    "                           eviction_policy, compression, compression_threshold,\n"
    "                           compression_level, max_value_size, shards\n"
    "  -h, --help               this text\n";

bool SplitHostPort(const std::string& s, std::string* host, uint16_t* port) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = s.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);  // [::1]:6380
  }
  int64_t p = 0;
  if (!ephpm::ParseInt64(s.substr(colon + 1), &p) || p < 0 || p > 65535) return false;
  *port = static_cast<uint16_t>(p);
  return true;
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

  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) return false;
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--resp") {
      if (!value(&v) || !SplitHostPort(v, &resp.bind_address, &resp.port)) {
        return Fail("--resp needs host:port, e.g. 127.0.0.1:6380");
      }
      want_resp = true;
    } else if (a == "--resp-password") {
      if (!value(&resp.password)) return Fail("--resp-password needs a value");
    } else if (a == "--resp-max-clients" || a == "--resp-timeout") {
      int64_t n = 0;
      if (!value(&v) || !ephpm::ParseInt64(v, &n) || n < 0) {
        return Fail(a + " needs a non-negative integer");
      }
      if (a == "--resp-max-clients") {
        resp.max_clients = static_cast<size_t>(n);
      } else {
        resp.idle_timeout_seconds = n;
      }
    } else if (a == "--memory-limit" || a == "-d") {
      if (!value(&v)) return Fail(a + " needs a value");
      std::string name = "memory_limit", setting = v;
      if (a == "-d") {
        const size_t eq = v.find('=');
        if (eq == std::string::npos || v.compare(0, 6, "ephpm.") != 0) {
          return Fail("-d needs ephpm.NAME=VALUE, got '" + v + "'");
        }
        name = v.substr(6, eq - 6);
        setting = v.substr(eq + 1);
      }
      const std::string err = ephpm::ApplySetting(name, setting, &store_options);
      if (!err.empty()) return Fail("ephpm." + name + " " + err);
    } else {
      std::fputs(kUsage, stderr);
      return Fail("unknown argument '" + a + "'");
    }
  }
  if (!want_resp) {
    std::fputs(kUsage, stderr);
    return Fail("nothing to serve: give --resp ADDR");
  }
  resp.max_bulk_len = store_options.max_value_size;

  // Signals are taken synchronously by this thread; the server's threads
  // inherit the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::string error;
  auto store = ephpm::Store::Create(store_options, &error);
  if (!store) return Fail(error);
  ephpm::resp::RespServer server(store.get(), resp);
  if (!server.Start(&error)) return Fail(error);
  std::printf("resp listening on %s\n", server.address().c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  server.Stop();
  return 0;
}
