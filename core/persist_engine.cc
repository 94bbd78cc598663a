// The durability engine (core/persist.h): the append buffer, the writer
// thread with its fsync policy and group commit, the error state, and the
// rewrite (snapshot + compaction) on its own thread.
//
// Threads and what they own:
// - callers: Append (encode outside the lock, memcpy under mu), WaitDurable.
// - the writer: the only thread that writes or fsyncs a log.  Its file,
//   the bytes it took out of the buffer and how far it wrote them are its
//   own (WriterState), so the buffer mutex is never held across a syscall.
// - the rewrite thread (or a SAVE caller): creates the next log, the
//   snapshot and the manifests.  It cuts the buffer under mu and hands the
//   next log's fd to the writer, which finishes the old log (write, fsync,
//   close) before it writes a byte to the new one.
// Lock order: files_mu before mu and before rw_mu; mu and rw_mu are never
// held together.

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "mutex.h"
#include "persist.h"
#include "persist_files.h"

namespace ephpm {
namespace persist {
namespace {

// A caller wakes the writer early only when the buffer passes this mark (or,
// with fsync=always, when it waits): at most one wake-up per mark.
constexpr size_t kHighMark = 1u << 20;
// A thread's encoding scratch is kept between appends unless a huge record
// made it this large.
constexpr size_t kScratchKeep = 64u << 10;
// After a failed automatic rewrite, the next automatic one waits this long.
constexpr auto kAutoRewriteBackoff = std::chrono::seconds(5);

using Clock = std::chrono::steady_clock;

}  // namespace

struct Engine::State {
  Options options;
  std::string dir;
  int lock_fd = -1;
  int64_t start_unix = 0;
  uint64_t loaded_records = 0;
  uint64_t truncated_bytes = 0;

  // --- the buffer and what the writer publishes -------------------------
  mutable Mutex mu;
  std::condition_variable writer_cv;          // the writer waits here
  std::condition_variable durable_cv;         // WaitDurable and a log switch wait here
  std::string buf ABSL_GUARDED_BY(mu);        // appended, bound for the newest log
  uint64_t next_seq ABSL_GUARDED_BY(mu) = 0;  // the last record's number
  bool wake ABSL_GUARDED_BY(mu) = false;
  bool stop ABSL_GUARDED_BY(mu) = false;
  uint64_t durable_seq ABSL_GUARDED_BY(mu) = 0;  // written (+ fsynced unless fsync=no)
  std::string error ABSL_GUARDED_BY(mu);         // "" = healthy
  // !error.empty(), readable without mu: the store asks before every write.
  std::atomic<bool> failed{false};
  uint64_t failures ABSL_GUARDED_BY(mu) = 0;     // failed rounds, for waiters
  // A log switch: `sealed` holds the bytes appended before the cut, bound
  // for the old log; after them the writer moves to `switch_fd`.
  bool switch_pending ABSL_GUARDED_BY(mu) = false;  // cut made, not yet done
  bool sealed_taken ABSL_GUARDED_BY(mu) = false;    // the writer has `sealed`
  std::string sealed ABSL_GUARDED_BY(mu);
  uint64_t sealed_seq ABSL_GUARDED_BY(mu) = 0;
  int switch_fd ABSL_GUARDED_BY(mu) = -1;
  // Figures.
  uint64_t older_log_bytes ABSL_GUARDED_BY(mu) = 0;  // named logs before the current
  uint64_t cur_log_bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t log_base_bytes ABSL_GUARDED_BY(mu) = 0;
  uint64_t writer_unwritten ABSL_GUARDED_BY(mu) = 0;
  uint64_t write_calls ABSL_GUARDED_BY(mu) = 0;
  uint64_t fsyncs ABSL_GUARDED_BY(mu) = 0;
  uint64_t commit_batches ABSL_GUARDED_BY(mu) = 0;
  uint64_t commit_records ABSL_GUARDED_BY(mu) = 0;
  uint64_t commit_max_batch ABSL_GUARDED_BY(mu) = 0;

