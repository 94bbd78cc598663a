/* The ephpm_kv_* functions over the ops table (the INI settings and the
 * module entry are in ephpm.c).
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

#include "ephpm_bridge.h"
#include "ephpm_ops.h"
#include "ephpm_report.h"
#include "ephpm_session.h"
#include "php.h"
#include "php_ephpm.h"

/* ---- argument checks and status reporting -------------------------------- */

bool ephpm_check_key(const zend_string *key, uint32_t arg) {
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

bool ephpm_ttl_to_ms(zend_long ttl, int64_t unit_ms, uint32_t arg, int64_t *ms) {
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

/* The persistence state, or NULL (a host table without the op, or no
 * memory for it).  free(3) it. */
static ephpm_kv_persistence *persistence_state(const ephpm_kv_ops *ops) {
  ephpm_kv_persistence *ps = NULL;
  if (!EPHPM_KV_OPS_HAS(ops, persistence_state)) return NULL;
  if (ops->persistence_state(ops->ctx, &ps) != EPHPM_KV_OK) return NULL;
  return ps;
}

void ephpm_report(const ephpm_kv_ops *ops, int status, uint32_t value_arg) {
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
    case EPHPM_KV_PERSISTENCE_ERROR: {
      /* Redis's words for a write refused while its AOF cannot be written.
       * The reason is copied out before the warning, which may run user
       * code. */
      char reason[256] = "";
      ephpm_kv_persistence *ps = persistence_state(ops);
      if (ps != NULL && ps->write_error != NULL) {
        snprintf(reason, sizeof reason, "%s", ps->write_error);
      }
      free(ps);
      php_error_docref(NULL, E_WARNING, "Errors writing to the AOF file: %s",
                       reason[0] != '\0' ? reason : ephpm_kv_status_name(status));
      return;
    }
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

/* For functions whose return type has no false: a status that ephpm_report()
 * would only warn about (out of memory, owner unreachable) becomes an Error,
 * since there is no honest value to return. */
void ephpm_report_and_throw(const ephpm_kv_ops *ops, int status) {
  ephpm_report(ops, status, 0);
  if (!EG(exception)) {
    zend_string *fn = get_active_function_or_method_name();
    zend_throw_error(NULL, "%s(): %s", ZSTR_VAL(fn),
                     status == EPHPM_KV_OWNER_UNREACHABLE
                         ? "the key's owner is unreachable, the outcome is unknown"
                         : ephpm_kv_status_name(status));
    zend_string_release(fn);
  }
}

/* ---- strings --------------------------------------------------------------- */

PHP_FUNCTION(ephpm_kv_get) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
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
  ephpm_report(ops, st, 0);
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
  if (!ephpm_check_key(key, 1) || !ephpm_ttl_to_ms(ttl, 1000, 3, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();

  int inserted = 1;
  const int st = only_if_absent
                     ? ops->set_nx(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(value),
                                   ZSTR_LEN(value), ttl_ms, &inserted)
                     : ops->set(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(value),
                                ZSTR_LEN(value), ttl_ms);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 2);
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
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t removed = 0;
  const int st = ops->del(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &removed);
  if (st == EPHPM_KV_PERSISTENCE_ERROR) {
    /* the store refuses writes for now: false with a warning, as the others */
    ephpm_report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  if (st != EPHPM_KV_OK) {
    ephpm_report_and_throw(ops, st);
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
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, del_if_eq)) RETURN_THROWS();
  int deleted = 0;
  const int st = ops->del_if_eq(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(token),
                                ZSTR_LEN(token), &deleted);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 2);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(deleted);
}

/* The fenced write of a holder: written only while $fence is not older than
 * the newest fence recorded for the key.  Reported as ephpm_kv_set. */
PHP_FUNCTION(ephpm_kv_set_fenced) {
  zend_string *key, *value;
  zend_long fence, ttl = 0;
  ZEND_PARSE_PARAMETERS_START(3, 4)
    Z_PARAM_STR(key)
    Z_PARAM_STR(value)
    Z_PARAM_LONG(fence)
    Z_PARAM_OPTIONAL
    Z_PARAM_LONG(ttl)
  ZEND_PARSE_PARAMETERS_END();
  int64_t ttl_ms;
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  /* fence 0 is "no grant": the store refuses it; say so at the edge */
  if (fence < 1) {
    zend_argument_value_error(3, "must be greater than 0");
    RETURN_THROWS();
  }
  if (!ephpm_ttl_to_ms(ttl, 1000, 4, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, set_fenced)) RETURN_THROWS();
  int written = 0;
  const int st = ops->set_fenced(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(value),
                                 ZSTR_LEN(value), (uint64_t)fence, ttl_ms, &written);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 2);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(written);
}

PHP_FUNCTION(ephpm_kv_exists) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int exists = 0;
  const int st = ops->exists(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &exists);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(exists);
}

/* incr, decr and incr_by share one path. */
static void incr_generic(INTERNAL_FUNCTION_PARAMETERS, zend_string *key, zend_long delta) {
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t result = 0;
  const int st = ops->incr_by(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), (int64_t)delta, &result);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 0);
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
  if (!ephpm_check_key(key, 1) || !ephpm_ttl_to_ms(ttl, unit_ms, 2, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int applied = 0;
  /* A TTL of 0 deletes the key, as EXPIRE k 0 does in Redis. */
  const int st = ops->expire(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ttl_ms, &applied);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(applied);
}

PHP_FUNCTION(ephpm_kv_expire) { expire_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, 1000); }

