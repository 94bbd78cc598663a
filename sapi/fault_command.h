// EPHPM.FAULT: the cluster's fault hooks (cluster/node.h, built only into
// ephpm_cluster_testing) over RESP, for the real-process fault test
// (tests/fault/).  Only the test-only program ephpm-faulty has it; the
// shipped ephpm answers "unknown command", which tests/fault checks.
//
//   EPHPM.FAULT DELAY <peer-id> <ms>      delay every frame this node sends to peer
//   EPHPM.FAULT DELAYREPL <peer-id> <ms>  delay only its replication to peer
//   EPHPM.FAULT CUT <peer-id> 0|1         drop every frame to and from peer
//   EPHPM.FAULT SKEW <ms>                 move this node's stamp clock
//   EPHPM.FAULT CLEAR                     no delay, no cut, no skew, for every peer
//
// A delay of 0 clears it.  The peer must be a member this node knows (a typo
// in a test must not look like a fault that was applied).

#ifndef EPHPM_SAPI_FAULT_COMMAND_H_
#define EPHPM_SAPI_FAULT_COMMAND_H_

#include <functional>
#include <string_view>

#include "node.h"
#include "resp/server.h"

namespace ephpm {

// Adds EPHPM.FAULT to `server`, acting on `node`; every fault applied is
// reported through `log`.  Call before server->Start().  Both must outlive
// the server's serving.
void AddFaultCommand(resp::RespServer* server, cluster::ClusterNode* node,
                     std::function<void(std::string_view)> log);

}  // namespace ephpm

#endif  // EPHPM_SAPI_FAULT_COMMAND_H_
