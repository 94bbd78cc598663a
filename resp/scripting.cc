// Redis scripting on Lua 5.1: see scripting.h for what differs from Redis.
//
// Lua reports errors with longjmp, which skips C++ destructors: the C
// functions that Lua calls (redis.call, ...) keep their C++ objects in the
// Run (which lives in a frame above lua_pcall) or destroy them before any
// Lua call that can raise.

#include "scripting.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
// The two libraries Redis embeds that scripts in the wild use, as Debian
// packages them: lua-cjson 2.1.0 (Laravel's queue decodes and re-encodes its
// jobs with it) and LuaBitOp 1.0.2.
#include <lua-bitop.h>
#include <lua-cjson.h>
}

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "hit_counters.h"

namespace ephpm {
namespace resp {
namespace script {

// ---- SHA1 (FIPS 180-1) -----------------------------------------------------

namespace {

inline uint32_t Rol(uint32_t v, int n) { return (v << n) | (v >> (32 - n)); }

void Sha1Block(uint32_t h[5], const unsigned char* p) {
  uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) |
           (uint32_t{p[4 * i + 2]} << 8) | uint32_t{p[4 * i + 3]};
  }
  for (int i = 16; i < 80; ++i) w[i] = Rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const uint32_t t = Rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = Rol(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string Sha1Hex(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  const uint64_t bits = static_cast<uint64_t>(n) * 8;
  while (n >= 64) {
    Sha1Block(h, p);
    p += 64;
    n -= 64;
  }
  unsigned char tail[128] = {};
  if (n > 0) std::memcpy(tail, p, n);  // p is null for an empty view
  tail[n] = 0x80;
  const size_t len = n + 1 + 8 <= 64 ? 64 : 128;
  for (int i = 0; i < 8; ++i) tail[len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  Sha1Block(h, tail);
  if (len == 128) Sha1Block(h, tail + 64);
  static const char kHex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (int i = 0; i < 20; ++i) {
    const auto byte = static_cast<unsigned char>(h[i / 4] >> (24 - 8 * (i % 4)));
    out[2 * i] = kHex[byte >> 4];
    out[2 * i + 1] = kHex[byte & 15];
  }
  return out;
}

// ---- the cache and a run -------------------------------------------------------

struct Scripting::Entry {
  std::string sha;
  std::string body;
  bool all_shards = false;  // names a keyspace-wide command
  bool all_databases = false;  // names SELECT, MOVE or FLUSHALL
  bool no_writes = false;   // "#!lua flags=no-writes"
  bool shebang = false;     // declares its flags ("#!lua ...")
  bool allow_oom = false;   // "#!lua flags=allow-oom"
};

struct Scripting::Run {
  Scripting* scripting = nullptr;
  cmd::Ctx* ctx = nullptr;
  const Entry* entry = nullptr;
  ClientState client;
  absl::flat_hash_set<std::string_view> keys;
  uint32_t db = 0;  // the caller's database, the one locked
  // What the run's section locks, for BusyFor: the shards of its keys
  // (Store::ShardIndex) and whole databases.
  std::vector<size_t> shards;
  std::vector<uint32_t> whole_databases;
  bool read_only = false;
  std::chrono::steady_clock::time_point start;
  std::atomic<bool> wrote{false};
  std::atomic<bool> kill{false};
  // Set once the run passed the busy threshold and told the server
  // (Scripting::set_on_busy); `ended` then turns true when it ends.
  bool reported_busy = false;
  std::shared_ptr<std::atomic<bool>> ended;
  // Scratch for redis.call, kept here so that a Lua error skips no C++
  // destructor.
  std::vector<std::string> call_argv;
  std::string call_reply;
  std::vector<std::pair<int, std::string>> log;  // written after the locks are released
};

namespace {

using Clock = std::chrono::steady_clock;

// Bumped by every SCRIPT FLUSH: each thread's Lua state drops its compiled
// functions when it sees a new value.
std::atomic<uint64_t> g_flush_generation{0};
// The run on this thread (a script cannot start another).
thread_local Scripting::Run* t_run = nullptr;

// Registry keys.
const char kFunctions[] = "ephpm.functions";  // sha -> compiled function
const char kGlobals[] = "ephpm.globals";      // the real globals behind _G

// The error table Redis's luaPushErrorBuff builds from a reply's error line
// (without the '-'): "CODE message", or "ERR line" when there is no space.
void PushErrorTable(lua_State* L, std::string_view line) {
  lua_newtable(L);
  lua_pushstring(L, "err");
  if (line.find(' ') == std::string_view::npos) {
    lua_pushstring(L, "ERR ");
    lua_pushlstring(L, line.data(), line.size());
    lua_concat(L, 2);
  } else {
    lua_pushlstring(L, line.data(), line.size());
  }
  lua_rawset(L, -3);
}

[[noreturn]] void RaiseError(lua_State* L, std::string_view line) {
  PushErrorTable(L, line);
  lua_error(L);
  std::abort();  // lua_error does not return
}

// ---- the sandbox ----------------------------------------------------------------

int ReadonlyError(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

int MissingGlobal(lua_State* L) {
  if (!lua_isstring(L, 2)) return luaL_error(L, "Script attempted to access nonexistent global variable");
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(L, 2));
}

// Pushes what getmetatable shows of a protected table: an empty table that
// refuses writes (Redis's read-only metatables), itself without a visible
// metatable.
void PushMetatableView(lua_State* L) {
  lua_newtable(L);
  lua_newtable(L);
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
}

// Replaces the table at the top with an empty proxy whose reads go to it and
// whose writes raise.
void MakeReadonly(lua_State* L) {
  lua_newtable(L);                       // real proxy
  lua_newtable(L);                       // real proxy mt
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  PushMetatableView(L);  // what getmetatable shows: a read-only table, as Redis's
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);               // real proxy
  lua_remove(L, -2);                     // proxy
}

bool IsProxy(lua_State* L, int idx) {
  if (!lua_getmetatable(L, idx)) return false;
  lua_getfield(L, -1, "__newindex");
  const bool proxy = lua_tocfunction(L, -1) == ReadonlyError;
  lua_pop(L, 2);
  return proxy;
}

// rawset refuses the read-only tables, as Redis's does (without a position).
int SafeRawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsProxy(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

// setmetatable as Lua 5.1's, except that a read-only table raises Redis's
// error (without a position, as Redis's; Lua's would say "cannot change a
// protected metatable").
int SafeSetmetatable(lua_State* L) {
  const int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (IsProxy(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  if (luaL_getmetafield(L, 1, "__metatable")) luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// Redis 7.0's pcall: an error table caught becomes its "err" string, so
// that scripts see the message as Lua's own errors are seen.
int SafePcall(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    // pcall() with nothing to call: Redis 7.0 answers false and this
    // message (its replacement pcall calls a boolean); scripting.resp
    // compares it with redis-server.
    lua_pushboolean(L, 0);
    lua_pushstring(L, "attempt to call a boolean value");
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// luaL_loadbuffer with no garbage collection while the chunk is compiled:
// Debian's Lua 5.1 does not anchor the chunk's name during parsing, so a
// collection then could free it (CVE-2025-49844, fixed in Redis's own copy
// of Lua by anchoring it; a stopped collector has the same effect).
int LoadBuffer(lua_State* L, const char* s, size_t len, const char* name) {
  lua_gc(L, LUA_GCSTOP, 0);
  const int rc = luaL_loadbuffer(L, s, len, name);
  lua_gc(L, LUA_GCRESTART, 0);
  return rc;
}

// unpack as Redis's patched Lua has it (CVE-2025-46817): Debian's overflows
// on ranges such as (-2, 2^31-1) and crashes the process.
int SafeUnpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const int i = luaL_optint(L, 2, 1);
  const int e = luaL_opt(L, luaL_checkint, 3, luaL_getn(L, 1));
  if (i > e) return 0;  // an empty range
  unsigned int n = static_cast<unsigned int>(e) - static_cast<unsigned int>(i);
  if (n >= static_cast<unsigned int>(INT_MAX) || !lua_checkstack(L, static_cast<int>(++n))) {
    return luaL_error(L, "too many results to unpack");
  }
  // i..e inclusive, never incrementing past e (e may be INT_MAX, where
  // Redis's "while (i++ < e)" overflows; UBSan stops on that).
  for (int k = i;; ++k) {
    lua_rawgeti(L, 1, k);
    if (k == e) break;
  }
  return static_cast<int>(n);
}

// LuaBitOp's argument conversion: a number to its low 32 bits, by the
// 2^52 + 2^51 addition LuaBitOp uses (so results agree with the library's).
uint32_t BitArg(lua_State* L, int idx) {
  const double d = luaL_checknumber(L, idx) + 6755399441055744.0;
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  return static_cast<uint32_t>(bits);
}

// bit.tohex as Redis's patched LuaBitOp has it: Debian's writes past its
// buffer for n = -2^31 (CVE-2024-31449).  Negative n is upper case; at most
// 8 digits.
int SafeBitToHex(lua_State* L) {
  uint32_t b = BitArg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(BitArg(L, 2));
  if (n == INT32_MIN) n = INT32_MIN + 1;
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n; --i >= 0;) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

// loadstring and load compile source text only: a precompiled chunk could
// break the VM.
int LoadText(lua_State* L, const char* s, size_t len, const char* name) {
  if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(L);
    lua_pushstring(L, "precompiled chunks are not allowed");
    return 2;
  }
  if (LoadBuffer(L, s, len, name) != 0) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return 1;
}

int SafeLoadString(lua_State* L) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  return LoadText(L, s, len, name);
}

int SafeLoad(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const char* name = luaL_optstring(L, 2, "=(load)");
  luaL_Buffer b;
  lua_settop(L, 2);
  luaL_buffinit(L, &b);
  for (;;) {
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
    if (lua_objlen(L, -1) == 0) {
      lua_pop(L, 1);
      break;
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  return LoadText(L, s, len, name);
}

// ---- RESP -> Lua ---------------------------------------------------------------

// Parses the reply at r[*pos] and pushes its Lua value: integer -> number,
// bulk -> string, null bulk/array -> false, array -> table, status ->
// {ok=...}, error -> {err=...}.  False (nothing pushed) on malformed input.
bool PushReply(lua_State* L, const std::string& r, size_t* pos) {
  if (*pos >= r.size()) return false;
  const size_t eol = r.find("\r\n", *pos);
  if (eol == std::string::npos) return false;
  const char type = r[*pos];
  const std::string_view line(r.data() + *pos + 1, eol - *pos - 1);
  *pos = eol + 2;
  switch (type) {
    case '+':
      lua_newtable(L);
      lua_pushstring(L, "ok");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      return true;
    case '-':
      PushErrorTable(L, line);
      return true;
    case ':': {
      int64_t v = 0;
      if (!cmd::ParseLL(line, &v)) return false;
      lua_pushnumber(L, static_cast<lua_Number>(v));
      return true;
    }
    case '$': {
      int64_t n = 0;
      if (!cmd::ParseLL(line, &n)) return false;
      if (n < 0) {
        lua_pushboolean(L, 0);
        return true;
      }
      if (*pos + static_cast<size_t>(n) + 2 > r.size()) return false;
      lua_pushlstring(L, r.data() + *pos, static_cast<size_t>(n));
      *pos += static_cast<size_t>(n) + 2;
      return true;
    }
    case '*': {
      int64_t n = 0;
      if (!cmd::ParseLL(line, &n)) return false;
      if (n < 0) {
        lua_pushboolean(L, 0);
        return true;
      }
      if (!lua_checkstack(L, 4)) return false;
      lua_createtable(L, static_cast<int>(std::min<int64_t>(n, 1 << 20)), 0);
      for (int64_t i = 1; i <= n; ++i) {
        if (!PushReply(L, r, pos)) {
          lua_pop(L, 1);
          return false;
        }
        lua_rawseti(L, -2, static_cast<int>(i));
      }
      return true;
    }
    default:
      return false;
  }
}

// ---- Lua -> RESP ---------------------------------------------------------------

// Lua numbers become integer replies truncated toward zero; what does not
// fit (and NaN) becomes INT64_MIN, as Redis's cast does on x86-64.
int64_t NumberToInteger(lua_Number n) {
  if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(n);
}

// The error line for an error table at idx (its "err" field, Redis's
// luaExtractErrorInformation), plus " script: <sha>, on <source>:<line>."
// when the error handler recorded where it was raised.
std::string ErrorLine(lua_State* L, int idx, const std::string& sha, bool with_place) {
  std::string msg;
  lua_getfield(L, idx, "err");
  if (lua_isstring(L, -1)) {
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    msg.assign(s, len);
  }
  lua_pop(L, 1);
  if (with_place) {
    lua_getfield(L, idx, "source");
    lua_getfield(L, idx, "line");
    if (lua_isstring(L, -2) && lua_isstring(L, -1)) {
      msg += " script: " + sha + ", on " + lua_tostring(L, -2) + ":" + lua_tostring(L, -1) + ".";
    }
    lua_pop(L, 2);
  }
  // Redis formats "-%s": a '-' the message starts with stays, doubled.
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
  return msg;
}

void WriteValue(lua_State* L, ReplyWriter& w, const std::string& sha) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      w.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, -1)) {
        w.Integer(1);
      } else {
        w.NullBulk();
      }
      break;
    case LUA_TNUMBER:
      w.Integer(NumberToInteger(lua_tonumber(L, -1)));
      break;
    case LUA_TTABLE: {
      if (!lua_checkstack(L, 4)) {
        w.Error("ERR reached lua stack limit");
        break;
      }
      lua_pushstring(L, "err");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        lua_pop(L, 1);
        w.Error(ErrorLine(L, lua_gettop(L), sha, false));
        break;
      }
      lua_pop(L, 1);
      lua_pushstring(L, "ok");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        w.SimpleString(std::string_view(s, len));
        lua_pop(L, 1);
        break;
      }
      lua_pop(L, 1);
      // An array, up to the first nil.
      size_t n = 0;
      for (;; ++n) {
        lua_rawgeti(L, -1, static_cast<int>(n + 1));
        const bool end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end) break;
      }
      w.ArrayHeader(n);
      for (size_t j = 1; j <= n; ++j) {
        lua_rawgeti(L, -1, static_cast<int>(j));
        WriteValue(L, w, sha);
        lua_pop(L, 1);
      }
      break;
    }
    default:  // nil, functions, userdata, threads
      w.NullBulk();
  }
}

// ---- the redis table -----------------------------------------------------------

// Where a script error comes from: Redis's __redis__err__handler.  Turns the
// error into a table {err=..., source=..., line=...}.
int ErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
  if (have && std::strcmp(ar.what, "C") == 0) {
    have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
  }
  if (!lua_istable(L, 1)) {
    lua_getglobal(L, "tostring");  // through the proxy: tostring is always there
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushstring(L, "ERR ");
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  lua_settop(L, 1);
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

const char kKilled[] = "ERR Script killed by user with SCRIPT KILL...";

bool DeniedInScripts(std::string_view name) {
  static const auto* denied = new absl::flat_hash_set<std::string_view>{
      "auth", "hello", "client", "quit", "save", "bgsave", "bgrewriteaof", "eval", "evalsha",
      "eval_ro", "evalsha_ro", "script", "multi", "exec", "discard", "watch", "unwatch",
      "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
      "blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop",
      "monitor", "sync", "psync", "replconf", "replicaof", "slaveof", "shutdown", "wait",
      "config", "acl", "debug", "function", "fcall", "fcall_ro", "module", "cluster",
      "latency", "reset", "failover", "role"};
  // blmpop and bzmpop are allowed by Redis (they do not block in scripts);
  // here a blocking command would wait with the script's shards locked.
  return denied->contains(name);
}

// Whether a command without key positions reaches into the keyspace (KEYS,
// SCAN, FLUSHDB, ...): then it needs every shard locked.
// INFO counts the keys of every shard.
bool KeyspaceWide(const cmd::Command& c) {
  if (c.first_key != 0 || std::strcmp(c.name, "select") == 0) return false;
  if (std::strcmp(c.name, "info") == 0) return true;
  static const char* const kCategories[] = {"@keyspace", "@string", "@hash", "@list",
                                            "@set", "@sortedset", "@bitmap", "@hyperloglog",
                                            "@geo", "@stream"};
  for (const char* cat : kCategories) {
    if (std::strstr(c.acl, cat) != nullptr) return true;
  }
  return false;
}

// Commands that leave the caller's database: the script needs every
// database locked for them.
bool DatabaseWide(std::string_view name) {
  return name == "select" || name == "move" || name == "flushall" || name == "swapdb";
}

// A key the script may touch: one it declared, or one in a shard its
// section holds (a key built from a declared one with a hash tag, as Redis
// Cluster clients do, such as "{id}id").
bool Reachable(const Scripting::Run& run, const std::string& key) {
  return run.keys.contains(key) || run.ctx->store->HeldBySection(key);
}

// redis.call's checks before the command runs, in Redis 7.0's order; "" to
// run it, else the error line.
std::string_view CheckCall(Scripting::Run& run) {
  const auto& argv = run.call_argv;
  const std::string name = cmd::Lower(argv[0]);
  bool unknown_sub = false;
  const cmd::Command* c = cmd::FindCommand(name, argv, &unknown_sub);
  if (c == nullptr) return "ERR Unknown Redis command called from script";
  const int n = static_cast<int>(argv.size());
  if ((c->arity > 0 && n != c->arity) || n < -c->arity) {
    return "ERR Wrong number of args calling Redis command from script";
  }
  if (DeniedInScripts(name)) return "ERR This Redis command is not allowed from script";
  if ((c->flags & cmd::kWrite) && run.read_only) {
    return "ERR Write commands are not allowed from read-only scripts.";
  }
  // Redis's scriptVerifyOOM, before the keys are checked: past maxmemory
  // (noeviction) a command that may grow the data is refused, unless the
  // script has written already (it is not left half done) or its shebang
  // allows it (allow-oom).
  if ((c->flags & cmd::kDenyOom) && !run.wrote.load() && !run.entry->allow_oom &&
      run.ctx->store->OverMemoryLimit()) {
    return cmd::kOom;
  }
  if (DatabaseWide(c->name) && !run.entry->all_databases) return kNeedsAllShards;
  if (run.client.db != run.db && !run.entry->all_databases) return kNeedsAllShards;
  if (c->first_key <= 0 && KeyspaceWide(*c) && !run.entry->all_shards) return kNeedsAllShards;
  // The keys it names (none for a bad numkeys: that is the command's own
  // error, before it touches the store).
  std::vector<size_t> positions;
  cmd::KeyPositions(*c, argv, &positions);
  for (size_t i : positions) {
    if (!Reachable(run, argv[i])) return kUndeclaredKey;
  }
  // SORT's BY and GET may name any key: every shard, which a script that
  // names "sort" holds.
  if (const std::string_view sn = c->name; (sn == "sort" || sn == "sort_ro") &&
                                           cmd::SortNamesKeyspace(argv, sn == "sort_ro") &&
                                           !run.entry->all_shards) {
    return kNeedsAllShards;
  }
  return "";
}

// Runs run.call_argv; false with the error line in run.call_reply when it
// could not be run at all.
bool DispatchCall(Scripting::Run& run) {
  run.call_reply.clear();
  try {
    const std::string_view refused = CheckCall(run);
    if (!refused.empty()) {
      run.call_reply.assign(refused);
      return false;
    }
    if (run.ctx->dispatcher->Execute(&run.client, run.call_argv, &run.call_reply)) {
      run.wrote.store(true);
    }
  } catch (const std::exception& e) {
    run.call_reply = std::string("ERR ") + e.what();
    return false;
  }
  return true;
}

int CallGeneric(lua_State* L, bool raise) {
  Scripting::Run& run = *t_run;
  if (run.kill.load()) RaiseError(L, kKilled);
  const int argc = lua_gettop(L);
  if (argc == 0) {
    PushErrorTable(L, "ERR Please specify at least one argument for this redis lib call");
    return raise ? lua_error(L) : 1;
  }
  run.call_argv.resize(static_cast<size_t>(argc));
  for (int i = 1; i <= argc; ++i) {
    std::string& arg = run.call_argv[static_cast<size_t>(i - 1)];
    const int t = lua_type(L, i);
    if (t == LUA_TNUMBER) {
      char buf[64];
      const int len = std::snprintf(buf, sizeof buf, "%.17g", lua_tonumber(L, i));
      arg.assign(buf, static_cast<size_t>(len));
    } else if (t == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      arg.assign(s, len);
    } else {
      PushErrorTable(L, "ERR Lua redis lib command arguments must be strings or integers");
      return raise ? lua_error(L) : 1;
    }
  }
  if (!DispatchCall(run)) {
    PushErrorTable(L, run.call_reply);
    return raise ? lua_error(L) : 1;
  }
  size_t pos = 0;
  if (!PushReply(L, run.call_reply, &pos)) {
    RaiseError(L, "ERR ephpm: unreadable reply from a command called from script");
  }
  if (raise && run.call_reply[0] == '-') return lua_error(L);
  return 1;
}

int RedisCall(lua_State* L) { return CallGeneric(L, true); }
int RedisPCall(lua_State* L) { return CallGeneric(L, false); }

// redis.error_reply / redis.status_reply: a table with one field.
int SingleFieldTable(lua_State* L, const char* field) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "ERR wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushvalue(L, 1);
  lua_rawset(L, -3);
  return 1;
}

int RedisStatusReply(lua_State* L) { return SingleFieldTable(L, "ok"); }

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "ERR wrong number or type of arguments");
    return 1;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  std::string_view e(s, len);
  // As Redis: a leading '-' is dropped; a message without a code gets ERR.
  if (!e.empty() && e[0] == '-') e.remove_prefix(1);
  PushErrorTable(L, e);
  return 1;
}

int RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) RaiseError(L, "ERR wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  char hex[41];
  {
    const std::string h = Sha1Hex(s == nullptr ? std::string_view() : std::string_view(s, len));
    std::memcpy(hex, h.data(), 40);
  }
  lua_pushlstring(L, hex, 40);
  return 1;
}

int RedisLog(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) RaiseError(L, "ERR redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) RaiseError(L, "ERR First argument must be a number (log level).");
  const lua_Number level = lua_tonumber(L, 1);
  if (level < 0 || level > 3) RaiseError(L, "ERR Invalid debug level.");
  // Only notice and warning, Redis's default verbosity.
  if (level < 2) return 0;
  lua_pushstring(L, "");
  for (int i = 2; i <= argc; ++i) {
    if (!lua_isstring(L, i)) continue;
    if (i > 2) {
      lua_pushstring(L, " ");
      lua_concat(L, 2);
    }
    lua_pushvalue(L, i);
    lua_concat(L, 2);
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  t_run->log.emplace_back(static_cast<int>(level), std::string(s, len));
  return 0;
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// Past the busy threshold a script may be killed; once killed, every line
// raises again, so that pcall cannot keep the script alive.
void TimeHook(lua_State* L, lua_Debug*) {
  Scripting::Run& run = *t_run;
  if (!run.reported_busy) run.scripting->ReportIfBusy(&run);
  if (!run.kill.load()) return;
  lua_sethook(L, TimeHook, LUA_MASKLINE, 0);
  RaiseError(L, kKilled);
}

// ---- the thread's Lua state ----------------------------------------------------

class LuaThread {
 public:
  LuaThread() : L_(luaL_newstate()) {
    if (L_ == nullptr) throw std::bad_alloc();
    Setup();
  }
  ~LuaThread() { lua_close(L_); }
  LuaThread(const LuaThread&) = delete;
  LuaThread& operator=(const LuaThread&) = delete;

  lua_State* L() const { return L_; }

  // Pushes the compiled function of entry (compiling it on first use);
  // false with *error otherwise.
  bool PushFunction(const std::string& sha, std::string_view body, std::string* error) {
    const uint64_t gen = g_flush_generation.load();
    if (gen != generation_ || compiled_ > 10000) {
      lua_newtable(L_);
      lua_setfield(L_, LUA_REGISTRYINDEX, kFunctions);
      generation_ = gen;
      compiled_ = 0;
    }
    lua_getfield(L_, LUA_REGISTRYINDEX, kFunctions);
    lua_getfield(L_, -1, sha.c_str());
    if (lua_isfunction(L_, -1)) {
      lua_remove(L_, -2);
      return true;
    }
    lua_pop(L_, 1);
    std::string code(body);
    // A shebang line stays as a comment, so that line numbers agree.
    if (code.size() >= 2 && code[0] == '#' && code[1] == '!') code.replace(0, 2, "--");
    if (LoadBuffer(L_, code.data(), code.size(), "@user_script") != 0) {
      *error = std::string("ERR Error compiling script (new function): ") +
               (lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "?");
      lua_pop(L_, 2);
      return false;
    }
    lua_pushvalue(L_, -1);
    lua_setfield(L_, -3, sha.c_str());
    lua_remove(L_, -2);
    ++compiled_;
    return true;
  }

  // Sets KEYS and ARGV in the real globals.
  void SetArgs(const std::vector<std::string>& argv, size_t first, size_t numkeys) {
    lua_getfield(L_, LUA_REGISTRYINDEX, kGlobals);
    const char* names[2] = {"KEYS", "ARGV"};
    const size_t from[2] = {first, first + numkeys};
    const size_t to[2] = {first + numkeys, argv.size()};
    for (int t = 0; t < 2; ++t) {
      lua_pushstring(L_, names[t]);
      lua_createtable(L_, static_cast<int>(to[t] - from[t]), 0);
      for (size_t i = from[t]; i < to[t]; ++i) {
        lua_pushlstring(L_, argv[i].data(), argv[i].size());
        lua_rawseti(L_, -2, static_cast<int>(i - from[t] + 1));
      }
      lua_rawset(L_, -3);
    }
    lua_pop(L_, 1);
  }

 private:
  void Setup() {
    lua_State* L = L_;
    const std::pair<const char*, lua_CFunction> libs[] = {
        {"", luaopen_base}, {LUA_TABLIBNAME, luaopen_table},
        {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math}};
    for (const auto& [name, open] : libs) {
      lua_pushcfunction(L, open);
      lua_pushstring(L, name);
      lua_call(L, 1, 0);
    }
    // cjson and bit as globals, as in Redis (their openers return the table).
    for (const auto& [name, open] :
         {std::pair<const char*, lua_CFunction>{"cjson", luaopen_cjson},
          std::pair<const char*, lua_CFunction>{"bit", luaopen_bit}}) {
      lua_pushcfunction(L, open);
      lua_call(L, 0, 1);
      lua_setfield(L, LUA_GLOBALSINDEX, name);
    }
    // Only what Redis 7.0 keeps of the base library.
    static const char* const kKeep[] = {
        "_G", "_VERSION", "assert", "bit", "cjson", "collectgarbage", "coroutine", "error", "gcinfo",
        "getmetatable", "ipairs", "load", "loadstring", "math", "next", "pairs", "pcall",
        "rawequal", "rawget", "rawset", "select", "setmetatable", "string", "table",
        "tonumber", "tostring", "type", "unpack", "xpcall"};
    std::vector<std::string> drop;
    lua_pushnil(L);
    while (lua_next(L, LUA_GLOBALSINDEX) != 0) {
      lua_pop(L, 1);
      if (lua_type(L, -1) != LUA_TSTRING) continue;
      const char* k = lua_tostring(L, -1);
      if (std::none_of(std::begin(kKeep), std::end(kKeep),
                       [k](const char* keep) { return std::strcmp(k, keep) == 0; })) {
        drop.emplace_back(k);
      }
    }
    for (const auto& k : drop) {
      lua_pushnil(L);
      lua_setfield(L, LUA_GLOBALSINDEX, k.c_str());
    }
    lua_register(L, "rawset", SafeRawset);
    lua_register(L, "pcall", SafePcall);
    lua_register(L, "loadstring", SafeLoadString);
    lua_register(L, "load", SafeLoad);
    lua_register(L, "unpack", SafeUnpack);
    lua_register(L, "setmetatable", SafeSetmetatable);
    lua_getfield(L, LUA_GLOBALSINDEX, "bit");
    lua_pushcfunction(L, SafeBitToHex);
    lua_setfield(L, -2, "tohex");
    lua_pop(L, 1);

    // redis.*
    lua_newtable(L);
    const std::pair<const char*, lua_CFunction> fns[] = {
        {"call", RedisCall},
        {"pcall", RedisPCall},
        {"error_reply", RedisErrorReply},
        {"status_reply", RedisStatusReply},
        {"sha1hex", RedisSha1Hex},
        {"log", RedisLog},
        {"replicate_commands", RedisReplicateCommands}};
    for (const auto& [name, fn] : fns) {
      lua_pushcfunction(L, fn);
      lua_setfield(L, -2, name);
    }
    const std::pair<const char*, int> levels[] = {
        {"LOG_DEBUG", 0}, {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2}, {"LOG_WARNING", 3}};
    for (const auto& [name, v] : levels) {
      lua_pushinteger(L, v);
      lua_setfield(L, -2, name);
    }
    lua_pushstring(L, kRedisCompatVersion);
    lua_setfield(L, -2, "REDIS_VERSION");
    lua_pushinteger(L, 0x07000f);  // 7.0.15
    lua_setfield(L, -2, "REDIS_VERSION_NUM");
    lua_setfield(L, LUA_GLOBALSINDEX, "redis");

    lua_pushcfunction(L, ErrorHandler);
    lua_setfield(L, LUA_REGISTRYINDEX, "ephpm.errh");

    // Library tables become read-only proxies; so do the globals.
    for (const char* lib : {"redis", "string", "table", "math", "coroutine", "cjson", "bit"}) {
      lua_getfield(L, LUA_GLOBALSINDEX, lib);
      MakeReadonly(L);
      lua_setfield(L, LUA_GLOBALSINDEX, lib);
    }
    // Strings' methods through the read-only string table; their metatable
    // hidden from getmetatable.
    lua_pushstring(L, "");
    lua_getmetatable(L, -1);
    lua_getfield(L, LUA_GLOBALSINDEX, "string");
    lua_setfield(L, -2, "__index");
    PushMetatableView(L);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    lua_pushvalue(L, LUA_GLOBALSINDEX);  // real globals
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kGlobals);
    lua_newtable(L);  // its metatable: a missing global raises
    lua_pushcfunction(L, MissingGlobal);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    MakeReadonly(L);  // real, proxy
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "_G");  // rawset: _G has no __newindex
    lua_replace(L, LUA_GLOBALSINDEX);
    lua_pop(L, 1);

    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, kFunctions);
    generation_ = g_flush_generation.load();
  }

  lua_State* const L_;
  uint64_t generation_ = 0;
  size_t compiled_ = 0;
};

