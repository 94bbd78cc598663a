// The node: composes the transport, the requests, membership, replication
// and routing (node_impl.h), handles the frames, and forwards ClusterNode's
// public API to them.

#include "node.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>

#include "ephpm/clock.h"
#include "membership.h"
#include "node_impl.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {
namespace cluster {

namespace asio = boost::asio;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t FailureDetectionBoundMs(const ClusterOptions& o, size_t members) {
  // A member is probed by each other member once per shuffled round of
  // (n - 1) intervals, so at worst 2(n - 1) intervals pass before its first
  // failed probe; one more interval to conclude "suspect" (the ping-reqs run
  // out); the suspicion timeout, checked once per interval; then the
  // gossip's spread, the change riding on the next 3 x log2(n + 1) probes.
  const int64_t n = static_cast<int64_t>(std::max<size_t>(members, 2));
  const int64_t spread = GossipSends(static_cast<size_t>(n));
  return (2 * (n - 1) + 2) * o.probe_interval_ms + o.suspicion_timeout_ms +
         spread * o.probe_interval_ms;
}

int64_t JoinBoundMs(const ClusterOptions& o, size_t members) {
  // The joiner learns every member from its first answer (one request);
  // the member it joined through gossips the joiner on each of its probes
  // and probes every member within a round of (n - 1) intervals; a whole
  // member-list exchange every members_sync_every intervals covers anyone
  // missed.
  const int64_t n = static_cast<int64_t>(std::max<size_t>(members, 2));
  return o.request_timeout_ms +
         std::min<int64_t>(2 * (n - 1) + 1, std::max<int64_t>(1, o.members_sync_every) * n) *
             o.probe_interval_ms;
}

ClusterNode::Impl::Impl(ClusterOptions o)
    : o_(std::move(o)),
      node_hash_(XXH3_64bits_withSeed(o_.node_id.data(), o_.node_id.size(), 0x6570686d)),
      tick_(io_),
      tcp_(std::make_unique<TcpTransport>(
          &io_, o_.max_queue_bytes,
          TransportEvents{[this](const std::shared_ptr<Conn>& c, const Header& h,
                                 std::string_view body) { return OnFrame(c, h, body); },
                          [this](const std::string& address) {
                            LinkFailed(address);
                            rpc_.FailTo(address);
                          },
                          [this](const std::string& address) {
                            frames_dropped_.fetch_add(1, std::memory_order_relaxed);
                            LinkFailed(address);
                          }})),
      fault_(MakeFaults()),
      net_(fault_ ? fault_.get() : tcp_.get()),
      rpc_(&io_, net_),
      rng_(std::random_device{}()) {
  MutexLock l(&mu_);
  joined_ = o_.join.empty();
  ready_.store(joined_);
}

ClusterNode::Impl::~Impl() { Stop(); }

// ---- lifecycle ------------------------------------------------------------

bool ClusterNode::Impl::Listen(std::string* error) {
  if (!tcp_->Listen(o_.listen, &address_, error)) return false;
  MutexLock l(&mu_);
  // A later incarnation than any earlier run of this node id had.
  MemberRecord self{o_.node_id, address_, static_cast<uint64_t>(WallMs()), MemberState::kAlive};
  start_incarnation_ = self.incarnation;
  // Catch-up epochs grow across restarts of this id too, so that a member
  // that applied an epoch of an earlier run cannot pass for caught up.
  catchup_epoch_ = start_incarnation_ << 16;
  members_[o_.node_id] = Member{self, 0};
  RefreshPeersLocked();
  return true;
}

void ClusterNode::Impl::Start() {
  if (o_.arbiter == ClusterOptions::Arbiter::kEtcd && store_ != nullptr) {
    EtcdArbiterOptions eo;
    eo.endpoints = o_.etcd_endpoints;
    eo.prefix = o_.etcd_prefix;
    eo.node_id = o_.node_id;
    eo.address = address_;
    eo.timeout_ms = o_.etcd_timeout_ms;
    eo.lease_ttl_s = o_.etcd_lease_ttl_s;
    etcd_ = std::make_unique<EtcdArbiter>(
        // The floor etcd's fence offset is raised past: every fence this
        // node granted, saw (its clock observes them) or loaded.  Asked only
        // once the node is ready, i.e. has every member's state.
        std::move(eo), store_,
        [this]() -> std::optional<uint64_t> {
          if (!ready_.load(std::memory_order_acquire)) return std::nullopt;
          return std::max(hlc_.Now(), store_->FenceClock());
        },
        [this](uint64_t fence) { ObserveFence(fence); },
        [this](const EtcdMembers& members, int64_t revision) { OnEtcdMembers(members, revision); });
    etcd_->Start();
  }
  work_.emplace(asio::make_work_guard(io_));
  tcp_->Start();
  ScheduleTick(0);
  for (size_t i = 0; i < std::max<size_t>(1, o_.io_threads); ++i) {
    threads_.emplace_back([this] { io_.run(); });
  }
}

void ClusterNode::Impl::Stop() {
  Unpause();
  if (stopped_.exchange(true)) return;
  if (etcd_) etcd_->Stop();
  tcp_->Stopping();
  asio::post(io_, [this] {
    tcp_->CloseAll();
    tick_.cancel();
    rpc_.CancelTimers();
    // Whatever is still in flight (a request's timer, a delayed frame, a
    // connect) is abandoned: the handlers are destroyed with io_.
    io_.stop();
  });
  work_.reset();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

// ---- views and counters -----------------------------------------------------

std::vector<MemberRecord> ClusterNode::Impl::Members() const {
  MutexLock l(&mu_);
  std::vector<MemberRecord> out;
  for (const auto& [id, m] : members_) out.push_back(m.rec);
  return out;
}

std::vector<std::string> ClusterNode::Impl::AliveIds() const {
  MutexLock l(&mu_);
  std::vector<std::string> out;
  for (const auto& [id, m] : members_) {
    if (m.rec.state != MemberState::kDead) out.push_back(id);
  }
  return out;  // std::map: already sorted
}

bool ClusterNode::Impl::Info(ClusterInfo* info) const {
  MutexLock l(&mu_);
  uint64_t alive = 0;
  for (const auto& [id, m] : members_) alive += m.rec.state != MemberState::kDead;
  info->node_id = o_.node_id;
  info->address = address_;
  info->counters = {
      {"incarnation", members_.at(o_.node_id).rec.incarnation},
      {"known", members_.size()},
      {"alive", alive},
      {"mutations_published", mutations_published_.load()},
      {"mutations_received", mutations_received_.load()},
      {"frames_dropped", frames_dropped_.load()},
      {"full_syncs_sent", full_syncs_sent_.load()},
      {"routed_calls", routed_calls_.load()},
      {"routed_unreachable", routed_unreachable_.load()},
      {"routed_decided", routed_decided_.load()},
      {"routed_refused", routed_refused_.load()},
      {"ready", ready_.load() ? 1u : 0u},
      {"decisions_confirmed", decisions_confirmed_.load()},
      {"decisions_unconfirmed", decisions_unconfirmed_.load()},
      {"decisions_refused", decisions_refused_.load()},
      {"standing_lost", standing_lost_.load()},
  };
  if (etcd_) etcd_->Counters(&info->counters);
  // How well frames share writes (ephpm/send_cork.h).
  info->counters.emplace_back("frames_sent", tcp_->frames_sent());
  info->counters.emplace_back("link_writes", tcp_->link_writes());
  info->counters.emplace_back("decision_batches", decision_batches_.load());
  info->counters.emplace_back("route_batches", route_batches_sent_.load());
  info->members.clear();
  for (const auto& [id, m] : members_) {
    info->members.push_back(
        ClusterMemberInfo{id, m.rec.address, MemberStateName(m.rec.state), m.rec.incarnation});
  }
  return true;
}

// ---- transport and frames ----------------------------------------------------

void ClusterNode::Impl::Reply(const std::shared_ptr<Conn>& c, const std::string& peer, MsgType type,
                              uint64_t request_id, const std::string& body) {
  net_->Reply(c, peer, std::make_shared<const std::string>(Frame(type, request_id, body)));
}

void ClusterNode::Impl::LinkFailed(const std::string& address) {
  MutexLock l(&mu_);
  resync_.insert(address);
}


ClusterNode::Impl::Verdict ClusterNode::Impl::TakeDecision(std::string_view sender,
                                                          std::string_view routing_key,
                                                          int64_t deadline, const Mutation& m,
                                                          uint64_t epoch, uint64_t life) {
  Observe(m);
  const Verdict v = Judge(sender, routing_key, deadline, epoch, life);
  if (v == Verdict::kConfirmed) {
    store_->ApplyReplicated(m);
    mutations_received_.fetch_add(1, std::memory_order_relaxed);
  } else {
    decisions_refused_.fetch_add(1, std::memory_order_relaxed);
  }
  return v;
}

bool ClusterNode::Impl::ApplyMutations(Reader* r, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    Mutation m;
    if (!r->Mut(&m)) return false;
    Observe(m);
    if (store_ != nullptr) store_->ApplyReplicated(m);
    mutations_received_.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

// Handles one frame; false closes the connection (malformed).
bool ClusterNode::Impl::OnFrame(const std::shared_ptr<Conn>& c, const Header& h,
                                std::string_view body) {
  Reader r(body);
  std::string_view sender;
  if (!r.Str(&sender)) return false;
  if (!net_->Delivers(sender)) return true;  // dropped (the tests' partition)
  switch (h.type) {
    case MsgType::kPing: {
      if (!ReadGossip(&r)) return false;
      Reply(c, std::string(sender), MsgType::kAck, h.request_id, GossipBody());
      return true;
    }
    case MsgType::kAck: {
      if (!ReadGossip(&r)) return false;
      rpc_.Complete(h.request_id, true, {});
      return true;
    }
    case MsgType::kPingReq: {
      std::string_view target_addr;
      if (!r.Str(&target_addr) || !ReadGossip(&r)) return false;
      // Probe the target on the asker's behalf; ack only if it answered.
      std::weak_ptr<Conn> asker = c;
      const uint64_t their_id = h.request_id;
      rpc_.Request(std::string(target_addr), MsgType::kPing, GossipBody(), o_.probe_timeout_ms,
                   [this, asker, their_id, who = std::string(sender)](bool ok, std::string_view) {
                     auto a = asker.lock();
                     if (ok && a) Reply(a, who, MsgType::kAck, their_id, GossipBody());
                   });
      return true;
    }
    case MsgType::kJoin: {
      // Push-pull: take the asker's list, answer with ours.
      if (!ReadMemberList(&r)) return false;
      Reply(c, std::string(sender), MsgType::kMembers, h.request_id, MembersBody());
      return true;
    }
    case MsgType::kMembers: {
      rpc_.Complete(h.request_id, true, body);
      return true;
    }
    case MsgType::kReplicate: {
      uint32_t n = 0;
      return r.U32(&n) && ApplyMutations(&r, n);
    }
    case MsgType::kSyncBatch: {
      uint8_t last = 0, held_alive = 0;
      uint64_t round = 0, epoch = 0;
      uint32_t n = 0;
      if (!r.U8(&last) || !r.U64(&round) || !r.U64(&epoch) || !r.U8(&held_alive) || !r.U32(&n)) {
        return false;
      }
      if (!ApplyMutations(&r, n)) return false;
      if (last != 0) SyncReceived(std::string(sender), round, epoch, held_alive != 0);
      return true;
    }
    case MsgType::kRouteRequest: {
      if (store_ == nullptr) return true;  // not serving yet: the asker times out
      return OnRouteRequest(c, std::string(sender), h.request_id, &r);
    }
    case MsgType::kRouteBatch: {
      if (store_ == nullptr) return true;  // as kRouteRequest
      return OnRouteBatch(c, std::string(sender), h.request_id, &r);
    }
    case MsgType::kRouteReply:
    case MsgType::kRouteBatchReply:
    case MsgType::kDecisionReply:
    case MsgType::kDecisionBatchReply: {
      rpc_.Complete(h.request_id, true, body);
      return true;
    }
    case MsgType::kDecision: {
      std::string_view routing_key;
      int64_t deadline = 0;
      Mutation m;
      uint64_t epoch = 0, life = 0;
      if (!r.Str(&routing_key) || !r.I64(&deadline) || !r.Mut(&m) || !r.U64(&epoch) ||
          !r.U64(&life)) {
        return false;
      }
      const Verdict v = TakeDecision(sender, routing_key, deadline, m, epoch, life);
      Writer w(Writer::kTypicalBody);
      w.Str(o_.node_id);
      w.U8(static_cast<uint8_t>(v));
      w.Member(RecordOf(sender));
      Reply(c, std::string(sender), MsgType::kDecisionReply, h.request_id, w.out());
      return true;
    }
    case MsgType::kDecisionBatch: {
      // Read whole first: a batch cut anywhere applies none of it.
      struct Item {
        std::string_view routing_key;
        int64_t deadline = 0;
        Mutation m;
        uint64_t epoch = 0, life = 0;
      };
      uint32_t n = 0;
      if (!r.U32(&n) || n == 0) return false;
      std::vector<Item> items;
      items.reserve(std::min<uint32_t>(n, 4096));
      for (uint32_t i = 0; i < n; ++i) {
        Item& it = items.emplace_back();
        if (!r.Str(&it.routing_key) || !r.I64(&it.deadline) || !r.Mut(&it.m) ||
            !r.U64(&it.epoch) || !r.U64(&it.life)) {
          return false;
        }
      }
      std::string verdicts;
      verdicts.reserve(n);
      for (size_t i = 0; i < items.size(); ++i) {
        PrefetchAhead(i, items.size(), [&](size_t j) { return items[j].m.key; });
        const Item& it = items[i];
        verdicts.push_back(static_cast<char>(
            TakeDecision(sender, it.routing_key, it.deadline, it.m, it.epoch, it.life)));
      }
      Writer w(Writer::kTypicalBody + n);
      w.Str(o_.node_id);
      w.Member(RecordOf(sender));
      w.U32(n);
      w.out().append(verdicts);
      Reply(c, std::string(sender), MsgType::kDecisionBatchReply, h.request_id, w.out());
      return true;
    }
    case MsgType::kSyncRequest: {
      std::string_view reply_addr;
      uint64_t round = 0;
      if (!r.Str(&reply_addr) || !r.U64(&round)) return false;
      uint64_t epoch = 0;
      bool held_alive = false;
      {
        MutexLock l(&mu_);
        if (auto it = catchup_.find(std::string(sender)); it != catchup_.end()) epoch = it->second;
        auto m = members_.find(std::string(sender));
        held_alive = m != members_.end() && m->second.rec.state != MemberState::kDead;
      }
      // The state is taken now: when this node holds the asker alive,
      // every later decision of its own reaches the asker for
      // confirmation, so the state and those decisions together are
      // everything.  When it holds the asker dead, its later decisions do
      // not reach it: the asker uses the state but asks again.
      SyncTo(std::string(reply_addr), round, epoch, held_alive);
      return true;
    }
    case MsgType::kSyncDone: {
      uint64_t epoch = 0;
      if (!r.U64(&epoch)) return false;
      MutexLock l(&mu_);
      auto it = catchup_.find(std::string(sender));
      if (it != catchup_.end() && it->second == epoch) catchup_.erase(it);
      return true;
    }
    default:
      return false;  // a type this version does not know
  }
}

// ---- the public API ------------------------------------------------------------

ClusterNode::ClusterNode(ClusterOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
ClusterNode::~ClusterNode() = default;
bool ClusterNode::Listen(std::string* error) { return impl_->Listen(error); }
void ClusterNode::Attach(Store* store) { impl_->Attach(store); }
void ClusterNode::Start() { impl_->Start(); }
void ClusterNode::Stop() { impl_->Stop(); }
const std::string& ClusterNode::id() const { return impl_->id(); }
std::string ClusterNode::address() const { return impl_->address(); }
std::vector<MemberRecord> ClusterNode::Members() const { return impl_->Members(); }
std::vector<std::string> ClusterNode::AliveIds() const { return impl_->AliveIds(); }
Stamp ClusterNode::NextStamp() { return impl_->NextStamp(); }
void ClusterNode::Publish(const Mutation& m) noexcept { impl_->Publish(m); }
bool ClusterNode::Tentative() const { return impl_->Tentative(); }
bool ClusterNode::Info(ClusterInfo* info) const { return impl_->Info(info); }
std::string ClusterNode::OwnerOf(std::string_view key) const { return impl_->OwnerOf(key); }
bool ClusterNode::Ready() const { return impl_->Ready(); }
Routed<SetNxOutcome> ClusterNode::RouteSetNx(std::string_view key, std::string_view value,
                                             int64_t ttl_ms) {
  return impl_->RouteSetNx(key, value, ttl_ms);
}
Routed<SetNxOutcome> ClusterNode::RouteSetNxEphemeral(std::string_view key,
                                                      std::string_view value, int64_t ttl_ms) {
  return impl_->RouteSetNxEphemeral(key, value, ttl_ms);
}
Routed<DelIfEqOutcome> ClusterNode::RouteDelIfEq(std::string_view key, std::string_view token) {
  return impl_->RouteDelIfEq(key, token);
}
Routed<SetIfEqOutcome> ClusterNode::RouteSetIfEq(std::string_view guard_key, std::string_view token,
                                                 std::string_view key, std::string_view value,
                                                 int64_t ttl_ms) {
  return impl_->RouteSetIfEq(guard_key, token, key, value, ttl_ms);
}
Routed<DelIfGuardEqOutcome> ClusterNode::RouteDelIfGuardEq(std::string_view guard_key,
                                                           std::string_view token,
                                                           std::string_view key) {
  return impl_->RouteDelIfGuardEq(guard_key, token, key);
}
Routed<ExpireIfGuardEqOutcome> ClusterNode::RouteExpireIfGuardEq(std::string_view guard_key,
                                                                 std::string_view token,
                                                                 std::string_view key,
                                                                 int64_t ttl_ms) {
  return impl_->RouteExpireIfGuardEq(guard_key, token, key, ttl_ms);
}
Routed<IncrByReply> ClusterNode::RouteIncrBy(std::string_view key, int64_t delta) {
  return impl_->RouteIncrBy(key, delta);
}
Routed<GetReply> ClusterNode::RouteGet(std::string_view key) { return impl_->RouteGet(key); }
Routed<FencedGrant> ClusterNode::RouteSetNxFenced(std::string_view key, std::string_view value,
                                                  int64_t ttl_ms, bool ephemeral) {
  return impl_->RouteSetNxFenced(key, value, ttl_ms, ephemeral);
}
Routed<ExpireIfEqOutcome> ClusterNode::RouteExpireIfEq(std::string_view key, std::string_view token,
                                                       int64_t ttl_ms) {
  return impl_->RouteExpireIfEq(key, token, ttl_ms);
}
Routed<SetFencedOutcome> ClusterNode::RouteSetFenced(std::string_view key, std::string_view value,
                                                     uint64_t fence, int64_t ttl_ms) {
  return impl_->RouteSetFenced(key, value, fence, ttl_ms);
}
Routed<LockStateReply> ClusterNode::RouteLockState(std::string_view key, std::string_view token) {
  return impl_->RouteLockState(key, token);
}
Routed<SetWithReply> ClusterNode::RouteSetWith(std::string_view key, std::string_view value,
                                               const SetOptions& options) {
  return impl_->RouteSetWith(key, value, options);
}
Routed<DelExReply> ClusterNode::RouteDelEx(std::string_view key, const ValueCondition& condition) {
  return impl_->RouteDelEx(key, condition);
}
bool ClusterNode::SameOwner(const std::vector<std::string_view>& keys) {
  return impl_->SameOwner(keys);
}
std::string ClusterNode::RemoteOwner(std::string_view key) { return impl_->RemoteOwner(key); }

}  // namespace cluster
}  // namespace ephpm
