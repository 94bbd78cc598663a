// The conditional writes over RESP, byte for byte: Redis 8.4's SET
// IFEQ/IFNE/IFDEQ/IFDNE, DELEX and DIGEST, and ephpm's extensions for locks
// (the fence every SET NX grant carries, LOCK.FENCE, SET .. FENCE,
// EXPIRE/PEXPIRE .. IFEQ).  Digest vectors are XXH3-64 as Debian's
// `xxhsum -H3` prints them; "Hello world" is the example of Redis's DIGEST
// page.

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ephpm/replicator.h"
#include "resp_server_util.h"

using namespace resp_server_test;  // NOLINT: the suite's own helpers

namespace {

const std::string kSyntax = Err("ERR syntax error");
const std::string kWrongType =
    Err("WRONGTYPE Operation against a key holding the wrong kind of value");
const std::string kNotInt = Err("ERR value is not an integer or out of range");
const std::string kBadDigest = Err("ERR must be exactly 16 hexadecimal characters");
const std::string kClusterDown =
    Err("CLUSTERDOWN the key's owner is unreachable, the outcome is unknown");

// XXH3-64 (seed 0), from xxhsum -H3.
const std::string kHelloWorldDigest = "b6acb9d84a38ff74";  // "Hello world"
const std::string kHelloDigest = "9555e8555c62dcfd";       // "hello"
const std::string kEmptyDigest = "2d06800538d394c2";       // ""
const std::string kV1Digest = "699a96a965cd390d";          // "v1"
// A value whose digest starts with four zero digits (redis/redis#14496).
const std::string kShortDigestValue =
    "v8lf0c11xh8ymlqztfd3eeq16kfn4sspw7fqmnuuq3k3t75em5wdizgcdw7uc26nnf961u2jkfzkjytls2kwlj7626sd";
const std::string kShortDigest = "00006c38adf31777";

struct Row {
  std::vector<std::string> argv;
  std::string reply;
};

void RunRows(Client& c, const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    std::string shown;
    for (const auto& a : row.argv) shown += a + " ";
    INFO("request: " << shown);
    CHECK(c.Call(row.argv) == row.reply);
  }
}

// The integer of a ":n\r\n" reply; -1 for anything else.
long long IntOf(const std::string& reply) {
  if (reply.size() < 4 || reply[0] != ':') return -1;
  return std::stoll(reply.substr(1, reply.size() - 3));
}

std::string Upper(std::string s) {
  for (char& ch : s) {
    if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
  }
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// SET with a condition

TEST_CASE("set IFEQ writes only over an equal string and never creates a key", "[resp][set]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v1"}, kOk},
                 {{"SET", "k", "v2", "IFEQ", "nope"}, kNil},
                 {{"GET", "k"}, Bulk("v1")},
                 {{"SET", "k", "v2", "IFEQ", "v1"}, kOk},
                 {{"GET", "k"}, Bulk("v2")},
                 // the compare is exact: no prefix, no case folding
                 {{"SET", "k", "v3", "IFEQ", "v"}, kNil},
                 {{"SET", "k", "v3", "IFEQ", "V2"}, kNil},
                 {{"SET", "k", "v3", "ifeq", "v2"}, kOk},
                 {{"SET", "missing", "x", "IFEQ", "anything"}, kNil},
                 {{"SET", "missing", "x", "IFEQ", ""}, kNil},
                 {{"EXISTS", "missing"}, Int(0)},
                 // binary-safe
                 {{"SET", "bin", "a\0b"s}, kOk},
                 {{"SET", "bin", "c", "IFEQ", "a"}, kNil},
                 {{"SET", "bin", "c", "IFEQ", "a\0b"s}, kOk},
                 {{"GET", "bin"}, Bulk("c")},
             });
}

TEST_CASE("set IFNE writes over a different string and creates a missing key", "[resp][set]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v1"}, kOk},
                 {{"SET", "k", "v2", "IFNE", "v1"}, kNil},
                 {{"GET", "k"}, Bulk("v1")},
                 {{"SET", "k", "v2", "IFNE", "other"}, kOk},
                 {{"GET", "k"}, Bulk("v2")},
                 {{"SET", "new", "x", "IFNE", "anything"}, kOk},
                 {{"GET", "new"}, Bulk("x")},
             });
}

TEST_CASE("set IFDEQ and IFDNE compare the digest, in either case", "[resp][set][digest]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "Hello world"}, kOk},
                 {{"SET", "k", "x", "IFDEQ", kHelloDigest}, kNil},
                 {{"GET", "k"}, Bulk("Hello world")},
                 {{"SET", "k", "hello", "IFDEQ", kHelloWorldDigest}, kOk},
                 {{"GET", "k"}, Bulk("hello")},
                 {{"SET", "k", "v1", "IFDEQ", Upper(kHelloDigest)}, kOk},
                 {{"SET", "k", "x", "IFDNE", kV1Digest}, kNil},
                 {{"SET", "k", "x", "IFDNE", Upper(kV1Digest)}, kNil},
                 {{"GET", "k"}, Bulk("v1")},
                 {{"SET", "k", "x", "IFDNE", kHelloDigest}, kOk},
                 {{"GET", "k"}, Bulk("x")},
                 // a missing key: IFDEQ never creates it, IFDNE does
                 {{"SET", "m", "v", "IFDEQ", kEmptyDigest}, kNil},
                 {{"EXISTS", "m"}, Int(0)},
                 {{"SET", "m", "v", "IFDNE", kEmptyDigest}, kOk},
                 {{"GET", "m"}, Bulk("v")},
                 // the empty string has a digest like any other value
                 {{"SET", "e", ""}, kOk},
                 {{"SET", "e", "full", "IFDEQ", kEmptyDigest}, kOk},
                 // leading zeros are part of the digest
                 {{"SET", "z", kShortDigestValue}, kOk},
                 {{"SET", "z", "y", "IFDEQ", "6c38adf31777"}, kBadDigest},
                 {{"SET", "z", "y", "IFDEQ", kShortDigest}, kOk},
             });
}

