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

constexpr uint64_t kListElementOverhead = sizeof(std::string) + 1;
inline uint64_t ListElementMem(size_t len) { return kListElementOverhead + len; }

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

constexpr uint64_t kSetMemberOverhead =
    sizeof(std::pair<const std::string, uint32_t>) + 2 * sizeof(void*) + 1;
inline uint64_t SetMemberMem(size_t len) { return kSetMemberOverhead + len; }

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

// A member is kept once (a map node) with its score, plus a tree node
// holding the score and a view of it.
constexpr uint64_t kZSetMemberOverhead = sizeof(std::pair<const std::string, double>) +
                                         sizeof(std::pair<double, std::string_view>) +
                                         5 * sizeof(void*) + 2;
inline uint64_t ZSetMemberMem(size_t len) { return kZSetMemberOverhead + len; }

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
