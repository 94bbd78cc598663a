#include "server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <cctype>
#include <chrono>
#include <deque>
#include <list>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "blocking.h"
#include "commands.h"
#include "ephpm/clock.h"
#include "ephpm/send_cork.h"
#include "mutex.h"
#include "net/listener.h"
#include "net/session_registry.h"
#include "parser.h"
#include "reply.h"
#include "scripting.h"

namespace ephpm {
namespace resp {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunk = 16 * 1024;

// How often the blocked clients are tried again for writes that did not
// come through a RESP connection (PHP, replication): from the first
// interval, doubling while nothing is served, up to the last.
constexpr int64_t kBlockPollMinMs = 10;
constexpr int64_t kBlockPollMaxMs = 100;

}  // namespace

class RespServer::Impl : public ServerContext {
 public:
  class Session;

  Impl(Store* store, RespServerOptions o)
      : options_(std::move(o)),
        store_(store),
        dispatcher_(store, this),
        acceptor_(io_),
        accept_strand_(asio::make_strand(io_)),
        accept_retry_(accept_strand_),
        poll_strand_(asio::make_strand(io_)),
        poll_(poll_strand_),
        started_at_ms_(WallMs()) {
    dispatcher_.scripting().set_busy_threshold_ms(options_.busy_reply_threshold_ms);
    dispatcher_.scripting().set_on_busy(
        [this](std::shared_ptr<std::atomic<bool>> ended) { AddStandIn(std::move(ended)); });
    RuntimeConfig& config = dispatcher_.config();
    config.max_clients = options_.max_clients;
    config.idle_timeout_seconds = options_.idle_timeout_seconds;
    config.max_bulk_len = options_.max_bulk_len;
    config.max_query_buffer = options_.max_query_buffer;
  }

  ~Impl() override { Stop(); }

  bool Start(std::string* error) {
    if (!net::Listen(&acceptor_, options_.bind_address, options_.port, error)) return false;
    bound_ = acceptor_.local_endpoint();
    Accept();
    io_threads_ = options_.io_threads != 0 ? options_.io_threads
                                           : DefaultIoThreads(std::thread::hardware_concurrency());
    for (size_t i = 0; i < io_threads_; ++i) threads_.emplace_back([this] { io_.run(); });
    return true;
  }

  void Stop() {
    if (stopped_.exchange(true)) return;
    // On the accept strand, so that no accept handler is half way through
    // adding a session meanwhile (it would then never be closed, and the
    // I/O threads never return).
    asio::post(accept_strand_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      accept_retry_.cancel();
      for (const auto& s : sessions_.Live()) s->Close();
    });
    asio::post(poll_strand_, [this] { poll_.cancel(); });
    // A runaway script would hold its I/O thread, and this join, forever.
    dispatcher_.scripting().KillForShutdown();
    for (auto& t : threads_) t.join();
    threads_.clear();
    // (Joined without the lock: a stand-in's script may be reporting itself
    // busy, which takes it; AddStandIn then sees stopped_.)
    std::list<StandIn> stand_ins;
    {
      MutexLock l(&stand_in_mu_);
      stand_ins.swap(stand_ins_);
    }
    for (StandIn& t : stand_ins) t.thread.join();
    MutexLock l(&resume_gate_->mu);
    resume_gate_->open = false;
  }

  uint16_t port() const { return bound_.port(); }
  std::string address() const { return net::EndpointText(bound_); }
  void set_extra_info(std::function<std::string()> fn) { extra_info_ = std::move(fn); }
  void add_extra_command(const std::string& name, ExtraCommand fn) {
    std::string lower(name);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    extra_commands_[lower] = std::move(fn);
  }

  // ServerContext
  const std::string& password() const override { return options_.password; }
  uint64_t connected_clients() const override { return connected_.load(); }
  uint64_t max_clients() const override { return dispatcher_.config().max_clients.load(); }
  uint64_t blocked_clients() const override { return waiting_.load(std::memory_order_relaxed); }
  void IdleTimeoutChanged() override {
    for (const auto& s : sessions_.Live()) s->IdleLimitChanged();
  }
  uint64_t total_connections() const override { return total_connections_.load(); }
  uint64_t rejected_connections() const override { return rejected_.load(); }
  int tcp_port() const override { return bound_.port(); }
  size_t io_threads() const override { return io_threads_; }
  int64_t started_at_ms() const override { return started_at_ms_; }
  std::vector<std::string> ClientList() const override;
  std::string ExtraInfo() const override { return extra_info_ ? extra_info_() : ""; }
  const ExtraCommand* FindExtraCommand(const std::string& name) const override {
    auto it = extra_commands_.find(name);
    return it == extra_commands_.end() ? nullptr : &it->second;
  }