TEST_CASE("set: a malformed digest is refused before anything is looked at", "[resp][set][digest]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v"}, kOk},
                 {{"SET", "k", "x", "IFDEQ", "abc"}, kBadDigest},
                 {{"SET", "k", "x", "IFDEQ", ""}, kBadDigest},
                 {{"SET", "k", "x", "IFDEQ", kHelloDigest + "0"}, kBadDigest},
                 {{"SET", "k", "x", "IFDNE", "zzzzzzzzzzzzzzzz"}, kBadDigest},
                 {{"SET", "k", "x", "IFDNE", "0x" + kHelloDigest.substr(2)}, kBadDigest},
                 {{"SET", "k", "x", "IFDNE", " " + kHelloDigest.substr(1)}, kBadDigest},
                 {{"SET", "missing", "x", "IFDNE", "abc"}, kBadDigest},
                 {{"GET", "k"}, Bulk("v")},
                 {{"EXISTS", "missing"}, Int(0)},
                 // a syntax error wins over a malformed digest
                 {{"SET", "k", "x", "IFDEQ", "abc", "NX"}, kSyntax},
             });
}

TEST_CASE("set: conditions exclude each other and NX/XX", "[resp][set][errors]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v"}, kOk},
                 {{"SET", "k", "x", "NX", "IFEQ", "v"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "NX"}, kSyntax},
                 {{"SET", "k", "x", "XX", "IFNE", "v"}, kSyntax},
                 {{"SET", "k", "x", "IFDEQ", kHelloDigest, "XX"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "IFNE", "w"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "IFEQ", "v"}, kSyntax},
                 {{"SET", "k", "x", "IFDEQ", kHelloDigest, "IFDNE", kHelloDigest}, kSyntax},
                 {{"SET", "k", "x", "IFEQ"}, kSyntax},
                 {{"SET", "k", "x", "IFNE"}, kSyntax},
                 {{"SET", "k", "x", "IFDEQ"}, kSyntax},
                 {{"SET", "k", "x", "IFDNE"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "EX"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "KEEPTTL", "EX", "10"}, kSyntax},
                 {{"SET", "k", "x", "IFEQ", "v", "BOGUS"}, kSyntax},
                 // GETEX takes none of them
                 {{"GETEX", "k", "IFEQ", "v"}, kSyntax},
                 {{"GETEX", "k", "FENCE", "1"}, kSyntax},
                 {{"GET", "k"}, Bulk("v")},
             });
}

TEST_CASE("set: GET with a condition answers the old value whatever was decided",
          "[resp][set][get]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "old"}, kOk},
                 {{"SET", "k", "new", "IFEQ", "wrong", "GET"}, Bulk("old")},
                 {{"GET", "k"}, Bulk("old")},
                 {{"SET", "k", "new", "GET", "IFEQ", "old"}, Bulk("old")},
                 {{"GET", "k"}, Bulk("new")},
                 {{"SET", "k", "newer", "IFNE", "new", "GET"}, Bulk("new")},
                 {{"GET", "k"}, Bulk("new")},
                 {{"SET", "k", "newer", "IFDNE", kHelloDigest, "GET"}, Bulk("new")},
                 {{"GET", "k"}, Bulk("newer")},
                 {{"SET", "missing", "v", "IFEQ", "x", "GET"}, kNil},
                 {{"EXISTS", "missing"}, Int(0)},
                 {{"SET", "missing", "v", "IFDEQ", kHelloDigest, "GET"}, kNil},
                 {{"EXISTS", "missing"}, Int(0)},
                 {{"SET", "missing", "v", "IFNE", "x", "GET"}, kNil},
                 {{"GET", "missing"}, Bulk("v")},
                 {{"DEL", "missing"}, Int(1)},
                 {{"SET", "missing", "v", "IFDNE", kHelloDigest, "GET"}, kNil},
                 {{"GET", "missing"}, Bulk("v")},
             });
}

TEST_CASE("set: an expiry goes with the condition; KEEPTTL keeps it", "[resp][set][ttl]") {
  Fixture f;
  Client c(f.port());
  const int64_t now = f.clock.NowMs();
  RunRows(c, {
                 {{"SET", "k", "v1"}, kOk},
                 {{"SET", "k", "v2", "IFEQ", "v1", "PX", "5000"}, kOk},
                 {{"PTTL", "k"}, Int(5000)},
                 {{"SET", "k", "v3", "IFEQ", "v2", "KEEPTTL"}, kOk},
                 {{"PTTL", "k"}, Int(5000)},
                 {{"SET", "k", "v4", "IFEQ", "wrong", "EX", "100"}, kNil},
                 {{"PTTL", "k"}, Int(5000)},
                 {{"SET", "k", "v4", "IFNE", "wrong", "EX", "100"}, kOk},
                 {{"PTTL", "k"}, Int(100000)},
                 {{"SET", "k", "v5", "IFEQ", "v4"}, kOk},
                 {{"PTTL", "k"}, Int(-1)},
                 {{"SET", "k", "v6", "IFEQ", "v5", "PXAT", std::to_string(now + 7000)}, kOk},
                 {{"PTTL", "k"}, Int(7000)},
                 {{"SET", "k", "v7", "IFEQ", "v6", "EXAT", std::to_string(now / 1000 + 60)}, kOk},
                 {{"SET", "n", "v", "IFNE", "x", "EX", "10"}, kOk},
                 {{"PTTL", "n"}, Int(10000)},
                 // a bad expiry is refused whatever the condition
                 {{"SET", "k", "x", "IFEQ", "v7", "EX", "0"},
                  Err("ERR invalid expire time in 'set' command")},
                 {{"SET", "k", "x", "IFEQ", "v7", "PX", "-5"},
                  Err("ERR invalid expire time in 'set' command")},
                 {{"SET", "k", "x", "IFEQ", "v7", "EX", "ten"}, kNotInt},
                 {{"GET", "k"}, Bulk("v7")},
             });
  // The TTL set by a conditional write runs out like any other.
  f.clock.Advance(60 * 1000);
  CHECK(c.Call({"GET", "n"}) == kNil);
}

