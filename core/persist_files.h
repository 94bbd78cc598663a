// The data directory's files, for the engine (persist_engine.cc): the file
// headers, whole writes through FileOps, the LOCK, the MANIFEST, the
// snapshot writer, and the load.  Private to core/persist_*.cc.

#ifndef EPHPM_CORE_PERSIST_FILES_H_
#define EPHPM_CORE_PERSIST_FILES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "persist.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ephpm {
namespace persist {

// Every log and snapshot starts with 8 bytes of magic and a u32 format
// version (little endian).
constexpr size_t kFileHeaderSize = 12;
constexpr uint32_t kFormatVersion = 1;
enum class FileKind { kLog, kSnapshot };
std::string FileHeader(FileKind kind);

// A snapshot ends with "EPHPMEND", u64 record count, u64 XXH3-64 of every
// byte between the header and the trailer.
constexpr size_t kSnapshotTrailerSize = 24;

// "<strerror(err)>".
std::string ErrnoText(int err);

// write(2) of [data + *done, data + n) through ops until all is written
// (short writes continue where they stopped, EINTR retries).  *done says
// how far it got, so that a retry never writes a byte twice; *calls counts
// the write(2)s made.  False and *error (strerror text) on failure.
bool WriteAll(const FileOps& ops, int fd, const char* data, size_t n, size_t* done, uint64_t* calls,
              std::string* error);
// fsync(2) through ops, retried on EINTR.
bool Fsync(const FileOps& ops, int fd, std::string* error);
// Makes the directory's entries (a create, a rename, an unlink) durable.
bool SyncDir(const FileOps& ops, const std::string& dir, std::string* error);

// Creates `path` (truncating a leftover), writes the header, fsyncs it; the
// directory is not synced.  The fd (O_WRONLY, appending) or -1 with *error.
int CreateWithHeader(const FileOps& ops, const std::string& path, FileKind kind,
                     std::string* error);

// Creates the data dir when missing (one level, 0700), checks that it is a
// writable directory, takes its LOCK (flock, non-blocking) and writes our
// pid into it.  The LOCK's fd (hold it for the life of the process) or -1
// and *error naming the dir and the reason.
int LockDataDir(const std::string& dir, std::string* error);

struct Manifest {
  std::string snapshot;           // "snap.<n>" or ""
  std::vector<std::string> logs;  // "log.<n>", in replay order
};
// Replaces <dir>/MANIFEST atomically (MANIFEST.tmp, fsync, rename, fsync of
// the directory).  On failure *renamed says whether the rename was made (the
// directory's fsync failed): then either manifest may be the one a crash
// leaves, and every file either names must stay.
bool WriteManifest(const FileOps& ops, const std::string& dir, const Manifest& m, bool* renamed,
                   std::string* error);
// The manifest's text, and its parse (false and *error for anything else).
std::string EncodeManifest(const Manifest& m);
bool ParseManifest(std::string_view text, Manifest* m, std::string* why);

// The number in "snap.<n>" / "log.<n>" (prefix "snap." or "log."), or -1.
int64_t FileNumber(std::string_view name, std::string_view prefix);

// The whole size of the record `in` starts with, when its header (length
// and check) is intact; false when it is cut short or damaged.
bool RecordSize(std::string_view in, uint64_t* size);

// Load (persist.h) that also returns the manifest it found (*found false
// when there was none) and the size of every log it names after repair.
bool LoadDir(const std::string& dir, bool repair, absl::FunctionRef<void(const Mutation&)> apply,
             LoadStats* stats, Manifest* manifest, bool* found, std::vector<uint64_t>* log_sizes,
             std::string* error);

// Writes a snapshot into a file: header, records, trailer.  Stops at the
// first failure and keeps its reason.
class SnapshotWriter {
 public:
  SnapshotWriter(const FileOps& ops, int fd);
  void Add(const Mutation& m);
  // Writes what is left and the trailer, fsyncs.  False and *error if any
  // write or the fsync failed.
  bool Finish(std::string* error);
  uint64_t records() const { return records_; }

 private:
  void Flush();
  const FileOps& ops_;
  int fd_;
  std::string chunk_;
  uint64_t records_ = 0;
  XXH3_state_t hash_;
  std::string error_;
};

}  // namespace persist
}  // namespace ephpm

#endif  // EPHPM_CORE_PERSIST_FILES_H_
