// Durability settings and figures (docs/PERSISTENCE.md): what StoreOptions
// carries to turn the append-only log on, what Store::persistence_info()
// reports, and the offline check behind `ephpm --check-data DIR`.

#ifndef EPHPM_PERSISTENCE_H_
#define EPHPM_PERSISTENCE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ephpm {

struct StoreOptions;

// When the log is fsynced (Redis's appendfsync).
enum class FsyncPolicy : uint8_t {
  kAlways,    // a write is answered only once its record is durable (group commit)
  kEverySec,  // written within ~10 ms, fsynced once a second
  kNo,        // written within ~10 ms, fsynced by the kernel's writeback
};

// "always", "everysec", "no"; false for anything else.
bool ParseFsyncPolicy(std::string_view text, FsyncPolicy* out);
const char* FsyncPolicyName(FsyncPolicy p);

struct PersistenceOptions {
  // Empty = no persistence.  Created when missing (one level, mode 0700).
  std::string data_dir;
  FsyncPolicy fsync = FsyncPolicy::kEverySec;
  // A snapshot (compaction) starts on its own when the current log has
  // grown past this many bytes and past twice its size after the last
  // snapshot (Redis's auto-aof-rewrite-min-size / -percentage 100).
  uint64_t rewrite_min_bytes = 64u * 1024 * 1024;
};

// What Store::persistence_info() reports.  All zero / false / empty when
// persistence is off.
struct PersistenceInfo {
  bool enabled = false;
  FsyncPolicy fsync = FsyncPolicy::kEverySec;
  std::string data_dir;
  // Writes are refused while this is set: the last write(2) or fsync(2) of
  // the log failed with this reason (strerror text).  Cleared by the first
  // write that succeeds again.
  std::string write_error;
  bool rewrite_in_progress = false;
  bool last_rewrite_ok = true;        // false when the last snapshot failed
  std::string last_rewrite_error;     // its reason
  uint64_t rewrites = 0;              // snapshots completed since start
  // StoreStats::changes when the last successful snapshot began (or when
  // the start had loaded): INFO's rdb_changes_since_last_save is the
  // difference.
  uint64_t changes_at_last_save = 0;
  int64_t last_save_unix = 0;         // when the last snapshot completed (s), or
                                      // the start time when there was none
  uint64_t log_bytes = 0;             // size of the current log file
  uint64_t log_base_bytes = 0;        // its size right after the last snapshot
  uint64_t buffered_bytes = 0;        // appended, not yet written
  uint64_t records = 0;               // records appended since start
  uint64_t write_calls = 0;           // write(2)s of the log
  uint64_t fsyncs = 0;                // fsync(2)s of the log
  // Group commit (fsync=always): how many records each fsync made durable.
  uint64_t commit_batches = 0;        // fsyncs that answered waiting writers
  uint64_t commit_records = 0;        // records those fsyncs covered in all
  uint64_t commit_max_batch = 0;      // the most records one fsync covered
  // What the start loaded.
  uint64_t loaded_records = 0;        // snapshot + log records read
  uint64_t loaded_keys = 0;           // live keys after the load
  uint64_t truncated_bytes = 0;       // torn tail cut off the last log
  int64_t load_ms = 0;                // time the load took
};

// What a start would load from `data_dir`, without changing anything: the
// lines `ephpm --check-data DIR` prints.
struct CheckDataReport {
  bool ok = false;               // a start would load (possibly cutting a torn tail)
  std::string error;             // when !ok: why a start would refuse (file, offset)
  std::string snapshot;          // the manifest's snapshot file, or ""
  uint64_t snapshot_records = 0;
  std::string logs;              // the manifest's log files, space separated
  uint64_t log_records = 0;
  uint64_t keys = 0;             // live keys after the load, every database (expired dropped)
  std::vector<std::pair<uint32_t, uint64_t>> keys_by_db;  // (database, keys), the non-empty ones
  uint64_t expired = 0;          // entries dropped as expired
  uint64_t value_bytes = 0;      // bytes of the live keys' values as stored
  std::string torn_file;         // the log whose tail a start would cut, or ""
  uint64_t torn_offset = 0;      // where it would cut
  uint64_t torn_bytes = 0;       // how many bytes it would drop
};

// Runs the load a start would make (in a private store), changing no file.
// `options` is what the start would be given (its databases decide whether
// keys of database n can load); its data dir and sweeper are not used.
CheckDataReport CheckData(const std::string& data_dir, const StoreOptions& options);
CheckDataReport CheckData(const std::string& data_dir);  // with the default options

}  // namespace ephpm

#endif  // EPHPM_PERSISTENCE_H_