TEST_CASE("conditions on a non-string key are WRONGTYPE; without one SET overwrites",
          "[resp][wrongtype]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"HSET", "h", "f", "v"}, Int(1)},
                 {{"SET", "h", "v", "IFEQ", "x"}, kWrongType},
                 {{"SET", "h", "v", "IFNE", "x"}, kWrongType},
                 {{"SET", "h", "v", "IFDEQ", kHelloDigest}, kWrongType},
                 {{"SET", "h", "v", "IFDNE", kHelloDigest}, kWrongType},
                 {{"SET", "h", "v", "IFEQ", "x", "GET"}, kWrongType},
                 {{"SET", "h", "v", "IFNE", "x", "EX", "10"}, kWrongType},
                 {{"DELEX", "h", "IFEQ", "x"}, kWrongType},
                 {{"DELEX", "h", "IFNE", "x"}, kWrongType},
                 {{"DELEX", "h", "IFDEQ", kHelloDigest}, kWrongType},
                 {{"DELEX", "h", "IFDNE", kHelloDigest}, kWrongType},
                 {{"DIGEST", "h"}, kWrongType},
                 {{"PEXPIRE", "h", "1000", "IFEQ", "x"}, kWrongType},
                 {{"TYPE", "h"}, "+hash\r\n"},
                 // without a condition DELEX is DEL
                 {{"DELEX", "h"}, Int(1)},
                 {{"EXISTS", "h"}, Int(0)},
                 {{"HSET", "h", "f", "v"}, Int(1)},
                 {{"SET", "h", "s"}, kOk},
                 {{"GET", "h"}, Bulk("s")},
             });
}

// ---------------------------------------------------------------------------
// DELEX and DIGEST

TEST_CASE("delex removes by value or digest, and as DEL without a condition", "[resp][delex]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "Hello world"}, kOk},
                 {{"DELEX", "k", "IFEQ", "hello"}, Int(0)},
                 {{"DELEX", "k", "IFNE", "Hello world"}, Int(0)},
                 {{"DELEX", "k", "IFDEQ", kHelloDigest}, Int(0)},
                 {{"DELEX", "k", "IFDNE", kHelloWorldDigest}, Int(0)},
                 {{"DELEX", "k", "IFDNE", Upper(kHelloWorldDigest)}, Int(0)},
                 {{"GET", "k"}, Bulk("Hello world")},
                 {{"DELEX", "k", "IFEQ", "Hello world"}, Int(1)},
                 {{"EXISTS", "k"}, Int(0)},
                 {{"SET", "k", "Hello world"}, kOk},
                 {{"DELEX", "k", "ifdeq", Upper(kHelloWorldDigest)}, Int(1)},
                 {{"SET", "k", "a"}, kOk},
                 {{"DELEX", "k", "IFNE", "b"}, Int(1)},
                 {{"SET", "k", "a"}, kOk},
                 {{"DELEX", "k", "IFDNE", kHelloDigest}, Int(1)},
                 {{"SET", "z", kShortDigestValue}, kOk},
                 {{"DELEX", "z", "IFDEQ", kShortDigest}, Int(1)},
                 // a missing key is never removed, whatever the condition
                 {{"DELEX", "missing"}, Int(0)},
                 {{"DELEX", "missing", "IFEQ", "x"}, Int(0)},
                 {{"DELEX", "missing", "IFNE", "x"}, Int(0)},
                 {{"DELEX", "missing", "IFDEQ", kHelloDigest}, Int(0)},
                 {{"DELEX", "missing", "IFDNE", kHelloDigest}, Int(0)},
                 {{"SET", "k", "a"}, kOk},
                 {{"DELEX", "k"}, Int(1)},
                 {{"DELEX", "k"}, Int(0)},
             });
}

TEST_CASE("delex: wrong arity, unknown or incomplete conditions, bad digests",
          "[resp][delex][errors]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v"}, kOk},
                 {{"DELEX"}, Arity("delex")},
                 {{"DELEX", "k", "IFEQ"}, kSyntax},
                 {{"DELEX", "k", "IFEQ", "v", "extra"}, kSyntax},
                 {{"DELEX", "k", "IFEQ", "v", "IFNE", "w"}, kSyntax},
                 {{"DELEX", "k", "NX", "v"}, kSyntax},
                 {{"DELEX", "k", "v"}, kSyntax},
                 {{"DELEX", "k", "IFDEQ", "abc"}, kBadDigest},
                 {{"DELEX", "k", "IFDNE", kHelloDigest + "ff"}, kBadDigest},
                 {{"DELEX", "k", "IFDNE", "ghijklmnopqrstuv"}, kBadDigest},
                 {{"DELEX", "missing", "IFDEQ", "abc"}, kBadDigest},
                 {{"GET", "k"}, Bulk("v")},
             });
}

