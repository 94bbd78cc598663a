// The TCP transport on its own: what it reports, and on which thread.

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/send_cork.h"
#include "transport.h"

using ephpm::cluster::Conn;
using ephpm::cluster::Frame;
using ephpm::cluster::Header;
using ephpm::cluster::MsgType;
using ephpm::cluster::TcpTransport;
using ephpm::cluster::TransportEvents;

namespace {

// A transport with its own io_context, run by one thread between Run and Stop,
// recording what it receives and reports.  Read with Wait (the handlers run
// on the I/O thread; the test's assertions stay on the main thread).
struct Side {
  boost::asio::io_context io;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint64_t> ids;       // request ids of the frames received, in order
  std::vector<std::string> bodies;  // and their bodies
  std::vector<std::string> broken;
  std::vector<std::string> dropped;
  TcpTransport transport;
  std::string address;
  std::thread thread;

  Side()
      : transport(&io, 1 << 30,
                  TransportEvents{
                      [this](const std::shared_ptr<Conn>&, const Header& h, std::string_view b) {
                        std::lock_guard<std::mutex> l(mu);
                        ids.push_back(h.request_id);
                        bodies.emplace_back(b);
                        cv.notify_all();
                        return true;
                      },
                      [this](const std::string& a) {
                        std::lock_guard<std::mutex> l(mu);
                        broken.push_back(a);
                        cv.notify_all();
                      },
                      [this](const std::string& a) {
                        std::lock_guard<std::mutex> l(mu);
                        dropped.push_back(a);
                      }}) {}
  ~Side() {
    Stop();
    transport.Stopping();
    io.restart();
    boost::asio::post(io, [this] { transport.CloseAll(); });
    io.run_for(std::chrono::seconds(2));
  }

  void Listen() {
    std::string error;
    REQUIRE(transport.Listen("127.0.0.1:0", &address, &error));
    transport.Start();
  }
  void Run() {
    io.restart();
    thread = std::thread([this] {
      auto work = boost::asio::make_work_guard(io);
      io.run();
    });
  }
  // Returns once every handler already queued on the I/O thread has run
  // (one thread runs them in order), and every handler those queued.
  // Twice, because a handler that writes to a socket at once queues the
  // write's completion only after send() returns (or, for a continuation,
  // when the handler returns): the peer may read the bytes and a first post
  // land ahead of that completion (CI saw it once, under ASan).  The first
  // post runs after the handler that wrote returned, so the second one is
  // made after the completion was queued.
  void Drain() {
    for (int round = 0; round < 2; ++round) {
      std::promise<void> ran;
      boost::asio::post(io, [&ran] { ran.set_value(); });
      ran.get_future().wait();
    }
  }
  void Stop() {
    if (!thread.joinable()) return;
    io.stop();
    thread.join();
  }
  // Waits up to 10 s until `pred` holds under mu.
  template <typename Pred>
  bool Wait(Pred pred) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, std::chrono::seconds(10), [&] { return pred(); });
  }
};

std::shared_ptr<const std::string> MakeFrame(uint64_t id, std::string body) {
  return std::make_shared<const std::string>(Frame(MsgType::kPing, id, body));
}

// A body of `n` bytes whose content depends on `id` and the position.
std::string Pattern(uint64_t id, size_t n) {
  std::string b(n, '\0');
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<char>('a' + (id * 7 + i) % 26);
  return b;
}

}  // namespace

TEST_CASE("transport: an address that cannot even be tried breaks the link on an I/O thread, "
          "never inside Send",
          "[cluster][transport]") {
  // Send runs under a store shard lock when Publish calls it, and the node's
  // link_broken handler completes requests, which reaches the store: it must
  // not run on the sender's stack.  The io_context is not running yet, so
  // anything reported before io.run() was reported inside Send.
  boost::asio::io_context io;
  std::vector<std::string> broken, dropped;
  TransportEvents events{
      [](const std::shared_ptr<Conn>&, const Header&, std::string_view) { return true; },
      [&](const std::string& address) { broken.push_back(address); },
      [&](const std::string& address) { dropped.push_back(address); }};
  TcpTransport t(&io, 1 << 20, events);
  const auto frame = std::make_shared<const std::string>("frame");
  t.Send("no-port-here", frame, false);    // not host:port
  t.Send("not-an-ip:7000", frame, false);  // host:port, but no address
  CHECK(broken.empty());
  io.run();
  std::sort(broken.begin(), broken.end());
  CHECK(broken == std::vector<std::string>{"no-port-here", "not-an-ip:7000"});
  CHECK(dropped.empty());
}

