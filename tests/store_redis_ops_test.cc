// The store operations the RESP server needs beyond the PHP surface: SET's
// options, multi-key writes, string edits, floats, hashes, conditional
// expiry, RANDOMKEY and SCAN.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::SetOptions;
using ephpm::SetResult;
using ephpm::Status;
using ephpm::Store;
using ephpm::ValueType;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;
using ephpm_test::Pttl;
using ephpm_test::SumOfEntries;
using namespace std::string_literals;

namespace {

}  // namespace

TEST_CASE("SetWith: NX, XX, GET, KEEPTTL and absolute expiries", "[store][set]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  SetResult r;
  SetOptions nx;
  nx.when = SetOptions::When::kIfAbsent;
  SetOptions xx;
  xx.when = SetOptions::When::kIfPresent;

  CHECK(s->SetWith("k", "1", xx, &r) == Status::kOk);
  CHECK_FALSE(r.written);
  CHECK(GetOr(*s, "k") == "<missing>");
  CHECK(s->SetWith("k", "1", nx, &r) == Status::kOk);
  CHECK(r.written);
  CHECK(s->SetWith("k", "2", nx, &r) == Status::kOk);
  CHECK_FALSE(r.written);
  CHECK(s->SetWith("k", "3", xx, &r) == Status::kOk);
  CHECK(r.written);
  CHECK(GetOr(*s, "k") == "3");

  SetOptions get;
  get.get_old = true;
  CHECK(s->SetWith("k", "4", get, &r) == Status::kOk);
  CHECK((r.written && r.had_old && r.old == "3"));
  CHECK(s->SetWith("fresh", "x", get, &r) == Status::kOk);
  CHECK((r.written && !r.had_old));
  get.when = SetOptions::When::kIfAbsent;  // NX GET: the old value, no write
  CHECK(s->SetWith("k", "5", get, &r) == Status::kOk);
  CHECK((!r.written && r.had_old && r.old == "4"));

  SetOptions at;
  at.expiry = SetOptions::Expiry::kAt;
  at.expires_at_ms = clock.NowMs() + 5000;
  CHECK(s->SetWith("k", "6", at, &r) == Status::kOk);
  CHECK(Pttl(*s, "k") == 5000);
  SetOptions keep;
  keep.expiry = SetOptions::Expiry::kKeep;
  clock.Advance(1000);
  CHECK(s->SetWith("k", "7", keep, &r) == Status::kOk);
  CHECK(Pttl(*s, "k") == 4000);
  CHECK(s->SetWith("k", "8", SetOptions{}, &r) == Status::kOk);
  CHECK(Pttl(*s, "k") == -1);  // a plain SET drops the TTL

  at.expires_at_ms = clock.NowMs();  // already past: absent at once
  CHECK(s->SetWith("k", "9", at, &r) == Status::kOk);
  CHECK(GetOr(*s, "k") == "<missing>");

  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  SetOptions get2;
  get2.get_old = true;
  CHECK(s->SetWith("h", "s", get2, &r) == Status::kWrongType);  // nothing written
  CHECK(GetOr(*s, "h") == "<wrongtype>");
  CHECK(s->SetWith("h", "s", SetOptions{}, &r) == Status::kOk);  // SET replaces any type
  CHECK(GetOr(*s, "h") == "s");
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("MSet writes all keys in one step; MSETNX all or nothing", "[store][mset]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  bool written = false;
  REQUIRE(s->Set("ttl", "old", 5000) == Status::kOk);
  CHECK(s->MSet({{"a", "1"}, {"b", "2"}, {"a", "3"}, {"ttl", "new"}}, false, &written) ==
        Status::kOk);
  CHECK(written);
  CHECK(GetOr(*s, "a") == "3");  // the last value of a repeated key
  CHECK(GetOr(*s, "b") == "2");
  CHECK(Pttl(*s, "ttl") == -1);
  CHECK(s->MSet({{"c", "1"}, {"a", "x"}}, true, &written) == Status::kOk);
  CHECK_FALSE(written);
  CHECK(GetOr(*s, "c") == "<missing>");
  CHECK(GetOr(*s, "a") == "3");
  CHECK(s->MSet({{"c", "1"}, {"d", "2"}}, true, &written) == Status::kOk);
  CHECK(written);
  CHECK(s->DbSize() == 5);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->MSet({{std::string(ephpm::kMaxKeySize + 1, 'k'), "v"}}, false, &written) ==
        Status::kInvalidArgument);
}

