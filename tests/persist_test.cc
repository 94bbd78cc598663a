// The durability engine (core/persist.h): the record codec, the load a
// start makes (torn tails, corruption), the data dir, the writer and its
// fsync policies, group commit, faults injected through FileOps, and the
// rewrite (snapshot + compaction) with crash copies at each of its steps.

#include "persist.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ephpm/persistence.h"

namespace {

namespace fs = std::filesystem;
using ephpm::FsyncPolicy;
using ephpm::Mutation;
using ephpm::PersistenceInfo;
using ephpm::Status;
using ephpm::ValueType;
using ephpm::persist::Decoded;
using ephpm::persist::DecodeRecord;
using ephpm::persist::EncodeRecord;
using ephpm::persist::EncodeGroupHeader;
using ephpm::persist::Engine;
using ephpm::persist::Load;
using ephpm::persist::LoadStats;

// --- helpers -----------------------------------------------------------------

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/ephpm-persist-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Copies the data dir's files (not its LOCK) into `to`, as a kill -9 at
// this instant would leave them: written bytes are in the page cache.
void CopyDataDir(const std::string& from, const std::string& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from)) {
    const std::string name = e.path().filename();
    if (name == "LOCK") continue;
    std::error_code ec;  // a file removed while we copy is simply not there
    fs::copy_file(e.path(), to + "/" + name, fs::copy_options::overwrite_existing, ec);
  }
}

std::set<std::string> Files(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename());
  return names;
}

Mutation MakeSet(std::string_view key, std::string_view value, int64_t expires_at_ms = 0) {
  Mutation m{};
  m.kind = Mutation::Kind::kSet;
  m.key = key;
  m.value = value;
  m.original_size = value.size();
  m.expires_at_ms = expires_at_ms;
  return m;
}

Mutation MakeOther(Mutation::Kind kind, std::string_view key, int64_t expires_at_ms = 0) {
  Mutation m{};
  m.kind = kind;
  m.key = key;
  m.expires_at_ms = expires_at_ms;
  return m;
}

// What a store holds, rebuilt from Mutations: the reference every reload is
// compared with.
struct Entry {
  ValueType type = ValueType::kString;
  std::string value;
  bool compressed = false;
  bool pinned = false;
  uint64_t original_size = 0;
  int64_t expires_at_ms = 0;
  ephpm::Stamp stamp;
  bool operator==(const Entry& o) const {
    return type == o.type && value == o.value && compressed == o.compressed && pinned == o.pinned &&
           original_size == o.original_size && expires_at_ms == o.expires_at_ms && stamp == o.stamp;
  }
};
using Model = std::map<std::string, Entry>;

void Apply(Model* model, const Mutation& m) {
  const std::string key(m.key);
  switch (m.kind) {
    case Mutation::Kind::kSet: {
      Entry& e = (*model)[key];
      e.type = m.type;
      e.value = std::string(m.value);
      e.compressed = m.compressed;
      e.pinned = m.pinned;
      e.original_size = m.original_size;
      e.expires_at_ms = m.expires_at_ms;
      e.stamp = m.stamp;
      break;
    }
    case Mutation::Kind::kDelete:
      model->erase(key);
      break;
    case Mutation::Kind::kExpire: {
      auto it = model->find(key);
      if (it != model->end()) it->second.expires_at_ms = m.expires_at_ms;
      break;
    }
    case Mutation::Kind::kFlush:
      model->clear();
      break;
    case Mutation::Kind::kFenceMark:  // the store's fence clock: no key's state
      break;
  }
}

void Emit(const Model& model, absl::FunctionRef<void(const Mutation&)> emit) {
  for (const auto& [key, e] : model) {
    Mutation m = MakeSet(key, e.value, e.expires_at_ms);
    m.type = e.type;
    m.compressed = e.compressed;
    m.pinned = e.pinned;
    m.original_size = e.original_size;
    m.stamp = e.stamp;
    emit(m);
  }
}

struct Loaded {
  bool ok = false;
  std::string error;
  LoadStats stats;
  Model model;
  uint64_t records = 0;
};

Loaded LoadDir(const std::string& dir, bool repair) {
  Loaded l;
  l.ok = Load(
      dir, repair,
      [&](const Mutation& m) {
        Apply(&l.model, m);
        ++l.records;
      },
      &l.stats, &l.error);
  return l;
}

Engine::Options OptionsFor(const std::string& dir, FsyncPolicy policy = FsyncPolicy::kEverySec) {
  Engine::Options o;
  o.persistence.data_dir = dir;
  o.persistence.fsync = policy;
  return o;
}

std::unique_ptr<Engine> OpenEngine(const Engine::Options& o, Model* model = nullptr,
                                   LoadStats* stats = nullptr) {
  LoadStats local;
  std::string error;
  Model ignored;
  Model* into = model != nullptr ? model : &ignored;
  auto engine = Engine::Open(
      o, [&](const Mutation& m) { Apply(into, m); }, stats != nullptr ? stats : &local, &error);
  if (!engine) FAIL("Engine::Open: " << error);
  return engine;
}

std::string OpenError(const Engine::Options& o) {
  LoadStats stats;
  std::string error;
  auto engine = Engine::Open(
      o, [](const Mutation&) {}, &stats, &error);
  if (engine) return "<opened>";
  return error;
}

// The one log holding records in a dir made by a single Engine session.
std::string OnlyLog(const std::string& dir) {
  std::string found;
  for (const auto& name : Files(dir)) {
    if (name.rfind("log.", 0) == 0 && fs::file_size(dir + "/" + name) > 12) {
      if (!found.empty()) FAIL("two logs with records: " << found << " and " << name);
      found = name;
    }
  }
  if (found.empty()) FAIL("no log with records in " << dir);
  return found;
}

// Writes `n` records with one Engine session: key<i> = value<i>.  Returns
// the offsets where each record starts in the log.
std::vector<uint64_t> WriteRecords(const std::string& dir, int n, Model* model) {
  std::vector<uint64_t> starts;
  uint64_t off = 12;
  {
    auto engine = OpenEngine(OptionsFor(dir));
    for (int i = 0; i < n; ++i) {
      const std::string key = "key" + std::to_string(i);
      const std::string value = "value" + std::to_string(i) + std::string(i * 7, 'x');
      const Mutation m = MakeSet(key, value);
      std::string rec;
      EncodeRecord(m, &rec);
      starts.push_back(off);
      off += rec.size();
      engine->Append(m);
      Apply(model, m);
    }
  }
  starts.push_back(off);  // the end
  return starts;
}

// Sends stderr to a file for the scope; text() is what was written.
class CaptureStderr {
 public:
  CaptureStderr() : path_(dir_ / "stderr") {
    fflush(stderr);
    saved_ = dup(2);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
  }
  ~CaptureStderr() { Restore(); }
  std::string text() {
    Restore();
    return ReadFile(path_);
  }

 private:
  void Restore() {
    if (saved_ < 0) return;
    fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    saved_ = -1;
  }
  TempDir dir_;
  std::string path_;
  int saved_ = -1;
};

// --- faults through FileOps ----------------------------------------------------

