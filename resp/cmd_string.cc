// String commands (GET, SET and its options, the INCR family, ...), the
// conditional writes of Redis 8.4 (SET IFEQ/IFNE/IFDEQ/IFDNE, DELEX,
// DIGEST), DELIFEQ, and ephpm's fencing (SET .. FENCE, LOCK.FENCE).

#include "command_table.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
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
// them (the order of checks decides which combinations are syntax errors),
// with Redis 8.4's conditions (one of NX, XX, IFEQ, IFNE, IFDEQ, IFDNE) and
// ephpm's FENCE (alone, or with EX or PX).
enum SetFlag : unsigned {
  kNx = 1, kXx = 2, kGet = 4, kKeepTtl = 8, kPersist = 16, kEx = 32, kPx = 64, kExAt = 128,
  kPxAt = 256, kIfEq = 512, kIfNe = 1024, kIfDeq = 2048, kIfDne = 4096, kFence = 8192,
};
constexpr unsigned kIfAny = kIfEq | kIfNe | kIfDeq | kIfDne;
// What excludes another of these: SET takes one condition.
constexpr unsigned kWhenAny = kNx | kXx | kIfAny;

// What a SET's options name besides flags: the expiry, the compared value or
// digest, the fence (each null when absent).
struct SetArgs {
  const std::string* expire = nullptr;
  const std::string* compare = nullptr;
  const std::string* fence = nullptr;
};

