// The data directory's files: headers, whole writes, the LOCK, the
// MANIFEST, snapshots, and the load a start makes (docs/PERSISTENCE.md).

#include "persist_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ephpm {
namespace persist {
namespace {

constexpr char kLogMagic[] = "EPHPMLOG";
constexpr char kSnapshotMagic[] = "EPHPMSNP";
constexpr char kTrailerMagic[] = "EPHPMEND";
constexpr size_t kSnapshotChunk = 1u << 20;

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string Hex64(uint64_t v) {
  char b[17];
  snprintf(b, sizeof(b), "%016" PRIx64, v);
  return b;
}

// A file mapped read-only for a load: records are decoded in place, so the
// Mutations handed to `apply` point into the mapping.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { Close(); }

  bool Open(const std::string& path, std::string* error) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      *error = path + ": " + ErrnoText(errno);
      return false;
    }
    struct stat st;
    if (fstat(fd_, &st) != 0) {
      *error = path + ": " + ErrnoText(errno);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) return true;  // mmap refuses an empty length
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED) {
      *error = path + ": mmap: " + ErrnoText(errno);
      return false;
    }
    data_ = static_cast<const char*>(p);
    // Only a hint: a load reads front to back once.
    (void)madvise(p, size_, MADV_SEQUENTIAL);
    return true;
  }

  void Close() {
    // Nothing was written through either: a failed munmap or close loses
    // nothing, and there is no one to tell.
    if (data_ != nullptr) (void)munmap(const_cast<char*>(data_), size_);
    if (fd_ >= 0) (void)close(fd_);
    data_ = nullptr;
    fd_ = -1;
  }

  std::string_view view() const { return std::string_view(data_, size_); }

 private:
  int fd_ = -1;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

bool AllZero(std::string_view s) {
  for (char c : s) {
    if (c != 0) return false;
  }
  return true;
}

// The header's version, or an error for anything that is not a whole header
// of `kind`.
bool CheckHeader(std::string_view data, FileKind kind, const std::string& path,
                 std::string* error) {
  const std::string want = FileHeader(kind);
  if (data.substr(0, 8) != std::string_view(want).substr(0, 8)) {
    *error = path + (kind == FileKind::kLog ? ": not an ephpm log" : ": not an ephpm snapshot") +
             " (bad magic)";
    return false;
  }
  const uint64_t version = GetLe(data.data() + 8, 4);
  if (version != kFormatVersion) {
    *error = path + ": unsupported format version " + std::to_string(version);
    return false;
  }
  return true;
}

bool LoadSnapshot(const std::string& path, absl::FunctionRef<void(const Mutation&)> apply,
                  uint64_t* records, std::string* error) {
  MappedFile f;
  if (!f.Open(path, error)) return false;
  const std::string_view data = f.view();
  if (data.size() < kFileHeaderSize + kSnapshotTrailerSize) {
    if (data.size() >= kFileHeaderSize && !CheckHeader(data, FileKind::kSnapshot, path, error)) {
      return false;
    }
    *error = path + ": snapshot too short (" + std::to_string(data.size()) +
             " bytes), its trailer is missing";
    return false;
  }
  if (!CheckHeader(data, FileKind::kSnapshot, path, error)) return false;
  const size_t trailer = data.size() - kSnapshotTrailerSize;
  if (data.substr(trailer, 8) != std::string_view(kTrailerMagic, 8)) {
    *error = path + ": snapshot trailer missing or damaged at offset " + std::to_string(trailer);
    return false;
  }
  const uint64_t count = GetLe(data.data() + trailer + 8, 8);
  const uint64_t hash = GetLe(data.data() + trailer + 16, 8);
  const std::string_view body = data.substr(kFileHeaderSize, trailer - kFileHeaderSize);
  // Checked whole before anything is applied: a damaged snapshot applies
  // nothing.
  if (XXH3_64bits(body.data(), body.size()) != hash) {
    *error = path + ": snapshot checksum mismatch (its trailer at offset " +
             std::to_string(trailer) + " does not match the records)";
    return false;
  }
  uint64_t n = 0;
  size_t off = 0;
  while (off < body.size()) {
    Mutation m{};
    size_t used = 0;
    if (DecodeRecord(body.substr(off), &m, &used) != Decoded::kOk) {
      *error = path + ": corrupt record at offset " + std::to_string(kFileHeaderSize + off);
      return false;
    }
    off += used;
    ++n;
  }
  if (n != count) {
    *error = path + ": snapshot holds " + std::to_string(n) + " records, its trailer says " +
             std::to_string(count);
    return false;
  }
  for (off = 0; off < body.size();) {
    Mutation m{};
    size_t used = 0;
    DecodeRecord(body.substr(off), &m, &used);
    apply(m);
    off += used;
  }
  *records = n;
  return true;
}

