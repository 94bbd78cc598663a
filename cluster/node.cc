#include "node.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <array>
#include <thread>
#include <unordered_map>

#include "ephpm/clock.h"
#include "ephpm/host_port.h"
#include "ephpm/number_text.h"
#include "owner.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {
namespace cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr int kMaxStatus = static_cast<int>(Status::kNanOrInfinity);

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A hybrid logical clock: wall milliseconds in the high 48 bits and a
// counter in the low 16, never going back, and past every reading seen from
// another node (Observe), so a write made after seeing another is stamped
// after it whatever the two wall clocks say.
class Hlc {
 public:
  uint64_t Now() {
    const uint64_t physical = static_cast<uint64_t>(WallMs() + skew_ms_.load()) << 16;
    uint64_t cur = last_.load();
    uint64_t next;
    do {
      next = std::max(cur + 1, physical);
    } while (!last_.compare_exchange_weak(cur, next));
    return next;
  }
  void Observe(uint64_t remote) {
    uint64_t cur = last_.load();
    while (remote > cur && !last_.compare_exchange_weak(cur, remote)) {
    }
  }
  void Skew(int64_t ms) { skew_ms_.store(ms); }

 private:
  std::atomic<uint64_t> last_{0};
  std::atomic<int64_t> skew_ms_{0};
};

}  // namespace

