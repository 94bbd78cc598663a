// The tests' faults: cut links, delayed frames, a frozen network side.

#include "fault_transport.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <new>

namespace ephpm {
namespace cluster {

namespace asio = boost::asio;

FaultTransport::FaultTransport(asio::io_context* io, size_t io_threads, Transport* base,
                               std::function<std::string(const std::string&)> id_at,
                               std::function<void(const std::string&)> healed)
    : io_(io),
      io_threads_(std::max<size_t>(1, io_threads)),
      base_(base),
      id_at_(std::move(id_at)),
      healed_(std::move(healed)) {}

void FaultTransport::Send(const std::string& address, FramePtr frame, bool replication) {
  const std::string peer = id_at_(address);
  int64_t delay = 0;
  {
    MutexLock l(&mu_);
    if (cut_.count(peer)) return;
    if (!fail_.empty()) {
      auto f = fail_.find({peer, ParseHeader(frame->data()).type});
      if (f != fail_.end()) {
        if (--f->second == 0) fail_.erase(f);
        throw std::bad_alloc();
      }
    }
    if (auto d = delay_.find(peer); d != delay_.end()) delay = d->second;
    if (auto d = delay_replication_.find(peer); replication && d != delay_replication_.end()) {
      delay += d->second;
    }
  }
  if (delay > 0) {
    auto t = std::make_shared<asio::steady_timer>(*io_, std::chrono::milliseconds(delay));
    t->async_wait([this, t, address, frame, replication](boost::system::error_code e) {
      if (!e) base_->Send(address, frame, replication);
    });
    return;
  }
  base_->Send(address, std::move(frame), replication);
}

void FaultTransport::Queueing(const std::string& address, MsgType type) {
  const std::string peer = id_at_(address);
  MutexLock l(&mu_);
  auto f = fail_.find({peer, type});
  if (f == fail_.end()) return;
  if (--f->second == 0) fail_.erase(f);
  throw std::bad_alloc();
}

void FaultTransport::Reply(const std::shared_ptr<Conn>& conn, const std::string& peer,
                           FramePtr frame) {
  int64_t delay = 0;
  {
    MutexLock l(&mu_);
    if (cut_.count(peer)) return;
    if (auto d = delay_.find(peer); d != delay_.end()) delay = d->second;
  }
  if (delay > 0) {
    auto t = std::make_shared<asio::steady_timer>(*io_, std::chrono::milliseconds(delay));
    t->async_wait([this, t, conn, peer, frame](boost::system::error_code e) {
      if (!e) base_->Reply(conn, peer, frame);
    });
    return;
  }
  base_->Reply(conn, peer, std::move(frame));
}

bool FaultTransport::Delivers(std::string_view sender) {
  MutexLock l(&mu_);
  return cut_.count(std::string(sender)) == 0;  // else dropped by the partition
}

void FaultTransport::CutOff(const std::string& peer, bool cut) {
  MutexLock l(&mu_);
  if (cut) {
    cut_.insert(peer);
  } else if (cut_.erase(peer) != 0) {
    healed_(peer);
  }
}

void FaultTransport::Delay(const std::string& peer, int64_t ms) {
  MutexLock l(&mu_);
  delay_[peer] = ms;
}

void FaultTransport::DelayReplication(const std::string& peer, int64_t ms) {
  MutexLock l(&mu_);
  delay_replication_[peer] = ms;
}

void FaultTransport::FailSends(const std::string& peer, MsgType type, int n) {
  MutexLock l(&mu_);
  if (n > 0) {
    fail_[{peer, type}] = n;
  } else {
    fail_.erase({peer, type});
  }
}

void FaultTransport::Pause(bool paused) {
  MutexLock l(&pause_mu_);
  if (paused == paused_) return;
  paused_ = paused;
  if (!paused) {
    pause_cv_.notify_all();
    base_->HoldDirectWrites(false);
    return;
  }
  // A frozen process sends nothing: not even what a caller's thread would
  // write itself.  (A write already under way finishes: sent just before.)
  base_->HoldDirectWrites(true);
  // One blocking handler per I/O thread; wait until each holds its thread.
  holding_ = 0;
  for (size_t i = 0; i < io_threads_; ++i) {
    asio::post(*io_, [this] {
      MutexLock pl(&pause_mu_);
      ++holding_;
      pause_cv_.notify_all();
      while (paused_) pl.Wait(&pause_cv_);
    });
  }
  while (holding_ != io_threads_ && paused_) l.Wait(&pause_cv_);
}

}  // namespace cluster
}  // namespace ephpm
