<?php

declare(strict_types=1);

namespace Ephpm\Laravel;

use Ephpm\ExtensionMissingException;
use Illuminate\Cache\Lock;
use Illuminate\Contracts\Cache\LockTimeoutException;

/**
 * Laravel's atomic lock on ephpm's store (Cache::lock() of the `ephpm`
 * driver).
 *
 * The lock's value is its owner: a 128-bit token from the CSPRNG unless a
 * caller passes one (restoreLock()). release() is the store's
 * compare-and-delete, so a holder whose lock expired and was taken by
 * another cannot remove the new holder's lock: a release that reads the
 * owner and then deletes can, between the two calls. block() waits on the
 * key with ephpm_kv_wait() and is woken by the release (or the expiry)
 * instead of polling; betweenBlockedAttemptsSleepFor() only bounds a single
 * wait.
 */
class EphpmLock extends Lock
{
    /** How long the first look at a key not seen yet may wait, in ms. */
    private const FIRST_LOOK_MS = 10;

    /**
     * @param string $name the key (the store's prefix included)
     * @param int $seconds TTL; 0 or less = no expiry, as Laravel's locks
     * @param string|null $owner null = 32 hex characters from random_bytes()
     */
    public function __construct($name, $seconds, $owner = null)
    {
        ExtensionMissingException::assertLoaded(self::class);
        if (!is_numeric($seconds)) {
            throw new \InvalidArgumentException('The lock TTL must be a number of seconds, got ' . get_debug_type($seconds));
        }
        parent::__construct((string) $name, $seconds, $owner ?? bin2hex(random_bytes(16)));
    }

    /** Takes the lock if no one holds it (an expired one counts as free). */
    public function acquire(): bool
    {
        return \ephpm_kv_setnx($this->name, (string) $this->owner, $this->ttlSeconds());
    }

    /** Releases the lock only while it is still this owner's. */
    public function release(): bool
    {
        return \ephpm_kv_del_if_eq($this->name, (string) $this->owner);
    }

    /** Removes the lock whoever holds it. */
    public function forceRelease(): void
    {
        \ephpm_kv_del($this->name);
    }

    /** The owner stored under the lock's name, null when no one holds it. */
    protected function getCurrentOwner(): ?string
    {
        return \ephpm_kv_get($this->name);
    }

    /**
     * Acquires the lock, waiting up to $seconds for its holder to let go:
     * each failed attempt waits until the key changes (a release, an expiry,
     * another grant) and tries again. Throws LockTimeoutException when the
     * time is up; with a callback, runs it and releases the lock, as
     * Laravel's Lock::block().
     *
     * @param int|float $seconds
     * @param callable|null $callback
     * @return mixed the callback's result, or true
     *
     * @throws LockTimeoutException
     */
    public function block($seconds, $callback = null)
    {
        $deadline = hrtime(true) + (int) max(0, $seconds * 1e9);
        $version = 0; // 0 = not seen yet: the store answers at once while the key exists
        while (!$this->acquire()) {
            $leftMs = (int) ceil(($deadline - hrtime(true)) / 1e6);
            if ($leftMs <= 0) {
                throw new LockTimeoutException();
            }
            // Not seen yet, the key may be gone already (released between
            // the attempt and the wait), and a wait for it to appear would
            // sleep through the chance: look briefly and try again.
            $bound = $version === 0 ? self::FIRST_LOOK_MS : max(1, (int) $this->sleepMilliseconds);
            $seen = \ephpm_kv_wait($this->name, $version, min($leftMs, $bound));
            if ($seen !== false) {
                $version = $seen['version'];
            }
        }

        if (\is_callable($callback)) {
            try {
                return $callback();
            } finally {
                $this->release();
            }
        }
        return true;
    }

    private function ttlSeconds(): int
    {
        $seconds = +$this->seconds;
        if ($seconds <= 0) {
            return 0;
        }
        return \is_int($seconds) ? $seconds : (int) ceil($seconds);
    }
}
