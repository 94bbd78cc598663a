/* The ephpm extension: ephpm_kv_* functions over the ops table.
 *
 * Every function parses its arguments, makes one call through the table, and
 * builds its return value after the call returned: the store never runs PHP's
 * allocator under one of its locks, and a memory_limit bailout cannot leave a
 * store lock held. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "SAPI.h"
#include "ephpm_bridge.h"
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
#endif

/* ---- INI ------------------------------------------------------------------
 * Store settings are read when the store is made, so they are PHP_INI_SYSTEM.
 * An invalid value is refused with a warning and the default stays. */

static ZEND_INI_MH(OnUpdateStoreSetting) {
  const char *name = ZSTR_VAL(entry->name) + sizeof("ephpm.") - 1;
  /* php.ini's parser turns a bare Off (also No, False, None) into "": for
   * ephpm.compression that is the documented "off", not an invalid value. */
  if (ZSTR_LEN(new_value) == 0 && strcmp(name, "compression") == 0) {
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

/* ---- argument checks and status reporting -------------------------------- */

static bool check_key(const zend_string *key, uint32_t arg) {
  if (ZSTR_LEN(key) == 0) {
    zend_argument_value_error(arg, "must not be empty");
    return false;
  }
  if (ZSTR_LEN(key) > EPHPM_KV_MAX_KEY_SIZE) {
    zend_argument_value_error(arg, "must not be longer than %u bytes", EPHPM_KV_MAX_KEY_SIZE);
    return false;
  }
  return true;
}

/* A TTL argument in units of `unit_ms` milliseconds, to milliseconds. */
static bool ttl_to_ms(zend_long ttl, int64_t unit_ms, uint32_t arg, int64_t *ms) {
  if (ttl < 0) {
    zend_argument_value_error(arg, "must be greater than or equal to 0");
    return false;
  }
  if (ttl > EPHPM_KV_MAX_TTL_MS / unit_ms) {
    zend_argument_value_error(arg, "must be less than or equal to " ZEND_LONG_FMT,
                              (zend_long)(EPHPM_KV_MAX_TTL_MS / unit_ms));
    return false;
  }
  *ms = (int64_t)ttl * unit_ms;
  return true;
}

static void store_info(const ephpm_kv_ops *ops, ephpm_kv_info *info) {
  memset(info, 0, sizeof *info);
  info->size = sizeof *info;
  if (EPHPM_KV_OPS_HAS(ops, info)) ops->info(ops->ctx, info);
}

/* Reports a status other than OK the PHP way: an exception for errors in the
 * caller's data, a warning for conditions of the store (the caller then
 * returns false).  `value_arg` is the argument number of the value, for an
 * INVALID_ARGUMENT after the key was checked. */
static void report(const ephpm_kv_ops *ops, int status, uint32_t value_arg) {
  ephpm_kv_info info;
  switch (status) {
    case EPHPM_KV_OUT_OF_MEMORY:
      store_info(ops, &info);
      if (info.memory_limit != 0) {
        php_error_docref(NULL, E_WARNING,
                         "Out of memory: the store's memory limit of %" PRIu64
                         " bytes (ephpm.memory_limit) is reached",
                         info.memory_limit);
      } else {
        php_error_docref(NULL, E_WARNING, "Out of memory: the store could not allocate");
      }
      return;
    case EPHPM_KV_OWNER_UNREACHABLE:
      php_error_docref(NULL, E_WARNING, "The key's owner is unreachable, the outcome is unknown");
      return;
    case EPHPM_KV_WRONG_TYPE:
      zend_throw_error(NULL, "WRONGTYPE Operation against a key holding the wrong kind of value");
      return;
    case EPHPM_KV_NOT_INTEGER:
      zend_throw_error(NULL, "The value is not an integer or out of range");
      return;
    case EPHPM_KV_OVERFLOW:
      zend_throw_error(NULL, "Increment or decrement would overflow");
      return;
    case EPHPM_KV_INVALID_ARGUMENT:
      if (value_arg != 0) {
        store_info(ops, &info);
        zend_argument_value_error(value_arg,
                                  "must not be longer than %" PRIu64
                                  " bytes (ephpm.max_value_size)",
                                  info.max_value_size);
      } else {
        zend_value_error("Invalid argument");
      }
      return;
    default:
      zend_throw_error(NULL, "ephpm: unexpected store status %d (%s)", status,
                       ephpm_kv_status_name(status));
      return;
  }
}

/* For functions whose return type has no false: a status that report()
 * would only warn about (out of memory, owner unreachable) becomes an Error,
 * since there is no honest value to return. */
static void report_and_throw(const ephpm_kv_ops *ops, int status) {
  report(ops, status, 0);
  if (!EG(exception)) {
    zend_throw_error(NULL, "%s(): %s", get_active_function_name(),
                     status == EPHPM_KV_OWNER_UNREACHABLE
                         ? "the key's owner is unreachable, the outcome is unknown"
                         : ephpm_kv_status_name(status));
  }
}

/* ---- strings --------------------------------------------------------------- */

PHP_FUNCTION(ephpm_kv_get) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();

  int st;
  if (EPHPM_KV_OPS_HAS(ops, get_into)) {
    /* Small values land in a stack buffer; a larger one is measured, then
     * read straight into a string of its size (asking again if it changed
     * meanwhile).  No malloc, and PHP allocates only between store calls. */
    char small[512];
    size_t len = 0;
    st = ops->get_into(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), small, sizeof small, &len);
    if (st == EPHPM_KV_OK && len <= sizeof small) RETURN_STRINGL(small, len);
    while (st == EPHPM_KV_OK) {
      zend_string *out = zend_string_alloc(len, 0);
      size_t got = 0;
      st = ops->get_into(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(out), len, &got);
      if (st == EPHPM_KV_OK && got <= len) {
        ZSTR_LEN(out) = got;
        ZSTR_VAL(out)[got] = '\0';
        RETURN_NEW_STR(out);
      }
      zend_string_efree(out);
      len = got;
    }
  } else {
    char *value = NULL;
    size_t len = 0;
    st = ops->get(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &value, &len);
    if (st == EPHPM_KV_OK) {
      zend_string *out = zend_string_init(value, len, 0);
      free(value);
      RETURN_NEW_STR(out);
    }
  }
  if (st == EPHPM_KV_NOT_FOUND) RETURN_NULL();
  report(ops, st, 0);
  if (EG(exception)) RETURN_THROWS();
  RETURN_NULL();
}