// Which file the fd is, by name: faults aimed at logs or at snapshots only.
std::string FdPath(int fd) {
  char link[64];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = readlink(link, target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : "";
}

enum class Target { kNone, kLogs, kSnapshots, kAll, kNamed };
// The file kNamed aims at: written only while no fault is set, read only
// after a load of g_write_fault that saw kNamed.
char g_fault_file[64];
std::atomic<Target> g_write_fault{Target::kNone};
std::atomic<int> g_write_errno{ENOSPC};
std::atomic<bool> g_short_first{false};  // the first faulted write writes half, then fails
std::atomic<Target> g_fsync_fault{Target::kNone};
std::atomic<int> g_faulted_writes{0};
std::atomic<int> g_fsync_pass{0};  // fsyncs the fault lets through before it bites

bool Hits(Target t, int fd) {
  if (t == Target::kNone) return false;
  if (t == Target::kAll) return true;
  const std::string path = FdPath(fd);
  const std::string name = path.substr(path.rfind('/') + 1);
  if (t == Target::kLogs) return name.rfind("log.", 0) == 0;
  if (t == Target::kNamed) return name == g_fault_file;
  return name.rfind("snap.", 0) == 0;
}

ssize_t FaultyWrite(int fd, const void* buf, size_t n) {
  if (Hits(g_write_fault.load(), fd)) {
    if (g_short_first.exchange(false) && n > 1) {
      ++g_faulted_writes;
      return ::write(fd, buf, n / 2);
    }
    ++g_faulted_writes;
    errno = g_write_errno.load();
    return -1;
  }
  return ::write(fd, buf, n);
}

int FaultyFsync(int fd) {
  if (Hits(g_fsync_fault.load(), fd) && g_fsync_pass.fetch_sub(1) <= 0) {
    errno = EIO;
    return -1;
  }
  return ::fsync(fd);
}

void ResetFaults() {
  g_write_fault = Target::kNone;
  g_write_errno = ENOSPC;
  g_short_first = false;
  g_fsync_fault = Target::kNone;
  g_faulted_writes = 0;
  g_fsync_pass = 0;
}

Engine::Options FaultyOptions(const std::string& dir, FsyncPolicy policy) {
  ResetFaults();
  Engine::Options o = OptionsFor(dir, policy);
  o.file_ops.write = FaultyWrite;
  o.file_ops.fsync = FaultyFsync;
  return o;
}

template <typename Pred>
bool WaitFor(Pred pred, int ms = 10000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

// --- settings ------------------------------------------------------------------

TEST_CASE("fsync policies parse from their names and print as them", "[persist]") {
  for (FsyncPolicy p : {FsyncPolicy::kAlways, FsyncPolicy::kEverySec, FsyncPolicy::kNo}) {
    FsyncPolicy parsed = p == FsyncPolicy::kNo ? FsyncPolicy::kAlways : FsyncPolicy::kNo;
    REQUIRE(ephpm::ParseFsyncPolicy(ephpm::FsyncPolicyName(p), &parsed));
    CHECK(parsed == p);
  }
  CHECK(std::string(ephpm::FsyncPolicyName(FsyncPolicy::kEverySec)) == "everysec");
  FsyncPolicy p = FsyncPolicy::kNo;
  for (const char* bad : {"", "Always", "every", "everysec ", "yes", "1"}) {
    CHECK_FALSE(ephpm::ParseFsyncPolicy(bad, &p));
  }
  CHECK(p == FsyncPolicy::kNo);
}

// --- the codec -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> SampleKeysValues() {
  return {{"k", "v"},
          {std::string("bin\0key\0", 8), std::string("\0\x01\xff\0", 4)},
          {"empty-value", ""},
          {"", "empty key"},
          {"big", std::string(1u << 20, 'b')}};
}

std::vector<Mutation> SampleMutations(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::vector<Mutation> out;
  for (const auto& [k, v] : kv) {
    out.push_back(MakeSet(k, v));
    Mutation hash = MakeSet(k, v, 1700000000123);
    hash.type = ValueType::kHash;
    hash.stamp = {0x0123456789abcdefULL, 42};
    out.push_back(hash);
    Mutation compressed = MakeSet(k, v);
    compressed.compressed = true;
    compressed.original_size = v.size() * 3 + 1;
    out.push_back(compressed);
    Mutation pinned = MakeSet(k, v, 1800000000000);
    pinned.pinned = true;
    pinned.stamp = {~0ULL, ~0ULL};
    out.push_back(pinned);
    Mutation del = MakeOther(Mutation::Kind::kDelete, k);
    del.stamp = {7, 9};
    out.push_back(del);
    out.push_back(MakeOther(Mutation::Kind::kExpire, k, 1234567));
    out.push_back(MakeOther(Mutation::Kind::kExpire, k, 0));
    Mutation fenced = MakeSet(k, v);
    fenced.fence = 0x8877665544332211ULL;
    out.push_back(fenced);
    Mutation record = MakeOther(Mutation::Kind::kDelete, k);
    record.fence = 1;
    out.push_back(record);
  }
  Mutation mark = MakeOther(Mutation::Kind::kFenceMark, "");
  mark.fence = ~0ULL;
  out.push_back(mark);
  out.push_back(MakeOther(Mutation::Kind::kFlush, ""));
  Mutation negative = MakeSet("neg", "x", -5);  // never written by the store, kept as is
  out.push_back(negative);
  return out;
}

bool SameMutation(const Mutation& a, const Mutation& b) {
  return a.kind == b.kind && a.key == b.key && a.type == b.type && a.value == b.value &&
         a.compressed == b.compressed && a.original_size == b.original_size &&
         a.expires_at_ms == b.expires_at_ms && a.stamp == b.stamp && a.pinned == b.pinned &&
         a.fence == b.fence;
}

TEST_CASE("every kind of record decodes to what was encoded", "[persist][codec]") {
  const auto kv = SampleKeysValues();
  const auto mutations = SampleMutations(kv);
  std::string all;
  for (const auto& m : mutations) {
    std::string one;
    EncodeRecord(m, &one);
    Mutation back{};
    back.version = 99;
    size_t used = 0;
    REQUIRE(DecodeRecord(one, &back, &used) == Decoded::kOk);
    CHECK(used == one.size());
    CHECK(SameMutation(m, back));
    CHECK(back.version == 0);  // not recorded
    EncodeRecord(m, &all);     // appends
  }
  // Back to back, as in a log.
  std::string_view rest = all;
  for (const auto& m : mutations) {
    Mutation back{};
    size_t used = 0;
    REQUIRE(DecodeRecord(rest, &back, &used) == Decoded::kOk);
    CHECK(SameMutation(m, back));
    rest.remove_prefix(used);
  }
  CHECK(rest.empty());
}

TEST_CASE("the record layout is the one persist.h describes", "[persist][codec]") {
  Mutation m = MakeSet("ab", "xyz", 0x0102030405060708LL);
  m.type = ValueType::kHash;
  m.pinned = true;
  m.stamp = {5, 6};
  std::string rec;
  EncodeRecord(m, &rec);
  const size_t body = 39 + 2 + 3;
  REQUIRE(rec.size() == 8 + body + 8);
  CHECK(static_cast<unsigned char>(rec[0]) == body);
  CHECK(rec[1] == 0);
  CHECK(rec[8] == 1);      // kind kSet + 1
  CHECK(rec[9] == 1);      // kHash
  CHECK(rec[10] == 2);     // pinned
  CHECK(rec[11] == 0x08);  // expiry, little endian
  CHECK(rec[18] == 0x01);
  CHECK(rec.substr(8 + 39, 5) == "abxyz");
  // A fence sets flag 4 and comes as a u64 before the key.
  m.fence = 0x1122334455667788ULL;
  rec.clear();
  EncodeRecord(m, &rec);
  REQUIRE(rec.size() == 8 + body + 8 + 8);
  CHECK(rec[10] == (2 | 4));
  CHECK(static_cast<unsigned char>(rec[8 + 39]) == 0x88);
  CHECK(rec[8 + 39 + 7] == 0x11);
  CHECK(rec.substr(8 + 39 + 8, 5) == "abxyz");
}

TEST_CASE("every prefix of a record is torn", "[persist][codec]") {
  const std::vector<std::pair<std::string, std::string>> kv = {
      {std::string("k\0y", 3), "some value"}, {"", ""}};  // the mutations point into it
  for (const auto& m : SampleMutations(kv)) {
    std::string rec;
    EncodeRecord(m, &rec);
    for (size_t n = 0; n < rec.size(); ++n) {
      Mutation back{};
      size_t used = 0;
      INFO("prefix of " << n << " bytes of " << rec.size());
      CHECK(DecodeRecord(std::string_view(rec).substr(0, n), &back, &used) == Decoded::kTorn);
    }
  }
}

TEST_CASE("a flipped byte anywhere in a record is corrupt", "[persist][codec]") {
  const std::vector<std::pair<std::string, std::string>> kv = {
      {std::string("k\0y", 3), "some value"}};  // the mutations point into it
  for (const auto& m : SampleMutations(kv)) {
    std::string rec;
    EncodeRecord(m, &rec);
    // Followed by another record, as in the middle of a log.
    EncodeRecord(MakeSet("next", "record"), &rec);
    std::string good;
    EncodeRecord(m, &good);
    for (size_t i = 0; i < good.size(); ++i) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        std::string bad = rec;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        Mutation back{};
        size_t used = 0;
        INFO("byte " << i << " ^ " << int(mask));
        CHECK(DecodeRecord(bad, &back, &used) == Decoded::kCorrupt);
        // And alone (nothing after it to read a longer length from).
        std::string alone = good;
        alone[i] = static_cast<char>(alone[i] ^ mask);
        CHECK(DecodeRecord(alone, &back, &used) == Decoded::kCorrupt);
      }
    }
  }
}

