#include "owner.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {
namespace cluster {

std::string_view RoutingPart(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;  // none, or "{}"
  return key.substr(open + 1, close - open - 1);
}

uint64_t OwnerHash(std::string_view key) {
  const std::string_view part = RoutingPart(key);
  return XXH3_64bits_withSeed(part.data(), part.size(), kOwnerHashSeed);
}

size_t OwnerIndex(std::string_view key, size_t members) {
  return static_cast<size_t>(OwnerHash(key) % members);
}

}  // namespace cluster
}  // namespace ephpm
