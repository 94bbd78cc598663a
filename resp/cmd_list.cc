// List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE,
// LINDEX, LSET, LREM, LTRIM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the
// blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP (see blocking.h).

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocking.h"
#include "command_table.h"
#include "ephpm/number_text.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

constexpr std::string_view kNotPositive = "ERR value is out of range, must be positive";

void PushGeneric(Ctx& c, bool left, bool only_if_exists) {
  std::vector<std::string_view> elements(c.argv.begin() + 2, c.argv.end());
  int64_t length = 0;
  if (Failed(c, c.store->ListPush(c.argv[1], elements, left, only_if_exists, &length))) return;
  c.w.Integer(length);
}

void PopGeneric(Ctx& c, bool left) {
  if (c.argv.size() > 3) return ArityError(c);
  const bool with_count = c.argv.size() == 3;
  size_t count = 1;
  if (with_count) {
    int64_t n = 0;
    if (!ParseLL(c.argv[2], &n) || n < 0) return c.w.Error(kNotPositive);
    count = static_cast<size_t>(n);
  }
  std::vector<std::string> out;
  const Status st = c.store->ListPop(c.argv[1], left, count, &out);
  if (Failed(c, st)) return;
  if (!with_count) {
    if (out.empty()) return c.w.NullBulk();
    return c.w.Bulk(out[0]);
  }
  if (out.empty() && count != 0) return c.w.NullArray();  // a missing key
  if (out.empty()) {
    // COUNT 0: an empty array for a list, nil for a missing key.
    int64_t len = 0;
    if (Failed(c, c.store->ListLen(c.argv[1], &len))) return;
    if (len == 0) return c.w.NullArray();
  }
  c.w.ArrayHeader(out.size());
  for (const auto& v : out) c.w.Bulk(v);
}

// LEFT or RIGHT, as Redis's getListPositionFromObjectOrReply.
bool ParseEnd(Ctx& c, const std::string& arg, bool* left) {
  if (IEq(arg, "left")) {
    *left = true;
  } else if (IEq(arg, "right")) {
    *left = false;
  } else {
    c.w.Error(kSyntaxErr);
    return false;
  }
  return true;
}

void MoveGeneric(Ctx& c, bool from_left, bool to_left) {
  std::string moved;
  const Status st = c.store->ListMove(c.argv[1], c.argv[2], from_left, to_left, &moved);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(moved);
}

}  // namespace

// ParseTimeout and Block are shared with the blocking sorted set commands
// (cmd_zset.cc), declared in blocking.h.
// A blocking command's timeout in seconds (a float), as Redis 7.0's
// getTimeoutFromObjectOrReply reads it: milliseconds rounded up (so that
// 0.0001 waits 1 ms, and -0.0001 is 0: forever), converted as Redis's x86
// build converts, which makes what does not fit an int64 negative.
bool ParseTimeout(Ctx& c, const std::string& arg, int64_t* timeout_ms) {
  long double seconds = 0;
  if (!ParseLongDouble(arg, &seconds)) {
    c.w.Error("ERR timeout is not a float or out of range");
    return false;
  }
  const long double ms = std::ceil(seconds * 1000.0L);
  // The conversion Redis does, (long long)ms, gives INT64_MIN on x86 for
  // what is out of range: a negative timeout.
  if (!(ms < 9223372036854775808.0L) || !(ms > -9223372036854775809.0L)) {
    c.w.Error("ERR timeout is negative");
    return false;
  }
  const int64_t t = static_cast<int64_t>(ms);
  if (t < 0) {
    c.w.Error("ERR timeout is negative");
    return false;
  }
  *timeout_ms = t;
  return true;
}

// Inside EXEC a blocking command does not block (Redis): one attempt, and
// a null reply when there is nothing to pop.  Else the request goes
// to the server, which serves it or suspends the client.
void Block(Ctx& c, std::shared_ptr<BlockedPop> b) {
  b->db = c.client->db;
  if (!c.client->in_exec) {
    c.client->blocked = std::move(b);
    return;
  }
  std::string reply;
  if (TryServe(c.store, *b, false, &reply)) return c.w.Raw(reply);
  // Redis 7.0 answers a move that cannot block with a null bulk, a pop with
  // a null array (as on a timeout).
  if (b->move) return c.w.NullBulk();
  c.w.Raw(kBlockTimedOut);
}

