// Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP,
// SRANDMEMBER, SMOVE, SINTER, SUNION, SDIFF, their STORE forms, SINTERCARD
// and SSCAN.

#include "command_table.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/glob.h"
#include "ephpm/replicator.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

// The arguments from `from` on.
std::vector<std::string_view> Views(const Args& argv, size_t from, size_t to) {
  return std::vector<std::string_view>(argv.begin() + static_cast<ptrdiff_t>(from),
                                       argv.begin() + static_cast<ptrdiff_t>(to));
}

void Members(Ctx& c, const std::vector<std::string>& members) {
  c.w.ArrayHeader(members.size());
  for (const std::string& m : members) c.w.Bulk(m);
}

}  // namespace

void CmdSAdd(Ctx& c) {
  int64_t added = 0;
  if (Failed(c, c.store->SAdd(c.argv[1], Views(c.argv, 2, c.argv.size()), &added))) return;
  c.w.Integer(added);
}

void CmdSRem(Ctx& c) {
  int64_t removed = 0;
  if (Failed(c, c.store->SRem(c.argv[1], Views(c.argv, 2, c.argv.size()), &removed))) return;
  c.w.Integer(removed);
}

void CmdSMembers(Ctx& c) {
  std::vector<std::string> members;
  if (Failed(c, c.store->SMembers(c.argv[1], &members))) return;
  Members(c, members);
}

void CmdSIsMember(Ctx& c) {
  bool is = false;
  if (Failed(c, c.store->SIsMember(c.argv[1], c.argv[2], &is))) return;
  c.w.Integer(is ? 1 : 0);
}

void CmdSMIsMember(Ctx& c) {
  std::vector<bool> is;
  if (Failed(c, c.store->SMIsMember(c.argv[1], Views(c.argv, 2, c.argv.size()), &is))) return;
  c.w.ArrayHeader(is.size());
  for (bool b : is) c.w.Integer(b ? 1 : 0);
}

void CmdSCard(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->SCard(c.argv[1], &n))) return;
  c.w.Integer(n);
}

void CmdSPop(Ctx& c) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  std::vector<std::string> popped;
  if (c.argv.size() == 2) {  // one member, or nil
    if (Failed(c, c.store->SPop(c.argv[1], 1, &popped))) return;
    if (popped.empty()) return c.w.NullBulk();
    return c.w.Bulk(popped[0]);
  }
  int64_t count = 0;
  if (!ParseLL(c.argv[2], &count) || count < 0) {
    return c.w.Error("ERR value is out of range, must be positive");
  }
  if (Failed(c, c.store->SPop(c.argv[1], static_cast<uint64_t>(count), &popped))) return;
  Members(c, popped);
}

void CmdSRandMember(Ctx& c) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  std::vector<std::string> out;
  if (c.argv.size() == 2) {  // one member, or nil
    if (Failed(c, c.store->SRandMember(c.argv[1], 1, &out))) return;
    if (out.empty()) return c.w.NullBulk();
    return c.w.Bulk(out[0]);
  }
  int64_t count = 0;
  if (!ParseLL(c.argv[2], &count)) return c.w.Error(kNotInteger);
  if (count == INT64_MIN) {
    return c.w.Error(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  }
  if (Failed(c, c.store->SRandMember(c.argv[1], count, &out))) return;
  Members(c, out);
}

void CmdSMove(Ctx& c) {
  bool moved = false;
  if (Failed(c, c.store->SMove(c.argv[1], c.argv[2], c.argv[3], &moved))) return;
  c.w.Integer(moved ? 1 : 0);
}

namespace {

void Combine(Ctx& c, Store::SetOp op) {
  std::vector<std::string> out;
  if (Failed(c, c.store->SCombine(op, Views(c.argv, 1, c.argv.size()), &out))) return;
  Members(c, out);
}

void CombineStore(Ctx& c, Store::SetOp op) {
  int64_t size = 0;
  if (Failed(c, c.store->SCombineStore(op, c.argv[1], Views(c.argv, 2, c.argv.size()), &size))) {
    return;
  }
  c.w.Integer(size);
}

}  // namespace

void CmdSInter(Ctx& c) { Combine(c, Store::SetOp::kInter); }
void CmdSUnion(Ctx& c) { Combine(c, Store::SetOp::kUnion); }
void CmdSDiff(Ctx& c) { Combine(c, Store::SetOp::kDiff); }
void CmdSInterStore(Ctx& c) { CombineStore(c, Store::SetOp::kInter); }
void CmdSUnionStore(Ctx& c) { CombineStore(c, Store::SetOp::kUnion); }
void CmdSDiffStore(Ctx& c) { CombineStore(c, Store::SetOp::kDiff); }

void CmdSInterCard(Ctx& c) {
  // SINTERCARD numkeys key [key ...] [LIMIT limit], read as Redis 7.0 does.
  int64_t numkeys = 0;
  if (!ParseLL(c.argv[1], &numkeys) || numkeys <= 0) {
    return c.w.Error("ERR numkeys should be greater than 0");
  }
  if (static_cast<uint64_t>(numkeys) > c.argv.size() - 2) {
    return c.w.Error("ERR Number of keys can't be greater than number of args");
  }
  const size_t keys_end = 2 + static_cast<size_t>(numkeys);
  uint64_t limit = 0;
  for (size_t i = keys_end; i < c.argv.size(); i += 2) {
    if (!IEq(c.argv[i], "LIMIT") || i + 1 >= c.argv.size()) return c.w.Error(kSyntaxErr);
    int64_t l = 0;
    if (!ParseLL(c.argv[i + 1], &l) || l < 0) return c.w.Error("ERR LIMIT can't be negative");
    limit = static_cast<uint64_t>(l);  // the last LIMIT wins
  }
  const std::vector<std::string_view> keys = Views(c.argv, 2, keys_end);
  int64_t n = 0;
  if (Failed(c, c.store->SInterCard(keys, limit, &n))) return;
  c.w.Integer(n);
}

void CmdSScan(Ctx& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.argv[2], &cursor)) return c.w.Error("ERR invalid cursor");
  // Redis looks the key up before it reads the options: a missing key is an
  // empty scan, and another type a WRONGTYPE, whatever the options say.
  int64_t card = 0;
  if (Failed(c, c.store->SCard(c.argv[1], &card))) return;
  std::optional<std::string> pattern;
  size_t count = 10;
  std::optional<std::string> type;
  if (card > 0 && !ParseScanOptions(c, 3, false, &pattern, &count, &type)) return;
  std::vector<std::string> members;
  uint64_t next = 0;
  if (card > 0 && Failed(c, c.store->SScan(c.argv[1], cursor, count, &members, &next))) return;
  auto selected = [&](const std::string& m) {
    if (!pattern) return true;
    if (m.empty()) return pattern->empty();
    return GlobMatch(*pattern, m);
  };
  size_t n = 0;
  for (const std::string& m : members) n += selected(m) ? 1 : 0;
  c.w.ArrayHeader(2);
  c.w.Bulk(std::to_string(next));
  c.w.ArrayHeader(n);
  for (const std::string& m : members) {
    if (selected(m)) c.w.Bulk(m);
  }
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
