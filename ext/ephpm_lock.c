/* Ephpm\Lock: a lock with a fencing token over the ops table's lock ops
 * (set_nx_fenced, del_if_eq, expire_if_eq, lock_state).
 *
 * A Lock object holds one grant of a name, known by its token.  A grant is
 * held by a request of this process, so it is taken ephemeral (never logged)
 * and given back by its token (compare-and-delete) when the object is
 * destroyed or the request ends, whichever comes first: every object that
 * may still hold its grant is linked in EPHPM_G(locks_held), which
 * RSHUTDOWN drains.  That list is intrusive, so neither linking nor the
 * release at the end allocates (a request ending on memory_limit still
 * releases).
 *
 * As in ephpm_functions.c, PHP allocates only between store calls: the
 * object is made before the grant is asked for, so that no allocation can
 * fail between a grant and the object that will give it back. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ephpm_lock.h"
#include "ephpm_ops.h"
#include "ephpm_report.h"
#include "ext/random/php_random.h"
#include "php.h"
#include "php_ephpm.h"
#include "zend_exceptions.h"

typedef struct ephpm_lock_obj {
  zend_string *name;  /* NULL only in an object `new` refused */
  char token[33];     /* 32 lowercase hex characters and a NUL */
  uint64_t fence;     /* 0 for a restored token that held nothing */
  bool held;          /* may still hold its grant: linked in locks_held */
  struct ephpm_lock_obj *prev, *next;
  zend_object std;
} ephpm_lock_obj;

static zend_class_entry *lock_ce;
static zend_object_handlers lock_handlers;

/* block()'s backoff: the longest single wait, doubling from the first.  The
 * wait op wakes at the release itself; these only bound a wait. */
#define BLOCK_STEP_FIRST_MS 10
#define BLOCK_STEP_MAX_MS 100

/* The longest TTL or wait in seconds: EPHPM_KV_MAX_TTL_MS in whole seconds,
 * so that any value up to it fits in ms after rounding up. */
#define MAX_SECONDS ((double)(EPHPM_KV_MAX_TTL_MS / 1000))

static inline ephpm_lock_obj *lock_from(zend_object *obj) {
  return (ephpm_lock_obj *)((char *)obj - XtOffsetOf(ephpm_lock_obj, std));
}

/* ---- the request's held locks ------------------------------------------- */

static void link_held(ephpm_lock_obj *o) {
  if (o->held) return;
  o->held = true;
  o->prev = NULL;
  o->next = EPHPM_G(locks_held);
  if (o->next != NULL) o->next->prev = o;
  EPHPM_G(locks_held) = o;
}

static void unlink_held(ephpm_lock_obj *o) {
  if (!o->held) return;
  o->held = false;
  if (o->prev != NULL) {
    o->prev->next = o->next;
  } else {
    EPHPM_G(locks_held) = o->next;
  }
  if (o->next != NULL) o->next->prev = o->prev;
  o->prev = o->next = NULL;
}

/* Gives the grant back by its token, for an object that is going away: no
 * exception, no message, no allocation, no store made for it.  Whatever the
 * outcome, the TTL bounds the grant. */
static void release_quietly(const ephpm_lock_obj *o) {
  const ephpm_kv_ops *ops = ephpm_ops_peek();
  if (ops == NULL || !EPHPM_KV_OPS_HAS(ops, del_if_eq)) return;
  int deleted = 0;
  ops->del_if_eq(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32, &deleted);
}

void ephpm_lock_request_shutdown(void) {
  /* Every release first, then (debug builds) the message, which may run a
   * user error handler: by then the list is empty and nothing is half done.
   * A Lock such a handler takes is released when its object is freed. */
  unsigned released = 0;
  ephpm_lock_obj *o;
  while ((o = EPHPM_G(locks_held)) != NULL) {
    unlink_held(o);
    release_quietly(o);
    ++released;
  }
#if ZEND_DEBUG
  if (released > 0) {
    zend_error(E_WARNING, "%u Ephpm\\Lock grant(s) still held at the end of the request released",
               released);
  }
#else
  (void)released;
#endif
}

