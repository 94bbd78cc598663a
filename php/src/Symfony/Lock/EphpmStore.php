<?php

declare(strict_types=1);

namespace Ephpm\Symfony\Lock;

use Ephpm\ExtensionMissingException;
use Ephpm\Symfony\StoreCall;
use Symfony\Component\Lock\BlockingStoreInterface;
use Symfony\Component\Lock\Exception\InvalidArgumentException;
use Symfony\Component\Lock\Exception\InvalidTtlException;
use Symfony\Component\Lock\Exception\LockAcquiringException;
use Symfony\Component\Lock\Exception\LockConflictedException;
use Symfony\Component\Lock\Exception\LockExpiredException;
use Symfony\Component\Lock\Exception\LockReleasingException;
use Symfony\Component\Lock\Exception\LockStorageException;
use Symfony\Component\Lock\Key;

/**
 * Symfony Lock store over ephpm's store: one key per resource whose value is
 * the holder's token (128 bits from random_bytes, kept in the Key's state),
 * so that only the holder can release (compare-and-delete) or refresh
 * (compare-and-expire) it, and a holder whose lease ran out cannot touch the
 * next holder's lock. waitAndSave() sleeps in the store's wait op, which
 * wakes on the release (or expiry) of the holder's key, instead of polling.
 *
 * The lock lives in the store, not in the request: unlike Ephpm\Lock it is
 * not released when the request ends, so a Key may be serialized and its
 * lock released by a later request, as Symfony allows.
 *
 * Not a SharedLockStoreInterface: read locks need a set of holders, each
 * with its own expiry, changed as one step (Symfony's RedisStore runs a Lua
 * script over a sorted set). The store's compare-and-delete and
 * compare-and-expire work on one string value, so readers could not be
 * added, expired or upgraded without races; Symfony's Lock falls back to a
 * write lock for acquireRead() on such a store, which is correct.
 */
final class EphpmStore implements BlockingStoreInterface
{
    /**
     * The longest TTL the store takes (EPHPM_KV_MAX_TTL_MS, INT64_MAX / 2),
     * rounded down to whole seconds, as setnx takes seconds.
     */
    private const MAX_TTL_MS = 4_611_686_018_427_387_000;

    /** The longest key the store takes. */
    private const MAX_KEY_BYTES = 65536;

    /**
     * The longest single wait in waitAndSave(). A release or an expiry wakes
     * the wait at once; the bound only lets PHP act on max_execution_time
     * and signals between waits, which it cannot do inside the store's wait.
     */
    private const WAIT_STEP_MS = 1000;

    private readonly string $prefix;
    private readonly float $initialTtl;
    private readonly int $initialTtlMs;

    /**
     * @param float  $initialTtl seconds a saved lock lives unless refreshed
     * @param string $prefix     put before the resource name to make the store's key
     */
    public function __construct(float $initialTtl = 300.0, string $prefix = 'sf-lock:')
    {
        ExtensionMissingException::assertLoaded(self::class);
        $initialTtlMs = self::ttlToMs($initialTtl, __METHOD__);
        if (\strlen($prefix) >= self::MAX_KEY_BYTES) {
            throw new InvalidArgumentException(\sprintf(
                'The key prefix must be shorter than %d bytes, %d given.',
                self::MAX_KEY_BYTES,
                \strlen($prefix)
            ));
        }
        $this->initialTtl = $initialTtl;
        $this->initialTtlMs = $initialTtlMs;
        $this->prefix = $prefix;
    }

    public function save(Key $key): void
    {
        $key->reduceLifetime($this->initialTtl);
        if (!$this->acquireOrRefresh($key)) {
            throw new LockConflictedException(\sprintf('The "%s" lock is held by another.', $key));
        }
        $this->checkNotExpired($key);
    }

    public function waitAndSave(Key $key): void
    {
        $name = $this->name($key);
        while (true) {
            $start = microtime(true);
            if ($this->acquireOrRefresh($key)) {
                // The store's TTL runs from the write, so count it from before it.
                $key->reduceLifetime($this->initialTtl - (microtime(true) - $start));
                $this->checkNotExpired($key);
                return;
            }
            // The holder's version (false: gone since, so try again at once),
            // then sleep until that version changes: a release, an expiry, or
            // a new holder, which the next attempt tells apart.
            $seen = StoreCall::run(
                LockAcquiringException::class,
                \sprintf('Waiting for the "%s" lock', $key),
                static fn () => ephpm_kv_wait($name, 0, 0)
            );
            if ($seen === false) {
                continue;
            }
            StoreCall::run(
                LockAcquiringException::class,
                \sprintf('Waiting for the "%s" lock', $key),
                static fn () => ephpm_kv_wait($name, $seen['version'], self::WAIT_STEP_MS)
            );
        }
    }

