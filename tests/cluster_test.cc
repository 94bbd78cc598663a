// Several cluster nodes in one process, over real sockets on loopback (ports
// chosen by the OS): membership by gossip, failure detection, replication,
// last-writer-wins under skewed clocks, partitions and catching up.
//
// The probe period is shortened (50 ms) so the bounds are short; the bounds
// asserted are the documented ones (FailureDetectionBoundMs, JoinBoundMs)
// for those options.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>
#include <poll.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cluster_util.h"
#include "ephpm/store.h"
#include "node.h"
#include "owner.h"
#include "route_codec.h"
#include "test_util.h"
#include "wire.h"

using namespace cluster_test;  // NOLINT: the suite's own helpers

namespace {

// The host and the port of a node's "host:port" address.
std::string HostOf(const std::string& address) { return address.substr(0, address.rfind(':')); }
int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

int ConnectTcp(const std::string& host, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Writes `data`, then reads until the peer closes (true) or `timeout_ms`
// passes (false).
bool SendAndExpectClose(int fd, const std::string& data, int timeout_ms) {
  if (send(fd, data.data(), data.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(data.size())) {
    close(fd);
    return true;  // already closed on us
  }
  const int64_t end = NowMs() + timeout_ms;
  char buf[4096];
  while (NowMs() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      close(fd);
      return true;
    }
  }
  close(fd);
  return false;
}

}  // namespace

TEST_CASE("cluster: membership converges; a node added later and one killed are seen in bound",
          "[cluster]") {
  Trio t;
  const int64_t joined = WaitFor(JoinBoundMs(Fast("x"), 3), [&] {
    return AllAlive(t.all(), {"a", "b", "c"});
  });
  INFO("three nodes converged in " << joined << " ms");
  REQUIRE(joined >= 0);

  // A fourth node, given only c's address.
  auto od = Fast("d");
  od.join = {t.c.address()};
  Node d(od);
  const int64_t bound_join = JoinBoundMs(od, 4);
  const int64_t seen = WaitFor(bound_join, [&] {
    return AllAlive({&t.a, &t.b, &t.c, &d}, {"a", "b", "c", "d"});
  });
  INFO("d known everywhere after " << seen << " ms; bound " << bound_join << " ms");
  REQUIRE(seen >= 0);

  // Kill b: everyone else sees it dead within the bound.
  t.b.Kill();
  const int64_t bound_dead = FailureDetectionBoundMs(od, 4);
  const int64_t dead = WaitFor(bound_dead, [&] {
    for (Node* n : {&t.a, &t.c, &d}) {
      auto v = n->View();
      if (v.count("b") == 0 || v["b"] != MemberState::kDead) return false;
    }
    return true;
  });
  INFO("b seen dead everywhere after " << dead << " ms; bound " << bound_dead << " ms");
  REQUIRE(dead >= 0);
  CHECK(AllAlive({&t.a, &t.c, &d}, {"a", "c", "d"}));

  // The INFO text names every member with its state.
  const std::string info = t.a.node->Describe();
  CHECK(info.find("cluster_node_id:a\n") != std::string::npos);
  CHECK(info.find("id=b,address=") != std::string::npos);
  CHECK(info.find("state=dead") != std::string::npos);
  CHECK(info.find("cluster_alive:3\n") != std::string::npos);
}

TEST_CASE("cluster: a node that is slow but alive is suspected, refutes, and stays a member",
          "[cluster]") {
  Trio t;
  t.Converge();
  // Delay every frame b sends by more than a probe timeout but less than
  // the suspicion timeout: others suspect it, its refutation wins.
  for (Node* n : t.all()) {
    if (n != &t.b) t.b.node->TestDelay(n->id(), 40);
  }
  bool suspected = false, dead = false;
  const int64_t until = NowMs() + 1500;
  while (NowMs() < until) {
    for (Node* n : {&t.a, &t.c}) {
      const MemberState st = n->View()["b"];
      suspected |= st == MemberState::kSuspect;
      dead |= st == MemberState::kDead;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  t.b.node->TestDelay("a", 0);
  t.b.node->TestDelay("c", 0);
  CHECK(suspected);
  CHECK_FALSE(dead);
  REQUIRE(WaitFor(2000, [&] { return AllAlive(t.all(), {"a", "b", "c"}); }) >= 0);
  for (Node* n : t.all()) CHECK(n->View()["b"] != MemberState::kDead);
}

TEST_CASE("cluster: values, hashes, TTLs, deletes and flushes converge on every node",
          "[cluster]") {
  Trio t;
  t.Converge();
  int64_t added = 0;

  REQUIRE(t.a.store->Set("s", "from a") == Status::kOk);
  REQUIRE(t.b.store->Set("ttl", "x", 60000) == Status::kOk);
  REQUIRE(t.c.store->HSet("h", {{"f1", "v1"}, {"f2", "v2"}}, false, &added) == Status::kOk);
  int64_t n = 0;
  REQUIRE(t.a.store->IncrBy("counter", 5, &n) == Status::kOk);
  REQUIRE(WaitFor(2000, [&] {
            return t.Everywhere("s", "from a") && t.Everywhere("ttl", "x") &&
                   t.Everywhere("counter", "5");
          }) >= 0);
  REQUIRE(WaitFor(2000, [&] {
            for (Node* x : t.all()) {
              std::string v;
              if (x->store->HGet("h", "f2", &v) != Status::kOk || v != "v2") return false;
            }
            return true;
          }) >= 0);
  // The TTL travels as an absolute expiry: the same instant everywhere.
  ephpm::EntryInfo ia, ic;
  REQUIRE(t.a.store->Inspect("ttl", &ia) == Status::kOk);
  REQUIRE(t.c.store->Inspect("ttl", &ic) == Status::kOk);
  CHECK(ia.expires_at_ms != 0);
  CHECK(ia.expires_at_ms == ic.expires_at_ms);

  // A hash field written on another node joins the same hash.
  REQUIRE(t.a.store->HSet("h", {{"f3", "v3"}}, false, &added) == Status::kOk);
  REQUIRE(WaitFor(2000, [&] {
            std::vector<std::pair<std::string, std::string>> all;
            if (t.b.store->HGetAll("h", &all) != Status::kOk) return false;
            return all.size() == 3;
          }) >= 0);

  // expire / persist / del / del_if_eq / set_if_eq.
  bool applied = false;
  REQUIRE(t.c.store->Persist("ttl", &applied) == Status::kOk);
  REQUIRE(WaitFor(2000, [&] {
            ephpm::EntryInfo i;
            return t.a.store->Inspect("ttl", &i) == Status::kOk && i.expires_at_ms == 0;
          }) >= 0);
  REQUIRE(t.b.store->Expire("s", 1, &applied) == Status::kOk);  // gone in 1 ms
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("s", "<missing>"); }) >= 0);
  REQUIRE(t.a.store->Set("lock", "tok") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("lock", "tok"); }) >= 0);
  REQUIRE(t.a.store->SetIfEq("lock", "tok", "data", "fenced", 0) ==
          ephpm::SetIfEqOutcome::kWritten);
  REQUIRE(t.b.store->DelIfEq("lock", "tok") == ephpm::DelIfEqOutcome::kDeleted);
  REQUIRE(WaitFor(2000, [&] {
            return t.Everywhere("lock", "<missing>") && t.Everywhere("data", "fenced");
          }) >= 0);
  int64_t removed = 0;
  REQUIRE(t.c.store->Del("counter", &removed) == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("counter", "<missing>"); }) >= 0);

  // A flush on one node empties every node.
  t.b.store->Flush();
  REQUIRE(WaitFor(2000, [&] {
            for (Node* x : t.all()) {
              if (x->store->Stats().keys != 0) return false;
            }
            return true;
          }) >= 0);
  // ... and a write after it survives it everywhere.
  REQUIRE(t.c.store->Set("after", "flush") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("after", "flush"); }) >= 0);
}

