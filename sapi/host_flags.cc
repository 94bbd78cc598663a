// The ephpm program's command line (host_flags.h): the usage text and the
// parser.  The messages are the program's own, word for word.

#include "host_flags.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/host_port.h"
#include "ephpm/number_text.h"
#include "ephpm/settings.h"

namespace ephpm {

const char kHostUsage[] =
    "usage: ephpm [--docroot DIR] [--listen ADDR] [--resp ADDR] [options]\n"
    "\n"
    "Serves a PHP application over HTTP with an in-process key-value store\n"
    "(ephpm_kv_* functions, session.save_handler=ephpm), optionally over RESP too.\n"
    "\n"
    "  --docroot DIR            serve the PHP application in DIR over HTTP\n"
    "  --symlinks follow|root   follow (default, as nginx and Apache): a symlink under DIR\n"
    "                           is served wherever it leads; root: only when it leads\n"
    "                           inside DIR (else 403).  Either way '..' above DIR is\n"
    "                           403, and so is a name starting with '.' in the URL or\n"
    "                           in the path a symlink resolves to\n"
    "  --listen ADDR            HTTP address (default 127.0.0.1:8131; port 0 picks a free\n"
    "                           port; the bound address is printed)\n"
    "  --resp ADDR              also serve the store over RESP2 on ADDR (loopback advised)\n"
    "  --resp-password PASS     require AUTH PASS from RESP clients\n"
    "  --resp-max-clients N     refuse RESP connections beyond N (default 10000)\n"
    "  --resp-timeout SECONDS   close RESP clients idle this long (default 0: never)\n"
    "  --resp-io-threads N      threads serving RESP connections, 1 to 128 (default: one\n"
    "                           fewer than the cores, at least one: the clients, PHP and\n"
    "                           the cluster need a core too; see docs/BENCHMARKS.md)\n"
    "  --busy-reply-threshold MS  a Lua script running longer may be stopped with SCRIPT\n"
    "                           KILL, and commands needing its keys get -BUSY (default 5000)\n"
    "  -d NAME=VALUE            a PHP INI setting (repeatable); ephpm.* settings build the\n"
    "                           store: memory_limit, eviction_policy, compression,\n"
    "                           compression_threshold, compression_level, max_value_size,\n"
    "                           shards, databases, persistence (off|log), data_dir, fsync\n"
    "  --data-dir DIR           keep the store across restarts in DIR (an append-only log\n"
    "                           and snapshots; created when missing; one process at a time)\n"
    "  --fsync MODE             when the log is fsynced: always (a write is answered once\n"
    "                           it is durable), everysec (default) or no (needs --data-dir)\n"
    "  --check-data DIR         print what a start with --data-dir DIR would load, change\n"
    "                           nothing, and exit (1 when a start would refuse the dir)\n"
    "  -c FILE                  load this php.ini (default: none, not even the system's)\n"
    "  --workers N              PHP worker threads (default: one per core with a\n"
    "                           thread-safe PHP; a non-thread-safe PHP has exactly one)\n"
    "  --memory-limit SIZE      shorthand for -d ephpm.memory_limit=SIZE\n"
    "  --databases N            RESP's databases (SELECT 0..N-1; default 16); shorthand\n"
    "                           for -d ephpm.databases=N\n"
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
    "  --cluster-arbiter gossip|etcd   who decides locks: the key's owner among the\n"
    "                           members (gossip, the default) or etcd (strict mode,\n"
    "                           docs/CLUSTER.md)\n"
    "  --etcd-endpoints ADDR,...       etcd's client addresses (strict mode)\n"
    "  --etcd-prefix PREFIX     the cluster's keys in etcd (default /ephpm)\n"
    "  --etcd-timeout MS        one lock operation in etcd, retries included\n"
    "                           (default 1000)\n"
    "  --etcd-lease-ttl SECS    the node's membership lease in etcd (default 5)\n"
    "  --log-level LEVEL        error, warn, info (default; one access line per request)\n"
    "                           or debug\n"
    "  -h, --help               this text\n"
    "\n"
    "SIGINT and SIGTERM let requests in flight finish, then exit 0.\n";
namespace {

// Indexed by LogLevel.
const char* const kLogLevelNames[] = {"error", "warn", "info", "debug"};

using Action = HostFlagsResult::Action;

HostFlagsResult Error(std::string message, bool show_usage = false) {
  HostFlagsResult r;
  r.action = Action::kError;
  r.error = std::move(message);
  r.show_usage = show_usage;
  return r;
}

bool IsNodeIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// What the persistence flags said, checked together after the last one.
struct PersistenceFlags {
  std::string mode;        // -d ephpm.persistence: "", "off" or "log"
  std::string fsync_flag;  // the flag that set the fsync policy, for messages
};

// ephpm.persistence, ephpm.data_dir, ephpm.fsync (also from --data-dir and
// --fsync): the edges' settings, which core's ApplySetting does not know.
// `name` without "ephpm.".  "" when accepted, else the message's tail.
std::string ApplyPersistenceSetting(const std::string& name, const std::string& value, HostFlags* f,
                                    PersistenceFlags* p) {
  if (name == "persistence") {
    // php.ini's parser turns a bare Off into "", as for ephpm.compression.
    if (value.empty() || EqualsIgnoreCase(value, "off")) {
      p->mode = "off";
    } else if (EqualsIgnoreCase(value, "log")) {
      p->mode = "log";
    } else {
      return "must be off or log";
    }
  } else if (name == "data_dir") {
    f->store.persistence.data_dir = value;
  } else {
    std::string lower = value;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!ParseFsyncPolicy(lower, &f->store.persistence.fsync)) {
      return "must be always, everysec or no";
    }
  }
  return "";
}

bool IsPersistenceSetting(const std::string& name) {
  return name == "persistence" || name == "data_dir" || name == "fsync";
}

// -d NAME=VALUE and --memory-limit VALUE (a = the flag, v = its value).
std::string ApplyIni(const std::string& a, const std::string& v, HostFlags* f,
                     PersistenceFlags* p) {
  std::string name = a == "--databases" ? "ephpm.databases" : "ephpm.memory_limit", setting = v;
  if (a == "-d") {
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) return "-d needs NAME=VALUE, got '" + v + "'";
    name = v.substr(0, eq);
    setting = v.substr(eq + 1);
  }
  // A store setting (ephpm.* but not ephpm.session_*) builds the store here
  // and is passed on to PHP as well, so that ini_get() and phpinfo() show it.
  if (name.compare(0, 6, "ephpm.") == 0 && IsPersistenceSetting(name.substr(6))) {
    const std::string err = ApplyPersistenceSetting(name.substr(6), setting, f, p);
    if (!err.empty()) return name + " " + err;
    if (name == "ephpm.fsync") p->fsync_flag = "-d ephpm.fsync";
  } else if (name.compare(0, 6, "ephpm.") == 0 && name.compare(6, 8, "session_") != 0) {
    const std::string err = ApplySetting(name.substr(6), setting, &f->store);
    if (!err.empty()) return name + " " + err;
  }
  f->ini.emplace_back(name, setting);
  return "";
}

