// Redis commands over an ephpm::Store: argument rules, replies and error
// strings as Redis 7.0 has them, so that clients (redis-cli, phpredis,
// Predis, ...) cannot tell the difference except where ephpm says so
// (DELIFEQ; Redis 8.4's SET IF* options, DELEX and DIGEST; the lock
// extensions LOCK.FENCE, SET .. FENCE and EXPIRE/PEXPIRE .. IFEQ; INFO's
// contents, COMMAND's table, CLIENT ID, TIME, HELLO 3 since only RESP2 is
// spoken, and the wording of CLIENT/COMMAND HELP).  The differential test in
// tests/resp_diff/ holds it to that.
//
// Thread-safe: one Dispatcher serves every connection; per-connection state
// lives in the ClientState each call gets.  The dispatcher holds no lock of
// its own around Store calls.

#ifndef EPHPM_RESP_COMMANDS_H_
#define EPHPM_RESP_COMMANDS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ephpm/route_deferral.h"
#include "ephpm/store.h"

namespace ephpm {
namespace resp {

struct BlockedPop;  // resp/blocking.h
namespace script {
class Scripting;
}

// One connection's state.  Touched only by the thread serving it.
struct ClientState {
  uint64_t id = 0;
  std::string name;            // CLIENT SETNAME
  std::string addr;            // "ip:port" of the peer
  std::string laddr;           // "ip:port" of our end
  int64_t connected_at_ms = 0;
  bool authenticated = false;  // or no password is set
  bool close_after_reply = false;
  const char* last_command = nullptr;  // static name of the last command run
  // MULTI/EXEC (cmd_multi.cc): between MULTI and EXEC/DISCARD commands are
  // queued; a command refused while queuing (unknown, wrong arity) makes
  // EXEC answer EXECABORT.  in_exec while EXEC runs the queue (commands run
  // then, and a blocking command does not block).
  uint32_t db = 0;  // SELECT
  bool in_multi = false;
  bool multi_dirty = false;
  bool in_exec = false;
  bool exec_wrote = false;  // a write ran inside the last EXEC or EVAL
  bool in_script = false;   // the client a script's redis.call runs as
  std::vector<std::vector<std::string>> queued;
  // WATCH: each key with its counter (Store::Watch), until EXEC, DISCARD,
  // UNWATCH or the end of the connection (Dispatcher::Forget).
  struct Watched {
    std::string key;
    uint64_t touched = 0;
    uint32_t db = 0;
  };
  std::vector<Watched> watched;
  // Left by a blocking command (BLPOP, ...) for the server, which serves it
  // or suspends the connection until it can (resp/blocking.h).
  std::shared_ptr<BlockedPop> blocked;
};

// A command that a program adds beside Redis's (the test-only ephpm-faulty
// adds EPHPM.FAULT; the shipped ephpm adds none).  Gets the whole request,
// name included; returns "" to reply +OK, else the error line to reply
// (without the leading '-').  Called on the connection's I/O thread.
using ExtraCommand = std::function<std::string(const std::vector<std::string>& argv)>;

// What the commands need from the server around them.
class ServerContext {
 public:
  virtual ~ServerContext() = default;
  // "" when no password is required.
  virtual const std::string& password() const = 0;
  // Figures for INFO.
  virtual uint64_t connected_clients() const = 0;
  virtual uint64_t max_clients() const = 0;
  // Clients waiting in a blocking command (BLPOP, ...).
  virtual uint64_t blocked_clients() const { return 0; }
  // CLIENT UNBLOCK: ends the wait of the client with CLIENT ID `id` as its
  // timeout would (or with the UNBLOCKED error); false when that client is
  // not waiting in a blocking command.
  virtual bool UnblockClient(uint64_t id, bool error) {
    (void)id;
    (void)error;
    return false;
  }
  // CONFIG SET timeout: the idle limit changed; every connection's countdown
  // is measured again from its last activity (a client already idle longer
  // than the new limit is closed, as Redis's cron would).
  virtual void IdleTimeoutChanged() {}
  virtual uint64_t total_connections() const = 0;
  virtual uint64_t rejected_connections() const = 0;
  virtual int tcp_port() const = 0;
  // The I/O threads serving connections (CONFIG GET io-threads).
  virtual size_t io_threads() const = 0;
  virtual int64_t started_at_ms() const = 0;
  // One CLIENT LIST line per connection (without the trailing newline).
  virtual std::vector<std::string> ClientList() const = 0;
  // Extra INFO sections (e.g. the cluster's), appended after the built-in
  // ones; each "# Name\r\n..." block.
  virtual std::string ExtraInfo() const { return ""; }
  // The program's own command of this (lowercase) name, or null.  Looked up
  // only for names that are not Redis commands, after AUTH like any other.
  virtual const ExtraCommand* FindExtraCommand(const std::string& name) const {
    (void)name;
    return nullptr;
  }
};

// What CONFIG SET changes while the server runs (resp/cmd_config.cc): the
// server reads its client limits from here for every check, OBJECT ENCODING
// its thresholds.  Each field alone; no two need to agree.
struct RuntimeConfig {
  std::atomic<uint64_t> max_clients{10000};          // maxclients
  std::atomic<int64_t> idle_timeout_seconds{0};      // timeout
  std::atomic<uint64_t> max_bulk_len{512ull << 20};  // proto-max-bulk-len
  std::atomic<uint64_t> max_query_buffer{1ull << 30};  // client-query-buffer-limit
  // The thresholds at which Redis leaves its compact encodings; ephpm keeps
  // one representation per type and reports the name Redis would
  // (OBJECT ENCODING).  Redis 7.0's defaults (as its redis.conf).
  std::atomic<int64_t> hash_max_listpack_entries{512};
  std::atomic<int64_t> hash_max_listpack_value{64};
  std::atomic<int64_t> set_max_intset_entries{512};
  std::atomic<int64_t> zset_max_listpack_entries{128};
  std::atomic<int64_t> zset_max_listpack_value{64};
  std::atomic<int64_t> list_max_listpack_size{-2};
  std::atomic<int64_t> list_compress_depth{0};
};

// The line CLIENT LIST / CLIENT INFO prints for a connection.
std::string ClientListLine(const ClientState& c);

class Dispatcher {
 public:
  Dispatcher(Store* store, ServerContext* server);
  ~Dispatcher();

