// The map's key object (core/include/ephpm/key.h): inline up to 30 bytes,
// on the heap beyond, and the store's behaviour on both sides of that
// boundary.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ephpm/store.h"
#include "ephpm/key.h"
#include "test_util.h"

using ephpm::Key;
using ephpm::ManualClock;
using ephpm::Status;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

// Bytes a key of length n may hold: every value of a byte, NULs included.
std::string Bytes(size_t n, char salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 37 + static_cast<size_t>(salt)) & 0xFF);
  return s;
}

}  // namespace

TEST_CASE("a Key holds its bytes, inline up to 30 and on the heap beyond", "[key]") {
  for (size_t n : {0u, 1u, 15u, 16u, 29u, 30u, 31u, 32u, 255u, 256u, 4096u}) {
    INFO("length " << n);
    const std::string bytes = Bytes(n, 'a');
    Key k(bytes);
    CHECK(k.size() == n);
    CHECK(k.empty() == (n == 0));
    CHECK(k.view() == bytes);
    CHECK(k.str() == bytes);
    CHECK(k.is_inline() == (n <= Key::kInline));
    if (k.is_inline()) {
      // Inline means inside the object itself.
      const char* obj = reinterpret_cast<const char*>(&k);
      CHECK((k.data() >= obj && k.data() + n <= obj + sizeof(Key)));
    }

    Key copy(k);
    CHECK(copy.view() == bytes);
    CHECK(copy == k);
    if (n > 0) CHECK(copy.data() != k.data());  // its own bytes

    Key moved(std::move(copy));
    CHECK(moved.view() == bytes);
    CHECK(copy.empty());  // NOLINT: a moved-from Key is empty and usable
    copy = moved;         // and can be assigned again
    CHECK(copy.view() == bytes);
  }
}

TEST_CASE("Key assignment between inline and heap keys keeps both sides right", "[key]") {
  const std::string small = Bytes(7, 'x'), edge = Bytes(30, 'y'), big = Bytes(100, 'z');
  Key a(small), b(big), c(edge);
  a = b;  // inline <- heap
  CHECK(a.view() == big);
  CHECK(b.view() == big);
  b = c;  // heap <- inline
  CHECK(b.view() == edge);
  a = std::move(b);  // heap <- inline, by move
  CHECK(a.view() == edge);
  CHECK(b.empty());
  b = Key(big);  // empty <- heap, by move
  CHECK(b.view() == big);
  const Key& same = b;  // an alias, so the compiler sees no self-assignment
  b = same;             // but the operator does, and must keep the bytes
  CHECK(b.view() == big);
  CHECK((Key(small) < Key(big)) == (std::string_view(small) < std::string_view(big)));
  CHECK(Key(small) == std::string_view(small));
}

TEST_CASE("Key's default and assign, including from a view of its own bytes", "[key]") {
  const std::string small = Bytes(7, 'x'), edge = Bytes(30, 'y'), big = Bytes(100, 'z');
  Key k;
  CHECK(k.empty());
  CHECK(k.is_inline());
  CHECK(k.view().empty());
  k.assign(big);  // empty -> heap
  CHECK(k.view() == big);
  CHECK_FALSE(k.is_inline());
  k.assign(edge);  // heap -> inline: the heap bytes are freed (ASan would see a leak)
  CHECK(k.view() == edge);
  CHECK(k.is_inline());
  k.assign(small);
  CHECK(k.view() == small);
  // A view into the key itself: the new bytes are read before the old go.
  k.assign(big);
  k.assign(k.view().substr(10, 50));
  CHECK(k.view() == std::string_view(big).substr(10, 50));
  k.assign(k.view().substr(5, 20));  // heap -> inline, from its own heap bytes
  CHECK(k.view() == std::string_view(big).substr(15, 20));
  k.assign(k.view().substr(1));  // inline -> inline, overlapping
  CHECK(k.view() == std::string_view(big).substr(16, 19));
  k.assign(std::string_view());
  CHECK(k.empty());
}

TEST_CASE("the store keeps keys on both sides of the inline boundary apart and whole",
          "[key][store]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  // Keys that differ only in their last byte, or only in length, at the
  // lengths where a Key changes representation.
  std::vector<std::string> keys;
  for (size_t n : {1u, 15u, 16u, 29u, 30u, 31u, 32u, 64u}) {
    keys.push_back(std::string(n, 'k'));
    std::string other(n, 'k');
    other.back() = 'K';
    keys.push_back(other);
  }
  for (size_t n : {30u, 31u}) {  // NULs inside, inline and on the heap
    std::string nuls(n, '\0');
    nuls[0] = 'z';
    nuls[n / 2] = 'z';
    keys.push_back(nuls);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(s->Set(keys[i], "v" + std::to_string(i), 0) == Status::kOk);
  }
  REQUIRE(s->DbSize() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string v;
    INFO("key length " << keys[i].size());
    REQUIRE(s->Get(keys[i], &v) == Status::kOk);
    CHECK(v == "v" + std::to_string(i));
  }

  std::vector<std::string> listed;
  REQUIRE(s->Keys("*", &listed) == Status::kOk);
  std::vector<std::string> want = keys;
  std::sort(listed.begin(), listed.end());
  std::sort(want.begin(), want.end());
  CHECK(listed == want);

  // Rename across the boundary both ways: the new node's key is the new name.
  bool renamed = false;
  const std::string inline_name(30, 'r'), heap_name(31, 'r');
  REQUIRE(s->Rename(std::string(16, 'k'), heap_name, false, &renamed) == Status::kOk);
  CHECK(renamed);
  REQUIRE(s->Rename(std::string(64, 'k'), inline_name, false, &renamed) == Status::kOk);
  CHECK(renamed);
  std::string v;
  CHECK(s->Get(heap_name, &v) == Status::kOk);
  CHECK(s->Get(inline_name, &v) == Status::kOk);
  CHECK(s->Get(std::string(16, 'k'), &v) == Status::kNotFound);
  CHECK(s->Get(std::string(64, 'k'), &v) == Status::kNotFound);

  // The expiry index points at the key in the map's node: expiring keys of
  // both kinds find their entries and leave nothing behind.
  bool applied = false;
  CHECK(s->Expire(heap_name, 1000, &applied) == Status::kOk);
  CHECK(applied);
  CHECK(s->Expire(inline_name, 2000, &applied) == Status::kOk);
  CHECK(applied);
  clock.Advance(1500);
  CHECK(s->Get(heap_name, &v) == Status::kNotFound);
  CHECK(s->Get(inline_name, &v) == Status::kOk);
  clock.Advance(1000);
  CHECK(s->Get(inline_name, &v) == Status::kNotFound);

  int64_t removed = 0;
  for (const std::string& k : keys) REQUIRE(s->Del(k, &removed) == Status::kOk);
  CHECK(s->DbSize() == 0);
  CHECK(s->Stats().memory_used == 0);
}