  // A connection's socket and timers run on its strand, named by their
  // type: no type-erased executor, which asio copies onto the heap for
  // every operation's work tracking (a strand is larger than its inline
  // buffer), and one strand where a strand over the socket's strand made
  // two (docs/BENCHMARKS.md "Issue 19, target 2: one RESP I/O thread by
  // default on two cores, a typed strand").
  using Strand = asio::strand<asio::io_context::executor_type>;
  using Socket = tcp::socket::rebind_executor<Strand>::other;
  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Strand>;

  class Session : public std::enable_shared_from_this<Session> {
   public:
    Session(Impl* server, Socket socket)
        : server_(server),
          socket_(std::move(socket)),
          strand_(socket_.get_executor()),
          idle_(strand_),
          block_timer_(strand_),
          parser_(Limits(server->options_)) {
      boost::system::error_code ec;
      client_.id = server->next_client_id_.fetch_add(1) + 1;
      const auto remote = socket_.remote_endpoint(ec);
      if (!ec) client_.addr = net::EndpointText(remote);
      const auto local = socket_.local_endpoint(ec);
      if (!ec) client_.laddr = net::EndpointText(local);
      client_.connected_at_ms = WallMs();
      client_.authenticated = server->options_.password.empty();
      parser_.set_authenticated(client_.authenticated);
      socket_.set_option(tcp::no_delay(true), ec);
      shown_ = client_;
    }

    void Start() {
      {
        server_->sessions_.Add(this);
      }
      // A routed decision's answer (route_deferral.h), from whichever
      // thread settles it.  Weak: a pending decision does not keep a closed
      // connection (nor, at exit, the server) alive.
      // The gate: an answer that comes once the server has stopped (the
      // node may outlive it) neither posts to its io_context nor, holding
      // the last reference, destroys a session there.
      // Answers go to the session's inbox; one post to its strand takes
      // every answer that arrived before it runs (a chain's answers come in
      // bursts: a handler and a wake-up each cost more than the answer).
      auto to_inbox = [weak = weak_from_this(), gate = server_->resume_gate_](RouteAnswer answer) {
        MutexLock l(&gate->mu);
        if (!gate->open) return;
        std::shared_ptr<Session> self = weak.lock();
        if (self == nullptr) return;
        bool post = false;
        {
          MutexLock il(&self->inbox_mu_);
          self->inbox_.push_back(std::move(answer));
          post = !self->inbox_posted_;
          self->inbox_posted_ = true;
        }
        if (!post) return;
        try {
          asio::post(self->strand_, [self] { self->TakeAnswers(); });
        } catch (...) {
          // Not posted: the next answer posts for this one as well.
          MutexLock il(&self->inbox_mu_);
          self->inbox_posted_ = false;
          throw;
        }
      };
      resume_ = std::make_shared<const std::function<void(RouteAnswer)>>(std::move(to_inbox));
      // Everything about the session happens on its strand.
      asio::dispatch(strand_, [self = shared_from_this()] {
        self->ArmIdleTimer();
        self->Read();
      });
    }

    ~Session() {
      server_->dispatcher_.Forget(&client_);
      server_->sessions_.Remove(this);
      server_->connected_.fetch_sub(1);
    }

    // From any thread: the idle limit changed (CONFIG SET timeout).
    void IdleLimitChanged() {
      asio::post(strand_, [self = shared_from_this()] { self->ArmIdleTimer(/*activity=*/false); });
    }

    // From any thread: closes the socket on the session's strand.
    void Close() {
      asio::post(strand_, [self = shared_from_this()] { self->Shutdown(); });
    }

    // From any thread: the blocked request was served with `reply` (and
    // taken out of the server's waiters).
    void Served(std::string reply) {
      asio::post(strand_, [self = shared_from_this(), reply = std::move(reply)] {
        if (self->closed_ || !self->blocked_) return;
        self->Resume(reply);
      });
    }

    // CLIENT ID's number (set at construction, never changed).
    uint64_t id() const { return client_.id; }

    // For CLIENT LIST from other connections: what this one last showed.
    std::string ListLine() const {
      MutexLock l(&info_mu_);
      return ClientListLine(shown_);
    }

   private:
    static ParserLimits Limits(const RespServerOptions& o) {
      ParserLimits limits;
      limits.max_bulk_len = o.max_bulk_len;
      return limits;
    }

    // Copies what CLIENT LIST shows of this connection where other threads
    // may read it.  (client_ itself is touched only on this strand.)
    void Publish() {
      MutexLock l(&info_mu_);
      shown_.last_command = client_.last_command;
      if (shown_.name != client_.name) shown_.name = client_.name;
    }