bool ParseSetOptions(Ctx& c, size_t start, bool for_set, unsigned* flags, SetArgs* args) {
  *flags = 0;
  *args = SetArgs{};
  for (size_t j = start; j < c.argv.size(); ++j) {
    const std::string& opt = c.argv[j];
    const bool has_next = j + 1 < c.argv.size();
    const unsigned timed = kEx | kPx | kExAt | kPxAt;
    const bool cond_ok = for_set && !(*flags & (kWhenAny | kFence));
    unsigned cond = 0;
    if (IEq(opt, "IFEQ")) cond = kIfEq;
    if (IEq(opt, "IFNE")) cond = kIfNe;
    if (IEq(opt, "IFDEQ")) cond = kIfDeq;
    if (IEq(opt, "IFDNE")) cond = kIfDne;
    if (cond != 0 && cond_ok && has_next) {
      *flags |= cond;
      args->compare = &c.argv[++j];
    } else if (IEq(opt, "FENCE") && for_set && has_next &&
               !(*flags & (kWhenAny | kGet | kKeepTtl | kExAt | kPxAt | kFence))) {
      *flags |= kFence;
      args->fence = &c.argv[++j];
    } else if (IEq(opt, "NX") && !(*flags & (kXx | kIfAny | kFence)) && for_set) {
      *flags |= kNx;
    } else if (IEq(opt, "XX") && !(*flags & (kNx | kIfAny | kFence)) && for_set) {
      *flags |= kXx;
    } else if (IEq(opt, "GET") && !(*flags & kFence) && for_set) {
      *flags |= kGet;
    } else if (IEq(opt, "KEEPTTL") && !(*flags & (kPersist | timed | kFence)) && for_set) {
      *flags |= kKeepTtl;
    } else if (IEq(opt, "PERSIST") && !for_set && !(*flags & (timed | kKeepTtl))) {
      *flags |= kPersist;
    } else if (IEq(opt, "EX") && !(*flags & (kKeepTtl | kPersist | kExAt | kPx | kPxAt)) &&
               has_next) {
      *flags |= kEx;
      args->expire = &c.argv[++j];
    } else if (IEq(opt, "PX") && !(*flags & (kKeepTtl | kPersist | kEx | kExAt | kPxAt)) &&
               has_next) {
      *flags |= kPx;
      args->expire = &c.argv[++j];
    } else if (IEq(opt, "EXAT") &&
               !(*flags & (kKeepTtl | kPersist | kEx | kPx | kPxAt | kFence)) && has_next) {
      *flags |= kExAt;
      args->expire = &c.argv[++j];
    } else if (IEq(opt, "PXAT") &&
               !(*flags & (kKeepTtl | kPersist | kEx | kExAt | kPx | kFence)) && has_next) {
      *flags |= kPxAt;
      args->expire = &c.argv[++j];
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

// Redis 8.4's digest argument: exactly 16 hex digits, either case.
bool ParseDigest(Ctx& c, std::string_view text, uint64_t* digest) {
  uint64_t v = 0;
  bool ok = text.size() == 16;
  for (size_t i = 0; ok && i < text.size(); ++i) {
    const char ch = text[i];
    unsigned d;
    if (ch >= '0' && ch <= '9') {
      d = static_cast<unsigned>(ch - '0');
    } else if (ch >= 'a' && ch <= 'f') {
      d = static_cast<unsigned>(ch - 'a' + 10);
    } else if (ch >= 'A' && ch <= 'F') {
      d = static_cast<unsigned>(ch - 'A' + 10);
    } else {
      ok = false;
      break;
    }
    v = (v << 4) | d;
  }
  if (!ok) {
    c.w.Error(kBadDigest);
    return false;
  }
  *digest = v;
  return true;
}

// The condition an IFEQ/IFNE/IFDEQ/IFDNE keyword (already matched) names
// with its argument; false after replying the error of a malformed digest.
bool MakeCondition(Ctx& c, ValueCondition::Kind kind, const std::string& arg,
                   ValueCondition* out) {
  out->kind = kind;
  if (kind == ValueCondition::Kind::kIfDigestEq || kind == ValueCondition::Kind::kIfDigestNe) {
    return ParseDigest(c, arg, &out->digest);
  }
  out->value = arg;
  return true;
}

ValueCondition::Kind ConditionKind(unsigned flags) {
  if (flags & kIfEq) return ValueCondition::Kind::kIfEq;
  if (flags & kIfNe) return ValueCondition::Kind::kIfNe;
  if (flags & kIfDeq) return ValueCondition::Kind::kIfDigestEq;
  if (flags & kIfDne) return ValueCondition::Kind::kIfDigestNe;
  return ValueCondition::Kind::kNone;
}

// SET key value FENCE n [EX s|PX ms]: ephpm's fenced write, for the
// resource a lock protects.  +OK when written, nil when a higher fence is
// recorded for the key.
void SetFencedGeneric(Ctx& c, const std::string& key, const std::string& value, unsigned flags,
                      const SetArgs& args) {
  int64_t fence = 0;
  if (!ParseLL(*args.fence, &fence) || fence <= 0) return c.w.Error(kNotInteger);
  int64_t ttl_ms = 0;
  if (args.expire != nullptr) {
    int64_t at_ms = 0;
    if (!ExpireAbsoluteMs(c, *args.expire, flags, &at_ms)) return;
    ttl_ms = at_ms - c.store->NowMs();
  }
  const SetFencedOutcome o =
      c.store->SetFenced(key, value, static_cast<uint64_t>(fence), ttl_ms);
  if (Failed(c, ErrorOf(o))) return;
  if (o == SetFencedOutcome::kWritten) return Ok(c);
  c.w.NullBulk();
}

// SET key value [NX|XX|IFEQ v|IFNE v|IFDEQ d|IFDNE d] [GET]
// [EX|PX|EXAT|PXAT|KEEPTTL]; SETEX and PSETEX.
void SetGeneric(Ctx& c, const std::string& key, const std::string& value, unsigned flags,
                const SetArgs& args) {
  if (flags & kFence) return SetFencedGeneric(c, key, value, flags, args);
  int64_t at_ms = 0;
  if (args.expire != nullptr && !ExpireAbsoluteMs(c, *args.expire, flags, &at_ms)) return;
  SetOptions o;
  if ((flags & kIfAny) && !MakeCondition(c, ConditionKind(flags), *args.compare, &o.condition)) {
    return;
  }
  // A lock acquisition (NX without GET or KEEPTTL) goes through set_nx, so
  // that in a cluster the key's owner decides it; with an expiry it is a
  // lock, granted with a fencing token (LOCK.FENCE reads it).  An expiry
  // already past (EXAT 1) cannot be put as a TTL: SetWith below stores
  // nothing then, as Redis, which replies OK and deletes the key at once.
  const int64_t now = c.store->NowMs();
  if ((flags & kNx) && !(flags & (kGet | kKeepTtl)) && (args.expire == nullptr || at_ms > now)) {
    SetNxOutcome outcome;
    if (args.expire == nullptr) {
      outcome = c.store->SetNx(key, value, 0);
    } else {
      outcome = c.store->SetNxFenced(key, value, at_ms - now, /*ephemeral=*/false).outcome;
    }
    if (Failed(c, ErrorOf(outcome))) return;
    if (outcome == SetNxOutcome::kInserted) return Ok(c);
    return c.w.NullBulk();
  }
  o.when = (flags & kNx)   ? SetOptions::When::kIfAbsent
           : (flags & kXx) ? SetOptions::When::kIfPresent
                           : SetOptions::When::kAlways;
  o.expiry = (flags & kKeepTtl)        ? SetOptions::Expiry::kKeep
             : args.expire != nullptr ? SetOptions::Expiry::kAt
                                      : SetOptions::Expiry::kNone;
  o.expires_at_ms = at_ms;
  o.get_old = flags & kGet;
  SetResult r;
  const Status st = c.store->SetWith(key, value, o, &r);
  if (Failed(c, st)) return;
  // With GET the old value answers whatever the condition decided.
  if (flags & kGet) {
    if (r.had_old) return c.w.Bulk(r.old);
    return c.w.NullBulk();
  }
  if (!r.written) return c.w.NullBulk();
  Ok(c);
}

SetArgs Expiring(const std::string& expire) {
  SetArgs a;
  a.expire = &expire;
  return a;
}

}  // namespace

void CmdSet(Ctx& c) {
  unsigned flags;
  SetArgs args;
  if (!ParseSetOptions(c, 3, true, &flags, &args)) return;
  SetGeneric(c, c.argv[1], c.argv[2], flags, args);
}

void CmdSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kEx, Expiring(c.argv[2])); }