// The receiver reads what has arrived and takes every whole frame in it:
// frames bigger than a read (a multi-MiB value), bursts of many small ones in
// one read, and a frame split over reads must all come out whole.
TEST_CASE("cluster: large values and bursts of small writes arrive whole and in order",
          "[cluster]") {
  Trio t;
  t.Converge();
  std::string big(3 * 1024 * 1024 + 17, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 23);
  REQUIRE(t.a.store->Set("big", big) == Status::kOk);
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(t.a.store->Set("burst:" + std::to_string(i), "v" + std::to_string(i)) ==
            Status::kOk);
  }
  // The same key rewritten many times: the last write wins on every node.
  for (int i = 0; i <= 1000; ++i) {
    REQUIRE(t.a.store->Set("last", std::to_string(i)) == Status::kOk);
  }
  REQUIRE(WaitFor(5000, [&] {
            return t.Everywhere("big", big) && t.Everywhere("burst:0", "v0") &&
                   t.Everywhere("burst:4999", "v4999") && t.Everywhere("last", "1000");
          }) >= 0);
  for (Node* x : t.all()) {
    int missing = 0;
    for (int i = 0; i < 5000; ++i) {
      if (x->Get("burst:" + std::to_string(i)) != "v" + std::to_string(i)) ++missing;
    }
    CHECK(missing == 0);
  }
  // Another big value after the first, so the reader also shrinks back and
  // grows again.
  std::string big2(2 * 1024 * 1024, 'z');
  REQUIRE(t.b.store->Set("big", big2) == Status::kOk);
  REQUIRE(WaitFor(5000, [&] { return t.Everywhere("big", big2); }) >= 0);
}