  // --- rewrite control ----------------------------------------------------
  mutable Mutex rw_mu;
  std::condition_variable rw_cv;
  Walk walk ABSL_GUARDED_BY(rw_mu);
  bool rw_in_progress ABSL_GUARDED_BY(rw_mu) = false;
  bool rw_requested ABSL_GUARDED_BY(rw_mu) = false;
  bool rw_auto ABSL_GUARDED_BY(rw_mu) = false;  // the request came from the size trigger
  bool rw_stop ABSL_GUARDED_BY(rw_mu) = false;
  bool last_rewrite_ok ABSL_GUARDED_BY(rw_mu) = true;
  std::string last_rewrite_error ABSL_GUARDED_BY(rw_mu);
  uint64_t rewrites ABSL_GUARDED_BY(rw_mu) = 0;
  int64_t last_save_unix ABSL_GUARDED_BY(rw_mu) = 0;
  uint64_t changes_at_save ABSL_GUARDED_BY(rw_mu) = 0;  // see Options::count_changes
  Clock::time_point auto_not_before ABSL_GUARDED_BY(rw_mu);

  // --- the files the manifest names -----------------------------------------
  // Held by a rewrite from start to end, the walk included: nothing else
  // takes it (Append, WaitDurable, Info, Rewrite's refusal do not), so the
  // store's walk cannot meet it.
  Mutex files_mu;
  Manifest manifest ABSL_GUARDED_BY(files_mu);
  int64_t next_log ABSL_GUARDED_BY(files_mu) = 1;
  int64_t next_snap ABSL_GUARDED_BY(files_mu) = 1;

  std::thread writer;
  std::thread rewriter;

  // The writer thread's own, untouched by anyone else while it runs.
  struct WriterState {
    int fd = -1;               // the log being written
    std::string pending;       // bytes taken from buf or sealed
    size_t off = 0;            // how far into `pending` write(2) got
    uint64_t pending_seq = 0;  // the last record in `pending`
    uint64_t written_seq = 0;  // every record up to it is in the file
    bool unsynced = false;     // written since the last fsync
    bool must_sync = false;    // an fsync is owed (always, failure, switch, stop)
    bool switching = false;    // `pending` is the sealed part: then switch
    int next_fd = -1;
    Clock::time_point last_fsync;
  };
  WriterState w;

