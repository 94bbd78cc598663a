// Keyspace commands: DEL, EXISTS, TYPE, RENAME, KEYS, SCAN, RANDOMKEY,
// SWAPDB, COPY, OBJECT, and the EXPIRE / TTL family.

#include "command_table.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ephpm {
namespace resp {
namespace cmd {

void CmdDel(Ctx& c) {
  int64_t total = 0;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    int64_t n = 0;
    if (Failed(c, c.store->Del(c.argv[i], &n))) return;
    total += n;
  }
  c.w.Integer(total);
}

namespace {

// EXISTS and TOUCH: how many of the keys named (repeats counted) are live.
void CountLive(Ctx& c, Status (Store::*live)(std::string_view, bool*) const) {
  int64_t total = 0;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    bool e = false;
    if (Failed(c, (c.store->*live)(c.argv[i], &e))) return;
    total += e ? 1 : 0;
  }
  c.w.Integer(total);
}

}  // namespace

void CmdExists(Ctx& c) { CountLive(c, &Store::Exists); }

void CmdTouch(Ctx& c) { CountLive(c, &Store::Touch); }

namespace {

const char* TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kHash: return "hash";
    case ValueType::kList: return "list";
    case ValueType::kSet: return "set";
    case ValueType::kZSet: return "zset";
  }
  return "none";
}

}  // namespace

void CmdType(Ctx& c) {
  const auto t = TypeOf(c, c.argv[1]);
  c.w.SimpleString(t ? TypeName(*t) : "none");
}

void CmdMove(Ctx& c) {
  if (c.store->options().replicator != nullptr) {
    return c.w.Error("ERR MOVE is not allowed in cluster mode");
  }
  int64_t db = 0;
  if (!ParseLL(c.argv[2], &db)) return c.w.Error(kNotInteger);
  if (db < INT32_MIN || db > INT32_MAX) {
    return c.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
  }
  if (db < 0 || static_cast<uint64_t>(db) >= c.store->options().databases) {
    return c.w.Error("ERR DB index is out of range");
  }
  if (static_cast<uint32_t>(db) == c.client->db) {
    return c.w.Error("ERR source and destination objects are the same");
  }
  bool moved = false;
  if (Failed(c, c.store->Move(c.argv[1], static_cast<uint32_t>(db), &moved))) return;
  c.w.Integer(moved ? 1 : 0);
}

namespace {

void RenameGeneric(Ctx& c, bool nx) {
  bool renamed = false;
  const Status st = c.store->Rename(c.argv[1], c.argv[2], nx, &renamed);
  if (st == Status::kNotFound) return c.w.Error(kNoKey);
  if (Failed(c, st)) return;
  if (nx) return c.w.Integer(renamed ? 1 : 0);
  Ok(c);
}

}  // namespace

void CmdRename(Ctx& c) { RenameGeneric(c, false); }

void CmdRenameNx(Ctx& c) { RenameGeneric(c, true); }

namespace {

// Redis's matcher never matches an empty text against a non-empty pattern
// (its loop ends before it reads the pattern), though "*" selects every key,
// "" included, by a shortcut that skips matching.  The store's glob matches
// "" with "**" too: drop the empty key where Redis would not return it.
bool RedisMatchesEmptyKey(std::string_view pattern) { return pattern.empty() || pattern == "*"; }

void DropEmptyKeyUnlessMatched(std::string_view pattern, std::vector<std::string>* keys) {
  if (RedisMatchesEmptyKey(pattern)) return;
  keys->erase(std::remove(keys->begin(), keys->end(), std::string()), keys->end());
}

}  // namespace

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
    } else if (IEq(*type_name, "list")) {
      type = ValueType::kList;
    } else if (IEq(*type_name, "set")) {
      type = ValueType::kSet;
    } else if (IEq(*type_name, "zset")) {
      type = ValueType::kZSet;
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

namespace {

// EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (Redis 7.0's expireGenericCommand),
// and ephpm's compare-and-expire: EXPIRE/PEXPIRE key time IFEQ token sets
// the TTL only while the key holds token (a lock's refresh), alone.
void ExpireGeneric(Ctx& c, bool relative, bool seconds) {
  unsigned conditions = 0;
  bool nx = false, xx = false, gt = false, lt = false;
  const std::string* token = nullptr;
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
    } else if (IEq(opt, "IFEQ") && relative) {
      if (token != nullptr || j + 1 >= c.argv.size()) return c.w.Error(kSyntaxErr);
      token = &c.argv[++j];
    } else {
      return c.w.Error("ERR Unsupported option " + std::string(CStr(opt, 1 << 20)));
    }
  }
  if (token != nullptr && conditions != 0) return c.w.Error(kSyntaxErr);
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
  if (token != nullptr) {
    // when is the TTL; <= 0 removes the key if it matches, as Redis's
    // EXPIRE with a time not in the future.
    const ExpireIfEqOutcome o = c.store->ExpireIfEq(c.argv[1], *token, when);
    if (Failed(c, ErrorOf(o))) return;
    return c.w.Integer(o == ExpireIfEqOutcome::kApplied ? 1 : 0);
  }
  when += base;
  bool applied = false;
  if (Failed(c, c.store->ExpireAtIf(c.argv[1], when, conditions, &applied))) return;
  c.w.Integer(applied ? 1 : 0);
}

}  // namespace