TEST_CASE("cluster: concurrent writes to one key settle on one winner everywhere, with skewed clocks",
          "[cluster]") {
  Trio t;
  t.Converge();
  const int64_t skews[][3] = {{0, 0, 0}, {2000, -2000, 0}, {-2000, 0, 2000}};
  for (const auto& skew : skews) {
    t.a.node->TestSkewClock(skew[0]);
    t.b.node->TestSkewClock(skew[1]);
    t.c.node->TestSkewClock(skew[2]);
    const int kKeys = 200;
    ephpm_test::Barrier barrier(3);
    std::vector<std::thread> writers;
    for (Node* n : t.all()) {
      writers.emplace_back([&, n] {
        barrier.ArriveAndWait();
        for (int i = 0; i < kKeys; ++i) {
          (void)n->store->Set("race:" + std::to_string(i), n->id() + std::to_string(skew[0]));
        }
      });
    }
    for (auto& w : writers) w.join();
    INFO("skews " << skew[0] << " " << skew[1] << " " << skew[2]);
    REQUIRE(WaitFor(3000, [&] {
              for (int i = 0; i < kKeys; ++i) {
                const std::string k = "race:" + std::to_string(i);
                const std::string v = t.a.Get(k);
                if (v == "<missing>" || t.b.Get(k) != v || t.c.Get(k) != v) return false;
              }
              return true;
            }) >= 0);
  }
  // With +2 s on a, -2 s on b: b's and c's later writes still win once they
  // have heard a's (the hybrid clock never goes back).
  t.a.node->TestSkewClock(2000);
  t.b.node->TestSkewClock(-2000);
  REQUIRE(t.a.store->Set("seq", "first") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("seq", "first"); }) >= 0);
  REQUIRE(t.b.store->Set("seq", "second") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("seq", "second"); }) >= 0);
}

TEST_CASE("cluster: a deleted key stays deleted after a partition heals; the cut-off node catches up",
          "[cluster]") {
  Trio t;
  t.Converge();
  REQUIRE(t.a.store->Set("doomed", "v") == Status::kOk);
  REQUIRE(t.a.store->Set("kept", "old") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("doomed", "v"); }) >= 0);

  // Cut c off long enough for everyone to declare the others dead.
  t.Isolate(t.c, true);
  const int64_t bound = FailureDetectionBoundMs(Fast("x"), 3);
  REQUIRE(WaitFor(bound * 2, [&] {
            return t.c.View()["a"] == MemberState::kDead && t.a.View()["c"] == MemberState::kDead;
          }) >= 0);

  // Meanwhile: b deletes "doomed", a writes what c misses, c writes what
  // the others miss.
  int64_t removed = 0;
  REQUIRE(t.b.store->Del("doomed", &removed) == Status::kOk);
  for (int i = 0; i < 100; ++i) {
    REQUIRE(t.a.store->Set("missed:" + std::to_string(i), "m") == Status::kOk);
  }
  REQUIRE(t.c.store->Set("from-c", "partitioned") == Status::kOk);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(t.c.Get("doomed") == "v");
  CHECK(t.c.Get("missed:0") == "<missing>");

  t.Isolate(t.c, false);
  REQUIRE(WaitFor(bound * 4, [&] { return AllAlive(t.all(), {"a", "b", "c"}); }) >= 0);
  REQUIRE(WaitFor(3000, [&] {
            for (int i = 0; i < 100; ++i) {
              if (t.c.Get("missed:" + std::to_string(i)) != "m") return false;
            }
            return t.Everywhere("from-c", "partitioned") && t.Everywhere("kept", "old");
          }) >= 0);
  // c sent its whole state (with the old "doomed") to the others: the
  // tombstone outranks it, and c takes the deletion.
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere("doomed", "<missing>"); }) >= 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(t.Everywhere("doomed", "<missing>"));
}