/* ---- the object --------------------------------------------------------- */

static zend_object *lock_create(zend_class_entry *ce) {
  ephpm_lock_obj *o = zend_object_alloc(sizeof(ephpm_lock_obj), ce);
  zend_object_std_init(&o->std, ce);
  o->std.handlers = &lock_handlers;
  return &o->std;
}

static void lock_free(zend_object *obj) {
  ephpm_lock_obj *o = lock_from(obj);
  if (o->held) {
    unlink_held(o);
    release_quietly(o);
#if ZEND_DEBUG
    zend_error(E_WARNING, "Ephpm\\Lock %s was still held when destroyed: released",
               ZSTR_VAL(o->name));
#endif
  }
  if (o->name != NULL) zend_string_release(o->name);
  zend_object_std_dtor(obj);
}

/* `new Ephpm\Lock` from any scope (a closure bound to the class included):
 * a Lock without a grant would be a lie. */
static zend_function *lock_get_constructor(zend_object *obj) {
  (void)obj;
  zend_throw_error(NULL,
                   "Cannot directly construct Ephpm\\Lock, use Ephpm\\Lock::acquire(), "
                   "Ephpm\\Lock::block() or Ephpm\\Lock::restore()");
  return NULL;
}

/* name and fence for var_dump(); never the token, which is the grant. */
static HashTable *lock_debug_info(zend_object *obj, int *is_temp) {
  ephpm_lock_obj *o = lock_from(obj);
  HashTable *ht = zend_new_array(2);
  *is_temp = 1;
  if (o->name == NULL) return ht;
  zval v;
  ZVAL_STR_COPY(&v, o->name);
  zend_hash_str_add_new(ht, "name", sizeof "name" - 1, &v);
  ZVAL_LONG(&v, (zend_long)o->fence);
  zend_hash_str_add_new(ht, "fence", sizeof "fence" - 1, &v);
  return ht;
}

void ephpm_lock_init_class(zend_class_entry *ce) {
  lock_ce = ce;
  ce->create_object = lock_create;
  memcpy(&lock_handlers, zend_get_std_object_handlers(), sizeof lock_handlers);
  lock_handlers.offset = XtOffsetOf(ephpm_lock_obj, std);
  lock_handlers.free_obj = lock_free;
  lock_handlers.clone_obj = NULL;
  lock_handlers.get_constructor = lock_get_constructor;
  lock_handlers.get_debug_info = lock_debug_info;
}

/* The Lock a method was called on; NULL (with an Error) for one that never
 * got its grant (only reachable through a refused construction). */
static ephpm_lock_obj *this_lock(zval *this_zv) {
  ephpm_lock_obj *o = lock_from(Z_OBJ_P(this_zv));
  if (o->name == NULL) {
    zend_throw_error(NULL, "Ephpm\\Lock object is not initialized");
    return NULL;
  }
  return o;
}

/* ---- arguments ---------------------------------------------------------- */

/* Seconds as a float to whole ms, rounded up: a TTL never ends sooner than
 * asked, and a TTL above 0 never becomes 0 ("no expiry").  `allow_zero` for
 * a wait; a TTL must be above 0. */
static bool seconds_to_ms(double seconds, uint32_t arg, bool allow_zero, int64_t *ms) {
  if (!zend_finite(seconds)) {
    zend_argument_value_error(arg, "must be a finite number");
    return false;
  }
  if (allow_zero ? seconds < 0 : seconds <= 0) {
    zend_argument_value_error(arg, allow_zero ? "must be greater than or equal to 0"
                                              : "must be greater than 0");
    return false;
  }
  if (seconds > MAX_SECONDS) {
    zend_argument_value_error(arg, "must be less than or equal to %" PRId64,
                              (int64_t)(EPHPM_KV_MAX_TTL_MS / 1000));
    return false;
  }
  *ms = (int64_t)ceil(seconds * 1000.0);
  return true;
}

