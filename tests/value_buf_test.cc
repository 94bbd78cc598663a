// An entry's value object (core/value_buf.h): inline up to 15 bytes, on the
// heap beyond in a buffer of exactly the value's size, and the store's
// string paths on both sides of that boundary.

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "compression.h"
#include "ephpm/store.h"
#include "shard.h"
#include "test_util.h"
#include "value_buf.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm::ValueBuf;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

// Bytes a value of length n may hold: every value of a byte, those the
// inline tag uses (0xC0 and up) included.
std::string Bytes(size_t n, char salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>((i * 53 + 0xC0 + static_cast<size_t>(salt)) & 0xFF);
  }
  return s;
}

}  // namespace

TEST_CASE("a ValueBuf holds its bytes, inline up to 15 and on the heap beyond", "[value_buf]") {
  ValueBuf empty;
  CHECK(empty.empty());
  CHECK(empty.is_inline());
  CHECK(empty.view().empty());
  for (size_t n : {0u, 1u, 14u, 15u, 16u, 17u, 24u, 25u, 64u, 65u, 4096u}) {
    INFO("length " << n);
    const std::string bytes = Bytes(n, static_cast<char>(n));
    ValueBuf v(bytes);
    CHECK(v.size() == n);
    CHECK(v.empty() == (n == 0));
    CHECK(v.view() == bytes);
    CHECK(std::string_view(v) == bytes);
    CHECK(v.is_inline() == (n <= ValueBuf::kInline));
    // A heap buffer is exactly the value's size: what ValueHeapMem counts.
    CHECK(v.capacity() == (n <= ValueBuf::kInline ? ValueBuf::kInline : n));
    CHECK(ephpm::ValueHeapMem(n) == (n <= 15 ? 0 : ((n + 8 + 15) & ~size_t{15})));
  }
}

TEST_CASE("a ValueBuf moves its buffer and leaves the source empty", "[value_buf]") {
  for (size_t n : {7u, 15u, 16u, 100u}) {
    INFO("length " << n);
    const std::string bytes = Bytes(n, 'm');
    ValueBuf a(bytes);
    const char* where = a.data();
    ValueBuf b(std::move(a));
    CHECK(b.view() == bytes);
    CHECK(a.empty());  // NOLINT: the moved-from state is specified
    CHECK(a.is_inline());
    if (n > ValueBuf::kInline) CHECK(b.data() == where);  // the buffer moved, not copied

    ValueBuf c(Bytes(40, 'c'));  // a heap buffer the assignment frees
    c = std::move(b);
    CHECK(c.view() == bytes);
    CHECK(b.empty());  // NOLINT
    ValueBuf& same = c;
    c = std::move(same);  // a self-move keeps the bytes
    CHECK(c.view() == bytes);
    c.reset();
    CHECK(c.empty());
    CHECK(c.is_inline());
  }
}

TEST_CASE("Overwrite fills the held buffer, including from a view of its own bytes",
          "[value_buf]") {
  ValueBuf heap(Bytes(64, 'h'));
  const char* where = heap.data();
  const std::string shorter = Bytes(50, 's');
  heap.Overwrite(shorter);
  CHECK(heap.view() == shorter);
  CHECK(heap.data() == where);
  CHECK(heap.capacity() == 64);  // the chunk is still the 64-byte value's
  heap.Overwrite(Bytes(64, 'f'));
  CHECK(heap.view() == Bytes(64, 'f'));
  // Its own tail moved to the front (overlapping ranges).
  const std::string tail = std::string(heap.view().substr(10));
  heap.Overwrite(heap.view().substr(10));
  CHECK(heap.view() == tail);
  // An inline value takes up to 15 bytes, its own included.
  ValueBuf small("abc");
  small.Overwrite("0123456789abcde");
  CHECK(small.view() == "0123456789abcde");
  CHECK(small.is_inline());
  small.Overwrite(small.view().substr(5));
  CHECK(small.view() == "56789abcde");
  small.Overwrite({});
  CHECK(small.empty());
}

TEST_CASE("a ValueBuf refuses a length its two counts cannot hold", "[value_buf]") {
  // Never read: the length is refused before anything is copied.
  const char byte = 'x';
  const std::string_view too_long(&byte, ValueBuf::kMaxSize + 1);
  CHECK_THROWS_AS(ValueBuf(too_long), std::bad_alloc);
}