/* ephpm_kv_set and ephpm_kv_setnx share their parsing and reporting. */
static void set_generic(INTERNAL_FUNCTION_PARAMETERS, bool only_if_absent) {
  zend_string *key, *value;
  zend_long ttl = 0;
  ZEND_PARSE_PARAMETERS_START(2, 3)
    Z_PARAM_STR(key)
    Z_PARAM_STR(value)
    Z_PARAM_OPTIONAL
    Z_PARAM_LONG(ttl)
  ZEND_PARSE_PARAMETERS_END();
  int64_t ttl_ms;
  if (!check_key(key, 1) || !ttl_to_ms(ttl, 1000, 3, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();

  int inserted = 1;
  const int st = only_if_absent
                     ? ops->set_nx(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(value),
                                   ZSTR_LEN(value), ttl_ms, &inserted)
                     : ops->set(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(value),
                                ZSTR_LEN(value), ttl_ms);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 2);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(inserted);
}

PHP_FUNCTION(ephpm_kv_set) { set_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, false); }

PHP_FUNCTION(ephpm_kv_setnx) { set_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, true); }

PHP_FUNCTION(ephpm_kv_del) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t removed = 0;
  const int st = ops->del(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &removed);
  if (st != EPHPM_KV_OK) {
    report_and_throw(ops, st);
    RETURN_THROWS();
  }
  RETURN_LONG((zend_long)removed);
}

PHP_FUNCTION(ephpm_kv_del_if_eq) {
  zend_string *key, *token;
  ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STR(key)
    Z_PARAM_STR(token)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, del_if_eq)) RETURN_THROWS();
  int deleted = 0;
  const int st = ops->del_if_eq(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(token),
                                ZSTR_LEN(token), &deleted);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 2);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(deleted);
}

PHP_FUNCTION(ephpm_kv_exists) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int exists = 0;
  const int st = ops->exists(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &exists);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(exists);
}

