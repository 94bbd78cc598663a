// SORT and SORT_RO, as Redis 7.0's sortCommandGeneric answers them: the
// elements of a list, set or sorted set ordered as numbers or (ALPHA) as
// bytes, by themselves or by the values BY's pattern names, a LIMIT window,
// GET's patterns looked up for each, and STORE's list.  The whole command is
// one step: the source, every key a pattern names and the STORE are read and
// written in one atomic section (every shard of the database when a pattern
// names keys, else the source's and the destination's shards).

#include "command_table.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scripting.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

// Whether a pattern makes SORT look keys up: BY and GET substitute each
// element for the first '*' (GET's "#" is the element itself, and a pattern
// without '*' names no key: BY then means "do not sort", GET answers nil).
bool NamesKeys(std::string_view pattern) {
  return pattern != "#" && pattern.find('*') != std::string_view::npos;
}

// SORT's options as Redis reads them, the argument checks excepted.
struct SortArgs {
  bool desc = false, alpha = false, dontsort = false;
  std::optional<std::string_view> by, store;
  std::vector<std::string_view> gets;
  // The options Redis checks as it reads them, in order: LIMIT's numbers
  // (at the index given), BY's and GET's patterns (in a cluster).
  enum class Checked { kLimit, kBy, kGet };
  std::vector<std::pair<Checked, size_t>> checked;
};

// Reads argv[2..] into *out; on a malformed option (a keyword Redis does
// not know, or one without the arguments it needs), the index of the
// argument where it stopped, else 0.  LIMIT's numbers are left unparsed
// here (Ctx-free: EXEC and scripts read the keys SORT names with it).
size_t ReadSortArgs(const Args& argv, bool readonly, SortArgs* out) {
  using Checked = SortArgs::Checked;
  for (size_t j = 2; j < argv.size(); ++j) {
    const size_t left = argv.size() - j - 1;
    const std::string& a = argv[j];
    if (IEq(a, "asc")) {
      out->desc = false;
    } else if (IEq(a, "desc")) {
      out->desc = true;
    } else if (IEq(a, "alpha")) {
      out->alpha = true;
    } else if (IEq(a, "limit") && left >= 2) {
      out->checked.emplace_back(Checked::kLimit, j + 1);
      j += 2;
    } else if (!readonly && IEq(a, "store") && left >= 1) {
      out->store = argv[++j];
    } else if (IEq(a, "by") && left >= 1) {
      out->by = argv[++j];
      out->checked.emplace_back(Checked::kBy, j);
      out->dontsort = out->by->find('*') == std::string_view::npos;
    } else if (IEq(a, "get") && left >= 1) {
      out->gets.push_back(argv[++j]);
      out->checked.emplace_back(Checked::kGet, j);
    } else {
      return j;
    }
  }
  return 0;
}

// The value a BY or GET pattern names for `element` (Redis's
// lookupKeyByPattern): "#" is the element; else the key is the pattern with
// its first '*' replaced by the element, and "->field" after the '*' (not
// at the end) names a field of a hash there.  nullopt when that key or
// field is missing or of another type, and for a pattern without '*'.
// With section_checked (SORT runs in an outer section), a key the section
// does not hold sets *unheld instead.
std::optional<std::string> ByPattern(Ctx& c, std::string_view pattern, std::string_view element,
                                     bool section_checked, bool* unheld) {
  if (pattern == "#") return std::string(element);
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  size_t key_end = pattern.size();
  std::optional<std::string_view> field;
  const size_t arrow = pattern.find("->", star + 1);
  if (arrow != std::string_view::npos && arrow + 2 < pattern.size()) {
    field = pattern.substr(arrow + 2);
    key_end = arrow;
  }
  std::string key;
  key.reserve(key_end - 1 + element.size());
  key.append(pattern.substr(0, star)).append(element).append(
      pattern.substr(star + 1, key_end - star - 1));
  // Inside EXEC or a script, their section holds every shard of the
  // database when SORT names keys (cmd_multi.cc, scripting.cc): a key it
  // does not hold would break the lock order, and is not read.
  if (section_checked && !c.store->HeldBySection(key)) {
    *unheld = true;
    return std::nullopt;
  }
  std::string value;
  // Another type, a key past kMaxKeySize (none can exist): missing.
  const Status st = field ? c.store->HGet(key, *field, &value) : c.store->Get(key, &value);
  if (st != Status::kOk) return std::nullopt;
  return value;
}

