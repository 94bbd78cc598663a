/* The "ephpm" session save handler.  It talks to the store only through the
 * ops table.
 *
 * Locking, as php-fpm's files handler does it but with a lock that is
 * actually correct:
 *  - PS_READ takes "<prefix>_lock:{sid}" with set_nx_ephemeral (set_nx with
 *    a host table from before it): a lock the store neither logs nor
 *    restores, since its holder dies with the process; the value a fresh
 *    128-bit token from PHP's CSPRNG (32 hex characters), with a TTL
 *    (ephpm.session_lock_ttl_ms).  On contention it waits on the lock key
 *    through the store's wait op, backing off from
 *    ephpm.session_lock_backoff_min_ms, doubling to _max_ms, for at most
 *    ephpm.session_lock_wait_ms; a release wakes it at once.  When the wait
 *    runs out, or the attempt fails for another reason (out of memory, the
 *    CSPRNG, a host table without the lock's ops), ephpm.session_lock_failure
 *    decides: proceed, readonly or fail.
 *  - PS_WRITE writes with set_if_eq: only while the lock still holds this
 *    request's token, so a request that ran past its TTL cannot overwrite the
 *    data of the request that holds the lock now.  PS_DESTROY deletes with
 *    del_if_guard_eq and PS_UPDATE_TIMESTAMP (lazy_write) refreshes the TTL
 *    with expire_if_guard_eq, under the same fence.
 *  - PS_CLOSE (PHP calls it at request shutdown, after fatal errors too)
 *    releases with del_if_eq and the token, never a plain delete.
 *
 * Per-request state lives in the module data; PS_OPEN sets it and PS_CLOSE
 * clears it, so PHP calls close exactly once per open.
 *
 * No user code before the state is final: a warning runs the user's error
 * handler, which may call session_write_close(), session_destroy(), ...  and
 * so run PS_CLOSE, which frees the module data, or PS_OPEN/PS_READ for
 * another id.  So a callback never warns while it still needs its state: it
 * collects its messages in a local list and emits them as its very last step,
 * after which it touches nothing but its locals. */

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ephpm_ops.h"
#include "ephpm_session.h"
#include "ext/random/php_random.h"
#include "php.h"
#include "php_ephpm.h"
#include "zend_smart_str.h"

/* The lock's state in this request. */
typedef enum {
  LOCK_NONE,        /* no lock: locking off, not read yet, or a fresh id */
  LOCK_HELD,        /* our token is the lock's value */
  LOCK_UNCONFIRMED, /* the owner was unreachable: our token may have landed */
  LOCK_MISSED,      /* the wait ran out or the attempt failed: running without it */
  LOCK_RELEASED     /* released (destroy, a failed read): it may be another's now */
} lock_state;

typedef struct {
  zend_string *sid;       /* the session id the keys below belong to */
  zend_string *data_key;  /* "<prefix>:{sid}" */
  zend_string *lock_key;  /* "<prefix>_lock:{sid}" */
  char token[33];         /* 32 lowercase hex characters, NUL-terminated */
  lock_state lock;
  /* Non-NULL ("readonly" or "fail", for messages) when the lock was not
   * taken and ephpm.session_lock_failure forbids changing the stored data
   * (readonly, or fail for the calls a user's error handler makes before
   * session_start() returns false). */
  const char *readonly;
} ephpm_ps_data;

static _Atomic uint64_t counter_acquired, counter_waits, counter_timeouts, counter_stale,
    counter_fenced;

static _Atomic(ephpm_session_sleeper) sleeper_override;

void ephpm_session_get_counters(ephpm_session_counters *out) {
  out->lock_acquired = atomic_load(&counter_acquired);
  out->lock_waits = atomic_load(&counter_waits);
  out->lock_timeouts = atomic_load(&counter_timeouts);
  out->stale_releases = atomic_load(&counter_stale);
  out->fenced_refused = atomic_load(&counter_fenced);
}

void ephpm_session_set_sleeper(ephpm_session_sleeper sleeper) {
  atomic_store(&sleeper_override, sleeper);
}