// --cluster-join / --etcd-endpoints host:port[,host:port...] into *out.
std::string ApplyAddresses(const std::string& flag, const std::string& v,
                           std::vector<std::string>* out) {
  if (v.empty()) return flag + " needs host:port[,host:port...]";
  for (size_t start = 0; start <= v.size();) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    std::string one = v.substr(start, comma - start);
    std::string host;
    uint16_t port = 0;
    if (!SplitHostPort(one, &host, &port) || port == 0) {
      return flag + ": '" + one + "' is not host:port";
    }
    out->push_back(one);
    start = comma + 1;
  }
  return "";
}

}  // namespace

const char* LogLevelName(LogLevel level) { return kLogLevelNames[static_cast<int>(level)]; }

HostFlagsResult ParseHostFlags(const std::vector<std::string>& args) {
  HostFlagsResult result;
  HostFlags& f = result.flags;
  bool cluster_flags = false;  // some --cluster-* other than --cluster-node-id
  bool check_data = false;     // --check-data given
  PersistenceFlags persistence;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    auto value = [&]() {
      if (i + 1 >= args.size()) return false;
      v = args[++i];
      return true;
    };
    if (a == "-h" || a == "--help") {
      result.action = Action::kHelp;
      return result;
    } else if (a == "--docroot") {
      if (!value()) return Error("--docroot needs a directory");
      f.docroot = v;
    } else if (a == "--symlinks") {
      if (!value() || (v != "follow" && v != "root")) {
        return Error("--symlinks must be follow or root");
      }
      f.symlinks = v == "follow" ? Symlinks::kFollow : Symlinks::kRoot;
    } else if (a == "--listen") {
      if (!value()) return Error("--listen needs host:port");
      f.listen = v;
    } else if (a == "--resp") {
      if (!value() || !SplitHostPort(v, &f.resp.bind_address, &f.resp.port)) {
        return Error("--resp needs host:port, e.g. 127.0.0.1:6380");
      }
      f.want_resp = true;
    } else if (a == "--resp-password") {
      if (!value()) return Error("--resp-password needs a value");
      f.resp.password = v;
    } else if (a == "--workers") {
      if (!value() || !ParseInt64(v, &f.workers) || f.workers < 1 || f.workers > 1024) {
        return Error("--workers needs a number from 1 to 1024");
      }
    } else if (a == "--resp-max-clients" || a == "--resp-timeout" || a == "--request-timeout") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 0) {
        return Error(a + " needs a non-negative integer");
      }
      if (a == "--resp-max-clients") f.resp.max_clients = static_cast<size_t>(n);
      if (a == "--resp-timeout") f.resp.idle_timeout_seconds = n;
      if (a == "--request-timeout") {
        if (n == 0) return Error("--request-timeout needs at least 1 second");
        f.request_timeout_seconds = n;
      }
    } else if (a == "--resp-io-threads") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 1 || n > 128) {
        return Error("--resp-io-threads needs a number from 1 to 128");
      }
      f.resp.io_threads = static_cast<size_t>(n);
    } else if (a == "--busy-reply-threshold") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 0 || n > 86400000) {
        return Error(a + " needs milliseconds from 0 to 86400000");
      }
      f.resp.busy_reply_threshold_ms = n;
    } else if (a == "--max-body-size" || a == "--max-header-size") {
      uint64_t n = 0;
      if (!value() || !ParseByteSize(v, &n) || n == 0) {
        return Error(a + " needs a size such as 16K or 64M");
      }
      (a == "--max-body-size" ? f.max_body_bytes : f.max_header_bytes) = n;
    } else if (a == "-d" || a == "--memory-limit" || a == "--databases") {
      if (!value()) return Error(a + " needs a value");
      const std::string err = ApplyIni(a, v, &f, &persistence);
      if (!err.empty()) return Error(err);
    } else if (a == "--data-dir") {
      if (!value() || v.empty()) return Error("--data-dir needs a directory");
      f.store.persistence.data_dir = v;
    } else if (a == "--fsync") {
      if (!value() || !ApplyPersistenceSetting("fsync", v, &f, &persistence).empty()) {
        return Error("--fsync must be always, everysec or no");
      }
      persistence.fsync_flag = "--fsync";
    } else if (a == "--check-data") {
      if (!value() || v.empty()) return Error("--check-data needs a directory");
      f.check_data_dir = v;
      check_data = true;
    } else if (a == "-c") {
      if (!value()) return Error("-c needs a php.ini path");
      f.ini_file = v;
    } else if (a == "--cluster-node-id") {
      if (!value() || v.empty() || v.size() > 255 ||
          !std::all_of(v.begin(), v.end(), IsNodeIdChar)) {
        return Error("--cluster-node-id needs a name of 1 to 255 letters, digits, '.', '_' or '-'");
      }
      f.cluster.node_id = v;
      f.want_cluster = true;
    } else if (a == "--cluster-listen") {
      if (!value()) return Error("--cluster-listen needs host:port");
      f.cluster.listen = v;
      cluster_flags = true;
    } else if (a == "--cluster-join") {
      const std::string err =
          value() ? ApplyAddresses(a, v, &f.cluster.join) : a + " needs host:port[,host:port...]";
      if (!err.empty()) return Error(err);
      cluster_flags = true;
    } else if (a == "--cluster-max-clock-skew") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 0 || n > 3600000) {
        return Error(a + " needs milliseconds from 0 to 3600000");
      }
      f.cluster.max_clock_skew_ms = n;
      cluster_flags = true;
    } else if (a == "--cluster-probe-interval" || a == "--cluster-suspicion-timeout" ||
               a == "--cluster-request-timeout") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 1 || n > 3600000) {
        return Error(a + " needs milliseconds from 1 to 3600000");
      }
      if (a == "--cluster-probe-interval") {
        f.cluster.probe_interval_ms = n;
        f.cluster.probe_timeout_ms = std::max<int64_t>(1, n / 2);
      }
      if (a == "--cluster-suspicion-timeout") f.cluster.suspicion_timeout_ms = n;
      if (a == "--cluster-request-timeout") f.cluster.request_timeout_ms = n;
      cluster_flags = true;
    } else if (a == "--cluster-arbiter") {
      if (!value() || (v != "gossip" && v != "etcd")) {
        return Error("--cluster-arbiter must be gossip or etcd");
      }
      f.cluster.arbiter = v == "etcd" ? cluster::ClusterOptions::Arbiter::kEtcd
                                      : cluster::ClusterOptions::Arbiter::kGossip;
      cluster_flags = true;
    } else if (a == "--etcd-endpoints") {
      f.cluster.etcd_endpoints.clear();
      const std::string err =
          value() ? ApplyAddresses(a, v, &f.cluster.etcd_endpoints) : a + " needs host:port[,host:port...]";
      if (!err.empty()) return Error(err);
      cluster_flags = true;
    } else if (a == "--etcd-prefix") {
      // Keys under it are <prefix>/locks/..., so it must not end in '/'.
      if (!value() || v.empty() || v[0] != '/' || v.back() == '/' || v.size() > 1024) {
        return Error("--etcd-prefix needs a path starting with '/' and not ending in '/'");
      }
      f.cluster.etcd_prefix = v;
      cluster_flags = true;
    } else if (a == "--etcd-timeout") {
      int64_t n = 0;
      if (!value() || !ParseInt64(v, &n) || n < 10 || n > 3600000) {
        return Error(a + " needs milliseconds from 10 to 3600000");
      }
      f.cluster.etcd_timeout_ms = n;
      cluster_flags = true;
    } else if (a == "--etcd-lease-ttl") {
      int64_t n = 0;
      // etcd refuses leases shorter than its minimum (about 1.5 s by default).
      if (!value() || !ParseInt64(v, &n) || n < 2 || n > 3600) {
        return Error(a + " needs seconds from 2 to 3600");
      }
      f.cluster.etcd_lease_ttl_s = n;
      cluster_flags = true;
    } else if (a == "--log-level") {
      if (!value()) return Error("--log-level needs a level");
      const auto* name = std::find(std::begin(kLogLevelNames), std::end(kLogLevelNames), v);
      if (name == std::end(kLogLevelNames)) {
        return Error("--log-level must be error, warn, info or debug");
      }
      f.log_level = static_cast<LogLevel>(name - std::begin(kLogLevelNames));
    } else {
      return Error("unknown argument '" + a + "'", /*show_usage=*/true);
    }
  }
  if (check_data) {
    result.action = Action::kCheckData;
    return result;
  }
  if (f.docroot.empty() && !f.want_resp) {
    return Error("nothing to serve: give --docroot DIR and/or --resp ADDR", /*show_usage=*/true);
  }
  if (cluster_flags && !f.want_cluster) {
    return Error("the --cluster-* options need --cluster-node-id");
  }
  const bool strict = f.cluster.arbiter == cluster::ClusterOptions::Arbiter::kEtcd;
  if (strict && f.cluster.etcd_endpoints.empty()) {
    return Error("--cluster-arbiter etcd needs --etcd-endpoints host:port[,host:port...]");
  }
  if (!strict && !f.cluster.etcd_endpoints.empty()) {
    return Error("--etcd-endpoints needs --cluster-arbiter etcd");
  }
  if (f.cluster.max_clock_skew_ms >= f.cluster.request_timeout_ms) {
    return Error("--cluster-max-clock-skew (" + std::to_string(f.cluster.max_clock_skew_ms) +
                 ") must be less than --cluster-request-timeout (" +
                 std::to_string(f.cluster.request_timeout_ms) +
                 "): a routed request would always arrive too late");
  }
  std::string& data_dir = f.store.persistence.data_dir;
  if (persistence.mode == "log" && data_dir.empty()) {
    return Error("ephpm.persistence=log needs a data dir: give --data-dir DIR");
  }
  if (persistence.mode == "off" && !data_dir.empty()) {
    return Error("ephpm.persistence=off contradicts the data dir " + data_dir +
                 " (a data dir turns persistence on)");
  }
  if (!persistence.fsync_flag.empty() && data_dir.empty()) {
    return Error(persistence.fsync_flag + " needs --data-dir: without a data dir nothing is " +
                 "written to disk");
  }
  if (!data_dir.empty()) {
    // What the store uses, for ini_get() and phpinfo() (later entries win).
    f.ini.emplace_back("ephpm.persistence", "log");
    f.ini.emplace_back("ephpm.data_dir", data_dir);
    f.ini.emplace_back("ephpm.fsync", FsyncPolicyName(f.store.persistence.fsync));
  }
  f.resp.max_bulk_len = f.store.max_value_size;
  return result;
}

