#include "ephpm/store.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <random>
#include <thread>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/synchronization/mutex.h"
#include "compression.h"
#include "ephpm/glob.h"
#include "ephpm/number_text.h"
#include "shared_mutex.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {
namespace {

// ---------------------------------------------------------------------------
// Keys and hashing.
//
// One XXH3-128 of the key gives two independent 64-bit halves: the low half
// picks the shard, the high half is the hash the shard's map uses.  Keys in
// one shard therefore share no bits of the map's hash.

struct HashedKey {
  std::string_view key;
  uint64_t shard_hash;
  uint64_t map_hash;
};

HashedKey HashKey(std::string_view key) {
  const XXH128_hash_t h = XXH3_128bits(key.data(), key.size());
  return HashedKey{key, h.low64, h.high64};
}

struct KeyHash {
  using is_transparent = void;
  size_t operator()(const HashedKey& k) const { return k.map_hash; }
  size_t operator()(std::string_view k) const { return HashKey(k).map_hash; }
  size_t operator()(const std::string& k) const { return HashKey(k).map_hash; }
};

struct KeyEq {
  using is_transparent = void;
  static std::string_view View(const HashedKey& k) { return k.key; }
  static std::string_view View(std::string_view k) { return k; }
  static std::string_view View(const std::string& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a) == View(b);
  }
};

// ---------------------------------------------------------------------------
// Entries.

// A hash's fields.  In-process only, so abseil's per-process seeded hash is
// fine here; transparent over std::string_view (abseil's own string hasher
// takes absl::string_view, which is not std's in this abseil build).
struct FieldHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }
};
struct FieldEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};
using HashFields = absl::flat_hash_map<std::string, std::string, FieldHash, FieldEq>;

struct Entry {
  std::string value;           // as stored (a zstd frame when compressed)
  std::unique_ptr<HashFields> hash;  // set exactly when type == kHash
  int64_t expires_at = 0;      // absolute ms, 0 = none
  uint64_t version = 0;
  uint64_t original_size = 0;  // bytes a reader gets back
  uint64_t mem_size = 0;       // accounted bytes for the whole entry
  ValueType type = ValueType::kString;
  bool compressed = false;
  // A lock (set_nx with a TTL): eviction never takes it while it is live.
  // Only ever set on a string with an expiry, so a TTL bounds how long a pin
  // holds memory.
  bool pinned = false;
  // Written by a cluster decision that the other members have not confirmed
  // yet: it stays on this node (a full sync leaves it out) until it is
  // confirmed (ConfirmLocal) or forgotten (ForgetLocal).  Its stamp is
  // fresh, so once out it could win over the cluster's state.
  bool tentative = false;
  Stamp stamp;                 // the write that made this state (a cluster's order)
  // Written by readers under the shared lock, hence atomic.
  mutable std::atomic<int64_t> last_access{0};

  Entry() = default;
  // The map moves entries only under the exclusive lock (rehash), so a
  // relaxed copy of last_access is exact.
  Entry(Entry&& o) noexcept
      : value(std::move(o.value)),
        hash(std::move(o.hash)),
        expires_at(o.expires_at),
        version(o.version),
        original_size(o.original_size),
        mem_size(o.mem_size),
        type(o.type),
        compressed(o.compressed),
        pinned(o.pinned),
        tentative(o.tentative),
        stamp(o.stamp),
        last_access(o.last_access.load(std::memory_order_relaxed)) {}
  Entry& operator=(Entry&& o) noexcept {
    value = std::move(o.value);
    hash = std::move(o.hash);
    expires_at = o.expires_at;
    version = o.version;
    original_size = o.original_size;
    mem_size = o.mem_size;
    type = o.type;
    compressed = o.compressed;
    pinned = o.pinned;
    tentative = o.tentative;
    stamp = o.stamp;
    last_access.store(o.last_access.load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
    return *this;
  }
};

using Map = absl::flat_hash_map<std::string, Entry, KeyHash, KeyEq>;

// Expiry index: (expires_at, key), earliest first.  The comparator is
// transparent so that lookups and erasures by (time, string_view) never copy
// (and never allocate) a key.
struct TtlItem {
  int64_t at;
  std::string key;
};
struct TtlRef {
  int64_t at;
  std::string_view key;
};
struct TtlLess {
  using is_transparent = void;
  static TtlRef Ref(const TtlItem& i) { return TtlRef{i.at, i.key}; }
  static TtlRef Ref(const TtlRef& r) { return r; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    const TtlRef x = Ref(a), y = Ref(b);
    return x.at != y.at ? x.at < y.at : x.key < y.key;
  }
};
using TtlIndex = absl::btree_set<TtlItem, TtlLess>;

// No number INCRBYFLOAT accepts is this long (Redis's MAX_LONG_DOUBLE_CHARS).
constexpr size_t kMaxNumberText = 5 * 1024;

bool IsExpired(const Entry& e, int64_t now) {
  return e.expires_at != 0 && e.expires_at <= now;
}

// Accounted size of an entry.  Deterministic (not malloc's actual usage) so
// that the total is exact: the sum of every entry's mem_size.
constexpr uint64_t kEntryOverhead = sizeof(std::pair<const std::string, Entry>) + 1;
constexpr uint64_t kTtlOverhead = sizeof(TtlItem) + 16;  // + a share of a node

uint64_t EntryMem(size_t key_len, size_t stored_len, bool has_ttl) {
  uint64_t m = kEntryOverhead + key_len + stored_len;
  if (has_ttl) m += kTtlOverhead + key_len;
  return m;
}

// Accounted size of one hash field.
constexpr uint64_t kFieldOverhead = sizeof(HashFields::value_type) + 1;

uint64_t FieldMem(size_t field_len, size_t value_len) {
  return kFieldOverhead + field_len + value_len;
}

// Accounted size of a hash entry whose fields take `fields_mem`.
uint64_t HashEntryMem(size_t key_len, uint64_t fields_mem, bool has_ttl) {
  return EntryMem(key_len, 0, has_ttl) + sizeof(HashFields) + fields_mem;
}

// Accounted size of a tombstone (a deleted key's stamp, kept with a
// replicator so that an older write arriving late cannot bring the key back).
struct Tombstone {
  Stamp stamp;
  int64_t at_ms;  // when it was made, for collection
  bool tentative = false;  // see Entry::tentative
};
uint64_t TombstoneMem(size_t key_len) {
  return sizeof(std::pair<const std::string, Tombstone>) + 1 + key_len;
}

// The replication encoding of a hash (see Mutation::value).
std::string EncodeHash(const HashFields& h) {
  std::string out;
  auto put_len = [&out](size_t n) {
    const uint32_t v = static_cast<uint32_t>(n);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  for (const auto& [f, v] : h) {
    put_len(f.size());
    out.append(f);
    put_len(v.size());
    out.append(v);
  }
  return out;
}

// The inverse of EncodeHash; false on a malformed encoding.
bool DecodeHash(std::string_view in, HashFields* out) {
  auto get_len = [&in](uint32_t* n) {
    if (in.size() < 4) return false;
    *n = 0;
    for (int i = 0; i < 4; ++i) *n |= static_cast<uint32_t>(static_cast<unsigned char>(in[i])) << (8 * i);
    in.remove_prefix(4);
    return in.size() >= *n;
  };
  while (!in.empty()) {
    uint32_t fl = 0, vl = 0;
    if (!get_len(&fl)) return false;
    std::string field(in.substr(0, fl));
    in.remove_prefix(fl);
    if (!get_len(&vl)) return false;
    (*out)[std::move(field)] = std::string(in.substr(0, vl));
    in.remove_prefix(vl);
  }
  return true;
}

// A value ready to be stored: compressed outside any lock.
struct Prepared {
  std::string stored;
  uint64_t original_size = 0;
  bool compressed = false;
};

}  // namespace

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
  }
  return "unknown status";
}

std::string ValidateOptions(const StoreOptions& o) {
  if (o.shards == 0 || o.shards > 65536 || (o.shards & (o.shards - 1)) != 0) {
    return "shards must be a power of two between 1 and 65536";
  }
  if (o.eviction_samples == 0 || o.eviction_samples > 64) {
    return "eviction_samples must be between 1 and 64";
  }
  if (o.compression == Compression::kZstd &&
      (o.compression_level < -7 || o.compression_level > 22)) {
    return "compression_level must be between -7 and 22";
  }
  if (o.max_value_size == 0) return "max_value_size must be positive";
  if (o.sweep_interval_ms < 0) return "sweep_interval_ms must not be negative";
  if (o.sweep_budget == 0) return "sweep_budget must be positive";
  return "";
}

// ---------------------------------------------------------------------------
class Store::Impl {
 public:
  struct alignas(64) Shard {
    mutable SharedMutex mu;
    Map map ABSL_GUARDED_BY(mu);
    TtlIndex ttl ABSL_GUARDED_BY(mu);
    uint64_t last_version ABSL_GUARDED_BY(mu) = 0;
    // Eviction resumes sampling at this key: a clock hand over the map, so
    // successive samples cover the whole table.
    std::string evict_cursor ABSL_GUARDED_BY(mu);
    bool has_evict_cursor ABSL_GUARDED_BY(mu) = false;
    uint64_t compressed_values ABSL_GUARDED_BY(mu) = 0;
    uint64_t compressed_original ABSL_GUARDED_BY(mu) = 0;
    uint64_t compressed_stored ABSL_GUARDED_BY(mu) = 0;
    // Pinned entries held (live, or expired and not yet removed) and their
    // accounted bytes.
    uint64_t pinned_keys ABSL_GUARDED_BY(mu) = 0;
    uint64_t pinned_bytes ABSL_GUARDED_BY(mu) = 0;
    // With a replicator: stamps of deleted or expired keys, and the order
    // they were made in (for collection after tombstone_ttl_ms).
    absl::flat_hash_map<std::string, Tombstone, KeyHash, KeyEq> tombstones ABSL_GUARDED_BY(mu);
    std::deque<std::pair<int64_t, std::string>> tombstone_order ABSL_GUARDED_BY(mu);

    // Counted by readers under the shared lock, hence atomic.
    mutable std::atomic<uint64_t> hits{0};
    mutable std::atomic<uint64_t> misses{0};
    std::atomic<uint64_t> expired{0};
    std::atomic<uint64_t> evicted{0};

    // WaitForChange: a writer that changed a key of this shard bumps
    // wake_seq and notifies, but only while someone waits.
    mutable std::mutex wait_mu;
    mutable std::condition_variable wait_cv;
    mutable std::atomic<uint64_t> wake_seq{0};
    mutable std::atomic<int> waiters{0};
  };

  explicit Impl(const StoreOptions& o)
      : options_(o),
        clock_(o.clock != nullptr ? o.clock : SystemClock()),
        shard_mask_(o.shards - 1),
        shards_(new Shard[o.shards]) {
    if (o.sweep_interval_ms > 0) sweeper_ = std::thread([this] { SweepLoop(); });
  }

  ~Impl() {
    if (!sweeper_.joinable()) return;
    {
      std::lock_guard<std::mutex> l(sweep_mu_);
      stop_ = true;
    }
    sweep_cv_.notify_all();
    sweeper_.join();
  }

  const StoreOptions& options() const { return options_; }
  int64_t NowMs() const { return clock_->NowMs(); }

  // --- strings ------------------------------------------------------------

