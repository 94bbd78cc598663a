/* Test-only hooks (EPHPM_TEST_HOOKS): drive the host-table path with tables a
 * real host might hand over, observe the session lock's waits, and act on the
 * store from another thread.  Not compiled into the shipped module. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ephpm_ops.h"
#include "ephpm_session.h"
#include "php.h"

#include "ephpm_test_arginfo.h"

/* ---- host table variants --------------------------------------------------- */

static ephpm_kv_ops real_ops;     /* the standalone table the variant wraps */
static ephpm_kv_ops variant_ops;  /* what was installed */
static zend_long calls_set_nx, calls_set_nx_ephemeral, calls_del_if_eq, calls_set_if_eq, calls_del, calls_get,
    calls_get_from_owner, calls_del_if_guard_eq, calls_expire_if_guard_eq, calls_set_nx_fenced,
    calls_expire_if_eq, calls_set_fenced, calls_lock_state;

typedef enum {
  FORWARD,
  UNREACHABLE,
  UNREACHABLE_LANDED,
  WRONG_TYPE,
  GET_FAILS,
  OWNER_READ_UNREACHABLE, /* only get_from_owner cannot reach the owner */
  LOCK_OOM,               /* set_nx reports OUT_OF_MEMORY and changes nothing */
  WRITE_OOM               /* set and set_if_eq report OUT_OF_MEMORY, change nothing */
} behaviour;
static behaviour mode;

static int v_set_nx(void *ctx, const char *k, size_t kl, const char *v, size_t vl, int64_t ttl,
                    int *inserted) {
  ++calls_set_nx;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == LOCK_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  const int st = real_ops.set_nx(ctx, k, kl, v, vl, ttl, inserted);
  return mode == UNREACHABLE_LANDED ? EPHPM_KV_OWNER_UNREACHABLE : st;
}

/* The session lock's op since persistence: the same faults as set_nx. */
static int v_set_nx_ephemeral(void *ctx, const char *k, size_t kl, const char *v, size_t vl,
                              int64_t ttl, int *inserted) {
  ++calls_set_nx_ephemeral;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == LOCK_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  const int st = real_ops.set_nx_ephemeral(ctx, k, kl, v, vl, ttl, inserted);
  return mode == UNREACHABLE_LANDED ? EPHPM_KV_OWNER_UNREACHABLE : st;
}

static int v_del_if_eq(void *ctx, const char *k, size_t kl, const char *t, size_t tl,
                       int *deleted) {
  ++calls_del_if_eq;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  return real_ops.del_if_eq(ctx, k, kl, t, tl, deleted);
}

static int v_set_if_eq(void *ctx, const char *g, size_t gl, const char *t, size_t tl,
                       const char *k, size_t kl, const char *v, size_t vl, int64_t ttl,
                       int *written) {
  ++calls_set_if_eq;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRITE_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  return real_ops.set_if_eq(ctx, g, gl, t, tl, k, kl, v, vl, ttl, written);
}

