// State-based replication between stores: stamps, last writer wins,
// tombstones for deletions and expiries, flushes, and the full sync.  Two or
// three stores exchange mutations by hand, in the orders a network could
// deliver them.

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Mutation;
using ephpm::Stamp;
using ephpm::Status;
using ephpm::Store;
using ephpm_test::GetOr;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

namespace {

// A mutation with its own copies of the bytes.  Every other field is copied
// whole, so a field added to Mutation travels without a change here.
struct Owned {
  Mutation m;
  std::string key, value;

  Mutation View() const {
    Mutation v = m;
    v.key = key;
    v.value = value;
    return v;
  }
};

Owned Copy(const Mutation& m) { return Owned{m, std::string(m.key), std::string(m.value)}; }

// Stamps with a counter shared by the "cluster" (so the test decides the
// order) and records what it publishes.
class Recorder : public ephpm::Replicator {
 public:
  Recorder(uint64_t node, uint64_t* clock) : node_(node), clock_(clock) {}
  Stamp NextStamp() override {
    if (fail_stamps) throw std::bad_alloc();
    return Stamp{++*clock_, node_};
  }
  bool fail_stamps = false;  // as if the replicator could not allocate
  void Publish(const Mutation& m) noexcept override { log.push_back(Copy(m)); }
  bool Tentative() const override { return tentative; }
  std::vector<Owned> Take() { return std::move(log); }
  std::vector<Owned> log;
  bool tentative = false;  // what the next writes are published as

 private:
  uint64_t node_;
  uint64_t* clock_;
};

struct Node {
  Node(uint64_t id, uint64_t* hlc, ManualClock* clock, size_t shards = 64,
       ephpm::StoreOptions o = NoSweeper())
      : rep(id, hlc) {
    o.replicator = &rep;
    o.shards = shards;
    o.tombstone_ttl_ms = 60000;
    store = MakeStore(o, clock);
  }
  Recorder rep;
  std::unique_ptr<Store> store;
};

void Deliver(const std::vector<Owned>& log, Store& to) {
  for (const Owned& m : log) to.ApplyReplicated(m.View());
}

}  // namespace

TEST_CASE("a replicated set carries the value, its TTL and its stamp", "[replication]") {
  ManualClock clock;
  uint64_t hlc = 100;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock);
  REQUIRE(a.store->Set("k", "v", 5000) == Status::kOk);
  const auto log = a.rep.Take();
  REQUIRE(log.size() == 1);
  CHECK(log[0].m.stamp == (Stamp{101, 1}));
  Deliver(log, *b.store);
  CHECK(GetOr(*b.store, "k") == "v");
  int64_t ttl = 0;
  REQUIRE(b.store->Pttl("k", &ttl) == Status::kOk);
  CHECK(ttl == 5000);
  CHECK(b.rep.Take().empty());  // applying is not publishing again
  Deliver(log, *b.store);       // a duplicate changes nothing
  CHECK(GetOr(*b.store, "k") == "v");
}

TEST_CASE("concurrent writes settle on the newest stamp whatever the delivery order",
          "[replication]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock), c(3, &hlc, &clock);
  REQUIRE(a.store->Set("k", "from a") == Status::kOk);  // stamp 1
  REQUIRE(b.store->Set("k", "from b") == Status::kOk);  // stamp 2
  REQUIRE(c.store->Set("k", "from c") == Status::kOk);  // stamp 3
  auto la = a.rep.Take(), lb = b.rep.Take(), lc = c.rep.Take();
  // As if c's clock were behind: its write is the oldest; b's is the newest.
  lc[0].m.stamp = Stamp{0, 3};
  for (auto& order : std::vector<std::vector<const std::vector<Owned>*>>{
           {&la, &lb, &lc}, {&lc, &lb, &la}, {&lb, &lc, &la}}) {
    Node n(9, &hlc, &clock);
    for (const auto* log : order) Deliver(*log, *n.store);
    CHECK(GetOr(*n.store, "k") == "from b");
  }
  Deliver(lb, *a.store);
  Deliver(la, *b.store);
  CHECK(GetOr(*a.store, "k") == "from b");
  CHECK(GetOr(*b.store, "k") == "from b");
  // Equal clock readings: the node id breaks the tie, the same way everywhere.
  la[0].m.stamp = Stamp{50, 1};
  lb[0].m.stamp = Stamp{50, 2};
  Node x(7, &hlc, &clock), y(8, &hlc, &clock);
  Deliver(la, *x.store);
  Deliver(lb, *x.store);
  Deliver(lb, *y.store);
  Deliver(la, *y.store);
  CHECK(GetOr(*x.store, "k") == GetOr(*y.store, "k"));
}