namespace {

void BlockingPop(Ctx& c, bool left) {
  int64_t timeout_ms = 0;
  if (!ParseTimeout(c, c.argv.back(), &timeout_ms)) return;
  auto b = std::make_shared<BlockedPop>();
  b->keys.assign(c.argv.begin() + 1, c.argv.end() - 1);
  b->from_left = left;
  b->timeout_ms = timeout_ms;
  Block(c, std::move(b));
}

void BlockingMove(Ctx& c, bool from_left, bool to_left, const std::string& timeout) {
  int64_t timeout_ms = 0;
  if (!ParseTimeout(c, timeout, &timeout_ms)) return;
  auto b = std::make_shared<BlockedPop>();
  b->move = true;
  b->keys.push_back(c.argv[1]);
  b->dst = c.argv[2];
  b->from_left = from_left;
  b->to_left = to_left;
  b->timeout_ms = timeout_ms;
  Block(c, std::move(b));
}

}  // namespace

void CmdLPush(Ctx& c) { PushGeneric(c, true, false); }
void CmdRPush(Ctx& c) { PushGeneric(c, false, false); }
void CmdLPushX(Ctx& c) { PushGeneric(c, true, true); }
void CmdRPushX(Ctx& c) { PushGeneric(c, false, true); }
void CmdLPop(Ctx& c) { PopGeneric(c, true); }
void CmdRPop(Ctx& c) { PopGeneric(c, false); }

void CmdLLen(Ctx& c) {
  int64_t len = 0;
  if (Failed(c, c.store->ListLen(c.argv[1], &len))) return;
  c.w.Integer(len);
}

void CmdLRange(Ctx& c) {
  int64_t start = 0, stop = 0;
  if (!ParseLL(c.argv[2], &start) || !ParseLL(c.argv[3], &stop)) return c.w.Error(kNotInteger);
  std::vector<std::string> out;
  if (Failed(c, c.store->ListRange(c.argv[1], start, stop, &out))) return;
  c.w.ArrayHeader(out.size());
  for (const auto& v : out) c.w.Bulk(v);
}

// LINDEX and LSET look at the key before they parse the index: a missing
// key or one of another type answers first.  False after replying.
bool IndexOfListKey(Ctx& c, int64_t* index, std::string_view missing) {
  if (ParseLL(c.argv[2], index)) return true;
  const std::optional<ValueType> t = TypeOf(c, c.argv[1]);
  if (!t) {
    c.w.Raw(missing);
  } else if (*t != ValueType::kList) {
    c.w.Error(kWrongType);
  } else {
    c.w.Error(kNotInteger);
  }
  return false;
}

void CmdLIndex(Ctx& c) {
  int64_t index = 0;
  if (!IndexOfListKey(c, &index, "$-1\r\n")) return;
  std::string v;
  const Status st = c.store->ListIndex(c.argv[1], index, &v);
  if (Failed(c, st)) return;  // kNotFound: nil
  c.w.Bulk(v);
}

void CmdLSet(Ctx& c) {
  int64_t index = 0;
  if (!IndexOfListKey(c, &index, "-ERR no such key\r\n")) return;
  bool in_range = false;
  const Status st = c.store->ListSet(c.argv[1], index, c.argv[3], &in_range);
  if (st == Status::kNotFound) return c.w.Error(kNoKey);
  if (Failed(c, st)) return;
  if (!in_range) return c.w.Error("ERR index out of range");
  Ok(c);
}

void CmdLRem(Ctx& c) {
  int64_t count = 0;
  if (!ParseLL(c.argv[2], &count)) return c.w.Error(kNotInteger);
  int64_t removed = 0;
  if (Failed(c, c.store->ListRem(c.argv[1], count, c.argv[3], &removed))) return;
  c.w.Integer(removed);
}

void CmdLTrim(Ctx& c) {
  int64_t start = 0, stop = 0;
  if (!ParseLL(c.argv[2], &start) || !ParseLL(c.argv[3], &stop)) return c.w.Error(kNotInteger);
  if (Failed(c, c.store->ListTrim(c.argv[1], start, stop))) return;
  Ok(c);
}

void CmdLInsert(Ctx& c) {
  bool before = false;
  if (IEq(c.argv[2], "before")) {
    before = true;
  } else if (!IEq(c.argv[2], "after")) {
    return c.w.Error(kSyntaxErr);
  }
  int64_t length = 0;
  if (Failed(c, c.store->ListInsert(c.argv[1], before, c.argv[3], c.argv[4], &length))) return;
  c.w.Integer(length);
}