TEST_CASE("MSet of a new key and an existing key survives the table growing under it",
          "[store][mset]") {
  // Creating the new key's slot rehashes the shard's table whenever it
  // grows; the existing key's iterator, taken before, was then compared
  // after it was invalidated (a read of freed memory, and a trap in Debian's
  // hardened abseil).  One shard, so that every pair shares a table, and
  // enough keys to pass several growth points.
  ManualClock clock;
  auto o = NoSweeper();
  o.shards = 1;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("old", "0") == Status::kOk);
  bool written = false;
  for (int i = 0; i < 300; ++i) {
    const std::string fresh = "new" + std::to_string(i);
    REQUIRE(s->MSet({{fresh, "v"}, {"old", std::to_string(i)}}, false, &written) == Status::kOk);
    REQUIRE(written);
  }
  std::string v;
  CHECK(s->Get("old", &v) == Status::kOk);
  CHECK(v == "299");
  CHECK(s->Get("new150", &v) == Status::kOk);
  CHECK(s->DbSize() == 301);
}
TEST_CASE("MSet refused for memory writes none of the keys", "[store][mset][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 1000;
  auto s = MakeStore(o, &clock);
  bool written = true;
  REQUIRE(s->Set("a", "small") == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  CHECK(s->MSet({{"a", "x"}, {"b", std::string(400, 'b')}, {"c", std::string(400, 'c')}}, false,
                &written) == Status::kOutOfMemory);
  CHECK_FALSE(written);
  CHECK(GetOr(*s, "a") == "small");
  CHECK(GetOr(*s, "b") == "<missing>");
  CHECK(s->Stats().memory_used == used);
}

TEST_CASE("GetDel and GetEx read and change in one step", "[store][getdel]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::string v;
  CHECK(s->GetDel("k", &v) == Status::kNotFound);
  REQUIRE(s->Set("k", "value", 1000) == Status::kOk);
  CHECK(s->GetDel("k", &v) == Status::kOk);
  CHECK(v == "value");
  CHECK(GetOr(*s, "k") == "<missing>");
  CHECK(s->Stats().memory_used == 0);

  REQUIRE(s->Set("k", "value") == Status::kOk);
  CHECK(s->GetEx("k", SetOptions::Expiry::kAt, clock.NowMs() + 3000, &v) == Status::kOk);
  CHECK(v == "value");
  CHECK(Pttl(*s, "k") == 3000);
  CHECK(s->GetEx("k", SetOptions::Expiry::kKeep, 0, &v) == Status::kOk);
  CHECK(Pttl(*s, "k") == 3000);
  CHECK(s->GetEx("k", SetOptions::Expiry::kNone, 0, &v) == Status::kOk);  // PERSIST
  CHECK(Pttl(*s, "k") == -1);
  CHECK(s->GetEx("k", SetOptions::Expiry::kAt, clock.NowMs(), &v) == Status::kOk);
  CHECK(v == "value");
  CHECK(GetOr(*s, "k") == "<missing>");  // a past time deletes after reading
  CHECK(s->GetEx("k", SetOptions::Expiry::kKeep, 0, &v) == Status::kNotFound);

  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  CHECK(s->GetDel("h", &v) == Status::kWrongType);
  CHECK(s->GetEx("h", SetOptions::Expiry::kKeep, 0, &v) == Status::kWrongType);
  CHECK(s->DbSize() == 1);
}

TEST_CASE("Append and SetRange edit strings, keep the TTL, and respect the size limit",
          "[store][append]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.max_value_size = 100;
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 16;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  CHECK(s->Append("k", "Hello", &n) == Status::kOk);
  CHECK(n == 5);
  bool applied = false;
  REQUIRE(s->Expire("k", 5000, &applied) == Status::kOk);
  CHECK(s->Append("k", " World", &n) == Status::kOk);
  CHECK(n == 11);
  CHECK(GetOr(*s, "k") == "Hello World");
  CHECK(Pttl(*s, "k") == 5000);
  CHECK(s->Append("k", std::string(90, 'x'), &n) == Status::kInvalidArgument);
  CHECK(GetOr(*s, "k") == "Hello World");

  CHECK(s->SetRange("k", 6, "Redis", &n) == Status::kOk);
  CHECK(n == 11);
  CHECK(GetOr(*s, "k") == "Hello Redis");
  CHECK(s->SetRange("pad", 3, "x", &n) == Status::kOk);
  CHECK(GetOr(*s, "pad") == "\0\0\0x"s);
  CHECK(s->SetRange("none", 10, "", &n) == Status::kOk);  // nothing to write
  CHECK(n == 0);
  CHECK(GetOr(*s, "none") == "<missing>");
  CHECK(s->SetRange("k", 3, "", &n) == Status::kOk);
  CHECK(n == 11);
  CHECK(s->SetRange("k", 100, "x", &n) == Status::kInvalidArgument);

  const std::string big(64, 'a');  // stored compressed
  REQUIRE(s->Set("z", big) == Status::kOk);
  CHECK(s->Append("z", "b", &n) == Status::kOk);
  CHECK(GetOr(*s, "z") == big + "b");

  int64_t added = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &added) == Status::kOk);
  CHECK(s->Append("h", "x", &n) == Status::kWrongType);
  CHECK(s->SetRange("h", 0, "x", &n) == Status::kWrongType);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("concurrent appends lose nothing", "[store][append][concurrency]") {
  auto s = MakeStore(ephpm::StoreOptions{}, ephpm::SystemClock());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int64_t n = 0;
      for (int i = 0; i < 2000; ++i) (void)s->Append("log", std::string(1, 'a' + t), &n);
    });
  }
  for (auto& th : threads) th.join();
  const std::string v = GetOr(*s, "log");
  CHECK(v.size() == 8000);
  for (char c : {'a', 'b', 'c', 'd'}) CHECK(std::count(v.begin(), v.end(), c) == 2000);
}

