// The public Store: Create, and the forwarding of every operation to
// Store::Impl (store_impl.h) behind OomGuard, so that an allocation failure
// never leaves the store.  Also the free functions of store.h.

#include "ephpm/store.h"

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "ephpm/route_deferral.h"
#include "store_impl.h"

namespace ephpm {

const char* StatusName(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kNotFound: return "not found";
    case Status::kOutOfMemory: return "out of memory";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kOwnerUnreachable: return "owner unreachable";
    case Status::kWrongType: return "wrong type";
    case Status::kNotInteger: return "not an integer";
    case Status::kOverflow: return "integer overflow";
    case Status::kNotFloat: return "not a float";
    case Status::kNanOrInfinity: return "NaN or infinity";
    case Status::kPersistenceError: return "persistence error";
  }
  return "unknown status";
}

std::string ValidateOptions(const StoreOptions& o) {
  if (o.shards == 0 || o.shards > 65536 || (o.shards & (o.shards - 1)) != 0) {
    return "shards must be a power of two between 1 and 65536";
  }
  if (o.databases == 0 || o.databases > 1024 || o.shards * o.databases > 65536) {
    return "databases must be between 1 and 1024, with shards * databases at most 65536";
  }
  if (o.eviction_samples == 0 || o.eviction_samples > 64) {
    return "eviction_samples must be between 1 and 64";
  }
  if (o.compression == Compression::kZstd &&
      (o.compression_level < -7 || o.compression_level > 22)) {
    return "compression_level must be between -7 and 22";
  }
  if (o.max_value_size == 0) return "max_value_size must be positive";
  if (o.max_value_size > kMaxValueSizeLimit) return "max_value_size must be at most 2G";
  if (o.sweep_interval_ms < 0) return "sweep_interval_ms must not be negative";
  if (o.sweep_budget == 0) return "sweep_budget must be positive";
  return "";
}

// ---------------------------------------------------------------------------
// Store: forwards to Impl, turning allocation failure into kOutOfMemory.  An
// exception leaves the store unchanged: each operation allocates before it
// changes anything (see PutLocked).

namespace {

template <typename R, typename F>
R OomGuard(R oom, F f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return oom;
  }
}

}  // namespace

std::unique_ptr<Store> Store::Create(const StoreOptions& options, std::string* error) {
  std::string msg = ValidateOptions(options);
  if (!msg.empty()) {
    if (error != nullptr) *error = std::move(msg);
    return nullptr;
  }
#if !defined(EPHPM_TSAN)
  // Debian's abseil is built with its debug checks, so absl::Mutex records
  // every lock in a deadlock graph under one process-wide spinlock: about
  // 40% of a get, and a point where all shards' locks meet.  Shard locks are
  // never nested except in index order (PairWrite, MultiLock), so the graph
  // has nothing to find.  This is a process-wide abseil setting.
  static std::once_flag no_deadlock_graph;
  std::call_once(no_deadlock_graph, [] {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  });
#endif
  auto impl = std::make_unique<Impl>(options);
  if (!options.persistence.data_dir.empty() && !impl->OpenPersistence(&msg)) {
    if (error != nullptr) *error = std::move(msg);
    return nullptr;
  }
  impl->StartSweeper();
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

const StoreOptions& Store::options() const { return impl_->options(); }

Status Store::Get(std::string_view key, std::string* value) const {
  return OomGuard(Status::kOutOfMemory, [&] {
    return impl_->GetInto(key, [value](size_t n) {
      value->resize(n);
      return value->data();
    });
  });
}

void Store::Prefetch(std::string_view key, uint32_t db, PrefetchStep step) const {
  impl_->Prefetch(key, db, step);
}

Status Store::GetInto(std::string_view key, absl::FunctionRef<char*(size_t)> alloc) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->GetInto(key, alloc); });
}

Status Store::GetIntoBuffer(std::string_view key, char* buf, size_t capacity,
                            uint64_t* length) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->GetIntoBuffer(key, buf, capacity, length); });
}

