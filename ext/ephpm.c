/* The ephpm extension: its INI settings and the module (startup, phpinfo,
 * the function table).  The ephpm_kv_* functions are in ephpm_functions.c. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "SAPI.h"
#include "ephpm_bridge.h"
#include "ephpm_lock.h"
#include "ephpm_ops.h"
#include "ext/standard/info.h"
#include "php.h"
#include "php_ephpm.h"
#include "php_ini.h"
#include "ephpm_session.h"

#include "ephpm_arginfo.h"

ZEND_DECLARE_MODULE_GLOBALS(ephpm)

#ifdef EPHPM_TEST_HOOKS
void ephpm_test_hooks_register(int module_number);
void ephpm_test_hooks_request_shutdown(void);
#endif

/* ---- INI ------------------------------------------------------------------
 * Store settings are read when the store is made, so they are PHP_INI_SYSTEM.
 * An invalid value is refused with a warning and the default stays. */

static ZEND_INI_MH(OnUpdateStoreSetting) {
  const char *name = ZSTR_VAL(entry->name) + sizeof("ephpm.") - 1;
  /* php.ini's parser turns a bare Off (also No, False, None) into "": for
   * ephpm.compression that is the documented "off", not an invalid value. */
  if (ZSTR_LEN(new_value) == 0 &&
      (strcmp(name, "compression") == 0 || strcmp(name, "persistence") == 0)) {
    static char off[] = "off";
    *(char **)ZEND_INI_GET_ADDR() = off;
    return SUCCESS;
  }
  char err[256];
  if (!ephpm_store_setting_check(name, ZSTR_VAL(new_value), err, sizeof err)) {
    zend_error(E_WARNING, "Invalid %s value \"%s\": %s; keeping %s", ZSTR_VAL(entry->name),
               ZSTR_VAL(new_value), err,
               entry->value ? ZSTR_VAL(entry->value) : "the default");
    return FAILURE;
  }
  return OnUpdateString(entry, new_value, mh_arg1, mh_arg2, mh_arg3, stage);
}

#define EPHPM_STORE_INI(name, default, index)                                         \
  STD_PHP_INI_ENTRY("ephpm." name, default, PHP_INI_SYSTEM, OnUpdateStoreSetting,     \
                    store_settings[index], zend_ephpm_globals, ephpm_globals)

/* Session settings may change per request (ini_set before session_start). */

static void refuse_setting(zend_ini_entry *entry, zend_string *new_value, const char *why) {
  zend_error(E_WARNING, "Invalid %s value \"%s\": %s; keeping %s", ZSTR_VAL(entry->name),
             ZSTR_VAL(new_value), why, entry->value ? ZSTR_VAL(entry->value) : "the default");
}

/* A whole number of milliseconds from minimum to EPHPM_KV_MAX_TTL_MS, the
 * longest TTL the store accepts (a lock TTL past it would overflow "now +
 * ttl" in the store): digits (and an optional '-', so that "-1" is refused
 * by the range rather than misread), nothing else. */
static bool parse_ms(zend_string *text, zend_long minimum, zend_long *out) {
  const char *p = ZSTR_VAL(text);
  const size_t n = ZSTR_LEN(text);
  size_t i = (n > 0 && p[0] == '-') ? 1 : 0;
  if (i == n || n > 20) return false;
  for (; i < n; ++i) {
    if (p[i] < '0' || p[i] > '9') return false;
  }
  /* saturates at ZEND_LONG_MIN/MAX, which the range refuses */
  const zend_long v = ZEND_STRTOL(p, NULL, 10);
  if (v < minimum || v > EPHPM_KV_MAX_TTL_MS) return false;
  *out = v;
  return true;
}

/* The backoff bounds must stay ordered: min <= max.  Checked when one of
 * them changes in a request (ini_set, ini_restore, a per-directory setting).
 * Not at startup, where the entries are registered one by one (min before
 * max: a check there would compare min with a max that is still 0, or max
 * with a min the pair check then refuses); check_backoff_pair() checks the
 * pair once both are in.  Not when a request's changes are undone either:
 * they are undone one by one, in the order they were made, and every
 * intermediate pair may be inverted while the end state is the startup
 * pair; a refused restore would leave the global out of step with the
 * entry. */
