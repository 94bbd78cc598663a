// The RESP server's persistence edges (docs/PERSISTENCE.md): SAVE, BGSAVE,
// BGREWRITEAOF, LASTSAVE and INFO's persistence section with and without a
// data dir; data written over RESP back after a restart; and, on a tmpfs of
// limited size, the MISCONF refusal of writes while the log cannot be
// written, the batch whose fsync failed answered with it, and writes
// resuming once the disk has room again; SAVE failing meanwhile, with the
// reason.
//
// Assertions run on the main thread only.

#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "resp_server_util.h"
#include "test_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {

// A directory under /tmp, removed with its contents at the end.
struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/ephpm-resp-persist-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) throw std::runtime_error("mkdtemp failed");
    path = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

using ephpm_test::Tmpfs;

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

StoreOptions WithDataDir(const std::string& dir, ephpm::FsyncPolicy fsync) {
  StoreOptions so;
  so.persistence.data_dir = dir;
  so.persistence.fsync = fsync;
  return so;
}

// The value of `field` in an INFO reply, or "<missing>".
std::string InfoField(const std::string& info, const std::string& field) {
  const std::string key = "\r\n" + field + ":";
  const size_t at = info.find(key);
  if (at == std::string::npos) return "<missing>";
  const size_t start = at + key.size();
  return info.substr(start, info.find("\r\n", start) - start);
}

// Polls INFO persistence until `field` reads `want` (or a few seconds pass).
std::string AwaitInfo(Client& c, const std::string& field, const std::string& want) {
  std::string got;
  for (int i = 0; i < 500; ++i) {
    got = InfoField(c.Call({"INFO", "persistence"}), field);
    if (got == want) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return got;
}

const std::string kMisconfStart = "-MISCONF Errors writing to the AOF file: ";

}  // namespace

TEST_CASE("persistence off: SAVE, BGSAVE and BGREWRITEAOF say so, LASTSAVE is the start") {
  Fixture f;
  Client c(f.port());
  const std::string off = Err("ERR persistence is off: start ephpm with --data-dir");
  CHECK(c.Call({"SAVE"}) == off);
  CHECK(c.Call({"BGSAVE"}) == off);
  CHECK(c.Call({"bgsave", "schedule"}) == off);
  CHECK(c.Call({"BGREWRITEAOF"}) == off);
  // BGSAVE's only option is SCHEDULE, checked first (as Redis does).
  CHECK(c.Call({"BGSAVE", "NOW"}) == Err("ERR syntax error"));
  CHECK(c.Call({"BGSAVE", "SCHEDULE", "x"}) == Err("ERR syntax error"));
  CHECK(c.Call({"SAVE", "x"}) == Arity("save"));
  CHECK(c.Call({"BGREWRITEAOF", "x"}) == Arity("bgrewriteaof"));
  CHECK(c.Call({"LASTSAVE", "x"}) == Arity("lastsave"));
  // Nothing saved: the server's start, as Redis reports before its first save.
  const std::string last = c.Call({"LASTSAVE"});
  REQUIRE(last.size() > 3);
  REQUIRE(last[0] == ':');
  const long long t = std::stoll(last.substr(1));
  const long long now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  CHECK(t <= now);
  CHECK(t >= now - 60);

  const std::string info = c.Call({"INFO", "persistence"});
  CHECK(info.find("# Persistence\r\nloading:0\r\n") != std::string::npos);
  CHECK(InfoField(info, "aof_enabled") == "0");
  CHECK(InfoField(info, "aof_rewrite_in_progress") == "0");
  CHECK(InfoField(info, "aof_last_write_status") == "ok");
  CHECK(InfoField(info, "aof_last_bgrewrite_status") == "ok");
  CHECK(InfoField(info, "rdb_last_save_time") == std::to_string(t));
  CHECK(InfoField(info, "aof_current_size") == "<missing>");  // Redis shows it with AOF on only
  // The section is in the default INFO and in INFO all.
  CHECK(c.Call({"INFO"}).find("\r\n# Persistence\r\n") != std::string::npos);
  CHECK(c.Call({"INFO", "all"}).find("\r\n# Persistence\r\n") != std::string::npos);
  CHECK(c.Call({"INFO", "memory"}).find("# Persistence") == std::string::npos);
}