int64_t FailureDetectionBoundMs(const ClusterOptions& o, size_t members) {
  // A member is probed by each other member once per shuffled round of
  // (n - 1) intervals, so at worst 2(n - 1) intervals pass before its first
  // failed probe; one more interval to conclude "suspect" (the ping-reqs run
  // out); the suspicion timeout, checked once per interval; then the
  // gossip's spread, the change riding on the next 3 x log2(n + 1) probes.
  const double n = static_cast<double>(std::max<size_t>(members, 2));
  const int64_t spread = 3 * static_cast<int64_t>(std::ceil(std::log2(n + 1)));
  return (2 * static_cast<int64_t>(n - 1) + 2) * o.probe_interval_ms + o.suspicion_timeout_ms +
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

class ClusterNode::Impl {
 public:
  class Conn;

  explicit Impl(ClusterOptions o)
      : o_(std::move(o)),
        node_hash_(XXH3_64bits_withSeed(o_.node_id.data(), o_.node_id.size(), 0x6570686d)),
        acceptor_(io_),
        tick_(io_),
        rng_(std::random_device{}()) {
    joined_ = o_.join.empty();
    ready_.store(joined_);
  }

  ~Impl() { Stop(); }

  // ---- lifecycle ------------------------------------------------------------

  bool Listen(std::string* error) {
    std::string host;
    uint16_t port = 0;
    if (!SplitHostPort(o_.listen, &host, &port)) {
      *error = "--cluster-listen needs host:port, got '" + o_.listen + "'";
      return false;
    }
    boost::system::error_code ec;
    const auto addr = asio::ip::make_address(host, ec);
    if (ec) {
      *error = "invalid cluster address '" + host + "'";
      return false;
    }
    const tcp::endpoint ep(addr, port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      *error = "cannot listen on " + o_.listen + ": " + ec.message();
      return false;
    }
    const auto bound = acceptor_.local_endpoint();
    address_ = bound.address().to_string() + ":" + std::to_string(bound.port());
    std::lock_guard<std::mutex> l(mu_);
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

  void Attach(Store* store) { store_ = store; }

  void Start() {
    work_.emplace(asio::make_work_guard(io_));
    Accept();
    ScheduleTick(0);
    for (size_t i = 0; i < std::max<size_t>(1, o_.io_threads); ++i) {
      threads_.emplace_back([this] { io_.run(); });
    }
  }

  void Stop() {
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    TestPause(false);
#endif
    if (stopped_.exchange(true)) return;
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      tick_.cancel();
      std::vector<std::shared_ptr<Conn>> all;
      {
        std::lock_guard<std::mutex> l(conns_mu_);
        for (auto& [a, c] : links_) all.push_back(c);
        for (auto& w : inbound_) {
          if (auto c = w.lock()) all.push_back(c);
        }
        links_.clear();
        inbound_.clear();
      }
      for (auto& c : all) c->Close();
      {
        std::lock_guard<std::mutex> l(pending_mu_);
        for (auto& [id, p] : pending_) p.timer->cancel();
      }
      // Whatever is still in flight (a request's timer, a delayed frame, a
      // connect) is abandoned: the handlers are destroyed with io_.
      io_.stop();
    });
    work_.reset();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  const std::string& id() const { return o_.node_id; }
  std::string address() const { return address_; }

  // ---- replication hooks (called under a store shard lock) -------------------

  Stamp NextStamp() { return Stamp{hlc_.Now(), node_hash_}; }

  // A decision being made on this thread is tentative until confirmed.
  bool Tentative() const { return tl_capture != nullptr && tl_capture->node == this; }

  void Publish(const Mutation& m) noexcept {
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

  // ---- owner arbitration ------------------------------------------------------
  //
  // The rule (docs/CLUSTER.md, "Why a paused owner cannot decide"): a
  // decision (set_nx, del_if_eq, set_if_eq, del_if_guard_eq,
  // expire_if_guard_eq, incr_by) is made by the key's owner only while
  //   1. the members it holds alive are a strict majority of the members it
  //      knows, and
  //   2. it is *ready*: since it started, or since it last lost its standing
  //      (it learned it had been declared dead, or that it is a restarted
  //      process, or a decision of its own was not confirmed), it has
  //      received a whole state from every member it holds alive, each taken
  //      while that member held it alive;
  // and a decision that changed something is answered only once every member
  // the owner holds alive has *confirmed* it.  A member confirms only while
  //   a. it holds the decider alive,
  //   b. its own view names the decider as the key's owner,
  //   c. the decision's deadline (the asker's) is more than the clock skew
  //      allowance away, and
  //   d. the decider has applied the whole state this member sent it when it
  //      last came back from the dead (so a decider that missed decisions
  //      made while it was held dead is refused until it caught up).
  // A decision that is not confirmed is answered "unknown outcome", the
  // decider forgets its own copy of the key (so its fresher stamp cannot
  // override the cluster's state) and loses its standing until it caught up.

  enum class RouteOp : uint8_t {
    kSetNx = 1,
    kDelIfEq = 2,
    kSetIfEq = 3,
    kIncrBy = 4,
    kGet = 5,
    kDelIfGuardEq = 6,
    kExpireIfGuardEq = 7,
  };

  // A member's verdict on a decision.
  enum class Verdict : uint8_t {
    kConfirmed = 0,
    kSenderDead = 1,  // the member holds the decider dead (or does not know it)
    kNotOwner = 2,    // the member's view names another owner
    kLate = 3,        // past the deadline (less the clock skew allowance)
    kCatchUp = 4,     // the decider has not applied this member's state since it came back
    kNotServing = 5,  // the member has no store yet
  };

  // The members a decision is made over: the alive members sorted by id,
  // and how many members this node knows (dead ones included).
  struct AliveMember {
    std::string id, address;
    bool self;
  };
  struct View {
    std::vector<AliveMember> alive;
    size_t known = 0;
  };

  // Where the decision for a key is made.
  struct Placement {
    enum class Kind { kPlain, kHere, kRemote } kind = Kind::kPlain;
    std::string address;                 // kRemote: the owner's
    std::shared_ptr<const View> view;    // kHere: the view the decision is made over
  };

  Placement Place(std::string_view key) const {
    Placement p;
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    if (force_local_.load()) return p;
#endif
    p.view = std::atomic_load(&view_);
    // A cluster of one (no other member known, none to join): as a single
    // node, no confirmation from anyone.
    if (p.view->known <= 1 && o_.join.empty()) return p;
    if (p.view->alive.empty()) {
      p.kind = Placement::Kind::kHere;  // refused by CanDecide
      return p;
    }
    const AliveMember& owner = p.view->alive[OwnerIndex(key, p.view->alive.size())];
    if (owner.self) {
      p.kind = Placement::Kind::kHere;
    } else {
      p.kind = Placement::Kind::kRemote;
      p.address = owner.address;
    }
    return p;
  }

  bool Ready() const { return CanDecide(*std::atomic_load(&view_)); }

  // Rules 1 and 2 above.
  bool CanDecide(const View& v) const {
    return v.alive.size() * 2 > v.known && ready_.load(std::memory_order_acquire);
  }

  std::string OwnerOf(std::string_view key) const {
    auto view = std::atomic_load(&view_);
    if (view->alive.empty()) return o_.node_id;
    return view->alive[OwnerIndex(key, view->alive.size())].id;
  }

  bool SameOwner(const std::vector<std::string_view>& keys) const {
    auto view = std::atomic_load(&view_);
    if (view->alive.size() <= 1 || keys.empty()) return true;
    const size_t first = OwnerIndex(keys[0], view->alive.size());
    for (std::string_view k : keys) {
      if (OwnerIndex(k, view->alive.size()) != first) return false;
    }
    return true;
  }

  // A result handed from whichever thread produces it (an I/O thread, a
  // timer) to a thread that waits for it.
  template <typename T>
  struct Handoff {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false, ok = false;
    T value{};
    void Put(bool good, T v) {
      std::lock_guard<std::mutex> l(mu);
      done = true;
      ok = good;
      value = std::move(v);
      cv.notify_all();
    }
    // True, with the result moved to *out, when a good one came within `ms`.
    bool Wait(int64_t ms, T* out) {
      std::unique_lock<std::mutex> l(mu);
      cv.wait_for(l, std::chrono::milliseconds(ms), [&] { return done; });
      if (!done || !ok) return false;
      *out = std::move(value);
      return true;
    }
  };

  // One decision waiting for its confirmations.  `pending` counts the
  // members not yet answered plus the decider's own token, released (with
  // `done` set) once the store operation has returned.
  struct Decision {
    std::mutex mu;
    int pending = 1;
    bool failed = false;
    bool finished = false;
    std::vector<std::pair<std::string, Stamp>> changed;  // what the decision wrote
    std::function<void(bool)> done;       // set when the own token is released
    // Per member, the epoch of the latest state it sent this node on seeing
    // it back from the dead that this node had applied when it took the
    // decision (rule d: the member refuses a decision taken before).
    std::map<std::string, uint64_t> epochs;
    uint64_t generation = 0;  // standing_gen_ when it was taken
  };

  // The decision being made on this thread, seen by Publish.
  struct Capture {
    Impl* node;
    std::shared_ptr<Decision> decision;
    std::string_view routing_key;
    int64_t deadline_ms;
    std::shared_ptr<const View> view;
  };
  static thread_local Capture* tl_capture;

  // Publish, during a decision: sends the mutation to every other member
  // the decision is made over, as a decision to confirm.  Called under the
  // key's shard lock (so one key's decisions leave in the order they were
  // applied); only queues frames.
  void SendDecision(const Capture& cap, const Mutation& m) noexcept {
    try {
      SendDecisionOrThrow(cap, m);
    } catch (const std::bad_alloc&) {
      // Not sent to every member: the decision fails (answered "unknown",
      // what it wrote forgotten, the standing lost).  Should even the key's
      // record fail, the write stays tentative here, never sent in a sync,
      // until a newer state of the key replaces it.
      std::lock_guard<std::mutex> l(cap.decision->mu);
      cap.decision->failed = true;
      try {
        cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
      } catch (const std::bad_alloc&) {
      }
    }
  }

  void SendDecisionOrThrow(const Capture& cap, const Mutation& m) {
    if (standing_gen_.load(std::memory_order_acquire) != cap.decision->generation) {
      // This node lost its standing after the decision was let through, and
      // may have forgotten part of its copy (an unconfirmed decision) since:
      // the operation may have read that gap.  It is not sent; settling it
      // as failed forgets what it wrote.
      std::lock_guard<std::mutex> l(cap.decision->mu);
      cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
      cap.decision->failed = true;
      return;
    }
    Writer w;
    w.Str(o_.node_id);
    w.Str(cap.routing_key);
    w.I64(cap.deadline_ms);
    w.Mut(m);
    const std::string body = std::move(w.out());
    const int64_t timeout = std::max<int64_t>(1, cap.deadline_ms - WallMs());
    std::vector<const AliveMember*> to;
    for (const AliveMember& a : cap.view->alive) {
      if (!a.self) to.push_back(&a);
    }
    {
      std::lock_guard<std::mutex> l(cap.decision->mu);
      cap.decision->changed.emplace_back(std::string(m.key), m.stamp);
      cap.decision->pending += static_cast<int>(to.size());
    }
    mutations_published_.fetch_add(1, std::memory_order_relaxed);
    for (const AliveMember* a : to) {
      // Read without the decision's lock: `epochs` is written once, before
      // the operation runs.
      auto e = cap.decision->epochs.find(a->id);
      Writer tail;
      tail.U64(e == cap.decision->epochs.end() ? 0 : e->second);
      tail.U64(start_incarnation_);
      Request(a->address, MsgType::kDecision, body + tail.out(), timeout,
              [this, d = cap.decision](bool ok, std::string_view reply) {
                Settle(d, ok && ConfirmedIn(reply));
              });
    }
  }

  // Reads a decision reply: the member's verdict and its record of this
  // node (a record saying this node is dead makes it refute and lose its
  // standing, through ApplyUpdate).
  bool ConfirmedIn(std::string_view reply) {
    Reader r(reply);
    std::string_view sender;
    uint8_t verdict = 0;
    MemberRecord me;
    if (!r.Str(&sender) || !r.U8(&verdict) || !r.Member(&me)) return false;
    if (me.id == o_.node_id && me.state != MemberState::kAlive) ApplyUpdate(me);
    return verdict == static_cast<uint8_t>(Verdict::kConfirmed);
  }

  // Counts one answer (or the own token); finishes the decision once every
  // member confirmed, or at the first that did not.
  void Settle(const std::shared_ptr<Decision>& d, bool ok) {
    std::function<void(bool)> done;
    std::vector<std::pair<std::string, Stamp>> changed;
    bool failed = false;
    {
      std::lock_guard<std::mutex> l(d->mu);
      if (d->finished) return;
      if (!ok) d->failed = true;
      --d->pending;
      if (!d->done) return;  // the store operation has not returned yet
      if (!d->failed && d->pending > 0) return;
      d->finished = true;
      done = std::move(d->done);
      changed = std::move(d->changed);
      failed = d->failed;
    }
    if (failed) {
      decisions_unconfirmed_.fetch_add(1, std::memory_order_relaxed);
      // This copy may now differ from the members' (some may have refused
      // it, and a node that was held dead decided on a stale copy): drop
      // what the decision wrote, unless a later decision has replaced it,
      // so that their state wins whatever the stamps say, and catch up.
      // In this order: the standing goes first, so that a decision let
      // through before now that runs its operation after the forget (and
      // may read the gap it leaves) is dropped by SendDecision; the members
      // are asked for their state only after the forget, so that what they
      // send fills the gap.
      LoseStanding([&] {
        for (const auto& [key, stamp] : changed) store_->ForgetLocal(key, stamp);
      });
    } else if (!changed.empty()) {
      for (const auto& [key, stamp] : changed) store_->ConfirmLocal(key, stamp);
      decisions_confirmed_.fetch_add(1, std::memory_order_relaxed);
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      --in_flight_;
      MaybeReadyLocked();
    }
    done(!failed);
  }

  // Runs `op` (a store _Local operation) as a decision over `view` and calls
  // done(confirmed, outcome) once it is settled, on whichever thread settles
  // it.  False, and nothing done, when this node may not decide (checked
  // again here, under mu_, with the epochs the decision will carry: a state
  // applied after this point makes the members refuse it).
  template <typename Outcome, typename Op>
  bool Decide(std::string_view routing_key, int64_t deadline_ms,
              std::shared_ptr<const View> view, Op op,
              std::function<void(bool, Outcome)> done) {
    auto d = std::make_shared<Decision>();
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!CanDecide(*view)) return false;
      ++in_flight_;
      d->epochs = applied_epoch_;
      d->generation = standing_gen_.load(std::memory_order_relaxed);
    }
    Capture cap{this, d, routing_key, deadline_ms, std::move(view)};
    Outcome out;
    {
      Capture* outer = tl_capture;
      tl_capture = &cap;
      out = op();
      tl_capture = outer;
    }
    {
      std::lock_guard<std::mutex> l(d->mu);
      // Standing lost while the operation ran: it may have read a gap left
      // by a forgotten decision even where it wrote nothing (a "no such key"
      // or a mismatch), so its outcome is unknown.
      if (standing_gen_.load(std::memory_order_acquire) != d->generation) d->failed = true;
      d->done = [done = std::move(done), out](bool ok) { done(ok, out); };
    }
    Settle(d, true);  // the own token
    return true;
  }

  // A decision for a key this node owns, asked on this node: made here and
  // waited for on the calling thread.  REQUIRES: CanDecide(*view).
  template <typename Outcome, typename Op>
  Routed<Outcome> DecideHere(std::string_view routing_key, int64_t deadline_ms,
                             std::shared_ptr<const View> view, Op op) {
    auto h = std::make_shared<Handoff<Outcome>>();
    if (!Decide<Outcome>(routing_key, deadline_ms, std::move(view), op,
                         [h](bool ok, Outcome out) { h->Put(ok, std::move(out)); })) {
      routed_refused_.fetch_add(1, std::memory_order_relaxed);
      return Routed<Outcome>::Unreachable();  // nothing applied
    }
    // Every confirmation has its own timer; the margin covers a node whose
    // I/O threads are stopped.
    Outcome out{};
    if (!h->Wait(o_.request_timeout_ms + 1000, &out)) return Routed<Outcome>::Unreachable();
    return Routed<Outcome>::Owner(std::move(out));
  }

  enum class CallResult { kAnswered, kRefused, kUnreachable };

  // A route reply's status byte.  Refused means nothing was applied, so the
  // asker may ask again; unconfirmed means the owner applied it but not
  // every member confirmed it: the outcome is unknown, never to be retried.
  static constexpr uint8_t kRouteRefused = 0;
  static constexpr uint8_t kRouteDecided = 1;
  static constexpr uint8_t kRouteUnconfirmed = 2;

  // Sends a route request to the owner at `address` and waits for its
  // answer (the body after the sender id and the "decided" byte) until
  // `deadline_ms`.  kRefused: the owner refused it (past the deadline, not
  // the owner in its view, not ready), so it was not applied; kUnreachable:
  // no answer in time, or the connection broke first (outcome unknown).
  CallResult Call(const std::string& address, const std::string& body, int64_t deadline_ms,
                  std::string* answer) {
    auto h = std::make_shared<Handoff<std::string>>();
    routed_calls_.fetch_add(1, std::memory_order_relaxed);
    const int64_t timeout = std::max<int64_t>(1, deadline_ms - WallMs());
    Request(address, MsgType::kRouteRequest, body, timeout,
            [h](bool ok, std::string_view b) { h->Put(ok, std::string(b)); });
    // The timer answers first; the margin covers a node being stopped.
    std::string reply;
    const bool got = h->Wait(timeout + 1000, &reply);
    Reader r(reply);
    std::string_view sender;
    uint8_t decided = 0;
    if (!got || !r.Str(&sender) || !r.U8(&decided)) {
      routed_unreachable_.fetch_add(1, std::memory_order_relaxed);
      return CallResult::kUnreachable;
    }
    if (decided == kRouteRefused) return CallResult::kRefused;
    if (decided != kRouteDecided) {
      routed_unreachable_.fetch_add(1, std::memory_order_relaxed);
      return CallResult::kUnreachable;  // decided, but not confirmed: unknown
    }
    answer->assign(reply, reply.size() - r.remaining(), std::string::npos);
    return CallResult::kAnswered;
  }

  // Waits until this node may decide (it is catching up, or a view change
  // took its majority away) or `deadline_ms` passes.
  bool WaitUntilReady(int64_t deadline_ms) {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      if (CanDecide(*std::atomic_load(&view_))) return true;
      const int64_t left = deadline_ms - WallMs();
      if (left <= 0) return false;
      ready_cv_.wait_for(l, std::chrono::milliseconds(std::min<int64_t>(left, 10)));
    }
  }

  // Where a decision ended up: on a single node (kPlain: the caller decides
  // locally), here (kHere: *view is what to decide over), answered by the
  // owner (kAnswered: *answer), or unknown.
  enum class Asked { kPlain, kHere, kAnswered, kUnknown };

  // Finds the owner of `routing_key` and asks it, until `deadline_ms`: an
  // owner that refuses (it is catching up, or the views are changing) has
  // applied nothing and is asked again; one that does not answer leaves the
  // outcome unknown.  This node waits for its own readiness the same way.
  Asked Ask(std::string_view routing_key, RouteOp op, int64_t deadline_ms,
            const std::function<void(Writer*)>& args, std::shared_ptr<const View>* view,
            std::string* answer) {
    for (;;) {
      Placement p = Place(routing_key);
      if (p.kind == Placement::Kind::kPlain) return Asked::kPlain;
      if (p.kind == Placement::Kind::kHere) {
        if (CanDecide(*p.view)) {
          *view = std::move(p.view);
          return Asked::kHere;
        }
        // Without a majority there is nothing to wait for (a partition, or
        // members down: that takes failure detection, not a round trip).
        if (p.view->alive.size() * 2 <= p.view->known) break;
        if (!WaitUntilReady(deadline_ms - o_.max_clock_skew_ms)) break;
        continue;  // the owner may have changed meanwhile
      }
      Writer w;
      w.Str(o_.node_id);
      w.U8(static_cast<uint8_t>(op));
      w.I64(deadline_ms);
      args(&w);
      switch (Call(p.address, w.out(), deadline_ms, answer)) {
        case CallResult::kAnswered: return Asked::kAnswered;
        case CallResult::kUnreachable: return Asked::kUnknown;
        case CallResult::kRefused: break;
      }
      if (WallMs() + o_.max_clock_skew_ms + 10 >= deadline_ms) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    routed_refused_.fetch_add(1, std::memory_order_relaxed);
    return Asked::kUnknown;
  }

  // Decodes an outcome byte of an enum whose values run 0..max.
  template <typename E>
  static bool OutcomeFrom(std::string_view answer, int max, E* out) {
    Reader r(answer);
    uint8_t v = 0;
    if (!r.U8(&v) || v > max) return false;
    *out = static_cast<E>(v);
    return true;
  }

  // The outcome bytes on the wire are these enums' values: pinned here, so
  // that a renumbered or reordered enum fails to build instead of changing
  // what a byte means, and so that each `max` below is still the last value.
#define EPHPM_WIRE(E, v, n) static_assert(static_cast<int>(E::v) == (n), #E "::" #v " on the wire")
  EPHPM_WIRE(SetNxOutcome, kInserted, 0);
  EPHPM_WIRE(SetNxOutcome, kExists, 1);
  EPHPM_WIRE(SetNxOutcome, kOutOfMemory, 2);
  EPHPM_WIRE(SetNxOutcome, kOwnerUnreachable, 3);
  EPHPM_WIRE(SetNxOutcome, kInvalidArgument, 4);
  EPHPM_WIRE(DelIfEqOutcome, kDeleted, 0);
  EPHPM_WIRE(DelIfEqOutcome, kNotMatched, 1);
  EPHPM_WIRE(DelIfEqOutcome, kOwnerUnreachable, 2);
  EPHPM_WIRE(DelIfEqOutcome, kWrongType, 3);
  EPHPM_WIRE(DelIfEqOutcome, kInvalidArgument, 4);
  EPHPM_WIRE(DelIfEqOutcome, kOutOfMemory, 5);
  EPHPM_WIRE(SetIfEqOutcome, kWritten, 0);
  EPHPM_WIRE(SetIfEqOutcome, kNotMatched, 1);
  EPHPM_WIRE(SetIfEqOutcome, kOutOfMemory, 2);
  EPHPM_WIRE(SetIfEqOutcome, kOwnerUnreachable, 3);
  EPHPM_WIRE(SetIfEqOutcome, kWrongType, 4);
  EPHPM_WIRE(SetIfEqOutcome, kInvalidArgument, 5);
  EPHPM_WIRE(DelIfGuardEqOutcome, kDeleted, 0);
  EPHPM_WIRE(DelIfGuardEqOutcome, kAbsent, 1);
  EPHPM_WIRE(DelIfGuardEqOutcome, kNotMatched, 2);
  EPHPM_WIRE(DelIfGuardEqOutcome, kOwnerUnreachable, 3);
  EPHPM_WIRE(DelIfGuardEqOutcome, kWrongType, 4);
  EPHPM_WIRE(DelIfGuardEqOutcome, kInvalidArgument, 5);
  EPHPM_WIRE(DelIfGuardEqOutcome, kOutOfMemory, 6);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kApplied, 0);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kAbsent, 1);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kNotMatched, 2);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kOwnerUnreachable, 3);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kWrongType, 4);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kInvalidArgument, 5);
  EPHPM_WIRE(ExpireIfGuardEqOutcome, kOutOfMemory, 6);
  EPHPM_WIRE(Status, kOk, 0);
  EPHPM_WIRE(Status, kNotFound, 1);
  EPHPM_WIRE(Status, kOutOfMemory, 2);
  EPHPM_WIRE(Status, kInvalidArgument, 3);
  EPHPM_WIRE(Status, kOwnerUnreachable, 4);
  EPHPM_WIRE(Status, kWrongType, 5);
  EPHPM_WIRE(Status, kNotInteger, 6);
  EPHPM_WIRE(Status, kOverflow, 7);
  EPHPM_WIRE(Status, kNotFloat, 8);
  EPHPM_WIRE(Status, kNanOrInfinity, 9);