TEST_CASE("a deleted key stays deleted when an older write arrives late", "[replication]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock);
  REQUIRE(a.store->Set("k", "old") == Status::kOk);
  const auto old_write = a.rep.Take();
  int64_t n = 0;
  REQUIRE(b.store->Set("k", "newer") == Status::kOk);
  REQUIRE(b.store->Del("k", &n) == Status::kOk);
  const auto b_log = b.rep.Take();
  CHECK(b.store->TombstoneCount() == 1);
  Deliver(old_write, *b.store);  // older than the tombstone
  CHECK(GetOr(*b.store, "k") == "<missing>");
  Deliver(b_log, *a.store);
  CHECK(GetOr(*a.store, "k") == "<missing>");
  CHECK(a.store->TombstoneCount() == 1);
  // A newer write brings it back, and takes the tombstone away.
  REQUIRE(a.store->Set("k", "again") == Status::kOk);
  Deliver(a.rep.Take(), *b.store);
  CHECK(GetOr(*b.store, "k") == "again");
  CHECK(b.store->TombstoneCount() == 0);
  CHECK(a.store->TombstoneCount() == 0);
}

TEST_CASE("del_if_eq's removal replicates as a deletion", "[replication][lock]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock);
  REQUIRE(a.store->SetNx("lock", "tok", 30000) == ephpm::SetNxOutcome::kInserted);
  Deliver(a.rep.Take(), *b.store);
  CHECK(GetOr(*b.store, "lock") == "tok");
  REQUIRE(a.store->DelIfEq("lock", "tok") == ephpm::DelIfEqOutcome::kDeleted);
  Deliver(a.rep.Take(), *b.store);
  CHECK(GetOr(*b.store, "lock") == "<missing>");
}

TEST_CASE("an expired key leaves a tombstone, so an older write cannot revive it",
          "[replication][ttl]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock);
  REQUIRE(b.store->Set("k", "older, no TTL") == Status::kOk);  // stamp 1
  const auto b_log = b.rep.Take();
  REQUIRE(a.store->Set("k", "newer", 1000) == Status::kOk);     // stamp 2
  Deliver(a.rep.Take(), *b.store);
  clock.Advance(1000);
  a.store->SweepExpired(100);
  b.store->SweepExpired(100);
  CHECK(a.store->TombstoneCount() == 1);
  CHECK(b.store->TombstoneCount() == 1);
  Deliver(b_log, *a.store);  // arrives after a reaped its newer entry
  CHECK(GetOr(*a.store, "k") == "<missing>");
  CHECK(GetOr(*b.store, "k") == "<missing>");
  // A write whose expiry has already passed when it arrives is absent too.
  REQUIRE(a.store->Set("j", "short", 10) == Status::kOk);
  const auto j = a.rep.Take();
  clock.Advance(10);
  Deliver(j, *b.store);
  CHECK(GetOr(*b.store, "j") == "<missing>");
}

TEST_CASE("a replicated flush removes what is older than it, not what is newer",
          "[replication]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock), b(2, &hlc, &clock);
  REQUIRE(b.store->Set("early", "x") == Status::kOk);  // stamp 1
  const auto early = b.rep.Take();
  Deliver(early, *a.store);
  a.store->Flush();  // stamp 2
  const auto flush = a.rep.Take();
  REQUIRE(flush.size() == 1);
  REQUIRE(b.store->Set("late", "y") == Status::kOk);  // stamp 3
  const auto late = b.rep.Take();
  Deliver(flush, *b.store);
  CHECK(GetOr(*b.store, "early") == "<missing>");
  CHECK(GetOr(*b.store, "late") == "y");  // written after the flush: kept
  Deliver(late, *a.store);
  CHECK(GetOr(*a.store, "late") == "y");
  Deliver(early, *a.store);  // older than the flush: refused
  CHECK(GetOr(*a.store, "early") == "<missing>");
  CHECK(a.store->Stats().memory_used > 0);
}