TEST_CASE("cluster: a short cut (never declared dead) is repaired too", "[cluster]") {
  Trio t;
  t.Converge();
  t.Isolate(t.b, true);
  for (int i = 0; i < 50; ++i) {
    REQUIRE(t.a.store->Set("short:" + std::to_string(i), "x") == Status::kOk);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(t.b.Get("short:0") == "<missing>");
  t.Isolate(t.b, false);
  REQUIRE(WaitFor(3000, [&] {
            for (int i = 0; i < 50; ++i) {
              if (t.b.Get("short:" + std::to_string(i)) != "x") return false;
            }
            return true;
          }) >= 0);
}

TEST_CASE("cluster: a node that joins later receives the whole state", "[cluster]") {
  Trio t;
  t.Converge();
  int64_t added = 0;
  for (int i = 0; i < 3000; ++i) {
    REQUIRE(t.a.store->Set("bulk:" + std::to_string(i), std::string(100, 'v')) == Status::kOk);
  }
  REQUIRE(t.b.store->HSet("bulk:hash", {{"f", "v"}}, false, &added) == Status::kOk);
  REQUIRE(WaitFor(3000, [&] { return t.c.store->Stats().keys == 3001; }) >= 0);
  auto od = Fast("d");
  od.join = {t.b.address()};
  Node d(od);
  const bool synced = WaitFor(5000, [&] { return d.store->Stats().keys == 3001; }) >= 0;
  INFO("d has " << d.store->Stats().keys << " keys\n" << d.node->Describe() << "\nb:\n"
                << t.b.node->Describe());
  REQUIRE(synced);
  std::string v;
  CHECK(d.store->HGet("bulk:hash", "f", &v) == Status::kOk);
  CHECK(d.Get("bulk:2999") == std::string(100, 'v'));
}

TEST_CASE("cluster: a peer's send queue over its cap drops frames, then resyncs the peer",
          "[cluster]") {
  auto oa = Fast("a");
  oa.max_queue_bytes = 4096;  // a few frames
  Node a(oa);
  auto ob = Fast("b");
  ob.join = {a.address()};
  Node b(ob);
  REQUIRE(WaitFor(2000, [&] { return AllAlive({&a, &b}, {"a", "b"}); }) >= 0);
  for (int i = 0; i < 2000; ++i) {
    REQUIRE(a.store->Set("q:" + std::to_string(i), std::string(1000, 'q')) == Status::kOk);
  }
  REQUIRE(WaitFor(5000, [&] { return b.store->Stats().keys == 2000; }) >= 0);
  const std::string info = a.node->Describe();
  INFO(info);
  CHECK(info.find("cluster_frames_dropped:0\n") == std::string::npos);
}

TEST_CASE("cluster: bad listen addresses and garbage on the data plane", "[cluster]") {
  {
    auto o = Fast("x");
    o.listen = "nonsense";
    ClusterNode n(o);
    std::string error;
    CHECK_FALSE(n.Listen(&error));
    CHECK(error.find("host:port") != std::string::npos);
  }
  {
    auto o = Fast("x");
    o.listen = "256.1.1.1:1";
    ClusterNode n(o);
    std::string error;
    CHECK_FALSE(n.Listen(&error));
    CHECK(error.find("invalid") != std::string::npos);
  }
  Trio t;
  t.Converge();
  // A client speaking something else (an HTTP request, a frame of another
  // version, a frame too long) is disconnected; the node carries on.
  const std::string host = HostOf(t.a.address());
  const int port = PortOf(t.a.address());
  const std::string garbage[] = {
      "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
      std::string("\x0a\x00\x00\x00\x09\x01\x00\x00\x00\x00\x00\x00\x00\x00", 14),
      std::string("\xff\xff\xff\x7f\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00", 14),
      std::string("\x05\x00\x00\x00\x01\x06\x00\x00\x00\x00\x00\x00\x00\x00\xff", 15),
  };
  for (const std::string& g : garbage) {
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    CHECK(SendAndExpectClose(fd, g, 2000));
  }
  REQUIRE(t.a.store->Set("still", "works") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("still", "works"); }) >= 0);
  CHECK(AllAlive(t.all(), {"a", "b", "c"}));
}