#undef EPHPM_WIRE

  // Routes a decision whose answer is one outcome byte.
  template <typename Outcome, typename Op>
  Routed<Outcome> RouteByte(std::string_view routing_key, RouteOp rop, Outcome max,
                            const std::function<void(Writer*)>& args, Op local) {
    const int64_t deadline = WallMs() + o_.request_timeout_ms;
    std::shared_ptr<const View> view;
    std::string answer;
    Outcome out;
    switch (Ask(routing_key, rop, deadline, args, &view, &answer)) {
      case Asked::kPlain: return Routed<Outcome>::Local();
      case Asked::kHere: return DecideHere<Outcome>(routing_key, deadline, std::move(view), local);
      case Asked::kAnswered:
        if (OutcomeFrom(answer, static_cast<int>(max), &out)) return Routed<Outcome>::Owner(out);
        break;
      case Asked::kUnknown: break;
    }
    return Routed<Outcome>::Unreachable();
  }

  Routed<SetNxOutcome> RouteSetNx(std::string_view key, std::string_view value, int64_t ttl_ms) {
    return RouteByte<SetNxOutcome>(
        key, RouteOp::kSetNx, SetNxOutcome::kInvalidArgument,
        [&](Writer* w) {
          w->Str(key);
          w->Str(value);
          w->I64(ttl_ms);
        },
        [&] { return store_->SetNxLocal(key, value, ttl_ms); });
  }

  Routed<DelIfEqOutcome> RouteDelIfEq(std::string_view key, std::string_view token) {
    return RouteByte<DelIfEqOutcome>(
        key, RouteOp::kDelIfEq, DelIfEqOutcome::kOutOfMemory,
        [&](Writer* w) {
          w->Str(key);
          w->Str(token);
        },
        [&] { return store_->DelIfEqLocal(key, token); });
  }

  Routed<SetIfEqOutcome> RouteSetIfEq(std::string_view guard_key, std::string_view token,
                                      std::string_view key, std::string_view value,
                                      int64_t ttl_ms) {
    return RouteByte<SetIfEqOutcome>(
        guard_key, RouteOp::kSetIfEq, SetIfEqOutcome::kInvalidArgument,
        [&](Writer* w) {
          w->Str(guard_key);
          w->Str(token);
          w->Str(key);
          w->Str(value);
          w->I64(ttl_ms);
        },
        [&] { return store_->SetIfEqLocal(guard_key, token, key, value, ttl_ms); });
  }

  Routed<DelIfGuardEqOutcome> RouteDelIfGuardEq(std::string_view guard_key,
                                                std::string_view token, std::string_view key) {
    return RouteByte<DelIfGuardEqOutcome>(
        guard_key, RouteOp::kDelIfGuardEq, DelIfGuardEqOutcome::kOutOfMemory,
        [&](Writer* w) {
          w->Str(guard_key);
          w->Str(token);
          w->Str(key);
        },
        [&] { return store_->DelIfGuardEqLocal(guard_key, token, key); });
  }

  Routed<ExpireIfGuardEqOutcome> RouteExpireIfGuardEq(std::string_view guard_key,
                                                      std::string_view token,
                                                      std::string_view key, int64_t ttl_ms) {
    return RouteByte<ExpireIfGuardEqOutcome>(
        guard_key, RouteOp::kExpireIfGuardEq, ExpireIfGuardEqOutcome::kOutOfMemory,
        [&](Writer* w) {
          w->Str(guard_key);
          w->Str(token);
          w->Str(key);
          w->I64(ttl_ms);
        },
        [&] { return store_->ExpireIfGuardEqLocal(guard_key, token, key, ttl_ms); });
  }

  Routed<IncrByReply> RouteIncrBy(std::string_view key, int64_t delta) {
    const int64_t deadline = WallMs() + o_.request_timeout_ms;
    std::shared_ptr<const View> view;
    std::string answer;
    auto args = [&](Writer* w) {
      w->Str(key);
      w->I64(delta);
    };
    switch (Ask(key, RouteOp::kIncrBy, deadline, args, &view, &answer)) {
      case Asked::kPlain: return Routed<IncrByReply>::Local();
      case Asked::kHere:
        return DecideHere<IncrByReply>(key, deadline, std::move(view), [&] {
          IncrByReply r;
          r.status = store_->IncrByLocal(key, delta, &r.value);
          return r;
        });
      case Asked::kAnswered: {
        IncrByReply out;
        Reader r(answer);
        if (OutcomeFrom(answer, kMaxStatus, &out.status) && r.Skip(1) && r.I64(&out.value)) {
          return Routed<IncrByReply>::Owner(out);
        }
        break;
      }
      case Asked::kUnknown: break;
    }
    return Routed<IncrByReply>::Unreachable();
  }

  // A read on the key's owner.  Not a decision, but the owner must be one
  // that may decide: a paused or catching-up owner could answer from a stale
  // copy.
  Routed<GetReply> RouteGet(std::string_view key) {
    const int64_t deadline = WallMs() + o_.request_timeout_ms;
    std::shared_ptr<const View> view;
    std::string answer;
    switch (Ask(key, RouteOp::kGet, deadline, [&](Writer* w) { w->Str(key); }, &view, &answer)) {
      case Asked::kPlain:
      case Asked::kHere:
        return Routed<GetReply>::Local();
      case Asked::kAnswered: {
        GetReply out;
        std::string_view value;
        Reader r(answer);
        if (OutcomeFrom(answer, kMaxStatus, &out.status) && r.Skip(1) && r.Str(&value)) {
          out.value.assign(value.data(), value.size());
          return Routed<GetReply>::Owner(std::move(out));
        }
        break;
      }
      case Asked::kUnknown: break;
    }
    return Routed<GetReply>::Unreachable();
  }

  // The owner's side of a route request.  A request past its deadline, for
  // a key this node does not own in its own view, or arriving while it may
  // not decide, is refused (the asker answers "unknown outcome"); else the
  // decision is made with the _local operation (never forwarding again, so
  // a request cannot bounce between nodes whose views differ) and answered
  // once confirmed.  False for a malformed request.
  bool OnRouteRequest(const std::shared_ptr<Conn>& c, const std::string& asker,
                      uint64_t request_id, Reader* r) {
    uint8_t op = 0;
    int64_t deadline = 0;
    if (!r->U8(&op) || !r->I64(&deadline)) return false;
    std::string_view key, value, token, guard;
    int64_t ttl = 0, delta = 0;
    std::string_view routing;
    switch (static_cast<RouteOp>(op)) {
      case RouteOp::kSetNx:
        if (!r->Str(&key) || !r->Str(&value) || !r->I64(&ttl)) return false;
        routing = key;
        break;
      case RouteOp::kDelIfEq:
        if (!r->Str(&key) || !r->Str(&token)) return false;
        routing = key;
        break;
      case RouteOp::kSetIfEq:
        if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key) || !r->Str(&value) ||
            !r->I64(&ttl)) {
          return false;
        }
        routing = guard;
        break;
      case RouteOp::kDelIfGuardEq:
        if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key)) return false;
        routing = guard;
        break;
      case RouteOp::kExpireIfGuardEq:
        if (!r->Str(&guard) || !r->Str(&token) || !r->Str(&key) || !r->I64(&ttl)) return false;
        routing = guard;
        break;
      case RouteOp::kIncrBy:
        if (!r->Str(&key) || !r->I64(&delta)) return false;
        routing = key;
        break;
      case RouteOp::kGet:
        if (!r->Str(&key)) return false;
        routing = key;
        break;
      default:
        return false;
    }
    auto answer = [this, c, asker, request_id](uint8_t status, const std::string& outcome) {
      Writer w;
      w.Str(o_.node_id);
      w.U8(status);
      w.out().append(outcome);
      Reply(c, asker, MsgType::kRouteReply, request_id, w.out());
    };
    auto refuse = [this, &answer] {
      routed_refused_.fetch_add(1, std::memory_order_relaxed);
      answer(kRouteRefused, "");
    };
    Placement p = Place(routing);
    if (WallMs() + o_.max_clock_skew_ms >= deadline || p.kind != Placement::Kind::kHere ||
        !CanDecide(*p.view)) {
      refuse();
      return true;
    }
    auto one_byte = [answer](bool ok, auto outcome) {
      answer(ok ? kRouteDecided : kRouteUnconfirmed, std::string(1, static_cast<char>(outcome)));
    };
    bool started = true;
    switch (static_cast<RouteOp>(op)) {
      case RouteOp::kSetNx:
        started = Decide<SetNxOutcome>(routing, deadline, std::move(p.view),
                             [&] { return store_->SetNxLocal(key, value, ttl); }, one_byte);
        break;
      case RouteOp::kDelIfEq:
        started = Decide<DelIfEqOutcome>(routing, deadline, std::move(p.view),
                               [&] { return store_->DelIfEqLocal(key, token); }, one_byte);
        break;
      case RouteOp::kSetIfEq:
        started = Decide<SetIfEqOutcome>(
            routing, deadline, std::move(p.view),
            [&] { return store_->SetIfEqLocal(guard, token, key, value, ttl); }, one_byte);
        break;
      case RouteOp::kDelIfGuardEq:
        started = Decide<DelIfGuardEqOutcome>(
            routing, deadline, std::move(p.view),
            [&] { return store_->DelIfGuardEqLocal(guard, token, key); }, one_byte);
        break;
      case RouteOp::kExpireIfGuardEq:
        started = Decide<ExpireIfGuardEqOutcome>(
            routing, deadline, std::move(p.view),
            [&] { return store_->ExpireIfGuardEqLocal(guard, token, key, ttl); }, one_byte);
        break;
      case RouteOp::kIncrBy:
        started = Decide<IncrByReply>(
            routing, deadline, std::move(p.view),
            [&] {
              IncrByReply rep;
              rep.status = store_->IncrByLocal(key, delta, &rep.value);
              return rep;
            },
            [answer](bool ok, IncrByReply rep) {
              Writer w;
              w.U8(static_cast<uint8_t>(rep.status));
              w.I64(rep.status == Status::kOk ? rep.value : 0);
              answer(ok ? kRouteDecided : kRouteUnconfirmed, w.out());
            });
        break;
      case RouteOp::kGet: {
        std::string v;
        const Status st = store_->Get(key, &v);
        Writer w;
        w.U8(static_cast<uint8_t>(st));
        w.Str(st == Status::kOk ? std::string_view(v) : std::string_view());
        answer(kRouteDecided, w.out());
        break;
      }
    }
    if (!started) {
      refuse();
    } else {
      routed_decided_.fetch_add(1, std::memory_order_relaxed);
    }
    return true;
  }

  // A member's side of a decision: confirms it (and applies it) only under
  // conditions a-d above.
  Verdict Judge(std::string_view decider, std::string_view routing_key, int64_t deadline,
                uint64_t epoch, uint64_t life) {
    if (store_ == nullptr) return Verdict::kNotServing;
    {
      std::lock_guard<std::mutex> l(mu_);
      const std::string id(decider);
      auto it = members_.find(id);
      if (it == members_.end() || it->second.rec.state == MemberState::kDead) {
        return Verdict::kSenderDead;
      }
      // Not yet applied the state sent when it came back, or decided before
      // it had (the decision carries the epoch it had applied then).
      if (catchup_.count(id) != 0) return Verdict::kCatchUp;
      // The check is for the process this node revived: one started since
      // (a later first incarnation) has no memory of that state, and its own
      // readiness rule made it fetch everyone's state when it started.
      if (auto e = sent_epoch_.find(id);
          e != sent_epoch_.end() && life <= e->second.incarnation && epoch < e->second.epoch) {
        return Verdict::kCatchUp;
      }
    }
    if (OwnerOf(routing_key) != decider) return Verdict::kNotOwner;
    if (WallMs() + o_.max_clock_skew_ms >= deadline) return Verdict::kLate;
    return Verdict::kConfirmed;
  }

  // This member's record of `id`; one with an empty id when it does not
  // know it (which the asker ignores: it is not news about it).
  MemberRecord RecordOf(std::string_view id) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = members_.find(std::string(id));
    if (it == members_.end()) return MemberRecord{};
    return it->second.rec;
  }

  // ---- views -------------------------------------------------------------------

  std::vector<MemberRecord> Members() const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<MemberRecord> out;
    for (const auto& [id, m] : members_) out.push_back(m.rec);
    return out;
  }

  std::vector<std::string> AliveIds() const {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<std::string> out;
    for (const auto& [id, m] : members_) {
      if (m.rec.state != MemberState::kDead) out.push_back(id);
    }
    return out;  // std::map: already sorted
  }

  bool Info(ClusterInfo* info) const {
    std::lock_guard<std::mutex> l(mu_);
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
    info->members.clear();
    for (const auto& [id, m] : members_) {
      info->members.push_back(
          ClusterMemberInfo{id, m.rec.address, MemberStateName(m.rec.state), m.rec.incarnation});
    }
    return true;
  }

