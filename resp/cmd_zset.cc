// Sorted set commands: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT,
// ZLEXCOUNT, the ZRANGE family, ZRANK, ZREVRANK, ZREMRANGEBY*, ZPOPMIN,
// ZPOPMAX, ZRANDMEMBER, ZSCAN, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE.  Parsing
// and error precedence follow Redis 7.0's t_zset.c.

#include "command_table.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blocking.h"
#include "ephpm/glob.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

using ZRangeSpec = Store::ZRangeSpec;
using ZLexBound = Store::ZLexBound;

constexpr std::string_view kNotFloatRange = "ERR min or max is not a float";
constexpr std::string_view kNotLexRange = "ERR min or max not valid string range item";
constexpr std::string_view kNanScore = "ERR resulting score is not a number (NaN)";
constexpr std::string_view kNotPositive = "ERR value is out of range, must be positive";

// A score as Redis's getDoubleFromObject reads one: strtod over the whole
// argument (so it ends at a NUL), no leading space, no overflow or
// underflow to zero, no NaN.
bool ParseScore(const std::string& s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  // The common case first: an integer of at most 15 digits is exact in a
  // double, so it is what strtod would give without strtod's cost (a
  // twelfth of a ZADD's instructions in a callgrind profile).  "-0" stays
  // -0 as strtod has it.
  {
    const bool minus = s[0] == '-';
    const size_t digits = s.size() - (minus ? 1 : 0);
    if (digits >= 1 && digits <= 15) {
      int64_t v = 0;
      size_t i = minus ? 1 : 0;
      for (; i < s.size(); ++i) {
        const unsigned d = static_cast<unsigned char>(s[i]) - static_cast<unsigned>('0');
        if (d > 9) break;
        v = v * 10 + d;
      }
      if (i == s.size()) {
        const double d = static_cast<double>(v);
        *out = minus ? -d : d;
        return true;
      }
    }
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (static_cast<size_t>(end - s.c_str()) != s.size()) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  if (std::isnan(v)) return false;
  *out = v;
  return true;
}

// A bound of a score range, as Redis's zslParseRange: "(" makes it
// exclusive; strtod must stop at the end of the C string (an empty text is
// 0); NaN is refused.
bool ParseScoreBound(const std::string& s, double* out, bool* exclusive) {
  const char* p = s.c_str();
  *exclusive = p[0] == '(';
  if (*exclusive) ++p;
  char* end = nullptr;
  const double v = std::strtod(p, &end);
  if (*end != '\0' || std::isnan(v)) return false;
  *out = v;
  return true;
}

// A bound of a lex range, as Redis's zslParseLexRangeItem: "-", "+" (the
// C string ends there), "[value" or "(value".
bool ParseLexBound(const std::string& s, ZLexBound* out) {
  const char* p = s.c_str();
  switch (p[0]) {
    case '+':
      if (p[1] != '\0') return false;
      out->kind = ZLexBound::Kind::kPlusInf;
      return true;
    case '-':
      if (p[1] != '\0') return false;
      out->kind = ZLexBound::Kind::kMinusInf;
      return true;
    case '(':
    case '[':
      out->kind = p[0] == '(' ? ZLexBound::Kind::kExclusive : ZLexBound::Kind::kInclusive;
      out->value = s.substr(1);
      return true;
    default:
      return false;
  }
}

// A score as Redis 7.0 replies it (RESP2): %.17g, "inf" and "-inf".
std::string FormatScore(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string(buf, static_cast<size_t>(n));
}

void ReplyMembers(Ctx& c, const Store::ZMembers& members, bool withscores) {
  c.w.ArrayHeader(withscores ? members.size() * 2 : members.size());
  for (const auto& [m, score] : members) {
    c.w.Bulk(m);
    if (withscores) c.w.Bulk(FormatScore(score));
  }
}

// ZADD and ZINCRBY (which is ZADD with INCR, options parsed the same way).
void ZAddGeneric(Ctx& c, unsigned flags) {
  size_t idx = 2;
  for (; idx < c.argv.size(); ++idx) {
    const std::string& o = c.argv[idx];
    if (IEq(o, "nx")) {
      flags |= Store::kZAddNx;
    } else if (IEq(o, "xx")) {
      flags |= Store::kZAddXx;
    } else if (IEq(o, "ch")) {
      flags |= Store::kZAddCh;
    } else if (IEq(o, "incr")) {
      flags |= Store::kZAddIncr;
    } else if (IEq(o, "gt")) {
      flags |= Store::kZAddGt;
    } else if (IEq(o, "lt")) {
      flags |= Store::kZAddLt;
    } else {
      break;
    }
  }
  const size_t elements = c.argv.size() - idx;
  if (elements == 0 || elements % 2 != 0) return c.w.Error(kSyntaxErr);
  const bool nx = (flags & Store::kZAddNx) != 0, xx = (flags & Store::kZAddXx) != 0;
  const bool gt = (flags & Store::kZAddGt) != 0, lt = (flags & Store::kZAddLt) != 0;
  const bool incr = (flags & Store::kZAddIncr) != 0;
  if (nx && xx) return c.w.Error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return c.w.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && elements > 2) {
    return c.w.Error("ERR INCR option supports a single increment-element pair");
  }
  std::vector<std::pair<double, std::string_view>> pairs;
  pairs.reserve(elements / 2);
  for (size_t i = idx; i < c.argv.size(); i += 2) {
    double score = 0;
    if (!ParseScore(c.argv[i], &score)) return c.w.Error(kNotFloat);
    pairs.emplace_back(score, c.argv[i + 1]);
  }
  int64_t count = 0;
  std::optional<double> score;
  const Status st = c.store->ZAdd(c.argv[1], pairs, flags, &count, &score);
  if (st == Status::kNanOrInfinity) return c.w.Error(kNanScore);
  if (Failed(c, st)) return;
  if (!incr) return c.w.Integer(count);
  if (!score) return c.w.NullBulk();
  c.w.Bulk(FormatScore(*score));
}