void CmdLPos(Ctx& c) {
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < c.argv.size(); i += 2) {
    const std::string& opt = c.argv[i];
    const bool more = i + 1 < c.argv.size();
    if (!more) return c.w.Error(kSyntaxErr);
    const std::string& val = c.argv[i + 1];
    if (IEq(opt, "rank")) {
      if (!ParseLL(val, &rank)) return c.w.Error(kNotInteger);
      if (rank == 0) {
        return c.w.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      }
    } else if (IEq(opt, "count")) {
      // Redis's message for a count that does not parse too.
      if (!ParseLL(val, &count) || count < 0) return c.w.Error("ERR COUNT can't be negative");
    } else if (IEq(opt, "maxlen")) {
      if (!ParseLL(val, &maxlen) || maxlen < 0) {
        return c.w.Error("ERR MAXLEN can't be negative");
      }
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  const bool with_count = count >= 0;
  // Redis negates the rank: INT64_MIN stays itself, which then takes every
  // match from the tail, as -1 does.
  if (rank == std::numeric_limits<int64_t>::min()) rank = -1;
  std::vector<int64_t> positions;
  if (Failed(c, c.store->ListPos(c.argv[1], c.argv[2], rank, with_count ? count : 1, maxlen,
                                 &positions))) {
    return;
  }
  if (!with_count) {
    if (positions.empty()) return c.w.NullBulk();
    return c.w.Integer(positions[0]);
  }
  c.w.ArrayHeader(positions.size());
  for (int64_t p : positions) c.w.Integer(p);
}

void CmdLMove(Ctx& c) {
  bool from_left = true, to_left = true;
  if (!ParseEnd(c, c.argv[3], &from_left) || !ParseEnd(c, c.argv[4], &to_left)) return;
  MoveGeneric(c, from_left, to_left);
}

void CmdRPopLPush(Ctx& c) { MoveGeneric(c, false, true); }

void CmdBLPop(Ctx& c) { BlockingPop(c, true); }
void CmdBRPop(Ctx& c) { BlockingPop(c, false); }

void CmdBLMove(Ctx& c) {
  bool from_left = true, to_left = true;
  if (!ParseEnd(c, c.argv[3], &from_left) || !ParseEnd(c, c.argv[4], &to_left)) return;
  BlockingMove(c, from_left, to_left, c.argv[5]);
}

void CmdBRPopLPush(Ctx& c) { BlockingMove(c, false, true, c.argv[3]); }

void CmdLMPop(Ctx& c) {
  BlockedPop b;
  b.multi = true;
  bool right = false;
  if (!ParseMPop(c, 1, "left", "right", &b.keys, &right, &b.count)) return;
  b.from_left = !right;
  std::string reply;
  if (TryServe(c.store, b, false, &reply)) return c.w.Raw(reply);
  c.w.Raw(kBlockTimedOut);  // nothing to pop: a null array
}

void CmdBLMPop(Ctx& c) {
  auto b = std::make_shared<BlockedPop>();
  b->multi = true;
  bool right = false;
  if (!ParseMPop(c, 2, "left", "right", &b->keys, &right, &b->count)) return;
  b->from_left = !right;
  if (!ParseTimeout(c, c.argv[1], &b->timeout_ms)) return;
  Block(c, std::move(b));
}

}  // namespace cmd

bool TryServe(Store* store, const BlockedPop& b, bool waiting, std::string* reply) {
  if (b.zset) return TryServeZSet(store, b, waiting, reply);
  reply->clear();
  ReplyWriter w(reply);
  cmd::Args none;
  cmd::Ctx c{store, nullptr, nullptr, nullptr, w, none, nullptr};
  if (b.move) {
    std::string moved;
    const Status st = store->ListMove(b.keys[0], b.dst, b.from_left, b.to_left, &moved);
    if (st == Status::kNotFound) return false;
    if (waiting && st == Status::kWrongType) {
      // A source of another type is not ready: wait on.  A list source with
      // a destination of another type: Redis answers WRONGTYPE (and pops
      // nothing).
      int64_t len = 0;
      if (store->ListLen(b.keys[0], &len) != Status::kOk || len == 0) return false;
    }
    if (cmd::Failed(c, st)) return true;
    w.Bulk(moved);
    return true;
  }
  for (const std::string& key : b.keys) {
    std::vector<std::string> out;
    const size_t count = b.multi ? static_cast<size_t>(b.count) : 1;
    const Status st = store->ListPop(key, b.from_left, count, &out);
    if (waiting && st == Status::kWrongType) continue;
    if (cmd::Failed(c, st)) return true;
    if (out.empty()) continue;
    w.ArrayHeader(2);
    w.Bulk(key);
    if (!b.multi) {
      w.Bulk(out[0]);
      return true;
    }
    w.ArrayHeader(out.size());  // LMPOP, BLMPOP: [key, [elements]]
    for (const std::string& e : out) w.Bulk(e);
    return true;
  }
  return false;
}

}  // namespace resp
}  // namespace ephpm