Status Store::Set(std::string_view key, std::string_view value, int64_t ttl_ms) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Set(key, value, ttl_ms); });
}

SetNxOutcome Store::SetNx(std::string_view key, std::string_view value, int64_t ttl_ms) {
  return OomGuard(SetNxOutcome::kOutOfMemory, [&] { return impl_->SetNx(key, value, ttl_ms); });
}

SetNxOutcome Store::SetNxEphemeral(std::string_view key, std::string_view value,
                                  int64_t ttl_ms) {
  return OomGuard(SetNxOutcome::kOutOfMemory,
                  [&] { return impl_->SetNxEphemeral(key, value, ttl_ms); });
}

SetNxOutcome Store::SetNxEphemeralLocal(std::string_view key, std::string_view value,
                                       int64_t ttl_ms) {
  return OomGuard(SetNxOutcome::kOutOfMemory,
                  [&] { return impl_->SetNxLocal(key, value, ttl_ms, /*ephemeral=*/true); });
}

Status Store::WritesAllowed() const { return impl_->WritesAllowed(); }

Status Store::WaitDurable() { return impl_->WaitDurable(); }

Status Store::Rewrite(bool background, std::string* message) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Rewrite(background, message); });
}

PersistenceInfo Store::persistence_info() const { return impl_->persistence_info(); }

SetNxOutcome Store::SetNxLocal(std::string_view key, std::string_view value, int64_t ttl_ms) {
  return OomGuard(SetNxOutcome::kOutOfMemory,
                  [&] { return impl_->SetNxLocal(key, value, ttl_ms); });
}

Status Store::Del(std::string_view key, int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Del(key, removed); });
}

DelIfEqOutcome Store::DelIfEq(std::string_view key, std::string_view token) {
  return OomGuard(DelIfEqOutcome::kOutOfMemory, [&] { return impl_->DelIfEq(key, token); });
}

DelIfEqOutcome Store::DelIfEqLocal(std::string_view key, std::string_view token) {
  return OomGuard(DelIfEqOutcome::kOutOfMemory,
                  [&] { return impl_->DelIfEqLocal(key, token); });
}

SetIfEqOutcome Store::SetIfEq(std::string_view guard_key, std::string_view token,
                             std::string_view key, std::string_view value, int64_t ttl_ms) {
  return OomGuard(SetIfEqOutcome::kOutOfMemory,
                  [&] { return impl_->SetIfEq(guard_key, token, key, value, ttl_ms); });
}

SetIfEqOutcome Store::SetIfEqLocal(std::string_view guard_key, std::string_view token,
                                  std::string_view key, std::string_view value,
                                  int64_t ttl_ms) {
  return OomGuard(SetIfEqOutcome::kOutOfMemory,
                  [&] { return impl_->SetIfEqLocal(guard_key, token, key, value, ttl_ms); });
}

DelIfGuardEqOutcome Store::DelIfGuardEq(std::string_view guard_key, std::string_view token,
                                       std::string_view key) {
  return OomGuard(DelIfGuardEqOutcome::kOutOfMemory,
                  [&] { return impl_->DelIfGuardEq(guard_key, token, key); });
}

DelIfGuardEqOutcome Store::DelIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                            std::string_view key) {
  return OomGuard(DelIfGuardEqOutcome::kOutOfMemory,
                  [&] { return impl_->DelIfGuardEqLocal(guard_key, token, key); });
}

ExpireIfGuardEqOutcome Store::ExpireIfGuardEq(std::string_view guard_key,
                                              std::string_view token, std::string_view key,
                                              int64_t ttl_ms) {
  return OomGuard(ExpireIfGuardEqOutcome::kOutOfMemory,
                  [&] { return impl_->ExpireIfGuardEq(guard_key, token, key, ttl_ms); });
}