/* incr, decr and incr_by share one path. */
static void incr_generic(INTERNAL_FUNCTION_PARAMETERS, zend_string *key, zend_long delta) {
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t result = 0;
  const int st = ops->incr_by(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), (int64_t)delta, &result);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_LONG((zend_long)result);
}

PHP_FUNCTION(ephpm_kv_incr) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  incr_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, key, 1);
}

PHP_FUNCTION(ephpm_kv_decr) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  incr_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, key, -1);
}

PHP_FUNCTION(ephpm_kv_incr_by) {
  zend_string *key;
  zend_long delta;
  ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STR(key)
    Z_PARAM_LONG(delta)
  ZEND_PARSE_PARAMETERS_END();
  incr_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, key, delta);
}

/* ---- expiry ---------------------------------------------------------------- */

static void expire_generic(INTERNAL_FUNCTION_PARAMETERS, int64_t unit_ms) {
  zend_string *key;
  zend_long ttl;
  ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STR(key)
    Z_PARAM_LONG(ttl)
  ZEND_PARSE_PARAMETERS_END();
  int64_t ttl_ms;
  if (!check_key(key, 1) || !ttl_to_ms(ttl, unit_ms, 2, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int applied = 0;
  /* A TTL of 0 deletes the key, as EXPIRE k 0 does in Redis. */
  const int st = ops->expire(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ttl_ms, &applied);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(applied);
}

PHP_FUNCTION(ephpm_kv_expire) { expire_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, 1000); }

PHP_FUNCTION(ephpm_kv_pexpire) { expire_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, 1); }

PHP_FUNCTION(ephpm_kv_persist) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, persist)) RETURN_THROWS();
  int applied = 0;
  const int st = ops->persist(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &applied);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(applied);
}

static void ttl_generic(INTERNAL_FUNCTION_PARAMETERS, bool seconds) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t ms = 0;
  const int st = ops->pttl(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &ms);
  if (st != EPHPM_KV_OK) {
    report_and_throw(ops, st);
    RETURN_THROWS();
  }
  /* Redis's TTL rounds to the nearest second: (ms + 500) / 1000. */
  if (seconds && ms >= 0) ms = (ms + 500) / 1000;
  RETURN_LONG((zend_long)ms);
}

PHP_FUNCTION(ephpm_kv_ttl) { ttl_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, true); }

PHP_FUNCTION(ephpm_kv_pttl) { ttl_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, false); }

/* ---- keyspace -------------------------------------------------------------- */

/* Builds a PHP list from a store list; NULL items become null. */
static void list_to_array(zval *return_value, const ephpm_kv_list *list) {
  array_init_size(return_value, (uint32_t)list->count);
  for (size_t i = 0; i < list->count; ++i) {
    if (list->items[i].data == NULL) {
      add_next_index_null(return_value);
    } else {
      add_next_index_stringl(return_value, list->items[i].data, list->items[i].len);
    }
  }
}

PHP_FUNCTION(ephpm_kv_mget) {
  HashTable *keys;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_ARRAY_HT(keys)
  ZEND_PARSE_PARAMETERS_END();

  const uint32_t count = zend_hash_num_elements(keys);
  /* Keys are checked and converted to strings first (PHP allocation is fine
   * here: no store call is in progress). */
  zend_string **strs = safe_emalloc(count ? count : 1, sizeof(zend_string *), 0);
  ephpm_kv_bytes *spans = safe_emalloc(count ? count : 1, sizeof(ephpm_kv_bytes), 0);
  uint32_t n = 0;
  zval *entry;
  bool ok = true;
  ZEND_HASH_FOREACH_VAL(keys, entry) {
    ZVAL_DEREF(entry);
    /* Each element converts as a string parameter would (coercive mode:
     * int, float, bool, Stringable; strict mode: strings only), on a copy, so
     * that the caller's array is never changed. */
    zval copy;
    ZVAL_COPY(&copy, entry);
    zend_string *str;
    if (!zend_parse_arg_str(&copy, &str, false, 1)) {
      zval_ptr_dtor(&copy);
      if (!EG(exception)) {
        zend_argument_type_error(1, "must contain only strings, %s given",
                                 zend_zval_type_name(entry));
      }
      ok = false;
      break;
    }
    strs[n] = zend_string_copy(str);
    zval_ptr_dtor(&copy);
    spans[n].data = ZSTR_VAL(strs[n]);
    spans[n].len = ZSTR_LEN(strs[n]);
    ++n;
    if (ZSTR_LEN(strs[n - 1]) == 0 || ZSTR_LEN(strs[n - 1]) > EPHPM_KV_MAX_KEY_SIZE) {
      zend_argument_value_error(1, "must contain only keys of 1 to %u bytes",
                                EPHPM_KV_MAX_KEY_SIZE);
      ok = false;
      break;
    }
  }
  ZEND_HASH_FOREACH_END();

  const ephpm_kv_ops *ops = ok ? ephpm_ops_get() : NULL;
  ephpm_kv_list *values = NULL;
  int st = EPHPM_KV_OK;
  if (ops != NULL && EPHPM_OPS_REQUIRE(ops, mget)) {
    st = ops->mget(ops->ctx, spans, n, &values);
  }
  for (uint32_t i = 0; i < n; ++i) zend_string_release(strs[i]);
  efree(strs);
  efree(spans);
  if (EG(exception)) RETURN_THROWS();
  if (st != EPHPM_KV_OK) {
    report_and_throw(ops, st);
    RETURN_THROWS();
  }
  list_to_array(return_value, values);
  free(values);
}

