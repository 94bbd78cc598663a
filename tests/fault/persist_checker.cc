#include "persist_checker.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

namespace ephpm_fault {
namespace {

constexpr size_t kExamples = 8;  // lines kept per list for the report

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s.size() > 40 ? s.substr(0, 40) : s) {
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  if (s.size() > 40) out += "...";
  return out + "\"";
}

void Keep(std::vector<std::string>* list, std::string line) {
  if (list->size() < kExamples) list->push_back(std::move(line));
}

}  // namespace

std::string KeyState::Describe() const {
  if (!exists) return "absent";
  std::string out;
  if (!fields.empty()) {
    out = "{";
    for (const auto& [f, v] : fields) out += (out.size() > 1 ? "," : "") + f + "=" + Quoted(v);
    out += "}";
  } else {
    out = Quoted(value);
  }
  if (has_ttl) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " ttl@[%.3f,%.3f]s", static_cast<double>(expiry_lo_us) / 1e6,
                  static_cast<double>(expiry_hi_us) / 1e6);
    out += buf;
  }
  return out;
}

bool SameState(const KeyState& expected, const KeyState& observed, int64_t slop_us) {
  if (expected.exists != observed.exists) return false;
  if (!expected.exists) return true;
  if (expected.value != observed.value || expected.fields != observed.fields) return false;
  if (expected.has_ttl != observed.has_ttl) return false;
  if (!expected.has_ttl) return true;
  return observed.expiry_lo_us <= expected.expiry_hi_us + slop_us &&
         expected.expiry_lo_us - slop_us <= observed.expiry_hi_us;
}

CrashVerdict JudgeCrash(const std::map<std::string, KeyHistory>& histories,
                        const std::map<std::string, KeyState>& observed,
                        const std::vector<std::string>& present, int64_t kill_us, int64_t slop_us) {
  CrashVerdict v;
  int64_t earliest_lost_ack = INT64_MAX;
  for (const auto& [key, h] : histories) {
    ++v.keys;
    const auto n = static_cast<int64_t>(h.ops.size());
    for (const KeyOp& op : h.ops) {
      if (op.acked) {
        ++v.acked;
      } else {
        ++v.unacked;
      }
    }
    const auto it = observed.find(key);
    const KeyState absent;
    const KeyState& got = it == observed.end() ? absent : it->second;
    // The latest state of the chain the key holds: the least loss that
    // explains what is there (-1 = the base).
    int64_t j = n - 1;
    for (; j >= 0; --j) {
      if (SameState(h.ops[static_cast<size_t>(j)].after, got, slop_us)) break;
    }
    if (j < 0 && !SameState(h.base, got, slop_us)) {
      const std::string last = n > 0 ? h.ops.back().after.Describe() : h.base.Describe();
      ++v.never_written_count;
      Keep(&v.never_written, key + " holds " + got.Describe() + ", a state no request left (base " +
                                 h.base.Describe() + ", last sent " + last + ", " +
                                 std::to_string(n) + " requests)");
      continue;
    }
    bool key_lost = false;
    for (int64_t i = 0; i < n; ++i) {
      const KeyOp& op = h.ops[static_cast<size_t>(i)];
      if (i <= j) {
        if (!op.acked) ++v.unacked_landed;
        continue;
      }
      if (!op.acked) continue;
      ++v.lost;
      key_lost = true;
      if (op.acked_us < earliest_lost_ack) {
        earliest_lost_ack = op.acked_us;
        v.window_key = key;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, " (acknowledged %.3f s before the kill)",
                    static_cast<double>(kill_us - op.acked_us) / 1e6);
      Keep(&v.lost_examples, op.what + buf + ", holds " + got.Describe());
    }
    if (key_lost) ++v.lost_keys;
  }
  if (earliest_lost_ack != INT64_MAX)
    v.window_us = std::max<int64_t>(0, kill_us - earliest_lost_ack);
  for (const std::string& key : present) {
    if (histories.count(key) != 0) continue;
    ++v.unexpected_count;
    Keep(&v.unexpected_keys, key);
  }
  return v;
}

bool CrashViolated(const CrashVerdict& v, bool always_mode, int64_t window_limit_us,
                   std::string* why) {
  why->clear();
  if (v.never_written_count > 0) {
    *why += std::to_string(v.never_written_count) + " keys hold a state nobody wrote\n";
  }
  if (v.unexpected_count > 0) {
    *why += std::to_string(v.unexpected_count) + " keys exist that nobody wrote\n";
  }
  if (always_mode && v.lost > 0) {
    *why += std::to_string(v.lost) + " acknowledged writes lost with fsync=always\n";
  }
  if (!always_mode && v.window_us > window_limit_us) {
    char buf[160];
    std::snprintf(
        buf, sizeof buf, "a write acknowledged %.3f s before the kill was lost (limit %.3f s)\n",
        static_cast<double>(v.window_us) / 1e6, static_cast<double>(window_limit_us) / 1e6);
    *why += buf;
  }
  return !why->empty();
}

}  // namespace ephpm_fault
