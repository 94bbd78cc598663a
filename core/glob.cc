#include "ephpm/glob.h"

#include <cstddef>

namespace ephpm {
namespace {

// Matches one byte `c` against the class starting just after '[' at p[i].
// Returns whether it matched and sets *next to the index after the class.
bool MatchClass(std::string_view p, size_t i, unsigned char c, size_t* next) {
  bool negate = false;
  if (i < p.size() && p[i] == '^') {
    negate = true;
    ++i;
  }
  bool matched = false;
  while (i < p.size() && p[i] != ']') {
    if (p[i] == '\\' && i + 1 < p.size()) {
      if (static_cast<unsigned char>(p[i + 1]) == c) matched = true;
      i += 2;
    } else if (i + 2 < p.size() && p[i + 1] == '-') {
      // Redis compares range bounds as (signed) chars: bytes >= 0x80 sort
      // below ASCII, so [a-\xff] is [\xff-a], which holds '[' but not 'b'.
      signed char lo = static_cast<signed char>(p[i]);
      signed char hi = static_cast<signed char>(p[i + 2]);
      if (lo > hi) std::swap(lo, hi);
      const signed char sc = static_cast<signed char>(c);
      if (sc >= lo && sc <= hi) matched = true;
      i += 3;
    } else {
      if (static_cast<unsigned char>(p[i]) == c) matched = true;
      ++i;
    }
  }
  *next = i < p.size() ? i + 1 : i;  // skip ']' when the class was closed
  return matched != negate;
}

}  // namespace

bool GlobMatch(std::string_view p, std::string_view t) {
  size_t pi = 0, ti = 0;
  // Where to resume after the most recent '*': pattern index after the star
  // and the text index that star currently swallows up to.
  size_t star_p = std::string_view::npos, star_t = 0;
  while (ti < t.size()) {
    if (pi < p.size()) {
      const char pc = p[pi];
      if (pc == '*') {
        while (pi < p.size() && p[pi] == '*') ++pi;  // "**" == "*"
        if (pi == p.size()) return true;
        star_p = pi;
        star_t = ti;
        continue;
      }
      const unsigned char tc = static_cast<unsigned char>(t[ti]);
      size_t next = pi + 1;
      bool ok;
      if (pc == '?') {
        ok = true;
      } else if (pc == '[') {
        ok = MatchClass(p, pi + 1, tc, &next);
      } else if (pc == '\\' && pi + 1 < p.size()) {
        ok = static_cast<unsigned char>(p[pi + 1]) == tc;
        next = pi + 2;
      } else {
        ok = static_cast<unsigned char>(pc) == tc;
      }
      if (ok) {
        pi = next;
        ++ti;
        continue;
      }
    }
    // Mismatch or pattern exhausted: let the last star swallow one more byte.
    if (star_p == std::string_view::npos) return false;
    pi = star_p;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

}  // namespace ephpm