// Redis 7.0's zrangeGenericCommand: the key at argv[1], the range at
// argv[2..3], then options.  `by` and `reverse` are fixed by the legacy
// commands; ZRANGE (auto_by, auto_dir) takes BYSCORE, BYLEX and REV.
// ZRANGESTORE (`store`) has its destination at argv[1], and everything
// else one further, and takes no WITHSCORES.
void ZRangeGeneric(Ctx& c, ZRangeSpec::By by, bool auto_by, bool reverse, bool auto_dir,
                   bool store = false) {
  const size_t src = store ? 2 : 1;
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  for (size_t j = src + 3; j < c.argv.size(); ++j) {
    const size_t left = c.argv.size() - j - 1;
    const std::string& o = c.argv[j];
    if (!store && IEq(o, "withscores")) {
      withscores = true;
    } else if (IEq(o, "limit") && left >= 2) {
      if (!ParseLL(c.argv[j + 1], &offset) || !ParseLL(c.argv[j + 2], &limit)) {
        return c.w.Error(kNotInteger);
      }
      j += 2;
    } else if (auto_dir && IEq(o, "rev")) {
      auto_dir = false;
      reverse = true;
    } else if (auto_by && IEq(o, "bylex")) {
      auto_by = false;
      by = ZRangeSpec::By::kLex;
    } else if (auto_by && IEq(o, "byscore")) {
      auto_by = false;
      by = ZRangeSpec::By::kScore;
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  if (limit != -1 && by == ZRangeSpec::By::kRank) {
    return c.w.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (withscores && by == ZRangeSpec::By::kLex) {
    return c.w.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  ZRangeSpec spec;
  spec.by = by;
  spec.reverse = reverse;
  spec.offset = offset;
  spec.count = limit;
  // By score or lex in reverse, the range is given as max, min.
  const bool swap = reverse && by != ZRangeSpec::By::kRank;
  const std::string& lo = c.argv[src + (swap ? 2 : 1)];
  const std::string& hi = c.argv[src + (swap ? 1 : 2)];
  switch (by) {
    case ZRangeSpec::By::kRank:
      if (!ParseLL(lo, &spec.start) || !ParseLL(hi, &spec.stop)) return c.w.Error(kNotInteger);
      break;
    case ZRangeSpec::By::kScore:
      if (!ParseScoreBound(lo, &spec.score.min, &spec.score.min_exclusive) ||
          !ParseScoreBound(hi, &spec.score.max, &spec.score.max_exclusive)) {
        return c.w.Error(kNotFloatRange);
      }
      break;
    case ZRangeSpec::By::kLex:
      if (!ParseLexBound(lo, &spec.lex_min) || !ParseLexBound(hi, &spec.lex_max)) {
        return c.w.Error(kNotLexRange);
      }
      break;
  }
  if (store) {
    // Both keys are at the table's key positions: the dispatcher checked
    // that they share an owner.
    int64_t size = 0;
    if (Failed(c, c.store->ZRangeStore(c.argv[1], c.argv[2], spec, &size))) return;
    return c.w.Integer(size);
  }
  Store::ZMembers members;
  if (Failed(c, c.store->ZRange(c.argv[1], spec, &members))) return;
  ReplyMembers(c, members, withscores);
}

// The range of ZCOUNT, ZLEXCOUNT and ZREMRANGEBY* at argv[2..3]; false
// after replying an error.
bool ParseRangeArgs(Ctx& c, ZRangeSpec::By by, ZRangeSpec* spec) {
  spec->by = by;
  switch (by) {
    case ZRangeSpec::By::kRank:
      if (!ParseLL(c.argv[2], &spec->start) || !ParseLL(c.argv[3], &spec->stop)) {
        c.w.Error(kNotInteger);
        return false;
      }
      return true;
    case ZRangeSpec::By::kScore:
      if (!ParseScoreBound(c.argv[2], &spec->score.min, &spec->score.min_exclusive) ||
          !ParseScoreBound(c.argv[3], &spec->score.max, &spec->score.max_exclusive)) {
        c.w.Error(kNotFloatRange);
        return false;
      }
      return true;
    case ZRangeSpec::By::kLex:
      if (!ParseLexBound(c.argv[2], &spec->lex_min) || !ParseLexBound(c.argv[3], &spec->lex_max)) {
        c.w.Error(kNotLexRange);
        return false;
      }
      return true;
  }
  return false;
}

void ZCountGeneric(Ctx& c, ZRangeSpec::By by) {
  ZRangeSpec spec;
  if (!ParseRangeArgs(c, by, &spec)) return;
  int64_t n = 0;
  if (Failed(c, c.store->ZCount(c.argv[1], spec, &n))) return;
  c.w.Integer(n);
}

void ZRemRangeGeneric(Ctx& c, ZRangeSpec::By by) {
  ZRangeSpec spec;
  if (!ParseRangeArgs(c, by, &spec)) return;
  int64_t n = 0;
  if (Failed(c, c.store->ZRemRange(c.argv[1], spec, &n))) return;
  c.w.Integer(n);
}

void ZRankGeneric(Ctx& c, bool reverse) {
  int64_t rank = 0;
  const Status st = c.store->ZRank(c.argv[1], c.argv[2], reverse, &rank);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Integer(rank);
}

void ZPopGeneric(Ctx& c, bool max) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  int64_t count = 1;
  if (c.argv.size() == 3) {
    if (!ParseLL(c.argv[2], &count) || count < 0) return c.w.Error(kNotPositive);
  }
  Store::ZMembers members;
  if (Failed(c, c.store->ZPop(c.argv[1], max, count, &members))) return;
  ReplyMembers(c, members, true);
}

// Redis 7.0's zunionInterDiffGenericCommand: ZUNIONSTORE, ZINTERSTORE and
// ZDIFFSTORE (`store`: the destination at argv[1], numkeys at argv[2]),
// ZUNION, ZINTER and ZDIFF (numkeys at argv[1], WITHSCORES allowed), and
// ZINTERCARD (`card`: LIMIT allowed, no WEIGHTS or AGGREGATE).
void ZSetOpGeneric(Ctx& c, Store::ZStoreOp op, bool store, bool card = false) {
  const size_t numkeys_at = store ? 2 : 1;
  int64_t numkeys = 0;
  if (!ParseLL(c.argv[numkeys_at], &numkeys)) return c.w.Error(kNotInteger);
  if (numkeys < 1) {
    return c.w.Error("ERR at least 1 input key is needed for '" + std::string(c.cmd->name) +
                     "' command");
  }
  const size_t first = numkeys_at + 1;
  if (numkeys > static_cast<int64_t>(c.argv.size() - first)) return c.w.Error(kSyntaxErr);
  const size_t n = static_cast<size_t>(numkeys);
  // (In a cluster the dispatcher checked that these keys, and the
  // destination, have one owner: KeyPositions.)
  std::vector<std::string_view> keys(c.argv.begin() + first, c.argv.begin() + first + n);
  // Redis checks the inputs' types before it reads the options.
  for (size_t i = 0; i < n; ++i) {
    const auto t = TypeOf(c, c.argv[first + i]);
    if (t && *t != ValueType::kZSet && *t != ValueType::kSet) return c.w.Error(kWrongType);
  }
  std::vector<double> weights;
  Store::ZAggregate aggregate = Store::ZAggregate::kSum;
  bool withscores = false;
  uint64_t limit = 0;
  const bool combine = op != Store::ZStoreOp::kDiff && !card;
  for (size_t j = first + n; j < c.argv.size();) {
    const size_t remaining = c.argv.size() - j;
    if (combine && remaining >= n + 1 && IEq(c.argv[j], "weights")) {
      ++j;
      weights.resize(n);
      for (size_t i = 0; i < n; ++i, ++j) {
        if (!ParseScore(c.argv[j], &weights[i])) {
          return c.w.Error("ERR weight value is not a float");
        }
      }
    } else if (combine && remaining >= 2 && IEq(c.argv[j], "aggregate")) {
      const std::string& a = c.argv[j + 1];
      if (IEq(a, "sum")) {
        aggregate = Store::ZAggregate::kSum;
      } else if (IEq(a, "min")) {
        aggregate = Store::ZAggregate::kMin;
      } else if (IEq(a, "max")) {
        aggregate = Store::ZAggregate::kMax;
      } else {
        return c.w.Error(kSyntaxErr);
      }
      j += 2;
    } else if (card && remaining >= 2 && IEq(c.argv[j], "limit")) {
      int64_t l = 0;
      if (!ParseLL(c.argv[j + 1], &l) || l < 0) return c.w.Error("ERR LIMIT can't be negative");
      limit = static_cast<uint64_t>(l);  // the last LIMIT wins
      j += 2;
    } else if (!store && !card && IEq(c.argv[j], "withscores")) {
      withscores = true;
      ++j;
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  if (card) {
    int64_t count = 0;
    if (Failed(c, c.store->ZInterCard(keys, limit, &count))) return;
    return c.w.Integer(count);
  }
  if (!store) {
    Store::ZMembers members;
    if (Failed(c, c.store->ZCombine(keys, weights, aggregate, op, &members))) return;
    return ReplyMembers(c, members, withscores);
  }
  int64_t size = 0;
  if (Failed(c, c.store->ZStore(c.argv[1], keys, weights, aggregate, op, &size))) return;
  c.w.Integer(size);
}

// BZPOPMIN, BZPOPMAX: the keys, then the timeout.
void BlockingZPop(Ctx& c, bool max) {
  int64_t timeout_ms = 0;
  if (!ParseTimeout(c, c.argv.back(), &timeout_ms)) return;
  auto b = std::make_shared<BlockedPop>();
  b->zset = true;
  b->zset_max = max;
  b->keys.assign(c.argv.begin() + 1, c.argv.end() - 1);
  b->timeout_ms = timeout_ms;
  Block(c, std::move(b));
}

}  // namespace

// Shared with LMPOP and BLMPOP (blocking.h): Redis 7.0's zmpopGenericCommand
// and lmpopGenericCommand read their arguments alike.
bool ParseMPop(Ctx& c, size_t numkeys_at, std::string_view low, std::string_view high,
               std::vector<std::string>* keys, bool* is_high, int64_t* count) {
  int64_t numkeys = 0;
  if (!ParseLL(c.argv[numkeys_at], &numkeys) || numkeys < 1) {
    c.w.Error("ERR numkeys should be greater than 0");
    return false;
  }
  // The end (LEFT/RIGHT, MIN/MAX) must follow the keys.
  if (numkeys > static_cast<int64_t>(c.argv.size() - numkeys_at) - 2) {
    c.w.Error(kSyntaxErr);
    return false;
  }
  const size_t where = numkeys_at + 1 + static_cast<size_t>(numkeys);
  if (IEq(c.argv[where], low)) {
    *is_high = false;
  } else if (IEq(c.argv[where], high)) {
    *is_high = true;
  } else {
    c.w.Error(kSyntaxErr);
    return false;
  }
  *count = -1;
  for (size_t j = where + 1; j < c.argv.size(); ++j) {
    const bool more = j + 1 < c.argv.size();
    if (*count == -1 && more && IEq(c.argv[j], "count")) {
      ++j;
      if (!ParseLL(c.argv[j], count) || *count < 1) {
        c.w.Error("ERR count should be greater than 0");
        return false;
      }
    } else {
      c.w.Error(kSyntaxErr);
      return false;
    }
  }
  if (*count == -1) *count = 1;
  keys->assign(c.argv.begin() + static_cast<std::ptrdiff_t>(numkeys_at) + 1,
               c.argv.begin() + static_cast<std::ptrdiff_t>(where));
  return true;
}

void CmdZAdd(Ctx& c) { ZAddGeneric(c, 0); }

void CmdZIncrBy(Ctx& c) { ZAddGeneric(c, Store::kZAddIncr); }

void CmdZRem(Ctx& c) {
  std::vector<std::string_view> members(c.argv.begin() + 2, c.argv.end());
  int64_t removed = 0;
  if (Failed(c, c.store->ZRem(c.argv[1], members, &removed))) return;
  c.w.Integer(removed);
}

void CmdZScore(Ctx& c) {
  double score = 0;
  const Status st = c.store->ZScore(c.argv[1], c.argv[2], &score);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(FormatScore(score));
}

void CmdZMScore(Ctx& c) {
  std::vector<std::string_view> members(c.argv.begin() + 2, c.argv.end());
  std::vector<std::optional<double>> scores;
  if (Failed(c, c.store->ZMScore(c.argv[1], members, &scores))) return;
  c.w.ArrayHeader(scores.size());
  for (const auto& s : scores) {
    if (s) {
      c.w.Bulk(FormatScore(*s));
    } else {
      c.w.NullBulk();
    }
  }
}

void CmdZCard(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->ZCard(c.argv[1], &n))) return;
  c.w.Integer(n);
}

void CmdZCount(Ctx& c) { ZCountGeneric(c, ZRangeSpec::By::kScore); }

void CmdZLexCount(Ctx& c) { ZCountGeneric(c, ZRangeSpec::By::kLex); }

void CmdZRange(Ctx& c) { ZRangeGeneric(c, ZRangeSpec::By::kRank, true, false, true); }

void CmdZRevRange(Ctx& c) { ZRangeGeneric(c, ZRangeSpec::By::kRank, false, true, false); }

void CmdZRangeByScore(Ctx& c) { ZRangeGeneric(c, ZRangeSpec::By::kScore, false, false, false); }

void CmdZRevRangeByScore(Ctx& c) {
  ZRangeGeneric(c, ZRangeSpec::By::kScore, false, true, false);
}

void CmdZRangeByLex(Ctx& c) { ZRangeGeneric(c, ZRangeSpec::By::kLex, false, false, false); }

void CmdZRevRangeByLex(Ctx& c) { ZRangeGeneric(c, ZRangeSpec::By::kLex, false, true, false); }

void CmdZRank(Ctx& c) { ZRankGeneric(c, false); }

void CmdZRevRank(Ctx& c) { ZRankGeneric(c, true); }

void CmdZRemRangeByRank(Ctx& c) { ZRemRangeGeneric(c, ZRangeSpec::By::kRank); }

void CmdZRemRangeByScore(Ctx& c) { ZRemRangeGeneric(c, ZRangeSpec::By::kScore); }

void CmdZRemRangeByLex(Ctx& c) { ZRemRangeGeneric(c, ZRangeSpec::By::kLex); }

void CmdZPopMin(Ctx& c) { ZPopGeneric(c, false); }

void CmdZPopMax(Ctx& c) { ZPopGeneric(c, true); }

void CmdZRandMember(Ctx& c) {
  if (c.argv.size() == 2) {
    Store::ZMembers members;
    if (Failed(c, c.store->ZRandMember(c.argv[1], 1, &members))) return;
    if (members.empty()) return c.w.NullBulk();
    return c.w.Bulk(members[0].first);
  }
  int64_t count = 0;
  bool withscores = false;
  if (!ParseRandCount(c, "withscores", &count, &withscores)) return;
  Store::ZMembers members;
  if (Failed(c, c.store->ZRandMember(c.argv[1], count, &members))) return;
  ReplyMembers(c, members, withscores);
}

void CmdZScan(Ctx& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.argv[2], &cursor)) return c.w.Error("ERR invalid cursor");
  // As HSCAN: the key is looked up before the options are read.
  Store::ZMembers members;
  ZRangeSpec all;
  if (Failed(c, c.store->ZRange(c.argv[1], all, &members))) return;
  std::optional<std::string> pattern;
  size_t count = 10;
  std::optional<std::string> type;
  if (!members.empty() && !ParseScanOptions(c, 3, false, &pattern, &count, &type)) return;
  auto selected = [&](const std::string& m) {
    if (!pattern) return true;
    if (m.empty()) return pattern->empty();
    return GlobMatch(*pattern, m);
  };
  // Returned whole in one step and in order, as Redis does for small sets.
  c.w.ArrayHeader(2);
  c.w.Bulk("0");
  size_t n = 0;
  for (const auto& ms : members) n += selected(ms.first) ? 1 : 0;
  c.w.ArrayHeader(n * 2);
  for (const auto& [m, score] : members) {
    if (selected(m)) {
      c.w.Bulk(m);
      c.w.Bulk(FormatScore(score));
    }
  }
}

