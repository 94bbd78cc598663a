// The store's data model, private to core/: keys and their two-part hash,
// entries, the expiry index, the accounting of every byte an entry holds, and
// one shard (a map with its index and counters, all guarded by the shard's
// lock).  Store::Impl (store_impl.h) owns an array of shards.

#ifndef EPHPM_CORE_SHARD_H_
#define EPHPM_CORE_SHARD_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/hash/hash.h"
#include "aggregates.h"
#include "compression.h"
#include "ephpm/types.h"
#include "ephpm/key.h"
#include "random.h"
#include "shared_mutex.h"
#include "value_buf.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {

// ---------------------------------------------------------------------------
// Keys and hashing.
//
// One 64-bit XXH3 of the key, seeded once per process (so that a client
// cannot aim many keys at one slot without knowing the seed).  The shard's
// map takes the whole hash; the shard is picked by its top 16 bits (there
// are at most 65 536 shards).  The map places a key by bits 7 and up,
// masked to its capacity, and files bits 0-6 in the control byte, so keys
// that share a shard share no bits the map uses until one shard's table
// passes 2^41 slots.  (One 64-bit hash, not two: a key's hash is about a
// fifth of a PHP get's instructions.)
//
// Redis Cluster's hash tags: a key with a non-empty "{...}" (the first '{'
// and the first '}' after it) is placed by what is between them, so "{t}x"
// and "t" share a shard.  A script or a transaction may then reach keys
// built from its declared ones the way Redis Cluster clients build them
// (Symfony's tag invalidation uses "{id}id" beside "id").

struct HashedKey {
  std::string_view key;
  uint64_t shard_hash;
  uint64_t map_hash;
};