static bool backoff_order_ok(zend_ini_entry *entry, zend_string *new_value, zend_long *field,
                             zend_long v, int stage) {
  if (stage == ZEND_INI_STAGE_STARTUP || stage == ZEND_INI_STAGE_DEACTIVATE) return true;
  char why[96];
  if (field == &EPHPM_G(session_lock_backoff_max_ms) && v < EPHPM_G(session_lock_backoff_min_ms)) {
    snprintf(why, sizeof why, "must be at least ephpm.session_lock_backoff_min_ms (" ZEND_LONG_FMT
             ")", EPHPM_G(session_lock_backoff_min_ms));
    refuse_setting(entry, new_value, why);
    return false;
  }
  if (field == &EPHPM_G(session_lock_backoff_min_ms) && v > EPHPM_G(session_lock_backoff_max_ms)) {
    snprintf(why, sizeof why, "must be at most ephpm.session_lock_backoff_max_ms (" ZEND_LONG_FMT
             ")", EPHPM_G(session_lock_backoff_max_ms));
    refuse_setting(entry, new_value, why);
    return false;
  }
  return true;
}

static ZEND_INI_MH(OnUpdateSessionMs) {
  /* mh_arg2: the field; mh_arg3: the minimum as text */
  const zend_long minimum = ZEND_STRTOL((const char *)mh_arg3, NULL, 10);
  zend_long v;
  if (!parse_ms(new_value, minimum, &v)) {
    char why[128];
    snprintf(why, sizeof why,
             "must be a whole number of milliseconds from " ZEND_LONG_FMT " to %" PRId64
             " (the longest TTL the store accepts)",
             minimum, (int64_t)EPHPM_KV_MAX_TTL_MS);
    refuse_setting(entry, new_value, why);
    return FAILURE;
  }
  zend_long *field = (zend_long *)ZEND_INI_GET_ADDR();
  if (!backoff_order_ok(entry, new_value, field, v, stage)) return FAILURE;
  *field = v;
  return SUCCESS;
}

#ifdef ZTS
#define EPHPM_GLOBALS_BASE ((void *)&ephpm_globals_id)
#else
#define EPHPM_GLOBALS_BASE ((void *)&ephpm_globals)
#endif

#define EPHPM_BACKOFF_MIN_DEFAULT "10"
#define EPHPM_BACKOFF_MAX_DEFAULT "100"

