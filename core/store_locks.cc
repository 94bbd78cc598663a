// The lock decisions: set_nx, del_if_eq and the fenced operations on a
// guard key (set_if_eq, del_if_guard_eq, expire_if_guard_eq), and incr_by's
// routing.  Each asks the replicator where it is decided, and decides here
// only when that is this node (invariant 3 in docs/ARCHITECTURE.md).

#include "store_impl.h"

namespace ephpm {

SetNxOutcome Store::Impl::SetNx(std::string_view key, std::string_view value, int64_t ttl_ms) {
  return Decided<SetNxOutcome>(
      [&](Replicator& r) { return r.RouteSetNx(key, value, ttl_ms); },
      [&] { return SetNxLocal(key, value, ttl_ms); });
}

SetNxOutcome Store::Impl::SetNxEphemeral(std::string_view key, std::string_view value,
                                         int64_t ttl_ms) {
  return Decided<SetNxOutcome>(
      [&](Replicator& r) { return r.RouteSetNxEphemeral(key, value, ttl_ms); },
      [&] { return SetNxLocal(key, value, ttl_ms, /*ephemeral=*/true); });
}

SetNxOutcome Store::Impl::SetNxLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                                     bool ephemeral) {
  return TakeLocal(key, value, ttl_ms, ephemeral, /*fenced=*/false).outcome;
}

FencedGrant Store::Impl::TakeLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                                   bool ephemeral, bool fenced) {
  FencedGrant g;
  if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0) {
    g.outcome = SetNxOutcome::kInvalidArgument;
    return g;
  }
  Prepared p = PrepareForPut(value);  // copied under the lock (a spare buffer if one fits)
  p.ephemeral = ephemeral;
  const HashedKey hk = HashKey(key);
  g.outcome = Mutate<SetNxOutcome>(
      hk, [&](Shard& s, int64_t now, bool* changed,
              uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        int64_t expires_at = 0;
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
          return SetNxOutcome::kInvalidArgument;
        }
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it != s.map.end()) return SetNxOutcome::kExists;
        // Drawn under the key's lock, so one name's grants are ordered as
        // their fences are.  A grant refused for memory wastes one fence.
        if (fenced) p.fence = NextFence();
        // With a TTL this is a lock: pinned until it expires or is replaced.
        return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/true, now, shortfall, changed) ==
                       Status::kOk
                   ? SetNxOutcome::kInserted
                   : SetNxOutcome::kOutOfMemory;
      });
  if (g.outcome == SetNxOutcome::kInserted) g.fence = p.fence;
  return g;
}

DelIfEqOutcome Store::Impl::DelIfEq(std::string_view key, std::string_view token) {
  return Decided<DelIfEqOutcome>(
      [&](Replicator& r) { return r.RouteDelIfEq(key, token); },
      [&] { return DelIfEqLocal(key, token); });
}

DelIfEqOutcome Store::Impl::DelIfEqLocal(std::string_view key, std::string_view token) {
  if (!KeyOk(key) || !ValueOk(token)) return DelIfEqOutcome::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  // The compare and the removal are one step under the write lock: no
  // other writer can replace the value between them.
  return Mutate<DelIfEqOutcome>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return DelIfEqOutcome::kNotMatched;
        if (it->second.type != ValueType::kString) return DelIfEqOutcome::kWrongType;
        if (!EqualsLocked(it->second, token)) return DelIfEqOutcome::kNotMatched;
        DeleteLocked(s, it, key);
        *changed = true;
        return DelIfEqOutcome::kDeleted;
      });
}

SetIfEqOutcome Store::Impl::SetIfEq(std::string_view guard_key, std::string_view token,
                                    std::string_view key, std::string_view value, int64_t ttl_ms) {
  return Decided<SetIfEqOutcome>(
      [&](Replicator& r) { return r.RouteSetIfEq(guard_key, token, key, value, ttl_ms); },
      [&] { return SetIfEqLocal(guard_key, token, key, value, ttl_ms); });
}