// The hash tag of key, or key itself when it has none.
inline std::string_view ShardPart(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

inline uint64_t KeyHashSeed() {
  static const uint64_t seed = ProcessSeed();
  return seed;
}

inline HashedKey HashKey(std::string_view key) {
  const uint64_t seed = KeyHashSeed();
  const uint64_t h = XXH3_64bits_withSeed(key.data(), key.size(), seed);
  const std::string_view part = ShardPart(key);
  if (part.size() == key.size()) return HashedKey{key, h >> 48, h};
  return HashedKey{key, XXH3_64bits_withSeed(part.data(), part.size(), seed) >> 48, h};
}

// A lookup key that matches nothing: the map's find() with it walks the
// probe of `map_hash` and, for every entry whose control byte matches,
// prefetches the entry's node instead of comparing keys (KeyEq below), so no
// node is read.  Store::Prefetch's second step.
struct NodePrefetch {
  uint64_t map_hash;
};

struct KeyHash {
  using is_transparent = void;
  size_t operator()(const NodePrefetch& p) const { return p.map_hash; }
  size_t operator()(const HashedKey& k) const { return k.map_hash; }
  size_t operator()(std::string_view k) const { return HashKey(k).map_hash; }
  size_t operator()(const std::string& k) const { return HashKey(k).map_hash; }
  size_t operator()(const Key& k) const { return HashKey(k.view()).map_hash; }
};

struct KeyEq {
  using is_transparent = void;
  static std::string_view View(const HashedKey& k) { return k.key; }
  static std::string_view View(std::string_view k) { return k; }
  static std::string_view View(const std::string& k) { return k; }
  static std::string_view View(const Key& k) { return k.view(); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return View(a) == View(b);
  }
  // The map's element first, then the key looked up (absl's EqualElement).
  // The node is the Key followed by its Entry: kNodeBytes (checked below
  // Entry), two or three cache lines as it falls.
  static constexpr size_t kNodeBytes = 104;
  bool operator()(const Key& node, const NodePrefetch&) const {
    const char* at = reinterpret_cast<const char*>(&node);
    __builtin_prefetch(at);
    __builtin_prefetch(at + 64);
    __builtin_prefetch(at + kNodeBytes - 1);
    return false;
  }
};

// ---------------------------------------------------------------------------
// Entries.

// A hash's fields (FieldHash, FieldEq: aggregates.h).  Node-based, as the
// key map: a flat table of 64-byte slots would cost 1.1 to 2.3 times the
// fields' strings in idle slots alone, varying too much with the table's
// fill for FieldMem to follow it.
using HashFields = absl::node_hash_map<std::string, std::string, FieldHash, FieldEq>;

// The one aggregate an entry may hold (a hash, list, set or sorted set) as a
// single owning pointer whose two low bits say which.  The entry keeps it in
// its value object (ValueBuf::HoldAggregate: an aggregate's entry holds no
// string bytes), which frees it (DeleteAggregate, shard_ops.cc): no word of
// its own in the entry, where four unique_ptrs once took four.
struct Aggregate {
  static constexpr uintptr_t kHashTag = 0;
  static constexpr uintptr_t kListTag = 1;
  static constexpr uintptr_t kSetTag = 2;
  static constexpr uintptr_t kZSetTag = 3;
  static constexpr uintptr_t kTagMask = 3;
  static_assert(alignof(HashFields) >= 4 && alignof(ListValue) >= 4 &&
                    alignof(SetValue) >= 4 && alignof(ZSetValue) >= 4,
                "the tag needs two free low bits in each pointer");

  // The aggregate `bits` names when it is of kind `tag`, else null (0 = none).
  template <typename T>
  static T* As(uintptr_t bits, uintptr_t tag) {
    return bits != 0 && (bits & kTagMask) == tag ? reinterpret_cast<T*>(bits & ~kTagMask)
                                                 : nullptr;
  }
  static uintptr_t Tagged(const void* p, uintptr_t tag) {
    return reinterpret_cast<uintptr_t>(p) | tag;
  }
};

// When an entry was last read or written, for allkeys-lru and OBJECT
// IDLETIME: the clock's milliseconds kept to the second, in 32 bits of
// seconds since the epoch (to 2106), as Redis's own LRU clock keeps a
// second's resolution.  4 bytes where the milliseconds took 8.  Written by
// readers under the shared lock, hence atomic.
class AccessTime {
 public:
  void store(int64_t ms, std::memory_order order) { s_.store(Seconds(ms), order); }
  // The time stored, in milliseconds: a whole second.
  int64_t load(std::memory_order order) const { return int64_t{s_.load(order)} * 1000; }
  // Milliseconds from the time stored to `now_ms`, in whole seconds.
  int64_t IdleMs(int64_t now_ms) const {
    return std::max<int64_t>(0, int64_t{Seconds(now_ms)} * 1000 - load(std::memory_order_relaxed));
  }

 private:
  static uint32_t Seconds(int64_t ms) {
    const int64_t sec = ms / 1000;
    return sec <= 0 ? 0 : sec >= int64_t{UINT32_MAX} ? UINT32_MAX : static_cast<uint32_t>(sec);
  }
  std::atomic<uint32_t> s_{0};
};

// One key's state.  72 B, so that with the key's object the map's node is
// a 112 B malloc chunk (128 B while the entry kept the aggregate's pointer,
// the original size and the last access in milliseconds apart, 144 B while
// the value was a 32-byte std::string, 176 B before the aggregate pointers
// became one and the flags bits): the layout is part of the memory figures
// in docs/BENCHMARKS.md, and a static_assert below keeps it.
struct Entry {
  // As stored (a zstd frame when compressed), or the aggregate (exactly when
  // type is not kString: hash(), list() ..., Hold).
  ValueBuf value;
  int64_t expires_at = 0;      // absolute ms, 0 = none
  uint64_t version = 0;
  uint64_t mem_size = 0;       // accounted bytes for the whole entry
  Stamp stamp;                 // the write that made this state (a cluster's order)
  // The fencing token the key carries (0 = none): a lock's grant (pinned
  // entries made by SetNxFenced) or the highest fence recorded by a fenced
  // write, which every later write of the key keeps and which outlives the
  // entry as a fence record (Shard::fence_records).
  uint64_t fence = 0;
  mutable AccessTime last_access;
  ValueType type = ValueType::kString;
  // The flags are bits of one byte, written only under the exclusive lock.
  bool compressed : 1;
  // A lock (set_nx with a TTL): eviction never takes it while it is live.
  // Only ever set on a string with an expiry, so a TTL bounds how long a pin
  // holds memory.
  bool pinned : 1;
  // Written by a cluster decision that the other members have not confirmed
  // yet: it stays on this node (a full sync leaves it out) until it is
  // confirmed (ConfirmLocal) or forgotten (ForgetLocal).  Its stamp is
  // fresh, so once out it could win over the cluster's state.
  bool tentative : 1;
  // A lock held by a request of this process (Store::SetNxEphemeral): not
  // logged nor snapshotted, so that a restart does not restore it.  Any
  // write that replaces the entry clears it.
  bool ephemeral : 1;

  HashFields* hash() const { return Aggregate::As<HashFields>(Bits(), Aggregate::kHashTag); }
  ListValue* list() const { return Aggregate::As<ListValue>(Bits(), Aggregate::kListTag); }
  SetValue* set() const { return Aggregate::As<SetValue>(Bits(), Aggregate::kSetTag); }
  ZSetValue* zset() const { return Aggregate::As<ZSetValue>(Bits(), Aggregate::kZSetTag); }

  // Holds p in place of what the value held (a string's bytes, an
  // aggregate), which is freed.  The caller sets `type`.
  void Hold(std::unique_ptr<HashFields> p) { HoldTagged(p.release(), Aggregate::kHashTag); }
  void Hold(std::unique_ptr<ListValue> p) { HoldTagged(p.release(), Aggregate::kListTag); }
  void Hold(std::unique_ptr<SetValue> p) { HoldTagged(p.release(), Aggregate::kSetTag); }
  void Hold(std::unique_ptr<ZSetValue> p) { HoldTagged(p.release(), Aggregate::kZSetTag); }

  // Bytes a reader gets back: a string's (read from the zstd frame's header
  // when compressed: ZstdCompressIfSmaller records it, EntryFromMutation
  // checks it), 0 for an aggregate.
  uint64_t OriginalSize() const {
    if (type != ValueType::kString) return 0;
    return compressed ? ZstdContentSize(value) : value.size();
  }

  Entry() : compressed(false), pinned(false), tentative(false), ephemeral(false) {}
  // The map moves entries only under the exclusive lock (rehash), so a
  // relaxed copy of last_access is exact.
  Entry(Entry&& o) noexcept
      : value(std::move(o.value)),
        expires_at(o.expires_at),
        version(o.version),
        mem_size(o.mem_size),
        stamp(o.stamp),
        fence(o.fence),
        type(o.type),
        compressed(o.compressed),
        pinned(o.pinned),
        tentative(o.tentative),
        ephemeral(o.ephemeral) {
    last_access.store(o.last_access.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  Entry& operator=(Entry&& o) noexcept {
    value = std::move(o.value);
    expires_at = o.expires_at;
    version = o.version;
    mem_size = o.mem_size;
    stamp = o.stamp;
    fence = o.fence;
    last_access.store(o.last_access.load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
    type = o.type;
    compressed = o.compressed;
    pinned = o.pinned;
    tentative = o.tentative;
    ephemeral = o.ephemeral;
    return *this;
  }

 private:
  uintptr_t Bits() const { return value.aggregate_bits(); }
  void HoldTagged(void* p, uintptr_t tag) {
    if (p == nullptr) {
      value.reset();
    } else {
      value.HoldAggregate(Aggregate::Tagged(p, tag));
    }
  }
};
static_assert(sizeof(Entry) <= 72, "Entry grew: see its comment");
static_assert(sizeof(std::pair<const Key, Entry>) == KeyEq::kNodeBytes, "KeyEq's prefetch");

// Where a shard keeps the last map node it freed, for its next insert (a
// lock taken and released, a session's lock, any short-lived key then
// costs no malloc and free of a node).  One node's memory, or none: what
// the allocator's own free lists would hold anyway, not accounted.  Touched
// only by the map's node allocations and frees, which happen only under
// the shard's exclusive lock.
struct NodeCache {
  void* node = nullptr;
  NodeCache() = default;
  NodeCache(const NodeCache&) = delete;
  NodeCache& operator=(const NodeCache&) = delete;
  ~NodeCache() { ::operator delete(node); }
};

// The map's allocator: std::allocator's, except that a node (one `Node`,
// the map's value_type; the table's arrays are other types) comes from and
// goes to a NodeCache when it has one.  Nodes come from ::operator new
// either way, so any two allocators are equal (memory from one may be freed
// by another), and an allocator never moves between maps: each map keeps
// its shard's cache through a swap (SWAPDB, a flush's swap with an empty
// map) and a move assignment.  (A map move-constructed from another would
// share its cache: the store makes none.  Nor can a map be copied.)
template <typename T, typename Node>
struct NodeAllocator {
  using value_type = T;
  using propagate_on_container_copy_assignment = std::false_type;
  using propagate_on_container_move_assignment = std::false_type;
  using propagate_on_container_swap = std::false_type;

  NodeCache* cache = nullptr;

  NodeAllocator() = default;
  explicit NodeAllocator(NodeCache* c) : cache(c) {}
  template <typename U>
  NodeAllocator(const NodeAllocator<U, Node>& o) : cache(o.cache) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "needs an aligned new");
    if constexpr (std::is_same_v<T, Node>) {
      if (n == 1 && cache != nullptr && cache->node != nullptr) {
        void* p = cache->node;
        cache->node = nullptr;
        return static_cast<T*>(p);
      }
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if constexpr (std::is_same_v<T, Node>) {
      if (n == 1 && cache != nullptr && cache->node == nullptr) {
        cache->node = p;
        return;
      }
    }
    ::operator delete(p);
  }
};
template <typename T, typename U, typename Node>
bool operator==(const NodeAllocator<T, Node>&, const NodeAllocator<U, Node>&) {
  return true;
}
template <typename T, typename U, typename Node>
bool operator!=(const NodeAllocator<T, Node>&, const NodeAllocator<U, Node>&) {
  return false;
}

// Node-based: a slot is a pointer to one allocation holding the key (a Key:
// up to 30 bytes inline) and its entry.  A flat table would hold the entry itself in every slot, and since
// a table runs between 7/16 and 7/8 full, an idle slot would cost as much
// as an entry (measured: 466 B of resident memory per 16 B key with a 64 B
// value, against 307 B with nodes; docs/BENCHMARKS.md "Issue 19: memory
// per key").
using MapNode = std::pair<const Key, Entry>;
using Map = absl::node_hash_map<Key, Entry, KeyHash, KeyEq, NodeAllocator<MapNode, MapNode>>;

// The largest value buffer (its capacity) a shard keeps for reuse
// (Shard::spare_value): a 32-byte lock token's, a short value's.
constexpr size_t kSpareValueMax = 64;

// Expiry index: (expires_at, the entry's key), earliest first.  An item
// points at the key inside the entry's map node, which does not move while
// the entry exists (a node map), so the index holds no copy of a key (no
// allocation for one) and orders equal expiries by that address, not by a
// string compare.  An item is erased before its entry's node is; once
// inserted, it is found again by the same (expiry, address).
struct TtlItem {
  int64_t at;
  const Key* key;  // nullptr only in TtlIndex's end marker
};
struct TtlLess {
  bool operator()(const TtlItem& a, const TtlItem& b) const {
    if (a.at != b.at) return a.at < b.at;
    // The end marker sorts after every item, even one of the same time.
    if (a.key == nullptr || b.key == nullptr) return a.key != nullptr && b.key == nullptr;
    return std::less<const Key*>()(a.key, b.key);
  }
};

// The index is never empty inside: it holds an end marker (the latest time,
// no key) from its construction on.  A b-tree frees its root when its last
// item goes and allocates one for the next, so without the marker a shard
// whose only expiring key is a lock that comes and goes (the lock cycle, a
// session) paid a malloc and a free for the root on every cycle.  The
// marker is not an item: size(), empty() and the range [begin(), end()) do
// not see it.
// (The allocator is a parameter for a test that counts allocations.)
template <typename Alloc = std::allocator<TtlItem>>
class BasicTtlIndex {
  using Set = absl::btree_set<TtlItem, TtlLess, Alloc>;

 public:
  using iterator = typename Set::const_iterator;

  explicit BasicTtlIndex(const Alloc& alloc = Alloc()) : items_(alloc) { InsertMarker(&items_); }
  BasicTtlIndex(BasicTtlIndex&&) = delete;
  BasicTtlIndex& operator=(BasicTtlIndex&&) = delete;

  // Throws bad_alloc as a b-tree does; the index is unchanged then.  Tried
  // first just before the marker: a new expiry is most often the latest
  // (one TTL for all locks or sessions, later and later), and a hint that
  // fits costs two compares where an insert searches the tree.
  std::pair<iterator, bool> insert(const TtlItem& item) {
    const size_t before = items_.size();
    const auto it = items_.insert(std::prev(items_.end()), item);
    return {it, items_.size() != before};
  }
  // find and erase(iterator): a b-tree's erase(key) goes through
  // equal_range and a range erase, twice the instructions for one item.
  size_t erase(const TtlItem& item) {
    const auto it = items_.find(item);
    if (it == items_.end()) return 0;
    items_.erase(it);
    return 1;
  }
  iterator begin() const { return items_.begin(); }
  iterator end() const { return std::prev(items_.end()); }  // the marker
  size_t size() const { return items_.size() - 1; }
  bool empty() const { return items_.size() == 1; }
  void swap(BasicTtlIndex& other) noexcept { items_.swap(other.items_); }

 private:
  static constexpr TtlItem kEndMarker{std::numeric_limits<int64_t>::max(), nullptr};
  // Not inlined: g++ 12 at -O2, seeing the insert into a tree it knows is
  // empty, warns of the b-tree's internal-node paths (-Warray-bounds).
  [[gnu::noinline]] static void InsertMarker(Set* items) { items->insert(kEndMarker); }
  Set items_;
};
using TtlIndex = BasicTtlIndex<>;

// No number INCRBYFLOAT accepts is this long (Redis's MAX_LONG_DOUBLE_CHARS).
constexpr size_t kMaxNumberText = 5 * 1024;

// now: a time in ms, or what converts to one (Store::Impl's WriteTime, which
// then reads its clock only for an entry that has an expiry).
template <typename Now>
inline bool IsExpired(const Entry& e, const Now& now) {
  return e.expires_at != 0 && e.expires_at <= now;
}

// Accounted size of an entry: a model of what it takes from the allocator
// (MallocChunk, StringHeapMem: aggregates.h; ValueHeapMem: value_buf.h),
// deterministic (the same for the same key, value and TTL), so that the
// store's total is exact: the sum of every entry's mem_size.
//
// The map's node (key and entry objects) and the entry's share of the table.
constexpr uint64_t kEntryOverhead =
    MallocChunk(sizeof(std::pair<const Key, Entry>)) + kNodeSlotShare;
// An item of the expiry index: the 16 B item in a b-tree node (about fifteen
// to a 256 B node, three quarters full on average).
constexpr uint64_t kTtlOverhead = sizeof(TtlItem) * 4 / 3 + 4;

// The key's bytes outside the entry's node: its buffer when it does not fit
// in the Key object (key.h: no terminating NUL), and its item in the expiry
// index.
inline uint64_t KeyMem(size_t key_len, bool has_ttl) {
  const uint64_t heap = key_len <= Key::kInline ? 0 : MallocChunk(key_len);
  return has_ttl ? heap + kTtlOverhead : heap;
}

inline uint64_t EntryMem(size_t key_len, size_t stored_len, bool has_ttl) {
  return kEntryOverhead + KeyMem(key_len, has_ttl) + ValueHeapMem(stored_len);
}

// Accounted size of one hash field: its node (the two string objects), its
// share of the table, and the two strings' buffers.
constexpr uint64_t kFieldOverhead = MallocChunk(sizeof(HashFields::value_type)) + kNodeSlotShare;

inline uint64_t FieldMem(size_t field_len, size_t value_len) {
  return kFieldOverhead + StringHeapMem(field_len) + StringHeapMem(value_len);
}

// Accounted size of a hash entry whose fields take `fields_mem`.
inline uint64_t HashEntryMem(size_t key_len, uint64_t fields_mem, bool has_ttl) {
  return EntryMem(key_len, 0, has_ttl) + MallocChunk(sizeof(HashFields)) + fields_mem;
}

// Accounted size of a list, set or sorted set entry whose elements take
// `elements_mem` (ListElementMem, SetMemberMem, ZSetMemberMem: aggregates.h).
inline uint64_t ListEntryMem(size_t key_len, uint64_t elements_mem, bool has_ttl) {
  return EntryMem(key_len, 0, has_ttl) + kListBaseMem + elements_mem;
}
inline uint64_t SetEntryMem(size_t key_len, uint64_t elements_mem, bool has_ttl) {
  return EntryMem(key_len, 0, has_ttl) + MallocChunk(sizeof(SetValue)) + elements_mem;
}
inline uint64_t ZSetEntryMem(size_t key_len, uint64_t elements_mem, bool has_ttl) {
  return EntryMem(key_len, 0, has_ttl) + MallocChunk(sizeof(ZSetValue)) + elements_mem;
}

// Accounted size of a tombstone (a deleted key's stamp, kept with a
// replicator so that an older write arriving late cannot bring the key back).
struct Tombstone {
  Stamp stamp;
  int64_t at_ms;  // when it was made, for collection
  bool tentative = false;  // see Entry::tentative
};
inline uint64_t TombstoneMem(size_t key_len) {
  return sizeof(std::pair<const std::string, Tombstone>) + 1 + key_len;
}

// Accounted size of a fence record: the fence a removed entry carried,
// which its key keeps (Store::SetFenced).
inline uint64_t FenceRecordMem(size_t key_len) {
  return sizeof(std::pair<const std::string, uint64_t>) + 1 + key_len;
}

// The replication encoding of a hash (see Mutation::value).
std::string EncodeHash(const HashFields& h);

// The inverse of EncodeHash; false on a malformed encoding.
bool DecodeHash(std::string_view in, HashFields* out);

// The bytes that replicate, log and snapshot e's value: a string's stored
// bytes, an aggregate's encoding (EncodeHash, EncodeList, ...).
std::string EncodedValue(const Entry& e);
// The number of elements of an aggregate (fields, elements, members); a
// string's original size.
uint64_t ValueSize(const Entry& e);

// Describes entry `e` in *m: all but the mutation's kind, key and stamp.  A
// hash's fields are encoded into *encoded, which m->value then refers to.
void DescribeEntry(const Entry& e, Mutation* m, std::string* encoded);
// The inverse: builds the entry m describes (its value, type, expiry, pin,
// stamp and accounted size) in *fresh; false when a hash does not decode.
bool EntryFromMutation(const Mutation& m, Entry* fresh);

// A value ready to be stored: compressed outside any lock.
struct Prepared {
  ValueBuf stored;
  // Set by PrepareForPut for a small value stored as is: `raw` (the
  // caller's bytes, which outlive the put) is copied by PutLocked under the
  // shard's lock, into the entry's own buffer when the key holds a string
  // whose buffer is the size the new value needs (an overwrite allocates and
  // frees nothing), else into a new one.  `stored` is then empty.
  std::string_view raw;
  bool deferred = false;
  bool compressed = false;
  bool ephemeral = false;  // see Entry::ephemeral
  uint64_t fence = 0;      // see Entry::fence
};

// ---------------------------------------------------------------------------
// A shard: one lock and what it guards.  Thread-safe as annotated: every
// guarded member is read under `mu` (shared or exclusive) and written under
// it exclusively.

struct alignas(64) Shard {
  mutable SharedMutex mu;
  NodeCache node_cache;  // see NodeCache; before the map, which frees into it
  Map map ABSL_GUARDED_BY(mu){0, KeyHash(), KeyEq(), Map::allocator_type(&node_cache)};
  // The buffer of the last short string value removed here (at most
  // kSpareValueMax bytes of capacity), for the next new key whose value
  // needs that very malloc chunk (FitsInPlace's rule, so the accounting
  // stays exact): a lock's token, released and taken again, is copied into
  // it instead of a new allocation.  Not accounted, as NodeCache.
  ValueBuf spare_value ABSL_GUARDED_BY(mu);
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
  // The memory total's accounting (Store::Impl::AddUsedLocked): while the
  // store has no memory limit, a change of the accounted bytes made under
  // this lock is added here, with a plain load and store, instead of to the
  // process-wide total (a locked add, ~5 ns, several a write); the total is
  // that plus every shard's `used`, which may be negative (an entry counted
  // globally and removed here).  `count_globally` is switched, under this
  // lock, before a limit takes effect (Store::Impl::SetMemoryLimit); it
  // also sends the pinned bytes to the process-wide figure eviction needs.
  bool count_globally ABSL_GUARDED_BY(mu) = false;
  std::atomic<int64_t> used{0};  // written under mu; read by Stats without it
  // Changes published here (Store::Impl::PublishLocked), for INFO's
  // rdb_changes_since_last_save: as `used`, written under mu with a plain
  // load and store (no locked add on the write path), beside it so that a
  // write touches no other line for it; read by Stats without the lock.
  std::atomic<uint64_t> changes{0};
  // With a replicator: stamps of deleted or expired keys, and the order
  // they were made in (for collection after tombstone_ttl_ms).
  absl::flat_hash_map<std::string, Tombstone, KeyHash, KeyEq> tombstones ABSL_GUARDED_BY(mu);
  std::deque<std::pair<int64_t, std::string>> tombstone_order ABSL_GUARDED_BY(mu);
  // The fences of removed entries that carried a recorded one (deleted,
  // expired or evicted fenced data): a fenced write to the key must still
  // be at least that.  Never evicted; consumed by the key's next write.
  absl::flat_hash_map<std::string, uint64_t, KeyHash, KeyEq> fence_records ABSL_GUARDED_BY(mu);

  // WATCH (RESP transactions): the keys some connection watches, with how
  // many watch each and a counter that every change to the key moves
  // (TouchWatchedLocked), present or absent, so that EXEC can tell.
  struct Watched {
    uint32_t watchers = 0;
    uint64_t touched = 0;
  };
  absl::flat_hash_map<std::string, Watched, KeyHash, KeyEq> watched ABSL_GUARDED_BY(mu);

  // Counted under the lock, read by Stats without it, hence atomic.  (Hits
  // and misses: Store::Impl's HitCounters.)
  std::atomic<uint64_t> expired{0};
  std::atomic<uint64_t> evicted{0};

  // WaitForChange: a writer that changed a key of this shard bumps
  // wake_seq and notifies, but only while someone waits.
  mutable std::mutex wait_mu;
  mutable std::condition_variable wait_cv;
  mutable std::atomic<uint64_t> wake_seq{0};
  mutable std::atomic<int> waiters{0};
};

}  // namespace ephpm

#endif  // EPHPM_CORE_SHARD_H_