// --- loading -------------------------------------------------------------------

// --- groups: records that load all or none ------------------------------------

// Writes key0 = a as one record, then a group of three records (key0 = b,
// key1 = c, key2 deleted after being set ... in the group), then key9 = z
// when `after`.  Returns {group header offset, offset of each group record,
// group end}.
std::vector<uint64_t> WriteGroup(const std::string& dir, bool after, Model* model) {
  std::vector<uint64_t> at;
  auto engine = OpenEngine(OptionsFor(dir));
  const Mutation first = MakeSet("key0", "a");
  engine->Append(first);
  Apply(model, first);
  std::string one;
  EncodeRecord(first, &one);
  uint64_t off = 12 + one.size();
  at.push_back(off);
  const std::vector<Mutation> group = {MakeSet("key0", "b"), MakeSet("key1", "c"),
                                       MakeOther(Mutation::Kind::kDelete, "key0")};
  std::string records;
  std::vector<uint64_t> inside;
  for (const Mutation& m : group) {
    inside.push_back(records.size());
    EncodeRecord(m, &records);
    Apply(model, m);
  }
  std::string header;
  EncodeGroupHeader(records.size(), &header);
  for (uint64_t i : inside) at.push_back(off + header.size() + i);
  engine->AppendGroup(records, group.size());
  at.push_back(off + header.size() + records.size());
  if (after) {
    const Mutation last = MakeSet("key9", "z");
    engine->Append(last);
    Apply(model, last);
  }
  return at;
}

TEST_CASE("a group's header decodes to its length, and is refused where a record must be",
          "[persist][codec]") {
  std::string h;
  EncodeGroupHeader(12345, &h);
  Mutation m{};
  size_t used = 0;
  REQUIRE(DecodeRecord(h, &m, &used) == Decoded::kGroup);
  CHECK(m.original_size == 12345);
  CHECK(used == h.size());
  for (size_t cut = 0; cut < h.size(); ++cut) {
    CHECK(DecodeRecord(std::string_view(h).substr(0, cut), &m, &used) == Decoded::kTorn);
  }
  for (size_t i = 8; i < h.size(); ++i) {
    std::string bad = h;
    bad[i] ^= 0x01;
    INFO("byte " << i);
    CHECK(DecodeRecord(bad, &m, &used) == Decoded::kCorrupt);
  }
}

TEST_CASE("a whole group loads, one cut anywhere inside it loads none of it", "[persist][load]") {
  TempDir pristine;
  Model whole;
  const std::vector<uint64_t> at = WriteGroup(pristine.path(), /*after=*/false, &whole);
  const std::string log = OnlyLog(pristine.path());
  REQUIRE(fs::file_size(pristine / log) == at.back());
  const Loaded all = LoadDir(pristine.path(), false);
  REQUIRE(all.ok);
  CHECK(all.model == whole);
  CHECK(all.records == 4);
  CHECK(all.stats.torn_bytes == 0);

  Model before;  // only the record before the group
  Apply(&before, MakeSet("key0", "a"));
  for (uint64_t cut = at.front() + 1; cut < at.back(); ++cut) {
    INFO("log cut at " << cut);
    TempDir copy;
    CopyDataDir(pristine.path(), copy.path());
    fs::resize_file(copy / log, cut);
    CaptureStderr err;
    const Loaded l = LoadDir(copy.path(), true);
    REQUIRE(l.ok);
    CHECK(l.model == before);  // never key0 = b without key1 = c, nor the reverse
    CHECK(l.stats.torn_offset == at.front());
    CHECK(fs::file_size(copy / log) == at.front());
  }
  // Zeros where the group's last record should be (a power loss): the
  // group is a torn tail too.
  TempDir zeroed;
  CopyDataDir(pristine.path(), zeroed.path());
  std::string data = ReadFile(zeroed / log);
  std::fill(data.begin() + static_cast<std::ptrdiff_t>(at[3]), data.end(), '\0');
  WriteFile(zeroed / log, data);
  const Loaded z = LoadDir(zeroed.path(), false);
  REQUIRE(z.ok);
  CHECK(z.model == before);
  CHECK(z.stats.torn_offset == at.front());
}

TEST_CASE("damage inside a group with records after it is refused, naming the record",
          "[persist][load]") {
  TempDir dir;
  Model model;
  const std::vector<uint64_t> at = WriteGroup(dir.path(), /*after=*/true, &model);
  const std::string log = OnlyLog(dir.path());
  REQUIRE(LoadDir(dir.path(), false).model == model);
  std::string data = ReadFile(dir / log);
  data[at[2] + 20] ^= 0x10;  // the group's second record's body
  WriteFile(dir / log, data);
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error == (dir / log) + ": corrupt record at offset " + std::to_string(at[2]));
  CHECK(ReadFile(dir / log) == data);  // nothing cut
}

TEST_CASE("a group whose length overruns its records is refused when more follows",
          "[persist][load]") {
  TempDir dir;
  Model model;
  const std::vector<uint64_t> at = WriteGroup(dir.path(), /*after=*/true, &model);
  const std::string log = OnlyLog(dir.path());
  std::string data = ReadFile(dir / log);
  // Rewrite the header to claim 8 bytes fewer than its records: the last
  // record then does not fit the group.
  std::string header;
  EncodeGroupHeader(at.back() - at[1] - 8, &header);
  data.replace(at.front(), header.size(), header);
  WriteFile(dir / log, data);
  const Loaded l = LoadDir(dir.path(), false);
  CHECK_FALSE(l.ok);
  CHECK(l.error == (dir / log) + ": corrupt record at offset " + std::to_string(at[3]));
}

