/* Test-only hooks (EPHPM_TEST_HOOKS): drive the host-table path with tables
 * that a real host might hand over.  Not compiled into the shipped module. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "ephpm_ops.h"
#include "php.h"

#include "ephpm_test_arginfo.h"

static ephpm_kv_ops variant_ops;

static int unreachable_set_nx(void *ctx, const char *k, size_t kl, const char *v, size_t vl,
                              int64_t ttl, int *inserted) {
  (void)ctx, (void)k, (void)kl, (void)v, (void)vl, (void)ttl, (void)inserted;
  return EPHPM_KV_OWNER_UNREACHABLE;
}

static int unreachable_del_if_eq(void *ctx, const char *k, size_t kl, const char *t, size_t tl,
                                 int *deleted) {
  (void)ctx, (void)k, (void)kl, (void)t, (void)tl, (void)deleted;
  return EPHPM_KV_OWNER_UNREACHABLE;
}

static int wrongtype_get(void *ctx, const char *k, size_t kl, char **v, size_t *vl) {
  (void)ctx, (void)k, (void)kl, (void)v, (void)vl;
  return EPHPM_KV_WRONG_TYPE;
}

static int wrongtype_incr_by(void *ctx, const char *k, size_t kl, int64_t d, int64_t *r) {
  (void)ctx, (void)k, (void)kl, (void)d, (void)r;
  return EPHPM_KV_WRONG_TYPE;
}

static int wrongtype_del_if_eq(void *ctx, const char *k, size_t kl, const char *t, size_t tl,
                               int *deleted) {
  (void)ctx, (void)k, (void)kl, (void)t, (void)tl, (void)deleted;
  return EPHPM_KV_WRONG_TYPE;
}

PHP_FUNCTION(ephpm_test_install_host_ops) {
  zend_string *variant;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(variant)
  ZEND_PARSE_PARAMETERS_END();
  const char *v = ZSTR_VAL(variant);
  if (strcmp(v, "standalone") == 0) {
    ephpm_set_kv_ops(NULL);
    return;
  }
  ephpm_set_kv_ops(NULL);
  const ephpm_kv_ops *real = ephpm_ops_get();  /* the standalone store's table */
  if (real == NULL) RETURN_THROWS();
  variant_ops = *real;
  if (strcmp(v, "full") == 0) {
  } else if (strcmp(v, "short") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, del_if_eq);
  } else if (strcmp(v, "tiny") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, wait);
  } else if (strcmp(v, "abi") == 0) {
    variant_ops.abi_version = EPHPM_KV_ABI_VERSION + 98;
  } else if (strcmp(v, "unreachable") == 0) {
    variant_ops.set_nx = unreachable_set_nx;
    variant_ops.del_if_eq = unreachable_del_if_eq;
  } else if (strcmp(v, "wrongtype") == 0) {
    variant_ops.get = wrongtype_get;
    variant_ops.incr_by = wrongtype_incr_by;
    variant_ops.del_if_eq = wrongtype_del_if_eq;
  } else {
    zend_argument_value_error(1, "is not a known variant");
    RETURN_THROWS();
  }
  ephpm_set_kv_ops(&variant_ops);
}

void ephpm_test_hooks_register(int module_number) {
  (void)module_number;
  zend_register_functions(NULL, ext_functions, NULL, MODULE_PERSISTENT);
}