TEST_CASE("hashes and compressed values replicate intact", "[replication][hash]") {
  ManualClock clock;
  uint64_t hlc = 0;
  auto o = NoSweeper();
  Recorder rep(1, &hlc);
  o.replicator = &rep;
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 32;
  auto a = MakeStore(o, &clock);
  Node b(2, &hlc, &clock);
  int64_t n = 0;
  REQUIRE(a->HSet("h", {{"f", "1"}, {"g", std::string(3, '\0')}}, false, &n) == Status::kOk);
  REQUIRE(a->HIncrBy("h", "f", 41, &n) == Status::kOk);
  const std::string big(1000, 'z');
  REQUIRE(a->Set("big", big) == Status::kOk);
  ephpm::EntryInfo info;
  REQUIRE(a->Inspect("big", &info) == Status::kOk);
  REQUIRE(info.compressed);
  Deliver(rep.Take(), *b.store);
  std::string v;
  REQUIRE(b.store->HGet("h", "f", &v) == Status::kOk);
  CHECK(v == "42");
  REQUIRE(b.store->HGet("h", "g", &v) == Status::kOk);
  CHECK(v == std::string(3, '\0'));
  CHECK(GetOr(*b.store, "big") == big);
  CHECK(b.store->Stats().memory_used > 0);
}

TEST_CASE("a full sync brings a fresh node to the same state, tombstones included",
          "[replication][sync]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock, 8), fresh(2, &hlc, &clock, 64);  // shard counts may differ
  int64_t n = 0;
  for (int i = 0; i < 500; ++i) {
    REQUIRE(a.store->Set("k" + std::to_string(i), "v" + std::to_string(i), i % 2 ? 60000 : 0) ==
            Status::kOk);
  }
  REQUIRE(a.store->HSet("h", {{"f", "v"}}, false, &n) == Status::kOk);
  REQUIRE(a.store->Del("k7", &n) == Status::kOk);
  a.rep.Take();
  std::vector<Owned> snapshot;
  a.store->ForEachForSync([&](const Mutation& m) { snapshot.push_back(Copy(m)); });
  Deliver(snapshot, *fresh.store);
  CHECK(fresh.store->DbSize() == a.store->DbSize());
  CHECK(fresh.store->TombstoneCount() == 1);
  for (int i = 0; i < 500; ++i) {
    const std::string k = "k" + std::to_string(i);
    CHECK(GetOr(*fresh.store, k) == GetOr(*a.store, k));
  }
  int64_t ttl = 0;
  REQUIRE(fresh.store->Pttl("k1", &ttl) == Status::kOk);
  CHECK(ttl == 60000);  // the same absolute expiry
  std::string v;
  CHECK(fresh.store->HGet("h", "f", &v) == Status::kOk);
  // Syncing the other way changes nothing: same stamps.
  std::vector<Owned> back;
  fresh.store->ForEachForSync([&](const Mutation& m) { back.push_back(Copy(m)); });
  const auto before = a.store->Stats();
  Deliver(back, *a.store);
  CHECK(a.store->Stats().keys == before.keys);
}

TEST_CASE("tombstones are accounted and collected after their TTL", "[replication][memory]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock);
  int64_t n = 0;
  for (int i = 0; i < 100; ++i) REQUIRE(a.store->Set("k" + std::to_string(i), "v") == Status::kOk);
  for (int i = 0; i < 100; ++i) REQUIRE(a.store->Del("k" + std::to_string(i), &n) == Status::kOk);
  CHECK(a.store->TombstoneCount() == 100);
  CHECK(a.store->Stats().memory_used > 0);  // the tombstones
  clock.Advance(59999);
  a.store->SweepExpired(1000);
  CHECK(a.store->TombstoneCount() == 100);
  clock.Advance(1);
  a.store->SweepExpired(1000);
  CHECK(a.store->TombstoneCount() == 0);
  CHECK(a.store->Stats().memory_used == 0);
}

