// ParseHostFlags (sapi/host_flags.h): the ephpm program's command line.
// Every flag, the defaults, and every error with the program's exact message
// (main.cc prints "ephpm: " + the message and exits 2).

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "host_flags.h"

using ephpm::HostFlags;
using ephpm::HostFlagsResult;
using ephpm::LogLevel;
using ephpm::ParseHostFlags;
using Action = HostFlagsResult::Action;
using Args = std::vector<std::string>;

namespace {

// Parses args that must be accepted, and returns the settings.
HostFlags Ok(Args args) {
  const HostFlagsResult r = ParseHostFlags(args);
  INFO("error: " << r.error);
  REQUIRE(r.action == Action::kRun);
  return r.flags;
}

// Parses args that must be refused, and returns the message.
std::string Err(Args args, bool show_usage = false) {
  const HostFlagsResult r = ParseHostFlags(args);
  REQUIRE(r.action == Action::kError);
  CHECK(r.show_usage == show_usage);
  return r.error;
}

// With --resp, so that there is something to serve.
Args Resp(Args more) {
  Args a = {"--resp", "127.0.0.1:0"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

}  // namespace

TEST_CASE("host flags: the defaults", "[host_flags]") {
  const HostFlags f = Ok({"--docroot", "/srv/app"});
  CHECK(f.docroot == "/srv/app");
  CHECK_FALSE(f.want_resp);
  CHECK_FALSE(f.want_cluster);
  CHECK(f.listen == "127.0.0.1:8131");
  CHECK(f.ini_file.empty());
  CHECK(f.ini ==
        std::vector<std::pair<std::string, std::string>>{{"session.save_handler", "ephpm"}});
  CHECK(f.max_body_bytes == 64ull << 20);
  CHECK(f.max_header_bytes == 16u << 10);
  CHECK(f.request_timeout_seconds == 60);
  CHECK(f.workers == 0);
  CHECK(f.log_level == LogLevel::kInfo);
  CHECK(f.symlinks == ephpm::Symlinks::kFollow);
  const ephpm::StoreOptions store;
  CHECK(f.store.memory_limit == store.memory_limit);
  CHECK(f.store.shards == store.shards);
  const ephpm::resp::RespServerOptions resp;
  CHECK(f.resp.password.empty());
  CHECK(f.resp.max_clients == resp.max_clients);
  CHECK(f.resp.idle_timeout_seconds == resp.idle_timeout_seconds);
  CHECK(f.resp.busy_reply_threshold_ms == 5000);
  CHECK(f.resp.max_bulk_len == store.max_value_size);
  const ephpm::cluster::ClusterOptions cluster;
  CHECK(f.cluster.listen == cluster.listen);
  CHECK(f.cluster.join.empty());
  CHECK(f.cluster.probe_interval_ms == cluster.probe_interval_ms);
  CHECK(f.cluster.request_timeout_ms == cluster.request_timeout_ms);
}

TEST_CASE("host flags: --symlinks follow or root", "[host_flags]") {
  CHECK(Ok({"--docroot", "d", "--symlinks", "root"}).symlinks == ephpm::Symlinks::kRoot);
  CHECK(Ok({"--docroot", "d", "--symlinks", "follow"}).symlinks == ephpm::Symlinks::kFollow);
  // The last one wins, as for every flag.
  CHECK(Ok({"--docroot", "d", "--symlinks", "root", "--symlinks", "follow"}).symlinks ==
        ephpm::Symlinks::kFollow);
  for (const char* bad : {"", "ROOT", "Follow", "no", "off", "inside"}) {
    INFO("value '" << bad << "'");
    CHECK(Err({"--docroot", "d", "--symlinks", bad}) == "--symlinks must be follow or root");
  }
  CHECK(Err({"--docroot", "d", "--symlinks"}) == "--symlinks must be follow or root");
  CHECK(std::string(ephpm::kHostUsage).find("  --symlinks follow|root ") != std::string::npos);
}

TEST_CASE("host flags: -h and --help ask for the usage", "[host_flags]") {
  CHECK(ParseHostFlags({"-h"}).action == Action::kHelp);
  CHECK(ParseHostFlags({"--help"}).action == Action::kHelp);
  // Before a bad argument the help wins; after one, the error does.
  CHECK(ParseHostFlags({"--workers", "3", "--help", "--bogus"}).action == Action::kHelp);
  CHECK(ParseHostFlags({"--bogus", "--help"}).action == Action::kError);
  CHECK(std::string(ephpm::kHostUsage).rfind("usage: ephpm [--docroot DIR]", 0) == 0);
}

TEST_CASE("host flags: nothing to serve and unknown arguments show the usage", "[host_flags]") {
  CHECK(Err({}, true) == "nothing to serve: give --docroot DIR and/or --resp ADDR");
  CHECK(Err({"--log-level", "warn"}, true) ==
        "nothing to serve: give --docroot DIR and/or --resp ADDR");
  CHECK(Err({"--bogus"}, true) == "unknown argument '--bogus'");
  CHECK(Err({"--docroot", "d", "x"}, true) == "unknown argument 'x'");
  // The first bad argument is the one reported.
  CHECK(Err({"--workers", "0", "--bogus"}) == "--workers needs a number from 1 to 1024");
}

TEST_CASE("host flags: HTTP settings", "[host_flags]") {
  const HostFlags f =
      Ok({"--docroot", "d", "--listen", "0.0.0.0:80", "--max-body-size", "1M", "--max-header-size",
          "8K", "--request-timeout", "5", "-c", "/etc/php.ini", "--workers", "1024"});
  CHECK(f.listen == "0.0.0.0:80");
  CHECK(f.max_body_bytes == 1u << 20);
  CHECK(f.max_header_bytes == 8u << 10);
  CHECK(f.request_timeout_seconds == 5);
  CHECK(f.ini_file == "/etc/php.ini");
  CHECK(f.workers == 1024);
  // --listen is checked by the program, and only when it serves HTTP.
  CHECK(Ok(Resp({"--listen", "not an address"})).listen == "not an address");
  // A later flag wins.
  CHECK(Ok({"--docroot", "a", "--docroot", "b"}).docroot == "b");

  CHECK(Err({"--docroot"}) == "--docroot needs a directory");
  CHECK(Err({"--docroot", "d", "--listen"}) == "--listen needs host:port");
  CHECK(Err({"--docroot", "d", "-c"}) == "-c needs a php.ini path");
  for (const char* n : {"0", "1025", "-1", "two", ""}) {
    CHECK(Err({"--docroot", "d", "--workers", n}) == "--workers needs a number from 1 to 1024");
  }
  CHECK(Err({"--docroot", "d", "--workers"}) == "--workers needs a number from 1 to 1024");
  for (const char* flag : {"--max-body-size", "--max-header-size"}) {
    for (const char* n : {"0", "-1", "lots", "1T"}) {
      CHECK(Err({"--docroot", "d", flag, n}) ==
            std::string(flag) + " needs a size such as 16K or 64M");
    }
    CHECK(Err({"--docroot", "d", flag}) == std::string(flag) + " needs a size such as 16K or 64M");
  }
  CHECK(Err({"--docroot", "d", "--request-timeout", "0"}) ==
        "--request-timeout needs at least 1 second");
  CHECK(Err({"--docroot", "d", "--request-timeout", "-3"}) ==
        "--request-timeout needs a non-negative integer");
  CHECK(Err({"--docroot", "d", "--request-timeout"}) ==
        "--request-timeout needs a non-negative integer");
}

TEST_CASE("host flags: RESP settings", "[host_flags]") {
  const HostFlags f = Ok({"--resp", "0.0.0.0:6380", "--resp-password", "s3cret pw!",
                          "--resp-max-clients", "0", "--resp-timeout", "30"});
  CHECK(f.want_resp);
  CHECK(f.resp.bind_address == "0.0.0.0");
  CHECK(f.resp.port == 6380);
  CHECK(f.resp.password == "s3cret pw!");
  CHECK(f.resp.max_clients == 0);
  CHECK(f.resp.idle_timeout_seconds == 30);
  CHECK(f.resp.io_threads == 0);  // the server's default (DefaultIoThreads)
  CHECK(Ok(Resp({"--resp-io-threads", "1"})).resp.io_threads == 1);
  CHECK(Ok(Resp({"--resp-io-threads", "128"})).resp.io_threads == 128);
  for (const char* n : {"0", "129", "-1", "1.5", "two", ""}) {
    CHECK(Err(Resp({"--resp-io-threads", n})) == "--resp-io-threads needs a number from 1 to 128");
  }
  CHECK(Err(Resp({"--resp-io-threads"})) == "--resp-io-threads needs a number from 1 to 128");

  for (const char* addr : {"6380", "host:", "127.0.0.1:65536", "127.0.0.1:x"}) {
    CHECK(Err({"--resp", addr}) == "--resp needs host:port, e.g. 127.0.0.1:6380");
  }
  CHECK(Err({"--resp"}) == "--resp needs host:port, e.g. 127.0.0.1:6380");
  CHECK(Err(Resp({"--resp-password"})) == "--resp-password needs a value");
  for (const char* flag : {"--resp-max-clients", "--resp-timeout"}) {
    CHECK(Err(Resp({flag, "-1"})) == std::string(flag) + " needs a non-negative integer");
    CHECK(Err(Resp({flag, "1.5"})) == std::string(flag) + " needs a non-negative integer");
    CHECK(Err(Resp({flag})) == std::string(flag) + " needs a non-negative integer");
  }
}

TEST_CASE("host flags: --busy-reply-threshold", "[host_flags]") {
  CHECK(Ok(Resp({"--busy-reply-threshold", "0"})).resp.busy_reply_threshold_ms == 0);
  CHECK(Ok(Resp({"--busy-reply-threshold", "250"})).resp.busy_reply_threshold_ms == 250);
  CHECK(Ok(Resp({"--busy-reply-threshold", "86400000"})).resp.busy_reply_threshold_ms ==
        86400000);
  const std::string need = "--busy-reply-threshold needs milliseconds from 0 to 86400000";
  for (const char* bad : {"-1", "86400001", "1.5", "x", ""}) {
    CHECK(Err(Resp({"--busy-reply-threshold", bad})) == need);
  }
  CHECK(Err(Resp({"--busy-reply-threshold"})) == need);
}

TEST_CASE("host flags: --databases and -d ephpm.databases", "[host_flags]") {
  CHECK(Ok(Resp({})).store.databases == 16);
  CHECK(Ok(Resp({"--databases", "4"})).store.databases == 4);
  CHECK(Ok(Resp({"-d", "ephpm.databases=1"})).store.databases == 1);
  CHECK(Err(Resp({"--databases"})) == "--databases needs a value");
  CHECK(Err(Resp({"--databases", "0"})) == "ephpm.databases must be from 1 to 1024");
  CHECK(Err(Resp({"--databases", "1025"})) == "ephpm.databases must be from 1 to 1024");
  CHECK(Err(Resp({"-d", "ephpm.databases=x"})) == "ephpm.databases must be from 1 to 1024");
}

TEST_CASE("host flags: -d and --memory-limit build the store and reach PHP", "[host_flags]") {
  const HostFlags f = Ok(Resp({"-d", "ephpm.shards=8", "-d", "memory_limit=256M", "-d",
                               "ephpm.max_value_size=1M", "--memory-limit", "64M", "-d",
                               "ephpm.session_lock_timeout=3", "-d", "x=a=b", "-d", "empty="}));
  CHECK(f.store.shards == 8);
  CHECK(f.store.memory_limit == 64u << 20);
  CHECK(f.store.max_value_size == 1u << 20);
  CHECK(f.resp.max_bulk_len == 1u << 20);  // follows the store's limit
  CHECK(f.ini ==
        std::vector<std::pair<std::string, std::string>>{{"session.save_handler", "ephpm"},
                                                         {"ephpm.shards", "8"},
                                                         {"memory_limit", "256M"},
                                                         {"ephpm.max_value_size", "1M"},
                                                         {"ephpm.memory_limit", "64M"},
                                                         {"ephpm.session_lock_timeout", "3"},
                                                         {"x", "a=b"},
                                                         {"empty", ""}});

  CHECK(Err(Resp({"-d"})) == "-d needs a value");
  CHECK(Err(Resp({"--memory-limit"})) == "--memory-limit needs a value");
  CHECK(Err(Resp({"-d", "novalue"})) == "-d needs NAME=VALUE, got 'novalue'");
  CHECK(Err(Resp({"-d", "=1"})) == "-d needs NAME=VALUE, got '=1'");
  CHECK(Err(Resp({"-d", "ephpm.shards=3"})) ==
        "ephpm.shards must be a power of two from 1 to 65536");
  CHECK(Err(Resp({"-d", "ephpm.nope=1"})) == "ephpm.nope is not a store setting");
  CHECK(Err(Resp({"--memory-limit", "lots"})) ==
        "ephpm.memory_limit must be a size in bytes with an optional K, M or G suffix (0 = no "
        "limit)");
}

TEST_CASE("host flags: cluster settings", "[host_flags]") {
  const HostFlags f = Ok(Resp(
      {"--cluster-node-id", "node-1.a_B", "--cluster-listen", "127.0.0.1:7000", "--cluster-join",
       "127.0.0.1:7001,h:7002", "--cluster-probe-interval", "301", "--cluster-suspicion-timeout",
       "2000", "--cluster-request-timeout", "900", "--cluster-max-clock-skew", "0"}));
  CHECK(f.want_cluster);
  CHECK(f.cluster.node_id == "node-1.a_B");
  CHECK(f.cluster.listen == "127.0.0.1:7000");
  CHECK(f.cluster.join == std::vector<std::string>{"127.0.0.1:7001", "h:7002"});
  CHECK(f.cluster.probe_interval_ms == 301);
  CHECK(f.cluster.probe_timeout_ms == 150);  // half the interval
  CHECK(f.cluster.suspicion_timeout_ms == 2000);
  CHECK(f.cluster.request_timeout_ms == 900);
  CHECK(f.cluster.max_clock_skew_ms == 0);
  CHECK(Ok(Resp({"--cluster-node-id", "a", "--cluster-probe-interval", "1"}))
            .cluster.probe_timeout_ms == 1);
  CHECK(Ok(Resp({"--cluster-node-id", std::string(255, 'n')})).want_cluster);

  const std::string bad_id =
      "--cluster-node-id needs a name of 1 to 255 letters, digits, '.', '_' or '-'";
  for (const std::string& id : {std::string(""), std::string(256, 'n'), std::string("a b"),
                                std::string("a:b"), std::string("\xc3\xa9")}) {
    CHECK(Err(Resp({"--cluster-node-id", id})) == bad_id);
  }
  CHECK(Err(Resp({"--cluster-node-id"})) == bad_id);
  CHECK(Err(Resp({"--cluster-listen"})) == "--cluster-listen needs host:port");
  CHECK(Err(Resp({"--cluster-join"})) == "--cluster-join needs host:port[,host:port...]");
  CHECK(Err(Resp({"--cluster-join", ""})) == "--cluster-join needs host:port[,host:port...]");
  CHECK(Err(Resp({"--cluster-join", "h:1,h"})) == "--cluster-join: 'h' is not host:port");
  CHECK(Err(Resp({"--cluster-join", "h:1,"})) == "--cluster-join: '' is not host:port");
  CHECK(Err(Resp({"--cluster-join", "h:0"})) == "--cluster-join: 'h:0' is not host:port");
  for (const char* flag :
       {"--cluster-probe-interval", "--cluster-suspicion-timeout", "--cluster-request-timeout"}) {
    for (const char* n : {"0", "3600001", "x"}) {
      CHECK(Err(Resp({"--cluster-node-id", "a", flag, n})) ==
            std::string(flag) + " needs milliseconds from 1 to 3600000");
    }
    CHECK(Err(Resp({flag})) == std::string(flag) + " needs milliseconds from 1 to 3600000");
  }
  for (const char* n : {"-1", "3600001", "x"}) {
    CHECK(Err(Resp({"--cluster-max-clock-skew", n})) ==
          "--cluster-max-clock-skew needs milliseconds from 0 to 3600000");
  }
}

TEST_CASE("host flags: --cluster-* options need --cluster-node-id", "[host_flags]") {
  const std::string need = "the --cluster-* options need --cluster-node-id";
  CHECK(Err(Resp({"--cluster-listen", "127.0.0.1:0"})) == need);
  CHECK(Err(Resp({"--cluster-join", "h:1"})) == need);
  CHECK(Err(Resp({"--cluster-probe-interval", "100"})) == need);
  CHECK(Err(Resp({"--cluster-suspicion-timeout", "100"})) == need);
  CHECK(Err(Resp({"--cluster-request-timeout", "1000"})) == need);
  CHECK(Err(Resp({"--cluster-max-clock-skew", "10"})) == need);
  // Nothing to serve is reported first.
  CHECK(Err({"--cluster-listen", "127.0.0.1:0"}, true) ==
        "nothing to serve: give --docroot DIR and/or --resp ADDR");
}

TEST_CASE("host flags: strict mode (--cluster-arbiter etcd)", "[host_flags]") {
  using Arbiter = ephpm::cluster::ClusterOptions::Arbiter;
  const HostFlags d = Ok(Resp({"--cluster-node-id", "a"}));
  CHECK(d.cluster.arbiter == Arbiter::kGossip);
  CHECK(d.cluster.etcd_prefix == "/ephpm");
  CHECK(d.cluster.etcd_timeout_ms == 1000);
  CHECK(d.cluster.etcd_lease_ttl_s == 5);

  const HostFlags f = Ok(Resp({"--cluster-node-id", "a", "--cluster-arbiter", "etcd",
                               "--etcd-endpoints", "127.0.0.1:2379,etcd-2:2379",
                               "--etcd-prefix", "/app/x", "--etcd-timeout", "10",
                               "--etcd-lease-ttl", "2"}));
  CHECK(f.cluster.arbiter == Arbiter::kEtcd);
  CHECK(f.cluster.etcd_endpoints == std::vector<std::string>{"127.0.0.1:2379", "etcd-2:2379"});
  CHECK(f.cluster.etcd_prefix == "/app/x");
  CHECK(f.cluster.etcd_timeout_ms == 10);
  CHECK(f.cluster.etcd_lease_ttl_s == 2);
  // The last --etcd-endpoints wins, as every other flag.
  CHECK(Ok(Resp({"--cluster-node-id", "a", "--cluster-arbiter", "etcd", "--etcd-endpoints",
                 "h:1", "--etcd-endpoints", "h:2"}))
            .cluster.etcd_endpoints == std::vector<std::string>{"h:2"});
  CHECK(Ok(Resp({"--cluster-node-id", "a", "--cluster-arbiter", "gossip"})).cluster.arbiter ==
        Arbiter::kGossip);

  const Args node = {"--cluster-node-id", "a"};
  auto with = [&](Args more) {
    Args a = node;
    a.insert(a.end(), more.begin(), more.end());
    return Resp(a);
  };
  CHECK(Err(with({"--cluster-arbiter", "raft"})) == "--cluster-arbiter must be gossip or etcd");
  CHECK(Err(with({"--cluster-arbiter"})) == "--cluster-arbiter must be gossip or etcd");
  CHECK(Err(with({"--cluster-arbiter", "etcd"})) ==
        "--cluster-arbiter etcd needs --etcd-endpoints host:port[,host:port...]");
  CHECK(Err(with({"--etcd-endpoints", "h:1"})) == "--etcd-endpoints needs --cluster-arbiter etcd");
  CHECK(Err(with({"--etcd-endpoints"})) == "--etcd-endpoints needs host:port[,host:port...]");
  CHECK(Err(with({"--etcd-endpoints", "h:1,h"})) == "--etcd-endpoints: 'h' is not host:port");
  CHECK(Err(with({"--etcd-endpoints", "h:0"})) == "--etcd-endpoints: 'h:0' is not host:port");
  const std::string bad_prefix =
      "--etcd-prefix needs a path starting with '/' and not ending in '/'";
  for (const std::string& p : {std::string(""), std::string("app"), std::string("/app/"),
                               std::string("/"), "/" + std::string(1024, 'p')}) {
    CHECK(Err(with({"--etcd-prefix", p})) == bad_prefix);
  }
  for (const char* n : {"9", "3600001", "x", "-1"}) {
    CHECK(Err(with({"--etcd-timeout", n})) == "--etcd-timeout needs milliseconds from 10 to 3600000");
  }
  for (const char* n : {"1", "0", "3601", "x"}) {
    CHECK(Err(with({"--etcd-lease-ttl", n})) == "--etcd-lease-ttl needs seconds from 2 to 3600");
  }
  // They are --cluster-* options too: they need a node id.
  CHECK(Err(Resp({"--cluster-arbiter", "etcd", "--etcd-endpoints", "h:1"})) ==
        "the --cluster-* options need --cluster-node-id");
}

TEST_CASE("host flags: the clock skew must stay below the request timeout", "[host_flags]") {
  const std::string msg =
      "--cluster-max-clock-skew (500) must be less than --cluster-request-timeout (500): "
      "a routed request would always arrive too late";
  CHECK(Err(Resp({"--cluster-node-id", "a", "--cluster-max-clock-skew", "500"})) == msg);
  CHECK(Err(Resp({"--cluster-node-id", "a", "--cluster-max-clock-skew", "100",
                  "--cluster-request-timeout", "100"})) ==
        "--cluster-max-clock-skew (100) must be less than --cluster-request-timeout (100): "
        "a routed request would always arrive too late");
  CHECK(Ok(Resp({"--cluster-node-id", "a", "--cluster-max-clock-skew", "499"}))
            .cluster.max_clock_skew_ms == 499);
  // The need for --cluster-node-id is reported first.
  CHECK(Err(Resp({"--cluster-max-clock-skew", "500"})) ==
        "the --cluster-* options need --cluster-node-id");
}

TEST_CASE("host flags: --log-level", "[host_flags]") {
  CHECK(Ok(Resp({"--log-level", "error"})).log_level == LogLevel::kError);
  CHECK(Ok(Resp({"--log-level", "warn"})).log_level == LogLevel::kWarn);
  CHECK(Ok(Resp({"--log-level", "info"})).log_level == LogLevel::kInfo);
  CHECK(Ok(Resp({"--log-level", "debug"})).log_level == LogLevel::kDebug);
  CHECK(ephpm::LogLevelName(LogLevel::kError) == std::string("error"));
  CHECK(ephpm::LogLevelName(LogLevel::kDebug) == std::string("debug"));
  CHECK(Err(Resp({"--log-level", "DEBUG"})) == "--log-level must be error, warn, info or debug");
  CHECK(Err(Resp({"--log-level"})) == "--log-level needs a level");
}

TEST_CASE("host flags: --data-dir turns persistence on, --fsync sets its policy", "[host_flags]") {
  const HostFlags off = Ok(Resp({}));
  CHECK(off.store.persistence.data_dir.empty());
  CHECK(off.check_data_dir.empty());

  const HostFlags on = Ok(Resp({"--data-dir", "/var/lib/ephpm"}));
  CHECK(on.store.persistence.data_dir == "/var/lib/ephpm");
  CHECK(on.store.persistence.fsync == ephpm::FsyncPolicy::kEverySec);
  // PHP sees what the store uses.
  const std::vector<std::pair<std::string, std::string>> tail(on.ini.end() - 3, on.ini.end());
  CHECK(tail ==
        std::vector<std::pair<std::string, std::string>>{{"ephpm.persistence", "log"},
                                                         {"ephpm.data_dir", "/var/lib/ephpm"},
                                                         {"ephpm.fsync", "everysec"}});

  CHECK(Ok(Resp({"--data-dir", "d", "--fsync", "always"})).store.persistence.fsync ==
        ephpm::FsyncPolicy::kAlways);
  CHECK(Ok(Resp({"--fsync", "no", "--data-dir", "d"})).store.persistence.fsync ==
        ephpm::FsyncPolicy::kNo);
  CHECK(Ok(Resp({"--data-dir", "d", "--fsync", "EverySec"})).store.persistence.fsync ==
        ephpm::FsyncPolicy::kEverySec);
}

TEST_CASE("host flags: -d ephpm.persistence, ephpm.data_dir and ephpm.fsync", "[host_flags]") {
  HostFlags f = Ok(
      Resp({"-d", "ephpm.persistence=log", "-d", "ephpm.data_dir=/d", "-d", "ephpm.fsync=always"}));
  CHECK(f.store.persistence.data_dir == "/d");
  CHECK(f.store.persistence.fsync == ephpm::FsyncPolicy::kAlways);
  CHECK(f.ini.back() == std::make_pair(std::string("ephpm.fsync"), std::string("always")));
  // A data dir alone turns it on, as --data-dir does.
  CHECK(Ok(Resp({"-d", "ephpm.data_dir=/d"})).store.persistence.data_dir == "/d");
  // off (or php.ini's bare Off, "") without a data dir is the default.
  CHECK(Ok(Resp({"-d", "ephpm.persistence=off"})).store.persistence.data_dir.empty());
  CHECK(Ok(Resp({"-d", "ephpm.persistence="})).store.persistence.data_dir.empty());
  CHECK(Ok(Resp({"-d", "ephpm.persistence=LOG", "--data-dir", "/d"})).store.persistence.data_dir ==
        "/d");
}

TEST_CASE("host flags: persistence errors", "[host_flags]") {
  CHECK(Err(Resp({"--data-dir"})) == "--data-dir needs a directory");
  CHECK(Err(Resp({"--data-dir", ""})) == "--data-dir needs a directory");
  CHECK(Err(Resp({"--data-dir", "d", "--fsync", "sometimes"})) ==
        "--fsync must be always, everysec or no");
  CHECK(Err(Resp({"--fsync"})) == "--fsync must be always, everysec or no");
  CHECK(Err(Resp({"--fsync", "always"})) ==
        "--fsync needs --data-dir: without a data dir nothing is written to disk");
  CHECK(Err(Resp({"-d", "ephpm.fsync=no"})) ==
        "-d ephpm.fsync needs --data-dir: without a data dir nothing is written to disk");
  CHECK(Err(Resp({"-d", "ephpm.fsync=weekly"})) == "ephpm.fsync must be always, everysec or no");
  CHECK(Err(Resp({"-d", "ephpm.persistence=rdb"})) == "ephpm.persistence must be off or log");
  CHECK(Err(Resp({"-d", "ephpm.persistence=log"})) ==
        "ephpm.persistence=log needs a data dir: give --data-dir DIR");
  CHECK(Err(Resp({"-d", "ephpm.persistence=off", "--data-dir", "/d"})) ==
        "ephpm.persistence=off contradicts the data dir /d (a data dir turns persistence on)");
}

TEST_CASE("host flags: --check-data needs nothing else", "[host_flags]") {
  HostFlagsResult r = ParseHostFlags({"--check-data", "/var/lib/ephpm"});
  CHECK(r.action == Action::kCheckData);
  CHECK(r.flags.check_data_dir == "/var/lib/ephpm");
  CHECK(Err({"--check-data"}) == "--check-data needs a directory");
  CHECK(Err({"--check-data", ""}) == "--check-data needs a directory");
  // A bad argument beside it is still an error.
  CHECK(Err({"--check-data", "d", "--workers", "0"}) == "--workers needs a number from 1 to 1024");
  const std::string usage = ephpm::kHostUsage;
  for (const char* flag : {"--data-dir DIR", "--fsync MODE", "--check-data DIR"}) {
    INFO(flag);
    CHECK(usage.find(flag) != std::string::npos);
  }
}

TEST_CASE("host flags: the --check-data report's lines", "[host_flags]") {
  ephpm::CheckDataReport r;
  r.ok = true;
  r.snapshot = "snap.3";
  r.snapshot_records = 10;
  r.logs = "log.4 log.5";
  r.log_records = 7;
  r.keys = 12;
  r.keys_by_db = {{0, 10}, {9, 2}};
  r.expired = 2;
  r.value_bytes = 345;
  CHECK(ephpm::CheckDataText(r) ==
        "ok: yes\nsnapshot: snap.3\nsnapshot_records: 10\nlogs: log.4 log.5\n"
        "log_records: 7\nkeys: 12\nkeys_by_db: db0=10 db9=2\nexpired: 2\nvalue_bytes: 345\n"
        "torn_tail: none\n");
  r.keys_by_db.clear();
  CHECK(ephpm::CheckDataText(r).find("keys_by_db: none\n") != std::string::npos);
  r.torn_file = "log.5";
  r.torn_offset = 100;
  r.torn_bytes = 9;
  r.snapshot.clear();
  CHECK(ephpm::CheckDataText(r).find("snapshot: none\n") != std::string::npos);
  CHECK(ephpm::CheckDataText(r).find(
            "torn_tail: log.5 at offset 100, 9 bytes a start would cut\n") != std::string::npos);
  r.ok = false;
  r.error = "log.4: corrupt record at offset 40";
  CHECK(ephpm::CheckDataText(r).rfind("ok: no\nerror: log.4: corrupt record at offset 40\n", 0) ==
        0);
}
