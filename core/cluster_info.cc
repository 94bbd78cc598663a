// The text form of ClusterInfo (replicator.h), and the C ABI's typed form
// of it (ephpm_kv_cluster_state, kv_ops.h).

#include <cstdlib>
#include <cstring>
#include <string>

#include "ephpm/kv_ops.h"
#include "ephpm/replicator.h"
#include "kv_ops_cluster.h"

namespace ephpm {

std::string FormatClusterInfo(const ClusterInfo& info) {
  std::string out;
  out += "cluster_node_id:" + info.node_id + "\n";
  out += "cluster_address:" + info.address + "\n";
  for (const auto& [name, value] : info.counters) {
    out += "cluster_" + name + ":" + std::to_string(value) + "\n";
  }
  size_t i = 0;
  for (const ClusterMemberInfo& m : info.members) {
    out += "cluster_member" + std::to_string(i++) + ":id=" + m.id + ",address=" + m.address +
           ",state=" + m.state + ",incarnation=" + std::to_string(m.incarnation) + "\n";
  }
  return out;
}

namespace {

// Lays out the strings after the arrays in one block.
class Packer {
 public:
  explicit Packer(char* next) : next_(next) {}
  const char* Put(const std::string& s) {
    char* at = next_;
    std::memcpy(at, s.c_str(), s.size() + 1);
    next_ += s.size() + 1;
    return at;
  }

 private:
  char* next_;
};

}  // namespace

ephpm_kv_cluster_state* PackClusterState(const ClusterInfo& info) {
  size_t strings = info.node_id.size() + 1 + info.address.size() + 1;
  for (const auto& c : info.counters) strings += c.first.size() + 1;
  for (const auto& m : info.members) {
    strings += m.id.size() + 1 + m.address.size() + 1 + m.state.size() + 1;
  }
  // The arrays' alignment (8) holds at each of these offsets: every size
  // before them is a multiple of 8.
  static_assert(sizeof(ephpm_kv_cluster_state) % alignof(ephpm_kv_cluster_counter) == 0);
  static_assert(sizeof(ephpm_kv_cluster_counter) % alignof(ephpm_kv_cluster_member) == 0);
  const size_t counters_at = sizeof(ephpm_kv_cluster_state);
  const size_t members_at = counters_at + info.counters.size() * sizeof(ephpm_kv_cluster_counter);
  const size_t strings_at = members_at + info.members.size() * sizeof(ephpm_kv_cluster_member);
  char* block = static_cast<char*>(std::malloc(strings_at + strings));
  if (block == nullptr) return nullptr;
  auto* state = reinterpret_cast<ephpm_kv_cluster_state*>(block);
  auto* counters = reinterpret_cast<ephpm_kv_cluster_counter*>(block + counters_at);
  auto* members = reinterpret_cast<ephpm_kv_cluster_member*>(block + members_at);
  Packer pack(block + strings_at);
  state->node_id = pack.Put(info.node_id);
  state->address = pack.Put(info.address);
  state->counter_count = info.counters.size();
  state->counters = counters;
  state->member_count = info.members.size();
  state->members = members;
  for (size_t i = 0; i < info.counters.size(); ++i) {
    counters[i].name = pack.Put(info.counters[i].first);
    counters[i].value = info.counters[i].second;
  }
  for (size_t i = 0; i < info.members.size(); ++i) {
    const ClusterMemberInfo& m = info.members[i];
    members[i].id = pack.Put(m.id);
    members[i].address = pack.Put(m.address);
    members[i].state = pack.Put(m.state);
    members[i].incarnation = m.incarnation;
  }
  return state;
}

}  // namespace ephpm
