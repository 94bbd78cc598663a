// Server commands: INFO, DBSIZE, FLUSHDB/FLUSHALL, TIME, SAVE, BGSAVE,
// BGREWRITEAOF, LASTSAVE, and COMMAND (read from the command table).

#include "command_table.h"
#include "ephpm/glob.h"
#include "scripting.h"

#include <sys/resource.h>
#include <sys/time.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

std::string Human(uint64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%lluB", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024ull * 1024) {
    std::snprintf(buf, sizeof buf, "%.2fK", b / 1024);
  } else if (bytes < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2fM", b / (1024 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%.2fG", b / (1024.0 * 1024 * 1024));
  }
  return buf;
}

// LASTSAVE and rdb_last_save_time: the last snapshot's time, else (no
// snapshot yet, or persistence off) the start's, as Redis reports.
int64_t LastSaveUnix(Ctx& c, const PersistenceInfo& p) {
  if (p.enabled && p.last_save_unix > 0) return p.last_save_unix;
  return c.server->started_at_ms() / 1000;
}

std::string InfoText(Ctx& c, const std::vector<std::string>& asked) {
  const StoreStats st = c.store->Stats();
  const StoreOptions& o = c.store->options();
  auto wants = [&](std::string_view section, bool in_default) {
    if (asked.empty()) return in_default;
    for (const std::string& a : asked) {
      const std::string l = Lower(a);
      if (l == section || l == "all" || l == "everything" || (l == "default" && in_default)) {
        return true;
      }
    }
    return false;
  };
  std::string out;
  auto line = [&out](std::string_view k, const std::string& v) {
    out.append(k).append(":").append(v).append("\r\n");
  };
  auto section = [&out](std::string_view title) {
    if (!out.empty()) out.append("\r\n");
    out.append("# ").append(title).append("\r\n");
  };
  const int64_t now = c.store->NowMs();
  const int64_t uptime = (now - c.server->started_at_ms()) / 1000;
  if (wants("server", true)) {
    section("Server");
    line("redis_version", kRedisCompatVersion);
    line("ephpm_version", "0.1.0");
    line("redis_mode", "standalone");
    line("os", "Linux");
    line("arch_bits", std::to_string(sizeof(void*) * 8));
    line("multiplexing_api", "epoll");
    line("process_id", std::to_string(getpid()));
    line("tcp_port", std::to_string(c.server->tcp_port()));
    line("uptime_in_seconds", std::to_string(uptime));
    line("uptime_in_days", std::to_string(uptime / 86400));
  }
  if (wants("clients", true)) {
    section("Clients");
    line("connected_clients", std::to_string(c.server->connected_clients()));
    line("maxclients", std::to_string(c.server->max_clients()));
    line("blocked_clients", std::to_string(c.server->blocked_clients()));
  }
  if (wants("memory", true)) {
    section("Memory");
    line("used_memory", std::to_string(st.memory_used));
    line("used_memory_human", Human(st.memory_used));
    line("maxmemory", std::to_string(st.memory_limit));
    line("maxmemory_human", Human(st.memory_limit));
    line("maxmemory_policy",
         o.eviction == EvictionPolicy::kAllKeysLru ? "allkeys-lru" : "noeviction");
    // Redis's name for the C library's malloc, which ephpm allocates with
    // (clients and test suites read it to tell jemalloc builds apart).
    line("mem_allocator", "libc");
    line("number_of_cached_scripts", std::to_string(c.dispatcher->scripting().cached()));
    // ephpm's own: live locks (set_nx with a TTL), which eviction never takes.
    line("pinned_keys", std::to_string(st.pinned_keys));
    line("pinned_bytes", std::to_string(st.pinned_bytes));
  }
  if (wants("persistence", true)) {
    // Redis's names where they apply: ephpm's snapshot is both Redis's RDB
    // save and its AOF rewrite, so the rdb_ and aof_ figures of one
    // snapshot agree.  ephpm's own figures follow, prefixed aof_ too.
    const PersistenceInfo p = c.store->persistence_info();
    auto num = [](uint64_t v) { return std::to_string(v); };
    const char* rewrite_status = p.last_rewrite_ok ? "ok" : "err";
    section("Persistence");
    line("loading", "0");
    line("async_loading", "0");
    const uint64_t changes = st.changes;
    line("rdb_changes_since_last_save",
         num(changes > p.changes_at_last_save ? changes - p.changes_at_last_save : 0));
    line("rdb_bgsave_in_progress", p.rewrite_in_progress ? "1" : "0");
    line("rdb_last_save_time", std::to_string(LastSaveUnix(c, p)));
    line("rdb_last_bgsave_status", rewrite_status);
    line("rdb_saves", num(p.rewrites));
    line("rdb_last_load_keys_loaded", num(p.loaded_keys));
    line("aof_enabled", p.enabled ? "1" : "0");
    line("aof_rewrite_in_progress", p.rewrite_in_progress ? "1" : "0");
    line("aof_rewrite_scheduled", "0");
    line("aof_last_bgrewrite_status", rewrite_status);
    line("aof_rewrites", num(p.rewrites));
    line("aof_last_write_status", p.write_error.empty() ? "ok" : "err");
    if (p.enabled) {
      line("aof_current_size", num(p.log_bytes));
      line("aof_base_size", num(p.log_base_bytes));
      line("aof_buffer_length", num(p.buffered_bytes));
      line("aof_fsync", FsyncPolicyName(p.fsync));
      line("aof_last_write_error", p.write_error);
      line("aof_last_bgrewrite_error", p.last_rewrite_error);
      line("aof_records", num(p.records));
      line("aof_write_calls", num(p.write_calls));
      line("aof_fsyncs", num(p.fsyncs));
      line("aof_commit_batches", num(p.commit_batches));
      line("aof_commit_records", num(p.commit_records));
      line("aof_commit_max_batch", num(p.commit_max_batch));
      line("aof_loaded_records", num(p.loaded_records));
      line("aof_truncated_bytes", num(p.truncated_bytes));
      line("aof_load_ms", std::to_string(p.load_ms));
    }
  }
  if (wants("stats", true)) {
    section("Stats");
    line("total_connections_received", std::to_string(c.server->total_connections()));
    line("total_commands_processed", std::to_string(c.dispatcher->total_commands()));
    line("rejected_connections", std::to_string(c.server->rejected_connections()));
    line("expired_keys", std::to_string(st.expired));
    line("evicted_keys", std::to_string(st.evicted));
    line("keyspace_hits", std::to_string(st.hits));
    line("keyspace_misses", std::to_string(st.misses));
  }
  if (wants("replication", true)) {
    section("Replication");
    line("role", "master");
    line("connected_slaves", "0");
    // ephpm serves no Redis replication stream (its cluster replicates its
    // own way), so, as a Redis that never had a replica, no backlog and
    // offset 0.
    line("master_repl_offset", "0");
    line("repl_backlog_active", "0");
  }
  if (wants("cpu", true)) {
    // The process's CPU time and its children's (snapshot writers run as
    // threads, so the children's is normally zero), in Redis's format.
    section("CPU");
    auto seconds = [](const struct timeval& tv) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%ld.%06ld", static_cast<long>(tv.tv_sec),
                    static_cast<long>(tv.tv_usec));
      return std::string(buf);
    };
    struct rusage self {}, children {};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    line("used_cpu_sys", seconds(self.ru_stime));
    line("used_cpu_user", seconds(self.ru_utime));
    line("used_cpu_sys_children", seconds(children.ru_stime));
    line("used_cpu_user_children", seconds(children.ru_utime));
  }
  if (wants("cluster", true)) {
    // ephpm's cluster is not Redis Cluster: clients must not try to speak
    // the Redis Cluster protocol to it.
    section("Cluster");
    line("cluster_enabled", "0");
  }
  if (wants("keyspace", true)) {
    section("Keyspace");
    for (size_t d = 0; d < st.databases.size(); ++d) {
      if (st.databases[d].keys == 0) continue;
      line("db" + std::to_string(d), "keys=" + std::to_string(st.databases[d].keys) +
                                         ",expires=" +
                                         std::to_string(st.databases[d].keys_with_ttl) +
                                         ",avg_ttl=0");
    }
  }
  const std::string extra = c.server->ExtraInfo();
  if (!extra.empty() && (asked.empty() || wants("ephpm-cluster", false))) {
    if (!out.empty()) out.append("\r\n");
    out.append(extra);
  }
  return out;
}

}  // namespace