ExpireIfGuardEqOutcome Store::ExpireIfGuardEqLocal(std::string_view guard_key,
                                                   std::string_view token, std::string_view key,
                                                   int64_t ttl_ms) {
  return OomGuard(ExpireIfGuardEqOutcome::kOutOfMemory,
                  [&] { return impl_->ExpireIfGuardEqLocal(guard_key, token, key, ttl_ms); });
}

Status Store::Exists(std::string_view key, bool* exists) const {
  return impl_->Exists(key, exists);
}

Status Store::Touch(std::string_view key, bool* exists) const {
  return impl_->Touch(key, exists);
}

Status Store::IncrBy(std::string_view key, int64_t delta, int64_t* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->IncrBy(key, delta, result); });
}

Status Store::IncrByLocal(std::string_view key, int64_t delta, int64_t* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->IncrByLocal(key, delta, result); });
}

Status Store::GetFromOwner(std::string_view key, std::string* value) const {
  return OomGuard(Status::kOutOfMemory, [&] {
    return Route(
        impl_->options().replicator, [&](Replicator& r) { return r.RouteGet(key); },
        Status::kOwnerUnreachable,
        [&](GetReply& reply) {
          if (reply.status == Status::kOk) *value = std::move(reply.value);
          return reply.status;
        },
        [&] { return Get(key, value); });
  });
}

FencedGrant Store::SetNxFenced(std::string_view key, std::string_view value, int64_t ttl_ms,
                               bool ephemeral) {
  return OomGuard(FencedGrant{SetNxOutcome::kOutOfMemory, 0},
                  [&] { return impl_->SetNxFenced(key, value, ttl_ms, ephemeral); });
}

FencedGrant Store::SetNxFencedLocal(std::string_view key, std::string_view value, int64_t ttl_ms,
                                    bool ephemeral) {
  return OomGuard(FencedGrant{SetNxOutcome::kOutOfMemory, 0},
                  [&] { return impl_->SetNxFencedLocal(key, value, ttl_ms, ephemeral); });
}

ExpireIfEqOutcome Store::ExpireIfEq(std::string_view key, std::string_view token,
                                    int64_t ttl_ms) {
  return OomGuard(ExpireIfEqOutcome::kOutOfMemory,
                  [&] { return impl_->ExpireIfEq(key, token, ttl_ms); });
}

ExpireIfEqOutcome Store::ExpireIfEqLocal(std::string_view key, std::string_view token,
                                         int64_t ttl_ms) {
  return OomGuard(ExpireIfEqOutcome::kOutOfMemory,
                  [&] { return impl_->ExpireIfEqLocal(key, token, ttl_ms); });
}

SetFencedOutcome Store::SetFenced(std::string_view key, std::string_view value, uint64_t fence,
                                  int64_t ttl_ms) {
  return OomGuard(SetFencedOutcome::kOutOfMemory,
                  [&] { return impl_->SetFenced(key, value, fence, ttl_ms); });
}

SetFencedOutcome Store::SetFencedLocal(std::string_view key, std::string_view value,
                                       uint64_t fence, int64_t ttl_ms) {
  return OomGuard(SetFencedOutcome::kOutOfMemory,
                  [&] { return impl_->SetFencedLocal(key, value, fence, ttl_ms); });
}

uint64_t Store::FenceClock() const { return impl_->FenceClock(); }

Status Store::MirrorLock(std::string_view key, std::string_view value, int64_t ttl_ms,
                         uint64_t fence) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->MirrorLock(key, value, ttl_ms, fence); });
}

LockStateReply Store::LockState(std::string_view key, std::string_view token) const {
  return OomGuard(LockStateReply{LockStateOutcome::kOutOfMemory, -2, 0},
                  [&] { return impl_->LockState(key, token); });
}

LockStateReply Store::LockStateLocal(std::string_view key, std::string_view token) const {
  return OomGuard(LockStateReply{LockStateOutcome::kOutOfMemory, -2, 0},
                  [&] { return impl_->LockStateLocal(key, token); });
}

Status Store::Digest(std::string_view key, uint64_t* digest) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Digest(key, digest); });
}