    // (Re)starts the idle countdown from the last activity: `activity` when
    // the client just was active, false when only the limit changed.
    void ArmIdleTimer(bool activity = true) {
      if (activity) last_active_ = asio::steady_timer::clock_type::now();
      if (closed_) return;
      const int64_t timeout = server_->dispatcher_.config().idle_timeout_seconds.load();
      if (timeout <= 0) {
        idle_.cancel();
        return;
      }
      idle_.expires_at(last_active_ + std::chrono::seconds(timeout));
      idle_.async_wait(asio::bind_executor(
          strand_, [self = shared_from_this()](const boost::system::error_code& ec) {
            // A re-arm cancels the previous wait, but a wait that had
            // already fired may still be queued: only a deadline that has
            // really passed, under a limit still set, closes the client.
            if (ec || self->closed_) return;
            if (self->idle_.expiry() > asio::steady_timer::clock_type::now()) return;
            if (self->server_->dispatcher_.config().idle_timeout_seconds.load() <= 0) return;
            // As Redis: a blocked client is subject to its own timeout only
            // (and one waiting for a routed decision to the request's).
            if (self->blocked_ || self->routing()) return self->ArmIdleTimer();
            self->Shutdown();
          }));
    }

    // Reads continuously, also while replies are being written, as Redis
    // does: a client that writes a whole pipeline before reading any reply
    // must not wait for a server that waits for it.  Unsent replies are
    // bounded by max_output_buffer instead.
    void Read() {
      if (closed_ || closing_ || reading_ || input_ended_) return;
      reading_ = true;
      socket_.async_read_some(
          asio::buffer(chunk_),
          asio::bind_executor(
              strand_, [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
                self->reading_ = false;
                if (self->closed_) return;
                if (ec == asio::error::eof) {
                  // The client is done sending: finish the replies, then
                  // close (after the requests that wait for a routed
                  // decision: ReplayAnswered goes on with them).
                  self->input_ended_ = true;
                  if (self->routing()) return;
                  self->closing_ = true;
                  return self->Flush();
                }
                if (ec) return self->Shutdown();
                self->in_.append(self->chunk_.data(), n);
                self->ArmIdleTimer();
                self->Process();
              }));
    }

    // Bytes of this client's replies not yet taken by the kernel.
    size_t PendingOutput() const { return out_.size() + writing_.size(); }

    // Requests wait for routed decisions (Defer).
    bool routing() const { return !pending_.empty(); }

    // Runs every complete request in the input, then sends the replies.
    // While routed requests wait (pending_), requests go on being run only
    // as long as they join their chain (route_deferral.h); the first that
    // cannot waits (held_) until all of them are answered.
    void Process() {
      // The route requests and decisions these requests make leave together
      // once they have all been run (one write per member, not one each:
      // ephpm/send_cork.h).
      SendCork cork;
      write_replies_.clear();
      parser_.set_max_bulk_len(server_->dispatcher_.config().max_bulk_len.load());
      if (held_ && pending_.empty()) {
        held_ = false;
        if (!held_error_.empty()) {
          out_.append("-").append(held_error_).append("\r\n");
          held_error_.clear();
          closing_ = true;
        } else {
          argv_ = std::move(held_argv_);
          held_argv_.clear();
          chain_.more = !in_.empty();
          if (!RunRequest()) return;
        }
      }
      size_t pos = 0;
      while (pos < in_.size() && !closing_ && !blocked_ && !held_) {
        // A routed request waits with no chain to join (or a full one):
        // the requests after it wait unparsed.
        if (!pending_.empty() && (!chain_.open() || pending_.size() >= kMaxChain)) break;
        size_t consumed = 0;
        std::string error;
        const auto r = parser_.Next(in_.data() + pos, in_.size() - pos, &consumed, &argv_, &error);
        pos += consumed;
        if (r == RequestParser::Result::kNeedMore) {
          // Taken into the parser's own buffers: still unparsed input for
          // max_query_buffer's purposes.
          partial_ += consumed;
          break;
        }
        partial_ = 0;
        if (r == RequestParser::Result::kEmpty) continue;
        if (r == RequestParser::Result::kError) {
          // As Redis: the error, then the connection is closed (once the
          // routed requests before it are answered: their replies first).
          if (!pending_.empty()) {
            held_ = true;
            held_error_ = std::move(error);
            break;
          }
          out_.append("-").append(error).append("\r\n");
          closing_ = true;
          break;
        }
        chain_.more = pos < in_.size();
        if (chain_.more && client_.authenticated) PrefetchAhead(pos);
        if (!RunRequest()) return;
      }
      in_.erase(0, pos);
      SendCork::Release();
      // The client ended its input while a routed request waited: what it
      // sent is served now, then the connection closes.
      if (input_ended_ && !routing()) closing_ = true;
      // Redis's client-query-buffer-limit: what is buffered of requests not
      // yet complete, in our buffer and in the parser's.
      const uint64_t limit = server_->dispatcher_.config().max_query_buffer.load();
      if (!closing_ && in_.size() + partial_ > limit) {
        return Shutdown();
      }
      ConfirmWrites();
      Flush();
      Read();
    }

