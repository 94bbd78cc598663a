// Settings a Store is built from.  The PHP extension and the host program
// fill these from the ephpm.* INI settings.

#ifndef EPHPM_OPTIONS_H_
#define EPHPM_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "ephpm/persistence.h"

namespace ephpm {

class Clock;
class Replicator;

// What a write does when it would pass memory_limit.
enum class EvictionPolicy : uint8_t {
  kNoEviction,  // refuse the write with OutOfMemory
  kAllKeysLru,  // evict the least recently used of sampled keys, then retry
};

enum class Compression : uint8_t { kOff, kZstd };

// Hard limits that no option raises.
inline constexpr size_t kMaxKeySize = 64 * 1024;  // bytes; longer keys are refused
// The largest max_value_size accepted: an entry keeps a string's length in 32
// bits, and a log record's body (key, value, header) must fit its u32 length.
inline constexpr size_t kMaxValueSizeLimit = size_t{2} * 1024 * 1024 * 1024;

struct StoreOptions {
  // Number of shards; a power of two in [1, 65536].
  size_t shards = 64;

  // Databases (Redis's SELECT), each with its own `shards` shards; the PHP
  // extension and the session handler use database 0.  In [1, 1024], and
  // shards * databases at most 65536.
  size_t databases = 16;

  // Accounted bytes the store may hold; 0 = unlimited.
  uint64_t memory_limit = 0;
  EvictionPolicy eviction = EvictionPolicy::kNoEviction;
  // Keys sampled per eviction (Redis's maxmemory-samples).
  size_t eviction_samples = 5;

  // Values of at least compression_threshold bytes are stored zstd-compressed
  // when that makes them smaller.  Level as zstd's (1..22; negative = fast).
  Compression compression = Compression::kOff;
  size_t compression_threshold = 1024;
  int compression_level = 3;

  // Values longer than this are refused (Redis's proto-max-bulk-len default).
  // At most kMaxValueSizeLimit.
  size_t max_value_size = 512u * 1024 * 1024;

  // Period of the background expiry sweeper; 0 = no sweeper thread (expired
  // entries are still invisible and are removed when touched).
  int64_t sweep_interval_ms = 100;
  // Expired entries removed per shard per sweep pass before the sweeper
  // yields the shard lock and schedules another pass at once.
  size_t sweep_budget = 64;

  // With a replicator: how long a deleted key's tombstone is kept, so that an
  // older write arriving late (a partition healing) cannot bring it back.
  int64_t tombstone_ttl_ms = 10 * 60 * 1000;

  // Not owned; must outlive the store.  Null = SystemClock().
  const Clock* clock = nullptr;
  // Not owned; must outlive the store.  Null = a single node, decide locally.
  Replicator* replicator = nullptr;

  // The append-only log and snapshots (docs/PERSISTENCE.md); off while
  // persistence.data_dir is empty.  With it, Create loads the dir's data
  // and fails (naming the dir) when it cannot be used.
  PersistenceOptions persistence;
};

// Returns "" when `o` is usable, else a message naming the bad setting.
std::string ValidateOptions(const StoreOptions& o);

}  // namespace ephpm

#endif  // EPHPM_OPTIONS_H_