  Status GetInto(std::string_view key, absl::FunctionRef<char*(size_t)> alloc) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    std::string frame;  // a compressed value, decoded after the unlock
    uint64_t original_size = 0;
    {
      ReaderLock l(&s.mu);
      auto it = s.map.find(hk);
      const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
      if (it == s.map.end() || IsExpired(it->second, now)) {
        s.misses.fetch_add(1, std::memory_order_relaxed);
        if (it == s.map.end()) return Status::kNotFound;
        frame.clear();  // fall through to the lazy reap below
        original_size = UINT64_MAX;
      } else {
        const Entry& e = it->second;
        if (e.type != ValueType::kString) return Status::kWrongType;
        s.hits.fetch_add(1, std::memory_order_relaxed);
        if (lru()) e.last_access.store(now, std::memory_order_relaxed);
        if (!e.compressed) return Emit(e.value, false, e.original_size, alloc);
        frame = e.value;
        original_size = e.original_size;
      }
    }
    if (original_size == UINT64_MAX) {  // expired: remove it now (lazy expiry)
      ReapIfExpired(hk);
      return Status::kNotFound;
    }
    return Emit(frame, true, original_size, alloc);
  }

  Status GetIntoBuffer(std::string_view key, char* buf, size_t capacity, uint64_t* length) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    std::string frame;  // a compressed value that fits, decoded after the unlock
    {
      ReaderLock l(&s.mu);
      auto it = s.map.find(hk);
      const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
      if (it == s.map.end() || IsExpired(it->second, now)) {
        s.misses.fetch_add(1, std::memory_order_relaxed);
        if (it == s.map.end()) return Status::kNotFound;
      } else {
        const Entry& e = it->second;
        if (e.type != ValueType::kString) return Status::kWrongType;
        *length = e.original_size;
        // Measured only: the caller asks again with room, and that read
        // counts as the hit.
        if (e.original_size > capacity) return Status::kOk;
        s.hits.fetch_add(1, std::memory_order_relaxed);
        if (lru()) e.last_access.store(now, std::memory_order_relaxed);
        if (!e.compressed) {
          if (e.original_size != 0) std::memcpy(buf, e.value.data(), e.original_size);
          return Status::kOk;
        }
        frame = e.value;
      }
    }
    if (frame.empty()) {  // expired: remove it now (lazy expiry)
      ReapIfExpired(hk);
      return Status::kNotFound;
    }
    return ZstdDecompress(frame, buf, *length) ? Status::kOk : Status::kOutOfMemory;
  }

  Status Set(std::string_view key, std::string_view value, int64_t ttl_ms) {
    if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0) return Status::kInvalidArgument;
    Prepared p = Prepare(value);
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      const Status st = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        int64_t expires_at = 0;
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
          return Status::kInvalidArgument;
        }
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/false, now, shortfall, &changed);
      }();
      if (changed) Notify(s);
      return st;
    });
  }

  // A decision that may be made elsewhere: asks the replicator where
  // (`ask`), and decides here with `local` only when it says so.  An owner
  // that could not be asked is reported as such, never replaced by a local
  // guess.  Every outcome enum here has a kOwnerUnreachable.
  template <typename Outcome, typename Ask, typename Local>
  Outcome Decided(Ask ask, Local local) {
    if (options_.replicator != nullptr) {
      const Routed<Outcome> r = ask(*options_.replicator);
      switch (r.where) {
        case Routed<Outcome>::Where::kLocal: break;
        case Routed<Outcome>::Where::kOwner: return r.outcome;
        case Routed<Outcome>::Where::kOwnerUnreachable: return Outcome::kOwnerUnreachable;
      }
    }
    return local();
  }

  SetNxOutcome SetNx(std::string_view key, std::string_view value, int64_t ttl_ms) {
    return Decided<SetNxOutcome>(
        [&](Replicator& r) { return r.RouteSetNx(key, value, ttl_ms); },
        [&] { return SetNxLocal(key, value, ttl_ms); });
  }

  SetNxOutcome SetNxLocal(std::string_view key, std::string_view value, int64_t ttl_ms) {
    if (!KeyOk(key) || !ValueOk(value) || ttl_ms < 0) return SetNxOutcome::kInvalidArgument;
    Prepared p = Prepare(value);
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<SetNxOutcome>([&](uint64_t* shortfall) {
      bool changed = false;
      const SetNxOutcome out = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        int64_t expires_at = 0;
        if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
          return SetNxOutcome::kInvalidArgument;
        }
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        if (it != s.map.end()) return SetNxOutcome::kExists;
        // With a TTL this is a lock: pinned until it expires or is replaced.
        return PutLocked(s, it, hk, &p, expires_at, /*pinned=*/true, now, shortfall,
                         &changed) == Status::kOk
                   ? SetNxOutcome::kInserted
                   : SetNxOutcome::kOutOfMemory;
      }();
      if (changed) Notify(s);
      return out;
    });
  }

  Status Del(std::string_view key, int64_t* removed) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    {
      WriterLock l(&s.mu);
      auto it = FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
      *removed = it != s.map.end() ? 1 : 0;
      if (*removed == 1) {
        RemoveLocked(s, it);
        PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
        changed = true;
      }
    }
    if (changed) Notify(s);
    return Status::kOk;
  }

  DelIfEqOutcome DelIfEq(std::string_view key, std::string_view token) {
    return Decided<DelIfEqOutcome>(
        [&](Replicator& r) { return r.RouteDelIfEq(key, token); },
        [&] { return DelIfEqLocal(key, token); });
  }

  DelIfEqOutcome DelIfEqLocal(std::string_view key, std::string_view token) {
    if (!KeyOk(key) || !ValueOk(token)) return DelIfEqOutcome::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    const DelIfEqOutcome out = [&] {
      // The compare and the removal are one step under the write lock: no
      // other writer can replace the value between them.
      WriterLock l(&s.mu);
      auto it = FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
      if (it == s.map.end()) return DelIfEqOutcome::kNotMatched;
      if (it->second.type != ValueType::kString) return DelIfEqOutcome::kWrongType;
      if (!EqualsLocked(it->second, token)) return DelIfEqOutcome::kNotMatched;
      RemoveLocked(s, it);
      PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
      changed = true;
      return DelIfEqOutcome::kDeleted;
    }();
    if (changed) Notify(s);
    return out;
  }

  SetIfEqOutcome SetIfEq(std::string_view guard_key, std::string_view token,
                         std::string_view key, std::string_view value, int64_t ttl_ms) {
    return Decided<SetIfEqOutcome>(
        [&](Replicator& r) { return r.RouteSetIfEq(guard_key, token, key, value, ttl_ms); },
        [&] { return SetIfEqLocal(guard_key, token, key, value, ttl_ms); });
  }

  SetIfEqOutcome SetIfEqLocal(std::string_view guard_key, std::string_view token,
                              std::string_view key, std::string_view value, int64_t ttl_ms) {
    if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token) || !ValueOk(value) || ttl_ms < 0) {
      return SetIfEqOutcome::kInvalidArgument;
    }
    Prepared p = Prepare(value);
    const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
    Shard& g = ShardFor(hg);
    Shard& s = ShardFor(hk);
    return WithEviction<SetIfEqOutcome>([&](uint64_t* shortfall) {
      bool changed_g = false, changed_s = false;
      SetIfEqOutcome out;
      {
        PairLock l(this, &g, &s);
        out = SetIfEqLocked(g, s, hg, hk, token, &p, ttl_ms, shortfall, &changed_g, &changed_s);
      }
      if (changed_g) Notify(g);
      if (changed_s && &s != &g) Notify(s);
      return out;
    });
  }

  DelIfGuardEqOutcome DelIfGuardEq(std::string_view guard_key, std::string_view token,
                                   std::string_view key) {
    return Decided<DelIfGuardEqOutcome>(
        [&](Replicator& r) { return r.RouteDelIfGuardEq(guard_key, token, key); },
        [&] { return DelIfGuardEqLocal(guard_key, token, key); });
  }

  DelIfGuardEqOutcome DelIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                        std::string_view key) {
    if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token)) {
      return DelIfGuardEqOutcome::kInvalidArgument;
    }
    const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
    Shard& g = ShardFor(hg);
    Shard& s = ShardFor(hk);
    bool changed_g = false, changed_s = false;
    const DelIfGuardEqOutcome out = [&] {
      // The compare on the guard and the removal are one step under both
      // write locks: the guard cannot change hands between them.
      PairLock l(this, &g, &s);
      const int64_t now = clock_->NowMs();
      switch (GuardHoldsLocked(g, hg, token, now, &changed_g)) {
        case Guard::kHolds: break;
        case Guard::kNotMatched: return DelIfGuardEqOutcome::kNotMatched;
        case Guard::kWrongType: return DelIfGuardEqOutcome::kWrongType;
      }
      auto it = FindLiveForWriteLocked(s, hk, now, &changed_s);
      if (it == s.map.end()) return DelIfGuardEqOutcome::kAbsent;
      RemoveLocked(s, it);
      PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
      changed_s = true;
      return DelIfGuardEqOutcome::kDeleted;
    }();
    if (changed_g) Notify(g);
    if (changed_s && &s != &g) Notify(s);
    return out;
  }

  ExpireIfGuardEqOutcome ExpireIfGuardEq(std::string_view guard_key, std::string_view token,
                                         std::string_view key, int64_t ttl_ms) {
    return Decided<ExpireIfGuardEqOutcome>(
        [&](Replicator& r) { return r.RouteExpireIfGuardEq(guard_key, token, key, ttl_ms); },
        [&] { return ExpireIfGuardEqLocal(guard_key, token, key, ttl_ms); });
  }

  ExpireIfGuardEqOutcome ExpireIfGuardEqLocal(std::string_view guard_key, std::string_view token,
                                              std::string_view key, int64_t ttl_ms) {
    if (!KeyOk(guard_key) || !KeyOk(key) || !ValueOk(token) || ttl_ms < 0) {
      return ExpireIfGuardEqOutcome::kInvalidArgument;
    }
    const HashedKey hg = HashKey(guard_key), hk = HashKey(key);
    Shard& g = ShardFor(hg);
    Shard& s = ShardFor(hk);
    bool changed_g = false, changed_s = false;
    const ExpireIfGuardEqOutcome out = [&] {
      PairLock l(this, &g, &s);
      const int64_t now = clock_->NowMs();
      int64_t at = 0;
      if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &at)) return ExpireIfGuardEqOutcome::kInvalidArgument;
      switch (GuardHoldsLocked(g, hg, token, now, &changed_g)) {
        case Guard::kHolds: break;
        case Guard::kNotMatched: return ExpireIfGuardEqOutcome::kNotMatched;
        case Guard::kWrongType: return ExpireIfGuardEqOutcome::kWrongType;
      }
      auto it = FindLiveForWriteLocked(s, hk, now, &changed_s);
      if (it == s.map.end()) return ExpireIfGuardEqOutcome::kAbsent;
      if (SetExpiryLocked(s, it, at) != Status::kOk) return ExpireIfGuardEqOutcome::kOutOfMemory;
      PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
      changed_s = true;
      return ExpireIfGuardEqOutcome::kApplied;
    }();
    if (changed_g) Notify(g);
    if (changed_s && &s != &g) Notify(s);
    return out;
  }

  Status Exists(std::string_view key, bool* exists) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    *exists = it != s.map.end() && !IsExpired(it->second, NowFor(it->second));
    return Status::kOk;
  }

  Status IncrBy(std::string_view key, int64_t delta, int64_t* result) {
    if (options_.replicator != nullptr) {
      const Routed<IncrByReply> r = options_.replicator->RouteIncrBy(key, delta);
      switch (r.where) {
        case Routed<IncrByReply>::Where::kLocal: break;
        case Routed<IncrByReply>::Where::kOwner:
          if (r.outcome.status == Status::kOk) *result = r.outcome.value;
          return r.outcome.status;
        case Routed<IncrByReply>::Where::kOwnerUnreachable: return Status::kOwnerUnreachable;
      }
    }
    return IncrByLocal(key, delta, result);
  }

  Status IncrByLocal(std::string_view key, int64_t delta, int64_t* result) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      const Status st = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        int64_t current = 0;
        int64_t expires_at = 0;
        bool pinned = false;
        if (it != s.map.end()) {
          const Entry& e = it->second;
          if (e.type != ValueType::kString) return Status::kWrongType;
          if (!ReadInt64Locked(e, &current)) return Status::kNotInteger;
          expires_at = e.expires_at;  // INCR keeps the TTL, and so a lock's pin
          pinned = e.pinned;
        }
        int64_t next;
        if (__builtin_add_overflow(current, delta, &next)) return Status::kOverflow;
        Prepared p;
        p.stored = std::to_string(next);
        p.original_size = p.stored.size();
        const Status put =
            PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, &changed);
        if (put == Status::kOk) *result = next;
        return put;
      }();
      if (changed) Notify(s);
      return st;
    });
  }

  Status SetWith(std::string_view key, std::string_view value, const SetOptions& o,
                 SetResult* r) {
    if (!KeyOk(key) || !ValueOk(value)) return Status::kInvalidArgument;
    Prepared p = Prepare(value);
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    std::string frame;  // the old value as stored, decoded after the unlock
    bool old_compressed = false;
    uint64_t old_size = 0;
    const Status st = WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      *r = SetResult{};
      const Status inner = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        const bool exists = it != s.map.end();
        if (o.get_old && exists) {
          if (it->second.type != ValueType::kString) return Status::kWrongType;
          r->had_old = true;
          frame = it->second.value;
          old_compressed = it->second.compressed;
          old_size = it->second.original_size;
        }
        if ((o.when == SetOptions::When::kIfAbsent && exists) ||
            (o.when == SetOptions::When::kIfPresent && !exists)) {
          return Status::kOk;
        }
        int64_t expires_at = 0;
        if (o.expiry == SetOptions::Expiry::kAt) expires_at = o.expires_at_ms;
        if (o.expiry == SetOptions::Expiry::kKeep && exists) expires_at = it->second.expires_at;
        // NX with an expiry takes a lock as SetNx does; any other SET
        // replaces the entry, and a lock's pin goes with it.
        const bool pinned = o.when == SetOptions::When::kIfAbsent;
        const Status put =
            PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, &changed);
        r->written = put == Status::kOk;
        return put;
      }();
      if (changed) Notify(s);
      return inner;
    });
    if (st == Status::kOk && r->had_old) {
      return Emit(frame, old_compressed, old_size, [r](size_t n) {
        r->old.resize(n);
        return r->old.data();
      });
    }
    return st;
  }

  Status MSet(const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
              bool only_if_none_exist, bool* written) {
    *written = false;
    // The last value of a repeated key wins, as in Redis.
    std::vector<size_t> order;  // indexes into pairs, one per distinct key
    {
      absl::flat_hash_map<std::string_view, size_t> last;
      for (size_t i = 0; i < pairs.size(); ++i) {
        if (!KeyOk(pairs[i].first) || !ValueOk(pairs[i].second)) return Status::kInvalidArgument;
        last[pairs[i].first] = i;
      }
      for (size_t i = 0; i < pairs.size(); ++i) {
        if (last[pairs[i].first] == i) order.push_back(i);
      }
    }
    std::vector<HashedKey> keys;
    std::vector<Prepared> values;
    std::vector<Shard*> shards;
    for (size_t i : order) {
      keys.push_back(HashKey(pairs[i].first));
      values.push_back(Prepare(pairs[i].second));
      shards.push_back(&ShardFor(keys.back()));
    }
    return WithEviction<Status>([&](uint64_t* shortfall) {
      std::vector<Shard*> changed;
      Status st;
      {
        MultiLock l(this, shards);
        st = MSetLocked(keys, &values, shards, only_if_none_exist, written, shortfall, &changed);
      }
      for (Shard* c : changed) Notify(*c);
      return st;
    });
  }

  Status GetDel(std::string_view key, std::string* value) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    std::string frame;
    bool compressed = false;
    uint64_t size = 0;
    const Status st = [&] {
      WriterLock l(&s.mu);
      auto it = FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
      if (it == s.map.end()) return Status::kNotFound;
      if (it->second.type != ValueType::kString) return Status::kWrongType;
      Entry& e = it->second;
      compressed = e.compressed;
      size = e.original_size;
      // The entry goes anyway: settle its compression figures, then take its
      // bytes instead of copying them.
      TrackCompressedLocked(s, e, false);
      e.compressed = false;
      frame = std::move(e.value);
      RemoveLocked(s, it);
      PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
      changed = true;
      return Status::kOk;
    }();
    if (changed) Notify(s);
    if (st != Status::kOk) return st;
    return Emit(frame, compressed, size, [value](size_t n) {
      value->resize(n);
      return value->data();
    });
  }

  Status GetEx(std::string_view key, SetOptions::Expiry expiry, int64_t at_ms,
               std::string* value) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    std::string frame;
    bool compressed = false;
    uint64_t size = 0;
    const Status st = [&] {
      WriterLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      auto it = FindLiveForWriteLocked(s, hk, now, &changed);
      if (it == s.map.end()) return Status::kNotFound;
      if (it->second.type != ValueType::kString) return Status::kWrongType;
      frame = it->second.value;
      compressed = it->second.compressed;
      size = it->second.original_size;
      if (expiry == SetOptions::Expiry::kAt && at_ms <= now) {
        RemoveLocked(s, it);
        PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
        changed = true;
      } else if (expiry != SetOptions::Expiry::kKeep) {
        const int64_t target = expiry == SetOptions::Expiry::kAt ? at_ms : 0;
        if (it->second.expires_at != target) {
          const Status r = SetExpiryLocked(s, it, target);
          if (r != Status::kOk) return r;
          PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
          changed = true;
        }
      }
      return Status::kOk;
    }();
    if (changed) Notify(s);
    if (st != Status::kOk) return st;
    return Emit(frame, compressed, size, [value](size_t n) {
      value->resize(n);
      return value->data();
    });
  }

  // APPEND and SETRANGE build the new value outside the lock from a copy,
  // then store it only if the key's version did not move meanwhile (else
  // they start over): a large value is never copied or compressed under the
  // lock, and the result is as if the operation ran in one step.
  template <typename Edit>
  Status EditString(std::string_view key, Edit edit, int64_t* length) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    for (;;) {
      uint64_t version = 0;
      std::string current;
      bool exists = false;
      {
        std::string frame;
        bool compressed = false;
        uint64_t size = 0;
        {
          ReaderLock l(&s.mu);
          auto it = s.map.find(hk);
          if (it != s.map.end() && !IsExpired(it->second, NowFor(it->second))) {
            if (it->second.type != ValueType::kString) return Status::kWrongType;
            exists = true;
            version = it->second.version;
            frame = it->second.value;
            compressed = it->second.compressed;
            size = it->second.original_size;
          }
        }
        if (exists) {
          const Status st = Emit(frame, compressed, size, [&current](size_t n) {
            current.resize(n);
            return current.data();
          });
          if (st != Status::kOk) return st;
        }
      }
      std::string next;
      bool store = true;
      const Status es = edit(exists, current, &next, &store);
      if (es != Status::kOk) return es;
      if (!ValueOk(next)) return Status::kInvalidArgument;
      *length = static_cast<int64_t>(next.size());
      if (!store) return Status::kOk;
      Prepared p = Prepare(next);
      bool retry = false;
      const Status st = WithEviction<Status>([&](uint64_t* shortfall) {
        bool changed = false;
        const Status inner = [&] {
          WriterLock l(&s.mu);
          const int64_t now = clock_->NowMs();
          auto it = FindLiveForWriteLocked(s, hk, now, &changed);
          const uint64_t now_version = it == s.map.end() ? 0 : it->second.version;
          if (now_version != version) {
            retry = true;
            return Status::kOk;
          }
          // An edit in place keeps the TTL, and so a lock's pin.
          const int64_t keep = it == s.map.end() ? 0 : it->second.expires_at;
          const bool pinned = it != s.map.end() && it->second.pinned;
          return PutLocked(s, it, hk, &p, keep, pinned, now, shortfall, &changed);
        }();
        if (changed) Notify(s);
        return inner;
      });
      if (!retry) return st;
    }
  }

  Status Append(std::string_view key, std::string_view value, int64_t* length) {
    return EditString(key,
                      [&](bool, const std::string& current, std::string* next, bool*) {
                        if (current.size() + value.size() > options_.max_value_size) {
                          return Status::kInvalidArgument;
                        }
                        next->reserve(current.size() + value.size());
                        next->append(current).append(value);
                        return Status::kOk;
                      },
                      length);
  }

  Status SetRange(std::string_view key, uint64_t offset, std::string_view value,
                  int64_t* length) {
    return EditString(key,
                      [&](bool exists, const std::string& current, std::string* next,
                          bool* store) {
                        if (value.empty()) {  // nothing to write: report the length
                          *next = current;
                          *store = false;
                          return Status::kOk;
                        }
                        if (offset > options_.max_value_size ||
                            offset + value.size() > options_.max_value_size) {
                          return Status::kInvalidArgument;
                        }
                        (void)exists;
                        *next = current;
                        if (next->size() < offset + value.size()) {
                          next->resize(offset + value.size(), '\0');
                        }
                        next->replace(offset, value.size(), value);
                        return Status::kOk;
                      },
                      length);
  }

  Status IncrByFloat(std::string_view key, long double delta, std::string* result) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      const Status st = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        long double current = 0;
        int64_t expires_at = 0;
        bool pinned = false;
        if (it != s.map.end()) {
          const Entry& e = it->second;
          if (e.type != ValueType::kString) return Status::kWrongType;
          std::string text;
          if (!ReadSmallLocked(e, kMaxNumberText, &text) ||
              !ParseLongDouble(text, &current)) {
            return Status::kNotFloat;
          }
          expires_at = e.expires_at;
          pinned = e.pinned;
        }
        const long double next = current + delta;
        if (std::isnan(next) || std::isinf(next)) return Status::kNanOrInfinity;
        Prepared p;
        p.stored = FormatLongDouble(next);
        p.original_size = p.stored.size();
        *result = p.stored;
        return PutLocked(s, it, hk, &p, expires_at, pinned, now, shortfall, &changed);
      }();
      if (changed) Notify(s);
      return st;
    });
  }

  // --- hashes -------------------------------------------------------------

  Status HSet(std::string_view key,
              const std::vector<std::pair<std::string_view, std::string_view>>& fields,
              bool only_if_absent, int64_t* added) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    for (const auto& [f, v] : fields) {
      if (!ValueOk(f) || !ValueOk(v)) return Status::kInvalidArgument;
    }
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      const Status st = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        if (it != s.map.end() && it->second.type != ValueType::kHash) return Status::kWrongType;
        return HSetLocked(s, it, hk, fields, only_if_absent, now, added, shortfall, &changed);
      }();
      if (changed) Notify(s);
      return st;
    });
  }

  // Runs `read` on the live hash at key (nullptr when missing), under the
  // shared lock.  kWrongType for a string.
  template <typename Read>
  Status ReadHash(std::string_view key, Read read) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
      read(static_cast<const HashFields*>(nullptr));
      return Status::kOk;
    }
    if (it->second.type != ValueType::kHash) return Status::kWrongType;
    if (lru()) it->second.last_access.store(clock_->NowMs(), std::memory_order_relaxed);
    read(static_cast<const HashFields*>(it->second.hash.get()));
    return Status::kOk;
  }

  Status HGet(std::string_view key, std::string_view field, std::string* value) const {
    bool found = false;
    const Status st = ReadHash(key, [&](const HashFields* h) {
      if (h == nullptr) return;
      auto f = h->find(field);
      if (f == h->end()) return;
      found = true;
      *value = f->second;
    });
    if (st != Status::kOk) return st;
    return found ? Status::kOk : Status::kNotFound;
  }

  Status HMGet(std::string_view key, const std::vector<std::string_view>& fields,
               std::vector<std::optional<std::string>>* values) const {
    values->assign(fields.size(), std::nullopt);
    return ReadHash(key, [&](const HashFields* h) {
      if (h == nullptr) return;
      for (size_t i = 0; i < fields.size(); ++i) {
        auto f = h->find(fields[i]);
        if (f != h->end()) (*values)[i] = f->second;
      }
    });
  }

  Status HGetAll(std::string_view key,
                 std::vector<std::pair<std::string, std::string>>* fields) const {
    fields->clear();
    return ReadHash(key, [&](const HashFields* h) {
      if (h == nullptr) return;
      fields->reserve(h->size());
      for (const auto& [f, v] : *h) fields->emplace_back(f, v);
    });
  }

  Status HLen(std::string_view key, int64_t* count) const {
    return ReadHash(key, [&](const HashFields* h) {
      *count = h == nullptr ? 0 : static_cast<int64_t>(h->size());
    });
  }

  Status HExists(std::string_view key, std::string_view field, bool* exists) const {
    return ReadHash(key, [&](const HashFields* h) {
      *exists = h != nullptr && h->find(field) != h->end();
    });
  }

  Status HStrLen(std::string_view key, std::string_view field, int64_t* length) const {
    return ReadHash(key, [&](const HashFields* h) {
      *length = 0;
      if (h == nullptr) return;
      auto f = h->find(field);
      if (f != h->end()) *length = static_cast<int64_t>(f->second.size());
    });
  }

  Status HDel(std::string_view key, const std::vector<std::string_view>& fields,
              int64_t* removed) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    *removed = 0;
    const Status st = [&] {
      WriterLock l(&s.mu);
      auto it = FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
      if (it == s.map.end()) return Status::kOk;
      Entry& e = it->second;
      if (e.type != ValueType::kHash) return Status::kWrongType;
      uint64_t freed = 0;
      for (std::string_view f : fields) {
        auto fi = e.hash->find(f);
        if (fi == e.hash->end()) continue;
        freed += FieldMem(fi->first.size(), fi->second.size());
        e.hash->erase(fi);
        ++*removed;
      }
      if (*removed == 0) return Status::kOk;
      changed = true;
      if (e.hash->empty()) {  // the last field takes the key with it
        RemoveLocked(s, it);
        PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
        return Status::kOk;
      }
      Release(e.mem_size - freed, e.mem_size);
      e.mem_size -= freed;
      e.version = ++s.last_version;
      PublishLocked(s, Mutation::Kind::kSet, key, &e);
      return Status::kOk;
    }();
    if (changed) Notify(s);
    return st;
  }

  // HINCRBY and HINCRBYFLOAT: `update` turns the field's current text (or
  // nullptr when missing) into the new text, or returns an error status.
  template <typename Update>
  Status HUpdateField(std::string_view key, std::string_view field, Update update) {
    if (!KeyOk(key) || !ValueOk(field)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      const Status st = [&] {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        auto it = FindLiveForWriteLocked(s, hk, now, &changed);
        if (it != s.map.end() && it->second.type != ValueType::kHash) return Status::kWrongType;
        const std::string* current = nullptr;
        if (it != s.map.end()) {
          auto fi = it->second.hash->find(field);
          if (fi != it->second.hash->end()) current = &fi->second;
        }
        std::string next;
        const Status us = update(current, &next);
        if (us != Status::kOk) return us;
        int64_t added = 0;
        const std::vector<std::pair<std::string_view, std::string_view>> one = {{field, next}};
        return HSetLocked(s, it, hk, one, false, now, &added, shortfall, &changed);
      }();
      if (changed) Notify(s);
      return st;
    });
  }

  Status HIncrBy(std::string_view key, std::string_view field, int64_t delta, int64_t* result) {
    return HUpdateField(key, field, [&](const std::string* current, std::string* next) {
      int64_t v = 0;
      if (current != nullptr && !ParseInt64(*current, &v)) return Status::kNotInteger;
      if (__builtin_add_overflow(v, delta, result)) return Status::kOverflow;
      *next = std::to_string(*result);
      return Status::kOk;
    });
  }

  Status HIncrByFloat(std::string_view key, std::string_view field, long double delta,
                      std::string* result) {
    return HUpdateField(key, field, [&](const std::string* current, std::string* next) {
      long double v = 0;
      if (current != nullptr && !ParseLongDouble(*current, &v)) return Status::kNotFloat;
      const long double sum = v + delta;
      if (std::isnan(sum) || std::isinf(sum)) return Status::kNanOrInfinity;
      *next = FormatLongDouble(sum);
      *result = *next;
      return Status::kOk;
    });
  }

  // --- expiry -------------------------------------------------------------

  Status Expire(std::string_view key, int64_t ttl_ms, bool* applied) {
    if (ttl_ms <= 0) return ExpireAt(key, std::numeric_limits<int64_t>::min(), applied);
    int64_t at = 0;
    if (!ExpiryFrom(clock_->NowMs(), ttl_ms, &at)) return Status::kInvalidArgument;
    return ExpireAt(key, at, applied);
  }

  Status ExpireAt(std::string_view key, int64_t at_ms, bool* applied) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    const Status st = [&] {
      WriterLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      auto it = FindLiveForWriteLocked(s, hk, now, &changed);
      *applied = it != s.map.end();
      if (!*applied) return Status::kOk;
      if (at_ms <= now) {  // a time already past deletes, as in Redis
        RemoveLocked(s, it);
        PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
        changed = true;
        return Status::kOk;
      }
      const Status r = SetExpiryLocked(s, it, at_ms);
      if (r == Status::kOk) {
        PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
        changed = true;
      }
      return r;
    }();
    if (changed) Notify(s);
    return st;
  }

  Status Persist(std::string_view key, bool* applied) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    {
      WriterLock l(&s.mu);
      auto it = FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
      *applied = it != s.map.end() && it->second.expires_at != 0;
      if (*applied) {
        SetExpiryLocked(s, it, 0);  // removing a TTL allocates nothing
        PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
        changed = true;
      }
    }
    if (changed) Notify(s);
    return Status::kOk;
  }

  Status Pttl(std::string_view key, int64_t* ttl_ms) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    if (it == s.map.end()) {
      *ttl_ms = -2;
    } else if (it->second.expires_at == 0) {
      *ttl_ms = -1;
    } else {
      const int64_t now = clock_->NowMs();
      *ttl_ms = IsExpired(it->second, now) ? -2 : it->second.expires_at - now;
    }
    return Status::kOk;
  }

  // --- keyspace -----------------------------------------------------------

  Status Keys(std::string_view pattern, std::vector<std::string>* out) const {
    const bool all = pattern == "*";
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      for (const auto& [k, e] : s.map) {
        if (IsExpired(e, now)) continue;
        if (all || GlobMatch(pattern, k)) out->push_back(k);
      }
    }
    return Status::kOk;
  }

  uint64_t DbSize() const {
    uint64_t n = 0;
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      ReaderLock l(&s.mu);
      n += LiveCountLocked(s, clock_->NowMs());
    }
    return n;
  }

  void Flush() {
    Stamp stamp;
    if (options_.replicator != nullptr) {
      stamp = options_.replicator->NextStamp();
      RaiseFlushStamp(stamp);
      ClearOlderThan(stamp);  // the newest stamp this node knows: everything
    } else {
      ClearShards();
    }
    if (options_.replicator != nullptr) {
      Mutation m;
      m.kind = Mutation::Kind::kFlush;
      m.stamp = stamp;
      options_.replicator->Publish(m);
    }
  }

  void RaiseFlushStamp(Stamp stamp) {
    std::lock_guard<std::mutex> l(flush_mu_);
    if (flush_stamp_ < stamp) flush_stamp_ = stamp;
  }
  Stamp FlushStamp() const {
    std::lock_guard<std::mutex> l(flush_mu_);
    return flush_stamp_;
  }

  // Removes every entry and tombstone, a shard at a time.
  void ClearShards() {
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      bool had = false;
      {
        WriterLock l(&s.mu);
        had = !s.map.empty();
        uint64_t mem = 0, tomb = 0;
        for (const auto& kv : s.map) mem += kv.second.mem_size;
        for (const auto& t : s.tombstones) tomb += TombstoneMem(t.first.size());
        used_.fetch_sub(mem + tomb, std::memory_order_relaxed);
        tombstone_used_.fetch_sub(tomb, std::memory_order_relaxed);
        pinned_used_.fetch_sub(s.pinned_bytes, std::memory_order_relaxed);
        s.pinned_keys = s.pinned_bytes = 0;
        Map().swap(s.map);  // swap, not clear(): the table's memory goes too
        TtlIndex().swap(s.ttl);
        s.tombstones.clear();
        s.tombstone_order.clear();
        s.has_evict_cursor = false;
        s.compressed_values = s.compressed_original = s.compressed_stored = 0;
      }
      if (had) Notify(s);
    }
  }

  // --- replication --------------------------------------------------------

  // Removes the entries and tombstones whose stamp is older than `stamp`:
  // a flush removes what was written before it, in the cluster's order,
  // and keeps what was written after it (on another node, say).
  void ClearOlderThan(Stamp stamp) {
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      bool changed = false;
      {
        WriterLock l(&s.mu);
        for (auto it = s.map.begin(); it != s.map.end();) {
          auto next = std::next(it);
          if (it->second.stamp < stamp) {
            RemoveLocked(s, it);
            changed = true;
          }
          it = next;
        }
        for (auto it = s.tombstones.begin(); it != s.tombstones.end();) {
          auto next = std::next(it);
          if (it->second.stamp < stamp) {
            AccountTombstone(it->first.size(), false);
            s.tombstones.erase(it);
          }
          it = next;
        }
        s.has_evict_cursor = false;
      }
      if (changed) Notify(s);
    }
  }

  bool ApplyReplicated(const Mutation& m) {
    if (m.kind == Mutation::Kind::kFlush) {
      if (!(FlushStamp() < m.stamp)) return false;
      RaiseFlushStamp(m.stamp);
      ClearOlderThan(m.stamp);
      return true;
    }
    if (!KeyOk(m.key)) return false;
    // The new state, built outside the lock.
    Entry fresh;
    const bool removal = m.kind == Mutation::Kind::kDelete;
    if (!removal) {
      fresh.type = m.type;
      fresh.expires_at = m.expires_at_ms;
      if (m.type == ValueType::kHash) {
        fresh.hash = std::make_unique<HashFields>();
        if (!DecodeHash(m.value, fresh.hash.get())) return false;
        uint64_t fields = 0;
        for (const auto& [f, v] : *fresh.hash) fields += FieldMem(f.size(), v.size());
        fresh.mem_size = HashEntryMem(m.key.size(), fields, fresh.expires_at != 0);
      } else {
        fresh.value.assign(m.value.data(), m.value.size());
        fresh.compressed = m.compressed;
        fresh.original_size = m.compressed ? m.original_size : m.value.size();
        fresh.mem_size = EntryMem(m.key.size(), fresh.value.size(), fresh.expires_at != 0);
        // The owner's lock is this node's lock too: should this node become
        // the owner, it must not have evicted it.
        fresh.pinned = m.pinned && fresh.expires_at != 0;
      }
      fresh.stamp = m.stamp;
    }
    const HashedKey hk = HashKey(m.key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    {
      WriterLock l(&s.mu);
      if (!(FlushStamp() < m.stamp)) return false;  // a later flush removed it
      const int64_t now = clock_->NowMs();
      auto it = s.map.find(hk);
      Stamp current;
      if (it != s.map.end()) {
        current = it->second.stamp;
      } else if (auto t = s.tombstones.find(hk); t != s.tombstones.end()) {
        current = t->second.stamp;
      }
      if (!(current < m.stamp)) return false;  // this node has the same or newer
      if (removal || (fresh.expires_at != 0 && fresh.expires_at <= now)) {
        if (it != s.map.end()) RemoveLocked(s, it);
        TombstoneLocked(s, m.key, m.stamp, now);
      } else {
        uint64_t unused = 0;
        if (!InstallLocked(s, &it, hk, &fresh, /*force=*/true, now, &unused)) return false;
        ForgetTombstoneLocked(s, m.key);
      }
      changed = true;
    }
    Notify(s);
    return changed;
  }

  void ForgetLocal(std::string_view key, const Stamp& stamp) {
    if (!KeyOk(key)) return;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    {
      WriterLock l(&s.mu);
      auto it = s.map.find(hk);
      if (it != s.map.end() && it->second.stamp == stamp) {
        RemoveLocked(s, it);
        changed = true;
      }
      auto t = s.tombstones.find(hk);
      if (t != s.tombstones.end() && t->second.stamp == stamp) ForgetTombstoneLocked(s, key);
    }
    if (changed) Notify(s);
  }

  void ConfirmLocal(std::string_view key, const Stamp& stamp) {
    if (!KeyOk(key)) return;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    WriterLock l(&s.mu);
    auto it = s.map.find(hk);
    if (it != s.map.end() && it->second.stamp == stamp) it->second.tentative = false;
    auto t = s.tombstones.find(hk);
    if (t != s.tombstones.end() && t->second.stamp == stamp) t->second.tentative = false;
  }

  void ForEachForSync(absl::FunctionRef<void(const Mutation&)> fn) const {
    const Stamp flushed = FlushStamp();
    if (!flushed.empty()) {
      Mutation m;
      m.kind = Mutation::Kind::kFlush;
      m.stamp = flushed;
      fn(m);
    }
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      for (const auto& [k, e] : s.map) {
        if (IsExpired(e, now) || e.tentative) continue;
        Mutation m;
        m.kind = Mutation::Kind::kSet;
        m.key = k;
        m.type = e.type;
        std::string encoded;
        if (e.type == ValueType::kHash) {
          encoded = EncodeHash(*e.hash);
          m.value = encoded;
        } else {
          m.value = e.value;
        }
        m.compressed = e.compressed;
        m.original_size = e.original_size;
        m.expires_at_ms = e.expires_at;
        m.version = e.version;
        m.stamp = e.stamp;
        m.pinned = e.pinned;
        fn(m);
      }
      for (const auto& [k, t] : s.tombstones) {
        if (t.tentative) continue;
        Mutation m;
        m.kind = Mutation::Kind::kDelete;
        m.key = k;
        m.stamp = t.stamp;
        fn(m);
      }
    }
  }

  uint64_t TombstoneCount() const {
    uint64_t n = 0;
    for (size_t i = 0; i <= shard_mask_; ++i) {
      ReaderLock l(&shards_[i].mu);
      n += shards_[i].tombstones.size();
    }
    return n;
  }

  Status Rename(std::string_view src, std::string_view dst, bool only_if_absent,
                bool* renamed) {
    if (!KeyOk(src) || !KeyOk(dst)) return Status::kInvalidArgument;
    const HashedKey hs = HashKey(src), hd = HashKey(dst);
    Shard& a = ShardFor(hs);
    Shard& b = ShardFor(hd);
    return WithEviction<Status>([&](uint64_t* shortfall) {
      bool changed = false;
      Status st;
      {
        PairLock l(this, &a, &b);
        st = RenameLocked(a, b, hs, hd, only_if_absent, renamed, shortfall, &changed);
      }
      if (changed) {
        Notify(a);
        if (&a != &b) Notify(b);
      }
      return st;
    });
  }

  Status ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions, bool* applied) {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    bool changed = false;
    const Status st = [&] {
      WriterLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      auto it = FindLiveForWriteLocked(s, hk, now, &changed);
      *applied = false;
      if (it == s.map.end()) return Status::kOk;
      const int64_t current = it->second.expires_at;  // 0: never
      if ((conditions & kExpireNx) && current != 0) return Status::kOk;
      if ((conditions & kExpireXx) && current == 0) return Status::kOk;
      if ((conditions & kExpireGt) && (current == 0 || at_ms <= current)) return Status::kOk;
      if ((conditions & kExpireLt) && current != 0 && at_ms >= current) return Status::kOk;
      *applied = true;
      changed = true;
      if (at_ms <= now) {
        RemoveLocked(s, it);
        PublishLocked(s, Mutation::Kind::kDelete, key, nullptr);
        return Status::kOk;
      }
      const Status r = SetExpiryLocked(s, it, at_ms);
      if (r == Status::kOk) PublishLocked(s, Mutation::Kind::kExpire, key, &it->second);
      return r;
    }();
    if (changed) Notify(s);
    return st;
  }

  Status RandomKey(std::string* key) const {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const size_t n = shard_mask_ + 1;
    const size_t start = rng() & shard_mask_;
    for (size_t k = 0; k < n; ++k) {
      Shard& s = shards_[(start + k) & shard_mask_];
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      const size_t size = s.map.size();
      if (size == 0) continue;
      // A random position, then the first live entry from there (wrapping).
      auto it = s.map.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % size));
      for (size_t tried = 0; tried < size; ++tried) {
        if (!IsExpired(it->second, now)) {
          *key = it->first;
          return Status::kOk;
        }
        if (++it == s.map.end()) it = s.map.begin();
      }
    }
    return Status::kNotFound;
  }

  Status Scan(uint64_t cursor, std::string_view pattern, size_t count,
              std::optional<ValueType> type, std::vector<std::string>* keys,
              uint64_t* next) const {
    // The cursor is the index of the next shard to visit.  Shards are
    // visited whole, so a key present for the whole walk is met exactly
    // once however the tables grow or shrink between steps.
    *next = 0;
    if (cursor > shard_mask_) return Status::kOk;
    size_t visited = 0;
    for (uint64_t i = cursor; i <= shard_mask_; ++i) {
      {
        Shard& s = shards_[i];
        ReaderLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        for (const auto& [k, e] : s.map) {
          ++visited;
          if (IsExpired(e, now)) continue;
          if (type && e.type != *type) continue;
          if (!pattern.empty() && pattern != "*" && !GlobMatch(pattern, k)) continue;
          keys->push_back(k);
        }
      }
      if (visited >= count && i < shard_mask_) {
        *next = i + 1;
        return Status::kOk;
      }
    }
    return Status::kOk;
  }

  // --- waiting ------------------------------------------------------------

  Status WaitForChange(std::string_view key, uint64_t last_version, int64_t timeout_ms,
                       WaitResult* r) const {
    if (!KeyOk(key) || timeout_ms < 0) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    using Steady = std::chrono::steady_clock;
    // steady_clock counts nanoseconds in an int64: cap the timeout (at about
    // a century) so that now + timeout cannot overflow.
    constexpr int64_t kMaxTimeoutMs = int64_t{100} * 365 * 24 * 3600 * 1000;
    const auto deadline =
        Steady::now() + std::chrono::milliseconds(std::min(timeout_ms, kMaxTimeoutMs));
    std::string frame;
    bool compressed = false;
    uint64_t original_size = 0;
    r->changed = r->found = false;
    r->value.clear();

    // Registered before the first look, so a writer that changes the key
    // after that look sees a waiter and notifies (see Notify).
    s.waiters.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      const uint64_t seq = s.wake_seq.load(std::memory_order_seq_cst);
      uint64_t version = 0;
      int64_t expires_in = 0;  // ms until the live entry expires, 0 = never
      {
        ReaderLock l(&s.mu);
        auto it = s.map.find(hk);
        const int64_t now = it == s.map.end() ? 0 : NowFor(it->second);
        if (it != s.map.end() && !IsExpired(it->second, now)) {
          const Entry& e = it->second;
          version = e.version;
          if (e.expires_at != 0) expires_in = e.expires_at - now;
          if (version != last_version && e.type == ValueType::kString) {
            r->found = true;
            frame = e.value;
            compressed = e.compressed;
            original_size = e.original_size;
          }
        }
      }
      r->version = version;
      if (version != last_version) {
        r->changed = true;
        break;
      }
      const auto steady_now = Steady::now();
      if (steady_now >= deadline) break;
      auto wake_at = deadline;
      if (expires_in > 0) {  // its expiry moves the version too
        wake_at = std::min(wake_at, steady_now + std::chrono::milliseconds(expires_in));
      }
      std::unique_lock<std::mutex> l(s.wait_mu);
      s.wait_cv.wait_until(l, wake_at, [&] {
        return s.wake_seq.load(std::memory_order_seq_cst) != seq;
      });
    }
    s.waiters.fetch_sub(1, std::memory_order_seq_cst);

    if (!r->found) return Status::kOk;
    return Emit(frame, compressed, original_size, [r](size_t n) {
      r->value.resize(n);
      return r->value.data();
    });
  }

  // --- introspection ------------------------------------------------------

  Status Inspect(std::string_view key, EntryInfo* info) const {
    if (!KeyOk(key)) return Status::kInvalidArgument;
    const HashedKey hk = HashKey(key);
    Shard& s = ShardFor(hk);
    ReaderLock l(&s.mu);
    auto it = s.map.find(hk);
    if (it == s.map.end() || IsExpired(it->second, NowFor(it->second))) {
      return Status::kNotFound;
    }
    const Entry& e = it->second;
    info->type = e.type;
    info->compressed = e.compressed;
    info->value_size = e.type == ValueType::kHash ? e.hash->size() : e.original_size;
    info->stored_size = e.value.size();
    info->mem_size = e.mem_size;
    info->version = e.version;
    info->expires_at_ms = e.expires_at;
    info->stamp = e.stamp;
    info->pinned = e.pinned;
    return Status::kOk;
  }

  StoreStats Stats() const {
    StoreStats st;
    st.memory_limit = options_.memory_limit;
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      st.hits += s.hits.load(std::memory_order_relaxed);
      st.misses += s.misses.load(std::memory_order_relaxed);
      st.expired += s.expired.load(std::memory_order_relaxed);
      st.evicted += s.evicted.load(std::memory_order_relaxed);
      ReaderLock l(&s.mu);
      const int64_t now = clock_->NowMs();
      const uint64_t live = LiveCountLocked(s, now);
      st.keys += live;
      st.keys_with_ttl += s.ttl.size() - (s.map.size() - live);
      st.compressed_values += s.compressed_values;
      st.compressed_original_bytes += s.compressed_original;
      st.compressed_stored_bytes += s.compressed_stored;
      // Locks that expired but were not removed yet are absent: not counted.
      uint64_t pinned_keys = s.pinned_keys, pinned_bytes = s.pinned_bytes;
      for (auto t = s.ttl.begin(); pinned_keys > 0 && t != s.ttl.end() && t->at <= now; ++t) {
        auto it = s.map.find(std::string_view(t->key));
        if (it != s.map.end() && it->second.pinned) {
          pinned_keys--;
          pinned_bytes -= it->second.mem_size;
        }
      }
      st.pinned_keys += pinned_keys;
      st.pinned_bytes += pinned_bytes;
    }
    st.memory_used = used_.load(std::memory_order_relaxed);
    return st;
  }

  // --- expiry sweeping ----------------------------------------------------

  // Removes up to `budget` expired entries from each shard, earliest expiry
  // first; *more is set when a shard had more left.  With the ordered index
  // nothing has to be sampled: every entry removed here is expired.
  size_t Sweep(size_t budget, bool* more) {
    size_t total = 0;
    for (size_t i = 0; i <= shard_mask_; ++i) {
      Shard& s = shards_[i];
      size_t removed = 0;
      {
        WriterLock l(&s.mu);
        const int64_t now = clock_->NowMs();
        while (!s.ttl.empty() && s.ttl.begin()->at <= now) {
          if (removed == budget) {
            *more = true;
            break;
          }
          auto it = s.map.find(std::string_view(s.ttl.begin()->key));
          ExpireLocked(s, it, now);  // erases the index node too
          ++removed;
        }
        CollectTombstonesLocked(s, now);
      }
      if (removed > 0) Notify(s);
      total += removed;
    }
    return total;
  }

 private:
  static constexpr int kMaxEvictionRounds = 16;
  // A shortfall no eviction can cover (see Reserve).
  static constexpr uint64_t kNeverFits = std::numeric_limits<uint64_t>::max();

  // Locks two shards in index order (once when they are the same shard), so
  // that two-key operations cannot deadlock each other.
  class ABSL_SCOPED_LOCKABLE PairLock {
   public:
    PairLock(const Impl* impl, Shard* a, Shard* b) ABSL_EXCLUSIVE_LOCK_FUNCTION(a->mu, b->mu)
        ABSL_NO_THREAD_SAFETY_ANALYSIS : first_(a), second_(b) {
      if (impl->IndexOf(a) > impl->IndexOf(b)) std::swap(first_, second_);
      first_->mu.Lock();
      if (second_ != first_) second_->mu.Lock();
    }
    ~PairLock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      if (second_ != first_) second_->mu.Unlock();
      first_->mu.Unlock();
    }
    PairLock(const PairLock&) = delete;
    PairLock& operator=(const PairLock&) = delete;

   private:
    Shard* first_;
    Shard* second_;
  };

  bool KeyOk(std::string_view key) const { return key.size() <= kMaxKeySize; }
  bool ValueOk(std::string_view v) const { return v.size() <= options_.max_value_size; }
  bool lru() const { return options_.eviction == EvictionPolicy::kAllKeysLru; }
  Shard& ShardFor(const HashedKey& hk) const { return shards_[hk.shard_hash & shard_mask_]; }
  size_t IndexOf(const Shard* s) const { return static_cast<size_t>(s - shards_.get()); }

  // The clock is read only when the answer depends on it.
  int64_t NowFor(const Entry& e) const {
    return e.expires_at != 0 || lru() ? clock_->NowMs() : 0;
  }

  // now + ttl_ms, refusing a sum past the int64 range.
  static bool ExpiryFrom(int64_t now, int64_t ttl_ms, int64_t* at) {
    return !__builtin_add_overflow(now, ttl_ms, at);
  }

  Prepared Prepare(std::string_view value) const {
    Prepared p;
    p.original_size = value.size();
    if (options_.compression == Compression::kZstd &&
        value.size() >= options_.compression_threshold &&
        ZstdCompressIfSmaller(value, options_.compression_level, &p.stored)) {
      p.compressed = true;
      return p;
    }
    p.stored.assign(value.data(), value.size());
    return p;
  }

  // --- memory -------------------------------------------------------------

  // Moves the accounted total from old_mem to new_mem for the entries a
  // write replaces (old_pinned of old_mem were pinned).  A growth that would
  // pass the limit is refused (false, *shortfall = bytes over) unless `force`
  // (operations Redis never refuses for memory, such as EXPIRE).  When even
  // evicting every unpinned entry could not make room, *shortfall is
  // kNeverFits, so that nothing is evicted for it.  A shrink is applied by
  // Release once the change is made.
  bool Reserve(uint64_t new_mem, uint64_t old_mem, bool force, uint64_t* shortfall,
               uint64_t old_pinned = 0) {
    if (new_mem <= old_mem) return true;
    const uint64_t delta = new_mem - old_mem;
    const uint64_t limit = options_.memory_limit;
    if (limit == 0 || force) {
      used_.fetch_add(delta, std::memory_order_relaxed);
      return true;
    }
    uint64_t cur = used_.load(std::memory_order_relaxed);
    do {
      if (cur + delta > limit) {
        *shortfall = NeverFits(new_mem, old_pinned) ? kNeverFits : cur + delta - limit;
        return false;
      }
    } while (!used_.compare_exchange_weak(cur, cur + delta, std::memory_order_relaxed));
    return true;
  }

  // Whether new_mem bytes could not fit beside what eviction cannot remove:
  // the pinned entries (but those the write replaces) and the tombstones.
  bool NeverFits(uint64_t new_mem, uint64_t old_pinned) const {
    const uint64_t kept = pinned_used_.load(std::memory_order_relaxed) +
                          tombstone_used_.load(std::memory_order_relaxed);
    const uint64_t others = kept > old_pinned ? kept - old_pinned : 0;
    return others + new_mem > options_.memory_limit;
  }
  void Unreserve(uint64_t new_mem, uint64_t old_mem) {
    if (new_mem > old_mem) used_.fetch_sub(new_mem - old_mem, std::memory_order_relaxed);
  }
  void Release(uint64_t new_mem, uint64_t old_mem) {
    if (new_mem < old_mem) used_.fetch_sub(old_mem - new_mem, std::memory_order_relaxed);
  }

  // Runs `attempt`, which takes its lock and reports a reservation refused
  // by the limit through its shortfall argument; under allkeys-lru, evicts
  // (holding no lock) and tries again.  A write that could never fit is
  // refused without evicting anything.
  template <typename Result, typename Attempt>
  Result WithEviction(Attempt attempt) {
    bool swept = false;
    for (int round = 0;; ++round) {
      uint64_t shortfall = 0;
      Result r = attempt(&shortfall);
      if (shortfall == 0 || !lru() || round >= kMaxEvictionRounds) return r;
      if (shortfall == kNeverFits) {
        // An expired lock counts as pinned until it is removed.  Expired
        // entries are absent already, so removing them evicts nothing: do
        // that once, then decide again.
        if (swept) return r;
        swept = true;
        bool more = false;
        if (Sweep(std::numeric_limits<size_t>::max(), &more) == 0) return r;
        continue;
      }
      if (!EvictFor(shortfall)) return r;
    }
  }

  // --- helpers under a shard lock ----------------------------------------

  static void TrackCompressedLocked(Shard& s, const Entry& e, bool add)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (!e.compressed) return;
    if (add) {
      s.compressed_values++;
      s.compressed_original += e.original_size;
      s.compressed_stored += e.value.size();
    } else {
      s.compressed_values--;
      s.compressed_original -= e.original_size;
      s.compressed_stored -= e.value.size();
    }
  }

  // Adds (or takes away) a pinned entry's figures: its shard's, for Stats and
  // eviction, and the store's total, which tells when a write can never fit.
  // Call with add = false before an entry's pin or size changes and with
  // add = true after.
  void TrackPinnedLocked(Shard& s, const Entry& e, bool add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (!e.pinned) return;
    if (add) {
      s.pinned_keys++;
      s.pinned_bytes += e.mem_size;
      pinned_used_.fetch_add(e.mem_size, std::memory_order_relaxed);
    } else {
      s.pinned_keys--;
      s.pinned_bytes -= e.mem_size;
      pinned_used_.fetch_sub(e.mem_size, std::memory_order_relaxed);
    }
  }

  // Moves the accounted total (and the tombstones' share of it) by one
  // tombstone of a key of key_len bytes.
  void AccountTombstone(size_t key_len, bool add) {
    const uint64_t m = TombstoneMem(key_len);
    if (add) {
      used_.fetch_add(m, std::memory_order_relaxed);
      tombstone_used_.fetch_add(m, std::memory_order_relaxed);
    } else {
      used_.fetch_sub(m, std::memory_order_relaxed);
      tombstone_used_.fetch_sub(m, std::memory_order_relaxed);
    }
  }

  static uint64_t LiveCountLocked(const Shard& s, int64_t now) ABSL_SHARED_LOCKS_REQUIRED(s.mu) {
    uint64_t expired = 0;
    for (auto it = s.ttl.begin(); it != s.ttl.end() && it->at <= now; ++it) ++expired;
    return s.map.size() - expired;
  }

  // Removes the entry at `it` and its index node, settling memory.  Allocates
  // nothing.  The caller publishes and notifies.
  void RemoveLocked(Shard& s, Map::iterator it) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    const Entry& e = it->second;
    if (e.expires_at != 0) s.ttl.erase(TtlRef{e.expires_at, it->first});
    TrackCompressedLocked(s, e, false);
    TrackPinnedLocked(s, e, false);
    used_.fetch_sub(e.mem_size, std::memory_order_relaxed);
    s.map.erase(it);
  }

  // Removes the expired entry at `it`.  With a replicator the key keeps a
  // tombstone with the entry's stamp: its expiry is absolute, so every node
  // removes it too, and an older write arriving later must not revive it.
  void ExpireLocked(Shard& s, Map::iterator it, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (options_.replicator != nullptr) TombstoneLocked(s, it->first, it->second.stamp, now);
    RemoveLocked(s, it);
    s.expired.fetch_add(1, std::memory_order_relaxed);
  }

  // Finds `hk` for a write.  An expired entry met here is removed (lazy
  // expiry), reported as absent, and sets *changed.
  Map::iterator FindLiveForWriteLocked(Shard& s, const HashedKey& hk, int64_t now,
                                       bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto it = s.map.find(hk);
    if (it != s.map.end() && IsExpired(it->second, now)) {
      ExpireLocked(s, it, now);
      *changed = true;
      return s.map.end();
    }
    return it;
  }

  // Lazy expiry for readers, which see an expired entry under the shared
  // lock and cannot remove it there.
  void ReapIfExpired(const HashedKey& hk) const {
    Shard& s = ShardFor(hk);
    bool changed = false;
    {
      WriterLock l(&s.mu);
      const_cast<Impl*>(this)->FindLiveForWriteLocked(s, hk, clock_->NowMs(), &changed);
    }
    if (changed) Notify(s);
  }

  // Makes `p` the string value of key `hk` with expiry `expires_at`,
  // replacing the live entry at `it` (or creating one when it == end), then
  // publishes it.  `pinned` makes it a lock when it has an expiry.  All or
  // nothing: kOutOfMemory leaves everything as it was (*shortfall > 0 when
  // the limit refused it).  Sets *changed on success.
  Status PutLocked(Shard& s, Map::iterator it, const HashedKey& hk, Prepared* p,
                   int64_t expires_at, bool pinned, int64_t now, uint64_t* shortfall,
                   bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    Entry fresh;
    fresh.value = std::move(p->stored);
    fresh.original_size = p->original_size;
    fresh.compressed = p->compressed;
    fresh.type = ValueType::kString;
    fresh.expires_at = expires_at;
    fresh.pinned = pinned && expires_at != 0;  // no TTL, no pin
    fresh.mem_size = EntryMem(hk.key.size(), fresh.value.size(), expires_at != 0);
    if (!InstallLocked(s, &it, hk, &fresh, /*force=*/false, now, shortfall)) {
      p->stored = std::move(fresh.value);  // kept for a retry after eviction
      return Status::kOutOfMemory;
    }
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &it->second);
    *changed = true;
    return Status::kOk;
  }

  // Puts `fresh` (value or hash, type, compression, expiry, mem_size) in
  // place of the entry at *it (or a new one when *it == end) and points *it
  // at it.  All or nothing: on false (the limit refused the growth, or an
  // allocation failed) nothing changed and fresh is untouched.  `force`
  // accounts the growth whatever the limit (replicated state).
  bool InstallLocked(Shard& s, Map::iterator* itp, const HashedKey& hk, Entry* fresh, bool force,
                     int64_t now, uint64_t* shortfall) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    Map::iterator& it = *itp;
    const bool exists = it != s.map.end();
    const uint64_t old_mem = exists ? it->second.mem_size : 0;
    const uint64_t old_pinned = exists && it->second.pinned ? old_mem : 0;
    const int64_t old_expiry = exists ? it->second.expires_at : 0;
    const int64_t expires_at = fresh->expires_at;
    const uint64_t new_mem = fresh->mem_size;
    if (!Reserve(new_mem, old_mem, force, shortfall, old_pinned)) return false;

    // The steps that allocate come first, and are undone if one throws.
    bool ttl_inserted = false;
    try {
      if (expires_at != 0 && expires_at != old_expiry) {
        ttl_inserted = s.ttl.insert(TtlItem{expires_at, std::string(hk.key)}).second;
      }
      if (!exists) {
        it = s.map.lazy_emplace(hk, [&hk](const Map::constructor& ctor) {
          ctor(std::piecewise_construct, std::forward_as_tuple(hk.key), std::forward_as_tuple());
        });
      }
    } catch (const std::bad_alloc&) {
      if (ttl_inserted) s.ttl.erase(TtlRef{expires_at, hk.key});
      Unreserve(new_mem, old_mem);
      *shortfall = 0;
      return false;
    }

    // Nothing below allocates.
    Entry& e = it->second;
    if (exists) {
      TrackCompressedLocked(s, e, false);
      TrackPinnedLocked(s, e, false);
      if (old_expiry != 0 && old_expiry != expires_at) s.ttl.erase(TtlRef{old_expiry, it->first});
    }
    e.value = std::move(fresh->value);
    e.hash = std::move(fresh->hash);  // a string replaces a hash, as SET does
    e.original_size = fresh->original_size;
    e.compressed = fresh->compressed;
    e.type = fresh->type;
    e.expires_at = expires_at;
    e.mem_size = new_mem;
    e.pinned = fresh->pinned;
    e.tentative = fresh->tentative;
    e.stamp = fresh->stamp;
    e.version = ++s.last_version;
    e.last_access.store(now, std::memory_order_relaxed);
    TrackCompressedLocked(s, e, true);
    TrackPinnedLocked(s, e, true);
    Release(new_mem, old_mem);
    return true;
  }

  // Gives the live entry at `it` expiry `at_ms` (0 = none), keeping the
  // index and the memory total exact.  Only adding an index node allocates.
  Status SetExpiryLocked(Shard& s, Map::iterator it, int64_t at_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    Entry& e = it->second;
    if (e.expires_at != at_ms) {
      if (at_ms != 0) {
        try {
          s.ttl.insert(TtlItem{at_ms, it->first});
        } catch (const std::bad_alloc&) {
          return Status::kOutOfMemory;
        }
      }
      if (e.expires_at != 0) s.ttl.erase(TtlRef{e.expires_at, it->first});
      // Adding or removing a TTL adds or removes an index node and key copy.
      const uint64_t ttl_part = EntryMem(it->first.size(), 0, true) - EntryMem(it->first.size(), 0, false);
      const uint64_t new_mem =
          at_ms != 0 && e.expires_at == 0   ? e.mem_size + ttl_part
          : at_ms == 0 && e.expires_at != 0 ? e.mem_size - ttl_part
                                            : e.mem_size;
      uint64_t unused = 0;
      Reserve(new_mem, e.mem_size, /*force=*/true, &unused);
      Release(new_mem, e.mem_size);
      TrackPinnedLocked(s, e, false);
      e.mem_size = new_mem;
      e.expires_at = at_ms;
      // A new TTL keeps a lock pinned; none unpins it, so that no pinned
      // entry can hold memory for ever.
      if (at_ms == 0) e.pinned = false;
      TrackPinnedLocked(s, e, true);
    }
    e.version = ++s.last_version;
    return Status::kOk;
  }

  // Whether the guard key of a fenced operation (set_if_eq, del_if_guard_eq,
  // expire_if_guard_eq) holds a live string equal to token.  May throw
  // bad_alloc decoding a compressed guard (the Store API turns it into
  // kOutOfMemory; nothing has changed by then).
  enum class Guard { kHolds, kNotMatched, kWrongType };
  Guard GuardHoldsLocked(Shard& g, const HashedKey& hg, std::string_view token, int64_t now,
                         bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(g.mu) {
    auto guard = FindLiveForWriteLocked(g, hg, now, changed);
    if (guard == g.map.end()) return Guard::kNotMatched;
    if (guard->second.type != ValueType::kString) return Guard::kWrongType;
    return EqualsLocked(guard->second, token) ? Guard::kHolds : Guard::kNotMatched;
  }

  SetIfEqOutcome SetIfEqLocked(Shard& g, Shard& s, const HashedKey& hg, const HashedKey& hk,
                               std::string_view token, Prepared* p, int64_t ttl_ms,
                               uint64_t* shortfall, bool* changed_g, bool* changed_s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(g.mu, s.mu) {
    const int64_t now = clock_->NowMs();
    int64_t expires_at = 0;
    if (ttl_ms > 0 && !ExpiryFrom(now, ttl_ms, &expires_at)) {
      return SetIfEqOutcome::kInvalidArgument;
    }
    switch (GuardHoldsLocked(g, hg, token, now, changed_g)) {
      case Guard::kHolds: break;
      case Guard::kNotMatched: return SetIfEqOutcome::kNotMatched;
      case Guard::kWrongType: return SetIfEqOutcome::kWrongType;
    }
    auto it = FindLiveForWriteLocked(s, hk, now, changed_s);
    if (PutLocked(s, it, hk, p, expires_at, /*pinned=*/false, now, shortfall, changed_s) !=
        Status::kOk) {
      return SetIfEqOutcome::kOutOfMemory;
    }
    return SetIfEqOutcome::kWritten;
  }

  Status RenameLocked(Shard& a, Shard& b, const HashedKey& hs, const HashedKey& hd,
                      bool only_if_absent, bool* renamed, uint64_t* shortfall, bool* changed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(a.mu, b.mu) {
    const int64_t now = clock_->NowMs();
    FindLiveForWriteLocked(a, hs, now, changed);
    auto dst = FindLiveForWriteLocked(b, hd, now, changed);
    auto src = a.map.find(hs);  // again: the reap of dst may share the table
    *renamed = false;
    if (src == a.map.end()) return Status::kNotFound;
    if (hs.key == hd.key) {  // Redis: RENAME k k is OK, RENAMENX k k is 0
      *renamed = !only_if_absent;
      return Status::kOk;
    }
    if (only_if_absent && dst != b.map.end()) return Status::kOk;

    const int64_t expires_at = src->second.expires_at;
    const bool dst_existed = dst != b.map.end();
    const int64_t dst_old_expiry = dst_existed ? dst->second.expires_at : 0;
    // The entry's size with dst's key instead of src's.
    const uint64_t new_mem = src->second.mem_size - hs.key.size() + hd.key.size() -
                             (expires_at != 0 ? hs.key.size() : 0) +
                             (expires_at != 0 ? hd.key.size() : 0);
    const uint64_t old_mem = src->second.mem_size + (dst_existed ? dst->second.mem_size : 0);
    const uint64_t old_pinned = (src->second.pinned ? src->second.mem_size : 0) +
                                (dst_existed && dst->second.pinned ? dst->second.mem_size : 0);
    if (!Reserve(new_mem, old_mem, false, shortfall, old_pinned)) return Status::kOutOfMemory;

    bool ttl_inserted = false;
    try {
      if (expires_at != 0 && expires_at != dst_old_expiry) {
        ttl_inserted = b.ttl.insert(TtlItem{expires_at, std::string(hd.key)}).second;
      }
      if (!dst_existed) {
        dst = b.map.lazy_emplace(hd, [&hd](const Map::constructor& ctor) {
          ctor(std::piecewise_construct, std::forward_as_tuple(hd.key), std::forward_as_tuple());
        });
        src = a.map.find(hs);  // the insert may have rehashed a shared table
      }
    } catch (const std::bad_alloc&) {
      if (ttl_inserted) b.ttl.erase(TtlRef{expires_at, hd.key});
      Unreserve(new_mem, old_mem);
      return Status::kOutOfMemory;
    }

    // Nothing below allocates.
    Entry& se = src->second;
    Entry& de = dst->second;
    if (dst_existed) {
      TrackCompressedLocked(b, de, false);
      TrackPinnedLocked(b, de, false);
      if (dst_old_expiry != 0 && dst_old_expiry != expires_at) {
        b.ttl.erase(TtlRef{dst_old_expiry, dst->first});
      }
    }
    TrackCompressedLocked(a, se, false);
    TrackPinnedLocked(a, se, false);
    if (expires_at != 0) a.ttl.erase(TtlRef{expires_at, src->first});
    de.value = std::move(se.value);
    de.hash = std::move(se.hash);
    de.original_size = se.original_size;
    de.compressed = se.compressed;
    de.type = se.type;
    de.expires_at = expires_at;
    de.mem_size = new_mem;
    de.pinned = se.pinned;  // a renamed lock is still a lock
    de.version = ++b.last_version;
    de.last_access.store(now, std::memory_order_relaxed);
    TrackCompressedLocked(b, de, true);
    TrackPinnedLocked(b, de, true);
    a.map.erase(src);
    Release(new_mem, old_mem);
    PublishLocked(a, Mutation::Kind::kDelete, hs.key, nullptr);
    PublishLocked(b, Mutation::Kind::kSet, hd.key, &de);
    *renamed = true;
    *changed = true;
    return Status::kOk;
  }

  // Locks a set of shards in index order, each once.
  class ABSL_SCOPED_LOCKABLE MultiLock {
   public:
    MultiLock(const Impl* impl, std::vector<Shard*> shards) ABSL_NO_THREAD_SAFETY_ANALYSIS
        : shards_(std::move(shards)) {
      std::sort(shards_.begin(), shards_.end(), [impl](const Shard* a, const Shard* b) {
        return impl->IndexOf(a) < impl->IndexOf(b);
      });
      shards_.erase(std::unique(shards_.begin(), shards_.end()), shards_.end());
      for (Shard* s : shards_) s->mu.Lock();
    }
    ~MultiLock() ABSL_UNLOCK_FUNCTION() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) (*it)->mu.Unlock();
    }
    MultiLock(const MultiLock&) = delete;
    MultiLock& operator=(const MultiLock&) = delete;

   private:
    std::vector<Shard*> shards_;
  };

  // MSET/MSETNX with every involved shard locked (by MultiLock, which the
  // analysis cannot follow).  All or nothing: the whole growth is reserved
  // first, then every new slot allocated, then the values moved in.
  Status MSetLocked(const std::vector<HashedKey>& keys, std::vector<Prepared>* values,
                    const std::vector<Shard*>& shards, bool only_if_none_exist, bool* written,
                    uint64_t* shortfall, std::vector<Shard*>* changed)
      ABSL_NO_THREAD_SAFETY_ANALYSIS {
    const int64_t now = clock_->NowMs();
    const size_t n = keys.size();
    for (size_t i = 0; i < n; ++i) {
      bool reaped = false;
      FindLiveForWriteLocked(*shards[i], keys[i], now, &reaped);
      if (reaped) changed->push_back(shards[i]);
    }
    // Which keys exist is kept as flags, not iterators: creating a slot for
    // one key may rehash a table that another key shares, which invalidates
    // its iterator (and Debian's hardened abseil traps on comparing one).
    std::vector<char> existed(n, 0);
    uint64_t old_total = 0, new_total = 0, old_pinned = 0;
    for (size_t i = 0; i < n; ++i) {  // after the reaps: a reap may have shared a table
      auto it = shards[i]->map.find(keys[i]);
      if (it != shards[i]->map.end()) {
        if (only_if_none_exist) return Status::kOk;
        existed[i] = 1;
        old_total += it->second.mem_size;
        if (it->second.pinned) old_pinned += it->second.mem_size;
      }
      new_total += EntryMem(keys[i].key.size(), (*values)[i].stored.size(), false);
    }
    if (!Reserve(new_total, old_total, false, shortfall, old_pinned)) {
      return Status::kOutOfMemory;
    }
    std::vector<size_t> created;
    try {
      for (size_t i = 0; i < n; ++i) {
        if (existed[i]) continue;
        const HashedKey& hk = keys[i];
        shards[i]->map.lazy_emplace(hk, [&hk](const Map::constructor& ctor) {
          ctor(std::piecewise_construct, std::forward_as_tuple(hk.key), std::forward_as_tuple());
        });
        created.push_back(i);
      }
    } catch (const std::bad_alloc&) {
      for (size_t i : created) shards[i]->map.erase(shards[i]->map.find(keys[i]));
      Unreserve(new_total, old_total);
      return Status::kOutOfMemory;
    }
    // Nothing below allocates (a replicator copies, but that is its business).
    for (size_t i = 0; i < n; ++i) {
      Shard& s = *shards[i];
      auto it = s.map.find(keys[i]);
      Entry& e = it->second;
      if (existed[i]) {
        TrackCompressedLocked(s, e, false);
        TrackPinnedLocked(s, e, false);  // replaced: a lock's pin goes with it
        e.pinned = false;
        if (e.expires_at != 0) s.ttl.erase(TtlRef{e.expires_at, it->first});
      }
      Prepared& p = (*values)[i];
      e.value = std::move(p.stored);
      e.hash.reset();
      e.original_size = p.original_size;
      e.compressed = p.compressed;
      e.type = ValueType::kString;
      e.expires_at = 0;
      e.mem_size = EntryMem(keys[i].key.size(), e.value.size(), false);
      e.version = ++s.last_version;
      e.last_access.store(now, std::memory_order_relaxed);
      TrackCompressedLocked(s, e, true);
      PublishLocked(s, Mutation::Kind::kSet, keys[i].key, &e);
      changed->push_back(&s);
    }
    Release(new_total, old_total);
    *written = true;
    return Status::kOk;
  }

  // Copies a string entry's value (decoded) when it is at most `max` bytes.
  static bool ReadSmallLocked(const Entry& e, size_t max, std::string* out) {
    if (e.original_size > max) return false;
    if (!e.compressed) {
      out->assign(e.value);
      return true;
    }
    out->resize(e.original_size);
    return ZstdDecompress(e.value, out->data(), out->size());
  }

  // Sets hash fields on the live hash at `it` (or a new hash when it == end).
  // All or nothing: the new field strings and the table's room are allocated
  // before anything changes.
  Status HSetLocked(Shard& s, Map::iterator it, const HashedKey& hk,
                    const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                    bool only_if_absent, int64_t now, int64_t* added, uint64_t* shortfall,
                    bool* changed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    *added = 0;
    const bool exists = it != s.map.end();
    const HashFields* h = exists ? it->second.hash.get() : nullptr;
    // The last value of a repeated field wins.
    absl::flat_hash_map<std::string_view, std::string_view> want;
    for (const auto& [f, v] : fields) {
      if (only_if_absent && ((h != nullptr && h->contains(f)) || want.contains(f))) continue;
      want[f] = v;
    }
    if (want.empty()) return Status::kOk;
    uint64_t grow = 0, shrink = 0;
    for (const auto& [f, v] : want) {
      const auto fi = h != nullptr ? h->find(f) : HashFields::const_iterator();
      if (h != nullptr && fi != h->end()) {
        if (v.size() >= fi->second.size()) grow += v.size() - fi->second.size();
        else shrink += fi->second.size() - v.size();
      } else {
        grow += FieldMem(f.size(), v.size());
      }
    }
    const uint64_t old_mem = exists ? it->second.mem_size : 0;
    const uint64_t base = exists ? old_mem : HashEntryMem(hk.key.size(), 0, false);
    const uint64_t new_mem = base + grow - shrink;
    if (!Reserve(new_mem, old_mem, false, shortfall)) return Status::kOutOfMemory;

    std::vector<std::pair<std::string, std::string>> fresh;  // allocated first
    std::unique_ptr<HashFields> made;
    try {
      fresh.reserve(want.size());
      for (const auto& [f, v] : want) fresh.emplace_back(std::string(f), std::string(v));
      if (!exists) {
        made = std::make_unique<HashFields>();
        made->reserve(fresh.size());
        it = s.map.lazy_emplace(hk, [&hk](const Map::constructor& ctor) {
          ctor(std::piecewise_construct, std::forward_as_tuple(hk.key), std::forward_as_tuple());
        });
      } else {
        it->second.hash->reserve(it->second.hash->size() + fresh.size());
      }
    } catch (const std::bad_alloc&) {
      Unreserve(new_mem, old_mem);
      return Status::kOutOfMemory;
    }
    Entry& e = it->second;
    if (!exists) {
      e.hash = std::move(made);
      e.type = ValueType::kHash;
      e.value.clear();
      e.original_size = 0;
      e.compressed = false;
      e.expires_at = 0;
    }
    for (auto& [f, v] : fresh) {
      auto [fi, inserted] = e.hash->try_emplace(std::move(f));  // room reserved: no allocation
      fi->second = std::move(v);
      if (inserted) ++*added;
    }
    e.mem_size = new_mem;
    e.version = ++s.last_version;
    e.last_access.store(now, std::memory_order_relaxed);
    Release(new_mem, old_mem);
    PublishLocked(s, Mutation::Kind::kSet, hk.key, &e);
    *changed = true;
    return Status::kOk;
  }

  // Hands a mutation to the replicator while the shard lock is held, so that
  // changes to one key reach it in the order they were applied: stamps it
  // first (the entry keeps its stamp; a deletion leaves a tombstone).
  void PublishLocked(Shard& s, Mutation::Kind kind, std::string_view key, Entry* e)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (options_.replicator == nullptr) return;
    Mutation m;
    m.kind = kind;
    m.key = key;
    m.stamp = options_.replicator->NextStamp();
    const bool tentative = options_.replicator->Tentative();
    std::string encoded;
    if (e != nullptr) {
      e->stamp = m.stamp;
      e->tentative = tentative;
      m.type = e->type;
      if (e->type == ValueType::kHash) {
        encoded = EncodeHash(*e->hash);
        m.value = encoded;
      } else {
        m.value = e->value;
      }
      m.compressed = e->compressed;
      m.original_size = e->original_size;
      m.expires_at_ms = e->expires_at;
      m.version = e->version;
      m.pinned = e->pinned;
      ForgetTombstoneLocked(s, key);
    } else if (kind == Mutation::Kind::kDelete) {
      TombstoneLocked(s, key, m.stamp, clock_->NowMs(), tentative);
    }
    options_.replicator->Publish(m);
  }

  // Records that `key` was deleted (or expired) by the write `stamp`.  A
  // tombstone that cannot be allocated is skipped: a late older write could
  // then revive the key on this node (the cluster's full sync corrects it).
  void TombstoneLocked(Shard& s, std::string_view key, Stamp stamp, int64_t now,
                       bool tentative = false) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    if (options_.replicator == nullptr) return;
    try {
      auto [t, inserted] =
          s.tombstones.try_emplace(std::string(key), Tombstone{stamp, now, tentative});
      if (!inserted) {
        if (t->second.stamp < stamp) t->second = Tombstone{stamp, now, tentative};
      } else {
        AccountTombstone(key.size(), true);
      }
      s.tombstone_order.emplace_back(now, std::string(key));
    } catch (const std::bad_alloc&) {
    }
  }

  void ForgetTombstoneLocked(Shard& s, std::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    auto t = s.tombstones.find(key);
    if (t == s.tombstones.end()) return;
    AccountTombstone(key.size(), false);
    s.tombstones.erase(t);
  }

  // Drops tombstones older than the TTL (and order records of tombstones
  // replaced since).
  void CollectTombstonesLocked(Shard& s, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) {
    while (!s.tombstone_order.empty() &&
           s.tombstone_order.front().first + options_.tombstone_ttl_ms <= now) {
      const auto& [at, key] = s.tombstone_order.front();
      auto t = s.tombstones.find(std::string_view(key));
      if (t != s.tombstones.end() && t->second.at_ms == at) {
        AccountTombstone(key.size(), false);
        s.tombstones.erase(t);
      }
      s.tombstone_order.pop_front();
    }
  }

  // Wakes WaitForChange callers on `s`.  Called after a change, unlocked.
  static void Notify(const Shard& s) {
    if (s.waiters.load(std::memory_order_seq_cst) == 0) return;
    s.wake_seq.fetch_add(1, std::memory_order_seq_cst);
    std::lock_guard<std::mutex> l(s.wait_mu);
    s.wait_cv.notify_all();
  }

  // Writes a value into alloc's buffer, decoding a compressed one.
  static Status Emit(std::string_view stored, bool compressed, uint64_t original_size,
                     absl::FunctionRef<char*(size_t)> alloc) {
    char* out = alloc(original_size);
    if (out == nullptr) return Status::kOutOfMemory;
    if (!compressed) {
      if (original_size != 0) std::memcpy(out, stored.data(), original_size);
      return Status::kOk;
    }
    // A frame this store wrote fails to decode only when zstd cannot
    // allocate its context.
    return ZstdDecompress(stored, out, original_size) ? Status::kOk : Status::kOutOfMemory;
  }

  // Whether the string entry `e` equals `token`.  A compressed entry is
  // decoded only when its original size equals the token's, so the work
  // under the lock is bounded by the token's length.
  static bool EqualsLocked(const Entry& e, std::string_view token) {
    if (e.original_size != token.size()) return false;
    if (!e.compressed) return std::string_view(e.value) == token;
    char small[256];
    std::string large;
    char* plain = small;
    if (token.size() > sizeof(small)) {
      large.resize(token.size());
      plain = large.data();
    }
    if (!ZstdDecompress(e.value, plain, token.size())) throw std::bad_alloc();
    return std::memcmp(plain, token.data(), token.size()) == 0;
  }

  // Reads the int64 text of the string entry `e`.  At most 20 bytes, so a
  // compressed one is decoded into a stack buffer.
  static bool ReadInt64Locked(const Entry& e, int64_t* out) {
    if (e.original_size > 20) return false;
    char text[20];
    if (e.compressed) {
      if (!ZstdDecompress(e.value, text, e.original_size)) return false;
    } else {
      std::memcpy(text, e.value.data(), e.original_size);
    }
    return ParseInt64(std::string_view(text, e.original_size), out);
  }

  // --- eviction -----------------------------------------------------------

  // Evicts, one shard at a time, the least recently used of a few sampled
  // unpinned entries until `bytes` were freed.  Returns whether anything was
  // freed.
  bool EvictFor(uint64_t bytes) {
    uint64_t freed = 0;
    size_t empty_visits = 0;
    while (freed < bytes && empty_visits <= shard_mask_) {
      Shard& s = shards_[next_evict_shard_.fetch_add(1, std::memory_order_relaxed) & shard_mask_];
      const uint64_t got = EvictOneFrom(s);
      if (got == 0) {
        ++empty_visits;
      } else {
        empty_visits = 0;
        freed += got;
      }
    }
    return freed > 0;
  }

  // Removes one entry of `s`: the earliest expired one if any (it is absent
  // already), else the least recently used of `eviction_samples` unpinned
  // entries after the shard's cursor.  A live lock is never a candidate.
  // Returns the bytes freed; 0 when the shard holds nothing evictable.
  uint64_t EvictOneFrom(Shard& s) {
    uint64_t freed = 0;
    {
      WriterLock l(&s.mu);
      if (s.map.empty()) return 0;
      const int64_t now = clock_->NowMs();
      if (!s.ttl.empty() && s.ttl.begin()->at <= now) {  // the best victim
        auto it = s.map.find(std::string_view(s.ttl.begin()->key));
        freed = it->second.mem_size;
        ExpireLocked(s, it, now);
      } else {
        // Nothing here is expired, so every pinned entry is a live lock.
        if (s.pinned_keys == s.map.size()) return 0;
        auto it = s.has_evict_cursor ? s.map.find(std::string_view(s.evict_cursor)) : s.map.end();
        if (it == s.map.end()) it = s.map.begin();
        auto victim = s.map.end();
        int64_t oldest = std::numeric_limits<int64_t>::max();
        size_t sampled = 0;
        // Locks are stepped over, not counted: the sample is of candidates.
        for (size_t seen = 0; seen < s.map.size() && sampled < options_.eviction_samples;
             ++seen) {
          const Entry& e = it->second;
          if (!e.pinned) {
            ++sampled;
            const int64_t at = e.last_access.load(std::memory_order_relaxed);
            if (victim == s.map.end() || at < oldest) {
              oldest = at;
              victim = it;
            }
          }
          if (++it == s.map.end()) it = s.map.begin();
        }
        // The hand moves past the sample; the victim's slot is about to go.
        s.has_evict_cursor = it != victim;
        if (s.has_evict_cursor) s.evict_cursor = it->first;
        freed = victim->second.mem_size;
        RemoveLocked(s, victim);  // eviction is this node's own decision
        s.evicted.fetch_add(1, std::memory_order_relaxed);
      }
    }
    Notify(s);
    return freed;
  }

  void SweepLoop() {
    std::unique_lock<std::mutex> l(sweep_mu_);
    bool more = false;
    while (!stop_) {
      // Adaptive, like Redis's active expiry: a pass that hit its budget
      // means a backlog, so the next pass starts at once.
      const auto pause = std::chrono::milliseconds(more ? 0 : options_.sweep_interval_ms);
      if (sweep_cv_.wait_for(l, pause, [this] { return stop_; })) break;
      l.unlock();
      more = false;
      Sweep(options_.sweep_budget, &more);
      l.lock();
    }
  }

  const StoreOptions options_;
  const Clock* const clock_;
  const size_t shard_mask_;
  const std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> used_{0};
  // The parts of used_ that eviction cannot remove: pinned entries (live or
  // expired and not yet removed) and tombstones.
  std::atomic<uint64_t> pinned_used_{0};
  std::atomic<uint64_t> tombstone_used_{0};
  std::atomic<size_t> next_evict_shard_{0};

  mutable std::mutex flush_mu_;
  Stamp flush_stamp_;  // guarded by flush_mu_: the newest flush seen (replication)

  std::mutex sweep_mu_;
  std::condition_variable sweep_cv_;
  bool stop_ = false;  // guarded by sweep_mu_
  std::thread sweeper_;
};

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
  // never nested except in index order (PairLock, MultiLock), so the graph
  // has nothing to find.  This is a process-wide abseil setting.
  static std::once_flag no_deadlock_graph;
  std::call_once(no_deadlock_graph, [] {
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  });
#endif
  return std::unique_ptr<Store>(new Store(std::make_unique<Impl>(options)));
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