#ifdef EPHPM_CLUSTER_TEST_HOOKS
  void TestCutOff(const std::string& peer, bool cut) {
    std::lock_guard<std::mutex> l(mu_);
    if (cut) {
      cut_.insert(peer);
    } else if (cut_.erase(peer) != 0) {
      // What was dropped meanwhile is lost, as with a link that broke.
      if (auto it = members_.find(peer); it != members_.end()) resync_.insert(it->second.rec.address);
    }
  }
  void TestDelay(const std::string& peer, int64_t ms) {
    std::lock_guard<std::mutex> l(mu_);
    delay_[peer] = ms;
  }
  void TestDelayReplication(const std::string& peer, int64_t ms) {
    std::lock_guard<std::mutex> l(mu_);
    delay_replication_[peer] = ms;
  }
  void TestSkewClock(int64_t ms) { hlc_.Skew(ms); }
  void TestForceLocalRouting(bool local) { force_local_.store(local); }
  void TestPause(bool paused) {
    std::unique_lock<std::mutex> l(pause_mu_);
    if (paused == paused_) return;
    paused_ = paused;
    if (!paused) {
      pause_cv_.notify_all();
      return;
    }
    // One blocking handler per I/O thread; wait until each holds its thread.
    const size_t threads = std::max<size_t>(1, o_.io_threads);
    size_t holding = 0;
    for (size_t i = 0; i < threads; ++i) {
      asio::post(io_, [this, &holding] {
        std::unique_lock<std::mutex> pl(pause_mu_);
        ++holding;
        pause_cv_.notify_all();
        pause_cv_.wait(pl, [this] { return !paused_; });
      });
    }
    pause_cv_.wait(l, [&] { return holding == threads || !paused_; });
  }