  void WriterLoop();
  // One round: take, write, fsync, publish.  True when something is left
  // that a stopping writer must still try (more bytes, an unfinished switch).
  bool WriterRound(bool stopping);
  void RewriteLoop();
  Status DoRewrite(std::string* message);
  bool RewriteLocked(std::string* error) ABSL_EXCLUSIVE_LOCKS_REQUIRED(files_mu);
  void Step(std::string_view step) {
    if (options.on_rewrite_step) options.on_rewrite_step(step);
  }
  void RemoveUnnamed() ABSL_EXCLUSIVE_LOCKS_REQUIRED(files_mu);
};

// ---------------------------------------------------------------------------
// Open and close.

std::unique_ptr<Engine> Engine::Open(const Options& options,
                                     absl::FunctionRef<void(const Mutation&)> apply,
                                     LoadStats* stats, std::string* error) {
  const std::string& dir = options.persistence.data_dir;
  if (dir.empty()) {
    *error = "no data dir given";
    return nullptr;
  }
  const int lock_fd = LockDataDir(dir, error);
  if (lock_fd < 0) return nullptr;
  auto s = std::make_unique<State>();
  s->options = options;
  s->dir = dir;
  s->lock_fd = lock_fd;  // ~Engine closes it; until then `fail` does
  s->start_unix = static_cast<int64_t>(time(nullptr));

  // Until the Engine exists, failures close the LOCK here.
  auto fail = [&](const std::string& why) -> std::unique_ptr<Engine> {
    *error = why;
    (void)close(lock_fd);  // releases the lock; nothing was written through it since
    return nullptr;
  };

  Manifest loaded;
  bool found = false;
  std::vector<uint64_t> sizes;
  std::string why;
  if (!LoadDir(dir, /*repair=*/true, apply, stats, &loaded, &found, &sizes, &why)) {
    return fail(why);
  }
  s->loaded_records = stats->snapshot_records + stats->log_records;
  s->truncated_bytes = stats->torn_bytes;

  // Numbers above every file present (named or left over), so that a new
  // file never meets an old one.
  int64_t max_log = 0;
  int64_t snap = std::max<int64_t>(0, FileNumber(loaded.snapshot, "snap."));
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) {
      std::string_view name = e->d_name;
      if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") {
        name.remove_suffix(4);
      }
      max_log = std::max(max_log, FileNumber(name, "log."));
      snap = std::max(snap, FileNumber(name, "snap."));
    }
    closedir(d);
  } else {
    return fail("cannot list data dir " + dir + ": " + ErrnoText(errno));
  }

  Manifest next;
  next.snapshot = loaded.snapshot;
  uint64_t older = 0;
  for (size_t i = 0; i < loaded.logs.size(); ++i) {
    // A log with no record (a start without writes) is left out.
    if (sizes[i] <= kFileHeaderSize) continue;
    next.logs.push_back(loaded.logs[i]);
    older += sizes[i];
  }
  const std::string log_name = "log." + std::to_string(max_log + 1);
  const std::string log_path = dir + "/" + log_name;
  const int fd = CreateWithHeader(options.file_ops, log_path, FileKind::kLog, &why);
  if (fd < 0) return fail(why);
  next.logs.push_back(log_name);
  bool renamed = false;
  if (!WriteManifest(options.file_ops, dir, next, &renamed, &why)) {
    (void)close(fd);
    // Named by the new MANIFEST if its rename was made: then it stays (an
    // empty log, left out by the next start).
    if (!renamed) (void)unlink(log_path.c_str());
    return fail(why);
  }

  State* st = s.get();
  {
    MutexLock l(&st->files_mu);
    st->manifest = next;
    st->next_log = max_log + 2;
    st->next_snap = snap + 1;
    st->RemoveUnnamed();
  }
  {
    MutexLock l(&st->mu);
    st->older_log_bytes = older;
    st->cur_log_bytes = kFileHeaderSize;
    // Redis's auto-aof-rewrite base: what the start loaded, so that a start
    // on a big log does not rewrite at once.
    st->log_base_bytes = older + kFileHeaderSize;
  }
  {
    MutexLock l(&st->rw_mu);
    st->last_save_unix = st->start_unix;
    if (options.count_changes) st->changes_at_save = options.count_changes();
  }
  st->w.fd = fd;
  st->w.last_fsync = Clock::now();
  try {
    st->writer = std::thread([st] { st->WriterLoop(); });
    st->rewriter = std::thread([st] { st->RewriteLoop(); });
  } catch (const std::system_error& e) {
    // No thread for the rewrite: stop the writer (nothing was appended).
    if (st->writer.joinable()) {
      {
        MutexLock l(&st->mu);
        st->stop = true;
      }
      st->writer_cv.notify_all();
      st->writer.join();
    }
    (void)close(st->w.fd);  // an empty log the next start leaves out
    return fail(std::string("cannot start the log's threads: ") + e.what());
  }
  return std::unique_ptr<Engine>(new Engine(std::move(s)));
}

Engine::Engine(std::unique_ptr<State> state) : state_(std::move(state)) {}

Engine::~Engine() {
  State& s = *state_;
  {
    MutexLock l(&s.rw_mu);
    s.rw_stop = true;
  }
  s.rw_cv.notify_all();
  s.rewriter.join();
  {
    MutexLock l(&s.mu);
    s.stop = true;
  }
  s.writer_cv.notify_all();
  s.writer.join();
  // The writer is gone: its state is ours.
  if (s.w.fd >= 0 && close(s.w.fd) != 0) {
    fprintf(stderr, "ephpm: %s: closing the log: %s\n", s.dir.c_str(), ErrnoText(errno).c_str());
  }
  if (s.w.next_fd >= 0) (void)close(s.w.next_fd);  // only left by a failed final flush
  {
    MutexLock l(&s.mu);
    // A cut the writer never took (it stopped on a failure first).
    if (s.switch_fd >= 0 && !s.sealed_taken) (void)close(s.switch_fd);
  }
  (void)close(s.lock_fd);  // releases the LOCK; it held only our pid
}

// Removes what the manifest does not name: a crashed rewrite's snapshot or
// tmp file, logs and snapshots it replaced, a MANIFEST.tmp.  Only files
// named like ours: anything else in the dir is left alone.
void Engine::State::RemoveUnnamed() {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    fprintf(stderr, "ephpm: %s: cannot list it to remove old files: %s\n", dir.c_str(),
            ErrnoText(errno).c_str());
    return;
  }
  std::vector<std::string> doomed;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    std::string_view base = name;
    const bool tmp = base.size() > 4 && base.substr(base.size() - 4) == ".tmp";
    if (tmp) base.remove_suffix(4);
    const bool ours = FileNumber(base, "log.") >= 0 || FileNumber(base, "snap.") >= 0 ||
                      base == "MANIFEST" || base == "write-probe";
    if (!ours) continue;
    const bool named = !tmp && (name == manifest.snapshot || name == "MANIFEST" ||
                                std::find(manifest.logs.begin(), manifest.logs.end(), name) !=
                                    manifest.logs.end());
    if (!named) doomed.push_back(name);
  }
  closedir(d);
  for (const auto& name : doomed) {
    const std::string path = dir + "/" + name;
    // Harmless if it stays (the manifest does not name it): say so and go on.
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      fprintf(stderr, "ephpm: %s: cannot remove it: %s\n", path.c_str(), ErrnoText(errno).c_str());
    }
  }
}