int ephpm_session_default_sleeper(const ephpm_kv_ops *ops, const char *key, size_t key_len,
                                  uint64_t *version, int64_t timeout_ms, bool *changed) {
  int moved = 0, found = 0;
  char *value = NULL;
  size_t value_len = 0;
  const int st = ops->wait(ops->ctx, key, key_len, *version, timeout_ms, &moved, &found,
                           &value, &value_len, version);
  free(value);
  *changed = st == EPHPM_KV_OK && moved;
  return st;
}

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *sid_for_messages(const ephpm_ps_data *d) {
  return d->sid ? ZSTR_VAL(d->sid) : "";
}

/* ---- messages -------------------------------------------------------------
 * Formatted into the caller's stack frame (no allocation, so no memory_limit
 * bailout halfway through a callback either) and emitted by finish(). */

#define MSG_MAX 6
#define MSG_LEN 768 /* a session id is at most 256 characters */

typedef struct {
  int count;
  struct {
    int type;
    char text[MSG_LEN];
  } items[MSG_MAX];
} ps_messages;

static void note(ps_messages *m, int type, const char *fmt, ...)
    ZEND_ATTRIBUTE_FORMAT(printf, 3, 4);

static void note(ps_messages *m, int type, const char *fmt, ...) {
  if (m->count == MSG_MAX) {
    /* No callback notes this many; should one ever, say so in the last one. */
    snprintf(m->items[MSG_MAX - 1].text, MSG_LEN, "further session messages were dropped");
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->items[m->count].text, MSG_LEN, fmt, ap);
  va_end(ap);
  m->items[m->count].type = type;
  ++m->count;
}

/* The last step of a callback: emits the messages (each may run user code)
 * and returns `result`.  Neither the module data nor anything reached from it
 * may be used after this. */
static zend_result finish(const ps_messages *m, zend_result result) {
  for (int i = 0; i < m->count; ++i) {
    php_error_docref(NULL, m->items[i].type, "%s", m->items[i].text);
  }
  return result;
}

/* A store status for a message: a refusal for the log names its reason, in
 * Redis's words for a write refused while its AOF cannot be written. */
static const char *status_text(const ephpm_kv_ops *ops, int st, char *buf, size_t len) {
  if (st != EPHPM_KV_PERSISTENCE_ERROR) return ephpm_kv_status_name(st);
  ephpm_kv_persistence *ps = NULL;
  const char *reason = NULL;
  if (EPHPM_KV_OPS_HAS(ops, persistence_state) &&
      ops->persistence_state(ops->ctx, &ps) == EPHPM_KV_OK && ps != NULL &&
      ps->write_error != NULL && ps->write_error[0] != '\0') {
    reason = ps->write_error;
  }
  snprintf(buf, len, "Errors writing to the AOF file: %s",
           reason != NULL ? reason : ephpm_kv_status_name(st));
  free(ps);
  return buf;
}

/* ---- keys ------------------------------------------------------------------ */

static zend_string *make_key(const char *suffix, const zend_string *sid) {
  smart_str s = {0};
  smart_str_appends(&s, EPHPM_G(session_prefix));
  smart_str_appends(&s, suffix);
  smart_str_appendc(&s, '{');
  smart_str_append(&s, sid);
  smart_str_appendc(&s, '}');
  smart_str_0(&s);
  return s.s;
}

static void forget_keys(ephpm_ps_data *d) {
  if (d->sid) zend_string_release(d->sid);
  if (d->data_key) zend_string_release(d->data_key);
  if (d->lock_key) zend_string_release(d->lock_key);
  d->sid = d->data_key = d->lock_key = NULL;
}

/* Points d's keys at `sid`.  Allocates (and may bail out on memory_limit)
 * before any lock is taken for it. */
static void use_sid(ephpm_ps_data *d, zend_string *sid) {
  if (d->sid && zend_string_equals(d->sid, sid)) return;
  forget_keys(d);
  d->sid = zend_string_copy(sid);
  d->data_key = make_key(":", sid);
  d->lock_key = make_key("_lock:", sid);
}

/* session.gc_maxlifetime (seconds) as the data's TTL in ms: 0 or less means
 * no TTL (PHP's files handler accepts these values too), and a value past
 * the store's range is clamped to the longest TTL it accepts. */
static int64_t data_ttl_ms(zend_long maxlifetime) {
  if (maxlifetime <= 0) return 0;
  if (maxlifetime > EPHPM_KV_MAX_TTL_MS / 1000) return EPHPM_KV_MAX_TTL_MS;
  return (int64_t)maxlifetime * 1000;
}