    // A pipeline's requests behind the one about to run, at in_[pos..): the
    // store starts fetching the entries of the next one's key and the table
    // position of the one after (Store::Prefetch), so that their lookups,
    // when they run, do not wait for memory.  Only a hint: a request that is
    // not a plain multibulk of a few arguments is skipped (PeekKey), and a
    // client that has yet to AUTH makes the store do nothing.
    void PrefetchAhead(size_t pos) {
      std::string_view key;
      size_t len = 0;
      if (!PeekKey(in_.data() + pos, in_.size() - pos, &key, &len)) return;
      server_->store_->Prefetch(key, client_.db, Store::PrefetchStep::kNode);
      pos += len;
      if (PeekKey(in_.data() + pos, in_.size() - pos, &key, &len)) {
        server_->store_->Prefetch(key, client_.db, Store::PrefetchStep::kTable);
      }
    }

    // Runs the request in argv_: its reply goes to out_, or it waits for
    // a routed decision (pending_), or for those in flight (held_).  False
    // when the connection was shut.
    bool RunRequest() {
      try {
        const size_t reply_at = out_.size();
        bool wrote = false;
        int64_t now_ms = -1;
        const uint64_t ticket = next_ticket_++;
        switch (server_->dispatcher_.Execute(&client_, argv_, &out_, resume_, &chain_, ticket,
                                             &wrote, &now_ms)) {
          case Dispatcher::Ran::kDeferred:
            // Its reply comes from the replay (ReplayAnswered).
            out_.resize(reply_at);
            Defer(ticket, now_ms);
            return true;
          case Dispatcher::Ran::kHeld:
            out_.resize(reply_at);
            held_ = true;
            held_argv_ = std::move(argv_);
            argv_.clear();
            return true;
          case Dispatcher::Ran::kDone:
            break;
        }
        // A write's success reply waits on WaitDurable below; its error
        // replies say that nothing was changed, durable or not.
        if (wrote && out_.size() > reply_at && out_[reply_at] != '-') {
          write_replies_.emplace_back(reply_at, out_.size());
        }
      } catch (const std::exception&) {
        // E.g. bad_alloc for a reply too big to build: this client goes,
        // the server stays.
        Shutdown();
        return false;
      }
      if (client_.blocked != nullptr) Block();
      return AfterRequest(argv_);
    }

    // What follows every request run: false when the connection was shut.
    bool AfterRequest(const std::vector<std::string>& argv) {
      // A write may have given an element to the clients blocked on one
      // of its keys.
      server_->Touched(argv);
      Publish();
      parser_.set_authenticated(client_.authenticated);
      if (client_.close_after_reply) closing_ = true;
      // Redis's client-output-buffer-limit: closed without a reply.
      if (PendingOutput() > server_->options_.max_output_buffer) {
        Shutdown();
        return false;
      }
      return true;
    }

    // The request in argv_ waits for a routed decision.  What it wrote
    // here (a decision this node made, the owner) is made durable now, on
    // the thread that logged it (WaitDurable waits for this thread's
    // records); a failure answers for it once it is replayed.
    void Defer(uint64_t ticket, int64_t now_ms) {
      Pending& p = pending_.emplace_back();
      p.ticket = ticket;
      p.argv = std::move(argv_);
      argv_.clear();
      // The parser fills argv_ in place: an answered request's strings
      // spare it an allocation per argument.
      if (!spare_argv_.empty()) {
        argv_.swap(spare_argv_.back());
        spare_argv_.pop_back();
      }
      p.now_ms = now_ms;
      // Kept alive by the wait itself: with its input ended and nothing
      // being read or written, no handler would hold the session.
      routing_self_ = shared_from_this();
      std::string error;
      if (!server_->dispatcher_.WaitDurable(&error)) p.durable_error = std::move(error);
    }

    // The answers in the inbox: each is noted with its request, then the
    // requests answered at the front are replayed, once for the burst (so
    // that their replies leave in one write).
    void TakeAnswers() {
      {
        MutexLock l(&inbox_mu_);
        taken_.swap(inbox_);
        inbox_posted_ = false;
      }
      for (RouteAnswer& a : taken_) Note(std::move(a));
      taken_.clear();
      ReplayAnswered();
    }

    // A routed decision's answer, kept with its request.  pending_ is in
    // ticket order (tickets grow with each request run).
    void Note(RouteAnswer answer) {
      if (closed_) return;
      auto it = std::lower_bound(
          pending_.begin(), pending_.end(), answer.ticket,
          [](const Pending& p, uint64_t ticket) { return p.ticket < ticket; });
      if (it == pending_.end() || it->ticket != answer.ticket || it->answered) return;
      it->answered = true;
      it->answer = std::move(answer);
    }