#endif

  // ---- connections ------------------------------------------------------------

  // One TCP connection, inbound or outbound: reads frames and hands them to
  // the node; writes queued frames in order.
  class Conn : public std::enable_shared_from_this<Conn> {
   public:
    Conn(Impl* node, tcp::socket socket, std::string address)
        : node_(node),
          socket_(std::move(socket)),
          strand_(socket_.get_executor()),
          address_(std::move(address)) {}

    // Outbound: connects, then writes what was queued meanwhile.
    void Connect() {
      std::string host;
      uint16_t port = 0;
      if (!SplitHostPort(address_, &host, &port)) return Fail();
      boost::system::error_code ec;
      const auto addr = asio::ip::make_address(host, ec);
      if (ec) return Fail();
      socket_.async_connect(
          tcp::endpoint(addr, port),
          asio::bind_executor(strand_, [self = shared_from_this()](boost::system::error_code e) {
            if (e) return self->Fail();
            boost::system::error_code ignored;
            self->socket_.set_option(tcp::no_delay(true), ignored);
            self->connected_ = true;
            self->ReadHeader();
            self->MaybeWrite();
          }));
    }

    // Inbound: already connected.
    void StartInbound() {
      connected_ = true;
      boost::system::error_code ignored;
      socket_.set_option(tcp::no_delay(true), ignored);
      asio::dispatch(strand_, [self = shared_from_this()] { self->ReadHeader(); });
    }

    // Queues a frame.  Returns false when the queue is over its cap (the
    // frame is dropped; the caller resyncs the peer later).
    bool Send(std::shared_ptr<const std::string> frame, bool replication) {
      std::lock_guard<std::mutex> l(mu_);
      if (closed_) return false;
      if (replication && queued_bytes_ + frame->size() > node_->o_.max_queue_bytes) {
        overflowed_ = true;
        return false;
      }
      queued_bytes_ += frame->size();
      queue_.push_back(std::move(frame));
      // One wake-up of the I/O thread covers every frame queued before it
      // runs: a burst of mutations costs one post, not one each.
      if (!kick_pending_) {
        kick_pending_ = true;
        asio::post(strand_, [self = shared_from_this()] { self->Kick(); });
      }
      return true;
    }

    void Close() {
      asio::post(strand_, [self = shared_from_this()] { self->Shut(); });
    }

    bool closed() const {
      std::lock_guard<std::mutex> l(mu_);
      return closed_;
    }
    bool TakeOverflow() {
      std::lock_guard<std::mutex> l(mu_);
      const bool o = overflowed_;
      overflowed_ = false;
      return o;
    }
    const std::string& address() const { return address_; }

   private:
    void Kick() {
      {
        std::lock_guard<std::mutex> l(mu_);
        kick_pending_ = false;
      }
      MaybeWrite();
    }

    // Writes what is queued unless a write is in flight (its completion
    // calls this again) or the connection is not up yet (Connect does).
    void MaybeWrite() {
      if (!connected_ || writing_) return;
      std::vector<std::shared_ptr<const std::string>> batch;
      {
        std::lock_guard<std::mutex> l(mu_);
        while (!queue_.empty() && batch.size() < 256) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      if (batch.empty()) return;
      writing_ = true;
      std::vector<asio::const_buffer> bufs;
      for (const auto& f : batch) bufs.emplace_back(asio::buffer(*f));
      asio::async_write(
          socket_, bufs,
          asio::bind_executor(strand_, [self = shared_from_this(), batch](
                                           boost::system::error_code e, size_t) {
            self->writing_ = false;
            {
              std::lock_guard<std::mutex> l(self->mu_);
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
      if (in_begin_ == in_.size()) {
        // Give back the room a large frame (a big value) took.
        if (in_.capacity() > 4 * kReadChunk) {
          std::string().swap(in_);
        } else {
          in_.clear();
        }
        in_begin_ = 0;
      } else if (in_begin_ >= kReadChunk) {
        in_.erase(0, in_begin_);
        in_begin_ = 0;
      }
      const size_t have = in_.size() - in_begin_;
      const size_t want = need_ > have + kReadChunk ? need_ - have : kReadChunk;
      const size_t old = in_.size();
      in_.resize(old + want);
      socket_.async_read_some(
          asio::buffer(&in_[old], want),
          asio::bind_executor(strand_, [self = shared_from_this(), old](
                                           boost::system::error_code e, size_t n) {
            self->in_.resize(old + (e ? 0 : n));
            if (e) return self->Fail();
            if (!self->TakeFrames()) return self->Fail();
            self->ReadHeader();
          }));
    }

    // Handles the whole frames at the front of in_; false on garbage or a
    // frame OnFrame refuses.  need_ becomes the size of the next frame (or
    // of its header) as far as it is known.
    bool TakeFrames() {
      for (;;) {
        const size_t have = in_.size() - in_begin_;
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
        if (!node_->OnFrame(shared_from_this(), h, body)) return false;
      }
    }

    void Fail() {
      const bool outbound = !address_.empty();
      Shut();
      // Frames to that member may be lost: resync it once it answers again.
      // Requests sent on this connection will not be answered.
      if (outbound) {
        node_->LinkFailed(address_);
        node_->FailPending(address_);
      }
    }

    void Shut() {
      {
        std::lock_guard<std::mutex> l(mu_);
        if (closed_) return;
        closed_ = true;
        queue_.clear();
        queued_bytes_ = 0;
      }
      boost::system::error_code ignored;
      socket_.shutdown(tcp::socket::shutdown_both, ignored);
      socket_.close(ignored);
    }

    Impl* const node_;
    tcp::socket socket_;
    asio::strand<asio::any_io_executor> strand_;
    const std::string address_;
    bool connected_ = false;  // on the strand
    bool writing_ = false;    // on the strand
    static constexpr size_t kReadChunk = 64 * 1024;
    std::string in_;         // received bytes; [in_begin_, size) unread (strand)
    size_t in_begin_ = 0;    // on the strand
    size_t need_ = kFrameHeader;  // bytes the next frame needs (strand)
    mutable std::mutex mu_;
    std::deque<std::shared_ptr<const std::string>> queue_;
    size_t queued_bytes_ = 0;
    bool closed_ = false;
    bool overflowed_ = false;
    bool kick_pending_ = false;  // a Kick is posted and has not run yet
  };

  void Accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](boost::system::error_code ec,
                                                          tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        auto c = std::make_shared<Conn>(this, std::move(s), "");
        {
          std::lock_guard<std::mutex> l(conns_mu_);
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
      }
      Accept();
    });
  }

  // The outbound connection to `address`, made on first use and remade
  // after a failure.
  std::shared_ptr<Conn> LinkTo(const std::string& address, bool* fresh) {
    std::lock_guard<std::mutex> l(conns_mu_);
    *fresh = false;
    auto& c = links_[address];
    if (!c || c->closed()) {
      c = std::make_shared<Conn>(this, tcp::socket(asio::make_strand(io_)), address);
      c->Connect();
      *fresh = true;
    }
    return c;
  }

  // Sends a frame to the member at `address` (honouring the test hooks).
  void SendTo(const std::string& address, std::shared_ptr<const std::string> frame,
              bool replication) {
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    int64_t delay = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      const std::string peer = IdAtLocked(address);
      if (cut_.count(peer)) return;
      if (auto d = delay_.find(peer); d != delay_.end()) delay = d->second;
      if (auto d = delay_replication_.find(peer); replication && d != delay_replication_.end()) {
        delay += d->second;
      }
    }
    if (delay > 0) {
      auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(delay));
      t->async_wait([this, t, address, frame, replication](boost::system::error_code e) {
        if (!e) SendNow(address, frame, replication);
      });
      return;
    }
#endif
    SendNow(address, std::move(frame), replication);
  }

  void SendNow(const std::string& address, std::shared_ptr<const std::string> frame,
               bool replication) {
    if (stopped_.load(std::memory_order_relaxed)) return;
    bool fresh = false;
    auto link = LinkTo(address, &fresh);
    if (!link->Send(std::move(frame), replication)) {
      frames_dropped_.fetch_add(1, std::memory_order_relaxed);
      LinkFailed(address);
    }
  }

  // An outbound connection broke, or its queue overflowed: what it carried
  // may be lost, so the member gets this node's whole state (at the next
  // tick, if it is not dead; a dead one gets it when it comes back).
  void LinkFailed(const std::string& address) {
    std::lock_guard<std::mutex> l(mu_);
    resync_.insert(address);
  }

  // ---- requests with timeouts ------------------------------------------------

  struct Pending {
    std::function<void(bool, std::string_view)> done;
    std::shared_ptr<asio::steady_timer> timer;
    std::string address;  // where the request went
  };

  // Sends a request; `done` runs once: with the reply, or (false) on timeout.
  void Request(const std::string& address, MsgType type, const std::string& body,
               int64_t timeout_ms, std::function<void(bool, std::string_view)> done) {
    const uint64_t id = next_request_.fetch_add(1) + 1;
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(timeout_ms));
    {
      // The timer is touched only under pending_mu_ (here and in Complete):
      // an asio timer is not safe for concurrent use, and a connection
      // failure can complete the request on an I/O thread at once.
      std::lock_guard<std::mutex> l(pending_mu_);
      pending_[id] = Pending{std::move(done), timer, address};
      timer->async_wait([this, id](boost::system::error_code e) {
        if (e) return;
        Complete(id, false, {});
      });
    }
    SendTo(address, std::make_shared<const std::string>(Frame(type, id, body)), false);
  }

  // The connection to `address` broke: its requests will get no answer.
  void FailPending(const std::string& address) {
    std::vector<uint64_t> ids;
    {
      std::lock_guard<std::mutex> l(pending_mu_);
      for (const auto& [id, p] : pending_) {
        if (p.address == address) ids.push_back(id);
      }
    }
    for (uint64_t id : ids) Complete(id, false, {});
  }

  void Complete(uint64_t id, bool ok, std::string_view body) {
    Pending p;
    {
      std::lock_guard<std::mutex> l(pending_mu_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return;  // already answered or timed out
      p = std::move(it->second);
      pending_.erase(it);
      p.timer->cancel();
    }
    p.done(ok, body);
  }

  // Answers a request on the connection it came in on; `peer` is the
  // asker's id (for the test hooks).
  void Reply(const std::shared_ptr<Conn>& c, const std::string& peer, MsgType type,
             uint64_t request_id, const std::string& body) {
    auto frame = std::make_shared<const std::string>(Frame(type, request_id, body));
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    int64_t delay = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (cut_.count(peer)) return;
      if (auto d = delay_.find(peer); d != delay_.end()) delay = d->second;
    }
    if (delay > 0) {
      auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(delay));
      t->async_wait([t, c, frame](boost::system::error_code e) {
        if (!e) c->Send(frame, false);
      });
      return;
    }
