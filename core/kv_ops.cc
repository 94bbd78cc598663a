// The C ops table over ephpm::Store: one-line wrappers that translate
// arguments and results, and keep exceptions on this side of the ABI.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/kv_ops.h"
#include "ephpm/kv_ops_store.h"
#include "kv_ops_cluster.h"

namespace ephpm {
namespace {

static_assert(kMaxKeySize == EPHPM_KV_MAX_KEY_SIZE);
static_assert(static_cast<int>(Status::kOk) == EPHPM_KV_OK);
static_assert(static_cast<int>(Status::kNotFound) == EPHPM_KV_NOT_FOUND);
static_assert(static_cast<int>(Status::kOutOfMemory) == EPHPM_KV_OUT_OF_MEMORY);
static_assert(static_cast<int>(Status::kInvalidArgument) == EPHPM_KV_INVALID_ARGUMENT);
static_assert(static_cast<int>(Status::kOwnerUnreachable) == EPHPM_KV_OWNER_UNREACHABLE);
static_assert(static_cast<int>(Status::kWrongType) == EPHPM_KV_WRONG_TYPE);
static_assert(static_cast<int>(Status::kNotInteger) == EPHPM_KV_NOT_INTEGER);
static_assert(static_cast<int>(Status::kOverflow) == EPHPM_KV_OVERFLOW);
static_assert(static_cast<int>(Status::kNotFloat) == EPHPM_KV_NOT_FLOAT);
static_assert(static_cast<int>(Status::kNanOrInfinity) == EPHPM_KV_NAN_OR_INFINITY);
static_assert(static_cast<int>(Status::kPersistenceError) == EPHPM_KV_PERSISTENCE_ERROR);

Store* S(void* ctx) { return static_cast<Store*>(ctx); }
std::string_view V(const char* p, size_t n) { return n == 0 ? std::string_view() : std::string_view(p, n); }
int C(Status s) { return static_cast<int>(s); }

// malloc that never returns null for a successful zero-length request.
char* MallocBytes(size_t n) { return static_cast<char*>(std::malloc(n == 0 ? 1 : n)); }

// Packs byte strings (a missing one = nullopt) into one malloc block.
ephpm_kv_list* PackList(const std::vector<std::optional<std::string>>& items) {
  size_t bytes = sizeof(ephpm_kv_list) + items.size() * sizeof(ephpm_kv_bytes);
  for (const auto& i : items) bytes += i ? i->size() : 0;
  auto* list = static_cast<ephpm_kv_list*>(std::malloc(bytes));
  if (list == nullptr) return nullptr;
  list->count = items.size();
  char* data = reinterpret_cast<char*>(list->items + items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    list->items[i].data = items[i] ? data : nullptr;
    list->items[i].len = items[i] ? items[i]->size() : 0;
    if (items[i] && !items[i]->empty()) std::memcpy(data, items[i]->data(), items[i]->size());
    data += list->items[i].len;
  }
  return list;
}

int OpGet(void* ctx, const char* key, size_t key_len, char** value, size_t* value_len) {
  char* buf = nullptr;
  size_t len = 0;
  const Status st = S(ctx)->GetInto(V(key, key_len), [&](size_t n) {
    buf = MallocBytes(n);
    len = n;
    return buf;
  });
  if (st != Status::kOk) {
    std::free(buf);
    return C(st);
  }
  *value = buf;
  *value_len = len;
  return EPHPM_KV_OK;
}

int OpSet(void* ctx, const char* key, size_t key_len, const char* value, size_t value_len,
          int64_t ttl_ms) {
  return C(S(ctx)->Set(V(key, key_len), V(value, value_len), ttl_ms));
}

int OpSetNx(void* ctx, const char* key, size_t key_len, const char* value, size_t value_len,
            int64_t ttl_ms, int* inserted) {
  const SetNxOutcome o = S(ctx)->SetNx(V(key, key_len), V(value, value_len), ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *inserted = o == SetNxOutcome::kInserted;
  return EPHPM_KV_OK;
}

int OpDel(void* ctx, const char* key, size_t key_len, int64_t* removed) {
  return C(S(ctx)->Del(V(key, key_len), removed));
}

int OpExists(void* ctx, const char* key, size_t key_len, int* exists) {
  bool e = false;
  const Status st = S(ctx)->Exists(V(key, key_len), &e);
  if (st == Status::kOk) *exists = e ? 1 : 0;
  return C(st);
}

int OpIncrBy(void* ctx, const char* key, size_t key_len, int64_t delta, int64_t* result) {
  return C(S(ctx)->IncrBy(V(key, key_len), delta, result));
}

int OpExpire(void* ctx, const char* key, size_t key_len, int64_t ttl_ms, int* applied) {
  bool a = false;
  const Status st = S(ctx)->Expire(V(key, key_len), ttl_ms, &a);
  if (st == Status::kOk) *applied = a ? 1 : 0;
  return C(st);
}

int OpPttl(void* ctx, const char* key, size_t key_len, int64_t* ttl_ms) {
  return C(S(ctx)->Pttl(V(key, key_len), ttl_ms));
}

int OpFlushAll(void* ctx) { return C(S(ctx)->Flush()); }

int OpWait(void* ctx, const char* key, size_t key_len, uint64_t last_version, int64_t timeout_ms,
           int* changed, int* found, char** value, size_t* value_len, uint64_t* version) {
  WaitResult r;
  const Status st = S(ctx)->WaitForChange(V(key, key_len), last_version, timeout_ms, &r);
  if (st != Status::kOk) return C(st);
  char* buf = nullptr;
  if (r.found) {
    buf = MallocBytes(r.value.size());
    if (buf == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
    std::memcpy(buf, r.value.data(), r.value.size());
  }
  *changed = r.changed ? 1 : 0;
  *found = r.found ? 1 : 0;
  *value = buf;
  *value_len = r.found ? r.value.size() : 0;
  *version = r.version;
  return EPHPM_KV_OK;
}

int OpDelIfEq(void* ctx, const char* key, size_t key_len, const char* token, size_t token_len,
              int* deleted) {
  const DelIfEqOutcome o = S(ctx)->DelIfEq(V(key, key_len), V(token, token_len));
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *deleted = o == DelIfEqOutcome::kDeleted;
  return EPHPM_KV_OK;
}

int OpPersist(void* ctx, const char* key, size_t key_len, int* applied) {
  bool a = false;
  const Status st = S(ctx)->Persist(V(key, key_len), &a);
  if (st == Status::kOk) *applied = a ? 1 : 0;
  return C(st);
}

int OpKeys(void* ctx, const char* pattern, size_t pattern_len, ephpm_kv_list** keys) {
  std::vector<std::string> found;
  const Status st = S(ctx)->Keys(V(pattern, pattern_len), &found);
  if (st != Status::kOk) return C(st);
  std::vector<std::optional<std::string>> items(std::make_move_iterator(found.begin()),
                                                std::make_move_iterator(found.end()));
  ephpm_kv_list* list = PackList(items);
  if (list == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  *keys = list;
  return EPHPM_KV_OK;
}

int OpDbSize(void* ctx, uint64_t* count) {
  *count = S(ctx)->DbSize();
  return EPHPM_KV_OK;
}

int OpMget(void* ctx, const ephpm_kv_bytes* keys, size_t count, ephpm_kv_list** values) {
  std::vector<std::optional<std::string>> found(count);
  for (size_t i = 0; i < count; ++i) {
    std::string v;
    const Status st = S(ctx)->Get(V(keys[i].data, keys[i].len), &v);
    if (st == Status::kOk) {
      found[i] = std::move(v);
    } else if (st != Status::kNotFound && st != Status::kWrongType) {
      return C(st);
    }
  }
  ephpm_kv_list* list = PackList(found);
  if (list == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  *values = list;
  return EPHPM_KV_OK;
}

int OpSetIfEq(void* ctx, const char* guard, size_t guard_len, const char* token,
              size_t token_len, const char* key, size_t key_len, const char* value,
              size_t value_len, int64_t ttl_ms, int* written) {
  const SetIfEqOutcome o = S(ctx)->SetIfEq(V(guard, guard_len), V(token, token_len),
                                            V(key, key_len), V(value, value_len), ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *written = o == SetIfEqOutcome::kWritten;
  return EPHPM_KV_OK;
}

int OpDelIfGuardEq(void* ctx, const char* guard, size_t guard_len, const char* token,
                   size_t token_len, const char* key, size_t key_len, int* matched,
                   int* removed) {
  const DelIfGuardEqOutcome o =
      S(ctx)->DelIfGuardEq(V(guard, guard_len), V(token, token_len), V(key, key_len));
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *matched = o != DelIfGuardEqOutcome::kNotMatched;
  *removed = o == DelIfGuardEqOutcome::kDeleted;
  return EPHPM_KV_OK;
}

int OpExpireIfGuardEq(void* ctx, const char* guard, size_t guard_len, const char* token,
                      size_t token_len, const char* key, size_t key_len, int64_t ttl_ms,
                      int* matched, int* applied) {
  const ExpireIfGuardEqOutcome o = S(ctx)->ExpireIfGuardEq(
      V(guard, guard_len), V(token, token_len), V(key, key_len), ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *matched = o != ExpireIfGuardEqOutcome::kNotMatched;
  *applied = o == ExpireIfGuardEqOutcome::kApplied;
  return EPHPM_KV_OK;
}

int OpGetInto(void* ctx, const char* key, size_t key_len, char* buf, size_t buf_len,
              size_t* value_len) {
  uint64_t n = 0;
  const Status st = S(ctx)->GetIntoBuffer(V(key, key_len), buf, buf_len, &n);
  if (st == Status::kOk) *value_len = static_cast<size_t>(n);
  return C(st);
}

int OpGetFromOwner(void* ctx, const char* key, size_t key_len, char** value,
                   size_t* value_len) {
  std::string v;
  const Status st = S(ctx)->GetFromOwner(V(key, key_len), &v);
  if (st != Status::kOk) return C(st);
  char* buf = MallocBytes(v.size());
  if (buf == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  if (!v.empty()) std::memcpy(buf, v.data(), v.size());
  *value = buf;
  *value_len = v.size();
  return EPHPM_KV_OK;
}

int OpClusterState(void* ctx, ephpm_kv_cluster_state** state) {
  *state = nullptr;
  const Replicator* r = S(ctx)->options().replicator;
  ClusterInfo info;
  if (r == nullptr || !r->Info(&info)) return EPHPM_KV_OK;
  *state = PackClusterState(info);
  return *state != nullptr ? EPHPM_KV_OK : EPHPM_KV_OUT_OF_MEMORY;
}

int OpClusterInfo(void* ctx, char** text, size_t* text_len) {
  const Replicator* r = S(ctx)->options().replicator;
  const std::string lines = r != nullptr ? r->Describe() : std::string();
  if (lines.empty()) {
    *text = nullptr;
    *text_len = 0;
    return EPHPM_KV_OK;
  }
  char* out = static_cast<char*>(std::malloc(lines.size() + 1));
  if (out == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  std::memcpy(out, lines.data(), lines.size());
  out[lines.size()] = '\0';
  *text = out;
  *text_len = lines.size();
  return EPHPM_KV_OK;
}

int OpSetNxEphemeral(void* ctx, const char* key, size_t key_len, const char* value,
                     size_t value_len, int64_t ttl_ms, int* inserted) {
  const SetNxOutcome o = S(ctx)->SetNxEphemeral(V(key, key_len), V(value, value_len), ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *inserted = o == SetNxOutcome::kInserted;
  return EPHPM_KV_OK;
}

// Locks held by a request (ephemeral) are taken while writes are refused
// and do not fail on the log: as set_nx_ephemeral.  A plain grant is a
// write like set_nx.  Either way, with fsync=always the grant returns once
// the fence mark it may have logged is durable, so that a restart resumes
// past its fence.
int OpSetNxFenced(void* ctx, const char* key, size_t key_len, const char* value,
                  size_t value_len, int64_t ttl_ms, int ephemeral, int* inserted,
                  uint64_t* fence) {
  if (!ephemeral) {
    if (const Status g = S(ctx)->WritesAllowed(); g != Status::kOk) return C(g);
  }
  const FencedGrant g =
      S(ctx)->SetNxFenced(V(key, key_len), V(value, value_len), ttl_ms, ephemeral != 0);
  const Status d = S(ctx)->WaitDurable();
  if (const Status e = ErrorOf(g.outcome); e != Status::kOk) return C(e);
  if (!ephemeral && d != Status::kOk) return C(d);
  *inserted = g.outcome == SetNxOutcome::kInserted;
  *fence = g.fence;
  return EPHPM_KV_OK;
}

int OpExpireIfEq(void* ctx, const char* key, size_t key_len, const char* token,
                 size_t token_len, int64_t ttl_ms, int* applied) {
  const ExpireIfEqOutcome o = S(ctx)->ExpireIfEq(V(key, key_len), V(token, token_len), ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *applied = o == ExpireIfEqOutcome::kApplied;
  return EPHPM_KV_OK;
}

int OpSetFenced(void* ctx, const char* key, size_t key_len, const char* value,
                size_t value_len, uint64_t fence, int64_t ttl_ms, int* written) {
  const SetFencedOutcome o =
      S(ctx)->SetFenced(V(key, key_len), V(value, value_len), fence, ttl_ms);
  if (const Status e = ErrorOf(o); e != Status::kOk) return C(e);
  *written = o == SetFencedOutcome::kWritten;
  return EPHPM_KV_OK;
}

int OpLockState(void* ctx, const char* key, size_t key_len, const char* token, size_t token_len,
                int* state, int64_t* pttl_ms, uint64_t* fence) {
  const LockStateReply r = S(ctx)->LockState(V(key, key_len), V(token, token_len));
  if (const Status e = ErrorOf(r.outcome); e != Status::kOk) return C(e);
  *state = r.outcome == LockStateOutcome::kHeld ? 0 : r.outcome == LockStateOutcome::kOther ? 1 : 2;
  *pttl_ms = r.pttl_ms;
  *fence = r.fence;
  return EPHPM_KV_OK;
}

// A NUL-terminated malloc'ed copy of `text`, or null.
char* MallocText(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

int OpRewrite(void* ctx, int background, char** message, size_t* message_len) {
  std::string text;
  const Status st = S(ctx)->Rewrite(background != 0, &text);
  char* out = MallocText(text);
  if (out == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  *message = out;
  *message_len = text.size();
  return C(st);
}

int OpPersistenceState(void* ctx, ephpm_kv_persistence** state) {
  const PersistenceInfo p = S(ctx)->persistence_info();
  const std::pair<const char*, uint64_t> counters[] = {
      {"rewrite_in_progress", p.rewrite_in_progress ? 1u : 0u},
      {"last_rewrite_ok", p.last_rewrite_ok ? 1u : 0u},
      {"rewrites", p.rewrites},
      {"last_save_unix", static_cast<uint64_t>(p.last_save_unix)},
      {"log_bytes", p.log_bytes},
      {"log_base_bytes", p.log_base_bytes},
      {"buffered_bytes", p.buffered_bytes},
      {"records", p.records},
      {"write_calls", p.write_calls},
      {"fsyncs", p.fsyncs},
      {"commit_batches", p.commit_batches},
      {"commit_records", p.commit_records},
      {"commit_max_batch", p.commit_max_batch},
      {"loaded_records", p.loaded_records},
      {"loaded_keys", p.loaded_keys},
      {"truncated_bytes", p.truncated_bytes},
      {"load_ms", static_cast<uint64_t>(p.load_ms)},
  };
  const std::string fsync = p.enabled ? FsyncPolicyName(p.fsync) : "";
  const std::string* strings[] = {&fsync, &p.data_dir, &p.write_error, &p.last_rewrite_error};
  constexpr size_t kCounters = sizeof(counters) / sizeof(counters[0]);
  size_t bytes = sizeof(ephpm_kv_persistence) + kCounters * sizeof(ephpm_kv_cluster_counter);
  for (const auto& c : counters) bytes += std::strlen(c.first) + 1;
  for (const std::string* t : strings) bytes += t->size() + 1;
  auto* out = static_cast<ephpm_kv_persistence*>(std::malloc(bytes));
  if (out == nullptr) return EPHPM_KV_OUT_OF_MEMORY;
  auto* cs = reinterpret_cast<ephpm_kv_cluster_counter*>(out + 1);
  char* text = reinterpret_cast<char*>(cs + kCounters);
  auto put = [&text](std::string_view t) {
    const char* at = text;
    std::memcpy(text, t.data(), t.size());
    text[t.size()] = '\0';
    text += t.size() + 1;
    return at;
  };
  out->enabled = p.enabled ? 1 : 0;
  out->fsync = put(fsync);
  out->data_dir = put(p.data_dir);
  out->write_error = put(p.write_error);
  out->last_rewrite_error = put(p.last_rewrite_error);
  out->counter_count = kCounters;
  out->counters = cs;
  for (size_t i = 0; i < kCounters; ++i) {
    cs[i].name = put(counters[i].first);
    cs[i].value = counters[i].second;
  }
  *state = out;
  return EPHPM_KV_OK;
}

int OpInfo(void* ctx, ephpm_kv_info* info) {
  const StoreStats st = S(ctx)->Stats();
  ephpm_kv_info full{};
  full.size = info->size;
  full.keys = st.keys;
  full.memory_used = st.memory_used;
  full.memory_limit = st.memory_limit;
  full.max_value_size = S(ctx)->options().max_value_size;
  full.hits = st.hits;
  full.misses = st.misses;
  full.expired = st.expired;
  full.evicted = st.evicted;
  full.compressed_values = st.compressed_values;
  full.compressed_original_bytes = st.compressed_original_bytes;
  full.compressed_stored_bytes = st.compressed_stored_bytes;
  full.pinned_keys = st.pinned_keys;
  full.pinned_bytes = st.pinned_bytes;
  std::memcpy(info, &full, std::min<size_t>(info->size, sizeof full));
  return EPHPM_KV_OK;
}

// Every entry of the table goes through this one guard: an allocation
// failure anywhere below it (the store, a replicator, the copies made here)
// is EPHPM_KV_OUT_OF_MEMORY, never an exception unwinding into C.  Anything
// else thrown would be a bug, and noexcept ends the process there at once.
// A write: refused while the log cannot be written (Redis's MISCONF), and
// with fsync=always answered only once this thread's change is durable.  An
// op that succeeded but could not be made durable answers
// PERSISTENCE_ERROR; its change stays in memory (kv_ops.h says so).
template <auto F, bool kGate = true>
struct Durable;
template <typename... A, int (*F)(void*, A...), bool kGate>
struct Durable<F, kGate> {
  static int Call(void* ctx, A... a) {
    if (kGate) {
      if (const Status g = S(ctx)->WritesAllowed(); g != Status::kOk) return C(g);
    }
    const int r = F(ctx, a...);
    const Status d = S(ctx)->WaitDurable();
    return r == EPHPM_KV_OK && d != Status::kOk ? C(d) : r;
  }
};

template <auto F>
struct Guarded;
template <typename... A, int (*F)(A...)>
struct Guarded<F> {
  static int Call(A... a) noexcept {
    try {
      return F(a...);
    } catch (const std::bad_alloc&) {
      return EPHPM_KV_OUT_OF_MEMORY;
    } catch (const std::length_error&) {
      return EPHPM_KV_OUT_OF_MEMORY;
    }
  }
};

}  // namespace

ephpm_kv_ops MakeKvOps(Store* store) {
  ephpm_kv_ops ops{};
  ops.abi_version = EPHPM_KV_ABI_VERSION;
  ops.size = sizeof(ephpm_kv_ops);
  ops.ctx = store;
  ops.get = Guarded<OpGet>::Call;
  ops.set = Guarded<Durable<OpSet>::Call>::Call;
  ops.set_nx = Guarded<Durable<OpSetNx>::Call>::Call;
  ops.del = Guarded<Durable<OpDel>::Call>::Call;
  ops.exists = Guarded<OpExists>::Call;
  ops.incr_by = Guarded<Durable<OpIncrBy>::Call>::Call;
  ops.expire = Guarded<Durable<OpExpire>::Call>::Call;
  ops.pttl = Guarded<OpPttl>::Call;
  ops.flush_all = Guarded<Durable<OpFlushAll>::Call>::Call;
  ops.wait = Guarded<OpWait>::Call;
  // A lock's release goes on while the log cannot be written: it makes
  // nothing worse, and an ephemeral lock's release needs no disk at all.
  ops.del_if_eq = Guarded<Durable<OpDelIfEq, /*kGate=*/false>::Call>::Call;
  ops.persist = Guarded<Durable<OpPersist>::Call>::Call;
  ops.keys = Guarded<OpKeys>::Call;
  ops.dbsize = Guarded<OpDbSize>::Call;
  ops.mget = Guarded<OpMget>::Call;
  ops.info = Guarded<OpInfo>::Call;
  ops.set_if_eq = Guarded<Durable<OpSetIfEq>::Call>::Call;
  ops.get_into = Guarded<OpGetInto>::Call;
  ops.cluster_info = Guarded<OpClusterInfo>::Call;
  ops.get_from_owner = Guarded<OpGetFromOwner>::Call;
  ops.del_if_guard_eq = Guarded<Durable<OpDelIfGuardEq>::Call>::Call;
  ops.expire_if_guard_eq = Guarded<Durable<OpExpireIfGuardEq>::Call>::Call;
  ops.cluster_state = Guarded<OpClusterState>::Call;
  // Nothing to make durable: neither gated nor waited for.
  ops.set_nx_ephemeral = Guarded<OpSetNxEphemeral>::Call;
  ops.rewrite = Guarded<OpRewrite>::Call;
  ops.persistence_state = Guarded<OpPersistenceState>::Call;
  ops.set_nx_fenced = Guarded<OpSetNxFenced>::Call;
  // A refresh is ungated, as del_if_eq: a lock's holder can keep it (an
  // ephemeral lock's refresh needs no disk) while writes are refused.
  ops.expire_if_eq = Guarded<Durable<OpExpireIfEq, /*kGate=*/false>::Call>::Call;
  ops.set_fenced = Guarded<Durable<OpSetFenced>::Call>::Call;
  ops.lock_state = Guarded<OpLockState>::Call;
  return ops;
}

}  // namespace ephpm

extern "C" const char* ephpm_kv_status_name(int status) {
  if (status < EPHPM_KV_OK || status > EPHPM_KV_PERSISTENCE_ERROR) return "unknown status";
  return ephpm::StatusName(static_cast<ephpm::Status>(status));
}
