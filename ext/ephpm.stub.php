<?php

/**
 * ephpm: the in-process key-value store, from PHP.
 *
 * This file is the source of truth for the functions' signatures (ephpm_arginfo.h
 * is generated from it with PHP's gen_stub.php) and doubles as an IDE stub.
 *
 * Keys are binary-safe strings of 1 to 65536 bytes. TTLs are seconds (p-variants:
 * milliseconds); 0 means no expiry.
 *
 * @generate-function-entries
 * @generate-class-entries
 */

namespace {

/** Returns the value, or null when the key is missing or expired. */
function ephpm_kv_get(string $key): ?string {}

/** Stores a value, replacing any entry; $ttl in seconds, 0 = none. */
function ephpm_kv_set(string $key, string $value, int $ttl = 0): bool {}

/** Creates the key only if it does not exist; true only if this call created it. */
function ephpm_kv_setnx(string $key, string $value, int $ttl = 0): bool {}

/**
 * Removes the key; returns the number of entries removed (0 or 1), or false
 * with a warning while the store refuses writes because its log cannot be
 * written (as every write function does then).
 */
function ephpm_kv_del(string $key): int|false {}

/**
 * Removes the key only while it holds exactly $token, as one atomic step.
 * Returns true only if it removed a live entry equal to $token. Release a lock
 * with this, never with ephpm_kv_del().
 */
function ephpm_kv_del_if_eq(string $key, string $token): bool {}

function ephpm_kv_exists(string $key): bool {}

/**
 * Adds 1 to the integer at $key (a missing key counts as 0) and returns the new
 * value; false with a warning when the store refuses the write for memory.
 * Throws Error when the value is not an integer or the result would overflow.
 */
function ephpm_kv_incr(string $key): int|false {}

/** Subtracts 1 from the integer at $key; as ephpm_kv_incr(). */
function ephpm_kv_decr(string $key): int|false {}

/** Adds $delta to the integer at $key; as ephpm_kv_incr(). */
function ephpm_kv_incr_by(string $key, int $delta): int|false {}

/** Sets the TTL in seconds; 0 deletes the key. False when the key does not exist. */
function ephpm_kv_expire(string $key, int $ttl): bool {}

/** Sets the TTL in milliseconds; 0 deletes the key. False when the key does not exist. */
function ephpm_kv_pexpire(string $key, int $ttl): bool {}

/** Removes the TTL; false when the key does not exist or has none. */
function ephpm_kv_persist(string $key): bool {}

/** Seconds left (rounded as Redis does), -1 without expiry, -2 when missing. */
function ephpm_kv_ttl(string $key): int {}

/** Milliseconds left, -1 without expiry, -2 when missing. */
function ephpm_kv_pttl(string $key): int {}

/** Values of the string keys in $keys, in the same order, null for missing ones. */
function ephpm_kv_mget(array $keys): array {}

/** Live keys matching a Redis glob pattern (* ? [a-z] [^x] \x). */
function ephpm_kv_keys(string $pattern = "*"): array {}

/** Removes every key. */
function ephpm_kv_flush_all(): bool {}

/**
 * Waits until the key's version differs from $last_version (0 for "not seen yet":
 * returns at once when the key exists), for at most $timeout_ms milliseconds.
 * Returns ['value' => ?string, 'version' => int], or false on timeout.
 */
function ephpm_kv_wait(string $key, int $last_version, int $timeout_ms): array|false {}

/**
 * Store figures: keys, memory_used, memory_limit, hits, misses, expired,
 * evicted, compressed_values, compression_ratio, mode ("host" or "standalone"),
 * the session lock counters, and cluster: null on a single node, else this
 * node's view (node_id, address, incarnation, known, alive, members: each
 * with id, address, state "alive"/"suspect"/"dead" and incarnation).
 *
 * Durability (ephpm.persistence, the host's --data-dir), false / "" / 0 when
 * off: persistence_enabled, persistence_fsync ("always", "everysec", "no"),
 * persistence_data_dir, persistence_write_error ("" while the log is written
 * fine; while set, writes return false with a warning), aof_rewrite_in_progress,
 * aof_last_rewrite_ok, aof_last_rewrite_error, aof_rewrites (snapshots since
 * start), aof_last_save_unix, aof_current_size and aof_base_size (the log's
 * bytes now and after the last snapshot), aof_buffered_bytes (not written
 * yet), aof_records, aof_write_calls, aof_fsyncs, aof_commit_batches,
 * aof_commit_records and aof_commit_max_batch (fsync=always's group commit:
 * fsyncs that answered waiting writers, the records they covered, the most
 * one covered), aof_loaded_records, aof_loaded_keys, aof_truncated_bytes (a
 * torn tail cut at start) and aof_load_ms.
 */
function ephpm_kv_info(): array {}

/**
 * The fenced write: stores $value under $key ($ttl in seconds, 0 = none, as
 * ephpm_kv_set()) only when $fence is at least the highest fence recorded for
 * $key, and records it. True when written, false when a higher fence is
 * recorded (a holder whose lock expired meanwhile: see Ephpm\Lock::fence()).
 * $fence must be at least 1.
 */
function ephpm_kv_set_fenced(string $key, string $value, int $fence, int $ttl = 0): bool {}

/**
 * Compare-and-expire: gives $key a TTL of $ttl_ms milliseconds only while it
 * holds exactly $token, as one atomic step; 0 deletes it then (as
 * ephpm_kv_pexpire()). True when applied.
 */
function ephpm_kv_expire_if_eq(string $key, string $token, int $ttl_ms): bool {}

}

namespace Ephpm {

/**
 * A lock with a fencing token, held by this request (docs/LOCKS.md).
 *
 * A Lock is only made by acquire(), block() or restore(). TTLs and waits are
 * seconds as floats, rounded up to whole milliseconds. A Lock still held when
 * it is destroyed, or when the request ends (exit(), a fatal error included),
 * is released by its token.
 *
 * @strict-properties
 * @not-serializable
 */
final class Lock
{
    private function __construct() {}

    /** Takes the lock now, or returns null when another holder has it. */
    public static function acquire(string $name, float $ttl = 30.0): ?Lock {}

    /**
     * Takes the lock, waiting up to $wait seconds for its holder to release
     * it (woken at once by the release); null when the wait ran out.
     */
    public static function block(string $name, float $ttl = 30.0, float $wait = 10.0): ?Lock {}

    /**
     * A Lock for a grant known by its token (Lock::token() of the request
     * that took it). fence() is 0 when that token does not hold the lock.
     */
    public static function restore(string $name, string $token): Lock {}

    /** Releases the lock by its token; false when it is no longer this lock's. */
    public function release(): bool {}

    /** Gives the lock a new TTL of $ttl seconds; false when it is no longer this lock's. */
    public function refresh(float $ttl): bool {}

    /** Whether the store holds this lock's token under its name now. */
    public function isAcquired(): bool {}

    /** Seconds left (INF without expiry), or null when the lock is no longer this lock's. */
    public function remaining(): ?float {}

    /** The grant's token: 32 lowercase hex characters from the CSPRNG. */
    public function token(): string {}

    /**
     * The grant's fencing token, greater than every earlier grant's: pass it
     * to ephpm_kv_set_fenced() so that writes from an expired holder lose.
     */
    public function fence(): int {}

    public function name(): string {}
}

}
