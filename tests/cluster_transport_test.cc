// The TCP transport on its own: what it reports, and on which thread.

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "transport.h"

using ephpm::cluster::Conn;
using ephpm::cluster::Header;
using ephpm::cluster::TcpTransport;
using ephpm::cluster::TransportEvents;

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
