// Private to core/: the typed cluster state of the C ABI, built from
// ClusterInfo (kv_ops.cc uses it; tests check the layout).

#ifndef EPHPM_CORE_KV_OPS_CLUSTER_H_
#define EPHPM_CORE_KV_OPS_CLUSTER_H_

#include "ephpm/kv_ops.h"
#include "ephpm/replicator.h"

namespace ephpm {

// `info` in one malloc block (free(3) it once), or nullptr when the block
// cannot be allocated.
ephpm_kv_cluster_state* PackClusterState(const ClusterInfo& info);

}  // namespace ephpm

#endif  // EPHPM_CORE_KV_OPS_CLUSTER_H_