static bool is_token(const zend_string *token) {
  if (ZSTR_LEN(token) != 32) return false;
  for (size_t i = 0; i < 32; ++i) {
    const char c = ZSTR_VAL(token)[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

/* 128 bits from the CSPRNG as 32 lowercase hex characters; an Exception
 * when it fails (never a weaker source: a guessable token is no lock). */
static bool new_token(char token[33]) {
  unsigned char raw[16];
  if (php_random_bytes_throw(raw, sizeof raw) == FAILURE) return false;
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof raw; ++i) {
    token[2 * i] = hex[raw[i] >> 4];
    token[2 * i + 1] = hex[raw[i] & 15];
  }
  token[32] = '\0';
  return true;
}

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- taking a grant ----------------------------------------------------- */

/* A Lock object for `name` and a fresh token, not holding anything yet:
 * made before the store is asked, so nothing allocates after a grant. */
static ephpm_lock_obj *new_lock(zval *rv, zend_string *name) {
  object_init_ex(rv, lock_ce);
  ephpm_lock_obj *o = lock_from(Z_OBJ_P(rv));
  o->name = zend_string_copy(name);
  if (!new_token(o->token)) {
    zval_ptr_dtor(rv);
    ZVAL_NULL(rv);
    return NULL;
  }
  return o;
}

typedef enum { TAKE_GRANTED, TAKE_BUSY, TAKE_THREW } take_result;

static take_result take(const ephpm_kv_ops *ops, ephpm_lock_obj *o, int64_t ttl_ms) {
  int inserted = 0;
  uint64_t fence = 0;
  const int st = ops->set_nx_fenced(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32,
                                    ttl_ms, 1, &inserted, &fence);
  if (st == EPHPM_KV_OK) {
    if (!inserted) return TAKE_BUSY;
    o->fence = fence;
    link_held(o);
    return TAKE_GRANTED;
  }
  if (st == EPHPM_KV_OWNER_UNREACHABLE && EPHPM_KV_OPS_HAS(ops, del_if_eq)) {
    /* The grant may have landed: give it back by its token if it did (a
     * no-op if it did not, and the TTL bounds it if this fails too). */
    int deleted = 0;
    ops->del_if_eq(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32, &deleted);
  }
  /* null means "held by another": a failed attempt must not look like one */
  ephpm_report_and_throw(ops, st);
  return TAKE_THREW;
}

/* acquire() and block(): block() waits up to `wait` seconds, acquire() not
 * at all. */
static void acquire_generic(zval *return_value, zend_string *name, double ttl, bool blocking,
                            double wait) {
  int64_t ttl_ms, wait_ms = 0;
  if (!ephpm_check_key(name, 1) || !seconds_to_ms(ttl, 2, false, &ttl_ms)) RETURN_THROWS();
  if (blocking && !seconds_to_ms(wait, 3, true, &wait_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, set_nx_fenced)) RETURN_THROWS();
  if (blocking && !EPHPM_OPS_REQUIRE(ops, wait)) RETURN_THROWS();

  ephpm_lock_obj *o = new_lock(return_value, name);
  if (o == NULL) RETURN_THROWS();

  const int64_t deadline = monotonic_ms() + wait_ms;
  int64_t step = BLOCK_STEP_FIRST_MS;
  uint64_t version = 0; /* 0 = not seen: the first wait returns at once */
  for (;;) {
    const take_result r = take(ops, o, ttl_ms);
    if (r == TAKE_GRANTED) return;
    if (r == TAKE_THREW) break;
    const int64_t left = deadline - monotonic_ms();
    /* max_execution_time passed: PHP ends the script once this returns */
    if (left <= 0 || zend_atomic_bool_load_ex(&EG(timed_out))) break;
    const int64_t timeout = step < left ? step : left;
    int changed = 0, found = 0;
    char *value = NULL;
    size_t value_len = 0;
    const int st = ops->wait(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), version, timeout,
                             &changed, &found, &value, &value_len, &version);
    free(value);
    if (st != EPHPM_KV_OK) {
      ephpm_report_and_throw(ops, st);
      break;
    }
    /* A change (a release, a refresh, or the first look) retries at once;
     * only a quiet wait makes the next one longer. */
    if (!changed) step = step > BLOCK_STEP_MAX_MS / 2 ? BLOCK_STEP_MAX_MS : step * 2;
  }
  /* the engine reads return_value after an exception too: no dangling object */
  zval_ptr_dtor(return_value);
  ZVAL_NULL(return_value);
  if (EG(exception)) RETURN_THROWS();
}

ZEND_METHOD(Ephpm_Lock, __construct) {
  /* private, and get_constructor refuses first; kept for the signature */
  ZEND_PARSE_PARAMETERS_NONE();
}

ZEND_METHOD(Ephpm_Lock, acquire) {
  zend_string *name;
  double ttl = 30.0;
  ZEND_PARSE_PARAMETERS_START(1, 2)
    Z_PARAM_STR(name)
    Z_PARAM_OPTIONAL
    Z_PARAM_DOUBLE(ttl)
  ZEND_PARSE_PARAMETERS_END();
  acquire_generic(return_value, name, ttl, false, 0);
}

ZEND_METHOD(Ephpm_Lock, block) {
  zend_string *name;
  double ttl = 30.0, wait = 10.0;
  ZEND_PARSE_PARAMETERS_START(1, 3)
    Z_PARAM_STR(name)
    Z_PARAM_OPTIONAL
    Z_PARAM_DOUBLE(ttl)
    Z_PARAM_DOUBLE(wait)
  ZEND_PARSE_PARAMETERS_END();
  acquire_generic(return_value, name, ttl, true, wait);
}

/* The lock's state at the owner: 0 held by this token, 1 by another, 2
 * absent; -1 with an exception thrown. */
static int ask_state(const ephpm_kv_ops *ops, ephpm_lock_obj *o, int64_t *pttl_ms,
                     uint64_t *fence) {
  int state = 2;
  const int st = ops->lock_state(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32,
                                 &state, pttl_ms, fence);
  if (st != EPHPM_KV_OK) {
    ephpm_report_and_throw(ops, st);
    return -1;
  }
  /* No longer this token's: it never will be again (tokens are unique), so
   * nothing is left to release at the end. */
  if (state != 0) unlink_held(o);
  return state;
}

ZEND_METHOD(Ephpm_Lock, restore) {
  zend_string *name, *token;
  ZEND_PARSE_PARAMETERS_START(2, 2)
    Z_PARAM_STR(name)
    Z_PARAM_STR(token)
  ZEND_PARSE_PARAMETERS_END();
  if (!ephpm_check_key(name, 1)) RETURN_THROWS();
  if (!is_token(token)) {
    zend_argument_value_error(2, "must be a token of 32 lowercase hexadecimal characters");
    RETURN_THROWS();
  }
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, lock_state)) RETURN_THROWS();
  object_init_ex(return_value, lock_ce);
  ephpm_lock_obj *o = lock_from(Z_OBJ_P(return_value));
  o->name = zend_string_copy(name);
  memcpy(o->token, ZSTR_VAL(token), 32);
  o->token[32] = '\0';
  /* Linked before the question, so that a grant it reports held is never
   * without an object to give it back. */
  link_held(o);
  int64_t pttl_ms = 0;
  uint64_t fence = 0;
  const int state = ask_state(ops, o, &pttl_ms, &fence);
  if (state < 0) {
    unlink_held(o);
    zval_ptr_dtor(return_value);
    ZVAL_NULL(return_value);
    RETURN_THROWS();
  }
  o->fence = state == 0 ? fence : 0;
}

