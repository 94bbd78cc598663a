#ifndef PHP_EPHPM_H
#define PHP_EPHPM_H

#include "php.h"

extern zend_module_entry ephpm_module_entry;
#define phpext_ephpm_ptr &ephpm_module_entry

#define PHP_EPHPM_VERSION "0.1.0"

/* Exported for host programs (see ephpm_set_kv_ops). */
#define EPHPM_API __attribute__((visibility("default")))

ZEND_BEGIN_MODULE_GLOBALS(ephpm)
  /* ephpm.* store settings, as text; applied when a standalone store is
   * made (ephpm_bridge.h lists them in this order; EPHPM_STORE_SETTING_COUNT
   * there). */
  char *store_settings[10];

  /* ephpm.session_* (see session/ephpm_session.h) */
  char *session_prefix;
  bool session_locking;
  zend_long session_lock_ttl_ms;
  zend_long session_lock_wait_ms;
  zend_long session_lock_backoff_min_ms;
  zend_long session_lock_backoff_max_ms;
  zend_long session_lock_failure; /* ephpm_lock_failure */

  /* PS_READ calls emitting their messages (which may run user code) before
   * PHP has the data they read: the handler refuses writes meanwhile. */
  int session_reads_in_progress;

  /* The Ephpm\Lock objects of this request that may still hold their grant,
   * released at RSHUTDOWN (ephpm_lock.c; an intrusive list, no allocation). */
  struct ephpm_lock_obj *locks_held;
ZEND_END_MODULE_GLOBALS(ephpm)

ZEND_EXTERN_MODULE_GLOBALS(ephpm)
#define EPHPM_G(v) ZEND_MODULE_GLOBALS_ACCESSOR(ephpm, v)

#if defined(ZTS) && defined(COMPILE_DL_EPHPM)
ZEND_TSRMLS_CACHE_EXTERN()
#endif

#endif /* PHP_EPHPM_H */