PHP_FUNCTION(ephpm_kv_pexpire) { expire_generic(INTERNAL_FUNCTION_PARAM_PASSTHRU, 1); }

/* Compare-and-expire, the refresh of a lock by its token.  $ttl_ms as in
 * ephpm_kv_pexpire (0 deletes the key while it holds the token). */
PHP_FUNCTION(ephpm_kv_expire_if_eq) {
  zend_string *key, *token;
  zend_long ttl;
  ZEND_PARSE_PARAMETERS_START(3, 3)
    Z_PARAM_STR(key)
    Z_PARAM_STR(token)
    Z_PARAM_LONG(ttl)
  ZEND_PARSE_PARAMETERS_END();
  int64_t ttl_ms;
  if (!ephpm_check_key(key, 1) || !ephpm_ttl_to_ms(ttl, 1, 3, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, expire_if_eq)) RETURN_THROWS();
  int applied = 0;
  const int st = ops->expire_if_eq(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), ZSTR_VAL(token),
                                   ZSTR_LEN(token), ttl_ms, &applied);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 0);
    if (EG(exception)) RETURN_THROWS();
    RETURN_FALSE;
  }
  RETURN_BOOL(applied);
}

PHP_FUNCTION(ephpm_kv_persist) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, persist)) RETURN_THROWS();
  int applied = 0;
  const int st = ops->persist(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &applied);
  if (st != EPHPM_KV_OK) {
    ephpm_report(ops, st, 0);
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
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  int64_t ms = 0;
  const int st = ops->pttl(ops->ctx, ZSTR_VAL(key), ZSTR_LEN(key), &ms);
  if (st != EPHPM_KV_OK) {
    ephpm_report_and_throw(ops, st);
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
    ephpm_report_and_throw(ops, st);
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
    ephpm_report_and_throw(ops, st);
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
    ephpm_report(ops, st, 0);
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
  if (!ephpm_check_key(key, 1)) RETURN_THROWS();
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
    ephpm_report(ops, st, 0);
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

/* ephpm_kv_info()'s persistence keys, in the order of the op's counters
 * (ephpm_kv_persistence); bools where the counter is a flag.  Every key is
 * there, zero / false / "" when persistence is off or the host's table
 * predates the op. */
static const struct {
  const char *key;
  bool is_bool;
} persistence_keys[] = {
    {"aof_rewrite_in_progress", true},
    {"aof_last_rewrite_ok", true},
    {"aof_rewrites", false},
    {"aof_last_save_unix", false},
    {"aof_current_size", false},
    {"aof_base_size", false},
    {"aof_buffered_bytes", false},
    {"aof_records", false},
    {"aof_write_calls", false},
    {"aof_fsyncs", false},
    {"aof_commit_batches", false},
    {"aof_commit_records", false},
    {"aof_commit_max_batch", false},
    {"aof_loaded_records", false},
    {"aof_loaded_keys", false},
    {"aof_truncated_bytes", false},
    {"aof_load_ms", false},
};

static char *text_or_empty(const char *text) { return (char *)(text != NULL ? text : ""); }

static void persistence_fields(zval *out, const ephpm_kv_ops *ops) {
  ephpm_kv_persistence *ps = persistence_state(ops);
  add_assoc_bool(out, "persistence_enabled", ps != NULL && ps->enabled);
  add_assoc_string(out, "persistence_fsync", text_or_empty(ps != NULL ? ps->fsync : NULL));
  add_assoc_string(out, "persistence_data_dir", text_or_empty(ps != NULL ? ps->data_dir : NULL));
  add_assoc_string(out, "persistence_write_error",
                   text_or_empty(ps != NULL ? ps->write_error : NULL));
  add_assoc_string(out, "aof_last_rewrite_error",
                   text_or_empty(ps != NULL ? ps->last_rewrite_error : NULL));
  const size_t known = sizeof persistence_keys / sizeof persistence_keys[0];
  for (size_t i = 0; i < known; ++i) {
    const uint64_t v = ps != NULL && i < ps->counter_count ? ps->counters[i].value
                       : i == 1                            ? 1 /* last_rewrite_ok */
                                                           : 0;
    if (persistence_keys[i].is_bool) {
      add_assoc_bool(out, persistence_keys[i].key, v != 0);
    } else {
      add_assoc_long(out, persistence_keys[i].key, (zend_long)v);
    }
  }
  /* counters a newer store appended, by their own names */
  for (size_t i = known; ps != NULL && i < ps->counter_count; ++i) {
    char key[96];
    snprintf(key, sizeof key, "aof_%s", ps->counters[i].name);
    add_assoc_long(out, key, (zend_long)ps->counters[i].value);
  }
  free(ps);
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
  persistence_fields(return_value, ops);
  /* null for a single node (or a host whose table predates cluster_state) */
  ephpm_kv_cluster_state *cs = NULL;
  int st = EPHPM_KV_OK;
  if (EPHPM_KV_OPS_HAS(ops, cluster_state)) {
    st = ops->cluster_state(ops->ctx, &cs);
    if (st != EPHPM_KV_OK) ephpm_report(ops, st, 0); /* a warning; the rest stands */
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
