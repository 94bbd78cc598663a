// SWIM's precedence of member records and the gossip's reach
// (cluster/membership.h), without a node around them.

#include <catch2/catch.hpp>

#include "membership.h"

using ephpm::cluster::GossipSends;
using ephpm::cluster::IsNews;
using ephpm::cluster::MemberRecord;
using ephpm::cluster::MemberState;

namespace {

MemberRecord Rec(MemberState state, uint64_t incarnation) {
  return MemberRecord{"n1", "127.0.0.1:1", incarnation, state};
}

}  // namespace

TEST_CASE("membership: a worse state at the same incarnation is news, a better one is not",
          "[cluster][membership]") {
  const auto alive = MemberState::kAlive;
  const auto suspect = MemberState::kSuspect;
  const auto dead = MemberState::kDead;
  CHECK(IsNews(Rec(alive, 5), Rec(suspect, 5)));
  CHECK(IsNews(Rec(alive, 5), Rec(dead, 5)));
  CHECK(IsNews(Rec(suspect, 5), Rec(dead, 5)));
  CHECK_FALSE(IsNews(Rec(suspect, 5), Rec(alive, 5)));  // refuting takes a higher incarnation
  CHECK_FALSE(IsNews(Rec(dead, 5), Rec(alive, 5)));
  CHECK_FALSE(IsNews(Rec(dead, 5), Rec(suspect, 5)));
  CHECK_FALSE(IsNews(Rec(alive, 5), Rec(alive, 5)));
  CHECK_FALSE(IsNews(Rec(suspect, 5), Rec(suspect, 5)));
  CHECK_FALSE(IsNews(Rec(dead, 5), Rec(dead, 5)));
}

TEST_CASE("membership: a higher incarnation is news in any state, a lower one never",
          "[cluster][membership]") {
  for (auto known : {MemberState::kAlive, MemberState::kSuspect, MemberState::kDead}) {
    for (auto heard : {MemberState::kAlive, MemberState::kSuspect, MemberState::kDead}) {
      CHECK(IsNews(Rec(known, 5), Rec(heard, 6)));
      CHECK_FALSE(IsNews(Rec(known, 5), Rec(heard, 4)));
    }
  }
}

TEST_CASE("membership: a change rides on 3 x ceil(log2(n + 1)) probes", "[cluster][membership]") {
  CHECK(GossipSends(1) == 3);
  CHECK(GossipSends(2) == 6);
  CHECK(GossipSends(3) == 6);
  CHECK(GossipSends(4) == 9);
  CHECK(GossipSends(7) == 9);
  CHECK(GossipSends(8) == 12);
}