void CmdInfo(Ctx& c) {
  std::vector<std::string> asked(c.argv.begin() + 1, c.argv.end());
  c.w.Bulk(InfoText(c, asked));
}

void CmdDbSize(Ctx& c) { c.w.Integer(static_cast<int64_t>(c.store->DbSize())); }

void CmdFlush(Ctx& c) {
  if (c.argv.size() > 2) return c.w.Error(kSyntaxErr);
  if (c.argv.size() == 2 && !IEq(c.argv[1], "ASYNC") && !IEq(c.argv[1], "SYNC")) {
    return c.w.Error(kSyntaxErr);
  }
  const bool all = std::string_view(c.cmd->name) == "flushall";
  if (Failed(c, all ? c.store->FlushEveryDatabase() : c.store->Flush())) return;
  Ok(c);
}

namespace {

// SAVE, BGSAVE and BGREWRITEAOF: the store's snapshot and log compaction.
// `started` is the reply to a background start; a rewrite already running
// is refused with `busy` (Redis's words for each command).
void RewriteCommand(Ctx& c, bool background, std::string_view started, std::string_view busy) {
  if (!c.store->persistence_info().enabled) return c.w.Error(kPersistenceOff);
  std::string message;
  const Status st = c.store->Rewrite(background, &message);
  if (st == Status::kOk) return c.w.SimpleString(background ? started : "OK");
  if (st == Status::kInvalidArgument) return c.w.Error(busy);
  c.w.Error("ERR " + (message.empty() ? std::string(StatusName(st)) : message));
}

}  // namespace

