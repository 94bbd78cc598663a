// The list family of the Store (core/store_lists.cc): each operation's
// result, the accounted memory after every change (the exact sum the
// ListEntryMem/ListElementMem sizes give), WRONGTYPE both ways, expiry, the
// emptied list taking its key with it, and writes refused for memory
// changing nothing.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/store.h"
#include "shard.h"
#include "test_util.h"

using ephpm::ListElementMem;
using ephpm::ListEntryMem;
using ephpm::ManualClock;
using ephpm::Status;
using ephpm::ValueType;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::Pttl;
using ephpm_test::SumOfEntries;

namespace {

using Strings = std::vector<std::string>;

Strings Range(ephpm::Store& s, std::string_view key) {
  Strings out;
  REQUIRE(s.ListRange(key, 0, -1, &out) == Status::kOk);
  return out;
}

// The accounted size of a list without a TTL holding `items` at `key`.
uint64_t ListMem(std::string_view key, const Strings& items, bool ttl = false) {
  uint64_t elements = 0;
  for (const auto& i : items) elements += ListElementMem(i.size());
  return ListEntryMem(key.size(), elements, ttl);
}

bool Exists(ephpm::Store& s, std::string_view key) {
  bool e = false;
  REQUIRE(s.Exists(key, &e) == Status::kOk);
  return e;
}

}  // namespace