TEST_CASE("transport: a request from a thread other than the I/O thread goes out at once",
          "[cluster][transport]") {
  // A PHP worker's decision used to wake the I/O thread to write its frames:
  // a thread wake-up and a hop on every decision.  With the sender's I/O
  // thread stopped, a frame can only reach the peer if the sending thread
  // wrote it.
  Side receiver, sender;
  receiver.Listen();
  receiver.Run();
  sender.Run();
  sender.transport.Send(receiver.address, MakeFrame(1, "first"), false);  // connects
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 1; }));
  // The first frame's write has completed on the sender's side too (else
  // the connection is still writing, and the next frame rightly queues).
  sender.Drain();
  sender.Stop();
  sender.transport.Send(receiver.address, MakeFrame(2, "second"), false);
  CHECK(receiver.Wait([&] { return receiver.ids.size() == 2; }));
  // A replication frame is queued for the I/O thread (which batches them),
  // and so is every frame behind it, in order.
  sender.transport.Send(receiver.address, MakeFrame(3, "replicated"), true);
  sender.transport.Send(receiver.address, MakeFrame(4, "behind it"), false);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  {
    std::lock_guard<std::mutex> l(receiver.mu);
    CHECK(receiver.ids == std::vector<uint64_t>{1, 2});
  }
  sender.Run();
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 4; }));
  std::lock_guard<std::mutex> l(receiver.mu);
  CHECK(receiver.ids == std::vector<uint64_t>{1, 2, 3, 4});
  CHECK(receiver.bodies == std::vector<std::string>{"first", "second", "replicated", "behind it"});
  CHECK(sender.broken.empty());
}

TEST_CASE("transport: frames a full socket cannot take at once arrive whole and in order",
          "[cluster][transport]") {
  // The receiver reads nothing until every frame is sent, so the sender's
  // first direct write stops part-way into a frame and the rest waits in
  // the queue; requests and replication frames from two threads mix.
  Side receiver, sender;
  receiver.Listen();
  receiver.Run();
  sender.Run();
  sender.transport.Send(receiver.address, MakeFrame(0, "hello"), false);
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 1; }));
  receiver.Stop();
  constexpr uint64_t kPerThread = 40;
  auto send = [&](uint64_t first, bool replication) {
    for (uint64_t i = 0; i < kPerThread; ++i) {
      const uint64_t id = first + i;
      const size_t n = i % 3 == 0 ? (3u << 20) + id : 100 + id;  // 3 MiB, or small
      sender.transport.Send(receiver.address, MakeFrame(id, Pattern(id, n)),
                            replication && i % 2 == 1);
    }
  };
  std::thread a(send, 1000, false), b(send, 2000, true);
  a.join();
  b.join();
  receiver.Run();
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 1 + 2 * kPerThread; }));
  std::lock_guard<std::mutex> l(receiver.mu);
  uint64_t next_a = 1000, next_b = 2000;
  bool whole = true, ordered = true;
  for (size_t i = 1; i < receiver.ids.size(); ++i) {
    const uint64_t id = receiver.ids[i];
    uint64_t& next = id < 2000 ? next_a : next_b;
    if (id != next) ordered = false;
    next = id + 1;
    const size_t n = (id % 1000) % 3 == 0 ? (3u << 20) + id : 100 + id;
    if (receiver.bodies[i] != Pattern(id, n)) whole = false;
  }
  CHECK(ordered);
  CHECK(whole);
  CHECK(next_a == 1000 + kPerThread);
  CHECK(next_b == 2000 + kPerThread);
  CHECK(sender.broken.empty());
  CHECK(sender.dropped.empty());
}

