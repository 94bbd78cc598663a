/*
 * ephpm_kv_ops: the C ABI between the store and everything written in C (the
 * PHP extension, the session save handler, a host program).
 *
 * Conventions
 *  - Every op takes the table's `ctx` first; a provider binds it to a store.
 *  - Bytes travel as pointer + length and are binary-safe.  A NULL pointer is
 *    allowed only with a length of 0.
 *  - Every op returns an ephpm_kv_status.  Outputs are written only when the
 *    op returns EPHPM_KV_OK, unless the op says otherwise.
 *  - A buffer an op returns (get, wait, keys) is allocated with malloc(3) and
 *    belongs to the caller, who releases it with free(3).  It is allocated
 *    before the op returns, so a caller may use its own allocator (emalloc)
 *    only after the op returned.
 *  - TTLs are milliseconds; 0 means "no expiry".
 *  - Ops are thread-safe: one table may be used from any number of threads.
 *
 * Growth
 *  - The table starts with abi_version and size, then ctx, then function
 *    pointers.  New ops are only ever appended; a changed signature gets a new
 *    slot.  `size` is sizeof(ephpm_kv_ops) as the provider compiled it: a
 *    caller must check EPHPM_KV_OPS_HAS(ops, slot) before using a slot that a
 *    provider of an older revision may lack.
 *  - abi_version changes only if the existing layout ever has to break.
 */

#ifndef EPHPM_KV_OPS_H_
#define EPHPM_KV_OPS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EPHPM_KV_ABI_VERSION 1u

/* Keys longer than this are refused with EPHPM_KV_INVALID_ARGUMENT. */
#define EPHPM_KV_MAX_KEY_SIZE 65536u

/* The longest TTL in ms that every op accepts at any time.  An op adds a TTL
 * to the current time and refuses a sum past the int64 range; half the range
 * leaves room for "now" for the next 146 million years.  A caller with a
 * longer TTL (session.gc_maxlifetime = PHP_INT_MAX) clamps it to this. */
#define EPHPM_KV_MAX_TTL_MS (INT64_MAX / 2)

/* Same values as ephpm::Status; never renumbered, only appended. */
typedef enum ephpm_kv_status {
  EPHPM_KV_OK = 0,
  EPHPM_KV_NOT_FOUND = 1,          /* missing or expired */
  EPHPM_KV_OUT_OF_MEMORY = 2,      /* memory limit or allocation failure */
  EPHPM_KV_INVALID_ARGUMENT = 3,   /* over-long key/value, negative TTL ... */
  EPHPM_KV_OWNER_UNREACHABLE = 4,  /* cluster: outcome unknown */
  EPHPM_KV_WRONG_TYPE = 5,         /* the key holds another type */
  EPHPM_KV_NOT_INTEGER = 6,        /* incr on a non-integer value */
  EPHPM_KV_OVERFLOW = 7,           /* incr result out of int64 range */
  EPHPM_KV_NOT_FLOAT = 8,          /* incrbyfloat on a non-number */
  EPHPM_KV_NAN_OR_INFINITY = 9,    /* incrbyfloat result not finite */
  EPHPM_KV_PERSISTENCE_ERROR = 10  /* the log cannot be written: write refused */
} ephpm_kv_status;

/* One key in a list returned by keys: points into the same malloc block. */
typedef struct ephpm_kv_bytes {
  const char *data;
  size_t len;
} ephpm_kv_bytes;

/* A whole list in one malloc block; free(3) the ephpm_kv_list pointer once. */
typedef struct ephpm_kv_list {
  size_t count;
  ephpm_kv_bytes items[]; /* followed by the bytes themselves */
} ephpm_kv_list;

/* Store figures for ephpm_kv_ops.info.  The caller sets `size` to
 * sizeof(ephpm_kv_info) as it was compiled; the provider fills only the fields
 * that fit, so either side may be newer.  Fields are only ever appended. */
typedef struct ephpm_kv_info {
  uint32_t size;
  uint64_t keys;                      /* live entries */
  uint64_t memory_used;               /* accounted bytes */
  uint64_t memory_limit;              /* 0 = unlimited */
  uint64_t max_value_size;            /* longest value accepted */
  uint64_t hits;
  uint64_t misses;
  uint64_t expired;                   /* expired entries removed */
  uint64_t evicted;                   /* entries removed by the memory policy */
  uint64_t compressed_values;         /* entries stored compressed */
  uint64_t compressed_original_bytes; /* their sizes before compression */
  uint64_t compressed_stored_bytes;   /* their sizes as stored */
  uint64_t pinned_keys;               /* live locks (set_nx with a TTL), never evicted */
  uint64_t pinned_bytes;              /* their accounted bytes, part of memory_used */
} ephpm_kv_info;