TEST_CASE("a data dir without a MANIFEST loads nothing", "[persist][load]") {
  TempDir dir;
  const Loaded l = LoadDir(dir.path(), true);
  CHECK(l.ok);
  CHECK(l.records == 0);
  CHECK(l.stats.snapshot.empty());
  CHECK(l.stats.logs.empty());
}

TEST_CASE("a torn tail at every offset of the last record loads up to it", "[persist][load]") {
  TempDir pristine;
  Model model;
  const auto starts = WriteRecords(pristine.path(), 4, &model);
  const std::string log = OnlyLog(pristine.path());
  REQUIRE(fs::file_size(pristine / log) == starts.back());
  Model before_last = model;
  before_last.erase("key3");
  const uint64_t last = starts[3];

  for (uint64_t cut = last + 1; cut < starts.back(); ++cut) {
    INFO("log cut at " << cut);
    TempDir copy;
    CopyDataDir(pristine.path(), copy.path());
    fs::resize_file(copy / log, cut);

    // Without repair: loads what is whole, reports the tail, changes nothing.
    const Loaded dry = LoadDir(copy.path(), false);
    REQUIRE(dry.ok);
    CHECK(dry.model == before_last);
    CHECK(dry.stats.torn_file == log);
    CHECK(dry.stats.torn_offset == last);
    CHECK(dry.stats.torn_bytes == cut - last);
    CHECK(fs::file_size(copy / log) == cut);

    // With repair: the file is cut back to the last whole record.
    CaptureStderr err;
    const Loaded fixed = LoadDir(copy.path(), true);
    const std::string said = err.text();
    REQUIRE(fixed.ok);
    CHECK(fixed.model == before_last);
    CHECK(fs::file_size(copy / log) == last);
    CHECK(said == "ephpm: " + (copy / log) + ": dropped " + std::to_string(cut - last) +
                      " bytes of a torn record at offset " + std::to_string(last) + "\n");
    // And the next load finds nothing torn.
    const Loaded again = LoadDir(copy.path(), true);
    REQUIRE(again.ok);
    CHECK(again.stats.torn_bytes == 0);
    CHECK(again.model == before_last);
  }
  // Cut exactly at a record boundary: nothing is torn.
  TempDir copy;
  CopyDataDir(pristine.path(), copy.path());
  fs::resize_file(copy / log, last);
  const Loaded whole = LoadDir(copy.path(), false);
  REQUIRE(whole.ok);
  CHECK(whole.stats.torn_bytes == 0);
  CHECK(whole.model == before_last);
}

TEST_CASE("a damaged last record that ends the last log is a torn tail", "[persist][load]") {
  TempDir dir;
  Model model;
  const auto starts = WriteRecords(dir.path(), 3, &model);
  const std::string log = OnlyLog(dir.path());
  std::string data = ReadFile(dir / log);
  data[starts[2] + 20] ^= 0x10;  // in the last record's body
  WriteFile(dir / log, data);
  model.erase("key2");
  CaptureStderr err;
  const Loaded l = LoadDir(dir.path(), true);
  REQUIRE(l.ok);
  CHECK(l.model == model);
  CHECK(l.stats.torn_offset == starts[2]);
  CHECK(fs::file_size(dir / log) == starts[2]);
}

TEST_CASE("zeros after the last record (a power loss) are a torn tail", "[persist][load]") {
  TempDir dir;
  Model model;
  const auto starts = WriteRecords(dir.path(), 2, &model);
  const std::string log = OnlyLog(dir.path());
  WriteFile(dir / log, ReadFile(dir / log) + std::string(4096, '\0'));
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.model == model);
  CHECK(l.stats.torn_offset == starts.back());
  CHECK(l.stats.torn_bytes == 4096);
}

TEST_CASE("a flipped byte in the middle of a log is refused with file and offset",
          "[persist][load]") {
  TempDir pristine;
  Model model;
  const auto starts = WriteRecords(pristine.path(), 4, &model);
  const std::string log = OnlyLog(pristine.path());
  const std::string data = ReadFile(pristine / log);
  // Every byte of the first and the third record (records follow each).
  for (int r : {0, 2}) {
    for (uint64_t i = starts[r]; i < starts[r + 1]; ++i) {
      INFO("byte " << i << " of record " << r);
      TempDir copy;
      CopyDataDir(pristine.path(), copy.path());
      std::string bad = data;
      bad[i] ^= 0x04;
      WriteFile(copy / log, bad);
      const Loaded l = LoadDir(copy.path(), true);
      CHECK_FALSE(l.ok);
      CHECK(l.error == (copy / log) + ": corrupt record at offset " + std::to_string(starts[r]));
      CHECK(ReadFile(copy / log) == bad);  // refused, not repaired
    }
  }
}

TEST_CASE("a bad file header is refused", "[persist][load]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 2, &model);
  const std::string log = OnlyLog(dir.path());
  std::string data = ReadFile(dir / log);
  SECTION("magic") { data[2] = 'X'; }
  SECTION("version") { data[8] = 2; }
  WriteFile(dir / log, data);
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find(dir / log) == 0);
}

TEST_CASE("damage at the end of an earlier log is refused", "[persist][load]") {
  TempDir dir;
  Model model;
  const auto starts = WriteRecords(dir.path(), 3, &model);
  const std::string first = OnlyLog(dir.path());
  {
    // A second session: its records go to a later log.
    auto engine = OpenEngine(OptionsFor(dir.path()));
    engine->Append(MakeSet("later", "record"));
  }
  SECTION("cut short") { fs::resize_file(dir / first, starts[2] + 10); }
  SECTION("flipped") {
    std::string data = ReadFile(dir / first);
    data[starts[2] + 30] ^= 1;
    WriteFile(dir / first, data);
  }
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find(dir / first) == 0);
  CHECK(l.error.find("offset " + std::to_string(starts[2])) != std::string::npos);
}

TEST_CASE("empty logs and logs with only their header load", "[persist][load]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 2, &model);
  // Sessions without writes, then one more record.
  for (int i = 0; i < 3; ++i) OpenEngine(OptionsFor(dir.path()));
  {
    auto engine = OpenEngine(OptionsFor(dir.path()));
    const Mutation m = MakeSet("third", "session");
    engine->Append(m);
    Apply(&model, m);
  }
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.model == model);
  // A start that wrote nothing is left out of the manifest by the next one.
  CHECK(l.stats.logs == "log.1 log.5");
}

TEST_CASE("a torn record followed only by an empty log is a torn tail", "[persist][load]") {
  TempDir dir;
  Model model;
  const auto starts = WriteRecords(dir.path(), 3, &model);
  const std::string first = OnlyLog(dir.path());
  OpenEngine(OptionsFor(dir.path()));  // registers an empty log after it
  fs::resize_file(dir / first, starts[2] + 3);
  model.erase("key2");
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.model == model);
  CHECK(l.stats.torn_file == first);
  CHECK(l.stats.torn_offset == starts[2]);
  CHECK(l.stats.logs.find(' ') != std::string::npos);  // both logs were read
}

