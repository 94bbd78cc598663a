// The durability engine behind StoreOptions::persistence (docs/PERSISTENCE.md):
// the record codec, the data directory (its LOCK and MANIFEST), the
// append-only log with its writer thread and group commit, snapshots, and
// the load a start makes.  Private to core/: Store::Impl feeds it the
// effects it publishes and applies what it loads.
//
// Thread-safe.  Append may be called with store (shard) locks held: it
// takes only the engine's buffer mutex and never calls back into the store.
// The snapshot walk (SetSnapshotSource) is called from the engine's rewrite
// thread, or the caller's for a foreground Rewrite, with no engine lock held.

#ifndef EPHPM_CORE_PERSIST_H_
#define EPHPM_CORE_PERSIST_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "ephpm/persistence.h"
#include "ephpm/status.h"
#include "ephpm/types.h"

namespace ephpm {
namespace persist {

// --- records ----------------------------------------------------------------
//
// On disk: u32 body length | u32 check of those 4 bytes (low half of their
// XXH3-64) | body | u64 XXH3-64 of the body, little endian.  The body:
// u8 kind (Mutation::Kind + 1) | u8 type | u8 flags (1 compressed, 2 pinned,
// 4 fence) | i64 expires_at_ms | u64 original_size | u64 stamp.hlc | u64
// stamp.node | u32 key length | [u64 fence, with flag 4] | key | value (the
// rest of the body).  The header's own
// check makes a damaged length detectable as corruption rather than taken
// for a torn tail.

// Appends m's record (version is not recorded) to *out.
void EncodeRecord(const Mutation& m, std::string* out);

// Records that must load all or none (an EXEC's, a script's, SWAPDB's, a
// RENAME's: whatever one thread logged under one set of shard locks) are a
// group: a header record (kind byte kGroupKind, no key or value, its
// original_size the byte length of the group's records) followed by them.
// A group cut short at the end of the last log is a torn tail as a whole.
inline constexpr uint8_t kGroupKind = 0xFF;
void EncodeGroupHeader(uint64_t records_bytes, std::string* out);

enum class Decoded {
  kOk,       // *m holds the record (its views point into `in`), *consumed its size
  kGroup,    // a group's header: m->original_size bytes of records follow
  kTorn,     // `in` ends inside the record (a header or body cut short)
  kCorrupt,  // a check failed, or an impossible kind / type / length
};
Decoded DecodeRecord(std::string_view in, Mutation* m, size_t* consumed);

// --- fault injection --------------------------------------------------------

// The syscalls the log writer makes, replaceable by tests (disk full, EIO).
// Null members mean the real call.
struct FileOps {
  ssize_t (*write)(int fd, const void* buf, size_t n) = nullptr;
  int (*fsync)(int fd) = nullptr;
};

// --- loading ------------------------------------------------------------------

struct LoadStats {
  std::string snapshot;          // file name loaded, or ""
  uint64_t snapshot_records = 0;
  std::string logs;              // log file names replayed, space separated
  uint64_t log_records = 0;
  std::string torn_file;         // the last log, when its tail was torn
  uint64_t torn_offset = 0;      // where the valid part ends
  uint64_t torn_bytes = 0;       // bytes after it (cut when repairing)
};

// Reads data_dir's MANIFEST, its snapshot (whose trailer must check) and its
// logs in order, passing every record to `apply`.  A torn or corrupt record
// that ends exactly at the end of the *last* log (the last one holding
// records: a log a rewrite registered that has nothing yet does not count)
// is a torn tail: with
// `repair` the file is truncated there (and the cut logged to stderr as
// "ephpm: <file>: dropped N bytes of a torn record at offset O"); without,
// nothing is changed.  Anything else (a bad snapshot, a manifest naming a
// missing file, a bad record followed by more data, a bad record in an
// earlier log) fails with *error naming the file and the offset.  A data dir
// without a MANIFEST loads nothing and succeeds.
bool Load(const std::string& data_dir, bool repair,
          absl::FunctionRef<void(const Mutation&)> apply, LoadStats* stats, std::string* error);

// --- the engine ---------------------------------------------------------------

class Engine {
 public:
  struct Options {
    PersistenceOptions persistence;
    int64_t flush_interval_ms = 10;  // how long appended bytes may wait for write(2)
    int64_t fsync_interval_ms = 1000;  // everysec's period
    FileOps file_ops;               // tests only
    // Tests only: called by the rewrite at "log_switched", "snapshot_written"
    // (before its rename), "snapshot_renamed" and "manifest_written", so a
    // test can copy the data dir as a kill -9 at that instant would leave it.
    std::function<void(std::string_view step)> on_rewrite_step;
    // The store's count of changes so far (Store::Stats().changes): read
    // when the start has loaded and when a snapshot begins, so that
    // PersistenceInfo::changes_at_last_save is the count the last
    // successful snapshot (or the start) covered.  Optional.
    std::function<uint64_t()> count_changes;
  };