static int v_set(void *ctx, const char *k, size_t kl, const char *v, size_t vl, int64_t ttl) {
  if (mode == WRITE_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  return real_ops.set(ctx, k, kl, v, vl, ttl);
}

static int v_del(void *ctx, const char *k, size_t kl, int64_t *removed) {
  ++calls_del;
  return real_ops.del(ctx, k, kl, removed);
}

static int v_del_if_guard_eq(void *ctx, const char *g, size_t gl, const char *t, size_t tl,
                             const char *k, size_t kl, int *matched, int *removed) {
  ++calls_del_if_guard_eq;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  return real_ops.del_if_guard_eq(ctx, g, gl, t, tl, k, kl, matched, removed);
}

static int v_expire_if_guard_eq(void *ctx, const char *g, size_t gl, const char *t, size_t tl,
                                const char *k, size_t kl, int64_t ttl, int *matched,
                                int *applied) {
  ++calls_expire_if_guard_eq;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  return real_ops.expire_if_guard_eq(ctx, g, gl, t, tl, k, kl, ttl, matched, applied);
}

static int v_get(void *ctx, const char *k, size_t kl, char **v, size_t *vl) {
  ++calls_get;
  if (mode == WRONG_TYPE || mode == GET_FAILS) return EPHPM_KV_WRONG_TYPE;
  return real_ops.get(ctx, k, kl, v, vl);
}

static int v_get_from_owner(void *ctx, const char *k, size_t kl, char **v, size_t *vl) {
  ++calls_get_from_owner;
  if (mode == WRONG_TYPE || mode == GET_FAILS) return EPHPM_KV_WRONG_TYPE;
  if (mode == OWNER_READ_UNREACHABLE || mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  return real_ops.get_from_owner(ctx, k, kl, v, vl);
}

static int v_get_into(void *ctx, const char *k, size_t kl, char *buf, size_t cap, size_t *vl) {
  if (mode == WRONG_TYPE || mode == GET_FAILS) return EPHPM_KV_WRONG_TYPE;
  return real_ops.get_into(ctx, k, kl, buf, cap, vl);
}

static int v_incr_by(void *ctx, const char *k, size_t kl, int64_t d, int64_t *r) {
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  return real_ops.incr_by(ctx, k, kl, d, r);
}

/* The lock ops (Ephpm\Lock, ephpm_kv_set_fenced, ephpm_kv_expire_if_eq):
 * set_nx_fenced fails as set_nx does, the others as del_if_eq does;
 * set_fenced is a write (WRITE_OOM). */
static int v_set_nx_fenced(void *ctx, const char *k, size_t kl, const char *v, size_t vl,
                           int64_t ttl, int ephemeral, int *inserted, uint64_t *fence) {
  ++calls_set_nx_fenced;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == LOCK_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  const int st = real_ops.set_nx_fenced(ctx, k, kl, v, vl, ttl, ephemeral, inserted, fence);
  return mode == UNREACHABLE_LANDED ? EPHPM_KV_OWNER_UNREACHABLE : st;
}

static int v_expire_if_eq(void *ctx, const char *k, size_t kl, const char *t, size_t tl,
                          int64_t ttl, int *applied) {
  ++calls_expire_if_eq;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  return real_ops.expire_if_eq(ctx, k, kl, t, tl, ttl, applied);
}

static int v_set_fenced(void *ctx, const char *k, size_t kl, const char *v, size_t vl,
                        uint64_t fence, int64_t ttl, int *written) {
  ++calls_set_fenced;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  if (mode == WRITE_OOM) return EPHPM_KV_OUT_OF_MEMORY;
  if (mode == WRONG_TYPE) return EPHPM_KV_WRONG_TYPE;
  return real_ops.set_fenced(ctx, k, kl, v, vl, fence, ttl, written);
}

static int v_lock_state(void *ctx, const char *k, size_t kl, const char *t, size_t tl,
                        int *state, int64_t *pttl, uint64_t *fence) {
  ++calls_lock_state;
  if (mode == UNREACHABLE) return EPHPM_KV_OWNER_UNREACHABLE;
  return real_ops.lock_state(ctx, k, kl, t, tl, state, pttl, fence);
}

PHP_FUNCTION(ephpm_test_install_host_ops) {
  zend_string *variant;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(variant)
  ZEND_PARSE_PARAMETERS_END();
  const char *v = ZSTR_VAL(variant);
  static const char *const known[] = {"standalone", "full", "short", "tiny", "abi",
                                      "unreachable", "unreachable_landed", "wrongtype",
                                      "get_fails", "owner_read_unreachable", "no_guard_delete",
                                      "lock_oom", "write_oom", "no_persist",
                                      "no_guard_expire", "no_ephemeral", "no_lock_ops"};
  bool is_known = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
    if (strcmp(v, known[i]) == 0) is_known = true;
  }
  if (!is_known) {
    zend_argument_value_error(1, "is not a known variant");
    RETURN_THROWS();
  }
  ephpm_set_kv_ops(NULL);
  if (strcmp(v, "standalone") == 0) return;
  const ephpm_kv_ops *real = ephpm_ops_get();  /* the standalone store's table */
  if (real == NULL) RETURN_THROWS();
  real_ops = *real;
  variant_ops = *real;
  variant_ops.set = v_set;
  variant_ops.set_nx = v_set_nx;
  if (EPHPM_KV_OPS_HAS(real, set_nx_ephemeral)) variant_ops.set_nx_ephemeral = v_set_nx_ephemeral;
  if (EPHPM_KV_OPS_HAS(real, set_nx_fenced)) variant_ops.set_nx_fenced = v_set_nx_fenced;
  if (EPHPM_KV_OPS_HAS(real, expire_if_eq)) variant_ops.expire_if_eq = v_expire_if_eq;
  if (EPHPM_KV_OPS_HAS(real, set_fenced)) variant_ops.set_fenced = v_set_fenced;
  if (EPHPM_KV_OPS_HAS(real, lock_state)) variant_ops.lock_state = v_lock_state;
  variant_ops.del_if_eq = v_del_if_eq;
  variant_ops.set_if_eq = v_set_if_eq;
  variant_ops.del = v_del;
  variant_ops.get = v_get;
  variant_ops.get_into = v_get_into;
  variant_ops.incr_by = v_incr_by;
  variant_ops.get_from_owner = v_get_from_owner;
  variant_ops.del_if_guard_eq = v_del_if_guard_eq;
  variant_ops.expire_if_guard_eq = v_expire_if_guard_eq;
  calls_set_nx = calls_set_nx_ephemeral = calls_del_if_eq = calls_set_if_eq = calls_del = calls_get =
      calls_get_from_owner = calls_del_if_guard_eq = calls_expire_if_guard_eq = 0;
  mode = FORWARD;
  if (strcmp(v, "full") == 0) {
  } else if (strcmp(v, "short") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, del_if_eq);
  } else if (strcmp(v, "tiny") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, wait);
  } else if (strcmp(v, "abi") == 0) {
    variant_ops.abi_version = EPHPM_KV_ABI_VERSION + 98;
  } else if (strcmp(v, "unreachable") == 0) {
    mode = UNREACHABLE;
  } else if (strcmp(v, "unreachable_landed") == 0) {
    mode = UNREACHABLE_LANDED;
  } else if (strcmp(v, "wrongtype") == 0) {
    mode = WRONG_TYPE;
  } else if (strcmp(v, "get_fails") == 0) {
    mode = GET_FAILS;
  } else if (strcmp(v, "owner_read_unreachable") == 0) {
    mode = OWNER_READ_UNREACHABLE;
  } else if (strcmp(v, "lock_oom") == 0) {
    mode = LOCK_OOM;
  } else if (strcmp(v, "write_oom") == 0) {
    mode = WRITE_OOM;
  } else if (strcmp(v, "no_persist") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, persist);
  } else if (strcmp(v, "no_guard_delete") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, del_if_guard_eq);
  } else if (strcmp(v, "no_guard_expire") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, expire_if_guard_eq);
  } else if (strcmp(v, "no_ephemeral") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, set_nx_ephemeral);
  } else if (strcmp(v, "no_lock_ops") == 0) {
    variant_ops.size = offsetof(ephpm_kv_ops, set_nx_fenced);
  }
  ephpm_set_kv_ops(&variant_ops);
}

