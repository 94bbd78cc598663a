// Fault injection for the tests (the ephpm_cluster_testing library only):
// a Transport that wraps the real one and drops or delays frames per peer,
// as leveldb injects faults through an Env, and can freeze the node's I/O
// threads.  Never part of a shipped build.

#ifndef EPHPM_CLUSTER_FAULT_TRANSPORT_H_
#define EPHPM_CLUSTER_FAULT_TRANSPORT_H_

#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "mutex.h"
#include "transport.h"

namespace ephpm {
namespace cluster {

// Thread-safe.  Peers are named by member id; frames are addressed by
// address, which `id_at` translates (it takes the node's membership lock,
// never while this one is held).
class FaultTransport final : public Transport {
 public:
  // `base` carries the frames that pass; delayed ones wait on timers of
  // `io`, which `io_threads` threads run.  `id_at(address)` names the member
  // at an address ("" for none).  `healed(peer)` runs when a cut to `peer`
  // is lifted, under this transport's lock.
  FaultTransport(boost::asio::io_context* io, size_t io_threads, Transport* base,
                 std::function<std::string(const std::string& address)> id_at,
                 std::function<void(const std::string& peer)> healed);

  void Send(const std::string& address, FramePtr frame, bool replication) override;
  void Reply(const std::shared_ptr<Conn>& conn, const std::string& peer, FramePtr frame) override;
  bool Delivers(std::string_view sender) override;
  // Counts against FailSends of `type` as a Send of it would.
  void Queueing(const std::string& address, MsgType type) override;

  // Drops every frame to and from `peer` while `cut`.
  void CutOff(const std::string& peer, bool cut);
  // Delays every frame sent to `peer` by `ms` (0: none).
  void Delay(const std::string& peer, int64_t ms);
  // Delays the replication frames sent to `peer` by `ms` more.
  void DelayReplication(const std::string& peer, int64_t ms);
  // The next `n` frames of `type` sent to `peer` make Send throw
  // std::bad_alloc, as when the frame could not be queued for lack of
  // memory (nothing is sent); a request the node queues in a batch of its
  // own counts when it is queued (Queueing).
  void FailSends(const std::string& peer, MsgType type, int n);
  // Holds every I/O thread (one blocking handler each) until called with
  // false, and meanwhile has the base transport leave every frame to those
  // threads (HoldDirectWrites).  Returns once every thread is held, or at
  // once if already paused.
  void Pause(bool paused);

 private:
  boost::asio::io_context* const io_;
  const size_t io_threads_;
  Transport* const base_;
  const std::function<std::string(const std::string&)> id_at_;
  const std::function<void(const std::string&)> healed_;

  Mutex mu_;  // may be held while taking the node's membership lock (healed_)
  std::set<std::string> cut_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> delay_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> delay_replication_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<std::string, MsgType>, int> fail_ ABSL_GUARDED_BY(mu_);

  Mutex pause_mu_;  // a leaf
  std::condition_variable pause_cv_;
  bool paused_ ABSL_GUARDED_BY(pause_mu_) = false;
  size_t holding_ ABSL_GUARDED_BY(pause_mu_) = 0;  // I/O threads held by this pause
};

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_FAULT_TRANSPORT_H_