TEST_CASE("digest is 16 lowercase hex digits of XXH3-64, zero-padded", "[resp][digest]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 // Redis's DIGEST page: SET key1 "Hello world" / DIGEST key1
                 {{"SET", "key1", "Hello world"}, kOk},
                 {{"DIGEST", "key1"}, "$16\r\nb6acb9d84a38ff74\r\n"},
                 {{"SET", "h", "hello"}, kOk},
                 {{"DIGEST", "h"}, Bulk(kHelloDigest)},
                 {{"SET", "e", ""}, kOk},
                 {{"DIGEST", "e"}, Bulk(kEmptyDigest)},
                 {{"SET", "z", kShortDigestValue}, kOk},
                 {{"DIGEST", "z"}, Bulk(kShortDigest)},
                 // an integer-looking value is digested as its bytes
                 {{"SET", "n", "v1"}, kOk},
                 {{"DIGEST", "n"}, Bulk(kV1Digest)},
                 {{"DIGEST", "missing"}, kNil},
                 {{"DIGEST"}, Arity("digest")},
                 {{"DIGEST", "a", "b"}, Arity("digest")},
             });
  // What DIGEST answers is what IFDEQ takes.
  const std::string d = c.Call({"DIGEST", "key1"});
  REQUIRE(d.size() == 23);
  CHECK(c.Call({"SET", "key1", "next", "IFDEQ", d.substr(5, 16)}) == kOk);
  // An expired key has no digest.
  CHECK(c.Call({"SET", "t", "v", "PX", "100"}) == kOk);
  f.clock.Advance(100);
  CHECK(c.Call({"DIGEST", "t"}) == kNil);
}

TEST_CASE("conditions compare the original bytes of compressed values",
          "[resp][compression]") {
  StoreOptions so;
  so.compression = ephpm::Compression::kZstd;
  so.compression_threshold = 64;
  Fixture f({}, so);
  Client c(f.port());
  const std::string big(3000, 'x');
  const std::string big_y = std::string(2999, 'x') + "y";  // same size, other bytes
  RunRows(c, {
                 {{"SET", "big", big}, kOk},
                 {{"DIGEST", "big"}, Bulk("c1b175677a77431e")},
                 {{"SET", "big", "small", "IFEQ", big_y}, kNil},
                 {{"SET", "big", "small", "IFNE", big}, kNil},
                 {{"DELEX", "big", "IFEQ", big_y}, Int(0)},
                 {{"DELEX", "big", "IFDEQ", "9b1a103c99e917f7"}, Int(0)},
                 {{"PEXPIRE", "big", "1000", "IFEQ", big_y}, Int(0)},
                 {{"PEXPIRE", "big", "1000", "IFEQ", big}, Int(1)},
                 {{"PTTL", "big"}, Int(1000)},
                 {{"SET", "big", big_y, "IFEQ", big, "GET"}, Bulk(big)},
                 {{"DIGEST", "big"}, Bulk("9b1a103c99e917f7")},
                 {{"SET", "big", big, "IFDEQ", "9b1a103c99e917f7"}, kOk},
                 {{"DELEX", "big", "IFEQ", big}, Int(1)},
                 {{"EXISTS", "big"}, Int(0)},
             });
}

// ---------------------------------------------------------------------------
// Fencing

TEST_CASE("every SET NX grant with an expiry carries a fence; LOCK.FENCE reads it",
          "[resp][fence]") {
  Fixture f;
  Client c(f.port());
  REQUIRE(c.Call({"SET", "lk", "t1", "NX", "PX", "10000"}) == kOk);
  const std::string f1 = c.Call({"LOCK.FENCE", "lk", "t1"});
  const long long fence1 = IntOf(f1);
  CHECK(fence1 > 0);
  CHECK(c.Call({"LOCK.FENCE", "lk"}) == f1);
  CHECK(c.Call({"lock.fence", "lk", "t1"}) == f1);
  CHECK(c.Call({"LOCK.FENCE", "lk", "other"}) == kNil);
  CHECK(c.Call({"LOCK.FENCE", "lk", ""}) == kNil);
  // A refused grant changes nothing.
  CHECK(c.Call({"SET", "lk", "t2", "NX", "PX", "10000"}) == kNil);
  CHECK(c.Call({"LOCK.FENCE", "lk", "t1"}) == f1);

  // Released, then granted again: a higher fence.
  CHECK(c.Call({"DELIFEQ", "lk", "t1"}) == Int(1));
  CHECK(c.Call({"LOCK.FENCE", "lk"}) == kNil);
  CHECK(c.Call({"LOCK.FENCE", "lk", "t1"}) == kNil);
  CHECK(c.Call({"SET", "lk", "t2", "NX", "EX", "10"}) == kOk);
  const long long fence2 = IntOf(c.Call({"LOCK.FENCE", "lk", "t2"}));
  CHECK(fence2 > fence1);
  CHECK(c.Call({"LOCK.FENCE", "lk", "t1"}) == kNil);

  // Expired, then granted again (PXAT, and on another key): higher still.
  f.clock.Advance(10000);
  CHECK(c.Call({"LOCK.FENCE", "lk"}) == kNil);
  CHECK(c.Call({"SET", "lk", "t3", "NX", "PXAT", std::to_string(f.clock.NowMs() + 5000)}) == kOk);
  const long long fence3 = IntOf(c.Call({"LOCK.FENCE", "lk", "t3"}));
  CHECK(fence3 > fence2);
  CHECK(c.Call({"SET", "other", "t", "NX", "PX", "5000"}) == kOk);
  CHECK(IntOf(c.Call({"LOCK.FENCE", "other", "t"})) > fence3);

  // Ten grants in a row, each fence above the one before.
  long long last = fence3;
  for (int i = 0; i < 10; ++i) {
    const std::string key = "seq" + std::to_string(i % 3);
    c.Call({"DEL", key});
    REQUIRE(c.Call({"SET", key, "tok", "NX", "PX", "1000"}) == kOk);
    const long long fence = IntOf(c.Call({"LOCK.FENCE", key, "tok"}));
    CHECK(fence > last);
    last = fence;
  }
}