TEST_CASE("IncrByFloat reads and writes numbers as Redis does", "[store][float]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::string r;
  REQUIRE(s->Set("f", "10.50", 5000) == Status::kOk);
  CHECK(s->IncrByFloat("f", 0.1L, &r) == Status::kOk);
  CHECK(r == "10.6");
  CHECK(GetOr(*s, "f") == "10.6");
  CHECK(Pttl(*s, "f") == 5000);
  REQUIRE(s->Set("f", "5.0e3") == Status::kOk);
  CHECK(s->IncrByFloat("f", 2.0e2L, &r) == Status::kOk);
  CHECK(r == "5200");
  CHECK(s->IncrByFloat("new", -1.5L, &r) == Status::kOk);
  CHECK(r == "-1.5");
  CHECK(s->IncrByFloat("new", 1.5L, &r) == Status::kOk);
  CHECK(r == "0");
  for (const std::string& bad : {"abc"s, " 1"s, "1x"s, "nan"s, ""s}) {
    INFO(bad);
    REQUIRE(s->Set("bad", bad) == Status::kOk);
    CHECK(s->IncrByFloat("bad", 1, &r) == Status::kNotFloat);
    CHECK(GetOr(*s, "bad") == bad);
  }
  REQUIRE(s->Set("big", "1.1e4932") == Status::kOk);
  CHECK(s->IncrByFloat("big", 1.1e4932L, &r) == Status::kNanOrInfinity);
  CHECK(GetOr(*s, "big") == "1.1e4932");
}