/* ---- the lock -------------------------------------------------------------- */

/* Whether this table has the ops a lock needs: without del_if_eq a lock
 * could not be released safely, without set_if_eq no write fenced. */
static bool can_lock(const ephpm_kv_ops *ops) {
  return EPHPM_KV_OPS_HAS(ops, del_if_eq) && EPHPM_KV_OPS_HAS(ops, set_if_eq);
}

/* Releases our lock, if we may hold it, with compare-and-delete.  Afterwards
 * the data is not this request's to change (LOCK_RELEASED), whatever the
 * release found: another request may hold the lock by now. */
static void release_lock(const ephpm_kv_ops *ops, ephpm_ps_data *d, ps_messages *m) {
  if (d->lock != LOCK_HELD && d->lock != LOCK_UNCONFIRMED) {
    if (d->lock == LOCK_MISSED) d->lock = LOCK_NONE;
    return;
  }
  const lock_state was = d->lock;
  d->lock = LOCK_RELEASED;
  if (!EPHPM_KV_OPS_HAS(ops, del_if_eq)) {
    /* Only if the table changed under this request (a lock is never taken
     * without del_if_eq). */
    note(m, E_WARNING,
         "Session %s: the session lock cannot be released: the ops table has no del_if_eq "
         "operation; it expires after ephpm.session_lock_ttl_ms",
         sid_for_messages(d));
    return;
  }
  int deleted = 0;
  const int st = ops->del_if_eq(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key),
                                d->token, 32, &deleted);
  if (st != EPHPM_KV_OK) {
    char text[320];
    note(m, E_WARNING, "Session %s: releasing the session lock failed: %s", sid_for_messages(d),
         status_text(ops, st, text, sizeof text));
    return;
  }
  if (!deleted && was == LOCK_HELD) {
    /* The lock expired and another request took it: leave it alone. */
    atomic_fetch_add(&counter_stale, 1);
    note(m, E_NOTICE,
         "Session %s: the session lock had expired and was taken by another request; it was "
         "left to that request (ephpm.session_lock_ttl_ms=" ZEND_LONG_FMT ")",
         sid_for_messages(d), EPHPM_G(session_lock_ttl_ms));
  }
}

typedef enum { ACQ_HELD, ACQ_UNCONFIRMED, ACQ_TIMED_OUT, ACQ_FAILED } acquire_result;

/* Takes the lock.  ACQ_FAILED (not contention: the attempt itself failed)
 * leaves the reason in why[]; for ACQ_UNCONFIRMED the caller applies the policy. */