TEST_CASE("lists: push, pop, read, and the exact accounting after each", "[store][list]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  CHECK(s->ListPush("l", {"a", "b"}, true, false, &n) == Status::kOk);
  CHECK(n == 2);
  CHECK(Range(*s, "l") == Strings{"b", "a"});
  CHECK(s->Stats().memory_used == ListMem("l", {"b", "a"}));
  CHECK(s->ListPush("l", {"xyz", ""}, false, false, &n) == Status::kOk);
  CHECK(n == 4);
  CHECK(Range(*s, "l") == Strings{"b", "a", "xyz", ""});
  CHECK(s->Stats().memory_used == ListMem("l", {"b", "a", "xyz", ""}));
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("l", &info) == Status::kOk);
  CHECK(info.type == ValueType::kList);
  CHECK(info.value_size == 4);

  // LPUSHX/RPUSHX: only onto an existing list.
  CHECK(s->ListPush("nokey", {"a"}, true, true, &n) == Status::kOk);
  CHECK(n == 0);
  CHECK_FALSE(Exists(*s, "nokey"));
  CHECK(s->ListPush("l", {"front"}, true, true, &n) == Status::kOk);
  CHECK(n == 5);

  CHECK(s->ListLen("l", &n) == Status::kOk);
  CHECK(n == 5);
  CHECK(s->ListLen("nokey", &n) == Status::kOk);
  CHECK(n == 0);
  std::string v;
  CHECK(s->ListIndex("l", 0, &v) == Status::kOk);
  CHECK(v == "front");
  CHECK(s->ListIndex("l", -2, &v) == Status::kOk);
  CHECK(v == "xyz");
  CHECK(s->ListIndex("l", 5, &v) == Status::kNotFound);
  CHECK(s->ListIndex("l", -6, &v) == Status::kNotFound);
  CHECK(s->ListIndex("nokey", 0, &v) == Status::kNotFound);
  Strings out;
  CHECK(s->ListRange("l", -3, 100, &out) == Status::kOk);
  CHECK(out == Strings{"a", "xyz", ""});
  CHECK(s->ListRange("l", 3, 1, &out) == Status::kOk);
  CHECK(out.empty());
  CHECK(s->ListRange("l", INT64_MIN, INT64_MAX, &out) == Status::kOk);
  CHECK(out.size() == 5);

  CHECK(s->ListPop("l", true, 2, &out) == Status::kOk);
  CHECK(out == Strings{"front", "b"});
  CHECK(s->Stats().memory_used == ListMem("l", {"a", "xyz", ""}));
  CHECK(s->ListPop("l", false, 1, &out) == Status::kOk);
  CHECK(out == Strings{""});
  CHECK(s->ListPop("l", false, 0, &out) == Status::kOk);
  CHECK(out.empty());
  CHECK(s->ListPop("nokey", true, 3, &out) == Status::kOk);
  CHECK(out.empty());
  CHECK(s->Stats().memory_used == ListMem("l", {"a", "xyz"}));
  CHECK(s->ListPop("l", false, 100, &out) == Status::kOk);
  CHECK(out == Strings{"xyz", "a"});
  CHECK_FALSE(Exists(*s, "l"));  // the last element took the key with it
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("lists: LSET, LREM, LTRIM, LINSERT, LPOS", "[store][list]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  bool in_range = false;
  REQUIRE(s->ListPush("l", {"a", "b", "a", "c", "a"}, false, false, &n) == Status::kOk);

  CHECK(s->ListSet("l", 1, "longer", &in_range) == Status::kOk);
  CHECK(in_range);
  CHECK(s->ListSet("l", -1, "z", &in_range) == Status::kOk);
  CHECK(in_range);
  CHECK(Range(*s, "l") == Strings{"a", "longer", "a", "c", "z"});
  CHECK(s->Stats().memory_used == ListMem("l", {"a", "longer", "a", "c", "z"}));
  CHECK(s->ListSet("l", 5, "x", &in_range) == Status::kOk);
  CHECK_FALSE(in_range);
  CHECK(s->ListSet("nokey", 0, "x", &in_range) == Status::kNotFound);
  CHECK_FALSE(Exists(*s, "nokey"));

  std::vector<int64_t> pos;
  CHECK(s->ListPos("l", "a", 1, 0, 0, &pos) == Status::kOk);
  CHECK(pos == std::vector<int64_t>{0, 2});
  CHECK(s->ListPos("l", "a", -1, 1, 0, &pos) == Status::kOk);
  CHECK(pos == std::vector<int64_t>{2});
  CHECK(s->ListPos("l", "a", 2, 0, 0, &pos) == Status::kOk);
  CHECK(pos == std::vector<int64_t>{2});
  CHECK(s->ListPos("l", "a", 1, 0, 2, &pos) == Status::kOk);  // MAXLEN 2
  CHECK(pos == std::vector<int64_t>{0});
  CHECK(s->ListPos("l", "a", 3, 0, 0, &pos) == Status::kOk);
  CHECK(pos.empty());
  CHECK(s->ListPos("l", "a", 0, 0, 0, &pos) == Status::kInvalidArgument);

  CHECK(s->ListInsert("l", true, "c", "before-c", &n) == Status::kOk);
  CHECK(n == 6);
  CHECK(s->ListInsert("l", false, "z", "end", &n) == Status::kOk);
  CHECK(n == 7);
  CHECK(s->ListInsert("l", false, "nothing", "x", &n) == Status::kOk);
  CHECK(n == -1);
  CHECK(s->ListInsert("nokey", false, "a", "x", &n) == Status::kOk);
  CHECK(n == 0);
  CHECK_FALSE(Exists(*s, "nokey"));
  const Strings now = {"a", "longer", "a", "before-c", "c", "z", "end"};
  CHECK(Range(*s, "l") == now);
  CHECK(s->Stats().memory_used == ListMem("l", now));

  CHECK(s->ListRem("l", -1, "a", &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(Range(*s, "l") == Strings{"a", "longer", "before-c", "c", "z", "end"});
  CHECK(s->ListRem("l", 0, "zzz", &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(s->ListRem("l", INT64_MIN, "a", &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(s->Stats().memory_used == ListMem("l", {"longer", "before-c", "c", "z", "end"}));

  CHECK(s->ListTrim("l", 1, -2) == Status::kOk);
  CHECK(Range(*s, "l") == Strings{"before-c", "c", "z"});
  CHECK(s->Stats().memory_used == ListMem("l", {"before-c", "c", "z"}));
  CHECK(s->ListTrim("l", 0, -1) == Status::kOk);
  CHECK(Range(*s, "l") == Strings{"before-c", "c", "z"});
  CHECK(s->ListTrim("l", 5, 10) == Status::kOk);  // an empty range removes the key
  CHECK_FALSE(Exists(*s, "l"));
  CHECK(s->Stats().memory_used == 0);

  REQUIRE(s->ListPush("r", {"x", "x"}, false, false, &n) == Status::kOk);
  CHECK(s->ListRem("r", 0, "x", &n) == Status::kOk);
  CHECK(n == 2);
  CHECK_FALSE(Exists(*s, "r"));
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("lists: LMOVE between keys, onto itself, and onto a new key", "[store][list]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  std::string moved;
  REQUIRE(s->ListPush("src", {"1", "2", "3"}, false, false, &n) == Status::kOk);
  CHECK(s->ListMove("src", "dst", true, false, &moved) == Status::kOk);
  CHECK(moved == "1");
  CHECK(s->ListMove("src", "dst", false, true, &moved) == Status::kOk);
  CHECK(moved == "3");
  CHECK(Range(*s, "src") == Strings{"2"});
  CHECK(Range(*s, "dst") == Strings{"3", "1"});
  CHECK(s->Stats().memory_used == ListMem("src", {"2"}) + ListMem("dst", {"3", "1"}));
  CHECK(s->ListMove("src", "dst", true, true, &moved) == Status::kOk);
  CHECK_FALSE(Exists(*s, "src"));
  CHECK(Range(*s, "dst") == Strings{"2", "3", "1"});
  CHECK(s->Stats().memory_used == ListMem("dst", {"2", "3", "1"}));
  CHECK(s->ListMove("src", "dst", true, true, &moved) == Status::kNotFound);

  // A rotation.
  CHECK(s->ListMove("dst", "dst", true, false, &moved) == Status::kOk);
  CHECK(moved == "2");
  CHECK(Range(*s, "dst") == Strings{"3", "1", "2"});
  CHECK(s->ListMove("dst", "dst", false, true, &moved) == Status::kOk);
  CHECK(Range(*s, "dst") == Strings{"2", "3", "1"});
  CHECK(s->ListMove("dst", "dst", true, true, &moved) == Status::kOk);
  CHECK(Range(*s, "dst") == Strings{"2", "3", "1"});
  CHECK(s->Stats().memory_used == ListMem("dst", {"2", "3", "1"}));

  // Many keys, so that source and destination fall on one shard and on two.
  for (int i = 0; i < 64; ++i) {
    const std::string to = "k" + std::to_string(i);
    CHECK(s->ListMove("dst", to, false, true, &moved) == Status::kOk);
    CHECK(s->ListMove(to, "dst", true, true, &moved) == Status::kOk);
    CHECK_FALSE(Exists(*s, to));
  }
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->Stats().memory_used == ListMem("dst", {"2", "3", "1"}));
}

TEST_CASE("lists: WRONGTYPE both ways, and LMOVE pops nothing onto a string",
          "[store][list]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  bool b = false;
  std::string v;
  Strings out;
  std::vector<int64_t> pos;
  REQUIRE(s->Set("str", "v") == Status::kOk);
  CHECK(s->ListPush("str", {"a"}, true, false, &n) == Status::kWrongType);
  CHECK(s->ListPush("str", {"a"}, true, true, &n) == Status::kWrongType);
  CHECK(s->ListPop("str", true, 1, &out) == Status::kWrongType);
  CHECK(s->ListPop("str", true, 0, &out) == Status::kWrongType);
  CHECK(s->ListLen("str", &n) == Status::kWrongType);
  CHECK(s->ListRange("str", 0, -1, &out) == Status::kWrongType);
  CHECK(s->ListIndex("str", 0, &v) == Status::kWrongType);
  CHECK(s->ListSet("str", 0, "x", &b) == Status::kWrongType);
  CHECK(s->ListRem("str", 0, "x", &n) == Status::kWrongType);
  CHECK(s->ListTrim("str", 0, 1) == Status::kWrongType);
  CHECK(s->ListInsert("str", true, "a", "b", &n) == Status::kWrongType);
  CHECK(s->ListPos("str", "a", 1, 0, 0, &pos) == Status::kWrongType);
  CHECK(s->ListMove("str", "dst", true, true, &v) == Status::kWrongType);
  CHECK(s->ListMove("nokey", "str", true, true, &v) == Status::kNotFound);
  REQUIRE(s->ListPush("l", {"a", "b"}, false, false, &n) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  CHECK(s->ListMove("l", "str", true, true, &v) == Status::kWrongType);
  CHECK(Range(*s, "l") == Strings{"a", "b"});  // nothing popped
  CHECK(ephpm_test::GetOr(*s, "str") == "v");
  CHECK(s->Stats().memory_used == used);

  CHECK(s->Get("l", &v) == Status::kWrongType);
  CHECK(s->IncrBy("l", 1, &n) == Status::kWrongType);
  CHECK(s->HSet("l", {{"f", "v"}}, false, &n) == Status::kWrongType);
  CHECK(Range(*s, "l") == Strings{"a", "b"});
  REQUIRE(s->Set("l", "now a string") == Status::kOk);  // SET replaces any type
  CHECK(ephpm_test::GetOr(*s, "l") == "now a string");
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("lists: an expired list is absent; its TTL stays with the writes",
          "[store][list][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  bool b = false;
  Strings out;
  REQUIRE(s->ListPush("l", {"a", "b"}, false, false, &n) == Status::kOk);
  REQUIRE(s->Expire("l", 1000, &b) == Status::kOk);
  CHECK(s->Stats().memory_used == ListMem("l", {"a", "b"}, true));
  CHECK(s->ListPush("l", {"c"}, false, false, &n) == Status::kOk);
  CHECK(Pttl(*s, "l") == 1000);  // a push keeps the TTL, as in Redis
  CHECK(s->ListPop("l", true, 1, &out) == Status::kOk);
  CHECK(s->Stats().memory_used == ListMem("l", {"b", "c"}, true));
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  clock.Advance(1000);
  CHECK(s->ListLen("l", &n) == Status::kOk);
  CHECK(n == 0);
  CHECK(s->ListRange("l", 0, -1, &out) == Status::kOk);
  CHECK(out.empty());
  CHECK(s->ListPush("l", {"x"}, true, true, &n) == Status::kOk);  // LPUSHX: absent
  CHECK(n == 0);
  CHECK(s->Stats().memory_used == 0);  // the write removed the expired entry
  CHECK(s->ListPush("l", {"x"}, true, false, &n) == Status::kOk);
  CHECK(n == 1);
  CHECK(Pttl(*s, "l") == -1);
  CHECK(s->Stats().memory_used == ListMem("l", {"x"}));

  // A list moves with RENAME, TTL and all.
  REQUIRE(s->Expire("l", 500, &b) == Status::kOk);
  CHECK(s->Rename("l", "moved", false, &b) == Status::kOk);
  CHECK(Range(*s, "moved") == Strings{"x"});
  CHECK(Pttl(*s, "moved") == 500);
  CHECK(s->Stats().memory_used == ListMem("moved", {"x"}, true));
  std::string v;
  clock.Advance(500);
  CHECK(s->ListMove("moved", "other", true, true, &v) == Status::kNotFound);
  CHECK_FALSE(Exists(*s, "other"));
  CHECK(s->Stats().memory_used == 0);
}

TEST_CASE("lists: writes refused for memory change nothing", "[store][list][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 2000;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  bool b = false;
  std::string v;
  REQUIRE(s->ListPush("l", {"a", "b"}, false, false, &n) == Status::kOk);
  REQUIRE(s->ListPush("d", {"x"}, false, false, &n) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  const std::string big(3000, 'x');
  CHECK(s->ListPush("l", {"c", big}, true, false, &n) == Status::kOutOfMemory);
  CHECK(s->ListPush("new", {big}, true, false, &n) == Status::kOutOfMemory);
  CHECK_FALSE(Exists(*s, "new"));
  CHECK(s->ListSet("l", 0, big, &b) == Status::kOutOfMemory);
  CHECK(s->ListInsert("l", true, "a", big, &n) == Status::kOutOfMemory);
  CHECK(Range(*s, "l") == Strings{"a", "b"});
  CHECK(s->Stats().memory_used == used);

  // A move that needs a new key past the limit: fill up to just under it.
  const uint64_t room = 2000 - used;
  size_t fill_len = 0;  // the longest element that still fits
  while (ListElementMem(fill_len + 1) <= room) ++fill_len;
  const std::string fill(fill_len, 'f');
  REQUIRE(s->ListPush("d", {fill}, false, false, &n) == Status::kOk);
  const uint64_t full = s->Stats().memory_used;
  CHECK(s->ListMove("l", "a-new-key", true, true, &v) == Status::kOutOfMemory);
  CHECK(Range(*s, "l") == Strings{"a", "b"});
  CHECK_FALSE(Exists(*s, "a-new-key"));
  CHECK(s->Stats().memory_used == full);
  // A move between existing lists does not grow the total: allowed.
  CHECK(s->ListMove("l", "d", true, true, &v) == Status::kOk);
  CHECK(s->Stats().memory_used == full);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("lists: keys and elements past the size limits are refused", "[store][list]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.max_value_size = 16;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  bool b = false;
  std::string v;
  const std::string long_key(ephpm::kMaxKeySize + 1, 'k');
  CHECK(s->ListPush(long_key, {"a"}, true, false, &n) == Status::kInvalidArgument);
  CHECK(s->ListPush("l", {"a", std::string(17, 'x')}, true, false, &n) ==
        Status::kInvalidArgument);
  CHECK_FALSE(Exists(*s, "l"));
  REQUIRE(s->ListPush("l", {"a"}, true, false, &n) == Status::kOk);
  CHECK(s->ListSet("l", 0, std::string(17, 'x'), &b) == Status::kInvalidArgument);
  CHECK(s->ListInsert("l", true, "a", std::string(17, 'x'), &n) == Status::kInvalidArgument);
  CHECK(s->ListMove("l", long_key, true, true, &v) == Status::kInvalidArgument);
  CHECK(Range(*s, "l") == Strings{"a"});
}

TEST_CASE("lists: a restart brings lists back in order; RENAME and LMOVE keep them intact",
          "[store][list][persistence]") {
  ephpm_test::TempDir dir;
  ManualClock clock;
  auto o = NoSweeper();
  o.persistence.data_dir = dir.path;
  int64_t n = 0;
  bool b = false;
  std::string v;
  Strings out;
  {
    auto s = MakeStore(o, &clock);
    REQUIRE(s->ListPush("l", {"a", "b", "c", "d"}, false, false, &n) == Status::kOk);
    REQUIRE(s->ListPop("l", true, 1, &out) == Status::kOk);
    REQUIRE(s->ListSet("l", 0, "B", &b) == Status::kOk);
    REQUIRE(s->ListInsert("l", false, "B", "b2", &n) == Status::kOk);
    REQUIRE(s->ListMove("l", "m", false, true, &v) == Status::kOk);
    REQUIRE(s->ListPush("m", {"m1"}, false, false, &n) == Status::kOk);
    REQUIRE(s->Rename("m", "renamed", false, &b) == Status::kOk);
    REQUIRE(s->ListPush("gone", {"x"}, false, false, &n) == Status::kOk);
    REQUIRE(s->ListRem("gone", 0, "x", &n) == Status::kOk);
    CHECK(Range(*s, "l") == Strings{"B", "b2", "c"});
    CHECK(Range(*s, "renamed") == Strings{"d", "m1"});
    CHECK(s->ListPush("renamed", {"after"}, true, false, &n) == Status::kOk);  // usable
    CHECK(n == 3);
  }
  auto s = MakeStore(o, &clock);
  CHECK(Range(*s, "l") == Strings{"B", "b2", "c"});
  CHECK(Range(*s, "renamed") == Strings{"after", "d", "m1"});
  CHECK_FALSE(Exists(*s, "m"));
  CHECK_FALSE(Exists(*s, "gone"));
  CHECK(s->Stats().memory_used ==
        ListMem("l", {"B", "b2", "c"}) + ListMem("renamed", {"after", "d", "m1"}));
}

// SORT .. STORE's write: the key becomes the list whatever it held, without
// its TTL; no elements deletes it; refused for memory or size, nothing
// changes; a restart brings the list back.
TEST_CASE("lists: ListReplace installs a whole list, or deletes, all or nothing",
          "[store][list][sort]") {
  ephpm_test::TempDir dir;
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 4000;
  o.max_value_size = 64;
  o.persistence.data_dir = dir.path;
  int64_t n = 0;
  bool applied = false;
  {
    auto s = MakeStore(o, &clock);
    REQUIRE(s->Set("k", "old") == Status::kOk);
    REQUIRE(s->Expire("k", 5000, &applied) == Status::kOk);
    REQUIRE(s->ListReplace("k", {"b", "", "a"}) == Status::kOk);
    CHECK(Range(*s, "k") == Strings{"b", "", "a"});
    CHECK(Pttl(*s, "k") == -1);
    CHECK(s->Stats().memory_used == ListMem("k", {"b", "", "a"}));
    REQUIRE(s->ListPush("l", {"x", "y"}, false, false, &n) == Status::kOk);
    REQUIRE(s->ListReplace("l", {"z"}) == Status::kOk);
    CHECK(Range(*s, "l") == Strings{"z"});
    // Refused: past the memory limit, an element past max_value_size, a
    // key past kMaxKeySize.  Nothing changes.
    const uint64_t used = s->Stats().memory_used;
    const std::vector<std::string> many(60, std::string(60, 'm'));
    const std::vector<std::string_view> views(many.begin(), many.end());
    CHECK(s->ListReplace("l", views) == Status::kOutOfMemory);
    CHECK(s->ListReplace("new", views) == Status::kOutOfMemory);
    CHECK(s->ListReplace("l", {"ok", std::string(65, 'x')}) == Status::kInvalidArgument);
    CHECK(s->ListReplace(std::string(ephpm::kMaxKeySize + 1, 'k'), {"a"}) ==
          Status::kInvalidArgument);
    CHECK(Range(*s, "l") == Strings{"z"});
    CHECK_FALSE(Exists(*s, "new"));
    CHECK(s->Stats().memory_used == used);
    // No elements: deleted, or nothing to delete.
    REQUIRE(s->ListReplace("l", {}) == Status::kOk);
    CHECK_FALSE(Exists(*s, "l"));
    REQUIRE(s->ListReplace("nokey", {}) == Status::kOk);
    CHECK_FALSE(Exists(*s, "nokey"));
    CHECK(s->Stats().memory_used == SumOfEntries(*s));
  }
  auto s = MakeStore(o, &clock);
  CHECK(Range(*s, "k") == Strings{"b", "", "a"});
  CHECK(Pttl(*s, "k") == -1);
  CHECK_FALSE(Exists(*s, "l"));
}

TEST_CASE("lists: concurrent pushes, pops and moves lose and duplicate nothing",
          "[store][list][concurrency]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  constexpr int kThreads = 4;
  constexpr int kEach = 2000;
  // Pushers fill q; movers shuttle between q and r (both ends); poppers
  // take from both.  Each thread records what it popped; assertions after.
  std::vector<Strings> popped(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&s, t] {
      for (int i = 0; i < kEach; ++i) {
        int64_t n = 0;
        const std::string v = std::to_string(t) + ":" + std::to_string(i);
        (void)s->ListPush(i % 2 == 0 ? "q" : "r", {v}, t % 2 == 0, false, &n);
      }
    });
    threads.emplace_back([&s, t] {
      std::string moved;
      for (int i = 0; i < kEach; ++i) {
        (void)s->ListMove(i % 2 == 0 ? "q" : "r", i % 2 == 0 ? "r" : "q", t % 2 == 0, i % 3 == 0,
                          &moved);
      }
    });
    threads.emplace_back([&s, &popped, t] {
      Strings out;
      for (int i = 0; i < kEach; ++i) {
        if (s->ListPop(i % 2 == 0 ? "q" : "r", t % 2 == 0, 2, &out) == Status::kOk) {
          popped[static_cast<size_t>(t)].insert(popped[static_cast<size_t>(t)].end(), out.begin(),
                                                out.end());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  Strings all;
  for (const auto& p : popped) all.insert(all.end(), p.begin(), p.end());
  const Strings q = Range(*s, "q"), r = Range(*s, "r");
  all.insert(all.end(), q.begin(), q.end());
  all.insert(all.end(), r.begin(), r.end());
  std::sort(all.begin(), all.end());
  Strings expected;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; ++i) expected.push_back(std::to_string(t) + ":" + std::to_string(i));
  }
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  uint64_t want = 0;
  if (!q.empty()) want += ListMem("q", q);
  if (!r.empty()) want += ListMem("r", r);
  CHECK(s->Stats().memory_used == want);
}
