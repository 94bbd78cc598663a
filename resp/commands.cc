#include "commands.h"

#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "ephpm/glob.h"
#include "ephpm/number_text.h"
#include "ephpm/settings.h"
#include "reply.h"

namespace ephpm {
namespace resp {
namespace {

using Args = std::vector<std::string>;

// ---- replies Redis uses verbatim ---------------------------------------------

constexpr std::string_view kSyntaxErr = "ERR syntax error";
constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
constexpr std::string_view kNotFloat = "ERR value is not a valid float";
constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
constexpr std::string_view kNanInf = "ERR increment would produce NaN or Infinity";
constexpr std::string_view kNoKey = "ERR no such key";
constexpr std::string_view kTooBig = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
constexpr std::string_view kClusterDown =
    "CLUSTERDOWN the key's owner is unreachable, the outcome is unknown";
constexpr std::string_view kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";
constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";

// ---- command table --------------------------------------------------------------

enum Flag : uint32_t {
  kWrite = 1,
  kReadOnly = 2,
  kDenyOom = 4,
  kNoAuthNeeded = 8,  // runs before AUTH (AUTH, HELLO, QUIT)
  kFast = 16,
  kAdmin = 32,
};

struct Ctx;
using Handler = void (*)(Ctx&);

struct Command {
  const char* name;  // lowercase; "container|sub" for subcommands
  int arity;         // Redis's convention: n exact, -n at least n
  uint32_t flags;
  int first_key, last_key, step;
  const char* acl;   // ACL categories, for COMMAND
  Handler fn;
};

struct Ctx {
  Store* store;
  ServerContext* server;
  ClientState* client;
  Dispatcher* dispatcher;
  ReplyWriter& w;
  Args& argv;
  const Command* cmd;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// printf("%.*s") semantics: a C string stops at its first NUL.
std::string_view CStr(std::string_view s, size_t max) {
  const size_t nul = s.find('\0');
  if (nul != std::string_view::npos) s = s.substr(0, nul);
  return s.substr(0, std::min(max, s.size()));
}

// Whether the request argument `arg` is the keyword `name`, ignoring case.
// Redis compares option keywords with strcasecmp, which ends at a NUL: an
// argument "NX\0junk" is the option NX.
bool IEq(std::string_view arg, std::string_view name) {
  return EqualsIgnoreCase(CStr(arg, arg.size()), name);
}

void ArityError(Ctx& c) {
  c.w.Error("ERR wrong number of arguments for '" + std::string(c.cmd->name) + "' command");
}

void Ok(Ctx& c) { c.w.SimpleString("OK"); }

// Replies the error for a store status other than kOk; false for kOk.
bool Failed(Ctx& c, Status st) {
  switch (st) {
    case Status::kOk: return false;
    case Status::kWrongType: c.w.Error(kWrongType); return true;
    case Status::kOutOfMemory: c.w.Error(kOom); return true;
    case Status::kNotInteger: c.w.Error(kNotInteger); return true;
    case Status::kOverflow: c.w.Error(kOverflow); return true;
    case Status::kNotFloat: c.w.Error(kNotFloat); return true;
    case Status::kNanOrInfinity: c.w.Error(kNanInf); return true;
    case Status::kOwnerUnreachable: c.w.Error(kClusterDown); return true;
    case Status::kInvalidArgument:
      c.w.Error("ERR key is longer than " + std::to_string(kMaxKeySize) +
                " bytes or value longer than ephpm.max_value_size");
      return true;
    case Status::kNotFound: c.w.NullBulk(); return true;
  }
  c.w.Error("ERR internal error");
  return true;
}

bool ParseLL(std::string_view s, int64_t* out) { return ParseInt64(s, out); }

// A SCAN/HSCAN cursor as Redis 7.0's parseScanCursorOrReply reads it:
// strtoul over the argument as a C string (so it ends at a NUL), no leading
// space, nothing after the digits, no overflow.  strtoul takes a sign: "-1"
// is the cursor 2^64-1 and "" is 0.
bool ParseCursor(const std::string& s, uint64_t* out) {
  if (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *out = v;
  return true;
}

std::string ExpireTimeError(Ctx& c) {
  return "ERR invalid expire time in '" + std::string(c.cmd->name) + "' command";
}

// ---- connection and server --------------------------------------------------------

void CmdPing(Ctx& c) {
  if (c.argv.size() > 2) return ArityError(c);
  if (c.argv.size() == 1) return c.w.SimpleString("PONG");
  c.w.Bulk(c.argv[1]);
}

void CmdEcho(Ctx& c) { c.w.Bulk(c.argv[1]); }

void CmdQuit(Ctx& c) {
  c.client->close_after_reply = true;
  Ok(c);
}

void CmdSelect(Ctx& c) {
  int64_t db = 0;
  if (!ParseLL(c.argv[1], &db)) return c.w.Error(kNotInteger);
  // Redis's getIntFromObjectOrReply: an int64 outside int has its own text.
  if (db < INT32_MIN || db > INT32_MAX) {
    return c.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
  }
  if (db != 0) return c.w.Error("ERR DB index is out of range");
  Ok(c);
}

// Compares without leaking where the first difference is.
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

// AUTH's decision; replies an error and returns false when refused.
bool Authenticate(Ctx& c, std::string_view user, std::string_view pass) {
  const std::string& want = c.server->password();
  const bool ok = user == "default" && (want.empty() || SameSecret(pass, want));
  if (!ok) {
    c.w.Error(kWrongPass);
    return false;
  }
  c.client->authenticated = true;
  return true;
}

void CmdAuth(Ctx& c) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  if (c.argv.size() == 2 && c.server->password().empty()) {
    return c.w.Error(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?");
  }
  const std::string_view user = c.argv.size() == 3 ? std::string_view(c.argv[1]) : "default";
  if (Authenticate(c, user, c.argv.back())) Ok(c);
}

bool ValidClientName(std::string_view name) {
  for (char ch : name) {
    if (ch < '!' || ch > '~') return false;
  }
  return true;
}

constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

void CmdHello(Ctx& c) {
  int64_t ver = 0;
  if (c.argv.size() >= 2) {
    if (!ParseLL(c.argv[1], &ver)) {
      return c.w.Error("ERR Protocol version is not an integer or out of range");
    }
    if (ver < 2 || ver > 3) return c.w.Error("NOPROTO unsupported protocol version");
  }
  // Redis 7.0 acts on each option as it reads it, left to right: AUTH
  // authenticates and SETNAME names the connection at once, so that a later
  // bad option (or a later wrong password) still leaves them done.
  for (size_t j = 2; j < c.argv.size(); ++j) {
    const size_t more = c.argv.size() - 1 - j;
    if (IEq(c.argv[j], "AUTH") && more >= 2) {
      if (!Authenticate(c, c.argv[j + 1], c.argv[j + 2])) return;
      j += 2;
    } else if (IEq(c.argv[j], "SETNAME") && more >= 1) {
      const std::string& name = c.argv[++j];
      if (!ValidClientName(name)) return c.w.Error(kBadClientName);
      c.client->name = name;
    } else {
      return c.w.Error("ERR Syntax error in HELLO option '" + std::string(CStr(c.argv[j], 1024)) +
                       "'");
    }
  }
  if (!c.client->authenticated) {
    return c.w.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and "
        "select the RESP protocol version at the same time");
  }
  // Only RESP2 is spoken here: HELLO 3 fails where Redis would switch to
  // RESP3, after doing all that Redis does first.
  if (ver == 3) return c.w.Error("NOPROTO unsupported protocol version");
  c.w.ArrayHeader(14);
  c.w.Bulk("server");
  c.w.Bulk("redis");
  c.w.Bulk("version");
  c.w.Bulk(kRedisCompatVersion);
  c.w.Bulk("proto");
  c.w.Integer(2);
  c.w.Bulk("id");
  c.w.Integer(static_cast<int64_t>(c.client->id));
  c.w.Bulk("mode");
  c.w.Bulk("standalone");
  c.w.Bulk("role");
  c.w.Bulk("master");
  c.w.Bulk("modules");
  c.w.ArrayHeader(0);
}

void CmdClientId(Ctx& c) { c.w.Integer(static_cast<int64_t>(c.client->id)); }

void CmdClientGetName(Ctx& c) {
  if (c.client->name.empty()) return c.w.NullBulk();
  c.w.Bulk(c.client->name);
}

void CmdClientSetName(Ctx& c) {
  if (!ValidClientName(c.argv[2])) return c.w.Error(kBadClientName);
  c.client->name = c.argv[2];
  Ok(c);
}

void CmdClientInfo(Ctx& c) { c.w.Bulk(ClientListLine(*c.client) + "\n"); }

// CLIENT LIST [TYPE type]: every connection here is a normal client.
void CmdClientList(Ctx& c) {
  if (c.argv.size() == 4 && IEq(c.argv[2], "TYPE")) {
    const std::string& type = c.argv[3];
    if (IEq(type, "master") || IEq(type, "replica") || IEq(type, "slave") ||
        IEq(type, "pubsub")) {
      return c.w.Bulk("");
    }
    if (!IEq(type, "normal")) {
      return c.w.Error("ERR Unknown client type '" + std::string(CStr(type, type.size())) + "'");
    }
  } else if (c.argv.size() != 2) {
    return c.w.Error(kSyntaxErr);
  }
  std::string all;
  for (const std::string& line : c.server->ClientList()) all.append(line).append("\n");
  c.w.Bulk(all);
}

// Redis 7.0's lines for the subcommands ephpm has, word for word (the
// differential test checks they are a subsequence of Redis's help).
void CmdClientHelp(Ctx& c) {
  static const char* const lines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "HELP",
      "    Prints this help.",
  };
  c.w.ArrayHeader(std::size(lines));
  for (const char* l : lines) c.w.SimpleString(l);
}

// INFO ---------------------------------------------------------------------------------

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
    line("blocked_clients", "0");
  }
  if (wants("memory", true)) {
    section("Memory");
    line("used_memory", std::to_string(st.memory_used));
    line("used_memory_human", Human(st.memory_used));
    line("maxmemory", std::to_string(st.memory_limit));
    line("maxmemory_human", Human(st.memory_limit));
    line("maxmemory_policy",
         o.eviction == EvictionPolicy::kAllKeysLru ? "allkeys-lru" : "noeviction");
    // ephpm's own: live locks (set_nx with a TTL), which eviction never takes.
    line("pinned_keys", std::to_string(st.pinned_keys));
    line("pinned_bytes", std::to_string(st.pinned_bytes));
  }
  if (wants("persistence", true)) {
    section("Persistence");
    line("loading", "0");
    line("rdb_changes_since_last_save", "0");
    line("aof_enabled", "0");
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
  }
  if (wants("cluster", true)) {
    // ephpm's cluster is not Redis Cluster: clients must not try to speak
    // the Redis Cluster protocol to it.
    section("Cluster");
    line("cluster_enabled", "0");
  }
  if (wants("keyspace", true)) {
    section("Keyspace");
    if (st.keys > 0) {
      line("db0", "keys=" + std::to_string(st.keys) + ",expires=" +
                      std::to_string(st.keys_with_ttl) + ",avg_ttl=0");
    }
  }
  const std::string extra = c.server->ExtraInfo();
  if (!extra.empty() && (asked.empty() || wants("ephpm-cluster", false))) {
    if (!out.empty()) out.append("\r\n");
    out.append(extra);
  }
  return out;
}

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
  c.store->Flush();
  Ok(c);
}