// Cuts `path` to `size` bytes and makes the cut durable.
bool Truncate(const std::string& path, uint64_t size, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": cannot open to cut its torn tail: " + ErrnoText(errno);
    return false;
  }
  bool ok = ftruncate(fd, static_cast<off_t>(size)) == 0;
  if (!ok) {
    *error = path + ": cannot cut its torn tail: " + ErrnoText(errno);
  } else if (!Fsync(FileOps{}, fd, error)) {
    *error = path + ": cannot fsync the cut of its torn tail: " + *error;
    ok = false;
  }
  (void)close(fd);  // fsynced (or already failed): close has nothing left to report
  return ok;
}

// Replays one log.  `tail_ok`: a bad record here may be a torn tail (no
// later log holds a record); `last`: this is the manifest's last log (a
// header cut short may be torn too).
bool ReplayLog(const std::string& dir, const std::string& name, bool tail_ok, bool last,
               bool repair, absl::FunctionRef<void(const Mutation&)> apply, LoadStats* stats,
               uint64_t* size_after, std::string* error) {
  const std::string path = dir + "/" + name;
  MappedFile f;
  if (!f.Open(path, error)) {
    *error = dir + "/MANIFEST names " + name + ", which cannot be read: " + *error;
    return false;
  }
  const std::string_view data = f.view();
  *size_after = data.size();
  size_t off = 0;
  bool torn = false;
  if (data.size() < kFileHeaderSize) {
    // Created, but killed before its header was all written.
    const std::string want = FileHeader(FileKind::kLog);
    if (data != std::string_view(want).substr(0, data.size())) {
      *error = path + ": not an ephpm log (bad magic)";
      return false;
    }
    if (!data.empty()) {
      if (!last) {
        *error = path + ": header cut short at offset " + std::to_string(data.size()) +
                 " in a log that is not the last";
        return false;
      }
      torn = true;
    }
  } else {
    if (!CheckHeader(data, FileKind::kLog, path, error)) return false;
    off = kFileHeaderSize;
    std::vector<Mutation> group;
    while (off < data.size()) {
      Mutation m{};
      size_t used = 0;
      Decoded d = DecodeRecord(data.substr(off), &m, &used);
      if (d == Decoded::kOk) {
        apply(m);
        ++stats->log_records;
        off += used;
        continue;
      }
      // Where the failure is: the record at `off`, or one inside a group
      // (the group is then dropped or refused as a whole, from `off`).
      size_t failed_at = off;
      if (d == Decoded::kGroup) {
        const uint64_t len = m.original_size;
        const size_t start = off + used;
        group.clear();
        if (len > data.size() - start) {
          d = Decoded::kTorn;  // the group's records did not all reach the file
        } else {
          const std::string_view records = data.substr(start, len);
          size_t at = 0;
          while (at < records.size()) {
            Mutation r{};
            size_t n = 0;
            d = DecodeRecord(records.substr(at), &r, &n);
            if (d != Decoded::kOk) break;
            group.push_back(r);
            at += n;
          }
          if (at == records.size()) {
            for (const Mutation& r : group) apply(r);
            stats->log_records += group.size();
            off = start + len;
            continue;
          }
          // A record that does not fit its group is damage, whatever it says.
          failed_at = start + at;
          if (d == Decoded::kTorn || d == Decoded::kGroup) d = Decoded::kCorrupt;
        }
      }
      // A tear leaves a record cut short, or (power loss) a block of
      // zeros, or a record whose last bytes never reached the disk: a
      // damaged record followed by nothing but zeros.
      uint64_t size = 0;
      const std::string_view rest = data.substr(failed_at);
      const bool tail =
          d == Decoded::kTorn || AllZero(rest) ||
          (RecordSize(rest, &size) && size <= rest.size() && AllZero(rest.substr(size)));
      if (!tail) {
        *error = path + ": corrupt record at offset " + std::to_string(failed_at);
        return false;
      }
      if (!tail_ok) {
        *error = path + ": record at offset " + std::to_string(off) +
                 " is cut short or damaged, and a later log holds records";
        return false;
      }
      torn = true;
      break;
    }
  }
  if (!torn) return true;
  stats->torn_file = name;
  stats->torn_offset = off;
  stats->torn_bytes = data.size() - off;
  if (!repair) return true;
  f.Close();
  if (!Truncate(path, off, error)) return false;
  *size_after = off;
  fprintf(stderr, "ephpm: %s: dropped %" PRIu64 " bytes of a torn record at offset %" PRIu64 "\n",
          path.c_str(), stats->torn_bytes, stats->torn_offset);
  return true;
}

}  // namespace