void CmdSave(Ctx& c) { RewriteCommand(c, false, "", "ERR Background save already in progress"); }

// BGSAVE [SCHEDULE]: a snapshot cannot be scheduled behind one in progress
// here, so SCHEDULE is accepted and answered as BGSAVE is.
void CmdBgSave(Ctx& c) {
  if (c.argv.size() > 2 || (c.argv.size() == 2 && !IEq(c.argv[1], "SCHEDULE"))) {
    return c.w.Error(kSyntaxErr);
  }
  RewriteCommand(c, true, "Background saving started", "ERR Background save already in progress");
}

void CmdBgRewriteAof(Ctx& c) {
  RewriteCommand(c, true, "Background append only file rewriting started",
                 "ERR Background append only file rewriting already in progress");
}

void CmdLastSave(Ctx& c) { c.w.Integer(LastSaveUnix(c, c.store->persistence_info())); }

void CmdTime(Ctx& c) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  c.w.ArrayHeader(2);
  c.w.Bulk(std::to_string(tv.tv_sec));
  c.w.Bulk(std::to_string(tv.tv_usec));
}

namespace {

void FlagList(ReplyWriter& w, const Command& cmd) {
  std::vector<const char*> flags;
  if (cmd.flags & kWrite) flags.push_back("write");
  if (cmd.flags & kReadOnly) flags.push_back("readonly");
  if (cmd.flags & kDenyOom) flags.push_back("denyoom");
  if (cmd.flags & kAdmin) flags.push_back("admin");
  if (cmd.flags & kNoAuthNeeded) flags.push_back("no_auth");
  if (cmd.flags & kFast) flags.push_back("fast");
  if (cmd.flags & kNoMulti) flags.push_back("no_multi");
  // Keys found by reading the request, not at fixed positions (KeyPositions).
  const std::string_view name = cmd.name;
  if (NumkeysIndex(name) != 0 || name == "sort" || name == "sort_ro") {
    flags.push_back("movablekeys");
  }
  w.ArrayHeader(flags.size());
  for (const char* f : flags) w.SimpleString(f);
}

void CommandInfo(Ctx& c, const Command& cmd) {
  // [name, arity, flags, first key, last key, step, ACL categories, tips,
  //  key specs, subcommands], as Redis 7's COMMAND INFO.
  std::string_view name = cmd.name;
  c.w.ArrayHeader(10);
  c.w.Bulk(name);
  c.w.Integer(cmd.arity);
  FlagList(c.w, cmd);
  c.w.Integer(cmd.first_key);
  c.w.Integer(cmd.last_key);
  c.w.Integer(cmd.step);
  std::vector<std::string_view> cats;
  for (std::string_view rest = cmd.acl; !rest.empty();) {
    const size_t sp = rest.find(' ');
    cats.push_back(rest.substr(0, sp));
    rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
  }
  c.w.ArrayHeader(cats.size());
  for (std::string_view cat : cats) c.w.SimpleString(cat);
  c.w.ArrayHeader(0);
  c.w.ArrayHeader(0);
  std::vector<const Command*> subs;
  for (const Command* s : AllCommands()) {
    const std::string_view sn = s->name;
    if (sn.size() > name.size() && sn.substr(0, name.size()) == name && sn[name.size()] == '|') {
      subs.push_back(s);
    }
  }
  c.w.ArrayHeader(subs.size());
  for (const Command* s : subs) CommandInfo(c, *s);
}

std::vector<const Command*> TopLevel() {
  std::vector<const Command*> out;
  for (const Command* cmd : AllCommands()) {
    if (std::strchr(cmd->name, '|') == nullptr) out.push_back(cmd);
  }
  return out;
}

}  // namespace

