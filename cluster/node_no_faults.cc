// The shipped build's side of the node's fault hooks: there are none, and
// frames go straight to the TCP transport (node_faults.cc is the testing
// build's).

#include "node_impl.h"

namespace ephpm {
namespace cluster {

std::unique_ptr<Transport> ClusterNode::Impl::MakeFaults() { return nullptr; }

void ClusterNode::Impl::Unpause() {}

}  // namespace cluster
}  // namespace ephpm