std::string FileHeader(FileKind kind) {
  std::string h(kind == FileKind::kLog ? kLogMagic : kSnapshotMagic, 8);
  PutLe(kFormatVersion, 4, &h);
  return h;
}

std::string ErrnoText(int err) {
  char buf[256];
  // The GNU strerror_r: the text may or may not be in buf.
  return strerror_r(err, buf, sizeof(buf));
}

bool WriteAll(const FileOps& ops, int fd, const char* data, size_t n, size_t* done, uint64_t* calls,
              std::string* error) {
  auto* write_fn = ops.write != nullptr ? ops.write : ::write;
  while (*done < n) {
    ++*calls;
    const ssize_t w = write_fn(fd, data + *done, n - *done);
    if (w < 0) {
      if (errno == EINTR) continue;
      *error = ErrnoText(errno);
      return false;
    }
    if (w == 0) {
      // write(2) of a regular file answers 0 only when it cannot go on.
      *error = "write made no progress";
      return false;
    }
    *done += static_cast<size_t>(w);
  }
  return true;
}

bool Fsync(const FileOps& ops, int fd, std::string* error) {
  auto* fsync_fn = ops.fsync != nullptr ? ops.fsync : ::fsync;
  for (;;) {
    if (fsync_fn(fd) == 0) return true;
    if (errno != EINTR) break;
  }
  *error = ErrnoText(errno);
  return false;
}

bool SyncDir(const FileOps& ops, const std::string& dir, std::string* error) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *error = dir + ": " + ErrnoText(errno);
    return false;
  }
  const bool ok = Fsync(ops, fd, error);
  if (!ok) *error = dir + ": fsync: " + *error;
  (void)close(fd);  // a directory fd: nothing is written through it
  return ok;
}

int CreateWithHeader(const FileOps& ops, const std::string& path, FileKind kind,
                     std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = path + ": " + ErrnoText(errno);
    return -1;
  }
  const std::string header = FileHeader(kind);
  size_t done = 0;
  uint64_t calls = 0;
  if (!WriteAll(ops, fd, header.data(), header.size(), &done, &calls, error) ||
      !Fsync(ops, fd, error)) {
    *error = path + ": " + *error;
    (void)close(fd);  // the file is useless; the caller removes it
    return -1;
  }
  return fd;
}