void CmdTime(Ctx& c) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  c.w.ArrayHeader(2);
  c.w.Bulk(std::to_string(tv.tv_sec));
  c.w.Bulk(std::to_string(tv.tv_usec));
}

// ---- strings ----------------------------------------------------------------------

void CmdGet(Ctx& c) {
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

// SET/GETEX options as Redis 7.0's parseExtendedStringArgumentsOrReply reads
// them (the order of checks decides which combinations are syntax errors).
enum SetFlag : unsigned {
  kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kPersist = 16, kEx = 32, kPx = 64, kExAt = 128,
  kPxAt = 256,
};

bool ParseSetOptions(Ctx& c, size_t start, bool for_set, unsigned* flags,
                     const std::string** expire) {
  *flags = 0;
  *expire = nullptr;
  for (size_t j = start; j < c.argv.size(); ++j) {
    const std::string& opt = c.argv[j];
    const bool has_next = j + 1 < c.argv.size();
    const unsigned timed = kEx | kPx | kExAt | kPxAt;
    if (IEq(opt, "NX") && !(*flags & kXx) && for_set) {
      *flags |= kNx;
    } else if (IEq(opt, "XX") && !(*flags & kNx) && for_set) {
      *flags |= kXx;
    } else if (IEq(opt, "GET") && for_set) {
      *flags |= kGet;
    } else if (IEq(opt, "KEEPTTL") && !(*flags & (kPersist | timed)) && for_set) {
      *flags |= kKeepTtl;
    } else if (IEq(opt, "PERSIST") && !for_set && !(*flags & (timed | kKeepTtl))) {
      *flags |= kPersist;
    } else if (IEq(opt, "EX") && !(*flags & (kKeepTtl | kPersist | kExAt | kPx | kPxAt)) &&
               has_next) {
      *flags |= kEx;
      *expire = &c.argv[++j];
    } else if (IEq(opt, "PX") && !(*flags & (kKeepTtl | kPersist | kEx | kExAt | kPxAt)) &&
               has_next) {
      *flags |= kPx;
      *expire = &c.argv[++j];
    } else if (IEq(opt, "EXAT") && !(*flags & (kKeepTtl | kPersist | kEx | kPx | kPxAt)) &&
               has_next) {
      *flags |= kExAt;
      *expire = &c.argv[++j];
    } else if (IEq(opt, "PXAT") && !(*flags & (kKeepTtl | kPersist | kEx | kExAt | kPx)) &&
               has_next) {
      *flags |= kPxAt;
      *expire = &c.argv[++j];
    } else {
      c.w.Error(kSyntaxErr);
      return false;
    }
  }
  return true;
}

// Redis's getExpireMillisecondsOrReply: the absolute expiry in ms.
bool ExpireAbsoluteMs(Ctx& c, const std::string& text, unsigned flags, int64_t* at_ms) {
  int64_t v = 0;
  if (!ParseLL(text, &v)) {
    c.w.Error(kNotInteger);
    return false;
  }
  const bool seconds = flags & (kEx | kExAt);
  if (v <= 0 || (seconds && v > INT64_MAX / 1000)) {
    c.w.Error(ExpireTimeError(c));
    return false;
  }
  if (seconds) v *= 1000;
  if (flags & (kEx | kPx)) {
    if (__builtin_add_overflow(v, c.store->NowMs(), &v)) v = -1;
  }
  if (v <= 0) {
    c.w.Error(ExpireTimeError(c));
    return false;
  }
  *at_ms = v;
  return true;
}

// SET key value [NX|XX] [GET] [EX|PX|EXAT|PXAT|KEEPTTL]; SETEX and PSETEX.
void SetGeneric(Ctx& c, const std::string& key, const std::string& value, unsigned flags,
                const std::string* expire) {
  int64_t at_ms = 0;
  if (expire != nullptr && !ExpireAbsoluteMs(c, *expire, flags, &at_ms)) return;
  // A lock acquisition (NX without GET or KEEPTTL) goes through set_nx, so
  // that in a cluster the key's owner decides it.  An expiry already past
  // (EXAT 1) cannot be put as a TTL: SetWith below stores nothing then, as
  // Redis, which replies OK and deletes the key at once.
  const int64_t now = c.store->NowMs();
  if ((flags & kNx) && !(flags & (kGet | kKeepTtl)) && (expire == nullptr || at_ms > now)) {
    const int64_t ttl_ms = expire == nullptr ? 0 : at_ms - now;
    switch (c.store->SetNx(key, value, ttl_ms)) {
      case SetNxOutcome::kInserted: return Ok(c);
      case SetNxOutcome::kExists: return c.w.NullBulk();
      case SetNxOutcome::kOutOfMemory: return c.w.Error(kOom);
      case SetNxOutcome::kOwnerUnreachable: return c.w.Error(kClusterDown);
      case SetNxOutcome::kInvalidArgument: Failed(c, Status::kInvalidArgument); return;
    }
  }
  SetOptions o;
  o.when = (flags & kNx)   ? SetOptions::When::kIfAbsent
           : (flags & kXx) ? SetOptions::When::kIfPresent
                           : SetOptions::When::kAlways;
  o.expiry = (flags & kKeepTtl)   ? SetOptions::Expiry::kKeep
             : expire != nullptr ? SetOptions::Expiry::kAt
                                 : SetOptions::Expiry::kNone;
  o.expires_at_ms = at_ms;
  o.get_old = flags & kGet;
  SetResult r;
  const Status st = c.store->SetWith(key, value, o, &r);
  if (Failed(c, st)) return;
  if (flags & kGet) {
    if (r.had_old) return c.w.Bulk(r.old);
    return c.w.NullBulk();
  }
  if (!r.written) return c.w.NullBulk();
  Ok(c);
}

void CmdSet(Ctx& c) {
  unsigned flags;
  const std::string* expire;
  if (!ParseSetOptions(c, 3, true, &flags, &expire)) return;
  SetGeneric(c, c.argv[1], c.argv[2], flags, expire);
}

void CmdSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kEx, &c.argv[2]); }
void CmdPSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kPx, &c.argv[2]); }

