// Builds the store the plain-C test uses; C cannot construct a Store.

#include <memory>

#include "ephpm/kv_ops_store.h"

extern "C" const ephpm_kv_ops* fixture_ops(void) {
  static std::unique_ptr<ephpm::Store> store = ephpm::Store::Create(ephpm::StoreOptions{}, nullptr);
  static const ephpm_kv_ops ops = ephpm::MakeKvOps(store.get());
  return &ops;
}