TEST_CASE("lock.fence on keys that are no lock, and its errors", "[resp][fence][errors]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "plain", "v"}, kOk},
                 {{"LOCK.FENCE", "plain"}, Int(0)},
                 {{"LOCK.FENCE", "plain", "v"}, Int(0)},
                 {{"LOCK.FENCE", "plain", "w"}, kNil},
                 // SETNX and SET NX without an expiry are data, not locks
                 {{"SETNX", "sn", "v"}, Int(1)},
                 {{"LOCK.FENCE", "sn"}, Int(0)},
                 {{"SET", "nx", "v", "NX"}, kOk},
                 {{"LOCK.FENCE", "nx"}, Int(0)},
                 {{"HSET", "h", "f", "v"}, Int(1)},
                 {{"LOCK.FENCE", "h"}, Int(0)},
                 {{"LOCK.FENCE", "h", "v"}, kNil},
                 {{"LOCK.FENCE", "missing"}, kNil},
                 {{"LOCK.FENCE", "missing", "tok"}, kNil},
                 {{"LOCK.FENCE"}, Arity("lock.fence")},
                 {{"LOCK.FENCE", "k", "tok", "extra"}, kSyntax},
             });
}

TEST_CASE("set FENCE writes unless a higher fence is recorded", "[resp][fence]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "res", "a", "FENCE", "5"}, kOk},
                 {{"GET", "res"}, Bulk("a")},
                 {{"SET", "res", "b", "FENCE", "4"}, kNil},
                 {{"GET", "res"}, Bulk("a")},
                 {{"SET", "res", "c", "FENCE", "5"}, kOk},
                 {{"GET", "res"}, Bulk("c")},
                 {{"SET", "res", "d", "fence", "6", "PX", "1000"}, kOk},
                 {{"PTTL", "res"}, Int(1000)},
                 {{"LOCK.FENCE", "res"}, Int(6)},
                 {{"SET", "res", "e", "EX", "10", "FENCE", "7"}, kOk},
                 {{"PTTL", "res"}, Int(10000)},
                 {{"SET", "res", "f", "FENCE", "7"}, kOk},
                 {{"PTTL", "res"}, Int(-1)},
                 // the record outlives the value
                 {{"DEL", "res"}, Int(1)},
                 {{"SET", "res", "g", "FENCE", "6"}, kNil},
                 {{"EXISTS", "res"}, Int(0)},
                 {{"SET", "res", "h", "FENCE", "8"}, kOk},
                 // a fenced write replaces a value of another type
                 {{"HSET", "hh", "f", "v"}, Int(1)},
                 {{"SET", "hh", "s", "FENCE", "1"}, kOk},
                 {{"GET", "hh"}, Bulk("s")},
             });
}

TEST_CASE("a lock's fence guards the resource: the old holder's write is stale",
          "[resp][fence]") {
  Fixture f;
  Client a(f.port());
  Client b(f.port());
  REQUIRE(a.Call({"SET", "lock", "A", "NX", "PX", "1000"}) == kOk);
  const std::string fa = a.Call({"LOCK.FENCE", "lock", "A"});
  REQUIRE(IntOf(fa) > 0);
  const std::string fence_a = fa.substr(1, fa.size() - 3);
  CHECK(a.Call({"SET", "resource", "from A", "FENCE", fence_a}) == kOk);
  // A pauses past its TTL; B takes the lock and writes.
  f.clock.Advance(1000);
  REQUIRE(b.Call({"SET", "lock", "B", "NX", "PX", "1000"}) == kOk);
  const std::string fb = b.Call({"LOCK.FENCE", "lock", "B"});
  const std::string fence_b = fb.substr(1, fb.size() - 3);
  CHECK(IntOf(fb) > IntOf(fa));
  CHECK(b.Call({"SET", "resource", "from B", "FENCE", fence_b}) == kOk);
  // A wakes up: its lock is gone and its write is refused.
  CHECK(a.Call({"LOCK.FENCE", "lock", "A"}) == kNil);
  CHECK(a.Call({"SET", "resource", "late A", "FENCE", fence_a}) == kNil);
  CHECK(a.Call({"GET", "resource"}) == Bulk("from B"));
}

