// Requests with deadlines (cluster/rpc.h) on their own: one timer serves
// every request, so what must hold is that each request still completes
// once, at its own deadline, whatever order the deadlines come in, and that
// answered requests do not pile up in the deadline heap.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rpc.h"

using ephpm::cluster::Conn;
using ephpm::cluster::FramePtr;
using ephpm::cluster::MsgType;
using ephpm::cluster::ParseHeader;
using ephpm::cluster::Rpc;
using ephpm::cluster::Transport;

namespace {

// Keeps every frame sent; nothing is delivered.
struct Sink : Transport {
  std::mutex mu;
  std::vector<uint64_t> ids;  // request ids, in the order sent
  void Send(const std::string&, FramePtr frame, bool) override {
    std::lock_guard<std::mutex> l(mu);
    ids.push_back(ParseHeader(frame->data()).request_id);
  }
  void Reply(const std::shared_ptr<Conn>&, const std::string&, FramePtr) override {}
  bool Delivers(std::string_view) override { return true; }
};

using Clock = std::chrono::steady_clock;

struct Outcome {
  bool done = false;
  bool ok = false;
  int calls = 0;
  Clock::time_point at;
  std::string reply;
};

// Makes `n` requests with a deadline a minute away, each answered at once;
// returns how many callbacks saw an answer.
int AnswerAtOnce(Rpc* rpc, Sink* sink, int n) {
  int answered = 0;
  for (int i = 0; i < n; ++i) {
    rpc->Request("peer:1", MsgType::kPing, "b", 60000, [&](bool ok, std::string_view) {
      answered += ok;
    });
    rpc->Complete(sink->ids.back(), true, "");
  }
  return answered;
}

}  // namespace

TEST_CASE("rpc: each request times out at its own deadline, in any order they were made",
          "[cluster][rpc]") {
  boost::asio::io_context io;
  Sink sink;
  Rpc rpc(&io, &sink);
  std::mutex mu;
  std::map<int, Outcome> out;  // by timeout in ms
  const auto start = Clock::now();
  // Later deadlines first, an earlier one after (re-arms the timer), equal
  // ones, and one answered before its deadline.
  for (int ms : {400, 250, 100, 300, 100 + 1, 50, 600}) {
    rpc.Request("peer:1", MsgType::kPing, "body", ms, [&, ms](bool ok, std::string_view r) {
      std::lock_guard<std::mutex> l(mu);
      Outcome& o = out[ms];
      o.done = true;
      o.ok = ok;
      ++o.calls;
      o.at = Clock::now();
      o.reply.assign(r);
    });
  }
  REQUIRE(sink.ids.size() == 7);
  // The 300 ms request (the fourth sent) is answered; a second answer to it
  // and one to an id never sent change nothing.
  rpc.Complete(sink.ids[3], true, "answer");
  rpc.Complete(sink.ids[3], true, "again");
  rpc.Complete(999, true, "stray");
  CHECK(rpc.pending() == 6);
  std::thread t([&] { io.run_for(std::chrono::milliseconds(900)); });
  t.join();
  std::lock_guard<std::mutex> l(mu);
  REQUIRE(out.size() == 7);
  for (const auto& [ms, o] : out) {
    INFO("timeout " << ms << " ms");
    CHECK(o.done);
    CHECK(o.calls == 1);
    if (ms == 300) {
      CHECK(o.ok);
      CHECK(o.reply == "answer");
      continue;
    }
    CHECK_FALSE(o.ok);
    const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(o.at - start).count();
    CHECK(after >= ms);  // never early
  }
  // And in deadline order.
  CHECK(out[50].at <= out[100].at);
  CHECK(out[100].at <= out[101].at);
  CHECK(out[101].at <= out[250].at);
  CHECK(out[250].at <= out[400].at);
  CHECK(out[400].at <= out[600].at);
  CHECK(rpc.pending() == 0);
}

TEST_CASE("rpc: answered requests do not pile up in the deadline heap", "[cluster][rpc]") {
  boost::asio::io_context io;
  Sink sink;
  Rpc rpc(&io, &sink);
  CHECK(AnswerAtOnce(&rpc, &sink, 100000) == 100000);
  CHECK(rpc.pending() == 0);
  CHECK(rpc.deadlines() <= 1024 + 1);
}

TEST_CASE("rpc: requests pending while the deadline heap is rebuilt keep their deadlines",
          "[cluster][rpc]") {
  // The heap is rebuilt in place from the pending table once most of its
  // entries are stale; the requests still waiting then must time out, each
  // once, in deadline order, whatever order the table gave them back in.
  boost::asio::io_context io;
  Sink sink;
  Rpc rpc(&io, &sink);
  std::mutex mu;
  std::vector<int> expired;  // the waiting requests' timeouts, in the order they expired
  for (int i = 19; i >= 0; --i) {
    const int ms = 100 + 10 * i;
    rpc.Request("peer:1", MsgType::kPing, "wait", ms, [&, ms](bool ok, std::string_view) {
      std::lock_guard<std::mutex> l(mu);
      expired.push_back(ok ? -ms : ms);
    });
  }
  // Several rebuilds (at 2 * 20 + 1024 entries).
  CHECK(AnswerAtOnce(&rpc, &sink, 5000) == 5000);
  CHECK(rpc.pending() == 20);
  CHECK(rpc.deadlines() <= 2 * 20 + 1024 + 1);
  std::thread t([&] { io.run_for(std::chrono::milliseconds(700)); });
  t.join();
  std::vector<int> want;
  for (int i = 0; i < 20; ++i) want.push_back(100 + 10 * i);
  std::lock_guard<std::mutex> l(mu);
  CHECK(expired == want);
  CHECK(rpc.pending() == 0);
}

TEST_CASE("rpc: no request times out once the timer is cancelled for a stop",
          "[cluster][rpc]") {
  boost::asio::io_context io;
  Sink sink;
  Rpc rpc(&io, &sink);
  bool called = false;
  rpc.Request("peer:1", MsgType::kPing, "b", 20, [&](bool, std::string_view) { called = true; });
  rpc.CancelTimers();
  rpc.Request("peer:1", MsgType::kPing, "b", 20, [&](bool, std::string_view) { called = true; });
  io.run_for(std::chrono::milliseconds(200));
  CHECK_FALSE(called);
  CHECK(rpc.pending() == 2);
  // A broken link still fails them.
  rpc.FailTo("peer:1");
  CHECK(called);
  CHECK(rpc.pending() == 0);
}