namespace {

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Reads one whole frame from `fd` within `timeout_ms`; false if the peer
// closed or nothing whole came.
bool ReadFrame(int fd, int timeout_ms, ephpm::cluster::Header* h, std::string* body) {
  std::string in;
  const int64_t end = NowMs() + timeout_ms;
  char buf[4096];
  while (NowMs() < end) {
    if (in.size() >= ephpm::cluster::kFrameHeader) {
      *h = ephpm::cluster::ParseHeader(in.data());
      if (in.size() >= ephpm::cluster::kFrameHeader + h->body_length) {
        body->assign(in, ephpm::cluster::kFrameHeader, h->body_length);
        return true;
      }
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
  return false;
}

// Sends `frame` whole on `fd`, then reads one frame back (ReadFrame, 5 s).
bool Exchange(int fd, const std::string& frame, ephpm::cluster::Header* h, std::string* reply) {
  if (send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(frame.size())) {
    return false;
  }
  return ReadFrame(fd, 5000, h, reply);
}

}  // namespace

// What a peer sends is parsed field by field: a body cut anywhere, or an
// operation this version does not know, closes that connection and changes
// nothing; a request of a chain the owner never saw is refused, not decided.
// The well-formed request first, so that the cut ones are known to be cut
// versions of something the owner accepts.
TEST_CASE("cluster: a malformed or cut frame body closes the link and changes nothing",
          "[cluster]") {
  using ephpm::cluster::MsgType;
  using ephpm::cluster::RouteArgs;
  using ephpm::cluster::RouteOp;
  using ephpm::cluster::Writer;
  Trio t;
  t.Converge();
  const std::string key = KeyOwnedBy(t.a, "a", "cut:");
  const std::string host = HostOf(t.a.address());
  const int port = PortOf(t.a.address());
  const int64_t deadline = WallMs() + 60'000;
  auto route_body = [&](uint8_t op, uint64_t chain, uint64_t position) {
    RouteArgs args;
    args.key = key;
    args.delta = 5;
    Writer w;
    w.Str("b");
    w.U8(op);
    w.I64(deadline);
    ephpm::cluster::EncodeArgs(RouteOp::kIncrBy, args, &w);
    w.U64(chain);
    w.U64(position);
    return w.out();
  };
  // Sends one route request on a new connection; the reply's status byte,
  // or -1 when the connection closed without one.
  auto ask = [&](const std::string& body) {
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    ephpm::cluster::Header h{};
    std::string reply;
    const bool got =
        Exchange(fd, ephpm::cluster::Frame(MsgType::kRouteRequest, 77, body), &h, &reply);
    close(fd);
    if (!got) return -1;
    REQUIRE(h.type == MsgType::kRouteReply);
    REQUIRE(h.request_id == 77);
    ephpm::cluster::Reader r(reply);
    std::string_view sender;
    uint8_t status = 0;
    REQUIRE(r.Str(&sender));
    REQUIRE(sender == "a");
    REQUIRE(r.U8(&status));
    return static_cast<int>(status);
  };
  const std::string whole = route_body(static_cast<uint8_t>(RouteOp::kIncrBy), 0, 0);
  REQUIRE(ask(whole) == 1);  // decided
  REQUIRE(WaitFor(3000, [&] { return t.Everywhere(key, "5"); }) >= 0);

  for (size_t cut = 0; cut < whole.size(); ++cut) {
    INFO("route request cut to " << cut << " of " << whole.size() << " bytes");
    CHECK(ask(whole.substr(0, cut)) == -1);
  }
  CHECK(ask(route_body(0xEE, 0, 0)) == -1);  // no such operation
  // The second request of a chain whose first the owner never saw.
  CHECK(ask(route_body(static_cast<uint8_t>(RouteOp::kIncrBy), 0x5eed, 1)) == 0);  // refused

  // The other types that carry fields: only the sender, then nothing.
  Writer sender_only;
  sender_only.Str("b");
  for (MsgType type : {MsgType::kPing, MsgType::kPingReq, MsgType::kJoin, MsgType::kReplicate,
                       MsgType::kSyncBatch, MsgType::kDecision, MsgType::kSyncRequest,
                       MsgType::kSyncDone, MsgType::kDecisionBatch}) {
    INFO("message type " << static_cast<int>(type));
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    CHECK(SendAndExpectClose(fd, ephpm::cluster::Frame(type, 1, sender_only.out()), 2000));
  }
  // A replicated mutation cut anywhere after its count: nothing of it is
  // applied.  Then the whole one, on another key, is.
  auto replicate = [&](const std::string& k, const std::string& value) {
    ephpm::Mutation m;
    m.kind = ephpm::Mutation::Kind::kSet;
    m.key = k;
    m.value = value;
    m.original_size = value.size();
    // Newer than any stamp of the trio's (wall ms in the high 48 bits).
    m.stamp = {static_cast<uint64_t>(WallMs() + 1000) << 16, 0};
    Writer w;
    w.Str("b");
    w.U32(1);
    w.Mut(m);
    return w.out();
  };
  const std::string mutation = replicate(key, "overwritten");
  for (size_t cut = 4 + 1 + 4; cut < mutation.size(); ++cut) {  // "b", then the count
    INFO("replication cut to " << cut << " of " << mutation.size() << " bytes");
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    CHECK(SendAndExpectClose(
        fd, ephpm::cluster::Frame(MsgType::kReplicate, 0, mutation.substr(0, cut)), 2000));
  }
  {
    const std::string other = KeyOwnedBy(t.a, "a", "whole:");
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    const std::string frame =
        ephpm::cluster::Frame(MsgType::kReplicate, 0, replicate(other, "arrived"));
    REQUIRE(send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) ==
            static_cast<ssize_t>(frame.size()));
    CHECK(WaitFor(3000, [&] { return t.a.Get(other) == "arrived"; }) >= 0);
    close(fd);
  }
  REQUIRE(t.a.store->Set("still", "works") == Status::kOk);
  REQUIRE(WaitFor(2000, [&] { return t.Everywhere("still", "works"); }) >= 0);
  CHECK(t.Everywhere(key, "5"));
  CHECK(AllAlive(t.all(), {"a", "b", "c"}));
}

namespace {

// A batch frame of `type` from "b" (its body `whole`: the sender, a count,
// the entries) sent to host:port cut at every length short of whole, then
// with a count of 0: each must make the node close the link.
void ExpectCutBatchesClose(const std::string& host, int port, ephpm::cluster::MsgType type,
                           const std::string& whole) {
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    INFO("batch cut to " << cut << " of " << whole.size() << " bytes");
    const int fd = ConnectTcp(host, port);
    REQUIRE(fd >= 0);
    CHECK(SendAndExpectClose(fd, ephpm::cluster::Frame(type, 5, whole.substr(0, cut)), 2000));
  }
  ephpm::cluster::Writer empty;
  empty.Str("b");
  empty.U32(0);
  const int fd = ConnectTcp(host, port);
  REQUIRE(fd >= 0);
  CHECK(SendAndExpectClose(fd, ephpm::cluster::Frame(type, 6, empty.out()), 2000));
}

// The whole batch, sent as request 7; the reply's body once checked to be
// a `reply_type` answering 7.
std::string ExchangeBatch(const std::string& host, int port, ephpm::cluster::MsgType type,
                          ephpm::cluster::MsgType reply_type, const std::string& whole) {
  const int fd = ConnectTcp(host, port);
  REQUIRE(fd >= 0);
  ephpm::cluster::Header h{};
  std::string reply;
  const bool got = Exchange(fd, ephpm::cluster::Frame(type, 7, whole), &h, &reply);
  close(fd);
  REQUIRE(got);
  CHECK(h.type == reply_type);
  CHECK(h.request_id == 7);
  return reply;
}

}  // namespace

