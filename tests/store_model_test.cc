// Model-based random testing of the store.
//
// RapidCheck generates long sequences of operations on a few keys (so that
// they collide) while a manual clock moves forward.  After every operation
// the store's answer is compared with a reference written for this test, and
// then so is the store's whole state: every live entry's type, value, TTL,
// pin, compression and accounted size (read with ForEachForSync and Inspect,
// which touch nothing), the memory total (expired entries not yet removed
// included), the live and pinned counts and the expired and evicted
// counters.  The reference predicts the memory limit exactly, from the
// documented formula (a fixed overhead per entry + the key's and the stored
// value's buffers, plus an index item and a key copy with a TTL; per hash
// field an overhead + the field's and the value's buffers) with the
// overheads measured once on a probe store.
//
// The operations: get, set (with and without a TTL), set_nx, del,
// del_if_eq, set_if_eq, del_if_guard_eq, expire_if_guard_eq, incr_by, expire, persist, rename
// and renamenx, hset, hget, hdel, hincrby, pttl, dbsize, getex, getdel, SET
// with its options, mset and msetnx, append, a sweep of expired entries, and
// the clock moving on.  Four configurations: no limit; compression on with a
// small threshold; a small limit under noeviction (every refusal predicted);
// the same under allkeys-lru.
//
// The reference lives beside the store in the harness, not in RapidCheck's
// model, because under allkeys-lru the store chooses what to evict: after a
// write that had to evict, the reference looks for the sets of live unpinned
// entries and of expired entries (as many as the counters say) whose removal
// makes the store's answer and state match, and fails when no such set
// exists: a lock that disappeared, a key that came back, a value that changed
// without a write.  Expired entries cannot be seen, so more than one state
// may explain the store; the harness keeps all of them until later
// operations tell them apart.
//
// A failure is shrunk to a short sequence of operations, printed with the
// seed; RC_PARAMS="seed=N" replays the run.  The number of cases and their
// length are fixed here (RC_PARAMS's max_success/max_size override them when
// set to other than RapidCheck's defaults).
//
// The operations and configurations are in store_model_ops.h, the reference
// in store_model_reference.h; this file holds the harness and the cases.

#include <zstd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <rapidcheck.h>
#include <rapidcheck/state.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ephpm/store.h"
#include "store_model_reference.h"
#include "test_util.h"

using ephpm::DelIfEqOutcome;
using ephpm::DelIfGuardEqOutcome;
using ephpm::ManualClock;
using ephpm::Mutation;
using ephpm::SetIfEqOutcome;
using ephpm::SetNxOutcome;
using ephpm::Status;
using ephpm::Store;

using namespace store_model;  // NOLINT: the suite's own helpers

