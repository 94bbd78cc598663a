// Listening sockets, opened the same way by every server in the host: the
// RESP server, the HTTP server and the cluster's node-to-node transport.

#ifndef EPHPM_NET_LISTENER_H_
#define EPHPM_NET_LISTENER_H_

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdint>
#include <string>

namespace ephpm {
namespace net {

// Opens `acceptor` on host:port with SO_REUSEADDR and the system's largest
// backlog. `host` is a numeric IPv4 or IPv6 address; port 0 lets the system
// choose (read it back with acceptor->local_endpoint()).
//
// Returns true when the acceptor is listening. Otherwise returns false,
// leaves the acceptor closed and sets *error to one line that starts
// "invalid address '<host>': " or "cannot listen on <host>:<port>: " followed
// by the system's reason.
//
// Not thread-safe for one acceptor: call it before any operation is pending.
bool Listen(boost::asio::ip::tcp::acceptor* acceptor, const std::string& host, uint16_t port,
            std::string* error);

// How long a server waits before accepting again after an accept failed
// for a reason other than its listener closing (out of file descriptors:
// EMFILE, ENFILE; ENOBUFS).  The connection stays queued, so accepting again
// at once would fail again at once: a loop that spins an I/O thread for as
// long as the shortage lasts.
inline constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// "address:port" of an endpoint (an IPv6 address as it is, without brackets).
std::string EndpointText(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace net
}  // namespace ephpm

#endif  // EPHPM_NET_LISTENER_H_