void CmdExpire(Ctx& c) { ExpireGeneric(c, true, true); }

void CmdPExpire(Ctx& c) { ExpireGeneric(c, true, false); }

void CmdExpireAt(Ctx& c) { ExpireGeneric(c, false, true); }

void CmdPExpireAt(Ctx& c) { ExpireGeneric(c, false, false); }

namespace {

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

}  // namespace

void CmdTtl(Ctx& c) { TtlGeneric(c, false, false); }

void CmdPTtl(Ctx& c) { TtlGeneric(c, true, false); }

void CmdExpireTime(Ctx& c) { TtlGeneric(c, false, true); }

void CmdPExpireTime(Ctx& c) { TtlGeneric(c, true, true); }

void CmdPersist(Ctx& c) {
  bool applied = false;
  if (Failed(c, c.store->Persist(c.argv[1], &applied))) return;
  c.w.Integer(applied ? 1 : 0);
}

// ---- SWAPDB, COPY, OBJECT ----------------------------------------------------

namespace {

// Redis's getIntFromObjectOrReply with its own error text: an int64 in int's
// range, else `error`.
bool ParseDbIndex(Ctx& c, const std::string& arg, const char* error, int64_t* db) {
  if (!ParseLL(arg, db) || *db < INT32_MIN || *db > INT32_MAX) {
    c.w.Error(error);
    return false;
  }
  return true;
}

}  // namespace

void CmdSwapDb(Ctx& c) {
  if (c.store->options().replicator != nullptr) {
    return c.w.Error("ERR SWAPDB is not allowed in cluster mode");
  }
  int64_t a = 0, b = 0;
  if (!ParseDbIndex(c, c.argv[1], "ERR invalid first DB index", &a)) return;
  if (!ParseDbIndex(c, c.argv[2], "ERR invalid second DB index", &b)) return;
  const uint64_t databases = c.store->options().databases;
  if (a < 0 || b < 0 || static_cast<uint64_t>(a) >= databases ||
      static_cast<uint64_t>(b) >= databases) {
    return c.w.Error("ERR DB index is out of range");
  }
  const Status st = c.store->SwapDb(static_cast<uint32_t>(a), static_cast<uint32_t>(b));
  // The indexes are in range: refused only inside a script whose section
  // does not hold both databases.
  if (st == Status::kInvalidArgument) {
    return c.w.Error("ERR SWAPDB here needs both databases locked (call it outside this script)");
  }
  if (Failed(c, st)) return;
  Ok(c);
}