void CmdCommand(Ctx& c) {
  const auto top = TopLevel();
  c.w.ArrayHeader(top.size());
  for (const Command* cmd : top) CommandInfo(c, *cmd);
}

void CmdCommandCount(Ctx& c) { c.w.Integer(static_cast<int64_t>(TopLevel().size())); }

void CmdCommandInfo(Ctx& c) {
  if (c.argv.size() == 2) return CmdCommand(c);
  c.w.ArrayHeader(c.argv.size() - 2);
  for (size_t i = 2; i < c.argv.size(); ++i) {
    auto it = Table().find(Lower(c.argv[i]));
    if (it == Table().end() || std::strchr(it->second->name, '|') != nullptr) {
      c.w.NullBulk();  // Redis 7.0's RESP2 null for an unknown command here
    } else {
      CommandInfo(c, *it->second);
    }
  }
}

// Docs are not carried: an empty map, which redis-cli accepts (it then uses
// its own built-in help).
void CmdCommandDocs(Ctx& c) { c.w.ArrayHeader(0); }

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN glob]:
// every command and subcommand ("client|list"), as Redis 7.0 lists them.
// ephpm has no modules; a category that does not exist matches nothing; a
// pattern matches the full name ignoring case.
void CmdCommandList(Ctx& c) {
  enum class Filter { kNone, kModule, kAclCat, kPattern } filter = Filter::kNone;
  std::string arg;
  for (size_t i = 2; i < c.argv.size(); ++i) {
    if (IEq(c.argv[i], "filterby") && c.argv.size() - 1 - i == 2) {
      const std::string& type = c.argv[i + 1];
      if (IEq(type, "module")) {
        filter = Filter::kModule;
      } else if (IEq(type, "aclcat")) {
        filter = Filter::kAclCat;
      } else if (IEq(type, "pattern")) {
        filter = Filter::kPattern;
      } else {
        return c.w.Error(kSyntaxErr);
      }
      arg = Lower(c.argv[i + 2]);
      i += 2;
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  std::vector<const Command*> listed;
  for (const Command* cmd : AllCommands()) {
    switch (filter) {
      case Filter::kNone: listed.push_back(cmd); break;
      case Filter::kModule: break;
      case Filter::kAclCat: {
        const std::string acl = " " + std::string(cmd->acl) + " ";
        if (acl.find(" @" + arg + " ") != std::string::npos) listed.push_back(cmd);
        break;
      }
      case Filter::kPattern:
        if (GlobMatch(arg, cmd->name)) listed.push_back(cmd);
        break;
    }
  }
  c.w.ArrayHeader(listed.size());
  for (const Command* cmd : listed) c.w.Bulk(cmd->name);
}

// COMMAND GETKEYS command [arg ...]: the keys the request names, as Redis
// 7.0 finds them (KeyPositions), with its errors in its order.
void CmdCommandGetKeys(Ctx& c) {
  const Args request(c.argv.begin() + 2, c.argv.end());
  const Command* cmd = LookupRequest(request);
  if (cmd == nullptr) return c.w.Error("ERR Invalid command specified");
  if (!HasKeys(*cmd)) return c.w.Error("ERR The command has no key arguments");
  const int n = static_cast<int>(request.size());
  if ((cmd->arity > 0 && cmd->arity != n) || n < -cmd->arity) {
    return c.w.Error("ERR Invalid number of arguments specified for command");
  }
  std::vector<size_t> positions;
  if (!KeyPositions(*cmd, request, &positions)) {
    // EVAL's keys are optional (Redis's NO_MANDATORY_KEYS); other
    // commands' are not.
    if (NumkeysIndex(cmd->name) != 0 && std::string_view(cmd->name).rfind("eval", 0) == 0) {
      return c.w.ArrayHeader(0);
    }
    return c.w.Error("ERR Invalid arguments specified for command");
  }
  c.w.ArrayHeader(positions.size());
  for (size_t i : positions) c.w.Bulk(request[i]);
}

// As CLIENT HELP: Redis's lines for the subcommands ephpm has.
void CmdCommandHelp(Ctx& c) {
  static const char* const lines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all Redis commands.",
      "COUNT",
      "    Return the total number of commands in this Redis server.",
      "LIST",
      "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]",
      "    Return details about multiple Redis commands.",
      "    If no command names are given, documentation details for all",
      "    commands are returned.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about multiple Redis commands.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, lines);
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