TEST_CASE("hashes: fields, last field removes the key, types do not mix", "[store][hash]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  std::string v;
  bool b = false;
  CHECK(s->HSet("h", {{"a", "1"}, {"b", "2"}, {"a", "3"}}, false, &n) == Status::kOk);
  CHECK(n == 2);
  CHECK(s->HGet("h", "a", &v) == Status::kOk);
  CHECK(v == "3");
  CHECK(s->HGet("h", "zz", &v) == Status::kNotFound);
  CHECK(s->HGet("nokey", "a", &v) == Status::kNotFound);
  CHECK(s->HSet("h", {{"a", "x"}, {"c", "4"}}, true, &n) == Status::kOk);  // HSETNX-like
  CHECK(n == 1);
  CHECK(s->HGet("h", "a", &v) == Status::kOk);
  CHECK(v == "3");
  std::vector<std::optional<std::string>> vals;
  CHECK(s->HMGet("h", {"a", "nope", "c"}, &vals) == Status::kOk);
  CHECK(vals == std::vector<std::optional<std::string>>{"3", std::nullopt, "4"});
  CHECK(s->HLen("h", &n) == Status::kOk);
  CHECK(n == 3);
  CHECK(s->HExists("h", "b", &b) == Status::kOk);
  CHECK(b);
  CHECK(s->HStrLen("h", "a", &n) == Status::kOk);
  CHECK(n == 1);
  std::vector<std::pair<std::string, std::string>> all;
  CHECK(s->HGetAll("h", &all) == Status::kOk);
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::pair<std::string, std::string>>{{"a", "3"}, {"b", "2"}, {"c", "4"}});
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("h", &info) == Status::kOk);
  CHECK(info.type == ValueType::kHash);
  CHECK(info.value_size == 3);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));

  CHECK(s->HIncrBy("h", "a", 10, &n) == Status::kOk);
  CHECK(n == 13);
  CHECK(s->HIncrBy("h", "new", -2, &n) == Status::kOk);
  CHECK(n == -2);
  REQUIRE(s->HSet("h", {{"txt", "abc"}, {"max", "9223372036854775807"}}, false, &n) ==
          Status::kOk);
  CHECK(s->HIncrBy("h", "txt", 1, &n) == Status::kNotInteger);
  CHECK(s->HIncrBy("h", "max", 1, &n) == Status::kOverflow);
  CHECK(s->HIncrByFloat("h", "f", 0.5L, &v) == Status::kOk);
  CHECK(v == "0.5");
  CHECK(s->HIncrByFloat("h", "txt", 1, &v) == Status::kNotFloat);

  CHECK(s->HDel("h", {"a", "b", "c", "nope"}, &n) == Status::kOk);
  CHECK(n == 3);
  CHECK(s->HDel("h", {"new", "txt", "max", "f"}, &n) == Status::kOk);
  CHECK(n == 4);
  bool e = true;
  CHECK(s->Exists("h", &e) == Status::kOk);
  CHECK_FALSE(e);  // the last field took the key with it
  CHECK(s->Stats().memory_used == 0);

  REQUIRE(s->Set("str", "v") == Status::kOk);
  CHECK(s->HSet("str", {{"f", "v"}}, false, &n) == Status::kWrongType);
  CHECK(s->HGet("str", "f", &v) == Status::kWrongType);
  CHECK(s->HGetAll("str", &all) == Status::kWrongType);
  CHECK(s->HDel("str", {"f"}, &n) == Status::kWrongType);
  CHECK(s->HIncrBy("str", "f", 1, &n) == Status::kWrongType);
  REQUIRE(s->HSet("h2", {{"f", "v"}}, false, &n) == Status::kOk);
  CHECK(s->Get("h2", &v) == Status::kWrongType);
  CHECK(s->IncrBy("h2", 1, &n) == Status::kWrongType);
  CHECK(s->DelIfEq("h2", "v") == ephpm::DelIfEqOutcome::kWrongType);
  CHECK(s->SetNx("h2", "v") == ephpm::SetNxOutcome::kExists);
}

TEST_CASE("HRANDFIELD: distinct fields up to the hash, repeats when negative", "[store][hash]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  std::vector<std::string> names, values;
  for (int i = 0; i < 100; ++i) {
    names.push_back("f" + std::to_string(i));
    values.push_back("v" + std::to_string(i));
  }
  for (int i = 0; i < 100; ++i) pairs.emplace_back(names[i], values[i]);
  int64_t n = 0;
  REQUIRE(s->HSet("h", pairs, false, &n) == Status::kOk);
  std::map<std::string, std::string> all;
  for (int i = 0; i < 100; ++i) all[names[i]] = values[i];
  const uint64_t used = s->Stats().memory_used;

  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (int64_t count : {1, 2, 30, 99, 100, 1000}) {
    INFO("count " << count);
    REQUIRE(s->HRandField("h", count, &out) == Status::kOk);
    CHECK(out.size() == static_cast<size_t>(std::min<int64_t>(count, 100)));
    std::set<std::string> distinct;
    for (const auto& [f, v] : out) {
      CHECK(all.count(f) == 1);
      if (all.count(f) == 1) CHECK(all[f] == v);  // each field with its own value
      distinct.insert(f);
      seen.insert(f);
    }
    CHECK(distinct.size() == out.size());
  }
  // Drawn at random: 200 single picks and the partial shuffles reach more
  // than the first fields in the map's order.
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s->HRandField("h", 1, &out) == Status::kOk);
    REQUIRE(out.size() == 1);
    seen.insert(out[0].first);
  }
  CHECK(seen.size() == 100);
  REQUIRE(s->HRandField("h", -1000, &out) == Status::kOk);
  CHECK(out.size() == 1000);
  std::set<std::string> drawn;
  for (const auto& [f, v] : out) {
    CHECK(all.count(f) == 1);
    drawn.insert(f);
  }
  CHECK(drawn.size() < 1000);  // repeats: 100 fields
  REQUIRE(s->HRandField("h", 0, &out) == Status::kOk);
  CHECK(out.empty());
  REQUIRE(s->HRandField("nokey", -5, &out) == Status::kOk);
  CHECK(out.empty());
  REQUIRE(s->HRandField("nokey", 5, &out) == Status::kOk);
  CHECK(out.empty());
  // More draws than memory holds: refused, nothing changed.
  CHECK(s->HRandField("h", -(int64_t{1} << 62), &out) == Status::kOutOfMemory);
  REQUIRE(s->Set("str", "v") == Status::kOk);
  CHECK(s->HRandField("str", 1, &out) == Status::kWrongType);
  CHECK(s->HRandField("str", -1, &out) == Status::kWrongType);
  // A read: the hash and the accounting are as they were.
  std::vector<std::pair<std::string, std::string>> now;
  REQUIRE(s->HGetAll("h", &now) == Status::kOk);
  CHECK(now.size() == 100);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  CHECK(s->Stats().memory_used > used);  // by the string "str" only
  // An expired hash is missing.
  bool applied = false;
  REQUIRE(s->Expire("h", 10, &applied) == Status::kOk);
  CHECK(applied);
  clock.Advance(10);
  REQUIRE(s->HRandField("h", 3, &out) == Status::kOk);
  CHECK(out.empty());
}