int LockDataDir(const std::string& dir, std::string* error) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create data dir " + dir + ": " + ErrnoText(errno);
    return -1;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    *error = "cannot use data dir " + dir + ": " + ErrnoText(errno);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    *error = "data dir " + dir + " is not a directory";
    return -1;
  }
  const std::string lock_path = dir + "/LOCK";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "data dir " + dir + " is not writable: cannot open LOCK: " + ErrnoText(errno);
    return -1;
  }
  // Per open file description: a second open of the LOCK, even in this
  // process, is refused as well.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      char pid[32] = {};
      const ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
      std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "unknown";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) {
        holder.pop_back();
      }
      *error = "data dir " + dir + " is in use by another process (pid " + holder + ")";
    } else {
      *error = "cannot lock " + lock_path + ": " + ErrnoText(err);
    }
    (void)close(fd);  // never locked: nothing to release
    return -1;
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    *error = "data dir " + dir + " is not writable: " + lock_path + ": " + ErrnoText(errno);
    (void)close(fd);  // releases the lock we just took
    return -1;
  }
  // The LOCK may be writable where nothing new can be created (or where the
  // disk is full): try what the log will do.
  const std::string probe = dir + "/write-probe.tmp";
  const int pfd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = pfd >= 0;
  int err = errno;
  if (ok) {
    ok = write(pfd, "x", 1) == 1;
    err = errno;
    (void)close(pfd);
    (void)unlink(probe.c_str());  // a leftover is removed at the next start
  }
  if (!ok) {
    *error = "data dir " + dir + " is not writable: " + ErrnoText(err);
    (void)close(fd);
    return -1;
  }
  return fd;
}

std::string EncodeManifest(const Manifest& m) {
  std::string text = "ephpm-manifest 1\n";
  if (!m.snapshot.empty()) text += "snapshot " + m.snapshot + "\n";
  for (const auto& log : m.logs) text += "log " + log + "\n";
  text += "check " + Hex64(XXH3_64bits(text.data(), text.size())) + "\n";
  return text;
}

bool ParseManifest(std::string_view text, Manifest* m, std::string* why) {
  *m = Manifest();
  const size_t check_at = text.rfind("check ");
  if (check_at == std::string_view::npos || (check_at > 0 && text[check_at - 1] != '\n') ||
      text.substr(check_at) != "check " + Hex64(XXH3_64bits(text.data(), check_at)) + "\n") {
    *why = "damaged (its check line is missing or does not match)";
    return false;
  }
  std::string_view rest = text.substr(0, check_at);
  bool first = true;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    if (first) {
      if (line != "ephpm-manifest 1") {
        *why = "not an ephpm manifest of version 1";
        return false;
      }
      first = false;
    } else if (line.substr(0, 9) == "snapshot " && m->snapshot.empty() && m->logs.empty() &&
               FileNumber(line.substr(9), "snap.") >= 0) {
      m->snapshot = std::string(line.substr(9));
    } else if (line.substr(0, 4) == "log " && FileNumber(line.substr(4), "log.") >= 0) {
      m->logs.emplace_back(line.substr(4));
    } else {
      *why = "unexpected line \"" + std::string(line) + "\"";
      return false;
    }
  }
  if (first) {
    *why = "empty";
    return false;
  }
  return true;
}

bool WriteManifest(const FileOps& ops, const std::string& dir, const Manifest& m, bool* renamed,
                   std::string* error) {
  *renamed = false;
  const std::string tmp = dir + "/MANIFEST.tmp";
  const std::string text = EncodeManifest(m);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = tmp + ": " + ErrnoText(errno);
    return false;
  }
  size_t done = 0;
  uint64_t calls = 0;
  bool ok =
      WriteAll(ops, fd, text.data(), text.size(), &done, &calls, error) && Fsync(ops, fd, error);
  if (close(fd) != 0 && ok) {
    *error = ErrnoText(errno);
    ok = false;
  }
  if (ok && rename(tmp.c_str(), (dir + "/MANIFEST").c_str()) != 0) {
    *error = "rename: " + ErrnoText(errno);
    ok = false;
  }
  if (!ok) {
    *error = tmp + ": " + *error;
    (void)unlink(tmp.c_str());  // the old MANIFEST stands; a leftover goes at the next start
    return false;
  }
  *renamed = true;
  return SyncDir(ops, dir, error);
}

