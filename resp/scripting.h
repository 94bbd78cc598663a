// Redis scripting (EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT) on Lua 5.1,
// with Redis 7.0's semantics: the redis.* API, the Lua<->RESP conversions,
// the sandbox and its error texts, the script cache by SHA1, the time limit
// and SCRIPT KILL.
//
// Where ephpm differs from Redis (the store is sharded and multi-threaded,
// Redis is single-threaded):
// - A script may only touch the keys it declares in KEYS, and keys in the
//   same shards (a hash tag "{k}..." puts a key in the shard of k, as in
//   Redis Cluster): a redis.call on any other key raises kUndeclaredKey.  The script runs with the shards of
//   its KEYS locked (atomic against every other client), or with every shard
//   locked when it names a keyspace-wide command (KEYS, SCAN, DBSIZE,
//   RANDOMKEY, FLUSHDB, FLUSHALL) as a string literal; such a command not
//   named so raises kNeedsAllShards.
// - SELECT, MOVE, FLUSHALL (and SWAPDB) need every database locked: the
//   script must name them as string literals too; then it may use other
//   databases.  Such a script cannot run inside MULTI (EXEC holds only the
//   caller's database for EVAL).  Commands with movable keys (ZUNIONSTORE
//   and the other numkeys commands) have those keys checked too.
// - INFO counts every shard: it needs them all too, like KEYS.
// - Scripts run in parallel on different I/O threads when their keys do not
//   share a shard.  SCRIPT KILL kills every script past the busy threshold
//   that has not written; it replies UNKILLABLE only when all of them wrote.
// - Past the threshold, a command of another client that needs a busy
//   script's shards is answered -BUSY (BusyFor); below it, it waits for the
//   script in BusyFor, at most until the threshold.  Other shards go on.
// - Libraries: base (without print, dofile, loadfile, getfenv, setfenv,
//   newproxy), table, string, math, coroutine, and Debian's builds of the
//   cjson (2.1.0) and bit (LuaBitOp 1.0.2) libraries Redis embeds, as
//   read-only globals.  No cmsgpack or struct.  loadstring/load refuse
//   precompiled chunks.  redis.* has call,
//   pcall, error_reply, status_reply, sha1hex, log, LOG_*, REDIS_VERSION,
//   REDIS_VERSION_NUM and replicate_commands (always true, as in 7.0); not
//   setresp, set_repl, breakpoint, debug, acl_check_cmd.
// - Read-only globals: assigning any global raises Redis's "Attempt to
//   modify a readonly table"; reading a missing one raises "Script attempted
//   to access nonexistent global variable".  _G and the library tables are
//   read-only proxies: pairs() over them sees nothing.
//
// Thread-safe: one Scripting per Dispatcher; the script cache is shared
// under a mutex (ephpm::Mutex, visible to TSan), each I/O thread has its own Lua state (thread_local), whose
// compiled functions are dropped after any SCRIPT FLUSH.

#ifndef EPHPM_RESP_SCRIPTING_H_
#define EPHPM_RESP_SCRIPTING_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "mutex.h"
#include "command_table.h"

namespace ephpm {
namespace resp {
namespace script {

// Redis's own texts.
inline constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";
inline constexpr std::string_view kNotBusy = "NOTBUSY No scripts in execution right now.";
inline constexpr std::string_view kBusy =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
inline constexpr std::string_view kUnkillable =
    "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
    "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
    "NOSAVE command.";
// ephpm's own (raised inside the script, like any redis.call error).
inline constexpr std::string_view kUndeclaredKey =
    "ERR Script attempted to access a key not declared in KEYS";
inline constexpr std::string_view kNeedsAllShards =
    "ERR Script attempted to call a keyspace-wide command that it does not name as a string "
    "literal";

// Lowercase hex SHA1 of data, as redis.sha1hex and the script cache use.
std::string Sha1Hex(std::string_view data);

class Scripting {
 public:
  explicit Scripting(int64_t busy_threshold_ms = 5000) : busy_threshold_ms_(busy_threshold_ms) {}
  ~Scripting();
  Scripting(const Scripting&) = delete;
  Scripting& operator=(const Scripting&) = delete;