std::string CheckDataText(const CheckDataReport& r) {
  std::string out;
  auto line = [&out](const char* name, const std::string& value) {
    out.append(name).append(": ").append(value).append("\n");
  };
  auto num = [](uint64_t v) { return std::to_string(v); };
  line("ok", r.ok ? "yes" : "no");
  if (!r.ok) line("error", r.error);
  line("snapshot", r.snapshot.empty() ? "none" : r.snapshot);
  line("snapshot_records", num(r.snapshot_records));
  line("logs", r.logs.empty() ? "none" : r.logs);
  line("log_records", num(r.log_records));
  line("keys", num(r.keys));
  std::string by_db;
  for (const auto& [db, n] : r.keys_by_db) {
    if (!by_db.empty()) by_db += ' ';
    by_db += "db" + num(db) + "=" + num(n);
  }
  line("keys_by_db", by_db.empty() ? "none" : by_db);
  line("expired", num(r.expired));
  line("value_bytes", num(r.value_bytes));
  if (r.torn_file.empty()) {
    line("torn_tail", "none");
  } else {
    line("torn_tail", r.torn_file + " at offset " + num(r.torn_offset) + ", " + num(r.torn_bytes) +
                          " bytes a start would cut");
  }
  return out;
}

}  // namespace ephpm