ZEND_METHOD(Ephpm_Lock, release) {
  ZEND_PARSE_PARAMETERS_NONE();
  ephpm_lock_obj *o = this_lock(ZEND_THIS);
  if (o == NULL) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, del_if_eq)) RETURN_THROWS();
  int deleted = 0;
  const int st =
      ops->del_if_eq(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32, &deleted);
  if (st != EPHPM_KV_OK) {
    /* unknown outcome: still linked, so the end of the request tries again */
    ephpm_report_and_throw(ops, st);
    RETURN_THROWS();
  }
  unlink_held(o);
  RETURN_BOOL(deleted);
}

ZEND_METHOD(Ephpm_Lock, refresh) {
  double ttl;
  ZEND_PARSE_PARAMETERS_START(1, 1)
    Z_PARAM_DOUBLE(ttl)
  ZEND_PARSE_PARAMETERS_END();
  ephpm_lock_obj *o = this_lock(ZEND_THIS);
  if (o == NULL) RETURN_THROWS();
  int64_t ttl_ms;
  if (!seconds_to_ms(ttl, 1, false, &ttl_ms)) RETURN_THROWS();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, expire_if_eq)) RETURN_THROWS();
  int applied = 0;
  const int st = ops->expire_if_eq(ops->ctx, ZSTR_VAL(o->name), ZSTR_LEN(o->name), o->token, 32,
                                   ttl_ms, &applied);
  if (st != EPHPM_KV_OK) {
    ephpm_report_and_throw(ops, st);
    RETURN_THROWS();
  }
  if (!applied) unlink_held(o);
  RETURN_BOOL(applied);
}