TEST_CASE("hashes move with rename, expire like strings, and are replaced by SET",
          "[store][hash]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  int64_t n = 0;
  bool b = false;
  std::string v;
  REQUIRE(s->HSet("h", {{"f", "v"}, {"g", "w"}}, false, &n) == Status::kOk);
  CHECK(s->Expire("h", 1000, &b) == Status::kOk);
  CHECK(s->Rename("h", "moved", false, &b) == Status::kOk);
  CHECK(s->HGet("moved", "g", &v) == Status::kOk);
  CHECK(v == "w");
  CHECK(Pttl(*s, "moved") == 1000);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
  clock.Advance(1000);
  CHECK(s->HGet("moved", "g", &v) == Status::kNotFound);
  s->SweepExpired(100);
  CHECK(s->Stats().memory_used == 0);
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &n) == Status::kOk);
  REQUIRE(s->Set("h", "now a string") == Status::kOk);
  CHECK(GetOr(*s, "h") == "now a string");
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("hash writes refused for memory change nothing", "[store][hash][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 2000;
  auto s = MakeStore(o, &clock);
  int64_t n = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &n) == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  CHECK(s->HSet("h", {{"g", std::string(3000, 'x')}, {"f", "changed"}}, false, &n) ==
        Status::kOutOfMemory);
  std::string v;
  CHECK(s->HGet("h", "f", &v) == Status::kOk);
  CHECK(v == "v");
  CHECK(s->HGet("h", "g", &v) == Status::kNotFound);
  CHECK(s->Stats().memory_used == used);
}