    // The waiting requests run again with their answers
    // (Dispatcher::Replay) in their order, as far as the first still
    // unanswered; once none waits, the requests that came after them.
    void ReplayAnswered() {
      if (closed_ || pending_.empty() || !pending_.front().answered) return;
      const std::shared_ptr<Session> keep = routing_self_;
      while (!pending_.empty() && pending_.front().answered) {
        Pending p = std::move(pending_.front());
        pending_.pop_front();
        try {
          const size_t reply_at = out_.size();
          const bool wrote =
              server_->dispatcher_.Replay(&client_, p.argv, &out_, std::move(p.answer), p.now_ms);
          if (wrote && !p.durable_error.empty() && out_.size() > reply_at &&
              out_[reply_at] != '-') {
            out_.resize(reply_at);
            ReplyWriter(&out_).Error(p.durable_error);
          }
        } catch (const std::exception&) {
          return Shutdown();
        }
        if (!AfterRequest(p.argv)) return;
        SpareArgv(std::move(p.argv));
      }
      if (!pending_.empty()) {
        // The replies so far go out while the rest are decided.
        Flush();
        return;
      }
      routing_self_.reset();
      chain_ = RouteChain{};
      Process();
    }

    // Keeps an answered request's argv for a later Defer, unless enough
    // are kept; never a large buffer (as the parser, which drops those).
    void SpareArgv(std::vector<std::string> argv) {
      if (spare_argv_.size() >= kSpareArgvs) return;
      for (std::string& a : argv) {
        if (a.capacity() > kSpareArgCap) std::string().swap(a);
      }
      try {
        spare_argv_.push_back(std::move(argv));
      } catch (const std::bad_alloc&) {
        // Only a saving: the next Defer's request allocates its own.
      }
    }

    // Once per batch, before its replies go out: with fsync=always a write
    // is answered only once it is durable (one wait covers the batch, the
    // log's group commit covers the connections).  When that fails, each
    // write's success reply becomes the MISCONF error: its change is in
    // memory, but the client must not take it as saved.
    void ConfirmWrites() {
      if (write_replies_.empty()) return;
      std::string error;
      if (!server_->dispatcher_.WaitDurable(&error)) {
        std::string line;
        ReplyWriter(&line).Error(error);
        std::string rebuilt;
        size_t at = 0;
        for (const auto& [begin, end] : write_replies_) {
          rebuilt.append(out_, at, begin - at).append(line);
          at = end;
        }
        rebuilt.append(out_, at, std::string::npos);
        out_.swap(rebuilt);
      }
      write_replies_.clear();
    }

    // Starts writing the pending replies unless a write is under way; closes
    // once a closing connection has nothing left to send.
    void Flush() {
      if (closed_ || writing_active_) return;
      if (out_.empty()) {
        if (closing_) Shutdown();
        return;
      }
      writing_active_ = true;
      writing_.swap(out_);
      asio::async_write(
          socket_, asio::buffer(writing_),
          asio::bind_executor(
              strand_, [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                self->writing_active_ = false;
                self->writing_.clear();
                if (self->closed_) return;
                if (ec) return self->Shutdown();
                self->ArmIdleTimer();
                self->Flush();
              }));
    }

    // The request a blocking command left (ClientState::blocked): served at
    // once when it can be, else the connection stops processing requests
    // (it goes on reading them, and notices a disconnect) until the server
    // serves it (Served) or its timeout passes.
    void Block() {
      std::shared_ptr<BlockedPop> b = std::move(client_.blocked);
      client_.blocked.reset();
      std::string reply;
      if (server_->BlockOrServe(shared_from_this(), b, &reply)) {
        AppendServed(reply);
        return;
      }
      blocked_ = true;
      if (b->timeout_ms == 0) return;
      // Capped at about a century, so that now + timeout cannot overflow.
      constexpr int64_t kMaxBlockMs = int64_t{100} * 365 * 24 * 3600 * 1000;
      block_timer_.expires_after(std::chrono::milliseconds(std::min(b->timeout_ms, kMaxBlockMs)));
      block_timer_.async_wait(asio::bind_executor(
          strand_, [self = shared_from_this()](const boost::system::error_code& ec) {
            if (ec || self->closed_ || !self->blocked_) return;
            if (self->block_timer_.expiry() > asio::steady_timer::clock_type::now()) return;
            // Still waiting (else a Served is on its way): the null reply.
            if (self->server_->Unblock(self.get())) self->Resume(std::string(kBlockTimedOut));
          }));
    }

    // A served pop's reply, a write's success reply for ConfirmWrites.
    void AppendServed(const std::string& reply) {
      const size_t at = out_.size();
      out_.append(reply);
      if (!reply.empty() && reply[0] != '-') write_replies_.emplace_back(at, out_.size());
    }

