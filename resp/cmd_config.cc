// CONFIG GET/SET/RESETSTAT/REWRITE/HELP over the parameters ephpm has, with
// Redis 7.0's names (and their old aliases), value syntax and error texts;
// and FUNCTION, of which ephpm has the empty library only.
//
// A parameter is one of three kinds:
// - runtime: CONFIG SET changes it at once (maxmemory, busy-reply-threshold,
//   the client limits, the encoding thresholds OBJECT ENCODING reports by);
// - start-only: set by the host's flags and INI settings (databases, the
//   eviction policy, persistence, the address); CONFIG SET accepts only the
//   value it already has and otherwise says which flag sets it;
// - save: ephpm takes no save-point snapshots (its persistence is the log
//   of --data-dir), so `save` reads "" and only "" is accepted.

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "command_table.h"
#include "ephpm/glob.h"
#include "ephpm/persistence.h"
#include "scripting.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

// Redis's memtoull: digits, then an optional unit b k kb m mb g gb (any
// case; k = 1000, kb = 1024).  No sign.  Unlike Redis, a product that
// overflows is refused rather than wrapped.
bool ParseMemory(const std::string& v, uint64_t* out) {
  size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
  const std::string unit = Lower(std::string_view(v).substr(i));
  uint64_t mul = 0;
  if (unit.empty() || unit == "b") mul = 1;
  else if (unit == "k") mul = 1000;
  else if (unit == "kb") mul = 1024;
  else if (unit == "m") mul = 1000 * 1000;
  else if (unit == "mb") mul = 1024 * 1024;
  else if (unit == "g") mul = 1000ull * 1000 * 1000;
  else if (unit == "gb") mul = 1024ull * 1024 * 1024;
  else return false;
  // No digits ("" or a unit alone) is 0, as strtoull reads it in Redis.
  if (i == 0) {
    *out = 0;
    return true;
  }
  errno = 0;
  char* end = nullptr;
  const std::string digits = v.substr(0, i);
  const unsigned long long n = std::strtoull(digits.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return false;
  if (n != 0 && mul > UINT64_MAX / n) return false;
  *out = n * mul;
  return true;
}

enum class Kind { kInteger, kMemory, kStartOnly, kImmutable, kSave };

struct Param {
  const char* name;
  const char* alias;  // Redis's older name, or null
  Kind kind;
  int64_t min, max;  // for kInteger and kMemory
  std::string (*get)(Ctx& c);
  void (*set)(Ctx& c, int64_t v);  // runtime kinds only
  const char* how;                 // start-only: what sets it
};

RuntimeConfig& Rt(Ctx& c) { return c.dispatcher->config(); }

std::string Num(int64_t v) { return std::to_string(v); }

const char* EvictionName(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLru ? "allkeys-lru" : "noeviction";
}

const Param kParams[] = {
    {"maxmemory", nullptr, Kind::kMemory, 0, INT64_MAX,
     [](Ctx& c) { return std::to_string(c.store->memory_limit()); },
     [](Ctx& c, int64_t v) { c.store->SetMemoryLimit(static_cast<uint64_t>(v)); }, nullptr},
    {"busy-reply-threshold", "lua-time-limit", Kind::kInteger, 0, INT64_MAX,
     [](Ctx& c) { return Num(c.dispatcher->scripting().busy_threshold_ms()); },
     [](Ctx& c, int64_t v) { c.dispatcher->scripting().set_busy_threshold_ms(v); }, nullptr},
    {"maxclients", nullptr, Kind::kInteger, 1, UINT32_MAX,
     [](Ctx& c) { return std::to_string(Rt(c).max_clients.load()); },
     [](Ctx& c, int64_t v) { Rt(c).max_clients = static_cast<uint64_t>(v); }, nullptr},
    {"timeout", nullptr, Kind::kInteger, 0, INT32_MAX,
     [](Ctx& c) { return Num(Rt(c).idle_timeout_seconds.load()); },
     [](Ctx& c, int64_t v) {
       Rt(c).idle_timeout_seconds = v;
       c.server->IdleTimeoutChanged();
     },
     nullptr},
    {"proto-max-bulk-len", nullptr, Kind::kMemory, 1024 * 1024, INT64_MAX,
     [](Ctx& c) { return std::to_string(Rt(c).max_bulk_len.load()); },
     [](Ctx& c, int64_t v) { Rt(c).max_bulk_len = static_cast<uint64_t>(v); }, nullptr},
    {"client-query-buffer-limit", nullptr, Kind::kMemory, 1024 * 1024, INT64_MAX,
     [](Ctx& c) { return std::to_string(Rt(c).max_query_buffer.load()); },
     [](Ctx& c, int64_t v) { Rt(c).max_query_buffer = static_cast<uint64_t>(v); }, nullptr},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", Kind::kInteger, 0, INT64_MAX,
     [](Ctx& c) { return Num(Rt(c).hash_max_listpack_entries.load()); },
     [](Ctx& c, int64_t v) { Rt(c).hash_max_listpack_entries = v; }, nullptr},
    {"hash-max-listpack-value", "hash-max-ziplist-value", Kind::kMemory, 0, INT64_MAX,
     [](Ctx& c) { return Num(Rt(c).hash_max_listpack_value.load()); },
     [](Ctx& c, int64_t v) { Rt(c).hash_max_listpack_value = v; }, nullptr},
    {"set-max-intset-entries", nullptr, Kind::kInteger, 0, INT64_MAX,
     [](Ctx& c) { return Num(Rt(c).set_max_intset_entries.load()); },
     [](Ctx& c, int64_t v) { Rt(c).set_max_intset_entries = v; }, nullptr},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", Kind::kInteger, 0, INT64_MAX,
     [](Ctx& c) { return Num(Rt(c).zset_max_listpack_entries.load()); },
     [](Ctx& c, int64_t v) { Rt(c).zset_max_listpack_entries = v; }, nullptr},
    {"zset-max-listpack-value", "zset-max-ziplist-value", Kind::kMemory, 0, INT64_MAX,
     [](Ctx& c) { return Num(Rt(c).zset_max_listpack_value.load()); },
     [](Ctx& c, int64_t v) { Rt(c).zset_max_listpack_value = v; }, nullptr},
    {"list-max-listpack-size", "list-max-ziplist-size", Kind::kInteger, INT32_MIN, INT32_MAX,
     [](Ctx& c) { return Num(Rt(c).list_max_listpack_size.load()); },
     [](Ctx& c, int64_t v) { Rt(c).list_max_listpack_size = v; }, nullptr},
    {"list-compress-depth", nullptr, Kind::kInteger, 0, INT32_MAX,
     [](Ctx& c) { return Num(Rt(c).list_compress_depth.load()); },
     [](Ctx& c, int64_t v) { Rt(c).list_compress_depth = v; }, nullptr},
    {"databases", nullptr, Kind::kImmutable, 0, 0,
     [](Ctx& c) { return std::to_string(c.store->options().databases); }, nullptr,
     "--databases or ephpm.databases"},
    {"maxmemory-policy", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) { return std::string(EvictionName(c.store->options().eviction)); }, nullptr,
     "ephpm.eviction_policy"},
    {"appendonly", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) {
       return std::string(c.store->options().persistence.data_dir.empty() ? "no" : "yes");
     },
     nullptr, "--data-dir"},
    {"appendfsync", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) { return std::string(FsyncPolicyName(c.store->options().persistence.fsync)); },
     nullptr, "--fsync"},
    {"dir", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) { return c.store->options().persistence.data_dir; }, nullptr, "--data-dir"},
    {"port", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) { return std::to_string(c.server->tcp_port()); }, nullptr, "--resp"},
    {"io-threads", nullptr, Kind::kStartOnly, 0, 0,
     [](Ctx& c) { return std::to_string(c.server->io_threads()); }, nullptr,
     "--resp-io-threads"},
    {"save", nullptr, Kind::kSave, 0, 0, [](Ctx&) { return std::string(); }, nullptr, nullptr},
};

