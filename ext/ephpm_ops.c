#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <string.h>

#include "ephpm_bridge.h"
#include "ephpm_ops.h"
#include "php.h"

/* Process-wide state written only by ephpm_set_kv_ops, which a host calls
 * before PHP starts and before any worker thread exists; read-only after. */
static ephpm_kv_ops host_ops;
static bool host_installed;
static char host_error[192];

EPHPM_API void ephpm_set_kv_ops(const ephpm_kv_ops *ops) {
  memset(&host_ops, 0, sizeof host_ops);
  host_installed = false;
  host_error[0] = '\0';
  if (ops == NULL) return;
  if (ops->abi_version != EPHPM_KV_ABI_VERSION) {
    snprintf(host_error, sizeof host_error,
             "the host's ops table has ABI version %u, this extension speaks version %u",
             ops->abi_version, EPHPM_KV_ABI_VERSION);
    return;
  }
  if (ops->size < offsetof(ephpm_kv_ops, del_if_eq)) {
    snprintf(host_error, sizeof host_error,
             "the host's ops table is %u bytes, shorter than any ABI %u table", ops->size,
             EPHPM_KV_ABI_VERSION);
    return;
  }
  /* A newer host's table may be longer: keep what this extension knows. */
  const size_t n = ops->size < sizeof host_ops ? ops->size : sizeof host_ops;
  memcpy(&host_ops, ops, n);
  host_ops.size = (uint32_t)n;
  host_installed = true;
}

const ephpm_kv_ops *ephpm_ops_get(void) {
  if (host_installed) return &host_ops;
  if (host_error[0] != '\0') {
    zend_throw_error(NULL, "ephpm: %s", host_error);
    return NULL;
  }
  const ephpm_kv_ops *ops = ephpm_standalone_ops_if_created();
  if (ops != NULL) return ops;
  char err[256];
  ops = ephpm_standalone_ops((const char *const *)EPHPM_G(store_settings), err, sizeof err);
  if (ops == NULL) zend_throw_error(NULL, "ephpm: cannot create the store: %s", err);
  return ops;
}

const ephpm_kv_ops *ephpm_ops_peek(void) {
  if (host_installed) return &host_ops;
  if (host_error[0] != '\0') return NULL;
  return ephpm_standalone_ops_if_created();
}

void ephpm_ops_missing(const ephpm_kv_ops *ops, const char *slot) {
  /* Class::method for Ephpm\Lock's methods, as PHP's own messages */
  zend_string *fn = get_active_function_or_method_name();
  zend_throw_error(NULL,
                   "%s(): the %s's ops table (ABI %u, %u bytes) has no %s operation; "
                   "upgrade the host program",
                   ZSTR_VAL(fn), host_installed ? "host" : "store", ops->abi_version, ops->size,
                   slot);
  zend_string_release(fn);
}

const char *ephpm_ops_mode(void) { return host_installed ? "host" : "standalone"; }

const char *ephpm_ops_host_error(void) { return host_error; }

bool ephpm_ops_describe(uint32_t *abi_version, uint32_t *size) {
  const ephpm_kv_ops *ops = host_installed ? &host_ops : ephpm_standalone_ops_if_created();
  if (ops == NULL) return false;
  *abi_version = ops->abi_version;
  *size = ops->size;
  return true;
}
