/* Argument checks and status reporting, shared by the ephpm_kv_* functions
 * (ephpm_functions.c) and Ephpm\Lock (ephpm_lock.c): one wording for every
 * key, TTL and store status PHP code sees. */

#ifndef EPHPM_REPORT_H
#define EPHPM_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "ephpm/kv_ops.h"
#include "php.h"

/* A key (or lock name) of 1 to EPHPM_KV_MAX_KEY_SIZE bytes; else a ValueError
 * naming argument `arg`. */
bool ephpm_check_key(const zend_string *key, uint32_t arg);

/* A TTL argument in units of `unit_ms` ms, 0 to EPHPM_KV_MAX_TTL_MS, to ms;
 * else a ValueError naming argument `arg`. */
bool ephpm_ttl_to_ms(zend_long ttl, int64_t unit_ms, uint32_t arg, int64_t *ms);

/* A status other than OK the PHP way: an exception for errors in the
 * caller's data, a warning for conditions of the store (the caller then
 * returns false).  `value_arg` names the value for INVALID_ARGUMENT. */
void ephpm_report(const ephpm_kv_ops *ops, int status, uint32_t value_arg);

/* As ephpm_report, and an Error where it would only have warned: for a
 * result that has no false to return. */
void ephpm_report_and_throw(const ephpm_kv_ops *ops, int status);

#endif /* EPHPM_REPORT_H */
