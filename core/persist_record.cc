// The log's record codec (core/persist.h) and the fsync policy's names.

#include <cstring>

#include "ephpm/persistence.h"
#include "persist.h"
#include "persist_files.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {

bool ParseFsyncPolicy(std::string_view text, FsyncPolicy* out) {
  if (text == "always") {
    *out = FsyncPolicy::kAlways;
  } else if (text == "everysec") {
    *out = FsyncPolicy::kEverySec;
  } else if (text == "no") {
    *out = FsyncPolicy::kNo;
  } else {
    return false;
  }
  return true;
}

const char* FsyncPolicyName(FsyncPolicy p) {
  switch (p) {
    case FsyncPolicy::kAlways:
      return "always";
    case FsyncPolicy::kEverySec:
      return "everysec";
    case FsyncPolicy::kNo:
      return "no";
  }
  return "unknown";
}

namespace persist {
namespace {

// kind, type, flags, expires_at_ms, original_size, stamp.hlc, stamp.node,
// key length: the body's fixed part before the key.
constexpr size_t kFixedBody = 1 + 1 + 1 + 8 + 8 + 8 + 8 + 4;
constexpr size_t kHeader = 8;   // length + its check
constexpr size_t kTrailer = 8;  // xxh3 of the body
constexpr uint8_t kFlagCompressed = 1;
constexpr uint8_t kFlagPinned = 2;
// A u64 fence (Mutation::fence) follows the fixed part, before the key.
// Written only when the fence is set, so older files read the same.
constexpr uint8_t kFlagFence = 4;
// A u32 database (Mutation::db) follows, after the fence if any.  Written
// only for a database other than 0, so older files read the same.
constexpr uint8_t kFlagDb = 8;

void PutLe(uint64_t v, int bytes, std::string* out) {
  char b[8];
  for (int i = 0; i < bytes; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, bytes);
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

uint32_t LengthCheck(const char* len4) { return static_cast<uint32_t>(XXH3_64bits(len4, 4)); }

}  // namespace

void EncodeRecord(const Mutation& m, std::string* out) {
  // The store caps keys and values far below 4 GiB (max_value_size), so the
  // body length always fits its u32.
  const uint64_t fence_len = (m.fence != 0 ? 8 : 0) + (m.db != 0 ? 4 : 0);
  const uint64_t body = kFixedBody + fence_len + m.key.size() + m.value.size();
  const size_t start = out->size();
  out->reserve(start + kHeader + body + kTrailer);
  PutLe(body, 4, out);
  PutLe(LengthCheck(out->data() + start), 4, out);
  const size_t body_start = out->size();
  out->push_back(static_cast<char>(static_cast<uint8_t>(m.kind) + 1));
  out->push_back(static_cast<char>(m.type));
  out->push_back(static_cast<char>((m.compressed ? kFlagCompressed : 0) |
                                    (m.pinned ? kFlagPinned : 0) |
                                    (m.fence != 0 ? kFlagFence : 0) |
                                    (m.db != 0 ? kFlagDb : 0)));
  PutLe(static_cast<uint64_t>(m.expires_at_ms), 8, out);
  PutLe(m.original_size, 8, out);
  PutLe(m.stamp.hlc, 8, out);
  PutLe(m.stamp.node, 8, out);
  PutLe(m.key.size(), 4, out);
  if (m.fence != 0) PutLe(m.fence, 8, out);
  if (m.db != 0) PutLe(m.db, 4, out);
  out->append(m.key.data(), m.key.size());
  out->append(m.value.data(), m.value.size());
  PutLe(XXH3_64bits(out->data() + body_start, body), 8, out);
}

void EncodeGroupHeader(uint64_t records_bytes, std::string* out) {
  const size_t start = out->size();
  PutLe(kFixedBody, 4, out);
  PutLe(LengthCheck(out->data() + start), 4, out);
  const size_t body_start = out->size();
  out->push_back(static_cast<char>(kGroupKind));
  out->push_back(0);         // type
  out->push_back(0);         // flags
  PutLe(0, 8, out);          // expires_at_ms
  PutLe(records_bytes, 8, out);
  PutLe(0, 8, out);          // stamp
  PutLe(0, 8, out);
  PutLe(0, 4, out);          // key length
  PutLe(XXH3_64bits(out->data() + body_start, kFixedBody), 8, out);
}

bool RecordSize(std::string_view in, uint64_t* size) {
  if (in.size() < kHeader) return false;
  if (static_cast<uint32_t>(GetLe(in.data() + 4, 4)) != LengthCheck(in.data())) return false;
  *size = kHeader + GetLe(in.data(), 4) + kTrailer;
  return true;
}

Decoded DecodeRecord(std::string_view in, Mutation* m, size_t* consumed) {
  if (in.size() < kHeader) return Decoded::kTorn;
  const char* p = in.data();
  if (static_cast<uint32_t>(GetLe(p + 4, 4)) != LengthCheck(p)) return Decoded::kCorrupt;
  const uint64_t body = GetLe(p, 4);
  if (body < kFixedBody) return Decoded::kCorrupt;
  if (in.size() - kHeader < body + kTrailer) return Decoded::kTorn;
  const char* b = p + kHeader;
  if (GetLe(b + body, 8) != XXH3_64bits(b, body)) return Decoded::kCorrupt;
  const uint8_t kind = static_cast<uint8_t>(b[0]);
  const uint8_t type = static_cast<uint8_t>(b[1]);
  const uint8_t flags = static_cast<uint8_t>(b[2]);
  const uint64_t key_len = GetLe(b + 35, 4);
  if (kind == kGroupKind) {
    if (type != 0 || flags != 0 || body != kFixedBody || key_len != 0) return Decoded::kCorrupt;
    *m = Mutation{};
    m->original_size = GetLe(b + 11, 8);
    *consumed = kHeader + body + kTrailer;
    return Decoded::kGroup;
  }
  const uint64_t fence_len =
      ((flags & kFlagFence) != 0 ? 8 : 0) + ((flags & kFlagDb) != 0 ? 4 : 0);
  if (kind < 1 || kind > static_cast<uint8_t>(Mutation::Kind::kFenceMark) + 1 ||
      type > static_cast<uint8_t>(kLastValueType) ||
      (flags & ~(kFlagCompressed | kFlagPinned | kFlagFence | kFlagDb)) != 0 ||
      body - kFixedBody < fence_len || key_len > body - kFixedBody - fence_len) {
    return Decoded::kCorrupt;
  }
  m->kind = static_cast<Mutation::Kind>(kind - 1);
  m->type = static_cast<ValueType>(type);
  m->compressed = (flags & kFlagCompressed) != 0;
  m->pinned = (flags & kFlagPinned) != 0;
  m->expires_at_ms = static_cast<int64_t>(GetLe(b + 3, 8));
  m->original_size = GetLe(b + 11, 8);
  m->stamp.hlc = GetLe(b + 19, 8);
  m->stamp.node = GetLe(b + 27, 8);
  m->fence = (flags & kFlagFence) != 0 ? GetLe(b + kFixedBody, 8) : 0;
  m->db = (flags & kFlagDb) != 0
              ? static_cast<uint32_t>(GetLe(b + kFixedBody + ((flags & kFlagFence) != 0 ? 8 : 0), 4))
              : 0;
  const char* key = b + kFixedBody + fence_len;
  m->key = std::string_view(key, key_len);
  m->value = std::string_view(key + key_len, body - kFixedBody - fence_len - key_len);
  m->version = 0;
  *consumed = kHeader + body + kTrailer;
  return Decoded::kOk;
}

}  // namespace persist
}  // namespace ephpm