    public function putOffExpiration(Key $key, float $ttl): void
    {
        $ms = self::ttlToMs($ttl, __METHOD__);
        $name = $this->name($key);
        $token = $this->token($key);
        $key->reduceLifetime($ttl);
        $applied = StoreCall::run(
            LockStorageException::class,
            \sprintf('Refreshing the "%s" lock', $key),
            static fn () => ephpm_kv_expire_if_eq($name, $token, $ms)
        );
        if (!$applied) {
            throw new LockConflictedException(\sprintf('The "%s" lock is not held by this key.', $key));
        }
        $this->checkNotExpired($key);
    }

    public function delete(Key $key): void
    {
        $name = $this->name($key);
        $token = $this->token($key);
        // false: not ours (released, expired, or another holder's now): nothing to do
        StoreCall::run(
            LockReleasingException::class,
            \sprintf('Releasing the "%s" lock', $key),
            static fn () => ephpm_kv_del_if_eq($name, $token)
        );
    }

    public function exists(Key $key): bool
    {
        $name = $this->name($key);
        $token = $this->token($key);
        return StoreCall::run(
            LockStorageException::class,
            \sprintf('Reading the "%s" lock', $key),
            static fn () => ephpm_kv_get($name)
        ) === $token;
    }

    /**
     * Takes the lock for the key's token with the initial TTL, or gives it
     * that TTL again when the token already holds it; false when another
     * token does. The lock is never left without a TTL: setnx takes whole
     * seconds, so it is written with the TTL rounded up, then set to the
     * exact ms by token.
     */
    private function acquireOrRefresh(Key $key): bool
    {
        $name = $this->name($key);
        $token = $this->token($key);
        $ms = $this->initialTtlMs;
        $what = \sprintf('Saving the "%s" lock', $key);
        $created = StoreCall::run(
            LockAcquiringException::class,
            $what,
            static fn () => ephpm_kv_setnx($name, $token, intdiv($ms + 999, 1000))
        );
        if ($created && $ms % 1000 === 0) {
            return true;
        }
        // Taken just now (exact TTL) or held before (a refresh): either way
        // only while the key still holds our token. After a setnx this fails
        // only if something outside this store removed or replaced the key.
        return StoreCall::run(
            LockAcquiringException::class,
            $what,
            static fn () => ephpm_kv_expire_if_eq($name, $token, $ms)
        );
    }

    /**
     * A key whose lifetime ran out while it was being saved or refreshed is
     * given back by token, and LockExpiredException says so; a failure to
     * give it back is that exception's previous, not lost.
     */
    private function checkNotExpired(Key $key): void
    {
        if (!$key->isExpired()) {
            return;
        }
        $releaseFailure = null;
        try {
            $this->delete($key);
        } catch (LockReleasingException $e) {
            $releaseFailure = $e;
        }
        throw new LockExpiredException(\sprintf('Failed to store the "%s" lock: its TTL ran out.', $key), 0, $releaseFailure);
    }

    private function name(Key $key): string
    {
        $name = $this->prefix . $key;
        if ($name === '' || \strlen($name) > self::MAX_KEY_BYTES) {
            throw new InvalidArgumentException(\sprintf(
                'The lock\'s key (prefix and resource) must be 1 to %d bytes, %d given.',
                self::MAX_KEY_BYTES,
                \strlen($name)
            ));
        }
        return $name;
    }

    private function token(Key $key): string
    {
        if (!$key->hasState(self::class)) {
            $key->setState(self::class, bin2hex(random_bytes(16)));
        }
        return $key->getState(self::class);
    }

    /** Seconds to whole ms, rounded up: a TTL never ends sooner than asked, nor becomes 0. */
    private static function ttlToMs(float $ttl, string $method): int
    {
        if (!($ttl > 0) || $ttl * 1000 > self::MAX_TTL_MS) {
            throw new InvalidTtlException(\sprintf(
                '"%s()" expects a TTL above 0 and at most %d seconds, %s given.',
                $method,
                intdiv(self::MAX_TTL_MS, 1000),
                var_export($ttl, true)
            ));
        }
        return (int) ceil($ttl * 1000);
    }
}
