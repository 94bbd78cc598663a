#include "ephpm/number_text.h"

#include <locale.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ephpm {
namespace {

constexpr size_t kMaxLongDoubleChars = 5 * 1024;

locale_t CLocale() {
  static const locale_t c = newlocale(LC_NUMERIC_MASK, "C", static_cast<locale_t>(0));
  return c;
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative) i = 1;
  if (i == s.size()) return false;
  if (s[i] == '0') {
    if (s.size() == 1) {
      *out = 0;
      return true;
    }
    return false;  // leading zero, or "-0"
  }
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (v > limit) return false;
  *out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// Redis's string2ld: strtold over the whole text, no leading space, no NaN,
// no overflow.  strtold stops at a NUL: a text with a NUL inside ("1\0") is
// not a number (Redis 7.0 checks that the parse used every byte).
bool ParseLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() >= kMaxLongDoubleChars) return false;
  char buf[kMaxLongDoubleChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const long double v = strtold_l(buf, &end, CLocale());
  if (end != buf + s.size()) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || std::fpclassify(v) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(v)) return false;
  *out = v;
  return true;
}

// Redis's "human" long double format: 17 digits after the point, trailing
// zeros (and a bare point) removed, "-0" as "0".
std::string FormatLongDouble(long double v) {
  char buf[kMaxLongDoubleChars];
  const locale_t old = uselocale(CLocale());
  int n = std::snprintf(buf, sizeof buf, "%.17Lf", v);
  uselocale(old);
  if (n < 0 || static_cast<size_t>(n) >= sizeof buf) return "0";  // not reached: finite values fit
  if (std::memchr(buf, '.', static_cast<size_t>(n)) != nullptr) {
    while (buf[n - 1] == '0') --n;
    if (buf[n - 1] == '.') --n;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, static_cast<size_t>(n));
}


}  // namespace ephpm
