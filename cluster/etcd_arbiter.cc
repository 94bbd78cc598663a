// Strict mode's lock decisions in etcd; the design is written in
// etcd_arbiter.h and docs/CLUSTER.md ("Strict mode").

#include "etcd_arbiter.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <random>

#include "ephpm/clock.h"
#include "ephpm/options.h"

namespace ephpm {
namespace cluster {

namespace {

int64_t NowSteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A lock's value goes into one etcd request (1.5 MiB at most by etcd's
// default); a token is 32 bytes.
constexpr size_t kMaxLockValue = 64 * 1024;

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The fence key's value: "<offset> <nonce>", the nonce telling this
// grant from any other (an older ephpm wrote the offset alone).
bool ParseFence(std::string_view s, uint64_t* offset) {
  const size_t space = s.find(' ');
  return ParseU64(s.substr(0, space), offset);
}

std::string FenceValue(uint64_t offset, uint64_t nonce) {
  return std::to_string(offset) + ' ' + std::to_string(nonce);
}

uint64_t GrantNonce() {
  thread_local std::mt19937_64 gen{(static_cast<uint64_t>(std::random_device{}()) << 32) ^
                                   std::random_device{}()};
  return gen();
}

}  // namespace

int64_t LeaseServingUntil(int64_t sent_ms, int64_t ttl_s) {
  const int64_t ttl_ms = ttl_s * 1000;
  return sent_ms + ttl_ms - ttl_ms * kLeaseDriftPpm / 1'000'000 - kLeaseMarginMs;
}

int64_t LockLeaseSeconds(int64_t ttl_ms) {
  // Smallest T with LeaseServingUntil(0, T) >= ttl_ms + kLockLeaseReuseMs:
  // T * 1000 * (1 - drift) - margin >= ttl + reuse.
  const int64_t need = ttl_ms + kLockLeaseReuseMs + kLeaseMarginMs;
  const int64_t per_s = 1000 - 1000 * kLeaseDriftPpm / 1'000'000;  // ms of a lease second, at worst
  int64_t t = std::max<int64_t>(1, (need + per_s - 1) / per_s);
  while (LeaseServingUntil(0, t) < ttl_ms + kLockLeaseReuseMs) ++t;  // integer rounding
  return t;
}

EtcdArbiter::EtcdArbiter(EtcdArbiterOptions o, Store* store,
                         std::function<std::optional<uint64_t>()> clock_floor,
                         std::function<void(uint64_t)> observe_fence,
                         std::function<void(const EtcdMembers&, int64_t)> on_members)
    : o_(std::move(o)),
      store_(store),
      clock_floor_(std::move(clock_floor)),
      observe_fence_(std::move(observe_fence)),
      on_members_(std::move(on_members)),
      client_(EtcdClientOptions{o_.endpoints, std::min<int64_t>(500, o_.timeout_ms)}) {}

EtcdArbiter::~EtcdArbiter() { Stop(); }

void EtcdArbiter::Start() {
  thread_ = std::thread([this] { LeaseLoop(); });
}

void EtcdArbiter::Stop() {
  {
    MutexLock l(&mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (watch_) watch_->Cancel();
  watch_.reset();
  // Leave: the member key goes with its lease (best effort: a node that
  // cannot reach etcd is dropped when the lease runs out).
  const int64_t lease = member_lease_.exchange(0);
  if (lease != 0) client_.LeaseRevoke(lease, NowSteadyMs() + 500);
  serving_until_.store(0);
}

bool EtcdArbiter::Serving() const { return NowSteadyMs() < serving_until_.load(); }

std::string EtcdArbiter::LockKey(std::string_view key) const {
  return o_.prefix + "/locks/" + std::string(key);
}
std::string EtcdArbiter::FenceKey(std::string_view key) const {
  return o_.prefix + "/fences/" + std::string(key);
}
std::string EtcdArbiter::OffsetKey() const { return o_.prefix + "/fence-offset"; }
std::string EtcdArbiter::MembersPrefix() const { return o_.prefix + "/members/"; }
std::string EtcdArbiter::MemberKey() const { return MembersPrefix() + o_.node_id; }
int64_t EtcdArbiter::Deadline() const { return NowSteadyMs() + o_.timeout_ms; }

EtcdArbiter::Offset EtcdArbiter::CurrentOffset() const {
  MutexLock l(&mu_);
  return offset_;
}

// The offset O (key <prefix>/fence-offset) turns revisions into fences:
// fence = O + create revision.  Fences of grants made under one O increase
// with the revision.  O is raised (compare-and-set on its mod revision) to
// this node's clock floor F when O + R < F, R the revision at which it was
// read; every grant compares O's mod revision, so one racing the raise
// fails and is retried with the new O.  After a raise every fence is
// F + r > F + R > O + R >= any fence granted under the old O (r > R, as the
// raise itself is a revision after R), and F is at least every fence this
// node has granted or seen (its hybrid logical clock), so in particular
// every fence of a gossip-mode cluster it ran in before.
bool EtcdArbiter::EnsureOffset(int64_t deadline_ms, bool may_raise) {
  for (;;) {
    std::vector<EtcdKv> kvs;
    int64_t revision = 0;
    if (!client_.Range(OffsetKey(), "", deadline_ms, &kvs, &revision).ok()) return false;
    Offset current;
    if (!kvs.empty()) {
      if (!ParseU64(kvs[0].value, &current.value)) return false;  // not ours: refuse to guess
      current.mod_revision = kvs[0].mod_revision;
    }
    if (current.mod_revision != 0 && !may_raise) {
      MutexLock l(&mu_);
      offset_ = current;
      return true;
    }
    const std::optional<uint64_t> known = clock_floor_();
    if (!known) return false;  // not caught up yet: the lease loop asks again
    const uint64_t floor = *known;
    if (current.mod_revision != 0 && current.value + static_cast<uint64_t>(revision) >= floor) {
      MutexLock l(&mu_);
      offset_ = current;
      return true;
    }
    EtcdCompare same;
    same.key = OffsetKey();
    same.target = EtcdCompare::Target::kMod;
    same.number = current.mod_revision;
    EtcdTxnResult r;
    if (!client_
             .Txn({same}, {EtcdOp::Put(OffsetKey(), std::to_string(floor))}, {}, deadline_ms, &r)
             .ok()) {
      return false;
    }
    if (r.succeeded) {
      offset_raised_.fetch_add(1, std::memory_order_relaxed);
      MutexLock l(&mu_);
      offset_ = Offset{floor, r.revision};
      return true;
    }
    // Another node raised it first: read it again.
  }
}

// The lease thread: renews the membership lease three times per TTL (and
// registers again when it is lost) and keeps the member list's watch alive.
// It sends nothing else: work queued behind the renewal (lock leases were
// once revoked here) would make a busy node lose its lease.
void EtcdArbiter::LeaseLoop() {
  int64_t lease = 0;
  bool offset_ok = false;
  int64_t next_renew = 0;  // SteadyMs of the next renewal
  for (;;) {
    {
      MutexLock l(&mu_);
      if (stop_) return;
    }
    if (NowSteadyMs() >= next_renew) {
      const int64_t sent = NowSteadyMs();
      const int64_t deadline =
          sent + std::min<int64_t>(o_.timeout_ms, o_.lease_ttl_s * 1000 / 3);
      bool renewed = false;
      if (lease == 0) {
        int64_t granted = 0;
        if (client_.LeaseGrant(o_.lease_ttl_s, deadline, &lease, &granted).ok()) {
          int64_t rev = 0;
          if (client_.Put(MemberKey(), o_.address, lease, deadline, &rev).ok()) {
            member_lease_.store(lease);
            offset_ok = offset_ok || EnsureOffset(deadline, /*may_raise=*/true);
            if (offset_ok) serving_until_.store(LeaseServingUntil(sent, granted));
            renewed = true;
          } else {
            client_.LeaseRevoke(lease, deadline);
            lease = 0;
          }
        } else {
          lease = 0;
        }
      } else {
        int64_t left = 0;
        const EtcdStatus s = client_.LeaseKeepAlive(lease, deadline, &left);
        if (s.ok() && left > 0) {
          if (!offset_ok) offset_ok = EnsureOffset(deadline, /*may_raise=*/true);
          if (offset_ok) serving_until_.store(LeaseServingUntil(sent, left));
          renewed = true;
        } else if (s.ok() || s.code == EtcdStatus::Code::kRejected) {
          // The lease is gone (expired while etcd could not be reached, or
          // revoked): stop at once and register anew.
          serving_until_.store(0);
          lease_lost_.fetch_add(1, std::memory_order_relaxed);
          member_lease_.store(0);
          lease = 0;
        }
      }
      if (renewed) lease_renewals_.fetch_add(1, std::memory_order_relaxed);
      // Three times per TTL; after a failure again soon.
      next_renew = sent + (renewed && offset_ok ? o_.lease_ttl_s * 1000 / 3 : 100);
    }
    bool restart_watch = false, refresh = false;
    {
      MutexLock l(&mu_);
      restart_watch = watch_ended_ || !watch_;
      refresh = refresh_;
      refresh_ = false;
    }
    const int64_t until_renew = std::max<int64_t>(1, next_renew - NowSteadyMs());
    if (restart_watch) {
      WatchMembers(NowSteadyMs() + std::min<int64_t>(o_.timeout_ms, until_renew));
    } else if (refresh) {
      RefreshMembers(NowSteadyMs() + std::min<int64_t>(o_.timeout_ms, until_renew));
    }
    MutexLock l(&mu_);
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(std::max<int64_t>(0, next_renew - NowSteadyMs()));
    while (!stop_ && !refresh_ && !watch_ended_) {
      if (l.WaitUntil(&cv_, until) == std::cv_status::timeout) break;
    }
  }
}

bool EtcdArbiter::RefreshMembers(int64_t deadline_ms) {
  std::vector<EtcdKv> kvs;
  int64_t revision = 0;
  const std::string prefix = MembersPrefix();
  if (!client_.Range(prefix, EtcdPrefixEnd(prefix), deadline_ms, &kvs, &revision).ok()) {
    return false;
  }
  EtcdMembers list;
  for (const EtcdKv& kv : kvs) list[kv.key.substr(prefix.size())] = kv.value;
  EtcdMembers snapshot;
  int64_t at = 0;
  {
    MutexLock l(&mu_);
    if (revision > members_revision_) {
      members_ = std::move(list);
      members_revision_ = revision;
    }
    snapshot = members_;
    at = members_revision_;
  }
  on_members_(snapshot, at);
  return true;
}

void EtcdArbiter::RequestRefresh() {
  {
    MutexLock l(&mu_);
    refresh_ = true;
  }
  cv_.notify_all();
}

void EtcdArbiter::WatchMembers(int64_t deadline_ms) {
  if (watch_) watch_->Cancel();
  watch_.reset();
  if (!RefreshMembers(deadline_ms)) return;  // the loop tries again
  int64_t from = 0;
  {
    MutexLock l(&mu_);
    watch_ended_ = false;
    from = members_revision_ + 1;
  }
  const std::string prefix = MembersPrefix();
  watch_ = client_.StartWatch(
      prefix, EtcdPrefixEnd(prefix), from,
      [this](const std::vector<EtcdEvent>& events, int64_t revision) {
        MembersChanged(events, revision);
      },
      [this](const std::string&) {
        {
          MutexLock l(&mu_);
          watch_ended_ = true;
        }
        cv_.notify_all();
      });
}

void EtcdArbiter::MembersChanged(const std::vector<EtcdEvent>& events, int64_t revision) {
  const std::string prefix = MembersPrefix();
  EtcdMembers snapshot;
  int64_t at = 0;
  {
    MutexLock l(&mu_);
    for (const EtcdEvent& e : events) {
      // A list read later (RefreshMembers) already has what an older event says.
      if (e.kv.mod_revision <= members_revision_ || e.kv.key.size() < prefix.size()) continue;
      const std::string id = e.kv.key.substr(prefix.size());
      if (e.deleted) {
        members_.erase(id);
      } else {
        members_[id] = e.kv.value;
      }
    }
    members_revision_ = std::max(members_revision_, revision);
    snapshot = members_;
    at = members_revision_;
  }
  on_members_(snapshot, at);
}

EtcdCompare EtcdArbiter::ValueIs(const std::string& key, std::string_view token) {
  EtcdCompare c;
  c.key = key;
  c.target = EtcdCompare::Target::kValue;
  c.value = std::string(token);
  return c;
}

bool EtcdArbiter::TxnUntil(const std::vector<EtcdCompare>& compare,
                           const std::vector<EtcdOp>& success, const std::vector<EtcdOp>& failure,
                           int64_t deadline_ms, EtcdTxnResult* r, bool* resent) {
  if (resent != nullptr) *resent = false;
  for (;;) {
    const EtcdStatus s = client_.Txn(compare, success, failure, deadline_ms, r);
    // The client itself sends again when an answer is lost: an answer
    // after that may find the first attempt's effect.
    if (s.resent && resent != nullptr) *resent = true;
    if (s.ok()) return true;
    if (s.sent && resent != nullptr) *resent = true;
    txns_failed_.fetch_add(1, std::memory_order_relaxed);
    if (s.code == EtcdStatus::Code::kUnavailable && NowSteadyMs() < deadline_ms) continue;
    refused_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
}

bool EtcdArbiter::ArgsOk(std::string_view key, std::string_view value, int64_t ttl_ms) const {
  return !key.empty() && key.size() <= kMaxKeySize && value.size() <= kMaxLockValue && ttl_ms >= 0;
}

bool EtcdArbiter::LockLease(int64_t ttl_ms, int64_t deadline_ms, int64_t* lease) {
  *lease = 0;
  if (ttl_ms <= 0) return true;
  const int64_t seconds = LockLeaseSeconds(ttl_ms);
  {
    MutexLock l(&mu_);
    const auto it = lock_leases_.find(seconds);
    // The lock must live ttl_ms from the moment it was asked for; now is
    // later than that, so a lease alive until now + ttl_ms will do, however
    // long the transaction then takes (the old lease-per-lock design had
    // the same reference: its lease was granted after the request came).
    if (it != lock_leases_.end() && NowSteadyMs() + ttl_ms <= it->second.alive_until_ms) {
      *lease = it->second.id;
      return true;
    }
  }
  // A new lease.  Threads that find the slot stale at the same moment each
  // grant one (and each use its own); the one that lives longest stays.
  const int64_t sent = NowSteadyMs();
  int64_t id = 0, granted = 0;
  if (!client_.LeaseGrant(seconds, deadline_ms, &id, &granted).ok()) return false;
  lock_leases_granted_.fetch_add(1, std::memory_order_relaxed);
  // etcd may grant more than asked (its minimum TTL), never less.  A new
  // lease always carries this lock: sent + ttl_ms < its alive_until.
  const int64_t alive_until = LeaseServingUntil(sent, std::max(seconds, granted));
  *lease = id;
  MutexLock l(&mu_);
  // Leases no lock can go under any more are forgotten (a node that used
  // many TTLs once keeps no slot for each).
  const int64_t now = NowSteadyMs();
  for (auto it = lock_leases_.begin(); it != lock_leases_.end();) {
    it = it->second.alive_until_ms <= now ? lock_leases_.erase(it) : std::next(it);
  }
  LockLeaseSlot& slot = lock_leases_[seconds];
  if (alive_until > slot.alive_until_ms) slot = LockLeaseSlot{id, alive_until};
  return true;
}

// The grant: see the header.  *unknown is set when etcd may have applied a
// grant it did not confirm (the outcome is unknown).
FencedGrant EtcdArbiter::Grant(std::string_view key, std::string_view value, int64_t ttl_ms,
                               bool* unknown) {
  FencedGrant g;
  *unknown = false;
  const int64_t deadline = Deadline();
  int64_t lease = 0;
  if (!LockLease(ttl_ms, deadline, &lease)) {
    txns_failed_.fetch_add(1, std::memory_order_relaxed);
    *unknown = true;
    return g;
  }
  const std::string lock = LockKey(key), fence_key = FenceKey(key);
  const uint64_t nonce = GrantNonce();
  bool sent_before = false;
  for (;;) {
    const Offset off = CurrentOffset();
    EtcdCompare absent;
    absent.key = lock;
    absent.target = EtcdCompare::Target::kCreate;
    absent.number = 0;
    EtcdCompare same_offset;
    same_offset.key = OffsetKey();
    same_offset.target = EtcdCompare::Target::kMod;
    same_offset.number = off.mod_revision;
    EtcdTxnResult r;
    const EtcdStatus s = client_.Txn(
        {absent, same_offset},
        {EtcdOp::Put(lock, std::string(value), lease),
         EtcdOp::Put(fence_key, FenceValue(off.value, nonce), lease)},
        {EtcdOp::Range(lock), EtcdOp::Range(fence_key), EtcdOp::Range(OffsetKey())}, deadline, &r);
    if (s.resent) sent_before = true;  // the client sent it again after a lost answer
    if (!s.ok()) {
      txns_failed_.fetch_add(1, std::memory_order_relaxed);
      if (s.sent) sent_before = true;
      // Not known to be applied: a retry within the deadline is safe, as a
      // grant that did land is recognised below by its value.
      if (s.code == EtcdStatus::Code::kUnavailable && NowSteadyMs() < deadline) continue;
      *unknown = true;  // the lease stays: if the grant landed, it must live its TTL
      return g;
    }
    if (r.succeeded) {
      g.outcome = SetNxOutcome::kInserted;
      g.fence = off.value + static_cast<uint64_t>(r.revision);
      break;
    }
    const auto& held = r.responses.size() > 0 ? r.responses[0].kvs : std::vector<EtcdKv>{};
    if (!held.empty()) {
      if (sent_before && held[0].value == value) {
        // An earlier attempt of this call may have landed.  It is
        // recognised for certain by the nonce it wrote into the fence key
        // (with the offset it used); anything else holding an equal value
        // is another caller's grant, possibly under the same shared lease.
        uint64_t held_offset = 0;
        const auto& fk = r.responses.size() > 1 ? r.responses[1].kvs : std::vector<EtcdKv>{};
        if (!fk.empty() && held[0].lease == lease && ParseFence(fk[0].value, &held_offset) &&
            fk[0].value == FenceValue(held_offset, nonce)) {
          g.outcome = SetNxOutcome::kInserted;
          g.fence = held_offset + static_cast<uint64_t>(held[0].create_revision);
          break;
        }
        *unknown = true;
        return g;
      }
      g.outcome = SetNxOutcome::kExists;
      return g;
    }
    // The lock is free: the offset moved (or was never read).  Read it
    // again and retry.
    if (!EnsureOffset(deadline, /*may_raise=*/false)) {
      txns_failed_.fetch_add(1, std::memory_order_relaxed);
      *unknown = true;
      return g;
    }
  }
  grants_.fetch_add(1, std::memory_order_relaxed);
  observe_fence_(g.fence);
  // The mirror, for reads and for the waiters woken by its replication;
  // it carries the fence to every member's fence clock.
  store_->MirrorLock(key, value, ttl_ms, g.fence);
  return g;
}

Routed<SetNxOutcome> EtcdArbiter::SetNx(std::string_view key, std::string_view value,
                                        int64_t ttl_ms) {
  const Routed<FencedGrant> g = SetNxFenced(key, value, ttl_ms);
  if (g.where != Routed<FencedGrant>::Where::kOwner) return Routed<SetNxOutcome>::Unreachable();
  return Routed<SetNxOutcome>::Owner(g.outcome.outcome);
}

Routed<FencedGrant> EtcdArbiter::SetNxFenced(std::string_view key, std::string_view value,
                                             int64_t ttl_ms) {
  if (!ArgsOk(key, value, ttl_ms)) {
    return Routed<FencedGrant>::Owner(FencedGrant{SetNxOutcome::kInvalidArgument, 0});
  }
  if (!Serving()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<FencedGrant>::Unreachable();
  }
  bool unknown = false;
  FencedGrant g = Grant(key, value, ttl_ms, &unknown);
  if (unknown || (g.outcome != SetNxOutcome::kInserted && g.outcome != SetNxOutcome::kExists)) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<FencedGrant>::Unreachable();
  }
  return Routed<FencedGrant>::Owner(g);
}

Routed<DelIfEqOutcome> EtcdArbiter::DelIfEq(std::string_view key, std::string_view token) {
  if (!ArgsOk(key, token, 0)) return Routed<DelIfEqOutcome>::Owner(DelIfEqOutcome::kInvalidArgument);
  if (!Serving()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<DelIfEqOutcome>::Unreachable();
  }
  const std::string lock = LockKey(key);
  EtcdTxnResult r;
  bool resent = false;
  if (!TxnUntil({ValueIs(lock, token)},
                {EtcdOp::Delete(lock, /*prev_kv=*/true), EtcdOp::Delete(FenceKey(key))}, {},
                Deadline(), &r, &resent)) {
    return Routed<DelIfEqOutcome>::Unreachable();
  }
  if (!r.succeeded) {
    // Sent again after an attempt whose answer was lost: if that attempt
    // released the lock, this one finds nothing.  "Not matched" would tell
    // the holder it had lost the lock; the truth is "unknown".
    if (resent) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return Routed<DelIfEqOutcome>::Unreachable();
    }
    return Routed<DelIfEqOutcome>::Owner(DelIfEqOutcome::kNotMatched);
  }
  // The lease stays: other locks may be under it, and it expires by itself.
  store_->DelIfEqLocal(key, token);
  return Routed<DelIfEqOutcome>::Owner(DelIfEqOutcome::kDeleted);
}

Routed<ExpireIfEqOutcome> EtcdArbiter::ExpireIfEq(std::string_view key, std::string_view token,
                                                  int64_t ttl_ms) {
  if (!ArgsOk(key, token, 0)) {
    return Routed<ExpireIfEqOutcome>::Owner(ExpireIfEqOutcome::kInvalidArgument);
  }
  if (ttl_ms <= 0) {
    // As Redis's EXPIRE with a time not in the future: the lock goes.
    const Routed<DelIfEqOutcome> d = DelIfEq(key, token);
    if (d.where != Routed<DelIfEqOutcome>::Where::kOwner) {
      return Routed<ExpireIfEqOutcome>::Unreachable();
    }
    return Routed<ExpireIfEqOutcome>::Owner(d.outcome == DelIfEqOutcome::kDeleted
                                                ? ExpireIfEqOutcome::kApplied
                                                : ExpireIfEqOutcome::kNotMatched);
  }
  if (!Serving()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<ExpireIfEqOutcome>::Unreachable();
  }
  const int64_t deadline = Deadline();
  int64_t lease = 0;
  if (!LockLease(ttl_ms, deadline, &lease)) {
    txns_failed_.fetch_add(1, std::memory_order_relaxed);
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<ExpireIfEqOutcome>::Unreachable();
  }
  const std::string lock = LockKey(key);
  // The lock moves to a new lease; its create revision, and so its fence,
  // stays.  The fence key keeps its value (ignore_value).
  EtcdOp fence_put = EtcdOp::Put(FenceKey(key), "", lease);
  fence_put.ignore_value = true;
  EtcdTxnResult r;
  // Retried as it is: a refresh that landed is one again.
  if (!TxnUntil({ValueIs(lock, token)},
                {EtcdOp::Put(lock, std::string(token), lease), fence_put, EtcdOp::Range(lock),
                 EtcdOp::Range(FenceKey(key))},
                {}, deadline, &r)) {
    return Routed<ExpireIfEqOutcome>::Unreachable();
  }
  if (!r.succeeded) {
    return Routed<ExpireIfEqOutcome>::Owner(ExpireIfEqOutcome::kNotMatched);
  }
  // The old lease expires by itself (nothing is attached to it any more).
  uint64_t offset = 0;
  if (r.responses.size() == 4 && !r.responses[2].kvs.empty() && !r.responses[3].kvs.empty() &&
      ParseFence(r.responses[3].kvs[0].value, &offset)) {
    store_->MirrorLock(key, token, ttl_ms,
                       offset + static_cast<uint64_t>(r.responses[2].kvs[0].create_revision));
  }
  return Routed<ExpireIfEqOutcome>::Owner(ExpireIfEqOutcome::kApplied);
}

EtcdHold EtcdArbiter::Holds(std::string_view guard_key, std::string_view token) {
  EtcdHold h;
  if (!Serving()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return h;  // kUnreachable
  }
  const std::string lock = LockKey(guard_key);
  EtcdTxnResult r;
  if (!TxnUntil({ValueIs(lock, token)}, {EtcdOp::Range(lock), EtcdOp::Range(FenceKey(guard_key))},
                {}, Deadline(), &r)) {
    return h;  // kUnreachable
  }
  uint64_t offset = 0;
  if (!r.succeeded || r.responses.size() < 2 || r.responses[0].kvs.empty() ||
      r.responses[1].kvs.empty() || !ParseFence(r.responses[1].kvs[0].value, &offset)) {
    h.kind = EtcdHold::Kind::kNotHeld;
    return h;
  }
  h.kind = EtcdHold::Kind::kHolds;
  h.fence = offset + static_cast<uint64_t>(r.responses[0].kvs[0].create_revision);
  return h;
}

Routed<LockStateReply> EtcdArbiter::LockState(std::string_view key, std::string_view token) {
  LockStateReply reply;
  if (!ArgsOk(key, token, 0)) {
    reply.outcome = LockStateOutcome::kInvalidArgument;
    return Routed<LockStateReply>::Owner(reply);
  }
  if (!Serving()) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return Routed<LockStateReply>::Unreachable();
  }
  const std::string lock = LockKey(key);
  EtcdTxnResult r;
  if (!TxnUntil({}, {EtcdOp::Range(lock), EtcdOp::Range(FenceKey(key))}, {}, Deadline(), &r)) {
    return Routed<LockStateReply>::Unreachable();
  }
  if (r.responses.empty() || r.responses[0].kvs.empty()) {
    return Routed<LockStateReply>::Owner(reply);  // kAbsent
  }
  const EtcdKv& kv = r.responses[0].kvs[0];
  reply.outcome = kv.value == token ? LockStateOutcome::kHeld : LockStateOutcome::kOther;
  uint64_t offset = 0;
  if (r.responses.size() > 1 && !r.responses[1].kvs.empty() &&
      ParseFence(r.responses[1].kvs[0].value, &offset)) {
    reply.fence = offset + static_cast<uint64_t>(kv.create_revision);
  }
  // The time left is the lease's, which etcd counts in seconds; the mirror
  // has the exact TTL the holder asked for.
  const LockStateReply mirror = store_->LockStateLocal(key, token);
  reply.pttl_ms = kv.lease == 0 ? -1
                  : (mirror.outcome == reply.outcome && mirror.pttl_ms >= 0) ? mirror.pttl_ms
                                                                             : 0;
  return Routed<LockStateReply>::Owner(reply);
}

void EtcdArbiter::Counters(std::vector<std::pair<std::string, uint64_t>>* out) const {
  out->emplace_back("etcd_serving", Serving() ? 1u : 0u);
  out->emplace_back("etcd_grants", grants_.load());
  out->emplace_back("etcd_refused", refused_.load());
  out->emplace_back("etcd_txns_failed", txns_failed_.load());
  out->emplace_back("etcd_lease_renewals", lease_renewals_.load());
  out->emplace_back("etcd_lease_lost", lease_lost_.load());
  out->emplace_back("etcd_offset_raised", offset_raised_.load());
  out->emplace_back("etcd_lock_leases", lock_leases_granted_.load());
  out->emplace_back("etcd_fence_offset", CurrentOffset().value);
  MutexLock l(&mu_);
  out->emplace_back("etcd_members", members_.size());
  out->emplace_back("etcd_members_revision", static_cast<uint64_t>(members_revision_));
}

}  // namespace cluster
}  // namespace ephpm