PHP_FUNCTION(ephpm_test_op_calls) {
  ZEND_PARSE_PARAMETERS_NONE();
  array_init(return_value);
  add_assoc_long(return_value, "set_nx", calls_set_nx);
  add_assoc_long(return_value, "set_nx_ephemeral", calls_set_nx_ephemeral);
  add_assoc_long(return_value, "del_if_eq", calls_del_if_eq);
  add_assoc_long(return_value, "set_if_eq", calls_set_if_eq);
  add_assoc_long(return_value, "del", calls_del);
  add_assoc_long(return_value, "get", calls_get);
  add_assoc_long(return_value, "get_from_owner", calls_get_from_owner);
  add_assoc_long(return_value, "del_if_guard_eq", calls_del_if_guard_eq);
  add_assoc_long(return_value, "expire_if_guard_eq", calls_expire_if_guard_eq);
  add_assoc_long(return_value, "set_nx_fenced", calls_set_nx_fenced);
  add_assoc_long(return_value, "expire_if_eq", calls_expire_if_eq);
  add_assoc_long(return_value, "set_fenced", calls_set_fenced);
  add_assoc_long(return_value, "lock_state", calls_lock_state);
}

/* ---- the session lock's waits ---------------------------------------------- */

#define TRACE_MAX 4096
static struct {
  int64_t timeout_ms;
  bool woken;
} trace[TRACE_MAX];
static size_t trace_len;