Status Store::DelEx(std::string_view key, const ValueCondition& condition, int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->DelEx(key, condition, removed); });
}

Status Store::DelExLocal(std::string_view key, const ValueCondition& condition,
                         int64_t* removed) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->DelExLocal(key, condition, removed); });
}

Status Store::SetWithLocal(std::string_view key, std::string_view value,
                           const SetOptions& options, SetResult* result) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->SetWithLocal(key, value, options, result); });
}

Status Store::SetWith(std::string_view key, std::string_view value, const SetOptions& options,
                      SetResult* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SetWith(key, value, options, result); });
}

Status Store::MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
                   bool only_if_none_exist, bool* written) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->MSet(pairs, only_if_none_exist, written); });
}

Status Store::GetDel(std::string_view key, std::string* value) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->GetDel(key, value); });
}

Status Store::GetEx(std::string_view key, SetOptions::Expiry expiry, int64_t expires_at_ms,
                    std::string* value) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->GetEx(key, expiry, expires_at_ms, value); });
}

Status Store::Append(std::string_view key, std::string_view value, int64_t* length) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Append(key, value, length); });
}

Status Store::SetRange(std::string_view key, uint64_t offset, std::string_view value,
                       int64_t* length) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->SetRange(key, offset, value, length); });
}

Status Store::IncrByFloat(std::string_view key, long double delta, std::string* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->IncrByFloat(key, delta, result); });
}

Status Store::HSet(std::string_view key,
                   const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                   bool only_if_absent, int64_t* added) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->HSet(key, fields, only_if_absent, added); });
}

Status Store::HGet(std::string_view key, std::string_view field, std::string* value) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HGet(key, field, value); });
}

Status Store::HMGet(std::string_view key, const std::vector<std::string_view>& fields,
                    std::vector<std::optional<std::string>>* values) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HMGet(key, fields, values); });
}

Status Store::HDel(std::string_view key, const std::vector<std::string_view>& fields,
                   int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HDel(key, fields, removed); });
}

Status Store::HGetAll(std::string_view key,
                      std::vector<std::pair<std::string, std::string>>* fields) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HGetAll(key, fields); });
}

Status Store::SetBit(std::string_view key, uint64_t bit, bool on, int* old) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SetBit(key, bit, on, old); });
}

Status Store::EditPadded(std::string_view key, size_t min_size,
                         absl::FunctionRef<bool(bool existed, std::string* bytes)> edit) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->EditPadded(key, min_size, edit); });
}

Status Store::BitOp(BitOpKind op, std::string_view dst, const std::vector<std::string_view>& keys,
                    int64_t* length) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->BitOp(op, dst, keys, length); });
}

Status Store::HRandField(std::string_view key, int64_t count,
                         std::vector<std::pair<std::string, std::string>>* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HRandField(key, count, out); });
}

Status Store::HLen(std::string_view key, int64_t* count) const { return impl_->HLen(key, count); }

Status Store::HExists(std::string_view key, std::string_view field, bool* exists) const {
  return impl_->HExists(key, field, exists);
}

Status Store::HStrLen(std::string_view key, std::string_view field, int64_t* length) const {
  return impl_->HStrLen(key, field, length);
}

Status Store::HIncrBy(std::string_view key, std::string_view field, int64_t delta,
                      int64_t* result) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->HIncrBy(key, field, delta, result); });
}

Status Store::HIncrByFloat(std::string_view key, std::string_view field, long double delta,
                           std::string* result) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->HIncrByFloat(key, field, delta, result); });
}

// --- sorted sets ---

Status Store::ZAdd(std::string_view key,
                   const std::vector<std::pair<double, std::string_view>>& pairs, unsigned flags,
                   int64_t* count, std::optional<double>* score) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ZAdd(key, pairs, flags, count, score); });
}

Status Store::ZRem(std::string_view key, const std::vector<std::string_view>& members,
                   int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZRem(key, members, removed); });
}

Status Store::ZScore(std::string_view key, std::string_view member, double* score) const {
  return impl_->ZScore(key, member, score);
}

