// The crash test's judge on hand-made histories: each loss and each value
// nobody wrote it must find, and the legal outcomes it must pass.

#include "persist_checker.h"

#include <catch2/catch.hpp>
#include <string>

using namespace ephpm_fault;

namespace {

constexpr int64_t kMs = 1000;  // microseconds
constexpr int64_t kSlop = 500 * kMs;
constexpr int64_t kKill = 10000 * kMs;

KeyState Str(const std::string& v) {
  KeyState s;
  s.exists = true;
  s.value = v;
  return s;
}

KeyState WithTtl(KeyState s, int64_t lo_ms, int64_t hi_ms) {
  s.has_ttl = true;
  s.expiry_lo_us = lo_ms * kMs;
  s.expiry_hi_us = hi_ms * kMs;
  return s;
}

KeyOp Op(const KeyState& after, int64_t acked_ms) {
  KeyOp op;
  op.what = "op@" + std::to_string(acked_ms);
  op.after = after;
  op.sent_us = (acked_ms - 1) * kMs;
  op.acked = acked_ms > 0;
  op.acked_us = acked_ms * kMs;
  return op;
}

// "k": SET a (acked at 1 s), SET b (acked at 9 s), SET c (no reply).
std::map<std::string, KeyHistory> ThreeSets() {
  KeyHistory h;
  h.ops = {Op(Str("a"), 1000), Op(Str("b"), 9000), Op(Str("c"), 0)};
  return {{"k", h}};
}

CrashVerdict Judge(const std::map<std::string, KeyHistory>& hs, const KeyState& got,
                   std::vector<std::string> present = {"k"}) {
  return JudgeCrash(hs, {{"k", got}}, present, kKill, kSlop);
}

bool Violated(const CrashVerdict& v, bool always) {
  std::string why;
  return CrashViolated(v, always, 2000 * kMs, &why);
}

}  // namespace

TEST_CASE("the last acknowledged value after a crash loses nothing", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), Str("b"));
  CHECK(v.acked == 2);
  CHECK(v.unacked == 1);
  CHECK(v.lost == 0);
  CHECK(v.unacked_landed == 0);
  CHECK_FALSE(Violated(v, true));
}

TEST_CASE("an unacknowledged write that landed is allowed", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), Str("c"));
  CHECK(v.lost == 0);
  CHECK(v.unacked_landed == 1);
  CHECK_FALSE(Violated(v, true));
}

TEST_CASE("an older acknowledged value is a loss, fatal with always", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), Str("a"));
  CHECK(v.lost == 1);
  CHECK(v.lost_keys == 1);
  CHECK(v.window_us == 1000 * kMs);  // b was acknowledged 1 s before the kill
  CHECK(Violated(v, true));
  CHECK_FALSE(Violated(v, false));  // within everysec's 2 s
}

TEST_CASE("a loss older than the window fails everysec", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), KeyState{});  // absent: a and b lost
  CHECK(v.lost == 2);
  CHECK(v.window_us == 9000 * kMs);  // a, acknowledged 9 s before the kill
  CHECK(v.window_key == "k");
  CHECK(Violated(v, false));
  std::string why;
  CHECK(CrashViolated(v, false, 10000 * kMs, &why) == false);
}

TEST_CASE("the window is the earliest lost acknowledgement over all keys", "[fault][persist]") {
  std::map<std::string, KeyHistory> hs = ThreeSets();
  KeyHistory other;
  other.ops = {Op(Str("x"), 9500), Op(Str("y"), 9900)};
  hs["other"] = other;
  // k lost b (acked 9 s), other lost x and y (9.5 s, 9.9 s).
  const CrashVerdict v =
      JudgeCrash(hs, {{"k", Str("a")}, {"other", KeyState{}}}, {"k"}, kKill, kSlop);
  CHECK(v.lost == 3);
  CHECK(v.lost_keys == 2);
  CHECK(v.window_us == 1000 * kMs);
  CHECK(v.window_key == "k");
}