    // The end of a block: the reply, then the requests that waited.
    void Resume(const std::string& reply) {
      blocked_ = false;
      block_timer_.cancel();
      out_.append(reply);
      Process();
    }

    void Shutdown() {
      if (closed_) return;
      closed_ = true;
      // A decision still on its way finds the session closed.
      routing_self_.reset();
      pending_.clear();
      held_ = false;
      boost::system::error_code ec;
      if (blocked_) {
        blocked_ = false;
        server_->Unblock(this);
        block_timer_.cancel();
      }
      idle_.cancel();
      socket_.shutdown(tcp::socket::shutdown_both, ec);
      socket_.close(ec);
    }

    Impl* const server_;
    Socket socket_;
    Strand strand_;  // the socket's own executor
    Timer idle_;
    asio::steady_timer::time_point last_active_;  // for the idle limit
    Timer block_timer_;  // a blocked request's timeout
    RequestParser parser_;
    std::array<char, kReadChunk> chunk_{};
    std::string in_;               // received, not yet parsed
    std::string out_;              // replies not yet handed to the socket
    std::string writing_;          // replies being written
    bool reading_ = false;         // a read is under way
    bool writing_active_ = false;  // a write is under way
    bool closing_ = false;         // no more requests: send what is pending, then close
    bool closed_ = false;          // the socket is closed
    bool blocked_ = false;         // waiting in the server's waiters (Block)
    bool input_ended_ = false;     // the client shut its sending side
    // A request waiting for its routed decision (Defer).
    struct Pending {
      uint64_t ticket = 0;            // RouteAnswer::ticket of its answer
      std::vector<std::string> argv;  // the request
      int64_t now_ms = -1;            // its first pass's time (Dispatcher::Replay)
      std::string durable_error;      // Defer's WaitDurable failed: the error line
      bool answered = false;          // `answer` has come
      RouteAnswer answer;
    };
    // Routed requests in flight on one connection, at most: the client's
    // pipeline beyond waits unread in in_.
    static constexpr size_t kMaxChain = 128;
    std::deque<Pending> pending_;  // in request order
    // Answered requests' argv vectors, for Defer to hand to the parser.
    static constexpr size_t kSpareArgvs = 16;
    static constexpr size_t kSpareArgCap = 16 * 1024;
    std::vector<std::vector<std::string>> spare_argv_;
    RouteChain chain_;             // pending_'s chain (zero when none is open)
    uint64_t next_ticket_ = 1;
    bool held_ = false;  // held_argv_ runs once pending_ is answered (Dispatcher::Ran::kHeld)
    std::vector<std::string> held_argv_;
    std::string held_error_;        // or, when held_, a protocol error to answer, then close
    RouteDeferral::Resume resume_;  // hands a routed answer to the inbox
    // Answers handed over by resume_ and not yet taken (TakeAnswers), and
    // whether a TakeAnswers is posted.  inbox_mu_ is a leaf.
    Mutex inbox_mu_;
    std::vector<RouteAnswer> inbox_ ABSL_GUARDED_BY(inbox_mu_);
    bool inbox_posted_ ABSL_GUARDED_BY(inbox_mu_) = false;
    std::vector<RouteAnswer> taken_;  // on the strand: inbox_'s swap partner, kept for its room
    std::shared_ptr<Session> routing_self_;  // while pending_ is not empty and not closed
    size_t partial_ = 0;  // bytes of the request in progress the parser holds
    std::vector<std::string> argv_;
    // [begin, end) in out_ of this batch's write success replies.
    std::vector<std::pair<size_t, size_t>> write_replies_;
    ClientState client_;
    mutable Mutex info_mu_;
    ClientState shown_ ABSL_GUARDED_BY(info_mu_);
  };

 private:
  // ---- blocked clients (blocking.h) ------------------------------------------

  struct Waiter {
    std::shared_ptr<Session> session;
    std::shared_ptr<BlockedPop> request;
  };
  struct ServedReply {
    std::shared_ptr<Session> session;
    std::string reply;
  };

  // Serves `b` now if it can, after the clients that were blocked before
  // it, else adds it to the waiters.  True with *reply when served.
  bool BlockOrServe(std::shared_ptr<Session> s, std::shared_ptr<BlockedPop> b,
                    std::string* reply) {
    std::vector<ServedReply> served;
    bool now = false;
    {
      MutexLock l(&block_mu_);
      ServeLocked(&served);
      {
        const Store::DatabaseScope database(*store_, b->db);
        now = TryServe(store_, *b, false, reply);
      }
      if (!now) {
        for (const std::string& k : b->keys) ++blocked_keys_[k];
        waiters_.push_back(Waiter{std::move(s), std::move(b)});
        waiting_.store(waiters_.size(), std::memory_order_relaxed);
        if (!polling_) {
          polling_ = true;
          asio::post(poll_strand_, [this] {
            poll_ms_ = kBlockPollMinMs;
            Poll();
          });
        }
      }
    }
    Deliver(&served);
    return now;
  }