TEST_CASE("COMMAND INFO describes SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE as Redis 7.0 does") {
  Fixture f;
  Client c(f.port());
  auto info = [](const std::string& name, int arity, const std::string& flags,
                 const std::string& acl) {
    return "*1\r\n*10\r\n" + Bulk(name) + Int(arity) + flags + Int(0) + Int(0) + Int(0) + acl +
           "*0\r\n*0\r\n*0\r\n";
  };
  const std::string admin = "*1\r\n+admin\r\n";
  const std::string admin_slow = "*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n";
  // (Redis's SAVE also says noscript and no_async_loading; ephpm lists the
  // flags it has, in Redis's order.)
  CHECK(c.Call({"COMMAND", "INFO", "save"}) ==
        info("save", 1, "*2\r\n+admin\r\n+no_multi\r\n", admin_slow));
  CHECK(c.Call({"COMMAND", "INFO", "bgsave"}) == info("bgsave", -1, admin, admin_slow));
  CHECK(c.Call({"COMMAND", "INFO", "bgrewriteaof"}) == info("bgrewriteaof", 1, admin, admin_slow));
  CHECK(c.Call({"COMMAND", "INFO", "lastsave"}) ==
        info("lastsave", 1, "*1\r\n+fast\r\n", "*3\r\n+@admin\r\n+@fast\r\n+@dangerous\r\n"));
}

TEST_CASE("with a data dir: SAVE, BGREWRITEAOF and BGSAVE snapshot, INFO shows the log") {
  TempDir dir;
  Fixture f({}, WithDataDir(dir.path + "/data", ephpm::FsyncPolicy::kEverySec), WallMs());
  Client c(f.port());
  std::string info = c.Call({"INFO", "persistence"});
  CHECK(InfoField(info, "aof_enabled") == "1");
  CHECK(InfoField(info, "aof_fsync") == "everysec");
  CHECK(InfoField(info, "aof_rewrites") == "0");
  CHECK(InfoField(info, "aof_last_write_status") == "ok");
  CHECK(InfoField(info, "aof_last_write_error") == "");
  CHECK(InfoField(info, "rdb_last_load_keys_loaded") == "0");

  for (int i = 0; i < 50; ++i) REQUIRE(c.Call({"SET", "k" + std::to_string(i), "v"}) == kOk);
  CHECK(c.Call({"SAVE"}) == kOk);
  info = c.Call({"INFO", "persistence"});
  CHECK(InfoField(info, "aof_rewrites") == "1");
  CHECK(InfoField(info, "rdb_saves") == "1");
  CHECK(InfoField(info, "aof_last_bgrewrite_status") == "ok");
  const std::string last = c.Call({"LASTSAVE"});
  CHECK(last == Int(std::stoll(InfoField(info, "rdb_last_save_time"))));
  CHECK(std::stoll(InfoField(info, "aof_current_size")) >= 0);
  CHECK(InfoField(info, "aof_base_size") != "<missing>");
  CHECK(InfoField(info, "aof_buffer_length") != "<missing>");
  CHECK(std::stoll(InfoField(info, "aof_records")) >= 50);

  // Background: started, or (when one is still running) refused in Redis's words.
  const std::string bg = c.Call({"BGREWRITEAOF"});
  CHECK(bg == "+Background append only file rewriting started\r\n");
  const std::string again = c.Call({"BGREWRITEAOF"});
  CHECK((again == "+Background append only file rewriting started\r\n" ||
         again == Err("ERR Background append only file rewriting already in progress")));
  CHECK(AwaitInfo(c, "aof_rewrite_in_progress", "0") == "0");
  const std::string bgsave = c.Call({"BGSAVE"});
  CHECK((bgsave == "+Background saving started\r\n" ||
         bgsave == Err("ERR Background save already in progress")));
  CHECK(AwaitInfo(c, "aof_rewrite_in_progress", "0") == "0");
  info = c.Call({"INFO", "persistence"});
  CHECK(std::stoll(InfoField(info, "aof_rewrites")) >= 3);
  CHECK(InfoField(info, "aof_last_bgrewrite_status") == "ok");
}