// Redis's compareStringObjects: bytes, then length.
int CompareBytes(std::string_view a, std::string_view b) {
  const int cmp = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (cmp != 0) return cmp;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> by;  // ALPHA with BY: the value compared
};

// The elements of the live list, set or sorted set at key, in its own
// order (a sorted set's by rank).  False after replying.
bool ReadSource(Ctx& c, const std::string& key, ValueType type, std::vector<Item>* items) {
  std::vector<std::string> elements;
  Status st = Status::kOk;
  if (type == ValueType::kList) {
    st = c.store->ListRange(key, 0, -1, &elements);
  } else if (type == ValueType::kSet) {
    st = c.store->SMembers(key, &elements);
  } else {
    Store::ZMembers members;
    st = c.store->ZRange(key, Store::ZRangeSpec{}, &members);
    for (auto& m : members) elements.push_back(std::move(m.first));
  }
  if (st != Status::kNotFound && Failed(c, st)) return false;
  items->reserve(elements.size());
  for (auto& e : elements) items->push_back(Item{std::move(e), 0, std::nullopt});
  return true;
}

// What SORT does once its options are read, inside its atomic section.
// `outer`: SORT runs inside EXEC's or a script's section.
void SortIn(Ctx& c, SortArgs& o, int64_t limit_start, int64_t limit_count, bool outer) {
  bool unheld = false;
  auto lookup = [&](std::string_view pattern, std::string_view element) {
    return ByPattern(c, pattern, element, outer, &unheld);
  };
  const std::optional<ValueType> type = TypeOf(c, c.argv[1]);
  if (type && *type != ValueType::kList && *type != ValueType::kSet &&
      *type != ValueType::kZSet) {
    return c.w.Error(kWrongType);
  }
  std::vector<Item> items;
  if (type && !ReadSource(c, c.argv[1], *type, &items)) return;
  std::optional<std::string_view> by = o.by;
  // A set has no order of its own that replication or a script could
  // repeat: without a sort, STORE and scripts get it sorted as bytes.
  if (o.dontsort && type == ValueType::kSet && (o.store || c.client->in_script)) {
    o.dontsort = false;
    o.alpha = true;
    by.reset();
  }
  // A list or sorted set not sorted keeps its order; DESC reverses it.
  if (o.dontsort && o.desc && type != ValueType::kSet) std::reverse(items.begin(), items.end());

  const int64_t n = static_cast<int64_t>(items.size());
  int64_t start = limit_start < 0 ? 0 : limit_start;
  int64_t end = 0;
  if (limit_count < 0 || __builtin_add_overflow(start, limit_count - 1, &end)) end = n - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;

  if (!o.dontsort) {
    bool not_a_number = false;
    for (Item& it : items) {
      std::optional<std::string> by_value;
      if (by) {
        by_value = lookup(*by, it.element);
        if (!by_value) continue;  // scores 0; ALPHA: compared as missing
      }
      if (o.alpha) {
        if (by) it.by = std::move(by_value);
        continue;
      }
      // strtod over the whole value, as Redis reads it (an empty value is 0).
      const std::string& text = by ? *by_value : it.element;
      char* end_ptr = nullptr;
      errno = 0;
      it.score = std::strtod(text.c_str(), &end_ptr);
      if (*end_ptr != '\0' || errno == ERANGE || std::isnan(it.score)) not_a_number = true;
    }
    if (not_a_number) return c.w.Error("ERR One or more scores can't be converted into double");
    const bool alpha = o.alpha, desc = o.desc, by_pattern = by.has_value();
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      int cmp = 0;
      if (!alpha) {
        cmp = a.score > b.score ? 1 : (a.score < b.score ? -1 : CompareBytes(a.element, b.element));
      } else if (by_pattern) {
        if (!a.by || !b.by) {
          cmp = a.by.has_value() == b.by.has_value() ? 0 : (a.by ? 1 : -1);
        } else {
          cmp = CompareBytes(*a.by, *b.by);
        }
      } else {
        cmp = CompareBytes(a.element, b.element);
      }
      return (desc ? -cmp : cmp) < 0;
    });
  }

  const int64_t window = end - start + 1;
  // What the reply lists (STORE's list: a missing GET is "").
  std::vector<std::optional<std::string>> out;
  out.reserve(static_cast<size_t>(window) * std::max<size_t>(o.gets.size(), 1));
  for (int64_t j = start; j <= end; ++j) {
    std::string& e = items[static_cast<size_t>(j)].element;
    for (std::string_view g : o.gets) out.push_back(lookup(g, e));
    if (o.gets.empty()) out.emplace_back(std::move(e));
  }
  if (unheld) return c.w.Error(script::kNeedsAllShards);
  if (!o.store) {
    c.w.ArrayHeader(out.size());
    for (const auto& v : out) c.w.BulkOrNull(v);
    return;
  }
  std::vector<std::string_view> views;
  views.reserve(out.size());
  for (const auto& v : out) views.push_back(v ? std::string_view(*v) : std::string_view());
  if (Failed(c, c.store->ListReplace(*o.store, views))) return;
  c.w.Integer(static_cast<int64_t>(out.size()));
}