  // Takes `s` out of the waiters; false when it was not there (served
  // meanwhile: its Served is on its way).
  bool Unblock(const Session* s) {
    MutexLock l(&block_mu_);
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      if (it->session.get() != s) continue;
      EraseWaiterLocked(it);
      return true;
    }
    return false;
  }

  // A script past the busy threshold holds its I/O thread until it ends
  // (or SCRIPT KILL ends it): a stand-in thread serves the I/O meanwhile, so
  // that the server still answers (-BUSY, SCRIPT KILL) however many scripts
  // run away.  A stand-in found busy with a script of its own when that
  // happens gets a stand-in in turn.
  void AddStandIn(std::shared_ptr<std::atomic<bool>> ended) {
    MutexLock l(&stand_in_mu_);
    if (stopped_.load()) return;
    for (auto it = stand_ins_.begin(); it != stand_ins_.end();) {
      if (!it->done->load()) {
        ++it;
        continue;
      }
      it->thread.join();
      it = stand_ins_.erase(it);
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    stand_ins_.push_back(StandIn{std::thread([this, ended, done] {
                                   while (!ended->load() && !stopped_.load()) {
                                     io_.run_one_for(std::chrono::milliseconds(50));
                                   }
                                   done->store(true);
                                 }),
                                 done});
  }

  // CLIENT UNBLOCK: ends the wait of the client `id` with `reply`; false
  // when it is not waiting (or was served meanwhile).
  bool UnblockClient(uint64_t id, bool error) override {
    std::shared_ptr<Session> s;
    {
      MutexLock l(&block_mu_);
      for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
        if (it->session->id() != id) continue;
        s = it->session;
        EraseWaiterLocked(it);
        break;
      }
    }
    if (s == nullptr) return false;
    s->Served(error ? std::string(kUnblockedError) : std::string(kBlockTimedOut));
    return true;
  }

  // After a request: tries the waiters again when one of its arguments is
  // a key some client is blocked on.
  void Touched(const std::vector<std::string>& argv) {
    if (waiting_.load(std::memory_order_relaxed) == 0) return;
    std::vector<ServedReply> served;
    {
      MutexLock l(&block_mu_);
      bool named = false;
      for (size_t i = 1; i < argv.size() && !named; ++i) named = blocked_keys_.contains(argv[i]);
      if (named) ServeLocked(&served);
    }
    Deliver(&served);
  }

  // Tries every waiter, in arrival order; the served ones leave the list.
  // Not while the store refuses writes (its log cannot be written): a pop
  // then would be answered MISCONF with its element gone; they wait on.
  void ServeLocked(std::vector<ServedReply>* served) ABSL_EXCLUSIVE_LOCKS_REQUIRED(block_mu_) {
    if (waiters_.empty() || store_->WritesAllowed() != Status::kOk) return;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      std::string reply;
      bool popped = false;
      {
        const Store::DatabaseScope database(*store_, it->request->db);
        popped = TryServe(store_, *it->request, true, &reply);
      }
      if (!popped) {
        ++it;
        continue;
      }
      served->push_back(ServedReply{it->session, std::move(reply)});
      it = EraseWaiterLocked(it);
    }
  }

  std::list<Waiter>::iterator EraseWaiterLocked(std::list<Waiter>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(block_mu_) {
    for (const std::string& k : it->request->keys) {
      auto c = blocked_keys_.find(k);
      if (--c->second == 0) blocked_keys_.erase(c);
    }
    it = waiters_.erase(it);
    waiting_.store(waiters_.size(), std::memory_order_relaxed);
    return it;
  }

  // Hands the served replies to their sessions, once the pops are durable
  // (fsync=always: this thread made them), as any write's reply.
  void Deliver(std::vector<ServedReply>* served) {
    if (served->empty()) return;
    std::string error;
    const bool durable = dispatcher_.WaitDurable(&error);
    for (auto& r : *served) {
      if (!durable && !r.reply.empty() && r.reply[0] != '-') {
        r.reply.clear();
        ReplyWriter(&r.reply).Error(error);
      }
      r.session->Served(std::move(r.reply));
    }
    served->clear();
  }

  // On poll_strand_, while clients are blocked: tries them again for the
  // writes Touched does not see.
  void Poll() {
    poll_.expires_after(std::chrono::milliseconds(poll_ms_));
    poll_.async_wait(asio::bind_executor(poll_strand_, [this](const boost::system::error_code& ec) {
      if (ec || stopped_.load()) return;
      std::vector<ServedReply> served;
      bool more = false;
      {
        MutexLock l(&block_mu_);
        ServeLocked(&served);
        more = !waiters_.empty();
        if (!more) polling_ = false;
      }
      poll_ms_ = served.empty() ? std::min(poll_ms_ * 2, kBlockPollMaxMs) : kBlockPollMinMs;
      Deliver(&served);
      if (more) Poll();
    }));
  }

  void Accept() {
    acceptor_.async_accept(
        asio::make_strand(io_),
        asio::bind_executor(accept_strand_,
                            [this](const boost::system::error_code& ec, Socket socket) {
                              OnAccept(ec, std::move(socket));
                            }));
  }

  // On accept_strand_.
  void OnAccept(const boost::system::error_code& ec, Socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // E.g. out of file descriptors: the pending connection stays queued,
      // so accepting again at once would fail again at once, in a busy loop.
      // Retry a little later.
      accept_retry_.expires_after(net::kAcceptRetryDelay);
      accept_retry_.async_wait([this](const boost::system::error_code& wait_ec) {
        if (!wait_ec && acceptor_.is_open()) Accept();
      });
      return;
    }
    total_connections_.fetch_add(1);
    if (connected_.load() >= dispatcher_.config().max_clients.load()) {
      rejected_.fetch_add(1);
      static const std::string kFull = "-ERR max number of clients reached\r\n";
      boost::system::error_code ignored;
      asio::write(socket, asio::buffer(kFull), ignored);
      socket.close(ignored);
    } else {
      connected_.fetch_add(1);
      std::make_shared<Session>(this, std::move(socket))->Start();
    }
    Accept();
  }

  const RespServerOptions options_;
  Store* const store_;
  Dispatcher dispatcher_;
  // Declared before io_, so that they outlive any handler (holding a
  // Session, whose destructor uses them) that io_ destroys.
  std::atomic<uint64_t> next_client_id_{0};
  std::atomic<uint64_t> connected_{0};
  std::atomic<uint64_t> total_connections_{0};
  std::atomic<uint64_t> rejected_{0};
  // Every session, for Stop() and CLIENT LIST.
  net::SessionRegistry<Session> sessions_;
  // Open until Stop() has joined the I/O threads: a routed answer is posted
  // to a session only while it is (see Session::Start).
  struct ResumeGate {
    Mutex mu;
    bool open ABSL_GUARDED_BY(mu) = true;
  };
  const std::shared_ptr<ResumeGate> resume_gate_ = std::make_shared<ResumeGate>();

  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::strand<asio::io_context::executor_type> accept_strand_;
  asio::steady_timer accept_retry_;  // on accept_strand_
  asio::strand<asio::io_context::executor_type> poll_strand_;
  asio::steady_timer poll_;  // on poll_strand_ (Poll)
  int64_t poll_ms_ = kBlockPollMinMs;  // on poll_strand_
  // The blocked clients, in arrival order, and how many of them name each
  // key.  Lock order: block_mu_, then the store's locks (TryServe).
  Mutex block_mu_;
  std::list<Waiter> waiters_ ABSL_GUARDED_BY(block_mu_);
  absl::flat_hash_map<std::string, int> blocked_keys_ ABSL_GUARDED_BY(block_mu_);
  bool polling_ ABSL_GUARDED_BY(block_mu_) = false;  // a Poll is armed
  std::atomic<size_t> waiting_{0};  // waiters_.size(), read without the lock
  tcp::endpoint bound_;
  size_t io_threads_ = 0;  // set by Start()
  std::vector<std::thread> threads_;
  struct StandIn {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  Mutex stand_in_mu_;
  std::list<StandIn> stand_ins_ ABSL_GUARDED_BY(stand_in_mu_);  // see AddStandIn
  std::atomic<bool> stopped_{false};
  const int64_t started_at_ms_;
  std::function<std::string()> extra_info_;
  std::map<std::string, ExtraCommand> extra_commands_;  // by lowercase name; set before Start
};

std::vector<std::string> RespServer::Impl::ClientList() const {
  std::vector<std::string> lines;
  for (const auto& s : sessions_.Live()) lines.push_back(s->ListLine());
  return lines;
}

RespServer::RespServer(Store* store, RespServerOptions options)
    : impl_(std::make_unique<Impl>(store, std::move(options))) {}
RespServer::~RespServer() = default;
bool RespServer::Start(std::string* error) { return impl_->Start(error); }
void RespServer::Stop() { impl_->Stop(); }
size_t DefaultIoThreads(unsigned cores) { return cores > 2 ? cores - 1 : 1; }

uint16_t RespServer::port() const { return impl_->port(); }
size_t RespServer::io_threads() const { return impl_->io_threads(); }
std::string RespServer::address() const { return impl_->address(); }
void RespServer::set_extra_info(std::function<std::string()> fn) {
  impl_->set_extra_info(std::move(fn));
}
void RespServer::add_extra_command(const std::string& name, ExtraCommand fn) {
  impl_->add_extra_command(name, std::move(fn));
}

}  // namespace resp
}  // namespace ephpm