// A batch of decisions (kDecisionBatch: what an owner decided in one pass,
// for one member) is read whole before any of it is judged: cut anywhere,
// or holding no decision, it closes the link and applies nothing; whole, it
// is judged in order and answered with one verdict per decision.
TEST_CASE("cluster: a batch of decisions is read whole before any of it is applied",
          "[cluster]") {
  using ephpm::cluster::MsgType;
  using ephpm::cluster::Writer;
  Trio t;
  t.Converge();
  const std::string host = HostOf(t.a.address());
  const int port = PortOf(t.a.address());
  // Decisions of b's, for keys b owns, as b would send them to a.
  const std::string k1 = KeyOwnedBy(t.a, "b", "batch1:");
  const std::string k2 = KeyOwnedBy(t.a, "b", "batch2:");
  // Three, so that the member's prefetch runs two ahead (ASan sees a key
  // read past the batch).
  const std::string k3 = KeyOwnedBy(t.a, "b", "batch3:");
  const int64_t deadline = WallMs() + 60'000;
  auto entry = [&](const std::string& k, const std::string& value, Writer* w) {
    ephpm::Mutation m;
    m.kind = ephpm::Mutation::Kind::kSet;
    m.key = k;
    m.value = value;
    m.original_size = value.size();
    m.stamp = {static_cast<uint64_t>(WallMs() + 1000) << 16, 0};
    w->Str(k);
    w->I64(deadline);
    w->Mut(m);
    w->U64(0);  // the epoch b had applied of a's state
    w->U64(0);  // b's first incarnation (no revival: not checked)
  };
  Writer batch;
  batch.Str("b");
  batch.U32(3);
  entry(k1, "one", &batch);
  entry(k2, "two", &batch);
  entry(k3, "three", &batch);
  const std::string whole = batch.out();
  ExpectCutBatchesClose(host, port, MsgType::kDecisionBatch, whole);
  CHECK(t.a.Get(k1) == "<missing>");
  CHECK(t.a.Get(k2) == "<missing>");
  CHECK(t.a.Get(k3) == "<missing>");
  const std::string reply =
      ExchangeBatch(host, port, MsgType::kDecisionBatch, MsgType::kDecisionBatchReply, whole);
  ephpm::cluster::Reader r(reply);
  std::string_view sender;
  ephpm::cluster::MemberRecord record;
  uint32_t n = 0;
  uint8_t v1 = 9, v2 = 9, v3 = 9;
  REQUIRE(r.Str(&sender));
  CHECK(sender == "a");
  REQUIRE(r.Member(&record));
  CHECK(record.id == "b");
  REQUIRE(r.U32(&n));
  CHECK(n == 3);
  REQUIRE(r.U8(&v1));
  REQUIRE(r.U8(&v2));
  REQUIRE(r.U8(&v3));
  CHECK(v1 == 0);  // confirmed
  CHECK(v2 == 0);
  CHECK(v3 == 0);
  CHECK(t.a.Get(k1) == "one");
  CHECK(t.a.Get(k2) == "two");
  CHECK(t.a.Get(k3) == "three");
  CHECK(AllAlive(t.all(), {"a", "b", "c"}));
}