TEST_CASE("a last log cut inside its header is torn, an earlier one is refused",
          "[persist][load]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 2, &model);
  const std::string first = OnlyLog(dir.path());
  const std::string manifest = ReadFile(dir / "MANIFEST");
  // Every Open leaves a new empty log named last: cut it inside its header.
  auto engine = OpenEngine(OptionsFor(dir.path()));
  engine.reset();
  std::string last;
  for (const auto& name : Files(dir.path())) {
    if (name.rfind("log.", 0) == 0 && name != first) last = name;
  }
  REQUIRE(!last.empty());
  // The closed session had nothing: its manifest names it last still.
  REQUIRE(ReadFile(dir / "MANIFEST").find(last) != std::string::npos);
  fs::resize_file(dir / last, 5);
  const Loaded l = LoadDir(dir.path(), true);
  REQUIRE(l.ok);
  CHECK(l.model == model);
  CHECK(l.stats.torn_file == last);
  CHECK(fs::file_size(dir / last) == 0);

  fs::resize_file(dir / first, 7);
  const Loaded bad = LoadDir(dir.path(), true);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find(dir / first) == 0);
}

TEST_CASE("a manifest naming a missing file is refused", "[persist][load]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 2, &model);
  const std::string log = OnlyLog(dir.path());
  fs::remove(dir / log);
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find(log) != std::string::npos);
  CHECK(l.error.find("MANIFEST") != std::string::npos);
}

TEST_CASE("a damaged manifest is refused", "[persist][load]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 1, &model);
  std::string text = ReadFile(dir / "MANIFEST");
  SECTION("a changed name") { text[text.find("log.") + 4] = '9'; }
  SECTION("cut short") { text.resize(text.size() - 3); }
  SECTION("empty") { text.clear(); }
  WriteFile(dir / "MANIFEST", text);
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find(dir / "MANIFEST") == 0);
}

// --- the data dir --------------------------------------------------------------

TEST_CASE("Open creates a missing data dir, one level only", "[persist][dir]") {
  TempDir base;
  {
    auto engine = OpenEngine(OptionsFor(base / "data"));
    struct stat st;
    REQUIRE(stat((base / "data").c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 0777) == 0700);
  }
  CHECK(OpenError(OptionsFor(base / "a/b")) ==
        "cannot create data dir " + (base / "a/b") + ": No such file or directory");
}

TEST_CASE("Open refuses a data dir held by another Engine, even in this process",
          "[persist][dir]") {
  TempDir dir;
  auto first = OpenEngine(OptionsFor(dir.path()));
  CHECK(OpenError(OptionsFor(dir.path())) == "data dir " + dir.path() +
                                                 " is in use by another process (pid " +
                                                 std::to_string(getpid()) + ")");
  first.reset();
  CHECK(OpenEngine(OptionsFor(dir.path())) != nullptr);
}

TEST_CASE("Open refuses a data dir that cannot be a directory", "[persist][dir]") {
  TempDir base;
  WriteFile(base / "file", "x");
  CHECK(OpenError(OptionsFor(base / "file")) ==
        "data dir " + (base / "file") + " is not a directory");
  CHECK(OpenError(OptionsFor(base / "file/data")) ==
        "cannot create data dir " + (base / "file/data") + ": Not a directory");
  CHECK(OpenError(OptionsFor("")) == "no data dir given");
}

TEST_CASE("Open refuses a read-only data dir", "[persist][dir]") {
  TempDir base;
  const std::string mnt = base / "ro";
  fs::create_directories(mnt);
  const std::string cmd = "mount -t tmpfs -o ro,size=1m tmpfs " + mnt + " 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    WARN("cannot mount a read-only tmpfs here: skipped");
    return;
  }
  const std::string error = OpenError(OptionsFor(mnt));
  const std::string umount = "umount " + mnt;
  REQUIRE(std::system(umount.c_str()) == 0);
  CHECK(error == "data dir " + mnt + " is not writable: cannot open LOCK: Read-only file system");
}

TEST_CASE("Open removes the files the manifest does not name", "[persist][dir]") {
  TempDir dir;
  Model model;
  WriteRecords(dir.path(), 2, &model);
  const std::string log = OnlyLog(dir.path());
  for (const char* junk : {"snap.7.tmp", "snap.3", "log.99", "MANIFEST.tmp", "write-probe.tmp"}) {
    WriteFile(dir / junk, "junk");
  }
  WriteFile(dir / "notes.txt", "not ours");
  Model loaded;
  auto engine = OpenEngine(OptionsFor(dir.path()), &loaded);
  CHECK(loaded == model);
  const auto names = Files(dir.path());
  for (const char* junk : {"snap.7.tmp", "snap.3", "log.99", "MANIFEST.tmp", "write-probe.tmp"}) {
    CHECK(names.count(junk) == 0);
  }
  CHECK(names.count("notes.txt") == 1);
  CHECK(names.count(log) == 1);
  // The new log is numbered past every log seen, the leftover included.
  CHECK(names.count("log.100") == 1);
}

// --- the engine ------------------------------------------------------------------

TEST_CASE("appended records come back after a restart under every policy", "[persist][engine]") {
  const FsyncPolicy policy =
      GENERATE(FsyncPolicy::kAlways, FsyncPolicy::kEverySec, FsyncPolicy::kNo);
  INFO("fsync=" << ephpm::FsyncPolicyName(policy));
  TempDir dir;
  Model model;
  const auto kv = SampleKeysValues();
  {
    auto engine = OpenEngine(OptionsFor(dir.path(), policy));
    uint64_t last = 0;
    for (int round = 0; round < 3; ++round) {
      for (const auto& m : SampleMutations(kv)) {
        const uint64_t seq = engine->Append(m);
        CHECK(seq == last + 1);
        last = seq;
        Apply(&model, m);
      }
      for (int i = 0; i < 500; ++i) {
        const std::string key = "n" + std::to_string(i % 37);
        const std::string value = std::to_string(round * 1000 + i);
        const Mutation m = MakeSet(key, value, i);
        last = engine->Append(m);
        Apply(&model, m);
      }
    }
    CHECK(engine->WaitDurable(last) == Status::kOk);
    CHECK_FALSE(engine->Failed());
    PersistenceInfo info;
    engine->Info(&info);
    CHECK(info.enabled);
    CHECK(info.fsync == policy);
    CHECK(info.records == last);
    CHECK(info.data_dir == dir.path());
    if (policy == FsyncPolicy::kAlways) {
      // The record waited for is on disk already.
      CHECK(info.buffered_bytes == 0);
      CHECK(info.fsyncs >= 1);
      CHECK(info.write_calls >= 1);
    }
  }
  Model loaded;
  LoadStats stats;
  auto engine = OpenEngine(OptionsFor(dir.path(), policy), &loaded, &stats);
  CHECK(loaded == model);
  CHECK(stats.torn_bytes == 0);
  PersistenceInfo info;
  engine->Info(&info);
  CHECK(info.loaded_records == stats.log_records);
  CHECK(info.log_bytes > 12);
}

TEST_CASE("the writer writes on its interval without being woken", "[persist][engine]") {
  TempDir dir;
  auto engine = OpenEngine(OptionsFor(dir.path(), FsyncPolicy::kNo));
  engine->Append(MakeSet("a", "b"));
  // No wake-up below the high mark: the 10 ms tick writes it.
  REQUIRE(WaitFor([&] {
    PersistenceInfo info;
    engine->Info(&info);
    return info.buffered_bytes == 0 && info.log_bytes > 12;
  }));
  TempDir copy;
  CopyDataDir(dir.path(), copy.path());
  const Loaded l = LoadDir(copy.path(), true);
  REQUIRE(l.ok);
  CHECK(l.records == 1);
}

