/* The native session save handler "ephpm": session data in the store under
 * "<prefix>:{<sid>}", a lock under "<prefix>_lock:{<sid>}" holding a 128-bit
 * CSPRNG token, released only by compare-and-delete with that token, and a
 * fenced write that refuses a request which no longer holds its lock. */

#ifndef EPHPM_SESSION_H
#define EPHPM_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "ephpm/kv_ops.h"
#include "ext/session/php_session.h"

/* Registered by the extension at module start. */
extern const ps_module ps_mod_ephpm;

/* What ephpm.session_lock_failure says to do when the lock wait runs out. */
typedef enum {
  EPHPM_LOCK_FAILURE_PROCEED = 0, /* warn, run without the lock (the default) */
  EPHPM_LOCK_FAILURE_FAIL = 1,    /* warn, session_start() returns false */
  EPHPM_LOCK_FAILURE_READONLY = 2 /* warn, read the data, skip the write */
} ephpm_lock_failure;

/* Process-wide counters, shown by ephpm_kv_info(). */
typedef struct {
  uint64_t lock_acquired;    /* locks taken */
  uint64_t lock_waits;       /* acquisitions that found the lock held and waited */
  uint64_t lock_timeouts;    /* acquisitions that gave up after the wait */
  uint64_t stale_releases;   /* releases refused: the lock held another token */
  uint64_t fenced_refused;   /* writes refused: the lock held another token */
} ephpm_session_counters;

void ephpm_session_get_counters(ephpm_session_counters *out);

/* The wait between two acquisition attempts: waits up to timeout_ms for the
 * lock key's version to move from *version (through the store's wait op),
 * updates *version and sets *changed when it moved.  Returns a kv status. */
typedef int (*ephpm_session_sleeper)(const ephpm_kv_ops *ops, const char *key, size_t key_len,
                                     uint64_t *version, int64_t timeout_ms, bool *changed);

/* The sleeper the acquire loop uses: the store's wait op unless a test build
 * replaced it (NULL restores the default). */
void ephpm_session_set_sleeper(ephpm_session_sleeper sleeper);
int ephpm_session_default_sleeper(const ephpm_kv_ops *ops, const char *key, size_t key_len,
                                  uint64_t *version, int64_t timeout_ms, bool *changed);

#endif /* EPHPM_SESSION_H */
