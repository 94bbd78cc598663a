#include "wire.h"

#include <cstring>

namespace ephpm {
namespace cluster {

const char* MemberStateName(MemberState s) {
  switch (s) {
    case MemberState::kAlive: return "alive";
    case MemberState::kSuspect: return "suspect";
    case MemberState::kDead: return "dead";
  }
  return "unknown";
}

void Writer::U32(uint32_t v) {
  char b[4];
  EncodeU32(v, b);
  out_.append(b, sizeof b);
}

void Writer::U64(uint64_t v) {
  char b[8];
  EncodeU64(v, b);
  out_.append(b, sizeof b);
}

void Writer::Str(std::string_view s) {
  U32(static_cast<uint32_t>(s.size()));
  out_.append(s.data(), s.size());
}

void Writer::Member(const MemberRecord& m) {
  Str(m.id);
  Str(m.address);
  U64(m.incarnation);
  U8(static_cast<uint8_t>(m.state));
}

void Writer::Mut(const Mutation& m) {
  U8(static_cast<uint8_t>(m.kind));
  Str(m.key);
  U8(static_cast<uint8_t>(m.type));
  Str(m.value);
  U8(m.compressed ? 1 : 0);
  U64(m.original_size);
  I64(m.expires_at_ms);
  U64(m.stamp.hlc);
  U64(m.stamp.node);
  // Flags, appended (every node of a cluster runs the same build): 1 pinned,
  // 2 ephemeral, 4 a fence follows (only when the key carries one, so a
  // mutation without a fence costs no more than before).
  const bool fenced = m.fence != 0;
  U8(static_cast<uint8_t>((m.pinned ? kMutPinned : 0) | (m.ephemeral ? kMutEphemeral : 0) |
                          (fenced ? kMutFenced : 0)));
  if (fenced) U64(m.fence);
}

bool Reader::U8(uint8_t* v) {
  if (in_.empty()) return false;
  *v = static_cast<uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

bool Reader::U32(uint32_t* v) {
  if (in_.size() < 4) return false;
  *v = 0;
  for (int i = 0; i < 4; ++i) *v |= static_cast<uint32_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
  in_.remove_prefix(4);
  return true;
}

bool Reader::U64(uint64_t* v) {
  if (in_.size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) *v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
  in_.remove_prefix(8);
  return true;
}

bool Reader::I64(int64_t* v) {
  uint64_t u = 0;
  if (!U64(&u)) return false;
  *v = static_cast<int64_t>(u);
  return true;
}

bool Reader::Str(std::string_view* s) {
  uint32_t n = 0;
  if (!U32(&n) || in_.size() < n) return false;
  *s = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}

bool Reader::Member(MemberRecord* m) {
  std::string_view id, addr;
  uint8_t state = 0;
  if (!Str(&id) || !Str(&addr) || !U64(&m->incarnation) || !U8(&state) || state > 2) return false;
  m->id.assign(id);
  m->address.assign(addr);
  m->state = static_cast<MemberState>(state);
  return true;
}

bool Reader::Mut(Mutation* m) {
  uint8_t kind = 0, type = 0, compressed = 0, flags = 0;
  if (!U8(&kind) || kind > static_cast<uint8_t>(Mutation::Kind::kFlush)) return false;
  if (!Str(&m->key) || !U8(&type) || type > static_cast<uint8_t>(kLastValueType)) return false;
  if (!Str(&m->value) || !U8(&compressed) || !U64(&m->original_size) || !I64(&m->expires_at_ms) ||
      !U64(&m->stamp.hlc) || !U64(&m->stamp.node) || !U8(&flags) ||
      (flags & ~(kMutPinned | kMutEphemeral | kMutFenced)) != 0) {
    return false;
  }
  m->fence = 0;
  // A fence is written only when it is set: a flagged zero is malformed.
  if ((flags & kMutFenced) != 0 && (!U64(&m->fence) || m->fence == 0)) return false;
  m->kind = static_cast<Mutation::Kind>(kind);
  m->type = static_cast<ValueType>(type);
  m->compressed = compressed != 0;
  m->pinned = (flags & kMutPinned) != 0;
  m->ephemeral = (flags & kMutEphemeral) != 0;
  return true;
}

std::string Frame(MsgType type, uint64_t request_id, std::string_view body,
                  std::string_view tail) {
  // One allocation, the frame's size.
  char header[kFrameHeader];
  EncodeU32(static_cast<uint32_t>(body.size() + tail.size() + kFrameHeader - 4), header);
  header[4] = static_cast<char>(kWireVersion);
  header[5] = static_cast<char>(type);
  EncodeU64(request_id, header + 6);
  std::string out;
  out.reserve(kFrameHeader + body.size() + tail.size());
  out.append(header, sizeof header).append(body).append(tail);
  return out;
}

Header ParseHeader(const char* p) {
  Reader r(std::string_view(p, kFrameHeader));
  Header h{};
  uint32_t len = 0;
  uint8_t type = 0;
  r.U32(&len);
  r.U8(&h.version);
  r.U8(&type);
  r.U64(&h.request_id);
  h.body_length = len >= kFrameHeader - 4 ? len - static_cast<uint32_t>(kFrameHeader - 4) : 0;
  h.type = static_cast<MsgType>(type);
  return h;
}

}  // namespace cluster
}  // namespace ephpm
