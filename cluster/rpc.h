// Requests with timeouts over the transport: each request gets an id, its
// answer (a frame carrying that id) or its timer completes it, once.

#ifndef EPHPM_CLUSTER_RPC_H_
#define EPHPM_CLUSTER_RPC_H_

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mutex.h"
#include "transport.h"
#include "wire.h"

namespace ephpm {
namespace cluster {

// Thread-safe.  Its lock is a leaf but for the completions: `done` runs with
// no Rpc lock held.
class Rpc {
 public:
  using Done = std::function<void(bool ok, std::string_view reply)>;

  // Timers run on `io`; frames go through `transport`.
  Rpc(boost::asio::io_context* io, Transport* transport) : io_(io), transport_(transport) {}

  // Sends a request of `type` with `body` to the member at `address`;
  // `done` runs once: with the reply's body (true), or (false) after
  // `timeout_ms` or when the connection to `address` breaks.
  void Request(const std::string& address, MsgType type, const std::string& body,
               int64_t timeout_ms, Done done);
  // The answer to request `id` arrived (ok), or it failed: completes it.
  // Does nothing for a request already completed.
  void Complete(uint64_t id, bool ok, std::string_view body);
  // The connection to `address` broke: its requests will get no answer.
  void FailTo(const std::string& address);
  // Cancels every timer (the node is stopping).  REQUIRES: on an I/O thread.
  void CancelTimers();

 private:
  struct Pending {
    Done done;
    std::shared_ptr<boost::asio::steady_timer> timer;
    std::string address;  // where the request went
  };

  boost::asio::io_context* const io_;
  Transport* const transport_;
  // The timers are touched only under mu_ (in Request, Complete and
  // CancelTimers): an asio timer is not safe for concurrent use, and a
  // connection failure can complete a request on an I/O thread at once.
  Mutex mu_;
  std::unordered_map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> next_{0};
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_RPC_H_
