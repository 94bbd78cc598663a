<?php

/**
 * Test-only functions: compiled into the test build of the extension
 * (EPHPM_TEST_HOOKS), never into the shipped ephpm.so.
 *
 * @generate-function-entries
 */

/**
 * Installs an ops table through ephpm_set_kv_ops(), the path a host uses:
 * "standalone" (uninstall), "full" (a copy of the standalone store's table),
 * "short" (a host before del_if_eq), "tiny" (shorter than any table),
 * "abi" (another ABI version), "unreachable" (set_nx, del_if_eq and set_if_eq
 * report an unreachable owner and change nothing), "unreachable_landed" (set_nx
 * takes the lock but reports an unreachable owner, as a timed-out request that
 * reached the owner would), "wrongtype" (key operations report WRONGTYPE),
 * "get_fails" (only get reports WRONGTYPE, to fail a session read),
 * "owner_read_unreachable" (only get_from_owner reports an unreachable
 * owner), "no_guard_delete" (a host from before del_if_guard_eq, so also
 * without expire_if_guard_eq), "no_guard_expire" (a host from before
 * expire_if_guard_eq),
 * "lock_oom" (set_nx reports out of memory: a lock attempt that fails for a
 * reason other than contention), "write_oom" (set and set_if_eq report out
 * of memory: a session write that fails while the lock works), "no_persist"
 * (a host table that ends before persist, so also without set_if_eq),
 * "no_ephemeral" (a host from before set_nx_ephemeral: the session lock is
 * taken with set_nx), "no_lock_ops" (a host from before set_nx_fenced,
 * expire_if_eq, set_fenced and lock_state).
 * Every variant counts its calls of set_nx, set_nx_ephemeral, del_if_eq,
 * set_if_eq, del, get, get_from_owner, del_if_guard_eq, expire_if_guard_eq,
 * set_nx_fenced, expire_if_eq, set_fenced and lock_state; set_nx_ephemeral
 * (the session lock's op) and set_nx_fenced fail as set_nx does;
 * "unreachable" and "wrongtype" fail del_if_guard_eq, expire_if_guard_eq,
 * expire_if_eq and set_fenced as they fail del_if_eq ("unreachable" fails
 * lock_state too); "write_oom" fails set_fenced as set.
 */
function ephpm_test_install_host_ops(string $variant): void {}

/** The counts kept by the installed variant: ['set_nx' => int, ...]. */
function ephpm_test_op_calls(): array {}

/**
 * Starts (true) or stops recording the session lock's waits: each wait the
 * acquire loop performs, as ['timeout_ms' => int, 'woken' => bool].
 */
function ephpm_test_session_trace(bool $enable): void {}

/** The waits recorded since ephpm_test_session_trace(true). */
function ephpm_test_session_trace_get(): array {}

/** Deletes $key from the store after $delay_ms, from another thread. */
function ephpm_test_delete_after(string $key, int $delay_ms): void {}

/**
 * Once the request has ended (after its Ephpm\Lock objects were released),
 * writes "at request end: $key is free" (or "is still held") to stdout.
 */
function ephpm_test_check_at_request_end(string $key): void {}