LuaThread& ThisThread() {
  thread_local std::unique_ptr<LuaThread> state;
  if (!state) state = std::make_unique<LuaThread>();
  return *state;
}

// "#!lua [flags=a,b]" on the first line: false with *error when Redis 7.0
// refuses it.
bool ParseShebang(std::string_view body, Scripting::Entry* e, std::string* error) {
  e->no_writes = e->shebang = e->allow_oom = false;
  if (body.size() < 2 || body[0] != '#' || body[1] != '!') return true;
  e->shebang = true;
  std::string_view line = body.substr(0, body.find('\n'));
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) parts.push_back(line.substr(start, i - start));
  }
  if (parts.empty() || parts[0] != "#!lua") {
    *error = "ERR Unexpected engine in script shebang: " + std::string(parts.empty() ? line : parts[0]);
    return false;
  }
  for (size_t p = 1; p < parts.size(); ++p) {
    if (parts[p].substr(0, 6) != "flags=") {
      *error = "ERR Unknown lua shebang option: " + std::string(parts[p]);
      return false;
    }
    std::string_view flags = parts[p].substr(6);
    while (!flags.empty()) {
      const size_t comma = flags.find(',');
      const std::string_view f = flags.substr(0, comma);
      if (f == "no-writes") {
        e->no_writes = true;
      } else if (f == "allow-oom") {
        e->allow_oom = true;
      } else if (f != "allow-stale" && f != "no-cluster" &&
                 f != "allow-cross-slot-keys") {
        *error = "ERR Unexpected flag in script shebang: " + std::string(f);
        return false;
      }
      if (comma == std::string_view::npos) break;
      flags.remove_prefix(comma + 1);
    }
  }
  return true;
}