// ---------------------------------------------------------------------------
// Appending and waiting.

uint64_t Engine::Append(const Mutation& m) {
  State& s = *state_;
  thread_local std::string scratch;
  scratch.clear();
  EncodeRecord(m, &scratch);
  uint64_t seq;
  bool wake = false;
  {
    MutexLock l(&s.mu);
    const size_t before = s.buf.size();
    s.buf.append(scratch);
    seq = ++s.next_seq;
    if (before < kHighMark && s.buf.size() >= kHighMark) wake = s.wake = true;
  }
  if (wake) s.writer_cv.notify_one();
  if (scratch.capacity() > kScratchKeep) std::string().swap(scratch);
  return seq;
}

uint64_t Engine::AppendGroup(std::string_view records, size_t count) {
  if (count == 0) return 0;
  State& s = *state_;
  std::string header;
  if (count > 1) EncodeGroupHeader(records.size(), &header);
  uint64_t seq;
  bool wake = false;
  {
    MutexLock l(&s.mu);
    const size_t before = s.buf.size();
    s.buf.append(header);
    s.buf.append(records);
    s.next_seq += count;
    seq = s.next_seq;
    if (before < kHighMark && s.buf.size() >= kHighMark) wake = s.wake = true;
  }
  if (wake) s.writer_cv.notify_one();
  return seq;
}

Status Engine::WaitDurable(uint64_t seq) {
  State& s = *state_;
  if (seq == 0 || s.options.persistence.fsync != FsyncPolicy::kAlways) return Status::kOk;
  MutexLock l(&s.mu);
  if (s.durable_seq >= seq) return Status::kOk;
  // While the disk refuses writes, answer at once rather than for the
  // whole outage.
  if (!s.error.empty()) return Status::kPersistenceError;
  const uint64_t failures = s.failures;
  s.wake = true;
  s.writer_cv.notify_one();
  while (s.durable_seq < seq && s.failures == failures && !s.stop) l.Wait(&s.durable_cv);
  return s.durable_seq >= seq ? Status::kOk : Status::kPersistenceError;
}

bool Engine::Failed() const { return state_->failed.load(std::memory_order_acquire); }

std::string Engine::WriteError() const {
  MutexLock l(&state_->mu);
  return state_->error;
}

// ---------------------------------------------------------------------------
// The writer.

void Engine::State::WriterLoop() {
  for (;;) {
    bool stopping;
    {
      MutexLock l(&mu);
      const auto until = Clock::now() + std::chrono::milliseconds(options.flush_interval_ms);
      while (!stop && !wake && l.WaitUntil(&writer_cv, until) == std::cv_status::no_timeout) {
      }
      wake = false;
      stopping = stop;
    }
    if (!stopping) {
      WriterRound(false);
      continue;
    }
    // Shutdown: everything appended goes out and is fsynced, whatever the
    // policy; a disk that refuses it now gets one try per round, then a
    // line on stderr.
    while (WriterRound(true)) {
    }
    return;
  }
}