TEST_CASE("ForgetLocal drops only the state its stamp made, without a trace", "[replication]") {
  ManualClock clock;
  uint64_t hlc = 100;
  Node a(1, &hlc, &clock);
  // A write, then another on top of it: forgetting the first keeps the second.
  REQUIRE(a.store->Set("k", "first") == Status::kOk);
  REQUIRE(a.store->Set("k", "second") == Status::kOk);
  const auto log = a.rep.Take();
  REQUIRE(log.size() == 2);
  a.store->ForgetLocal("k", log[0].m.stamp);
  CHECK(GetOr(*a.store, "k") == "second");
  a.store->ForgetLocal("k", log[1].m.stamp);
  CHECK(GetOr(*a.store, "k") == "<missing>");
  CHECK(a.store->Stats().memory_used == 0);
  CHECK(a.rep.Take().empty());  // nothing published
  // No tombstone is left: an older state of the key is taken again.
  Owned older = log[0];
  older.value = "older";
  older.m.stamp = Stamp{1, 2};
  Deliver({older}, *a.store);
  CHECK(GetOr(*a.store, "k") == "older");
  // A deletion's tombstone is forgotten the same way.
  int64_t removed = 0;
  REQUIRE(a.store->Del("k", &removed) == Status::kOk);
  REQUIRE(removed == 1);
  const auto del = a.rep.Take();
  REQUIRE(del.size() == 1);
  CHECK(a.store->TombstoneCount() == 1);
  a.store->ForgetLocal("k", Stamp{del[0].m.stamp.hlc + 1, 1});  // another stamp: kept
  CHECK(a.store->TombstoneCount() == 1);
  a.store->ForgetLocal("k", del[0].m.stamp);
  CHECK(a.store->TombstoneCount() == 0);
  CHECK(a.store->Stats().memory_used == 0);
  Deliver({older}, *a.store);
  CHECK(GetOr(*a.store, "k") == "older");
}

namespace {
// The keys (with the kind of mutation) a full sync of `s` would send.
std::vector<std::string> SyncKeys(const Store& s) {
  std::vector<std::string> keys;
  s.ForEachForSync([&](const Mutation& m) {
    keys.push_back((m.kind == Mutation::Kind::kDelete ? "-" : "+") + std::string(m.key));
  });
  std::sort(keys.begin(), keys.end());
  return keys;
}
}  // namespace

TEST_CASE("a tentative write stays out of a full sync until it is confirmed",
          "[replication][cluster]") {
  // A decision's writes are tentative until every member confirmed them;
  // their stamps are fresh, so a full sync that carried one the members
  // refused would make it win over the cluster's state there.
  ManualClock clock;
  uint64_t hlc = 100;
  Node a(1, &hlc, &clock);
  REQUIRE(a.store->Set("kept", "confirmed") == Status::kOk);
  REQUIRE(a.store->Set("k", "confirmed") == Status::kOk);
  a.rep.tentative = true;
  REQUIRE(a.store->Set("k", "tentative") == Status::kOk);
  REQUIRE(a.store->SetNx("new", "t", 0) == ephpm::SetNxOutcome::kInserted);
  int64_t removed = 0;
  REQUIRE(a.store->Del("kept", &removed) == Status::kOk);
  a.rep.tentative = false;
  const auto log = a.rep.Take();
  REQUIRE(log.size() == 5);
  // Seen here (the decider answers from its copy), not sent in a sync: not
  // even the confirmed state under the tentative one, which the members have.
  CHECK(GetOr(*a.store, "k") == "tentative");
  CHECK(GetOr(*a.store, "new") == "t");
  CHECK(SyncKeys(*a.store).empty());
  CHECK(a.store->TombstoneCount() == 1);

  // Confirming with another stamp changes nothing.
  a.store->ConfirmLocal("k", log[0].m.stamp);
  a.store->ConfirmLocal("kept", Stamp{log[4].m.stamp.hlc + 1, 1});
  a.store->ConfirmLocal("absent", log[2].m.stamp);
  CHECK(SyncKeys(*a.store).empty());
  // Its own stamp: in the next sync, a set and a tombstone alike.
  a.store->ConfirmLocal("k", log[2].m.stamp);
  a.store->ConfirmLocal("kept", log[4].m.stamp);
  CHECK(SyncKeys(*a.store) == std::vector<std::string>{"+k", "-kept"});
  CHECK(a.rep.Take().empty());  // confirming publishes nothing

  // Forgotten instead: gone, and never sent.
  a.store->ForgetLocal("new", log[3].m.stamp);
  CHECK(GetOr(*a.store, "new") == "<missing>");
  CHECK(SyncKeys(*a.store) == std::vector<std::string>{"+k", "-kept"});

  // A later plain write, or a newer state from a member, replaces a
  // tentative one and is sent as usual.
  a.rep.tentative = true;
  REQUIRE(a.store->Set("k", "tentative again") == Status::kOk);
  REQUIRE(a.store->Set("other", "tentative") == Status::kOk);
  a.rep.tentative = false;
  CHECK(SyncKeys(*a.store) == std::vector<std::string>{"-kept"});
  REQUIRE(a.store->Set("k", "plain") == Status::kOk);
  Owned newer = a.rep.Take().back();
  newer.key = "other";
  newer.value = "from a member";
  newer.m.stamp = Stamp{hlc + 10, 2};
  Deliver({newer}, *a.store);
  CHECK(GetOr(*a.store, "other") == "from a member");
  CHECK(SyncKeys(*a.store) == std::vector<std::string>{"+k", "+other", "-kept"});
}