// A batch of route requests (kRouteBatch: what an asker's pass asked of one
// owner) is read whole before any of it is decided: cut anywhere, or
// holding no request, it closes the link and decides nothing; whole, its
// requests are handled in order, as one kRouteRequest each would be (a
// chain's gap refused), and answered in one kRouteBatchReply, a status and
// an outcome each, in the order asked.
TEST_CASE("cluster: a batch of route requests is read whole and answered in order", "[cluster]") {
  using ephpm::cluster::MsgType;
  using ephpm::cluster::RouteArgs;
  using ephpm::cluster::RouteOp;
  using ephpm::cluster::Writer;
  Trio t;
  t.Converge();
  const std::string key = KeyOwnedBy(t.a, "a", "routebatch:");
  const std::string host = HostOf(t.a.address());
  const int port = PortOf(t.a.address());
  const int64_t deadline = WallMs() + 60'000;
  // INCRBY key 5 as request `position` of chain 0x5eed; GET key when `read`.
  auto fields = [&](uint64_t position, bool read) {
    RouteArgs args;
    args.key = key;
    args.delta = 5;
    const RouteOp op = read ? RouteOp::kGet : RouteOp::kIncrBy;
    Writer w;
    w.U8(static_cast<uint8_t>(op));
    w.I64(deadline);
    ephpm::cluster::EncodeArgs(op, args, &w);
    w.U64(read ? 0 : 0x5eed);
    w.U64(read ? 0 : position);
    return w.out();
  };
  // Positions 0 and 1, a read, then 3: its predecessor (2) was never asked.
  Writer batch;
  batch.Str("b");
  batch.U32(4);
  batch.Str(fields(0, false));
  batch.Str(fields(1, false));
  batch.Str(fields(0, true));
  batch.Str(fields(3, false));
  const std::string whole = batch.out();
  ExpectCutBatchesClose(host, port, MsgType::kRouteBatch, whole);
  CHECK(t.a.Get(key) == "<missing>");
  const std::string reply =
      ExchangeBatch(host, port, MsgType::kRouteBatch, MsgType::kRouteBatchReply, whole);
  ephpm::cluster::Reader r(reply);
  std::string_view sender;
  uint32_t n = 0;
  REQUIRE(r.Str(&sender));
  CHECK(sender == "a");
  REQUIRE(r.U32(&n));
  REQUIRE(n == 4);
  uint8_t status[4] = {9, 9, 9, 9};
  std::string_view outcome[4];
  for (int i = 0; i < 4; ++i) {
    REQUIRE(r.U8(&status[i]));
    REQUIRE(r.Str(&outcome[i]));
  }
  CHECK(r.done());
  CHECK(status[0] == 1);  // decided
  CHECK(status[1] == 1);
  CHECK(status[2] == 1);  // read
  CHECK(status[3] == 0);  // refused
  CHECK(outcome[3].empty());
  // Each outcome is that request's own, in the order asked: the two
  // increments, then the read made after them.
  ephpm::IncrByReply first, second;
  ephpm::GetReply read;
  REQUIRE(ephpm::cluster::OutcomeCodec<ephpm::IncrByReply>::Decode(outcome[0], &first));
  REQUIRE(ephpm::cluster::OutcomeCodec<ephpm::IncrByReply>::Decode(outcome[1], &second));
  REQUIRE(ephpm::cluster::OutcomeCodec<ephpm::GetReply>::Decode(outcome[2], &read));
  CHECK(first.value == 5);
  CHECK(second.value == 10);
  CHECK(read.value == "10");
  CHECK(WaitFor(3000, [&] { return t.Everywhere(key, "10"); }) >= 0);
  CHECK(AllAlive(t.all(), {"a", "b", "c"}));
}

// The owner's chain map (ClusterNode::Impl::ChainAdmits): a chain is
// forgotten only once the deadline of its last decided request has passed,
// swept when the map has grown to 1024 chains, then to twice what the last
// sweep kept (at least 1024).  A forgotten chain's next
// request is refused (the asker asks again, in order, the waiting way); a
// live one's is decided.
TEST_CASE("cluster: the owner forgets a chain only once its deadline passed", "[cluster]") {
  using ephpm::cluster::MsgType;
  using ephpm::cluster::RouteArgs;
  using ephpm::cluster::RouteOp;
  using ephpm::cluster::Writer;
  Trio t;
  t.Converge();
  const std::string key = KeyOwnedBy(t.a, "a", "sweep:");
  const std::string host = HostOf(t.a.address());
  const int port = PortOf(t.a.address());
  auto route_body = [&](int64_t deadline, uint64_t chain, uint64_t position) {
    RouteArgs args;
    args.key = key;
    args.delta = 1;
    Writer w;
    w.Str("b");
    w.U8(static_cast<uint8_t>(RouteOp::kIncrBy));
    w.I64(deadline);
    ephpm::cluster::EncodeArgs(RouteOp::kIncrBy, args, &w);
    w.U64(chain);
    w.U64(position);
    return w.out();
  };
  const int fd = ConnectTcp(host, port);
  REQUIRE(fd >= 0);
  uint64_t next_id = 1;
  // One request at a time on the connection: the reply's status byte, or
  // -1 (no reply).
  auto ask = [&](int64_t deadline, uint64_t chain, uint64_t position) {
    const uint64_t id = next_id++;
    ephpm::cluster::Header h{};
    std::string reply;
    if (!Exchange(fd,
                  ephpm::cluster::Frame(MsgType::kRouteRequest, id,
                                        route_body(deadline, chain, position)),
                  &h, &reply) ||
        h.request_id != id) {
      return -1;
    }
    ephpm::cluster::Reader r(reply);
    std::string_view sender;
    uint8_t status = 0;
    if (!r.Str(&sender) || !r.U8(&status)) return -1;
    return static_cast<int>(status);
  };
  // Each expiring chain's deadline is its own request's, 1.5 s ahead when
  // sent (a slow build's decision and confirmations fit in it); the sweep
  // comes once the last of them has passed.
  int64_t last_soon = 0;
  auto soon = [&] { return last_soon = WallMs() + 1500; };
  const int64_t later = WallMs() + 60'000;
  const uint64_t kShort = 0x51000, kLong = 0x52000;
  CHECK(ask(soon(), kShort, 0) == 1);
  CHECK(ask(later, kLong, 0) == 1);
  // Past the first threshold (1024): that sweep keeps every chain still
  // within its deadline (all of them, unless the build is slow), and sets
  // the next at twice what it kept, at least 1024: the 1000 below pass it.
  int decided = 0;
  for (uint64_t i = 0; i < 1100; ++i) decided += ask(soon(), 0x60000 + i, 0) == 1;
  CHECK(decided == 1100);
  while (WallMs() <= last_soon + 50) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // New chains' first requests, past 2048: that one sweeps.
  for (uint64_t i = 0; i < 1000; ++i) decided += ask(later, 0x70000 + i, 0) == 1;
  CHECK(decided == 2100);
  // The expired chain was forgotten: its next request is refused (with a
  // deadline of its own far ahead, so that only the map decides).
  CHECK(ask(later, kShort, 1) == 0);
  // The live ones were kept.
  CHECK(ask(later, kLong, 1) == 1);
  CHECK(ask(later, 0x70000, 1) == 1);
  close(fd);
  CHECK(WaitFor(3000, [&] { return t.Everywhere(key, std::to_string(2 + 2100 + 2)); }) >= 0);
}