int64_t FileNumber(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return -1;
  name.remove_prefix(prefix.size());
  if (name.empty() || name.size() > 18) return -1;
  int64_t n = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool LoadDir(const std::string& dir, bool repair, absl::FunctionRef<void(const Mutation&)> apply,
             LoadStats* stats, Manifest* manifest, bool* found, std::vector<uint64_t>* log_sizes,
             std::string* error) {
  *stats = LoadStats();
  *manifest = Manifest();
  log_sizes->clear();
  *found = false;
  const std::string mpath = dir + "/MANIFEST";
  const int fd = open(mpath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    *error = mpath + ": " + ErrnoText(errno);
    return false;
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = mpath + ": " + ErrnoText(errno);
      (void)close(fd);  // read-only
      return false;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  (void)close(fd);  // read-only
  std::string why;
  if (!ParseManifest(text, manifest, &why)) {
    *error = mpath + ": " + why;
    return false;
  }
  *found = true;
  if (!manifest->snapshot.empty()) {
    const std::string path = dir + "/" + manifest->snapshot;
    if (access(path.c_str(), F_OK) != 0) {
      *error = mpath + " names " + manifest->snapshot + ", which cannot be read: " + path + ": " +
               ErrnoText(errno);
      return false;
    }
    if (!LoadSnapshot(path, apply, &stats->snapshot_records, error)) return false;
    stats->snapshot = manifest->snapshot;
  }
  // A torn record may end the last log that holds records: a rewrite
  // registers the next log before the writer has finished the one before.
  size_t tail_log = 0;
  for (size_t i = 0; i < manifest->logs.size(); ++i) {
    struct stat st;
    const std::string path = dir + "/" + manifest->logs[i];
    if (stat(path.c_str(), &st) != 0) {
      *error = mpath + " names " + manifest->logs[i] + ", which cannot be read: " + path + ": " +
               ErrnoText(errno);
      return false;
    }
    if (static_cast<uint64_t>(st.st_size) > kFileHeaderSize) tail_log = i;
  }
  for (size_t i = 0; i < manifest->logs.size(); ++i) {
    uint64_t size = 0;
    if (!ReplayLog(dir, manifest->logs[i], i >= tail_log, i + 1 == manifest->logs.size(), repair,
                   apply, stats, &size, error)) {
      return false;
    }
    log_sizes->push_back(size);
    if (!stats->logs.empty()) stats->logs += " ";
    stats->logs += manifest->logs[i];
  }
  return true;
}

bool Load(const std::string& data_dir, bool repair, absl::FunctionRef<void(const Mutation&)> apply,
          LoadStats* stats, std::string* error) {
  Manifest manifest;
  bool found = false;
  std::vector<uint64_t> sizes;
  return LoadDir(data_dir, repair, apply, stats, &manifest, &found, &sizes, error);
}

SnapshotWriter::SnapshotWriter(const FileOps& ops, int fd) : ops_(ops), fd_(fd) {
  XXH3_64bits_reset(&hash_);
}

void SnapshotWriter::Add(const Mutation& m) {
  if (!error_.empty()) return;  // Finish reports the first failure
  EncodeRecord(m, &chunk_);
  ++records_;
  if (chunk_.size() >= kSnapshotChunk) Flush();
}

void SnapshotWriter::Flush() {
  XXH3_64bits_update(&hash_, chunk_.data(), chunk_.size());
  size_t done = 0;
  uint64_t calls = 0;
  if (!WriteAll(ops_, fd_, chunk_.data(), chunk_.size(), &done, &calls, &error_)) {
    if (error_.empty()) error_ = "write failed";
  }
  chunk_.clear();
}

bool SnapshotWriter::Finish(std::string* error) {
  if (error_.empty()) Flush();
  if (error_.empty()) {
    std::string trailer(kTrailerMagic, 8);
    PutLe(records_, 8, &trailer);
    PutLe(XXH3_64bits_digest(&hash_), 8, &trailer);
    size_t done = 0;
    uint64_t calls = 0;
    if (WriteAll(ops_, fd_, trailer.data(), trailer.size(), &done, &calls, &error_)) {
      Fsync(ops_, fd_, &error_);
    }
  }
  *error = error_;
  return error_.empty();
}

}  // namespace persist
}  // namespace ephpm