TEST_CASE("string values of every length up to 40 go through the store's paths intact",
          "[value_buf][store]") {
  for (const bool zstd : {false, true}) {
    INFO((zstd ? "zstd" : "no compression"));
    ManualClock clock;
    auto o = NoSweeper();
    if (zstd) {
      o.compression = ephpm::Compression::kZstd;
      o.compression_threshold = 16;
    }
    auto s = MakeStore(o, &clock);
    for (size_t n = 0; n <= 40; ++n) {
      INFO("length " << n);
      // Compressible (repeated) and incompressible bytes alike.
      for (const std::string& bytes : {Bytes(n, 'v'), std::string(n, 'r')}) {
        const std::string key = "k" + std::to_string(n);
        std::string got;
        REQUIRE(s->Set(key, bytes) == Status::kOk);
        REQUIRE(s->Get(key, &got) == Status::kOk);
        CHECK(got == bytes);
        // An overwrite one byte shorter and one longer (in place or not).
        for (const size_t m : {n == 0 ? 0 : n - 1, n + 1}) {
          const std::string other = Bytes(m, 'o');
          REQUIRE(s->Set(key, other) == Status::kOk);
          REQUIRE(s->Get(key, &got) == Status::kOk);
          CHECK(got == other);
        }
        int64_t length = 0;
        REQUIRE(s->Append(key, "+", &length) == Status::kOk);
        CHECK(static_cast<size_t>(length) == n + 2);
        REQUIRE(s->GetDel(key, &got) == Status::kOk);
        CHECK(got == Bytes(n + 1, 'o') + "+");
        CHECK(s->Get(key, &got) == Status::kNotFound);
      }
    }
    // A counter's text crosses the inline boundary: 15 digits, then 16 to
    // 20 (the longest, INT64_MIN's).
    int64_t result = 0;
    REQUIRE(s->IncrBy("n", 999999999999999, &result) == Status::kOk);
    REQUIRE(s->IncrBy("n", 1, &result) == Status::kOk);
    CHECK(result == 1000000000000000);
    std::string got;
    REQUIRE(s->Get("n", &got) == Status::kOk);
    CHECK(got == "1000000000000000");
    REQUIRE(s->Set("n", "-9223372036854775807") == Status::kOk);
    REQUIRE(s->IncrBy("n", -1, &result) == Status::kOk);
    REQUIRE(s->Get("n", &got) == Status::kOk);
    CHECK(got == "-9223372036854775808");
    CHECK(s->IncrBy("n", -1, &result) == Status::kOverflow);
    REQUIRE(s->Get("n", &got) == Status::kOk);
    CHECK(got == "-9223372036854775808");
    std::string text;
    REQUIRE(s->IncrByFloat("f", 0.1L, &text) == Status::kOk);
    REQUIRE(s->IncrByFloat("f", 12345678901234.5L, &text) == Status::kOk);
    REQUIRE(s->Get("f", &got) == Status::kOk);
    CHECK(got == text);
    CHECK(got.size() > ValueBuf::kInline);
  }
}

TEST_CASE("an entry's aggregate lives in its value object, which frees it", "[value_buf]") {
  // Every step frees what was held before: the ASan build reports a leak
  // or a double free otherwise.
  ephpm::Entry e;
  e.value = ValueBuf(Bytes(40, 's'));
  auto hash = std::make_unique<ephpm::HashFields>();
  (*hash)["f"] = "v";
  e.Hold(std::move(hash));  // the string's buffer goes
  REQUIRE(e.hash() != nullptr);
  CHECK(e.hash()->at("f") == "v");
  CHECK(e.list() == nullptr);
  CHECK(e.set() == nullptr);
  CHECK(e.zset() == nullptr);
  CHECK(e.value.empty());
  CHECK(!e.value.is_heap());
  CHECK(!e.value.is_inline());
  CHECK(e.value.capacity() == 0);
  e.Hold(std::make_unique<ephpm::ListValue>());  // the hash goes
  CHECK(e.hash() == nullptr);
  CHECK(e.list() != nullptr);
  ephpm::Entry moved(std::move(e));  // the list moves with the value
  CHECK(moved.list() != nullptr);
  CHECK(e.list() == nullptr);  // NOLINT: the moved-from state is specified
  moved.value = ValueBuf("short");  // a string replaces it, as SET does
  CHECK(moved.list() == nullptr);
  CHECK(moved.value.view() == "short");
  moved.Hold(std::make_unique<ephpm::ZSetValue>());
  moved.value.reset();
  CHECK(moved.zset() == nullptr);
  moved.Hold(std::make_unique<ephpm::SetValue>());  // freed with the entry
  CHECK(moved.set() != nullptr);
}

TEST_CASE("a compressed entry's original size is its frame's, and a mutation must agree",
          "[value_buf][replication]") {
  const std::string plain(1000, 'z');
  ValueBuf frame;
  REQUIRE(ephpm::ZstdCompressIfSmaller(plain, 3, &frame));
  CHECK(ephpm::ZstdContentSize(frame) == plain.size());
  CHECK(ephpm::ZstdContentSize("not a frame") == UINT64_MAX);
  ephpm::Mutation m;
  m.kind = ephpm::Mutation::Kind::kSet;
  m.key = "k";
  m.type = ephpm::ValueType::kString;
  m.value = frame.view();
  m.compressed = true;
  m.original_size = plain.size();
  ephpm::Entry e;
  REQUIRE(ephpm::EntryFromMutation(m, &e));
  CHECK(e.OriginalSize() == plain.size());
  CHECK(e.value.view() == frame.view());
  // A frame whose header says another size does not load (replication,
  // the log, a snapshot).
  m.original_size = plain.size() + 1;
  ephpm::Entry refused;
  CHECK_FALSE(ephpm::EntryFromMutation(m, &refused));
  // Uncompressed, the size is the value's; an aggregate's is 0.
  ephpm::Entry s;
  s.value = ValueBuf("abc");
  CHECK(s.OriginalSize() == 3);
  s.Hold(std::make_unique<ephpm::SetValue>());
  s.type = ephpm::ValueType::kSet;
  CHECK(s.OriginalSize() == 0);
}
