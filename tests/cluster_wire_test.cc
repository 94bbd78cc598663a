// The data plane's encoding of a Mutation: every field survives the trip,
// the lock's pin and fence included, and a truncated mutation is refused.

#include <catch2/catch.hpp>
#include <string>

#include "wire.h"

using ephpm::Mutation;
using ephpm::cluster::Reader;
using ephpm::cluster::Writer;

namespace {

Mutation Sample(bool pinned, bool ephemeral = false, uint64_t fence = 0) {
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
  m.fence = fence;
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
  CHECK(a.fence == b.fence);
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
  bad.back() = 8;  // the flags are 1 (pinned), 2 (ephemeral) and 4 (a fence follows)
  Reader r(bad);
  Mutation m;
  CHECK_FALSE(r.Mut(&m));
}

TEST_CASE("wire: a fence round-trips, on a set and on a delete, after the flags",
          "[cluster][wire]") {
  const uint64_t fence = (uint64_t{1'700'000'000'000} << 16) | 3;
  Mutation del = Sample(false, false, fence);
  del.kind = Mutation::Kind::kDelete;
  del.value = "";
  del.original_size = 0;
  Writer w;
  w.Mut(Sample(true, false, fence));
  w.Mut(del);
  w.Mut(Sample(true, true, ~uint64_t{0}));
  w.Mut(Sample(false));
  Reader r(w.out());
  Mutation a, b, c, d;
  REQUIRE(r.Mut(&a));
  REQUIRE(r.Mut(&b));
  REQUIRE(r.Mut(&c));
  REQUIRE(r.Mut(&d));
  CHECK(r.done());
  CheckSame(a, Sample(true, false, fence));
  CheckSame(b, del);
  CheckSame(c, Sample(true, true, ~uint64_t{0}));
  CheckSame(d, Sample(false));

  // The fence is the last 8 bytes, flagged with 4.
  Writer one;
  one.Mut(Sample(true, false, fence));
  const std::string& bytes = one.out();
  REQUIRE(bytes.size() >= 9);
  CHECK(static_cast<uint8_t>(bytes[bytes.size() - 9]) == (1 | 4));
  Reader tail(std::string_view(bytes).substr(bytes.size() - 8));
  uint64_t got = 0;
  REQUIRE(tail.U64(&got));
  CHECK(got == fence);
  // Cut anywhere, the fenced mutation is refused.
  for (size_t n = 0; n < bytes.size(); ++n) {
    Reader rc(std::string_view(bytes).substr(0, n));
    Mutation m;
    CHECK_FALSE(rc.Mut(&m));
  }
}

TEST_CASE("wire: fence 0 is not written, and a flagged fence of 0 is refused", "[cluster][wire]") {
  Writer plain, fenced;
  plain.Mut(Sample(true));
  fenced.Mut(Sample(true, false, 1));
  CHECK(fenced.out().size() == plain.out().size() + 8);
  CHECK(static_cast<uint8_t>(plain.out().back()) == 1);  // no fence bit

  std::string zero = plain.out();
  zero.back() = static_cast<char>(1 | 4);
  zero.append(8, '\0');
  Reader r(zero);
  Mutation m;
  CHECK_FALSE(r.Mut(&m));
}

TEST_CASE("wire: a mutation's flags with any unknown bit are refused", "[cluster][wire]") {
  Writer w;
  w.Mut(Sample(false));
  for (int bit = 3; bit < 8; ++bit) {
    std::string bad = w.out();
    bad.back() = static_cast<char>(1 << bit);
    bad.append(8, '\x01');  // as if a fence followed
    Reader r(bad);
    Mutation m;
    INFO("bit " << bit);
    CHECK_FALSE(r.Mut(&m));
  }
}