TEST_CASE("a value nobody wrote fails every mode", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), Str("zz"));
  CHECK(v.never_written_count == 1);
  CHECK(v.lost == 0);
  CHECK(Violated(v, true));
  CHECK(Violated(v, false));
}

TEST_CASE("the base holds when nothing was written this iteration", "[fault][persist]") {
  KeyHistory h;
  h.base = Str("old");
  std::map<std::string, KeyHistory> hs = {{"k", h}};
  CHECK_FALSE(Violated(Judge(hs, Str("old")), true));
  CHECK(Judge(hs, KeyState{}).never_written_count == 1);  // vanished without a DEL
}

TEST_CASE("a deleted key that comes back is a lost delete", "[fault][persist]") {
  KeyHistory h;
  h.base = Str("old");
  h.ops = {Op(KeyState{}, 9800)};  // DEL, acknowledged 200 ms before the kill
  std::map<std::string, KeyHistory> hs = {{"k", h}};
  const CrashVerdict v = Judge(hs, Str("old"));
  CHECK(v.lost == 1);
  CHECK(v.window_us == 200 * kMs);
  CHECK(Violated(v, true));
  CHECK_FALSE(Violated(v, false));
  CHECK(Judge(hs, KeyState{}).lost == 0);
}

TEST_CASE("a TTL must come back with its expiry", "[fault][persist]") {
  KeyHistory h;
  h.base = Str("v");
  h.ops = {Op(WithTtl(Str("v"), 100000, 100010), 9000)};  // EXPIRE
  std::map<std::string, KeyHistory> hs = {{"k", h}};
  CHECK(Judge(hs, WithTtl(Str("v"), 100200, 100300)).lost == 0);                 // within the slop
  CHECK(Judge(hs, WithTtl(Str("v"), 101000, 101001)).never_written_count == 1);  // 1 s late
  CHECK(Judge(hs, WithTtl(Str("v"), 90000, 90001)).never_written_count == 1);    // early
  // Without its TTL the key is the base: the EXPIRE was lost.
  const CrashVerdict lost = Judge(hs, Str("v"));
  CHECK(lost.lost == 1);
  CHECK(Violated(lost, true));
}

TEST_CASE("hash fields are compared whole", "[fault][persist]") {
  KeyState one, two;
  one.exists = two.exists = true;
  one.fields = {{"f0", "a"}};
  two.fields = {{"f0", "a"}, {"f1", "b"}};
  KeyHistory h;
  h.ops = {Op(one, 5000), Op(two, 6000)};
  std::map<std::string, KeyHistory> hs = {{"k", h}};
  CHECK(Judge(hs, two).lost == 0);
  CHECK(Judge(hs, one).lost == 1);
  KeyState mixed = two;
  mixed.fields["f1"] = "c";
  CHECK(Judge(hs, mixed).never_written_count == 1);
  KeyState as_string = Str("a");
  CHECK(Judge(hs, as_string).never_written_count == 1);
}

TEST_CASE("a key nobody wrote is reported", "[fault][persist]") {
  const CrashVerdict v = Judge(ThreeSets(), Str("b"), {"k", "stray"});
  CHECK(v.unexpected_count == 1);
  CHECK(v.unexpected_keys == std::vector<std::string>{"stray"});
  CHECK(Violated(v, true));
}

TEST_CASE("of equal states the latest is taken", "[fault][persist]") {
  // SET a, DEL, SET a again: "a" is explained by the last request.
  KeyHistory h;
  h.ops = {Op(Str("a"), 1000), Op(KeyState{}, 2000), Op(Str("a"), 3000)};
  std::map<std::string, KeyHistory> hs = {{"k", h}};
  CHECK(Judge(hs, Str("a")).lost == 0);
  CHECK(Judge(hs, KeyState{}).lost == 1);
}
