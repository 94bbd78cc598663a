// Hash commands: HSET, HGET, HGETALL, HINCRBY, HSCAN, ...

#include "command_table.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ephpm/glob.h"
#include "ephpm/number_text.h"

namespace ephpm {
namespace resp {
namespace cmd {

namespace {

void HSetGeneric(Ctx& c, bool reply_ok) {
  if (c.argv.size() % 2 == 1) return ArityError(c);
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  for (size_t i = 2; i + 1 < c.argv.size(); i += 2) fields.emplace_back(c.argv[i], c.argv[i + 1]);
  int64_t added = 0;
  if (Failed(c, c.store->HSet(c.argv[1], fields, false, &added))) return;
  if (reply_ok) return Ok(c);
  c.w.Integer(added);
}

}  // namespace

void CmdHSet(Ctx& c) { HSetGeneric(c, false); }

void CmdHMSet(Ctx& c) { HSetGeneric(c, true); }

void CmdHSetNx(Ctx& c) {
  int64_t added = 0;
  if (Failed(c, c.store->HSet(c.argv[1], {{c.argv[2], c.argv[3]}}, true, &added))) return;
  c.w.Integer(added);
}

void CmdHGet(Ctx& c) {
  std::string v;
  const Status st = c.store->HGet(c.argv[1], c.argv[2], &v);
  if (st == Status::kNotFound) return c.w.NullBulk();
  if (Failed(c, st)) return;
  c.w.Bulk(v);
}

void CmdHMGet(Ctx& c) {
  std::vector<std::string_view> fields(c.argv.begin() + 2, c.argv.end());
  std::vector<std::optional<std::string>> values;
  if (Failed(c, c.store->HMGet(c.argv[1], fields, &values))) return;
  c.w.ArrayHeader(values.size());
  for (const auto& v : values) c.w.BulkOrNull(v);
}

void CmdHDel(Ctx& c) {
  std::vector<std::string_view> fields(c.argv.begin() + 2, c.argv.end());
  int64_t removed = 0;
  if (Failed(c, c.store->HDel(c.argv[1], fields, &removed))) return;
  c.w.Integer(removed);
}

namespace {

enum class HPart { kAll, kKeys, kValues };

void HGetAllGeneric(Ctx& c, HPart part) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (Failed(c, c.store->HGetAll(c.argv[1], &fields))) return;
  c.w.ArrayHeader(part == HPart::kAll ? fields.size() * 2 : fields.size());
  for (const auto& [f, v] : fields) {
    if (part != HPart::kValues) c.w.Bulk(f);
    if (part != HPart::kKeys) c.w.Bulk(v);
  }
}

}  // namespace

void CmdHGetAll(Ctx& c) { HGetAllGeneric(c, HPart::kAll); }

void CmdHKeys(Ctx& c) { HGetAllGeneric(c, HPart::kKeys); }

void CmdHVals(Ctx& c) { HGetAllGeneric(c, HPart::kValues); }

// HRANDFIELD key [count [WITHVALUES]], as Redis 7.0's hrandfieldCommand:
// the count and the option are checked before the key is looked up.
void CmdHRandField(Ctx& c) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (c.argv.size() == 2) {
    if (Failed(c, c.store->HRandField(c.argv[1], 1, &fields))) return;
    if (fields.empty()) return c.w.NullBulk();
    return c.w.Bulk(fields[0].first);
  }
  int64_t count = 0;
  bool withvalues = false;
  if (!ParseRandCount(c, "withvalues", &count, &withvalues)) return;
  if (Failed(c, c.store->HRandField(c.argv[1], count, &fields))) return;
  c.w.ArrayHeader(withvalues ? fields.size() * 2 : fields.size());
  for (const auto& [f, v] : fields) {
    c.w.Bulk(f);
    if (withvalues) c.w.Bulk(v);
  }
}

void CmdHLen(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->HLen(c.argv[1], &n))) return;
  c.w.Integer(n);
}

void CmdHExists(Ctx& c) {
  bool e = false;
  if (Failed(c, c.store->HExists(c.argv[1], c.argv[2], &e))) return;
  c.w.Integer(e ? 1 : 0);
}

void CmdHStrLen(Ctx& c) {
  int64_t n = 0;
  if (Failed(c, c.store->HStrLen(c.argv[1], c.argv[2], &n))) return;
  c.w.Integer(n);
}

void CmdHIncrBy(Ctx& c) {
  int64_t delta = 0;
  if (!ParseLL(c.argv[3], &delta)) return c.w.Error(kNotInteger);
  int64_t result = 0;
  const Status st = c.store->HIncrBy(c.argv[1], c.argv[2], delta, &result);
  if (st == Status::kNotInteger) return c.w.Error("ERR hash value is not an integer");
  if (Failed(c, st)) return;
  c.w.Integer(result);
}

void CmdHIncrByFloat(Ctx& c) {
  long double delta = 0;
  if (!ParseLongDouble(c.argv[3], &delta)) return c.w.Error(kNotFloat);
  if (std::isnan(delta) || std::isinf(delta)) return c.w.Error("ERR value is NaN or Infinity");
  std::string result;
  const Status st = c.store->HIncrByFloat(c.argv[1], c.argv[2], delta, &result);
  if (st == Status::kNotFloat) return c.w.Error("ERR hash value is not a float");
  if (Failed(c, st)) return;
  c.w.Bulk(result);
}

void CmdHScan(Ctx& c) {
  uint64_t cursor = 0;
  if (!ParseCursor(c.argv[2], &cursor)) return c.w.Error("ERR invalid cursor");
  // Redis looks the key up before it reads the options: a missing key is an
  // empty scan, and a string a WRONGTYPE, whatever the options say.
  // (A hash is never empty: no fields means no key.)
  std::vector<std::pair<std::string, std::string>> fields;
  if (Failed(c, c.store->HGetAll(c.argv[1], &fields))) return;
  std::optional<std::string> pattern;
  size_t count = 10;
  std::optional<std::string> type;
  if (!fields.empty() && !ParseScanOptions(c, 3, false, &pattern, &count, &type)) return;
  auto selected = [&](const std::string& field) {
    if (!pattern) return true;
    if (field.empty()) return pattern->empty();
    return GlobMatch(*pattern, field);
  };
  // Hashes are returned whole in one step, as Redis does for small ones.
  c.w.ArrayHeader(2);
  c.w.Bulk("0");
  size_t n = 0;
  for (const auto& fv : fields) n += selected(fv.first) ? 1 : 0;
  c.w.ArrayHeader(n * 2);
  for (const auto& [f, v] : fields) {
    if (selected(f)) {
      c.w.Bulk(f);
      c.w.Bulk(v);
    }
  }
}

}  // namespace cmd
}  // namespace resp
}  // namespace ephpm