  // Creates data_dir when missing, takes its LOCK (flock, non-blocking: a
  // dir held by a live process is refused, naming the pid written in it),
  // checks that it is writable, loads it (Load with repair) through `apply`,
  // removes files the manifest does not name, opens a new log and records
  // it in the manifest, and starts the writer thread.  Null and *error
  // (naming the dir or file and the reason) on any failure.
  static std::unique_ptr<Engine> Open(const Options& options,
                                      absl::FunctionRef<void(const Mutation&)> apply,
                                      LoadStats* stats, std::string* error);

  // Writes and fsyncs everything appended (whatever the policy), stops the
  // threads (waiting for a rewrite in progress), releases the LOCK.
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Appends m's record to the in-memory buffer: no syscall on this thread
  // (at most a wake-up of the writer when the buffer passes its high mark).
  // Returns the record's sequence number (increasing).
  uint64_t Append(const Mutation& m);
  // Appends `count` records encoded back to back (EncodeRecord) as one
  // group, contiguous in the log (no other record, rewrite switch or
  // write(2) boundary that a load could stop at between them counts: a load
  // takes the whole group or none of it).  One record needs no group.
  // Returns the last sequence number, 0 when count is 0.
  uint64_t AppendGroup(std::string_view records, size_t count);

  // With fsync=always: blocks until the record numbered `seq` has been
  // written and fsynced (one fsync answers every waiter it covers).  With
  // the other policies returns at once.  kOk, or kPersistenceError when the
  // write or fsync failed (the record stays buffered and is written once
  // the disk accepts writes again).  seq 0 = nothing to wait for.
  Status WaitDurable(uint64_t seq);

  // Whether the last write(2) or fsync(2) failed (writes are refused then).
  bool Failed() const;
  // The reason, as in PersistenceInfo::write_error ("" when !Failed()).
  std::string WriteError() const;

  // The live data, for a snapshot: `walk(emit)` must call emit once per key
  // to keep (and per tombstone to keep, as a kDelete with its stamp).  Set
  // once, before any Rewrite; the walk runs without engine locks held.
  using Walk = std::function<void(absl::FunctionRef<void(const Mutation&)>)>;
  void SetSnapshotSource(Walk walk);

  // Takes a snapshot and compacts the log (docs/PERSISTENCE.md, "Snapshot
  // and compaction").  background=false (SAVE) returns when it is done;
  // background=true (BGREWRITEAOF) starts it on the rewrite thread.  kOk
  // and *message ("Background append only file rewriting started" /
  // "OK"), or kInvalidArgument when a rewrite is already in progress
  // (*message "Background append only file rewriting already in progress"),
  // or kPersistenceError with the reason in *message.
  Status Rewrite(bool background, std::string* message);

  // Fills every field of *info but loaded_keys and load_ms, which the store
  // knows.
  void Info(PersistenceInfo* info) const;

 private:
  struct State;
  explicit Engine(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace persist
}  // namespace ephpm

#endif  // EPHPM_CORE_PERSIST_H_