bool NamesLiteral(const std::string& lower_body, std::string_view name) {
  for (char q : {'"', '\''}) {
    if (lower_body.find(q + std::string(name) + q) != std::string::npos) return true;
  }
  return false;
}

// Whether the script names a keyspace-wide command as a string literal
// ("keys", 'SCAN', ...): then it runs with every shard locked.
bool NamesKeyspaceWide(std::string_view body) {
  const std::string lower = cmd::Lower(body);
  for (const cmd::Command* c : cmd::AllCommands()) {
    if (!KeyspaceWide(*c)) continue;
    if (NamesLiteral(lower, c->name)) return true;
  }
  // SORT's BY and GET may name any key.
  return NamesLiteral(lower, "sort") || NamesLiteral(lower, "sort_ro");
}

bool NamesDatabaseWide(std::string_view body) {
  const std::string lower = cmd::Lower(body);
  for (const char* name : {"select", "move", "flushall", "swapdb"}) {
    if (NamesLiteral(lower, name)) return true;
  }
  return false;
}

}  // namespace

Scripting::~Scripting() = default;

std::shared_ptr<const Scripting::Entry> Scripting::Add(std::string_view body, std::string* error) {
  std::string sha = Sha1Hex(body);
  if (auto found = Find(sha)) return found;
  auto e = std::make_shared<Entry>();
  if (!ParseShebang(body, e.get(), error)) return nullptr;
  LuaThread& lt = ThisThread();
  if (!lt.PushFunction(sha, body, error)) return nullptr;
  lua_pop(lt.L(), 1);
  e->sha = std::move(sha);
  e->body = std::string(body);
  e->all_shards = NamesKeyspaceWide(body);
  e->all_databases = NamesDatabaseWide(body);
  MutexLock l(&mu_);
  auto [it, inserted] = scripts_.emplace(e->sha, e);
  return it->second;
}