SetIfEqOutcome Store::Impl::SetIfEqLocal(std::string_view guard_key, std::string_view token,
                                         std::string_view key, std::string_view value,
                                         int64_t ttl_ms) {
  if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token) || !ValueOk(value) || ttl_ms < 0) {
    return SetIfEqOutcome::kInvalidArgument;
  }
  Prepared p = Prepare(value);
  const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
  Shard& g = ShardFor(hg);
  Shard& s = ShardFor(hk);
  return WithEviction<SetIfEqOutcome>([&](uint64_t* shortfall) {
    PairWrite w(this, &g, &s);
    return SetIfEqLocked(g, s, hg, hk, token, &p, ttl_ms, shortfall, &w.changed_a, &w.changed_b);
  });
}

DelIfGuardEqOutcome Store::Impl::DelIfGuardEq(std::string_view guard_key, std::string_view token,
                                              std::string_view key) {
  return Decided<DelIfGuardEqOutcome>(
      [&](Replicator& r) { return r.RouteDelIfGuardEq(guard_key, token, key); },
      [&] { return DelIfGuardEqLocal(guard_key, token, key); });
}

DelIfGuardEqOutcome Store::Impl::DelIfGuardEqLocal(std::string_view guard_key,
                                                   std::string_view token, std::string_view key) {
  if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token)) {
    return DelIfGuardEqOutcome::kInvalidArgument;
  }
  const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
  Shard& g = ShardFor(hg);
  Shard& s = ShardFor(hk);
  // The compare on the guard and the removal are one step under both
  // write locks: the guard cannot change hands between them.
  PairWrite w(this, &g, &s);
  const int64_t now = clock_->NowMs();
  DelIfGuardEqOutcome refused{};
  if (GuardRefuses(GuardHoldsLocked(g, hg, token, now, &w.changed_a), &refused)) return refused;
  auto it = FindLiveForWriteLocked(s, hk, now, &w.changed_b);
  if (it == s.map.end()) return DelIfGuardEqOutcome::kAbsent;
  DeleteLocked(s, it, key);
  w.changed_b = true;
  return DelIfGuardEqOutcome::kDeleted;
}

ExpireIfGuardEqOutcome Store::Impl::ExpireIfGuardEq(std::string_view guard_key,
                                                    std::string_view token, std::string_view key,
                                                    int64_t ttl_ms) {
  return Decided<ExpireIfGuardEqOutcome>(
      [&](Replicator& r) { return r.RouteExpireIfGuardEq(guard_key, token, key, ttl_ms); },
      [&] { return ExpireIfGuardEqLocal(guard_key, token, key, ttl_ms); });
}

ExpireIfGuardEqOutcome Store::Impl::ExpireIfGuardEqLocal(std::string_view guard_key,
                                                         std::string_view token,
                                                         std::string_view key, int64_t ttl_ms) {
  if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token) || ttl_ms < 0) {
    return ExpireIfGuardEqOutcome::kInvalidArgument;
  }
  const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
  Shard& g = ShardFor(hg);
  Shard& s = ShardFor(hk);
  PairWrite w(this, &g, &s);
  const int64_t now = clock_->NowMs();
  int64_t at = 0;
  if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &at)) return ExpireIfGuardEqOutcome::kInvalidArgument;
  ExpireIfGuardEqOutcome refused{};
  if (GuardRefuses(GuardHoldsLocked(g, hg, token, now, &w.changed_a), &refused)) return refused;
  auto it = FindLiveForWriteLocked(s, hk, now, &w.changed_b);
  if (it == s.map.end()) return ExpireIfGuardEqOutcome::kAbsent;
  if (SetExpiryLocked(s, it, at) != Status::kOk) return ExpireIfGuardEqOutcome::kOutOfMemory;
  PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
  w.changed_b = true;
  return ExpireIfGuardEqOutcome::kApplied;
}

Status Store::Impl::IncrBy(std::string_view key, int64_t delta, int64_t* result) {
  return Route(
      options_.replicator, [&](Replicator& r) { return r.RouteIncrBy(key, delta); },
      Status::kOwnerUnreachable,
      [&](const IncrByReply& reply) {
        if (reply.status == Status::kOk) *result = reply.value;
        return reply.status;
      },
      [&] { return IncrByLocal(key, delta, result); });
}

Store::Impl::Guard Store::Impl::GuardHoldsLocked(Shard& g, const HashedKey& hg,
                                                 std::string_view token, int64_t now,
                                                 bool* changed) {
  auto guard = FindLiveForWriteLocked(g, hg, now, changed);
  if (guard == g.map.end()) return Guard::kNotMatched;
  if (guard->second.type != ValueType::kString) return Guard::kWrongType;
  return EqualsLocked(guard->second, token) ? Guard::kHolds : Guard::kNotMatched;
}