static acquire_result acquire_lock(const ephpm_kv_ops *ops, ephpm_ps_data *d, ps_messages *m,
                                   char *why, size_t why_len) {
  if (!can_lock(ops)) {
    snprintf(why, why_len,
             "the session cannot be locked: the host's ops table has no del_if_eq or set_if_eq "
             "operation (upgrade the host program)");
    return ACQ_FAILED;
  }
  unsigned char raw[16];
  if (php_random_bytes_silent(raw, sizeof raw) == FAILURE) {
    /* Never a weaker source: a guessable token is no lock at all. */
    snprintf(why, why_len, "the CSPRNG failed, so the session cannot be locked");
    return ACQ_FAILED;
  }
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < sizeof raw; ++i) {
    d->token[2 * i] = hex[raw[i] >> 4];
    d->token[2 * i + 1] = hex[raw[i] & 15];
  }
  d->token[32] = '\0';

  const int64_t ttl_ms = EPHPM_G(session_lock_ttl_ms);
  const int64_t wait_ms = EPHPM_G(session_lock_wait_ms);
  /* The settings keep 1 <= min <= max; should they ever not (a per-directory
   * setting applied in an unlucky order), a step of 0 would spin at full CPU
   * until the holder's TTL ends: never below 1 ms, never shrinking. */
  int64_t step = EPHPM_G(session_lock_backoff_min_ms) > 0 ? EPHPM_G(session_lock_backoff_min_ms)
                                                          : 1;
  const int64_t max_step =
      EPHPM_G(session_lock_backoff_max_ms) > step ? EPHPM_G(session_lock_backoff_max_ms) : step;
  int64_t spent = 0;      /* ms of waiting so far */
  uint64_t version = 0;   /* 0 = not seen: the first wait returns at once */
  bool waited = false;
  ephpm_session_sleeper sleeper = atomic_load(&sleeper_override);
  if (sleeper == NULL) sleeper = ephpm_session_default_sleeper;

  /* The lock's holder is this request: when the process dies, so does the
   * holder, so the lock must not come back with the data at the next start
   * (an ephemeral entry is neither logged nor snapshotted). */
  const bool ephemeral = EPHPM_KV_OPS_HAS(ops, set_nx_ephemeral);
  for (;;) {
    int inserted = 0;
    const int st = ephemeral ? ops->set_nx_ephemeral(ops->ctx, ZSTR_VAL(d->lock_key),
                                                     ZSTR_LEN(d->lock_key), d->token, 32, ttl_ms,
                                                     &inserted)
                             : ops->set_nx(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key),
                                           d->token, 32, ttl_ms, &inserted);
    if (st == EPHPM_KV_OWNER_UNREACHABLE) {
      /* Not contention: one attempt; the caller applies the policy. */
      return ACQ_UNCONFIRMED;
    }
    if (st != EPHPM_KV_OK) {
      char text[320];
      snprintf(why, why_len, "taking the session lock failed: %s",
               status_text(ops, st, text, sizeof text));
      return ACQ_FAILED;
    }
    if (inserted) {
      atomic_fetch_add(&counter_acquired, 1);
      return ACQ_HELD;
    }
    if (!waited) {
      waited = true;
      atomic_fetch_add(&counter_waits, 1);
    }
    if (spent >= wait_ms) {
      atomic_fetch_add(&counter_timeouts, 1);
      return ACQ_TIMED_OUT;
    }
    const int64_t timeout = step < wait_ms - spent ? step : wait_ms - spent;
    const int64_t start = monotonic_ms();
    bool changed = false;
    const int wst = sleeper(ops, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key), &version,
                            timeout, &changed);
    if (wst != EPHPM_KV_OK) {
      snprintf(why, why_len, "waiting for the session lock failed: %s",
               ephpm_kv_status_name(wst));
      return ACQ_FAILED;
    }
    if (changed) {
      /* Released or taken over (or, the first time, just observed): try
       * again at once; only the time actually spent counts. */
      spent += monotonic_ms() - start;
    } else {
      spent += timeout;
      step = step > max_step / 2 ? max_step : step * 2;
    }
  }
}

/* Applies ephpm.session_lock_failure to a request that runs without the
 * lock: `reason` says why, `waited_ms` (or -1) how long it waited.  FAILURE
 * for "fail". */
static zend_result apply_lock_failure(ephpm_ps_data *d, const char *reason, zend_long waited_ms,
                                      ps_messages *m) {
  char after[48] = "";
  if (waited_ms >= 0) snprintf(after, sizeof after, " after " ZEND_LONG_FMT " ms", waited_ms);
  d->lock = LOCK_MISSED;
  switch (EPHPM_G(session_lock_failure)) {
    case EPHPM_LOCK_FAILURE_FAIL:
      /* session_start() fails; the calls a user's error handler makes before
       * it returns must not change the data either. */
      d->readonly = "fail";
      note(m, E_WARNING, "Session %s: %s; gave up%s (ephpm.session_lock_failure=fail)",
           sid_for_messages(d), reason, after);
      return FAILURE;
    case EPHPM_LOCK_FAILURE_READONLY:
      d->readonly = "readonly";
      note(m, E_WARNING,
           "Session %s: %s; reading without it%s, the data will not be written "
           "(ephpm.session_lock_failure=readonly)",
           sid_for_messages(d), reason, after);
      return SUCCESS;
    default:
      note(m, E_WARNING,
           "Session %s: %s; proceeding without it%s (ephpm.session_lock_failure=proceed)",
           sid_for_messages(d), reason, after);
      return SUCCESS;
  }
}

/* ---- the save handler ------------------------------------------------------ */

/* Points d at `key`.  An id other than the one this request read (and so
 * locked) first gives that lock back: a write or destroy after session_id()
 * changed, or a read after session_regenerate_id(). */