void CmdZUnionStore(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kUnion, true); }

void CmdZInterStore(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kInter, true); }

void CmdZDiffStore(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kDiff, true); }

void CmdZUnion(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kUnion, false); }

void CmdZInter(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kInter, false); }

void CmdZDiff(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kDiff, false); }

void CmdZInterCard(Ctx& c) { ZSetOpGeneric(c, Store::ZStoreOp::kInter, false, true); }

void CmdZRangeStore(Ctx& c) {
  ZRangeGeneric(c, ZRangeSpec::By::kRank, true, false, true, /*store=*/true);
}

void CmdZMPop(Ctx& c) {
  BlockedPop b;
  b.zset = true;
  b.multi = true;
  if (!ParseMPop(c, 1, "min", "max", &b.keys, &b.zset_max, &b.count)) return;
  std::string reply;
  if (TryServeZSet(c.store, b, false, &reply)) return c.w.Raw(reply);
  c.w.Raw(kBlockTimedOut);  // nothing to pop: a null array
}

void CmdBZMPop(Ctx& c) {
  auto b = std::make_shared<BlockedPop>();
  b->zset = true;
  b->multi = true;
  if (!ParseMPop(c, 2, "min", "max", &b->keys, &b->zset_max, &b->count)) return;
  if (!ParseTimeout(c, c.argv[1], &b->timeout_ms)) return;
  Block(c, std::move(b));
}