SetIfEqOutcome Store::Impl::SetIfEqLocked(Shard& g, Shard& s, const HashedKey& hg,
                                          const HashedKey& hk, std::string_view token, Prepared* p,
                                          int64_t ttl_ms, uint64_t* shortfall, bool* changed_g,
                                          bool* changed_s) {
  const int64_t now = clock_->NowMs();
  int64_t expires_at = 0;
  if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
    return SetIfEqOutcome::kInvalidArgument;
  }
  SetIfEqOutcome refused{};
  if (GuardRefuses(GuardHoldsLocked(g, hg, token, now, changed_g), &refused)) return refused;
  auto it = FindLiveForWriteLocked(s, hk, now, changed_s);
  if (PutLocked(s, it, hk, p, expires_at, /*pinned=*/false, now, shortfall, changed_s) !=
      Status::kOk) {
    return SetIfEqOutcome::kOutOfMemory;
  }
  return SetIfEqOutcome::kWritten;
}

// --- locks with fencing tokens ---------------------------------------------

namespace {
// How far ahead of the last grant the log's fence mark reserves, in the
// clock's units (ms << 16): a start resumes past it, so a restart within
// this time after a grant still grants above it even if the wall clock has
// not moved past it.  One mark is logged per this much time of grants.
constexpr uint64_t kFenceReserve = uint64_t{10'000} << 16;
}  // namespace

uint64_t Store::Impl::NextFence() {
  const uint64_t cluster =
      options_.replicator != nullptr ? options_.replicator->NextStamp().hlc : 0;
  const int64_t now = clock_->NowMs();
  const uint64_t physical = now > 0 ? static_cast<uint64_t>(now) << 16 : 0;
  MutexLock l(&fence_mu_);
  const uint64_t next = std::max({fence_last_ + 1, physical, cluster});
  fence_last_ = next;
  if (engine_ != nullptr && next > fence_reserved_) {
    fence_reserved_ = next + kFenceReserve;
    Mutation m;
    m.kind = Mutation::Kind::kFenceMark;
    m.fence = fence_reserved_;
    LogLocked(m);
  }
  return next;
}

Status Store::Impl::MirrorLock(std::string_view key, std::string_view value, int64_t ttl_ms,
                              uint64_t fence) {
  if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0 || fence == 0 || fence > kMaxFence) {
    return Status::kInvalidArgument;
  }
  ObserveFence(fence);
  Prepared p = Prepare(value);
  p.fence = fence;
  const HashedKey hk = HashKey(key);
  return Mutate<Status>(
      hk, [&](Shard& s, int64_t now, bool* changed,
              uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        int64_t expires_at = 0;
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) return Status::kInvalidArgument;
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/ttl_ms > 0, now, shortfall,
                         changed);
      });
}

uint64_t Store::Impl::FenceClock() const {
  MutexLock l(&fence_mu_);
  return std::max(fence_last_, fence_reserved_);
}

void Store::Impl::ObserveFence(uint64_t fence) {
  MutexLock l(&fence_mu_);
  fence_last_ = std::max(fence_last_, fence);
}

FencedGrant Store::Impl::SetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                                     bool ephemeral) {
  return Route(
      options_.replicator,
      [&](Replicator& r) { return r.RouteSetNxFenced(key, value, ttl_ms, ephemeral); },
      FencedGrant{SetNxOutcome::kOwnerUnreachable, 0},
      [](const FencedGrant& g) { return g; },
      [&] { return SetNxFencedLocal(key, value, ttl_ms, ephemeral); });
}

FencedGrant Store::Impl::SetNxFencedLocal(std::string_view key, std::string_view value,
                                          int64_t ttl_ms, bool ephemeral) {
  return TakeLocal(key, value, ttl_ms, ephemeral, /*fenced=*/true);
}

ExpireIfEqOutcome Store::Impl::ExpireIfEq(std::string_view key, std::string_view token,
                                          int64_t ttl_ms) {
  return Decided<ExpireIfEqOutcome>(
      [&](Replicator& r) { return r.RouteExpireIfEq(key, token, ttl_ms); },
      [&] { return ExpireIfEqLocal(key, token, ttl_ms); });
}