static void switch_sid(const ephpm_kv_ops *ops, ephpm_ps_data *d, zend_string *key,
                       ps_messages *m) {
  if (d->sid != NULL && zend_string_equals(d->sid, key)) return;
  if (d->sid != NULL) release_lock(ops, d, m);
  use_sid(d, key);
  d->lock = LOCK_NONE;  /* no lock was taken for this id */
}

PS_OPEN_FUNC(ephpm) {
  (void)save_path;
  (void)session_name;
  if (ephpm_ops_get() == NULL) return FAILURE;  /* an Error says why */
  /* Open again without a close: session_reset() re-initializes an active
   * session this way.  Keep the state, and with it the lock this request
   * holds (a fresh one would wait on that lock). */
  if (PS_GET_MOD_DATA() != NULL) return SUCCESS;
  PS_SET_MOD_DATA(ecalloc(1, sizeof(ephpm_ps_data)));
  return SUCCESS;
}

PS_CLOSE_FUNC(ephpm) {
  ephpm_ps_data *d = PS_GET_MOD_DATA();
  if (d == NULL) return SUCCESS;
  PS_SET_MOD_DATA(NULL);
  ps_messages m;
  m.count = 0;
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops != NULL) release_lock(ops, d, &m);
  forget_keys(d);
  efree(d);
  return finish(&m, SUCCESS);
}

/* The lock and the data of PS_READ, up to the point where only messages are
 * left to emit.  Not inlined: PS_READ holds a zend_try (a setjmp), and gcc
 * at -O1 (-Wclobbered) counts this function's locals among those a longjmp
 * could clobber once they share its frame (none is read after the setjmp). */
static zend_never_inline zend_result read_data(const ephpm_kv_ops *ops, ephpm_ps_data *d,
                                               zend_string *key, zend_string **val,
                                               ps_messages *m) {
  switch_sid(ops, d, key, m);
  /* Read again (session_reset()) after running without the lock, or after
   * giving it back: try again, and apply ephpm.session_lock_failure afresh. */
  if (d->lock == LOCK_MISSED || d->lock == LOCK_RELEASED) d->lock = LOCK_NONE;
  d->readonly = NULL;

  if (EPHPM_G(session_locking) && d->lock == LOCK_NONE) {
    char why[256];
    switch (acquire_lock(ops, d, m, why, sizeof why)) {
      case ACQ_HELD:
        d->lock = LOCK_HELD;
        break;
      case ACQ_UNCONFIRMED:
        d->lock = LOCK_UNCONFIRMED;
        if (EPHPM_G(session_lock_failure) == EPHPM_LOCK_FAILURE_PROCEED) {
          /* On without the confirmation.  The token is kept: if the grant
           * landed anyway, close releases it. */
          note(m, E_WARNING,
               "Session %s: the session lock's owner is unreachable, the outcome is unknown; "
               "proceeding without confirmation",
               sid_for_messages(d));
          break;
        }
        /* readonly or fail: as for any other lock the request could not
         * take.  A grant that landed anyway is given back now (or ends
         * with its TTL if the owner is still unreachable). */
        release_lock(ops, d, m);
        if (apply_lock_failure(d, "the session lock's owner is unreachable, the outcome is unknown",
                               -1, m) == FAILURE) {
          return FAILURE;
        }
        break;
      case ACQ_FAILED:
        /* Not contention, but the request runs without the lock all the
         * same: the policy decides, as for a wait that ran out. */
        if (apply_lock_failure(d, why, -1, m) == FAILURE) return FAILURE;
        break;
      case ACQ_TIMED_OUT:
        if (apply_lock_failure(d, "the session lock is held by another request",
                               EPHPM_G(session_lock_wait_ms), m) == FAILURE) {
          return FAILURE;
        }
        break;
    }
  }

  char *value = NULL;
  size_t len = 0;
  int st;
  if (d->lock == LOCK_HELD && EPHPM_KV_OPS_HAS(ops, get_from_owner)) {
    /* In a cluster the lock's owner (also the data's: the keys share their
     * {sid}) has the previous holder's write even if it has not reached
     * this node yet. */
    st = ops->get_from_owner(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &value,
                             &len);
    if (st == EPHPM_KV_OWNER_UNREACHABLE) {
      note(m, E_WARNING,
           "Session %s: the session data's owner is unreachable; reading this node's copy, "
           "which may miss the latest write",
           sid_for_messages(d));
      st = ops->get(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &value, &len);
    }
  } else {
    st = ops->get(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &value, &len);
  }
  if (st == EPHPM_KV_NOT_FOUND) {
    *val = ZSTR_EMPTY_ALLOC();  /* a missing session reads as empty */
    return SUCCESS;
  }
  if (st != EPHPM_KV_OK) {
    note(m, E_WARNING, "Session %s: reading the session data failed: %s", sid_for_messages(d),
         ephpm_kv_status_name(st));
    release_lock(ops, d, m);  /* the undo path releases by token too */
    return FAILURE;
  }
  zend_string *out = zend_string_init(value, len, 0);
  free(value);
  *val = out;
  return SUCCESS;
}