void CmdSetNx(Ctx& c) {
  switch (c.store->SetNx(c.argv[1], c.argv[2], 0)) {
    case SetNxOutcome::kInserted: return c.w.Integer(1);
    case SetNxOutcome::kExists: return c.w.Integer(0);
    case SetNxOutcome::kOutOfMemory: return c.w.Error(kOom);
    case SetNxOutcome::kOwnerUnreachable: return c.w.Error(kClusterDown);
    case SetNxOutcome::kInvalidArgument: Failed(c, Status::kInvalidArgument); return;
  }
}

void CmdGetSet(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[2], kGet, nullptr); }

void CmdGetDel(Ctx& c) {
  std::string v;
  const Status st = c.store->GetDel(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

void CmdGetEx(Ctx& c) {
  unsigned flags;
  const std::string* expire;
  if (!ParseSetOptions(c, 2, false, &flags, &expire)) return;
  // Redis looks the key up (and checks its type) before it validates the
  // expiry: a missing key answers nil whatever the expiry says.
  std::string v;
  int64_t at_ms = 0;
  if (expire != nullptr) {
    std::string probe;
    const Status st = c.store->GetEx(c.argv[1], SetOptions::Expiry::kKeep, 0, &probe);
    if (st == Status::kNotFound) return c.w.NullBulk();
    if (Failed(c, st)) return;
    if (!ExpireAbsoluteMs(c, *expire, flags, &at_ms)) return;
  }
  const SetOptions::Expiry e = expire != nullptr   ? SetOptions::Expiry::kAt
                               : (flags & kPersist) ? SetOptions::Expiry::kNone
                                                    : SetOptions::Expiry::kKeep;
  const Status st = c.store->GetEx(c.argv[1], e, at_ms, &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

void CmdMGet(Ctx& c) {
  c.w.ArrayHeader(c.argv.size() - 1);
  for (size_t i = 1; i < c.argv.size(); ++i) {
    std::string v;
    if (c.store->Get(c.argv[i], &v) == Status::kOk) {
      c.w.Bulk(v);
    } else {
      c.w.NullBulk();  // missing, expired, or not a string
    }
  }
}

void MSetGeneric(Ctx& c, bool nx) {
  if (c.argv.size() % 2 == 0) return ArityError(c);
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 1; i + 1 < c.argv.size(); i += 2) pairs.emplace_back(c.argv[i], c.argv[i + 1]);
  bool written = false;
  if (Failed(c, c.store->MSet(pairs, nx, &written))) return;
  if (nx) return c.w.Integer(written ? 1 : 0);
  Ok(c);
}

void CmdMSet(Ctx& c) { MSetGeneric(c, false); }
void CmdMSetNx(Ctx& c) { MSetGeneric(c, true); }

void CmdAppend(Ctx& c) {
  int64_t len = 0;
  const Status st = c.store->Append(c.argv[1], c.argv[2], &len);
  if (st == Status::kInvalidArgument) return c.w.Error(kTooBig);
  if (Failed(c, st)) return;
  c.w.Integer(len);
}

void CmdStrLen(Ctx& c) {
  EntryInfo info;
  const Status st = c.store->Inspect(c.argv[1], &info);
  if (st == Status::kNotFound) return c.w.Integer(0);
  if (Failed(c, st)) return;
  if (info.type != ValueType::kString) return c.w.Error(kWrongType);
  c.w.Integer(static_cast<int64_t>(info.value_size));
}

void CmdSetRange(Ctx& c) {
  int64_t offset = 0;
  if (!ParseLL(c.argv[2], &offset)) return c.w.Error(kNotInteger);
  if (offset < 0) return c.w.Error("ERR offset is out of range");
  int64_t len = 0;
  const Status st = c.store->SetRange(c.argv[1], static_cast<uint64_t>(offset), c.argv[3], &len);
  if (st == Status::kInvalidArgument) return c.w.Error(kTooBig);
  if (Failed(c, st)) return;
  c.w.Integer(len);
}

void CmdGetRange(Ctx& c) {
  int64_t start = 0, end = 0;
  if (!ParseLL(c.argv[2], &start) || !ParseLL(c.argv[3], &end)) return c.w.Error(kNotInteger);
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.Bulk("");
  if (Failed(c, st)) return;
  const int64_t n = static_cast<int64_t>(v.size());
  if (start < 0 && end < 0 && start > end) return c.w.Bulk("");
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= n) end = n - 1;
  if (start > end || n == 0) return c.w.Bulk("");
  c.w.Bulk(std::string_view(v).substr(static_cast<size_t>(start),
                                      static_cast<size_t>(end - start + 1)));
}

void IncrGeneric(Ctx& c, int64_t delta) {
  int64_t result = 0;
  if (Failed(c, c.store->IncrBy(c.argv[1], delta, &result))) return;
  c.w.Integer(result);
}

void CmdIncr(Ctx& c) { IncrGeneric(c, 1); }
void CmdDecr(Ctx& c) { IncrGeneric(c, -1); }

void CmdIncrBy(Ctx& c) {
  int64_t delta = 0;
  if (!ParseLL(c.argv[2], &delta)) return c.w.Error(kNotInteger);
  IncrGeneric(c, delta);
}

void CmdDecrBy(Ctx& c) {
  int64_t delta = 0;
  if (!ParseLL(c.argv[2], &delta)) return c.w.Error(kNotInteger);
  if (delta == INT64_MIN) return c.w.Error("ERR decrement would overflow");
  IncrGeneric(c, -delta);
}

// The type of a live key, without reading its value; nullopt when missing.
std::optional<ValueType> TypeOf(Ctx& c, const std::string& key) {
  EntryInfo info;
  if (c.store->Inspect(key, &info) != Status::kOk) return std::nullopt;
  return info.type;
}

void CmdIncrByFloat(Ctx& c) {
  long double delta = 0;
  if (!ParseLongDouble(c.argv[2], &delta)) {
    // Redis checks the key's type first.
    const auto t = TypeOf(c, c.argv[1]);
    if (t && *t != ValueType::kString) return c.w.Error(kWrongType);
    return c.w.Error(kNotFloat);
  }
  std::string result;
  if (Failed(c, c.store->IncrByFloat(c.argv[1], delta, &result))) return;
  c.w.Bulk(result);
}

// ---- keys -------------------------------------------------------------------------

void CmdDel(Ctx& c) {
  int64_t total = 0;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    int64_t n = 0;
    if (Failed(c, c.store->Del(c.argv[i], &n))) return;
    total += n;
  }
  c.w.Integer(total);
}

void CmdExists(Ctx& c) {
  int64_t total = 0;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    bool e = false;
    if (Failed(c, c.store->Exists(c.argv[i], &e))) return;
    total += e ? 1 : 0;
  }
  c.w.Integer(total);
}