#else
    (void)peer;
#endif
    c->Send(std::move(frame), false);
  }

  // ---- frames -------------------------------------------------------------------

  // Handles one frame; false closes the connection (malformed).
  bool OnFrame(const std::shared_ptr<Conn>& c, const Header& h, std::string_view body) {
    Reader r(body);
    std::string_view sender;
    if (!r.Str(&sender)) return false;
#ifdef EPHPM_CLUSTER_TEST_HOOKS
    {
      std::lock_guard<std::mutex> l(mu_);
      if (cut_.count(std::string(sender))) return true;  // dropped by the partition
    }
#endif
    switch (h.type) {
      case MsgType::kPing: {
        if (!ReadGossip(&r)) return false;
        Reply(c, std::string(sender), MsgType::kAck, h.request_id, GossipBody());
        return true;
      }
      case MsgType::kAck: {
        if (!ReadGossip(&r)) return false;
        Complete(h.request_id, true, {});
        return true;
      }
      case MsgType::kPingReq: {
        std::string_view target_addr;
        if (!r.Str(&target_addr) || !ReadGossip(&r)) return false;
        // Probe the target on the asker's behalf; ack only if it answered.
        std::weak_ptr<Conn> asker = c;
        const uint64_t their_id = h.request_id;
        Request(std::string(target_addr), MsgType::kPing, GossipBody(), o_.probe_timeout_ms,
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
        Complete(h.request_id, true, body);
        return true;
      }
      case MsgType::kReplicate: {
        uint32_t n = 0;
        if (!r.U32(&n)) return false;
        for (uint32_t i = 0; i < n; ++i) {
          Mutation m;
          if (!r.Mut(&m)) return false;
          hlc_.Observe(m.stamp.hlc);
          if (store_ != nullptr) store_->ApplyReplicated(m);
          mutations_received_.fetch_add(1, std::memory_order_relaxed);
        }
        return true;
      }
      case MsgType::kSyncBatch: {
        uint8_t last = 0, held_alive = 0;
        uint64_t round = 0, epoch = 0;
        uint32_t n = 0;
        if (!r.U8(&last) || !r.U64(&round) || !r.U64(&epoch) || !r.U8(&held_alive) ||
            !r.U32(&n)) {
          return false;
        }
        for (uint32_t i = 0; i < n; ++i) {
          Mutation m;
          if (!r.Mut(&m)) return false;
          hlc_.Observe(m.stamp.hlc);
          if (store_ != nullptr) store_->ApplyReplicated(m);
          mutations_received_.fetch_add(1, std::memory_order_relaxed);
        }
        if (last != 0) SyncReceived(std::string(sender), round, epoch, held_alive != 0);
        return true;
      }
      case MsgType::kRouteRequest: {
        if (store_ == nullptr) return true;  // not serving yet: the asker times out
        return OnRouteRequest(c, std::string(sender), h.request_id, &r);
      }
      case MsgType::kRouteReply:
      case MsgType::kDecisionReply: {
        Complete(h.request_id, true, body);
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
        hlc_.Observe(m.stamp.hlc);
        const Verdict v = Judge(sender, routing_key, deadline, epoch, life);
        if (v == Verdict::kConfirmed) {
          store_->ApplyReplicated(m);
          mutations_received_.fetch_add(1, std::memory_order_relaxed);
        } else {
          decisions_refused_.fetch_add(1, std::memory_order_relaxed);
        }
        Writer w;
        w.Str(o_.node_id);
        w.U8(static_cast<uint8_t>(v));
        w.Member(RecordOf(sender));
        Reply(c, std::string(sender), MsgType::kDecisionReply, h.request_id, w.out());
        return true;
      }
      case MsgType::kSyncRequest: {
        std::string_view reply_addr;
        uint64_t round = 0;
        if (!r.Str(&reply_addr) || !r.U64(&round)) return false;
        uint64_t epoch = 0;
        bool held_alive = false;
        {
          std::lock_guard<std::mutex> l(mu_);
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
        std::lock_guard<std::mutex> l(mu_);
        auto it = catchup_.find(std::string(sender));
        if (it != catchup_.end() && it->second == epoch) catchup_.erase(it);
        return true;
      }
      default:
        return false;  // a type this version does not know
    }
  }

  // Streams this node's whole state to `address` in batches.  `round` is
  // the asker's sync round (0 when this node sends on its own), `epoch` the
  // catch-up this state settles (0 for none): the receiver echoes it in a
  // kSyncDone once it applied the last batch.
  void SyncTo(const std::string& address, uint64_t round = 0, uint64_t epoch = 0,
              bool held_alive = false) {
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
  void SyncReceived(const std::string& sender, uint64_t round, uint64_t epoch,
                    bool held_alive) {
    std::string address;
    std::vector<std::string> ask;
    uint64_t ask_round = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (round != 0 && round == sync_round_ && held_alive &&
          sync_awaiting_.erase(sender) != 0) {
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
  void MaybeReadyLocked() {
    if (!ready_.load(std::memory_order_relaxed) && joined_ && sync_awaiting_.empty() &&
        in_flight_ == 0) {
      ready_.store(true, std::memory_order_release);
      ready_cv_.notify_all();
    }
  }

  // A new sync round: every member held alive is asked for its whole state,
  // and this node decides nothing until all have sent it.  Returns the
  // addresses to ask (the caller sends outside the lock).
  std::vector<std::string> StartSyncRoundLocked() {
    standing_gen_.fetch_add(1, std::memory_order_release);
    ready_.store(false, std::memory_order_release);
    ++sync_round_;
    sync_awaiting_.clear();
    std::vector<std::string> ask;
    const int64_t now = SteadyMs();
    for (const auto& [id, m] : members_) {
      if (id == o_.node_id || m.rec.state == MemberState::kDead) continue;
      sync_awaiting_[id] = now;
      ask.push_back(m.rec.address);
    }
    MaybeReadyLocked();
    return ask;
  }

  void AskForSync(const std::vector<std::string>& addresses, uint64_t round) {
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
  void LoseStanding(const std::function<void()>& meanwhile = {}) {
    std::vector<std::string> ask;
    uint64_t round = 0;
    {
      std::lock_guard<std::mutex> l(mu_);
      ask = StartSyncRoundLocked();
      round = sync_round_;
    }
    standing_lost_.fetch_add(1, std::memory_order_relaxed);
    if (meanwhile) meanwhile();
    AskForSync(ask, round);
  }

  // ---- membership ----------------------------------------------------------------

  struct Member {
    MemberRecord rec;
    int64_t suspect_since_ms = 0;
  };
  struct Gossip {
    MemberRecord rec;
    int sends_left;
  };

  // The sender's id, then `extra` (already encoded), then up to 16 pending
  // membership changes (our own record always among them, so peers learn
  // our address).
  std::string GossipBody(std::string_view extra = {}) {
    Writer w;
    w.Str(o_.node_id);
    w.out().append(extra.data(), extra.size());
    std::lock_guard<std::mutex> l(mu_);
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

  bool ReadGossip(Reader* r) {
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
  bool ReadMemberList(Reader* r) {
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

  std::string MembersBody() {
    Writer w;
    w.Str(o_.node_id);
    std::lock_guard<std::mutex> l(mu_);
    w.U32(static_cast<uint32_t>(members_.size()));
    for (const auto& [id, m] : members_) w.Member(m.rec);
    return std::move(w.out());
  }

  void ReadMembers(std::string_view body) {
    Reader r(body);
    std::string_view sender;
    if (!r.Str(&sender)) return;
    ReadMemberList(&r);
  }

  // What a membership change asks of this node once its lock is released.
  struct Effects {
    std::vector<std::pair<std::string, uint64_t>> push;  // SyncTo(address, 0, epoch)
    std::vector<std::string> ask;                        // AskForSync(ask, round)
    uint64_t round = 0;
    bool lost_standing = false;
  };

  void Run(const Effects& fx) {
    for (const auto& [addr, epoch] : fx.push) SyncTo(addr, 0, epoch);
    if (!fx.ask.empty()) AskForSync(fx.ask, fx.round);
    if (fx.lost_standing) standing_lost_.fetch_add(1, std::memory_order_relaxed);
  }

  // SWIM's precedence: a record replaces what this node knows when it is
  // news (a higher incarnation, or a worse state at the same incarnation).
  void ApplyUpdate(const MemberRecord& rec) {
    Effects fx;
    {
      std::lock_guard<std::mutex> l(mu_);
      ApplyUpdateLocked(rec, &fx);
    }
    Run(fx);
  }

  void ApplyUpdateLocked(const MemberRecord& rec, Effects* fx) {
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
    bool news = false;
    switch (rec.state) {
      case MemberState::kAlive:
        news = rec.incarnation > cur.rec.incarnation;
        break;
      case MemberState::kSuspect:
        news = (was == MemberState::kAlive && rec.incarnation >= cur.rec.incarnation) ||
               rec.incarnation > cur.rec.incarnation;
        break;
      case MemberState::kDead:
        news = (was != MemberState::kDead && rec.incarnation >= cur.rec.incarnation) ||
               rec.incarnation > cur.rec.incarnation;
        break;
    }
    if (!news) return;
    cur.rec = rec;
    if (rec.state == MemberState::kSuspect && was != MemberState::kSuspect) {
      cur.suspect_since_ms = SteadyMs();
    }
    GossipLocked(rec);
    if (rec.state == MemberState::kDead && was != MemberState::kDead) {
      // Nothing more will come from it: stop waiting for its state.
      catchup_.erase(rec.id);
      sync_awaiting_.erase(rec.id);
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

  void GossipLocked(const MemberRecord& rec) {
    const double n = static_cast<double>(members_.size());
    const int sends = 3 * static_cast<int>(std::ceil(std::log2(n + 1)));
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
  void RefreshPeersLocked() {
    auto peers = std::make_shared<std::vector<std::string>>();
    auto view = std::make_shared<View>();
    for (const auto& [id, m] : members_) {  // std::map: sorted by id
      if (m.rec.state == MemberState::kDead) continue;
      if (id != o_.node_id) peers->push_back(m.rec.address);
      view->alive.push_back(AliveMember{id, m.rec.address, id == o_.node_id});
    }
    view->known = members_.size();
    std::atomic_store(&peers_, std::shared_ptr<const std::vector<std::string>>(std::move(peers)));
    std::atomic_store(&view_, std::shared_ptr<const View>(std::move(view)));
    ready_cv_.notify_all();  // a majority may be back
  }

  void MarkLocked(const std::string& id, MemberState state) {
    auto it = members_.find(id);
    if (it == members_.end() || it->second.rec.state == state) return;
    MemberRecord rec = it->second.rec;
    rec.state = state;
    Effects ignored;  // only ever marks suspect or dead: nothing to send
    ApplyUpdateLocked(rec, &ignored);
  }

#ifdef EPHPM_CLUSTER_TEST_HOOKS
  std::string IdAtLocked(const std::string& address) const {
    for (const auto& [id, m] : members_) {
      if (m.rec.address == address) return id;
    }
    return "";
  }
#endif

  // ---- the protocol period ------------------------------------------------------

  void ScheduleTick(int64_t delay_ms) {
    tick_.expires_after(std::chrono::milliseconds(delay_ms));
    tick_.async_wait([this](boost::system::error_code e) {
      if (e || stopped_) return;
      Tick();
      ScheduleTick(o_.probe_interval_ms);
    });
  }

  void Tick() {
    ++ticks_;
    std::vector<std::string> resync, reask;
    uint64_t reask_round = 0;
    std::string target_id, target_addr, exchange_addr, dead_addr;
    std::vector<std::string> helpers;
    bool joined = false;
    {
      std::lock_guard<std::mutex> l(mu_);
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
        for (auto& [id, asked] : sync_awaiting_) {
          auto m = members_.find(id);
          if (m == members_.end() || now - asked < o_.request_timeout_ms) continue;
          asked = now;
          reask.push_back(m->second.rec.address);
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

  void Probe(const std::string& id, const std::string& address,
             const std::vector<std::string>& helpers) {
    auto acked = [this, id](bool ok, std::string_view) {
      if (!ok) return;
      std::lock_guard<std::mutex> l(mu_);
      if (probe_target_ == id) probe_acked_ = true;
    };
    Request(address, MsgType::kPing, GossipBody(), o_.probe_timeout_ms,
            [this, address, helpers, acked](bool ok, std::string_view b) {
              if (ok) return acked(true, b);
              // No direct ack: ask others to probe it (for the rest of the
              // interval).
              Writer target;
              target.Str(address);
              for (const auto& h : helpers) {
                Request(h, MsgType::kPingReq, GossipBody(target.out()),
                        std::max<int64_t>(1, o_.probe_interval_ms - o_.probe_timeout_ms), acked);
              }
            });
  }

  // Joins through the configured addresses: each answers with its members.
  void Join() {
    for (const auto& addr : o_.join) {
      if (addr == address_) continue;
      ExchangeMembers(addr);
    }
  }

  void ExchangeMembers(const std::string& address) {
    Request(address, MsgType::kJoin, MembersBody(), o_.request_timeout_ms,
            [this](bool ok, std::string_view body) {
              if (!ok) return;
              ReadMembers(body);
            });
  }

  const ClusterOptions o_;
  const uint64_t node_hash_;
  std::string address_;
  Store* store_ = nullptr;
  Hlc hlc_;

  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  tcp::acceptor acceptor_;
  asio::steady_timer tick_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};

  mutable std::mutex mu_;  // membership
  std::map<std::string, Member> members_;
  std::vector<Gossip> gossip_;
  std::vector<std::string> probe_order_;
  size_t probe_pos_ = 0;
  std::string probe_target_;
  bool probe_acked_ = false;
  uint64_t ticks_ = 0;
  // Standing (see "owner arbitration"): guarded by mu_.
  bool joined_;                           // knows another member, or has none to join
  uint64_t sync_round_ = 1;               // the current round of asking for states (0: none)
  // Members whose state this round still needs, and when they were last asked.
  std::map<std::string, int64_t> sync_awaiting_;
  std::map<std::string, uint64_t> catchup_;  // members back from the dead: epoch of the state sent
  uint64_t catchup_epoch_ = 0;
  // The latest such epoch sent to each member (kept after its kSyncDone):
  // a decision carrying an older one was taken before it caught up.
  struct SentEpoch {
    uint64_t epoch;
    uint64_t incarnation;  // of the member when it was revived
  };
  std::map<std::string, SentEpoch> sent_epoch_;
  // Per member, the latest epoch of a state it sent on seeing this node back
  // from the dead that this node has applied.
  std::map<std::string, uint64_t> applied_epoch_;
  // Decisions this node has started and not settled: it becomes ready only
  // when there are none (one made on a stale copy must be forgotten first).
  uint64_t in_flight_ = 0;
  uint64_t start_incarnation_ = 0;        // this run's first incarnation
  bool restart_seen_ = false;
  std::set<std::string> resync_;  // addresses to send a whole state
  // Publish could not allocate a frame: every member gets a whole state.
  std::atomic<bool> resync_all_{false};
  std::mt19937_64 rng_;
#ifdef EPHPM_CLUSTER_TEST_HOOKS
  std::set<std::string> cut_;
  std::map<std::string, int64_t> delay_;
  std::map<std::string, int64_t> delay_replication_;
#endif
  std::shared_ptr<const std::vector<std::string>> peers_ =
      std::make_shared<const std::vector<std::string>>();
  std::shared_ptr<const View> view_ = std::make_shared<const View>();
  std::atomic<bool> ready_{false};  // may decide (rule 2); written under mu_
  // Moves on every loss of standing (under mu_); a decision let through
  // under an older one is not sent, and its outcome is unknown (SendDecision,
  // Decide).
  std::atomic<uint64_t> standing_gen_{0};
  std::condition_variable ready_cv_;  // with mu_: ready_ or the view changed
#ifdef EPHPM_CLUSTER_TEST_HOOKS
  std::atomic<bool> force_local_{false};
  std::mutex pause_mu_;
  std::condition_variable pause_cv_;
  bool paused_ = false;  // guarded by pause_mu_
#endif

  std::mutex conns_mu_;
  std::map<std::string, std::shared_ptr<Conn>> links_;  // outbound, by address
  std::vector<std::weak_ptr<Conn>> inbound_;

  std::atomic<uint64_t> mutations_published_{0};
  std::atomic<uint64_t> mutations_received_{0};
  std::atomic<uint64_t> frames_dropped_{0};  // replication frames over a peer's queue cap
  std::atomic<uint64_t> full_syncs_sent_{0};
  std::atomic<uint64_t> routed_calls_{0};        // decisions asked of another owner
  std::atomic<uint64_t> routed_unreachable_{0};  // ... that got no answer in time
  std::atomic<uint64_t> routed_decided_{0};      // decisions made here for another node
  std::atomic<uint64_t> routed_refused_{0};      // ... refused: late, not the owner, not ready
  std::atomic<uint64_t> decisions_confirmed_{0};    // changes confirmed by every member
  std::atomic<uint64_t> decisions_unconfirmed_{0};  // ... not: answered "unknown", forgotten
  std::atomic<uint64_t> decisions_refused_{0};      // others' decisions this member refused
  std::atomic<uint64_t> standing_lost_{0};          // times this node had to catch up

  std::mutex pending_mu_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::atomic<uint64_t> next_request_{0};
};

thread_local ClusterNode::Impl::Capture* ClusterNode::Impl::tl_capture = nullptr;

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
Routed<DelIfEqOutcome> ClusterNode::RouteDelIfEq(std::string_view key, std::string_view token) {
  return impl_->RouteDelIfEq(key, token);
}
Routed<SetIfEqOutcome> ClusterNode::RouteSetIfEq(std::string_view guard_key,
                                                 std::string_view token, std::string_view key,
                                                 std::string_view value, int64_t ttl_ms) {
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
bool ClusterNode::SameOwner(const std::vector<std::string_view>& keys) {
  return impl_->SameOwner(keys);
}
#ifdef EPHPM_CLUSTER_TEST_HOOKS
void ClusterNode::TestCutOff(const std::string& peer, bool cut) { impl_->TestCutOff(peer, cut); }
void ClusterNode::TestDelay(const std::string& peer, int64_t ms) { impl_->TestDelay(peer, ms); }
void ClusterNode::TestSkewClock(int64_t ms) { impl_->TestSkewClock(ms); }
void ClusterNode::TestForceLocalRouting(bool local) { impl_->TestForceLocalRouting(local); }
void ClusterNode::TestPause(bool paused) { impl_->TestPause(paused); }
void ClusterNode::TestDelayReplication(const std::string& peer, int64_t ms) {
  impl_->TestDelayReplication(peer, ms);
}
#endif

}  // namespace cluster
}  // namespace ephpm