TEST_CASE("transport: a direct write to a peer that went away reports the broken link",
          "[cluster][transport]") {
  Side sender;
  sender.Run();
  std::string address;
  {
    Side receiver;
    receiver.Listen();
    receiver.Run();
    address = receiver.address;
    sender.transport.Send(address, MakeFrame(1, "first"), false);
    REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 1; }));
  }  // the receiver closes its end
  // The first write after the close may still be accepted by the kernel;
  // one of the next fails, and the link is reported broken, on the I/O
  // thread, not inside Send.
  bool reported = false;
  for (int i = 0; i < 50 && !reported; ++i) {
    sender.transport.Send(address, MakeFrame(2 + i, "after the close"), false);
    std::unique_lock<std::mutex> l(sender.mu);
    reported = sender.cv.wait_for(l, std::chrono::milliseconds(100),
                                  [&] { return !sender.broken.empty(); });
  }
  CHECK(reported);
  std::lock_guard<std::mutex> l(sender.mu);
  CHECK(!sender.broken.empty());
  if (!sender.broken.empty()) CHECK(sender.broken.front() == address);
}

TEST_CASE("transport: frames sent under a cork leave together when it releases, in order",
          "[cluster][transport]") {
  // A RESP thread running a pipeline of routed commands holds its requests
  // in a cork (ephpm/send_cork.h) and writes them in one gathered write at
  // its end.  The sender's I/O thread is stopped, so whatever arrives was
  // written by the sending thread itself.
  Side receiver, sender;
  receiver.Listen();
  receiver.Run();
  sender.Run();
  sender.transport.Send(receiver.address, MakeFrame(1, "connect"), false);
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 1; }));
  sender.Drain();
  sender.Stop();
  const uint64_t frames_before = sender.transport.frames_sent();
  const uint64_t writes_before = sender.transport.link_writes();
  {
    ephpm::SendCork cork;
    CHECK(ephpm::SendCork::Open());
    {
      ephpm::SendCork inner;  // nested: its end releases nothing
      for (uint64_t id = 2; id <= 11; ++id) {
        sender.transport.Send(receiver.address, MakeFrame(id, Pattern(id, 50 + id)), false);
      }
    }
    for (uint64_t id = 12; id <= 21; ++id) {
      sender.transport.Send(receiver.address, MakeFrame(id, Pattern(id, 50 + id)), false);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    {
      std::lock_guard<std::mutex> l(receiver.mu);
      CHECK(receiver.ids == std::vector<uint64_t>{1});  // all held
    }
    CHECK(sender.transport.link_writes() == writes_before);
  }
  CHECK_FALSE(ephpm::SendCork::Open());
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 21; }));
  CHECK(sender.transport.frames_sent() == frames_before + 20);
  CHECK(sender.transport.link_writes() == writes_before + 1);  // one gathered write
  {
    std::lock_guard<std::mutex> l(receiver.mu);
    bool in_order = true;
    for (uint64_t id = 2; id <= 21; ++id) {
      in_order = in_order && receiver.ids[id - 1] == id &&
                 receiver.bodies[id - 1] == Pattern(id, 50 + id);
    }
    CHECK(in_order);
  }
  // Release() inside an open cork writes at once (a thread about to wait);
  // the cork goes on holding what comes after.
  {
    ephpm::SendCork cork;
    sender.transport.Send(receiver.address, MakeFrame(22, "before a wait"), false);
    ephpm::SendCork::Release();
    CHECK(receiver.Wait([&] { return receiver.ids.size() == 22; }));
    sender.transport.Send(receiver.address, MakeFrame(23, "after it"), false);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard<std::mutex> l(receiver.mu);
    CHECK(receiver.ids.size() == 22);
  }
  CHECK(receiver.Wait([&] { return receiver.ids.size() == 23; }));
  // A replication frame is the I/O thread's to write even under a cork, and
  // a corked request queued behind it does not overtake it.
  {
    ephpm::SendCork cork;
    sender.transport.Send(receiver.address, MakeFrame(24, "replicated"), true);
    sender.transport.Send(receiver.address, MakeFrame(25, "behind it"), false);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard<std::mutex> l(receiver.mu);
    CHECK(receiver.ids.size() == 23);
  }
  sender.Run();
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 25; }));
  std::lock_guard<std::mutex> l(receiver.mu);
  CHECK(receiver.ids[23] == 24);
  CHECK(receiver.ids[24] == 25);
  CHECK(sender.broken.empty());
}