/* One member of a cluster, as ephpm_kv_ops.cluster_state reports it.  The
 * strings are NUL-terminated and live in the same block as the state. */
typedef struct ephpm_kv_cluster_member {
  const char *id;
  const char *address; /* "host:port" of its data plane */
  const char *state;   /* "alive", "suspect" or "dead", as this node sees it */
  uint64_t incarnation;
} ephpm_kv_cluster_member;

/* A named count of the cluster ("alive", "routed_calls", ...). */
typedef struct ephpm_kv_cluster_counter {
  const char *name;
  uint64_t value;
} ephpm_kv_cluster_counter;

/* The cluster as this node sees it, in one malloc block: free(3) the
 * ephpm_kv_cluster_state pointer once.  The counters come in a fixed order
 * (the order of INFO's cluster section); new ones are only ever appended. */
typedef struct ephpm_kv_cluster_state {
  const char *node_id;
  const char *address; /* "host:port" this node's data plane listens on */
  size_t counter_count;
  const ephpm_kv_cluster_counter *counters;
  size_t member_count;
  const ephpm_kv_cluster_member *members; /* every member known, self included */
} ephpm_kv_cluster_state;

/* Durability as ephpm_kv_ops.persistence_state reports it, in one malloc
 * block: free(3) the pointer once.  The strings are NUL-terminated; the
 * counters come in a fixed order, new ones only ever appended:
 * rewrite_in_progress, last_rewrite_ok, rewrites, last_save_unix, log_bytes,
 * log_base_bytes, buffered_bytes, records, write_calls, fsyncs,
 * commit_batches, commit_records, commit_max_batch, loaded_records,
 * loaded_keys, truncated_bytes, load_ms (see ephpm::PersistenceInfo). */
typedef struct ephpm_kv_persistence {
  int enabled;                    /* 0: no data dir; the rest is empty */
  const char *fsync;              /* "always", "everysec" or "no" */
  const char *data_dir;
  const char *write_error;        /* "" while the log is written fine */
  const char *last_rewrite_error; /* "" when the last snapshot succeeded */
  size_t counter_count;
  const ephpm_kv_cluster_counter *counters;
} ephpm_kv_persistence;

