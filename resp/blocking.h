// The blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH): what the
// handlers in cmd_list.cc hand to the server, which suspends the connection
// (resp/server.cc) until the request is served or its timeout passes.
//
// The handler parses and checks the request, then leaves it in
// ClientState::blocked without replying.  The server tries it at once, after
// the clients already blocked (first come, first served), and else keeps it
// waiting: it is tried again, in arrival order with the other waiters, after
// every command of a RESP client that names one of its keys, and every few
// milliseconds for the writes that come from elsewhere (PHP, replication).
// Every attempt pops in the store under the shard lock, so no element is
// given to two clients.

#ifndef EPHPM_RESP_BLOCKING_H_
#define EPHPM_RESP_BLOCKING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/store.h"

namespace ephpm {
namespace resp {

struct BlockedPop {
  bool move = false;              // BLMOVE, BRPOPLPUSH; else BLPOP, BRPOP
  std::vector<std::string> keys;  // popped from, in order (the source of a move)
  std::string dst;                // a move's destination
  bool from_left = true;
  bool to_left = true;
  int64_t timeout_ms = 0;  // 0: forever
};

// One attempt.  True with the whole reply in *reply when it popped (or met
// an error the client must get); false when there was nothing to pop.
// `waiting`: the client is blocked already, so a key of another type is
// passed over (Redis only serves lists to a blocked client) instead of
// answered with WRONGTYPE; but a move whose source has an element and whose
// destination is of another type answers WRONGTYPE, as Redis does.
bool TryServe(Store* store, const BlockedPop& b, bool waiting, std::string* reply);

// What a blocked client gets when its timeout passes.
inline constexpr std::string_view kBlockTimedOut = "*-1\r\n";

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_BLOCKING_H_
