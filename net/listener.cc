#include "net/listener.h"

#include <boost/asio/socket_base.hpp>
#include <boost/system/error_code.hpp>

namespace ephpm {
namespace net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

bool Listen(tcp::acceptor* acceptor, const std::string& host, uint16_t port, std::string* error) {
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(host, ec);
  if (ec) {
    *error = "invalid address '" + host + "': " + ec.message();
    return false;
  }
  const tcp::endpoint ep(addr, port);
  acceptor->open(ep.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(ep, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message();
    boost::system::error_code ignored;  // already failing; the first reason is the one to report
    acceptor->close(ignored);
    return false;
  }
  return true;
}

std::string EndpointText(const tcp::endpoint& endpoint) {
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

}  // namespace net
}  // namespace ephpm