Status Store::ZMScore(std::string_view key, const std::vector<std::string_view>& members,
                      std::vector<std::optional<double>>* scores) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZMScore(key, members, scores); });
}

Status Store::ZCard(std::string_view key, int64_t* count) const {
  return impl_->ZCard(key, count);
}

Status Store::ZRank(std::string_view key, std::string_view member, bool reverse,
                    int64_t* rank) const {
  return impl_->ZRank(key, member, reverse, rank);
}

Status Store::ZRange(std::string_view key, const ZRangeSpec& spec, ZMembers* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZRange(key, spec, out); });
}

Status Store::ZCount(std::string_view key, const ZRangeSpec& spec, int64_t* count) const {
  return impl_->ZCount(key, spec, count);
}

Status Store::ZRemRange(std::string_view key, const ZRangeSpec& spec, int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZRemRange(key, spec, removed); });
}

Status Store::ZPop(std::string_view key, bool max, int64_t count, ZMembers* out) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZPop(key, max, count, out); });
}

Status Store::ZRandMember(std::string_view key, int64_t count, ZMembers* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZRandMember(key, count, out); });
}

Status Store::ZStore(std::string_view dst, const std::vector<std::string_view>& keys,
                     const std::vector<double>& weights, ZAggregate aggregate, ZStoreOp op,
                     int64_t* size) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ZStore(dst, keys, weights, aggregate, op, size); });
}

Status Store::ZCombine(const std::vector<std::string_view>& keys,
                       const std::vector<double>& weights, ZAggregate aggregate, ZStoreOp op,
                       ZMembers* out) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ZCombine(keys, weights, aggregate, op, out); });
}

Status Store::ZInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                         int64_t* count) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ZInterCard(keys, limit, count); });
}

Status Store::ZRangeStore(std::string_view dst, std::string_view src, const ZRangeSpec& spec,
                          int64_t* size) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ZRangeStore(dst, src, spec, size); });
}

Status Store::ZMPop(const std::vector<std::string_view>& keys, bool max, int64_t count,
                    bool skip_other_types, size_t* which, ZMembers* out) {
  return OomGuard(Status::kOutOfMemory, [&] {
    return impl_->ZMPop(keys, max, count, skip_other_types, which, out);
  });
}

Status Store::SAdd(std::string_view key, const std::vector<std::string_view>& members,
                   int64_t* added) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SAdd(key, members, added); });
}

Status Store::SRem(std::string_view key, const std::vector<std::string_view>& members,
                   int64_t* removed) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SRem(key, members, removed); });
}

Status Store::SMembers(std::string_view key, std::vector<std::string>* members) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SMembers(key, members); });
}

Status Store::SIsMember(std::string_view key, std::string_view member, bool* is_member) const {
  return impl_->SIsMember(key, member, is_member);
}

Status Store::SMIsMember(std::string_view key, const std::vector<std::string_view>& members,
                         std::vector<bool>* is_member) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->SMIsMember(key, members, is_member); });
}

Status Store::SCard(std::string_view key, int64_t* count) const {
  return impl_->SCard(key, count);
}

Status Store::SPop(std::string_view key, uint64_t count, std::vector<std::string>* popped) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SPop(key, count, popped); });
}

Status Store::SRandMember(std::string_view key, int64_t count,
                          std::vector<std::string>* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SRandMember(key, count, out); });
}

Status Store::SMove(std::string_view src, std::string_view dst, std::string_view member,
                    bool* moved) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SMove(src, dst, member, moved); });
}

Status Store::SCombine(SetOp op, const std::vector<std::string_view>& keys,
                       std::vector<std::string>* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SCombine(op, keys, out); });
}

Status Store::SCombineStore(SetOp op, std::string_view dst,
                            const std::vector<std::string_view>& keys, int64_t* size) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->SCombineStore(op, dst, keys, size); });
}

