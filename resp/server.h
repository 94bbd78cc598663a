// The RESP2 server: Boost.Asio, several I/O threads, one Store.
//
// Each connection reads, parses every complete request in what arrived
// (pipelining, inline commands), runs them through the Dispatcher and writes
// the replies in one go.  The server holds no lock of its own around Store
// calls.  Safe by default: loopback, a password if given, Redis's frame
// limits (smaller before AUTH), caps on a client's unread input and unsent
// output, a client limit and an optional idle timeout.

#ifndef EPHPM_RESP_SERVER_H_
#define EPHPM_RESP_SERVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ephpm/store.h"
#include "resp/commands.h"

namespace ephpm {
namespace resp {

struct RespServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;  // 0: any free port (see RespServer::port())
  std::string password;  // "" = no AUTH needed
  size_t max_clients = 10000;
  int64_t idle_timeout_seconds = 0;  // 0 = never, as Redis's `timeout 0`
  size_t max_bulk_len = 512ull << 20;  // proto-max-bulk-len
  // A client whose buffered, unparsed input passes this is disconnected
  // (Redis's client-query-buffer-limit).
  size_t max_query_buffer = 1ull << 30;
  // A client whose replies waiting to be sent pass this is disconnected.
  size_t max_output_buffer = 256ull << 20;
  size_t io_threads = 0;  // 0 = DefaultIoThreads(the machine's cores)
  // Redis's busy-reply-threshold: a script running longer may be killed
  // (SCRIPT KILL), and commands that need its shards are answered -BUSY.
  int64_t busy_reply_threshold_ms = 5000;
};

// The I/O threads a server runs when RespServerOptions::io_threads is 0:
// one fewer than the machine's cores, at least one.  A RESP server shares
// its machine with its clients (and, in the host, with PHP's workers and
// the cluster's I/O thread): on two cores, where a client takes one, two
// I/O threads on the one io_context hand connections to each other and
// cost 1.4-1.55x redis-server's CPU a request at -P 16 where one costs
// 0.8-0.9x (docs/BENCHMARKS.md "Issue 19, target 2: one RESP I/O thread by
// default on two cores, a typed strand").  `cores` is
// std::thread::hardware_concurrency() (0 = unknown).
size_t DefaultIoThreads(unsigned cores);

class RespServer {
 public:
  RespServer(Store* store, RespServerOptions options);
  ~RespServer();  // Stop()s

  RespServer(const RespServer&) = delete;
  RespServer& operator=(const RespServer&) = delete;

  // Binds and starts serving.  False with *error when the address cannot be
  // bound.
  bool Start(std::string* error);
  // Closes the listener and every connection and joins the I/O threads.
  // Idempotent.
  void Stop();

  // The bound port and "ip:port", valid after Start().
  uint16_t port() const;
  std::string address() const;
  // The I/O threads serving connections (stand-ins for busy scripts aside),
  // valid after Start().
  size_t io_threads() const;

  // Extra INFO text (e.g. the cluster's section), set before Start().
  void set_extra_info(std::function<std::string()> fn);
  // A command of the program's own beside Redis's (see ExtraCommand in
  // commands.h), set before Start().  `name` is matched ignoring case.
  void add_extra_command(const std::string& name, ExtraCommand fn);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_SERVER_H_