bool Engine::State::WriterRound(bool stopping) {
  const FsyncPolicy policy = options.persistence.fsync;
  bool was_failed;
  {
    MutexLock l(&mu);
    was_failed = !error.empty();
    if (!w.switching && switch_pending && !sealed_taken) {
      // The cut: what was appended before it finishes the old log.
      sealed_taken = true;
      w.switching = true;
      w.next_fd = switch_fd;
      if (w.off == w.pending.size()) {
        w.pending.clear();
        w.off = 0;
      }
      w.pending.append(sealed);
      sealed.clear();
      sealed.shrink_to_fit();
      w.pending_seq = sealed_seq;
    }
    if (!w.switching) {
      if (w.off == w.pending.size()) {
        w.pending.clear();
        w.off = 0;
        w.pending.swap(buf);  // the two buffers take turns: no copy, no allocation
      } else {
        w.pending.append(buf);
        buf.clear();
      }
      w.pending_seq = next_seq;
    }
    writer_unwritten = w.pending.size() - w.off;
  }

  std::string err;
  uint64_t calls = 0;
  uint64_t syncs = 0;
  const size_t off_before = w.off;
  bool ok =
      WriteAll(options.file_ops, w.fd, w.pending.data(), w.pending.size(), &w.off, &calls, &err);
  const uint64_t wrote = w.off - off_before;
  if (wrote > 0) w.unsynced = true;
  if (ok) w.written_seq = w.pending_seq;
  if (policy == FsyncPolicy::kAlways && w.unsynced) w.must_sync = true;
  if (policy != FsyncPolicy::kNo && was_failed) w.must_sync = true;
  if (w.switching || stopping) w.must_sync = w.must_sync || w.unsynced;
  bool synced = false;
  if (ok && w.unsynced) {
    const bool due =
        policy == FsyncPolicy::kEverySec &&
        Clock::now() - w.last_fsync >= std::chrono::milliseconds(options.fsync_interval_ms);
    if (w.must_sync || due) {
      ++syncs;
      ok = Fsync(options.file_ops, w.fd, &err);
      if (ok) {
        synced = true;
        w.unsynced = false;
        w.must_sync = false;
        w.last_fsync = Clock::now();
      }
    }
  }
  if (ok && !w.unsynced) w.must_sync = false;  // nothing written since the last fsync
  bool switched = false;
  if (ok && w.switching && !w.unsynced) {
    // Every byte before the cut is in the old log and fsynced.
    if (close(w.fd) != 0) {
      fprintf(stderr, "ephpm: %s: closing the old log: %s\n", dir.c_str(),
              ErrnoText(errno).c_str());
    }
    w.fd = w.next_fd;
    w.next_fd = -1;
    w.switching = false;
    w.pending.clear();
    w.off = 0;
    switched = true;
  }
  if (!ok && stopping) {
    fprintf(stderr, "ephpm: %s: the log could not be written at shutdown (%zu bytes lost): %s\n",
            dir.c_str(), w.pending.size() - w.off, err.c_str());
  }

  bool more = false;
  bool trigger = false;
  {
    MutexLock l(&mu);
    write_calls += calls;
    fsyncs += syncs;
    cur_log_bytes += wrote;
    if (switched) {
      older_log_bytes += cur_log_bytes;
      cur_log_bytes = kFileHeaderSize;
      switch_pending = false;
      sealed_taken = false;
      switch_fd = -1;
      // Records after the cut (a waiter may have asked for them already).
      if (!buf.empty()) wake = true;
    }
    if (!ok) {
      error = err;
      failed.store(true, std::memory_order_release);
      ++failures;
    } else {
      const uint64_t durable =
          policy == FsyncPolicy::kNo ? w.written_seq : (synced ? w.written_seq : durable_seq);
      if (durable > durable_seq) {
        // With fsync=always every record's writer waits for it, so every
        // fsync that covers records answers their writers, including those
        // that had not started waiting when it began.
        if (synced && policy == FsyncPolicy::kAlways) {
          const uint64_t batch = durable - durable_seq;
          ++commit_batches;
          commit_records += batch;
          commit_max_batch = std::max(commit_max_batch, batch);
        }
        durable_seq = durable;
      }
      if (w.off == w.pending.size() && !w.must_sync) {
        error.clear();
        failed.store(false, std::memory_order_release);
      }
    }
    writer_unwritten = w.pending.size() - w.off;
    more = ok && stopping && (w.switching || switch_pending || !buf.empty());
    const uint64_t total = older_log_bytes + cur_log_bytes;
    trigger = ok && !stopping &&
              total >= std::max(options.persistence.rewrite_min_bytes, 2 * log_base_bytes);
  }
  durable_cv.notify_all();
  if (trigger) {
    bool notify = false;
    {
      MutexLock l(&rw_mu);
      if (walk && !rw_in_progress && !rw_stop && Clock::now() >= auto_not_before) {
        rw_in_progress = true;
        rw_requested = true;
        rw_auto = true;
        notify = true;
      }
    }
    if (notify) rw_cv.notify_all();
  }
  return more;
}

// ---------------------------------------------------------------------------
// Rewrite.

