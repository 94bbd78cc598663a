// Binds the C ops table to a C++ Store.

#ifndef EPHPM_KV_OPS_STORE_H_
#define EPHPM_KV_OPS_STORE_H_

#include "ephpm/kv_ops.h"
#include "ephpm/store.h"

namespace ephpm {

// A table whose ops act on *store (its ctx).  The store must outlive every use
// of the table.  No exception crosses it: allocation failures are reported as
// EPHPM_KV_OUT_OF_MEMORY.
ephpm_kv_ops MakeKvOps(Store* store);

}  // namespace ephpm

#endif  // EPHPM_KV_OPS_STORE_H_