const char* TypeName(ValueType t) { return t == ValueType::kHash ? "hash" : "string"; }

void CmdType(Ctx& c) {
  const auto t = TypeOf(c, c.argv[1]);
  c.w.SimpleString(t ? TypeName(*t) : "none");
}

void RenameGeneric(Ctx& c, bool nx) {
  bool renamed = false;
  const Status st = c.store->Rename(c.argv[1], c.argv[2], nx, &renamed);
  if (st == Status::kNotFound) return c.w.Error(kNoKey);
  if (Failed(c, st)) return;
  if (nx) return c.w.Integer(renamed ? 1 : 0);
  Ok(c);
}

void CmdRename(Ctx& c) { RenameGeneric(c, false); }
void CmdRenameNx(Ctx& c) { RenameGeneric(c, true); }

// Redis's matcher never matches an empty text against a non-empty pattern
// (its loop ends before it reads the pattern), though "*" selects every key,
// "" included, by a shortcut that skips matching.  The store's glob matches
// "" with "**" too: drop the empty key where Redis would not return it.
bool RedisMatchesEmptyKey(std::string_view pattern) { return pattern.empty() || pattern == "*"; }

void DropEmptyKeyUnlessMatched(std::string_view pattern, std::vector<std::string>* keys) {
  if (RedisMatchesEmptyKey(pattern)) return;
  keys->erase(std::remove(keys->begin(), keys->end(), std::string()), keys->end());
}