ExpireIfEqOutcome Store::Impl::ExpireIfEqLocal(std::string_view key, std::string_view token,
                                               int64_t ttl_ms) {
  if (!KeyOk(key) || !ValueOk(token)) return ExpireIfEqOutcome::kInvalidArgument;
  const HashedKey hk = HashKey(key);
  // The compare and the new expiry are one step under the write lock: a
  // lock that expired and was taken by another holder is never extended.
  return Mutate<ExpireIfEqOutcome>(
      hk, [&](Shard& s, int64_t now, bool* changed, uint64_t*) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        int64_t at = now;  // ttl_ms <= 0: a time not in the future removes it
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &at)) {
          return ExpireIfEqOutcome::kInvalidArgument;
        }
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (it == s.map.end()) return ExpireIfEqOutcome::kNotMatched;
        if (it->second.type != ValueType::kString) return ExpireIfEqOutcome::kWrongType;
        if (!EqualsLocked(it->second, token)) return ExpireIfEqOutcome::kNotMatched;
        return ExpireAtLocked(s, it, key, at, now, changed) == Status::kOk
                   ? ExpireIfEqOutcome::kApplied
                   : ExpireIfEqOutcome::kOutOfMemory;
      });
}

SetFencedOutcome Store::Impl::SetFenced(std::string_view key, std::string_view value,
                                        uint64_t fence, int64_t ttl_ms) {
  return Decided<SetFencedOutcome>(
      [&](Replicator& r) { return r.RouteSetFenced(key, value, fence, ttl_ms); },
      [&] { return SetFencedLocal(key, value, fence, ttl_ms); });
}

SetFencedOutcome Store::Impl::SetFencedLocal(std::string_view key, std::string_view value,
                                             uint64_t fence, int64_t ttl_ms) {
  // Fences are positive int64s (PHP's int, RESP's integer): a larger one
  // could only come from a bug, and would push the cluster's clock out of
  // its range.
  if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0 || fence == 0 || fence > kMaxFence) {
    return SetFencedOutcome::kInvalidArgument;
  }
  Prepared p = Prepare(value);
  p.fence = fence;
  const HashedKey hk = HashKey(key);
  // The check and the write are one step under the key's write lock: a
  // writer with an older fence cannot slip in between.
  return Mutate<SetFencedOutcome>(
      hk, [&](Shard& s, int64_t now, bool* changed,
              uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
        int64_t expires_at = 0;
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
          return SetFencedOutcome::kInvalidArgument;
        }
        auto it = FindLiveForWriteLocked(s, hk, now, changed);
        if (fence < RecordedFenceLocked(s, hk, it)) return SetFencedOutcome::kStale;
        return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/false, now, shortfall, changed) ==
                       Status::kOk
                   ? SetFencedOutcome::kWritten
                   : SetFencedOutcome::kOutOfMemory;
      });
}

LockStateReply Store::Impl::LockState(std::string_view key, std::string_view token) const {
  LockStateReply unreachable;
  unreachable.outcome = LockStateOutcome::kOwnerUnreachable;
  return Route(
      options_.replicator, [&](Replicator& r) { return r.RouteLockState(key, token); },
      unreachable, [](const LockStateReply& r) { return r; },
      [&] { return LockStateLocal(key, token); });
}

LockStateReply Store::Impl::LockStateLocal(std::string_view key, std::string_view token) const {
  LockStateReply r;
  if (!KeyOk(key) || !ValueOk(token)) {
    r.outcome = LockStateOutcome::kInvalidArgument;
    return r;
  }
  const HashedKey hk = HashKey(key);
  Shard& s = ShardFor(hk);
  ReaderLock l(&s.mu);
  auto it = s.map.find(hk);
  const int64_t now = clock_->NowMs();
  if (it == s.map.end() || IsExpired(it->second, now)) return r;  // kAbsent
  const Entry& e = it->second;
  r.fence = e.fence;
  r.pttl_ms = e.expires_at == 0 ? -1 : e.expires_at - now;
  const bool held = !token.empty() && e.type == ValueType::kString && EqualsLocked(e, token);
  r.outcome = held ? LockStateOutcome::kHeld : LockStateOutcome::kOther;
  return r;
}

}  // namespace ephpm
