// A string value's bytes as an entry keeps them (Entry::value, a shard's
// spare buffer, a value prepared for a put): 16 bytes where a std::string
// takes 32, which with the aggregate's pointer kept in these same bytes
// (below) makes the map's node (the Key object and the Entry) a 112 B malloc
// chunk where it was 144 (shard.h's Entry).
//
// Up to kInline (15) bytes are held in the object itself, as libstdc++'s
// string does, so a counter or a flag costs no allocation.  A longer value is
// held in a buffer of exactly its size, without a terminating NUL (nothing
// reads a value as a C string), whose malloc chunk is what the accounting
// counts (ValueHeapMem).  Only a move or Overwrite changes the bytes: no
// append, no growth, so a buffer's chunk is known from its capacity.
//
// An entry that holds an aggregate (a hash, list, set or sorted set) holds
// no string bytes: its value object keeps the aggregate's tagged pointer
// instead (shard.h's Aggregate), and frees it as it would a buffer, so the
// entry needs no word of its own for it.
//
// Layout (little-endian, 16 bytes): on the heap, the buffer's pointer, the
// size and the capacity as two 32-bit counts (a value is at most
// kMaxValueSizeLimit, 2^31 bytes, so the capacity's top byte, the object's
// last, is at most 0x80); inline, the bytes and, in the last byte,
// kInlineTag | size; an aggregate, its tagged pointer in the first eight
// bytes and kAggregateTag in the last.  The last byte tells the three apart.

#ifndef EPHPM_CORE_VALUE_BUF_H_
#define EPHPM_CORE_VALUE_BUF_H_

#include <cstdint>
#include <cstring>
#include <new>
#include <string_view>

#include "aggregates.h"  // MallocChunk

namespace ephpm {

// Frees the aggregate a tagged pointer names (shard_ops.cc, beside
// shard.h's Aggregate, which makes such pointers).
void DeleteAggregate(uintptr_t bits) noexcept;

class alignas(8) ValueBuf {
 public:
  static constexpr size_t kInline = 15;
  // The largest size the two 32-bit counts hold with the layout above.
  static constexpr size_t kMaxSize = size_t{1} << 31;

  ValueBuf() noexcept { SetInline(0); }
  // A copy of v, in a buffer of exactly v.size() bytes past kInline.
  // Throws bad_alloc (bad_array_new_length past kMaxSize).
  explicit ValueBuf(std::string_view v) { Init(v); }
  ValueBuf(const ValueBuf&) = delete;
  ValueBuf& operator=(const ValueBuf&) = delete;
  ValueBuf(ValueBuf&& o) noexcept {
    std::memcpy(buf_, o.buf_, sizeof(buf_));
    o.SetInline(0);
  }
  ValueBuf& operator=(ValueBuf&& o) noexcept {
    if (this != &o) {
      Free();
      std::memcpy(buf_, o.buf_, sizeof(buf_));
      o.SetInline(0);
    }
    return *this;
  }
  ~ValueBuf() { Free(); }

  // Where the bytes are: in a buffer of their own, or in the object.  An
  // aggregate is neither (and has no bytes).
  bool is_heap() const { return Tag() < kInlineTag; }
  bool is_inline() const { return (Tag() & ~kSizeMask) == kInlineTag; }
  size_t size() const { return is_heap() ? Count(kSizeAt) : Tag() & kSizeMask; }
  // The bytes the held buffer takes without reallocating: kInline inline,
  // none for an aggregate.
  size_t capacity() const {
    return is_heap() ? Count(kCapacityAt) : is_inline() ? kInline : 0;
  }
  bool empty() const { return size() == 0; }
  const char* data() const { return is_heap() ? HeapPtr() : buf_; }
  std::string_view view() const { return std::string_view(data(), size()); }
  operator std::string_view() const { return view(); }  // NOLINT: a value is its bytes

  // Replaces the bytes with v, which must fit: v.size() <= capacity(), and
  // no aggregate held.  Allocates nothing; v may view these very bytes.
  void Overwrite(std::string_view v) {
    if (is_heap()) {
      if (!v.empty()) std::memmove(HeapPtr(), v.data(), v.size());
      SetCount(kSizeAt, v.size());
      return;
    }
    if (!v.empty()) std::memmove(buf_, v.data(), v.size());
    SetInline(v.size());
  }
  // Frees what is held: empty and inline.
  void reset() noexcept { Free(); }

  // The aggregate's tagged pointer (never 0), freed by DeleteAggregate
  // when replaced or destroyed; what was held before is freed first.
  void HoldAggregate(uintptr_t bits) noexcept {
    Free();
    std::memcpy(buf_, &bits, sizeof(bits));
    buf_[sizeof(buf_) - 1] = static_cast<char>(kAggregateTag);
  }
  // The aggregate's tagged pointer, 0 when none is held.
  uintptr_t aggregate_bits() const {
    if (Tag() != kAggregateTag) return 0;
    uintptr_t bits;
    std::memcpy(&bits, buf_, sizeof(bits));
    return bits;
  }

 private:
  static constexpr uint8_t kInlineTag = 0xC0;  // | the size
  static constexpr uint8_t kSizeMask = 0x0F;
  static constexpr uint8_t kAggregateTag = 0xE0;
  static_assert((kMaxSize >> 24) < kInlineTag, "a heap capacity's top byte is below the tags");
  static constexpr size_t kSizeAt = sizeof(char*);
  static constexpr size_t kCapacityAt = sizeof(char*) + sizeof(uint32_t);

  uint8_t Tag() const { return static_cast<uint8_t>(buf_[sizeof(buf_) - 1]); }
  void SetInline(size_t n) { buf_[sizeof(buf_) - 1] = static_cast<char>(kInlineTag | n); }
  char* HeapPtr() const {
    char* p;
    std::memcpy(&p, buf_, sizeof(p));
    return p;
  }
  size_t Count(size_t at) const {
    uint32_t n;
    std::memcpy(&n, buf_ + at, sizeof(n));
    return n;
  }
  void SetCount(size_t at, size_t n) {
    const uint32_t v = static_cast<uint32_t>(n);
    std::memcpy(buf_ + at, &v, sizeof(v));
  }

  void Init(std::string_view v) {
    if (v.size() <= kInline) {
      if (!v.empty()) std::memcpy(buf_, v.data(), v.size());
      SetInline(v.size());
      return;
    }
    if (v.size() > kMaxSize) throw std::bad_array_new_length();
    char* p = static_cast<char*>(::operator new(v.size()));  // may throw bad_alloc
    std::memcpy(p, v.data(), v.size());
    std::memcpy(buf_, &p, sizeof(p));
    SetCount(kSizeAt, v.size());
    SetCount(kCapacityAt, v.size());  // <= 2^31: the last byte is at most 0x80
  }
  void Free() noexcept {
    if (is_heap()) {
      ::operator delete(HeapPtr());
    } else if (Tag() == kAggregateTag) {
      DeleteAggregate(aggregate_bits());
    }
    SetInline(0);
  }

  // Zeroed first, so that no byte is ever read uninitialized (gcc cannot
  // tell that an inline value's pointer bytes are never read).
  char buf_[16] = {};
};
static_assert(sizeof(ValueBuf) == 16, "the map's node layout counts on it");

// The heap a value of len bytes takes in a ValueBuf: none inline, else the
// malloc chunk of exactly len bytes.
constexpr uint64_t ValueHeapMem(uint64_t len) {
  return len <= ValueBuf::kInline ? 0 : MallocChunk(len);
}

}  // namespace ephpm

#endif  // EPHPM_CORE_VALUE_BUF_H_
