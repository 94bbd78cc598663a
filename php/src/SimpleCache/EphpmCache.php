<?php

declare(strict_types=1);

namespace Ephpm\SimpleCache;

use Ephpm\ExtensionMissingException;
use Psr\SimpleCache\CacheInterface;

/**
 * PSR-16 over ephpm's store (psr/simple-cache 1.0, 2.0 and 3.0: the
 * parameters are untyped and checked here, the return types are 3.0's).
 *
 * Values are stored serialize()d, so every serializable value round-trips
 * (null and false included: a miss is a missing key, never a stored value).
 * Keys are the PSR-16 ones: strings of at least one character without
 * {}()/\@: ; the store key is the prefix followed by the key, or, when that
 * would be longer than the store's 65536-byte limit, the prefix followed by
 * "sha256:" and the key's hash (a valid key cannot contain ':', so the two
 * never meet).
 *
 * A value the store refuses (over ephpm.max_value_size, over the store's
 * memory limit, a log it cannot write) or that serialize() refuses makes
 * set() return false, and the key's previous value is removed so that no
 * stale value stays readable. The store's warnings are not silenced: they
 * reach the application's error log as any PHP warning does.
 *
 * clear() removes the keys under the prefix; without a prefix it empties
 * the whole store (ephpm_kv_flush_all()), which then is the cache.
 */
final class EphpmCache implements CacheInterface
{
    /** The store's longest key, in bytes (ext/ephpm.stub.php). */
    public const MAX_STORE_KEY_LENGTH = 65536;

    /** The longest prefix, so that a hashed key always fits the store. */
    public const MAX_PREFIX_LENGTH = 1024;

    private const RESERVED = '{}()/\\@:';

    private string $prefix;

    /** Seconds; 0 for no expiry. */
    private int $defaultTtl;

    /**
     * @param string $prefix     prepended to every key (the cache's namespace); '' for none
     * @param int    $defaultTtl seconds an item set with a null TTL lives; 0 for no expiry
     *
     * @throws ExtensionMissingException when the extension is not loaded
     * @throws InvalidArgumentException  on a prefix over MAX_PREFIX_LENGTH bytes or a negative default TTL
     */
    public function __construct(string $prefix = '', int $defaultTtl = 0)
    {
        ExtensionMissingException::assertLoaded(self::class);
        if (\strlen($prefix) > self::MAX_PREFIX_LENGTH) {
            throw new InvalidArgumentException(\sprintf(
                'The prefix must not be longer than %d bytes, got %d',
                self::MAX_PREFIX_LENGTH,
                \strlen($prefix)
            ));
        }
        if ($defaultTtl < 0) {
            throw new InvalidArgumentException(\sprintf('The default TTL must be 0 (none) or positive, got %d', $defaultTtl));
        }
        $this->prefix = $prefix;
        $this->defaultTtl = $defaultTtl;
    }

    public function get($key, $default = null): mixed
    {
        // The hot path: the store call without read()'s closure.
        try {
            $raw = ephpm_kv_get($this->storeKey($key));
        } catch (\Error $e) {
            throw new CacheException('ephpm get failed: ' . $e->getMessage(), 0, $e);
        }
        if ($raw === null) {
            return $default;
        }
        return $this->decode($raw, $default);
    }

    public function set($key, $value, $ttl = null): bool
    {
        $storeKey = $this->storeKey($key);
        $seconds = $this->ttlSeconds($ttl);
        if ($seconds !== null && $seconds <= 0) {
            return $this->remove($storeKey);
        }
        return $this->write($storeKey, $value, $seconds ?? 0);
    }

    public function delete($key): bool
    {
        return $this->remove($this->storeKey($key));
    }

    public function clear(): bool
    {
        if ($this->prefix === '') {
            return $this->read(static fn (): bool => ephpm_kv_flush_all(), 'clear');
        }
        $pattern = addcslashes($this->prefix, '\\*?[]') . '*';
        $keys = $this->read(static fn (): array => ephpm_kv_keys($pattern), 'clear');
        $ok = true;
        foreach ($keys as $storeKey) {
            $ok = $this->remove((string) $storeKey) && $ok;
        }
        return $ok;
    }

    public function getMultiple($keys, $default = null): iterable
    {
        $names = [];
        $storeKeys = [];
        foreach ($this->iterate($keys, 'keys') as $key) {
            $storeKeys[] = $this->storeKey($key);
            $names[] = $key;
        }
        if ($names === []) {
            return [];
        }
        $raws = $this->read(static fn (): array => ephpm_kv_mget($storeKeys), 'getMultiple');
        $result = [];
        foreach ($names as $i => $key) {
            $raw = $raws[$i] ?? null;
            $result[$key] = $raw === null ? $default : $this->decode($raw, $default);
        }
        return $result;
    }