void CmdKeys(Ctx& c) {
  std::vector<std::string> keys;
  if (Failed(c, c.store->Keys(c.argv[1], &keys))) return;
  DropEmptyKeyUnlessMatched(c.argv[1], &keys);
  c.w.ArrayHeader(keys.size());
  for (const auto& k : keys) c.w.Bulk(k);
}

// SCAN/HSCAN options, as Redis 7.0's scanGenericCommand reads them (the last
// MATCH wins; TYPE only for SCAN).  *pattern is unset without MATCH.
// Returns false after replying an error.
bool ParseScanOptions(Ctx& c, size_t start, bool allow_type, std::optional<std::string>* pattern,
                      size_t* count, std::optional<std::string>* type) {
  *count = 10;
  for (size_t i = start; i < c.argv.size();) {
    const size_t left = c.argv.size() - i;
    if (IEq(c.argv[i], "COUNT") && left >= 2) {
      int64_t n = 0;
      if (!ParseLL(c.argv[i + 1], &n)) {
        c.w.Error(kNotInteger);
        return false;
      }
      if (n < 1) {
        c.w.Error(kSyntaxErr);
        return false;
      }
      *count = static_cast<size_t>(n);
      i += 2;
    } else if (IEq(c.argv[i], "MATCH") && left >= 2) {
      *pattern = c.argv[i + 1];
      i += 2;
    } else if (IEq(c.argv[i], "TYPE") && allow_type && left >= 2) {
      *type = c.argv[i + 1];
      i += 2;
    } else {
      c.w.Error(kSyntaxErr);
      return false;
    }
  }
  if (*pattern == "*") pattern->reset();  // Redis: MATCH * is no pattern at all
  return true;
}

void CmdScan(Ctx& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.argv[1], &cursor)) return c.w.Error("ERR invalid cursor");
  std::optional<std::string> pattern;
  size_t count = 10;
  std::optional<std::string> type_name;
  if (!ParseScanOptions(c, 2, true, &pattern, &count, &type_name)) return;
  std::optional<ValueType> type;
  bool none = false;  // Redis 7.0: an unknown type name matches nothing
  if (type_name) {
    if (IEq(*type_name, "string")) {
      type = ValueType::kString;
    } else if (IEq(*type_name, "hash")) {
      type = ValueType::kHash;
    } else {
      none = true;
    }
  }
  std::vector<std::string> keys;
  uint64_t next = 0;
  // The store takes "" for "no pattern"; MATCH "" selects the empty key only.
  const std::string glob = pattern.value_or("");
  if (Failed(c, c.store->Scan(cursor, glob, count, type, &keys, &next))) return;
  if (none) {
    keys.clear();
  } else if (pattern && pattern->empty()) {
    keys.erase(std::remove_if(keys.begin(), keys.end(),
                              [](const std::string& k) { return !k.empty(); }),
               keys.end());
  } else if (pattern) {
    DropEmptyKeyUnlessMatched(*pattern, &keys);
  }
  c.w.ArrayHeader(2);
  c.w.Bulk(std::to_string(next));
  c.w.ArrayHeader(keys.size());
  for (const auto& k : keys) c.w.Bulk(k);
}

void CmdRandomKey(Ctx& c) {
  std::string k;
  const Status st = c.store->RandomKey(&k);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(k);
}

// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (Redis 7.0's expireGenericCommand).
void ExpireGeneric(Ctx& c, bool relative, bool seconds) {
  unsigned conditions = 0;
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t j = 3; j < c.argv.size(); ++j) {
    const std::string& opt = c.argv[j];
    if (IEq(opt, "NX")) {
      nx = true;
      conditions |= kExpireNx;
    } else if (IEq(opt, "XX")) {
      xx = true;
      conditions |= kExpireXx;
    } else if (IEq(opt, "GT")) {
      gt = true;
      conditions |= kExpireGt;
    } else if (IEq(opt, "LT")) {
      lt = true;
      conditions |= kExpireLt;
    } else {
      return c.w.Error("ERR Unsupported option " + std::string(CStr(opt, 1 << 20)));
    }
  }
  if ((nx && xx) || (nx && gt) || (nx && lt)) {
    return c.w.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) return c.w.Error("ERR GT and LT options at the same time are not compatible");
  int64_t when = 0;
  if (!ParseLL(c.argv[2], &when)) return c.w.Error(kNotInteger);
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) return c.w.Error(ExpireTimeError(c));
    when *= 1000;
  }
  const int64_t base = relative ? c.store->NowMs() : 0;
  if (when > INT64_MAX - base) return c.w.Error(ExpireTimeError(c));
  when += base;
  bool applied = false;
  if (Failed(c, c.store->ExpireAtIf(c.argv[1], when, conditions, &applied))) return;
  c.w.Integer(applied ? 1 : 0);
}

void CmdExpire(Ctx& c) { ExpireGeneric(c, true, true); }
void CmdPExpire(Ctx& c) { ExpireGeneric(c, true, false); }
void CmdExpireAt(Ctx& c) { ExpireGeneric(c, false, true); }
void CmdPExpireAt(Ctx& c) { ExpireGeneric(c, false, false); }

// TTL, PTTL, EXPIRETIME, PEXPIRETIME.
void TtlGeneric(Ctx& c, bool ms, bool absolute) {
  EntryInfo info;
  const Status st = c.store->Inspect(c.argv[1], &info);
  if (st == Status::kNotFound) return c.w.Integer(-2);
  if (Failed(c, st)) return;
  if (info.expires_at_ms == 0) return c.w.Integer(-1);
  int64_t v = info.expires_at_ms;
  if (!absolute) {
    v -= c.store->NowMs();
    if (v < 0) v = 0;
  }
  c.w.Integer(ms ? v : (v + 500) / 1000);
}

