// The ephpm program's command line: the flags, their defaults and checks, and
// the settings they give the store, the RESP server, the cluster node, PHP
// and the HTTP server.  Pure: nothing here prints, exits or opens anything;
// main.cc prints the usage or the error and exits with the code it carries.
//
// Checks that need the running program (whether this PHP is thread-safe,
// whether --listen parses, which is only looked at when HTTP is served) stay
// in main.cc.

#ifndef EPHPM_SAPI_HOST_FLAGS_H_
#define EPHPM_SAPI_HOST_FLAGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/options.h"
#include "ephpm/persistence.h"
#include "node.h"
#include "router.h"
#include "resp/server.h"

namespace ephpm {

// The --help text (printed to stdout by --help, to stderr before some errors).
extern const char kHostUsage[];

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
// "error", "warn", "info" or "debug": the --log-level value and the word the
// log lines carry.
const char* LogLevelName(LogLevel level);

// Everything the command line sets.  Defaults are the program's defaults.
struct HostFlags {
  StoreOptions store;                     // from -d ephpm.* and --memory-limit
  resp::RespServerOptions resp;           // max_bulk_len follows store.max_value_size
  bool want_resp = false;                 // --resp given
  std::string docroot;                    // "" = no HTTP
  Symlinks symlinks = Symlinks::kFollow;  // --symlinks
  std::string listen = "127.0.0.1:8131";  // unchecked: main parses it when serving HTTP
  std::string ini_file;                   // -c; "" = no php.ini at all
  // PHP INI settings in order: the host's own defaults first, then every -d
  // (ephpm.* ones included, so that ini_get() shows them) and --memory-limit.
  std::vector<std::pair<std::string, std::string>> ini = {{"session.save_handler", "ephpm"}};
  uint64_t max_body_bytes = 64ull << 20;
  uint64_t max_header_bytes = 16 << 10;
  int64_t request_timeout_seconds = 60;
  int64_t workers = 0;  // 0: the default for this PHP
  cluster::ClusterOptions cluster;
  bool want_cluster = false;  // --cluster-node-id given
  LogLevel log_level = LogLevel::kInfo;
  // --check-data DIR: report what a start would load from DIR, then exit.
  std::string check_data_dir;
};

// What the command line asks for.
struct HostFlagsResult {
  enum class Action {
    kRun,        // serve with `flags`
    kHelp,       // print kHostUsage to stdout, exit 0
    kCheckData,  // run CheckData(flags.check_data_dir): CheckDataText to
                 // stdout and exit 0, or "ephpm: <error>" to stderr and exit 1
    kError,      // print "ephpm: <error>" to stderr (after kHostUsage when
                 // show_usage), exit 2
  };
  Action action = Action::kRun;
  HostFlags flags;          // meaningful for kRun only
  std::string error;        // kError: the message, without the "ephpm: " prefix
  bool show_usage = false;  // kError: the usage text goes first
};

// Parses the arguments after the program name, left to right.  The first
// bad argument is the error; -h/--help wins only when it comes before any
// bad argument.  After the last argument, the combination is checked:
// --check-data needs nothing else; otherwise there must be something to
// serve, --cluster-* flags need --cluster-node-id, the clock skew must stay
// below the request timeout, and the persistence settings must agree (a
// data dir, from --data-dir or -d ephpm.data_dir, turns persistence on;
// -d ephpm.persistence=log needs one, --fsync / -d ephpm.fsync too).
HostFlagsResult ParseHostFlags(const std::vector<std::string>& args);

// The lines `ephpm --check-data DIR` prints for a report, "name: value\n"
// each.
std::string CheckDataText(const CheckDataReport& report);

}  // namespace ephpm

#endif  // EPHPM_SAPI_HOST_FLAGS_H_