PS_READ_FUNC(ephpm) {
  (void)maxlifetime;
  ephpm_ps_data *d = PS_GET_MOD_DATA();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (d == NULL || ops == NULL) return FAILURE;
  ps_messages m;
  m.count = 0;
  const zend_result result = read_data(ops, d, key, val, &m);
  if (m.count == 0) return result;
  /* The user code the messages may run sees a session whose data has not
   * reached PHP yet: $_SESSION is still empty.  A write it causes
   * (session_write_close(), session_regenerate_id()) would store that emptiness
   * over the session, so writes are refused until this read has returned. */
  ++EPHPM_G(session_reads_in_progress);
  zend_try {
    finish(&m, result);
  } zend_catch {
    --EPHPM_G(session_reads_in_progress);
    zend_bailout();
  } zend_end_try();
  --EPHPM_G(session_reads_in_progress);
  return result;
}

/* A fenced write, destroy or refresh found another request's token on the
 * lock: this request ran past its TTL, and the holder's data is kept. */
static void note_fenced(ps_messages *m, const ephpm_ps_data *d, const char *what) {
  atomic_fetch_add(&counter_fenced, 1);
  note(m, E_WARNING,
       "Session %s: %s: this request no longer holds the session lock (it ran past "
       "ephpm.session_lock_ttl_ms=" ZEND_LONG_FMT " and another request took it); that "
       "request's data is kept",
       sid_for_messages(d), what, EPHPM_G(session_lock_ttl_ms));
}

/* Writes the data: fenced by the lock when this request holds it. */
static zend_result write_data(const ephpm_kv_ops *ops, ephpm_ps_data *d, zend_string *val,
                              zend_long maxlifetime, ps_messages *m) {
  const int64_t ttl_ms = data_ttl_ms(maxlifetime);
  int st;
  if (d->lock == LOCK_HELD) {
    if (!EPHPM_KV_OPS_HAS(ops, set_if_eq)) {
      /* Only if the table changed under this request. */
      note(m, E_WARNING,
           "Session %s: the data was not written: the ops table has no set_if_eq operation, "
           "so the write cannot be fenced",
           sid_for_messages(d));
      return FAILURE;
    }
    int written = 0;
    st = ops->set_if_eq(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key), d->token, 32,
                        ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), ZSTR_VAL(val),
                        ZSTR_LEN(val), ttl_ms, &written);
    if (st == EPHPM_KV_OK && !written) {
      note_fenced(m, d, "the data was not written");
      return FAILURE;
    }
  } else {
    st = ops->set(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), ZSTR_VAL(val),
                  ZSTR_LEN(val), ttl_ms);
  }
  if (st != EPHPM_KV_OK) {
    char text[320];
    note(m, E_WARNING, "Session %s: writing the session data failed: %s", sid_for_messages(d),
         status_text(ops, st, text, sizeof text));
    return FAILURE;
  }
  return SUCCESS;
}

/* Whether this request may change the stored data now; notes why not. */
static bool may_change(const ephpm_ps_data *d, const char *what, ps_messages *m) {
  if (d->readonly != NULL) {
    note(m, E_WARNING,
         "Session %s: the data was not %s: the session lock was not acquired "
         "(ephpm.session_lock_failure=%s)",
         sid_for_messages(d), what, d->readonly);
    return false;
  }
  if (d->lock == LOCK_RELEASED) {
    /* After a destroy or a failed read (PHP closes the session next): only
     * user code run by a message gets here. */
    note(m, E_WARNING,
         "Session %s: the data was not %s: this request has released the session lock, which "
         "another request may hold now",
         sid_for_messages(d), what);
    return false;
  }
  return true;
}

