// Judging and printing a phase of the fault run (report.h).

#include "report.h"

#include <cinttypes>
#include <cstdio>
#include <map>

namespace ephpm_fault {

// ---- judging and reporting ---------------------------------------------------------

void Judge(PhaseReport* p, const Config& c, const std::map<std::string, Observed>& observed) {
  const int64_t margin = c.margin_ms * 1000;
  p->locks = Tally(p->result.cycles, margin);
  p->overlaps = FindOverlaps(HoldsOf(p->result.cycles, margin));
  p->window = WindowOf(p->overlaps);
  p->vanished = FindVanished(p->result.cycles, margin);
  for (const auto& [key, h] : p->result.counters) {
    auto it = observed.find(key);
    p->counters[key] = JudgeCounter(h, it == observed.end() ? Observed{} : it->second);
  }
}

namespace {

std::string HoldText(const Hold& h) {
  const LockCycle& c = *h.cycle;
  const char* end = "released";
  if (c.release == Release::kNone || h.end_us < c.release_sent_us) end = "TTL";
  return "via " + c.node + ", sent " + At(c.sent_us) + ", held [" + At(h.start_us) + ", " +
         At(h.end_us) + ") until " + end + ", ttl " + std::to_string(c.ttl_ms) + " ms, token " +
         c.token;
}

}  // namespace

void PrintPhase(const PhaseReport& p, bool fails) {
  std::printf("\n== phase %s: %.1f s\n", p.name.c_str(),
              static_cast<double>(p.end_us - p.start_us) / 1e6);
  std::string kinds;
  for (const auto& [k, n] : p.faults.by_kind) kinds += " " + k + "=" + std::to_string(n);
  std::printf("faults injected:%s\n", kinds.empty() ? " none" : kinds.c_str());
  if (!p.faults.not_applied.empty()) {
    std::printf("fault hooks not applied (the run was less adversarial than scheduled): %zu\n",
                p.faults.not_applied.size());
    for (const auto& s : p.faults.not_applied) std::printf("  %s\n", s.c_str());
  }
  const LockTally& t = p.locks;
  std::printf(
      "locks: %" PRId64 " cycles: %" PRId64 " granted (%" PRId64 " holds, %" PRId64
      " granted too late to hold, %" PRId64 " held past the TTL), %" PRId64
      " refused, %" PRId64 " unknown outcomes, %" PRId64 " unexpected\n",
      t.cycles, t.granted, t.holds, t.empty_holds, t.held_past_ttl, t.refused, t.unknown,
      t.unexpected);
  std::printf("  releases: %" PRId64 " released, %" PRId64 " found it gone, %" PRId64
              " unknown, %" PRId64 " unexpected; connect failures (nothing sent) %" PRId64 "\n",
              t.released, t.not_held, t.release_unknown, t.release_unexpected,
              p.result.connect_failures);
  std::printf("  OVERLAPS (two holders at once): %zu", p.overlaps.size());
  if (!p.overlaps.empty()) {
    std::printf("; double-holder time %s in all, longest %s on %s, from %s to %s",
                Ms(p.window.total_us).c_str(), Ms(p.window.longest_us).c_str(),
                p.window.longest_key.c_str(), At(p.window.first_us).c_str(),
                At(p.window.last_us).c_str());
  }
  std::printf("\n");
  if (p.cut_us != 0) {
    std::printf("  partition: cut at %s, healed at %s (%s)", At(p.cut_us).c_str(),
                At(p.heal_us).c_str(), Ms(p.heal_us - p.cut_us).c_str());
    if (!p.overlaps.empty()) {
      std::printf("; two holders from %+.3f s after the cut to %+.3f s after the heal",
                  static_cast<double>(p.window.first_us - p.cut_us) / 1e6,
                  static_cast<double>(p.window.last_us - p.heal_us) / 1e6);
    }
    std::printf("\n");
  }
  const size_t show = 20;
  for (size_t i = 0; i < p.overlaps.size() && i < show; ++i) {
    const Overlap& o = p.overlaps[i];
    std::printf("    %s (owner %s when all are alive): both held for %s from %s\n      A %s\n"
                "      B %s\n",
                o.a.cycle->key.c_str(), p.owner.at(o.a.cycle->key).c_str(),
                Ms(o.to_us - o.from_us).c_str(), At(o.from_us).c_str(), HoldText(o.a).c_str(),
                HoldText(o.b).c_str());
  }
  if (p.overlaps.size() > show) std::printf("    ... and %zu more\n", p.overlaps.size() - show);
  std::printf("  VANISHED (DELIFEQ answered 0 before the TTL): %zu\n", p.vanished.size());
  for (size_t i = 0; i < p.vanished.size() && i < show; ++i) {
    const LockCycle& c = *p.vanished[i];
    std::printf("    %s via %s: granted %s, ttl %" PRId64 " ms, release sent %s, answered 0 at %s\n",
                c.key.c_str(), c.node.c_str(), At(c.replied_us).c_str(), c.ttl_ms,
                At(c.release_sent_us).c_str(), At(c.release_replied_us).c_str());
  }
  if (p.vanished.size() > show) std::printf("    ... and %zu more\n", p.vanished.size() - show);
  int64_t acked = 0, unknown = 0, observed = 0;
  std::printf("counters:\n");
  for (const auto& [key, v] : p.counters) {
    acked += v.acked;
    unknown += v.unknown;
    std::string seen;
    std::optional<int64_t> lo;
    for (const auto& [id, val] : v.observed) {
      seen += " " + id + "=" + (val ? std::to_string(*val) : std::string("unreadable"));
      if (val) lo = lo ? std::min(*lo, *val) : *val;
    }
    observed += lo.value_or(0);
    std::printf("  %s (owner %s): acked %" PRId64 ", unknown %" PRId64 ", observed%s", key.c_str(),
                p.owner.at(key).c_str(), v.acked, v.unknown, seen.c_str());
    if (v.agree && v.lost == 0 && v.phantom == 0 && v.unknown > 0) {
      // How many unknown outcomes did land (e.g. a routed request applied
      // after its caller was told -CLUSTERDOWN): not a violation today.
      std::printf(" (%" PRId64 " of the unknown landed)", lo.value_or(0) - v.acked);
    }
    if (v.lost > 0) std::printf("  LOST %" PRId64, v.lost);
    if (v.phantom > 0) std::printf("  PHANTOM %" PRId64, v.phantom);
    if (!v.agree) std::printf("  NODES DISAGREE");
    if (!v.duplicate_replies.empty()) {
      std::printf("  WENT BACK: %zu values acknowledged twice (first %" PRId64 ")",
                  v.duplicate_replies.size(), v.duplicate_replies.front());
    }
    if (!v.impossible_replies.empty()) {
      std::printf("  %zu IMPOSSIBLE values acknowledged (first %" PRId64 ")",
                  v.impossible_replies.size(), v.impossible_replies.front());
    }
    std::printf("\n");
    if (!v.duplicate_replies.empty()) {
      // Which requests got the same value: through which nodes, when.
      auto it = p.result.incr_acks.find(key);
      std::map<int64_t, std::vector<const IncrAck*>> by_value;
      if (it != p.result.incr_acks.end()) {
        for (const IncrAck& a : it->second) by_value[a.value].push_back(&a);
      }
      size_t shown = 0;
      for (int64_t dup : v.duplicate_replies) {
        if (shown++ >= 12) {
          std::printf("    ... and %zu more values\n", v.duplicate_replies.size() - 12);
          break;
        }
        std::printf("    %" PRId64 " acknowledged to:", dup);
        for (const IncrAck* a : by_value[dup]) {
          std::printf(" [via %s, sent %s, answered %s]", a->node.c_str(), At(a->sent_us).c_str(),
                      At(a->replied_us).c_str());
        }
        std::printf("\n");
      }
    }
  }
  std::printf("  increments: acked %" PRId64 ", unknown %" PRId64 ", observed %" PRId64
              " (lowest node), LOST %" PRId64 ", PHANTOM %" PRId64 "\n",
              acked, unknown, observed, p.Lost(), p.Phantom());
  for (const auto& u : p.result.unexpected) std::printf("UNEXPECTED reply: %s\n", u.c_str());
  for (const auto& c : p.faults.crashes) std::printf("CRASH: %s\n", c.c_str());
  if (!p.converged) std::printf("NOT CONVERGED after the phase: %s\n", p.not_converged.c_str());
  const auto v = p.Violations();
  std::string list;
  for (const auto& s : v) list += (list.empty() ? "" : ", ") + s;
  std::printf("phase %s: %s%s\n", p.name.c_str(),
              v.empty() ? "no violation" : (fails ? "FAIL: " : "violations (report only): "),
              list.c_str());
  std::fflush(stdout);
}

}  // namespace ephpm_fault