/* "ephpm.session_lock_<name>_ms", at least `minimum` (a string literal). */
#define EPHPM_SESSION_MS_INI(name, default, minimum)                                      \
  ZEND_INI_ENTRY3_EX("ephpm.session_lock_" #name "_ms", default, PHP_INI_ALL,            \
                     OnUpdateSessionMs,                                                   \
                     (void *)XtOffsetOf(zend_ephpm_globals, session_lock_##name##_ms),     \
                     EPHPM_GLOBALS_BASE, (void *)minimum, NULL)

static ZEND_INI_MH(OnUpdateLockFailure) {
  zend_long mode;
  if (zend_string_equals_literal_ci(new_value, "proceed")) {
    mode = EPHPM_LOCK_FAILURE_PROCEED;
  } else if (zend_string_equals_literal_ci(new_value, "fail")) {
    mode = EPHPM_LOCK_FAILURE_FAIL;
  } else if (zend_string_equals_literal_ci(new_value, "readonly")) {
    mode = EPHPM_LOCK_FAILURE_READONLY;
  } else {
    refuse_setting(entry, new_value, "must be proceed, fail or readonly");
    return FAILURE;
  }
  *(zend_long *)ZEND_INI_GET_ADDR() = mode;
  return SUCCESS;
}

static ZEND_INI_MH(OnUpdateSessionPrefix) {
  /* The id goes inside {} so data and lock share a cluster owner: a brace
   * in the prefix would become the hash tag instead. */
  if (ZSTR_LEN(new_value) == 0 || memchr(ZSTR_VAL(new_value), '{', ZSTR_LEN(new_value)) ||
      memchr(ZSTR_VAL(new_value), '}', ZSTR_LEN(new_value))) {
    refuse_setting(entry, new_value, "must be non-empty and contain no { or }");
    return FAILURE;
  }
  return OnUpdateString(entry, new_value, mh_arg1, mh_arg2, mh_arg3, stage);
}

/* Same order as ephpm_store_setting_names (ephpm_bridge.h). */
PHP_INI_BEGIN()
EPHPM_STORE_INI("memory_limit", "0", 0)
EPHPM_STORE_INI("eviction_policy", "noeviction", 1)
EPHPM_STORE_INI("compression", "off", 2)
EPHPM_STORE_INI("compression_threshold", "1024", 3)
EPHPM_STORE_INI("compression_level", "3", 4)
EPHPM_STORE_INI("max_value_size", "512M", 5)
EPHPM_STORE_INI("shards", "64", 6)
EPHPM_STORE_INI("persistence", "off", 7)
EPHPM_STORE_INI("data_dir", "", 8)
EPHPM_STORE_INI("fsync", "everysec", 9)
STD_PHP_INI_ENTRY("ephpm.session_prefix", "session", PHP_INI_ALL, OnUpdateSessionPrefix,
                  session_prefix, zend_ephpm_globals, ephpm_globals)
STD_PHP_INI_BOOLEAN("ephpm.session_locking", "1", PHP_INI_ALL, OnUpdateBool, session_locking,
                    zend_ephpm_globals, ephpm_globals)
EPHPM_SESSION_MS_INI(ttl, "30000", "1")
EPHPM_SESSION_MS_INI(wait, "30000", "0")
EPHPM_SESSION_MS_INI(backoff_min, EPHPM_BACKOFF_MIN_DEFAULT, "1")
EPHPM_SESSION_MS_INI(backoff_max, EPHPM_BACKOFF_MAX_DEFAULT, "1")
STD_PHP_INI_ENTRY("ephpm.session_lock_failure", "proceed", PHP_INI_ALL, OnUpdateLockFailure,
                  session_lock_failure, zend_ephpm_globals, ephpm_globals)
PHP_INI_END()

/* ---- module ---------------------------------------------------------------- */

static PHP_GINIT_FUNCTION(ephpm) {
#if defined(COMPILE_DL_EPHPM) && defined(ZTS)
  ZEND_TSRMLS_CACHE_UPDATE();
#endif
  memset(ephpm_globals, 0, sizeof *ephpm_globals);
}

/* SAPIs that run requests in several processes: each gets its own
 * standalone store, so locks and sessions do not reach across them. */
static bool sapi_is_multi_process(void) {
  static const char *const names[] = {"fpm-fcgi", "cgi-fcgi", "apache2handler", "litespeed"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    if (sapi_module.name != NULL && strcmp(sapi_module.name, names[i]) == 0) return true;
  }
  return false;
}

/* Puts an entry back to its default at startup: the entry's value and the
 * global both, so that ini_get() and the handler agree. */
static void reset_to_default(const char *name, const char *default_value) {
  zend_ini_entry *entry = zend_hash_str_find_ptr(EG(ini_directives), name, strlen(name));
  if (entry == NULL) return;
  zend_string *value = zend_string_init_interned(default_value, strlen(default_value), 1);
  entry->on_modify(entry, value, entry->mh_arg1, entry->mh_arg2, entry->mh_arg3,
                   ZEND_INI_STAGE_STARTUP);
  if (entry->value != NULL) zend_string_release(entry->value);
  entry->value = value;
}

/* The startup half of backoff_order_ok(), once both bounds are registered.
 * Which of two settings is wrong cannot be known, so an inverted pair is
 * refused as set: the bound (or both bounds) not at its default goes back to
 * it, and the defaults are ordered. */
static void check_backoff_pair(void) {
  const zend_long min = EPHPM_G(session_lock_backoff_min_ms);
  const zend_long max = EPHPM_G(session_lock_backoff_max_ms);
  if (min <= max) return;
  const bool min_set = min != ZEND_STRTOL(EPHPM_BACKOFF_MIN_DEFAULT, NULL, 10);
  const bool max_set = max != ZEND_STRTOL(EPHPM_BACKOFF_MAX_DEFAULT, NULL, 10);
  char why[320];
  if (min_set && max_set) {
    snprintf(why, sizeof why,
             "Invalid ephpm.session_lock_backoff_min_ms and ephpm.session_lock_backoff_max_ms "
             "values \"" ZEND_LONG_FMT "\" and \"" ZEND_LONG_FMT "\": the minimum must not exceed "
             "the maximum; keeping " EPHPM_BACKOFF_MIN_DEFAULT " and " EPHPM_BACKOFF_MAX_DEFAULT,
             min, max);
  } else if (min_set) {
    snprintf(why, sizeof why,
             "Invalid ephpm.session_lock_backoff_min_ms value \"" ZEND_LONG_FMT
             "\": must be at most ephpm.session_lock_backoff_max_ms (" ZEND_LONG_FMT
             "); keeping " EPHPM_BACKOFF_MIN_DEFAULT,
             min, max);
  } else {
    snprintf(why, sizeof why,
             "Invalid ephpm.session_lock_backoff_max_ms value \"" ZEND_LONG_FMT
             "\": must be at least ephpm.session_lock_backoff_min_ms (" ZEND_LONG_FMT
             "); keeping " EPHPM_BACKOFF_MAX_DEFAULT,
             max, min);
  }
  if (min_set) reset_to_default("ephpm.session_lock_backoff_min_ms", EPHPM_BACKOFF_MIN_DEFAULT);
  if (max_set) reset_to_default("ephpm.session_lock_backoff_max_ms", EPHPM_BACKOFF_MAX_DEFAULT);
  zend_error(E_WARNING, "%s", why);
}

/* ephpm.persistence=log: the standalone store is made now rather than on
 * first use, so that a data dir that cannot be used (missing ephpm.data_dir,
 * not writable, held by another process) stops PHP at startup instead of
 * letting scripts run on a store that keeps nothing.  A multi-process SAPI
 * is refused: each worker process would need the data dir, and only one
 * process can hold it.  A host's table (installed before PHP starts) has
 * its own store and settings: nothing to do then. */
static zend_result start_persistent_store(void) {
  const char *const *values = (const char *const *)EPHPM_G(store_settings);
  if (!ephpm_store_settings_persistent(values) || strcmp(ephpm_ops_mode(), "host") == 0) {
    return SUCCESS;
  }
  if (sapi_is_multi_process()) {
    zend_error(E_WARNING,
               "ephpm: ephpm.persistence=log is not possible under %s: every worker process has "
               "its own store, and only one process can hold a data dir; run PHP in the ephpm "
               "host program (ephpm --data-dir DIR)",
               sapi_module.name);
    return FAILURE;
  }
  char err[512];
  if (ephpm_standalone_ops(values, err, sizeof err) == NULL) {
    zend_error(E_WARNING, "ephpm: cannot start the store: %s", err);
    return FAILURE;
  }
  return SUCCESS;
}

static PHP_MINIT_FUNCTION(ephpm) {
  REGISTER_INI_ENTRIES();
  check_backoff_pair();
  if (php_session_register_module(&ps_mod_ephpm) == FAILURE) return FAILURE;
  ephpm_lock_init_class(register_class_Ephpm_Lock());
#ifdef EPHPM_TEST_HOOKS
  ephpm_test_hooks_register(module_number);
#endif
  if (start_persistent_store() == FAILURE) return FAILURE;
  if (strcmp(ephpm_ops_mode(), "standalone") == 0 && sapi_is_multi_process()) {
    zend_error(E_NOTICE,
               "ephpm: standalone mode under %s: every worker process has its own store, so "
               "locks and sessions do not reach across processes; run PHP in the ephpm host "
               "program for one shared store",
               sapi_module.name);
  }
  return SUCCESS;
}

static PHP_MSHUTDOWN_FUNCTION(ephpm) {
  UNREGISTER_INI_ENTRIES();
  ephpm_standalone_shutdown();
  return SUCCESS;
}

/* Locks still held when the request ends go back (exit() and fatal errors
 * reach here too; objects still alive are freed only after this). */
static PHP_RSHUTDOWN_FUNCTION(ephpm) {
  ephpm_lock_request_shutdown();
#ifdef EPHPM_TEST_HOOKS
  ephpm_test_hooks_request_shutdown();
#endif
  return SUCCESS;
}

static PHP_MINFO_FUNCTION(ephpm) {
  php_info_print_table_start();
  php_info_print_table_row(2, "ephpm support", "enabled");
  php_info_print_table_row(2, "Version", PHP_EPHPM_VERSION);
  php_info_print_table_row(2, "Mode", ephpm_ops_mode());
  char buf[64];
  snprintf(buf, sizeof buf, "%u", EPHPM_KV_ABI_VERSION);
  php_info_print_table_row(2, "Ops ABI version (extension)", buf);
  uint32_t abi = 0, size = 0;
  if (ephpm_ops_describe(&abi, &size)) {
    snprintf(buf, sizeof buf, "%u, %u bytes", abi, size);
    php_info_print_table_row(2, "Ops table in use", buf);
  } else if (ephpm_ops_host_error()[0] != '\0') {
    php_info_print_table_row(2, "Ops table in use", ephpm_ops_host_error());
  } else {
    php_info_print_table_row(2, "Ops table in use", "none yet (made on first use)");
  }
  if (strcmp(ephpm_ops_mode(), "standalone") == 0 && sapi_is_multi_process()) {
    php_info_print_table_row(2, "Note",
                             "one store per worker process: locks and sessions do not reach "
                             "across processes");
  }
  php_info_print_table_end();
  DISPLAY_INI_ENTRIES();
}

static const zend_module_dep ephpm_deps[] = {
    ZEND_MOD_REQUIRED("session")
    ZEND_MOD_END
};

zend_module_entry ephpm_module_entry = {
    STANDARD_MODULE_HEADER_EX,
    NULL,
    ephpm_deps,
    "ephpm",
    ext_functions,
    PHP_MINIT(ephpm),
    PHP_MSHUTDOWN(ephpm),
    NULL,
    PHP_RSHUTDOWN(ephpm),
    PHP_MINFO(ephpm),
    PHP_EPHPM_VERSION,
    PHP_MODULE_GLOBALS(ephpm),
    PHP_GINIT(ephpm),
    NULL,
    NULL,
    STANDARD_MODULE_PROPERTIES_EX,
};

#ifdef COMPILE_DL_EPHPM
#ifdef ZTS
ZEND_TSRMLS_CACHE_DEFINE()
#endif
ZEND_GET_MODULE(ephpm)
#endif
