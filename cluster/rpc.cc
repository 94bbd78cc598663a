// Requests with timeouts: the pending table, ids and completion.

#include "rpc.h"

#include <chrono>
#include <vector>

namespace ephpm {
namespace cluster {

void Rpc::Request(const std::string& address, MsgType type, const std::string& body,
                  int64_t timeout_ms, Done done) {
  const uint64_t id = next_.fetch_add(1) + 1;
  auto timer =
      std::make_shared<boost::asio::steady_timer>(*io_, std::chrono::milliseconds(timeout_ms));
  {
    MutexLock l(&mu_);
    pending_[id] = Pending{std::move(done), timer, address};
    timer->async_wait([this, id](boost::system::error_code e) {
      if (e) return;
      Complete(id, false, {});
    });
  }
  transport_->Send(address, std::make_shared<const std::string>(Frame(type, id, body)), false);
}

void Rpc::FailTo(const std::string& address) {
  std::vector<uint64_t> ids;
  {
    MutexLock l(&mu_);
    for (const auto& [id, p] : pending_) {
      if (p.address == address) ids.push_back(id);
    }
  }
  for (uint64_t id : ids) Complete(id, false, {});
}

void Rpc::Complete(uint64_t id, bool ok, std::string_view body) {
  Pending p;
  {
    MutexLock l(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // already answered or timed out
    p = std::move(it->second);
    pending_.erase(it);
    p.timer->cancel();
  }
  p.done(ok, body);
}

void Rpc::CancelTimers() {
  MutexLock l(&mu_);
  for (auto& [id, p] : pending_) p.timer->cancel();
}

}  // namespace cluster
}  // namespace ephpm