typedef struct ephpm_kv_ops {
  uint32_t abi_version; /* EPHPM_KV_ABI_VERSION */
  uint32_t size;        /* sizeof(ephpm_kv_ops) of the provider */
  void *ctx;            /* passed as the first argument of every op */

  /* OK: *value (malloc'ed, never NULL, even for "") and *value_len.
   * NOT_FOUND when missing or expired; WRONG_TYPE for a non-string. */
  int (*get)(void *ctx, const char *key, size_t key_len, char **value,
             size_t *value_len);

  /* Stores a string, replacing any entry.  ttl_ms > 0 expires, 0 = none,
   * negative = INVALID_ARGUMENT.  OUT_OF_MEMORY changes nothing. */
  int (*set)(void *ctx, const char *key, size_t key_len, const char *value,
             size_t value_len, int64_t ttl_ms);

  /* Creates the key only if no live entry exists.  OK with *inserted = 1
   * (created) or 0 (a live entry exists).  With ttl_ms > 0 the key is a lock:
   * the memory policy never evicts it while it is live.  OUT_OF_MEMORY and
   * OWNER_UNREACHABLE are reported as such; OWNER_UNREACHABLE means the
   * outcome is unknown. */
  int (*set_nx)(void *ctx, const char *key, size_t key_len, const char *value,
                size_t value_len, int64_t ttl_ms, int *inserted);

  /* OK with *removed = 1 when a live entry was removed, else 0. */
  int (*del)(void *ctx, const char *key, size_t key_len, int64_t *removed);

  /* OK with *exists = 1 when a live entry of any type is there, else 0. */
  int (*exists)(void *ctx, const char *key, size_t key_len, int *exists);

  /* Adds delta to the integer at key (missing = 0), keeping its TTL.  OK with
   * *result.  NOT_INTEGER / OVERFLOW keep the value. */
  int (*incr_by)(void *ctx, const char *key, size_t key_len, int64_t delta,
                 int64_t *result);

  /* Sets the TTL to ttl_ms from now; ttl_ms <= 0 deletes the key.  OK with
   * *applied = 1 when a live entry was there, else 0. */
  int (*expire)(void *ctx, const char *key, size_t key_len, int64_t ttl_ms,
                int *applied);

  /* OK with *ttl_ms = ms left (> 0), -1 = no expiry, -2 = missing. */
  int (*pttl)(void *ctx, const char *key, size_t key_len, int64_t *ttl_ms);

  /* Removes every entry.  Always OK. */
  int (*flush_all)(void *ctx);

  /* Blocks until the key's version differs from last_version or timeout_ms
   * passes (an absent key has version 0).  OK with *changed = 1, *found,
   * *value (malloc'ed when *found, else NULL), *value_len, *version; or OK
   * with *changed = 0 on timeout (then *value is NULL and *version is the
   * unchanged version). */
  int (*wait)(void *ctx, const char *key, size_t key_len, uint64_t last_version,
              int64_t timeout_ms, int *changed, int *found, char **value,
              size_t *value_len, uint64_t *version);

  /* Removes the key only while it holds a live string equal to token, in one
   * step.  OK with *deleted = 1 or 0.  WRONG_TYPE on a non-string;
   * OWNER_UNREACHABLE means the outcome is unknown. */
  int (*del_if_eq)(void *ctx, const char *key, size_t key_len,
                   const char *token, size_t token_len, int *deleted);

  /* ---- appended after the original table; check EPHPM_KV_OPS_HAS ---- */

  /* Removes the TTL.  OK with *applied = 1 when a live entry had one. */
  int (*persist)(void *ctx, const char *key, size_t key_len, int *applied);

  /* OK with *keys = every live key matching the Redis glob (malloc'ed). */
  int (*keys)(void *ctx, const char *pattern, size_t pattern_len,
              ephpm_kv_list **keys);

  /* OK with *count = number of live entries. */
  int (*dbsize)(void *ctx, uint64_t *count);

  /* Reads `count` keys.  OK with *values (malloc'ed): one item per key, in
   * order; an item's data is NULL when the key is missing, expired or not a
   * string, and non-NULL (even for "") when found.  INVALID_ARGUMENT when a
   * key is too long. */
  int (*mget)(void *ctx, const ephpm_kv_bytes *keys, size_t count, ephpm_kv_list **values);

  /* Fills *info (see ephpm_kv_info).  Always OK. */
  int (*info)(void *ctx, ephpm_kv_info *info);

  /* The fenced write: stores value under key (ttl_ms as in set) only while
   * guard holds a live string equal to token, as one atomic decision.  OK with
   * *written = 1, or 0 when the guard does not hold the token.  WRONG_TYPE
   * when the guard is not a string; OUT_OF_MEMORY changes nothing;
   * OWNER_UNREACHABLE means the outcome is unknown. */
  int (*set_if_eq)(void *ctx, const char *guard, size_t guard_len, const char *token,
                   size_t token_len, const char *key, size_t key_len, const char *value,
                   size_t value_len, int64_t ttl_ms, int *written);

  /* get into the caller's buffer, for small values without a malloc: OK with
   * *value_len = the value's length; the bytes are in buf only when
   * *value_len <= buf_len (else call get).  NOT_FOUND / WRONG_TYPE as get. */
  int (*get_into)(void *ctx, const char *key, size_t key_len, char *buf, size_t buf_len,
                  size_t *value_len);

  /* The cluster this store is a node of, as "name:value" lines (node id,
   * address, and one "cluster_memberN:id=..,address=..,state=..,incarnation=.."
   * line per member this node knows).  OK with *text (malloc'ed, NUL
   * terminated) and *text_len, or *text = NULL when the store is not in a
   * cluster.  OUT_OF_MEMORY when the text cannot be allocated. */
  int (*cluster_info)(void *ctx, char **text, size_t *text_len);

  /* As get, but read on the key's owner in a cluster, so the caller sees the
   * owner's latest decision even before replication brings it here (the
   * session handler reads its data so while it holds the session lock).  On
   * a single node, the same as get.  OWNER_UNREACHABLE when the owner cannot
   * be asked (the local copy may then be read with get). */
  int (*get_from_owner)(void *ctx, const char *key, size_t key_len, char **value,
                        size_t *value_len);

  /* The fenced delete: removes key only while guard holds a live string
   * equal to token, as one atomic decision (the session handler's destroy).
   * OK with *matched = 1 when the guard held the token (then *removed = 1
   * when a live entry was removed, 0 when key was already absent), or
   * *matched = 0 when it did not (nothing removed).  WRONG_TYPE when the guard
   * is not a string; OWNER_UNREACHABLE means the outcome is unknown. */
  int (*del_if_guard_eq)(void *ctx, const char *guard, size_t guard_len, const char *token,
                         size_t token_len, const char *key, size_t key_len, int *matched,
                         int *removed);

  /* The fenced TTL refresh: gives key a TTL of ttl_ms from now (0 removes its
   * TTL) only while guard holds a live string equal to token, as one atomic
   * decision (the session handler's lazy_write refresh).  OK with *matched = 1
   * when the guard held the token (then *applied = 1 when key was there, 0
   * when it was absent), or *matched = 0 (nothing changed).  A negative
   * ttl_ms is INVALID_ARGUMENT; WRONG_TYPE when the guard is not a string;
   * OWNER_UNREACHABLE means the outcome is unknown. */
  int (*expire_if_guard_eq)(void *ctx, const char *guard, size_t guard_len, const char *token,
                            size_t token_len, const char *key, size_t key_len, int64_t ttl_ms,
                            int *matched, int *applied);

  /* The cluster as this node sees it, typed (cluster_info is the same as
   * text).  OK with *state (one malloc block, free(*state) releases it), or
   * *state = NULL when the store is not in a cluster.  OUT_OF_MEMORY when it
   * cannot be allocated. */
  int (*cluster_state)(void *ctx, ephpm_kv_cluster_state **state);

  /* As set_nx, for a lock held by a request of this process (the session
   * lock): when this node decides, the entry is ephemeral, neither logged
   * nor snapshotted, so a restart does not bring back a lock whose holder
   * died with the process.  Allowed while PERSISTENCE_ERROR refuses other
   * writes.  (Every write op answers PERSISTENCE_ERROR while the log cannot
   * be written, except this one and del_if_eq; with fsync=always every write
   * op returns only once its change is durable, or PERSISTENCE_ERROR.) */
  int (*set_nx_ephemeral)(void *ctx, const char *key, size_t key_len, const char *value,
                          size_t value_len, int64_t ttl_ms, int *inserted);

  /* A snapshot and log compaction: background = 0 waits for it (SAVE),
   * 1 starts it (BGREWRITEAOF).  OK or an error status, either way with
   * *message (malloc'ed, NUL terminated, free(3) it) saying what happened:
   * INVALID_ARGUMENT when persistence is off or a rewrite is in progress,
   * PERSISTENCE_ERROR when it failed. */
  int (*rewrite)(void *ctx, int background, char **message, size_t *message_len);

  /* OK with *state (one malloc block, see ephpm_kv_persistence).
   * OUT_OF_MEMORY when it cannot be allocated. */
  int (*persistence_state)(void *ctx, ephpm_kv_persistence **state);

  /* ---- locks with fencing tokens (docs/LOCKS.md) ---- */

  /* set_nx that also returns the grant's fencing token: OK with *inserted =
   * 1 and *fence (> every fence granted or recorded before, see
   * docs/LOCKS.md), or *inserted = 0 (a live entry exists; *fence = 0).
   * ephemeral = 1 takes it as set_nx_ephemeral does (a lock held by a request
   * of this process: never logged, taken while writes are refused). */
  int (*set_nx_fenced)(void *ctx, const char *key, size_t key_len, const char *value,
                       size_t value_len, int64_t ttl_ms, int ephemeral, int *inserted,
                       uint64_t *fence);

  /* Compare-and-expire: gives the key a TTL of ttl_ms from now only while it
   * holds a live string equal to token, in one step (ttl_ms <= 0 removes it
   * then).  OK with *applied = 1 or 0.  WRONG_TYPE on a non-string;
   * OWNER_UNREACHABLE means the outcome is unknown. */
  int (*expire_if_eq)(void *ctx, const char *key, size_t key_len, const char *token,
                      size_t token_len, int64_t ttl_ms, int *applied);

  /* The fenced write: stores the value (ttl_ms as in set) only when fence is
   * at least the highest fence recorded for the key, and records it.  OK with
   * *written = 1, or 0 when a higher fence is recorded (nothing changed).
   * fence 0 or above INT64_MAX is INVALID_ARGUMENT. */
  int (*set_fenced)(void *ctx, const char *key, size_t key_len, const char *value,
                    size_t value_len, uint64_t fence, int64_t ttl_ms, int *written);

  /* Whether the key holds token now (asked of the key's owner in a cluster).
   * OK with *state: 0 held, 1 live with another value or type, 2 absent; and
   * for a live key *pttl_ms (ms left, -1 without expiry) and *fence (0 for
   * none); for an absent one *pttl_ms = -2 and *fence = 0. */
  int (*lock_state)(void *ctx, const char *key, size_t key_len, const char *token,
                    size_t token_len, int *state, int64_t *pttl_ms, uint64_t *fence);
} ephpm_kv_ops;

/* True when `ops` (of the provider's `size`) has a non-NULL `slot`. */
#define EPHPM_KV_OPS_HAS(ops, slot)                                  \
  ((ops)->size >= offsetof(ephpm_kv_ops, slot) + sizeof((ops)->slot) && \
   (ops)->slot != NULL)

/* A short constant name for a status ("out of memory"); never NULL. */
const char *ephpm_kv_status_name(int status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EPHPM_KV_OPS_H_ */