  // EVAL/EVALSHA (by_sha) and their _RO forms; c.argv is the whole request.
  // Sets c.client->exec_wrote when the script ran a write command.
  void Eval(cmd::Ctx& c, bool by_sha, bool read_only);
  void Load(cmd::Ctx& c);
  void Exists(cmd::Ctx& c);
  void Flush(cmd::Ctx& c);
  void Kill(cmd::Ctx& c);
  // The server is stopping: kills every running script that has not
  // written, whatever its age (one that wrote runs to its end, as it must
  // to stay atomic).
  void KillForShutdown();
  // Scripts in the cache (INFO's number_of_cached_scripts).
  size_t cached();

  // Redis's busy-reply-threshold (lua-time-limit): past it a running script
  // may be killed with SCRIPT KILL, and a command of another client that
  // would wait for the script's shards is answered -BUSY instead (BusyFor).
  void set_busy_threshold_ms(int64_t ms) { busy_threshold_ms_.store(ms); }
  int64_t busy_threshold_ms() const { return busy_threshold_ms_.load(); }

  // kBusy when the command in c needs the shards of a script running past
  // the busy threshold, else "".  A command that needs the shards of a
  // younger script waits here for it to end, at most until it passes the
  // threshold (then kBusy), so that no I/O thread waits on an endless
  // script's lock.  Commands on other shards go on: there is no global lock
  // to be busy with.  Not for the commands a script or an EXEC runs (their
  // section holds the shards).  While no script runs: a store to the
  // thread's own mark slot and one atomic load.
  //
  // A command let through marks its thread until EndCommand; a script that
  // registers waits for the commands marked then to end before it locks, so
  // that none of them meets the script's lock on its way to its shards
  // (scripting.cc, "Admission marks").
  std::string_view BusyFor(const cmd::Ctx& c);
  // The end of the command BusyFor let through on this thread.
  static void EndCommand();

  // Called (on the script's thread, from its hook) when a script passes the
  // busy threshold, with a flag that turns true when it ends.  The script
  // holds its I/O thread until then: the server gives itself another one
  // meanwhile, so that it still answers -BUSY and SCRIPT KILL however many
  // scripts run away.  Set before any script runs.
  void set_on_busy(std::function<void(std::shared_ptr<std::atomic<bool>>)> fn) {
    on_busy_ = std::move(fn);
  }

  struct Entry;
  struct Run;
  // From a running script's hook: reports it (once) when past the threshold.
  void ReportIfBusy(Run* run);

 private:
  // The cached script for body (compiled on this thread first: nullptr and
  // *error set when it does not compile).
  std::shared_ptr<const Entry> Add(std::string_view body, std::string* error);
  std::shared_ptr<const Entry> Find(const std::string& lower_sha);
  // Adds run to running_, or kBusy.  A run that takes locks (outside EXEC)
  // first waits for overlapping runs as BusyFor does, then for the commands
  // already let through (marked).
  std::string_view Register(Run* run, bool takes_locks, size_t per_db);
  std::string_view WaitForOverlapping(MutexLock* l, const std::vector<size_t>& shards,
                                      const std::vector<uint32_t>& databases, size_t per_db)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unregister(Run* run);

  std::atomic<int64_t> busy_threshold_ms_;
  Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Entry>> scripts_ ABSL_GUARDED_BY(mu_);
  std::vector<Run*> running_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> running_count_{0};  // running_.size(), read without mu_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // KillForShutdown was called
  std::condition_variable ended_;  // a run ended (BusyFor waits on it)
  std::function<void(std::shared_ptr<std::atomic<bool>>)> on_busy_;
};

}  // namespace script
}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_SCRIPTING_H_