Status Store::SInterCard(const std::vector<std::string_view>& keys, uint64_t limit,
                         int64_t* count) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SInterCard(keys, limit, count); });
}

Status Store::SScan(std::string_view key, uint64_t cursor, size_t count,
                    std::vector<std::string>* members, uint64_t* next) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->SScan(key, cursor, count, members, next); });
}

Status Store::ListPush(std::string_view key, const std::vector<std::string_view>& elements,
                       bool left, bool only_if_exists, int64_t* length) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ListPush(key, elements, left, only_if_exists, length); });
}

Status Store::ListPop(std::string_view key, bool left, size_t count,
                      std::vector<std::string>* out) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ListPop(key, left, count, out); });
}

Status Store::ListLen(std::string_view key, int64_t* length) const {
  return impl_->ListLen(key, length);
}

Status Store::ListRange(std::string_view key, int64_t start, int64_t stop,
                        std::vector<std::string>* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ListRange(key, start, stop, out); });
}

Status Store::ListIndex(std::string_view key, int64_t index, std::string* value) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ListIndex(key, index, value); });
}

Status Store::ListSet(std::string_view key, int64_t index, std::string_view value,
                      bool* in_range) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ListSet(key, index, value, in_range); });
}

Status Store::ListRem(std::string_view key, int64_t count, std::string_view element,
                      int64_t* removed) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ListRem(key, count, element, removed); });
}

Status Store::ListTrim(std::string_view key, int64_t start, int64_t stop) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ListTrim(key, start, stop); });
}

Status Store::ListInsert(std::string_view key, bool before, std::string_view pivot,
                         std::string_view element, int64_t* length) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ListInsert(key, before, pivot, element, length); });
}

Status Store::ListPos(std::string_view key, std::string_view element, int64_t rank,
                      int64_t count, int64_t maxlen, std::vector<int64_t>* positions) const {
  return OomGuard(Status::kOutOfMemory, [&] {
    return impl_->ListPos(key, element, rank, count, maxlen, positions);
  });
}

Status Store::ListMove(std::string_view src, std::string_view dst, bool from_left, bool to_left,
                       std::string* moved) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ListMove(src, dst, from_left, to_left, moved); });
}

Status Store::ListReplace(std::string_view key, const std::vector<std::string_view>& elements) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ListReplace(key, elements); });
}

Status Store::ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions,
                         bool* applied) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ExpireAtIf(key, at_ms, conditions, applied); });
}

int64_t Store::NowMs() const {
  // A command run in two passes reads one time in both (route_deferral.h).
  if (FrozenClock* frozen = FrozenClock::Current()) {
    return frozen->Read([this] { return impl_->NowMs(); });
  }
  return impl_->NowMs();
}

Status Store::RandomKey(std::string* key) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->RandomKey(key); });
}

Status Store::Scan(uint64_t cursor, std::string_view pattern, size_t count,
                   std::optional<ValueType> type, std::vector<std::string>* keys,
                   uint64_t* next) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->Scan(cursor, pattern, count, type, keys, next); });
}

Status Store::Expire(std::string_view key, int64_t ttl_ms, bool* applied) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Expire(key, ttl_ms, applied); });
}

Status Store::ExpireAt(std::string_view key, int64_t at_ms, bool* applied) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->ExpireAt(key, at_ms, applied); });
}

Status Store::Persist(std::string_view key, bool* applied) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Persist(key, applied); });
}

Status Store::Pttl(std::string_view key, int64_t* ttl_ms) const {
  return impl_->Pttl(key, ttl_ms);
}

Status Store::Keys(std::string_view pattern, std::vector<std::string>* out) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Keys(pattern, out); });
}

uint64_t Store::DbSize() const { return impl_->DbSize(); }

Status Store::Flush() {
  return OomGuard(Status::kOutOfMemory, [&] {
    impl_->Flush();
    return Status::kOk;
  });
}

Status Store::Rename(std::string_view src, std::string_view dst, bool only_if_absent,
                     bool* renamed) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->Rename(src, dst, only_if_absent, renamed); });
}

