// The C ops table from C++: statuses that the plain-C test cannot provoke
// on a default store, and the size check for tables from older providers.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ephpm/kv_ops_store.h"
#include "test_util.h"

using ephpm::ManualClock;
using ephpm::Status;
using ephpm_test::MakeStore;
using ephpm_test::NoSweeper;

TEST_CASE("a short table from an older provider lacks the appended slots", "[kv_ops]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  CHECK(EPHPM_KV_OPS_HAS(&ops, del_if_eq));
  ops.size = offsetof(ephpm_kv_ops, del_if_eq);  // a provider before del_if_eq
  CHECK(EPHPM_KV_OPS_HAS(&ops, wait));
  CHECK_FALSE(EPHPM_KV_OPS_HAS(&ops, del_if_eq));
  CHECK_FALSE(EPHPM_KV_OPS_HAS(&ops, persist));
  ops.size = sizeof(ephpm_kv_ops);
  ops.persist = nullptr;
  CHECK_FALSE(EPHPM_KV_OPS_HAS(&ops, persist));
}

TEST_CASE("the ops table reports out of memory and leaves the value", "[kv_ops][oom]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.memory_limit = 400;
  auto s = MakeStore(o, &clock);
  const ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  REQUIRE(ops.set(ops.ctx, "k", 1, "small", 5, 0) == EPHPM_KV_OK);
  const std::string big(1000, 'x');
  CHECK(ops.set(ops.ctx, "k", 1, big.data(), big.size(), 0) == EPHPM_KV_OUT_OF_MEMORY);
  int inserted = -1;
  CHECK(ops.set_nx(ops.ctx, "other", 5, big.data(), big.size(), 0, &inserted) ==
        EPHPM_KV_OUT_OF_MEMORY);
  CHECK(inserted == -1);  // outputs are written only on OK
  char* v = nullptr;
  size_t n = 0;
  REQUIRE(ops.get(ops.ctx, "k", 1, &v, &n) == EPHPM_KV_OK);
  CHECK(std::string(v, n) == "small");
  std::free(v);
}

namespace {
// A replicator that cannot allocate anything it is asked for.
class NoMemoryReplicator : public ephpm::Replicator {
 public:
  ephpm::Stamp NextStamp() override { throw std::bad_alloc(); }
  std::string Describe() const override { throw std::bad_alloc(); }
};
}  // namespace

TEST_CASE("an allocation failure under any entry of the table is out of memory, never an "
          "exception in C", "[kv_ops][oom]") {
  // Every slot goes through one guard: here the failure comes from below the
  // store (a replicator), where no store method catches it for cluster_info.
  ManualClock clock;
  NoMemoryReplicator rep;
  auto o = NoSweeper();
  o.replicator = &rep;
  auto s = MakeStore(o, &clock);
  const ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  char* text = nullptr;
  size_t len = 0;
  CHECK(ops.cluster_info(ops.ctx, &text, &len) == EPHPM_KV_OUT_OF_MEMORY);
  CHECK(text == nullptr);
  CHECK(ops.set(ops.ctx, "k", 1, "v", 1, 0) == EPHPM_KV_OUT_OF_MEMORY);
  CHECK(ops.flush_all(ops.ctx) == EPHPM_KV_OUT_OF_MEMORY);
  uint64_t n = 0;
  CHECK(ops.dbsize(ops.ctx, &n) == EPHPM_KV_OK);  // and the table still answers
}

namespace {
// A replicator that reports a fixed cluster, or fails to allocate it.
class InfoReplicator : public ephpm::Replicator {
 public:
  bool fail = false;
  bool Info(ephpm::ClusterInfo* info) const override {
    if (fail) throw std::bad_alloc();
    info->node_id = "n1";
    info->address = "127.0.0.1:7001";
    info->counters = {{"incarnation", 5}, {"alive", 2}, {"ready", 1}};
    info->members = {{"n1", "127.0.0.1:7001", "alive", 5}, {"n2", "[::1]:7002", "dead", 9}};
    return true;
  }
};
}  // namespace