std::shared_ptr<const Scripting::Entry> Scripting::Find(const std::string& lower_sha) {
  MutexLock l(&mu_);
  auto it = scripts_.find(lower_sha);
  return it == scripts_.end() ? nullptr : it->second;
}

size_t Scripting::cached() {
  MutexLock l(&mu_);
  return scripts_.size();
}

namespace {

// Admission marks.  A command BusyFor lets through goes on to take its
// shards' locks.  A script that registered in between and locked those
// shards first would leave the command waiting on the script's lock, where
// no -BUSY reaches it, and its I/O thread could not serve SCRIPT KILL.  So a
// command that BusyFor lets through marks its thread until it ends
// (Scripting::EndCommand), and a script, once registered, waits for every
// marked thread to end its command before it takes its locks.  Dekker's
// pattern: the mark is stored (seq_cst) before BusyFor reads running_count_,
// and Register stores running_count_ (seq_cst) before the script reads the
// marks, so either the command sees the script or the script sees the mark.
// Each thread marks its own slot, numbered as core/hit_counters.h numbers
// them, so that commands on different threads share no cache line.  An
// owned slot counts its owner's marks and unmarks: odd while a command is
// marked, so a script waits for that command to end (the count to move on),
// not for a moment with no command, which a busy thread might never have.
// Threads past those numbers count marked commands in the shared slot; a
// script waits for it to reach 0.
struct alignas(64) MarkSlot {
  std::atomic<uint64_t> count{0};
};
MarkSlot g_marks[counter_slot::kOwned + 1];
thread_local bool t_marked = false;

void Mark() {
  if (t_marked) return;
  size_t n = counter_slot::current;
  if (n == counter_slot::kUnassigned) n = counter_slot::Acquire();
  std::atomic<uint64_t>& c = g_marks[n].count;
  if (n == counter_slot::kShared) {
    c.fetch_add(1, std::memory_order_seq_cst);
  } else {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);  // odd
  }
  t_marked = true;
}

