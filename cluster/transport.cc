// The TCP transport: the listener, the connections and their send queues.

#include "transport.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <cerrno>
#include <deque>
#include <new>

#include "ephpm/host_port.h"
#include "ephpm/send_cork.h"
#include "net/listener.h"

namespace ephpm {
namespace cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Reads frames and hands them to the transport's frame event; writes queued
// frames in order.  Socket work runs on the connection's strand; the queue
// is shared with the senders under mu_.  A request sent by a thread other
// than the I/O threads (a PHP worker, a RESP thread) while nothing is queued
// or being written goes out at once on that thread (a non-blocking send
// under mu_): waking the I/O thread to write it cost a wake-up and a hop on
// every decision's critical path.  The I/O threads queue theirs: they are
// awake already, and one write then carries every frame queued meanwhile.
// A thread with a SendCork open (a RESP thread running a pipeline) queues
// its requests too, and writes them at once, all in one gathered write,
// when the cork releases (Uncork).
//
// The socket and the handlers run on the connection's strand, named by its
// type: a type-erased executor is copied onto the heap for every socket
// operation's work tracking (a strand does not fit its inline buffer), and
// a strand over the socket's own strand made two where one is needed (as
// the RESP session's, docs/BENCHMARKS.md "Issue 19, target 3: the cluster
// link on a typed strand").
using Strand = asio::strand<asio::io_context::executor_type>;
using Socket = tcp::socket::rebind_executor<Strand>::other;

class Conn final : public std::enable_shared_from_this<Conn>, public CorkedLink {
 public:
  Conn(TcpTransport* transport, Socket socket, std::string address)
      : transport_(transport),
        socket_(std::move(socket)),
        strand_(socket_.get_executor()),
        address_(std::move(address)) {}

  // Outbound: connects, then writes what was queued meanwhile.  Called on
  // the sender's thread, which may hold a store shard lock (Publish): an
  // address that cannot even be tried fails on the strand, as a refused
  // connect does, because the broken-link event may reach the store.
  void Connect() {
    std::string host;
    uint16_t port = 0;
    boost::system::error_code ec;
    const bool split = SplitHostPort(address_, &host, &port);
    const auto addr = split ? asio::ip::make_address(host, ec) : asio::ip::address();
    if (!split || ec) {
      asio::post(strand_, [self = shared_from_this()] { self->Fail(); });
      return;
    }
    socket_.async_connect(
        tcp::endpoint(addr, port),
        asio::bind_executor(strand_, [self = shared_from_this()](boost::system::error_code e) {
          if (e) return self->Fail();
          boost::system::error_code ignored;
          self->socket_.set_option(tcp::no_delay(true), ignored);
          self->connected_ = true;
          self->Opened();
          self->ReadHeader();
          self->MaybeWrite();
        }));
  }

  // Inbound: already connected.  All of it on the strand, as everything
  // that touches the socket: once the connection is in the inbound table,
  // CloseAll (on another I/O thread) may close it (Shut, on the strand)
  // while it is still being started.  Nothing to start when it has.
  void StartInbound() {
    asio::dispatch(strand_, [self = shared_from_this()] {
      if (self->closed()) return;
      self->connected_ = true;
      boost::system::error_code ignored;
      self->socket_.set_option(tcp::no_delay(true), ignored);
      self->Opened();
      self->ReadHeader();
    });
  }

  // Queues a frame, or writes it at once (see the class comment) when it is
  // not a replication frame and the connection is idle; what the socket does
  // not take at once is queued.  Returns false when the queue is over its
  // cap (the frame is dropped; the caller resyncs the peer later).
  bool Send(FramePtr frame, bool replication) {
    MutexLock l(&mu_);
    if (closed_) return false;
    if (replication && queued_bytes_ + frame->size() > transport_->max_queue_bytes_) {
      overflowed_ = true;
      return false;
    }
    // Queued first (the only step that may throw), so that no frame is ever
    // cut off after a part of it went out.
    const size_t size = frame->size();
    queued_bytes_ += size;
    queue_.push_back(std::move(frame));
    transport_->frames_sent_.fetch_add(1, std::memory_order_relaxed);
    const bool off_io = !transport_->io_->get_executor().running_in_this_thread();
    if (!replication && off_io && SendCork::Open()) {
      // Written when the cork releases (Uncork).  Should noting the link
      // fail, the frame goes as any other below.
      try {
        SendCork::Hold(shared_from_this());
        return true;
      } catch (const std::bad_alloc&) {
      }
    }
    if (!replication && fd_ >= 0 && !writing_ && queue_.size() == 1 && off_io &&
        !transport_->direct_held_.load()) {
      WriteQueueNowLocked();
      if (queue_.empty()) return true;
      // The socket's buffer is full, or the connection broke: the strand
      // writes the rest, or fails the write and reports the broken link.
    }
    // One wake-up of the I/O thread covers every frame queued before it
    // runs: a burst of mutations costs one post, not one each.
    if (!kick_pending_) {
      asio::post(strand_, [self = shared_from_this()] { self->Kick(); });
      kick_pending_ = true;
    }
    return true;
  }