Status Store::IncrBy(std::string_view key, int64_t delta, int64_t* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->IncrBy(key, delta, result); });
}

Status Store::IncrByLocal(std::string_view key, int64_t delta, int64_t* result) {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->IncrByLocal(key, delta, result); });
}

Status Store::GetFromOwner(std::string_view key, std::string* value) const {
  if (Replicator* r = impl_->options().replicator; r != nullptr) {
    Routed<GetReply> routed;
    const Status st = OomGuard(Status::kOutOfMemory, [&] {
      routed = r->RouteGet(key);
      return Status::kOk;
    });
    if (st != Status::kOk) return st;
    switch (routed.where) {
      case Routed<GetReply>::Where::kLocal: break;
      case Routed<GetReply>::Where::kOwner:
        if (routed.outcome.status == Status::kOk) *value = std::move(routed.outcome.value);
        return routed.outcome.status;
      case Routed<GetReply>::Where::kOwnerUnreachable: return Status::kOwnerUnreachable;
    }
  }
  return Get(key, value);
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
  return impl_->HDel(key, fields, removed);
}

Status Store::HGetAll(std::string_view key,
                      std::vector<std::pair<std::string, std::string>>* fields) const {
  return OomGuard(Status::kOutOfMemory, [&] { return impl_->HGetAll(key, fields); });
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

Status Store::ExpireAtIf(std::string_view key, int64_t at_ms, unsigned conditions,
                         bool* applied) {
  return OomGuard(Status::kOutOfMemory,
                  [&] { return impl_->ExpireAtIf(key, at_ms, conditions, applied); });
}

int64_t Store::NowMs() const { return impl_->NowMs(); }

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

void Store::Flush() { impl_->Flush(); }

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

Status Store::Inspect(std::string_view key, EntryInfo* info) const {
  return impl_->Inspect(key, info);
}

StoreStats Store::Stats() const { return impl_->Stats(); }

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
