// Which node decides for a key: hash(routing part of the key) modulo the
// alive members sorted by id.
//
// The routing part is what stands inside the first non-empty {...} of the key
// (Redis Cluster's hash-tag rule), else the whole key: "session:{abc}" and
// "session_lock:{abc}" have one owner.  The hash is XXH3-64 with a fixed
// seed, identical in every process and on every machine (never std::hash or
// absl::Hash, which may differ between builds).

#ifndef EPHPM_CLUSTER_OWNER_H_
#define EPHPM_CLUSTER_OWNER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ephpm {
namespace cluster {

inline constexpr uint64_t kOwnerHashSeed = 0x6570686d6b657973ull;  // "ephmkeys"

// The part of `key` that decides its owner (a view into key).
std::string_view RoutingPart(std::string_view key);

// XXH3-64 of the routing part with kOwnerHashSeed.
uint64_t OwnerHash(std::string_view key);

// The position of key's owner among `members` alive members sorted by id.
// REQUIRES: members > 0.
size_t OwnerIndex(std::string_view key, size_t members);

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_OWNER_H_
