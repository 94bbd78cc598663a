// The ephpm.* store settings as text, shared by every place that reads them
// (the PHP extension's INI entries, the host program's flags), so that one
// value means the same thing everywhere.
//
//   name                   value                          default
//   memory_limit           bytes, K/M/G suffix, 0 = none   0
//   eviction_policy        noeviction | allkeys-lru        noeviction
//   compression            off | zstd                      off
//   compression_threshold  bytes, K/M/G suffix             1024
//   compression_level      integer -7..22                  3
//   max_value_size         bytes, K/M/G suffix, 1..2G      512M
//   shards                 power of two, 1..65536          64

#ifndef EPHPM_SETTINGS_H_
#define EPHPM_SETTINGS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "ephpm/options.h"

namespace ephpm {

// Parses "123", "64K", "512m", "1G" (binary multiples; case-insensitive).
// Refuses signs, spaces, fractions and values past 2^63.
bool ParseByteSize(std::string_view text, uint64_t* bytes);

// Whether a and b are equal ignoring ASCII case (setting values, HTTP
// header names, command keywords).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Applies setting `name` (without the "ephpm." prefix) to *o.  Returns "" on
// success, else a message saying what is accepted; *o is then unchanged.
std::string ApplySetting(std::string_view name, std::string_view value, StoreOptions* o);

}  // namespace ephpm

#endif  // EPHPM_SETTINGS_H_