TEST_CASE("INFO's rdb_changes_since_last_save counts changes, from the last SAVE or the start") {
  TempDir dir;
  auto changes = [](Client& c) {
    return std::stoll(InfoField(c.Call({"INFO", "persistence"}), "rdb_changes_since_last_save"));
  };
  {
    Fixture f({}, WithDataDir(dir.path + "/data", ephpm::FsyncPolicy::kEverySec), WallMs());
    Client c(f.port());
    CHECK(changes(c) == 0);
    REQUIRE(c.Call({"SET", "a", "1"}) == kOk);
    REQUIRE(c.Call({"SET", "a", "1"}) == kOk);       // a write, though the same value
    REQUIRE(c.Call({"SETBIT", "b", "0", "0"}) == Int(0));  // a new key
    REQUIRE(c.Call({"SETBIT", "b", "0", "0"}) == Int(0));  // nothing changes
    REQUIRE(c.Call({"DEL", "nokey"}) == Int(0));     // nothing to delete
    REQUIRE(c.Call({"HSET", "h", "f", "v"}) == Int(1));
    REQUIRE(c.Call({"DEL", "a"}) == Int(1));
    CHECK(changes(c) == 5);  // two SETs, the new bitmap, the hash, the DEL
    CHECK(c.Call({"SAVE"}) == kOk);
    CHECK(changes(c) == 0);
    REQUIRE(c.Call({"INCR", "n"}) == Int(1));
    CHECK(changes(c) == 1);
  }
  // What a start loads is saved already.
  Fixture f({}, WithDataDir(dir.path + "/data", ephpm::FsyncPolicy::kEverySec), WallMs());
  Client c(f.port());
  CHECK(c.Call({"GET", "n"}) == Bulk("1"));
  CHECK(changes(c) == 0);
}

TEST_CASE("persistence off: rdb_changes_since_last_save counts every change since the start") {
  Fixture f;
  Client c(f.port());
  auto changes = [&c] {
    return InfoField(c.Call({"INFO", "persistence"}), "rdb_changes_since_last_save");
  };
  CHECK(changes() == "0");
  REQUIRE(c.Call({"SET", "a", "1"}) == kOk);
  REQUIRE(c.Call({"EXPIRE", "a", "100"}) == Int(1));
  REQUIRE(c.Call({"SET", "b", "1", "NX"}) == kOk);
  REQUIRE(c.Call({"SET", "b", "2", "NX"}) == kNil);  // refused: no change
  CHECK(changes() == "3");
}

TEST_CASE("with a data dir: what RESP wrote is back after a restart, locks included") {
  TempDir dir;
  const StoreOptions so = WithDataDir(dir.path + "/data", ephpm::FsyncPolicy::kAlways);
  const int64_t start = WallMs();
  {
    Fixture f({}, so, start);
    Client c(f.port());
    CHECK(c.Call({"SET", "s", "string value"}) == kOk);
    CHECK(c.Call({"HSET", "h", "f1", "v1", "f2", "v2"}) == Int(2));
    CHECK(c.Call({"SET", "ttl", "x", "PX", "60000"}) == kOk);
    CHECK(c.Call({"SET", "lk", "tok", "NX", "PX", "30000"}) == kOk);
    CHECK(c.Call({"INCRBY", "n", "41"}) == Int(41));
    CHECK(c.Call({"INCR", "n"}) == Int(42));
    CHECK(c.Call({"SET", "gone", "x"}) == kOk);
    CHECK(c.Call({"DEL", "gone"}) == Int(1));
    const std::string info = c.Call({"INFO", "persistence"});
    CHECK(InfoField(info, "aof_fsync") == "always");
    // Every write of this connection waited for its fsync: group commits happened.
    CHECK(std::stoll(InfoField(info, "aof_commit_batches")) >= 1);
  }
  // The restart happens a second later by the store's clock.
  Fixture f({}, so, start + 1000);
  Client c(f.port());
  CHECK(c.Call({"GET", "s"}) == Bulk("string value"));
  CHECK(c.Call({"HGET", "h", "f2"}) == Bulk("v2"));
  CHECK(c.Call({"HLEN", "h"}) == Int(2));
  CHECK(c.Call({"PTTL", "ttl"}) == Int(59000));
  // A lock taken over RESP belongs to a client outside the process: kept.
  CHECK(c.Call({"GET", "lk"}) == Bulk("tok"));
  CHECK(c.Call({"PTTL", "lk"}) == Int(29000));
  CHECK(c.Call({"SET", "lk", "other", "NX", "PX", "30000"}) == kNil);
  CHECK(c.Call({"GET", "n"}) == Bulk("42"));
  CHECK(c.Call({"EXISTS", "gone"}) == Int(0));
  CHECK(InfoField(c.Call({"INFO", "persistence"}), "rdb_last_load_keys_loaded") == "5");
}

