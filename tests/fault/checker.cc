#include "checker.h"

#include <algorithm>
#include <map>

namespace ephpm_fault {
namespace {

int64_t TtlEndUs(const LockCycle& c, int64_t margin_us) {
  return c.sent_us + c.ttl_ms * 1000 - margin_us;
}

// Where a granted cycle's hold ends: at its release, or by its TTL.
int64_t HoldEndUs(const LockCycle& c, int64_t margin_us) {
  const int64_t ttl_end = TtlEndUs(c, margin_us);
  return c.release == Release::kNone ? ttl_end : std::min(c.release_sent_us, ttl_end);
}

}  // namespace

std::vector<Hold> HoldsOf(const std::vector<LockCycle>& cycles, int64_t margin_us) {
  std::vector<Hold> out;
  for (const LockCycle& c : cycles) {
    if (c.acquire != Acquire::kGranted) continue;
    const int64_t end = HoldEndUs(c, margin_us);
    if (end > c.replied_us) out.push_back(Hold{&c, c.replied_us, end});
  }
  return out;
}

std::vector<Overlap> FindOverlaps(const std::vector<Hold>& holds) {
  std::map<std::string, std::vector<Hold>> by_key;
  for (const Hold& h : holds) by_key[h.cycle->key].push_back(h);
  std::vector<Overlap> out;
  for (auto& [key, hs] : by_key) {
    std::sort(hs.begin(), hs.end(), [](const Hold& x, const Hold& y) {
      return x.start_us != y.start_us ? x.start_us < y.start_us : x.end_us < y.end_us;
    });
    // Sweep by start: every hold still open when another starts overlaps it.
    std::vector<Hold> open;
    for (const Hold& h : hs) {
      open.erase(std::remove_if(open.begin(), open.end(),
                                [&](const Hold& o) { return o.end_us <= h.start_us; }),
                 open.end());
      for (const Hold& o : open) {
        out.push_back(Overlap{o, h, h.start_us, std::min(o.end_us, h.end_us)});
      }
      open.push_back(h);
    }
  }
  return out;
}

DoubleHolderWindow WindowOf(const std::vector<Overlap>& overlaps) {
  DoubleHolderWindow w;
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> by_key;
  for (const Overlap& o : overlaps) by_key[o.a.cycle->key].emplace_back(o.from_us, o.to_us);
  bool any = false;
  for (auto& entry : by_key) {
    // Not a structured binding: a lambda may not capture one in C++17.
    const std::string& key = entry.first;
    auto& spans = entry.second;
    std::sort(spans.begin(), spans.end());
    auto flush = [&](int64_t from, int64_t to) {
      w.total_us += to - from;
      if (to - from > w.longest_us) {
        w.longest_us = to - from;
        w.longest_key = key;
      }
      if (!any || from < w.first_us) w.first_us = from;
      if (!any || to > w.last_us) w.last_us = to;
      any = true;
    };
    int64_t from = spans[0].first, to = spans[0].second;
    for (size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].first <= to) {
        to = std::max(to, spans[i].second);
      } else {
        flush(from, to);
        from = spans[i].first;
        to = spans[i].second;
      }
    }
    flush(from, to);
  }
  return w;
}

std::vector<const LockCycle*> FindVanished(const std::vector<LockCycle>& cycles,
                                           int64_t margin_us) {
  std::vector<const LockCycle*> out;
  for (const LockCycle& c : cycles) {
    if (c.acquire == Acquire::kGranted && c.release == Release::kNotHeld &&
        c.release_replied_us < TtlEndUs(c, margin_us)) {
      out.push_back(&c);
    }
  }
  return out;
}

LockTally Tally(const std::vector<LockCycle>& cycles, int64_t margin_us) {
  LockTally t;
  for (const LockCycle& c : cycles) {
    ++t.cycles;
    switch (c.acquire) {
      case Acquire::kGranted: ++t.granted; break;
      case Acquire::kRefused: ++t.refused; break;
      case Acquire::kUnknown: ++t.unknown; break;
      case Acquire::kUnexpected: ++t.unexpected; break;
    }
    if (c.acquire != Acquire::kGranted) continue;
    if (HoldEndUs(c, margin_us) > c.replied_us) {
      ++t.holds;
    } else {
      ++t.empty_holds;
    }
    if (c.release == Release::kNone || c.release_sent_us >= TtlEndUs(c, margin_us)) {
      ++t.held_past_ttl;
    }
    switch (c.release) {
      case Release::kReleased: ++t.released; break;
      case Release::kNotHeld: ++t.not_held; break;
      case Release::kUnknown: ++t.release_unknown; break;
      case Release::kUnexpected: ++t.release_unexpected; break;
      case Release::kNone: break;
    }
  }
  return t;
}

CounterVerdict JudgeCounter(const CounterHistory& h, const Observed& observed) {
  CounterVerdict v;
  v.acked = h.acked;
  v.unknown = h.unknown;
  v.observed = observed;
  std::optional<int64_t> lo, hi;
  for (const auto& [node, value] : observed) {
    if (!value) {
      v.unreadable = true;
      continue;
    }
    lo = lo ? std::min(*lo, *value) : *value;
    hi = hi ? std::max(*hi, *value) : *value;
  }
  v.agree = !observed.empty() && !v.unreadable && lo == hi;
  if (lo && *lo < h.acked) v.lost = h.acked - *lo;
  // An unexpected reply may have come after the increment landed.
  const int64_t may_have_landed = h.acked + h.unknown + h.unexpected;
  if (hi && *hi > may_have_landed) v.phantom = *hi - may_have_landed;
  std::vector<int64_t> replies = h.replies;
  std::sort(replies.begin(), replies.end());
  for (size_t i = 1; i < replies.size(); ++i) {
    if (replies[i] == replies[i - 1] &&
        (v.duplicate_replies.empty() || v.duplicate_replies.back() != replies[i])) {
      v.duplicate_replies.push_back(replies[i]);
    }
  }
  for (int64_t r : replies) {
    if (r < 1 || r > may_have_landed) v.impossible_replies.push_back(r);
  }
  return v;
}

}  // namespace ephpm_fault
