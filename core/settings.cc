#include "ephpm/settings.h"

#include <cctype>

#include "ephpm/number_text.h"

namespace ephpm {
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool ParseByteSize(std::string_view text, uint64_t* bytes) {
  if (text.empty()) return false;
  unsigned shift = 0;
  switch (std::tolower(static_cast<unsigned char>(text.back()))) {
    case 'k': shift = 10; break;
    case 'm': shift = 20; break;
    case 'g': shift = 30; break;
    default: break;
  }
  if (shift != 0) text.remove_suffix(1);
  int64_t n = 0;
  if (text.empty() || text[0] == '-' || !ParseInt64(text, &n)) return false;
  const uint64_t v = static_cast<uint64_t>(n);
  if (shift != 0 && v > (uint64_t{1} << (63 - shift))) return false;
  *bytes = v << shift;
  return true;
}

std::string ApplySetting(std::string_view name, std::string_view value, StoreOptions* o) {
  StoreOptions next = *o;
  uint64_t bytes = 0;
  int64_t n = 0;
  if (name == "memory_limit") {
    if (!ParseByteSize(value, &bytes)) {
      return "must be a size in bytes with an optional K, M or G suffix (0 = no limit)";
    }
    next.memory_limit = bytes;
  } else if (name == "eviction_policy") {
    if (EqualsIgnoreCase(value, "noeviction")) {
      next.eviction = EvictionPolicy::kNoEviction;
    } else if (EqualsIgnoreCase(value, "allkeys-lru")) {
      next.eviction = EvictionPolicy::kAllKeysLru;
    } else {
      return "must be noeviction or allkeys-lru";
    }
  } else if (name == "compression") {
    if (EqualsIgnoreCase(value, "off")) {
      next.compression = Compression::kOff;
    } else if (EqualsIgnoreCase(value, "zstd")) {
      next.compression = Compression::kZstd;
    } else {
      return "must be off or zstd";
    }
  } else if (name == "compression_threshold") {
    if (!ParseByteSize(value, &bytes)) {
      return "must be a size in bytes with an optional K, M or G suffix";
    }
    next.compression_threshold = bytes;
  } else if (name == "compression_level") {
    if (!ParseInt64(value, &n) || n < -7 || n > 22) return "must be an integer from -7 to 22";
    next.compression_level = static_cast<int>(n);
  } else if (name == "max_value_size") {
    if (!ParseByteSize(value, &bytes) || bytes == 0 || bytes > kMaxValueSizeLimit) {
      return "must be a positive size in bytes with an optional K, M or G suffix, at most 2G";
    }
    next.max_value_size = bytes;
  } else if (name == "shards") {
    if (!ParseInt64(value, &n) || n < 1 || n > 65536 || (n & (n - 1)) != 0) {
      return "must be a power of two from 1 to 65536";
    }
    next.shards = static_cast<size_t>(n);
  } else if (name == "databases") {
    if (!ParseInt64(value, &n) || n < 1 || n > 1024) return "must be from 1 to 1024";
    next.databases = static_cast<size_t>(n);
  } else {
    return "is not a store setting";
  }
  *o = next;
  return "";
}

}  // namespace ephpm