void CmdTtl(Ctx& c) { TtlGeneric(c, false, false); }
void CmdPTtl(Ctx& c) { TtlGeneric(c, true, false); }
void CmdExpireTime(Ctx& c) { TtlGeneric(c, false, true); }
void CmdPExpireTime(Ctx& c) { TtlGeneric(c, true, true); }

void CmdPersist(Ctx& c) {
  bool applied = false;
  if (Failed(c, c.store->Persist(c.argv[1], &applied))) return;
  c.w.Integer(applied ? 1 : 0);
}

// ---- hashes -----------------------------------------------------------------------

void HSetGeneric(Ctx& c, bool reply_ok) {
  if (c.argv.size() % 2 == 1) return ArityError(c);
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  for (size_t i = 2; i + 1 < c.argv.size(); i += 2) fields.emplace_back(c.argv[i], c.argv[i + 1]);
  int64_t added = 0;
  if (Failed(c, c.store->HSet(c.argv[1], fields, false, &added))) return;
  if (reply_ok) return Ok(c);
  c.w.Integer(added);
}

void CmdHSet(Ctx& c) { HSetGeneric(c, false); }
void CmdHMSet(Ctx& c) { HSetGeneric(c, true); }

void CmdHSetNx(Ctx& c) {
  int64_t added = 0;
  if (Failed(c, c.store->HSet(c.argv[1], {{c.argv[2], c.argv[3]}}, true, &added))) return;
  c.w.Integer(added);
}

void CmdHGet(Ctx& c) {
  std::string v;
  const Status st = c.store->HGet(c.argv[1], c.argv[2], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

void CmdHMGet(Ctx& c) {
  std::vector<std::string_view> fields(c.argv.begin() + 2, c.argv.end());
  std::vector<std::optional<std::string>> values;
  if (Failed(c, c.store->HMGet(c.argv[1], fields, &values))) return;
  c.w.ArrayHeader(values.size());
  for (const auto& v : values) {
    if (v) {
      c.w.Bulk(*v);
    } else {
      c.w.NullBulk();
    }
  }
}

void CmdHDel(Ctx& c) {
  std::vector<std::string_view> fields(c.argv.begin() + 2, c.argv.end());
  int64_t removed = 0;
  if (Failed(c, c.store->HDel(c.argv[1], fields, &removed))) return;
  c.w.Integer(removed);
}

enum class HPart { kAll, kKeys, kValues };

void HGetAllGeneric(Ctx& c, HPart part) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (Failed(c, c.store->HGetAll(c.argv[1], &fields))) return;
  c.w.ArrayHeader(part == HPart::kAll ? fields.size() * 2 : fields.size());
  for (const auto& [f, v] : fields) {
    if (part != HPart::kValues) c.w.Bulk(f);
    if (part != HPart::kKeys) c.w.Bulk(v);
  }
}

void CmdHGetAll(Ctx& c) { HGetAllGeneric(c, HPart::kAll); }
void CmdHKeys(Ctx& c) { HGetAllGeneric(c, HPart::kKeys); }
void CmdHVals(Ctx& c) { HGetAllGeneric(c, HPart::kValues); }

void CmdHLen(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->HLen(c.argv[1], &n))) return;
  c.w.Integer(n);
}

void CmdHExists(Ctx& c) {
  bool e = false;
  if (Failed(c, c.store->HExists(c.argv[1], c.argv[2], &e))) return;
  c.w.Integer(e ? 1 : 0);
}

void CmdHStrLen(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->HStrLen(c.argv[1], c.argv[2], &n))) return;
  c.w.Integer(n);
}

void CmdHIncrBy(Ctx& c) {
  int64_t delta = 0;
  if (!ParseLL(c.argv[3], &delta)) return c.w.Error(kNotInteger);
  int64_t result = 0;
  const Status st = c.store->HIncrBy(c.argv[1], c.argv[2], delta, &result);
  if (st == Status::kNotInteger) return c.w.Error("ERR hash value is not an integer");
  if (Failed(c, st)) return;
  c.w.Integer(result);
}

void CmdHIncrByFloat(Ctx& c) {
  long double delta = 0;
  if (!ParseLongDouble(c.argv[3], &delta)) return c.w.Error(kNotFloat);
  if (std::isnan(delta) || std::isinf(delta)) return c.w.Error("ERR value is NaN or Infinity");
  std::string result;
  const Status st = c.store->HIncrByFloat(c.argv[1], c.argv[2], delta, &result);
  if (st == Status::kNotFloat) return c.w.Error("ERR hash value is not a float");
  if (Failed(c, st)) return;
  c.w.Bulk(result);
}

void CmdHScan(Ctx& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.argv[2], &cursor)) return c.w.Error("ERR invalid cursor");
  // Redis looks the key up before it reads the options: a missing key is an
  // empty scan, and a string a WRONGTYPE, whatever the options say.
  // (A hash is never empty: no fields means no key.)
  std::vector<std::pair<std::string, std::string>> fields;
  if (Failed(c, c.store->HGetAll(c.argv[1], &fields))) return;
  std::optional<std::string> pattern;
  size_t count = 10;
  std::optional<std::string> type;
  if (!fields.empty() && !ParseScanOptions(c, 3, false, &pattern, &count, &type)) return;
  auto selected = [&](const std::string& field) {
    if (!pattern) return true;
    if (field.empty()) return pattern->empty();
    return GlobMatch(*pattern, field);
  };
  // Hashes are returned whole in one step, as Redis does for small ones.
  c.w.ArrayHeader(2);
  c.w.Bulk("0");
  size_t n = 0;
  for (const auto& fv : fields) n += selected(fv.first) ? 1 : 0;
  c.w.ArrayHeader(n * 2);
  for (const auto& [f, v] : fields) {
    if (selected(f)) {
      c.w.Bulk(f);
      c.w.Bulk(v);
    }
  }
}

// ---- locks ------------------------------------------------------------------------

void CmdDelIfEq(Ctx& c) {
  switch (c.store->DelIfEq(c.argv[1], c.argv[2])) {
    case DelIfEqOutcome::kDeleted: return c.w.Integer(1);
    case DelIfEqOutcome::kNotMatched: return c.w.Integer(0);
    case DelIfEqOutcome::kWrongType: return c.w.Error(kWrongType);
    case DelIfEqOutcome::kOwnerUnreachable: return c.w.Error(kClusterDown);
    case DelIfEqOutcome::kOutOfMemory: return c.w.Error(kOom);
    case DelIfEqOutcome::kInvalidArgument: Failed(c, Status::kInvalidArgument); return;
  }
}

