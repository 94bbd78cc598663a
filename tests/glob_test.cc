#include <catch2/catch.hpp>
#include <string>

#include "ephpm/glob.h"

using ephpm::GlobMatch;
using namespace std::string_literals;

TEST_CASE("glob: literals, ? and *", "[glob]") {
  CHECK(GlobMatch("", ""));
  CHECK_FALSE(GlobMatch("", "a"));
  CHECK(GlobMatch("abc", "abc"));
  CHECK_FALSE(GlobMatch("abc", "abd"));
  CHECK_FALSE(GlobMatch("abc", "abcd"));
  CHECK(GlobMatch("a?c", "abc"));
  CHECK_FALSE(GlobMatch("a?c", "ac"));
  CHECK(GlobMatch("*", ""));
  CHECK(GlobMatch("*", "anything"));
  CHECK(GlobMatch("user:*", "user:42"));
  CHECK_FALSE(GlobMatch("user:*", "session:42"));
  CHECK(GlobMatch("*:42", "user:42"));
  CHECK(GlobMatch("a*b*c", "aXXbYYc"));
  CHECK(GlobMatch("a*b*c", "abc"));
  CHECK_FALSE(GlobMatch("a*b*c", "aXXbYY"));
  CHECK(GlobMatch("**x", "x"));
  CHECK(GlobMatch("h*llo", "hllo"));
  CHECK(GlobMatch("*a", "aaaa"));
}

TEST_CASE("glob: classes, ranges, negation and escapes", "[glob]") {
  CHECK(GlobMatch("h[ae]llo", "hello"));
  CHECK(GlobMatch("h[ae]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[ae]llo", "hillo"));
  CHECK(GlobMatch("h[^e]llo", "hallo"));
  CHECK_FALSE(GlobMatch("h[^e]llo", "hello"));
  CHECK(GlobMatch("h[a-b]llo", "hbllo"));
  CHECK(GlobMatch("h[b-a]llo", "hallo"));  // reversed range is swapped
  CHECK_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
  CHECK(GlobMatch("\\*", "*"));
  CHECK_FALSE(GlobMatch("\\*", "a"));
  CHECK(GlobMatch("a\\?", "a?"));
  CHECK(GlobMatch("[\\]]", "]"));
  CHECK(GlobMatch("[a", "a"));    // a class left open runs to the end
  CHECK_FALSE(GlobMatch("[", "a"));
}

TEST_CASE("glob: binary-safe, NUL and high bytes", "[glob]") {
  CHECK(GlobMatch("a\0*"s, "a\0bc"s));
  CHECK_FALSE(GlobMatch("a\0*"s, "abc"s));
  CHECK(GlobMatch("?"s, "\xff"s));
  CHECK(GlobMatch("[\x80-\xff]"s, "\xc3"s));
}

TEST_CASE("glob: pathological patterns finish quickly", "[glob]") {
  // Exponential for a naive recursive matcher; linear backtracking here.
  const std::string text(5000, 'a');
  CHECK_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*b", text));
  CHECK(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a", text));
}
