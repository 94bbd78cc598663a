// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, with Redis 7.0's
// replies.  The queue is kept in the connection's ClientState (the
// dispatcher queues); EXEC runs it inside one Store::Atomically over the
// shards of every key the queued commands and the WATCHed keys name (every
// shard when a queued command names none of its keys, such as KEYS or
// FLUSHDB), so that it is one step for every other client and for the PHP
// callers in the process.  WATCH uses the store's per-key change counters.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "command_table.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

// Ends the transaction state of a connection: the queue and its WATCHes.
void EndTransaction(Ctx& c) {
  c.client->in_multi = false;
  c.client->multi_dirty = false;
  c.client->queued.clear();
  c.dispatcher->Forget(c.client);
}

}  // namespace

void CmdMulti(Ctx& c) {
  if (c.client->in_multi) return c.w.Error("ERR MULTI calls can not be nested");
  c.client->in_multi = true;
  c.client->multi_dirty = false;
  c.client->queued.clear();
  Ok(c);
}

void CmdDiscard(Ctx& c) {
  if (!c.client->in_multi) return c.w.Error("ERR DISCARD without MULTI");
  EndTransaction(c);
  Ok(c);
}

void CmdWatch(Ctx& c) {
  if (c.client->in_multi) return c.w.Error("ERR WATCH inside MULTI is not allowed");
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& key = c.argv[i];
    bool already = false;
    for (const auto& w : c.client->watched) already = already || (w.key == key && w.db == c.client->db);
    if (already) continue;
    uint64_t touched = 0;
    if (Failed(c, c.store->Watch(key, &touched))) return;
    c.client->watched.push_back({key, touched, c.client->db});
  }
  Ok(c);
}

void CmdUnwatch(Ctx& c) {
  c.dispatcher->Forget(c.client);
  Ok(c);
}

void CmdExec(Ctx& c) {
  ClientState* client = c.client;
  if (!client->in_multi) return c.w.Error("ERR EXEC without MULTI");
  if (client->multi_dirty) {
    EndTransaction(c);
    return c.w.Error("EXECABORT Transaction discarded because of previous errors.");
  }
  // Past maxmemory a transaction that may grow the data is not run at all.
  if (c.store->OverMemoryLimit()) {
    for (const Args& q : client->queued) {
      const Command* qc = LookupRequest(q);
      if (qc != nullptr && (qc->flags & kDenyOom)) {
        EndTransaction(c);
        return c.w.Error("EXECABORT Transaction discarded because of: " + std::string(kOom));
      }
    }
  }
  const std::vector<Args> queued = std::move(client->queued);
  client->queued.clear();

  // The section's keys, each in its database: what every queued command
  // names, and the WATCHed keys (their check must be part of the same
  // step).  A command that names no key locks its whole database; a SELECT
  // inside moves the later commands to its database, MOVE names the key in
  // both, FLUSHALL and CONFIG SET lock every database.
  std::vector<std::pair<uint32_t, std::string_view>> keys;
  std::vector<uint32_t> whole;
  const uint64_t databases = c.store->options().databases;
  uint32_t db = client->db;
  auto db_arg = [&](const std::string& arg, uint32_t* out) {
    int64_t n = 0;
    if (!ParseLL(arg, &n) || n < 0 || static_cast<uint64_t>(n) >= databases) return false;
    *out = static_cast<uint32_t>(n);
    return true;
  };
  for (const Args& q : queued) {
    const Command* cmd = LookupRequest(q);
    if (cmd == nullptr) continue;  // refused while queuing: never here
    const std::string_view name = cmd->name;
    if (name == "select") {
      db_arg(q[1], &db);
      continue;
    }
    // CONFIG SET maxmemory takes every shard's lock in turn
    // (Store::SetMemoryLimit): inside the section only if it holds them all.
    if (name == "flushall" || name == "config|set") {
      for (uint32_t d = 0; d < databases; ++d) whole.push_back(d);
      continue;
    }
    uint32_t a = 0, b = 0;
    if (name == "swapdb") {  // both databases, when the indexes are valid
      if (db_arg(q[1], &a) && db_arg(q[2], &b)) whole.insert(whole.end(), {a, b});
      continue;
    }
    if (name == "copy") {  // COPY's DB option names the destination's database
      for (size_t j = 3; j + 1 < q.size(); ++j) {
        if (IEq(q[j], "DB") && db_arg(q[j + 1], &b) && q[2].size() <= kMaxKeySize) {
          keys.emplace_back(b, q[2]);
        }
      }
    }
    if (cmd->first_key <= 0) {
      whole.push_back(db);
      continue;
    }
    // SORT's BY and GET may name any key.
    if ((name == "sort" || name == "sort_ro") && SortNamesKeyspace(q, name == "sort_ro")) {
      whole.push_back(db);
    }
    uint32_t to = 0;
    if (name == "move" && db_arg(q[2], &to) && q[1].size() <= kMaxKeySize) keys.emplace_back(to, q[1]);
    // Every key it names: ZUNIONSTORE's sources after numkeys and SORT's
    // STORE key too.
    std::vector<size_t> positions;
    KeyPositions(*cmd, q, &positions);
    for (size_t i : positions) {
      // An over-long key is refused by its command without touching the
      // store: it needs no lock.
      const std::string& k = q[i];
      if (k.size() <= kMaxKeySize) keys.emplace_back(db, k);
    }
  }
  for (const auto& w : client->watched) keys.emplace_back(w.db, w.key);
  std::sort(whole.begin(), whole.end());
  whole.erase(std::unique(whole.begin(), whole.end()), whole.end());

  // In a cluster (database 0 only) the transaction runs where its keys are
  // decided.
  if (Replicator* r = c.store->options().replicator; r != nullptr && !keys.empty()) {
    std::vector<std::string_view> names;
    for (const auto& [d, k] : keys) names.push_back(k);
    if (!r->SameOwner(names)) {
      EndTransaction(c);
      return c.w.Error(kCrossSlot);
    }
    const std::string owner = r->RemoteOwner(names.front());
    if (!owner.empty()) {
      EndTransaction(c);
      return c.w.Error("ERR a transaction runs on the owner of its keys: send it to " + owner);
    }
  }

  bool aborted = false;
  bool wrote = false;
  const Status st = c.store->AtomicallyIn(keys, whole, [&] {
    for (const auto& w : client->watched) {
      bool changed = false;
      const Store::DatabaseScope database(*c.store, w.db);
      if (c.store->WatchedChanged(w.key, w.touched, &changed) != Status::kOk || changed) {
        aborted = true;
        return;
      }
    }
    c.dispatcher->Forget(client);  // as Redis: the queue runs unwatched
    c.w.ArrayHeader(queued.size());
    struct InExec {
      ClientState* client;
      ~InExec() { client->in_exec = false; }
    } in_exec{client};
    client->in_exec = true;
    for (const Args& q : queued) {
      Args argv = q;
      if (c.dispatcher->Execute(client, argv, c.w.out())) wrote = true;
    }
  });
  EndTransaction(c);
  client->exec_wrote = wrote;
  if (st != Status::kOk) return c.w.Error("ERR the transaction could not run: " + std::string(StatusName(st)));
  if (aborted) c.w.NullArray();
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