TEST_CASE("group commit: fsync=always answers every writer once its record is durable",
          "[persist][engine]") {
  TempDir dir;
  auto engine = OpenEngine(OptionsFor(dir.path(), FsyncPolicy::kAlways));
  constexpr int kThreads = 8;
  constexpr int kPerThread = 150;
  std::vector<std::vector<Status>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        const uint64_t seq = engine->Append(MakeSet(key, "v"));
        results[t].push_back(engine->WaitDurable(seq));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) {
    REQUIRE(r.size() == kPerThread);
    for (Status s : r) CHECK(s == Status::kOk);
  }
  // Durable means written too: a copy now (as a kill -9 would leave it)
  // holds every record.
  TempDir copy;
  CopyDataDir(dir.path(), copy.path());
  const Loaded l = LoadDir(copy.path(), false);
  REQUIRE(l.ok);
  CHECK(l.records == kThreads * kPerThread);
  CHECK(l.stats.torn_bytes == 0);
  PersistenceInfo info;
  engine->Info(&info);
  CHECK(info.commit_batches >= 1);
  CHECK(info.commit_records == kThreads * kPerThread);
  CHECK(info.commit_records >= info.commit_batches);
  CHECK(info.commit_max_batch >= 1);
  CHECK(info.fsyncs >= info.commit_batches);
  // With 8 writers waiting, one fsync covers several of them (usually
  // many); only reported, timing decides it.
  WARN("group commit: " << info.commit_batches << " batches, " << info.commit_records
                        << " records, max batch " << info.commit_max_batch);
}

TEST_CASE("WaitDurable returns at once unless fsync=always", "[persist][engine]") {
  const FsyncPolicy policy = GENERATE(FsyncPolicy::kEverySec, FsyncPolicy::kNo);
  TempDir dir;
  Engine::Options o = FaultyOptions(dir.path(), policy);
  auto engine = OpenEngine(o);
  g_fsync_fault = Target::kAll;
  g_write_fault = Target::kAll;  // nothing will ever be written
  const uint64_t seq = engine->Append(MakeSet("a", "b"));
  CHECK(engine->WaitDurable(seq) == Status::kOk);
  CHECK(engine->WaitDurable(0) == Status::kOk);
  ResetFaults();
}

TEST_CASE("a full disk fails the log, and it recovers without losing or repeating a record",
          "[persist][engine][fault]") {
  const FsyncPolicy policy =
      GENERATE(FsyncPolicy::kAlways, FsyncPolicy::kEverySec, FsyncPolicy::kNo);
  const bool short_write = GENERATE(false, true);
  INFO("fsync=" << ephpm::FsyncPolicyName(policy) << " short write first: " << short_write);
  TempDir dir;
  Engine::Options o = FaultyOptions(dir.path(), policy);
  Model model;
  auto append = [&](Engine& e, const std::string& key, const std::string& value) {
    const Mutation m = MakeSet(key, value);
    Apply(&model, m);
    return e.Append(m);
  };
  {
    auto engine = OpenEngine(o);
    CHECK(engine->WaitDurable(append(*engine, "before", "1")) == Status::kOk);
    g_short_first = short_write;
    g_write_fault = Target::kLogs;
    const uint64_t seq = append(*engine, "during", std::string(5000, 'd'));
    REQUIRE(WaitFor([&] { return engine->Failed(); }));
    CHECK(engine->WriteError() == "No space left on device");
    if (policy == FsyncPolicy::kAlways) {
      CHECK(engine->WaitDurable(seq) == Status::kPersistenceError);
    }
    // Appends go on into the buffer; a waiter is answered at once.
    const uint64_t seq2 = append(*engine, "during2", "2");
    if (policy == FsyncPolicy::kAlways) {
      CHECK(engine->WaitDurable(seq2) == Status::kPersistenceError);
    }
    PersistenceInfo info;
    engine->Info(&info);
    CHECK(info.write_error == "No space left on device");
    CHECK(info.buffered_bytes > 0);
    // The writer retries on its interval.
    const int faulted = g_faulted_writes.load();
    REQUIRE(WaitFor([&] { return g_faulted_writes.load() > faulted + 2; }));
    ResetFaults();
    REQUIRE(WaitFor([&] { return !engine->Failed(); }));
    CHECK(engine->WriteError().empty());
    CHECK(engine->WaitDurable(seq2) == Status::kOk);
    CHECK(engine->WaitDurable(append(*engine, "after", "3")) == Status::kOk);
  }
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.stats.torn_bytes == 0);
  CHECK(l.records == 4);  // each exactly once
  CHECK(l.model == model);
}

TEST_CASE("a failing fsync fails the log until one succeeds", "[persist][engine][fault]") {
  const FsyncPolicy policy = GENERATE(FsyncPolicy::kAlways, FsyncPolicy::kEverySec);
  TempDir dir;
  Engine::Options o = FaultyOptions(dir.path(), policy);
  o.fsync_interval_ms = 20;
  Model model;
  {
    auto engine = OpenEngine(o);
    g_fsync_fault = Target::kLogs;
    const Mutation m = MakeSet("k", "v");
    Apply(&model, m);
    const uint64_t seq = engine->Append(m);
    if (policy == FsyncPolicy::kAlways) {
      CHECK(engine->WaitDurable(seq) == Status::kPersistenceError);
    }
    REQUIRE(WaitFor([&] { return engine->Failed(); }));
    CHECK(engine->WriteError() == "Input/output error");
    ResetFaults();
    REQUIRE(WaitFor([&] { return !engine->Failed(); }));
    CHECK(engine->WaitDurable(seq) == Status::kOk);
  }
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.records == 1);
  CHECK(l.model == model);
}

// --- rewrite -------------------------------------------------------------------

// A store stand-in: a model whose changes are appended under its lock (as
// the store appends under a shard lock), and a walk that copies it.
struct FakeStore {
  std::mutex mu;
  Model model;
  Engine* engine = nullptr;

  uint64_t Do(const Mutation& m) {
    std::lock_guard<std::mutex> l(mu);
    Apply(&model, m);
    return engine->Append(m);
  }
  Engine::Walk Walk() {
    return [this](absl::FunctionRef<void(const Mutation&)> emit) {
      // Copied under the lock, emitted outside it, as the store does per
      // shard.
      Model copy;
      {
        std::lock_guard<std::mutex> l(mu);
        copy = model;
      }
      Emit(copy, emit);
    };
  }
  Model Snapshot() {
    std::lock_guard<std::mutex> l(mu);
    return model;
  }
};

TEST_CASE("a rewrite keeps every record appended before, during and after it",
          "[persist][rewrite]") {
  TempDir dir;
  FakeStore store;
  auto engine = OpenEngine(OptionsFor(dir.path(), FsyncPolicy::kEverySec));
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; !done.load() || i < 300; ++i) {
        const std::string key = "k" + std::to_string(t) + "-" + std::to_string(i % 50);
        const std::string value = std::to_string(i);
        if (i % 11 == 5) {
          store.Do(MakeOther(Mutation::Kind::kDelete, key));
        } else if (i % 13 == 7) {
          store.Do(MakeOther(Mutation::Kind::kExpire, key, 1000 + i));
        } else {
          store.Do(MakeSet(key, value, i % 3 == 0 ? 5000 + i : 0));
        }
      }
    });
  }
  std::vector<Status> statuses;
  for (int r = 0; r < 4; ++r) {
    std::string message;
    statuses.push_back(engine->Rewrite(false, &message));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  done = true;
  for (auto& th : writers) th.join();
  for (Status s : statuses) CHECK(s == Status::kOk);
  PersistenceInfo info;
  engine->Info(&info);
  CHECK(info.rewrites == 4);
  CHECK(info.last_rewrite_ok);
  CHECK_FALSE(info.rewrite_in_progress);
  const Model final_state = store.Snapshot();
  engine.reset();
  // Only the last snapshot and its log are left.
  const auto names = Files(dir.path());
  CHECK(names.count("snap.4") == 1);
  int snaps = 0, logs = 0;
  for (const auto& n : names) {
    snaps += n.rfind("snap.", 0) == 0;
    logs += n.rfind("log.", 0) == 0;
  }
  CHECK(snaps == 1);
  CHECK(logs == 1);
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.stats.snapshot == "snap.4");
  CHECK(l.model == final_state);
}