TEST_CASE("cluster_state gives the cluster typed, cluster_info the same as text",
          "[kv_ops][cluster]") {
  ManualClock clock;
  InfoReplicator rep;
  auto o = NoSweeper();
  o.replicator = &rep;
  auto s = MakeStore(o, &clock);
  const ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  REQUIRE(EPHPM_KV_OPS_HAS(&ops, cluster_state));
  ephpm_kv_cluster_state* cs = nullptr;
  REQUIRE(ops.cluster_state(ops.ctx, &cs) == EPHPM_KV_OK);
  REQUIRE(cs != nullptr);
  CHECK(std::string(cs->node_id) == "n1");
  CHECK(std::string(cs->address) == "127.0.0.1:7001");
  REQUIRE(cs->counter_count == 3);
  CHECK(std::string(cs->counters[0].name) == "incarnation");
  CHECK(cs->counters[0].value == 5);
  CHECK(std::string(cs->counters[2].name) == "ready");
  CHECK(cs->counters[2].value == 1);
  REQUIRE(cs->member_count == 2);
  CHECK(std::string(cs->members[1].id) == "n2");
  CHECK(std::string(cs->members[1].address) == "[::1]:7002");
  CHECK(std::string(cs->members[1].state) == "dead");
  CHECK(cs->members[1].incarnation == 9);
  std::free(cs);  // one block

  char* text = nullptr;
  size_t len = 0;
  REQUIRE(ops.cluster_info(ops.ctx, &text, &len) == EPHPM_KV_OK);
  CHECK(std::string(text, len) ==
        "cluster_node_id:n1\ncluster_address:127.0.0.1:7001\ncluster_incarnation:5\n"
        "cluster_alive:2\ncluster_ready:1\n"
        "cluster_member0:id=n1,address=127.0.0.1:7001,state=alive,incarnation=5\n"
        "cluster_member1:id=n2,address=[::1]:7002,state=dead,incarnation=9\n");
  std::free(text);

  rep.fail = true;  // the guard turns the failure into a status, state untouched
  cs = reinterpret_cast<ephpm_kv_cluster_state*>(&rep);
  CHECK(ops.cluster_state(ops.ctx, &cs) == EPHPM_KV_OUT_OF_MEMORY);
  CHECK(cs == nullptr);
}

TEST_CASE("cluster_state is NULL on a single node", "[kv_ops][cluster]") {
  ManualClock clock;
  auto s = MakeStore(NoSweeper(), &clock);
  const ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  ephpm_kv_cluster_state* cs = reinterpret_cast<ephpm_kv_cluster_state*>(&clock);
  REQUIRE(ops.cluster_state(ops.ctx, &cs) == EPHPM_KV_OK);
  CHECK(cs == nullptr);
}

TEST_CASE("the ops table reads compressed values back and releases them by token",
          "[kv_ops][compression]") {
  ManualClock clock;
  auto o = NoSweeper();
  o.compression = ephpm::Compression::kZstd;
  o.compression_threshold = 32;
  auto s = MakeStore(o, &clock);
  const ephpm_kv_ops ops = ephpm::MakeKvOps(s.get());
  const std::string token(64, 'a');
  REQUIRE(ops.set(ops.ctx, "lock", 4, token.data(), token.size(), 30000) == EPHPM_KV_OK);
  ephpm::EntryInfo info;
  REQUIRE(s->Inspect("lock", &info) == Status::kOk);
  REQUIRE(info.compressed);
  char* v = nullptr;
  size_t n = 0;
  REQUIRE(ops.get(ops.ctx, "lock", 4, &v, &n) == EPHPM_KV_OK);
  CHECK(std::string(v, n) == token);
  std::free(v);
  int deleted = -1;
  CHECK(ops.del_if_eq(ops.ctx, "lock", 4, token.data(), token.size(), &deleted) == EPHPM_KV_OK);
  CHECK(deleted == 1);
}

TEST_CASE("status names", "[kv_ops]") {
  CHECK(std::strcmp(ephpm_kv_status_name(EPHPM_KV_OK), "ok") == 0);
  CHECK(std::strcmp(ephpm_kv_status_name(EPHPM_KV_OWNER_UNREACHABLE), "owner unreachable") == 0);
  CHECK(std::strcmp(ephpm_kv_status_name(EPHPM_KV_WRONG_TYPE), "wrong type") == 0);
  CHECK(std::strcmp(ephpm_kv_status_name(-1), "unknown status") == 0);
}