PHP_FUNCTION(ephpm_kv_keys) {
  zend_string *pattern = NULL;
  ZEND_PARSE_PARAMETERS_START(0, 1)
    Z_PARAM_OPTIONAL
    Z_PARAM_STR(pattern)
  ZEND_PARSE_PARAMETERS_END();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, keys)) RETURN_THROWS();
  ephpm_kv_list *keys = NULL;
  const int st = pattern ? ops->keys(ops->ctx, ZSTR_VAL(pattern), ZSTR_LEN(pattern), &keys)
                         : ops->keys(ops->ctx, "*", 1, &keys);
  if (st != EPHPM_KV_OK) {
    report_and_throw(ops, st);
    RETURN_THROWS();
  }
  list_to_array(return_value, keys);
  free(keys);
}

PHP_FUNCTION(ephpm_kv_flush_all) {
  ZEND_PARSE_PARAMETERS_NONE();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  const int st = ops->flush_all(ops->ctx);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_TRUE;
}

/* ---- waiting --------------------------------------------------------------- */

PHP_FUNCTION(ephpm_kv_wait) {
  zend_string *key;
  zend_long last_version, timeout_ms;
  ZEND_PARSE_PARAMETERS_START(3, 3)
    Z_PARAM_STR(key)
    Z_PARAM_LONG(last_version)
    Z_PARAM_LONG(timeout_ms)
  ZEND_PARSE_PARAMETERS_END();
  if (!check_key(key, 1)) RETURN_THROWS();
  if (last_version < 0) {
    zend_argument_value_error(2, "must be greater than or equal to 0");
    RETURN_THROWS();
  }
  if (timeout_ms < 0) {
    zend_argument_value_error(3, "must be greater than or equal to 0");
    RETURN_THROWS();
  }
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int changed = 0, found = 0;
  char *value = NULL;
  size_t len = 0;
  uint64_t version = 0;
  const int st = ops->wait(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), (uint64_t)last_version,
                           (int64_t)timeout_ms, &changed, &found, &value, &len, &version);
  if (st != EPHPM_KV_OK) {
    report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  if (!changed) RETURN_FALSE;
  array_init_size(return_value, 2);
  if (found) {
    add_assoc_stringl(return_value, "value", value, len);
    free(value);
  } else {
    add_assoc_null(return_value, "value");
  }
  add_assoc_long(return_value, "version", (zend_long)version);
}

/* ---- introspection --------------------------------------------------------- */

/* The cluster part of ephpm_kv_info(): node_id and address, every counter
 * by name, and 'members', a list of [id, address, state, incarnation]. */