/* The lock's state at its owner for a method of ZEND_THIS (see ask_state),
 * or -1 with an exception thrown. */
static int state_of(zval *this_zv, int64_t *pttl_ms) {
  ephpm_lock_obj *o = this_lock(this_zv);
  if (o == NULL) return -1;
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL || !EPHPM_OPS_REQUIRE(ops, lock_state)) return -1;
  uint64_t fence = 0;
  return ask_state(ops, o, pttl_ms, &fence);
}

ZEND_METHOD(Ephpm_Lock, isAcquired) {
  ZEND_PARSE_PARAMETERS_NONE();
  int64_t pttl_ms = 0;
  const int state = state_of(ZEND_THIS, &pttl_ms);
  if (state < 0) RETURN_THROWS();
  RETURN_BOOL(state == 0);
}

ZEND_METHOD(Ephpm_Lock, remaining) {
  ZEND_PARSE_PARAMETERS_NONE();
  int64_t pttl_ms = 0;
  const int state = state_of(ZEND_THIS, &pttl_ms);
  if (state < 0) RETURN_THROWS();
  if (state != 0) RETURN_NULL();
  /* -1: its TTL was removed behind its back (ephpm_kv_persist) */
  if (pttl_ms < 0) RETURN_DOUBLE(ZEND_INFINITY);
  RETURN_DOUBLE((double)pttl_ms / 1000.0);
}

ZEND_METHOD(Ephpm_Lock, token) {
  ZEND_PARSE_PARAMETERS_NONE();
  ephpm_lock_obj *o = this_lock(ZEND_THIS);
  if (o == NULL) RETURN_THROWS();
  RETURN_STRINGL(o->token, 32);
}

ZEND_METHOD(Ephpm_Lock, fence) {
  ZEND_PARSE_PARAMETERS_NONE();
  ephpm_lock_obj *o = this_lock(ZEND_THIS);
  if (o == NULL) RETURN_THROWS();
  RETURN_LONG((zend_long)o->fence);
}

ZEND_METHOD(Ephpm_Lock, name) {
  ZEND_PARSE_PARAMETERS_NONE();
  ephpm_lock_obj *o = this_lock(ZEND_THIS);
  if (o == NULL) RETURN_THROWS();
  RETURN_STR_COPY(o->name);
}
