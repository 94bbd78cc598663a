// Status codes shared by the C++ store and the C ops table.
//
// The numeric values are part of the C ABI (kv_ops.h repeats them as
// EPHPM_KV_*); never renumber, only append.

#ifndef EPHPM_STATUS_H_
#define EPHPM_STATUS_H_

namespace ephpm {

enum class Status : int {
  kOk = 0,
  kNotFound = 1,          // the key is missing or expired
  kOutOfMemory = 2,       // refused by the memory limit (or allocation failed)
  kInvalidArgument = 3,   // key/value too long, negative TTL, bad pattern ...
  kOwnerUnreachable = 4,  // the key's owner could not be asked (cluster)
  kWrongType = 5,         // the key holds a value of another type
  kNotInteger = 6,        // incr on a value that is not a decimal int64
  kOverflow = 7,          // incr result would leave the int64 range
  kNotFloat = 8,          // incrbyfloat on a value that is not a number
  kNanOrInfinity = 9,     // incrbyfloat result would be NaN or infinite
  kPersistenceError = 10,  // the log cannot be written (disk full, EIO): writes
                           // are refused until it can; see docs/PERSISTENCE.md
};

// A short constant name such as "out of memory"; never null.
const char* StatusName(Status s);

}  // namespace ephpm

#endif  // EPHPM_STATUS_H_