static int recording_sleeper(const ephpm_kv_ops *ops, const char *key, size_t key_len,
                             uint64_t *version, int64_t timeout_ms, bool *changed) {
  const int st = ephpm_session_default_sleeper(ops, key, key_len, version, timeout_ms, changed);
  if (trace_len < TRACE_MAX) {
    trace[trace_len].timeout_ms = timeout_ms;
    trace[trace_len].woken = *changed;
    ++trace_len;
  }
  return st;
}

PHP_FUNCTION(ephpm_test_session_trace) {
  bool enable;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_BOOL(enable)
  ZEND_PARSE_PARAMETERS_END();
  trace_len = 0;
  ephpm_session_set_sleeper(enable ? recording_sleeper : NULL);
}

PHP_FUNCTION(ephpm_test_session_trace_get) {
  ZEND_PARSE_PARAMETERS_NONE();
  array_init(return_value);
  for (size_t i = 0; i < trace_len; ++i) {
    zval entry;
    array_init(&entry);
    add_assoc_long(&entry, "timeout_ms", (zend_long)trace[i].timeout_ms);
    add_assoc_bool(&entry, "woken", trace[i].woken);
    add_next_index_zval(return_value, &entry);
  }
}

/* ---- acting from another thread -------------------------------------------- */

typedef struct {
  const ephpm_kv_ops *ops;
  char *key;
  size_t key_len;
  zend_long delay_ms;
} delayed_delete;

static void *delete_later(void *arg) {
  delayed_delete *job = arg;
  struct timespec ts = {job->delay_ms / 1000, (job->delay_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  int64_t removed = 0;
  job->ops->del(job->ops->ctx, job->key, job->key_len, &removed);
  free(job->key);
  free(job);
  return NULL;
}

PHP_FUNCTION(ephpm_test_delete_after) {
  zend_string *key;
  zend_long delay_ms;
  ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STR(key)
    Z_PARAM_LONG(delay_ms)
  ZEND_PARSE_PARAMETERS_END();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) RETURN_THROWS();
  delayed_delete *job = malloc(sizeof *job);
  char *copy = malloc(ZSTR_LEN(key) + 1);
  if (job == NULL || copy == NULL) {
    free(job);
    free(copy);
    zend_throw_error(NULL, "out of memory");
    RETURN_THROWS();
  }
  memcpy(copy, ZSTR_VAL(key), ZSTR_LEN(key) + 1);
  *job = (delayed_delete){ops, copy, ZSTR_LEN(key), delay_ms};
  pthread_t thread;
  if (pthread_create(&thread, NULL, delete_later, job) != 0) {
    free(copy);
    free(job);
    zend_throw_error(NULL, "pthread_create failed");
    RETURN_THROWS();
  }
  pthread_detach(thread);
}

/* ---- after the request -------------------------------------------------- */

static char *end_key;  /* this process's only request thread (CLI) */
static size_t end_key_len;

PHP_FUNCTION(ephpm_test_check_at_request_end) {
  zend_string *key;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_STR(key)
  ZEND_PARSE_PARAMETERS_END();
  free(end_key);
  end_key = malloc(ZSTR_LEN(key) + 1);
  if (end_key == NULL) return;
  memcpy(end_key, ZSTR_VAL(key), ZSTR_LEN(key) + 1);
  end_key_len = ZSTR_LEN(key);
}

void ephpm_test_hooks_request_shutdown(void) {
  if (end_key == NULL) return;
  const ephpm_kv_ops *ops = ephpm_ops_peek();
  int exists = -1;
  if (ops != NULL) ops->exists(ops->ctx, end_key, end_key_len, &exists);
  /* PHP's output is closed for the request by now: straight to stdout */
  char line[128];
  const int n = snprintf(line, sizeof line, "at request end: %.64s %s\n", end_key,
                         exists == 0 ? "is free" : exists == 1 ? "is still held" : "unknown");
  if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) < 0) { /* nothing to do */ }
  free(end_key);
  end_key = NULL;
}

void ephpm_test_hooks_register(int module_number) {
  (void)module_number;
  zend_register_functions(NULL, ext_functions, NULL, MODULE_PERSISTENT);
}