  void Close() {
    asio::post(strand_, [self = shared_from_this()] { self->Shut(); });
  }

  // A cork released: what this thread queued goes out now, in one gathered
  // write when the connection is idle (the frames queued by others with
  // it), else with the write under way or by the strand.
  void Uncork() noexcept override {
    MutexLock l(&mu_);
    if (closed_ || queue_.empty()) return;
    if (fd_ >= 0 && !writing_ && front_sent_ == 0 && !kick_pending_ &&
        !transport_->io_->get_executor().running_in_this_thread() &&
        !transport_->direct_held_.load()) {
      WriteQueueNowLocked();
      if (queue_.empty()) return;
    }
    if (writing_ || kick_pending_) return;  // the write under way, or the Kick, takes them
    try {
      asio::post(strand_, [self = shared_from_this()] { self->Kick(); });
      kick_pending_ = true;
    } catch (const std::bad_alloc&) {
      // No way left to hand the frames to the strand: break the
      // connection, which the strand then reports (link_broken: what it
      // carried is lost, its requests fail) as any broken link.
      if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
    }
  }

  bool closed() const {
    MutexLock l(&mu_);
    return closed_;
  }

 private:
  // The socket is connected: senders may write to it directly.
  void Opened() {
    MutexLock l(&mu_);
    if (!closed_) fd_ = socket_.native_handle();
  }