TEST_CASE("a replica and a synced node keep a replicated lock pinned under allkeys-lru",
          "[replication][lock][lru]") {
  ManualClock clock;
  uint64_t hlc = 0;
  auto lru = NoSweeper();
  lru.shards = 1;             // one shard and a sample as large as the shard:
  lru.eviction_samples = 64;  // the lock, least recently used, is the first candidate
  lru.eviction = ephpm::EvictionPolicy::kAllKeysLru;
  lru.memory_limit = 4096;
  Node owner(1, &hlc, &clock), replica(2, &hlc, &clock, 1, lru), synced(3, &hlc, &clock, 1, lru);
  REQUIRE(owner.store->SetNx("lock", "token-a", 30000) == ephpm::SetNxOutcome::kInserted);
  Deliver(owner.rep.Take(), *replica.store);
  std::vector<Owned> snapshot;
  owner.store->ForEachForSync([&](const Mutation& m) { snapshot.push_back(Copy(m)); });
  Deliver(snapshot, *synced.store);
  clock.Advance(1);

  for (Node* n : {&replica, &synced}) {
    for (int i = 0; i < 100; ++i) {
      REQUIRE(n->store->Set("d" + std::to_string(i), std::string(100, 'v')) == Status::kOk);
      clock.Advance(1);
    }
    CHECK(n->store->Stats().evicted > 0);
    // Should this node become the owner, the lock is still held.
    CHECK(GetOr(*n->store, "lock") == "token-a");
    CHECK(n->store->SetNxLocal("lock", "token-b", 30000) == ephpm::SetNxOutcome::kExists);
  }
}

TEST_CASE("a replica follows the lock's pin: kept by a new TTL, dropped by SET and PERSIST",
          "[replication][lock]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node owner(1, &hlc, &clock), replica(2, &hlc, &clock);
  bool b = false;
  auto pinned = [&] { return replica.store->Stats().pinned_keys; };
  REQUIRE(owner.store->SetNx("l", "t", 30000) == ephpm::SetNxOutcome::kInserted);
  REQUIRE(owner.store->SetNx("nx", "t") == ephpm::SetNxOutcome::kInserted);  // no TTL: data
  REQUIRE(owner.store->SetNx("l2", "t", 30000) == ephpm::SetNxOutcome::kInserted);
  Deliver(owner.rep.Take(), *replica.store);
  CHECK(pinned() == 2);
  REQUIRE(owner.store->Expire("l", 60000, &b) == Status::kOk);
  Deliver(owner.rep.Take(), *replica.store);
  CHECK(pinned() == 2);
  REQUIRE(owner.store->Persist("l", &b) == Status::kOk);
  Deliver(owner.rep.Take(), *replica.store);
  CHECK(pinned() == 1);
  REQUIRE(owner.store->Set("l2", "data", 30000) == Status::kOk);
  Deliver(owner.rep.Take(), *replica.store);
  CHECK(pinned() == 0);
  CHECK(replica.store->Stats().memory_used == owner.store->Stats().memory_used);
}