TEST_CASE("SETBIT pads, keeps the TTL, and writes nothing for a bit already so",
          "[store][bits]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.max_value_size = 100;
  auto s = MakeStore(o, &clock);
  int old = -1;
  REQUIRE(s->SetBit("b", 9, true, &old) == Status::kOk);  // a missing key counts as ""
  CHECK(old == 0);
  CHECK(GetOr(*s, "b") == "\x00\x40"s);
  REQUIRE(s->SetBit("b", 0, true, &old) == Status::kOk);
  CHECK(old == 0);
  CHECK(GetOr(*s, "b") == "\x80\x40"s);
  ephpm::EntryInfo before;
  REQUIRE(s->Inspect("b", &before) == Status::kOk);
  REQUIRE(s->SetBit("b", 0, true, &old) == Status::kOk);  // already set
  CHECK(old == 1);
  REQUIRE(s->SetBit("b", 3, false, &old) == Status::kOk);  // already clear
  CHECK(old == 0);
  ephpm::EntryInfo after;
  REQUIRE(s->Inspect("b", &after) == Status::kOk);
  CHECK(after.version == before.version);  // nothing written
  REQUIRE(s->SetBit("b", 9, false, &old) == Status::kOk);
  CHECK(old == 1);
  CHECK(GetOr(*s, "b") == "\x80\x00"s);
  REQUIRE(s->Inspect("b", &after) == Status::kOk);
  CHECK(after.version > before.version);
  // Growing by a clear bit is a write (the string is longer).
  REQUIRE(s->SetBit("b", 23, false, &old) == Status::kOk);
  CHECK(GetOr(*s, "b") == "\x80\x00\x00"s);
  // The TTL stays.
  bool applied = false;
  REQUIRE(s->Expire("b", 5000, &applied) == Status::kOk);
  REQUIRE(s->SetBit("b", 1, true, &old) == Status::kOk);
  CHECK(Pttl(*s, "b") == 5000);
  // Past max_value_size: refused before anything is padded.
  CHECK(s->SetBit("b", 100 * 8, true, &old) == Status::kInvalidArgument);
  CHECK(s->SetBit("b", ~uint64_t{0}, true, &old) == Status::kInvalidArgument);
  REQUIRE(s->SetBit("b", 99 * 8 + 7, true, &old) == Status::kOk);  // the last byte allowed
  std::string v = GetOr(*s, "b");
  CHECK(v.size() == 100);
  CHECK(v.substr(0, 3) == "\xc0\x00\x00"s);
  int64_t n = 0;
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &n) == Status::kOk);
  CHECK(s->SetBit("h", 0, true, &old) == Status::kWrongType);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("BITOP: padding, NOT, an empty result deletes, sources of another type refuse",
          "[store][bits]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  using Op = Store::BitOpKind;
  REQUIRE(s->Set("a", "\x0f\x0f\xff"s) == Status::kOk);
  REQUIRE(s->Set("c", "\xff"s) == Status::kOk);
  int64_t len = -1;
  REQUIRE(s->BitOp(Op::kAnd, "d", {"a", "c"}, &len) == Status::kOk);
  CHECK(len == 3);
  CHECK(GetOr(*s, "d") == "\x0f\x00\x00"s);  // c is zero-padded
  REQUIRE(s->BitOp(Op::kOr, "d", {"a", "c", "nokey"}, &len) == Status::kOk);
  CHECK(GetOr(*s, "d") == "\xff\x0f\xff"s);
  REQUIRE(s->BitOp(Op::kXor, "d", {"a", "c", "a"}, &len) == Status::kOk);
  CHECK(GetOr(*s, "d") == "\xff\x00\x00"s);
  REQUIRE(s->BitOp(Op::kNot, "d", {"c"}, &len) == Status::kOk);
  CHECK(len == 1);
  CHECK(GetOr(*s, "d") == "\x00"s);
  CHECK(s->BitOp(Op::kNot, "d", {"a", "c"}, &len) == Status::kInvalidArgument);
  CHECK(s->BitOp(Op::kAnd, "d", {}, &len) == Status::kInvalidArgument);
  // The result replaces dst whatever it held, without its TTL.
  int64_t n = 0;
  REQUIRE(s->HSet("dst", {{"f", "v"}}, false, &n) == Status::kOk);
  bool applied = false;
  REQUIRE(s->Expire("dst", 5000, &applied) == Status::kOk);
  REQUIRE(s->BitOp(Op::kOr, "dst", {"c"}, &len) == Status::kOk);
  CHECK(GetOr(*s, "dst") == "\xff"s);
  CHECK(Pttl(*s, "dst") == -1);
  // An empty result deletes dst.
  REQUIRE(s->BitOp(Op::kAnd, "dst", {"nokey", "alsonot"}, &len) == Status::kOk);
  CHECK(len == 0);
  std::string v;
  CHECK(s->Get("dst", &v) == Status::kNotFound);
  // A source that is not a string: refused, dst untouched.
  REQUIRE(s->HSet("h", {{"f", "v"}}, false, &n) == Status::kOk);
  CHECK(s->BitOp(Op::kAnd, "d", {"a", "h"}, &len) == Status::kWrongType);
  CHECK(GetOr(*s, "d") == "\x00"s);
  // dst may be a source.
  REQUIRE(s->BitOp(Op::kNot, "a", {"a"}, &len) == Status::kOk);
  CHECK(GetOr(*s, "a") == "\xf0\xf0\x00"s);
  // An expired source counts as missing.
  REQUIRE(s->Set("e", "\xff\xff"s) == Status::kOk);
  REQUIRE(s->Expire("e", 10, &applied) == Status::kOk);
  clock.Advance(10);
  REQUIRE(s->BitOp(Op::kOr, "d", {"e", "c"}, &len) == Status::kOk);
  CHECK(len == 1);
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

TEST_CASE("BITOP refused for memory changes nothing", "[store][bits][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 4000;
  auto s = MakeStore(o, &clock);
  REQUIRE(s->Set("a", std::string(1500, '\x0f')) == Status::kOk);
  REQUIRE(s->Set("d", "old") == Status::kOk);
  const uint64_t used = s->Stats().memory_used;
  int64_t len = 0;
  CHECK(s->BitOp(Store::BitOpKind::kNot, "b", {"a"}, &len) == Status::kOk);
  CHECK(s->BitOp(Store::BitOpKind::kNot, "d", {"a"}, &len) == Status::kOutOfMemory);
  CHECK(GetOr(*s, "d") == "old");
  std::string v;
  CHECK(s->Get("c", &v) == Status::kNotFound);
  CHECK(s->Stats().memory_used > used);  // b only
  CHECK(s->Stats().memory_used == SumOfEntries(*s));
}

// BITOP reads all its sources in one step: a writer keeps "p" and "q" each
// other's complement (MSET, one step; the keys on different shards), so
// their XOR is all ones and their AND all zeros at every instant.  A BITOP
// that read one source, let the writer in, then read the other, would see
// two generations and answer other bytes.
TEST_CASE("BITOP reads its sources in one step against a concurrent writer",
          "[store][bits][concurrency]") {
  auto s = MakeStore(ephpm::StoreOptions{}, ephpm::SystemClock());
  const std::string p = "p", q = ephpm_test::KeyOutside(*s, "q", {p});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::string v(8, '\0'), w(8, '\0');
    bool written = false;
    for (unsigned i = 0; !done.load(std::memory_order_relaxed); ++i) {
      for (size_t b = 0; b < v.size(); ++b) {
        v[b] = static_cast<char>(i * 31 + b * 7);
        w[b] = static_cast<char>(~v[b]);
      }
      (void)s->MSet({{p, v}, {q, w}}, false, &written);
    }
  });
  bool written = false;
  REQUIRE(s->MSet({{p, std::string(8, '\0')}, {q, std::string(8, '\xff')}}, false,
                  &written) == Status::kOk);
  int torn = 0;
  int64_t len = 0;
  for (int i = 0; i < 3000; ++i) {
    if (s->BitOp(Store::BitOpKind::kXor, "x", {p, q}, &len) != Status::kOk ||
        GetOr(*s, "x") != std::string(8, '\xff')) {
      ++torn;
    }
    if (s->BitOp(Store::BitOpKind::kAnd, "a", {q, p}, &len) != Status::kOk ||
        GetOr(*s, "a") != std::string(8, '\0')) {
      ++torn;
    }
  }
  done = true;
  writer.join();
  CHECK(torn == 0);
}