void Unmark() {
  if (!t_marked) return;
  const size_t n = counter_slot::current;
  std::atomic<uint64_t>& c = g_marks[n].count;
  if (n == counter_slot::kShared) {
    c.fetch_sub(1, std::memory_order_release);
  } else {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_release);  // even
  }
  t_marked = false;
}

// Waits until every command marked now has ended (a thread that marks
// again later has seen the caller's registration).  Not while the caller
// is marked itself.
void WaitForMarkedCommands() {
  auto pause = [](int spins) {
    if (spins < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  };
  for (size_t n = 0; n < counter_slot::kOwned; ++n) {
    const std::atomic<uint64_t>& c = g_marks[n].count;
    const uint64_t seen = c.load(std::memory_order_seq_cst);
    if (seen % 2 == 0) continue;
    for (int spins = 0; c.load(std::memory_order_seq_cst) == seen; ++spins) pause(spins);
  }
  const std::atomic<uint64_t>& shared = g_marks[counter_slot::kShared].count;
  for (int spins = 0; shared.load(std::memory_order_seq_cst) != 0; ++spins) pause(spins);
}

}  // namespace

std::string_view Scripting::Register(Run* run, bool takes_locks, size_t per_db) {
  // The thread's own admission ends here: a script that takes locks waits
  // for others' marks, not its own; inside EXEC the transaction's section
  // is held already, so the thread waits on no lock any more.
  Unmark();
  {
    MutexLock l(&mu_);
    if (takes_locks) {
      const std::string_view busy =
          WaitForOverlapping(&l, run->shards, run->whole_databases, per_db);
      if (!busy.empty()) return busy;
    }
    if (stopping_) run->kill.store(true);  // (a script that starts as the server stops)
    run->start = Clock::now();
    running_.push_back(run);
    running_count_.store(static_cast<int>(running_.size()), std::memory_order_seq_cst);
  }
  // Commands let through before this registration may still be on their
  // way to the shards' locks: they go first (see Mark).
  if (takes_locks) WaitForMarkedCommands();
  return {};
}