// COPY source destination [DB destination-db] [REPLACE], as Redis 7.0's
// copyCommand checks it: options in order, each error at once.
void CmdCopy(Ctx& c) {
  bool replace = false;
  int64_t db = c.client->db;
  for (size_t j = 3; j < c.argv.size(); ++j) {
    const size_t additional = c.argv.size() - j - 1;
    if (IEq(c.argv[j], "REPLACE")) {
      replace = true;
    } else if (IEq(c.argv[j], "DB") && additional >= 1) {
      // Redis's getIntFromObjectOrReply: an int64 outside int has its own text.
      if (!ParseLL(c.argv[j + 1], &db)) return c.w.Error(kNotInteger);
      if (db < INT32_MIN || db > INT32_MAX) {
        return c.w.Error(
            "ERR value is out of range, value must between -2147483648 and 2147483647");
      }
      if (db < 0 || static_cast<uint64_t>(db) >= c.store->options().databases) {
        return c.w.Error("ERR DB index is out of range");
      }
      ++j;
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  if (c.store->options().replicator != nullptr && (c.client->db != 0 || db != 0)) {
    return c.w.Error("ERR Copying to another database is not allowed in cluster mode");
  }
  if (static_cast<uint32_t>(db) == c.client->db && c.argv[1] == c.argv[2]) {
    return c.w.Error("ERR source and destination objects are the same");
  }
  bool copied = false;
  const Status st =
      c.store->Copy(c.argv[1], c.argv[2], static_cast<uint32_t>(db), replace, &copied);
  // The keys' lengths are checked first; past them, kInvalidArgument means
  // a script's section does not hold the destination database.
  if (st == Status::kInvalidArgument && c.argv[1].size() <= kMaxKeySize &&
      c.argv[2].size() <= kMaxKeySize) {
    return c.w.Error("ERR COPY to a database this script does not hold (call it outside)");
  }
  if (Failed(c, st)) return;
  c.w.Integer(copied ? 1 : 0);
}

namespace {

// Redis leaves its compact encodings past the thresholds CONFIG SET sets
// (RuntimeConfig); a list is always a quicklist in 7.0.
constexpr uint64_t kEmbstrMax = 44;
// Redis shares the integers below this (OBJ_SHARED_INTEGERS), whose
// reference count reads as OBJ_SHARED_REFCOUNT.
constexpr int64_t kSharedIntegers = 10000;
constexpr int64_t kSharedRefcount = 2147483647;

const char* EncodingName(const RuntimeConfig& cfg, const Store::ObjectShape& o) {
  auto within = [](uint64_t n, const std::atomic<int64_t>& limit) {
    const int64_t l = limit.load(std::memory_order_relaxed);
    return l >= 0 && n <= static_cast<uint64_t>(l);
  };
  switch (o.type) {
    case ValueType::kString:
      if (o.integers) return "int";
      return o.size <= kEmbstrMax ? "embstr" : "raw";
    case ValueType::kHash:
      return within(o.size, cfg.hash_max_listpack_entries) &&
                     within(o.longest, cfg.hash_max_listpack_value)
                 ? "listpack"
                 : "hashtable";
    case ValueType::kList:
      return "quicklist";
    case ValueType::kSet:
      return o.integers && within(o.size, cfg.set_max_intset_entries) ? "intset" : "hashtable";
    case ValueType::kZSet:
      return within(o.size, cfg.zset_max_listpack_entries) &&
                     within(o.longest, cfg.zset_max_listpack_value)
                 ? "listpack"
                 : "skiplist";
  }
  return "unknown";
}

// The key's shape, or false after replying (a null for a missing key, as
// Redis's OBJECT does).
bool ObjectOf(Ctx& c, Store::ObjectShape* o) {
  const Status st = c.store->Object(c.argv[2], o);
  return !Failed(c, st);
}

}  // namespace

void CmdObjectEncoding(Ctx& c) {
  Store::ObjectShape o;
  if (!ObjectOf(c, &o)) return;
  c.w.Bulk(EncodingName(c.dispatcher->config(), o));
}

void CmdObjectRefcount(Ctx& c) {
  Store::ObjectShape o;
  if (!ObjectOf(c, &o)) return;
  const bool shared = o.type == ValueType::kString && o.integers && o.integer >= 0 &&
                      o.integer < kSharedIntegers &&
                      c.store->options().eviction == EvictionPolicy::kNoEviction;
  c.w.Integer(shared ? kSharedRefcount : 1);
}

// Seconds since the last access the store tracked (ObjectShape::idle_ms:
// under allkeys-lru every access, else the last write).
void CmdObjectIdletime(Ctx& c) {
  Store::ObjectShape o;
  if (!ObjectOf(c, &o)) return;
  c.w.Integer(o.idle_ms / 1000);
}

// ephpm has no LFU policy, so the access frequency is never tracked.
void CmdObjectFreq(Ctx& c) {
  Store::ObjectShape o;
  if (!ObjectOf(c, &o)) return;
  c.w.Error(
      "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
      "that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.");
}

// Redis 7.0's text.
void CmdObjectHelp(Ctx& c) {
  static const char* const kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, kLines);
}

// MEMORY USAGE key [SAMPLES count]: the bytes the store accounts for the key
// (its entry, key, value or elements: the figure ephpm.memory_limit and
// INFO's used_memory add up), or a null for a missing key.  The whole value
// is always measured, so SAMPLES is read and checked as Redis reads it, and
// has nothing to sample.
void CmdMemoryUsage(Ctx& c) {
  for (size_t j = 3; j < c.argv.size(); j += 2) {  // SAMPLES and its count
    if (!IEq(c.argv[j], "samples") || j + 1 >= c.argv.size()) return c.w.Error(kSyntaxErr);
    int64_t samples = 0;
    if (!ParseLL(c.argv[j + 1], &samples)) return c.w.Error(kNotInteger);
    if (samples < 0) return c.w.Error(kSyntaxErr);
  }
  EntryInfo info;
  const Status st = c.store->Inspect(c.argv[2], &info);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Integer(static_cast<int64_t>(info.mem_size));
}

// Redis 7.0's text, for the subcommands ephpm has.
void CmdMemoryHelp(Ctx& c) {
  static const char* const kLines[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help.",
  };
  HelpReply(c, kLines);
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