TEST_CASE("set FENCE: a positive integer, alone or with EX/PX", "[resp][fence][errors]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "r", "v", "FENCE", "0"}, kNotInt},
                 {{"SET", "r", "v", "FENCE", "-1"}, kNotInt},
                 {{"SET", "r", "v", "FENCE", "abc"}, kNotInt},
                 {{"SET", "r", "v", "FENCE", "1.5"}, kNotInt},
                 {{"SET", "r", "v", "FENCE", ""}, kNotInt},
                 {{"SET", "r", "v", "FENCE", "99999999999999999999"}, kNotInt},
                 {{"SET", "r", "v", "FENCE"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "FENCE", "2"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "NX"}, kSyntax},
                 {{"SET", "r", "v", "NX", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "XX"}, kSyntax},
                 {{"SET", "r", "v", "XX", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "GET"}, kSyntax},
                 {{"SET", "r", "v", "GET", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "KEEPTTL"}, kSyntax},
                 {{"SET", "r", "v", "KEEPTTL", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "IFEQ", "v"}, kSyntax},
                 {{"SET", "r", "v", "IFEQ", "v", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "IFDNE", kHelloDigest, "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "EXAT", "99999999999"}, kSyntax},
                 {{"SET", "r", "v", "PXAT", "99999999999999", "FENCE", "1"}, kSyntax},
                 {{"SET", "r", "v", "FENCE", "1", "EX", "0"},
                  Err("ERR invalid expire time in 'set' command")},
                 {{"SET", "r", "v", "FENCE", "1", "PX", "x"}, kNotInt},
                 {{"SET", "r", "v", "FENCE", "1", "EX", "5", "PX", "5"}, kSyntax},
                 {{"EXISTS", "r"}, Int(0)},
                 // none of those recorded a fence
                 {{"SET", "r", "v", "FENCE", "1"}, kOk},
             });
}

// ---------------------------------------------------------------------------
// Compare-and-expire

TEST_CASE("pexpire/expire IFEQ refresh a lock only for its holder", "[resp][expire]") {
  Fixture f;
  Client c(f.port());
  REQUIRE(c.Call({"SET", "lk", "tok", "NX", "PX", "1000"}) == kOk);
  const std::string fence = c.Call({"LOCK.FENCE", "lk", "tok"});
  RunRows(c, {
                 {{"PEXPIRE", "lk", "5000", "IFEQ", "tok"}, Int(1)},
                 {{"PTTL", "lk"}, Int(5000)},
                 {{"PEXPIRE", "lk", "9000", "IFEQ", "other"}, Int(0)},
                 {{"PTTL", "lk"}, Int(5000)},
                 {{"EXPIRE", "lk", "10", "IFEQ", "tok"}, Int(1)},
                 {{"PTTL", "lk"}, Int(10000)},
                 {{"EXPIRE", "lk", "20", "ifeq", "TOK"}, Int(0)},
                 {{"PEXPIRE", "missing", "100", "IFEQ", "tok"}, Int(0)},
                 {{"EXISTS", "missing"}, Int(0)},
             });
  // The refresh keeps the grant's fence: the holder's token still works.
  CHECK(c.Call({"LOCK.FENCE", "lk", "tok"}) == fence);
  // The refreshed TTL runs from now.
  f.clock.Advance(9999);
  CHECK(c.Call({"PTTL", "lk"}) == Int(1));
  CHECK(c.Call({"PEXPIRE", "lk", "3000", "IFEQ", "tok"}) == Int(1));
  f.clock.Advance(2999);
  CHECK(c.Call({"GET", "lk"}) == Bulk("tok"));
  f.clock.Advance(1);
  // Expired: nothing to refresh.
  CHECK(c.Call({"PEXPIRE", "lk", "3000", "IFEQ", "tok"}) == Int(0));
  CHECK(c.Call({"EXISTS", "lk"}) == Int(0));
}

TEST_CASE("pexpire IFEQ with a time not in the future removes a matching key",
          "[resp][expire]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v", "PX", "1000"}, kOk},
                 {{"PEXPIRE", "k", "0", "IFEQ", "w"}, Int(0)},
                 {{"EXISTS", "k"}, Int(1)},
                 {{"PEXPIRE", "k", "0", "IFEQ", "v"}, Int(1)},
                 {{"EXISTS", "k"}, Int(0)},
                 {{"SET", "k", "v"}, kOk},
                 {{"EXPIRE", "k", "-1", "IFEQ", "v"}, Int(1)},
                 {{"EXISTS", "k"}, Int(0)},
                 // a key without a TTL gets one
                 {{"SET", "p", "v"}, kOk},
                 {{"PEXPIRE", "p", "700", "IFEQ", "v"}, Int(1)},
                 {{"PTTL", "p"}, Int(700)},
             });
}

TEST_CASE("expire IFEQ: errors, and the Redis options keep working", "[resp][expire][errors]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v"}, kOk},
                 {{"PEXPIRE", "k", "100", "IFEQ"}, kSyntax},
                 {{"PEXPIRE", "k", "100", "IFEQ", "v", "NX"}, kSyntax},
                 {{"PEXPIRE", "k", "100", "NX", "IFEQ", "v"}, kSyntax},
                 {{"PEXPIRE", "k", "100", "XX", "IFEQ", "v"}, kSyntax},
                 {{"EXPIRE", "k", "100", "IFEQ", "v", "GT"}, kSyntax},
                 {{"EXPIRE", "k", "100", "LT", "IFEQ", "v"}, kSyntax},
                 {{"PEXPIRE", "k", "100", "IFEQ", "v", "IFEQ", "v"}, kSyntax},
                 {{"PEXPIRE", "k", "100", "IFEQ", "v", "extra"},
                  Err("ERR Unsupported option extra")},
                 {{"PEXPIRE", "k", "abc", "IFEQ", "v"}, kNotInt},
                 {{"EXPIRE", "k", "99999999999999999", "IFEQ", "v"},
                  Err("ERR invalid expire time in 'expire' command")},
                 {{"PEXPIRE", "k", "9223372036854775807", "IFEQ", "v"},
                  Err("ERR invalid expire time in 'pexpire' command")},
                 // the absolute forms take no token
                 {{"PEXPIREAT", "k", "100", "IFEQ", "v"}, Err("ERR Unsupported option IFEQ")},
                 {{"EXPIREAT", "k", "100", "IFEQ", "v"}, Err("ERR Unsupported option IFEQ")},
                 {{"PTTL", "k"}, Int(-1)},
                 // NX/XX/GT/LT as before
                 {{"PEXPIRE", "k", "1000", "XX"}, Int(0)},
                 {{"PEXPIRE", "k", "1000", "NX"}, Int(1)},
                 {{"PEXPIRE", "k", "2000", "GT"}, Int(1)},
                 {{"PEXPIRE", "k", "500", "LT"}, Int(1)},
                 {{"PTTL", "k"}, Int(500)},
                 {{"PEXPIRE", "k", "1000", "NX", "XX"},
                  Err("ERR NX and XX, GT or LT options at the same time are not compatible")},
                 {{"PEXPIRE", "k", "1000", "GT", "LT"},
                  Err("ERR GT and LT options at the same time are not compatible")},
             });
}

