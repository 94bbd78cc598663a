// Numbers as text, read and written as Redis does, shared by the store and
// the RESP server so that both agree on what a number is.

#ifndef EPHPM_NUMBER_TEXT_H_
#define EPHPM_NUMBER_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace ephpm {

// Parses the canonical decimal form of an int64: an optional '-', then
// digits without leading zeros ("0" itself is fine, "-0" is not), nothing
// else, within [INT64_MIN, INT64_MAX].  This is the set of strings INCR
// accepts in Redis.
bool ParseInt64(std::string_view s, int64_t* out);

// Redis's string2ld: strtold over the text (in the C locale whatever the
// process's locale), refusing an empty text, one of 5 KiB or more, a leading
// space, trailing bytes (strtold stops at a NUL, as in Redis), NaN, and
// overflow.
bool ParseLongDouble(std::string_view s, long double* out);

// Redis's "human" long double format (INCRBYFLOAT): %.17Lf with trailing
// zeros and a bare point removed, "-0" as "0".  REQUIRES: v is finite.
std::string FormatLongDouble(long double v);

}  // namespace ephpm

#endif  // EPHPM_NUMBER_TEXT_H_