namespace {

// --- what the store holds ----------------------------------------------------

struct Seen {
  MEntry entry;
  uint64_t mem = 0;
};

bool DecodeFields(std::string_view in, std::map<std::string, std::string>* out) {
  auto len = [&in](uint32_t* n) {
    if (in.size() < 4) return false;
    *n = 0;
    for (int i = 0; i < 4; ++i) *n |= uint32_t{static_cast<unsigned char>(in[i])} << (8 * i);
    in.remove_prefix(4);
    return in.size() >= *n;
  };
  while (!in.empty()) {
    uint32_t fl = 0, vl = 0;
    if (!len(&fl)) return false;
    std::string f(in.substr(0, fl));
    in.remove_prefix(fl);
    if (!len(&vl)) return false;
    (*out)[f] = std::string(in.substr(0, vl));
    in.remove_prefix(vl);
  }
  return true;
}

// Every live entry, read without touching anything (no LRU time, no counter,
// no removal).  Sets *err on an inconsistency between the two views.
std::map<std::string, Seen> Observe(const Store& s, std::string* err) {
  struct Raw {
    std::string key, value;
    Mutation m;
  };
  std::vector<Raw> raw;
  s.ForEachForSync([&](const Mutation& m) {
    raw.push_back(Raw{std::string(m.key), std::string(m.value), m});
  });
  std::map<std::string, Seen> out;
  for (const Raw& r : raw) {
    if (r.m.kind != Mutation::Kind::kSet) {
      *err = "ForEachForSync gave a mutation that is not a set";
      continue;
    }
    Seen seen;
    MEntry& e = seen.entry;
    e.hash = r.m.type == ephpm::ValueType::kHash;
    e.exp = r.m.expires_at_ms;
    e.pinned = r.m.pinned;
    e.compressed = r.m.compressed;
    if (e.hash) {
      if (!DecodeFields(r.value, &e.fields)) *err = "undecodable hash at " + Show(r.key);
    } else if (e.compressed) {
      e.str.resize(r.m.original_size);
      const size_t n = ZSTD_decompress(e.str.data(), e.str.size(), r.value.data(), r.value.size());
      if (ZSTD_isError(n) || n != e.str.size()) *err = "undecodable frame at " + Show(r.key);
      e.stored = r.value.size();
    } else {
      e.str = r.value;
      e.stored = r.value.size();
    }
    ephpm::EntryInfo info;
    if (s.Inspect(r.key, &info) != Status::kOk) {
      *err = "Inspect does not find " + Show(r.key) + ", which ForEachForSync gave";
    } else if (info.pinned != e.pinned || info.expires_at_ms != e.exp ||
               info.compressed != e.compressed ||
               (info.type == ephpm::ValueType::kHash) != e.hash) {
      *err = "Inspect and ForEachForSync disagree about " + Show(r.key);
    }
    seen.mem = info.mem_size;
    out[r.key] = std::move(seen);
  }
  return out;
}

// "" when the store's state is the reference's, else the first difference.
std::string Compare(const Reference& ref, const std::map<std::string, Seen>& seen,
                    const ephpm::StoreStats& st) {
  std::ostringstream os;
  uint64_t live = 0, with_ttl = 0, pinned = 0, pinned_bytes = 0;
  uint64_t compressed = 0, compressed_orig = 0, compressed_stored = 0;
  for (const auto& [k, e] : ref.entries()) {
    if (e.compressed) {
      ++compressed;
      compressed_orig += e.str.size();
      compressed_stored += e.stored;
    }
    if (!ref.Live(e)) continue;
    ++live;
    if (e.exp != 0) ++with_ttl;
    if (e.pinned) {
      ++pinned;
      pinned_bytes += ref.Mem(k, e);
    }
    auto it = seen.find(k);
    if (it == seen.end()) {
      os << Show(k) << " is missing from the store; the reference has " << DescribeEntry(e)
         << (e.pinned ? " (a live lock!)" : "");
      return os.str();
    }
    if (!SameEntry(e, it->second.entry)) {
      os << Show(k) << " is " << DescribeEntry(it->second.entry) << "; the reference has "
         << DescribeEntry(e);
      return os.str();
    }
    if (it->second.mem != ref.Mem(k, e)) {
      os << Show(k) << " is accounted " << it->second.mem << " bytes; the formula gives "
         << ref.Mem(k, e);
      return os.str();
    }
  }
  for (const auto& [k, s] : seen) {
    auto it = ref.entries().find(k);
    if (it == ref.entries().end() || !ref.Live(it->second)) {
      os << Show(k) << " is in the store (" << DescribeEntry(s.entry)
         << ") but absent from the reference";
      return os.str();
    }
  }
  auto field = [&os](const char* name, uint64_t store, uint64_t want) {
    if (store != want) os << name << " is " << store << ", the reference says " << want << "; ";
  };
  field("memory_used", st.memory_used, ref.Total());
  field("keys", st.keys, live);
  field("keys_with_ttl", st.keys_with_ttl, with_ttl);
  field("pinned_keys", st.pinned_keys, pinned);
  field("pinned_bytes", st.pinned_bytes, pinned_bytes);
  field("compressed_values", st.compressed_values, compressed);
  field("compressed_original_bytes", st.compressed_original_bytes, compressed_orig);
  field("compressed_stored_bytes", st.compressed_stored_bytes, compressed_stored);
  if (st.memory_limit != 0 && st.memory_used > st.memory_limit && !ref.forced_over()) {
    os << "memory_used " << st.memory_used << " is over the limit " << st.memory_limit
       << " and no forced operation put it there; ";
  }
  return os.str();
}

std::string DescribeState(const Reference& ref) {
  std::ostringstream os;
  os << "now=t+" << ref.now() - kStart << " total=" << ref.Total() << " {";
  for (const auto& [k, e] : ref.entries()) {
    os << " " << Show(k) << ": " << DescribeEntry(e) << (ref.Live(e) ? "" : " (expired)") << ";";
  }
  os << " }";
  return os.str();
}

// What tells two reference states apart.
std::string StateKey(const Reference& ref) {
  return DescribeState(ref) + " reaped=" + std::to_string(ref.reaped()) +
         (ref.forced_over() ? " forced" : "");
}

// --- the store's side ----------------------------------------------------------

std::string StatusText(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kNotFound: return "not found";
    case Status::kOutOfMemory: return "out of memory";
    case Status::kWrongType: return "wrong type";
    case Status::kNotInteger: return "not an integer";
    case Status::kOverflow: return "overflow";
    default: return std::string("status ") + ephpm::StatusName(s);
  }
}

