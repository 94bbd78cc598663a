// Internal to the RESP server: what the command families (cmd_*.cc) share.
// The command table itself, the shared helpers and the dispatcher are in
// command_table.cc; each family defines its handlers in namespace cmd.

#ifndef EPHPM_RESP_COMMAND_TABLE_H_
#define EPHPM_RESP_COMMAND_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "commands.h"
#include "ephpm/store.h"
#include "reply.h"

namespace ephpm {
namespace resp {
namespace cmd {

using Args = std::vector<std::string>;

// ---- replies Redis uses verbatim ---------------------------------------------

inline constexpr std::string_view kSyntaxErr = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNanInf = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kNoKey = "ERR no such key";
inline constexpr std::string_view kTooBig = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kClusterDown =
    "CLUSTERDOWN the key's owner is unreachable, the outcome is unknown";
inline constexpr std::string_view kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";
// Redis 7's reply to a write while its AOF cannot be written; the reason
// (strerror text) follows.
inline constexpr std::string_view kMisconfAof = "MISCONF Errors writing to the AOF file: ";
// Redis 8.4's reply to an IFDEQ/IFDNE digest that is not 16 hex digits.
inline constexpr std::string_view kBadDigest = "ERR must be exactly 16 hexadecimal characters";
// ephpm's own: SAVE, BGSAVE and BGREWRITEAOF without a data dir.
inline constexpr std::string_view kPersistenceOff =
    "ERR persistence is off: start ephpm with --data-dir";

// ---- command table --------------------------------------------------------------

enum Flag : uint32_t {
  kWrite = 1,
  kReadOnly = 2,
  kDenyOom = 4,
  kNoAuthNeeded = 8,  // runs before AUTH (AUTH, HELLO, QUIT)
  kFast = 16,
  kAdmin = 32,
  kNoQueue = 64,  // runs at once between MULTI and EXEC (EXEC, DISCARD, MULTI, WATCH, QUIT)
  kNoMulti = 128,  // refused between MULTI and EXEC (SAVE), which then fails
  // May ask for a routed decision (a cluster's owner decides it), and may run
  // in two passes (ephpm/route_deferral.h): its handler does nothing with a
  // side effect before its one routed call, and reads the time only through
  // Store::NowMs.
  kRoutable = 256,
  // Routable, and its handler's one routed call is the only thing it does
  // besides argument checks (no local write, no read of another key, no
  // second call) in every form: it may join a chain of decisions in
  // flight, and when it cannot, running it again later is exact.  (Not
  // SET and its kin: a plain SET is written here and replicated, so it
  // would take effect before the decisions in flight.)
  kChainable = 512,
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

// The table, by lowercase name ("container|sub" for subcommands), and in the
// order COMMAND lists it.
const absl::flat_hash_map<std::string, const Command*>& Table();
const std::vector<const Command*>& AllCommands();
// CLIENT, COMMAND, OBJECT, MEMORY, ...: their first argument names a
// subcommand.
bool IsContainer(std::string_view lower_name);
// The table's entry for a request whose lowercase name is `name`: a
// container's subcommand for one (null with *unknown_sub when that
// subcommand is unknown); null for a name not in the table ("container|sub"
// names the table's own entries, never a request's).
const Command* FindCommand(const std::string& name, const Args& argv, bool* unknown_sub);
// FindCommand for argv (non-empty) as it came.
const Command* LookupRequest(const Args& argv);
// In a cluster, a command's keys must have one owner (Redis Cluster's rule
// for slots): what the command decides is then decided in one place.
bool KeysShareOwner(const Ctx& c);
// Where the request argv names keys, as Redis 7.0's COMMAND GETKEYS finds
// them: the table's positions, the keys a numkeys argument counts (and the
// destination before it), SORT's key and its last STORE.  False when it
// names none (for a numkeys command: a numkeys that is not between 1 and
// the arguments after it).
bool KeyPositions(const Command& cmd, const Args& argv, std::vector<size_t>* positions);
// Whether the command has key arguments at all (COMMAND GETKEYS's check).
bool HasKeys(const Command& cmd);
// Where a command's numkeys argument is (EVAL, ZUNIONSTORE, LMPOP, ...), or
// 0 for a command without one.
size_t NumkeysIndex(std::string_view name);

// ---- helpers every family uses (command_table.cc) -------------------------------

std::string Lower(std::string_view s);
// printf("%.*s") semantics: a C string stops at its first NUL.
std::string_view CStr(std::string_view s, size_t max);
// Whether the request argument `arg` is the keyword `name`, ignoring case.
// Redis compares option keywords with strcasecmp, which ends at a NUL: an
// argument "NX\0junk" is the option NX.
bool IEq(std::string_view arg, std::string_view name);
void ArityError(Ctx& c);
void Ok(Ctx& c);
// Replies the error for a store status other than kOk; false for kOk.
bool Failed(Ctx& c, Status st);
// kMisconfAof with the store's current write error.
std::string MisconfError(const Store& store);
bool ParseLL(std::string_view s, int64_t* out);
// A SCAN/HSCAN cursor as Redis 7.0's parseScanCursorOrReply reads it.
bool ParseCursor(const std::string& s, uint64_t* out);
std::string ExpireTimeError(Ctx& c);
// HRANDFIELD's and ZRANDMEMBER's "count [WITHVALUES|WITHSCORES]" from
// argv[2], as Redis 7.0 checks it (before the key is looked up): the count
// in -LONG_MAX..LONG_MAX, the option by name, and with it a count within
// half that range.  False after replying.
bool ParseRandCount(Ctx& c, std::string_view option, int64_t* count, bool* with);
// A HELP subcommand's reply: the lines as an array of simple strings.
template <size_t N>
void HelpReply(Ctx& c, const char* const (&lines)[N]) {
  c.w.ArrayHeader(N);
  for (const char* l : lines) c.w.SimpleString(l);
}

// cmd_sort.cc: whether a SORT (SORT_RO with readonly) request's BY or GET
// look keys up, for EXEC's and scripts' sections: then it needs every shard
// of its database (its own keys are KeyPositions').  A request SORT refuses
// unread looks nothing up.
bool SortNamesKeyspace(const Args& argv, bool readonly);

// cmd_string.cc: the type of a live key, without reading its value; nullopt
// when missing.
std::optional<ValueType> TypeOf(Ctx& c, const std::string& key);
// cmd_keyspace.cc: SCAN/HSCAN options, as Redis 7.0's scanGenericCommand reads
// them (the last MATCH wins; TYPE only for SCAN).  *pattern is unset without
// MATCH.  Returns false after replying an error.
bool ParseScanOptions(Ctx& c, size_t start, bool allow_type, std::optional<std::string>* pattern,
                      size_t* count, std::optional<std::string>* type);

// ---- the handlers, by family -----------------------------------------------------

// cmd_connection.cc
void CmdPing(Ctx& c);
void CmdEcho(Ctx& c);
void CmdQuit(Ctx& c);
void CmdReset(Ctx& c);
void CmdSelect(Ctx& c);
void CmdAuth(Ctx& c);
void CmdHello(Ctx& c);
void CmdClientId(Ctx& c);
void CmdClientGetName(Ctx& c);
void CmdClientSetName(Ctx& c);
void CmdClientInfo(Ctx& c);
void CmdClientUnblock(Ctx& c);
void CmdClientList(Ctx& c);
void CmdClientHelp(Ctx& c);

// cmd_server.cc
void CmdCommand(Ctx& c);
void CmdCommandCount(Ctx& c);
void CmdCommandInfo(Ctx& c);
void CmdCommandDocs(Ctx& c);
void CmdCommandList(Ctx& c);
void CmdCommandGetKeys(Ctx& c);
void CmdCommandHelp(Ctx& c);
void CmdInfo(Ctx& c);
void CmdDbSize(Ctx& c);
void CmdFlush(Ctx& c);
void CmdTime(Ctx& c);
void CmdSave(Ctx& c);
void CmdBgSave(Ctx& c);
void CmdBgRewriteAof(Ctx& c);
void CmdLastSave(Ctx& c);

// cmd_multi.cc
void CmdMulti(Ctx& c);
void CmdExec(Ctx& c);
void CmdDiscard(Ctx& c);
void CmdWatch(Ctx& c);
void CmdUnwatch(Ctx& c);

// cmd_string.cc
void CmdGet(Ctx& c);
void CmdSet(Ctx& c);
void CmdSetNx(Ctx& c);
void CmdSetEx(Ctx& c);
void CmdPSetEx(Ctx& c);
void CmdGetSet(Ctx& c);
void CmdGetDel(Ctx& c);
void CmdGetEx(Ctx& c);
void CmdMGet(Ctx& c);
void CmdMSet(Ctx& c);
void CmdMSetNx(Ctx& c);
void CmdAppend(Ctx& c);
void CmdStrLen(Ctx& c);
void CmdSetRange(Ctx& c);
void CmdGetRange(Ctx& c);
void CmdSetBit(Ctx& c);
void CmdGetBit(Ctx& c);
void CmdBitCount(Ctx& c);
void CmdBitPos(Ctx& c);
void CmdBitOp(Ctx& c);
void CmdBitField(Ctx& c);
void CmdBitFieldRo(Ctx& c);
void CmdLcs(Ctx& c);

// cmd_sort.cc
void CmdSort(Ctx& c);
void CmdSortRo(Ctx& c);
void CmdIncr(Ctx& c);
void CmdDecr(Ctx& c);
void CmdIncrBy(Ctx& c);
void CmdDecrBy(Ctx& c);
void CmdIncrByFloat(Ctx& c);
void CmdDelIfEq(Ctx& c);
void CmdDelEx(Ctx& c);
void CmdDigest(Ctx& c);
void CmdLockFence(Ctx& c);

// cmd_keyspace.cc
void CmdDel(Ctx& c);
void CmdExists(Ctx& c);
void CmdTouch(Ctx& c);
void CmdType(Ctx& c);
void CmdMove(Ctx& c);
void CmdSwapDb(Ctx& c);
void CmdCopy(Ctx& c);
void CmdObjectEncoding(Ctx& c);
void CmdObjectRefcount(Ctx& c);
void CmdObjectIdletime(Ctx& c);
void CmdObjectFreq(Ctx& c);
void CmdObjectHelp(Ctx& c);
void CmdMemoryUsage(Ctx& c);
void CmdMemoryHelp(Ctx& c);
// cmd_config.cc
void CmdConfigGet(Ctx& c);
void CmdConfigSet(Ctx& c);
void CmdConfigResetStat(Ctx& c);
void CmdConfigRewrite(Ctx& c);
void CmdConfigHelp(Ctx& c);
void CmdFunctionFlush(Ctx& c);
void CmdFunctionList(Ctx& c);
void CmdFunctionDelete(Ctx& c);
void CmdFunctionUnsupported(Ctx& c);
void CmdRename(Ctx& c);
void CmdRenameNx(Ctx& c);
void CmdKeys(Ctx& c);
void CmdScan(Ctx& c);
void CmdRandomKey(Ctx& c);
void CmdExpire(Ctx& c);
void CmdPExpire(Ctx& c);
void CmdExpireAt(Ctx& c);
void CmdPExpireAt(Ctx& c);
void CmdExpireTime(Ctx& c);
void CmdPExpireTime(Ctx& c);
void CmdTtl(Ctx& c);
void CmdPTtl(Ctx& c);
void CmdPersist(Ctx& c);

// cmd_hash.cc
void CmdHSet(Ctx& c);
void CmdHMSet(Ctx& c);
void CmdHSetNx(Ctx& c);
void CmdHGet(Ctx& c);
void CmdHMGet(Ctx& c);
void CmdHDel(Ctx& c);
void CmdHGetAll(Ctx& c);
void CmdHKeys(Ctx& c);
void CmdHVals(Ctx& c);
void CmdHLen(Ctx& c);
void CmdHRandField(Ctx& c);
void CmdHExists(Ctx& c);
void CmdHStrLen(Ctx& c);
void CmdHIncrBy(Ctx& c);
void CmdHIncrByFloat(Ctx& c);
void CmdHScan(Ctx& c);

// cmd_script.cc
void CmdEval(Ctx& c);
void CmdEvalSha(Ctx& c);
void CmdEvalRo(Ctx& c);
void CmdEvalShaRo(Ctx& c);
void CmdScriptLoad(Ctx& c);
void CmdScriptExists(Ctx& c);
void CmdScriptFlush(Ctx& c);
void CmdScriptKill(Ctx& c);
void CmdScriptHelp(Ctx& c);

// cmd_zset.cc
void CmdZAdd(Ctx& c);
void CmdZIncrBy(Ctx& c);
void CmdZRem(Ctx& c);
void CmdZScore(Ctx& c);
void CmdZMScore(Ctx& c);
void CmdZCard(Ctx& c);
void CmdZCount(Ctx& c);
void CmdZLexCount(Ctx& c);
void CmdZRange(Ctx& c);
void CmdZRevRange(Ctx& c);
void CmdZRangeByScore(Ctx& c);
void CmdZRevRangeByScore(Ctx& c);
void CmdZRangeByLex(Ctx& c);
void CmdZRevRangeByLex(Ctx& c);
void CmdZRank(Ctx& c);
void CmdZRevRank(Ctx& c);
void CmdZRemRangeByRank(Ctx& c);
void CmdZRemRangeByScore(Ctx& c);
void CmdZRemRangeByLex(Ctx& c);
void CmdZPopMin(Ctx& c);
void CmdZPopMax(Ctx& c);
void CmdZRandMember(Ctx& c);
void CmdZScan(Ctx& c);
void CmdZUnionStore(Ctx& c);
void CmdZInterStore(Ctx& c);
void CmdZDiffStore(Ctx& c);
void CmdZUnion(Ctx& c);
void CmdZInter(Ctx& c);
void CmdZDiff(Ctx& c);
void CmdZInterCard(Ctx& c);
void CmdZRangeStore(Ctx& c);
void CmdZMPop(Ctx& c);
void CmdBZMPop(Ctx& c);
void CmdBZPopMin(Ctx& c);
void CmdBZPopMax(Ctx& c);
void CmdLMPop(Ctx& c);
void CmdBLMPop(Ctx& c);
// cmd_set.cc
void CmdSAdd(Ctx& c);
void CmdSRem(Ctx& c);
void CmdSMembers(Ctx& c);
void CmdSIsMember(Ctx& c);
void CmdSMIsMember(Ctx& c);
void CmdSCard(Ctx& c);
void CmdSPop(Ctx& c);
void CmdSRandMember(Ctx& c);
void CmdSMove(Ctx& c);
void CmdSInter(Ctx& c);
void CmdSUnion(Ctx& c);
void CmdSDiff(Ctx& c);
void CmdSInterStore(Ctx& c);
void CmdSUnionStore(Ctx& c);
void CmdSDiffStore(Ctx& c);
void CmdSInterCard(Ctx& c);
void CmdSScan(Ctx& c);
// cmd_list.cc
void CmdLPush(Ctx& c);
void CmdRPush(Ctx& c);
void CmdLPushX(Ctx& c);
void CmdRPushX(Ctx& c);
void CmdLPop(Ctx& c);
void CmdRPop(Ctx& c);
void CmdLLen(Ctx& c);
void CmdLRange(Ctx& c);
void CmdLIndex(Ctx& c);
void CmdLSet(Ctx& c);
void CmdLRem(Ctx& c);
void CmdLTrim(Ctx& c);
void CmdLInsert(Ctx& c);
void CmdLPos(Ctx& c);
void CmdLMove(Ctx& c);
void CmdRPopLPush(Ctx& c);
// The blocking ones leave their request in ClientState::blocked (blocking.h).
void CmdBLPop(Ctx& c);
void CmdBRPop(Ctx& c);
void CmdBLMove(Ctx& c);
void CmdBRPopLPush(Ctx& c);

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_COMMAND_TABLE_H_
