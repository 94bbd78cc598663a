// The command table, the helpers every command family shares, and the
// dispatcher: lookup, arity, AUTH, the cluster's one-owner rule.

#include "command_table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ephpm/number_text.h"
#include "ephpm/settings.h"
#include "scripting.h"

namespace ephpm {
namespace resp {
namespace cmd {

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

bool ParseRandCount(Ctx& c, std::string_view option, int64_t* count, bool* with) {
  if (!ParseLL(c.argv[2], count)) {
    c.w.Error(kNotInteger);
    return false;
  }
  if (*count == std::numeric_limits<int64_t>::min()) {
    c.w.Error(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
    return false;
  }
  *with = c.argv.size() == 4;
  if (c.argv.size() > 4 || (*with && !IEq(c.argv[3], option))) {
    c.w.Error(kSyntaxErr);
    return false;
  }
  constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
  if (*with && (*count < -kHalf || *count > kHalf)) {
    c.w.Error("ERR value is out of range");
    return false;
  }
  return true;
}

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
    case Status::kPersistenceError: c.w.Error(MisconfError(*c.store)); return true;
  }
  c.w.Error("ERR internal error");
  return true;
}

std::string MisconfError(const Store& store) {
  std::string reason = store.persistence_info().write_error;
  // Cleared meanwhile by a write that succeeded: still say what happened.
  if (reason.empty()) reason = StatusName(Status::kPersistenceError);
  return std::string(kMisconfAof) + reason;
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

// The command table.  Flags and key positions follow Redis 7.0's.
const Command kCommands[] = {
    // connection and server
    {"ping", -1, kFast, 0, 0, 0, "@fast @connection", CmdPing},
    {"echo", 2, kFast, 0, 0, 0, "@fast @connection", CmdEcho},
    {"quit", -1, kNoAuthNeeded | kFast | kNoQueue, 0, 0, 0, "@fast @connection", CmdQuit},
    {"select", 2, kFast, 0, 0, 0, "@keyspace @fast", CmdSelect},
    {"reset", 1, kNoAuthNeeded | kFast | kNoQueue, 0, 0, 0, "@fast @connection", CmdReset},
    {"auth", -2, kNoAuthNeeded | kFast, 0, 0, 0, "@fast @connection", CmdAuth},
    {"hello", -1, kNoAuthNeeded | kFast, 0, 0, 0, "@fast @connection", CmdHello},
    {"command", -1, 0, 0, 0, 0, "@slow @connection", CmdCommand},
    {"command|count", 2, 0, 0, 0, 0, "@slow @connection", CmdCommandCount},
    {"command|info", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandInfo},
    {"command|docs", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandDocs},
    {"command|list", -2, 0, 0, 0, 0, "@slow @connection", CmdCommandList},
    {"command|getkeys", -4, 0, 0, 0, 0, "@slow @connection", CmdCommandGetKeys},
    {"command|help", 2, 0, 0, 0, 0, "@slow @connection", CmdCommandHelp},
    {"client", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"client|id", 2, 0, 0, 0, 0, "@slow @connection", CmdClientId},
    {"client|getname", 2, 0, 0, 0, 0, "@slow @connection", CmdClientGetName},
    {"client|setname", 3, 0, 0, 0, 0, "@slow @connection", CmdClientSetName},
    {"client|info", 2, 0, 0, 0, 0, "@slow @connection", CmdClientInfo},
    {"client|unblock", -3, kAdmin, 0, 0, 0, "@admin @slow @dangerous @connection",
     CmdClientUnblock},
    {"client|list", -2, kAdmin, 0, 0, 0, "@admin @slow @dangerous @connection", CmdClientList},
    {"client|help", 2, 0, 0, 0, 0, "@slow @connection", CmdClientHelp},
    {"info", -1, 0, 0, 0, 0, "@slow @dangerous", CmdInfo},
    {"dbsize", 1, kReadOnly | kFast, 0, 0, 0, "@keyspace @read @fast", CmdDbSize},
    {"flushdb", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", CmdFlush},
    {"flushall", -1, kWrite, 0, 0, 0, "@keyspace @write @slow @dangerous", CmdFlush},
    {"time", 1, kFast, 0, 0, 0, "@fast", CmdTime},
    {"config", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"config|get", -3, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdConfigGet},
    {"config|set", -4, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdConfigSet},
    {"config|resetstat", 2, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdConfigResetStat},
    {"config|rewrite", 2, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdConfigRewrite},
    {"config|help", 2, 0, 0, 0, 0, "@slow", CmdConfigHelp},
    {"function", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"function|flush", -2, kWrite, 0, 0, 0, "@write @slow @scripting", CmdFunctionFlush},
    {"function|list", -2, 0, 0, 0, 0, "@slow @scripting", CmdFunctionList},
    {"function|load", -3, kWrite | kDenyOom, 0, 0, 0, "@write @slow @scripting",
     CmdFunctionUnsupported},
    {"function|delete", 3, kWrite, 0, 0, 0, "@write @slow @scripting", CmdFunctionDelete},
    {"function|dump", 2, 0, 0, 0, 0, "@slow @scripting", CmdFunctionUnsupported},
    {"function|restore", -3, kWrite | kDenyOom, 0, 0, 0, "@write @slow @scripting",
     CmdFunctionUnsupported},
    {"function|stats", 2, 0, 0, 0, 0, "@slow @scripting", CmdFunctionUnsupported},
    {"function|kill", 2, 0, 0, 0, 0, "@slow @scripting", CmdFunctionUnsupported},
    // transactions
    {"multi", 1, kNoQueue | kFast, 0, 0, 0, "@fast @transaction", CmdMulti},
    {"exec", 1, kNoQueue, 0, 0, 0, "@slow @transaction", CmdExec},
    {"discard", 1, kNoQueue | kFast, 0, 0, 0, "@fast @transaction", CmdDiscard},
    {"watch", -2, kNoQueue | kFast, 1, -1, 1, "@fast @transaction", CmdWatch},
    {"unwatch", 1, kFast, 0, 0, 0, "@fast @transaction", CmdUnwatch},
    // persistence (the snapshot is both Redis's RDB save and its AOF rewrite)
    {"save", 1, kAdmin | kNoMulti, 0, 0, 0, "@admin @slow @dangerous", CmdSave},
    {"bgsave", -1, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdBgSave},
    {"bgrewriteaof", 1, kAdmin, 0, 0, 0, "@admin @slow @dangerous", CmdBgRewriteAof},
    {"lastsave", 1, kFast, 0, 0, 0, "@admin @fast @dangerous", CmdLastSave},
    // strings
    {"get", 2, kReadOnly | kFast, 1, 1, 1, "@read @string @fast", CmdGet},
    {"set", -3, kWrite | kDenyOom | kRoutable, 1, 1, 1, "@write @string @slow",
     CmdSet},
    {"setnx", 3, kWrite | kDenyOom | kFast | kRoutable | kChainable, 1, 1, 1,
     "@write @string @fast", CmdSetNx},
    {"setex", 4, kWrite | kDenyOom | kRoutable, 1, 1, 1, "@write @string @slow",
     CmdSetEx},
    {"psetex", 4, kWrite | kDenyOom | kRoutable, 1, 1, 1, "@write @string @slow",
     CmdPSetEx},
    {"getset", 3, kWrite | kDenyOom | kFast | kRoutable, 1, 1, 1,
     "@write @string @fast", CmdGetSet},
    {"getdel", 2, kWrite | kFast, 1, 1, 1, "@write @string @fast", CmdGetDel},
    {"getex", -2, kWrite | kFast, 1, 1, 1, "@write @string @fast", CmdGetEx},
    {"mget", -2, kReadOnly | kFast, 1, -1, 1, "@read @string @fast", CmdMGet},
    {"mset", -3, kWrite | kDenyOom, 1, -1, 2, "@write @string @slow", CmdMSet},
    {"msetnx", -3, kWrite | kDenyOom, 1, -1, 2, "@write @string @slow", CmdMSetNx},
    {"append", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdAppend},
    {"strlen", 2, kReadOnly | kFast, 1, 1, 1, "@read @string @fast", CmdStrLen},
    {"setrange", 4, kWrite | kDenyOom, 1, 1, 1, "@write @string @slow", CmdSetRange},
    {"getrange", 4, kReadOnly, 1, 1, 1, "@read @string @slow", CmdGetRange},
    {"substr", 4, kReadOnly, 1, 1, 1, "@read @string @slow", CmdGetRange},
    {"lcs", -3, kReadOnly, 1, 2, 1, "@read @string @slow", CmdLcs},
    // bitmaps (strings read and written by the bit)
    {"setbit", 4, kWrite | kDenyOom, 1, 1, 1, "@write @bitmap @slow", CmdSetBit},
    {"getbit", 3, kReadOnly | kFast, 1, 1, 1, "@read @bitmap @fast", CmdGetBit},
    {"bitcount", -2, kReadOnly, 1, 1, 1, "@read @bitmap @slow", CmdBitCount},
    {"bitpos", -3, kReadOnly, 1, 1, 1, "@read @bitmap @slow", CmdBitPos},
    {"bitop", -4, kWrite | kDenyOom, 2, -1, 1, "@write @bitmap @slow", CmdBitOp},
    {"bitfield", -2, kWrite | kDenyOom, 1, 1, 1, "@write @bitmap @slow", CmdBitField},
    {"bitfield_ro", -2, kReadOnly | kFast, 1, 1, 1, "@read @bitmap @fast", CmdBitFieldRo},
    {"incr", 2, kWrite | kDenyOom | kFast | kRoutable | kChainable, 1, 1, 1, "@write @string @fast",
     CmdIncr},
    {"decr", 2, kWrite | kDenyOom | kFast | kRoutable | kChainable, 1, 1, 1, "@write @string @fast",
     CmdDecr},
    {"incrby", 3, kWrite | kDenyOom | kFast | kRoutable | kChainable, 1, 1, 1,
     "@write @string @fast", CmdIncrBy},
    {"decrby", 3, kWrite | kDenyOom | kFast | kRoutable | kChainable, 1, 1, 1,
     "@write @string @fast", CmdDecrBy},
    {"incrbyfloat", 3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @string @fast", CmdIncrByFloat},
    // keys
    {"del", -2, kWrite, 1, -1, 1, "@keyspace @write @slow", CmdDel},
    {"unlink", -2, kWrite | kFast, 1, -1, 1, "@keyspace @write @fast", CmdDel},
    {"exists", -2, kReadOnly | kFast, 1, -1, 1, "@keyspace @read @fast", CmdExists},
    {"touch", -2, kReadOnly | kFast, 1, -1, 1, "@keyspace @read @fast", CmdTouch},
    {"type", 2, kReadOnly | kFast, 1, 1, 1, "@keyspace @read @fast", CmdType},
    {"move", 3, kWrite | kFast, 1, 1, 1, "@keyspace @write @fast", CmdMove},
    {"swapdb", 3, kWrite | kFast, 0, 0, 0, "@keyspace @write @fast @dangerous", CmdSwapDb},
    {"copy", -3, kWrite | kDenyOom, 1, 2, 1, "@keyspace @write @slow", CmdCopy},
    {"object", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"object|encoding", 3, kReadOnly, 2, 2, 1, "@keyspace @read @slow", CmdObjectEncoding},
    {"object|freq", 3, kReadOnly, 2, 2, 1, "@keyspace @read @slow", CmdObjectFreq},
    {"object|idletime", 3, kReadOnly, 2, 2, 1, "@keyspace @read @slow", CmdObjectIdletime},
    {"object|refcount", 3, kReadOnly, 2, 2, 1, "@keyspace @read @slow", CmdObjectRefcount},
    {"object|help", 2, 0, 0, 0, 0, "@keyspace @slow", CmdObjectHelp},
    {"memory", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"memory|usage", -3, kReadOnly, 2, 2, 1, "@read @slow", CmdMemoryUsage},
    {"memory|help", 2, 0, 0, 0, 0, "@slow", CmdMemoryHelp},
    {"rename", 3, kWrite, 1, 2, 1, "@keyspace @write @slow", CmdRename},
    {"renamenx", 3, kWrite | kFast, 1, 2, 1, "@keyspace @write @fast", CmdRenameNx},
    {"keys", 2, kReadOnly, 0, 0, 0, "@keyspace @read @slow @dangerous", CmdKeys},
    {"scan", -2, kReadOnly, 0, 0, 0, "@keyspace @read @slow", CmdScan},
    {"randomkey", 1, kReadOnly, 0, 0, 0, "@keyspace @read @slow", CmdRandomKey},
    {"expire", -3, kWrite | kFast | kRoutable, 1, 1, 1, "@keyspace @write @fast", CmdExpire},
    {"pexpire", -3, kWrite | kFast | kRoutable, 1, 1, 1, "@keyspace @write @fast", CmdPExpire},
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
    {"hrandfield", -2, kReadOnly, 1, 1, 1, "@read @hash @slow", CmdHRandField},
    // sorted sets (ZUNIONSTORE and co. list only the destination, as Redis's
    // legacy key range; their inputs are checked against its owner)
    {"zadd", -4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @sortedset @fast", CmdZAdd},
    {"zincrby", 4, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @sortedset @fast", CmdZIncrBy},
    {"zrem", -3, kWrite | kFast, 1, 1, 1, "@write @sortedset @fast", CmdZRem},
    {"zscore", 3, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZScore},
    {"zmscore", -3, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZMScore},
    {"zcard", 2, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZCard},
    {"zcount", 4, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZCount},
    {"zlexcount", 4, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZLexCount},
    {"zrange", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRange},
    {"zrevrange", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRevRange},
    {"zrangebyscore", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRangeByScore},
    {"zrevrangebyscore", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRevRangeByScore},
    {"zrangebylex", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRangeByLex},
    {"zrevrangebylex", -4, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRevRangeByLex},
    {"zrank", 3, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZRank},
    {"zrevrank", 3, kReadOnly | kFast, 1, 1, 1, "@read @sortedset @fast", CmdZRevRank},
    {"zremrangebyrank", 4, kWrite, 1, 1, 1, "@write @sortedset @slow", CmdZRemRangeByRank},
    {"zremrangebyscore", 4, kWrite, 1, 1, 1, "@write @sortedset @slow", CmdZRemRangeByScore},
    {"zremrangebylex", 4, kWrite, 1, 1, 1, "@write @sortedset @slow", CmdZRemRangeByLex},
    {"zpopmin", -2, kWrite | kFast, 1, 1, 1, "@write @sortedset @fast", CmdZPopMin},
    {"zpopmax", -2, kWrite | kFast, 1, 1, 1, "@write @sortedset @fast", CmdZPopMax},
    {"zrandmember", -2, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZRandMember},
    {"zscan", -3, kReadOnly, 1, 1, 1, "@read @sortedset @slow", CmdZScan},
    {"zunionstore", -4, kWrite | kDenyOom, 1, 1, 1, "@write @sortedset @slow", CmdZUnionStore},
    {"zinterstore", -4, kWrite | kDenyOom, 1, 1, 1, "@write @sortedset @slow", CmdZInterStore},
    {"zdiffstore", -4, kWrite | kDenyOom, 1, 1, 1, "@write @sortedset @slow", CmdZDiffStore},
    {"zunion", -3, kReadOnly, 0, 0, 0, "@read @sortedset @slow", CmdZUnion},
    {"zinter", -3, kReadOnly, 0, 0, 0, "@read @sortedset @slow", CmdZInter},
    {"zdiff", -3, kReadOnly, 0, 0, 0, "@read @sortedset @slow", CmdZDiff},
    {"zintercard", -3, kReadOnly, 0, 0, 0, "@read @sortedset @slow", CmdZInterCard},
    {"zrangestore", -5, kWrite | kDenyOom, 1, 2, 1, "@write @sortedset @slow", CmdZRangeStore},
    {"zmpop", -4, kWrite, 0, 0, 0, "@write @sortedset @slow", CmdZMPop},
    {"bzmpop", -5, kWrite, 0, 0, 0, "@write @sortedset @slow @blocking", CmdBZMPop},
    {"bzpopmin", -3, kWrite | kFast, 1, -2, 1, "@write @sortedset @fast @blocking", CmdBZPopMin},
    {"bzpopmax", -3, kWrite | kFast, 1, -2, 1, "@write @sortedset @fast @blocking", CmdBZPopMax},
    {"lmpop", -4, kWrite, 0, 0, 0, "@write @list @slow", CmdLMPop},
    {"blmpop", -5, kWrite, 0, 0, 0, "@write @list @slow @blocking", CmdBLMPop},
    // sets
    {"sadd", -3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @set @fast", CmdSAdd},
    {"srem", -3, kWrite | kFast, 1, 1, 1, "@write @set @fast", CmdSRem},
    {"smembers", 2, kReadOnly, 1, 1, 1, "@read @set @slow", CmdSMembers},
    {"sismember", 3, kReadOnly | kFast, 1, 1, 1, "@read @set @fast", CmdSIsMember},
    {"smismember", -3, kReadOnly | kFast, 1, 1, 1, "@read @set @fast", CmdSMIsMember},
    {"scard", 2, kReadOnly | kFast, 1, 1, 1, "@read @set @fast", CmdSCard},
    {"spop", -2, kWrite | kFast, 1, 1, 1, "@write @set @fast", CmdSPop},
    {"srandmember", -2, kReadOnly, 1, 1, 1, "@read @set @slow", CmdSRandMember},
    {"smove", 4, kWrite | kFast, 1, 2, 1, "@write @set @fast", CmdSMove},
    {"sinter", -2, kReadOnly, 1, -1, 1, "@read @set @slow", CmdSInter},
    {"sunion", -2, kReadOnly, 1, -1, 1, "@read @set @slow", CmdSUnion},
    {"sdiff", -2, kReadOnly, 1, -1, 1, "@read @set @slow", CmdSDiff},
    {"sinterstore", -3, kWrite | kDenyOom, 1, -1, 1, "@write @set @slow", CmdSInterStore},
    {"sunionstore", -3, kWrite | kDenyOom, 1, -1, 1, "@write @set @slow", CmdSUnionStore},
    {"sdiffstore", -3, kWrite | kDenyOom, 1, -1, 1, "@write @set @slow", CmdSDiffStore},
    {"sintercard", -3, kReadOnly, 0, 0, 0, "@read @set @slow", CmdSInterCard},
    {"sscan", -3, kReadOnly, 1, 1, 1, "@read @set @slow", CmdSScan},
    // lists
    {"lpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @list @fast", CmdLPush},
    {"rpush", -3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @list @fast", CmdRPush},
    {"lpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @list @fast", CmdLPushX},
    {"rpushx", -3, kWrite | kDenyOom | kFast, 1, 1, 1, "@write @list @fast", CmdRPushX},
    {"lpop", -2, kWrite | kFast, 1, 1, 1, "@write @list @fast", CmdLPop},
    {"rpop", -2, kWrite | kFast, 1, 1, 1, "@write @list @fast", CmdRPop},
    {"llen", 2, kReadOnly | kFast, 1, 1, 1, "@read @list @fast", CmdLLen},
    {"lrange", 4, kReadOnly, 1, 1, 1, "@read @list @slow", CmdLRange},
    {"lindex", 3, kReadOnly, 1, 1, 1, "@read @list @slow", CmdLIndex},
    {"lset", 4, kWrite | kDenyOom, 1, 1, 1, "@write @list @slow", CmdLSet},
    {"lrem", 4, kWrite, 1, 1, 1, "@write @list @slow", CmdLRem},
    {"ltrim", 4, kWrite, 1, 1, 1, "@write @list @slow", CmdLTrim},
    {"linsert", 5, kWrite | kDenyOom, 1, 1, 1, "@write @list @slow", CmdLInsert},
    {"lpos", -3, kReadOnly, 1, 1, 1, "@read @list @slow", CmdLPos},
    {"lmove", 5, kWrite | kDenyOom, 1, 2, 1, "@write @list @slow", CmdLMove},
    {"rpoplpush", 3, kWrite | kDenyOom, 1, 2, 1, "@write @list @slow", CmdRPopLPush},
    {"blpop", -3, kWrite, 1, -2, 1, "@write @list @slow @blocking", CmdBLPop},
    {"brpop", -3, kWrite, 1, -2, 1, "@write @list @slow @blocking", CmdBRPop},
    {"blmove", 6, kWrite | kDenyOom, 1, 2, 1, "@write @list @slow @blocking", CmdBLMove},
    {"brpoplpush", 4, kWrite | kDenyOom, 1, 2, 1, "@write @list @slow @blocking",
     CmdBRPopLPush},
    // SORT (STORE's key and the keys BY and GET name are found by reading
    // the request: KeyPositions, SortNamesKeyspace)
    {"sort", -2, kWrite | kDenyOom, 1, 1, 1, "@write @set @sortedset @list @slow @dangerous",
     CmdSort},
    {"sort_ro", -2, kReadOnly, 1, 1, 1, "@read @set @sortedset @list @slow @dangerous",
     CmdSortRo},
    // locks (Valkey 9's DELIFEQ; ephpm's LOCK.FENCE reads a grant's fence)
    {"delifeq", 3, kWrite | kFast | kRoutable | kChainable, 1, 1, 1, "@write @string @fast",
     CmdDelIfEq},
    {"lock.fence", -2, kReadOnly | kFast | kRoutable, 1, 1, 1, "@read @string @fast", CmdLockFence},
    // Redis 8.4's conditional writes (SET's IF* options are with SET)
    {"delex", -2, kWrite | kFast | kRoutable, 1, 1, 1, "@write @string @fast", CmdDelEx},
    {"digest", 2, kReadOnly | kFast, 1, 1, 1, "@read @string @fast", CmdDigest},
    // scripting (the keys of EVAL are declared by numkeys: no fixed positions)
    {"eval", -3, 0, 0, 0, 0, "@slow @scripting", CmdEval},
    {"evalsha", -3, 0, 0, 0, 0, "@slow @scripting", CmdEvalSha},
    {"eval_ro", -3, kReadOnly, 0, 0, 0, "@slow @scripting", CmdEvalRo},
    {"evalsha_ro", -3, kReadOnly, 0, 0, 0, "@slow @scripting", CmdEvalShaRo},
    {"script", -2, 0, 0, 0, 0, "@slow", nullptr},
    {"script|load", 3, 0, 0, 0, 0, "@slow @scripting", CmdScriptLoad},
    {"script|exists", -3, 0, 0, 0, 0, "@slow @scripting", CmdScriptExists},
    {"script|flush", -2, 0, 0, 0, 0, "@slow @scripting", CmdScriptFlush},
    {"script|kill", 2, 0, 0, 0, 0, "@slow @scripting", CmdScriptKill},
    {"script|help", 2, 0, 0, 0, 0, "@slow @scripting", CmdScriptHelp},
};

const absl::flat_hash_map<std::string, const Command*>& Table() {
  static const auto* table = [] {
    auto* t = new absl::flat_hash_map<std::string, const Command*>();
    for (const Command& c : kCommands) (*t)[c.name] = &c;
    return t;
  }();
  return *table;
}

// A container is a name the table has "name|sub" entries for.
bool IsContainer(std::string_view lower_name) {
  static const auto* containers = [] {
    auto* names = new absl::flat_hash_set<std::string>();
    for (const Command& c : kCommands) {
      const std::string_view name = c.name;
      const size_t bar = name.find('|');
      if (bar != std::string_view::npos) names->emplace(name.substr(0, bar));
    }
    return names;
  }();
  return containers->contains(absl::string_view(lower_name.data(), lower_name.size()));
}

const std::vector<const Command*>& AllCommands() {
  static const auto* all = [] {
    auto* v = new std::vector<const Command*>();
    for (const Command& c : kCommands) v->push_back(&c);
    return v;
  }();
  return *all;
}

const Command* FindCommand(const std::string& name, const Args& argv, bool* unknown_sub) {
  const auto& table = Table();
  *unknown_sub = false;
  // ("container|sub" names the table's own entries, never a request's.)
  auto it = name.find('|') == std::string::npos ? table.find(name) : table.end();
  const Command* cmd = it == table.end() ? nullptr : it->second;
  if (cmd != nullptr && IsContainer(name) && argv.size() >= 2) {
    auto sub = table.find(name + "|" + Lower(argv[1]));
    if (sub == table.end()) {
      *unknown_sub = true;
      return nullptr;
    }
    cmd = sub->second;
  }
  return cmd;
}

const Command* LookupRequest(const Args& argv) {
  bool unknown_sub = false;
  return FindCommand(Lower(argv[0]), argv, &unknown_sub);
}

size_t NumkeysIndex(std::string_view name) {
  if (name == "eval" || name == "evalsha" || name == "eval_ro" || name == "evalsha_ro" ||
      name == "zunionstore" || name == "zinterstore" || name == "zdiffstore" ||
      name == "blmpop" || name == "bzmpop") {
    return 2;
  }
  if (name == "zunion" || name == "zinter" || name == "zdiff" || name == "zintercard" ||
      name == "sintercard" || name == "lmpop" || name == "zmpop") {
    return 1;
  }
  return 0;
}

bool KeyPositions(const Command& cmd, const Args& argv, std::vector<size_t>* positions) {
  positions->clear();
  const std::string_view name = cmd.name;
  const size_t argc = argv.size();
  if (name == "sort") {
    // Redis's sortGetKeys: LIMIT, GET and BY skip their arguments, the last
    // STORE (with an argument after it) names the destination.  (SORT_RO
    // has no STORE: its one key is the table's.)
    positions->push_back(1);
    size_t store = 0;
    for (size_t i = 2; i < argc; ++i) {
      if (IEq(argv[i], "limit")) {
        i += 2;
      } else if (IEq(argv[i], "get") || IEq(argv[i], "by")) {
        i += 1;
      } else if (IEq(argv[i], "store") && i + 1 < argc) {
        store = i + 1;
      }
    }
    if (store != 0) positions->push_back(store);
    return true;
  }
  if (cmd.first_key > 0) {
    const int n = static_cast<int>(argc);
    const int last = cmd.last_key < 0 ? n + cmd.last_key : cmd.last_key;
    for (int i = cmd.first_key; i <= last && i < n; i += std::max(1, cmd.step)) {
      positions->push_back(static_cast<size_t>(i));
    }
  }
  if (const size_t at = NumkeysIndex(name); at != 0) {
    // Redis's genericGetKeys: no keys unless numkeys counts at least one
    // and no more than the arguments after it.
    int64_t numkeys = 0;
    if (at >= argc || !ParseLL(argv[at], &numkeys) || numkeys < 1 ||
        numkeys > static_cast<int64_t>(argc - at - 1)) {
      positions->clear();
      return false;
    }
    for (size_t i = at + 1; i <= at + static_cast<size_t>(numkeys); ++i) positions->push_back(i);
  }
  return !positions->empty();
}

bool HasKeys(const Command& cmd) {
  return cmd.first_key > 0 || NumkeysIndex(cmd.name) != 0;
}

// In a cluster, a command's keys must have one owner (Redis Cluster's rule
// for slots): what the command decides is then decided in one place.
bool KeysShareOwner(const Ctx& c) {
  Replicator* r = c.store->options().replicator;
  if (r == nullptr) return true;
  // One key at a fixed place (GET, INCR, SET, ...): nothing to compare, and
  // nothing allocated on a routed command's path.
  const Command& cmd = *c.cmd;
  const int argc = static_cast<int>(c.argv.size());
  const int last = cmd.last_key < 0 ? argc + cmd.last_key : cmd.last_key;
  if (cmd.first_key > 0 && last <= cmd.first_key && NumkeysIndex(cmd.name) == 0 &&
      std::string_view(cmd.name) != "sort") {
    return true;
  }
  std::vector<size_t> positions;
  KeyPositions(*c.cmd, c.argv, &positions);
  if (positions.size() <= 1) return true;
  std::vector<std::string_view> keys;
  keys.reserve(positions.size());
  for (size_t i : positions) keys.push_back(c.argv[i]);
  return r->SameOwner(keys);
}

}  // namespace cmd

using cmd::ArityError;
using cmd::FindCommand;
using cmd::Command;
using cmd::CStr;
using cmd::Ctx;
using cmd::IsContainer;
using cmd::kCrossSlot;
using cmd::KeysShareOwner;
using cmd::kNoAuth;
using cmd::kNoAuthNeeded;
using cmd::kNoQueue;
using cmd::kWrite;
using cmd::Lower;
using cmd::MisconfError;
using cmd::Table;

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
         " idle=0 flags=N db=" + std::to_string(c.db) + " sub=0 psub=0 ssub=0 multi=-1 resp=2 cmd=" +
         (c.last_command == nullptr ? "NULL" : c.last_command) + " user=default";
}

Dispatcher::Dispatcher(Store* store, ServerContext* server)
    : store_(store), server_(server), scripting_(std::make_unique<script::Scripting>()) {}

Dispatcher::~Dispatcher() = default;

bool Dispatcher::Execute(ClientState* client, std::vector<std::string>& argv, std::string* out) {
  bool wrote = false;
  Run(client, argv, out, nullptr, nullptr, 0, &wrote, nullptr);
  return wrote;
}

Dispatcher::Ran Dispatcher::Execute(ClientState* client, std::vector<std::string>& argv,
                                    std::string* out, const RouteDeferral::Resume& resume,
                                    RouteChain* chain, uint64_t ticket, bool* wrote,
                                    int64_t* deferred_now_ms) {
  *wrote = false;
  return Run(client, argv, out, &resume, chain, ticket, wrote, deferred_now_ms);
}

bool Dispatcher::Replay(ClientState* client, std::vector<std::string>& argv, std::string* out,
                        RouteAnswer answer, int64_t now_ms) {
  ReplyWriter w(out);
  bool unknown_sub = false;
  const Command* cmd = FindCommand(Lower(argv[0]), argv, &unknown_sub);
  // The first pass found it and passed its checks; the table does not change.
  if (cmd == nullptr) {
    w.Error("ERR internal error: a deferred command is gone");
    return false;
  }
  Ctx c{store_, server_, client, this, w, argv, cmd};
  client->exec_wrote = false;
  const Store::DatabaseScope database(*store_, client->db);
  const RouteReplay replay(std::move(answer), now_ms);
  cmd->fn(c);
  return (cmd->flags & kWrite) != 0 || client->exec_wrote;
}

Dispatcher::Ran Dispatcher::Run(ClientState* client, std::vector<std::string>& argv,
                                std::string* out, const RouteDeferral::Resume* resume,
                                RouteChain* chain, uint64_t ticket, bool* wrote,
                                int64_t* deferred_now_ms) {
  ReplyWriter w(out);
  // Decisions in flight (a chain): only a command that may join them runs
  // now, and only as far as its routed call (route_deferral.h).
  const bool joining = chain != nullptr && chain->open();
  const std::string name = Lower(argv[0]);
  bool unknown_sub = false;
  const Command* cmd = FindCommand(name, argv, &unknown_sub);
  if (joining && (cmd == nullptr || !(cmd->flags & cmd::kChainable) || client->in_multi ||
                  !client->authenticated)) {
    return Ran::kHeld;
  }
  total_commands_.fetch_add(1, std::memory_order_relaxed);
  // A request's end without a routed call.  Joining a chain it must not
  // answer before the decisions in flight (its reply would overtake
  // theirs), so it is held, uncounted, to run again: a chainable command
  // changes nothing without its routed call (kChainable), so that is exact.
  auto done = [&](bool wrote_something) {
    if (joining) {
      total_commands_.fetch_sub(1, std::memory_order_relaxed);
      return Ran::kHeld;
    }
    *wrote = wrote_something;
    return Ran::kDone;
  };
  // Between MULTI and EXEC a command refused before it could be queued
  // makes the transaction fail at EXEC, as in Redis.
  const bool queuing = client->in_multi && !client->in_exec;
  auto refuse = [&](std::string_view error) {
    w.Error(error);
    if (queuing) client->multi_dirty = true;
    return done(false);
  };
  if (unknown_sub) {
    std::string upper(name);
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return refuse("ERR unknown subcommand '" + std::string(CStr(argv[1], 128)) + "'. Try " +
                  upper + " HELP.");
  }
  if (cmd == nullptr) {
    if (const ExtraCommand* extra = server_->FindExtraCommand(name)) {
      if (!client->authenticated) return refuse(kNoAuth);
      const std::string error = (*extra)(argv);
      if (error.empty()) {
        w.SimpleString("OK");
      } else {
        w.Error(error);
      }
      return done(false);
    }
    // Redis quotes the first arguments, up to about 128 bytes of them.
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + std::string(CStr(argv[i], 128 - args.size())) + "' ";
    }
    return refuse("ERR unknown command '" + std::string(CStr(argv[0], 128)) +
                  "', with args beginning with: " + args);
  }
  Ctx c{store_, server_, client, this, w, argv, cmd};
  const int n = static_cast<int>(argv.size());
  if ((cmd->arity > 0 && n != cmd->arity) || n < -cmd->arity) {
    ArityError(c);
    if (queuing) client->multi_dirty = true;
    return done(false);
  }
  if (!client->authenticated && !(cmd->flags & kNoAuthNeeded)) return refuse(kNoAuth);
  if (client->in_multi && (cmd->flags & cmd::kNoMulti)) {
    return refuse("ERR Command not allowed inside a transaction");
  }
  client->last_command = cmd->name;
  if (HasKeys(*cmd) && !KeysShareOwner(c)) return refuse(kCrossSlot);
  // As Redis with an AOF it cannot write: writes are refused, reads go on.
  const bool write = (cmd->flags & kWrite) != 0;
  if (write && store_->WritesAllowed() != Status::kOk) return refuse(MisconfError(*store_));
  // As Redis: past maxmemory (noeviction) a command that may grow the data
  // is refused before it runs, and so is queuing anything in MULTI.  (Not
  // the commands EXEC or a script runs: EXEC checked its queue, a script
  // checks each call itself.)
  if (((cmd->flags & cmd::kDenyOom) || (queuing && !(cmd->flags & kNoQueue))) &&
      !client->in_exec && !client->in_script && store_->OverMemoryLimit()) {
    return refuse(cmd::kOom);
  }
  if (queuing && !(cmd->flags & kNoQueue)) {
    client->queued.push_back(argv);
    w.SimpleString("QUEUED");
    return done(false);
  }
  // A command that would wait for a long script's shards is told so.
  if (const std::string_view busy = scripting_->BusyFor(c); !busy.empty()) return refuse(busy);
  struct Admitted {
    ~Admitted() { script::Scripting::EndCommand(); }
  } const admitted;  // a script waiting to lock goes on once this command ends
  client->exec_wrote = false;
  const Store::DatabaseScope database(*store_, client->db);
  if (resume != nullptr && (cmd->flags & cmd::kRoutable)) {
    const RouteDeferral deferral(resume, chain, ticket);
    cmd->fn(c);
    if (deferral.held()) {
      total_commands_.fetch_sub(1, std::memory_order_relaxed);
      return Ran::kHeld;
    }
    if (deferral.deferred()) {
      *deferred_now_ms = deferral.value();
      return Ran::kDeferred;
    }
    return done(write || client->exec_wrote);
  }
  cmd->fn(c);
  return done(write || client->exec_wrote);
}

void Dispatcher::Forget(ClientState* client) {
  for (const auto& w : client->watched) {
    const Store::DatabaseScope database(*store_, w.db);
    store_->Unwatch(w.key);
  }
  client->watched.clear();
}

bool Dispatcher::WaitDurable(std::string* error) {
  if (store_->WaitDurable() == Status::kOk) return true;
  *error = MisconfError(*store_);
  return false;
}

}  // namespace resp
}  // namespace ephpm
