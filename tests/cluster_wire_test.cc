// The data plane's encoding of a Mutation: every field survives the trip,
// the lock's pin included, and a truncated mutation is refused.

#include <catch2/catch.hpp>
#include <string>

#include "wire.h"

using ephpm::Mutation;
using ephpm::cluster::Reader;
using ephpm::cluster::Writer;

namespace {

Mutation Sample(bool pinned, bool ephemeral = false) {
  Mutation m;
  m.kind = Mutation::Kind::kSet;
  m.key = "lock:{s1}";
  m.type = ephpm::ValueType::kString;
  m.value = "0123456789abcdef0123456789abcdef";
  m.compressed = false;
  m.original_size = 32;
  m.expires_at_ms = 1'700'000'030'000;
  m.stamp = ephpm::Stamp{(uint64_t{1'700'000'000'000} << 16) | 7, 0xfeedu};
  m.pinned = pinned;
  m.ephemeral = ephemeral;
  return m;
}

void CheckSame(const Mutation& a, const Mutation& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.key == b.key);
  CHECK(a.type == b.type);
  CHECK(a.value == b.value);
  CHECK(a.compressed == b.compressed);
  CHECK(a.original_size == b.original_size);
  CHECK(a.expires_at_ms == b.expires_at_ms);
  CHECK(a.stamp == b.stamp);
  CHECK(a.pinned == b.pinned);
  CHECK(a.ephemeral == b.ephemeral);
}

}  // namespace

TEST_CASE("wire: a mutation round-trips with its pin, back to back with another",
          "[cluster][wire]") {
  Writer w;
  w.Mut(Sample(true));
  w.Mut(Sample(false));
  w.Mut(Sample(true, /*ephemeral=*/true));
  Reader r(w.out());
  Mutation a, b, c;
  REQUIRE(r.Mut(&a));
  REQUIRE(r.Mut(&b));
  REQUIRE(r.Mut(&c));
  CHECK(r.done());
  CheckSame(a, Sample(true));
  CheckSame(b, Sample(false));
  CheckSame(c, Sample(true, true));
}

TEST_CASE("wire: a truncated or malformed mutation is refused", "[cluster][wire]") {
  Writer w;
  w.Mut(Sample(true));
  const std::string whole = w.out();
  for (size_t n = 0; n < whole.size(); ++n) {
    Reader r(std::string_view(whole).substr(0, n));
    Mutation m;
    CHECK_FALSE(r.Mut(&m));
  }
  std::string bad = whole;
  bad.back() = 4;  // the flags are 1 (pinned) and 2 (ephemeral)
  Reader r(bad);
  Mutation m;
  CHECK_FALSE(r.Mut(&m));
}
