// SWIM membership: gossip, the precedence of member records, the protocol
// period (probe, ping-req, suspect, dead) and joining.

#include "membership.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "node_impl.h"

namespace ephpm {
namespace cluster {

bool IsNews(const MemberRecord& known, const MemberRecord& heard) {
  switch (heard.state) {
    case MemberState::kAlive:
      return heard.incarnation > known.incarnation;
    case MemberState::kSuspect:
      return (known.state == MemberState::kAlive && heard.incarnation >= known.incarnation) ||
             heard.incarnation > known.incarnation;
    case MemberState::kDead:
      return (known.state != MemberState::kDead && heard.incarnation >= known.incarnation) ||
             heard.incarnation > known.incarnation;
  }
  return false;
}

int GossipSends(size_t members) {
  return 3 * static_cast<int>(std::ceil(std::log2(static_cast<double>(members) + 1)));
}

// ---- membership ----------------------------------------------------------------

// The sender's id, then `extra` (already encoded), then up to 16 pending
// membership changes (our own record always among them, so peers learn
// our address).
std::string ClusterNode::Impl::GossipBody(std::string_view extra) {
  Writer w;
  w.Str(o_.node_id);
  w.out().append(extra.data(), extra.size());
  MutexLock l(&mu_);
  std::vector<MemberRecord> out{members_.at(o_.node_id).rec};
  std::sort(gossip_.begin(), gossip_.end(),
            [](const Gossip& a, const Gossip& b) { return a.sends_left > b.sends_left; });
  for (auto& g : gossip_) {
    if (out.size() >= 16) break;
    out.push_back(g.rec);
    --g.sends_left;
  }
  gossip_.erase(std::remove_if(gossip_.begin(), gossip_.end(),
                               [](const Gossip& g) { return g.sends_left <= 0; }),
                gossip_.end());
  w.U32(static_cast<uint32_t>(out.size()));
  for (const auto& m : out) w.Member(m);
  return std::move(w.out());
}

bool ClusterNode::Impl::ReadGossip(Reader* r) {
  uint32_t n = 0;
  if (!r->U32(&n) || n > 1024) return false;
  for (uint32_t i = 0; i < n; ++i) {
    MemberRecord m;
    if (!r->Member(&m)) return false;
    ApplyUpdate(m);
  }
  return true;
}

// A whole member list (a join or a periodic exchange).  Another node's
// list may be old news: someone it holds dead may have come back without
// it hearing, so "dead" about a third member only makes it suspect here,
// and this node's own probes (or the member's refutation) settle it.
bool ClusterNode::Impl::ReadMemberList(Reader* r) {
  uint32_t n = 0;
  if (!r->U32(&n) || n > (1u << 16)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    MemberRecord m;
    if (!r->Member(&m)) return false;
    if (m.state == MemberState::kDead && m.id != o_.node_id) m.state = MemberState::kSuspect;
    ApplyUpdate(m);
  }
  return true;
}

std::string ClusterNode::Impl::MembersBody() {
  Writer w;
  w.Str(o_.node_id);
  MutexLock l(&mu_);
  w.U32(static_cast<uint32_t>(members_.size()));
  for (const auto& [id, m] : members_) w.Member(m.rec);
  return std::move(w.out());
}

void ClusterNode::Impl::ReadMembers(std::string_view body) {
  Reader r(body);
  std::string_view sender;
  if (!r.Str(&sender)) return;
  ReadMemberList(&r);
}

void ClusterNode::Impl::Run(const Effects& fx) {
  for (const auto& [addr, epoch] : fx.push) SyncTo(addr, 0, epoch);
  if (!fx.ask.empty()) AskForSync(fx.ask, fx.round);
  if (fx.lost_standing) standing_lost_.fetch_add(1, std::memory_order_relaxed);
}

// SWIM's precedence: a record replaces what this node knows when it is
// news (a higher incarnation, or a worse state at the same incarnation).
void ClusterNode::Impl::ApplyUpdate(const MemberRecord& rec) {
  Effects fx;
  {
    MutexLock l(&mu_);
    ApplyUpdateLocked(rec, &fx);
  }
  Run(fx);
}

void ClusterNode::Impl::ApplyUpdateLocked(const MemberRecord& rec, Effects* fx) {
  if (rec.id.empty()) return;
  Member& self = members_.at(o_.node_id);
  if (rec.id == o_.node_id) {
    const bool declared_dead =
        rec.state == MemberState::kDead && rec.incarnation >= self.rec.incarnation;
    // A record of an earlier run of this node id: this process restarted,
    // and its (empty) copy knows nothing of what the cluster decided.
    const bool earlier_life = rec.incarnation < start_incarnation_ && !restart_seen_;
    // Suspected or declared dead: refute with a higher incarnation.
    if ((rec.state != MemberState::kAlive && rec.incarnation >= self.rec.incarnation) ||
        rec.incarnation > self.rec.incarnation) {
      self.rec.incarnation = rec.incarnation + 1;
      GossipLocked(self.rec);
    }
    if (earlier_life) restart_seen_ = true;
    if (declared_dead || earlier_life) {
      // Held dead: others may have decided this node's keys meanwhile.
      fx->ask = StartSyncRoundLocked();
      fx->round = sync_round_;
      fx->lost_standing = true;
    }
    return;
  }
  auto it = members_.find(rec.id);
  if (it == members_.end()) {
    members_[rec.id] = Member{rec, rec.state == MemberState::kSuspect ? SteadyMs() : 0};
    GossipLocked(rec);
    RefreshPeersLocked();
    if (rec.state != MemberState::kDead) {
      // A member new to this node gets this node's whole state: a write
      // published just before (to the members known then) would otherwise
      // reach it through nobody.
      fx->push.emplace_back(rec.address, 0);
      joined_ = true;
      if (!ready_.load(std::memory_order_relaxed)) {
        // Joining or catching up: its state is needed too.
        sync_awaiting_[rec.id] = SteadyMs();
        fx->ask.push_back(rec.address);
        fx->round = sync_round_;
      }
      MaybeReadyLocked();
    }
    return;
  }
  Member& cur = it->second;
  const MemberState was = cur.rec.state;
  if (!IsNews(cur.rec, rec)) return;
  cur.rec = rec;
  if (rec.state == MemberState::kSuspect && was != MemberState::kSuspect) {
    cur.suspect_since_ms = SteadyMs();
  }
  GossipLocked(rec);
  if (rec.state == MemberState::kDead && was != MemberState::kDead) {
    // Nothing more will come from it: stop waiting for its state (in
    // strict mode, once it has left etcd's list too: OnEtcdMembers).
    catchup_.erase(rec.id);
    if (AwaitedLocked().count(rec.id) == 0) sync_awaiting_.erase(rec.id);
    MaybeReadyLocked();
  }
  if (was == MemberState::kDead && rec.state != MemberState::kDead) {
    // Back from the dead (restarted, paused, or a partition healed): it
    // missed what was decided meanwhile.  It gets this node's whole state,
    // and its decisions are refused here until it has applied it.
    const uint64_t epoch = ++catchup_epoch_;
    catchup_[rec.id] = epoch;
    sent_epoch_[rec.id] = SentEpoch{epoch, rec.incarnation};
    fx->push.emplace_back(rec.address, epoch);
    if (!ready_.load(std::memory_order_relaxed) &&
        sync_awaiting_.emplace(rec.id, SteadyMs()).second) {
      fx->ask.push_back(rec.address);
      fx->round = sync_round_;
    }
  }
  RefreshPeersLocked();  // the state or the address may have changed
}

void ClusterNode::Impl::GossipLocked(const MemberRecord& rec) {
  const int sends = GossipSends(members_.size());
  for (auto& g : gossip_) {
    if (g.rec.id == rec.id) {
      g = Gossip{rec, sends};
      return;
    }
  }
  gossip_.push_back(Gossip{rec, sends});
}

// Rebuilds the list of addresses that replication goes to, and the
// sorted alive members that ownership is computed over.
void ClusterNode::Impl::RefreshPeersLocked() {
  auto peers = std::make_shared<std::vector<std::string>>();
  auto view = std::make_shared<View>();
  view->generation = ++view_generation_;
  for (const auto& [id, m] : members_) {  // std::map: sorted by id
    if (m.rec.state == MemberState::kDead) continue;
    if (id != o_.node_id) peers->push_back(m.rec.address);
    view->alive.push_back(AliveMember{id, m.rec.address, id == o_.node_id});
  }
  view->known = members_.size();
  if (o_.arbiter == ClusterOptions::Arbiter::kEtcd) {
    // Strict mode: ownership over etcd's member list, whatever SWIM thinks
    // (SWIM still picks where replication goes).
    view->alive.clear();
    XXH3_state_t* h = XXH3_createState();
    XXH3_64bits_reset(h);
    for (const auto& [id, address] : etcd_members_) {  // sorted by id
      view->alive.push_back(AliveMember{id, address, id == o_.node_id});
      view->has_self = view->has_self || id == o_.node_id;
      const uint32_t lens[2] = {static_cast<uint32_t>(id.size()),
                                static_cast<uint32_t>(address.size())};
      XXH3_64bits_update(h, lens, sizeof(lens));
      XXH3_64bits_update(h, id.data(), id.size());
      XXH3_64bits_update(h, address.data(), address.size());
    }
    view->fingerprint = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    view->known = view->alive.size();
    view->revision = etcd_members_revision_;
    std::map<std::string, std::string> confirm(etcd_members_.begin(), etcd_members_.end());
    for (const auto& [id, m] : members_) {
      if (m.rec.state != MemberState::kDead) confirm.emplace(id, m.rec.address);
    }
    for (const auto& [id, address] : confirm) {
      view->confirm.push_back(AliveMember{id, address, id == o_.node_id});
    }
  }
  std::atomic_store(&peers_, std::shared_ptr<const std::vector<std::string>>(std::move(peers)));
  std::atomic_store(&view_, std::shared_ptr<const View>(std::move(view)));
  ready_cv_.notify_all();  // a majority may be back
}

void ClusterNode::Impl::OnEtcdMembers(const EtcdMembers& members, int64_t revision) {
  std::vector<std::string> ask;
  uint64_t round = 0;
  {
    MutexLock l(&mu_);
    if (revision < etcd_members_revision_) return;  // an older list, arriving late
    etcd_members_ = members;
    etcd_members_revision_ = revision;
    RefreshPeersLocked();
    if (!ready_.load(std::memory_order_relaxed)) {
      // Catching up: the round now needs the state of every member that
      // confirms this node's decisions, and no longer that of one that
      // left etcd's list and SWIM holds dead.
      const std::map<std::string, std::string> awaited = AwaitedLocked();
      for (auto it = sync_awaiting_.begin(); it != sync_awaiting_.end();) {
        it = awaited.count(it->first) == 0 ? sync_awaiting_.erase(it) : std::next(it);
      }
      const int64_t now = SteadyMs();
      for (const auto& [id, address] : awaited) {
        if (sync_awaiting_.emplace(id, now).second) ask.push_back(address);
      }
      round = sync_round_;
      MaybeReadyLocked();
    }
  }
  if (!ask.empty()) AskForSync(ask, round);
}

void ClusterNode::Impl::MarkLocked(const std::string& id, MemberState state) {
  auto it = members_.find(id);
  if (it == members_.end() || it->second.rec.state == state) return;
  MemberRecord rec = it->second.rec;
  rec.state = state;
  Effects ignored;  // only ever marks suspect or dead: nothing to send
  ApplyUpdateLocked(rec, &ignored);
}

// ---- the protocol period ------------------------------------------------------

void ClusterNode::Impl::ScheduleTick(int64_t delay_ms) {
  tick_.expires_after(std::chrono::milliseconds(delay_ms));
  tick_.async_wait([this](boost::system::error_code e) {
    if (e || stopped_) return;
    Tick();
    ScheduleTick(o_.probe_interval_ms);
  });
}

void ClusterNode::Impl::Tick() {
  ++ticks_;
  std::vector<std::string> resync, reask;
  uint64_t reask_round = 0;
  std::string target_id, target_addr, exchange_addr, dead_addr;
  std::vector<std::string> helpers;
  bool joined = false;
  {
    MutexLock l(&mu_);
    // The previous probe got no ack, direct or indirect: suspect.
    if (!probe_target_.empty() && !probe_acked_) MarkLocked(probe_target_, MemberState::kSuspect);
    probe_target_.clear();
    // Suspects past the timeout are dead.
    const int64_t now = SteadyMs();
    std::vector<std::string> dead;
    for (auto& [id, m] : members_) {
      if (m.rec.state == MemberState::kSuspect &&
          now - m.suspect_since_ms >= o_.suspicion_timeout_ms) {
        dead.push_back(id);
      }
    }
    for (const auto& id : dead) MarkLocked(id, MemberState::kDead);
    // The next probe target: a shuffled round over the members not dead.
    std::vector<std::string> live;
    for (const auto& [id, m] : members_) {
      if (id != o_.node_id && m.rec.state != MemberState::kDead) live.push_back(id);
    }
    joined = !live.empty();
    if (probe_pos_ >= probe_order_.size()) {
      probe_order_ = live;
      std::shuffle(probe_order_.begin(), probe_order_.end(), rng_);
      probe_pos_ = 0;
    }
    while (probe_pos_ < probe_order_.size() && target_id.empty()) {
      const std::string& id = probe_order_[probe_pos_++];
      auto it = members_.find(id);
      if (it != members_.end() && it->second.rec.state != MemberState::kDead) {
        target_id = id;
        target_addr = it->second.rec.address;
      }
    }
    if (!target_id.empty()) {
      probe_target_ = target_id;
      probe_acked_ = false;
      for (const auto& id : live) {
        if (id != target_id) helpers.push_back(members_.at(id).rec.address);
      }
      std::shuffle(helpers.begin(), helpers.end(), rng_);
      if (helpers.size() > static_cast<size_t>(o_.indirect_probes)) {
        helpers.resize(static_cast<size_t>(o_.indirect_probes));
      }
    }
    // Now and then, exchange whole member lists with someone alive, and
    // with someone held dead: a member that restarted or was cut off by a
    // partition is found again this way (nobody probes the dead).
    if (ticks_ % static_cast<uint64_t>(std::max<int64_t>(1, o_.members_sync_every)) == 0) {
      if (!live.empty()) exchange_addr = members_.at(live[rng_() % live.size()]).rec.address;
      std::vector<std::string> dead_addrs;
      for (const auto& [id, m] : members_) {
        if (m.rec.state == MemberState::kDead) dead_addrs.push_back(m.rec.address);
      }
      if (!dead_addrs.empty()) dead_addr = dead_addrs[rng_() % dead_addrs.size()];
    }
    // A member asked for its state in this round that has not sent it
    // (the request or the answer was lost, or it held this node dead
    // when it answered) is asked again.
    if (!ready_.load(std::memory_order_relaxed)) {
      const std::map<std::string, std::string> awaited = AwaitedLocked();
      for (auto& [id, asked] : sync_awaiting_) {
        auto a = awaited.find(id);
        if (a == awaited.end() || now - asked < o_.request_timeout_ms) continue;
        asked = now;
        reask.push_back(a->second);
      }
      reask_round = sync_round_;
    }
    if (resync_all_.exchange(false, std::memory_order_relaxed)) {
      for (const auto& [id, m] : members_) {
        if (id != o_.node_id) resync_.insert(m.rec.address);
      }
    }
    for (const auto& addr : resync_) {
      for (const auto& [id, m] : members_) {
        if (m.rec.address == addr && id != o_.node_id && m.rec.state != MemberState::kDead) {
          resync.push_back(addr);
        }
      }
    }
    resync_.clear();
  }
  for (const auto& addr : resync) SyncTo(addr);
  if (!reask.empty()) AskForSync(reask, reask_round);
  if (!joined) Join();
  if (!exchange_addr.empty()) ExchangeMembers(exchange_addr);
  if (!dead_addr.empty()) ExchangeMembers(dead_addr);
  if (!target_id.empty()) Probe(target_id, target_addr, helpers);
}

void ClusterNode::Impl::Probe(const std::string& id, const std::string& address,
                              const std::vector<std::string>& helpers) {
  auto acked = [this, id](bool ok, std::string_view) {
    if (!ok) return;
    MutexLock l(&mu_);
    if (probe_target_ == id) probe_acked_ = true;
  };
  rpc_.Request(address, MsgType::kPing, GossipBody(), o_.probe_timeout_ms,
               [this, address, helpers, acked](bool ok, std::string_view b) {
                 if (ok) return acked(true, b);
                 // No direct ack: ask others to probe it (for the rest of the
                 // interval).
                 Writer target;
                 target.Str(address);
                 for (const auto& h : helpers) {
                   rpc_.Request(h, MsgType::kPingReq, GossipBody(target.out()),
                                std::max<int64_t>(1, o_.probe_interval_ms - o_.probe_timeout_ms),
                                acked);
                 }
               });
}

// Joins through the configured addresses: each answers with its members.
void ClusterNode::Impl::Join() {
  for (const auto& addr : o_.join) {
    if (addr == address_) continue;
    ExchangeMembers(addr);
  }
}

void ClusterNode::Impl::ExchangeMembers(const std::string& address) {
  rpc_.Request(address, MsgType::kJoin, MembersBody(), o_.request_timeout_ms,
               [this](bool ok, std::string_view body) {
                 if (!ok) return;
                 ReadMembers(body);
               });
}

}  // namespace cluster
}  // namespace ephpm
