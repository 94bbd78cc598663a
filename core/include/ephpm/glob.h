// Redis-compatible glob matching (KEYS, SCAN MATCH, HSCAN MATCH).

#ifndef EPHPM_GLOB_H_
#define EPHPM_GLOB_H_

#include <string_view>

namespace ephpm {

// Whether `text` matches `pattern`, byte by byte (binary-safe):
//   *       any run of bytes, including none
//   ?       exactly one byte
//   [abc]   one byte of the set; [^abc] one byte not in it; [a-z] a range
//           (reversed ranges are swapped; bounds compare as signed chars, as
//           in Redis); a class left open runs to the end
//   \x      the byte x literally, also inside a class
// Runs in O(|pattern| * |text|) time, without recursion.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace ephpm

#endif  // EPHPM_GLOB_H_