/* Whether the data PHP hands to PS_WRITE / PS_UPDATE_TIMESTAMP must not be
 * stored; notes why.  Two cases, both reached only through user code:
 *  - PS_READ is still emitting its messages (see PS_READ): $_SESSION does not
 *    hold the data yet, and writing it would store that emptiness;
 *  - an exception is pending: PHP encodes $_SESSION, a __sleep() or
 *    __serialize() threw, and PHP passes on what the encoder had produced so
 *    far (PHP 8.2 does not check), a truncated value that would not even
 *    decode. */
static bool data_unfit(zend_string *key, ps_messages *m) {
  if (EPHPM_G(session_reads_in_progress) > 0) {
    note(m, E_WARNING,
         "Session %s: the data was not written: the session was still being read (a session "
         "function was called from an error handler during the read), so $_SESSION does not "
         "hold its data yet; the stored data is kept",
         ZSTR_VAL(key));
    return true;
  }
  if (EG(exception) != NULL) {
    note(m, E_WARNING,
         "Session %s: the data was not written: an exception was thrown while it was encoded, "
         "so it may be incomplete; the stored data is kept",
         ZSTR_VAL(key));
    return true;
  }
  return false;
}

PS_WRITE_FUNC(ephpm) {
  ephpm_ps_data *d = PS_GET_MOD_DATA();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (d == NULL || ops == NULL) return FAILURE;
  ps_messages m;
  m.count = 0;
  if (data_unfit(key, &m)) return finish(&m, FAILURE);
  switch_sid(ops, d, key, &m);
  if (!may_change(d, "written", &m)) {
    /* readonly's documented outcome is a warning, not a failed write */
    return finish(&m, d->readonly != NULL ? SUCCESS : FAILURE);
  }
  const zend_result result = write_data(ops, d, val, maxlifetime, &m);
  return finish(&m, result);
}

/* Deletes the data: fenced by the lock when this request holds it. */
static zend_result destroy_data(const ephpm_kv_ops *ops, ephpm_ps_data *d, ps_messages *m) {
  if (!may_change(d, "destroyed", m)) return FAILURE;
  int st;
  if (d->lock == LOCK_HELD) {
    int matched = 0;
    if (EPHPM_KV_OPS_HAS(ops, del_if_guard_eq)) {
      int removed = 0;
      st = ops->del_if_guard_eq(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key), d->token,
                                32, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &matched,
                                &removed);
    } else if (EPHPM_KV_OPS_HAS(ops, set_if_eq)) {
      /* A host from before del_if_guard_eq: the fenced write of empty data
       * (what a missing session reads as) that expires after 1 ms, one
       * atomic decision all the same. */
      st = ops->set_if_eq(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key), d->token, 32,
                          ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), "", 0, 1, &matched);
    } else {
      /* Only if the table changed under this request. */
      note(m, E_WARNING,
           "Session %s: the session was not destroyed: the ops table has no fenced delete or "
           "write, so the destroy cannot be fenced",
           sid_for_messages(d));
      return FAILURE;
    }
    if (st == EPHPM_KV_OK && !matched) {
      note_fenced(m, d, "the session was not destroyed");
      return FAILURE;
    }
  } else {
    /* No lock (locking off, proceed without it, an unconfirmed grant): the
     * plain delete, the same trade the write makes. */
    int64_t removed = 0;
    st = ops->del(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &removed);
  }
  if (st != EPHPM_KV_OK) {
    char text[320];
    note(m, E_WARNING, "Session %s: destroying the session failed: %s", sid_for_messages(d),
         status_text(ops, st, text, sizeof text));
    return FAILURE;
  }
  return SUCCESS;
}

PS_DESTROY_FUNC(ephpm) {
  ephpm_ps_data *d = PS_GET_MOD_DATA();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (d == NULL || ops == NULL) return FAILURE;
  ps_messages m;
  m.count = 0;
  switch_sid(ops, d, key, &m);
  const zend_result result = destroy_data(ops, d, &m);
  release_lock(ops, d, &m);
  return finish(&m, result);
}

PS_GC_FUNC(ephpm) {
  (void)mod_data;
  (void)maxlifetime;
  /* Session data carries a TTL of session.gc_maxlifetime: nothing to scan. */
  *nrdels = 0;
  return 0;
}