Status Store::WaitForChange(std::string_view key, uint64_t last_version, int64_t timeout_ms,
                            WaitResult* result) const {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->WaitForChange(key, last_version, timeout_ms, result); });
}

Status Store::Atomically(const std::vector<std::string_view>& keys, bool all_shards,
                         absl::FunctionRef<void()> fn) {
  // No OomGuard here: fn's own store calls are guarded, and an exception fn
  // lets out is the caller's.
  return impl_->Atomically(keys, all_shards, fn);
}

Status Store::AtomicallyIn(const std::vector<std::pair<uint32_t, std::string_view>>& keys,
                           const std::vector<uint32_t>& whole_databases,
                           absl::FunctionRef<void()> fn) {
  return impl_->AtomicallyIn(keys, whole_databases, fn);
}

Store::DatabaseScope::DatabaseScope(const Store& store, uint32_t db)
    : DatabaseScope(store.impl_.get(), db) {}

Store::DatabaseScope::DatabaseScope(const void* impl, uint32_t db)
    : prev_store_(db_scope::store), prev_db_(db_scope::db) {
  db_scope::store = impl;
  db_scope::db = db;
}

Store::DatabaseScope::~DatabaseScope() {
  db_scope::store = prev_store_;
  db_scope::db = prev_db_;
}

Status Store::Move(std::string_view key, uint32_t to_db, bool* moved) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Move(key, to_db, moved); });
}

Status Store::FlushEveryDatabase() {
  return OomGuard(Status::kOutOfMemory, [&] {
    impl_->FlushEveryDatabase();
    return Status::kOk;
  });
}

Status Store::SwapDb(uint32_t a, uint32_t b) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->SwapDb(a, b); });
}

Status Store::Copy(std::string_view src, std::string_view dst, uint32_t dst_db, bool replace,
                   bool* copied) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->Copy(src, dst, dst_db, replace, copied); });
}

Status Store::Object(std::string_view key, ObjectShape* shape) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Object(key, shape); });
}

Status Store::Watch(std::string_view key, uint64_t* touched) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->Watch(key, touched); });
}

Status Store::WatchedChanged(std::string_view key, uint64_t touched, bool* changed) const {
  return impl_->WatchedChanged(key, touched, changed);
}

void Store::Unwatch(std::string_view key) { impl_->Unwatch(key); }

bool Store::HeldBySection(std::string_view key) const { return impl_->HeldBySection(key); }

size_t Store::ShardIndex(uint32_t db, std::string_view key) const {
  return impl_->ShardIndex(db, key);
}

size_t Store::ShardsPerDatabase() const { return impl_->ShardsPerDatabase(); }

Status Store::Inspect(std::string_view key, EntryInfo* info) const {
  return impl_->Inspect(key, info);
}

StoreStats Store::Stats() const { return impl_->Stats(); }

void Store::SetMemoryLimit(uint64_t bytes) {
  impl_->SetMemoryLimit(bytes);
}

uint64_t Store::memory_limit() const {
  return impl_->memory_limit();
}

bool Store::OverMemoryLimit() const { return impl_->OverMemoryLimit(); }

bool Store::ApplyReplicated(const Mutation& m) {
  return OomGuard(false, [&] { return impl_->ApplyReplicated(m); });
}

void Store::ConfirmLocal(std::string_view key, const Stamp& stamp) {
  impl_->ConfirmLocal(key, stamp);
}

void Store::ForgetLocal(std::string_view key, const Stamp& stamp) {
  impl_->ForgetLocal(key, stamp);
}

void Store::ForEachForSync(absl::FunctionRef<void(const Mutation&)> fn) const {
  impl_->ForEachForSync(fn);
}

uint64_t Store::TombstoneCount() const { return impl_->TombstoneCount(); }

size_t Store::SweepExpired(size_t budget_per_shard) {
  bool more = false;
  return impl_->Sweep(budget_per_shard, &more);
}

}  // namespace ephpm
