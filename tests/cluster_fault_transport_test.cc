// The tests' fault transport (cluster/fault_transport.h) on its own, over a
// transport that records what reaches it: a cut drops frames both ways and
// marks the peer for resync when lifted, a delay holds frames back, a
// replication delay holds back only replication.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fault_transport.h"

using ephpm::cluster::Conn;
using ephpm::cluster::FaultTransport;
using ephpm::cluster::FramePtr;
using ephpm::cluster::Transport;

namespace {

// Records every frame handed to it, by address.  Used on one thread.
class Recorder final : public Transport {
 public:
  void Send(const std::string& address, FramePtr, bool) override { sent.push_back(address); }
  void Reply(const std::shared_ptr<Conn>&, const std::string& peer, FramePtr) override {
    replied.push_back(peer);
  }
  bool Delivers(std::string_view) override { return true; }
  void HoldDirectWrites(bool held) override { holds.push_back(held); }
  std::vector<std::string> sent, replied;
  std::vector<bool> holds;
};

FramePtr AFrame() { return std::make_shared<const std::string>("frame"); }

}  // namespace

TEST_CASE("fault transport: a cut drops frames both ways, and lifting it reports the peer",
          "[cluster][faults]") {
  boost::asio::io_context io;
  Recorder base;
  std::vector<std::string> healed;
  FaultTransport faults(
      &io, 1, &base, [](const std::string& address) { return "id@" + address; },
      [&](const std::string& peer) { healed.push_back(peer); });

  faults.Send("a:1", AFrame(), false);
  CHECK(base.sent == std::vector<std::string>{"a:1"});

  faults.CutOff("id@a:1", true);
  faults.Send("a:1", AFrame(), false);
  faults.Send("b:2", AFrame(), true);
  faults.Reply(nullptr, "id@a:1", AFrame());
  CHECK(base.sent == std::vector<std::string>{"a:1", "b:2"});
  CHECK(base.replied.empty());
  CHECK_FALSE(faults.Delivers("id@a:1"));
  CHECK(faults.Delivers("id@b:2"));
  CHECK(healed.empty());

  faults.CutOff("id@a:1", false);
  CHECK(healed == std::vector<std::string>{"id@a:1"});
  CHECK(faults.Delivers("id@a:1"));
  faults.CutOff("id@a:1", false);  // not cut: nothing to report
  CHECK(healed.size() == 1);
}

TEST_CASE("fault transport: delays hold frames back; a replication delay only replication",
          "[cluster][faults]") {
  boost::asio::io_context io;
  Recorder base;
  FaultTransport faults(
      &io, 1, &base, [](const std::string& address) { return address; },
      [](const std::string&) {});

  faults.DelayReplication("a:1", 30);
  faults.Send("a:1", AFrame(), false);  // a request: at once
  CHECK(base.sent.size() == 1);
  faults.Send("a:1", AFrame(), true);  // replication: after the delay
  CHECK(base.sent.size() == 1);

  faults.Delay("b:2", 30);
  faults.Reply(nullptr, "b:2", AFrame());
  CHECK(base.replied.empty());

  const auto start = std::chrono::steady_clock::now();
  io.run();
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(30));
  CHECK(base.sent.size() == 2);
  CHECK(base.replied == std::vector<std::string>{"b:2"});
}

TEST_CASE("fault transport: a pause holds the base's direct writes until it ends",
          "[cluster][faults]") {
  boost::asio::io_context io;
  Recorder base;
  FaultTransport faults(
      &io, 1, &base, [](const std::string& address) { return "id@" + address; },
      [](const std::string&) {});
  std::thread runner([&] {
    auto work = boost::asio::make_work_guard(io);
    io.run();
  });
  faults.Pause(true);
  CHECK(base.holds == std::vector<bool>{true});
  faults.Pause(true);  // already paused: nothing more
  faults.Pause(false);
  CHECK(base.holds == std::vector<bool>{true, false});
  io.stop();
  runner.join();
}