  // Writes as much of the queue as the socket takes without blocking, in
  // gathered writes, and drops what went out; a frame cut short stays at
  // the front with front_sent_ set.  REQUIRES: fd_ >= 0, no write in
  // flight, front_sent_ == 0.
  void WriteQueueNowLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    constexpr size_t kMaxIov = 64;
    iovec iov[kMaxIov];
    while (!queue_.empty()) {
      size_t count = 0;
      for (auto it = queue_.begin(); it != queue_.end() && count < kMaxIov; ++it, ++count) {
        const std::string& f = **it;
        const size_t skip = count == 0 ? front_sent_ : 0;
        iov[count].iov_base = const_cast<char*>(f.data() + skip);
        iov[count].iov_len = f.size() - skip;
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = count;
      const ssize_t n = ::sendmsg(fd_, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      transport_->link_writes_.fetch_add(1, std::memory_order_relaxed);
      size_t left = static_cast<size_t>(n);
      while (left > 0) {
        const size_t rest = queue_.front()->size() - front_sent_;
        if (left < rest) {
          front_sent_ += left;
          return;  // the socket took no more
        }
        left -= rest;
        queued_bytes_ -= queue_.front()->size();
        queue_.pop_front();
        front_sent_ = 0;
      }
    }
  }

  void Kick() {
    {
      MutexLock l(&mu_);
      kick_pending_ = false;
    }
    MaybeWrite();
  }

  // Writes what is queued unless a write is in flight (its completion
  // calls this again) or the connection is not up yet (Connect does).
  void MaybeWrite() {
    if (!connected_) return;
    std::vector<FramePtr> batch;
    size_t skip = 0;  // of the first frame, the bytes a sender wrote already
    {
      MutexLock l(&mu_);
      if (writing_) return;
      skip = front_sent_;
      front_sent_ = 0;
      batch.reserve(std::min<size_t>(queue_.size(), 256));
      while (!queue_.empty() && batch.size() < 256) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (batch.empty()) return;
      writing_ = true;
    }
    transport_->link_writes_.fetch_add(1, std::memory_order_relaxed);
    std::vector<asio::const_buffer> bufs;
    bufs.reserve(batch.size());
    for (const auto& f : batch) bufs.emplace_back(asio::buffer(*f));
    bufs.front() += skip;
    // The frames go with the handler (moved: the strings bufs points into
    // stay where they are), alive until the write is done.
    asio::async_write(socket_, bufs,
                      asio::bind_executor(strand_, [self = shared_from_this(),
                                                    batch = std::move(batch)](
                                                       boost::system::error_code e, size_t) {
                        {
                          MutexLock l(&self->mu_);
                          self->writing_ = false;
                          for (const auto& f : batch) self->queued_bytes_ -= f->size();
                        }
                        if (e) return self->Fail();
                        self->MaybeWrite();
                      }));
  }

  // Reads whatever the peer has sent (one read, up to 64 KiB, or what the
  // frame being read still needs) and handles every whole frame in it: a
  // burst of replicated mutations costs one read, not two per frame.
  void ReadHeader() {
    if (in_begin_ == in_end_) {
      // Give back the room a large frame (a big value) took.
      if (in_.size() > 4 * kReadChunk) std::string().swap(in_);
      in_begin_ = in_end_ = 0;
    } else if (in_begin_ >= kReadChunk) {
      in_.erase(0, in_begin_);
      in_end_ -= in_begin_;
      in_begin_ = 0;
    }
    const size_t have = in_end_ - in_begin_;
    const size_t want = need_ > have + kReadChunk ? need_ - have : kReadChunk;
    // in_ only grows here (resize fills the new room with zeros: 64 KiB
    // on every read when it was cleared each time).
    if (in_.size() < in_end_ + want) in_.resize(in_end_ + want);
    socket_.async_read_some(
        asio::buffer(&in_[in_end_], want),
        asio::bind_executor(strand_,
                            [self = shared_from_this()](boost::system::error_code e, size_t n) {
                              if (e) return self->Fail();
                              self->in_end_ += n;
                              bool ok = false;
                              {
                                // The decisions the frames of this read
                                // make leave as one batch per member
                                // (ephpm/send_cork.h).
                                SendCork cork;
                                ok = self->TakeFrames();
                              }
                              if (!ok) return self->Fail();
                              self->ReadHeader();
                            }));
  }

  // Handles the whole frames at the front of in_; false on garbage or a
  // frame the frame event refuses.  need_ becomes the size of the next
  // frame (or of its header) as far as it is known.
  bool TakeFrames() {
    for (;;) {
      const size_t have = in_end_ - in_begin_;
      need_ = kFrameHeader;
      if (have < kFrameHeader) return true;
      const char* p = in_.data() + in_begin_;
      const Header h = ParseHeader(p);
      uint32_t raw_len = 0;
      for (int i = 0; i < 4; ++i) {
        raw_len |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
      }
      if (h.version != kWireVersion || raw_len < kFrameHeader - 4 || raw_len > kMaxFrame) {
        return false;  // another protocol, or garbage
      }
      need_ = kFrameHeader + h.body_length;
      if (have < need_) return true;
      const std::string_view body(p + kFrameHeader, h.body_length);
      in_begin_ += need_;
      if (!transport_->events_.frame(shared_from_this(), h, body)) return false;
    }
  }

  void Fail() {
    const bool outbound = !address_.empty();
    Shut();
    // Frames to that member may be lost: resync it once it answers again.
    // Requests sent on this connection will not be answered.
    if (outbound) transport_->events_.link_broken(address_);
  }

  void Shut() {
    {
      MutexLock l(&mu_);
      if (closed_) return;
      closed_ = true;
      fd_ = -1;  // before the close: no sender writes to a reused descriptor
      queue_.clear();
      queued_bytes_ = 0;
      front_sent_ = 0;
    }
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  TcpTransport* const transport_;
  Socket socket_;
  Strand strand_;  // the socket's own executor
  const std::string address_;  // the peer's; empty for an inbound connection
  bool connected_ = false;     // on the strand
  static constexpr size_t kReadChunk = 64 * 1024;
  std::string in_;              // received bytes; [in_begin_, in_end_) unread (strand)
  size_t in_begin_ = 0;         // on the strand
  size_t in_end_ = 0;           // on the strand
  size_t need_ = kFrameHeader;  // bytes the next frame needs (strand)
  mutable Mutex mu_;            // a leaf: nothing else is taken while holding it
  std::deque<FramePtr> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool overflowed_ ABSL_GUARDED_BY(mu_) = false;
  bool kick_pending_ ABSL_GUARDED_BY(mu_) = false;  // a Kick is posted and has not run yet
  bool writing_ ABSL_GUARDED_BY(mu_) = false;       // an async_write is in flight
  // The connected socket's descriptor for senders' direct writes; -1 before
  // it connects and once it is shut.
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  // Of queue_.front(), the bytes a sender's direct write already sent.
  size_t front_sent_ ABSL_GUARDED_BY(mu_) = 0;
};

TcpTransport::TcpTransport(asio::io_context* io, size_t max_queue_bytes, TransportEvents events)
    : io_(io), max_queue_bytes_(max_queue_bytes), events_(std::move(events)),
      acceptor_(*io),
      accept_retry_(*io) {}

TcpTransport::~TcpTransport() = default;

bool TcpTransport::Listen(const std::string& listen, std::string* address, std::string* error) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(listen, &host, &port)) {
    *error = "--cluster-listen needs host:port, got '" + listen + "'";
    return false;
  }
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  if (ec) {
    *error = "invalid cluster address '" + host + "'";
    return false;
  }
  std::string why;
  MutexLock l(&accept_mu_);
  if (!net::Listen(&acceptor_, host, port, &why)) {
    // The reason as net::Listen gives it, after the address as configured.
    const std::string prefix = "cannot listen on " + host + ":" + std::to_string(port) + ": ";
    *error = "cannot listen on " + listen + ": " +
             (why.compare(0, prefix.size(), prefix) == 0 ? why.substr(prefix.size()) : why);
    return false;
  }
  *address = net::EndpointText(acceptor_.local_endpoint());
  return true;
}

void TcpTransport::Start() { Accept(); }

void TcpTransport::CloseAll() {
  {
    MutexLock l(&accept_mu_);
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_retry_.cancel();
  }
  std::vector<std::shared_ptr<Conn>> all;
  {
    MutexLock l(&mu_);
    for (auto& [a, c] : links_) all.push_back(c);
    for (auto& w : inbound_) {
      if (auto c = w.lock()) all.push_back(c);
    }
    links_.clear();
    inbound_.clear();
  }
  for (auto& c : all) c->Close();
}

void TcpTransport::Accept() {
  MutexLock l(&accept_mu_);
  // A stopped transport accepts no more; CloseAll may have closed the
  // acceptor meanwhile (on another I/O thread).
  if (stopped_.load() || !acceptor_.is_open()) return;
  acceptor_.async_accept(asio::make_strand(*io_), [this](boost::system::error_code ec, Socket s) {
    if (ec == asio::error::operation_aborted || stopped_.load()) return;
    if (ec) {
      // E.g. out of file descriptors: the connection stays queued; retry a
      // little later (net::kAcceptRetryDelay), not at once.
      MutexLock l(&accept_mu_);
      if (!acceptor_.is_open()) return;
      accept_retry_.expires_after(net::kAcceptRetryDelay);
      accept_retry_.async_wait([this](boost::system::error_code e) {
        if (!e) Accept();
      });
      return;
    }
    auto c = std::make_shared<Conn>(this, std::move(s), "");
    {
      MutexLock l(&mu_);
      inbound_.push_back(c);
      // Forget inbound connections that closed.
      inbound_.erase(std::remove_if(inbound_.begin(), inbound_.end(),
                                    [](const std::weak_ptr<Conn>& w) {
                                      auto p = w.lock();
                                      return !p || p->closed();
                                    }),
                     inbound_.end());
    }
    c->StartInbound();
    Accept();
  });
}

std::shared_ptr<Conn> TcpTransport::LinkTo(const std::string& address) {
  std::shared_ptr<Conn> fresh;
  {
    MutexLock l(&mu_);
    auto& c = links_[address];
    if (c && !c->closed()) return c;
    c = fresh = std::make_shared<Conn>(this, Socket(asio::make_strand(*io_)), address);
  }
  // Outside the lock: a connect that fails at once reports the broken link,
  // whose handlers may complete requests and reach the store.
  fresh->Connect();
  return fresh;
}

void TcpTransport::Send(const std::string& address, FramePtr frame, bool replication) {
  if (stopped_.load(std::memory_order_relaxed)) return;
  if (!LinkTo(address)->Send(std::move(frame), replication)) events_.dropped(address);
}

void TcpTransport::Reply(const std::shared_ptr<Conn>& conn, const std::string&, FramePtr frame) {
  conn->Send(std::move(frame), false);
}

}  // namespace cluster
}  // namespace ephpm
