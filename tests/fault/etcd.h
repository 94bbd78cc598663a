// The strict-mode fault run's etcd: a private three-member etcd cluster on
// loopback (Debian's etcd-server, /usr/bin/etcd), each member a Child of the
// driver (so it dies with the driver, however the driver ends) with a data
// dir of its own in a temporary directory, killed and restarted by the
// fault schedule.  Its state is read through etcd's JSON gateway
// (POST /v3/maintenance/status, /v3/kv/range) with a small blocking HTTP
// client: no etcdctl, no curl.

#ifndef EPHPM_TESTS_FAULT_ETCD_H_
#define EPHPM_TESTS_FAULT_ETCD_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "process.h"
#include "run.h"

namespace ephpm_fault {

// POSTs `body` (JSON) to http://127.0.0.1:port/path with Connection: close
// and returns the response's body; false with *error on a connection
// failure, a timeout or a status other than 200.
bool HttpPost(uint16_t port, const std::string& path, const std::string& body, int timeout_ms,
              std::string* response, std::string* error);

// The string value of "field" in a flat-enough JSON text (the first
// occurrence: etcd's gateway prints int64 fields as strings), or "" when it
// is absent (proto3 leaves zero values out).
std::string JsonString(const std::string& json, const std::string& field);

std::string Base64(const std::string& in);

// What one member says of itself (maintenance status).
struct EtcdStatus {
  bool answered = false;
  std::string member_id;  // its own id
  std::string leader;     // "" when it knows no leader
  std::string error;
};

class EtcdCluster {
 public:
  struct Member {
    std::string name;  // m1, m2, m3
    uint16_t client_port = 0, peer_port = 0;
    std::string data_dir, log;
    Child child;
    bool up = false;
  };

  // ports: 2 per member (client, peer).  Data dirs under data_root, logs
  // under log_dir.
  EtcdCluster(const Config& c, std::string program, const std::vector<uint16_t>& ports,
              std::string data_root, std::string log_dir);
  ~EtcdCluster();

  size_t size() const { return members_.size(); }
  Member& member(size_t k) { return members_[k]; }
  // "127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3"
  std::string Endpoints() const;

  // Starts every member and waits (timeout_ms) until all three know the
  // same leader.  False with *error.
  bool StartAll(int64_t timeout_ms, std::string* error);
  // Starts member k (again: same flags, same data dir) and waits until its
  // client port answers a status request (it may not know a leader yet).
  bool Start(size_t k, std::string* error);
  void Kill(size_t k);

  EtcdStatus Status(size_t k, int timeout_ms = 1000);
  // The index of the member that is the leader by its own status, -1 when
  // none says so.
  int Leader();
  // Whether every member is up, answers and knows the same leader.
  bool Healthy(std::string* why);
  bool WaitHealthy(int64_t timeout_ms, std::string* why);

  // The ids registered under `prefix` (keys prefix + id), through member
  // `via` or any member that answers; false with *error when none did.
  bool RangeIds(const std::string& prefix, std::set<std::string>* ids, std::string* error);

  // Members that exited on their own since the last look (restarted).
  std::vector<std::string> Crashes();

 private:
  std::vector<std::string> Argv(const Member& m) const;
  void Mark(size_t k, const char* what);

  const Config& c_;
  const std::string program_;
  std::string initial_cluster_, token_;
  std::deque<Member> members_;  // a deque: a Member (its Child) never moves
};

// Strict mode: a thread that reads etcd's member list (prefix + id keys)
// every 50 ms through whichever member answers and puts every change on the
// timeline ("etcd members: n1 n3 (n2 gone)"), so that a node dropping out
// (its lease expired: paused or down longer than --etcd-lease-ttl) and
// coming back can be read against the faults and the clients' replies.
class MembersWatcher {
 public:
  MembersWatcher(std::vector<uint16_t> client_ports, std::string prefix);
  ~MembersWatcher();  // stops
  MembersWatcher(const MembersWatcher&) = delete;
  MembersWatcher& operator=(const MembersWatcher&) = delete;

 private:
  void Loop();

  const std::vector<uint16_t> ports_;
  const std::string prefix_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ephpm_fault

#endif  // EPHPM_TESTS_FAULT_ETCD_H_