void Scripting::Unregister(Run* run) {
  {
    MutexLock l(&mu_);
    running_.erase(std::find(running_.begin(), running_.end(), run));
    running_count_.store(static_cast<int>(running_.size()));
    ended_.notify_all();
  }
  if (run->ended != nullptr) run->ended->store(true);
}

void Scripting::ReportIfBusy(Run* run) {
  const auto threshold = std::chrono::milliseconds(busy_threshold_ms());
  if (Clock::now() - run->start < threshold) return;
  run->reported_busy = true;
  if (!on_busy_) return;
  run->ended = std::make_shared<std::atomic<bool>>(false);
  on_busy_(run->ended);
}

namespace {

// Whether a footprint (shard indices, whole databases) meets a run's.
bool Overlaps(const Scripting::Run& run, const std::vector<size_t>& shards,
              const std::vector<uint32_t>& databases, size_t per_db) {
  auto has = [](const auto& v, auto x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (size_t i : shards) {
    if (has(run.shards, i) || has(run.whole_databases, static_cast<uint32_t>(i / per_db))) {
      return true;
    }
  }
  for (uint32_t d : databases) {
    if (has(run.whole_databases, d)) return true;
    for (size_t i : run.shards) {
      if (i / per_db == d) return true;
    }
  }
  return false;
}

}  // namespace

void Scripting::EndCommand() { Unmark(); }

std::string_view Scripting::BusyFor(const cmd::Ctx& c) {
  if (t_run != nullptr || c.client->in_exec) return {};
  Mark();
  if (running_count_.load(std::memory_order_seq_cst) == 0) return {};
  // What the command would lock: its keys' shards, its database, or all.
  const cmd::Command& k = *c.cmd;
  const Store& store = *c.store;
  const size_t per_db = store.ShardsPerDatabase();
  const uint32_t db = c.client->db;
  std::vector<size_t> shards;
  std::vector<uint32_t> databases;
  if (DatabaseWide(k.name) && std::strcmp(k.name, "select") != 0) {  // SELECT locks nothing
    for (uint32_t d = 0; d < store.options().databases; ++d) databases.push_back(d);
  } else {
    std::vector<size_t> positions;
    cmd::KeyPositions(k, c.argv, &positions);
    for (size_t i : positions) shards.push_back(store.ShardIndex(db, c.argv[i]));
    const std::string_view name = k.name;
    if ((k.first_key <= 0 && cmd::NumkeysIndex(name) == 0 && KeyspaceWide(k)) ||
        ((name == "sort" || name == "sort_ro") &&
         cmd::SortNamesKeyspace(c.argv, name == "sort_ro"))) {
      databases.push_back(db);
    }
  }
  if (shards.empty() && databases.empty()) return {};
  // A script below the threshold is waited for here, not on its shard lock,
  // so that the wait ends at the threshold with -BUSY: an I/O thread stuck
  // behind an endless script could otherwise not serve SCRIPT KILL.  The
  // thread is not marked meanwhile (a script registering now must not wait
  // for it); it is marked again under mu_ once let through, so a script
  // that registers later sees the mark.
  Unmark();
  MutexLock l(&mu_);
  const std::string_view busy = WaitForOverlapping(&l, shards, databases, per_db);
  if (busy.empty()) Mark();
  return busy;
}

std::string_view Scripting::WaitForOverlapping(MutexLock* l, const std::vector<size_t>& shards,
                                               const std::vector<uint32_t>& databases,
                                               size_t per_db) {
  for (;;) {
    const auto now = Clock::now();
    const auto threshold = std::chrono::milliseconds(busy_threshold_ms());
    bool overlapping = false;
    auto until = Clock::time_point::max();
    for (const Run* run : running_) {
      if (!Overlaps(*run, shards, databases, per_db)) continue;
      if (now - run->start >= threshold) return kBusy;
      overlapping = true;
      until = std::min(until, run->start + threshold);
    }
    if (!overlapping) return {};
    l->WaitUntil(&ended_, until);
  }
}

void Scripting::Eval(cmd::Ctx& c, bool by_sha, bool read_only) {
  if (by_sha && c.argv[1].size() != 40) return c.w.Error(kNoScript);
  int64_t numkeys = 0;
  if (!cmd::ParseLL(c.argv[2], &numkeys)) return c.w.Error(cmd::kNotInteger);
  if (numkeys > static_cast<int64_t>(c.argv.size()) - 3) {
    return c.w.Error("ERR Number of keys can't be greater than number of args");
  }
  if (numkeys < 0) return c.w.Error("ERR Number of keys can't be negative");
  std::shared_ptr<const Entry> entry;
  if (by_sha) {
    entry = Find(cmd::Lower(c.argv[1]));
    if (!entry) return c.w.Error(kNoScript);
  } else {
    std::string error;
    entry = Add(c.argv[1], &error);
    if (!entry) return c.w.Error(error);
  }
  std::vector<std::string_view> keys(c.argv.begin() + 3, c.argv.begin() + 3 + numkeys);
  if (!keys.empty()) {
    // (Keys of two owners never reach here: the dispatcher answered
    // CROSSSLOT for them, KeyPositions.)
    if (Replicator* r = c.store->options().replicator; r != nullptr) {
      // As a transaction: a script decides on the owner's data, never on a
      // member's copy (a lock release read here and deleted there would
      // not be one step).
      const std::string owner = r->RemoteOwner(keys.front());
      if (!owner.empty()) {
        return c.w.Error("ERR a script runs on the owner of its keys: send it to " + owner);
      }
    }
  }

  // Redis's scriptPrepareForRun: past maxmemory a script that declares its
  // flags runs only if it writes nothing or allows it.  (One without a
  // shebang runs; each of its calls is checked.)
  if (entry->shebang && !entry->no_writes && !entry->allow_oom && c.store->OverMemoryLimit()) {
    return c.w.Error(cmd::kOom);
  }

  // Inside EXEC the transaction's section holds the caller's whole database
  // already (EVAL names no fixed key); it cannot take others.
  const bool in_exec = c.client->in_exec;
  if (in_exec && entry->all_databases) {
    return c.w.Error("ERR a script that SELECTs, MOVEs or FLUSHALLs cannot run inside MULTI");
  }

  LuaThread& lt = ThisThread();
  lua_State* L = lt.L();
  std::string error;
  if (!lt.PushFunction(entry->sha, entry->body, &error)) return c.w.Error(error);
  lt.SetArgs(c.argv, 3, static_cast<size_t>(numkeys));
  lua_getfield(L, LUA_REGISTRYINDEX, "ephpm.errh");
  lua_insert(L, -2);  // handler, function

  Run run;
  run.scripting = this;
  run.ctx = &c;
  run.entry = entry.get();
  run.client.authenticated = true;
  run.client.name = "lua";
  run.client.in_script = true;
  run.client.db = c.client->db;
  run.db = c.client->db;
  run.read_only = read_only || entry->no_writes;
  run.keys.insert(keys.begin(), keys.end());
  for (std::string_view k : keys) run.shards.push_back(c.store->ShardIndex(run.db, k));
  if (entry->all_databases) {
    for (uint32_t d = 0; d < c.store->options().databases; ++d) run.whole_databases.push_back(d);
  } else if (entry->all_shards || in_exec) {
    run.whole_databases.push_back(run.db);
  }
  // Outside EXEC the script waits here for overlapping scripts (or is told
  // -BUSY), as a command does in BusyFor, rather than on their locks.
  if (const std::string_view busy = Register(&run, !in_exec, c.store->ShardsPerDatabase());
      !busy.empty()) {
    lua_settop(L, 0);
    return c.w.Error(busy);
  }
  t_run = &run;
  lua_sethook(L, TimeHook, LUA_MASKCOUNT, 100000);

  std::string reply;
  std::vector<std::pair<uint32_t, std::string_view>> section_keys;
  for (std::string_view k : keys) section_keys.emplace_back(run.db, k);
  std::vector<uint32_t> whole;
  if (entry->all_databases) {
    for (uint32_t d = 0; d < c.store->options().databases; ++d) whole.push_back(d);
  } else if (entry->all_shards) {
    whole.push_back(run.db);
  }
  auto body = [&] {
    ReplyWriter w(&reply);
    if (lua_pcall(L, 0, 1, -2) != 0) {
      if (lua_istable(L, -1)) {
        w.Error(ErrorLine(L, lua_gettop(L), entry->sha, true));
      } else {
        w.Error(std::string("ERR Error running script ") + entry->sha + ", " +
                (lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure"));
      }
    } else {
      WriteValue(L, w, entry->sha);
    }
  };
  Status st = Status::kOk;
  if (in_exec) {
    body();
  } else {
    st = c.store->AtomicallyIn(section_keys, whole, body);
  }

  lua_sethook(L, nullptr, 0, 0);
  lua_settop(L, 0);
  Unregister(&run);
  t_run = nullptr;
  c.client->exec_wrote = run.wrote.load();
  for (const auto& [level, line] : run.log) {
    std::fprintf(stderr, "%s script %s: %s\n", level == 3 ? "warning" : "notice",
                 entry->sha.c_str(), line.c_str());
  }
  if (cmd::Failed(c, st)) return;  // a key too long: the script did not run
  c.w.Raw(reply);
}

void Scripting::Load(cmd::Ctx& c) {
  std::string error;
  auto entry = Add(c.argv[2], &error);
  if (!entry) return c.w.Error(error);
  c.w.Bulk(entry->sha);
}

void Scripting::Exists(cmd::Ctx& c) {
  c.w.ArrayHeader(c.argv.size() - 2);
  for (size_t i = 2; i < c.argv.size(); ++i) c.w.Integer(Find(cmd::Lower(c.argv[i])) ? 1 : 0);
}

void Scripting::Flush(cmd::Ctx& c) {
  if (c.argv.size() > 3 ||
      (c.argv.size() == 3 && !cmd::IEq(c.argv[2], "sync") && !cmd::IEq(c.argv[2], "async"))) {
    return c.w.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  }
  {
    MutexLock l(&mu_);
    scripts_.clear();
  }
  g_flush_generation.fetch_add(1);
  cmd::Ok(c);
}

void Scripting::Kill(cmd::Ctx& c) {
  const auto now = Clock::now();
  const auto threshold = std::chrono::milliseconds(busy_threshold_ms());
  size_t busy = 0, killed = 0;
  {
    MutexLock l(&mu_);
    for (Run* run : running_) {
      if (now - run->start < threshold) continue;
      ++busy;
      if (run->wrote.load()) continue;
      run->kill.store(true);
      ++killed;
    }
  }
  if (busy == 0) return c.w.Error(kNotBusy);
  if (killed == 0) return c.w.Error(kUnkillable);
  cmd::Ok(c);
}

void Scripting::KillForShutdown() {
  MutexLock l(&mu_);
  stopping_ = true;
  for (Run* run : running_) {
    if (!run->wrote.load()) run->kill.store(true);
  }
}

}  // namespace script
}  // namespace resp
}  // namespace ephpm
