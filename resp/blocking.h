// The blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH; BZPOPMIN,
// BZPOPMAX, BZMPOP): what the handlers in cmd_list.cc and cmd_zset.cc hand
// to the server, which suspends the connection (resp/server.cc) until the
// request is served or its timeout passes.
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
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ephpm/store.h"

namespace ephpm {
namespace resp {

struct BlockedPop {
  bool move = false;  // BLMOVE, BRPOPLPUSH; else BLPOP, BRPOP
  // BZPOPMIN, BZPOPMAX, BZMPOP: pops the lowest (highest with zset_max)
  // members of the first sorted set that has any, replied [key, member,
  // score], or with `multi` (BZMPOP) [key, [[member, score] ...]].  Served
  // by TryServeZSet (cmd_zset.cc).
  bool zset = false;
  bool zset_max = false;
  // BLMPOP, BZMPOP: up to `count` elements, replied [key, [elements]]
  // (lists) or as above (sorted sets).
  bool multi = false;
  int64_t count = 1;
  std::vector<std::string> keys;  // popped from, in order (the source of a move)
  std::string dst;                // a move's destination
  bool from_left = true;
  bool to_left = true;
  int64_t timeout_ms = 0;  // 0: forever
  // The client's database (SELECT) when it blocked: the server serves the
  // request in it (cmd::Block sets it).
  uint32_t db = 0;
};

// One attempt, in the database the caller's Store::DatabaseScope addresses
// (the server opens one for b.db).  True with the whole reply in *reply when it popped (or met
// an error the client must get); false when there was nothing to pop.
// `waiting`: the client is blocked already, so a key of another type is
// passed over (Redis only serves lists to a blocked client) instead of
// answered with WRONGTYPE; but a move whose source has an element and whose
// destination is of another type answers WRONGTYPE, as Redis does.
bool TryServe(Store* store, const BlockedPop& b, bool waiting, std::string* reply);
bool TryServeZSet(Store* store, const BlockedPop& b, bool waiting, std::string* reply);

namespace cmd {
struct Ctx;
// A blocking command's timeout in seconds (a float), as Redis 7.0 reads
// it; false after replying the error.
bool ParseTimeout(Ctx& c, const std::string& arg, int64_t* timeout_ms);
// Hands `b` to the server (ClientState::blocked), or inside EXEC makes the
// one attempt and replies (a null array when there was nothing to pop).
void Block(Ctx& c, std::shared_ptr<BlockedPop> b);
// The arguments LMPOP, BLMPOP, ZMPOP and BZMPOP share, from numkeys at
// argv[numkeys_at]: the keys, then `low` or `high` (LEFT/RIGHT, MIN/MAX:
// *high says which), then COUNT n (*count, 1 without), as Redis 7.0 reads
// them.  False after replying the error.
bool ParseMPop(Ctx& c, size_t numkeys_at, std::string_view low, std::string_view high,
               std::vector<std::string>* keys, bool* is_high, int64_t* count);
}  // namespace cmd

// What a blocked client gets when its timeout passes (or CLIENT UNBLOCK
// .. TIMEOUT ends its wait), and for CLIENT UNBLOCK .. ERROR.
inline constexpr std::string_view kBlockTimedOut = "*-1\r\n";
inline constexpr std::string_view kUnblockedError =
    "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n";

}  // namespace resp
}  // namespace ephpm

#endif  // EPHPM_RESP_BLOCKING_H_