  // Runs one request and appends its RESP2 reply to *out.  Sets
  // client->close_after_reply for QUIT.  argv is non-empty.  True when a
  // write command ran (its change may need WaitDurable before its reply is
  // sent); false for anything else, a refused write included.
  bool Execute(ClientState* client, std::vector<std::string>& argv, std::string* out);

  // What Execute did with a request, for a caller with routed decisions.
  enum class Ran {
    kDone,      // it ran; its reply is in *out
    kDeferred,  // it waits for a routed decision: Replay it with the answer
    kHeld,      // it did not run (nothing counted, nothing changed): run it
                // again once the chain in flight is answered
  };
  // Execute, for a caller that can suspend its client while a cluster
  // decides (ephpm/route_deferral.h): a command that may ask for a routed
  // decision (kRoutable) runs inside a RouteDeferral with `resume`,
  // `chain` and `ticket`.  When that deferred, *deferred_now_ms is set to
  // the pass's frozen time and the reply appended to *out is no answer:
  // the caller removes it, and once `resume` has run with the answer of
  // this ticket, calls Replay with it.  While the chain is open
  // (decisions are in flight) only a kChainable command can join it;
  // every other request is held, its reply (if any) no answer either.
  // *wrote as Execute's result.
  Ran Execute(ClientState* client, std::vector<std::string>& argv, std::string* out,
              const RouteDeferral::Resume& resume, RouteChain* chain, uint64_t ticket, bool* wrote,
              int64_t* deferred_now_ms);
  // The second pass of a deferred command: its handler alone (the checks
  // before it passed in the first pass, and were counted there), inside a
  // RouteReplay with `answer` and the first pass's time.  Returns as
  // Execute.
  bool Replay(ClientState* client, std::vector<std::string>& argv, std::string* out,
              RouteAnswer answer, int64_t now_ms);

  // After a batch of requests in which a write ran, before their replies
  // are sent: waits until this thread's changes are durable (fsync=always;
  // at once otherwise).  False with the error line (without '-') that the
  // writes must answer instead when they could not be made durable.
  bool WaitDurable(std::string* error);

  // The connection is gone: releases what its state holds in the store
  // (its WATCHed keys).  Call once, from any thread.
  void Forget(ClientState* client);

  uint64_t total_commands() const { return total_commands_.load(std::memory_order_relaxed); }

  // EVAL's script cache and running scripts (scripting.h).
  script::Scripting& scripting() { return *scripting_; }
  // What CONFIG SET may change (the server fills it in at start).
  RuntimeConfig& config() { return config_; }
  const RuntimeConfig& config() const { return config_; }

 private:
  Ran Run(ClientState* client, std::vector<std::string>& argv, std::string* out,
          const RouteDeferral::Resume* resume, RouteChain* chain, uint64_t ticket, bool* wrote,
          int64_t* deferred_now_ms);

  Store* const store_;
  ServerContext* const server_;
  const std::unique_ptr<script::Scripting> scripting_;
  std::atomic<uint64_t> total_commands_{0};
  RuntimeConfig config_;
};

// The version this server reports as redis_version: the Redis release whose
// behaviour it follows, so that clients enable the right features.
inline constexpr const char* kRedisCompatVersion = "7.0.15";

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_COMMANDS_H_
