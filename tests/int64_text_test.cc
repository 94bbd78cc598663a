#include <catch2/catch.hpp>
#include <cstdint>

#include "int64_text.h"

using ephpm::ParseInt64;

TEST_CASE("ParseInt64 accepts canonical int64 text only", "[int]") {
  int64_t v = 7;
  CHECK((ParseInt64("0", &v) && v == 0));
  CHECK((ParseInt64("42", &v) && v == 42));
  CHECK((ParseInt64("-42", &v) && v == -42));
  CHECK((ParseInt64("9223372036854775807", &v) && v == INT64_MAX));
  CHECK((ParseInt64("-9223372036854775808", &v) && v == INT64_MIN));
  v = 7;
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "01", "-0", "00", "1.0", "1e3", "abc",
                          "9223372036854775808", "-9223372036854775809",
                          "99999999999999999999", "123456789012345678901"}) {
    INFO(bad);
    CHECK_FALSE(ParseInt64(bad, &v));
  }
  CHECK(v == 7);  // untouched on failure
}