    public function setMultiple($values, $ttl = null): bool
    {
        $seconds = $this->ttlSeconds($ttl);
        $items = [];
        foreach ($this->iterate($values, 'values') as $key => $value) {
            // PHP turns an array key such as '0' into int 0: that one is the
            // string key it was written as.
            if (\is_int($key)) {
                $key = (string) $key;
            }
            $items[] = [$this->storeKey($key), $value];
        }
        $ok = true;
        foreach ($items as [$storeKey, $value]) {
            if ($seconds !== null && $seconds <= 0) {
                $ok = $this->remove($storeKey) && $ok;
            } else {
                $ok = $this->write($storeKey, $value, $seconds ?? 0) && $ok;
            }
        }
        return $ok;
    }

    public function deleteMultiple($keys): bool
    {
        $storeKeys = [];
        foreach ($this->iterate($keys, 'keys') as $key) {
            $storeKeys[] = $this->storeKey($key);
        }
        $ok = true;
        foreach ($storeKeys as $storeKey) {
            $ok = $this->remove($storeKey) && $ok;
        }
        return $ok;
    }

    public function has($key): bool
    {
        $storeKey = $this->storeKey($key);
        return $this->read(static fn (): bool => ephpm_kv_exists($storeKey), 'has');
    }

    /**
     * The store key of a PSR-16 key, refusing keys PSR-16 does not allow.
     *
     * @param mixed $key
     */
    private function storeKey($key): string
    {
        if (!\is_string($key)) {
            throw new InvalidArgumentException(\sprintf('A cache key must be a string, got %s', get_debug_type($key)));
        }
        if ($key === '') {
            throw new InvalidArgumentException('A cache key must not be empty');
        }
        if (strpbrk($key, self::RESERVED) !== false) {
            throw new InvalidArgumentException(\sprintf(
                'The cache key "%s" contains one of the reserved characters %s',
                $key,
                self::RESERVED
            ));
        }
        $storeKey = $this->prefix . $key;
        if (\strlen($storeKey) > self::MAX_STORE_KEY_LENGTH) {
            return $this->prefix . 'sha256:' . hash('sha256', $key);
        }
        return $storeKey;
    }

    /**
     * Seconds to live: null for the default (null when that is "no expiry"),
     * <= 0 for "delete the item".
     *
     * @param mixed $ttl
     */
    private function ttlSeconds($ttl): ?int
    {
        if ($ttl === null) {
            return $this->defaultTtl === 0 ? null : $this->defaultTtl;
        }
        if (\is_int($ttl)) {
            return $ttl;
        }
        if ($ttl instanceof \DateInterval) {
            $now = new \DateTimeImmutable('@' . time());
            return $now->add($ttl)->getTimestamp() - $now->getTimestamp();
        }
        throw new InvalidArgumentException(\sprintf(
            'A TTL must be null, an int or a DateInterval, got %s',
            get_debug_type($ttl)
        ));
    }

    /**
     * @param mixed $iterable
     */
    private function iterate($iterable, string $what): iterable
    {
        if (!\is_array($iterable) && !$iterable instanceof \Traversable) {
            throw new InvalidArgumentException(\sprintf(
                'The %s must be an array or a Traversable, got %s',
                $what,
                get_debug_type($iterable)
            ));
        }
        return $iterable;
    }

    /**
     * Stores one value; on any failure removes the key's previous value
     * (never a stale value behind a false) and returns false.
     *
     * @param mixed $value
     */
    private function write(string $storeKey, $value, int $seconds): bool
    {
        try {
            $encoded = serialize($value);
        } catch (\Exception $e) {
            // serialize() refuses closures, anonymous classes and objects
            // that forbid it: such a value cannot be cached.
            $this->remove($storeKey);
            return false;
        }
        try {
            $stored = ephpm_kv_set($storeKey, $encoded, $seconds);
        } catch (\ValueError $e) {
            // A value over ephpm.max_value_size: PSR-16 reports a value that
            // could not be stored by false.
            $stored = false;
        } catch (\Error $e) {
            // The store's own refusals (WRONGTYPE ...) are plain Errors, also
            // a false; a TypeError or the like is a bug here, not a refusal.
            if ($e::class !== \Error::class) {
                throw $e;
            }
            $stored = false;
        }
        if (!$stored) {
            $this->remove($storeKey);
        }
        return $stored;
    }

    private function remove(string $storeKey): bool
    {
        return $this->read(static fn (): bool => ephpm_kv_del($storeKey) !== false, 'delete');
    }

    /**
     * Runs a store call, turning an Error of the extension into a
     * PSR-16 CacheException.
     *
     * @template T
     *
     * @param \Closure(): T $op
     *
     * @return T
     */
    private function read(\Closure $op, string $what): mixed
    {
        try {
            return $op();
        } catch (\Error $e) {
            throw new CacheException(\sprintf('ephpm %s failed: %s', $what, $e->getMessage()), 0, $e);
        }
    }

    /**
     * @param mixed $default returned for a value unserialize() cannot read
     */
    private function decode(string $raw, $default): mixed
    {
        if ($raw === 'b:0;') {
            return false;
        }
        $value = unserialize($raw);
        // unserialize() has already raised its notice for a value that is not
        // its format (one written by another client): that is a miss.
        return $value === false ? $default : $value;
    }
}