// By name or alias, ignoring case; null when ephpm has no such parameter.
// *spelling is the name or the alias it was found by.
const Param* Find(const std::string& name, const char** spelling = nullptr) {
  const std::string lower = Lower(name);
  for (const Param& p : kParams) {
    if (lower == p.name || (p.alias != nullptr && lower == p.alias)) {
      if (spelling != nullptr) *spelling = lower == p.name ? p.name : p.alias;
      return &p;
    }
  }
  return nullptr;
}

}  // namespace

// CONFIG GET pattern [pattern ...]: name/value pairs, each name once.  A
// pattern without glob characters must be a name or an alias (any case)
// and is answered under the spelling asked; a glob matches names and
// aliases ignoring case, each answered under its own spelling.
void CmdConfigGet(Ctx& c) {
  std::vector<std::pair<std::string, const Param*>> out;
  auto has = [&](std::string_view key) {  // (Redis's match set ignores case)
    for (const auto& o : out) {
      if (IEq(o.first, key)) return true;
    }
    return false;
  };
  for (size_t i = 2; i < c.argv.size(); ++i) {
    const std::string& pattern = c.argv[i];
    if (pattern.find_first_of("[*?") == std::string::npos) {
      const Param* p = Find(pattern);
      if (p != nullptr && !has(pattern)) out.emplace_back(pattern, p);
      continue;
    }
    const std::string lower = Lower(pattern);
    for (const Param& p : kParams) {
      for (const char* spelling : {p.name, p.alias}) {
        if (spelling != nullptr && !has(spelling) && GlobMatch(lower, spelling)) {
          out.emplace_back(spelling, &p);
        }
      }
    }
  }
  c.w.ArrayHeader(out.size() * 2);
  for (const auto& [name, p] : out) {
    c.w.Bulk(name);
    c.w.Bulk(p->get(c));
  }
}