void CmdPSetEx(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[3], kPx, Expiring(c.argv[2])); }

void CmdSetNx(Ctx& c) {
  const SetNxOutcome o = c.store->SetNx(c.argv[1], c.argv[2], 0);
  if (Failed(c, ErrorOf(o))) return;
  c.w.Integer(o == SetNxOutcome::kInserted ? 1 : 0);
}

void CmdGetSet(Ctx& c) { SetGeneric(c, c.argv[1], c.argv[2], kGet, SetArgs{}); }

void CmdGetDel(Ctx& c) {
  std::string v;
  const Status st = c.store->GetDel(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

void CmdGetEx(Ctx& c) {
  unsigned flags;
  SetArgs args;
  if (!ParseSetOptions(c, 2, false, &flags, &args)) return;
  const std::string* expire = args.expire;
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

// Replies for a failed edit of the string at argv[1] (APPEND, SETRANGE,
// SETBIT, BITFIELD): kInvalidArgument is the value grown past
// ephpm.max_value_size, Redis's proto-max-bulk-len error, unless the key
// itself is too long.  True when it replied.
bool FailedEdit(Ctx& c, Status st) {
  if (st == Status::kInvalidArgument && c.argv[1].size() <= kMaxKeySize) {
    c.w.Error(kTooBig);
    return true;
  }
  return Failed(c, st);
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

}  // namespace

void CmdMSet(Ctx& c) { MSetGeneric(c, false); }

void CmdMSetNx(Ctx& c) { MSetGeneric(c, true); }

void CmdAppend(Ctx& c) {
  int64_t len = 0;
  const Status st = c.store->Append(c.argv[1], c.argv[2], &len);
  if (FailedEdit(c, st)) return;
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
  if (FailedEdit(c, st)) return;
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

// ---- bits ------------------------------------------------------------------
// Bit i of a string is bit (7 - i % 8) of its byte i / 8: the first byte's
// most significant bit is bit 0, as in Redis.

namespace {

constexpr std::string_view kBitOffsetErr = "ERR bit offset is not an integer or out of range";

// A bit offset as Redis 7.0 reads one (getBitOffsetFromArgument): an
// integer whose byte is inside proto-max-bulk-len; with `width` (BITFIELD)
// "#N" too, which means N * width.  False after replying.
bool ParseBitOffset(Ctx& c, const std::string& arg, uint64_t* bit, unsigned width = 0) {
  const bool in_fields = width > 0 && !arg.empty() && arg[0] == '#';
  int64_t v = 0;
  if (!ParseLL(in_fields ? arg.substr(1) : arg, &v) ||
      (in_fields && __builtin_mul_overflow(v, static_cast<int64_t>(width), &v)) || v < 0 ||
      (static_cast<uint64_t>(v) >> 3) >= c.dispatcher->config().max_bulk_len.load()) {
    c.w.Error(kBitOffsetErr);
    return false;
  }
  *bit = static_cast<uint64_t>(v);
  return true;
}

// A start/end pair made absolute within `total` units (bytes or bits), as
// GETRANGE and Redis's BITCOUNT and BITPOS clamp it; false when it selects
// nothing.
bool ClampRange(int64_t total, int64_t* start, int64_t* end) {
  if (*start < 0) *start += total;
  if (*end < 0) *end += total;
  if (*start < 0) *start = 0;
  if (*end < 0) *end = 0;
  if (*end >= total) *end = total - 1;
  return *start <= *end;
}

// The bits [lo, hi] (inclusive) of v; lo <= hi < v.size() * 8.
int64_t CountBits(std::string_view v, uint64_t lo, uint64_t hi) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  const uint64_t first = lo >> 3, last = hi >> 3;
  // Masks keep the bits of the range in the first and the last byte.
  const unsigned head = 0xFFu >> (lo & 7);
  const unsigned tail = (0xFF00u >> ((hi & 7) + 1)) & 0xFFu;
  if (first == last) return __builtin_popcount(p[first] & head & tail);
  int64_t n = __builtin_popcount(p[first] & head) + __builtin_popcount(p[last] & tail);
  uint64_t i = first + 1;
  for (; i + 8 <= last; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, sizeof(w));
    n += __builtin_popcountll(w);
  }
  for (; i < last; ++i) n += __builtin_popcount(p[i]);
  return n;
}

// The first bit equal to `bit` in [lo, hi] of v (hi < v.size() * 8), or -1.
int64_t FindBit(std::string_view v, int bit, uint64_t lo, uint64_t hi) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  const unsigned skip = bit != 0 ? 0x00u : 0xFFu;  // a byte with no such bit
  for (uint64_t i = lo; i <= hi;) {
    if ((i & 7) == 0 && i + 7 <= hi && p[i >> 3] == skip) {
      i += 8;
      continue;
    }
    const int b = (p[i >> 3] >> (7 - (i & 7))) & 1;
    if (b == bit) return static_cast<int64_t>(i);
    ++i;
  }
  return -1;
}

}  // namespace

void CmdSetBit(Ctx& c) {
  uint64_t bit = 0;
  if (!ParseBitOffset(c, c.argv[2], &bit)) return;
  int64_t on = 0;
  if (!ParseLL(c.argv[3], &on) || (on & ~int64_t{1}) != 0) {
    return c.w.Error("ERR bit is not an integer or out of range");
  }
  int old = 0;
  const Status st = c.store->SetBit(c.argv[1], bit, on != 0, &old);
  if (FailedEdit(c, st)) return;
  c.w.Integer(old);
}

void CmdGetBit(Ctx& c) {
  uint64_t bit = 0;
  if (!ParseBitOffset(c, c.argv[2], &bit)) return;
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.Integer(0);
  if (Failed(c, st)) return;
  const uint64_t byte = bit >> 3;
  const bool set = byte < v.size() && (static_cast<unsigned char>(v[byte]) & (0x80u >> (bit & 7)));
  c.w.Integer(set ? 1 : 0);
}

// BITCOUNT key [start end [BYTE|BIT]], checked in Redis 7.0's order: the key
// first (a missing one counts 0 whatever follows), then the range.
void CmdBitCount(Ctx& c) {
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.Integer(0);
  if (Failed(c, st)) return;
  const int64_t bytes = static_cast<int64_t>(v.size());
  int64_t lo = 0, hi = bytes * 8 - 1;
  const size_t argc = c.argv.size();
  if (argc == 4 || argc == 5) {
    int64_t start = 0, end = 0;
    if (!ParseLL(c.argv[2], &start) || !ParseLL(c.argv[3], &end)) return c.w.Error(kNotInteger);
    if (start < 0 && end < 0 && start > end) return c.w.Integer(0);
    bool in_bits = false;
    if (argc == 5) {
      if (IEq(c.argv[4], "bit")) {
        in_bits = true;
      } else if (!IEq(c.argv[4], "byte")) {
        return c.w.Error(kSyntaxErr);
      }
    }
    if (!ClampRange(in_bits ? bytes * 8 : bytes, &start, &end)) return c.w.Integer(0);
    lo = in_bits ? start : start * 8;
    hi = in_bits ? end : end * 8 + 7;
  } else if (argc != 2) {
    return c.w.Error(kSyntaxErr);
  }
  if (lo > hi) return c.w.Integer(0);  // an empty string
  c.w.Integer(CountBits(v, static_cast<uint64_t>(lo), static_cast<uint64_t>(hi)));
}

// BITPOS key bit [start [end [BYTE|BIT]]], in Redis 7.0's order: the bit,
// then the key (missing: an endless run of zeros), then the range.  A zero
// not found in a range without an end is the first bit past the string.
void CmdBitPos(Ctx& c) {
  int64_t bit = 0;
  if (!ParseLL(c.argv[2], &bit)) return c.w.Error(kNotInteger);
  if (bit != 0 && bit != 1) return c.w.Error("ERR The bit argument must be 1 or 0.");
  std::string v;
  const Status st = c.store->Get(c.argv[1], &v);
  if (st == Status::kNotFound) return c.w.Integer(bit != 0 ? -1 : 0);
  if (Failed(c, st)) return;
  const int64_t bytes = static_cast<int64_t>(v.size());
  int64_t lo = 0, hi = bytes * 8 - 1;
  bool end_given = false;
  const size_t argc = c.argv.size();
  if (argc >= 4 && argc <= 6) {
    int64_t start = 0, end = 0;
    if (!ParseLL(c.argv[3], &start)) return c.w.Error(kNotInteger);
    bool in_bits = false;
    if (argc == 6) {
      if (IEq(c.argv[5], "bit")) {
        in_bits = true;
      } else if (!IEq(c.argv[5], "byte")) {
        return c.w.Error(kSyntaxErr);
      }
    }
    const int64_t total = in_bits ? bytes * 8 : bytes;
    if (argc >= 5) {
      if (!ParseLL(c.argv[4], &end)) return c.w.Error(kNotInteger);
      end_given = true;
    } else {
      end = total - 1;
    }
    if (!ClampRange(total, &start, &end)) return c.w.Integer(-1);
    lo = in_bits ? start : start * 8;
    hi = in_bits ? end : end * 8 + 7;
  } else if (argc != 3) {
    return c.w.Error(kSyntaxErr);
  }
  if (lo > hi) return c.w.Integer(-1);  // an empty string
  const int64_t pos =
      FindBit(v, static_cast<int>(bit), static_cast<uint64_t>(lo), static_cast<uint64_t>(hi));
  if (pos >= 0 || bit != 0 || end_given) return c.w.Integer(pos);
  c.w.Integer(bytes * 8);
}

namespace {

// One BITFIELD operation, as parsed.
struct FieldOp {
  enum class Kind { kGet, kSet, kIncrBy } kind;
  enum class Overflow { kWrap, kSat, kFail } overflow;
  bool is_signed;
  unsigned bits;    // 1-64 signed, 1-63 unsigned
  uint64_t offset;  // of the field's first (most significant) bit
  int64_t arg;      // SET's value, INCRBY's increment
};

// "i1" to "i64", "u1" to "u63" (Redis's getBitfieldTypeFromArgument: the
// letter in lower case, the width as an integer up to a NUL).
bool ParseFieldType(const std::string& arg, bool* is_signed, unsigned* bits) {
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u')) return false;
  *is_signed = arg[0] == 'i';
  int64_t n = 0;
  if (!ParseLL(arg.substr(1, arg.find('\0', 1) - 1), &n)) return false;
  if (n < 1 || n > (*is_signed ? 64 : 63)) return false;
  *bits = static_cast<unsigned>(n);
  return true;
}

// The `bits` bits from bit `offset` of s, most significant first; bits past
// the string read as zeros.
uint64_t ReadField(std::string_view s, uint64_t offset, unsigned bits) {
  uint64_t v = 0;
  for (unsigned i = 0; i < bits; ++i) {
    const uint64_t bit = offset + i, byte = bit >> 3;
    const unsigned b =
        byte < s.size() ? (static_cast<unsigned char>(s[byte]) >> (7 - (bit & 7))) & 1u : 0u;
    v = (v << 1) | b;
  }
  return v;
}

// Writes v's low `bits` bits at bit `offset` of *s, which is long enough.
void WriteField(std::string* s, uint64_t offset, unsigned bits, uint64_t v) {
  for (unsigned i = 0; i < bits; ++i) {
    const uint64_t bit = offset + i;
    unsigned char& b = reinterpret_cast<unsigned char&>((*s)[bit >> 3]);
    const unsigned mask = 0x80u >> (bit & 7);
    const bool on = ((v >> (bits - 1 - i)) & 1u) != 0;
    b = static_cast<unsigned char>(on ? (b | mask) : (b & ~mask));
  }
}

// The low `bits` bits.
uint64_t FieldMask(unsigned bits) { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

// A field's bits as a signed number (two's complement in `bits` bits).
int64_t SignExtend(uint64_t v, unsigned bits) {
  if (bits < 64 && ((v >> (bits - 1)) & 1u) != 0) v |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(v);
}

// value + incr stored in a field of `bits` bits, under the overflow rule:
// false when it overflows under FAIL (nothing is written), else *out.  The
// overflow test is Redis 7.0's (checkSignedBitfieldOverflow and
// checkUnsignedBitfieldOverflow), including how a SET value far outside the
// field's range is judged; its arithmetic is done in uint64_t here.
bool FitField(const FieldOp& op, uint64_t value, int64_t incr, uint64_t* out) {
  const auto uincr = static_cast<uint64_t>(incr);
  bool high = false, low = false;
  uint64_t top = 0, bottom = 0, wrapped = value + uincr;
  if (op.is_signed) {
    const auto v = static_cast<int64_t>(value);
    const int64_t max =
        op.bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (op.bits - 1)) - 1;
    const int64_t min = -max - 1;
    const auto max_incr = static_cast<int64_t>(static_cast<uint64_t>(max) - value);
    const auto min_incr = static_cast<int64_t>(static_cast<uint64_t>(min) - value);
    high = v > max || (op.bits != 64 && incr > max_incr) || (v >= 0 && incr > 0 && incr > max_incr);
    low = !high && (v < min || (op.bits != 64 && incr < min_incr) ||
                    (v < 0 && incr < 0 && incr < min_incr));
    top = static_cast<uint64_t>(max);
    bottom = static_cast<uint64_t>(min);
    wrapped = static_cast<uint64_t>(SignExtend(wrapped & FieldMask(op.bits), op.bits));
  } else {
    const uint64_t max = (uint64_t{1} << op.bits) - 1;
    const auto max_incr = static_cast<int64_t>(max - value);
    const auto min_incr = static_cast<int64_t>(uint64_t{0} - value);
    high = value > max || (incr > 0 && incr > max_incr);
    low = !high && incr < 0 && incr < min_incr;
    top = max;
    bottom = 0;
    wrapped &= max;
  }
  if (!high && !low) {
    *out = value + uincr;
    return true;
  }
  switch (op.overflow) {
    case FieldOp::Overflow::kFail: return false;
    case FieldOp::Overflow::kSat: *out = high ? top : bottom; return true;
    case FieldOp::Overflow::kWrap: *out = wrapped; return true;
  }
  return false;
}

// BITFIELD and BITFIELD_RO: every operation parsed and checked first, in
// Redis 7.0's order; then the GETs alone read a copy of the value, and any
// SET or INCRBY edits it through Store::EditPadded, padded to the farthest
// bit written (a missing key is created then, even when every write fails
// under OVERFLOW FAIL, as in Redis).
void BitFieldGeneric(Ctx& c, bool read_only) {
  std::vector<FieldOp> ops;
  auto overflow = FieldOp::Overflow::kWrap;
  bool writes = false;
  uint64_t last_bit = 0;  // the farthest bit a write reaches
  const size_t argc = c.argv.size();
  for (size_t j = 2; j < argc; ++j) {
    const size_t left = argc - j - 1;
    const std::string& sub = c.argv[j];
    FieldOp op{};
    if (IEq(sub, "get") && left >= 2) {
      op.kind = FieldOp::Kind::kGet;
    } else if (IEq(sub, "set") && left >= 3) {
      op.kind = FieldOp::Kind::kSet;
    } else if (IEq(sub, "incrby") && left >= 3) {
      op.kind = FieldOp::Kind::kIncrBy;
    } else if (IEq(sub, "overflow") && left >= 1) {
      const std::string& how = c.argv[++j];
      if (IEq(how, "wrap")) {
        overflow = FieldOp::Overflow::kWrap;
      } else if (IEq(how, "sat")) {
        overflow = FieldOp::Overflow::kSat;
      } else if (IEq(how, "fail")) {
        overflow = FieldOp::Overflow::kFail;
      } else {
        return c.w.Error("ERR Invalid OVERFLOW type specified");
      }
      continue;
    } else {
      return c.w.Error(kSyntaxErr);
    }
    op.overflow = overflow;
    if (!ParseFieldType(c.argv[j + 1], &op.is_signed, &op.bits)) {
      return c.w.Error(
          "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
          "but i64 is.");
    }
    if (!ParseBitOffset(c, c.argv[j + 2], &op.offset, op.bits)) return;
    if (op.kind != FieldOp::Kind::kGet) {
      writes = true;
      last_bit = std::max(last_bit, op.offset + op.bits - 1);
      if (!ParseLL(c.argv[j + 3], &op.arg)) return c.w.Error(kNotInteger);
    }
    ops.push_back(op);
    j += op.kind == FieldOp::Kind::kGet ? 2 : 3;
  }
  // One reply per operation: a number, or none (an overflow under FAIL).
  std::vector<std::optional<int64_t>> replies;
  auto run = [&](std::string* bytes) {
    replies.clear();
    bool changed = false;
    for (const FieldOp& op : ops) {
      const uint64_t old = ReadField(*bytes, op.offset, op.bits);
      auto as_reply = [&](uint64_t v) {
        return op.is_signed ? SignExtend(v, op.bits) : static_cast<int64_t>(v);
      };
      if (op.kind == FieldOp::Kind::kGet) {
        replies.emplace_back(as_reply(old));
        continue;
      }
      uint64_t base = static_cast<uint64_t>(op.arg);  // SET's value
      if (op.kind == FieldOp::Kind::kIncrBy) {
        base = op.is_signed ? static_cast<uint64_t>(SignExtend(old, op.bits)) : old;
      }
      uint64_t next = 0;
      if (!FitField(op, base, op.kind == FieldOp::Kind::kSet ? 0 : op.arg, &next)) {
        replies.emplace_back(std::nullopt);
        continue;
      }
      WriteField(bytes, op.offset, op.bits, next);
      const uint64_t mask = FieldMask(op.bits);
      if ((next & mask) != old) changed = true;
      // SET answers the field before, INCRBY the field after.
      replies.emplace_back(as_reply(op.kind == FieldOp::Kind::kSet ? old : next & mask));
    }
    return changed;
  };
  if (!writes) {
    std::string v;
    const Status st = c.store->Get(c.argv[1], &v);
    if (st != Status::kNotFound && Failed(c, st)) return;
    run(&v);
  } else {
    if (read_only) return c.w.Error("ERR BITFIELD_RO only supports the GET subcommand");
    const Status st = c.store->EditPadded(c.argv[1], static_cast<size_t>(last_bit >> 3) + 1,
                                          [&](bool, std::string* bytes) { return run(bytes); });
    if (FailedEdit(c, st)) return;
  }
  c.w.ArrayHeader(replies.size());
  for (const auto& r : replies) {
    if (r) {
      c.w.Integer(*r);
    } else {
      c.w.NullBulk();
    }
  }
}

}  // namespace

void CmdBitField(Ctx& c) { BitFieldGeneric(c, false); }

void CmdBitFieldRo(Ctx& c) { BitFieldGeneric(c, true); }

// BITOP AND|OR|XOR|NOT destkey key [key ...]
void CmdBitOp(Ctx& c) {
  Store::BitOpKind op;
  const std::string& name = c.argv[1];
  if (IEq(name, "and")) {
    op = Store::BitOpKind::kAnd;
  } else if (IEq(name, "or")) {
    op = Store::BitOpKind::kOr;
  } else if (IEq(name, "xor")) {
    op = Store::BitOpKind::kXor;
  } else if (IEq(name, "not")) {
    op = Store::BitOpKind::kNot;
  } else {
    return c.w.Error(kSyntaxErr);
  }
  if (op == Store::BitOpKind::kNot && c.argv.size() != 4) {
    return c.w.Error("ERR BITOP NOT must be called with a single source key.");
  }
  const std::vector<std::string_view> keys(c.argv.begin() + 3, c.argv.end());
  int64_t length = 0;
  if (Failed(c, c.store->BitOp(op, c.argv[2], keys, &length))) return;
  c.w.Integer(length);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest
// common subsequence of two strings (missing keys count as ""), by the
// textbook table of prefix lengths, as Redis 7.0 computes and answers it:
// the string, its length, or the matching ranges from the last one back.
// The two values are read in one step.  The table (4 bytes a cell) may take
// at most proto-max-bulk-len, as in Redis.
void CmdLcs(Ctx& c) {
  std::string a, b;
  Status sa = Status::kOk, sb = Status::kOk;
  auto read_both = [&] {
    sa = c.store->Get(c.argv[1], &a);
    sb = c.store->Get(c.argv[2], &b);
  };
  if (c.store->HeldBySection(c.argv[1]) && c.store->HeldBySection(c.argv[2])) {
    read_both();  // inside EXEC or a script: their section holds both
  } else {
    const Status st = c.store->Atomically({c.argv[1], c.argv[2]}, false, read_both);
    if (Failed(c, st)) return;
  }
  if (sa == Status::kWrongType || sb == Status::kWrongType) {
    return c.w.Error("ERR The specified keys must contain string values");
  }
  if (sa != Status::kNotFound && Failed(c, sa)) return;
  if (sb != Status::kNotFound && Failed(c, sb)) return;
  bool want_len = false, want_idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t j = 3; j < c.argv.size(); ++j) {
    const std::string& opt = c.argv[j];
    if (IEq(opt, "IDX")) {
      want_idx = true;
    } else if (IEq(opt, "LEN")) {
      want_len = true;
    } else if (IEq(opt, "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (IEq(opt, "MINMATCHLEN") && j + 1 < c.argv.size()) {
      if (!ParseLL(c.argv[j + 1], &min_match_len)) return c.w.Error(kNotInteger);
      if (min_match_len < 0) min_match_len = 0;
      ++j;
    } else {
      return c.w.Error(kSyntaxErr);
    }
  }
  if (want_idx && want_len) {
    return c.w.Error("ERR If you want both the length and indexes, please just use IDX.");
  }
  const size_t alen = a.size(), blen = b.size();
  const uint64_t cells = (uint64_t{alen} + 1) * (uint64_t{blen} + 1);
  if (cells > c.dispatcher->config().max_bulk_len.load() / sizeof(uint32_t)) {
    return c.w.Error(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::unique_ptr<uint32_t[]> table(new (std::nothrow) uint32_t[cells]);
  if (table == nullptr) {
    return c.w.Error("ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  // cell(i, j): the LCS length of a's first i bytes and b's first j.
  auto cell = [&](size_t i, size_t j) -> uint32_t& { return table[i * (blen + 1) + j]; };
  for (size_t i = 0; i <= alen; ++i) {
    for (size_t j = 0; j <= blen; ++j) {
      if (i == 0 || j == 0) {
        cell(i, j) = 0;
      } else if (a[i - 1] == b[j - 1]) {
        cell(i, j) = cell(i - 1, j - 1) + 1;
      } else {
        cell(i, j) = std::max(cell(i - 1, j), cell(i, j - 1));
      }
    }
  }
  const uint32_t length = cell(alen, blen);
  if (want_len) return c.w.Integer(length);

  // Walk back from the end: the subsequence, and its runs of bytes that are
  // contiguous in both strings (a range ends at a step back without a match
  // or at either string's start).
  std::string common(length, '\0');
  struct Range {
    size_t a_start, a_end, b_start, b_end;
  };
  std::vector<Range> ranges;
  bool open = false;
  Range r{};
  auto close = [&] {
    const size_t len = r.a_end - r.a_start + 1;
    if (min_match_len == 0 || len >= static_cast<uint64_t>(min_match_len)) ranges.push_back(r);
    open = false;
  };
  size_t i = alen, j = blen, k = length;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      common[--k] = a[i - 1];
      if (!open) {
        r = Range{i - 1, i - 1, j - 1, j - 1};
        open = true;
      } else {  // the step before was a match too: the run grows backward
        r.a_start = i - 1;
        r.b_start = j - 1;
      }
      --i;
      --j;
      if (i == 0 || j == 0) close();
    } else {
      if (cell(i - 1, j) > cell(i, j - 1)) {
        --i;
      } else {
        --j;
      }
      if (open) close();
    }
  }
  if (!want_idx) return c.w.Bulk(common);
  c.w.ArrayHeader(4);
  c.w.Bulk("matches");
  c.w.ArrayHeader(ranges.size());
  for (const Range& m : ranges) {
    c.w.ArrayHeader(with_match_len ? 3 : 2);
    c.w.ArrayHeader(2);
    c.w.Integer(static_cast<int64_t>(m.a_start));
    c.w.Integer(static_cast<int64_t>(m.a_end));
    c.w.ArrayHeader(2);
    c.w.Integer(static_cast<int64_t>(m.b_start));
    c.w.Integer(static_cast<int64_t>(m.b_end));
    if (with_match_len) c.w.Integer(static_cast<int64_t>(m.a_end - m.a_start + 1));
  }
  c.w.Bulk("len");
  c.w.Integer(length);
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

// DELEX key [IFEQ v|IFNE v|IFDEQ d|IFDNE d] (Redis 8.4): DEL of one key
// without a condition; with one, a string key removed only when it holds.
void CmdDelEx(Ctx& c) {
  ValueCondition cond;
  if (c.argv.size() != 2) {
    if (c.argv.size() != 4) return c.w.Error(kSyntaxErr);
    const std::string& opt = c.argv[2];
    ValueCondition::Kind kind;
    if (IEq(opt, "IFEQ")) {
      kind = ValueCondition::Kind::kIfEq;
    } else if (IEq(opt, "IFNE")) {
      kind = ValueCondition::Kind::kIfNe;
    } else if (IEq(opt, "IFDEQ")) {
      kind = ValueCondition::Kind::kIfDigestEq;
    } else if (IEq(opt, "IFDNE")) {
      kind = ValueCondition::Kind::kIfDigestNe;
    } else {
      return c.w.Error(kSyntaxErr);
    }
    if (!MakeCondition(c, kind, c.argv[3], &cond)) return;
  }
  int64_t removed = 0;
  if (Failed(c, c.store->DelEx(c.argv[1], cond, &removed))) return;
  c.w.Integer(removed);
}

// DIGEST key (Redis 8.4): XXH3-64 of the value as 16 lowercase hex digits,
// zero-padded as Redis 8.4 answers since redis/redis#14502.
void CmdDigest(Ctx& c) {
  uint64_t d = 0;
  const Status st = c.store->Digest(c.argv[1], &d);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  static constexpr char kHex[] = "0123456789abcdef";
  char text[16];
  for (int i = 15; i >= 0; --i, d >>= 4) text[i] = kHex[d & 0xf];
  c.w.Bulk(std::string_view(text, sizeof text));
}

// LOCK.FENCE key [token] (ephpm): with a token, the fence of the lock the
// key holds only while it holds that token, else nil; without, the fence
// the live key carries (0 for none), nil when missing.
void CmdLockFence(Ctx& c) {
  if (c.argv.size() > 3) return c.w.Error(kSyntaxErr);
  const bool with_token = c.argv.size() == 3;
  const LockStateReply r = c.store->LockState(c.argv[1], with_token ? c.argv[2] : "");
  if (Failed(c, ErrorOf(r.outcome))) return;
  const bool answer = with_token ? r.outcome == LockStateOutcome::kHeld
                                 : r.outcome != LockStateOutcome::kAbsent;
  if (!answer) return c.w.NullBulk();
  c.w.Integer(static_cast<int64_t>(r.fence));
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
