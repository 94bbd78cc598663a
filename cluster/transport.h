// The node-to-node transport: TCP connections (Boost.Asio) carrying the
// length-prefixed frames of wire.h.  Transport is the small interface the
// node sends through (so that the tests can put a FaultTransport in
// between); TcpTransport is the real one: it listens, accepts, keeps one
// reused outbound connection per peer address with a bounded send queue,
// and hands every whole frame it reads to a callback.

#ifndef EPHPM_CLUSTER_TRANSPORT_H_
#define EPHPM_CLUSTER_TRANSPORT_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mutex.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

// One TCP connection, inbound or outbound (defined in transport.cc).
class Conn;

// A whole frame, shared by the queues of every peer it goes to.
using FramePtr = std::shared_ptr<const std::string>;

// Where the node's frames go.  Thread-safe.
class Transport {
 public:
  virtual ~Transport() = default;
  // Queues `frame` for the member at `address` ("host:port").  A
  // `replication` frame counts against the peer's queue cap; one that does
  // not fit is dropped (the transport's `dropped` event).
  virtual void Send(const std::string& address, FramePtr frame, bool replication) = 0;
  // Queues `frame` on the connection a request came in on; `peer` is the
  // asker's id.
  virtual void Reply(const std::shared_ptr<Conn>& conn, const std::string& peer,
                     FramePtr frame) = 0;
  // Whether a frame received from the member `sender` is to be handled
  // (false: it is dropped unread, as on a partition).
  virtual bool Delivers(std::string_view sender) = 0;
  // While held, every frame waits for the I/O threads (TcpTransport writes
  // some at once on the sender's thread otherwise).  The tests' pause
  // freezes those threads, and then nothing may leave the node.
  virtual void HoldDirectWrites(bool /*held*/) {}
  // A request of `type` for `address` is about to be queued by the node
  // itself, to leave later inside another frame (a batch of route
  // requests).  The fault transport may throw std::bad_alloc here, as its
  // Send would for that type: the tests' stand-in for a queue that could
  // not grow.
  virtual void Queueing(const std::string& /*address*/, MsgType /*type*/) {}
};

// What the transport tells its owner, with no transport lock held.  `frame`
// and `link_broken` run on an I/O thread, never inside Send (whose caller
// may hold a store shard lock, and link_broken's handlers reach the store);
// `dropped` may run inside Send, so it must only count and mark.
struct TransportEvents {
  // A whole frame arrived on `conn`; false (malformed) closes the connection.
  std::function<bool(const std::shared_ptr<Conn>& conn, const Header& h, std::string_view body)>
      frame;
  // The outbound connection to `address` broke: what it carried may be
  // lost, and requests sent on it will not be answered.
  std::function<void(const std::string& address)> link_broken;
  // A frame for `address` was dropped (its queue was over the cap, or the
  // connection had just closed).
  std::function<void(const std::string& address)> dropped;
};

// TCP.  Runs on the io_context it is given (the node's); its handlers run on
// whichever thread runs that context.  Thread-safe.
class TcpTransport final : public Transport {
 public:
  // `max_queue_bytes` caps each peer's unsent replication frames.
  TcpTransport(boost::asio::io_context* io, size_t max_queue_bytes, TransportEvents events);
  ~TcpTransport() override;

  // Binds `listen` ("host:port", port 0 = any).  True with *address set to
  // the bound "ip:port"; false with *error set (the host's messages:
  // "--cluster-listen needs host:port, got '...'", "invalid cluster address
  // '...'", "cannot listen on <listen>: <reason>").
  bool Listen(const std::string& listen, std::string* address, std::string* error);
  // Starts accepting connections.  REQUIRES: Listen succeeded.
  void Start();
  // From now on nothing more is sent (Send drops every frame).
  void Stopping() { stopped_.store(true); }
  // Closes the listener and every connection.  REQUIRES: on an I/O thread,
  // after Stopping().
  void CloseAll();

  void Send(const std::string& address, FramePtr frame, bool replication) override;
  void Reply(const std::shared_ptr<Conn>& conn, const std::string& peer, FramePtr frame) override;
  bool Delivers(std::string_view) override { return true; }
  void HoldDirectWrites(bool held) override { direct_held_.store(held); }

  // Frames queued to be written, and the writes that carried them (a
  // sender's gathered send, or a write started by an I/O thread, however
  // many system calls it then takes): their ratio is how well frames share
  // writes.
  uint64_t frames_sent() const { return frames_sent_.load(std::memory_order_relaxed); }
  uint64_t link_writes() const { return link_writes_.load(std::memory_order_relaxed); }

 private:
  friend class Conn;
  void Accept();
  // The outbound connection to `address`, made on first use and remade
  // after a failure.
  std::shared_ptr<Conn> LinkTo(const std::string& address);

  boost::asio::io_context* const io_;
  const size_t max_queue_bytes_;
  const TransportEvents events_;
  // The listener and its retry timer are used by the accept's handler on
  // one I/O thread and closed by CloseAll on another: asio's objects are
  // not safe for concurrent use, hence the lock.  Taken with no other lock
  // held (an asio handler never runs inside the call that starts it).
  Mutex accept_mu_;
  boost::asio::ip::tcp::acceptor acceptor_ ABSL_GUARDED_BY(accept_mu_);
  // Waits before accepting again after a failed accept (Accept).
  boost::asio::steady_timer accept_retry_ ABSL_GUARDED_BY(accept_mu_);
  std::atomic<bool> stopped_{false};
  std::atomic<bool> direct_held_{false};  // HoldDirectWrites
  std::atomic<uint64_t> frames_sent_{0};
  std::atomic<uint64_t> link_writes_{0};

  Mutex mu_;  // the connection tables; taken with no other transport lock held
  std::map<std::string, std::shared_ptr<Conn>> links_ ABSL_GUARDED_BY(mu_);  // outbound
  std::vector<std::weak_ptr<Conn>> inbound_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_TRANSPORT_H_