void Engine::SetSnapshotSource(Walk walk) {
  MutexLock l(&state_->rw_mu);
  state_->walk = std::move(walk);
}

Status Engine::Rewrite(bool background, std::string* message) {
  State& s = *state_;
  {
    MutexLock l(&s.rw_mu);
    if (s.rw_in_progress) {
      *message = "Background append only file rewriting already in progress";
      return Status::kInvalidArgument;
    }
    if (!s.walk) {
      *message = "no snapshot source is set";
      return Status::kInvalidArgument;
    }
    s.rw_in_progress = true;
    if (background) {
      s.rw_requested = true;
      s.rw_auto = false;
    }
  }
  if (background) {
    s.rw_cv.notify_all();
    *message = "Background append only file rewriting started";
    return Status::kOk;
  }
  const Status st = s.DoRewrite(message);
  if (st == Status::kOk) *message = "OK";
  return st;
}

void Engine::State::RewriteLoop() {
  for (;;) {
    bool automatic;
    {
      MutexLock l(&rw_mu);
      while (!rw_stop && !rw_requested) l.Wait(&rw_cv);
      if (rw_stop) {
        if (rw_requested) {
          // Requested but never started: nothing to wait for.
          rw_requested = false;
          rw_in_progress = false;
        }
        return;
      }
      rw_requested = false;
      automatic = rw_auto;
    }
    std::string message;
    if (DoRewrite(&message) != Status::kOk) {
      fprintf(stderr, "ephpm: %s: rewrite failed: %s\n", dir.c_str(), message.c_str());
      if (automatic) {
        MutexLock l(&rw_mu);
        auto_not_before = Clock::now() + kAutoRewriteBackoff;
      }
    }
  }
}

// Runs one rewrite (rw_in_progress is set by the caller) and records how it
// went.
Status Engine::State::DoRewrite(std::string* message) {
  // Read before the snapshot's cut: a change made between the two is in
  // the snapshot and still counted as unsaved (a few, never fewer).
  const uint64_t changes = options.count_changes ? options.count_changes() : 0;
  std::string error;
  bool ok;
  {
    MutexLock l(&files_mu);
    ok = RewriteLocked(&error);
  }
  MutexLock l(&rw_mu);
  rw_in_progress = false;
  last_rewrite_ok = ok;
  last_rewrite_error = ok ? "" : error;
  if (!ok) {
    *message = error;
    return Status::kPersistenceError;
  }
  ++rewrites;
  last_save_unix = static_cast<int64_t>(time(nullptr));
  changes_at_save = changes;
  return Status::kOk;
}

