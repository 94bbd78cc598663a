// The values of Redis's aggregate types other than the hash: lists, sets and
// sorted sets.  Private to core/.  Each type has its container, the accounted
// size of one element (deterministic, as EntryMem: the store's total is the
// exact sum of what its entries account), and its replication encoding (the
// Mutation::value of a kSet mutation of that type, also what the log and the
// snapshot keep).
//
// Encodings: a sequence of elements, each a 4-byte little-endian length and
// the bytes; a sorted set's member is followed by its score as the 8 bytes
// of the IEEE double, little-endian.

#ifndef EPHPM_CORE_AGGREGATES_H_
#define EPHPM_CORE_AGGREGATES_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"

namespace ephpm {

// ---- what the allocator hands out ---------------------------------------------
//
// The store's accounting (EntryMem and the element sizes below) models the
// allocations an entry makes, so that used_memory follows the process's
// real growth (tests/store_memory_test.cc compares the two).

// glibc's malloc hands out, for a request of n bytes on a 64-bit system, n
// plus an 8-byte header rounded up to 16 bytes, and at least 32.
constexpr uint64_t MallocChunk(uint64_t n) {
  const uint64_t c = (n + 8 + 15) & ~uint64_t{15};
  return c < 32 ? 32 : c;
}
// A std::string's own allocation: none while it fits inline (libstdc++
// keeps 15 bytes in the object), else a buffer of its size + 1.  That holds
// for a string constructed from its bytes; one grown by assign() or append()
// from a smaller capacity takes at least twice that capacity (30 B from
// empty: a 48 B chunk for a value of 16 to 23 bytes, not 32), so a stored
// value is constructed, then moved into place.
constexpr uint64_t StringHeapMem(uint64_t len) { return len <= 15 ? 0 : MallocChunk(len + 1); }
// An absl hash table grows by doubling at 7/8 full, so it holds between
// 8/7 and 16/7 slots per element: 1.65 on average over its growth.
constexpr uint64_t kSlotsPerEntryPercent = 165;
// An element's share of a node-based table: a pointer and a control byte
// per slot.
constexpr uint64_t kNodeSlotShare = (sizeof(void*) + 1) * kSlotsPerEntryPercent / 100;

// Transparent string hashing for the members and fields of one entry: in
// process only, so abseil's per-process seeded hash is fine; over
// std::string_view (abseil's own string hasher takes absl::string_view,
// which is not std's in this abseil build).
struct FieldHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
};
struct FieldEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// ---- lists -------------------------------------------------------------------

// Both ends in O(1), an index in O(1), as Redis's quicklist.
struct ListValue {
  std::deque<std::string> items;
};

// A string object in a deque block (512 B blocks of 16, a 528 B chunk: 33
// B each) and its share of the block map, plus the string's buffer.
constexpr uint64_t kListElementOverhead = sizeof(std::string) + 2;
inline uint64_t ListElementMem(size_t len) { return kListElementOverhead + StringHeapMem(len); }
// The list's own allocations: the object, the deque's first block map (8
// pointers), and half a block: the part of its last block a list does not
// fill, on average (a short list takes a whole 528 B block).
constexpr uint64_t kListBaseMem =
    MallocChunk(sizeof(ListValue)) + MallocChunk(8 * sizeof(void*)) + MallocChunk(512) / 2;

// ---- sets --------------------------------------------------------------------

// Makes room for `more` elements at the end of v, growing its capacity
// geometrically: a reserve of exactly size() + more on every insert would
// copy the whole vector each time (quadratic over a set's life).
template <typename T>
void ReserveMore(std::vector<T>* v, size_t more) {
  const size_t need = v->size() + more;
  if (need > v->capacity()) v->reserve(std::max(need, 2 * v->capacity()));
}

// Membership in O(1) through `index` (member -> its position in `order`,
// nodes are stable), and a random member in O(1) through `order` (SPOP,
// SRANDMEMBER), from which a removal swaps the last pointer into the gap.
struct SetValue {
  absl::node_hash_map<std::string, uint32_t, FieldHash, FieldEq> index;
  std::vector<const std::string*> order;

  size_t size() const { return order.size(); }
  bool contains(std::string_view m) const { return index.find(m) != index.end(); }
};

// The index's node and slot share, and a pointer in `order` (whose capacity
// runs between 1 and 2 times its size: 1.5 on average).
constexpr uint64_t kSetMemberOverhead = MallocChunk(sizeof(std::pair<const std::string, uint32_t>)) +
                                        kNodeSlotShare + sizeof(void*) * 3 / 2;
inline uint64_t SetMemberMem(size_t len) { return kSetMemberOverhead + StringHeapMem(len); }

// ---- sorted sets -------------------------------------------------------------

// Ordered by (score, member bytes), as Redis's skiplist; the tree keeps
// subtree sizes, so a rank is O(log n) both ways (ZRANK, ZRANGE by index).
// The tree's members are views of the keys of `scores`, whose nodes do not
// move: a member's bytes are kept once, and finding or erasing a tree node
// allocates nothing.
using ZOrder = __gnu_pbds::tree<std::pair<double, std::string_view>, __gnu_pbds::null_type,
                                std::less<std::pair<double, std::string_view>>,
                                __gnu_pbds::rb_tree_tag,
                                __gnu_pbds::tree_order_statistics_node_update>;

struct ZSetValue {
  ZSetValue() = default;
  // `order` refers into `scores`: a copy would refer into the original.
  ZSetValue(const ZSetValue&) = delete;
  ZSetValue& operator=(const ZSetValue&) = delete;

  absl::node_hash_map<std::string, double, FieldHash, FieldEq> scores;
  ZOrder order;

  size_t size() const { return scores.size(); }
};

// A member is kept once (a map node and its slot share) with its score,
// plus a tree node holding the score and a view of it (three links, the
// colour and the subtree size).
constexpr uint64_t kZSetMemberOverhead =
    MallocChunk(sizeof(std::pair<const std::string, double>)) + kNodeSlotShare +
    MallocChunk(sizeof(std::pair<double, std::string_view>) + 4 * sizeof(void*) + sizeof(size_t));
inline uint64_t ZSetMemberMem(size_t len) { return kZSetMemberOverhead + StringHeapMem(len); }

// ---- encodings (aggregates.cc) ---------------------------------------------

std::string EncodeList(const ListValue& l);
std::string EncodeSet(const SetValue& s);
std::string EncodeZSet(const ZSetValue& z);
// The inverses; false on a malformed encoding (a set or sorted set member
// given twice counts as malformed, as does a NaN score).  *elements_mem =
// the sum of the element sizes above.
bool DecodeList(std::string_view in, ListValue* out, uint64_t* elements_mem);
bool DecodeSet(std::string_view in, SetValue* out, uint64_t* elements_mem);
bool DecodeZSet(std::string_view in, ZSetValue* out, uint64_t* elements_mem);

// Container helpers that keep the two halves of a set or sorted set in step.
// They allocate: call them only where an allocation failure is handled.
// Whether m was added (false: already a member).
bool SetAdd(SetValue* s, std::string_view m);
// Whether m was removed (false: not a member).
bool SetRemove(SetValue* s, std::string_view m);
// Sets m's score; whether m was new.
bool ZSetPut(ZSetValue* z, std::string_view m, double score);
// Whether m was removed.
bool ZSetRemove(ZSetValue* z, std::string_view m);

}  // namespace ephpm

#endif  // EPHPM_CORE_AGGREGATES_H_