void SortGeneric(Ctx& c, bool readonly) {
  SortArgs o;
  const size_t bad = ReadSortArgs(c.argv, readonly, &o);
  // Redis checks each option as it reads it: LIMIT's numbers and the
  // cluster's refusals come before a later option's syntax error.
  int64_t limit_start = 0, limit_count = -1;
  const bool cluster = c.store->options().replicator != nullptr;
  for (const auto& [what, at] : o.checked) {
    switch (what) {
      case SortArgs::Checked::kLimit:
        if (!ParseLL(c.argv[at], &limit_start) || !ParseLL(c.argv[at + 1], &limit_count)) {
          return c.w.Error(kNotInteger);
        }
        break;
      case SortArgs::Checked::kBy:
        if (cluster && c.argv[at].find('*') != std::string::npos) {
          return c.w.Error("ERR BY option of SORT denied in Cluster mode.");
        }
        break;
      case SortArgs::Checked::kGet:
        if (cluster) return c.w.Error("ERR GET option of SORT denied in Cluster mode.");
        break;
    }
  }
  if (bad != 0) return c.w.Error(kSyntaxErr);
  // (In a cluster, STORE's key shares the source's owner: the dispatcher
  // checked KeyPositions' keys.)
  const bool keyspace = SortNamesKeyspace(c.argv, readonly);
  std::vector<std::string_view> keys{c.argv[1]};
  if (o.store) keys.push_back(*o.store);
  bool held = true;
  for (std::string_view k : keys) held = held && c.store->HeldBySection(k);
  // Inside EXEC or a script, their section holds what SORT needs (they find
  // its keys with KeyPositions and SortNamesKeyspace).
  if (held) return SortIn(c, o, limit_start, limit_count, /*outer=*/true);
  const Status st = c.store->Atomically(
      keys, keyspace, [&] { SortIn(c, o, limit_start, limit_count, /*outer=*/false); });
  if (st != Status::kOk) Failed(c, st);
}

}  // namespace

bool SortNamesKeyspace(const Args& argv, bool readonly) {
  SortArgs o;
  if (ReadSortArgs(argv, readonly, &o) != 0) return false;  // refused unread
  if (o.by && NamesKeys(*o.by)) return true;
  for (std::string_view g : o.gets) {
    if (NamesKeys(g)) return true;
  }
  return false;
}

void CmdSort(Ctx& c) { SortGeneric(c, false); }

void CmdSortRo(Ctx& c) { SortGeneric(c, true); }

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