TEST_CASE("transport: what a cork held goes out whole when the socket or the link is not "
          "ready at its release",
          "[cluster][transport]") {
  Side receiver, sender;
  receiver.Listen();
  receiver.Run();
  sender.Run();
  // Not connected yet: the first frames are held while the connection is
  // made; the release leaves them to the connect's completion.
  {
    ephpm::SendCork cork;
    for (uint64_t id = 1; id <= 5; ++id) {
      sender.transport.Send(receiver.address, MakeFrame(id, Pattern(id, 10)), false);
    }
  }
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 5; }));
  // A receiver that reads nothing: the release's write stops part-way into
  // a frame, and the I/O thread writes the rest.
  receiver.Stop();
  constexpr uint64_t kFrames = 12;
  {
    ephpm::SendCork cork;
    for (uint64_t id = 6; id < 6 + kFrames; ++id) {
      sender.transport.Send(receiver.address, MakeFrame(id, Pattern(id, (1u << 20) + id)), false);
    }
  }
  receiver.Run();
  REQUIRE(receiver.Wait([&] { return receiver.ids.size() == 5 + kFrames; }));
  std::lock_guard<std::mutex> l(receiver.mu);
  bool whole = true;
  for (uint64_t id = 1; id < 6 + kFrames; ++id) {
    const size_t n = id < 6 ? 10 : (1u << 20) + id;
    whole = whole && receiver.ids[id - 1] == id && receiver.bodies[id - 1] == Pattern(id, n);
  }
  CHECK(whole);
  CHECK(sender.broken.empty());
  CHECK(sender.dropped.empty());
}

TEST_CASE("transport: connections arriving while another I/O thread closes the transport",
          "[cluster][transport]") {
  // The accept's handler runs on one I/O thread and re-arms the accept;
  // CloseAll (the node's Stop) closes the listener from another.  asio's
  // acceptor is not safe for concurrent use, so the two must not overlap
  // (ThreadSanitizer reports it where they do).  Once CloseAll has run, the
  // port refuses connections: nothing re-armed the accept.
  for (int round = 0; round < 100; ++round) {
    boost::asio::io_context io;
    auto work = boost::asio::make_work_guard(io);
    TransportEvents events{
        [](const std::shared_ptr<Conn>&, const Header&, std::string_view) { return true; },
        [](const std::string&) {}, [](const std::string&) {}};
    TcpTransport t(&io, 1 << 20, events);
    std::string address, error;
    REQUIRE(t.Listen("127.0.0.1:0", &address, &error));
    const uint16_t port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
    t.Start();
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) threads.emplace_back([&io] { io.run(); });
    const boost::asio::ip::tcp::endpoint to(boost::asio::ip::make_address("127.0.0.1"), port);
    std::atomic<bool> closing{false};
    std::atomic<int> connected{0};
    std::thread client([&] {
      boost::asio::io_context cio;
      while (!closing.load()) {
        boost::asio::ip::tcp::socket s(cio);
        boost::system::error_code ec;
        s.connect(to, ec);
        if (!ec) connected.fetch_add(1);
      }
    });
    while (connected.load() < 10 + round % 20) std::this_thread::yield();
    t.Stopping();
    std::promise<void> closed;
    boost::asio::post(io, [&] {
      t.CloseAll();
      closed.set_value();
    });
    closed.get_future().wait();
    closing.store(true);
    client.join();
    boost::asio::io_context cio;
    boost::asio::ip::tcp::socket s(cio);
    boost::system::error_code ec;
    s.connect(to, ec);
    const bool refused = ec == boost::asio::error::connection_refused;
    io.stop();
    for (auto& th : threads) th.join();
    REQUIRE(refused);
  }
}
