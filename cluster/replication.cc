// Replication: publishing writes, whole-state syncs, and the standing that
// decides when this node may decide (ready after catching up).

#include <algorithm>

#include "node_impl.h"

namespace ephpm {
namespace cluster {

void ClusterNode::Impl::Publish(const Mutation& m) noexcept {
  // A fence this node's own store recorded (a fenced write's, above its
  // clock) counts as heard of, as one received from a member would.
  ObserveFence(m.fence);
  // A decision being made on this thread (Decide) goes to every member as a
  // decision to confirm, not as plain replication.
  if (tl_capture != nullptr && tl_capture->node == this) return SendDecision(*tl_capture, m);
  try {
    auto peers = std::atomic_load(&peers_);
    if (peers->empty()) return;
    Writer w;
    w.Str(o_.node_id);
    w.U32(1);
    w.Mut(m);
    auto frame = std::make_shared<const std::string>(Frame(MsgType::kReplicate, 0, w.out()));
    for (const std::string& addr : *peers) SendTo(addr, frame, /*replication=*/true);
    mutations_published_.fetch_add(1, std::memory_order_relaxed);
  } catch (const std::bad_alloc&) {
    // The change stands here (the store applied it); the peers get it
    // with this node's whole state at the next tick.
    frames_dropped_.fetch_add(1, std::memory_order_relaxed);
    resync_all_.store(true, std::memory_order_relaxed);
  }
}

// Streams this node's whole state to `address` in batches.  `round` is
// the asker's sync round (0 when this node sends on its own), `epoch` the
// catch-up this state settles (0 for none): the receiver echoes it in a
// kSyncDone once it applied the last batch.
void ClusterNode::Impl::SyncTo(const std::string& address, uint64_t round, uint64_t epoch,
                               bool held_alive) {
  if (store_ == nullptr) return;
  full_syncs_sent_.fetch_add(1, std::memory_order_relaxed);
  Writer batch;
  uint32_t count = 0;
  auto flush = [&](bool last) {
    Writer w;
    w.Str(o_.node_id);
    w.U8(last ? 1 : 0);
    w.U64(round);
    w.U64(epoch);
    w.U8(held_alive ? 1 : 0);
    w.U32(count);
    w.out().append(batch.out());
    SendTo(address, std::make_shared<const std::string>(Frame(MsgType::kSyncBatch, 0, w.out())),
           false);
    batch.out().clear();
    count = 0;
  };
  store_->ForEachForSync([&](const Mutation& m) {
    batch.Mut(m);
    if (++count >= 1024 || batch.out().size() >= (1u << 20)) flush(false);
  });
  flush(true);
}

// The last batch of a whole state from `sender` arrived (and every batch
// before it: they travel in order on one connection).
void ClusterNode::Impl::SyncReceived(const std::string& sender, uint64_t round, uint64_t epoch,
                                     bool held_alive) {
  std::string address;
  std::vector<std::string> ask;
  uint64_t ask_round = 0;
  {
    MutexLock l(&mu_);
    if (round != 0 && round == sync_round_ && held_alive && sync_awaiting_.erase(sender) != 0) {
      MaybeReadyLocked();
    }
    if (epoch != 0) {
      uint64_t& applied = applied_epoch_[sender];
      applied = std::max(applied, epoch);
      // The sender held this node dead: decisions it made meanwhile on its
      // own copy (answered "unknown", forgotten when they settle) may still
      // stand in it with fresher stamps than the state just applied.  It
      // decides again only after they settled and a new round came in.
      if (ready_.load(std::memory_order_relaxed)) {
        ask = StartSyncRoundLocked();
        ask_round = sync_round_;
        standing_lost_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (auto it = members_.find(sender); it != members_.end()) address = it->second.rec.address;
  }
  if (!ask.empty()) AskForSync(ask, ask_round);
  if (epoch != 0 && !address.empty()) {
    Writer w;
    w.Str(o_.node_id);
    w.U64(epoch);
    SendTo(address, std::make_shared<const std::string>(Frame(MsgType::kSyncDone, 0, w.out())),
           false);
  }
}

// ---- standing: when this node may decide -------------------------------------

// Ready once joined (when there is a cluster to join) and every member
// awaited has sent its whole state.
void ClusterNode::Impl::MaybeReadyLocked() {
  if (!ready_.load(std::memory_order_relaxed) && joined_ && sync_awaiting_.empty() &&
      in_flight_ == 0) {
    ready_.store(true, std::memory_order_release);
    ready_cv_.notify_all();
  }
}

// A new sync round: every member held alive is asked for its whole state,
// and this node decides nothing until all have sent it.  Returns the
// addresses to ask (the caller sends outside the lock).
std::vector<std::string> ClusterNode::Impl::StartSyncRoundLocked() {
  standing_gen_.fetch_add(1, std::memory_order_release);
  ready_.store(false, std::memory_order_release);
  ++sync_round_;
  sync_awaiting_.clear();
  std::vector<std::string> ask;
  const int64_t now = SteadyMs();
  for (const auto& [id, address] : AwaitedLocked()) {
    sync_awaiting_[id] = now;
    ask.push_back(address);
  }
  MaybeReadyLocked();
  return ask;
}

std::map<std::string, std::string> ClusterNode::Impl::AwaitedLocked() const {
  std::map<std::string, std::string> out;
  for (const auto& [id, m] : members_) {
    if (id != o_.node_id && m.rec.state != MemberState::kDead) out.emplace(id, m.rec.address);
  }
  // Strict mode: a member in etcd's list confirms this node's decisions
  // (View::confirm) the moment it holds this node alive again, which can
  // come before this node revives it.  Without its state, a copy with a
  // gap (an unconfirmed decision forgotten, after the member's state had
  // been passed over for the newer tentative write) would decide again and
  // be confirmed.  It costs nothing: while such a member cannot send its
  // state, it cannot confirm a decision either.
  for (const auto& [id, address] : etcd_members_) {
    if (id != o_.node_id) out.emplace(id, address);
  }
  return out;
}

void ClusterNode::Impl::AskForSync(const std::vector<std::string>& addresses, uint64_t round) {
  for (const std::string& addr : addresses) {
    Writer w;
    w.Str(o_.node_id);
    w.Str(address_);
    w.U64(round);
    SendTo(addr, std::make_shared<const std::string>(Frame(MsgType::kSyncRequest, 0, w.out())),
           false);
  }
}

// This node's copy may be behind the cluster's (a decision of its own was
// not confirmed, or it learned it had been held dead): it stops deciding
// until every member it holds alive has sent it its whole state again.
// `meanwhile` runs after the standing is gone and before the members are
// asked for their state.
void ClusterNode::Impl::LoseStanding(const std::function<void()>& meanwhile) {
  std::vector<std::string> ask;
  uint64_t round = 0;
  {
    MutexLock l(&mu_);
    ask = StartSyncRoundLocked();
    round = sync_round_;
  }
  standing_lost_.fetch_add(1, std::memory_order_relaxed);
  if (meanwhile) meanwhile();
  AskForSync(ask, round);
}

}  // namespace cluster
}  // namespace ephpm