TEST_CASE("a crash at any step of a rewrite loads a state the writers passed through",
          "[persist][rewrite]") {
  TempDir dir;
  TempDir copies;
  FakeStore store;
  // Per key, the highest value acknowledged (durable) and the highest
  // appended: a load must give a value between them.
  std::mutex progress_mu;
  std::map<std::string, int> acked, appended;
  struct Copy {
    std::string step, dir;
    std::map<std::string, int> lo, hi;
  };
  std::vector<Copy> taken;  // filled by the rewrite's thread, read after it
  std::mutex taken_mu;
  Engine::Options o = OptionsFor(dir.path(), FsyncPolicy::kAlways);
  int n = 0;
  o.on_rewrite_step = [&](std::string_view step) {
    Copy c;
    c.step = std::string(step);
    c.dir = copies / std::to_string(n++);
    {
      std::lock_guard<std::mutex> l(progress_mu);
      c.lo = acked;
    }
    CopyDataDir(dir.path(), c.dir);
    {
      std::lock_guard<std::mutex> l(progress_mu);
      c.hi = appended;
    }
    std::lock_guard<std::mutex> l(taken_mu);
    taken.push_back(std::move(c));
  };
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 1; !done.load() || i < 100; ++i) {
        const std::string key = "k" + std::to_string(t) + "-" + std::to_string(i % 7);
        const std::string value = std::to_string(i);
        {
          std::lock_guard<std::mutex> l(progress_mu);
          appended[key] = i;
        }
        const uint64_t seq = store.Do(MakeSet(key, value));
        if (engine->WaitDurable(seq) != Status::kOk) ++failures[t];
        std::lock_guard<std::mutex> l(progress_mu);
        acked[key] = i;
      }
    });
  }
  for (int r = 0; r < 3; ++r) {
    std::string message;
    CHECK(engine->Rewrite(false, &message) == Status::kOk);
    CHECK(message == "OK");
  }
  done = true;
  for (auto& th : writers) th.join();
  for (int f : failures) CHECK(f == 0);
  engine.reset();

  REQUIRE(taken.size() == 12);
  std::set<std::string> steps;
  for (const auto& c : taken) {
    steps.insert(c.step);
    INFO("crash copy at " << c.step << " in " << c.dir);
    const Loaded l = LoadDir(c.dir, true);
    REQUIRE(l.ok);
    for (const auto& [key, hi] : c.hi) {
      const auto lo_it = c.lo.find(key);
      const int lo = lo_it == c.lo.end() ? 0 : lo_it->second;
      const auto it = l.model.find(key);
      INFO("key " << key << " acked " << lo << " appended " << hi);
      if (it == l.model.end()) {
        CHECK(lo == 0);
        continue;
      }
      const int v = std::stoi(it->second.value);
      CHECK(v >= lo);
      CHECK(v <= hi);
    }
    // No key that was never written.
    for (const auto& [key, e] : l.model) CHECK(c.hi.count(key) == 1);
    // A start on the copy loads the same and clears the rewrite's leftovers.
    Model started;
    auto engine2 = OpenEngine(OptionsFor(c.dir), &started);
    CHECK(started == l.model);
    for (const auto& name : Files(c.dir)) CHECK(name.find(".tmp") == std::string::npos);
  }
  CHECK(steps == std::set<std::string>{"log_switched", "snapshot_written", "snapshot_renamed",
                                       "manifest_written"});
}

TEST_CASE("a second rewrite is refused while one runs", "[persist][rewrite]") {
  TempDir dir;
  FakeStore store;
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false, release = false;
  Engine::Options o = OptionsFor(dir.path());
  o.on_rewrite_step = [&](std::string_view step) {
    if (step != "log_switched") return;
    std::unique_lock<std::mutex> l(mu);
    reached = true;
    cv.notify_all();
    cv.wait(l, [&] { return release; });
  };
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  store.Do(MakeSet("a", "1"));
  std::string message;
  CHECK(engine->Rewrite(true, &message) == Status::kInvalidArgument);  // no source yet
  engine->SetSnapshotSource(store.Walk());
  CHECK(engine->Rewrite(true, &message) == Status::kOk);
  CHECK(message == "Background append only file rewriting started");
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return reached; });
  }
  PersistenceInfo info;
  engine->Info(&info);
  CHECK(info.rewrite_in_progress);
  for (bool background : {true, false}) {
    CHECK(engine->Rewrite(background, &message) == Status::kInvalidArgument);
    CHECK(message == "Background append only file rewriting already in progress");
  }
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
  REQUIRE(WaitFor([&] {
    PersistenceInfo i;
    engine->Info(&i);
    return !i.rewrite_in_progress;
  }));
  engine->Info(&info);
  CHECK(info.rewrites == 1);
  CHECK(info.last_rewrite_ok);
  CHECK(engine->Rewrite(false, &message) == Status::kOk);
}

TEST_CASE("a rewrite starts on its own when the log grows past the threshold",
          "[persist][rewrite]") {
  TempDir dir;
  FakeStore store;
  Engine::Options o = OptionsFor(dir.path(), FsyncPolicy::kNo);
  o.persistence.rewrite_min_bytes = 64 * 1024;
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  const std::string value(1000, 'v');
  for (int i = 0; i < 60; ++i) store.Do(MakeSet("k" + std::to_string(i % 10), value));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  PersistenceInfo info;
  engine->Info(&info);
  CHECK(info.rewrites == 0);  // 60 KB: below the threshold
  for (int i = 0; i < 100; ++i) store.Do(MakeSet("k" + std::to_string(i % 10), value));
  REQUIRE(WaitFor([&] {
    engine->Info(&info);
    return info.rewrites >= 1 && !info.rewrite_in_progress;
  }));
  CHECK(info.last_rewrite_ok);
  CHECK(info.log_bytes < 160 * 1057);  // compacted: not every record is in a log
  const Model final_state = store.Snapshot();
  engine.reset();
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(!l.stats.snapshot.empty());
  CHECK(l.model == final_state);
}