// SETBIT and BITFIELD edit a copy and store it only if no other write got in
// (Store::EditPadded's retry): threads setting their own bits of one key,
// and counting in their own byte of another, lose none of each other's.
TEST_CASE("concurrent SETBITs and padded edits lose nothing", "[store][bits][concurrency]") {
  auto s = MakeStore(ephpm::StoreOptions{}, ephpm::SystemClock());
  constexpr int kThreads = 4, kEach = 1500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int old = 0;
      for (int i = 0; i < kEach; ++i) {
        // Bits t, t+4, ...: the string grows as the threads go.
        (void)s->SetBit("bits", static_cast<uint64_t>(i) * kThreads + t, true, &old);
        // Byte t of "counts" counts this thread's edits, mod 256.
        (void)s->EditPadded("counts", kThreads, [&](bool, std::string* bytes) {
          (*bytes)[t] = static_cast<char>((*bytes)[t] + 1);
          return true;
        });
      }
    });
  }
  for (auto& th : threads) th.join();
  const std::string bits = GetOr(*s, "bits");
  CHECK(bits.size() == kThreads * kEach / 8);
  int64_t set = 0;
  for (unsigned char c : bits) set += __builtin_popcount(c);
  CHECK(set == kThreads * kEach);
  const std::string counts = GetOr(*s, "counts");
  REQUIRE(counts.size() == kThreads);
  for (int t = 0; t < kThreads; ++t) {
    CHECK(static_cast<unsigned char>(counts[t]) == kEach % 256);
  }
}