PS_CREATE_SID_FUNC(ephpm) {
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) return NULL;
  /* A random id is unique in practice; check anyway, so an id that exists is
   * never handed out. */
  ps_messages m;
  m.count = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    zend_string *sid = php_session_create_id(mod_data);
    if (sid == NULL) return NULL;
    zend_string *data_key = make_key(":", sid);
    int exists = 0;
    const int st = ops->exists(ops->ctx, ZSTR_VAL(data_key), ZSTR_LEN(data_key), &exists);
    zend_string_release(data_key);
    if (st == EPHPM_KV_OK && !exists) return sid;
    zend_string_release(sid);
    if (st != EPHPM_KV_OK) {
      note(&m, E_WARNING, "Checking a new session id failed: %s", ephpm_kv_status_name(st));
      finish(&m, FAILURE);
      return NULL;
    }
  }
  note(&m, E_WARNING, "Could not create a session id that is not in use");
  finish(&m, FAILURE);
  return NULL;
}

PS_VALIDATE_SID_FUNC(ephpm) {
  (void)mod_data;
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (ops == NULL) return FAILURE;
  zend_string *data_key = make_key(":", key);
  int exists = 0;
  const int st = ops->exists(ops->ctx, ZSTR_VAL(data_key), ZSTR_LEN(data_key), &exists);
  zend_string_release(data_key);
  return st == EPHPM_KV_OK && exists ? SUCCESS : FAILURE;
}

/* lazy_write: the data did not change, so only its TTL is refreshed; data
 * that is gone meanwhile (expired or destroyed) is written back. */
static zend_result refresh_data(const ephpm_kv_ops *ops, ephpm_ps_data *d, zend_string *val,
                                zend_long maxlifetime, ps_messages *m) {
  const int64_t ttl_ms = data_ttl_ms(maxlifetime);
  int there = 0;
  int st;
  if (d->lock == LOCK_HELD && EPHPM_KV_OPS_HAS(ops, expire_if_guard_eq)) {
    /* Fenced like the write: a request that lost its lock must not change
     * the TTL of the data of the request that holds it now.  ttl_ms 0 (no
     * TTL) removes the TTL; it never deletes. */
    int matched = 0;
    st = ops->expire_if_guard_eq(ops->ctx, ZSTR_VAL(d->lock_key), ZSTR_LEN(d->lock_key),
                                 d->token, 32, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key),
                                 ttl_ms, &matched, &there);
    if (st == EPHPM_KV_OK && !matched) {
      note_fenced(m, d, "the session's lifetime was not refreshed");
      return FAILURE;
    }
  } else if (ttl_ms > 0) {
    st = ops->expire(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), ttl_ms, &there);
  } else if (EPHPM_KV_OPS_HAS(ops, persist)) {
    /* No TTL.  Never expire(0): that deletes. */
    st = ops->persist(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &there);
    /* applied = 0 also when the data is there without a TTL already */
    if (st == EPHPM_KV_OK && !there) {
      st = ops->exists(ops->ctx, ZSTR_VAL(d->data_key), ZSTR_LEN(d->data_key), &there);
    }
  } else {
    st = EPHPM_KV_OK;  /* an older host without persist: the write below drops the TTL */
  }
  if (st == EPHPM_KV_OK && there) return SUCCESS;
  /* Gone, no persist, or the refresh failed: the (fenced) write decides. */
  return write_data(ops, d, val, maxlifetime, m);
}

PS_UPDATE_TIMESTAMP_FUNC(ephpm) {
  ephpm_ps_data *d = PS_GET_MOD_DATA();
  const ephpm_kv_ops *ops = ephpm_ops_get();
  if (d == NULL || ops == NULL) return FAILURE;
  ps_messages m;
  m.count = 0;
  if (data_unfit(key, &m)) return finish(&m, FAILURE);
  switch_sid(ops, d, key, &m);
  /* readonly skips the refresh without a word (the data is unchanged) */
  if (d->readonly != NULL) return finish(&m, SUCCESS);
  if (!may_change(d, "written", &m)) return finish(&m, FAILURE);
  const zend_result result = refresh_data(ops, d, val, maxlifetime, &m);
  return finish(&m, result);
}

const ps_module ps_mod_ephpm = {PS_MOD_UPDATE_TIMESTAMP(ephpm)};
