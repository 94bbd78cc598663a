// The encodings of lists, sets and sorted sets (aggregates.h), and the
// helpers that keep a set's or sorted set's two halves in step.

#include "aggregates.h"

#include <cmath>
#include <cstring>

namespace ephpm {

namespace {

void PutLen(std::string* out, size_t n) {
  const uint32_t v = static_cast<uint32_t>(n);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void PutBytes(std::string* out, std::string_view b) {
  PutLen(out, b.size());
  out->append(b);
}

void PutScore(std::string* out, double d) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// Reads one length-prefixed element from the front of *in.
bool GetBytes(std::string_view* in, std::string_view* b) {
  if (in->size() < 4) return false;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  in->remove_prefix(4);
  if (in->size() < n) return false;
  *b = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

bool GetScore(std::string_view* in, double* d) {
  if (in->size() < 8) return false;
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  in->remove_prefix(8);
  std::memcpy(d, &bits, sizeof *d);
  return !std::isnan(*d);
}

}  // namespace

std::string EncodeList(const ListValue& l) {
  std::string out;
  for (const std::string& e : l.items) PutBytes(&out, e);
  return out;
}

std::string EncodeSet(const SetValue& s) {
  std::string out;
  for (const std::string* m : s.order) PutBytes(&out, *m);
  return out;
}

std::string EncodeZSet(const ZSetValue& z) {
  std::string out;
  for (const auto& [score, member] : z.order) {
    PutBytes(&out, member);
    PutScore(&out, score);
  }
  return out;
}

bool DecodeList(std::string_view in, ListValue* out, uint64_t* elements_mem) {
  *elements_mem = 0;
  while (!in.empty()) {
    std::string_view b;
    if (!GetBytes(&in, &b)) return false;
    out->items.emplace_back(b);
    *elements_mem += ListElementMem(b.size());
  }
  return true;
}

bool DecodeSet(std::string_view in, SetValue* out, uint64_t* elements_mem) {
  *elements_mem = 0;
  while (!in.empty()) {
    std::string_view b;
    if (!GetBytes(&in, &b) || !SetAdd(out, b)) return false;
    *elements_mem += SetMemberMem(b.size());
  }
  return true;
}

bool DecodeZSet(std::string_view in, ZSetValue* out, uint64_t* elements_mem) {
  *elements_mem = 0;
  while (!in.empty()) {
    std::string_view b;
    double score = 0;
    if (!GetBytes(&in, &b) || !GetScore(&in, &score) || !ZSetPut(out, b, score)) return false;
    *elements_mem += ZSetMemberMem(b.size());
  }
  return true;
}

bool SetAdd(SetValue* s, std::string_view m) {
  if (s->contains(m)) return false;
  ReserveMore(&s->order, 1);  // before the insert: nothing to undo if it throws
  auto [it, inserted] = s->index.emplace(std::string(m), static_cast<uint32_t>(s->order.size()));
  s->order.push_back(&it->first);
  return inserted;
}

bool SetRemove(SetValue* s, std::string_view m) {
  auto it = s->index.find(m);
  if (it == s->index.end()) return false;
  const uint32_t pos = it->second;
  const std::string* last = s->order.back();
  s->order[pos] = last;
  s->index.find(*last)->second = pos;
  s->order.pop_back();
  s->index.erase(it);
  return true;
}

bool ZSetPut(ZSetValue* z, std::string_view m, double score) {
  auto it = z->scores.find(m);
  if (it != z->scores.end()) {
    if (it->second == score) return false;
    // Insert the new position first: if that throws, nothing changed.
    const std::string_view member(it->first);
    z->order.insert({score, member});
    z->order.erase({it->second, member});
    it->second = score;
    return false;
  }
  auto added = z->scores.emplace(std::string(m), score).first;
  try {
    z->order.insert({score, std::string_view(added->first)});
  } catch (...) {
    z->scores.erase(added);
    throw;
  }
  return true;
}

bool ZSetRemove(ZSetValue* z, std::string_view m) {
  auto it = z->scores.find(m);
  if (it == z->scores.end()) return false;
  z->order.erase({it->second, std::string_view(it->first)});
  z->scores.erase(it);
  return true;
}

}  // namespace ephpm