TEST_CASE("a replicated pin without a TTL is ignored: pinned memory stays bounded",
          "[replication][lock]") {
  ManualClock clock;
  uint64_t hlc = 0;
  Node replica(2, &hlc, &clock);
  Mutation m;
  m.kind = Mutation::Kind::kSet;
  m.key = "k";
  m.value = "v";
  m.original_size = 1;
  m.stamp = Stamp{1, 9};
  m.pinned = true;
  REQUIRE(replica.store->ApplyReplicated(m));
  ephpm::EntryInfo info;
  REQUIRE(replica.store->Inspect("k", &info) == Status::kOk);
  CHECK_FALSE(info.pinned);
  CHECK(replica.store->Stats().pinned_keys == 0);
}

TEST_CASE("a replicated value longer than any value the store accepts is refused",
          "[replication]") {
  // An entry keeps a string's length in 32 bits (kMaxValueSizeLimit): a
  // compressed frame claiming more is malformed, not truncated.
  ManualClock clock;
  uint64_t hlc = 0;
  Node replica(2, &hlc, &clock);
  REQUIRE(replica.store->Set("k", "before", 0) == Status::kOk);
  const uint64_t used = replica.store->Stats().memory_used;
  Mutation m;
  m.kind = Mutation::Kind::kSet;
  m.key = "k";
  m.value = "frame";
  m.compressed = true;
  m.original_size = uint64_t{ephpm::kMaxValueSizeLimit} + 1;
  m.stamp = Stamp{uint64_t{1} << 60, 9};
  CHECK_FALSE(replica.store->ApplyReplicated(m));
  m.original_size = uint64_t{1} << 32;  // would read back as 0 in 32 bits
  CHECK_FALSE(replica.store->ApplyReplicated(m));
  std::string v;
  REQUIRE(replica.store->Get("k", &v) == Status::kOk);
  CHECK(v == "before");
  CHECK(replica.store->Stats().memory_used == used);
}

TEST_CASE("an allocation failure inside del, expire, expireat and persist is an error, "
          "never an exception", "[replication][oom]") {
  // These reach the replicator (and allocate) after the store decided; the
  // C ABI and the RESP server call them with no try around them.
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock);
  for (const char* k : {"k1", "k2", "k3"}) REQUIRE(a.store->Set(k, "v") == Status::kOk);
  REQUIRE(a.store->Set("k4", "v", 60000) == Status::kOk);
  a.rep.fail_stamps = true;
  int64_t removed = -1;
  bool applied = true;
  CHECK(a.store->Del("k1", &removed) == Status::kOutOfMemory);
  CHECK(a.store->Expire("k2", 1000, &applied) == Status::kOutOfMemory);
  CHECK(a.store->ExpireAt("k3", clock.NowMs() + 1000, &applied) == Status::kOutOfMemory);
  CHECK(a.store->Persist("k4", &applied) == Status::kOutOfMemory);
  a.rep.fail_stamps = false;
  // The store still works, and its memory total is exact.
  CHECK(a.store->Set("k2", "v") == Status::kOk);
  CHECK(a.store->Del("k2", &removed) == Status::kOk);
  CHECK(removed == 1);
}

TEST_CASE("an allocation failure inside hdel and flush is an error, never an exception",
          "[replication][oom]") {
  // The same for the two other writes that reach the replicator with no
  // guard of their own around them: a flush that cannot be stamped removes
  // nothing; an hdel reports the failure (its change, made before, stays, as
  // with hset).
  ManualClock clock;
  uint64_t hlc = 0;
  Node a(1, &hlc, &clock);
  REQUIRE(a.store->Set("k", "v") == Status::kOk);
  std::vector<std::pair<std::string_view, std::string_view>> fields{{"f1", "1"}, {"f2", "2"}};
  int64_t added = 0;
  REQUIRE(a.store->HSet("h", fields, false, &added) == Status::kOk);
  a.rep.fail_stamps = true;
  CHECK(a.store->Flush() == Status::kOutOfMemory);
  CHECK(a.store->DbSize() == 2);  // nothing removed
  int64_t removed = -1;
  CHECK(a.store->HDel("h", {"f1"}, &removed) == Status::kOutOfMemory);
  a.rep.fail_stamps = false;
  CHECK(a.store->Flush() == Status::kOk);
  CHECK(a.store->DbSize() == 0);
}