void CmdBZPopMin(Ctx& c) { BlockingZPop(c, false); }

void CmdBZPopMax(Ctx& c) { BlockingZPop(c, true); }

}  // namespace cmd

bool TryServeZSet(Store* store, const BlockedPop& b, bool waiting, std::string* reply) {
  reply->clear();
  ReplyWriter w(reply);
  cmd::Args none;
  cmd::Ctx c{store, nullptr, nullptr, nullptr, w, none, nullptr};
  // All the keys at once: the first that has members, in one step.  A
  // blocked client is served sorted sets only (Redis): another type is
  // passed over.
  const std::vector<std::string_view> keys(b.keys.begin(), b.keys.end());
  Store::ZMembers out;
  size_t which = 0;
  const Status st = store->ZMPop(keys, b.zset_max, b.count, waiting, &which, &out);
  if (cmd::Failed(c, st)) return true;
  if (out.empty()) return false;
  const std::string& key = b.keys[which];
  if (!b.multi) {
    w.ArrayHeader(3);
    w.Bulk(key);
    w.Bulk(out[0].first);
    w.Bulk(cmd::FormatScore(out[0].second));
    return true;
  }
  w.ArrayHeader(2);
  w.Bulk(key);
  w.ArrayHeader(out.size());
  for (const auto& [m, score] : out) {
    w.ArrayHeader(2);
    w.Bulk(m);
    w.Bulk(cmd::FormatScore(score));
  }
  return true;
}

}  // namespace resp
}  // namespace ephpm