TEST_CASE("a failed snapshot leaves the old state loadable", "[persist][rewrite][fault]") {
  TempDir dir;
  FakeStore store;
  Engine::Options o = FaultyOptions(dir.path(), FsyncPolicy::kEverySec);
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  for (int i = 0; i < 100; ++i) store.Do(MakeSet("k" + std::to_string(i), "v"));
  std::string message;
  REQUIRE(engine->Rewrite(false, &message) == Status::kOk);
  for (int i = 0; i < 100; ++i) store.Do(MakeSet("k" + std::to_string(i), "w"));

  SECTION("ENOSPC writing it") { g_write_fault = Target::kSnapshots; }
  SECTION("EIO fsyncing it") { g_fsync_fault = Target::kSnapshots; }
  CHECK(engine->Rewrite(false, &message) == Status::kPersistenceError);
  CHECK(message.find("snap.2.tmp") != std::string::npos);
  PersistenceInfo info;
  engine->Info(&info);
  CHECK_FALSE(info.last_rewrite_ok);
  CHECK(info.last_rewrite_error == message);
  CHECK(info.rewrites == 1);
  CHECK_FALSE(engine->Failed());  // the log itself is fine
  CHECK(Files(dir.path()).count("snap.2.tmp") == 0);
  ResetFaults();
  {
    // A crash now loads the old snapshot and both logs.
    TempDir copy;
    CopyDataDir(dir.path(), copy.path());
    REQUIRE(engine->WaitDurable(store.Do(MakeSet("last", "x"))) == Status::kOk);
    const Loaded l = LoadDir(copy.path(), true);
    REQUIRE(l.ok);
    CHECK(l.stats.snapshot == "snap.1");
  }
  const Model final_state = store.Snapshot();
  engine.reset();
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.model == final_state);
  // The next rewrite works.
  {
    Model loaded;
    auto again = OpenEngine(o, &loaded);
    CHECK(loaded == final_state);
    FakeStore s2;
    s2.model = loaded;
    s2.engine = again.get();
    again->SetSnapshotSource(s2.Walk());
    CHECK(again->Rewrite(false, &message) == Status::kOk);
  }
  const Loaded after = LoadDir(dir.path(), false);
  REQUIRE(after.ok);
  CHECK(after.model == final_state);
  CHECK(after.stats.snapshot_records == final_state.size());
}

TEST_CASE("a rewrite while the log fails is refused, and the log switch completes later",
          "[persist][rewrite][fault]") {
  TempDir dir;
  FakeStore store;
  Engine::Options o = FaultyOptions(dir.path(), FsyncPolicy::kEverySec);
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  for (int i = 0; i < 20; ++i) store.Do(MakeSet("k" + std::to_string(i), "v"));
  REQUIRE(WaitFor([&] {
    PersistenceInfo info;
    engine->Info(&info);
    return info.buffered_bytes == 0;
  }));
  // Only the current log refuses writes (the next one can be created), and
  // its first refused write gets half of its bytes in: a torn record.
  snprintf(g_fault_file, sizeof(g_fault_file), "log.1");
  g_short_first = true;
  g_write_fault = Target::kNamed;
  store.Do(MakeSet("torn", std::string(3000, 't')));
  REQUIRE(WaitFor([&] { return engine->Failed(); }));
  std::string message;
  CHECK(engine->Rewrite(false, &message) == Status::kPersistenceError);
  CHECK(message == "cannot finish the old log: No space left on device");
  PersistenceInfo info;
  engine->Info(&info);
  CHECK_FALSE(info.last_rewrite_ok);
  // The manifest names log.1 then the empty log.2: a crash now loads
  // log.1 up to its torn record.
  CHECK(ReadFile(dir / "MANIFEST").find("log log.1\nlog log.2\n") != std::string::npos);
  {
    TempDir copy;
    CopyDataDir(dir.path(), copy.path());
    const Loaded l = LoadDir(copy.path(), true);
    REQUIRE(l.ok);
    CHECK(l.stats.torn_file == "log.1");
    CHECK(l.records == 20);
  }
  // Records appended meanwhile go to log.2 once the switch is done.
  for (int i = 0; i < 5; ++i) store.Do(MakeSet("more" + std::to_string(i), "m"));
  CHECK(engine->Rewrite(false, &message) == Status::kPersistenceError);  // still failing
  ResetFaults();
  REQUIRE(WaitFor([&] { return !engine->Failed(); }));
  CHECK(engine->Rewrite(false, &message) == Status::kOk);
  const Model final_state = store.Snapshot();
  engine.reset();
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.stats.torn_bytes == 0);
  CHECK(l.model == final_state);
}

TEST_CASE("a directory fsync failing at any step of a rewrite keeps the dir loadable",
          "[persist][rewrite][fault]") {
  // The rewrite fsyncs the dir after its first manifest, after the
  // snapshot's rename, and after its second manifest: fail each.
  const int pass = GENERATE(0, 1, 2);
  INFO("directory fsyncs let through: " << pass);
  TempDir dir;
  FakeStore store;
  Engine::Options o = FaultyOptions(dir.path(), FsyncPolicy::kEverySec);
  auto engine = OpenEngine(o);
  store.engine = engine.get();
  engine->SetSnapshotSource(store.Walk());
  for (int i = 0; i < 50; ++i) store.Do(MakeSet("k" + std::to_string(i), "a"));
  std::string message;
  REQUIRE(engine->Rewrite(false, &message) == Status::kOk);
  for (int i = 0; i < 50; i += 2) store.Do(MakeSet("k" + std::to_string(i), "b"));

  const std::string base = dir.path().substr(dir.path().rfind('/') + 1);
  snprintf(g_fault_file, sizeof(g_fault_file), "%s", base.c_str());
  g_fsync_pass = pass;
  g_fsync_fault = Target::kNamed;
  CHECK(engine->Rewrite(false, &message) == Status::kPersistenceError);
  CHECK(message.find("Input/output error") != std::string::npos);
  ResetFaults();
  store.Do(MakeSet("k1", "c"));
  REQUIRE(engine->WaitDurable(store.Do(MakeSet("k3", "c"))) == Status::kOk);
  // Written, as a crash now would find it: whichever manifest stands, every
  // file it names is there.
  REQUIRE(WaitFor([&] {
    PersistenceInfo info;
    engine->Info(&info);
    return info.buffered_bytes == 0;
  }));
  {
    TempDir copy;
    CopyDataDir(dir.path(), copy.path());
    const Loaded l = LoadDir(copy.path(), true);
    REQUIRE(l.ok);
    CHECK(l.model == store.Snapshot());
  }
  // And the next rewrite succeeds.
  CHECK(engine->Rewrite(false, &message) == Status::kOk);
  const Model final_state = store.Snapshot();
  engine.reset();
  const Loaded l = LoadDir(dir.path(), false);
  REQUIRE(l.ok);
  CHECK(l.model == final_state);
  Model started;
  OpenEngine(OptionsFor(dir.path()), &started);
  CHECK(started == final_state);
}

TEST_CASE("a damaged snapshot is refused", "[persist][rewrite][load]") {
  TempDir dir;
  FakeStore store;
  {
    auto engine = OpenEngine(OptionsFor(dir.path()));
    store.engine = engine.get();
    engine->SetSnapshotSource(store.Walk());
    for (int i = 0; i < 20; ++i) store.Do(MakeSet("k" + std::to_string(i), "value"));
    std::string message;
    REQUIRE(engine->Rewrite(false, &message) == Status::kOk);
  }
  const std::string snap = dir / "snap.1";
  std::string data = ReadFile(snap);
  REQUIRE(data.size() > 12 + 24);
  SECTION("a record flipped") { data[40] ^= 1; }
  SECTION("the count in the trailer") { data[data.size() - 16] ^= 1; }
  SECTION("the checksum in the trailer") { data[data.size() - 1] ^= 1; }
  SECTION("the trailer's magic") { data[data.size() - 24] ^= 1; }
  SECTION("cut short") { data.resize(data.size() - 1); }
  SECTION("no trailer at all") { data.resize(data.size() - 24); }
  SECTION("only a header") { data.resize(12); }
  WriteFile(snap, data);
  const Loaded l = LoadDir(dir.path(), true);
  CHECK_FALSE(l.ok);
  CHECK(l.error.find(snap) == 0);
  CHECK(l.records == 0);  // nothing applied from a snapshot that does not check
}

}  // namespace