// ---- COMMAND ------------------------------------------------------------------------

void CommandInfo(Ctx& c, const Command& cmd);
void CmdCommand(Ctx& c);
void CmdCommandCount(Ctx& c);
void CmdCommandInfo(Ctx& c);
void CmdCommandDocs(Ctx& c);
void CmdCommandList(Ctx& c);
void CmdCommandHelp(Ctx& c);

// The command table.  Flags and key positions follow Redis 7.0's.
const Command kCommands[] = {
    // connection and server
    {"ping", -1, kFast, 0, 0, 0, "@fast @connection", CmdPing},
    {"echo", 2, kFast, 0, 0, 0, "@fast @connection", CmdEcho},
    {"quit", -1, kNoAuthNeeded | kFast, 0, 0, 0, "@fast @connection", CmdQuit},
    {"select", 2, kFast, 0, 0, 0, "@keyspace @fast", CmdSelect},
    {"auth", -2, kNoAuthNeeded | kFast, 0, 0, 0, "@fast @connection", CmdAuth},
    {"hello", -1, kNoAuthNeeded | kFast, 0, 0, 0, "@fast @connection", CmdHello},
    {"command", -1, 0, 0, 0, 0, "@slow @connection", CmdCommand},
    {"command|count", 2, 0, 0, 0, 0, "@slow @connection", CmdCommandCount},
    {"command|info", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandInfo},
    {"command|docs", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandDocs},
    {"command|list", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandList},
    {"command|help", 2, 0, 0, 0, 0, "@slow @connection", CmdCommandHelp},
    {"client", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"client|id", 2, 0, 0, 0, 0, "@slow @connection", CmdClientId},
    {"client|getname", 2, 0, 0, 0, 0, "@slow @connection", CmdClientGetName},
    {"client|setname", 3, 0, 0, 0, 0, "@slow @connection", CmdClientSetName},
    {"client|info", 2, 0, 0, 0, 0, "@slow @connection", CmdClientInfo},
    {"client|list", -2, kAdmin, 0, 0, 0, "@admin @slow @dangerous @connection", CmdClientList},
    {"client|help", 2, 0, 0, 0, 0, "@slow @connection", CmdClientHelp},
    {"info", -1, 0, 0, 0, 0, "@slow @dangerous", CmdInfo},
    {"dbsize", 1, kReadOnly | kFast, 0, 0, 0, "@keyspace @read @fast", CmdDbSize},
    {"flushdb", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", CmdFlush},
    {"flushall", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", CmdFlush},
    {"time", 1, kFast, 0, 0, 0, "@fast", CmdTime},
    // strings
    {"get", 2, kReadOnly | kFast, 1, 1, 1, "@read @string @fast", CmdGet},
    {"set", -3, kWrite | kDenyOom, 1, 1, 1, "@write @string @slow", CmdSet},
    {"setnx", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdSetNx},
    {"setex", 4, kWrite | kDenyOom, 1, 1, 1, "@write @string @slow", CmdSetEx},
    {"psetex", 4, kWrite | kDenyOom, 1, 1, 1, "@write @string @slow", CmdPSetEx},
    {"getset", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdGetSet},
    {"getdel", 2, kWrite | kFast, 1, 1, 1, "@write @string @fast", CmdGetDel},
    {"getex", -2, kWrite | kFast, 1, 1, 1, "@write @string @fast", CmdGetEx},
    {"mget", -2, kReadOnly | kFast, 1, -1, 1, "@read @string @fast", CmdMGet},
    {"mset", -3, kWrite | kDenyOom, 1, -1, 2, "@write @string @slow", CmdMSet},
    {"msetnx", -3, kWrite | kDenyOom, 1, -1, 2, "@write @string @slow", CmdMSetNx},
    {"append", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdAppend},
    {"strlen", 2, kReadOnly | kFast, 1, 1, 1, "@read @string @fast", CmdStrLen},
    {"setrange", 4, kWrite | kDenyOom, 1, 1, 1, "@write @string @slow", CmdSetRange},
    {"getrange", 4, kReadOnly, 1, 1, 1, "@read @string @slow", CmdGetRange},
    {"incr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdIncr},
    {"decr", 2, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdDecr},
    {"incrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdIncrBy},
    {"decrby", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdDecrBy},
    {"incrbyfloat", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdIncrByFloat},
    // keys
    {"del", -2, kWrite, 1, -1, 1, "@keyspace @write @slow", CmdDel},
    {"unlink", -2, kWrite | kFast, 1, -1, 1, "@keyspace @write @fast", CmdDel},
    {"exists", -2, kReadOnly | kFast, 1, -1, 1, "@keyspace @read @fast", CmdExists},
    {"type", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdType},
    {"rename", 3, kWrite, 1, 2, 1, "@keyspace @write @slow", CmdRename},
    {"renamenx", 3, kWrite | kFast, 1, 2, 1, "@keyspace @write @fast", CmdRenameNx},
    {"keys", 2, kReadOnly, 0, 0, 0, "@keyspace @read @slow @dangerous", CmdKeys},
    {"scan", -2, kReadOnly, 0, 0, 0, "@keyspace @read @slow", CmdScan},
    {"randomkey", 1, kReadOnly, 0, 0, 0, "@keyspace @read @slow", CmdRandomKey},
    {"expire", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdExpire},
    {"pexpire", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdPExpire},
    {"expireat", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdExpireAt},
    {"pexpireat", -3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdPExpireAt},
    {"expiretime", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdExpireTime},
    {"pexpiretime", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdPExpireTime},
    {"ttl", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdTtl},
    {"pttl", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdPTtl},
    {"persist", 2, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdPersist},
    // hashes
    {"hset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hash @fast", CmdHSet},
    {"hmset", -4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hash @fast", CmdHMSet},
    {"hsetnx", 4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hash @fast", CmdHSetNx},
    {"hget", 3, kReadOnly | kFast, 1, 1, 1, "@read @hash @fast", CmdHGet},
    {"hmget", -3, kReadOnly | kFast, 1, 1, 1, "@read @hash @fast", CmdHMGet},
    {"hdel", -3, kWrite | kFast, 1, 1, 1, "@write @hash @fast", CmdHDel},
    {"hgetall", 2, kReadOnly, 1, 1, 1, "@read @hash @slow", CmdHGetAll},
    {"hkeys", 2, kReadOnly, 1, 1, 1, "@read @hash @slow", CmdHKeys},
    {"hvals", 2, kReadOnly, 1, 1, 1, "@read @hash @slow", CmdHVals},
    {"hlen", 2, kReadOnly | kFast, 1, 1, 1, "@read @hash @fast", CmdHLen},
    {"hexists", 3, kReadOnly | kFast, 1, 1, 1, "@read @hash @fast", CmdHExists},
    {"hstrlen", 3, kReadOnly | kFast, 1, 1, 1, "@read @hash @fast", CmdHStrLen},
    {"hincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hash @fast", CmdHIncrBy},
    {"hincrbyfloat", 4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @hash @fast",
     CmdHIncrByFloat},
    {"hscan", -3, kReadOnly, 1, 1, 1, "@read @hash @slow", CmdHScan},
    // locks (Valkey 9's DELIFEQ)
    {"delifeq", 3, kWrite | kFast, 1, 1, 1, "@write @string @fast", CmdDelIfEq},
};

const absl::flat_hash_map<std::string, const Command*>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, const Command*>();
    for (const Command& c : kCommands) (*t)[c.name] = &c;
    return t;
  }();
  return *table;
}

bool IsContainer(std::string_view lower_name) {
  return lower_name == "client" || lower_name == "command";
}

void FlagList(ReplyWriter& w, const Command& cmd) {
  std::vector<const char*> flags;
  if (cmd.flags & kWrite) flags.push_back("write");
  if (cmd.flags & kReadOnly) flags.push_back("readonly");
  if (cmd.flags & kDenyOom) flags.push_back("denyoom");
  if (cmd.flags & kAdmin) flags.push_back("admin");
  if (cmd.flags & kNoAuthNeeded) flags.push_back("no_auth");
  if (cmd.flags & kFast) flags.push_back("fast");
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
  for (const Command& s : kCommands) {
    const std::string_view sn = s.name;
    if (sn.size() > name.size() && sn.substr(0, name.size()) == name && sn[name.size()] == '|') {
      subs.push_back(&s);
    }
  }
  c.w.ArrayHeader(subs.size());
  for (const Command* s : subs) CommandInfo(c, *s);
}

std::vector<const Command*> TopLevel() {
  std::vector<const Command*> out;
  for (const Command& cmd : kCommands) {
    if (std::strchr(cmd.name, '|') == nullptr) out.push_back(&cmd);
  }
  return out;
}

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

void CmdCommandList(Ctx& c) {
  const auto top = TopLevel();
  c.w.ArrayHeader(top.size());
  for (const Command* cmd : top) c.w.Bulk(cmd->name);
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
      "HELP",
      "    Prints this help.",
  };
  c.w.ArrayHeader(std::size(lines));
  for (const char* l : lines) c.w.SimpleString(l);
}

}  // namespace

// "id=1 addr=127.0.0.1:5000 laddr=... name=x age=3 ... cmd=get", the fields
// clients and monitoring read most.
std::string ClientListLine(const ClientState& c) {
  const int64_t age =
      (std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
           .count() -
       c.connected_at_ms) /
      1000;
  return "id=" + std::to_string(c.id) + " addr=" + c.addr + " laddr=" + c.laddr +
         " fd=-1 name=" + c.name + " age=" + std::to_string(age) +
         " idle=0 flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 resp=2 cmd=" +
         (c.last_command == nullptr ? "NULL" : c.last_command) + " user=default";
}

Dispatcher::Dispatcher(Store* store, ServerContext* server) : store_(store), server_(server) {}

// In a cluster, a command's keys must have one owner (Redis Cluster's rule
// for slots): what the command decides is then decided in one place.
bool KeysShareOwner(const Ctx& c) {
  Replicator* r = c.store->options().replicator;
  if (r == nullptr) return true;
  const int argc = static_cast<int>(c.argv.size());
  const int last = c.cmd->last_key < 0 ? argc + c.cmd->last_key : c.cmd->last_key;
  if (last <= c.cmd->first_key) return true;  // one key
  std::vector<std::string_view> keys;
  for (int i = c.cmd->first_key; i <= last && i < argc; i += std::max(1, c.cmd->step)) {
    keys.push_back(c.argv[static_cast<size_t>(i)]);
  }
  return r->SameOwner(keys);
}

void Dispatcher::Execute(ClientState* client, std::vector<std::string>& argv, std::string* out) {
  ReplyWriter w(out);
  total_commands_.fetch_add(1, std::memory_order_relaxed);
  const std::string name = Lower(argv[0]);
  const auto& table = Table();
  auto it = table.find(name);
  const Command* cmd = it == table.end() ? nullptr : it->second;
  if (cmd != nullptr && IsContainer(name) && argv.size() >= 2) {
    auto sub = table.find(name + "|" + Lower(argv[1]));
    if (sub == table.end()) {
      std::string upper(name);
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      w.Error("ERR unknown subcommand '" + std::string(CStr(argv[1], 128)) + "'. Try " + upper +
              " HELP.");
      return;
    }
    cmd = sub->second;
  }
  if (cmd == nullptr) {
    if (const ExtraCommand* extra = server_->FindExtraCommand(name)) {
      if (!client->authenticated) return w.Error(kNoAuth);
      const std::string error = (*extra)(argv);
      if (error.empty()) return w.SimpleString("OK");
      return w.Error(error);
    }
    // Redis quotes the first arguments, up to about 128 bytes of them.
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + std::string(CStr(argv[i], 128 - args.size())) + "' ";
    }
    w.Error("ERR unknown command '" + std::string(CStr(argv[0], 128)) +
            "', with args beginning with: " + args);
    return;
  }
  Ctx c{store_, server_, client, this, w, argv, cmd};
  const int n = static_cast<int>(argv.size());
  if ((cmd->arity > 0 && n != cmd->arity) || n < -cmd->arity) return ArityError(c);
  if (!client->authenticated && !(cmd->flags & kNoAuthNeeded)) return w.Error(kNoAuth);
  client->last_command = cmd->name;
  if (cmd->first_key > 0 && !KeysShareOwner(c)) return w.Error(kCrossSlot);
  cmd->fn(c);
}

}  // namespace resp
}  // namespace ephpm