// CONFIG SET name value [name value ...]: all or nothing, as Redis 7.0.
void CmdConfigSet(Ctx& c) {
  if (c.argv.size() % 2 != 0) return c.w.Error("ERR syntax error");
  struct Change {
    const Param* p;
    const char* spelling;
    int64_t value;
  };
  std::vector<Change> changes;
  for (size_t i = 2; i + 1 < c.argv.size(); i += 2) {
    if (Find(c.argv[i]) == nullptr) {
      return c.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" +
                       std::string(CStr(c.argv[i], 128)) + "'");
    }
  }
  auto failed = [&](const std::string& name, const std::string& why) {
    c.w.Error("ERR CONFIG SET failed (possibly related to argument '" +
              std::string(CStr(name, 128)) + "') - " + why);
  };
  for (size_t i = 2; i + 1 < c.argv.size(); i += 2) {
    const char* spelling = nullptr;
    const Param* p = Find(c.argv[i], &spelling);
    // (Redis tells a name from its alias here: the later one wins.)
    for (const Change& ch : changes) {
      if (ch.p == p && ch.spelling == spelling) return failed(c.argv[i], "duplicate parameter");
    }
    const std::string& v = c.argv[i + 1];
    switch (p->kind) {
      case Kind::kImmutable:
        return failed(p->name, "can't set immutable config");
      case Kind::kSave:
        if (!v.empty()) {
          return failed(p->name,
                        "ephpm takes no save-point snapshots; its persistence is the log of "
                        "--data-dir (SAVE/BGSAVE compact it)");
        }
        continue;
      case Kind::kStartOnly:
        if (v != p->get(c)) {
          return failed(p->name, std::string("ephpm sets it at start only (") + p->how + ")");
        }
        continue;
      case Kind::kInteger:
      case Kind::kMemory: {
        int64_t n = 0;
        uint64_t m = 0;
        if (p->kind == Kind::kMemory && ParseMemory(v, &m) && m <= INT64_MAX) {
          n = static_cast<int64_t>(m);
        } else if (p->kind == Kind::kMemory) {
          return failed(p->name, "argument must be a memory value");
        } else if (!ParseLL(v, &n)) {
          return failed(p->name, "argument couldn't be parsed into an integer");
        }
        if (n < p->min || n > p->max) {
          return failed(p->name, "argument must be between " + std::to_string(p->min) + " and " +
                                     std::to_string(p->max) + " inclusive");
        }
        changes.push_back({p, spelling, n});
        break;
      }
    }
  }
  for (const Change& ch : changes) ch.p->set(c, ch.value);
  Ok(c);
}

void CmdConfigResetStat(Ctx& c) { Ok(c); }

// Redis's answer when it was started without a configuration file, which
// is ephpm's case: its settings are flags and INI settings.
void CmdConfigRewrite(Ctx& c) { c.w.Error("ERR The server is running without a config file"); }

void CmdConfigHelp(Ctx& c) {
  static const char* const kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, kLines);
}

// FUNCTION: ephpm has no function libraries (Redis 7's FUNCTION LOAD is not
// implemented; EVAL is).  FLUSH empties the empty library set, LIST and
// DUMP show it, and the rest say what is missing.
void CmdFunctionFlush(Ctx& c) {
  if (c.argv.size() > 3) {
    return c.w.Error(
        "ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.");
  }
  if (c.argv.size() == 3 && !IEq(c.argv[2], "async") && !IEq(c.argv[2], "sync")) {
    return c.w.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  Ok(c);
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]: no library matches.
void CmdFunctionList(Ctx& c) {
  for (size_t i = 2; i < c.argv.size(); ++i) {
    if (IEq(c.argv[i], "withcode")) continue;
    if (IEq(c.argv[i], "libraryname")) {
      if (++i == c.argv.size()) return c.w.Error("ERR library name argument was not given");
      continue;
    }
    return c.w.Error("ERR Unknown argument " + std::string(CStr(c.argv[i], 128)));
  }
  c.w.ArrayHeader(0);
}

// FUNCTION DELETE name: there is no library to delete.
void CmdFunctionDelete(Ctx& c) { c.w.Error("ERR Library not found"); }

void CmdFunctionUnsupported(Ctx& c) {
  c.w.Error("ERR ephpm does not implement Redis functions (FUNCTION " +
            std::string(CStr(c.argv[1], 64)) + "); use EVAL/EVALSHA");
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