TEST_CASE("a log that cannot be written: MISCONF for writes, reads go on, writes resume") {
  Tmpfs fs("256k");
  if (!fs.ok) {
    WARN("skipped: cannot mount a tmpfs here (" << fs.error << ")");
    return;
  }
  Fixture f({}, WithDataDir(fs.dir.path + "/data", ephpm::FsyncPolicy::kAlways), WallMs());
  Client c(f.port());
  REQUIRE(c.Call({"SET", "before", "1"}) == kOk);

  // Batches of [SET, GET, SET, PING] (one packet, one read: one batch for
  // the server) until the disk is full.  Up to then every write is durable
  // when answered.  The first batch the disk cannot take ran its writes (no
  // write had failed yet, so nothing refused them), but its fsync failed:
  // their success replies become MISCONF, while its read saw the change,
  // which stays in memory unconfirmed.
  const std::string value(3000, 'x');
  std::vector<std::string> failing;
  for (int b = 0; b < 1000 && failing.empty(); ++b) {
    const std::string k = "k" + std::to_string(b);
    REQUIRE(c.Send(Encode({"SET", k, value}) + Encode({"GET", k}) + Encode({"SET", k + "b", value}) +
                   Encode({"PING"})));
    std::vector<std::string> r;
    for (int i = 0; i < 4; ++i) r.push_back(c.Reply());
    if (r[0] == kOk && r[2] == kOk) {
      REQUIRE(r[1] == Bulk(value));
      REQUIRE(r[3] == "+PONG\r\n");
    } else {
      failing = r;
    }
  }
  REQUIRE(failing.size() == 4);
  CHECK(failing[0].rfind(kMisconfStart, 0) == 0);
  CHECK(failing[1] == Bulk(value));
  CHECK(failing[2].rfind(kMisconfStart, 0) == 0);
  CHECK(failing[3] == "+PONG\r\n");
  // The reason is the disk's.
  CHECK(failing[0].find("No space left on device") != std::string::npos);

  // Meanwhile writes are refused up front, reads go on.
  const std::string refused = c.Call({"SET", "k", "v"});
  CHECK(refused.rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"DEL", "before"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"FLUSHALL"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"GET", "before"}) == Bulk("1"));
  CHECK(c.Call({"EXISTS", "k0"}) == Int(1));
  CHECK(c.Call({"DELIFEQ", "before", "1"}).rfind(kMisconfStart, 0) == 0);
  // The conditional writes and the lock commands are writes too; DIGEST and
  // LOCK.FENCE only read.
  CHECK(c.Call({"DELEX", "before", "IFEQ", "1"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"DELEX", "before"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"SET", "before", "2", "IFEQ", "1"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"SET", "lk", "t", "NX", "PX", "1000"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"SET", "res", "v", "FENCE", "1"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"PEXPIRE", "before", "1000", "IFEQ", "1"}).rfind(kMisconfStart, 0) == 0);
  CHECK(c.Call({"DIGEST", "before"}) == Bulk("65cd25028f98f158"));
  CHECK(c.Call({"LOCK.FENCE", "before"}) == Int(0));
  CHECK(c.Call({"GET", "before"}) == Bulk("1"));
  std::string info = c.Call({"INFO", "persistence"});
  CHECK(InfoField(info, "aof_last_write_status") == "err");
  CHECK(InfoField(info, "aof_last_write_error") == "No space left on device");

  // A snapshot cannot be written either: SAVE says why.
  const std::string save = c.Call({"SAVE"});
  CHECK(save.rfind("-ERR ", 0) == 0);
  CHECK(save != kOk);
  CHECK(InfoField(c.Call({"INFO", "persistence"}), "aof_last_bgrewrite_status") == "err");

  // Room again: the writer's retry succeeds, writes resume.
  REQUIRE(fs.Resize("8m"));
  CHECK(AwaitInfo(c, "aof_last_write_status", "ok") == "ok");
  CHECK(c.Call({"SET", "k", "v"}) == kOk);
  CHECK(c.Call({"GET", "k"}) == Bulk("v"));
  CHECK(c.Call({"SAVE"}) == kOk);
  CHECK(InfoField(c.Call({"INFO", "persistence"}), "aof_last_bgrewrite_status") == "ok");
}
