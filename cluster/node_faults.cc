// The testing build's side of the node (ephpm_cluster_testing only; the
// shipped library links node_no_faults.cc instead): a FaultTransport in
// front of the TCP one, and ClusterNode's test API over it.

#include "fault_transport.h"
#include "node_impl.h"

namespace ephpm {
namespace cluster {

std::unique_ptr<Transport> ClusterNode::Impl::MakeFaults() {
  return std::make_unique<FaultTransport>(
      &io_, o_.io_threads, tcp_.get(), [this](const std::string& address) { return IdAt(address); },
      [this](const std::string& peer) {
        // What was dropped meanwhile is lost, as with a link that broke.
        MutexLock l(&mu_);
        if (auto it = members_.find(peer); it != members_.end()) {
          resync_.insert(it->second.rec.address);
        }
      });
}

// Only the fault transport asks which member listens at an address.
std::string ClusterNode::Impl::IdAt(const std::string& address) const {
  MutexLock l(&mu_);
  for (const auto& [id, m] : members_) {
    if (m.rec.address == address) return id;
  }
  return "";
}

FaultTransport* ClusterNode::Impl::faults() { return static_cast<FaultTransport*>(fault_.get()); }

void ClusterNode::Impl::Unpause() { faults()->Pause(false); }

void ClusterNode::TestCutOff(const std::string& peer, bool cut) {
  impl_->faults()->CutOff(peer, cut);
}
void ClusterNode::TestDelay(const std::string& peer, int64_t ms) {
  impl_->faults()->Delay(peer, ms);
}
void ClusterNode::TestDelayReplication(const std::string& peer, int64_t ms) {
  impl_->faults()->DelayReplication(peer, ms);
}
void ClusterNode::TestFailSends(const std::string& peer, uint8_t type, int n) {
  impl_->faults()->FailSends(peer, static_cast<MsgType>(type), n);
}
void ClusterNode::TestPause(bool paused) { impl_->faults()->Pause(paused); }
void ClusterNode::TestSkewClock(int64_t ms) { impl_->TestSkewClock(ms); }
void ClusterNode::TestForceLocalRouting(bool local) { impl_->TestForceLocalRouting(local); }

}  // namespace cluster
}  // namespace ephpm