// ---------------------------------------------------------------------------
// The command table, a cluster without the owner, a pipeline

TEST_CASE("the new commands are in COMMAND with their arity, flags and keys",
          "[resp][command]") {
  Fixture f;
  Client c(f.port());
  const auto info = [](const std::string& name, int arity, const std::vector<std::string>& flags,
                       const std::vector<std::string>& acl) {
    std::vector<std::string> fl, ac;
    for (const auto& x : flags) fl.push_back("+" + x + "\r\n");
    for (const auto& x : acl) ac.push_back("+" + x + "\r\n");
    return Arr({Bulk(name), Int(arity), Arr(fl), Int(1), Int(1), Int(1), Arr(ac), "*0\r\n",
                "*0\r\n", "*0\r\n"});
  };
  CHECK(c.Call({"COMMAND", "INFO", "delex"}) ==
        Arr({info("delex", -2, {"write", "fast"}, {"@write", "@string", "@fast"})}));
  CHECK(c.Call({"COMMAND", "INFO", "digest"}) ==
        Arr({info("digest", 2, {"readonly", "fast"}, {"@read", "@string", "@fast"})}));
  CHECK(c.Call({"COMMAND", "INFO", "LOCK.FENCE"}) ==
        Arr({info("lock.fence", -2, {"readonly", "fast"}, {"@read", "@string", "@fast"})}));
  const std::string names = c.Call({"COMMAND", "LIST"});
  CHECK(names.find(Bulk("delex")) != std::string::npos);
  CHECK(names.find(Bulk("digest")) != std::string::npos);
  CHECK(names.find(Bulk("lock.fence")) != std::string::npos);
  // COMMAND COUNT counts the top-level commands, which COMMAND lists.
  const std::string count = c.Call({"COMMAND", "COUNT"});
  REQUIRE(count.size() > 3);
  CHECK(c.Call({"COMMAND"}).rfind("*" + count.substr(1, count.size() - 3) + "\r\n", 0) == 0);
}

namespace {

// A cluster member whose owner never answers: every routed decision is
// unreachable.
class UnreachableOwner : public ephpm::Replicator {
 public:
  template <typename T>
  using Routed = ephpm::Routed<T>;

  Routed<ephpm::SetNxOutcome> RouteSetNx(std::string_view, std::string_view, int64_t) override {
    return Routed<ephpm::SetNxOutcome>::Unreachable();
  }
  Routed<ephpm::FencedGrant> RouteSetNxFenced(std::string_view, std::string_view, int64_t,
                                              bool) override {
    return Routed<ephpm::FencedGrant>::Unreachable();
  }
  Routed<ephpm::ExpireIfEqOutcome> RouteExpireIfEq(std::string_view, std::string_view,
                                                   int64_t) override {
    return Routed<ephpm::ExpireIfEqOutcome>::Unreachable();
  }
  Routed<ephpm::SetFencedOutcome> RouteSetFenced(std::string_view, std::string_view, uint64_t,
                                                 int64_t) override {
    return Routed<ephpm::SetFencedOutcome>::Unreachable();
  }
  Routed<ephpm::LockStateReply> RouteLockState(std::string_view, std::string_view) override {
    return Routed<ephpm::LockStateReply>::Unreachable();
  }
  Routed<ephpm::SetWithReply> RouteSetWith(std::string_view, std::string_view,
                                           const ephpm::SetOptions&) override {
    return Routed<ephpm::SetWithReply>::Unreachable();
  }
  Routed<ephpm::DelExReply> RouteDelEx(std::string_view, const ephpm::ValueCondition&) override {
    return Routed<ephpm::DelExReply>::Unreachable();
  }
};

}  // namespace

