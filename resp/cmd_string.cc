// String commands (GET, SET and its options, the INCR family, ...), and
// DELIFEQ, the compare-and-delete of a lock.

#include "command_table.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/number_text.h"

namespace ephpm {
namespace resp {
namespace cmd {

void CmdGet(Ctx& c) {
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

namespace {

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
    const SetNxOutcome o = c.store->SetNx(key, value, ttl_ms);
    if (Failed(c, ErrorOf(o))) return;
    if (o == SetNxOutcome::kInserted) return Ok(c);
    return c.w.NullBulk();
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

}  // namespace

void CmdSet(Ctx& c) {
  unsigned flags;
  const std::string* expire;
  if (!ParseSetOptions(c, 3, true, &flags, &expire)) return;
  SetGeneric(c, c.argv[1], c.argv[2], flags, expire);
}

void CmdSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kEx, &c.argv[2]); }

void CmdPSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kPx, &c.argv[2]); }

void CmdSetNx(Ctx& c) {
  const SetNxOutcome o = c.store->SetNx(c.argv[1], c.argv[2], 0);
  if (Failed(c, ErrorOf(o))) return;
  c.w.Integer(o == SetNxOutcome::kInserted ? 1 : 0);
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

namespace {

void MSetGeneric(Ctx& c, bool nx) {
  if (c.argv.size() % 2 == 0) return ArityError(c);
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 1; i + 1 < c.argv.size(); i += 2) pairs.emplace_back(c.argv[i], c.argv[i + 1]);
  bool written = false;
  if (Failed(c, c.store->MSet(pairs, nx, &written))) return;
  if (nx) return c.w.Integer(written ? 1 : 0);
  Ok(c);
}

}  // namespace

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

namespace {

void IncrGeneric(Ctx& c, int64_t delta) {
  int64_t result = 0;
  if (Failed(c, c.store->IncrBy(c.argv[1], delta, &result))) return;
  c.w.Integer(result);
}

}  // namespace

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

void CmdDelIfEq(Ctx& c) {
  const DelIfEqOutcome o = c.store->DelIfEq(c.argv[1], c.argv[2]);
  if (Failed(c, ErrorOf(o))) return;
  c.w.Integer(o == DelIfEqOutcome::kDeleted ? 1 : 0);
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