bool Engine::State::RewriteLocked(std::string* error) {
  const FileOps& ops = options.file_ops;
  {
    MutexLock l(&mu);
    // A previous rewrite cut the log while the disk refused writes and the
    // writer has not finished the old log yet.
    if (switch_pending) {
      *error = "the log is failing: " + (this->error.empty() ? "switch pending" : this->error);
      return false;
    }
  }
  Walk source;
  {
    MutexLock l(&rw_mu);
    source = walk;
  }

  // 1. The next log, registered after the current ones before any record
  //    goes to it: from here a crash replays both.
  const std::string log_name = "log." + std::to_string(next_log++);
  const std::string log_path = dir + "/" + log_name;
  const int fd = CreateWithHeader(ops, log_path, FileKind::kLog, error);
  if (fd < 0) {
    (void)unlink(log_path.c_str());  // not named by any manifest
    return false;
  }
  Manifest both = manifest;
  both.logs.push_back(log_name);
  bool renamed = false;
  if (!WriteManifest(ops, dir, both, &renamed, error)) {
    (void)close(fd);
    if (renamed) {
      // The new MANIFEST may be the one that stands: it names the new log,
      // which stays empty (the writer goes on with the current one, named
      // before it) until the next rewrite registers another after it.
      manifest = both;
    } else {
      (void)unlink(log_path.c_str());  // not named by the MANIFEST that stands
    }
    return false;
  }
  const std::vector<std::string> old_logs = manifest.logs;
  manifest = both;

  // The cut: records appended before it finish the old log, the rest go to
  // the new one.  The writer does both, in that order.
  {
    MutexLock l(&mu);
    sealed.swap(buf);
    sealed_seq = next_seq;
    switch_fd = fd;
    switch_pending = true;
    sealed_taken = false;
    wake = true;
  }
  writer_cv.notify_one();
  {
    MutexLock l(&mu);
    const uint64_t failures_before = failures;
    while (switch_pending && failures == failures_before && !stop) l.Wait(&durable_cv);
    if (switch_pending) {
      // The writer finishes the switch once the disk takes writes again;
      // the manifest already names both logs.
      *error = "cannot finish the old log: " + this->error;
      return false;
    }
  }
  Step("log_switched");

  // 2. The snapshot, into a tmp file renamed into place once complete.
  const int64_t snap_number = next_snap++;
  const std::string snap_name = "snap." + std::to_string(snap_number);
  const std::string snap_path = dir + "/" + snap_name;
  const std::string tmp_path = snap_path + ".tmp";
  const int sfd = CreateWithHeader(ops, tmp_path, FileKind::kSnapshot, error);
  if (sfd < 0) {
    (void)unlink(tmp_path.c_str());  // a partial tmp file: never loaded
    return false;
  }
  SnapshotWriter writer(ops, sfd);
  source([&writer](const Mutation& m) { writer.Add(m); });
  bool ok = writer.Finish(error);
  if (close(sfd) != 0 && ok) {
    *error = ErrnoText(errno);
    ok = false;
  }
  if (ok) {
    Step("snapshot_written");
    if (rename(tmp_path.c_str(), snap_path.c_str()) != 0) {
      *error = "rename: " + ErrnoText(errno);
      ok = false;
    }
  }
  if (!ok) {
    *error = tmp_path + ": " + *error;
    (void)unlink(tmp_path.c_str());  // the old snapshot and the logs still make the state
    return false;
  }
  if (!SyncDir(ops, dir, error)) {
    (void)unlink(snap_path.c_str());  // not named by any manifest yet
    return false;
  }
  Step("snapshot_renamed");

  // 3. The new pair.
  Manifest pair;
  pair.snapshot = snap_name;
  pair.logs.push_back(log_name);
  if (!WriteManifest(ops, dir, pair, &renamed, error)) {
    if (renamed) {
      // Either MANIFEST may be the one a crash leaves: keep every file both
      // name (the next start removes those the loaded one does not).
      manifest = pair;
    } else {
      (void)unlink(snap_path.c_str());  // not named by the MANIFEST that stands
    }
    return false;
  }
  const std::string old_snapshot = manifest.snapshot;
  manifest = pair;
  {
    MutexLock l(&mu);
    older_log_bytes = 0;
    log_base_bytes = cur_log_bytes;
  }
  Step("manifest_written");

  // 4. What the new pair replaced.
  std::vector<std::string> old_files = old_logs;
  if (!old_snapshot.empty()) old_files.push_back(old_snapshot);
  for (const auto& name : old_files) {
    const std::string path = dir + "/" + name;
    // A file left here is removed at the next start (the manifest no longer
    // names it): say so, the rewrite itself succeeded.
    if (unlink(path.c_str()) != 0) {
      fprintf(stderr, "ephpm: %s: cannot remove it: %s\n", path.c_str(), ErrnoText(errno).c_str());
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Figures.

void Engine::Info(PersistenceInfo* info) const {
  const State& s = *state_;
  info->enabled = true;
  info->fsync = s.options.persistence.fsync;
  info->data_dir = s.dir;
  info->loaded_records = s.loaded_records;
  info->truncated_bytes = s.truncated_bytes;
  {
    MutexLock l(&s.mu);
    info->write_error = s.error;
    info->log_bytes = s.older_log_bytes + s.cur_log_bytes;
    info->log_base_bytes = s.log_base_bytes;
    info->buffered_bytes = s.buf.size() + s.sealed.size() + s.writer_unwritten;
    info->records = s.next_seq;
    info->write_calls = s.write_calls;
    info->fsyncs = s.fsyncs;
    info->commit_batches = s.commit_batches;
    info->commit_records = s.commit_records;
    info->commit_max_batch = s.commit_max_batch;
  }
  MutexLock l(&s.rw_mu);
  info->rewrite_in_progress = s.rw_in_progress;
  info->last_rewrite_ok = s.last_rewrite_ok;
  info->last_rewrite_error = s.last_rewrite_error;
  info->rewrites = s.rewrites;
  info->last_save_unix = s.last_save_unix;
  info->changes_at_last_save = s.changes_at_save;
}

}  // namespace persist
}  // namespace ephpm