TEST_CASE("ExpireAtIf applies Redis 7's NX, XX, GT and LT", "[store][ttl]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  const int64_t now = clock.NowMs();
  bool applied = false;
  REQUIRE(s->Set("k", "v") == Status::kOk);  // no TTL: expires "never"
  CHECK(s->ExpireAtIf("k", now + 100, ephpm::kExpireXx, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->ExpireAtIf("k", now + 100, ephpm::kExpireGt, &applied) == Status::kOk);
  CHECK_FALSE(applied);  // nothing is greater than never
  CHECK(s->ExpireAtIf("k", now + 100, ephpm::kExpireLt, &applied) == Status::kOk);
  CHECK(applied);  // anything is less than never
  CHECK(Pttl(*s, "k") == 100);
  CHECK(s->ExpireAtIf("k", now + 200, ephpm::kExpireNx, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->ExpireAtIf("k", now + 50, ephpm::kExpireGt, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->ExpireAtIf("k", now + 200, ephpm::kExpireGt, &applied) == Status::kOk);
  CHECK(applied);
  CHECK(s->ExpireAtIf("k", now + 300, ephpm::kExpireLt, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->ExpireAtIf("k", now + 150, ephpm::kExpireXx, &applied) == Status::kOk);
  CHECK(applied);
  CHECK(Pttl(*s, "k") == 150);
  CHECK(s->ExpireAtIf("k", now + 120, ephpm::kExpireXx | ephpm::kExpireGt, &applied) ==
        Status::kOk);
  CHECK_FALSE(applied);  // XX holds, GT does not
  CHECK(s->ExpireAtIf("k", now + 180, ephpm::kExpireXx | ephpm::kExpireGt, &applied) ==
        Status::kOk);
  CHECK(applied);
  CHECK(s->ExpireAtIf("missing", now + 150, 0, &applied) == Status::kOk);
  CHECK_FALSE(applied);
  CHECK(s->ExpireAtIf("k", now - 1, 0, &applied) == Status::kOk);  // the past deletes
  CHECK(applied);
  CHECK(GetOr(*s, "k") == "<missing>");
}

TEST_CASE("RandomKey returns a live key, or kNotFound", "[store][keys]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  std::string k;
  CHECK(s->RandomKey(&k) == Status::kNotFound);
  REQUIRE(s->Set("dead", "v", 10) == Status::kOk);
  clock.Advance(10);
  CHECK(s->RandomKey(&k) == Status::kNotFound);  // only an expired entry
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) REQUIRE(s->Set("k" + std::to_string(i), "v") == Status::kOk);
  for (int i = 0; i < 500; ++i) {
    REQUIRE(s->RandomKey(&k) == Status::kOk);
    seen.insert(k);
  }
  CHECK(seen.count("dead") == 0);
  CHECK(seen.size() > 10);  // not stuck on one key
}

TEST_CASE("RandomKey picks every key about as often, wherever their shards are",
          "[store][keys]") {
  // Redis's test suite (keyspace.tcl, RANDOMKEY) sets two keys and expects
  // to see both within 100 calls.  Two keys in neighbouring shards are the
  // hard case for a pick by shard: the first of them would follow one
  // empty shard where the second follows 62.
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  const size_t shards = s->ShardsPerDatabase();
  const std::string a = "a";
  std::string b = "b";
  for (int i = 0; s->ShardIndex(0, b) != (s->ShardIndex(0, a) + 1) % shards; ++i) {
    b = "b" + std::to_string(i);
  }
  REQUIRE(s->Set(a, "v") == Status::kOk);
  REQUIRE(s->Set(b, "v") == Status::kOk);
  std::map<std::string, int> seen;
  std::string k;
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(s->RandomKey(&k) == Status::kOk);
    seen[k]++;
  }
  CHECK(seen.size() == 2);
  CHECK(seen[a] > 800);
  CHECK(seen[b] > 800);
  // An expired entry passes its chance on, and is never the answer.
  REQUIRE(s->Set("dead", "v", 10) == Status::kOk);
  clock.Advance(10);
  for (int i = 0; i < 200; ++i) {
    REQUIRE(s->RandomKey(&k) == Status::kOk);
    CHECK(k != "dead");
  }
}

TEST_CASE("Scan returns every key present for the whole walk exactly once", "[store][scan]") {
  auto s = MakeStore(ephpm::StoreOptions{}, ephpm::SystemClock());
  for (int i = 0; i < 5000; ++i) REQUIRE(s->Set("stable:" + std::to_string(i), "v") == Status::kOk);
  int64_t n = 0;
  REQUIRE(s->HSet("hash:1", {{"f", "v"}}, false, &n) == Status::kOk);
  std::atomic<bool> stop{false};
  std::thread churn([&] {  // other keys come and go, tables grow and shrink
    int i = 0;
    while (!stop.load()) {
      int64_t removed = 0;
      (void)s->Set("churn:" + std::to_string(i % 3000), "v");
      (void)s->Del("churn:" + std::to_string((i + 1500) % 3000), &removed);
      ++i;
    }
  });
  std::multiset<std::string> got;
  uint64_t cursor = 0;
  int steps = 0;
  do {
    std::vector<std::string> keys;
    REQUIRE(s->Scan(cursor, "stable:*", 10, std::nullopt, &keys, &cursor) == Status::kOk);
    got.insert(keys.begin(), keys.end());
    ++steps;
  } while (cursor != 0);
  stop.store(true);
  churn.join();
  CHECK(steps > 1);
  CHECK(got.size() == 5000);
  CHECK(std::set<std::string>(got.begin(), got.end()).size() == 5000);  // no duplicates

  std::vector<std::string> hashes;
  REQUIRE(s->Scan(0, "", 100000, ValueType::kHash, &hashes, &cursor) == Status::kOk);
  CHECK(hashes == std::vector<std::string>{"hash:1"});
  CHECK(cursor == 0);
  std::vector<std::string> none;
  CHECK(s->Scan(1u << 30, "", 10, std::nullopt, &none, &cursor) == Status::kOk);
  CHECK(none.empty());
  CHECK(cursor == 0);
}
