// SWIM's rules that need no node around them: which member record is news,
// and how far a change is gossiped.  The protocol itself (probes, ping-req,
// suspicion, joining) is ClusterNode::Impl's, in membership.cc.

#ifndef EPHPM_CLUSTER_MEMBERSHIP_H_
#define EPHPM_CLUSTER_MEMBERSHIP_H_

#include <cstddef>

#include "wire.h"

namespace ephpm {
namespace cluster {

// SWIM's precedence: whether `heard` (a record of the same member) replaces
// `known`.  True for a higher incarnation whatever the state, and at the same
// incarnation for a worse state: alive < suspect < dead.  A member refutes a
// suspicion by raising its incarnation.
bool IsNews(const MemberRecord& known, const MemberRecord& heard);

// How many probes carry a membership change, among `members` members:
// 3 x ceil(log2(members + 1)), so it reaches everyone with high probability.
int GossipSends(size_t members);

}  // namespace cluster
}  // namespace ephpm

#endif  // EPHPM_CLUSTER_MEMBERSHIP_H_