TEST_CASE("an unreachable owner answers CLUSTERDOWN, never a local guess", "[resp][cluster]") {
  UnreachableOwner owner;
  StoreOptions so;
  so.replicator = &owner;
  Fixture f({}, so);
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v", "IFEQ", "x"}, kClusterDown},
                 {{"SET", "k", "v", "IFNE", "x"}, kClusterDown},
                 {{"SET", "k", "v", "IFDEQ", kHelloDigest}, kClusterDown},
                 {{"SET", "k", "v", "IFDNE", kHelloDigest, "GET"}, kClusterDown},
                 {{"DELEX", "k", "IFEQ", "x"}, kClusterDown},
                 {{"DELEX", "k", "IFDNE", kHelloDigest}, kClusterDown},
                 {{"SET", "lk", "t", "NX", "PX", "1000"}, kClusterDown},
                 {{"SET", "lk", "t", "NX"}, kClusterDown},
                 {{"LOCK.FENCE", "lk"}, kClusterDown},
                 {{"LOCK.FENCE", "lk", "t"}, kClusterDown},
                 {{"SET", "r", "v", "FENCE", "3"}, kClusterDown},
                 {{"PEXPIRE", "lk", "1000", "IFEQ", "t"}, kClusterDown},
                 {{"EXPIRE", "lk", "1", "IFEQ", "t"}, kClusterDown},
                 // argument errors are still the edge's, before any routing
                 {{"SET", "k", "v", "IFDEQ", "abc"}, kBadDigest},
                 {{"SET", "r", "v", "FENCE", "0"}, kNotInt},
             });
}

TEST_CASE("a pipeline of conditional commands in one write is answered in order",
          "[resp][pipeline]") {
  Fixture f;
  Client c(f.port());
  // As redis-cli --pipe sends: requests back to back; some inline, as typed.
  std::string batch;
  std::vector<std::string> expected;
  const auto add = [&](const std::vector<std::string>& argv, const std::string& reply) {
    batch += Encode(argv);
    expected.push_back(reply);
  };
  add({"SET", "key1", "Hello world"}, kOk);
  add({"DIGEST", "key1"}, Bulk(kHelloWorldDigest));
  add({"SET", "key1", "v1", "IFDEQ", kHelloWorldDigest}, kOk);
  add({"SET", "key1", "v2", "IFEQ", "nope", "GET"}, Bulk("v1"));
  add({"SET", "key1", "v2", "IFNE", "v2", "PX", "500"}, kOk);
  batch += "PTTL key1\r\n";
  expected.push_back(Int(500));
  add({"SET", "lk", "me", "NX", "PX", "1000"}, kOk);
  add({"PEXPIRE", "lk", "4000", "IFEQ", "me"}, Int(1));
  add({"SET", "lk", "you", "NX", "PX", "1000"}, kNil);
  add({"SET", "res", "x", "FENCE", "2"}, kOk);
  add({"SET", "res", "y", "FENCE", "1"}, kNil);
  add({"SET", "res", "y", "IFEQ", "x", "NX"}, kSyntax);
  batch += "DELEX key1 IFEQ v2\r\n";
  expected.push_back(Int(1));
  add({"DELEX", "key1"}, Int(0));
  add({"DIGEST", "key1"}, kNil);
  add({"DELIFEQ", "lk", "me"}, Int(1));
  add({"LOCK.FENCE", "lk"}, kNil);
  REQUIRE(c.Send(batch));
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("reply " << i);
    CHECK(c.Reply() == expected[i]);
  }
}

TEST_CASE("conditions never see an expired key; a past expiry deletes what it would set",
          "[resp][set][ttl]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "k", "v", "PX", "100"}, kOk},
                 {{"SET", "p", "v", "PX", "100"}, kOk},
                 {{"SET", "q", "v", "PX", "100"}, kOk},
                 {{"DIGEST", "k"}, Bulk("f7042be43fb80714")},
             });
  f.clock.Advance(100);
  RunRows(c, {
                 {{"SET", "k", "w", "IFEQ", "v"}, kNil},
                 {{"SET", "k", "w", "IFDEQ", "f7042be43fb80714"}, kNil},  // digest of "v"
                 {{"EXISTS", "k"}, Int(0)},
                 {{"SET", "k", "w", "IFNE", "v", "GET"}, kNil},
                 {{"GET", "k"}, Bulk("w")},
                 {{"DELEX", "p", "IFNE", "x"}, Int(0)},
                 {{"DELEX", "q", "IFEQ", "v"}, Int(0)},
                 {{"PEXPIRE", "q", "1000", "IFEQ", "v"}, Int(0)},
                 {{"EXISTS", "q"}, Int(0)},
                 // Redis: a matching SET with an expiry already past answers OK
                 // and leaves no key; a failing one leaves the key alone.
                 {{"SET", "a", "old"}, kOk},
                 {{"SET", "a", "new", "IFEQ", "old", "PXAT", "1"}, kOk},
                 {{"EXISTS", "a"}, Int(0)},
                 {{"SET", "b", "old"}, kOk},
                 {{"SET", "b", "new", "IFEQ", "other", "PXAT", "1"}, kNil},
                 {{"GET", "b"}, Bulk("old")},
             });
}

TEST_CASE("fence records survive FLUSHALL as a floor", "[resp][fence]") {
  Fixture f;
  Client c(f.port());
  RunRows(c, {
                 {{"SET", "r", "v", "FENCE", "5"}, kOk},
                 {{"FLUSHALL"}, kOk},
                 {{"SET", "r", "old", "FENCE", "4"}, kNil},
                 {{"EXISTS", "r"}, Int(0)},
                 {{"SET", "r", "new", "FENCE", "5"}, kOk},
             });
  // A grant after the flush is still above every earlier grant.
  REQUIRE(c.Call({"SET", "lk", "a", "NX", "PX", "1000"}) == kOk);
  const long long before = IntOf(c.Call({"LOCK.FENCE", "lk", "a"}));
  CHECK(c.Call({"FLUSHALL"}) == kOk);
  REQUIRE(c.Call({"SET", "lk", "b", "NX", "PX", "1000"}) == kOk);
  CHECK(IntOf(c.Call({"LOCK.FENCE", "lk", "b"})) > before);
}