std::string Run(Store& s, ManualClock& clock, const Op& op) {
  const auto& keys = KeyPool();
  const std::string& k = keys[op.key];
  const std::string& k2 = keys[op.key2];
  switch (op.kind) {
    case Kind::kAdvance:
      clock.Advance(AdvancePool()[op.delta]);
      return "ok";
    case Kind::kGet: {
      std::string v;
      const Status st = s.Get(k, &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kSet: return StatusText(s.Set(k, ValuePool()[op.value], TtlPool()[op.ttl]));
    case Kind::kSetNx:
      switch (s.SetNx(k, ValuePool()[op.value], TtlPool()[op.ttl])) {
        case SetNxOutcome::kInserted: return "inserted";
        case SetNxOutcome::kExists: return "exists";
        case SetNxOutcome::kOutOfMemory: return "out of memory";
        default: return "unexpected set_nx outcome";
      }
    case Kind::kDel: {
      int64_t n = -1;
      const Status st = s.Del(k, &n);
      return st == Status::kOk ? "removed " + std::to_string(n) : StatusText(st);
    }
    case Kind::kDelIfEq:
      switch (s.DelIfEq(k, ValuePool()[op.token])) {
        case DelIfEqOutcome::kDeleted: return "deleted";
        case DelIfEqOutcome::kNotMatched: return "not matched";
        case DelIfEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected del_if_eq outcome";
      }
    case Kind::kSetIfEq:
      switch (s.SetIfEq(k2, ValuePool()[op.token], k, ValuePool()[op.value], TtlPool()[op.ttl])) {
        case SetIfEqOutcome::kWritten: return "written";
        case SetIfEqOutcome::kNotMatched: return "not matched";
        case SetIfEqOutcome::kWrongType: return "wrong type";
        case SetIfEqOutcome::kOutOfMemory: return "out of memory";
        default: return "unexpected set_if_eq outcome";
      }
    case Kind::kDelIfGuardEq:
      switch (s.DelIfGuardEq(k2, ValuePool()[op.token], k)) {
        case DelIfGuardEqOutcome::kDeleted: return "deleted";
        case DelIfGuardEqOutcome::kAbsent: return "absent";
        case DelIfGuardEqOutcome::kNotMatched: return "not matched";
        case DelIfGuardEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected del_if_guard_eq outcome";
      }
    case Kind::kExpireIfGuardEq:
      switch (s.ExpireIfGuardEq(k2, ValuePool()[op.token], k, TtlPool()[op.ttl])) {
        case ephpm::ExpireIfGuardEqOutcome::kApplied: return "applied";
        case ephpm::ExpireIfGuardEqOutcome::kAbsent: return "absent";
        case ephpm::ExpireIfGuardEqOutcome::kNotMatched: return "not matched";
        case ephpm::ExpireIfGuardEqOutcome::kWrongType: return "wrong type";
        default: return "unexpected expire_if_guard_eq outcome";
      }
    case Kind::kIncrBy: {
      int64_t n = 0;
      const Status st = s.IncrBy(k, DeltaPool()[op.delta], &n);
      return st == Status::kOk ? "ok " + std::to_string(n) : StatusText(st);
    }
    case Kind::kExpire: {
      bool applied = false;
      const Status st = s.Expire(k, ExpirePool()[op.ttl], &applied);
      return st == Status::kOk ? std::string("applied ") + (applied ? "1" : "0") : StatusText(st);
    }
    case Kind::kPersist: {
      bool applied = false;
      const Status st = s.Persist(k, &applied);
      return st == Status::kOk ? std::string("applied ") + (applied ? "1" : "0") : StatusText(st);
    }
    case Kind::kRename: {
      bool renamed = false;
      const Status st = s.Rename(k, k2, op.nx, &renamed);
      return st == Status::kOk ? std::string("renamed ") + (renamed ? "1" : "0") : StatusText(st);
    }
    case Kind::kHSet: {
      int64_t added = -1;
      const Status st =
          s.HSet(k, {{FieldPool()[op.field], FieldValuePool()[op.value]}}, false, &added);
      return st == Status::kOk ? "added " + std::to_string(added) : StatusText(st);
    }
    case Kind::kHGet: {
      std::string v;
      const Status st = s.HGet(k, FieldPool()[op.field], &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kHDel: {
      int64_t removed = -1;
      const Status st = s.HDel(k, {FieldPool()[op.field]}, &removed);
      return st == Status::kOk ? "removed " + std::to_string(removed) : StatusText(st);
    }
    case Kind::kHIncrBy: {
      int64_t n = 0;
      const Status st = s.HIncrBy(k, FieldPool()[op.field], DeltaPool()[op.delta], &n);
      return st == Status::kOk ? "ok " + std::to_string(n) : StatusText(st);
    }
    case Kind::kPttl: {
      int64_t ttl = 0;
      const Status st = s.Pttl(k, &ttl);
      return st == Status::kOk ? std::to_string(ttl) : StatusText(st);
    }
    case Kind::kDbSize: return std::to_string(s.DbSize());
    case Kind::kSweep: return "removed " + std::to_string(s.SweepExpired(1000));
    case Kind::kGetEx: {
      using E = ephpm::SetOptions::Expiry;
      std::string v;
      Status st = Status::kOk;
      switch (op.mode) {
        case kExKeep: st = s.GetEx(k, E::kKeep, 0, &v); break;
        case kExPersist: st = s.GetEx(k, E::kNone, 0, &v); break;
        case kExAt: st = s.GetEx(k, E::kAt, s.NowMs() + TtlPool()[op.ttl], &v); break;
        default: st = s.GetEx(k, E::kAt, s.NowMs() - 1, &v); break;
      }
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kGetDel: {
      std::string v;
      const Status st = s.GetDel(k, &v);
      return st == Status::kOk ? "ok " + Show(v) : StatusText(st);
    }
    case Kind::kSetWith: {
      ephpm::SetOptions o;
      o.when = static_cast<ephpm::SetOptions::When>(op.mode % 3);
      o.expiry = static_cast<ephpm::SetOptions::Expiry>(op.mode / 3);
      if (o.expiry == ephpm::SetOptions::Expiry::kAt) o.expires_at_ms = s.NowMs() + TtlPool()[op.ttl];
      o.get_old = op.get_old;
      ephpm::SetResult r;
      const Status st = s.SetWith(k, ValuePool()[op.value], o, &r);
      if (st != Status::kOk) return StatusText(st);
      return std::string("written ") + (r.written ? "1" : "0") + " old " +
             (r.had_old ? Show(r.old) : "-");
    }
    case Kind::kMSet: {
      bool written = false;
      const Status st =
          s.MSet({{k, ValuePool()[op.value]}, {k2, ValuePool()[op.value2]}}, op.nx, &written);
      return st == Status::kOk ? std::string("written ") + (written ? "1" : "0") : StatusText(st);
    }
    case Kind::kAppend: {
      int64_t length = 0;
      const Status st = s.Append(k, ValuePool()[op.value], &length);
      return st == Status::kOk ? "length " + std::to_string(length) : StatusText(st);
    }
  }
  return "?";
}

// All subsets of `from` with exactly n members.
void Subsets(const std::vector<std::string>& from, size_t n, size_t start,
             std::vector<std::string>* cur, std::vector<std::vector<std::string>>* out) {
  if (cur->size() == n) {
    out->push_back(*cur);
    return;
  }
  for (size_t i = start; i < from.size(); ++i) {
    cur->push_back(from[i]);
    Subsets(from, n, i + 1, cur, out);
    cur->pop_back();
  }
}

std::vector<std::vector<std::string>> Choose(const std::vector<std::string>& from, uint64_t n) {
  std::vector<std::vector<std::string>> out;
  if (n > from.size()) return out;
  std::vector<std::string> cur;
  Subsets(from, static_cast<size_t>(n), 0, &cur, &out);
  return out;
}

// What the runs went through, so that a run that tested little shows.
struct Tally {
  uint64_t operations = 0, refused = 0, evicting = 0, expired = 0, ambiguous = 0, pinned = 0,
           compressed = 0;
};
Tally tally;

// The store and its reference, side by side.  Eviction may remove expired
// entries, which no read can see, so after an evicting write several
// reference states can explain the store equally well (two expired entries
// of the same size, say).  The harness keeps every state that explains
// everything seen so far, and fails when none is left.  They differ only in
// which expired entries are still held, so there are few.
struct Harness {
  explicit Harness(const Config& c) : config(c) {
    auto o = ephpm_test::NoSweeper();  // expired entries go only when the operations say
    o.shards = c.shards;
    o.compression = c.compression ? ephpm::Compression::kZstd : ephpm::Compression::kOff;
    o.compression_threshold = kThreshold;
    o.compression_level = kLevel;
    o.memory_limit = LimitFor(c);
    o.eviction = c.lru ? ephpm::EvictionPolicy::kAllKeysLru : ephpm::EvictionPolicy::kNoEviction;
    o.eviction_samples = 3;
    store = ephpm_test::MakeStore(o, &clock);
    refs.emplace_back(c, clock.NowMs());
  }

  void Step(const Op& op) {
    ++tally.operations;
    const ephpm::StoreStats before = store->Stats();
    const std::string answer = Run(*store, clock, op);
    const ephpm::StoreStats after = store->Stats();
    std::string err;
    const auto seen = Observe(*store, &err);
    if (!err.empty()) RC_FAIL("after " + Describe(op) + ": " + err);
    const uint64_t evicted = after.evicted - before.evicted;
    const uint64_t expired = after.expired - before.expired;

    std::map<std::string, Reference> next;  // by StateKey: no duplicates
    std::string why;                        // what the first state could not explain
    bool evicting = false;
    for (const Reference& ref : refs) {
      Reference attempt = ref;
      attempt.Begin();
      const std::optional<std::string> want = attempt.Apply(op);
      if (want) {  // decided without eviction
        std::string diff;
        if (answer != *want) diff = "the store answered '" + answer + "', the reference '" + *want + "'";
        if (diff.empty()) diff = Compare(attempt, seen, after);
        if (diff.empty() && evicted != 0) diff = std::to_string(evicted) + " entries evicted";
        if (diff.empty() && expired != attempt.reaped() - ref.reaped()) {
          diff = std::to_string(expired) + " expired entries removed, the reference removed " +
                 std::to_string(attempt.reaped() - ref.reaped());
        }
        if (diff.empty()) {
          next.emplace(StateKey(attempt), std::move(attempt));
        } else if (why.empty()) {
          why = diff + "\n  reference before: " + DescribeState(ref);
        }
        continue;
      }
      // allkeys-lru had to evict: some live unpinned entries and some expired
      // ones (as many as the counters say) went before the write was retried.
      evicting = true;
      const uint64_t reaped_first = attempt.reaped() - ref.reaped();
      bool explained = false;
      if (expired >= reaped_first) {
        for (const auto& gone_expired : Choose(attempt.ExpiredKeys(), expired - reaped_first)) {
          for (const auto& gone_live : Choose(attempt.EvictableKeys(), evicted)) {
            Reference c = attempt;
            for (const auto& k : gone_expired) c.Drop(k, true);
            for (const auto& k : gone_live) c.Drop(k, false);
            const uint64_t reaped_before = c.reaped();
            const std::optional<std::string> got = c.Apply(op);
            if (!got || *got != answer || c.reaped() != reaped_before) continue;
            if (!Compare(c, seen, after).empty()) continue;
            explained = true;
            next.emplace(StateKey(c), std::move(c));
          }
        }
      }
      if (!explained && why.empty()) {
        std::ostringstream os;
        os << "no eviction explains the store's answer '" << answer << "' and state (" << evicted
           << " evicted, " << expired << " expired entries removed)";
        for (const auto& [k, e] : attempt.entries()) {
          if (attempt.Live(e) && e.pinned && seen.count(k) == 0) {
            os << "; the live lock " << Show(k) << " disappeared";
          }
        }
        os << "\n  reference before: " << DescribeState(ref);
        why = os.str();
      }
    }
    if (next.empty()) RC_FAIL(Describe(op) + ": " + why);

    refs.clear();
    for (auto& [key, r] : next) refs.push_back(std::move(r));
    const Reference& r = refs.front();
    if (answer == "out of memory") ++tally.refused;
    if (evicting) ++tally.evicting;
    if (expired != 0) ++tally.expired;
    if (refs.size() > 1) ++tally.ambiguous;
    for (const auto& [k, e] : r.entries()) {
      if (e.pinned && r.Live(e)) ++tally.pinned;
      if (e.compressed) ++tally.compressed;
    }
  }

  Config config;
  ManualClock clock{kStart};
  std::unique_ptr<Store> store;
  std::vector<Reference> refs;  // every state that explains what was seen
};

struct NoModel {};

struct OpCommand final : rc::state::Command<NoModel, Harness> {
  explicit OpCommand(Op o) : op(o) {}
  void run(const NoModel&, Harness& h) const override { h.Step(op); }
  void show(std::ostream& os) const override { os << Describe(op); }
  Op op;
};

using CommandPtr = std::shared_ptr<const rc::state::Command<NoModel, Harness>>;

rc::detail::TestParams Params(int cases, int length) {
  rc::detail::TestParams p = rc::detail::configuration().testParams;
  const rc::detail::TestParams defaults;
  if (p.maxSuccess == defaults.maxSuccess) p.maxSuccess = cases;
  if (p.maxSize == defaults.maxSize) p.maxSize = length;
  return p;
}

void CheckModel(const Config& c) {
  const rc::detail::TestParams params = Params(100, 1000);
  rc::detail::TestMetadata meta;
  meta.id = std::string("store_model/") + c.name;
  meta.description = meta.id;
  std::cout << meta.id << ": seed=" << params.seed << ", " << params.maxSuccess
            << " sequences of up to " << params.maxSize << " operations (replay with RC_PARAMS=\"seed="
            << params.seed << "\")" << std::endl;
  tally = Tally{};
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [&c] {
        Harness h(c);
        rc::state::check(NoModel{}, h, [](const NoModel&) {
          return rc::gen::map(GenOp(), [](Op o) -> CommandPtr {
            return std::make_shared<const OpCommand>(o);
          });
        });
      },
      meta, params);
  std::ostringstream message;
  rc::detail::printResultMessage(result, message);
  const Tally& t = tally;
  std::cout << meta.id << ": " << t.operations << " operations checked; " << t.refused
            << " refused for memory, " << t.evicting << " evicted to make room, " << t.expired
            << " removed expired entries, " << t.ambiguous
            << " left more than one possible state; entry-steps pinned " << t.pinned
            << ", compressed " << t.compressed << std::endl;
  if (!result.is<rc::detail::SuccessResult>()) {
    std::cout << message.str() << std::endl;
    FAIL(meta.id << " failed (seed " << params.seed
                 << "); the shrunk sequence and what went wrong are printed above");
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("model: no limit, no compression, four shards", "[store][model]") {
  CheckModel(Config{"plain", 4, false, false, false});
}

TEST_CASE("model: compression on (threshold 16), one shard", "[store][model]") {
  CheckModel(Config{"compressed", 1, true, false, false});
}

TEST_CASE("model: a small memory limit under noeviction predicts every refusal",
          "[store][model][memory]") {
  CheckModel(Config{"noeviction", 2, true, true, false});
}

TEST_CASE("model: a small memory limit under allkeys-lru never loses a lock",
          "[store][model][memory][lru]") {
  CheckModel(Config{"allkeys-lru", 2, true, true, true});
}