static void cluster_array(zval *out, const ephpm_kv_cluster_state *cs) {
  zval members;
  array_init(out);
  add_assoc_string(out, "node_id", (char *)cs->node_id);
  add_assoc_string(out, "address", (char *)cs->address);
  for (size_t i = 0; i < cs->counter_count; i++) {
    add_assoc_long(out, cs->counters[i].name, (zend_long)cs->counters[i].value);
  }
  array_init_size(&members, (uint32_t)cs->member_count);
  for (size_t i = 0; i < cs->member_count; i++) {
    const ephpm_kv_cluster_member *m = &cs->members[i];
    zval entry;
    array_init_size(&entry, 4);
    add_assoc_string(&entry, "id", (char *)m->id);
    add_assoc_string(&entry, "address", (char *)m->address);
    add_assoc_string(&entry, "state", (char *)m->state);
    add_assoc_long(&entry, "incarnation", (zend_long)m->incarnation);
    add_next_index_zval(&members, &entry);
  }
  add_assoc_zval(out, "members", &members);
}

PHP_FUNCTION(ephpm_kv_info) {
  ZEND_PARSE_PARAMETERS_NONE();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, info)) RETURN_THROWS();
  ephpm_kv_info info;
  store_info(ops, &info);
  array_init(return_value);
  add_assoc_long(return_value, "keys", (zend_long)info.keys);
  add_assoc_long(return_value, "memory_used", (zend_long)info.memory_used);
  add_assoc_long(return_value, "memory_limit", (zend_long)info.memory_limit);
  add_assoc_long(return_value, "max_value_size", (zend_long)info.max_value_size);
  add_assoc_long(return_value, "hits", (zend_long)info.hits);
  add_assoc_long(return_value, "misses", (zend_long)info.misses);
  add_assoc_long(return_value, "expired", (zend_long)info.expired);
  add_assoc_long(return_value, "evicted", (zend_long)info.evicted);
  add_assoc_long(return_value, "compressed_values", (zend_long)info.compressed_values);
  add_assoc_long(return_value, "compressed_original_bytes",
                 (zend_long)info.compressed_original_bytes);
  add_assoc_long(return_value, "compressed_stored_bytes",
                 (zend_long)info.compressed_stored_bytes);
  /* original / stored over the compressed values; 1.0 when there are none */
  add_assoc_double(return_value, "compression_ratio",
                   info.compressed_stored_bytes == 0
                       ? 1.0
                       : (double)info.compressed_original_bytes /
                             (double)info.compressed_stored_bytes);
  /* live locks (set_nx with a TTL), which the memory policy never evicts */
  add_assoc_long(return_value, "pinned_keys", (zend_long)info.pinned_keys);
  add_assoc_long(return_value, "pinned_bytes", (zend_long)info.pinned_bytes);
  add_assoc_string(return_value, "mode", (char *)ephpm_ops_mode());
  ephpm_session_counters sc;
  ephpm_session_get_counters(&sc);
  add_assoc_long(return_value, "session_lock_acquired", (zend_long)sc.lock_acquired);
  add_assoc_long(return_value, "session_lock_waits", (zend_long)sc.lock_waits);
  add_assoc_long(return_value, "session_lock_timeouts", (zend_long)sc.lock_timeouts);
  add_assoc_long(return_value, "session_stale_releases_refused", (zend_long)sc.stale_releases);
  add_assoc_long(return_value, "session_fenced_writes_refused", (zend_long)sc.fenced_refused);
  /* null for a single node (or a host whose table predates cluster_state) */
  ephpm_kv_cluster_state *cs = NULL;
  int st = EPHPM_KV_OK;
  if (EPHPM_KV_OPS_HAS(ops, cluster_state)) {
    st = ops->cluster_state(ops->ctx, &cs);
    if (st != EPHPM_KV_OK) report(ops, st, 0); /* a warning; the rest stands */
  }
  if (st == EPHPM_KV_OK && cs != NULL) {
    zval cluster;
    cluster_array(&cluster, cs);
    free(cs);
    add_assoc_zval(return_value, "cluster", &cluster);
  } else {
    add_assoc_null(return_value, "cluster");
  }
}

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

static PHP_MINIT_FUNCTION(ephpm) {
  REGISTER_INI_ENTRIES();
  check_backoff_pair();
  if (php_session_register_module(&ps_mod_ephpm) == FAILURE) return FAILURE;
#ifdef EPHPM_TEST_HOOKS
  ephpm_test_hooks_register(module_number);
#endif
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
    NULL,
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
