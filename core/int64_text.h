// Decimal int64 text as Redis reads and writes it.  Private to core/.

#ifndef EPHPM_CORE_INT64_TEXT_H_
#define EPHPM_CORE_INT64_TEXT_H_

#include <cstdint>
#include <string_view>

namespace ephpm {

// Parses the canonical decimal form of an int64: an optional '-', then
// digits without leading zeros ("0" itself is fine, "-0" is not), nothing
// else, within [INT64_MIN, INT64_MAX].  This is the set of strings INCR
// accepts in Redis.
bool ParseInt64(std::string_view s, int64_t* out);

}  // namespace ephpm

#endif  // EPHPM_CORE_INT64_TEXT_H_