TEST_CASE("cluster: a node restarted with its data dir loads it, tombstones included, then "
          "catches up",
          "[cluster][persistence]") {
  char tmpl[] = "/tmp/ephpm-cluster-persist-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};
  Node a(Fast("a"));
  auto ob = Fast("b");
  ob.join = {a.address()};
  auto b = std::make_unique<Node>(ob, dir);
  REQUIRE(WaitFor(JoinBoundMs(Fast("x"), 2) * 2, [&] {
            return AllAlive({&a, b.get()}, {"a", "b"}) && AllReady({&a, b.get()});
          }) >= 0);
  for (int i = 0; i < 50; ++i) REQUIRE(a.store->Set("k" + std::to_string(i), "v") == Status::kOk);
  REQUIRE(a.store->Set("doomed", "old") == Status::kOk);
  REQUIRE(WaitFor(3000, [&] { return b->Get("doomed") == "old" && b->Get("k49") == "v"; }) >= 0);
  int64_t removed = 0;
  REQUIRE(a.store->Del("doomed", &removed) == Status::kOk);
  REQUIRE(WaitFor(3000, [&] { return b->Get("doomed") == "<missing>"; }) >= 0);
  // A lock taken on b for a request of b's process, on a key b owns (the
  // owner is OwnerIndex over the sorted ids a, b): b's restart must not
  // bring it back, nor may a log it (it is ephemeral there too).
  // And one on a key a owns, decided there for b's request: ephemeral on a
  // as well (the route carries it), so no member logs either.
  for (size_t owner : {size_t{1}, size_t{0}}) {
    std::string lock_key;
    for (int i = 0; lock_key.empty(); ++i) {
      const std::string k = "sess-lock-" + std::to_string(i);
      if (ephpm::cluster::OwnerIndex(k, 2) == owner) lock_key = k;
    }
    REQUIRE(b->store->SetNxEphemeral(lock_key, "tok", 30'000) ==
            ephpm::SetNxOutcome::kInserted);
    REQUIRE(WaitFor(3000, [&] { return a.Get(lock_key) == "tok"; }) >= 0);
  }

  b->Kill();
  b.reset();
  // Written while b is down: the catch-up brings it.
  REQUIRE(a.store->Set("while-down", "w") == Status::kOk);

  ob.listen = "127.0.0.1:0";
  b = std::make_unique<Node>(ob, dir);
  // Loaded before any sync could bring anything: the data (50 keys: not
  // the lock) and the tombstone of "doomed", with its stamp.
  CHECK(b->store->persistence_info().loaded_keys == 50);
  CHECK(b->store->TombstoneCount() >= 1);
  CHECK(b->Get("k0") == "v");
  // The deletion's stamp outranks the old value should anyone send it.
  ephpm::Mutation late;
  late.kind = ephpm::Mutation::Kind::kSet;
  late.key = "doomed";
  late.value = "old";
  late.original_size = 3;
  late.stamp = ephpm::Stamp{1, 1};
  CHECK_FALSE(b->store->ApplyReplicated(late));
  REQUIRE(WaitFor(JoinBoundMs(Fast("x"), 2) * 2, [&] {
            return AllAlive({&a, b.get()}, {"a", "b"}) && AllReady({&a, b.get()});
          }) >= 0);
  REQUIRE(WaitFor(3000, [&] { return b->Get("while-down") == "w"; }) >= 0);
  CHECK(b->Get("doomed") == "<missing>");
}
